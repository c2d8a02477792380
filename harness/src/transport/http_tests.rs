//! Unit tests of `http`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use proptest::prelude::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

fn ev(event: Option<&str>, data: &str, id: Option<&str>, retry: Option<u64>) -> SseEvent {
    SseEvent {
        event: event.map(str::to_string),
        data: data.to_string(),
        id: id.map(str::to_string),
        retry,
    }
}

fn data(d: &str) -> SseEvent {
    ev(None, d, None, None)
}

#[test]
fn sse_table() {
    let cases: Vec<(&str, &[u8], Vec<SseEvent>)> = vec![
        ("empty body", b"", vec![]),
        ("lf", b"data: a\n\ndata: b\n\n", vec![data("a"), data("b")]),
        (
            "crlf",
            b"data: a\r\n\r\ndata: b\r\n\r\n",
            vec![data("a"), data("b")],
        ),
        ("cr", b"data: a\r\rdata: b\r\r", vec![data("a"), data("b")]),
        (
            "mixed endings",
            b"data: a\r\ndata: b\n\r",
            vec![data("a\nb")],
        ),
        (
            "comments",
            b": hi\ndata: a\n: mid\n\n: tail\n",
            vec![data("a")],
        ),
        (
            "multi-line data",
            b"data: a\ndata: b\ndata\n\n",
            vec![data("a\nb\n")],
        ),
        ("no space", b"data:x\n\n", vec![data("x")]),
        ("one space removed", b"data:  x \n\n", vec![data(" x ")]),
        (
            "colon in value",
            b"data: {\"a\":1}\n\n",
            vec![data("{\"a\":1}")],
        ),
        ("bom", b"\xEF\xBB\xBFdata: a\n\n", vec![data("a")]),
        (
            "second bom is a field name",
            b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n",
            vec![],
        ),
        (
            "fields",
            b"event: message\nid: 7\nretry: 1500\ndata: a\n\n",
            vec![ev(Some("message"), "a", Some("7"), Some(1500))],
        ),
        ("empty event name", b"event:\ndata: a\n\n", vec![data("a")]),
        (
            "bad retry",
            b"retry: 15x\nretry:\ndata: a\n\n",
            vec![data("a")],
        ),
        (
            "id with nul ignored",
            b"id: a\0b\ndata: a\n\n",
            vec![data("a")],
        ),
        (
            "empty id",
            b"id\ndata: a\n\n",
            vec![ev(None, "a", Some(""), None)],
        ),
        (
            "id not carried over",
            b"id: 1\ndata: a\n\ndata: b\n\n",
            vec![ev(None, "a", Some("1"), None), data("b")],
        ),
        ("no data not dispatched", b"id: 1\nevent: x\n\n", vec![]),
        (
            "priming event with empty data",
            b"id: 1\ndata:\n\n",
            vec![ev(None, "", Some("1"), None)],
        ),
        ("unknown field", b"foo: bar\ndata: a\n\n", vec![data("a")]),
        ("field names are case-sensitive", b"Data: a\n\n", vec![]),
        (
            "extra blank lines",
            b"\n\n\ndata: a\n\n\n\n",
            vec![data("a")],
        ),
        (
            "trailing comment",
            b"data: a\n\n: keepalive",
            vec![data("a")],
        ),
    ];
    for (name, body, want) in cases {
        assert_eq!(parse_sse(body), Ok(want), "case {name}");
    }
}

#[test]
fn sse_unterminated() {
    for body in [
        &b"data: a\n\ndata: b\n"[..],
        b"data: a\n\ndata: b",
        b"data: a\r\n\r\ndata: b\r\n",
        b"data: a\n\nid: 3\n",
    ] {
        assert_eq!(
            parse_sse(body),
            Err(BodyError::UnterminatedEvent {
                complete: vec![data("a")]
            }),
            "{}",
            String::from_utf8_lossy(body)
        );
    }
    let msg = parse_sse(b"data: x").unwrap_err().to_string();
    assert!(msg.contains("blank line"), "{msg}");
}

#[test]
fn sse_not_utf8() {
    assert_eq!(
        parse_sse(b"data: a\xff\n\n"),
        Err(BodyError::NotUtf8 { offset: 7 })
    );
}

fn arb_event() -> impl Strategy<Value = SseEvent> {
    (
        proptest::option::of("[a-z]{1,8}"),
        proptest::collection::vec("[^\r\n]{0,12}", 1..4),
        proptest::option::of("[a-zA-Z0-9 ]{0,6}"),
        proptest::option::of(0u64..100_000),
    )
        .prop_map(|(event, lines, id, retry)| SseEvent {
            event,
            data: lines.join("\n"),
            id,
            retry,
        })
}

fn serialize(events: &[SseEvent], eol: &str) -> String {
    let mut s = String::new();
    for e in events {
        if let Some(event) = &e.event {
            s.push_str(&format!("event: {event}{eol}"));
        }
        if let Some(id) = &e.id {
            s.push_str(&format!("id: {id}{eol}"));
        }
        if let Some(retry) = e.retry {
            s.push_str(&format!(": comment{eol}retry: {retry}{eol}"));
        }
        for line in e.data.split('\n') {
            s.push_str(&format!("data: {line}{eol}"));
        }
        s.push_str(eol);
    }
    s
}

proptest! {
    #[test]
    fn sse_round_trip(
        events in proptest::collection::vec(arb_event(), 0..5),
        eol in prop::sample::select(vec!["\n", "\r\n", "\r"]),
    ) {
        let text = serialize(&events, eol);
        prop_assert_eq!(parse_sse(text.as_bytes()), Ok(events));
    }

    #[test]
    fn sse_never_panics(body in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_sse(&body);
    }
}

fn exchange(content_type: Option<&str>, body: &[u8]) -> HttpExchange {
    HttpExchange {
        status: 200,
        headers: content_type
            .map(|t| vec![("content-type".to_string(), t.to_string())])
            .unwrap_or_default(),
        body: body.to_vec(),
        truncated: false,
        received: body.len() as u64,
        elapsed: Duration::ZERO,
    }
}

#[test]
fn messages_by_content_type() {
    let j = exchange(Some("Application/JSON; charset=utf-8"), br#"{"id":1}"#);
    assert_eq!(j.content_type().as_deref(), Some("application/json"));
    assert_eq!(j.messages(), Ok(vec![json!({"id": 1})]));
    let batch = exchange(Some("application/json"), br#"[{"id":1}]"#);
    assert_eq!(batch.messages(), Ok(vec![json!([{"id": 1}])]));
    let sse = exchange(
        Some("text/event-stream"),
        b"id: p\ndata:\n\ndata: {\"id\":1}\n\ndata: {\"id\":\ndata: 2}\n\n",
    );
    assert_eq!(sse.messages(), Ok(vec![json!({"id": 1}), json!({"id": 2})]));
    let bad = exchange(Some("text/event-stream"), b"data: 1\n\ndata: nope\n\n");
    match bad.messages() {
        Err(
            e @ BodyError::NotJson {
                event_index: Some(1),
                ..
            },
        ) => assert!(e.to_string().contains("SSE event #1"), "{e}"),
        other => panic!("{other:?}"),
    }
    let bad_json = exchange(Some("application/json"), b"{");
    assert!(matches!(
        bad_json.messages(),
        Err(BodyError::NotJson {
            event_index: None,
            ..
        })
    ));
    assert_eq!(
        exchange(Some("text/html"), b"<p>").messages(),
        Err(BodyError::UnexpectedContentType(Some("text/html".into())))
    );
    assert_eq!(
        exchange(None, b"x").messages(),
        Err(BodyError::UnexpectedContentType(None))
    );
    assert_eq!(exchange(None, b"").messages(), Ok(vec![]));
    assert_eq!(exchange(Some(" ; x=y"), b"").content_type(), None);
}

#[test]
fn request_builders_and_redaction() {
    let r = HttpRequest::post_json(&json!({"jsonrpc": "2.0"}))
        .header("authorization", "Bearer first")
        .header("Authorization", "Bearer s3cret")
        .header("MCP-Protocol-Version", "2025-11-25")
        .add_header("x-dup", "1")
        .add_header("x-dup", "2")
        .without_header("content-type");
    let names: Vec<&str> = r.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "Accept",
            "Authorization",
            "MCP-Protocol-Version",
            "x-dup",
            "x-dup"
        ]
    );
    let debug = format!("{r:?}");
    assert!(!debug.contains("s3cret"), "{debug}");
    assert!(debug.contains("Authorization: [REDACTED]"), "{debug}");
    assert!(
        debug.contains("MCP-Protocol-Version: \"2025-11-25\""),
        "{debug}"
    );
    assert!(debug.contains("17 bytes"), "{debug}");
}

#[test]
fn bad_urls() {
    for (url, why) in [
        ("https://127.0.0.1/mcp", "scheme `https`"),
        ("ftp://x/", "scheme `ftp`"),
        ("not a url", "is not a URL"),
        ("http://user:pw@127.0.0.1/", "user name or password"),
        ("unix:/tmp/sock", "scheme `unix`"),
    ] {
        match HttpClient::new(url) {
            Err(HttpError::BadUrl(m)) => assert!(m.contains(why), "{url}: {m}"),
            other => panic!("{url}: {other:?}"),
        }
    }
    let c = HttpClient::new("http://127.0.0.1:9").unwrap();
    assert_eq!(c.url(), "http://127.0.0.1:9/");
}

// ---- a hand-written HTTP/1.1 server on loopback ----

enum After {
    Close,
    Stall,
}

/// Reads one request (headers and a Content-Length body); returns its bytes.
async fn read_request(sock: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return buf;
            }
        }
        let n = sock.read(&mut chunk).await.unwrap();
        if n == 0 {
            return buf;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Serves one connection: reads a request, writes `response`, then closes or stalls.
/// Returns the URL and a handle yielding the request's bytes.
async fn serve(response: Vec<u8>, after: After) -> (String, JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let request = read_request(&mut sock).await;
        let _ = sock.write_all(&response).await;
        match after {
            After::Close => {
                let _ = sock.shutdown().await;
            }
            After::Stall => tokio::time::sleep(Duration::from_secs(30)).await,
        }
        request
    });
    (format!("http://{addr}/mcp"), handle)
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

#[tokio::test]
async fn json_response() {
    let body = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: abc\r\n\
             X-Multi: 1\r\nX-Multi: 2\r\nX-Bytes: caf@\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    // A header value with a byte that is not UTF-8 (Latin-1 `é`).
    let response: Vec<u8> = response
        .into_bytes()
        .into_iter()
        .map(|b| if b == b'@' { 0xe9 } else { b })
        .collect();
    let (url, server) = serve(response, After::Close).await;
    let client = HttpClient::new(&url).unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let (ex, found) = client
        .call(&request, &[("Authorization", "Bearer t")], soon())
        .await
        .unwrap();
    assert_eq!(ex.status, 200);
    assert_eq!(ex.header("MCP-SESSION-ID"), Some("abc"));
    assert!(ex.headers.iter().all(|(n, _)| *n == n.to_ascii_lowercase()));
    let multi: Vec<&str> = ex
        .headers
        .iter()
        .filter(|(n, _)| n == "x-multi")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(multi, ["1", "2"]);
    assert_eq!(ex.header("x-bytes"), Some("caf\u{FFFD}"));
    assert_eq!(ex.content_type().as_deref(), Some("application/json"));
    assert!(!ex.truncated);
    assert_eq!(found, Some(json!({"jsonrpc":"2.0","id":1,"result":{}})));

    let sent = String::from_utf8(server.await.unwrap()).unwrap();
    let lower = sent.to_ascii_lowercase();
    assert!(sent.starts_with("POST /mcp HTTP/1.1\r\n"), "{sent}");
    assert!(
        lower.contains("\r\ncontent-type: application/json\r\n"),
        "{sent}"
    );
    assert!(
        lower.contains("\r\naccept: application/json, text/event-stream\r\n"),
        "{sent}"
    );
    assert!(lower.contains("\r\nauthorization: bearer t\r\n"), "{sent}");
    assert!(sent.ends_with(&request.to_string()), "{sent}");
}

#[tokio::test]
async fn sse_response_chunked() {
    let events = "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n\
                      id: 9\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"ok\":true}}\r\n\r\n";
    let (first, second) = events.split_at(40);
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n\
             {:x}\r\n{first}\r\n{:x}\r\n{second}\r\n0\r\n\r\n",
        first.len(),
        second.len()
    );
    let (url, _server) = serve(response.into_bytes(), After::Close).await;
    let client = HttpClient::new(&url).unwrap();
    let (ex, found) = client
        .call(&json!({"jsonrpc":"2.0","id":"a","method":"x"}), &[], soon())
        .await
        .unwrap();
    assert_eq!(ex.content_type().as_deref(), Some("text/event-stream"));
    assert_eq!(ex.body, events.as_bytes());
    assert_eq!(ex.messages().unwrap().len(), 2);
    assert_eq!(ex.sse_events().unwrap()[1].id.as_deref(), Some("9"));
    assert_eq!(
        found,
        Some(json!({"jsonrpc":"2.0","id":"a","result":{"ok":true}}))
    );
}

#[tokio::test]
async fn sse_until_close_and_get() {
    let response =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n\
                         data: {\"id\":1}\n\n"
            .to_vec();
    let (url, server) = serve(response, After::Close).await;
    let client = HttpClient::new(&url).unwrap();
    let ex = client.send(HttpRequest::get_sse(), soon()).await.unwrap();
    assert_eq!(ex.messages(), Ok(vec![json!({"id": 1})]));
    let sent = String::from_utf8(server.await.unwrap())
        .unwrap()
        .to_ascii_lowercase();
    assert!(sent.starts_with("get /mcp http/1.1\r\n"), "{sent}");
    assert!(sent.contains("\r\naccept: text/event-stream\r\n"), "{sent}");
}

#[tokio::test]
async fn accepted_empty() {
    let (url, _server) = serve(
        b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec(),
        After::Close,
    )
    .await;
    let client = HttpClient::new(&url).unwrap();
    let (ex, found) = client
        .call(
            &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            &[],
            soon(),
        )
        .await
        .unwrap();
    assert_eq!(ex.status, 202);
    assert!(ex.body.is_empty());
    assert_eq!(ex.content_type(), None);
    assert_eq!(ex.messages(), Ok(vec![]));
    assert_eq!(found, None);
}

#[tokio::test]
async fn redirect_not_followed() {
    let (url, _server) = serve(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:9/x\r\nContent-Length: 0\r\n\r\n"
                .to_vec(),
            After::Close,
        )
        .await;
    let client = HttpClient::new(&url).unwrap();
    let ex = client.send(HttpRequest::delete(), soon()).await.unwrap();
    assert_eq!(ex.status, 307);
    assert_eq!(ex.header("location"), Some("http://127.0.0.1:9/x"));
}

#[tokio::test]
async fn body_over_cap_is_truncated() {
    let mut response =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            .to_vec();
    response.extend(std::iter::repeat_n(b'x', 100_000));
    let (url, _server) = serve(response, After::Close).await;
    let client = HttpClient::new(&url).unwrap().with_body_cap(1024);
    let ex = client
        .send(HttpRequest::post_json(&json!({})), soon())
        .await
        .unwrap();
    assert!(ex.truncated);
    assert_eq!(ex.body.len(), 1024);
    assert!(ex.received > 1024, "{}", ex.received);
    // The message says it stopped at the cap, with the cap and the bytes seen.
    let note = ex.cap_note().unwrap_or_default();
    assert!(note.starts_with(BODY_CAPPED), "{note}");
    assert!(
        note.contains("size cap of 1024 bytes")
            && note.contains(&format!("after {} bytes had come", ex.received)),
        "{note}"
    );
    assert!(ex.summary(Some(100)).contains("cut at the body cap"));
}

#[tokio::test]
async fn body_at_cap_is_not_truncated() {
    let (url, _server) = serve(
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd".to_vec(),
        After::Close,
    )
    .await;
    let client = HttpClient::new(&url).unwrap().with_body_cap(4);
    let ex = client
        .send(HttpRequest::new(reqwest::Method::GET), soon())
        .await
        .unwrap();
    assert!(!ex.truncated);
    assert_eq!(ex.body, b"abcd");
}

#[tokio::test]
async fn stalled_body_times_out_with_partial() {
    let (url, _server) = serve(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {\"id\":1}\n\n".to_vec(),
        After::Stall,
    )
    .await;
    let client = HttpClient::new(&url).unwrap();
    let deadline = Instant::now() + Duration::from_millis(300);
    match client.send(HttpRequest::get_sse(), deadline).await {
        Err(e @ HttpError::Timeout { partial: Some(_) }) => {
            assert!(e.to_string().contains("status 200"), "{e}");
            let HttpError::Timeout { partial: Some(p) } = e else {
                unreachable!()
            };
            assert_eq!(p.status, 200);
            assert_eq!(p.messages(), Ok(vec![json!({"id": 1})]));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn stalled_headers_time_out() {
    let (url, _server) = serve(Vec::new(), After::Stall).await;
    let client = HttpClient::new(&url).unwrap();
    let deadline = Instant::now() + Duration::from_millis(300);
    let r = client
        .send(HttpRequest::post_json(&json!({})), deadline)
        .await;
    assert!(
        matches!(r, Err(HttpError::Timeout { partial: None })),
        "{r:?}"
    );
}

#[tokio::test]
async fn closed_connection_is_an_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        drop(sock);
    });
    let client = HttpClient::new(&format!("http://{addr}/")).unwrap();
    let r = client
        .send(HttpRequest::post_json(&json!({})), soon())
        .await;
    assert!(
        matches!(r, Err(HttpError::Io(_) | HttpError::Connect(_))),
        "{r:?}"
    );
}

#[tokio::test]
async fn garbage_response_is_an_error() {
    let (url, _server) = serve(b"SSH-2.0-OpenSSH\r\n\r\n".to_vec(), After::Close).await;
    let client = HttpClient::new(&url).unwrap();
    let r = client.send(HttpRequest::get_sse(), soon()).await;
    assert!(matches!(r, Err(HttpError::Io(_))), "{r:?}");
}

#[tokio::test]
async fn refused_connection() {
    // A bound socket that does not listen: connecting is refused, and no other test can
    // take the port meanwhile.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let client = HttpClient::new(&format!("http://{addr}/")).unwrap();
    match client.send(HttpRequest::get_sse(), soon()).await {
        Err(e @ HttpError::Connect(_)) => {
            assert!(e.to_string().contains("could not connect"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn bad_header_value_is_not_echoed() {
    let client = HttpClient::new("http://127.0.0.1:9/").unwrap();
    let request = HttpRequest::get_sse().header("Authorization", "Bearer s3cret\r\nX: y");
    match client.send(request, soon()).await {
        Err(e @ HttpError::BadHeader(_)) => {
            let text = format!("{e} {e:?}");
            assert!(!text.contains("s3cret"), "{text}");
            assert!(text.contains("Authorization"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    let request = HttpRequest::get_sse().header("bad name", "v");
    assert!(matches!(
        client.send(request, soon()).await,
        Err(HttpError::BadHeader(_))
    ));
}
