//! The HTML matrix report: one self-contained page from one or more JSON reports.
//!
//! [`render`] takes parsed JSON reports (schema version 2, `docs/report.schema.json`; version 1
//! reports, which lack `partition`, `baseline`, `stale`, `attempts` and `expected`, render too)
//! and lays them side by side like Autobahn|Testsuite's multi-implementation table:
//!
//! - **rows** are checks (each case's `check`, in first-seen order over the reports in order);
//! - **columns** are grouped per report (an implementation: the group header is its `target`,
//!   with its parity version and verdict counts), one column per surface/era `binding#revision`
//!   seen in that report: bindings in first-seen order, each binding's dated revisions oldest
//!   first, then its undated ones (`v1`, `all`);
//! - **cells** are the verdict of the case `check@binding#revision` of that report, coloured:
//!   pass green, fail red, warn amber, skip and not-run grey, timeout purple, flaky striped
//!   orange, and a fail or timeout with a baseline entry (`expected` not null) as
//!   "expected fail" / "expected timeout" in a muted rose. A cell is empty when that report has
//!   no such case; a cell holding several cases (an odd report whose `check` field disagrees
//!   with its id) shows each.
//!
//! Each cell is a `<details class="case" data-report="<report index>" data-case="<case id>">`
//! whose `<summary>` is the coloured verdict; opening it shows its panel (a drawer fixed to the
//! right of the window, so the matrix keeps its layout) with the verdict, message, level, quote
//! and spec link, requirement, kind, duration, attempts, the baseline entry when expected, and
//! the evidence lines in a `<pre>` (unified-diff lines `+`/`-`/`@@` coloured when the case's
//! text holds a diff — equivalence cases carry it in the message). Opening one cell closes the
//! others (`<details name>` plus a script fallback) and puts the cell's link in the URL.
//!
//! **Fragment.** `#case=<percent-encoded case id>` opens that case on load (and on
//! `hashchange`) and scrolls it into view; with several reports it names the first report (in
//! the order given) that has the case, and `#case=<report index>:<case id>` (index from 0, the
//! `:` literal or encoded as `%3A`) names one report's case. Case ids never hold `:`, so both
//! forms are unambiguous. The page writes the second form when it holds several reports, the
//! first when it holds one. A fragment naming no case shows a notice and opens nothing. Without
//! a fragment nothing is opened, not even the first failure: the page stays a compact matrix,
//! and the "rows with a failure" filter finds failures in one step.
//!
//! **Filters.** A text box keeps rows whose check id contains the text (case-insensitive); a
//! select keeps all rows, rows with any non-pass cell, rows with an unexpected fail, timeout or
//! flaky cell, or (with several reports) rows whose verdicts differ between reports.
//!
//! **Safety.** Every string from a report is HTML-escaped (`& < > " '`), and C0 control
//! characters other than tab and newline are shown as Control Pictures (U+2400…), so evidence
//! from an untrusted peer renders as text. No report data is embedded in the script: the one
//! inline script is a constant that reads `data-*` attributes, and the page's Content Security
//! Policy allows only that script (by its SHA-256), inline styles and no network fetches; spec
//! links are plain `<a>` elements and only `http(s)` URLs become links. Missing or oddly typed
//! fields render as empty, never panic.
//!
//! Size (1039 lines): the self-contained HTML matrix (markup, styles and the merge of several
//! reports in one page).

use base64::Engine as _;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// Writes formatted text to a `String` (which cannot fail).
macro_rules! w {
    ($out:expr, $($arg:tt)*) => {{
        let _ = write!($out, $($arg)*);
    }};
}

/// Renders one self-contained HTML page (inline CSS and script, no network) from one or more
/// parsed JSON reports, in the order given; see the module doc for the layout and the URL
/// fragment `#case=[<report index>:]<case id>`.
///
/// Each report is the value `parity run --json` writes (schema version 2, or 1); anything else
/// (not an object, missing or mistyped fields, no `cases`) still renders, with what is there.
/// An empty slice renders a page that says there is no report.
pub fn render(reports: &[Value]) -> String {
    let reps: Vec<Rep<'_>> = reports
        .iter()
        .enumerate()
        .map(|(i, v)| Rep::new(i, v))
        .collect();
    let multi = reps.len() > 1;

    // Rows: checks in first-seen order over the reports in order.
    let mut checks: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for r in &reps {
        for c in &r.cases {
            if seen.insert(c.check) {
                checks.push(c.check);
            }
        }
    }

    let mut out = String::with_capacity(16 * 1024 + reports.len() * 64 * 1024);
    let title = match reps.as_slice() {
        [] => "parity report".to_string(),
        [one] => format!("parity report — {}", one.target),
        many => format!("parity report — {} implementations", many.len()),
    };
    let script_hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT));
    w!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; img-src data:; \
         base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"generator\" content=\"parity {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n\
         </head>\n<body data-reports=\"{}\">\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title),
        reps.len()
    );

    // Top: one card per report with its counts.
    w!(out, "<header>\n<h1>{}</h1>\n", esc(&title));
    if reps.is_empty() {
        out.push_str("<p class=\"empty\">No report to show.</p>\n");
    }
    out.push_str("<div class=\"cards\">\n");
    for r in &reps {
        r.card(&mut out, multi);
    }
    out.push_str("</div>\n");
    legend(&mut out);
    out.push_str("</header>\n");

    // Toolbar.
    out.push_str(
        "<div class=\"toolbar\" role=\"search\">\
         <label>filter checks <input id=\"filter\" type=\"search\" placeholder=\"substring of the check id\" \
         autocomplete=\"off\" spellcheck=\"false\"></label> \
         <label>show <select id=\"show\">\
         <option value=\"all\">all rows</option>\
         <option value=\"np\">rows with a non-pass cell</option>\
         <option value=\"bad\">rows with a failure (fail, timeout, flaky)</option>",
    );
    if multi {
        out.push_str("<option value=\"diff\">rows whose verdicts differ between reports</option>");
    }
    w!(
        out,
        "</select></label> <span id=\"shown\">{} checks</span>\
         <p id=\"note\" class=\"note\" hidden></p></div>\n",
        checks.len()
    );

    // The matrix.
    out.push_str("<main>\n<table class=\"matrix\">\n<thead>\n<tr><th class=\"corner\" rowspan=\"2\">check</th>");
    for r in &reps {
        let span = r.cols.len().max(1);
        w!(
            out,
            "<th class=\"rep gs\" colspan=\"{span}\" title=\"{}\"><span class=\"tgt\">{}{}</span>\
             <span class=\"sub\">parity {} · {}</span></th>",
            esc(&r.target),
            if multi {
                format!("<span class=\"ri\">{}</span> ", r.idx)
            } else {
                String::new()
            },
            esc(&r.target),
            esc(&r.version),
            esc(&r.counts_text())
        );
    }
    out.push_str("</tr>\n<tr>");
    for r in &reps {
        if r.cols.is_empty() {
            out.push_str("<th class=\"col gs\">no cases</th>");
        }
        for (k, col) in r.cols.iter().enumerate() {
            let (b, rev) = col.split_once('#').unwrap_or((col.as_str(), ""));
            w!(
                out,
                "<th class=\"col{}\" title=\"{}\">{}<br><span class=\"rev\">{}</span></th>",
                if k == 0 { " gs" } else { "" },
                esc(col),
                esc(b),
                esc(rev)
            );
        }
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for check in &checks {
        row(&mut out, check, &reps, multi);
    }
    out.push_str("</tbody>\n</table>\n</main>\n");
    let ncases: usize = reps.iter().map(|r| r.cases.len()).sum();
    w!(
        out,
        "<footer>parity {} · {} report(s) · {} check(s) · {} case(s) · click a cell for its \
         evidence; link a case with <code>#case=&lt;case id&gt;</code>{}</footer>\n",
        env!("CARGO_PKG_VERSION"),
        reps.len(),
        checks.len(),
        ncases,
        if multi {
            " or <code>#case=&lt;report index&gt;:&lt;case id&gt;</code>"
        } else {
            ""
        }
    );
    w!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// Writes [`render`]`(reports)` to `path` (created or truncated; a missing directory is
/// created).
///
/// Errors: the directory or file cannot be written (permissions, disk full).
pub fn write(reports: &[Value], path: &std::path::Path) -> std::io::Result<()> {
    crate::base::util::write_file(path, render(reports))
}

/// Orders one report's `binding#revision` columns: bindings in first-seen order, and within a
/// binding the dated revisions (`YYYY-MM-DD`) oldest first, then the others (`v1`, `all`) in
/// first-seen order.
fn order_columns(cols: &mut [String]) {
    let mut bindings: Vec<String> = Vec::new();
    for c in cols.iter() {
        let b = c.split_once('#').map_or(c.as_str(), |(b, _)| b);
        if !bindings.iter().any(|x| x == b) {
            bindings.push(b.to_string());
        }
    }
    let dated = |r: &str| {
        let b = r.as_bytes();
        b.len() == 10
            && b.iter().enumerate().all(|(i, ch)| {
                if i == 4 || i == 7 {
                    *ch == b'-'
                } else {
                    ch.is_ascii_digit()
                }
            })
    };
    // A stable sort keeps first-seen order among equal keys.
    cols.sort_by_cached_key(|c| {
        let (b, r) = c.split_once('#').unwrap_or((c.as_str(), ""));
        let bi = bindings.iter().position(|x| x == b).unwrap_or(usize::MAX);
        if dated(r) {
            (bi, 0, r.to_string())
        } else {
            (bi, 1, String::new())
        }
    });
}

/// One case of a report, with the fields the page shows.
struct Case<'a> {
    id: &'a str,
    check: &'a str,
    col: String,
    body: &'a Value,
}

impl<'a> Case<'a> {
    fn new(id: &'a str, body: &'a Value) -> Self {
        let check = match text(body, "check") {
            "" => id
                .split('@')
                .next()
                .filter(|c| !c.is_empty())
                .unwrap_or("(no check)"),
            c => c,
        };
        let after_at = id.split_once('@').map(|(_, rest)| rest);
        let binding = match text(body, "binding") {
            "" => after_at
                .and_then(|r| r.split('#').next())
                .filter(|b| !b.is_empty())
                .unwrap_or("?"),
            b => b,
        };
        let revision = match text(body, "revision") {
            "" => after_at
                .and_then(|r| r.split_once('#'))
                .map(|(_, rev)| rev)
                .filter(|r| !r.is_empty())
                .unwrap_or("?"),
            r => r,
        };
        Case {
            id,
            check,
            col: format!("{binding}#{revision}"),
            body,
        }
    }

    fn verdict(&self) -> &'a str {
        text(self.body, "verdict")
    }

    /// The baseline entry that expects this case's failure, when there is one.
    fn expected(&self) -> Option<&'a Map<String, Value>> {
        self.body.get("expected").and_then(Value::as_object)
    }

    /// (css class, label) of the cell.
    fn class_label(&self) -> (&'static str, String) {
        let expected = self.expected().is_some();
        match self.verdict() {
            "pass" => ("pass", "pass".into()),
            "fail" if expected => ("expected", "expected fail".into()),
            "fail" => ("fail", "fail".into()),
            "warn" => ("warn", "warn".into()),
            "skip" => ("skip", "skip".into()),
            "not-run" => ("notrun", "not-run".into()),
            "timeout" if expected => ("expected", "expected timeout".into()),
            "timeout" => ("timeout", "timeout".into()),
            "flaky" => ("flaky", "flaky".into()),
            "" => ("other", "?".into()),
            other => ("other", other.to_string()),
        }
    }

    /// An unexpected fail, timeout or flaky.
    fn is_bad(&self) -> bool {
        let (class, _) = self.class_label();
        matches!(class, "fail" | "timeout" | "flaky")
    }
}

/// One report with its cases and columns.
struct Rep<'a> {
    idx: usize,
    value: &'a Value,
    target: String,
    version: String,
    cases: Vec<Case<'a>>,
    cols: Vec<String>,
    /// (check, column index) → indexes into `cases`.
    cells: HashMap<(&'a str, usize), Vec<usize>>,
}

impl<'a> Rep<'a> {
    fn new(idx: usize, value: &'a Value) -> Self {
        let target = match value.get("target") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) | None | Some(Value::Null) => format!("report {idx}"),
            Some(other) => other.to_string(),
        };
        let version = match text(value, "parity_version") {
            "" => "?".to_string(),
            v => v.to_string(),
        };
        let mut cases = Vec::new();
        if let Some(map) = value.get("cases").and_then(Value::as_object) {
            for (id, body) in map {
                cases.push(Case::new(id, body));
            }
        }
        let mut cols: Vec<String> = Vec::new();
        for c in &cases {
            if !cols.contains(&c.col) {
                cols.push(c.col.clone());
            }
        }
        order_columns(&mut cols);
        let col_ix: HashMap<&str, usize> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        let mut cells: HashMap<(&'a str, usize), Vec<usize>> = HashMap::new();
        for (i, c) in cases.iter().enumerate() {
            if let Some(&k) = col_ix.get(c.col.as_str()) {
                cells.entry((c.check, k)).or_default().push(i);
            }
        }
        Rep {
            idx,
            value,
            target,
            version,
            cases,
            cols,
            cells,
        }
    }

    /// Verdict counts from the cases (label order of the summary), plus `expected`, and any
    /// verdict parity does not know under its own name.
    fn counts(&self) -> Vec<(String, &'static str, usize)> {
        let mut known: Vec<(String, &'static str, usize)> = crate::reports::report::ORDER
            .iter()
            .map(|v| {
                let name = v.as_str();
                let class = match name {
                    "not-run" => "notrun",
                    "pass" => "pass",
                    "fail" => "fail",
                    "warn" => "warn",
                    "skip" => "skip",
                    "timeout" => "timeout",
                    "flaky" => "flaky",
                    _ => "other",
                };
                (name.to_string(), class, 0)
            })
            .collect();
        let mut expected = 0;
        let mut other: Vec<(String, &'static str, usize)> = Vec::new();
        for c in &self.cases {
            let v = c.verdict();
            if let Some(slot) = known.iter_mut().find(|(n, _, _)| n == v) {
                slot.2 += 1;
            } else if let Some(slot) = other.iter_mut().find(|(n, _, _)| n == v) {
                slot.2 += 1;
            } else {
                let name = if v.is_empty() { "?" } else { v };
                other.push((name.to_string(), "other", 1));
            }
            if matches!(v, "fail" | "timeout") && c.expected().is_some() {
                expected += 1;
            }
        }
        known.push(("expected".into(), "expected", expected));
        known.extend(other);
        known
    }

    fn counts_text(&self) -> String {
        let parts: Vec<String> = self
            .counts()
            .into_iter()
            .filter(|(_, _, n)| *n > 0)
            .map(|(name, _, n)| format!("{n} {name}"))
            .collect();
        if parts.is_empty() {
            "no cases".into()
        } else {
            parts.join(", ")
        }
    }

    /// The report's card at the top of the page.
    fn card(&self, out: &mut String, multi: bool) {
        let v = self.value;
        w!(out, "<section class=\"card\">\n<h2>");
        if multi {
            w!(out, "<span class=\"ri\">{}</span> ", self.idx);
        }
        w!(out, "{}</h2>\n<p class=\"meta\">", esc(&self.target));
        let mut meta: Vec<String> = vec![format!("parity {}", esc(&self.version))];
        if let Some(s) = v.get("schema_version").filter(|s| !s.is_null()) {
            meta.push(format!("schema {}", esc(&scalar(s))));
        }
        if !v.is_object() {
            meta.push("not a JSON object".into());
        }
        if let Some(eras) = v.get("eras").and_then(Value::as_object) {
            for (era, rev) in eras {
                meta.push(format!("{} {}", esc(era), esc(&scalar(rev))));
            }
        }
        for (key, label) in [
            ("seed", "seed"),
            ("partition", "partition"),
            ("baseline", "baseline"),
        ] {
            if let Some(x) = v.get(key).filter(|x| !x.is_null()) {
                meta.push(format!("{label} {}", esc(&scalar(x))));
            }
        }
        if let Some(ms) = v.get("duration_ms").filter(|x| !x.is_null()) {
            meta.push(format!("{} ms", esc(&scalar(ms))));
        }
        if let Some(code) = v.get("exit_code").filter(|x| !x.is_null()) {
            meta.push(format!("exit {}", esc(&scalar(code))));
        }
        out.push_str(&meta.join(" · "));
        out.push_str("</p>\n<p class=\"counts\">");
        w!(
            out,
            "<span class=\"total\">{} cases</span>",
            self.cases.len()
        );
        for (name, class, n) in self.counts() {
            if n > 0 {
                w!(
                    out,
                    " <span class=\"chip v-{class}\">{n} {}</span>",
                    esc(&name)
                );
            }
        }
        out.push_str("</p>\n");
        let notes: Vec<String> = v
            .get("notes")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(scalar).collect())
            .unwrap_or_default();
        if !notes.is_empty() {
            w!(
                out,
                "<details class=\"notes\"><summary>{} note(s)</summary><ul>",
                notes.len()
            );
            for n in &notes {
                w!(out, "<li>{}</li>", esc(n));
            }
            out.push_str("</ul></details>\n");
        }
        let stale: &[Value] = v
            .get("stale")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if !stale.is_empty() {
            w!(
                out,
                "<details class=\"notes stale\"><summary>{} stale baseline entr{}</summary><ul>",
                stale.len(),
                if stale.len() == 1 { "y" } else { "ies" }
            );
            for s in stale {
                let cases: Vec<String> = s
                    .get("cases")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(scalar).collect())
                    .unwrap_or_default();
                w!(
                    out,
                    "<li><code>{}</code> (line {}): {} — cases: {}</li>",
                    esc(text(s, "entry")),
                    esc(&s.get("line").map(scalar).unwrap_or_default()),
                    esc(text(s, "reason")),
                    esc(&cases.join(", "))
                );
            }
            out.push_str("</ul></details>\n");
        }
        out.push_str("</section>\n");
    }
}

/// One matrix row: a check across every report's columns.
fn row(out: &mut String, check: &str, reps: &[Rep<'_>], multi: bool) {
    let mut non_pass = false;
    let mut bad = false;
    let mut per_report: Vec<Vec<String>> = Vec::new();
    let mut first: Option<&Case<'_>> = None;
    for r in reps {
        let mut labels = Vec::new();
        for k in 0..r.cols.len() {
            if let Some(ix) = r.cells.get(&(check, k)) {
                for &i in ix {
                    if let Some(c) = r.cases.get(i) {
                        first.get_or_insert(c);
                        non_pass |= c.verdict() != "pass";
                        bad |= c.is_bad();
                        labels.push(c.class_label().1);
                    }
                }
            }
        }
        per_report.push(labels);
    }
    // A row differs when two reports that have the check show different sets of verdicts
    // (column names aside: implementations of different surfaces have different columns).
    let differ = multi && {
        let sets: Vec<Vec<String>> = per_report
            .into_iter()
            .filter(|l| !l.is_empty())
            .map(|mut l| {
                l.sort_unstable();
                l.dedup();
                l
            })
            .collect();
        sets.windows(2).any(|w| w[0] != w[1])
    };
    let level = first.map(|c| text(c.body, "level")).unwrap_or("");
    let requirement = first.map(|c| text(c.body, "requirement")).unwrap_or("");
    w!(
        out,
        "<tr class=\"row\" data-check=\"{}\" data-np=\"{}\" data-bad=\"{}\" data-diff=\"{}\">\
         <th scope=\"row\" class=\"check\" title=\"{}\"><code>{}</code>{}</th>",
        esc(&check.to_lowercase()),
        u8::from(non_pass),
        u8::from(bad),
        u8::from(differ),
        esc(requirement),
        esc(check),
        if level.is_empty() {
            String::new()
        } else {
            format!(" <span class=\"lvl\">{}</span>", esc(level))
        }
    );
    for r in reps {
        if r.cols.is_empty() {
            out.push_str("<td class=\"gs\"></td>");
        }
        for k in 0..r.cols.len() {
            let gs = if k == 0 { " gs" } else { "" };
            let ix = r.cells.get(&(check, k));
            match ix {
                None => w!(out, "<td class=\"none{gs}\"></td>"),
                Some(ix) => {
                    w!(out, "<td class=\"cell{gs}\">");
                    for &i in ix {
                        if let Some(c) = r.cases.get(i) {
                            cell(out, r, c, multi);
                        }
                    }
                    out.push_str("</td>");
                }
            }
        }
    }
    out.push_str("</tr>\n");
}

/// One case's `<details>`: the coloured verdict and its evidence panel.
fn cell(out: &mut String, r: &Rep<'_>, c: &Case<'_>, multi: bool) {
    let (class, label) = c.class_label();
    let body = c.body;
    let message = text(body, "message");
    let first_line = message.lines().next().unwrap_or("");
    let link = format!(
        "#case={}{}",
        if multi {
            format!("{}:", r.idx)
        } else {
            String::new()
        },
        pct(c.id)
    );
    w!(
        out,
        "<details class=\"case\" data-v=\"{class}\" name=\"parity-case\" data-report=\"{}\" data-case=\"{}\">\
         <summary class=\"v-{class}\" title=\"{}: {}{}\">{}</summary>\n",
        r.idx,
        esc(c.id),
        esc(c.id),
        esc(&label),
        if first_line.is_empty() {
            String::new()
        } else {
            format!(" — {}", esc(&clip(first_line, 200)))
        },
        esc(&label)
    );
    w!(
        out,
        "<div class=\"panel\" role=\"region\" aria-label=\"case {}\">\
         <div class=\"ph\"><span class=\"chip v-{class}\">{}</span> <a class=\"cid\" href=\"{}\" \
         title=\"link to this case\"><code>{}</code></a>\
         <button type=\"button\" class=\"close\" title=\"close (Esc)\" aria-label=\"close\">×</button></div>\n",
        esc(c.id),
        esc(&label),
        esc(&link),
        esc(c.id)
    );
    w!(out, "<p class=\"ptgt\">{}</p>\n<dl>", esc(&r.target));
    let diffish = |lines: &[&str]| {
        lines
            .iter()
            .any(|l| l.starts_with("@@") || l.starts_with("--- ") || l.starts_with("+++ "))
    };
    if !message.is_empty() {
        let lines: Vec<&str> = message.split('\n').collect();
        if lines.len() > 1 {
            w!(out, "<dt>message</dt><dd><pre class=\"msg\">");
            pre_lines(out, &lines, diffish(&lines));
            out.push_str("</pre></dd>");
        } else {
            w!(
                out,
                "<dt>message</dt><dd class=\"msg\">{}</dd>",
                esc(message)
            );
        }
    }
    let level = text(body, "level");
    let quote = text(body, "quote");
    let spec = text(body, "spec");
    if !level.is_empty() || !quote.is_empty() || !spec.is_empty() {
        out.push_str("<dt>rule</dt><dd>");
        if !level.is_empty() {
            let advisory = c.verdict() == "warn" && level.starts_with("MUST");
            w!(
                out,
                "<span class=\"lvl\">{}{}</span> ",
                if advisory { "advisory under " } else { "" },
                esc(level)
            );
        }
        if !quote.is_empty() {
            w!(out, "<q>{}</q> ", esc(quote));
        }
        if spec.starts_with("https://") || spec.starts_with("http://") {
            w!(
                out,
                "<a class=\"spec\" href=\"{}\" rel=\"noopener noreferrer\" target=\"_blank\">{}</a>",
                esc(spec),
                esc(spec)
            );
        } else if !spec.is_empty() {
            w!(out, "<code class=\"spec\">{}</code>", esc(spec));
        }
        out.push_str("</dd>");
    }
    let requirement = text(body, "requirement");
    if !requirement.is_empty() {
        w!(out, "<dt>requirement</dt><dd>{}</dd>", esc(requirement));
    }
    let mut run = Vec::new();
    let kind = text(body, "kind");
    if !kind.is_empty() {
        run.push(esc(kind));
    }
    if let Some(ms) = body.get("duration_ms").filter(|x| !x.is_null()) {
        run.push(format!("{} ms", esc(&scalar(ms))));
    }
    if let Some(a) = body.get("attempts").filter(|x| !x.is_null()) {
        let n = scalar(a);
        let retried = a.as_u64().is_some_and(|n| n > 1);
        run.push(format!(
            "{}{} attempt(s){}",
            if retried { "<strong>" } else { "" },
            esc(&n),
            if retried { "</strong>" } else { "" }
        ));
    }
    if !run.is_empty() {
        w!(out, "<dt>run</dt><dd>{}</dd>", run.join(" · "));
    }
    if let Some(exp) = c.expected() {
        let entry = exp.get("entry").map(scalar).unwrap_or_default();
        let reason = exp.get("reason").map(scalar).unwrap_or_default();
        w!(
            out,
            "<dt>baseline</dt><dd class=\"baseline\">expected by entry <code>{}</code>{}</dd>",
            esc(&entry),
            if reason.is_empty() {
                String::new()
            } else {
                format!(": {}", esc(&reason))
            }
        );
    }
    out.push_str("</dl>\n");
    let evidence: Vec<String> = body
        .get("evidence")
        .map(|e| match e {
            Value::Array(a) => a.iter().map(scalar).collect(),
            Value::Null => Vec::new(),
            other => vec![scalar(other)],
        })
        .unwrap_or_default();
    let lines: Vec<&str> = evidence.iter().flat_map(|e| e.split('\n')).collect();
    if lines.is_empty() {
        out.push_str("<p class=\"noev\">no evidence lines</p>\n");
    } else {
        w!(
            out,
            "<h4>evidence ({} line{})</h4><pre class=\"ev\">",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" }
        );
        pre_lines(out, &lines, diffish(&lines));
        out.push_str("</pre>\n");
    }
    out.push_str("</div></details>");
}

/// Lines of a `<pre>`, each in a span, diff lines classed when `diff`.
fn pre_lines(out: &mut String, lines: &[&str], diff: bool) {
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let class = if !diff {
            ""
        } else if l.starts_with("+++ ") || l.starts_with("--- ") {
            "dh"
        } else if l.starts_with("@@") {
            "hunk"
        } else if l.starts_with('+') {
            "add"
        } else if l.starts_with('-') {
            "del"
        } else {
            ""
        };
        if class.is_empty() {
            w!(out, "<span>{}</span>", esc(l));
        } else {
            w!(out, "<span class=\"{class}\">{}</span>", esc(l));
        }
    }
}

/// The colour legend under the cards.
fn legend(out: &mut String) {
    out.push_str("<p class=\"legend\">");
    for (class, label) in [
        ("pass", "pass"),
        ("fail", "fail"),
        ("warn", "warn"),
        ("skip", "skip"),
        ("notrun", "not-run"),
        ("timeout", "timeout"),
        ("flaky", "flaky"),
        ("expected", "expected fail (baseline)"),
    ] {
        w!(out, "<span class=\"chip v-{class}\">{label}</span> ");
    }
    out.push_str("</p>\n");
}

/// A string field of an object, or "" when missing or not a string.
fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A JSON value as display text: strings as they are, null as "", anything else as JSON.
fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// At most `max` characters of `s`, with an ellipsis when cut.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((end, _)) => format!("{}…", &s[..end]),
    }
}

/// HTML-escapes text for element content and quoted attribute values; C0 controls other than
/// tab and newline (and DEL) become their Control Pictures, so raw bytes cannot alter parsing.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(ch),
            c if (c as u32) < 0x20 => {
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'))
            }
            '\u{7f}' => out.push('\u{2421}'),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encodes everything but RFC 3986 unreserved characters (as `encodeURIComponent`
/// does, plus `!*'()`), for the `#case=` fragment.
fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            w!(out, "%{b:02X}");
        }
    }
    out
}

/// The page's stylesheet.
const STYLE: &str = r#"
:root{--pass:#2f8f46;--fail:#c62828;--warn:#e0a100;--skip:#c9ced6;--notrun:#e4e7eb;--timeout:#6a1b9a;--flaky:#ef6c00;--expected:#e8cfcf;--drawer:min(44vw,700px);color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d232b;background:#f6f7f9}
body:has(details.case[open]){margin-right:var(--drawer)}
header{padding:12px 16px 4px}
h1{font-size:18px;margin:0 0 8px;overflow-wrap:anywhere}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:8px 12px;min-width:280px;max-width:100%;flex:1 1 360px}
.card h2{font-size:14px;margin:0 0 4px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.meta{margin:0 0 6px;color:#56606b;font-size:12px;overflow-wrap:anywhere}
.counts{margin:0}
.total{font-weight:600;margin-right:4px}
.notes summary{cursor:pointer;font-size:12px;color:#56606b;margin-top:4px}
.notes ul{margin:4px 0;padding-left:18px;font-size:12px;max-height:180px;overflow:auto;overflow-wrap:anywhere}
.stale summary{color:#8a4b00;font-weight:600}
.ri{display:inline-block;min-width:1.6em;padding:0 4px;border-radius:3px;background:#1d232b;color:#fff;text-align:center;font-size:11px;font-family:system-ui,sans-serif}
.legend{margin:8px 0 0;font-size:12px}
.chip{display:inline-block;padding:1px 7px;border-radius:10px;font-size:12px;white-space:nowrap}
.toolbar{display:flex;flex-wrap:wrap;align-items:center;gap:6px 14px;padding:8px 16px;font-size:13px}
.toolbar input{width:260px;padding:3px 6px;font:inherit}
.toolbar select{font:inherit;padding:2px}
#shown{color:#56606b}
.note{flex-basis:100%;margin:0;padding:4px 8px;background:#fff3cd;border:1px solid #e0c46c;border-radius:4px}
main{padding:0 16px 16px}
table.matrix{border-collapse:separate;border-spacing:0;background:#fff;border:1px solid #dde1e6}
.matrix thead{position:sticky;top:0;z-index:3}
.matrix th,.matrix td{border-bottom:1px solid #eceef1;padding:2px 3px}
.matrix thead th{background:#eef1f4;font-weight:600;font-size:12px;text-align:center;vertical-align:bottom}
.matrix th.corner{text-align:left;vertical-align:bottom;position:sticky;left:0;z-index:4}
.rep .tgt,.rep .sub{display:block;width:0;min-width:100%;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.rep .tgt{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.rep .sub{font-weight:400;color:#56606b}
.col{white-space:nowrap;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:11px}
.col .rev{font-weight:400;color:#56606b}
.gs{border-left:3px solid #b9c0c8 !important}
th.check{text-align:left;font-weight:400;white-space:nowrap;position:sticky;left:0;background:#fff;z-index:1;padding-right:10px}
th.check code{font-size:12px}
.lvl{font-size:10px;color:#56606b;border:1px solid #ccd2d8;border-radius:3px;padding:0 3px;margin-left:4px;white-space:nowrap}
tr.row:hover th.check,tr.row:hover td{background:#f3f6fa}
td.cell,td.none{text-align:center;min-width:86px}
details.case{display:block;margin:1px 0}
details.case>summary{list-style:none;cursor:pointer;border-radius:3px;padding:2px 6px;font-size:12px;white-space:nowrap;user-select:none}
details.case>summary::-webkit-details-marker{display:none}
details.case>summary:focus-visible{outline:2px solid #1565c0;outline-offset:1px}
details.case[open]>summary{outline:3px solid #1565c0;outline-offset:1px;font-weight:700}
.v-pass{background:var(--pass);color:#fff}
.v-fail{background:var(--fail);color:#fff;font-weight:700}
.v-warn{background:var(--warn);color:#1d232b}
.v-skip{background:var(--skip);color:#3b4450}
.v-notrun{background:var(--notrun);color:#5f6873;font-style:italic}
.v-timeout{background:var(--timeout);color:#fff;font-weight:700}
.v-flaky{background:repeating-linear-gradient(135deg,var(--flaky) 0 6px,#ff9d45 6px 12px);color:#1d232b;font-weight:700}
.v-expected{background:var(--expected);color:#7a3e3e;border:1px dashed #b07a7a}
.v-other{background:#9aa3ad;color:#fff}
.panel{position:fixed;top:0;right:0;bottom:0;width:var(--drawer);overflow:auto;background:#fff;border-left:1px solid #c3c9d0;box-shadow:-4px 0 16px rgba(0,0,0,.12);padding:12px 16px;z-index:10;text-align:left;white-space:normal;cursor:auto}
@media (max-width:800px){:root{--drawer:100vw}body:has(details.case[open]){margin-right:0}}
.ph{display:flex;align-items:center;gap:8px}
.ph .cid{flex:1;overflow-wrap:anywhere;color:#1d232b;text-decoration:none}
.ph .cid:hover{text-decoration:underline}
.close{border:1px solid #c3c9d0;background:#f6f7f9;border-radius:4px;font-size:18px;line-height:1;padding:2px 8px;cursor:pointer}
.ptgt{margin:4px 0 8px;color:#56606b;font-size:12px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.panel dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 12px;margin:0 0 8px}
.panel dt{font-weight:600;color:#56606b}
.panel dd{margin:0;overflow-wrap:anywhere}
.panel q{font-style:italic}
.panel h4{margin:10px 0 4px;font-size:13px}
.noev{color:#56606b;font-style:italic}
pre{margin:0;padding:8px;background:#f4f5f7;border:1px solid #e1e4e8;border-radius:4px;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
pre.msg{background:#fff8f8}
pre .add{background:#e6ffec;color:#116329;display:inline-block;width:100%}
pre .del{background:#ffebe9;color:#a40e26;display:inline-block;width:100%}
pre .hunk{color:#6f42c1}
pre .dh{color:#56606b;font-weight:700}
footer{padding:8px 16px 24px;color:#56606b;font-size:12px}
tr[hidden]{display:none}
"#;

/// The page's only script: filters, the `#case=` fragment, one open cell at a time. It holds no
/// report data; the page's CSP allows it by its SHA-256.
const SCRIPT: &str = r##"
(function () {
  "use strict";
  var doc = document;
  var cases = Array.prototype.slice.call(doc.querySelectorAll("details.case"));
  var rows = Array.prototype.slice.call(doc.querySelectorAll("tr.row"));
  var multi = doc.body.getAttribute("data-reports") !== "1";
  var filter = doc.getElementById("filter");
  var show = doc.getElementById("show");
  var shown = doc.getElementById("shown");
  var note = doc.getElementById("note");

  function apply() {
    var q = filter.value.trim().toLowerCase();
    var mode = show.value;
    var n = 0;
    rows.forEach(function (r) {
      var ok = (!q || r.getAttribute("data-check").indexOf(q) !== -1) &&
        (mode === "all" || r.getAttribute("data-" + mode) === "1");
      r.hidden = !ok;
      if (ok) { n++; }
    });
    shown.textContent = n === rows.length ? rows.length + " checks" : n + " of " + rows.length + " checks";
  }
  filter.addEventListener("input", apply);
  show.addEventListener("change", apply);

  function hashFor(d) {
    return "#case=" + (multi ? d.getAttribute("data-report") + ":" : "") +
      encodeURIComponent(d.getAttribute("data-case"));
  }
  function setHash(h) {
    try { history.replaceState(null, "", h || location.pathname + location.search); } catch (e) { /* file:// quirks */ }
  }
  function find(v) {
    var m = /^(\d+):([\s\S]*)$/.exec(v);
    var i;
    if (m) {
      for (i = 0; i < cases.length; i++) {
        if (cases[i].getAttribute("data-report") === m[1] && cases[i].getAttribute("data-case") === m[2]) { return cases[i]; }
      }
    }
    for (i = 0; i < cases.length; i++) {
      if (cases[i].getAttribute("data-case") === v) { return cases[i]; }
    }
    return null;
  }
  function say(text) {
    note.textContent = text;
    note.hidden = !text;
  }
  function fromHash() {
    var h = location.hash.replace(/^#/, "");
    var v = null;
    h.split("&").forEach(function (p) { if (p.indexOf("case=") === 0) { v = p.slice(5); } });
    if (v === null) { return; }
    try { v = decodeURIComponent(v); } catch (e) { say("the URL names a case that is not valid percent-encoding"); return; }
    var d = find(v);
    if (!d) { say("no case " + v + " in this report"); return; }
    say("");
    var row = d.closest("tr");
    if (row && row.hidden) { filter.value = ""; show.value = "all"; apply(); }
    d.open = true;
    var s = d.querySelector("summary") || d;
    s.scrollIntoView({ block: "center", inline: "center" });
    try { s.focus({ preventScroll: true }); } catch (e) { /* old browsers */ }
  }
  cases.forEach(function (d) {
    d.addEventListener("toggle", function () {
      if (d.open) {
        cases.forEach(function (o) { if (o !== d && o.open) { o.open = false; } });
        setHash(hashFor(d));
      } else if (location.hash === hashFor(d)) {
        setHash("");
      }
    });
    var b = d.querySelector(".close");
    if (b) { b.addEventListener("click", function () { d.open = false; }); }
  });
  doc.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { cases.forEach(function (d) { d.open = false; }); }
  });
  window.addEventListener("hashchange", fromHash);
  apply();
  fromHash();
})();
"##;

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
