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

use crate::engine::check::Verdict;
use crate::engine::run::RunReport;
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
        "startup_ms": report.startup_ms,
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

/// Writes the JSON report to `path` (a missing directory is created). Errors: the file cannot
/// be written.
pub fn write_json(
    report: &RunReport,
    baseline: Option<&std::path::Path>,
    path: &std::path::Path,
) -> std::io::Result<()> {
    let text =
        serde_json::to_string_pretty(&to_json(report, baseline)).map_err(std::io::Error::other)?;
    crate::base::util::write_file(path, text + "\n")
}

/// How much the console report prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `--quiet`: only the cases that failed, warned, timed out, were flaky or could not run
    /// (with their reason), the table and the summary line.
    Quiet,
    /// Every case, reasons and spec quotes of the ones that did not pass, evidence of fails
    /// and timeouts.
    Normal,
    /// `--verbose`: also the era-detection notes and evidence of every case that did not pass.
    Verbose,
}

/// The console tag of a verdict (`PASS`, `FAIL`, …); a failure a baseline expects is
/// `XFAIL`.
fn tag(c: &crate::engine::run::CaseResult) -> &'static str {
    if c.expected.is_some() {
        return "XFAIL";
    }
    match c.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Warn => "WARN",
        Verdict::Skip => "SKIP",
        Verdict::NotRun => "NOT-RUN",
        Verdict::Timeout => "TIMEOUT",
        Verdict::Flaky => "FLAKY",
    }
}

/// `--color`: when the console report colours its verdict words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    /// Always colour, even into a pipe or a file (and despite `NO_COLOR`).
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Whether to colour: `always` and `never` decide alone; `auto` colours a terminal
    /// (`is_terminal`) unless `no_color` (the `NO_COLOR` variable) is set to a non-empty value
    /// (<https://no-color.org>).
    pub fn enabled(self, is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => is_terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }

    /// [`ColorChoice::enabled`] for this process's stdout and environment.
    pub fn for_stdout(self) -> bool {
        use std::io::IsTerminal;
        self.enabled(
            std::io::stdout().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        )
    }
}

/// The terminal style of a console tag: green passes, red failures and timeouts, yellow
/// warnings and flaky cases, magenta expected failures, dimmed skips and not-run cases.
fn tag_style(tag: &str) -> anstyle::Style {
    use anstyle::{AnsiColor, Style};
    let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    match tag {
        "PASS" => fg(AnsiColor::Green),
        "FAIL" | "TIMEOUT" | "STALE" => fg(AnsiColor::Red).bold(),
        "WARN" | "FLAKY" => fg(AnsiColor::Yellow),
        "XFAIL" => fg(AnsiColor::Magenta),
        _ => Style::new().dimmed(),
    }
}

/// `tag` left-aligned in 8 columns, coloured when `color` is on (the padding stays outside
/// the escape codes, so columns line up either way).
fn padded_tag(tag: &str, color: bool) -> String {
    let pad = " ".repeat(8usize.saturating_sub(tag.len()));
    if color {
        let st = tag_style(tag);
        format!("{}{tag}{}{pad}", st.render(), st.render_reset())
    } else {
        format!("{tag}{pad}")
    }
}

/// Prints the console report without colour; see [`print_console_colored`].
pub fn print_console(report: &RunReport, out: &mut dyn Write, style: Style) -> std::io::Result<()> {
    print_console_colored(report, out, style, false)
}

/// Prints the console report: one line per case (in `Quiet` style, only the cases that did
/// not pass), the reason and evidence under every case that did not pass (evidence only with
/// `Verbose`, or for fails and timeouts), stale baseline entries, a table of verdicts per
/// profile, then the summary line
/// `summary: N pass, N fail, N warn, N skip, N not-run, N timeout, N flaky in T ms`. With
/// `color`, the verdict words (`PASS`, `FAIL`, …, `STALE`) carry ANSI colours.
pub fn print_console_colored(
    report: &RunReport,
    out: &mut dyn Write,
    style: Style,
    color: bool,
) -> std::io::Result<()> {
    let verbose = style == Style::Verbose;
    writeln!(out, "target: {}", report.target)?;
    let mut eras: Vec<_> = report.eras.iter().collect();
    eras.sort();
    for (era, rev) in eras {
        writeln!(out, "era {era}: revision {rev}")?;
    }
    if let Some(seed) = report.seed {
        writeln!(out, "equivalence: seed {seed} (rerun with --seed {seed})")?;
    }
    if let Some(p) = &report.partition {
        writeln!(out, "partition: {p}")?;
    }
    for n in &report.notes {
        if verbose {
            writeln!(out, "note: {n}")?;
        }
    }
    for c in &report.cases {
        if style == Style::Quiet && matches!(c.verdict, Verdict::Pass | Verdict::Skip) {
            continue;
        }
        let tag = tag(c);
        let tries = if c.attempts > 1 {
            format!(", {} attempts", c.attempts)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{} {} ({} ms{tries})",
            padded_tag(tag, color),
            c.id,
            c.duration_ms
        )?;
        if c.verdict != Verdict::Pass {
            if !c.message.is_empty() {
                writeln!(out, "         {}", c.message)?;
            }
            if let Some(mark) = &c.expected {
                writeln!(
                    out,
                    "         expected by baseline entry `{}`: {}",
                    mark.entry, mark.reason
                )?;
            }
            if matches!(
                c.verdict,
                Verdict::Fail | Verdict::Warn | Verdict::Timeout | Verdict::Flaky
            ) {
                // A warning under a MUST check is an advisory: a lesser deviation than the rule
                // quoted (e.g. an unconventional error code), never a violation of it.
                let how = if c.verdict == Verdict::Warn && c.level.starts_with("MUST") {
                    format!("advisory under {}", c.level)
                } else {
                    c.level.clone()
                };
                writeln!(out, "         {how} {}: \"{}\"", c.spec, c.quote)?;
            }
            let unexpected =
                matches!(c.verdict, Verdict::Fail | Verdict::Timeout) && c.expected.is_none();
            if verbose || unexpected {
                for e in c.evidence.iter().take(if verbose { 40 } else { 12 }) {
                    writeln!(out, "           {e}")?;
                }
            }
        }
    }
    for e in &report.stale {
        writeln!(
            out,
            "{} baseline entry `{}` (line {}): every case it lists passed ({}); remove it",
            padded_tag("STALE", color),
            e.entry,
            e.line,
            e.cases.join(", ")
        )?;
    }
    write_table(report, out)?;
    writeln!(out, "{}", summary_line(report))?;
    if report.executed() == 0 && report.exit_code() == 3 {
        writeln!(out, "no check executed: this run is not a pass (exit 3)")?;
    }
    Ok(())
}

/// The verdict table: a row per profile with cases, a total row; columns every verdict, then
/// `expected` (failures a baseline lists, counted under fail/timeout too).
fn write_table(report: &RunReport, out: &mut dyn Write) -> std::io::Result<()> {
    let mut profiles: Vec<&str> = Vec::new();
    for c in &report.cases {
        let p = report.profile_of(c);
        if !profiles.contains(&p) {
            profiles.push(p);
        }
    }
    if profiles.is_empty() {
        return Ok(());
    }
    let row = |name: &str, cases: &mut dyn Iterator<Item = &crate::engine::run::CaseResult>| {
        let mut n = [0usize; 8];
        for c in cases {
            if let Some(i) = ORDER.iter().position(|v| *v == c.verdict) {
                n[i] += 1;
            }
            if c.expected.is_some() {
                n[7] += 1;
            }
        }
        let cells: Vec<String> = n.iter().map(|x| format!("{x:>9}")).collect();
        format!("{name:<12}{}", cells.join(""))
    };
    let head: Vec<String> = ORDER
        .iter()
        .map(|v| v.as_str())
        .chain(["expected"])
        .map(|h| format!("{h:>9}"))
        .collect();
    writeln!(out, "{:<12}{}", "profile", head.join(""))?;
    for p in &profiles {
        let mut it = report.cases.iter().filter(|c| report.profile_of(c) == *p);
        writeln!(out, "{}", row(p, &mut it))?;
    }
    if profiles.len() > 1 {
        writeln!(out, "{}", row("total", &mut report.cases.iter()))?;
    }
    Ok(())
}

/// `summary: 30 pass, 0 fail, 1 warn, 2 skip, 0 not-run, 0 timeout, 0 flaky in 412 ms`, with
/// `(N expected by the baseline)` and `, N stale baseline entries` when a baseline applies.
pub fn summary_line(report: &RunReport) -> String {
    let counts = report.counts();
    let parts: Vec<String> = ORDER
        .iter()
        .map(|v| format!("{} {}", counts.get(v).copied().unwrap_or(0), v.as_str()))
        .collect();
    let mut extra = String::new();
    if report.expected_failures() > 0 {
        extra.push_str(&format!(
            " ({} expected by the baseline)",
            report.expected_failures()
        ));
    }
    if !report.stale.is_empty() {
        let n = report.stale.len();
        extra.push_str(&format!(
            ", {n} stale baseline {}",
            if n == 1 { "entry" } else { "entries" }
        ));
    }
    let lost = report.unexpected_not_run();
    if lost > 0 {
        extra.push_str(&format!(
            "; {lost} case{} could not run (not covered by this run: exit 3 unless a baseline lists {})",
            if lost == 1 { "" } else { "s" },
            if lost == 1 { "it" } else { "them" }
        ));
    }
    format!(
        "summary: {}{extra} in {} ms",
        parts.join(", "),
        report.duration_ms
    )
}

/// Escapes a GitHub Actions workflow-command value (`%`, CR, LF; in properties also `:`
/// and `,`).
fn gh_escape(s: &str, property: bool) -> String {
    let mut o = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        o = o.replace(':', "%3A").replace(',', "%2C");
    }
    o
}

/// Prints GitHub Actions annotations (`GITHUB_ACTIONS=true`): `::error` for each unexpected
/// fail or timeout, each reason the run could not happen, and each stale baseline entry (at its
/// line of the baseline file),
/// `::warning` for warnings and flaky cases.
pub fn print_github_annotations(
    report: &RunReport,
    baseline: Option<&std::path::Path>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for c in &report.cases {
        let kind = match c.verdict {
            Verdict::Fail | Verdict::Timeout if c.expected.is_none() => "error",
            Verdict::Warn | Verdict::Flaky => "warning",
            _ => continue,
        };
        let body = format!(
            "{}: {} ({} {}: \"{}\")",
            c.verdict.as_str(),
            c.message,
            c.level,
            c.spec,
            c.quote
        );
        writeln!(
            out,
            "::{kind} title={}::{}",
            gh_escape(&format!("parity {}", c.id), true),
            gh_escape(&body, false)
        )?;
    }
    for why in &report.could_not_run {
        writeln!(
            out,
            "::error title={}::{}",
            gh_escape("parity could not run", true),
            gh_escape(why, false)
        )?;
    }
    for e in &report.stale {
        let file = baseline
            .map(|p| {
                format!(
                    "file={},line={},",
                    gh_escape(&p.display().to_string(), true),
                    e.line
                )
            })
            .unwrap_or_default();
        writeln!(
            out,
            "::error {file}title={}::{}",
            gh_escape("parity stale baseline entry", true),
            gh_escape(
                &format!(
                    "`{}` lists cases that all passed ({}); remove the entry",
                    e.entry,
                    e.cases.join(", ")
                ),
                false
            )
        )?;
    }
    Ok(())
}

/// How often a run without a terminal reports how far it got.
pub const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(10);

/// Progress while a run goes, on stderr: an `indicatif` bar when stderr is a terminal (failing,
/// timed-out and flaky cases printed above it); otherwise, as in CI logs, where stdout and
/// stderr land in one log, no line per case (the report on stdout lists each case once) but a
/// heartbeat at most every [`HEARTBEAT`]: `parity: [40/62] cases done (12 s)`. Nothing with
/// `--quiet`. The bar is cleared by [`Progress::finish`].
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    done: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    total: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Progress {
    /// A progress display for this process's stderr (`quiet` turns it off).
    pub fn new(quiet: bool) -> Progress {
        use std::io::IsTerminal;
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let b = indicatif::ProgressBar::new(0);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
            ) {
                b.set_style(style);
            }
            b
        });
        Progress {
            bar,
            plain: !quiet && !tty,
            done: Default::default(),
            total: Default::default(),
        }
    }

    /// The sink a [`crate::engine::run::RunControl`] reports to.
    pub fn sink(&self) -> crate::engine::run::ProgressFn {
        let bar = self.bar.clone();
        let plain = self.plain;
        let done = self.done.clone();
        let total = self.total.clone();
        let started = std::time::Instant::now();
        let last = std::sync::Mutex::new(started);
        Box::new(move |event| {
            use std::sync::atomic::Ordering::SeqCst;
            match event {
                crate::engine::run::Progress::Planned(n) => {
                    total.fetch_add(n, SeqCst);
                    if let Some(b) = &bar {
                        b.inc_length(n as u64);
                    }
                }
                crate::engine::run::Progress::Finished(c) => {
                    let i = done.fetch_add(1, SeqCst) + 1;
                    if let Some(b) = &bar {
                        b.inc(1);
                        b.set_message(c.id.clone());
                        if matches!(c.verdict, Verdict::Fail | Verdict::Timeout | Verdict::Flaky) {
                            b.println(format!("{:<8} {}", tag(c), c.id));
                        }
                    } else if plain {
                        let now = std::time::Instant::now();
                        let due = match last.lock() {
                            Ok(mut at) if now.duration_since(*at) >= HEARTBEAT => {
                                *at = now;
                                true
                            }
                            _ => false,
                        };
                        if due {
                            eprintln!(
                                "parity: [{i}/{}] cases done ({} s)",
                                total.load(SeqCst).max(i),
                                now.duration_since(started).as_secs()
                            );
                        }
                    }
                }
            }
        })
    }

    /// Clears the bar, if any.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_follows_the_flag_the_terminal_and_no_color() {
        use ColorChoice::*;
        // auto: a terminal gets colour unless NO_COLOR is set to something.
        assert!(Auto.enabled(true, None));
        assert!(Auto.enabled(true, Some(OsStr::new(""))));
        assert!(!Auto.enabled(true, Some(OsStr::new("1"))));
        assert!(!Auto.enabled(false, None));
        // always and never decide alone.
        assert!(Always.enabled(false, Some(OsStr::new("1"))));
        assert!(!Never.enabled(true, None));
    }

    #[test]
    fn coloured_tags_keep_their_columns() {
        assert_eq!(padded_tag("PASS", false), "PASS    ");
        assert_eq!(padded_tag("NOT-RUN", false), "NOT-RUN ");
        let c = padded_tag("FAIL", true);
        assert!(
            c.starts_with("\x1b[") && c.ends_with("\x1b[0m    "),
            "{c:?}"
        );
        assert!(c.contains("FAIL"));
    }
}
