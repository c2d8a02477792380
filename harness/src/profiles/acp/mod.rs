//! The ACP v1 check catalogue (binding `acp`, revision `v1`).
//!
//! Levels come from the keyword of the quoted sentence, as for MCP: the ACP v1 pages under
//! <https://agentclientprotocol.com/protocol/v1/>, the v1 JSON schema, and JSON-RPC 2.0. Active
//! checks drive fresh agents (`initialize` at version 1 first, unless the check probes
//! `initialize` itself); monitors judge every session's frames. `docs/checks.md` lists them.
//!
//! Size (1534 lines): the ACP v1 catalogue: every check's declaration and function, and parity's
//! reading of the v1 result and `session/update` shapes they use.

mod profile;
pub use profile::AcpProfile;

use crate::engine::check::{
    evidence, Check, CheckKind, Ctx, Finding, Level, MonitorInput, Revs, Status,
};
use crate::engine::monitors as m;
use crate::protocol::acp::{self, STOP_REASONS};
use crate::protocol::mcp::{Client, Reply};
use crate::transport::wire::Dir;
use serde_json::{json, Value};
use std::collections::HashSet;

macro_rules! active {
    ($f:ident) => {{
        fn wrapper(ctx: &Ctx) -> crate::engine::check::BoxFinding<'_> {
            Box::pin($f(ctx))
        }
        CheckKind::Active(wrapper)
    }};
}

/// Runs `$body(ctx, &mut client, &initialize_result)` on a fresh agent after `initialize`,
/// closes it, and attaches the frames as evidence.
macro_rules! in_session {
    ($name:ident, $body:ident) => {
        async fn $name(ctx: &Ctx) -> Finding {
            let (mut c, init) = match crate::engine::acp::open(ctx).await {
                Ok(x) => x,
                Err(f) => return f,
            };
            let status = $body(ctx, &mut c, &init).await;
            let events = c.peer.events();
            ctx.close(c).await;
            Finding {
                status,
                evidence: evidence(&events),
            }
        }
    };
}

fn violated(s: impl Into<String>) -> Status {
    Status::Violated(s.into())
}

/// A wait that found no answer after lines over the line cap were skipped unread
/// ([`Client::skipped`]): one of them may have been the answer, so the check is `timeout`, never
/// a violation (the run adds which lines, the cap and `--line-cap` to the message). `None` when
/// no line was skipped.
fn unread(c: &Client, what: &str) -> Option<Status> {
    (c.skipped.lines > 0).then(|| {
        Status::Timeout(format!(
            "{what} got no readable response before the deadline"
        ))
    })
}

/// A request that got no response: a timeout is `timeout`; a closed stdout breaks JSON-RPC's
/// "the Server MUST reply", whatever the check's level.
fn unanswered(what: &str, reply: &Reply) -> Status {
    match reply {
        Reply::Timeout => Status::Timeout(format!("{what}: no response before the deadline")),
        _ => Status::Failed(format!(
            "{what}: the agent closed stdout instead of answering (JSON-RPC 2.0 §5: the Server MUST reply with a Response)"
        )),
    }
}

/// Sends `initialize` again as a probe: `None` when the agent still answers requests (any
/// response with the probe's id counts, an error too: some agents refuse a second
/// `initialize`); otherwise the status of a check that asks whether it kept serving after
/// `after` (`an unparsable line`). A closed stdout or a failed write is a violation; no answer
/// within the deadline is `timeout`, since a slow agent (one busy with a flood of its own, on a
/// loaded machine) has not been shown to have stopped. A core method, so an agent's handling
/// of extensions never colours the verdict of another check.
async fn still_serving(c: &mut Client, after: &str) -> Option<Status> {
    match c
        .request("initialize", acp::initialize_params(acp::PROTOCOL_VERSION))
        .await
    {
        Ok(Reply::Message(_)) => None,
        Ok(Reply::Timeout) => Some(Status::Timeout(format!(
            "a follow-up `initialize` sent after {after} got no response before the deadline, so whether the agent kept answering could not be judged"
        ))),
        Ok(Reply::Eof) => Some(violated(format!(
            "the agent stopped answering after {after}: it closed stdout before answering a follow-up `initialize`"
        ))),
        Err(e) => Some(violated(format!(
            "the agent stopped answering after {after}: a follow-up `initialize` could not be written ({e})"
        ))),
    }
}

/// An error code in words for messages: `code -32601`, or `an error without an integer code`.
fn code_words(code: Option<i64>) -> String {
    match code {
        Some(c) => format!("code {c}"),
        None => "an error without an integer code".to_string(),
    }
}

fn io_err(e: impl std::fmt::Display) -> Status {
    Status::NotRun(format!("failed to write to the agent: {e}"))
}

// ---------------------------------------------------------------------------------------------
// initialize
// ---------------------------------------------------------------------------------------------

async fn protocol_version_integer(ctx: &Ctx) -> Finding {
    let mut c = match crate::engine::acp::start(ctx).await {
        Ok(c) => c,
        Err(f) => return f,
    };
    let status = match c
        .request("initialize", acp::initialize_params(acp::PROTOCOL_VERSION))
        .await
    {
        Err(e) => io_err(e),
        Ok(r) => match r.result() {
            None if r.error().is_some() => {
                violated(format!("initialize at version 1 failed: {}", r.describe()))
            }
            None => unanswered("initialize", &r),
            Some(res) => match res.get("protocolVersion") {
                Some(v) if v.as_u64().is_some_and(|n| n <= 65535) => Status::Pass,
                Some(v) => violated(format!(
                    "`protocolVersion` in the initialize result is {v}, not an integer 0…65535"
                )),
                None => violated("the initialize result has no `protocolVersion`"),
            },
        },
    };
    let events = c.peer.events();
    ctx.close(c).await;
    Finding {
        status,
        evidence: evidence(&events),
    }
}

/// One `initialize` at `version` on a fresh agent: the answered version, or why there is none.
async fn negotiate(ctx: &Ctx, version: u64, ev: &mut Vec<String>) -> Result<u64, Status> {
    let mut c = match crate::engine::acp::start(ctx).await {
        Ok(c) => c,
        Err(f) => return Err(f.status),
    };
    let reply = c
        .request("initialize", acp::initialize_params(version))
        .await;
    ev.extend(evidence(&c.peer.events()));
    ctx.close(c).await;
    let r = reply.map_err(io_err)?;
    match r.result() {
        Some(res) => res
            .get("protocolVersion")
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                violated(format!(
                    "initialize at {version}: `protocolVersion` is missing or not an integer"
                ))
            }),
        None if r.error().is_some() => Err(violated(format!(
            "initialize at {version} was answered with an error instead of the agent's latest version: {}",
            r.describe()
        ))),
        None => Err(unanswered(&format!("initialize at {version}"), &r)),
    }
}

async fn version_negotiation(ctx: &Ctx) -> Finding {
    let mut ev = Vec::new();
    let status = async {
        let v1 = negotiate(ctx, 1, &mut ev).await?;
        let high = negotiate(ctx, acp::UNSUPPORTED_PROBE, &mut ev).await?;
        if high == acp::UNSUPPORTED_PROBE {
            return Err(violated(format!(
                "asked for version {0}, the agent echoed {0}: it cannot support a version that does not exist, so it must answer its own latest version (fault class B23, mirror test)",
                acp::UNSUPPORTED_PROBE
            )));
        }
        if v1 == 1 && high < 1 {
            return Err(violated(format!(
                "the agent supports version 1 but answered {high} to a request for {}: its latest supported version is at least 1",
                acp::UNSUPPORTED_PROBE
            )));
        }
        if v1 != 1 && v1 != high {
            return Err(violated(format!(
                "asked for version 1 the agent answered {v1}, asked for {} it answered {high}: when it does not support 1 both answers must be its latest version",
                acp::UNSUPPORTED_PROBE
            )));
        }
        Ok(())
    }
    .await;
    Finding {
        status: status.err().unwrap_or(Status::Pass),
        evidence: ev,
    }
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC base
// ---------------------------------------------------------------------------------------------

async fn id_echo_body(_ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    let params = json!({"cwd": acp::session_cwd(), "mcpServers": []});
    for id in [json!("parity-id-α"), json!(9_007_199_254_740_991_i64)] {
        if let Err(e) = c
            .peer
            .send_json(
                &json!({"jsonrpc": "2.0", "id": id, "method": "session/new", "params": params}),
            )
            .await
        {
            return io_err(e);
        }
        match c.next_response().await {
            Ok(inb) => {
                let got = inb.value().and_then(|v| v.get("id")).cloned();
                if got.as_ref() != Some(&id) {
                    return violated(match got {
                        Some(g) => format!("request id {id} was answered with id {g}"),
                        None => format!("request id {id} was answered without an id"),
                    });
                }
            }
            Err(_) => return unanswered(&format!("session/new with id {id}"), &Reply::Timeout),
        }
    }
    Status::Pass
}
in_session!(id_echo, id_echo_body);

/// Sends the ACP barrier behind a probe that may get no answer: a full `initialize` at version
/// 1 (a core method every agent answers, with a result or an error), and waits for the probe's
/// answer (a response whose id is one of `ids` or null, or absent, or a line that is not
/// JSON-RPC) and for the barrier's ([`Client::behind_barrier_with`]).
async fn acp_barrier(
    c: &mut Client,
    ids: &[Value],
) -> Result<crate::protocol::mcp::Barrier, crate::transport::peer::PeerError> {
    c.behind_barrier_with(
        "initialize",
        acp::initialize_params(acp::PROTOCOL_VERSION),
        |i| m::answers_probe(i, ids),
    )
    .await
}

/// The status of a probe that got no answer behind a barrier: a violation (JSON-RPC 2.0 §5:
/// the Server MUST reply with a Response) only with proof the agent read the probe — it
/// answered the `initialize` sent after it, or closed its stdout instead; without proof, a
/// `timeout`, never a fail; a `timeout` too when a line over the cap was skipped unread
/// ([`unread`]).
fn acp_no_reply(c: &Client, what: &str, b: &crate::protocol::mcp::Barrier) -> Status {
    // A line over the cap was skipped unread: it may have been the answer.
    if let Some(status) = unread(c, what) {
        return status;
    }
    if b.proves_unanswered() {
        return violated(format!(
            "{what} got no error response, although the agent answered the initialize request sent after it (id {}), so it read it (JSON-RPC 2.0 §5: the Server MUST reply with a Response)",
            b.id
        ));
    }
    if b.eof {
        return violated(format!(
            "the agent closed stdout after {what} instead of answering (JSON-RPC 2.0 §5: the Server MUST reply with a Response)"
        ));
    }
    Status::Timeout(format!(
        "{what} got no response before the deadline, and neither did the initialize request sent after it (id {}), so whether the agent read it is unknown",
        b.id
    ))
}

async fn parse_error_body(_ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    if let Err(e) = c
        .send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \n")
        .await
    {
        return io_err(e);
    }
    let b = match acp_barrier(c, &[json!(7)]).await {
        Ok(b) => b,
        Err(e) => return io_err(e),
    };
    let Some(inb) = &b.answer else {
        return acp_no_reply(c, "an unparsable line", &b);
    };
    let status = match inb.value() {
        Some(v) if v.get("error").is_some() => {
            let code = v.pointer("/error/code").and_then(Value::as_i64);
            if v.get("id") != Some(&Value::Null) {
                violated(match v.get("id") {
                    Some(id) => {
                        format!("the parse error was answered with id {id}, not null: {v}")
                    }
                    None => {
                        format!("the parse error was answered without an id, not with id null: {v}")
                    }
                })
            } else if code != Some(-32700) {
                violated(format!(
                    "the parse error was answered with {}, not -32700",
                    code_words(code)
                ))
            } else {
                Status::Pass
            }
        }
        Some(v) => violated(format!(
            "an unparsable line was answered with a result: {v}"
        )),
        None => violated("the answer to an unparsable line is not JSON"),
    };
    if status == Status::Pass && !b.answered {
        if let Some(stopped) = still_serving(c, "an unparsable line").await {
            return stopped;
        }
    }
    status
}
in_session!(parse_error, parse_error_body);

async fn invalid_request_body(_ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    // JSON that is not a Request object: a bare number, and an object whose method is not a
    // string. Each deserves an error response (ideally -32600 with id null), and the agent must
    // keep serving. Each probe is followed by a barrier, so a missing answer is judged only
    // with proof the agent read the probe.
    let probes: [(&[u8], Value); 2] = [
        (b"5\n", Value::Null),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":\"bad-method\",\"method\":7}\n",
            json!("bad-method"),
        ),
    ];
    let mut advisory = None;
    let mut serving = false;
    for (bytes, id) in probes {
        let shown = String::from_utf8_lossy(bytes).trim().to_string();
        if let Err(e) = c.send_raw(bytes).await {
            return io_err(e);
        }
        let b = match acp_barrier(c, std::slice::from_ref(&id)).await {
            Ok(b) => b,
            Err(e) => return io_err(e),
        };
        serving = b.answered;
        let Some(inb) = &b.answer else {
            return acp_no_reply(c, &format!("`{shown}`"), &b);
        };
        match inb.value() {
            Some(v) if v.get("error").is_some() => {
                let code = v.pointer("/error/code").and_then(Value::as_i64);
                if code != Some(-32600) && advisory.is_none() {
                    advisory = Some(format!(
                        "`{shown}` was answered with {}, not -32600 (Invalid Request)",
                        code_words(code)
                    ));
                }
                if id.is_string() && v.get("id") != Some(&id) && v.get("id") != Some(&Value::Null) {
                    return violated(match v.get("id") {
                        Some(got) => format!("`{shown}` was answered with id {got}, neither its id nor null"),
                        None => format!("`{shown}` was answered without an id, neither with its id nor with null"),
                    });
                }
            }
            Some(v) => return violated(format!("`{shown}` was answered with a result: {v}")),
            None => return violated(format!("the answer to `{shown}` is not JSON")),
        }
        if b.eof {
            return violated(format!(
                "the agent closed stdout after `{shown}` (a crash on a message that is not a Request object)"
            ));
        }
    }
    if !serving {
        if let Some(stopped) = still_serving(c, "an invalid request").await {
            return stopped;
        }
    }
    match advisory {
        Some(a) => Status::Advisory(a),
        None => Status::Pass,
    }
}
in_session!(invalid_request, invalid_request_body);

async fn unknown_method_body(_ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    match c.request("parity/no-such-method", json!({})).await {
        Err(e) => io_err(e),
        Ok(r) => match r.error_code() {
            Some(-32601) => Status::Pass,
            Some(code) => violated(format!(
                "an unknown method was answered with code {code}, not -32601 (Method not found)"
            )),
            None if r.result().is_some() => violated(format!(
                "an unknown method was answered with a result: {}",
                r.describe()
            )),
            None => unanswered("parity/no-such-method", &r),
        },
    }
}
in_session!(unknown_method, unknown_method_body);

async fn notification_unanswered_body(ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    if let Err(e) = acp::cancel(c, "parity-no-such-session").await {
        return io_err(e);
    }
    let (got, eof) = c.collect_for(ctx.timing.silence).await;
    // A repeated response is an earlier request answered twice (acp.base.duplicate-response
    // judges it), not an answer to the notification.
    let answers: Vec<String> = got
        .iter()
        .filter(|i| !i.repeat)
        .filter_map(|i| i.value())
        .filter(|v| v.get("method").is_none())
        .map(|v| crate::base::util::clip(&v.to_string(), 200))
        .collect();
    if let Some(a) = answers.first() {
        return violated(format!("the session/cancel notification was answered: {a}"));
    }
    if eof {
        return violated("the agent closed stdout after a session/cancel notification");
    }
    Status::Pass
}
in_session!(notification_unanswered, notification_unanswered_body);

// ---------------------------------------------------------------------------------------------
// Extensions
// ---------------------------------------------------------------------------------------------

async fn ext_request_answered_body(_ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    match c.request("_parity_probe/unknown", json!({"x": 1})).await {
        Err(e) => io_err(e),
        Ok(Reply::Message(_)) => Status::Pass,
        Ok(r) => unanswered("_parity_probe/unknown", &r),
    }
}
in_session!(ext_request_answered, ext_request_answered_body);

async fn ext_request_not_found_body(_ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    match c.request("_parity_probe/unknown", json!({"x": 1})).await {
        Err(e) => io_err(e),
        Ok(r) => match r.error_code() {
            Some(-32601) => Status::Pass,
            Some(code) => violated(format!(
                "an unknown extension request was answered with code {code}, not -32601"
            )),
            None if r.result().is_some() => violated(format!(
                "an unknown extension request was answered with a result: {}",
                r.describe()
            )),
            None => Status::Skip(format!(
                "no response at all (acp.ext.unknown-request-answered judges that): {}",
                r.describe()
            )),
        },
    }
}
in_session!(ext_request_not_found, ext_request_not_found_body);

async fn ext_notification_ignored_body(ctx: &Ctx, c: &mut Client, _init: &Value) -> Status {
    if let Err(e) = c.notify("_parity_probe/note", Some(json!({"x": 1}))).await {
        return io_err(e);
    }
    let (got, eof) = c.collect_for(ctx.timing.silence).await;
    if let Some(v) = got
        .iter()
        .filter(|i| !i.repeat)
        .filter_map(|i| i.value())
        .find(|v| v.get("method").is_none())
    {
        return Status::Failed(format!(
            "an unknown extension notification was answered (JSON-RPC 2.0 §4.1: the Server MUST NOT reply to a Notification): {}",
            crate::base::util::clip(&v.to_string(), 200)
        ));
    }
    if eof {
        return violated(
            "the agent stopped answering after an unknown extension notification: it closed stdout",
        );
    }
    still_serving(c, "an unknown extension notification")
        .await
        .unwrap_or(Status::Pass)
}
in_session!(ext_notification_ignored, ext_notification_ignored_body);

async fn tool_method_prefix(ctx: &Ctx) -> Finding {
    match &ctx.target.tool_method {
        None => Finding::skip(
            "the target declares no tool extension method, so there is no name to judge; declare one with --tool-method METHOD or `tool_method` under [surfaces.acp]",
        ),
        Some(m) if m.starts_with('_') && m.len() > 1 => Finding::pass(Vec::new()),
        Some(m) => Finding::violated(
            format!(
                "the tool method `{m}` does not begin with `_`: it squats a name ACP may claim; use `_{m}` (or `_<your-domain>/{m}`)"
            ),
            Vec::new(),
        ),
    }
}

fn mentions(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => s == needle,
        Value::Array(a) => a.iter().any(|x| mentions(x, needle)),
        Value::Object(o) => o.iter().any(|(k, x)| k == needle || mentions(x, needle)),
        _ => false,
    }
}

/// The name of a tool no target has: the tool method must still be served (it answers the call
/// with an outcome or an error of its own), never −32601 as if the method did not exist.
const NO_SUCH_TOOL: &str = "__parity_no_such_tool__";

async fn tool_method_served_body(ctx: &Ctx, c: &mut Client, init: &Value) -> Status {
    let Some((method, source)) = acp::tool_method(ctx.target.tool_method.as_deref(), init) else {
        return Status::Skip(acp::NO_TOOL_METHOD.into());
    };
    // With a session when the agent gives one; the call is judged either way.
    let sid = session_for(c, init).await.ok();
    let template = ctx.target.tool_params.as_ref();
    match acp::tool_call(c, &method, template, sid.as_deref(), NO_SUCH_TOOL, &json!({})).await {
        Err(e) => io_err(e),
        Ok(r) => match r.error_code() {
            Some(-32601) => violated(match source {
                acp::ToolMethodSource::Declared => format!(
                    "the declared tool method `{method}` is answered -32601 (Method not found): the agent does not serve it; check the tool method's name (--tool-method, `tool_method`)"
                ),
                acp::ToolMethodSource::Advertised => format!(
                    "the agent advertises the tool method `{method}` under agentCapabilities._meta, but answers it -32601 (Method not found): it does not serve what it advertises"
                ),
            }),
            Some(_) => Status::Pass,
            None if r.result().is_some() => Status::Pass,
            None => unanswered(&format!("a call of `{method}`"), &r),
        },
    }
}
in_session!(tool_method_served, tool_method_served_body);

async fn tool_method_advertised_body(ctx: &Ctx, _c: &mut Client, init: &Value) -> Status {
    let Some(method) = &ctx.target.tool_method else {
        // Nothing declared: an agent that advertises a tool method advertises it; one that
        // advertises none is not judged by parity's own convention.
        return match acp::advertised_tool_method(init) {
            Some(_) => Status::Pass,
            None => Status::Skip(acp::NO_TOOL_METHOD.into()),
        };
    };
    let meta = init.pointer("/agentCapabilities/_meta");
    match meta {
        Some(m) if mentions(m, method) => Status::Pass,
        Some(m) => violated(format!(
            "agentCapabilities._meta does not name the tool method `{method}`: {}",
            crate::base::util::clip(&m.to_string(), 200)
        )),
        None => violated(format!(
            "agentCapabilities has no `_meta`: the tool method `{method}` is not advertised"
        )),
    }
}
in_session!(tool_method_advertised, tool_method_advertised_body);

// ---------------------------------------------------------------------------------------------
// Sessions and prompts
// ---------------------------------------------------------------------------------------------

/// The `not-run` of a case whose agent answered −32000 (Authentication required): parity never
/// calls `authenticate`, so the agent gives it no session to check.
fn auth_required(what: &str, r: &Reply, init: &Value) -> Status {
    let ids = acp::auth_method_ids(init);
    let offered = if ids.is_empty() {
        "; its initialize result lists no authMethods".to_string()
    } else {
        format!("; it advertises authMethods {}", ids.join(", "))
    };
    Status::NotRun(format!(
        "{what} was answered -32000 (Authentication required){offered}: the agent wants `authenticate` first, and parity does not log in, so there is no session to check; run parity against the agent once it is logged in (its own login step, or credentials in its environment) so that session/new works without `authenticate`: {}",
        r.describe()
    ))
}

/// The status of an error answer to a `session/new` that should have created a session:
/// −32000 is `not-run` ([`auth_required`]); −32603 is the agent failing inside, which says
/// nothing about the request, so the case is `not-run` too; any other error is a refusal,
/// against "The Agent MUST respond with a unique Session ID".
fn session_error(what: &str, r: &Reply, init: &Value) -> Status {
    match r.error_code() {
        Some(acp::AUTH_REQUIRED) => auth_required(what, r, init),
        Some(-32603) => Status::NotRun(format!(
            "{what} failed with an internal error (-32603): the agent failed inside instead of judging the request, so whether it creates this session could not be decided; its stderr (in the evidence) may say why: {}",
            r.describe()
        )),
        Some(-32602) => violated(format!(
            "{what} was refused as invalid params (-32602) instead of creating a session: {}",
            r.describe()
        )),
        code => violated(format!(
            "{what} was answered with {} instead of a session: {}",
            code_words(code),
            r.describe()
        )),
    }
}

fn session_result(what: &str, r: &Reply, init: &Value) -> Status {
    match acp::session_id(r) {
        Some(_) => Status::Pass,
        None if r.error().is_some() => session_error(what, r, init),
        None if r.result().is_some() => violated(format!(
            "{what}: the result has no string `sessionId`: {}",
            r.describe()
        )),
        None => unanswered(what, r),
    }
}

async fn new_empty_body(_ctx: &Ctx, c: &mut Client, init: &Value) -> Status {
    match acp::new_session(c, json!([])).await {
        Err(e) => io_err(e),
        Ok(r) => session_result("session/new with `mcpServers: []`", &r, init),
    }
}
in_session!(new_empty, new_empty_body);

async fn new_stdio_body(_ctx: &Ctx, c: &mut Client, init: &Value) -> Status {
    match acp::new_session(c, json!([acp::stdio_server_entry()])).await {
        Err(e) => io_err(e),
        Ok(r) => session_result(
            "session/new with a stdio MCP server (args and env as arrays of {name, value})",
            &r,
            init,
        ),
    }
}
in_session!(new_stdio, new_stdio_body);

async fn new_invalid_body(_ctx: &Ctx, c: &mut Client, init: &Value) -> Status {
    let mut entry = acp::stdio_server_entry();
    if let Value::Object(o) = &mut entry {
        // The shape clients get wrong: `env` as a map instead of an array of {name, value}.
        o.insert("env".into(), json!({"PARITY_PROBE": "1"}));
    }
    match acp::new_session(c, json!([entry])).await {
        Err(e) => io_err(e),
        Ok(r) => match r.error_code() {
            Some(-32602) => Status::Pass,
            // Authentication comes before any judgement of the params.
            Some(acp::AUTH_REQUIRED) => {
                auth_required("session/new with a malformed stdio entry", &r, init)
            }
            Some(code) => violated(format!(
                "a malformed stdio entry (`env` as a map) was answered with code {code}, not -32602 (Invalid params)"
            )),
            // The schema lets an agent skip an invalid entry and create the session.
            None if acp::session_id(&r).is_some() => Status::Pass,
            None if r.result().is_some() => violated(format!(
                "a malformed stdio entry was answered with a result that is not a session: {}",
                r.describe()
            )),
            None => unanswered("session/new with a malformed env", &r),
        },
    }
}
in_session!(new_invalid, new_invalid_body);

/// Opens a session with `mcpServers: []`, or says why not (`not-run`; the
/// `acp.session.new-*` checks judge session/new itself).
async fn session_for(c: &mut Client, init: &Value) -> Result<String, Status> {
    let r = acp::new_session(c, json!([])).await.map_err(io_err)?;
    acp::session_id(&r).ok_or_else(|| match r.error_code() {
        Some(acp::AUTH_REQUIRED) => auth_required("session/new with `mcpServers: []`", &r, init),
        _ => Status::NotRun(format!(
            "session/new with `mcpServers: []` gave no session (acp.session.new-empty-mcp-servers judges that): {}",
            r.describe()
        )),
    })
}

async fn stop_reason_body(_ctx: &Ctx, c: &mut Client, init: &Value) -> Status {
    let sid = match session_for(c, init).await {
        Ok(s) => s,
        Err(s) => return s,
    };
    match acp::prompt(c, &sid, "parity: say hello").await {
        Err(e) => io_err(e),
        Ok(r) => match r.result() {
            Some(res) => match res.get("stopReason").and_then(Value::as_str) {
                Some(s) if STOP_REASONS.contains(&s) => Status::Pass,
                other => violated(format!(
                    "the prompt result's `stopReason` is {}, not one of {}",
                    other.map_or("absent".to_string(), |s| format!("\"{s}\"")),
                    STOP_REASONS.join(", ")
                )),
            },
            None if r.error_code() == Some(acp::AUTH_REQUIRED) => {
                auth_required("session/prompt", &r, init)
            }
            None if r.error().is_some() => Status::Advisory(format!(
                "the prompt was refused (an agent that needs credentials may do so): {}",
                r.describe()
            )),
            None => unanswered("session/prompt", &r),
        },
    }
}
in_session!(stop_reason, stop_reason_body);

async fn cancel_body(ctx: &Ctx, c: &mut Client, init: &Value) -> Status {
    let sid = match session_for(c, init).await {
        Ok(s) => s,
        Err(s) => return s,
    };
    let text = ctx
        .target
        .cancel_prompt
        .clone()
        .unwrap_or_else(|| "parity: a turn to cancel".into());
    let id = c.fresh_id();
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": acp::prompt_params(&sid, &text)});
    if let Err(e) = c.peer.send_json(&msg).await {
        return io_err(e);
    }
    // Let the turn start, then cancel it. A turn that ended meanwhile is answered already.
    let (got, _) = c.collect_for(ctx.timing.silence / 3).await;
    let early = got
        .iter()
        .filter_map(|i| i.value())
        .flat_map(|v| match v {
            Value::Array(items) => items.iter().collect::<Vec<_>>(),
            one => vec![one],
        })
        .find(|v| v.get("method").is_none() && v.get("id") == Some(&id))
        .cloned();
    if let Err(e) = acp::cancel(c, &sid).await {
        return io_err(e);
    }
    if let Some(v) = early.as_ref().filter(|v| v.get("error").is_some()) {
        if v.pointer("/error/code").and_then(Value::as_i64) == Some(acp::AUTH_REQUIRED) {
            return auth_required("session/prompt", &Reply::Message(v.clone()), init);
        }
        return Status::Advisory(format!(
            "the prompt was refused before the cancel (an agent that needs credentials may do so): {}",
            crate::base::util::clip(&v.to_string(), 200)
        ));
    }
    let r = match early {
        Some(v) => Reply::Message(v),
        None => c.wait_response(&id).await,
    };
    match (r.result(), r.error()) {
        (Some(res), _) => match res.get("stopReason").and_then(Value::as_str) {
            Some("cancelled") => Status::Pass,
            Some(other) if ctx.target.cancel_prompt.is_none() => Status::Skip(format!(
                "the turn ended ({other}) before the cancel arrived; declare a prompt the agent keeps open (`cancel_prompt` in the target) to test cancellation"
            )),
            other => violated(match other {
                Some(s) => format!(
                    "the cancelled prompt ended with stopReason \"{s}\", not \"cancelled\""
                ),
                None => "the cancelled prompt ended without a string stopReason, not with \"cancelled\"".to_string(),
            }),
        },
        (None, Some(_)) if r.error_code() == Some(acp::AUTH_REQUIRED) => {
            auth_required("the session/prompt to cancel", &r, init)
        }
        (None, Some(_)) => violated(format!(
            "the cancelled prompt was answered with an error instead of stopReason \"cancelled\": {}",
            r.describe()
        )),
        _ => unanswered("the cancelled session/prompt", &r),
    }
}
in_session!(cancel, cancel_body);

// ---------------------------------------------------------------------------------------------
// Monitors
// ---------------------------------------------------------------------------------------------

/// An MCP monitor's finding with its wording made ACP's.
fn reworded(f: Finding) -> Finding {
    let fix = |s: String| s.replace("MCP message", "ACP message");
    Finding {
        status: match f.status {
            Status::Violated(s) => Status::Violated(fix(s)),
            Status::Advisory(s) => Status::Advisory(fix(s)),
            other => other,
        },
        evidence: f.evidence.into_iter().map(fix).collect(),
    }
}

fn stdout_purity(input: &MonitorInput) -> Finding {
    reworded(m::stdout_purity_for(input, true))
}

fn newline_delimited(input: &MonitorInput) -> Finding {
    m::newline_delimited(input)
}

fn utf8(input: &MonitorInput) -> Finding {
    m::utf8_no_bom(input)
}

fn jsonrpc_version(input: &MonitorInput) -> Finding {
    m::jsonrpc_version(input)
}

fn result_xor_error(input: &MonitorInput) -> Finding {
    m::result_xor_error(input)
}

fn duplicate_response(input: &MonitorInput) -> Finding {
    m::duplicate_responses(input, "agent")
}

fn no_batches(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for (s, l) in m::s2c_lines(input.sessions) {
        if let Ok(Value::Array(_)) = serde_json::from_slice::<Value>(&l.bytes) {
            problems.push(format!(
                "[{}] the agent sent a JSON-RPC batch, which ACP v1 does not have: {}",
                s.case,
                m::line_text(l)
            ));
        }
    }
    m::monitor_result(problems)
}

fn schema_v1(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        let methods = m::c2s_methods(s);
        for v in m::s2c_messages(s) {
            let Some(o) = v.as_object() else { continue };
            let found = if let Some(method) = o.get("method").and_then(Value::as_str) {
                validate_agent_message(method, o.get("params"))
            } else if let Some(err) = o.get("error") {
                crate::protocol::validate::validate_error(err)
            } else if let Some(result) = o.get("result") {
                let method = o
                    .get("id")
                    .and_then(|id| methods.get(&id.to_string()))
                    .map(String::as_str)
                    .unwrap_or("");
                validate_result(method, result)
                    .into_iter()
                    .map(|p| format!("{method} result: {p}"))
                    .collect()
            } else {
                Vec::new()
            };
            problems.extend(found.into_iter().map(|p| format!("[{}] {p}", s.case)));
        }
    }
    m::monitor_result(problems)
}

fn update_after_new(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        let mut known: HashSet<String> = HashSet::new();
        let methods = m::c2s_methods(s);
        // Once the bounded frame log has left frames out or cut one, a session/new response (or
        // its request) may be among them: an update for an unknown session then proves nothing.
        let mut gap_seen = false;
        for e in &s.events {
            // A gap, or a line (either way) kept only as a prefix, may hide that response.
            if matches!(e.frame, crate::transport::wire::Frame::Gap { .. })
                || e.line().is_some_and(|l| l.elided)
            {
                gap_seen = true;
            }
            if e.dir != Dir::S2c {
                continue;
            }
            let Some(line) = e
                .line()
                .and_then(|l| serde_json::from_slice::<Value>(&l.bytes).ok())
            else {
                continue;
            };
            // A batch (which v1 does not have; `acp.stdio.no-batches` judges it) is read
            // member by member.
            let messages = match line {
                Value::Array(items) => items,
                one => vec![one],
            };
            for v in messages {
                if let (Some(id), Some(sid)) = (v.get("id"), v.pointer("/result/sessionId")) {
                    if methods.get(&id.to_string()).map(String::as_str) == Some("session/new") {
                        if let Some(sid) = sid.as_str() {
                            known.insert(sid.to_string());
                        }
                    }
                }
                if v.get("method").and_then(Value::as_str) != Some("session/update") {
                    continue;
                }
                if let Some(sid) = v.pointer("/params/sessionId").and_then(Value::as_str) {
                    if !known.contains(sid) && !gap_seen {
                        problems.push(format!(
                            "[{}] a session/update for session {sid:?} arrived before the session/new response that created it: {}",
                            s.case,
                            crate::base::util::clip(&v.to_string(), 200)
                        ));
                    }
                }
            }
        }
    }
    m::monitor_result(problems)
}

fn agent_requests(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        for v in m::s2c_messages(s) {
            let Some(method) = v.get("method").and_then(Value::as_str) else {
                continue;
            };
            if method.starts_with('_') {
                continue;
            }
            let why = if !acp::AGENT_TO_CLIENT_METHODS.contains(&method) {
                Some("is not an agent-to-client method of ACP v1 and does not begin with `_`")
            } else if method.starts_with("fs/")
                || method.starts_with("terminal/")
                || method == "elicitation/create"
            {
                Some("needs a client capability parity declared false")
            } else {
                None
            };
            if let Some(why) = why {
                problems.push(format!(
                    "[{}] the agent sent `{method}`, which {why}: {}",
                    s.case,
                    crate::base::util::clip(&v.to_string(), 200)
                ));
            }
        }
    }
    m::monitor_result(problems)
}

// ---------------------------------------------------------------------------------------------
// v1 shapes (cross-checked against the official schema in tests/tests/acp_schemas.rs)
// ---------------------------------------------------------------------------------------------

/// The `sessionUpdate` values of v1 `SessionUpdate`.
pub const SESSION_UPDATES: [&str; 11] = [
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
];

fn check_bools(obj: &Value, path: &str, keys: &[&str], out: &mut Vec<String>) {
    for k in keys {
        if let Some(v) = obj.get(*k) {
            if !v.is_boolean() {
                out.push(format!("`{path}.{k}` must be a boolean, got {v}"));
            }
        }
    }
}

fn check_object(v: Option<&Value>, path: &str, out: &mut Vec<String>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Object(_)) => true,
        Some(other) => {
            out.push(format!("`{path}` must be an object, got {other}"));
            false
        }
    }
}

/// Problems with a v1 result of `method` (`initialize`, `session/new`, `session/prompt`; others
/// are not judged). An empty list means valid.
pub fn validate_result(method: &str, result: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let obj_ok = result.is_object();
    match method {
        "initialize" => {
            if !obj_ok {
                return vec![format!("must be an object, got {result}")];
            }
            match result.get("protocolVersion") {
                Some(v) if v.as_u64().is_some_and(|n| n <= 65535) => {}
                Some(v) => out.push(format!(
                    "`protocolVersion` must be an integer 0…65535, got {v}"
                )),
                None => out.push("`protocolVersion` is required".into()),
            }
            let caps = result.get("agentCapabilities");
            if check_object(caps, "agentCapabilities", &mut out) {
                if let Some(c) = caps {
                    check_bools(c, "agentCapabilities", &["loadSession"], &mut out);
                    let pc = c.get("promptCapabilities");
                    if check_object(pc, "agentCapabilities.promptCapabilities", &mut out) {
                        if let Some(pc) = pc {
                            check_bools(
                                pc,
                                "agentCapabilities.promptCapabilities",
                                &["image", "audio", "embeddedContext"],
                                &mut out,
                            );
                        }
                    }
                    let mc = c.get("mcpCapabilities");
                    if check_object(mc, "agentCapabilities.mcpCapabilities", &mut out) {
                        if let Some(mc) = mc {
                            check_bools(
                                mc,
                                "agentCapabilities.mcpCapabilities",
                                &["http", "sse"],
                                &mut out,
                            );
                        }
                    }
                    check_object(c.get("_meta"), "agentCapabilities._meta", &mut out);
                }
            }
            match result.get("authMethods") {
                None | Some(Value::Null) => {}
                Some(Value::Array(a)) => {
                    for (i, m) in a.iter().enumerate() {
                        for k in ["id", "name"] {
                            if !m.get(k).is_some_and(Value::is_string) {
                                out.push(format!("`authMethods[{i}].{k}` must be a string"));
                            }
                        }
                    }
                }
                Some(v) => out.push(format!("`authMethods` must be an array, got {v}")),
            }
            let info = result.get("agentInfo");
            if check_object(info, "agentInfo", &mut out) {
                if let Some(i) = info {
                    for k in ["name", "version"] {
                        if !i.get(k).is_some_and(Value::is_string) {
                            out.push(format!("`agentInfo.{k}` must be a string"));
                        }
                    }
                }
            }
        }
        "session/new" => {
            if !obj_ok {
                return vec![format!("must be an object, got {result}")];
            }
            if !result.get("sessionId").is_some_and(Value::is_string) {
                out.push("`sessionId` (string) is required".into());
            }
            check_object(result.get("modes"), "modes", &mut out);
            if let Some(v) = result.get("configOptions") {
                if !v.is_array() && !v.is_null() {
                    out.push(format!("`configOptions` must be an array, got {v}"));
                }
            }
        }
        "session/prompt" => {
            if !obj_ok {
                return vec![format!("must be an object, got {result}")];
            }
            match result.get("stopReason").and_then(Value::as_str) {
                Some(s) if STOP_REASONS.contains(&s) => {}
                _ => out.push(format!(
                    "`stopReason` must be one of {STOP_REASONS:?}, got {}",
                    result
                        .get("stopReason")
                        .map(Value::to_string)
                        .unwrap_or("nothing".into())
                )),
            }
        }
        _ => {}
    }
    out
}

/// Problems with a message the agent sent (a request or notification) of `method`: only
/// `session/update` is judged in depth (`SessionNotification`). An empty list means valid.
pub fn validate_agent_message(method: &str, params: Option<&Value>) -> Vec<String> {
    let mut out = Vec::new();
    if method != "session/update" {
        return out;
    }
    let Some(p) = params.filter(|p| p.is_object()) else {
        return vec!["session/update: `params` must be an object".into()];
    };
    if !p.get("sessionId").is_some_and(Value::is_string) {
        out.push("session/update: `sessionId` (string) is required".into());
    }
    match p.get("update") {
        Some(u) if u.is_object() => match u.get("sessionUpdate").and_then(Value::as_str) {
            Some(kind) if SESSION_UPDATES.contains(&kind) => {
                if kind.ends_with("_chunk") {
                    match u.get("content") {
                        Some(c) if c.get("type").is_some_and(Value::is_string) => {}
                        _ => out.push(format!(
                            "session/update {kind}: `content` must be a ContentBlock object with a string `type`"
                        )),
                    }
                }
            }
            other => out.push(format!(
                "session/update: `update.sessionUpdate` must be one of the 11 v1 variants, got {other:?}"
            )),
        },
        _ => out.push("session/update: `update` (object) is required".into()),
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

const STDIO: &str = "acp:transports#stdio";
const ONLY_V1: Revs = Revs::Only(&["v1"]);

/// Runs the ACP v1 profile against an agent: every check of [`catalogue`] as a case
/// `check@acp#v1`, each in fresh sessions. An agent that does not answer `initialize` at
/// version 1 leaves `eras` empty (the run could not happen) with the reason in `notes`.
///
/// Errors: an invalid `--filter`/`--skip` glob (a usage error).
pub async fn run_acp(
    target: crate::engine::check::McpTarget,
    opts: &crate::engine::run::RunOptions,
) -> Result<crate::engine::run::RunReport, String> {
    let catalogue = crate::engine::run::Catalogue {
        checks: catalogue(),
        shares_session: |_| false,
    };
    crate::engine::run::run_acp_catalogue(target, opts, catalogue).await
}

/// Every ACP v1 check, in catalogue order.
pub fn catalogue() -> Vec<Check> {
    vec![
        Check {
            id: "acp.stdio.stdout-purity",
            requirement: "Every line the agent writes to stdout is a JSON-RPC message; nothing else (banners, logs, shell noise).",
            level: Level::MustNot,
            quote: "The agent MUST NOT write anything to its stdout that is not a valid ACP message.",
            section: STDIO,
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(stdout_purity),
        },
        Check {
            id: "acp.stdio.newline-delimited",
            requirement: "Each message is one line ended by a newline, with no embedded newlines.",
            level: Level::MustNot,
            quote: "Messages are delimited by newlines (\\n), and MUST NOT contain embedded newlines.",
            section: STDIO,
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(newline_delimited),
        },
        Check {
            id: "acp.base.utf8",
            requirement: "Every message the agent writes is UTF-8 (no byte-order mark).",
            level: Level::Must,
            quote: "JSON-RPC messages MUST be UTF-8 encoded.",
            section: "acp:transports",
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(utf8),
        },
        Check {
            id: "acp.base.jsonrpc-version",
            requirement: "Every message carries `\"jsonrpc\": \"2.0\"`.",
            level: Level::Must,
            quote: "A String specifying the version of the JSON-RPC protocol. MUST be exactly \"2.0\".",
            section: "jsonrpc-2.0#request_object",
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(jsonrpc_version),
        },
        Check {
            id: "acp.base.result-xor-error",
            requirement: "Every response has exactly one of `result` and `error`.",
            level: Level::Must,
            quote: "Either the result member or error member MUST be included, but both members MUST NOT be included.",
            section: "jsonrpc-2.0#response_object",
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(result_xor_error),
        },
        Check {
            id: "acp.base.duplicate-response",
            requirement: "Each request is answered once: no second response to an id already answered (a client drops it, or takes it for the answer to a later request). JSON-RPC 2.0 asks for a Response per request and no sentence forbids a second one in so many words, so a robustness rule.",
            level: Level::Robustness,
            quote: m::ONE_RESPONSE,
            section: "jsonrpc-2.0#response_object",
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(duplicate_response),
        },
        Check {
            id: "acp.schema.v1-messages",
            requirement: "initialize, session/new and session/prompt results, session/update notifications and error objects have the v1 shapes.",
            level: Level::Must,
            quote: "Clients and Agents MUST agree on a protocol version and act according to its specification.",
            section: "acp:schema",
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(schema_v1),
        },
        Check {
            id: "acp.stdio.no-batches",
            requirement: "The agent never sends a JSON-RPC batch (an array): v1 stdio carries individual messages only.",
            level: Level::Robustness,
            quote: "Messages are individual JSON-RPC requests, notifications, or responses.",
            section: STDIO,
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(no_batches),
        },
        Check {
            id: "acp.session.update-after-new",
            requirement: "No session/update names a session before the session/new response that created it (clients that see one first hang or drop it).",
            level: Level::Robustness,
            quote: "The session ID returned by session/new is a unique identifier for the conversation context.",
            section: "acp:session-setup#session-id",
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(update_after_new),
        },
        Check {
            id: "acp.init.capabilities-respected",
            requirement: "The agent sends only v1 agent-to-client methods (or `_` extensions), and none that needs a client capability parity declared false (fs, terminal, elicitation).",
            level: Level::Must,
            quote: "Clients and Agents MUST treat all capabilities omitted in the initialize request as UNSUPPORTED.",
            section: "acp:initialization#capabilities",
            revs: ONLY_V1,
            capability: None,
            kind: CheckKind::Monitor(agent_requests),
        },
        Check {
            id: "acp.init.protocol-version-integer",
            requirement: "initialize at version 1 succeeds and its result carries an integer `protocolVersion`.",
            level: Level::Must,
            quote: "If the Agent supports the requested version, it MUST respond with the same version.",
            section: "acp:initialization#protocol-version",
            revs: ONLY_V1,
            capability: None,
            kind: active!(protocol_version_integer),
        },
        Check {
            id: "acp.init.version-negotiation",
            requirement: "Asked for version 1 the agent echoes it when supported; asked for 65535 it answers its own latest version, never an error or an echo (the mirror test of fault class B23).",
            level: Level::Must,
            quote: "Otherwise, the Agent MUST respond with the latest version it supports.",
            section: "acp:initialization#version-negotiation",
            revs: ONLY_V1,
            capability: None,
            kind: active!(version_negotiation),
        },
        Check {
            id: "acp.base.id-echo",
            requirement: "A response carries the request's id exactly, type included (a string with non-ASCII characters, an integer of 2^53-1).",
            level: Level::Must,
            quote: "It MUST be the same as the value of the id member in the Request Object.",
            section: "jsonrpc-2.0#response_object",
            revs: ONLY_V1,
            capability: None,
            kind: active!(id_echo),
        },
        Check {
            id: "acp.base.parse-error",
            requirement: "A line that is not JSON is answered with a -32700 error whose id is null, and the agent keeps serving.",
            level: Level::Must,
            quote: "If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null.",
            section: "jsonrpc-2.0#response_object",
            revs: ONLY_V1,
            capability: None,
            kind: active!(parse_error),
        },
        Check {
            id: "acp.base.invalid-request",
            requirement: "JSON that is not a Request object (a bare number, a non-string method) gets an error response (-32600, id null when unreadable), and the agent keeps serving.",
            level: Level::Must,
            quote: "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
            section: "jsonrpc-2.0#response_object",
            revs: ONLY_V1,
            capability: None,
            kind: active!(invalid_request),
        },
        Check {
            id: "acp.base.unknown-method",
            requirement: "A request for a method the agent does not have is answered -32601 (Method not found).",
            level: Level::Robustness,
            quote: "-32601 Method not found: The method does not exist / is not available.",
            section: "jsonrpc-2.0#error_object",
            revs: ONLY_V1,
            capability: None,
            kind: active!(unknown_method),
        },
        Check {
            id: "acp.base.notification-unanswered",
            requirement: "A notification (session/cancel for an unknown session) gets no response.",
            level: Level::MustNot,
            quote: "The Server MUST NOT reply to a Notification, including those that are within a batch request.",
            section: "jsonrpc-2.0#notification",
            revs: ONLY_V1,
            capability: None,
            kind: active!(notification_unanswered),
        },
        Check {
            id: "acp.ext.unknown-request-answered",
            requirement: "An unknown `_` extension request still gets a response with its id.",
            level: Level::Must,
            quote: "Upon receiving a custom request, implementations MUST respond accordingly with the provided id.",
            section: "acp:extensibility#custom-requests",
            revs: ONLY_V1,
            capability: None,
            kind: active!(ext_request_answered),
        },
        Check {
            id: "acp.ext.unknown-request-method-not-found",
            requirement: "An unknown `_` extension request is answered -32601 (Method not found); the page says so in lower case, so a robustness rule.",
            level: Level::Robustness,
            quote: "If the receiving end doesn't recognize the custom method name, it should respond with the standard \"Method not found\" error.",
            section: "acp:extensibility#custom-requests",
            revs: ONLY_V1,
            capability: None,
            kind: active!(ext_request_not_found),
        },
        Check {
            id: "acp.ext.unknown-notification-ignored",
            requirement: "An unknown `_` extension notification is ignored: the agent keeps serving (a reply to it breaks JSON-RPC's MUST NOT and always fails).",
            level: Level::Should,
            quote: "Unlike with custom requests, implementations SHOULD ignore unrecognized notifications.",
            section: "acp:extensibility#custom-notifications",
            revs: ONLY_V1,
            capability: None,
            kind: active!(ext_notification_ignored),
        },
        Check {
            id: "acp.ext.tool-method-prefix",
            requirement: "The target's tool extension method begins with `_` (a bare name such as `realm/tool` squats a name ACP may claim).",
            level: Level::Robustness,
            quote: "Implementations MAY expose and call custom JSON-RPC requests as long as their name starts with an underscore (_).",
            section: "acp:extensibility#custom-requests",
            revs: ONLY_V1,
            capability: None,
            kind: active!(tool_method_prefix),
        },
        Check {
            id: "acp.ext.tool-method-served",
            requirement: "The agent serves the target's tool extension method (the declared one, else the one the agent advertises; skipped when there is neither): a call of a tool that does not exist gets the method's own answer (an outcome or an error), not -32601 as for a method the agent lacks.",
            level: Level::Robustness,
            quote: "Implementations MAY expose and call custom JSON-RPC requests as long as their name starts with an underscore (_).",
            section: "acp:extensibility#custom-requests",
            revs: ONLY_V1,
            capability: None,
            kind: active!(tool_method_served),
        },
        Check {
            id: "acp.ext.tool-method-advertised",
            requirement: "The agent advertises the declared tool extension method under `agentCapabilities._meta` (with none declared: passes when it advertises one, skipped when it advertises none).",
            level: Level::Should,
            quote: "Implementations SHOULD use the _meta field in capability objects to advertise support for extensions and their methods.",
            section: "acp:extensibility#advertising-custom-capabilities",
            revs: ONLY_V1,
            capability: None,
            kind: active!(tool_method_advertised),
        },
        Check {
            id: "acp.session.new-empty-mcp-servers",
            requirement: "session/new with an absolute `cwd` and `mcpServers: []` creates a session (a string `sessionId`); an agent that answers -32000 (Authentication required) or -32603 (Internal error) cannot be judged and is not-run.",
            level: Level::Must,
            quote: "The Agent MUST respond with a unique Session ID that identifies this conversation.",
            section: "acp:session-setup#creating-a-session",
            revs: ONLY_V1,
            capability: None,
            kind: active!(new_empty),
        },
        Check {
            id: "acp.session.new-stdio-server",
            requirement: "session/new with a stdio MCP server entry whose `args` is an array of strings and `env` an array of {name, value} creates a session.",
            level: Level::Must,
            quote: "All Agents MUST support the stdio transport, while HTTP and SSE transports are optional capabilities that can be checked during initialization.",
            section: "acp:session-setup#mcp-servers",
            revs: ONLY_V1,
            capability: None,
            kind: active!(new_stdio),
        },
        Check {
            id: "acp.session.new-invalid-params",
            requirement: "session/new with a malformed stdio entry (`env` as a map instead of an array of {name, value}) is refused -32602 (Invalid params), or answered with a session that skips the entry (the v1 schema marks `mcpServers` `x-deserialize-skip-invalid-items`); never another error, a crash or silence.",
            level: Level::Robustness,
            quote: "-32602 Invalid params: Invalid method parameter(s).",
            section: "jsonrpc-2.0#error_object",
            revs: ONLY_V1,
            capability: None,
            kind: active!(new_invalid),
        },
        Check {
            id: "acp.prompt.stop-reason",
            requirement: "A text prompt is answered with a result whose `stopReason` is one of the five v1 stop reasons.",
            level: Level::Must,
            quote: "If there are no pending tool calls, the turn ends and the Agent MUST respond to the original session/prompt request with a StopReason.",
            section: "acp:prompt-turn#4-check-for-completion",
            revs: ONLY_V1,
            capability: None,
            kind: active!(stop_reason),
        },
        Check {
            id: "acp.prompt.cancel",
            requirement: "session/cancel during a prompt turn ends it with stopReason \"cancelled\", never with an error.",
            level: Level::Must,
            quote: "After all ongoing operations have been successfully aborted and pending updates have been sent, the Agent MUST respond to the original session/prompt request with the cancelled stop reason.",
            section: "acp:prompt-turn#cancellation",
            revs: ONLY_V1,
            capability: None,
            kind: active!(cancel),
        },
    ]
}

/// Looks an ACP check up by id.
pub fn find(id: &str) -> Option<Check> {
    catalogue().into_iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn error(code: i64, message: &str) -> Reply {
        Reply::Message(
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": code, "message": message}}),
        )
    }

    fn init_with_auth() -> Value {
        json!({"protocolVersion": 1, "authMethods": [{"id": "login", "name": "Log in"}]})
    }

    #[test]
    fn authentication_required_is_not_run_naming_the_auth_methods() {
        let s = session_result(
            "session/new",
            &error(-32000, "Authentication required"),
            &init_with_auth(),
        );
        let Status::NotRun(m) = s else {
            panic!("{s:?}")
        };
        assert!(m.contains("-32000 (Authentication required)"), "{m}");
        assert!(m.contains("authMethods login"), "{m}");
        assert!(m.contains("logged in"), "{m}");
        assert!(!m.contains("refused"), "{m}");
    }

    #[test]
    fn authentication_required_without_auth_methods_says_so() {
        let s = session_result(
            "session/new",
            &error(-32000, "auth"),
            &json!({"protocolVersion": 1}),
        );
        let Status::NotRun(m) = s else {
            panic!("{s:?}")
        };
        assert!(m.contains("lists no authMethods"), "{m}");
    }

    #[test]
    fn an_internal_error_is_reported_as_one_and_is_not_a_failure() {
        let s = session_result("session/new", &error(-32603, "boom"), &json!({}));
        let Status::NotRun(m) = s else {
            panic!("{s:?}")
        };
        assert!(m.contains("internal error (-32603)"), "{m}");
        assert!(!m.contains("refused"), "{m}");
    }

    #[test]
    fn invalid_params_is_a_refusal() {
        let s = session_result(
            "session/new with `mcpServers: []`",
            &error(-32602, "need one"),
            &json!({}),
        );
        let Status::Violated(m) = s else {
            panic!("{s:?}")
        };
        assert!(m.contains("refused as invalid params (-32602)"), "{m}");
    }

    #[test]
    fn messages_carry_no_debug_text() {
        for code in [None, Some(-1)] {
            let w = code_words(code);
            assert!(!w.contains("Some(") && !w.contains("None"), "{w}");
        }
    }

    #[test]
    fn the_tool_method_is_declared_or_advertised_or_none() {
        let advertised =
            json!({"agentCapabilities": {"_meta": {"parity": {"toolMethod": "_x/tool"}}}});
        let named = json!({"agentCapabilities": {"_meta": {"tools": ["_parity/tool"]}}});
        let none = json!({"agentCapabilities": {"loadSession": false}});
        assert_eq!(
            acp::tool_method(Some("_d/tool"), &none),
            Some(("_d/tool".to_string(), acp::ToolMethodSource::Declared))
        );
        assert_eq!(
            acp::tool_method(None, &advertised),
            Some(("_x/tool".to_string(), acp::ToolMethodSource::Advertised))
        );
        assert_eq!(
            acp::tool_method(None, &named),
            Some((
                acp::DEFAULT_TOOL_METHOD.to_string(),
                acp::ToolMethodSource::Advertised
            ))
        );
        assert_eq!(acp::tool_method(None, &none), None);
    }
}
