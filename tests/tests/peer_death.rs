//! Peers die with parity (docs/architecture.md §Peers die with parity): a SIGKILLed parity, which
//! can clean nothing up itself, leaves no peer process behind, grandchildren in a session of
//! their own included. The watchdog does it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Two silent waits of 10 s each: the run lasts over 20 s by construction.
const SLOW: &str = "version: 1
id: user.slow
description: Nothing arrives for twenty seconds.
spec: basic/lifecycle
level: MUST
steps:
  - expect_silence: 10000
  - expect_silence: 10000
";

#[test]
fn a_sigkilled_parity_leaves_no_peer_behind() {
    let scen = tempfile::tempdir().unwrap();
    std::fs::write(scen.path().join("slow.yaml"), SLOW).unwrap();
    let mut parity = Command::new(parity())
        .args(["run", "--quiet", "--mcp", &fake_cmd("setsid-child")])
        .args(["--scenarios", &scen.path().to_string_lossy()])
        .args(["--filter", "user.slow*", "--era", "legacy"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("{}-", parity.id());
    std::thread::sleep(Duration::from_millis(10_500));
    assert!(
        parity.try_wait().unwrap().is_none(),
        "the run ended before 10 s: the test proves nothing"
    );
    let before = marked_processes(&prefix);
    // The peer and its `setsid sleep 600` grandchild, at least.
    assert!(
        before.len() >= 2,
        "peer processes before the kill: {}",
        before.len()
    );
    parity.kill().unwrap();
    parity.wait().unwrap();
    // A bounded wait, not a speed assertion: the watchdog sweeps, then the processes go.
    let until = Instant::now() + Duration::from_secs(60);
    let mut left = marked_processes(&prefix);
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        left = marked_processes(&prefix);
    }
    let n = left.len();
    kill_marked(&prefix);
    assert_eq!(n, 0, "peer processes left after parity was SIGKILLed");
}
