//! Layer 0, the shared vocabulary: exit codes, text files read with located errors, the located
//! YAML reader, and small helpers (`outln!`, clipping, JSON type names).
//!
//! Invariant: imports nothing from the harness; every other layer may import it.

pub mod exit;
pub mod secret;
pub mod textfile;
pub mod util;
pub(crate) mod yaml;
