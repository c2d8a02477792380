//! The peer watchdog: peers and their descendants die with parity, even a SIGKILLed parity
//! (docs/architecture.md §Peers die with parity).
//!
//! Before the first peer starts, parity starts `parity watchdog` (a hidden command) in a
//! process group of its own, with its stdin the read end of a pipe. Only parity holds the write
//! end, and it is close-on-exec, so no peer inherits it. The kernel closes that end however
//! parity ends: a normal exit, a panic, or SIGKILL. The watchdog then reads end-of-file and
//! kills every process that carries parity's peer marker (`PARITY_PEER_MARK=<parity pid>-<n>`,
//! inherited by every descendant, so grandchildren that left the process group are found). It
//! scans again until none is left, at most [`SWEEP_LIMIT`].
//!
//! A parent-death signal (`PR_SET_PDEATHSIG`) would not do: it fires when the *thread* that
//! spawned the child ends (tokio's blocking pool retires threads), and it reaches direct
//! children only.

use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the watchdog keeps sweeping after parity died (10 s): a peer that forks while it
/// is being killed gets killed on the next sweep.
pub const SWEEP_LIMIT: Duration = Duration::from_secs(10);

/// The write end of the watchdog's pipe, held for the life of the process.
static GUARD: Mutex<Option<std::process::ChildStdin>> = Mutex::new(None);

/// Whether this process is a `parity` command line that can serve `watchdog` itself
/// ([`enable`]); a test binary using the library is not, so it starts no watchdog.
static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets [`ensure`] start the watchdog: called by the command line's entry point, whose
/// executable answers `watchdog <pid>`. Library users (`parity_harness::api`) run without one:
/// their peers are reaped when each session ends, but not if the test process is killed.
pub fn enable() {
    ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Starts the watchdog once per parity process; later calls do nothing. A watchdog that cannot
/// start is logged and the run goes on (a normal exit still reaps every peer). Does nothing
/// unless [`enable`] was called.
pub fn ensure() {
    if !ENABLED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let Ok(mut g) = GUARD.lock() else { return };
    if g.is_some() {
        return;
    }
    match crate::transport::peer::spawn_watchdog() {
        Ok(stdin) => *g = Some(stdin),
        Err(e) => tracing::warn!(error = %e, "the peer watchdog did not start"),
    }
}

/// `parity watchdog PID`: waits for end-of-file on stdin, then kills every process marked by
/// parity process `PID` and returns 0.
pub fn serve(parity_pid: u32) -> i32 {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    loop {
        match stdin.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let prefix = format!("{parity_pid}-");
    let until = Instant::now() + SWEEP_LIMIT;
    loop {
        let left = crate::transport::peer::kill_marked(&prefix);
        if left == 0 || Instant::now() >= until {
            return 0;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
