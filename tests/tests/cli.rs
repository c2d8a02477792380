//! The command line contract (DESIGN.md §Command line): `parity run` on the bundled reference,
//! the JSON report, faulty peers, usage errors (exit 2), targets that cannot run (exit 3) and
//! `--filter`. Every test runs the real binary over real pipes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{fake_cmd, run, run_json};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const LEGACY: &str = "#2025-11-25";
const MODERN: &str = "#2026-07-28";

/// Parses `summary: 48 pass, 0 fail, 0 warn, 0 skip, 0 not-run, 0 timeout in 663 ms` into
/// (verdict, count) pairs.
fn summary_counts(stdout: &str) -> Vec<(String, usize)> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("summary: "))
        .unwrap_or_else(|| panic!("no summary line in:\n{stdout}"));
    let body = line
        .trim_start_matches("summary: ")
        .rsplit_once(" in ")
        .map(|(b, _)| b)
        .unwrap_or_else(|| panic!("summary line without duration: {line}"));
    body.split(", ")
        .map(|part| {
            let (n, v) = part
                .split_once(' ')
                .unwrap_or_else(|| panic!("bad summary part {part:?} in {line}"));
            (
                v.to_string(),
                n.parse()
                    .unwrap_or_else(|_| panic!("bad count {n:?} in {line}")),
            )
        })
        .collect()
}

#[test]
fn reference_run_passes_every_case_in_both_eras() {
    let r = run(&["run"]);
    r.assert_code(0);
    let verdicts = r.console_verdicts();
    assert!(!verdicts.is_empty(), "no case lines\n{r}");
    let by_design = |id: &str| parity_harness::engine::reference::skipped_by_design(id);
    let not_pass: Vec<_> = verdicts
        .iter()
        .filter(|(id, v)| *v != "PASS" && !(by_design(id) && *v == "SKIP"))
        .collect();
    assert!(not_pass.is_empty(), "cases not PASS: {not_pass:?}\n{r}");
    assert!(
        verdicts.keys().any(|id| id.ends_with(LEGACY)),
        "no {LEGACY} case\n{r}"
    );
    assert!(
        verdicts.keys().any(|id| id.ends_with(MODERN)),
        "no {MODERN} case\n{r}"
    );
    assert!(r.stdout.contains("era legacy: revision 2025-11-25"), "{r}");
    assert!(r.stdout.contains("era modern: revision 2026-07-28"), "{r}");
    let counts = summary_counts(&r.stdout);
    let names: Vec<&str> = counts.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(
        names,
        ["pass", "fail", "warn", "skip", "not-run", "timeout", "flaky"],
        "{r}"
    );
    let skipped = verdicts.values().filter(|v| *v == "SKIP").count();
    assert_eq!(
        counts[0].1,
        verdicts.len() - skipped,
        "summary pass count\n{r}"
    );
    assert_eq!(counts[3].1, skipped, "summary skip count\n{r}");
    assert!(
        counts[1..]
            .iter()
            .enumerate()
            .all(|(i, (_, n))| *n == 0 || i == 2),
        "non-pass counts in summary\n{r}"
    );
    // Every check that applies to both eras appears in both.
    let checks = |suffix: &str| -> BTreeSet<String> {
        verdicts
            .keys()
            .filter(|id| id.ends_with(suffix))
            .filter_map(|id| id.split('@').next().map(str::to_string))
            .collect()
    };
    for common_check in [
        "mcp.stdio.stdout-purity",
        "mcp.base.id-echo",
        "mcp.tools.input-schema",
    ] {
        assert!(checks(LEGACY).contains(common_check), "{common_check}\n{r}");
        assert!(checks(MODERN).contains(common_check), "{common_check}\n{r}");
    }
}

#[test]
fn json_report_has_every_field_per_case() {
    let r = run_json(&["run"]);
    r.assert_code(0);
    let report = r
        .report
        .as_ref()
        .unwrap_or_else(|| panic!("no report\n{r}"));
    assert_eq!(
        report.get("schema_version").and_then(Value::as_u64),
        Some(u64::from(
            parity_harness::reports::report::REPORT_SCHEMA_VERSION
        )),
        "schema_version\n{r}"
    );
    assert_eq!(report.get("exit_code").and_then(Value::as_i64), Some(0));
    assert_eq!(
        report.pointer("/eras/legacy").and_then(Value::as_str),
        Some("2025-11-25")
    );
    assert_eq!(
        report.pointer("/eras/modern").and_then(Value::as_str),
        Some("2026-07-28")
    );
    let cases = r.cases();
    // The JSON report and the console list exactly the same cases.
    let console: BTreeSet<String> = r.console_verdicts().into_keys().collect();
    let json_ids: BTreeSet<String> = cases.keys().cloned().collect();
    assert_eq!(console, json_ids, "console and JSON case ids differ\n{r}");
    // Every case passes, but for the reference's skips by design (2026-07-28 logging).
    let by_design = cases
        .keys()
        .filter(|id| parity_harness::engine::reference::skipped_by_design(id))
        .count();
    assert_eq!(
        report.pointer("/summary/pass").and_then(Value::as_u64),
        Some((cases.len() - by_design) as u64)
    );
    for (id, c) in cases {
        let field = |k: &str| {
            c.get(k)
                .unwrap_or_else(|| panic!("case {id} lacks `{k}`: {c}"))
        };
        let check = field("check").as_str().unwrap_or_default();
        let binding = field("binding").as_str().unwrap_or_default();
        let revision = field("revision").as_str().unwrap_or_default();
        assert_eq!(
            id,
            &format!("{check}@{binding}#{revision}"),
            "case id is check@binding#revision"
        );
        assert!(
            [
                "mcp-stdio",
                "mcp-http",
                "acp",
                "facade",
                "equivalence",
                "host"
            ]
            .contains(&binding),
            "{id}: binding {binding}"
        );
        let spec = field("spec").as_str().unwrap_or_default();
        if check.starts_with("dispatcher.") {
            assert!(
                spec.starts_with("docs/dispatcher.md#"),
                "{id}: spec {spec:?}"
            );
        } else if binding == "equivalence" {
            assert_eq!(spec, "docs/equivalence.md#the-outcome-model", "{id}");
        } else if binding == "facade" {
            assert!(
                spec.starts_with("docs/facade.md#rule-"),
                "{id}: spec {spec:?}"
            );
        } else if binding == "host" {
            assert!(spec.starts_with("docs/hygiene.md#"), "{id}: spec {spec:?}");
        } else {
            assert!(spec.starts_with("https://"), "{id}: spec {spec:?}");
        }
        if spec.starts_with("https://modelcontextprotocol.io/") {
            assert!(
                spec.contains(revision),
                "{id}: spec {spec} names no {revision}"
            );
        }
        let level = field("level").as_str().unwrap_or_default();
        assert!(
            ["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "robustness"].contains(&level),
            "{id}: level {level:?}"
        );
        let by_design = parity_harness::engine::reference::skipped_by_design(id);
        let want = if by_design { "skip" } else { "pass" };
        assert_eq!(field("verdict").as_str(), Some(want), "{id}");
        assert!(field("evidence").is_array(), "{id}: evidence is an array");
        assert!(
            field("duration_ms").is_u64(),
            "{id}: duration_ms is an integer"
        );
        assert!(
            !field("requirement").as_str().unwrap_or_default().is_empty(),
            "{id}: requirement"
        );
    }
}

/// Faulty peers and the check each must fail, with the revisions it fails at.
const FAULTS: &[(&str, &str, &[&str])] = &[
    (
        "stdout-banner",
        "mcp.stdio.stdout-purity",
        &[LEGACY, MODERN],
    ),
    ("jsonrpc-1.0", "mcp.base.jsonrpc-version", &[LEGACY, MODERN]),
    ("id-zero-null", "mcp.base.id-echo", &[LEGACY, MODERN]),
    (
        "null-input-schema",
        "mcp.tools.input-schema",
        &[LEGACY, MODERN],
    ),
    ("no-result-type", "mcp.modern.result-type", &[MODERN]),
];

#[test]
fn faulty_peers_exit_1_with_their_check_failing() {
    let mut problems = Vec::new();
    for (fault, check, revs) in FAULTS {
        let mcp = fake_cmd(fault);
        let r = run_json(&["run", "--mcp", &mcp]);
        if r.code != Some(1) {
            problems.push(format!("{fault}: exit {:?}, expected 1\n{r}", r.code));
            continue;
        }
        let console = r.console_verdicts();
        for rev in *revs {
            let id = format!("{check}@mcp-stdio{rev}");
            if r.verdict(&id) != Some("fail")
                || console.get(&id).map(String::as_str) != Some("FAIL")
            {
                problems.push(format!(
                    "{fault}: {id} is {:?} in JSON, {:?} on the console, expected fail\n{r}",
                    r.verdict(&id),
                    console.get(&id)
                ));
            }
        }
        assert_eq!(
            r.report
                .as_ref()
                .and_then(|v| v.get("exit_code"))
                .and_then(Value::as_i64),
            Some(1),
            "{fault}: the report's exit_code matches the process"
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--era", "bogus"], "--era"),
        (
            &["run", "--timeout-multiplier", "-1"],
            "--timeout-multiplier",
        ),
        (
            &["run", "--timeout-multiplier", "0"],
            "--timeout-multiplier",
        ),
        (
            &["run", "--timeout-multiplier", "NaN"],
            "--timeout-multiplier",
        ),
        (&["run", "--slow-call", "notjson"], "--slow-call"),
        (
            &["run", "--slow-call", r#"{"arguments":{}}"#],
            "--slow-call",
        ),
        (&["run", "--mcp", "node 'unterminated"], "--mcp"),
        (&["run", "--mcp", "node \"unterminated"], "--mcp"),
        (&["run", "--mcp", "   "], "--mcp"),
    ];
    let mut problems = Vec::new();
    for (args, flag) in cases {
        let r = run(args);
        if r.code != Some(2) || !r.stderr.contains(flag) {
            problems.push(format!("expected exit 2 and a message naming {flag}\n{r}"));
        }
        if r.stdout.contains("summary:") {
            problems.push(format!("a usage error ran checks\n{r}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn command_that_does_not_exist_could_not_run() {
    let r = run(&[
        "run",
        "--mcp",
        "/nonexistent/parity-tests-no-such-server --stdio",
    ]);
    r.assert_code(3);
    assert!(r.stderr.contains("did not start"), "{r}");
    assert!(r.stdout.contains("no check executed"), "{r}");
}

#[test]
fn silent_target_could_not_run_within_the_deadlines() {
    let mcp = fake_cmd("hang");
    let r = run_json(&["run", "--mcp", &mcp, "--timeout-multiplier", "0.2"]);
    r.assert_code(3);
    assert!(
        r.stderr
            .contains("answered neither initialize nor server/discover"),
        "{r}"
    );
    assert!(r.stdout.contains("no check executed"), "{r}");
    assert!(r.cases().is_empty(), "no case may be reported\n{r}");
    assert_eq!(
        r.report
            .as_ref()
            .and_then(|v| v.get("exit_code"))
            .and_then(Value::as_i64),
        Some(3)
    );
}

#[test]
fn filter_with_a_bare_check_id_runs_only_that_check() {
    let r = run_json(&["run", "--filter", "mcp.stdio.stdout-purity"]);
    r.assert_code(0);
    let ids: BTreeSet<String> = r.cases().keys().cloned().collect();
    let expected: BTreeSet<String> = [LEGACY, MODERN]
        .iter()
        .map(|rev| format!("mcp.stdio.stdout-purity@mcp-stdio{rev}"))
        .collect();
    assert_eq!(ids, expected, "{r}");
    assert_eq!(
        r.console_verdicts().into_keys().collect::<BTreeSet<_>>(),
        expected,
        "{r}"
    );
}

#[test]
fn filter_glob_and_era_narrow_the_plan() {
    let r = run_json(&["run", "--filter", "mcp.tools.*", "--era", "modern"]);
    r.assert_code(0);
    let cases = r.cases();
    assert!(!cases.is_empty(), "{r}");
    for id in cases.keys() {
        assert!(
            id.starts_with("mcp.tools.") && id.ends_with(MODERN),
            "{id} escaped the filter\n{r}"
        );
    }
}

#[test]
fn filter_matching_nothing_exits_3_and_says_so() {
    let r = run(&["run", "--filter", "no.such.check"]);
    r.assert_code(3);
    assert!(r.stdout.contains("no check executed"), "{r}");
    assert!(r.console_verdicts().is_empty(), "{r}");
}

/// Every JSON report matches the published schema `docs/report.schema.json`: a clean run of
/// every profile, a failing MCP run and a failing ACP run.
#[test]
fn json_reports_match_the_published_schema() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/report.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let banner = fake_cmd("stdout-banner");
    let bad_agent = fake_cmd("acp-bad-update");
    for args in [
        vec!["run", "--cases", "5", "--seed", "1"],
        vec!["run", "--mcp", banner.as_str()],
        vec!["run", "--acp", bad_agent.as_str()],
    ] {
        let r = run_json(&args);
        let report = r
            .report
            .as_ref()
            .unwrap_or_else(|| panic!("no report\n{r}"));
        let errors: Vec<String> = validator
            .iter_errors(report)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}\n{r}", errors.join("\n"));
    }
    // The schema is strict enough to notice a stray member.
    let mut r = run_json(&["run", "--profile", "acp"]).report.unwrap();
    r["extra"] = json!(1);
    assert!(!validator.is_valid(&r));
}
