//! parity-harness: a conformance and equivalence harness for JSON-RPC tool surfaces.
//!
//! The crate is in layers, each importing only from the layers below it (`docs/architecture.md`
//! has the map; `guard.toml` checks it):
//!
//! `base` → `transport` → `protocol` → `engine` → `profiles` → `reports` and `features` → `cli`.
//!
//! Data flow: target → plan of cases (`check@binding#revision`) → runner (bounded parallel
//! jobs) → per case: peer → protocol driver → transport frames → observations → verdict with
//! evidence → reporters.

pub mod base;
pub mod cli;
pub mod engine;
pub mod features;
pub mod profiles;
pub mod protocol;
pub mod reports;
pub mod transport;

/// The library entry point for `cargo test`: [`api::Run`] (docs/library.md).
pub use cli::api;
