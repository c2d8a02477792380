//! A real client written by others, the `rmcp` crate, drives `parity reference mcp` over a
//! child process's pipes in both protocol eras: the legacy `initialize` handshake
//! (`ServiceExt::serve`) and the 2026-07-28 lifecycle (`server/discover`, per-request `_meta`,
//! via `ClientServiceExt::serve_with_lifecycle` with `ClientLifecycleMode::Discover`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use rmcp::model::{CallToolRequestParams, ClientConfig, ErrorCode, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceError, ServiceExt};
use serde_json::json;
use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

const TOOLS: [&str; 6] = [
    "read_file",
    "write_file",
    "list_dir",
    "exec",
    "status",
    "retry",
];

/// Upper bound for any one step; never a timing assertion.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within 60 s"))
}

fn reference() -> TokioChildProcess {
    let cmd = tokio::process::Command::new(common::parity()).configure(|c| {
        c.args(["reference", "mcp"]);
    });
    TokioChildProcess::new(cmd).expect("spawn parity reference mcp")
}

fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().cloned().expect("arguments object")
}

/// The same tool exchange in either era: list, read README.md, call an unknown tool.
async fn exercise(client: &RunningService<RoleClient, ClientConfig>, era: &str) {
    let tools = within("tools/list", client.list_all_tools())
        .await
        .unwrap_or_else(|e| panic!("{era}: tools/list failed: {e}"));
    let names: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let expected: BTreeSet<String> = TOOLS.iter().map(|s| s.to_string()).collect();
    assert_eq!(names, expected, "{era}: the six reference tools");
    assert_eq!(tools.len(), 6, "{era}: no tool listed twice");
    for t in &tools {
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{era}: {} inputSchema.type",
            t.name
        );
    }

    let read = within(
        "tools/call read_file",
        client.call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(args(json!({"path": "README.md"}))),
        ),
    )
    .await
    .unwrap_or_else(|e| panic!("{era}: read_file failed: {e}"));
    assert_eq!(read.is_error, Some(false), "{era}: isError false: {read:?}");
    let text: String = read
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect();
    assert!(
        text.contains("parity reference workspace"),
        "{era}: README.md content in the text: {read:?}"
    );
    let structured = read
        .structured_content
        .clone()
        .unwrap_or_default()
        .to_string();
    assert!(
        structured.contains("parity reference workspace"),
        "{era}: README.md content in structuredContent: {read:?}"
    );

    let unknown = within(
        "tools/call unknown",
        client
            .call_tool(CallToolRequestParams::new("no_such_tool").with_arguments(args(json!({})))),
    )
    .await;
    match unknown {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(
                e.code,
                ErrorCode::INVALID_PARAMS,
                "{era}: unknown tool code: {e:?}"
            );
            assert!(e.message.contains("no_such_tool"), "{era}: {e:?}");
        }
        other => panic!("{era}: an unknown tool must be a protocol error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_legacy_era() {
    let config = ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_11_25);
    let client = within("initialize", config.serve(reference()))
        .await
        .expect("rmcp initialize handshake with the reference");
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert!(
        info.capabilities.tools.is_some(),
        "tools capability declared"
    );
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("parity-reference")
    );
    exercise(&client, "2025-11-25").await;
    within("shutdown", client.cancel()).await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_client_modern_era() {
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = within(
        "server/discover",
        ClientConfig::default().serve_with_lifecycle(reference(), lifecycle),
    )
    .await
    .expect("rmcp discover lifecycle with the reference");
    let info = client.peer_info().expect("server info after discover");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    assert!(
        info.capabilities.tools.is_some(),
        "tools capability declared"
    );
    exercise(&client, "2026-07-28").await;
    within("shutdown", client.cancel()).await.expect("shutdown");
}
