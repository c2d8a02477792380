//! Secrets never reach an output (docs/redaction.md): a canary planted in the server's
//! environment, which the `benign-echoes-secrets` peer repeats on stderr, in error messages and
//! in a text block of nested serialized JSON, appears in no artifact of a run (console, JSON,
//! JUnit, HTML, snapshots, log), a record or a replay.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// Holds a quote, a backslash and a non-ASCII letter, the characters that change under JSON
/// escaping; its two alphanumeric runs are what the search looks for in every form.
const CANARY: &str = "pAr1tyC4n4ry\"x\\yé-Zq8Wm3";
const FRAGMENTS: [&str; 2] = ["pAr1tyC4n4ry", "Zq8Wm3"];

/// A scenario whose two steps fail, so the evidence quotes a result and an error response.
const PROBE: &str = "version: 1
id: user.leak-probe
description: A result and an error response are quoted in the evidence.
spec: server/tools
level: MUST
steps:
  - call: {name: read_file, arguments: {path: README.md}}
    expect:
      result: {content: [{type: image}]}
  - request: {method: no/such, params: {}}
    expect:
      result: {}
";

fn assert_clean(what: &str, text: &str) {
    for f in FRAGMENTS {
        assert!(!text.contains(f), "{what} holds the canary:\n{text}");
    }
}

fn all_files(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            out.push((p.display().to_string(), text));
        }
    }
    out
}

#[test]
fn a_canary_in_the_servers_environment_reaches_no_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("probe.yaml"), PROBE).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let p = |name: &str| out.join(name).to_string_lossy().into_owned();
    let peer = fake_cmd("benign-echoes-secrets");
    let var = parity_fakes::ECHOED_SECRET_VAR;
    let run = run_env(
        &[
            "run",
            "--mcp",
            &peer,
            "--scenarios",
            &scen.to_string_lossy(),
            "--filter",
            "user.*",
            "--verbose",
            "--json",
            &p("report.json"),
            "--junit",
            &p("junit.xml"),
            "--html",
            &p("report.html"),
            "--snapshots",
            &p("snapshots"),
        ],
        &[(var, CANARY), ("RUST_LOG", "debug")],
    );
    run.assert_code(1);
    // The peer did echo it: redaction markers stand where it was.
    assert!(run.stdout.contains("[REDACTED:env:"), "{run}");
    assert_clean("the console", &run.stdout);
    assert_clean("the log", &run.stderr);
    let files = all_files(&out);
    assert!(files.len() >= 5, "{files:?}");
    for (name, text) in &files {
        assert!(
            text.contains("[REDACTED"),
            "{name} shows no redaction:\n{text}"
        );
        assert_clean(name, text);
    }

    // A record of a session with the same peer, then a replay of it against the peer.
    let transcript = out.join("session.jsonl");
    let mut child = Command::new(parity())
        .args(["record", "--out", &transcript.to_string_lossy(), "--"])
        .args([parity_str(), "fake".into(), "benign-echoes-secrets".into()])
        .env(var, CANARY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let lines = [
        init,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"README.md"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"no/such","params":{}}"#,
    ];
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    // Wait for the three responses before closing stdin.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    for _ in 0..3 {
        std::io::BufRead::read_line(&mut stdout, &mut seen).unwrap();
    }
    drop(stdin);
    let rec = child.wait_with_output().unwrap();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(text.contains("[REDACTED:env:"), "{text}");
    assert_clean("the transcript", &text);
    // record's own stderr is the server's, passed through unchanged (a transparent proxy), so
    // it is not searched; the transcript holds its redacted copy.

    let replay = run_env(
        &["replay", &transcript.to_string_lossy(), "--mcp", &peer],
        &[(var, CANARY), ("RUST_LOG", "debug")],
    );
    assert_clean("the replay's output", &replay.stdout);
    assert_clean("the replay's log", &replay.stderr);
}
