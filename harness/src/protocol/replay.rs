//! Replay of a transcript (docs/transcripts.md): against a live server or agent as a
//! regression test ([`drive`] then [`compare`]), or as a mock server ([`serve`]).
//!
//! Comparison is strict for request/response pairs (each recorded request's response against
//! the live response with the same id) and order-free for notifications, server-to-client
//! requests and non-JSON stdout lines (multisets). Before comparing, both sides go through the
//! same [`Normalizer`]: message ids, timestamps, the implementation versions (`version` inside
//! `serverInfo`, `clientInfo` and `agentInfo`, and inside the 2026-07-28 `_meta` members
//! `io.modelcontextprotocol/serverInfo` and `io.modelcontextprotocol/clientInfo`, so a snapshot
//! or a replay survives an upgrade of the server or of parity), ACP `sessionId`s, pids, temporary, home and working-directory paths, and the user's JSON
//! pointers become named placeholders (`[ID]`, `[TIME]`, `[VERSION]`, `[SESSION]`, `[PID]`,
//! `[TMP]`, `[HOME]`, `[CWD]`, `[VOLATILE]`); object keys are sorted.
//!
//! Size (1913 lines): the normalizer, the comparison of recorded and live exchanges, the replay
//! driver and the `--serve` mock share the exchange model; about 400 lines are unit tests.

use crate::protocol::transcript::{Direction, Transcript};
use crate::transport::peer::{Peer, Recv};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Normalizes volatile values before comparing or matching (see the module documentation).
#[derive(Debug, Clone)]
pub struct Normalizer {
    /// JSON pointers into a message (`/result/structuredContent/value/since_ms`) whose values
    /// become `[VOLATILE]`.
    pub pointers: Vec<String>,
    /// Object member names whose values are volatile wherever they appear (`since_ms`),
    /// also inside text that holds serialized JSON; they become `[VOLATILE]`.
    pub keys: Vec<String>,
    prefixes: Vec<(String, &'static str)>,
}

impl Normalizer {
    /// A normalizer with the user's pointers, plus the machine's working directory, temporary
    /// directory and home directory as path prefixes.
    pub fn new(pointers: Vec<String>, keys: Vec<String>) -> Normalizer {
        let mut prefixes = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            let s = cwd.display().to_string();
            if s.len() > 1 {
                prefixes.push((s, "[CWD]"));
            }
        }
        let tmp = std::env::temp_dir().display().to_string();
        let tmp = tmp.trim_end_matches('/').to_string();
        if tmp.len() > 1 {
            prefixes.push((tmp, "[TMP]"));
        }
        if let Ok(home) = std::env::var("HOME") {
            let home = home.trim_end_matches('/').to_string();
            if home.len() > 1 {
                prefixes.push((home, "[HOME]"));
            }
        }
        Normalizer {
            pointers,
            keys,
            prefixes,
        }
    }

    /// The normalized copy of a whole message: its top-level `id` becomes `[ID]`, then
    /// [`Normalizer::value`] and the pointers apply.
    pub fn message(&self, v: &Value) -> Value {
        let mut out = self.value(v);
        if let Value::Object(o) = &mut out {
            if o.contains_key("id") {
                o.insert("id".into(), json!("[ID]"));
            }
        }
        for p in &self.pointers {
            if let Some(slot) = out.pointer_mut(p) {
                *slot = json!("[VOLATILE]");
            }
        }
        out
    }

    /// The normalized copy of any value (see the module documentation).
    pub fn value(&self, v: &Value) -> Value {
        match v {
            Value::Object(o) => {
                let mut out = Map::new();
                for (k, x) in o {
                    let nx = match (k.as_str(), x) {
                        (name, Value::Object(info)) if is_info(name) => {
                            let mut info = self.value(&Value::Object(info.clone()));
                            if let Some(ver) = info.get_mut("version") {
                                *ver = json!("[VERSION]");
                            }
                            info
                        }
                        _ if self.keys.iter().any(|n| n == k) => json!("[VOLATILE]"),
                        ("sessionId", Value::String(_)) => json!("[SESSION]"),
                        ("pid" | "processId", Value::Number(_)) => json!("[PID]"),
                        _ => self.value(x),
                    };
                    out.insert(k.clone(), nx);
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x)).collect()),
            Value::String(s) => {
                if looks_like_time(s) {
                    return json!("[TIME]");
                }
                // Text that holds serialized JSON (a tool's structured result repeated as a
                // text block) is normalized as JSON and kept as canonical text.
                if s.starts_with('{') || s.starts_with('[') {
                    if let Ok(inner @ (Value::Object(_) | Value::Array(_))) =
                        serde_json::from_str::<Value>(s)
                    {
                        return Value::String(canonical(&self.value(&inner)));
                    }
                }
                if s.contains('/') {
                    let mut t = s.clone();
                    for (p, name) in &self.prefixes {
                        if t.contains(p.as_str()) {
                            t = replace_path_prefix(&t, p, name);
                        }
                    }
                    return Value::String(t);
                }
                v.clone()
            }
            _ => v.clone(),
        }
    }
}

impl Normalizer {
    /// The comparison key of a message given as its bytes: `canonical(&self.message(&v))`
    /// for the `v` that `serde_json::from_slice` gives, or `None` when the bytes are not
    /// JSON. Without pointers it is written in one pass over the bytes ([`Render`]), with no
    /// parsed or normalized copy of the message built.
    pub fn message_key_of(&self, bytes: &[u8]) -> Option<String> {
        if !self.pointers.is_empty() {
            let v: Value = serde_json::from_slice(bytes).ok()?;
            return Some(canonical(&self.message(&v)));
        }
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let mut st = RenderState::with_capacity(2 * bytes.len());
        self.render(&mut de, Slot::Message, &mut st).ok()?;
        de.end().ok()?;
        Some(into_string(st.out))
    }

    /// Renders the one value `de` reads into `st.out` (see [`Render`]).
    fn render<'de, D: serde::Deserializer<'de>>(
        &self,
        de: D,
        slot: Slot,
        st: &mut RenderState<'de>,
    ) -> Result<Kind, D::Error> {
        serde::de::DeserializeSeed::deserialize(
            Render {
                norm: self,
                slot,
                st,
            },
            de,
        )
    }

    /// Writes a string as [`Normalizer::value`] normalizes it, as JSON.
    fn write_string(&self, s: &str, out: &mut Vec<u8>) {
        if looks_like_time(s) {
            return write_json_str("[TIME]", out);
        }
        if s.starts_with('{') || s.starts_with('[') {
            let mut de = serde_json::Deserializer::from_str(s);
            let mut st = RenderState::with_capacity(2 * s.len());
            let kind = self
                .render(&mut de, Slot::Other, &mut st)
                .and_then(|k| de.end().map(|()| k));
            if let Ok(Kind::Object | Kind::Array) = kind {
                return write_json_str(&into_string(st.out), out);
            }
        }
        if s.contains('/') {
            let mut t = s.to_string();
            for (p, name) in &self.prefixes {
                if t.contains(p.as_str()) {
                    t = replace_path_prefix(&t, p, name);
                }
            }
            return write_json_str(&t, out);
        }
        write_json_str(s, out)
    }
}

/// Whether a member named `name` holds an implementation's name and version: `serverInfo`,
/// `clientInfo` (MCP `initialize`, ACP `initialize`), `agentInfo` (ACP), and the 2026-07-28
/// `_meta` members `io.modelcontextprotocol/serverInfo` and `io.modelcontextprotocol/clientInfo`.
fn is_info(name: &str) -> bool {
    matches!(
        name,
        "serverInfo"
            | "agentInfo"
            | "clientInfo"
            | "io.modelcontextprotocol/serverInfo"
            | "io.modelcontextprotocol/clientInfo"
    )
}

/// What a value being rendered is, for the members that [`Normalizer::message`] replaces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The whole message: its `id` member becomes `[ID]`.
    Message,
    /// The value of an implementation-info member ([`is_info`]): when it is an object, its
    /// `version` member becomes `[VERSION]`.
    Info,
    /// Anything else.
    Other,
}

/// The JSON type of a rendered value (before normalization), for the rules that depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    String,
    Number,
    Other,
}

/// The buffers of one [`Render`] pass: the output, a stack of the members of the objects
/// being read (name, start and end of the rendered value in `out`), and room to reorder an
/// object's members.
struct RenderState<'de> {
    out: Vec<u8>,
    members: Vec<(Cow<'de, str>, usize, usize)>,
    reorder: Vec<u8>,
}

impl RenderState<'_> {
    fn with_capacity(n: usize) -> Self {
        RenderState {
            out: Vec::with_capacity(n),
            members: Vec::with_capacity(16),
            reorder: Vec::with_capacity(n),
        }
    }
}

/// Renders the JSON it reads as `canonical` of its normalized form ([`Normalizer::value`],
/// plus the [`Slot`] rules of [`Normalizer::message`]) into the state's `out`. It reads with
/// `deserialize_any`, the path a `Value` is parsed by, so it accepts exactly the JSON a
/// `Value` accepts; an object's later member replaces an earlier one of the same name, as in
/// a parsed object.
struct Render<'s, 'n, 'de> {
    norm: &'n Normalizer,
    slot: Slot,
    st: &'s mut RenderState<'de>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Render<'_, '_, 'de> {
    type Value = Kind;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        d.deserialize_any(self)
    }
}

/// An object member's name, borrowed from the input when it has no escapes.
struct Name;

impl<'de> serde::de::DeserializeSeed<'de> for Name {
    type Value = Cow<'de, str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Name {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_string()))
    }
}

impl<'de> serde::de::Visitor<'de> for Render<'_, '_, 'de> {
    type Value = Kind;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Kind, E> {
        write_json(&Value::Bool(b), &mut self.st.out);
        Ok(Kind::Other)
    }

    fn visit_i64<E>(self, n: i64) -> Result<Kind, E> {
        write_json(&Value::from(n), &mut self.st.out);
        Ok(Kind::Number)
    }

    fn visit_u64<E>(self, n: u64) -> Result<Kind, E> {
        write_json(&Value::from(n), &mut self.st.out);
        Ok(Kind::Number)
    }

    fn visit_f64<E>(self, n: f64) -> Result<Kind, E> {
        // As a parsed `Value` holds it (a number, or null when not finite).
        let v = Value::from(n);
        write_json(&v, &mut self.st.out);
        Ok(if v.is_number() {
            Kind::Number
        } else {
            Kind::Other
        })
    }

    fn visit_unit<E>(self) -> Result<Kind, E> {
        write_json(&Value::Null, &mut self.st.out);
        Ok(Kind::Other)
    }

    fn visit_str<E>(self, s: &str) -> Result<Kind, E> {
        self.norm.write_string(s, &mut self.st.out);
        Ok(Kind::String)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        let Render { norm, st, .. } = self;
        st.out.push(b'[');
        let mut first = true;
        loop {
            let mark = st.out.len();
            if !first {
                st.out.push(b',');
            }
            let element = Render {
                norm,
                slot: Slot::Other,
                st: &mut *st,
            };
            if seq.next_element_seed(element)?.is_none() {
                st.out.truncate(mark);
                break;
            }
            first = false;
        }
        st.out.push(b']');
        Ok(Kind::Array)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let Render { norm, slot, st } = self;
        let start = st.out.len();
        let base = st.members.len();
        while let Some(name) = map.next_key_seed(Name)? {
            let info = is_info(&name);
            let at = st.out.len();
            let kind = map.next_value_seed(Render {
                norm,
                slot: if info { Slot::Info } else { Slot::Other },
                st: &mut *st,
            })?;
            let placeholder = match (slot, &*name, kind) {
                (Slot::Message, "id", _) => Some("[ID]"),
                (Slot::Info, "version", _) => Some("[VERSION]"),
                _ if info && kind == Kind::Object => None,
                _ if norm.keys.iter().any(|n| *n == *name) => Some("[VOLATILE]"),
                (_, "sessionId", Kind::String) => Some("[SESSION]"),
                (_, "pid" | "processId", Kind::Number) => Some("[PID]"),
                _ => None,
            };
            if let Some(p) = placeholder {
                st.out.truncate(at);
                write_json_str(p, &mut st.out);
            }
            let end = st.out.len();
            st.members.push((name, at, end));
        }
        // Sorted by name; of equal names (stable sort: in input order) the last one counts.
        let RenderState {
            out,
            members,
            reorder,
        } = st;
        let these = &mut members[base..];
        these.sort_by(|a, b| a.0.cmp(&b.0));
        reorder.clear();
        reorder.push(b'{');
        for (i, (name, a, b)) in these.iter().enumerate() {
            if these.get(i + 1).is_some_and(|next| next.0 == *name) {
                continue;
            }
            if reorder.len() > 1 {
                reorder.push(b',');
            }
            write_json_str(name, reorder);
            reorder.push(b':');
            reorder.extend_from_slice(&out[*a..*b]);
        }
        reorder.push(b'}');
        members.truncate(base);
        out.truncate(start);
        out.extend_from_slice(reorder);
        Ok(Kind::Object)
    }
}

/// Appends a string as JSON (quoted and escaped as `Value::to_string` does).
fn write_json_str(s: &str, out: &mut Vec<u8>) {
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Appends a value as compact JSON (as `Value::to_string` does).
fn write_json(v: &Value, out: &mut Vec<u8>) {
    let _ = serde_json::to_writer(&mut *out, v);
}

/// The text written by the JSON writers (always UTF-8).
fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The member names at the end of outcome pointers (`/value/since_ms` → `since_ms`), the way a
/// target's volatile outcome pointers become volatile keys for whole messages.
pub fn volatile_names(pointers: &[String]) -> Vec<String> {
    pointers
        .iter()
        .filter_map(|p| p.rsplit('/').next())
        .filter(|k| !k.is_empty())
        .map(|k| k.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// Replaces `prefix` (a directory) where it starts a path: followed by `/`, the end, or a
/// character that cannot continue a file name component here (quote, space).
fn replace_path_prefix(s: &str, prefix: &str, name: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        let boundary = after.is_empty()
            || after.starts_with('/')
            || after.starts_with(|c: char| c.is_whitespace() || c == '"' || c == '\'');
        out.push_str(&rest[..i]);
        if boundary {
            out.push_str(name);
        } else {
            out.push_str(prefix);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// An RFC 3339 date-time (`2026-11-30T14:23:28Z`, fractional seconds and offsets allowed).
fn looks_like_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 19 || b.len() > 40 {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b[10] == b'T' || b[10] == b't' || b[10] == b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19..]
            .iter()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'Z' | b'z' | b'+' | b'-' | b':'))
}

/// Compact JSON with object keys sorted (the comparison key).
pub fn canonical(v: &Value) -> String {
    let mut out = Vec::with_capacity(64);
    write_canonical(v, &mut out);
    into_string(out)
}

fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(o) => {
            let mut members: Vec<(&String, &Value)> = o.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, x)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_str(k, out);
                out.push(b':');
                write_canonical(x, out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(x, out);
            }
            out.push(b']');
        }
        other => write_json(other, out),
    }
}

/// A copy with object keys sorted, recursively (for pretty diffs).
pub fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let mut m = Map::new();
            for k in keys {
                if let Some(x) = o.get(k) {
                    m.insert(k.clone(), sorted(x));
                }
            }
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// A unified diff (`similar`) of two values as pretty JSON with sorted keys.
pub fn diff_values(recorded: &Value, live: &Value) -> String {
    let a = serde_json::to_string_pretty(&sorted(recorded)).unwrap_or_default() + "\n";
    let b = serde_json::to_string_pretty(&sorted(live)).unwrap_or_default() + "\n";
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header("recorded", "live")
        .to_string()
}

/// One message of a session: its direction, its bytes, and where it was recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// `c2s` or `s2c`.
    pub dir: Direction,
    /// The line's bytes (no `\n`).
    pub bytes: Vec<u8>,
    /// The transcript line it came from (0 for live messages).
    pub line: usize,
}

impl Exchange {
    /// The c2s and s2c messages of a transcript, in order.
    pub fn of_transcript(t: &Transcript) -> Vec<Exchange> {
        t.events
            .iter()
            // Blank lines are not compared (the live side's frame log has none either).
            .filter(|(_, e)| {
                matches!(e.dir, Direction::C2s | Direction::S2c) && !e.bytes.is_empty()
            })
            .map(|(line, e)| Exchange {
                dir: e.dir,
                bytes: e.bytes.clone(),
                line: *line,
            })
            .collect()
    }

    /// The stdin and stdout lines of a live peer's frame log, in order.
    pub fn of_wire(events: &[crate::transport::wire::WireEvent]) -> Vec<Exchange> {
        events
            .iter()
            .filter_map(|e| {
                let dir = match e.dir {
                    crate::transport::wire::Dir::C2s => Direction::C2s,
                    crate::transport::wire::Dir::S2c => Direction::S2c,
                    _ => return None,
                };
                let l = e.line()?;
                // A c2s frame may hold several lines (one write); split them.
                Some(
                    l.bytes
                        .split(|b| *b == b'\n')
                        .filter(|s| !s.is_empty())
                        .map(|s| Exchange {
                            dir,
                            bytes: s.to_vec(),
                            line: 0,
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .flatten()
            .collect()
    }
}

/// How many recorded client requests have no recorded response (the recording ended, or the
/// client went away, before they were answered). Their live responses are not compared.
pub fn unanswered_in_recording(recorded: &[Exchange]) -> usize {
    let mut asked = std::collections::HashSet::new();
    let mut answered = std::collections::HashSet::new();
    for m in recorded {
        let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&m.bytes) else {
            continue;
        };
        let (Some(id), method) = (o.get("id"), o.get("method")) else {
            continue;
        };
        match (m.dir, method.is_some()) {
            (Direction::C2s, true) => {
                asked.insert(id_key(id));
            }
            (Direction::S2c, false) => {
                answered.insert(id_key(id));
            }
            _ => {}
        }
    }
    asked.difference(&answered).count()
}

/// One difference between the recording and the live session.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// What differs, in one line (`response to tools/call (id 3)`, `missing notification
    /// notifications/progress`, …).
    pub what: String,
    /// The transcript line of the recorded message (0 when only the live side has it).
    pub line: usize,
    /// The unified diff (recorded → live), or the message's text when one side has none.
    pub diff: String,
}

/// One side of a comparison. Messages are kept as their bytes: each is parsed once to sort
/// it (and, for notifications, to compute its key), and parsed again only to report or to
/// compare responses whose bytes differ ([`reparse`]).
#[derive(Default)]
struct Side<'a> {
    /// c2s requests in order: (id key, method).
    requests: Vec<(IdKey, Method, usize)>,
    /// s2c responses by id key: (bytes, line); later duplicates go to `extra`.
    responses: HashMap<IdKey, (&'a [u8], usize)>,
    extra_responses: Vec<(&'a [u8], usize)>,
    /// s2c notifications and server requests: (canonical normalized text, method, bytes,
    /// line).
    notes: Vec<(String, Method, &'a [u8], usize)>,
    /// s2c lines that are not JSON-RPC objects.
    raw: Vec<(&'a [u8], usize)>,
}

fn id_key(v: &Value) -> String {
    canonical(v)
}

/// A method name, shared by the messages that have it.
type Method = std::sync::Arc<str>;

/// An id's comparison key: its canonical text ([`id_key`]), held without allocating for an
/// integer (whose text never equals that of a float, string or other value, so the keys are
/// equal exactly when the texts are).
#[derive(Clone, PartialEq, Eq, Hash)]
enum IdKey {
    Unsigned(u64),
    Negative(i64),
    Text(String),
}

impl IdKey {
    fn of(v: &Value) -> IdKey {
        match (v.as_u64(), v.as_i64()) {
            (Some(n), _) => IdKey::Unsigned(n),
            (None, Some(n)) => IdKey::Negative(n),
            (None, None) => IdKey::Text(canonical(v)),
        }
    }
}

impl std::fmt::Display for IdKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdKey::Unsigned(n) => write!(f, "{n}"),
            IdKey::Negative(n) => write!(f, "{n}"),
            IdKey::Text(s) => f.write_str(s),
        }
    }
}

/// A message [`side`] kept as a JSON object, parsed again (the same value as the first time).
fn reparse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

/// What [`side`] needs of a message to sort it: whether it is a JSON object, and then its
/// `method` and `id` members (the last of each, as a parsed object keeps them). Reading it
/// walks the whole text with `deserialize_any`, the path `serde_json::from_slice::<Value>`
/// takes, so it accepts exactly the texts that parse as a `Value` (strings, escapes, numbers,
/// nesting are checked the same way), without building the message.
enum Scan {
    Object {
        method: Option<Value>,
        id: Option<Value>,
    },
    Other,
}

impl<'de> serde::Deserialize<'de> for Scan {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Scan, D::Error> {
        d.deserialize_any(ScanVisitor)
    }
}

struct ScanVisitor;

impl<'de> serde::de::Visitor<'de> for ScanVisitor {
    type Value = Scan;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Scan, A::Error> {
        let (mut method, mut id) = (None, None);
        while let Some(key) = map.next_key::<Member>()? {
            match key {
                Member::Method => method = Some(map.next_value::<Value>()?),
                Member::Id => id = Some(map.next_value::<Value>()?),
                Member::Other => map.next_value::<Walk>().map(drop)?,
            }
        }
        Ok(Scan::Object { method, id })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Scan, A::Error> {
        WalkVisitor.visit_seq(seq).map(|()| Scan::Other)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Scan, E> {
        Ok(Scan::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Scan, E> {
        Ok(Scan::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Scan, E> {
        Ok(Scan::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Scan, E> {
        Ok(Scan::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Scan, E> {
        Ok(Scan::Other)
    }

    fn visit_unit<E>(self) -> Result<Scan, E> {
        Ok(Scan::Other)
    }
}

/// A member name of a message, as far as [`Scan`] cares.
enum Member {
    Method,
    Id,
    Other,
}

impl<'de> serde::Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Member, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Member;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E>(self, s: &str) -> Result<Member, E> {
                Ok(match s {
                    "method" => Member::Method,
                    "id" => Member::Id,
                    _ => Member::Other,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Any JSON value, walked with `deserialize_any` (checked as a `Value` is) and not kept.
struct Walk;

impl<'de> serde::Deserialize<'de> for Walk {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Walk, D::Error> {
        d.deserialize_any(WalkVisitor).map(|()| Walk)
    }
}

struct WalkVisitor;

impl<'de> serde::de::Visitor<'de> for WalkVisitor {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<Walk>()?.is_some() {
            map.next_value::<Walk>()?;
        }
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<Walk>()?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// How [`side`] sorts a message: a function of its direction and bytes alone.
#[derive(Clone)]
enum Class {
    /// A c2s request: its id key and method.
    Request(IdKey, Method),
    /// An s2c response: its id key.
    Response(IdKey),
    /// An s2c notification or server request: its key (canonical normalized text) and
    /// method.
    Note(String, Method),
    /// An s2c line that is not a JSON-RPC object.
    Raw,
    /// Anything else (a c2s notification or response, a c2s line that is not JSON).
    Ignored,
}

fn classify(
    m: &Exchange,
    norm: &Normalizer,
    methods: &mut std::collections::HashSet<Method>,
) -> Class {
    let Ok(Scan::Object { method, id }) = serde_json::from_slice::<Scan>(&m.bytes) else {
        return match m.dir {
            Direction::S2c => Class::Raw,
            _ => Class::Ignored,
        };
    };
    let method = match method {
        Some(Value::String(method)) => Some(match methods.get(method.as_str()) {
            Some(m) => m.clone(),
            None => {
                let m: Method = method.into();
                methods.insert(m.clone());
                m
            }
        }),
        _ => None,
    };
    let id = id.as_ref().map(IdKey::of);
    match (m.dir, method, id) {
        (Direction::C2s, Some(method), Some(key)) => Class::Request(key, method),
        (Direction::S2c, None, Some(key)) => Class::Response(key),
        (Direction::S2c, Some(method), _) => {
            Class::Note(norm.message_key_of(&m.bytes).unwrap_or_default(), method)
        }
        (Direction::S2c, None, None) => Class::Raw,
        _ => Class::Ignored,
    }
}

/// Both sides of a comparison. A live message with the direction and bytes of the recorded
/// message at the same position (most of them, when the target answers as recorded) takes
/// that message's class instead of being read again.
fn sides<'a>(
    recorded: &'a [Exchange],
    live: &'a [Exchange],
    norm: &Normalizer,
) -> (Side<'a>, Side<'a>) {
    let mut methods = std::collections::HashSet::new();
    let rec: Vec<Class> = recorded
        .iter()
        .map(|m| classify(m, norm, &mut methods))
        .collect();
    let liv: Vec<Class> = live
        .iter()
        .enumerate()
        .map(|(i, m)| match (recorded.get(i), rec.get(i)) {
            (Some(r), Some(class)) if r.dir == m.dir && r.bytes == m.bytes => class.clone(),
            _ => classify(m, norm, &mut methods),
        })
        .collect();
    (side(recorded, rec), side(live, liv))
}

fn side(msgs: &[Exchange], classes: Vec<Class>) -> Side<'_> {
    let mut s = Side {
        requests: Vec::with_capacity(msgs.len() / 2),
        responses: HashMap::with_capacity(msgs.len() / 2),
        ..Side::default()
    };
    for (m, class) in msgs.iter().zip(classes) {
        match class {
            Class::Request(key, method) => s.requests.push((key, method, m.line)),
            Class::Response(key) => match s.responses.entry(key) {
                std::collections::hash_map::Entry::Occupied(_) => {
                    s.extra_responses.push((&m.bytes, m.line))
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((&m.bytes, m.line));
                }
            },
            Class::Note(key, method) => s.notes.push((key, method, &m.bytes, m.line)),
            Class::Raw => s.raw.push((&m.bytes, m.line)),
            Class::Ignored => {}
        }
    }
    s
}

/// Response pairs: (id key, method, the recorded response and its line, the live response).
type Paired<'p, 'a> = (
    &'p IdKey,
    &'p Method,
    Option<(&'a [u8], usize)>,
    Option<&'a [u8]>,
);

/// Whether each pair's responses differ once normalized. The same bytes are the same message
/// (and so normalize the same); other pairs are compared by [`Normalizer::message_key_of`].
fn responses_differ(paired: &[Paired<'_, '_>], norm: &Normalizer) -> Vec<bool> {
    paired
        .iter()
        .map(|(_, _, r, l)| match (r, l) {
            (Some((rb, _)), Some(lb)) => {
                rb != lb && norm.message_key_of(rb) != norm.message_key_of(lb)
            }
            _ => false,
        })
        .collect()
}

/// Compares a recorded session with a live one (see the module documentation). Returns the
/// differences in recorded order (responses first, then notifications and other lines).
pub fn compare(recorded: &[Exchange], live: &[Exchange], norm: &Normalizer) -> Vec<Difference> {
    let (rec, mut liv) = sides(recorded, live, norm);
    // Each recorded request with its recorded and live responses, in order.
    let paired: Vec<_> = rec
        .requests
        .iter()
        .map(|(key, method, _)| {
            let l = liv.responses.remove(key).map(|(b, _)| b);
            (key, method, rec.responses.get(key).copied(), l)
        })
        .collect();
    let differs = responses_differ(&paired, norm);
    let mut out = Vec::new();
    for ((key, method, r, l), differs) in paired.iter().zip(differs) {
        match (r, l) {
            (Some((rbytes, rline)), Some(lbytes)) => {
                if differs {
                    let (rv, lv) = (reparse(rbytes), reparse(lbytes));
                    out.push(Difference {
                        what: format!("response to {method} (id {key})"),
                        line: *rline,
                        diff: diff_values(&norm.message(&rv), &norm.message(&lv)),
                    });
                }
            }
            (Some((rbytes, rline)), None) => out.push(Difference {
                what: format!("no response to {method} (id {key}) from the target"),
                line: *rline,
                diff: format!("recorded: {}", canonical(&reparse(rbytes))),
            }),
            // The recording ended before this request was answered.
            (None, _) => {}
        }
    }
    for (lbytes, _) in liv.responses.into_values().chain(liv.extra_responses) {
        out.push(Difference {
            what: "a response the recording does not have".into(),
            line: 0,
            diff: format!("live: {}", canonical(&reparse(lbytes))),
        });
    }
    // Notifications and server requests: multisets of canonical normalized text.
    let mut live_left: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (k, ..)) in liv.notes.iter().enumerate() {
        live_left.entry(k.as_str()).or_default().push(i);
    }
    let mut used = vec![false; liv.notes.len()];
    let mut missing = Vec::new();
    for (k, method, v, line) in &rec.notes {
        match live_left.get_mut(k.as_str()).and_then(|v| v.pop()) {
            Some(i) => used[i] = true,
            None => missing.push((k, method, v, *line)),
        }
    }
    let mut unexpected: Vec<usize> = (0..liv.notes.len()).filter(|i| !used[*i]).collect();
    for (k, method, v, line) in missing {
        // Pair with an unexpected live message of the same method, for a readable diff.
        let pair = unexpected.iter().position(|i| liv.notes[*i].1 == *method);
        match pair {
            Some(p) => {
                let i = unexpected.remove(p);
                out.push(Difference {
                    what: format!("{method} differs"),
                    line,
                    diff: diff_values(
                        &norm.message(&reparse(v)),
                        &norm.message(&reparse(liv.notes[i].2)),
                    ),
                });
            }
            None => out.push(Difference {
                what: format!("missing {method} (the target did not send it)"),
                line,
                // The key is the canonical text of the normalized message.
                diff: format!("recorded: {k}"),
            }),
        }
    }
    for i in unexpected {
        out.push(Difference {
            what: format!("unexpected {} (not in the recording)", liv.notes[i].1),
            line: 0,
            diff: format!("live: {}", liv.notes[i].0),
        });
    }
    let mut live_raw: HashMap<&[u8], usize> = HashMap::new();
    for (b, _) in &liv.raw {
        *live_raw.entry(*b).or_default() += 1;
    }
    for (b, line) in &rec.raw {
        match live_raw.get_mut(*b) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(Difference {
                what: "missing non-JSON stdout line".into(),
                line: *line,
                diff: format!("recorded: {}", String::from_utf8_lossy(b)),
            }),
        }
    }
    for (b, n) in live_raw {
        for _ in 0..n {
            out.push(Difference {
                what: "unexpected non-JSON stdout line".into(),
                line: 0,
                diff: format!("live: {}", String::from_utf8_lossy(b)),
            });
        }
    }
    out
}

/// What [`drive`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Driven {
    /// Client messages sent.
    pub sent: usize,
    /// Requests whose response the driver waited for and got.
    pub answered: usize,
    /// Things worth telling that are not differences (a request the recording never saw
    /// answered, a server request that never came, the target closing stdout early).
    pub notes: Vec<String>,
}

/// Sends a transcript's client messages to a live peer in order. Before each one it waits for
/// the live responses to the requests whose responses the recorded client had received by then,
/// so a pipelined recording stays pipelined and a request answered only after a server request
/// does not deadlock. A recorded client response to a server request is sent with the id of the
/// matching live server request (matched by method, in order). When the messages are done, it
/// waits until the live side has sent as many notifications and server requests as the
/// recording. Each wait and each write is bounded by `timeout`; once one wait has run out, all
/// later waits share a single further `timeout`, so a silent target costs at most about twice
/// `timeout` in all. A client line over the line cap (only its prefix was recorded) is not sent.
pub async fn drive(t: &Transcript, peer: &mut Peer, timeout: Duration) -> Driven {
    let mut d = Driven::default();
    // Recorded server requests by id key → (method, ordinal among that method's requests).
    let mut rec_server_req: HashMap<String, (String, usize)> = HashMap::new();
    let mut per_method: HashMap<String, usize> = HashMap::new();
    let mut rec_notes = 0usize;
    for (_, e) in &t.events {
        if e.dir != Direction::S2c {
            continue;
        }
        let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&e.bytes) else {
            continue;
        };
        match (o.get("method").and_then(Value::as_str), o.get("id")) {
            (Some(m), Some(id)) => {
                let n = per_method.entry(m.to_string()).or_default();
                rec_server_req
                    .entry(id_key(id))
                    .or_insert_with(|| (m.to_string(), *n));
                *n += 1;
                rec_notes += 1;
            }
            (Some(_), None) => rec_notes += 1,
            _ => {}
        }
    }
    let mut live = LiveState::new(timeout);
    // Responses the recorded client had seen before its next message: awaited before sending it.
    let mut seen_before_next: Vec<String> = Vec::new();
    for (line, e) in &t.events {
        match e.dir {
            Direction::S2c => {
                if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&e.bytes) {
                    if let (None, Some(id)) = (o.get("method"), o.get("id")) {
                        seen_before_next.push(id_key(id));
                    }
                }
                continue;
            }
            Direction::C2s => {}
            _ => continue,
        }
        live.await_responses(peer, &mut seen_before_next, &mut d)
            .await;
        if !e.complete() {
            d.notes.push(format!(
                "transcript line {line} holds only a prefix of a client line over the cap; not sent"
            ));
            continue;
        }
        let mut bytes = e.bytes.clone();
        if let Ok(Value::Object(mut o)) = serde_json::from_slice::<Value>(&e.bytes) {
            let is_response = o.get("method").is_none();
            let rec = o
                .get("id")
                .filter(|_| is_response)
                .and_then(|id| rec_server_req.get(&id_key(id)));
            if let Some((m, ordinal)) = rec {
                // A response to a server request: it goes out with the live request's id.
                let deadline = live.deadline();
                while live.server_requests(m).len() <= *ordinal {
                    if !live.step(peer, deadline).await {
                        break;
                    }
                }
                match live.server_requests(m).get(*ordinal) {
                    Some(live_id) => {
                        o.insert("id".into(), live_id.clone());
                        bytes = serde_json::to_vec(&Value::Object(o)).unwrap_or(bytes);
                    }
                    None => d.notes.push(format!(
                        "the target never sent the {m} request answered at transcript line {line}; sent the recorded answer as is"
                    )),
                }
            }
        }
        if !e.partial {
            bytes.push(b'\n');
        }
        // Writes are queued (the peer's writer task writes them); wait for this one to be
        // written, so a target that stopped reading is told apart from a slow one.
        let (written, closed) = match peer.send_raw(&bytes).await {
            Ok(()) => {
                let written = peer.flushed(timeout).await;
                (written, peer.write_failed())
            }
            Err(_) => (false, true),
        };
        match (written, closed) {
            (true, _) => {}
            (false, true) => {
                d.notes
                    .push("the target closed its stdin; stopped sending".into());
                break;
            }
            (false, false) => {
                d.notes.push(format!(
                    "the target stopped reading its stdin (a write blocked for {} ms); stopped sending",
                    timeout.as_millis()
                ));
                break;
            }
        }
        d.sent += 1;
    }
    live.await_responses(peer, &mut seen_before_next, &mut d)
        .await;
    // Trailing notifications.
    let deadline = live.deadline();
    while live.notes < rec_notes {
        if !live.step(peer, deadline).await {
            break;
        }
    }
    if live.eof {
        d.notes
            .push("the target closed stdout before the replay ended".into());
    }
    d
}

/// What the driver has seen of the live side, and its deadlines.
struct LiveState {
    answered: std::collections::HashSet<String>,
    /// Live server-to-client request ids, by method, in arrival order.
    server_requests: HashMap<String, Vec<Value>>,
    notes: usize,
    eof: bool,
    timeout: Duration,
    /// Set when a wait first ran out: every later wait ends by then.
    spent: Option<Instant>,
}

impl LiveState {
    fn new(timeout: Duration) -> LiveState {
        LiveState {
            answered: Default::default(),
            server_requests: HashMap::new(),
            notes: 0,
            eof: false,
            timeout,
            spent: None,
        }
    }

    /// The deadline of the next wait: `timeout` from now, or the shared one once a wait ran out.
    fn deadline(&self) -> Instant {
        let own = Instant::now() + self.timeout;
        match self.spent {
            Some(shared) => own.min(shared),
            None => own,
        }
    }

    fn server_requests(&self, method: &str) -> &[Value] {
        self.server_requests
            .get(method)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Waits for the live responses to the listed request ids; counts those that came in
    /// `d.answered`, and empties the list.
    async fn await_responses(&mut self, peer: &mut Peer, keys: &mut Vec<String>, d: &mut Driven) {
        for key in keys.drain(..) {
            let deadline = self.deadline();
            while !self.answered.contains(&key) && !self.eof {
                if !self.step(peer, deadline).await {
                    break;
                }
            }
            if self.answered.contains(&key) {
                d.answered += 1;
            }
        }
    }

    /// Receives one line; false on timeout or EOF. A timeout starts the shared deadline.
    async fn step(&mut self, peer: &mut Peer, deadline: Instant) -> bool {
        match peer.recv(deadline).await {
            Recv::Line(l) => {
                if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&l.bytes) {
                    match (o.get("method").and_then(Value::as_str), o.get("id")) {
                        (Some(m), Some(id)) => {
                            self.server_requests
                                .entry(m.to_string())
                                .or_default()
                                .push(id.clone());
                            self.notes += 1;
                        }
                        (Some(_), None) => self.notes += 1,
                        (None, Some(id)) => {
                            self.answered.insert(id_key(id));
                        }
                        _ => {}
                    }
                }
                true
            }
            Recv::Eof => {
                self.eof = true;
                false
            }
            Recv::Timeout => {
                if self.spent.is_none() {
                    self.spent = Some(Instant::now() + self.timeout);
                }
                false
            }
        }
    }
}

/// Renders differences for the console: one block per difference.
pub fn render(source: &str, diffs: &[Difference]) -> String {
    let mut s = String::new();
    for d in diffs {
        if d.line > 0 {
            let _ = writeln!(s, "DIFF  {} ({source}:{})", d.what, d.line);
        } else {
            let _ = writeln!(s, "DIFF  {}", d.what);
        }
        for l in d.diff.lines() {
            let _ = writeln!(s, "      {l}");
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// --serve: the recording as a mock server
// ---------------------------------------------------------------------------------------------

struct Canned {
    /// s2c messages recorded between the request and its response (notifications, progress).
    before: Vec<Value>,
    response: Value,
}

/// The recorded answers, keyed by method and normalized params.
pub struct Mock {
    answers: HashMap<String, (Vec<Canned>, usize)>,
    norm: Normalizer,
}

impl Mock {
    /// Indexes a transcript's requests and their responses.
    pub fn new(t: &Transcript, norm: Normalizer) -> Mock {
        let msgs: Vec<(Direction, Option<Value>)> = t
            .events
            .iter()
            .filter(|(_, e)| matches!(e.dir, Direction::C2s | Direction::S2c))
            .map(|(_, e)| (e.dir, serde_json::from_slice(&e.bytes).ok()))
            .collect();
        let mut answers: HashMap<String, (Vec<Canned>, usize)> = HashMap::new();
        for (i, (dir, v)) in msgs.iter().enumerate() {
            let (Direction::C2s, Some(v)) = (dir, v) else {
                continue;
            };
            let (Some(method), Some(id)) = (v.get("method").and_then(Value::as_str), v.get("id"))
            else {
                continue;
            };
            let mut before = Vec::new();
            let mut response = None;
            for (d2, v2) in &msgs[i + 1..] {
                let (Direction::S2c, Some(v2)) = (d2, v2) else {
                    continue;
                };
                if v2.get("method").is_none() && v2.get("id") == Some(id) {
                    response = Some(v2.clone());
                    break;
                }
                if v2.get("method").is_some() && v2.get("id").is_none() {
                    before.push(v2.clone());
                }
            }
            let Some(response) = response else { continue };
            let key = Mock::key_of(&norm, method, v.get("params"));
            answers
                .entry(key)
                .or_insert_with(|| (Vec::new(), 0))
                .0
                .push(Canned { before, response });
        }
        Mock { answers, norm }
    }

    /// The match key: method plus normalized params without `_meta`; for `initialize`, only
    /// the protocol version counts (the client's identity and capabilities do not change the
    /// recorded answer).
    fn key_of(norm: &Normalizer, method: &str, params: Option<&Value>) -> String {
        let p = match params {
            Some(Value::Object(o)) => {
                let mut o = o.clone();
                o.remove("_meta");
                if method == "initialize" {
                    o.retain(|k, _| k == "protocolVersion");
                }
                norm.value(&Value::Object(o))
            }
            Some(other) => norm.value(other),
            None => json!({}),
        };
        format!("{method}\u{0}{}", canonical(&p))
    }

    /// The lines to write for one incoming line: recorded notifications and the recorded
    /// response with the live id; a `-32601` error when nothing matches (and a stderr note);
    /// `-32700` for a line that is not JSON; nothing for notifications and responses.
    pub fn answer(&mut self, line: &[u8]) -> (Vec<Value>, Option<String>) {
        let v: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                return (
                    vec![json!({"jsonrpc": "2.0", "id": null,
                        "error": {"code": -32700, "message": format!("Parse error: {e}")}})],
                    Some(format!(
                        "parity replay --serve: a line that is not JSON: {e}"
                    )),
                )
            }
        };
        let (Some(method), Some(id)) = (v.get("method").and_then(Value::as_str), v.get("id"))
        else {
            return (Vec::new(), None);
        };
        let key = Mock::key_of(&self.norm, method, v.get("params"));
        match self.answers.get_mut(&key) {
            Some((list, next)) if !list.is_empty() => {
                let i = (*next).min(list.len() - 1);
                *next += 1;
                let c = &list[i];
                let mut out = c.before.clone();
                let mut r = c.response.clone();
                if let Value::Object(o) = &mut r {
                    o.insert("id".into(), id.clone());
                }
                out.push(r);
                (out, None)
            }
            _ => {
                let params = v.get("params").map(canonical).unwrap_or_default();
                (
                    vec![json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                        "message": format!("parity replay --serve: the recording has no answer to {method} with these params")}})],
                    Some(format!(
                        "parity replay --serve: no recorded answer for {method} {params}"
                    )),
                )
            }
        }
    }
}

/// Serves a transcript on stdin/stdout until stdin ends (exit 0). See [`Mock::answer`].
pub async fn serve(t: &Transcript, norm: Normalizer) -> i32 {
    use tokio::io::AsyncWriteExt;
    let mut mock = Mock::new(t, norm);
    let mut reader = crate::transport::wire::LineReader::new(
        tokio::io::BufReader::new(tokio::io::stdin()),
        crate::transport::wire::DEFAULT_LINE_CAP,
    );
    let mut out = tokio::io::stdout();
    loop {
        let line = match reader.next_line().await {
            Ok(Some(l)) => l,
            Ok(None) => return 0,
            Err(e) => {
                eprintln!("parity replay --serve: failed to read stdin: {e}");
                return 0;
            }
        };
        if line.bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let (msgs, note) = if line.over_cap {
            (
                vec![json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32600, "message": "Invalid Request: line over the byte cap"}})],
                Some(format!(
                    "parity replay --serve: a line of {} bytes (over the cap)",
                    line.len
                )),
            )
        } else {
            mock.answer(&line.bytes)
        };
        if let Some(n) = note {
            eprintln!("{n}");
        }
        for m in msgs {
            let mut b = serde_json::to_vec(&m).unwrap_or_default();
            b.push(b'\n');
            if out.write_all(&b).await.is_err() || out.flush().await.is_err() {
                return 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn ex(dir: Direction, s: &str) -> Exchange {
        Exchange {
            dir,
            bytes: s.as_bytes().to_vec(),
            line: 1,
        }
    }

    #[test]
    fn normalizes_volatile_values() {
        let n = Normalizer::new(vec!["/result/x".into()], vec!["k".into()]);
        let v = json!({"id": 7, "result": {"x": 5, "t": "2026-11-30T14:23:28.5Z",
            "serverInfo": {"name": "s", "version": "1.2.3"}, "sessionId": "abc", "pid": 42, "txt": "{\"k\":1, \"b\":2}",
            "p": format!("{}/abc/file.txt", std::env::temp_dir().display().to_string().trim_end_matches('/'))}});
        let c = canonical(&n.message(&v));
        assert_eq!(
            c,
            r#"{"id":"[ID]","result":{"p":"[TMP]/abc/file.txt","pid":"[PID]","serverInfo":{"name":"s","version":"[VERSION]"},"sessionId":"[SESSION]","t":"[TIME]","txt":"{\"b\":2,\"k\":\"[VOLATILE]\"}","x":"[VOLATILE]"}}"#
        );
        assert_eq!(
            replace_path_prefix("/tmpx /tmp", "/tmp", "[TMP]"),
            "/tmpx [TMP]"
        );
    }

    /// The canonical text as written before the direct writer (the reference it must match).
    fn canonical_by_value(v: &Value) -> String {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                let members: Vec<String> = keys
                    .iter()
                    .map(|k| {
                        format!(
                            "{}:{}",
                            Value::String((*k).clone()),
                            canonical_by_value(&o[k.as_str()])
                        )
                    })
                    .collect();
                format!("{{{}}}", members.join(","))
            }
            Value::Array(a) => {
                let items: Vec<String> = a.iter().map(canonical_by_value).collect();
                format!("[{}]", items.join(","))
            }
            other => other.to_string(),
        }
    }

    #[test]
    fn implementation_versions_in_meta_become_placeholders() {
        // 2026-07-28 carries the implementations in `_meta`: a request's clientInfo (parity's
        // own version) and a result's serverInfo; both must survive an upgrade, while the
        // protocol version (not an implementation's) stays.
        let n = Normalizer::new(Vec::new(), Vec::new());
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "parity", "version": "0.1.0"}}}});
        let res = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "_meta": {
            "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "9.9.9"}}}});
        let want_req = r#"{"id":"[ID]","jsonrpc":"2.0","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"parity","version":"[VERSION]"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let want_res = r#"{"id":"[ID]","jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"[VERSION]"}},"tools":[]}}"#;
        for (v, want) in [(&req, want_req), (&res, want_res)] {
            assert_eq!(canonical(&n.message(v)), want);
            // The streaming path (message keys of raw lines) agrees with the value path.
            assert_eq!(
                n.message_key_of(v.to_string().as_bytes()).as_deref(),
                Some(want)
            );
        }
    }

    #[test]
    fn message_key_is_the_canonical_normalized_message() {
        let tmp = std::env::temp_dir().display().to_string();
        let tmp = tmp.trim_end_matches('/').to_string();
        let values = vec![
            json!({"id": 7, "jsonrpc": "2.0", "result": {"b": 1, "a": [1, "x/y",
                {"z": null, "sessionId": "s", "pid": 3, "id": 4}],
                "serverInfo": {"version": "1", "name": "n", "serverInfo": {"version": 2}},
                "agentInfo": "not an object", "version": "top-level version stays",
                "t": "2026-11-30T14:23:28Z", "k": {"deep": 1},
                "txt": "{\"k\":1,\"id\":5,\"b\":[\"2026-11-30T14:23:28Z\"]}",
                "arr": "[1, {\"serverInfo\":{\"version\":\"x\"}}]", "notjson": "{oops",
                "p": format!("{tmp}/a \"{tmp}\" {tmp}x"),
                "esc": "quote \" back \\ nl \n uni \u{1F600} ctl \u{1}",
                "n": -1.5e300, "big": u64::MAX, "neg": -3, "processId": "str", "t2": true}}),
            json!([{"id": 1}, "x", {"serverInfo": {"version": 1}}]),
            json!("{\"id\":3}"),
            json!({"method": "m", "params": {"id": 9, "k": 2, "since_ms": 5}}),
            json!({"clientInfo": {"name": "c"}, "pid": 1, "processId": 2.5, "id": null}),
            json!({}),
            json!(null),
            json!(3),
        ];
        let key_sets = [
            Vec::new(),
            vec!["k".to_string(), "serverInfo".to_string(), "id".to_string()],
            vec!["version".to_string(), "since_ms".to_string()],
        ];
        // Texts a `Value` reads differently from how it writes them: repeated members (the
        // last counts), escapes, exponents, whitespace; and texts that are not JSON.
        let texts = [
            r#"{"id":1,"id":2,"result":{"b":1,"b":{"serverInfo":{"version":1,"version":2}}}}"#,
            r#" {"id" : "x", "params": {"k\u0041": "\u00e9\ud83d\ude00", "n": 1E2, "m": -0}} "#,
            r#"{"method":"m","params":{"t":"2026-11-30T14:23:28+01:00","x":[ ]}}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":1} x"#,
            "[1,2]",
            "\"{\\\"id\\\":1}\"",
            "",
        ];
        for keys in key_sets {
            for pointers in [Vec::new(), vec!["/result/b".to_string()]] {
                let n = Normalizer::new(pointers, keys.clone());
                let by_value = |bytes: &[u8]| {
                    serde_json::from_slice::<Value>(bytes)
                        .ok()
                        .map(|v| canonical_by_value(&n.message(&v)))
                };
                for v in &values {
                    let reference = canonical_by_value(&n.message(v));
                    assert_eq!(canonical(&n.message(v)), reference, "{v}");
                    let text = v.to_string();
                    assert_eq!(by_value(text.as_bytes()), Some(reference), "{v}");
                    assert_eq!(
                        n.message_key_of(text.as_bytes()),
                        by_value(text.as_bytes()),
                        "{v} {keys:?}"
                    );
                }
                for t in texts {
                    assert_eq!(
                        n.message_key_of(t.as_bytes()),
                        by_value(t.as_bytes()),
                        "{t}"
                    );
                }
            }
        }
    }

    /// How the reading before [`Scan`] sorted a message: by a parsed `Value`.
    fn class_by_value(dir: Direction, bytes: &[u8]) -> String {
        let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(bytes) else {
            return (if dir == Direction::S2c {
                "raw"
            } else {
                "ignored"
            })
            .into();
        };
        let method = o.get("method").and_then(Value::as_str);
        match (dir, method, o.get("id")) {
            (Direction::C2s, Some(m), Some(id)) => format!("request {} {m}", canonical(id)),
            (Direction::S2c, None, Some(id)) => format!("response {}", canonical(id)),
            (Direction::S2c, Some(m), _) => format!("note {m}"),
            (Direction::S2c, None, None) => "raw".into(),
            _ => "ignored".into(),
        }
    }

    #[test]
    fn scan_sorts_messages_as_a_parsed_value_does() {
        let deep = |n: usize| {
            format!(
                "{{\"method\":\"m\",\"p\":{}{}}}",
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        let texts: Vec<Vec<u8>> = [
            r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#,
            r#"{"id":1,"id":"x","method":3,"method":"m"}"#,
            r#"{"method":"m","method":3,"id":1}"#,
            r#"{"id":null,"result":{}}"#,
            r#"{"id":[1,{"b":2,"a":1}],"result":{}}"#,
            r#"{"id":1.0,"result":[]}"#,
            r#"{"id":-0,"result":[]}"#,
            r#"{"id":-7,"result":[]}"#,
            r#"{"id":18446744073709551615,"result":1}"#,
            r#"{"id":-9223372036854775808,"result":1}"#,
            r#"{"id":1e2,"result":1}"#,
            r#"{"method":"n","params":{"x":"\ud800"}}"#,
            r#"{"method":"n","params":{"x":"\ud83d\ude00"}}"#,
            r#"{"method":"n","params":1e400}"#,
            r#"{"method":"n","params":1e-400}"#,
            r#"{"meth\u006fd":"n"}"#,
            r#"{"method":"n","params":"\u0001"}"#,
            r#"{"a":tru}"#,
            r#"{"a":1} x"#,
            r#"{"a":1}  "#,
            "[1,2]",
            "\"str\"",
            "42",
            "null",
            "",
            "banner text",
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .chain([
            b"{\"method\":\"n\",\"p\":\"\x01\"}".to_vec(),
            b"{\"method\":\"n\",\"p\":\"\xff\"}".to_vec(),
            deep(126).into_bytes(),
            deep(127).into_bytes(),
            deep(200).into_bytes(),
        ])
        .collect();
        let norm = Normalizer::new(Vec::new(), Vec::new());
        let mut methods = std::collections::HashSet::new();
        for t in &texts {
            for dir in [Direction::C2s, Direction::S2c] {
                let m = Exchange {
                    dir,
                    bytes: t.clone(),
                    line: 1,
                };
                let scanned = match classify(&m, &norm, &mut methods) {
                    Class::Request(id, method) => format!("request {id} {method}"),
                    Class::Response(id) => format!("response {id}"),
                    Class::Note(key, method) => {
                        let v: Value = serde_json::from_slice(t).unwrap();
                        assert_eq!(key, canonical(&norm.message(&v)));
                        format!("note {method}")
                    }
                    Class::Raw => "raw".into(),
                    Class::Ignored => "ignored".into(),
                };
                assert_eq!(
                    scanned,
                    class_by_value(dir, t),
                    "{}",
                    String::from_utf8_lossy(t)
                );
            }
        }
    }

    #[test]
    fn id_keys_are_equal_exactly_when_canonical_texts_are() {
        let ids: Vec<Value> = [
            "0",
            "1",
            "-1",
            "1.0",
            "-0",
            "-0.0",
            "1e2",
            "100",
            "\"1\"",
            "null",
            "true",
            "[1]",
            "{\"a\":1}",
            "18446744073709551615",
            "-9223372036854775808",
        ]
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
        for a in &ids {
            assert_eq!(IdKey::of(a).to_string(), canonical(a));
            for b in &ids {
                assert_eq!(
                    IdKey::of(a) == IdKey::of(b),
                    canonical(a) == canonical(b),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn compare_pairs_responses_and_ignores_notification_order() {
        let n = Normalizer::new(Vec::new(), Vec::new());
        let rec = vec![
            ex(Direction::C2s, r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#),
            ex(Direction::S2c, r#"{"jsonrpc":"2.0","method":"n1"}"#),
            ex(Direction::S2c, r#"{"jsonrpc":"2.0","method":"n2"}"#),
            ex(
                Direction::S2c,
                r#"{"jsonrpc":"2.0","id":1,"result":{"v":1}}"#,
            ),
        ];
        let mut live = rec.clone();
        live.swap(1, 2);
        assert!(compare(&rec, &live, &n).is_empty());
        live[3] = ex(
            Direction::S2c,
            r#"{"result":{"v":2},"jsonrpc":"2.0","id":1}"#,
        );
        let d = compare(&rec, &live, &n);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].what.contains("response to a (id 1)"));
        assert!(
            d[0].diff.contains("-    \"v\": 1") && d[0].diff.contains("+    \"v\": 2"),
            "{}",
            d[0].diff
        );
        live.remove(1);
        live.push(ex(Direction::S2c, "banner"));
        let d = compare(&rec, &live, &n);
        assert_eq!(d.len(), 3, "{d:?}");
    }

    /// A server that asks the client for roots (with its own id) before answering a call, and
    /// answers only once the client's response carries that id.
    async fn roots_server(io: tokio::io::DuplexStream) {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let (r, mut w) = tokio::io::split(io);
        let mut lines = tokio::io::BufReader::new(r).lines();
        let mut pending_call = None;
        while let Ok(Some(l)) = lines.next_line().await {
            let v: Value = serde_json::from_str(&l).unwrap();
            if v["method"] == "tools/call" {
                pending_call = Some(v["id"].clone());
                w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"live-7\",\"method\":\"roots/list\"}\n")
                    .await
                    .unwrap();
            } else if v["id"] == "live-7" {
                let id = pending_call.take().unwrap();
                let out =
                    json!({"jsonrpc": "2.0", "id": id, "result": {"roots": v["result"]["roots"]}});
                w.write_all(format!("{out}\n").as_bytes()).await.unwrap();
            }
        }
    }

    #[tokio::test]
    async fn drive_answers_server_requests_with_the_live_id() {
        let ev = |seq: u64, dir: &str, raw: Value| json!({"seq": seq, "t_ms": 0, "dir": dir, "raw": raw.to_string()});
        let text = [
            json!({"format": crate::protocol::transcript::FORMAT, "parity": "0", "protocol": "mcp", "transport": "stdio"}),
            ev(1, "c2s", json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}})),
            ev(2, "s2c", json!({"jsonrpc":"2.0","id":"r-1","method":"roots/list"})),
            ev(3, "c2s", json!({"jsonrpc":"2.0","id":"r-1","result":{"roots":[{"uri":"file:///w"}]}})),
            ev(4, "s2c", json!({"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///w"}]}})),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
        let t = crate::protocol::transcript::parse("t.jsonl", &text).unwrap();
        let (near, far) = tokio::io::duplex(1 << 16);
        tokio::spawn(roots_server(far));
        let (r, w) = tokio::io::split(near);
        let mut peer = Peer::from_io(r, w, 1 << 20);
        let d = drive(&t, &mut peer, Duration::from_secs(5)).await;
        assert_eq!((d.sent, d.answered), (2, 1), "{d:?}");
        let live = Exchange::of_wire(&peer.events());
        assert!(live.iter().any(
            |m| m.dir == Direction::C2s && String::from_utf8_lossy(&m.bytes).contains("live-7")
        ));
        let diffs = compare(
            &Exchange::of_transcript(&t),
            &live,
            &Normalizer::new(Vec::new(), Vec::new()),
        );
        assert!(diffs.is_empty(), "{diffs:?}");
    }

    #[test]
    fn mock_answers_by_method_and_params() {
        let text = format!(
            "{}\n{}\n{}\n{}\n{}\n",
            json!({"format": crate::protocol::transcript::FORMAT, "parity": "0", "protocol": "mcp", "transport": "stdio"}),
            json!({"seq":1,"t_ms":0,"dir":"c2s","raw": r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1}}}"#}),
            json!({"seq":2,"t_ms":0,"dir":"s2c","raw": r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#}),
            json!({"seq":3,"t_ms":0,"dir":"s2c","raw": r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#}),
            json!({"seq":4,"t_ms":0,"dir":"exit","code":0}),
        );
        let t = crate::protocol::transcript::parse("t", &text).unwrap();
        let mut m = Mock::new(&t, Normalizer::new(Vec::new(), Vec::new()));
        let (out, note) =
            m.answer(br#"{"jsonrpc":"2.0","id":"z","method":"tools/call","params":{"name":"x"}}"#);
        assert!(note.is_none());
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[1],
            json!({"jsonrpc":"2.0","id":"z","result":{"ok":true}})
        );
        let (out, note) =
            m.answer(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"y"}}"#);
        assert_eq!(out[0]["error"]["code"], json!(-32601));
        assert!(note.unwrap().contains("no recorded answer"));
    }
}
