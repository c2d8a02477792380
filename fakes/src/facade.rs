//! Faulty and benign facades: the reference facade with one injected fault each, and
//! correct but unusual facades built the same way.
//!
//! Each fault is a layer around a clean component of
//! [`parity_reference::facade`]: a wrapped token registry, a wrapped source, a wrapped
//! audit log, a substituted merge rule or pre-flight step, or a wrapped MCP service. The
//! reference keeps no fault flags. [`facade_catalogue`] lists each fault with the facade
//! checks it must trip; `parity selftest` and the tests prove each pairing.
//! [`facade_benign_catalogue`] lists the benign facades with the checks each must pass once
//! declared as it is (docs/facade.md).

use std::sync::{Arc, Mutex};

use parity_reference::facade::audit::{channel_tag, AuditEvent, AuditLog, AuditSink};
use parity_reference::facade::catalogue::{Entry, ProviderTools};
use parity_reference::facade::http::{CallFuture, McpService};
use parity_reference::facade::preflight::PreflightError;
use parity_reference::facade::registry::{MintError, SessionCtx, TokenRegistry};
use parity_reference::facade::source::{CapabilitySource, SourceFuture, SourceResult, SourceTool};
use parity_reference::facade::{Facade, FacadeConfig};
use serde_json::{json, Map, Value};

/// One faulty facade.
#[derive(Clone, Copy)]
pub struct FacadeFault {
    /// Name used by `parity fake-facade <name>`.
    pub name: &'static str,
    /// What is wrong, in one sentence.
    pub description: &'static str,
    /// The facade checks this fault must fail.
    pub checks: &'static [&'static str],
    /// Changes the configuration before the facade starts.
    pub configure: fn(&mut FacadeConfig),
    /// Wraps the started facade (identity for most faults).
    pub wrap: fn(Arc<Facade>) -> Arc<dyn McpService>,
}

impl std::fmt::Debug for FacadeFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FacadeFault")
            .field("name", &self.name)
            .finish()
    }
}

fn no_config(_: &mut FacadeConfig) {}

fn plain(f: Arc<Facade>) -> Arc<dyn McpService> {
    f
}

/// Every faulty facade.
pub fn facade_catalogue() -> Vec<FacadeFault> {
    vec![
        FacadeFault {
            name: "facade-session-visible",
            description: "session-bound sources are treated as host-level: anonymous callers see and reach them",
            checks: &["facade.anonymous-hides-session-tools"],
            configure: |c| {
                c.sources = c
                    .sources
                    .drain(..)
                    .map(|s| Arc::new(Unbound(s)) as Arc<dyn CapabilitySource>)
                    .collect();
            },
            wrap: plain,
        },
        FacadeFault {
            name: "facade-forbidden",
            description: "an anonymous call to a session-bound tool is answered \"forbidden\" instead of \"unknown\"",
            checks: &["facade.anonymous-call-indistinguishable"],
            configure: no_config,
            wrap: |f| Arc::new(Forbidden(f)),
        },
        FacadeFault {
            name: "facade-token-ignored",
            description: "no token ever resolves: a live token gets the anonymous view",
            checks: &["facade.token-sees-session-tools"],
            configure: |c| c.registry = Arc::new(NeverResolves(c.registry.clone())),
            wrap: plain,
        },
        FacadeFault {
            name: "facade-any-token",
            description: "any non-empty bearer value resolves to a session",
            checks: &["facade.bad-credentials-anonymous"],
            configure: |c| c.registry = Arc::new(AnyToken(c.registry.clone())),
            wrap: plain,
        },
        FacadeFault {
            name: "facade-revoke-ignored",
            description: "revocation is acknowledged but the token keeps working",
            checks: &["facade.revoked-token-anonymous"],
            configure: |c| c.registry = Arc::new(RevokeIgnored(c.registry.clone())),
            wrap: plain,
        },
        FacadeFault {
            name: "facade-remint-replaces",
            description: "a second mint for a channel invalidates the first token (profile [1454]) while the facade declares [later]",
            checks: &["facade.second-token-profile"],
            configure: |c| {
                c.registry = Arc::new(RemintReplaces {
                    inner: c.registry.clone(),
                    live: Mutex::default(),
                })
            },
            wrap: plain,
        },
        FacadeFault {
            name: "facade-source-steals-name",
            description: "sources are merged before downstream servers, so a source tool takes a downstream tool's bare name",
            checks: &["facade.naming-rules"],
            configure: |c| c.naming = sources_first,
            wrap: plain,
        },
        FacadeFault {
            name: "facade-no-preflight",
            description: "arguments are not validated: a schema-invalid call reaches the source",
            checks: &["facade.preflight-before-dispatch"],
            configure: |c| c.preflight = accept_everything,
            wrap: plain,
        },
        FacadeFault {
            name: "facade-source-validates",
            description: "arguments are not validated before dispatch: the source refuses a schema-invalid call itself, naming the capability, after the facade audited it",
            checks: &["facade.preflight-before-dispatch"],
            configure: validated_by_the_source,
            wrap: plain,
        },
        FacadeFault {
            name: "facade-source-validates-late-audit",
            description: "as facade-source-validates, and a call's audit lines are written only when the next call on its channel begins, so the refused call's lines are all a reader sees after the next call's answer",
            checks: &["facade.preflight-before-dispatch"],
            configure: |c| {
                validated_by_the_source(c);
                c.audit = Arc::new(Deferred {
                    inner: c.audit.clone(),
                    pending: Mutex::new(Vec::new()),
                });
            },
            wrap: plain,
        },
        FacadeFault {
            name: "facade-audit-plaintext",
            description: "audit lines carry the plaintext arguments",
            checks: &["facade.audit-no-plaintext"],
            configure: |c| c.audit = Arc::new(Plaintext(c.audit.clone())),
            wrap: plain,
        },
        FacadeFault {
            name: "facade-audit-bad-hash",
            description: "args_sha256 hashes pretty-printed arguments instead of compact JSON",
            checks: &["facade.audit-shape"],
            configure: |c| c.audit = Arc::new(BadHash(c.audit.clone())),
            wrap: plain,
        },
    ]
}

/// Finds a faulty facade by name.
pub fn find_facade_fault(name: &str) -> Option<FacadeFault> {
    facade_catalogue().into_iter().find(|f| f.name == name)
}

struct Unbound(Arc<dyn CapabilitySource>);

impl CapabilitySource for Unbound {
    fn provider(&self) -> &str {
        self.0.provider()
    }
    fn tools(&self, ctx: Option<&SessionCtx>) -> Vec<SourceTool> {
        self.0.tools(ctx)
    }
    fn call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        tool: &'a str,
        args: Value,
    ) -> SourceFuture<'a> {
        self.0.call(ctx, tool, args)
    }
    fn requires_session(&self) -> bool {
        false
    }
}

struct Forbidden(Arc<Facade>);

impl McpService for Forbidden {
    fn registry(&self) -> Arc<dyn TokenRegistry> {
        self.0.registry().clone()
    }
    fn server_info(&self) -> Value {
        McpService::server_info(self.0.as_ref())
    }
    fn tools_list(&self, ctx: Option<&SessionCtx>) -> Map<String, Value> {
        McpService::tools_list(self.0.as_ref(), ctx)
    }
    fn tools_call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        params: Option<&'a Value>,
    ) -> CallFuture<'a> {
        Box::pin(async move {
            if ctx.is_none() {
                let direct = params.and_then(|p| p.get("name")).and_then(Value::as_str);
                let meta = params
                    .and_then(|p| p.get("arguments"))
                    .and_then(|a| a.get("name"))
                    .and_then(Value::as_str);
                let probe = SessionCtx {
                    channel_id: "probe".into(),
                };
                let (session_view, _) = self.0.catalogue(Some(&probe));
                let (anonymous_view, _) = self.0.catalogue(None);
                let gated = |n: &str| {
                    session_view.iter().any(|e| e.published == n)
                        && !anonymous_view.iter().any(|e| e.published == n)
                };
                if direct.is_some_and(gated) {
                    return Err((-32001, "Forbidden: this tool requires a session".to_owned()));
                }
                if direct == Some("execute_capability") && meta.is_some_and(gated) {
                    let mut m = Map::new();
                    m.insert(
                        "content".into(),
                        json!([{"type": "text", "text": "forbidden: this capability requires a session"}]),
                    );
                    m.insert("isError".into(), Value::Bool(true));
                    return Ok(m);
                }
            }
            self.0.tools_call(ctx, params).await
        })
    }
}

struct NeverResolves(Arc<dyn TokenRegistry>);
struct AnyToken(Arc<dyn TokenRegistry>);
struct RevokeIgnored(Arc<dyn TokenRegistry>);
struct RemintReplaces {
    inner: Arc<dyn TokenRegistry>,
    live: Mutex<Vec<(String, String)>>,
}

impl TokenRegistry for NeverResolves {
    fn mint(&self, channel: &str) -> Result<String, MintError> {
        self.0.mint(channel)
    }
    fn resolve(&self, _token: &str) -> Option<SessionCtx> {
        None
    }
    fn revoke_token(&self, token: &str) -> bool {
        self.0.revoke_token(token)
    }
    fn revoke_channel(&self, channel: &str) -> usize {
        self.0.revoke_channel(channel)
    }
}

impl TokenRegistry for AnyToken {
    fn mint(&self, channel: &str) -> Result<String, MintError> {
        self.0.mint(channel)
    }
    fn resolve(&self, token: &str) -> Option<SessionCtx> {
        self.0.resolve(token).or_else(|| {
            (!token.is_empty()).then(|| SessionCtx {
                channel_id: "any".into(),
            })
        })
    }
    fn revoke_token(&self, token: &str) -> bool {
        self.0.revoke_token(token)
    }
    fn revoke_channel(&self, channel: &str) -> usize {
        self.0.revoke_channel(channel)
    }
}

impl TokenRegistry for RevokeIgnored {
    fn mint(&self, channel: &str) -> Result<String, MintError> {
        self.0.mint(channel)
    }
    fn resolve(&self, token: &str) -> Option<SessionCtx> {
        self.0.resolve(token)
    }
    fn revoke_token(&self, _token: &str) -> bool {
        true
    }
    fn revoke_channel(&self, _channel: &str) -> usize {
        1
    }
}

impl TokenRegistry for RemintReplaces {
    fn mint(&self, channel: &str) -> Result<String, MintError> {
        let token = self.inner.mint(channel)?;
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        for (t, c) in live.iter() {
            if c == channel {
                self.inner.revoke_token(t);
            }
        }
        live.retain(|(_, c)| c != channel);
        live.push((token.clone(), channel.to_owned()));
        Ok(token)
    }
    fn resolve(&self, token: &str) -> Option<SessionCtx> {
        self.inner.resolve(token)
    }
    fn revoke_token(&self, token: &str) -> bool {
        self.inner.revoke_token(token)
    }
    fn revoke_channel(&self, channel: &str) -> usize {
        self.inner.revoke_channel(channel)
    }
}

/// The V1/V2 merge order: sources first, then downstream servers, each prefixed when
/// its bare name is taken.
fn sources_first(downstream: &[ProviderTools], sources: &[ProviderTools], sep: &str) -> Vec<Entry> {
    parity_reference::facade::catalogue::publish(&[], &[sources, downstream].concat(), sep)
        .into_iter()
        .map(|mut e| {
            // publish() treated every provider as a source; restore the real origins.
            if let Some(p) = downstream
                .iter()
                .chain(sources)
                .find(|p| p.provider == e.provider)
            {
                e.origin = p.origin;
            }
            e
        })
        .collect()
}

fn accept_everything(_: &str, _: &Value, _: &Value) -> Result<(), PreflightError> {
    Ok(())
}

/// No pre-flight: every source checks its own arguments ([`SelfValidating`]).
fn validated_by_the_source(c: &mut FacadeConfig) {
    c.preflight = accept_everything;
    c.sources = c
        .sources
        .iter()
        .map(|s| Arc::new(SelfValidating(s.clone())) as Arc<dyn CapabilitySource>)
        .collect();
}

/// A source that checks its own arguments against its tool's input schema when called, so a
/// schema-invalid call is refused only after dispatch (and after its audit entry line).
struct SelfValidating(Arc<dyn CapabilitySource>);

impl CapabilitySource for SelfValidating {
    fn provider(&self) -> &str {
        self.0.provider()
    }
    fn tools(&self, ctx: Option<&SessionCtx>) -> Vec<SourceTool> {
        self.0.tools(ctx)
    }
    fn call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        tool: &'a str,
        args: Value,
    ) -> SourceFuture<'a> {
        let schema = self
            .0
            .tools(ctx)
            .into_iter()
            .find(|t| t.name == tool)
            .map(|t| t.input_schema);
        if let Some(schema) = schema {
            if let Err(e) = parity_reference::facade::preflight::validate(tool, &schema, &args) {
                return Box::pin(async move {
                    SourceResult {
                        payload: json!({"error": e.to_string()}),
                        is_error: true,
                    }
                });
            }
        }
        self.0.call(ctx, tool, args)
    }
    fn requires_session(&self) -> bool {
        self.0.requires_session()
    }
}

/// An audit event held back: its fields, and `None` for an entry line or the exit line's
/// error flag.
struct HeldLine {
    provider: String,
    tool: String,
    channel: Option<String>,
    hash: String,
    args: Value,
    exit: Option<bool>,
}

impl HeldLine {
    /// Writes the held line through `log` (its entry or its exit line).
    fn write_to(&self, log: &dyn AuditLog) {
        let event = AuditEvent {
            provider: &self.provider,
            tool: &self.tool,
            channel: self.channel.as_deref(),
            args_sha256: &self.hash,
            args: &self.args,
        };
        match self.exit {
            None => log.entry(&event),
            Some(is_error) => log.exit(&event, is_error),
        }
    }
}

/// An audit log that holds each call's lines back until the next call on the same channel
/// begins (a buffered writer flushed by the next entry).
struct Deferred {
    inner: Arc<dyn AuditLog>,
    pending: Mutex<Vec<HeldLine>>,
}

impl Deferred {
    fn hold(&self, e: &AuditEvent<'_>, exit: Option<bool>) {
        let line = HeldLine {
            provider: e.provider.to_owned(),
            tool: e.tool.to_owned(),
            channel: e.channel.map(str::to_owned),
            hash: e.args_sha256.to_owned(),
            args: e.args.clone(),
            exit,
        };
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
    }
}

impl AuditLog for Deferred {
    fn entry(&self, e: &AuditEvent<'_>) {
        let flushed: Vec<HeldLine> = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let (mine, rest) = std::mem::take(&mut *pending)
                .into_iter()
                .partition(|l| l.channel.as_deref() == e.channel);
            *pending = rest;
            mine
        };
        for l in &flushed {
            l.write_to(&*self.inner);
        }
        self.hold(e, None);
    }
    fn exit(&self, e: &AuditEvent<'_>, is_error: bool) {
        self.hold(e, Some(is_error));
    }
}

struct Plaintext(Arc<dyn AuditLog>);

impl AuditLog for Plaintext {
    fn entry(&self, e: &AuditEvent<'_>) {
        // The fault: the hash field carries the arguments themselves.
        let args = e.args.to_string();
        self.0.entry(&AuditEvent {
            args_sha256: &args,
            ..*e
        });
    }
    fn exit(&self, e: &AuditEvent<'_>, is_error: bool) {
        self.0.exit(e, is_error);
    }
}

struct BadHash(Arc<dyn AuditLog>);

impl AuditLog for BadHash {
    fn entry(&self, e: &AuditEvent<'_>) {
        let hash = pretty_hash(e.args);
        self.0.entry(&AuditEvent {
            args_sha256: &hash,
            ..*e
        });
    }
    fn exit(&self, e: &AuditEvent<'_>, is_error: bool) {
        let hash = pretty_hash(e.args);
        self.0.exit(
            &AuditEvent {
                args_sha256: &hash,
                ..*e
            },
            is_error,
        );
    }
}

fn pretty_hash(args: &Value) -> String {
    let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
    parity_reference::facade::audit::args_sha256(&Value::String(pretty))
}

/// One benign facade: the reference facade with layers that make it correct but unusual, in
/// ways a target file declares (docs/facade.md). Served by `parity fake-facade <name>`.
#[derive(Clone, Copy)]
pub struct FacadeBenign {
    /// Name used by `parity fake-facade <name>`.
    pub name: &'static str,
    /// What is unusual about it, in one sentence.
    pub description: &'static str,
    /// The facade checks it must pass when declared as it is (no `fail`, `warn` or
    /// `timeout`).
    pub passes: &'static [&'static str],
    /// Changes the configuration before the facade starts.
    pub configure: fn(&mut FacadeConfig),
    /// The audit log it writes through the sink the options opened (the file of
    /// `--audit-log`, or stderr).
    pub audit: fn(AuditSink) -> Arc<dyn AuditLog>,
    /// Whether its first stdout line is only its port (`prints = "port"`), not its URL.
    pub prints_port: bool,
}

impl std::fmt::Debug for FacadeBenign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FacadeBenign")
            .field("name", &self.name)
            .finish()
    }
}

/// Every facade check: a benign facade declared as it is passes them all.
const EVERY_FACADE_CHECK: &[&str] = &[
    "facade.anonymous-hides-session-tools",
    "facade.anonymous-call-indistinguishable",
    "facade.token-sees-session-tools",
    "facade.bad-credentials-anonymous",
    "facade.revoked-token-anonymous",
    "facade.second-token-profile",
    "facade.naming-rules",
    "facade.preflight-before-dispatch",
    "facade.audit-shape",
    "facade.audit-no-plaintext",
];

/// Every benign facade.
pub fn facade_benign_catalogue() -> Vec<FacadeBenign> {
    vec![FacadeBenign {
        name: "facade-one-line-audit",
        description: "writes one audit line per call, after the source returns, as a tracing-style JSON line with its own member names under `fields`; prints only its port; its session tool `whoami` takes no arguments (its schema accepts any object)",
        passes: EVERY_FACADE_CHECK,
        configure: |c| {
            c.sources.retain(|s| !s.requires_session());
            c.sources.push(Arc::new(Whoami));
        },
        audit: |sink| Arc::new(OneLine(sink)),
        prints_port: true,
    }, FacadeBenign {
        name: "facade-late-audit",
        description: "writes each audit line 300 ms after the event it records, from a writer of its own (the reference's lines, late and possibly out of order)",
        passes: &[
            "facade.anonymous-hides-session-tools",
            "facade.anonymous-call-indistinguishable",
            "facade.token-sees-session-tools",
            "facade.bad-credentials-anonymous",
            "facade.revoked-token-anonymous",
            "facade.second-token-profile",
            "facade.preflight-before-dispatch",
            "facade.audit-shape",
            "facade.audit-no-plaintext",
        ],
        configure: |_| {},
        audit: |sink| Arc::new(Late(Arc::new(sink))),
        prints_port: false,
    }]
}

/// How late [`Late`] writes each line.
const LATE_BY: std::time::Duration = std::time::Duration::from_millis(300);

/// An audit log that writes every line [`LATE_BY`] after its event, each from a thread of
/// its own (a buffered writer flushed on a timer): a call's lines reach the file after the
/// call was answered.
struct Late(Arc<AuditSink>);

impl Late {
    fn later(&self, e: &AuditEvent<'_>, exit: Option<bool>) {
        let line = HeldLine {
            provider: e.provider.to_owned(),
            tool: e.tool.to_owned(),
            channel: e.channel.map(str::to_owned),
            hash: e.args_sha256.to_owned(),
            args: e.args.clone(),
            exit,
        };
        let sink = self.0.clone();
        std::thread::spawn(move || {
            std::thread::sleep(LATE_BY);
            line.write_to(&*sink);
        });
    }
}

impl AuditLog for Late {
    fn entry(&self, e: &AuditEvent<'_>) {
        self.later(e, None);
    }
    fn exit(&self, e: &AuditEvent<'_>, is_error: bool) {
        self.later(e, Some(is_error));
    }
}

/// Finds a benign facade by name.
pub fn find_facade_benign(name: &str) -> Option<FacadeBenign> {
    facade_benign_catalogue()
        .into_iter()
        .find(|f| f.name == name)
}

/// A session-bound source (provider `ident`) whose one tool, `whoami`, takes no arguments:
/// its schema accepts any object, and it returns the caller's channel.
struct Whoami;

impl CapabilitySource for Whoami {
    fn provider(&self) -> &str {
        "ident"
    }
    fn tools(&self, _ctx: Option<&SessionCtx>) -> Vec<SourceTool> {
        vec![SourceTool {
            name: "whoami".into(),
            description: "The caller's channel.".into(),
            input_schema: json!({"type": "object"}),
            annotations: json!({"readOnlyHint": true}),
            output_schema: Value::Null,
        }]
    }
    fn call<'a>(
        &'a self,
        ctx: Option<&'a SessionCtx>,
        _tool: &'a str,
        _args: Value,
    ) -> SourceFuture<'a> {
        Box::pin(async move {
            SourceResult {
                payload: json!({"channel": ctx.map(|c| c.channel_id.clone())}),
                is_error: false,
            }
        })
    }
    fn requires_session(&self) -> bool {
        true
    }
}

/// One audit line per call, written when the source returns, in a `tracing` JSON layout:
/// `{"level":"INFO","target":"gateway::audit","fields":{"message":"tool call","source":P,
/// "capability":T,"session":C,"digest":H,"failed":B}}` (the reference's values under other
/// names; never the arguments).
struct OneLine(AuditSink);

impl AuditLog for OneLine {
    fn entry(&self, _e: &AuditEvent<'_>) {}
    fn exit(&self, e: &AuditEvent<'_>, is_error: bool) {
        self.0.write_line(&json!({
            "level": "INFO",
            "target": "gateway::audit",
            "fields": {
                "message": "tool call",
                "source": e.provider,
                "capability": e.tool,
                "session": channel_tag(e.channel),
                "digest": e.args_sha256,
                "failed": is_error,
            },
        }));
    }
}
