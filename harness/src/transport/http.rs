//! The harness's client side of MCP Streamable HTTP (MCP 2025-11-25 `basic/transports`,
//! "Streamable HTTP"; 2026-07-28 `streamable-http`), used by checks that probe an MCP server or
//! facade at a URL.
//!
//! It reports raw observations — status, headers, body bytes, Server-Sent Events — because the
//! checks judge the transport rules; nothing here decides whether a server conforms, and nothing
//! panics on anything a server sends.
//!
//! Shape: [`HttpClient::new`] takes one `http://` endpoint URL (plain HTTP only: parity talks to
//! loopback, no TLS), [`HttpClient::send`] sends one [`HttpRequest`] and reads the whole response
//! (up to a byte cap, before a deadline) into an [`HttpExchange`], and
//! [`HttpExchange::messages`] / [`HttpExchange::sse_events`] decode its body: one JSON value for
//! `application/json`, one JSON value per event for `text/event-stream` ([`parse_sse`]).
//! [`HttpClient::call`] does a JSON-RPC call over one POST.
//!
//! The underlying `reqwest` client ignores environment proxies, follows no redirects (a 3xx is an
//! observation) and speaks HTTP/1.1. One limit: when a request carries no `Accept` header,
//! `reqwest` sends `Accept: */*`; a check that needs a "wrong Accept" request must send one
//! explicitly (for example `Accept: application/json` alone).

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::fmt;
use std::time::Duration;
use tokio::time::{timeout_at, Instant};

/// How [`HttpExchange::cap_note`] begins: the words that mark a body cut at the body cap in
/// evidence and in the Streamable HTTP bridge's notes.
pub const BODY_CAPPED: &str = "parity stopped reading the body at its size cap";

/// The default cap on a response body, in bytes (16 MiB); see [`HttpClient::with_body_cap`].
pub const DEFAULT_BODY_CAP: usize = 16 * 1024 * 1024;

/// The `Accept` value a Streamable HTTP client sends with a POST (MCP 2025-11-25
/// `basic/transports` "Sending Messages to the Server": the client MUST list both types).
pub const ACCEPT_POST: &str = "application/json, text/event-stream";

/// Request header names whose values never appear in `Debug` output or error messages.
const SECRET_HEADERS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

fn is_secret(name: &str) -> bool {
    SECRET_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// One HTTP request to send to the client's endpoint URL.
///
/// Headers are sent in order, names as given (HTTP/1.1 sends them lower-cased); a name may occur
/// more than once (see [`HttpRequest::add_header`]). `Debug` prints `Authorization`,
/// `Proxy-Authorization` and `Cookie` values as `[REDACTED]` and the body as its length only.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// The HTTP method: `POST` sends messages, `GET` opens an SSE stream, `DELETE` ends a
    /// session (MCP 2025-11-25 `basic/transports` "Streamable HTTP").
    pub method: reqwest::Method,
    /// Header `(name, value)` pairs, in sending order.
    pub headers: Vec<(String, String)>,
    /// The body bytes; `None` sends no body.
    pub body: Option<Vec<u8>>,
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a [(String, String)]);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut list = f.debug_list();
                for (name, value) in self.0 {
                    if is_secret(name) {
                        list.entry(&format_args!("{name}: [REDACTED]"));
                    } else {
                        list.entry(&format_args!("{name}: {value:?}"));
                    }
                }
                list.finish()
            }
        }
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("headers", &Headers(&self.headers))
            .field(
                "body",
                &self
                    .body
                    .as_ref()
                    .map(|b| format_args!("{} bytes", b.len()).to_string()),
            )
            .finish()
    }
}

impl HttpRequest {
    /// A request with `method`, no headers and no body.
    pub fn new(method: reqwest::Method) -> Self {
        HttpRequest {
            method,
            headers: Vec::new(),
            body: None,
        }
    }

    /// A POST of `body` serialized as JSON, with `Content-Type: application/json` and
    /// `Accept: application/json, text/event-stream` (MCP 2025-11-25 `basic/transports`
    /// "Sending Messages to the Server").
    pub fn post_json(body: &Value) -> Self {
        HttpRequest::new(reqwest::Method::POST)
            .header("Content-Type", "application/json")
            .header("Accept", ACCEPT_POST)
            .with_body(body.to_string().into_bytes())
    }

    /// A GET with `Accept: text/event-stream`, which opens a server-to-client SSE stream (MCP
    /// 2025-11-25 `basic/transports` "Listening for Messages from the Server"). Such a stream
    /// normally stays open, so [`HttpClient::send`] ends in [`HttpError::Timeout`] whose
    /// `partial` holds what arrived.
    pub fn get_sse() -> Self {
        HttpRequest::new(reqwest::Method::GET).header("Accept", "text/event-stream")
    }

    /// A DELETE with no body, which asks the server to end a session (MCP 2025-11-25
    /// `basic/transports` "Session Management"); add the `Mcp-Session-Id` header.
    pub fn delete() -> Self {
        HttpRequest::new(reqwest::Method::DELETE)
    }

    /// Sets header `name` to `value`, replacing every header of that name (compared
    /// case-insensitively); the new one goes last.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Appends header `name: value`, keeping any existing header of that name (to send a
    /// repeated header).
    pub fn add_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Removes every header named `name` (compared case-insensitively).
    pub fn without_header(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Sets the body bytes (sent as they are; set `Content-Type` yourself).
    pub fn with_body(mut self, body: Vec<u8>) -> Self {
        self.body = Some(body);
        self
    }
}

/// The response headers evidence shows ([`HttpExchange::summary`]): the ones that tell an MCP
/// client how to read the answer and go on (lower-cased, as [`HttpExchange::headers`] keeps
/// them).
pub const EVIDENCE_HEADERS: [&str; 9] = [
    "content-type",
    "content-length",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "allow",
    "location",
    "www-authenticate",
    "retry-after",
];

/// One response as observed: what came back for one [`HttpRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpExchange {
    /// The HTTP status code, e.g. `200`, `202`, `400`, `404`, `405`.
    pub status: u16,
    /// Response headers as `(name, value)`: names lower-cased, values decoded as UTF-8 with
    /// invalid bytes replaced by U+FFFD. Names are in arrival order of their first occurrence;
    /// repeated headers of one name are adjacent, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body bytes (after transfer decoding), at most the client's body cap.
    pub body: Vec<u8>,
    /// Whether the body was longer than the cap; the rest was not read.
    pub truncated: bool,
    /// Body bytes received before reading stopped: `body.len()`, or more when `truncated`
    /// (the part of the last chunk past the cap was received and dropped).
    pub received: u64,
    /// Time from sending the request to the end of reading the body (or to the deadline).
    pub elapsed: Duration,
}

impl HttpExchange {
    /// The value of the first header named `name` (compared case-insensitively), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type of `Content-Type`, lower-cased with parameters and surrounding whitespace
    /// removed (`Application/JSON; charset=utf-8` → `application/json`); `None` when the header
    /// is missing or its media type is empty.
    pub fn content_type(&self) -> Option<String> {
        let value = self.header("content-type")?;
        let media = value.split(';').next().unwrap_or("").trim();
        (!media.is_empty()).then(|| media.to_ascii_lowercase())
    }

    /// What to tell the user when the body was cut at the body cap ([`HttpExchange::truncated`]):
    /// the cap in bytes and how many bytes had come when reading stopped, e.g. `parity stopped
    /// reading the body at its size cap of 16777216 bytes, after 16842752 bytes had come (an
    /// endless body or SSE event?)`. Starts with [`BODY_CAPPED`]. `None` for a whole body.
    pub fn cap_note(&self) -> Option<String> {
        self.truncated.then(|| {
            format!(
                "{BODY_CAPPED} of {} bytes, after {} bytes had come (an endless body or SSE event?)",
                self.body.len(),
                self.received
            )
        })
    }

    /// The body as text, invalid UTF-8 replaced by U+FFFD (for evidence).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The status line as evidence shows it: `HTTP 415 Unsupported Media Type` (the reason
    /// phrase is the standard one for the code, when it has one).
    pub fn status_line(&self) -> String {
        let reason = reqwest::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason());
        match reason {
            Some(r) => format!("HTTP {} {r}", self.status),
            None => format!("HTTP {}", self.status),
        }
    }

    /// One line of evidence for this answer: the status line, the response headers that
    /// matter to an MCP client ([`EVIDENCE_HEADERS`], in that order, as `name: value`), the
    /// time it took in milliseconds, and, when `body_max` is `Some(n)`, the body clipped to
    /// `n` bytes (`no body` when it is empty). Parts are joined with ` · `, e.g.
    /// `HTTP 415 Unsupported Media Type · content-type: text/plain · content-length: 24 ·
    /// 2 ms · body (24 bytes): Unsupported Content-Type`.
    pub fn summary(&self, body_max: Option<usize>) -> String {
        let mut parts = vec![self.status_line()];
        for name in EVIDENCE_HEADERS {
            for (n, v) in self.headers.iter().filter(|(n, _)| n == name) {
                parts.push(format!("{n}: {v}"));
            }
        }
        parts.push(format!("{} ms", self.elapsed.as_millis()));
        if let Some(max) = body_max {
            if self.body.is_empty() {
                parts.push("no body".into());
            } else {
                let text = crate::base::util::clip(&self.body_text(), max);
                let cut = if self.truncated {
                    ", cut at the body cap"
                } else {
                    ""
                };
                parts.push(format!("body ({} bytes{cut}): {text}", self.body.len()));
            }
        }
        parts.join(" · ")
    }

    /// The JSON-RPC messages in the body (MCP 2025-11-25 `basic/transports` "Sending Messages to
    /// the Server": a POST's response is `application/json` with one JSON object, or a
    /// `text/event-stream`).
    ///
    /// - an empty body → no messages, whatever the `Content-Type` (e.g. a 202);
    /// - `application/json` → the one JSON value of the body, as it is (an array stays one
    ///   array, a scalar stays a scalar: checks judge the shape);
    /// - `text/event-stream` → the `data` of each event ([`HttpExchange::sse_events`]) parsed as
    ///   JSON, in order; events with empty data (e.g. a priming event that carries only an `id`)
    ///   are skipped.
    ///
    /// Errors: [`BodyError::UnexpectedContentType`] for another or a missing `Content-Type`,
    /// [`BodyError::NotJson`] (with the event's index among [`HttpExchange::sse_events`]) for
    /// text that is not JSON, and the errors of [`parse_sse`].
    pub fn messages(&self) -> Result<Vec<Value>, BodyError> {
        if self.body.is_empty() {
            return Ok(Vec::new());
        }
        match self.content_type().as_deref() {
            Some("application/json") => match serde_json::from_slice(&self.body) {
                Ok(value) => Ok(vec![value]),
                Err(e) => Err(BodyError::NotJson {
                    event_index: None,
                    message: e.to_string(),
                }),
            },
            Some("text/event-stream") => {
                let mut out = Vec::new();
                for (index, event) in parse_sse(&self.body)?.into_iter().enumerate() {
                    if event.data.is_empty() {
                        continue;
                    }
                    match serde_json::from_str(&event.data) {
                        Ok(value) => out.push(value),
                        Err(e) => {
                            return Err(BodyError::NotJson {
                                event_index: Some(index),
                                message: e.to_string(),
                            })
                        }
                    }
                }
                Ok(out)
            }
            other => Err(BodyError::UnexpectedContentType(other.map(str::to_string))),
        }
    }

    /// The body parsed as an event stream with [`parse_sse`], whatever the `Content-Type`
    /// (check [`HttpExchange::content_type`] yourself).
    pub fn sse_events(&self) -> Result<Vec<SseEvent>, BodyError> {
        parse_sse(&self.body)
    }
}

/// One dispatched Server-Sent Event (WHATWG HTML "Server-sent events").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event` field of this event; `None` when absent or empty (the browser's `message`).
    pub event: Option<String>,
    /// The `data` lines joined with `\n` (no trailing newline).
    pub data: String,
    /// The `id` field given in this event's own lines, if any (may be empty: that resets the
    /// last event ID). Unlike a browser's `lastEventId`, an id is not carried over from earlier
    /// events, so checks can see which events carry one (MCP 2025-11-25 "Resumability and
    /// Redelivery").
    pub id: Option<String>,
    /// The `retry` field of this event's own lines, in milliseconds, if valid (ASCII digits).
    pub retry: Option<u64>,
}

/// A response body that could not be decoded into messages or events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// The body, or the `data` of one event, is not JSON.
    #[error("{}", not_json_message(*.event_index, .message))]
    NotJson {
        /// The event's index among the dispatched events; `None` for an `application/json` body.
        event_index: Option<usize>,
        /// The JSON parser's message (with line and column).
        message: String,
    },
    /// The event stream ends inside an event: its last lines have no terminating blank line,
    /// so that event is not dispatched (WHATWG: "incomplete events are discarded").
    #[error(
        "the event stream ends inside an event (after {} complete events): its last event has no \
         terminating blank line, so it is not dispatched; a server must end every SSE event with \
         a blank line, and the stream may have been cut short",
        .complete.len()
    )]
    UnterminatedEvent {
        /// The events dispatched before the unterminated one.
        complete: Vec<SseEvent>,
    },
    /// The `Content-Type` is neither `application/json` nor `text/event-stream` (`None`: no
    /// `Content-Type` header at all).
    #[error("{}", content_type_message(.0.as_deref()))]
    UnexpectedContentType(Option<String>),
    /// An event stream that is not valid UTF-8.
    #[error(
        "the event stream is not valid UTF-8 (first invalid byte at offset {offset}); an SSE \
         stream must be UTF-8 encoded"
    )]
    NotUtf8 {
        /// The byte offset of the first invalid byte.
        offset: usize,
    },
}

fn not_json_message(event_index: Option<usize>, message: &str) -> String {
    match event_index {
        None => format!(
            "the application/json response body is not valid JSON ({message}); a JSON-RPC \
             response must be one JSON object"
        ),
        Some(i) => format!(
            "the data of SSE event #{i} (0-based) is not valid JSON ({message}); each event's \
             data must be one JSON-RPC message"
        ),
    }
}

fn content_type_message(content_type: Option<&str>) -> String {
    match content_type {
        None => "the response has a body but no Content-Type header; JSON-RPC messages must \
                 come as application/json or text/event-stream"
            .to_string(),
        Some(t) => format!(
            "the response's Content-Type is `{t}`, but JSON-RPC messages must come as \
             application/json or text/event-stream"
        ),
    }
}

/// The fields of the event being built.
#[derive(Default)]
struct Pending {
    event: String,
    data: String,
    id: Option<String>,
    retry: Option<u64>,
    /// Whether a field line was read since the last blank line.
    open: bool,
}

impl Pending {
    fn field(&mut self, line: &str) {
        self.open = true;
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "event" => self.event = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
    }

    /// Ends the event at a blank line; returns it unless its data buffer is empty.
    fn dispatch(&mut self) -> Option<SseEvent> {
        let p = std::mem::take(self);
        if p.data.is_empty() {
            return None;
        }
        let mut data = p.data;
        data.pop();
        Some(SseEvent {
            event: (!p.event.is_empty()).then_some(p.event),
            data,
            id: p.id,
            retry: p.retry,
        })
    }
}

/// Parses a complete `text/event-stream` body per the WHATWG HTML "event stream interpretation"
/// rules (referenced by MCP 2025-11-25 `basic/transports` "Streamable HTTP").
///
/// Lines end in CRLF, LF or CR; one leading U+FEFF BOM is skipped; lines starting with `:` are
/// comments; a field name runs to the first colon and one leading space of the value is removed
/// (`data:x` and `data: x` both give `x`); a line without a colon is a field with an empty value;
/// `data` lines join with `\n`; a blank line dispatches the event, unless no `data` line was
/// seen; `retry` counts only if all ASCII digits; an `id` containing NUL is ignored; unknown
/// fields are ignored. See [`SseEvent`] for how `id` and `retry` are reported.
///
/// Errors: [`BodyError::NotUtf8`] when the body is not UTF-8 (the browser would replace bad
/// bytes; a conformance harness reports them), and [`BodyError::UnterminatedEvent`] (carrying
/// the events before it) when field lines after the last blank line were never terminated by one
/// — a trailing comment is not an event.
pub fn parse_sse(body: &[u8]) -> Result<Vec<SseEvent>, BodyError> {
    let text = std::str::from_utf8(body).map_err(|e| BodyError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    let mut rest = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let mut events = Vec::new();
    let mut pending = Pending::default();
    while let Some(end) = memchr::memchr2(b'\r', b'\n', rest.as_bytes()) {
        let line = &rest[..end];
        let next = if rest[end..].starts_with("\r\n") {
            end + 2
        } else {
            end + 1
        };
        rest = &rest[next..];
        if line.is_empty() {
            events.extend(pending.dispatch());
        } else if !line.starts_with(':') {
            pending.field(line);
        }
    }
    // `rest` is now an unterminated last line, which WHATWG discards with the pending event.
    if pending.open || (!rest.is_empty() && !rest.starts_with(':')) {
        return Err(BodyError::UnterminatedEvent { complete: events });
    }
    Ok(events)
}

/// A failed HTTP exchange (no usable response).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The endpoint URL cannot be used; the message says why.
    #[error("invalid MCP endpoint URL: {0}")]
    BadUrl(String),
    /// No connection to the server (refused, unreachable, or the client could not be built).
    #[error(
        "could not connect to the server ({0}); check that it is running and listening at the \
         endpoint URL"
    )]
    Connect(String),
    /// The deadline passed before the response was complete: while connecting or waiting for
    /// the headers (`partial` is `None`), or while reading the body (`partial` holds the status,
    /// the headers and the body bytes read so far; its `truncated` is `false`).
    #[error("{}", timeout_message(.partial.as_deref()))]
    Timeout {
        /// What had arrived when the deadline passed, if the headers had.
        partial: Option<Box<HttpExchange>>,
    },
    /// The exchange failed after connecting: the connection was closed or reset, or the response
    /// was not valid HTTP.
    #[error("the HTTP exchange failed: {0}")]
    Io(String),
    /// A request header name or value cannot be sent; the message names the header, never its
    /// value.
    #[error("the request cannot be sent: {0}")]
    BadHeader(String),
}

fn timeout_message(partial: Option<&HttpExchange>) -> String {
    match partial {
        None => "the server did not send response headers before the deadline; it may be stuck \
                 or too slow (raise the timeout if it is just slow)"
            .to_string(),
        Some(p) => format!(
            "the server sent status {} and {} body bytes, then did not finish the body before \
             the deadline; it may have left the response open (an SSE stream) or stalled",
            p.status,
            p.body.len()
        ),
    }
}

/// The message of a `reqwest` error with its sources, e.g. `error sending request for url
/// (…): client error (Connect): tcp connect error: Connection refused (os error 111)`.
fn describe(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = current {
        let s = e.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        current = e.source();
    }
    parts.join(": ")
}

fn map_error(error: &reqwest::Error) -> HttpError {
    if error.is_timeout() {
        HttpError::Timeout { partial: None }
    } else if error.is_connect() {
        HttpError::Connect(describe(error))
    } else {
        HttpError::Io(describe(error))
    }
}

/// A client for one MCP Streamable HTTP endpoint (MCP 2025-11-25 `basic/transports`: "a single
/// HTTP endpoint path that supports both POST and GET methods").
///
/// Cheap to clone (the connection pool is shared). It ignores `HTTP_PROXY`-style environment
/// variables, follows no redirects and decompresses nothing.
#[derive(Debug, Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    url: reqwest::Url,
    body_cap: usize,
}

impl HttpClient {
    /// A client for `url`, which must be an `http://` URL whose host is loopback
    /// (`127.0.0.0/8`, `[::1]` or `localhost`) with no user name or password (put credentials
    /// in an `Authorization` header). The body cap is
    /// [`DEFAULT_BODY_CAP`].
    ///
    /// Errors: [`HttpError::BadUrl`] saying why the URL is unusable; [`HttpError::Connect`] if
    /// the HTTP client cannot be built.
    pub fn new(url: &str) -> Result<Self, HttpError> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| HttpError::BadUrl(format!("`{url}` is not a URL ({e})")))?;
        if parsed.scheme() != "http" {
            return Err(HttpError::BadUrl(format!(
                "`{url}` has scheme `{}`, but parity speaks plain `http://` only (no TLS; it \
                 probes local servers)",
                parsed.scheme()
            )));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(HttpError::BadUrl(format!("`{url}` has no host")));
        }
        // parity's traffic stays on loopback: tokens and canaries travel in clear text.
        let host = parsed
            .host_str()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(HttpError::BadUrl(format!(
                "`{url}` is not a loopback address: parity talks to 127.0.0.1, [::1] or localhost only"
            )));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(HttpError::BadUrl(
                "the URL carries a user name or password; remove them and send credentials in \
                 an `Authorization` header instead"
                    .to_string(),
            ));
        }
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| HttpError::Connect(format!("the HTTP client could not be built: {e}")))?;
        Ok(HttpClient {
            client,
            url: parsed,
            body_cap: DEFAULT_BODY_CAP,
        })
    }

    /// The same client with a body cap of `cap` bytes: [`HttpClient::send`] keeps at most `cap`
    /// bytes of a body, sets [`HttpExchange::truncated`] and stops reading.
    pub fn with_body_cap(mut self, cap: usize) -> Self {
        self.body_cap = cap;
        self
    }

    /// The endpoint URL, normalized (e.g. `http://127.0.0.1:8080` → `http://127.0.0.1:8080/`).
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// Sends `request` to the endpoint URL and reads the whole response, chunk by chunk, until
    /// the body ends or reaches the body cap, all before `deadline`.
    ///
    /// Errors: [`HttpError::BadHeader`] for a header name or value HTTP cannot carry;
    /// [`HttpError::Connect`] when no connection could be made (e.g. refused);
    /// [`HttpError::Timeout`] when `deadline` passes, whether waiting for the headers or for the
    /// body (then with what was read); [`HttpError::Io`] when the connection is closed or reset
    /// early or the response is not valid HTTP/1.1.
    pub async fn send(
        &self,
        request: HttpRequest,
        deadline: Instant,
    ) -> Result<HttpExchange, HttpError> {
        self.exchange(request, deadline, true).await
    }

    /// Sends `request` and returns once the status line and headers are in, with an empty body
    /// (the connection is dropped): for a `GET` whose SSE stream stays open, where the
    /// headers are what counts.
    ///
    /// Errors: those of [`HttpClient::send`] up to the headers.
    pub async fn send_head(
        &self,
        request: HttpRequest,
        deadline: Instant,
    ) -> Result<HttpExchange, HttpError> {
        self.exchange(request, deadline, false).await
    }

    async fn exchange(
        &self,
        request: HttpRequest,
        deadline: Instant,
        read_body: bool,
    ) -> Result<HttpExchange, HttpError> {
        let started = Instant::now();
        let mut headers = HeaderMap::new();
        for (name, value) in &request.headers {
            let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                HttpError::BadHeader(format!("`{name}` is not a valid HTTP header name"))
            })?;
            let header_value = HeaderValue::from_bytes(value.as_bytes()).map_err(|_| {
                HttpError::BadHeader(format!(
                    "the value of header `{name}` is not a valid HTTP header value (it contains \
                     CR, LF, NUL or another control character)"
                ))
            })?;
            headers.append(header_name, header_value);
        }
        let mut req = reqwest::Request::new(request.method, self.url.clone());
        *req.headers_mut() = headers;
        if let Some(body) = request.body {
            *req.body_mut() = Some(body.into());
        }

        let mut response = match timeout_at(deadline, self.client.execute(req)).await {
            Err(_) => return Err(HttpError::Timeout { partial: None }),
            Ok(Err(e)) => return Err(map_error(&e)),
            Ok(Ok(r)) => r,
        };
        let mut exchange = HttpExchange {
            status: response.status().as_u16(),
            headers: response
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_ascii_lowercase(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: Vec::new(),
            truncated: false,
            received: 0,
            elapsed: Duration::ZERO,
        };
        if read_body {
            loop {
                match timeout_at(deadline, response.chunk()).await {
                    Err(_) => {
                        exchange.elapsed = started.elapsed();
                        return Err(HttpError::Timeout {
                            partial: Some(Box::new(exchange)),
                        });
                    }
                    Ok(Err(e)) => {
                        return Err(match map_error(&e) {
                            HttpError::Timeout { .. } => {
                                exchange.elapsed = started.elapsed();
                                HttpError::Timeout {
                                    partial: Some(Box::new(exchange)),
                                }
                            }
                            other => other,
                        })
                    }
                    Ok(Ok(None)) => break,
                    Ok(Ok(Some(chunk))) => {
                        let room = self.body_cap.saturating_sub(exchange.body.len());
                        exchange.received = exchange.received.saturating_add(chunk.len() as u64);
                        if chunk.len() > room {
                            exchange.body.extend_from_slice(&chunk[..room]);
                            exchange.truncated = true;
                            break;
                        }
                        exchange.body.extend_from_slice(&chunk);
                    }
                }
            }
        }
        exchange.elapsed = started.elapsed();
        Ok(exchange)
    }

    /// A JSON-RPC call over one POST (MCP 2025-11-25 `basic/transports` "Sending Messages to the
    /// Server"): sends [`HttpRequest::post_json`]`(message)` plus `headers` (each replacing a
    /// header of the same name), and returns the exchange with the first response message —
    /// an object without `method` whose `id` equals `message["id"]`, also looked for inside a
    /// batch array — or `None` when `message` has no `id`, there is no such response, or the
    /// body does not decode ([`HttpExchange::messages`] says why).
    ///
    /// Errors: those of [`HttpClient::send`].
    pub async fn call(
        &self,
        message: &Value,
        headers: &[(&str, &str)],
        deadline: Instant,
    ) -> Result<(HttpExchange, Option<Value>), HttpError> {
        let mut request = HttpRequest::post_json(message);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let exchange = self.send(request, deadline).await?;
        let response = match (message.get("id"), exchange.messages()) {
            (Some(id), Ok(messages)) => find_response(&messages, id),
            _ => None,
        };
        Ok((exchange, response))
    }
}

/// The first response (an object without `method`) with `id`, looking into arrays one level.
fn find_response(messages: &[Value], id: &Value) -> Option<Value> {
    fn is_response(m: &Value, id: &Value) -> bool {
        m.is_object() && m.get("method").is_none() && m.get("id") == Some(id)
    }
    messages.iter().find_map(|m| match m {
        Value::Array(items) => items.iter().find(|i| is_response(i, id)).cloned(),
        other => is_response(other, id).then(|| other.clone()),
    })
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
