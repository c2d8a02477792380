//! Envelope handling, param validation, session state, prompt turns and tool-call
//! routing for the ACP agent. No tool logic lives here.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::{ECHO_PREFIX, PROTOCOL_VERSION, WAIT_FOR_CANCEL};
use crate::dispatcher::{Dispatcher, OutcomeKind, ToolCall};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// ACP `ErrorCode` "Request cancelled" (`cancellation.mdx`).
const REQUEST_CANCELLED: i64 = -32800;

const AGENT_TITLE: &str = "parity reference agent";
const TURN_RUNNING: &str = "a prompt turn is already running on this session";

type Queue = mpsc::UnboundedSender<Vec<u8>>;

/// In-flight tool calls by id key. Removing an entry is the single point that decides
/// whether the call's own response may still be sent, so a `$/cancel_request` processed
/// before completion guarantees the −32800 is the only answer.
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

/// One session of this connection.
struct Session {
    /// The working directory given to `session/new` (recorded; the agent runs nothing
    /// there itself).
    #[allow(dead_code, reason = "recorded session configuration, never acted on")]
    cwd: String,
    /// The `mcpServers` entries, recorded but never started.
    #[allow(dead_code, reason = "recorded session configuration, never acted on")]
    mcp_servers: Vec<Value>,
    /// The id of the `wait_for_cancel` prompt whose turn is open, if any.
    open_turn: Option<Value>,
}

/// A −32602 naming `field`, both in the message and in `error.data.field`.
struct FieldError {
    field: String,
    message: String,
}

impl FieldError {
    fn new(field: impl Into<String>, what: &str) -> Self {
        let field = field.into();
        let message = format!("Invalid params: `{field}` {what}");
        FieldError { field, message }
    }

    fn into_reply(self, id: Value) -> Value {
        error_with_data(
            id,
            INVALID_PARAMS,
            self.message,
            json!({"field": self.field}),
        )
    }
}

pub(crate) struct Agent {
    dispatcher: Arc<Dispatcher>,
    queue: Queue,
    tool_method: String,
    agent_info: Value,
    next_session: u64,
    sessions: HashMap<String, Session>,
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

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A request id this agent accepts: a string or an integer (never null, never a float).
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

fn send(queue: &Queue, message: &Value) {
    match serde_json::to_vec(message) {
        // A send error means the writer is gone; the read loop notices separately.
        Ok(bytes) => {
            let _ = queue.send(bytes);
        }
        Err(e) => eprintln!("parity-reference acp: failed to encode a message: {e}"),
    }
}

/// The params object, or a −32602 for anything else (absent, `null`, an array).
fn params_object(params: Option<Value>, method: &str) -> Result<Map<String, Value>, String> {
    match params {
        Some(Value::Object(map)) => Ok(map),
        _ => Err(format!("Invalid params: {method} requires a params object")),
    }
}

fn require_string(obj: &Map<String, Value>, key: &str, path: &str) -> Result<String, FieldError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None => Err(FieldError::new(path, "is required and must be a string")),
        Some(_) => Err(FieldError::new(path, "must be a string")),
    }
}

/// Checks one `mcpServers` entry (`session-setup.mdx`, "MCP Servers").
fn check_mcp_server(entry: &Value, index: usize) -> Result<(), FieldError> {
    let at = format!("mcpServers[{index}]");
    let Value::Object(server) = entry else {
        return Err(FieldError::new(at, "must be an object"));
    };
    match server.get("type") {
        None => {}
        Some(Value::String(t)) if t == "stdio" => {}
        Some(Value::String(t)) if t == "http" || t == "sse" => {
            return Err(FieldError::new(
                at,
                &format!(
                    "uses the `{t}` transport, which this agent does not support (mcpCapabilities.{t} is false)"
                ),
            ));
        }
        Some(_) => {
            return Err(FieldError::new(
                format!("{at}.type"),
                "must be absent (stdio) or one of \"stdio\", \"http\", \"sse\"",
            ));
        }
    }
    require_string(server, "name", &format!("{at}.name"))?;
    require_string(server, "command", &format!("{at}.command"))?;
    match server.get("args") {
        Some(Value::Array(args)) => {
            for (i, arg) in args.iter().enumerate() {
                if !arg.is_string() {
                    return Err(FieldError::new(
                        format!("{at}.args[{i}]"),
                        "must be a string",
                    ));
                }
            }
        }
        None => {
            return Err(FieldError::new(
                format!("{at}.args"),
                "is required and must be an array of strings",
            ))
        }
        Some(_) => {
            return Err(FieldError::new(
                format!("{at}.args"),
                "must be an array of strings",
            ))
        }
    }
    match server.get("env") {
        Some(Value::Array(env)) => {
            for (i, var) in env.iter().enumerate() {
                let var_at = format!("{at}.env[{i}]");
                let Value::Object(var) = var else {
                    return Err(FieldError::new(
                        var_at,
                        "must be an object {\"name\": string, \"value\": string}",
                    ));
                };
                require_string(var, "name", &format!("{var_at}.name"))?;
                require_string(var, "value", &format!("{var_at}.value"))?;
            }
            Ok(())
        }
        None => Err(FieldError::new(
            format!("{at}.env"),
            "is required and must be an array of {\"name\", \"value\"} objects",
        )),
        Some(_) => Err(FieldError::new(
            format!("{at}.env"),
            "must be an array of {\"name\", \"value\"} objects",
        )),
    }
}

/// The joined text of a validated prompt, or the field error.
fn prompt_text(prompt: Option<&Value>) -> Result<String, FieldError> {
    let blocks = match prompt {
        Some(Value::Array(blocks)) => blocks,
        None => {
            return Err(FieldError::new(
                "prompt",
                "is required and must be an array of ContentBlock objects",
            ))
        }
        Some(_) => {
            return Err(FieldError::new(
                "prompt",
                "must be an array of ContentBlock objects",
            ))
        }
    };
    let mut texts = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let kind = block.get("type").and_then(Value::as_str);
        let Some(kind) = kind else {
            return Err(FieldError::new(
                format!("prompt[{i}]"),
                "must be a ContentBlock object with a string `type`",
            ));
        };
        if kind == "text" {
            match block.get("text") {
                Some(Value::String(text)) => texts.push(text.as_str()),
                _ => {
                    return Err(FieldError::new(
                        format!("prompt[{i}].text"),
                        "must be a string in a text block",
                    ))
                }
            }
        }
    }
    Ok(texts.join("\n"))
}

impl Agent {
    pub(crate) fn new(
        dispatcher: Arc<Dispatcher>,
        queue: Queue,
        tool_method: String,
        agent_name: String,
        agent_version: String,
    ) -> Self {
        Agent {
            dispatcher,
            queue,
            tool_method,
            agent_info: json!({"name": agent_name, "title": AGENT_TITLE, "version": agent_version}),
            next_session: 1,
            sessions: HashMap::new(),
            inflight: SharedInflight::default(),
            tasks: JoinSet::new(),
        }
    }

    /// Drops finished task results.
    pub(crate) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// Aborts every in-flight call so nothing more is sent, waits for them, and releases
    /// the writer queue. Open prompt turns are dropped unanswered.
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
        if message.is_array() {
            send(
                &self.queue,
                &error(
                    Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: ACP v1 does not support JSON-RPC batches",
                ),
            );
            return;
        }
        if let Some(reply) = self.handle_message(message) {
            send(&self.queue, &reply);
        }
    }

    /// Validates one JSON-RPC message and routes it; returns an immediate reply, if any.
    fn handle_message(&mut self, message: Value) -> Option<Value> {
        let Value::Object(mut obj) = message else {
            return Some(error(
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
                // A response from the client; this agent sends no requests.
                return None;
            }
            let why = if !version_ok {
                "Invalid Request: `jsonrpc` must be \"2.0\""
            } else if has_result {
                "Invalid Request: a response must not carry both `result` and `error`"
            } else {
                "Invalid Request: a message needs `method`, `result` or `error`"
            };
            return Some(error(reply_id, INVALID_REQUEST, why));
        }
        if !version_ok {
            return Some(error(
                reply_id,
                INVALID_REQUEST,
                "Invalid Request: `jsonrpc` must be \"2.0\"",
            ));
        }
        if id_present && id.is_none() {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: `id` must be a string or an integer",
            ));
        }
        let method = match obj.get("method") {
            Some(Value::String(method)) => method.clone(),
            _ => {
                return Some(error(
                    reply_id,
                    INVALID_REQUEST,
                    "Invalid Request: `method` must be a string",
                ));
            }
        };
        let params = match obj.remove("params") {
            None | Some(Value::Null) => None,
            Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
            Some(_) => {
                return Some(error(
                    reply_id,
                    INVALID_REQUEST,
                    "Invalid Request: `params` must be an object or an array",
                ));
            }
        };
        let Some(id) = id else {
            self.handle_notification(&method, params.as_ref());
            return None;
        };
        self.handle_request(id, &method, params)
    }

    fn handle_notification(&mut self, method: &str, params: Option<&Value>) {
        match method {
            "session/cancel" => {
                let Some(session_id) = params
                    .and_then(|p| p.get("sessionId"))
                    .and_then(Value::as_str)
                else {
                    return;
                };
                let turn = self
                    .sessions
                    .get_mut(session_id)
                    .and_then(|session| session.open_turn.take());
                if let Some(prompt_id) = turn {
                    send(
                        &self.queue,
                        &response(prompt_id, json!({"stopReason": "cancelled"})),
                    );
                }
            }
            "$/cancel_request" => {
                let Some(request_id) = params.and_then(|p| p.get("requestId")) else {
                    return;
                };
                let Some(key) = id_key(request_id) else {
                    return;
                };
                let removed = lock(&self.inflight).entries.remove(&key);
                for (_, handle) in removed.into_iter().flatten() {
                    if let Some(handle) = handle {
                        handle.abort();
                    }
                    send(
                        &self.queue,
                        &error(request_id.clone(), REQUEST_CANCELLED, "Request cancelled"),
                    );
                }
            }
            // Unknown notifications (custom `_…` ones included) are ignored.
            _ => {}
        }
    }

    fn handle_request(&mut self, id: Value, method: &str, params: Option<Value>) -> Option<Value> {
        match method {
            "initialize" => Some(self.initialize(id, params)),
            "session/new" => Some(self.session_new(id, params)),
            "session/prompt" => self.session_prompt(id, params),
            m if m == self.tool_method => self.tool_call(id, params),
            _ => Some(error_with_data(
                id,
                METHOD_NOT_FOUND,
                "Method not found",
                json!({"method": method}),
            )),
        }
    }

    fn initialize(&self, id: Value, params: Option<Value>) -> Value {
        let invalid = |id| {
            FieldError::new("protocolVersion", "must be an integer between 0 and 65535")
                .into_reply(id)
        };
        let Some(Value::Object(params)) = params else {
            return invalid(id);
        };
        let Some(requested) = params
            .get("protocolVersion")
            .and_then(Value::as_u64)
            .filter(|v| *v <= u64::from(u16::MAX))
        else {
            return invalid(id);
        };
        // Version negotiation: echo a supported version, else answer the latest supported.
        let chosen = if requested == PROTOCOL_VERSION {
            requested
        } else {
            PROTOCOL_VERSION
        };
        response(
            id,
            json!({
                "protocolVersion": chosen,
                "agentCapabilities": {
                    "loadSession": false,
                    "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                    "mcpCapabilities": {"http": false, "sse": false},
                    "_meta": {"parity": {"toolMethod": self.tool_method}},
                },
                "authMethods": [],
                "agentInfo": self.agent_info,
            }),
        )
    }

    fn session_new(&mut self, id: Value, params: Option<Value>) -> Value {
        let params = match params_object(params, "session/new") {
            Ok(params) => params,
            Err(message) => return error(id, INVALID_PARAMS, message),
        };
        let cwd = match params.get("cwd") {
            Some(Value::String(cwd)) if Path::new(cwd).is_absolute() => cwd.clone(),
            Some(Value::String(_)) => {
                return FieldError::new("cwd", "must be an absolute path").into_reply(id)
            }
            None => {
                return FieldError::new("cwd", "is required and must be an absolute path string")
                    .into_reply(id)
            }
            Some(_) => {
                return FieldError::new("cwd", "must be a string holding an absolute path")
                    .into_reply(id)
            }
        };
        let servers = match params.get("mcpServers") {
            Some(Value::Array(servers)) => servers,
            None => {
                return FieldError::new(
                    "mcpServers",
                    "is required and must be an array (may be [])",
                )
                .into_reply(id)
            }
            Some(_) => {
                return FieldError::new("mcpServers", "must be an array (may be [])").into_reply(id)
            }
        };
        for (i, server) in servers.iter().enumerate() {
            if let Err(e) = check_mcp_server(server, i) {
                return e.into_reply(id);
            }
        }
        let session_id = format!("sess_{}", self.next_session);
        self.next_session = self.next_session.saturating_add(1);
        self.sessions.insert(
            session_id.clone(),
            Session {
                cwd,
                mcp_servers: servers.clone(),
                open_turn: None,
            },
        );
        response(id, json!({"sessionId": session_id}))
    }

    fn session_prompt(&mut self, id: Value, params: Option<Value>) -> Option<Value> {
        let params = match params_object(params, "session/prompt") {
            Ok(params) => params,
            Err(message) => return Some(error(id, INVALID_PARAMS, message)),
        };
        let (session_id, session) = match params.get("sessionId") {
            Some(Value::String(s)) => match self.sessions.get_mut(s) {
                Some(session) => (s.clone(), session),
                None => {
                    return Some(
                        FieldError::new("sessionId", "does not name a session of this connection")
                            .into_reply(id),
                    )
                }
            },
            None => {
                return Some(
                    FieldError::new("sessionId", "is required and must be a string").into_reply(id),
                )
            }
            Some(_) => {
                return Some(FieldError::new("sessionId", "must be a string").into_reply(id))
            }
        };
        let text = match prompt_text(params.get("prompt")) {
            Ok(text) => text,
            Err(e) => return Some(e.into_reply(id)),
        };
        if session.open_turn.is_some() {
            return Some(error(id, INVALID_REQUEST, TURN_RUNNING));
        }
        if text == WAIT_FOR_CANCEL {
            session.open_turn = Some(id);
            return None;
        }
        send(
            &self.queue,
            &notification(
                "session/update",
                json!({
                    "sessionId": session_id,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": format!("{ECHO_PREFIX}{text}")},
                    },
                }),
            ),
        );
        Some(response(id, json!({"stopReason": "end_turn"})))
    }

    fn tool_call(&mut self, id: Value, params: Option<Value>) -> Option<Value> {
        let Some(Value::Object(mut params)) = params else {
            return Some(
                FieldError::new("name", "must be a string (params must be an object)")
                    .into_reply(id),
            );
        };
        let Some(Value::String(name)) = params.remove("name") else {
            return Some(FieldError::new("name", "must be a string").into_reply(id));
        };
        let arguments = params
            .remove("arguments")
            .unwrap_or_else(|| Value::Object(Map::new()));
        let Some(key) = id_key(&id) else {
            return Some(error(Value::Null, INVALID_REQUEST, "Invalid Request"));
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
        let queue = self.queue.clone();
        let task_key = key.clone();
        let handle = self.tasks.spawn(async move {
            let outcome = dispatcher.call(ToolCall { name, arguments }).await;
            let reply = match &outcome.kind {
                OutcomeKind::ProtocolError { code, message } => error(id, *code, message.clone()),
                _ => response(id, outcome.to_json()),
            };
            let mut guard = lock(&inflight);
            if guard.remove(&task_key, ticket) {
                send(&queue, &reply);
            }
            drop(guard);
        });
        if let Some(list) = lock(&self.inflight).entries.get_mut(&key) {
            if let Some(entry) = list.iter_mut().find(|(t, _)| *t == ticket) {
                entry.1 = Some(handle);
            }
        }
        None
    }
}

impl crate::mcp::framing::LineSurface for Agent {
    fn handle_line(&mut self, bytes: &[u8]) {
        Agent::handle_line(self, bytes);
    }
    fn reply_parse_error(&self) {
        Agent::reply_parse_error(self);
    }
    fn reap(&mut self) {
        Agent::reap(self);
    }
    fn shutdown(self) -> impl std::future::Future<Output = ()> + Send {
        Agent::shutdown(self)
    }
}
