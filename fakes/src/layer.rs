//! Helpers both zoos (MCP and ACP) build their faults from: reading and writing lines as JSON,
//! rewriting every output message, and remembering which method each request id belongs to.

use crate::{Fault, Io};
use serde_json::{json, Value};
use std::collections::HashMap;

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
