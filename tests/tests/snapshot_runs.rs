//! `parity run --snapshots DIR [--accept]` (docs/transcripts.md §Snapshots): scenario exchanges
//! stored, compared on later runs, pending `.snap.new` files on a difference, `--accept`, and
//! snapshots no scenario produced any more. Real processes over real pipes: the bundled
//! reference and faulty peers of the zoo.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::json;
use std::path::Path;

/// A scenario that asks for tools/list and expects nothing in particular: it passes against
/// any server that answers, so only its snapshot can tell two servers apart.
const LIST_SCENARIO: &str = "version: 1
id: user.tools-listed
description: tools/list is answered.
spec: server/tools
level: MUST
steps:
  - request: {method: tools/list, params: {}}
";

fn files(dir: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

#[test]
fn snapshots_are_created_compared_flagged_and_accepted() {
    let scen = tempfile::tempdir().unwrap();
    std::fs::write(scen.path().join("list.yaml"), LIST_SCENARIO).unwrap();
    let snaps = tempfile::tempdir().unwrap();
    let s = scen.path().to_str().unwrap();
    let d = snaps.path().to_str().unwrap();
    let base = [
        "run",
        "--profile",
        "mcp",
        "--scenarios",
        s,
        "--filter",
        "user.*",
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = base.iter().map(|x| x.to_string()).collect();
        a.extend(["--snapshots", d].iter().map(|x| x.to_string()));
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let run_with = |extra: &[&str]| {
        let a = with(extra);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        run_json(&refs)
    };
    // First run: created, one per era.
    let r = run_with(&[]);
    r.assert_code(0);
    let snap_files = files(snaps.path(), ".snap");
    assert_eq!(
        snap_files,
        vec![
            "user.tools-listed@mcp-stdio+2025-11-25.snap".to_string(),
            "user.tools-listed@mcp-stdio+2026-07-28.snap".to_string()
        ],
        "{r}"
    );
    let legacy = std::fs::read_to_string(snaps.path().join(&snap_files[0])).unwrap();
    assert!(
        legacy.starts_with("# parity snapshot 1: user.tools-listed@mcp-stdio#2025-11-25\nc2s {")
    );
    assert!(legacy.contains("\"id\":\"[ID]\"") && legacy.contains("\"version\":\"[VERSION]\""));
    // Same server again: same exchange, nothing pending.
    let r = run_with(&[]);
    r.assert_code(0);
    assert!(files(snaps.path(), ".new").is_empty(), "{r}");
    // A server listing a tool under another name: the steps pass, the snapshot does not.
    let fault = fake_cmd("bad-tool-name");
    let r = run_with(&["--mcp", &fault]);
    r.assert_code(1);
    let case = &r.cases()["user.tools-listed@mcp-stdio#2025-11-25"];
    assert_eq!(case["verdict"], json!("fail"), "{r}");
    assert!(
        case["message"]
            .as_str()
            .unwrap()
            .contains("differs from its snapshot"),
        "{case}"
    );
    let evidence = case["evidence"].to_string();
    assert!(evidence.contains("read file"), "{evidence}");
    assert_eq!(files(snaps.path(), ".new").len(), 2, "{r}");
    // --accept takes the new exchange; the next run against that server passes.
    run_with(&["--mcp", &fault, "--accept"]).assert_code(0);
    assert!(files(snaps.path(), ".new").is_empty());
    run_with(&["--mcp", &fault]).assert_code(0);
}

#[test]
fn accepting_a_snapshot_cannot_hide_a_stdout_fault() {
    let scen = tempfile::tempdir().unwrap();
    std::fs::write(scen.path().join("list.yaml"), LIST_SCENARIO).unwrap();
    let snaps = tempfile::tempdir().unwrap();
    let fault = fake_cmd("json-log-line");
    let args = [
        "run",
        "--mcp",
        &fault,
        "--scenarios",
        scen.path().to_str().unwrap(),
        "--filter",
        "user.*",
        "--filter",
        "mcp.stdio.stdout-purity",
        "--snapshots",
        snaps.path().to_str().unwrap(),
        "--accept",
    ];
    let r = run_json(&args);
    // The log line is in the snapshot now, yet the purity check still fails the run.
    let snap = std::fs::read_to_string(
        snaps
            .path()
            .join("user.tools-listed@mcp-stdio+2025-11-25.snap"),
    )
    .unwrap();
    assert!(snap.lines().count() > 3, "{snap}");
    r.assert_code(1);
    assert_eq!(
        r.verdict("mcp.stdio.stdout-purity@mcp-stdio#2025-11-25"),
        Some("fail"),
        "{r}"
    );
}

#[test]
fn snapshots_no_scenario_produces_are_reported() {
    let snaps = tempfile::tempdir().unwrap();
    std::fs::write(
        snaps.path().join("gone.scenario@mcp-stdio+2025-11-25.snap"),
        "x",
    )
    .unwrap();
    let d = snaps.path().to_str().unwrap();
    let r = run_json(&["run", "--profile", "mcp", "--snapshots", d]);
    r.assert_code(0);
    let notes = r.report.as_ref().unwrap()["notes"].to_string();
    assert!(
        notes.contains("no scenario produced") && notes.contains("gone.scenario"),
        "{r}"
    );
    // A narrowed run does not call the others unreferenced.
    let r = run_json(&[
        "run",
        "--profile",
        "mcp",
        "--snapshots",
        d,
        "--filter",
        "mcp.base.ping",
    ]);
    r.assert_code(0);
    assert!(
        !r.report.as_ref().unwrap()["notes"]
            .to_string()
            .contains("no scenario produced"),
        "{r}"
    );
}

#[test]
fn snapshots_survive_a_version_bump_of_the_server_in_both_eras() {
    let scen = tempfile::tempdir().unwrap();
    std::fs::write(scen.path().join("list.yaml"), LIST_SCENARIO).unwrap();
    let snaps = tempfile::tempdir().unwrap();
    let s = scen.path().to_str().unwrap();
    let d = snaps.path().to_str().unwrap();
    let bumped = format!(
        "{} reference mcp --server-version 99.1.2-bumped",
        parity_str()
    );
    let args = |server: &str| -> Vec<String> {
        [
            "run",
            "--profile",
            "mcp",
            "--scenarios",
            s,
            "--filter",
            "user.*",
            "--snapshots",
            d,
            "--mcp",
            server,
        ]
        .iter()
        .map(|x| x.to_string())
        .collect()
    };
    let run_with = |server: &str| {
        let a = args(server);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        run_json(&refs)
    };
    // Taken before the bump: the reference reports parity's own version.
    let before = format!("{} reference mcp", parity_str());
    run_with(&before).assert_code(0);
    let snap_files = files(snaps.path(), ".snap");
    assert_eq!(snap_files.len(), 2, "{snap_files:?}");
    let modern = std::fs::read_to_string(
        snaps
            .path()
            .join("user.tools-listed@mcp-stdio+2026-07-28.snap"),
    )
    .unwrap();
    // Both implementation versions of the modern era are placeholders: the server's in the
    // result's `_meta`, and parity's own in the requests it sent.
    for member in [
        "\"io.modelcontextprotocol/serverInfo\":{\"name\":\"parity-reference\",\"version\":\"[VERSION]\"}",
        "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"parity\",\"version\":\"[VERSION]\"}",
    ] {
        assert!(modern.contains(member), "{member} not in\n{modern}");
    }
    assert!(
        !modern.contains(&format!("\"{}\"", env!("CARGO_PKG_VERSION"))),
        "{modern}"
    );
    // After the bump: every case passes against the snapshots, nothing pending.
    let r = run_with(&bumped);
    r.assert_code(0);
    for era in ["2025-11-25", "2026-07-28"] {
        let case = &r.cases()[format!("user.tools-listed@mcp-stdio#{era}").as_str()];
        assert_eq!(case["verdict"], json!("pass"), "{era}: {r}");
    }
    assert!(files(snaps.path(), ".new").is_empty(), "{r}");
}
