//! parity's integration tests, in one binary (one link of the harness instead of one per area).
//!
//! One module per area; the shared helpers are `common` (the built `parity` binary, runs and
//! their verdicts) and `official` (where the official MCP and ACP schemas are found). Run one
//! area with a filter: `cargo test -p parity-tests --test main bad_peers::`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod official;

mod acp_bad_peers;
mod acp_reference;
mod acp_schemas;
mod acp_sdk_client;
mod action;
mod bad_peers;
mod bench_parts;
mod benign_peers;
mod ci;
mod cli;
mod credentials;
mod dispatcher;
mod docs;
mod equivalence;
mod facade;
mod fuzz;
mod guard;
mod html_report;
mod hygiene;
mod library;
mod package;
mod peer_death;
mod redaction;
mod reference_bytes;
mod rmcp_client;
mod rmcp_http;
mod scenarios;
mod schemas;
mod selftest;
mod server_features;
mod snapshot_runs;
mod transcripts;
