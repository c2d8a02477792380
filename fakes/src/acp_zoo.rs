//! The faulty ACP agents: the reference ACP agent with one injected fault each.
//!
//! Each fault is a small struct implementing [`Fault`] around the clean reference agent
//! (`parity_reference::acp`), plus an entry in [`acp_catalogue`] naming the checks it must trip.

use crate::layer::{
    emit, error_code, error_reply, parse, AnswerTwice, MapOut, Methods, RequestFlood,
};
use crate::{AcpBenignInfo, AcpFaultInfo, AcpProfile, Fault, Flow, Io};
use parity_reference::acp::TOOL_METHOD;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// A key for a request id that keeps `0` and `"0"` apart.
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// The method of a request (a message with both `id` and `method`).
fn request_method(v: &Value) -> Option<&str> {
    v.get("id")?;
    v.get("method").and_then(Value::as_str)
}

/// Whether `v` is a response (an object with an `id` and no `method`).
fn is_response(v: &Value) -> bool {
    v.is_object() && v.get("id").is_some() && v.get("method").is_none()
}

/// Whether `v` is a notification (an object with a `method` and no `id` member).
fn is_notification(v: &Value) -> bool {
    v.is_object() && v.get("method").is_some() && v.get("id").is_none()
}

/// Rewrites the whole response message to requests of one method.
struct MapReply {
    method: &'static str,
    f: fn(&mut Value),
    methods: Methods,
}
impl Fault for MapReply {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        if is_response(&v) && self.methods.of(&v) == Some(self.method) {
            (self.f)(&mut v);
        }
        emit(io, &v);
    }
}

fn map_reply(method: &'static str, f: fn(&mut Value)) -> Box<dyn Fault> {
    Box::new(MapReply {
        method,
        f,
        methods: Methods::default(),
    })
}

/// Answers some client requests itself (never forwarding them): `f` returns the answer.
struct Intercept(fn(&Value) -> Option<Value>);
impl Fault for Intercept {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(answer) = parse(line).as_ref().and_then(self.0) {
            emit(io, &answer);
            return Flow::Continue;
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

/// Turns −32601 answers into −32603 for requests whose method does (`underscore`) or does
/// not start with `_`.
struct MethodNotFoundAsInternal {
    underscore: bool,
    methods: Methods,
}
impl Fault for MethodNotFoundAsInternal {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        let hit = error_code(&v) == Some(-32601)
            && self
                .methods
                .of(&v)
                .is_some_and(|m| m.starts_with('_') == self.underscore);
        if hit {
            v["error"]["code"] = json!(-32603);
            v["error"]["message"] = json!("Internal error");
        }
        emit(io, &v);
    }
}

fn method_not_found_as_internal(underscore: bool) -> Box<dyn Fault> {
    Box::new(MethodNotFoundAsInternal {
        underscore,
        methods: Methods::default(),
    })
}

/// No wire change at all (the fault is in the configuration the catalogue entry carries).
struct Clean;
impl Fault for Clean {}

// --- framing and stdout purity ---------------------------------------------------------------

struct Banner;
impl Fault for Banner {
    fn on_start(&mut self, io: &mut Io) {
        io.client_line("parity agent ready");
    }
}

struct Pretty;
impl Fault for Pretty {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        match parse(line) {
            Some(v) => io.client_line(serde_json::to_vec_pretty(&v).unwrap_or_default()),
            None => io.client_line(line),
        }
    }
}

/// A private-use character standing in for the raw byte 0xE9 until the line is encoded.
const LATIN1_MARK: char = '\u{E000}';

fn replace_bytes(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

struct Latin1;
impl Fault for Latin1 {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        let chunk = v.get("method") == Some(&json!("session/update"))
            && v.pointer("/params/update/sessionUpdate") == Some(&json!("agent_message_chunk"));
        let text = v
            .pointer_mut("/params/update/content/text")
            .filter(|_| chunk);
        match text {
            Some(Value::String(t)) => {
                // "é" in Latin-1 (byte 0xE9): invalid UTF-8.
                t.insert(0, LATIN1_MARK);
                let encoded = serde_json::to_vec(&v).unwrap_or_default();
                let mut mark = [0u8; 4];
                let mark = LATIN1_MARK.encode_utf8(&mut mark).as_bytes();
                io.client_line(replace_bytes(&encoded, mark, &[0xE9]));
            }
            _ => emit(io, &v),
        }
    }
}

fn drop_jsonrpc(v: &mut Value) {
    if is_response(v) {
        if let Some(o) = v.as_object_mut() {
            o.remove("jsonrpc");
        }
    }
}

fn result_and_error(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        if o.contains_key("result") {
            o.insert(
                "error".into(),
                json!({"code": -32603, "message": "also an error"}),
            );
        }
    }
}

fn bad_update(v: &mut Value) {
    if v.get("method") == Some(&json!("session/update")) {
        if let Some(u) = v
            .pointer_mut("/params/update")
            .and_then(Value::as_object_mut)
        {
            u.insert("sessionUpdate".into(), json!("agent_message"));
        }
    }
}

struct BatchResponses;
impl Fault for BatchResponses {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        match parse(line) {
            Some(v) if is_response(&v) => emit(io, &json!([v])),
            _ => io.client_line(line),
        }
    }
}

/// The `sessionId` a `session/new` response creates, if `v` is one.
fn new_session_id(methods: &Methods, v: &Value) -> Option<String> {
    if !is_response(v) || methods.of(v) != Some("session/new") {
        return None;
    }
    v.pointer("/result/sessionId")
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[derive(Default)]
struct EarlyUpdate {
    methods: Methods,
}
impl Fault for EarlyUpdate {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if let Some(sid) = parse(line).and_then(|v| new_session_id(&self.methods, &v)) {
            emit(
                io,
                &json!({"jsonrpc": "2.0", "method": "session/update", "params": {
                    "sessionId": sid,
                    "update": {"sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "parity agent: session starting"}}}}),
            );
        }
        io.client_line(line);
    }
}

#[derive(Default)]
struct FsRequest {
    methods: Methods,
    n: u32,
    sent: HashSet<String>,
}
impl Fault for FsRequest {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        if let Some(v) = parse(line) {
            if is_response(&v) {
                if let Some(id) = v.get("id") {
                    if self.sent.remove(&id_key(id)) {
                        return Flow::Continue; // the client's answer to our fs request
                    }
                }
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        io.client_line(line);
        if let Some(sid) = parse(line).and_then(|v| new_session_id(&self.methods, &v)) {
            self.n += 1;
            let id = json!(format!("agent-{}", self.n));
            self.sent.insert(id_key(&id));
            emit(
                io,
                &json!({"jsonrpc": "2.0", "id": id, "method": "fs/read_text_file",
                    "params": {"sessionId": sid, "path": "/etc/hostname"}}),
            );
        }
    }
}

// --- initialize and version negotiation ------------------------------------------------------

fn string_version(v: &mut Value) {
    if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
        r.insert("protocolVersion".into(), json!("1"));
    }
}

fn no_meta(v: &mut Value) {
    if let Some(c) = v
        .pointer_mut("/result/agentCapabilities")
        .and_then(Value::as_object_mut)
    {
        c.remove("_meta");
    }
}

/// Echoes whatever `protocolVersion` the client asked for (B23).
#[derive(Default)]
struct VersionEcho {
    requested: HashMap<String, Value>,
}
impl Fault for VersionEcho {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if request_method(&v) == Some("initialize") {
                if let (Some(id), Some(pv)) = (v.get("id"), v.pointer("/params/protocolVersion")) {
                    self.requested.insert(id_key(id), pv.clone());
                }
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        let asked = if is_response(&v) {
            v.get("id")
                .and_then(|id| self.requested.remove(&id_key(id)))
        } else {
            None
        };
        if let (Some(asked), Some(r)) = (asked, v.get_mut("result").and_then(Value::as_object_mut))
        {
            r.insert("protocolVersion".into(), asked);
        }
        emit(io, &v);
    }
}

fn version_error(v: &Value) -> Option<Value> {
    if request_method(v) != Some("initialize")
        || v.pointer("/params/protocolVersion") == Some(&json!(1))
    {
        return None;
    }
    Some(error_reply(
        v.get("id")?,
        -32602,
        "unsupported protocol version",
    ))
}

// --- ids, errors, notifications --------------------------------------------------------------

fn id_stringify(v: &mut Value) {
    if !is_response(v) {
        return;
    }
    let big = match v.get("id") {
        Some(Value::Number(n)) => {
            n.as_u64().is_some_and(|n| n > 1000) || n.as_i64().is_some_and(|n| n > 1000)
        }
        _ => false,
    };
    if big {
        let s = v.get("id").map(Value::to_string).unwrap_or_default();
        v["id"] = json!(s);
    }
}

struct ParseErrorSilent;
impl Fault for ParseErrorSilent {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if parse(line).is_some() {
            io.to_server.push(line.to_vec());
        }
        Flow::Continue
    }
}

/// Answers `initialize`, then reads every line and answers nothing more: a hung agent.
#[derive(Default)]
struct DeafAfterInit {
    initialized: bool,
}
impl Fault for DeafAfterInit {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if !self.initialized {
            io.to_server.push(line.to_vec());
        }
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if parse(line).is_some_and(|v| v.pointer("/result/protocolVersion").is_some()) {
            self.initialized = true;
        }
        io.client_line(line);
    }
}

struct AnswerNotifications;
impl Fault for AnswerNotifications {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if parse(line).is_some_and(|v| is_notification(&v)) {
            emit(io, &json!({"jsonrpc": "2.0", "id": null, "result": {}}));
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

struct CrashOnExt;
impl Fault for CrashOnExt {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if request_method(&v).is_some_and(|m| m.starts_with('_') && m != TOOL_METHOD) {
                return Flow::Exit(1);
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

// --- sessions --------------------------------------------------------------------------------

/// The `mcpServers` array of a `session/new` request.
fn new_session_servers(v: &Value) -> Option<&Vec<Value>> {
    if request_method(v) != Some("session/new") {
        return None;
    }
    v.pointer("/params/mcpServers").and_then(Value::as_array)
}

fn reject_empty_servers(v: &Value) -> Option<Value> {
    if !new_session_servers(v)?.is_empty() {
        return None;
    }
    Some(error_reply(
        v.get("id")?,
        -32602,
        "at least one MCP server is required",
    ))
}

fn reject_stdio_server(v: &Value) -> Option<Value> {
    let stdio = new_session_servers(v)?.iter().any(|s| {
        s.is_object()
            && match s.get("type") {
                None => true,
                Some(t) => t == "stdio",
            }
    });
    if !stdio {
        return None;
    }
    Some(error_reply(v.get("id")?, -32602, "env must be an object"))
}

/// Answers a session/new whose stdio `env` is a map (not the v1 array) with -32603, as an
/// agent does whose code iterates `env` as an array and throws.
fn env_internal_error(v: &Value) -> Option<Value> {
    let map_env = new_session_servers(v)?
        .iter()
        .any(|s| s.get("env").is_some_and(Value::is_object));
    if !map_env {
        return None;
    }
    Some(error_reply(
        v.get("id")?,
        -32603,
        "internal error: env.map is not a function",
    ))
}

/// Exits on any input line that is JSON but not an object (a number, an array): the agent's
/// read loop assumes every message is an object and dies.
struct CrashOnNonObject;
impl Fault for CrashOnNonObject {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        match parse(line) {
            Some(v) if !v.is_object() => Flow::Exit(1),
            _ => {
                io.to_server.push(line.to_vec());
                Flow::Continue
            }
        }
    }
}

/// Answers every call of the tool method with -32601 (Method not found).
fn no_tool_method(v: &Value) -> Option<Value> {
    if v.get("method").and_then(Value::as_str) != Some(TOOL_METHOD) {
        return None;
    }
    Some(error_reply(v.get("id")?, -32601, "Method not found"))
}

/// Exits (status 0) on an extension notification (a method starting with `_`, no id): the
/// agent treats the unknown method as fatal instead of ignoring it.
struct ExitOnExtNotification;
impl Fault for ExitOnExtNotification {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            let ext_note = v.get("id").is_none()
                && v.get("method")
                    .and_then(Value::as_str)
                    .is_some_and(|m| m.starts_with('_'));
            if ext_note {
                return Flow::Exit(0);
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

// --- prompt turns ----------------------------------------------------------------------------

fn bad_stop_reason(v: &mut Value) {
    if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
        r.insert("stopReason".into(), json!("done"));
    }
}

/// Answers a cancelled prompt with an error at once, and drops the reference's own answer.
#[derive(Default)]
struct CancelError {
    /// Open prompt ids by `sessionId`.
    pending: HashMap<String, Vec<Value>>,
    /// Keys of prompt ids already answered with the error.
    dropped: HashSet<String>,
}
impl Fault for CancelError {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            let sid = v
                .pointer("/params/sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
            if request_method(&v) == Some("session/prompt") {
                if let (Some(sid), Some(id)) = (sid, v.get("id")) {
                    self.pending.entry(sid).or_default().push(id.clone());
                }
            } else if is_notification(&v) && v.get("method") == Some(&json!("session/cancel")) {
                for id in sid
                    .and_then(|s| self.pending.remove(&s))
                    .unwrap_or_default()
                {
                    emit(io, &error_reply(&id, -32800, "Request cancelled"));
                    self.dropped.insert(id_key(&id));
                }
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if let Some(v) = parse(line) {
            if is_response(&v) {
                if let Some(key) = v.get("id").map(id_key) {
                    if self.dropped.remove(&key) {
                        return;
                    }
                    for ids in self.pending.values_mut() {
                        ids.retain(|id| id_key(id) != key);
                    }
                    self.pending.retain(|_, ids| !ids.is_empty());
                }
            }
        }
        io.client_line(line);
    }
}

// --- the tool method (equivalence) -----------------------------------------------------------

/// The tool name of a tool-method request.
fn tool_call_name(v: &Value) -> Option<&str> {
    if request_method(v) != Some(TOOL_METHOD) {
        return None;
    }
    v.pointer("/params/name").and_then(Value::as_str)
}

/// `read_file` answers with CRLF line endings (only through ACP).
#[derive(Default)]
struct OutcomeDrift {
    tools: HashMap<String, String>,
}
impl Fault for OutcomeDrift {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if let (Some(name), Some(id)) = (tool_call_name(&v), v.get("id")) {
                self.tools.insert(id_key(id), name.to_string());
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        let tool = if is_response(&v) {
            v.get("id").and_then(|id| self.tools.remove(&id_key(id)))
        } else {
            None
        };
        if tool.as_deref() == Some("read_file")
            && v.pointer("/result/outcome") == Some(&json!("ok"))
        {
            if let Some(Value::String(c)) = v.pointer_mut("/result/value/content") {
                *c = c.replace('\n', "\r\n");
            }
        }
        emit(io, &v);
    }
}

/// The longest string argument that passes without a warning.
const LONG_STRING_CHARS: usize = 10;

fn has_long_string(v: &Value) -> bool {
    match v {
        Value::String(s) => s.chars().count() > LONG_STRING_CHARS,
        Value::Array(a) => a.iter().any(has_long_string),
        Value::Object(o) => o.values().any(has_long_string),
        _ => false,
    }
}

/// Warns about long string arguments (only through ACP).
#[derive(Default)]
struct LongStringDrift {
    flagged: HashSet<String>,
}
impl Fault for LongStringDrift {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if tool_call_name(&v).is_some()
                && v.pointer("/params/arguments").is_some_and(has_long_string)
            {
                if let Some(id) = v.get("id") {
                    self.flagged.insert(id_key(id));
                }
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        let flagged = is_response(&v)
            && v.get("id")
                .is_some_and(|id| self.flagged.remove(&id_key(id)));
        if flagged {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                let warnings = r.entry("warnings").or_insert_with(|| json!([]));
                if let Value::Array(w) = warnings {
                    w.push(json!(
                        "TRUNCATED: a string argument is longer than 10 characters"
                    ));
                }
            }
        }
        emit(io, &v);
    }
}

// --- the catalogue ---------------------------------------------------------------------------

macro_rules! acp_fault {
    ($name:expr, $desc:expr, [$($trip:expr),*], $make:expr) => {
        acp_fault!($name, $desc, [$($trip),*], AcpProfile::Acp, None, $make)
    };
    ($name:expr, $desc:expr, [$($trip:expr),*], $profile:expr, $method:expr, $make:expr) => {
        AcpFaultInfo {
            name: $name,
            description: $desc,
            trips: &[$($trip),*],
            profile: $profile,
            tool_method: $method,
            make: $make,
        }
    };
}

/// Every ACP fault, each with the checks it must trip. Entries with no trips are bad agents
/// for the harness's own robustness tests (`acp-deaf-after-init`).
pub fn acp_catalogue() -> &'static [AcpFaultInfo] {
    static ZOO: std::sync::OnceLock<Vec<AcpFaultInfo>> = std::sync::OnceLock::new();
    ZOO.get_or_init(|| {
        vec![
            acp_fault!(
                "acp-stdout-banner",
                "prints the plain-text banner `parity agent ready` on stdout before serving",
                ["acp.stdio.stdout-purity"],
                || Box::new(Banner)
            ),
            acp_fault!(
                "acp-pretty-print",
                "pretty-prints every message over several lines",
                ["acp.stdio.newline-delimited"],
                || Box::new(Pretty)
            ),
            acp_fault!(
                "acp-latin1",
                "inserts a raw Latin-1 byte 0xE9 (invalid UTF-8) into the text of every agent_message_chunk update",
                ["acp.base.utf8"],
                || Box::new(Latin1)
            ),
            acp_fault!(
                "acp-jsonrpc-missing",
                "drops the `jsonrpc` member from every response",
                ["acp.base.jsonrpc-version"],
                || Box::new(MapOut(drop_jsonrpc))
            ),
            acp_fault!(
                "acp-result-and-error",
                "adds an `error` member beside the result of every session/new response",
                ["acp.base.result-xor-error"],
                || map_reply("session/new", result_and_error)
            ),
            acp_fault!(
                "acp-bad-update",
                "sends session/update notifications with `sessionUpdate: \"agent_message\"`, which is not a v1 variant",
                ["acp.schema.v1-messages"],
                || Box::new(MapOut(bad_update))
            ),
            acp_fault!(
                "acp-batch-responses",
                "wraps every response in a one-element JSON-RPC batch array",
                ["acp.stdio.no-batches"],
                || Box::new(BatchResponses)
            ),
            acp_fault!(
                "acp-early-update",
                "sends a session/update for a new session before the session/new response that creates it",
                ["acp.session.update-after-new"],
                || Box::<EarlyUpdate>::default()
            ),
            acp_fault!(
                "acp-fs-request",
                "asks the client for `fs/read_text_file` of /etc/hostname after every session/new, although the client declared no fs capability",
                ["acp.init.capabilities-respected"],
                || Box::<FsRequest>::default()
            ),
            acp_fault!(
                "acp-string-version",
                "answers initialize with `protocolVersion` as the string \"1\" instead of an integer",
                ["acp.init.protocol-version-integer"],
                || map_reply("initialize", string_version)
            ),
            acp_fault!(
                "acp-version-echo",
                "echoes whatever protocolVersion the client asks for in initialize, even one it cannot support (B23)",
                ["acp.init.version-negotiation"],
                || Box::<VersionEcho>::default()
            ),
            acp_fault!(
                "acp-version-error",
                "refuses an initialize for any version but 1 with -32602 instead of answering its latest version",
                ["acp.init.version-negotiation"],
                || Box::new(Intercept(version_error))
            ),
            acp_fault!(
                "acp-id-stringify",
                "answers requests whose integer id is above 1000 with the id as a string",
                ["acp.base.id-echo"],
                || Box::new(MapOut(id_stringify))
            ),
            acp_fault!(
                "acp-answer-twice",
                "answers every request twice: the copy of each response goes out just before its next message",
                ["acp.base.duplicate-response"],
                || Box::<AnswerTwice>::default()
            ),
            acp_fault!(
                "acp-deaf-after-init",
                "answers initialize, then reads every line and answers nothing (a hung agent; for the harness's own tests, it trips no check)",
                [],
                || Box::<DeafAfterInit>::default()
            ),
            acp_fault!(
                "acp-parse-error-silent",
                "drops input lines that are not JSON without any answer",
                ["acp.base.parse-error"],
                || Box::new(ParseErrorSilent)
            ),
            acp_fault!(
                "acp-unknown-method-internal",
                "answers unknown non-extension methods with -32603 instead of -32601",
                ["acp.base.unknown-method"],
                || method_not_found_as_internal(false)
            ),
            acp_fault!(
                "acp-answer-notifications",
                "answers every client notification with a null-id empty result",
                ["acp.base.notification-unanswered", "acp.ext.unknown-notification-ignored"],
                || Box::new(AnswerNotifications)
            ),
            acp_fault!(
                "acp-crash-on-ext",
                "exits with status 1 without answering on any unknown `_` extension request",
                ["acp.ext.unknown-request-answered"],
                || Box::new(CrashOnExt)
            ),
            acp_fault!(
                "acp-ext-internal-error",
                "answers unknown `_` extension requests with -32603 instead of -32601",
                ["acp.ext.unknown-request-method-not-found"],
                || method_not_found_as_internal(true)
            ),
            acp_fault!(
                "acp-unprefixed-tool-method",
                "serves its tool calls under the bare method `parity/tool`, which lacks the `_` extension prefix",
                ["acp.ext.tool-method-prefix"],
                AcpProfile::Acp,
                Some("parity/tool"),
                || Box::new(Clean)
            ),
            acp_fault!(
                "acp-no-tool-method",
                "answers the tool extension method with -32601, as an agent that serves it under another name does",
                ["acp.ext.tool-method-served"],
                || Box::new(Intercept(no_tool_method))
            ),
            acp_fault!(
                "acp-no-meta",
                "leaves `agentCapabilities._meta` out of the initialize result, so the tool method is not advertised",
                ["acp.ext.tool-method-advertised"],
                || map_reply("initialize", no_meta)
            ),
            acp_fault!(
                "acp-reject-empty-servers",
                "refuses session/new with `mcpServers: []` with -32602 \"at least one MCP server is required\"",
                ["acp.session.new-empty-mcp-servers"],
                || Box::new(Intercept(reject_empty_servers))
            ),
            acp_fault!(
                "acp-reject-stdio-server",
                "refuses session/new with any stdio MCP server with -32602 \"env must be an object\" (the env map/array confusion in reverse)",
                ["acp.session.new-stdio-server"],
                || Box::new(Intercept(reject_stdio_server))
            ),
            acp_fault!(
                "acp-env-internal-error",
                "answers a session/new whose stdio `env` is a map with -32603 (an internal error) instead of -32602 or a session",
                ["acp.session.new-invalid-params"],
                || Box::new(Intercept(env_internal_error))
            ),
            acp_fault!(
                "acp-exit-on-ext-notification",
                "exits when an unknown `_` extension notification arrives instead of ignoring it",
                ["acp.ext.unknown-notification-ignored"],
                || Box::new(ExitOnExtNotification)
            ),
            acp_fault!(
                "acp-crash-on-non-object",
                "exits when a line is JSON but not an object (a number, an array) instead of answering -32600",
                ["acp.base.invalid-request"],
                || Box::new(CrashOnNonObject)
            ),
            acp_fault!(
                "acp-bad-stop-reason",
                "ends every prompt turn with `stopReason: \"done\"`, which is not a v1 stop reason",
                ["acp.prompt.stop-reason"],
                || map_reply("session/prompt", bad_stop_reason)
            ),
            acp_fault!(
                "acp-cancel-error",
                "answers a cancelled session/prompt with error -32800 instead of stopReason \"cancelled\"",
                ["acp.prompt.cancel"],
                || Box::<CancelError>::default()
            ),
            acp_fault!(
                "acp-outcome-drift",
                "returns read_file content with CRLF line endings through the ACP tool method only",
                ["equivalence.scenario"],
                AcpProfile::Equivalence,
                None,
                || Box::<OutcomeDrift>::default()
            ),
            acp_fault!(
                "acp-long-string-drift",
                "adds a TRUNCATED warning to tool-method outcomes whose arguments hold a string longer than 10 characters",
                ["equivalence.generated"],
                AcpProfile::Equivalence,
                None,
                || Box::<LongStringDrift>::default()
            ),
        ]
    })
}

// --- benign agents ---------------------------------------------------------------------------

/// The one method id the authenticating agent offers.
const AUTH_METHOD: &str = "parity-login";

/// Requires `authenticate` before any session method: advertises one agent-handled auth
/// method in the initialize result and answers `session/new`, `session/load` and
/// `session/prompt` with −32000 (Authentication required) until `authenticate` names it
/// (then `{}`, and every request is forwarded as usual).
#[derive(Default)]
struct AuthRequired {
    methods: Methods,
    authenticated: bool,
}
impl Fault for AuthRequired {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        if let Some(v) = parse(line) {
            if let (Some(method), Some(id)) = (request_method(&v), v.get("id")) {
                if method == "authenticate" {
                    let answer = if v.pointer("/params/methodId") == Some(&json!(AUTH_METHOD)) {
                        self.authenticated = true;
                        json!({"jsonrpc": "2.0", "id": id, "result": {}})
                    } else {
                        error_reply(id, -32602, "unknown authentication method")
                    };
                    emit(io, &answer);
                    return Flow::Continue;
                }
                let gated = matches!(method, "session/new" | "session/load" | "session/prompt");
                if gated && !self.authenticated {
                    emit(io, &error_reply(id, -32000, "Authentication required"));
                    return Flow::Continue;
                }
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        if is_response(&v) && self.methods.of(&v) == Some("initialize") {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                r.insert(
                    "authMethods".into(),
                    json!([{"id": AUTH_METHOD, "name": "parity login",
                        "description": "a benign peer: any client that calls authenticate with this id is let in"}]),
                );
            }
        }
        emit(io, &v);
    }
}

/// An agent with no extension at all: no `agentCapabilities._meta`, and the tool method is a
/// method it does not have (−32601).
#[derive(Default)]
struct NoExtensions {
    methods: Methods,
}
impl Fault for NoExtensions {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        if let Some(answer) = parse(line).as_ref().and_then(no_tool_method) {
            emit(io, &answer);
            return Flow::Continue;
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        if is_response(&v) && self.methods.of(&v) == Some("initialize") {
            no_meta(&mut v);
        }
        emit(io, &v);
    }
}

/// The tool method of the wrapped-call agent ([`WrappedCall`]).
pub const WRAPPED_CALL_METHOD: &str = "_acme/call";

/// How a target declares the wrapped-call agent's tool method, params and results: the keys
/// of its `[surfaces.acp]` table after `command` (docs/target.md §"Calls and results in
/// another shape" has the same declaration as a worked example).
pub const WRAPPED_CALL_DECLARATION: &str = r#"tool_method = "_acme/call"
params = { sessionId = "{session}", call = { "{tool}" = "{arguments}" } }

[surfaces.acp.outcome]
kind = "/status"
ok = "ok"
refused = "refused"
tool_error = "error"
value = "/value"
code = "/code"
message = "/message"
warnings = "/notes"
"#;

/// An agent whose own tool method wraps a call differently from the reference's: it serves
/// [`WRAPPED_CALL_METHOD`] with params `{"sessionId": S, "call": {"<tool>": {arguments}}}`
/// (anything else is −32602) and answers `{"status": "ok", "value": V, "notes": [..]}`,
/// `{"status": "refused", "code": C, "message": M, "notes": [..]}` or
/// `{"status": "error", "message": M, "notes": [..]}`; the reference's `_parity/tool` is a
/// method it does not have (−32601), and `agentCapabilities._meta` names its own method.
#[derive(Default)]
struct WrappedCall {
    methods: Methods,
    calls: HashSet<String>,
}
impl Fault for WrappedCall {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        let Some(mut v) = parse(line) else {
            io.to_server.push(line.to_vec());
            return Flow::Continue;
        };
        match (request_method(&v), v.get("id").cloned()) {
            (Some(TOOL_METHOD), Some(id)) => {
                emit(io, &error_reply(&id, -32601, "Method not found"));
                return Flow::Continue;
            }
            (Some(WRAPPED_CALL_METHOD), Some(id)) => {
                let call = v
                    .pointer("/params/call")
                    .and_then(Value::as_object)
                    .filter(|c| c.len() == 1)
                    .and_then(|c| c.iter().next())
                    .map(|(tool, args)| (tool.clone(), args.clone()));
                let Some((tool, arguments)) = call else {
                    emit(
                        io,
                        &error_reply(
                            &id,
                            -32602,
                            "Invalid params: expected {\"sessionId\": …, \"call\": {\"<tool>\": {…}}}",
                        ),
                    );
                    return Flow::Continue;
                };
                let session = v.pointer("/params/sessionId").cloned();
                v["method"] = json!(TOOL_METHOD);
                v["params"] = json!({"name": tool, "arguments": arguments});
                if let Some(s) = session {
                    v["params"]["sessionId"] = s;
                }
                self.calls.insert(id_key(&id));
                io.to_server
                    .push(serde_json::to_vec(&v).unwrap_or_default());
                return Flow::Continue;
            }
            _ => {}
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        if is_response(&v) && self.methods.of(&v) == Some("initialize") {
            if let Some(m) = v.pointer_mut("/result/agentCapabilities/_meta") {
                *m = json!({"acme": {"callMethod": WRAPPED_CALL_METHOD}});
            }
        }
        let ours = is_response(&v) && v.get("id").is_some_and(|id| self.calls.remove(&id_key(id)));
        if ours {
            if let Some(r) = v.get_mut("result") {
                let get = |k: &str| r.get(k).cloned();
                let notes = get("warnings").unwrap_or_else(|| json!([]));
                let wrapped = match r.get("outcome").and_then(Value::as_str) {
                    Some("ok") => {
                        Some(json!({"status": "ok", "value": get("value"), "notes": notes}))
                    }
                    Some("refused") => Some(json!({"status": "refused", "code": get("code"),
                        "message": get("message"), "notes": notes})),
                    Some("tool_error") => {
                        Some(json!({"status": "error", "message": get("message"), "notes": notes}))
                    }
                    _ => None,
                };
                if let Some(w) = wrapped {
                    *r = w;
                }
            }
        }
        emit(io, &v);
    }
}

/// Every benign ACP agent: correct but unusual, each with the checks it must pass (no fail
/// and no warn). Served by `parity fake <name>`, like the faulty ones; the target declares
/// no tool method for them.
pub fn acp_benign_catalogue() -> &'static [AcpBenignInfo] {
    static BENIGN: std::sync::OnceLock<Vec<AcpBenignInfo>> = std::sync::OnceLock::new();
    BENIGN.get_or_init(|| {
        vec![
            AcpBenignInfo {
                name: "acp-auth-required",
                description: "advertises one authMethods entry and answers session/new, session/load and session/prompt with -32000 (Authentication required) until the client calls authenticate with it",
                passes: &[
                    "acp.session.new-empty-mcp-servers",
                    "acp.session.new-stdio-server",
                    "acp.session.new-invalid-params",
                    "acp.prompt.stop-reason",
                    "acp.prompt.cancel",
                    "acp.base.id-echo",
                    "acp.ext.tool-method-served",
                    "acp.ext.tool-method-advertised",
                    "acp.schema.v1-messages",
                ],
                tool_method: None,
                make: || Box::<AuthRequired>::default(),
            },
            AcpBenignInfo {
                name: "acp-request-flood",
                description: "once initialize is answered, sends the client 10,000 `_parity/flood` and `_parity/flood-ping` extension requests before it reads the next line, then serves like the reference",
                passes: &[
                    "acp.base.parse-error",
                    "acp.base.invalid-request",
                    "acp.base.id-echo",
                    "acp.base.unknown-method",
                    "acp.base.notification-unanswered",
                    "acp.base.duplicate-response",
                ],
                tool_method: None,
                make: || Box::new(RequestFlood::new(&["_parity/flood", "_parity/flood-ping"], &[])),
            },
            AcpBenignInfo {
                name: "acp-no-extensions",
                description: "declares no extension: no agentCapabilities._meta, and the tool method is answered -32601 like any method it lacks",
                passes: &[
                    "acp.ext.tool-method-prefix",
                    "acp.ext.tool-method-served",
                    "acp.ext.tool-method-advertised",
                    "acp.ext.unknown-request-method-not-found",
                ],
                tool_method: None,
                make: || Box::<NoExtensions>::default(),
            },
            AcpBenignInfo {
                name: "acp-wrapped-call",
                description: "serves its tools through its own method `_acme/call`, whose params wrap the call as {\"call\": {tool: arguments}} and whose results name their kind in `status` (docs/target.md: declared with `params` and [surfaces.acp.outcome], equivalence passes)",
                passes: &[
                    "acp.ext.tool-method-prefix",
                    "acp.ext.tool-method-served",
                    "acp.ext.tool-method-advertised",
                    "acp.schema.v1-messages",
                ],
                tool_method: Some(WRAPPED_CALL_METHOD),
                make: || Box::<WrappedCall>::default(),
            },
        ]
    })
}
