//! The ACP v1 client driver (`../shared/spec/acp.md`; <https://agentclientprotocol.com/protocol/v1>).
//!
//! An ACP session is a JSON-RPC 2.0 stream over the agent's stdio, one message per line, read
//! through the same [`Client`] as MCP (raw frames kept, tolerant reading, deadlines). This module
//! adds what is ACP's own:
//!
//! - [`initialize_params`]: v1 `initialize` with an integer `protocolVersion`, `clientInfo`, and
//!   every client capability `false` (parity offers no file system and no terminal);
//! - a fresh agent with `initialize` at version 1 done, for a check: `crate::engine::acp::open`;
//! - [`new_session`], [`prompt`], [`cancel`], [`tool_call`]: the session methods and the
//!   target's tool extension method (default [`DEFAULT_TOOL_METHOD`]);
//! - [`answer_agent_request`]: the deterministic answers to requests the agent sends the client.
//!
//! ACP requests carry no per-request `_meta`: sessions use the plain requests of the
//! `initialize` era of the MCP driver.

use crate::protocol::mcp::{Client, Era, Reply};
use crate::transport::peer::PeerError;
use serde_json::{json, Value};

/// The binding of ACP cases: `check@acp#v1`.
pub const BINDING: &str = "acp";

/// The protocol version ACP cases run at, as it appears in case ids.
pub const REVISION: &str = "v1";

/// The integer protocol version parity speaks (ACP v1).
pub const PROTOCOL_VERSION: u64 = 1;

/// The version probe that no agent supports (the TCK's `ACP-INIT-003`): the agent must answer
/// its own latest version, not an error and not an echo.
pub const UNSUPPORTED_PROBE: u64 = 65535;

/// The tool extension method of the reference agent, used when the target names none.
pub const DEFAULT_TOOL_METHOD: &str = "_parity/tool";

/// The ACP error code "Authentication required" (v1 schema `ErrorCode`, −32000): the agent
/// wants `authenticate` with one of its `authMethods` before the request.
pub const AUTH_REQUIRED: i64 = -32000;

/// The tool method an agent advertises in its `initialize` result: the string at
/// `agentCapabilities._meta.parity.toolMethod` (the reference agent's convention), else
/// [`DEFAULT_TOOL_METHOD`] when `agentCapabilities._meta` names it anywhere (as a key or a
/// string value); `None` when it advertises neither.
pub fn advertised_tool_method(init: &Value) -> Option<String> {
    let meta = init.pointer("/agentCapabilities/_meta")?;
    if let Some(m) = meta.pointer("/parity/toolMethod").and_then(Value::as_str) {
        return Some(m.to_string());
    }
    fn names(v: &Value, needle: &str) -> bool {
        match v {
            Value::String(s) => s == needle,
            Value::Array(a) => a.iter().any(|x| names(x, needle)),
            Value::Object(o) => o.iter().any(|(k, x)| k == needle || names(x, needle)),
            _ => false,
        }
    }
    names(meta, DEFAULT_TOOL_METHOD).then(|| DEFAULT_TOOL_METHOD.to_string())
}

/// Where the tool method a case calls comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMethodSource {
    /// The target declares it (`--tool-method`, or `tool_method` under `[surfaces.acp]`).
    Declared,
    /// The target declares none; the agent advertises it ([`advertised_tool_method`]).
    Advertised,
}

/// The tool method to check: the declared one, else the advertised one; `None` when the target
/// declares none and the agent advertises none (the tool-method checks skip).
pub fn tool_method(declared: Option<&str>, init: &Value) -> Option<(String, ToolMethodSource)> {
    match declared {
        Some(m) => Some((m.to_string(), ToolMethodSource::Declared)),
        None => advertised_tool_method(init).map(|m| (m, ToolMethodSource::Advertised)),
    }
}

/// The skip message of a tool-method check when no tool method is known.
pub const NO_TOOL_METHOD: &str = "the target declares no tool extension method and the agent advertises none under agentCapabilities._meta; to check one, declare it with --tool-method METHOD or `tool_method` under [surfaces.acp]";

/// The `authMethods` ids of an `initialize` result (empty when it lists none).
pub fn auth_method_ids(init: &Value) -> Vec<String> {
    init.get("authMethods")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The stop reasons of a v1 `session/prompt` result (`PromptResponse.stopReason`).
pub const STOP_REASONS: [&str; 5] = [
    "end_turn",
    "max_tokens",
    "max_turn_requests",
    "refusal",
    "cancelled",
];

/// The methods an agent may send the client in v1 (`schema/v1/meta.json`: `clientMethods`
/// plus the protocol-level `$/cancel_request`), requests and notifications.
pub const AGENT_TO_CLIENT_METHODS: [&str; 12] = [
    "session/request_permission",
    "session/update",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/release",
    "terminal/wait_for_exit",
    "terminal/kill",
    "elicitation/create",
    "elicitation/complete",
    "$/cancel_request",
];

/// `initialize` params at `version`: `{"protocolVersion": version, "clientCapabilities": {fs:
/// {readTextFile: false, writeTextFile: false}, terminal: false}, "clientInfo": {name, version}}`.
pub fn initialize_params(version: u64) -> Value {
    json!({
        "protocolVersion": version,
        "clientCapabilities": {
            "fs": {"readTextFile": false, "writeTextFile": false},
            "terminal": false
        },
        "clientInfo": crate::protocol::mcp::client_info(),
    })
}

/// The deterministic answer to a request the agent sent the client:
/// `session/request_permission` → `{"outcome": {"outcome": "cancelled"}}` (parity never grants a
/// permission); every other method (`fs/*`, `terminal/*`, `elicitation/create`, extensions) →
/// −32601, since parity declares none of those capabilities.
pub fn answer_agent_request(req: &Value) -> Value {
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    match req.get("method").and_then(Value::as_str).unwrap_or("") {
        "session/request_permission" => json!({"jsonrpc": "2.0", "id": id,
            "result": {"outcome": {"outcome": "cancelled"}}}),
        _ => json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "Method not found"}}),
    }
}

/// Makes `client` an ACP session: no `_meta` on requests, agent requests answered by
/// [`answer_agent_request`], a one-message batch read as its message.
pub fn as_acp(mut client: Client) -> Client {
    client.era = Era::Legacy;
    client.revision = REVISION.to_string();
    client.answer = answer_agent_request;
    client.unwrap_batches = true;
    client
}

/// The working directory parity sends in `session/new`: the system temporary directory
/// (absolute, exists everywhere).
pub fn session_cwd() -> String {
    let dir = std::env::temp_dir();
    let s = dir.to_string_lossy().into_owned();
    if s.starts_with('/') {
        s
    } else {
        "/tmp".to_string()
    }
}

/// `session/new` with `cwd` ([`session_cwd`]) and the given `mcpServers` array.
///
/// Errors: the request could not be written.
pub async fn new_session(c: &mut Client, mcp_servers: Value) -> Result<Reply, PeerError> {
    c.request(
        "session/new",
        json!({"cwd": session_cwd(), "mcpServers": mcp_servers}),
    )
    .await
}

/// The `sessionId` of a `session/new` reply, when it is a result holding a string id.
pub fn session_id(reply: &Reply) -> Option<String> {
    reply
        .result()
        .and_then(|r| r.get("sessionId"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Prompt params: one `text` content block.
pub fn prompt_params(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

/// `session/prompt` with one text block; waits for the response (updates go to the inbox).
///
/// Errors: the request could not be written.
pub async fn prompt(c: &mut Client, session: &str, text: &str) -> Result<Reply, PeerError> {
    c.request("session/prompt", prompt_params(session, text))
        .await
}

/// The `session/cancel` notification for a session.
///
/// Errors: the notification could not be written.
pub async fn cancel(c: &mut Client, session: &str) -> Result<(), PeerError> {
    c.notify("session/cancel", Some(json!({"sessionId": session})))
        .await
}

/// The placeholder that, as a whole string of a params template, becomes the call's
/// arguments object ([`fill_params`]).
pub const ARGUMENTS_PLACEHOLDER: &str = "{arguments}";

/// The placeholder replaced by the tool's name in a params template's keys and strings.
pub const TOOL_PLACEHOLDER: &str = "{tool}";

/// The placeholder replaced by the session id in a params template's keys and strings (a string that is
/// exactly `{session}` becomes the id, or `null` without a session).
pub const SESSION_PLACEHOLDER: &str = "{session}";

/// The params of one tool-method call: without a template, the ToolCall map
/// `{"name": name, "arguments": arguments}` plus `sessionId` when a session is given; with one
/// (`params` under `[surfaces.acp]`, docs/target.md §"Calls and results in another shape"), the
/// template with every string that is exactly [`ARGUMENTS_PLACEHOLDER`] replaced by `arguments`,
/// [`TOOL_PLACEHOLDER`] replaced by `name` in keys and strings, and [`SESSION_PLACEHOLDER`]
/// by the session id in keys and strings (the empty string without a session; a string that is
/// exactly the placeholder becomes the id, or `null`). Numbers, booleans and nulls are kept as
/// written.
pub fn fill_params(
    template: Option<&Value>,
    session: Option<&str>,
    name: &str,
    arguments: &Value,
) -> Value {
    let Some(t) = template else {
        let mut params = json!({"name": name, "arguments": arguments});
        if let (Some(s), Value::Object(o)) = (session, &mut params) {
            o.insert("sessionId".into(), json!(s));
        }
        return params;
    };
    fn text(s: &str, session: Option<&str>, name: &str) -> String {
        s.replace(TOOL_PLACEHOLDER, name)
            .replace(SESSION_PLACEHOLDER, session.unwrap_or(""))
    }
    fn fill(v: &Value, session: Option<&str>, name: &str, arguments: &Value) -> Value {
        match v {
            Value::String(s) if s == ARGUMENTS_PLACEHOLDER => arguments.clone(),
            Value::String(s) if s == SESSION_PLACEHOLDER => {
                session.map_or(Value::Null, |id| json!(id))
            }
            Value::String(s) => Value::String(text(s, session, name)),
            Value::Array(a) => Value::Array(
                a.iter()
                    .map(|x| fill(x, session, name, arguments))
                    .collect(),
            ),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (text(k, session, name), fill(x, session, name, arguments)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    fill(t, session, name, arguments)
}

/// What is wrong with a params template, if anything: it must be an object, hold
/// [`ARGUMENTS_PLACEHOLDER`] as a whole string somewhere (or the arguments would be lost) and
/// [`TOOL_PLACEHOLDER`] in a key or a string (or every tool would be called alike).
pub fn params_template_problem(t: &Value) -> Option<String> {
    fn has(v: &Value, f: &dyn Fn(&str, bool) -> bool) -> bool {
        match v {
            Value::String(s) => f(s, false),
            Value::Array(a) => a.iter().any(|x| has(x, f)),
            Value::Object(o) => o.iter().any(|(k, x)| f(k, true) || has(x, f)),
            _ => false,
        }
    }
    if !t.is_object() {
        return Some("must be a table (the tool method's params, with placeholders)".into());
    }
    if !has(t, &|s, key| !key && s == ARGUMENTS_PLACEHOLDER) {
        return Some(format!(
            "has no value that is exactly \"{ARGUMENTS_PLACEHOLDER}\" (where the call's arguments object goes)"
        ));
    }
    if !has(t, &|s, _| s.contains(TOOL_PLACEHOLDER)) {
        return Some(format!(
            "has no \"{TOOL_PLACEHOLDER}\" in a key or a string (where the tool's name goes)"
        ));
    }
    None
}

/// Calls a tool through the target's tool extension method, with the params of
/// [`fill_params`] (the ToolCall map by default, or the target's template).
///
/// Errors: the request could not be written.
pub async fn tool_call(
    c: &mut Client,
    method: &str,
    template: Option<&Value>,
    session: Option<&str>,
    name: &str,
    arguments: &Value,
) -> Result<Reply, PeerError> {
    c.request(method, fill_params(template, session, name, arguments))
        .await
}

/// A stdio `mcpServers` entry that any agent can start: this binary's `reference mcp`, with
/// `args` and `env` as arrays (`env` as `{name, value}` objects, per `session-setup`).
pub fn stdio_server_entry() -> Value {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/usr/bin/true".into());
    json!({
        "name": "parity-probe",
        "command": exe,
        "args": ["reference", "mcp"],
        "env": [{"name": "PARITY_PROBE", "value": "1"}],
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn params_default_to_the_tool_call_map() {
        let p = fill_params(None, Some("s1"), "read_file", &json!({"path": "a"}));
        assert_eq!(
            p,
            json!({"name": "read_file", "arguments": {"path": "a"}, "sessionId": "s1"})
        );
        let p = fill_params(None, None, "status", &json!({}));
        assert_eq!(p, json!({"name": "status", "arguments": {}}));
    }

    #[test]
    fn a_template_wraps_the_call_its_own_way() {
        let t = json!({"sessionId": "{session}", "call": {"{tool}": "{arguments}"},
            "label": "tool {tool} in {session}", "n": 3, "flags": ["{tool}", true]});
        let p = fill_params(Some(&t), Some("s1"), "read_file", &json!({"path": "a"}));
        assert_eq!(
            p,
            json!({"sessionId": "s1", "call": {"read_file": {"path": "a"}},
                "label": "tool read_file in s1", "n": 3, "flags": ["read_file", true]})
        );
        // Without a session, a whole `{session}` is null.
        let p = fill_params(Some(&t), None, "x", &json!({}));
        assert_eq!(p["sessionId"], Value::Null);
    }

    #[test]
    fn a_template_must_place_the_arguments_and_the_tool() {
        assert_eq!(
            params_template_problem(&json!({"call": {"{tool}": "{arguments}"}})),
            None
        );
        assert_eq!(
            params_template_problem(&json!({"tool": "{tool}", "args": "{arguments}"})),
            None
        );
        let no_args = params_template_problem(&json!({"tool": "{tool}", "args": "x {arguments}"}));
        assert!(no_args.unwrap().contains("exactly"));
        let no_tool = params_template_problem(&json!({"args": "{arguments}"}));
        assert!(no_tool.unwrap().contains("{tool}"));
        assert!(params_template_problem(&json!("{arguments}")).is_some());
    }
}
