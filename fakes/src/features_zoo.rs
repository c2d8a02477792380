//! Faulty and benign peers for the server-feature checks (resources, prompts, completion,
//! logging, cache hints, list stability, tool results, input-required results): each is the
//! reference with one [`Rewrite`] layer that changes its requests or its answers.

use crate::layer::{emit, parse, Methods};
use crate::{BenignInfo, Fault, FaultInfo, Flow, Io};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rewrites the client's requests and the server's answers.
///
/// `input` may change a request in place, or answer it itself (`Some(reply)`, nothing is
/// forwarded). `output` gets the method of the request a response answers (`None` for the
/// server's own notifications), may change the message, and may queue more messages after it.
struct Rewrite {
    methods: Methods,
    input: fn(&mut Value) -> Option<Value>,
    output: fn(Option<&str>, &mut Value, &mut Vec<Value>),
}

impl Fault for Rewrite {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        let Some(mut v) = parse(line) else {
            io.to_server.push(line.to_vec());
            return Flow::Continue;
        };
        self.methods.note(line);
        match (self.input)(&mut v) {
            Some(reply) => emit(io, &reply),
            None => io
                .to_server
                .push(serde_json::to_vec(&v).unwrap_or_default()),
        }
        Flow::Continue
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        let method = self.methods.of(&v).map(str::to_owned);
        let mut more = Vec::new();
        (self.output)(method.as_deref(), &mut v, &mut more);
        emit(io, &v);
        for m in &more {
            emit(io, m);
        }
    }
}

fn keep(_: &mut Value) -> Option<Value> {
    None
}

fn same(_: Option<&str>, _: &mut Value, _: &mut Vec<Value>) {}

fn layer(
    input: fn(&mut Value) -> Option<Value>,
    output: fn(Option<&str>, &mut Value, &mut Vec<Value>),
) -> Box<dyn Fault> {
    Box::new(Rewrite {
        methods: Methods::default(),
        input,
        output,
    })
}

fn method_of(v: &Value) -> &str {
    v.get("method").and_then(Value::as_str).unwrap_or("")
}

fn result_mut<'a>(
    m: Option<&str>,
    want: &str,
    v: &'a mut Value,
) -> Option<&'a mut serde_json::Map<String, Value>> {
    if m != Some(want) {
        return None;
    }
    v.get_mut("result").and_then(Value::as_object_mut)
}

fn error(v: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": v.get("id").cloned().unwrap_or(Value::Null),
           "error": {"code": code, "message": message}})
}

fn is_modern_request(v: &Value) -> bool {
    v.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .is_some()
}

// --- resources ---------------------------------------------------------------------------------

/// A cursor "again" on resources/list (and prompts/list) serves page one again.
fn loop_in(v: &mut Value) -> Option<Value> {
    if matches!(method_of(v), "resources/list" | "prompts/list")
        && v.pointer("/params/cursor") == Some(&json!("again"))
    {
        if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
            p.remove("cursor");
        }
    }
    None
}
fn loop_out(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    for list in ["resources/list", "prompts/list"] {
        if let Some(r) = result_mut(m, list, v) {
            r.insert("nextCursor".into(), json!("again"));
        }
    }
}

/// An unknown resources/list cursor is served as page one.
fn cursor_accepted_in(v: &mut Value) -> Option<Value> {
    if method_of(v) == "resources/list" {
        if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
            p.remove("cursor");
        }
    }
    None
}

fn bad_uri(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "resources/list", v) {
        if let Some(first) = r.get_mut("resources").and_then(|l| l.get_mut(0)) {
            first["uri"] = json!("workspace files/README copy.md");
        }
    }
}

fn bad_blob(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "resources/read", v) {
        if let Some(item) = r
            .get_mut("contents")
            .and_then(|l| l.get_mut(0))
            .and_then(Value::as_object_mut)
        {
            item.remove("text");
            item.insert("blob".into(), json!("this is not base64!"));
        }
    }
}

fn benign_blob(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    use base64::Engine as _;
    if let Some(r) = result_mut(m, "resources/read", v) {
        if let Some(item) = r
            .get_mut("contents")
            .and_then(|l| l.get_mut(0))
            .and_then(Value::as_object_mut)
        {
            let text = item
                .remove("text")
                .and_then(|t| t.as_str().map(str::to_owned))
                .unwrap_or_default();
            item.remove("mimeType");
            item.insert(
                "blob".into(),
                json!(base64::engine::general_purpose::STANDARD.encode(text)),
            );
        }
    }
}

/// How a target declares the tool results of [`status_results`] (`parity fake
/// benign-status-results`): the `[surfaces.mcp.outcome]` table, kind keys only (docs/target.md
/// §"Calls and results in another shape").
pub const STATUS_RESULTS_DECLARATION: &str = r#"[surfaces.mcp.outcome]
kind = "/status"
ok = "ok"
refused = "refused"
tool_error = "error"
value = "/value"
code = "/code"
message = "/message"
warnings = "/notes"
"#;

/// A server that writes its tool results in a shape of its own: the text is
/// `{"status": "ok", "value": V, "notes": [..]}`, `{"status": "refused", "code": C, "message":
/// M, "notes": [..]}` or `{"status": "error", "message": M, "notes": [..]}`, with no
/// structured content (and no `outputSchema` in `tools/list`); `isError` as the reference set
/// it. A correct server: no sentence of the spec names the shape of a tool's own payload.
fn status_results(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "tools/list", v) {
        for t in r
            .get_mut("tools")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(t) = t.as_object_mut() {
                t.remove("outputSchema");
            }
        }
        return;
    }
    let Some(r) = result_mut(m, "tools/call", v) else {
        return;
    };
    let outcome = r.remove("structuredContent").or_else(|| {
        r.get("content")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
    });
    let Some(o) = outcome.filter(|o| o.get("outcome").is_some()) else {
        return;
    };
    let notes = o.get("warnings").cloned().unwrap_or_else(|| json!([]));
    let payload = match o.get("outcome").and_then(Value::as_str) {
        Some("ok") => json!({"status": "ok", "value": o.get("value"), "notes": notes}),
        Some("refused") => {
            json!({"status": "refused", "code": o.get("code"), "message": o.get("message"), "notes": notes})
        }
        _ => json!({"status": "error", "message": o.get("message"), "notes": notes}),
    };
    r.insert(
        "content".into(),
        json!([{"type": "text", "text": payload.to_string()}]),
    );
}

fn bad_template(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "resources/templates/list", v) {
        if let Some(first) = r.get_mut("resourceTemplates").and_then(|l| l.get_mut(0)) {
            first["uriTemplate"] = json!("workspace:///{path");
        }
    }
}

/// resources/templates/list is not served (a server with resources but no templates).
fn no_templates_in(v: &mut Value) -> Option<Value> {
    (method_of(v) == "resources/templates/list")
        .then(|| error(v, -32601, "Method not found: resources/templates/list"))
}

fn not_found_message(v: &Value) -> bool {
    v.pointer("/error/message")
        .and_then(Value::as_str)
        .is_some_and(|m| m.starts_with("Resource not found"))
}

/// "Resource not found" becomes an internal error.
fn not_found_internal(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if m == Some("resources/read") && not_found_message(v) {
        v["error"]["code"] = json!(-32603);
    }
}

/// "Resource not found" keeps the legacy -32002 at 2026-07-28 too.
fn not_found_32002(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if m == Some("resources/read") && not_found_message(v) {
        v["error"]["code"] = json!(-32002);
    }
}

fn subscribe_refused_in(v: &mut Value) -> Option<Value> {
    (method_of(v) == "resources/subscribe").then(|| error(v, -32603, "subscriptions are broken"))
}

// --- prompts -----------------------------------------------------------------------------------

fn prompt_bad_image(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "prompts/get", v) {
        if let Some(list) = r.get_mut("messages").and_then(Value::as_array_mut) {
            list.push(json!({"role": "user", "content": {"type": "image", "data": "%%% not base64 %%%", "mimeType": "image/png"}}));
        }
    }
}

fn prompt_unknown_served_in(v: &mut Value) -> Option<Value> {
    if method_of(v) == "prompts/get" {
        let known = matches!(
            v.pointer("/params/name").and_then(Value::as_str),
            Some("summarize_workspace" | "explain_file")
        );
        if !known {
            v["params"]["name"] = json!("summarize_workspace");
        }
    }
    None
}

fn prompt_missing_internal(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    let missing = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("missing required argument"));
    if m == Some("prompts/get") && missing {
        v["error"]["code"] = json!(-32603);
    }
}

// --- completion --------------------------------------------------------------------------------

fn completion_too_many(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "completion/complete", v) {
        let values: Vec<String> = (0..101).map(|i| format!("value-{i}")).collect();
        r.insert(
            "completion".into(),
            json!({"values": values, "total": 101, "hasMore": false}),
        );
    }
}

fn completion_unknown_served(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if m == Some("completion/complete") && v.pointer("/error/code") == Some(&json!(-32602)) {
        let id = v.get("id").cloned().unwrap_or(Value::Null);
        *v = json!({"jsonrpc": "2.0", "id": id, "result": {"completion": {"values": []}}});
    }
}

// --- logging -----------------------------------------------------------------------------------

fn level_debug_refused_in(v: &mut Value) -> Option<Value> {
    if method_of(v) == "logging/setLevel" && v.pointer("/params/level") == Some(&json!("debug")) {
        return Some(error(v, -32603, "debug logging is unavailable"));
    }
    None
}

fn level_unknown_accepted_in(v: &mut Value) -> Option<Value> {
    if method_of(v) == "logging/setLevel" {
        let known = v
            .pointer("/params/level")
            .and_then(Value::as_str)
            .is_some_and(|l| LEVELS.contains(&l));
        if !known {
            v["params"]["level"] = json!("info");
        }
    }
    None
}

fn log_line(data: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
           "params": {"level": "info", "logger": "parity-fake", "data": data}})
}

/// Logs after every response, asked or not.
fn log_always(m: Option<&str>, _: &mut Value, more: &mut Vec<Value>) {
    if m.is_some() {
        more.push(log_line("handled a request"));
    }
}

/// Logs a message with a made-up level and no data after every response.
fn log_bad_shape(m: Option<&str>, _: &mut Value, more: &mut Vec<Value>) {
    if m.is_some() {
        more.push(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "verbose", "logger": "parity-fake"}}));
    }
}

/// Declares no logging capability, and logs after every response all the same.
fn log_undeclared(m: Option<&str>, v: &mut Value, more: &mut Vec<Value>) {
    if let Some(caps) = v
        .pointer_mut("/result/capabilities")
        .and_then(Value::as_object_mut)
    {
        caps.remove("logging");
    }
    log_always(m, v, more);
}

/// Declares logging at 2026-07-28 but serves requests whatever their `_meta` logLevel.
fn modern_logging_declared(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(caps) = result_mut(m, "server/discover", v)
        .and_then(|r| r.get_mut("capabilities"))
        .and_then(Value::as_object_mut)
    {
        caps.insert("logging".into(), json!({}));
    }
}

use parity_reference::mcp::LOG_LEVELS as LEVELS;

/// A 2026-07-28 request whose `_meta` logLevel is not a level is refused with -32602.
fn modern_level_checked_in(v: &mut Value) -> Option<Value> {
    let level = v.pointer("/params/_meta/io.modelcontextprotocol~1logLevel")?;
    let known = level.as_str().is_some_and(|l| LEVELS.contains(&l));
    (!known && is_modern_request(v)).then(|| error(v, -32602, "Invalid params: unknown logLevel"))
}

/// The `_meta` logLevel of the last 2026-07-28 request, for the response that follows it.
static ASKED_LEVEL: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

fn note_level_in(v: &mut Value) -> Option<Value> {
    let level = v
        .pointer("/params/_meta/io.modelcontextprotocol~1logLevel")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Ok(mut l) = ASKED_LEVEL.lock() {
        *l = level;
    }
    None
}

fn asked_level() -> Option<String> {
    ASKED_LEVEL.lock().ok().and_then(|mut l| l.take())
}

/// Benign: refuses an unknown logLevel, and after the response to a request with a known one
/// logs one message at exactly that level.
fn benign_level_in(v: &mut Value) -> Option<Value> {
    if let Some(refusal) = modern_level_checked_in(v) {
        return Some(refusal);
    }
    note_level_in(v)
}
fn benign_level_out(m: Option<&str>, v: &mut Value, more: &mut Vec<Value>) {
    modern_logging_declared(m, v, more);
    if m.is_some() {
        if let Some(level) = asked_level() {
            more.push(json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": level, "logger": "parity-fake", "data": "handled a request"}}));
        }
    }
}

/// Faulty: logs at debug after the response to any request that asked for a level.
fn below_level_out(m: Option<&str>, v: &mut Value, more: &mut Vec<Value>) {
    modern_logging_declared(m, v, more);
    if m.is_some() && asked_level().is_some() {
        more.push(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "debug", "logger": "parity-fake", "data": "handled a request"}}));
    }
}

// --- subscriptions ------------------------------------------------------------------------------

fn is_ack(v: &Value) -> bool {
    method_of(v) == "notifications/subscriptions/acknowledged"
}

/// A list-change notification goes out on the subscription before its acknowledgement.
fn notify_before_ack(_: Option<&str>, v: &mut Value, more: &mut Vec<Value>) {
    if is_ack(v) {
        let meta = v.pointer("/params/_meta").cloned().unwrap_or(Value::Null);
        let ack = std::mem::replace(
            v,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": meta}}),
        );
        more.push(ack);
    }
}

/// The acknowledgement honours prompt list changes, which nobody asked for.
fn ack_superset(_: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if is_ack(v) {
        if let Some(n) = v
            .pointer_mut("/params/notifications")
            .and_then(Value::as_object_mut)
        {
            n.insert("promptsListChanged".into(), json!(true));
        }
    }
}

// --- input-required retries --------------------------------------------------------------------

const FAKE_STATE: &str = "parity-fake-request-state";

/// A 2026-07-28 prompts/get without requestState asks for input (requestState only: parity
/// declares no client capability); the retry is answered by `retry`.
fn ask_input(v: &mut Value, retry: fn(&mut Value) -> Option<Value>) -> Option<Value> {
    if method_of(v) != "prompts/get" || !is_modern_request(v) {
        return None;
    }
    match v.pointer("/params/requestState") {
        None => Some(
            json!({"jsonrpc": "2.0", "id": v.get("id").cloned().unwrap_or(Value::Null),
            "result": {"resultType": "input_required", "requestState": FAKE_STATE}}),
        ),
        Some(_) => retry(v),
    }
}
fn retry_refused_in(v: &mut Value) -> Option<Value> {
    ask_input(v, |v| Some(error(v, -32603, "request state lost")))
}
fn retry_served_in(v: &mut Value) -> Option<Value> {
    ask_input(v, |v| {
        if v.pointer("/params/requestState") != Some(&json!(FAKE_STATE)) {
            return Some(error(v, -32602, "Invalid params: unknown requestState"));
        }
        if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
            p.remove("requestState");
            p.remove("inputResponses");
        }
        None
    })
}

// --- cache hints, list stability -----------------------------------------------------------------

fn strip_hints(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    for method in ["prompts/list", "resources/read", "resources/list"] {
        if let Some(r) = result_mut(m, method, v) {
            r.remove("ttlMs");
            r.remove("cacheScope");
        }
    }
}

/// How many sessions of this fake the parent process has started, counted in a file named by
/// the parent's pid in the temporary directory (the fake is one process per connection).
fn connection_number() -> usize {
    let parent = std::os::unix::process::parent_id();
    let path = std::env::temp_dir().join(format!("parity-fake-list-varies-{parent}"));
    let n = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let _ = std::fs::write(&path, (n + 1).to_string());
    n
}

static CONNECTION: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Every second connection lists one tool fewer.
fn list_varies(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "tools/list", v) {
        if CONNECTION.load(Ordering::SeqCst) == usize::MAX {
            CONNECTION.store(connection_number(), Ordering::SeqCst);
        }
        if CONNECTION.load(Ordering::SeqCst) % 2 == 1 {
            if let Some(list) = r.get_mut("tools").and_then(Value::as_array_mut) {
                list.pop();
            }
        }
    }
}

static LISTINGS: AtomicUsize = AtomicUsize::new(0);

/// Every second tools/list walk lists the tools in reverse order (one page).
fn order_varies_in(v: &mut Value) -> Option<Value> {
    if method_of(v) == "tools/list" {
        if let Some(p) = v.get_mut("params").and_then(Value::as_object_mut) {
            p.remove("cursor");
        }
    }
    None
}
fn order_varies(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "tools/list", v) {
        r.remove("nextCursor");
        if LISTINGS.fetch_add(1, Ordering::SeqCst) % 2 == 1 {
            if let Some(list) = r.get_mut("tools").and_then(Value::as_array_mut) {
                list.reverse();
            }
        }
    }
}

// --- tool results --------------------------------------------------------------------------------

fn bad_structured(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if let Some(r) = result_mut(m, "tools/call", v) {
        r.insert("structuredContent".into(), json!({"outcome": 5}));
        if let Some(list) = r.get_mut("content").and_then(Value::as_array_mut) {
            list.push(json!({"type": "image", "data": "%%% not base64 %%%"}));
        }
    }
}

// --- input-required results --------------------------------------------------------------------------

fn input_required_on_list(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if m == Some("tools/list") && v.pointer("/result/resultType").is_some() {
        v["result"] = json!({"resultType": "input_required", "inputRequests": {"confirm": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Confirm?", "requestedSchema": {"type": "object"}}
        }}});
    }
}

fn input_required_empty(m: Option<&str>, v: &mut Value, _: &mut Vec<Value>) {
    if m == Some("resources/list") && v.pointer("/result/resultType").is_some() {
        v["result"] = json!({"resultType": "input_required"});
    }
}

macro_rules! fault {
    ($name:expr, $desc:expr, [$($trip:expr),*], $input:expr, $output:expr) => {
        FaultInfo { name: $name, description: $desc, trips: &[$($trip),*], make: || layer($input, $output) }
    };
}

/// The server-feature faults (appended to [`crate::catalogue`]).
pub(crate) fn faults() -> Vec<FaultInfo> {
    vec![
        fault!("resources-cursor-loop", "resources/list and prompts/list always offer the same cursor, which serves page one again", ["mcp.resources.pagination", "mcp.prompts.pagination"], loop_in, loop_out),
        fault!("resources-invalid-cursor-accepted", "serves an unknown resources/list cursor as page one instead of -32602", ["mcp.resources.invalid-cursor"], cursor_accepted_in, same),
        fault!("resource-bad-uri", "lists a resource whose URI has no scheme and holds spaces", ["mcp.resources.uri"], keep, bad_uri),
        fault!("resource-bad-blob", "reads resources as a blob that is not base64", ["mcp.resources.read"], keep, bad_blob),
        fault!("bad-uri-template", "lists the template `workspace:///{path` (an unclosed expression)", ["mcp.resources.template-syntax"], keep, bad_template),
        fault!("resource-not-found-internal", "answers an unknown resource URI with -32603", ["mcp.resources.unknown-uri", "mcp.modern.resource-not-found"], keep, not_found_internal),
        fault!("resource-not-found-32002", "answers an unknown resource URI with -32002 at 2026-07-28 too", ["mcp.modern.resource-not-found"], keep, not_found_32002),
        fault!("resource-subscribe-refused", "declares resources.subscribe but refuses resources/subscribe with -32603", ["mcp.resources.subscribe"], subscribe_refused_in, same),
        fault!("prompt-bad-image", "adds an image message whose data is not base64 to every prompt", ["mcp.prompts.get"], keep, prompt_bad_image),
        fault!("prompt-unknown-served", "serves an unknown prompt name as summarize_workspace", ["mcp.prompts.unknown-name"], prompt_unknown_served_in, same),
        fault!("prompt-missing-argument-internal", "answers a missing required prompt argument with -32603", ["mcp.prompts.missing-argument"], keep, prompt_missing_internal),
        fault!("completion-too-many", "answers every completion with 101 values", ["mcp.completion.complete"], keep, completion_too_many),
        fault!("completion-unknown-served", "answers a completion for an unknown prompt with an empty result", ["mcp.completion.unknown-ref"], keep, completion_unknown_served),
        fault!("log-level-debug-refused", "refuses logging/setLevel debug with -32603", ["mcp.logging.set-level"], level_debug_refused_in, same),
        fault!("log-level-unknown-accepted", "accepts a log level outside RFC 5424 as info", ["mcp.logging.invalid-level"], level_unknown_accepted_in, same),
        fault!("log-undeclared", "sends notifications/message after every response without declaring logging", ["mcp.logging.capability"], keep, log_undeclared),
        fault!("log-unrequested", "sends notifications/message after every response, at 2026-07-28 too where no request asked for one", ["mcp.modern.log-unrequested"], keep, log_always),
        fault!("modern-log-level-ignored", "declares logging at 2026-07-28 and serves a request whose _meta logLevel is no level", ["mcp.modern.log-level-invalid"], keep, modern_logging_declared),
        fault!("log-bad-shape", "sends notifications/message with the level \"verbose\" and no data after every response", ["mcp.logging.message-shape"], keep, log_bad_shape),
        fault!("modern-log-below-level", "declares logging at 2026-07-28 and logs at debug after a request that asked for logLevel error", ["mcp.modern.log-level-honoured"], note_level_in, below_level_out),
        fault!("input-required-retry-refused", "at 2026-07-28 asks for input on prompts/get (requestState only) and refuses the retry with -32603", ["mcp.modern.input-required-retry"], retry_refused_in, same),
        fault!("listen-notify-before-ack", "sends notifications/tools/list_changed on a subscriptions/listen stream before its acknowledgement", ["mcp.modern.subscriptions-ack"], keep, notify_before_ack),
        fault!("listen-ack-superset", "acknowledges prompt list changes that the subscriptions/listen request did not ask for", ["mcp.modern.subscriptions-ack"], keep, ack_superset),
        fault!("list-no-cache-hints", "leaves ttlMs and cacheScope out of prompts/list, resources/list and resources/read at 2026-07-28", ["mcp.modern.cache-hints"], keep, strip_hints),
        fault!("list-varies", "lists one tool fewer on every second connection", ["mcp.modern.list-stable"], keep, list_varies),
        fault!("tools-order-varies", "lists its tools on one page, reversed on every second tools/list", ["mcp.modern.tools-order"], order_varies_in, order_varies),
        fault!("bad-structured-content", "answers tool calls with structuredContent that breaks its outputSchema and an image block that is not base64", ["mcp.tools.structured-content", "mcp.tools.result-content"], keep, bad_structured),
        fault!("input-required-on-list", "answers tools/list at 2026-07-28 with an input_required result asking for elicitation", ["mcp.modern.input-required-methods", "mcp.modern.input-required-undeclared"], keep, input_required_on_list),
        fault!("input-required-empty", "answers resources/list at 2026-07-28 with an input_required result carrying neither inputRequests nor requestState", ["mcp.modern.input-required-shape", "mcp.modern.input-required-methods"], keep, input_required_empty),
    ]
}

/// The server-feature benign peers (appended to [`crate::benign_catalogue`]).
pub(crate) fn benign() -> Vec<BenignInfo> {
    vec![
        BenignInfo {
            name: "benign-resource-blob",
            description: "reads every resource as a base64 blob without a mimeType",
            passes: &["mcp.resources.read", "mcp.base.message-schema"],
            make: || layer(keep, benign_blob),
        },
        BenignInfo {
            name: "benign-no-templates",
            description: "declares resources but answers resources/templates/list with -32601 (it has no templates)",
            passes: &["mcp.resources.pagination", "mcp.completion.complete"],
            make: || layer(no_templates_in, same),
        },
        BenignInfo {
            name: "benign-modern-logging",
            description: "declares logging at 2026-07-28, refuses a request with an unknown _meta logLevel with -32602, logs one message at the level a request asks for, and never logs unasked",
            passes: &["mcp.modern.log-level-invalid", "mcp.modern.log-level-honoured", "mcp.modern.log-unrequested", "mcp.logging.capability", "mcp.logging.message-shape", "mcp.logging.set-level"],
            make: || layer(benign_level_in, benign_level_out),
        },
        BenignInfo {
            name: "benign-status-results",
            description: "writes its tool results in a shape of its own ({\"status\": \"ok\" | \"refused\" | \"error\", …} as text, no structured content, no outputSchema); equivalence passes it once [surfaces.mcp.outcome] declares the shape",
            passes: &["mcp.base.message-schema"],
            make: || layer(keep, status_results),
        },
        BenignInfo {
            name: "benign-input-required",
            description: "at 2026-07-28 asks for input on prompts/get (requestState only) and serves the retry that echoes the state",
            passes: &["mcp.modern.input-required-retry", "mcp.modern.input-required-shape", "mcp.modern.input-required-methods", "mcp.modern.input-required-undeclared", "mcp.prompts.get", "mcp.base.message-schema"],
            make: || layer(retry_served_in, same),
        },
    ]
}
