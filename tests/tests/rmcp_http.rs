//! A real MCP client written by others, the `rmcp` crate's Streamable HTTP client (reqwest),
//! drives `parity reference facade` over HTTP in both catalogue forms: the `initialize`
//! handshake and session, `tools/list`, the meta tools (`search_capabilities`,
//! `execute_capability`) and the direct form's tools, with and without an
//! `Authorization: Bearer` token minted by the admin hook (session-bound `echo_channel` is
//! visible and callable only with one), an unknown tool as a JSON-RPC `-32602` error, and a
//! clean shutdown in which rmcp's `DELETE` of the session is answered `204`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ErrorCode, ProtocolVersion,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ServiceError, ServiceExt};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The reference dispatcher's tools, visible to every caller.
const SIX: [&str; 6] = [
    "read_file",
    "write_file",
    "list_dir",
    "exec",
    "status",
    "retry",
];

type Client = RunningService<RoleClient, ClientConfig>;

/// Upper bound for any one step; never a timing assertion.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within 60 s"))
}

/// Runs blocking work (pipes, raw sockets) off the runtime, within the step bound.
async fn blocking<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    within(what, tokio::task::spawn_blocking(f))
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// A running `parity reference facade --admin`, stopped (stdin closed, waited for, killed
/// as a fallback) on drop. Its stderr is drained into a buffer for failure messages.
struct Facade {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Facade {
    async fn start(extra: &[&str]) -> Facade {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        blocking("starting the facade", move || {
            let mut child = Command::new(common::parity())
                .args(["reference", "facade", "--admin"])
                .args(&extra)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn parity reference facade");
            let stderr = Arc::new(Mutex::new(String::new()));
            let mut err = child.stderr.take().unwrap();
            let sink = stderr.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let url = line.trim().to_owned();
            let facade = Facade { child, url, stderr };
            assert!(
                facade.url.starts_with("http://127.0.0.1:") && facade.url.ends_with("/mcp"),
                "first stdout line {:?}; stderr: {}",
                facade.url,
                facade.stderr()
            );
            facade
        })
        .await
    }

    fn addr(&self) -> String {
        let rest = self.url.strip_prefix("http://").unwrap();
        rest.split('/').next().unwrap().to_owned()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// A token for `channel` from the admin hook.
    async fn mint(&self, channel: &str) -> String {
        let addr = self.addr();
        let channel = channel.to_owned();
        blocking("admin mint", move || {
            let body = json!({ "channel": channel }).to_string();
            let req = format!(
                "POST /admin/mint HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let (status, _, body) = raw(&addr, req.as_bytes());
            assert_eq!(status, 200, "{body}");
            let v: Value = serde_json::from_str(&body).unwrap();
            v["token"].as_str().unwrap().to_owned()
        })
        .await
    }

    /// An rmcp client connected over Streamable HTTP, with a bearer token when given.
    async fn client(&self, token: Option<&str>) -> Client {
        client_at(&self.url, token, &self.stderr()).await
    }
}

impl Drop for Facade {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        for _ in 0..250 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// rmcp's `initialize` handshake over Streamable HTTP at `url`.
async fn client_at(url: &str, token: Option<&str>, stderr: &str) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(t) = token {
        // rmcp adds the `Bearer ` prefix itself.
        config = config.auth_header(t);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = within("initialize", ClientConfig::default().serve(transport))
        .await
        .unwrap_or_else(|e| panic!("rmcp initialize over Streamable HTTP failed: {e}\n{stderr}"));
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("parity-reference-facade"),
        "{info:?}"
    );
    // rmcp asks for its latest revision (2026-07-28, which has no `initialize`); the facade
    // answers with its latest legacy one and rmcp accepts it.
    assert_eq!(
        info.protocol_version,
        ProtocolVersion::V_2025_11_25,
        "{info:?}"
    );
    assert!(info.capabilities.tools.is_some(), "{info:?}");
    client
}

/// One raw HTTP/1.1 exchange: status code, head and body (the request asks to close).
fn raw(addr: &str, request: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().expect("arguments object")
}

async fn tool_names(client: &Client) -> BTreeSet<String> {
    let tools = within("tools/list", client.list_all_tools())
        .await
        .unwrap_or_else(|e| panic!("tools/list failed: {e}"));
    let names: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names.len(), tools.len(), "no tool listed twice: {tools:?}");
    names
}

async fn call(
    client: &Client,
    name: &str,
    arguments: Value,
) -> Result<CallToolResult, ServiceError> {
    within(
        &format!("tools/call {name}"),
        client
            .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args(arguments))),
    )
    .await
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

/// `search_capabilities {}`: the capability names by provider, after checking the shape.
async fn search(client: &Client) -> Vec<(String, String)> {
    let result = call(client, "search_capabilities", json!({}))
        .await
        .unwrap_or_else(|e| panic!("search_capabilities failed: {e}"));
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(structured["unavailable"], json!([]), "{structured}");
    let caps = structured["capabilities"]
        .as_array()
        .unwrap_or_else(|| panic!("capabilities array: {structured}"));
    caps.iter()
        .map(|c| {
            for key in [
                "name",
                "description",
                "input_schema",
                "provider",
                "risk",
                "availability",
            ] {
                assert!(c.get(key).is_some(), "capability without {key}: {c}");
            }
            (
                c["name"].as_str().unwrap().to_owned(),
                c["provider"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meta_form_without_a_token() {
    let facade = Facade::start(&[]).await;
    let client = facade.client(None).await;

    assert_eq!(
        tool_names(&client).await,
        set(&["search_capabilities", "execute_capability"])
    );

    let caps = search(&client).await;
    let names: BTreeSet<String> = caps.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, set(&SIX), "anonymous view: {caps:?}");
    for (name, provider) in &caps {
        assert_eq!(provider, "parity", "{name}");
    }

    let exec = call(
        &client,
        "execute_capability",
        json!({"name": "echo_channel", "arguments": {"x": 7}}),
    )
    .await
    .unwrap_or_else(|e| panic!("execute_capability failed: {e}"));
    assert_eq!(exec.is_error, Some(true), "{exec:?}");
    assert!(text_of(&exec).contains("unknown capability"), "{exec:?}");

    within("shutdown", client.cancel()).await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meta_form_with_a_token() {
    let facade = Facade::start(&[]).await;
    let token = facade.mint("rmcp-meta").await;
    let client = facade.client(Some(&token)).await;

    assert_eq!(
        tool_names(&client).await,
        set(&["search_capabilities", "execute_capability"])
    );

    let caps = search(&client).await;
    let names: BTreeSet<String> = caps.iter().map(|(n, _)| n.clone()).collect();
    let mut expected = set(&SIX);
    expected.insert("echo_channel".into());
    assert_eq!(names, expected, "session view: {caps:?}");
    assert!(
        caps.contains(&("echo_channel".into(), "echo".into())),
        "{caps:?}"
    );

    let exec = call(
        &client,
        "execute_capability",
        json!({"name": "echo_channel", "arguments": {"x": 7}}),
    )
    .await
    .unwrap_or_else(|e| panic!("execute_capability failed: {e}"));
    assert_eq!(exec.is_error, Some(false), "{exec:?}");
    assert_eq!(
        exec.structured_content,
        Some(json!({"channel": "rmcp-meta", "x": 7})),
        "{exec:?}"
    );

    within("shutdown", client.cancel()).await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_form_with_and_without_a_token() {
    let facade = Facade::start(&["--catalogue", "direct"]).await;

    // Anonymous: the six, `read_file` works, `echo_channel` is an unknown tool.
    let anonymous = facade.client(None).await;
    assert_eq!(tool_names(&anonymous).await, set(&SIX));
    let read = call(&anonymous, "read_file", json!({"path": "README.md"}))
        .await
        .unwrap_or_else(|e| panic!("read_file failed: {e}"));
    assert_eq!(read.is_error, Some(false), "{read:?}");
    match call(&anonymous, "echo_channel", json!({"x": 7})).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
            assert!(e.message.contains("Unknown tool: echo_channel"), "{e:?}");
        }
        other => panic!("anonymous echo_channel must be a -32602 error, got {other:?}"),
    }
    within("shutdown", anonymous.cancel())
        .await
        .expect("shutdown");

    // With a token: `echo_channel` is listed and answers with the channel.
    let token = facade.mint("rmcp-direct").await;
    let session = facade.client(Some(&token)).await;
    let mut expected = set(&SIX);
    expected.insert("echo_channel".into());
    assert_eq!(tool_names(&session).await, expected);
    let echo = call(&session, "echo_channel", json!({"x": 7}))
        .await
        .unwrap_or_else(|e| panic!("echo_channel failed: {e}"));
    assert_eq!(echo.is_error, Some(false), "{echo:?}");
    assert_eq!(
        echo.structured_content,
        Some(json!({"channel": "rmcp-direct", "x": 7})),
        "{echo:?}"
    );
    within("shutdown", session.cancel())
        .await
        .expect("shutdown");
}

/// Bytes one proxied connection carried each way.
#[derive(Default)]
struct Conn {
    up: Vec<u8>,
    down: Vec<u8>,
}

/// A loopback TCP relay in front of `upstream` that records every connection's bytes, so the
/// test sees rmcp's `DELETE` and the facade's answer. Returns its `/mcp` URL.
async fn recording_relay(upstream: String) -> (String, Arc<Mutex<Vec<Arc<Mutex<Conn>>>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let conns: Arc<Mutex<Vec<Arc<Mutex<Conn>>>>> = Arc::default();
    let all = conns.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let Ok(outbound) = tokio::net::TcpStream::connect(&upstream).await else {
                continue;
            };
            let conn = Arc::new(Mutex::new(Conn::default()));
            all.lock().unwrap().push(conn.clone());
            let (ri, wi) = inbound.into_split();
            let (ro, wo) = outbound.into_split();
            tokio::spawn(pump(ri, wo, conn.clone(), true));
            tokio::spawn(pump(ro, wi, conn, false));
        }
    });
    (url, conns)
}

/// Copies one direction, recording each chunk before forwarding it.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    conn: Arc<Mutex<Conn>>,
    up: bool,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        {
            let mut c = conn.lock().unwrap();
            if up {
                c.up.extend_from_slice(&buf[..n]);
            } else {
                c.down.extend_from_slice(&buf[..n]);
            }
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_deletes_the_session_and_the_facade_answers_204() {
    let facade = Facade::start(&[]).await;
    let (url, conns) = recording_relay(facade.addr()).await;
    let client = client_at(&url, None, &facade.stderr()).await;
    assert_eq!(tool_names(&client).await.len(), 2);
    within("cancel", client.cancel())
        .await
        .expect("cancel joins the service task");

    // Every connection's bytes, as text (taken out of the relay's record at once).
    let recorded: Vec<(String, String)> = conns
        .lock()
        .unwrap()
        .iter()
        .map(|c| {
            let c = c.lock().unwrap();
            (
                String::from_utf8_lossy(&c.up).into_owned(),
                String::from_utf8_lossy(&c.down).into_owned(),
            )
        })
        .collect();
    let transcript = recorded
        .iter()
        .enumerate()
        .map(|(i, (up, down))| format!("--- connection {i} up ---\n{up}\n--- down ---\n{down}"))
        .collect::<Vec<_>>()
        .join("\n");
    // The session id the facade handed out at `initialize`.
    let session = recorded
        .iter()
        .find_map(|(_, down)| {
            down.to_ascii_lowercase().lines().find_map(|l| {
                l.strip_prefix("mcp-session-id:")
                    .map(|v| v.trim().to_owned())
            })
        })
        .unwrap_or_else(|| panic!("no Mcp-Session-Id in any response\n{transcript}"));
    // The connection that carried the DELETE: its last response is the answer to it.
    let (up, down) = recorded
        .iter()
        .map(|(up, down)| (up.to_ascii_lowercase(), down.to_ascii_lowercase()))
        .find(|(up, _)| up.contains("delete /mcp http/1.1"))
        .unwrap_or_else(|| panic!("rmcp sent no DELETE\n{transcript}"));
    let delete = &up[up.rfind("delete /mcp http/1.1").unwrap()..];
    assert!(
        delete.contains(&format!("mcp-session-id: {session}")),
        "the DELETE names the session\n{transcript}"
    );
    let last_status = down
        .rfind("http/1.1 ")
        .map(|i| &down[i..])
        .and_then(|s| s.split_whitespace().nth(1))
        .unwrap_or("");
    assert_eq!(last_status, "204", "the DELETE's answer\n{transcript}");

    // The session is gone: a request in it is 404.
    let addr = facade.addr();
    let (status, head, body) = blocking("POST in the deleted session", move || {
        let body = json!({"jsonrpc":"2.0","id":9,"method":"tools/list"}).to_string();
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        raw(&addr, req.as_bytes())
    })
    .await;
    assert_eq!(status, 404, "{head}\n{body}");
}
