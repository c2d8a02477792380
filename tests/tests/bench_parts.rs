//! The record/replay parts of `parity bench` run end to end in their quick modes: the replay
//! comparison finds no difference between two sessions that differ only in volatile values, and
//! the recording proxy records every line it forwarded. Figures are never asserted (speed is
//! measured by the benchmark, not by tests).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{json, Value};
use std::process::Command;

fn bench_json(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench.json");
    let mut a: Vec<&str> = vec!["bench"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--json", out.to_str().unwrap()]);
    let r = Command::new(common::parity()).args(&a).output().unwrap();
    assert_eq!(
        r.status.code(),
        Some(0),
        "parity {}\n{}\n{}",
        a.join(" "),
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

#[test]
fn replay_part_compares_a_generated_session_without_differences() {
    let v = bench_json(&["--only", "replay", "--replay-messages", "2000"]);
    let r = &v["replay"];
    assert_eq!(r["messages"], json!(2000), "{v}");
    assert_eq!(r["differences"], json!(0), "{v}");
    assert!(r["identical"].as_u64().unwrap() < 2000, "{v}");
    assert_eq!(v["errors"], json!([]), "{v}");
}

#[test]
fn record_part_records_every_forwarded_line() {
    let v = bench_json(&["--only", "record", "--iterations", "100"]);
    let r = &v["record"];
    let trips = r["round_trips"].as_u64().unwrap();
    assert!(trips >= 100, "{v}");
    assert_eq!(r["recorded"], json!([trips, trips]), "{v}");
    assert_eq!(v["errors"], json!([]), "{v}");
}

#[test]
fn guard_part_scans_a_generated_tree_and_finds_every_planted_violation() {
    let v = bench_json(&["--only", "guard", "--guard-files", "500"]);
    let g = &v["guard"];
    assert_eq!(g["files"], json!(500), "{v}");
    assert_eq!(g["scanned"], json!(500), "{v}");
    assert_eq!(g["violations"], json!(5), "{v}");
    assert_eq!(g["expected_violations"], json!(5), "{v}");
    // The planted violations and the comment-only candidates went through a grammar.
    assert_eq!(g["parsed"], json!(15), "{v}");
    assert_eq!(v["errors"], json!([]), "{v}");
}

/// The floods part runs the reference and the three load peers through whole runs and reports,
/// for each, the peak RSS it sampled, the bytes the run read and which verdicts were judged
/// (figures are not asserted; that every verdict is judged is).
#[test]
fn floods_part_reports_peak_rss_beside_bytes_read_and_judged_verdicts() {
    let v = bench_json(&[
        "--only",
        "floods",
        "--flood-requests",
        "2000",
        "--flood-line-bytes",
        "67108864",
    ]);
    let runs = v["floods"].as_array().unwrap_or_else(|| panic!("{v}"));
    let loads: Vec<&str> = runs.iter().filter_map(|r| r["load"].as_str()).collect();
    assert_eq!(
        loads,
        [
            "no load (the reference)",
            "notification flood",
            "request flood",
            "giant line"
        ],
        "{v}"
    );
    for r in runs {
        assert!(r["peak_kib"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["judged"], json!(4), "{r}");
        assert_eq!(r["unjudged"], json!([]), "{r}");
    }
    let giant = &runs[3];
    assert!(
        giant["read_bytes"].as_u64().unwrap() > 64 << 20,
        "the giant line was read: {giant}"
    );
    assert_eq!(v["errors"], json!([]), "{v}");
}
