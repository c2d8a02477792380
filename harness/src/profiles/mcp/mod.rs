//! The MCP stdio check catalogue (binding `mcp-stdio`).
//!
//! Every check names the spec sentence its level comes from. Active checks drive fresh sessions;
//! monitors judge the frames of every session of an era (the JSON-RPC ones shared with ACP are
//! [`crate::engine::monitors`]). `docs/checks.md` is generated from the registry's catalogues
//! (`parity list --markdown`) and a test keeps the two equal.
//!
//! Size (1755 lines): the MCP stdio catalogue: every check's declaration (level, quote, section,
//! revisions, gate) and its active function or monitor, side by side so that a check's quote and
//! the code that judges it are read together.

#[cfg(feature = "http")]
pub mod http;
mod profile;
pub use profile::McpProfile;

use crate::engine::check::{
    evidence, Check, CheckKind, Ctx, Finding, Level, MonitorInput, Revs, Status,
};
use crate::engine::monitors::*;
use crate::protocol::mcp::{
    modern_meta, Client, Era, Reply, ALL_REVISIONS, META_CAPS, META_VERSION,
};
use crate::protocol::validate;
use crate::transport::wire::Dir;
use serde_json::{json, Value};
use std::collections::HashSet;

/// The binding these checks run on.
pub const BINDING: &str = crate::engine::check::STDIO_BINDING;

/// The active checks that leave their session as they found it (well-formed requests and
/// notifications only): they share one session per binding and revision
/// ([`crate::engine::check::SessionPool`]). Every other check (garbage, invalid requests, batches,
/// EOF, its own handshakes, cancellation) gets fresh peers.
pub const SHARES_SESSION: &[&str] = &[
    "mcp.base.id-echo",
    "mcp.base.unknown-method",
    "mcp.base.notification-unanswered",
    "mcp.base.ping",
    "mcp.modern.discover",
    "mcp.modern.meta-required",
    "mcp.modern.unsupported-version",
    "mcp.tools.pagination",
    "mcp.tools.invalid-cursor",
    "mcp.tools.input-schema",
    "mcp.tools.name-format",
    "mcp.tools.unknown-tool",
    "mcp.tools.invalid-arguments",
];

/// The checks a run of `target` plans: over stdio, the whole catalogue; over Streamable HTTP
/// (a target with a URL, the `mcp-http` profile), the transport-neutral checks plus the
/// transport's own ([`http::catalogue`]).
pub fn catalogue_for(target: &crate::engine::check::McpTarget) -> crate::engine::run::Catalogue {
    #[cfg(feature = "http")]
    let checks = if target.http.is_some() {
        catalogue()
            .into_iter()
            .filter(|c| !http::stdio_only(c.id))
            .map(http::over_http)
            .chain(http::catalogue())
            .collect()
    } else {
        catalogue()
    };
    // Without HTTP a URL target cannot start a session, which its cases then say.
    #[cfg(not(feature = "http"))]
    let checks = {
        let _ = target;
        catalogue()
    };
    crate::engine::run::Catalogue {
        checks,
        shares_session,
    }
}

/// Runs the MCP profile against a target (`mcp-stdio`, or `mcp-http` when it has a URL): its
/// catalogue ([`catalogue_for`]) plus exactly the given scenarios (none over HTTP).
///
/// Errors: an invalid `--filter`/`--skip` glob (a usage error).
pub async fn run_mcp_with_scenarios(
    target: crate::engine::check::McpTarget,
    opts: &crate::engine::run::RunOptions,
    scenarios: &[std::sync::Arc<crate::engine::scenario::Scenario>],
) -> Result<crate::engine::run::RunReport, String> {
    let catalogue = catalogue_for(&target);
    crate::engine::run::run_mcp_catalogue(target, opts, catalogue, scenarios).await
}

/// Runs the MCP profile against a target with the shipped scenarios
/// (`crate::engine::scenario::shipped`).
///
/// Errors: an invalid `--filter`/`--skip` glob (a usage error).
pub async fn run_mcp(
    target: crate::engine::check::McpTarget,
    opts: &crate::engine::run::RunOptions,
) -> Result<crate::engine::run::RunReport, String> {
    let ids: Vec<&str> = catalogue().iter().map(|c| c.id).collect();
    let scenarios = crate::engine::scenario::load_all(&[], &ids)?;
    run_mcp_with_scenarios(target, opts, &scenarios).await
}

/// Whether the check `id` runs in its binding's shared session ([`SHARES_SESSION`]).
pub fn shares_session(id: &str) -> bool {
    SHARES_SESSION.contains(&id) || features::SHARES_SESSION.contains(&id)
}

macro_rules! active {
    ($f:ident) => {{
        fn wrapper(ctx: &Ctx) -> crate::engine::check::BoxFinding<'_> {
            Box::pin($f(ctx))
        }
        CheckKind::Active(wrapper)
    }};
}

/// Runs `$body(ctx, &mut client)` in a fresh session (handshake done), closes it, and attaches
/// the session's frames as evidence.
macro_rules! in_session {
    ($name:ident, $body:ident) => {
        async fn $name(ctx: &Ctx) -> Finding {
            let mut c = match ctx.open().await {
                Ok(c) => c,
                Err(f) => return f,
            };
            let status = $body(ctx, &mut c).await;
            let events = c.session_events();
            ctx.close(c).await;
            Finding {
                status,
                evidence: evidence(&events),
            }
        }
    };
}

pub mod features;

fn violated(s: impl Into<String>) -> Status {
    Status::Violated(s.into())
}

/// The status for a request that got no response: a timeout is `timeout`; the server closing
/// stdout instead of answering breaks JSON-RPC's "the Server MUST reply with a Response",
/// whatever the check's own level.
fn unanswered(what: &str, reply: &Reply) -> Status {
    match reply {
        Reply::Timeout => Status::Timeout(format!("{what}: no response before the deadline")),
        _ => Status::Failed(format!(
            "{what}: the server closed stdout instead of answering (JSON-RPC 2.0 §5: the Server MUST reply with a Response)"
        )),
    }
}

/// How a server that stopped reading ended: `; it exited: exit status: 1; its stderr: …`
/// (waiting up to 500 ms for the exit), or that it closed its stdin while still running.
async fn how_it_ended(c: &mut Client) -> String {
    let mut status = None;
    for _ in 0..20 {
        status = c.peer.try_exited();
        if status.is_some() || c.peer.pid().is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let tail = crate::engine::run::stderr_and_exit(&c.peer.events());
    match status {
        Some(st) if !tail.contains("it exited") => format!("; it exited: {st}{tail}"),
        Some(_) => tail,
        None if c.peer.pid().is_some() => {
            format!("; it is still running but closed its stdin{tail}")
        }
        None => tail,
    }
}

/// A write to the server failed mid-case (it exited, or closed its stdin): the check could not
/// be judged. The message says how the server ended and quotes its stderr's last lines.
async fn gone(c: &mut Client, e: crate::transport::peer::PeerError) -> Status {
    let why = how_it_ended(c).await;
    Status::NotRun(format!(
        "the server stopped reading mid-case, so the check could not be judged: {e}{why}"
    ))
}

/// Sends the era's probe request and turns "not answered" into a violation message.
async fn serving_or(ctx: &Ctx, c: &mut Client, what: &str) -> Option<Status> {
    match c.request(ctx.probe_method(), json!({})).await {
        Ok(r) if r.result().is_some() => None,
        Ok(Reply::Timeout) => Some(Status::Timeout(format!(
            "after {what}, `{}` got no response before the deadline",
            ctx.probe_method()
        ))),
        Ok(Reply::Eof) => {
            let why = how_it_ended(c).await;
            Some(violated(format!(
                "after {what}, the server closed its stdout instead of answering `{}`{why}",
                ctx.probe_method()
            )))
        }
        Ok(r) => Some(violated(format!(
            "after {what}, the server no longer answered `{}` with a result: {}",
            ctx.probe_method(),
            r.describe()
        ))),
        Err(e) => {
            let why = how_it_ended(c).await;
            Some(violated(format!(
                "after {what}, the server stopped serving: `{}` could not be sent ({e}){why}",
                ctx.probe_method()
            )))
        }
    }
}

fn probe_params(ctx: &Ctx) -> Value {
    match ctx.era {
        Era::Legacy => json!({}),
        Era::Modern => json!({"_meta": modern_meta(&ctx.revision)}),
    }
}

// ---------------------------------------------------------------------------------------------
// Active checks
// ---------------------------------------------------------------------------------------------

async fn id_echo_body(ctx: &Ctx, c: &mut Client) -> Status {
    // Integers beyond ±(2^53 − 1) are valid ids, but RFC 8259 §6 calls them not interoperable:
    // losing one is an advisory, not a failure. It goes last because a peer may drop it silently.
    let ids = [
        (json!(0), false),
        (json!(-1), false),
        (json!(9_007_199_254_740_991_u64), false),
        (json!("1"), false),
        (json!("parity-id-é"), false),
        (json!(9_007_199_254_740_993_u64), true),
    ];
    for (id, beyond_safe) in ids {
        let msg = json!({"jsonrpc": "2.0", "id": id.clone(), "method": ctx.probe_method(),
            "params": probe_params(ctx)});
        if let Err(e) = c.peer.send_json(&msg).await {
            return gone(c, e).await;
        }
        // Any response but the barrier's answers the probe: one with another id or type is
        // the fault this check looks for.
        let b = match c
            .behind_barrier(ctx.probe_method(), |i| {
                i.value().is_some_and(|v| {
                    v.get("method").is_none()
                        && (v.get("result").is_some() || v.get("error").is_some())
                })
            })
            .await
        {
            Ok(b) => b,
            Err(e) => return gone(c, e).await,
        };
        let got = b.answer.as_ref().and_then(|a| a.value()).cloned();
        let refusal = b.http_refusal(&c.peer);
        let msg = match got {
            Some(v) if v.get("id") == Some(&id) => continue,
            Some(v) => format!(
                "request id {id} was answered with id {}: {}",
                v.get("id")
                    .map_or("(no id member)".to_string(), Value::to_string),
                crate::base::util::clip(&v.to_string(), 200)
            ),
            None if beyond_safe && refusal.is_some() => format!(
                "request id {id} was refused by HTTP status with no JSON-RPC response ({})",
                crate::base::util::clip(refusal.as_deref().unwrap_or_default(), 300)
            ),
            None if b.proves_unanswered() && beyond_safe => format!(
                "request id {id} got no response with that id: {}",
                b.describe()
            ),
            None => return no_reply(c, &format!("request id {id}"), &b).await,
        };
        if beyond_safe {
            return Status::Advisory(format!(
                "{msg} (an integer beyond 2^53 - 1: valid, but RFC 8259 §6 warns it is not interoperable)"
            ));
        }
        return violated(msg);
    }
    Status::Pass
}
in_session!(id_echo, id_echo_body);

/// The advisory for a probe that is not a valid request (unparsable, or not a Request object)
/// and that a server over Streamable HTTP refused by HTTP status with no JSON-RPC message in
/// the body (`note` is the bridge's account of that answer). The client is told "no", so this
/// is not the missing reply JSON-RPC 2.0 §5 forbids; but §5 asks for a Response object with
/// `code` (the error the client could read), and the transport pages set no rule of their own
/// for a body that is not a request, so an advisory rather than a pass.
fn bare_refusal_advisory(what: &str, code: &str, note: &str) -> String {
    format!(
        "{what} was refused by HTTP status with no JSON-RPC error response ({}); JSON-RPC 2.0 §5 asks for a Response with an error ({code}) a client can read",
        crate::base::util::clip(note, 300)
    )
}

/// The status of a probe that got no answer, as a wait behind a barrier found it: a fail
/// under JSON-RPC 2.0 §5 ("the Server MUST reply with a Response") only when the barrier proves
/// the server read the probe; `timeout` when nothing at all came; a broken rule when the server
/// exited instead of answering.
async fn no_reply(c: &mut Client, what: &str, b: &crate::protocol::mcp::Barrier) -> Status {
    if let Some(note) = b.http_refusal(&c.peer) {
        return Status::Failed(format!(
            "{what} was refused by HTTP status with no JSON-RPC response ({}): a request gets its Response (JSON-RPC 2.0 §5: the Server MUST reply with a Response)",
            crate::base::util::clip(&note, 300)
        ));
    }
    if b.proves_unanswered() {
        return Status::Failed(format!(
            "{what} got no response: {} (JSON-RPC 2.0 §5: the Server MUST reply with a Response)",
            b.describe()
        ));
    }
    if b.eof {
        let why = how_it_ended(c).await;
        return Status::Failed(format!(
            "{what} got no response: the server closed its stdout instead of answering{why} (JSON-RPC 2.0 §5: the Server MUST reply with a Response)"
        ));
    }
    let http = match c.peer.last_note() {
        Some(n) if c.peer.is_bridged() => format!(" (the last HTTP answer: {n})"),
        _ => String::new(),
    };
    Status::Timeout(format!("{what} got no response: {}{http}", b.describe()))
}

async fn parse_error_body(ctx: &Ctx, c: &mut Client) -> Status {
    let mut advisory = None;
    for garbage in [
        &b"garbage\n"[..],
        &b"{\"jsonrpc\": \"2.0\", \"id\": 7,\n"[..],
    ] {
        if let Err(e) = c.send_raw(garbage).await {
            return gone(c, e).await;
        }
        let what = format!(
            "the unparsable line {:?}",
            String::from_utf8_lossy(garbage).trim_end()
        );
        let b = match c
            .behind_barrier(ctx.probe_method(), |i| answers_probe(i, &[json!(7)]))
            .await
        {
            Ok(b) => b,
            Err(e) => return gone(c, e).await,
        };
        let Some(msg) = &b.answer else {
            if let Some(note) = b.http_refusal(&c.peer) {
                advisory.get_or_insert(bare_refusal_advisory(&what, "-32700", &note));
                continue;
            }
            return no_reply(c, &what, &b).await;
        };
        let Some(v) = msg.value() else {
            return violated(format!(
                "the answer to {what} is not JSON: {}",
                line_text(&msg.line)
            ));
        };
        let Some(err) = v.get("error") else {
            return violated(format!(
                "{what} was answered without an error: {}",
                crate::base::util::clip(&v.to_string(), 200)
            ));
        };
        match v.get("id") {
            Some(Value::Null) => {}
            // From 2025-11-25 an error response may leave out an id it could not read.
            None if id_optional_on_errors(&ctx.revision) => {}
            other => {
                return violated(format!(
                    "the parse-error response's id must be null (JSON-RPC 2.0 §5: if there was an error in detecting the id, it MUST be Null), got {}",
                    other.map_or("no id member".to_string(), Value::to_string)
                ))
            }
        }
        if err.get("code").and_then(Value::as_i64) != Some(-32700) {
            if let Some(s) = serving_or(ctx, c, "a parse error").await {
                return s;
            }
            return Status::Advisory(format!(
                "parse error answered with code {}, not -32700",
                err.get("code")
                    .map_or("(no code)".to_string(), Value::to_string)
            ));
        }
    }
    if let Some(s) = serving_or(ctx, c, "unparsable input").await {
        return s;
    }
    advisory.map(Status::Advisory).unwrap_or(Status::Pass)
}
in_session!(parse_error, parse_error_body);

async fn invalid_request_body(ctx: &Ctx, c: &mut Client) -> Status {
    let m = ctx.probe_method();
    let p = probe_params(ctx);
    let cases: Vec<(Value, Value, &str)> = vec![
        (
            json!({"id": 41, "method": m, "params": p}),
            json!(41),
            "a request without `jsonrpc`",
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": m, "params": p}),
            Value::Null,
            "a request with `\"id\": null`",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 43, "method": m, "params": "x"}),
            json!(43),
            "a request with `\"params\": \"x\"`",
        ),
    ];
    let mut advisory = None;
    for (msg, id, what) in cases {
        if let Err(e) = c.peer.send_json(&msg).await {
            return gone(c, e).await;
        }
        let b = match c
            .behind_barrier(m, |i| answers_probe(i, std::slice::from_ref(&id)))
            .await
        {
            Ok(b) => b,
            Err(e) => return gone(c, e).await,
        };
        let Some(got) = &b.answer else {
            if let Some(note) = b.http_refusal(&c.peer) {
                advisory.get_or_insert(bare_refusal_advisory(what, "-32600", &note));
                continue;
            }
            return no_reply(c, what, &b).await;
        };
        let Some(v) = got.value() else {
            return violated(format!(
                "the answer to {what} is not JSON: {}",
                line_text(&got.line)
            ));
        };
        let rid = v.get("id").cloned().unwrap_or(Value::Null);
        if rid != id && rid != Value::Null {
            return violated(format!(
                "the answer to {what} has id {rid}, expected {id} or null"
            ));
        }
        match v
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
        {
            Some(-32600) | Some(-32602) => {}
            Some(HEADER_MISMATCH) if header_mismatch_applies(ctx, &msg) => {
                note_header_mismatch(ctx, c, what);
            }
            Some(code) => {
                advisory.get_or_insert(format!(
                    "{what} answered with code {code}, expected -32600 or -32602"
                ));
            }
            None => return violated(format!("{what} was served as valid: {v}")),
        }
    }
    if let Some(s) = serving_or(ctx, c, "invalid requests").await {
        return s;
    }
    advisory.map(Status::Advisory).unwrap_or(Status::Pass)
}
in_session!(invalid_request, invalid_request_body);

async fn unknown_method_body(ctx: &Ctx, c: &mut Client) -> Status {
    let reply = match c.request("parity/no-such-method", json!({})).await {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    match reply.error_code() {
        Some(-32601) => serving_or(ctx, c, "an unknown method")
            .await
            .unwrap_or(Status::Pass),
        Some(code) => Status::Advisory(format!(
            "unknown method answered with code {code}, not -32601 (Method not found)"
        )),
        None => violated(format!(
            "unknown method not answered with an error: {}",
            reply.describe()
        )),
    }
}
in_session!(unknown_method, unknown_method_body);

async fn notification_body(ctx: &Ctx, c: &mut Client) -> Status {
    let sends = [
        json!({"jsonrpc": "2.0", "method": "notifications/parity_unknown"}),
        json!({"jsonrpc": "2.0", "method": "notifications/parity_unknown", "params": {"x": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "parity-never-sent"}}),
    ];
    for s in &sends {
        if let Err(e) = c.peer.send_json(s).await {
            return gone(c, e).await;
        }
    }
    let (got, _eof) = c.collect_for(ctx.timing.silence).await;
    // A response repeating an id already answered is an earlier request answered twice
    // (mcp.base.duplicate-response judges it), not an answer to a notification.
    let fresh = |i: &&crate::protocol::mcp::Inbound| !i.repeat;
    let mut all: Vec<Value> = c
        .inbox
        .iter()
        .filter(fresh)
        .filter_map(|i| i.value().cloned())
        .collect();
    all.extend(got.iter().filter(fresh).filter_map(|i| i.value().cloned()));
    if let Some(ans) = all.iter().find(|v| {
        v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
    }) {
        return violated(format!("a notification was answered: {ans}"));
    }
    if let Some(s) = serving_or(ctx, c, "notifications").await {
        return s;
    }
    // An answer that came late, while the probe was under way, counts too.
    if let Some(ans) = c
        .inbox
        .iter()
        .filter(fresh)
        .filter_map(|i| i.value())
        .find(|v| {
            v.get("method").is_none()
                && (v.get("result").is_some() || v.get("error").is_some())
                && v.get("id") != Some(&json!(c.last_id()))
        })
    {
        return violated(format!("a notification was answered: {ans}"));
    }
    Status::Pass
}
in_session!(notification_unanswered, notification_body);

async fn version_negotiation(ctx: &Ctx) -> Finding {
    // The session at the case's revision already proved the echo of a supported version
    // (`Ctx::open` requires it); here an unsupported version must not be echoed.
    let mut c = match ctx.start_raw().await {
        Ok(c) => c,
        Err(f) => return f,
    };
    let first = match c.initialize(&ctx.revision).await {
        Ok(r) => r,
        Err(e) => {
            let (ev, why) = ctx.close_explained(c).await;
            return Finding::not_run(format!("{e}{why}"), ev);
        }
    };
    let (ev, why) = ctx.close_explained(c).await;
    let echoed = first
        .result()
        .and_then(|r| r.get("protocolVersion"))
        .and_then(Value::as_str);
    if echoed != Some(ctx.revision.as_str()) {
        // No answer is no evidence against the rule: the era probe saw this revision echoed.
        let msg = match (&first, echoed) {
            (Reply::Timeout, _) => {
                return Finding {
                    status: Status::Timeout(format!(
                        "initialize at {} got no response{why}; {}",
                        ctx.revision,
                        ctx.startup_advice()
                    )),
                    evidence: ev,
                }
            }
            (Reply::Eof, _) => {
                return Finding::not_run(
                    format!(
                        "the server closed stdout before answering initialize at {}{why}",
                        ctx.revision
                    ),
                    ev,
                )
            }
            (_, Some(v)) => format!(
                "initialize at supported revision {} was answered with protocolVersion {v}",
                ctx.revision
            ),
            (r, None) => format!(
                "initialize at supported revision {} was answered without a protocolVersion: {}",
                ctx.revision,
                r.describe()
            ),
        };
        return Finding::violated(msg, ev);
    }
    let mut c = match ctx.start_raw().await {
        Ok(c) => c,
        Err(f) => return f,
    };
    let reply = match c.initialize("1999-01-01").await {
        Ok(r) => r,
        Err(e) => {
            let (ev, why) = ctx.close_explained(c).await;
            return Finding::not_run(format!("{e}{why}"), ev);
        }
    };
    let (ev, why) = ctx.close_explained(c).await;
    match &reply {
        Reply::Timeout => {
            return Finding {
                status: Status::Timeout(format!(
                    "initialize at the unsupported version 1999-01-01 got no response{why}"
                )),
                evidence: ev,
            }
        }
        Reply::Eof => {
            return Finding {
                status: Status::Failed(format!(
                    "the server closed stdout instead of answering initialize at 1999-01-01{why} (JSON-RPC 2.0 §5: the Server MUST reply with a Response)"
                )),
                evidence: ev,
            }
        }
        Reply::Message(_) => {}
    }
    if let Some(v) = reply.result().and_then(|r| r.get("protocolVersion")) {
        return match v.as_str() {
            Some("1999-01-01") => Finding::violated(
                "the unsupported version 1999-01-01 was echoed instead of a version the server supports",
                ev,
            ),
            Some(s) if ALL_REVISIONS.contains(&s) => {
                if s < ctx.revision.as_str() {
                    Finding::advisory(
                        format!("answered {s}, but the server's latest is {}", ctx.revision),
                        ev,
                    )
                } else {
                    Finding::pass(ev)
                }
            }
            _ => Finding::violated(format!("answered with an unknown version {v}"), ev),
        };
    }
    match reply.error_code() {
        // The lifecycle page's own example for an unsupported version is a -32602 error.
        Some(-32602) => Finding::pass(ev),
        Some(code) => Finding::advisory(
            format!("an unsupported version was refused with code {code}; the spec answers with a supported version (or -32602)"),
            ev,
        ),
        None => Finding::violated(format!("initialize at 1999-01-01: {}", reply.describe()), ev),
    }
}

async fn ping_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let reply = match c.request("ping", json!({})).await {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    match reply.result() {
        Some(Value::Object(o)) if o.keys().all(|k| k == "_meta") => Status::Pass,
        Some(other) => violated(format!("ping result is not empty: {other}")),
        None => violated(format!(
            "ping not answered with a result: {}",
            reply.describe()
        )),
    }
}
in_session!(ping, ping_body);

async fn stdin_eof(ctx: &Ctx) -> Finding {
    let mut c = match ctx.open().await {
        Ok(c) => c,
        Err(f) => return f,
    };
    if let Err(e) = c.request(ctx.probe_method(), json!({})).await {
        let ev = evidence(&c.peer.events());
        ctx.close(c).await;
        return Finding::not_run(e.to_string(), ev);
    }
    // Drain anything pending so only output after EOF counts.
    let _ = c.collect_for(std::time::Duration::from_millis(20)).await;
    let closed_at = c.peer.elapsed();
    let grace = ctx.eof_grace();
    let report = c.peer.shutdown(grace).await;
    let events = c.peer.events();
    ctx.keep(events.clone());
    let mut ev = evidence(&events);
    ev.push(format!(
        "shutdown: {}",
        report
            .steps
            .iter()
            .map(|s| format!("{} at {} ms", s.step, s.at_ms))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let after: Vec<_> = events
        .iter()
        .filter(|e| e.dir == Dir::S2c && e.line().is_some() && e.t > closed_at)
        .collect();
    if !report.exited_on_eof {
        return Finding::violated(
            format!(
                "the server did not exit within {} ms of stdin EOF",
                grace.after_eof.as_millis()
            ),
            ev,
        );
    }
    if let Some(e) = after.first() {
        return Finding::violated(
            format!(
                "the server wrote to stdout after stdin EOF: {}",
                e.excerpt(200)
            ),
            ev,
        );
    }
    Finding::pass(ev)
}

async fn discover_body(ctx: &Ctx, c: &mut Client) -> Status {
    let reply = match c.discover().await {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    let Some(result) = reply.result() else {
        return violated(format!(
            "server/discover not answered with a result: {}",
            reply.describe()
        ));
    };
    let errs = validate::validate_result("server/discover", result, &ctx.revision);
    if !errs.is_empty() {
        return violated(errs.join("; "));
    }
    let listed = result["supportedVersions"]
        .as_array()
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(ctx.revision.as_str())));
    if !listed {
        return violated(format!("supportedVersions does not list {}", ctx.revision));
    }
    Status::Pass
}
in_session!(discover, discover_body);

/// HeaderMismatch (2026-07-28 `streamable-http` "Server Validation").
const HEADER_MISMATCH: i64 = -32020;

/// Whether the request `msg` may rightly be refused with HeaderMismatch (−32020) instead of
/// the JSON-RPC code a check asks for: only over Streamable HTTP at 2026-07-28, where the
/// bridge sends `MCP-Protocol-Version` with the session's revision, and only when the body's
/// `_meta` does not carry that version ("The header value MUST match the
/// `io.modelcontextprotocol/protocolVersion` field carried in the request body's `_meta`. If
/// the values do not match, the server MUST reject the request with `400 Bad Request` and a
/// `HeaderMismatch` JSON-RPC error").
fn header_mismatch_applies(ctx: &Ctx, msg: &Value) -> bool {
    let carried = msg
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    ctx.target.http.is_some() && ctx.era == Era::Modern && carried != Some(ctx.revision.as_str())
}

/// Says in the evidence why a −32020 answer was accepted ([`header_mismatch_applies`]).
fn note_header_mismatch(ctx: &Ctx, c: &Client, what: &str) {
    c.peer.note(format!(
        "{what} got -32020 (HeaderMismatch), accepted: over Streamable HTTP at {} its MCP-Protocol-Version header names a version its `_meta` does not carry, and the transport says the server MUST then reject it with 400 and HeaderMismatch",
        ctx.revision
    ));
}

async fn meta_required_body(ctx: &Ctx, c: &mut Client) -> Status {
    // A method every modern server serves: tools/list when tools are declared, else discover.
    let method = if ctx.declares("tools") {
        "tools/list"
    } else {
        "server/discover"
    };
    let attempts = [
        (json!({}), "a request without `_meta`", true),
        (
            json!({"_meta": {META_VERSION: ctx.revision.clone()}}),
            "a request whose `_meta` lacks clientCapabilities",
            false,
        ),
        (
            json!({"_meta": {META_CAPS: {}}}),
            "a request whose `_meta` lacks protocolVersion",
            false,
        ),
    ];
    let mut advisory = None;
    for (params, what, no_meta) in attempts {
        let id = json!(format!("{MALFORMED_ID}{}", c.fresh_id()));
        let body = json!({"params": params});
        let reply = match c.request_as(id, method, Some(params)).await {
            Ok(r) => r,
            Err(e) => return gone(c, e).await,
        };
        match reply.error_code() {
            Some(-32602) => {}
            Some(HEADER_MISMATCH) if header_mismatch_applies(ctx, &body) => {
                note_header_mismatch(ctx, c, what);
            }
            // A dual-era server may read a request with no `_meta` at all as legacy traffic,
            // where `server/discover` does not exist.
            Some(-32601) if no_meta && method == "server/discover" => {
                advisory = Some(format!(
                    "{what} ({method}) got -32601, as if it were legacy traffic; 2026-07-28 asks for -32602"
                ));
            }
            Some(code) => {
                return violated(format!("{what} ({method}) got code {code}, not -32602"))
            }
            None => {
                return violated(format!(
                    "{what} ({method}) was served: {}",
                    reply.describe()
                ))
            }
        }
    }
    advisory.map(Status::Advisory).unwrap_or(Status::Pass)
}
in_session!(meta_required, meta_required_body);

async fn unsupported_version_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let id = c.fresh_id();
    let params = json!({"_meta": {META_VERSION: "1999-01-01", META_CAPS: {}}});
    let reply = match c.request_as(id, "server/discover", Some(params)).await {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    if reply.error_code() != Some(-32022) {
        return violated(format!(
            "an unsupported `_meta` protocol version was not answered with -32022: {}",
            reply.describe()
        ));
    }
    let data = reply.error().and_then(|e| e.get("data"));
    let supported_ok = data
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string));
    if !supported_ok {
        return violated("error.data.supported is missing or not a non-empty string array");
    }
    if data.and_then(|d| d.get("requested")) != Some(&json!("1999-01-01")) {
        return violated("error.data.requested does not repeat the requested version");
    }
    Status::Pass
}
in_session!(unsupported_version, unsupported_version_body);

/// Lists every tool, following `nextCursor` ([`features::walk`]). Returns the tools and the
/// results, or a status when listing went wrong.
async fn list_all(c: &mut Client) -> Result<(Vec<Value>, Vec<Value>), Status> {
    match features::walk(c, "tools/list", "tools", false).await? {
        Some(w) => Ok((w.items, w.results)),
        None => Ok((Vec::new(), Vec::new())),
    }
}

async fn pagination_body(_ctx: &Ctx, c: &mut Client) -> Status {
    match list_all(c).await {
        Ok((tools, _)) => {
            let mut names = HashSet::new();
            for t in &tools {
                if let Some(n) = t.get("name").and_then(Value::as_str) {
                    if !names.insert(n.to_string()) {
                        return violated(format!("tool {n:?} is listed on more than one page"));
                    }
                }
            }
            Status::Pass
        }
        Err(s) => s,
    }
}
in_session!(pagination, pagination_body);

async fn invalid_cursor_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let reply = match c
        .request(
            "tools/list",
            json!({"cursor": "parity-invalid-cursor-\u{1F50D}"}),
        )
        .await
    {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    match reply.error_code() {
        Some(-32602) => Status::Pass,
        Some(code) => violated(format!("an invalid cursor got code {code}, not -32602")),
        None => violated(format!(
            "an invalid cursor was accepted: {}",
            reply.describe()
        )),
    }
}
in_session!(invalid_cursor, invalid_cursor_body);

async fn input_schema_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let tools = match list_all(c).await {
        Ok((t, _)) => t,
        Err(s) => return s,
    };
    for (i, t) in tools.iter().enumerate() {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
        match t.get("inputSchema") {
            Some(Value::Object(s)) if s.get("type") == Some(&json!("object")) => {}
            Some(other) => {
                return violated(format!(
                    "tool {i} ({name:?}) has inputSchema {} which is not an object schema",
                    crate::base::util::clip(&other.to_string(), 120)
                ))
            }
            None => return violated(format!("tool {i} ({name:?}) has no inputSchema")),
        }
    }
    Status::Pass
}
in_session!(input_schema, input_schema_body);

/// Whether a tool name follows the MCP naming guidance (1–128 of `[A-Za-z0-9_.-]`).
pub fn tool_name_ok(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

async fn name_format_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let tools = match list_all(c).await {
        Ok((t, _)) => t,
        Err(s) => return s,
    };
    let mut bad = Vec::new();
    let mut seen = HashSet::new();
    for t in &tools {
        let Some(n) = t.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !tool_name_ok(n) {
            bad.push(format!("{n:?} breaks the naming rule"));
        }
        if !seen.insert(n) {
            bad.push(format!("{n:?} is not unique"));
        }
    }
    if bad.is_empty() {
        Status::Pass
    } else {
        violated(bad.join("; "))
    }
}
in_session!(name_format, name_format_body);

async fn unknown_tool_body(ctx: &Ctx, c: &mut Client) -> Status {
    let reply = match c
        .request(
            "tools/call",
            json!({"name": "parity_no_such_tool_4b1d", "arguments": {}}),
        )
        .await
    {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    if let Some(code) = reply.error_code() {
        if code == -32603 || code == -32000 {
            return violated(format!(
                "an unknown tool was reported as an internal error ({code})"
            ));
        }
        return serving_or(ctx, c, "an unknown tool")
            .await
            .unwrap_or(Status::Pass);
    }
    match reply.result() {
        Some(r) if r.get("isError") == Some(&Value::Bool(true)) => violated(
            "an unknown tool was reported as a tool execution error (isError) instead of a JSON-RPC error",
        ),
        Some(r) => violated(format!(
            "an unknown tool was served: {}",
            crate::base::util::clip(&r.to_string(), 200)
        )),
        None => unanswered("tools/call of an unknown tool", &reply),
    }
}
in_session!(unknown_tool, unknown_tool_body);

async fn invalid_arguments_body(ctx: &Ctx, c: &mut Client) -> Status {
    let tools = match list_all(c).await {
        Ok((t, _)) => t,
        Err(s) => return s,
    };
    let pick = tools.iter().find(|t| {
        t.pointer("/inputSchema/required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
            && ctx.target.calls.may_call(t)
    });
    let Some(tool) = pick else {
        return Status::Skip(format!(
            "no tool parity may call declares a required argument: {}",
            crate::engine::check::CallPolicy::HOW
        ));
    };
    let name = tool.get("name").cloned().unwrap_or(Value::Null);
    let reply = match c
        .request("tools/call", json!({"name": name, "arguments": {}}))
        .await
    {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    let sep1303 = !matches!(
        ctx.revision.as_str(),
        "2024-11-05" | "2025-03-26" | "2025-06-18"
    );
    if let Some(code) = reply.error_code() {
        return match code {
            -32602 if !sep1303 => Status::Pass,
            -32602 => violated(format!(
                "missing required arguments of {name} were a protocol error (-32602); from 2025-11-25 input validation errors are tool execution errors (isError)"
            )),
            other => violated(format!(
                "missing required arguments of {name} were answered with code {other}; a caller mistake is not an internal/server error"
            )),
        };
    }
    match reply.result() {
        Some(r) if r.get("isError") == Some(&Value::Bool(true)) => Status::Pass,
        Some(r) => violated(format!(
            "{name} called without its required arguments succeeded: {}",
            crate::base::util::clip(&r.to_string(), 200)
        )),
        None => unanswered("tools/call without required arguments", &reply),
    }
}
in_session!(invalid_arguments, invalid_arguments_body);

fn batch_of_probes(ctx: &Ctx) -> Value {
    let m = ctx.probe_method();
    let p = probe_params(ctx);
    json!([
        {"jsonrpc": "2.0", "id": "batch-a", "method": m, "params": p},
        {"jsonrpc": "2.0", "method": "notifications/parity_unknown"},
        {"jsonrpc": "2.0", "id": "batch-b", "method": m, "params": p},
    ])
}

async fn batch_body(ctx: &Ctx, c: &mut Client) -> Status {
    if let Err(e) = c.peer.send_json(&batch_of_probes(ctx)).await {
        return gone(c, e).await;
    }
    let batch_ids = [json!("batch-a"), json!("batch-b")];
    let b = match c
        .behind_barrier(ctx.probe_method(), |i| answers_probe(i, &batch_ids))
        .await
    {
        Ok(b) => b,
        Err(e) => return gone(c, e).await,
    };
    let Some(got) = b.answer.clone() else {
        if let Some(note) = b.http_refusal(&c.peer) {
            return violated(format!(
                "a batch of two requests was refused by HTTP status with no JSON-RPC response ({}), in a revision whose implementations must support receiving batches",
                crate::base::util::clip(&note, 300)
            ));
        }
        return no_reply(c, "a batch of two requests", &b).await;
    };
    let Some(Value::Array(items)) = got.value() else {
        // Answering each member on its own still receives the batch; JSON-RPC's "respond with
        // an Array" is a lowercase should, so that is an advisory. Refusing it is a violation.
        let served = |v: &Value| {
            v.get("result").is_some()
                && matches!(
                    v.get("id").and_then(Value::as_str),
                    Some("batch-a" | "batch-b")
                )
        };
        if got.value().is_some_and(served) {
            let first_id = got.value().and_then(|v| v.get("id")).cloned();
            let second = c
                .inbox
                .iter()
                .filter_map(|i| i.value())
                .any(|v| served(v) && v.get("id").cloned() != first_id);
            if second {
                return Status::Advisory(
                    "the batch's requests were answered one by one instead of with one array"
                        .into(),
                );
            }
        }
        return violated(format!(
            "a batch was not answered with a batch: {}",
            got.strict().map(Value::to_string).unwrap_or_default()
        ));
    };
    let ids: HashSet<String> = items
        .iter()
        .filter(|i| i.get("result").is_some())
        .filter_map(|i| i.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    if items.len() != 2 || !ids.contains("batch-a") || !ids.contains("batch-b") {
        return violated(format!(
            "the batch response should hold exactly the two results (batch-a, batch-b), got {}",
            Value::Array(items.clone())
        ));
    }
    Status::Pass
}
in_session!(batch, batch_body);

async fn batch_rejected_body(ctx: &Ctx, c: &mut Client) -> Status {
    if let Err(e) = c.peer.send_json(&batch_of_probes(ctx)).await {
        return gone(c, e).await;
    }
    let batch_ids = [json!("batch-a"), json!("batch-b")];
    let b = match c
        .behind_barrier(ctx.probe_method(), |i| answers_probe(i, &batch_ids))
        .await
    {
        Ok(b) => b,
        Err(e) => return gone(c, e).await,
    };
    // The barrier is the probe that the server still serves after the batch.
    let serving = if b.answered {
        None
    } else if b.eof {
        let why = how_it_ended(c).await;
        Some(violated(format!(
            "after a batch, the server closed its stdout instead of answering `{}`{why}",
            ctx.probe_method()
        )))
    } else {
        Some(Status::Timeout(format!(
            "after a batch, `{}` got no response before the deadline",
            ctx.probe_method()
        )))
    };
    let first = b.answer.clone();
    let mut got: Vec<Value> = first.iter().filter_map(|g| g.value().cloned()).collect();
    got.extend(c.inbox.iter().filter_map(|i| i.value().cloned()));
    if let Some(arr) = got.iter().find(|v| v.is_array()) {
        return violated(format!(
            "a batch was answered with a batch, which revision {} does not have: {}",
            ctx.revision,
            crate::base::util::clip(&arr.to_string(), 200)
        ));
    }
    if got
        .iter()
        .any(|v| v.get("result").is_some() && v.get("id").is_some_and(|id| batch_ids.contains(id)))
    {
        // Not a batch on stdout, so no message-shape rule is broken; but the revision has no
        // batches, and a client does not expect answers to them.
        return Status::Advisory(
            "the batch's requests were served one by one in a revision without batches".into(),
        );
    }
    if let Some(s) = serving {
        return s;
    }
    if first.is_none() && b.http_refusal(&c.peer).is_some() {
        // Over Streamable HTTP an HTTP error status tells the client at once that the batch
        // was refused: what the advisory below is about (a client waiting for its deadline)
        // does not happen.
        return Status::Pass;
    }
    if first.is_none() {
        return Status::Advisory(
            "the batch got no answer at all (an error such as -32600 is expected)".into(),
        );
    }
    Status::Pass
}
in_session!(batch_rejected, batch_rejected_body);

async fn cancellation_body(ctx: &Ctx, c: &mut Client) -> Status {
    let (method, params) = match &ctx.target.slow_call {
        Some(slow) => (
            "tools/call",
            c.with_meta(json!({"name": slow.name, "arguments": slow.arguments})),
        ),
        None => (ctx.probe_method(), probe_params(ctx)),
    };
    let req = json!({"jsonrpc": "2.0", "id": 0, "method": method, "params": params});
    let sent = std::time::Instant::now();
    if let Err(e) = c.peer.send_json(&req).await {
        return gone(c, e).await;
    }
    if ctx.target.slow_call.is_some() {
        // Let the call get under way; a call answered already is not slow at all.
        let (early, eof) = c.collect_for(std::time::Duration::from_millis(50)).await;
        if eof {
            // The call itself stopped the server, before any cancellation: nothing about
            // cancellation can be judged (the tool checks judge the crash).
            let why = how_it_ended(c).await;
            return Status::NotRun(format!(
                "the server closed its stdout during the declared slow call, before it could be cancelled{why}"
            ));
        }
        let answered = early
            .iter()
            .filter_map(|i| i.value())
            .find(|v| v.get("id") == Some(&json!(0)) && v.get("method").is_none());
        if let Some(a) = answered {
            return Status::NotRun(format!(
                "the declared slow call was answered before it could be cancelled: {}",
                crate::base::util::clip(&a.to_string(), 200)
            ));
        }
    }
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 0, "reason": "parity cancellation check"}});
    if let Err(e) = c.peer.send_json(&cancel).await {
        return gone(c, e).await;
    }
    if let Some(s) = serving_or(ctx, c, "cancelling request 0").await {
        return s;
    }
    if let Some(slow) = &ctx.target.slow_call {
        // Listen until well after the call would have finished had the cancel been ignored.
        let until = sent + std::time::Duration::from_millis(slow.ms) + ctx.timing.silence / 2;
        let window = until.saturating_duration_since(std::time::Instant::now());
        let (late, _) = c.collect_for(window).await;
        let answered = c
            .inbox
            .iter()
            .chain(late.iter())
            .filter_map(|i| i.value())
            .any(|v| v.get("id") == Some(&json!(0)) && v.get("method").is_none());
        if answered {
            let msg = "the cancelled request 0 was still answered";
            return if ctx.era == Era::Modern {
                violated(msg)
            } else {
                Status::Advisory(msg.into())
            };
        }
    }
    Status::Pass
}
in_session!(cancellation, cancellation_body);

// ---------------------------------------------------------------------------------------------
// Monitors
// ---------------------------------------------------------------------------------------------

fn duplicate_response(input: &MonitorInput) -> Finding {
    duplicate_responses(input, "server")
}

fn message_schema(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        let methods = c2s_methods(s);
        for v in s2c_messages(s) {
            let Some(o) = v.as_object() else { continue };
            if o.contains_key("method") {
                continue;
            }
            if let Some(err) = o.get("error") {
                for p in validate::validate_error(err) {
                    problems.push(format!("[{}] {p}", s.case));
                }
                continue;
            }
            let Some(result) = o.get("result") else {
                continue;
            };
            let method = o
                .get("id")
                .and_then(|id| methods.get(&id.to_string()))
                .map(String::as_str)
                .unwrap_or("");
            // `resultType` is judged by `mcp.modern.result-type`, under its own sentence.
            for p in validate::validate_result(method, result, input.revision)
                .into_iter()
                .filter(|p| !p.starts_with("result.resultType"))
            {
                problems.push(format!("[{}] {method} result: {p}", s.case));
            }
        }
    }
    monitor_result(problems)
}

fn result_type(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        for v in s2c_messages(s) {
            if answers_malformed(&v) {
                continue;
            }
            if let Some(r) = v.get("result") {
                match r.get("resultType") {
                    Some(Value::String(t)) if t == "complete" || t == "input_required" => {}
                    other => problems.push(format!(
                        "[{}] a result has {}: {}",
                        s.case,
                        other.map_or("no resultType".to_string(), |t| format!("resultType {t}")),
                        crate::base::util::clip(&v.to_string(), 160)
                    )),
                }
            }
        }
    }
    monitor_result(problems)
}

fn server_direction(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        for v in s2c_messages(s) {
            if v.get("method").is_some() && v.get("id").is_some() {
                problems.push(format!(
                    "[{}] the server sent a request: {}",
                    s.case,
                    crate::base::util::clip(&v.to_string(), 200)
                ));
            }
        }
    }
    monitor_result(problems)
}

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

const STDIO: &str = "basic/transports#stdio";

/// Every MCP stdio check, in catalogue order.
pub fn catalogue() -> Vec<Check> {
    vec![
        Check {
            id: "mcp.stdio.stdout-purity",
            requirement: "Every line the server writes to stdout is a JSON-RPC message of the revision; nothing else (banners, logs, JSON that is not JSON-RPC).",
            level: Level::MustNot,
            quote: "The server MUST NOT write anything to its stdout that is not a valid MCP message.",
            section: STDIO,
            revs: Revs::All,
            capability: None,
            kind: CheckKind::Monitor(stdout_purity),
        },
        Check {
            id: "mcp.stdio.newline-delimited",
            requirement: "Each message is one line ended by a newline, with no embedded newlines, no header framing and no two messages on a line.",
            level: Level::MustNot,
            quote: "Messages are delimited by newlines, and MUST NOT contain embedded newlines.",
            section: STDIO,
            revs: Revs::All,
            capability: None,
            kind: CheckKind::Monitor(newline_delimited),
        },
        Check {
            id: "mcp.stdio.utf8",
            requirement: "Every stdout line is valid UTF-8 without a byte-order mark.",
            level: Level::Must,
            quote: "JSON text exchanged between systems that are not part of a closed ecosystem MUST be encoded using UTF-8 [RFC3629]. … Implementations MUST NOT add a byte order mark (U+FEFF) to the beginning of a networked-transmitted JSON text.",
            section: "rfc8259#section-8.1",
            revs: Revs::All,
            capability: None,
            kind: CheckKind::Monitor(utf8_no_bom),
        },
        Check {
            id: "mcp.base.jsonrpc-version",
            requirement: "Every message the server sends has `\"jsonrpc\": \"2.0\"` exactly.",
            level: Level::Must,
            quote: "A String specifying the version of the JSON-RPC protocol. MUST be exactly \"2.0\".",
            section: "jsonrpc-2.0#request_object",
            revs: Revs::All,
            capability: None,
            kind: CheckKind::Monitor(jsonrpc_version),
        },
        Check {
            id: "mcp.base.result-xor-error",
            requirement: "Every response carries exactly one of `result` and `error`.",
            level: Level::Must,
            quote: "Either the result member or error member MUST be included, but both members MUST NOT be included.",
            section: "jsonrpc-2.0#response_object",
            revs: Revs::All,
            capability: None,
            kind: CheckKind::Monitor(result_xor_error),
        },
        Check {
            id: "mcp.base.duplicate-response",
            requirement: "Each request is answered once: no second response to an id already answered (a client drops it, or takes it for the answer to a later request). JSON-RPC 2.0 asks for a Response per request and no sentence forbids a second one in so many words, so a robustness rule.",
            level: Level::Robustness,
            quote: ONE_RESPONSE,
            section: "jsonrpc-2.0#response_object",
            revs: Revs::All,
            capability: None,
            kind: CheckKind::Monitor(duplicate_response),
        },
        Check {
            id: "mcp.base.message-schema",
            requirement: "Every result and error the server sends has the shape its revision's schema gives (initialize, ping, server/discover, tools/list, tools/call, resources/list, resources/read, resources/templates/list, prompts/list, prompts/get, completion/complete, error objects; tool annotations and icons); `resultType` is left to mcp.modern.result-type, the cache hints of the lists other than tools/list to mcp.modern.cache-hints, and an input_required result to the mcp.modern.input-required-* checks.",
            level: Level::Must,
            quote: "result: This member is REQUIRED on success. The value of this member is determined by the method invoked on the Server. … code: A Number that indicates the error type that occurred. This MUST be an integer.",
            section: "jsonrpc-2.0#response_object",
            revs: Revs::All,
            capability: None,
            kind: CheckKind::Monitor(message_schema),
        },
        Check {
            id: "mcp.modern.result-type",
            requirement: "Every result carries `resultType` (\"complete\" or \"input_required\").",
            level: Level::Must,
            quote: "The result MUST include a resultType field to indicate the type of the result.",
            section: "basic#result-responses",
            revs: Revs::Modern,
            capability: None,
            kind: CheckKind::Monitor(result_type),
        },
        Check {
            id: "mcp.stdio.server-direction",
            requirement: "On stdio at 2026-07-28 the server sends no JSON-RPC requests.",
            level: Level::MustNot,
            quote: "The server MUST NOT write JSON-RPC requests to stdout.",
            section: "basic/transports/stdio#receiving-messages",
            revs: Revs::Modern,
            capability: None,
            kind: CheckKind::Monitor(server_direction),
        },
        Check {
            id: "mcp.base.id-echo",
            requirement: "A response carries the request's id with the same value and type (0, -1, 2^53+1, \"1\", a non-ASCII string).",
            level: Level::Must,
            quote: "This member is REQUIRED. It MUST be the same as the value of the id member in the Request Object.",
            section: "jsonrpc-2.0#response_object",
            revs: Revs::All,
            capability: None,
            kind: active!(id_echo),
        },
        Check {
            id: "mcp.base.parse-error",
            requirement: "An unparsable line is answered with an error response (-32700; id null, or from 2025-11-25 no id), and the server keeps serving; no answer is a fail only when the server answered a request sent after the line.",
            level: Level::Must,
            quote: "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
            section: "jsonrpc-2.0#response_object",
            revs: Revs::All,
            capability: None,
            kind: active!(parse_error),
        },
        Check {
            id: "mcp.base.invalid-request",
            requirement: "Requests without `jsonrpc`, with id null, or with non-structured params get an error response (-32600 or -32602), and the server keeps serving.",
            level: Level::Must,
            quote: "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
            section: "jsonrpc-2.0#response_object",
            revs: Revs::All,
            capability: None,
            kind: active!(invalid_request),
        },
        Check {
            id: "mcp.base.unknown-method",
            requirement: "A request for an unknown method gets an error response, code -32601.",
            level: Level::Must,
            quote: "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
            section: "jsonrpc-2.0#response_object",
            revs: Revs::All,
            capability: None,
            kind: active!(unknown_method),
        },
        Check {
            id: "mcp.base.notification-unanswered",
            requirement: "Notifications, known or unknown, are never answered, and the server keeps serving.",
            level: Level::MustNot,
            quote: "The Server MUST NOT reply to a Notification, including those that are within a batch request.",
            section: "jsonrpc-2.0#notification",
            revs: Revs::All,
            capability: None,
            kind: active!(notification_unanswered),
        },
        Check {
            id: "mcp.lifecycle.version-negotiation",
            requirement: "initialize echoes a supported requested version and answers an unsupported one with a version the server supports (or the -32602 error of the spec's example), never with an echo.",
            level: Level::Must,
            quote: "If the server supports the requested protocol version, it MUST respond with the same version. Otherwise, the server MUST respond with another protocol version it supports.",
            section: "basic/lifecycle#version-negotiation",
            revs: Revs::Legacy,
            capability: None,
            kind: active!(version_negotiation),
        },
        Check {
            id: "mcp.base.ping",
            requirement: "ping is answered promptly with an empty result.",
            level: Level::Must,
            quote: "The receiver MUST respond promptly with an empty response.",
            section: "basic/utilities/ping",
            revs: Revs::Legacy,
            capability: None,
            kind: active!(ping),
        },
        Check {
            id: "mcp.lifecycle.stdin-eof",
            requirement: "After stdin closes the server exits promptly and writes nothing more to stdout.",
            level: Level::Should,
            quote: "Servers SHOULD exit promptly when their standard input is closed or reads return end-of-file.",
            section: "basic/transports/stdio#shutdown",
            revs: Revs::All,
            capability: None,
            kind: active!(stdin_eof),
        },
        Check {
            id: "mcp.modern.discover",
            requirement: "server/discover returns supportedVersions (listing 2026-07-28), capabilities, resultType, ttlMs and cacheScope.",
            level: Level::Must,
            quote: "server/discover lets a client query a server's supported protocol versions, capabilities, and identity before sending any other requests. Servers MUST implement it.",
            section: "server/discover",
            revs: Revs::Modern,
            capability: None,
            kind: active!(discover),
        },
        Check {
            id: "mcp.modern.meta-required",
            requirement: "A request whose `_meta` lacks the protocol version or the client capabilities gets -32602.",
            level: Level::Must,
            quote: "A request missing any required field is malformed; the server MUST reject it with JSON-RPC error code -32602 (Invalid params).",
            section: "basic#meta",
            revs: Revs::Modern,
            capability: None,
            kind: active!(meta_required),
        },
        Check {
            id: "mcp.modern.unsupported-version",
            requirement: "A request at an unsupported `_meta` protocol version gets -32022 with data.supported and data.requested.",
            level: Level::Must,
            quote: "If the server does not implement the requested version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with an UnsupportedProtocolVersionError listing the versions it does support",
            section: "basic/versioning#protocol-version-negotiation",
            revs: Revs::Modern,
            capability: None,
            kind: active!(unsupported_version),
        },
        Check {
            id: "mcp.tools.pagination",
            requirement: "tools/list cursors advance and end: no cursor repeats, no tool is listed twice, the listing ends within 1,000 pages.",
            level: Level::Robustness,
            quote: "Pagination starts when the server sends a response that includes: … An optional nextCursor field if more results exist",
            section: "server/utilities/pagination#response-format",
            revs: Revs::All,
            capability: Some("tools"),
            kind: active!(pagination),
        },
        Check {
            id: "mcp.tools.invalid-cursor",
            requirement: "tools/list with a cursor the server never issued gets -32602.",
            level: Level::Should,
            quote: "Invalid cursors SHOULD result in an error with code -32602 (Invalid params).",
            section: "server/utilities/pagination#error-handling",
            revs: Revs::All,
            capability: Some("tools"),
            kind: active!(invalid_cursor),
        },
        Check {
            id: "mcp.tools.input-schema",
            requirement: "Every tool's inputSchema is a JSON Schema object with `\"type\": \"object\"` (never null).",
            level: Level::Must,
            quote: "inputSchema: JSON Schema defining expected parameters … MUST be a valid JSON Schema object (not null)",
            section: "server/tools#tool",
            revs: Revs::All,
            capability: Some("tools"),
            kind: active!(input_schema),
        },
        Check {
            id: "mcp.tools.name-format",
            requirement: "Tool names are 1–128 characters of [A-Za-z0-9_.-] and unique within the server.",
            level: Level::Should,
            quote: "Tool names SHOULD be between 1 and 128 characters in length (inclusive).",
            section: "server/tools#tool-names",
            revs: Revs::All,
            capability: Some("tools"),
            kind: active!(name_format),
        },
        Check {
            id: "mcp.tools.unknown-tool",
            requirement: "tools/call of an unknown tool is a JSON-RPC error (-32602 in the spec's example), not an isError result and not an internal error.",
            level: Level::Robustness,
            quote: "Protocol Errors: Standard JSON-RPC errors for issues like: … Unknown tools",
            section: "server/tools#error-handling",
            revs: Revs::All,
            capability: Some("tools"),
            kind: active!(unknown_tool),
        },
        Check {
            id: "mcp.tools.invalid-arguments",
            requirement: "tools/call without a tool's required arguments is a tool execution error (isError); up to 2025-06-18 a -32602 error is accepted too; never an internal error or a success. The tool is one parity may call (`[tools] safe`, or `--call-tools read-only` for tools annotated read-only and not destructive); without a declaration the check skips.",
            level: Level::Should,
            quote: "Any errors that originate from the tool SHOULD be reported inside the result object, with isError set to true, not as an MCP protocol-level error response.",
            section: "schema#calltoolresult",
            revs: Revs::All,
            capability: Some("tools"),
            kind: active!(invalid_arguments),
        },
        Check {
            id: "mcp.base.batch",
            requirement: "At 2025-03-26 a JSON-RPC batch of requests is answered with one batch holding every response.",
            level: Level::Must,
            quote: "MCP implementations MAY support sending JSON-RPC batches, but MUST support receiving JSON-RPC batches.",
            section: "basic#batching",
            revs: Revs::Only(&["2025-03-26"]),
            capability: None,
            kind: active!(batch),
        },
        Check {
            id: "mcp.base.batch-rejected",
            requirement: "In revisions without batching a batch is answered with a single error (-32600 is natural), never served as a batch, and the server keeps serving. Over Streamable HTTP the transport's sentence is quoted instead: a request's POST is answered with one JSON object.",
            level: Level::MustNot,
            quote: "The server MUST NOT write anything to its stdout that is not a valid MCP message.",
            section: STDIO,
            revs: Revs::Except(&["2025-03-26"]),
            capability: None,
            kind: active!(batch_rejected),
        },
        Check {
            id: "mcp.base.cancellation",
            requirement: "Cancelling in-flight request 0 leaves the server serving; with a declared slow call, the cancelled request gets no response (a MUST NOT at 2026-07-28, a SHOULD before).",
            level: Level::Must,
            quote: "Both parties MUST handle these race conditions gracefully",
            section: "basic/utilities/cancellation#timing-considerations",
            revs: Revs::All,
            capability: None,
            kind: active!(cancellation),
        },
    ]
    .into_iter()
    .chain(features::catalogue())
    .collect()
}

/// The catalogue entry with this id.
pub fn find(id: &str) -> Option<Check> {
    catalogue().into_iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::check::SessionLog;
    use crate::transport::wire::{Frame, Line, WireEvent};

    fn session(lines: &[&str]) -> Vec<SessionLog> {
        let events = lines
            .iter()
            .map(|l| WireEvent {
                dir: Dir::S2c,
                t: std::time::Duration::ZERO,
                frame: Frame::Line(Line {
                    bytes: l.as_bytes().to_vec(),
                    len: l.len() as u64,
                    over_cap: false,
                    sha256: None,
                    terminated: true,
                    elided: false,
                }),
            })
            .collect();
        vec![SessionLog {
            case: "t".into(),
            events,
        }]
    }

    #[test]
    fn an_error_response_without_id_is_a_message_from_2025_11_25_only() {
        let s = session(&[r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#]);
        let at = |revision| {
            stdout_purity(&MonitorInput {
                revision,
                sessions: &s,
                capabilities: &Value::Null,
            })
            .status
        };
        assert_eq!(at("2025-11-25"), Status::Pass);
        assert_eq!(at("2026-07-28"), Status::Pass);
        assert!(matches!(at("2025-06-18"), Status::Violated(_)));
        // A result without id stays invalid in every revision.
        let s = session(&[r#"{"jsonrpc":"2.0","result":{}}"#]);
        let status = stdout_purity(&MonitorInput {
            revision: "2026-07-28",
            sessions: &s,
            capabilities: &Value::Null,
        })
        .status;
        assert!(matches!(status, Status::Violated(_)), "{status:?}");
    }

    #[test]
    fn the_malformed_probes_answers_are_left_to_their_check() {
        // A result without resultType answering a malformed request is not judged again.
        let s = session(&[r#"{"jsonrpc":"2.0","id":"parity-malformed-3","result":{"tools":[]}}"#]);
        let input = MonitorInput {
            revision: "2026-07-28",
            sessions: &s,
            capabilities: &Value::Null,
        };
        assert_eq!(result_type(&input).status, Status::Pass);
        assert_eq!(message_schema(&input).status, Status::Pass);
        // The same answer to an ordinary request is, and says so without Debug output.
        let s = session(&[r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#]);
        let f = result_type(&MonitorInput {
            revision: "2026-07-28",
            sessions: &s,
            capabilities: &Value::Null,
        });
        let Status::Violated(msg) = f.status else {
            panic!("expected a violation");
        };
        assert!(msg.contains("no resultType"), "{msg}");
        assert!(!msg.contains("None"), "{msg}");
    }

    #[test]
    fn quotes_of_checks_judging_a_missing_answer_say_the_server_must_reply() {
        for id in ["mcp.base.parse-error", "mcp.base.invalid-request"] {
            let c = find(id).map(|c| c.quote).unwrap_or_default();
            assert!(
                c.contains("the Server MUST reply with a Response"),
                "{id}: {c}"
            );
        }
    }
}
