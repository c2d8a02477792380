//! Where the official MCP and ACP JSON schemas are found, for the tests that cross-check against
//! them. They are never copied into the repository; they are read at test time from:
//!
//! - `PARITY_SCHEMAS_DIR`, a directory holding `mcp/` (one `<revision>.json` per revision, and
//!   `examples-2026-07-28/`) and `acp/` (`v1-schema.json`, `v1-meta.json`), when it is set;
//! - otherwise `<workspace>/../shared/spec/schemas`, when that directory exists.
//!
//! When neither is there, a cross-checking test writes one line to stderr naming
//! `PARITY_SCHEMAS_DIR` and what it did not cross-check, and passes. With
//! `PARITY_REQUIRE_SCHEMAS=1` (CI's `.ci/run` sets it) a missing schema is a failure instead.
//! A `PARITY_SCHEMAS_DIR` that is set but does not exist is always a failure: it is a typo,
//! not a clone without the schemas.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable naming the schema directory.
pub const DIR_VAR: &str = "PARITY_SCHEMAS_DIR";
/// The variable that turns a missing schema into a failure (`1`).
pub const REQUIRE_VAR: &str = "PARITY_REQUIRE_SCHEMAS";

/// The default location, beside the workspace.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec/schemas")
}

/// Whether a missing schema must fail the test (`PARITY_REQUIRE_SCHEMAS=1`).
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1")
}

/// The schema directory's `sub` directory (`mcp` or `acp`), or `None` after saying what was
/// not cross-checked (`what`) when the schemas are absent and not required.
///
/// # Panics
///
/// When the directory is absent and `PARITY_REQUIRE_SCHEMAS=1`, or when `PARITY_SCHEMAS_DIR`
/// names a directory that does not exist.
pub fn dir(sub: &str, what: &str) -> Option<PathBuf> {
    let (base, explicit) = match std::env::var_os(DIR_VAR) {
        Some(d) if !d.is_empty() => (PathBuf::from(d), true),
        _ => (default_dir(), false),
    };
    let path = base.join(sub);
    if path.is_dir() {
        return Some(path);
    }
    if explicit {
        panic!(
            "{DIR_VAR}={} has no {sub}/ directory (it must hold mcp/ and acp/)",
            base.display()
        );
    }
    if required() {
        panic!(
            "the official {sub} schemas are not at {} and {REQUIRE_VAR}=1: set {DIR_VAR} to the \
             directory holding mcp/ and acp/",
            path.display()
        );
    }
    // Straight to the process's stderr, past the test harness's capture, so the line shows
    // even when the test passes.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: official {sub} schemas not found (set {DIR_VAR}); not cross-checked: {what}"
    );
    None
}
