//! parity-harness: a conformance and equivalence harness for JSON-RPC tool surfaces.
//!
//! Data flow: target → plan of cases (`check@binding#revision`) → runner (bounded parallel
//! jobs) → per case: peer → protocol driver → transport frames → observations → verdict with
//! evidence → reporters. See `docs/architecture.md`.

pub mod bench;
pub mod catalogue_doc;
pub mod check;
pub mod checks_mcp;
pub mod cli;
pub mod logging;
pub mod mcp;
pub mod peer;
pub mod report;
pub mod run;
pub mod scenario;
pub mod selftest;
pub mod util;
pub mod validate;
pub mod wire;
