//! The Markdown summary of JSON reports (`parity report summary`), for a CI job's summary page
//! (GitHub's `$GITHUB_STEP_SUMMARY`, which the GitHub Action appends it to).
//!
//! For each report, in the order given: a heading with the target and the outcome (from its
//! `exit_code`), a table of verdict counts (its `summary`), then every case that fails the run
//! (an unexpected `fail` or `timeout`, and a `not-run` no baseline expects) with its case id,
//! verdict, message and the quoted requirement (level, spec link, quote), then each stale
//! baseline entry. At most [`MAX_LISTED`] cases are listed per report; the rest are counted.
//! With a link (the uploaded HTML report), the summary ends with it.
//!
//! Text from the report (messages, quotes, targets) is a peer's or a user's: it is put on one
//! line, clipped, and every character Markdown, GitHub's extensions or HTML give a meaning
//! inside a line ([`ESCAPED`]) is backslash-escaped, so it renders as written.

use serde_json::Value;
use std::fmt::Write as _;

/// How many failing cases one report lists before it only counts the rest.
pub const MAX_LISTED: usize = 50;

/// The verdict columns of the counts table, in the console's order, then `expected` and
/// `stale`.
const COLUMNS: [&str; 9] = [
    "pass", "fail", "warn", "skip", "not-run", "timeout", "flaky", "expected", "stale",
];

/// The characters [`escape`] backslash-escapes: emphasis, code, links and images (a link needs
/// `[`, so `(` may stay), HTML and entities, table cells, strikethrough and math. Every text
/// [`markdown`] writes sits after a prefix on its line, so block syntax (`#`, `-`, `1.`) needs
/// no escape.
pub const ESCAPED: &str = "\\`*_[]<>|!~&$";

/// Escapes `s` as Markdown text on one line: line breaks become spaces, each character of
/// [`ESCAPED`] is backslash-escaped, other control characters are dropped, and text longer
/// than `max` characters is clipped with `…`.
pub fn escape(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        match c {
            '\r' | '\n' | '\t' => out.push(' '),
            c if ESCAPED.contains(c) => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A URL as the target of a Markdown link: kept only when it is `http://` or `https://` and
/// holds no space, `(`, `)`, `<`, `>` or quote.
fn safe_url(url: &str) -> Option<&str> {
    let ok = (url.starts_with("https://") || url.starts_with("http://"))
        && !url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "()<>\"'`".contains(c));
    ok.then_some(url)
}

/// The outcome line of a report's exit code.
fn outcome(code: Option<i64>) -> &'static str {
    match code {
        Some(0) => "passed (every result as expected)",
        Some(1) => "failed: an unexpected failure or a stale baseline entry",
        Some(2) => "usage or configuration error",
        Some(3) => "could not run, or lost coverage (cases that did not run)",
        _ => "unknown outcome",
    }
}

/// Whether a case fails the run: an unexpected fail or timeout, or a not-run case no baseline
/// entry lists.
fn fails_the_run(case: &Value) -> bool {
    let verdict = case.get("verdict").and_then(Value::as_str).unwrap_or("");
    let expected = case.get("expected").is_some_and(|e| !e.is_null());
    matches!(verdict, "fail" | "timeout" | "not-run") && !expected
}

/// A string field of a JSON object, `""` when missing.
fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The Markdown summary of `reports` (parsed JSON reports, see the module doc); `html_url`,
/// when given, is linked at the end as the HTML report.
pub fn markdown(reports: &[Value], html_url: Option<&str>) -> String {
    let mut out = String::new();
    for r in reports {
        let target = match text(r, "target") {
            "" => "(no target name)",
            t => t,
        };
        let code = r.get("exit_code").and_then(Value::as_i64);
        let mark = if code == Some(0) { "✅" } else { "❌" };
        let _ = writeln!(out, "### {mark} parity: {}\n", escape(target, 200));
        let _ = write!(out, "**{}**", outcome(code));
        if let Some(p) = r.get("partition").and_then(Value::as_str) {
            let _ = write!(out, " (shard {})", escape(p, 40));
        }
        if let Some(ms) = r.get("duration_ms").and_then(Value::as_u64) {
            let _ = write!(out, " in {:.1} s", ms as f64 / 1000.0);
        }
        out.push_str("\n\n");
        let summary = r.get("summary").cloned().unwrap_or(Value::Null);
        let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
        let _ = writeln!(out, "|{}", "---:|".repeat(COLUMNS.len()));
        let counts: Vec<String> = COLUMNS
            .iter()
            .map(|c| {
                summary
                    .get(*c)
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    .to_string()
            })
            .collect();
        let _ = writeln!(out, "| {} |\n", counts.join(" | "));

        let failing: Vec<(&String, &Value)> = r
            .get("cases")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter(|(_, c)| fails_the_run(c)).collect())
            .unwrap_or_default();
        if !failing.is_empty() {
            let _ = writeln!(out, "**Failures ({}):**\n", failing.len());
            for (id, c) in failing.iter().take(MAX_LISTED) {
                let _ = writeln!(
                    out,
                    "- `{}` **{}**: {}",
                    id.replace('`', "'"),
                    escape(text(c, "verdict"), 20),
                    escape(text(c, "message"), 400)
                );
                let quote = text(c, "quote");
                if !quote.is_empty() {
                    let level = escape(text(c, "level"), 40);
                    let spec = text(c, "spec");
                    let source = match safe_url(spec) {
                        Some(u) => format!("[{}]({u})", escape(spec, 200)),
                        None => escape(spec, 200),
                    };
                    let _ = writeln!(out, "  > {level} {source}: “{}”", escape(quote, 400));
                }
            }
            if failing.len() > MAX_LISTED {
                let _ = writeln!(
                    out,
                    "- … and {} more (see the JSON or HTML report)",
                    failing.len() - MAX_LISTED
                );
            }
            out.push('\n');
        }
        if let Some(stale) = r.get("stale").and_then(Value::as_array) {
            if !stale.is_empty() {
                let _ = writeln!(out, "**Stale baseline entries ({}):**\n", stale.len());
                for e in stale {
                    let _ = writeln!(
                        out,
                        "- `{}` (line {}): every case it lists passed; remove it",
                        text(e, "entry").replace('`', "'"),
                        e.get("line").and_then(Value::as_u64).unwrap_or(0)
                    );
                }
                out.push('\n');
            }
        }
    }
    if let Some(url) = html_url.and_then(safe_url) {
        let _ = writeln!(out, "[HTML report]({url})\n");
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn case(verdict: &str, expected: bool) -> Value {
        json!({
            "kind": "active", "check": "mcp.base.id-echo", "binding": "mcp-stdio",
            "revision": "2025-11-25", "spec": "https://www.jsonrpc.org/specification#response_object",
            "level": "MUST", "quote": "It MUST be the same as the value of the id member.",
            "requirement": "ids are echoed", "verdict": verdict,
            "message": "id 0 was not echoed | <b>bold</b>\nsecond line",
            "evidence": [], "duration_ms": 5, "attempts": 1,
            "expected": if expected { json!({"entry": "x", "reason": "known"}) } else { Value::Null },
        })
    }

    fn report(exit: i64, cases: Value) -> Value {
        json!({
            "schema_version": 2, "target": "node dist/index.js", "exit_code": exit,
            "partition": "hash:1/3", "duration_ms": 5329, "stale": [],
            "summary": {"pass": 48, "fail": 2, "warn": 0, "skip": 10, "not-run": 0,
                        "timeout": 0, "flaky": 0, "expected": 1, "stale": 0},
            "cases": cases,
        })
    }

    #[test]
    fn counts_failures_with_check_and_quote_and_the_link() {
        let r = report(
            1,
            json!({
                "mcp.base.id-echo@mcp-stdio#2025-11-25": case("fail", false),
                "mcp.base.id-echo@mcp-stdio#2026-07-28": case("fail", true),
                "mcp.base.ping@mcp-stdio#2025-11-25": case("pass", false),
            }),
        );
        let md = markdown(
            &[r],
            Some("https://github.com/o/r/actions/runs/1/artifacts/2"),
        );
        assert!(
            md.starts_with("### ❌ parity: node dist/index.js\n"),
            "{md}"
        );
        assert!(md.contains("(shard hash:1/3) in 5.3 s"), "{md}");
        assert!(
            md.contains("| pass | fail | warn | skip | not-run | timeout | flaky | expected | stale |\n|---:|"),
            "{md}"
        );
        assert!(
            md.contains("| 48 | 2 | 0 | 10 | 0 | 0 | 0 | 1 | 0 |"),
            "{md}"
        );
        // Only the unexpected failure is listed, on one line, escaped.
        assert!(md.contains("**Failures (1):**"), "{md}");
        assert!(
            md.contains("- `mcp.base.id-echo@mcp-stdio#2025-11-25` **fail**: id 0 was not echoed \\| \\<b\\>bold\\</b\\> second line\n"),
            "{md}"
        );
        assert!(!md.contains("2026-07-28"), "{md}");
        assert!(
            md.contains("  > MUST [https://www.jsonrpc.org/specification#response\\_object](https://www.jsonrpc.org/specification#response_object): “It MUST be the same as the value of the id member.”"),
            "{md}"
        );
        assert!(
            md.ends_with("[HTML report](https://github.com/o/r/actions/runs/1/artifacts/2)\n\n"),
            "{md}"
        );
    }

    #[test]
    fn a_green_run_lists_nothing_and_odd_input_is_harmless() {
        let md = markdown(&[report(0, json!({}))], None);
        assert!(md.starts_with("### ✅ parity:"), "{md}");
        assert!(md.contains("**passed"), "{md}");
        assert!(!md.contains("Failures"), "{md}");
        assert!(!md.contains("HTML report"), "{md}");
        // A link that could break out of the Markdown is dropped; a non-object is survived.
        let md = markdown(&[json!([1, 2])], Some("javascript:alert(1)"));
        assert!(
            md.contains("unknown outcome") && !md.contains("javascript"),
            "{md}"
        );
        let md = markdown(&[], Some("https://x.test/a) [b](c"));
        assert!(md.is_empty(), "{md}");
    }

    #[test]
    fn many_failures_are_clipped_and_stale_entries_listed() {
        let mut cases = serde_json::Map::new();
        for i in 0..(MAX_LISTED + 3) {
            cases.insert(
                format!("c.x{i}@mcp-stdio#2025-11-25"),
                case("timeout", false),
            );
        }
        let mut r = report(1, Value::Object(cases));
        r["stale"] = json!([{"entry": "mcp.base.ping", "reason": "r", "line": 9, "cases": []}]);
        let md = markdown(&[r], None);
        assert_eq!(md.matches("**timeout**").count(), MAX_LISTED, "{md}");
        assert!(md.contains("- … and 3 more"), "{md}");
        assert!(
            md.contains("- `mcp.base.ping` (line 9): every case it lists passed; remove it"),
            "{md}"
        );
    }

    #[test]
    fn escape_clips_and_neutralizes() {
        assert_eq!(escape("a*b_c", 10), "a\\*b\\_c");
        assert_eq!(escape("abcdef", 3), "abc…");
        assert_eq!(escape("x\u{7}y\nz", 10), "xy z");
    }
}
