//! The `equivalence` profile: the same tool call through every surface gives the same outcome
//! (`DESIGN.md`, "The outcome model"; `docs/equivalence.md`).
//!
//! Surfaces: MCP stdio in each era the server speaks (one per era), and ACP through the
//! target's tool extension method. Every case starts every surface fresh (a new process each, so
//! the same seeded state), runs its calls on each in the same order, reads each response into an
//! outcome ([`crate::engine::outcome`]), and compares every surface with the first one after
//! normalizing the target's volatile pointers. A mismatch fails the case naming the call, both
//! surfaces, the differing JSON paths and a unified diff; an envelope of the wrong shape fails
//! it too.
//!
//! Cases:
//! - `equivalence.scenario.<scenario-id>@equivalence#all`: the `call` steps of each scenario
//!   (other steps are not tool calls and are passed over);
//! - `equivalence.generated.<tool>@equivalence#all`: generated calls from the tool's
//!   `inputSchema` ([`crate::profiles::equivalence::gen`]), valid ones and invalid ones made by mutation, `cases` per
//!   tool from `seed`; a mismatch is shrunk to a minimal call, printed as a scenario step.
//!
//! The surfaces it calls through are [`crate::engine::surface`], shared with the dispatcher.

mod profile;
pub use profile::EquivalenceProfile;

/// Generated tool-call arguments from JSON Schema, run seeded with shrinking (generated equivalence).
pub use crate::engine::gen;

/// The equivalence checks: one per kind of equivalence case (`equivalence.scenario` for the
/// scenario files' calls, `equivalence.generated` for the calls generated from `inputSchema`).
pub const EQUIVALENCE_CHECKS: [&str; 2] = ["equivalence.scenario", "equivalence.generated"];

use crate::engine::check::{Finding, Level, Timing, Verdict};
use crate::engine::outcome;
use crate::engine::run::{CaseKind, CaseResult};
use crate::engine::scenario::{Action, Scenario};
use crate::engine::surface::call_text;
pub use crate::engine::surface::{surfaces_of, CallFailure, Called, LiveSurface, SurfaceSpec};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

/// The binding of equivalence cases.
pub const BINDING: &str = "equivalence";

/// The revision slot of equivalence case ids: every surface at once.
pub const REVISION: &str = "all";

/// Where the outcome model is written.
pub const SPEC: &str = "docs/equivalence.md#the-outcome-model";

/// The requirement every equivalence case checks.
pub const QUOTE: &str =
    "The same call through every surface gives the same outcome: kind, value, refusal code, protocol-error class and warnings.";

/// What equivalence compares and how.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The surfaces, in order (the first is the baseline).
    pub surfaces: Vec<SurfaceSpec>,
    /// Volatile pointers into the outcome.
    pub volatile: Vec<String>,
    /// Compare messages too.
    pub compare_messages: bool,
    /// Tools that get fresh peers per generated case.
    pub stateful: Vec<String>,
    /// Tools to generate for (empty: all).
    pub tools: Vec<String>,
    /// The target's `[tools]` (docs/target.md): a tool in `never` gets no generated call, even
    /// when `tools` names it.
    pub calls: crate::engine::check::CallPolicy,
    /// Generated cases per tool (0: no generated cases).
    pub cases: u32,
    /// Generator seed.
    pub seed: u64,
    /// The target serves the bundled reference (reference-only scenarios run).
    pub reference: bool,
}

/// Most bytes of a surface's response a mismatch quotes.
const RESPONSE_SHOWN: usize = 400;

/// Compares one call's results on every surface with the first; `None` when all agree. The
/// text of a difference gives the call, the differing paths, a unified diff of the comparable
/// outcomes and the two responses as they came (each clipped to 400 bytes).
///
/// `call` describes the call in the failure text; it is only formatted when there is one.
pub fn compare(
    plan: &Plan,
    call: &dyn Fn() -> String,
    results: &[(String, Called)],
) -> Option<String> {
    let mut problems = Vec::new();
    for (label, c) in results {
        let mcp = label.starts_with("mcp");
        for p in outcome::envelope_problems(&c.response, mcp) {
            problems.push(format!("{}: {label}: envelope: {p}", call()));
        }
    }
    let (base_label, base) = results.first()?;
    let a = outcome::comparable(&base.outcome, &plan.volatile, plan.compare_messages);
    for (label, c) in results.iter().skip(1) {
        let b = outcome::comparable(&c.outcome, &plan.volatile, plan.compare_messages);
        if a != b {
            let paths = outcome::differing_paths(&a, &b);
            // The responses as they came, so what the comparison leaves out (a refusal's
            // message, say) can still be read.
            let answered = |l: &str, r: &Value| {
                format!(
                    "{l} answered: {}",
                    crate::base::util::clip(&r.to_string(), RESPONSE_SHOWN)
                )
            };
            problems.push(format!(
                "{}: {base_label} and {label} differ at {}\n{}\n{}\n{}",
                call(),
                paths.join(", "),
                outcome::unified_diff(&a, &b, base_label, label).trim_end(),
                answered(base_label, &base.response),
                answered(label, &c.response)
            ));
        }
    }
    if problems.is_empty() {
        None
    } else {
        Some(problems.join("\n"))
    }
}

async fn open_all(plan: &Plan, timing: Timing) -> Result<Vec<LiveSurface>, String> {
    let mut out = Vec::new();
    for s in &plan.surfaces {
        match LiveSurface::open(s, timing).await {
            Ok(l) => out.push(l),
            Err(e) => {
                close_all(out, timing).await;
                return Err(e);
            }
        }
    }
    Ok(out)
}

async fn close_all(surfaces: Vec<LiveSurface>, timing: Timing) {
    for s in surfaces {
        s.close(timing).await;
    }
}

/// Runs one call on every surface and compares. `Err` holds the failure text.
async fn call_all(
    plan: &Plan,
    surfaces: &mut [LiveSurface],
    name: &str,
    arguments: &Value,
) -> Result<Vec<String>, CallFailure> {
    let mut results = Vec::new();
    for s in surfaces.iter_mut() {
        let c = s.call(name, arguments).await?;
        results.push((s.label.clone(), c));
    }
    judge(plan, name, arguments, results)
}

/// As [`call_all`] without evidence, with the surfaces called at the same time: each surface
/// is its own process with its own state, so a call of a tool that does not change state cannot
/// race itself.
async fn call_all_concurrently(
    plan: &Plan,
    surfaces: &mut Vec<LiveSurface>,
    name: &str,
    arguments: &Value,
) -> Result<(), CallFailure> {
    let mut set = tokio::task::JoinSet::new();
    for (i, mut s) in std::mem::take(surfaces).into_iter().enumerate() {
        let (name, arguments) = (name.to_string(), arguments.clone());
        set.spawn(async move {
            let r = s.call(&name, &arguments).await;
            (i, s, r)
        });
    }
    let mut back: Vec<(usize, LiveSurface, Result<Called, CallFailure>)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(x) => back.push(x),
            Err(e) => {
                return Err(CallFailure::transport(format!(
                    "internal error: a surface's task for the call {} failed: {e}",
                    call_text(name, arguments)
                )))
            }
        }
    }
    back.sort_by_key(|(i, _, _)| *i);
    let mut results = Vec::new();
    let mut failure = None;
    for (_, s, r) in back {
        match r {
            Ok(c) => results.push((s.label.clone(), c)),
            Err(e) => failure = failure.or(Some(e)),
        }
        surfaces.push(s);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    match compare(plan, &|| call_text(name, arguments), &results) {
        None => Ok(()),
        Some(m) => Err(CallFailure::Mismatch(m)),
    }
}

/// Compares one call's results; `Ok` holds evidence lines, `Err` the failure text.
fn judge(
    plan: &Plan,
    name: &str,
    arguments: &Value,
    results: Vec<(String, Called)>,
) -> Result<Vec<String>, CallFailure> {
    match compare(plan, &|| call_text(name, arguments), &results) {
        None => Ok(results
            .iter()
            .map(|(label, c)| {
                format!(
                    "{label}: {}",
                    crate::base::util::clip(&c.outcome.to_string(), 240)
                )
            })
            .collect()),
        Some(m) => Err(CallFailure::Mismatch(m)),
    }
}

/// The requirement of a scenario's equivalence case.
fn scenario_requirement(scenario: &Scenario) -> String {
    format!(
        "Every tool call of scenario {} gives the same outcome on every surface.",
        scenario.id
    )
}

/// The requirement of a tool's generated equivalence case.
fn generated_requirement(tool: &str) -> String {
    format!(
        "Generated calls of {tool} (valid, and invalid by mutation) give the same outcome on every surface."
    )
}

fn result(
    id: String,
    requirement: String,
    verdict: Verdict,
    message: String,
    evidence: Vec<String>,
    ms: u64,
) -> CaseResult {
    // The check of a case is its id before `@` (`equivalence.generated.read_file`), so case ids
    // stay `check@binding#revision`; the self-test counts it for its family.
    CaseResult {
        check: id.split('@').next().unwrap_or(&id).to_string(),
        id,
        kind: CaseKind::Active,
        binding: BINDING.into(),
        revision: REVISION.into(),
        spec: SPEC.into(),
        level: Level::Must.as_str().into(),
        quote: QUOTE.into(),
        requirement,
        verdict,
        message,
        evidence,
        duration_ms: ms,
        attempts: 1,
        expected: None,
    }
}

/// The case id of a scenario's equivalence case.
pub fn scenario_case_id(scenario: &Scenario) -> String {
    format!("equivalence.scenario.{}@{BINDING}#{REVISION}", scenario.id)
}

/// The case id of a tool's generated equivalence case.
pub fn generated_case_id(tool: &str) -> String {
    format!("equivalence.generated.{tool}@{BINDING}#{REVISION}")
}

/// The tool calls of a scenario, in order.
pub fn scenario_calls(s: &Scenario) -> Vec<(String, Value)> {
    s.steps
        .iter()
        .filter_map(|st| match &st.action {
            Action::Call {
                name, arguments, ..
            } => Some((name.clone(), arguments.clone())),
            _ => None,
        })
        .collect()
}

/// Runs one scenario's calls through every surface.
pub async fn run_scenario(plan: &Plan, scenario: &Scenario, timing: Timing) -> CaseResult {
    let t0 = Instant::now();
    let id = scenario_case_id(scenario);
    let req = scenario_requirement(scenario);
    let done = |v: Verdict, m: String, ev: Vec<String>| {
        result(
            id.clone(),
            req.clone(),
            v,
            m,
            ev,
            t0.elapsed().as_millis() as u64,
        )
    };
    if scenario.reference_only && !plan.reference {
        return done(
            Verdict::Skip,
            "the scenario runs only against the bundled reference (targets: [reference])".into(),
            Vec::new(),
        );
    }
    // What the case is waiting for, for the message of a case that runs past its deadline.
    let waiting = std::sync::Mutex::new("the surfaces to start".to_string());
    let wait_for = |what: String| {
        if let Ok(mut w) = waiting.lock() {
            *w = what;
        }
    };
    // The evidence so far, kept for the message of a case that runs past its deadline.
    let so_far = std::sync::Mutex::new(Vec::<String>::new());
    let body = async {
        let mut surfaces = match open_all(plan, timing).await {
            Ok(s) => s,
            Err(e) => return (Verdict::NotRun, e, Vec::new()),
        };
        let mut ev = Vec::new();
        let mut out = (Verdict::Pass, String::new(), Vec::new());
        for (i, (name, args)) in scenario_calls(scenario).iter().enumerate() {
            wait_for(format!("call {i} ({})", call_text(name, args)));
            match call_all(plan, &mut surfaces, name, args).await {
                Ok(lines) => {
                    if let Ok(mut kept) = so_far.lock() {
                        kept.extend(lines.iter().cloned());
                    }
                    ev.extend(lines)
                }
                Err(f) => {
                    ev.push(format!("call {i}: {}", call_text(name, args)));
                    out = (f.verdict(), f.text().to_string(), ev.clone());
                    break;
                }
            }
        }
        wait_for("the surfaces to shut down".into());
        close_all(surfaces, timing).await;
        if out.0 == Verdict::Pass {
            out.2 = ev;
        }
        out
    };
    let ran = tokio::time::timeout(timing.case, body).await;
    let waited = waiting.lock().map(|w| w.clone()).unwrap_or_default();
    match ran {
        Ok((v, m, ev)) => done(v, m, ev),
        Err(_) => done(
            Verdict::Timeout,
            format!(
                "the case ran past its {} ms deadline while waiting for {waited}",
                timing.case.as_millis()
            ),
            so_far.lock().map(|k| k.clone()).unwrap_or_default(),
        ),
    }
}

/// Lists the tools through the first MCP surface (or says why it cannot).
pub async fn discover_tools(plan: &Plan, timing: Timing) -> Result<Vec<Value>, String> {
    let Some(spec) = plan
        .surfaces
        .iter()
        .find(|s| matches!(s, SurfaceSpec::Mcp { .. }))
    else {
        return Err("generated equivalence reads each tool's inputSchema from MCP tools/list; the target has no MCP surface".into());
    };
    let mut s = LiveSurface::open(spec, timing).await?;
    let tools = s.list_tools().await;
    s.close(timing).await;
    tools
}

/// Runs generated equivalence for one tool: `plan.cases` calls from its `inputSchema`, through
/// every surface; shrinks a mismatch and prints it as a scenario step.
pub async fn run_generated(plan: Arc<Plan>, tool: Value, timing: Timing) -> CaseResult {
    let t0 = Instant::now();
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let id = generated_case_id(&name);
    let req = generated_requirement(&name);
    let schema = tool
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    if let Err(e) = crate::profiles::equivalence::gen::check_size(&schema) {
        return result(
            id,
            req,
            Verdict::NotRun,
            format!("no calls of {name} were generated: {e}"),
            Vec::new(),
            t0.elapsed().as_millis() as u64,
        );
    }
    let stateful = plan.stateful.contains(&name);
    let config = crate::profiles::equivalence::gen::GenConfig {
        seed: plan.seed,
        cases: plan.cases,
        ..crate::profiles::equivalence::gen::GenConfig::default()
    };
    // proptest's runner is synchronous. It runs on a thread of its own with a single-threaded
    // runtime that owns this case's peers, and drives them with that runtime's `block_on` on
    // the same thread: no runtime is nested, and no call hops between threads.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (plan2, tool_name) = (plan.clone(), name.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("parity-gen-{name}"))
        .spawn(move || {
            let _ = tx.send(generate_on_own_runtime(
                &plan2, &tool_name, &schema, stateful, &config, timing,
            ));
        });
    let report = match spawned {
        Ok(_) => rx
            .await
            .unwrap_or_else(|_| Err("the generator thread ended without a report".into())),
        Err(e) => Err(format!("failed to start the generator thread: {e}")),
    };
    let ms = t0.elapsed().as_millis() as u64;
    let seed_line = format!(
        "seed {} · {} case(s) · {}",
        plan.seed,
        plan.cases,
        if stateful {
            "fresh peers per case (stateful)"
        } else {
            "shared peers"
        }
    );
    let (r, broken) = match report {
        Err(e) => return result(id, req, Verdict::NotRun, e, vec![seed_line], ms),
        Ok(x) => x,
    };
    let mut ev = vec![seed_line];
    let broken_line = broken.as_ref().map(|(f, g)| {
        format!(
            "the call a surface did not answer: {}: {}",
            crate::profiles::equivalence::gen::scenario_step(&name, g),
            f.text()
        )
    });
    match (r.failure, broken, r.aborted) {
        (Some(f), _, _) => {
            let step = crate::profiles::equivalence::gen::scenario_step(&name, &f.minimal);
            ev.push(format!(
                "minimal call (paste into a scenario's steps): {step}"
            ));
            if let Some(o) = &f.original {
                ev.push(format!(
                    "first failing call before shrinking: {}",
                    crate::profiles::equivalence::gen::scenario_step(&name, o)
                ));
            }
            ev.extend(broken_line);
            result(
                id,
                req,
                Verdict::Fail,
                format!(
                    "a generated call of {name} differs between surfaces (shrunk; rerun with --seed {}): {}",
                    plan.seed, f.message
                ),
                ev,
                ms,
            )
        }
        (None, Some((f, _)), _) => {
            let verdict = f.verdict();
            ev.extend(broken_line);
            result(
                id,
                req,
                verdict,
                format!(
                    "generated calls of {name} could not be compared (rerun with --seed {}): {}",
                    plan.seed,
                    f.text()
                ),
                ev,
                ms,
            )
        }
        (None, None, Some(why)) => result(
            id,
            req,
            Verdict::NotRun,
            format!(
                "the generator gave up on {name}'s inputSchema after {} call(s) (rerun with --seed {}): {why}",
                r.cases_run, plan.seed
            ),
            ev,
            ms,
        ),
        (None, None, None) => {
            ev.push(format!("{} generated call(s) agreed", r.cases_run));
            result(id, req, Verdict::Pass, String::new(), ev, ms)
        }
    }
}

/// What the generator thread gives back: proptest's report, and the first call a surface did
/// not answer (with why), if any.
type GeneratedRun = (
    crate::profiles::equivalence::gen::GenReport,
    Option<(CallFailure, crate::profiles::equivalence::gen::Generated)>,
);

/// Runs the generator for one tool on the calling thread, with a single-threaded runtime of its
/// own that starts, drives and stops the peers.
///
/// Returns the generator's report and, when a surface stopped answering, the first call it did
/// not answer.
///
/// Errors: the runtime could not be built, or the surfaces could not be opened.
fn generate_on_own_runtime(
    plan: &Plan,
    tool: &str,
    schema: &Value,
    stateful: bool,
    config: &crate::profiles::equivalence::gen::GenConfig,
    timing: Timing,
) -> Result<GeneratedRun, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("failed to start the generator's runtime: {e}"))?;
    let shared = if stateful {
        None
    } else {
        Some(std::cell::RefCell::new(
            rt.block_on(open_all(plan, timing))?,
        ))
    };
    let strategy = crate::profiles::equivalence::gen::arguments(schema);
    // A surface that stops answering is not a mismatch: the first such call is kept, every
    // later case passes at once (nothing is shrunk), and the case reports it.
    let broken: std::cell::RefCell<
        Option<(CallFailure, crate::profiles::equivalence::gen::Generated)>,
    > = std::cell::RefCell::new(None);
    let report = crate::profiles::equivalence::gen::run(config, strategy, |g| {
        if broken.borrow().is_some() {
            return Ok(());
        }
        let outcome = rt.block_on(async {
            match &shared {
                Some(cell) => {
                    let mut surfaces = std::mem::take(&mut *cell.borrow_mut());
                    let r = call_all_concurrently(plan, &mut surfaces, tool, &g.arguments).await;
                    *cell.borrow_mut() = surfaces;
                    r
                }
                None => {
                    let mut fresh = open_all(plan, timing).await.map_err(|e| {
                        CallFailure::transport(format!(
                            "starting fresh surfaces for the call {} (stateful): {e}",
                            call_text(tool, &g.arguments)
                        ))
                    })?;
                    let r = call_all(plan, &mut fresh, tool, &g.arguments)
                        .await
                        .map(|_| ());
                    close_all(fresh, timing).await;
                    r
                }
            }
        });
        match outcome {
            Ok(()) => Ok(()),
            Err(CallFailure::Mismatch(m)) => Err(m),
            Err(transport) => {
                *broken.borrow_mut() = Some((transport, g.clone()));
                Ok(())
            }
        }
    });
    if let Some(cell) = shared {
        rt.block_on(close_all(cell.into_inner(), timing));
    }
    Ok((report, broken.into_inner()))
}

/// A finding-shaped summary for callers that need one (selftest).
pub fn finding_of(r: &CaseResult) -> Finding {
    match r.verdict {
        Verdict::Pass => Finding::pass(r.evidence.clone()),
        _ => Finding::violated(r.message.clone(), r.evidence.clone()),
    }
}

/// Runs the equivalence profile: one case per scenario with tool calls, then one generated case
/// per tool (when `plan.cases > 0`), at most `jobs` at a time, filtered by `selected` on case ids,
/// each case through `control` (retries, fail-fast, progress).
/// Fewer than two surfaces leaves nothing to compare: no cases, and a note says why.
pub async fn run(
    plan: Plan,
    scenarios: &[Arc<Scenario>],
    timing: Timing,
    (jobs, control): (usize, Arc<crate::engine::run::RunControl>),
    selected: &(dyn Fn(&str) -> bool + Sync),
) -> (Vec<CaseResult>, Vec<String>) {
    let mut notes = Vec::new();
    if plan.surfaces.len() < 2 {
        notes.push(format!(
            "equivalence needs at least two surfaces; the target has {}",
            plan.surfaces.len()
        ));
        return (Vec::new(), notes);
    }
    notes.push(format!(
        "equivalence surfaces: {}; generated: seed {}, {} case(s) per tool",
        plan.surfaces
            .iter()
            .map(SurfaceSpec::label)
            .collect::<Vec<_>>()
            .join(", "),
        plan.seed,
        plan.cases
    ));
    let plan = Arc::new(plan);
    let sem = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let mut handles = Vec::new();
    for s in scenarios {
        if scenario_calls(s).is_empty() || !selected(&scenario_case_id(s)) {
            continue;
        }
        let (plan, s, sem, control) = (plan.clone(), s.clone(), sem.clone(), control.clone());
        control.planned(1);
        handles.push(tokio::spawn(async move {
            let _permit = sem.acquire().await;
            let id = scenario_case_id(&s);
            let req = scenario_requirement(&s);
            let not_run = |why| result(id, req, Verdict::NotRun, why, Vec::new(), 0);
            control
                .run_case(|| run_scenario(&plan, &s, timing), not_run)
                .await
        }));
    }
    if plan.cases > 0 {
        match discover_tools(&plan, timing).await {
            Err(e) => notes.push(format!("generated equivalence did not run: {e}")),
            Ok(tools) => {
                // Equivalence compares surfaces the user set up over one backend of their own, so
                // its calls are theirs to declare: every tool, or those `equivalence.tools`
                // names; `never` (`[tools] never`) excludes a tool either way.
                for tool in tools {
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
                    let callable = (plan.tools.is_empty() || plan.tools.iter().any(|t| t == name))
                        && plan.calls.allows(name);
                    if !callable {
                        continue;
                    }
                    if !selected(&generated_case_id(name)) {
                        continue;
                    }
                    let (plan, sem, control) = (plan.clone(), sem.clone(), control.clone());
                    let id = generated_case_id(name);
                    control.planned(1);
                    handles.push(tokio::spawn(async move {
                        let _permit = sem.acquire().await;
                        let req = generated_requirement(
                            tool.get("name").and_then(Value::as_str).unwrap_or(""),
                        );
                        let not_run = |why| result(id, req, Verdict::NotRun, why, Vec::new(), 0);
                        control
                            .run_case(
                                || run_generated(plan.clone(), tool.clone(), timing),
                                not_run,
                            )
                            .await
                    }));
                }
            }
        }
    }
    let mut out = Vec::new();
    for h in handles {
        match h.await {
            Ok(r) => out.push(r),
            Err(e) => notes.push(format!(
                "internal error: an equivalence case's task failed: {e}"
            )),
        }
    }
    (out, notes)
}
