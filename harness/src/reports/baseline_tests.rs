//! Unit tests of `baseline`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::engine::run::{CaseKind, CaseResult};

const KNOWN: &[&str] = &[
    "mcp.base.batch-rejected",
    "mcp.base.parse-error",
    "mcp.lifecycle.x",
    "acp.init.version-negotiation",
    "equivalence.generated",
];

/// [`known`] with parity's own bindings, as a run reads case ids.
fn k() -> crate::reports::baseline::Known<'static> {
    static B: std::sync::OnceLock<Vec<(&'static str, Vec<&'static str>)>> =
        std::sync::OnceLock::new();
    crate::reports::baseline::Known {
        check: &known,
        bindings: B.get_or_init(|| crate::profiles::builtin().bindings()),
    }
}

fn known(c: &str) -> bool {
    KNOWN
        .iter()
        .any(|k| c == *k || c.strip_prefix(k).is_some_and(|r| r.starts_with('.')))
}

fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.yaml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn load_text(text: &str) -> Result<Baseline, BaselineError> {
    let (_dir, path) = write(text);
    load(&path, &k())
}

/// The error's line, entry and message (file checked separately).
fn err(text: &str) -> BaselineError {
    let e = load_text(text).unwrap_err();
    assert!(e.file.ends_with("baseline.yaml"), "{e}");
    e
}

#[test]
fn invalid_utf8_names_the_line_column_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baseline.yaml");
    std::fs::write(
            &path,
            b"version: 1\nexpected-failures:\n  - case: \"mcp.base.parse-error\"\n    reason: \"x\xff\"\n",
        )
        .unwrap();
    let e = load(&path, &k()).unwrap_err();
    assert_eq!(
        (e.line, e.col, e.key.as_deref()),
        (4, 15, Some("reason")),
        "{e}"
    );
    let shown = e.to_string();
    assert!(
        shown.contains("baseline.yaml:4:15: reason: not valid UTF-8"),
        "{shown}"
    );
}

#[test]
fn a_yaml_syntax_error_has_a_column_and_a_key() {
    let e = err("version: 1\nexpected-failures:\n  - case: [\n");
    assert!(e.line > 0 && e.col > 0, "{e}");
    assert!(e.key.is_some(), "{e}");
}

#[test]
fn a_huge_pattern_is_clipped_in_the_message() {
    let pattern = format!("mcp.{}", "z".repeat(1_000_000));
    let e = err(&format!(
        "version: 1\nexpected-failures:\n  - case: \"{pattern}\"\n    reason: x\n"
    ));
    let shown = e.to_string();
    assert!(
        shown.len() < 4 * crate::base::textfile::MAX_MESSAGE,
        "{}",
        shown.len()
    );
    assert!(shown.contains("more bytes)"), "{shown}");
}

const GOOD: &str = "\
# parity baseline: failures this implementation is known to have.
version: 1
expected-failures:
  - case: mcp.base.batch-rejected            # a check: every case of it
    reason: the SDK drops batches silently (upstream issue 123)
  - case: mcp.base.parse-error@mcp-stdio
    reason: answers -32600
  - reason: reason first
    case: mcp.lifecycle.x@mcp-stdio#2025-11-25
  - case: \"acp.*@acp#v?\"
    reason: globbed
";

#[test]
fn loads_entries_with_their_lines() {
    let b = load_text(GOOD).unwrap();
    let got: Vec<(&str, &str, usize)> = b
        .entries
        .iter()
        .map(|e| (e.case.as_str(), e.reason.as_str(), e.line))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "mcp.base.batch-rejected",
                "the SDK drops batches silently (upstream issue 123)",
                4
            ),
            ("mcp.base.parse-error@mcp-stdio", "answers -32600", 6),
            ("mcp.lifecycle.x@mcp-stdio#2025-11-25", "reason first", 9),
            ("acp.*@acp#v?", "globbed", 10),
        ]
    );
    assert!(b.path.ends_with("baseline.yaml"));
}

#[test]
fn empty_list_and_blank_list_load() {
    assert!(load_text("version: 1\nexpected-failures: []\n")
        .unwrap()
        .entries
        .is_empty());
    assert!(load_text("version: 1\nexpected-failures:\n")
        .unwrap()
        .entries
        .is_empty());
}

#[test]
fn yaml_syntax_error_names_file_and_line() {
    let e = err("version: 1\nexpected-failures:\n  - case: [unclosed\n    reason: x\n");
    assert!(e.line >= 3, "{e}");
    assert!(e.entry.is_none());
    assert!(e.message.starts_with("not valid YAML: "), "{e}");
    assert!(e.to_string().contains("baseline.yaml:"), "{e}");
}

#[test]
fn unreadable_file_has_no_line() {
    let dir = tempfile::tempdir().unwrap();
    let e = load(&dir.path().join("nope.yaml"), &k()).unwrap_err();
    assert_eq!(e.line, 0);
    assert!(
        e.to_string()
            .contains("nope.yaml: cannot read the baseline"),
        "{e}"
    );
}

#[test]
fn empty_and_non_mapping_files_are_refused() {
    let e = err("");
    assert_eq!(e.line, 1);
    assert!(e.message.contains("empty"), "{e}");
    let e = err("# just a comment\n- a\n");
    assert_eq!(e.line, 2, "{e}");
    assert!(e.message.contains("got a list"), "{e}");
}

#[test]
fn unknown_top_level_key() {
    let e = err("version: 1\nexpected-failure: []\n");
    assert_eq!((e.line, e.entry.as_deref()), (2, None));
    assert_eq!(
        e.message,
        "unknown key `expected-failure` (expected `version`, `expected-failures`)"
    );
    assert!(e.to_string().ends_with(
        "baseline.yaml:2: unknown key `expected-failure` (expected `version`, `expected-failures`)"
    ));
}

#[test]
fn version_missing_wrong_type_and_unsupported() {
    let e = err("expected-failures: []\n");
    assert_eq!(e.line, 1);
    assert!(e.message.contains("missing key `version`"), "{e}");
    let e = err("# c\nversion: \"1\"\nexpected-failures: []\n");
    assert_eq!(e.line, 2);
    assert!(
        e.message
            .starts_with("version: expected the integer 1, got a string"),
        "{e}"
    );
    let e = err("version: 2\nexpected-failures: []\n");
    assert_eq!(e.line, 1);
    assert!(e.message.contains("unsupported version 2"), "{e}");
    let e = err("version: 1\n");
    assert!(e.message.contains("missing key `expected-failures`"), "{e}");
}

#[test]
fn wrong_types_in_entries() {
    let e = err("version: 1\nexpected-failures:\n  case: x\n");
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.contains("expected a list"), "{e}");
    let e = err("version: 1\nexpected-failures:\n  - mcp.base.parse-error\n");
    assert_eq!(
        (e.line, e.entry.as_deref()),
        (3, Some("mcp.base.parse-error"))
    );
    assert!(e.message.contains("bare string"), "{e}");
    let e = err("version: 1\nexpected-failures:\n  - case: 5\n    reason: x\n");
    assert_eq!((e.line, e.entry.as_deref()), (3, None));
    assert!(
        e.message.starts_with(
            "entry 1: case: expected a string (a case-id pattern), got an integer (5)"
        ),
        "{e}"
    );
    let e =
        err("version: 1\nexpected-failures:\n  - case: mcp.base.parse-error\n    reason: [a]\n");
    assert_eq!(
        (e.line, e.entry.as_deref()),
        (4, Some("mcp.base.parse-error"))
    );
    assert!(
        e.message
            .starts_with("reason: expected a string, got a list"),
        "{e}"
    );
}

#[test]
fn unknown_key_in_entry_names_the_entry() {
    let e =
        err("version: 1\nexpected-failures:\n  - case: mcp.base.parse-error\n    reasn: typo\n");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:4: entry `mcp.base.parse-error`: unknown key `reasn` (expected `case`, `reason`)",
            e.file.display()
        )
    );
}

#[test]
fn missing_case_names_the_entry_number() {
    let e = err("version: 1\nexpected-failures:\n  - reason: x\n  - reason: y\n");
    assert_eq!((e.line, e.entry.as_deref()), (3, None));
    assert!(e.message.starts_with("entry 1 has no `case`"), "{e}");
}

#[test]
fn missing_and_empty_reason() {
    let e = err("version: 1\nexpected-failures:\n  - case: mcp.base.parse-error\n");
    assert_eq!(
        (e.line, e.entry.as_deref()),
        (3, Some("mcp.base.parse-error"))
    );
    assert!(e.message.starts_with("missing key `reason`"), "{e}");
    let e =
        err("version: 1\nexpected-failures:\n  - case: mcp.base.parse-error\n    reason: \"  \"\n");
    assert_eq!(e.line, 4, "{e}");
    assert!(e.message.starts_with("`reason` is empty"), "{e}");
    let e = err("version: 1\nexpected-failures:\n  - case: mcp.base.parse-error\n    reason:\n");
    assert_eq!(e.entry.as_deref(), Some("mcp.base.parse-error"));
    assert!(e.line >= 3, "{e}");
    assert!(e.message.starts_with("`reason` is empty"), "{e}");
}

fn entry_err(case: &str) -> BaselineError {
    err(&format!(
            "version: 1\nexpected-failures:\n  - case: mcp.base.parse-error\n    reason: fine\n  - case: \"{case}\"\n    reason: r\n"
        ))
}

#[test]
fn unknown_check_is_refused() {
    let e = entry_err("mcp.base.batch-rejectd@mcp-stdio");
    assert_eq!(
        (e.line, e.entry.as_deref()),
        (5, Some("mcp.base.batch-rejectd@mcp-stdio"))
    );
    assert!(
        e.message
            .starts_with("unknown check `mcp.base.batch-rejectd`"),
        "{e}"
    );
    // A family prefix is not a check; a glob says what is meant.
    assert!(entry_err("mcp.base").message.starts_with("unknown check"));
    assert!(
        load_text("version: 1\nexpected-failures:\n  - case: mcp.base.*\n    reason: r\n").is_ok()
    );
    // Cases of an equivalence family are known.
    assert!(load_text(
            "version: 1\nexpected-failures:\n  - case: equivalence.generated.read_file@equivalence#all\n    reason: r\n"
        )
        .is_ok());
}

#[test]
fn unknown_binding_is_refused() {
    let e = entry_err("mcp.base.parse-error@mcp");
    assert_eq!(e.line, 5);
    assert_eq!(
            e.message,
            "unknown binding `mcp` (expected mcp-stdio, acp, equivalence, mcp-http, facade, host or source)"
        );
    let e = entry_err("mcp.base.parse-error@rpc*");
    assert!(
        e.message.starts_with("binding `rpc*` matches no binding"),
        "{e}"
    );
    assert!(load_text(
        "version: 1\nexpected-failures:\n  - case: mcp.base.parse-error@mcp-*\n    reason: r\n"
    )
    .is_ok());
}

#[test]
fn malformed_revision_is_refused() {
    let e = entry_err("mcp.base.parse-error@mcp-stdio#2025-13-01");
    assert_eq!(e.line, 5);
    assert!(
            e.message.starts_with(
                "malformed revision `#2025-13-01`: it is not a revision parity knows (mcp-stdio revisions are 2024-11-05"
            ),
            "{e}"
        );
    let e = entry_err("acp.init.version-negotiation@acp#1");
    assert!(e.message.contains("acp revisions are v1"), "{e}");
    let e = entry_err("mcp.base.parse-error@mcp-stdio#");
    assert!(e.message.contains("nothing after `#`"), "{e}");
    let e = entry_err("mcp.base.parse-error#2025-11-25");
    assert!(e.message.contains("a revision needs a binding"), "{e}");
    let e = entry_err("mcp.base.parse-error@mcp-stdio#2027-*");
    assert!(e.message.contains("matches no revision"), "{e}");
    // A revision of another binding, through a binding glob, is fine.
    assert!(load_text(
        "version: 1\nexpected-failures:\n  - case: \"mcp.base.parse-error@*#v1\"\n    reason: r\n"
    )
    .is_ok());
}

#[test]
fn bad_pattern_syntax_is_refused() {
    for (p, why) in [
        ("mcp.base.[ab]", "`[` is not allowed"),
        ("@mcp-stdio", "no check before `@`"),
        ("mcp.base.parse-error@", "no binding after `@`"),
        ("mcp.base.parse-error@mcp-stdio@acp", "more than one"),
        ("mcp.base.parse-error @mcp-stdio", "no whitespace"),
    ] {
        let e = entry_err(p);
        assert_eq!((e.line, e.entry.as_deref()), (5, Some(p)), "{e}");
        assert!(e.message.starts_with("bad pattern: "), "{e}");
        assert!(e.message.contains(why), "{p}: {e}");
    }
}

#[test]
fn duplicate_entry_names_both_lines() {
    let e = err(
            "version: 1\nexpected-failures:\n  - case: mcp.base.parse-error\n    reason: a\n  - case: mcp.base.batch-rejected\n    reason: b\n  - case: mcp.base.parse-error\n    reason: c\n",
        );
    assert_eq!(
        e.to_string(),
        format!(
            "{}:7: entry `mcp.base.parse-error`: listed twice (lines 3 and 7); keep one",
            e.file.display()
        )
    );
}

#[test]
fn duplicate_yaml_key_is_a_parse_error() {
    let e = err("version: 1\nversion: 1\nexpected-failures: []\n");
    assert_eq!(e.line, 2, "{e}");
    assert!(e.message.starts_with("not valid YAML"), "{e}");
}

#[test]
fn patterns_match_part_by_part() {
    let p = |s: &str| Pattern::parse(s).unwrap();
    let id = "mcp.base.batch-rejected@mcp-stdio#2025-03-26";
    assert!(p("mcp.base.batch-rejected").matches(id));
    assert!(p("mcp.base.batch-rejected@mcp-stdio").matches(id));
    assert!(p("mcp.base.batch-rejected@mcp-stdio#2025-03-26").matches(id));
    assert!(!p("mcp.base.batch-rejected@mcp-stdio#2025-11-25").matches(id));
    assert!(!p("mcp.base.batch-rejected@acp").matches(id));
    assert!(!p("mcp.base.batch").matches(id));
    assert!(p("mcp.base.*").matches(id));
    assert!(p("mcp.base.batch-?ejected@*#2025-*").matches(id));
    assert!(p("*").matches(id));
    assert!(!p("mcp.base.batch-?ejected@*#2025-11*").matches(id));
    let generated = "equivalence.generated.read_file@equivalence#all";
    assert!(p("equivalence.generated").matches(generated));
    assert!(p("equivalence.generated@equivalence#all").matches(generated));
    assert!(!p("equivalence.generated.read").matches(generated));
}

#[test]
fn wildcards() {
    assert!(wild("a*c", "abbbc"));
    assert!(wild("a*", "a"));
    assert!(wild("*.x*", "a.b.xy"));
    assert!(!wild("a?c", "ac"));
    assert!(wild("a?c", "abc"));
    assert!(!wild("a*d", "abc"));
    assert!(wild("**", ""));
}

fn case(id: &str, verdict: Verdict) -> CaseResult {
    let (check, binding, revision) = split_case_id(id).unwrap();
    CaseResult {
        id: id.into(),
        kind: CaseKind::Active,
        check: check.into(),
        binding: binding.into(),
        revision: revision.into(),
        spec: String::new(),
        level: "MUST".into(),
        quote: String::new(),
        requirement: String::new(),
        verdict,
        message: String::new(),
        evidence: Vec::new(),
        duration_ms: 0,
        attempts: 1,
        expected: None,
    }
}

fn report(cases: Vec<CaseResult>) -> RunReport {
    RunReport {
        target: "t".into(),
        cases,
        ..RunReport::default()
    }
}

fn baseline(entries: &[&str]) -> Baseline {
    Baseline {
        path: PathBuf::from("b.yaml"),
        entries: entries
            .iter()
            .enumerate()
            .map(|(i, c)| Entry {
                case: (*c).into(),
                reason: format!("r{i}"),
                line: 10 + i,
            })
            .collect(),
    }
}

const L: &str = "@mcp-stdio#2025-11-25";
const WHOLE: bool = true;
const M: &str = "@mcp-stdio#2026-07-28";

#[test]
fn a_shard_judges_only_exact_entries_stale() {
    let exact = format!("a.passes{L}");
    let monitor = format!("a.monitor{L}");
    let b = baseline(&["a.passes", exact.as_str(), monitor.as_str()]);
    let mut r = report(vec![
        case(&exact, Verdict::Pass),
        case(&monitor, Verdict::Pass),
    ]);
    r.cases[1].kind = crate::engine::run::CaseKind::Monitor;
    r.partition = Some("hash:1/2".into());
    b.apply(&mut r, false);
    let stale: Vec<&str> = r.stale.iter().map(|e| e.entry.as_str()).collect();
    assert_eq!(stale, [exact.as_str()]);
    assert!(
        r.notes.iter().any(|n| n.contains("`a.passes` (line")),
        "{:?}",
        r.notes
    );
    assert!(
        r.notes.iter().any(|n| n.contains("`a.monitor@")),
        "{:?}",
        r.notes
    );
    // Narrowed without a partition (say --era): exact entries, monitors included, are judged.
    r.partition = None;
    r.notes.clear();
    b.apply(&mut r, false);
    assert_eq!(r.stale.len(), 2);
    // The whole run: every entry is judged.
    r.notes.clear();
    b.apply(&mut r, WHOLE);
    assert_eq!(r.stale.len(), 3);
    assert!(r.notes.is_empty());
}

#[test]
fn apply_marks_expected_and_finds_stale() {
    let b = baseline(&[
        "a.fails",               // 0: fails → expected, not stale
        "a.passes",              // 1: passes → stale
        "a.skipped",             // 2: only skipped / not-run → neither
        "a.mixed",               // 3: one revision fails, one passes → not stale
        "a.flaky",               // 4: flaky → not stale, not expected
        "a.absent",              // 5: matches nothing → neither
        "a.*",                   // 6: matches failures already marked by earlier entries
        "a.times-out@mcp-stdio", // 7: timeout → expected
        "a.warns",               // 8: warn only → stale
    ]);
    let mut r = report(vec![
        case(&format!("a.fails{L}"), Verdict::Fail),
        case(&format!("a.passes{L}"), Verdict::Pass),
        case(&format!("a.passes{M}"), Verdict::Skip),
        case(&format!("a.skipped{L}"), Verdict::Skip),
        case(&format!("a.skipped{M}"), Verdict::NotRun),
        case(&format!("a.mixed{L}"), Verdict::Fail),
        case(&format!("a.mixed{M}"), Verdict::Pass),
        case(&format!("a.flaky{L}"), Verdict::Flaky),
        case(&format!("a.times-out{M}"), Verdict::Timeout),
        case(&format!("a.warns{L}"), Verdict::Warn),
        case(&format!("b.fails{L}"), Verdict::Fail),
    ]);
    r.cases[1].expected = Some(BaselineMark {
        entry: "old".into(),
        reason: "old".into(),
    });
    b.apply(&mut r, WHOLE);
    let marks: Vec<(&str, Option<&str>)> = r
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.expected.as_ref().map(|m| m.entry.as_str())))
        .collect();
    assert_eq!(
        marks,
        vec![
            ("a.fails@mcp-stdio#2025-11-25", Some("a.fails")),
            ("a.passes@mcp-stdio#2025-11-25", None),
            ("a.passes@mcp-stdio#2026-07-28", None),
            ("a.skipped@mcp-stdio#2025-11-25", None),
            // A listed not-run case is expected (it does not make the run exit 3).
            ("a.skipped@mcp-stdio#2026-07-28", Some("a.skipped")),
            ("a.mixed@mcp-stdio#2025-11-25", Some("a.mixed")),
            ("a.mixed@mcp-stdio#2026-07-28", None),
            ("a.flaky@mcp-stdio#2025-11-25", None),
            ("a.times-out@mcp-stdio#2026-07-28", Some("a.*")),
            ("a.warns@mcp-stdio#2025-11-25", None),
            ("b.fails@mcp-stdio#2025-11-25", None),
        ]
    );
    assert_eq!(r.cases[0].expected.as_ref().unwrap().reason, "r0");
    assert_eq!(
        r.stale,
        vec![
            StaleEntry {
                entry: "a.passes".into(),
                reason: "r1".into(),
                line: 11,
                cases: vec![format!("a.passes{L}")],
            },
            StaleEntry {
                entry: "a.warns".into(),
                reason: "r8".into(),
                line: 18,
                cases: vec![format!("a.warns{L}")],
            },
        ]
    );
    assert_eq!(r.unexpected_failures(), 1);
    // Three failures or timeouts and one not-run case the baseline lists.
    assert_eq!(r.expected_failures(), 4);
    assert_eq!(r.exit_code(), 1);
}

#[test]
fn apply_clears_stale_of_a_previous_apply() {
    let mut r = report(vec![case(&format!("a.x{L}"), Verdict::Pass)]);
    baseline(&["a.x"]).apply(&mut r, WHOLE);
    assert_eq!(r.stale.len(), 1);
    baseline(&[]).apply(&mut r, WHOLE);
    assert!(r.stale.is_empty());
    assert_eq!(r.exit_code(), 0);
}

#[test]
fn lists_returns_the_first_matching_entry() {
    let b = baseline(&["a.x@acp", "a.*", "a.x"]);
    assert_eq!(b.lists(&format!("a.x{L}")).unwrap().case, "a.*");
    assert_eq!(b.lists("a.x@acp#v1").unwrap().case, "a.x@acp");
    assert!(b.lists(&format!("b.x{L}")).is_none());
    assert!(b.lists("not a case id").is_none());
}

fn json_report() -> Value {
    serde_json::json!({
        "schema_version": 2,
        "target": "my server",
        "cases": {
            "mcp.base.parse-error@mcp-stdio#2026-07-28": {"verdict": "fail", "message": "answered -32600\ninstead of -32700: \"quoted\""},
            "mcp.base.batch-rejected@mcp-stdio#2025-03-26": {"verdict": "timeout", "message": ""},
            "mcp.lifecycle.x@mcp-stdio#2025-11-25": {"verdict": "pass", "message": ""},
            "acp.init.version-negotiation@acp#v1": {"verdict": "fail", "message": "x".repeat(300)},
            "equivalence.generated.read_file@equivalence#all": {"verdict": "skip", "message": "no"},
        }
    })
}

#[test]
fn write_from_report_lists_failures_sorted() {
    let text = write_from_report(&json_report(), "ci/report.json");
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let long = format!("{}…", "x".repeat(120));
    assert_eq!(
            body,
            vec![
                "version: 1".to_string(),
                "expected-failures:".into(),
                "  - case: acp.init.version-negotiation@acp#v1".into(),
                format!("    reason: \"failed in ci/report.json: {long}\""),
                "  - case: mcp.base.batch-rejected@mcp-stdio#2025-03-26".into(),
                "    reason: \"timed out in ci/report.json\"".into(),
                "  - case: mcp.base.parse-error@mcp-stdio#2026-07-28".into(),
                "    reason: \"failed in ci/report.json: answered -32600 instead of -32700: \\\"quoted\\\"\""
                    .into(),
            ]
        );
    assert!(text.starts_with("# parity baseline: "));
    assert!(text.contains("from ci/report.json (target: my server)"));
    assert!(text.contains("edit it"));
}

#[test]
fn write_from_report_round_trips_through_load() {
    let text = write_from_report(&json_report(), "ci/report.json");
    let (_dir, path) = write(&text);
    let b = load(&path, &k()).unwrap();
    let cases: Vec<&str> = b.entries.iter().map(|e| e.case.as_str()).collect();
    assert_eq!(
        cases,
        vec![
            "acp.init.version-negotiation@acp#v1",
            "mcp.base.batch-rejected@mcp-stdio#2025-03-26",
            "mcp.base.parse-error@mcp-stdio#2026-07-28",
        ]
    );
    assert_eq!(
        b.entries[2].reason,
        "failed in ci/report.json: answered -32600 instead of -32700: \"quoted\""
    );
    // Each entry's line is its `case` line in the written text.
    for e in &b.entries {
        let line = text.lines().nth(e.line - 1).unwrap();
        assert!(line.contains(&format!("case: {}", e.case)), "{line}");
    }
}

#[test]
fn write_from_report_without_failures_loads_empty() {
    let text = write_from_report(&serde_json::json!({"cases": {}}), "r.json");
    assert!(text.ends_with("expected-failures: []\n"));
    let (_dir, path) = write(&text);
    assert!(load(&path, &k()).unwrap().entries.is_empty());
}

#[test]
fn odd_ids_are_quoted() {
    assert_eq!(yaml_scalar("a.b@c#d"), "a.b@c#d");
    assert_eq!(yaml_scalar("a b: c"), "\"a b: c\"");
    assert_eq!(yaml_scalar("*x"), "\"*x\"");
}
