//! ACP agent unit tests over `tokio::io::duplex`.

use std::error::Error;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};
use tokio::task::JoinHandle;

use super::*;

type TestResult = Result<(), Box<dyn Error>>;

/// Upper bound for one message from the agent; not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(30);

/// A client connected to a running agent over an in-memory pipe.
struct Client {
    _dir: tempfile::TempDir,
    writer: Option<WriteHalf<DuplexStream>>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    agent: JoinHandle<io::Result<()>>,
}

impl Client {
    /// Starts an agent over a seeded workspace (`hello.txt` = `"hello\n"`).
    fn start() -> Result<Client, Box<dyn Error>> {
        Client::start_with(|_| {})
    }

    /// As [`Client::start`], with the configuration adjusted first.
    fn start_with(adjust: impl FnOnce(&mut AcpAgentConfig)) -> Result<Client, Box<dyn Error>> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
        let mut config = AcpAgentConfig::new(DispatcherConfig::new(dir.path()));
        adjust(&mut config);
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let agent = tokio::spawn(serve(server_read, server_write, config));
        let (client_read, client_write) = tokio::io::split(client);
        Ok(Client {
            _dir: dir,
            writer: Some(client_write),
            lines: BufReader::new(client_read).lines(),
            agent,
        })
    }

    async fn send_raw(&mut self, line: &str) -> TestResult {
        let writer = self.writer.as_mut().ok_or("input already closed")?;
        writer.write_all(line.as_bytes()).await?;
        writer.write_all(b"\n").await?;
        writer.flush().await?;
        Ok(())
    }

    async fn send(&mut self, message: &Value) -> TestResult {
        self.send_raw(&serde_json::to_string(message)?).await
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> TestResult {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    async fn notify(&mut self, method: &str, params: Value) -> TestResult {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// The next message; fails on a non-JSON line or on EOF.
    async fn recv(&mut self) -> Result<Value, Box<dyn Error>> {
        let line = tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await??
            .ok_or("the agent closed its output")?;
        Ok(serde_json::from_str(&line)?)
    }

    /// Sends a request and returns the next message, which must be its response.
    async fn call(
        &mut self,
        id: i64,
        method: &str,
        params: Value,
    ) -> Result<Value, Box<dyn Error>> {
        self.request(id, method, params).await?;
        let reply = self.recv().await?;
        assert_eq!(reply["id"], json!(id), "response to {method}: {reply}");
        Ok(reply)
    }

    async fn new_session(&mut self, id: i64) -> Result<String, Box<dyn Error>> {
        let reply = self
            .call(id, "session/new", json!({"cwd": "/tmp", "mcpServers": []}))
            .await?;
        Ok(reply["result"]["sessionId"]
            .as_str()
            .ok_or("no sessionId")?
            .to_owned())
    }

    /// Closes the input and waits for `serve` to return; yields anything still written.
    async fn finish(mut self) -> Result<Vec<Value>, Box<dyn Error>> {
        if let Some(mut writer) = self.writer.take() {
            writer.shutdown().await?;
        }
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(DEADLINE, self.lines.next_line()).await?? {
            rest.push(serde_json::from_str(&line)?);
        }
        tokio::time::timeout(DEADLINE, self.agent).await???;
        Ok(rest)
    }
}

fn error_code(reply: &Value) -> Option<i64> {
    reply.pointer("/error/code").and_then(Value::as_i64)
}

fn error_message(reply: &Value) -> &str {
    reply
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

// ---- initialize ----

#[tokio::test]
async fn initialize_negotiates_version_one() -> TestResult {
    let mut c = Client::start()?;
    let reply = c
        .call(
            1,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await?;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": false,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                "mcpCapabilities": {"http": false, "sse": false},
                "_meta": {"parity": {"toolMethod": "_parity/tool"}},
            },
            "authMethods": [],
            "agentInfo": {
                "name": "parity-reference",
                "title": "parity reference agent",
                "version": env!("CARGO_PKG_VERSION"),
            },
        }})
    );
    for unsupported in [65535, 0, 2] {
        let reply = c
            .call(2, "initialize", json!({"protocolVersion": unsupported}))
            .await?;
        assert_eq!(
            reply["result"]["protocolVersion"],
            json!(1),
            "{unsupported}"
        );
    }
    for bad in [
        json!({"protocolVersion": "1"}),
        json!({"protocolVersion": 65536}),
        json!({"protocolVersion": 1.5}),
        json!({"protocolVersion": -1}),
        json!({}),
    ] {
        let reply = c.call(3, "initialize", bad.clone()).await?;
        assert_eq!(error_code(&reply), Some(-32602), "{bad}");
        assert!(error_message(&reply).contains("protocolVersion"), "{reply}");
        assert_eq!(reply["error"]["data"]["field"], json!("protocolVersion"));
    }
    let reply = c.call(4, "initialize", json!([1])).await?;
    assert_eq!(error_code(&reply), Some(-32602));
    assert!(c.finish().await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn requests_before_initialize_are_served() -> TestResult {
    let mut c = Client::start()?;
    assert_eq!(c.new_session(1).await?, "sess_1");
    Ok(())
}

// ---- session/new ----

#[tokio::test]
async fn session_new_accepts_empty_and_stdio_servers() -> TestResult {
    let mut c = Client::start()?;
    c.call(1, "initialize", json!({"protocolVersion": 1}))
        .await?;
    let reply = c
        .call(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}))
        .await?;
    assert_eq!(reply["result"], json!({"sessionId": "sess_1"}));
    let stdio = json!({
        "name": "tools",
        "command": "/usr/bin/mcp-server",
        "args": ["--stdio", "-v"],
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": ""}],
    });
    let reply = c
        .call(
            3,
            "session/new",
            json!({"cwd": "/work", "mcpServers": [stdio, {
            "type": "stdio", "name": "t2", "command": "/bin/x", "args": [], "env": []}]}),
        )
        .await?;
    assert_eq!(reply["result"], json!({"sessionId": "sess_2"}));
    Ok(())
}

#[tokio::test]
async fn session_new_names_the_bad_field() -> TestResult {
    let mut c = Client::start()?;
    let ok = json!({"name": "a", "command": "/bin/a", "args": [], "env": []});
    let cases = [
        (json!({"mcpServers": []}), "cwd"),
        (json!({"cwd": "relative/dir", "mcpServers": []}), "cwd"),
        (json!({"cwd": 7, "mcpServers": []}), "cwd"),
        (json!({"cwd": "/tmp"}), "mcpServers"),
        (json!({"cwd": "/tmp", "mcpServers": {}}), "mcpServers"),
        (
            json!({"cwd": "/tmp", "mcpServers": [ok, 3]}),
            "mcpServers[1]",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"type": "http", "name": "h", "url": "http://x", "headers": []}]}),
            "mcpServers[0]",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"type": "sse", "name": "h", "url": "http://x", "headers": []}]}),
            "mcpServers[0]",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"type": "ws", "name": "h"}]}),
            "mcpServers[0].type",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"command": "/bin/a", "args": [], "env": []}]}),
            "mcpServers[0].name",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"name": "a", "command": 1, "args": [], "env": []}]}),
            "mcpServers[0].command",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"name": "a", "command": "/a", "env": []}]}),
            "mcpServers[0].args",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"name": "a", "command": "/a", "args": ["x", 2], "env": []}]}),
            "mcpServers[0].args[1]",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"name": "a", "command": "/a", "args": [], "env": {"A": "1"}}]}),
            "mcpServers[0].env",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"name": "a", "command": "/a", "args": [],
                   "env": [{"name": "A", "value": "1"}, {"name": "B", "value": 2}]}]}),
            "mcpServers[0].env[1].value",
        ),
        (
            json!({"cwd": "/tmp", "mcpServers": [{"name": "a", "command": "/a", "args": [],
                   "env": ["A=1"]}]}),
            "mcpServers[0].env[0]",
        ),
    ];
    for (i, (params, field)) in cases.into_iter().enumerate() {
        let id = i64::try_from(i)?;
        let reply = c.call(id, "session/new", params.clone()).await?;
        assert_eq!(error_code(&reply), Some(-32602), "{params}: {reply}");
        assert!(
            error_message(&reply).contains(&format!("`{field}`")),
            "{params}: {reply}"
        );
        assert_eq!(reply["error"]["data"]["field"], json!(field), "{params}");
    }
    let reply = c.call(99, "session/new", json!([])).await?;
    assert_eq!(error_code(&reply), Some(-32602));
    // No session was created by the failures.
    assert_eq!(c.new_session(100).await?, "sess_1");
    Ok(())
}

// ---- session/prompt ----

#[tokio::test]
async fn prompt_sends_the_update_before_end_turn() -> TestResult {
    let mut c = Client::start()?;
    let session = c.new_session(1).await?;
    c.request(
        2,
        "session/prompt",
        json!({"sessionId": session, "prompt": [
            {"type": "text", "text": "hello"},
            {"type": "resource_link", "uri": "file:///x", "name": "x"},
            {"type": "text", "text": "world"},
        ]}),
    )
    .await?;
    let update = c.recv().await?;
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "sess_1",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "parity reference agent received: hello\nworld"},
            },
        }})
    );
    let reply = c.recv().await?;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})
    );
    Ok(())
}

#[tokio::test]
async fn prompt_params_are_validated() -> TestResult {
    let mut c = Client::start()?;
    let session = c.new_session(1).await?;
    let cases = [
        (json!({"prompt": []}), "sessionId"),
        (json!({"sessionId": "sess_9", "prompt": []}), "sessionId"),
        (json!({"sessionId": 1, "prompt": []}), "sessionId"),
        (json!({"sessionId": session}), "prompt"),
        (json!({"sessionId": session, "prompt": "hi"}), "prompt"),
        (json!({"sessionId": session, "prompt": ["hi"]}), "prompt[0]"),
        (
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "a"}, {"text": "b"}]}),
            "prompt[1]",
        ),
        (
            json!({"sessionId": session, "prompt": [{"type": "text", "text": 5}]}),
            "prompt[0].text",
        ),
    ];
    for (i, (params, field)) in cases.into_iter().enumerate() {
        let id = i64::try_from(i)? + 10;
        let reply = c.call(id, "session/prompt", params.clone()).await?;
        assert_eq!(error_code(&reply), Some(-32602), "{params}: {reply}");
        assert_eq!(reply["error"]["data"]["field"], json!(field), "{params}");
    }
    Ok(())
}

#[tokio::test]
async fn wait_for_cancel_ends_cancelled() -> TestResult {
    let mut c = Client::start()?;
    let s1 = c.new_session(1).await?;
    let s2 = c.new_session(2).await?;
    let wait = json!({"sessionId": s1, "prompt": [{"type": "text", "text": "wait_for_cancel"}]});
    c.request(3, "session/prompt", wait.clone()).await?;
    // The turn stays open: the next message answers a later request.
    let reply = c.call(4, "session/prompt", wait).await?;
    assert_eq!(error_code(&reply), Some(-32600), "{reply}");
    assert_eq!(
        error_message(&reply),
        "a prompt turn is already running on this session"
    );
    // Cancelling another (idle) session or an unknown one is ignored.
    c.notify("session/cancel", json!({"sessionId": s2})).await?;
    c.notify("session/cancel", json!({"sessionId": "sess_77"}))
        .await?;
    let reply = c.call(5, "unknown/method", json!({})).await?;
    assert_eq!(error_code(&reply), Some(-32601));
    c.notify("session/cancel", json!({"sessionId": s1})).await?;
    let reply = c.recv().await?;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}})
    );
    // The session is usable again; a second cancel is ignored.
    c.notify("session/cancel", json!({"sessionId": s1})).await?;
    c.request(
        6,
        "session/prompt",
        json!({"sessionId": s1, "prompt": [{"type": "text", "text": "again"}]}),
    )
    .await?;
    assert_eq!(c.recv().await?["method"], json!("session/update"));
    assert_eq!(c.recv().await?["result"]["stopReason"], json!("end_turn"));
    // An open turn is dropped unanswered at EOF.
    c.request(
        7,
        "session/prompt",
        json!({"sessionId": s2, "prompt": [{"type": "text", "text": "wait_for_cancel"}]}),
    )
    .await?;
    assert!(c.finish().await?.is_empty());
    Ok(())
}

// ---- the tool method ----

#[tokio::test]
async fn tool_method_maps_outcomes() -> TestResult {
    let mut c = Client::start()?;
    let reply = c
        .call(
            1,
            "_parity/tool",
            json!({"name": "read_file", "arguments": {"path": "hello.txt"}, "sessionId": "x", "_meta": {}}),
        )
        .await?;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "outcome": "ok", "value": {"content": "hello\n"}, "warnings": []}})
    );
    let reply = c
        .call(
            2,
            "_parity/tool",
            json!({"name": "read_file", "arguments": {"path": "missing.txt"}}),
        )
        .await?;
    assert_eq!(reply["result"]["outcome"], json!("refused"), "{reply}");
    assert_eq!(reply["result"]["code"], json!("NOT_FOUND"), "{reply}");
    let reply = c
        .call(3, "_parity/tool", json!({"name": "read_file"}))
        .await?;
    assert_eq!(reply["result"]["outcome"], json!("refused"), "{reply}");
    assert_eq!(
        reply["result"]["code"],
        json!("INVALID_ARGUMENTS"),
        "{reply}"
    );
    let reply = c.call(4, "_parity/tool", json!({"name": "nope"})).await?;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Unknown tool: nope"}})
    );
    let reply = c
        .call(
            5,
            "_parity/tool",
            json!({"name": "read_file", "arguments": "hello.txt"}),
        )
        .await?;
    assert_eq!(error_code(&reply), Some(-32602), "{reply}");
    assert!(reply.get("result").is_none());
    for bad in [json!({}), json!({"name": 3}), json!(["read_file"])] {
        let reply = c.call(6, "_parity/tool", bad.clone()).await?;
        assert_eq!(error_code(&reply), Some(-32602), "{bad}");
        assert_eq!(reply["error"]["data"]["field"], json!("name"), "{bad}");
    }
    Ok(())
}

#[tokio::test]
async fn cancel_request_aborts_a_tool_call() -> TestResult {
    let mut c = Client::start()?;
    c.request(
        4,
        "_parity/tool",
        json!({"name": "exec", "arguments": {"argv": ["sleep", "20"]}}),
    )
    .await?;
    c.send(
        &json!({"jsonrpc": "2.0", "id": "s", "method": "_parity/tool",
                   "params": {"name": "exec", "arguments": {"argv": ["sleep", "20"]}}}),
    )
    .await?;
    c.notify("$/cancel_request", json!({"requestId": "s"}))
        .await?;
    let reply = c.recv().await?;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "s", "error": {"code": -32800, "message": "Request cancelled"}})
    );
    // Unknown ids are ignored; calls overlap (this one answers while id 4 still runs).
    c.notify("$/cancel_request", json!({"requestId": 99}))
        .await?;
    let reply = c.call(5, "_parity/tool", json!({"name": "status"})).await?;
    assert_eq!(reply["result"]["outcome"], json!("ok"));
    // EOF aborts the call still running; nothing is sent for it.
    assert!(c.finish().await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn configured_tool_method_is_used_and_advertised() -> TestResult {
    let mut c = Client::start_with(|config| config.tool_method = "_example.org/call".to_owned())?;
    let init = c
        .call(1, "initialize", json!({"protocolVersion": 1}))
        .await?;
    assert_eq!(
        init["result"]["agentCapabilities"]["_meta"]["parity"]["toolMethod"],
        json!("_example.org/call")
    );
    let reply = c.call(2, "_parity/tool", json!({"name": "status"})).await?;
    assert_eq!(error_code(&reply), Some(-32601));
    let reply = c
        .call(3, "_example.org/call", json!({"name": "status"}))
        .await?;
    assert_eq!(reply["result"]["outcome"], json!("ok"));
    assert!(c.finish().await?.is_empty());
    Ok(())
}

// ---- envelopes ----

#[tokio::test]
async fn unknown_methods_are_method_not_found() -> TestResult {
    let mut c = Client::start()?;
    for (id, method) in [
        (1, "session/load"),
        (2, "_vendor/thing"),
        (3, "authenticate"),
        (4, "session/cancel"),
    ] {
        let reply = c.call(id, method, json!({})).await?;
        assert_eq!(error_code(&reply), Some(-32601), "{method}");
        assert_eq!(error_message(&reply), "Method not found");
    }
    Ok(())
}

#[tokio::test]
async fn framing_errors() -> TestResult {
    let mut c = Client::start()?;
    c.send_raw(
        r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]"#,
    )
    .await?;
    let reply = c.recv().await?;
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(error_code(&reply), Some(-32600));
    c.send_raw("not json").await?;
    let reply = c.recv().await?;
    assert_eq!(
        (reply["id"].clone(), error_code(&reply)),
        (Value::Null, Some(-32700))
    );
    c.send_raw("").await?;
    c.send_raw("   ").await?;
    c.send_raw(r#"{"id":7,"method":"initialize"}"#).await?;
    let reply = c.recv().await?;
    assert_eq!(
        (reply["id"].clone(), error_code(&reply)),
        (json!(7), Some(-32600))
    );
    c.send_raw(r#"{"jsonrpc":"2.0","id":"m","method":5}"#)
        .await?;
    let reply = c.recv().await?;
    assert_eq!(
        (reply["id"].clone(), error_code(&reply)),
        (json!("m"), Some(-32600))
    );
    c.send_raw(r#"{"jsonrpc":"2.0","id":1.5,"method":"initialize"}"#)
        .await?;
    let reply = c.recv().await?;
    assert_eq!(
        (reply["id"].clone(), error_code(&reply)),
        (Value::Null, Some(-32600))
    );
    // A client response is ignored.
    c.send_raw(r#"{"jsonrpc":"2.0","id":40,"result":{}}"#)
        .await?;
    let reply = c.call(8, "nope", json!({})).await?;
    assert_eq!(error_code(&reply), Some(-32601));
    Ok(())
}

#[tokio::test]
async fn over_long_line_is_a_parse_error() -> TestResult {
    let mut c = Client::start()?;
    let long = "x".repeat(MAX_LINE_BYTES + 1);
    let writer = c.writer.as_mut().ok_or("closed")?;
    let line = format!("{long}\n");
    let send = async move {
        writer.write_all(line.as_bytes()).await?;
        writer.flush().await
    };
    let (sent, reply) = tokio::join!(send, c.lines.next_line());
    sent?;
    let reply: Value = serde_json::from_str(&reply?.ok_or("eof")?)?;
    assert_eq!(
        (reply["id"].clone(), error_code(&reply)),
        (Value::Null, Some(-32700))
    );
    let reply = c
        .call(1, "initialize", json!({"protocolVersion": 1}))
        .await?;
    assert_eq!(reply["result"]["protocolVersion"], json!(1));
    Ok(())
}

#[tokio::test]
async fn notifications_are_never_answered() -> TestResult {
    let mut c = Client::start()?;
    c.notify("initialize", json!({"protocolVersion": 1}))
        .await?;
    c.notify("_vendor/notice", json!({})).await?;
    c.notify("session/cancel", json!({"sessionId": "sess_1"}))
        .await?;
    c.notify("$/cancel_request", json!({"requestId": 1}))
        .await?;
    c.send_raw(r#"{"jsonrpc":"2.0","method":"_parity/tool","params":{"name":"status"}}"#)
        .await?;
    let reply = c
        .call(1, "session/new", json!({"cwd": "/", "mcpServers": []}))
        .await?;
    assert_eq!(reply["result"]["sessionId"], json!("sess_1"));
    assert!(c.finish().await?.is_empty());
    Ok(())
}
