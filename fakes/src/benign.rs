//! Benign peers: correct but unusual MCP servers, each the reference with one layer that changes
//! *how* it answers without breaking a rule. They must pass the checks they list, so
//! `parity selftest` proves that each check does not cry wolf where a correct implementation
//! answers differently from the reference.

use crate::layer::{emit, parse, RequestFlood};
use crate::{BenignInfo, Fault, Io};
use serde_json::Value;

/// Leaves `id` out of error responses whose id is null, from 2025-11-25 on (the schema's
/// `JSONRPCErrorResponse` no longer requires it when the request's id could not be read).
struct IdlessErrors {
    /// The negotiated revision; a session with no `initialize` is modern (2026-07-28).
    revision: Option<String>,
}
impl Fault for IdlessErrors {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let Some(mut v) = parse(line) else {
            io.client_line(line);
            return;
        };
        if let Some(r) = v.pointer("/result/protocolVersion").and_then(Value::as_str) {
            self.revision = Some(r.to_string());
        }
        let modern_enough = self.revision.as_deref().is_none_or(|r| r >= "2025-11-25");
        if modern_enough && v.get("error").is_some() && v.get("id") == Some(&Value::Null) {
            if let Some(o) = v.as_object_mut() {
                o.remove("id");
            }
        }
        emit(io, &v);
    }
}

/// Holds each error response with a null id (a parse error, an invalid request) until the next
/// message the server sends has gone out: JSON-RPC fixes no order between responses, so a
/// server that answers concurrently may answer a later request first.
#[derive(Default)]
struct LateErrors {
    held: Vec<Vec<u8>>,
}
impl Fault for LateErrors {
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let is_null_error = parse(line)
            .is_some_and(|v| v.get("error").is_some() && v.get("id") == Some(&Value::Null));
        if is_null_error {
            self.held.push(line.to_vec());
            return;
        }
        io.client_line(line);
        for l in self.held.drain(..) {
            io.client_line(l);
        }
    }
}

/// How long [`SlowStart`] waits before it serves, in milliseconds, unless
/// [`SLOW_START_VAR`] says otherwise.
pub const SLOW_START_MS: u64 = 7000;

/// The environment variable that sets [`SlowStart`]'s wait in milliseconds (a decimal
/// integer; anything else means [`SLOW_START_MS`]). `parity selftest`, whose deadlines are
/// halved, sets a shorter wait that is still longer than its per-message deadline.
pub const SLOW_START_VAR: &str = "PARITY_FAKE_SLOW_START_MS";

/// Imports for seven seconds (sleeps before it reads anything), like a Python or Node server on
/// a loaded machine; then serves like the reference.
struct SlowStart;
impl Fault for SlowStart {
    fn on_start(&mut self, _io: &mut Io) {
        let ms = std::env::var(SLOW_START_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(SLOW_START_MS);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// The environment variable whose value [`EchoesSecrets`] repeats.
pub const ECHOED_SECRET_VAR: &str = "PARITY_FAKE_API_KEY";

/// Repeats the value of [`ECHOED_SECRET_VAR`] (when set) the way careless servers leak a
/// credential: on stderr at start, in the message of every error response, and in every
/// result that has `content`, as a text block holding serialized JSON that itself holds
/// serialized JSON (two escaping levels). A server may put anything in those places; the
/// peer proves that parity's reports redact it (docs/redaction.md).
struct EchoesSecrets {
    secret: Option<String>,
}
impl Fault for EchoesSecrets {
    fn on_start(&mut self, _io: &mut Io) {
        if let Some(s) = &self.secret {
            eprintln!("starting with {ECHOED_SECRET_VAR}={s}");
        }
    }
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        let (Some(secret), Some(mut v)) = (&self.secret, parse(line)) else {
            io.client_line(line);
            return;
        };
        if let Some(Value::String(m)) = v.pointer_mut("/error/message") {
            m.push_str(&format!(" (key {secret})"));
        }
        if let Some(Value::Array(content)) = v.pointer_mut("/result/content") {
            let inner = serde_json::json!({ "key": secret }).to_string();
            let outer = serde_json::json!({ "debug": inner, "key": secret }).to_string();
            content.push(serde_json::json!({ "type": "text", "text": outer }));
        }
        emit(io, &v);
    }
}

/// Every benign MCP peer, with the checks each must pass.
pub fn benign_catalogue() -> &'static [BenignInfo] {
    static BENIGN: std::sync::OnceLock<Vec<BenignInfo>> = std::sync::OnceLock::new();
    BENIGN.get_or_init(|| {
        vec![
            BenignInfo {
                name: "benign-idless-errors",
                description: "from 2025-11-25 leaves `id` out of error responses to requests whose id could not be read",
                passes: &[
                    "mcp.stdio.stdout-purity",
                    "mcp.base.parse-error",
                    "mcp.base.invalid-request",
                    "mcp.base.message-schema",
                ],
                make: || Box::new(IdlessErrors { revision: None }),
            },
            BenignInfo {
                name: "benign-late-errors",
                description: "answers a parse error or an invalid request only after the response to the next request (out of order)",
                passes: &["mcp.base.parse-error", "mcp.base.invalid-request"],
                make: || Box::<LateErrors>::default(),
            },
            BenignInfo {
                name: "benign-slow-start",
                description: "takes 7 s to start before it answers anything (longer than the 5 s per-message deadline)",
                passes: &[
                    "mcp.lifecycle.version-negotiation",
                    "mcp.base.ping",
                    "mcp.base.id-echo",
                ],
                make: || Box::new(SlowStart),
            },
            BenignInfo {
                name: "benign-request-flood",
                description: "once the initialize handshake is done, sends the client 10,000 ping and roots/list requests (legacy era) before it reads the next line, then serves like the reference",
                passes: &[
                    "mcp.base.parse-error",
                    "mcp.base.batch",
                    "mcp.base.batch-rejected",
                    "mcp.base.invalid-request",
                    "mcp.base.id-echo",
                    "mcp.base.ping",
                    "mcp.base.notification-unanswered",
                ],
                make: || Box::new(RequestFlood::new(&["ping", "roots/list"], &["notifications/initialized"])),
            },
            BenignInfo {
                name: "benign-echoes-secrets",
                description: "repeats the value of PARITY_FAKE_API_KEY on stderr, in error messages and in a text block of nested serialized JSON in each result with content",
                passes: &["mcp.stdio.stdout-purity", "mcp.base.message-schema"],
                make: || Box::new(EchoesSecrets {
                    secret: std::env::var(ECHOED_SECRET_VAR).ok(),
                }),
            },
        ]
        .into_iter()
        .chain(crate::features_zoo::benign())
        .collect()
    })
}
