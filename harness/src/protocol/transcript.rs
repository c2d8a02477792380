//! The transcript format (`parity-transcript/1`, JSONL; docs/transcripts.md).
//!
//! Line 1 is a [`Header`]; every later line is one [`Event`]: a `c2s`, `s2c` or `stderr` line
//! as it crossed the pipe (`raw`, or `raw_b64` when the bytes are not UTF-8), or the child's
//! `exit`. `seq` counts from 1 without gaps; `t_ms` is milliseconds on a monotonic clock since
//! the session started. Secrets are redacted when recording ([`Redactor`]); nothing is
//! normalized in the file (that happens when comparing, see `crate::protocol::replay`).
//!
//! Reading is strict: a missing header, an unknown `format`, a line that is not a JSON object,
//! an unknown or missing field, a wrong type or a `seq` gap is an error naming the file, the
//! line and the field ([`TranscriptError`]).

use base64::Engine as _;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// The format id written in every header; a reader refuses any other.
pub const FORMAT: &str = "parity-transcript/1";

/// The header: line 1 of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The version of parity that wrote it (`CARGO_PKG_VERSION`).
    pub parity: String,
    /// `mcp`, `acp` or `unknown`, as detected from the first client messages.
    pub protocol: String,
    /// MCP only: `legacy` (the `initialize` handshake) or `modern` (2026-07-28, stateless).
    pub era: Option<String>,
    /// The negotiated protocol version when seen (MCP: a date string; ACP: an integer),
    /// else the one the client asked for; `None` when nothing told.
    pub protocol_version: Option<Value>,
    /// `stdio` (the only transport recorded so far).
    pub transport: String,
    /// The recorded command, after redaction.
    pub command: Vec<String>,
    /// Wall-clock start, milliseconds since the Unix epoch (informational only).
    pub started_unix_ms: u64,
    /// The redaction rules applied when recording: `(id, what it covers)`. User patterns are
    /// listed by id only, since a pattern may contain the secret itself.
    pub redaction: Vec<(String, String)>,
}

impl Header {
    /// The header as one JSON object (the transcript's first line).
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("format".into(), json!(FORMAT));
        o.insert("parity".into(), json!(self.parity));
        o.insert("protocol".into(), json!(self.protocol));
        if let Some(era) = &self.era {
            o.insert("era".into(), json!(era));
        }
        if let Some(v) = &self.protocol_version {
            o.insert("protocol_version".into(), v.clone());
        }
        o.insert("transport".into(), json!(self.transport));
        o.insert("command".into(), json!(self.command));
        o.insert("started_unix_ms".into(), json!(self.started_unix_ms));
        let rules: Vec<Value> = self
            .redaction
            .iter()
            .map(|(id, what)| json!({"id": id, "covers": what}))
            .collect();
        o.insert("redaction".into(), Value::Array(rules));
        Value::Object(o)
    }
}

/// Which way an event's bytes went, or what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server/agent (the child's stdin).
    C2s,
    /// Server/agent to client (the child's stdout).
    S2c,
    /// The child's stderr.
    Stderr,
    /// The child exited (or the proxy stopped recording).
    Exit,
}

impl Direction {
    /// The name written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::C2s => "c2s",
            Direction::S2c => "s2c",
            Direction::Stderr => "stderr",
            Direction::Exit => "exit",
        }
    }

    fn parse(s: &str) -> Option<Direction> {
        Some(match s {
            "c2s" => Direction::C2s,
            "s2c" => Direction::S2c,
            "stderr" => Direction::Stderr,
            "exit" => Direction::Exit,
            _ => return None,
        })
    }
}

/// One event line.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// 1-based sequence number, no gaps.
    pub seq: u64,
    /// Milliseconds since the session started (monotonic).
    pub t_ms: u64,
    /// Direction.
    pub dir: Direction,
    /// The line's bytes without its `\n` (for `exit`: empty). For a line over the cap, only
    /// a prefix; see `len` and `sha256`.
    pub bytes: Vec<u8>,
    /// The line's full length in bytes, set only when `bytes` holds a prefix (over the cap).
    pub len: Option<u64>,
    /// Lowercase hex SHA-256 of the whole line, set with `len`.
    pub sha256: Option<String>,
    /// The stream ended before a `\n` ended this line.
    pub partial: bool,
    /// `exit` only: the status as text (`exit status: 0`, `signal: 9`).
    pub status: Option<String>,
    /// `exit` only: the proxy's exit code: the child's code, or 128 + the signal that ended it.
    pub code: Option<i32>,
}

impl Event {
    /// An event for a line in a direction.
    pub fn line(seq: u64, t_ms: u64, dir: Direction, bytes: Vec<u8>) -> Event {
        Event {
            seq,
            t_ms,
            dir,
            bytes,
            len: None,
            sha256: None,
            partial: false,
            status: None,
            code: None,
        }
    }

    /// The event as one JSON object: `raw` when the bytes are UTF-8, else `raw_b64`.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("seq".into(), json!(self.seq));
        o.insert("t_ms".into(), json!(self.t_ms));
        o.insert("dir".into(), json!(self.dir.as_str()));
        if self.dir == Direction::Exit {
            if let Some(s) = &self.status {
                o.insert("status".into(), json!(s));
            }
            if let Some(c) = self.code {
                o.insert("code".into(), json!(c));
            }
            return Value::Object(o);
        }
        match std::str::from_utf8(&self.bytes) {
            Ok(s) => o.insert("raw".into(), json!(s)),
            Err(_) => o.insert(
                "raw_b64".into(),
                json!(base64::engine::general_purpose::STANDARD.encode(&self.bytes)),
            ),
        };
        if let Some(len) = self.len {
            o.insert("len".into(), json!(len));
        }
        if let Some(h) = &self.sha256 {
            o.insert("sha256".into(), json!(h));
        }
        if self.partial {
            o.insert("partial".into(), json!(true));
        }
        Value::Object(o)
    }

    /// Appends the event's JSON line (without `\n`) to `out`: the same bytes as
    /// `to_json().to_string()`, written without building a JSON value for the common case (a
    /// UTF-8 line event).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let Ok(text) = std::str::from_utf8(&self.bytes) else {
            out.extend_from_slice(self.to_json().to_string().as_bytes());
            return;
        };
        if self.dir == Direction::Exit {
            out.extend_from_slice(self.to_json().to_string().as_bytes());
            return;
        }
        use std::io::Write as _;
        let _ = write!(
            out,
            "{{\"seq\":{},\"t_ms\":{},\"dir\":\"{}\",\"raw\":",
            self.seq,
            self.t_ms,
            self.dir.as_str()
        );
        let _ = serde_json::to_writer(&mut *out, text);
        if let Some(len) = self.len {
            let _ = write!(out, ",\"len\":{len}");
        }
        if let Some(h) = &self.sha256 {
            out.extend_from_slice(b",\"sha256\":");
            let _ = serde_json::to_writer(&mut *out, h);
        }
        if self.partial {
            out.extend_from_slice(b",\"partial\":true");
        }
        out.push(b'}');
    }

    /// The bytes as text (lossy), for messages.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }

    /// The line is whole (not cut at the cap).
    pub fn complete(&self) -> bool {
        self.len.is_none()
    }
}

/// A transcript read from a file: the header and the events with their line numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// Where it came from, as given to the reader.
    pub source: String,
    /// Line 1.
    pub header: Header,
    /// The events with their 1-based line numbers in the file.
    pub events: Vec<(usize, Event)>,
}

impl Transcript {
    /// Bytes of the recorded frames (their full lengths), for sizing the frame log of the
    /// session that replays it ([`crate::transport::framelog::Budget::at_least`]).
    pub fn frame_bytes(&self) -> usize {
        self.events.iter().fold(0usize, |total, (_, e)| {
            let len = e
                .len
                .map_or(e.bytes.len(), |n| usize::try_from(n).unwrap_or(usize::MAX));
            total
                .saturating_add(len)
                .saturating_add(crate::transport::framelog::FRAME_OVERHEAD)
        })
    }
}

/// A transcript that cannot be read: `file:line: field: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptError {
    /// The file.
    pub file: String,
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// The field at fault, when one is.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TranscriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        use crate::base::textfile::{clip_quoted, MAX_MESSAGE, MAX_QUOTED};
        if let Some(field) = &self.field {
            write!(f, ": field `{}`", clip_quoted(field, MAX_QUOTED))?;
        }
        write!(f, ": {}", clip_quoted(&self.message, MAX_MESSAGE))
    }
}

impl std::error::Error for TranscriptError {}

struct Fields<'a> {
    file: &'a str,
    line: usize,
    obj: Map<String, Value>,
}

impl Fields<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> TranscriptError {
        TranscriptError {
            file: self.file.to_string(),
            line: self.line,
            field: (!field.is_empty()).then(|| field.to_string()),
            message: message.into(),
        }
    }

    fn take(&mut self, key: &str) -> Option<Value> {
        self.obj.remove(key)
    }

    fn string(&mut self, key: &str) -> Result<Option<String>, TranscriptError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.err(key, format!("expected a string, got {v}"))),
        }
    }

    fn req_string(&mut self, key: &str) -> Result<String, TranscriptError> {
        self.string(key)?
            .ok_or_else(|| self.err(key, "missing (required)"))
    }

    fn uint(&mut self, key: &str) -> Result<Option<u64>, TranscriptError> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) => Ok(Some(n)),
                None => Err(self.err(key, format!("expected a non-negative integer, got {v}"))),
            },
        }
    }

    fn req_uint(&mut self, key: &str) -> Result<u64, TranscriptError> {
        self.uint(key)?
            .ok_or_else(|| self.err(key, "missing (required)"))
    }

    fn done(self) -> Result<(), TranscriptError> {
        match self.obj.keys().next() {
            Some(k) => Err(self.err(k, "unknown field")),
            None => Ok(()),
        }
    }
}

fn object<'a>(file: &'a str, line: usize, text: &str) -> Result<Fields<'a>, TranscriptError> {
    let fail = |message: String| TranscriptError {
        file: file.to_string(),
        line,
        field: None,
        message,
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(obj)) => Ok(Fields { file, line, obj }),
        Ok(other) => Err(fail(format!(
            "expected a JSON object, got {}",
            crate::base::util::json_type(&other)
        ))),
        Err(e) if crate::base::textfile::lone_cr(text).is_some() => Err(fail(format!(
            "not JSON (column {}): {e}; the line holds a carriage return not followed by a line feed at column {}: transcript lines end with LF (are the line endings CR only? the file was converted)",
            e.column(),
            crate::base::textfile::lone_cr(text).map_or(0, |o| text.get(..o).unwrap_or("").chars().count() + 1)
        ))),
        Err(e) => Err(fail(format!(
            "not JSON (column {}): {e}; the transcript is truncated or was edited",
            e.column()
        ))),
    }
}

fn header_from(mut f: Fields<'_>) -> Result<Header, TranscriptError> {
    let format = f.take("format").ok_or_else(|| {
        f.err(
            "format",
            format!("missing: line 1 must be the transcript header (`\"format\":\"{FORMAT}\"`)"),
        )
    })?;
    if format != json!(FORMAT) {
        return Err(f.err(
            "format",
            format!("unknown format version {format}; this parity reads `{FORMAT}`"),
        ));
    }
    let parity = f.req_string("parity")?;
    let protocol = f.req_string("protocol")?;
    let era = f.string("era")?;
    let protocol_version = f.take("protocol_version");
    let transport = f.req_string("transport")?;
    let command = match f.take("command") {
        None => Vec::new(),
        Some(Value::Array(a)) => {
            let mut out = Vec::new();
            for v in a {
                match v {
                    Value::String(s) => out.push(s),
                    other => return Err(f.err("command", format!("expected strings, got {other}"))),
                }
            }
            out
        }
        Some(v) => return Err(f.err("command", format!("expected an array, got {v}"))),
    };
    let started_unix_ms = f.uint("started_unix_ms")?.unwrap_or(0);
    let mut redaction = Vec::new();
    match f.take("redaction") {
        None => {}
        Some(Value::Array(rules)) => {
            for r in rules {
                let id = r.get("id").and_then(Value::as_str);
                let covers = r.get("covers").and_then(Value::as_str);
                match (id, covers) {
                    (Some(i), Some(c)) => redaction.push((i.to_string(), c.to_string())),
                    _ => {
                        return Err(f.err(
                            "redaction",
                            format!("each rule needs string `id` and `covers`, got {r}"),
                        ))
                    }
                }
            }
        }
        Some(v) => return Err(f.err("redaction", format!("expected an array, got {v}"))),
    }
    f.done()?;
    Ok(Header {
        parity,
        protocol,
        era,
        protocol_version,
        transport,
        command,
        started_unix_ms,
        redaction,
    })
}

fn event_from(mut f: Fields<'_>) -> Result<Event, TranscriptError> {
    let seq = f.req_uint("seq")?;
    let t_ms = f.req_uint("t_ms")?;
    let dir_text = f.req_string("dir")?;
    let dir = Direction::parse(&dir_text).ok_or_else(|| {
        f.err(
            "dir",
            format!("unknown direction `{dir_text}` (c2s, s2c, stderr, exit)"),
        )
    })?;
    let mut ev = Event::line(seq, t_ms, dir, Vec::new());
    if dir == Direction::Exit {
        ev.status = f.string("status")?;
        ev.code = match f.take("code") {
            None => None,
            Some(v) => match v.as_i64().and_then(|c| i32::try_from(c).ok()) {
                Some(c) => Some(c),
                None => return Err(f.err("code", format!("expected an integer, got {v}"))),
            },
        };
        f.done()?;
        return Ok(ev);
    }
    let raw = f.string("raw")?;
    let b64 = f.string("raw_b64")?;
    ev.bytes = match (raw, b64) {
        (Some(r), None) => r.into_bytes(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b.as_bytes())
            .map_err(|e| f.err("raw_b64", format!("not base64: {e}")))?,
        (Some(_), Some(_)) => return Err(f.err("raw_b64", "give `raw` or `raw_b64`, not both")),
        (None, None) => return Err(f.err("raw", "missing (a line event needs `raw` or `raw_b64`)")),
    };
    ev.len = f.uint("len")?;
    ev.sha256 = f.string("sha256")?;
    if ev.len.is_some() != ev.sha256.is_some() {
        return Err(f.err(
            "sha256",
            "`len` and `sha256` come together (a line over the cap)",
        ));
    }
    ev.partial = match f.take("partial") {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(v) => return Err(f.err("partial", format!("expected a boolean, got {v}"))),
    };
    f.done()?;
    Ok(ev)
}

/// An event line read straight into its fields, without building a JSON object first: the
/// fast path of [`parse`]. Unknown or repeated fields, `null`s and wrong types fail here, and
/// the line is then read again by the general reader ([`object`], [`event_from`]), which
/// accepts or refuses it and names the fault.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FastEvent<'a> {
    seq: u64,
    t_ms: u64,
    #[serde(borrow)]
    dir: Cow<'a, str>,
    #[serde(default, deserialize_with = "present")]
    raw: Option<String>,
    #[serde(default, deserialize_with = "present")]
    raw_b64: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    len: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    sha256: Option<String>,
    #[serde(default, deserialize_with = "present")]
    partial: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    status: Option<String>,
    #[serde(default, deserialize_with = "present")]
    code: Option<i64>,
}

/// A field that is present: its value must have the type (`null` is not `None`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// The event on one line when it is one the general reader accepts as is; `None` sends the
/// line to the general reader (which gives the same event, or the error).
fn fast_event(text: &str) -> Option<Event> {
    // A JSON array would fill the struct by position: only objects take this path.
    let first = text
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if first != b'{' {
        return None;
    }
    let f: FastEvent<'_> = serde_json::from_str(text).ok()?;
    let dir = Direction::parse(&f.dir)?;
    let mut ev = Event::line(f.seq, f.t_ms, dir, Vec::new());
    if dir == Direction::Exit {
        if f.raw.is_some()
            || f.raw_b64.is_some()
            || f.len.is_some()
            || f.sha256.is_some()
            || f.partial.is_some()
        {
            return None;
        }
        ev.status = f.status;
        ev.code = match f.code {
            None => None,
            Some(c) => Some(i32::try_from(c).ok()?),
        };
        return Some(ev);
    }
    if f.status.is_some() || f.code.is_some() || f.len.is_some() != f.sha256.is_some() {
        return None;
    }
    ev.bytes = match (f.raw, f.raw_b64) {
        (Some(r), None) => r.into_bytes(),
        (None, Some(b)) => base64::engine::general_purpose::STANDARD
            .decode(b.as_bytes())
            .ok()?,
        _ => return None,
    };
    ev.len = f.len;
    ev.sha256 = f.sha256;
    ev.partial = f.partial.unwrap_or(false);
    Some(ev)
}

/// Parses a transcript's text; `source` names it in errors.
///
/// Errors: see the module documentation (every error names `source`, the line and the field).
pub fn parse(source: &str, text: &str) -> Result<Transcript, TranscriptError> {
    // One leading UTF-8 byte-order mark is accepted, as in every other file format of parity.
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let mut lines = text.split('\n').enumerate();
    let header = match lines.next() {
        Some((_, first)) if !first.trim().is_empty() => header_from(object(source, 1, first)?)?,
        _ => {
            return Err(TranscriptError {
                file: source.to_string(),
                line: 1,
                field: None,
                message: "missing header: the file is empty".into(),
            })
        }
    };
    // At most one event per remaining line.
    let mut events = Vec::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count());
    let mut expect_seq = 1u64;
    for (i, text) in lines {
        let line = i + 1;
        if text.is_empty() {
            // The final newline, or a blank line: nothing to read.
            continue;
        }
        let ev = match fast_event(text) {
            Some(ev) => ev,
            None => event_from(object(source, line, text)?)?,
        };
        if ev.seq != expect_seq {
            return Err(TranscriptError {
                file: source.to_string(),
                line,
                field: Some("seq".into()),
                message: format!(
                    "expected seq {expect_seq}, got {} (events are missing or out of order)",
                    ev.seq
                ),
            });
        }
        expect_seq += 1;
        events.push((line, ev));
    }
    Ok(Transcript {
        source: source.to_string(),
        header,
        events,
    })
}

/// The name of the last object member that starts in `line` (`{"seq":1,"text":"ab` → `text`):
/// the field a byte at the end of `line` belongs to, for errors located by column only.
fn last_member(line: &str) -> Option<String> {
    let mut found = None;
    let b = line.as_bytes();
    let mut i = 0;
    let mut in_string: Option<usize> = None;
    while i < b.len() {
        match (b[i], in_string) {
            (b'\\', Some(_)) => i += 1,
            (b'"', Some(start)) => {
                in_string = None;
                let rest = line.get(i + 1..).unwrap_or("").trim_start();
                if rest.starts_with(':') {
                    found = line.get(start + 1..i).map(str::to_string);
                }
            }
            (b'"', None) => in_string = Some(i),
            _ => {}
        }
        i += 1;
    }
    found.map(|f| crate::base::textfile::clip_quoted(&f, 80))
}

/// Reads and parses a transcript file.
///
/// Errors: the file cannot be read (line 0), is not UTF-8 (the line, column and field of the
/// first invalid byte), or [`parse`] fails.
pub fn load(path: &Path) -> Result<Transcript, TranscriptError> {
    let source = path.display().to_string();
    let text = crate::base::textfile::read_utf8(path).map_err(|e| match &e {
        crate::base::textfile::ReadError::Io(io) => TranscriptError {
            file: source.clone(),
            line: 0,
            field: None,
            message: format!("failed to read: {io}"),
        },
        crate::base::textfile::ReadError::NotUtf8 { before, .. } => {
            // Lines of a transcript end at LF only.
            let line = memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let in_line = before.get(start..).unwrap_or("");
            TranscriptError {
                file: source.clone(),
                line,
                field: last_member(in_line),
                message: format!(
                    "column {}: {} (a transcript is JSONL; binary frames are in `raw_b64`)",
                    in_line.chars().count() + 1,
                    e.message("the transcript")
                ),
            }
        }
    })?;
    parse(&source, &text)
}

// ---------------------------------------------------------------------------------------------
// Redaction (applied when recording; cannot be undone)
// ---------------------------------------------------------------------------------------------

/// Environment variable names whose values are secrets: names containing one of these words
/// (case-insensitive).
pub const SECRET_NAME_WORDS: [&str; 4] = ["TOKEN", "SECRET", "KEY", "PASSWORD"];

/// Secret values shorter than this many bytes are not redacted as literals (a 2-byte value
/// would corrupt every message it happens to appear in). Use `--redact` for short secrets.
pub const MIN_SECRET_LEN: usize = 6;

/// The redaction rules of one recording: fixed rules plus literal secrets and user patterns.
/// Each match is replaced by `[REDACTED:<rule id>]`.
pub struct Redactor {
    /// `(id, covers, pattern, replacement template)`, applied in order.
    rules: Vec<(String, String, regex::bytes::Regex, String)>,
    /// Positions of command-line arguments that hold a secret value, with the byte offset where
    /// the value starts (after `NAME=`), replaced whole in the header whatever their length.
    secret_args: Vec<(usize, usize)>,
}

/// Whether a variable or flag name marks a secret ([`SECRET_NAME_WORDS`], plus `AUTH` for
/// flags such as `--auth`).
pub fn secret_name(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    SECRET_NAME_WORDS.iter().any(|w| up.contains(w)) || up.contains("AUTH")
}

/// How many levels of JSON string escaping a literal secret is looked for under: a secret in a
/// JSON string (level 1) inside serialized JSON in a text block (level 2), and two more.
pub const JSON_ESCAPE_LEVELS: usize = 4;

/// The ways one character can be written one JSON escaping level deeper than `s`: each
/// character of `s` as it is (when an encoder may leave it), as its short escape (`\"`, `\\`,
/// `\/`, `\n`, …) and as `\uXXXX` in either case of hex digits. A backslash or a quote is
/// always escaped (every encoder must), so each level adds at most a few forms per character.
fn escape_once(s: &str) -> Vec<String> {
    let mut outs = vec![String::new()];
    for c in s.chars() {
        let mut alts: Vec<String> = Vec::new();
        match c {
            '"' => alts.push("\\\"".into()),
            '\\' => alts.push("\\\\".into()),
            '\n' => alts.push("\\n".into()),
            '\r' => alts.push("\\r".into()),
            '\t' => alts.push("\\t".into()),
            '/' => alts.extend(["/".to_string(), "\\/".to_string()]),
            c if c.is_ascii_alphanumeric() => alts.push(c.to_string()),
            c if !c.is_control() => alts.push(c.to_string()),
            _ => {}
        }
        if !c.is_ascii_alphanumeric() && c != '\\' {
            let mut units = [0u16; 2];
            let lower: String = c
                .encode_utf16(&mut units)
                .iter()
                .map(|u| format!("\\u{u:04x}"))
                .collect();
            let upper: String = c
                .encode_utf16(&mut units)
                .iter()
                .map(|u| format!("\\u{u:04X}"))
                .collect();
            alts.push(lower);
            alts.push(upper);
        }
        alts.sort();
        alts.dedup();
        outs = outs
            .iter()
            .flat_map(|o| alts.iter().map(move |a| format!("{o}{a}")))
            .collect();
    }
    outs
}

/// Every form of one character from raw through [`JSON_ESCAPE_LEVELS`] levels of JSON string
/// escaping, deduplicated.
fn char_forms(c: char) -> Vec<String> {
    let mut all = std::collections::BTreeSet::new();
    let mut level = vec![c.to_string()];
    all.insert(c.to_string());
    for _ in 0..JSON_ESCAPE_LEVELS {
        let mut next = std::collections::BTreeSet::new();
        for s in &level {
            next.extend(escape_once(s));
        }
        all.extend(next.iter().cloned());
        level = next.into_iter().collect();
    }
    all.into_iter().collect()
}

/// The ways a literal secret can appear in a report or a stream: as it is and JSON-escaped up
/// to [`JSON_ESCAPE_LEVELS`] levels deep (each character matched in any of its forms, so a
/// string escaped by one encoder inside a string escaped by another is caught too), plus its
/// URL-encoded and base64 forms ([`crate::profiles::hygiene::patterns`]). A regular expression over bytes.
pub fn literal_pattern(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        let forms = char_forms(c);
        if forms.len() == 1 {
            out.push_str(&regex::escape(&forms[0]));
        } else {
            let alts: Vec<String> = forms.iter().map(|f| regex::escape(f)).collect();
            out.push_str(&format!("(?:{})", alts.join("|")));
        }
    }
    let mut alts = vec![out];
    for (kind, enc) in crate::base::secret::patterns(value) {
        if kind != "raw" && enc != value {
            alts.push(regex::escape(&enc));
        }
    }
    if alts.len() == 1 {
        alts.swap_remove(0)
    } else {
        format!("(?:{})", alts.join("|"))
    }
}

impl Redactor {
    /// Builds the rules: literal values of secret-named environment variables in `env`, secret
    /// values on the command line `argv` (the value after a secret-named flag, after `-flag=`,
    /// or in a `NAME=value` argument with a secret-looking NAME), `Authorization` values,
    /// bearer tokens, passwords in URLs, and the user's patterns in order.
    ///
    /// Errors: a user pattern that is not a valid regular expression (`--redact N: …`).
    pub fn new(
        env: &[(String, String)],
        argv: &[String],
        user: &[String],
    ) -> Result<Redactor, String> {
        let mut rules = Vec::new();
        let mut literal = |id: String, covers: String, value: &str| {
            if value.len() >= MIN_SECRET_LEN {
                // A huge value gives a pattern over the regex size limit: then it is matched
                // as it is only.
                let re = regex::bytes::Regex::new(&literal_pattern(value))
                    .or_else(|_| regex::bytes::Regex::new(&regex::escape(value)));
                if let Ok(re) = re {
                    rules.push((id.clone(), covers, re, format!("[REDACTED:{id}]")));
                }
            }
        };
        let mut env_sorted: Vec<&(String, String)> =
            env.iter().filter(|(k, _)| secret_name(k)).collect();
        // Longest values first, so a value that contains another is replaced whole.
        env_sorted.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        for (k, v) in env_sorted {
            literal(
                format!("env:{k}"),
                format!("the value of the environment variable {k}"),
                v,
            );
            // A multi-line value (a PEM key) is printed line by line.
            if v.contains('\n') {
                for (n, part) in v.lines().enumerate() {
                    literal(
                        format!("env:{k}"),
                        format!("line {} of the environment variable {k}", n + 1),
                        part.trim_end_matches('\r'),
                    );
                }
            }
        }
        let mut secret_args = Vec::new();
        for (i, a) in argv.iter().enumerate() {
            let bare = a.trim_start_matches('-');
            if let Some((name, value)) = bare.split_once('=') {
                if secret_name(name) {
                    secret_args.push((i, a.len() - value.len()));
                    literal(
                        format!("arg:{i}"),
                        format!("the value of command-line argument {name}"),
                        value,
                    );
                }
            } else if a.starts_with('-') && secret_name(bare) {
                if let Some(v) = argv.get(i + 1) {
                    secret_args.push((i + 1, 0));
                    literal(
                        format!("arg:{}", i + 1),
                        format!("the value after command-line flag {a}"),
                        v,
                    );
                }
            }
        }
        // Byte-oriented (`-u`) so they also apply to lines that are not UTF-8. A value never
        // starts with a quote, a backslash, `{` or `[` (an escaped quote or a JSON object is
        // not a credential), and stops at a quote or a backslash, so the JSON stays valid.
        let fixed = [
            (
                "authorization",
                "values of Authorization fields and headers",
                r#"(?i-u)(authorization["']?[ \t]*[:=][ \t]*["']?)[^"'\\\r\n{\[ \t][^"'\\\r\n]*"#,
                "${1}[REDACTED:authorization]",
            ),
            (
                "bearer",
                "bearer tokens (`Bearer <token>`)",
                r"(?i-u)(bearer[ \t]+)[A-Za-z0-9\-._~+/]+=*",
                "${1}[REDACTED:bearer]",
            ),
            (
                "userinfo",
                "passwords in URLs (`scheme://user:password@host`)",
                r#"(?-u)(://[^/\s:@"'\\]+:)[^@\s/"'\\]+(@)"#,
                "${1}[REDACTED:userinfo]${2}",
            ),
        ];
        for (id, covers, pat, rep) in fixed {
            if let Ok(re) = regex::bytes::Regex::new(pat) {
                rules.push((id.to_string(), covers.to_string(), re, rep.to_string()));
            }
        }
        for (n, pat) in user.iter().enumerate() {
            // A pattern with no regex syntax is a literal value: redacted in all its forms.
            if !pat.is_empty() && regex::escape(pat) == *pat {
                if let Ok(re) = regex::bytes::Regex::new(&literal_pattern(pat)) {
                    rules.push((
                        format!("user-{}", n + 1),
                        format!("--redact value #{}", n + 1),
                        re,
                        format!("[REDACTED:user-{}]", n + 1),
                    ));
                    continue;
                }
            }
            let re = regex::bytes::Regex::new(pat)
                .map_err(|e| format!("--redact #{}: not a valid regular expression: {e}", n + 1))?;
            rules.push((
                format!("user-{}", n + 1),
                format!("--redact pattern #{}", n + 1),
                re,
                format!("[REDACTED:user-{}]", n + 1),
            ));
        }
        Ok(Redactor { rules, secret_args })
    }

    /// The rules for the header: `(id, what it covers)`, each id once.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (id, covers, _, _) in &self.rules {
            if !out.iter().any(|(i, _)| i == id) {
                out.push((id.clone(), covers.clone()));
            }
        }
        out
    }

    /// The command line for the header: secret argument values replaced whole (whatever their
    /// length), then every rule applied to each argument.
    pub fn command(&self, argv: &[String]) -> Vec<String> {
        argv.iter()
            .enumerate()
            .map(
                |(i, a)| match self.secret_args.iter().find(|(j, _)| *j == i) {
                    Some((_, at)) => format!("{}[REDACTED:arg:{i}]", &a[..*at]),
                    None => self.apply_str(a),
                },
            )
            .collect()
    }

    /// Applies every rule in order; returns the bytes unchanged (borrowed) when none matched.
    pub fn apply<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let mut cur: Cow<'a, [u8]> = Cow::Borrowed(bytes);
        for (_, _, re, rep) in &self.rules {
            if !re.is_match(&cur) {
                continue;
            }
            let next = re.replace_all(&cur, rep.as_bytes()).into_owned();
            cur = Cow::Owned(next);
        }
        cur
    }

    /// Applies the rules to a string (lossy for the result, which stays UTF-8 when the input was).
    pub fn apply_str(&self, s: &str) -> String {
        String::from_utf8_lossy(&self.apply(s.as_bytes())).into_owned()
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
