//! The target file, format version 1 (`parity.toml`; `docs/target.md`).
//!
//! A target names the surfaces of one tool backend, the profiles to run, the outcome extraction
//! rules per surface, and the deadlines:
//!
//! ```toml
//! version = 1
//! name = "realm"
//! profiles = ["mcp", "acp", "equivalence"]   # default: every profile its surfaces allow
//!
//! [timeouts]                  # milliseconds; defaults 5000 / 30000 / 300 / 30000
//! message_ms = 5000
//! case_ms = 30000
//! silence_ms = 300
//! startup_ms = 30000          # spawn to a session's first answer
//!
//! [surfaces.mcp]
//! command = "node dist/mcp.js"
//! eras = "all"                # legacy | modern | all
//! [surfaces.mcp.outcome]      # JSON pointers into the tools/call result
//! structured = "/structuredContent"
//! text = "/content/0/text"
//! is_error = "/isError"
//! [surfaces.mcp.errors]       # JSON-RPC code → class, for equivalence
//! "-32602" = "invalid_call"
//!
//! [surfaces.acp]
//! command = "node dist/acp.js"
//! tool_method = "_realm/tool"
//! result = ""                 # pointer to the outcome in the tool method's result
//! cancel_prompt = "wait_for_cancel"
//!
//! [equivalence]
//! volatile = ["/value/since_ms"]   # pointers into the outcome, normalized before comparing
//! stateful = ["write_file"]       # tools that get a fresh peer per generated case
//! cases = 100
//! seed = 7
//!
//! [run]                       # defaults for `parity run` flags, which override them
//! scenarios = ["scenarios"]   # paths relative to the target file's directory
//! snapshots = "snapshots"
//! baseline = ".parity/baseline.yaml"
//! jobs = 4
//! timeout_multiplier = 2.0
//! ```
//!
//! Every table is closed: an unknown key, a wrong type, an invalid JSON pointer or an unknown
//! profile is a [`TargetError`] naming the file, line, column and key.
//!
//! Size (2708 lines): the target file v1: every table's raw form, its validation with located
//! errors and the loaded form; about 630 lines are unit tests. Each profile's tables move to its
//! profile when it declares the tables it reads (docs/architecture.md §The profile registry).

use crate::engine::outcome::{valid_pointer, AcpRules, ClassRule, KindMap, McpRules};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// parity's own profiles, in run order (`crate::profiles::builtin` holds them; a target file
/// may name these and any a library registers).
pub const PROFILES: [&str; 8] = [
    "mcp",
    "acp",
    "equivalence",
    "mcp-http",
    "facade",
    "hygiene",
    "dispatcher",
    "guard",
];

/// A target file error: `file:line:col: key: message`, or `file: message` when no line applies
/// (the file could not be read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct TargetError {
    /// The file as given.
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// The key at fault (`surfaces.acp.tool_method`), or `-` when none applies.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl Target {
    /// The error for a name of the target file's `profiles` that is not one of `known`
    /// (`file:line:col: profiles: unknown profile "x" (known: …)`), or `None` when every
    /// name is known.
    pub fn unknown_profile(&self, known: &[&str]) -> Option<TargetError> {
        self.profiles
            .iter()
            .zip(&self.profile_sites)
            .find(|(p, _)| !known.contains(&p.as_str()))
            .map(|(p, site)| TargetError {
                message: format!("unknown profile {p:?} (known: {})", known.join(", ")),
                ..site.clone()
            })
    }
}

impl TargetError {
    fn render(&self) -> String {
        let message =
            crate::base::textfile::clip_quoted(&self.message, crate::base::textfile::MAX_MESSAGE);
        if self.line == 0 {
            format!("{}: {message}", self.file)
        } else {
            let key =
                crate::base::textfile::clip_quoted(&self.key, crate::base::textfile::MAX_QUOTED);
            format!("{}:{}:{}: {key}: {message}", self.file, self.line, self.col)
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    version: Spanned<i64>,
    name: Option<String>,
    profiles: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    timeouts: RawTimeouts,
    #[serde(default)]
    surfaces: RawSurfaces,
    #[serde(default)]
    equivalence: RawEquivalence,
    facade: Option<RawFacade>,
    hygiene: Option<RawHygiene>,
    dispatcher: Option<RawDispatcher>,
    guard: Option<RawGuard>,
    run: Option<RawRun>,
    redact: Option<Vec<String>>,
    tools: Option<RawTools>,
    #[serde(default)]
    prompts: BTreeMap<String, RawPrompt>,
}

/// `[tools]`: which tools parity may call (docs/target.md, "Calling tools").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTools {
    #[serde(default)]
    safe: Vec<String>,
    #[serde(default)]
    never: Vec<String>,
    call: Option<Spanned<String>>,
}

/// `[prompts.<name>]`: values for a prompt's arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrompt {
    arguments: BTreeMap<String, String>,
}

/// `[run]`: defaults for `parity run` flags (docs/target.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    scenarios: Option<Vec<Spanned<String>>>,
    snapshots: Option<Spanned<String>>,
    baseline: Option<Spanned<String>>,
    jobs: Option<Spanned<i64>>,
    timeout_multiplier: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDispatcher {
    labels: Option<Spanned<Vec<String>>>,
    budget_ms: Option<Spanned<u64>>,
    tolerance_ms: Option<u64>,
    budget_reason: Option<String>,
    required_code: Option<String>,
    read_arguments: Option<Spanned<toml::Value>>,
    write_arguments: Option<Spanned<toml::Value>>,
    volatile: Option<Vec<String>>,
    #[serde(default)]
    tools: RawDispatcherTools,
    configs: Spanned<RawDispatcherConfigs>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDispatcherTools {
    status: Option<String>,
    retry: Option<String>,
    read_file: Option<String>,
    write_file: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDispatcherConfigs {
    slow_start: Vec<String>,
    required: Vec<String>,
    flaky: Vec<String>,
    stopping: Option<Vec<String>>,
}

/// `[guard]`: the static architecture guard (docs/guard.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGuard {
    rules: Option<Spanned<String>>,
    root: Option<Spanned<String>>,
    baseline: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHygiene {
    command: Option<Spanned<String>>,
    header: Option<Spanned<String>>,
    stored: Option<Spanned<String>>,
    delivery: Option<Spanned<String>>,
    variable: Option<Spanned<String>>,
    stdin_line: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    file_vars: Vec<Spanned<String>>,
    legacy: Option<Vec<Spanned<String>>>,
    stale_file_vars: Option<Vec<Spanned<String>>>,
    rotation: Option<Spanned<String>>,
    rotation_line: Option<Spanned<String>>,
    rotation_signal: Option<Spanned<String>>,
    cwd: Option<String>,
    settle_ms: Option<Spanned<u64>>,
    linger_ms: Option<u64>,
    ptrace: Option<bool>,
    poll_ms: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFacade {
    catalogue: Option<Spanned<String>>,
    admin: Option<Spanned<String>>,
    mint_command: Option<Spanned<String>>,
    revoke_command: Option<Spanned<String>>,
    bad_token: Option<Spanned<String>>,
    remint: Option<Spanned<String>>,
    session_tool: Spanned<String>,
    session_arguments: Option<Spanned<toml::Value>>,
    invalid_arguments: Option<Spanned<toml::Value>>,
    preflight_tool: Option<Spanned<String>>,
    preflight_invalid_arguments: Option<Spanned<toml::Value>>,
    canary_argument: Option<Spanned<String>>,
    canary_arguments: Option<Spanned<toml::Value>>,
    audit_log: Option<String>,
    audit: Option<RawAudit>,
    topology: Option<RawTopology>,
}

/// `[facade.audit]`: the shape of the facade's audit lines (defaults: the reference's).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    lines: Option<Spanned<String>>,
    provider: Option<Spanned<String>>,
    tool: Option<Spanned<String>>,
    channel: Option<Spanned<String>>,
    hash: Option<Spanned<String>>,
    is_error: Option<Spanned<String>>,
    entry: Option<Spanned<BTreeMap<String, toml::Value>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    anonymous: Vec<String>,
    session: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTimeouts {
    message_ms: Option<Spanned<u64>>,
    case_ms: Option<Spanned<u64>>,
    silence_ms: Option<Spanned<u64>>,
    startup_ms: Option<Spanned<u64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSurfaces {
    mcp: Option<RawMcp>,
    acp: Option<RawAcp>,
    http: Option<RawHttp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMcp {
    command: Spanned<String>,
    eras: Option<Spanned<String>>,
    #[serde(default)]
    reference: bool,
    #[serde(default)]
    outcome: RawMcpOutcome,
    #[serde(default)]
    errors: BTreeMap<Spanned<String>, String>,
    #[serde(default)]
    classes: Vec<RawClass>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClass {
    kind: Spanned<String>,
    code: Option<toml::Value>,
    message_contains: Option<String>,
    class: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMcpOutcome {
    structured: Option<Spanned<String>>,
    text: Option<Spanned<String>>,
    is_error: Option<Spanned<String>>,
    kind: Option<Spanned<toml::Value>>,
    ok: Option<Spanned<toml::Value>>,
    refused: Option<Spanned<toml::Value>>,
    tool_error: Option<Spanned<toml::Value>>,
    value: Option<Spanned<String>>,
    code: Option<Spanned<String>>,
    message: Option<Spanned<String>>,
    warnings: Option<Spanned<String>>,
}

/// `[surfaces.acp.outcome]`: a tool-method result that names its outcome kind in a field of
/// its own (the same keys as the kind keys of `[surfaces.mcp.outcome]`).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAcpOutcome {
    kind: Option<Spanned<toml::Value>>,
    ok: Option<Spanned<toml::Value>>,
    refused: Option<Spanned<toml::Value>>,
    tool_error: Option<Spanned<toml::Value>>,
    value: Option<Spanned<String>>,
    code: Option<Spanned<String>>,
    message: Option<Spanned<String>>,
    warnings: Option<Spanned<String>>,
}

/// The kind keys of an outcome table, borrowed from either surface's raw table.
struct RawKinds<'a> {
    kind: &'a Option<Spanned<toml::Value>>,
    ok: &'a Option<Spanned<toml::Value>>,
    refused: &'a Option<Spanned<toml::Value>>,
    tool_error: &'a Option<Spanned<toml::Value>>,
    value: &'a Option<Spanned<String>>,
    code: &'a Option<Spanned<String>>,
    message: &'a Option<Spanned<String>>,
    warnings: &'a Option<Spanned<String>>,
}

impl RawMcpOutcome {
    fn kinds(&self) -> RawKinds<'_> {
        RawKinds {
            kind: &self.kind,
            ok: &self.ok,
            refused: &self.refused,
            tool_error: &self.tool_error,
            value: &self.value,
            code: &self.code,
            message: &self.message,
            warnings: &self.warnings,
        }
    }
}

impl RawAcpOutcome {
    fn kinds(&self) -> RawKinds<'_> {
        RawKinds {
            kind: &self.kind,
            ok: &self.ok,
            refused: &self.refused,
            tool_error: &self.tool_error,
            value: &self.value,
            code: &self.code,
            message: &self.message,
            warnings: &self.warnings,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAcp {
    command: Spanned<String>,
    tool_method: Option<Spanned<String>>,
    params: Option<Spanned<toml::Value>>,
    #[serde(default)]
    outcome: RawAcpOutcome,
    result: Option<Spanned<String>>,
    cancel_prompt: Option<String>,
    #[serde(default)]
    errors: BTreeMap<Spanned<String>, String>,
    #[serde(default)]
    classes: Vec<RawClass>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    url: Option<Spanned<String>>,
    command: Option<Spanned<String>>,
    prints: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    #[serde(default)]
    outcome: RawMcpOutcome,
    #[serde(default)]
    errors: BTreeMap<Spanned<String>, String>,
    #[serde(default)]
    classes: Vec<RawClass>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawEquivalence {
    #[serde(default)]
    volatile: Vec<Spanned<String>>,
    #[serde(default)]
    stateful: Vec<String>,
    #[serde(default)]
    tools: Vec<String>,
    cases: Option<u32>,
    seed: Option<u64>,
    #[serde(default)]
    compare_messages: bool,
}

/// The MCP stdio surface of a target.
#[derive(Debug, Clone)]
pub struct McpSurface {
    /// The command line (split like a shell, no expansion).
    pub command: String,
    /// `legacy`, `modern` or `all`.
    pub eras: crate::engine::run::EraSel,
    /// The command serves the bundled reference's tools and seeded workspace.
    pub reference: bool,
    /// Outcome extraction.
    pub rules: McpRules,
}

/// The ACP surface of a target.
#[derive(Debug, Clone)]
pub struct AcpSurface {
    /// The command line.
    pub command: String,
    /// The tool extension method the target declares (`tool_method`, or `--tool-method`);
    /// `None` when it declares none. Equivalence then calls [`crate::protocol::acp::DEFAULT_TOOL_METHOD`]
    /// ([`AcpSurface::tool_method_or_default`]), and the ACP tool-method checks use the method
    /// the agent advertises, or skip.
    pub tool_method: Option<String>,
    /// A prompt the agent keeps its turn open for until `session/cancel`.
    pub cancel_prompt: Option<String>,
    /// The tool method's params template (`params`; [`crate::protocol::acp::fill_params`]),
    /// `None` for the ToolCall map `{name, arguments, sessionId}`.
    pub params: Option<serde_json::Value>,
    /// Outcome extraction.
    pub rules: AcpRules,
}

impl AcpSurface {
    /// The tool method to call for equivalence: the declared one, else
    /// [`crate::protocol::acp::DEFAULT_TOOL_METHOD`].
    pub fn tool_method_or_default(&self) -> String {
        self.tool_method
            .clone()
            .unwrap_or_else(|| crate::protocol::acp::DEFAULT_TOOL_METHOD.to_string())
    }
}

/// The MCP Streamable HTTP surface of a target: a URL, or a command parity starts that
/// prints its URL as the first stdout line.
#[derive(Debug, Clone)]
pub struct HttpSurface {
    /// Where the endpoint comes from.
    pub source: crate::engine::http_surface::FacadeSource,
    /// Outcome extraction for its `tools/call` results (`[surfaces.http.outcome]`, `errors`,
    /// `classes`: the keys of `[surfaces.mcp]`), read by equivalence.
    pub rules: McpRules,
}

/// Equivalence settings.
#[derive(Debug, Clone, Default)]
pub struct Equivalence {
    /// JSON pointers into the outcome whose values are normalized before comparing.
    pub volatile: Vec<String>,
    /// Tools that change state: each generated case gets fresh peers.
    pub stateful: Vec<String>,
    /// Tools to generate calls for (empty: every tool `tools/list` shows).
    pub tools: Vec<String>,
    /// Generated cases per tool (`--cases` overrides); default 100.
    pub cases: Option<u32>,
    /// Generator seed (`--seed` overrides); default random, printed in the report.
    pub seed: Option<u64>,
    /// Compare the messages of refusals and errors too (default: kinds and codes only).
    pub compare_messages: bool,
}

/// A loaded target.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// Display name.
    pub name: String,
    /// Profiles to run (empty: every profile the surfaces allow).
    pub profiles: Vec<String>,
    /// Where each of `profiles` is written in the target file (a located error with an empty
    /// message), so a name the run's registry does not hold is refused at its line.
    pub profile_sites: Vec<TargetError>,
    /// Per-message deadline override, milliseconds.
    pub message_ms: Option<u64>,
    /// Per-case deadline override, milliseconds.
    pub case_ms: Option<u64>,
    /// Silence window override, milliseconds.
    pub silence_ms: Option<u64>,
    /// Start-up deadline override (spawn to a session's first answer), milliseconds.
    pub startup_ms: Option<u64>,
    /// The MCP stdio surface.
    pub mcp: Option<McpSurface>,
    /// The ACP surface.
    pub acp: Option<AcpSurface>,
    /// Equivalence settings.
    pub equivalence: Equivalence,
    /// The MCP Streamable HTTP surface.
    pub http: Option<HttpSurface>,
    /// Facade declarations (`[facade]`); with `http`, the facade profile runs.
    pub facade: Option<crate::engine::decl::FacadeDecl>,
    /// The bundled reference facade in this catalogue form is started for the facade
    /// profile (set only by [`reference`]).
    pub reference_facade: Option<crate::engine::decl::CatalogueForm>,
    /// A host for the credential-hygiene probe (`[hygiene]`, docs/hygiene.md).
    pub hygiene: Option<crate::engine::decl::HygieneDecl>,
    /// Lifecycle and policy declarations (`[dispatcher]`, docs/dispatcher.md); with an MCP
    /// or ACP surface, the dispatcher profile runs.
    pub dispatcher: Option<crate::engine::decl::DispatcherDecl>,
    /// A source tree and its architecture rules (`[guard]`, docs/guard.md), paths resolved
    /// against the target file's directory.
    pub guard: Option<crate::engine::decl::GuardDecl>,
    /// Defaults for `parity run` flags (`[run]`); the command line overrides each.
    pub run: RunDefaults,
    /// Top-level `redact = [...]`: values (or regular expressions) redacted from every report,
    /// after those of `--redact` (docs/redaction.md).
    pub redact: Vec<String>,
    /// `[tools]`: the tools the checks may call and those they never call
    /// (`--call-tools read-only` sets `read_only`).
    pub calls: crate::engine::check::CallPolicy,
    /// `[prompts.<name>] arguments`: declared argument values per prompt name.
    pub prompt_arguments: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
}

/// `[run]`: what `parity run` uses when the matching flag is not given. Paths are resolved
/// against the target file's directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunDefaults {
    /// Scenario directories (`--scenarios`, which replaces the whole list when given).
    pub scenarios: Vec<std::path::PathBuf>,
    /// The snapshot directory (`--snapshots`).
    pub snapshots: Option<std::path::PathBuf>,
    /// The baseline of expected failures (`--baseline`).
    pub baseline: Option<std::path::PathBuf>,
    /// Cases run at once (`--jobs`), at least 1.
    pub jobs: Option<u64>,
    /// The deadline factor (`--timeout-multiplier`), a positive finite number.
    pub timeout_multiplier: Option<f64>,
}

/// The 1-based line and column (in characters) of byte `offset` in `text`
/// ([`crate::base::textfile::line_col`]: lines end at LF, CRLF or a lone CR).
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    crate::base::textfile::line_col(text, offset)
}

/// The dotted key a TOML error at `line` (1-based) is about: the table of a header line, the
/// key of a `key = value` line, else the key whose value spans that line (the nearest line above
/// with one, in the same table), else the table in force, else `(top level)`. Lines end as
/// [`crate::base::textfile::lines`] says, so a CR-only file has lines too.
pub(crate) fn key_at(text: &str, line: usize) -> String {
    let all = crate::base::textfile::lines(text);
    let n = line.saturating_sub(1).min(all.len());
    let upto = all.get(..(n + 1).min(all.len())).unwrap_or_default();
    let clip = |k: &str| crate::base::textfile::clip_quoted(k, 120);
    if let Some(name) = upto.get(n).and_then(|l| header_name(l)) {
        return clip(&name);
    }
    for l in upto.iter().rev() {
        if header_name(l).is_some() {
            break;
        }
        if let Some(k) = l.split_once('=').and_then(|(k, _)| toml_key(k)) {
            return clip(&match table_at(upto) {
                Some(t) => format!("{t}.{k}"),
                None => k,
            });
        }
    }
    table_at(upto).map_or_else(|| "(top level)".to_string(), |t| clip(&t))
}

/// `k` (the text before `=`) as a dotted key when it is one: bare keys (`A-Za-z0-9_-`) and
/// whole quoted keys joined by `.`; quotes are dropped.
fn toml_key(k: &str) -> Option<String> {
    let parts: Vec<String> = k
        .split('.')
        .map(str::trim)
        .map(|p| {
            let quoted = p.len() >= 2
                && ((p.starts_with('"') && p.ends_with('"'))
                    || (p.starts_with('\'') && p.ends_with('\'')));
            if quoted {
                Some(p[1..p.len() - 1].to_string())
            } else if !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                Some(p.to_string())
            } else {
                None
            }
        })
        .collect::<Option<_>>()?;
    Some(parts.join("."))
}

/// The last table header among `lines`.
fn table_at(lines: &[&str]) -> Option<String> {
    lines.iter().rev().find_map(|l| header_name(l))
}

/// A table header's name (`[a.b]`, `[[a.b]]`), without brackets or a trailing comment.
fn header_name(line: &str) -> Option<String> {
    let l = line.trim();
    if !l.starts_with('[') {
        return None;
    }
    let inner = l.trim_start_matches('[');
    let end = inner.find(']')?;
    Some(inner[..end].trim().to_string())
}

/// What a TOML loader says of a carriage return not followed by a line feed (TOML forbids one
/// outside a string; most often the file has CR-only line endings).
pub(crate) const LONE_CR: &str = "a carriage return not followed by a line feed: TOML lines end with LF or CRLF (are the line endings CR only? save the file with LF line endings)";

/// Parses a target file's text. `file` names it in errors.
///
/// Errors: TOML syntax, an unknown key, a wrong type, `version` other than 1, an unknown
/// profile or `eras` value, an invalid JSON pointer, an error-map key that is not an integer,
/// `[surfaces.http]` (MCP over Streamable HTTP comes with the session-gating facade), or no
/// surface at all.
pub fn parse(file: &str, text: &str) -> Result<Target, TargetError> {
    let err_at = |offset: usize, key: &str, message: String| {
        let (line, col) = line_col(text, offset);
        TargetError {
            file: file.to_string(),
            line,
            col,
            key: key.to_string(),
            message,
        }
    };
    if let Some(offset) = crate::base::textfile::lone_cr(text) {
        let (line, _) = line_col(text, offset);
        return Err(err_at(offset, &key_at(text, line), LONE_CR.to_string()));
    }
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let (line, _) = line_col(text, offset);
        err_at(offset, &key_at(text, line), e.message().to_string())
    })?;
    if *raw.version.get_ref() != 1 {
        return Err(err_at(
            raw.version.span().start,
            "version",
            format!(
                "unsupported version {}; this parity reads version 1",
                raw.version.get_ref()
            ),
        ));
    }
    let pointer = |s: &Spanned<String>, key: &str| -> Result<String, TargetError> {
        if valid_pointer(s.get_ref()) {
            Ok(s.get_ref().clone())
        } else {
            Err(err_at(
                s.span().start,
                key,
                format!(
                    "{:?} is not a JSON pointer (RFC 6901: empty, or starting with `/`; `~` only as `~0` or `~1`)",
                    s.get_ref()
                ),
            ))
        }
    };
    let codes = |m: &BTreeMap<Spanned<String>, String>,
                 key: &str|
     -> Result<BTreeMap<i64, String>, TargetError> {
        let mut out = BTreeMap::new();
        for (k, v) in m {
            let code: i64 = k.get_ref().trim().parse().map_err(|_| {
                err_at(
                    k.span().start,
                    key,
                    format!(
                        "{:?} is not a JSON-RPC error code (an integer)",
                        k.get_ref()
                    ),
                )
            })?;
            out.insert(code, v.clone());
        }
        Ok(out)
    };
    let positive = |v: &Option<Spanned<u64>>, key: &str| -> Result<Option<u64>, TargetError> {
        match v {
            Some(ms) if *ms.get_ref() == 0 => Err(err_at(
                ms.span().start,
                key,
                "a deadline must be at least 1 millisecond".into(),
            )),
            Some(ms) => Ok(Some(*ms.get_ref())),
            None => Ok(None),
        }
    };
    let command = |c: &Spanned<String>, key: &str| -> Result<String, TargetError> {
        crate::transport::peer::split_words(c.get_ref())
            .and_then(|w| {
                if w.is_empty() {
                    Err("empty command".to_string())
                } else {
                    Ok(w)
                }
            })
            .map_err(|e| err_at(c.span().start, key, e))?;
        Ok(c.get_ref().clone())
    };
    let classes = |rules: &[RawClass], key: &str| -> Result<Vec<ClassRule>, TargetError> {
        rules
            .iter()
            .map(|r| {
                let kind = r.kind.get_ref();
                if !["refused", "tool_error", "protocol_error"].contains(&kind.as_str()) {
                    return Err(err_at(
                        r.kind.span().start,
                        key,
                        format!("kind {kind:?} is not refused, tool_error or protocol_error"),
                    ));
                }
                Ok(ClassRule {
                    kind: kind.clone(),
                    code: r.code.as_ref().map(|c| match c {
                        toml::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    }),
                    message_contains: r.message_contains.clone(),
                    class: r.class.clone(),
                })
            })
            .collect()
    };
    // The outcome rules of an MCP surface (`[surfaces.mcp]` or `[surfaces.http]`): its
    // `outcome` table, `errors` and `classes`, errors named under `table`.
    let mcp_rules = |o: &RawMcpOutcome,
                     errors: &BTreeMap<Spanned<String>, String>,
                     class_rules: &[RawClass],
                     table: &str|
     -> Result<McpRules, TargetError> {
        let d = McpRules::default();
        let at = |s: &Option<Spanned<String>>, key: &str, default: String| match s {
            Some(s) => pointer(s, &format!("{table}.outcome.{key}")),
            None => Ok(default),
        };
        Ok(McpRules {
            structured: at(&o.structured, "structured", d.structured)?,
            text: at(&o.text, "text", d.text)?,
            is_error: at(&o.is_error, "is_error", d.is_error)?,
            errors: codes(errors, &format!("{table}.errors"))?,
            classes: classes(class_rules, &format!("{table}.classes"))?,
            kinds: kind_map(&o.kinds(), &format!("{table}.outcome"), &pointer, &err_at)?,
        })
    };
    let mut target = Target {
        name: raw.name.clone().unwrap_or_else(|| file.to_string()),
        message_ms: positive(&raw.timeouts.message_ms, "timeouts.message_ms")?,
        case_ms: positive(&raw.timeouts.case_ms, "timeouts.case_ms")?,
        silence_ms: positive(&raw.timeouts.silence_ms, "timeouts.silence_ms")?,
        startup_ms: positive(&raw.timeouts.startup_ms, "timeouts.startup_ms")?,
        redact: raw.redact.clone().unwrap_or_default(),
        ..Target::default()
    };
    // The names are checked against the run's profile registry when it runs
    // (`Target::unknown_profile`): a library may register more than parity's own.
    for p in raw.profiles.iter().flatten() {
        target.profiles.push(p.get_ref().clone());
        target
            .profile_sites
            .push(err_at(p.span().start, "profiles", String::new()));
    }
    if let Some(h) = &raw.surfaces.http {
        if let (Some(_), Some(p)) = (&h.url, h.prints.as_ref().or(h.path.as_ref())) {
            let key = if h.prints.is_some() {
                "surfaces.http.prints"
            } else {
                "surfaces.http.path"
            };
            return Err(err_at(
                p.span().start,
                key,
                "`prints` and `path` say what a started `command` prints; a `url` is used as given"
                    .into(),
            ));
        }
        let source = match (&h.url, &h.command) {
            (Some(u), None) => {
                let url = u.get_ref().trim();
                if !url.starts_with("http://") {
                    return Err(err_at(
                        u.span().start,
                        "surfaces.http.url",
                        format!("{url:?} is not an http:// URL (parity talks to loopback endpoints without TLS)"),
                    ));
                }
                crate::engine::http_surface::FacadeSource::Url(url.to_owned())
            }
            (None, Some(c)) => {
                let cmd = command(c, "surfaces.http.command")?;
                let spec = crate::transport::peer::PeerSpec::from_command_line(&cmd)
                    .map_err(|e| err_at(c.span().start, "surfaces.http.command", e))?;
                let prints = h.prints.as_ref().map(|p| (p.get_ref().as_str(), p.span().start));
                match prints {
                    None | Some(("url", _)) => {
                        if let Some(p) = &h.path {
                            return Err(err_at(
                                p.span().start,
                                "surfaces.http.path",
                                "`path` builds the endpoint from a printed port: it needs `prints = \"port\"`".into(),
                            ));
                        }
                        crate::engine::http_surface::FacadeSource::Command(spec)
                    }
                    Some(("port", _)) => {
                        let path = match &h.path {
                            None => crate::engine::http_surface::DEFAULT_PATH.to_owned(),
                            Some(p) => {
                                let v = p.get_ref();
                                if !v.starts_with('/')
                                    || v.chars().any(|c| c.is_whitespace() || c == '?' || c == '#')
                                {
                                    return Err(err_at(
                                        p.span().start,
                                        "surfaces.http.path",
                                        format!("{v:?} is not an endpoint path (it starts with `/` and holds no space, `?` or `#`)"),
                                    ));
                                }
                                v.clone()
                            }
                        };
                        crate::engine::http_surface::FacadeSource::PortCommand { spec, path }
                    }
                    Some((other, at)) => {
                        return Err(err_at(
                            at,
                            "surfaces.http.prints",
                            format!("unknown value {other:?} (one of: url, port)"),
                        ))
                    }
                }
            }
            (Some(u), Some(_)) => {
                return Err(err_at(
                    u.span().start,
                    "surfaces.http",
                    "give either `url` or `command`, not both".into(),
                ))
            }
            (None, None) => {
                return Err(err_at(
                    text.find("[surfaces.http]").unwrap_or(0),
                    "surfaces.http",
                    "give `url` (a running endpoint) or `command` (parity starts it; it prints its URL first)".into(),
                ))
            }
        };
        target.http = Some(HttpSurface {
            source,
            rules: mcp_rules(&h.outcome, &h.errors, &h.classes, "surfaces.http")?,
        });
    }
    if let Some(f) = &raw.facade {
        target.facade = Some(facade_decl(f, &err_at)?);
        if target.http.is_none() {
            return Err(err_at(
                text.find("[facade]").unwrap_or(0),
                "facade",
                "[facade] needs [surfaces.http] (the facade's url or command)".into(),
            ));
        }
    }
    if let Some(m) = &raw.surfaces.mcp {
        let eras = match m
            .eras
            .as_ref()
            .map(|e| (e.get_ref().as_str(), e.span().start))
        {
            None | Some(("all", _)) => crate::engine::run::EraSel::All,
            Some(("legacy", _)) => crate::engine::run::EraSel::Legacy,
            Some(("modern", _)) => crate::engine::run::EraSel::Modern,
            Some((other, at)) => {
                return Err(err_at(
                    at,
                    "surfaces.mcp.eras",
                    format!("unknown era selection {other:?} (legacy, modern or all)"),
                ))
            }
        };
        target.mcp = Some(McpSurface {
            command: command(&m.command, "surfaces.mcp.command")?,
            eras,
            reference: m.reference,
            rules: mcp_rules(&m.outcome, &m.errors, &m.classes, "surfaces.mcp")?,
        });
    }
    if let Some(a) = &raw.surfaces.acp {
        let tool_method = match &a.tool_method {
            Some(m) if m.get_ref().trim().is_empty() => {
                return Err(err_at(
                    m.span().start,
                    "surfaces.acp.tool_method",
                    "the tool method must not be empty (omit the key to declare none)".into(),
                ))
            }
            Some(m) => Some(m.get_ref().clone()),
            None => None,
        };
        let params = match &a.params {
            Some(p) => {
                let t = toml_to_json(p.get_ref());
                if let Some(problem) = crate::protocol::acp::params_template_problem(&t) {
                    return Err(err_at(p.span().start, "surfaces.acp.params", problem));
                }
                Some(t)
            }
            None => None,
        };
        target.acp = Some(AcpSurface {
            command: command(&a.command, "surfaces.acp.command")?,
            tool_method,
            cancel_prompt: a.cancel_prompt.clone(),
            params,
            rules: AcpRules {
                result: match &a.result {
                    Some(s) => pointer(s, "surfaces.acp.result")?,
                    None => String::new(),
                },
                errors: codes(&a.errors, "surfaces.acp.errors")?,
                classes: classes(&a.classes, "surfaces.acp.classes")?,
                kinds: kind_map(
                    &a.outcome.kinds(),
                    "surfaces.acp.outcome",
                    &pointer,
                    &err_at,
                )?,
            },
        });
    }
    if let Some(h) = &raw.hygiene {
        let at = text.find("[hygiene]").unwrap_or(0);
        target.hygiene = Some(hygiene_decl(h, at, &err_at)?);
    }
    if let Some(d) = &raw.dispatcher {
        target.dispatcher = Some(dispatcher_decl(d, &err_at)?);
    }
    // Relative paths are relative to the target file's directory.
    let base = Path::new(file)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if let Some(r) = &raw.run {
        target.run = run_defaults(r, &base, &err_at)?;
    }
    if let Some(g) = &raw.guard {
        let resolve = |v: &Option<Spanned<String>>, key: &str, default: &str| {
            let s = v.as_ref().map_or(default, |s| s.get_ref().as_str());
            if s.is_empty() {
                let at = v.as_ref().map_or(0, |s| s.span().start);
                return Err(err_at(at, key, "must not be empty".into()));
            }
            Ok(base.join(s))
        };
        target.guard = Some(crate::engine::decl::GuardDecl {
            rules: resolve(&g.rules, "guard.rules", "guard.toml")?,
            root: resolve(&g.root, "guard.root", ".")?,
            baseline: match &g.baseline {
                Some(_) => Some(resolve(&g.baseline, "guard.baseline", "")?),
                None => None,
            },
        });
    }
    if target.mcp.is_none()
        && target.acp.is_none()
        && target.http.is_none()
        && target.hygiene.is_none()
        && target.guard.is_none()
    {
        return Err(err_at(
            0,
            "surfaces",
            "the target names no surface: add [surfaces.mcp], [surfaces.acp], [surfaces.http], [hygiene] and/or [guard]".into(),
        ));
    }
    let e = &raw.equivalence;
    let mut volatile = Vec::new();
    for v in &e.volatile {
        volatile.push(pointer(v, "equivalence.volatile")?);
    }
    target.equivalence = Equivalence {
        volatile,
        stateful: e.stateful.clone(),
        tools: e.tools.clone(),
        cases: e.cases,
        seed: e.seed,
        compare_messages: e.compare_messages,
    };
    if let Some(t) = &raw.tools {
        let read_only = match &t.call {
            None => false,
            Some(c) => match c.get_ref().as_str() {
                "declared" => false,
                "read-only" => true,
                other => {
                    return Err(err_at(
                        c.span().start,
                        "tools.call",
                        format!("{other:?} is not `declared` or `read-only`"),
                    ))
                }
            },
        };
        target.calls = crate::engine::check::CallPolicy {
            safe: t.safe.clone(),
            never: t.never.clone(),
            read_only,
        };
    }
    for (name, p) in &raw.prompts {
        let args = p
            .arguments
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        target.prompt_arguments.insert(name.clone(), args);
    }
    Ok(target)
}

/// Checks a JSON pointer value of the key named, giving it back (the `pointer` closure of
/// [`parse`]).
type PointerCheck<'a> = dyn Fn(&Spanned<String>, &str) -> Result<String, TargetError> + 'a;

/// The kind keys of `[surfaces.<table>.outcome]` as a [`KindMap`], `None` when none is given.
///
/// Errors (naming the key): a kind key without `kind`, `kind` without a value for any kind, a
/// value that is a table or an array of tables, one value listed for two kinds, or a pointer
/// that is not a JSON pointer.
fn kind_map(
    k: &RawKinds<'_>,
    table: &str,
    pointer: &PointerCheck<'_>,
    err_at: &dyn Fn(usize, &str, String) -> TargetError,
) -> Result<Option<KindMap>, TargetError> {
    let values = |v: &Option<Spanned<toml::Value>>,
                  key: &str|
     -> Result<(Vec<serde_json::Value>, Option<usize>), TargetError> {
        let Some(v) = v else {
            return Ok((Vec::new(), None));
        };
        let scalar = |x: &toml::Value| {
            matches!(
                x,
                toml::Value::String(_)
                    | toml::Value::Integer(_)
                    | toml::Value::Float(_)
                    | toml::Value::Boolean(_)
            )
        };
        let items: Vec<&toml::Value> = match v.get_ref() {
            toml::Value::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        if items.is_empty() || !items.iter().all(|x| scalar(x)) {
            return Err(err_at(
                v.span().start,
                &format!("{table}.{key}"),
                "must be a value of the kind field (a string, number or boolean) or a non-empty list of them".into(),
            ));
        }
        Ok((
            items.into_iter().map(toml_to_json).collect(),
            Some(v.span().start),
        ))
    };
    let (ok, ok_at) = values(k.ok, "ok")?;
    let (refused, refused_at) = values(k.refused, "refused")?;
    let (tool_error, tool_error_at) = values(k.tool_error, "tool_error")?;
    let opt = |p: &Option<Spanned<String>>, key: &str| -> Result<Option<String>, TargetError> {
        p.as_ref()
            .map(|p| pointer(p, &format!("{table}.{key}")))
            .transpose()
    };
    let value = opt(k.value, "value")?;
    let code = opt(k.code, "code")?;
    let message = opt(k.message, "message")?;
    let warnings = opt(k.warnings, "warnings")?;
    let Some(field) = k.kind else {
        let first = [ok_at, refused_at, tool_error_at]
            .into_iter()
            .flatten()
            .chain(
                [k.value, k.code, k.message, k.warnings]
                    .into_iter()
                    .flatten()
                    .map(|p| p.span().start),
            )
            .min();
        return match first {
            Some(at) => Err(err_at(
                at,
                &format!("{table}.kind"),
                "the kind keys (ok, refused, tool_error, value, code, message, warnings) need `kind`: the pointer to the field whose value names the outcome kind".into(),
            )),
            None => Ok(None),
        };
    };
    // One pointer, or a list of them read in order.
    let kind_key = format!("{table}.kind");
    let pointers: Vec<&toml::Value> = match field.get_ref() {
        toml::Value::Array(a) if !a.is_empty() => a.iter().collect(),
        one @ toml::Value::String(_) => vec![one],
        _ => {
            return Err(err_at(
                field.span().start,
                &kind_key,
                "must be a JSON pointer (a string) or a non-empty list of them".into(),
            ))
        }
    };
    let mut fields = Vec::new();
    for p in pointers {
        let Some(p) = p.as_str() else {
            return Err(err_at(
                field.span().start,
                &kind_key,
                format!("{p} is not a JSON pointer (a string)"),
            ));
        };
        let ptr = pointer(&Spanned::new(field.span(), p.to_owned()), &kind_key)?;
        if fields.contains(&ptr) {
            return Err(err_at(
                field.span().start,
                &kind_key,
                format!("{ptr:?} is listed twice"),
            ));
        }
        fields.push(ptr);
    }
    if ok.is_empty() && refused.is_empty() && tool_error.is_empty() {
        return Err(err_at(
            field.span().start,
            &format!("{table}.kind"),
            "`kind` needs the values that name the kinds: ok, refused and/or tool_error".into(),
        ));
    }
    use crate::engine::outcome::same_scalar;
    for (values, key, at) in [
        (&ok, "ok", ok_at),
        (&refused, "refused", refused_at),
        (&tool_error, "tool_error", tool_error_at),
    ] {
        for (i, x) in values.iter().enumerate() {
            if values[..i].iter().any(|y| same_scalar(x, y)) {
                return Err(err_at(
                    at.unwrap_or(0),
                    &format!("{table}.{key}"),
                    format!("{x} is listed twice"),
                ));
            }
        }
    }
    for (a, b, key, at) in [
        (&ok, &refused, "refused", refused_at),
        (&ok, &tool_error, "tool_error", tool_error_at),
        (&refused, &tool_error, "tool_error", tool_error_at),
    ] {
        if let Some(dup) = b.iter().find(|x| a.iter().any(|y| same_scalar(x, y))) {
            return Err(err_at(
                at.unwrap_or(0),
                &format!("{table}.{key}"),
                format!("{dup} is listed for two outcome kinds"),
            ));
        }
    }
    Ok(Some(KindMap {
        fields,
        ok,
        refused,
        tool_error,
        value,
        code,
        message,
        warnings,
    }))
}

/// Checks and resolves `[run]`: non-empty paths (joined to `base`, the target file's
/// directory), `jobs` at least 1, `timeout_multiplier` positive and finite.
fn run_defaults(
    r: &RawRun,
    base: &Path,
    err_at: &dyn Fn(usize, &str, String) -> TargetError,
) -> Result<RunDefaults, TargetError> {
    let path = |s: &Spanned<String>, key: &str| {
        if s.get_ref().trim().is_empty() {
            Err(err_at(s.span().start, key, "must not be empty".into()))
        } else {
            Ok(base.join(s.get_ref()))
        }
    };
    let mut out = RunDefaults::default();
    for s in r.scenarios.iter().flatten() {
        out.scenarios.push(path(s, "run.scenarios")?);
    }
    if let Some(s) = &r.snapshots {
        out.snapshots = Some(path(s, "run.snapshots")?);
    }
    if let Some(s) = &r.baseline {
        out.baseline = Some(path(s, "run.baseline")?);
    }
    if let Some(j) = &r.jobs {
        match u64::try_from(*j.get_ref()) {
            Ok(n) if n >= 1 => out.jobs = Some(n),
            _ => {
                return Err(err_at(
                    j.span().start,
                    "run.jobs",
                    format!("{} is not a number of cases (at least 1)", j.get_ref()),
                ))
            }
        }
    }
    if let Some(m) = &r.timeout_multiplier {
        let x = *m.get_ref();
        if !(x > 0.0 && x.is_finite()) {
            return Err(err_at(
                m.span().start,
                "run.timeout_multiplier",
                format!("{x} is not a positive number"),
            ));
        }
        out.timeout_multiplier = Some(x);
    }
    Ok(out)
}

/// A TOML table value as JSON (for the facade's argument objects).
fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => serde_json::Value::from(s.clone()),
        toml::Value::Integer(i) => serde_json::Value::from(*i),
        toml::Value::Float(f) => serde_json::Value::from(*f),
        toml::Value::Boolean(b) => serde_json::Value::from(*b),
        toml::Value::Datetime(d) => serde_json::Value::from(d.to_string()),
        toml::Value::Array(a) => a.iter().map(toml_to_json).collect(),
        toml::Value::Table(t) => serde_json::Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

fn facade_decl(
    f: &RawFacade,
    err_at: &dyn Fn(usize, &str, String) -> TargetError,
) -> Result<crate::engine::decl::FacadeDecl, TargetError> {
    use crate::engine::decl::{BadToken, CatalogueForm, FacadeDecl, Hooks, Remint, Topology};
    let pick = |v: &Option<Spanned<String>>,
                key: &str,
                allowed: &[&str]|
     -> Result<Option<String>, TargetError> {
        match v {
            None => Ok(None),
            Some(s) if allowed.contains(&s.get_ref().as_str()) => Ok(Some(s.get_ref().clone())),
            Some(s) => Err(err_at(
                s.span().start,
                key,
                format!(
                    "unknown value {:?} (one of: {})",
                    s.get_ref(),
                    allowed.join(", ")
                ),
            )),
        }
    };
    let catalogue = match pick(&f.catalogue, "facade.catalogue", &["meta", "direct"])?.as_deref() {
        Some("direct") => CatalogueForm::Direct,
        _ => CatalogueForm::Meta,
    };
    let bad_token = match pick(&f.bad_token, "facade.bad_token", &["anonymous", "401"])?.as_deref()
    {
        Some("401") => BadToken::Unauthorized,
        _ => BadToken::Anonymous,
    };
    let remint = match pick(&f.remint, "facade.remint", &["coexist", "replace"])?.as_deref() {
        Some("replace") => Remint::Replace,
        _ => Remint::Coexist,
    };
    let hooks = match (&f.admin, &f.mint_command, &f.revoke_command) {
        (Some(a), None, None) => {
            let v = a.get_ref().trim();
            if v != "same-origin" && !v.starts_with("http://") {
                return Err(err_at(
                    a.span().start,
                    "facade.admin",
                    format!("{v:?} is neither an http:// URL nor \"same-origin\""),
                ));
            }
            Hooks::Admin(if v == "same-origin" { String::new() } else { v.to_owned() })
        }
        (None, Some(m), Some(r)) => Hooks::Commands {
            mint: m.get_ref().clone(),
            revoke: r.get_ref().clone(),
        },
        (Some(a), _, _) => {
            return Err(err_at(
                a.span().start,
                "facade.admin",
                "give either `admin` or `mint_command` and `revoke_command`, not both".into(),
            ))
        }
        (None, Some(m), None) => {
            return Err(err_at(m.span().start, "facade.revoke_command", "`mint_command` needs `revoke_command` too".into()))
        }
        (None, None, Some(r)) => {
            return Err(err_at(r.span().start, "facade.mint_command", "`revoke_command` needs `mint_command` too".into()))
        }
        (None, None, None) => {
            return Err(err_at(
                f.session_tool.span().start,
                "facade",
                "give the token hooks: `admin` (parity's admin hook, or \"same-origin\") or `mint_command` and `revoke_command`".into(),
            ))
        }
    };
    let object = |v: &Spanned<toml::Value>, key: &str| -> Result<serde_json::Value, TargetError> {
        match v.get_ref() {
            t @ toml::Value::Table(_) => Ok(toml_to_json(t)),
            _ => Err(err_at(
                v.span().start,
                key,
                "must be a table (the tool's arguments)".into(),
            )),
        }
    };
    if let Hooks::Commands { mint, revoke } = &hooks {
        for (line, key, site) in [
            (mint, "facade.mint_command", &f.mint_command),
            (revoke, "facade.revoke_command", &f.revoke_command),
        ] {
            let at = site.as_ref().map_or(0, |s| s.span().start);
            hook_command(line).map_err(|e| err_at(at, key, e))?;
        }
    }
    let session_tool = f.session_tool.get_ref().clone();
    let session_arguments = match &f.session_arguments {
        Some(v) => object(v, "facade.session_arguments")?,
        None => serde_json::json!({}),
    };
    // Pre-flight: `invalid_arguments` for the session tool, or a tool of its own.
    let (preflight_tool, invalid_arguments) = match (
        &f.invalid_arguments,
        &f.preflight_tool,
        &f.preflight_invalid_arguments,
    ) {
        (Some(v), None, None) => (session_tool.clone(), object(v, "facade.invalid_arguments")?),
        (None, Some(t), Some(v)) => {
            if t.get_ref().trim().is_empty() {
                return Err(err_at(
                    t.span().start,
                    "facade.preflight_tool",
                    "must name a tool, as published".into(),
                ));
            }
            (
                t.get_ref().clone(),
                object(v, "facade.preflight_invalid_arguments")?,
            )
        }
        (Some(v), Some(_), _) => {
            return Err(err_at(
                v.span().start,
                "facade.invalid_arguments",
                "give `invalid_arguments` (for session_tool) or `preflight_tool` with `preflight_invalid_arguments`, not both".into(),
            ))
        }
        (_, Some(t), None) => {
            return Err(err_at(
                t.span().start,
                "facade.preflight_invalid_arguments",
                "`preflight_tool` needs `preflight_invalid_arguments` (arguments its inputSchema rejects)".into(),
            ))
        }
        (_, None, Some(v)) => {
            return Err(err_at(
                v.span().start,
                "facade.preflight_tool",
                "`preflight_invalid_arguments` needs `preflight_tool` (the tool they are for); for session_tool write `invalid_arguments`".into(),
            ))
        }
        (None, None, None) => {
            return Err(err_at(
                f.session_tool.span().start,
                "facade.invalid_arguments",
                "give `invalid_arguments` (arguments session_tool's inputSchema rejects), or `preflight_tool` with `preflight_invalid_arguments` for a session tool whose schema rejects nothing".into(),
            ))
        }
    };
    let canary = match (&f.canary_argument, &f.canary_arguments) {
        (None, None) => None,
        (None, Some(v)) => {
            return Err(err_at(
                v.span().start,
                "facade.canary_arguments",
                "`canary_arguments` go with `canary_argument` (the tool and argument that get the canary)".into(),
            ))
        }
        (Some(c), args) => {
            let written = c.get_ref().trim();
            let (tool, argument) = match written.rsplit_once('.') {
                Some((t, a)) => (t.to_owned(), a.to_owned()),
                None => (session_tool.clone(), written.to_owned()),
            };
            if tool.is_empty() || argument.is_empty() {
                return Err(err_at(
                    c.span().start,
                    "facade.canary_argument",
                    format!("{written:?} names no argument: write `argument` (of session_tool) or `tool.argument` (split at the last `.`)"),
                ));
            }
            let arguments = match args {
                Some(v) => object(v, "facade.canary_arguments")?,
                None if tool == session_tool => session_arguments.clone(),
                None => serde_json::json!({}),
            };
            Some(crate::engine::decl::Canary {
                tool,
                argument,
                arguments,
            })
        }
    };
    let audit = match &f.audit {
        Some(a) => audit_shape(a, err_at)?,
        None => crate::engine::decl::AuditShape::default(),
    };
    Ok(FacadeDecl {
        catalogue,
        hooks,
        bad_token,
        remint,
        session_tool,
        session_arguments,
        preflight_tool,
        invalid_arguments,
        canary,
        audit_log: f.audit_log.as_ref().map(std::path::PathBuf::from),
        audit,
        topology: f.topology.as_ref().map(|t| Topology {
            anonymous: t.anonymous.clone(),
            session: t.session.clone(),
        }),
    })
}

/// Checks a hook command line: it splits like a shell into at least one word, every
/// `{name}` in it is one of [`crate::engine::decl::HOOK_PLACEHOLDERS`], and none of those is
/// left open (`{url` with no `}` after it). A brace after `$` is the shell's (`${PORT}`,
/// `${port:-8080}` in an `sh -c` script) and is not judged; neither is a brace around
/// anything but a bare word (JSON, `awk` programs with spaces).
fn hook_command(line: &str) -> Result<(), String> {
    let words = crate::transport::peer::split_words(line)?;
    if words.is_empty() {
        return Err("empty command".into());
    }
    for w in &words {
        let mut from = 0;
        while let Some(open) = w[from..].find('{').map(|i| i + from) {
            from = open + 1;
            if w[..open].ends_with('$') {
                continue;
            }
            let after = &w[open..];
            let Some(close) = after.find('}') else {
                // `{url` with no `}` after it: the placeholder would reach the hook unfilled.
                if let Some(p) = crate::engine::decl::HOOK_PLACEHOLDERS
                    .iter()
                    .find(|p| after.starts_with(&p[..p.len() - 1]))
                {
                    return Err(format!("the placeholder `{p}` is not closed in {w:?}"));
                }
                break;
            };
            let name = &after[..=close];
            let word_like = name.len() > 2
                && name[1..name.len() - 1]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if word_like && !crate::engine::decl::HOOK_PLACEHOLDERS.contains(&name) {
                return Err(format!(
                    "unknown placeholder `{name}` (known: {}; the channel or token is the last argument)",
                    crate::engine::decl::HOOK_PLACEHOLDERS.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// `[facade.audit]` as an [`crate::engine::decl::AuditShape`]: each field a member name or
/// a JSON pointer, `lines` `entry-exit` or `one`, `entry` one `field = "value"` pair (entry
/// and exit lines only).
fn audit_shape(
    raw: &RawAudit,
    err_at: &dyn Fn(usize, &str, String) -> TargetError,
) -> Result<crate::engine::decl::AuditShape, TargetError> {
    use crate::engine::decl::{AuditField, AuditLines, AuditShape};
    let d = AuditShape::default();
    let field = |v: &Option<Spanned<String>>,
                 key: &str,
                 default: AuditField|
     -> Result<AuditField, TargetError> {
        match v {
            None => Ok(default),
            Some(s) => audit_field(s.get_ref()).map_err(|e| err_at(s.span().start, key, e)),
        }
    };
    let lines = match raw
        .lines
        .as_ref()
        .map(|l| (l.get_ref().as_str(), l.span().start))
    {
        None | Some(("entry-exit", _)) => AuditLines::EntryExit,
        Some(("one", _)) => AuditLines::One,
        Some((other, at)) => {
            return Err(err_at(
                at,
                "facade.audit.lines",
                format!("unknown value {other:?} (one of: entry-exit, one)"),
            ))
        }
    };
    let entry = match &raw.entry {
        None => None,
        Some(e) if lines == AuditLines::One => {
            return Err(err_at(
                e.span().start,
                "facade.audit.entry",
                "`entry` marks entry lines, which `lines = \"one\"` does not write".into(),
            ))
        }
        Some(e) => match e.get_ref().iter().collect::<Vec<_>>().as_slice() {
            [(k, toml::Value::String(v))] => Some((
                audit_field(k).map_err(|m| err_at(e.span().start, "facade.audit.entry", m))?,
                v.clone(),
            )),
            _ => {
                return Err(err_at(
                    e.span().start,
                    "facade.audit.entry",
                    "must be one `field = \"value\"` pair: the member and the text that mark an entry line, e.g. { message = \"facade source call\" }".into(),
                ))
            }
        },
    };
    Ok(AuditShape {
        lines,
        provider: field(&raw.provider, "facade.audit.provider", d.provider)?,
        tool: field(&raw.tool, "facade.audit.tool", d.tool)?,
        channel: field(&raw.channel, "facade.audit.channel", d.channel)?,
        hash: field(&raw.hash, "facade.audit.hash", d.hash)?,
        is_error: field(&raw.is_error, "facade.audit.is_error", d.is_error)?,
        entry,
    })
}

/// An audit field as written: a non-empty member name, or a JSON pointer (`/a/b`).
fn audit_field(s: &str) -> Result<crate::engine::decl::AuditField, String> {
    if s.is_empty() {
        Err("must name a member of the audit line (or be a JSON pointer, `/fields/tool`)".into())
    } else if s.starts_with('/') && !valid_pointer(s) {
        Err(format!(
            "{s:?} is not a JSON pointer (RFC 6901: `~` only as `~0` or `~1`)"
        ))
    } else {
        Ok(crate::engine::decl::AuditField(s.to_owned()))
    }
}

/// The `[dispatcher]` table as declarations (defaults: `crate::engine::decl::DispatcherDecl`).
fn dispatcher_decl(
    d: &RawDispatcher,
    err_at: &dyn Fn(usize, &str, String) -> TargetError,
) -> Result<crate::engine::decl::DispatcherDecl, TargetError> {
    let mut decl = crate::engine::decl::DispatcherDecl::default();
    if let Some(l) = &d.labels {
        match l.get_ref().as_slice() {
            [a, b] if a != b => decl.labels = [a.clone(), b.clone()],
            _ => {
                return Err(err_at(
                    l.span().start,
                    "dispatcher.labels",
                    "must be exactly two different labels: the active one, then the one for every other state".into(),
                ))
            }
        }
    }
    if let Some(b) = &d.budget_ms {
        if *b.get_ref() == 0 {
            return Err(err_at(
                b.span().start,
                "dispatcher.budget_ms",
                "must be at least 1".into(),
            ));
        }
        decl.budget_ms = *b.get_ref();
    }
    if let Some(t) = d.tolerance_ms {
        decl.tolerance_ms = t;
    }
    if let Some(r) = &d.budget_reason {
        decl.budget_reason = r.clone();
    }
    if let Some(c) = &d.required_code {
        decl.required_code = c.clone();
    }
    for (raw, key, slot) in [
        (
            &d.read_arguments,
            "dispatcher.read_arguments",
            &mut decl.read_arguments,
        ),
        (
            &d.write_arguments,
            "dispatcher.write_arguments",
            &mut decl.write_arguments,
        ),
    ] {
        if let Some(v) = raw {
            if !v.get_ref().is_table() {
                return Err(err_at(v.span().start, key, "must be a table".into()));
            }
            *slot = toml_to_json(v.get_ref());
        }
    }
    if let Some(v) = &d.volatile {
        let mut out = Vec::new();
        for p in v {
            if !(p.is_empty() || p.starts_with('/')) {
                return Err(err_at(
                    0,
                    "dispatcher.volatile",
                    format!("{p:?} is not a JSON pointer (it must start with /)"),
                ));
            }
            out.push(p.clone());
        }
        decl.volatile = out;
    }
    let t = &d.tools;
    for (from, to) in [
        (&t.status, &mut decl.tools.status),
        (&t.retry, &mut decl.tools.retry),
        (&t.read_file, &mut decl.tools.read_file),
        (&t.write_file, &mut decl.tools.write_file),
    ] {
        if let Some(name) = from {
            *to = name.clone();
        }
    }
    let c = d.configs.get_ref();
    decl.configs = crate::engine::decl::Configs {
        slow_start: c.slow_start.clone(),
        required: c.required.clone(),
        flaky: c.flaky.clone(),
        stopping: c.stopping.clone(),
    };
    Ok(decl)
}

/// The `[hygiene]` table as declarations (defaults: the reference launcher's conventions,
/// `crate::engine::decl::HygieneDecl::default`). `at` is the table's offset, for errors about keys
/// that are missing.
fn hygiene_decl(
    h: &RawHygiene,
    at: usize,
    err_at: &dyn Fn(usize, &str, String) -> TargetError,
) -> Result<crate::engine::decl::HygieneDecl, TargetError> {
    use crate::engine::decl::{Delivery, HygieneDecl, Rotation};
    let d = HygieneDecl::default();
    let command = match &h.command {
        Some(c) => {
            crate::transport::peer::split_words(c.get_ref())
                .and_then(|w| {
                    if w.is_empty() {
                        Err("empty command".to_string())
                    } else {
                        Ok(w)
                    }
                })
                .map_err(|e| err_at(c.span().start, "hygiene.command", e))?;
            Some(c.get_ref().clone())
        }
        None => None,
    };
    let header = match &h.header {
        Some(t) if !t.get_ref().contains("{token}") => {
            return Err(err_at(
                t.span().start,
                "hygiene.header",
                format!(
                    "{:?} has no `{{token}}` (e.g. \"Bearer {{token}}\")",
                    t.get_ref()
                ),
            ))
        }
        Some(t) => t.get_ref().clone(),
        None => d.header.clone(),
    };
    // The stored form (seed rule 39: what the children's credential file holds), when it
    // differs from the delivered one: the bytes at rest, so `{token}` and never `{header}`.
    let stored = match &h.stored {
        Some(t) if !t.get_ref().contains("{token}") || t.get_ref().contains("{header}") => {
            return Err(err_at(
                t.span().start,
                "hygiene.stored",
                format!(
                    "{:?} is not a stored form: it needs `{{token}}` and no `{{header}}` (e.g. \"{{token}}\" for a host that stores the bare token; leave it out when the file holds the header as delivered)",
                    t.get_ref()
                ),
            ))
        }
        Some(t) => Some(t.get_ref().clone()),
        None => None,
    };
    let template = |v: &Spanned<String>, key: &str| -> Result<String, TargetError> {
        let s = v.get_ref();
        if s.contains("{header}") || s.contains("{token}") {
            Ok(s.clone())
        } else {
            Err(err_at(
                v.span().start,
                key,
                format!("{s:?} has neither `{{header}}` nor `{{token}}`"),
            ))
        }
    };
    let variable = match &h.variable {
        Some(v) if v.get_ref().trim().is_empty() || v.get_ref().contains('=') => {
            return Err(err_at(
                v.span().start,
                "hygiene.variable",
                format!("{:?} is not an environment variable name", v.get_ref()),
            ))
        }
        Some(v) => Some(v.get_ref().clone()),
        None => None,
    };
    let delivery = match h
        .delivery
        .as_ref()
        .map(|v| (v.get_ref().as_str(), v.span().start))
    {
        None | Some(("env", _)) => Delivery::Env {
            variable: variable
                .clone()
                .unwrap_or_else(|| crate::engine::decl::DEFAULT_VARIABLE.into()),
        },
        Some(("stdin", _)) => Delivery::Stdin {
            line: match &h.stdin_line {
                Some(l) => template(l, "hygiene.stdin_line")?,
                None => "{header}".into(),
            },
        },
        Some(("file", pos)) => {
            let placeholder = command
                .as_deref()
                .is_some_and(|c| c.contains("{credential_file}"));
            if variable.is_none() && command.is_some() && !placeholder {
                return Err(err_at(
                    pos,
                    "hygiene.delivery",
                    "file delivery needs `variable` (the variable carrying the path) or `{credential_file}` in `command`".into(),
                ));
            }
            Delivery::File {
                variable: variable.clone(),
            }
        }
        Some((other, pos)) => {
            return Err(err_at(
                pos,
                "hygiene.delivery",
                format!("unknown delivery {other:?} (env, stdin or file)"),
            ))
        }
    };
    if let (Some(l), false) = (&h.stdin_line, matches!(delivery, Delivery::Stdin { .. })) {
        return Err(err_at(
            l.span().start,
            "hygiene.stdin_line",
            "`stdin_line` needs delivery = \"stdin\"".into(),
        ));
    }
    let rotation = match h
        .rotation
        .as_ref()
        .map(|v| (v.get_ref().as_str(), v.span().start))
    {
        None | Some(("stdin", _)) => Rotation::Stdin {
            line: match &h.rotation_line {
                Some(l) => template(l, "hygiene.rotation_line")?,
                None => crate::engine::decl::DEFAULT_ROTATION_LINE.into(),
            },
        },
        Some(("file", pos)) => {
            if !matches!(delivery, Delivery::File { .. }) {
                return Err(err_at(
                    pos,
                    "hygiene.rotation",
                    "rotation = \"file\" rewrites the delivered file: it needs delivery = \"file\""
                        .into(),
                ));
            }
            Rotation::File {
                signal: match &h.rotation_signal {
                    Some(s) if !crate::base::util::valid_signal(s.get_ref()) => {
                        return Err(err_at(
                            s.span().start,
                            "hygiene.rotation_signal",
                            format!("{:?} is not a signal name (HUP, USR1, …)", s.get_ref()),
                        ))
                    }
                    Some(s) => Some(s.get_ref().clone()),
                    None => None,
                },
            }
        }
        Some(("none", _)) => Rotation::None,
        Some((other, pos)) => {
            return Err(err_at(
                pos,
                "hygiene.rotation",
                format!("unknown rotation {other:?} (stdin, file or none)"),
            ))
        }
    };
    if let (Some(s), false) = (
        &h.rotation_signal,
        matches!(rotation, Rotation::File { .. }),
    ) {
        return Err(err_at(
            s.span().start,
            "hygiene.rotation_signal",
            "`rotation_signal` needs rotation = \"file\"".into(),
        ));
    }
    let positive = |v: &Option<Spanned<u64>>, key: &str, default: u64| match v {
        Some(ms) if *ms.get_ref() == 0 => Err(err_at(
            ms.span().start,
            key,
            "must be at least 1 millisecond".into(),
        )),
        Some(ms) => Ok(*ms.get_ref()),
        None => Ok(default),
    };
    let _ = at;
    // Lists of variable names: each a name (not empty, no `=` or NUL); the declared legacy and
    // stale-file variables must not be the one parity delivers the credential in (it would be
    // overwritten by the planted value, or overwrite it).
    let delivered_var = match &delivery {
        Delivery::Env { variable } => Some(variable.clone()),
        Delivery::File { variable } => variable.clone(),
        Delivery::Stdin { .. } => None,
    };
    let names = |list: &[Spanned<String>],
                 key: &str,
                 planted: bool|
     -> Result<Vec<String>, TargetError> {
        list.iter()
            .map(|v| {
                let name = v.get_ref();
                if name.trim().is_empty() || name.contains('=') || name.contains('\0') {
                    return Err(err_at(
                        v.span().start,
                        key,
                        format!("{name:?} is not an environment variable name"),
                    ));
                }
                if planted && delivered_var.as_deref() == Some(name.as_str()) {
                    return Err(err_at(
                        v.span().start,
                        key,
                        format!("{name:?} is the variable parity delivers the credential in (`variable`): it cannot also be planted"),
                    ));
                }
                Ok(name.clone())
            })
            .collect()
    };
    let file_vars = names(&h.file_vars, "hygiene.file_vars", false)?;
    let legacy = match &h.legacy {
        Some(l) => names(l, "hygiene.legacy", true)?,
        None => d.legacy,
    };
    let stale_file_vars = match &h.stale_file_vars {
        Some(l) => names(l, "hygiene.stale_file_vars", true)?,
        None => d.stale_file_vars,
    };
    // A planted name is planted once: not both a legacy and a stale-file variable, and not a
    // variable `env` sets (the last value set would win, and the probe would judge the other).
    for (list, key, others) in [
        (
            &h.legacy,
            "hygiene.legacy",
            vec![("`env`", h.env.keys().cloned().collect::<Vec<_>>())],
        ),
        (
            &h.stale_file_vars,
            "hygiene.stale_file_vars",
            vec![
                ("`legacy`", legacy.clone()),
                ("`env`", h.env.keys().cloned().collect()),
            ],
        ),
    ] {
        for v in list.iter().flatten() {
            if let Some((which, _)) = others.iter().find(|(_, o)| o.contains(v.get_ref())) {
                return Err(err_at(
                    v.span().start,
                    key,
                    format!(
                        "{:?} is also in {which}: a variable is planted once",
                        v.get_ref()
                    ),
                ));
            }
        }
    }
    Ok(HygieneDecl {
        command,
        header,
        stored,
        delivery,
        env: h.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        file_vars,
        legacy,
        stale_file_vars,
        rotation,
        cwd: h.cwd.as_ref().map(std::path::PathBuf::from),
        settle_ms: positive(&h.settle_ms, "hygiene.settle_ms", d.settle_ms)?,
        linger_ms: h.linger_ms.unwrap_or(d.linger_ms),
        ptrace: h.ptrace.unwrap_or(d.ptrace),
        poll_ms: positive(&h.poll_ms, "hygiene.poll_ms", d.poll_ms)?,
    })
}

/// Reads and parses a target file.
///
/// Errors: the file cannot be read (line 0), is not UTF-8 (the line, column and key of the
/// first invalid byte), or any error of [`parse`].
pub fn load(path: &Path) -> Result<Target, TargetError> {
    let file = path.display().to_string();
    let text = crate::base::textfile::read_utf8(path).map_err(|e| {
        let (line, col) = e.place();
        let key = match &e {
            crate::base::textfile::ReadError::NotUtf8 { before, .. } => key_at(before, line),
            crate::base::textfile::ReadError::Io(_) => "-".into(),
        };
        TargetError {
            file: file.clone(),
            line,
            col,
            key,
            message: e.message("the target file"),
        }
    })?;
    parse(&file, &text)
}

/// The bundled reference as a target: `parity reference mcp` and `parity reference acp`, the
/// `status` tool's `since_ms` declared volatile and `write_file` stateful, the reference facade,
/// and `parity reference launch -- parity reference bridge` for the hygiene probe.
pub fn reference() -> Target {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "parity".into());
    let quoted = shell_quote(&exe);
    Target {
        name: "parity reference".into(),
        mcp: Some(McpSurface {
            command: format!("{quoted} reference mcp"),
            eras: crate::engine::run::EraSel::All,
            reference: true,
            rules: McpRules {
                classes: vec![invalid_arguments_class()],
                ..McpRules::default()
            },
        }),
        acp: Some(AcpSurface {
            command: format!("{quoted} reference acp"),
            tool_method: Some(crate::protocol::acp::DEFAULT_TOOL_METHOD.into()),
            cancel_prompt: Some("wait_for_cancel".into()),
            params: None,
            rules: AcpRules {
                classes: vec![invalid_arguments_class()],
                ..AcpRules::default()
            },
        }),
        equivalence: Equivalence {
            volatile: vec!["/value/since_ms".into()],
            stateful: vec!["write_file".into()],
            ..Equivalence::default()
        },
        // The bundled facade is served over HTTP: not in a build without the `http` feature.
        reference_facade: cfg!(feature = "http")
            .then_some(crate::engine::decl::CatalogueForm::Meta),
        hygiene: Some(crate::engine::decl::hygiene_reference(&exe)),
        dispatcher: Some(crate::engine::decl::dispatcher_reference()),
        calls: crate::engine::reference::reference_target().calls,
        prompt_arguments: crate::engine::reference::reference_target().prompt_arguments,
        ..Target::default()
    }
}

/// The error class the reference target reads schema-invalid calls as, on every surface: the
/// dispatcher's `refused` `INVALID_ARGUMENTS` (stdio, ACP) and the facade's pre-flight refusal
/// (MCP over HTTP).
pub const INVALID_ARGUMENTS_CLASS: &str = "invalid_arguments";

fn invalid_arguments_class() -> ClassRule {
    ClassRule {
        kind: "refused".into(),
        code: Some("INVALID_ARGUMENTS".into()),
        message_contains: None,
        class: INVALID_ARGUMENTS_CLASS.into(),
    }
}

/// Quotes a word for [`crate::transport::peer::split_words`] when it holds spaces or quotes.
pub fn shell_quote(word: &str) -> String {
    if word
        .chars()
        .any(|c| c.is_whitespace() || c == '\'' || c == '"' || c == '\\')
    {
        format!("'{}'", word.replace('\'', "'\\''"))
    } else {
        word.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn load_bytes(bytes: &[u8]) -> TargetError {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(&path, bytes).unwrap();
        load(&path).unwrap_err()
    }

    #[test]
    fn invalid_utf8_names_the_line_column_and_key() {
        let e = load_bytes(b"version = 1\n[surfaces.mcp]\ncommand = \"a\xffb\"\n");
        assert_eq!(
            (e.line, e.col, e.key.as_str()),
            (3, 13, "surfaces.mcp.command"),
            "{e}"
        );
        let shown = e.to_string();
        assert!(
            shown.contains("t.toml:3:13: surfaces.mcp.command: not valid UTF-8"),
            "{shown}"
        );
        assert!(!shown.contains("stream did not contain"), "{shown}");
    }

    #[test]
    fn cr_only_line_endings_name_a_line_and_a_key_not_the_file() {
        let text = "# a comment\rversion = 1\r[surfaces.mcp]\rcommand = 5\r";
        let e = parse("t.toml", text).unwrap_err();
        assert_eq!((e.line, e.col), (1, 12), "{e}");
        assert_eq!(e.key, "(top level)", "{e}");
        assert!(e.message.contains("CR only"), "{e}");
        let e = parse("t.toml", "version = 1\r\n[surfaces.mcp]\rcommand = \"x\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "surfaces.mcp"), "{e}");
        // CRLF is fine.
        assert!(parse(
            "t.toml",
            "version = 1\r\n[surfaces.mcp]\r\ncommand = \"x\"\r\n"
        )
        .is_ok());
    }

    #[test]
    fn a_syntax_error_inside_a_value_names_its_key() {
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.mcp]\ncommand = \"x\"\nargs = [\n  1,\n  oops\n]\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (6, "surfaces.mcp.args"), "{e}");
        let e = parse("t.toml", "version = 1\n[surfaces.mcp\n").unwrap_err();
        assert_ne!(e.key, "-", "{e}");
        let e = parse("t.toml", "version = \n").unwrap_err();
        assert_eq!(e.key, "version", "{e}");
    }

    #[test]
    fn a_huge_bad_value_is_clipped_saying_how_much_was_left_out() {
        let text = format!(
            "version = 1\n[surfaces.mcp]\ncommand = \"x\"\neras = \"{}\"\n",
            "z".repeat(10_000_000)
        );
        let shown = parse("t.toml", &text).unwrap_err().to_string();
        assert!(
            shown.len() < 2 * crate::base::textfile::MAX_MESSAGE,
            "{}",
            shown.len()
        );
        assert!(shown.contains("more bytes)"), "{shown}");
        assert!(shown.starts_with("t.toml:4:"), "{shown}");
    }

    #[test]
    fn a_full_target_loads() {
        let t = parse(
            "t.toml",
            r#"
version = 1
name = "realm"
profiles = ["acp", "equivalence"]
[timeouts]
message_ms = 100
[surfaces.mcp]
command = "node mcp.js"
eras = "legacy"
[surfaces.mcp.errors]
"-32602" = "invalid_call"
[[surfaces.mcp.classes]]
kind = "tool_error"
message_contains = "Unknown tool"
class = "unknown_tool"
[surfaces.acp]
command = "node acp.js"
tool_method = "realm/tool"
result = "/outcome"
[equivalence]
volatile = ["/value/t"]
stateful = ["write"]
cases = 5
seed = 9
"#,
        )
        .unwrap();
        assert_eq!(t.name, "realm");
        assert_eq!(
            t.acp.as_ref().unwrap().tool_method.as_deref(),
            Some("realm/tool")
        );
        assert_eq!(t.acp.as_ref().unwrap().rules.result, "/outcome");
        assert_eq!(
            t.mcp.as_ref().unwrap().rules.errors.get(&-32602).unwrap(),
            "invalid_call"
        );
        assert_eq!(t.equivalence.seed, Some(9));
        let c = &t.mcp.as_ref().unwrap().rules.classes;
        assert_eq!((c.len(), c[0].class.as_str()), (1, "unknown_tool"));
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.mcp]\ncommand = \"x\"\n[[surfaces.mcp.classes]]\nkind = \"ok\"\nclass = \"c\"\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (5, "surfaces.mcp.classes"), "{e}");
        assert_eq!(t.message_ms, Some(100));
    }

    #[test]
    fn a_commented_header_does_not_leak_into_the_key() {
        let e = parse(
            "t.toml",
            "version = 1\n[timeouts]   # milliseconds\nmesage_ms = 5\n[surfaces.acp]\ncommand = \"x\"\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, "timeouts.mesage_ms"), "{e}");
        let e = load(Path::new("/nonexistent/parity.toml")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/parity.toml: failed to read"),
            "{e}"
        );
    }

    #[test]
    fn run_keys_resolve_against_the_target_directory_and_are_checked() {
        let t = parse(
            "ci/parity.toml",
            "version = 1\n[surfaces.mcp]\ncommand = \"x\"\n[run]\nscenarios = [\"scen\", \"/abs/more\"]\nsnapshots = \"snaps\"\nbaseline = \".parity/b.yaml\"\njobs = 3\ntimeout_multiplier = 2\n",
        )
        .unwrap();
        assert_eq!(
            t.run,
            RunDefaults {
                scenarios: vec!["ci/scen".into(), "/abs/more".into()],
                snapshots: Some("ci/snaps".into()),
                baseline: Some("ci/.parity/b.yaml".into()),
                jobs: Some(3),
                timeout_multiplier: Some(2.0),
            }
        );
        // No [run]: nothing set.
        let t = parse("t.toml", "version = 1\n[surfaces.mcp]\ncommand = \"x\"\n").unwrap();
        assert_eq!(t.run, RunDefaults::default());
        let bad = |body: &str| {
            parse(
                "t.toml",
                &format!("version = 1\n[surfaces.mcp]\ncommand = \"x\"\n[run]\n{body}\n"),
            )
            .unwrap_err()
        };
        let e = bad("jobs = 0");
        assert_eq!((e.line, e.key.as_str()), (5, "run.jobs"), "{e}");
        assert!(e.to_string().starts_with("t.toml:5:"), "{e}");
        let e = bad("timeout_multiplier = -1.5");
        assert_eq!(
            (e.line, e.key.as_str()),
            (5, "run.timeout_multiplier"),
            "{e}"
        );
        assert!(e.message.contains("positive"), "{e}");
        let e = bad("snapshots = \"\"");
        assert_eq!(e.key, "run.snapshots", "{e}");
        let e = bad("jobs = \"four\"");
        assert_eq!((e.line, e.key.as_str()), (5, "run.jobs"), "{e}");
        let e = bad("scenarios = \"one\"");
        assert_eq!((e.line, e.key.as_str()), (5, "run.scenarios"), "{e}");
        let e = bad("profiles = [\"mcp\"]");
        assert_eq!((e.line, e.key.as_str()), (5, "run.profiles"), "{e}");
        assert!(e.message.contains("unknown field"), "{e}");
    }

    #[test]
    fn an_unknown_key_names_file_line_and_key() {
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.acp]\ncommand = \"x\"\ntool_methd = \"_x/tool\"\n",
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("t.toml", 4), "{e}");
        assert_eq!(e.key, "surfaces.acp.tool_methd", "{e}");
        assert!(e.message.contains("unknown field"), "{e}");
    }

    #[test]
    fn a_bad_pointer_names_its_line_and_key() {
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.acp]\ncommand = \"x\"\nresult = \"outcome\"\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (4, "surfaces.acp.result"), "{e}");
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.acp]\ncommand = \"x\"\n[equivalence]\nvolatile = [\"/a\", \"/b~2\"]\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (5, "equivalence.volatile"), "{e}");
    }

    #[test]
    fn the_http_surface_declares_its_results_like_the_mcp_surface() {
        let t = parse(
            "t.toml",
            "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:9/mcp\"\n\
             [surfaces.http.outcome]\nkind = \"/status\"\nok = \"ok\"\nrefused = [\"no\", \"denied\"]\nvalue = \"/value\"\n\
             [surfaces.http.errors]\n\"-32601\" = \"unknown_tool\"\n\
             [[surfaces.http.classes]]\nkind = \"tool_error\"\nclass = \"boom\"\n",
        )
        .unwrap();
        let rules = &t.http.as_ref().unwrap().rules;
        let kinds = rules.kinds.as_ref().unwrap();
        assert_eq!(kinds.fields, ["/status"]);
        assert_eq!(kinds.refused.len(), 2);
        assert_eq!(kinds.value.as_deref(), Some("/value"));
        assert_eq!(
            rules.errors.get(&-32601).map(String::as_str),
            Some("unknown_tool")
        );
        assert_eq!(rules.classes.len(), 1);
        assert_eq!(rules.structured, McpRules::default().structured);
        for (table, line, key) in [
            (
                "[surfaces.http.outcome]\nok = \"ok\"",
                5,
                "surfaces.http.outcome.kind",
            ),
            (
                "[surfaces.http.outcome]\ntext = \"content\"",
                5,
                "surfaces.http.outcome.text",
            ),
            (
                "[surfaces.http.errors]\nx = \"y\"",
                5,
                "surfaces.http.errors",
            ),
        ] {
            let e = parse(
                "t.toml",
                &format!(
                    "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:9/mcp\"\n{table}\n"
                ),
            )
            .unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{e}");
        }
    }

    #[test]
    fn kind_may_be_a_list_of_pointers_and_no_value_is_listed_twice() {
        let acp = |outcome: &str| {
            parse(
                "t.toml",
                &format!("version = 1\n[surfaces.acp]\ncommand = \"x\"\n[surfaces.acp.outcome]\n{outcome}\n"),
            )
        };
        let t = acp("kind = [\"/err/kind\", \"/ok\"]\nok = true\nrefused = \"refused\"").unwrap();
        let kinds = t.acp.unwrap().rules.kinds.unwrap();
        assert_eq!(kinds.fields, ["/err/kind", "/ok"]);
        for (outcome, line, key, says) in [
            (
                "kind = \"/s\"\nok = [\"ok\", \"ok\"]",
                6,
                "surfaces.acp.outcome.ok",
                "listed twice",
            ),
            (
                "kind = \"/s\"\nok = 1\nrefused = 1.0",
                7,
                "surfaces.acp.outcome.refused",
                "two outcome kinds",
            ),
            (
                "kind = [\"/a\", 3]\nok = 1",
                5,
                "surfaces.acp.outcome.kind",
                "not a JSON pointer",
            ),
            (
                "kind = [\"/a\", \"b\"]\nok = 1",
                5,
                "surfaces.acp.outcome.kind",
                "not a JSON pointer",
            ),
            (
                "kind = []\nok = 1",
                5,
                "surfaces.acp.outcome.kind",
                "non-empty list",
            ),
            (
                "kind = 5\nok = 1",
                5,
                "surfaces.acp.outcome.kind",
                "non-empty list",
            ),
            (
                "kind = [\"/a\", \"/a\"]\nok = 1",
                5,
                "surfaces.acp.outcome.kind",
                "listed twice",
            ),
        ] {
            let e = acp(outcome).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{outcome}: {e}");
            assert!(e.message.contains(says), "{outcome}: {e}");
        }
    }

    #[test]
    fn hook_commands_keep_the_shells_braces_and_json() {
        for ok in [
            "gwctl --port {port} mint",
            "sh -c 'gwctl --port ${PORT:-8080} --host {host} mint \"$0\"'",
            "sh -c 'echo ${port}'",
            "gwctl --body '{\"url\":\"{url}\"}'",
            "awk '{ print $1 }'",
        ] {
            assert_eq!(hook_command(ok), Ok(()), "{ok}");
        }
        for bad in ["gwctl {prot}", "gwctl --url {url", "gwctl {host/x"] {
            assert!(hook_command(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn wrong_types_versions_profiles_and_missing_surfaces_are_errors() {
        let e = parse("t.toml", "version = 1\n[surfaces.acp]\ncommand = 3\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse("t.toml", "version = 2\n[surfaces.acp]\ncommand = \"x\"\n").unwrap_err();
        assert_eq!(e.key, "version");
        // A profile name is checked against the run's registry, at its place in the file.
        let t = parse(
            "t.toml",
            "version = 1\nprofiles = [\"mcp\", \"fast\"]\n[surfaces.acp]\ncommand = \"x\"\n",
        )
        .unwrap();
        let e = t.unknown_profile(&PROFILES).unwrap();
        assert_eq!((e.line, e.col, e.key.as_str()), (2, 20, "profiles"), "{e}");
        assert_eq!(
            e.to_string(),
            "t.toml:2:20: profiles: unknown profile \"fast\" (known: mcp, acp, equivalence, mcp-http, facade, hygiene, dispatcher, guard)"
        );
        assert!(t.unknown_profile(&["mcp", "fast"]).is_none());
        let e = parse("t.toml", "version = 1\n").unwrap_err();
        assert_eq!(e.key, "surfaces");
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.acp]\ncommand = \"x\"\ntool_method = \"\"\n",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str()),
            (4, "surfaces.acp.tool_method"),
            "{e}"
        );
        let e = parse(
            "t.toml",
            "version = 1\n[timeouts]\nmessage_ms = 0\n[surfaces.acp]\ncommand = \"x\"\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, "timeouts.message_ms"), "{e}");
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.mcp]\ncommand = \"a 'b\"\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, "surfaces.mcp.command"), "{e}");
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.http]\nurl = \"https://example.com/mcp\"\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (3, "surfaces.http.url"), "{e}");
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:1/mcp\"\ncommand = \"x\"\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_str(), "surfaces.http", "{e}");
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:1/mcp\"\n[facade]\nsession_tool = \"t\"\ninvalid_arguments = 3\nadmin = \"same-origin\"\n",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str()),
            (6, "facade.invalid_arguments"),
            "{e}"
        );
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:1/mcp\"\n[facade]\nsession_tool = \"t\"\ninvalid_arguments = {}\nmint_command = \"m\"\n",
        )
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str()),
            (7, "facade.revoke_command"),
            "{e}"
        );
        let e = parse(
            "t.toml",
            "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:1/mcp\"\n[facade]\nsession_tool = \"t\"\ninvalid_arguments = {}\nadmin = \"same-origin\"\ncolour = 1\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (8, "facade.colour"), "{e}");
        let t = parse(
            "t.toml",
            "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:1/mcp\"\n[facade]\nsession_tool = \"t\"\ninvalid_arguments = { x = \"y\" }\nadmin = \"same-origin\"\nbad_token = \"401\"\nremint = \"replace\"\n",
        )
        .unwrap();
        let d = t.facade.unwrap();
        assert_eq!(d.bad_token, crate::engine::decl::BadToken::Unauthorized);
        assert_eq!(d.remint, crate::engine::decl::Remint::Replace);
        assert_eq!(d.invalid_arguments, serde_json::json!({"x": "y"}));
    }

    /// A facade target: `[surfaces.http]` at `http`, then `[facade]` with `facade`.
    fn facade_target(http: &str, facade: &str) -> Result<Target, TargetError> {
        parse(
            "t.toml",
            &format!(
                "version = 1\n[surfaces.http]\n{http}\n[facade]\nsession_tool = \"t\"\n{facade}\n"
            ),
        )
    }

    #[test]
    fn facade_declarations_load_with_their_defaults() {
        use crate::engine::decl::{AuditLines, AuditShape};
        use crate::engine::http_surface::FacadeSource;
        let t = facade_target(
            "command = \"gw --port 0\"\nprints = \"port\"\npath = \"/rpc\"",
            "mint_command = \"gwctl --port {port} mint\"\nrevoke_command = \"gwctl --url {url} revoke\"\npreflight_tool = \"w\"\npreflight_invalid_arguments = { path = 7 }\ncanary_argument = \"p:w.content\"\ncanary_arguments = { path = \"c\" }\n[facade.audit]\nlines = \"one\"\ntool = \"/fields/tool\"\nhash = \"digest\"",
        )
        .unwrap();
        match &t.http.unwrap().source {
            FacadeSource::PortCommand { spec, path } => {
                assert_eq!((spec.program.as_str(), path.as_str()), ("gw", "/rpc"))
            }
            other => panic!("{other:?}"),
        }
        let d = t.facade.unwrap();
        assert_eq!(d.preflight_tool, "w");
        assert_eq!(d.invalid_arguments, serde_json::json!({"path": 7}));
        let c = d.canary.unwrap();
        assert_eq!((c.tool.as_str(), c.argument.as_str()), ("p:w", "content"));
        assert_eq!(c.arguments, serde_json::json!({"path": "c"}));
        assert_eq!(d.audit.lines, AuditLines::One);
        assert_eq!(d.audit.tool.name(), "/fields/tool");
        assert_eq!(d.audit.hash.name(), "digest");
        assert_eq!(d.audit.channel.name(), "channel");
        // The defaults: the session tool's pre-flight and canary, the reference's lines, a
        // command printing its URL.
        let t = facade_target(
            "command = \"gw\"",
            "admin = \"same-origin\"\nsession_arguments = { x = 7 }\ninvalid_arguments = { x = \"y\" }\ncanary_argument = \"note\"",
        )
        .unwrap();
        assert!(matches!(t.http.unwrap().source, FacadeSource::Command(_)));
        let d = t.facade.unwrap();
        assert_eq!(d.preflight_tool, "t");
        let c = d.canary.unwrap();
        assert_eq!((c.tool.as_str(), c.argument.as_str()), ("t", "note"));
        assert_eq!(c.arguments, serde_json::json!({"x": 7}));
        assert_eq!(d.audit, AuditShape::default());
        // An entry marker: the lines whose member holds the text are entry lines.
        let t = facade_target(
            "url = \"http://127.0.0.1:1/mcp\"",
            "admin = \"same-origin\"\ninvalid_arguments = {}\n[facade.audit]\nentry = { \"/fields/message\" = \"call\" }",
        )
        .unwrap();
        let a = t.facade.unwrap().audit;
        assert!(a.is_entry(&serde_json::json!({"fields": {"message": "call"}, "is_error": false})));
        assert!(!a.is_entry(&serde_json::json!({"fields": {"message": "call exit"}})));
        assert!(AuditShape::default().is_entry(&serde_json::json!({"tool": "t"})));
        assert!(!AuditShape::default().is_entry(&serde_json::json!({"is_error": true})));
    }

    #[test]
    fn bad_facade_declarations_name_file_line_and_key() {
        let url = "url = \"http://127.0.0.1:1/mcp\"";
        let hooks = "admin = \"same-origin\"";
        for (http, facade, line, key) in [
            ("command = \"gw\"\nprints = \"pid\"", "", 4, "surfaces.http.prints"),
            (&format!("{url}\nprints = \"port\""), "", 4, "surfaces.http.prints"),
            ("command = \"gw\"\npath = \"/x\"", "", 4, "surfaces.http.path"),
            ("command = \"gw\"\nprints = \"port\"\npath = \"mcp\"", "", 5, "surfaces.http.path"),
            (url, hooks, 5, "facade.invalid_arguments"),
            (url, &format!("{hooks}\npreflight_tool = \"w\""), 7, "facade.preflight_invalid_arguments"),
            (url, &format!("{hooks}\npreflight_invalid_arguments = {{}}"), 7, "facade.preflight_tool"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\npreflight_tool = \"w\"\npreflight_invalid_arguments = {{}}"), 7, "facade.invalid_arguments"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\ncanary_argument = \"w.\""), 8, "facade.canary_argument"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\ncanary_arguments = {{}}"), 8, "facade.canary_arguments"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\ncanary_argument = \"w.c\"\ncanary_arguments = 3"), 9, "facade.canary_arguments"),
            (url, "invalid_arguments = {}\nmint_command = \"m {channel}\"\nrevoke_command = \"r\"", 7, "facade.mint_command"),
            (url, "invalid_arguments = {}\nmint_command = \"m\"\nrevoke_command = \"r '{url}\"", 8, "facade.revoke_command"),
            (url, "invalid_arguments = {}\nmint_command = \"m --url {url\"\nrevoke_command = \"r\"", 7, "facade.mint_command"),
            (url, "invalid_arguments = {}\nmint_command = \"m --url {url/x\"\nrevoke_command = \"r\"", 7, "facade.mint_command"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\n[facade.audit]\nlines = \"two\""), 9, "facade.audit.lines"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\n[facade.audit]\ntool = \"\""), 9, "facade.audit.tool"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\n[facade.audit]\nhash = \"/a~2\""), 9, "facade.audit.hash"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\n[facade.audit]\nlines = \"one\"\nentry = {{ message = \"m\" }}"), 10, "facade.audit.entry"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\n[facade.audit]\nentry = {{ a = \"m\", b = \"n\" }}"), 9, "facade.audit.entry"),
            (url, &format!("{hooks}\ninvalid_arguments = {{}}\n[facade.audit]\ncolour = \"x\""), 9, "facade.audit.colour"),
        ] {
            let e = facade_target(http, facade).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{http} / {facade}: {e}");
            assert!(e.to_string().starts_with(&format!("t.toml:{line}:")), "{e}");
        }
    }

    #[test]
    fn a_hygiene_only_target_loads_with_its_channels() {
        use crate::engine::decl::{Delivery, Rotation};
        let t = parse(
            "t.toml",
            r#"
version = 1
[hygiene]
command = "./host --token-file {credential_file}"
delivery = "file"
stored = "{token}"
rotation = "file"
rotation_signal = "HUP"
file_vars = ["AGENT_CREDENTIALS"]
env = { HOST_ENDPOINT = "http://127.0.0.1:9/mcp" }
ptrace = false
poll_ms = 2
"#,
        )
        .unwrap();
        let h = t.hygiene.unwrap();
        assert_eq!(h.delivery, Delivery::File { variable: None });
        assert_eq!(
            h.rotation,
            Rotation::File {
                signal: Some("HUP".into())
            }
        );
        assert_eq!(h.header, "Bearer {token}");
        assert_eq!(h.stored.as_deref(), Some("{token}"));
        assert_eq!(h.stored_form(), "{token}");
        assert_eq!(h.legacy.len(), 3);
        // No stale file variables unless declared: the seed host's are the reference's own.
        assert!(h.stale_file_vars.is_empty());
        assert!(!h.ptrace);
        assert_eq!(h.poll_ms, 2);
        let d = parse("t.toml", "version = 1\n[hygiene]\n")
            .unwrap()
            .hygiene
            .unwrap();
        assert_eq!(
            d.delivery,
            Delivery::Env {
                variable: "PARITY_MCP_AUTHORIZATION".into()
            }
        );
        // Stored as delivered unless declared.
        assert_eq!(d.stored, None);
        assert_eq!(d.stored_form(), "Bearer {token}");
    }

    #[test]
    fn bad_hygiene_declarations_name_their_key() {
        for (body, key) in [
            ("rotation = \"file\"", "hygiene.rotation"),
            (
                "delivery = \"stdin\"\nstdin_line = \"hello\"",
                "hygiene.stdin_line",
            ),
            ("header = \"Bearer\"", "hygiene.header"),
            ("stored = \"Bearer\"", "hygiene.stored"),
            ("stored = \"{header}\"", "hygiene.stored"),
            ("stored = \"{header} {token}\"", "hygiene.stored"),
            (
                "command = \"host\"\ndelivery = \"file\"",
                "hygiene.delivery",
            ),
            ("poll_ms = 0", "hygiene.poll_ms"),
            ("colour = 1", "hygiene.colour"),
            ("stale_file_vars = [\"\"]", "hygiene.stale_file_vars"),
            ("stale_file_vars = [\"A=B\"]", "hygiene.stale_file_vars"),
            (
                "stale_file_vars = [\"PARITY_MCP_AUTHORIZATION\"]",
                "hygiene.stale_file_vars",
            ),
            (
                "variable = \"X\"\nlegacy = [\"T3_MCP_BEARER_TOKEN\", \"X\"]",
                "hygiene.legacy",
            ),
            ("file_vars = [\" \"]", "hygiene.file_vars"),
            (
                "stale_file_vars = [\"T3_MCP_BEARER_TOKEN\"]",
                "hygiene.stale_file_vars",
            ),
            (
                "env = { A_FILE = \"x\" }\nstale_file_vars = [\"A_FILE\"]",
                "hygiene.stale_file_vars",
            ),
            ("env = { L = \"x\" }\nlegacy = [\"L\"]", "hygiene.legacy"),
        ] {
            let e = parse("t.toml", &format!("version = 1\n[hygiene]\n{body}\n")).unwrap_err();
            assert_eq!(e.key, key, "{body}: {e}");
            assert!(e.line >= 3, "{e}");
        }
    }
}
