//! A peer over MCP Streamable HTTP: the stdio frame model on top of HTTP requests
//! (DESIGN "frames, not lines"; MCP 2025-03-26 … 2025-11-25 `basic/transports`, 2026-07-28
//! `basic/transports/streamable-http`).
//!
//! The checks of the MCP profile talk to a [`Peer`] in lines. [`peer`] gives them one whose
//! "stdin" is bridged to an endpoint: every line the harness writes becomes one `POST`
//! (the line as the body, `Content-Type: application/json`, `Accept: application/json,
//! text/event-stream`), and every JSON-RPC message of the answer — a JSON body, or the
//! `data` of each SSE event — comes back as one "stdout" line. A `202 Accepted` adds
//! nothing. The bridge keeps what an MCP client must send on later requests:
//!
//! - the `Mcp-Session-Id` the server assigned (any response may carry it);
//! - `MCP-Protocol-Version`: the revision an `initialize` result negotiated (from
//!   2025-06-18 on), or, for a 2026-07-28 request, its `_meta` protocol version;
//! - for a 2026-07-28 request, `Mcp-Method` (the method) and `Mcp-Name` (`params.name` or
//!   `params.uri`, when present); once a request named 2026-07-28 in its `_meta`, later
//!   messages without `_meta` keep the version header, as a stateless client's would.
//!
//! Each POST runs on its own task, so a slow request never holds up the next one (as over
//! stdio, answers may arrive in any order). The bridge opens no `GET` stream, so everything
//! the server sends comes in the answer to some POST: once each line written has been
//! answered, nothing more can come, and the peer ([`Peer::bridged`]) ends a wait for a
//! response that did not come, or a silence window, at once instead of at its deadline. Closing the peer's stdin ends the bridge: it
//! sends `DELETE` for the session (best effort) and closes "stdout". Framing is read
//! leniently (a JSON body under another Content-Type, an unterminated last SSE event): the
//! `mcp.http.*` checks judge framing, the bridged checks judge JSON-RPC. A body that holds
//! no JSON-RPC at all (an HTML error page) yields no line.
//!
//! What came at the HTTP level is never hidden: before the lines of each answer the bridge
//! writes a note ([`crate::transport::peer::NOTE_MARKER`], logged as a [`crate::transport::wire::Dir::Note`] frame
//! and shown in evidence, never judged as protocol) with the POST's MCP headers, the status
//! line, the response headers that matter, the time, and — when the body gave no JSON-RPC
//! line — the body clipped to [`NOTE_BODY_BYTES`]; a POST that got no answer is noted with
//! why.
//!
//! A notification POST answered with an HTTP error status (4xx or 5xx) is the server
//! refusing it as the transport prescribes (2025-03-26 … 2025-11-25 `basic/transports`,
//! 2026-07-28 `streamable-http` "Sending Messages": "If the server cannot accept it, it
//! MUST return an HTTP error status code (e.g., 400 Bad Request). The HTTP response body MAY
//! comprise a JSON-RPC error response that has no id."). That body is part of the HTTP
//! refusal, not a JSON-RPC reply to the notification, so an error response in it without an
//! id (or with id null) yields no line; the note shows it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::transport::http::{HttpClient, HttpRequest};
use crate::transport::peer::{Peer, NOTE_MARKER, SETTLED_MARKER};

/// Bytes buffered in each direction of the in-memory pipes.
const PIPE_BYTES: usize = 1 << 20;

/// Body bytes a note shows when the body gave no JSON-RPC line.
pub const NOTE_BODY_BYTES: usize = 200;

/// What separates a POST's name from its answer in the note of a message that is not a
/// notification and was answered with an HTTP error status (4xx or 5xx) and no JSON-RPC
/// message in the body: the server refused it at the HTTP level without the JSON-RPC error
/// response a client could read. [`bare_refusal`] finds such notes.
pub const BARE_REFUSAL: &str = " → refused by HTTP status, with no JSON-RPC message in the body: ";

/// Whether `note` (a note's text, as [`crate::transport::peer::Peer::notes_since`] gives it) is the
/// bridge's account of a bare refusal ([`BARE_REFUSAL`]).
pub fn bare_refusal(note: &str) -> bool {
    note.contains(BARE_REFUSAL)
}

/// Queues a note line (the [`NOTE_MARKER`] prefix, then `text`) for the peer's frame log.
fn note(out: &mpsc::UnboundedSender<Vec<u8>>, text: &str) {
    let mut line = NOTE_MARKER.to_vec();
    // A note is one line: newlines in a clipped body are shown escaped.
    line.extend_from_slice(text.replace('\r', "\\r").replace('\n', "\\n").as_bytes());
    let _ = out.send(line);
}

/// How a POST body is named in notes: `POST tools/list` (its method), `POST a batch`, or
/// `POST a body that is not a JSON-RPC message`.
fn post_name(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(_)) => "POST a batch".to_string(),
        Ok(v) => match v.get("method").and_then(Value::as_str) {
            Some(m) if v.get("id").is_none() => format!("POST notification {m}"),
            Some(m) => format!("POST {m}"),
            None => "POST a JSON body that is not a request".to_string(),
        },
        Err(_) => "POST a body that is not JSON".to_string(),
    }
}

/// Whether `body` is one JSON-RPC notification (an object with a `method` and no `id`).
fn is_notification(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .is_some_and(|v| v.is_object() && v.get("method").is_some() && v.get("id").is_none())
}

/// Whether `m` is an error response without an id, or with id null: the body a server may
/// send with the HTTP error status that refuses a notification.
fn idless_error(m: &Value) -> bool {
    m.is_object()
        && m.get("method").is_none()
        && m.get("error").is_some()
        && m.get("id").is_none_or(Value::is_null)
}

#[derive(Default)]
struct State {
    session: Option<String>,
    version: Option<String>,
    /// The 2026-07-28 revision a request's `_meta` named: later requests without `_meta`
    /// still carry it in `MCP-Protocol-Version`, as a stateless client's would.
    modern: Option<String>,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// A peer bridged to the Streamable HTTP endpoint `url`: lines up to `line_cap` bytes each
/// way, each POST bounded by `deadline`.
///
/// # Errors
/// `url` is not an `http://` URL with a host.
pub fn peer(url: &str, line_cap: usize, deadline: Duration) -> Result<Peer, String> {
    let client = HttpClient::new(url).map_err(|e| e.to_string())?;
    let (harness_w, bridge_r) = tokio::io::duplex(PIPE_BYTES);
    let (bridge_w, harness_r) = tokio::io::duplex(PIPE_BYTES);
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    // The writer: one line per message, in completion order.
    let writer = tokio::spawn(async move {
        let mut w = bridge_w;
        while let Some(mut line) = out_rx.recv().await {
            line.push(b'\n');
            if w.write_all(&line).await.is_err() || w.flush().await.is_err() {
                break;
            }
        }
        let _ = w.shutdown().await;
    });
    let state = Arc::new(Mutex::new(State::default()));
    tokio::spawn(async move {
        let mut reader = BufReader::new(bridge_r);
        let mut posts = tokio::task::JoinSet::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut reader)
                .take(line_cap as u64 + 1)
                .read_until(b'\n', &mut line)
                .await;
            match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if line.len() > line_cap {
                // Skip the rest of an over-long line; it is never sent.
                let mut sink = Vec::new();
                let _ = reader.read_until(b'\n', &mut sink).await;
                let _ = out_tx.send(SETTLED_MARKER.to_vec());
                continue;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                let _ = out_tx.send(SETTLED_MARKER.to_vec());
                continue;
            }
            let body = line.clone();
            let client = client.clone();
            let state = state.clone();
            let out = out_tx.clone();
            posts.spawn(async move {
                post(&client, &state, body, deadline, &out).await;
                // Everything this POST produced is queued ahead of the marker.
                let _ = out.send(SETTLED_MARKER.to_vec());
            });
        }
        while posts.join_next().await.is_some() {}
        let session = lock(&state).session.clone();
        if let Some(id) = session {
            let until = tokio::time::Instant::now() + deadline;
            let _ = client
                .send(HttpRequest::delete().header("mcp-session-id", &id), until)
                .await;
        }
        drop(out_tx);
        let _ = writer.await;
    });
    Ok(Peer::bridged(harness_r, harness_w, line_cap).named(format!("(Streamable HTTP) {url}")))
}

/// The JSON-RPC messages of an answer, read leniently: the transport checks judge the
/// framing (`mcp.http.*`), so the bridge still delivers a JSON body under the wrong
/// Content-Type and the events of an SSE stream whose last event is unterminated.
pub(crate) fn lenient_messages(
    exchange: &crate::transport::http::HttpExchange,
) -> Option<Vec<Value>> {
    if let Ok(m) = exchange.messages() {
        return Some(m);
    }
    if let Ok(v) = serde_json::from_slice::<Value>(&exchange.body) {
        return Some(vec![v]);
    }
    let mut body = exchange.body.clone();
    body.extend_from_slice(b"\n\n");
    let events = crate::transport::http::parse_sse(&body).ok()?;
    Some(
        events
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
            .collect(),
    )
}

/// Headers an MCP client sends with `body`, given what the session learned.
fn headers_for(state: &State, body: &[u8]) -> Vec<(&'static str, String)> {
    let mut h = Vec::new();
    if let Some(s) = &state.session {
        h.push(("mcp-session-id", s.clone()));
    }
    let message: Option<Value> = serde_json::from_slice(body).ok();
    let meta_version = message
        .as_ref()
        .and_then(|m| m.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion"))
        .and_then(Value::as_str);
    if let Some(v) = meta_version.or(state.modern.as_deref()) {
        h.push(("mcp-protocol-version", v.to_owned()));
        if let Some(method) = message
            .as_ref()
            .and_then(|m| m.get("method"))
            .and_then(Value::as_str)
        {
            h.push(("mcp-method", method.to_owned()));
        }
        if let Some(name) = message.as_ref().and_then(|m| {
            m.pointer("/params/name")
                .or_else(|| m.pointer("/params/uri"))
                .and_then(Value::as_str)
        }) {
            h.push(("mcp-name", name.to_owned()));
        }
    } else if let Some(v) = &state.version {
        if v.as_str() >= "2025-06-18" {
            h.push(("mcp-protocol-version", v.clone()));
        }
    }
    h
}

async fn post(
    client: &HttpClient,
    state: &Mutex<State>,
    body: Vec<u8>,
    deadline: Duration,
    out: &mpsc::UnboundedSender<Vec<u8>>,
) {
    let request_was_batch = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    let headers = {
        let mut st = lock(state);
        let meta: Option<String> = serde_json::from_slice::<Value>(&body).ok().and_then(|m| {
            m.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        if meta.is_some() {
            st.modern = meta;
        }
        headers_for(&st, &body)
    };
    let mut request = HttpRequest::new(reqwest::Method::POST)
        .header("content-type", "application/json")
        .header("accept", crate::transport::http::ACCEPT_POST)
        .with_body(body);
    for (k, v) in &headers {
        request = request.header(k, v);
    }
    let name = post_name(request.body.as_deref().unwrap_or_default());
    let sent: Vec<String> = headers
        .iter()
        .filter(|(k, _)| *k != "mcp-session-id")
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let name = if sent.is_empty() {
        name
    } else {
        format!("{name} ({})", sent.join(", "))
    };
    let notification = is_notification(request.body.as_deref().unwrap_or_default());
    let until = tokio::time::Instant::now() + deadline;
    let (exchange, cut) = match client.send(request, until).await {
        Ok(x) => (x, false),
        Err(crate::transport::http::HttpError::Timeout {
            partial: Some(partial),
        }) => (*partial, true),
        Err(crate::transport::http::HttpError::Timeout { partial: None }) => {
            note(
                out,
                &format!("{name} → no status line within {} ms", deadline.as_millis()),
            );
            return;
        }
        Err(e) => {
            note(out, &format!("{name} → no answer: {e}"));
            return;
        }
    };
    if let Some(id) = exchange.header("mcp-session-id") {
        lock(state).session = Some(id.to_owned());
    }
    let cut = match (cut, exchange.cap_note()) {
        (true, _) => " · cut at the deadline".to_string(),
        // A body cut at the body cap: said in the note, which a check's verdict then quotes
        // (`crate::engine::check::Ctx::unread_note`), instead of only "no response".
        (false, Some(capped)) => format!(" · {capped}"),
        (false, None) => String::new(),
    };
    let Some(mut messages) = lenient_messages(&exchange).filter(|m| !m.is_empty()) else {
        let summary = exchange.summary(Some(NOTE_BODY_BYTES));
        let how = if exchange.status >= 400 && !notification {
            BARE_REFUSAL
        } else {
            " → "
        };
        note(out, &format!("{name}{how}{summary}{cut}"));
        return;
    };
    let refused = notification && exchange.status >= 400;
    if refused {
        let summary = exchange.summary(Some(NOTE_BODY_BYTES));
        note(
            out,
            &format!(
                "{name} → refused by HTTP status (the transport's way; an id-less error body is part of the refusal, not a reply): {summary}{cut}"
            ),
        );
        messages.retain(|m| !idless_error(m));
    } else {
        note(out, &format!("{name} → {}{cut}", exchange.summary(None)));
    }
    // In a 2025-03-26 session a batch answered over SSE may come as one event per response
    // (2025-03-26 `basic/transports`: "These responses MAY be batched"); over stdio the same
    // answer is one array, so the bridge gathers the responses into one line. Later
    // revisions have no batches, and the events stay apart (a batch served one by one).
    let batch_revision = lock(state).version.as_deref() == Some("2025-03-26");
    if request_was_batch
        && batch_revision
        && exchange.content_type().as_deref() == Some("text/event-stream")
    {
        let (responses, others): (Vec<Value>, Vec<Value>) = messages
            .into_iter()
            .partition(|m| m.is_object() && m.get("method").is_none());
        messages = others;
        if !responses.is_empty() {
            messages.push(Value::Array(responses));
        }
    }
    for m in messages {
        if let Some(v) = m.pointer("/result/protocolVersion").and_then(Value::as_str) {
            lock(state).version = Some(v.to_owned());
        }
        if let Ok(bytes) = serde_json::to_vec(&m) {
            let _ = out.send(bytes);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::transport::peer::Recv;
    use crate::transport::wire::Dir;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    /// Serves every connection with the same raw `response`, reading one request head and
    /// body first; stops when the test ends.
    pub(crate) async fn serve(response: &'static str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    let mut got = Vec::new();
                    // Read until the head ends and the declared body has come.
                    loop {
                        let n = match tokio::io::AsyncReadExt::read(&mut sock, &mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        got.extend_from_slice(&buf[..n]);
                        let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
                        if let Some(end) = text.find("\r\n\r\n") {
                            let len = text
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            if got.len() >= end + 4 + len {
                                break;
                            }
                        }
                    }
                    let _ = sock.write_all(response.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        format!("http://{addr}/mcp")
    }

    fn notes(p: &Peer) -> Vec<String> {
        p.events()
            .iter()
            .filter(|e| e.dir == Dir::Note)
            .map(|e| e.excerpt(2000))
            .collect()
    }

    pub(crate) async fn one_line(p: &mut Peer, line: &str) -> Recv {
        p.send_raw(format!("{line}\n").as_bytes()).await.unwrap();
        p.recv(std::time::Instant::now() + Duration::from_secs(10))
            .await
    }

    #[tokio::test]
    async fn an_answer_without_json_rpc_is_noted_with_its_status_line_headers_and_body() {
        let url = serve(
            "HTTP/1.1 415 Unsupported Media Type\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\nunsupported content type",
        )
        .await;
        let mut p = peer(&url, 1 << 20, Duration::from_secs(10)).unwrap();
        let got = one_line(&mut p, "garbage").await;
        assert!(matches!(got, Recv::Timeout), "no JSON-RPC line may come");
        let n = notes(&p);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].contains("HTTP 415 Unsupported Media Type"), "{n:?}");
        assert!(n[0].contains("content-type: text/plain"), "{n:?}");
        assert!(n[0].contains("content-length: 24"), "{n:?}");
        assert!(
            n[0].contains("body (24 bytes): unsupported content type"),
            "{n:?}"
        );
        assert!(p.is_bridged());
        assert!(p.last_note().is_some_and(|n| n.contains("HTTP 415")));
    }

    #[tokio::test]
    async fn a_notification_refused_with_an_http_error_status_is_not_answered() {
        let body = r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"no"}}"#;
        let response: &'static str = Box::leak(
            format!(
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_boxed_str(),
        );
        let url = serve(response).await;
        let mut p = peer(&url, 1 << 20, Duration::from_secs(10)).unwrap();
        let got = one_line(&mut p, r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).await;
        assert!(
            matches!(got, Recv::Timeout),
            "the id-less error of a refusal is not a reply"
        );
        let n = notes(&p);
        assert!(
            n.iter().any(|l| l.contains("refused by HTTP status")
                && l.contains("HTTP 400 Bad Request")
                && l.contains("-32601")),
            "{n:?}"
        );
        // The same body to a request is its answer.
        let got = one_line(&mut p, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
        assert!(
            matches!(got, Recv::Line(_)),
            "a request's error body is delivered"
        );
    }

    #[tokio::test]
    async fn a_notification_answered_200_with_an_error_body_is_an_answer() {
        let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}"#;
        let response: &'static str = Box::leak(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_boxed_str(),
        );
        let url = serve(response).await;
        let mut p = peer(&url, 1 << 20, Duration::from_secs(10)).unwrap();
        let got = one_line(&mut p, r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).await;
        match got {
            Recv::Line(l) => assert_eq!(
                serde_json::from_slice::<Value>(&l.bytes).unwrap(),
                serde_json::from_str::<Value>(body).unwrap()
            ),
            _ => panic!("a 200 with a JSON-RPC body answers the notification"),
        }
    }

    /// Answers every connection with an SSE event that never ends: headers, then `data: `
    /// and `x` for as long as the client reads.
    pub(crate) async fn serve_endless_event() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    let _ = tokio::io::AsyncReadExt::read(&mut sock, &mut buf).await;
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ";
                    if sock.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    let chunk = vec![b'x'; 64 * 1024];
                    while sock.write_all(&chunk).await.is_ok() {}
                });
            }
        });
        format!("http://{addr}/mcp")
    }
}
