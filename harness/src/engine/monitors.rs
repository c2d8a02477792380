//! JSON-RPC monitors shared by the MCP and ACP profiles: judgements over the frames of every
//! session of a run (stdout purity, newline framing, UTF-8, the `jsonrpc` member, result xor
//! error, one response per request), and the helpers they read frames with. Each monitor
//! returns one [`Finding`] for the whole run; a profile wraps it in its own check with its own
//! quote (JSON-RPC 2.0; MCP `basic/transports#stdio`; ACP v1 transports).

use crate::engine::check::{Finding, MonitorInput, SessionLog};
use crate::transport::wire::{classify, Dir, Kind};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Whether an inbound line answers a probe with `id`: a response (or error) with that id or a
/// null one, or no `id` at all (an error response may leave it out from 2025-11-25), or a line
/// that is not JSON-RPC (judged by the caller) unless it is part of a message spread over
/// several lines that the driver is still reassembling (the whole message is judged then).
pub fn answers_probe(inb: &crate::protocol::mcp::Inbound, ids: &[Value]) -> bool {
    let Some(v) = inb.value() else {
        return !inb.reassembling;
    };
    if v.is_array() {
        return true;
    }
    if v.get("method").is_some() || (v.get("result").is_none() && v.get("error").is_none()) {
        return false;
    }
    match v.get("id") {
        None | Some(Value::Null) => true,
        Some(id) => ids.contains(id),
    }
}

/// Every stdout line of every session, with its session.
pub fn s2c_all_lines(
    sessions: &[SessionLog],
) -> impl Iterator<Item = (&SessionLog, &crate::transport::wire::Line)> {
    sessions.iter().flat_map(|s| {
        s.events
            .iter()
            .filter(|e| e.dir == Dir::S2c)
            .filter_map(move |e| e.line().map(|l| (s, l)))
    })
}

/// Stdout lines that were kept whole (see [`judgeable`]).
pub fn s2c_lines(
    sessions: &[SessionLog],
) -> impl Iterator<Item = (&SessionLog, &crate::transport::wire::Line)> {
    s2c_all_lines(sessions).filter(|(_, l)| judgeable(l))
}

/// A stdout line as text for evidence, clipped to 200 characters.
pub fn line_text(l: &crate::transport::wire::Line) -> String {
    crate::base::util::clip(&String::from_utf8_lossy(&l.bytes), 200)
}

/// One finding for a monitor's problems: pass when there are none, otherwise a violation
/// saying how many and the first, every problem in the evidence.
pub fn monitor_result(problems: Vec<String>) -> Finding {
    if problems.is_empty() {
        return Finding::pass(Vec::new());
    }
    let n = problems.len();
    let mut ev: Vec<String> = problems.into_iter().take(10).collect();
    if n > 10 {
        ev.push(format!("… and {} more", n - 10));
    }
    Finding::violated(format!("{n} violation(s); first: {}", ev[0]), ev)
}

/// Whether a line is a judgeable frame: over-cap lines are kept only as a prefix, and lines
/// the bounded frame log cut as a prefix too ([`crate::transport::wire::Line::elided`],
/// `crate::transport::framelog`).
pub fn judgeable(l: &crate::transport::wire::Line) -> bool {
    l.bytes.len() as u64 == l.len
}

/// Every stdout line is a JSON-RPC message (MCP `basic/transports#stdio`), worded for MCP.
pub fn stdout_purity(input: &MonitorInput) -> Finding {
    stdout_purity_for(input, false)
}

/// Stdout purity for MCP, or for ACP v1 (`acp`): there a batch is left to
/// `acp.stdio.no-batches` (a robustness rule) and a request may carry a null id, which the v1
/// schema's `RequestId` allows.
pub fn stdout_purity_for(input: &MonitorInput, acp: bool) -> Finding {
    let mut problems = Vec::new();
    let mut unjudged = Vec::new();
    for (s, l) in s2c_all_lines(input.sessions) {
        if !judgeable(l) {
            // Only a prefix was kept. A prefix that cannot start a JSON value proves the line
            // is not a message; otherwise the line cannot be judged.
            let starts_json = l
                .bytes
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|b| *b == b'{' || *b == b'[');
            if starts_json && l.elided && !l.over_cap {
                // Read whole, kept as a prefix by the bounded frame log: the verdict's message
                // counts such lines (`run::kept_note`); nothing here can be said about them.
                continue;
            }
            if starts_json {
                unjudged.push(format!(
                    "[{}] a {}-byte stdout line was kept only as a prefix and could not be judged (raise --line-cap)",
                    s.case, l.len
                ));
            } else {
                problems.push(format!(
                    "[{}] a {}-byte stdout line is not an MCP message: {}",
                    s.case,
                    l.len,
                    line_text(l)
                ));
            }
            continue;
        }
        let c = classify(&l.bytes);
        let ok = match &c.kind {
            Kind::Request | Kind::Notification | Kind::Response | Kind::Error => true,
            // From 2025-11-25 the schema's JSONRPCErrorResponse no longer requires `id`: an
            // error response to a request whose id could not be read may leave it out.
            Kind::Invalid(_)
                if !acp
                    && id_optional_on_errors(input.revision)
                    && c.value.as_ref().is_some_and(idless_error) =>
            {
                true
            }
            Kind::Batch => acp || input.revision == "2025-03-26",
            Kind::Invalid(_) => {
                acp && serde_json::from_slice::<Value>(&l.bytes).is_ok_and(|v| {
                    v.get("id") == Some(&Value::Null)
                        && v.get("method").is_some_and(Value::is_string)
                        && crate::transport::wire::classify_value(&json!({
                            "jsonrpc": v.get("jsonrpc").cloned().unwrap_or(Value::Null),
                            "id": 0,
                            "method": v.get("method").cloned().unwrap_or(Value::Null),
                            "params": v.get("params").cloned().unwrap_or(json!({})),
                        })) == Kind::Request
                })
            }
        };
        if !ok {
            let why = match &c.kind {
                Kind::Invalid(w) => w.clone(),
                _ => format!("a batch, which revision {} does not have", input.revision),
            };
            problems.push(format!(
                "[{}] stdout line is not an MCP message ({why}): {}",
                s.case,
                line_text(l)
            ));
        }
    }
    if problems.is_empty() && !unjudged.is_empty() {
        return Finding::advisory(unjudged[0].clone(), unjudged);
    }
    monitor_result(problems)
}

/// Whether `revision`'s schema lets an error response leave out `id` (2025-11-25 and later:
/// `JSONRPCErrorResponse` requires only `jsonrpc` and `error`).
pub fn id_optional_on_errors(revision: &str) -> bool {
    revision >= "2025-11-25"
}

/// Whether `v` is an error response without an `id` member that would be a valid error
/// response with one (`jsonrpc` "2.0", an `error` with an integer `code` and a string `message`).
pub fn idless_error(v: &Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    if o.contains_key("id") || o.contains_key("result") || o.contains_key("method") {
        return false;
    }
    let mut with_id = o.clone();
    with_id.insert("id".into(), Value::Null);
    crate::transport::wire::classify_value(&Value::Object(with_id)) == Kind::Error
}

/// Messages are delimited by newlines and contain no embedded newline (MCP and ACP stdio).
pub fn newline_delimited(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        let lines: Vec<&crate::transport::wire::Line> = s
            .events
            .iter()
            .filter(|e| e.dir == Dir::S2c)
            .filter_map(|e| e.line())
            .filter(|l| judgeable(l))
            .collect();
        for (i, l) in lines.iter().enumerate() {
            let text = String::from_utf8_lossy(&l.bytes);
            if text.to_ascii_lowercase().starts_with("content-length:") {
                problems.push(format!(
                    "[{}] header framing instead of newline-delimited JSON: {}",
                    s.case,
                    line_text(l)
                ));
                continue;
            }
            let parsed = serde_json::from_slice::<Value>(&l.bytes).is_ok();
            if parsed {
                if !l.terminated {
                    problems.push(format!(
                        "[{}] a message was not terminated by a newline: {}",
                        s.case,
                        line_text(l)
                    ));
                }
                continue;
            }
            // Two messages on one line?
            let stream = serde_json::Deserializer::from_slice(&l.bytes).into_iter::<Value>();
            let values: Vec<_> = stream.collect();
            if values.len() > 1 && values.iter().all(Result::is_ok) {
                problems.push(format!(
                    "[{}] several messages on one line: {}",
                    s.case,
                    line_text(l)
                ));
                continue;
            }
            // A message spread over several lines (embedded newlines)?
            let mut joined = l.bytes.clone();
            for next in lines.iter().skip(i + 1).take(200) {
                joined.push(b'\n');
                joined.extend_from_slice(&next.bytes);
                if serde_json::from_slice::<Value>(&joined).is_ok() {
                    problems.push(format!(
                        "[{}] a message contains embedded newlines (it spans several lines), starting: {}",
                        s.case,
                        line_text(l)
                    ));
                    break;
                }
            }
        }
    }
    monitor_result(problems)
}

/// Every stdout line is UTF-8 without a byte-order mark.
pub fn utf8_no_bom(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for (s, l) in s2c_lines(input.sessions) {
        if l.bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            problems.push(format!(
                "[{}] a stdout line starts with a byte-order mark",
                s.case
            ));
        } else if std::str::from_utf8(&l.bytes).is_err() {
            problems.push(format!(
                "[{}] a stdout line is not valid UTF-8: {}",
                s.case,
                line_text(l)
            ));
        }
    }
    monitor_result(problems)
}

/// Parsed stdout messages of a session, batch members flattened.
pub fn s2c_messages(s: &SessionLog) -> Vec<Value> {
    let mut out = Vec::new();
    for e in s.events.iter().filter(|e| e.dir == Dir::S2c) {
        if let Some(l) = e.line() {
            match serde_json::from_slice::<Value>(&l.bytes) {
                Ok(Value::Array(items)) => out.extend(items),
                Ok(v) => out.push(v),
                Err(_) => {}
            }
        }
    }
    out
}

/// Methods of the requests the client sent in a session, by id (as JSON text).
pub fn c2s_methods(s: &SessionLog) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for e in s.events.iter().filter(|e| e.dir == Dir::C2s) {
        let Some(l) = e.line() else { continue };
        let items = match serde_json::from_slice::<Value>(&l.bytes) {
            Ok(Value::Array(items)) => items,
            Ok(v) => vec![v],
            Err(_) => continue,
        };
        for v in items {
            if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str)) {
                map.insert(id.to_string(), m.to_string());
            }
        }
    }
    map
}

fn is_message_like(v: &Value) -> bool {
    v.get("method").is_some() || v.get("result").is_some() || v.get("error").is_some()
}

/// Every message carries `"jsonrpc": "2.0"` (JSON-RPC 2.0 §4, §5).
pub fn jsonrpc_version(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        for v in s2c_messages(s) {
            if v.is_object() && is_message_like(&v) && v.get("jsonrpc") != Some(&json!("2.0")) {
                problems.push(format!(
                    "[{}] `jsonrpc` is {} instead of \"2.0\": {}",
                    s.case,
                    v.get("jsonrpc")
                        .map(Value::to_string)
                        .unwrap_or("absent".into()),
                    crate::base::util::clip(&v.to_string(), 200)
                ));
            }
        }
    }
    monitor_result(problems)
}

/// Every response has exactly one of `result` and `error` (JSON-RPC 2.0 §5).
pub fn result_xor_error(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        for v in s2c_messages(s) {
            let Some(o) = v.as_object() else { continue };
            if o.contains_key("method") || answers_malformed(&v) {
                continue;
            }
            let r = o.contains_key("result");
            let e = o.contains_key("error");
            if r == e && o.contains_key("id") {
                problems.push(format!(
                    "[{}] a response has {} of `result` and `error`: {}",
                    s.case,
                    if r { "both" } else { "neither" },
                    crate::base::util::clip(&v.to_string(), 200)
                ));
            }
        }
    }
    monitor_result(problems)
}

/// The sentence the duplicate-response monitors rest on (JSON-RPC 2.0 §5), as their
/// messages quote it.
pub const ONE_RESPONSE: &str =
    "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.";

/// `mcp.base.duplicate-response` and `acp.base.duplicate-response`: a response to a request
/// id that was already answered, more often than the client sent requests with that id. Each
/// problem names the id, the method and both frames (the first answer and the repeat), with
/// their times. Null ids (parse errors, invalid requests) are never counted, nor responses to
/// ids the client never sent. `peer` is the peer's name in messages (`server`, `agent`).
pub fn duplicate_responses(input: &MonitorInput, peer: &str) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        // id (JSON text) → (requests sent with it, method of the first).
        let mut requested: HashMap<String, (usize, String)> = HashMap::new();
        // id → (responses so far, the first response's time and text).
        let mut answered: HashMap<String, (usize, u128, String)> = HashMap::new();
        for e in &s.events {
            let Some(l) = e.line().filter(|l| judgeable(l)) else {
                continue;
            };
            if e.dir != Dir::C2s && e.dir != Dir::S2c {
                continue;
            }
            let items = match serde_json::from_slice::<Value>(&l.bytes) {
                Ok(Value::Array(items)) => items,
                Ok(v) => vec![v],
                Err(_) => continue,
            };
            for v in items {
                let Some(id) = v.get("id").filter(|id| !id.is_null()) else {
                    continue;
                };
                let key = id.to_string();
                let method = v.get("method").and_then(Value::as_str);
                if e.dir == Dir::C2s {
                    if let Some(m) = method {
                        let entry = requested.entry(key).or_insert((0, m.to_string()));
                        entry.0 += 1;
                    }
                    continue;
                }
                let is_response =
                    method.is_none() && (v.get("result").is_some() || v.get("error").is_some());
                let Some((sent, m)) = requested.get(&key).filter(|_| is_response) else {
                    continue;
                };
                let text = crate::base::util::clip(&v.to_string(), 200);
                let t = e.t.as_millis();
                let entry = answered.entry(key).or_insert((0, t, text.clone()));
                entry.0 += 1;
                if entry.0 > *sent {
                    let times = if *sent == 1 {
                        "once".to_string()
                    } else {
                        format!("{sent} times")
                    };
                    problems.push(format!(
                        "[{}] the {peer} answered request id {id} ({m}), sent {times}, {} times: first at {} ms: {}; again at {t} ms: {text} (JSON-RPC 2.0 §5: \"{ONE_RESPONSE}\": one Response to a request, not two)",
                        s.case, entry.0, entry.1, entry.2
                    ));
                }
            }
        }
    }
    monitor_result(problems)
}

/// The id prefix of the deliberately malformed requests of `mcp.modern.meta-required`: their
/// answers are judged by that check alone, never again by the shape monitors.
pub const MALFORMED_ID: &str = "parity-malformed-";

/// Whether `v` answers one of the deliberately malformed requests ([`MALFORMED_ID`]).
pub fn answers_malformed(v: &Value) -> bool {
    v.get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with(MALFORMED_ID))
}
