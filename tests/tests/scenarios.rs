//! Scenario files v1: the loader's errors, the runner's verdicts, the shipped suite, `parity
//! list`, and the partial matcher.
//!
//! CLI tests run the built `parity` binary (`target/debug/parity`): build it first with
//! `cargo build -p parity-harness`. Every failing assertion prints the command, its exit
//! status, stdout and stderr.

use crate::common;

use parity_harness::engine::scenario::{self, partial_match};
use serde_json::{json, Value};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

type TestResult = Result<(), Box<dyn Error>>;

/// The result of one `parity` invocation, printable in full.
struct Run {
    cmd: String,
    out: Output,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn dump(&self) -> String {
        format!(
            "command: {}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.cmd,
            self.out.status,
            self.stdout(),
            self.stderr()
        )
    }
    fn assert_code(&self, code: i32) {
        assert_eq!(self.code(), Some(code), "{}", self.dump());
    }
    fn assert_stderr_has(&self, needle: &str) {
        assert!(
            self.stderr().contains(needle),
            "stderr lacks {needle:?}\n{}",
            self.dump()
        );
    }
}

fn parity_bin() -> PathBuf {
    common::parity()
}

fn parity(args: &[&str]) -> Result<Run, Box<dyn Error>> {
    let bin = parity_bin();
    let out = Command::new(&bin).args(args).output()?;
    Ok(Run {
        cmd: format!("{} {}", bin.display(), args.join(" ")),
        out,
    })
}

/// A temporary scenario directory holding one file.
fn scenario_dir(file: &str, text: &str) -> Result<tempfile::TempDir, Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join(file), text)?;
    Ok(dir)
}

fn path_str(p: &Path) -> Result<&str, Box<dyn Error>> {
    p.to_str()
        .ok_or_else(|| "temporary path is not UTF-8".into())
}

fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(Path::to_path_buf).unwrap_or(here)
}

/// Runs with a JSON report and returns (run, report).
fn run_json(args: &[&str]) -> Result<(Run, Value), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let report = dir.path().join("report.json");
    let mut all: Vec<&str> = vec!["run", "--json", path_str(&report)?];
    all.extend_from_slice(args);
    let run = parity(&all)?;
    let text = std::fs::read_to_string(&report).map_err(|e| format!("{e}\n{}", run.dump()))?;
    Ok((run, serde_json::from_str(&text)?))
}

fn verdicts(report: &Value) -> Vec<(String, String)> {
    report
        .get("cases")
        .and_then(Value::as_object)
        .map(|cases| {
            cases
                .iter()
                .map(|(id, c)| {
                    let v = c.get("verdict").and_then(Value::as_str).unwrap_or("?");
                    (id.clone(), v.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

const PING_OK: &str = r#"version: 1
id: user.ping-roundtrip
description: ping answers with an empty result
spec: basic/utilities/ping
level: MUST
eras: [legacy]
steps:
  - send: '{"jsonrpc":"2.0","id":"p-1","method":"ping"}'
  - expect: {id: p-1, result: {}}
  - expect_silence: 50
"#;

// ---------------------------------------------------------------------------------------------
// Loader errors: file, line (and column), field
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_key_names_file_line_and_field() -> TestResult {
    let text = PING_OK.replace("{id: p-1, result: {}}", "{id: p-1, resul: {}}");
    let dir = scenario_dir("bad.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    let file = dir.path().join("bad.yaml");
    run.assert_stderr_has(&format!(
        "{}:9:23: steps[1].expect: unknown key \"resul\"",
        file.display()
    ));
    Ok(())
}

#[test]
fn unknown_step_key_names_the_step() -> TestResult {
    let text = PING_OK.replace("  - expect_silence: 50", "  - expect_silenc: 50");
    let dir = scenario_dir("bad.yml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("bad.yml:10:5: steps[2]: unknown key \"expect_silenc\"");
    Ok(())
}

#[test]
fn wrong_type_names_file_line_and_field() -> TestResult {
    let text = PING_OK.replace("expect_silence: 50", "expect_silence: [50]");
    let dir = scenario_dir("bad.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has(
        "bad.yaml:10:21: steps[2].expect_silence: expected an integer (milliseconds), got a list",
    );

    let text = PING_OK.replace("eras: [legacy]", "eras: legacy");
    let dir = scenario_dir("bad.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("bad.yaml:6:7: eras: expected a list of eras");
    Ok(())
}

#[test]
fn yaml_syntax_error_names_file_line_and_field() -> TestResult {
    let text = PING_OK.replace(
        r#"  - send: '{"jsonrpc":"2.0","id":"p-1","method":"ping"}'"#,
        r#"  - send: "{ unterminated"#,
    );
    let dir = scenario_dir("bad.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("bad.yaml:8:11: steps[0].send: invalid YAML: unclosed quote");

    let text = PING_OK.replace("  - expect: {id: p-1, result: {}}", "  - expect: {id: p-1");
    let dir = scenario_dir("bad.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("bad.yaml:10:");
    run.assert_stderr_has(": steps[1].expect: invalid YAML");
    Ok(())
}

#[test]
fn missing_key_and_duplicate_ids_are_configuration_errors() -> TestResult {
    let text = PING_OK.replace("level: MUST\n", "");
    let dir = scenario_dir("bad.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("bad.yaml:1:1: level: missing required key");

    // A user scenario may not take a shipped scenario's id, nor a check's.
    let text = PING_OK.replace("user.ping-roundtrip", "mcp.scenario.stdio.split-write");
    let dir = scenario_dir("dup.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("is already used by scenarios/mcp/stdio-split-write.yaml");
    let text = PING_OK.replace("user.ping-roundtrip", "mcp.base.ping");
    let dir = scenario_dir("dup.yaml", &text)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("is the id of a check");

    let run = parity(&["run", "--scenarios", "/nonexistent/parity-scenarios"])?;
    run.assert_code(2);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Running: the runner can pass, fail and warn
// ---------------------------------------------------------------------------------------------

#[test]
fn user_scenarios_pass_in_raw_and_initialized_sessions() -> TestResult {
    let raw_legacy = r#"version: 1
id: user.raw-handshake
description: a hand-made handshake in a raw session, then a driver request
spec: basic/lifecycle
level: MUST
eras: [legacy]
session: raw
steps:
  - send_json:
      jsonrpc: "2.0"
      id: init
      method: initialize
      params:
        protocolVersion: "2025-06-18"
        capabilities: {}
        clientInfo: {name: t, version: "1"}
  - expect: {id: init, result: {protocolVersion: "2025-06-18", capabilities: {tools: $any}}}
  - send_json: {jsonrpc: "2.0", method: notifications/initialized}
  - expect_silence: 100
  - request: {method: ping}
    expect: {jsonrpc: "2.0", id: 1, result: {}, error: $absent}
"#;
    let modern_meta = r#"version: 1
id: user.modern-meta
description: send_json with meta adds the request _meta in the modern era
spec: server/discover
level: MUST
eras: [modern]
steps:
  - send_json: {jsonrpc: "2.0", id: d-1, method: server/discover}
    meta: true
  - expect:
      id: d-1
      result: {supportedVersions: {$contains: ["2026-07-28"]}}
  - send_json: {jsonrpc: "2.0", id: d-2, method: server/discover}
  - expect: {id: d-2, error: {code: -32602}}
"#;
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("a.yaml"), raw_legacy)?;
    std::fs::create_dir(dir.path().join("sub"))?;
    std::fs::write(dir.path().join("sub/b.yml"), modern_meta)?;
    std::fs::write(dir.path().join("ignored.txt"), "not a scenario")?;
    let (run, report) = run_json(&["--scenarios", path_str(dir.path())?, "--filter", "user.*"])?;
    run.assert_code(0);
    let v = verdicts(&report);
    assert_eq!(
        v,
        vec![
            (
                "user.raw-handshake@mcp-stdio#2025-11-25".to_string(),
                "pass".to_string()
            ),
            (
                "user.modern-meta@mcp-stdio#2026-07-28".to_string(),
                "pass".to_string()
            ),
        ],
        "{}",
        run.dump()
    );
    Ok(())
}

#[test]
fn a_failing_must_scenario_fails_the_run() -> TestResult {
    let text = r#"version: 1
id: user.readme-says-hello
description: README.md says hello (it does not, so this fails)
spec: server/tools
level: MUST
targets: [reference]
steps:
  - call: {name: read_file, arguments: {path: README.md}}
    outcome: ok
  - call: {name: read_file, arguments: {path: README.md}}
    expect: {result: {structuredContent: {value: {content: hello}}}}
"#;
    let dir = scenario_dir("fail.yaml", text)?;
    let (run, report) = run_json(&["--scenarios", path_str(dir.path())?, "--filter", "user.*"])?;
    run.assert_code(1);
    let v = verdicts(&report);
    assert_eq!(v.len(), 2, "{}", run.dump());
    assert!(v.iter().all(|(_, verdict)| verdict == "fail"), "{v:?}");
    let case = &report["cases"]["user.readme-says-hello@mcp-stdio#2026-07-28"];
    let msg = case["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("steps[1]")
            && msg.contains("fail.yaml:10")
            && msg.contains(
                r#"/result/structuredContent/value/content: expected "hello", got "parity reference workspace\n""#
            ),
        "{msg}\n{}",
        run.dump()
    );
    // Evidence is the session's frames.
    let evidence = case["evidence"].as_array().cloned().unwrap_or_default();
    assert!(
        evidence
            .iter()
            .any(|e| e.as_str().is_some_and(|s| s.contains("tools/call"))),
        "{evidence:?}"
    );
    assert_eq!(case["level"], json!("MUST"));
    assert_eq!(
        case["spec"],
        json!("https://modelcontextprotocol.io/specification/2026-07-28/server/tools")
    );
    Ok(())
}

#[test]
fn a_failing_should_scenario_warns_and_wrong_outcome_is_reported() -> TestResult {
    let text = r#"version: 1
id: user.outside-root-is-ok
description: reading outside the root succeeds (it is refused, so this warns)
spec: https://example.invalid/policy
level: SHOULD
targets: [reference]
eras: [modern]
steps:
  - call: {name: read_file, arguments: {path: ../x}}
    outcome: ok
"#;
    let dir = scenario_dir("warn.yaml", text)?;
    let (run, report) = run_json(&["--scenarios", path_str(dir.path())?, "--filter", "user.*"])?;
    run.assert_code(0);
    let case = &report["cases"]["user.outside-root-is-ok@mcp-stdio#2026-07-28"];
    assert_eq!(case["verdict"], json!("warn"), "{}", run.dump());
    let msg = case["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("expected outcome ok, got refused"),
        "{msg}\n{}",
        run.dump()
    );
    assert_eq!(case["spec"], json!("https://example.invalid/policy"));
    Ok(())
}

#[test]
fn an_expectation_on_silence_fails_when_the_server_answers() -> TestResult {
    let text = r#"version: 1
id: user.ping-is-silent
description: ping is never answered (it is, so this fails)
spec: basic/utilities/ping
level: MUST
eras: [legacy]
steps:
  - send: '{"jsonrpc":"2.0","id":"p-1","method":"ping"}'
  - expect_silence: 300
"#;
    let dir = scenario_dir("silence.yaml", text)?;
    let (run, report) = run_json(&["--scenarios", path_str(dir.path())?, "--filter", "user.*"])?;
    run.assert_code(1);
    let case = &report["cases"]["user.ping-is-silent@mcp-stdio#2025-11-25"];
    let msg = case["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("expected silence for 300 ms, but 1 message(s) arrived"),
        "{msg}\n{}",
        run.dump()
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The shipped scenarios
// ---------------------------------------------------------------------------------------------

#[test]
fn shipped_scenarios_pass_against_the_reference_in_both_eras() -> TestResult {
    let shipped = scenario::shipped()?;
    assert!((4..=8).contains(&shipped.len()), "{}", shipped.len());
    let (run, report) = run_json(&["--profile", "mcp", "--filter", "mcp.scenario.*"])?;
    run.assert_code(0);
    let v = verdicts(&report);
    let eras: usize = shipped.iter().map(|s| s.eras.len()).sum();
    assert_eq!(v.len(), eras, "{}", run.dump());
    assert!(shipped.iter().any(|s| s.replay.is_some()));
    for s in &shipped {
        let revs: Vec<&str> = s
            .eras
            .iter()
            .map(|e| match e {
                parity_harness::protocol::mcp::Era::Legacy => "2025-11-25",
                parity_harness::protocol::mcp::Era::Modern => "2026-07-28",
            })
            .collect();
        for rev in revs {
            let id = format!("{}@mcp-stdio#{rev}", s.id);
            assert!(
                v.contains(&(id.clone(), "pass".to_string())),
                "{id} did not pass\n{}",
                run.dump()
            );
        }
    }
    Ok(())
}

#[test]
fn reference_only_scenarios_are_not_planned_for_other_targets() -> TestResult {
    let bin = parity_bin();
    let cmd = format!("{} reference mcp", bin.display());
    let (run, report) = run_json(&["--mcp", &cmd, "--filter", "mcp.scenario.*"])?;
    run.assert_code(0);
    let shipped = scenario::shipped()?;
    let mut left_out = 0;
    for s in &shipped {
        for rev in ["2025-11-25", "2026-07-28"] {
            let case = &report["cases"][format!("{}@mcp-stdio#{rev}", s.id)];
            if s.reference_only {
                // Not planned: no case, no skip line; one note says so.
                assert!(case.is_null(), "{}: {case}", s.id);
                left_out += 1;
                continue;
            }
            if case.is_null() {
                assert!(s.replay.is_some(), "{} has no case at {rev}", s.id);
                continue;
            }
            assert_eq!(case["verdict"], json!("pass"), "{}\n{}", s.id, run.dump());
        }
    }
    assert!(left_out > 0);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains(
            "run only against the bundled reference (targets: [reference]) and were not planned"
        ),
        "{notes}"
    );
    Ok(())
}

#[test]
fn every_shipped_file_is_embedded() -> TestResult {
    let mut on_disk: Vec<String> = Vec::new();
    for sub in ["mcp", "equivalence"] {
        let dir = workspace_root().join("harness/scenarios").join(sub);
        on_disk.extend(
            scenario::scenario_files(&dir)?
                .iter()
                .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
                .map(|n| format!("scenarios/{sub}/{n}")),
        );
    }
    on_disk.sort();
    let mut embedded: Vec<String> = scenario::shipped_files()
        .iter()
        .map(|s| s.to_string())
        .collect();
    embedded.sort();
    assert_eq!(on_disk, embedded);
    // The files on disk are the embedded ones, byte for byte (they load the same).
    for (name, s) in scenario::shipped_files().iter().zip(scenario::shipped()?) {
        let from_disk = scenario::load_path(&workspace_root().join("harness").join(name))?;
        assert_eq!(from_disk.steps, s.steps, "{name}");
        assert_eq!(
            from_disk.replay.as_ref().map(|r| &r.transcript.events),
            s.replay.as_ref().map(|r| &r.transcript.events),
            "{name}"
        );
    }
    Ok(())
}

#[test]
fn list_prints_scenarios_with_their_spec_reference() -> TestResult {
    let run = parity(&["list"])?;
    run.assert_code(0);
    let out = run.stdout();
    for s in scenario::shipped()? {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{} ", s.id)))
            .ok_or_else(|| format!("{} not listed\n{}", s.id, run.dump()))?;
        assert!(line.contains(&s.spec_url("2025-11-25")), "{line}");
    }

    let dir = scenario_dir("mine.yaml", PING_OK)?;
    let run = parity(&["list", "--json", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(0);
    let items: Value = serde_json::from_str(&run.stdout())?;
    let mine = items
        .as_array()
        .and_then(|a| a.iter().find(|i| i["id"] == json!("user.ping-roundtrip")))
        .ok_or_else(|| format!("user scenario not listed\n{}", run.dump()))?;
    assert_eq!(mine["kind"], json!("scenario"));
    assert_eq!(mine["level"], json!("MUST"));
    assert_eq!(
        mine["spec"],
        json!("https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/ping")
    );
    let shipped_listed = items
        .as_array()
        .map(|a| a.iter().filter(|i| i["kind"] == json!("scenario")).count())
        .unwrap_or(0);
    assert_eq!(shipped_listed, scenario::shipped()?.len() + 1);

    let bad = scenario_dir("bad.yaml", "version: 1\nid: [x]\n")?;
    let run = parity(&["list", "--scenarios", path_str(bad.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("bad.yaml:2:5: id: expected a string");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The matcher
// ---------------------------------------------------------------------------------------------

/// One matcher case: pattern, actual, expected mismatch messages.
fn check(pattern: Value, actual: Value, expected: &[&str]) {
    assert_eq!(
        partial_match(&pattern, &actual),
        expected,
        "pattern {pattern}\nactual  {actual}"
    );
}

#[test]
fn matcher_table() {
    // Objects: every expected key, extra keys allowed.
    check(json!({"id": 1}), json!({"id": 1, "result": {}}), &[]);
    check(
        json!({"result": {"tools": [{"name": "a"}]}}),
        json!({"result": {"tools": [{"name": "b"}]}}),
        &[r#"/result/tools/0/name: expected "a", got "b""#],
    );
    check(
        json!({"result": {}}),
        json!({"error": {}}),
        &["/result: missing (expected {})"],
    );
    // Arrays: element-wise, equal length.
    check(
        json!([1]),
        json!([1, 2]),
        &["/: expected 1 element(s), got 2: [1,2]"],
    );
    check(
        json!({"content": []}),
        json!({"content": {}}),
        &["/content: expected an array, got an object: {}"],
    );
    // $contains: any order.
    check(
        json!({"$contains": [{"name": "b"}, {"name": "a"}]}),
        json!([{"name": "a", "x": 1}, {"name": "b"}]),
        &[],
    );
    // Scalars: type included.
    check(
        json!({"id": 1}),
        json!({"id": "1"}),
        &[r#"/id: expected 1, got "1""#],
    );
    check(
        json!({"id": "1"}),
        json!({"id": 1}),
        &[r#"/id: expected "1", got 1"#],
    );
    check(json!(false), json!(null), &["/: expected false, got null"]);
    // $any and $absent.
    check(json!({"id": "$any"}), json!({"id": 0}), &[]);
    check(
        json!({"id": "$any"}),
        json!({}),
        &["/id: missing (expected any value)"],
    );
    check(json!({"error": "$absent"}), json!({"result": 1}), &[]);
    check(
        json!({"error": "$absent"}),
        json!({"error": null}),
        &["/error: expected to be absent, got null"],
    );
    // Several mismatches are all reported.
    assert_eq!(
        partial_match(&json!({"a": 1, "b": 2}), &json!({"a": 0, "b": 0})).len(),
        2
    );
}

// ---------------------------------------------------------------------------------------------
// Scenarios that replay a transcript
// ---------------------------------------------------------------------------------------------

const REPLAY_SCENARIO: &str = "version: 1
id: user.replayed
description: a recorded session replays with no difference.
spec: server/tools
level: MUST
transcript: session.jsonl
volatile_keys: [since_ms]
";

/// A scenario directory holding the shipped recorded session and a scenario replaying it.
fn replay_dir(scenario_text: &str) -> Result<tempfile::TempDir, Box<dyn Error>> {
    let dir = scenario_dir("replayed.yaml", scenario_text)?;
    std::fs::copy(
        workspace_root().join("harness/scenarios/mcp/recorded/py-mcp-client-session.jsonl"),
        dir.path().join("session.jsonl"),
    )?;
    Ok(dir)
}

#[test]
fn a_replayed_transcript_passes_on_the_reference_and_fails_on_a_faulty_server() -> TestResult {
    let dir = replay_dir(REPLAY_SCENARIO)?;
    let d = path_str(dir.path())?;
    let (run, report) = run_json(&["--scenarios", d, "--filter", "user.*"])?;
    run.assert_code(0);
    assert_eq!(
        verdicts(&report),
        vec![(
            "user.replayed@mcp-stdio#2025-11-25".to_string(),
            "pass".to_string()
        )],
        "{}",
        run.dump()
    );
    // A server that lists a tool under another name differs in the tools/list response.
    let fake = format!("{} fake bad-tool-name", parity_bin().display());
    let (run, report) = run_json(&["--mcp", &fake, "--scenarios", d, "--filter", "user.*"])?;
    run.assert_code(1);
    let case = &report["cases"]["user.replayed@mcp-stdio#2025-11-25"];
    assert_eq!(case["verdict"], json!("fail"), "{}", run.dump());
    let msg = case["message"].as_str().unwrap_or_default();
    assert!(msg.contains("response to tools/list"), "{msg}");
    let evidence = case["evidence"].to_string();
    assert!(
        evidence.contains("read file") && evidence.contains("+"),
        "{evidence}"
    );
    Ok(())
}

#[test]
fn replay_scenario_errors_name_file_line_and_field() -> TestResult {
    let dir = scenario_dir(
        "bad.yaml",
        &REPLAY_SCENARIO.replace("session.jsonl", "missing.jsonl"),
    )?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("bad.yaml:6");
    run.assert_stderr_has("transcript");
    run.assert_stderr_has("missing.jsonl");
    let dir = replay_dir(&format!("{REPLAY_SCENARIO}steps:\n  - send: x\n"))?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("not both");
    // A transcript whose third event line was cut short: the error names its line.
    let dir = replay_dir(REPLAY_SCENARIO)?;
    let path = dir.path().join("session.jsonl");
    let text = std::fs::read_to_string(&path)?;
    let cut: String = text.lines().take(3).collect::<Vec<_>>().join("\n") + "\n{\"seq\":4,";
    std::fs::write(&path, cut)?;
    let run = parity(&["run", "--scenarios", path_str(dir.path())?])?;
    run.assert_code(2);
    run.assert_stderr_has("session.jsonl:4: not JSON");
    Ok(())
}
