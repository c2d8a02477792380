//! The `dispatcher` profile: black-box lifecycle and policy checks for any implementation that
//! exposes `status` and `retry` tools (seed `001`: the startup budget P5-D8, two display
//! labels P5-D5/CORE-02, retry by state D-95/P5-D14, the write/edit guard P5-D6;
//! docs/dispatcher.md).
//!
//! Every check runs through every configured stdio surface (MCP in each era the server speaks,
//! and ACP), each case starting fresh peers in the configuration it needs: the target's
//! surface commands with the extra arguments of `[dispatcher.configs]` appended (a slow start
//! in advisory mode, a slow start in required mode, a first start that fails, optionally a
//! backend that begins stopping). The settled outcomes every check observes are then compared
//! across the surfaces (`dispatcher.equivalent@equivalence#all`), with the transition time
//! declared volatile.
//!
//! Real time enters one check only: `dispatcher.startup-budget` requires the first answer and
//! the settle within the declared budget plus the declared tolerance (both generous against a
//! 30 s start). Every other check polls for the settled state and judges the order of events.
//!
//! Size (1070 lines): the lifecycle and policy checks, their configurations and the cross-surface
//! comparison share the dispatcher context (the declarations are [`crate::engine::decl`]).

mod profile;
pub use profile::DispatcherProfile;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::engine::check::{BoxFinding, Check, Finding, Level, Revs, Timing};
pub use crate::engine::decl::{
    dispatcher_reference as reference_decl, Configs, DispatcherDecl, ToolNames, DEFAULT_BUDGET_MS,
    DEFAULT_TOLERANCE_MS,
};
use crate::engine::surface::{LiveSurface, SurfaceSpec};

/// The binding of the cross-surface comparison case.
pub const EQUIVALENCE_BINDING: &str = "equivalence";

/// The id of the cross-surface comparison check.
pub const EQUIVALENT: &str = "dispatcher.equivalent";

/// The bindings a dispatcher check's cases have: `mcp-stdio, acp` (one case per surface), or
/// `equivalence` for [`EQUIVALENT`].
pub fn binding_of(id: &str) -> &'static str {
    if id == EQUIVALENT {
        EQUIVALENCE_BINDING
    } else {
        "mcp-stdio, acp"
    }
}

/// How often the checks poll `status` while waiting for a settle.
const POLL: Duration = Duration::from_millis(25);

/// The context of one dispatcher case: one surface, the declarations, and the settled
/// outcomes the check records for the cross-surface comparison.
pub struct DispatcherCtx {
    /// The surface (its command without the configuration's arguments).
    pub surface: SurfaceSpec,
    /// Declarations.
    pub decl: Arc<DispatcherDecl>,
    /// Deadlines.
    pub timing: Timing,
    steps: Mutex<Vec<(String, Value)>>,
}

impl DispatcherCtx {
    fn record(&self, step: &str, outcome: &Value) {
        if let Ok(mut s) = self.steps.lock() {
            s.push((step.to_owned(), outcome.clone()));
        }
    }
}

/// The settled outcomes one case observed, by step name, in order.
type Steps = Vec<(String, Value)>;

/// A dispatcher check's body.
pub type DispatcherFn = for<'a> fn(&'a DispatcherCtx) -> BoxFinding<'a>;

/// The dispatcher checks; the last, [`EQUIVALENT`], is judged across surfaces.
/// Each is `CheckKind::Own`: this profile runs them ([`checks`] has the bodies).
pub fn catalogue() -> Vec<Check> {
    checks().into_iter().map(|(c, _)| c).collect()
}

/// The dispatcher checks with their bodies.
fn checks() -> Vec<(Check, DispatcherFn)> {
    let c = |id, requirement, quote, section, f: DispatcherFn| {
        (
            Check::own(
                id,
                requirement,
                Level::Must,
                quote,
                section,
                Revs::All,
                Some("tools"),
            ),
            f,
        )
    };
    vec![
        c(
            "dispatcher.labels",
            "status shows exactly one of the two declared labels in every state: the active label only when the state is active, the other one while connecting, after an overrun and in error.",
            "Status shows exactly one CORE-02 label. realm active and realm disconnected come from the existing shared mapping; other states map through that mapping.",
            "docs/dispatcher.md#labels",
            |x| Box::pin(labels(x)),
        ),
        c(
            "dispatcher.status-detail",
            "status carries the reason (string or null) and the time of the last transition (an integer that moves forward when the state settles).",
            "The reason and the time of the last transition go in a second status item or command output.",
            "docs/dispatcher.md#status",
            |x| Box::pin(status_detail(x)),
        ),
        c(
            "dispatcher.startup-budget",
            "With a start longer than the budget, the session answers at once and status settles to the non-active label with the budget reason within the budget plus the tolerance.",
            "Autostart is detached within startupBudgetMs; overrun settles disconnected with STARTUP_BUDGET_EXCEEDED and the session continues.",
            "docs/dispatcher.md#startup-budget",
            |x| Box::pin(startup_budget(x)),
        ),
        c(
            "dispatcher.session-continues",
            "After a budget overrun a read-only tool still succeeds, with no warning.",
            "Overrun settles disconnected with STARTUP_BUDGET_EXCEEDED and the session continues.",
            "docs/dispatcher.md#startup-budget",
            |x| Box::pin(session_continues(x)),
        ),
        c(
            "dispatcher.required-refuses",
            "In required mode, while not active, the mutating tool is refused with the declared code and a read-only tool still succeeds.",
            "When the policy mode is required and realm is not active, the plugin refuses built-in write and edit.",
            "docs/dispatcher.md#policy",
            |x| Box::pin(required_refuses(x)),
        ),
        c(
            "dispatcher.advisory-warns",
            "In advisory mode, while not active, the mutating tool runs and its outcome carries a warning naming the declared code.",
            "In advisory mode it warns.",
            "docs/dispatcher.md#policy",
            |x| Box::pin(advisory_warns(x)),
        ),
        c(
            "dispatcher.retry-table",
            "retry follows the by-state table: error → connecting → active; active → the snapshot unchanged; stopping → a refusal with the state unchanged.",
            "The retry command follows the D-95 by-state table (error runs create, the rest return the snapshot or the refusal).",
            "docs/dispatcher.md#retry",
            |x| Box::pin(retry_table(x)),
        ),
        {
            let (check, f) = c(
                EQUIVALENT,
                "Every settled lifecycle outcome the checks above observe is equal through every surface, the transition time normalized.",
                "The same ToolCall through MCP and through ACP against one dispatcher must return ToolOutcome values that are deep-equal after transport-envelope stripping.",
                "docs/dispatcher.md#the-dispatcher-profile",
                |_| Box::pin(async { Finding::pass(Vec::new()) }),
            );
            (
                Check {
                    revs: Revs::Only(&["all"]),
                    ..check
                },
                f,
            )
        },
    ]
}

/// One session in a configuration.
struct Session {
    surface: LiveSurface,
    evidence: Vec<String>,
    opened: Instant,
}

impl Session {
    /// Starts the surface with `extra` arguments and opens its session. `opened` is the
    /// instant before the process started.
    async fn open(ctx: &DispatcherCtx, extra: &[String]) -> Result<Session, String> {
        let mut spec = ctx.surface.clone();
        match &mut spec {
            SurfaceSpec::Mcp { spec, .. } | SurfaceSpec::Acp { spec, .. } => {
                spec.args.extend(extra.iter().cloned());
            }
        }
        let opened = Instant::now();
        let surface = LiveSurface::open(&spec, ctx.timing).await?;
        Ok(Session {
            surface,
            evidence: vec![format!("started with {}", shown_args(extra))],
            opened,
        })
    }

    /// Calls a tool; the normalized outcome, or why there is none.
    async fn call(&mut self, name: &str, arguments: Value) -> Result<Value, String> {
        let r = self.surface.call(name, &arguments).await;
        match r {
            Ok(c) => {
                let line = format!(
                    "{name} {} → {}",
                    crate::base::util::clip(&arguments.to_string(), 120),
                    crate::base::util::clip(&c.outcome.to_string(), 300)
                );
                // Polling repeats itself: keep one line per distinct answer in a row.
                if self.evidence.last() != Some(&line) {
                    self.evidence.push(line);
                }
                Ok(c.outcome)
            }
            Err(e) => {
                let text = e.text().to_owned();
                self.evidence.push(format!("{name}: no outcome: {text}"));
                Err(text)
            }
        }
    }

    /// `status`'s value; errors when the call fails or the outcome is not `ok`.
    async fn status(&mut self, ctx: &DispatcherCtx) -> Result<Value, String> {
        let o = self.call(&ctx.decl.tools.status, json!({})).await?;
        ok_value(&o).ok_or_else(|| format!("status did not succeed: {o}"))
    }

    /// Polls `status` until `done` holds for its value, until `deadline`.
    async fn until(
        &mut self,
        ctx: &DispatcherCtx,
        deadline: Instant,
        done: impl Fn(&Value) -> bool,
    ) -> Result<Value, (String, Option<Value>)> {
        let mut last = None;
        loop {
            let v = self.status(ctx).await.map_err(|e| (e, last.clone()))?;
            if done(&v) {
                return Ok(v);
            }
            last = Some(v);
            if Instant::now() >= deadline {
                return Err(("the state did not settle in time".into(), last));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until the budget overrun settled: the non-active label with the budget reason.
    /// The deadline is the budget plus the tolerance after the process started, at least one
    /// message deadline (this wait judges order, not time).
    async fn overrun(&mut self, ctx: &DispatcherCtx) -> Result<Value, String> {
        let d = &ctx.decl;
        let wait = Duration::from_millis(d.budget_ms.saturating_add(d.tolerance_ms))
            .max(ctx.timing.message);
        let deadline = self.opened + wait;
        let reason = d.budget_reason.clone();
        let other = d.labels[1].clone();
        self.until(ctx, deadline, |v| {
            v.get("reason").and_then(Value::as_str) == Some(reason.as_str())
                && v.get("label").and_then(Value::as_str) == Some(other.as_str())
        })
        .await
        .map_err(|(e, last)| match last {
            Some(l) => {
                format!("{e}: status never showed label {other:?} with reason {reason:?}; last {l}")
            }
            None => e,
        })
    }

    async fn close(self, timing: Timing) -> Vec<String> {
        self.surface.close(timing).await;
        self.evidence
    }
}

fn passed(f: &Finding) -> bool {
    matches!(f.status, crate::engine::check::Status::Pass)
}

fn shown_args(extra: &[String]) -> String {
    if extra.is_empty() {
        "no extra arguments".into()
    } else {
        extra.join(" ")
    }
}

fn ok_value(o: &Value) -> Option<Value> {
    (o.get("outcome").and_then(Value::as_str) == Some("ok"))
        .then(|| o.get("value").cloned())
        .flatten()
}

fn kind(o: &Value) -> &str {
    o.get("outcome").and_then(Value::as_str).unwrap_or("")
}

fn label(v: &Value) -> Option<&str> {
    v.get("label").and_then(Value::as_str)
}

fn state(v: &Value) -> Option<&str> {
    v.get("state").and_then(Value::as_str)
}

/// Runs `body` on a fresh session in `extra`'s configuration; a failure to start is not-run.
async fn with_session<F, Fut>(ctx: &DispatcherCtx, extra: &[String], body: F) -> Finding
where
    F: FnOnce(Session) -> Fut,
    Fut: std::future::Future<Output = (Session, Result<(), String>)>,
{
    session_then(ctx, extra, false, body).await
}

/// [`with_session`]; when `strict`, a session that does not open is a violation (a surface
/// that waits on the backend before it answers the handshake), not a not-run.
async fn session_then<F, Fut>(
    ctx: &DispatcherCtx,
    extra: &[String],
    strict: bool,
    body: F,
) -> Finding
where
    F: FnOnce(Session) -> Fut,
    Fut: std::future::Future<Output = (Session, Result<(), String>)>,
{
    let s = match Session::open(ctx, extra).await {
        Ok(s) => s,
        Err(e) if strict => {
            return Finding::violated(
                format!(
                "the session did not open while the backend started (it waits on the start): {e}"
            ),
                vec![format!("started with {}", shown_args(extra))],
            )
        }
        Err(e) => {
            return Finding::not_run(
                format!("the surface did not start in this configuration: {e}"),
                vec![format!("started with {}", shown_args(extra))],
            )
        }
    };
    let (s, r) = body(s).await;
    let evidence = s.close(ctx.timing).await;
    match r {
        Ok(()) => Finding::pass(evidence),
        Err(e) => Finding::violated(e, evidence),
    }
}

/// Whether the label is the one the state maps to (when the state is exposed) and one of the
/// two declared.
fn label_problem(ctx: &DispatcherCtx, v: &Value) -> Option<String> {
    let labels = &ctx.decl.labels;
    let Some(l) = label(v) else {
        return Some(format!("status has no label: {v}"));
    };
    if !labels.iter().any(|x| x == l) {
        return Some(format!(
            "status label {l:?} is not one of the two declared labels {labels:?}"
        ));
    }
    if let Some(s) = state(v) {
        let want = if s == "active" {
            &labels[0]
        } else {
            &labels[1]
        };
        if l != want {
            return Some(format!("state {s:?} shows label {l:?}, not {want:?}"));
        }
    }
    None
}

async fn labels(ctx: &DispatcherCtx) -> Finding {
    let d = ctx.decl.clone();
    let f = with_session(ctx, &[], |mut s| async move {
        let r = async {
            // With no configuration the backend starts as the implementation does by default:
            // wait (one message deadline) for a state other than `connecting`.
            let deadline = s.opened + ctx.timing.message;
            let active = d.labels[0].clone();
            let v = s
                .until(ctx, deadline, |v| {
                    state(v).map_or(label(v) == Some(active.as_str()), |x| x != "connecting")
                })
                .await
                .or_else(|(e, last)| last.ok_or(e))?;
            if let Some(p) = label_problem(ctx, &v) {
                return Err(p);
            }
            ctx.record("default status", &json!({"outcome": "ok", "value": v}));
            Ok(())
        }
        .await;
        (s, r)
    })
    .await;
    if !passed(&f) {
        return f;
    }
    let d = ctx.decl.clone();
    let slow = with_session(ctx, &ctx.decl.configs.slow_start, |mut s| async move {
        let r = async {
            let first = s.status(ctx).await?;
            if let Some(p) = label_problem(ctx, &first) {
                return Err(format!("before the start finished: {p}"));
            }
            if label(&first) != Some(d.labels[1].as_str()) {
                return Err(format!(
                    "before a 30 s start finished, status shows {first}, not label {:?}",
                    d.labels[1]
                ));
            }
            let settled = s.overrun(ctx).await?;
            if let Some(p) = label_problem(ctx, &settled) {
                return Err(format!("after the overrun: {p}"));
            }
            Ok(())
        }
        .await;
        (s, r)
    })
    .await;
    if !passed(&slow) {
        return slow;
    }
    with_session(ctx, &ctx.decl.configs.flaky, |mut s| async move {
        let r = async {
            let deadline = s.opened + ctx.timing.message;
            let failed = s
                .until(ctx, deadline, |v| {
                    state(v).is_some_and(|x| x != "connecting")
                        || (state(v).is_none() && v.get("reason").is_some_and(|r| !r.is_null()))
                })
                .await
                .map_err(|(e, _)| format!("the failed start did not settle: {e}"))?;
            label_problem(ctx, &failed)
                .map_or(Ok(()), |p| Err(format!("after a failed start: {p}")))
        }
        .await;
        (s, r)
    })
    .await
}

async fn status_detail(ctx: &DispatcherCtx) -> Finding {
    with_session(ctx, &ctx.decl.configs.slow_start, |mut s| async move {
        let r = async {
            let first = s.status(ctx).await?;
            let shape = |v: &Value| -> Result<u64, String> {
                match v.get("reason") {
                    Some(Value::Null) | Some(Value::String(_)) => {}
                    _ => return Err(format!("status has no reason (string or null): {v}")),
                }
                v.get("since_ms").and_then(Value::as_u64).ok_or_else(|| {
                    format!("status has no time of the last transition (since_ms, an integer): {v}")
                })
            };
            let t1 = shape(&first)?;
            let settled = s.overrun(ctx).await?;
            let t2 = shape(&settled)?;
            if t2 < t1 {
                return Err(format!(
                    "the transition time went backwards: {t1} before the overrun, {t2} after"
                ));
            }
            Ok(())
        }
        .await;
        (s, r)
    })
    .await
}

async fn startup_budget(ctx: &DispatcherCtx) -> Finding {
    let d = ctx.decl.clone();
    session_then(ctx, &ctx.decl.configs.slow_start, true, |mut s| async move {
        let r = async {
            let bound = Duration::from_millis(d.budget_ms.saturating_add(d.tolerance_ms));
            let first = match tokio::time::timeout(bound, s.status(ctx)).await {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => {
                    return Err(format!(
                        "the session did not answer status while the backend started: {e}"
                    ))
                }
                Err(_) => {
                    return Err(format!(
                        "the session did not answer status within the budget plus the tolerance ({} ms): it waits on the backend start",
                        bound.as_millis()
                    ))
                }
            };
            if first.get("reason").and_then(Value::as_str) == Some(d.budget_reason.as_str())
                && s.opened.elapsed() < Duration::from_millis(d.budget_ms)
            {
                return Err(format!("status reported the overrun before the budget ran out: {first}"));
            }
            let settled = s.overrun(ctx).await?;
            let took = s.opened.elapsed();
            if took > bound {
                return Err(format!(
                    "the overrun settled {} ms after launch, past the budget plus the tolerance ({} ms)",
                    took.as_millis(),
                    bound.as_millis()
                ));
            }
            ctx.record("status after the overrun", &json!({"outcome": "ok", "value": settled}));
            Ok(())
        }
        .await;
        (s, r)
    })
    .await
}

async fn session_continues(ctx: &DispatcherCtx) -> Finding {
    let d = ctx.decl.clone();
    with_session(ctx, &ctx.decl.configs.slow_start, |mut s| async move {
        let r = async {
            s.overrun(ctx).await?;
            let o = s.call(&d.tools.read_file, d.read_arguments.clone()).await?;
            if kind(&o) != "ok" {
                return Err(format!(
                    "after the overrun the read-only tool {} did not succeed: {o}",
                    d.tools.read_file
                ));
            }
            if o.get("warnings")
                .and_then(Value::as_array)
                .is_some_and(|w| !w.is_empty())
            {
                return Err(format!("the read-only tool carries a warning: {o}"));
            }
            ctx.record("read after the overrun", &o);
            Ok(())
        }
        .await;
        (s, r)
    })
    .await
}

async fn required_refuses(ctx: &DispatcherCtx) -> Finding {
    let d = ctx.decl.clone();
    with_session(ctx, &ctx.decl.configs.required, |mut s| async move {
        let r = async {
            s.overrun(ctx).await?;
            let w = s
                .call(&d.tools.write_file, d.write_arguments.clone())
                .await?;
            if kind(&w) != "refused"
                || w.get("code").and_then(Value::as_str) != Some(d.required_code.as_str())
            {
                return Err(format!(
                    "required mode, not active: {} was not refused {}: {w}",
                    d.tools.write_file, d.required_code
                ));
            }
            let r = s.call(&d.tools.read_file, d.read_arguments.clone()).await?;
            if kind(&r) != "ok" {
                return Err(format!(
                    "required mode, not active: the read-only tool {} did not succeed: {r}",
                    d.tools.read_file
                ));
            }
            ctx.record("required write", &w);
            ctx.record("required read", &r);
            Ok(())
        }
        .await;
        (s, r)
    })
    .await
}

async fn advisory_warns(ctx: &DispatcherCtx) -> Finding {
    let d = ctx.decl.clone();
    with_session(ctx, &ctx.decl.configs.slow_start, |mut s| async move {
        let r = async {
            s.overrun(ctx).await?;
            let w = s
                .call(&d.tools.write_file, d.write_arguments.clone())
                .await?;
            if kind(&w) != "ok" {
                return Err(format!(
                    "advisory mode, not active: {} did not run: {w}",
                    d.tools.write_file
                ));
            }
            let warned = w
                .get("warnings")
                .and_then(Value::as_array)
                .is_some_and(|ws| {
                    ws.iter()
                        .filter_map(Value::as_str)
                        .any(|t| t.contains(&d.required_code))
                });
            if !warned {
                return Err(format!(
                    "advisory mode, not active: {} ran without a warning naming {}: {w}",
                    d.tools.write_file, d.required_code
                ));
            }
            ctx.record("advisory write", &w);
            Ok(())
        }
        .await;
        (s, r)
    })
    .await
}

async fn retry_table(ctx: &DispatcherCtx) -> Finding {
    let d = ctx.decl.clone();
    let f = with_session(ctx, &ctx.decl.configs.flaky, |mut s| async move {
        let r = async {
            let deadline = s.opened + ctx.timing.message;
            let failed = s
                .until(ctx, deadline, |v| {
                    v.get("reason").is_some_and(|r| !r.is_null())
                        && state(v) != Some("connecting")
                        && label(v) != Some(d.labels[0].as_str())
                })
                .await
                .map_err(|(e, last)| {
                    format!("the failed start did not settle: {e}; last {last:?}")
                })?;
            let r1 = s.call(&d.tools.retry, json!({})).await?;
            let Some(v1) = ok_value(&r1) else {
                return Err(format!("retry from {failed} did not succeed: {r1}"));
            };
            if label(&v1) != Some(d.labels[0].as_str()) {
                return Err(format!(
                    "retry from {failed} should connect (→ connecting → active), got {v1}"
                ));
            }
            let now = s.status(ctx).await?;
            if now != v1 {
                return Err(format!(
                    "status after retry {now} differs from retry's snapshot {v1}"
                ));
            }
            // Let time pass, so a restart would show a later transition time.
            tokio::time::sleep(Duration::from_millis(30)).await;
            let r2 = s.call(&d.tools.retry, json!({})).await?;
            if ok_value(&r2).as_ref() != Some(&v1) {
                return Err(format!(
                    "retry while active should return the snapshot unchanged ({v1}), got {r2}"
                ));
            }
            ctx.record("retry from error", &r1);
            ctx.record("retry while active", &r2);
            Ok(())
        }
        .await;
        (s, r)
    })
    .await;
    if !passed(&f) {
        return f;
    }
    let Some(stopping) = ctx.decl.configs.stopping.clone() else {
        return f;
    };
    let d = ctx.decl.clone();
    let mut g = with_session(ctx, &stopping, |mut s| async move {
        let r = async {
            let deadline = s.opened + ctx.timing.message;
            let before = s
                .until(ctx, deadline, |v| state(v) == Some("stopping"))
                .await
                .map_err(|(e, last)| {
                    format!("the backend never reached stopping: {e}; last {last:?}")
                })?;
            let r = s.call(&d.tools.retry, json!({})).await?;
            if kind(&r) != "refused" {
                return Err(format!("retry while stopping should be refused, got {r}"));
            }
            let after = s.status(ctx).await?;
            if after != before {
                return Err(format!(
                    "a refused retry changed the state: {before} before, {after} after"
                ));
            }
            ctx.record("retry while stopping", &r);
            Ok(())
        }
        .await;
        (s, r)
    })
    .await;
    let mut evidence = f.evidence;
    evidence.append(&mut g.evidence);
    g.evidence = evidence;
    g
}

/// Writes the bundled reference's policy files into `dir` and returns the configurations that
/// pass them with `--policy`: a 30 s simulated start under a `budget_ms` budget (advisory and
/// required), a first start that fails at once, and a backend that stops 50 ms after it
/// started.
///
/// Errors: a file could not be written.
pub fn reference_configs(dir: &std::path::Path, budget_ms: u64) -> std::io::Result<Configs> {
    let write = |name: &str, text: String| -> std::io::Result<Vec<String>> {
        let path: PathBuf = dir.join(name);
        std::fs::write(&path, text)?;
        Ok(vec!["--policy".into(), path.to_string_lossy().into_owned()])
    };
    let slow = |mode: &str| {
        format!(
            "mode = \"{mode}\"\nstartup_budget_ms = {budget_ms}\n\n[runtime]\nkind = \"simulated\"\nstart_delay_ms = 30000\n"
        )
    };
    Ok(Configs {
        slow_start: write("slow-start.toml", slow("advisory"))?,
        required: write("required.toml", slow("required"))?,
        flaky: write(
            "flaky.toml",
            "[runtime]\nkind = \"simulated\"\nfail_attempts = 1\n".into(),
        )?,
        stopping: Some(write(
            "stopping.toml",
            "[runtime]\nkind = \"simulated\"\nstop_after_ms = 50\n".into(),
        )?),
    })
}

/// The stdio surfaces of a target the profile runs through (MCP in each era it speaks, and
/// ACP); Streamable HTTP surfaces are left out.
///
/// Errors: a surface command does not parse.
pub async fn surfaces(
    target: &crate::engine::target::Target,
    timing: Timing,
    line_cap: usize,
) -> Result<(Vec<SurfaceSpec>, Vec<String>), String> {
    let mut t = target.clone();
    t.http = None;
    t.reference_facade = None;
    crate::engine::surface::surfaces_of(&t, timing, line_cap).await
}

/// Runs the profile over `surfaces`: each selected check through each surface (one case per
/// surface, `check@mcp-stdio#<rev>` or `check@acp#v1`, `opts.jobs` at a time), then the
/// cross-surface comparison. A check whose cases are not selected still runs when the
/// comparison is, without being reported. No surface puts the reason in `could_not_run`.
pub async fn run(
    name: &str,
    surfaces: Vec<SurfaceSpec>,
    decl: DispatcherDecl,
    opts: &crate::engine::run::RunOptions,
) -> crate::engine::run::RunReport {
    use crate::engine::run::{case_id, to_result, RunReport};
    let started = Instant::now();
    let mut report = RunReport {
        target: name.to_owned(),
        ..RunReport::default()
    };
    let mut decl = decl;
    let _dir = if decl.reference {
        match tempfile::Builder::new()
            .prefix("parity-dispatcher-")
            .tempdir()
        {
            Ok(dir) => match reference_configs(dir.path(), decl.budget_ms) {
                Ok(c) => {
                    decl.configs = c;
                    Some(dir)
                }
                Err(e) => {
                    report
                        .notes
                        .push(format!("dispatcher: failed to write the policy files: {e}"));
                    return report;
                }
            },
            Err(e) => {
                report.notes.push(format!(
                    "dispatcher: failed to make a directory for the policy files: {e}"
                ));
                return report;
            }
        }
    } else {
        None
    };
    let decl = Arc::new(decl);
    if surfaces.is_empty() {
        report
            .could_not_run
            .push("the dispatcher profile found no stdio surface that answered".into());
    } else {
        let labels: Vec<String> = surfaces.iter().map(SurfaceSpec::label).collect();
        report
            .notes
            .push(format!("dispatcher: through {}", labels.join(", ")));
    }
    let checks = checks();
    let equivalence_check = checks
        .iter()
        .find(|(c, _)| c.id == EQUIVALENT)
        .map(|(c, _)| *c);
    let compare = opts
        .selection
        .selects(&case_id(EQUIVALENCE_BINDING, EQUIVALENT, "all"))
        && surfaces.len() >= 2;
    // (check index, surface index, reported)
    let mut plan = Vec::new();
    for (ci, (check, _)) in checks.iter().enumerate() {
        if check.id == EQUIVALENT {
            continue;
        }
        for (si, s) in surfaces.iter().enumerate() {
            let label = s.label();
            let (binding, rev) = label.split_once('#').unwrap_or((label.as_str(), ""));
            let reported = opts.selection.selects(&case_id(binding, check.id, rev));
            if reported || compare {
                plan.push((ci, si, reported));
            }
        }
    }
    opts.control
        .planned(plan.iter().filter(|p| p.2).count() + usize::from(compare));
    let sem = Arc::new(tokio::sync::Semaphore::new(opts.jobs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, (ci, si, reported)) in plan.into_iter().enumerate() {
        let Some((check, f)) = checks.get(ci).cloned() else {
            continue;
        };
        let Some(surface) = surfaces.get(si).cloned() else {
            continue;
        };
        let decl = decl.clone();
        let timing = opts.timing;
        let control = opts.control.clone();
        let sem = sem.clone();
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let label = surface.label();
            let (binding, rev) = match label.split_once('#') {
                Some((b, r)) => (b.to_owned(), r.to_owned()),
                None => (label.clone(), String::new()),
            };
            let steps: Arc<Mutex<Vec<(String, Value)>>> = Arc::new(Mutex::new(Vec::new()));
            let attempt = || {
                let ctx = DispatcherCtx {
                    surface: surface.clone(),
                    decl: decl.clone(),
                    timing,
                    steps: Mutex::new(Vec::new()),
                };
                let (binding, rev, check, steps) =
                    (binding.clone(), rev.clone(), check, steps.clone());
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
                    if let (Ok(mut out), Ok(got)) = (steps.lock(), ctx.steps.lock()) {
                        *out = got.clone();
                    }
                    to_result(
                        &binding,
                        &check,
                        &rev,
                        finding,
                        t0.elapsed().as_millis() as u64,
                    )
                }
            };
            let r = if reported {
                control
                    .run_case(attempt, |why| {
                        to_result(&binding, &check, &rev, Finding::not_run(why, Vec::new()), 0)
                    })
                    .await
            } else {
                attempt().await
            };
            let steps = steps.lock().map(|s| s.clone()).unwrap_or_default();
            (index, ci, label, reported, r, steps)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(r) = joined {
            results.push(r);
        }
    }
    results.sort_by_key(|r| r.0);
    // check index → surface label → steps
    let mut observed: BTreeMap<usize, Vec<(String, Steps)>> = BTreeMap::new();
    for (_, ci, label, reported, r, steps) in results {
        observed.entry(ci).or_default().push((label, steps));
        if reported {
            report.cases.push(r);
        }
    }
    if let (true, Some(check)) = (compare, equivalence_check) {
        let t0 = Instant::now();
        let plain: Vec<Check> = checks.iter().map(|(c, _)| *c).collect();
        let finding = judge_equivalence(&plain, &observed, &decl.volatile);
        report.cases.push(to_result(
            EQUIVALENCE_BINDING,
            &check,
            "all",
            finding,
            t0.elapsed().as_millis() as u64,
        ));
        if let Some(last) = report.cases.last() {
            opts.control.finished(last);
        }
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    report
}

/// Compares the recorded steps of every check across surfaces: the same steps, with equal
/// outcomes after normalizing `volatile`.
fn judge_equivalence(
    checks: &[Check],
    observed: &BTreeMap<usize, Vec<(String, Steps)>>,
    volatile: &[String],
) -> Finding {
    let mut problems = Vec::new();
    let mut evidence = Vec::new();
    let mut compared = 0usize;
    for (ci, per_surface) in observed {
        let id = checks.get(*ci).map_or("?", |c| c.id);
        let Some((base_label, base)) = per_surface.first() else {
            continue;
        };
        for (label, steps) in per_surface.iter().skip(1) {
            let names = |s: &[(String, Value)]| s.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
            if names(base) != names(steps) {
                problems.push(format!(
                    "{id}: {base_label} observed {:?}, {label} observed {:?}",
                    names(base),
                    names(steps)
                ));
                continue;
            }
            for ((step, a), (_, b)) in base.iter().zip(steps.iter()) {
                compared += 1;
                let a = crate::engine::outcome::comparable(a, volatile, false);
                let b = crate::engine::outcome::comparable(b, volatile, false);
                if a != b {
                    problems.push(format!(
                        "{id}: {step}: {base_label} and {label} differ at {}\n{}",
                        crate::engine::outcome::differing_paths(&a, &b).join(", "),
                        crate::engine::outcome::unified_diff(&a, &b, base_label, label)
                    ));
                } else {
                    evidence.push(format!("{id}: {step}: equal on {base_label} and {label}"));
                }
            }
        }
    }
    if !problems.is_empty() {
        return Finding::violated(problems.join("\n"), evidence);
    }
    if compared == 0 {
        return Finding::not_run(
            "no settled outcome was observed on two surfaces to compare".to_string(),
            evidence,
        );
    }
    Finding::pass(evidence)
}

/// Runs the profile against the bundled reference (`fault` `None`) or a faulty dispatcher
/// (`parity fake-dispatcher <fault> mcp|acp`, both surfaces behind the fault), with the
/// reference declarations; used by the self-test and the tests.
///
/// Errors: this executable cannot be found, or a surface command does not parse.
pub async fn run_reference(
    fault: Option<&str>,
    opts: &crate::engine::run::RunOptions,
) -> Result<crate::engine::run::RunReport, String> {
    let mut target = crate::engine::target::reference();
    if let Some(name) = fault {
        let exe = std::env::current_exe()
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| format!("cannot find this executable: {e}"))?;
        let quoted = crate::engine::target::shell_quote(&exe);
        let name = crate::engine::target::shell_quote(name);
        if let Some(m) = target.mcp.as_mut() {
            m.command = format!("{quoted} fake-dispatcher {name} mcp");
        }
        if let Some(a) = target.acp.as_mut() {
            a.command = format!("{quoted} fake-dispatcher {name} acp");
        }
        target.name = format!("parity fake-dispatcher {name}");
    }
    let decl = target.dispatcher.clone().unwrap_or_else(reference_decl);
    let (surfaces, notes) = surfaces(
        &target,
        opts.timing,
        crate::transport::wire::DEFAULT_LINE_CAP,
    )
    .await?;
    let mut report = run(&target.name, surfaces, decl, opts).await;
    report.notes.extend(notes);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatcher_table_errors_name_line_and_key() {
        for (table, want) in [
            (
                "[dispatcher]\nlabel = []\n",
                "parity.toml:6:1: dispatcher.label: unknown field `label`",
            ),
            (
                "[dispatcher]\n[dispatcher.configs]\nslow_start = []\nrequired = []\n",
                "missing field `flaky`",
            ),
            (
                "[dispatcher]\nbudget_ms = 0\n[dispatcher.configs]\nslow_start = []\nrequired = []\nflaky = []\n",
                "parity.toml:6:13: dispatcher.budget_ms: must be at least 1",
            ),
            (
                "[dispatcher.tools]\nstats = \"s\"\n",
                "parity.toml:6:1: dispatcher.tools.stats: unknown field `stats`",
            ),
        ] {
            let text = format!("version = 1\n[surfaces.mcp]\ncommand = \"server\"\n\n{table}");
            match crate::engine::target::parse("parity.toml", &text) {
                Ok(_) => panic!("{table:?} loaded"),
                Err(e) => assert!(e.to_string().contains(want), "{table:?}: {e}"),
            }
        }
    }

    #[test]
    fn every_check_but_the_comparison_runs_per_surface() {
        let c = catalogue();
        assert_eq!(c.len(), 8);
        for check in &c {
            assert!(matches!(check.kind, crate::engine::check::CheckKind::Own));
            assert!(check.section.starts_with("docs/dispatcher.md#"));
            assert_eq!(
                binding_of(check.id),
                if check.id == EQUIVALENT {
                    EQUIVALENCE_BINDING
                } else {
                    "mcp-stdio, acp"
                }
            );
        }
    }
}
