//! The backend runtime behind the lifecycle (seed `001`, P5-D7/P5-D8: the composition root
//! starts "the real runtime adapters"; tests use fakes).
//!
//! The dispatcher never waits on a start from a surface: it runs [`BackendRuntime::start`]
//! detached, bounded by the startup budget (see [`super::Dispatcher`]). Two runtimes ship:
//! [`LocalRuntime`] (nothing to start: always connects at once) and [`SimulatedRuntime`]
//! (a configurable start delay and failures, for tests and demos).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The lifecycle reason of the `stopping` state a runtime enters on its own
/// ([`BackendRuntime::stop_after`]).
pub const BACKEND_STOPPING: &str = "BACKEND_STOPPING";

/// The lifecycle reason a failed simulated start reports unless configured otherwise.
pub const DEFAULT_FAIL_REASON: &str = "BACKEND_START_FAILED";

/// A start attempt: resolves to `Ok(())` when the backend is usable, or `Err(reason)` (a short
/// machine-readable reason, reported as `reason` of the `error` state).
pub type StartFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'static>>;

/// How the dispatcher starts its backend (seed `001`, P5-D7: the runtime behind a trait).
///
/// `start` may be called again by `retry`; each call is one attempt. The dispatcher bounds
/// every attempt by the startup budget and drops (cancels) an attempt that overruns it, so an
/// implementation must be cancel-safe.
pub trait BackendRuntime: Send + Sync + fmt::Debug {
    /// A short name for logs and `Debug`: `"local"`, `"simulated"`.
    fn kind(&self) -> &'static str;
    /// After the first successful start, how long until the backend begins shutting down on
    /// its own (the lifecycle then moves `active` → `stopping` with reason
    /// [`BACKEND_STOPPING`]); `None` (the default) for never.
    fn stop_after(&self) -> Option<Duration> {
        None
    }
    /// Begins one start attempt. Must not block: the work happens in the returned future.
    /// Called inside a tokio runtime; the attempt's clock starts at the call.
    fn start(&self) -> StartFuture;
}

/// The local runtime: the workspace is on this machine, so there is nothing to connect to and
/// every attempt succeeds at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalRuntime;

impl BackendRuntime for LocalRuntime {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn start(&self) -> StartFuture {
        Box::pin(async { Ok(()) })
    }
}

/// A simulated backend: each attempt sleeps `start_delay_ms` on tokio's timer (so a paused
/// test clock controls it exactly); the first `fail_attempts` attempts then fail with
/// `fail_reason`, later ones succeed.
#[derive(Debug)]
pub struct SimulatedRuntime {
    start_delay_ms: u64,
    fail_attempts: u32,
    fail_reason: String,
    failed: AtomicU32,
    stop_after_ms: Option<u64>,
}

impl SimulatedRuntime {
    /// A runtime whose attempts take `start_delay_ms` milliseconds; the first `fail_attempts`
    /// attempts (counted when an attempt begins, so one cancelled by the budget counts too)
    /// fail with `fail_reason`; `u32::MAX` makes every attempt fail.
    pub fn new(start_delay_ms: u64, fail_attempts: u32, fail_reason: impl Into<String>) -> Self {
        SimulatedRuntime {
            start_delay_ms,
            fail_attempts,
            fail_reason: fail_reason.into(),
            failed: AtomicU32::new(0),
            stop_after_ms: None,
        }
    }

    /// The same runtime, which begins stopping `ms` milliseconds after its first successful
    /// start ([`BackendRuntime::stop_after`]).
    pub fn stopping_after(mut self, ms: u64) -> Self {
        self.stop_after_ms = Some(ms);
        self
    }

    /// The configured start delay in milliseconds.
    pub fn start_delay_ms(&self) -> u64 {
        self.start_delay_ms
    }
}

/// One attempt's plan, decided when it begins.
struct Attempt {
    delay: Duration,
    fail: Option<String>,
}

impl BackendRuntime for SimulatedRuntime {
    fn kind(&self) -> &'static str {
        "simulated"
    }

    fn stop_after(&self) -> Option<Duration> {
        self.stop_after_ms.map(Duration::from_millis)
    }

    fn start(&self) -> StartFuture {
        let failed = self.failed.load(Ordering::SeqCst);
        let fail = if failed < self.fail_attempts {
            self.failed.fetch_add(1, Ordering::SeqCst);
            Some(self.fail_reason.clone())
        } else {
            None
        };
        let attempt = Attempt {
            delay: Duration::from_millis(self.start_delay_ms),
            fail,
        };
        // The timer starts now, not when the future is first polled.
        let delay = tokio::time::sleep(attempt.delay);
        Box::pin(async move {
            delay.await;
            match attempt.fail {
                Some(reason) => Err(reason),
                None => Ok(()),
            }
        })
    }
}
