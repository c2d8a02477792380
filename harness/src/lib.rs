//! parity-harness: a conformance and equivalence harness for JSON-RPC tool surfaces.
//!
//! Data flow: target → plan of cases (`check@binding#revision`) → runner (bounded parallel
//! jobs) → per case: peer → protocol driver → transport frames → observations → verdict with
//! evidence → reporters. See `docs/architecture.md`.

pub mod acp;
pub mod baseline;
pub mod bench;
pub mod catalogue_doc;
pub mod check;
pub mod checks_acp;
pub mod checks_http;
pub mod checks_mcp;
pub mod cli;
pub mod dispatcher;
pub mod equivalence;
pub mod facade;
pub mod framelog;
/// Generated tool-call arguments from JSON Schema, run seeded with shrinking (generated equivalence).
pub mod gen;
pub mod guard;
pub mod html;
pub mod http;
pub mod http_bridge;
pub mod hygiene;
pub mod junit;
pub mod logging;
pub mod mcp;
pub mod outcome;
pub mod peer;
pub mod proctrack;
pub mod record;
pub mod redact;
pub mod replay;
pub mod report;
pub mod report_file;
pub mod run;
pub mod scenario;
pub mod select;
pub mod selftest;
pub mod snapshot;
pub mod summary;
pub mod target;
pub mod textfile;
pub mod transcript;
pub mod util;
pub mod validate;
pub mod watchdog;
pub mod wire;
pub(crate) mod yaml;
