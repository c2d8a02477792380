//! CI integration (docs/ci.md): JUnit, baselines, partitions, retries, fail-fast, annotations,
//! the HTML report through the command line, and `parity report merge`. Every run drives real
//! processes over real pipes: the bundled reference or a faulty peer of the zoo.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The interop directory, where `tests/interop/install.sh` puts the venv and the JUnit XSD.
fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("interop")
}

/// Whether CI demands that the installed validators be present (`.ci/run` sets it).
fn interop_required() -> bool {
    std::env::var("PARITY_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

/// Validates `xml` against the Surefire/Jenkins JUnit XSD with `xmlschema`, both installed by
/// `tests/interop/install.sh`. Returns false (after saying so) when they are not installed
/// and CI does not require them.
fn validate_junit(xml: &Path) -> bool {
    let python = interop_dir().join(".venv/bin/python");
    let xsd = interop_dir().join("junit-10.xsd");
    if !python.exists() || !xsd.exists() {
        assert!(
            !interop_required(),
            "the JUnit validator is missing: run tests/interop/install.sh"
        );
        eprintln!("note: JUnit XSD validation skipped (run tests/interop/install.sh to enable it)");
        return false;
    }
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2]); print('valid')",
        ])
        .arg(&xsd)
        .arg(xml)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the JUnit XSD rejects {}:\n{}\n{}",
        xml.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(xml).unwrap_or_default()
    );
    true
}

/// The counts of the console's summary line, by verdict name.
fn summary_counts(stdout: &str) -> std::collections::BTreeMap<String, u64> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("summary: "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    let body = line.trim_start_matches("summary: ");
    let body = body.split(" in ").next().unwrap();
    body.split(", ")
        .filter_map(|part| {
            let mut w = part.split_whitespace();
            let n = w.next()?.parse().ok()?;
            Some((w.next()?.to_string(), n))
        })
        .collect()
}

/// The integer value of attribute `name` in the first tag starting with `tag`.
fn attr(xml: &str, tag: &str, name: &str) -> u64 {
    let start = xml
        .find(tag)
        .unwrap_or_else(|| panic!("no {tag} in\n{xml}"));
    let head = &xml[start..start + xml[start..].find('>').unwrap()];
    let key = format!(" {name}=\"");
    let at = head.find(&key).map(|i| i + key.len());
    at.map(|i| head[i..].split('"').next().unwrap().parse().unwrap())
        .unwrap_or(0)
}

#[test]
fn junit_of_a_run_with_an_injected_failure_validates_and_matches_the_console() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let fault = fake_cmd("garbage-exits");
    let r = run_json(&["run", "--mcp", &fault, "--junit", junit.to_str().unwrap()]);
    r.assert_code(1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let counts = summary_counts(&r.stdout);
    let total: u64 = counts.values().sum();
    assert_eq!(attr(&xml, "<testsuites", "tests"), total, "{xml}");
    assert_eq!(
        attr(&xml, "<testsuites", "failures"),
        counts["fail"] + counts["timeout"],
        "{r}"
    );
    assert_eq!(
        counts["fail"], 2,
        "garbage-exits fails parse-error in both eras\n{r}"
    );
    // Skipped cases are counted per suite (the schema allows no total on the root).
    let skipped: u64 = xml
        .match_indices("<testsuite ")
        .map(|(i, _)| attr(&xml[i..], "<testsuite ", "skipped"))
        .sum();
    assert_eq!(skipped, counts["skip"], "{xml}");
    // A case that could not run is an error, never a skip.
    let errors: u64 = xml
        .match_indices("<testsuite ")
        .map(|(i, _)| attr(&xml[i..], "<testsuite ", "errors"))
        .sum();
    assert_eq!(errors, counts["not-run"], "{xml}");
    assert_eq!(xml.matches("<testcase ").count() as u64, total);
    // The failure carries the requirement, the expected and the actual.
    assert!(xml.contains(
        r#"<testcase name="mcp.base.parse-error@mcp-stdio#2025-11-25" classname="mcp-stdio#2025-11-25""#
    ));
    for part in [
        "requirement: ",
        "expected: MUST ",
        "actual: the unparsable line",
    ] {
        assert!(xml.contains(part), "{part} missing from\n{xml}");
    }
    validate_junit(&junit);
}

#[test]
fn junit_marks_flaky_expected_and_stale_and_still_validates() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("fired");
    let baseline = dir.path().join("baseline.yaml");
    std::fs::write(
        &baseline,
        "version: 1\nexpected-failures:\n  - case: mcp.base.ping@mcp-stdio#2025-11-25\n    reason: no longer broken\n",
    )
    .unwrap();
    let junit = dir.path().join("report.xml");
    let fault = fake_cmd("garbage-exits-once");
    let r = run_json_env(
        &[
            "run",
            "--mcp",
            &fault,
            "--filter",
            "mcp.base.parse-error",
            "--filter",
            "mcp.base.ping",
            "--retries",
            "2",
            "--baseline",
            baseline.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[("PARITY_FAKE_ONCE", marker.to_str().unwrap())],
    );
    // The stale entry fails the run; the flaky case does not.
    r.assert_code(1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<flakyFailure").count(), 1, "{xml}");
    assert!(
        xml.contains(r#"<testcase name="baseline:mcp.base.ping@mcp-stdio#2025-11-25""#),
        "{xml}"
    );
    validate_junit(&junit);
}

/// Reads the JSON report schema and validates a report against it.
fn assert_schema_valid(report: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/report.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn a_baselined_failure_exits_zero_and_is_reported_as_expected() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.yaml");
    std::fs::write(
        &baseline,
        "version: 1\nexpected-failures:\n  - case: mcp.base.parse-error@mcp-stdio\n    reason: the server exits on garbage (tracked upstream)\n",
    )
    .unwrap();
    let fault = fake_cmd("garbage-exits");
    let r = run_json(&[
        "run",
        "--mcp",
        &fault,
        "--baseline",
        baseline.to_str().unwrap(),
    ]);
    r.assert_code(0);
    let report = r.report.as_ref().unwrap();
    assert_schema_valid(report);
    for (id, verdict) in r.verdicts_of("mcp.base.parse-error") {
        assert_eq!(verdict, "fail", "{id}\n{r}");
        assert_eq!(
            r.cases()[&id]["expected"]["entry"],
            "mcp.base.parse-error@mcp-stdio",
            "{r}"
        );
    }
    assert_eq!(report["summary"]["expected"], 2);
    assert_eq!(report["exit_code"], 0);
    assert!(
        r.stdout
            .contains("XFAIL    mcp.base.parse-error@mcp-stdio#2025-11-25"),
        "{r}"
    );
    assert!(r.stdout.contains("(2 expected by the baseline)"), "{r}");
    // Without the baseline the same run fails.
    run(&["run", "--mcp", &fault, "--quiet"]).assert_code(1);
}

#[test]
fn a_fixed_check_still_in_the_baseline_fails_the_run_as_stale() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.yaml");
    std::fs::write(
        &baseline,
        "version: 1\nexpected-failures:\n  - case: mcp.base.ping@mcp-stdio#2025-11-25\n    reason: used to hang\n  - case: acp.base.unknown-method\n    reason: not run here\n",
    )
    .unwrap();
    let r = run_json(&[
        "run",
        "--profile",
        "mcp",
        "--filter",
        "mcp.base.ping",
        "--baseline",
        baseline.to_str().unwrap(),
    ]);
    r.assert_code(1);
    assert!(
        r.stdout
            .contains("STALE    baseline entry `mcp.base.ping@mcp-stdio#2025-11-25` (line 3)"),
        "{r}"
    );
    let report = r.report.as_ref().unwrap();
    assert_schema_valid(report);
    let stale = report["stale"].as_array().unwrap();
    // The ACP entry matched no case of this run: neither expected nor stale.
    assert_eq!(stale.len(), 1, "{r}");
    assert_eq!(stale[0]["entry"], "mcp.base.ping@mcp-stdio#2025-11-25");
    assert_eq!(stale[0]["line"], 3);
    assert_eq!(report["exit_code"], 1);
    // A whole run judges a check-wide entry too.
    std::fs::write(
        &baseline,
        "version: 1\nexpected-failures:\n  - case: mcp.base.ping\n    reason: used to hang\n",
    )
    .unwrap();
    let r = run(&[
        "run",
        "--profile",
        "mcp",
        "--quiet",
        "--baseline",
        baseline.to_str().unwrap(),
    ]);
    r.assert_code(1);
    assert!(
        r.stdout
            .contains("STALE    baseline entry `mcp.base.ping` (line 3)"),
        "{r}"
    );
}

#[test]
fn bad_baselines_are_refused_naming_file_line_and_entry() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "unknown-check",
            "version: 1\nexpected-failures:\n  - case: mcp.no-such-check\n    reason: x\n",
            vec![":3", "mcp.no-such-check"],
        ),
        (
            "duplicate",
            "version: 1\nexpected-failures:\n  - case: mcp.base.ping\n    reason: x\n  - case: mcp.base.ping\n    reason: y\n",
            vec![":5", "mcp.base.ping", "duplicate"],
        ),
        (
            "no-reason",
            "version: 1\nexpected-failures:\n  - case: mcp.base.ping\n",
            vec![":3", "mcp.base.ping", "reason"],
        ),
        (
            "not-yaml",
            "version: 1\nexpected-failures: [\n",
            vec!["not-yaml.yaml"],
        ),
    ];
    for (name, text, needles) in cases {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&path, text).unwrap();
        let r = run(&["run", "--baseline", path.to_str().unwrap()]);
        r.assert_code(2);
        assert!(r.stderr.contains(&format!("{name}.yaml")), "{name}\n{r}");
        for n in needles {
            assert!(r.stderr.contains(n), "{name}: `{n}` missing\n{r}");
        }
    }
}

#[test]
fn baseline_write_turns_a_report_into_a_baseline_that_makes_the_run_pass() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let baseline = dir.path().join("baseline.yaml");
    let fault = fake_cmd("garbage-exits");
    run(&[
        "run",
        "--mcp",
        &fault,
        "--quiet",
        "--json",
        report.to_str().unwrap(),
    ])
    .assert_code(1);
    run(&[
        "baseline",
        "write",
        "--from",
        report.to_str().unwrap(),
        "--out",
        baseline.to_str().unwrap(),
    ])
    .assert_code(0);
    let text = std::fs::read_to_string(&baseline).unwrap();
    assert!(
        text.contains("mcp.base.parse-error@mcp-stdio#2025-11-25"),
        "{text}"
    );
    let r = run(&[
        "run",
        "--mcp",
        &fault,
        "--quiet",
        "--baseline",
        baseline.to_str().unwrap(),
    ]);
    r.assert_code(0);
    // A report that does not parse is refused with its file and line.
    std::fs::write(&report, "{\n  \"schema_version\": 2,\n  oops\n}\n").unwrap();
    let r = run(&["baseline", "write", "--from", report.to_str().unwrap()]);
    r.assert_code(2);
    assert!(r.stderr.contains("report.json:3"), "{r}");
}

/// The case ids a run's JSON report lists.
fn ids(r: &Run) -> BTreeSet<String> {
    r.cases().keys().cloned().collect()
}

#[test]
fn partitions_together_run_every_case_exactly_once() {
    let base = ["run", "--cases", "2", "--seed", "7"];
    let full = run_json(&base);
    full.assert_code(0);
    let all = ids(&full);
    assert!(all.len() > 60, "{full}");
    for kind in ["hash", "count"] {
        let mut seen: Vec<String> = Vec::new();
        for k in 1..=3 {
            let p = format!("{kind}:{k}/3");
            let mut args = base.to_vec();
            args.extend(["--partition", p.as_str(), "--quiet"]);
            let r = run_json(&args);
            r.assert_code(0);
            assert_eq!(r.report.as_ref().unwrap()["partition"], p.as_str());
            let shard = ids(&r);
            assert!(!shard.is_empty(), "{kind} shard {k} is empty\n{r}");
            seen.extend(shard);
        }
        let unique: BTreeSet<String> = seen.iter().cloned().collect();
        assert_eq!(unique.len(), seen.len(), "{kind}: a case ran in two shards");
        assert_eq!(unique, all, "{kind}: the shards differ from the full run");
    }
}

#[test]
fn an_empty_shard_says_so_and_exits_zero_while_an_empty_selection_exits_three() {
    let one = "mcp.base.ping@mcp-stdio#2025-11-25";
    let mut empty_seen = false;
    for k in 1..=2 {
        let p = format!("hash:{k}/2");
        let r = run_json(&[
            "run",
            "--profile",
            "mcp",
            "--filter",
            one,
            "--partition",
            &p,
        ]);
        r.assert_code(0);
        if r.cases().is_empty() {
            empty_seen = true;
            assert!(r.stderr.contains("selects no case"), "{r}");
        } else {
            assert_eq!(r.verdict(one), Some("pass"), "{r}");
        }
    }
    assert!(empty_seen, "one of the two shards must be empty");
    run(&["run", "--filter", "no.such.check"]).assert_code(3);
    // A filter that matches nothing anywhere is no empty shard: every shard exits 3.
    for k in ["1", "2"] {
        let p = format!("hash:{k}/2");
        run(&["run", "--filter", "no.such.check", "--partition", &p]).assert_code(3);
    }
    let r = run(&["run", "--partition", "4/3"]);
    r.assert_code(2);
    assert!(r.stderr.contains("--partition"), "{r}");
}

#[test]
fn a_case_that_passes_on_retry_is_flaky_never_a_plain_pass() {
    let dir = tempfile::tempdir().unwrap();
    let fault = fake_cmd("garbage-exits-once");
    let args = |m: &str| {
        vec![
            "run".to_string(),
            "--mcp".into(),
            fault.clone(),
            "--filter".into(),
            "mcp.base.parse-error".into(),
            "--jobs".into(),
            "1".into(),
        ]
        .into_iter()
        .chain(if m.is_empty() {
            vec![]
        } else {
            vec!["--retries".to_string(), m.to_string()]
        })
        .collect::<Vec<_>>()
    };
    // Without retries the first attempt's failure stands.
    let marker = dir.path().join("a");
    let a = args("");
    let r = run_json_env(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &[("PARITY_FAKE_ONCE", marker.to_str().unwrap())],
    );
    r.assert_code(1);
    // With a retry it is flaky: exit 0, verdict flaky, two attempts, the first failure kept.
    let marker = dir.path().join("b");
    let a = args("1");
    let r = run_json_env(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &[("PARITY_FAKE_ONCE", marker.to_str().unwrap())],
    );
    r.assert_code(0);
    let flaky: Vec<(String, String)> = r
        .verdicts_of("mcp.base.parse-error")
        .into_iter()
        .filter(|(_, v)| v == "flaky")
        .collect();
    assert_eq!(flaky.len(), 1, "{r}");
    let case = &r.cases()[&flaky[0].0];
    assert_eq!(case["attempts"], 2);
    assert!(case["message"]
        .as_str()
        .unwrap()
        .contains("attempt 1 was fail"));
    assert_eq!(r.report.as_ref().unwrap()["summary"]["flaky"], 1);
    assert!(r.stdout.contains("FLAKY    mcp.base.parse-error"), "{r}");
    assert_schema_valid(r.report.as_ref().unwrap());
}

#[test]
fn fail_fast_stops_starting_cases_after_the_first_failure() {
    let fault = fake_cmd("garbage-exits");
    let r = run_json(&[
        "run",
        "--mcp",
        &fault,
        "--profile",
        "mcp",
        "--fail-fast",
        "--jobs",
        "1",
    ]);
    r.assert_code(1);
    assert!(
        r.stdout
            .contains("--fail-fast: stopped after mcp.base.parse-error@"),
        "{r}"
    );
    let not_started = r
        .cases()
        .values()
        .filter(|c| {
            c["verdict"] == "not-run" && c["message"].as_str().unwrap_or("").contains("--fail-fast")
        })
        .count();
    assert!(not_started > 5, "{r}");
    // Later profiles do not start.
    let r = run_json(&[
        "run",
        "--mcp",
        &fault,
        "--acp",
        &format!("{} reference acp", parity_str()),
        "--fail-fast",
        "--jobs",
        "1",
    ]);
    r.assert_code(1);
    assert!(r.cases().keys().all(|id| !id.contains("@acp#")), "{r}");
    let notes = r.report.as_ref().unwrap()["notes"].to_string();
    assert!(
        notes.contains("profile acp not started: --fail-fast"),
        "{r}"
    );
    // Without it, every case runs.
    let r = run_json(&["run", "--mcp", &fault, "--profile", "mcp", "--jobs", "1"]);
    assert!(r
        .cases()
        .values()
        .all(|c| !c["message"].as_str().unwrap_or("").contains("--fail-fast")));
}

#[test]
fn github_actions_get_annotations_and_plain_progress_lines() {
    let fault = fake_cmd("garbage-exits");
    let r = run_env(
        &["run", "--mcp", &fault, "--profile", "mcp"],
        &[("GITHUB_ACTIONS", "true")],
    );
    r.assert_code(1);
    assert!(
        r.stdout.contains(
            "::error title=parity mcp.base.parse-error@mcp-stdio#2025-11-25::fail: the unparsable line"
        ),
        "{r}"
    );
    // Not a terminal (a CI log, where stdout and stderr interleave): each case appears once,
    // in the report on stdout, and stderr names none.
    for id in r.console_verdicts().keys() {
        assert_eq!(
            r.stdout.matches(&format!(" {id} (")).count(),
            1,
            "{id}\n{r}"
        );
        assert!(!r.stderr.contains(id.as_str()), "{id} on stderr\n{r}");
    }
    assert!(!r.console_verdicts().is_empty(), "{r}");
    let r = run_env(&["run", "--profile", "mcp", "--quiet"], &[]);
    r.assert_code(0);
    assert!(!r.stderr.contains("parity: ["), "{r}");
    assert!(
        !r.stdout.contains("PASS "),
        "--quiet lists no passing case\n{r}"
    );
    assert!(r.stdout.contains("summary: "), "{r}");
}

#[test]
fn html_reports_from_a_run_and_merged_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, html, merged) = (
        dir.path().join("a.json"),
        dir.path().join("b.json"),
        dir.path().join("run.html"),
        dir.path().join("merged.html"),
    );
    let fault = fake_cmd("garbage-exits");
    run(&[
        "run",
        "--profile",
        "mcp",
        "--quiet",
        "--json",
        a.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ])
    .assert_code(0);
    run(&[
        "run",
        "--mcp",
        &fault,
        "--quiet",
        "--json",
        b.to_str().unwrap(),
    ])
    .assert_code(1);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("mcp.base.parse-error"));
    run(&[
        "report",
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--html",
        merged.to_str().unwrap(),
    ])
    .assert_code(0);
    let page = std::fs::read_to_string(&merged).unwrap();
    assert!(
        page.contains("parity reference"),
        "first implementation missing"
    );
    assert!(
        page.contains("fake garbage-exits"),
        "second implementation missing"
    );
    assert!(
        !page.contains("src=\"http"),
        "the page must not load anything"
    );
    // A report with a case id twice is refused naming the line.
    let text = std::fs::read_to_string(&b).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    let id = "mcp.base.ping@mcp-stdio#2025-11-25";
    let case = serde_json::to_string(&report["cases"][id]).unwrap();
    let dup = text.replacen(
        "\"cases\": {",
        &format!("\"cases\": {{\n    \"{id}\": {case},"),
        1,
    );
    std::fs::write(&b, dup).unwrap();
    let r = run(&[
        "report",
        "merge",
        b.to_str().unwrap(),
        "--html",
        merged.to_str().unwrap(),
    ]);
    r.assert_code(2);
    assert!(r.stderr.contains("b.json:"), "{r}");
    assert!(
        r.stderr.contains("mcp.base.ping@mcp-stdio#2025-11-25"),
        "{r}"
    );
}

#[test]
fn a_baseline_written_from_a_whole_run_holds_in_every_shard() {
    // Monitors judge the traffic of their own shard only, so a shard may see a monitor's
    // failure vanish; its exact entry is then noted, never reported stale.
    let dir = tempfile::tempdir().unwrap();
    let (report, baseline) = (dir.path().join("full.json"), dir.path().join("b.yaml"));
    let fault = fake_cmd("id-zero-null");
    run(&[
        "run",
        "--mcp",
        &fault,
        "--quiet",
        "--json",
        report.to_str().unwrap(),
    ])
    .assert_code(1);
    run(&[
        "baseline",
        "write",
        "--from",
        report.to_str().unwrap(),
        "--out",
        baseline.to_str().unwrap(),
    ])
    .assert_code(0);
    for k in 1..=3 {
        let p = format!("hash:{k}/3");
        let r = run_json(&[
            "run",
            "--mcp",
            &fault,
            "--partition",
            &p,
            "--baseline",
            baseline.to_str().unwrap(),
        ]);
        r.assert_code(0);
        assert!(
            r.report.as_ref().unwrap()["stale"]
                .as_array()
                .unwrap()
                .is_empty(),
            "{r}"
        );
    }
}

#[test]
fn a_narrowed_run_does_not_call_a_wide_entry_stale() {
    // `discover-no-hints` breaks message-schema only in the modern era: a legacy-only run
    // sees just the passing case of the check-wide entry.
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("b.yaml");
    std::fs::write(
        &baseline,
        "version: 1\nexpected-failures:\n  - case: mcp.base.message-schema\n    reason: no cache hints\n  - case: mcp.modern.discover\n    reason: no cache hints\n  - case: mcp.modern.cache-hints\n    reason: no cache hints\n",
    )
    .unwrap();
    let fault = fake_cmd("discover-no-hints");
    let b = baseline.to_str().unwrap();
    run(&["run", "--mcp", &fault, "--baseline", b, "--quiet"]).assert_code(0);
    let r = run_json(&["run", "--mcp", &fault, "--era", "legacy", "--baseline", b]);
    r.assert_code(0);
    let notes = r.report.as_ref().unwrap()["notes"].to_string();
    assert!(notes.contains("mcp.base.message-schema"), "{r}");
}

#[test]
fn outputs_never_overwrite_each_other_or_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("r.out");
    let s = same.to_str().unwrap();
    let r = run(&["run", "--json", s, "--junit", s]);
    r.assert_code(2);
    assert!(
        r.stderr.contains("--json and --junit name the same file"),
        "{r}"
    );
    std::fs::write(&same, "{}").unwrap();
    let r = run(&["baseline", "write", "--from", s, "--out", s]);
    r.assert_code(2);
    assert_eq!(std::fs::read_to_string(&same).unwrap(), "{}");
    run(&["run", "--retries", "101"]).assert_code(2);
}

#[test]
fn a_server_that_cannot_start_is_explained_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let crash = "sh -c 'echo Error: Cannot find module dist/index.js >&2; exit 1'";
    let r = run_env(
        &[
            "run",
            "--mcp",
            crash,
            "--json",
            json.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[("GITHUB_ACTIONS", "true")],
    );
    r.assert_code(3);
    // The server's own words and exit status, on stderr and as an annotation.
    assert!(
        r.stderr
            .contains("its stderr: Error: Cannot find module dist/index.js"),
        "{r}"
    );
    assert!(r.stderr.contains("it exited: exit status: 1"), "{r}");
    assert!(
        r.stdout.contains("::error title=parity could not run::"),
        "{r}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["exit_code"], 3);
    assert!(report["notes"].to_string().contains("Cannot find module"));
    assert_schema_valid(&report);
    // JUnit never shows such a run as zero tests, zero failures.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(attr(&xml, "<testsuites", "errors"), 1, "{xml}");
    assert!(
        xml.contains(r#"<testcase name="parity:could-not-run#1">"#),
        "{xml}"
    );
    validate_junit(&junit);
    // A directory where a report file should go is refused before anything runs.
    let r = run(&["run", "--json", dir.path().to_str().unwrap()]);
    r.assert_code(2);
    assert!(r.stderr.contains("is a directory"), "{r}");
}

#[test]
fn baseline_write_combines_shards_keeps_reasons_and_refuses_runs_that_did_not_happen() {
    let dir = tempfile::tempdir().unwrap();
    let fault = fake_cmd("garbage-exits");
    let mut shards = Vec::new();
    for k in 1..=2 {
        let path = dir.path().join(format!("s{k}.json"));
        let p = format!("count:{k}/2");
        let code = run(&[
            "run",
            "--mcp",
            &fault,
            "--partition",
            &p,
            "-q",
            "--json",
            path.to_str().unwrap(),
        ])
        .code;
        assert!(matches!(code, Some(0 | 1)));
        shards.push(path);
    }
    let out = dir.path().join("new/.parity/baseline.yaml");
    let (s1, s2, o) = (
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        out.to_str().unwrap(),
    );
    // One shard alone: a note says the baseline is partial.
    let r = run(&["baseline", "write", "--from", s1]);
    r.assert_code(0);
    assert!(r.stderr.contains("1 of the 2 shards"), "{r}");
    // Both shards: every failure, into a directory that did not exist.
    run(&["baseline", "write", "--from", s1, "--from", s2, "--out", o]).assert_code(0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("  - case: ").count(), 2, "{text}");
    // A hand-written reason survives a rewrite.
    let edited = text.replacen(
        "reason: \"failed in",
        "reason: \"upstream issue 12; failed in",
        1,
    );
    std::fs::write(&out, &edited).unwrap();
    run(&["baseline", "write", "--from", s1, "--from", s2, "--out", o]).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&out)
            .unwrap()
            .matches("upstream issue 12")
            .count(),
        1
    );
    // The report of a run that could not happen says nothing about failures.
    let dead = dir.path().join("dead.json");
    run(&["run", "--mcp", "false", "--json", dead.to_str().unwrap()]).assert_code(3);
    let r = run(&["baseline", "write", "--from", dead.to_str().unwrap()]);
    r.assert_code(2);
    assert!(r.stderr.contains("could not happen"), "{r}");
}

/// A user scenario that fails against the reference: `ping` answers `{}`, never `pong`.
const FAILING_USER_SCENARIO: &str = r#"version: 1
id: mycalc.divide
description: ping answers pong (it does not, so this case fails).
spec: basic/utilities/ping
level: MUST
eras: [legacy]
steps:
  - send: '{"jsonrpc":"2.0","id":"p-1","method":"ping"}'
  - expect: {id: p-1, result: {pong: true}}
"#;

#[test]
fn baselines_and_merges_of_reports_with_user_scenarios_need_no_flags() {
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("divide.yaml"), FAILING_USER_SCENARIO).unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for report in [&a, &b] {
        let r = run(&[
            "run",
            "--profile",
            "mcp",
            "--scenarios",
            scen.to_str().unwrap(),
            "--filter",
            "mycalc.*",
            "--quiet",
            "--json",
            report.to_str().unwrap(),
        ]);
        r.assert_code(1);
    }
    let case = "mycalc.divide@mcp-stdio#2025-11-25";
    // A baseline from the report alone, no --scenarios: it lists the user's case.
    let baseline = dir.path().join("baseline.yaml");
    let w = |from: &Path| {
        run(&[
            "baseline",
            "write",
            "--from",
            from.to_str().unwrap(),
            "--out",
            baseline.to_str().unwrap(),
        ])
    };
    w(&a).assert_code(0);
    let text = std::fs::read_to_string(&baseline).unwrap();
    assert!(text.contains(case), "{text}");
    // Rewriting it keeps a hand-written reason, still without --scenarios.
    std::fs::write(
        &baseline,
        text.replace(&format!("failed in {}", a.display()), "known: issue 7"),
    )
    .unwrap();
    w(&b).assert_code(0);
    let text = std::fs::read_to_string(&baseline).unwrap();
    assert!(text.contains("known: issue 7"), "{text}");
    // A merge of two such reports, no --scenarios.
    let html = dir.path().join("merged.html");
    let r = run(&[
        "report",
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    r.assert_code(0);
    assert!(std::fs::read_to_string(&html).unwrap().contains(case));
    // A case that does not describe its check is still refused, naming the flag that helps.
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    v["cases"][case]
        .as_object_mut()
        .unwrap()
        .remove("requirement");
    std::fs::write(&a, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let r = run(&["baseline", "write", "--from", a.to_str().unwrap()]);
    r.assert_code(2);
    assert!(
        r.stderr.contains("unknown check `mycalc.divide`") && r.stderr.contains("--scenarios DIR"),
        "{r}"
    );
    // ... and accepted again with that flag.
    let r = run(&[
        "baseline",
        "write",
        "--from",
        a.to_str().unwrap(),
        "--scenarios",
        scen.to_str().unwrap(),
    ]);
    r.assert_code(0);
}

#[test]
fn verdict_words_are_coloured_only_when_asked_or_on_a_terminal() {
    let base = ["run", "--profile", "mcp", "--filter", "mcp.base.ping"];
    let with = |extra: &[&str], env: &[(&str, &str)]| {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let r = run_env(&args, env);
        r.assert_code(0);
        r
    };
    // Forced: the verdict word carries an ANSI colour (green for a pass), even into a pipe and
    // despite NO_COLOR; the rest of the line is plain.
    let r = with(&["--color", "always"], &[("NO_COLOR", "1")]);
    assert!(
        r.stdout
            .contains("\x1b[32mPASS\x1b[0m     mcp.base.ping@mcp-stdio#"),
        "{r}"
    );
    // Never, and auto into a pipe (with or without NO_COLOR): no escape at all.
    for (extra, env) in [
        (&["--color", "never"][..], &[][..]),
        (&[][..], &[("NO_COLOR", "1")][..]),
        (&["--color", "auto"][..], &[][..]),
    ] {
        let r = with(extra, env);
        assert!(!r.stdout.contains('\x1b'), "{r}");
        assert!(
            r.stdout.contains("PASS     mcp.base.ping@mcp-stdio#"),
            "{r}"
        );
    }
    let r = run(&["run", "--color", "sometimes"]);
    r.assert_code(2);
}

#[test]
fn report_files_go_into_directories_created_on_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/c");
    let (json, junit, html) = (
        nested.join("report.json"),
        dir.path().join("x/junit.xml"),
        dir.path().join("y/z/report.html"),
    );
    let r = run(&[
        "run",
        "--profile",
        "mcp",
        "--filter",
        "mcp.base.ping",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    r.assert_code(0);
    assert!(json.is_file() && junit.is_file() && html.is_file(), "{r}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    // Every suite has its time and the run's start, to the second in UTC.
    let suite = &xml[xml.find("<testsuite ").unwrap()..];
    let suite = &suite[..suite.find('>').unwrap()];
    assert!(suite.contains(" time=\""), "{suite}");
    let ts = suite.split(" timestamp=\"").nth(1).unwrap();
    let ts = &ts[..ts.find('"').unwrap()];
    assert_eq!(ts.len(), 19, "{ts}");
    assert!(ts.starts_with("20") && ts.as_bytes()[10] == b'T', "{ts}");
    validate_junit(&junit);
    // `report merge` creates its page's directory too.
    let merged = dir.path().join("m/n/merged.html");
    let r = run(&[
        "report",
        "merge",
        json.to_str().unwrap(),
        "--html",
        merged.to_str().unwrap(),
    ]);
    r.assert_code(0);
    assert!(merged.is_file(), "{r}");
    // A directory that cannot be created (a file is in the way) stops the run first.
    let r = run(&["run", "--json", json.join("r.json").to_str().unwrap()]);
    r.assert_code(2);
    assert!(
        r.stderr.contains("--json: cannot create the directory"),
        "{r}"
    );
}

#[test]
fn run_keys_of_the_target_file_apply_and_flags_override_them() {
    let dir = tempfile::tempdir().unwrap();
    let ci = dir.path().join("ci");
    std::fs::create_dir_all(ci.join("scen")).unwrap();
    std::fs::write(
        ci.join("scen/ping.yaml"),
        "version: 1\nid: user.ci-ping\ndescription: ping answers\nspec: basic/utilities/ping\nlevel: MUST\neras: [legacy]\nsteps:\n  - send: '{\"jsonrpc\":\"2.0\",\"id\":\"p-1\",\"method\":\"ping\"}'\n  - expect: {id: p-1, result: {}}\n",
    )
    .unwrap();
    std::fs::write(
        ci.join("baseline.yaml"),
        "version: 1\nexpected-failures: []\n",
    )
    .unwrap();
    std::fs::create_dir_all(ci.join("empty")).unwrap();
    std::fs::write(ci.join("other.yaml"), "version: 1\nexpected-failures: []\n").unwrap();
    let target = ci.join("parity.toml");
    std::fs::write(
        &target,
        format!(
            "version = 1\nprofiles = [\"mcp\"]\n[surfaces.mcp]\ncommand = \"{} reference mcp\"\nreference = true\n[run]\nscenarios = [\"scen\"]\nsnapshots = \"snaps\"\nbaseline = \"baseline.yaml\"\njobs = 2\ntimeout_multiplier = 1.5\n",
            parity_str()
        ),
    )
    .unwrap();
    let t = target.to_str().unwrap();
    // The file's keys, relative to its directory.
    let r = run_json(&[
        "run",
        "--target",
        t,
        "--filter",
        "mcp.base.ping",
        "--filter",
        "user.ci-ping",
        "-q",
    ]);
    r.assert_code(0);
    assert!(
        r.cases().keys().any(|id| id.starts_with("user.ci-ping@")),
        "run.scenarios is used\n{r}"
    );
    let report = r.report.as_ref().unwrap();
    assert_eq!(
        report["baseline"],
        ci.join("baseline.yaml").to_str().unwrap(),
        "{r}"
    );
    assert!(ci.join("snaps").is_dir(), "run.snapshots is used\n{r}");
    // Flags win.
    let other = ci.join("other.yaml");
    let r = run_json(&[
        "run",
        "--target",
        t,
        "--filter",
        "mcp.base.ping",
        "-q",
        "--baseline",
        other.to_str().unwrap(),
        "--jobs",
        "1",
        "--scenarios",
        ci.join("empty").to_str().unwrap(),
    ]);
    r.assert_code(0);
    // --scenarios replaces the file's list.
    assert!(
        !r.cases().keys().any(|id| id.starts_with("user.ci-ping@")),
        "{r}"
    );
    assert_eq!(
        r.report.as_ref().unwrap()["baseline"],
        other.to_str().unwrap(),
        "{r}"
    );
    // A bad value names the file, line and key, and exits 2 before anything runs.
    std::fs::write(
        &target,
        "version = 1\n[surfaces.mcp]\ncommand = \"x\"\n[run]\njobs = 0\n",
    )
    .unwrap();
    let r = run(&["run", "--target", t]);
    r.assert_code(2);
    assert!(
        r.stderr
            .contains(&format!("{t}:5:8: run.jobs: 0 is not a number of cases")),
        "{r}"
    );
    // An unknown key is refused like anywhere else in the file.
    std::fs::write(
        &target,
        "version = 1\n[surfaces.mcp]\ncommand = \"x\"\n[run]\nretries = 2\n",
    )
    .unwrap();
    let r = run(&["run", "--target", t]);
    r.assert_code(2);
    assert!(
        r.stderr
            .contains(&format!("{t}:5:1: run.retries: unknown field `retries`")),
        "{r}"
    );
    // --accept needs a snapshot directory from somewhere.
    let r = run(&["run", "--accept"]);
    r.assert_code(2);
    assert!(
        r.stderr.contains("--accept needs a snapshot directory"),
        "{r}"
    );
}

#[test]
fn report_summary_lists_the_failures_of_a_real_report_in_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let fault = fake_cmd("garbage-exits");
    let r = run(&[
        "run",
        "--mcp",
        &fault,
        "--profile",
        "mcp",
        "--filter",
        "mcp.base.parse-error",
        "--filter",
        "mcp.base.ping",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    r.assert_code(1);
    let s = run(&[
        "report",
        "summary",
        json.to_str().unwrap(),
        "--html-url",
        "https://example.test/artifacts/7",
    ]);
    s.assert_code(0);
    assert!(s.stdout.starts_with("### ❌ parity: "), "{s}");
    assert!(
        s.stdout
            .contains("- `mcp.base.parse-error@mcp-stdio#2025-11-25` **fail**: "),
        "{s}"
    );
    assert!(s.stdout.contains("  > MUST "), "{s}");
    assert!(
        !s.stdout.contains("`mcp.base.ping@"),
        "a pass is not listed\n{s}"
    );
    assert!(
        s.stdout
            .contains("[HTML report](https://example.test/artifacts/7)"),
        "{s}"
    );
    // An unreadable report is a usage error naming the file.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let s = run(&["report", "summary", bad.to_str().unwrap()]);
    s.assert_code(2);
    assert!(s.stderr.contains("bad.json"), "{s}");
}
