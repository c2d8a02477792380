//! The JUnit XML reporter (`parity run --junit FILE`), written with `quick-junit`.
//!
//! Shape: `<testsuites name="parity">` with one `<testsuite>` per profile that has cases
//! (`mcp`, `acp`, `equivalence`, …: the profile that ran the case, as the run recorded it in
//! `RunReport::profiles`; the case's binding only when none was recorded), one `<testcase>` per case:
//! `name` = the case id `check@binding#revision`, `classname` = `binding#revision`, `time` in
//! seconds. Verdicts map as:
//! - `pass` → success; `warn` → success with the warning in `<system-out>` (JUnit has no
//!   warning status, and a warning does not fail a run);
//! - `fail` → `<failure>` whose `message` is the reason and whose text carries the requirement,
//!   the expected behaviour (level, spec reference and quote) and the actual (reason and
//!   evidence); `timeout` → `<failure type="timeout">` likewise; further failed attempts under
//!   `--retries` as `<rerunFailure>`;
//! - a fail or timeout a baseline entry expects → `<skipped>` with `expected failure (baseline
//!   entry …: reason)`, the way pytest reports `xfail`;
//! - `flaky` → success with a `<flakyFailure>` carrying the failed attempt's reason;
//! - `skip` and `not-run` → `<skipped>` with the reason;
//! - each stale baseline entry → one extra failed `<testcase>` named `baseline:<entry>` in a
//!   `baseline` suite, so a CI dashboard shows it;
//! - a run that could not happen (a surface did not start, no case selected) → one `<error>`
//!   test case per reason, `parity:could-not-run#N` in a `parity` suite, so a dashboard never
//!   shows such a run as green with zero tests.
//!
//! Counts therefore equal the console summary: tests = cases (+ stale entries), failures =
//! unexpected fails and timeouts (+ stale entries), skipped = skip + not-run + expected.
//! Every `<testsuite>` carries `time` (the sum of its cases' times, in seconds) and
//! `timestamp` (when the run started: UTC, `YYYY-MM-DDTHH:MM:SS`, the form the
//! Surefire/Jenkins schema allows).

use crate::engine::check::Verdict;
use crate::engine::run::{CaseResult, RunReport};
use quick_junit::{
    NonSuccessKind, Report, TestCase, TestCaseStatus, TestRerun, TestSuite, XmlString,
};
use std::time::Duration;

/// Strips characters XML 1.0 cannot carry (other C0 controls), which peers may send.
fn xml_safe(s: &str) -> String {
    s.chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || *c >= ' ')
        .filter(|c| !matches!(c, '\u{FFFE}' | '\u{FFFF}'))
        .collect()
}

/// The failure text: requirement, expected and actual.
fn failure_text(c: &CaseResult) -> String {
    let mut t = format!(
        "requirement: {}\nexpected: {} {}: \"{}\"\nactual: {}",
        c.requirement, c.level, c.spec, c.quote, c.message
    );
    if !c.evidence.is_empty() {
        t.push_str("\nevidence:");
        for e in &c.evidence {
            t.push_str("\n  ");
            t.push_str(e);
        }
    }
    xml_safe(&t)
}

fn test_case(c: &CaseResult) -> TestCase {
    let status = match c.verdict {
        Verdict::Pass | Verdict::Warn => TestCaseStatus::success(),
        Verdict::Flaky => {
            let mut s = TestCaseStatus::success();
            let mut rerun = TestRerun::new(NonSuccessKind::Failure);
            rerun.set_type("fail");
            rerun.set_message(xml_safe(&c.message));
            s.add_rerun(rerun);
            s
        }
        Verdict::Fail | Verdict::Timeout => match &c.expected {
            Some(mark) => {
                let mut s = TestCaseStatus::skipped();
                s.set_type("expected-failure");
                s.set_message(xml_safe(&format!(
                    "expected failure (baseline entry `{}`: {})",
                    mark.entry, mark.reason
                )));
                s
            }
            None => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_type(if c.verdict == Verdict::Timeout {
                    "timeout"
                } else {
                    "fail"
                });
                s.set_message(xml_safe(&c.message));
                s.set_description(failure_text(c));
                for _ in 1..c.attempts {
                    let mut rerun = TestRerun::new(NonSuccessKind::Failure);
                    rerun.set_type("fail");
                    rerun.set_message("an earlier attempt failed too (--retries)");
                    s.add_rerun(rerun);
                }
                s
            }
        },
        Verdict::Skip => {
            let mut s = TestCaseStatus::skipped();
            s.set_type(c.verdict.as_str());
            s.set_message(xml_safe(&c.message));
            s
        }
        // A case that could not run is lost coverage, not a skip: an `<error>`, unless a
        // baseline entry lists it (then a skip marked as expected).
        Verdict::NotRun => match &c.expected {
            Some(mark) => {
                let mut s = TestCaseStatus::skipped();
                s.set_type("expected-not-run");
                s.set_message(xml_safe(&format!(
                    "could not run, as expected (baseline entry `{}`: {}): {}",
                    mark.entry, mark.reason, c.message
                )));
                s
            }
            None => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_type("not-run");
                s.set_message(xml_safe(&c.message));
                s.set_description(failure_text(c));
                s
            }
        },
    };
    let mut tc = TestCase::new(xml_safe(&c.id), status);
    tc.set_classname(format!("{}#{}", c.binding, c.revision));
    tc.set_time(Duration::from_millis(c.duration_ms));
    if c.verdict == Verdict::Warn {
        tc.set_system_out(xml_safe(&format!(
            "warning ({} {}): {}",
            c.level, c.spec, c.message
        )));
    }
    tc
}

/// The JUnit report of a run.
pub fn to_report(report: &RunReport) -> Report {
    let mut r = Report::new("parity");
    r.set_time(Duration::from_millis(report.duration_ms));
    let mut suites: Vec<TestSuite> = Vec::new();
    for c in &report.cases {
        let name = report.profile_of(c);
        let idx = match suites.iter().position(|s| s.name.as_str() == name) {
            Some(i) => i,
            None => {
                let mut s = TestSuite::new(name);
                s.add_property(("target", xml_safe(&report.target).as_str()));
                suites.push(s);
                suites.len() - 1
            }
        };
        if let Some(s) = suites.get_mut(idx) {
            s.add_test_case(test_case(c));
        }
    }
    if !report.could_not_run.is_empty() {
        let mut s = TestSuite::new("parity");
        for (i, why) in report.could_not_run.iter().enumerate() {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
            st.set_type("could-not-run");
            st.set_message(xml_safe(why));
            s.add_test_case(TestCase::new(format!("parity:could-not-run#{}", i + 1), st));
        }
        suites.push(s);
    }
    if !report.stale.is_empty() {
        let mut s = TestSuite::new("baseline");
        for e in &report.stale {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            st.set_type("stale-baseline-entry");
            st.set_message(xml_safe(&format!(
                "stale baseline entry `{}` (line {}): every case it lists now passes; remove it",
                e.entry, e.line
            )));
            st.set_description(xml_safe(&format!(
                "reason given: {}\ncases: {}",
                e.reason,
                e.cases.join(", ")
            )));
            s.add_test_case(TestCase::new(
                XmlString::new(xml_safe(&format!("baseline:{}", e.entry))),
                st,
            ));
        }
        suites.push(s);
    }
    // Each suite's `time` is the sum of its cases' times (cases run in parallel, so the sum
    // can exceed the wall time), and its `timestamp` is when the run started, in UTC, to the
    // second and without an offset: the Surefire/Jenkins schema's pattern for it
    // (`YYYY-MM-DDTHH:MM:SS`) refuses the fraction and offset quick-junit's own field writes,
    // so it goes in as a plain attribute.
    let timestamp = report.started_at.map(|t| {
        chrono::DateTime::<chrono::Utc>::from(t)
            .format("%Y-%m-%dT%H:%M:%S")
            .to_string()
    });
    for s in &mut suites {
        let total: Duration = s.test_cases.iter().filter_map(|c| c.time).sum();
        s.set_time(total);
        if let Some(ts) = &timestamp {
            s.extra
                .insert(XmlString::new("timestamp"), XmlString::new(ts.as_str()));
        }
    }
    r.add_test_suites(suites);
    r
}

/// The JUnit XML text of a run. The root `<testsuites>` element carries `tests`, `failures`,
/// `errors` and `time` but no `skipped` count: the Surefire/Jenkins JUnit schema (the one
/// pytest and Jenkins validate against) does not allow it there; every `<testsuite>` has its own.
///
/// Errors: serialization failed.
pub fn to_xml(report: &RunReport) -> Result<String, quick_junit::SerializeError> {
    let text = to_report(report).to_string()?;
    let Some(start) = text.find("<testsuites ") else {
        return Ok(text);
    };
    let end = text[start..].find('>').map_or(text.len(), |e| start + e);
    let head = &text[start..end];
    let Some(at) = head.find(" skipped=\"") else {
        return Ok(text);
    };
    let close = head[at + 10..]
        .find('"')
        .map_or(head.len(), |c| at + 10 + c + 1);
    Ok(format!(
        "{}{}{}{}",
        &text[..start],
        &head[..at],
        &head[close..],
        &text[end..]
    ))
}

/// Writes the JUnit XML of a run to `path` (a missing directory is created). Errors:
/// serialization or the write failed.
pub fn write(report: &RunReport, path: &std::path::Path) -> std::io::Result<()> {
    let text = to_xml(report).map_err(std::io::Error::other)?;
    crate::base::util::write_file(path, text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::engine::run::{BaselineMark, CaseKind, StaleEntry};

    fn case(id: &str, verdict: Verdict) -> CaseResult {
        let (check, rest) = id.split_once('@').unwrap();
        let (binding, revision) = rest.split_once('#').unwrap();
        CaseResult {
            id: id.into(),
            kind: CaseKind::Active,
            check: check.into(),
            binding: binding.into(),
            revision: revision.into(),
            spec: "https://example.test/spec".into(),
            level: "MUST".into(),
            quote: "The server MUST answer.".into(),
            requirement: "answers".into(),
            verdict,
            message: "it said \u{1}<no>".into(),
            evidence: vec!["s2c {\"a\":1}".into()],
            duration_ms: 1500,
            attempts: 1,
            expected: None,
        }
    }

    /// `report` with each case recorded as run by the profile its binding's first word names
    /// (`mcp-stdio` → `mcp`), as a run's merge records them.
    fn ran(mut report: RunReport) -> RunReport {
        for c in &report.cases {
            let p = c.binding.split('-').next().unwrap_or(&c.binding);
            report.profiles.insert(c.id.clone(), p.to_string());
        }
        report
    }

    #[test]
    fn suites_are_the_profiles_that_ran_the_cases() {
        let mut report = RunReport {
            target: "t".into(),
            cases: vec![
                case("mcp.a@mcp-stdio#r", Verdict::Pass),
                case("dispatcher.b@mcp-stdio#r", Verdict::Pass),
                case("own.c@own#v1", Verdict::Pass),
            ],
            ..RunReport::default()
        };
        report
            .profiles
            .insert("mcp.a@mcp-stdio#r".into(), "mcp".into());
        report
            .profiles
            .insert("dispatcher.b@mcp-stdio#r".into(), "dispatcher".into());
        let xml = to_xml(&report).unwrap();
        // The same binding under two profiles; a case no profile was recorded for under its
        // binding.
        for suite in ["mcp", "dispatcher", "own"] {
            assert!(
                xml.contains(&format!(r#"<testsuite name="{suite}" tests="1""#)),
                "{suite}: {xml}"
            );
        }
    }

    #[test]
    fn maps_every_verdict_and_counts_like_the_summary() {
        let mut expected = case("a.x@mcp-stdio#r", Verdict::Fail);
        expected.expected = Some(BaselineMark {
            entry: "a.x".into(),
            reason: "known".into(),
        });
        let report = RunReport {
            target: "t".into(),
            cases: vec![
                case("a.p@mcp-stdio#r", Verdict::Pass),
                case("a.f@mcp-stdio#r", Verdict::Fail),
                case("a.w@acp#v1", Verdict::Warn),
                case("a.s@acp#v1", Verdict::Skip),
                case("a.n@acp#v1", Verdict::NotRun),
                case("a.t@equivalence#all", Verdict::Timeout),
                case("a.k@equivalence#all", Verdict::Flaky),
                expected,
            ],
            stale: vec![StaleEntry {
                entry: "a.old".into(),
                reason: "was broken".into(),
                line: 4,
                cases: vec!["a.old@acp#v1".into()],
            }],
            ..RunReport::default()
        };
        let xml = to_xml(&ran(report)).unwrap();
        assert!(
            xml.contains(r#"<testsuite name="mcp" tests="3" skipped="1" errors="0" failures="1""#),
            "{xml}"
        );
        // No start time known: `time` still, no `timestamp`.
        assert!(xml.contains(r#"failures="1" time="4.500">"#), "{xml}");
        assert!(!xml.contains("timestamp="), "{xml}");
        assert!(
            xml.contains(r#"<testsuite name="acp" tests="3" skipped="1" errors="1""#),
            "{xml}"
        );
        assert!(xml.contains(
            r#"<testsuite name="baseline" tests="1" skipped="0" errors="0" failures="1""#
        ));
        assert!(xml.contains("flakyFailure"));
        assert!(xml.contains("expected failure (baseline entry `a.x`: known)"));
        assert!(xml.contains("stale baseline entry `a.old` (line 4)"));
        assert!(xml.contains("expected: MUST https://example.test/spec"));
        // The control character is dropped, the angle bracket escaped.
        assert!(xml.contains("it said &lt;no&gt;"));
        assert!(!xml.contains('\u{1}'));
        assert!(
            xml.contains(r#"<testsuites name="parity" tests="9" failures="3" errors="1""#),
            "{xml}"
        );
    }

    #[test]
    fn every_suite_carries_its_time_and_the_start_timestamp() {
        let start = std::time::UNIX_EPOCH + Duration::from_millis(1_767_225_600_250);
        let report = RunReport {
            target: "t".into(),
            started_at: Some(start),
            cases: vec![
                case("a.p@mcp-stdio#r", Verdict::Pass),
                case("a.q@mcp-stdio#r", Verdict::Pass),
                case("a.w@acp#v1", Verdict::Warn),
            ],
            ..RunReport::default()
        };
        let xml = to_xml(&ran(report)).unwrap();
        assert!(
            xml.contains(r#"<testsuite name="mcp" tests="2" skipped="0" errors="0" failures="0" time="3.000" timestamp="2026-01-01T00:00:00">"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testsuite name="acp" tests="1" skipped="0" errors="0" failures="0" time="1.500" timestamp="2026-01-01T00:00:00">"#),
            "{xml}"
        );
    }
}
