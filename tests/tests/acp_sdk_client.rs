//! A real ACP client written by others, the `agent-client-protocol` crate (the official Rust
//! SDK), drives `parity reference acp` over a child process's pipes: `initialize`,
//! `session/new` with no MCP servers, a prompt turn (its `agent_message_chunk` update and
//! `end_turn`), a cancelled turn (`session/cancel` → `cancelled`), and the `_parity/tool`
//! extension method, both as a request type derived with the SDK's `JsonRpcRequest` macro and as
//! the schema's own `ExtRequest`.
//!
//! The SDK spawns the agent itself (`AcpAgent`, feature `process`): when the `connect_with`
//! closure returns it closes the agent's stdin and waits for it to exit, then terminates its
//! process group; when the connection future is dropped (a panic or a timeout here) it
//! SIGKILLs the group. Each test also tags its agent with the harness's marker variable and
//! checks that no tagged process outlives the connection.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientRequest, ContentBlock, ContentChunk, ExtRequest, InitializeRequest,
    NewSessionRequest, PromptRequest, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, SessionMessage, SessionSetup};
use agent_client_protocol::{
    AcpAgent, Agent, Client, Dispatch, ErrorCode, JsonRpcRequest, JsonRpcResponse,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ECHO_PREFIX: &str = "parity reference agent received";

/// Upper bound for one whole connection; never a timing assertion. When it fires, the
/// connection future is dropped, which SIGKILLs the agent's process group.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within 60 s"))
}

/// `parity reference acp` as an SDK-spawned agent, tagged with a marker unique to this call.
fn reference_agent() -> (AcpAgent, String) {
    static N: AtomicUsize = AtomicUsize::new(0);
    let mark = format!(
        "acp-sdk-client-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    );
    let agent = AcpAgent::from_args([
        format!("{}={mark}", common::MARKER_VAR),
        common::parity_str(),
        "reference".into(),
        "acp".into(),
    ])
    .expect("AcpAgent::from_args");
    (agent, mark)
}

/// The agent process must be gone once the SDK connection has finished.
fn assert_agent_gone(mark: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = common::marked_processes(mark);
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            common::kill_marked(mark);
            panic!("the agent outlived its SDK connection: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The reference agent's tool call, as a typed extension request (the SDK's derive macros).
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_parity/tool", response = ToolOutcome)]
struct ParityTool {
    name: String,
    arguments: Value,
}

/// The outcome object the reference agent answers a tool call with.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
struct ToolOutcome {
    outcome: String,
    #[serde(default)]
    value: Value,
    #[serde(default)]
    warnings: Vec<Value>,
}

fn cwd() -> std::path::PathBuf {
    std::env::temp_dir()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_client_initialize_session_prompt_and_tool() {
    let (agent, mark) = reference_agent();
    let updates: Arc<Mutex<Vec<SessionNotification>>> = Arc::default();
    let seen = updates.clone();

    let result = within(
        "the SDK client exchange",
        Client
            .v1()
            .name("parity-tests-acp-sdk-client")
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    seen.lock().unwrap().push(n);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_with(agent, async |cx: ConnectionTo<Agent>| {
                // initialize: version 1 is echoed, agentInfo names the reference agent.
                let init = cx
                    .send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                assert_eq!(init.protocol_version, ProtocolVersion::V1, "{init:?}");
                let info = init.agent_info.as_ref().expect("agentInfo");
                assert_eq!(info.name, "parity-reference", "{init:?}");
                assert!(init.auth_methods.is_empty(), "{init:?}");

                // session/new with an empty mcpServers list.
                let new = cx
                    .send_request(NewSessionRequest::new(cwd()))
                    .block_task()
                    .await?;
                let session_id = new.session_id.clone();
                assert!(!session_id.0.is_empty(), "a session id: {new:?}");

                // A prompt turn: one agent_message_chunk, then end_turn. The notification
                // handler runs in the dispatch loop before the response is routed, so the
                // update is recorded by the time the response arrives here.
                let prompt = cx
                    .send_request(PromptRequest::new(
                        session_id.clone(),
                        vec![ContentBlock::Text(TextContent::new("hello from the SDK"))],
                    ))
                    .block_task()
                    .await?;
                assert_eq!(prompt.stop_reason, StopReason::EndTurn, "{prompt:?}");

                // The tool extension method, typed via the SDK's derive macros.
                let read = cx
                    .send_request(ParityTool {
                        name: "read_file".into(),
                        arguments: json!({"path": "README.md"}),
                    })
                    .block_task()
                    .await?;
                assert_eq!(read.outcome, "ok", "{read:?}");
                assert_eq!(
                    read.value.get("content"),
                    Some(&json!("parity reference workspace\n")),
                    "{read:?}"
                );
                assert!(read.warnings.is_empty(), "{read:?}");

                // The same call through the schema's generic extension request
                // (`ClientRequest::ExtMethodRequest`, answered as raw JSON).
                let params = serde_json::value::to_raw_value(
                    &json!({"name": "read_file", "arguments": {"path": "notes/hello.txt"}}),
                )
                .expect("raw params");
                let raw = cx
                    .send_request(ClientRequest::ExtMethodRequest(ExtRequest::new(
                        "_parity/tool",
                        params.into(),
                    )))
                    .block_task()
                    .await?;
                assert_eq!(raw["outcome"], json!("ok"), "{raw}");
                assert!(raw["value"]["content"].is_string(), "{raw}");

                // A protocol error (no tool name) surfaces as the SDK's error, code −32602.
                let bad = cx
                    .send_request(ClientRequest::ExtMethodRequest(ExtRequest::new(
                        "_parity/tool",
                        serde_json::value::to_raw_value(&json!({"arguments": {}}))
                            .expect("raw params")
                            .into(),
                    )))
                    .block_task()
                    .await
                    .expect_err("a tool call without `name` is a JSON-RPC error");
                assert_eq!(bad.code, ErrorCode::INVALID_PARAMS, "{bad:?}");

                Ok(session_id)
            }),
    )
    .await;
    let session_id = result.unwrap_or_else(|e| panic!("SDK client exchange failed: {e:?}"));
    assert_agent_gone(&mark);

    let updates = updates.lock().unwrap();
    let texts: Vec<&str> = updates
        .iter()
        .filter(|n| n.session_id == session_id)
        .filter_map(|n| match &n.update {
            SessionUpdate::AgentMessageChunk(ContentChunk {
                content: ContentBlock::Text(t),
                ..
            }) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains(ECHO_PREFIX) && t.contains("hello from the SDK")),
        "an agent_message_chunk echoing the prompt: {updates:?}"
    );
}

/// The SDK's session API (`build_session` → `ActiveSession`): the prompt's chunk and its
/// response arrive on the session's update stream; a `wait_for_cancel` turn ends `cancelled`
/// after the SDK client sends `session/cancel`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_session_api_prompt_and_cancel() {
    let (agent, mark) = reference_agent();

    let result = within(
        "the SDK session exchange",
        Client
            .v1()
            .name("parity-tests-acp-sdk-session")
            .connect_with(agent, async |cx: ConnectionTo<Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                cx.build_session(cwd())
                    .block_task()
                    .run_until(async |SessionSetup { mut session, .. }| {
                        session.send_prompt("via the session API")?;
                        let text = session.read_to_string().await?;
                        assert!(
                            text.starts_with(ECHO_PREFIX) && text.contains("via the session API"),
                            "{text:?}"
                        );

                        // wait_for_cancel: nothing arrives until session/cancel.
                        session.send_prompt("wait_for_cancel")?;
                        session
                            .connection()
                            .send_notification(CancelNotification::new(
                                session.session_id().clone(),
                            ))?;
                        // The reference sends nothing in a turn it keeps open: the next item on
                        // the stream is the prompt's response.
                        let stop = match session.read_update().await? {
                            SessionMessage::PromptResponse(r) => r?.stop_reason,
                            SessionMessage::Message(Dispatch::Notification(n)) => {
                                panic!("no update expected in a cancelled turn: {n:?}")
                            }
                            SessionMessage::Message(other) => {
                                panic!("unexpected message from the agent: {other:?}")
                            }
                            other => panic!("unexpected session message: {other:?}"),
                        };
                        assert_eq!(stop, StopReason::Cancelled);
                        Ok(())
                    })
                    .await
            }),
    )
    .await;
    result.unwrap_or_else(|e| panic!("SDK session exchange failed: {e:?}"));
    assert_agent_gone(&mark);
}
