//! The faults. Each is small: a struct implementing [`Fault`] and an entry in [`catalogue`].

use crate::layer::{emit, error_code, parse, AnswerTwice, MapOut, Methods};
use crate::{AtEof, Fault, FaultInfo, Flow, Io};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// Rewrites results of one method.
struct MapResult {
    method: &'static str,
    f: fn(&mut Value),
    methods: Methods,
}
impl Fault for MapResult {
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
        if self.methods.of(&v) == Some(self.method) {
            if let Some(r) = v.get_mut("result") {
                (self.f)(r);
            }
        }
        emit(io, &v);
    }
}

fn map_result(method: &'static str, f: fn(&mut Value)) -> Box<dyn Fault> {
    Box::new(MapResult {
        method,
        f,
        methods: Methods::default(),
    })
}

// --- framing and stdout purity ---------------------------------------------------------------

struct Banner;
impl Fault for Banner {
    fn on_start(&mut self, io: &mut Io) {
        io.client_line("parity-fake: server starting (this banner belongs on stderr)");
    }
}

struct JsonLog;
impl Fault for JsonLog {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        io.client_line(line);
        io.client_line(r#"{"level":"info","msg":"handled request","time":"2026-01-01T00:00:00Z"}"#);
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

struct ContentLength;
impl Fault for ContentLength {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        io.client_line(format!("Content-Length: {}", line.len()));
        io.client_line("");
        io.client_line(line);
    }
}

struct Bom {
    done: bool,
}
impl Fault for Bom {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if !self.done {
            self.done = true;
            let mut l = vec![0xEF, 0xBB, 0xBF];
            l.extend_from_slice(line);
            io.client_line(l);
        } else {
            io.client_line(line);
        }
    }
}

struct Latin1;
impl Fault for Latin1 {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        // Writes its server name with a Latin-1 "é" (byte 0xE9): invalid UTF-8.
        let text =
            String::from_utf8_lossy(line).replace("parity-reference", "parity-r\u{1}ference");
        let bytes: Vec<u8> = text
            .bytes()
            .map(|b| if b == 1 { 0xE9 } else { b })
            .collect();
        io.client_line(bytes);
    }
}

fn jsonrpc_1(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        o.insert("jsonrpc".into(), json!("1.0"));
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

fn drop_shape_fields(r: &mut Value) {
    if let Some(o) = r.as_object_mut() {
        if o.contains_key("protocolVersion") {
            o.remove("serverInfo");
        }
        if o.contains_key("supportedVersions") {
            o.remove("capabilities");
        }
    }
}

/// Drops required members of the initialize and server/discover results.
struct BadShape;
impl Fault for BadShape {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        match parse(line) {
            Some(mut v) => {
                if let Some(r) = v.get_mut("result") {
                    drop_shape_fields(r);
                }
                emit(io, &v);
            }
            None => io.client_line(line),
        }
    }
}

fn strip_result_type(v: &mut Value) {
    if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
        r.remove("resultType");
    }
}

struct ServerRequest {
    n: u32,
}
impl Fault for ServerRequest {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        io.client_line(line);
        self.n += 1;
        emit(
            io,
            &json!({"jsonrpc": "2.0", "id": format!("srv-{}", self.n), "method": "roots/list"}),
        );
    }
}

// --- ids, errors, notifications ------------------------------------------------------------

fn id_zero_null(v: &mut Value) {
    if v.get("id") == Some(&json!(0)) && v.get("method").is_none() {
        v["id"] = Value::Null;
    }
}

struct GarbageExits;
impl Fault for GarbageExits {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if parse(line).is_none() {
            return Flow::Exit(0);
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

/// Drops every line that does not parse, answering nothing and serving on (as the TypeScript
/// SDK's stdio transport does): a parse error never gets its response.
struct GarbageIgnored;
impl Fault for GarbageIgnored {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if parse(line).is_some() {
            io.to_server.push(line.to_vec());
        }
        Flow::Continue
    }
}

/// Like [`GarbageExits`], but only once per marker file: when `PARITY_FAKE_ONCE` names a path,
/// the first process to see an unparsable line creates the file (exclusively) and exits; every
/// later one answers like the reference. Without the variable it always exits. It makes a case
/// fail on its first attempt and pass on a retry (the harness's `--retries` tests).
struct GarbageExitsOnce;
impl Fault for GarbageExitsOnce {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if parse(line).is_none() {
            let first = match std::env::var_os("PARITY_FAKE_ONCE") {
                None => true,
                Some(path) => std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
                    .is_ok(),
            };
            if first {
                return Flow::Exit(0);
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

fn parse_error_id_zero(v: &mut Value) {
    if error_code(v) == Some(-32700) {
        v["id"] = json!(0);
    }
}

struct NullIdDropped;
impl Fault for NullIdDropped {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if v.get("id") == Some(&Value::Null) && v.get("method").is_some() {
                return Flow::Continue; // treated as a notification: no answer
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

fn method_not_found_as_32602(v: &mut Value) {
    if error_code(v) == Some(-32601) {
        v["error"]["code"] = json!(-32602);
    }
}

struct UnknownMethodSilent;
impl Fault for UnknownMethodSilent {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if parse(line).is_some_and(|v| error_code(&v) == Some(-32601)) {
            return;
        }
        io.client_line(line);
    }
}

struct NotificationAnswered;
impl Fault for NotificationAnswered {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if v.get("method").is_some() && v.get("id").is_none() {
                emit(
                    io,
                    &json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32601, "message": "Method not found"}}),
                );
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

/// Echoes whatever protocolVersion the client asked for (B12).
#[derive(Default)]
struct VersionEcho {
    requested: HashMap<String, Value>,
}
impl Fault for VersionEcho {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if v.get("method") == Some(&json!("initialize")) {
                if let (Some(id), Some(pv)) = (v.get("id"), v.pointer("/params/protocolVersion")) {
                    self.requested.insert(id.to_string(), pv.clone());
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
        let asked = v
            .get("id")
            .and_then(|id| self.requested.get(&id.to_string()))
            .cloned();
        if let (Some(asked), Some(r)) = (asked, v.get_mut("result")) {
            r["protocolVersion"] = asked;
        }
        emit(io, &v);
    }
}

fn ping_nonempty(r: &mut Value) {
    r["ok"] = json!(true);
}

struct IgnoreEof;
impl Fault for IgnoreEof {
    fn at_eof(&mut self) -> AtEof {
        AtEof::Hang
    }
}

struct WriteAfterEof;
impl Fault for WriteAfterEof {
    fn at_eof(&mut self) -> AtEof {
        AtEof::WriteThenExit(vec![br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"goodbye"}}"#.to_vec()])
    }
}

// --- modern era --------------------------------------------------------------------------------

fn discover_missing_hints(r: &mut Value) {
    if let Some(o) = r.as_object_mut() {
        o.remove("ttlMs");
        o.remove("cacheScope");
    }
}

struct MetaOptional;
impl Fault for MetaOptional {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        let Some(mut v) = parse(line) else {
            io.to_server.push(line.to_vec());
            return Flow::Continue;
        };
        if v.get("method").is_some()
            && v.get("id").is_some()
            && v.get("method") != Some(&json!("initialize"))
        {
            let params = v
                .as_object_mut()
                .map(|o| o.entry("params").or_insert_with(|| json!({})));
            if let Some(Value::Object(p)) = params {
                let meta = p.entry("_meta").or_insert_with(|| json!({}));
                if let Value::Object(m) = meta {
                    m.entry("io.modelcontextprotocol/protocolVersion")
                        .or_insert(json!("2026-07-28"));
                    m.entry("io.modelcontextprotocol/clientCapabilities")
                        .or_insert(json!({}));
                }
            }
        }
        io.to_server
            .push(serde_json::to_vec(&v).unwrap_or_default());
        Flow::Continue
    }
}

fn unsupported_version_32602(v: &mut Value) {
    if error_code(v) == Some(-32022) {
        v["error"]["code"] = json!(-32602);
    }
}

// --- tools -------------------------------------------------------------------------------------

/// Always offers the cursor "again", and serves "again" as the first page: the listing loops.
#[derive(Default)]
struct CursorLoop {
    methods: Methods,
}
impl Fault for CursorLoop {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        match parse(line) {
            Some(mut v) if v.pointer("/params/cursor") == Some(&json!("again")) => {
                if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
                    p.remove("cursor");
                }
                io.to_server
                    .push(serde_json::to_vec(&v).unwrap_or_default());
            }
            _ => io.to_server.push(line.to_vec()),
        }
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        if self.methods.of(&v) == Some("tools/list") {
            if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                r.insert("nextCursor".into(), json!("again"));
            }
        }
        emit(io, &v);
    }
}

/// Serves an unknown cursor as the first page instead of refusing it.
#[derive(Default)]
struct InvalidCursorAccepted {
    issued: HashSet<String>,
}
impl Fault for InvalidCursorAccepted {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        match parse(line) {
            Some(mut v) => {
                let cur = v
                    .pointer("/params/cursor")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if let Some(c) = cur {
                    if !self.issued.contains(&c) {
                        if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
                            p.remove("cursor");
                        }
                    }
                }
                io.to_server
                    .push(serde_json::to_vec(&v).unwrap_or_default());
            }
            None => io.to_server.push(line.to_vec()),
        }
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if let Some(v) = parse(line) {
            if let Some(c) = v.pointer("/result/nextCursor").and_then(Value::as_str) {
                self.issued.insert(c.to_string());
            }
        }
        io.client_line(line);
    }
}

fn null_input_schema(r: &mut Value) {
    if let Some(t) = r.pointer_mut("/tools/0") {
        t["inputSchema"] = Value::Null;
    }
}

fn bad_tool_name(r: &mut Value) {
    if let Some(t) = r.pointer_mut("/tools/0") {
        t["name"] = json!("read file");
    }
}

/// Unknown tool reported as an isError result (B13).
#[derive(Default)]
struct UnknownToolIsError {
    methods: Methods,
}
impl Fault for UnknownToolIsError {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(v) = parse(line) else {
            io.client_line(line);
            return;
        };
        if self.methods.of(&v) == Some("tools/call") && error_code(&v) == Some(-32602) {
            let msg = v.pointer("/error/message").cloned().unwrap_or(json!(""));
            emit(
                io,
                &json!({"jsonrpc": "2.0", "id": v["id"],
                "result": {"content": [{"type": "text", "text": format!("MCP error -32602: {}", msg.as_str().unwrap_or(""))}], "isError": true}}),
            );
            return;
        }
        emit(io, &v);
    }
}

/// Tool input-validation failures turned into -32603 internal errors (B11).
#[derive(Default)]
struct InvalidArgsInternal {
    methods: Methods,
}
impl Fault for InvalidArgsInternal {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        self.methods.note(line);
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(v) = parse(line) else {
            io.client_line(line);
            return;
        };
        let invalid =
            v.pointer("/result/structuredContent/code") == Some(&json!("INVALID_ARGUMENTS"));
        if self.methods.of(&v) == Some("tools/call") && invalid {
            emit(
                io,
                &json!({"jsonrpc": "2.0", "id": v["id"],
                "error": {"code": -32603, "message": "Internal tool error"}}),
            );
            return;
        }
        emit(io, &v);
    }
}

// --- batches and cancellation --------------------------------------------------------------

struct BatchUnsupported;
impl Fault for BatchUnsupported {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if matches!(parse(line), Some(Value::Array(_))) {
            emit(
                io,
                &json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32600, "message": "Invalid Request"}}),
            );
            return Flow::Continue;
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

struct BatchServed;
impl Fault for BatchServed {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        match parse(line) {
            Some(Value::Array(items)) => {
                for i in items {
                    io.to_server
                        .push(serde_json::to_vec(&i).unwrap_or_default());
                }
            }
            _ => io.to_server.push(line.to_vec()),
        }
        Flow::Continue
    }
}

/// After request 0 is cancelled, nothing more is ever written (B08 part A: the server hangs).
#[derive(Default)]
struct CancelZeroStops {
    stopped: bool,
}
impl Fault for CancelZeroStops {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if v.get("method") == Some(&json!("notifications/cancelled"))
                && v.pointer("/params/requestId") == Some(&json!(0))
            {
                self.stopped = true;
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if !self.stopped {
            io.client_line(line);
        }
    }
}

/// Answers a cancelled request anyway, right after the cancellation.
struct CancelAnswered;
impl Fault for CancelAnswered {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if v.get("method") == Some(&json!("notifications/cancelled")) {
                if let Some(id) = v.pointer("/params/requestId") {
                    emit(
                        io,
                        &json!({"jsonrpc": "2.0", "id": id,
                        "result": {"content": [{"type": "text", "text": "done anyway"}], "isError": false, "resultType": "complete"}}),
                    );
                }
                return Flow::Continue;
            }
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

/// Never forwards a cancellation: the cancelled call runs to its end and is answered.
struct CancelIgnored;
impl Fault for CancelIgnored {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if parse(line).is_some_and(|v| v.get("method") == Some(&json!("notifications/cancelled"))) {
            return Flow::Continue;
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

/// Answers a batch with a batch of empty results, in revisions that have no batches.
struct BatchAnsweredAsBatch;
impl Fault for BatchAnsweredAsBatch {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(Value::Array(items)) = parse(line) {
            let answers: Vec<Value> = items
                .iter()
                .filter_map(|i| i.get("id"))
                .map(|id| json!({"jsonrpc": "2.0", "id": id, "result": {}}))
                .collect();
            emit(io, &Value::Array(answers));
            return Flow::Continue;
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

// --- bad peers (harness robustness, not checks) -----------------------------------------------

struct Hang;
impl Fault for Hang {
    fn on_input(&mut self, _line: &[u8], _io: &mut Io) -> Flow {
        Flow::Continue
    }
    fn at_eof(&mut self) -> AtEof {
        AtEof::Hang
    }
}

struct HugeLine;
impl Fault for HugeLine {
    fn on_start(&mut self, io: &mut Io) {
        let mut l = vec![b'x'; 64 * 1024 * 1024];
        l.push(b'\n');
        io.to_client.push(l);
    }
}

/// Bytes of padding [`LongAnswer`] adds to every `tools/list` result.
pub const LONG_ANSWER_PAD: usize = 256 * 1024;

/// Answers `tools/list` with a line padded past 256 KiB (a `_meta` member of the result): valid
/// JSON-RPC, but over a small `--line-cap`.
struct LongAnswer;
impl Fault for LongAnswer {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        match parse(line) {
            Some(mut v) if v.pointer("/result/tools").is_some() => {
                if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                    r.insert(
                        "_meta".into(),
                        json!({"parity.pad": "x".repeat(LONG_ANSWER_PAD)}),
                    );
                }
                emit(io, &v);
            }
            _ => io.client_line(line),
        }
    }
}

struct BinaryGarbage;
impl Fault for BinaryGarbage {
    fn on_start(&mut self, io: &mut Io) {
        let mut l: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        l.push(b'\n');
        io.to_client.push(l);
    }
}

struct StderrFlood;
impl Fault for StderrFlood {
    fn stderr_flood_bytes(&self) -> u64 {
        256 * 1024 * 1024
    }
}

struct ExitMidCall;
impl Fault for ExitMidCall {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if parse(line).is_some_and(|v| v.get("method") == Some(&json!("tools/call"))) {
            return Flow::Exit(3);
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
}

macro_rules! fault {
    ($name:expr, $desc:expr, [$($trip:expr),*], $make:expr) => {
        FaultInfo { name: $name, description: $desc, trips: &[$($trip),*], make: $make }
    };
}

/// Every fault of the zoo. Entries with no `trips` are bad peers for the harness's own
/// robustness tests (hang, huge line, garbage, floods, early exit); `setsid-child` is served by
/// the binary itself because it needs a process.
pub fn catalogue() -> &'static [FaultInfo] {
    static ZOO: std::sync::OnceLock<Vec<FaultInfo>> = std::sync::OnceLock::new();
    ZOO.get_or_init(|| {
        vec![
            fault!(
                "stdout-banner",
                "prints a plain-text banner on stdout before serving (B01)",
                ["mcp.stdio.stdout-purity"],
                || Box::new(Banner)
            ),
            fault!(
                "json-log-line",
                "writes a structured JSON log line to stdout after every message (B01)",
                ["mcp.stdio.stdout-purity"],
                || Box::new(JsonLog)
            ),
            fault!(
                "pretty-print",
                "pretty-prints every message over several lines (B02)",
                ["mcp.stdio.newline-delimited"],
                || Box::new(Pretty)
            ),
            fault!(
                "content-length",
                "frames messages with LSP Content-Length headers (B02)",
                ["mcp.stdio.newline-delimited", "mcp.stdio.stdout-purity"],
                || Box::new(ContentLength)
            ),
            fault!(
                "bom",
                "starts its first message with a UTF-8 byte-order mark",
                ["mcp.stdio.utf8"],
                || Box::new(Bom { done: false })
            ),
            fault!(
                "latin1",
                "encodes non-ASCII characters as Latin-1 bytes",
                ["mcp.stdio.utf8"],
                || Box::new(Latin1)
            ),
            fault!(
                "jsonrpc-1.0",
                "sends \"jsonrpc\": \"1.0\"",
                ["mcp.base.jsonrpc-version"],
                || Box::new(MapOut(jsonrpc_1))
            ),
            fault!(
                "result-and-error",
                "adds an error member to every result",
                ["mcp.base.result-xor-error"],
                || Box::new(MapOut(result_and_error))
            ),
            fault!(
                "bad-shape",
                "omits serverInfo from the initialize result and capabilities from server/discover",
                ["mcp.base.message-schema"],
                || Box::new(BadShape)
            ),
            fault!(
                "no-result-type",
                "omits resultType from every result",
                ["mcp.modern.result-type"],
                || Box::new(MapOut(strip_result_type))
            ),
            fault!(
                "server-request",
                "sends a roots/list request after every message",
                ["mcp.stdio.server-direction"],
                || Box::new(ServerRequest { n: 0 })
            ),
            fault!(
                "answer-twice",
                "answers every request twice: the copy of each response goes out just before its next message",
                ["mcp.base.duplicate-response"],
                || Box::<AnswerTwice>::default()
            ),
            fault!(
                "id-zero-null",
                "answers request id 0 with id null (B08)",
                ["mcp.base.id-echo"],
                || Box::new(MapOut(id_zero_null))
            ),
            fault!(
                "garbage-exits",
                "exits when a line does not parse (B06)",
                ["mcp.base.parse-error"],
                || Box::new(GarbageExits)
            ),
            fault!(
                "garbage-ignored",
                "drops a line that does not parse without answering, and serves on",
                ["mcp.base.parse-error"],
                || Box::new(GarbageIgnored)
            ),
            fault!(
                "garbage-exits-once",
                "exits on the first unparsable line it ever sees (per PARITY_FAKE_ONCE marker file), then behaves: a flaky server",
                ["mcp.base.parse-error"],
                || Box::new(GarbageExitsOnce)
            ),
            fault!(
                "parse-error-id-zero",
                "answers parse errors with id 0 instead of null (B06)",
                ["mcp.base.parse-error"],
                || Box::new(MapOut(parse_error_id_zero))
            ),
            fault!(
                "null-id-notification",
                "treats a request with id null as a notification and never answers (B08)",
                ["mcp.base.invalid-request"],
                || Box::new(NullIdDropped)
            ),
            fault!(
                "unknown-method-silent",
                "never answers an unknown method",
                ["mcp.base.unknown-method"],
                || Box::new(UnknownMethodSilent)
            ),
            fault!(
                "unknown-method-32602",
                "answers an unknown method with -32602 (B11)",
                ["mcp.base.unknown-method"],
                || Box::new(MapOut(method_not_found_as_32602))
            ),
            fault!(
                "notification-answered",
                "answers every notification with a -32601 error (B09)",
                ["mcp.base.notification-unanswered"],
                || Box::new(NotificationAnswered)
            ),
            fault!(
                "version-echo",
                "echoes whatever protocolVersion initialize asked for (B12)",
                ["mcp.lifecycle.version-negotiation"],
                || Box::<VersionEcho>::default()
            ),
            fault!(
                "ping-nonempty",
                "answers ping with a non-empty result",
                ["mcp.base.ping"],
                || map_result("ping", ping_nonempty)
            ),
            fault!(
                "ignore-eof",
                "keeps running after stdin closes (B18)",
                ["mcp.lifecycle.stdin-eof"],
                || Box::new(IgnoreEof)
            ),
            fault!(
                "write-after-eof",
                "writes a message to stdout after stdin closes (B18)",
                ["mcp.lifecycle.stdin-eof"],
                || Box::new(WriteAfterEof)
            ),
            fault!(
                "discover-no-hints",
                "omits ttlMs and cacheScope from server/discover",
                ["mcp.modern.discover"],
                || map_result("server/discover", discover_missing_hints)
            ),
            fault!(
                "meta-optional",
                "serves requests that carry no _meta protocol version",
                ["mcp.modern.meta-required"],
                || Box::new(MetaOptional)
            ),
            fault!(
                "unsupported-version-32602",
                "answers an unsupported _meta version with -32602 instead of -32022",
                ["mcp.modern.unsupported-version"],
                || Box::new(MapOut(unsupported_version_32602))
            ),
            fault!(
                "cursor-loop",
                "tools/list always offers the same cursor, which serves page one again",
                ["mcp.tools.pagination"],
                || Box::<CursorLoop>::default()
            ),
            fault!(
                "invalid-cursor-accepted",
                "serves an unknown cursor as page one instead of -32602",
                ["mcp.tools.invalid-cursor"],
                || Box::<InvalidCursorAccepted>::default()
            ),
            fault!(
                "null-input-schema",
                "lists its first tool with inputSchema null",
                ["mcp.tools.input-schema"],
                || map_result("tools/list", null_input_schema)
            ),
            fault!(
                "bad-tool-name",
                "lists a tool named \"read file\" (B15)",
                ["mcp.tools.name-format"],
                || map_result("tools/list", bad_tool_name)
            ),
            fault!(
                "unknown-tool-iserror",
                "reports an unknown tool as an isError result (B13)",
                ["mcp.tools.unknown-tool"],
                || Box::<UnknownToolIsError>::default()
            ),
            fault!(
                "invalid-args-internal-error",
                "reports missing tool arguments as -32603 (B11)",
                ["mcp.tools.invalid-arguments"],
                || Box::<InvalidArgsInternal>::default()
            ),
            fault!(
                "batch-unsupported",
                "refuses JSON-RPC batches even at 2025-03-26",
                ["mcp.base.batch"],
                || Box::new(BatchUnsupported)
            ),
            fault!(
                "batch-served",
                "serves the members of a batch one by one in every revision",
                ["mcp.base.batch-rejected"],
                || Box::new(BatchServed)
            ),
            fault!(
                "cancel-zero-stops",
                "stops answering anything after request 0 is cancelled (B08)",
                ["mcp.base.cancellation"],
                || Box::<CancelZeroStops>::default()
            ),
            fault!(
                "cancel-ignored",
                "ignores cancellations: a cancelled call runs to its end and is answered",
                ["mcp.base.cancellation"],
                || Box::new(CancelIgnored)
            ),
            fault!(
                "batch-answered-as-batch",
                "answers a batch with a batch in every revision",
                ["mcp.base.batch-rejected"],
                || Box::new(BatchAnsweredAsBatch)
            ),
            fault!(
                "cancel-answered",
                "answers a cancelled request anyway",
                ["mcp.base.cancellation"],
                || Box::new(CancelAnswered)
            ),
            fault!(
                "hang",
                "reads everything and never answers or exits",
                [],
                || Box::new(Hang)
            ),
            fault!(
                "huge-line",
                "writes a 64 MiB line before serving",
                [],
                || Box::new(HugeLine)
            ),
            fault!(
                "long-answer",
                "answers tools/list with a line over 256 KiB (valid, but over a small --line-cap)",
                [],
                || Box::new(LongAnswer)
            ),
            fault!(
                "binary-garbage",
                "writes 4 KiB of binary garbage before serving",
                [],
                || Box::new(BinaryGarbage)
            ),
            fault!(
                "stderr-flood",
                "writes 256 MiB to stderr while serving",
                [],
                || Box::new(StderrFlood)
            ),
            fault!(
                "exit-mid-call",
                "exits with status 3 when a tools/call arrives",
                [],
                || Box::new(ExitMidCall)
            ),
        ]
        .into_iter()
        .chain(crate::features_zoo::faults())
        .collect()
    })
}
