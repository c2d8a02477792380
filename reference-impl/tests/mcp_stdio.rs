//! The MCP stdio server driven in-process over `tokio::io::duplex`, one test per wire
//! behaviour.

use std::error::Error;
use std::time::{Duration, Instant};

use parity_reference::dispatcher::DispatcherConfig;
use parity_reference::mcp::{serve, McpServerConfig, MAX_LINE_BYTES};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

type TestResult = Result<(), Box<dyn Error>>;

const MODERN: &str = "2026-07-28";
const WAIT: Duration = Duration::from_secs(10);

/// A client connected to a fresh server over a workspace with `hello.txt`.
struct Client {
    input: Option<DuplexStream>,
    output: BufReader<DuplexStream>,
    server: Option<JoinHandle<std::io::Result<()>>>,
    dir: tempfile::TempDir,
}

impl Client {
    fn start() -> Result<Self, Box<dyn Error>> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("hello.txt"), "hello")?;
        let (input, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, output) = tokio::io::duplex(64 * 1024);
        let mut config = McpServerConfig::new(DispatcherConfig::new(dir.path()));
        config.server_version = "9.9.9".into();
        let server = tokio::spawn(serve(server_in, server_out, config));
        Ok(Client {
            input: Some(input),
            output: BufReader::new(output),
            server: Some(server),
            dir,
        })
    }

    /// A client whose session was initialized at `revision`.
    async fn legacy(revision: &str) -> Result<Self, Box<dyn Error>> {
        let mut client = Client::start()?;
        client
            .send(
                &json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
                    "protocolVersion": revision,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                }}),
            )
            .await?;
        let reply = client.recv().await?;
        assert_eq!(reply["result"]["protocolVersion"], revision);
        client
            .send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await?;
        Ok(client)
    }

    async fn send_raw(&mut self, bytes: &[u8]) -> TestResult {
        let input = self.input.as_mut().ok_or("input closed")?;
        input.write_all(bytes).await?;
        input.flush().await?;
        Ok(())
    }

    async fn send(&mut self, message: &Value) -> TestResult {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.send_raw(&line).await
    }

    /// The next output line, raw (including the `\n`).
    async fn recv_raw(&mut self) -> Result<Vec<u8>, Box<dyn Error>> {
        let mut line = Vec::new();
        let n = tokio::time::timeout(WAIT, self.output.read_until(b'\n', &mut line)).await??;
        if n == 0 {
            return Err("server closed its output".into());
        }
        Ok(line)
    }

    async fn recv(&mut self) -> Result<Value, Box<dyn Error>> {
        let line = self.recv_raw().await?;
        Ok(serde_json::from_slice(&line)?)
    }

    /// Sends `message` and returns the next output message.
    async fn ask(&mut self, message: &Value) -> Result<Value, Box<dyn Error>> {
        self.send(message).await?;
        self.recv().await
    }

    /// Asserts that nothing arrives for `ms` milliseconds.
    async fn expect_silence(&mut self, ms: u64) -> TestResult {
        let mut line = Vec::new();
        match tokio::time::timeout(
            Duration::from_millis(ms),
            self.output.read_until(b'\n', &mut line),
        )
        .await
        {
            Err(_) => Ok(()),
            Ok(_) => Err(format!("unexpected output: {}", String::from_utf8_lossy(&line)).into()),
        }
    }

    /// Closes stdin and waits for `serve` to return.
    async fn close(&mut self) -> Result<std::io::Result<()>, Box<dyn Error>> {
        self.input = None;
        let server = self.server.take().ok_or("already closed")?;
        Ok(tokio::time::timeout(WAIT, server).await??)
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    })
}

/// A modern request: `params` gets the required `_meta`.
fn modern(id: Value, method: &str, mut params: Value) -> Value {
    if let Some(obj) = params.as_object_mut() {
        obj.insert("_meta".into(), meta());
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn legacy(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn error_code(reply: &Value) -> Option<i64> {
    reply["error"]["code"].as_i64()
}

// ---- framing and JSON-RPC validity ----

#[tokio::test]
async fn parse_errors_are_answered_and_serving_continues() -> TestResult {
    let mut c = Client::start()?;
    c.send_raw(b"this is not json\n").await?;
    assert_eq!(
        c.recv().await?,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"\n")
        .await?;
    assert_eq!(error_code(&c.recv().await?), Some(-32700));
    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"x\"}\n")
        .await?;
    assert_eq!(c.recv().await?["error"]["code"], -32700);
    c.send_raw(b"\n   \n").await?;
    let reply = c
        .ask(&modern(json!(2), "server/discover", json!({})))
        .await?;
    assert_eq!(reply["id"], 2);
    assert!(reply["result"].is_object());
    Ok(())
}

#[tokio::test]
async fn over_long_lines_are_skipped_with_a_parse_error() -> TestResult {
    let mut c = Client::start()?;
    let mut long = vec![b'x'; MAX_LINE_BYTES + 1];
    long.push(b'\n');
    c.send_raw(&long).await?;
    assert_eq!(
        c.recv().await?,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
    let reply = c
        .ask(&modern(json!(1), "server/discover", json!({})))
        .await?;
    assert_eq!(reply["id"], 1);
    assert!(reply["result"].is_object());
    Ok(())
}

#[tokio::test]
async fn invalid_requests_get_minus_32600() -> TestResult {
    let mut c = Client::start()?;
    let cases: Vec<(Value, Value)> = vec![
        (json!(1), Value::Null),
        (json!("x"), Value::Null),
        (json!(null), Value::Null),
        (json!({"id": 1, "method": "tools/list"}), json!(1)),
        (
            json!({"jsonrpc": "1.0", "id": 2, "method": "tools/list"}),
            json!(2),
        ),
        (
            json!({"jsonrpc": 2.0, "id": 3, "method": "tools/list"}),
            json!(3),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.0, "method": "tools/list"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "tools/list"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": {}, "method": "tools/list"}),
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0", "id": 4, "method": 5}), json!(4)),
        (json!({"jsonrpc": "2.0", "id": 5}), json!(5)),
        (json!({"jsonrpc": "2.0"}), Value::Null),
        (
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": "x"}),
            json!(6),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": 3}),
            json!(7),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 8, "result": {}, "error": {"code": 1, "message": "m"}}),
            json!(8),
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/x", "params": true}),
            Value::Null,
        ),
    ];
    for (message, id) in cases {
        let reply = c.ask(&message).await?;
        assert_eq!(error_code(&reply), Some(-32600), "{message} -> {reply}");
        assert_eq!(reply["id"], id, "{message} -> {reply}");
        assert_eq!(reply["jsonrpc"], "2.0");
    }
    Ok(())
}

#[tokio::test]
async fn ids_are_echoed_exactly() -> TestResult {
    let mut c = Client::start()?;
    for id in [
        "0",
        "-1",
        "9007199254740993",
        "\"1\"",
        "\"\"",
        "18446744073709551615",
    ] {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"server/discover\",\"params\":{{\"_meta\":{}}}}}\n",
            meta()
        );
        c.send_raw(line.as_bytes()).await?;
        let raw = String::from_utf8(c.recv_raw().await?)?;
        assert!(
            raw.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":")),
            "{raw}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn output_is_compact_single_line_json() -> TestResult {
    let mut c = Client::start()?;
    c.send(&modern(json!(1), "tools/list", json!({}))).await?;
    let raw = c.recv_raw().await?;
    assert_eq!(raw.last(), Some(&b'\n'));
    assert!(!raw.starts_with(&[0xef, 0xbb, 0xbf]), "BOM");
    let body = raw.get(..raw.len() - 1).ok_or("empty")?;
    assert!(!body.contains(&b'\n'));
    let value: Value = serde_json::from_slice(body)?;
    assert_eq!(serde_json::to_vec(&value)?, body, "not compact");
    Ok(())
}

#[tokio::test]
async fn notifications_and_client_responses_are_never_answered() -> TestResult {
    let mut c = Client::start()?;
    for message in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "no/such/notification", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "status"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}}),
    ] {
        c.send(&message).await?;
    }
    let reply = c
        .ask(&modern(json!("after"), "server/discover", json!({})))
        .await?;
    assert_eq!(reply["id"], "after");
    c.expect_silence(200).await
}

// ---- modern era (2026-07-28) ----

#[tokio::test]
async fn discover_matches_the_2026_schema() -> TestResult {
    let mut c = Client::start()?;
    let reply = c
        .ask(&modern(json!("d"), "server/discover", json!({})))
        .await?;
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    // No logging at 2026-07-28 (deprecated there; new implementations SHOULD NOT adopt it).
    assert_eq!(
        result["capabilities"],
        json!({"tools": {"listChanged": false}, "resources": {"listChanged": false},
               "prompts": {"listChanged": false}, "completions": {}})
    );
    assert!(result["instructions"].is_string());
    assert!(result["ttlMs"].as_u64().is_some());
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["_meta"],
        json!({"io.modelcontextprotocol/serverInfo": {"name": "parity-reference", "version": "9.9.9"}})
    );
    Ok(())
}

#[tokio::test]
async fn modern_requests_need_meta() -> TestResult {
    let mut c = Client::start()?;
    let no_params = c
        .ask(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
        .await?;
    assert_eq!(error_code(&no_params), Some(-32602));
    assert!(no_params["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("io.modelcontextprotocol/protocolVersion")));

    let no_version = c
        .ask(&legacy(
            json!(2),
            "tools/list",
            json!({"_meta": {
                "io.modelcontextprotocol/clientCapabilities": {}
            }}),
        ))
        .await?;
    assert_eq!(error_code(&no_version), Some(-32602));
    assert!(no_version["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("protocolVersion")));

    let no_caps = c
        .ask(&legacy(
            json!(3),
            "server/discover",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN
            }}),
        ))
        .await?;
    assert_eq!(error_code(&no_caps), Some(-32602));
    assert!(no_caps["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("io.modelcontextprotocol/clientCapabilities")));

    let call = c
        .ask(&legacy(json!(4), "tools/call", json!({"name": "status"})))
        .await?;
    assert_eq!(error_code(&call), Some(-32602));
    Ok(())
}

#[tokio::test]
async fn unsupported_version_gets_minus_32022() -> TestResult {
    let mut c = Client::start()?;
    for requested in ["2025-11-25", "DRAFT-2026-v1", "2099-01-01"] {
        let reply = c
            .ask(&legacy(
                json!(1),
                "tools/list",
                json!({"_meta": {
                    "io.modelcontextprotocol/protocolVersion": requested,
                    "io.modelcontextprotocol/clientCapabilities": {}
                }}),
            ))
            .await?;
        assert_eq!(error_code(&reply), Some(-32022), "{reply}");
        assert_eq!(
            reply["error"]["data"],
            json!({"supported": [MODERN], "requested": requested})
        );
        assert_eq!(reply["id"], 1);
    }
    Ok(())
}

#[tokio::test]
async fn ping_is_removed_and_unknown_methods_are_minus_32601() -> TestResult {
    let mut c = Client::start()?;
    let ping = c.ask(&modern(json!(1), "ping", json!({}))).await?;
    assert_eq!(error_code(&ping), Some(-32601));
    // Legacy-only methods are gone at 2026-07-28.
    for method in [
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "nope",
    ] {
        let reply = c.ask(&modern(json!(2), method, json!({}))).await?;
        assert_eq!(error_code(&reply), Some(-32601), "{method}");
    }
    Ok(())
}

#[tokio::test]
async fn tools_list_pages_deterministically_with_cache_hints() -> TestResult {
    let mut c = Client::start()?;
    let first = c.ask(&modern(json!(1), "tools/list", json!({}))).await?;
    let result = &first["result"];
    let names: Vec<&str> = result["tools"]
        .as_array()
        .ok_or("no tools")?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["read_file", "write_file", "list_dir", "exec"]);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].as_u64().is_some());
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    let tool = &result["tools"][0];
    assert_eq!(tool["inputSchema"]["type"], "object");
    assert!(tool["title"].is_string() && tool["description"].is_string());
    assert!(tool["annotations"]["readOnlyHint"].is_boolean());
    assert_eq!(
        tool["outputSchema"]["required"],
        json!(["outcome", "warnings"])
    );
    let cursor = result["nextCursor"].as_str().ok_or("no cursor")?.to_owned();

    let second = c
        .ask(&modern(json!(2), "tools/list", json!({"cursor": cursor})))
        .await?;
    let names: Vec<&str> = second["result"]["tools"]
        .as_array()
        .ok_or("no tools")?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["status", "retry"]);
    assert!(second["result"].get("nextCursor").is_none());

    let again = c.ask(&modern(json!(1), "tools/list", json!({}))).await?;
    assert_eq!(again, first, "tools/list must be deterministic");

    for bad in [
        json!("garbage"),
        json!(""),
        json!(12),
        json!("cGFyaXR5LXRvb2xzOjk5"),
    ] {
        let reply = c
            .ask(&modern(json!(3), "tools/list", json!({"cursor": bad})))
            .await?;
        assert_eq!(error_code(&reply), Some(-32602), "{bad}");
    }
    Ok(())
}

#[tokio::test]
async fn tools_call_encodes_each_outcome() -> TestResult {
    let mut c = Client::start()?;
    std::fs::write(c.dir.path().join("bin.dat"), [0xffu8, 0x00])?;

    let ok = c
        .ask(&modern(
            json!(1),
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "hello.txt"}}),
        ))
        .await?;
    let result = &ok["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "{\"content\":\"hello\"}"}])
    );
    assert_eq!(
        result["structuredContent"],
        json!({"outcome": "ok", "value": {"content": "hello"}, "warnings": []})
    );
    assert_eq!(result["resultType"], "complete");
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    let refused = c
        .ask(&modern(
            json!(2),
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "nope.txt"}}),
        ))
        .await?;
    let result = &refused["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["outcome"], "refused");
    assert_eq!(result["structuredContent"]["code"], "NOT_FOUND");
    assert_eq!(
        result["content"][0]["text"],
        result["structuredContent"]["message"]
    );

    let tool_error = c
        .ask(&modern(
            json!(3),
            "tools/call",
            json!({"name": "read_file", "arguments": {"path": "bin.dat"}}),
        ))
        .await?;
    assert_eq!(tool_error["result"]["isError"], true);
    assert_eq!(
        tool_error["result"]["structuredContent"]["outcome"],
        "tool_error"
    );

    let invalid = c
        .ask(&modern(
            json!(4),
            "tools/call",
            json!({"name": "read_file", "arguments": {}}),
        ))
        .await?;
    assert_eq!(
        invalid["result"]["structuredContent"]["code"],
        "INVALID_ARGUMENTS"
    );

    let unknown = c
        .ask(&modern(
            json!(5),
            "tools/call",
            json!({"name": "nope", "arguments": {}}),
        ))
        .await?;
    assert_eq!(
        unknown,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "Unknown tool: nope"}})
    );
    Ok(())
}

#[tokio::test]
async fn tools_call_params_are_checked() -> TestResult {
    let mut c = Client::start()?;
    let no_name = c.ask(&modern(json!(1), "tools/call", json!({}))).await?;
    assert_eq!(error_code(&no_name), Some(-32602));
    let bad_name = c
        .ask(&modern(json!(2), "tools/call", json!({"name": 7})))
        .await?;
    assert_eq!(error_code(&bad_name), Some(-32602));
    let bad_args = c
        .ask(&modern(
            json!(3),
            "tools/call",
            json!({"name": "status", "arguments": [1]}),
        ))
        .await?;
    assert_eq!(error_code(&bad_args), Some(-32602));
    let no_args = c
        .ask(&modern(json!(4), "tools/call", json!({"name": "status"})))
        .await?;
    assert_eq!(
        no_args["result"]["structuredContent"]["value"]["label"],
        "active"
    );
    Ok(())
}

// ---- legacy era ----

#[tokio::test]
async fn initialize_echoes_supported_revisions() -> TestResult {
    for revision in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut c = Client::start()?;
        let reply = c
            .ask(&legacy(json!(0), "initialize", json!({
                "protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}
            })))
            .await?;
        let mut capabilities = json!({
            "tools": {"listChanged": false},
            "resources": {"subscribe": true, "listChanged": false},
            "prompts": {"listChanged": false},
            "logging": {},
        });
        // Completion has a capability from 2025-03-26.
        if revision != "2024-11-05" {
            capabilities["completions"] = json!({});
        }
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": revision,
                "capabilities": capabilities,
                "serverInfo": {"name": "parity-reference", "version": "9.9.9"},
                "instructions": reply["result"]["instructions"],
            }})
        );
        assert!(reply["result"]["instructions"].is_string());
    }
    Ok(())
}

#[tokio::test]
async fn initialize_never_echoes_an_unsupported_revision() -> TestResult {
    for revision in ["2026-07-28", "1999-01-01", "DRAFT-2026-v1"] {
        let mut c = Client::start()?;
        let reply = c
            .ask(&legacy(
                json!(1),
                "initialize",
                json!({"protocolVersion": revision, "capabilities": {}}),
            ))
            .await?;
        assert_eq!(
            reply["result"]["protocolVersion"], "2025-11-25",
            "{revision}"
        );
    }
    let mut c = Client::start()?;
    let missing = c
        .ask(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}))
        .await?;
    assert_eq!(error_code(&missing), Some(-32602));
    let wrong = c
        .ask(&legacy(
            json!(2),
            "initialize",
            json!({"protocolVersion": 2025}),
        ))
        .await?;
    assert_eq!(error_code(&wrong), Some(-32602));
    Ok(())
}

#[tokio::test]
async fn legacy_session_serves_without_meta() -> TestResult {
    let mut c = Client::legacy("2025-06-18").await?;
    let ping = c.ask(&legacy(json!(1), "ping", json!({}))).await?;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let bare_ping = c
        .ask(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await?;
    assert_eq!(bare_ping["result"], json!({}));
    let list = c
        .ask(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .await?;
    let result = &list["result"];
    assert_eq!(result["tools"].as_array().map(Vec::len), Some(4));
    assert!(result.get("resultType").is_none());
    assert!(result.get("ttlMs").is_none());
    let cursor = result["nextCursor"].clone();
    let rest = c
        .ask(&legacy(json!(4), "tools/list", json!({"cursor": cursor})))
        .await?;
    assert_eq!(rest["result"]["tools"].as_array().map(Vec::len), Some(2));
    let call = c
        .ask(&legacy(
            json!(5),
            "tools/call",
            json!({"name": "status", "arguments": {}}),
        ))
        .await?;
    assert_eq!(call["result"]["isError"], false);
    assert!(call["result"].get("resultType").is_none());
    let discover = c
        .ask(&legacy(
            json!(6),
            "server/discover",
            json!({"_meta": meta()}),
        ))
        .await?;
    assert_eq!(error_code(&discover), Some(-32601));
    Ok(())
}

// ---- batches ----

#[tokio::test]
async fn batches_are_processed_only_at_2025_03_26() -> TestResult {
    let mut c = Client::legacy("2025-03-26").await?;
    let batch = json!([
        legacy(json!(1), "ping", json!({})),
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        legacy(json!("call"), "tools/call", json!({"name": "read_file", "arguments": {"path": "hello.txt"}})),
        7,
        legacy(json!(2), "initialize", json!({"protocolVersion": "2025-03-26", "capabilities": {}})),
    ]);
    let reply = c.ask(&batch).await?;
    let replies = reply.as_array().ok_or("expected an array")?;
    assert_eq!(replies.len(), 4, "{reply}");
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(replies[1]["id"], "call");
    assert_eq!(
        replies[1]["result"]["structuredContent"]["value"]["content"],
        "hello"
    );
    assert_eq!(error_code(&replies[2]), Some(-32600));
    assert_eq!(replies[2]["id"], Value::Null);
    assert_eq!(error_code(&replies[3]), Some(-32600));
    assert_eq!(replies[3]["id"], 2);

    let empty = c.ask(&json!([])).await?;
    assert_eq!(
        empty,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": empty["error"]["message"]}})
    );
    c.send(&json!([{"jsonrpc": "2.0", "method": "notifications/a"}, {"jsonrpc": "2.0", "method": "notifications/b"}]))
        .await?;
    c.expect_silence(200).await?;
    Ok(())
}

#[tokio::test]
async fn batches_are_rejected_in_other_revisions() -> TestResult {
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]);
    for revision in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut c = Client::legacy(revision).await?;
        let reply = c.ask(&batch).await?;
        assert_eq!(error_code(&reply), Some(-32600), "{revision}: {reply}");
        assert_eq!(reply["id"], Value::Null);
        let empty = c.ask(&json!([])).await?;
        assert_eq!(error_code(&empty), Some(-32600));
    }
    let mut c = Client::start()?;
    let reply = c
        .ask(&json!([modern(json!(1), "server/discover", json!({}))]))
        .await?;
    assert_eq!(error_code(&reply), Some(-32600));
    assert_eq!(reply["id"], Value::Null);
    Ok(())
}

// ---- cancellation, concurrency, EOF ----

fn slow_call(id: Value) -> Value {
    modern(
        id,
        "tools/call",
        json!({"name": "exec", "arguments": {"argv": ["sleep", "30"]}}),
    )
}

#[tokio::test]
async fn cancelled_requests_get_no_response() -> TestResult {
    let mut c = Client::start()?;
    // Without the cancellation this call would be answered (TOOL_TIMEOUT) after 400 ms.
    c.send(&modern(
        json!(7),
        "tools/call",
        json!({"name": "exec", "arguments": {"argv": ["sleep", "30"], "timeout_ms": 400}}),
    ))
    .await?;
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "test"}}))
        .await?;
    let next = c
        .ask(&modern(json!(8), "server/discover", json!({})))
        .await?;
    assert_eq!(next["id"], 8);
    c.expect_silence(1000).await?;
    let closed = c.close().await?;
    assert!(closed.is_ok());
    Ok(())
}

#[tokio::test]
async fn cancellation_matches_the_exact_id() -> TestResult {
    let mut c = Client::legacy("2025-11-25").await?;
    c.send(&legacy(
        json!(0),
        "tools/call",
        json!({"name": "exec", "arguments": {"argv": ["sleep", "30"], "timeout_ms": 400}}),
    ))
    .await?;
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "0"}}))
        .await?;
    let reply = c.recv().await?;
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["result"]["structuredContent"]["code"], "TOOL_TIMEOUT");
    Ok(())
}

#[tokio::test]
async fn cancelled_batch_elements_are_left_out_of_the_batch_reply() -> TestResult {
    let mut c = Client::legacy("2025-03-26").await?;
    c.send(&json!([
        legacy(
            json!("a"),
            "tools/call",
            json!({"name": "exec", "arguments": {"argv": ["sleep", "30"], "timeout_ms": 400}})
        ),
        legacy(json!("b"), "ping", json!({})),
    ]))
    .await?;
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "a"}}))
        .await?;
    let reply = c.recv().await?;
    assert_eq!(reply, json!([{"jsonrpc": "2.0", "id": "b", "result": {}}]));
    c.expect_silence(700).await
}

#[tokio::test]
async fn slow_calls_do_not_block_other_requests() -> TestResult {
    let mut c = Client::start()?;
    c.send(&slow_call(json!("slow-1"))).await?;
    c.send(&slow_call(json!("slow-2"))).await?;
    let started = Instant::now();
    let quick = c
        .ask(&modern(
            json!("quick"),
            "tools/call",
            json!({"name": "status", "arguments": {}}),
        ))
        .await?;
    assert_eq!(quick["id"], "quick");
    assert!(started.elapsed() < Duration::from_secs(5));
    Ok(())
}

#[tokio::test]
async fn concurrent_calls_never_interleave_output() -> TestResult {
    let mut c = Client::start()?;
    let payload = "y".repeat(100_000);
    for i in 0..16 {
        c.send(&modern(
            json!(i),
            "tools/call",
            json!({"name": "exec", "arguments": {"argv": ["echo", payload]}}),
        ))
        .await?;
    }
    let mut seen = Vec::new();
    for _ in 0..16 {
        let reply = c.recv().await?;
        assert_eq!(reply["result"]["isError"], false);
        seen.push(reply["id"].as_i64().ok_or("id")?);
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..16).collect::<Vec<i64>>());
    Ok(())
}

#[tokio::test]
async fn eof_aborts_in_flight_calls_and_returns_ok() -> TestResult {
    let mut c = Client::start()?;
    c.send(&slow_call(json!(1))).await?;
    c.send(&slow_call(json!(2))).await?;
    c.expect_silence(200).await?;
    let started = Instant::now();
    let closed = c.close().await?;
    assert!(closed.is_ok(), "{closed:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let mut rest = Vec::new();
    tokio::time::timeout(
        WAIT,
        tokio::io::AsyncReadExt::read_to_end(&mut c.output, &mut rest),
    )
    .await??;
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    Ok(())
}

#[tokio::test]
async fn eof_after_a_final_unterminated_line_still_answers_it() -> TestResult {
    let mut c = Client::start()?;
    let line = serde_json::to_vec(&modern(json!(1), "server/discover", json!({})))?;
    c.send_raw(&line).await?;
    c.input = None;
    let reply = c.recv().await?;
    assert_eq!(reply["id"], 1);
    assert!(c.close().await?.is_ok());
    Ok(())
}

// ---- server features ----

#[tokio::test]
async fn resources_prompts_and_completion_in_both_eras() -> TestResult {
    // Modern: cache hints, -32602 for an unknown URI.
    let mut c = Client::start()?;
    let list = c
        .ask(&modern(json!(1), "resources/list", json!({})))
        .await?;
    assert_eq!(
        list["result"]["resources"],
        json!([{"uri": "workspace:///hello.txt", "name": "hello.txt", "mimeType": "text/plain"}])
    );
    assert_eq!(list["result"]["ttlMs"], 0);
    assert_eq!(list["result"]["cacheScope"], "public");
    let read = c
        .ask(&modern(
            json!(2),
            "resources/read",
            json!({"uri": "workspace:///hello.txt"}),
        ))
        .await?;
    assert_eq!(read["result"]["contents"][0]["text"], "hello");
    assert_eq!(read["result"]["resultType"], "complete");
    let missing = c
        .ask(&modern(
            json!(3),
            "resources/read",
            json!({"uri": "workspace:///nope"}),
        ))
        .await?;
    assert_eq!(error_code(&missing), Some(-32602));
    let bad_cursor = c
        .ask(&modern(json!(4), "resources/list", json!({"cursor": "x"})))
        .await?;
    assert_eq!(error_code(&bad_cursor), Some(-32602));
    let done = c
        .ask(&modern(
            json!(5),
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "workspace:///{path}"},
                "argument": {"name": "path", "value": "he"}
            }),
        ))
        .await?;
    assert_eq!(
        done["result"]["completion"],
        json!({"values": ["hello.txt"], "total": 1, "hasMore": false})
    );
    assert!(done["result"].get("ttlMs").is_none());

    // Legacy: -32002, prompts, logging.
    let mut c = Client::start()?;
    c.ask(&legacy(json!(0), "initialize", json!({
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}
    })))
    .await?;
    let missing = c
        .ask(&legacy(
            json!(1),
            "resources/read",
            json!({"uri": "file:///nope"}),
        ))
        .await?;
    assert_eq!(error_code(&missing), Some(-32002));
    let got = c
        .ask(&legacy(
            json!(2),
            "prompts/get",
            json!({"name": "explain_file", "arguments": {"path": "hello.txt"}}),
        ))
        .await?;
    assert_eq!(
        got["result"]["messages"][1]["content"]["type"],
        "resource_link"
    );
    for params in [json!({"name": "explain_file"}), json!({"name": "nope"})] {
        let refused = c.ask(&legacy(json!(3), "prompts/get", params)).await?;
        assert_eq!(error_code(&refused), Some(-32602));
    }
    let set = c
        .ask(&legacy(
            json!(4),
            "logging/setLevel",
            json!({"level": "warning"}),
        ))
        .await?;
    assert_eq!(set["result"], json!({}));
    let log = c.recv().await?;
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(log["params"]["level"], "warning");
    let bad = c
        .ask(&legacy(
            json!(5),
            "logging/setLevel",
            json!({"level": "loud"}),
        ))
        .await?;
    assert_eq!(error_code(&bad), Some(-32602));
    let sub = c
        .ask(&legacy(
            json!(6),
            "resources/subscribe",
            json!({"uri": "workspace:///hello.txt"}),
        ))
        .await?;
    assert_eq!(sub["result"], json!({}));
    Ok(())
}
