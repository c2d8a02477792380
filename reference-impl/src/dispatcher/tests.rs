//! Dispatcher unit tests: one per tool behaviour and refusal.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::*;

type TestResult = Result<(), Box<dyn Error>>;

const T0: u64 = 1_700_000_000_000;

struct Fixture {
    dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    dispatcher: Dispatcher,
}

fn fixture_with(adjust: impl FnOnce(&mut DispatcherConfig)) -> Result<Fixture, Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir(dir.path().join("sub"))?;
    std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
    std::fs::write(dir.path().join("sub/b.txt"), "b")?;
    let clock = Arc::new(ManualClock::new(T0));
    let mut config = DispatcherConfig::new(dir.path());
    config.clock = clock.clone();
    adjust(&mut config);
    let dispatcher = Dispatcher::new(config);
    Ok(Fixture {
        dir,
        clock,
        dispatcher,
    })
}

fn fixture() -> Result<Fixture, Box<dyn Error>> {
    fixture_with(|_| {})
}

impl Fixture {
    async fn call(&self, name: &str, arguments: Value) -> Outcome {
        self.dispatcher.call(ToolCall::new(name, arguments)).await
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }
}

fn expect_ok(outcome: &Outcome) -> Result<&Value, Box<dyn Error>> {
    match &outcome.kind {
        OutcomeKind::Ok { value } => Ok(value),
        other => Err(format!("expected ok, got {other:?}").into()),
    }
}

fn expect_refused(outcome: &Outcome, code: RefusalCode) -> Result<&str, Box<dyn Error>> {
    match &outcome.kind {
        OutcomeKind::Refused { code: got, message } if *got == code => Ok(message),
        other => Err(format!("expected refused {code}, got {other:?}").into()),
    }
}

// ---- catalogue and outcome model ----

#[test]
fn catalogue_lists_every_code_once_with_stable_strings() -> TestResult {
    let codes: Vec<&str> = catalogue().iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(
        codes,
        [
            "INVALID_ARGUMENTS",
            "PATH_OUTSIDE_ROOT",
            "NOT_FOUND",
            "NOT_A_DIRECTORY",
            "IS_A_DIRECTORY",
            "EXEC_NOT_ALLOWED",
            "TOOL_TIMEOUT",
            "BACKEND_NOT_ACTIVE",
            "RETRY_REFUSED",
            "QUEUE_TIMEOUT",
        ]
    );
    for (code, description) in catalogue() {
        assert!(!description.is_empty());
        assert_eq!(code.description(), *description);
        assert_eq!(code.as_str().parse::<RefusalCode>()?, *code);
        assert_eq!(serde_json::to_value(code)?, json!(code.as_str()));
    }
    assert_eq!(catalogue().len(), RefusalCode::ALL.len());
    assert!("not_found".parse::<RefusalCode>().is_err());
    Ok(())
}

#[test]
fn reference_doc_lists_the_catalogue_verbatim() -> TestResult {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference.md"),
    )?;
    for (code, description) in catalogue() {
        let row = format!("| `{code}` | {description} |");
        assert!(doc.contains(&row), "docs/reference.md lacks the row {row}");
    }
    Ok(())
}

#[test]
fn outcome_serializes_as_flat_objects() -> TestResult {
    let cases = [
        (
            Outcome::ok(json!({"content": "x"})),
            r#"{"outcome":"ok","value":{"content":"x"},"warnings":[]}"#,
        ),
        (
            Outcome::refused(RefusalCode::NotFound, "gone"),
            r#"{"outcome":"refused","code":"NOT_FOUND","message":"gone","warnings":[]}"#,
        ),
        (
            Outcome::tool_error("boom"),
            r#"{"outcome":"tool_error","message":"boom","warnings":[]}"#,
        ),
        (
            Outcome::protocol_error(-32602, "Unknown tool: x"),
            r#"{"outcome":"protocol_error","code":-32602,"message":"Unknown tool: x","warnings":[]}"#,
        ),
    ];
    for (outcome, expected) in cases {
        assert_eq!(serde_json::to_string(&outcome)?, expected);
        assert_eq!(outcome.to_json().to_string(), expected);
        assert_eq!(Outcome::from_json(&outcome.to_json())?, outcome);
    }
    let mut warned = Outcome::ok(json!(1));
    warned.warnings.push("w".into());
    assert_eq!(warned.to_json()["warnings"], json!(["w"]));
    assert_eq!(Outcome::from_json(&warned.to_json())?, warned);
    assert!(Outcome::from_json(&json!({"outcome":"maybe"})).is_err());
    assert!(Outcome::from_json(&json!({"outcome":"refused","code":"NOPE","message":""})).is_err());
    Ok(())
}

#[test]
fn clocks_report_what_they_are_told() {
    let manual = ManualClock::new(5);
    assert_eq!(manual.now_ms(), 5);
    assert_eq!(manual.advance(10), 15);
    manual.set(3);
    assert_eq!(manual.now_ms(), 3);
    assert_eq!(FixedClock(42).now_ms(), 42);
    assert!(SystemClock.now_ms() > T0);
}

// ---- descriptors ----

#[test]
fn six_tools_in_fixed_order_with_closed_object_schemas() -> TestResult {
    let f = fixture()?;
    let tools = f.dispatcher.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "write_file",
            "list_dir",
            "exec",
            "status",
            "retry"
        ]
    );
    for tool in &tools {
        let schema = &tool.input_schema;
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
        assert!(schema["properties"].is_object(), "{}", tool.name);
        assert!(schema["required"].is_array(), "{}", tool.name);
        assert!(!tool.title.is_empty() && !tool.description.is_empty());
        assert_eq!(
            tool.mutating,
            matches!(tool.name.as_str(), "write_file" | "exec")
        );
        let hints = serde_json::to_value(tool.annotations)?;
        for key in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(hints[key].is_boolean(), "{} {key}", tool.name);
        }
    }
    assert_eq!(tools[3].input_schema["required"], json!(["argv"]));
    assert_eq!(
        tools[1].input_schema["required"],
        json!(["path", "content"])
    );
    assert_eq!(tools[2].input_schema["required"], json!([]));
    Ok(())
}

// ---- protocol errors and argument validation ----

#[tokio::test]
async fn unknown_tool_is_a_protocol_error() -> TestResult {
    let f = fixture()?;
    let outcome = f.call("nope", json!({})).await;
    assert_eq!(
        outcome.to_json(),
        json!({"outcome":"protocol_error","code":-32602,"message":"Unknown tool: nope","warnings":[]})
    );
    Ok(())
}

#[tokio::test]
async fn non_object_arguments_are_a_protocol_error() -> TestResult {
    let f = fixture()?;
    for arguments in [json!(null), json!([]), json!("x"), json!(1)] {
        let outcome = f.call("status", arguments).await;
        assert!(
            matches!(
                outcome.kind,
                OutcomeKind::ProtocolError { code: -32602, .. }
            ),
            "{outcome:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn invalid_arguments_name_the_field() -> TestResult {
    let f = fixture()?;
    let cases = [
        ("read_file", json!({}), "`path`"),
        ("read_file", json!({"path": 1}), "`path`"),
        ("read_file", json!({"path": "a", "extra": true}), "`extra`"),
        ("write_file", json!({"path": "a"}), "`content`"),
        (
            "write_file",
            json!({"path": "a", "content": null}),
            "`content`",
        ),
        ("list_dir", json!({"path": false}), "`path`"),
        ("exec", json!({}), "`argv`"),
        ("exec", json!({"argv": "echo"}), "`argv`"),
        ("exec", json!({"argv": []}), "`argv`"),
        ("exec", json!({"argv": ["echo", 3]}), "`argv[1]`"),
        (
            "exec",
            json!({"argv": ["echo"], "timeout_ms": 0}),
            "`timeout_ms`",
        ),
        (
            "exec",
            json!({"argv": ["echo"], "timeout_ms": -5}),
            "`timeout_ms`",
        ),
        (
            "exec",
            json!({"argv": ["echo"], "timeout_ms": 1.5}),
            "`timeout_ms`",
        ),
        (
            "exec",
            json!({"argv": ["echo"], "timeout_ms": "9"}),
            "`timeout_ms`",
        ),
        ("status", json!({"verbose": true}), "`verbose`"),
        ("retry", json!({"force": 1}), "`force`"),
    ];
    for (tool, arguments, field) in cases {
        let outcome = f.call(tool, arguments.clone()).await;
        let message = expect_refused(&outcome, RefusalCode::InvalidArguments)
            .map_err(|e| format!("{tool} {arguments}: {e}"))?;
        assert!(message.contains(field), "{tool} {arguments}: {message}");
    }
    Ok(())
}

// ---- read_file / write_file / list_dir ----

#[tokio::test]
async fn read_file_returns_content() -> TestResult {
    let f = fixture()?;
    let outcome = f.call("read_file", json!({"path": "hello.txt"})).await;
    assert_eq!(expect_ok(&outcome)?, &json!({"content": "hello\n"}));
    assert!(outcome.warnings.is_empty());
    let nested = f
        .call("read_file", json!({"path": "./sub/../sub/b.txt"}))
        .await;
    assert_eq!(expect_ok(&nested)?, &json!({"content": "b"}));
    Ok(())
}

#[tokio::test]
async fn read_file_refusals() -> TestResult {
    let f = fixture()?;
    let missing = f.call("read_file", json!({"path": "missing.txt"})).await;
    let message = expect_refused(&missing, RefusalCode::NotFound)?;
    assert!(message.contains("missing.txt"));
    assert!(
        !message.contains(&*f.root().to_string_lossy()),
        "leaks the root: {message}"
    );
    let deep = f.call("read_file", json!({"path": "nodir/x.txt"})).await;
    expect_refused(&deep, RefusalCode::NotFound)?;
    let dir = f.call("read_file", json!({"path": "sub"})).await;
    expect_refused(&dir, RefusalCode::IsADirectory)?;
    let through_file = f.call("read_file", json!({"path": "hello.txt/x"})).await;
    expect_refused(&through_file, RefusalCode::NotADirectory)?;
    std::fs::write(f.root().join("bin.dat"), [0xff, 0xfe, 0x00])?;
    let binary = f.call("read_file", json!({"path": "bin.dat"})).await;
    assert!(
        matches!(binary.kind, OutcomeKind::ToolError { .. }),
        "{binary:?}"
    );
    Ok(())
}

#[tokio::test]
async fn paths_outside_the_root_are_refused() -> TestResult {
    let f = fixture()?;
    let outside = tempfile::tempdir()?;
    std::fs::write(outside.path().join("secret.txt"), "secret")?;
    let absolute = outside.path().join("secret.txt");
    std::os::unix::fs::symlink(outside.path(), f.root().join("escape"))?;
    std::os::unix::fs::symlink("../..", f.root().join("sub/up"))?;
    std::os::unix::fs::symlink(outside.path().join("new.txt"), f.root().join("dangling"))?;
    let cases = [
        ("read_file", json!({"path": absolute.to_string_lossy()})),
        ("read_file", json!({"path": "../secret.txt"})),
        ("read_file", json!({"path": "sub/../../x"})),
        ("read_file", json!({"path": "escape/secret.txt"})),
        ("read_file", json!({"path": "sub/up/x"})),
        ("list_dir", json!({"path": "escape"})),
        ("list_dir", json!({"path": ".."})),
        ("list_dir", json!({"path": "/"})),
        ("write_file", json!({"path": "dangling", "content": "x"})),
        (
            "write_file",
            json!({"path": "escape/new.txt", "content": "x"}),
        ),
    ];
    for (tool, arguments) in cases {
        let outcome = f.call(tool, arguments.clone()).await;
        expect_refused(&outcome, RefusalCode::PathOutsideRoot)
            .map_err(|e| format!("{tool} {arguments}: {e}"))?;
    }
    assert!(
        !outside.path().join("new.txt").exists(),
        "wrote through a symlink"
    );
    Ok(())
}

#[tokio::test]
async fn symlinks_inside_the_root_are_followed() -> TestResult {
    let f = fixture()?;
    std::os::unix::fs::symlink("sub", f.root().join("alias"))?;
    std::os::unix::fs::symlink("../hello.txt", f.root().join("sub/hello-link"))?;
    std::os::unix::fs::symlink("made.txt", f.root().join("dangling-inside"))?;
    let via_dir = f.call("read_file", json!({"path": "alias/b.txt"})).await;
    assert_eq!(expect_ok(&via_dir)?, &json!({"content": "b"}));
    let via_file = f.call("read_file", json!({"path": "sub/hello-link"})).await;
    assert_eq!(expect_ok(&via_file)?, &json!({"content": "hello\n"}));
    let create = f
        .call(
            "write_file",
            json!({"path": "dangling-inside", "content": "new"}),
        )
        .await;
    expect_ok(&create)?;
    assert_eq!(std::fs::read_to_string(f.root().join("made.txt"))?, "new");
    Ok(())
}

#[tokio::test]
async fn write_file_creates_and_overwrites() -> TestResult {
    let f = fixture()?;
    let outcome = f
        .call(
            "write_file",
            json!({"path": "sub/new.txt", "content": "héllo"}),
        )
        .await;
    assert_eq!(expect_ok(&outcome)?, &json!({"bytes_written": 6}));
    assert_eq!(
        std::fs::read_to_string(f.root().join("sub/new.txt"))?,
        "héllo"
    );
    let again = f
        .call("write_file", json!({"path": "sub/new.txt", "content": ""}))
        .await;
    assert_eq!(expect_ok(&again)?, &json!({"bytes_written": 0}));
    assert_eq!(std::fs::read_to_string(f.root().join("sub/new.txt"))?, "");
    Ok(())
}

#[tokio::test]
async fn write_file_refusals() -> TestResult {
    let f = fixture()?;
    let no_parent = f
        .call("write_file", json!({"path": "nodir/x.txt", "content": "x"}))
        .await;
    expect_refused(&no_parent, RefusalCode::NotFound)?;
    let dir = f
        .call("write_file", json!({"path": "sub", "content": "x"}))
        .await;
    expect_refused(&dir, RefusalCode::IsADirectory)?;
    let root = f
        .call("write_file", json!({"path": ".", "content": "x"}))
        .await;
    expect_refused(&root, RefusalCode::IsADirectory)?;
    let under_file = f
        .call("write_file", json!({"path": "hello.txt/x", "content": "x"}))
        .await;
    expect_refused(&under_file, RefusalCode::NotADirectory)?;
    let nul = f
        .call("write_file", json!({"path": "a\u{0}b", "content": "x"}))
        .await;
    expect_refused(&nul, RefusalCode::InvalidArguments)?;
    Ok(())
}

#[tokio::test]
async fn list_dir_sorts_entries_and_defaults_to_root() -> TestResult {
    let f = fixture()?;
    std::fs::write(f.root().join("a.txt"), "")?;
    std::fs::create_dir(f.root().join("Z"))?;
    let outcome = f.call("list_dir", json!({})).await;
    assert_eq!(
        expect_ok(&outcome)?,
        &json!({"entries": [
            {"name": "Z", "kind": "dir"},
            {"name": "a.txt", "kind": "file"},
            {"name": "hello.txt", "kind": "file"},
            {"name": "sub", "kind": "dir"},
        ]})
    );
    let explicit = f.call("list_dir", json!({"path": "."})).await;
    assert_eq!(explicit, outcome);
    let sub = f.call("list_dir", json!({"path": "sub"})).await;
    assert_eq!(
        expect_ok(&sub)?,
        &json!({"entries": [{"name": "b.txt", "kind": "file"}]})
    );
    Ok(())
}

#[tokio::test]
async fn list_dir_refusals() -> TestResult {
    let f = fixture()?;
    let file = f.call("list_dir", json!({"path": "hello.txt"})).await;
    expect_refused(&file, RefusalCode::NotADirectory)?;
    let missing = f.call("list_dir", json!({"path": "nope"})).await;
    expect_refused(&missing, RefusalCode::NotFound)?;
    Ok(())
}

// ---- exec ----

#[tokio::test]
async fn exec_runs_allow_listed_programs() -> TestResult {
    let f = fixture()?;
    let echo = f
        .call("exec", json!({"argv": ["echo", "hi", "$HOME"]}))
        .await;
    assert_eq!(
        expect_ok(&echo)?,
        &json!({"exit_code": 0, "stdout": "hi $HOME\n", "stderr": ""})
    );
    let fail = f.call("exec", json!({"argv": ["false"]})).await;
    assert_eq!(expect_ok(&fail)?["exit_code"], 1);
    let ok = f
        .call("exec", json!({"argv": ["true"], "timeout_ms": 5000.0}))
        .await;
    assert_eq!(expect_ok(&ok)?["exit_code"], 0);
    Ok(())
}

#[tokio::test]
async fn exec_refuses_programs_outside_the_allow_list() -> TestResult {
    let f = fixture()?;
    for argv in [
        json!(["sh", "-c", "echo hi"]),
        json!(["/bin/echo", "hi"]),
        json!([""]),
    ] {
        let outcome = f.call("exec", json!({"argv": argv})).await;
        expect_refused(&outcome, RefusalCode::ExecNotAllowed)?;
    }
    Ok(())
}

#[tokio::test]
async fn exec_missing_program_is_not_found() -> TestResult {
    let f = fixture_with(|c| c.exec_allow.push("parity-no-such-program".into()))?;
    let outcome = f
        .call("exec", json!({"argv": ["parity-no-such-program"]}))
        .await;
    expect_refused(&outcome, RefusalCode::NotFound)?;
    Ok(())
}

#[tokio::test]
async fn exec_runs_in_the_root_with_a_cleared_environment() -> TestResult {
    let f = fixture_with(|c| c.exec_allow.extend(["pwd".into(), "env".into()]))?;
    let pwd = f.call("exec", json!({"argv": ["pwd"]})).await;
    let expected = format!("{}\n", std::fs::canonicalize(f.root())?.display());
    assert_eq!(expect_ok(&pwd)?["stdout"], json!(expected));
    let env = f.call("exec", json!({"argv": ["env"]})).await;
    let stdout = expect_ok(&env)?["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut names: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.split('=').next())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["LC_ALL", "PATH"]);
    Ok(())
}

#[tokio::test]
async fn exec_over_the_limit_is_refused_tool_timeout() -> TestResult {
    let f = fixture()?;
    let started = Instant::now();
    let outcome = f
        .call("exec", json!({"argv": ["sleep", "30"], "timeout_ms": 200}))
        .await;
    let message = expect_refused(&outcome, RefusalCode::ToolTimeout)?;
    assert!(message.contains("200 ms"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
    Ok(())
}

#[tokio::test]
async fn exec_timeout_is_clamped_to_the_configured_maximum() -> TestResult {
    let f = fixture_with(|c| c.exec_timeout_ms = 150)?;
    let started = Instant::now();
    let outcome = f
        .call(
            "exec",
            json!({"argv": ["sleep", "30"], "timeout_ms": 60_000}),
        )
        .await;
    expect_refused(&outcome, RefusalCode::ToolTimeout)?;
    assert!(started.elapsed() < Duration::from_secs(5));
    Ok(())
}

fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // Field 3 is the state; `Z` is a zombie (dead, waiting to be reaped).
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn dropping_an_exec_call_kills_the_child() -> TestResult {
    let f = fixture_with(|c| c.exec_allow.push("sh".into()))?;
    let call = f.call(
        "exec",
        json!({"argv": ["sh", "-c", "echo $$ > pid.txt; exec sleep 30"]}),
    );
    let dropped = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(dropped.is_err(), "the call should still be running");
    let pid = std::fs::read_to_string(f.root().join("pid.txt"))?;
    let pid = pid.trim();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !process_gone(pid) {
        assert!(Instant::now() < deadline, "child {pid} survived the drop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

// ---- status, retry, policy ----

#[tokio::test]
async fn status_reports_two_labels() -> TestResult {
    let f = fixture()?;
    let outcome = f.call("status", json!({})).await;
    assert_eq!(
        expect_ok(&outcome)?,
        &json!({"label": "active", "state": "active", "reason": null, "since_ms": T0})
    );
    for (state, text) in [
        (LifecycleState::Connecting, "connecting"),
        (LifecycleState::Disconnected, "disconnected"),
        (LifecycleState::Error, "error"),
        (LifecycleState::Stopping, "stopping"),
    ] {
        f.clock.advance(1);
        f.dispatcher
            .set_lifecycle(state, Some("BACKEND_NOT_ACTIVE".into()));
        let outcome = f.call("status", json!({})).await;
        assert_eq!(
            expect_ok(&outcome)?,
            &json!({
                "label": "disconnected",
                "state": text,
                "reason": "BACKEND_NOT_ACTIVE",
                "since_ms": f.clock.now_ms(),
            })
        );
    }
    Ok(())
}

#[tokio::test]
async fn retry_follows_the_state_table() -> TestResult {
    let f = fixture()?;
    // active → unchanged.
    f.clock.advance(100);
    let unchanged = f.call("retry", json!({})).await;
    assert_eq!(
        expect_ok(&unchanged)?,
        &json!({"label": "active", "state": "active", "reason": null, "since_ms": T0})
    );
    // error / disconnected → connecting → active.
    for state in [LifecycleState::Error, LifecycleState::Disconnected] {
        f.dispatcher.set_lifecycle(state, Some("boom".into()));
        let now = f.clock.advance(7);
        let retried = f.call("retry", json!({})).await;
        assert_eq!(
            expect_ok(&retried)?,
            &json!({"label": "active", "state": "active", "reason": null, "since_ms": now})
        );
        assert_eq!(f.dispatcher.lifecycle().state, LifecycleState::Active);
    }
    // connecting → unchanged.
    let snapshot = f.dispatcher.set_lifecycle(LifecycleState::Connecting, None);
    f.clock.advance(5);
    let pending = f.call("retry", json!({})).await;
    assert_eq!(expect_ok(&pending)?, &snapshot.to_json());
    // stopping → refused.
    f.dispatcher.set_lifecycle(LifecycleState::Stopping, None);
    let refused = f.call("retry", json!({})).await;
    expect_refused(&refused, RefusalCode::RetryRefused)?;
    assert_eq!(f.dispatcher.lifecycle().state, LifecycleState::Stopping);
    Ok(())
}

#[tokio::test]
async fn required_policy_refuses_mutating_tools_when_not_active() -> TestResult {
    let f = fixture_with(|c| c.policy = PolicyMode::Required)?;
    f.dispatcher
        .set_lifecycle(LifecycleState::Disconnected, None);
    let write = f
        .call("write_file", json!({"path": "x.txt", "content": "x"}))
        .await;
    expect_refused(&write, RefusalCode::BackendNotActive)?;
    assert!(!f.root().join("x.txt").exists());
    let exec = f.call("exec", json!({"argv": ["true"]})).await;
    expect_refused(&exec, RefusalCode::BackendNotActive)?;
    let read = f.call("read_file", json!({"path": "hello.txt"})).await;
    expect_ok(&read)?;
    assert!(read.warnings.is_empty());
    let retry = f.call("retry", json!({})).await;
    expect_ok(&retry)?;
    let write = f
        .call("write_file", json!({"path": "x.txt", "content": "x"}))
        .await;
    expect_ok(&write)?;
    Ok(())
}

#[tokio::test]
async fn advisory_policy_allows_mutating_tools_with_a_warning() -> TestResult {
    let f = fixture()?;
    assert_eq!(f.dispatcher.policy(), PolicyMode::Advisory);
    let clean = f.call("exec", json!({"argv": ["true"]})).await;
    assert!(clean.warnings.is_empty());
    f.dispatcher.set_lifecycle(LifecycleState::Error, None);
    let write = f
        .call("write_file", json!({"path": "x.txt", "content": "x"}))
        .await;
    expect_ok(&write)?;
    assert_eq!(write.warnings.len(), 1);
    assert!(
        write.warnings[0].starts_with("BACKEND_NOT_ACTIVE: "),
        "{:?}",
        write.warnings
    );
    let read = f.call("read_file", json!({"path": "x.txt"})).await;
    assert!(read.warnings.is_empty());
    Ok(())
}
