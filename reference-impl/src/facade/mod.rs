//! The session-gating MCP facade (seed rules 1–37, `../shared/spec/seed-rules.md` §1–4).
//!
//! A facade publishes the tools of downstream MCP servers (spawned over stdio,
//! [`downstream`]) and of in-process capability sources ([`source`]) to MCP clients over
//! Streamable HTTP ([`http`]). Identity is resolved per request from
//! `Authorization: Bearer <token>` through the token registry ([`registry`]); anything
//! else is the anonymous view, which never shows or reaches a session-bound source.
//! Arguments pass pre-flight ([`preflight`]) before any source or downstream call, and
//! source calls are audited ([`audit`]) with a hash of the arguments, never the
//! arguments.
//!
//! Two catalogue forms ([`CatalogueMode`]):
//!
//! - **meta** (rule 1): `tools/list` holds exactly `search_capabilities` (optional string
//!   `query`) and `execute_capability` (`name`, optional object `arguments`); prefixed
//!   names are `provider:tool`;
//! - **direct**: every published capability is an MCP tool; prefixed names use a
//!   separator the MCP tool-name rule allows (`[A-Za-z0-9_.-]`, default `.`).
//!
//! **Architecture invariant:** the facade holds no tool logic. It merges catalogues,
//! resolves names, validates and forwards; tools live in the sources and downstream
//! servers.

pub mod audit;
pub mod catalogue;
pub mod downstream;
#[cfg(feature = "http")]
pub mod http;
pub mod preflight;
pub mod registry;
pub mod source;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use audit::{args_sha256, AuditLog};
use catalogue::{Entry, NamingFn, Origin, ProviderTools};
use downstream::{Downstream, DownstreamSpec, Unavailable};
use preflight::PreflightError;
use registry::{SessionCtx, TokenRegistry};
use source::{CapabilitySource, SourceTool};

/// JSON-RPC "invalid params" (unknown top-level tool, rule 32).
pub const INVALID_PARAMS: i64 = -32602;

/// The separator of prefixed names inside the meta-tool pair's results (seed: `provider:tool`).
pub const META_SEPARATOR: &str = ":";

/// The default separator of prefixed names in the direct catalogue.
pub const DEFAULT_DIRECT_SEPARATOR: &str = ".";

/// Default time a downstream start step or call may take: 30 s.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How capabilities are published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogueMode {
    /// The two meta tools `search_capabilities` and `execute_capability` (rule 1).
    #[default]
    Meta,
    /// Every capability as its own MCP tool.
    Direct,
}

/// The pre-flight step as a function, so a faulty peer can substitute it (the reference
/// uses [`preflight::validate`]).
pub type PreflightFn = fn(&str, &Value, &Value) -> Result<(), PreflightError>;

/// Everything a facade is built from.
pub struct FacadeConfig {
    /// Catalogue form.
    pub mode: CatalogueMode,
    /// Separator of prefixed names in the direct catalogue (meta mode always uses `:`).
    pub separator: String,
    /// The token registry identity is resolved through.
    pub registry: Arc<dyn TokenRegistry>,
    /// In-process sources, in registration order.
    pub sources: Vec<Arc<dyn CapabilitySource>>,
    /// Downstream servers, in order.
    pub downstream: Vec<DownstreamSpec>,
    /// Where audit lines go.
    pub audit: Arc<dyn AuditLog>,
    /// The merge rule (reference: [`catalogue::publish`]).
    pub naming: NamingFn,
    /// The pre-flight step (reference: [`preflight::validate`]).
    pub preflight: PreflightFn,
    /// Time limit of each downstream start step and call.
    pub call_timeout: Duration,
    /// `serverInfo.name`.
    pub server_name: String,
    /// `serverInfo.version`.
    pub server_version: String,
    /// The dispatcher whose workspace the facade serves as resources, prompts and completion
    /// (the MCP stdio surface's, `crate::mcp`); `None` serves tools only.
    pub features: Option<Arc<crate::dispatcher::Dispatcher>>,
}

impl FacadeConfig {
    /// A meta-mode facade over `registry` and `sources`, auditing to `audit`, with no
    /// downstream servers.
    pub fn new(
        registry: Arc<dyn TokenRegistry>,
        sources: Vec<Arc<dyn CapabilitySource>>,
        audit: Arc<dyn AuditLog>,
    ) -> Self {
        FacadeConfig {
            mode: CatalogueMode::Meta,
            separator: DEFAULT_DIRECT_SEPARATOR.to_owned(),
            registry,
            sources,
            downstream: Vec::new(),
            audit,
            naming: catalogue::publish,
            preflight: preflight::validate,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            server_name: "parity-reference-facade".to_owned(),
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            features: None,
        }
    }
}

/// A running facade: its configuration and its started downstream servers.
pub struct Facade {
    config: FacadeConfig,
    downstream: Vec<(Downstream, Vec<SourceTool>)>,
    unavailable: Vec<Unavailable>,
}

impl std::fmt::Debug for Facade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Facade")
            .field("mode", &self.config.mode)
            .field("sources", &self.config.sources.len())
            .field("downstream", &self.downstream.len())
            .finish()
    }
}

/// The outcome of one capability call, before MCP encoding.
#[derive(Debug, Clone, PartialEq)]
pub enum CallResult {
    /// A downstream server's `CallToolResult`, passed through.
    Downstream(Value),
    /// A source's payload and error flag (rule 31).
    Source(source::SourceResult),
    /// The call was refused before dispatch; the message becomes an `isError` result.
    Refused(String),
    /// No capability of that name in the caller's catalogue (rules 23, 24).
    Unknown(String),
}

impl Facade {
    /// Starts the downstream servers of `config` (rule 12: a failing server is listed as
    /// unavailable, the others go on).
    pub async fn start(config: FacadeConfig) -> Facade {
        let mut downstream = Vec::new();
        let mut unavailable = Vec::new();
        for spec in &config.downstream {
            match Downstream::start(spec, config.call_timeout).await {
                Ok(started) => downstream.push(started),
                Err(u) => unavailable.push(u),
            }
        }
        Facade {
            config,
            downstream,
            unavailable,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &FacadeConfig {
        &self.config
    }

    /// The token registry (the admin hook mints and revokes through it).
    pub fn registry(&self) -> &Arc<dyn TokenRegistry> {
        &self.config.registry
    }

    fn separator(&self) -> &str {
        match self.config.mode {
            CatalogueMode::Meta => META_SEPARATOR,
            CatalogueMode::Direct => &self.config.separator,
        }
    }

    /// The catalogue `ctx` sees (rules 4, 5, 9–11) and the unavailable servers (rule 12).
    pub fn catalogue(&self, ctx: Option<&SessionCtx>) -> (Vec<Entry>, &[Unavailable]) {
        let downstream: Vec<ProviderTools> = self
            .downstream
            .iter()
            .enumerate()
            .map(|(i, (d, tools))| ProviderTools {
                provider: d.name().to_owned(),
                origin: Origin::Downstream(i),
                tools: tools.clone(),
            })
            .collect();
        let sources: Vec<ProviderTools> = self
            .config
            .sources
            .iter()
            .enumerate()
            .filter(|(_, s)| ctx.is_some() || !s.requires_session())
            .map(|(i, s)| ProviderTools {
                provider: s.provider().to_owned(),
                origin: Origin::Source(i),
                tools: s.tools(ctx),
            })
            .collect();
        (
            (self.config.naming)(&downstream, &sources, self.separator()),
            &self.unavailable,
        )
    }

    /// Calls capability `name` for `ctx` (rules 24–31): resolve as discovery publishes,
    /// pre-flight, audit (sources), dispatch.
    pub async fn call(
        &self,
        ctx: Option<&SessionCtx>,
        name: &str,
        arguments: Option<&Value>,
    ) -> CallResult {
        let (entries, _) = self.catalogue(ctx);
        let Some(entry) = catalogue::resolve(&entries, name, self.separator()) else {
            return CallResult::Unknown(name.to_owned());
        };
        let args = match preflight::arguments_object(name, arguments) {
            Ok(a) => a,
            Err(e) => return CallResult::Refused(e.to_string()),
        };
        if let Err(e) = (self.config.preflight)(&entry.published, &entry.tool.input_schema, &args) {
            return CallResult::Refused(e.to_string());
        }
        match entry.origin {
            Origin::Downstream(i) => {
                let Some((server, _)) = self.downstream.get(i) else {
                    return CallResult::Unknown(name.to_owned());
                };
                match server
                    .request(
                        "tools/call",
                        json!({"name": entry.bare, "arguments": args}),
                        self.config.call_timeout,
                    )
                    .await
                {
                    Ok(result) => CallResult::Downstream(result),
                    Err(e) => CallResult::Refused(format!(
                        "capability `{}` failed: {}",
                        entry.published,
                        downstream::redact(&e)
                    )),
                }
            }
            Origin::Source(i) => {
                let Some(source) = self.config.sources.get(i) else {
                    return CallResult::Unknown(name.to_owned());
                };
                let channel = ctx.map(|c| c.channel_id.as_str());
                let hash = args_sha256(&args);
                let event = audit::AuditEvent {
                    provider: &entry.provider,
                    tool: &entry.bare,
                    channel,
                    args_sha256: &hash,
                    args: &args,
                };
                self.config.audit.entry(&event);
                let result = source.call(ctx, &entry.bare, args.clone()).await;
                self.config.audit.exit(&event, result.is_error);
                CallResult::Source(result)
            }
        }
    }

    /// The `tools/list` result for `ctx`, without era members.
    pub fn tools_list(&self, ctx: Option<&SessionCtx>) -> Map<String, Value> {
        let tools: Vec<Value> = match self.config.mode {
            CatalogueMode::Meta => meta_tools(),
            CatalogueMode::Direct => self
                .catalogue(ctx)
                .0
                .iter()
                .map(|e| {
                    let mut t = Map::new();
                    t.insert("name".into(), Value::from(e.published.clone()));
                    t.insert(
                        "description".into(),
                        Value::from(e.tool.description.clone()),
                    );
                    t.insert("inputSchema".into(), e.tool.input_schema.clone());
                    if !e.tool.annotations.is_null() {
                        t.insert("annotations".into(), e.tool.annotations.clone());
                    }
                    if !e.tool.output_schema.is_null() {
                        t.insert("outputSchema".into(), e.tool.output_schema.clone());
                    }
                    Value::Object(t)
                })
                .collect(),
        };
        let mut result = Map::new();
        result.insert("tools".into(), Value::Array(tools));
        result
    }

    /// The `tools/call` result for `ctx`, or `Err((code, message))` for a JSON-RPC error
    /// (rule 32: an unknown top-level tool is invalid params).
    pub async fn tools_call(
        &self,
        ctx: Option<&SessionCtx>,
        params: Option<&Value>,
    ) -> Result<Map<String, Value>, (i64, String)> {
        let Some(params) = params.and_then(Value::as_object) else {
            return Err((
                INVALID_PARAMS,
                "Invalid params: params must be an object".into(),
            ));
        };
        let Some(tool) = params.get("name").and_then(Value::as_str) else {
            return Err((
                INVALID_PARAMS,
                "Invalid params: `name` must be a string".into(),
            ));
        };
        let arguments = params.get("arguments");
        match self.config.mode {
            // MCP's `tools/call` takes an object or nothing (schema `CallToolRequest`); the
            // null-as-empty rule 27 is the meta tool's.
            CatalogueMode::Direct if arguments.is_some_and(|a| !a.is_object()) => Err((
                INVALID_PARAMS,
                "Invalid params: `arguments` must be an object".into(),
            )),
            CatalogueMode::Direct => match self.call(ctx, tool, arguments).await {
                CallResult::Unknown(name) => Err((INVALID_PARAMS, format!("Unknown tool: {name}"))),
                other => Ok(encode(other)),
            },
            CatalogueMode::Meta => match tool {
                "search_capabilities" => Ok(self.search(ctx, arguments)),
                "execute_capability" => Ok(self.execute(ctx, arguments).await),
                other => Err((INVALID_PARAMS, format!("Unknown tool: {other}"))),
            },
        }
    }

    fn search(&self, ctx: Option<&SessionCtx>, arguments: Option<&Value>) -> Map<String, Value> {
        let query = match arguments.and_then(|a| a.get("query")) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(q)) => q.to_lowercase(),
            Some(_) => return error_result("search_capabilities: `query` must be a string"),
        };
        let (entries, unavailable) = self.catalogue(ctx);
        let capabilities: Vec<Value> = entries
            .iter()
            .filter(|e| {
                query.is_empty()
                    || e.published.to_lowercase().contains(&query)
                    || e.tool.description.to_lowercase().contains(&query)
            })
            .map(|e| {
                json!({
                    "name": e.published,
                    "description": e.tool.description,
                    "input_schema": e.tool.input_schema,
                    "provider": e.provider,
                    "risk": catalogue::risk(&e.tool.annotations),
                    "availability": "ready",
                })
            })
            .collect();
        let unavailable: Vec<Value> = unavailable
            .iter()
            .map(|u| json!({"provider": u.provider, "error": u.error}))
            .collect();
        json_result(
            json!({"capabilities": capabilities, "unavailable": unavailable}),
            false,
        )
    }

    async fn execute(
        &self,
        ctx: Option<&SessionCtx>,
        arguments: Option<&Value>,
    ) -> Map<String, Value> {
        let Some(name) = arguments
            .and_then(|a| a.get("name"))
            .and_then(Value::as_str)
        else {
            return error_result("execute_capability requires a `name` (a string)");
        };
        let inner = arguments.and_then(|a| a.get("arguments"));
        encode(self.call(ctx, name, inner).await)
    }
}

fn meta_tools() -> Vec<Value> {
    vec![
        json!({
            "name": "search_capabilities",
            "description": "Lists the capabilities this caller may use; `query` filters by a case-insensitive substring of the name or description.",
            "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
            "annotations": {"readOnlyHint": true},
        }),
        json!({
            "name": "execute_capability",
            "description": "Runs one capability by the name search_capabilities published.",
            "inputSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
                "required": ["name"],
            },
        }),
    ]
}

fn json_result(payload: Value, is_error: bool) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert(
        "content".into(),
        json!([{"type": "text", "text": payload.to_string()}]),
    );
    if payload.is_object() {
        result.insert("structuredContent".into(), payload);
    }
    result.insert("isError".into(), Value::Bool(is_error));
    result
}

fn error_result(message: &str) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("content".into(), json!([{"type": "text", "text": message}]));
    result.insert("isError".into(), Value::Bool(true));
    result
}

/// The MCP `CallToolResult` of a capability call.
fn encode(result: CallResult) -> Map<String, Value> {
    match result {
        CallResult::Downstream(Value::Object(m)) => m,
        CallResult::Downstream(other) => json_result(other, false),
        CallResult::Source(r) => json_result(r.payload, r.is_error),
        CallResult::Refused(message) => error_result(&message),
        CallResult::Unknown(name) => error_result(&format!(
            "unknown capability `{name}`; call search_capabilities to list the capabilities you can use"
        )),
    }
}
