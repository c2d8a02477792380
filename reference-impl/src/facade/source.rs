//! In-process capability sources (seed §1.1 `CapabilitySource`; rules 4, 5, 31).
//!
//! A source is registered when the facade is built; registration is the operator's
//! grant, so a source has no tool filter. A session-bound source
//! ([`CapabilitySource::requires_session`]) is invisible and unreachable without a
//! resolved [`SessionCtx`]; any resolved context admits every session-bound source, and
//! routing to the right channel is the source's own job.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::registry::SessionCtx;
use crate::dispatcher::{Dispatcher, OutcomeKind, ToolCall};

/// A boxed future returned by [`CapabilitySource::call`].
pub type SourceFuture<'a> = Pin<Box<dyn Future<Output = SourceResult> + Send + 'a>>;

/// One tool a source offers: the fields discovery publishes (rule 6).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceTool {
    /// The bare tool name.
    pub name: String,
    /// What the tool does; empty when the source gives none.
    pub description: String,
    /// A JSON Schema object for the arguments; pre-flight validates against it (rule 28).
    pub input_schema: Value,
    /// MCP tool annotations (`readOnlyHint`, `destructiveHint`, …), or `Value::Null`.
    pub annotations: Value,
    /// The `outputSchema` the direct catalogue publishes (the payload of every successful
    /// call conforms to it), or `Value::Null` for none.
    pub output_schema: Value,
}

/// What a source call returned (rule 31): a payload and whether it is an error.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceResult {
    /// The payload; the facade returns it as JSON text content (and as
    /// `structuredContent` when it is an object).
    pub payload: Value,
    /// Whether the call failed; becomes `isError`.
    pub is_error: bool,
}

/// An in-process provider of tools.
pub trait CapabilitySource: Send + Sync {
    /// The provider label used in discovery entries, prefixed names and audit lines.
    fn provider(&self) -> &str;
    /// The tools offered to `ctx` (`None` = anonymous; a session-bound source is never
    /// asked anonymously).
    fn tools(&self, ctx: Option<&SessionCtx>) -> Vec<SourceTool>;
    /// Calls bare tool `tool` with arguments that passed pre-flight.
    fn call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        tool: &'a str,
        args: Value,
    ) -> SourceFuture<'a>;
    /// Whether the source's tools need a resolved session (default: no).
    fn requires_session(&self) -> bool {
        false
    }
}

/// A session-bound demo source (seed test `session_source_discovers_and_executes_with_ctx`):
/// provider label as given (default `echo`), one tool `echo_channel` that returns
/// `{"channel": <ctx channel>, …arguments}`. Its schema allows any object with an
/// optional integer `x`.
#[derive(Debug, Clone)]
pub struct EchoSource {
    provider: String,
    tool: String,
}

impl EchoSource {
    /// The source with `provider` label and bare tool name `tool`.
    pub fn new(provider: impl Into<String>, tool: impl Into<String>) -> Self {
        EchoSource {
            provider: provider.into(),
            tool: tool.into(),
        }
    }
}

impl CapabilitySource for EchoSource {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn tools(&self, _ctx: Option<&SessionCtx>) -> Vec<SourceTool> {
        vec![SourceTool {
            name: self.tool.clone(),
            description: "Echoes the caller's channel and its arguments.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"x": {"type": "integer"}, "note": {"type": "string"}},
            }),
            annotations: json!({"readOnlyHint": true}),
            output_schema: Value::Null,
        }]
    }

    fn call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        _tool: &'a str,
        args: Value,
    ) -> SourceFuture<'a> {
        Box::pin(async move {
            let mut payload = Map::new();
            payload.insert(
                "channel".into(),
                ctx.map_or(Value::Null, |c| Value::from(c.channel_id.clone())),
            );
            if let Value::Object(args) = args {
                payload.extend(args);
            }
            SourceResult {
                payload: Value::Object(payload),
                is_error: false,
            }
        })
    }

    fn requires_session(&self) -> bool {
        true
    }
}

/// The reference [`Dispatcher`] mounted as a host-level source (DESIGN "facade": it can
/// front the reference dispatcher, so equivalence also covers MCP over HTTP). Its payload
/// is the dispatcher's [`crate::dispatcher::Outcome`] JSON; `is_error` is set for every
/// outcome that is not `ok`.
#[derive(Debug, Clone)]
pub struct DispatcherSource {
    provider: String,
    dispatcher: Arc<Dispatcher>,
}

impl DispatcherSource {
    /// The dispatcher under `provider`.
    pub fn new(provider: impl Into<String>, dispatcher: Arc<Dispatcher>) -> Self {
        DispatcherSource {
            provider: provider.into(),
            dispatcher,
        }
    }

    /// The dispatcher this source calls.
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.dispatcher
    }
}

impl CapabilitySource for DispatcherSource {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn tools(&self, _ctx: Option<&SessionCtx>) -> Vec<SourceTool> {
        self.dispatcher
            .tools()
            .into_iter()
            .map(|t| SourceTool {
                name: t.name,
                description: t.description,
                input_schema: t.input_schema,
                annotations: serde_json::to_value(t.annotations).unwrap_or(Value::Null),
                // The payload is the outcome object, as over MCP stdio.
                output_schema: crate::mcp::features::outcome_schema(),
            })
            .collect()
    }

    fn call<'a>(
        &'a self,
        _ctx: Option<&'a SessionCtx>,
        tool: &'a str,
        args: Value,
    ) -> SourceFuture<'a> {
        Box::pin(async move {
            let outcome = self.dispatcher.call(ToolCall::new(tool, args)).await;
            let is_error = !matches!(outcome.kind, OutcomeKind::Ok { .. });
            SourceResult {
                payload: outcome.to_json(),
                is_error,
            }
        })
    }
}
