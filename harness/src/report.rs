//! Reporters: the console table and the versioned JSON report.
//!
//! JSON report, schema version [`REPORT_SCHEMA_VERSION`]: `{"schema_version", "parity_version",
//! "target", "eras": {"legacy"?: rev, "modern"?: rev, "acp"?: "v1"}, "notes": [...], "seed": <u64 of
//! generated equivalence, or null>, "partition": "hash:K/N" | "count:K/N" | null, "baseline":
//! <file or null>, "stale": [{entry, reason, line, cases[]}], "summary": {verdict: count,
//! "expected": n, "stale": n}, "duration_ms", "exit_code", "cases": {case_id: {check, binding,
//! revision, spec, level, quote, requirement, verdict, message, evidence[], duration_ms, kind,
//! attempts, expected: {entry, reason} | null}}}` where `kind` is `active`, `monitor` or
//! `scenario` and verdicts are `pass`, `fail`, `warn`, `skip`, `not-run`, `timeout`, `flaky`.
//! Keys of `cases` are the stable case ids `check@binding#revision`, in plan order. The shape is
//! published as a JSON Schema in `docs/report.schema.json`, which a test holds real reports to.

use crate::check::Verdict;
use crate::run::RunReport;
use serde_json::{json, Map, Value};
use std::io::Write;

/// Version of the JSON report's shape; bumped on any incompatible change.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// Every verdict, in the order summaries list them.
pub const ORDER: [Verdict; 7] = [
    Verdict::Pass,
    Verdict::Fail,
    Verdict::Warn,
    Verdict::Skip,
    Verdict::NotRun,
    Verdict::Timeout,
    Verdict::Flaky,
];

/// The JSON report as a value; `baseline` is the `--baseline` file, when the run had one.
pub fn to_json(report: &RunReport, baseline: Option<&std::path::Path>) -> Value {
    let mut cases = Map::new();
    for c in &report.cases {
        cases.insert(
            c.id.clone(),
            json!({
                "kind": c.kind.as_str(),
                "check": c.check,
                "binding": c.binding,
                "revision": c.revision,
                "spec": c.spec,
                "level": c.level,
                "quote": c.quote,
                "requirement": c.requirement,
                "verdict": c.verdict.as_str(),
                "message": c.message,
                "evidence": c.evidence,
                "duration_ms": c.duration_ms,
                "attempts": c.attempts,
                "expected": c.expected,
            }),
        );
    }
    let counts = report.counts();
    let mut summary = Map::new();
    for v in ORDER {
        summary.insert(
            v.as_str().into(),
            json!(counts.get(&v).copied().unwrap_or(0)),
        );
    }
    summary.insert("expected".into(), json!(report.expected_failures()));
    summary.insert("stale".into(), json!(report.stale.len()));
    json!({
        "schema_version": REPORT_SCHEMA_VERSION,
        "parity_version": env!("CARGO_PKG_VERSION"),
        "target": report.target,
        "eras": report.eras,
        "notes": report.notes,
        "seed": report.seed,
        "partition": report.partition,
        "baseline": baseline.map(|p| p.display().to_string()),
        "stale": report.stale,
        "summary": summary,
        "duration_ms": report.duration_ms,
        "exit_code": report.exit_code(),
        "cases": cases,
    })
}

/// Writes the JSON report to `path`. Errors: the file cannot be written.
pub fn write_json(
    report: &RunReport,
    baseline: Option<&std::path::Path>,
    path: &std::path::Path,
) -> std::io::Result<()> {
    let text =
        serde_json::to_string_pretty(&to_json(report, baseline)).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}

/// Prints the console report: one line per case, the reason and evidence under every case that
/// did not pass (evidence only with `verbose`, or for fails and warns), then the summary line
/// `summary: N pass, N fail, N warn, N skip, N not-run, N timeout`.
pub fn print_console(
    report: &RunReport,
    out: &mut dyn Write,
    verbose: bool,
) -> std::io::Result<()> {
    writeln!(out, "target: {}", report.target)?;
    let mut eras: Vec<_> = report.eras.iter().collect();
    eras.sort();
    for (era, rev) in eras {
        writeln!(out, "era {era}: revision {rev}")?;
    }
    if let Some(seed) = report.seed {
        writeln!(out, "equivalence: seed {seed} (rerun with --seed {seed})")?;
    }
    for n in &report.notes {
        if verbose {
            writeln!(out, "note: {n}")?;
        }
    }
    for c in &report.cases {
        let tag = match c.verdict {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Warn => "WARN",
            Verdict::Skip => "SKIP",
            Verdict::NotRun => "NOT-RUN",
            Verdict::Timeout => "TIMEOUT",
            Verdict::Flaky => "FLAKY",
        };
        writeln!(out, "{tag:<8} {} ({} ms)", c.id, c.duration_ms)?;
        if c.verdict != Verdict::Pass {
            if !c.message.is_empty() {
                writeln!(out, "         {}", c.message)?;
            }
            if matches!(c.verdict, Verdict::Fail | Verdict::Warn | Verdict::Timeout) {
                // A warning under a MUST check is an advisory: a lesser deviation than the rule
                // quoted (e.g. an unconventional error code), never a violation of it.
                let how = if c.verdict == Verdict::Warn && c.level.starts_with("MUST") {
                    format!("advisory under {}", c.level)
                } else {
                    c.level.clone()
                };
                writeln!(out, "         {how} {}: \"{}\"", c.spec, c.quote)?;
            }
            if verbose || matches!(c.verdict, Verdict::Fail | Verdict::Timeout) {
                for e in c.evidence.iter().take(if verbose { 40 } else { 12 }) {
                    writeln!(out, "           {e}")?;
                }
            }
        }
    }
    writeln!(out, "{}", summary_line(report))?;
    if report.executed() == 0 {
        writeln!(out, "no check executed: this run is not a pass (exit 3)")?;
    }
    Ok(())
}

/// `summary: 30 pass, 0 fail, 1 warn, 2 skip, 0 not-run, 0 timeout in 412 ms`.
pub fn summary_line(report: &RunReport) -> String {
    let counts = report.counts();
    let parts: Vec<String> = ORDER
        .iter()
        .map(|v| format!("{} {}", counts.get(v).copied().unwrap_or(0), v.as_str()))
        .collect();
    format!("summary: {} in {} ms", parts.join(", "), report.duration_ms)
}
