//! The generated-equivalence part: calls generated from `inputSchema` per second, and where
//! the time of one goes (`parity bench --only generated`).

use super::*;

/// The generated-equivalence part's figures: `run_generated` timed as a whole, plus a
/// breakdown from a replica of its inner loop with each step timed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeneratedBench {
    /// The runtime it ran on: `multi-thread` (as `parity run`) or `current-thread` (as the
    /// rest of the bench).
    pub runtime: &'static str,
    /// The tool whose `inputSchema` the calls come from.
    pub tool: String,
    /// The surfaces, in order (the first is the baseline of the comparison).
    pub surfaces: Vec<String>,
    /// Generated calls (each through every surface, then compared).
    pub calls: u32,
    /// Generator seed.
    pub seed: u64,
    /// Wall time of [`crate::profiles::equivalence::run_generated`], opening and closing the surfaces
    /// included, in seconds.
    pub seconds: f64,
    /// `calls` ÷ `seconds`.
    pub calls_per_s: f64,
    /// `seconds` ÷ `calls`, in µs.
    pub per_call_us: f64,
    /// Where the time goes (`None` when the replica could not run; the error says why).
    pub breakdown: Option<GeneratedBreakdown>,
}

/// Where one generated call's time goes, from a replica of `run_generated`'s loop (same
/// blocking thread, same `Handle::block_on` per case, same calls, evidence and comparison),
/// with each step timed. Per-call figures are in µs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeneratedBreakdown {
    /// Opening both surfaces (spawn, handshakes), in ms.
    pub open_ms: f64,
    /// Closing both surfaces, in ms.
    pub close_ms: f64,
    /// `gen::run` with a test that does nothing: generation and proptest's runner, per case.
    pub generation_us: f64,
    /// Generated calls that were valid against the schema (the rest are invalid by
    /// mutation, and the reference refuses them before the tool runs).
    pub valid_calls: u32,
    /// The MCP `tools/call` ([`crate::profiles::equivalence::LiveSurface::call`], outcome included).
    pub mcp_call: Latency,
    /// The MCP call's mean for valid arguments, and for invalid ones (µs).
    pub mcp_call_valid_invalid_us: (f64, f64),
    /// The ACP tool call (likewise).
    pub acp_call: Latency,
    /// The ACP call's mean for valid arguments, and for invalid ones (µs).
    pub acp_call_valid_invalid_us: (f64, f64),
    /// `status` through the MCP surface from the same blocking thread (second pass): the same
    /// round trip without `read_file`'s work.
    pub mcp_status: Latency,
    /// `status` through the ACP surface, likewise.
    pub acp_status: Latency,
    /// The reference's own `Dispatcher::call` of each generated call, in this process on a
    /// single-threaded runtime (as the reference serves; second pass): the tool's work,
    /// including its hop to the blocking pool for valid arguments.
    pub dispatcher_call: Latency,
    /// The dispatcher call's mean for valid arguments, and for invalid ones (µs).
    pub dispatcher_valid_invalid_us: (f64, f64),
    /// The evidence lines and [`crate::profiles::equivalence::compare`], per case (mean).
    pub compare_us: f64,
    /// The whole test closure per case, `Handle::block_on` included (mean).
    pub closure_us: f64,
    /// The replica's loop per case (mean): comparable with [`GeneratedBench::per_call_us`]
    /// without the open and close.
    pub loop_per_call_us: f64,
    /// The replica's loop per case with both surfaces' calls made at once (`tokio::join!`;
    /// third pass, as `run_generated` calls them).
    pub joined_per_call_us: Option<f64>,
    /// A `cat` round trip via [`Peer`] in a `Handle::block_on` from the same blocking thread
    /// (second pass): the floor as the generated loop sees it.
    pub floor_in_loop: Latency,
}

/// The generated-equivalence plan against the reference: MCP at [`GENERATED_REVISION`] and
/// ACP (tool method `_parity/tool`), both this binary's `reference`, with the reference
/// target's equivalence settings, [`GENERATED_TOOL`] only, not stateful.
pub(super) fn generated_plan(calls: u32, seed: u64) -> Result<Plan, String> {
    let target = crate::engine::target::reference();
    let (Some(m), Some(a)) = (&target.mcp, &target.acp) else {
        return Err("the reference target has no MCP or no ACP surface".into());
    };
    let surfaces = vec![
        SurfaceSpec::Mcp {
            spec: PeerSpec::from_command_line(&m.command)?,
            revision: GENERATED_REVISION.into(),
            rules: m.rules.clone(),
            http: None,
        },
        SurfaceSpec::Acp {
            spec: PeerSpec::from_command_line(&a.command)?,
            method: a.tool_method_or_default(),
            params: a.params.clone(),
            rules: a.rules.clone(),
        },
    ];
    Ok(Plan {
        surfaces,
        volatile: target.equivalence.volatile.clone(),
        compare_messages: target.equivalence.compare_messages,
        stateful: Vec::new(),
        tools: vec![GENERATED_TOOL.into()],
        calls: crate::engine::check::CallPolicy::default(),
        cases: calls,
        seed,
        reference: true,
    })
}

/// Runs [`generated`] on a fresh multi-threaded runtime on its own thread: the runtime
/// `parity run` gives generated equivalence (the bench's own runtime is single-threaded).
pub(super) async fn generated_multi_thread(
    calls: u32,
    seed: u64,
) -> Result<GeneratedBench, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("bench-generated".into())
        .spawn(move || {
            let out = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt.block_on(generated(calls, seed, "multi-thread")),
                Err(e) => Err(format!("failed to start a multi-threaded runtime: {e}")),
            };
            let _ = tx.send(out);
        })
        .map_err(|e| format!("failed to start a thread: {e}"))?;
    rx.await
        .map_err(|_| "the generated-equivalence thread ended without figures".to_string())?
}

/// Generated equivalence of [`GENERATED_TOOL`] through MCP and ACP against the reference, on
/// the current runtime: [`crate::profiles::equivalence::run_generated`] timed, then the breakdown.
pub(super) async fn generated(
    calls: u32,
    seed: u64,
    runtime: &'static str,
) -> Result<GeneratedBench, String> {
    let timing = Timing::scaled(1.0);
    let plan = generated_plan(calls, seed)?;
    let tool = crate::profiles::equivalence::discover_tools(&plan, timing)
        .await?
        .into_iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(GENERATED_TOOL))
        .ok_or_else(|| format!("the reference's tools/list has no {GENERATED_TOOL}"))?;
    let t0 = Instant::now();
    let case =
        crate::profiles::equivalence::run_generated(Arc::new(plan.clone()), tool.clone(), timing)
            .await;
    let seconds = t0.elapsed().as_secs_f64();
    if case.verdict != Verdict::Pass {
        return Err(format!(
            "{}: {}: {}",
            case.id,
            case.verdict.as_str(),
            crate::base::util::clip(&case.message, 400)
        ));
    }
    let breakdown = generated_breakdown(&plan, &tool, timing)
        .await
        .map_err(|e| eprintln!("error: generated equivalence breakdown ({runtime}): {e}"))
        .ok();
    Ok(GeneratedBench {
        runtime,
        tool: GENERATED_TOOL.into(),
        surfaces: plan.surfaces.iter().map(SurfaceSpec::label).collect(),
        calls,
        seed,
        seconds,
        calls_per_s: f64::from(calls) / seconds,
        per_call_us: seconds * 1e6 / f64::from(calls.max(1)),
        breakdown,
    })
}

/// Samples the breakdown's test closure collects (`valid` says which cases were valid).
#[derive(Default)]
pub(super) struct GenSamples {
    valid: Vec<bool>,
    mcp: Vec<Duration>,
    acp: Vec<Duration>,
    compare: Duration,
    closure: Duration,
    floor: Vec<Duration>,
    mcp_status: Vec<Duration>,
    acp_status: Vec<Duration>,
    dispatcher: Vec<Duration>,
    dispatcher_valid: Vec<bool>,
}

/// Means (µs) of `samples` where `valid` is true, and where it is false (0 when none).
pub(super) fn split_means(samples: &[Duration], valid: &[bool]) -> (f64, f64) {
    let mean = |want: bool| {
        let picked: Vec<f64> = samples
            .iter()
            .zip(valid)
            .filter(|(_, v)| **v == want)
            .map(|(d, _)| d.as_secs_f64() * 1e6)
            .collect();
        if picked.is_empty() {
            0.0
        } else {
            picked.iter().sum::<f64>() / picked.len() as f64
        }
    };
    (mean(true), mean(false))
}

/// `status` through a live surface; its time, or why it failed.
pub(super) async fn status_call(surface: &mut LiveSurface) -> Result<Duration, String> {
    let t = Instant::now();
    let c = surface.call("status", &json!({})).await?;
    let dt = t.elapsed();
    if c.outcome.get("outcome").and_then(Value::as_str) == Some("ok") {
        Ok(dt)
    } else {
        Err(format!("{}: status: {}", surface.label, c.outcome))
    }
}

/// A sequential replica of generated equivalence's loop for `plan` (shared peers; one surface
/// after the other, from a blocking thread), each step timed; then a
/// second pass over the same generated calls for reference points: a `cat` round trip and a
/// `status` call per surface from the same thread, and the reference's dispatcher in process.
pub(super) async fn generated_breakdown(
    plan: &Plan,
    tool: &Value,
    timing: Timing,
) -> Result<GeneratedBreakdown, String> {
    let schema = tool
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    let config = crate::profiles::equivalence::gen::GenConfig {
        seed: plan.seed,
        cases: plan.cases,
        ..crate::profiles::equivalence::gen::GenConfig::default()
    };
    let cases = f64::from(plan.cases.max(1));

    // Generation alone, on a blocking thread as in run_generated.
    let gen_schema = schema.clone();
    let generation = tokio::task::spawn_blocking(move || {
        let t0 = Instant::now();
        let report = crate::profiles::equivalence::gen::run(
            &config,
            crate::profiles::equivalence::gen::arguments(&gen_schema),
            |_| Ok(()),
        );
        (t0.elapsed(), report.cases_run)
    })
    .await
    .map_err(|e| format!("the generation task failed: {e}"))?;

    let t0 = Instant::now();
    let mut surfaces = Vec::new();
    for spec in &plan.surfaces {
        match LiveSurface::open(spec, timing).await {
            Ok(s) => surfaces.push(s),
            Err(e) => {
                for s in surfaces {
                    s.close(timing).await;
                }
                return Err(e);
            }
        }
    }
    let open = t0.elapsed();
    let cat = match Rig::echo(&PeerSpec::new("cat", Vec::new())) {
        Ok(r) => r,
        Err(e) => {
            for s in surfaces {
                s.close(timing).await;
            }
            return Err(e);
        }
    };
    let handle = tokio::runtime::Handle::current();
    let plan2 = plan.clone();
    let (root, root_guard) = crate::cli::reference_root(None).map_err(|e| e.to_string())?;
    let dispatcher = parity_reference::dispatcher::Dispatcher::new(
        parity_reference::dispatcher::DispatcherConfig::new(root),
    );
    let joined = tokio::task::spawn_blocking(move || {
        // The reference serves on a single-threaded runtime; its dispatcher runs on one here.
        let local = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("failed to start a runtime: {e}"));
        let state = std::cell::RefCell::new((surfaces, cat, GenSamples::default()));
        // Pass 1: the replica, each step timed and nothing else in the loop.
        let t0 = Instant::now();
        let mut report = crate::profiles::equivalence::gen::run(
            &config,
            crate::profiles::equivalence::gen::arguments(&schema),
            |g| {
                let mut st = state.borrow_mut();
                let (surfaces, _, samples) = &mut *st;
                samples.valid.push(g.valid);
                let tc = Instant::now();
                handle.block_on(async {
                    let mut results = Vec::with_capacity(surfaces.len());
                    let mut ev = Vec::with_capacity(surfaces.len());
                    let mut compare_time = Duration::ZERO;
                    for (i, s) in surfaces.iter_mut().enumerate() {
                        let t = Instant::now();
                        let c = s.call(GENERATED_TOOL, &g.arguments).await?;
                        let dt = t.elapsed();
                        let into = if i == 0 {
                            &mut samples.mcp
                        } else {
                            &mut samples.acp
                        };
                        into.push(dt);
                        let t = Instant::now();
                        ev.push(format!(
                            "{}: {}",
                            s.label,
                            crate::base::util::clip(&c.outcome.to_string(), 240)
                        ));
                        results.push((s.label.clone(), c));
                        compare_time += t.elapsed();
                    }
                    let t = Instant::now();
                    let text = format!(
                        "{GENERATED_TOOL} {}",
                        crate::base::util::clip(&g.arguments.to_string(), 200)
                    );
                    let mismatch =
                        crate::profiles::equivalence::compare(&plan2, &|| text.clone(), &results);
                    drop(ev);
                    samples.compare += compare_time + t.elapsed();
                    mismatch.map_or(Ok(()), Err)
                })?;
                samples.closure += tc.elapsed();
                Ok(())
            },
        );
        let looped = t0.elapsed();
        // Pass 2: the same generated calls again, for the reference points only.
        if report.failure.is_none() {
            report = crate::profiles::equivalence::gen::run(
                &config,
                crate::profiles::equivalence::gen::arguments(&schema),
                |g| {
                    let local = local.as_ref().map_err(Clone::clone)?;
                    let mut st = state.borrow_mut();
                    let (surfaces, cat, samples) = &mut *st;
                    handle.block_on(async {
                        samples.floor.push(cat.round().await?);
                        for (i, s) in surfaces.iter_mut().enumerate() {
                            let dt = status_call(s).await?;
                            let into = if i == 0 {
                                &mut samples.mcp_status
                            } else {
                                &mut samples.acp_status
                            };
                            into.push(dt);
                        }
                        Ok::<(), String>(())
                    })?;
                    let call = parity_reference::dispatcher::ToolCall::new(
                        GENERATED_TOOL,
                        g.arguments.clone(),
                    );
                    let t = Instant::now();
                    drop(local.block_on(dispatcher.call(call)));
                    samples.dispatcher.push(t.elapsed());
                    samples.dispatcher_valid.push(g.valid);
                    Ok(())
                },
            );
        }
        // Pass 3: the replica with both surfaces' calls made at once, as run_generated does.
        let mut joined_loop = None;
        if report.failure.is_none() {
            let t0 = Instant::now();
            report = crate::profiles::equivalence::gen::run(
                &config,
                crate::profiles::equivalence::gen::arguments(&schema),
                |g| {
                    let mut st = state.borrow_mut();
                    let (surfaces, _, _) = &mut *st;
                    let [a, b] = surfaces.as_mut_slice() else {
                        return Err("pass 3 needs exactly two surfaces".into());
                    };
                    handle.block_on(async {
                        let (ra, rb) = tokio::join!(
                            a.call(GENERATED_TOOL, &g.arguments),
                            b.call(GENERATED_TOOL, &g.arguments)
                        );
                        let results = vec![(a.label.clone(), ra?), (b.label.clone(), rb?)];
                        let ev: Vec<String> = results
                            .iter()
                            .map(|(l, c)| {
                                format!(
                                    "{l}: {}",
                                    crate::base::util::clip(&c.outcome.to_string(), 240)
                                )
                            })
                            .collect();
                        let text = format!(
                            "{GENERATED_TOOL} {}",
                            crate::base::util::clip(&g.arguments.to_string(), 200)
                        );
                        let mismatch = crate::profiles::equivalence::compare(
                            &plan2,
                            &|| text.clone(),
                            &results,
                        );
                        drop(ev);
                        mismatch.map_or(Ok(()), Err)
                    })
                },
            );
            joined_loop = Some(t0.elapsed());
        }
        let (surfaces, cat, samples) = state.into_inner();
        (surfaces, cat, samples, report, looped, joined_loop)
    })
    .await;
    let (surfaces, mut cat, samples, report, looped, joined_loop) =
        joined.map_err(|e| format!("the replica's task failed: {e}"))?;
    let t0 = Instant::now();
    for s in surfaces {
        s.close(timing).await;
    }
    let close = t0.elapsed();
    let _ = cat.peer().shutdown(ShutdownGrace::default()).await;
    drop(root_guard);
    if let Some(f) = report.failure {
        return Err(format!("a replica call failed: {}", f.message));
    }
    let summary = |s: &[Duration]| Latency::of(s).ok_or_else(|| "no samples".to_string());
    Ok(GeneratedBreakdown {
        open_ms: open.as_secs_f64() * 1e3,
        close_ms: close.as_secs_f64() * 1e3,
        generation_us: generation.0.as_secs_f64() * 1e6 / f64::from(generation.1.max(1)),
        valid_calls: samples.valid.iter().filter(|v| **v).count() as u32,
        mcp_call: summary(&samples.mcp)?,
        mcp_call_valid_invalid_us: split_means(&samples.mcp, &samples.valid),
        acp_call: summary(&samples.acp)?,
        acp_call_valid_invalid_us: split_means(&samples.acp, &samples.valid),
        mcp_status: summary(&samples.mcp_status)?,
        acp_status: summary(&samples.acp_status)?,
        dispatcher_call: summary(&samples.dispatcher)?,
        dispatcher_valid_invalid_us: split_means(&samples.dispatcher, &samples.dispatcher_valid),
        compare_us: samples.compare.as_secs_f64() * 1e6 / cases,
        closure_us: samples.closure.as_secs_f64() * 1e6 / cases,
        loop_per_call_us: looped.as_secs_f64() * 1e6 / cases,
        joined_per_call_us: joined_loop.map(|d| d.as_secs_f64() * 1e6 / cases),
        floor_in_loop: summary(&samples.floor)?,
    })
}
