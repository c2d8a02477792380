//! Faulty MCP servers over Streamable HTTP: the reference facade's router (direct
//! catalogue) with one HTTP-level fault each, as an axum middleware layer around the clean
//! router. [`http_catalogue`] lists each fault with the `mcp.http.*` checks it must trip.

use std::future::Future;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use parity_reference::facade::http::{router, HttpConfig, McpService, ResponseMode};

/// One faulty HTTP server.
#[derive(Clone, Copy)]
pub struct HttpFault {
    /// Name used by `parity fake-http <name>`.
    pub name: &'static str,
    /// What is wrong, in one sentence.
    pub description: &'static str,
    /// The checks this fault must fail.
    pub checks: &'static [&'static str],
    /// The response framing the fault needs (SSE for SSE faults).
    pub response: ResponseMode,
}

impl std::fmt::Debug for HttpFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpFault")
            .field("name", &self.name)
            .finish()
    }
}

/// Every faulty HTTP server.
pub fn http_catalogue() -> Vec<HttpFault> {
    let f = |name, description, checks, response| HttpFault {
        name,
        description,
        checks,
        response,
    };
    vec![
        f(
            "http-origin-ignored",
            "the Origin header is never validated (DNS rebinding)",
            &["mcp.http.origin"],
            ResponseMode::Json,
        ),
        f(
            "http-notification-200",
            "a notification is answered 200 with a `{}` body instead of 202 with none",
            &["mcp.http.notification-accepted"],
            ResponseMode::Json,
        ),
        f(
            "http-text-plain",
            "responses carry Content-Type: text/plain",
            &["mcp.http.response-content-type"],
            ResponseMode::Json,
        ),
        f(
            "http-sse-unterminated",
            "the last SSE event of a response lacks its terminating blank line",
            &["mcp.http.sse-framing"],
            ResponseMode::Sse,
        ),
        f(
            "http-session-optional",
            "a request without Mcp-Session-Id is served in the latest session",
            &["mcp.http.session-id"],
            ResponseMode::Json,
        ),
        f(
            "http-session-not-ended",
            "DELETE of a session is answered 204 but the session goes on serving",
            &["mcp.http.session-id"],
            ResponseMode::Json,
        ),
        f(
            "http-version-header-ignored",
            "an unsupported MCP-Protocol-Version header is ignored",
            &["mcp.http.protocol-version-header"],
            ResponseMode::Json,
        ),
        f(
            "http-get-json",
            "GET is answered 200 with a JSON body instead of an SSE stream or 405",
            &["mcp.http.get-stream"],
            ResponseMode::Json,
        ),
        f(
            "http-header-mismatch-ignored",
            "Mcp-Method and Mcp-Name headers are not compared with the body",
            &["mcp.http.header-mismatch"],
            ResponseMode::Json,
        ),
        f(
            "http-notification-error-200",
            "answers notifications (all but notifications/initialized) with 200 and a JSON-RPC error body: a reply, not 202 or a refusal by HTTP status",
            &["mcp.base.notification-unanswered"],
            ResponseMode::Json,
        ),
        f(
            "http-header-mismatch-overreach",
            "at 2026-07-28 answers HeaderMismatch (400, -32020) to a request whose _meta lacks only clientCapabilities, though its version matches the header",
            &["mcp.modern.meta-required"],
            ResponseMode::Json,
        ),
        f(
            "http-bare-refusals",
            "refuses every batch body, even at 2025-03-26 where batches must be received, and every body that is not JSON with HTTP 415 and a plain-text body, no JSON-RPC message; each refusal comes half a second late, after the answer to the request sent behind it",
            &["mcp.base.batch"],
            ResponseMode::Json,
        ),
    ]
}

/// Finds a faulty HTTP server by name.
pub fn find_http_fault(name: &str) -> Option<HttpFault> {
    http_catalogue().into_iter().find(|f| f.name == name)
}

/// One benign HTTP server: the reference router behind a layer that makes it correct but
/// unusual (a conforming server parity must not fail or warn about).
#[derive(Debug, Clone, Copy)]
pub struct HttpBenign {
    /// Name used by `parity fake-http <name>`.
    pub name: &'static str,
    /// What is unusual about it, in one sentence.
    pub description: &'static str,
    /// Check ids it must pass: none of them may fail or warn (`skip` is allowed where the
    /// check says why its rule is not in play).
    pub passes: &'static [&'static str],
}

impl HttpBenign {
    /// The layer that serves it, as [`serve_http_fault`] takes one (no check must fail).
    pub fn layer(&self) -> HttpFault {
        HttpFault {
            name: self.name,
            description: self.description,
            checks: &[],
            response: ResponseMode::Json,
        }
    }
}

/// Every benign HTTP server, each with the checks it must pass.
pub fn http_benign_catalogue() -> Vec<HttpBenign> {
    vec![
        HttpBenign {
            name: "http-notification-refused",
            description: "refuses every notification POST but notifications/initialized with 400 and an id-less -32601 error body, as the transport lets a server that cannot accept one do",
            passes: &["mcp.base.notification-unanswered", "mcp.http.notification-accepted"],
        },
        HttpBenign {
            name: "http-meta-header-mismatch",
            description: "at 2026-07-28 answers a POST whose MCP-Protocol-Version header names a version its body's _meta does not carry with 400 and HeaderMismatch (-32020), as the transport requires",
            passes: &[
                "mcp.modern.meta-required",
                "mcp.base.invalid-request",
                "mcp.base.notification-unanswered",
                "mcp.http.protocol-version-header",
            ],
        },
        HttpBenign {
            name: "http-batch-refused-where-unsupported",
            description: "in revisions without batches (requests carrying MCP-Protocol-Version, 2025-06-18 on) refuses a batch body with HTTP 400 and a plain-text body, no JSON-RPC message: the client learns at once that it was refused",
            passes: &["mcp.base.batch-rejected", "mcp.base.batch"],
        },
    ]
}

/// Finds a benign HTTP server by name.
pub fn find_http_benign(name: &str) -> Option<HttpBenign> {
    http_benign_catalogue().into_iter().find(|f| f.name == name)
}

/// The revision whose POSTs carry their version in `_meta` as well as in the header.
const MODERN: &str = "2026-07-28";

/// The body of a POST, and the request rebuilt around the same bytes.
async fn read_body(req: Request) -> (Request, Vec<u8>) {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .map(|b| b.to_vec())
        .unwrap_or_default();
    (Request::from_parts(parts, Body::from(bytes.clone())), bytes)
}

/// A 400 answer with a JSON-RPC error body (`id` left out when `None`).
fn refusal(id: Option<&serde_json::Value>, code: i64, message: &str) -> Response {
    let mut body =
        serde_json::json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    if let (Some(id), Some(o)) = (id, body.as_object_mut()) {
        o.insert("id".into(), id.clone());
    }
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn body_bytes(response: Response) -> (axum::http::response::Parts, Vec<u8>) {
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .map(|b| b.to_vec())
        .unwrap_or_default();
    (parts, bytes)
}

/// The router of `service` with `fault`'s layer.
pub fn faulty_router(
    fault: HttpFault,
    service: Arc<dyn McpService>,
    mut config: HttpConfig,
) -> Router {
    config.response = fault.response;
    let clean = router(service, config);
    let last_session: Arc<Mutex<Option<String>>> = Arc::default();
    match fault.name {
        "http-origin-ignored" => clean.layer(axum::middleware::from_fn(
            |mut req: Request, next: Next| async move {
                req.headers_mut().remove(header::ORIGIN);
                next.run(req).await
            },
        )),
        "http-notification-200" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                let r = next.run(req).await;
                if r.status() == StatusCode::ACCEPTED {
                    (
                        StatusCode::OK,
                        [(header::CONTENT_TYPE, "application/json")],
                        "{}",
                    )
                        .into_response()
                } else {
                    r
                }
            },
        )),
        "http-text-plain" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                let mut r = next.run(req).await;
                if r.headers().contains_key(header::CONTENT_TYPE) {
                    r.headers_mut()
                        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
                }
                r
            },
        )),
        "http-sse-unterminated" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                let r = next.run(req).await;
                let (parts, mut bytes) = body_bytes(r).await;
                while bytes.last() == Some(&b'\n') {
                    bytes.pop();
                }
                Response::from_parts(parts, Body::from(bytes))
            },
        )),
        "http-session-optional" => clean.layer(axum::middleware::from_fn(
            move |mut req: Request, next: Next| {
                let last = last_session.clone();
                async move {
                    if req.method() == Method::POST && !req.headers().contains_key("mcp-session-id")
                    {
                        let known = last.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        if let Some(id) = known.and_then(|k| HeaderValue::from_str(&k).ok()) {
                            req.headers_mut().insert("mcp-session-id", id);
                        }
                    }
                    let r = next.run(req).await;
                    if let Some(id) = r
                        .headers()
                        .get("mcp-session-id")
                        .and_then(|v| v.to_str().ok())
                    {
                        *last.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.to_owned());
                    }
                    r
                }
            },
        )),
        "http-session-not-ended" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                if req.method() == Method::DELETE {
                    return StatusCode::NO_CONTENT.into_response();
                }
                next.run(req).await
            },
        )),
        "http-version-header-ignored" => clean.layer(axum::middleware::from_fn(
            |mut req: Request, next: Next| async move {
                // Only in sessions (legacy): a 2026-07-28 request still needs its header.
                if req.headers().contains_key("mcp-session-id") {
                    req.headers_mut().remove("mcp-protocol-version");
                }
                next.run(req).await
            },
        )),
        "http-get-json" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                if req.method() == Method::GET {
                    return (
                        StatusCode::OK,
                        [(header::CONTENT_TYPE, "application/json")],
                        "{}",
                    )
                        .into_response();
                }
                next.run(req).await
            },
        )),
        "http-notification-refused" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                if req.method() != Method::POST {
                    return next.run(req).await;
                }
                let (req, bytes) = read_body(req).await;
                let message: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
                let method = message
                    .as_ref()
                    .filter(|m| m.is_object() && m.get("id").is_none())
                    .and_then(|m| m.get("method"))
                    .and_then(serde_json::Value::as_str);
                match method {
                    Some(m) if m != "notifications/initialized" => refusal(
                        None,
                        -32601,
                        &format!("this server accepts no notification {m}"),
                    ),
                    _ => next.run(req).await,
                }
            },
        )),
        "http-bare-refusals" | "http-batch-refused-where-unsupported" => {
            let everywhere = fault.name == "http-bare-refusals";
            clean.layer(axum::middleware::from_fn(
                move |req: Request, next: Next| async move {
                    let versioned = req.headers().contains_key("mcp-protocol-version");
                    if req.method() != Method::POST || !(everywhere || versioned) {
                        return next.run(req).await;
                    }
                    let (req, bytes) = read_body(req).await;
                    let batch = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
                    let unparsable =
                        everywhere && serde_json::from_slice::<serde_json::Value>(&bytes).is_err();
                    if !batch && !unparsable {
                        return next.run(req).await;
                    }
                    // Late, as a loaded server's refusal may be: the POSTs of one session run
                    // side by side, so the barrier request sent behind it is answered first.
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    let status = if everywhere {
                        StatusCode::UNSUPPORTED_MEDIA_TYPE
                    } else {
                        StatusCode::BAD_REQUEST
                    };
                    (
                        status,
                        [(header::CONTENT_TYPE, "text/plain")],
                        "fail to deserialize request body",
                    )
                        .into_response()
                },
            ))
        }
        "http-notification-error-200" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                if req.method() != Method::POST {
                    return next.run(req).await;
                }
                let (req, bytes) = read_body(req).await;
                let message: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
                let method = message
                    .as_ref()
                    .filter(|m| m.is_object() && m.get("id").is_none())
                    .and_then(|m| m.get("method"))
                    .and_then(serde_json::Value::as_str);
                match method {
                    Some(m) if m != "notifications/initialized" => (
                        StatusCode::OK,
                        [(header::CONTENT_TYPE, "application/json")],
                        serde_json::json!({"jsonrpc": "2.0", "id": null,
                            "error": {"code": -32601, "message": format!("unknown notification {m}")}})
                        .to_string(),
                    )
                        .into_response(),
                    _ => next.run(req).await,
                }
            },
        )),
        "http-header-mismatch-overreach" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                let modern = req
                    .headers()
                    .get("mcp-protocol-version")
                    .is_some_and(|v| v.as_bytes() == MODERN.as_bytes());
                if req.method() != Method::POST || !modern {
                    return next.run(req).await;
                }
                let (req, bytes) = read_body(req).await;
                let Ok(message) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                    return next.run(req).await;
                };
                let meta = message.get("params").and_then(|p| p.get("_meta"));
                let lacks_caps = meta.is_some_and(|m| {
                    m.get("io.modelcontextprotocol/clientCapabilities").is_none()
                        && m.get("io.modelcontextprotocol/protocolVersion")
                            == Some(&serde_json::json!(MODERN))
                });
                match message.get("id") {
                    Some(id) if lacks_caps => {
                        refusal(Some(id), -32020, "Header mismatch: clientCapabilities is missing")
                    }
                    _ => next.run(req).await,
                }
            },
        )),
        "http-meta-header-mismatch" => clean.layer(axum::middleware::from_fn(
            |req: Request, next: Next| async move {
                let header = req
                    .headers()
                    .get("mcp-protocol-version")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                if req.method() != Method::POST || header.as_deref() != Some(MODERN) {
                    return next.run(req).await;
                }
                let (req, bytes) = read_body(req).await;
                let Ok(message) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                    return next.run(req).await;
                };
                if !message.is_object() || message.get("method").is_none() {
                    return next.run(req).await;
                }
                let carried = message
                    .get("params")
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
                    .and_then(serde_json::Value::as_str);
                if carried == Some(MODERN) {
                    return next.run(req).await;
                }
                refusal(
                    message.get("id"),
                    -32020,
                    &format!(
                        "Header mismatch: MCP-Protocol-Version is {MODERN}, but the body's _meta carries {}",
                        carried.map_or("no protocol version".to_owned(), |c| format!("version {c}"))
                    ),
                )
            },
        )),
        "http-header-mismatch-ignored" => clean.layer(axum::middleware::from_fn(
            |mut req: Request, next: Next| async move {
                req.headers_mut().remove("mcp-method");
                req.headers_mut().remove("mcp-name");
                next.run(req).await
            },
        )),
        _ => clean,
    }
}

/// Serves `service` behind `fault` on `listener` until `shutdown` completes.
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve_http_fault(
    fault: HttpFault,
    listener: tokio::net::TcpListener,
    service: Arc<dyn McpService>,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, faulty_router(fault, service, config))
        .with_graceful_shutdown(shutdown)
        .await
}
