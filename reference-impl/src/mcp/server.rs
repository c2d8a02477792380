//! Envelope handling: JSON-RPC validation, era negotiation, method routing, outcome
//! encoding and cancellation. No tool logic lives here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::task::{AbortHandle, JoinSet};

use super::features;
use super::{
    BATCH_REVISION, LATEST_LEGACY_REVISION, LEGACY_REVISIONS, LIST_TTL_MS, MODERN_REVISION,
};
use crate::dispatcher::{Dispatcher, Outcome, OutcomeKind, ToolCall, ToolDescriptor};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// 2026-07-28 `UnsupportedProtocolVersionError`.
const UNSUPPORTED_VERSION: i64 = -32022;

pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

const CURSOR_PREFIX: &str = "parity-tools:";

const INSTRUCTIONS: &str = "Reference workspace tools for parity: read_file, write_file, list_dir, \
exec (allow-listed argv, time-limited), status and retry. Paths are relative to the workspace root. \
Tool results carry the parity outcome object in structuredContent.";

/// The protocol era of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Era {
    /// 2026-07-28: per-request `_meta`, `server/discover`.
    Modern,
    /// After `initialize`: the negotiated legacy revision.
    Legacy(String),
}

impl Era {
    /// The legacy revision, or `None` at 2026-07-28.
    fn revision(&self) -> Option<&str> {
        match self {
            Era::Modern => None,
            Era::Legacy(rev) => Some(rev),
        }
    }
}

/// Where a finished `tools/call` response goes.
enum Sink {
    /// Straight to the writer.
    Direct(mpsc::UnboundedSender<Vec<u8>>),
    /// Into a batch being assembled.
    Slot(oneshot::Sender<Value>),
}

/// The result of handling one message.
enum Handled {
    /// Nothing to send (notification, client response, or a spawned direct call).
    Nothing,
    /// A response ready now.
    Reply(Value),
    /// A batch element whose response arrives later (dropped sender = cancelled).
    Later(oneshot::Receiver<Value>),
}

/// In-flight `tools/call` requests by id key. Removing an entry is the single point
/// that decides whether a response may still be sent, so a cancellation processed
/// before completion guarantees silence.
#[derive(Default)]
struct Inflight {
    next_ticket: u64,
    entries: HashMap<String, Vec<(u64, Option<AbortHandle>)>>,
}

impl Inflight {
    fn remove(&mut self, key: &str, ticket: u64) -> bool {
        let Some(list) = self.entries.get_mut(key) else {
            return false;
        };
        let before = list.len();
        list.retain(|(t, _)| *t != ticket);
        let removed = list.len() != before;
        if list.is_empty() {
            self.entries.remove(key);
        }
        removed
    }
}

type SharedInflight = Arc<Mutex<Inflight>>;

fn lock(inflight: &SharedInflight) -> MutexGuard<'_, Inflight> {
    inflight.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) struct Server {
    dispatcher: Arc<Dispatcher>,
    tools: Vec<ToolDescriptor>,
    queue: mpsc::UnboundedSender<Vec<u8>>,
    page_size: usize,
    server_info: Value,
    era: Era,
    inflight: SharedInflight,
    tasks: JoinSet<()>,
}

fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

fn error_with_data(id: Value, code: i64, message: impl Into<String>, data: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message.into(), "data": data},
    })
}

/// A valid JSON-RPC id for MCP: a string or an integer (never null, never a float).
fn is_valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// A key that keeps `0` and `"0"` apart.
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(format!("s:{s}")),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(format!("n:{n}")),
        _ => None,
    }
}

fn send(queue: &mpsc::UnboundedSender<Vec<u8>>, message: &Value) {
    match serde_json::to_vec(message) {
        // A send error means the writer is gone; the read loop notices separately.
        Ok(bytes) => {
            let _ = queue.send(bytes);
        }
        Err(e) => eprintln!("parity-reference mcp: failed to encode a message: {e}"),
    }
}

/// The `Tool` object for `tools/list`.
fn tool_json(tool: &ToolDescriptor, era: &Era) -> Value {
    let mut t = json!({
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": tool.annotations,
    });
    // `outputSchema` exists from 2025-06-18.
    if !matches!(era, Era::Legacy(r) if r == "2024-11-05" || r == "2025-03-26") {
        t["outputSchema"] = features::outcome_schema();
    }
    t
}

/// The `CallToolResult` for an outcome, or `Err((code, message))` for a protocol error.
fn encode_outcome(outcome: &Outcome) -> Result<Map<String, Value>, (i64, String)> {
    let (text, is_error) = match &outcome.kind {
        OutcomeKind::Ok { value } => (value.to_string(), false),
        OutcomeKind::Refused { message, .. } | OutcomeKind::ToolError { message } => {
            (message.clone(), true)
        }
        OutcomeKind::ProtocolError { code, message } => return Err((*code, message.clone())),
    };
    let mut result = Map::new();
    result.insert("content".into(), json!([{"type": "text", "text": text}]));
    result.insert("structuredContent".into(), outcome.to_json());
    result.insert("isError".into(), Value::Bool(is_error));
    Ok(result)
}

impl Server {
    pub(crate) fn new(
        dispatcher: Arc<Dispatcher>,
        queue: mpsc::UnboundedSender<Vec<u8>>,
        page_size: usize,
        server_name: String,
        server_version: String,
    ) -> Self {
        let tools = dispatcher.tools();
        Server {
            dispatcher,
            tools,
            queue,
            page_size,
            server_info: json!({"name": server_name, "version": server_version}),
            era: Era::Modern,
            inflight: SharedInflight::default(),
            tasks: JoinSet::new(),
        }
    }

    /// Drops finished task results.
    pub(crate) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// Aborts every in-flight call and batch so nothing more is sent, waits for them,
    /// and releases the writer queue.
    pub(crate) async fn shutdown(mut self) {
        let entries = std::mem::take(&mut lock(&self.inflight).entries);
        for handle in entries.into_values().flatten().filter_map(|(_, h)| h) {
            handle.abort();
        }
        self.tasks.shutdown().await;
    }

    /// Answers an unreadable or over-long line.
    pub(crate) fn reply_parse_error(&self) {
        send(&self.queue, &error(Value::Null, PARSE_ERROR, "Parse error"));
    }

    /// Handles one input line.
    pub(crate) fn handle_line(&mut self, bytes: &[u8]) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let parsed = std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(text).ok());
        let Some(message) = parsed else {
            self.reply_parse_error();
            return;
        };
        match message {
            Value::Array(items) => self.handle_batch(items),
            single => match self.handle_message(single, false) {
                Handled::Reply(reply) => send(&self.queue, &reply),
                Handled::Nothing | Handled::Later(_) => {}
            },
        }
    }

    fn handle_batch(&mut self, items: Vec<Value>) {
        let allowed = matches!(&self.era, Era::Legacy(rev) if rev == BATCH_REVISION);
        if !allowed {
            send(
                &self.queue,
                &error(
                    Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: batches are not supported in this protocol revision",
                ),
            );
            return;
        }
        if items.is_empty() {
            send(
                &self.queue,
                &error(Value::Null, INVALID_REQUEST, "Invalid Request: empty batch"),
            );
            return;
        }
        let mut parts = Vec::new();
        for item in items {
            match self.handle_message(item, true) {
                Handled::Nothing => {}
                Handled::Reply(reply) => parts.push(Handled::Reply(reply)),
                Handled::Later(pending) => parts.push(Handled::Later(pending)),
            }
        }
        if parts.is_empty() {
            return;
        }
        let queue = self.queue.clone();
        self.tasks.spawn(async move {
            let mut replies = Vec::with_capacity(parts.len());
            for part in parts {
                match part {
                    Handled::Reply(reply) => replies.push(reply),
                    Handled::Later(pending) => {
                        if let Ok(reply) = pending.await {
                            replies.push(reply);
                        }
                    }
                    Handled::Nothing => {}
                }
            }
            if !replies.is_empty() {
                send(&queue, &Value::Array(replies));
            }
        });
    }

    /// Validates one JSON-RPC message and routes it.
    fn handle_message(&mut self, message: Value, in_batch: bool) -> Handled {
        let Value::Object(mut obj) = message else {
            return Handled::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: a message must be a JSON object",
            ));
        };
        let id_present = obj.contains_key("id");
        let id = obj.get("id").filter(|id| is_valid_id(id)).cloned();
        let reply_id = id.clone().unwrap_or(Value::Null);
        let version_ok = obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0");

        if !obj.contains_key("method") {
            let has_result = obj.contains_key("result");
            let has_error = obj.contains_key("error");
            if version_ok && has_result != has_error {
                // A response from the client; this server sends no requests.
                return Handled::Nothing;
            }
            let why = if !version_ok {
                "Invalid Request: `jsonrpc` must be \"2.0\""
            } else if has_result {
                "Invalid Request: a response must not carry both `result` and `error`"
            } else {
                "Invalid Request: a message needs `method`, `result` or `error`"
            };
            return Handled::Reply(error(reply_id, INVALID_REQUEST, why));
        }
        if !version_ok {
            return Handled::Reply(error(
                reply_id,
                INVALID_REQUEST,
                "Invalid Request: `jsonrpc` must be \"2.0\"",
            ));
        }
        if id_present && id.is_none() {
            return Handled::Reply(error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: `id` must be a string or an integer",
            ));
        }
        let method = match obj.get("method") {
            Some(Value::String(method)) => method.clone(),
            _ => {
                return Handled::Reply(error(
                    reply_id,
                    INVALID_REQUEST,
                    "Invalid Request: `method` must be a string",
                ));
            }
        };
        let params = obj.remove("params");
        if matches!(&params, Some(p) if !p.is_object() && !p.is_array()) {
            return Handled::Reply(error(
                reply_id,
                INVALID_REQUEST,
                "Invalid Request: `params` must be an object or an array",
            ));
        }
        let Some(id) = id else {
            self.handle_notification(&method, params.as_ref());
            return Handled::Nothing;
        };
        self.handle_request(id, &method, params, in_batch)
    }

    fn handle_notification(&mut self, method: &str, params: Option<&Value>) {
        if method != "notifications/cancelled" {
            return;
        }
        let Some(key) = params.and_then(|p| p.get("requestId")).and_then(id_key) else {
            return;
        };
        let removed = lock(&self.inflight).entries.remove(&key);
        for handle in removed.into_iter().flatten().filter_map(|(_, h)| h) {
            handle.abort();
        }
    }

    fn handle_request(
        &mut self,
        id: Value,
        method: &str,
        params: Option<Value>,
        in_batch: bool,
    ) -> Handled {
        if method == "initialize" {
            if in_batch {
                return Handled::Reply(error(
                    id,
                    INVALID_REQUEST,
                    "Invalid Request: initialize must not be part of a batch",
                ));
            }
            return Handled::Reply(self.initialize(id, params.as_ref()));
        }
        let modern = self.era == Era::Modern;
        let known = if modern {
            matches!(
                method,
                "server/discover" | "tools/list" | "tools/call" | "subscriptions/listen"
            )
        } else {
            matches!(method, "ping" | "tools/list" | "tools/call")
        } || features::handles(method, self.era.revision());
        if !known {
            return Handled::Reply(error(
                id,
                METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            ));
        }
        if modern {
            if let Err(reply) = check_meta(&id, params.as_ref()) {
                return Handled::Reply(reply);
            }
        }
        match method {
            "ping" => Handled::Reply(response(id, json!({}))),
            "server/discover" => {
                let result = Map::from_iter([
                    ("supportedVersions".to_owned(), json!([MODERN_REVISION])),
                    ("capabilities".to_owned(), features::capabilities(None)),
                    ("instructions".to_owned(), Value::from(INSTRUCTIONS)),
                    ("ttlMs".to_owned(), Value::from(LIST_TTL_MS)),
                    ("cacheScope".to_owned(), Value::from("public")),
                ]);
                Handled::Reply(response(id, self.finish(result)))
            }
            "tools/list" => Handled::Reply(self.tools_list(id, params.as_ref())),
            "tools/call" => self.tools_call(id, params, in_batch),
            "subscriptions/listen" => match features::acknowledgement(&id, params.as_ref()) {
                // The stream stays open, with nothing more on it: this server offers no
                // notification type. A `notifications/cancelled` for it ends it, unanswered.
                Ok(ack) => {
                    send(&self.queue, &ack);
                    Handled::Nothing
                }
                Err((code, message)) => Handled::Reply(error(id, code, message)),
            },
            "logging/setLevel" => match features::log_level(params.as_ref()) {
                Ok(level) => {
                    // The one message this server logs, at the level just set (the schema: the
                    // server "should send all logs at this level and higher"), after the answer;
                    // in a batch the answer goes into the batch's reply, which is sent later.
                    let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                        "level": level,
                        "logger": "parity-reference",
                        "data": format!("log level set to {level}"),
                    }});
                    if in_batch {
                        send(&self.queue, &log);
                        return Handled::Reply(response(id, json!({})));
                    }
                    send(&self.queue, &response(id, json!({})));
                    send(&self.queue, &log);
                    Handled::Nothing
                }
                Err((code, message)) => Handled::Reply(error(id, code, message)),
            },
            _ => self.feature(id, method.to_owned(), params, in_batch),
        }
    }

    /// Adds the modern result members (`resultType`, `_meta.serverInfo`).
    fn finish(&self, result: Map<String, Value>) -> Value {
        finish_result(&self.era, &self.server_info, result)
    }

    fn initialize(&mut self, id: Value, params: Option<&Value>) -> Value {
        let Some(params) = params.and_then(Value::as_object) else {
            return error(
                id,
                INVALID_PARAMS,
                "Invalid params: initialize requires a params object",
            );
        };
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return error(
                id,
                INVALID_PARAMS,
                "Invalid params: `protocolVersion` must be a string",
            );
        };
        let chosen = if LEGACY_REVISIONS.contains(&requested) {
            requested
        } else {
            LATEST_LEGACY_REVISION
        };
        self.era = Era::Legacy(chosen.to_owned());
        response(
            id,
            json!({
                "protocolVersion": chosen,
                "capabilities": features::capabilities(Some(chosen)),
                "serverInfo": self.server_info,
                "instructions": INSTRUCTIONS,
            }),
        )
    }

    fn tools_list(&self, id: Value, params: Option<&Value>) -> Value {
        let params = match params {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => {
                return error(
                    id,
                    INVALID_PARAMS,
                    "Invalid params: params must be an object",
                )
            }
        };
        let cursor = params
            .and_then(|p| p.get("cursor"))
            .filter(|c| !c.is_null());
        let start = match cursor {
            None => 0,
            Some(cursor) => match cursor
                .as_str()
                .and_then(|c| decode_cursor(c, self.tools.len()))
            {
                Some(start) => start,
                None => return error(id, INVALID_PARAMS, "Invalid cursor"),
            },
        };
        let size = if self.page_size == 0 {
            self.tools.len()
        } else {
            self.page_size
        };
        let end = start.saturating_add(size).min(self.tools.len());
        let page: Vec<Value> = self
            .tools
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|t| tool_json(t, &self.era))
            .collect();
        let mut result = Map::new();
        result.insert("tools".into(), Value::Array(page));
        if end < self.tools.len() {
            result.insert("nextCursor".into(), Value::from(encode_cursor(end)));
        }
        if self.era == Era::Modern {
            result.insert("ttlMs".into(), Value::from(LIST_TTL_MS));
            result.insert("cacheScope".into(), Value::from("public"));
        }
        response(id, self.finish(result))
    }

    /// Answers a resources, prompts or completion request ([`features::handle`]) from a task:
    /// these read the workspace through the dispatcher.
    fn feature(
        &mut self,
        id: Value,
        method: String,
        params: Option<Value>,
        in_batch: bool,
    ) -> Handled {
        let (slot, later) = if in_batch {
            let (tx, rx) = oneshot::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let dispatcher = Arc::clone(&self.dispatcher);
        let era = self.era.clone();
        let server_info = self.server_info.clone();
        let queue = self.queue.clone();
        let page_size = self.page_size;
        self.tasks.spawn(async move {
            let answer = features::handle(
                &dispatcher,
                &method,
                params.as_ref(),
                era.revision(),
                page_size,
            )
            .await;
            let reply = match answer {
                Ok(result) => response(id, finish_result(&era, &server_info, result)),
                Err((code, message)) => error(id, code, message),
            };
            match slot {
                Some(slot) => {
                    let _ = slot.send(reply);
                }
                None => send(&queue, &reply),
            }
        });
        match later {
            Some(rx) => Handled::Later(rx),
            None => Handled::Nothing,
        }
    }

    fn tools_call(&mut self, id: Value, params: Option<Value>, in_batch: bool) -> Handled {
        let Some(Value::Object(mut params)) = params else {
            return Handled::Reply(error(
                id,
                INVALID_PARAMS,
                "Invalid params: tools/call requires a params object",
            ));
        };
        let Some(Value::String(name)) = params.remove("name") else {
            return Handled::Reply(error(
                id,
                INVALID_PARAMS,
                "Invalid params: `name` must be a string",
            ));
        };
        let arguments = params
            .remove("arguments")
            .unwrap_or_else(|| Value::Object(Map::new()));
        let Some(key) = id_key(&id) else {
            return Handled::Reply(error(Value::Null, INVALID_REQUEST, "Invalid Request"));
        };

        let (sink, later) = if in_batch {
            let (tx, rx) = oneshot::channel();
            (Sink::Slot(tx), Some(rx))
        } else {
            (Sink::Direct(self.queue.clone()), None)
        };
        let ticket = {
            let mut inflight = lock(&self.inflight);
            let ticket = inflight.next_ticket;
            inflight.next_ticket = ticket.wrapping_add(1);
            inflight
                .entries
                .entry(key.clone())
                .or_default()
                .push((ticket, None));
            ticket
        };
        let dispatcher = Arc::clone(&self.dispatcher);
        let inflight = Arc::clone(&self.inflight);
        let era = self.era.clone();
        let server_info = self.server_info.clone();
        let task_key = key.clone();
        let handle = self.tasks.spawn(async move {
            let outcome = dispatcher.call(ToolCall { name, arguments }).await;
            let reply = match encode_outcome(&outcome) {
                Ok(result) => response(id, finish_result(&era, &server_info, result)),
                Err((code, message)) => error(id, code, message),
            };
            let mut guard = lock(&inflight);
            if guard.remove(&task_key, ticket) {
                match sink {
                    Sink::Direct(queue) => send(&queue, &reply),
                    Sink::Slot(slot) => {
                        let _ = slot.send(reply);
                    }
                }
            }
            drop(guard);
        });
        if let Some(list) = lock(&self.inflight).entries.get_mut(&key) {
            if let Some(entry) = list.iter_mut().find(|(t, _)| *t == ticket) {
                entry.1 = Some(handle);
            }
        }
        match later {
            Some(rx) => Handled::Later(rx),
            None => Handled::Nothing,
        }
    }
}

fn finish_result(era: &Era, server_info: &Value, mut result: Map<String, Value>) -> Value {
    if *era == Era::Modern {
        result.insert("resultType".into(), Value::from("complete"));
        result.insert("_meta".into(), json!({ META_SERVER_INFO: server_info }));
    }
    Value::Object(result)
}

fn encode_cursor(start: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{start}"))
}

/// The start index in an opaque cursor, if it is one this server issued for a list of
/// `len` tools.
fn decode_cursor(cursor: &str, len: usize) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let digits = text.strip_prefix(CURSOR_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let start: usize = digits.parse().ok()?;
    (start > 0 && start < len).then_some(start)
}

/// Checks the 2026-07-28 per-request `_meta`: protocol version (present, a string,
/// supported) and client capabilities (present, an object).
pub(crate) fn check_meta(id: &Value, params: Option<&Value>) -> Result<(), Value> {
    let invalid = |message: String| error(id.clone(), INVALID_PARAMS, message);
    let params = match params {
        None => {
            return Err(invalid(format!(
                "Invalid params: missing params._meta with \"{META_PROTOCOL_VERSION}\" and \"{META_CLIENT_CAPABILITIES}\""
            )));
        }
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err(invalid(
                "Invalid params: params must be an object".to_owned(),
            ))
        }
    };
    let meta = match params.get("_meta") {
        None => {
            return Err(invalid(format!(
                "Invalid params: missing params._meta with \"{META_PROTOCOL_VERSION}\" and \"{META_CLIENT_CAPABILITIES}\""
            )));
        }
        Some(Value::Object(meta)) => meta,
        Some(_) => {
            return Err(invalid(
                "Invalid params: params._meta must be an object".to_owned(),
            ))
        }
    };
    match meta.get(META_PROTOCOL_VERSION) {
        None => {
            return Err(invalid(format!(
                "Invalid params: missing params._meta[\"{META_PROTOCOL_VERSION}\"]"
            )));
        }
        Some(Value::String(version)) if version == MODERN_REVISION => {}
        Some(Value::String(version)) => {
            return Err(error_with_data(
                id.clone(),
                UNSUPPORTED_VERSION,
                "Unsupported protocol version",
                json!({"supported": [MODERN_REVISION], "requested": version}),
            ));
        }
        Some(_) => {
            return Err(invalid(format!(
                "Invalid params: params._meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
            )));
        }
    }
    match meta.get(META_CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => Ok(()),
        None => Err(invalid(format!(
            "Invalid params: missing params._meta[\"{META_CLIENT_CAPABILITIES}\"]"
        ))),
        Some(_) => Err(invalid(format!(
            "Invalid params: params._meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"
        ))),
    }
}

impl crate::mcp::framing::LineSurface for Server {
    fn handle_line(&mut self, bytes: &[u8]) {
        Server::handle_line(self, bytes);
    }
    fn reply_parse_error(&self) {
        Server::reply_parse_error(self);
    }
    fn reap(&mut self) {
        Server::reap(self);
    }
    fn shutdown(self) -> impl std::future::Future<Output = ()> + Send {
        Server::shutdown(self)
    }
}
