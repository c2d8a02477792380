//! Helpers both zoos (MCP and ACP) build their faults from: reading and writing lines as JSON,
//! rewriting every output message, and remembering which method each request id belongs to.

use crate::{Fault, Flow, Io};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

/// A line as JSON, when it is JSON.
pub(crate) fn parse(line: &[u8]) -> Option<Value> {
    serde_json::from_slice(line).ok()
}

/// Queues `v` for the client as one compact line.
pub(crate) fn emit(io: &mut Io, v: &Value) {
    io.client_line(serde_json::to_vec(v).unwrap_or_default());
}

/// The code of an error response.
pub(crate) fn error_code(v: &Value) -> Option<i64> {
    v.pointer("/error/code").and_then(Value::as_i64)
}

/// An error response to `id`.
pub(crate) fn error_reply(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A fault that rewrites each parsed output message with a function.
pub(crate) struct MapOut(pub(crate) fn(&mut Value));
impl Fault for MapOut {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        match parse(line) {
            Some(mut v) => {
                (self.0)(&mut v);
                emit(io, &v);
            }
            None => io.client_line(line),
        }
    }
}

/// Remembers the method of every client request by id (the id's JSON text, so `0` and `"0"`
/// stay apart), so output rewrites can key on it.
#[derive(Default)]
pub(crate) struct Methods(HashMap<String, String>);
impl Methods {
    /// Notes the method of a request line.
    pub(crate) fn note(&mut self, line: &[u8]) {
        if let Some(v) = parse(line) {
            if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str)) {
                self.0.insert(id.to_string(), m.to_string());
            }
        }
    }
    /// The method of the request a response answers.
    pub(crate) fn of(&self, v: &Value) -> Option<&str> {
        v.get("id")
            .and_then(|id| self.0.get(&id.to_string()))
            .map(String::as_str)
    }
}

/// How many requests a request-flooding peer ([`RequestFlood`]) sends the client in each
/// session, unless [`REQUEST_FLOOD_VAR`] says otherwise.
pub const REQUEST_FLOOD: usize = 10_000;

/// The environment variable that sets how many requests [`RequestFlood`] sends (a decimal
/// integer; anything else means [`REQUEST_FLOOD`]). `parity selftest`, whose deadlines are
/// halved and whose runs go four at a time, sends a smaller flood that still overfills a pipe
/// both ways.
pub const REQUEST_FLOOD_VAR: &str = "PARITY_FAKE_REQUEST_FLOOD";

/// The flood size: [`REQUEST_FLOOD_VAR`] when it is set to a number, else [`REQUEST_FLOOD`].
fn flood_size() -> usize {
    std::env::var(REQUEST_FLOOD_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(REQUEST_FLOOD)
}

/// The id prefix of a flooding peer's requests: the client's answers to them are read and
/// dropped by the layer, never forwarded to the reference.
const FLOOD_ID: &str = "parity-flood-";

/// A correct peer that floods the client with requests while it works: once the `initialize`
/// handshake has been answered, the first client line of real work (anything but a
/// notification named in `quiet`) is held back while [`REQUEST_FLOOD`] requests go out,
/// cycling through `methods`, and the layer reads nothing more until the client has read them
/// all (a single-threaded server that does not read while it writes). Then the line goes to
/// the reference and the session goes on as usual. The client's answers are dropped.
pub(crate) struct RequestFlood {
    /// The request methods of the flood, in turn.
    pub(crate) methods: &'static [&'static str],
    /// Client notifications that do not start the flood (`notifications/initialized`).
    pub(crate) quiet: &'static [&'static str],
    /// Ids of the client's `initialize` requests (JSON text).
    init_ids: HashSet<String>,
    /// The `initialize` handshake was answered with a result.
    initialized: bool,
    /// The flood went out.
    flooded: bool,
}

impl RequestFlood {
    /// A flood of `methods`, not started by the notifications in `quiet`.
    pub(crate) fn new(methods: &'static [&'static str], quiet: &'static [&'static str]) -> Self {
        RequestFlood {
            methods,
            quiet,
            init_ids: HashSet::new(),
            initialized: false,
            flooded: false,
        }
    }
}

impl Fault for RequestFlood {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        let v = parse(line);
        if let Some(v) = &v {
            let answers_flood = v.get("method").is_none()
                && v.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.starts_with(FLOOD_ID));
            if answers_flood {
                return Flow::Continue;
            }
            if v.get("method").and_then(Value::as_str) == Some("initialize") {
                if let Some(id) = v.get("id") {
                    self.init_ids.insert(id.to_string());
                }
            }
        }
        let quiet = v
            .as_ref()
            .and_then(|v| v.get("method"))
            .and_then(Value::as_str)
            .is_some_and(|m| self.quiet.contains(&m));
        if self.initialized && !self.flooded && !quiet && !self.methods.is_empty() {
            self.flooded = true;
            for n in 0..flood_size() {
                let method = self.methods[n % self.methods.len()];
                emit(
                    io,
                    &json!({"jsonrpc": "2.0", "id": format!("{FLOOD_ID}{n}"), "method": method}),
                );
            }
            io.wait_written = true;
        }
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if let Some(v) = parse(line) {
            let answers_init = v.get("result").is_some()
                && v.get("id")
                    .is_some_and(|id| self.init_ids.contains(&id.to_string()));
            if answers_init {
                self.initialized = true;
            }
        }
        io.client_line(line);
    }
}

/// Answers every request twice: each response (with an id that is not null) goes out again
/// just before the next message the peer sends, so the copy reaches the client while it waits
/// for something else — in a shared session, often in the next check's turn.
#[derive(Default)]
pub(crate) struct AnswerTwice {
    held: Option<Vec<u8>>,
}

impl Fault for AnswerTwice {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        if let Some(copy) = self.held.take() {
            io.client_line(copy);
        }
        io.client_line(line);
        let is_answer = parse(line).is_some_and(|v| {
            v.get("method").is_none()
                && v.get("id").is_some_and(|id| !id.is_null())
                && (v.get("result").is_some() || v.get("error").is_some())
        });
        if is_answer {
            self.held = Some(line.to_vec());
        }
    }
}
