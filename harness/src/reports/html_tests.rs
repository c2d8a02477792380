//! Unit tests of `html`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::json;

fn case(check: &str, binding: &str, rev: &str, verdict: &str) -> (String, Value) {
    (
        format!("{check}@{binding}#{rev}"),
        json!({
            "kind": "active", "check": check, "binding": binding, "revision": rev,
            "spec": "https://modelcontextprotocol.io/specification/2025-11-25/basic",
            "level": "MUST", "quote": "The server MUST echo the id.",
            "requirement": "echo ids", "verdict": verdict, "message": "",
            "evidence": [], "duration_ms": 3, "attempts": 1, "expected": null
        }),
    )
}

fn report(target: &str, cases: Vec<(String, Value)>) -> Value {
    let mut map = Map::new();
    for (id, c) in cases {
        map.insert(id, c);
    }
    json!({
        "schema_version": 2, "parity_version": "0.1.0", "target": target,
        "eras": {"legacy": "2025-11-25"}, "notes": [], "seed": null, "partition": null,
        "baseline": null, "stale": [], "summary": {}, "duration_ms": 10, "exit_code": 1,
        "cases": map
    })
}

/// The opening tag of the `<details>` of a case.
fn details_tag<'a>(html: &'a str, report: usize, id: &str) -> &'a str {
    let needle = format!("data-report=\"{report}\" data-case=\"{}\"", esc(id));
    let at = html
        .find(&needle)
        .unwrap_or_else(|| panic!("no cell for {id}"));
    let start = html[..at].rfind("<details").unwrap();
    let end = at + html[at..].find('>').unwrap();
    &html[start..=end]
}

#[test]
fn evidence_is_escaped_and_the_script_is_the_only_one() {
    let (id, mut c) = case("mcp.base.id-echo", "mcp-stdio", "2025-11-25", "fail");
    c["evidence"] = json!([
        "</script><script>alert(1)</script>",
        "<img src=x onerror=alert(2)>",
        "\"quoted\" & 'single' \u{1b}[31m",
    ]);
    c["message"] = json!("bad <b>id</b>");
    c["spec"] = json!("javascript:alert(3)");
    let html = render(&[report("<script>t</script>", vec![(id, c)])]);
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert_eq!(html.matches("</script>").count(), 1);
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"));
    assert!(html.contains("&quot;quoted&quot; &amp; &#39;single&#39; \u{241b}[31m"));
    assert!(!html.contains('\u{1b}'));
    assert!(html.contains("bad &lt;b&gt;id&lt;/b&gt;"));
    assert!(!html.contains("<img"));
    assert!(
        !html.contains("href=\"javascript:"),
        "non-http spec is not a link"
    );
    assert!(html.contains("&lt;script&gt;t&lt;/script&gt;"));
    // The CSP names the script by its hash.
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT));
    assert!(html.contains(&format!("script-src 'sha256-{hash}'")));
    assert!(html.contains(&format!("<script>{SCRIPT}</script>")));
    // No network: the only http(s) URLs are spec links.
    assert!(!html.contains("src=\""), "no src attribute");
    let links: Vec<&str> = html
        .match_indices("href=\"")
        .map(|(i, m)| &html[i + m.len()..][..1])
        .collect();
    assert!(
        links.iter().all(|l| *l == "#"),
        "only fragment links: {links:?}"
    );
}

#[test]
fn columns_are_ordered_by_revision_date_within_each_binding() {
    let r = report(
        "server",
        vec![
            case("a", "mcp-stdio", "2026-07-28", "pass"),
            case("a", "acp", "v1", "pass"),
            case("a", "mcp-stdio", "2024-11-05", "pass"),
            case("a", "mcp-stdio", "2025-11-25", "pass"),
            case("a", "equivalence", "all", "pass"),
            case("a", "mcp-http", "2025-11-25", "pass"),
            case("a", "mcp-http", "2025-06-18", "pass"),
        ],
    );
    let html = render(&[r]);
    let cols: Vec<&str> = html
        .match_indices("<th class=\"col")
        .map(|(i, _)| {
            let rest = &html[i..];
            let t = rest.find("title=\"").unwrap() + 7;
            &rest[t..t + rest[t..].find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        cols,
        [
            "mcp-stdio#2024-11-05",
            "mcp-stdio#2025-11-25",
            "mcp-stdio#2026-07-28",
            "acp#v1",
            "equivalence#all",
            "mcp-http#2025-06-18",
            "mcp-http#2025-11-25",
        ]
    );
    // Each cell still sits under its own column.
    let row = &html[html.find("<tr class=\"row\"").unwrap()..];
    let first = row.find("a@mcp-stdio#2024-11-05").unwrap();
    let last = row.find("a@mcp-http#2025-11-25").unwrap();
    assert!(first < row.find("a@mcp-stdio#2026-07-28").unwrap());
    assert!(row.find("a@mcp-http#2025-06-18").unwrap() < last);
}

#[test]
fn two_reports_side_by_side() {
    let a = report(
        "server-a",
        vec![
            case("mcp.base.id-echo", "mcp-stdio", "2025-11-25", "pass"),
            case("mcp.base.id-echo", "mcp-stdio", "2026-07-28", "fail"),
            case("mcp.base.ping", "mcp-stdio", "2025-11-25", "pass"),
        ],
    );
    let b = report(
        "agent-b",
        vec![
            case("acp.base.id-echo", "acp", "v1", "pass"),
            case("mcp.base.id-echo", "mcp-stdio", "2025-11-25", "warn"),
        ],
    );
    let html = render(&[a, b]);
    assert!(html.contains("server-a"));
    assert!(html.contains("agent-b"));
    // One header group per report: 2 columns for a, 2 for b.
    assert_eq!(
        html.matches("<th class=\"rep gs\" colspan=\"2\"").count(),
        2
    );
    // Rows: first-seen order over both reports.
    let rows: Vec<&str> = html
        .match_indices("<tr class=\"row\" data-check=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        rows,
        ["mcp.base.id-echo", "mcp.base.ping", "acp.base.id-echo"]
    );
    // The same case id in each report has its own cell.
    assert!(
        details_tag(&html, 0, "mcp.base.id-echo@mcp-stdio#2025-11-25").contains("data-v=\"pass\"")
    );
    assert!(
        details_tag(&html, 1, "mcp.base.id-echo@mcp-stdio#2025-11-25").contains("data-v=\"warn\"")
    );
    assert!(details_tag(&html, 1, "acp.base.id-echo@acp#v1").contains("data-v=\"pass\""));
    // Multi-report links carry the report index.
    assert!(html.contains("href=\"#case=1:mcp.base.id-echo%40mcp-stdio%232025-11-25\""));
    // The ping row has an empty cell under report b, and the id-echo row differs.
    assert!(html.contains("<td class=\"none gs\"></td>"));
    assert!(html
        .contains("data-check=\"mcp.base.id-echo\" data-np=\"1\" data-bad=\"1\" data-diff=\"1\""));
    assert!(
        html.contains("data-check=\"mcp.base.ping\" data-np=\"0\" data-bad=\"0\" data-diff=\"0\"")
    );
    assert!(html
        .contains("data-check=\"acp.base.id-echo\" data-np=\"0\" data-bad=\"0\" data-diff=\"0\""));
    assert!(html.contains("<option value=\"diff\">"));
    // Nothing is open without a fragment.
    assert!(!html.contains(" open"));
}

#[test]
fn expected_fail_and_flaky_cells() {
    let (id1, mut c1) = case("mcp.base.batch", "mcp-stdio", "2025-03-26", "fail");
    c1["expected"] = json!({"entry": "mcp.base.batch@*", "reason": "batches are off <yet>"});
    c1["message"] = json!("refused the batch");
    let (id2, mut c2) = case("mcp.base.cancel", "mcp-stdio", "2025-03-26", "flaky");
    c2["attempts"] = json!(3);
    let (id3, c3) = case("mcp.base.slow", "mcp-stdio", "2025-03-26", "timeout");
    let (id4, c4) = case("mcp.base.quiet", "mcp-stdio", "2025-03-26", "not-run");
    let html = render(&[report(
        "t",
        vec![(id1.clone(), c1), (id2.clone(), c2), (id3, c3), (id4, c4)],
    )]);
    let t1 = details_tag(&html, 0, &id1);
    assert!(t1.contains("data-v=\"expected\""), "{t1}");
    assert!(html.contains(">expected fail</summary>"));
    assert!(html
        .contains("expected by entry <code>mcp.base.batch@*</code>: batches are off &lt;yet&gt;"));
    assert!(details_tag(&html, 0, &id2).contains("data-v=\"flaky\""));
    assert!(html.contains(">flaky</summary>"));
    assert!(html.contains("<strong>3 attempt(s)</strong>"));
    assert!(html.contains(">timeout</summary>"));
    assert!(html.contains(">not-run</summary>"));
    // An expected fail is not a failure for the "failures" filter, a flaky one is.
    assert!(html.contains("data-check=\"mcp.base.batch\" data-np=\"1\" data-bad=\"0\""));
    assert!(html.contains("data-check=\"mcp.base.cancel\" data-np=\"1\" data-bad=\"1\""));
    assert!(html.contains("<span class=\"chip v-expected\">1 expected</span>"));
    // One report: links without an index.
    assert!(html.contains("href=\"#case=mcp.base.batch%40mcp-stdio%232025-03-26\""));
}

#[test]
fn diff_lines_are_coloured() {
    let (id, mut c) = case("equivalence.generated.status", "equivalence", "all", "fail");
    c["message"] = json!("differs\n--- mcp\n+++ acp\n@@ -1 +1 @@\n-\"a\"\n+\"b\"");
    c["evidence"] = json!(["-32601 is not a diff line"]);
    let html = render(&[report("t", vec![(id, c)])]);
    assert!(html.contains("<span class=\"dh\">--- mcp</span>"));
    assert!(html.contains("<span class=\"hunk\">@@ -1 +1 @@</span>"));
    assert!(html.contains("<span class=\"del\">-&quot;a&quot;</span>"));
    assert!(html.contains("<span class=\"add\">+&quot;b&quot;</span>"));
    assert!(html.contains("<span>-32601 is not a diff line</span>"));
}

#[test]
fn v1_report_without_new_fields_renders() {
    let v1 = json!({
        "schema_version": 1, "parity_version": "0.0.9", "target": "old",
        "eras": {"legacy": "2025-06-18"}, "notes": ["n1"], "seed": null,
        "summary": {"pass": 1, "fail": 1},
        "duration_ms": 5, "exit_code": 1,
        "cases": {
            "mcp.base.ping@mcp-stdio#2025-06-18": {
                "kind": "active", "check": "mcp.base.ping", "binding": "mcp-stdio",
                "revision": "2025-06-18", "spec": "https://x.test/spec", "level": "MUST",
                "quote": "q", "requirement": "r", "verdict": "fail", "message": "m",
                "evidence": ["line 1"], "duration_ms": 1
            },
            "mcp.base.id-echo@mcp-stdio#2025-06-18": {"verdict": "pass"}
        }
    });
    let html = render(&[v1]);
    assert!(html.contains(">fail</summary>"));
    assert!(html.contains(">pass</summary>"));
    // The check and column come from the id when the fields are missing.
    assert!(html.contains("data-check=\"mcp.base.id-echo\""));
    assert!(html.contains("schema 1"));
    assert!(!html.contains("attempt(s)"));
    assert!(!html.contains("expected by entry"));
    assert!(html.contains("1 note(s)"));
}

#[test]
fn odd_input_never_panics() {
    let odd = [
        json!(null),
        json!([1, 2]),
        json!({"cases": []}),
        json!({"target": 7, "cases": {"x": 1, "y@z": {"verdict": 3, "evidence": "one",
                "expected": "yes", "attempts": "2", "check": ["a"]}, "": {}}}),
        json!({"cases": {"c@b#r": {"verdict": "weird", "evidence": [null, {"a": 1}, 5]}},
                "stale": [{"entry": 1}, 2], "notes": "x", "eras": [1]}),
    ];
    let html = render(&odd);
    assert!(html.contains("report 0"));
    assert!(html.contains(">weird</summary>"));
    assert!(html.contains("{&quot;a&quot;:1}"));
    let empty = render(&[]);
    assert!(empty.contains("No report to show."));
}

#[test]
fn escaping_and_encoding_helpers() {
    assert_eq!(
        esc("a<b>&\"'\u{0}\u{7f}\t\n"),
        "a&lt;b&gt;&amp;&quot;&#39;\u{2400}\u{2421}\t\n"
    );
    assert_eq!(pct("a.b-c_d@e#f 1/é"), "a.b-c_d%40e%23f%201%2F%C3%A9");
    assert_eq!(clip("abcdef", 3), "abc…");
    assert_eq!(clip("ab", 3), "ab");
}

#[test]
fn write_creates_the_file_and_reports_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.html");
    write(&[report("t", vec![])], &path).unwrap();
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    // A missing (nested) directory is created.
    let nested = dir.path().join("missing/deeper/r.html");
    write(&[], &nested).unwrap();
    assert!(nested.is_file());
    // A path under a regular file cannot be written.
    assert!(write(&[], &path.join("r.html")).is_err());
}
