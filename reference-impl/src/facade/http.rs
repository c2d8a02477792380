//! The facade's MCP Streamable HTTP listener (MCP 2025-03-26 … 2025-11-25
//! `basic/transports` "Streamable HTTP", and the stateless 2026-07-28 form; seed rule 13).
//!
//! One endpoint (default `/mcp`):
//!
//! - `POST` carries one JSON-RPC message (a batch only in a session negotiated at
//!   2025-03-26). A request is answered with `200` and either `application/json` or a
//!   `text/event-stream` of one `message` event ([`ResponseMode`]; a client whose
//!   `Accept` lists only one of the two gets that one). A notification or a response is
//!   answered `202 Accepted` with no body.
//! - `GET` is `405` (no server-initiated stream is offered); `DELETE` ends a legacy
//!   session (`204`; `404` for an unknown one).
//!
//! Rules applied before any JSON-RPC handling, in order: an `Origin` that is not
//! loopback (`localhost`, `127.0.0.1`, `[::1]`) is `403`; a body over the limit is `413`;
//! a `Content-Type` other than `application/json` is `415`; an `Accept` that allows
//! neither JSON nor SSE is `406`; a body that is not JSON is `400` with `-32700`. Error
//! bodies are JSON-RPC errors with id `null` and never echo the request.
//!
//! Eras: `initialize` starts a legacy session and returns `Mcp-Session-Id`; later
//! requests must carry it (`400` without, `404` for an unknown id) and, from 2025-06-18,
//! an `MCP-Protocol-Version` header equal to the negotiated revision when they send one
//! (`400` otherwise). A request without a session whose `MCP-Protocol-Version` is
//! 2026-07-28, or whose `params._meta` names a protocol version, is served statelessly:
//! the `_meta` rules of the stdio reference apply (`-32602`/`-32022`, HTTP 400), and an
//! `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header that disagrees with the body
//! is `400` with `-32020` (HeaderMismatch).
//!
//! Identity is resolved for every request from its own `Authorization` header (seed
//! rule 2), never from the session.
//!
//! With the admin hook enabled (off by default), `POST /admin/mint` with
//! `{"channel":C}` answers `{"token":T}`, and `POST /admin/revoke` with `{"token":T}` or
//! `{"channel":C}` answers `{"revoked":N}`. A request to the hook carrying any `Origin`
//! is refused (`403`), so a browser page cannot reach it.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Map, Value};

use super::registry::{ctx_from_authorization, SessionCtx, TokenRegistry};
use super::Facade;
use crate::mcp::server::{check_meta, META_PROTOCOL_VERSION, META_SERVER_INFO};
use crate::mcp::{BATCH_REVISION, LATEST_LEGACY_REVISION, MODERN_REVISION};

/// Largest accepted request body: 4 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// Most legacy sessions kept at once; the oldest is dropped beyond it.
pub const MAX_SESSIONS: usize = 4096;

/// The revisions an `initialize` over Streamable HTTP may choose (2024-11-05 used the
/// older HTTP+SSE transport, so it is answered with the latest).
pub const HTTP_LEGACY_REVISIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

/// How request responses are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseMode {
    /// `application/json`.
    #[default]
    Json,
    /// `text/event-stream` with one `message` event.
    Sse,
}

/// Listener options.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The endpoint path, default `/mcp`.
    pub path: String,
    /// Whether `/admin/mint` and `/admin/revoke` exist.
    pub admin: bool,
    /// Response framing.
    pub response: ResponseMode,
    /// Largest request body in bytes.
    pub body_limit: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".to_owned(),
            admin: false,
            response: ResponseMode::Json,
            body_limit: DEFAULT_BODY_LIMIT,
        }
    }
}

/// A boxed future of a `tools/call` result.
pub type CallFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Map<String, Value>, (i64, String)>> + Send + 'a>>;

/// What the listener serves: the facade, or a layer around it (faulty peers wrap it).
pub trait McpService: Send + Sync {
    /// The token registry identity is resolved through.
    fn registry(&self) -> Arc<dyn TokenRegistry>;
    /// `serverInfo`: `{name, version}`.
    fn server_info(&self) -> Value;
    /// The `tools/list` result for `ctx`, without era members.
    fn tools_list(&self, ctx: Option<&SessionCtx>) -> Map<String, Value>;
    /// The `tools/call` result for `ctx`, or a JSON-RPC error `(code, message)`.
    fn tools_call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        params: Option<&'a Value>,
    ) -> CallFuture<'a>;
    /// The dispatcher whose workspace is served as resources, prompts and completion
    /// (`crate::mcp::features`); `None` (the default) serves tools only.
    fn features(&self) -> Option<Arc<crate::mcp::features::Workspace>> {
        None
    }
}

impl McpService for Facade {
    fn registry(&self) -> Arc<dyn TokenRegistry> {
        Facade::registry(self).clone()
    }
    fn server_info(&self) -> Value {
        json!({"name": self.config().server_name, "version": self.config().server_version})
    }
    fn tools_list(&self, ctx: Option<&SessionCtx>) -> Map<String, Value> {
        Facade::tools_list(self, ctx)
    }
    fn tools_call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        params: Option<&'a Value>,
    ) -> CallFuture<'a> {
        Box::pin(Facade::tools_call(self, ctx, params))
    }
    fn features(&self) -> Option<Arc<crate::mcp::features::Workspace>> {
        self.config().features.clone()
    }
}

/// The capabilities over HTTP: tools, plus the server features when the service has a
/// workspace (`McpService::features`), as over stdio.
fn http_capabilities(service: &dyn McpService, revision: Option<&str>) -> Value {
    if service.features().is_none() {
        return json!({"tools": {"listChanged": false}});
    }
    crate::mcp::features::capabilities(revision)
}

/// Answers a server-feature request through the service's workspace, or −32601.
async fn feature(
    service: &dyn McpService,
    method: &str,
    params: Option<&Value>,
    revision: Option<&str>,
) -> Result<Map<String, Value>, (i64, String)> {
    match service.features() {
        // The level is checked and kept by no one: over HTTP this facade sends no log
        // messages (a server MAY decide which to send).
        Some(_) if method == "logging/setLevel" && revision.is_some() => {
            crate::mcp::features::log_level(params).map(|_| Map::new())
        }
        Some(workspace) if crate::mcp::features::handles(method, revision) => {
            crate::mcp::features::handle(&workspace, method, params, revision, 0).await
        }
        _ => Err((-32601, format!("Method not found: {method}"))),
    }
}

/// Why the listener could not start.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The address is not `IP:PORT`.
    #[error("loopback-only: `{0}` is not an address such as 127.0.0.1:0 or [::1]:0")]
    Unparsable(String),
    /// The address is not a loopback address (rule 13).
    #[error("loopback-only: refusing to listen on {0}; use 127.0.0.1 or [::1]")]
    NotLoopback(String),
    /// Binding failed.
    #[error("cannot listen on {addr}: {source}")]
    Io {
        /// The address.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Parses `addr` and accepts only loopback addresses (rule 13).
///
/// # Errors
/// [`BindError::Unparsable`] or [`BindError::NotLoopback`].
pub fn loopback_addr(addr: &str) -> Result<SocketAddr, BindError> {
    let parsed: SocketAddr = addr
        .parse()
        .map_err(|_| BindError::Unparsable(addr.to_owned()))?;
    if parsed.ip().is_loopback() {
        Ok(parsed)
    } else {
        Err(BindError::NotLoopback(addr.to_owned()))
    }
}

/// Binds a loopback listener.
///
/// # Errors
/// As [`loopback_addr`], or [`BindError::Io`].
pub async fn bind(addr: &str) -> Result<tokio::net::TcpListener, BindError> {
    let parsed = loopback_addr(addr)?;
    tokio::net::TcpListener::bind(parsed)
        .await
        .map_err(|source| BindError::Io {
            addr: addr.to_owned(),
            source,
        })
}

#[derive(Default)]
struct Sessions {
    by_id: HashMap<String, String>,
    order: VecDeque<String>,
}

struct App {
    service: Arc<dyn McpService>,
    config: HttpConfig,
    sessions: Mutex<Sessions>,
}

/// The router serving `service` (exposed so tests can mount it on their own listener).
pub fn router(service: Arc<dyn McpService>, config: HttpConfig) -> Router {
    let path = config.path.clone();
    let limit = config.body_limit;
    let admin = config.admin;
    let app = Arc::new(App {
        service,
        config,
        sessions: Mutex::default(),
    });
    let mut router = Router::new().route(&path, post(post_mcp).get(get_mcp).delete(delete_mcp));
    if admin {
        router = router
            .route("/admin/mint", post(admin_mint))
            .route("/admin/revoke", post(admin_revoke));
    }
    router
        .with_state(app)
        .layer(axum::middleware::from_fn(origin_guard))
        .layer(DefaultBodyLimit::max(limit))
}

/// Serves `service` on `listener` until `shutdown` completes.
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<dyn McpService>,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(service, config))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Refuses any request (every method and path) whose `Origin` is not a loopback origin
/// (`basic/transports`: servers MUST validate the Origin header on all incoming connections).
async fn origin_guard(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        if !origin.to_str().map(origin_is_loopback).unwrap_or(false) {
            return rpc_error(
                StatusCode::FORBIDDEN,
                -32600,
                "Forbidden: the Origin is not a loopback origin",
            );
        }
    }
    next.run(request).await
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether an `Origin` value names a loopback origin.
fn origin_is_loopback(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, tail)) if tail.is_empty() || tail.starts_with(':') => h,
            _ => return false,
        }
    } else {
        rest.split(':').next().unwrap_or_default()
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Which framings the client's `Accept` allows: `(json, sse)`.
fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let Some(accept) = header_str(headers, "accept") else {
        return (true, true);
    };
    let mut json = false;
    let mut sse = false;
    for part in accept.split(',') {
        match media_type(part).as_str() {
            "*/*" => {
                json = true;
                sse = true;
            }
            "application/json" | "application/*" => json = true,
            "text/event-stream" | "text/*" => sse = true,
            _ => {}
        }
    }
    (json, sse)
}

enum Era {
    Legacy(String),
    Modern,
}

fn random_hex(bytes: usize) -> Option<String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).ok()?;
    Some(buf.iter().map(|b| format!("{b:02x}")).collect())
}

async fn post_mcp(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(rejection) => {
            let status = rejection.status();
            let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
                "Payload Too Large: the request body exceeds the limit"
            } else {
                "Bad Request: the request body could not be read"
            };
            return rpc_error(status, -32600, message);
        }
    };
    match header_str(&headers, "content-type").map(media_type) {
        Some(t) if t == "application/json" => {}
        _ => {
            return rpc_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                -32600,
                "Unsupported Media Type: Content-Type must be application/json",
            )
        }
    }
    let (accept_json, accept_sse) = accepts(&headers);
    if !accept_json && !accept_sse {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            -32600,
            "Not Acceptable: Accept must list application/json and text/event-stream",
        );
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32700,
            "Parse error: the body is not JSON",
        );
    };
    let ctx = ctx_from_authorization(
        app.service.registry().as_ref(),
        headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes),
    );
    let use_sse = match app.config.response {
        ResponseMode::Json => !accept_json,
        ResponseMode::Sse => accept_sse,
    };
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    // The era and session of this request.
    let session_header = header_str(&headers, "mcp-session-id").map(str::to_owned);
    let version_header = header_str(&headers, "mcp-protocol-version").map(str::to_owned);
    let mut new_session = None;
    let era = if is_initialize {
        Era::Legacy(String::new()) // chosen below
    } else if let Some(id) = &session_header {
        let revision = app
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_id
            .get(id)
            .cloned();
        let Some(revision) = revision else {
            return rpc_error(
                StatusCode::NOT_FOUND,
                -32001,
                "Not Found: unknown or ended session",
            );
        };
        if let Some(v) = &version_header {
            if revision.as_str() >= "2025-06-18" && *v != revision {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32600,
                    "Bad Request: MCP-Protocol-Version does not match the negotiated revision",
                );
            }
        }
        Era::Legacy(revision)
    } else if version_header.as_deref() == Some(MODERN_REVISION) || meta_version(&message).is_some()
    {
        Era::Modern
    } else if let Some(v) = &version_header {
        let _ = v;
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Bad Request: unsupported MCP-Protocol-Version",
        );
    } else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Bad Request: Mcp-Session-Id is required after initialize (or send a 2026-07-28 request)",
        );
    };

    // Batches: only in a session negotiated at 2025-03-26.
    let batch = message.is_array();
    let items: Vec<Value> = match message {
        Value::Array(items) => match &era {
            Era::Legacy(r) if r == BATCH_REVISION && !items.is_empty() => items,
            _ => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32600,
                    "Invalid Request: batches are accepted only in a 2025-03-26 session",
                )
            }
        },
        Value::Object(_) => vec![message],
        _ => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "Invalid Request: not a JSON-RPC message",
            )
        }
    };

    if let Era::Modern = era {
        if let Some(m) = items.first() {
            if let Some(what) = header_mismatch(&headers, m) {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32020,
                    &format!("HeaderMismatch: the {what} header does not match the body"),
                );
            }
        }
    }

    let mut responses = Vec::new();
    // Notifications sent before the reply on its SSE stream (none in JSON mode).
    let mut leading: Vec<Value> = Vec::new();
    let mut status = StatusCode::OK;
    for item in items {
        let Some(obj) = item.as_object() else {
            responses.push(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}));
            continue;
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            responses.push(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: `jsonrpc` must be \"2.0\""}}));
            status = StatusCode::BAD_REQUEST;
            continue;
        }
        let Some(method) = obj.get("method").and_then(Value::as_str) else {
            continue; // a response from the client: accepted, nothing to answer
        };
        let Some(id) = obj.get("id").cloned() else {
            continue; // a notification
        };
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            responses.push(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: `id` must be a string or an integer"}}));
            status = StatusCode::BAD_REQUEST;
            continue;
        }
        let params = obj.get("params");
        if params.is_some_and(|p| !p.is_object() && !p.is_array()) {
            responses.push(error(
                id,
                -32600,
                "Invalid Request: `params` must be an object or an array",
            ));
            status = StatusCode::BAD_REQUEST;
            continue;
        }
        // This facade never issues cursors: every catalogue fits one page.
        if method == "tools/list" && params.and_then(|p| p.get("cursor")).is_some() {
            responses.push(error(id, -32602, "Invalid params: unknown cursor"));
            continue;
        }
        let answer = match &era {
            Era::Legacy(_) if method == "initialize" => {
                let requested = params
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str);
                let Some(requested) = requested else {
                    responses.push(error(
                        id,
                        -32602,
                        "Invalid params: `protocolVersion` must be a string",
                    ));
                    continue;
                };
                let chosen = if HTTP_LEGACY_REVISIONS.contains(&requested) {
                    requested
                } else {
                    LATEST_LEGACY_REVISION
                };
                let Some(session) = random_hex(16) else {
                    return rpc_error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        -32603,
                        "Internal error: no randomness for a session id",
                    );
                };
                new_session = Some((session, chosen.to_owned()));
                Ok(json!({
                    "protocolVersion": chosen,
                    "capabilities": http_capabilities(app.service.as_ref(), Some(chosen)),
                    "serverInfo": app.service.server_info(),
                    "instructions": "A parity reference facade: session-bound capabilities need Authorization: Bearer <token>.",
                }))
            }
            Era::Legacy(rev) => match method {
                "ping" => Ok(json!({})),
                // With a workspace the facade logs one message at the level just set, as the
                // stdio server does; it reaches the client in SSE mode only (a JSON reply is one
                // object).
                "logging/setLevel" if app.service.features().is_some() => {
                    crate::mcp::features::log_level(params).map(|level| {
                        leading.push(json!({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": level, "logger": "parity-reference-facade",
                                "data": format!("log level set to {level}")}}));
                        json!({})
                    })
                }
                "tools/list" => Ok(Value::Object(app.service.tools_list(ctx.as_ref()))),
                "tools/call" => app
                    .service
                    .tools_call(ctx.as_ref(), params)
                    .await
                    .map(Value::Object),
                _ => feature(app.service.as_ref(), method, params, Some(rev))
                    .await
                    .map(Value::Object),
            },
            Era::Modern => {
                if let Err(e) = check_meta(&id, params) {
                    responses.push(e);
                    status = StatusCode::BAD_REQUEST;
                    continue;
                }
                let info = app.service.server_info();
                let finish = |mut m: Map<String, Value>, list: bool| {
                    m.insert("resultType".into(), Value::from("complete"));
                    if list {
                        m.insert("ttlMs".into(), Value::from(0));
                        m.insert("cacheScope".into(), Value::from("private"));
                    }
                    m.insert("_meta".into(), json!({ META_SERVER_INFO: info }));
                    Value::Object(m)
                };
                match method {
                    "server/discover" => {
                        let mut m = Map::new();
                        m.insert("supportedVersions".into(), json!([MODERN_REVISION]));
                        m.insert(
                            "capabilities".into(),
                            http_capabilities(app.service.as_ref(), None),
                        );
                        Ok(finish(m, true))
                    }
                    "tools/list" => Ok(finish(app.service.tools_list(ctx.as_ref()), true)),
                    "tools/call" => app
                        .service
                        .tools_call(ctx.as_ref(), params)
                        .await
                        .map(|m| finish(m, false)),
                    // The features add their own cache hints where the caching page asks.
                    _ => feature(app.service.as_ref(), method, params, None)
                        .await
                        .map(|m| finish(m, false)),
                }
            }
        };
        responses.push(match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => error(id, code, &message),
        });
    }

    let mut extra = HeaderMap::new();
    if let Some((session, revision)) = new_session {
        if let Ok(v) = HeaderValue::from_str(&session) {
            extra.insert("mcp-session-id", v);
        }
        let mut sessions = app.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if sessions.order.len() >= MAX_SESSIONS {
            if let Some(old) = sessions.order.pop_front() {
                sessions.by_id.remove(&old);
            }
        }
        sessions.order.push_back(session.clone());
        sessions.by_id.insert(session, revision);
    }
    if responses.is_empty() {
        return (StatusCode::ACCEPTED, extra).into_response();
    }
    let payload = if batch {
        Value::Array(responses)
    } else {
        responses.swap_remove(0)
    };
    if use_sse {
        extra.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        extra.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        let mut body: String = leading
            .iter()
            .map(|n| format!("event: message\ndata: {n}\n\n"))
            .collect();
        body.push_str(&format!("event: message\ndata: {payload}\n\n"));
        (status, extra, body).into_response()
    } else {
        extra.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        (status, extra, payload.to_string()).into_response()
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn meta_version(message: &Value) -> Option<&str> {
    message
        .get("params")?
        .get("_meta")?
        .get(META_PROTOCOL_VERSION)?
        .as_str()
}

/// 2026-07-28 header/body agreement: the name of the first of `MCP-Protocol-Version`,
/// `Mcp-Method`, `Mcp-Name` that disagrees with the body, if any.
fn header_mismatch(headers: &HeaderMap, message: &Value) -> Option<&'static str> {
    if let (Some(h), Some(b)) = (
        header_str(headers, "mcp-protocol-version"),
        meta_version(message),
    ) {
        if h != b {
            return Some("MCP-Protocol-Version");
        }
    }
    let method = message.get("method").and_then(Value::as_str);
    if header_str(headers, "mcp-method").is_some_and(|h| Some(h) != method) {
        return Some("Mcp-Method");
    }
    if let Some(h) = header_str(headers, "mcp-name") {
        let name = message
            .get("params")
            .and_then(|p| p.get("name").or_else(|| p.get("uri")))
            .and_then(Value::as_str);
        if Some(h) != name {
            return Some("Mcp-Name");
        }
    }
    None
}

async fn get_mcp() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST, DELETE")],
    )
        .into_response()
}

async fn delete_mcp(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let Some(id) = header_str(&headers, "mcp-session-id") else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Bad Request: DELETE needs Mcp-Session-Id",
        );
    };
    let mut sessions = app.sessions.lock().unwrap_or_else(|e| e.into_inner());
    if sessions.by_id.remove(id).is_some() {
        sessions.order.retain(|s| s != id);
        StatusCode::NO_CONTENT.into_response()
    } else {
        rpc_error(
            StatusCode::NOT_FOUND,
            -32001,
            "Not Found: unknown or ended session",
        )
    }
}

fn admin_body(
    headers: &HeaderMap,
    body: &Result<Bytes, BytesRejection>,
) -> Result<Map<String, Value>, (StatusCode, &'static str)> {
    if headers.contains_key(header::ORIGIN) {
        return Err((
            StatusCode::FORBIDDEN,
            "the admin hook refuses requests with an Origin\n",
        ));
    }
    let bad = || (StatusCode::BAD_REQUEST, "expected a JSON object body\n");
    let Ok(bytes) = body else { return Err(bad()) };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(bad()),
    }
}

async fn admin_mint(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match admin_body(&headers, &body) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    let Some(channel) = body.get("channel").and_then(Value::as_str) else {
        return (StatusCode::BAD_REQUEST, "`channel` must be a string\n").into_response();
    };
    match app.service.registry().mint(channel) {
        Ok(token) => axum::Json(json!({"token": token})).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}

async fn admin_revoke(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match admin_body(&headers, &body) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    let registry = app.service.registry();
    if let Some(token) = body.get("token").and_then(Value::as_str) {
        return axum::Json(json!({"revoked": usize::from(registry.revoke_token(token))}))
            .into_response();
    }
    if let Some(channel) = body.get("channel").and_then(Value::as_str) {
        return axum::Json(json!({"revoked": registry.revoke_channel(channel)})).into_response();
    }
    (StatusCode::BAD_REQUEST, "give `token` or `channel`\n").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only() {
        assert!(loopback_addr("127.0.0.1:0").is_ok());
        assert!(loopback_addr("[::1]:0").is_ok());
        for bad in [
            "0.0.0.0:0",
            "192.168.1.2:80",
            "[::]:0",
            "localhost:80",
            "nonsense",
        ] {
            let err = loopback_addr(bad)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains("loopback-only"), "{bad}: {err}");
        }
    }

    #[test]
    fn origins() {
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8080",
            "http://localhost",
        ] {
            assert!(origin_is_loopback(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "null",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil:80",
            "file://",
        ] {
            assert!(!origin_is_loopback(bad), "{bad}");
        }
    }
}
