//! parity-reference: the reference implementation that parity checks by default.
//!
//! The crate has two layers, following the "reference implementation" section of
//! `DESIGN.md`:
//!
//! - [`dispatcher`]: the one tool entry point, [`dispatcher::Dispatcher::call`], which
//!   turns a [`dispatcher::ToolCall`] into an [`dispatcher::Outcome`]. All tool logic
//!   (the six workspace tools, the refusal catalogue, the lifecycle and the policy mode)
//!   lives here.
//! - [`mcp`]: an MCP stdio server over the dispatcher, speaking both protocol eras
//!   (the `initialize` handshake of 2024-11-05 … 2025-11-25 and the stateless
//!   2026-07-28 revision). **Architecture invariant:** surfaces hold no tool logic; they
//!   translate envelopes and call the dispatcher.
//! - [`acp`]: an ACP v1 (Agent Client Protocol) stdio agent over the same dispatcher:
//!   `initialize`, `session/new`, deterministic `session/prompt` turns, and tool calls
//!   through the `_parity/tool` extension method. Same invariant: no tool logic.
//!
//! - [`credentials`]: credential-file hygiene (seed rules 38–56): the per-key credential
//!   store, the child-environment builder, and the `parity reference launch` host and
//!   `parity reference bridge` stdio-to-HTTP bridge that pass a bearer by file path, never by
//!   value.
//!
//! The crate never depends on the harness or the fakes: the checker and the thing it
//! checks are independent implementations.

#![forbid(unsafe_code)]

pub mod acp;
pub mod credentials;
pub mod dispatcher;
pub mod facade;
pub mod mcp;
