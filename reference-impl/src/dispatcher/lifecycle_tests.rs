//! Lifecycle, policy and lock-table tests on a paused tokio clock: every time below is exact
//! (seed `001`: startup budget P5-D8, labels D-27, retry table D-95, policy D-23/D-63, one lock
//! table D-96, queue bound D-91).

use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::*;

type TestResult = Result<(), Box<dyn Error>>;

const T0: u64 = 1_800_000_000_000;

struct Fx {
    dir: tempfile::TempDir,
    dispatcher: Dispatcher,
}

/// A dispatcher on a [`TokioClock`] reading `T0` now, with a simulated runtime.
fn fx(
    delay_ms: u64,
    fail_attempts: u32,
    adjust: impl FnOnce(&mut DispatcherConfig),
) -> Result<Fx, Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
    let mut config = DispatcherConfig::new(dir.path());
    config.clock = Arc::new(TokioClock::new(T0));
    config.runtime = Some(Arc::new(SimulatedRuntime::new(
        delay_ms,
        fail_attempts,
        DEFAULT_FAIL_REASON,
    )));
    adjust(&mut config);
    let dispatcher = Dispatcher::new(config);
    Ok(Fx { dir, dispatcher })
}

impl Fx {
    async fn call(&self, name: &str, arguments: Value) -> Outcome {
        self.dispatcher.call(ToolCall::new(name, arguments)).await
    }
    async fn status(&self) -> Result<Value, Box<dyn Error>> {
        ok(&self.call("status", json!({})).await)
    }
}

fn ok(outcome: &Outcome) -> Result<Value, Box<dyn Error>> {
    match &outcome.kind {
        OutcomeKind::Ok { value } => Ok(value.clone()),
        other => Err(format!("expected ok, got {other:?}").into()),
    }
}

fn refused(outcome: &Outcome) -> Option<RefusalCode> {
    match &outcome.kind {
        OutcomeKind::Refused { code, .. } => Some(*code),
        _ => None,
    }
}

fn snapshot(label: &str, state: &str, reason: Option<&str>, since_ms: u64) -> Value {
    json!({"label": label, "state": state, "reason": reason, "since_ms": since_ms})
}

/// Lets spawned tasks run without moving the paused clock.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_30_s_start_with_a_200_ms_budget_settles_disconnected_and_the_session_continues(
) -> TestResult {
    let f = fx(30_000, 0, |c| c.startup_budget_ms = 200)?;
    // The surface answers at once: the start runs detached.
    assert_eq!(
        f.status().await?,
        snapshot("disconnected", "connecting", None, T0)
    );
    tokio::time::advance(Duration::from_millis(199)).await;
    settle().await;
    assert_eq!(f.status().await?["state"], "connecting");
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(
        f.status().await?,
        snapshot(
            "disconnected",
            "disconnected",
            Some(STARTUP_BUDGET_EXCEEDED),
            T0 + 200
        )
    );
    // Read-only tools work.
    let read = f.call("read_file", json!({"path": "hello.txt"})).await;
    assert_eq!(ok(&read)?, json!({"content": "hello\n"}));
    assert!(read.warnings.is_empty());
    // The abandoned attempt never comes back: at 30 s and after, the state is unchanged.
    tokio::time::advance(Duration::from_millis(40_000)).await;
    settle().await;
    assert_eq!(f.status().await?["since_ms"], T0 + 200);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_start_within_budget_settles_active_and_a_failed_one_error() -> TestResult {
    let f = fx(50, 0, |c| c.startup_budget_ms = 200)?;
    tokio::time::advance(Duration::from_millis(50)).await;
    settle().await;
    assert_eq!(
        f.status().await?,
        snapshot("active", "active", None, T0 + 50)
    );

    let f = fx(50, 1, |c| c.startup_budget_ms = 200)?;
    tokio::time::advance(Duration::from_millis(50)).await;
    settle().await;
    assert_eq!(
        f.status().await?,
        snapshot("disconnected", "error", Some(DEFAULT_FAIL_REASON), T0 + 50)
    );
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_default_budget_is_ten_seconds() -> TestResult {
    let f = fx(30_000, 0, |_| {})?;
    tokio::time::advance(Duration::from_millis(9_999)).await;
    settle().await;
    assert_eq!(f.status().await?["state"], "connecting");
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(
        f.status().await?,
        snapshot(
            "disconnected",
            "disconnected",
            Some(STARTUP_BUDGET_EXCEEDED),
            T0 + 10_000
        )
    );
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn every_state_maps_to_one_of_two_labels() -> TestResult {
    let f = fx(0, 0, |_| {})?;
    settle().await;
    for (state, label) in [
        (LifecycleState::Connecting, "disconnected"),
        (LifecycleState::Active, "active"),
        (LifecycleState::Disconnected, "disconnected"),
        (LifecycleState::Error, "disconnected"),
        (LifecycleState::Stopping, "disconnected"),
    ] {
        tokio::time::advance(Duration::from_millis(3)).await;
        let at = f.dispatcher.set_lifecycle(state, Some("R".into())).since_ms;
        let status = f.status().await?;
        assert_eq!(status, snapshot(label, state.as_str(), Some("R"), at));
        assert_eq!(state.label(), label);
    }
    Ok(())
}

// ---- retry table, row by row ----

#[tokio::test(start_paused = true)]
async fn retry_row_error_or_disconnected_to_connecting_to_active() -> TestResult {
    for from in [LifecycleState::Error, LifecycleState::Disconnected] {
        let f = fx(100, 0, |c| c.startup_budget_ms = 500)?;
        f.dispatcher.set_lifecycle(from, Some("X".into()));
        let retry = tokio::spawn({
            let d = Arc::new(f);
            let d2 = d.clone();
            async move { (d2.call("retry", json!({})).await, d) }
        });
        settle().await;
        tokio::time::advance(Duration::from_millis(100)).await;
        let (outcome, f) = retry.await?;
        assert_eq!(ok(&outcome)?, snapshot("active", "active", None, T0 + 100));
        assert_eq!(f.dispatcher.lifecycle().state, LifecycleState::Active);
    }
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn retry_row_connecting_shows_while_the_attempt_runs() -> TestResult {
    let f = Arc::new(fx(100, 0, |c| c.startup_budget_ms = 500)?);
    tokio::time::advance(Duration::from_millis(100)).await;
    settle().await;
    f.dispatcher
        .set_lifecycle(LifecycleState::Disconnected, Some("X".into()));
    let g = f.clone();
    let retry = tokio::spawn(async move { g.call("retry", json!({})).await });
    settle().await;
    assert_eq!(
        f.status().await?,
        snapshot("disconnected", "connecting", None, T0 + 100)
    );
    tokio::time::advance(Duration::from_millis(100)).await;
    assert_eq!(ok(&retry.await?)?["state"], "active");
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn retry_row_error_to_connecting_to_error() -> TestResult {
    // Two failing attempts: the initial start, then the retry.
    let f = fx(20, 2, |c| c.startup_budget_ms = 500)?;
    tokio::time::advance(Duration::from_millis(20)).await;
    settle().await;
    assert_eq!(f.status().await?["state"], "error");
    let g = Arc::new(f);
    let h = g.clone();
    let retry = tokio::spawn(async move { h.call("retry", json!({})).await });
    settle().await;
    tokio::time::advance(Duration::from_millis(20)).await;
    assert_eq!(
        ok(&retry.await?)?,
        snapshot("disconnected", "error", Some(DEFAULT_FAIL_REASON), T0 + 40)
    );
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn retry_row_overrun_settles_error_with_the_budget_code() -> TestResult {
    let f = Arc::new(fx(30_000, 0, |c| c.startup_budget_ms = 200)?);
    tokio::time::advance(Duration::from_millis(200)).await;
    settle().await;
    let g = f.clone();
    let retry = tokio::spawn(async move { g.call("retry", json!({})).await });
    settle().await;
    tokio::time::advance(Duration::from_millis(200)).await;
    assert_eq!(
        ok(&retry.await?)?,
        snapshot(
            "disconnected",
            "error",
            Some(STARTUP_BUDGET_EXCEEDED),
            T0 + 400
        )
    );
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn retry_row_active_returns_the_snapshot_unchanged() -> TestResult {
    let f = fx(10, 0, |_| {})?;
    tokio::time::advance(Duration::from_millis(10)).await;
    settle().await;
    let before = f.status().await?;
    tokio::time::advance(Duration::from_millis(500)).await;
    assert_eq!(ok(&f.call("retry", json!({})).await)?, before);
    assert_eq!(before["since_ms"], T0 + 10);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_simulated_backend_that_stops_on_its_own_refuses_retry() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut config = DispatcherConfig::new(dir.path());
    config.clock = Arc::new(TokioClock::new(T0));
    config.runtime = Some(Arc::new(
        SimulatedRuntime::new(10, 0, DEFAULT_FAIL_REASON).stopping_after(40),
    ));
    let d = Dispatcher::new(config);
    tokio::time::advance(Duration::from_millis(10)).await;
    settle().await;
    assert_eq!(d.lifecycle().state, LifecycleState::Active);
    tokio::time::advance(Duration::from_millis(40)).await;
    settle().await;
    assert_eq!(
        d.lifecycle(),
        LifecycleSnapshot {
            state: LifecycleState::Stopping,
            reason: Some(BACKEND_STOPPING.into()),
            since_ms: T0 + 50
        }
    );
    let retry = d.call(ToolCall::new("retry", json!({}))).await;
    assert_eq!(refused(&retry), Some(RefusalCode::RetryRefused));
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn retry_row_stopping_is_refused() -> TestResult {
    let f = fx(0, 0, |_| {})?;
    settle().await;
    let stopping = f.dispatcher.set_lifecycle(LifecycleState::Stopping, None);
    let outcome = f.call("retry", json!({})).await;
    assert_eq!(refused(&outcome), Some(RefusalCode::RetryRefused));
    assert_eq!(f.dispatcher.lifecycle(), stopping);
    Ok(())
}

// ---- policy while the start is pending ----

#[tokio::test(start_paused = true)]
async fn required_refuses_mutations_until_active_and_leaves_reads_alone() -> TestResult {
    let f = fx(1_000, 0, |c| {
        c.policy = PolicyMode::Required;
        c.startup_budget_ms = 5_000;
    })?;
    let write = f
        .call("write_file", json!({"path": "x.txt", "content": "x"}))
        .await;
    assert_eq!(refused(&write), Some(RefusalCode::BackendNotActive));
    assert!(!f.dir.path().join("x.txt").exists());
    let exec = f.call("exec", json!({"argv": ["true"]})).await;
    assert_eq!(refused(&exec), Some(RefusalCode::BackendNotActive));
    for (tool, args) in [
        ("read_file", json!({"path": "hello.txt"})),
        ("list_dir", json!({})),
        ("status", json!({})),
    ] {
        let outcome = f.call(tool, args).await;
        ok(&outcome)?;
        assert!(
            outcome.warnings.is_empty(),
            "{tool}: {:?}",
            outcome.warnings
        );
    }
    tokio::time::advance(Duration::from_millis(1_000)).await;
    settle().await;
    let write = f
        .call("write_file", json!({"path": "x.txt", "content": "x"}))
        .await;
    assert_eq!(ok(&write)?, json!({"bytes_written": 1}));
    assert!(write.warnings.is_empty());
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn advisory_allows_mutations_with_a_warning_while_not_active() -> TestResult {
    let f = fx(1_000, 0, |c| c.startup_budget_ms = 5_000)?;
    let write = f
        .call("write_file", json!({"path": "x.txt", "content": "x"}))
        .await;
    assert_eq!(ok(&write)?, json!({"bytes_written": 1}));
    assert_eq!(
        write.warnings,
        ["BACKEND_NOT_ACTIVE: backend state is connecting; advisory policy allowed `write_file`"]
    );
    let read = f.call("read_file", json!({"path": "x.txt"})).await;
    assert!(read.warnings.is_empty());
    Ok(())
}

// ---- one lock table, queue and tool bounds ----

#[tokio::test(start_paused = true)]
async fn a_call_waiting_past_the_queue_bound_is_refused_queue_timeout() -> TestResult {
    let f = fx(0, 0, |c| c.tool_queue_ms = 300)?;
    settle().await;
    let held = f
        .dispatcher
        .locks()
        .write(&path_key("hello.txt"), Duration::from_millis(1))
        .await?;
    let start = tokio::time::Instant::now();
    let read = f.call("read_file", json!({"path": "./hello.txt"})).await;
    assert_eq!(refused(&read), Some(RefusalCode::QueueTimeout));
    assert_eq!(start.elapsed(), Duration::from_millis(300));
    // Another path is not affected.
    ok(&f.call("list_dir", json!({})).await)?;
    drop(held);
    ok(&f.call("read_file", json!({"path": "hello.txt"})).await)?;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_stop_waits_for_mutations_and_mutations_wait_for_a_stop() -> TestResult {
    let f = Arc::new(fx(0, 0, |c| c.tool_queue_ms = 2_000)?);
    settle().await;
    // A transition out of `active` holds the lifecycle key: a mutation waits, then is refused
    // QUEUE_TIMEOUT at exactly the default bound; a read, status and retry go on.
    let held = f
        .dispatcher
        .locks()
        .write(LIFECYCLE_KEY, Duration::from_millis(1))
        .await?;
    let start = tokio::time::Instant::now();
    let write = f
        .call("write_file", json!({"path": "y.txt", "content": "y"}))
        .await;
    assert_eq!(refused(&write), Some(RefusalCode::QueueTimeout));
    assert_eq!(start.elapsed(), Duration::from_millis(2_000));
    ok(&f.call("read_file", json!({"path": "hello.txt"})).await)?;
    let start = tokio::time::Instant::now();
    assert_eq!(ok(&f.call("retry", json!({})).await)?["state"], "active");
    assert_eq!(start.elapsed(), Duration::ZERO);
    drop(held);
    // A mutation in progress holds it shared: a stop waits for it (never interleaves).
    let shared = f
        .dispatcher
        .locks()
        .read(LIFECYCLE_KEY, Duration::from_millis(1))
        .await?;
    let locks = f.dispatcher.locks().clone();
    let stop = tokio::spawn(async move { locks.write_unbounded(LIFECYCLE_KEY).await });
    tokio::time::advance(Duration::from_millis(500)).await;
    settle().await;
    assert!(!stop.is_finished());
    drop(shared);
    drop(stop.await?);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_long_mutation_delays_neither_the_budget_settle_nor_retry() -> TestResult {
    // A 30 s start under a 500 ms budget, advisory: an `exec` running since t=0 holds the
    // lifecycle key shared, yet the state settles when the budget fires.
    let f = Arc::new(fx(30_000, 0, |c| {
        c.startup_budget_ms = 500;
        c.exec_allow = vec!["sleep".into()];
    })?);
    let g = f.clone();
    let exec = tokio::spawn(async move { g.call("exec", json!({"argv": ["sleep", "4"]})).await });
    settle().await;
    tokio::time::advance(Duration::from_millis(500)).await;
    settle().await;
    let status = f.status().await?;
    assert_eq!(status["state"], "disconnected");
    assert_eq!(status["reason"], "STARTUP_BUDGET_EXCEEDED");
    assert_eq!(status["since_ms"], T0 + 500);
    // Two retries at once: exactly one starts an attempt, the other answers `connecting`
    // without waiting; a write in required mode would see the state, not the lock.
    let h = f.clone();
    let first = tokio::spawn(async move { h.call("retry", json!({})).await });
    settle().await;
    let start = tokio::time::Instant::now();
    let second = ok(&f.call("retry", json!({})).await)?;
    assert_eq!(second["state"], "connecting");
    assert_eq!(start.elapsed(), Duration::ZERO);
    tokio::time::advance(Duration::from_millis(500)).await;
    let first = ok(&first.await?)?;
    assert_eq!(first["state"], "error");
    assert_eq!(first["reason"], "STARTUP_BUDGET_EXCEEDED");
    exec.abort();
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_tool_past_its_limit_is_refused_tool_timeout() -> TestResult {
    let f = fx(0, 0, |c| c.tool_timeout_ms = 100)?;
    settle().await;
    let exec = f.call("exec", json!({"argv": ["sleep", "5"]})).await;
    assert_eq!(refused(&exec), Some(RefusalCode::ToolTimeout));
    Ok(())
}

#[test]
fn without_a_runtime_the_dispatcher_starts_active_as_before() {
    let mut config = DispatcherConfig::new(".");
    config.clock = Arc::new(FixedClock(T0));
    let d = Dispatcher::new(config);
    assert_eq!(
        d.lifecycle(),
        LifecycleSnapshot {
            state: LifecycleState::Active,
            reason: None,
            since_ms: T0
        }
    );
}

// ---- the policy file ----

#[test]
fn policy_file_sets_every_key() -> TestResult {
    let p = Policy::parse(
        "mode = \"required\"\nstartup_budget_ms = 200\ntool_queue_ms = 50\ntool_timeout_ms = 70\n\n[runtime]\nkind = \"simulated\"\nstart_delay_ms = 30000\nfail_attempts = 1\nfail_reason = \"DOWN\"\n",
        "p.toml",
    )?;
    let mut c = DispatcherConfig::new(".");
    p.apply(&mut c);
    assert_eq!(c.policy, PolicyMode::Required);
    assert_eq!(
        (c.startup_budget_ms, c.tool_queue_ms, c.tool_timeout_ms),
        (200, 50, 70)
    );
    assert_eq!(c.runtime.as_ref().map(|r| r.kind()), Some("simulated"));
    assert_eq!(
        p.runtime,
        Some(RuntimePolicy {
            kind: RuntimeKind::Simulated,
            start_delay_ms: 30_000,
            fail_attempts: 1,
            fail_reason: Some("DOWN".into()),
            stop_after_ms: None,
        })
    );
    // An empty file changes nothing.
    let mut d = DispatcherConfig::new(".");
    Policy::parse("", "p.toml")?.apply(&mut d);
    assert_eq!(
        (d.policy, d.startup_budget_ms, d.tool_queue_ms),
        (PolicyMode::Advisory, 10_000, 2_000)
    );
    assert!(d.runtime.is_none());
    Ok(())
}

#[test]
fn policy_file_errors_name_file_line_and_key() {
    for (text, want) in [
        (
            "mode = \"required\"\nbudget = 3\n",
            "p.toml:2:1: budget: unknown field `budget`",
        ),
        (
            "mode = \"sometimes\"\n",
            "p.toml:1:8: mode: unknown variant `sometimes`",
        ),
        (
            "tool_queue_ms = \"2s\"\n",
            "p.toml:1:17: tool_queue_ms: invalid type: string",
        ),
        (
            "mode = \"advisory\"\n[runtime]\nkind = \"simulated\"\ndelay = 5\n",
            "p.toml:4:1: runtime.delay: unknown field `delay`",
        ),
        (
            "[runtime]\nstart_delay_ms = -1\n",
            "p.toml:2:18: runtime.start_delay_ms: ",
        ),
        ("[bogus]\n", "p.toml:1:2: bogus: unknown field `bogus`"),
        (
            "mode = \"advisory\"\nstartup_budget_ms = 0\n",
            "p.toml:2:1: startup_budget_ms: must be at least 1",
        ),
    ] {
        let got = Policy::parse(text, "p.toml")
            .map(|_| ())
            .map_err(|e| e.to_string());
        match got {
            Err(e) => assert!(e.starts_with(want), "{text:?}: got {e:?}, want {want:?}"),
            Ok(()) => panic!("{text:?} parsed"),
        }
    }
    let missing = Policy::load(std::path::Path::new("/nonexistent/parity-policy.toml"));
    assert!(matches!(missing, Err(PolicyError { line: 0, .. })));
}
