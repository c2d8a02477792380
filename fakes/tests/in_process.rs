//! Faulty peers used in-process: the reference behind a fault layer over `tokio::io::duplex`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parity_reference::dispatcher::DispatcherConfig;
use parity_reference::mcp::McpServerConfig;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Sends `input` lines to the fault named `name` and returns every stdout line until EOF.
async fn exchange(name: &str, input: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let config = McpServerConfig::new(DispatcherConfig::new(dir.path()));
    let fault = (parity_fakes::find(name).unwrap().make)();
    let (mut client_w, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, client_r) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(parity_fakes::serve_faulty(
        fault, config, server_r, server_w,
    ));
    for line in input {
        client_w.write_all(line.as_bytes()).await.unwrap();
        client_w.write_all(b"\n").await.unwrap();
    }
    drop(client_w);
    let mut lines = BufReader::new(client_r).lines();
    let mut out = Vec::new();
    while let Ok(Some(l)) = lines.next_line().await {
        out.push(l);
    }
    let _ = server.await;
    out
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn stdout_banner_comes_before_the_first_message() {
    let out = exchange("stdout-banner", &[INIT]).await;
    assert!(out[0].starts_with("parity-fake:"), "{out:?}");
    assert!(
        out[1].contains("\"protocolVersion\":\"2025-11-25\""),
        "{out:?}"
    );
}

#[tokio::test]
async fn version_echo_echoes_an_unsupported_version_the_reference_would_not() {
    let clean = exchange("json-log-line", &[INIT]).await;
    assert!(
        clean[0].contains("\"protocolVersion\":\"2025-11-25\""),
        "{clean:?}"
    );
    let out = exchange("version-echo", &[INIT]).await;
    assert!(
        out[0].contains("\"protocolVersion\":\"1999-01-01\""),
        "{out:?}"
    );
}

#[tokio::test]
async fn garbage_exits_ends_the_session_on_an_unparsable_line() {
    let out = exchange(
        "garbage-exits",
        &[
            INIT,
            "garbage",
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        ],
    )
    .await;
    assert!(out.iter().all(|l| !l.contains("\"id\":2")), "{out:?}");
}
