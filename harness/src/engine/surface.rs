//! Surfaces: one backend reached through one protocol (MCP at a revision over stdio or
//! Streamable HTTP, or ACP v1), started, asked for its tools, called and closed the same way
//! whatever checks use it (docs/equivalence.md §Surfaces). The equivalence and dispatcher
//! profiles compare calls across them.

use crate::engine::check::{Timing, Verdict};
use crate::engine::outcome::{self, AcpRules, McpRules};
use crate::protocol::acp;
use crate::protocol::mcp::{Client, Era, Reply, MODERN_REVISION};
use crate::transport::peer::{Peer, PeerSpec};
use serde_json::{json, Value};

/// How to start one surface.
#[derive(Debug, Clone)]
pub enum SurfaceSpec {
    /// MCP at one revision (legacy: `initialize` at it; modern: 2026-07-28), over stdio, or
    /// over Streamable HTTP when `http` is set.
    Mcp {
        /// The command (stdio).
        spec: PeerSpec,
        /// The revision.
        revision: String,
        /// Outcome extraction.
        rules: McpRules,
        /// Streamable HTTP: the endpoint, or a command that starts a fresh server per
        /// session (printing its URL first), so a surface opened for a stateful case starts
        /// from a fresh workspace as a stdio peer does.
        http: Option<crate::engine::http_surface::FacadeSource>,
    },
    /// An ACP agent and its tool method.
    Acp {
        /// The command.
        spec: PeerSpec,
        /// The tool extension method.
        method: String,
        /// The method's params template (`[surfaces.acp] params`), `None` for the ToolCall
        /// map ([`crate::protocol::acp::fill_params`]).
        params: Option<Value>,
        /// Outcome extraction.
        rules: AcpRules,
    },
}

impl SurfaceSpec {
    /// The label used in reports: `mcp-stdio#<revision>` or `acp#v1`.
    pub fn label(&self) -> String {
        match self {
            SurfaceSpec::Mcp {
                revision,
                http: Some(_),
                ..
            } => format!("{}#{revision}", crate::engine::check::HTTP_BINDING),
            SurfaceSpec::Mcp { revision, .. } => {
                format!("{}#{revision}", crate::engine::check::STDIO_BINDING)
            }
            SurfaceSpec::Acp { .. } => format!("{}#{}", acp::BINDING, acp::REVISION),
        }
    }
}

/// A call as messages show it: the tool's name and its arguments as JSON, clipped to 200
/// bytes (`read_file {"path":"a"}`).
pub fn call_text(name: &str, arguments: &Value) -> String {
    format!(
        "{name} {}",
        crate::base::util::clip(&arguments.to_string(), 200)
    )
}

/// A live surface: a started peer with its session open.
pub struct LiveSurface {
    /// The label ([`SurfaceSpec::label`]).
    pub label: String,
    spec: SurfaceSpec,
    client: Client,
    session: Option<String>,
    /// The HTTP server this surface started, stopped on close.
    server: Option<crate::engine::http_surface::Started>,
}

/// Why one call through the surfaces gave no verdict of equality.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// Every surface answered, and the outcomes (or envelopes) differ: the text says where.
    Mismatch(String),
    /// A surface did not answer: it timed out (`timeout`), or closed, failed to start or could
    /// not be written to. Never shrunk; the case is `timeout` or `not-run`.
    Transport {
        /// The surface ran past the per-message deadline.
        timeout: bool,
        /// What happened, naming the surface.
        text: String,
    },
}

impl CallFailure {
    /// A transport failure that is not a timeout, saying `text`.
    pub fn transport(text: String) -> CallFailure {
        CallFailure::Transport {
            timeout: false,
            text,
        }
    }
    /// The verdict the failure gives a case.
    pub fn verdict(&self) -> Verdict {
        match self {
            CallFailure::Mismatch(_) => Verdict::Fail,
            CallFailure::Transport { timeout: true, .. } => Verdict::Timeout,
            CallFailure::Transport { .. } => Verdict::NotRun,
        }
    }
    /// The text of the failure.
    pub fn text(&self) -> &str {
        match self {
            CallFailure::Mismatch(t) | CallFailure::Transport { text: t, .. } => t,
        }
    }
}

impl From<CallFailure> for String {
    fn from(f: CallFailure) -> String {
        match f {
            CallFailure::Mismatch(t) | CallFailure::Transport { text: t, .. } => t,
        }
    }
}

/// One call's result on one surface.
#[derive(Debug, Clone)]
pub struct Called {
    /// The normalized outcome.
    pub outcome: Value,
    /// The whole JSON-RPC response.
    pub response: Value,
}

impl LiveSurface {
    /// Starts the surface and opens its session: MCP legacy `initialize` (+ initialized) at the
    /// revision, MCP modern nothing, ACP `initialize` at 1 and `session/new` with no MCP servers.
    ///
    /// Errors: the peer did not start, or the handshake failed (the text says how).
    pub async fn open(spec: &SurfaceSpec, timing: Timing) -> Result<LiveSurface, String> {
        // A handshake that failed: the peer is shut down, and the text gets the last lines of
        // its stderr and how it exited, which usually say why.
        // A facade parity started for an HTTP surface is the process whose stderr says why.
        async fn failed(
            client: &mut Client,
            server: &mut Option<crate::engine::http_surface::Started>,
            grace: crate::transport::peer::ShutdownGrace,
            why: String,
        ) -> String {
            let _ = client.peer.shutdown(grace).await;
            let peer = match server.as_mut() {
                Some(s) => {
                    let _ = s.peer.shutdown(grace).await;
                    &s.peer
                }
                None => &client.peer,
            };
            format!(
                "{why}{}",
                crate::engine::run::stderr_and_exit(&peer.events())
            )
        }
        let label = spec.label();
        let (peer_spec, era, revision) = match spec {
            SurfaceSpec::Mcp { spec, revision, .. } => (spec, Era::of(revision), revision.clone()),
            SurfaceSpec::Acp { spec, .. } => (spec, Era::Legacy, acp::REVISION.to_string()),
        };
        let mut server = None;
        let peer = match spec {
            SurfaceSpec::Mcp { http: Some(h), .. } => {
                let (url, started) = crate::engine::http_surface::open(h, timing.case)
                    .await
                    .map_err(|e| format!("{label}: {e}"))?;
                server = started;
                crate::transport::http_bridge::peer(&url, peer_spec.line_cap, timing.case)
                    .map_err(|e| format!("{label}: {e}"))?
            }
            _ => Peer::spawn(peer_spec).map_err(|e| format!("{label}: {e}"))?,
        };
        let mut client = Client::new(peer, era, &revision, timing.message);
        let mut session = None;
        match spec {
            SurfaceSpec::Mcp { revision, .. } if era == Era::Legacy => {
                let r = match client.initialize(revision).await {
                    Ok(r) => r,
                    Err(e) => {
                        return Err(failed(
                            &mut client,
                            &mut server,
                            timing.grace,
                            format!("{label}: initialize: {e}"),
                        )
                        .await)
                    }
                };
                let got = r
                    .result()
                    .and_then(|x| x.get("protocolVersion"))
                    .and_then(Value::as_str);
                if got != Some(revision.as_str()) {
                    let why = format!("{label}: initialize failed: {}", r.describe());
                    return Err(failed(&mut client, &mut server, timing.grace, why).await);
                }
            }
            SurfaceSpec::Mcp { .. } => {}
            SurfaceSpec::Acp { .. } => {
                client = acp::as_acp(client);
                let r = match client
                    .request("initialize", acp::initialize_params(acp::PROTOCOL_VERSION))
                    .await
                {
                    Ok(r) => r,
                    Err(e) => {
                        return Err(failed(
                            &mut client,
                            &mut server,
                            timing.grace,
                            format!("{label}: initialize: {e}"),
                        )
                        .await)
                    }
                };
                if r.result().is_none() {
                    let why = format!("{label}: initialize failed: {}", r.describe());
                    return Err(failed(&mut client, &mut server, timing.grace, why).await);
                }
                let r = match acp::new_session(&mut client, json!([])).await {
                    Ok(r) => r,
                    Err(e) => {
                        return Err(failed(
                            &mut client,
                            &mut server,
                            timing.grace,
                            format!("{label}: session/new: {e}"),
                        )
                        .await)
                    }
                };
                session = acp::session_id(&r);
                if session.is_none() {
                    let why = format!("{label}: session/new failed: {}", r.describe());
                    return Err(failed(&mut client, &mut server, timing.grace, why).await);
                }
            }
        }
        Ok(LiveSurface {
            label,
            spec: spec.clone(),
            client,
            session,
            server,
        })
    }

    /// Calls a tool and reads the outcome.
    ///
    /// Errors: [`CallFailure::Transport`] when the request could not be written or no response
    /// arrived (timeout, EOF); its text names the surface, the method and the call (the tool
    /// and its arguments, clipped to 200 bytes; reports redact it like every message).
    pub async fn call(&mut self, name: &str, arguments: &Value) -> Result<Called, CallFailure> {
        let (method, params) = match &self.spec {
            SurfaceSpec::Mcp { .. } => (
                "tools/call".to_string(),
                json!({"name": name, "arguments": arguments}),
            ),
            SurfaceSpec::Acp { method, params, .. } => (
                method.clone(),
                acp::fill_params(params.as_ref(), self.session.as_deref(), name, arguments),
            ),
        };
        let what = || {
            format!(
                "{} {method} call of {}",
                self.label,
                call_text(name, arguments)
            )
        };
        let reply = self
            .client
            .request(&method, params)
            .await
            .map_err(|e| CallFailure::transport(format!("{}: {e}", what())))?;
        let response = match reply {
            Reply::Message(v) => v,
            other => {
                return Err(CallFailure::Transport {
                    timeout: matches!(other, Reply::Timeout),
                    text: format!("{}: {}", what(), other.describe()),
                })
            }
        };
        let outcome = match &self.spec {
            SurfaceSpec::Mcp { rules, .. } => outcome::from_mcp(&response, rules),
            SurfaceSpec::Acp { rules, .. } => outcome::from_acp(&response, rules),
        };
        Ok(Called { outcome, response })
    }

    /// The tools the surface lists (MCP only; every page). Errors: a page failed.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, String> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let r = self
                .client
                .request("tools/list", params)
                .await
                .map_err(|e| e.to_string())?;
            let Some(res) = r.result() else {
                return Err(format!("tools/list failed: {}", r.describe()));
            };
            if let Some(a) = res.get("tools").and_then(Value::as_array) {
                tools.extend(a.iter().cloned());
            }
            cursor = res.get("nextCursor").cloned().filter(|c| !c.is_null());
            if cursor.is_none() {
                break;
            }
        }
        Ok(tools)
    }

    /// Shuts the peer down.
    pub async fn close(mut self, timing: Timing) {
        let _ = self.client.peer.shutdown(timing.grace).await;
        if let Some(mut s) = self.server.take() {
            let _ = s.peer.shutdown(timing.grace).await;
        }
    }
}

/// The surfaces of a target: one MCP surface per era it speaks (as the target's `eras` under
/// `[surfaces.mcp]` selects), then MCP over Streamable HTTP (the target's, or the bundled
/// reference facade's), then ACP; with notes on the eras that did not answer.
///
/// Errors: a surface command does not parse, or this executable cannot be found (for the
/// reference facade).
pub async fn surfaces_of(
    target: &crate::engine::target::Target,
    timing: Timing,
    line_cap: usize,
) -> Result<(Vec<SurfaceSpec>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    if let Some(m) = &target.mcp {
        let mut spec = PeerSpec::from_command_line(&m.command)
            .map_err(|e| format!("surfaces.mcp.command: {e}"))?;
        spec.line_cap = line_cap;
        let mt = crate::engine::check::McpTarget::new(m.command.clone(), spec.clone());
        let (support, _, _) = crate::engine::run::detect_eras(&mt, timing).await;
        use crate::engine::run::EraSel;
        if matches!(m.eras, EraSel::Legacy | EraSel::All) {
            if let Some(rev) = &support.legacy {
                out.push(SurfaceSpec::Mcp {
                    spec: spec.clone(),
                    revision: rev.clone(),
                    rules: m.rules.clone(),
                    http: None,
                });
            }
        }
        if matches!(m.eras, EraSel::Modern | EraSel::All) && support.modern {
            out.push(SurfaceSpec::Mcp {
                spec: spec.clone(),
                revision: MODERN_REVISION.into(),
                rules: m.rules.clone(),
                http: None,
            });
        }
        if out.is_empty() {
            notes.push(format!(
                "equivalence: the MCP surface answered neither initialize nor server/discover: {}",
                support.notes.join("; ")
            ));
        }
    }
    // MCP over Streamable HTTP at 2025-11-25: the bundled reference facade (direct
    // catalogue, the reference dispatcher as its host-level source; a fresh facade per
    // surface session), or the target's HTTP surface.
    let http = match (&target.http, target.reference_facade) {
        (Some(h), _) => Some((h.source.clone(), h.rules.clone())),
        (None, Some(_)) => {
            let exe = std::env::current_exe()
                .map(|p| p.to_string_lossy().into_owned())
                .map_err(|e| format!("cannot find this executable: {e}"))?;
            let mut rules = McpRules::default();
            // The facade refuses schema-invalid arguments in pre-flight (seed rule 28) with
            // an isError result; behind stdio and ACP the dispatcher refuses them with
            // INVALID_ARGUMENTS. The reference target reads both as one class.
            rules.classes.push(crate::engine::outcome::ClassRule {
                kind: "tool_error".into(),
                code: None,
                message_contains: Some("invalid arguments for capability".into()),
                class: crate::engine::target::INVALID_ARGUMENTS_CLASS.into(),
            });
            Some((
                crate::engine::http_surface::FacadeSource::Command(PeerSpec::new(
                    exe,
                    ["reference", "facade", "--catalogue", "direct"]
                        .map(String::from)
                        .to_vec(),
                )),
                rules,
            ))
        }
        (None, None) => None,
    };
    if let Some((source, rules)) = http {
        let mut spec = PeerSpec::new("(Streamable HTTP)", Vec::new());
        spec.line_cap = line_cap;
        out.push(SurfaceSpec::Mcp {
            spec,
            revision: "2025-11-25".into(),
            rules,
            http: Some(source),
        });
    }
    if let Some(a) = &target.acp {
        let mut spec = PeerSpec::from_command_line(&a.command)
            .map_err(|e| format!("surfaces.acp.command: {e}"))?;
        spec.line_cap = line_cap;
        out.push(SurfaceSpec::Acp {
            spec,
            method: a.tool_method_or_default(),
            params: a.params.clone(),
            rules: a.rules.clone(),
        });
    }
    Ok((out, notes))
}
