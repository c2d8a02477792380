//! Layer 5, features beside the reports: the recording proxy (`record`) and the snapshot store
//! (`snapshot`).
//!
//! Invariant: like the reports, uses the engine and the layers below; no profile names them.

pub mod record;
pub mod snapshot;
