//! Layer 2, protocol: the MCP and ACP client drivers (`mcp`, `acp`), parity's own shape
//! validation (`validate`), the transcript format (`transcript`) and its normalizer, comparison
//! and replay driver (`replay`).
//!
//! Invariant: speaks JSON-RPC over a transport and says what came; judges nothing (no check
//! model); imports only `base` and `transport`.

pub mod acp;
pub mod mcp;
pub mod replay;
pub mod transcript;
pub mod validate;
