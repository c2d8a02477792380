//! The reference ACP agent (`parity_reference::acp`) against the official ACP v1 JSON schema.
//!
//! The schema is read at test time from `$PARITY_SCHEMAS_DIR/acp/v1-schema.json`, by default
//! `<workspace>/../shared/spec/schemas/acp/` (never copied into the project; without it each test
//! says what it did not cross-check and passes, unless `PARITY_REQUIRE_SCHEMAS=1`: see
//! `official/mod.rs`). The test drives `acp::serve` in-process over
//! `tokio::io::duplex` through `initialize`, `session/new`, `session/prompt` (a plain turn and a
//! `wait_for_cancel` turn ended by `session/cancel`), and the `_parity/tool` extension method, and
//! validates EVERY message the agent emits against the schema's agent-side message definition,
//! then each result against its method's response definition (`InitializeResponse`,
//! `NewSessionResponse`, `PromptResponse`), each `session/update` against `SessionNotification`
//! and each error object against `Error`. Tool results are extension territory: they only need
//! to be objects with an `outcome`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use parity_reference::acp::{self, AcpAgentConfig};
use parity_reference::dispatcher::DispatcherConfig;
use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// Upper bound for one message from the agent; not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(60);

use crate::official;

/// The official ACP v1 schema document.
struct Schema {
    doc: Value,
}

impl Schema {
    /// The schema, or `None` (after saying that `what` was not cross-checked) when it is absent.
    fn load(what: &str) -> Option<Schema> {
        let path = official::dir("acp", what)?.join("v1-schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read the official schema {}: {e}", path.display()));
        let doc: Value = serde_json::from_str(&text).expect("schema is JSON");
        assert!(
            doc["$defs"].is_object(),
            "the ACP schema keeps its definitions in $defs"
        );
        Some(Schema { doc })
    }

    /// A validator for `$defs/<def>`: the definitions are kept, the root's own `anyOf` (every
    /// message of either side) is replaced by a `$ref`, so internal references resolve.
    fn validator(&self, def: &str) -> jsonschema::Validator {
        let root = json!({
            "$schema": self.doc["$schema"],
            "$defs": self.doc["$defs"],
            "$ref": format!("#/$defs/{def}"),
        });
        jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("cannot build a validator for {def}: {e}"))
    }

    /// A validator for a message the agent may send: the root `anyOf` member titled "Agent"
    /// (`jsonrpc: "2.0"` plus an agent request, response or notification).
    fn agent_message_validator(&self) -> jsonschema::Validator {
        let agent = self.doc["anyOf"]
            .as_array()
            .expect("root anyOf")
            .iter()
            .find(|v| v["title"] == json!("Agent"))
            .expect("the root anyOf has an Agent member")
            .clone();
        let mut defs = self.doc["$defs"].clone();
        defs.as_object_mut()
            .expect("$defs is an object")
            .insert("ParityAgentMessage".into(), agent);
        let root = json!({
            "$schema": self.doc["$schema"],
            "$defs": defs,
            "$ref": "#/$defs/ParityAgentMessage",
        });
        jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("cannot build the agent message validator: {e}"))
    }
}

/// The official verdict with its first error, for messages.
fn official(v: &jsonschema::Validator, instance: &Value) -> Result<(), String> {
    match v.iter_errors(instance).next() {
        None => Ok(()),
        Some(e) => Err(format!("{e} at {}", e.instance_path())),
    }
}

/// A client of an in-process agent; records every message the agent emits.
struct Client {
    _dir: tempfile::TempDir,
    writer: Option<WriteHalf<DuplexStream>>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    agent: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Every message emitted, in order.
    emitted: Vec<Value>,
    /// (method, response) for every request sent.
    exchanges: Vec<(String, Value)>,
}

impl Client {
    fn start() -> Client {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("README.md"), "# workspace\n").expect("seed");
        let config = AcpAgentConfig::new(DispatcherConfig::new(dir.path()));
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let agent = tokio::spawn(acp::serve(server_read, server_write, config));
        let (client_read, client_write) = tokio::io::split(client);
        Client {
            _dir: dir,
            writer: Some(client_write),
            lines: BufReader::new(client_read).lines(),
            agent,
            emitted: Vec::new(),
            exchanges: Vec::new(),
        }
    }

    async fn send(&mut self, message: &Value) {
        let writer = self.writer.as_mut().expect("input open");
        let mut bytes = serde_json::to_vec(message).expect("serialize");
        bytes.push(b'\n');
        writer.write_all(&bytes).await.expect("write to the agent");
        writer.flush().await.expect("flush");
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await
            .expect("the agent answered within the deadline")
            .expect("read from the agent")
            .expect("the agent kept its output open");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the agent wrote a non-JSON line ({e}): {line}"));
        self.emitted.push(v.clone());
        v
    }

    /// Sends a request; returns the notifications seen before its response, and the response.
    async fn request(&mut self, id: i64, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut before = Vec::new();
        loop {
            let v = self.recv().await;
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                self.exchanges.push((method.to_owned(), v.clone()));
                return (before, v);
            }
            before.push(v);
        }
    }

    /// Closes the input, collects any late message and waits for `serve` to return `Ok`.
    async fn finish(mut self) -> (Vec<Value>, Vec<(String, Value)>) {
        let mut writer = self.writer.take().expect("input open");
        writer.shutdown().await.expect("close the input");
        while let Some(line) = tokio::time::timeout(DEADLINE, self.lines.next_line())
            .await
            .expect("output closed within the deadline")
            .expect("read")
        {
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("the agent wrote a non-JSON line ({e}): {line}"));
            self.emitted.push(v);
        }
        tokio::time::timeout(DEADLINE, self.agent)
            .await
            .expect("serve returned within the deadline")
            .expect("serve task")
            .expect("serve returned Ok at EOF");
        (self.emitted, self.exchanges)
    }
}

#[tokio::test]
async fn every_agent_message_matches_the_official_acp_v1_schema() {
    let Some(schema) = Schema::load("every message of the reference ACP agent") else {
        return;
    };
    let mut c = Client::start();

    // initialize: echo of 1, and the latest (1) for an unsupported version.
    let (_, init) = c
        .request(
            1,
            "initialize",
            json!({"protocolVersion": 1,
                   "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false},
                                          "terminal": false},
                   "clientInfo": {"name": "parity-tests", "version": "0"}}),
        )
        .await;
    assert_eq!(init.pointer("/result/protocolVersion"), Some(&json!(1)));
    assert_eq!(
        init.pointer("/result/agentCapabilities/_meta/parity/toolMethod"),
        Some(&json!(acp::TOOL_METHOD))
    );
    let (_, init) = c
        .request(2, "initialize", json!({"protocolVersion": 65535}))
        .await;
    assert_eq!(init.pointer("/result/protocolVersion"), Some(&json!(1)));

    // session/new with no MCP servers and with a stdio entry.
    let (early, created) = c
        .request(3, "session/new", json!({"cwd": "/tmp", "mcpServers": []}))
        .await;
    assert!(
        early.is_empty(),
        "nothing precedes the session/new response: {early:?}"
    );
    let session = created
        .pointer("/result/sessionId")
        .and_then(Value::as_str)
        .expect("sessionId")
        .to_owned();
    let (_, second) = c
        .request(
            4,
            "session/new",
            json!({"cwd": "/tmp", "mcpServers": [{"name": "tools", "command": "/bin/true",
                   "args": ["-x"], "env": [{"name": "K", "value": "v"}]}]}),
        )
        .await;
    let second_session = second
        .pointer("/result/sessionId")
        .and_then(Value::as_str)
        .expect("sessionId")
        .to_owned();

    // A plain prompt: one session/update, then end_turn.
    let (updates, done) = c
        .request(
            5,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
        )
        .await;
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0]["method"], json!("session/update"));
    assert_eq!(
        updates[0].pointer("/params/update/content/text"),
        Some(&json!("parity reference agent received: hello"))
    );
    assert_eq!(done.pointer("/result/stopReason"), Some(&json!("end_turn")));

    // wait_for_cancel, then session/cancel: the turn ends `cancelled`.
    c.send(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "session/prompt",
                   "params": {"sessionId": second_session,
                              "prompt": [{"type": "text", "text": "wait_for_cancel"}]}}),
    )
    .await;
    let (_, busy) = c
        .request(
            7,
            "session/prompt",
            json!({"sessionId": second_session, "prompt": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert_eq!(busy.pointer("/error/code"), Some(&json!(-32600)));
    c.send(&json!({"jsonrpc": "2.0", "method": "session/cancel",
                   "params": {"sessionId": second_session}}))
        .await;
    let cancelled = c.recv().await;
    assert_eq!(cancelled["id"], json!(6));
    assert_eq!(
        cancelled.pointer("/result/stopReason"),
        Some(&json!("cancelled"))
    );
    c.exchanges.push(("session/prompt".to_owned(), cancelled));

    // The tool method: ok, refused, protocol error; plus errors the surface produces.
    let (_, ok) = c
        .request(
            8,
            acp::TOOL_METHOD,
            json!({"name": "read_file", "arguments": {"path": "README.md"}}),
        )
        .await;
    assert_eq!(ok.pointer("/result/outcome"), Some(&json!("ok")), "{ok}");
    let (_, refused) = c
        .request(
            9,
            acp::TOOL_METHOD,
            json!({"name": "read_file", "arguments": {"path": "../../etc/passwd"}}),
        )
        .await;
    assert_eq!(
        refused.pointer("/result/outcome"),
        Some(&json!("refused")),
        "{refused}"
    );
    let (_, unknown_tool) = c
        .request(10, acp::TOOL_METHOD, json!({"name": "nope"}))
        .await;
    assert_eq!(unknown_tool.pointer("/error/code"), Some(&json!(-32602)));
    let (_, bad_env) = c
        .request(
            11,
            "session/new",
            json!({"cwd": "/tmp", "mcpServers": [{"name": "a", "command": "/a", "args": [],
                   "env": [{"name": "A"}]}]}),
        )
        .await;
    assert_eq!(
        bad_env.pointer("/error/data/field"),
        Some(&json!("mcpServers[0].env[0].value"))
    );
    let (_, missing) = c.request(12, "_vendor/unknown", json!({})).await;
    assert_eq!(missing.pointer("/error/code"), Some(&json!(-32601)));

    let (emitted, exchanges) = c.finish().await;

    let message = schema.agent_message_validator();
    let error_object = schema.validator("Error");
    let notification = schema.validator("SessionNotification");
    let mut failures = Vec::new();
    for v in &emitted {
        if let Err(e) = official(&message, v) {
            failures.push(format!("agent message: {e}\n  {v}"));
        }
        if v["method"] == json!("session/update") {
            if let Err(e) = official(&notification, &v["params"]) {
                failures.push(format!("SessionNotification: {e}\n  {v}"));
            }
        } else if v.get("method").is_some() {
            failures.push(format!("unexpected agent→client message: {v}"));
        }
        if let Some(error) = v.get("error") {
            if let Err(e) = official(&error_object, error) {
                failures.push(format!("Error: {e}\n  {v}"));
            }
        }
    }
    let mut checked = 0;
    for (method, response) in &exchanges {
        let Some(result) = response.get("result") else {
            continue;
        };
        let def = match method.as_str() {
            "initialize" => "InitializeResponse",
            "session/new" => "NewSessionResponse",
            "session/prompt" => "PromptResponse",
            m if m == acp::TOOL_METHOD => {
                assert!(
                    result.get("outcome").and_then(Value::as_str).is_some(),
                    "a tool result is an outcome object: {response}"
                );
                continue;
            }
            other => panic!("unexpected result for {other}: {response}"),
        };
        checked += 1;
        if let Err(e) = official(&schema.validator(def), result) {
            failures.push(format!("{def}: {e}\n  {response}"));
        }
    }
    assert!(
        failures.is_empty(),
        "messages the official ACP v1 schema rejects:\n{}",
        failures.join("\n")
    );
    assert_eq!(emitted.len(), 13, "every message emitted: {emitted:?}");
    assert_eq!(
        checked, 6,
        "results checked against their response definitions"
    );
}

/// The schema really rejects what the agent must not send, so the test above has teeth.
#[test]
fn the_official_schema_rejects_wrong_shapes() {
    let Some(schema) = Schema::load("that the ACP schema rejects wrong shapes") else {
        return;
    };
    let init = schema.validator("InitializeResponse");
    assert!(init.is_valid(&json!({"protocolVersion": 1})));
    assert!(!init.is_valid(&json!({"protocolVersion": "1"})));
    let prompt = schema.validator("PromptResponse");
    assert!(!prompt.is_valid(&json!({"stopReason": "done"})));
    let update = schema.validator("SessionNotification");
    assert!(!update
        .is_valid(&json!({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}})));
    let message = schema.agent_message_validator();
    assert!(!message.is_valid(&json!({"id": 1, "result": {}})));
}
