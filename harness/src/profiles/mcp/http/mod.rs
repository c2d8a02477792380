//! The Streamable HTTP transport's own rules (binding `mcp-http`): checks that speak HTTP
//! directly to the endpoint of an MCP target, beside the transport-neutral MCP checks that
//! run through [`crate::transport::http_bridge`].
//!
//! Sources: MCP 2025-03-26, 2025-06-18 and 2025-11-25 `basic/transports` ("Streamable
//! HTTP", "Security Warning", "Session Management", "Protocol Version Header"), and
//! 2026-07-28 `basic/transports/streamable-http`. Each check opens its own session.

#[cfg(test)]
mod bridge_tests;
mod profile;
pub use profile::{run_mcp_http, McpHttpProfile};

use serde_json::{json, Value};

use crate::engine::check::{Check, CheckKind, Ctx, Finding, Level, Revs};
use crate::protocol::mcp::Era;
use crate::transport::http::{HttpClient, HttpExchange, HttpRequest};

/// Whether an MCP check of `crate::profiles::mcp` judges something only a stdio transport has
/// (stdout purity, newline framing, stdin EOF) or that this bridge cannot carry faithfully
/// (cancellation of an in-flight POST): such checks do not run over HTTP.
pub fn stdio_only(id: &str) -> bool {
    id.starts_with("mcp.stdio.")
        || id == "mcp.lifecycle.stdin-eof"
        || id == "mcp.base.cancellation"
        // The stream of a listen request is an SSE response over HTTP, which the bridge does
        // not hand on event by event.
        || id == "mcp.modern.subscriptions-ack"
}

/// A transport-neutral MCP check as it runs over Streamable HTTP: where its stdio quote names
/// the stdio transport, the HTTP transport's own sentence stands instead (at 2025-06-18 and
/// later a POST answered with a batch array breaks "to return one JSON object").
pub fn over_http(mut check: Check) -> Check {
    if check.id == "mcp.base.batch-rejected" {
        check.quote = "If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return one JSON object.";
        check.section = "basic/transports#sending-messages-to-the-server";
        check.level = crate::engine::check::Level::Must;
    }
    check
}

/// The HTTP transport checks.
pub fn catalogue() -> Vec<Check> {
    let c =
        |id, requirement, level, quote, section, revs, f: crate::engine::check::ActiveFn| Check {
            id,
            requirement,
            level,
            quote,
            section,
            revs,
            capability: None,
            kind: CheckKind::Active(f),
        };
    vec![
        c(
            "mcp.http.origin",
            "A request with a foreign Origin header is refused (403 Forbidden from 2025-11-25; a 4xx before).",
            Level::Must,
            "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks. If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.",
            "basic/transports#security-warning",
            Revs::All,
            |x| Box::pin(origin(x)),
        ),
        c(
            "mcp.http.notification-accepted",
            "A notification POSTed to the endpoint is answered 202 Accepted with no body.",
            Level::Must,
            "If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.",
            "basic/transports#sending-messages-to-the-server",
            Revs::All,
            |x| Box::pin(notification_accepted(x)),
        ),
        c(
            "mcp.http.response-content-type",
            "A request is answered with Content-Type application/json or text/event-stream, holding the response to that request.",
            Level::Must,
            "If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return one JSON object.",
            "basic/transports#sending-messages-to-the-server",
            Revs::All,
            |x| Box::pin(content_type(x)),
        ),
        c(
            "mcp.http.sse-framing",
            "An SSE response is well-formed: every event ends with a blank line, every data is one JSON-RPC message, and the response to the request is among them.",
            Level::Must,
            "The SSE stream SHOULD eventually include a JSON-RPC response for the JSON-RPC request sent in the POST body.",
            "basic/transports#sending-messages-to-the-server",
            Revs::All,
            |x| Box::pin(sse_framing(x)),
        ),
        c(
            "mcp.http.session-id",
            "A session id is visible ASCII; after DELETE it is 404; a later request without it is 400 (a SHOULD: another answer warns).",
            Level::Must,
            "Servers that require a session ID SHOULD respond to requests that do not contain an Mcp-Session-Id header (other than initialization) with HTTP 400 Bad Request. The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found.",
            "basic/transports#session-management",
            Revs::Legacy,
            |x| Box::pin(session_id(x)),
        ),
        c(
            "mcp.http.protocol-version-header",
            "A request whose MCP-Protocol-Version header names an unsupported revision is 400 Bad Request.",
            Level::Must,
            "If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request.",
            "basic/transports#protocol-version-header",
            Revs::Except(&["2024-11-05", "2025-03-26"]),
            |x| Box::pin(version_header(x)),
        ),
        c(
            "mcp.http.get-stream",
            "GET on the endpoint opens an SSE stream or is 405 Method Not Allowed (2026-07-28: always 405).",
            Level::Must,
            "The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that the server does not offer an SSE stream at this endpoint.",
            "basic/transports#listening-for-messages-from-the-server",
            Revs::All,
            |x| Box::pin(get_stream(x)),
        ),
        c(
            "mcp.http.header-mismatch",
            "A 2026-07-28 request whose Mcp-Method header disagrees with its body is 400 with -32020 (HeaderMismatch).",
            Level::Must,
            "Servers MUST reject requests whose MCP-Protocol-Version, Mcp-Method or Mcp-Name header does not match the body, with HTTP 400 and a HeaderMismatch error (-32020).",
            "basic/transports/streamable-http",
            Revs::Modern,
            |x| Box::pin(header_mismatch(x)),
        ),
    ]
}

/// One HTTP session with the target, for a check.
struct Http<'a> {
    ctx: &'a Ctx,
    client: HttpClient,
    session: Option<String>,
    evidence: Vec<String>,
}

fn clip(s: &str) -> String {
    crate::base::util::clip(s, 600)
}

impl<'a> Http<'a> {
    fn new(ctx: &'a Ctx) -> Result<Http<'a>, Finding> {
        let Some(url) = &ctx.target.http else {
            return Err(Finding::skip("the target is not an HTTP endpoint"));
        };
        let client = HttpClient::new(url)
            .map_err(|e| Finding::not_run(format!("the URL: {e}"), Vec::new()))?;
        Ok(Http {
            ctx,
            client,
            session: None,
            evidence: Vec::new(),
        })
    }

    async fn send(&mut self, what: &str, request: HttpRequest) -> Result<HttpExchange, Finding> {
        let shown: Vec<String> = request
            .headers
            .iter()
            .filter(|(n, _)| {
                let n = n.to_ascii_lowercase();
                n.starts_with("mcp-") || n == "origin" || n == "content-type"
            })
            .map(|(n, v)| format!("{}: {v}", n.to_ascii_lowercase()))
            .collect();
        let headers = if shown.is_empty() {
            String::new()
        } else {
            format!(" ({})", shown.join(", "))
        };
        self.evidence
            .push(clip(&format!("→ {} {what}{headers}", request.method)));
        let deadline = tokio::time::Instant::now() + self.ctx.timing.message;
        match self.client.send(request, deadline).await {
            Ok(x) => {
                self.evidence.push(format!("← {}", x.summary(Some(600))));
                // A body cut at the body cap cannot be judged (its end is what was not read):
                // no answer to judge, never a violation.
                if let Some(capped) = x.cap_note() {
                    return Err(Finding {
                        status: crate::engine::check::Status::Timeout(format!(
                            "no complete answer to {what}: {} came, and {capped}",
                            x.status_line()
                        )),
                        evidence: self.evidence.clone(),
                    });
                }
                Ok(x)
            }
            Err(crate::transport::http::HttpError::Timeout { partial }) => {
                let got = match &partial {
                    Some(p) => {
                        self.evidence
                            .push(format!("← {} · cut at the deadline", p.summary(Some(600))));
                        format!("{} came, but its body did not end", p.status_line())
                    }
                    None => "no status line came".to_string(),
                };
                Err(Finding {
                    status: crate::engine::check::Status::Timeout(format!(
                        "no complete answer to {what} within {} ms: {got}",
                        self.ctx.timing.message.as_millis()
                    )),
                    evidence: self.evidence.clone(),
                })
            }
            Err(e) => Err(Finding::not_run(
                format!("{what}: {e}"),
                self.evidence.clone(),
            )),
        }
    }

    /// A request body of `method` at this case's revision (with `_meta` when modern).
    fn message(&self, id: u64, method: &str, params: Value) -> Value {
        let mut params = params;
        if self.ctx.era == Era::Modern {
            if let Some(p) = params.as_object_mut() {
                p.insert(
                    "_meta".into(),
                    crate::protocol::mcp::modern_meta(&self.ctx.revision),
                );
            }
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    /// The POST of `message` with the headers a client sends at this point of the session.
    fn post(&self, message: &Value) -> HttpRequest {
        let mut r = HttpRequest::post_json(message);
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s);
        }
        match self.ctx.era {
            Era::Modern => {
                r = r.header("mcp-protocol-version", &self.ctx.revision);
                if let Some(m) = message.get("method").and_then(Value::as_str) {
                    r = r.header("mcp-method", m);
                }
                if let Some(n) = message.pointer("/params/name").and_then(Value::as_str) {
                    r = r.header("mcp-name", n);
                }
            }
            Era::Legacy => {
                let init = message.get("method").and_then(Value::as_str) == Some("initialize");
                if !init && self.ctx.revision.as_str() >= "2025-06-18" {
                    r = r.header("mcp-protocol-version", &self.ctx.revision);
                }
            }
        }
        r
    }

    /// Opens the session: `initialize` + `notifications/initialized` (legacy), nothing
    /// (modern).
    async fn open(&mut self) -> Result<(), Finding> {
        if self.ctx.era == Era::Modern {
            return Ok(());
        }
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize",
            "params": crate::protocol::mcp::initialize_params(&self.ctx.revision)});
        let x = self.send("initialize", self.post(&init)).await?;
        let answered = x
            .messages()
            .ok()
            .into_iter()
            .flatten()
            .any(|m| m.get("id") == Some(&json!(1)) && m.get("result").is_some());
        if !answered {
            return Err(Finding::not_run(
                format!(
                    "initialize was not answered with a result ({})",
                    x.status_line()
                ),
                self.evidence.clone(),
            ));
        }
        self.session = x.header("mcp-session-id").map(str::to_owned);
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        self.send("notifications/initialized", self.post(&note))
            .await?;
        Ok(())
    }

    fn violated(&self, msg: impl Into<String>) -> Finding {
        Finding::violated(msg, self.evidence.clone())
    }

    fn pass(&self) -> Finding {
        Finding::pass(self.evidence.clone())
    }
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(f) => return f,
        }
    };
}

/// The first request of a check: `initialize` (legacy) or `server/discover` (modern).
fn first_request(h: &Http<'_>) -> Value {
    match h.ctx.era {
        Era::Modern => h.message(1, "server/discover", json!({})),
        Era::Legacy => json!({"jsonrpc":"2.0","id":1,"method":"initialize",
            "params": crate::protocol::mcp::initialize_params(&h.ctx.revision)}),
    }
}

async fn origin(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    let message = first_request(&h);
    // The control: the same request without Origin is served.
    let clean = h.post(&message);
    let c = tri!(h.send("the request without Origin", clean).await);
    if !(200..300).contains(&c.status) {
        return Finding::not_run(
            format!("the request without Origin was answered HTTP {}, so a refusal of the foreign Origin would prove nothing", c.status),
            h.evidence.clone(),
        );
    }
    let request = h
        .post(&message)
        .header("origin", "http://parity-rebinding.invalid");
    let x = tri!(
        h.send(
            "a request with Origin: http://parity-rebinding.invalid",
            request
        )
        .await
    );
    let strict = ctx.era == Era::Modern || ctx.revision.as_str() >= "2025-11-25";
    match x.status {
        403 => h.pass(),
        400..=499 if !strict => h.pass(),
        s => h.violated(format!(
            "a request with a foreign Origin was answered HTTP {s}, not {}",
            if strict { "403" } else { "a 4xx refusal" }
        )),
    }
}

async fn notification_accepted(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    tri!(h.open().await);
    let note = match ctx.era {
        Era::Legacy => json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        Era::Modern => json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId": 999_999, "reason": "parity: nothing to cancel",
                "_meta": crate::protocol::mcp::modern_meta(&ctx.revision)}}),
    };
    let method = note["method"].as_str().unwrap_or_default().to_owned();
    let request = h.post(&note);
    let x = tri!(h.send(&method, request).await);
    if x.status >= 400 {
        // The next sentence of the same rule: "If the server cannot accept it, it MUST return
        // an HTTP error status code". A refusal is allowed; the rule for accepted input is
        // not in play.
        return Finding {
            status: crate::engine::check::Status::Skip(format!(
                "the server did not accept {method} ({}), which the transport allows (\"If the server cannot accept it, it MUST return an HTTP error status code\"); the rule for an accepted notification does not apply",
                x.status_line()
            )),
            evidence: h.evidence.clone(),
        };
    }
    if x.status != 202 {
        return h.violated(format!(
            "{method} was answered {}, neither 202 Accepted nor an HTTP error status that refuses it",
            x.status_line()
        ));
    }
    if !x.body.is_empty() {
        return h.violated(format!(
            "the 202 answer to {method} has a body of {} bytes",
            x.body.len()
        ));
    }
    h.pass()
}

/// Sends one ordinary request after opening the session and returns its exchange.
async fn one_request(h: &mut Http<'_>) -> Result<HttpExchange, Finding> {
    h.open().await?;
    let request = h.message(7, "tools/list", json!({}));
    let post = h.post(&request);
    h.send("tools/list", post).await
}

async fn content_type(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    let x = tri!(one_request(&mut h).await);
    let ct = x.content_type();
    match ct.as_deref() {
        Some("application/json") | Some("text/event-stream") => {}
        other => {
            return h.violated(match other {
                Some(t) => format!(
                    "the answer to a request ({}) has Content-Type {t}, neither application/json nor text/event-stream",
                    x.status_line()
                ),
                None => format!(
                    "the answer to a request ({}) has no Content-Type, neither application/json nor text/event-stream",
                    x.status_line()
                ),
            })
        }
    }
    match x.messages() {
        Ok(ms) if ms.iter().any(|m| m.get("id") == Some(&json!(7))) => h.pass(),
        Ok(_) => h.violated("the answer holds no response with the request's id 7"),
        Err(e) => h.violated(format!(
            "the body does not parse as its Content-Type says: {e}"
        )),
    }
}

async fn sse_framing(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    let x = tri!(one_request(&mut h).await);
    if x.content_type().as_deref() != Some("text/event-stream") {
        return Finding::skip("the server answered this request with JSON, not an SSE stream");
    }
    let events = match x.sse_events() {
        Ok(e) => e,
        Err(e) => return h.violated(format!("the SSE stream is malformed: {e}")),
    };
    let mut found = 0;
    for (i, e) in events.iter().enumerate() {
        if e.data.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&e.data) {
            Ok(m) if m.get("jsonrpc").is_some() => {
                if m.get("id") == Some(&json!(7)) && m.get("method").is_none() {
                    found += 1;
                }
            }
            _ => {
                return h.violated(format!(
                    "SSE event {i} carries data that is not one JSON-RPC message: {}",
                    clip(&e.data)
                ))
            }
        }
    }
    match found {
        1 => h.pass(),
        0 => h.violated("the SSE stream ended without the response to the request"),
        n => h.violated(format!("the SSE stream holds {n} responses to one request")),
    }
}

async fn session_id(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    tri!(h.open().await);
    let Some(id) = h.session.clone() else {
        return Finding::skip("the server assigns no Mcp-Session-Id");
    };
    if id.is_empty() || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return h.violated(format!(
            "the session id {id:?} is not made of visible ASCII characters (0x21–0x7E)"
        ));
    }
    // The control: a request in the session is served.
    let control = h.message(7, "tools/list", json!({}));
    let post = h.post(&control);
    let c = tri!(h.send("tools/list in the session", post).await);
    if !(200..300).contains(&c.status) {
        return Finding::not_run(
            format!("tools/list in the session was answered HTTP {}", c.status),
            h.evidence.clone(),
        );
    }
    // Without the header: 400 is a SHOULD, so another answer only warns (after the MUST
    // part below has held).
    let request = h.message(8, "tools/list", json!({}));
    let post = h.post(&request).without_header("mcp-session-id");
    let x = tri!(h.send("tools/list without Mcp-Session-Id", post).await);
    let should = (x.status != 400).then(|| {
        format!(
            "a request without Mcp-Session-Id was answered HTTP {}, not 400 (SHOULD)",
            x.status
        )
    });
    // Terminate, then reuse.
    let del = HttpRequest::delete().header("mcp-session-id", &id);
    let d = tri!(h.send("DELETE of the session", del).await);
    if d.status == 405 {
        // The server does not let clients end sessions.
        return match should {
            Some(m) => Finding::advisory(m, h.evidence.clone()),
            None => h.pass(),
        };
    }
    if !(200..300).contains(&d.status) {
        return h.violated(format!(
            "DELETE of the session was answered HTTP {}",
            d.status
        ));
    }
    let request = h.message(9, "tools/list", json!({}));
    let post = h.post(&request);
    let x = tri!(h.send("tools/list in the ended session", post).await);
    if x.status != 404 {
        return h.violated(format!(
            "a request in an ended session was answered HTTP {}, not 404",
            x.status
        ));
    }
    match should {
        Some(m) => Finding::advisory(m, h.evidence.clone()),
        None => h.pass(),
    }
}

async fn version_header(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    tri!(h.open().await);
    // The control: the same request with the negotiated version is served.
    let control = h.message(7, "tools/list", json!({}));
    let post = h.post(&control);
    let c = tri!(
        h.send("tools/list with the negotiated MCP-Protocol-Version", post)
            .await
    );
    if !(200..300).contains(&c.status) {
        return Finding::not_run(
            format!("tools/list with the negotiated version was answered HTTP {}, so a 400 for a bad version would prove nothing", c.status),
            h.evidence.clone(),
        );
    }
    let request = h.message(8, "tools/list", json!({}));
    let post = h
        .post(&request)
        .header("mcp-protocol-version", "1999-01-01");
    let x = tri!(
        h.send("tools/list with MCP-Protocol-Version: 1999-01-01", post)
            .await
    );
    if x.status == 400 {
        h.pass()
    } else {
        h.violated(format!(
            "a request with MCP-Protocol-Version 1999-01-01 was answered HTTP {}, not 400",
            x.status
        ))
    }
}

async fn get_stream(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    tri!(h.open().await);
    let mut get = HttpRequest::get_sse();
    if let Some(s) = &h.session {
        get = get.header("mcp-session-id", s);
    }
    if ctx.era == Era::Modern || ctx.revision.as_str() >= "2025-06-18" {
        get = get.header("mcp-protocol-version", &ctx.revision);
    }
    h.evidence.push("→ GET (Accept: text/event-stream)".into());
    // An open stream never ends, so the headers get a bounded share of the message deadline.
    let window = ctx
        .timing
        .message
        .min(std::time::Duration::from_secs(2))
        .max(ctx.timing.silence);
    let deadline = tokio::time::Instant::now() + window;
    // An open stream never ends: its headers are what counts.
    let x = match h.client.send_head(get, deadline).await {
        Ok(x) => x,
        Err(crate::transport::http::HttpError::Timeout { partial: Some(p) }) => *p,
        Err(crate::transport::http::HttpError::Timeout { partial: None }) => {
            return h.violated("GET was not answered (no status line) within the silence window")
        }
        Err(e) => return Finding::not_run(format!("GET: {e}"), h.evidence.clone()),
    };
    h.evidence.push(format!("← {}", x.summary(None)));
    let sse = x.status == 200 && x.content_type().as_deref() == Some("text/event-stream");
    match (ctx.era, x.status, sse) {
        (Era::Modern, 405, _) => h.pass(),
        (Era::Modern, s, _) => h.violated(format!(
            "GET was answered HTTP {s}; 2026-07-28 has no GET stream, so it must be 405"
        )),
        (Era::Legacy, 405, _) | (Era::Legacy, _, true) => h.pass(),
        (Era::Legacy, s, _) => h.violated(format!(
            "GET was answered HTTP {s} ({}), neither an SSE stream nor 405",
            x.content_type().unwrap_or_else(|| "no Content-Type".into())
        )),
    }
}

async fn header_mismatch(ctx: &Ctx) -> Finding {
    let mut h = tri!(Http::new(ctx));
    let request = h.message(5, "tools/list", json!({}));
    let post = h.post(&request).header("mcp-method", "prompts/list");
    let x = tri!(
        h.send("tools/list with Mcp-Method: prompts/list", post)
            .await
    );
    let code = x
        .messages()
        .ok()
        .into_iter()
        .flatten()
        .find_map(|m| m.pointer("/error/code").and_then(Value::as_i64));
    match (x.status, code) {
        (400, Some(-32020)) => h.pass(),
        (400, Some(c)) => h.violated(format!(
            "the mismatch was answered 400 but with error code {c}, not -32020 (HeaderMismatch)"
        )),
        (400, None) => h.violated(
            "the mismatch was answered 400 but with no JSON-RPC error in the body, not -32020 (HeaderMismatch)",
        ),
        (s, _) => h.violated(format!(
            "a request whose Mcp-Method header disagrees with its body was answered HTTP {s}, not 400"
        )),
    }
}
