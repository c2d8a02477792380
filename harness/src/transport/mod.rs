//! Layer 1, transport: newline frames and the wire log (`wire`, `framelog`), peer processes and
//! their reaping (`peer`, `watchdog`), the hygiene probe's process tracker (`proctrack`), and the
//! Streamable HTTP client and its bridge to a line-oriented peer (`http`, `http_bridge`; built
//! with the `http` feature, and without it `http_off.rs` as `http_bridge`, which refuses URLs).
//!
//! Invariant: knows bytes, lines, processes and HTTP exchanges, never a JSON-RPC method, a check
//! or a verdict; imports only `base`.

pub mod framelog;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "http")]
pub mod http_bridge;
#[cfg(not(feature = "http"))]
#[path = "http_off.rs"]
pub mod http_bridge;
pub mod peer;
pub mod proctrack;
pub mod watchdog;
pub mod wire;
