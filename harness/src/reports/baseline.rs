//! Baselines: the failures an implementation is known to have (`parity run --baseline FILE`).
//!
//! A baseline file is YAML, version 1:
//!
//! ```yaml
//! # parity baseline: failures this implementation is known to have.
//! version: 1
//! expected-failures:
//!   - case: mcp.base.batch-rejected            # a check: every case of it
//!     reason: the SDK drops batches silently (upstream issue 123)
//!   - case: mcp.base.parse-error@mcp-stdio      # check@binding: every revision of it
//!     reason: ...
//!   - case: mcp.lifecycle.x@mcp-stdio#2025-11-25   # one exact case
//!     reason: ...
//! ```
//!
//! Keys are closed: the top level has exactly `version` (required, the integer `1`) and
//! `expected-failures` (required; a list, which may be empty or left blank), and every entry has
//! exactly `case` (a case-id pattern) and `reason` (required, not blank: why the failure is
//! expected, e.g. an upstream issue). Each `case` string may appear only once.
//!
//! **Patterns.** `CHECK`, `CHECK@BINDING` or `CHECK@BINDING#REVISION`, matched part by part
//! against a case id `check@binding#revision`:
//!
//! - `CHECK` without glob characters selects that check and every check whose id extends it
//!   with `.` (`equivalence.generated` selects `equivalence.generated.read_file`), as a bare
//!   check id does in `--filter`. It must be a check parity knows (a check of the MCP or ACP
//!   catalogue, a scenario of the run, an equivalence family or a case of one).
//! - `BINDING` is `mcp-stdio`, `acp` or `equivalence`; left out, every binding.
//! - `REVISION` must be one of the binding's: `2024-11-05`, `2025-03-26`, `2025-06-18`,
//!   `2025-11-25`, `2026-07-28` for `mcp-stdio`, `v1` for `acp`, `all` for `equivalence`; left
//!   out, every revision. A `#REVISION` needs an `@BINDING` before it.
//! - Any part may use the globs `*` (any run of characters, `.` included) and `?` (any one
//!   character), as in `--filter`; no other glob syntax (`[…]`, `{…}`, `\`) is accepted. A glob
//!   in the binding or the revision must match at least one known binding or revision. A glob in
//!   the check part is **not** checked against the known checks: the check list is only known one
//!   id at a time (scenario ids are free-form), so whether a glob matches some check cannot be
//!   decided. A glob entry that matches no case of a run is, like any entry matching nothing,
//!   neither expected nor stale there.
//!
//! **Applying** ([`Baseline::apply`]): a case that failed or timed out and is matched by an entry
//! is *expected* (marked with the first matching entry in file order; its verdict stays). An
//! entry is *stale* when it matched at least one case that executed (pass, warn, flaky, fail,
//! timeout) and none of its matched cases failed, timed out or was flaky; a stale entry fails the
//! run, so a baseline only ever shrinks as bugs get fixed. An entry that matched no executed case
//! (filtered out, another `--partition` shard, a surface not run, only skips) is neither. In a
//! `--partition` shard only entries naming one exact case can be stale (the failing cases of a
//! wider entry may have run in another shard); a wider entry that matched only passing cases
//! gets a note in the report instead.
//!
//! **Errors** ([`BaselineError`]) name the file, the 1-based line and the entry:
//! ``baseline.yaml:7: entry `mcp.base.batch-rejectd`: unknown check `mcp.base.batch-rejectd` …``,
//! or `FILE:LINE: why` when no entry is concerned (YAML that does not parse, top-level keys).
//! Lines come from the YAML parser's node locations (`serde_saphyr::Spanned`); an entry's line
//! ([`Entry::line`]) is the line of its `case` key.
//!
//! [`write_from_report`] writes a baseline listing every failure of a JSON report, one exact case
//! per entry, for `parity baseline write`.

use crate::base::yaml::{Kind, Node};
use crate::engine::check::Verdict;
use crate::engine::run::{BaselineMark, RunReport, StaleEntry};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The baseline format version this parity reads and writes.
pub const FORMAT_VERSION: i64 = 1;

/// The top-level keys of a baseline file.
const TOP_KEYS: &[&str] = &["version", "expected-failures"];
/// The keys of an entry.
const ENTRY_KEYS: &[&str] = &["case", "reason"];

/// A loaded baseline file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// Its entries, in file order.
    pub entries: Vec<Entry>,
}

/// One expected failure of a baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The case-id pattern, as written.
    pub case: String,
    /// Why the failure is expected.
    pub reason: String,
    /// 1-based line of the entry's `case` key.
    pub line: usize,
}

/// A baseline file that could not be loaded.
///
/// Displays as ``FILE:LINE: entry `PATTERN`: MESSAGE``; without an entry (top-level keys, an
/// entry with no `case`) as `FILE:LINE: MESSAGE`; for text that is not UTF-8 or not YAML as
/// `FILE:LINE:COLUMN: KEY: MESSAGE`; and without a line (the file could not be read) as
/// `FILE: MESSAGE`. Long patterns, keys and messages are clipped, saying how much was left out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct BaselineError {
    /// The file, as given.
    pub file: PathBuf,
    /// 1-based line; 0 when no line applies.
    pub line: usize,
    /// The entry's `case` pattern, when the error concerns one entry that has one.
    pub entry: Option<String>,
    /// 1-based column, when known (0 otherwise): set for text that is not UTF-8 or YAML.
    pub col: usize,
    /// The key at fault, when the error is located by text rather than by entry (text that is
    /// not UTF-8 or not YAML).
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl BaselineError {
    fn render(&self) -> String {
        use crate::base::textfile::{clip_quoted, MAX_MESSAGE, MAX_QUOTED};
        let mut s = self.file.display().to_string();
        if self.line > 0 {
            s.push_str(&format!(":{}", self.line));
            if self.col > 0 {
                s.push_str(&format!(":{}", self.col));
            }
        }
        if let Some(e) = &self.entry {
            s.push_str(&format!(": entry `{}`", clip_quoted(e, MAX_QUOTED)));
        } else if let Some(k) = &self.key {
            s.push_str(&format!(": {}", clip_quoted(k, MAX_QUOTED)));
        }
        s.push_str(": ");
        s.push_str(&clip_quoted(&self.message, MAX_MESSAGE));
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Bindings, revisions and patterns
// ---------------------------------------------------------------------------------------------

/// What parity knows when it reads case ids (baselines, reports): which check ids name a check
/// (`crate::engine::select::known_check` over the run's registry and scenarios), and every
/// binding (the part of a case id after `@`) with its revisions (after `#`), e.g.
/// `("acp", ["v1"])` (`crate::engine::profile::Registry::bindings`).
#[derive(Clone, Copy)]
pub struct Known<'a> {
    /// Whether a check id names a check parity knows.
    pub check: &'a dyn Fn(&str) -> bool,
    /// Every binding with its revisions.
    pub bindings: &'a [(&'static str, Vec<&'static str>)],
}

fn binding_names(bindings: &[(&'static str, Vec<&'static str>)]) -> String {
    let names: Vec<&str> = bindings.iter().map(|(b, _)| *b).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// Splits a case id `check@binding#revision` (at the first `@` and the first `#` after it).
pub(crate) fn split_case_id(id: &str) -> Option<(&str, &str, &str)> {
    let (check, rest) = id.split_once('@')?;
    let (binding, revision) = rest.split_once('#')?;
    Some((check, binding, revision))
}

/// Checks an exact case id: its shape, binding and revision, and that its check is known.
/// Errors: why it is not a case id parity knows.
pub(crate) fn check_case_id(id: &str, known: &Known) -> Result<(), String> {
    let Some((check, binding, revision)) = split_case_id(id) else {
        return Err("not a case id (expected check@binding#revision)".into());
    };
    if check.is_empty() || binding.is_empty() || revision.is_empty() {
        return Err("not a case id (expected check@binding#revision)".into());
    }
    let Some((_, revs)) = known.bindings.iter().find(|(b, _)| *b == binding) else {
        return Err(format!(
            "unknown binding `{binding}` (expected {})",
            binding_names(known.bindings)
        ));
    };
    if !revs.contains(&revision) {
        return Err(format!(
            "unknown revision `#{revision}`: {binding} revisions are {}",
            revs.join(", ")
        ));
    }
    if !(known.check)(check) {
        return Err(unknown_check(check));
    }
    Ok(())
}

fn unknown_check(check: &str) -> String {
    format!(
        "unknown check `{check}` (`parity list` shows every check and scenario; a scenario of \
         your own is known once its directory is given with `--scenarios DIR`)"
    )
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// `*` and `?` wildcard matching over characters (`*` matches `.`, `@` and `#` too).
fn wild(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(c) if *c == '?' || Some(c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// One part of a pattern against one part of a case id.
fn part_matches(pat: &str, s: &str) -> bool {
    if has_glob(pat) {
        wild(pat, s)
    } else {
        pat == s
    }
}

/// A parsed case-id pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    check: String,
    binding: Option<String>,
    revision: Option<String>,
}

impl Pattern {
    /// Parses the syntax of a pattern (not whether its parts are known).
    fn parse(p: &str) -> Result<Pattern, String> {
        if p.trim().is_empty() {
            return Err("the pattern is empty".into());
        }
        if p.chars().any(char::is_whitespace) {
            return Err("a pattern has no whitespace".into());
        }
        if let Some(c) = p
            .chars()
            .find(|c| matches!(c, '[' | ']' | '{' | '}' | '\\'))
        {
            return Err(format!(
                "`{c}` is not allowed (the only glob characters are `*` and `?`)"
            ));
        }
        let (check, rest) = match p.split_once('@') {
            Some((c, r)) => (c, Some(r)),
            None => (p, None),
        };
        if check.contains('#') {
            return Err(
                "a revision needs a binding: write check@binding#revision (or check@*#revision)"
                    .into(),
            );
        }
        if check.is_empty() {
            return Err("no check before `@`".into());
        }
        let (binding, revision) = match rest {
            None => (None, None),
            Some(r) => {
                let (b, rev) = match r.split_once('#') {
                    Some((b, rev)) => (b, Some(rev)),
                    None => (r, None),
                };
                if b.is_empty() {
                    return Err("no binding after `@`".into());
                }
                if b.contains('@') || rev.is_some_and(|r| r.contains(['@', '#'])) {
                    return Err("more than one `@` or `#` (expected check@binding#revision)".into());
                }
                if rev.is_some_and(str::is_empty) {
                    return Err("malformed revision: nothing after `#`".into());
                }
                (Some(b.to_string()), rev.map(str::to_string))
            }
        };
        Ok(Pattern {
            check: check.to_string(),
            binding,
            revision,
        })
    }

    /// Checks the parts against what parity knows: the binding, the revision, and (for a check
    /// part without globs) the check.
    fn validate(&self, known: &Known) -> Result<(), String> {
        let bindings: Vec<&(&str, Vec<&str>)> = known
            .bindings
            .iter()
            .filter(|(b, _)| self.binding.as_deref().is_none_or(|p| part_matches(p, b)))
            .collect();
        if let Some(b) = &self.binding {
            if bindings.is_empty() {
                return Err(if has_glob(b) {
                    format!(
                        "binding `{b}` matches no binding ({})",
                        binding_names(known.bindings)
                    )
                } else {
                    format!(
                        "unknown binding `{b}` (expected {})",
                        binding_names(known.bindings)
                    )
                });
            }
        }
        if let Some(r) = &self.revision {
            let ok = bindings
                .iter()
                .any(|(_, revs)| revs.iter().any(|rev| part_matches(r, rev)));
            if !ok {
                let known: Vec<String> = bindings
                    .iter()
                    .map(|(b, revs)| format!("{b} revisions are {}", revs.join(", ")))
                    .collect();
                let what = if has_glob(r) {
                    "matches no revision"
                } else {
                    "is not a revision parity knows"
                };
                return Err(format!(
                    "malformed revision `#{r}`: it {what} ({})",
                    known.join("; ")
                ));
            }
        }
        if !has_glob(&self.check) && !(known.check)(&self.check) {
            return Err(unknown_check(&self.check));
        }
        Ok(())
    }

    /// Whether a case id is selected.
    fn matches(&self, case_id: &str) -> bool {
        let Some((check, binding, revision)) = split_case_id(case_id) else {
            return false;
        };
        let check_ok = if has_glob(&self.check) {
            wild(&self.check, check)
        } else {
            check == self.check
                || check
                    .strip_prefix(self.check.as_str())
                    .is_some_and(|r| r.starts_with('.'))
        };
        check_ok
            && self
                .binding
                .as_deref()
                .is_none_or(|b| part_matches(b, binding))
            && self
                .revision
                .as_deref()
                .is_none_or(|r| part_matches(r, revision))
    }
}

// ---------------------------------------------------------------------------------------------
// The YAML tree with locations
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

struct Cx<'a> {
    file: &'a Path,
}

impl Cx<'_> {
    fn err(&self, line: usize, entry: Option<&str>, message: impl Into<String>) -> BaselineError {
        BaselineError {
            file: self.file.to_path_buf(),
            line,
            entry: entry.map(str::to_string),
            col: 0,
            key: None,
            message: message.into(),
        }
    }

    /// The entries of a mapping, every key a string among `allowed`.
    fn mapping<'n>(
        &self,
        entries: &'n [(Node, Node)],
        entry: Option<&str>,
        allowed: &[&str],
    ) -> Result<Vec<(&'n str, &'n Node, &'n Node)>, BaselineError> {
        let mut out = Vec::new();
        for (k, v) in entries {
            let Kind::Str(name) = &k.kind else {
                return Err(self.err(
                    k.line,
                    entry,
                    format!("keys must be strings, got {}", k.kind.describe()),
                ));
            };
            if !allowed.contains(&name.as_str()) {
                return Err(self.err(
                    k.line,
                    entry,
                    format!(
                        "unknown key `{name}` (expected {})",
                        allowed
                            .iter()
                            .map(|a| format!("`{a}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            out.push((name.as_str(), k, v));
        }
        Ok(out)
    }
}

/// Parses YAML text into the located tree.
fn parse_tree(cx: &Cx, text: &str) -> Result<Node, BaselineError> {
    crate::base::yaml::parse(text).map_err(|e| {
        let mut err = cx.err(e.line, None, format!("not valid YAML: {}", e.message));
        err.col = e.column;
        err.key = if e.field.is_empty() {
            crate::base::textfile::yaml_key_near(text, e.line)
        } else {
            Some(e.field.clone())
        };
        err
    })
}

/// Loads a baseline file, checking each entry's case id against what parity `known`s.
///
/// Errors: the file cannot be read; YAML that does not parse; a value of the wrong type; an
/// unknown or missing key; a `version` other than 1; a blank `reason`; a pattern that is
/// malformed or names an unknown check, binding or revision; the same `case` twice. Each names
/// the file, the 1-based line and the entry (see [`BaselineError`]).
pub fn load(path: &Path, known: &Known) -> Result<Baseline, BaselineError> {
    let cx = Cx { file: path };
    let text = crate::base::textfile::read_utf8(path).map_err(|e| match &e {
        crate::base::textfile::ReadError::Io(io) => {
            cx.err(0, None, format!("cannot read the baseline: {io}"))
        }
        crate::base::textfile::ReadError::NotUtf8 { before, .. } => {
            let (line, col) = e.place();
            let mut err = cx.err(line, None, e.message("the baseline"));
            err.col = col;
            err.key = crate::base::textfile::yaml_key_near(before, line);
            err
        }
    })?;
    let entries = parse_text(&cx, &text, known)?;
    Ok(Baseline {
        path: path.to_path_buf(),
        entries,
    })
}

fn parse_text(cx: &Cx, text: &str, known: &Known) -> Result<Vec<Entry>, BaselineError> {
    let root = parse_tree(cx, text)?;
    let top = match &root.kind {
        Kind::Map(m) => m,
        Kind::Null => {
            return Err(cx.err(
                1,
                None,
                "the file is empty (expected `version: 1` and `expected-failures`)",
            ))
        }
        other => {
            return Err(cx.err(
                root.line.max(1),
                None,
                format!(
                    "expected a mapping with `version` and `expected-failures`, got {}",
                    other.describe()
                ),
            ))
        }
    };
    let top = cx.mapping(top, None, TOP_KEYS)?;
    let get = |key: &str| top.iter().find(|(k, _, _)| *k == key).map(|(_, _, v)| *v);

    let Some(version) = get("version") else {
        return Err(cx.err(
            root.line.max(1),
            None,
            "missing key `version` (write `version: 1`)",
        ));
    };
    match version.kind {
        Kind::Int(FORMAT_VERSION) => {}
        Kind::Int(v) => {
            return Err(cx.err(
                version.line,
                None,
                format!(
                    "version: unsupported version {v} (this parity reads version {FORMAT_VERSION})"
                ),
            ))
        }
        ref other => {
            return Err(cx.err(
                version.line,
                None,
                format!(
                    "version: expected the integer {FORMAT_VERSION}, got {}",
                    other.describe()
                ),
            ))
        }
    }

    let Some(list) = get("expected-failures") else {
        return Err(cx.err(
            root.line.max(1),
            None,
            "missing key `expected-failures` (a list of entries; `expected-failures: []` for none)",
        ));
    };
    let items: &[Node] = match &list.kind {
        Kind::Seq(items) => items,
        Kind::Null => &[],
        other => {
            return Err(cx.err(
                list.line,
                None,
                format!(
                    "expected-failures: expected a list of `case`/`reason` entries, got {}",
                    other.describe()
                ),
            ))
        }
    };

    let mut out: Vec<Entry> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let fields = match &item.kind {
            Kind::Map(m) => m,
            Kind::Str(s) => {
                return Err(cx.err(
                    item.line,
                    Some(s),
                    "expected a mapping with `case` and `reason`, got a bare string \
                     (write `- case: …` and `reason: …` under it)",
                ))
            }
            other => {
                return Err(cx.err(
                    item.line,
                    None,
                    format!(
                        "entry {n}: expected a mapping with `case` and `reason`, got {}",
                        other.describe()
                    ),
                ))
            }
        };
        // The pattern, when there is a string one, names the entry in every later error.
        let case = fields.iter().find_map(|(k, v)| match (&k.kind, &v.kind) {
            (Kind::Str(name), Kind::Str(p)) if name == "case" => Some((k, v, p.as_str())),
            _ => None,
        });
        let name = case.map(|(_, _, p)| p);
        let fields = cx.mapping(fields, name, ENTRY_KEYS)?;
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _, _)| *k == key)
                .map(|(_, k, v)| (*k, *v))
        };

        let Some((case_key, case_node)) = get("case") else {
            return Err(cx.err(
                item.line,
                None,
                format!("entry {n} has no `case` (the case-id pattern it expects to fail)"),
            ));
        };
        let Kind::Str(pattern) = &case_node.kind else {
            return Err(cx.err(
                case_node.line,
                None,
                format!(
                    "entry {n}: case: expected a string (a case-id pattern), got {}",
                    case_node.kind.describe()
                ),
            ));
        };
        let line = case_key.line;
        let reason = match get("reason") {
            None => {
                return Err(cx.err(
                    line,
                    Some(pattern),
                    "missing key `reason` (say why this failure is expected)",
                ))
            }
            Some((_, r)) => match &r.kind {
                Kind::Str(s) if !s.trim().is_empty() => s.clone(),
                Kind::Str(_) | Kind::Null => {
                    return Err(cx.err(
                        r.line.max(line),
                        Some(pattern),
                        "`reason` is empty (say why this failure is expected)",
                    ))
                }
                other => {
                    return Err(cx.err(
                        r.line,
                        Some(pattern),
                        format!("reason: expected a string, got {}", other.describe()),
                    ))
                }
            },
        };
        let parsed = Pattern::parse(pattern)
            .map_err(|e| cx.err(case_node.line, Some(pattern), format!("bad pattern: {e}")))?;
        parsed
            .validate(known)
            .map_err(|e| cx.err(case_node.line, Some(pattern), e))?;
        if let Some(first) = seen.get(pattern.as_str()) {
            return Err(cx.err(
                line,
                Some(pattern),
                format!("listed twice (lines {first} and {line}); keep one"),
            ));
        }
        seen.insert(pattern.clone(), line);
        out.push(Entry {
            case: pattern.clone(),
            reason,
            line,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Applying
// ---------------------------------------------------------------------------------------------

impl Entry {
    /// Whether this entry's pattern selects a case id (false for a pattern that does not parse).
    pub fn matches(&self, case_id: &str) -> bool {
        Pattern::parse(&self.case).is_ok_and(|p| p.matches(case_id))
    }
}

impl Baseline {
    /// Marks failed/timed-out cases matched by an entry (`case.expected = Some(BaselineMark{entry,
    /// reason})`, first matching entry in file order; every other case's mark is cleared), and
    /// sets `report.stale` to the entries that matched at least one case that executed (pass,
    /// warn, flaky, fail, timeout) where none of their matched cases is fail/timeout/flaky, each
    /// with the executed cases it matched, in file order. An entry that matched no executed case
    /// (filtered out, other shard, surface not run, only skips) is neither expected nor stale.
    ///
    /// `whole_run` is false when the run saw only part of the cases (`--partition`, `--filter`,
    /// `--skip`, `--era`): then only entries naming one exact case can be stale (and, in a
    /// shard, not those of monitors, which judge that shard's traffic only); a wider entry that
    /// matched only passing cases gets a note in `report.notes` instead.
    pub fn apply(&self, report: &mut RunReport, whole_run: bool) {
        let pats: Vec<Option<Pattern>> = self
            .entries
            .iter()
            .map(|e| Pattern::parse(&e.case).ok())
            .collect();
        // Per entry: the executed cases it matched, and whether one failed, timed out or flaked.
        let mut ran: Vec<Vec<String>> = vec![Vec::new(); self.entries.len()];
        let mut bad: Vec<bool> = vec![false; self.entries.len()];
        for case in &mut report.cases {
            case.expected = None;
            let mut first: Option<usize> = None;
            for (i, p) in pats.iter().enumerate() {
                if !p.as_ref().is_some_and(|p| p.matches(&case.id)) {
                    continue;
                }
                first.get_or_insert(i);
                if case.verdict.executed() {
                    ran[i].push(case.id.clone());
                }
                if matches!(
                    case.verdict,
                    Verdict::Fail | Verdict::Timeout | Verdict::Flaky
                ) {
                    bad[i] = true;
                }
            }
            // A listed `not-run` case is expected too: it does not make the run exit 3.
            if matches!(
                case.verdict,
                Verdict::Fail | Verdict::Timeout | Verdict::NotRun
            ) {
                if let Some(e) = first.and_then(|i| self.entries.get(i)) {
                    case.expected = Some(BaselineMark {
                        entry: e.case.clone(),
                        reason: e.reason.clone(),
                    });
                }
            }
        }
        let candidates: Vec<StaleEntry> = self
            .entries
            .iter()
            .zip(ran)
            .zip(bad)
            .filter(|((_, ran), bad)| !ran.is_empty() && !bad)
            .map(|((e, ran), _)| StaleEntry {
                entry: e.case.clone(),
                reason: e.reason.clone(),
                line: e.line,
                cases: ran,
            })
            .collect();
        // A narrowed run sees only some of an entry's cases: the failing ones may be in another
        // shard, era or filter. So it judges only entries that name one exact case; and in a
        // shard not even those of monitors, which there judge that shard's traffic only.
        let monitors: std::collections::HashSet<&str> = report
            .cases
            .iter()
            .filter(|c| c.kind == crate::engine::run::CaseKind::Monitor)
            .map(|c| c.id.as_str())
            .collect();
        let sharded = report.partition.is_some();
        let (stale, unsure): (Vec<StaleEntry>, Vec<StaleEntry>) =
            candidates.into_iter().partition(|e| {
                whole_run
                    || (is_exact_case(&e.entry)
                        && !(sharded && e.cases.iter().any(|c| monitors.contains(c.as_str()))))
            });
        let mut notes = Vec::new();
        for e in unsure {
            notes.push(format!(
                "baseline entry `{}` (line {}) matched only passing cases, but this run saw only part of what it covers (--partition, --filter, --skip or --era; in a shard, monitors judge that shard's traffic only), so it is not judged stale here: check it in a whole run",
                e.entry, e.line
            ));
        }
        report.notes.extend(notes);
        report.stale = stale;
    }

    /// The first entry (in file order) that lists a case id, if any (used to skip retries and
    /// fail-fast on expected failures).
    pub fn lists(&self, case_id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.matches(case_id))
    }
}

/// Whether a pattern names one exact case: `check@binding#revision` with no glob character.
fn is_exact_case(pattern: &str) -> bool {
    pattern.contains('@') && pattern.contains('#') && !pattern.contains(['*', '?'])
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/// At most this many characters of a case's message go into a written reason.
const REASON_MESSAGE_CHARS: usize = 120;

/// One line, control characters and runs of whitespace as single spaces.
fn one_line(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A YAML scalar for a string: plain when it is a simple id, else double-quoted (a JSON string
/// is a valid YAML double-quoted scalar).
fn yaml_scalar(s: &str) -> String {
    let plain = s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '#' | '/'));
    if plain {
        s.to_string()
    } else {
        serde_json::Value::String(s.to_string()).to_string()
    }
}

/// A baseline (YAML text, version 1) listing every `fail` and `timeout` case of a parsed JSON
/// report (as [`crate::reports::report_file::load`] returns it), one exact case id per entry, sorted, with
/// the reason `failed in <source>: <message>` (`timed out in …` for a timeout; the message on one
/// line, clipped to 120 characters) and a header comment saying where it came from and that the
/// reasons should be edited. A report with no failure gives `expected-failures: []`.
pub fn write_from_report(report: &Value, source: &str) -> String {
    write_from_report_keeping(report, source, &HashMap::new())
}

/// [`write_from_report`], but an entry whose case id is a key of `keep` gets that reason (the
/// reasons of the baseline being rewritten, so hand-written reasons survive a regeneration).
pub fn write_from_report_keeping(
    report: &Value,
    source: &str,
    keep: &HashMap<String, String>,
) -> String {
    let source = one_line(source);
    let mut rows: Vec<(String, String)> = Vec::new();
    if let Some(cases) = report.get("cases").and_then(Value::as_object) {
        for (id, c) in cases {
            let verb = match c.get("verdict").and_then(Value::as_str) {
                Some("fail") => "failed",
                Some("timeout") => "timed out",
                _ => continue,
            };
            let message = one_line(c.get("message").and_then(Value::as_str).unwrap_or(""));
            let reason = if let Some(kept) = keep.get(id) {
                kept.clone()
            } else if message.is_empty() {
                format!("{verb} in {source}")
            } else {
                format!(
                    "{verb} in {source}: {}",
                    clip_chars(&message, REASON_MESSAGE_CHARS)
                )
            };
            rows.push((id.clone(), reason));
        }
    }
    rows.sort();
    let mut out = String::new();
    out.push_str("# parity baseline: failures this implementation is known to have.\n");
    out.push_str(&format!(
        "# Written by `parity baseline write` from {source}"
    ));
    if let Some(t) = report.get("target").and_then(Value::as_str) {
        out.push_str(&format!(" (target: {})", one_line(t)));
    }
    out.push_str(".\n");
    out.push_str(
        "# Each reason below only repeats the failure: edit it to say why the failure is\n\
         # expected (an upstream issue, a decision). An entry may also name a whole check\n\
         # (`case: CHECK`) or check@binding, and use `*` and `?` globs. Entries that stop failing\n\
         # are stale and fail `parity run --baseline`: remove them.\n",
    );
    out.push_str(&format!("version: {FORMAT_VERSION}\n"));
    if rows.is_empty() {
        out.push_str("expected-failures: []\n");
        return out;
    }
    out.push_str("expected-failures:\n");
    for (id, reason) in rows {
        out.push_str(&format!("  - case: {}\n", yaml_scalar(&id)));
        out.push_str(&format!(
            "    reason: {}\n",
            serde_json::Value::String(reason)
        ));
    }
    out
}

/// At most `max` characters of `s`, with `…` when clipped.
fn clip_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or(s)),
        None => s.to_string(),
    }
}

#[cfg(test)]
#[path = "baseline_tests.rs"]
mod tests;
