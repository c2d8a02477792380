//! ACP sessions for checks: an agent started for one case, and its `initialize` at version 1,
//! with failures as `not-run` findings (DESIGN.md §Outcomes). The ACP client itself, with no
//! check model, is [`crate::protocol::acp`].

use crate::engine::check::{Ctx, Finding};
use crate::protocol::acp;
use crate::protocol::mcp::Client;
use serde_json::Value;

/// Starts a fresh agent for a case with nothing sent.
///
/// Errors: the agent could not be started (a `not-run` finding).
pub async fn start(ctx: &Ctx) -> Result<Client, Finding> {
    ctx.start_raw().await.map(acp::as_acp)
}

/// Starts a fresh agent and runs `initialize` at version 1. Returns the session and the
/// `initialize` result.
///
/// Errors (as `not-run` findings with the frames as evidence): the agent did not start, or
/// `initialize` got no result.
pub async fn open(ctx: &Ctx) -> Result<(Client, Value), Finding> {
    let mut c = start(ctx).await?;
    let reply = c
        .request("initialize", acp::initialize_params(acp::PROTOCOL_VERSION))
        .await;
    match reply {
        Ok(r) if r.result().is_some() => {
            let result = r.result().cloned().unwrap_or(Value::Null);
            Ok((c, result))
        }
        other => {
            let why = match &other {
                Ok(crate::protocol::mcp::Reply::Timeout) => {
                    format!("no response; {}", ctx.startup_advice())
                }
                Ok(r) => r.describe(),
                Err(e) => e.to_string(),
            };
            let (ev, tail) = ctx.close_explained(c).await;
            Err(Finding::not_run(
                format!("initialize failed: {why}{tail}"),
                ev,
            ))
        }
    }
}
