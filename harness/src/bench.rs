//! `parity bench`: round trips, run time and memory, each against a baseline measured in the
//! same run (see `docs/performance.md`).
//!
//! Parts, in the order they run:
//! 1. **big line** (in a child process `parity bench --only big-line`, so the process-wide
//!    peak RSS it reports is not raised by the other parts): a peer writes a 1 GiB line, a
//!    newline and a small JSON line; [`Peer::recv`] reads until the small line arrives, and
//!    `VmHWM`/`VmRSS` of `/proc/self/status` give the peak. Target: ≤ 64 MiB. The same is
//!    measured for a line one byte under the reader's 16 MiB cap (informational: the largest
//!    line kept whole).
//! 2. **floor**: a minimal JSON line through a pipe to `cat` and back, with parity's own
//!    [`Peer`] (`spawn`, `send_raw`, `recv`), so the I/O path is the one every check uses.
//! 3. **tokio-stdio echo** (informational): the same line through this binary in echo mode
//!    (`parity bench --only echo`), which reads stdin and writes stdout with tokio's stdio, as
//!    the reference server does. It separates the server's I/O cost from its MCP work.
//! 4. **tools/call**: `tools/call status` with the [`Client`] driver against `parity reference
//!    mcp` after the handshake. Target: ≤ 1.2 × floor + 20 µs.
//! 5. **generated equivalence**: [`crate::equivalence::run_generated`] for `read_file` with
//!    `--calls` generated calls (default 2000, seed `--seed`) through two surfaces of the
//!    reference, MCP stdio at 2025-11-25 (`parity reference mcp`) and ACP with `_parity/tool`
//!    (`parity reference acp`), timed from start to end (opening and closing the surfaces
//!    included). A call is one generated argument set run through both surfaces and compared.
//!    It runs first on a fresh multi-threaded runtime (as `parity run` has; the figure judged:
//!    ≥ 5,000 calls/s), then on the bench's single-threaded runtime (informational). Each is
//!    compared with two floor round trips per call, and followed by a breakdown: a sequential
//!    replica of the loop (one surface after the other, driven from a blocking thread, as
//!    `run_generated` first did) with each step timed, a second pass over the same calls with
//!    reference points (`cat` and `status` round trips from the same thread, the reference's
//!    dispatcher in process), and a third pass calling both surfaces at once (as
//!    `run_generated` now does, on a runtime of its own).
//! 6. **in-memory breakdown** (informational): the same round trips over `tokio::io::duplex`
//!    with the far end as a task in this process: an echo (the [`Peer`] channel and task hops),
//!    a canned responder (adds the [`Client`] driver's JSON work) and the reference's own
//!    `serve` (adds the reference's MCP work). No process, pipe or stdio is involved.
//! 7. **profile**: `parity run --profile mcp` (both eras, default options) as a child process with stdout to
//!    null, and [`run_mcp`] in this process (the first run detects eras; later runs hit the
//!    per-process era cache). Target: ≤ 0.5 s.
//!
//! Parts 2–4 run interleaved (all three peers alive, taking turns in blocks of 100 round
//! trips), and so do the three of part 6, so that load from elsewhere on the machine moves a
//! figure and its baseline together. Part 5 is not interleaved (it is one `run_generated`);
//! it runs right after parts 2–4, whose floor is its baseline. Each latency figure also reports the CPU time the calling
//! thread (the one running the driver) spent per round trip.
//!
//! Nothing here asserts on time: the figures are printed (and written with `--json`). The exit
//! code is 0 whatever the figures are, and 3 when a part could not run.

use crate::check::{Timing, Verdict};
use crate::cli::{reference_target, EXIT_COULD_NOT_RUN};
use crate::equivalence::{LiveSurface, Plan, SurfaceSpec};
use crate::mcp::{Client, Era};
use crate::peer::{Peer, PeerSpec, Recv, ShutdownGrace};
use crate::run::{run_mcp, EraSel, RunOptions};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};

/// The line the floor and echo measurements send (a minimal JSON-RPC notification).
pub const SMALL_LINE: &str = r#"{"jsonrpc":"2.0","method":"x"}"#;
/// Size of the big line: 1 GiB.
pub const BIG_LINE_BYTES: u64 = 1 << 30;
/// Target for the tools/call round trip: at most this factor of the floor …
pub const CALL_TARGET_FACTOR: f64 = 1.2;
/// … plus this many microseconds.
pub const CALL_TARGET_SLACK_US: f64 = 20.0;
/// Target for the MCP profile's wall time, in milliseconds.
pub const PROFILE_TARGET_MS: f64 = 500.0;
/// Target for the peak RSS while a 1 GiB line arrives, in KiB (64 MiB).
pub const BIG_LINE_TARGET_KIB: u64 = 64 * 1024;
/// Target for generated equivalence against the reference: at least this many generated
/// calls per second (a call: one generated argument set through both surfaces, compared).
pub const GENERATED_TARGET_PER_S: f64 = 5000.0;
/// The tool generated equivalence is measured with (not stateful: the surfaces are shared).
pub const GENERATED_TOOL: &str = "read_file";
/// The MCP revision of the generated-equivalence part's MCP surface (legacy era).
pub const GENERATED_REVISION: &str = "2025-11-25";

/// Deadline for one round trip; a miss means the part could not run.
const ROUND_TRIP_DEADLINE: Duration = Duration::from_secs(5);
/// Deadline for the big line to arrive.
const BIG_LINE_DEADLINE: Duration = Duration::from_secs(600);

/// Options of `parity bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Round trips measured per latency part (after a warm-up of a tenth as many, at least 50).
    #[arg(long, default_value_t = 2000)]
    pub iterations: usize,
    /// Runs of the MCP profile (each as a child `parity run`, and each in this process).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Generated calls of the generated-equivalence part (each through MCP and ACP).
    #[arg(long, default_value_t = 2000)]
    pub calls: u32,
    /// Generator seed of the generated-equivalence part.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the figures as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run one part only: `floor`, `call`, `equivalence`, `memory`, `profile`; internal: `big-line` prints
    /// its figures as JSON (the parent runs it as a child so its peak RSS is clean), `echo`
    /// serves as the tokio-stdio echo peer.
    #[arg(long, value_enum, hide = true)]
    pub only: Option<Only>,
    /// Size of the big line in bytes (default 1 GiB).
    #[arg(long, hide = true, default_value_t = BIG_LINE_BYTES)]
    pub big_line_bytes: u64,
}

/// The parts `--only` selects (for profiling one part, and for the child processes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Only {
    /// Measure the big line in this process and print the figures as one JSON line.
    BigLine,
    /// Echo stdin lines to stdout with tokio's stdio until EOF.
    Echo,
    /// Only the floor (`cat`) and the tokio-stdio echo round trips.
    Floor,
    /// Only the floor, the tokio-stdio echo and the tools/call round trips.
    Call,
    /// Only the floor, the tokio-stdio echo and generated equivalence (both runtimes).
    Equivalence,
    /// Only the in-memory breakdown.
    Memory,
    /// Only the MCP profile runs.
    Profile,
}

/// Summary of round-trip samples, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Samples measured (after the warm-up).
    pub n: usize,
    /// Median.
    pub median_us: f64,
    /// 99th percentile (nearest rank).
    pub p99_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Fastest sample.
    pub min_us: f64,
    /// Slowest sample.
    pub max_us: f64,
    /// CPU time of the calling thread per round trip (the thread that runs the driver; from
    /// `se.sum_exec_runtime` of `/proc/thread-self/sched`, when the kernel exposes it).
    pub caller_cpu_us: Option<f64>,
}

impl Latency {
    /// Summarises samples; `None` when there are none.
    pub fn of(samples: &[Duration]) -> Option<Latency> {
        let mut us: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let n = us.len();
        let (first, last) = (*us.first()?, *us.last()?);
        Some(Latency {
            n,
            median_us: median(&us),
            p99_us: nearest_rank(&us, 0.99),
            mean_us: us.iter().sum::<f64>() / n as f64,
            min_us: first,
            max_us: last,
            caller_cpu_us: None,
        })
    }
}

/// The median of sorted values (mean of the two middle ones for an even count; 0 when empty).
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The nearest-rank percentile `p` (0 < p ≤ 1) of sorted values (0 when empty).
pub fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Wall times of repeated MCP profile runs, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileRuns {
    /// Every run, in order.
    pub runs_ms: Vec<f64>,
    /// The first run.
    pub first_ms: f64,
    /// Median of all runs.
    pub median_ms: f64,
    /// Median of the runs after the first (`None` with one run).
    pub later_median_ms: Option<f64>,
    /// Exit code (child runs) or report exit code (in-process runs) of each run.
    pub exit_codes: Vec<i32>,
}

impl ProfileRuns {
    fn of(runs_ms: Vec<f64>, exit_codes: Vec<i32>) -> Option<ProfileRuns> {
        let first_ms = *runs_ms.first()?;
        let mut all = runs_ms.clone();
        all.sort_by(f64::total_cmp);
        let mut later: Vec<f64> = runs_ms.iter().skip(1).copied().collect();
        later.sort_by(f64::total_cmp);
        Some(ProfileRuns {
            first_ms,
            median_ms: median(&all),
            later_median_ms: (!later.is_empty()).then(|| median(&later)),
            runs_ms,
            exit_codes,
        })
    }
}

/// Memory figures of the big-line part, in KiB (from `/proc/self/status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BigLine {
    /// Bytes of the big line the peer wrote.
    pub line_bytes: u64,
    /// Length of the big line as received.
    pub received_len: u64,
    /// The reader marked it over its cap (kept a prefix and a digest).
    pub over_cap: bool,
    /// The small line after it arrived intact.
    pub small_line_ok: bool,
    /// `VmHWM` before the peer started.
    pub hwm_before_kib: u64,
    /// `VmHWM` after the small line arrived: the absolute peak.
    pub hwm_after_kib: u64,
    /// `VmRSS` before.
    pub rss_before_kib: u64,
    /// `VmRSS` after.
    pub rss_after_kib: u64,
    /// Highest `VmRSS` sampled every 10 ms while reading.
    pub rss_sampled_max_kib: u64,
    /// Seconds from spawn to the small line.
    pub seconds: f64,
}

/// The machine and build the figures come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    /// Logical CPUs available.
    pub nproc: usize,
    /// `model name` of `/proc/cpuinfo`.
    pub cpu: String,
    /// `MemTotal` of `/proc/meminfo`, in KiB.
    pub mem_total_kib: u64,
    /// `release` or `debug` (whether debug assertions are on).
    pub profile: &'static str,
    /// `/proc/loadavg` when the bench started (other work on the machine skews the figures).
    pub load_avg: String,
    /// UTC time the bench started, ISO 8601.
    pub date: String,
    /// parity's version.
    pub parity_version: &'static str,
}

/// One line of the printed table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// What was measured.
    pub measure: String,
    /// The figure.
    pub figure: String,
    /// The baseline it is compared with.
    pub baseline: String,
    /// figure ÷ baseline.
    pub ratio: String,
    /// The target.
    pub target: String,
    /// `yes`, `NO`, or `-` when there is no target.
    pub met: String,
}

/// Everything one bench run measured (the `--json` output).
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Machine and build.
    pub machine: Machine,
    /// Round trips per latency part.
    pub iterations: usize,
    /// Pipe round trip through `cat` via [`Peer`].
    pub floor: Option<Latency>,
    /// Pipe round trip through this binary's tokio-stdio echo via [`Peer`].
    pub tokio_echo: Option<Latency>,
    /// `tools/call status` against the reference via [`Client`].
    pub tools_call: Option<Latency>,
    /// In-memory (duplex) round trip via [`Peer`] to an echo task: channel and task hops only.
    pub mem_echo: Option<Latency>,
    /// In-memory `tools/call` via [`Client`] to a canned responder task: adds the driver.
    pub mem_canned_call: Option<Latency>,
    /// In-memory `tools/call status` via [`Client`] to the reference served in this process:
    /// adds the reference's MCP work, without pipes or its stdio.
    pub mem_reference_call: Option<Latency>,
    /// The tools/call target in µs (1.2 × floor median + 20), when the floor was measured.
    pub tools_call_target_us: Option<f64>,
    /// Whether the median met the tools/call target.
    pub tools_call_met: Option<bool>,
    /// `parity run` as child processes.
    pub profile_child: Option<ProfileRuns>,
    /// [`run_mcp`] in this process.
    pub profile_in_process: Option<ProfileRuns>,
    /// Whether the child-process median met the 0.5 s target.
    pub profile_met: Option<bool>,
    /// The big-line memory figures.
    pub big_line: Option<BigLine>,
    /// The same figures for a line one byte under the reader's cap (informational: the
    /// largest line kept whole, so the largest held in memory).
    pub line_at_cap: Option<BigLine>,
    /// Whether the big line's peak RSS met the 64 MiB target.
    pub big_line_met: Option<bool>,
    /// Generated equivalence on a multi-threaded runtime (as `parity run`): the figure judged.
    pub generated: Option<GeneratedBench>,
    /// Generated equivalence on the bench's single-threaded runtime (informational).
    pub generated_current_thread: Option<GeneratedBench>,
    /// Whether [`BenchReport::generated`] met the 5,000 calls/s target.
    pub generated_met: Option<bool>,
    /// The table as printed.
    pub rows: Vec<Row>,
    /// Parts that could not run, and why.
    pub errors: Vec<String>,
}

/// Runs the benchmarks; returns the exit code (0, or 3 when a part could not run).
pub async fn run(args: BenchArgs) -> i32 {
    match args.only {
        Some(Only::Echo) => return echo_stdio().await,
        Some(Only::BigLine) => {
            return match big_line(args.big_line_bytes).await {
                Ok(b) => {
                    crate::outln!("{}", serde_json::to_string(&b).unwrap_or_default());
                    0
                }
                Err(e) => {
                    eprintln!("error: big line: {e}");
                    EXIT_COULD_NOT_RUN
                }
            }
        }
        _ => {}
    }
    let iterations = args.iterations.max(1);
    let warmup = (iterations / 10).max(50);
    let mut errors = Vec::new();
    let machine = machine();
    eprintln!(
        "parity bench: {} × {} CPU, {} build, load {}, {iterations} round trips per part, {} \
         profile runs",
        machine.nproc,
        machine.cpu,
        machine.profile,
        machine.load_avg,
        args.runs.max(1)
    );

    let want = |part: Only| args.only.is_none_or(|o| o == part);
    let (mut big, mut line_at_cap) = (None, None);
    if args.only.is_none() {
        eprintln!(
            "  big line ({} bytes, child process) …",
            args.big_line_bytes
        );
        big = big_line_child(args.big_line_bytes)
            .await
            .map_err(|e| errors.push(format!("big line: {e}")))
            .ok();
        let at_cap = crate::wire::DEFAULT_LINE_CAP as u64 - 1;
        eprintln!("  line of {at_cap} bytes, one under the cap (child process) …");
        line_at_cap = big_line_child(at_cap)
            .await
            .map_err(|e| errors.push(format!("line at the cap: {e}")))
            .ok();
    }
    let (mut floor, mut tokio_echo, mut call) = (None, None, None);
    if want(Only::Floor) || want(Only::Call) || want(Only::Equivalence) {
        let with_call = want(Only::Call);
        eprintln!(
            "  floor (cat), tokio-stdio echo{} (interleaved) …",
            if with_call { ", tools/call status" } else { "" }
        );
        match process_latencies(iterations, warmup, with_call).await {
            Ok((f, e, c)) => {
                floor = Some(f);
                tokio_echo = Some(e);
                call = c;
            }
            Err(e) => errors.push(format!("round trips: {e}")),
        }
    }
    let (mut generated_mt, mut generated_ct) = (None, None);
    if want(Only::Equivalence) {
        let calls = args.calls.max(1);
        eprintln!(
            "  generated equivalence: {calls} {GENERATED_TOOL} calls through MCP and ACP, \
             multi-threaded runtime …"
        );
        generated_mt = generated_multi_thread(calls, args.seed)
            .await
            .map_err(|e| errors.push(format!("generated equivalence (multi-thread): {e}")))
            .ok();
        eprintln!("  generated equivalence, single-threaded runtime …");
        generated_ct = generated(calls, args.seed, "current-thread")
            .await
            .map_err(|e| errors.push(format!("generated equivalence (current-thread): {e}")))
            .ok();
    }
    let mut mem = Vec::new();
    if want(Only::Memory) {
        eprintln!("  in-memory breakdown (interleaved) …");
        match memory_latencies(iterations, warmup).await {
            Ok(m) => mem = m.into_iter().map(Some).collect(),
            Err(e) => errors.push(format!("in-memory round trips: {e}")),
        }
    }
    let (mut child, mut in_process) = (None, None);
    if want(Only::Profile) {
        eprintln!("  parity run (child processes) …");
        child = profile_child(args.runs.max(1))
            .await
            .map_err(|e| errors.push(format!("parity run: {e}")))
            .ok();
        eprintln!("  run_mcp (in process) …");
        in_process = profile_in_process(args.runs.max(1))
            .await
            .map_err(|e| errors.push(format!("run_mcp: {e}")))
            .ok();
    }

    let call_target = floor.map(|f| CALL_TARGET_FACTOR * f.median_us + CALL_TARGET_SLACK_US);
    let mut report = BenchReport {
        machine,
        iterations,
        floor,
        tokio_echo,
        tools_call: call,
        mem_echo: mem.first().copied().flatten(),
        mem_canned_call: mem.get(1).copied().flatten(),
        mem_reference_call: mem.get(2).copied().flatten(),
        tools_call_target_us: call_target,
        tools_call_met: call.zip(call_target).map(|(c, t)| c.median_us <= t),
        profile_met: child.as_ref().map(|c| c.median_ms <= PROFILE_TARGET_MS),
        profile_child: child,
        profile_in_process: in_process,
        big_line_met: big.as_ref().map(|b| b.hwm_after_kib <= BIG_LINE_TARGET_KIB),
        big_line: big,
        line_at_cap,
        generated_met: generated_mt
            .as_ref()
            .map(|g| g.calls_per_s >= GENERATED_TARGET_PER_S),
        generated: generated_mt,
        generated_current_thread: generated_ct,
        rows: Vec::new(),
        errors,
    };
    report.rows = rows(&report);
    crate::outln!("{}", table(&report.rows));
    for e in &report.errors {
        eprintln!("error: {e}");
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("error: failed to write {}: {e}", path.display());
            return EXIT_COULD_NOT_RUN;
        }
    }
    if report.errors.is_empty() {
        0
    } else {
        EXIT_COULD_NOT_RUN
    }
}

/// A spec for this binary with `args`.
fn self_spec(args: &[&str]) -> PeerSpec {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "parity".into());
    PeerSpec::new(exe, args.iter().map(|a| a.to_string()).collect())
}

/// Echo mode: copies stdin lines to stdout through tokio's stdio (blocking-pool backed, as the
/// reference server's), flushing after each.
async fn echo_stdio() -> i32 {
    echo_lines(tokio::io::stdin(), tokio::io::stdout()).await
}

/// Copies lines from `reader` to `writer`, flushing after each; 0 at EOF, 1 on an I/O error.
async fn echo_lines<R, W>(reader: R, mut writer: W) -> i32
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = tokio::io::BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) => return 0,
            Ok(_) => {
                if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
                    return 1;
                }
            }
            Err(_) => return 1,
        }
    }
}

fn short(recv: &Recv) -> String {
    match recv {
        Recv::Line(l) => format!(
            "a line: {}",
            crate::util::clip(&String::from_utf8_lossy(&l.bytes), 120)
        ),
        Recv::Eof => "end of stream".into(),
        Recv::Timeout => "nothing before the deadline".into(),
    }
}

/// Round trips per block: the parts of one group take turns block by block (the first part
/// rotating), so a change in machine load hits the figure and its baseline alike.
const BLOCK: usize = 100;

/// One thing to measure round trips against.
enum Rig {
    /// `send_raw` of [`SMALL_LINE`], `recv` of its echo.
    Echo(Peer),
    /// `tools/call status` with the driver, after the legacy handshake.
    Call(Client),
}

impl Rig {
    /// An echo rig over a process peer.
    fn echo(spec: &PeerSpec) -> Result<Rig, String> {
        let peer = Peer::spawn(spec).map_err(|e| format!("`{}`: {e}", spec.display()))?;
        Ok(Rig::Echo(peer))
    }

    /// A tools/call rig over `peer`, after the `initialize` handshake at 2025-11-25.
    async fn call(peer: Peer) -> Result<Rig, String> {
        let mut client = Client::new(peer, Era::Legacy, "2025-11-25", ROUND_TRIP_DEADLINE);
        let reply = client
            .initialize("2025-11-25")
            .await
            .map_err(|e| e.to_string())?;
        if reply.result().is_none() {
            let _ = client.peer.shutdown(ShutdownGrace::default()).await;
            return Err(format!("initialize failed: {}", reply.describe()));
        }
        Ok(Rig::Call(client))
    }

    /// One round trip and its time.
    async fn round(&mut self) -> Result<Duration, String> {
        match self {
            Rig::Echo(peer) => {
                let t0 = Instant::now();
                peer.send_raw(ECHO_FRAME).await.map_err(|e| e.to_string())?;
                let got = peer.recv(t0 + ROUND_TRIP_DEADLINE).await;
                let dt = t0.elapsed();
                match &got {
                    Recv::Line(l) if l.bytes == SMALL_LINE.as_bytes() => Ok(dt),
                    other => Err(format!("expected the line back, got {}", short(other))),
                }
            }
            Rig::Call(client) => {
                let t0 = Instant::now();
                let reply = client
                    .request("tools/call", json!({"name": "status", "arguments": {}}))
                    .await
                    .map_err(|e| e.to_string())?;
                let dt = t0.elapsed();
                let ok = reply
                    .result()
                    .is_some_and(|r| r.get("isError") != Some(&json!(true)));
                if ok {
                    Ok(dt)
                } else {
                    Err(format!("tools/call status: {}", reply.describe()))
                }
            }
        }
    }

    fn peer(&mut self) -> &mut Peer {
        match self {
            Rig::Echo(peer) => peer,
            Rig::Call(client) => &mut client.peer,
        }
    }
}

/// [`SMALL_LINE`] with its newline.
const ECHO_FRAME: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n";

/// Measures the rigs interleaved: `warmup` unmeasured round trips each, then `iterations`
/// each in blocks of [`BLOCK`], taking turns. Returns one summary per rig, in order.
async fn interleaved(
    rigs: &mut [Rig],
    iterations: usize,
    warmup: usize,
) -> Result<Vec<Latency>, String> {
    for rig in rigs.iter_mut() {
        for _ in 0..warmup {
            rig.round().await?;
        }
    }
    let n = rigs.len();
    let mut samples: Vec<Vec<Duration>> = (0..n).map(|_| Vec::with_capacity(iterations)).collect();
    let mut cpu_ns: Vec<Option<u64>> = vec![Some(0); n];
    let (mut done, mut turn) = (0, 0);
    while done < iterations {
        let count = BLOCK.min(iterations - done);
        for j in 0..n {
            let i = (j + turn) % n;
            let (Some(rig), Some(out)) = (rigs.get_mut(i), samples.get_mut(i)) else {
                continue;
            };
            let c0 = thread_cpu_ns();
            for _ in 0..count {
                out.push(rig.round().await?);
            }
            if let Some(cpu) = cpu_ns.get_mut(i) {
                *cpu = cpu
                    .zip(c0)
                    .zip(thread_cpu_ns())
                    .map(|((acc, a), b)| acc + b.saturating_sub(a));
            }
        }
        done += count;
        turn += 1;
    }
    samples
        .iter()
        .zip(cpu_ns)
        .map(|(s, cpu)| {
            let mut l = Latency::of(s).ok_or_else(|| "no samples".to_string())?;
            l.caller_cpu_us = cpu.map(|c| c as f64 / 1e3 / s.len() as f64);
            Ok(l)
        })
        .collect()
}

/// Shuts every rig's peer down.
async fn close(rigs: Vec<Rig>) {
    for mut rig in rigs {
        let _ = rig.peer().shutdown(ShutdownGrace::default()).await;
    }
}

/// CPU time of the current thread in ns, from `se.sum_exec_runtime` (ms with a fraction) of
/// `/proc/thread-self/sched`; `None` where the kernel does not expose it.
pub fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
    let value = text
        .lines()
        .find(|l| l.trim_start().starts_with("se.sum_exec_runtime"))?
        .split(':')
        .nth(1)?
        .trim();
    let (ms, frac) = value.split_once('.').unwrap_or((value, "0"));
    let mut frac_ns = frac.chars().take(6).collect::<String>();
    while frac_ns.len() < 6 {
        frac_ns.push('0');
    }
    let ns = ms.parse::<u64>().ok()? * 1_000_000 + frac_ns.parse::<u64>().ok()?;
    // The scheduler reports 0 for a thread it does not account.
    (ns > 0).then_some(ns)
}

/// The process group, interleaved: floor (`cat`), tokio-stdio echo (this binary) and
/// `tools/call status` against the reference. Returns `(floor, tokio echo, tools/call)`.
async fn process_latencies(
    iterations: usize,
    warmup: usize,
    with_call: bool,
) -> Result<(Latency, Latency, Option<Latency>), String> {
    let mut rigs = Vec::new();
    let result = async {
        rigs.push(Rig::echo(&PeerSpec::new("cat", Vec::new()))?);
        rigs.push(Rig::echo(&self_spec(&["bench", "--only", "echo"]))?);
        if with_call {
            let target = reference_target();
            let peer = Peer::spawn(&target.spec)
                .map_err(|e| format!("`{}`: {e}", target.spec.display()))?;
            rigs.push(Rig::call(peer).await?);
        }
        interleaved(&mut rigs, iterations, warmup).await
    }
    .await;
    close(rigs).await;
    let mut it = result?.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(floor), Some(echo), call) => Ok((floor, echo, call)),
        _ => Err("missing figures".into()),
    }
}

/// The in-memory group, interleaved: round trips over `tokio::io::duplex` (no process, no
/// pipe, no stdio) to tasks of this process: an echo, a canned responder and the reference's
/// own `serve`. Returns the three summaries in that order.
async fn memory_latencies(iterations: usize, warmup: usize) -> Result<Vec<Latency>, String> {
    let mut rigs = Vec::new();
    let mut tasks = Vec::new();
    let result = async {
        let (near, far) = tokio::io::duplex(64 * 1024);
        let (far_r, far_w) = tokio::io::split(far);
        tasks.push(tokio::spawn(async move {
            echo_lines(far_r, far_w).await;
        }));
        rigs.push(Rig::Echo(mem_peer(near)));

        let (near, far) = tokio::io::duplex(64 * 1024);
        let (far_r, far_w) = tokio::io::split(far);
        tasks.push(tokio::spawn(canned_responder(far_r, far_w)));
        rigs.push(Rig::call(mem_peer(near)).await?);

        let (near, far) = tokio::io::duplex(64 * 1024);
        let (far_r, far_w) = tokio::io::split(far);
        let (root, guard) = crate::cli::reference_root(None).map_err(|e| e.to_string())?;
        let config = parity_reference::mcp::McpServerConfig::new(
            parity_reference::dispatcher::DispatcherConfig::new(root),
        );
        tasks.push(tokio::spawn(async move {
            let _ = parity_reference::mcp::serve(far_r, far_w, config).await;
            drop(guard);
        }));
        rigs.push(Rig::call(mem_peer(near)).await?);
        interleaved(&mut rigs, iterations, warmup).await
    }
    .await;
    for mut rig in rigs {
        rig.peer().close_stdin().await;
    }
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    result
}

/// An in-memory peer over one end of a duplex stream.
fn mem_peer(near: tokio::io::DuplexStream) -> Peer {
    let (r, w) = tokio::io::split(near);
    Peer::from_io(r, w, crate::wire::DEFAULT_LINE_CAP)
}

/// Answers each request line with a canned result: `initialize` gets a 2025-11-25 result,
/// anything else the reference's `status` result (same shape and size).
async fn canned_responder<R, W>(reader: R, mut writer: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let status = json!({
        "content": [{"type": "text", "text":
            "{\"label\":\"active\",\"state\":\"active\",\"reason\":null,\"since_ms\":1796020161559}"}],
        "structuredContent": {"outcome": "ok", "value": {"label": "active", "state": "active",
            "reason": null, "since_ms": 1_796_020_161_559_u64}, "warnings": []},
        "isError": false
    });
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "canned", "version": "0"}});
    let mut input = tokio::io::BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(msg) = serde_json::from_slice::<serde_json::Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id") else { continue };
        let result = if msg.get("method").and_then(serde_json::Value::as_str) == Some("initialize")
        {
            &init
        } else {
            &status
        };
        let mut out = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .unwrap_or_default();
        out.push(b'\n');
        if writer.write_all(&out).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
}

/// `parity run --profile mcp` (reference, both eras, default options) as child processes, stdout to null.
async fn profile_child(runs: usize) -> Result<ProfileRuns, String> {
    let spec = self_spec(&["run", "--profile", "mcp"]);
    let mut times = Vec::with_capacity(runs);
    let mut codes = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        let status = tokio::process::Command::new(&spec.program)
            .args(&spec.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .map_err(|e| format!("failed to start `{}`: {e}", spec.display()))?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        codes.push(status.code().unwrap_or(-1));
    }
    ProfileRuns::of(times, codes).ok_or_else(|| "no runs".to_string())
}

/// [`run_mcp`] against the reference with the default options, in this process.
async fn profile_in_process(runs: usize) -> Result<ProfileRuns, String> {
    let opts = RunOptions::new(EraSel::All, &[], &[], 8, Timing::scaled(1.0))?;
    let mut times = Vec::with_capacity(runs);
    let mut codes = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        let report = run_mcp(reference_target(), &opts).await?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        codes.push(report.exit_code());
    }
    ProfileRuns::of(times, codes).ok_or_else(|| "no runs".to_string())
}

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
    /// Wall time of [`crate::equivalence::run_generated`], opening and closing the surfaces
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
    /// The MCP `tools/call` ([`crate::equivalence::LiveSurface::call`], outcome included).
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
    /// The evidence lines and [`crate::equivalence::compare`], per case (mean).
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
fn generated_plan(calls: u32, seed: u64) -> Result<Plan, String> {
    let target = crate::target::reference();
    let (Some(m), Some(a)) = (&target.mcp, &target.acp) else {
        return Err("the reference target has no MCP or no ACP surface".into());
    };
    let surfaces = vec![
        SurfaceSpec::Mcp {
            spec: PeerSpec::from_command_line(&m.command)?,
            revision: GENERATED_REVISION.into(),
            rules: m.rules.clone(),
        },
        SurfaceSpec::Acp {
            spec: PeerSpec::from_command_line(&a.command)?,
            method: a.tool_method.clone(),
            rules: a.rules.clone(),
        },
    ];
    Ok(Plan {
        surfaces,
        volatile: target.equivalence.volatile.clone(),
        compare_messages: target.equivalence.compare_messages,
        stateful: Vec::new(),
        tools: vec![GENERATED_TOOL.into()],
        cases: calls,
        seed,
        reference: true,
    })
}

/// Runs [`generated`] on a fresh multi-threaded runtime on its own thread: the runtime
/// `parity run` gives generated equivalence (the bench's own runtime is single-threaded).
async fn generated_multi_thread(calls: u32, seed: u64) -> Result<GeneratedBench, String> {
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
/// the current runtime: [`crate::equivalence::run_generated`] timed, then the breakdown.
async fn generated(calls: u32, seed: u64, runtime: &'static str) -> Result<GeneratedBench, String> {
    let timing = Timing::scaled(1.0);
    let plan = generated_plan(calls, seed)?;
    let tool = crate::equivalence::discover_tools(&plan, timing)
        .await?
        .into_iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(GENERATED_TOOL))
        .ok_or_else(|| format!("the reference's tools/list has no {GENERATED_TOOL}"))?;
    let t0 = Instant::now();
    let case =
        crate::equivalence::run_generated(Arc::new(plan.clone()), tool.clone(), timing).await;
    let seconds = t0.elapsed().as_secs_f64();
    if case.verdict != Verdict::Pass {
        return Err(format!(
            "{}: {}: {}",
            case.id,
            case.verdict.as_str(),
            crate::util::clip(&case.message, 400)
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
struct GenSamples {
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
fn split_means(samples: &[Duration], valid: &[bool]) -> (f64, f64) {
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
async fn status_call(surface: &mut LiveSurface) -> Result<Duration, String> {
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
async fn generated_breakdown(
    plan: &Plan,
    tool: &Value,
    timing: Timing,
) -> Result<GeneratedBreakdown, String> {
    let schema = tool
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    let config = crate::gen::GenConfig {
        seed: plan.seed,
        cases: plan.cases,
        ..crate::gen::GenConfig::default()
    };
    let cases = f64::from(plan.cases.max(1));

    // Generation alone, on a blocking thread as in run_generated.
    let gen_schema = schema.clone();
    let generation = tokio::task::spawn_blocking(move || {
        let t0 = Instant::now();
        let report = crate::gen::run(&config, crate::gen::arguments(&gen_schema), |_| Ok(()));
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
        let mut report = crate::gen::run(&config, crate::gen::arguments(&schema), |g| {
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
                        crate::util::clip(&c.outcome.to_string(), 240)
                    ));
                    results.push((s.label.clone(), c));
                    compare_time += t.elapsed();
                }
                let t = Instant::now();
                let text = format!(
                    "{GENERATED_TOOL} {}",
                    crate::util::clip(&g.arguments.to_string(), 200)
                );
                let mismatch = crate::equivalence::compare(&plan2, &|| text.clone(), &results);
                drop(ev);
                samples.compare += compare_time + t.elapsed();
                mismatch.map_or(Ok(()), Err)
            })?;
            samples.closure += tc.elapsed();
            Ok(())
        });
        let looped = t0.elapsed();
        // Pass 2: the same generated calls again, for the reference points only.
        if report.failure.is_none() {
            report = crate::gen::run(&config, crate::gen::arguments(&schema), |g| {
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
            });
        }
        // Pass 3: the replica with both surfaces' calls made at once, as run_generated does.
        let mut joined_loop = None;
        if report.failure.is_none() {
            let t0 = Instant::now();
            report = crate::gen::run(&config, crate::gen::arguments(&schema), |g| {
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
                            format!("{l}: {}", crate::util::clip(&c.outcome.to_string(), 240))
                        })
                        .collect();
                    let text = format!(
                        "{GENERATED_TOOL} {}",
                        crate::util::clip(&g.arguments.to_string(), 200)
                    );
                    let mismatch = crate::equivalence::compare(&plan2, &|| text.clone(), &results);
                    drop(ev);
                    mismatch.map_or(Ok(()), Err)
                })
            });
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

/// Runs the big-line part in a child process (clean `VmHWM`) and reads its JSON line.
async fn big_line_child(bytes: u64) -> Result<BigLine, String> {
    let spec = self_spec(&[
        "bench",
        "--only",
        "big-line",
        "--big-line-bytes",
        &bytes.to_string(),
    ]);
    let out = tokio::process::Command::new(&spec.program)
        .args(&spec.args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .await
        .map_err(|e| format!("failed to start `{}`: {e}", spec.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last).map_err(|_| {
        format!(
            "the child `{}` ended with {} and printed no figures",
            spec.display(),
            out.status
        )
    })
}

/// `(VmHWM, VmRSS)` of this process in KiB, from `/proc/self/status`.
pub fn memory_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    Some((field("VmHWM:")?, field("VmRSS:")?))
}

/// Reads a `bytes`-long line, a newline and [`SMALL_LINE`] from a shell peer with
/// [`Peer::recv`], watching this process's memory.
async fn big_line(bytes: u64) -> Result<BigLine, String> {
    let (hwm_before, rss_before) = memory_kib().ok_or("/proc/self/status has no VmHWM/VmRSS")?;
    let script = format!("head -c {bytes} /dev/zero | tr '\\0' x; echo; echo '{SMALL_LINE}'");
    let spec = PeerSpec::new("sh", vec!["-c".into(), script]);
    let stop = Arc::new(AtomicBool::new(false));
    let sampled = Arc::new(AtomicU64::new(rss_before));
    let sampler = {
        let (stop, sampled) = (stop.clone(), sampled.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if let Some((_, rss)) = memory_kib() {
                    sampled.fetch_max(rss, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let t0 = Instant::now();
    let mut peer = Peer::spawn(&spec).map_err(|e| e.to_string())?;
    let deadline = t0 + BIG_LINE_DEADLINE;
    let mut big: Option<(u64, bool)> = None;
    let outcome = loop {
        match peer.recv(deadline).await {
            Recv::Line(l) if l.bytes == SMALL_LINE.as_bytes() => break Ok(()),
            Recv::Line(l) => {
                if big.is_none() {
                    big = Some((l.len, l.over_cap));
                }
            }
            other => break Err(format!("before the small line: {}", short(&other))),
        }
    };
    let seconds = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.await;
    let _ = peer.shutdown(ShutdownGrace::default()).await;
    outcome?;
    let (hwm_after, rss_after) = memory_kib().ok_or("/proc/self/status vanished")?;
    let (received_len, over_cap) = big.ok_or("the big line never arrived")?;
    Ok(BigLine {
        line_bytes: bytes,
        received_len,
        over_cap,
        small_line_ok: true,
        hwm_before_kib: hwm_before,
        hwm_after_kib: hwm_after,
        rss_before_kib: rss_before,
        rss_after_kib: rss_after,
        rss_sampled_max_kib: sampled.load(Ordering::Relaxed).max(rss_after),
        seconds,
    })
}

fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_total_kib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Machine {
        nproc: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        cpu,
        mem_total_kib,
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        load_avg: std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default(),
        date: iso_date(secs),
        parity_version: env!("CARGO_PKG_VERSION"),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch (proleptic Gregorian, UTC).
pub fn iso_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn us(v: f64) -> String {
    format!("{v:.1} µs")
}

/// The median, with the caller thread's CPU per round trip when known.
fn median_cpu(l: &Latency) -> String {
    match l.caller_cpu_us {
        Some(c) => format!("{} (CPU {c:.1})", us(l.median_us)),
        None => us(l.median_us),
    }
}

fn ms(v: f64) -> String {
    format!("{v:.0} ms")
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn yes_no(met: bool) -> String {
    if met { "yes" } else { "NO" }.to_string()
}

fn row(measure: &str, figure: String, baseline: &str, ratio: &str, target: &str, met: &str) -> Row {
    Row {
        measure: measure.to_string(),
        figure,
        baseline: baseline.to_string(),
        ratio: ratio.to_string(),
        target: target.to_string(),
        met: met.to_string(),
    }
}

/// The table rows of a report.
pub fn rows(r: &BenchReport) -> Vec<Row> {
    let mut out = Vec::new();
    if let Some(b) = &r.big_line {
        let met = yes_no(b.hwm_after_kib <= BIG_LINE_TARGET_KIB);
        out.push(row(
            &format!("{} MiB line: peak RSS (VmHWM)", b.line_bytes >> 20),
            mib(b.hwm_after_kib),
            "64 MiB",
            &format!(
                "{:.2}×",
                b.hwm_after_kib as f64 / BIG_LINE_TARGET_KIB as f64
            ),
            "≤ 64 MiB",
            &met,
        ));
        out.push(row(
            "  VmHWM growth while reading it",
            mib(b.hwm_after_kib.saturating_sub(b.hwm_before_kib)),
            &format!("before {}", mib(b.hwm_before_kib)),
            "-",
            "-",
            "-",
        ));
        out.push(row(
            "  time to read it",
            format!("{:.2} s", b.seconds),
            "-",
            "-",
            "-",
            "-",
        ));
    }
    if let Some(b) = &r.line_at_cap {
        out.push(row(
            "line 1 byte under the 16 MiB cap: peak RSS",
            mib(b.hwm_after_kib),
            "64 MiB",
            &format!(
                "{:.2}×",
                b.hwm_after_kib as f64 / BIG_LINE_TARGET_KIB as f64
            ),
            "- (informational)",
            "-",
        ));
    }
    let floor = r.floor;
    if let Some(f) = floor {
        out.push(row(
            "floor: pipe round trip via Peer (cat), median",
            median_cpu(&f),
            "-",
            "-",
            "-",
            "-",
        ));
        out.push(row("floor, p99", us(f.p99_us), "-", "-", "-", "-"));
    }
    if let Some(e) = r.tokio_echo {
        for (name, v, figure, base) in [
            (
                "tokio-stdio echo (this binary), median",
                e.median_us,
                median_cpu(&e),
                floor.map(|f| f.median_us),
            ),
            (
                "tokio-stdio echo, p99",
                e.p99_us,
                us(e.p99_us),
                floor.map(|f| f.p99_us),
            ),
        ] {
            out.push(row(
                name,
                figure,
                &base
                    .map(|b| format!("floor {}", us(b)))
                    .unwrap_or("-".into()),
                &base.map(|b| format!("{:.2}×", v / b)).unwrap_or("-".into()),
                "-",
                "-",
            ));
        }
    }
    if let Some(c) = r.tools_call {
        for (name, v, figure, base) in [
            (
                "tools/call status via Client, median",
                c.median_us,
                median_cpu(&c),
                floor.map(|f| f.median_us),
            ),
            (
                "tools/call status, p99",
                c.p99_us,
                us(c.p99_us),
                floor.map(|f| f.p99_us),
            ),
        ] {
            let target = base.map(|b| CALL_TARGET_FACTOR * b + CALL_TARGET_SLACK_US);
            out.push(row(
                name,
                figure,
                &base
                    .map(|b| format!("floor {}", us(b)))
                    .unwrap_or("-".into()),
                &base.map(|b| format!("{:.2}×", v / b)).unwrap_or("-".into()),
                &target
                    .map(|t| format!("≤ {} (1.2×floor+20)", us(t)))
                    .unwrap_or("-".into()),
                &target.map(|t| yes_no(v <= t)).unwrap_or("-".into()),
            ));
        }
    }
    for g in [&r.generated, &r.generated_current_thread]
        .into_iter()
        .flatten()
    {
        out.extend(generated_rows(g, floor));
    }
    let mem_base = r.mem_echo.map(|m| m.median_us);
    for (name, lat) in [
        ("in-memory echo via Peer (duplex), median", r.mem_echo),
        (
            "in-memory tools/call, canned responder, median",
            r.mem_canned_call,
        ),
        (
            "in-memory tools/call, reference in process, median",
            r.mem_reference_call,
        ),
    ] {
        if let Some(l) = lat {
            out.push(row(
                name,
                median_cpu(&l),
                &mem_base
                    .map(|b| format!("in-memory echo {}", us(b)))
                    .unwrap_or("-".into()),
                &mem_base
                    .map(|b| format!("{:.2}×", l.median_us / b))
                    .unwrap_or("-".into()),
                "-",
                "-",
            ));
        }
    }
    if let Some(p) = &r.profile_child {
        out.push(row(
            &format!("parity run (child), median of {}", p.runs_ms.len()),
            ms(p.median_ms),
            "0.5 s",
            &format!("{:.2}×", p.median_ms / PROFILE_TARGET_MS),
            "≤ 500 ms",
            &yes_no(p.median_ms <= PROFILE_TARGET_MS),
        ));
        out.push(row(
            "  first / slowest / exit codes",
            format!(
                "{} / {}",
                ms(p.first_ms),
                ms(p.runs_ms.iter().copied().fold(0.0, f64::max))
            ),
            &format!("{:?}", p.exit_codes),
            "-",
            "-",
            "-",
        ));
    }
    if let Some(p) = &r.profile_in_process {
        out.push(row(
            "run_mcp in process, first (era detection)",
            ms(p.first_ms),
            "0.5 s",
            &format!("{:.2}×", p.first_ms / PROFILE_TARGET_MS),
            "-",
            "-",
        ));
        if let Some(later) = p.later_median_ms {
            out.push(row(
                "run_mcp in process, later (cached), median",
                ms(later),
                "0.5 s",
                &format!("{:.2}×", later / PROFILE_TARGET_MS),
                "-",
                "-",
            ));
        }
    }
    out
}

/// The rows of one generated-equivalence measurement: calls per second against two floor
/// round trips per call (judged on the multi-threaded runtime only), then the breakdown.
fn generated_rows(g: &GeneratedBench, floor: Option<Latency>) -> Vec<Row> {
    let mut out = Vec::new();
    let judged = g.runtime == "multi-thread";
    let two_floors = floor.map(|f| 2.0 * f.median_us);
    let vs_floor = |v: f64| {
        (
            two_floors
                .map(|b| format!("2 × floor {}", us(b)))
                .unwrap_or("-".into()),
            two_floors
                .map(|b| format!("{:.2}×", v / b))
                .unwrap_or("-".into()),
        )
    };
    let (baseline, ratio) = vs_floor(g.per_call_us);
    out.push(row(
        &format!(
            "generated equivalence, {} via MCP+ACP ({}), calls/s",
            g.tool, g.runtime
        ),
        format!("{:.0}/s ({}/call)", g.calls_per_s, us(g.per_call_us)),
        &baseline,
        &ratio,
        if judged {
            "≥ 5000/s (≤ 200 µs/call)"
        } else {
            "- (informational)"
        },
        &if judged {
            yes_no(g.calls_per_s >= GENERATED_TARGET_PER_S)
        } else {
            "-".into()
        },
    ));
    let Some(b) = &g.breakdown else {
        return out;
    };
    let one_floor = floor.map(|f| f.median_us);
    let per_floor = |v: f64| {
        (
            one_floor
                .map(|f| format!("floor {}", us(f)))
                .unwrap_or("-".into()),
            one_floor
                .map(|f| format!("{:.2}×", v / f))
                .unwrap_or("-".into()),
        )
    };
    let mean_median = |l: &Latency| format!("{} (median {:.1})", us(l.mean_us), l.median_us);
    let split = |l: &Latency, (v, i): (f64, f64)| {
        format!("{} (valid {v:.1}, invalid {i:.1})", us(l.mean_us))
    };
    let (mcp_base, mcp_ratio) = per_floor(b.mcp_call.mean_us);
    let (acp_base, acp_ratio) = per_floor(b.acp_call.mean_us);
    let (mcp_status_base, mcp_status_ratio) = per_floor(b.mcp_status.mean_us);
    let (acp_status_base, acp_status_ratio) = per_floor(b.acp_status.mean_us);
    let (loop_base, loop_ratio) = vs_floor(b.loop_per_call_us);
    let (joined_base, joined_ratio) = match b.joined_per_call_us {
        Some(j) => vs_floor(j),
        None => ("-".into(), "-".into()),
    };
    let (cat_base, cat_ratio) = per_floor(b.floor_in_loop.median_us);
    let overhead = b.closure_us - b.mcp_call.mean_us - b.acp_call.mean_us - b.compare_us;
    let rest = b.loop_per_call_us - b.closure_us - b.generation_us;
    for (name, figure, base, ratio) in [
        (
            "  sequential replica of the loop, per call (no open/close)",
            us(b.loop_per_call_us),
            loop_base,
            loop_ratio,
        ),
        (
            "  generation alone (gen::run, no-op test), per call",
            us(b.generation_us),
            "-".into(),
            "-".into(),
        ),
        (
            "  MCP tools/call read_file (LiveSurface::call), mean",
            split(&b.mcp_call, b.mcp_call_valid_invalid_us),
            mcp_base,
            mcp_ratio,
        ),
        (
            "  ACP tool call read_file (LiveSurface::call), mean",
            split(&b.acp_call, b.acp_call_valid_invalid_us),
            acp_base,
            acp_ratio,
        ),
        (
            "    MCP tools/call status (2nd pass), mean",
            mean_median(&b.mcp_status),
            mcp_status_base,
            mcp_status_ratio,
        ),
        (
            "    ACP tool call status (2nd pass), mean",
            mean_median(&b.acp_status),
            acp_status_base,
            acp_status_ratio,
        ),
        (
            "    reference Dispatcher::call read_file in process (2nd pass), mean",
            split(&b.dispatcher_call, b.dispatcher_valid_invalid_us),
            "-".into(),
            "-".into(),
        ),
        (
            "  evidence lines + compare, per call",
            us(b.compare_us),
            "-".into(),
            "-".into(),
        ),
        (
            "  block_on and closure overhead, per call",
            us(overhead),
            "-".into(),
            "-".into(),
        ),
        (
            "  rest (loop − closure − generation), per call",
            us(rest),
            "-".into(),
            "-".into(),
        ),
        (
            "  cat round trip from the blocking thread (2nd pass), median",
            us(b.floor_in_loop.median_us),
            cat_base,
            cat_ratio,
        ),
        (
            "  replica with MCP and ACP called at once, per call",
            b.joined_per_call_us.map(us).unwrap_or("-".into()),
            joined_base,
            joined_ratio,
        ),
        (
            "  valid calls; open both surfaces / close both",
            format!(
                "{} of {}; {:.1} / {:.1} ms",
                b.valid_calls, g.calls, b.open_ms, b.close_ms
            ),
            "-".into(),
            "-".into(),
        ),
    ] {
        out.push(row(name, figure, &base, &ratio, "-", "-"));
    }
    out
}

/// Renders rows as an aligned text table with a header.
pub fn table(rows: &[Row]) -> String {
    let header = row(
        "measure",
        "figure".into(),
        "baseline",
        "ratio",
        "target",
        "met",
    );
    let all: Vec<&Row> = std::iter::once(&header).chain(rows.iter()).collect();
    let cells = |r: &Row| {
        [
            r.measure.clone(),
            r.figure.clone(),
            r.baseline.clone(),
            r.ratio.clone(),
            r.target.clone(),
            r.met.clone(),
        ]
    };
    let mut widths = [0usize; 6];
    for r in &all {
        for (w, c) in widths.iter_mut().zip(cells(r)) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in all {
        let mut line = String::new();
        for (i, (w, c)) in widths.iter().zip(cells(r)).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(&c);
            line.extend(std::iter::repeat_n(' ', w - c.chars().count()));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank_and_middle_median() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 0.99), 99.0);
        assert_eq!(nearest_rank(&v, 1.0), 100.0);
        assert_eq!(median(&v), 50.5);
        assert_eq!(median(&[3.0]), 3.0);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(nearest_rank(&[], 0.5), 0.0);
        let l = Latency::of(&[Duration::from_micros(30), Duration::from_micros(10)]);
        assert_eq!(
            l.map(|l| (l.n, l.median_us, l.min_us)),
            Some((2, 20.0, 10.0))
        );
        assert!(Latency::of(&[]).is_none());
    }

    #[test]
    fn profile_runs_split_first_from_later() {
        let p = ProfileRuns::of(vec![900.0, 400.0, 500.0], vec![0, 0, 0]);
        assert_eq!(
            p.map(|p| (p.first_ms, p.median_ms, p.later_median_ms)),
            Some((900.0, 500.0, Some(450.0)))
        );
    }

    #[test]
    fn echo_frame_is_the_small_line() {
        assert_eq!(ECHO_FRAME, format!("{SMALL_LINE}\n").as_bytes());
    }

    #[test]
    fn iso_dates_are_civil() {
        assert_eq!(iso_date(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_date(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_date(1_767_225_599), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn split_means_separate_valid_from_invalid() {
        let d = |us| Duration::from_micros(us);
        let (v, i) = split_means(&[d(10), d(30), d(5)], &[true, true, false]);
        assert_eq!((v, i), (20.0, 5.0));
        assert_eq!(split_means(&[d(10)], &[true]), (10.0, 0.0));
    }

    #[test]
    fn generated_rows_judge_only_the_multi_thread_figure() {
        let g = GeneratedBench {
            runtime: "multi-thread",
            tool: GENERATED_TOOL.into(),
            surfaces: vec!["mcp-stdio#2025-11-25".into(), "acp#v1".into()],
            calls: 2000,
            seed: 0,
            seconds: 0.5,
            calls_per_s: 4000.0,
            per_call_us: 250.0,
            breakdown: None,
        };
        let floor = Latency::of(&[Duration::from_micros(25)]);
        let rows = generated_rows(&g, floor);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].ratio, "5.00×");
        assert_eq!(rows[0].met, "NO");
        let fast = GeneratedBench {
            calls_per_s: 6000.0,
            ..g.clone()
        };
        assert_eq!(generated_rows(&fast, floor)[0].met, "yes");
        let informational = GeneratedBench {
            runtime: "current-thread",
            ..g
        };
        assert_eq!(generated_rows(&informational, None)[0].met, "-");
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(&[row("a", "1 µs".into(), "-", "-", "-", "-")]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("measure  figure"));
    }
}
