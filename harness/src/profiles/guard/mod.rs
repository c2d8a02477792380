//! `parity guard`: a static, textual architecture guard for source trees in any language
//! (docs/guard.md).
//!
//! A rules file (TOML, [`load_rules`]) states invariants of three kinds, in the manner of
//! ArchUnit, import-linter, dependency-cruiser and clippy's `disallowed-methods`:
//!
//! - `forbidden`: files matching `files` must not reference any of `symbols` or `patterns`;
//! - `confined`: `symbols`/`patterns` may appear only in files matching `allow`;
//! - `entry-point`: files matching `files` may reach a module (named by its `receivers`, e.g.
//!   `Dispatcher` or `dispatcher`) only through the members listed in `entry` (e.g. `call`).
//!
//! The scan ([`scan`]) walks the root in parallel with the `ignore` crate (so `.gitignore`,
//! `.ignore` and git's exclude files are honoured, also outside a git checkout), reads each
//! file once (none over [`READ_CAP`]: skipped as too large), and prefilters its raw bytes with
//! one [`regex::bytes::RegexSet`] of every rule's prefilter expressions, each never weaker than
//! the rule's real match (`prefilter_sources`). Only a file with a candidate for a rule in
//! `mode = "code"` is parsed with tree-sitter (Rust, TypeScript, TSX, JavaScript, Python, Go);
//! comment and string-literal nodes (and JS/TS regex literals and JSX text) are blanked with
//! spaces (newlines kept, code inside template-string and f-string substitutions kept), so
//! reported lines and columns stay those of the file. A file of another language, or one over
//! [`PARSE_CAP`], is matched as it is (as in `mode = "all"`).
//!
//! Matching is textual: symbols match on word boundaries, patterns are regular expressions, and
//! an `entry-point` rule sees `receiver.member` / `receiver::member` call shapes, never resolved
//! names (an alias or a re-export escapes it; docs/guard.md shows what is caught and missed).
//!
//! Results: [`GuardReport`], rendered on the console ([`render_console`]), as JSON
//! ([`to_json`]) and as JUnit XML ([`to_junit_xml`]). A ratchet baseline ([`Baseline`]) holds
//! known violations: those are reported as baselined; an entry no violation matches is stale and
//! fails. Exit codes of [`cmd`]: 0 clean (warnings allowed), 1 an error-level violation or a stale
//! baseline entry, 2 usage or a bad rules or baseline file.
//!
//! Size (1867 lines): the rules file, the parallel walk, the prefilter, the tree-sitter blanking
//! per language and the reports of `parity guard` (its tests are in `tests.rs`).

mod profile;
pub use profile::GuardProfile;

pub use crate::engine::decl::GuardDecl;
use globset::{GlobSet, GlobSetBuilder};
use regex::bytes::RegexSet;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use toml::Spanned;

/// The binding of the `guard` profile's cases in `parity run` (`guard.rules@source#guard-1`).
pub const BINDING: &str = "source";
/// The pseudo-revision of the guard profile's cases.
pub const REVISION: &str = "guard-1";
/// Bytes at the start of a file searched for a NUL byte to call it binary.
pub const BINARY_PROBE: usize = 8192;
/// A file larger than this (4 MiB) is not parsed: code-mode rules match its raw text, comments
/// and strings included (stricter, never weaker), and the report counts it.
pub const PARSE_CAP: usize = 4 << 20;
/// A file larger than this (64 MiB) is not read: it is skipped as too large and listed.
pub const READ_CAP: u64 = 64 << 20;

// -------------------------------------------------------------------------------------------
// The rules file
// -------------------------------------------------------------------------------------------

/// A rules-file error: `file:line:col: key: message` (the key dotted, e.g. `rule[2].files`),
/// or `file: message` when no line applies. The same shape as a target-file error.
pub type RulesError = crate::engine::target::TargetError;

/// The three rule kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Files matching `files` must not reference the symbols or patterns.
    Forbidden,
    /// The symbols or patterns may appear only in files matching `allow`.
    Confined,
    /// Files matching `files` reach the receivers only through the `entry` members.
    EntryPoint,
}

/// How serious a violation is: an error fails the guard (exit 1), a warning is reported only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the guard.
    Error,
    /// Reported, does not fail.
    Warn,
}

impl Severity {
    /// `error` or `warn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warn => "warn",
        }
    }
}

/// What a rule's expressions are matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Code only: comments and string literals are blanked first (for the languages with a
    /// grammar; other files are matched as they are).
    Code,
    /// Everything, comments and strings included.
    All,
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Stable id (`[A-Za-z0-9_.-]+`), reported as `error[id]`.
    pub id: String,
    /// Why the rule exists, printed with each violation.
    pub reason: String,
    /// The kind.
    pub kind: Kind,
    /// Error or warning.
    pub severity: Severity,
    /// Code only or everything.
    pub mode: Mode,
    /// Files the rule applies to (globs over `/`-separated paths relative to the root; `*`
    /// stays within one path segment, `**` crosses them). Empty: every file.
    files: Option<GlobSet>,
    /// Files the rule never applies to.
    exclude: Option<GlobSet>,
    /// `confined`: the files where the expressions may appear.
    allow: Option<GlobSet>,
    /// `entry-point`: the allowed members.
    entry: Vec<String>,
    /// The compiled expressions: one per symbol or pattern (`forbidden`, `confined`), one per
    /// receiver (`entry-point`, capturing the member as group 1).
    exprs: Vec<Regex>,
    /// What each expression came from, for messages (`symbol Command::new`).
    labels: Vec<String>,
}

/// A loaded rules file.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The rules in file order.
    pub rules: Vec<Rule>,
    /// Every rule's expressions as one set over raw bytes (the prefilter), in rule order.
    prefilter: RegexSet,
    /// For each expression of `prefilter`: the index of its rule.
    owners: Vec<usize>,
    /// Rules with an expression no prefilter can stand for safely (a code-mode pattern): a
    /// candidate in every file they apply to.
    always: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    version: Option<Spanned<i64>>,
    #[serde(default)]
    rule: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: Spanned<String>,
    kind: Spanned<String>,
    reason: Spanned<String>,
    severity: Option<Spanned<String>>,
    mode: Option<Spanned<String>>,
    #[serde(default)]
    files: Vec<Spanned<String>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    symbols: Vec<Spanned<String>>,
    #[serde(default)]
    patterns: Vec<Spanned<String>>,
    #[serde(default)]
    receivers: Vec<Spanned<String>>,
    #[serde(default)]
    entry: Vec<Spanned<String>>,
}

/// The dotted key at `offset` of a rules file: `rule[N].key` inside the N-th (0-based)
/// `[[rule]]` table, else the bare key; `hint` (a key a message names) replaces the key the
/// line holds. Lines end at LF, CRLF or a lone CR ([`crate::base::textfile::lines`]).
fn key_at(text: &str, offset: usize, hint: Option<&str>) -> String {
    let (line, _) = crate::base::textfile::line_col(text, offset);
    let all = crate::base::textfile::lines(text);
    // Headers up to the end of the offset's line: an error reported at a `[[rule]]` header
    // belongs to that rule.
    let rules_before = all
        .iter()
        .take(line)
        .filter(|l| l.trim_start().starts_with("[[rule]]"))
        .count();
    let found = crate::engine::target::key_at(text, line);
    let key = match hint {
        Some(h) => h.to_string(),
        None => found
            .strip_prefix("rule.")
            .map(str::to_string)
            .unwrap_or(found.clone()),
    };
    if rules_before > 0 {
        if found == "rule" && hint.is_none() {
            return format!("rule[{}]", rules_before - 1);
        }
        format!("rule[{}].{key}", rules_before - 1)
    } else {
        key
    }
}

/// A symbol as a regular expression: escaped, with `\b` on each side that starts or ends with
/// a word character (`Command::new` → `\bCommand::new\b`; `tools::` → `\btools::`).
pub fn symbol_regex(symbol: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut re = String::new();
    if word(symbol.chars().next()) {
        re.push_str(r"\b");
    }
    re.push_str(&regex::escape(symbol));
    if word(symbol.chars().last()) {
        re.push_str(r"\b");
    }
    re
}

/// The expression an `entry-point` rule uses for one receiver: the receiver on a word
/// boundary, `.` or `::` (with optional spaces, and an optional `?.`), then the member, captured
/// as group 1.
fn receiver_regex(receiver: &str) -> String {
    format!(
        r"{}\s*(?:\?\.|\.|::)\s*([A-Za-z_$][A-Za-z0-9_$]*)",
        symbol_regex(receiver)
    )
}

/// Parses a rules file's text; `file` names it in errors.
///
/// Errors ([`RulesError`], naming file, line, column and key): TOML syntax, an unknown key or a
/// wrong type, `version` other than 1, a duplicate or malformed `id`, an unknown `kind`,
/// `severity` or `mode`, an invalid glob or regular expression, a rule with nothing to match
/// (no symbols or patterns; for `entry-point`, no receivers), `allow` on a rule other than
/// `confined`, `receivers`/`entry` on a rule other than `entry-point`.
pub fn parse_rules(file: &str, text: &str) -> Result<Rules, RulesError> {
    let err_at = |offset: usize, key: String, message: String| {
        let (line, col) = crate::engine::target::line_col(text, offset);
        RulesError {
            file: file.to_string(),
            line,
            col,
            key,
            message,
        }
    };
    if let Some(offset) = crate::base::textfile::lone_cr(text) {
        return Err(err_at(
            offset,
            key_at(text, offset, None),
            crate::engine::target::LONE_CR.to_string(),
        ));
    }
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let msg = e.message().to_string();
        let unknown = ["unknown field `", "missing field `"]
            .iter()
            .find_map(|p| msg.strip_prefix(p))
            .and_then(|r| r.split('`').next())
            .map(str::to_string);
        err_at(offset, key_at(text, offset, unknown.as_deref()), msg)
    })?;
    if let Some(v) = &raw.version {
        if *v.get_ref() != 1 {
            return Err(err_at(
                v.span().start,
                "version".into(),
                format!("unsupported version {} (this parity reads 1)", v.get_ref()),
            ));
        }
    }
    let mut rules = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (n, r) in raw.rule.iter().enumerate() {
        let key = |k: &str| format!("rule[{n}].{k}");
        let id = r.id.get_ref().clone();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(err_at(
                r.id.span().start,
                key("id"),
                format!("rule id {id:?} must be non-empty and use only A-Z a-z 0-9 - _ ."),
            ));
        }
        if let Some(first) = seen.insert(id.clone(), n) {
            return Err(err_at(
                r.id.span().start,
                key("id"),
                format!("duplicate rule id {id:?} (also rule[{first}])"),
            ));
        }
        let kind = match r.kind.get_ref().as_str() {
            "forbidden" => Kind::Forbidden,
            "confined" => Kind::Confined,
            "entry-point" => Kind::EntryPoint,
            other => {
                return Err(err_at(
                    r.kind.span().start,
                    key("kind"),
                    format!("unknown kind {other:?} (expected forbidden, confined or entry-point)"),
                ))
            }
        };
        let severity = match r.severity.as_ref().map(|s| (s.get_ref().as_str(), s)) {
            None | Some(("error", _)) => Severity::Error,
            Some(("warn", _)) => Severity::Warn,
            Some((other, s)) => {
                return Err(err_at(
                    s.span().start,
                    key("severity"),
                    format!("unknown severity {other:?} (expected error or warn)"),
                ))
            }
        };
        let mode = match r.mode.as_ref().map(|s| (s.get_ref().as_str(), s)) {
            None | Some(("code", _)) => Mode::Code,
            Some(("all", _)) => Mode::All,
            Some((other, s)) => {
                return Err(err_at(
                    s.span().start,
                    key("mode"),
                    format!("unknown mode {other:?} (expected code or all)"),
                ))
            }
        };
        let globs = |list: &[Spanned<String>], k: &str| -> Result<Option<GlobSet>, RulesError> {
            if list.is_empty() {
                return Ok(None);
            }
            let mut b = GlobSetBuilder::new();
            for g in list {
                let glob = globset::GlobBuilder::new(g.get_ref())
                    .literal_separator(true)
                    .build()
                    .map_err(|e| {
                        err_at(
                            g.span().start,
                            key(k),
                            format!("invalid glob {:?}: {}", g.get_ref(), e.kind()),
                        )
                    })?;
                b.add(glob);
            }
            b.build()
                .map(Some)
                .map_err(|e| err_at(list[0].span().start, key(k), format!("invalid glob: {e}")))
        };
        let files = globs(&r.files, "files")?;
        let exclude = globs(&r.exclude, "exclude")?;
        let allow = globs(&r.allow, "allow")?;
        if kind != Kind::Confined {
            if let Some(a) = r.allow.first() {
                return Err(err_at(
                    a.span().start,
                    key("allow"),
                    "`allow` belongs to confined rules (use `exclude` to leave files out)".into(),
                ));
            }
        }
        if kind != Kind::EntryPoint {
            if let Some(a) = r.receivers.first().or(r.entry.first()) {
                return Err(err_at(
                    a.span().start,
                    key(if r.receivers.is_empty() {
                        "entry"
                    } else {
                        "receivers"
                    }),
                    "`receivers` and `entry` belong to entry-point rules".into(),
                ));
            }
        }
        let mut exprs = Vec::new();
        let mut labels = Vec::new();
        let mut compile = |src: String, label: String, at: usize, k: &str| {
            Regex::new(&src)
                .map(|re| {
                    exprs.push(re);
                    labels.push(label);
                })
                .map_err(|e| err_at(at, key(k), format!("invalid regular expression: {e}")))
        };
        if kind == Kind::EntryPoint {
            if let Some(s) = r.symbols.first().or(r.patterns.first()) {
                return Err(err_at(
                    s.span().start,
                    key(if r.symbols.is_empty() {
                        "patterns"
                    } else {
                        "symbols"
                    }),
                    "an entry-point rule names `receivers` and `entry`, not symbols or patterns"
                        .into(),
                ));
            }
            if r.receivers.is_empty() {
                return Err(err_at(
                    r.kind.span().start,
                    key("receivers"),
                    "an entry-point rule needs `receivers` (the names the module is reached through)".into(),
                ));
            }
            for rc in &r.receivers {
                if rc.get_ref().trim().is_empty() {
                    return Err(err_at(
                        rc.span().start,
                        key("receivers"),
                        "empty receiver".into(),
                    ));
                }
                compile(
                    receiver_regex(rc.get_ref()),
                    format!("receiver {}", rc.get_ref()),
                    rc.span().start,
                    "receivers",
                )?;
            }
        } else {
            if r.symbols.is_empty() && r.patterns.is_empty() {
                return Err(err_at(
                    r.kind.span().start,
                    key("symbols"),
                    "the rule needs `symbols` or `patterns` to look for".into(),
                ));
            }
            for s in &r.symbols {
                if s.get_ref().is_empty() {
                    return Err(err_at(
                        s.span().start,
                        key("symbols"),
                        "empty symbol".into(),
                    ));
                }
                compile(
                    symbol_regex(s.get_ref()),
                    format!("symbol {}", s.get_ref()),
                    s.span().start,
                    "symbols",
                )?;
            }
            for p in &r.patterns {
                compile(
                    p.get_ref().clone(),
                    format!("pattern {}", p.get_ref()),
                    p.span().start,
                    "patterns",
                )?;
            }
        }
        let kind_needs_files = kind != Kind::Confined;
        if kind_needs_files && files.is_none() {
            return Err(err_at(
                r.kind.span().start,
                key("files"),
                "the rule needs `files` (the globs of the files it applies to)".into(),
            ));
        }
        rules.push(Rule {
            id,
            reason: r.reason.get_ref().clone(),
            kind,
            severity,
            mode,
            files,
            exclude,
            allow,
            entry: r.entry.iter().map(|e| e.get_ref().clone()).collect(),
            exprs,
            labels,
        });
    }
    let mut sources = Vec::new();
    let mut owners = Vec::new();
    let mut always = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let Some(raw_rule) = raw.rule.get(i) else {
            continue;
        };
        for src in prefilter_sources(rule, raw_rule) {
            match src {
                Some(src) => {
                    sources.push(src);
                    owners.push(i);
                }
                None if !always.contains(&i) => always.push(i),
                None => {}
            }
        }
    }
    let prefilter = RegexSet::new(&sources)
        .map_err(|e| err_at(0, "-".into(), format!("failed to build the prefilter: {e}")))?;
    Ok(Rules {
        rules,
        prefilter,
        owners,
        always,
    })
}

/// A literal every match of `pattern` starts with, without spaces, or `None` when there is
/// none we can be sure of: after an optional leading `\b`, the run of letters, digits, `_`, `:`,
/// `-` and `/` up to the first other character (a character followed by a quantifier dropped).
/// Conservative: a pattern with `|` anywhere, or one that starts with a group, a class, a flag or
/// an anchor, has none.
pub fn pattern_prefix(pattern: &str) -> Option<String> {
    if pattern.contains('|') {
        return None;
    }
    let rest = pattern.strip_prefix(r"\b").unwrap_or(pattern);
    let mut lit: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '/'))
        .collect();
    if rest
        .get(lit.len()..)
        .is_some_and(|r| r.starts_with(['?', '*', '+', '{']))
    {
        lit.pop();
    }
    (!lit.is_empty()).then_some(lit)
}

/// The prefilter expression of each of a rule's expressions, over raw bytes, never weaker than
/// the real match: `None` when no safe expression exists (the rule is then a candidate in every
/// file it applies to).
///
/// A rule matched against the raw text (`mode = "all"`, or a file without a grammar) could use
/// its expressions as they are, but a code-mode rule matches the stripped text, where comments
/// and strings are spaces: `dispatcher /* c */ .tools()` matches `receiver\s*\.\s*member`
/// only after stripping. Stripping writes only ASCII spaces, so a run of text without a space
/// that is in the stripped text is in the raw text too. Hence: a symbol or a receiver is
/// prefiltered on its longest space-free run, taken literally (no `\b`, which blanking could
/// create); a code-mode pattern is prefiltered on its literal prefix ([`pattern_prefix`]), or is
/// `None` when it has none. Patterns of `mode = "all"` rules are matched against the raw text
/// and keep their expression.
fn prefilter_sources(rule: &Rule, raw: &RawRule) -> Vec<Option<String>> {
    let literal = |s: &str| -> Option<String> {
        s.split(' ')
            .max_by_key(|part| part.len())
            .filter(|part| !part.is_empty())
            .map(regex::escape)
    };
    match rule.kind {
        Kind::EntryPoint => raw.receivers.iter().map(|r| literal(r.get_ref())).collect(),
        Kind::Forbidden | Kind::Confined => {
            let symbols = raw.symbols.iter().map(|s| literal(s.get_ref()));
            let patterns = raw.patterns.iter().map(|p| match rule.mode {
                Mode::All => Some(p.get_ref().clone()),
                Mode::Code => pattern_prefix(p.get_ref()).map(|lit| regex::escape(&lit)),
            });
            symbols.chain(patterns).collect()
        }
    }
}

/// Reads and parses a rules file. Errors: the file cannot be read (line 0) or is not UTF-8
/// (the line, column and key of the first invalid byte), else as [`parse_rules`].
pub fn load_rules(path: &Path) -> Result<Rules, RulesError> {
    let file = path.display().to_string();
    let text = crate::base::textfile::read_utf8(path).map_err(|e| {
        let (line, col) = e.place();
        let key = match &e {
            crate::base::textfile::ReadError::NotUtf8 { before, .. } => {
                key_at(before, before.len(), None)
            }
            crate::base::textfile::ReadError::Io(_) => "-".into(),
        };
        RulesError {
            file: file.clone(),
            line,
            col,
            key,
            message: e.message("the rules file"),
        }
    })?;
    parse_rules(&file, &text)
}

impl Rule {
    /// Whether the rule looks at the file at `path` (relative, `/`-separated): inside `files`
    /// (or every file when unset), outside `exclude`, and for `confined`, outside `allow`.
    pub fn applies_to(&self, path: &str) -> bool {
        self.files.as_ref().is_none_or(|g| g.is_match(path))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(path))
            && !self.allow.as_ref().is_some_and(|g| g.is_match(path))
    }
}

// -------------------------------------------------------------------------------------------
// Languages and stripping
// -------------------------------------------------------------------------------------------

/// The languages with a grammar, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// `.rs`
    Rust,
    /// `.ts`, `.mts`, `.cts`
    TypeScript,
    /// `.tsx`
    Tsx,
    /// `.js`, `.mjs`, `.cjs`, `.jsx`
    JavaScript,
    /// `.py`, `.pyi`
    Python,
    /// `.go`
    Go,
}

impl Lang {
    /// The language of a path by its extension, or `None` (matched as it is).
    pub fn of(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.')?.1;
        Some(match ext {
            "rs" => Lang::Rust,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "py" | "pyi" => Lang::Python,
            "go" => Lang::Go,
            _ => return None,
        })
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// Node kinds blanked whole: comments and string, character and rune literals (and in
    /// JavaScript and TypeScript, regular expression literals and JSX text).
    fn blanked(self, kind: &str) -> bool {
        match self {
            Lang::Rust => matches!(
                kind,
                "line_comment"
                    | "block_comment"
                    | "string_literal"
                    | "raw_string_literal"
                    | "char_literal"
            ),
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => {
                matches!(
                    kind,
                    "comment"
                        | "html_comment"
                        | "string"
                        | "template_string"
                        | "regex"
                        | "jsx_text"
                )
            }
            Lang::Python => matches!(kind, "comment" | "string"),
            Lang::Go => matches!(
                kind,
                "comment" | "interpreted_string_literal" | "raw_string_literal" | "rune_literal"
            ),
        }
    }

    /// Node kinds inside a blanked string that are code again (template substitutions,
    /// f-string interpolations): restored and scanned.
    fn code_inside(self, kind: &str) -> bool {
        matches!(kind, "template_substitution" | "interpolation")
    }
}

thread_local! {
    static PARSERS: std::cell::RefCell<HashMap<Lang, tree_sitter::Parser>> =
        std::cell::RefCell::new(HashMap::new());
}

/// `src` with the comments and string literals of `lang` replaced by spaces (newlines kept),
/// byte for byte the same length, so offsets, lines and columns are unchanged. Code inside
/// template substitutions (`${…}`) and f-string interpolations (`{…}`) is kept.
///
/// Errors: the grammar could not be loaded or the parser gave no tree (not expected; the
/// caller then matches the text as it is).
pub fn strip(lang: Lang, src: &str) -> Result<String, String> {
    let tree = PARSERS.with(|cell| {
        let mut map = cell.borrow_mut();
        let parser = match map.entry(lang) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut p = tree_sitter::Parser::new();
                p.set_language(&lang.grammar())
                    .map_err(|e| format!("failed to load the {lang:?} grammar: {e}"))?;
                v.insert(p)
            }
        };
        parser
            .parse(src, None)
            .ok_or_else(|| format!("the {lang:?} parser gave no tree"))
    })?;
    let mut out = src.as_bytes().to_vec();
    let orig = src.as_bytes();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if lang.blanked(node.kind()) {
            blank(&mut out, node.start_byte(), node.end_byte());
            let mut c = node.walk();
            let mut inner: Vec<tree_sitter::Node> = Vec::new();
            for child in node.children(&mut c) {
                if lang.code_inside(child.kind()) {
                    inner.push(child);
                }
            }
            for child in inner {
                let (s, e) = (child.start_byte(), child.end_byte().min(orig.len()));
                if s < e {
                    out[s..e].copy_from_slice(&orig[s..e]);
                }
                stack.push(child);
            }
            continue;
        }
        let mut c = node.walk();
        for child in node.children(&mut c) {
            stack.push(child);
        }
    }
    // Only ASCII spaces replaced whole characters' bytes; a multi-byte character is blanked
    // as a whole (node ranges fall on character boundaries), so the text stays UTF-8.
    String::from_utf8(out).map_err(|e| format!("stripping broke UTF-8: {e}"))
}

fn blank(out: &mut [u8], start: usize, end: usize) {
    let end = end.min(out.len());
    for b in out.iter_mut().take(end).skip(start) {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

// -------------------------------------------------------------------------------------------
// Scanning
// -------------------------------------------------------------------------------------------

/// One violation of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The rule's id.
    pub rule: String,
    /// The rule's severity.
    pub severity: Severity,
    /// The rule's reason.
    pub reason: String,
    /// What matched: `symbol Command::new`, `pattern …`, or for entry-point rules
    /// `member tools of receiver dispatcher (allowed: call)`.
    pub what: String,
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// The offending line as it is in the file (trailing whitespace removed).
    pub text: String,
    /// A baseline entry lists this violation (it does not fail the guard).
    pub baselined: bool,
}

/// Why a file was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// A NUL byte in its first [`BINARY_PROBE`] bytes.
    Binary,
    /// Reading it failed (permissions, vanished, a walk error).
    Unreadable,
    /// Not UTF-8 text.
    NotUtf8,
    /// Larger than [`READ_CAP`]: not read.
    TooLarge,
}

/// A skipped file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The path relative to the root (or as the walker reported it).
    pub path: String,
    /// Why.
    pub why: SkipReason,
    /// Detail (the I/O error), may be empty.
    pub detail: String,
}

/// The result of one guard scan.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GuardReport {
    /// The root scanned, as given.
    pub root: String,
    /// The rules file, as given.
    pub rules_file: String,
    /// Rule ids in file order, with kind and severity.
    pub rules: Vec<RuleInfo>,
    /// Files the walk visited (after ignore files), skipped ones included.
    pub files_scanned: usize,
    /// Files that had a raw candidate match and went through a grammar.
    pub files_parsed: usize,
    /// Files with a candidate for a code-mode rule that were larger than [`PARSE_CAP`]: matched
    /// as they are, comments and strings included, without parsing.
    pub files_unparsed_large: usize,
    /// Files skipped (binary, unreadable, not UTF-8, over [`READ_CAP`]), sorted by path.
    pub skipped: Vec<Skipped>,
    /// Violations sorted by path, line, column, rule.
    pub violations: Vec<Violation>,
    /// Baseline entries that match no violation (each fails the guard).
    pub stale: Vec<BaselineEntry>,
    /// Wall time of the scan, milliseconds.
    pub duration_ms: u64,
}

/// A rule as listed in a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleInfo {
    /// The id.
    pub id: String,
    /// The kind.
    pub kind: Kind,
    /// The severity.
    pub severity: Severity,
    /// The reason.
    pub reason: String,
}

impl GuardReport {
    /// Error-level violations no baseline entry lists.
    pub fn errors(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.severity == Severity::Error && !v.baselined)
            .count()
    }

    /// Warning-level violations no baseline entry lists.
    pub fn warnings(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.severity == Severity::Warn && !v.baselined)
            .count()
    }

    /// Violations a baseline entry lists.
    pub fn baselined(&self) -> usize {
        self.violations.iter().filter(|v| v.baselined).count()
    }

    /// Whether the guard fails: an error-level violation not baselined, or a stale entry.
    pub fn failed(&self) -> bool {
        self.errors() > 0 || !self.stale.is_empty()
    }
}

/// One file's findings.
enum FileResult {
    Checked {
        parsed: bool,
        /// Over [`PARSE_CAP`] with a code-mode candidate: matched without stripping.
        unparsed_large: bool,
        found: Vec<Violation>,
    },
    Skipped(Skipped),
}

/// Scans one file's bytes against the rules; `path` is relative and `/`-separated.
fn check_file(rules: &Rules, path: &str, bytes: &[u8]) -> FileResult {
    let probe = &bytes[..bytes.len().min(BINARY_PROBE)];
    if memchr::memchr(0, probe).is_some() {
        return FileResult::Skipped(Skipped {
            path: path.to_string(),
            why: SkipReason::Binary,
            detail: String::new(),
        });
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return FileResult::Skipped(Skipped {
                path: path.to_string(),
                why: SkipReason::NotUtf8,
                detail: e.to_string(),
            })
        }
    };
    // Prefilter: the raw bytes against every rule's prefilter expressions at once (each never
    // weaker than the rule's real match, see `prefilter_sources`); only rules that apply to this
    // path and have a candidate (or no safe prefilter) go further.
    let hits = rules.prefilter.matches(bytes);
    let mut candidates: Vec<usize> = Vec::new();
    for ri in hits
        .iter()
        .filter_map(|h| rules.owners.get(h).copied())
        .chain(rules.always.iter().copied())
    {
        if !candidates.contains(&ri) && rules.rules.get(ri).is_some_and(|r| r.applies_to(path)) {
            candidates.push(ri);
        }
    }
    candidates.sort_unstable();
    if candidates.is_empty() {
        return FileResult::Checked {
            parsed: false,
            unparsed_large: false,
            found: Vec::new(),
        };
    }
    // Over the parse cap: matched as it is (stricter than stripped, never weaker).
    let unparsed_large = bytes.len() > PARSE_CAP;
    let lang = if unparsed_large { None } else { Lang::of(path) };
    let mut stripped: Option<String> = None;
    let mut parsed = false;
    let mut found = Vec::new();
    let lines = LineIndex::new(text);
    for &ri in &candidates {
        let Some(rule) = rules.rules.get(ri) else {
            continue;
        };
        let hay: &str = match (rule.mode, lang) {
            (Mode::Code, Some(l)) => {
                if stripped.is_none() {
                    parsed = true;
                    stripped = Some(strip(l, text).unwrap_or_else(|_| text.to_string()));
                }
                stripped.as_deref().unwrap_or(text)
            }
            _ => text,
        };
        for (re, label) in rule.exprs.iter().zip(&rule.labels) {
            for caps in re.captures_iter(hay) {
                let Some(m) = caps.get(0) else { continue };
                let what = if rule.kind == Kind::EntryPoint {
                    let member = caps.get(1).map_or("", |g| g.as_str());
                    if rule.entry.iter().any(|e| e == member) {
                        continue;
                    }
                    format!(
                        "member `{member}` of {label} (allowed: {})",
                        if rule.entry.is_empty() {
                            "none".to_string()
                        } else {
                            rule.entry.join(", ")
                        }
                    )
                } else {
                    label.clone()
                };
                let (line, col, line_text) = lines.locate(text, m.start());
                found.push(Violation {
                    rule: rule.id.clone(),
                    severity: rule.severity,
                    reason: rule.reason.clone(),
                    what,
                    path: path.to_string(),
                    line,
                    col,
                    text: line_text.trim_end().to_string(),
                    baselined: false,
                });
            }
        }
    }
    FileResult::Checked {
        parsed,
        unparsed_large: unparsed_large && candidates_need_parse(rules, &candidates, path),
        found,
    }
}

/// Whether any of the candidate rules would have parsed the file at `path` (a code-mode rule
/// over a language with a grammar): only such a file counts as matched unparsed.
fn candidates_need_parse(rules: &Rules, candidates: &[usize], path: &str) -> bool {
    Lang::of(path).is_some()
        && candidates
            .iter()
            .any(|&ri| rules.rules.get(ri).is_some_and(|r| r.mode == Mode::Code))
}

/// Line starts of a text, for offset → line:col.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { starts }
    }

    /// (1-based line, 1-based character column, the line's text) of a byte offset.
    fn locate<'a>(&self, text: &'a str, offset: usize) -> (usize, usize, &'a str) {
        let idx = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.starts[idx];
        let end = self
            .starts
            .get(idx + 1)
            .map_or(text.len(), |e| e.saturating_sub(1));
        let col = text.get(start..offset).map_or(1, |s| s.chars().count() + 1);
        let line_text = text.get(start..end).unwrap_or("");
        (idx + 1, col, line_text.trim_end_matches('\r'))
    }
}

/// Scans the tree under `root` against `rules`, in parallel.
///
/// The walk honours `.gitignore` (also outside a git checkout), `.ignore` and git's exclude
/// files, visits hidden files but never `.git`, follows no symbolic links, and leaves out the
/// files of `exclude_paths` (absolute or root-relative; the rules file itself, so its symbols do
/// not match). A file no rule applies to is counted but not read. Unreadable, binary and
/// non-UTF-8 files (among those read) are skipped and listed; a walk error is an unreadable
/// entry. Violations and skips are sorted. Never panics on file contents.
pub fn scan(root: &Path, rules: &Rules, exclude_paths: &[PathBuf]) -> GuardReport {
    let started = std::time::Instant::now();
    // (file name, canonical path): a file is resolved only when its name matches one.
    let canon_excludes: Vec<(std::ffi::OsString, PathBuf)> = exclude_paths
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter_map(|c| Some((c.file_name()?.to_os_string(), c)))
        .collect();
    type Totals = (usize, usize, Vec<Violation>, Vec<Skipped>, usize);
    let out: Mutex<Totals> = Mutex::new((0, 0, Vec::new(), Vec::new(), 0));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(|e| e.file_name() != ".git")
        .build_parallel();
    walker.run(|| {
        let out = &out;
        let excludes = &canon_excludes;
        Box::new(move |entry| {
            let mut local: Option<FileResult> = None;
            match entry {
                Err(e) => {
                    local = Some(FileResult::Skipped(Skipped {
                        path: walk_error_path(&e, root),
                        why: SkipReason::Unreadable,
                        detail: e.to_string(),
                    }));
                }
                Ok(e) => {
                    // A symbolic link counts as the regular file it names (a dangling one is
                    // unreadable); links to directories, FIFOs and devices are passed over,
                    // like those entries themselves (a FIFO would block the read).
                    let is_file = match e.file_type() {
                        Some(t) if t.is_symlink() => {
                            std::fs::metadata(e.path()).map_or(true, |m| m.is_file())
                        }
                        Some(t) => t.is_file(),
                        None => false,
                    };
                    if is_file {
                        let rel = relative(root, e.path());
                        let excluded = excludes.iter().any(|(name, canon)| {
                            name.as_os_str() == e.file_name()
                                && std::fs::canonicalize(e.path()).is_ok_and(|c| &c == canon)
                        });
                        if excluded {
                            // The rules file: neither read nor counted.
                        } else if !rules.rules.iter().any(|r| r.applies_to(&rel)) {
                            // No rule looks at this file: counted, never read.
                            local = Some(FileResult::Checked {
                                parsed: false,
                                unparsed_large: false,
                                found: Vec::new(),
                            });
                        } else {
                            local = Some(match read_capped(e.path(), READ_CAP) {
                                Ok(Some(bytes)) => check_file(rules, &rel, &bytes),
                                Ok(None) => FileResult::Skipped(Skipped {
                                    path: rel.clone(),
                                    why: SkipReason::TooLarge,
                                    detail: format!("over {} MiB", READ_CAP >> 20),
                                }),
                                Err(err) => FileResult::Skipped(Skipped {
                                    path: rel.clone(),
                                    why: SkipReason::Unreadable,
                                    detail: err.to_string(),
                                }),
                            });
                        }
                    }
                }
            }
            if let Some(r) = local {
                let mut g = match out.lock() {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
                g.0 += 1;
                match r {
                    FileResult::Checked {
                        parsed,
                        unparsed_large,
                        found,
                    } => {
                        if parsed {
                            g.1 += 1;
                        }
                        if unparsed_large {
                            g.4 += 1;
                        }
                        g.2.extend(found);
                    }
                    FileResult::Skipped(s) => g.3.push(s),
                }
            }
            ignore::WalkState::Continue
        })
    });
    let (files, parsed, mut violations, mut skipped, unparsed_large) = match out.into_inner() {
        Ok(v) => v,
        Err(p) => p.into_inner(),
    };
    violations
        .sort_by(|a, b| (&a.path, a.line, a.col, &a.rule).cmp(&(&b.path, b.line, b.col, &b.rule)));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    GuardReport {
        root: root.display().to_string(),
        rules_file: String::new(),
        rules: rules
            .rules
            .iter()
            .map(|r| RuleInfo {
                id: r.id.clone(),
                kind: r.kind,
                severity: r.severity,
                reason: r.reason.clone(),
            })
            .collect(),
        files_scanned: files,
        files_parsed: parsed,
        files_unparsed_large: unparsed_large,
        skipped,
        violations,
        stale: Vec::new(),
        duration_ms: started.elapsed().as_millis() as u64,
    }
}

/// A file's bytes, or `None` when it is larger than `cap` (by its metadata, or by what a read
/// of at most `cap + 1` bytes finds, for a file that grows), so no file larger than `cap` is
/// held in memory.
fn read_capped(path: &Path, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len > cap {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Ok(None);
    }
    Ok(Some(bytes))
}

fn walk_error_path(e: &ignore::Error, root: &Path) -> String {
    match e {
        ignore::Error::WithPath { path, .. } => relative(root, path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error_path(err, root)
        }
        _ => "-".into(),
    }
}

/// `path` relative to `root`, `/`-separated (the path as it is when not under root).
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

// -------------------------------------------------------------------------------------------
// The ratchet baseline
// -------------------------------------------------------------------------------------------

/// One known violation: the rule, the file, the offending line's trimmed text and which
/// occurrence of that (rule, path, text) triple it is in file order (0-based). Line numbers are
/// left out, so edits elsewhere in the file do not make an entry stale.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    /// The rule id.
    pub rule: String,
    /// The file, relative to the root.
    pub path: String,
    /// The offending line, trimmed.
    pub text: String,
    /// Which occurrence of the same rule, path and text (0-based).
    #[serde(default)]
    pub occurrence: usize,
}

/// A ratchet baseline file (JSON): `{"version": 1, "violations": [BaselineEntry…]}`. It may only
/// shrink: a listed violation that no longer exists is stale and fails the guard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Format version, 1.
    pub version: u32,
    /// The known violations.
    pub violations: Vec<BaselineEntry>,
}

/// The baseline fingerprints of a report's violations, in report order.
fn fingerprints(violations: &[Violation]) -> Vec<BaselineEntry> {
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    violations
        .iter()
        .map(|v| {
            let text = v.text.trim().to_string();
            let n = seen
                .entry((v.rule.clone(), v.path.clone(), text.clone()))
                .or_insert(0);
            let e = BaselineEntry {
                rule: v.rule.clone(),
                path: v.path.clone(),
                text,
                occurrence: *n,
            };
            *n += 1;
            e
        })
        .collect()
}

impl Baseline {
    /// Reads a baseline file. Errors: unreadable, not JSON of this shape (with the line and
    /// column serde reports), or a version other than 1.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = crate::base::textfile::read_utf8(path).map_err(|e| match e.place() {
            (0, _) => format!("{}: {}", path.display(), e.message("the baseline")),
            (line, col) => format!(
                "{}:{line}:{col}: {}",
                path.display(),
                e.message("the baseline")
            ),
        })?;
        let b: Baseline = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}:{}: failed to parse the baseline: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if b.version != 1 {
            return Err(format!(
                "{}: unsupported baseline version {} (this parity reads 1)",
                path.display(),
                b.version
            ));
        }
        Ok(b)
    }

    /// The baseline of every violation of a report (what `--write-baseline` records).
    pub fn from_report(report: &GuardReport) -> Baseline {
        let mut violations = fingerprints(&report.violations);
        violations.sort();
        Baseline {
            version: 1,
            violations,
        }
    }

    /// Marks the report's violations this baseline lists as baselined and records the entries
    /// that match none as stale.
    pub fn apply(&self, report: &mut GuardReport) {
        let mut left: BTreeMap<&BaselineEntry, usize> = BTreeMap::new();
        for e in &self.violations {
            *left.entry(e).or_insert(0) += 1;
        }
        let prints = fingerprints(&report.violations);
        for (v, fp) in report.violations.iter_mut().zip(&prints) {
            if let Some(n) = left.get_mut(fp) {
                if *n > 0 {
                    *n -= 1;
                    v.baselined = true;
                }
            }
        }
        let mut stale = Vec::new();
        for (e, n) in left {
            for _ in 0..n {
                stale.push(e.clone());
            }
        }
        report.stale = stale;
    }
}

// -------------------------------------------------------------------------------------------
// Reports
// -------------------------------------------------------------------------------------------

/// The console report: one block per violation (`path:line:col: error[rule] reason`, what
/// matched, the offending line with a caret), the skipped files (one line each when
/// `list_skipped`; always counted in the summary), stale baseline entries and a summary line.
pub fn render_console(r: &GuardReport, list_skipped: bool) -> String {
    let mut s = String::new();
    for v in &r.violations {
        let level = if v.baselined {
            "baselined"
        } else {
            v.severity.as_str()
        };
        s.push_str(&format!(
            "{}:{}:{}: {level}[{}] {}\n",
            v.path, v.line, v.col, v.rule, v.reason
        ));
        s.push_str(&format!("    = {}\n", v.what));
        let gutter = v.line.to_string();
        s.push_str(&format!("{gutter} | {}\n", v.text));
        let pad: String = v
            .text
            .chars()
            .take(v.col.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        s.push_str(&format!("{} | {pad}^\n", " ".repeat(gutter.len())));
    }
    for k in r.skipped.iter().filter(|_| list_skipped) {
        let why = match k.why {
            SkipReason::Binary => "binary",
            SkipReason::Unreadable => "unreadable",
            SkipReason::NotUtf8 => "not UTF-8",
            SkipReason::TooLarge => "too large: over 64 MiB, not read",
        };
        s.push_str(&format!("skipped: {} ({why})\n", k.path));
    }
    for e in &r.stale {
        s.push_str(&format!(
            "stale baseline entry: [{}] {}: {:?} (occurrence {}) no longer occurs; remove it from the baseline\n",
            e.rule, e.path, e.text, e.occurrence
        ));
    }
    s.push_str(&format!(
        "guard: {} rule(s), {} file(s) scanned ({} parsed{}), {} skipped; {} error(s), {} warning(s), {} baselined, {} stale baseline entr{}: {}\n",
        r.rules.len(),
        r.files_scanned,
        r.files_parsed,
        if r.files_unparsed_large > 0 {
            format!(
                ", {} matched unparsed (over {} MiB)",
                r.files_unparsed_large,
                PARSE_CAP >> 20
            )
        } else {
            String::new()
        },
        r.skipped.len(),
        r.errors(),
        r.warnings(),
        r.baselined(),
        r.stale.len(),
        if r.stale.len() == 1 { "y" } else { "ies" },
        if r.failed() { "FAILED" } else { "ok" },
    ));
    s
}

/// The JSON report (`"format": "parity-guard/1"`): root, rules file, rules, counts, skipped
/// files, violations (each with `rule`, `severity`, `reason`, `what`, `path`, `line`, `col`,
/// `text`, `baselined`), stale baseline entries and `ok`.
pub fn to_json(r: &GuardReport) -> serde_json::Value {
    serde_json::json!({
        "format": "parity-guard/1",
        "root": r.root,
        "rules_file": r.rules_file,
        "rules": r.rules,
        "files_scanned": r.files_scanned,
        "files_parsed": r.files_parsed,
        "files_unparsed_large": r.files_unparsed_large,
        "skipped": r.skipped,
        "violations": r.violations,
        "stale": r.stale,
        "errors": r.errors(),
        "warnings": r.warnings(),
        "baselined": r.baselined(),
        "duration_ms": r.duration_ms,
        "ok": !r.failed(),
    })
}

/// The JUnit report: a `guard` suite with one test case per rule (named by its id) that fails
/// with each error-level violation (`path:line:col` and the line) and carries warnings and
/// baselined ones in `<system-out>`, plus one failed case `baseline:<rule>:<path>` per stale
/// baseline entry.
pub fn to_junit_xml(r: &GuardReport) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("parity");
    let mut suite = TestSuite::new("guard");
    for rule in &r.rules {
        let mine: Vec<&Violation> = r.violations.iter().filter(|v| v.rule == rule.id).collect();
        let line =
            |v: &Violation| format!("{}:{}:{}: {} | {}", v.path, v.line, v.col, v.what, v.text);
        let failing: Vec<String> = mine
            .iter()
            .filter(|v| v.severity == Severity::Error && !v.baselined)
            .map(|v| line(v))
            .collect();
        let other: Vec<String> = mine
            .iter()
            .filter(|v| v.severity != Severity::Error || v.baselined)
            .map(|v| {
                format!(
                    "{}: {}",
                    if v.baselined { "baselined" } else { "warning" },
                    line(v)
                )
            })
            .collect();
        let status = if failing.is_empty() {
            TestCaseStatus::success()
        } else {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            st.set_message(format!("{} violation(s): {}", failing.len(), rule.reason));
            st.set_description(failing.join("\n"));
            st
        };
        let mut case = TestCase::new(rule.id.clone(), status);
        case.set_classname(format!("guard#{}", rule.id));
        if !other.is_empty() {
            case.set_system_out(other.join("\n"));
        }
        suite.add_test_case(case);
    }
    for e in &r.stale {
        let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
        st.set_message("stale baseline entry: the violation no longer occurs");
        st.set_description(format!("{:?} (occurrence {})", e.text, e.occurrence));
        let mut case = TestCase::new(format!("baseline:{}:{}", e.rule, e.path), st);
        case.set_classname("guard#baseline");
        suite.add_test_case(case);
    }
    report.add_test_suite(suite);
    report.to_string()
}

// -------------------------------------------------------------------------------------------
// `parity guard`
// -------------------------------------------------------------------------------------------

/// Options of `parity guard`.
#[derive(clap::Args, Debug)]
pub struct GuardArgs {
    /// The rules file (TOML, docs/guard.md). Default: `guard.toml` in ROOT.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report here: one test case per rule.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// A ratchet baseline of known violations (JSON, `--write-baseline`): listed violations do
    /// not fail; a listed violation that no longer occurs fails as stale.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Record every current violation in this baseline file, and exit 0 unless the rules or
    /// the root are bad.
    #[arg(long, value_name = "FILE", conflicts_with = "baseline")]
    pub write_baseline: Option<PathBuf>,
    /// Print only violations and the summary (no skipped files).
    #[arg(long, short)]
    pub quiet: bool,
    /// The tree to scan (default: the current directory).
    #[arg(value_name = "ROOT", default_value = ".")]
    pub root: PathBuf,
}

/// Loads the rules, scans `root`, applies `baseline`; the guard's one engine, shared by
/// `parity guard`, the `guard` profile of `parity run` and the benchmark.
///
/// Errors (`Err`, exit 2): the root is not a directory, the rules file is unreadable or bad, the
/// baseline is unreadable or bad.
pub fn run_guard(
    root: &Path,
    rules_path: &Path,
    baseline: Option<&Path>,
) -> Result<GuardReport, String> {
    if !root.is_dir() {
        return Err(format!("{}: the root is not a directory", root.display()));
    }
    let rules = load_rules(rules_path).map_err(|e| e.to_string())?;
    let base = baseline.map(Baseline::load).transpose()?;
    let mut report = scan(root, &rules, &[rules_path.to_path_buf()]);
    report.rules_file = rules_path.display().to_string();
    if let Some(b) = base {
        b.apply(&mut report);
    }
    Ok(report)
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("failed to write {}: {e}", path.display()))
}

/// `parity guard`: exit 0 clean (warnings and baselined violations allowed), 1 an error-level
/// violation or a stale baseline entry, 2 usage, an unreadable root or a bad rules or baseline
/// file.
pub fn cmd(args: GuardArgs) -> i32 {
    use crate::base::exit::EXIT_USAGE;
    let rules_path = args.rules.clone().unwrap_or_else(|| {
        if args.root == Path::new(".") {
            PathBuf::from("guard.toml")
        } else {
            args.root.join("guard.toml")
        }
    });
    let report = match run_guard(&args.root, &rules_path, args.baseline.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    print!("{}", render_console(&report, !args.quiet));
    if let Some(p) = &args.json {
        let text = match serde_json::to_string_pretty(&to_json(&report)) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: failed to encode the JSON report: {e}");
                return EXIT_USAGE;
            }
        };
        if let Err(e) = write_file(p, &(text + "\n")) {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    }
    if let Some(p) = &args.junit {
        let xml = match to_junit_xml(&report) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: failed to encode the JUnit report: {e}");
                return EXIT_USAGE;
            }
        };
        if let Err(e) = write_file(p, &xml) {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    }
    if let Some(p) = &args.write_baseline {
        let b = Baseline::from_report(&report);
        let text = match serde_json::to_string_pretty(&b) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: failed to encode the baseline: {e}");
                return EXIT_USAGE;
            }
        };
        if let Err(e) = write_file(p, &(text + "\n")) {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
        eprintln!(
            "wrote {} violation(s) to the baseline {}",
            b.violations.len(),
            p.display()
        );
        return 0;
    }
    i32::from(report.failed())
}

// -------------------------------------------------------------------------------------------
// The `guard` profile of `parity run`
// -------------------------------------------------------------------------------------------

/// The guard profile's one check.
pub const CHECK: &str = "guard.rules";

/// The guard profile's checks: `guard.rules`, every error-level rule of the target's rules file
/// holds over its root (warnings and baselined violations allowed, no stale baseline entry).
pub fn catalogue() -> Vec<crate::engine::check::Check> {
    use crate::engine::check::{Check, CheckKind, Level, Revs};
    vec![Check {
        id: CHECK,
        requirement: "Every error-level rule of the target's guard rules file holds over its root: no forbidden reference, no confined symbol outside its allow-list, no call past a module's entry points (outside the ratchet baseline), and no stale baseline entry.",
        level: Level::MustNot,
        quote: "Files matching a rule's globs MUST NOT reference what the rule forbids; a baseline entry that no longer occurs MUST be removed.",
        section: "guard#rules",
        revs: Revs::Only(&[REVISION]),
        capability: None,
        kind: CheckKind::Own,
    }]
}

/// The finding of `guard.rules` over a report: fail with one evidence line per error-level
/// violation and stale entry; a warning when only warning-level violations remain; a pass that
/// names the files scanned otherwise. Skipped files are listed in the evidence.
pub fn judge(r: &GuardReport) -> crate::engine::check::Finding {
    use crate::engine::check::{Finding, Status};
    let line = |v: &Violation| {
        format!(
            "{}:{}:{}: {}[{}] {} ({}) | {}",
            v.path,
            v.line,
            v.col,
            if v.baselined {
                "baselined"
            } else {
                v.severity.as_str()
            },
            v.rule,
            v.reason,
            v.what,
            v.text
        )
    };
    let mut evidence: Vec<String> = r.violations.iter().map(line).collect();
    evidence.extend(r.stale.iter().map(|e| {
        format!(
            "stale baseline entry: [{}] {}: {:?} (occurrence {})",
            e.rule, e.path, e.text, e.occurrence
        )
    }));
    evidence.extend(
        r.skipped
            .iter()
            .map(|k| format!("skipped: {} ({:?})", k.path, k.why)),
    );
    let summary = format!(
        "{} rule(s) over {} file(s) ({} skipped, {} matched unparsed over {} MiB)",
        r.rules.len(),
        r.files_scanned,
        r.skipped.len(),
        r.files_unparsed_large,
        PARSE_CAP >> 20
    );
    let status = if r.failed() {
        Status::Violated(format!(
            "{} error-level violation(s), {} stale baseline entr{}; {summary}",
            r.errors(),
            r.stale.len(),
            if r.stale.len() == 1 { "y" } else { "ies" }
        ))
    } else if r.warnings() > 0 {
        Status::Advisory(format!(
            "{} warning-level violation(s); {summary}",
            r.warnings()
        ))
    } else {
        Status::Pass
    };
    let mut f = Finding::pass(evidence);
    f.status = status;
    if f.evidence.is_empty() {
        f.evidence.push(summary);
    }
    f
}

/// The `guard` profile of `parity run`: the target's `[guard]` scanned, judged as
/// [`CHECK`]`@`[`BINDING`]`#`[`REVISION`].
///
/// Errors: the target has no `[guard]`; the root is not a directory; the rules or baseline
/// file is unreadable or bad (`parity run` exits 2).
pub fn run_profile(
    target: &crate::engine::target::Target,
    opts: &crate::engine::run::RunOptions,
) -> Result<crate::engine::run::RunReport, String> {
    use crate::engine::run::{case_id, to_result, RunReport};
    let decl = target.guard.as_ref().ok_or("the target has no [guard]")?;
    let mut report = RunReport {
        target: target.name.clone(),
        ..RunReport::default()
    };
    let planned: Vec<crate::engine::check::Check> = catalogue()
        .into_iter()
        .filter(|c| opts.selection.selects(&case_id(BINDING, c.id, REVISION)))
        .collect();
    if planned.is_empty() {
        return Ok(report);
    }
    let started = std::time::Instant::now();
    let g = run_guard(&decl.root, &decl.rules, decl.baseline.as_deref())?;
    report.eras.insert(BINDING.into(), REVISION.into());
    report.notes.push(format!(
        "guard: {} file(s) scanned under {}, {} parsed, {} matched unparsed (over {} MiB), {} skipped",
        g.files_scanned,
        decl.root.display(),
        g.files_parsed,
        g.files_unparsed_large,
        PARSE_CAP >> 20,
        g.skipped.len()
    ));
    for check in planned {
        let r = to_result(BINDING, &check, REVISION, judge(&g), g.duration_ms);
        opts.control.finished(&r);
        report.cases.push(r);
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The self-test's rules: one rule of each kind over a two-file tree.
const SELFTEST_RULES: &str = r#"
[[rule]]
id = "no-internals"
kind = "forbidden"
reason = "surfaces hold no tool logic"
files = ["src/surfaces/**"]
symbols = ["listDir"]

[[rule]]
id = "spawn-confined"
kind = "confined"
reason = "only the runtime spawns"
allow = ["src/runtime/**"]
patterns = ['\bspawn\(']

[[rule]]
id = "dispatcher-entry"
kind = "entry-point"
reason = "surfaces call only dispatcher.call"
files = ["src/surfaces/**"]
receivers = ["dispatcher"]
entry = ["call"]
"#;

/// The self-test's clean surface: it names an internal only in a comment and a string.
const SELFTEST_SURFACE: &str = "// listDir is the dispatcher's business\nexport const handle = (dispatcher, p) => dispatcher.call(p);\nexport const help = \"see listDir\";\n";

/// The self-test's faulty trees, one per rule kind: (fault name, file, line appended).
pub const SELFTEST_FAULTS: [(&str, &str, &str); 3] = [
    (
        "guard-forbidden",
        "src/surfaces/mcp.ts",
        "export const peek = (p) => listDir(p);",
    ),
    (
        "guard-confined",
        "src/tools/shell.ts",
        "export const run = (c) => spawn(c);",
    ),
    (
        "guard-entry-point",
        "src/surfaces/mcp.ts",
        "export const reset = (dispatcher) => dispatcher.reset();",
    ),
];

/// Writes the self-test tree under `root`, with `fault` (an entry of [`SELFTEST_FAULTS`])
/// injected when given; returns the rules file's path.
fn selftest_tree(root: &Path, fault: Option<(&str, &str)>) -> std::io::Result<PathBuf> {
    let put = |rel: &str, text: &str| -> std::io::Result<()> {
        let p = root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(p, text)
    };
    put("src/surfaces/mcp.ts", SELFTEST_SURFACE)?;
    put(
        "src/runtime/exec.ts",
        "import { spawn } from \"child_process\";\nexport const start = (c) => spawn(c);\n",
    )?;
    put(
        "src/tools/shell.ts",
        "export const quote = (s) => JSON.stringify(s);\n",
    )?;
    if let Some((file, line)) = fault {
        let p = root.join(file);
        let mut text = std::fs::read_to_string(&p)?;
        text.push_str(line);
        text.push('\n');
        std::fs::write(&p, text)?;
    }
    let rules = root.join("guard.toml");
    std::fs::write(&rules, SELFTEST_RULES)?;
    Ok(rules)
}

/// The guard profile's self-test: each faulty tree of [`SELFTEST_FAULTS`] (named) and the clean
/// tree (`None`), each scanned and judged as [`CHECK`]. A tree that cannot be written is left
/// out (its row then shows it unproven).
pub fn selftest_runs() -> Vec<(Option<&'static str>, crate::engine::run::RunReport)> {
    let mut out = Vec::new();
    let cases = SELFTEST_FAULTS
        .iter()
        .map(|(n, f, l)| (Some(*n), Some((*f, *l))))
        .chain(std::iter::once((None, None)));
    for (name, fault) in cases {
        let Ok(dir) = tempfile::tempdir() else {
            continue;
        };
        let Ok(rules) = selftest_tree(dir.path(), fault) else {
            continue;
        };
        let Ok(g) = run_guard(dir.path(), &rules, None) else {
            continue;
        };
        let mut report = crate::engine::run::RunReport {
            target: format!("guard self-test tree ({})", name.unwrap_or("clean")),
            ..crate::engine::run::RunReport::default()
        };
        for check in catalogue() {
            report.cases.push(crate::engine::run::to_result(
                BINDING,
                &check,
                REVISION,
                judge(&g),
                g.duration_ms,
            ));
        }
        out.push((name, report));
    }
    out
}

#[cfg(test)]
mod tests;
