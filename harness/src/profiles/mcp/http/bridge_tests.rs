//! The Streamable HTTP bridge seen through the check model: what a check shows of a bridged
//! peer (its notes in the evidence, the body cap in the reply). The bridge's own tests are in
//! `transport::http_bridge`; these need the engine above it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::transport::http_bridge::peer;
use crate::transport::http_bridge::tests::{one_line, serve, serve_endless_event};
use std::time::Duration;

#[tokio::test]
async fn a_bridged_http_status_shows_in_the_evidence_of_a_check() {
    let url = serve(
        "HTTP/1.1 415 Unsupported Media Type\r\nContent-Type: text/plain\r\nContent-Length: 24\r\n\r\nunsupported content type",
    )
    .await;
    let mut p = peer(&url, 1 << 20, Duration::from_secs(10)).unwrap();
    let _ = one_line(&mut p, "garbage").await;
    let shown = crate::engine::check::evidence(&p.events()).join("\n");
    assert!(
        shown.contains("· ") && shown.contains("HTTP 415"),
        "{shown}"
    );
}

#[tokio::test]
async fn an_endless_event_is_said_to_stop_at_the_body_cap_with_the_bytes_that_came() {
    let url = serve_endless_event().await;
    let timing = crate::engine::check::Timing::scaled(2.0);
    let mut target = crate::engine::check::McpTarget::new(
        "endless",
        crate::transport::peer::PeerSpec::new("-", Vec::new()),
    );
    target.http = Some(url);
    let ctx = crate::engine::check::Ctx::new(
        std::sync::Arc::new(target),
        "2025-11-25",
        timing,
        std::sync::Arc::default(),
        "endless".into(),
    );
    let Ok(mut c) = ctx.start_raw().await else {
        panic!("the bridge did not start");
    };
    let reply = c.request("ping", serde_json::json!({})).await;
    assert!(
        matches!(reply, Ok(crate::protocol::mcp::Reply::Timeout)),
        "{reply:?}"
    );
    ctx.close(c).await;
    let note = ctx.unread_note().unwrap_or_default();
    let cap = crate::transport::http::DEFAULT_BODY_CAP;
    assert!(
        note.starts_with(crate::transport::http::BODY_CAPPED)
            && note.contains(&format!("size cap of {cap} bytes")),
        "{note}"
    );
    let came: u64 = note
        .split("after ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(came > cap as u64, "{note}");
}
