//! The MCP checks of the server features beyond tools: resources, prompts, completion, logging,
//! the 2026-07-28 cache hints, list stability and input-required results, and the results of
//! the tools the user declared safe to call (docs/checks.md; the facts behind each are in the
//! spec pages each check's section names).
//!
//! Every check reads what the server itself declares — its capabilities, its lists, its schemas
//! and annotations — and judges the server against those declarations and the spec's words,
//! never against fixture names: a resource read is one the server listed, a prompt got is one
//! it listed (with arguments only when the target declares values), a completion asks for an
//! argument the server named. Each is gated on its capability, so a server that does not offer
//! a feature gets skips.

use super::{gone, unanswered, violated};
use crate::base::util::clip;
use crate::engine::check::{
    evidence, CallPolicy, Check, CheckKind, Ctx, Finding, Level, MonitorInput, Revs, Status,
};
use crate::engine::monitors::{monitor_result, s2c_messages};
use crate::protocol::mcp::{Client, Reply};
use crate::transport::wire::Dir;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// How many listed resources `mcp.resources.read` reads, and prompts `mcp.prompts.get` gets
/// (the first ones listed).
pub const SAMPLE: usize = 5;

/// How many tools the tool-result checks call, and generated argument sets per tool.
pub const CALLS_PER_TOOL: usize = 2;

/// A URI no server lists: the not-found checks read it.
const NO_SUCH: &str = "parity.invalid/no-such-resource-4b1d";

/// The checks in this module that share their binding's session (they send only well-formed
/// requests that change nothing, or undo what they change: `mcp.resources.subscribe`
/// unsubscribes, and the level `mcp.logging.invalid-level` sends must be refused). Setting log
/// levels and calling tools (declared safe, which is not declared stateless) get fresh sessions.
pub const SHARES_SESSION: &[&str] = &[
    "mcp.resources.subscribe",
    "mcp.logging.invalid-level",
    "mcp.resources.pagination",
    "mcp.resources.invalid-cursor",
    "mcp.resources.uri",
    "mcp.resources.read",
    "mcp.resources.template-syntax",
    "mcp.resources.unknown-uri",
    "mcp.modern.resource-not-found",
    "mcp.prompts.pagination",
    "mcp.prompts.get",
    "mcp.prompts.unknown-name",
    "mcp.prompts.missing-argument",
    "mcp.completion.complete",
    "mcp.completion.unknown-ref",
    "mcp.modern.tools-order",
    "mcp.modern.input-required-retry",
];

// ---------------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------------

/// A paginated list walked to its end: the items of every page and each page's result.
pub(super) struct Walk {
    pub(super) items: Vec<Value>,
    pub(super) results: Vec<Value>,
}

/// Lists `method` (items under `key`), following `nextCursor`; stops at a repeated cursor or
/// 1,000 pages. `Ok(None)` when the first page is refused with −32601 and `optional` (a server
/// may declare `resources` without templates).
pub(super) async fn walk(
    c: &mut Client,
    method: &str,
    key: &str,
    optional: bool,
) -> Result<Option<Walk>, Status> {
    let mut w = Walk {
        items: Vec::new(),
        results: Vec::new(),
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let params = match &cursor {
            Some(cur) => json!({"cursor": cur}),
            None => json!({}),
        };
        let reply = match c.request(method, params).await {
            Ok(r) => r,
            Err(e) => return Err(gone(c, e).await),
        };
        if matches!(reply, Reply::Timeout) {
            return Err(Status::Timeout(format!(
                "{method} got no response within {} ms",
                c.timeout.as_millis()
            )));
        }
        if optional && w.results.is_empty() && reply.error_code() == Some(-32601) {
            return Ok(None);
        }
        let Some(result) = reply.result().cloned() else {
            if matches!(reply, Reply::Eof) {
                return Err(unanswered(method, &reply));
            }
            return Err(violated(format!("{method} failed: {}", reply.describe())));
        };
        if let Some(Value::Array(page)) = result.get(key) {
            w.items.extend(page.iter().cloned());
        }
        let next = result.get("nextCursor").cloned();
        w.results.push(result);
        match next {
            None | Some(Value::Null) => return Ok(Some(w)),
            Some(Value::String(s)) => {
                if !seen.insert(s.clone()) {
                    return Err(violated(format!(
                        "{method} cursor {s:?} came back again after {} pages: the listing loops",
                        w.results.len()
                    )));
                }
                cursor = Some(s);
            }
            Some(other) => return Err(violated(format!("nextCursor is not a string: {other}"))),
        }
    }
    Err(violated(format!("{method} did not end within 1,000 pages")))
}

async fn walk_required(c: &mut Client, method: &str, key: &str) -> Result<Walk, Status> {
    walk(c, method, key, false).await.map(|w| {
        w.unwrap_or(Walk {
            items: Vec::new(),
            results: Vec::new(),
        })
    })
}

/// [`walk_required`] for a check that judges what the list holds, not the listing: a listing
/// that fails or loops is the pagination checks' to judge, so it is a skip here, with the
/// reason (a timeout, or a server that stopped, stays what it is).
async fn listing(c: &mut Client, method: &str, key: &str) -> Result<Walk, Status> {
    walk_required(c, method, key).await.map_err(|s| match s {
        Status::Violated(m) => Status::Skip(format!(
            "the {method} listing could not be read ({m}); the pagination checks judge it"
        )),
        other => other,
    })
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The answer parity gives an input request of an `input_required` result (`basic/patterns/mrtr`),
/// the same deterministic answers the driver gives legacy server requests: elicitation declined,
/// no roots, the text "parity" for sampling.
fn input_response(request: &Value) -> Value {
    match str_of(request, "method") {
        Some("roots/list") => json!({"roots": []}),
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "parity"},
            "model": "parity-deterministic",
            "stopReason": "endTurn"
        }),
        _ => json!({"action": "decline"}),
    }
}

/// What a request gave, following one `input_required` result with the retry the pattern
/// describes: the same method and params plus `inputResponses` (one answer per input request,
/// [`input_response`]) and the exact `requestState`, under a new id. `retried` says whether a
/// retry was sent.
pub(super) struct Fetched {
    pub(super) reply: Reply,
    pub(super) retried: bool,
}

pub(super) async fn fetch(
    c: &mut Client,
    method: &str,
    params: Value,
) -> Result<Fetched, crate::transport::peer::PeerError> {
    let reply = c.request(method, params.clone()).await?;
    let Some(result) = reply.result() else {
        return Ok(Fetched {
            reply,
            retried: false,
        });
    };
    if str_of(result, "resultType") != Some("input_required") {
        return Ok(Fetched {
            reply,
            retried: false,
        });
    }
    let mut retry = params;
    if let Some(asks) = result.get("inputRequests").and_then(Value::as_object) {
        let answers: Map<String, Value> = asks
            .iter()
            .map(|(k, r)| (k.clone(), input_response(r)))
            .collect();
        retry["inputResponses"] = Value::Object(answers);
    }
    if let Some(state) = result.get("requestState") {
        retry["requestState"] = state.clone();
    }
    Ok(Fetched {
        reply: c.request(method, retry).await?,
        retried: true,
    })
}

/// The complete result of `method` for `what` ([`fetch`], so after one input-required retry):
/// `Ok(None)` when it was refused or still asks for input (noted in `refused`), `Err` with the
/// check's status when no answer came or the server stopped.
async fn served(
    c: &mut Client,
    method: &str,
    params: Value,
    what: &str,
    refused: &mut Vec<String>,
) -> Result<Option<Value>, Status> {
    let reply = match fetch(c, method, params).await {
        Ok(f) => f.reply,
        Err(e) => return Err(gone(c, e).await),
    };
    let Some(result) = reply.result() else {
        if reply.error().is_some() {
            refused.push(format!("{what}: {}", reply.describe()));
            return Ok(None);
        }
        return Err(unanswered(&format!("{method} of {what}"), &reply));
    };
    if str_of(result, "resultType") == Some("input_required") {
        refused.push(format!("{what}: the server asked for input"));
        return Ok(None);
    }
    Ok(Some(result.clone()))
}

/// The first of `items` whose `key` repeats an earlier one's.
fn repeated(items: &[Value], key: &str) -> Option<String> {
    let mut seen = HashSet::new();
    items
        .iter()
        .filter_map(|i| str_of(i, key))
        .find(|k| !seen.insert(*k))
        .map(str::to_owned)
}

/// The verdict of a check that judged `judged` answers: a violation naming every problem, a
/// skip saying `nothing` when no answer could be judged, else a pass.
fn verdict_of(problems: &[String], judged: usize, nothing: impl FnOnce() -> String) -> Status {
    if !problems.is_empty() {
        violated(problems.join("; "))
    } else if judged == 0 {
        Status::Skip(nothing())
    } else {
        Status::Pass
    }
}

async fn invalid_cursor(c: &mut Client, method: &str) -> Status {
    let reply = match c
        .request(method, json!({"cursor": "parity-invalid-cursor-\u{1F50D}"}))
        .await
    {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    match reply.error_code() {
        Some(-32602) => Status::Pass,
        Some(code) => violated(format!(
            "an invalid {method} cursor got code {code}, not -32602"
        )),
        None if reply.result().is_some() => violated(format!(
            "an invalid {method} cursor was accepted: {}",
            reply.describe()
        )),
        None => unanswered(&format!("{method} with an invalid cursor"), &reply),
    }
}

// ---------------------------------------------------------------------------------------------
// Syntax: RFC 3986 URIs, RFC 6570 templates, base64
// ---------------------------------------------------------------------------------------------

fn pct_ok(bytes: &[u8], i: usize) -> bool {
    bytes.len() > i + 2 && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit()
}

/// Whether `s` is an RFC 3986 URI: a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`),
/// `:`, then only unreserved, reserved and percent-encoded characters.
pub fn uri_ok(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let mut sc = scheme.bytes();
    if !sc.next().is_some_and(|b| b.is_ascii_alphabetic())
        || !sc.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return false;
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            if !pct_ok(bytes, i) {
                return false;
            }
            i += 3;
            continue;
        }
        if !(b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&b)) {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `t` is an RFC 6570 URI template: literals without the characters §2.1 excludes,
/// and expressions `{[op]varspec,…}` with an operator of levels 2–4 (`+ # . / ; ? &`), varnames
/// of `ALPHA / DIGIT / "_" / pct-encoded` joined by dots, and an optional `:1-9999` prefix or
/// `*` explode modifier.
pub fn template_ok(t: &str) -> bool {
    let bytes = t.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'{' => {
                let Some(len) = bytes[i + 1..].iter().position(|&c| c == b'}') else {
                    return false;
                };
                if !expression_ok(&t[i + 1..i + 1 + len]) {
                    return false;
                }
                i += len + 2;
            }
            b'%' => {
                if !pct_ok(bytes, i) {
                    return false;
                }
                i += 3;
            }
            b'}' | b' ' | b'"' | b'\'' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'|' => return false,
            _ if b < 0x20 || b == 0x7F => return false,
            _ => i += 1,
        }
    }
    true
}

fn expression_ok(e: &str) -> bool {
    let e = e.strip_prefix(|c: char| "+#./;?&".contains(c)).unwrap_or(e);
    !e.is_empty() && e.split(',').all(varspec_ok)
}

fn varspec_ok(v: &str) -> bool {
    let (name, modifier) = match v.find([':', '*']) {
        Some(at) => v.split_at(at),
        None => (v, ""),
    };
    let modifier_ok = match modifier {
        "" | "*" => true,
        m => m.strip_prefix(':').is_some_and(|d| {
            (1..=4).contains(&d.len())
                && d.bytes().all(|b| b.is_ascii_digit())
                && !d.starts_with('0')
        }),
    };
    let bytes = name.as_bytes();
    let mut i = 0;
    let mut last_dot = true;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'.' {
            if last_dot {
                return false;
            }
            last_dot = true;
            i += 1;
            continue;
        }
        last_dot = false;
        if b == b'%' {
            if !pct_ok(bytes, i) {
                return false;
            }
            i += 3;
        } else if b.is_ascii_alphanumeric() || b == b'_' {
            i += 1;
        } else {
            return false;
        }
    }
    modifier_ok && !name.is_empty() && !last_dot
}

/// The variable names of an RFC 6570 template, in order.
pub fn template_variables(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let expr = &rest[open + 1..open + close];
        let expr = expr
            .strip_prefix(|c: char| "+#./;?&".contains(c))
            .unwrap_or(expr);
        for v in expr.split(',') {
            let name = v.split([':', '*']).next().unwrap_or("");
            if !name.is_empty() {
                out.push(name.to_owned());
            }
        }
        rest = &rest[open + close + 1..];
    }
    out
}

/// Whether `s` is base64 (RFC 4648 §4 alphabet; padding optional).
pub fn base64_ok(s: &str) -> bool {
    use base64::engine::{
        general_purpose::GeneralPurpose, DecodePaddingMode, GeneralPurposeConfig,
    };
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    // Line breaks (MIME-style base64, as Python's `base64.encodebytes` writes) are not data.
    let compact: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    LENIENT.decode(compact).is_ok()
}

/// The problems of one content block's encoded data: `image`/`audio` `data` that is not base64
/// or has no `mimeType`, an embedded `resource` with neither `text` nor base64 `blob`.
fn block_problems(block: &Value, path: &str, out: &mut Vec<String>) {
    match str_of(block, "type") {
        Some(kind @ ("image" | "audio")) => {
            if !str_of(block, "data").is_some_and(base64_ok) {
                out.push(format!("{path}: the {kind} data is not base64"));
            }
            if str_of(block, "mimeType").is_none_or(str::is_empty) {
                out.push(format!("{path}: the {kind} block has no mimeType"));
            }
        }
        Some("resource") => {
            if let Some(r) = block.get("resource") {
                contents_problems(r, &format!("{path}.resource"), out);
            }
        }
        _ => {}
    }
}

/// The problems of one resource contents item: no string `uri`, both or neither of `text` and
/// `blob`, a `blob` that is not base64.
fn contents_problems(item: &Value, path: &str, out: &mut Vec<String>) {
    if str_of(item, "uri").is_none() {
        out.push(format!("{path} has no uri"));
    }
    match (item.get("text"), item.get("blob")) {
        (None, None) => out.push(format!("{path} carries neither text nor blob")),
        (None, Some(b)) => {
            if !b.as_str().is_some_and(base64_ok) {
                out.push(format!("{path}: blob is not base64"));
            }
        }
        // `text` (with or without a `blob` beside it, which no sentence forbids).
        (Some(_), _) => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

async fn resources_pagination_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let w = match walk_required(c, "resources/list", "resources").await {
        Ok(w) => w,
        Err(s) => return s,
    };
    if let Some(uri) = repeated(&w.items, "uri") {
        return violated(format!("resource {uri:?} is listed more than once"));
    }
    match walk(c, "resources/templates/list", "resourceTemplates", true).await {
        Ok(Some(t)) => match repeated(&t.items, "uriTemplate") {
            Some(u) => violated(format!("resource template {u:?} is listed more than once")),
            None => Status::Pass,
        },
        Ok(None) => Status::Pass,
        Err(s) => s,
    }
}
in_session!(resources_pagination, resources_pagination_body);

async fn resources_invalid_cursor_body(_ctx: &Ctx, c: &mut Client) -> Status {
    invalid_cursor(c, "resources/list").await
}
in_session!(resources_invalid_cursor, resources_invalid_cursor_body);

async fn resources_uri_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let w = match listing(c, "resources/list", "resources").await {
        Ok(w) => w,
        Err(s) => return s,
    };
    if w.items.is_empty() {
        return Status::Skip("the server lists no resources".into());
    }
    let bad: Vec<String> = w
        .items
        .iter()
        .filter_map(|r| str_of(r, "uri"))
        .filter(|u| !uri_ok(u))
        .map(|u| format!("{:?}", clip(u, 120)))
        .collect();
    if bad.is_empty() {
        Status::Pass
    } else {
        violated(format!(
            "{} of {} listed resource URIs are not RFC 3986 URIs (a scheme, `:`, then only unreserved, reserved or %-encoded characters): {}",
            bad.len(),
            w.items.len(),
            bad.join(", ")
        ))
    }
}
in_session!(resources_uri, resources_uri_body);

async fn resources_read_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let w = match listing(c, "resources/list", "resources").await {
        Ok(w) => w,
        Err(s) => return s,
    };
    let uris: Vec<String> = w
        .items
        .iter()
        .filter_map(|r| str_of(r, "uri"))
        .take(SAMPLE)
        .map(str::to_owned)
        .collect();
    if uris.is_empty() {
        return Status::Skip("the server lists no resources".into());
    }
    let mut problems = Vec::new();
    let mut refused = Vec::new();
    let mut read = 0;
    for uri in &uris {
        let params = json!({"uri": uri});
        let result = match served(c, "resources/read", params, uri, &mut refused).await {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(s) => return s,
        };
        read += 1;
        match result.get("contents").and_then(Value::as_array) {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    contents_problems(item, &format!("{uri} contents[{i}]"), &mut problems);
                }
            }
            None => problems.push(format!("{uri}: the result has no contents array")),
        }
    }
    verdict_of(&problems, read, || {
        format!(
            "none of the {} listed resources sampled could be read: {}",
            uris.len(),
            refused.join("; ")
        )
    })
}
in_session!(resources_read, resources_read_body);

async fn template_syntax_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let t = match walk(c, "resources/templates/list", "resourceTemplates", true).await {
        Ok(Some(t)) => t,
        Ok(None) => return Status::Skip("resources/templates/list is not served (-32601)".into()),
        Err(s) => return s,
    };
    let templates: Vec<&str> = t
        .items
        .iter()
        .filter_map(|r| str_of(r, "uriTemplate"))
        .collect();
    if templates.is_empty() {
        return Status::Skip("the server lists no resource templates".into());
    }
    let bad: Vec<String> = templates
        .iter()
        .filter(|u| !template_ok(u))
        .map(|u| format!("{:?}", clip(u, 120)))
        .collect();
    if bad.is_empty() {
        Status::Pass
    } else {
        violated(format!(
            "{} of {} uriTemplate values are not RFC 6570 templates: {}",
            bad.len(),
            templates.len(),
            bad.join(", ")
        ))
    }
}
in_session!(template_syntax, template_syntax_body);

/// A URI no server lists, in the scheme of the first listed resource (`file` when none).
async fn unknown_uri(c: &mut Client) -> Result<String, Status> {
    let w = listing(c, "resources/list", "resources").await?;
    let scheme = w
        .items
        .iter()
        .filter_map(|r| str_of(r, "uri"))
        .find_map(|u| u.split_once(':').map(|(s, _)| s.to_owned()))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "file".into());
    Ok(format!("{scheme}://{NO_SUCH}"))
}

/// What reading an unknown URI gave: the error code, or a status that ends the check.
async fn read_unknown(c: &mut Client) -> Result<(String, i64), Status> {
    let uri = unknown_uri(c).await?;
    let reply = match c.request("resources/read", json!({"uri": uri})).await {
        Ok(r) => r,
        Err(e) => return Err(gone(c, e).await),
    };
    if let Some(code) = reply.error_code() {
        return Ok((uri, code));
    }
    let Some(result) = reply.result() else {
        return Err(unanswered(&format!("resources/read of {uri}"), &reply));
    };
    match result.get("contents").and_then(Value::as_array) {
        Some(items) if items.is_empty() => Err(violated(format!(
            "the unknown URI {uri} was answered with an empty contents array, not an error"
        ))),
        _ => Err(Status::Skip(format!(
            "the server served the made-up URI {uri} (it may serve any URI of its scheme), so there is no unknown URI to read"
        ))),
    }
}

async fn unknown_uri_body(ctx: &Ctx, c: &mut Client) -> Status {
    match read_unknown(c).await {
        Ok((_, -32002)) => Status::Pass,
        // The stored 2025-06-18 page names -32602 for this case (docs/coverage.md).
        Ok((_, -32602)) if ctx.revision == "2025-06-18" => Status::Pass,
        Ok((uri, code)) => violated(format!(
            "resources/read of the unknown URI {uri} got code {code}, not -32002 (Resource not found)"
        )),
        Err(s) => s,
    }
}
in_session!(resource_unknown_uri, unknown_uri_body);

async fn modern_not_found_body(_ctx: &Ctx, c: &mut Client) -> Status {
    match read_unknown(c).await {
        Ok((_, -32602)) => Status::Pass,
        Ok((uri, -32002)) => violated(format!(
            "resources/read of the unknown URI {uri} got -32002, which 2026-07-28 implementations MUST NOT emit; -32602 is required"
        )),
        Ok((uri, code)) => violated(format!(
            "resources/read of the unknown URI {uri} got code {code}, not -32602 (Invalid Params)"
        )),
        Err(s) => s,
    }
}
in_session!(modern_not_found, modern_not_found_body);

async fn subscribe_body(ctx: &Ctx, c: &mut Client) -> Status {
    if ctx.facts.capabilities.pointer("/resources/subscribe") != Some(&Value::Bool(true)) {
        return Status::Skip("the server does not declare resources.subscribe".into());
    }
    let w = match listing(c, "resources/list", "resources").await {
        Ok(w) => w,
        Err(s) => return s,
    };
    let Some(uri) = w
        .items
        .iter()
        .find_map(|r| str_of(r, "uri"))
        .map(str::to_owned)
    else {
        return Status::Skip("the server lists no resources to subscribe to".into());
    };
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let reply = match c.request(method, json!({"uri": uri})).await {
            Ok(r) => r,
            Err(e) => return gone(c, e).await,
        };
        if reply.result().is_some_and(Value::is_object) {
            continue;
        }
        if reply.error().is_some() || reply.result().is_some() {
            return violated(format!(
                "{method} of the listed resource {uri} was not answered with a result: {}",
                reply.describe()
            ));
        }
        return unanswered(&format!("{method} of {uri}"), &reply);
    }
    Status::Pass
}
in_session!(subscribe, subscribe_body);

// ---------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------

fn required_arguments(prompt: &Value) -> Vec<String> {
    prompt
        .get("arguments")
        .and_then(Value::as_array)
        .map(|args| {
            args.iter()
                .filter(|a| a.get("required") == Some(&Value::Bool(true)))
                .filter_map(|a| str_of(a, "name").map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn prompts_pagination_body(_ctx: &Ctx, c: &mut Client) -> Status {
    match walk_required(c, "prompts/list", "prompts").await {
        Ok(w) => match repeated(&w.items, "name") {
            Some(n) => violated(format!("prompt {n:?} is listed more than once")),
            None => Status::Pass,
        },
        Err(s) => s,
    }
}
in_session!(prompts_pagination, prompts_pagination_body);

async fn prompts_get_body(ctx: &Ctx, c: &mut Client) -> Status {
    let w = match listing(c, "prompts/list", "prompts").await {
        Ok(w) => w,
        Err(s) => return s,
    };
    // A prompt is got with the target's declared values, or with none when it requires none.
    let mut picks: Vec<(String, Map<String, Value>)> = Vec::new();
    for p in &w.items {
        let Some(name) = str_of(p, "name") else {
            continue;
        };
        let declared = ctx.target.prompt_arguments.get(name);
        let required = required_arguments(p);
        let arguments = declared.cloned().unwrap_or_default();
        if required.iter().all(|r| arguments.contains_key(r)) {
            picks.push((name.to_owned(), arguments));
        }
        if picks.len() == SAMPLE {
            break;
        }
    }
    if w.items.is_empty() {
        return Status::Skip("the server lists no prompts".into());
    }
    if picks.is_empty() {
        return Status::Skip(format!(
            "every one of the {} listed prompts requires arguments, and the target declares none (`[prompts.<name>] arguments = {{…}}`)",
            w.items.len()
        ));
    }
    let mut problems = Vec::new();
    let mut refused = Vec::new();
    let mut got = 0;
    for (name, arguments) in &picks {
        let mut params = json!({"name": name});
        if !arguments.is_empty() {
            params["arguments"] = Value::Object(arguments.clone());
        }
        let result = match served(c, "prompts/get", params, name, &mut refused).await {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(s) => return s,
        };
        got += 1;
        for (i, m) in result
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(block) = m.get("content") {
                block_problems(
                    block,
                    &format!("{name} messages[{i}].content"),
                    &mut problems,
                );
            }
        }
    }
    verdict_of(&problems, got, || {
        format!(
            "none of the {} prompts tried could be got: {}",
            picks.len(),
            refused.join("; ")
        )
    })
}
in_session!(prompts_get, prompts_get_body);

/// A request that must be refused with −32602: pass on −32602, a violation on any other code
/// or a result.
async fn expect_invalid_params(c: &mut Client, method: &str, params: Value, what: &str) -> Status {
    let reply = match c.request(method, params).await {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    match reply.error_code() {
        Some(-32602) => Status::Pass,
        Some(code) => violated(format!(
            "{what} got code {code}, not -32602 (Invalid params)"
        )),
        None if reply.result().is_some() => {
            violated(format!("{what} was served: {}", reply.describe()))
        }
        None => unanswered(what, &reply),
    }
}

async fn prompts_unknown_name_body(_ctx: &Ctx, c: &mut Client) -> Status {
    expect_invalid_params(
        c,
        "prompts/get",
        json!({"name": "parity_no_such_prompt_4b1d"}),
        "prompts/get of an unknown prompt name",
    )
    .await
}
in_session!(prompts_unknown_name, prompts_unknown_name_body);

async fn prompts_missing_argument_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let w = match listing(c, "prompts/list", "prompts").await {
        Ok(w) => w,
        Err(s) => return s,
    };
    let Some((name, arg)) = w.items.iter().find_map(|p| {
        let name = str_of(p, "name")?;
        required_arguments(p)
            .into_iter()
            .next()
            .map(|a| (name.to_owned(), a))
    }) else {
        return Status::Skip("no listed prompt has a required argument".into());
    };
    expect_invalid_params(
        c,
        "prompts/get",
        json!({"name": name, "arguments": {}}),
        &format!("prompts/get of {name} without its required argument {arg:?}"),
    )
    .await
}
in_session!(prompts_missing_argument, prompts_missing_argument_body);

// ---------------------------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------------------------

async fn completion_body(ctx: &Ctx, c: &mut Client) -> Status {
    let mut refs: Vec<(Value, String)> = Vec::new();
    if ctx.declares("prompts") {
        let w = match listing(c, "prompts/list", "prompts").await {
            Ok(w) => w,
            Err(s) => return s,
        };
        if let Some((name, arg)) = w.items.iter().find_map(|p| {
            let arg = p.get("arguments")?.as_array()?.first()?;
            Some((
                str_of(p, "name")?.to_owned(),
                str_of(arg, "name")?.to_owned(),
            ))
        }) {
            refs.push((json!({"type": "ref/prompt", "name": name}), arg));
        }
    }
    if ctx.declares("resources") {
        match walk(c, "resources/templates/list", "resourceTemplates", true).await {
            Ok(Some(t)) => {
                if let Some((uri, var)) = t.items.iter().find_map(|r| {
                    let uri = str_of(r, "uriTemplate")?;
                    template_variables(uri)
                        .into_iter()
                        .next()
                        .map(|v| (uri.to_owned(), v))
                }) {
                    refs.push((json!({"type": "ref/resource", "uri": uri}), var));
                }
            }
            Ok(None) => {}
            Err(s) => return s,
        }
    }
    if refs.is_empty() {
        return Status::Skip(
            "the server lists no prompt argument and no template variable to complete".into(),
        );
    }
    let mut problems = Vec::new();
    let mut refused = Vec::new();
    let mut answered = 0;
    for (reference, arg) in &refs {
        let what = format!("completion/complete of {arg:?} for {reference}");
        let params = json!({"ref": reference, "argument": {"name": arg, "value": ""}});
        let reply = match c.request("completion/complete", params).await {
            Ok(r) => r,
            Err(e) => return gone(c, e).await,
        };
        let Some(result) = reply.result() else {
            if reply.error().is_some() {
                refused.push(format!("{what}: {}", reply.describe()));
                continue;
            }
            return unanswered(&what, &reply);
        };
        answered += 1;
        let n = result
            .pointer("/completion/values")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if n > 100 {
            problems.push(format!("{what} returned {n} values, over the 100 allowed"));
        }
    }
    verdict_of(&problems, answered, || {
        format!("every completion was refused: {}", refused.join("; "))
    })
}
in_session!(completion, completion_body);

async fn completion_unknown_ref_body(_ctx: &Ctx, c: &mut Client) -> Status {
    expect_invalid_params(
        c,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "parity_no_such_prompt_4b1d"},
               "argument": {"name": "x", "value": ""}}),
        "completion/complete for an unknown prompt",
    )
    .await
}
in_session!(completion_unknown_ref, completion_unknown_ref_body);

// ---------------------------------------------------------------------------------------------
// Logging
// ---------------------------------------------------------------------------------------------

async fn set_level_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let mut refused = Vec::new();
    for level in crate::protocol::validate::LOG_LEVELS {
        let reply = match c.request("logging/setLevel", json!({"level": level})).await {
            Ok(r) => r,
            Err(e) => return gone(c, e).await,
        };
        if reply.result().is_some() {
            continue;
        }
        if reply.error().is_some() {
            refused.push(format!("{level}: {}", reply.describe()));
            continue;
        }
        return unanswered(&format!("logging/setLevel {level}"), &reply);
    }
    if refused.is_empty() {
        Status::Pass
    } else {
        violated(format!(
            "logging/setLevel refused {} of the 8 RFC 5424 levels: {}",
            refused.len(),
            refused.join("; ")
        ))
    }
}
in_session!(set_level, set_level_body);

async fn invalid_level_body(_ctx: &Ctx, c: &mut Client) -> Status {
    expect_invalid_params(
        c,
        "logging/setLevel",
        json!({"level": "parity-no-such-level"}),
        "logging/setLevel with an unknown level",
    )
    .await
}
in_session!(invalid_level, invalid_level_body);

/// The 2026-07-28 per-request log level key of `_meta`.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

async fn modern_invalid_level_body(ctx: &Ctx, c: &mut Client) -> Status {
    let method = if ctx.declares("tools") {
        "tools/list"
    } else {
        "server/discover"
    };
    let params = json!({"_meta": {META_LOG_LEVEL: "parity-no-such-level"}});
    expect_invalid_params(
        c,
        method,
        params,
        &format!("{method} with `_meta` logLevel \"parity-no-such-level\""),
    )
    .await
}
in_session!(modern_invalid_level, modern_invalid_level_body);

/// The client's requests of a session carrying a `_meta` log level.
fn asked_for_logs(s: &crate::engine::check::SessionLog) -> bool {
    s.events.iter().filter(|e| e.dir == Dir::C2s).any(|e| {
        e.line().is_some_and(|l| {
            serde_json::from_slice::<Value>(&l.bytes).is_ok_and(|v| {
                v.pointer("/params/_meta")
                    .and_then(|m| m.get(META_LOG_LEVEL))
                    .is_some()
            })
        })
    })
}

fn log_messages(s: &crate::engine::check::SessionLog) -> Vec<Value> {
    s2c_messages(s)
        .into_iter()
        .filter(|v| v.get("method").and_then(Value::as_str) == Some("notifications/message"))
        .collect()
}

fn logging_capability(input: &MonitorInput) -> Finding {
    if input.capabilities.get("logging").is_some() {
        return monitor_result(Vec::new());
    }
    let mut problems = Vec::new();
    for s in input.sessions {
        if let Some(m) = log_messages(s).first() {
            problems.push(format!(
                "[{}] notifications/message from a server that declared no logging capability: {}",
                s.case,
                clip(&m.to_string(), 160)
            ));
        }
    }
    monitor_result(problems)
}

fn log_message_shape(input: &MonitorInput) -> Finding {
    let levels = crate::protocol::validate::LOG_LEVELS;
    let mut problems = Vec::new();
    let mut seen = 0;
    for s in input.sessions {
        for m in log_messages(s) {
            seen += 1;
            let mut wrong = Vec::new();
            match m.pointer("/params/level").and_then(Value::as_str) {
                Some(l) if levels.contains(&l) => {}
                Some(l) => wrong.push(format!("level {l:?} is not an RFC 5424 level")),
                None => wrong.push("no string level".to_string()),
            }
            if m.pointer("/params/data").is_none() {
                wrong.push("no data".to_string());
            }
            if m.pointer("/params/logger").is_some_and(|l| !l.is_string()) {
                wrong.push("a logger that is not a string".to_string());
            }
            if !wrong.is_empty() {
                problems.push(format!(
                    "[{}] notifications/message with {}: {}",
                    s.case,
                    wrong.join(", "),
                    clip(&m.to_string(), 160)
                ));
            }
        }
    }
    if seen == 0 {
        return Finding::skip("no notifications/message came in this era's sessions");
    }
    monitor_result(problems)
}

fn log_unrequested(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions.iter().filter(|s| !asked_for_logs(s)) {
        if let Some(m) = log_messages(s).first() {
            problems.push(format!(
                "[{}] notifications/message though no request carried `_meta` logLevel: {}",
                s.case,
                clip(&m.to_string(), 160)
            ));
        }
    }
    monitor_result(problems)
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28: cache hints, list stability
// ---------------------------------------------------------------------------------------------

/// The results that carry cache hints (`server/utilities/caching`).
pub const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Each request of a session by id (as JSON text): its method, and the cursor it carried.
fn requests(s: &crate::engine::check::SessionLog) -> HashMap<String, (String, Option<String>)> {
    let mut map = HashMap::new();
    for e in s.events.iter().filter(|e| e.dir == Dir::C2s) {
        let Some(l) = e.line() else { continue };
        let Ok(v) = serde_json::from_slice::<Value>(&l.bytes) else {
            continue;
        };
        if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str)) {
            let cursor = v
                .pointer("/params/cursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            map.insert(id.to_string(), (m.to_owned(), cursor));
        }
    }
    map
}

fn cache_hints(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    for s in input.sessions {
        let reqs = requests(s);
        // The scope of the list walk under way, per method, and the cursors the server issued:
        // a request with a cursor it never issued (an invalid-cursor probe) starts no page of
        // that walk.
        let mut walk_scope: HashMap<String, String> = HashMap::new();
        let mut issued: HashSet<String> = HashSet::new();
        for v in s2c_messages(s) {
            let Some(result) = v.get("result") else {
                continue;
            };
            let Some((method, cursor)) = v.get("id").and_then(|id| reqs.get(&id.to_string()))
            else {
                continue;
            };
            if !CACHEABLE.contains(&method.as_str())
                || str_of(result, "resultType") == Some("input_required")
            {
                continue;
            }
            if !result
                .get("ttlMs")
                .is_some_and(crate::protocol::validate::non_negative_integer)
            {
                problems.push(format!(
                    "[{}] {method}: ttlMs is {}, not an integer >= 0",
                    s.case,
                    result
                        .get("ttlMs")
                        .map_or("missing".to_string(), Value::to_string)
                ));
            }
            let continues = cursor.as_ref().is_some_and(|c| issued.contains(c));
            if let Some(next) = str_of(result, "nextCursor") {
                issued.insert(next.to_owned());
            }
            match str_of(result, "cacheScope") {
                Some(scope @ ("public" | "private")) => {
                    if continues {
                        if let Some(first) = walk_scope.get(method.as_str()) {
                            if first != scope {
                                problems.push(format!(
                                    "[{}] {method}: a later page has cacheScope {scope:?}, the first page {first:?}",
                                    s.case
                                ));
                            }
                        }
                    } else {
                        walk_scope.insert(method.clone(), scope.to_owned());
                    }
                }
                other => problems.push(format!(
                    "[{}] {method}: cacheScope is {}, not \"public\" or \"private\"",
                    s.case,
                    other.map_or("missing".to_string(), |o| format!("{o:?}"))
                )),
            }
        }
    }
    monitor_result(problems)
}

/// The names (URIs for resources) each declared list holds, walked in one session.
async fn list_sets(ctx: &Ctx, c: &mut Client) -> Result<Vec<(String, Vec<String>)>, Status> {
    let mut out = Vec::new();
    for (cap, method, key, field) in [
        ("tools", "tools/list", "tools", "name"),
        ("prompts", "prompts/list", "prompts", "name"),
        ("resources", "resources/list", "resources", "uri"),
    ] {
        if !ctx.declares(cap) {
            continue;
        }
        let w = listing(c, method, key).await?;
        let names = w
            .items
            .iter()
            .filter_map(|i| str_of(i, field).map(str::to_owned));
        out.push((method.to_owned(), names.collect()));
    }
    Ok(out)
}

async fn list_stable(ctx: &Ctx) -> Finding {
    // Three connections, A B A': a list that changes over time (A != A') cannot be judged, and
    // only a difference that B alone shows is a difference between connections.
    let mut sets = Vec::new();
    let mut events = Vec::new();
    for _ in 0..3 {
        let mut c = match ctx.open().await {
            Ok(c) => c,
            Err(f) => return f,
        };
        let got = list_sets(ctx, &mut c).await;
        events.extend(c.session_events());
        ctx.close(c).await;
        match got {
            Ok(s) => sets.push(s),
            Err(status) => {
                return Finding {
                    status,
                    evidence: evidence(&events),
                }
            }
        }
    }
    let mut problems = Vec::new();
    if let [a, b, again] = &sets[..] {
        let same = |x: &Vec<(String, Vec<String>)>, y: &Vec<(String, Vec<String>)>| {
            x.iter().zip(y).all(|((_, p), (_, q))| {
                p.iter().collect::<HashSet<_>>() == q.iter().collect::<HashSet<_>>()
            })
        };
        if !same(a, again) {
            return Finding {
                status: Status::Skip(
                    "the lists changed between the first and the third connection: they change over time, so connections cannot be compared".into(),
                ),
                evidence: evidence(&events),
            };
        }
        for ((method, first), (_, second)) in a.iter().zip(b) {
            let x: HashSet<&String> = first.iter().collect();
            let y: HashSet<&String> = second.iter().collect();
            if x != y {
                let show = |d: Vec<&&String>| {
                    let mut d: Vec<String> = d.iter().map(|n| format!("`{n}`")).collect();
                    d.sort();
                    if d.is_empty() {
                        "none".to_string()
                    } else {
                        d.join(", ")
                    }
                };
                problems.push(format!(
                    "{method} gave different sets on two connections: only on the first {}, only on the second {}",
                    show(x.difference(&y).collect()),
                    show(y.difference(&x).collect())
                ));
            }
        }
    }
    let status = if sets.iter().all(Vec::is_empty) {
        Status::Skip("the server declares no tools, prompts or resources".into())
    } else if problems.is_empty() {
        Status::Pass
    } else {
        violated(problems.join("; "))
    };
    Finding {
        status,
        evidence: evidence(&events),
    }
}

async fn tools_order_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let mut orders = Vec::new();
    for _ in 0..2 {
        match listing(c, "tools/list", "tools").await {
            Ok(w) => orders.push(
                w.items
                    .iter()
                    .filter_map(|t| str_of(t, "name").map(str::to_owned))
                    .collect::<Vec<_>>(),
            ),
            Err(s) => return s,
        }
    }
    if orders[0] == orders[1] {
        return Status::Pass;
    }
    violated(format!(
        "two tools/list requests in one session listed the tools in different orders: {} then {}",
        orders[0].join(", "),
        orders[1].join(", ")
    ))
}
in_session!(tools_order, tools_order_body);

// ---------------------------------------------------------------------------------------------
// Tool results
// ---------------------------------------------------------------------------------------------

/// The seed of a tool's generated arguments: FNV-1a of its name, so a rerun calls the same.
fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

async fn structured_content_body(ctx: &Ctx, c: &mut Client) -> Status {
    let w = match listing(c, "tools/list", "tools").await {
        Ok(w) => w,
        Err(s) => return s,
    };
    let policy: &CallPolicy = &ctx.target.calls;
    // Every tool parity may call is called (`mcp.tools.result-content` judges the content of
    // each result); the structured results of those with an outputSchema are judged here.
    // The tools with an outputSchema first, so that the sample of five judges them.
    let mut callable: Vec<&Value> = w.items.iter().filter(|t| policy.may_call(t)).collect();
    callable.sort_by_key(|t| !t.get("outputSchema").is_some_and(Value::is_object));
    callable.truncate(SAMPLE);
    if callable.is_empty() {
        let listed: HashSet<&str> = w.items.iter().filter_map(|t| str_of(t, "name")).collect();
        let unknown: Vec<String> = policy
            .safe
            .iter()
            .filter(|n| !listed.contains(n.as_str()))
            .map(|n| format!("`{n}`"))
            .collect();
        if !unknown.is_empty() {
            return Status::Skip(format!(
                "no tool may be called: `[tools] safe` names {}, which the server does not list",
                unknown.join(", ")
            ));
        }
        return Status::Skip(format!("no tool may be called: {}", CallPolicy::HOW));
    }
    let mut problems = Vec::new();
    let mut uncompiled = Vec::new();
    let mut judged = 0;
    let mut with_schema = 0;
    for tool in callable {
        let name = str_of(tool, "name").unwrap_or_default();
        let validator = match tool.get("outputSchema").filter(|s| s.is_object()) {
            None => None,
            Some(schema) => match jsonschema::validator_for(schema) {
                Ok(v) => Some(v),
                Err(e) => {
                    uncompiled.push(format!("{name} ({e})"));
                    continue;
                }
            },
        };
        with_schema += usize::from(validator.is_some());
        let input = tool.get("inputSchema").cloned().unwrap_or(json!({}));
        let seed = seed_of(name);
        for arguments in crate::engine::gen::sample_valid(&input, seed, CALLS_PER_TOOL) {
            let reply = match c
                .request("tools/call", json!({"name": name, "arguments": arguments}))
                .await
            {
                Ok(r) => r,
                Err(e) => return gone(c, e).await,
            };
            let what = format!(
                "{name} called with {} (arguments from inputSchema, seed {seed})",
                clip(&arguments.to_string(), 160)
            );
            let Some(result) = reply.result() else {
                if reply.error().is_some() {
                    continue;
                }
                return unanswered(&what, &reply);
            };
            let Some(validator) = &validator else {
                continue;
            };
            // A tool error or a request for input carries no structured result to judge.
            if result.get("isError") == Some(&Value::Bool(true))
                || str_of(result, "resultType") == Some("input_required")
            {
                continue;
            }
            judged += 1;
            match result.get("structuredContent") {
                None => problems.push(format!("{what}: the result has no structuredContent")),
                Some(sc) => {
                    let errors: Vec<String> = validator
                        .iter_errors(sc)
                        .take(3)
                        .map(|e| format!("{} at {}", e, e.instance_path()))
                        .collect();
                    if !errors.is_empty() {
                        problems.push(format!(
                            "{what}: structuredContent does not conform to the outputSchema: {}",
                            errors.join("; ")
                        ));
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        return violated(problems.join("; "));
    }
    if with_schema == 0 && !uncompiled.is_empty() {
        return Status::Skip(format!(
            "parity could not compile the outputSchema of {}: nothing to judge against",
            uncompiled.join(", ")
        ));
    }
    if with_schema == 0 {
        return Status::Skip(
            "none of the tools parity may call declares an outputSchema (the calls' results go to mcp.tools.result-content)".into(),
        );
    }
    if judged == 0 {
        return Status::Skip(
            "every call of a tool with an outputSchema ended in an error or a tool error: no structured result to judge".into(),
        );
    }
    Status::Pass
}
in_session!(structured_content, structured_content_body);

fn result_content(input: &MonitorInput) -> Finding {
    let mut problems = Vec::new();
    let mut seen = 0;
    for s in input.sessions {
        let reqs = requests(s);
        for v in s2c_messages(s) {
            let Some(result) = v.get("result") else {
                continue;
            };
            let is_call = v
                .get("id")
                .and_then(|id| reqs.get(&id.to_string()))
                .is_some_and(|(m, _)| m == "tools/call");
            if !is_call {
                continue;
            }
            seen += 1;
            for (i, block) in result
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                block_problems(
                    block,
                    &format!("[{}] tools/call content[{i}]", s.case),
                    &mut problems,
                );
            }
        }
    }
    if seen == 0 && problems.is_empty() {
        return Finding::skip(format!(
            "no tools/call result in this era's sessions: {}",
            CallPolicy::HOW
        ));
    }
    monitor_result(problems)
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28 input-required results
// ---------------------------------------------------------------------------------------------

/// The requests an `InputRequiredResult` may answer (`basic/patterns/mrtr`).
pub const INPUT_REQUIRED_METHODS: [&str; 3] = ["prompts/get", "resources/read", "tools/call"];

/// Every input-required result of the sessions, with its session's case and request method.
fn input_required(input: &MonitorInput) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for s in input.sessions {
        let reqs = requests(s);
        for v in s2c_messages(s) {
            let Some(result) = v.get("result") else {
                continue;
            };
            if str_of(result, "resultType") != Some("input_required") {
                continue;
            }
            let method = v
                .get("id")
                .and_then(|id| reqs.get(&id.to_string()))
                .map_or(String::new(), |(m, _)| m.clone());
            out.push((s.case.clone(), method, result.clone()));
        }
    }
    out
}

fn input_required_methods(input: &MonitorInput) -> Finding {
    let problems = input_required(input)
        .into_iter()
        .filter(|(_, m, _)| !m.is_empty() && !INPUT_REQUIRED_METHODS.contains(&m.as_str()))
        .map(|(case, m, r)| {
            format!(
                "[{case}] {m} was answered with an input_required result: {}",
                clip(&r.to_string(), 160)
            )
        })
        .collect();
    monitor_result(problems)
}

fn input_required_shape(input: &MonitorInput) -> Finding {
    let problems = input_required(input)
        .into_iter()
        .filter(|(_, _, r)| r.get("inputRequests").is_none() && r.get("requestState").is_none())
        .map(|(case, m, r)| {
            format!("[{case}] the input_required result of {m} has neither inputRequests nor requestState: {}", clip(&r.to_string(), 160))
        })
        .collect();
    monitor_result(problems)
}

fn input_required_undeclared(input: &MonitorInput) -> Finding {
    // parity's modern requests declare no client capability (`clientCapabilities: {}`), so no
    // kind of input request is supported.
    let problems = input_required(input)
        .into_iter()
        .filter_map(|(case, m, r)| {
            let asks = r.get("inputRequests").and_then(Value::as_object)?;
            if asks.is_empty() {
                return None;
            }
            let kinds: Vec<&str> = asks.values().filter_map(|a| str_of(a, "method")).collect();
            Some(format!(
                "[{case}] the input_required result of {m} asks for {} though the client declared no capability for it",
                kinds.join(", ")
            ))
        })
        .collect();
    monitor_result(problems)
}

/// The requests `mcp.modern.input-required-retry` sends: a get of each listed prompt without
/// required arguments (or with declared values) and a read of each listed resource, up to
/// [`SAMPLE`] of each.
async fn retry_candidates(ctx: &Ctx, c: &mut Client) -> Result<Vec<(String, Value)>, Status> {
    let mut out = Vec::new();
    if ctx.declares("prompts") {
        let w = listing(c, "prompts/list", "prompts").await?;
        for p in w.items.iter().take(SAMPLE) {
            let Some(name) = str_of(p, "name") else {
                continue;
            };
            let args = ctx
                .target
                .prompt_arguments
                .get(name)
                .cloned()
                .unwrap_or_default();
            if required_arguments(p).iter().all(|r| args.contains_key(r)) {
                let mut params = json!({"name": name});
                if !args.is_empty() {
                    params["arguments"] = Value::Object(args);
                }
                out.push(("prompts/get".to_owned(), params));
            }
        }
    }
    if ctx.declares("resources") {
        let w = listing(c, "resources/list", "resources").await?;
        for uri in w.items.iter().filter_map(|r| str_of(r, "uri")).take(SAMPLE) {
            out.push(("resources/read".to_owned(), json!({"uri": uri})));
        }
    }
    Ok(out)
}

async fn input_required_retry_body(ctx: &Ctx, c: &mut Client) -> Status {
    let candidates = match retry_candidates(ctx, c).await {
        Ok(v) => v,
        Err(s) => return s,
    };
    let mut retried = 0;
    let mut problems = Vec::new();
    for (method, params) in candidates {
        let what = format!("{method} {}", clip(&params.to_string(), 120));
        let f = match fetch(c, &method, params).await {
            Ok(f) => f,
            Err(e) => return gone(c, e).await,
        };
        if !f.retried {
            continue;
        }
        retried += 1;
        if f.reply.error().is_some() {
            problems.push(format!(
                "{what}: the retry carrying requestState and inputResponses was refused: {}",
                f.reply.describe()
            ));
        } else if f.reply.result().is_none() {
            return unanswered(&format!("the retry of {what}"), &f.reply);
        }
    }
    verdict_of(&problems, retried, || {
        "no prompts/get or resources/read gave an input_required result: no retry to judge".into()
    })
}
in_session!(input_required_retry, input_required_retry_body);

/// The RFC 5424 rank of a level (debug 0 … emergency 7).
fn level_rank(level: &str) -> Option<usize> {
    crate::protocol::validate::LOG_LEVELS
        .iter()
        .position(|l| *l == level)
}

async fn log_level_honoured_body(ctx: &Ctx, c: &mut Client) -> Status {
    const ASKED: &str = "error";
    let method = if ctx.declares("tools") {
        "tools/list"
    } else {
        "server/discover"
    };
    c.inbox.clear();
    let reply = match c
        .request(method, json!({"_meta": {META_LOG_LEVEL: ASKED}}))
        .await
    {
        Ok(r) => r,
        Err(e) => return gone(c, e).await,
    };
    if reply.result().is_none() && reply.error().is_none() {
        return unanswered(&format!("{method} with `_meta` logLevel {ASKED:?}"), &reply);
    }
    let (late, _) = c.collect_for(ctx.timing.silence).await;
    let messages: Vec<Value> = c
        .inbox
        .iter()
        .chain(&late)
        .filter_map(|i| i.value().cloned())
        .filter(|v| str_of(v, "method") == Some("notifications/message"))
        .collect();
    if messages.is_empty() {
        return Status::Skip(format!(
            "no notifications/message came with {method} at `_meta` logLevel {ASKED:?}: nothing to judge"
        ));
    }
    let floor = level_rank(ASKED).unwrap_or(0);
    let below: Vec<String> = messages
        .iter()
        .filter(|m| {
            m.pointer("/params/level")
                .and_then(Value::as_str)
                .and_then(level_rank)
                .is_some_and(|r| r < floor)
        })
        .map(|m| clip(&m.to_string(), 160))
        .collect();
    if below.is_empty() {
        Status::Pass
    } else {
        violated(format!(
            "{} of {} log messages for a request at logLevel {ASKED:?} are below that level: {}",
            below.len(),
            messages.len(),
            below.join("; ")
        ))
    }
}
in_session!(log_level_honoured, log_level_honoured_body);

/// The `_meta` key of every notification delivered on a `subscriptions/listen` stream.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The filter `mcp.modern.subscriptions-ack` asks for: tools and resources list changes, not
/// prompts, so that an acknowledgement naming prompts acknowledges a type nobody requested.
fn listen_filter() -> Value {
    json!({"toolsListChanged": true, "resourcesListChanged": true})
}

async fn subscriptions_ack_body(_ctx: &Ctx, c: &mut Client) -> Status {
    let id = c.fresh_id();
    let params = c.with_meta(json!({"notifications": listen_filter()}));
    let request =
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
    if let Err(e) = c.peer.send_json(&request).await {
        return gone(c, e).await;
    }
    let deadline = std::time::Instant::now() + c.timeout;
    let verdict = loop {
        let inb = match c.next_inbound(deadline).await {
            Ok(inb) => inb,
            Err(crate::transport::peer::Recv::Eof) => {
                return unanswered("subscriptions/listen", &Reply::Eof)
            }
            Err(_) => {
                return Status::Timeout(format!(
                "subscriptions/listen got neither an acknowledgement nor a response within {} ms",
                c.timeout.as_millis()
            ))
            }
        };
        let Some(v) = inb.value().cloned() else {
            continue;
        };
        let method = str_of(&v, "method");
        if method.is_none() && v.get("id") == Some(&id) {
            // Answered at once: refused (a server with nothing to notify may not serve
            // listen), or a result before any acknowledgement.
            if v.get("error").is_some() {
                break Status::Skip(format!(
                    "subscriptions/listen was refused: {}",
                    clip(&v.to_string(), 200)
                ));
            }
            break violated(format!(
                "subscriptions/listen was answered before any notifications/subscriptions/acknowledged: {}",
                clip(&v.to_string(), 200)
            ));
        }
        let Some(method) = method else {
            continue;
        };
        if v.pointer("/params/_meta")
            .and_then(|m| m.get(SUBSCRIPTION_ID))
            != Some(&id)
        {
            continue;
        }
        if method != "notifications/subscriptions/acknowledged" {
            break violated(format!(
                "{method} came on the subscription before its acknowledgement: {}",
                clip(&v.to_string(), 200)
            ));
        }
        let Some(honoured) = v
            .pointer("/params/notifications")
            .and_then(Value::as_object)
        else {
            break violated(format!(
                "the acknowledgement has no notifications object: {}",
                clip(&v.to_string(), 200)
            ));
        };
        let asked = listen_filter();
        let extra: Vec<String> = honoured
            .iter()
            .filter(|(k, val)| **val != Value::Bool(false) && asked.get(k.as_str()).is_none())
            .map(|(k, _)| format!("`{k}`"))
            .collect();
        break if extra.is_empty() {
            Status::Pass
        } else {
            violated(format!(
                "the acknowledgement honours {}, which the request {asked} did not ask for",
                extra.join(", ")
            ))
        };
    };
    // End the stream as a stdio client does.
    let cancel = json!({"requestId": id, "reason": "parity: the check is done"});
    if let Err(e) = c.notify("notifications/cancelled", Some(cancel)).await {
        return gone(c, e).await;
    }
    verdict
}
in_session!(subscriptions_ack, subscriptions_ack_body);

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

const EARLY: &[&str] = &["2024-11-05", "2025-03-26"];

/// The server-feature checks, in catalogue order (appended to the MCP stdio catalogue).
pub fn catalogue() -> Vec<Check> {
    let c = |id, requirement, level, quote, section, revs, capability, kind| Check {
        id,
        requirement,
        level,
        quote,
        section,
        revs,
        capability: Some(capability),
        kind,
    };
    let always = |id, requirement, level, quote, section, revs, kind| Check {
        id,
        requirement,
        level,
        quote,
        section,
        revs,
        capability: None,
        kind,
    };
    vec![
        c(
            "mcp.resources.pagination",
            "resources/list and resources/templates/list cursors advance and end: no cursor repeats, no URI or template is listed twice, each listing ends within 1,000 pages (a server without templates may answer -32601).",
            Level::Robustness,
            "Pagination starts when the server sends a response that includes: … An optional nextCursor field if more results exist",
            "server/utilities/pagination#response-format",
            Revs::All,
            "resources",
            active!(resources_pagination),
        ),
        c(
            "mcp.resources.invalid-cursor",
            "resources/list with a cursor the server never issued gets -32602.",
            Level::Should,
            "Invalid cursors SHOULD result in an error with code -32602 (Invalid params).",
            "server/utilities/pagination#error-handling",
            Revs::All,
            "resources",
            active!(resources_invalid_cursor),
        ),
        c(
            "mcp.resources.uri",
            "Every listed resource URI is an RFC 3986 URI: a scheme, `:`, then only unreserved, reserved or percent-encoded characters.",
            Level::Must,
            "Custom URI schemes MUST be in accordance with RFC3986, taking the above guidance in to account.",
            "server/resources#custom-uri-schemes",
            Revs::Except(EARLY),
            "resources",
            active!(resources_uri),
        ),
        c(
            "mcp.resources.read",
            "Reading the first five listed resources gives contents items with a `uri` and a `text` or a `blob`, and every `blob` is base64 (line breaks allowed); a listing that fails is left to mcp.resources.pagination.",
            Level::Must,
            "Binary data MUST be properly encoded",
            "server/resources#security-considerations",
            Revs::All,
            "resources",
            active!(resources_read),
        ),
        c(
            "mcp.resources.template-syntax",
            "Every listed `uriTemplate` is an RFC 6570 URI template (balanced expressions, known operators, valid variable names).",
            Level::Robustness,
            "uriTemplate: A URI template (according to RFC 6570) that can be used to construct resource URIs.",
            "schema#resourcetemplate",
            Revs::All,
            "resources",
            active!(template_syntax),
        ),
        c(
            "mcp.resources.unknown-uri",
            "resources/read of a URI the server does not list (in its own scheme) gets -32002 Resource not found (-32602 accepted at 2025-06-18, whose stored page names it); a server that serves the made-up URI skips.",
            Level::Should,
            "Servers SHOULD return standard JSON-RPC errors for common failure cases: … Resource not found: -32002",
            "server/resources#error-handling",
            Revs::Legacy,
            "resources",
            active!(resource_unknown_uri),
        ),
        c(
            "mcp.modern.resource-not-found",
            "At 2026-07-28 resources/read of an unlisted URI gets -32602, never -32002 and never an empty contents array.",
            Level::Must,
            "If the requested resource does not exist, servers MUST return a JSON-RPC error with code -32602 (Invalid Params).",
            "server/resources#error-handling",
            Revs::Modern,
            "resources",
            active!(modern_not_found),
        ),
        c(
            "mcp.resources.subscribe",
            "With `resources.subscribe` declared, resources/subscribe and resources/unsubscribe of a listed URI are answered with a result.",
            Level::Robustness,
            "The protocol supports optional subscriptions to resource changes. Clients can subscribe to specific resources and receive notifications when they change",
            "server/resources#subscriptions",
            Revs::Legacy,
            "resources",
            active!(subscribe),
        ),
        c(
            "mcp.prompts.pagination",
            "prompts/list cursors advance and end: no cursor repeats, no prompt is listed twice.",
            Level::Robustness,
            "Pagination starts when the server sends a response that includes: … An optional nextCursor field if more results exist",
            "server/utilities/pagination#response-format",
            Revs::All,
            "prompts",
            active!(prompts_pagination),
        ),
        c(
            "mcp.prompts.get",
            "prompts/get of up to five listed prompts (those without required arguments, and those the target gives values for) gives messages whose image and audio data are base64 with a mimeType, and whose embedded resources carry text or base64 blob.",
            Level::Must,
            "The image data MUST be base64-encoded and include a valid MIME type.",
            "server/prompts#image-content",
            Revs::All,
            "prompts",
            active!(prompts_get),
        ),
        c(
            "mcp.prompts.unknown-name",
            "prompts/get of a name the server does not list gets -32602.",
            Level::Should,
            "Servers SHOULD return standard JSON-RPC errors for common failure cases: … Invalid prompt name: -32602 (Invalid params)",
            "server/prompts#error-handling",
            Revs::All,
            "prompts",
            active!(prompts_unknown_name),
        ),
        c(
            "mcp.prompts.missing-argument",
            "prompts/get of a listed prompt without its required argument gets -32602.",
            Level::Should,
            "Servers SHOULD return standard JSON-RPC errors for common failure cases: … Missing required arguments: -32602 (Invalid params)",
            "server/prompts#error-handling",
            Revs::All,
            "prompts",
            active!(prompts_missing_argument),
        ),
        c(
            "mcp.completion.complete",
            "completion/complete for the first listed prompt argument and the first template variable gives at most 100 values.",
            Level::Robustness,
            "values: An array of completion values. Must not exceed 100 items.",
            "schema#completeresult",
            Revs::Except(&["2024-11-05"]),
            "completions",
            active!(completion),
        ),
        c(
            "mcp.completion.unknown-ref",
            "completion/complete for a prompt the server does not list gets -32602.",
            Level::Should,
            "Servers SHOULD return standard JSON-RPC errors for common failure cases: … Invalid prompt name: -32602 (Invalid params)",
            "server/utilities/completion#error-handling",
            Revs::Except(&["2024-11-05"]),
            "completions",
            active!(completion_unknown_ref),
        ),
        c(
            "mcp.logging.set-level",
            "logging/setLevel is answered with a result for each of the eight RFC 5424 levels.",
            Level::Robustness,
            "To configure the minimum log level, clients MAY send a logging/setLevel request",
            "server/utilities/logging#setting-log-level",
            Revs::Legacy,
            "logging",
            active!(set_level),
        ),
        c(
            "mcp.logging.invalid-level",
            "logging/setLevel with a level outside RFC 5424 gets -32602.",
            Level::Should,
            "Servers SHOULD return standard JSON-RPC errors for common failure cases: Invalid log level: -32602 (Invalid params)",
            "server/utilities/logging#error-handling",
            Revs::Legacy,
            "logging",
            active!(invalid_level),
        ),
        always(
            "mcp.logging.capability",
            "A server that sends notifications/message declared the `logging` capability.",
            Level::Must,
            "Servers that emit log message notifications MUST declare the logging capability:",
            "server/utilities/logging#capabilities",
            Revs::All,
            CheckKind::Monitor(logging_capability),
        ),
        always(
            "mcp.logging.message-shape",
            "Every notifications/message carries a `level` that is one of the eight RFC 5424 levels and a `data` member (and a string `logger` when it has one); skips when no message comes.",
            Level::Robustness,
            "level: The severity of this log message. … data: The data to be logged, such as a string message or an object. Any JSON serializable type is allowed here.",
            "schema#loggingmessagenotification",
            Revs::All,
            CheckKind::Monitor(log_message_shape),
        ),
        always(
            "mcp.modern.log-unrequested",
            "At 2026-07-28 no notifications/message arrives in a session none of whose requests carried `_meta` `io.modelcontextprotocol/logLevel` (parity sends it only in the sessions of mcp.modern.log-level-invalid and mcp.modern.log-level-honoured).",
            Level::MustNot,
            "The server MUST NOT emit notifications/message for a request that does not include this field.",
            "server/utilities/logging",
            Revs::Modern,
            CheckKind::Monitor(log_unrequested),
        ),
        c(
            "mcp.modern.log-level-invalid",
            "At 2026-07-28 a request whose `_meta` logLevel is not an RFC 5424 level gets -32602.",
            Level::Should,
            "If the io.modelcontextprotocol/logLevel value carried in a request's _meta is not a recognized log level, the server SHOULD reject that request with a standard JSON-RPC error: Invalid log level: -32602 (Invalid params)",
            "server/utilities/logging",
            Revs::Modern,
            "logging",
            active!(modern_invalid_level),
        ),
        c(
            "mcp.modern.log-level-honoured",
            "At 2026-07-28 the log messages that come with a request carrying `_meta` logLevel \"error\" are at that level or above; judged only when some message comes (a skip otherwise).",
            Level::Robustness,
            "the server MAY send notifications/message notifications for that request at or above the requested level",
            "server/utilities/logging",
            Revs::Modern,
            "logging",
            active!(log_level_honoured),
        ),
        always(
            "mcp.modern.cache-hints",
            "At 2026-07-28 every complete result of server/discover, tools/list, prompts/list, resources/list, resources/templates/list and resources/read carries an integer `ttlMs` >= 0 and a `cacheScope` of \"public\" or \"private\", the same on every page of one list walk.",
            Level::Must,
            "Servers MUST include caching hints on results with resultType: \"complete\" returned by the following operations: server/discover · tools/list · prompts/list · resources/list · resources/templates/list · resources/read",
            "server/utilities/caching",
            Revs::Modern,
            CheckKind::Monitor(cache_hints),
        ),
        always(
            "mcp.modern.list-stable",
            "At 2026-07-28 connections get the same set of tools, prompts and resources (each list the server declares). Three connections are listed in turn: a set only the second one shows differently fails; sets that change over time (the first and third differ) skip.",
            Level::MustNot,
            "MUST NOT vary per-connection or as a side effect of other requests on the connection",
            "server/tools#listing-tools",
            Revs::Modern,
            active!(list_stable),
        ),
        c(
            "mcp.modern.tools-order",
            "At 2026-07-28 two tools/list requests in one session list the tools in the same order.",
            Level::Should,
            "Servers SHOULD return tools in a deterministic order (i.e., the same ordering across requests when the underlying set of tools has not changed)",
            "server/tools#listing-tools",
            Revs::Modern,
            "tools",
            active!(tools_order),
        ),
        c(
            "mcp.tools.structured-content",
            "Up to five tools the target lets parity call (those with an outputSchema first) (`[tools] safe`, or `--call-tools read-only` for tools annotated read-only and not destructive) are called twice each with arguments generated from their inputSchema (seeded by the name); a tool that declares an outputSchema returns, when it succeeds, structuredContent that validates against it.",
            Level::Must,
            "Servers MUST provide structured results that conform to this schema.",
            "server/tools#output-schema",
            Revs::Except(EARLY),
            "tools",
            active!(structured_content),
        ),
        c(
            "mcp.tools.result-content",
            "In every tools/call result of the era, image and audio blocks carry base64 data and a mimeType, and embedded resources carry text or base64 blob.",
            Level::Robustness,
            "data: The base64-encoded image data.",
            "schema#imagecontent",
            Revs::All,
            "tools",
            CheckKind::Monitor(result_content),
        ),
        always(
            "mcp.modern.input-required-methods",
            "At 2026-07-28 only prompts/get, resources/read and tools/call are answered with resultType \"input_required\".",
            Level::MustNot,
            "Servers MUST NOT send InputRequiredResult responses on any other client requests.",
            "basic/patterns/mrtr",
            Revs::Modern,
            CheckKind::Monitor(input_required_methods),
        ),
        always(
            "mcp.modern.input-required-shape",
            "At 2026-07-28 every input_required result carries inputRequests or requestState.",
            Level::Must,
            "Servers MUST include at least one of inputRequests or requestState in every InputRequiredResult response.",
            "basic/patterns/mrtr",
            Revs::Modern,
            CheckKind::Monitor(input_required_shape),
        ),
        always(
            "mcp.modern.input-required-undeclared",
            "At 2026-07-28 no input_required result asks parity, whose requests declare no client capability, for input (elicitation, sampling, roots).",
            Level::MustNot,
            "Servers MUST NOT send an inputRequests that the client has not declared support for in its capabilities.",
            "basic/patterns/mrtr",
            Revs::Modern,
            CheckKind::Monitor(input_required_undeclared),
        ),
        always(
            "mcp.modern.subscriptions-ack",
            "At 2026-07-28 subscriptions/listen (asking for tools and resources list changes) is first answered on the stream by notifications/subscriptions/acknowledged carrying the request's id as its subscriptionId, before any other notification of the subscription, and acknowledges no type it was not asked for; a server that refuses listen skips. Over stdio only.",
            Level::Must,
            "The server MUST send notifications/subscriptions/acknowledged as the first message carrying the subscription's ID",
            "basic/patterns/subscriptions",
            Revs::Modern,
            active!(subscriptions_ack),
        ),
        always(
            "mcp.modern.input-required-retry",
            "At 2026-07-28, when a prompts/get or resources/read of a listed prompt or resource gives an input_required result, the retry with the same params, inputResponses (elicitation declined, no roots, sampling answered \"parity\") and the exact requestState is not refused with an error; judged only when some request asks for input.",
            Level::Should,
            "If the client fails to send all the information requested in a previous InputRequests, and the missing information is necessary for the server to process the request, the server SHOULD respond with a new InputRequiredResult requesting the missing information again, rather than returning an error.",
            "basic/patterns/mrtr",
            Revs::Modern,
            active!(input_required_retry),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_follow_rfc_3986() {
        for ok in [
            "file:///a.txt",
            "workspace:///README.md",
            "test://static/resource/1",
            "a+b.c-d:x%20y",
        ] {
            assert!(uri_ok(ok), "{ok}");
        }
        for bad in [
            "no scheme",
            "1x:/a",
            ":nothing",
            "file:///a b",
            "file:///%zz",
            "x:é",
        ] {
            assert!(!uri_ok(bad), "{bad}");
        }
    }

    #[test]
    fn templates_follow_rfc_6570() {
        for ok in [
            "workspace:///{path}",
            "x://{+a}/{#b,c}",
            "u:{.d*}{/e:3}{?q,r}{&s}",
            "x://{a.b}",
            "plain:text",
        ] {
            assert!(template_ok(ok), "{ok}");
        }
        for bad in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{a b}",
            "x://{=a}",
            "x://{a:0}",
            "x://{a:10000}",
            "x://{.a.}",
            "x://{a}}",
        ] {
            assert!(!template_ok(bad), "{bad}");
        }
        assert_eq!(
            template_variables("x://{a}/{+b,c:2}{?d*}"),
            ["a", "b", "c", "d"]
        );
    }

    #[test]
    fn base64_and_blocks() {
        assert!(base64_ok("aGVsbG8="));
        assert!(base64_ok("aGVsbG8"));
        assert!(!base64_ok("not base64!"));
        let mut p = Vec::new();
        block_problems(
            &json!({"type": "image", "data": "%%%", "mimeType": "image/png"}),
            "b",
            &mut p,
        );
        block_problems(&json!({"type": "audio", "data": "AAAA"}), "c", &mut p);
        block_problems(
            &json!({"type": "resource", "resource": {"uri": "x:y", "text": "t", "blob": "AAAA"}}),
            "d",
            &mut p,
        );
        block_problems(&json!({"type": "text", "text": "fine"}), "e", &mut p);
        // Text beside a blob is not flagged: no sentence forbids it.
        assert_eq!(p.len(), 2, "{p:?}");
    }

    /// A session from `(direction, line)` pairs: `>` the client's, `<` the server's.
    fn log(lines: &[(char, &str)]) -> Vec<crate::engine::check::SessionLog> {
        use crate::transport::wire::{Frame, Line, WireEvent};
        let events = lines
            .iter()
            .map(|(d, l)| WireEvent {
                dir: if *d == '>' { Dir::C2s } else { Dir::S2c },
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
        vec![crate::engine::check::SessionLog {
            case: "t".into(),
            events,
        }]
    }

    fn judge(f: fn(&MonitorInput) -> Finding, s: &[crate::engine::check::SessionLog]) -> Status {
        f(&MonitorInput {
            revision: "2026-07-28",
            sessions: s,
            capabilities: &Value::Null,
        })
        .status
    }

    #[test]
    fn cache_scopes_are_compared_within_one_walk_only() {
        let first = r#"{"jsonrpc":"2.0","id":1,"result":{"prompts":[],"nextCursor":"c1","resultType":"complete","ttlMs":60000.0,"cacheScope":"public"}}"#;
        // The second page of the walk, with another scope: a violation.
        let s = log(&[
            (
                '>',
                r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{}}"#,
            ),
            ('<', first),
            (
                '>',
                r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{"cursor":"c1"}}"#,
            ),
            (
                '<',
                r#"{"jsonrpc":"2.0","id":2,"result":{"prompts":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}"#,
            ),
        ]);
        assert!(matches!(judge(cache_hints, &s), Status::Violated(m) if m.contains("later page")));
        // A cursor the server never issued starts no page of the walk; 60000.0 is an integer.
        let s = log(&[
            (
                '>',
                r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{}}"#,
            ),
            ('<', first),
            (
                '>',
                r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{"cursor":"bogus"}}"#,
            ),
            (
                '<',
                r#"{"jsonrpc":"2.0","id":2,"result":{"prompts":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}"#,
            ),
        ]);
        assert_eq!(judge(cache_hints, &s), Status::Pass);
        // A negative ttlMs and a missing scope are both named.
        let s = log(&[
            (
                '>',
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x:y"}}"#,
            ),
            (
                '<',
                r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[],"resultType":"complete","ttlMs":-1}}"#,
            ),
        ]);
        let Status::Violated(m) = judge(cache_hints, &s) else {
            panic!("no violation");
        };
        assert!(
            m.contains("2 violation(s)") && m.contains("ttlMs is -1"),
            "{m}"
        );
    }

    #[test]
    fn input_required_results_are_judged_by_method_shape_and_requests() {
        let s = log(&[
            (
                '>',
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            ),
            (
                '<',
                r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}"#,
            ),
            (
                '>',
                r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p"}}"#,
            ),
            (
                '<',
                r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required"}}"#,
            ),
            (
                '>',
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}"#,
            ),
            (
                '<',
                r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list","params":{}}}}}"#,
            ),
            // An answer to no request of the session is left alone.
            (
                '<',
                r#"{"jsonrpc":"2.0","id":9,"result":{"resultType":"input_required","requestState":"s"}}"#,
            ),
        ]);
        let Status::Violated(m) = judge(input_required_methods, &s) else {
            panic!("methods");
        };
        assert!(
            m.contains("tools/list") && !m.contains("prompts/get"),
            "{m}"
        );
        let Status::Violated(m) = judge(input_required_shape, &s) else {
            panic!("shape");
        };
        assert!(
            m.contains("prompts/get") && !m.contains("tools/call"),
            "{m}"
        );
        let Status::Violated(m) = judge(input_required_undeclared, &s) else {
            panic!("undeclared");
        };
        assert!(m.contains("roots/list"), "{m}");
    }

    #[test]
    fn input_responses_answer_each_request_deterministically() {
        assert_eq!(
            input_response(&json!({"method": "elicitation/create"})),
            json!({"action": "decline"})
        );
        assert_eq!(
            input_response(&json!({"method": "roots/list"})),
            json!({"roots": []})
        );
        assert_eq!(
            input_response(&json!({"method": "sampling/createMessage"}))["content"]["text"],
            "parity"
        );
    }

    #[test]
    fn the_call_policy_needs_a_declaration() {
        let ro = json!({"name": "look", "annotations": {"readOnlyHint": true}});
        let destructive =
            json!({"name": "rm", "annotations": {"readOnlyHint": true, "destructiveHint": true}});
        let none = CallPolicy::default();
        assert!(!none.may_call(&ro));
        let trusted = CallPolicy {
            read_only: true,
            ..CallPolicy::default()
        };
        assert!(trusted.may_call(&ro) && !trusted.may_call(&destructive));
        let listed = CallPolicy {
            safe: vec!["rm".into()],
            never: vec!["look".into()],
            read_only: true,
        };
        assert!(listed.may_call(&destructive) && !listed.may_call(&ro));
    }
}
