//! Layer 1, transport: newline frames and the wire log (`wire`, `framelog`), peer processes and
//! their reaping (`peer`, `watchdog`), the hygiene probe's process tracker (`proctrack`), and the
//! Streamable HTTP client and its bridge to a line-oriented peer (`http`, `http_bridge`).
//!
//! Invariant: knows bytes, lines, processes and HTTP exchanges, never a JSON-RPC method, a check
//! or a verdict; imports only `base`.

pub mod framelog;
pub mod http;
pub mod http_bridge;
pub mod peer;
pub mod proctrack;
pub mod watchdog;
pub mod wire;
