//! The `facade` profile: black-box session-gating checks for any MCP facade over Streamable
//! HTTP (seed rules 3–5, 9–11, 17, 21, 24, 28, 33–35; fault classes B21 and B22;
//! `docs/facade.md`).
//!
//! The target gives the facade's URL (or a command that starts it and prints its URL or its
//! port as its first stdout line), hooks to mint and revoke tokens (commands may hold
//! `{url}`, `{host}`, `{port}`), and declarations: how bad credentials are answered
//! (`anonymous`, the seed's rule, or `401`), what a second mint for one channel does
//! (`coexist` or `replace`), one session-bound tool with valid arguments, the tool and
//! schema-invalid arguments pre-flight is judged on, the tool and string argument that
//! carry a canary, optionally the expected catalogues, an audit log path and the shape of its
//! lines ([`AuditShape`]: entry and exit lines or one per call, and their member names).
//!
//! A step that gets no answer in time is a timeout, one that cannot be carried out not-run;
//! either message names the step (the call with its arguments and credentials, tokens as
//! `[TOKEN]`; a hook; `initialize`; the audit poll), and a case past its deadline names the
//! step it was waiting for ([`Trail`]).
//!
//! Each case opens its own MCP session (`initialize` at 2025-11-25 over Streamable HTTP,
//! then `notifications/initialized`), mints its own tokens on a channel of its own, and
//! judges what the facade publishes and answers. The catalogue is read through
//! `search_capabilities`/`execute_capability` (meta form) or `tools/list`/`tools/call`
//! (direct form). Tokens never appear in evidence: they are replaced by `[TOKEN]`.
//!
//! Size (1517 lines): the ten session-gating checks, their token hooks and the facade session
//! they drive share the facade's model (the declarations are [`crate::engine::decl`]; the three
//! audit checks and the audit log reader are in `audit.rs`).

mod profile;
pub use profile::FacadeProfile;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use crate::engine::check::{BoxFinding, Check, Finding, Level, Revs, Timing};
use crate::engine::decl::fill_endpoint;
pub use crate::engine::decl::{
    AuditField, AuditLines, AuditShape, BadToken, Canary, CatalogueForm, FacadeDecl, Hooks, Remint,
    Topology,
};
use crate::transport::http::{HttpClient, HttpError, HttpExchange, HttpRequest};
use crate::transport::peer::PeerSpec;

/// The binding of facade cases.
pub const BINDING: &str = "facade";

/// The revision facade sessions speak.
pub const REVISION: &str = "2025-11-25";

/// A facade under test.
#[derive(Debug, Clone)]
pub struct FacadeTarget {
    /// Display name.
    pub name: String,
    /// The endpoint URL (known after the facade started).
    pub url: String,
    /// Declarations.
    pub decl: FacadeDecl,
}

/// The context of one facade case.
pub struct FacadeCtx {
    /// The target.
    pub target: Arc<FacadeTarget>,
    /// Deadlines.
    pub timing: Timing,
    /// Case id.
    pub case_id: String,
    /// The step the case waits for and its evidence so far, for a case that runs past its
    /// deadline.
    pub trail: std::sync::Mutex<Trail>,
}

/// A facade check's body.
pub type FacadeFn = for<'a> fn(&'a FacadeCtx) -> BoxFinding<'a>;

/// The facade checks (each `CheckKind::Own`: this profile runs them, [`checks`] has the bodies).
pub fn catalogue() -> Vec<Check> {
    checks().into_iter().map(|(c, _)| c).collect()
}

/// The facade checks with their bodies.
fn checks() -> Vec<(Check, FacadeFn)> {
    let c = |id, requirement, quote, section, f: FacadeFn| {
        (
            Check::own(
                id,
                requirement,
                Level::Must,
                quote,
                section,
                Revs::Only(&[REVISION]),
                None,
            ),
            f,
        )
    };
    vec![
        c(
            "facade.anonymous-hides-session-tools",
            "An anonymous caller's catalogue holds no tool of a session-bound source.",
            "Anonymous discovery MUST show downstream tools plus tools of sources with requires_session()==false, and MUST NOT show any tool of a session-bound source.",
            "seed-rules#4",
            |x| Box::pin(anonymous_hides(x)),
        ),
        c(
            "facade.anonymous-call-indistinguishable",
            "An anonymous call to a session-bound tool is answered exactly like a call to a made-up name.",
            "An anonymous call to a session-bound tool MUST produce that same unknown-capability error, not a permission error.",
            "seed-rules#24",
            |x| Box::pin(anonymous_call(x)),
        ),
        c(
            "facade.token-sees-session-tools",
            "A live token's catalogue holds the session-bound tool, and calling it succeeds.",
            "With any resolved context, discovery MUST include the tools of session-bound sources, and the source MUST receive that context.",
            "seed-rules#5",
            |x| Box::pin(token_sees(x)),
        ),
        c(
            "facade.bad-credentials-anonymous",
            "A wrong token, another scheme, a malformed or empty Authorization value get the anonymous view (or 401 where declared).",
            "Each of the following MUST yield the anonymous view, never an error: no header; another scheme; a non-text value; an unknown or revoked token.",
            "seed-rules#3",
            |x| Box::pin(bad_credentials(x)),
        ),
        c(
            "facade.revoked-token-anonymous",
            "The request right after a revocation gets the anonymous view: the tool disappears and calling it is an unknown capability.",
            "After revocation, the next request presenting that bearer MUST get the anonymous view: session-bound tools disappear, and execution reports an unknown capability.",
            "seed-rules#21",
            |x| Box::pin(revoked(x)),
        ),
        c(
            "facade.second-token-profile",
            "A second token minted for one channel behaves as the declared re-mint profile (coexist or replace).",
            "Re-minting for an existing channel: profile [1454] MUST invalidate the earlier token. Profile [later/T1] MUST leave both valid. The harness MUST be told which profile applies.",
            "seed-rules#17",
            |x| Box::pin(second_token(x)),
        ),
        c(
            "facade.naming-rules",
            "The published names are exactly the declared topology's, for the anonymous and the session view.",
            "A source tool whose bare name is already a published downstream name MUST be published as provider:tool; the downstream tool keeps the bare name.",
            "seed-rules#10",
            |x| Box::pin(naming(x)),
        ),
        c(
            "facade.preflight-before-dispatch",
            "A schema-invalid call is refused, naming the tool, before the source runs (no audit entry line for it; no line at all where one line per call is declared).",
            "Source arguments MUST be validated against the tool's input_schema before the source is called. On failure the source MUST NOT run, and the error MUST name the capability.",
            "seed-rules#28",
            |x| Box::pin(preflight(x)),
        ),
        c(
            "facade.audit-shape",
            "A source call writes one entry and one exit line (or the one line declared) with provider, tool, channel and a correct args_sha256, under the declared member names.",
            "Both lines MUST carry provider, the bare tool name, channel (\"-\" when anonymous) and args_sha256.",
            "seed-rules#34",
            |x| Box::pin(audit_shape(x)),
        ),
        c(
            "facade.audit-no-plaintext",
            "Audit lines hold neither the arguments nor the token, raw or encoded.",
            "args_sha256 MUST be the lowercase hex SHA-256 of the compact JSON bytes of the validated argument object. Plaintext arguments MUST NOT be logged.",
            "seed-rules#35",
            |x| Box::pin(audit_plaintext(x)),
        ),
    ]
}

/// The Authorization value of a request: none, or this exact text.
type Auth<'a> = Option<&'a str>;

/// Why a step gave no usable answer. Each message names the step: the call with its
/// arguments and credentials (tokens shown as `[TOKEN]`), the hook, or the audit poll.
#[derive(Debug, Clone)]
enum Miss {
    /// Nothing (or not all of it) came within the deadline: a timeout, never a violation.
    Timeout(String),
    /// The step could not be carried out: no connection, a failed hook, an unreadable log,
    /// nothing of the case's own in the log.
    Failed(String),
    /// The facade answered, but not with what the step reads (no result, no catalogue).
    Answer(String),
}

/// What the case is waiting for, and the evidence so far: read when the case runs past its
/// deadline, so the timeout names the step that was waiting.
#[derive(Debug, Default)]
pub struct Trail {
    /// The step being waited for (redacted), empty before the first.
    pub step: String,
    /// The evidence so far (redacted).
    pub evidence: Vec<String>,
}

/// One MCP session with the facade.
struct Session<'a> {
    ctx: &'a FacadeCtx,
    http: HttpClient,
    session_id: Option<String>,
    evidence: Vec<String>,
    secrets: Vec<String>,
    next_id: u64,
}

/// What one capability call returned.
#[derive(Debug, Clone)]
struct CallObs {
    status: u16,
    /// JSON-RPC error `(code, message)`.
    error: Option<(i64, String)>,
    /// `isError` of a result.
    is_error: Option<bool>,
    /// Text content, joined.
    text: String,
    /// The whole result or error object.
    body: Value,
}

impl CallObs {
    fn failed(&self) -> bool {
        self.error.is_some() || self.is_error == Some(true) || self.status >= 400
    }

    /// The answer in a message: HTTP status and the result or error object, clipped.
    fn shown(&self) -> String {
        format!(
            "HTTP {} {}",
            self.status,
            clip_to(&self.body.to_string(), 300)
        )
    }
}

fn clip(s: &str) -> String {
    clip_to(s, 600)
}

fn clip_to(s: &str, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s.to_owned()
    }
}

/// Who a request is from, in a message: `anonymously` or `with Authorization `…``.
fn who(auth: Auth<'_>) -> String {
    match auth {
        None => "anonymously".into(),
        Some("") => "with an empty Authorization value".into(),
        Some(a) => format!("with Authorization `{a}`"),
    }
}

/// A capability call in a message: the tool, its arguments (clipped) and the credentials.
fn call_step(name: &str, args: &Value, auth: Auth<'_>) -> String {
    format!(
        "the call of `{name}` with arguments {} {}",
        clip_to(&args.to_string(), 200),
        who(auth)
    )
}

/// A JSON-RPC message in a message: its method (a capability call by tool and arguments)
/// and the credentials.
fn describe(message: &Value, auth: Auth<'_>) -> String {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("a message");
    let params = message.get("params");
    let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
    let args = |v: Option<&Value>| v.cloned().unwrap_or_else(|| json!({}));
    match (method, name) {
        ("tools/call", Some("search_capabilities")) => {
            format!("search_capabilities {}", who(auth))
        }
        ("tools/call", Some("execute_capability")) => {
            let a = params.and_then(|p| p.get("arguments"));
            let name = a
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            format!(
                "execute_capability: {}",
                call_step(name, &args(a.and_then(|a| a.get("arguments"))), auth)
            )
        }
        ("tools/call", Some(name)) => format!(
            "tools/call: {}",
            call_step(name, &args(params.and_then(|p| p.get("arguments"))), auth)
        ),
        (m, _) => format!("{m} {}", who(auth)),
    }
}

impl<'a> Session<'a> {
    async fn open(ctx: &'a FacadeCtx) -> Result<Session<'a>, Finding> {
        let http = HttpClient::new(&ctx.target.url).map_err(|e| {
            Finding::not_run(
                format!("initialize: the facade URL cannot be used: {e}"),
                Vec::new(),
            )
        })?;
        let mut s = Session {
            ctx,
            http,
            session_id: None,
            evidence: Vec::new(),
            secrets: Vec::new(),
            next_id: 1,
        };
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion": REVISION, "capabilities": {},
            "clientInfo": {"name": "parity", "version": env!("CARGO_PKG_VERSION")}}});
        let (ex, response) = match s.post(&init, None).await {
            Ok(x) => x,
            Err(m) => return Err(s.missed(m)),
        };
        if response.as_ref().and_then(|r| r.get("result")).is_none() {
            return Err(s.not_run(format!(
                "initialize at {REVISION} was not answered with a result (HTTP {})",
                ex.status
            )));
        }
        s.session_id = ex.header("mcp-session-id").map(str::to_owned);
        let _ = s
            .post(
                &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
                None,
            )
            .await;
        Ok(s)
    }

    fn redact(&self, text: &str) -> String {
        self.secrets
            .iter()
            .fold(text.to_owned(), |t, s| t.replace(s.as_str(), "[TOKEN]"))
    }

    fn note(&mut self, line: String) {
        let line = clip(&self.redact(&line));
        if let Ok(mut t) = self.ctx.trail.lock() {
            t.evidence.push(line.clone());
        }
        self.evidence.push(line);
    }

    /// Records the step the case now waits for (shown if the case runs past its deadline).
    fn waiting(&self, step: &str) {
        if let Ok(mut t) = self.ctx.trail.lock() {
            t.step = self.redact(step);
        }
    }

    async fn post(
        &mut self,
        message: &Value,
        auth: Auth<'_>,
    ) -> Result<(HttpExchange, Option<Value>), Miss> {
        let step = describe(message, auth);
        let mut request = HttpRequest::post_json(message);
        if let Some(id) = &self.session_id {
            request = request.header("mcp-session-id", id);
            request = request.header("mcp-protocol-version", REVISION);
        }
        if let Some(a) = auth {
            request = request.header("authorization", a);
        }
        let shown = match auth {
            Some(a) => format!("→ POST (Authorization: {a}) {message}"),
            None => format!("→ POST {message}"),
        };
        self.note(shown);
        self.waiting(&step);
        let deadline = tokio::time::Instant::now() + self.ctx.timing.message;
        let ex = self
            .http
            .send(request, deadline)
            .await
            .map_err(|e| match e {
                HttpError::Timeout { .. } => Miss::Timeout(format!(
                    "{step}: no complete answer within {} ms ({e})",
                    self.ctx.timing.message.as_millis()
                )),
                other => Miss::Failed(format!("{step}: {other}")),
            })?;
        let body = String::from_utf8_lossy(&ex.body).into_owned();
        self.note(format!("← {} {}", ex.status, body));
        let id = message.get("id");
        let response = ex.messages().ok().and_then(|ms| {
            ms.into_iter()
                .find(|m| id.is_some() && m.get("id") == id && m.get("method").is_none())
        });
        Ok((ex, response))
    }

    async fn request(
        &mut self,
        method: &str,
        params: Value,
        auth: Auth<'_>,
    ) -> Result<(HttpExchange, Option<Value>), Miss> {
        self.next_id += 1;
        let message = json!({"jsonrpc":"2.0","id": self.next_id,"method": method,"params": params});
        self.post(&message, auth).await
    }

    /// The published names `auth` sees, or the HTTP status when the request was refused.
    async fn list(&mut self, auth: Auth<'_>) -> Result<Result<Vec<String>, u16>, Miss> {
        match self.ctx.target.decl.catalogue {
            CatalogueForm::Meta => {
                let step = format!("search_capabilities {}", who(auth));
                let answer = |why: &str| Miss::Answer(format!("{step}: {why}"));
                let (ex, r) = self
                    .request(
                        "tools/call",
                        json!({"name": "search_capabilities", "arguments": {}}),
                        auth,
                    )
                    .await?;
                if ex.status >= 400 {
                    return Ok(Err(ex.status));
                }
                let result = r
                    .and_then(|r| r.get("result").cloned())
                    .ok_or_else(|| answer("not answered with a result"))?;
                let payload = result
                    .get("structuredContent")
                    .cloned()
                    .or_else(|| {
                        result
                            .pointer("/content/0/text")
                            .and_then(Value::as_str)
                            .and_then(|t| serde_json::from_str(t).ok())
                    })
                    .ok_or_else(|| answer("the result holds no JSON payload"))?;
                let names = payload
                    .get("capabilities")
                    .and_then(Value::as_array)
                    .ok_or_else(|| answer("the payload has no `capabilities` array"))?
                    .iter()
                    .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect();
                Ok(Ok(names))
            }
            CatalogueForm::Direct => {
                let mut names = Vec::new();
                let mut cursor: Option<String> = None;
                for _ in 0..100 {
                    let params = match &cursor {
                        Some(c) => json!({"cursor": c}),
                        None => json!({}),
                    };
                    let step = format!("tools/list {} (params {params})", who(auth));
                    let answer = |why: &str| Miss::Answer(format!("{step}: {why}"));
                    let (ex, r) = self.request("tools/list", params.clone(), auth).await?;
                    if ex.status >= 400 {
                        return Ok(Err(ex.status));
                    }
                    let result = r
                        .and_then(|r| r.get("result").cloned())
                        .ok_or_else(|| answer("not answered with a result"))?;
                    names.extend(
                        result
                            .get("tools")
                            .and_then(Value::as_array)
                            .ok_or_else(|| answer("the result has no `tools` array"))?
                            .iter()
                            .filter_map(|t| {
                                t.get("name").and_then(Value::as_str).map(str::to_owned)
                            }),
                    );
                    cursor = result
                        .get("nextCursor")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    if cursor.is_none() {
                        break;
                    }
                }
                Ok(Ok(names))
            }
        }
    }

    async fn call(&mut self, auth: Auth<'_>, name: &str, args: &Value) -> Result<CallObs, Miss> {
        let params = match self.ctx.target.decl.catalogue {
            CatalogueForm::Meta => json!({"name": "execute_capability",
                "arguments": {"name": name, "arguments": args}}),
            CatalogueForm::Direct => json!({"name": name, "arguments": args}),
        };
        let (ex, r) = self.request("tools/call", params, auth).await?;
        let r = r.unwrap_or(Value::Null);
        let error = r.get("error").map(|e| {
            (
                e.get("code").and_then(Value::as_i64).unwrap_or(0),
                e.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            )
        });
        let result = r.get("result");
        let text = result
            .and_then(|r| r.get("content"))
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(|i| i.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        Ok(CallObs {
            status: ex.status,
            error,
            is_error: result
                .and_then(|r| r.get("isError"))
                .and_then(Value::as_bool),
            text,
            body: r
                .get("result")
                .or_else(|| r.get("error"))
                .cloned()
                .unwrap_or(Value::Null),
        })
    }

    /// A hook command line with its placeholders filled from the endpoint and `last`
    /// appended (the channel or the token).
    fn hook_spec(&self, line: &str, last: &str) -> Result<PeerSpec, String> {
        let url = &self.ctx.target.url;
        let words: Vec<String> = crate::transport::peer::split_words(line)?
            .iter()
            .map(|w| fill_endpoint(w, url))
            .collect();
        let Some((program, args)) = words.split_first() else {
            return Err("the hook command is empty".into());
        };
        let mut spec = PeerSpec::new(program.clone(), args.to_vec());
        spec.args.push(last.to_owned());
        Ok(spec)
    }

    async fn mint(&mut self, channel: &str) -> Result<String, Miss> {
        let timeout = self.ctx.timing.message;
        let (token, step) = match &self.ctx.target.decl.hooks {
            Hooks::Admin(base) => {
                let to = format!("{}/mint", base.trim_end_matches('/'));
                let step = format!("the mint hook (POST {to} for channel {channel})");
                let client =
                    HttpClient::new(&to).map_err(|e| Miss::Failed(format!("{step}: {e}")))?;
                self.waiting(&step);
                let deadline = tokio::time::Instant::now() + timeout;
                let ex = client
                    .send(
                        HttpRequest::post_json(&json!({"channel": channel})),
                        deadline,
                    )
                    .await
                    .map_err(|e| match e {
                        HttpError::Timeout { .. } => Miss::Timeout(format!(
                            "{step}: no complete answer within {} ms ({e})",
                            timeout.as_millis()
                        )),
                        other => Miss::Failed(format!("{step}: {other}")),
                    })?;
                let v: Value = serde_json::from_slice(&ex.body).map_err(|_| {
                    Miss::Failed(format!("{step}: HTTP {} without a JSON body", ex.status))
                })?;
                let token = v
                    .get("token")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        Miss::Failed(format!("{step}: HTTP {} without `token`", ex.status))
                    })?;
                (token, step)
            }
            Hooks::Commands { mint, .. } => {
                let spec = self.hook_spec(mint, channel).map_err(|e| {
                    Miss::Failed(format!("the mint hook `{mint}` for channel {channel}: {e}"))
                })?;
                let step = format!("the mint hook `{}`", spec.display());
                self.waiting(&step);
                let token = crate::transport::peer::run_hook(&spec, timeout)
                    .await
                    .map_err(|e| hook_miss(&step, e))?;
                (token, step)
            }
        };
        if token.is_empty() {
            return Err(Miss::Failed(format!("{step}: returned an empty token")));
        }
        self.secrets.push(token.clone());
        self.note(format!("minted a token for channel {channel}: {token}"));
        Ok(token)
    }

    async fn revoke(&mut self, token: &str) -> Result<(), Miss> {
        let timeout = self.ctx.timing.message;
        match &self.ctx.target.decl.hooks {
            Hooks::Admin(base) => {
                let to = format!("{}/revoke", base.trim_end_matches('/'));
                let step = format!("the revoke hook (POST {to} for {token})");
                let client =
                    HttpClient::new(&to).map_err(|e| Miss::Failed(format!("{step}: {e}")))?;
                self.waiting(&step);
                let deadline = tokio::time::Instant::now() + timeout;
                let ex = client
                    .send(HttpRequest::post_json(&json!({"token": token})), deadline)
                    .await
                    .map_err(|e| match e {
                        HttpError::Timeout { .. } => Miss::Timeout(format!(
                            "{step}: no complete answer within {} ms ({e})",
                            timeout.as_millis()
                        )),
                        other => Miss::Failed(format!("{step}: {other}")),
                    })?;
                if ex.status >= 400 {
                    return Err(Miss::Failed(format!("{step}: HTTP {}", ex.status)));
                }
            }
            Hooks::Commands { revoke, .. } => {
                let spec = self
                    .hook_spec(revoke, token)
                    .map_err(|e| Miss::Failed(format!("the revoke hook `{revoke}`: {e}")))?;
                let step = format!("the revoke hook `{}`", spec.display());
                self.waiting(&step);
                crate::transport::peer::run_hook(&spec, timeout)
                    .await
                    .map_err(|e| hook_miss(&step, e))?;
            }
        }
        self.note(format!("revoked {token}"));
        Ok(())
    }

    fn fail(&self, message: impl Into<String>) -> Finding {
        Finding::violated(self.redact(&message.into()), self.evidence.clone())
    }

    fn not_run(&self, message: impl Into<String>) -> Finding {
        Finding::not_run(self.redact(&message.into()), self.evidence.clone())
    }

    /// The finding of a step that gave no usable answer: a timeout when nothing came in
    /// time, else not-run; the message names the step.
    fn missed(&self, miss: Miss) -> Finding {
        match miss {
            Miss::Timeout(m) => Finding {
                status: crate::engine::check::Status::Timeout(self.redact(&m)),
                evidence: self.evidence.clone(),
            },
            Miss::Failed(m) | Miss::Answer(m) => self.not_run(m),
        }
    }

    fn pass(&self) -> Finding {
        Finding::pass(self.evidence.clone())
    }
}

/// A hook command that gave no token or did not end well: past its deadline a timeout (as a
/// request to the admin hook is), else not-run; `step` names the hook and its command line.
fn hook_miss(step: &str, e: crate::transport::peer::HookError) -> Miss {
    match e {
        crate::transport::peer::HookError::Timeout(m) => Miss::Timeout(format!("{step}: {m}")),
        crate::transport::peer::HookError::Failed(m) => Miss::Failed(format!("{step}: {m}")),
    }
}

/// A channel id of this case's own.
fn channel(ctx: &FacadeCtx, tag: &str) -> String {
    let mut h = Sha256::new();
    h.update(ctx.case_id.as_bytes());
    h.update(format!("{:?}", Instant::now()).as_bytes());
    h.update(std::process::id().to_le_bytes());
    let d = h.finalize();
    format!(
        "parity-{tag}-{}",
        d.iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

/// A step's value, or the finding of its miss (a timeout, or not-run) returned.
macro_rules! tri {
    ($s:expr, $e:expr) => {
        match $e {
            Ok(v) => v,
            Err(miss) => return $s.missed(miss),
        }
    };
}

/// Opens a session and mints a token on a fresh channel; the finding when either fails.
async fn session_with_token<'a>(
    ctx: &'a FacadeCtx,
    tag: &str,
) -> Result<(Session<'a>, String, String), Finding> {
    let mut s = Session::open(ctx).await?;
    let ch = channel(ctx, tag);
    match s.mint(&ch).await {
        Ok(t) => Ok((s, t, ch)),
        Err(m) => Err(s.missed(m)),
    }
}

/// The names only a session sees: the session tool, plus the declared topology's
/// session-only names.
fn session_only(decl: &FacadeDecl) -> Vec<&String> {
    let mut v = vec![&decl.session_tool];
    if let Some(t) = &decl.topology {
        v.extend(
            t.session
                .iter()
                .filter(|n| !t.anonymous.contains(n) && **n != decl.session_tool),
        );
    }
    v
}

/// [`session_with_token`], then the precondition of the checks that judge the session tool's
/// gating: a live token's catalogue holds it. When it does not (a misspelled `session_tool`, a
/// hook that mints dead tokens), the case is not-run, so it cannot pass vacuously.
async fn live_session<'a>(
    ctx: &'a FacadeCtx,
    tag: &str,
) -> Result<(Session<'a>, String, String), Finding> {
    let (mut s, token, ch) = session_with_token(ctx, tag).await?;
    let decl = &ctx.target.decl;
    let listing = match s.list(Some(&format!("Bearer {token}"))).await {
        Ok(l) => l,
        Err(m) => return Err(s.missed(m)),
    };
    if !is_live_view(decl, &listing) {
        return Err(s.not_run(format!(
            "{} (a freshly minted token) does not show `{}`: {}; so its gating cannot be judged: check `session_tool` and the mint hook",
            listing_step(decl, Some(&format!("Bearer {token}"))),
            decl.session_tool,
            seen(&listing)
        )));
    }
    Ok((s, token, ch))
}

/// The request that reads a catalogue, in a message.
fn listing_step(decl: &FacadeDecl, auth: Auth<'_>) -> String {
    let method = match decl.catalogue {
        CatalogueForm::Meta => "search_capabilities",
        CatalogueForm::Direct => "tools/list",
    };
    format!("{method} {}", who(auth))
}

/// What a listing showed, in a message: the names (clipped) or the refusal status.
fn seen(listing: &Result<Vec<String>, u16>) -> String {
    match listing {
        Ok(names) if names.is_empty() => "it lists no name".into(),
        Ok(names) => clip_to(
            &format!(
                "it lists {} name(s): {}",
                names.len(),
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            300,
        ),
        Err(status) => format!("it was refused with HTTP {status}"),
    }
}

/// Whether a listing is the anonymous view: no session-only name, or 401 where declared.
fn is_anonymous_view(decl: &FacadeDecl, listing: &Result<Vec<String>, u16>) -> bool {
    match listing {
        Ok(names) => !session_only(decl).iter().any(|n| names.contains(n)),
        Err(401) => decl.bad_token == BadToken::Unauthorized,
        Err(_) => false,
    }
}

/// Whether a listing is a live session's view: a catalogue holding the session tool.
fn is_live_view(decl: &FacadeDecl, listing: &Result<Vec<String>, u16>) -> bool {
    matches!(listing, Ok(names) if names.contains(&decl.session_tool))
}

/// A listing once the session is open: a catalogue or a refusal status, or a violation
/// (an answer that is neither: a JSON-RPC error, an `isError` result, a payload that is not
/// a catalogue; rule 3 says bad credentials get the anonymous view, never an error). No
/// answer in time is a timeout, a failed exchange not-run.
macro_rules! listing {
    ($s:expr, $e:expr, $what:expr) => {
        match $e {
            Ok(v) => v,
            Err(Miss::Answer(e)) => return $s.fail(format!("{}: {e}", $what)),
            Err(miss) => return $s.missed(miss),
        }
    };
}

// After the macros, which it uses.
mod audit;
use audit::{audit_plaintext, audit_shape, preflight};
async fn anonymous_hides(ctx: &FacadeCtx) -> Finding {
    let (mut s, _, _) = match live_session(ctx, "hides").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let listing = listing!(s, s.list(None).await, "the anonymous catalogue");
    match listing {
        Ok(names) => {
            let gated = session_only(decl);
            let leaked: Vec<&String> = names.iter().filter(|n| gated.contains(n)).collect();
            if leaked.is_empty() {
                s.pass()
            } else {
                s.fail(format!(
                    "the anonymous catalogue shows session-bound tools: {}",
                    leaked
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
        Err(401) if decl.bad_token == BadToken::Unauthorized => s.pass(),
        Err(status) => s.fail(format!(
            "the anonymous catalogue request was refused with HTTP {status}; an anonymous caller gets the anonymous view"
        )),
    }
}

/// A made-up name as long as `like`.
fn made_up_name(like: &str) -> String {
    let base = "parity_no_such_tool_";
    let mut n = base.to_owned();
    while n.len() < like.len() {
        n.push('x');
    }
    n
}

/// The shape of an answer with `name` replaced by a placeholder: status, error code,
/// `isError`, text.
fn answer_shape(obs: &CallObs, name: &str) -> Value {
    // The whole result or error object (data, structuredContent, _meta included), with the
    // called name replaced.
    let body = serde_json::to_string(&obs.body)
        .unwrap_or_default()
        .replace(name, "[NAME]");
    json!({"http_status": obs.status, "answer": body})
}

async fn anonymous_call(ctx: &FacadeCtx) -> Finding {
    let (mut s, _, _) = match live_session(ctx, "probe").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let gated = tri!(
        s,
        s.call(None, &decl.session_tool, &decl.session_arguments)
            .await
    );
    let fake = made_up_name(&decl.session_tool);
    let unknown = tri!(s, s.call(None, &fake, &decl.session_arguments).await);
    if !gated.failed() {
        return s.fail(format!(
            "an anonymous call to session-bound `{}` succeeded",
            decl.session_tool
        ));
    }
    let a = answer_shape(&gated, &decl.session_tool);
    let b = answer_shape(&unknown, &fake);
    if a == b {
        s.pass()
    } else {
        s.fail(format!(
            "an anonymous call to session-bound `{}` is answered differently from a call to the made-up `{fake}`: {a} vs {b}",
            decl.session_tool
        ))
    }
}

async fn token_sees(ctx: &FacadeCtx) -> Finding {
    let (mut s, token, _) = match session_with_token(ctx, "sees").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let auth = format!("Bearer {token}");
    let listing = tri!(s, s.list(Some(&auth)).await);
    match listing {
        Ok(names) if names.contains(&decl.session_tool) => {}
        Ok(_) => {
            return s.fail(format!(
                "a live token's catalogue does not show `{}`",
                decl.session_tool
            ))
        }
        Err(status) => {
            return s.fail(format!(
                "a live token's catalogue request was refused with HTTP {status}"
            ))
        }
    }
    let obs = tri!(
        s,
        s.call(Some(&auth), &decl.session_tool, &decl.session_arguments)
            .await
    );
    if obs.failed() {
        s.fail(format!(
            "calling `{}` with a live token failed: {}",
            decl.session_tool,
            clip(&obs.body.to_string())
        ))
    } else {
        s.pass()
    }
}

async fn bad_credentials(ctx: &FacadeCtx) -> Finding {
    let (mut s, token, _) = match live_session(ctx, "bad").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let mut changed = token.clone().into_bytes();
    if let Some(last) = changed.last_mut() {
        *last = if *last == b'A' { b'B' } else { b'A' };
    }
    let changed = String::from_utf8_lossy(&changed).into_owned();
    s.secrets.push(changed.clone());
    let variants: Vec<(&str, String)> = vec![
        (
            "a token with its last character changed",
            format!("Bearer {changed}"),
        ),
        ("a token of the wrong length", "Bearer abc".to_owned()),
        (
            "the token with a character appended",
            format!("Bearer {token}x"),
        ),
        ("another scheme (Basic)", format!("Basic {token}")),
        ("a lower-case scheme", format!("bearer {token}")),
        ("two spaces after the scheme", format!("Bearer  {token}")),
        ("the scheme without a token", "Bearer".to_owned()),
        ("the scheme and a space", "Bearer ".to_owned()),
        ("the bare token", token.clone()),
        ("an empty value", String::new()),
    ];
    let mut wrong = Vec::new();
    for (what, value) in &variants {
        let listing = listing!(s, s.list(Some(value)).await, what);
        let ok = match (&listing, decl.bad_token) {
            (Ok(_), _) => is_anonymous_view(decl, &listing),
            (Err(401), BadToken::Unauthorized) => true,
            (Err(_), _) => false,
        };
        if !ok {
            wrong.push(match listing {
                Ok(_) => format!("{what}: the catalogue shows `{}`", decl.session_tool),
                Err(status) => format!(
                    "{what}: HTTP {status} instead of {}",
                    match decl.bad_token {
                        BadToken::Anonymous => "the anonymous view",
                        BadToken::Unauthorized => "401",
                    }
                ),
            });
        }
    }
    if wrong.is_empty() {
        s.pass()
    } else {
        s.fail(wrong.join("; "))
    }
}

async fn revoked(ctx: &FacadeCtx) -> Finding {
    let (mut s, token, _) = match session_with_token(ctx, "revoke").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let auth = format!("Bearer {token}");
    let before = tri!(s, s.list(Some(&auth)).await);
    if !is_live_view(decl, &before) {
        return s.not_run(format!(
            "{} (a fresh token, before the revoke hook) does not show `{}`: {}; so revocation cannot be judged (see facade.token-sees-session-tools)",
            listing_step(decl, Some(&auth)),
            decl.session_tool,
            seen(&before)
        ));
    }
    tri!(s, s.revoke(&token).await);
    let after = listing!(
        s,
        s.list(Some(&auth)).await,
        "the request right after the revocation"
    );
    if !is_anonymous_view(decl, &after) {
        return s.fail(format!(
            "the request right after revoking the token still shows `{}`",
            decl.session_tool
        ));
    }
    let obs = tri!(
        s,
        s.call(Some(&auth), &decl.session_tool, &decl.session_arguments)
            .await
    );
    if !obs.failed() {
        return s.fail(format!(
            "a call of `{}` with the revoked token still succeeded",
            decl.session_tool
        ));
    }
    s.pass()
}

async fn second_token(ctx: &FacadeCtx) -> Finding {
    let (mut s, first, ch) = match session_with_token(ctx, "remint").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let second = tri!(s, s.mint(&ch).await);
    if first == second {
        return s.fail("two mints for one channel returned the same token");
    }
    let a = tri!(s, s.list(Some(&format!("Bearer {first}"))).await);
    let b = tri!(s, s.list(Some(&format!("Bearer {second}"))).await);
    let first_live = is_live_view(decl, &a);
    let second_live = is_live_view(decl, &b);
    if !first_live && !is_anonymous_view(decl, &a) {
        return s.fail("after a second mint the first token gets neither the session view nor the anonymous view (an error instead)");
    }
    let expected_first = decl.remint == Remint::Coexist;
    if !second_live {
        return s.fail("the second token of the channel does not see the session-bound tool");
    }
    if first_live != expected_first {
        let profile = match decl.remint {
            Remint::Coexist => "coexist: both tokens stay valid",
            Remint::Replace => "replace: the earlier token stops working",
        };
        return s.fail(format!(
            "after a second mint the first token is {}, but the declared profile is {profile}",
            if first_live { "still valid" } else { "invalid" }
        ));
    }
    s.pass()
}

async fn naming(ctx: &FacadeCtx) -> Finding {
    let decl = &ctx.target.decl;
    let Some(topology) = decl.topology.clone() else {
        return Finding::skip("the target declares no topology ([facade.topology])");
    };
    let (mut s, token, _) = match session_with_token(ctx, "naming").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let mut problems = Vec::new();
    for (view, auth, expected) in [
        ("anonymous", None, &topology.anonymous),
        (
            "session",
            Some(format!("Bearer {token}")),
            &topology.session,
        ),
    ] {
        let listing = tri!(s, s.list(auth.as_deref()).await);
        let names = match listing {
            Ok(n) => n,
            Err(status) => {
                problems.push(format!(
                    "the {view} catalogue was refused with HTTP {status}"
                ));
                continue;
            }
        };
        let missing: Vec<&String> = expected.iter().filter(|n| !names.contains(n)).collect();
        let extra: Vec<&String> = names.iter().filter(|n| !expected.contains(n)).collect();
        if !missing.is_empty() || !extra.is_empty() {
            problems.push(format!(
                "{view} catalogue: missing {missing:?}, unexpected {extra:?}"
            ));
        }
    }
    if problems.is_empty() {
        s.pass()
    } else {
        s.fail(problems.join("; "))
    }
}

pub use crate::engine::http_surface::{
    open, reference_http_spec, start, start_printing, FacadeSource, StartLine, Started,
};

/// Runs the facade profile: every check of [`catalogue`] selected by `opts`, as cases
/// `check@facade#2025-11-25`, `opts.jobs` at a time. A facade that cannot be reached (no
/// `initialize` result) leaves `eras` empty with the reason in `notes`.
pub async fn run_facade(
    name: &str,
    url: &str,
    decl: &FacadeDecl,
    opts: &crate::engine::run::RunOptions,
) -> crate::engine::run::RunReport {
    use crate::engine::run::{case_id, to_result, RunReport};
    let started = Instant::now();
    let mut decl = decl.clone();
    if decl.hooks == Hooks::Admin(String::new()) {
        decl.hooks = Hooks::Admin(admin_base(url));
    }
    let target = Arc::new(FacadeTarget {
        name: name.to_owned(),
        url: url.to_owned(),
        decl,
    });
    let mut report = RunReport {
        target: name.to_owned(),
        ..RunReport::default()
    };
    let probe = FacadeCtx {
        target: target.clone(),
        timing: opts.timing,
        case_id: "facade-probe".into(),
        trail: Default::default(),
    };
    match Session::open(&probe).await {
        Ok(_) => {
            report.eras.insert(BINDING.into(), REVISION.into());
        }
        Err(f) => {
            report.notes.push(format!(
                "facade initialize probe at {url}: {}",
                f.status.verdict(Level::Must).1
            ));
            report.duration_ms = started.elapsed().as_millis() as u64;
            return report;
        }
    }
    let planned: Vec<(Check, FacadeFn)> = checks()
        .into_iter()
        .filter(|(c, _)| opts.selection.selects(&case_id(BINDING, c.id, REVISION)))
        .collect();
    opts.control.planned(planned.len());
    let sem = Arc::new(tokio::sync::Semaphore::new(opts.jobs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, (check, f)) in planned.into_iter().enumerate() {
        let target = target.clone();
        let timing = opts.timing;
        let control = opts.control.clone();
        let sem = sem.clone();
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let id = case_id(BINDING, check.id, REVISION);
            let r = control
                .run_case(
                    || {
                        let ctx = FacadeCtx {
                            target: target.clone(),
                            timing,
                            case_id: id.clone(),
                            trail: Default::default(),
                        };
                        async move {
                            let t0 = Instant::now();
                            let finding = match tokio::time::timeout(timing.case, f(&ctx)).await {
                                Ok(finding) => finding,
                                Err(_) => case_timeout(&ctx),
                            };
                            to_result(
                                BINDING,
                                &check,
                                REVISION,
                                finding,
                                t0.elapsed().as_millis() as u64,
                            )
                        }
                    },
                    |why| {
                        to_result(
                            BINDING,
                            &check,
                            REVISION,
                            Finding::not_run(why, Vec::new()),
                            0,
                        )
                    },
                )
                .await;
            (index, r)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(r) = joined {
            results.push(r);
        }
    }
    results.sort_by_key(|(i, _)| *i);
    report.cases = results.into_iter().map(|(_, r)| r).collect();
    report.duration_ms = started.elapsed().as_millis() as u64;
    report
}

/// The finding of a case that ran past its deadline: a timeout naming the step it was
/// waiting for, with the evidence so far.
fn case_timeout(ctx: &FacadeCtx) -> Finding {
    let (step, evidence) = match ctx.trail.lock() {
        Ok(t) => (t.step.clone(), t.evidence.clone()),
        Err(_) => (String::new(), Vec::new()),
    };
    let waiting = if step.is_empty() {
        "before its first request".to_owned()
    } else {
        format!("while waiting for {step}")
    };
    Finding {
        status: crate::engine::check::Status::Timeout(format!(
            "the case ran past its deadline ({} ms) {waiting}",
            ctx.timing.case.as_millis()
        )),
        evidence,
    }
}

/// The facade checks' declarations for `parity reference facade` started with
/// [`reference_args`] in `form`, auditing to `audit_log`.
pub fn reference_decl(form: CatalogueForm, audit_log: PathBuf) -> FacadeDecl {
    let sep = match form {
        CatalogueForm::Meta => ":",
        CatalogueForm::Direct => ".",
    };
    let six = [
        "read_file",
        "write_file",
        "list_dir",
        "exec",
        "status",
        "retry",
    ];
    let mut anonymous: Vec<String> = six.iter().map(|t| (*t).to_owned()).collect();
    anonymous.extend(six.iter().map(|t| format!("parity{sep}{t}")));
    let mut session = anonymous.clone();
    session.push("echo_channel".into());
    session.push(format!("echo2{sep}echo_channel"));
    FacadeDecl {
        catalogue: form,
        hooks: Hooks::Admin(String::new()),
        bad_token: BadToken::Anonymous,
        remint: Remint::Coexist,
        session_tool: "echo_channel".into(),
        session_arguments: json!({"x": 7}),
        preflight_tool: "echo_channel".into(),
        invalid_arguments: json!({"x": "seven"}),
        canary: Some(Canary {
            tool: "echo_channel".into(),
            argument: "note".into(),
            arguments: json!({"x": 7}),
        }),
        audit_log: Some(audit_log),
        audit: AuditShape::default(),
        topology: Some(Topology { anonymous, session }),
    }
}

/// The arguments of `parity reference facade` (or `parity fake-facade <fault>`) that
/// [`reference_decl`] describes: the admin hook, the reference MCP server as downstream
/// `ref`, session sources `echo` and `echo2`, the audit log, the catalogue form.
pub fn reference_args(exe: &str, form: CatalogueForm, audit_log: &std::path::Path) -> Vec<String> {
    vec![
        "--admin".into(),
        "--downstream".into(),
        format!(
            "ref={} reference mcp",
            crate::engine::target::shell_quote(exe)
        ),
        "--session-source".into(),
        "echo".into(),
        "--session-source".into(),
        "echo2".into(),
        "--audit-log".into(),
        audit_log.to_string_lossy().into_owned(),
        "--catalogue".into(),
        match form {
            CatalogueForm::Meta => "meta".into(),
            CatalogueForm::Direct => "direct".into(),
        },
    ]
}

/// The target file of benign facade `facade-one-line-audit` (`parity fake-facade
/// facade-one-line-audit`), as docs/facade.md shows it: its commands begin with `parity` and
/// its audit log is `/tmp/gateway-audit.log` ([`benign_target`] substitutes both).
pub const ONE_LINE_AUDIT_TARGET: &str = r#"version = 1
name = "one-line-audit gateway"
profiles = ["facade"]

[surfaces.http]
command = "parity fake-facade facade-one-line-audit --admin --audit-log /tmp/gateway-audit.log"
prints = "port"                       # its first stdout line is a port: http://127.0.0.1:<port>/mcp

[facade]
mint_command = "parity fake-facade-admin --port {port} mint"   # + the channel; prints the token
revoke_command = "parity fake-facade-admin --url {url} revoke" # + the token
session_tool = "whoami"               # session-bound; its schema accepts any object
preflight_tool = "write_file"         # so pre-flight is judged on a tool whose schema rejects something
preflight_invalid_arguments = { path = 7, content = "x" }
canary_argument = "write_file.content"    # whoami takes no string: the canary goes to write_file
canary_arguments = { path = "parity-canary.txt" }
audit_log = "/tmp/gateway-audit.log"

[facade.audit]                        # one tracing-style JSON line per call, after the source returns
lines = "one"
provider = "/fields/source"
tool = "/fields/capability"
channel = "/fields/session"
hash = "/fields/digest"
is_error = "/fields/failed"

[facade.topology]
anonymous = ["read_file", "write_file", "list_dir", "exec", "status", "retry"]
session = ["read_file", "write_file", "list_dir", "exec", "status", "retry", "whoami"]
"#;

/// The target file of benign facade `facade-late-audit`: the reference facade's declarations
/// (session tool `echo_channel`, the admin hook), no topology; its commands begin with
/// `parity` and its audit log is `/tmp/gateway-audit.log` ([`benign_target`] substitutes both).
pub const LATE_AUDIT_TARGET: &str = r#"version = 1
name = "late-audit gateway"
profiles = ["facade"]

[surfaces.http]
command = "parity fake-facade facade-late-audit --admin --audit-log /tmp/gateway-audit.log"

[facade]
admin = "same-origin"
session_tool = "echo_channel"
session_arguments = { x = 7 }
invalid_arguments = { x = "seven" }
canary_argument = "note"
audit_log = "/tmp/gateway-audit.log"
"#;

/// The target file of benign facade `name` with its commands starting `exe` (shell-quoted)
/// and its audit log at `audit`; `None` for a name without one.
pub fn benign_target(name: &str, exe: &str, audit: &std::path::Path) -> Option<String> {
    let text = match name {
        "facade-one-line-audit" => ONE_LINE_AUDIT_TARGET,
        "facade-late-audit" => LATE_AUDIT_TARGET,
        _ => return None,
    };
    let exe = crate::engine::target::shell_quote(exe);
    Some(
        text.replace("= \"parity ", &format!("= \"{exe} "))
            .replace("/tmp/gateway-audit.log", &audit.to_string_lossy()),
    )
}

/// The admin hook base of a facade URL: its origin plus `/admin`.
pub fn admin_base(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let host = rest.split('/').next().unwrap_or(rest);
    format!("http://{host}/admin")
}

/// Starts `parity reference facade` (or, with `fault`, `parity fake-facade <fault>`) in
/// `form`, runs the facade profile against it and shuts it down. The audit log lives in a
/// temporary directory removed afterwards.
pub async fn run_reference(
    fault: Option<&str>,
    form: CatalogueForm,
    opts: &crate::engine::run::RunOptions,
) -> Result<crate::engine::run::RunReport, String> {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| format!("cannot find this executable: {e}"))?;
    let dir = tempfile::Builder::new()
        .prefix("parity-facade-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let audit = dir.path().join("audit.log");
    let mut args = match fault {
        Some(f) => vec!["fake-facade".to_owned(), f.to_owned()],
        None => vec!["reference".to_owned(), "facade".to_owned()],
    };
    args.extend(reference_args(&exe, form, &audit));
    let spec = PeerSpec::new(exe, args);
    let mut started = start(&spec, opts.timing.case).await?;
    let decl = reference_decl(form, audit);
    let name = match fault {
        Some(f) => format!("parity fake-facade {f}"),
        None => "parity reference facade".to_owned(),
    };
    let report = run_facade(&name, &started.url, &decl, opts).await;
    started.peer.shutdown(opts.timing.grace).await;
    drop(dir);
    Ok(report)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn steps_name_the_call_its_arguments_and_its_credentials() {
        let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{
            "name":"execute_capability","arguments":{"name":"echo_channel","arguments":{"x":7}}}});
        assert_eq!(
            describe(&call, Some("Bearer tok")),
            "execute_capability: the call of `echo_channel` with arguments {\"x\":7} with Authorization `Bearer tok`"
        );
        let direct = json!({"method":"tools/call","params":{"name":"whoami"}});
        assert_eq!(
            describe(&direct, None),
            "tools/call: the call of `whoami` with arguments {} anonymously"
        );
        let search = json!({"method":"tools/call","params":{"name":"search_capabilities"}});
        assert_eq!(
            describe(&search, Some("")),
            "search_capabilities with an empty Authorization value"
        );
        assert_eq!(
            describe(&json!({"method":"initialize"}), None),
            "initialize anonymously"
        );
        assert_eq!(seen(&Err(401)), "it was refused with HTTP 401");
        assert_eq!(
            seen(&Ok(vec!["a".into(), "b".into()])),
            "it lists 2 name(s): `a`, `b`"
        );
    }

    fn ctx(url: &str) -> FacadeCtx {
        let mut decl = reference_decl(CatalogueForm::Meta, PathBuf::from("/nonexistent"));
        decl.hooks = Hooks::Commands {
            mint: "gwctl --port {port} --host {host} mint".into(),
            revoke: "gwctl --url {url} revoke".into(),
        };
        FacadeCtx {
            target: Arc::new(FacadeTarget {
                name: "t".into(),
                url: url.into(),
                decl,
            }),
            timing: Timing::scaled(0.1),
            case_id: "c".into(),
            trail: Default::default(),
        }
    }

    #[test]
    fn hook_commands_get_the_endpoint_and_their_last_argument() {
        let cx = ctx("http://127.0.0.1:4123/rpc");
        let s = Session {
            ctx: &cx,
            http: HttpClient::new(&cx.target.url).unwrap(),
            session_id: None,
            evidence: Vec::new(),
            secrets: vec!["tok".into()],
            next_id: 1,
        };
        let spec = s
            .hook_spec("gwctl --port {port} --host {host} mint", "chan")
            .unwrap();
        assert_eq!(spec.program, "gwctl");
        assert_eq!(
            spec.args,
            ["--port", "4123", "--host", "127.0.0.1", "mint", "chan"]
        );
        let spec = s.hook_spec("gwctl --url {url} revoke", "tok").unwrap();
        assert_eq!(
            spec.args,
            ["--url", "http://127.0.0.1:4123/rpc", "revoke", "tok"]
        );
        // A timeout names the step the case was waiting for, with the token redacted.
        s.waiting("the revoke hook `gwctl revoke tok`");
        let f = case_timeout(&cx);
        match f.status {
            crate::engine::check::Status::Timeout(m) => {
                assert!(
                    m.ends_with("while waiting for the revoke hook `gwctl revoke [TOKEN]`"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
