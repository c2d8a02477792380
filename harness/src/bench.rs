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
//! 5. **in-memory breakdown** (informational): the same round trips over `tokio::io::duplex`
//!    with the far end as a task in this process: an echo (the [`Peer`] channel and task hops),
//!    a canned responder (adds the [`Client`] driver's JSON work) and the reference's own
//!    `serve` (adds the reference's MCP work). No process, pipe or stdio is involved.
//! 6. **profile**: `parity run` (both eras, default options) as a child process with stdout to
//!    null, and [`run_mcp`] in this process (the first run detects eras; later runs hit the
//!    per-process era cache). Target: ≤ 0.5 s.
//!
//! Parts 2–4 run interleaved (all three peers alive, taking turns in blocks of 100 round
//! trips), and so do the three of part 5, so that load from elsewhere on the machine moves a
//! figure and its baseline together. Each latency figure also reports the CPU time the calling
//! thread (the one running the driver) spent per round trip.
//!
//! Nothing here asserts on time: the figures are printed (and written with `--json`). The exit
//! code is 0 whatever the figures are, and 3 when a part could not run.

use crate::check::Timing;
use crate::cli::{reference_target, EXIT_COULD_NOT_RUN};
use crate::mcp::{Client, Era};
use crate::peer::{Peer, PeerSpec, Recv, ShutdownGrace};
use crate::run::{run_mcp, EraSel, RunOptions};
use serde::{Deserialize, Serialize};
use serde_json::json;
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
    /// Write the figures as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run one part only: `floor`, `call`, `memory`, `profile`; internal: `big-line` prints
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
    if want(Only::Floor) || want(Only::Call) {
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

/// `parity run` (reference, both eras, default options) as child processes, stdout to null.
async fn profile_child(runs: usize) -> Result<ProfileRuns, String> {
    let spec = self_spec(&["run"]);
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
    let opts = RunOptions {
        eras: EraSel::All,
        filter: Vec::new(),
        skip: Vec::new(),
        jobs: 8,
        timing: Timing::scaled(1.0),
    };
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
    fn table_aligns_columns() {
        let t = table(&[row("a", "1 µs".into(), "-", "-", "-", "-")]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("measure  figure"));
    }
}
