//! The check model: what a check is, what it finds, and the context a check runs in.
//!
//! A check has a stable hierarchical id (`mcp.stdio.stdout-purity`), a spec reference (revision +
//! section URL), a level taken from the spec's own keyword with the sentence quoted, a
//! one-sentence requirement, the revisions it applies to and the capability it needs. A case is a
//! check at one binding and one revision, with the id `check-id@binding#revision`.
//!
//! Levels map to verdicts: a violated MUST / MUST NOT fails; a violated SHOULD / SHOULD NOT or a
//! robustness rule (no spec keyword, but real clients break on it) warns.

use crate::protocol::mcp::{Client, Era, Reply};
use crate::transport::peer::{Peer, PeerError, PeerSpec, ShutdownGrace, ShutdownReport};
use crate::transport::wire::{Dir, WireEvent};
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The requirement level, from the spec's own keyword (RFC 2119).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// MUST / REQUIRED / SHALL: a violation fails.
    #[serde(rename = "MUST")]
    Must,
    /// MUST NOT / SHALL NOT: a violation fails.
    #[serde(rename = "MUST NOT")]
    MustNot,
    /// SHOULD / RECOMMENDED: a violation warns.
    #[serde(rename = "SHOULD")]
    Should,
    /// SHOULD NOT: a violation warns.
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    /// No spec keyword, but real clients break on it: a violation warns.
    #[serde(rename = "robustness")]
    Robustness,
}

impl Level {
    /// The verdict a violation of this level gets.
    pub fn violation_verdict(self) -> Verdict {
        match self {
            Level::Must | Level::MustNot => Verdict::Fail,
            _ => Verdict::Warn,
        }
    }
    /// The level of a keyword as printed ([`Level::as_str`]): `MUST`, `MUST NOT`, `SHOULD`,
    /// `SHOULD NOT` or `robustness`; `None` for anything else.
    pub fn from_keyword(s: &str) -> Option<Level> {
        Some(match s {
            "MUST" => Level::Must,
            "MUST NOT" => Level::MustNot,
            "SHOULD" => Level::Should,
            "SHOULD NOT" => Level::ShouldNot,
            "robustness" => Level::Robustness,
            _ => return None,
        })
    }
    /// The keyword as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::Robustness => "robustness",
        }
    }
}

/// The verdict of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The requirement held.
    Pass,
    /// A MUST-level requirement was violated.
    Fail,
    /// A SHOULD-level or robustness requirement was violated.
    Warn,
    /// Not applicable (capability not declared, revision not supported).
    Skip,
    /// Could not run (the peer did not start, the handshake failed).
    NotRun,
    /// The case ran past its deadline.
    Timeout,
    /// The case failed or timed out, then passed when `--retries` ran it again: reported apart
    /// from a plain pass, and does not fail the run.
    Flaky,
}

impl Verdict {
    /// Lowercase name as printed and serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Warn => "warn",
            Verdict::Skip => "skip",
            Verdict::NotRun => "not-run",
            Verdict::Timeout => "timeout",
            Verdict::Flaky => "flaky",
        }
    }

    /// Whether a case with this verdict executed: pass, fail, warn, timeout, flaky (not skip or
    /// not-run).
    pub fn executed(self) -> bool {
        !matches!(self, Verdict::Skip | Verdict::NotRun)
    }
}

/// What a check's run found, before its level is applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// The requirement held.
    Pass,
    /// The requirement was violated; the text says how.
    Violated(String),
    /// A lesser violation than the check's level: always a warning (e.g. a valid but
    /// unconventional error code where the spec only suggests one).
    Advisory(String),
    /// The check does not apply; the text says why.
    Skip(String),
    /// The check could not run; the text says why.
    NotRun(String),
    /// The peer did not answer within a deadline, so the requirement could not be judged.
    Timeout(String),
    /// A MUST-level rule outside the check's own level was broken (e.g. a request never
    /// answered because the server exited): always a failure.
    Failed(String),
}

impl Status {
    /// The verdict and message of this status under a check's level: a violation gets the
    /// level's verdict, an advisory always warns, a broken outside MUST always fails.
    pub fn verdict(self, level: Level) -> (Verdict, String) {
        match self {
            Status::Pass => (Verdict::Pass, String::new()),
            Status::Violated(m) => (level.violation_verdict(), m),
            Status::Advisory(m) => (Verdict::Warn, m),
            Status::Skip(m) => (Verdict::Skip, m),
            Status::NotRun(m) => (Verdict::NotRun, m),
            Status::Timeout(m) => (Verdict::Timeout, m),
            Status::Failed(m) => (Verdict::Fail, m),
        }
    }
}

/// A status plus the evidence behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What was found.
    pub status: Status,
    /// Excerpt of the exchange: lines like `→ {...}` / `← {...}`.
    pub evidence: Vec<String>,
}

impl Finding {
    /// A pass with evidence.
    pub fn pass(evidence: Vec<String>) -> Finding {
        Finding {
            status: Status::Pass,
            evidence,
        }
    }
    /// A violation with a message and evidence.
    pub fn violated(msg: impl Into<String>, evidence: Vec<String>) -> Finding {
        Finding {
            status: Status::Violated(msg.into()),
            evidence,
        }
    }
    /// An advisory (warn) with a message and evidence.
    pub fn advisory(msg: impl Into<String>, evidence: Vec<String>) -> Finding {
        Finding {
            status: Status::Advisory(msg.into()),
            evidence,
        }
    }
    /// Not applicable.
    pub fn skip(msg: impl Into<String>) -> Finding {
        Finding {
            status: Status::Skip(msg.into()),
            evidence: Vec::new(),
        }
    }
    /// Could not run.
    pub fn not_run(msg: impl Into<String>, evidence: Vec<String>) -> Finding {
        Finding {
            status: Status::NotRun(msg.into()),
            evidence,
        }
    }
}

/// A boxed future of a finding, borrowed from the context.
pub type BoxFinding<'a> = Pin<Box<dyn Future<Output = Finding> + Send + 'a>>;

/// An active check: drives its own sessions through the context.
pub type ActiveFn = for<'a> fn(&'a Ctx) -> BoxFinding<'a>;

/// A passive monitor: judges every session's frames of one era.
pub type MonitorFn = fn(&MonitorInput) -> Finding;

/// How a check runs.
#[derive(Clone, Copy)]
pub enum CheckKind {
    /// Drives the peer itself.
    Active(ActiveFn),
    /// Watches the frames of every session of the era (and one session of its own).
    Monitor(MonitorFn),
    /// Run by its profile's own [`Profile::run`](crate::engine::profile::Profile::run), which
    /// plans its cases and judges them with bodies it keeps itself; the engine's runners never
    /// call it (the facade, hygiene, dispatcher and guard profiles, and a profile registered
    /// through the library).
    Own,
}

/// Which revisions a check applies to.
#[derive(Debug, Clone, Copy)]
pub enum Revs {
    /// Every revision.
    All,
    /// Legacy-era revisions only.
    Legacy,
    /// The modern revision only.
    Modern,
    /// Exactly these.
    Only(&'static [&'static str]),
    /// Every revision except these.
    Except(&'static [&'static str]),
}

impl Revs {
    /// Whether `rev` is covered.
    pub fn contains(&self, rev: &str) -> bool {
        match self {
            Revs::All => true,
            Revs::Legacy => Era::of(rev) == Era::Legacy,
            Revs::Modern => Era::of(rev) == Era::Modern,
            Revs::Only(list) => list.contains(&rev),
            Revs::Except(list) => !list.contains(&rev),
        }
    }
    /// Display form for the catalogue.
    pub fn describe(&self) -> String {
        match self {
            Revs::All => "all".into(),
            Revs::Legacy => "2024-11-05…2025-11-25".into(),
            Revs::Modern => "2026-07-28".into(),
            Revs::Only(l) => l.join(", "),
            Revs::Except(l) => format!("all but {}", l.join(", ")),
        }
    }
}

/// One entry of the check catalogue.
#[derive(Clone, Copy)]
pub struct Check {
    /// Stable hierarchical id, e.g. `mcp.stdio.stdout-purity`.
    pub id: &'static str,
    /// The requirement in one sentence.
    pub requirement: &'static str,
    /// Level from the spec's keyword.
    pub level: Level,
    /// The spec sentence the level comes from, quoted.
    pub quote: &'static str,
    /// Where it is written: `<path>` under the revision's specification, or an external
    /// reference such as `jsonrpc-2.0#5.1`.
    pub section: &'static str,
    /// Revisions it applies to.
    pub revs: Revs,
    /// Server capability that must be declared for the check to apply (`tools`), if any.
    pub capability: Option<&'static str>,
    /// How it runs.
    pub kind: CheckKind,
}

impl Check {
    /// A check its profile runs itself ([`CheckKind::Own`]), as the facade, hygiene and
    /// dispatcher catalogues declare theirs: each field as [`Check`] documents it.
    pub fn own(
        id: &'static str,
        requirement: &'static str,
        level: Level,
        quote: &'static str,
        section: &'static str,
        revs: Revs,
        capability: Option<&'static str>,
    ) -> Check {
        Check {
            id,
            requirement,
            level,
            quote,
            section,
            revs,
            capability,
            kind: CheckKind::Own,
        }
    }
    /// The revision a catalogue links to: the newest legacy revision (2025-11-25) for checks
    /// of every era, 2026-07-28 for modern-only checks, the pinned revision otherwise.
    pub fn home_revision(&self) -> &'static str {
        match self.revs {
            Revs::Modern => "2026-07-28",
            Revs::Only(l) => l.first().copied().unwrap_or("2025-11-25"),
            _ => "2025-11-25",
        }
    }

    /// The spec reference URL for a revision (JSON-RPC references point at jsonrpc.org).
    pub fn spec_url(&self, revision: &str) -> String {
        if let Some(rest) = self.section.strip_prefix("jsonrpc-2.0") {
            format!("https://www.jsonrpc.org/specification{rest}")
        } else if let Some(rest) = self.section.strip_prefix("acp:") {
            format!("https://agentclientprotocol.com/protocol/v1/{rest}")
        } else if let Some(rest) = self.section.strip_prefix("hygiene#") {
            format!("docs/hygiene.md#{rest}")
        } else if self.section.starts_with("docs/") {
            self.section.to_string()
        } else if let Some(rest) = self.section.strip_prefix("guard#") {
            format!("docs/guard.md#{rest}")
        } else if let Some(rest) = self.section.strip_prefix("seed-rules#") {
            format!("docs/facade.md#rule-{rest}")
        } else if let Some(rest) = self.section.strip_prefix("rfc8259") {
            format!("https://www.rfc-editor.org/rfc/rfc8259{rest}")
        } else {
            format!(
                "https://modelcontextprotocol.io/specification/{revision}/{}",
                self.section
            )
        }
    }
}

/// A tool call the target declares slow enough to be cancelled in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowCall {
    /// Tool name.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
    /// How long the call takes when left alone, in milliseconds: the cancellation check listens
    /// that long (plus the silence window) for a response the cancel should have suppressed.
    pub ms: u64,
}

/// How a target is started, plus what it declares about itself.
#[derive(Debug, Clone)]
pub struct McpTarget {
    /// Display name.
    pub name: String,
    /// The command.
    pub spec: PeerSpec,
    /// A tool call the target declares slow enough to be cancelled in flight
    /// (`name`, `arguments`); `None` when it declares none.
    pub slow_call: Option<SlowCall>,
    /// The target serves the bundled reference dispatcher and its seeded workspace (the
    /// reference itself, or a faulty peer wrapping it): scenarios with `targets: [reference]`
    /// run only then.
    pub reference: bool,
    /// ACP only: the tool extension method (`None`: the target exposes none; the tool-method
    /// checks are skipped).
    pub tool_method: Option<String>,
    /// ACP only: the tool method's params template (`[surfaces.acp] params`,
    /// [`crate::protocol::acp::fill_params`]); `None` for the ToolCall map.
    pub tool_params: Option<serde_json::Value>,
    /// ACP only: a prompt text the agent keeps its turn open for until `session/cancel` (the
    /// reference's is `wait_for_cancel`); without one the cancel check cancels an ordinary
    /// prompt at once.
    pub cancel_prompt: Option<String>,
    /// MCP over Streamable HTTP: the endpoint URL. Set, sessions go through
    /// [`crate::transport::http_bridge`] instead of starting `spec`, and cases are of binding
    /// `mcp-http`.
    pub http: Option<String>,
    /// Which tools parity may call for the tool-result checks, and which never
    /// (`[tools]`, `--call-tools`).
    pub calls: CallPolicy,
    /// Argument values declared for prompts (`[prompts.<name>] arguments`): `mcp.prompts.get`
    /// gets a prompt with required arguments only with these.
    pub prompt_arguments: std::collections::BTreeMap<String, serde_json::Map<String, Value>>,
}

/// Which tools parity may call (docs/target.md, `[tools]`). The MCP spec tells clients to
/// treat tool annotations as untrusted unless the server is trusted (2025-03-26 and later,
/// `server/tools`), so nothing is called on annotations alone: a tool is called when it is
/// listed in `safe`, or, with `read_only` (`--call-tools read-only`, the user's statement that
/// the server's annotations are trusted), when it is annotated `readOnlyHint: true` without
/// `destructiveHint: true`. A tool in `never` is called by no check (the tool-result checks,
/// `mcp.tools.invalid-arguments`, generated equivalence).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallPolicy {
    /// Tools declared safe to call with any arguments their `inputSchema` accepts.
    pub safe: Vec<String>,
    /// Tools never called.
    pub never: Vec<String>,
    /// Tools annotated read-only (and not destructive) may be called too.
    pub read_only: bool,
}

impl CallPolicy {
    /// How to declare safe tools, for the skip of a check that found none.
    pub const HOW: &'static str = "list tools safe to call in the target (`[tools] safe = [\"name\", …]`), or pass `--call-tools read-only` to call the tools annotated read-only";

    /// Whether a check may call the tool `name` at all (not in `never`).
    pub fn allows(&self, name: &str) -> bool {
        !self.never.iter().any(|n| n == name)
    }

    /// Whether the tool-result checks may call this `tools/list` entry: not in `never`, and
    /// in `safe` or (with `read_only`) annotated read-only and not destructive.
    pub fn may_call(&self, tool: &Value) -> bool {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            return false;
        };
        if !self.allows(name) {
            return false;
        }
        if self.safe.iter().any(|n| n == name) {
            return true;
        }
        let hint = |k: &str| {
            tool.pointer(&format!("/annotations/{k}"))
                .and_then(Value::as_bool)
        };
        self.read_only
            && hint("readOnlyHint") == Some(true)
            && hint("destructiveHint") != Some(true)
    }
}

/// The binding of MCP cases over Streamable HTTP.
pub const HTTP_BINDING: &str = "mcp-http";

/// The binding of MCP cases over stdio (and of scenarios).
pub const STDIO_BINDING: &str = "mcp-stdio";

impl McpTarget {
    /// The binding of this target's MCP cases: `mcp-http` or `mcp-stdio`.
    pub fn binding(&self) -> &'static str {
        if self.http.is_some() {
            HTTP_BINDING
        } else {
            STDIO_BINDING
        }
    }

    /// Starts a session peer: the command of `spec`, or a bridge to the HTTP endpoint
    /// (each POST bounded by `deadline`).
    ///
    /// Errors: the process cannot start, or the URL is not an `http://` URL.
    pub fn start_peer(&self, deadline: Duration) -> Result<Peer, PeerError> {
        match &self.http {
            Some(url) => crate::transport::http_bridge::peer(url, self.spec.line_cap, deadline)
                .map_err(|e| PeerError::Spawn {
                    command: url.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
                }),
            None => Peer::spawn(&self.spec),
        }
    }

    /// A target started by `spec`, declaring nothing.
    pub fn new(name: impl Into<String>, spec: PeerSpec) -> McpTarget {
        McpTarget {
            name: name.into(),
            spec,
            slow_call: None,
            reference: false,
            tool_method: None,
            tool_params: None,
            cancel_prompt: None,
            http: None,
            calls: CallPolicy::default(),
            prompt_arguments: Default::default(),
        }
    }
}

/// Deadlines and graces for one run.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Per-message deadline.
    pub message: Duration,
    /// Window in which silence is expected (a notification must not be answered).
    pub silence: Duration,
    /// Per-case deadline. It starts once the case's sessions have started: the time each
    /// session spent starting (spawn to first answer) is added to it.
    pub case: Duration,
    /// Start-up deadline: from spawning a peer to its first answer of a session (the first
    /// line it writes to stdout). Per-message deadlines start after it.
    pub startup: Duration,
    /// Shutdown graces.
    pub grace: ShutdownGrace,
}

impl Timing {
    /// Defaults scaled by `multiplier` (1.0 = message 5 s, silence 300 ms, case 30 s,
    /// start-up 30 s).
    pub fn scaled(multiplier: f64) -> Timing {
        let m = |ms: f64| Duration::from_millis((ms * multiplier.max(0.01)) as u64);
        Timing {
            message: m(5000.0),
            silence: m(300.0),
            case: m(30000.0),
            startup: m(30000.0),
            grace: ShutdownGrace {
                after_eof: m(2000.0),
                after_term: m(1000.0),
            },
        }
    }
}

/// The frames of one finished session, with the revision it spoke.
#[derive(Debug, Clone)]
pub struct SessionLog {
    /// The case that opened it.
    pub case: String,
    /// Every frame.
    pub events: Vec<WireEvent>,
}

/// What a monitor sees: every session of one era at one revision.
pub struct MonitorInput<'a> {
    /// The revision.
    pub revision: &'a str,
    /// The sessions.
    pub sessions: &'a [SessionLog],
    /// The capabilities the server declared in this era (`initialize` or `server/discover`).
    pub capabilities: &'a Value,
}

/// Server facts learned once per era, shared by the cases.
#[derive(Debug, Clone, Default)]
pub struct ServerFacts {
    /// `capabilities` from the initialize or discover result.
    pub capabilities: Value,
    /// How long the era probe's peer took from spawn to its first answer, when measured: each
    /// later session's start-up deadline is at least three times this.
    pub started_in: Option<Duration>,
    /// How many peer processes the era's cases started (shared by the era's contexts).
    pub processes: Arc<std::sync::atomic::AtomicUsize>,
}

/// How long an ordinary session's close waits after stdin EOF before SIGTERM ([`Ctx::close`]).
pub const CLOSE_AFTER_EOF: Duration = Duration::from_millis(300);

/// The context one case runs in.
pub struct Ctx {
    /// The target.
    pub target: Arc<McpTarget>,
    /// The revision of this case.
    pub revision: String,
    /// Its era.
    pub era: Era,
    /// Deadlines.
    pub timing: Timing,
    /// What was learned about the server.
    pub facts: Arc<ServerFacts>,
    /// Case id, for session logs.
    pub case_id: String,
    logs: Mutex<Vec<SessionLog>>,
    /// Logs of the sessions started and not yet closed, salvaged when a case is abandoned.
    live: Mutex<Vec<(u64, crate::transport::peer::LogHandle)>>,
    /// The start-up clocks of every session this case started: their start-up time extends
    /// the case deadline ([`Ctx::within_deadline`]).
    clocks: Mutex<Vec<crate::protocol::mcp::StartClock>>,
    /// The shared session this case's [`Ctx::open`] leases, when the check shares one.
    pool: Option<Arc<SessionPool>>,
    /// The stdout lines over the line cap this case's sessions skipped unread.
    skipped: Mutex<crate::protocol::mcp::Skipped>,
    /// Over Streamable HTTP, the first answer whose body the bridge cut at the body cap
    /// ([`crate::transport::http::HttpExchange::cap_note`]), as that note says it.
    capped: Mutex<Option<String>>,
    /// The frame log budget of the sessions this case starts ([`crate::transport::framelog::Budget`]).
    pub log_budget: crate::transport::framelog::Budget,
}

/// One session shared by the checks that do not break it, per binding and revision (the design
/// card's rule). [`Ctx::open`] of a context with a pool leases the session (opening it the first
/// time, or again when the last lease left it dead), and [`Ctx::close`] hands it back; the era
/// runner closes it at the end with [`SessionPool::drain`], so monitors judge its frames.
#[derive(Default)]
pub struct SessionPool {
    client: Mutex<Option<Client>>,
}

impl SessionPool {
    fn take(&self) -> Option<Client> {
        match self.client.lock() {
            Ok(mut g) => g.take(),
            Err(p) => p.into_inner().take(),
        }
    }

    fn put(&self, c: Client) {
        match self.client.lock() {
            Ok(mut g) => *g = Some(c),
            Err(p) => *p.into_inner() = Some(c),
        }
    }

    /// Shuts the shared session down (if one is open) and keeps its frames in `ctx`.
    pub async fn drain(&self, ctx: &Ctx) {
        if let Some(mut c) = self.take() {
            c.pooled = false;
            ctx.close(c).await;
        }
    }
}

impl Ctx {
    /// A context for one case.
    pub fn new(
        target: Arc<McpTarget>,
        revision: &str,
        timing: Timing,
        facts: Arc<ServerFacts>,
        case_id: String,
    ) -> Ctx {
        Ctx {
            target,
            revision: revision.to_string(),
            era: Era::of(revision),
            timing,
            facts,
            case_id,
            logs: Mutex::new(Vec::new()),
            live: Mutex::new(Vec::new()),
            clocks: Mutex::new(Vec::new()),
            pool: None,
            skipped: Mutex::new(crate::protocol::mcp::Skipped::default()),
            capped: Mutex::new(None),
            log_budget: crate::transport::framelog::Budget::SESSION,
        }
    }

    /// The same context, leasing `pool`'s shared session in [`Ctx::open`].
    pub fn with_pool(mut self, pool: Arc<SessionPool>) -> Ctx {
        self.pool = Some(pool);
        self
    }

    /// Whether this case runs in a shared session.
    pub fn shares_session(&self) -> bool {
        self.pool.is_some()
    }

    /// The start-up deadline of this case's sessions: the run's (`Timing::startup`), and at
    /// least three times what the era probe measured.
    pub fn startup_deadline(&self) -> Duration {
        let measured = self.facts.started_in.map_or(Duration::ZERO, |d| d * 3);
        self.timing.startup.max(measured)
    }

    /// How long a session waits for the server to exit after stdin EOF before SIGTERM, when
    /// the exit itself is judged (`mcp.lifecycle.stdin-eof`): the run's grace, and at least
    /// what the era probe measured from spawn to first answer (a server that needs that long
    /// to start may need as long to end; a loaded machine slows both).
    pub fn eof_grace(&self) -> ShutdownGrace {
        let measured = self.facts.started_in.unwrap_or(Duration::ZERO);
        ShutdownGrace {
            after_eof: self.timing.grace.after_eof.max(measured),
            ..self.timing.grace
        }
    }

    /// Starts a fresh peer with no handshake. A process peer first waits for a place among the
    /// process starts allowed at once ([`crate::protocol::mcp::start_gate`]) and holds it until its first
    /// answer; until then its waits run to the start-up deadline.
    pub async fn start_raw(&self) -> Result<Client, Finding> {
        // The clock starts before the gate: waiting for a place is not the case's time either.
        let clock = crate::protocol::mcp::StartClock::queued(self.startup_deadline());
        if let Ok(mut clocks) = self.clocks.lock() {
            clocks.push(clock.clone());
        }
        let gate = if self.target.http.is_none() {
            crate::protocol::mcp::start_gate()
                .acquire_owned()
                .await
                .ok()
        } else {
            None
        };
        clock.mark_spawned();
        let peer = self.target.start_peer(self.timing.case).map_err(|e| {
            let _ = clock.first.set(std::time::Instant::now());
            Finding::not_run(e.to_string(), Vec::new())
        })?;
        if self.log_budget != crate::transport::framelog::Budget::SESSION {
            peer.set_log_budget(self.log_budget);
        }
        if peer.pid().is_some() {
            self.facts
                .processes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if let (Some(pid), Ok(mut live)) = (peer.pid(), self.live.lock()) {
            live.push((u64::from(pid), peer.log_handle()));
        }
        let mut client =
            Client::new(peer, self.era, &self.revision, self.timing.message).starting(clock, gate);
        client.barrier_window = self.timing.silence;
        Ok(client)
    }

    /// Time this case's sessions have spent starting so far (each session's spawn to first
    /// answer, or to now while it has not answered).
    pub fn startup_spent(&self) -> Duration {
        let now = std::time::Instant::now();
        match self.clocks.lock() {
            Ok(c) => c.iter().map(|k| k.spent(now)).sum(),
            Err(p) => p.into_inner().iter().map(|k| k.spent(now)).sum(),
        }
    }

    /// Runs `fut` within the case deadline, which starts after start-up: `Timing::case` plus
    /// the time the case's sessions spent starting. `None` when the deadline passed first.
    pub async fn within_deadline<F: Future>(&self, fut: F) -> Option<F::Output> {
        let t0 = tokio::time::Instant::now();
        tokio::pin!(fut);
        loop {
            let deadline = t0 + self.timing.case + self.startup_spent();
            tokio::select! {
                out = &mut fut => return Some(out),
                _ = tokio::time::sleep_until(deadline) => {
                    if tokio::time::Instant::now() >= t0 + self.timing.case + self.startup_spent() {
                        return None;
                    }
                }
            }
        }
    }

    /// Why a session could not start or answer, and what to try: the start-up deadline, the
    /// era probe's measured start-up time, and `--timeout-multiplier` / `[timeouts] startup_ms`.
    pub fn startup_advice(&self) -> String {
        let measured = match self.facts.started_in {
            Some(d) => format!(
                "the era probe's server answered {} ms after it started",
                d.as_millis()
            ),
            None => "the era probe measured no start-up time".to_string(),
        };
        format!(
            "the start-up deadline was {} ms ({measured}); if the server needs longer to start, raise `--timeout-multiplier` or `[timeouts] startup_ms` in the target",
            self.startup_deadline().as_millis()
        )
    }

    /// Frames of the sessions still open (a case abandoned at its deadline): kept for the
    /// monitors and returned as evidence.
    pub fn salvage(&self) -> Vec<String> {
        let live = match self.live.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        };
        let mut ev = Vec::new();
        for (_, handle) in live {
            let events = handle.events();
            let mut skipped = crate::protocol::mcp::Skipped::default();
            for l in events
                .iter()
                .filter(|e| e.dir == crate::transport::wire::Dir::S2c)
                .filter_map(WireEvent::line)
                .filter(|l| l.cut())
            {
                skipped.add(l.len);
            }
            self.note_skipped(skipped);
            ev = evidence(&events);
            self.keep(events);
        }
        ev
    }

    /// Starts a fresh peer and opens a session at this case's revision: `initialize` +
    /// `notifications/initialized` in the legacy era (a server that answers with another
    /// revision does not speak this one: the case is skipped); `server/discover` in the modern
    /// era (no answer within the deadline: the case is not run).
    pub async fn open(&self) -> Result<Client, Finding> {
        let Some(pool) = &self.pool else {
            return self.open_fresh().await;
        };
        if let Some(mut c) = pool.take() {
            if c.peer.is_open() {
                c.lease();
                if let (Some(pid), Ok(mut live)) = (c.peer.pid(), self.live.lock()) {
                    live.push((u64::from(pid), c.peer.log_handle()));
                }
                return Ok(c);
            }
            // The last lease left the session dead: its frames go to the monitors.
            c.pooled = false;
            self.close(c).await;
        }
        let mut c = self.open_fresh().await?;
        c.pooled = true;
        Ok(c)
    }

    /// [`Ctx::open`] on a fresh peer, whether or not the case shares a session.
    async fn open_fresh(&self) -> Result<Client, Finding> {
        let mut client = self.start_raw().await?;
        if self.era == Era::Legacy {
            let reply = match client.initialize(&self.revision).await {
                Ok(r) => r,
                Err(e) => {
                    let (ev, why) = self.close_explained(client).await;
                    return Err(Finding::not_run(format!("handshake failed: {e}{why}"), ev));
                }
            };
            let got = reply
                .result()
                .and_then(|r| r.get("protocolVersion"))
                .and_then(Value::as_str)
                .map(str::to_string);
            if got.as_deref() != Some(self.revision.as_str()) {
                let (ev, why) = self.close_explained(client).await;
                return Err(match got {
                    // The server does not speak this revision: the case does not apply.
                    Some(v) => Finding {
                        status: Status::Skip(format!(
                            "the server does not speak {}: it answered initialize with {v}",
                            self.revision
                        )),
                        evidence: ev,
                    },
                    None => Finding::not_run(self.unopened("initialize", &reply, &why), ev),
                });
            }
        } else {
            // Modern sessions open with `server/discover`, as clients may: the server's start-up
            // time is paid here, so a slow starter is `not-run`, never a failed check.
            let reply = match client.discover().await {
                Ok(r) => r,
                Err(e) => {
                    let (ev, why) = self.close_explained(client).await;
                    return Err(Finding::not_run(
                        format!("server/discover failed: {e}{why}"),
                        ev,
                    ));
                }
            };
            if matches!(reply, Reply::Timeout | Reply::Eof) {
                let (ev, why) = self.close_explained(client).await;
                return Err(Finding::not_run(
                    self.unopened("server/discover", &reply, &why),
                    ev,
                ));
            }
        }
        Ok(client)
    }

    /// Why a session did not open: the handshake's reply, how the peer ended and, for a
    /// missing answer, the start-up advice.
    fn unopened(&self, method: &str, reply: &Reply, why: &str) -> String {
        match reply {
            Reply::Timeout => format!(
                "the session could not open: {method} got no response{why}; {}",
                self.startup_advice()
            ),
            Reply::Eof => format!(
                "the session could not open: the server closed stdout before answering {method}{why}"
            ),
            Reply::Message(_) => format!(
                "the session could not open: {method} was answered with {}{why}",
                reply.describe()
            ),
        }
    }

    /// Closes a session ([`Ctx::close`]) and returns its evidence plus how the peer ended, as
    /// `; it exited: …; its stderr: "…"` (empty when there is nothing to say).
    pub async fn close_explained(&self, client: Client) -> (Vec<String>, String) {
        let handle = client.peer.log_handle();
        self.close(client).await;
        let events = handle.events();
        (
            evidence(&events),
            crate::engine::run::stderr_and_exit(&events),
        )
    }

    /// Shuts a session's peer down (the stdio sequence) and keeps its frames for monitors.
    ///
    /// Only `mcp.lifecycle.stdin-eof` judges how a server ends, and it runs the sequence with
    /// the full graces itself; every other session waits at most [`CLOSE_AFTER_EOF`] (scaled
    /// like the graces) after closing stdin before SIGTERM, so a server that ignores EOF does
    /// not cost each case two seconds.
    pub async fn close(&self, mut client: Client) -> ShutdownReport {
        self.note_skipped(std::mem::take(&mut client.skipped));
        #[cfg(feature = "http")]
        if client.peer.is_bridged() {
            let capped = client.session_events().iter().find_map(|e| {
                let l = e.line().filter(|_| e.dir == Dir::Note)?;
                let text = String::from_utf8_lossy(&l.bytes);
                let at = text.find(crate::transport::http::BODY_CAPPED)?;
                Some(text[at..].to_string())
            });
            if let (Some(c), Ok(mut g)) = (capped, self.capped.lock()) {
                g.get_or_insert(c);
            }
        }
        if let (Some(pid), Ok(mut live)) = (client.peer.pid(), self.live.lock()) {
            live.retain(|(p, _)| *p != u64::from(pid));
        }
        if client.pooled {
            if let Some(pool) = &self.pool {
                pool.put(client);
                return ShutdownReport::default();
            }
        }
        let grace = ShutdownGrace {
            after_eof: self.timing.grace.after_eof.min(CLOSE_AFTER_EOF),
            after_term: self.timing.grace.after_term,
        };
        let report = client.peer.shutdown(grace).await;
        self.keep(client.peer.events());
        report
    }

    fn note_skipped(&self, s: crate::protocol::mcp::Skipped) {
        match self.skipped.lock() {
            Ok(mut g) => g.merge(s),
            Err(p) => p.into_inner().merge(s),
        }
    }

    /// What to add to a verdict that found no answer (`timeout`, `not-run`) when this case's
    /// sessions skipped stdout lines over the line cap ([`crate::protocol::mcp::Skipped::note`]): the
    /// answer may have been one of them. `None` when none was skipped.
    /// Over Streamable HTTP, an answer whose body was cut at the body cap is said the same way
    /// ([`crate::transport::http::HttpExchange::cap_note`]: the cap and the bytes that had come).
    pub fn unread_note(&self) -> Option<String> {
        let s = match self.skipped.lock() {
            Ok(g) => *g,
            Err(p) => *p.into_inner(),
        };
        let capped = match self.capped.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        };
        match (s.note(self.target.spec.line_cap), capped) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        }
    }

    /// Keeps frames for the monitors.
    pub fn keep(&self, events: Vec<WireEvent>) {
        let log = SessionLog {
            case: self.case_id.clone(),
            events,
        };
        match self.logs.lock() {
            Ok(mut g) => g.push(log),
            Err(p) => p.into_inner().push(log),
        }
    }

    /// The session logs kept so far (taken out).
    pub fn take_logs(&self) -> Vec<SessionLog> {
        match self.logs.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        }
    }

    /// Whether the server declared a capability (top-level key of `capabilities`).
    pub fn declares(&self, capability: &str) -> bool {
        self.facts.capabilities.get(capability).is_some()
    }

    /// A request method that every server of this era answers with a result: `ping` in the
    /// legacy era, `server/discover` in the modern era (where ping was removed).
    pub fn probe_method(&self) -> &'static str {
        match self.era {
            Era::Legacy => "ping",
            Era::Modern => "server/discover",
        }
    }

    /// Sends the era's probe request with a fresh id and reports whether it was answered with
    /// a result (the server still serves).
    pub async fn still_serving(&self, client: &mut Client) -> Result<bool, String> {
        let reply = client
            .request(self.probe_method(), serde_json::json!({}))
            .await
            .map_err(|e| e.to_string())?;
        Ok(reply.result().is_some())
    }
}

/// Formats frames as evidence lines: `→` for client to server, `←` for server to client, `!` for
/// stderr and `×` for the exit, `·` for notes and for frames the bounded frame log left out
/// (`crate::transport::framelog`); each cut to 300 bytes; at most the last 40 frames, after one line that
/// counts the frames left out before them, if any.
pub fn evidence(events: &[WireEvent]) -> Vec<String> {
    let skip = events.len().saturating_sub(40);
    // Frames the bounded frame log left out before the frames shown: said in one line first.
    let (frames, bytes) = crate::transport::framelog::left_out(&events[..skip]);
    let lead = (frames > 0).then(|| {
        format!(
            "· earlier in this session, {}",
            crate::transport::wire::gap_text(frames, bytes)
        )
    });
    lead.into_iter()
        .chain(events.iter().skip(skip).map(|e| {
            let arrow = match e.dir {
                _ if matches!(e.frame, crate::transport::wire::Frame::Gap { .. }) => "·",
                Dir::C2s => "→",
                Dir::S2c => "←",
                Dir::Stderr => "!",
                Dir::Exit => "×",
                Dir::Note => "·",
            };
            // A note (the HTTP status line and headers under a bridged line) gets more room.
            let max = if e.dir == Dir::Note { 600 } else { 300 };
            format!("{arrow} {:>6}ms {}", e.t.as_millis(), e.excerpt(max))
        }))
        .collect()
}

/// Words for "the awaited response did not come", true to the transport: over stdio, `no
/// response before the deadline`; over a bridge (Streamable HTTP), where the answer to each
/// POST has come when the wait ends, `no JSON-RPC response came back (the last HTTP answer:
/// HTTP 415 Unsupported Media Type · …)`, so a message never says nothing came when an answer
/// did.
pub fn no_response(client: &Client) -> String {
    match client.peer.last_note() {
        Some(n) if client.peer.is_bridged() => {
            format!("no JSON-RPC response came back (the last HTTP answer: {n})")
        }
        _ => "no response before the deadline".to_string(),
    }
}

/// Evidence of a client's session so far.
pub fn client_evidence(client: &Client) -> Vec<String> {
    evidence(&client.peer.events())
}

/// A one-line description of a reply for messages.
pub fn describe(reply: &Reply) -> String {
    reply.describe()
}
