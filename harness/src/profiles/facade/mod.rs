//! The `facade` profile: black-box session-gating checks for any MCP facade over Streamable
//! HTTP (seed rules 3–5, 9–11, 17, 21, 24, 28, 33–35; fault classes B21 and B22;
//! `docs/facade.md`).
//!
//! The target gives the facade's URL (or a command that starts it and prints the URL as its
//! first stdout line), hooks to mint and revoke tokens, and declarations: how bad
//! credentials are answered (`anonymous`, the seed's rule, or `401`), what a second mint for
//! one channel does (`coexist` or `replace`), one session-bound tool with valid and
//! schema-invalid arguments, optionally the expected catalogues and an audit log path.
//!
//! Each case opens its own MCP session (`initialize` at 2025-11-25 over Streamable HTTP,
//! then `notifications/initialized`), mints its own tokens on a channel of its own, and
//! judges what the facade publishes and answers. The catalogue is read through
//! `search_capabilities`/`execute_capability` (meta form) or `tools/list`/`tools/call`
//! (direct form). Tokens never appear in evidence: they are replaced by `[TOKEN]`.
//!
//! Size (1430 lines): the ten session-gating checks, their token hooks and the facade session
//! they drive share the facade's model (the declarations are [`crate::engine::decl`]).

mod profile;
pub use profile::FacadeProfile;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use crate::engine::check::{BoxFinding, Check, Finding, Level, Revs, Timing};
pub use crate::engine::decl::{BadToken, CatalogueForm, FacadeDecl, Hooks, Remint, Topology};
use crate::transport::http::{HttpClient, HttpExchange, HttpRequest};
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
            "A schema-invalid call is refused, naming the tool, before the source runs (no audit entry line).",
            "Source arguments MUST be validated against the tool's input_schema before the source is called. On failure the source MUST NOT run, and the error MUST name the capability.",
            "seed-rules#28",
            |x| Box::pin(preflight(x)),
        ),
        c(
            "facade.audit-shape",
            "A source call writes one entry and one exit line with provider, tool, channel and a correct args_sha256.",
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
}

fn clip(s: &str) -> String {
    if s.len() > 600 {
        let mut end = 600;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s.to_owned()
    }
}

impl<'a> Session<'a> {
    async fn open(ctx: &'a FacadeCtx) -> Result<Session<'a>, Finding> {
        let http = HttpClient::new(&ctx.target.url)
            .map_err(|e| Finding::not_run(format!("facade URL: {e}"), Vec::new()))?;
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
        let (ex, response) = s
            .post(&init, None)
            .await
            .map_err(|e| Finding::not_run(format!("initialize: {e}"), s.evidence.clone()))?;
        if response.as_ref().and_then(|r| r.get("result")).is_none() {
            return Err(Finding::not_run(
                format!(
                    "initialize was not answered with a result (HTTP {})",
                    ex.status
                ),
                s.evidence.clone(),
            ));
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
        let line = self.redact(&line);
        self.evidence.push(clip(&line));
    }

    async fn post(
        &mut self,
        message: &Value,
        auth: Auth<'_>,
    ) -> Result<(HttpExchange, Option<Value>), String> {
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
        let deadline = tokio::time::Instant::now() + self.ctx.timing.message;
        let ex = self
            .http
            .send(request, deadline)
            .await
            .map_err(|e| e.to_string())?;
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
    ) -> Result<(HttpExchange, Option<Value>), String> {
        self.next_id += 1;
        let message = json!({"jsonrpc":"2.0","id": self.next_id,"method": method,"params": params});
        self.post(&message, auth).await
    }

    /// The published names `auth` sees, or the HTTP status when the request was refused.
    async fn list(&mut self, auth: Auth<'_>) -> Result<Result<Vec<String>, u16>, String> {
        match self.ctx.target.decl.catalogue {
            CatalogueForm::Meta => {
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
                    .ok_or("search_capabilities was not answered with a result")?;
                let payload = result
                    .get("structuredContent")
                    .cloned()
                    .or_else(|| {
                        result
                            .pointer("/content/0/text")
                            .and_then(Value::as_str)
                            .and_then(|t| serde_json::from_str(t).ok())
                    })
                    .ok_or("the search_capabilities result holds no JSON payload")?;
                let names = payload
                    .get("capabilities")
                    .and_then(Value::as_array)
                    .ok_or("the search_capabilities payload has no `capabilities` array")?
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
                    let (ex, r) = self.request("tools/list", params, auth).await?;
                    if ex.status >= 400 {
                        return Ok(Err(ex.status));
                    }
                    let result = r
                        .and_then(|r| r.get("result").cloned())
                        .ok_or("tools/list was not answered with a result")?;
                    names.extend(
                        result
                            .get("tools")
                            .and_then(Value::as_array)
                            .ok_or("the tools/list result has no `tools` array")?
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

    async fn call(&mut self, auth: Auth<'_>, name: &str, args: &Value) -> Result<CallObs, String> {
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

    async fn mint(&mut self, channel: &str) -> Result<String, String> {
        let timeout = self.ctx.timing.message;
        let token = match &self.ctx.target.decl.hooks {
            Hooks::Admin(base) => {
                let client = HttpClient::new(&format!("{}/mint", base.trim_end_matches('/')))
                    .map_err(|e| e.to_string())?;
                let deadline = tokio::time::Instant::now() + timeout;
                let ex = client
                    .send(
                        HttpRequest::post_json(&json!({"channel": channel})),
                        deadline,
                    )
                    .await
                    .map_err(|e| format!("mint hook: {e}"))?;
                let v: Value = serde_json::from_slice(&ex.body)
                    .map_err(|_| format!("mint hook: HTTP {} without a JSON body", ex.status))?;
                v.get("token")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("mint hook: HTTP {} without `token`", ex.status))?
            }
            Hooks::Commands { mint, .. } => {
                let mut spec = PeerSpec::from_command_line(mint)?;
                spec.args.push(channel.to_owned());
                crate::transport::peer::run_hook(&spec, timeout).await?
            }
        };
        if token.is_empty() {
            return Err("the mint hook returned an empty token".into());
        }
        self.secrets.push(token.clone());
        self.note(format!("minted a token for channel {channel}: {token}"));
        Ok(token)
    }

    async fn revoke(&mut self, token: &str) -> Result<(), String> {
        let timeout = self.ctx.timing.message;
        match &self.ctx.target.decl.hooks {
            Hooks::Admin(base) => {
                let client = HttpClient::new(&format!("{}/revoke", base.trim_end_matches('/')))
                    .map_err(|e| e.to_string())?;
                let deadline = tokio::time::Instant::now() + timeout;
                let ex = client
                    .send(HttpRequest::post_json(&json!({"token": token})), deadline)
                    .await
                    .map_err(|e| format!("revoke hook: {e}"))?;
                if ex.status >= 400 {
                    return Err(format!("revoke hook: HTTP {}", ex.status));
                }
            }
            Hooks::Commands { revoke, .. } => {
                let mut spec = PeerSpec::from_command_line(revoke)?;
                spec.args.push(token.to_owned());
                crate::transport::peer::run_hook(&spec, timeout).await?;
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

    fn pass(&self) -> Finding {
        Finding::pass(self.evidence.clone())
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

macro_rules! tri {
    ($s:expr, $e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return $s.not_run(e),
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
        Err(e) => Err(s.not_run(format!("the mint hook failed: {e}"))),
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
        Err(e) => return Err(s.not_run(e)),
    };
    if !is_live_view(decl, &listing) {
        return Err(s.not_run(format!(
            "a freshly minted token does not see `{}`, so its gating cannot be judged: check `session_tool` and the mint hook (facade.token-sees-session-tools shows what the token sees)",
            decl.session_tool
        )));
    }
    Ok((s, token, ch))
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
/// a catalogue; rule 3 says bad credentials get the anonymous view, never an error).
macro_rules! listing {
    ($s:expr, $e:expr, $what:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return $s.fail(format!("{}: {e}", $what)),
        }
    };
}

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
            "a fresh token does not see `{}`, so revocation cannot be judged (see facade.token-sees-session-tools)",
            decl.session_tool
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

/// Most bytes of an audit log read per look: 16 MiB (what the case's own calls wrote).
const AUDIT_READ_CAP: u64 = 16 * 1024 * 1024;

/// The audit log's length now, where a case's own lines will start. A path that is not a
/// regular file is an error (a FIFO or device would block or never end).
async fn audit_len(path: &std::path::Path) -> Result<u64, String> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| format!("cannot read the audit log {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "the audit log {} is not a regular file",
            path.display()
        ));
    }
    Ok(meta.len())
}

/// The audit lines written since byte `from` whose `channel` member is `channel`, parsed
/// (unparsable lines are skipped), and the text read. Reads at most [`AUDIT_READ_CAP`]
/// bytes, off the async threads.
async fn audit_lines(
    path: &std::path::Path,
    channel: &str,
    from: u64,
) -> Result<(Vec<Value>, String), String> {
    use std::io::{Read, Seek, SeekFrom};
    audit_len(path).await?;
    let owned = path.to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let mut f = std::fs::File::open(&owned)?;
        f.seek(SeekFrom::Start(from))?;
        let mut buf = Vec::new();
        f.take(AUDIT_READ_CAP).read_to_end(&mut buf)?;
        Ok(buf)
    })
    .await
    .map_err(|e| format!("reading the audit log failed: {e}"))?
    .map_err(|e| format!("cannot read the audit log {}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let lines = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("channel").and_then(Value::as_str) == Some(channel))
        .collect();
    Ok((lines, text))
}

/// Polls the audit log from `from` until `want` lines of `channel` appear (up to about a
/// second), returning what was found.
async fn await_audit_lines(
    path: &std::path::Path,
    channel: &str,
    from: u64,
    want: usize,
) -> Result<(Vec<Value>, String), String> {
    let mut found = (Vec::new(), String::new());
    for _ in 0..40 {
        found = audit_lines(path, channel, from).await?;
        if found.0.len() >= want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Ok(found)
}

async fn preflight(ctx: &FacadeCtx) -> Finding {
    let (mut s, token, ch) = match live_session(ctx, "preflight").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    let decl = &ctx.target.decl;
    let from = match &decl.audit_log {
        Some(p) => Some(tri!(s, audit_len(p).await)),
        None => None,
    };
    let obs = tri!(
        s,
        s.call(
            Some(&format!("Bearer {token}")),
            &decl.session_tool,
            &decl.invalid_arguments
        )
        .await
    );
    if !obs.failed() {
        return s.fail(format!(
            "a call of `{}` with schema-invalid arguments {} was not refused",
            decl.session_tool, decl.invalid_arguments
        ));
    }
    let message = obs
        .error
        .as_ref()
        .map(|e| e.1.clone())
        .unwrap_or(obs.text.clone());
    if !message.contains(&decl.session_tool) {
        return s.fail(format!(
            "the refusal does not name the capability `{}`: {}",
            decl.session_tool,
            clip(&message)
        ));
    }
    if let (Some(path), Some(from)) = (&decl.audit_log, from) {
        // A valid call on the same channel is the barrier: once its lines are in the log,
        // any line of the invalid call would be too.
        let valid = tri!(
            s,
            s.call(
                Some(&format!("Bearer {token}")),
                &decl.session_tool,
                &decl.session_arguments
            )
            .await
        );
        if valid.failed() {
            return s.not_run(
                "the valid call after the refused one failed, so the audit log cannot be judged",
            );
        }
        let (lines, _) = tri!(s, await_audit_lines(path, &ch, from, 2).await);
        let entries = lines.iter().filter(|l| l.get("is_error").is_none()).count();
        for l in &lines {
            s.note(format!("audit: {l}"));
        }
        if entries == 0 {
            return s.not_run("the valid call wrote no audit entry line for its channel, so the log cannot show whether the refused call reached the source");
        }
        if entries > 1 {
            return s.fail(
                "the schema-invalid call reached the source: the audit log has an entry line for it beside the valid call's",
            );
        }
    }
    s.pass()
}

/// Makes the session tool's valid arguments, with the canary in the canary argument.
fn canary_arguments(decl: &FacadeDecl, canary: &str) -> Value {
    let mut args = decl.session_arguments.clone();
    if let (Some(name), Some(obj)) = (&decl.canary_argument, args.as_object_mut()) {
        obj.insert(name.clone(), Value::from(canary));
    }
    args
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One audited call on a fresh channel: the session, the token, the arguments sent, the
/// audit lines of the channel and the whole log text.
async fn audited_call<'a>(
    ctx: &'a FacadeCtx,
    tag: &str,
    canary: &str,
) -> Result<(Session<'a>, String, Value, Vec<Value>, String), Finding> {
    let decl = &ctx.target.decl;
    let Some(path) = decl.audit_log.clone() else {
        return Err(Finding::skip(
            "the target declares no audit log ([facade] audit_log)",
        ));
    };
    let (mut s, token, ch) = session_with_token(ctx, tag).await?;
    let from = match audit_len(&path).await {
        Ok(n) => n,
        Err(e) => return Err(s.not_run(e)),
    };
    let args = canary_arguments(decl, canary);
    let obs = match s
        .call(Some(&format!("Bearer {token}")), &decl.session_tool, &args)
        .await
    {
        Ok(o) => o,
        Err(e) => return Err(s.not_run(e)),
    };
    if obs.failed() {
        return Err(s.not_run(format!(
            "the audited call of `{}` failed, so its audit lines cannot be judged",
            decl.session_tool
        )));
    }
    // The exit line may be written just after the response.
    let found = match await_audit_lines(&path, &ch, from, 2).await {
        Ok(x) => x,
        Err(e) => return Err(s.not_run(e)),
    };
    Ok((s, token, args, found.0, found.1))
}

async fn audit_shape(ctx: &FacadeCtx) -> Finding {
    let decl = &ctx.target.decl;
    let (mut s, _, args, lines, _) = match audited_call(ctx, "audit", "parity-audit-value").await {
        Ok(x) => x,
        Err(f) => return f,
    };
    for l in &lines {
        s.note(format!("audit: {l}"));
    }
    let compact = serde_json::to_vec(&args).unwrap_or_default();
    let expected_hash = hex_sha256(&compact);
    let entries: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("is_error").is_none())
        .collect();
    let exits: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("is_error").is_some())
        .collect();
    let mut problems = Vec::new();
    if entries.len() != 1 {
        problems.push(format!(
            "{} entry lines for the call (expected 1)",
            entries.len()
        ));
    }
    if exits.len() != 1 {
        problems.push(format!(
            "{} exit lines with `is_error` for the call (expected 1)",
            exits.len()
        ));
    }
    let bare = decl
        .session_tool
        .rsplit([':', '.'])
        .next()
        .unwrap_or(&decl.session_tool);
    for l in entries.iter().chain(exits.iter()) {
        for key in ["provider", "tool", "channel", "args_sha256"] {
            if l.get(key).and_then(Value::as_str).is_none() {
                problems.push(format!("a line lacks the string `{key}`"));
            }
        }
        if let Some(t) = l.get("tool").and_then(Value::as_str) {
            if t != bare {
                problems.push(format!("`tool` is {t:?}, not the bare name {bare:?}"));
            }
        }
        if let Some(h) = l.get("args_sha256").and_then(Value::as_str) {
            if h != expected_hash {
                problems.push(format!(
                    "`args_sha256` is {h:?}; the SHA-256 of the compact arguments {} is {expected_hash:?}",
                    String::from_utf8_lossy(&compact)
                ));
            }
        }
    }
    for l in &exits {
        if !l.get("is_error").is_some_and(Value::is_boolean) {
            problems.push("`is_error` of the exit line is not a boolean".into());
        }
    }
    problems.dedup();
    if problems.is_empty() {
        s.pass()
    } else {
        s.fail(problems.join("; "))
    }
}

/// The encodings a secret may hide in: raw, URL-encoded, base64 at each of three
/// alignments (standard and URL-safe alphabets).
pub fn encodings(secret: &str) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use base64::Engine as _;
    let mut v = vec![secret.to_owned()];
    let url: String = secret
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    v.push(url);
    for pad in 0..3 {
        let mut bytes = vec![b'a'; pad];
        bytes.extend_from_slice(secret.as_bytes());
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let enc = engine.encode(&bytes);
            // Skip the characters that depend on the prefix and on the end.
            let skip = (pad * 4).div_ceil(3);
            let core: String = enc.chars().skip(skip).collect();
            let keep = core.len().saturating_sub(3);
            if keep >= 8 {
                v.push(core[..keep].to_owned());
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

async fn audit_plaintext(ctx: &FacadeCtx) -> Finding {
    let decl = &ctx.target.decl;
    let canary = format!("parity-canary-{}", &channel(ctx, "c")[14..]);
    let (mut s, token, _, lines, text) = match audited_call(ctx, "plain", &canary).await {
        Ok(x) => x,
        Err(f) => return f,
    };
    for l in &lines {
        s.note(format!("audit: {l}"));
    }
    let mut secrets: Vec<(&str, String)> = Vec::new();
    if decl.canary_argument.is_some() {
        secrets.push(("the argument canary", canary.clone()));
    }
    secrets.push(("the bearer token", token.clone()));
    let mut found = Vec::new();
    for (what, secret) in &secrets {
        if encodings(secret).iter().any(|e| text.contains(e.as_str())) {
            found.push(*what);
        }
    }
    if found.is_empty() {
        if decl.canary_argument.is_none() {
            return Finding::advisory(
                "the token is absent from the audit log, but no canary_argument is declared, so plaintext arguments could not be looked for",
                s.evidence.clone(),
            );
        }
        s.pass()
    } else {
        s.fail(format!("the audit log contains {}", found.join(" and ")))
    }
}

pub use crate::engine::http_surface::{reference_http_spec, start, FacadeSource, Started};

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
                        };
                        async move {
                            let t0 = Instant::now();
                            let finding = match tokio::time::timeout(timing.case, f(&ctx)).await {
                                Ok(finding) => finding,
                                Err(_) => Finding {
                                    status: crate::engine::check::Status::Timeout(
                                        "the case ran past its deadline".into(),
                                    ),
                                    evidence: Vec::new(),
                                },
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
        invalid_arguments: json!({"x": "seven"}),
        canary_argument: Some("note".into()),
        audit_log: Some(audit_log),
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
