//! Orchestration: era detection, the plan of cases, bounded parallel execution, monitors.
//!
//! Plan: for each era the server speaks (and `--era` selects), the era's revision is the one the
//! server negotiated (legacy: `initialize` at 2025-11-25; modern: 2026-07-28). Every check that
//! applies to that revision becomes a case `check@mcp-stdio#revision`; checks pinned to one
//! legacy revision (batching at 2025-03-26) also run at their revision when the server speaks it.
//! Each active case gets fresh peers (isolation over speed: a broken session never leaks into
//! another case). Monitors judge every session of the era plus one session of their own.
//!
//! Size (1684 lines): the runners share the planning, the per-era execution with shared sessions
//! and monitors, retries and the report model.

use crate::engine::check::{
    evidence, Check, CheckKind, Ctx, Finding, McpTarget, MonitorInput, ServerFacts, SessionLog,
    Timing, Verdict,
};
use crate::protocol::mcp::{
    discover_means_modern, initialize_params, Client, Era, EraSupport, MODERN_REVISION,
};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// How the message of a case that a `--fail-fast` run never started begins: such a case is
/// `not-run` but does not make the run exit 3.
pub const FAIL_FAST_NOT_STARTED: &str = "not started: --fail-fast stopped the run";

/// Which eras to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EraSel {
    /// The `initialize` revisions only.
    Legacy,
    /// 2026-07-28 only.
    Modern,
    /// Every era the server speaks.
    All,
}

/// Options of one run.
#[derive(Clone)]
pub struct RunOptions {
    /// Eras to check.
    pub eras: EraSel,
    /// Which cases run: `--filter`, `--skip`, `--partition`.
    pub selection: Arc<crate::engine::select::Selection>,
    /// Parallel cases.
    pub jobs: usize,
    /// Deadlines.
    pub timing: Timing,
    /// Retries, fail-fast and progress, shared by every profile of the run.
    pub control: Arc<RunControl>,
}

impl RunOptions {
    /// Options selecting the cases of `filter`/`skip` (no partition), with no retries, no
    /// fail-fast and no progress.
    ///
    /// Errors: an invalid glob.
    pub fn new(
        eras: EraSel,
        filter: &[String],
        skip: &[String],
        jobs: usize,
        timing: Timing,
    ) -> Result<RunOptions, String> {
        Ok(RunOptions {
            eras,
            selection: Arc::new(crate::engine::select::Selection::new(
                filter,
                skip,
                None,
                &[],
            )?),
            jobs,
            timing,
            control: Arc::new(RunControl::default()),
        })
    }
}

/// What the run loop reports as it goes (`RunControl::progress`).
pub enum Progress<'a> {
    /// This many more cases were planned.
    Planned(usize),
    /// A case finished (after its retries).
    Finished(&'a CaseResult),
}

/// Callback of [`Progress`] events; called from many tasks at once.
pub type ProgressFn = Box<dyn Fn(Progress<'_>) + Send + Sync>;

/// Callback saying whether a baseline entry lists a case id (expected to fail).
pub type ExpectedFn = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// Run-wide control: `--retries`, `--fail-fast`, the baseline's expected failures (which are
/// neither retried nor stop a fail-fast run), and the progress sink.
#[derive(Default)]
pub struct RunControl {
    /// Extra attempts for a case that fails or times out (`--retries N`).
    pub retries: u32,
    /// Stop starting cases after the first unexpected failure or timeout (`--fail-fast`).
    pub fail_fast: bool,
    /// Whether a case id is an expected failure.
    pub expected: Option<ExpectedFn>,
    /// Where progress goes.
    pub progress: Option<ProgressFn>,
    /// Told of every scenario case as it finishes (`--snapshots DIR`: the snapshot store,
    /// `features::snapshot`, compares its exchanges with the stored ones).
    pub scenario_listener: Option<Arc<dyn ScenarioListener>>,
    pub(crate) stopped_by: std::sync::Mutex<Option<String>>,
}

/// What the runner tells of each scenario case it finishes, before the case is reported: the
/// case's result, which the listener may amend (a snapshot difference fails it), and every
/// session's frames in order. The snapshot store implements it (`--snapshots`,
/// docs/transcripts.md §Snapshots); the engine names no implementation.
pub trait ScenarioListener: Send + Sync {
    /// One scenario case finished with `result` after the exchanges `sessions` (one list of
    /// frames per session, in order).
    fn finished(
        &self,
        result: &mut CaseResult,
        sessions: &[Vec<crate::transport::wire::WireEvent>],
    );
}

impl RunControl {
    /// Reports that `n` more cases were planned.
    pub fn planned(&self, n: usize) {
        if let Some(p) = &self.progress {
            p(Progress::Planned(n));
        }
    }

    /// The id of the case whose failure stopped a `--fail-fast` run, once one did.
    pub fn stopped_by(&self) -> Option<String> {
        self.stopped_by.lock().ok().and_then(|g| g.clone())
    }

    fn is_expected(&self, id: &str) -> bool {
        self.expected.as_ref().is_some_and(|f| f(id))
    }

    /// Runs one case through `attempt` (each call a fresh attempt with fresh peers): again, up
    /// to `retries` times, while it fails or times out unexpectedly; a later pass becomes
    /// `flaky` and keeps the first failure's reason and evidence. Without starting it when a
    /// `--fail-fast` run has stopped: then `not_run` builds its result from the reason.
    /// Reports the finished case to the progress sink, and stops a fail-fast run on an
    /// unexpected failure or timeout.
    pub async fn run_case<F, Fut, N>(&self, mut attempt: F, not_run: N) -> CaseResult
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = CaseResult>,
        N: FnOnce(String) -> CaseResult,
    {
        if let Some(by) = self.stopped_by() {
            let r = not_run(format!("{FAIL_FAST_NOT_STARTED} after {by} failed"));
            self.finished(&r);
            return r;
        }
        let mut r = attempt().await;
        let failed = |r: &CaseResult| matches!(r.verdict, Verdict::Fail | Verdict::Timeout);
        if failed(&r) && !self.is_expected(&r.id) {
            let first = r.clone();
            let mut attempts: u32 = 1;
            while attempts <= self.retries {
                tracing::info!(case = %r.id, attempt = attempts + 1, "retrying a failed case");
                let mut again = attempt().await;
                attempts = attempts.saturating_add(1);
                match again.verdict {
                    Verdict::Fail | Verdict::Timeout => r = again,
                    // It held this time (a warning is a lesser deviation, not the failure).
                    Verdict::Pass | Verdict::Warn | Verdict::Flaky => {
                        let warning = if again.verdict == Verdict::Warn {
                            format!(" (with a warning: {})", again.message)
                        } else {
                            String::new()
                        };
                        again.verdict = Verdict::Flaky;
                        again.message = format!(
                            "passed on attempt {attempts}{warning}; attempt 1 was {}: {}",
                            first.verdict.as_str(),
                            first.message
                        );
                        again.evidence = first.evidence.clone();
                        r = again;
                        break;
                    }
                    // The retry could not judge (it did not apply, or could not run): the
                    // failure stands.
                    Verdict::Skip | Verdict::NotRun => break,
                }
            }
            r.attempts = attempts;
        }
        self.finished(&r);
        r
    }

    /// Reports a finished case (monitors, which are judged, not retried, call this directly).
    pub fn finished(&self, r: &CaseResult) {
        if self.fail_fast
            && matches!(r.verdict, Verdict::Fail | Verdict::Timeout)
            && !self.is_expected(&r.id)
        {
            if let Ok(mut g) = self.stopped_by.lock() {
                if g.is_none() {
                    tracing::warn!(case = %r.id, "--fail-fast: no further case starts");
                    *g = Some(r.id.clone());
                }
            }
        }
        tracing::debug!(case = %r.id, verdict = r.verdict.as_str(), ms = r.duration_ms, "case finished");
        if let Some(p) = &self.progress {
            p(Progress::Finished(r));
        }
    }
}

/// What produced a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseKind {
    /// An active check (drives its own sessions).
    Active,
    /// A passive monitor (judges the frames of every session).
    Monitor,
    /// A scenario file.
    Scenario,
}

impl CaseKind {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseKind::Active => "active",
            CaseKind::Monitor => "monitor",
            CaseKind::Scenario => "scenario",
        }
    }
}

/// The result of one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// `check@binding#revision`.
    pub id: String,
    /// What produced it: an active check, a monitor, or a scenario.
    pub kind: CaseKind,
    /// The check id.
    pub check: String,
    /// The binding.
    pub binding: String,
    /// The revision.
    pub revision: String,
    /// Spec reference URL.
    pub spec: String,
    /// Level keyword.
    pub level: String,
    /// The quoted spec sentence.
    pub quote: String,
    /// The requirement.
    pub requirement: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why (empty on a plain pass).
    pub message: String,
    /// Exchange excerpt.
    pub evidence: Vec<String>,
    /// Wall time of the case in milliseconds (of its last attempt).
    pub duration_ms: u64,
    /// How many times the case ran: 1, or more when `--retries` ran a failed case again.
    pub attempts: u32,
    /// The `--baseline` entry that lists this case when it failed or timed out as expected
    /// (the verdict stays `fail`/`timeout`; the run is not failed by it).
    pub expected: Option<BaselineMark>,
}

/// A baseline entry matched to a case (`--baseline`, docs/ci.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BaselineMark {
    /// The entry's case-id pattern, as written in the file.
    pub entry: String,
    /// The entry's reason.
    pub reason: String,
}

/// A baseline entry whose cases all ran and none failed: it must be removed (exit 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StaleEntry {
    /// The entry's case-id pattern.
    pub entry: String,
    /// The entry's reason.
    pub reason: String,
    /// 1-based line of the entry in the baseline file.
    pub line: usize,
    /// The ids of the cases it matched that executed (each passed or warned).
    pub cases: Vec<String>,
}

/// What a run produced.
#[derive(Debug, Clone, Serialize, Default)]
pub struct RunReport {
    /// Target name.
    pub target: String,
    /// The revision checked per era (`legacy`, `modern`), when the server speaks it.
    pub eras: HashMap<String, String>,
    /// Era detection notes.
    pub notes: Vec<String>,
    /// Cases in plan order.
    pub cases: Vec<CaseResult>,
    /// Wall time of the run in milliseconds.
    pub duration_ms: u64,
    /// When the run started (the JUnit suites' `timestamp`), when known.
    pub started_at: Option<std::time::SystemTime>,
    /// The seed of generated equivalence, when that ran (rerun with `--seed` to reproduce).
    pub seed: Option<u64>,
    /// Baseline entries that no longer match a failure (`--baseline`); any fails the run.
    pub stale: Vec<StaleEntry>,
    /// The `--partition` shard this run was, as given (`hash:1/3`), when one was.
    pub partition: Option<String>,
    /// Why the run could not happen, when it could not: a surface did not start or answer its
    /// handshake, or `--filter`/`--skip` kept no case in any shard. Any reason means exit 3,
    /// even in a `--partition` run; reporters show each one (JUnit as an `<error>` case).
    pub could_not_run: Vec<String>,
    /// Measured start-up per era (`legacy`, `modern`, `acp`): milliseconds from spawning the
    /// era probe's peer to its first answer (stdio surfaces only).
    pub startup_ms: std::collections::BTreeMap<String, u64>,
    /// The profile that ran each case, by case id, as the run merged the profiles' reports
    /// ([`RunReport::ran_by`]); the console table and the JUnit suites group cases by it. Not
    /// part of the JSON report, whose case ids and bindings say the same to a reader.
    #[serde(skip)]
    pub profiles: std::collections::BTreeMap<String, String>,
}

impl RunReport {
    /// Records `profile` as the profile that ran every case of the report so far that has
    /// none recorded yet.
    pub fn ran_by(&mut self, profile: &str) {
        for c in &self.cases {
            if !self.profiles.contains_key(&c.id) {
                self.profiles.insert(c.id.clone(), profile.to_string());
            }
        }
    }
    /// The profile that ran `case` ([`RunReport::ran_by`]); a case with none recorded is shown
    /// under its binding.
    pub fn profile_of<'a>(&'a self, case: &'a CaseResult) -> &'a str {
        self.profiles
            .get(&case.id)
            .map(String::as_str)
            .unwrap_or(&case.binding)
    }
    /// Count of each verdict.
    pub fn counts(&self) -> HashMap<Verdict, usize> {
        let mut m = HashMap::new();
        for c in &self.cases {
            *m.entry(c.verdict).or_insert(0) += 1;
        }
        m
    }
    /// Cases that executed (pass, fail, warn, timeout, flaky).
    pub fn executed(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| {
                matches!(
                    c.verdict,
                    Verdict::Pass
                        | Verdict::Fail
                        | Verdict::Warn
                        | Verdict::Timeout
                        | Verdict::Flaky
                )
            })
            .count()
    }
    /// Cases that failed or timed out and no baseline entry expected.
    pub fn unexpected_failures(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| {
                matches!(c.verdict, Verdict::Fail | Verdict::Timeout) && c.expected.is_none()
            })
            .count()
    }
    /// Cases that failed, timed out or could not run as a baseline entry expected.
    pub fn expected_failures(&self) -> usize {
        self.cases.iter().filter(|c| c.expected.is_some()).count()
    }
    /// Cases that could not run (`not-run`) and that no baseline entry lists, leaving out the
    /// cases a `--fail-fast` run never started: coverage this run silently lost.
    pub fn unexpected_not_run(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| {
                c.verdict == Verdict::NotRun
                    && c.expected.is_none()
                    && !c.message.starts_with(FAIL_FAST_NOT_STARTED)
            })
            .count()
    }

    /// The exit code of DESIGN.md, in order: 1 an unexpected failure or timeout, or a stale
    /// baseline entry; otherwise 3 when the run could not happen (a surface did not start,
    /// nothing executed — except a `--partition` shard with no case, or only skipped ones: 0)
    /// or a case was `not-run` without a baseline entry listing it (cases `--fail-fast` never
    /// started aside); otherwise 0.
    pub fn exit_code(&self) -> i32 {
        if self.unexpected_failures() > 0 || !self.stale.is_empty() {
            return 1;
        }
        if !self.could_not_run.is_empty() {
            return 3;
        }
        // A shard may hold no case, or only cases that do not apply (skips): the other shards
        // run the rest.
        if self.partition.is_some() && self.cases.iter().all(|c| c.verdict == Verdict::Skip) {
            return 0;
        }
        if self.executed() == 0 || self.unexpected_not_run() > 0 {
            return 3;
        }
        0
    }
}

/// Era support plus the legacy and modern capabilities, per target command.
type EraCache = Mutex<HashMap<String, (EraSupport, Value, Value)>>;

fn era_cache() -> &'static EraCache {
    static CACHE: OnceLock<EraCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The `server/discover` probe over Streamable HTTP: one POST; the response with id 1, else
/// the JSON-RPC error of an HTTP error answer (whatever its id), else a timeout.
#[cfg(feature = "http")]
async fn http_discover(
    url: &str,
    deadline: std::time::Duration,
) -> (crate::protocol::mcp::Reply, Option<String>) {
    use crate::protocol::mcp::Reply;
    let Ok(client) = crate::transport::http::HttpClient::new(url) else {
        return (Reply::Timeout, None);
    };
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": crate::protocol::mcp::modern_meta(MODERN_REVISION)}});
    let request = crate::transport::http::HttpRequest::post_json(&message)
        .header("mcp-protocol-version", MODERN_REVISION)
        .header("mcp-method", "server/discover");
    let until = tokio::time::Instant::now() + deadline;
    let Ok(exchange) = client.send(request, until).await else {
        return (Reply::Timeout, None);
    };
    let capped = exchange.cap_note();
    let messages = crate::transport::http_bridge::lenient_messages(&exchange).unwrap_or_default();
    if let Some(m) = messages.iter().find(|m| m.get("id") == Some(&json!(1))) {
        return (Reply::Message(m.clone()), None);
    }
    match messages.into_iter().find(|m| m.get("error").is_some()) {
        Some(m) if exchange.status >= 400 => (Reply::Message(m), None),
        _ => (Reply::Timeout, capped),
    }
}

/// Without the `http` feature: no probe (the session's start refuses the URL and says why).
#[cfg(not(feature = "http"))]
async fn http_discover(
    _url: &str,
    _deadline: std::time::Duration,
) -> (crate::protocol::mcp::Reply, Option<String>) {
    (crate::protocol::mcp::Reply::Timeout, None)
}

/// Detects which eras a target speaks, following the 2026-07-28 backward-compatibility rule, and
/// learns each era's capabilities. Cached per target command for the life of the process.
/// Returns the support plus the legacy and modern capabilities (null when unknown).
pub async fn detect_eras(target: &McpTarget, timing: Timing) -> (EraSupport, Value, Value) {
    let key = target.http.clone().unwrap_or_else(|| target.spec.display());
    if let Ok(c) = era_cache().lock() {
        if let Some(hit) = c.get(&key) {
            return hit.clone();
        }
    }
    let modern = async {
        let mut notes = Vec::new();
        let mut took: Option<std::time::Duration> = None;
        // A spawn failure is reported once, by the legacy probe below.
        let reply = match &target.http {
            // Over HTTP the answer to the probe's POST settles it, even an HTTP error whose
            // JSON-RPC error carries no id: no need to wait out the deadline for id 1.
            Some(url) => {
                let (reply, capped) = http_discover(url, timing.message).await;
                if let Some(c) = capped {
                    notes.push(format!("server/discover probe: {c}"));
                }
                Ok(reply)
            }
            None => {
                let gate = crate::protocol::mcp::start_gate()
                    .acquire_owned()
                    .await
                    .ok();
                let clock = crate::protocol::mcp::StartClock::new(timing.startup);
                let Ok(peer) = target.start_peer(timing.case) else {
                    return (false, Vec::new(), Value::Null, Vec::new(), None);
                };
                let mut c = Client::new(peer, Era::Modern, MODERN_REVISION, timing.message)
                    .starting(clock.clone(), gate);
                let reply = c.discover().await;
                let _ = c.peer.shutdown(timing.grace).await;
                let answered = matches!(&reply, Ok(crate::protocol::mcp::Reply::Message(_)));
                took = clock.took().filter(|_| answered);
                reply
            }
        };
        let (is_modern, versions, caps) = match &reply {
            Ok(r) => {
                let m = discover_means_modern(r);
                notes.push(format!(
                    "server/discover probe: {}",
                    crate::base::util::clip(&r.describe(), 160)
                ));
                let versions = r
                    .result()
                    .and_then(|x| x.get("supportedVersions"))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let caps = r
                    .result()
                    .and_then(|x| x.get("capabilities"))
                    .cloned()
                    .unwrap_or(Value::Null);
                (m, versions, caps)
            }
            Err(e) => {
                notes.push(format!("server/discover probe: {e}"));
                (false, Vec::new(), Value::Null)
            }
        };
        (is_modern, versions, caps, notes, took)
    };
    let legacy = async {
        let gate = if target.http.is_none() {
            crate::protocol::mcp::start_gate()
                .acquire_owned()
                .await
                .ok()
        } else {
            None
        };
        let clock = crate::protocol::mcp::StartClock::new(timing.startup);
        let peer = match target.start_peer(timing.case) {
            Ok(p) => p,
            Err(e) => return (None, Value::Null, e.to_string(), None),
        };
        let mut c = Client::new(peer, Era::Legacy, "2025-11-25", timing.message)
            .starting(clock.clone(), gate);
        let id = c.fresh_id();
        let reply = c
            .request_as(id, "initialize", Some(initialize_params("2025-11-25")))
            .await;
        let _ = c.peer.shutdown(timing.grace).await;
        let took = match &reply {
            Ok(crate::protocol::mcp::Reply::Message(_)) if target.http.is_none() => clock.took(),
            _ => None,
        };
        let tail = stderr_and_exit(&c.peer.events());
        let advice = match &reply {
            Ok(crate::protocol::mcp::Reply::Timeout) => match c.skipped.note(target.spec.line_cap) {
                Some(note) => format!("; {note}"),
                None => format!(
                    "; no answer within the {} ms start-up deadline: if the server needs longer to start, raise `--timeout-multiplier` or `[timeouts] startup_ms` in the target",
                    timing.startup.as_millis()
                ),
            },
            _ => String::new(),
        };
        match reply {
            Ok(r) => {
                let v = r
                    .result()
                    .and_then(|x| x.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .filter(|v| crate::protocol::mcp::LEGACY_REVISIONS.contains(v))
                    .map(str::to_string);
                let caps = r
                    .result()
                    .and_then(|x| x.get("capabilities"))
                    .cloned()
                    .unwrap_or(Value::Null);
                // A server that did not answer: what it said on stderr and how it ended.
                let tail = if v.is_none() { tail } else { String::new() };
                (
                    v,
                    caps,
                    format!(
                        "initialize probe: {}{tail}{advice}",
                        crate::base::util::clip(&r.describe(), 160)
                    ),
                    took,
                )
            }
            Err(e) => (
                None,
                Value::Null,
                format!("initialize probe: {e}{tail}"),
                None,
            ),
        }
    };
    // Each probe is bounded by the case deadline: a peer that floods requests and never reads
    // its stdin cannot hang the run here.
    let modern = async {
        tokio::time::timeout(timing.case + timing.startup, modern)
            .await
            .unwrap_or_else(|_| {
                (
                    false,
                    Vec::new(),
                    Value::Null,
                    vec!["server/discover probe: the probe ran past the case deadline".to_string()],
                    None,
                )
            })
    };
    let legacy = async {
        tokio::time::timeout(timing.case + timing.startup, legacy)
            .await
            .unwrap_or_else(|_| {
                (
                    None,
                    Value::Null,
                    "initialize probe: the probe ran past the case deadline".to_string(),
                    None,
                )
            })
    };
    let ((is_modern, versions, mcaps, mut notes, mtook), (legacy_rev, lcaps, lnote, ltook)) =
        tokio::join!(modern, legacy);
    notes.push(lnote);
    let ms = |d: Option<std::time::Duration>| d.map(|d| d.as_millis() as u64);
    let (legacy_ms, modern_ms) = (
        ms(ltook).filter(|_| legacy_rev.is_some()),
        ms(mtook).filter(|_| is_modern),
    );
    for (what, v) in [("initialize", legacy_ms), ("server/discover", modern_ms)] {
        if let Some(v) = v {
            notes.push(format!(
                "start-up: the server answered its first {what} {v} ms after it was started (later sessions' start-up deadline: at least {} ms)",
                v.saturating_mul(3).max(timing.startup.as_millis() as u64)
            ));
        }
    }
    let support = EraSupport {
        legacy: legacy_rev,
        modern: is_modern,
        supported_versions: versions,
        notes,
        legacy_startup_ms: legacy_ms,
        modern_startup_ms: modern_ms,
    };
    let out = (support, lcaps, mcaps);
    if let Ok(mut c) = era_cache().lock() {
        c.insert(key, out.clone());
    }
    out
}

/// The last lines the peer wrote to stderr and its exit status, as `; its stderr: "…"; it
/// exited: …` (empty when there are none): why a server that did not start did not.
pub fn stderr_and_exit(events: &[crate::transport::wire::WireEvent]) -> String {
    use crate::transport::wire::Dir;
    let lines: Vec<String> = events
        .iter()
        .filter(|e| e.dir == Dir::Stderr)
        .map(|e| e.excerpt(200))
        .collect();
    let mut out = String::new();
    if !lines.is_empty() {
        let from = lines.len().saturating_sub(3);
        out.push_str(&format!("; its stderr: {}", lines[from..].join(" | ")));
    }
    if let Some(e) = events.iter().rev().find(|e| e.dir == Dir::Exit) {
        out.push_str(&format!("; it exited: {}", e.excerpt(120)));
    }
    out
}

/// A planned case.
#[derive(Clone)]
struct Planned {
    check: Check,
    revision: String,
}

/// The id of a case: `check@binding#revision` (DESIGN.md §Outcome model).
pub fn case_id(binding: &str, check: &str, revision: &str) -> String {
    format!("{check}@{binding}#{revision}")
}

/// A boxed future of whether a monitor session opened.
type BoxBool<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>>;

/// How the monitors' own session is driven, per binding.
type MonitorSessionFn = for<'a> fn(&'a Ctx) -> BoxBool<'a>;

fn mcp_monitor_session(ctx: &Ctx) -> BoxBool<'_> {
    Box::pin(monitor_session(ctx))
}

fn acp_monitor_session(ctx: &Ctx) -> BoxBool<'_> {
    Box::pin(acp_session(ctx))
}

/// A glob set over case ids (a bare check id selects every case of the check and of the checks
/// whose ids extend it with `.`; `check@binding` selects every revision of it; a glob without
/// `@` matches the whole id or the check part); `None` when `globs` is empty.
///
/// Errors: an invalid glob.
pub fn glob_set(globs: &[String]) -> Result<Option<globset::GlobSet>, String> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        // A bare check id selects every case of that check, and of the checks below it
        // (`equivalence.generated` selects `equivalence.generated.read_file@…`).
        // `check@binding` without a revision selects every revision of it; a glob without `@`
        // may be meant for the whole id or for the check part.
        let globby = g.contains('*') || g.contains('?');
        let pats = match (g.contains('@'), g.contains('#')) {
            (true, true) => vec![g.clone()],
            (true, false) => vec![g.clone(), format!("{g}#*")],
            (false, _) if globby => vec![g.clone(), format!("{g}@*")],
            (false, _) => vec![format!("{g}@*"), format!("{g}.*@*")],
        };
        for pat in pats {
            let glob = globset::GlobBuilder::new(&pat)
                .literal_separator(false)
                .build()
                .map_err(|e| format!("invalid glob {g:?}: {e}"))?;
            b.add(glob);
        }
    }
    b.build().map(Some).map_err(|e| e.to_string())
}

/// A profile's catalogue as the runners take it: the checks, and which of them share one
/// session per binding and revision (`crate::engine::check::SessionPool`).
#[derive(Clone)]
pub struct Catalogue {
    /// The checks to plan, each once per revision it applies to.
    pub checks: Vec<Check>,
    /// Whether the check of this id runs in its binding's shared session.
    pub shares_session: fn(&str) -> bool,
}

/// Runs an MCP catalogue against a target (over stdio, or over Streamable HTTP when the target
/// has a URL): every check of `catalogue` plus exactly the given scenarios (see
/// `crate::engine::scenario::load_all`; none over HTTP), each as one case per era it applies
/// to, at the revision chosen for that era. The `mcp` and `mcp-http` profiles give their
/// catalogues (`crate::profiles::mcp::run_mcp_with_scenarios`).
///
/// Errors: an invalid `--filter`/`--skip` glob (a usage error).
pub async fn run_mcp_catalogue(
    target: McpTarget,
    opts: &RunOptions,
    catalogue: Catalogue,
    scenarios: &[Arc<crate::engine::scenario::Scenario>],
) -> Result<RunReport, String> {
    let started = Instant::now();
    let selected = |id: &str| opts.selection.selects(id);
    let target = Arc::new(target);
    let (support, lcaps, mcaps) = detect_eras(&target, opts.timing).await;
    let mut eras = HashMap::new();
    let mut notes = support.notes.clone();
    let binding = target.binding();
    let shares_session = catalogue.shares_session;
    let catalogue = catalogue.checks;
    // Scenarios are stdio exchanges: none run over Streamable HTTP.
    let scenarios = if target.http.is_some() {
        &[][..]
    } else {
        scenarios
    };
    let mut results: Vec<CaseResult> = Vec::new();

    let want_legacy = matches!(opts.eras, EraSel::Legacy | EraSel::All);
    let want_modern = matches!(opts.eras, EraSel::Modern | EraSel::All);
    let mut era_plans: Vec<(Era, String, Value)> = Vec::new();
    if want_legacy {
        match &support.legacy {
            Some(rev) => {
                eras.insert("legacy".to_string(), rev.clone());
                era_plans.push((Era::Legacy, rev.clone(), lcaps.clone()));
            }
            None => notes.push("the server does not speak the legacy (initialize) era".into()),
        }
    }
    if want_modern {
        if support.modern {
            eras.insert("modern".to_string(), MODERN_REVISION.to_string());
            era_plans.push((Era::Modern, MODERN_REVISION.to_string(), mcaps.clone()));
        } else {
            notes.push("the server does not speak the modern (2026-07-28) era".into());
        }
    }

    let mut era_runs = Vec::new();
    let mut reference_note = false;
    for (era, rev, caps) in era_plans {
        let facts = Arc::new(ServerFacts {
            capabilities: caps,
            started_in: support.started_in(),
            processes: Arc::default(),
        });
        let mut planned: Vec<Planned> = Vec::new();
        for check in &catalogue {
            if check.revs.contains(&rev) {
                planned.push(Planned {
                    check: *check,
                    revision: rev.clone(),
                });
            } else if let crate::engine::check::Revs::Only(pins) = check.revs {
                for pin in pins {
                    if Era::of(pin) == era {
                        planned.push(Planned {
                            check: *check,
                            revision: pin.to_string(),
                        });
                    }
                }
            }
        }
        planned.retain(|p| selected(&case_id(binding, p.check.id, &p.revision)));
        // --- scenarios (crate::engine::scenario): one case per scenario of this era ---
        // Scenarios written for the bundled reference (`targets: [reference]`) are not planned
        // against other targets at all: one note says so, instead of a skip per scenario.
        let left_out = scenarios
            .iter()
            .filter(|s| s.runs_in(era) && s.reference_only && !target.reference)
            .count();
        if left_out > 0 && !reference_note {
            reference_note = true;
            notes.push(format!(
                "{left_out} shipped scenario(s) run only against the bundled reference (targets: [reference]) and were not planned"
            ));
        }
        let scenario_cases: Vec<(Arc<crate::engine::scenario::Scenario>, String)> = scenarios
            .iter()
            .filter(|s| s.runs_in(era) && (target.reference || !s.reference_only))
            .filter(|s| selected(&crate::engine::scenario::case_id(s, &rev)))
            .map(|s| (s.clone(), rev.clone()))
            .collect();
        if planned.is_empty() && scenario_cases.is_empty() {
            continue;
        }
        era_runs.push((era, facts, planned, scenario_cases));
    }
    // Eras run concurrently, sharing one bound on parallel cases; every era's cases are planned
    // before any starts, so progress counts them all from the beginning.
    opts.control.planned(
        era_runs
            .iter()
            .map(|(_, _, planned, scenarios)| planned.len() + scenarios.len())
            .sum(),
    );
    let sem = Arc::new(tokio::sync::Semaphore::new(opts.jobs.max(1)));
    let mut set = tokio::task::JoinSet::new();
    let mut counters = Vec::new();
    for (i, (era, facts, planned, scenario_cases)) in era_runs.into_iter().enumerate() {
        counters.push((era, facts.processes.clone()));
        let target = target.clone();
        let sem = sem.clone();
        let timing = opts.timing;
        let control = opts.control.clone();
        set.spawn(async move {
            let r = run_era(
                &target,
                &facts,
                (binding, mcp_monitor_session, shares_session),
                planned,
                scenario_cases,
                timing,
                (sem, control),
            )
            .await;
            (i, r)
        });
    }
    let mut per_era: Vec<(usize, Vec<CaseResult>)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        if let Ok(r) = joined {
            per_era.push(r);
        }
    }
    per_era.sort_by_key(|(i, _)| *i);
    for (_, r) in per_era {
        results.extend(r);
    }
    if target.http.is_none() {
        for (era, n) in counters {
            let n = n.load(std::sync::atomic::Ordering::Relaxed);
            let name = match era {
                Era::Legacy => "legacy",
                Era::Modern => "modern",
            };
            notes.push(format!(
                "{name} era: {n} server process(es) started by its cases (besides the era probe)"
            ));
        }
    }
    let mut startup_ms = std::collections::BTreeMap::new();
    if let (Some(v), true) = (support.legacy_startup_ms, eras.contains_key("legacy")) {
        startup_ms.insert("legacy".to_string(), v);
    }
    if let (Some(v), true) = (support.modern_startup_ms, eras.contains_key("modern")) {
        startup_ms.insert("modern".to_string(), v);
    }
    Ok(RunReport {
        target: target.name.clone(),
        eras,
        notes,
        cases: results,
        duration_ms: started.elapsed().as_millis() as u64,
        startup_ms,
        ..RunReport::default()
    })
}

/// Checks that spend most of their time waiting out a silence window.
const WAITS: &[&str] = &[
    "mcp.base.cancellation",
    "mcp.base.notification-unanswered",
    "mcp.lifecycle.stdin-eof",
    "mcp.lifecycle.version-negotiation",
];

async fn run_era(
    target: &Arc<McpTarget>,
    facts: &Arc<ServerFacts>,
    (binding, monitor_fn, shares_session): (&'static str, MonitorSessionFn, fn(&str) -> bool),
    planned: Vec<Planned>,
    scenario_cases: Vec<(Arc<crate::engine::scenario::Scenario>, String)>,
    timing: Timing,
    (sem, control): (Arc<tokio::sync::Semaphore>, Arc<RunControl>),
) -> Vec<CaseResult> {
    let logs: Arc<Mutex<HashMap<String, Vec<SessionLog>>>> = Arc::new(Mutex::new(HashMap::new()));
    let mut handles = Vec::new();
    let (monitors, actives): (Vec<Planned>, Vec<Planned>) = planned
        .iter()
        .cloned()
        .partition(|p| matches!(p.check.kind, CheckKind::Monitor(_)));
    let monitor_opened = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Checks that do not break their session share one per revision (docs/architecture.md).
    let (shared, actives): (Vec<Planned>, Vec<Planned>) = actives
        .into_iter()
        .partition(|p| shares_session(p.check.id));
    let mut shared_revs: Vec<String> = shared.iter().map(|p| p.revision.clone()).collect();
    shared_revs.sort();
    shared_revs.dedup();
    for rev in &shared_revs {
        let group: Vec<Planned> = shared
            .iter()
            .filter(|p| &p.revision == rev)
            .cloned()
            .collect();
        let (target, facts, sem) = (target.clone(), facts.clone(), sem.clone());
        let (logs, control, opened) = (logs.clone(), control.clone(), monitor_opened.clone());
        let rev = rev.clone();
        handles.push(tokio::spawn(async move {
            let _permit = sem.acquire().await;
            let pool = Arc::new(crate::engine::check::SessionPool::default());
            let mut out = Vec::new();
            for p in &group {
                let attempt = || async {
                    let in_shared = run_active(
                        &target,
                        &facts,
                        binding,
                        p,
                        timing,
                        &logs,
                        Some(pool.clone()),
                    )
                    .await;
                    if !matches!(in_shared.verdict, Verdict::Fail | Verdict::Warn) {
                        return in_shared;
                    }
                    // Isolation: a failure in the shared session is judged again alone.
                    let alone = run_active(&target, &facts, binding, p, timing, &logs, None).await;
                    confirm_alone(in_shared, alone)
                };
                let not_run = |why: String| {
                    to_result(
                        binding,
                        &p.check,
                        &p.revision,
                        Finding::not_run(why, Vec::new()),
                        0,
                    )
                };
                out.push(control.run_case(attempt, not_run).await);
            }
            // The shared session is also the monitors' session of this revision.
            let ctx = Ctx::new(target, &rev, timing, facts, format!("shared-session#{rev}"));
            pool.drain(&ctx).await;
            let sessions = ctx.take_logs();
            if !sessions.is_empty() {
                opened.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            if let Ok(mut l) = logs.lock() {
                keep_logs(l.entry(rev).or_default(), sessions);
            }
            out
        }));
    }
    // Monitors get one session of their own per revision without a shared one.
    let mut monitor_revs: Vec<String> = monitors
        .iter()
        .map(|p| p.revision.clone())
        .filter(|r| !shared_revs.contains(r))
        .collect();
    monitor_revs.dedup();
    for rev in monitor_revs {
        let target = target.clone();
        let facts = facts.clone();
        let sem = sem.clone();
        let logs = logs.clone();
        let monitor_opened = monitor_opened.clone();
        let control = control.clone();
        handles.push(tokio::spawn(async move {
            let _permit = sem.acquire().await;
            if control.stopped_by().is_some() {
                return Vec::new();
            }
            let ctx = Ctx::new(
                target,
                &rev,
                timing,
                facts,
                format!("monitor-session#{rev}"),
            );
            if let Some(true) = ctx.within_deadline(monitor_fn(&ctx)).await {
                monitor_opened.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            if let Ok(mut l) = logs.lock() {
                keep_logs(l.entry(rev.clone()).or_default(), ctx.take_logs());
            }
            Vec::new()
        }));
    }
    // --- scenarios (crate::engine::scenario): active cases; their sessions feed the monitors ---
    let mut scenario_ids = Vec::new();
    for (scenario, rev) in scenario_cases {
        scenario_ids.push(crate::engine::scenario::case_id(&scenario, &rev));
        let target = target.clone();
        let facts = facts.clone();
        let sem = sem.clone();
        let logs = logs.clone();
        let control = control.clone();
        handles.push(tokio::spawn(async move {
            let _permit = sem.acquire().await;
            let id = crate::engine::scenario::case_id(&scenario, &rev);
            let attempt = || async {
                let mut ctx = Ctx::new(target.clone(), &rev, timing, facts.clone(), id.clone());
                ctx.log_budget = crate::transport::framelog::Budget::SCENARIO;
                let mut result = crate::engine::scenario::run_case_timed(&ctx, &scenario).await;
                let sessions = ctx.take_logs();
                if let Some(listener) = &control.scenario_listener {
                    let exchanges: Vec<Vec<_>> =
                        sessions.iter().map(|l| l.events.clone()).collect();
                    listener.finished(&mut result, &exchanges);
                }
                if let Ok(mut l) = logs.lock() {
                    l.entry(rev.clone()).or_default().extend(sessions);
                }
                result
            };
            let not_run = |why: String| {
                crate::engine::scenario::case_result(
                    &scenario,
                    &rev,
                    Finding::not_run(why, Vec::new()),
                    0,
                )
            };
            vec![control.run_case(attempt, not_run).await]
        }));
    }
    let mut actives = actives;
    // Cases that wait out silence windows start first, so their waits overlap the rest.
    actives.sort_by_key(|p| !WAITS.contains(&p.check.id));
    for p in actives {
        let target = target.clone();
        let facts = facts.clone();
        let sem = sem.clone();
        let logs = logs.clone();
        let control = control.clone();
        handles.push(tokio::spawn(async move {
            let _permit = sem.acquire().await;
            let CheckKind::Active(_) = p.check.kind else {
                return Vec::new();
            };
            let attempt = || run_active(&target, &facts, binding, &p, timing, &logs, None);
            let not_run = |why: String| {
                to_result(
                    binding,
                    &p.check,
                    &p.revision,
                    Finding::not_run(why, Vec::new()),
                    0,
                )
            };
            vec![control.run_case(attempt, not_run).await]
        }));
    }
    finish_era(
        binding,
        &planned,
        &monitors,
        handles,
        logs,
        &monitor_opened,
        scenario_ids,
        &control,
        &facts.capabilities,
    )
    .await
}

/// The verdict of a check that failed (or warned) in a shared session, judged again alone in a
/// fresh session: the same verdict is confirmed; a pass alone makes it a warning that names the
/// shared session, with both exchanges as evidence; a run alone that could not judge leaves the
/// shared verdict, saying so.
fn confirm_alone(shared: CaseResult, alone: CaseResult) -> CaseResult {
    match alone.verdict {
        v if v == shared.verdict => CaseResult {
            message: format!("{} (confirmed alone, in a fresh session)", alone.message),
            ..alone
        },
        Verdict::Pass | Verdict::Flaky => {
            let mut evidence = shared.evidence.clone();
            evidence.push("--- the same check alone, in a fresh session, passed:".into());
            evidence.extend(alone.evidence);
            CaseResult {
                verdict: Verdict::Warn,
                message: format!(
                    "fails only after earlier requests in the same session: {}",
                    shared.message
                ),
                evidence,
                ..shared
            }
        }
        Verdict::Fail | Verdict::Warn => CaseResult {
            message: format!(
                "{} (alone, in a fresh session; in the shared session it was {}: {})",
                alone.message,
                shared.verdict.as_str(),
                shared.message
            ),
            ..alone
        },
        Verdict::Skip | Verdict::NotRun | Verdict::Timeout => CaseResult {
            message: format!(
                "{} (in the shared session; alone, in a fresh session, it was {}: {})",
                shared.message,
                alone.verdict.as_str(),
                alone.message
            ),
            ..shared
        },
    }
}

/// One attempt of an active case: its check within the case deadline (or a skip when the server
/// did not declare the check's capability), in fresh peers or, with `pool`, leasing the shared
/// session; its sessions go to `logs`.
async fn run_active(
    target: &Arc<McpTarget>,
    facts: &Arc<ServerFacts>,
    binding: &'static str,
    p: &Planned,
    timing: Timing,
    logs: &Mutex<HashMap<String, Vec<SessionLog>>>,
    pool: Option<Arc<crate::engine::check::SessionPool>>,
) -> CaseResult {
    {
        {
            let id = case_id(binding, p.check.id, &p.revision);
            let mut ctx = Ctx::new(
                target.clone(),
                &p.revision,
                timing,
                facts.clone(),
                id.clone(),
            );
            if let Some(pool) = pool {
                ctx = ctx.with_pool(pool);
            }
            let t0 = Instant::now();
            let finding = if p.check.capability.is_some_and(|cap| !ctx.declares(cap)) {
                Some(Finding::skip(format!(
                    "the server did not declare the `{}` capability",
                    p.check.capability.unwrap_or_default()
                )))
            } else {
                match p.check.kind {
                    CheckKind::Active(f) => ctx.within_deadline(f(&ctx)).await,
                    CheckKind::Monitor(_) | CheckKind::Own => Some(Finding::not_run(
                        "a monitor is not an active check",
                        Vec::new(),
                    )),
                }
            };
            let ms = t0.elapsed().as_millis() as u64;
            let mut result = match finding {
                Some(f) => to_result(binding, &p.check, &p.revision, f, ms),
                None => {
                    let ev = ctx.salvage();
                    let mut r = to_result(binding, &p.check, &p.revision, Finding::pass(ev), ms);
                    r.verdict = Verdict::Timeout;
                    r.message = format!(
                        "the case ran past its {} ms deadline",
                        timing.case.as_millis()
                    );
                    r
                }
            };
            explain_unread(&mut result, ctx.unread_note());
            if let Ok(mut l) = logs.lock() {
                keep_logs(l.entry(p.revision.clone()).or_default(), ctx.take_logs());
            }
            result
        }
    }
}

/// Collects an era's case results, judges its monitors on every session's frames, and returns
/// the results in plan order (checks, then scenarios).
#[allow(clippy::too_many_arguments)]
async fn finish_era(
    binding: &'static str,
    planned: &[Planned],
    monitors: &[Planned],
    handles: Vec<tokio::task::JoinHandle<Vec<CaseResult>>>,
    logs: Arc<Mutex<HashMap<String, Vec<SessionLog>>>>,
    monitor_opened: &std::sync::atomic::AtomicBool,
    scenario_ids: Vec<String>,
    control: &RunControl,
    capabilities: &serde_json::Value,
) -> Vec<CaseResult> {
    let mut by_id: HashMap<String, CaseResult> = HashMap::new();
    for h in handles {
        if let Ok(rs) = h.await {
            for r in rs {
                by_id.insert(r.id.clone(), r);
            }
        }
    }
    let all_logs = match logs.lock() {
        Ok(mut l) => std::mem::take(&mut *l),
        Err(p) => std::mem::take(&mut *p.into_inner()),
    };
    for p in monitors {
        let CheckKind::Monitor(f) = p.check.kind else {
            continue;
        };
        let t0 = Instant::now();
        let sessions: &[SessionLog] = all_logs.get(&p.revision).map(Vec::as_slice).unwrap_or(&[]);
        // Monitors judge sessions that really ran: their own must have opened, or another case
        // must have executed; frames of failed handshakes alone prove nothing.
        let driven = monitor_opened.load(std::sync::atomic::Ordering::SeqCst)
            || by_id.values().any(|r| {
                matches!(
                    r.verdict,
                    Verdict::Pass
                        | Verdict::Fail
                        | Verdict::Warn
                        | Verdict::Timeout
                        | Verdict::Flaky
                )
            });
        let finding = if sessions.is_empty() || !driven {
            Finding::not_run("no session could be opened", Vec::new())
        } else {
            f(&MonitorInput {
                revision: &p.revision,
                sessions,
                capabilities,
            })
        };
        let mut r = to_result(
            binding,
            &p.check,
            &p.revision,
            finding,
            t0.elapsed().as_millis() as u64,
        );
        if let Some(kept) = kept_note(sessions) {
            r.message = if r.message.is_empty() {
                kept
            } else {
                format!("{}; {kept}", r.message)
            };
        }
        control.finished(&r);
        by_id.insert(r.id.clone(), r);
    }
    // A case whose task panicked has no result: it is reported as a failure of parity itself
    // rather than silently dropped.
    let internal = |id: &str| CaseResult {
        id: id.to_string(),
        kind: CaseKind::Active,
        check: id.split('@').next().unwrap_or(id).to_string(),
        binding: binding.to_string(),
        revision: id.rsplit('#').next().unwrap_or("").to_string(),
        spec: String::new(),
        level: String::new(),
        quote: String::new(),
        requirement: String::new(),
        verdict: Verdict::Fail,
        message: "internal error: the case's task panicked (a bug in parity; please report it)"
            .into(),
        evidence: Vec::new(),
        duration_ms: 0,
        attempts: 1,
        expected: None,
    };
    let mut out: Vec<CaseResult> = planned
        .iter()
        .map(|p| {
            let id = case_id(binding, p.check.id, &p.revision);
            by_id.remove(&id).unwrap_or_else(|| internal(&id))
        })
        .collect();
    // --- scenarios (crate::engine::scenario): after the checks, in scenario order ---
    out.extend(
        scenario_ids
            .iter()
            .map(|id| by_id.remove(id).unwrap_or_else(|| internal(id))),
    );
    out
}

/// Adds the session logs of a finished case to its revision's logs for the monitors. While
/// the revision's logs hold less than [`crate::transport::framelog::ERA_BUDGET`] bytes, each is kept as
/// its session's frame log kept it; past that, each is first thinned to
/// [`crate::transport::framelog::Budget::THIN`] (what is dropped becomes a [`crate::transport::wire::Frame::Gap`]),
/// so a run's memory does not grow with the number of cases a flooding peer takes part in.
fn keep_logs(kept: &mut Vec<SessionLog>, new: Vec<SessionLog>) {
    let size = |l: &SessionLog| -> usize {
        l.events
            .iter()
            .map(crate::transport::framelog::frame_cost)
            .sum()
    };
    let mut used: usize = kept.iter().map(size).sum();
    for mut log in new {
        if used >= crate::transport::framelog::ERA_BUDGET {
            log.events = crate::transport::framelog::FrameLog::thinned(
                std::mem::take(&mut log.events),
                crate::transport::framelog::Budget::THIN,
            );
        }
        used += size(&log);
        kept.push(log);
    }
}

/// What a monitor's verdict adds when its sessions' frame logs dropped frames or kept lines
/// only as a prefix (`crate::transport::framelog`): that it judged the frames kept, and how many of the
/// peer's frames (and bytes) it did not see, or saw only in part. `None` when the logs are
/// whole.
fn kept_note(sessions: &[SessionLog]) -> Option<String> {
    let (frames, bytes) =
        crate::transport::framelog::left_out(sessions.iter().flat_map(|s| &s.events));
    let (mut kept, mut kept_bytes, mut cut) = (0u64, 0u64, 0u64);
    for l in sessions
        .iter()
        .flat_map(|s| &s.events)
        .filter(|e| e.dir == crate::transport::wire::Dir::S2c)
        .filter_map(crate::transport::wire::WireEvent::line)
    {
        kept += 1;
        kept_bytes += l.len;
        if l.elided && !l.over_cap {
            cut += 1;
        }
    }
    if frames == 0 && cut == 0 {
        return None;
    }
    let mut note = format!("judged on the frames kept: {kept} stdout frames ({kept_bytes} bytes)");
    if cut > 0 {
        note.push_str(&format!(
            ", {cut} of them kept only as a prefix and not judged past it"
        ));
    }
    if frames > 0 {
        note.push_str(&format!("; {frames} frames ({bytes} bytes) were left out"));
    }
    note.push_str(" by the sessions' bounded frame logs (docs/architecture.md §Memory budget)");
    Some(note)
}

/// The monitors' own session: handshake, a full tools listing, the first page of the prompts,
/// resources and templates lists the server declares, the probe, then shutdown.
async fn monitor_session(ctx: &Ctx) -> bool {
    let Ok(mut c) = ctx.open().await else {
        return false;
    };
    if ctx.declares("tools") {
        let mut cursor: Option<Value> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let Ok(reply) = c.request("tools/list", params).await else {
                break;
            };
            cursor = reply.result().and_then(|r| r.get("nextCursor")).cloned();
            if cursor.is_none() {
                break;
            }
        }
    }
    // The first page of each other list the server declares, so that the monitors of list
    // results (cache hints, input-required results) judge them too.
    for (capability, method) in [
        ("prompts", "prompts/list"),
        ("resources", "resources/list"),
        ("resources", "resources/templates/list"),
    ] {
        if ctx.declares(capability) {
            let _ = c.request(method, json!({})).await;
        }
    }
    let _ = c.request(ctx.probe_method(), json!({})).await;
    let _ = evidence(&c.peer.events());
    ctx.close(c).await;
    true
}

/// Adds `note` ([`Ctx::unread_note`]: lines over the line cap were skipped unread) to a verdict
/// that found no answer, `timeout` or `not-run`; other verdicts are left as they are.
pub(crate) fn explain_unread(r: &mut CaseResult, note: Option<String>) {
    if let (Some(n), Verdict::Timeout | Verdict::NotRun) = (note, r.verdict) {
        r.message = if r.message.is_empty() {
            n
        } else {
            format!("{}; {n}", r.message)
        };
    }
}

/// The case result of `check` at `binding#revision` from its finding: the verdict from the
/// finding's status and the check's level (a violation of a MUST fails, of a SHOULD warns), the
/// check's quote, requirement and spec reference, and the finding's evidence; `duration_ms` is
/// the case's wall time in milliseconds.
pub fn to_result(
    binding: &str,
    check: &Check,
    revision: &str,
    f: Finding,
    duration_ms: u64,
) -> CaseResult {
    let (verdict, message) = f.status.verdict(check.level);
    CaseResult {
        id: case_id(binding, check.id, revision),
        kind: match check.kind {
            CheckKind::Active(_) | CheckKind::Own => CaseKind::Active,
            CheckKind::Monitor(_) => CaseKind::Monitor,
        },
        check: check.id.to_string(),
        binding: binding.to_string(),
        revision: revision.to_string(),
        spec: check.spec_url(revision),
        level: check.level.as_str().to_string(),
        quote: check.quote.to_string(),
        requirement: check.requirement.to_string(),
        verdict,
        message,
        evidence: f.evidence,
        duration_ms,
        attempts: 1,
        expected: None,
    }
}

/// The ACP monitors' own session: `initialize`, `session/new` with no MCP servers, one prompt,
/// and one call of the tool method when the target declares one or the agent advertises one
/// ([`crate::protocol::acp::tool_method`]), then shutdown.
async fn acp_session(ctx: &Ctx) -> bool {
    let Ok((mut c, init)) = crate::engine::acp::open(ctx).await else {
        return false;
    };
    if let Ok(r) = crate::protocol::acp::new_session(&mut c, json!([])).await {
        if let Some(sid) = crate::protocol::acp::session_id(&r) {
            let _ = crate::protocol::acp::prompt(&mut c, &sid, "parity: hello").await;
            if let Some((m, _)) =
                crate::protocol::acp::tool_method(ctx.target.tool_method.as_deref(), &init)
            {
                let _ = crate::protocol::acp::tool_call(
                    &mut c,
                    &m,
                    ctx.target.tool_params.as_ref(),
                    Some(&sid),
                    "status",
                    &json!({}),
                )
                .await;
            }
        }
    }
    ctx.close(c).await;
    true
}

/// Runs an ACP v1 catalogue against an agent (the `acp` profile gives its own,
/// `crate::profiles::acp::run_acp`): every check of `catalogue` as a case `check@acp#v1`. An agent that does not answer `initialize` at version 1 leaves `eras` empty
/// (the run could not happen) with the reason in `notes`.
///
/// Errors: an invalid `--filter`/`--skip` glob (a usage error).
pub async fn run_acp_catalogue(
    target: McpTarget,
    opts: &RunOptions,
    catalogue: Catalogue,
) -> Result<RunReport, String> {
    let started = Instant::now();
    let target = Arc::new(target);
    let mut eras = HashMap::new();
    let mut notes = Vec::new();
    // Probe: the agent starts and answers initialize.
    let probe_ctx = Ctx::new(
        target.clone(),
        crate::protocol::acp::REVISION,
        opts.timing,
        Arc::new(ServerFacts::default()),
        "acp-probe".into(),
    );
    let probe = probe_ctx
        .within_deadline(crate::engine::acp::open(&probe_ctx))
        .await;
    let mut acp_startup = None;
    let caps = match probe {
        Some(Ok((c, init))) => {
            acp_startup = c.clock.took().filter(|_| c.peer.pid().is_some());
            probe_ctx.close(c).await;
            eras.insert(
                "acp".to_string(),
                crate::protocol::acp::REVISION.to_string(),
            );
            init.get("agentCapabilities")
                .cloned()
                .unwrap_or(Value::Null)
        }
        Some(Err(f)) => {
            let events: Vec<crate::transport::wire::WireEvent> = probe_ctx
                .take_logs()
                .into_iter()
                .flat_map(|l| l.events)
                .collect();
            notes.push(format!(
                "ACP initialize probe: {}{}",
                f.status.verdict(crate::engine::check::Level::Must).1,
                stderr_and_exit(&events)
            ));
            Value::Null
        }
        None => {
            notes.push("ACP initialize probe: ran past the case deadline".into());
            Value::Null
        }
    };
    if eras.is_empty() {
        return Ok(RunReport {
            target: target.name.clone(),
            eras,
            notes,
            cases: Vec::new(),
            duration_ms: started.elapsed().as_millis() as u64,
            started_at: None,
            seed: None,
            stale: Vec::new(),
            partition: None,
            could_not_run: Vec::new(),
            startup_ms: Default::default(),
            profiles: Default::default(),
        });
    }
    let planned: Vec<Planned> = catalogue
        .checks
        .into_iter()
        .map(|check| Planned {
            check,
            revision: crate::protocol::acp::REVISION.to_string(),
        })
        .filter(|p| {
            opts.selection.selects(&case_id(
                crate::protocol::acp::BINDING,
                p.check.id,
                &p.revision,
            ))
        })
        .collect();
    let facts = Arc::new(ServerFacts {
        capabilities: caps,
        started_in: acp_startup,
        processes: Arc::default(),
    });
    let mut startup_ms = std::collections::BTreeMap::new();
    if let Some(d) = acp_startup {
        let ms = d.as_millis() as u64;
        startup_ms.insert("acp".to_string(), ms);
        notes.push(format!(
            "start-up: the agent answered its first initialize {ms} ms after it was started (later sessions' start-up deadline: at least {} ms)",
            ms.saturating_mul(3).max(opts.timing.startup.as_millis() as u64)
        ));
    }
    let sem = Arc::new(tokio::sync::Semaphore::new(opts.jobs.max(1)));
    opts.control.planned(planned.len());
    let cases = run_era(
        &target,
        &facts,
        (
            crate::protocol::acp::BINDING,
            acp_monitor_session,
            catalogue.shares_session,
        ),
        planned,
        Vec::new(),
        opts.timing,
        (sem, opts.control.clone()),
    )
    .await;
    Ok(RunReport {
        target: target.name.clone(),
        eras,
        notes,
        cases,
        duration_ms: started.elapsed().as_millis() as u64,
        started_at: None,
        seed: None,
        stale: Vec::new(),
        partition: None,
        could_not_run: Vec::new(),
        startup_ms,
        profiles: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, verdict: Verdict, message: &str) -> CaseResult {
        CaseResult {
            id: id.into(),
            kind: CaseKind::Active,
            check: id.split('@').next().unwrap_or(id).into(),
            binding: "mcp-stdio".into(),
            revision: "2025-11-25".into(),
            spec: String::new(),
            level: "MUST".into(),
            quote: String::new(),
            requirement: String::new(),
            verdict,
            message: message.into(),
            evidence: Vec::new(),
            duration_ms: 0,
            attempts: 1,
            expected: None,
        }
    }

    fn report(cases: Vec<CaseResult>) -> RunReport {
        RunReport {
            cases,
            ..RunReport::default()
        }
    }

    #[test]
    fn a_not_run_case_exits_3_unless_a_baseline_lists_it() {
        let pass = case("a@mcp-stdio#2025-11-25", Verdict::Pass, "");
        let lost = case(
            "b@mcp-stdio#2025-11-25",
            Verdict::NotRun,
            "the server stopped",
        );
        assert_eq!(report(vec![pass.clone()]).exit_code(), 0);
        let r = report(vec![pass.clone(), lost.clone()]);
        assert_eq!((r.exit_code(), r.unexpected_not_run()), (3, 1));
        // Listed in a baseline: expected, exit 0.
        let mut listed = lost.clone();
        listed.expected = Some(BaselineMark {
            entry: "b".into(),
            reason: "needs a login".into(),
        });
        assert_eq!(report(vec![pass.clone(), listed]).exit_code(), 0);
        // A failure outranks it.
        let fail = case("c@mcp-stdio#2025-11-25", Verdict::Fail, "broken");
        assert_eq!(report(vec![pass.clone(), lost, fail]).exit_code(), 1);
        // Cases a --fail-fast run never started do not count.
        let unstarted = case(
            "d@mcp-stdio#2025-11-25",
            Verdict::NotRun,
            &format!("{FAIL_FAST_NOT_STARTED} after c failed"),
        );
        assert_eq!(report(vec![pass, unstarted]).exit_code(), 0);
    }

    #[test]
    fn a_failure_only_in_the_shared_session_is_a_warning_with_both_exchanges() {
        let mut shared = case("a@mcp-stdio#2025-11-25", Verdict::Fail, "answered twice");
        shared.evidence = vec!["← shared".into()];
        let mut alone = case("a@mcp-stdio#2025-11-25", Verdict::Pass, "");
        alone.evidence = vec!["← alone".into()];
        let r = confirm_alone(shared.clone(), alone);
        assert_eq!(r.verdict, Verdict::Warn);
        assert!(
            r.message
                .starts_with("fails only after earlier requests in the same session"),
            "{}",
            r.message
        );
        assert_eq!(r.evidence.first().map(String::as_str), Some("← shared"));
        assert_eq!(r.evidence.last().map(String::as_str), Some("← alone"));
        // The same failure alone is confirmed.
        let again = case("a@mcp-stdio#2025-11-25", Verdict::Fail, "answered twice");
        let r = confirm_alone(shared, again);
        assert_eq!(r.verdict, Verdict::Fail);
        assert!(r.message.contains("confirmed alone"), "{}", r.message);
    }
}
