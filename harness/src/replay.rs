//! Replay of a transcript (docs/transcripts.md): against a live server or agent as a
//! regression test ([`drive`] then [`compare`]), or as a mock server ([`serve`]).
//!
//! Comparison is strict for request/response pairs (each recorded request's response against
//! the live response with the same id) and order-free for notifications, server-to-client
//! requests and non-JSON stdout lines (multisets). Before comparing, both sides go through the
//! same [`Normalizer`]: message ids, timestamps, `serverInfo.version`/`agentInfo.version`, ACP
//! `sessionId`s, pids, temporary, home and working-directory paths, and the user's JSON
//! pointers become named placeholders (`[ID]`, `[TIME]`, `[VERSION]`, `[SESSION]`, `[PID]`,
//! `[TMP]`, `[HOME]`, `[CWD]`, `[VOLATILE]`); object keys are sorted.

use crate::peer::{Peer, Recv};
use crate::transcript::{Direction, Transcript};
use serde_json::{json, Map, Value};
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
                        ("serverInfo" | "agentInfo" | "clientInfo", Value::Object(info)) => {
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
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                if let Some(x) = o.get(*k) {
                    write_canonical(x, out);
                }
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
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
            .filter(|(_, e)| matches!(e.dir, Direction::C2s | Direction::S2c))
            .map(|(line, e)| Exchange {
                dir: e.dir,
                bytes: e.bytes.clone(),
                line: *line,
            })
            .collect()
    }

    /// The stdin and stdout lines of a live peer's frame log, in order.
    pub fn of_wire(events: &[crate::wire::WireEvent]) -> Vec<Exchange> {
        events
            .iter()
            .filter_map(|e| {
                let dir = match e.dir {
                    crate::wire::Dir::C2s => Direction::C2s,
                    crate::wire::Dir::S2c => Direction::S2c,
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

#[derive(Default)]
struct Side {
    /// c2s requests in order: (id key, method).
    requests: Vec<(String, String, usize)>,
    /// s2c responses by id key: (value, line); later duplicates go to `extra`.
    responses: HashMap<String, (Value, usize)>,
    extra_responses: Vec<(Value, usize)>,
    /// s2c notifications and server requests: canonical normalized text → (value, line) list.
    notes: Vec<(String, String, Value, usize)>,
    /// s2c lines that are not JSON-RPC objects.
    raw: Vec<(Vec<u8>, usize)>,
}

fn id_key(v: &Value) -> String {
    canonical(v)
}

fn side(msgs: &[Exchange], norm: &Normalizer) -> Side {
    let mut s = Side::default();
    for m in msgs {
        let v: Option<Value> = serde_json::from_slice(&m.bytes).ok();
        let Some(Value::Object(o)) = v else {
            if m.dir == Direction::S2c {
                s.raw.push((m.bytes.clone(), m.line));
            }
            continue;
        };
        let method = o.get("method").and_then(Value::as_str).map(str::to_string);
        let id = o.get("id").cloned();
        match (m.dir, method, id) {
            (Direction::C2s, Some(method), Some(id)) => {
                s.requests.push((id_key(&id), method, m.line))
            }
            (Direction::S2c, None, Some(id)) => {
                let key = id_key(&id);
                let v = Value::Object(o);
                match s.responses.entry(key) {
                    std::collections::hash_map::Entry::Occupied(_) => {
                        s.extra_responses.push((v, m.line))
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert((v, m.line));
                    }
                }
            }
            (Direction::S2c, Some(method), _) => {
                let v = norm.message(&Value::Object(o));
                s.notes.push((canonical(&v), method, v, m.line));
            }
            (Direction::S2c, None, None) => s.raw.push((m.bytes.clone(), m.line)),
            _ => {}
        }
    }
    s
}

/// Compares a recorded session with a live one (see the module documentation). Returns the
/// differences in recorded order (responses first, then notifications and other lines).
pub fn compare(recorded: &[Exchange], live: &[Exchange], norm: &Normalizer) -> Vec<Difference> {
    let rec = side(recorded, norm);
    let mut liv = side(live, norm);
    let mut out = Vec::new();
    for (key, method, line) in &rec.requests {
        let r = rec.responses.get(key);
        let l = liv.responses.remove(key);
        match (r, l) {
            (Some((rv, rline)), Some((lv, _))) => {
                let a = norm.message(rv);
                let b = norm.message(&lv);
                if canonical(&a) != canonical(&b) {
                    out.push(Difference {
                        what: format!("response to {method} (id {key})"),
                        line: *rline,
                        diff: diff_values(&a, &b),
                    });
                }
            }
            (Some((rv, rline)), None) => out.push(Difference {
                what: format!("no response to {method} (id {key}) from the target"),
                line: *rline,
                diff: format!("recorded: {}", canonical(rv)),
            }),
            (None, _) => {
                let _ = line; // the recording ended before this request was answered
            }
        }
    }
    for (lv, _) in liv.responses.into_values().chain(liv.extra_responses) {
        out.push(Difference {
            what: "a response the recording does not have".into(),
            line: 0,
            diff: format!("live: {}", canonical(&lv)),
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
            None => missing.push((method, v, *line)),
        }
    }
    let mut unexpected: Vec<usize> = (0..liv.notes.len()).filter(|i| !used[*i]).collect();
    for (method, v, line) in missing {
        // Pair with an unexpected live message of the same method, for a readable diff.
        let pair = unexpected.iter().position(|i| liv.notes[*i].1 == *method);
        match pair {
            Some(p) => {
                let i = unexpected.remove(p);
                out.push(Difference {
                    what: format!("{method} differs"),
                    line,
                    diff: diff_values(v, &liv.notes[i].2),
                });
            }
            None => out.push(Difference {
                what: format!("missing {method} (the target did not send it)"),
                line,
                diff: format!("recorded: {}", canonical(v)),
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
        *live_raw.entry(b.as_slice()).or_default() += 1;
    }
    for (b, line) in &rec.raw {
        match live_raw.get_mut(b.as_slice()) {
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

/// Sends a transcript's client messages to a live peer in order: each request waits for its
/// response (until `timeout` per message); a recorded client response to a server request is
/// sent with the id of the matching live server request (matched by method, in order). When
/// the messages are done, waits (up to `timeout`) until the live side has sent as many
/// notifications and server requests as the recording, then closes stdin.
pub async fn drive(t: &Transcript, peer: &mut Peer, timeout: Duration) -> Driven {
    let mut d = Driven::default();
    // Recorded server requests, in order, by id key → (ordinal, method).
    let mut rec_server_req: HashMap<String, (usize, String)> = HashMap::new();
    let mut rec_responses: std::collections::HashSet<String> = Default::default();
    let mut rec_notes = 0usize;
    let mut n = 0;
    for (_, e) in &t.events {
        if e.dir != Direction::S2c {
            continue;
        }
        let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&e.bytes) else {
            continue;
        };
        match (o.get("method").and_then(Value::as_str), o.get("id")) {
            (Some(m), Some(id)) => {
                rec_server_req.insert(id_key(id), (n, m.to_string()));
                n += 1;
                rec_notes += 1;
            }
            (Some(_), None) => rec_notes += 1,
            (None, Some(id)) => {
                rec_responses.insert(id_key(id));
            }
            _ => {}
        }
    }
    let mut live = LiveState::default();
    for (_, e) in &t.events {
        if e.dir != Direction::C2s {
            continue;
        }
        let parsed: Option<Map<String, Value>> = match serde_json::from_slice(&e.bytes) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        };
        let mut bytes = e.bytes.clone();
        let mut wait_for: Option<String> = None;
        if let Some(mut o) = parsed {
            let method = o.get("method").and_then(Value::as_str).map(str::to_string);
            let id = o.get("id").cloned();
            match (method, id) {
                (None, Some(id)) => {
                    // A response to a server request: use the live request's id.
                    if let Some((ordinal, m)) = rec_server_req.get(&id_key(&id)) {
                        let deadline = Instant::now() + timeout;
                        while live.server_requests.len() <= *ordinal {
                            if !live.step(peer, deadline).await {
                                break;
                            }
                        }
                        match live.server_requests.get(*ordinal) {
                            Some(live_id) => {
                                o.insert("id".into(), live_id.clone());
                                bytes = serde_json::to_vec(&Value::Object(o)).unwrap_or(bytes);
                            }
                            None => d.notes.push(format!(
                                "the target never sent the {m} request answered at transcript line {}; sent the recorded answer as is",
                                t.events.iter().find(|(_, x)| x.seq == e.seq).map(|(l, _)| *l).unwrap_or(0)
                            )),
                        }
                    }
                }
                (Some(_), Some(id)) => {
                    let key = id_key(&id);
                    if rec_responses.contains(&key) {
                        wait_for = Some(key);
                    }
                }
                _ => {}
            }
        }
        if !e.partial {
            bytes.push(b'\n');
        }
        if peer.send_raw(&bytes).await.is_err() {
            d.notes
                .push("the target closed its stdin; stopped sending".into());
            break;
        }
        d.sent += 1;
        if let Some(key) = wait_for {
            let deadline = Instant::now() + timeout;
            while !live.answered.contains(&key) {
                if !live.step(peer, deadline).await {
                    break;
                }
            }
            if live.answered.contains(&key) {
                d.answered += 1;
            }
        }
    }
    // Trailing notifications.
    let deadline = Instant::now() + timeout;
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

#[derive(Default)]
struct LiveState {
    answered: std::collections::HashSet<String>,
    server_requests: Vec<Value>,
    notes: usize,
    eof: bool,
}

impl LiveState {
    /// Receives one line; false on timeout or EOF.
    async fn step(&mut self, peer: &mut Peer, deadline: Instant) -> bool {
        match peer.recv(deadline).await {
            Recv::Line(l) => {
                if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&l.bytes) {
                    match (o.get("method").and_then(Value::as_str), o.get("id")) {
                        (Some(_), Some(id)) => {
                            self.server_requests.push(id.clone());
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
            Recv::Timeout => false,
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
    let mut reader = crate::wire::LineReader::new(
        tokio::io::BufReader::new(tokio::io::stdin()),
        crate::wire::DEFAULT_LINE_CAP,
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

    #[test]
    fn mock_answers_by_method_and_params() {
        let text = format!(
            "{}\n{}\n{}\n{}\n{}\n",
            json!({"format": crate::transcript::FORMAT, "parity": "0", "protocol": "mcp", "transport": "stdio"}),
            json!({"seq":1,"t_ms":0,"dir":"c2s","raw": r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1}}}"#}),
            json!({"seq":2,"t_ms":0,"dir":"s2c","raw": r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#}),
            json!({"seq":3,"t_ms":0,"dir":"s2c","raw": r#"{"jsonrpc":"2.0","id":1,"result":{"ok":true}}"#}),
            json!({"seq":4,"t_ms":0,"dir":"exit","code":0}),
        );
        let t = crate::transcript::parse("t", &text).unwrap();
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
