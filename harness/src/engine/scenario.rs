//! Scenario files v1 (YAML): user-written step sequences that run as cases next to the check
//! catalogue. The format is specified in `docs/scenarios.md`.
//!
//! Flow: [`load_str`] / [`load_path`] parse a file into a [`Scenario`] (every error names the
//! file, the line and column, and the field: `x.yaml:12:5: steps[2].expect: unknown key
//! "resul"`); the planner (`crate::engine::run`) makes one case `<id>@mcp-stdio#<revision>` per
//! applicable era; [`run_case_timed`] drives the steps in a fresh session through
//! [`Ctx::open`] / [`Ctx::start_raw`] / [`Ctx::close`] (so the monitors see the frames too) and
//! turns the first failing step into the scenario level's verdict with the session's frames as
//! evidence. [`partial_match`] is the expectation matcher.
//!
//! The shipped scenarios (`harness/scenarios/` in the source tree, inside this crate so its
//! package holds them; named `scenarios/…` in messages) are embedded in the binary
//! ([`shipped`]) and always run; `parity run --scenarios DIR` adds a user directory
//! ([`load_dir`]).
//!
//! Size (2039 lines): the scenario file format v1 (located YAML reading, every step kind, every
//! expectation) and its runner, which share the step types; about 290 lines are unit tests.

use crate::base::yaml::{path_index, path_key, Kind, Node};
/// The binding scenario cases run at: MCP over stdio.
pub use crate::engine::check::STDIO_BINDING as BINDING;
use crate::engine::check::{evidence, Ctx, Finding, Level, Revs, Status, Verdict};
use crate::engine::run::CaseResult;
use crate::protocol::mcp::{Client, Era, Reply};
use crate::transport::peer::Recv;
use serde_json::{json, Map, Value};
use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The only scenario format version this parity reads.
pub const FORMAT_VERSION: i64 = 1;

/// Longest `expect_silence` window accepted, in milliseconds (a case has 30 s in all, scaled by
/// `--timeout-multiplier`).
pub const MAX_SILENCE_MS: u64 = 10_000;

/// The shipped scenarios: (path in the source tree, text), embedded at build time.
const SHIPPED: &[(&str, &str)] = &[
    (
        "scenarios/mcp/tools-read-readme.yaml",
        include_str!("../../scenarios/mcp/tools-read-readme.yaml"),
    ),
    (
        "scenarios/mcp/tools-write-read-roundtrip.yaml",
        include_str!("../../scenarios/mcp/tools-write-read-roundtrip.yaml"),
    ),
    (
        "scenarios/mcp/tools-path-outside-root.yaml",
        include_str!("../../scenarios/mcp/tools-path-outside-root.yaml"),
    ),
    (
        "scenarios/mcp/tools-exec-not-allowed.yaml",
        include_str!("../../scenarios/mcp/tools-exec-not-allowed.yaml"),
    ),
    (
        "scenarios/mcp/recorded-py-mcp-client.yaml",
        include_str!("../../scenarios/mcp/recorded-py-mcp-client.yaml"),
    ),
    (
        "scenarios/mcp/stdio-padded-line.yaml",
        include_str!("../../scenarios/mcp/stdio-padded-line.yaml"),
    ),
    (
        "scenarios/mcp/stdio-split-write.yaml",
        include_str!("../../scenarios/mcp/stdio-split-write.yaml"),
    ),
    (
        "scenarios/equivalence/six-tools.yaml",
        include_str!("../../scenarios/equivalence/six-tools.yaml"),
    ),
];

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// One loaded scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Stable id (letters, digits, `.`, `_`, `-`); the case id is `<id>@mcp-stdio#<revision>`.
    pub id: String,
    /// One sentence: what the scenario proves (printed as the case's requirement).
    pub description: String,
    /// Where the requirement is written: a section path under the revision's specification
    /// (`basic/utilities/ping`), `jsonrpc-2.0#…`, `rfc8259#…`, or a full `http(s)://` URL.
    pub spec: String,
    /// The level a failing step is judged at (MUST → fail, SHOULD → warn, …).
    pub level: Level,
    /// The quoted spec sentence, when the file gives one (`quote:`).
    pub quote: Option<String>,
    /// The eras it runs in (legacy first; never empty).
    pub eras: Vec<Era>,
    /// A server capability (top-level key of `capabilities`) the scenario needs; the case is
    /// skipped when the server does not declare it.
    pub capability: Option<String>,
    /// How the session starts.
    pub session: SessionMode,
    /// `targets: [reference]`: the scenario relies on the bundled reference's tools and
    /// workspace and is skipped against any other target.
    pub reference_only: bool,
    /// The steps, in order (never empty, unless the scenario replays a transcript).
    pub steps: Vec<Step>,
    /// `transcript:`: the scenario replays a recorded session instead of running steps
    /// (docs/transcripts.md); its session is always raw (the transcript holds the handshake).
    pub replay: Option<Arc<Replay>>,
    /// The file it came from, as given to the loader.
    pub source: String,
}

/// A recorded session a scenario replays (`transcript:`), with its volatile values.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The transcript, read when the scenario was loaded.
    pub transcript: crate::protocol::transcript::Transcript,
    /// `volatile:`: JSON pointers into each message (see `crate::protocol::replay::Normalizer`).
    pub pointers: Vec<String>,
    /// `volatile_keys:`: member names volatile wherever they appear.
    pub keys: Vec<String>,
}

/// Transcripts that shipped scenarios replay, embedded like the scenarios (path, text).
const SHIPPED_TRANSCRIPTS: &[(&str, &str)] = &[(
    "scenarios/mcp/recorded/py-mcp-client-session.jsonl",
    include_str!("../../scenarios/mcp/recorded/py-mcp-client-session.jsonl"),
)];

/// How a scenario's session starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    /// A fresh peer with the era's handshake done (`initialize` + `notifications/initialized`
    /// in the legacy era; nothing in the modern era). The default.
    Initialized,
    /// A fresh peer and nothing sent.
    Raw,
}

/// The outcome class of a `tools/call` response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeClass {
    /// A result whose `isError` is not `true`.
    Ok,
    /// A result with `isError: true` and `structuredContent.outcome == "refused"` (the parity
    /// outcome encoding).
    Refused,
    /// A result with `isError: true` that is not a refusal.
    ToolError,
    /// A JSON-RPC error response.
    ProtocolError,
}

impl OutcomeClass {
    /// The name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeClass::Ok => "ok",
            OutcomeClass::Refused => "refused",
            OutcomeClass::ToolError => "tool_error",
            OutcomeClass::ProtocolError => "protocol_error",
        }
    }

    /// Classifies a `tools/call` response message (see the variants).
    ///
    /// Errors: the message has neither `result` nor `error`.
    pub fn of(message: &Value) -> Result<OutcomeClass, String> {
        if message.get("error").is_some() {
            return Ok(OutcomeClass::ProtocolError);
        }
        let Some(result) = message.get("result") else {
            return Err("the response has neither `result` nor `error`".into());
        };
        if result.get("isError") != Some(&Value::Bool(true)) {
            return Ok(OutcomeClass::Ok);
        }
        let refused = result
            .get("structuredContent")
            .and_then(|s| s.get("outcome"))
            .and_then(Value::as_str)
            == Some("refused");
        Ok(if refused {
            OutcomeClass::Refused
        } else {
            OutcomeClass::ToolError
        })
    }
}

/// One step of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Line of the step in its file (1-based; 0 when unknown).
    pub line: u64,
    /// What it does.
    pub action: Action,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `send`: write these bytes as they are (the loader already appended the `\n`, unless
    /// the text ended with one or `newline: false` was given).
    Send {
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// `send_json`: write this value as one compact line plus `\n`; with `meta: true` the
    /// era's request `_meta` is added to `params` in the modern era.
    SendJson {
        /// The message.
        message: Value,
        /// Add the modern `_meta`.
        meta: bool,
    },
    /// `request`: a driver request (fresh integer id, era `_meta`) that waits for its
    /// response; the optional pattern must partially match the whole response.
    Request {
        /// The method.
        method: String,
        /// The params object, if given.
        params: Option<Value>,
        /// Pattern for the response.
        expect: Option<Value>,
    },
    /// `expect`: the next message from the server must partially match.
    Expect {
        /// The pattern.
        pattern: Value,
    },
    /// `expect_silence`: nothing may arrive (or be pending) for this long.
    ExpectSilence {
        /// The window.
        window: Duration,
    },
    /// `call`: `tools/call` through the driver, with an expected outcome class and pattern.
    Call {
        /// Tool name.
        name: String,
        /// Tool arguments (an object).
        arguments: Value,
        /// Expected outcome class.
        outcome: Option<OutcomeClass>,
        /// Pattern for the whole response.
        expect: Option<Value>,
    },
}

impl Scenario {
    /// The spec reference URL at a revision.
    pub fn spec_url(&self, revision: &str) -> String {
        let s = self.spec.as_str();
        if s.starts_with("https://") || s.starts_with("http://") {
            s.to_string()
        } else if let Some(rest) = s.strip_prefix("jsonrpc-2.0") {
            format!("https://www.jsonrpc.org/specification{rest}")
        } else if let Some(rest) = s.strip_prefix("rfc8259") {
            format!("https://www.rfc-editor.org/rfc/rfc8259{rest}")
        } else {
            format!("https://modelcontextprotocol.io/specification/{revision}/{s}")
        }
    }

    /// The revisions it applies to, described like the check catalogue does.
    pub fn revisions(&self) -> String {
        let legacy = self.eras.contains(&Era::Legacy);
        let modern = self.eras.contains(&Era::Modern);
        match (legacy, modern) {
            (true, true) => Revs::All.describe(),
            (true, false) => Revs::Legacy.describe(),
            _ => Revs::Modern.describe(),
        }
    }

    /// The quote printed with a failing case: the `quote:` field, else the description.
    pub fn quote_or_description(&self) -> &str {
        self.quote.as_deref().unwrap_or(&self.description)
    }

    /// Whether it runs in `era`.
    pub fn runs_in(&self, era: Era) -> bool {
        self.eras.contains(&era)
    }
}

// ---------------------------------------------------------------------------------------------
// Load errors
// ---------------------------------------------------------------------------------------------

/// A scenario file (or directory) that could not be loaded.
///
/// Displays as `FILE:LINE:COLUMN: FIELD: MESSAGE`; the column is left out when unknown, the
/// line too (for I/O errors), and the field when the error concerns the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file (or directory) as given.
    pub file: String,
    /// 1-based line; 0 when unknown.
    pub line: u64,
    /// 1-based column; 0 when unknown.
    pub column: u64,
    /// The field path, e.g. `steps[2].expect`; empty for the whole file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
        }
        use crate::base::textfile::{clip_quoted, MAX_MESSAGE, MAX_QUOTED};
        if !self.field.is_empty() {
            write!(f, ": {}", clip_quoted(&self.field, MAX_QUOTED))?;
        }
        write!(f, ": {}", clip_quoted(&self.message, MAX_MESSAGE))
    }
}

impl std::error::Error for LoadError {}

// ---------------------------------------------------------------------------------------------
// The YAML tree with locations
// ---------------------------------------------------------------------------------------------

/// Parses YAML text into the located tree.
fn parse_tree(file: &str, text: &str) -> Result<Node, LoadError> {
    crate::base::yaml::parse(text).map_err(|e| LoadError {
        file: file.to_string(),
        line: e.line as u64,
        column: e.column as u64,
        field: if e.field.is_empty() {
            "(document)".into()
        } else {
            e.field
        },
        message: format!("invalid YAML: {}", e.message),
    })
}

// ---------------------------------------------------------------------------------------------
// Tree → Scenario
// ---------------------------------------------------------------------------------------------

const TOP_KEYS: &[&str] = &[
    "version",
    "id",
    "description",
    "spec",
    "level",
    "quote",
    "eras",
    "capability",
    "session",
    "targets",
    "steps",
    "transcript",
    "volatile",
    "volatile_keys",
];
const STEP_KEYS: &[&str] = &[
    "send",
    "newline",
    "send_json",
    "meta",
    "request",
    "call",
    "outcome",
    "expect",
    "expect_silence",
];
const ACTION_KEYS: &[&str] = &["send", "send_json", "request", "call", "expect_silence"];
const MESSAGE_KEYS: &[&str] = &["jsonrpc", "id", "method", "params", "result", "error"];

struct Cv<'a> {
    file: &'a str,
}

type Entries<'n> = &'n [(Node, Node)];

impl Cv<'_> {
    fn err(&self, node: &Node, field: &str, message: impl Into<String>) -> LoadError {
        LoadError {
            file: self.file.to_string(),
            line: node.line as u64,
            column: node.col as u64,
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn wrong(&self, node: &Node, field: &str, wanted: &str) -> LoadError {
        self.err(
            node,
            field,
            format!("expected {wanted}, got {}", node.kind.describe()),
        )
    }

    /// A mapping whose keys are all among `allowed` (each key at most once).
    fn mapping<'n>(
        &self,
        node: &'n Node,
        field: &str,
        allowed: &[&str],
        what: &str,
    ) -> Result<Entries<'n>, LoadError> {
        let Kind::Map(entries) = &node.kind else {
            return Err(self.wrong(node, field, &format!("a mapping ({what})")));
        };
        for (k, _) in entries {
            let Kind::Str(name) = &k.kind else {
                return Err(self.err(
                    k,
                    field,
                    format!("keys must be strings, got {}", k.kind.describe()),
                ));
            };
            if !allowed.contains(&name.as_str()) {
                return Err(self.err(
                    k,
                    field,
                    format!(
                        "unknown key {} (expected one of: {})",
                        json!(name),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(entries)
    }

    fn string(&self, node: &Node, field: &str) -> Result<String, LoadError> {
        match &node.kind {
            Kind::Str(s) => Ok(s.clone()),
            _ => Err(self.wrong(node, field, "a string")),
        }
    }

    fn nonempty_string(&self, node: &Node, field: &str) -> Result<String, LoadError> {
        let s = self.string(node, field)?;
        if s.trim().is_empty() {
            return Err(self.err(node, field, "must not be empty"));
        }
        Ok(s)
    }

    fn boolean(&self, node: &Node, field: &str) -> Result<bool, LoadError> {
        match &node.kind {
            Kind::Bool(b) => Ok(*b),
            _ => Err(self.wrong(node, field, "a boolean (true or false)")),
        }
    }

    /// A JSON value (mapping keys must be strings; numbers must be finite).
    fn json(&self, node: &Node, field: &str) -> Result<Value, LoadError> {
        Ok(match &node.kind {
            Kind::Null => Value::Null,
            Kind::Bool(b) => Value::Bool(*b),
            Kind::Int(i) => json!(i),
            Kind::UInt(u) => json!(u),
            Kind::Float(x) => match serde_json::Number::from_f64(*x) {
                Some(n) => Value::Number(n),
                None => return Err(self.err(node, field, "numbers must be finite in JSON")),
            },
            Kind::Str(s) => Value::String(s.clone()),
            Kind::Seq(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| self.json(n, &path_index(field, i)))
                    .collect::<Result<_, _>>()?,
            ),
            Kind::Map(entries) => {
                let mut m = Map::new();
                for (k, v) in entries {
                    let Kind::Str(name) = &k.kind else {
                        return Err(self.err(
                            k,
                            field,
                            format!(
                                "JSON object keys must be strings, got {} (quote it)",
                                k.kind.describe()
                            ),
                        ));
                    };
                    m.insert(name.clone(), self.json(v, &path_key(field, name))?);
                }
                Value::Object(m)
            }
        })
    }

    /// A JSON object.
    fn object(&self, node: &Node, field: &str) -> Result<Value, LoadError> {
        if !matches!(node.kind, Kind::Map(_)) {
            return Err(self.wrong(node, field, "a mapping (a JSON object)"));
        }
        self.json(node, field)
    }

    /// A match pattern: JSON plus the `$any`, `$absent`, `$contains` forms, validated.
    fn pattern(&self, node: &Node, field: &str, member: bool) -> Result<Value, LoadError> {
        match &node.kind {
            Kind::Str(s) if s.starts_with('$') && !s.starts_with("$$") => match s.as_str() {
                "$any" => Ok(Value::String(s.clone())),
                "$absent" if member => Ok(Value::String(s.clone())),
                "$absent" => Err(self.err(
                    node,
                    field,
                    "`$absent` applies only to a member of a mapping (a key that must be missing)",
                )),
                _ => Err(self.err(
                    node,
                    field,
                    format!(
                        "unknown matcher {} (matchers: $any, $absent, $contains; write $${} for a literal string)",
                        json!(s),
                        &s[1..]
                    ),
                )),
            },
            Kind::Seq(items) => Ok(Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| self.pattern(n, &path_index(field, i), false))
                    .collect::<Result<_, _>>()?,
            )),
            Kind::Map(entries) => {
                let contains = entries
                    .iter()
                    .any(|(k, _)| matches!(&k.kind, Kind::Str(s) if s == "$contains"));
                if contains {
                    if entries.len() != 1 {
                        return Err(self.err(
                            node,
                            field,
                            "`$contains` must be the only key of its mapping",
                        ));
                    }
                    let (_, v) = &entries[0];
                    let sub = path_key(field, "$contains");
                    if !matches!(v.kind, Kind::Seq(_)) {
                        return Err(self.wrong(v, &sub, "a list of patterns"));
                    }
                    return Ok(json!({"$contains": self.pattern(v, &sub, false)?}));
                }
                let mut m = Map::new();
                for (k, v) in entries {
                    let Kind::Str(name) = &k.kind else {
                        return Err(self.err(
                            k,
                            field,
                            format!(
                                "JSON object keys must be strings, got {} (quote it)",
                                k.kind.describe()
                            ),
                        ));
                    };
                    m.insert(name.clone(), self.pattern(v, &path_key(field, name), true)?);
                }
                Ok(Value::Object(m))
            }
            _ => self.json(node, field),
        }
    }

    /// A pattern for a whole JSON-RPC message (or a batch of them): the top-level keys of an
    /// object pattern must be message members.
    fn message_pattern(&self, node: &Node, field: &str) -> Result<Value, LoadError> {
        match &node.kind {
            Kind::Map(entries) => {
                let is_contains = entries
                    .iter()
                    .any(|(k, _)| matches!(&k.kind, Kind::Str(s) if s == "$contains"));
                if !is_contains {
                    self.mapping(node, field, MESSAGE_KEYS, "a JSON-RPC message pattern")?;
                }
            }
            Kind::Seq(items) => {
                for (i, n) in items.iter().enumerate() {
                    if matches!(n.kind, Kind::Map(_)) {
                        self.message_pattern(n, &path_index(field, i))?;
                    }
                }
            }
            Kind::Str(s) if s == "$any" => {}
            _ => {
                return Err(self.wrong(
                    node,
                    field,
                    "a mapping (a JSON-RPC message pattern) or a list (a batch)",
                ))
            }
        }
        self.pattern(node, field, false)
    }
}

fn get<'n>(entries: Entries<'n>, key: &str) -> Option<&'n Node> {
    entries.iter().find_map(|(k, v)| match &k.kind {
        Kind::Str(s) if s == key => Some(v),
        _ => None,
    })
}

fn get_key<'n>(entries: Entries<'n>, key: &str) -> Option<&'n Node> {
    entries.iter().find_map(|(k, _)| match &k.kind {
        Kind::Str(s) if s == key => Some(k),
        _ => None,
    })
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !id.starts_with(['.', '-'])
}

fn parse_level(s: &str) -> Option<Level> {
    Level::from_keyword(s)
}

/// Parses one scenario file's text. `file` names it in errors (and becomes
/// [`Scenario::source`]).
///
/// Errors: invalid YAML, an unknown key, a value of the wrong type, a missing required key, an
/// unsupported `version`, or an invalid step; each names the file, line, column and field.
pub fn load_str(file: &str, text: &str) -> Result<Scenario, LoadError> {
    let root = parse_tree(file, text)?;
    let cv = Cv { file };
    if matches!(root.kind, Kind::Null) {
        return Err(LoadError {
            file: file.to_string(),
            line: 1,
            column: 1,
            field: "(document)".into(),
            message: "the file is empty (expected a scenario mapping)".into(),
        });
    }
    let top = cv.mapping(&root, "(document)", TOP_KEYS, "a scenario")?;
    let required = |key: &str| -> Result<&Node, LoadError> {
        get(top, key).ok_or_else(|| cv.err(&root, key, "missing required key"))
    };

    let version = required("version")?;
    match version.kind {
        Kind::Int(FORMAT_VERSION) => {}
        Kind::Int(v) => {
            return Err(cv.err(
                version,
                "version",
                format!("unsupported version {v} (this parity reads version {FORMAT_VERSION})"),
            ))
        }
        _ => return Err(cv.wrong(version, "version", "an integer (1)")),
    }

    let id_node = required("id")?;
    let id = cv.string(id_node, "id")?;
    if !valid_id(&id) {
        return Err(cv.err(
            id_node,
            "id",
            format!(
                "invalid id {} (letters, digits, `.`, `_` and `-`; e.g. mcp.scenario.ping-roundtrip)",
                json!(id)
            ),
        ));
    }
    let description = cv.nonempty_string(required("description")?, "description")?;
    let spec_node = required("spec")?;
    let spec = cv.nonempty_string(spec_node, "spec")?;
    if spec.chars().any(char::is_whitespace) {
        return Err(cv.err(spec_node, "spec", "must not contain whitespace"));
    }
    let level_node = required("level")?;
    let level_text = cv.string(level_node, "level")?;
    let level = parse_level(&level_text).ok_or_else(|| {
        cv.err(
            level_node,
            "level",
            format!(
                "unknown level {} (expected MUST, MUST NOT, SHOULD, SHOULD NOT or robustness)",
                json!(level_text)
            ),
        )
    })?;
    let quote = match get(top, "quote") {
        Some(n) => Some(cv.nonempty_string(n, "quote")?),
        None => None,
    };

    let eras = match get(top, "eras") {
        None => vec![Era::Legacy, Era::Modern],
        Some(n) => {
            let Kind::Seq(items) = &n.kind else {
                return Err(cv.wrong(n, "eras", "a list of eras ([legacy, modern])"));
            };
            if items.is_empty() {
                return Err(cv.err(n, "eras", "must name at least one era"));
            }
            let mut eras = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let f = path_index("eras", i);
                let e = match cv.string(item, &f)?.as_str() {
                    "legacy" => Era::Legacy,
                    "modern" => Era::Modern,
                    other => {
                        return Err(cv.err(
                            item,
                            &f,
                            format!("unknown era {} (expected legacy or modern)", json!(other)),
                        ))
                    }
                };
                if !eras.contains(&e) {
                    eras.push(e);
                }
            }
            eras.sort();
            eras
        }
    };
    let capability = match get(top, "capability") {
        Some(n) => Some(cv.nonempty_string(n, "capability")?),
        None => None,
    };
    let session = match get(top, "session") {
        None => SessionMode::Initialized,
        Some(n) => match cv.string(n, "session")?.as_str() {
            "initialized" => SessionMode::Initialized,
            "raw" => SessionMode::Raw,
            other => {
                return Err(cv.err(
                    n,
                    "session",
                    format!(
                        "unknown session mode {} (expected initialized or raw)",
                        json!(other)
                    ),
                ))
            }
        },
    };
    let mut reference_only = false;
    if let Some(n) = get(top, "targets") {
        let Kind::Seq(items) = &n.kind else {
            return Err(cv.wrong(n, "targets", "a list ([reference])"));
        };
        for (i, item) in items.iter().enumerate() {
            let f = path_index("targets", i);
            match cv.string(item, &f)?.as_str() {
                "reference" => reference_only = true,
                other => {
                    return Err(cv.err(
                        item,
                        &f,
                        format!("unknown target kind {} (expected reference)", json!(other)),
                    ))
                }
            }
        }
    }

    let replay = load_replay(&cv, top, file)?;
    let (eras, session) = match &replay {
        Some(r) if get(top, "eras").is_none() => {
            let era = match r.transcript.header.era.as_deref() {
                Some("modern") => Era::Modern,
                _ => Era::Legacy,
            };
            (vec![era], SessionMode::Raw)
        }
        Some(_) => (eras, SessionMode::Raw),
        None => (eras, session),
    };
    let steps = if replay.is_some() {
        if let Some(n) = get(top, "steps") {
            return Err(cv.err(
                n,
                "steps",
                "a scenario either replays a `transcript` or runs `steps`, not both",
            ));
        }
        Vec::new()
    } else {
        for key in ["volatile", "volatile_keys"] {
            if let Some(n) = get(top, key) {
                return Err(cv.err(n, key, "only a scenario with a `transcript` takes this key"));
            }
        }
        let steps_node = required("steps")?;
        let Kind::Seq(step_nodes) = &steps_node.kind else {
            return Err(cv.wrong(steps_node, "steps", "a list of steps"));
        };
        if step_nodes.is_empty() {
            return Err(cv.err(steps_node, "steps", "must hold at least one step"));
        }
        step_nodes
            .iter()
            .enumerate()
            .map(|(i, n)| load_step(&cv, n, &path_index("steps", i)))
            .collect::<Result<Vec<_>, _>>()?
    };

    Ok(Scenario {
        id,
        description,
        spec,
        level,
        quote,
        eras,
        capability,
        session,
        reference_only,
        steps,
        replay,
        source: file.to_string(),
    })
}

/// Reads `transcript:` (a path relative to the scenario file; shipped scenarios find their
/// transcripts embedded), `volatile:` and `volatile_keys:`.
fn load_replay(cv: &Cv, top: Entries<'_>, file: &str) -> Result<Option<Arc<Replay>>, LoadError> {
    let Some(n) = get(top, "transcript") else {
        return Ok(None);
    };
    let rel = cv.nonempty_string(n, "transcript")?;
    let path = Path::new(file).parent().unwrap_or(Path::new("")).join(&rel);
    let shown = path.display().to_string();
    let shipped = SHIPPED_TRANSCRIPTS.iter().find(|(p, _)| *p == shown);
    let read = match shipped {
        Some((p, text)) => crate::protocol::transcript::parse(p, text),
        None => crate::protocol::transcript::load(&path),
    };
    let transcript = read.map_err(|e| cv.err(n, "transcript", e.to_string()))?;
    if transcript.header.protocol != "mcp" {
        return Err(cv.err(
            n,
            "transcript",
            format!(
                "{shown} records {} (scenarios replay MCP stdio sessions; use `parity replay --acp` for ACP)",
                json!(transcript.header.protocol)
            ),
        ));
    }
    let mut lists = [Vec::new(), Vec::new()];
    for (slot, key) in lists.iter_mut().zip(["volatile", "volatile_keys"]) {
        let Some(node) = get(top, key) else { continue };
        let Kind::Seq(items) = &node.kind else {
            return Err(cv.wrong(node, key, "a list of strings"));
        };
        for (i, item) in items.iter().enumerate() {
            let f = path_index(key, i);
            let v = cv.nonempty_string(item, &f)?;
            if key == "volatile" && !v.starts_with('/') {
                return Err(cv.err(item, &f, "a JSON pointer starts with `/`"));
            }
            slot.push(v);
        }
    }
    let [pointers, keys] = lists;
    Ok(Some(Arc::new(Replay {
        transcript,
        pointers,
        keys,
    })))
}

fn load_step(cv: &Cv, node: &Node, field: &str) -> Result<Step, LoadError> {
    let entries = cv.mapping(node, field, STEP_KEYS, "a step")?;
    let actions: Vec<&str> = ACTION_KEYS
        .iter()
        .copied()
        .filter(|k| get(entries, k).is_some())
        .collect();
    if actions.len() > 1 {
        return Err(cv.err(
            node,
            field,
            format!(
                "a step does one thing; found `{}` and `{}`",
                actions[0], actions[1]
            ),
        ));
    }
    let action = actions
        .first()
        .copied()
        .or_else(|| get(entries, "expect").map(|_| "expect"));
    let Some(action) = action else {
        return Err(cv.err(
            node,
            field,
            "a step needs one of: send, send_json, request, call, expect, expect_silence",
        ));
    };
    // Keys that only go with one action.
    let companions: &[(&str, &[&str])] = &[
        ("newline", &["send"]),
        ("meta", &["send_json"]),
        ("outcome", &["call"]),
        ("expect", &["request", "call", "expect"]),
    ];
    for (key, with) in companions {
        if let Some(k) = get_key(entries, key) {
            if !with.contains(&action) {
                return Err(cv.err(
                    k,
                    &path_key(field, key),
                    format!(
                        "`{key}` does not apply to a `{action}` step (it goes with: {})",
                        with.join(", ")
                    ),
                ));
            }
        }
    }
    let expect = match get(entries, "expect") {
        Some(n) => Some(cv.message_pattern(n, &path_key(field, "expect"))?),
        None => None,
    };
    let sub = |k: &str| path_key(field, k);
    let action = match action {
        "send" => {
            let n = get(entries, "send").unwrap_or(node);
            let text = cv.string(n, &sub("send"))?;
            let newline = match get(entries, "newline") {
                Some(b) => cv.boolean(b, &sub("newline"))?,
                None => true,
            };
            let mut bytes = text.into_bytes();
            if newline && !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            if bytes.is_empty() {
                return Err(cv.err(n, &sub("send"), "nothing to send (empty string)"));
            }
            Action::Send { bytes }
        }
        "send_json" => {
            let n = get(entries, "send_json").unwrap_or(node);
            let message = cv.json(n, &sub("send_json"))?;
            let meta = match get(entries, "meta") {
                Some(b) => cv.boolean(b, &sub("meta"))?,
                None => false,
            };
            let params_ok = matches!(message.get("params"), None | Some(Value::Object(_)));
            if meta && !(message.is_object() && params_ok) {
                return Err(cv.err(
                    n,
                    &sub("send_json"),
                    "`meta: true` needs a message object whose params (if any) are an object",
                ));
            }
            Action::SendJson { message, meta }
        }
        "request" => {
            let n = get(entries, "request").unwrap_or(node);
            let f = sub("request");
            let req = cv.mapping(n, &f, &["method", "params"], "a request")?;
            let method = match get(req, "method") {
                Some(m) => cv.nonempty_string(m, &path_key(&f, "method"))?,
                None => return Err(cv.err(n, &path_key(&f, "method"), "missing required key")),
            };
            let params = match get(req, "params") {
                Some(p) => Some(cv.object(p, &path_key(&f, "params"))?),
                None => None,
            };
            Action::Request {
                method,
                params,
                expect,
            }
        }
        "call" => {
            let n = get(entries, "call").unwrap_or(node);
            let f = sub("call");
            let call = cv.mapping(n, &f, &["name", "arguments"], "a tool call")?;
            let name = match get(call, "name") {
                Some(m) => cv.nonempty_string(m, &path_key(&f, "name"))?,
                None => return Err(cv.err(n, &path_key(&f, "name"), "missing required key")),
            };
            let arguments = match get(call, "arguments") {
                Some(a) => cv.object(a, &path_key(&f, "arguments"))?,
                None => json!({}),
            };
            let outcome = match get(entries, "outcome") {
                None => None,
                Some(o) => Some(match cv.string(o, &sub("outcome"))?.as_str() {
                    "ok" => OutcomeClass::Ok,
                    "refused" => OutcomeClass::Refused,
                    "tool_error" => OutcomeClass::ToolError,
                    "protocol_error" => OutcomeClass::ProtocolError,
                    other => {
                        return Err(cv.err(
                            o,
                            &sub("outcome"),
                            format!(
                                "unknown outcome {} (expected ok, refused, tool_error or protocol_error)",
                                json!(other)
                            ),
                        ))
                    }
                }),
            };
            Action::Call {
                name,
                arguments,
                outcome,
                expect,
            }
        }
        "expect_silence" => {
            let n = get(entries, "expect_silence").unwrap_or(node);
            let ms = match n.kind {
                Kind::Int(ms) if (0..=MAX_SILENCE_MS as i64).contains(&ms) => ms as u64,
                Kind::Int(_) => {
                    return Err(cv.err(
                        n,
                        &sub("expect_silence"),
                        format!("must be between 0 and {MAX_SILENCE_MS} milliseconds"),
                    ))
                }
                _ => return Err(cv.wrong(n, &sub("expect_silence"), "an integer (milliseconds)")),
            };
            Action::ExpectSilence {
                window: Duration::from_millis(ms),
            }
        }
        _ => Action::Expect {
            pattern: expect.unwrap_or(Value::Null),
        },
    };
    Ok(Step {
        line: node.line as u64,
        action,
    })
}

/// Reads and parses one scenario file.
///
/// Errors: the file cannot be read or is not UTF-8, or any error of [`load_str`].
pub fn load_path(path: &Path) -> Result<Scenario, LoadError> {
    let name = path.display().to_string();
    let text = crate::base::textfile::read_utf8(path).map_err(|e| {
        let (line, column) = e.place();
        LoadError {
            file: name.clone(),
            line: line as u64,
            column: column as u64,
            field: match &e {
                crate::base::textfile::ReadError::NotUtf8 { before, .. } => {
                    crate::base::textfile::yaml_key_near(before, line).unwrap_or_default()
                }
                crate::base::textfile::ReadError::Io(_) => String::new(),
            },
            message: match &e {
                crate::base::textfile::ReadError::Io(io) => format!("failed to read: {io}"),
                crate::base::textfile::ReadError::NotUtf8 { .. } => e.message("the scenario file"),
            },
        }
    })?;
    load_str(&name, &text)
}

/// The scenario files under `dir`: every `*.yaml` / `*.yml`, recursively, sorted by path. A
/// path naming a file is taken as it is.
///
/// Errors: the directory cannot be read.
pub fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let io_err = |p: &Path, e: std::io::Error| LoadError {
        file: p.display().to_string(),
        line: 0,
        column: 0,
        field: String::new(),
        message: format!("failed to read the scenario directory: {e}"),
    };
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| io_err(&d, e))?;
        for entry in rd {
            let entry = entry.map_err(|e| io_err(&d, e))?;
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e == "yaml" || e == "yml")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Loads every scenario file of a directory (see [`scenario_files`]).
///
/// Errors: the first file that fails to load.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, LoadError> {
    scenario_files(dir)?.iter().map(|p| load_path(p)).collect()
}

/// The shipped scenarios (embedded in the binary), in file order.
///
/// Errors: a shipped file is malformed (a build defect; the tests keep it from happening).
pub fn shipped() -> Result<Vec<Scenario>, LoadError> {
    SHIPPED
        .iter()
        .map(|(name, text)| load_str(name, text))
        .collect()
}

/// The paths (in the source tree) of the shipped scenario files.
pub fn shipped_files() -> Vec<&'static str> {
    SHIPPED.iter().map(|(name, _)| *name).collect()
}

/// The shipped scenarios followed by those of each directory, checked for id clashes with one
/// another and with `checks`, the ids of the check catalogue (every profile's checks:
/// [`crate::engine::profile::Registry::check_ids`]).
///
/// Errors: a file fails to load, or an id is used twice (message names both files).
pub fn load_all(dirs: &[PathBuf], checks: &[&str]) -> Result<Vec<Arc<Scenario>>, String> {
    let mut all = shipped().map_err(|e| e.to_string())?;
    for d in dirs {
        if !d.exists() {
            return Err(format!(
                "{}: no such scenario directory or file",
                d.display()
            ));
        }
        all.extend(load_dir(d).map_err(|e| e.to_string())?);
    }
    check_ids(&all, checks)?;
    Ok(all.into_iter().map(Arc::new).collect())
}

/// Checks that scenario ids are unique and do not shadow one of the check ids `checks`.
///
/// Errors: the first clash, naming the files.
pub fn check_ids(scenarios: &[Scenario], checks: &[&str]) -> Result<(), String> {
    let checks: HashSet<&str> = checks.iter().copied().collect();
    let mut seen: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for s in scenarios {
        if checks.contains(s.id.as_str()) {
            return Err(format!(
                "{}: id: {} is the id of a check in the catalogue",
                s.source,
                crate::base::textfile::clip_quoted(
                    &json!(s.id).to_string(),
                    crate::base::textfile::MAX_QUOTED
                )
            ));
        }
        if let Some(first) = seen.insert(&s.id, &s.source) {
            return Err(format!(
                "{}: id: {} is already used by {first}",
                s.source,
                crate::base::textfile::clip_quoted(
                    &json!(s.id).to_string(),
                    crate::base::textfile::MAX_QUOTED
                )
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The matcher
// ---------------------------------------------------------------------------------------------

/// Most mismatches [`partial_match`] reports.
const MAX_MISMATCHES: usize = 20;

/// Partially matches `actual` against the pattern `expected`; returns the mismatches (empty =
/// match), each `/json/pointer: expected …, got …`.
///
/// Rules: an object matches when every key of the pattern matches in the actual object (extra
/// keys allowed); an array matches element-wise with equal length, unless the pattern is
/// `{"$contains": [p, …]}` (every `p` matches at least one element, in any order); scalars must
/// be equal, type included (`1` ≠ `"1"`; numbers compare by value, so `1` = `1.0`); `"$any"`
/// matches any present value; `"$absent"` as a member value requires the key to be missing; a
/// string starting with `$$` matches the literal string with one `$` less.
pub fn partial_match(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(expected, Some(actual), &mut String::new(), &mut out);
    out.truncate(MAX_MISMATCHES);
    out
}

fn show(v: &Value) -> String {
    crate::base::util::clip(&v.to_string(), 120)
}

use crate::base::util::json_type as type_name;

fn at(path: &str) -> &str {
    if path.is_empty() {
        "/"
    } else {
        path
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x == y,
        _ => match (a.as_u64(), b.as_u64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
    }
}

fn walk(exp: &Value, act: Option<&Value>, path: &mut String, out: &mut Vec<String>) {
    if out.len() >= MAX_MISMATCHES {
        return;
    }
    if let Value::String(s) = exp {
        match s.as_str() {
            "$any" => {
                if act.is_none() {
                    out.push(format!("{}: missing (expected any value)", at(path)));
                }
                return;
            }
            "$absent" => {
                if let Some(a) = act {
                    out.push(format!(
                        "{}: expected to be absent, got {}",
                        at(path),
                        show(a)
                    ));
                }
                return;
            }
            _ => {}
        }
    }
    let Some(act) = act else {
        out.push(format!("{}: missing (expected {})", at(path), show(exp)));
        return;
    };
    match exp {
        Value::Object(pat) if pat.len() == 1 && pat.contains_key("$contains") => {
            let wanted = pat.get("$contains").and_then(Value::as_array);
            let (Some(wanted), Value::Array(items)) = (wanted, act) else {
                out.push(format!(
                    "{}: expected an array containing {}, got {}",
                    at(path),
                    show(pat.get("$contains").unwrap_or(&Value::Null)),
                    show(act)
                ));
                return;
            };
            for w in wanted {
                let found = items.iter().any(|item| {
                    let mut sub = Vec::new();
                    walk(w, Some(item), &mut path.clone(), &mut sub);
                    sub.is_empty()
                });
                if !found {
                    out.push(format!(
                        "{}: no element matches {} (got {})",
                        at(path),
                        show(w),
                        show(act)
                    ));
                }
            }
        }
        Value::Object(pat) => {
            let Value::Object(obj) = act else {
                out.push(format!(
                    "{}: expected an object, got {}: {}",
                    at(path),
                    type_name(act),
                    show(act)
                ));
                return;
            };
            for (k, v) in pat {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                walk(v, obj.get(k), path, out);
                path.truncate(len);
            }
        }
        Value::Array(pat) => {
            let Value::Array(items) = act else {
                out.push(format!(
                    "{}: expected an array, got {}: {}",
                    at(path),
                    type_name(act),
                    show(act)
                ));
                return;
            };
            if pat.len() != items.len() {
                out.push(format!(
                    "{}: expected {} element(s), got {}: {}",
                    at(path),
                    pat.len(),
                    items.len(),
                    show(act)
                ));
                return;
            }
            for (i, (p, a)) in pat.iter().zip(items).enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                walk(p, Some(a), path, out);
                path.truncate(len);
            }
        }
        Value::String(s) => {
            let literal = s.strip_prefix('$').filter(|r| r.starts_with('$'));
            let want = literal.unwrap_or(s);
            if act.as_str() != Some(want) {
                out.push(format!(
                    "{}: expected {}, got {}",
                    at(path),
                    show(&Value::String(want.to_string())),
                    show(act)
                ));
            }
        }
        Value::Number(n) => {
            let eq = matches!(act, Value::Number(m) if numbers_equal(n, m));
            if !eq {
                out.push(format!("{}: expected {}, got {}", at(path), n, show(act)));
            }
        }
        Value::Bool(_) | Value::Null => {
            if exp != act {
                out.push(format!(
                    "{}: expected {}, got {}",
                    at(path),
                    show(exp),
                    show(act)
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

/// Runs one scenario case within the case deadline and returns its result
/// (`<id>@mcp-stdio#<revision>`, the level's verdict on a failing step, `timeout` past the
/// deadline).
pub async fn run_case_timed(ctx: &Ctx, scenario: &Scenario) -> CaseResult {
    let t0 = Instant::now();
    let finding = ctx.within_deadline(run_case(ctx, scenario)).await;
    let ms = t0.elapsed().as_millis() as u64;
    let mut r = match finding {
        Some(f) => case_result(scenario, &ctx.revision, f, ms),
        None => {
            let ev = ctx.salvage();
            let mut r = case_result(scenario, &ctx.revision, Finding::pass(ev), ms);
            r.verdict = Verdict::Timeout;
            r.message = format!(
                "the case ran past its {} ms deadline",
                ctx.timing.case.as_millis()
            );
            r
        }
    };
    crate::engine::run::explain_unread(&mut r, ctx.unread_note());
    r
}

/// The case id of a scenario at a revision: `<id>@mcp-stdio#<revision>`.
pub fn case_id(scenario: &Scenario, revision: &str) -> String {
    format!("{}@{BINDING}#{revision}", scenario.id)
}

/// Turns a finding into the case result (the level applies to a violation).
pub fn case_result(
    scenario: &Scenario,
    revision: &str,
    f: Finding,
    duration_ms: u64,
) -> CaseResult {
    let (verdict, message) = f.status.verdict(scenario.level);
    CaseResult {
        id: case_id(scenario, revision),
        kind: crate::engine::run::CaseKind::Scenario,
        check: scenario.id.clone(),
        binding: BINDING.to_string(),
        revision: revision.to_string(),
        spec: scenario.spec_url(revision),
        level: scenario.level.as_str().to_string(),
        quote: scenario.quote_or_description().to_string(),
        requirement: scenario.description.clone(),
        verdict,
        message,
        evidence: f.evidence,
        duration_ms,
        attempts: 1,
        expected: None,
    }
}

/// Runs one scenario case (no deadline): skips when it does not apply (a reference-only
/// scenario against another target, an undeclared capability), opens the session, runs the
/// steps until one fails, closes the session and returns the finding with the frames as
/// evidence.
pub async fn run_case(ctx: &Ctx, scenario: &Scenario) -> Finding {
    if scenario.reference_only && !ctx.target.reference {
        return Finding::skip(
            "the scenario runs only against the bundled reference (targets: [reference])",
        );
    }
    if let Some(cap) = &scenario.capability {
        if !ctx.declares(cap) {
            return Finding::skip(format!("the server did not declare the `{cap}` capability"));
        }
    }
    if let Some(r) = &scenario.replay {
        return run_replay(ctx, r).await;
    }
    let opened = match scenario.session {
        SessionMode::Initialized => ctx.open().await,
        SessionMode::Raw => ctx.start_raw().await,
    };
    let mut client = match opened {
        Ok(c) => c,
        Err(f) => return f,
    };
    let mut pending: VecDeque<Value> = VecDeque::new();
    let mut status = Status::Pass;
    for (i, step) in scenario.steps.iter().enumerate() {
        if let Err(msg) = run_step(ctx, &mut client, &mut pending, step).await {
            let line = if step.line > 0 {
                format!(" ({}:{})", scenario.source, step.line)
            } else {
                String::new()
            };
            // A line over the cap was skipped unread: it may have been what the step waited
            // for, so the step could not be judged (a `timeout`, never a failure).
            status = match client.skipped.note(ctx.target.spec.line_cap) {
                Some(note) => Status::Timeout(format!("steps[{i}]{line}: {msg}; {note}")),
                None => Status::Violated(format!("steps[{i}]{line}: {msg}")),
            };
            break;
        }
    }
    let events = client.peer.events();
    ctx.close(client).await;
    Finding {
        status,
        evidence: evidence(&events),
    }
}

/// Replays a transcript against a fresh server process and compares (crate::protocol::replay); every
/// difference is a violation, listed with its diff in the evidence.
async fn run_replay(ctx: &Ctx, r: &Replay) -> Finding {
    let mut client = match ctx.start_raw().await {
        Ok(c) => c,
        Err(f) => return f,
    };
    let log = client.peer.log_handle();
    // The live exchange is compared whole: the log gets room for twice the recording.
    client
        .peer
        .set_log_budget(crate::transport::framelog::Budget::at_least(
            2 * r.transcript.frame_bytes(),
        ));
    let driven =
        crate::protocol::replay::drive(&r.transcript, &mut client.peer, ctx.timing.message).await;
    ctx.close(client).await;
    let (dropped, dropped_bytes) = log.dropped();
    if dropped > 0 {
        return Finding::not_run(
            format!(
                "the live exchange was not compared: the server sent more than the session's frame log keeps (twice the recording), and {dropped} frames ({dropped_bytes} bytes) were left out"
            ),
            evidence(&log.events()),
        );
    }
    let norm = crate::protocol::replay::Normalizer::new(r.pointers.clone(), r.keys.clone());
    let recorded = crate::protocol::replay::Exchange::of_transcript(&r.transcript);
    let live = crate::protocol::replay::Exchange::of_wire(&log.events());
    let diffs = crate::protocol::replay::compare(&recorded, &live, &norm);
    let mut evidence: Vec<String> = crate::protocol::replay::render(&r.transcript.source, &diffs)
        .lines()
        .take(200)
        .map(str::to_string)
        .collect();
    evidence.extend(driven.notes.iter().map(|n| format!("note: {n}")));
    let status = match diffs.first() {
        None => Status::Pass,
        Some(first) => Status::Violated(format!(
            "{} difference(s) from the recording {}; first: {}{}",
            diffs.len(),
            r.transcript.source,
            first.what,
            if first.line > 0 {
                format!(" (line {})", first.line)
            } else {
                String::new()
            }
        )),
    };
    Finding { status, evidence }
}

/// Moves what the driver set aside while waiting for responses into the pending queue.
/// A message the server started on its own (a notification or a request: it has `method`), or
/// a stdout line that is no JSON at all (noise such as a banner, which the stdout-purity monitor
/// judges): neither is an answer.
fn server_initiated(v: &Value) -> bool {
    v.get("method").is_some_and(Value::is_string) || v.get("$unparsed").is_some()
}

/// A repeated response ([`crate::protocol::mcp::Inbound::repeat`]: a request answered twice) is left
/// out: `mcp.base.duplicate-response` judges it, and it answers no step.
fn drain_inbox(client: &mut Client, pending: &mut VecDeque<Value>) {
    for inb in client.inbox.drain(..) {
        if !inb.repeat {
            pending.push_back(strict_value(&inb));
        }
    }
}

/// The strict reading of a received line: its JSON value, or a marker string for a line that
/// is not JSON (so that an expectation reports it).
fn strict_value(inb: &crate::protocol::mcp::Inbound) -> Value {
    match inb.strict() {
        Some(v) => v.clone(),
        None => json!({"$unparsed": String::from_utf8_lossy(&inb.line.bytes)}),
    }
}

fn mismatch_text(list: &[String]) -> String {
    let n = list.len();
    let mut s = list.iter().take(5).cloned().collect::<Vec<_>>().join("; ");
    if n > 5 {
        s.push_str(&format!("; … and {} more", n - 5));
    }
    s
}

async fn run_step(
    ctx: &Ctx,
    client: &mut Client,
    pending: &mut VecDeque<Value>,
    step: &Step,
) -> Result<(), String> {
    match &step.action {
        Action::Send { bytes } => client
            .send_raw(bytes)
            .await
            .map_err(|e| format!("could not send: {e}")),
        Action::SendJson { message, meta } => {
            let mut msg = message.clone();
            if *meta && ctx.era == Era::Modern {
                if let Value::Object(o) = &mut msg {
                    let params = o.remove("params").unwrap_or(Value::Null);
                    o.insert("params".into(), client.with_meta(params));
                }
            }
            client
                .peer
                .send_json(&msg)
                .await
                .map_err(|e| format!("could not send: {e}"))
        }
        Action::Request {
            method,
            params,
            expect,
        } => {
            let reply = driver_request(client, method, params.clone()).await?;
            drain_inbox(client, pending);
            let msg = answered(method, &reply)?;
            if let Some(p) = expect {
                let m = partial_match(p, msg);
                if !m.is_empty() {
                    return Err(format!(
                        "the {method} response does not match: {}",
                        mismatch_text(&m)
                    ));
                }
            }
            Ok(())
        }
        Action::Call {
            name,
            arguments,
            outcome,
            expect,
        } => {
            let params = json!({"name": name, "arguments": arguments});
            let reply = driver_request(client, "tools/call", Some(params)).await?;
            drain_inbox(client, pending);
            let what = format!("tools/call {name}");
            let msg = answered(&what, &reply)?;
            if let Some(want) = outcome {
                let got = OutcomeClass::of(msg).map_err(|e| format!("{what}: {e}"))?;
                if got != *want {
                    return Err(format!(
                        "{what}: expected outcome {}, got {}: {}",
                        want.as_str(),
                        got.as_str(),
                        crate::base::util::clip(&msg.to_string(), 300)
                    ));
                }
            }
            if let Some(p) = expect {
                let m = partial_match(p, msg);
                if !m.is_empty() {
                    return Err(format!(
                        "the {what} response does not match: {}",
                        mismatch_text(&m)
                    ));
                }
            }
            Ok(())
        }
        Action::Expect { pattern } => {
            drain_inbox(client, pending);
            // Messages the server starts on its own (notifications, requests such as
            // roots/list) are passed over unless the expectation names a `method`.
            let skip_server_initiated = pattern.get("method").is_none();
            let msg = loop {
                let msg = match pending.pop_front() {
                    Some(v) => v,
                    None => match client.next_message().await {
                        // A request answered twice is the duplicate-response monitor's.
                        Ok(inb) if inb.repeat => continue,
                        // Only a prefix of a line over the cap was kept: it cannot be matched
                        // (the step's error names it, `Client::skipped`).
                        Ok(inb) if inb.line.cut() => continue,
                        Ok(inb) => strict_value(&inb),
                        Err(Recv::Eof) => {
                            return Err("expected a message, but the server closed stdout".into())
                        }
                        Err(_) => {
                            return Err(format!(
                                "expected a message, but none arrived within {} ms",
                                client.timeout.as_millis()
                            ))
                        }
                    },
                };
                if !(skip_server_initiated && server_initiated(&msg)) {
                    break msg;
                }
            };
            let m = partial_match(pattern, &msg);
            if m.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "the next message does not match: {} (message: {})",
                    mismatch_text(&m),
                    crate::base::util::clip(&msg.to_string(), 300)
                ))
            }
        }
        Action::ExpectSilence { window } => {
            drain_inbox(client, pending);
            // Silence means no answer: notifications and requests the server starts on its
            // own do not break it.
            pending.retain(|v| !server_initiated(v));
            if let Some(v) = pending.front() {
                return Err(format!(
                    "expected silence, but a message was pending: {}",
                    crate::base::util::clip(&v.to_string(), 300)
                ));
            }
            let (mut got, eof) = client.collect_for(*window).await;
            got.retain(|inb| !inb.repeat && !server_initiated(&strict_value(inb)));
            if let Some(first) = got.first() {
                return Err(format!(
                    "expected silence for {} ms, but {} message(s) arrived, first: {}",
                    window.as_millis(),
                    got.len(),
                    crate::base::util::clip(&strict_value(first).to_string(), 300)
                ));
            }
            if eof {
                return Err(format!(
                    "expected silence for {} ms, but the server closed stdout",
                    window.as_millis()
                ));
            }
            Ok(())
        }
    }
}

/// A driver request: fresh id; in the modern era the `_meta` is added (params become an object
/// holding only `_meta` when none were given).
async fn driver_request(
    client: &mut Client,
    method: &str,
    params: Option<Value>,
) -> Result<Reply, String> {
    let r = match (client.era, params) {
        (Era::Modern, p) => client.request(method, p.unwrap_or(Value::Null)).await,
        (Era::Legacy, Some(p)) => client.request(method, p).await,
        (Era::Legacy, None) => {
            let id = client.fresh_id();
            client.request_as(id, method, None).await
        }
    };
    r.map_err(|e| format!("could not send the {method} request: {e}"))
}

fn answered<'r>(what: &str, reply: &'r Reply) -> Result<&'r Value, String> {
    reply
        .message()
        .ok_or_else(|| format!("{what}: {}", reply.describe()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_names_the_line_column_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yaml");
        std::fs::write(
            &path,
            b"version: 1\nid: mcp.scenario.x\ndescription: \"a\xff\"\n",
        )
        .unwrap();
        let e = load_path(&path).unwrap_err();
        assert_eq!(
            (e.line, e.column, e.field.as_str()),
            (3, 16, "description"),
            "{e}"
        );
        assert!(e.to_string().contains("not valid UTF-8"), "{e}");
    }

    #[test]
    fn an_empty_file_is_located_at_its_first_line() {
        for text in ["", "# only a comment\n", "\n\n"] {
            let e = load_str("s.yaml", text).unwrap_err();
            assert!(e.to_string().starts_with("s.yaml:1:1: "), "{e}");
        }
    }

    #[test]
    fn cr_only_line_endings_are_located_by_their_lines() {
        let e = load_str("s.yaml", "version: 1\rid: mcp.scenario.x\rbogus: 1\r").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.field.len() < 100, "{e}");
    }

    fn check(pattern: Value, actual: Value, expected: &[&str]) {
        let got = partial_match(&pattern, &actual);
        assert_eq!(got, expected, "pattern {pattern} vs {actual}");
    }

    #[test]
    fn matcher_objects_allow_extra_keys() {
        check(json!({"a": 1}), json!({"a": 1, "b": 2}), &[]);
        check(
            json!({"a": {"b": "x"}}),
            json!({"a": {"b": "y"}}),
            &[r#"/a/b: expected "x", got "y""#],
        );
        check(json!({"a": 1}), json!({}), &["/a: missing (expected 1)"]);
        check(
            json!({"a": 1}),
            json!([1]),
            &["/: expected an object, got an array: [1]"],
        );
    }

    #[test]
    fn matcher_scalars_compare_with_type() {
        check(json!(1), json!("1"), &[r#"/: expected 1, got "1""#]);
        check(json!("1"), json!(1), &[r#"/: expected "1", got 1"#]);
        check(json!(1), json!(1.0), &[]);
        check(json!(null), json!(false), &["/: expected null, got false"]);
        check(json!(true), json!(true), &[]);
        check(json!(-32601), json!(-32601), &[]);
    }

    #[test]
    fn matcher_arrays_are_element_wise_with_equal_length() {
        check(json!([1, 2]), json!([1, 2]), &[]);
        check(
            json!([1, 2]),
            json!([1, 2, 3]),
            &["/: expected 2 element(s), got 3: [1,2,3]"],
        );
        check(
            json!({"tools": [{"name": "a"}]}),
            json!({"tools": [{"name": "b", "x": 1}]}),
            &[r#"/tools/0/name: expected "a", got "b""#],
        );
    }

    #[test]
    fn matcher_contains_any_order() {
        let actual = json!({"tools": [{"name": "a"}, {"name": "b"}]});
        check(
            json!({"tools": {"$contains": [{"name": "b"}, {"name": "a"}]}}),
            actual.clone(),
            &[],
        );
        let got = partial_match(&json!({"tools": {"$contains": [{"name": "c"}]}}), &actual);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].starts_with(r#"/tools: no element matches {"name":"c"}"#),
            "{got:?}"
        );
        let got = partial_match(&json!({"$contains": [1]}), &json!({"a": 1}));
        assert!(
            got[0].starts_with("/: expected an array containing [1]"),
            "{got:?}"
        );
    }

    #[test]
    fn matcher_any_absent_and_literal_dollar() {
        check(json!({"id": "$any"}), json!({"id": null}), &[]);
        check(
            json!({"id": "$any"}),
            json!({}),
            &["/id: missing (expected any value)"],
        );
        check(json!({"error": "$absent"}), json!({"result": {}}), &[]);
        check(
            json!({"error": "$absent"}),
            json!({"error": {"code": 1}}),
            &[r#"/error: expected to be absent, got {"code":1}"#],
        );
        check(json!("$$any"), json!("$any"), &[]);
        check(json!("$$x"), json!("x"), &[r#"/: expected "$x", got "x""#]);
    }

    #[test]
    fn matcher_escapes_pointer_tokens() {
        check(
            json!({"a/b": {"c~d": 1}}),
            json!({"a/b": {"c~d": 2}}),
            &["/a~1b/c~0d: expected 1, got 2"],
        );
    }

    #[test]
    fn outcome_classes() {
        let ok = json!({"result": {"content": [], "isError": false}});
        let refused = json!({"result": {"isError": true,
            "structuredContent": {"outcome": "refused", "code": "NOT_FOUND"}}});
        let tool_error = json!({"result": {"isError": true}});
        let proto = json!({"error": {"code": -32602, "message": "x"}});
        assert_eq!(OutcomeClass::of(&ok).unwrap(), OutcomeClass::Ok);
        assert_eq!(OutcomeClass::of(&refused).unwrap(), OutcomeClass::Refused);
        assert_eq!(
            OutcomeClass::of(&tool_error).unwrap(),
            OutcomeClass::ToolError
        );
        assert_eq!(
            OutcomeClass::of(&proto).unwrap(),
            OutcomeClass::ProtocolError
        );
        assert!(OutcomeClass::of(&json!({"id": 1})).is_err());
    }

    const GOOD: &str = "\
version: 1
id: mcp.scenario.test
description: a test
spec: basic/utilities/ping
level: MUST
eras: [legacy]
steps:
  - send: '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}'
  - expect: {id: 1, result: {}}
  - request: {method: tools/list}
    expect: {result: {tools: {$contains: [{name: read_file}]}}}
  - call: {name: read_file, arguments: {path: README.md}}
    outcome: ok
  - send_json: {jsonrpc: '2.0', method: notifications/x}
    meta: true
  - expect_silence: 100
  - send: 'abc'
    newline: false
";

    fn load_err(text: &str) -> String {
        load_str("x.yaml", text).unwrap_err().to_string()
    }

    #[test]
    fn loads_a_full_scenario() {
        let s = load_str("x.yaml", GOOD).unwrap();
        assert_eq!(s.id, "mcp.scenario.test");
        assert_eq!(s.eras, vec![Era::Legacy]);
        assert_eq!(s.level, Level::Must);
        assert_eq!(s.steps.len(), 7);
        assert_eq!(s.steps[0].line, 8);
        assert_eq!(
            s.steps[0].action,
            Action::Send {
                bytes: b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".to_vec()
            }
        );
        assert_eq!(
            s.steps[6].action,
            Action::Send {
                bytes: b"abc".to_vec()
            }
        );
        assert!(matches!(
            s.steps[3].action,
            Action::Call {
                outcome: Some(OutcomeClass::Ok),
                ..
            }
        ));
        assert_eq!(
            s.spec_url("2025-11-25"),
            "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/ping"
        );
    }

    #[test]
    fn unknown_key_in_expect_names_line_column_and_field() {
        let text = GOOD.replace("expect: {id: 1, result: {}}", "expect: {id: 1, resul: {}}");
        assert_eq!(
            load_err(&text),
            "x.yaml:9:21: steps[1].expect: unknown key \"resul\" (expected one of: jsonrpc, id, method, params, result, error)"
        );
    }

    #[test]
    fn unknown_top_and_step_keys() {
        let text = GOOD.replace("eras: [legacy]", "era: [legacy]");
        assert!(
            load_err(&text).starts_with("x.yaml:6:1: (document): unknown key \"era\""),
            "{}",
            load_err(&text)
        );
        let text = GOOD.replace("    outcome: ok", "    outcom: ok");
        assert!(
            load_err(&text).starts_with("x.yaml:13:5: steps[3]: unknown key \"outcom\""),
            "{}",
            load_err(&text)
        );
    }

    #[test]
    fn wrong_types_name_the_field() {
        let text = GOOD.replace("expect_silence: 100", "expect_silence: soon");
        assert_eq!(
            load_err(&text),
            "x.yaml:16:21: steps[5].expect_silence: expected an integer (milliseconds), got a string (\"soon\")"
        );
        let text = GOOD.replace("version: 1", "version: \"1\"");
        assert!(load_err(&text).starts_with("x.yaml:1:10: version: expected an integer"));
        let text = GOOD.replace("    newline: false", "    newline: no");
        assert!(
            load_err(&text).starts_with("x.yaml:18:14: steps[6].newline: expected a boolean"),
            "{}",
            load_err(&text)
        );
    }

    #[test]
    fn yaml_syntax_errors_name_line_and_field() {
        let text = GOOD.replace("  - expect_silence: 100", "  - expect_silence: [100");
        let e = load_str("x.yaml", &text).unwrap_err();
        assert_eq!(e.file, "x.yaml");
        assert!(e.line >= 16, "{e}");
        assert!(e.field.starts_with("steps"), "{e}");
        assert!(e.message.starts_with("invalid YAML"), "{e}");
    }

    #[test]
    fn step_rules() {
        let text = GOOD.replace("    outcome: ok", "    outcome: ok\n    send: x");
        assert!(load_err(&text).contains("steps[3]: a step does one thing"));
        let text = GOOD.replace("  - expect_silence: 100", "  - meta: true");
        assert!(load_err(&text).contains("steps[5]: a step needs one of"));
        let text = GOOD.replace("    newline: false", "    outcome: ok");
        assert!(load_err(&text).contains("steps[6].outcome: `outcome` does not apply"));
        let text = GOOD.replace("{id: 1, result: {}}", "{id: 1, result: $nope}");
        assert!(load_err(&text).contains("steps[1].expect.result: unknown matcher \"$nope\""));
        let text = GOOD.replace("{id: 1, result: {}}", "{id: 1, result: [$absent]}");
        assert!(load_err(&text).contains("steps[1].expect.result[0]: `$absent` applies only"));
        let text = GOOD.replace("level: MUST", "level: MAY");
        assert!(load_err(&text).contains("level: unknown level \"MAY\""));
        let text = GOOD.replace("version: 1", "version: 2");
        assert!(load_err(&text).contains("unsupported version 2"));
        let text = GOOD.replace("id: mcp.scenario.test\n", "");
        assert_eq!(load_err(&text), "x.yaml:1:1: id: missing required key");
    }

    #[test]
    fn shipped_scenarios_load() {
        let all = shipped().unwrap();
        assert!(all.len() >= 4);
        check_ids(&all, &[]).unwrap();
        let first = all[0].id.clone();
        let clash = check_ids(&all, &[first.as_str()]).unwrap_err();
        assert!(
            clash.contains("is the id of a check in the catalogue"),
            "{clash}"
        );
    }
}
