//! Layer 3, the engine: the check model, cases and ids (`check`), the profile registry
//! (`profile`), tool-call outcomes (`outcome`), the target and scenario formats (`target`,
//! `scenario`, and the declarations of facades, hosts, dispatchers and guards, `decl`),
//! selection (`select`), the runner and its report (`run`), redaction of what is reported
//! (`redact`), the bundled reference as a target (`reference`), what a profile gives the
//! self-test (`selftest`), and HTTP surfaces (`http_surface`).
//!
//! Invariant: the engine plans, runs and records cases without knowing what a profile checks;
//! imports only the layers below it. `monitors` and `surface` are what several profiles share
//! (JSON-RPC frame monitors; surfaces to call tools on), `acp` the ACP session a check opens.

pub mod acp;
pub mod check;
pub mod decl;
pub mod gen;
pub mod http_surface;
pub mod monitors;
pub mod outcome;
pub mod profile;
pub mod redact;
pub mod reference;
pub mod run;
pub mod scenario;
pub mod select;
pub mod selftest;
pub mod surface;
pub mod target;
