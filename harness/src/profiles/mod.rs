//! Layer 4, the profiles, one folder each: `mcp` (stdio, both eras), `mcp_http` (Streamable
//! HTTP), `acp`, `equivalence` (with its generated calls), `facade`, `hygiene`, `dispatcher` and
//! `guard`.
//!
//! Invariant: a profile holds its catalogue and its checks; it imports the engine and the layers
//! below, never another profile.

pub mod acp;
pub mod dispatcher;
pub mod equivalence;
pub mod facade;
pub mod guard;
pub mod hygiene;
pub mod mcp;
pub mod mcp_http;
