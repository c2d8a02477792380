//! Injectable wall clocks for lifecycle timestamps.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// The dispatcher reads it only to stamp lifecycle transitions (`since_ms` of the
/// `status` and `retry` results), so tests inject [`FixedClock`] or [`ManualClock`] and
/// get deterministic outcomes. Time limits (`exec` timeouts) use tokio's monotonic
/// timer instead, never this clock.
pub trait Clock: Send + Sync {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;
}

/// The real system clock. A system time before the epoch reads as 0; one past `u64`
/// milliseconds saturates.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// A clock frozen at one instant (milliseconds since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
}

/// A clock that only moves when told to; share it through an `Arc` between the test and
/// the dispatcher.
#[derive(Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock reading `start_ms` milliseconds since the epoch.
    pub fn new(start_ms: u64) -> Self {
        ManualClock {
            now: AtomicU64::new(start_ms),
        }
    }

    /// Sets the reading to `ms`.
    pub fn set(&self, ms: u64) {
        self.now.store(ms, Ordering::SeqCst);
    }

    /// Moves the reading forward by `delta_ms` (saturating at `u64::MAX`) and returns
    /// the new reading.
    pub fn advance(&self, delta_ms: u64) -> u64 {
        let mut current = self.now.load(Ordering::SeqCst);
        loop {
            let next = current.saturating_add(delta_ms);
            match self
                .now
                .compare_exchange(current, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return next,
                Err(actual) => current = actual,
            }
        }
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now_ms", &self.now_ms())
            .finish()
    }
}

/// A clock that follows tokio's timer: `base_ms` plus the time tokio has seen pass since the
/// clock was made. Under a paused test runtime (`tokio::time::pause`, `start_paused`) it moves
/// exactly with `tokio::time::advance` and auto-advance, so lifecycle timestamps line up with
/// the startup budget's timer to the millisecond.
///
/// Must be created inside a tokio runtime when time is paused (it reads
/// `tokio::time::Instant::now()`).
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    base_ms: u64,
    start: tokio::time::Instant,
}

impl TokioClock {
    /// A clock reading `base_ms` now.
    pub fn new(base_ms: u64) -> Self {
        TokioClock {
            base_ms,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.base_ms.saturating_add(elapsed)
    }
}
