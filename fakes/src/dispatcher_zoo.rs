//! The faulty dispatchers: the reference MCP server or ACP agent, started with a policy file,
//! behind one lifecycle or policy fault each (the `dispatcher` profile's mutant zoo,
//! docs/dispatcher.md).
//!
//! Every fault is one [`OutcomeRewrite`]: a layer that remembers which tool each request
//! calls and rewrites the outcome of its answer (MCP: `structuredContent`, with `isError` and
//! the text content kept consistent; ACP: the tool method's `result`). The same layer works on
//! both surfaces, so each fault is checked through every surface like the clean reference.

use crate::layer::{emit, parse};
use crate::{Fault, Flow, Io};
use serde_json::{json, Value};
use std::collections::HashMap;

/// One faulty dispatcher.
pub struct DispatcherFault {
    /// Name used by `parity fake-dispatcher <name> mcp|acp`.
    pub name: &'static str,
    /// What the fault does, in one sentence.
    pub description: &'static str,
    /// Check ids this fault must make fail.
    pub checks: &'static [&'static str],
    /// Builds a fresh instance.
    pub make: fn() -> Box<dyn Fault>,
}

/// Looks a faulty dispatcher up by name.
pub fn find_dispatcher_fault(name: &str) -> Option<&'static DispatcherFault> {
    dispatcher_catalogue().iter().find(|f| f.name == name)
}

/// What a rewrite does with one answer.
enum Action {
    /// Forward (possibly rewritten).
    Send,
    /// Never answer.
    Drop,
}

/// What the rewrite function sees: the tool, its arguments, the surface, and what the layer
/// remembers of earlier answers.
struct Seen<'a> {
    tool: &'a str,
    acp: bool,
    /// The label of the last `status` answer.
    last_label: &'a mut Option<String>,
}

type Rewrite = fn(&mut Seen<'_>, &mut Value) -> Action;

/// The layer: remembers the tool of every request id and rewrites the outcome of its answer.
struct OutcomeRewrite {
    tools: HashMap<String, String>,
    last_label: Option<String>,
    f: Rewrite,
}

impl OutcomeRewrite {
    fn boxed(f: Rewrite) -> Box<dyn Fault> {
        Box::new(OutcomeRewrite {
            tools: HashMap::new(),
            last_label: None,
            f,
        })
    }
}

impl Fault for OutcomeRewrite {
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        if let Some(v) = parse(line) {
            if let (Some(id), Some(name)) = (
                v.get("id"),
                v.pointer("/params/name").and_then(Value::as_str),
            ) {
                if v.pointer("/params/arguments").is_some() || v.get("method").is_some() {
                    self.tools.insert(id.to_string(), name.to_owned());
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
        let tool = v
            .get("id")
            .filter(|_| v.get("method").is_none())
            .and_then(|id| self.tools.remove(&id.to_string()));
        let Some(tool) = tool else {
            emit(io, &v);
            return;
        };
        let acp = v.pointer("/result/outcome").is_some();
        let pointer = if acp {
            "/result"
        } else {
            "/result/structuredContent"
        };
        let Some(outcome) = v.pointer_mut(pointer) else {
            emit(io, &v);
            return;
        };
        let mut seen = Seen {
            tool: &tool,
            acp,
            last_label: &mut self.last_label,
        };
        let action = (self.f)(&mut seen, outcome);
        if tool == "status" {
            *seen.last_label = outcome
                .pointer("/value/label")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        let outcome = outcome.clone();
        if !acp {
            resync_mcp(&mut v, &outcome);
        }
        match action {
            Action::Send => emit(io, &v),
            Action::Drop => {}
        }
    }
}

/// Keeps an MCP result's `isError` and text content consistent with a rewritten outcome.
fn resync_mcp(v: &mut Value, outcome: &Value) {
    let ok = outcome.get("outcome").and_then(Value::as_str) == Some("ok");
    let text = if ok {
        outcome
            .get("value")
            .map(Value::to_string)
            .unwrap_or_default()
    } else {
        outcome
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
        r.insert("isError".into(), Value::Bool(!ok));
        r.insert("content".into(), json!([{"type": "text", "text": text}]));
    }
}

fn state_of(outcome: &Value) -> Option<&str> {
    outcome.pointer("/value/state").and_then(Value::as_str)
}

fn is_ok(outcome: &Value) -> bool {
    outcome.get("outcome").and_then(Value::as_str) == Some("ok")
}

fn code_of(outcome: &Value) -> Option<&str> {
    outcome.get("code").and_then(Value::as_str)
}

fn set_value(outcome: &mut Value, pointer: &str, new: Value) {
    if let Some(slot) = outcome.pointer_mut(pointer) {
        *slot = new;
    }
}

/// A third label: `starting` while connecting, `failed` in error.
fn third_label(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if matches!(s.tool, "status" | "retry") {
        match state_of(o) {
            Some("connecting") => set_value(o, "/value/label", json!("starting")),
            Some("error") => set_value(o, "/value/label", json!("failed")),
            _ => {}
        }
    }
    Action::Send
}

/// `status` without the reason and the time of the last transition.
fn no_detail(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if matches!(s.tool, "status" | "retry") {
        if let Some(value) = o.get_mut("value").and_then(Value::as_object_mut) {
            value.remove("reason");
            value.remove("since_ms");
        }
    }
    Action::Send
}

/// The session waits on the backend start: no tool call is answered while the backend is
/// not active (the faulty host awaits the start on the session path).
fn blocks_session(s: &mut Seen<'_>, o: &mut Value) -> Action {
    match s.tool {
        "status" | "retry" if state_of(o) == Some("active") => Action::Send,
        "status" | "retry" => Action::Drop,
        _ if s.last_label.as_deref() == Some("active") => Action::Send,
        _ => Action::Drop,
    }
}

/// The budget never settles the state: an overrun still reads `connecting`, no reason.
fn overrun_stays_connecting(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if matches!(s.tool, "status" | "retry")
        && o.pointer("/value/reason").and_then(Value::as_str) == Some("STARTUP_BUDGET_EXCEEDED")
    {
        set_value(o, "/value/state", json!("connecting"));
        set_value(o, "/value/reason", Value::Null);
    }
    Action::Send
}

/// Read-only tools are refused while the backend is not active (the session does not continue).
fn gates_reads(s: &mut Seen<'_>, o: &mut Value) -> Action {
    let not_active = s.last_label.as_deref().is_some_and(|l| l != "active");
    if matches!(s.tool, "read_file" | "list_dir") && not_active && is_ok(o) {
        *o = json!({
            "outcome": "refused",
            "code": "BACKEND_NOT_ACTIVE",
            "message": "backend is not active",
            "warnings": [],
        });
    }
    Action::Send
}

/// Required mode lets mutations through while not active (reported as done).
fn required_allows_writes(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if s.tool == "write_file" && code_of(o) == Some("BACKEND_NOT_ACTIVE") {
        *o = json!({"outcome": "ok", "value": {"bytes_written": 0}, "warnings": []});
    }
    Action::Send
}

/// Advisory mode allows mutations silently: every warning is dropped.
fn advisory_silent(_s: &mut Seen<'_>, o: &mut Value) -> Action {
    if let Some(w) = o.get_mut("warnings") {
        *w = json!([]);
    }
    Action::Send
}

/// `retry` while stopping is not refused: it answers a `connecting` snapshot.
fn retry_stopping_allowed(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if s.tool == "retry" && code_of(o) == Some("RETRY_REFUSED") {
        *o = json!({
            "outcome": "ok",
            "value": {"label": "disconnected", "state": "connecting", "reason": null, "since_ms": 0},
            "warnings": [],
        });
    }
    Action::Send
}

/// `retry` while active restarts the backend: a fresh transition time.
fn retry_restarts_active(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if s.tool == "retry" && state_of(o) == Some("active") {
        let since = o
            .pointer("/value/since_ms")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        set_value(o, "/value/since_ms", json!(since.saturating_add(1_000)));
    }
    Action::Send
}

/// `retry` from error does nothing: the error snapshot comes back unchanged.
fn retry_ignores_error(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if s.tool == "retry"
        && state_of(o) == Some("active")
        && s.last_label.as_deref() != Some("active")
    {
        set_value(o, "/value/label", json!("disconnected"));
        set_value(o, "/value/state", json!("error"));
        set_value(o, "/value/reason", json!("BACKEND_START_FAILED"));
    }
    Action::Send
}

/// Over ACP only, the lifecycle reason is spelled in lower case (the surfaces disagree).
fn acp_reason_lowercase(s: &mut Seen<'_>, o: &mut Value) -> Action {
    if s.acp && matches!(s.tool, "status" | "retry") {
        if let Some(r) = o.pointer("/value/reason").and_then(Value::as_str) {
            let lower = r.to_lowercase();
            set_value(o, "/value/reason", json!(lower));
        }
    }
    Action::Send
}

/// Every faulty dispatcher, with the checks it must make fail.
pub fn dispatcher_catalogue() -> &'static [DispatcherFault] {
    const C: &[DispatcherFault] = &[
        DispatcherFault {
            name: "dispatcher-third-label",
            description: "status shows a third label, `starting` while connecting and `failed` in error",
            checks: &["dispatcher.labels"],
            make: || OutcomeRewrite::boxed(third_label),
        },
        DispatcherFault {
            name: "dispatcher-status-no-detail",
            description: "status carries the label only: no reason, no time of the last transition",
            checks: &["dispatcher.status-detail"],
            make: || OutcomeRewrite::boxed(no_detail),
        },
        DispatcherFault {
            name: "dispatcher-blocks-session",
            description: "the session waits on the backend start: no tool call is answered until the backend is active",
            checks: &["dispatcher.startup-budget"],
            make: || OutcomeRewrite::boxed(blocks_session),
        },
        DispatcherFault {
            name: "dispatcher-overrun-stays-connecting",
            description: "a start that overruns the budget leaves the state `connecting` with no reason",
            checks: &["dispatcher.startup-budget"],
            make: || OutcomeRewrite::boxed(overrun_stays_connecting),
        },
        DispatcherFault {
            name: "dispatcher-gates-reads",
            description: "read-only tools are refused while the backend is not active, so the session stops after an overrun",
            checks: &["dispatcher.session-continues"],
            make: || OutcomeRewrite::boxed(gates_reads),
        },
        DispatcherFault {
            name: "dispatcher-required-allows-writes",
            description: "required mode reports write_file done while the backend is not active",
            checks: &["dispatcher.required-refuses"],
            make: || OutcomeRewrite::boxed(required_allows_writes),
        },
        DispatcherFault {
            name: "dispatcher-advisory-silent",
            description: "advisory mode lets mutations through without the warning",
            checks: &["dispatcher.advisory-warns"],
            make: || OutcomeRewrite::boxed(advisory_silent),
        },
        DispatcherFault {
            name: "dispatcher-retry-stopping-allowed",
            description: "retry while stopping is not refused (it answers a `connecting` snapshot)",
            checks: &["dispatcher.retry-table"],
            make: || OutcomeRewrite::boxed(retry_stopping_allowed),
        },
        DispatcherFault {
            name: "dispatcher-retry-restarts-active",
            description: "retry while active restarts the backend (a new transition time) instead of returning the snapshot",
            checks: &["dispatcher.retry-table"],
            make: || OutcomeRewrite::boxed(retry_restarts_active),
        },
        DispatcherFault {
            name: "dispatcher-retry-ignores-error",
            description: "retry from error does not reconnect: the error snapshot comes back",
            checks: &["dispatcher.retry-table"],
            make: || OutcomeRewrite::boxed(retry_ignores_error),
        },
        DispatcherFault {
            name: "dispatcher-acp-reason-lowercase",
            description: "over ACP only, the lifecycle reason is lower case, so the surfaces disagree",
            checks: &["dispatcher.equivalent"],
            make: || OutcomeRewrite::boxed(acp_reason_lowercase),
        },
    ];
    C
}
