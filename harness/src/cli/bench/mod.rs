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
//! 5. **generated equivalence**: [`crate::profiles::equivalence::run_generated`] for `read_file` with
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
//! 7. **replay comparison**: a generated MCP transcript of `--replay-messages` messages
//!    (default 100,000: `tools/call` requests with varied arguments, responses shaped as the
//!    reference's, notifications) is read with [`crate::protocol::transcript::parse`] and compared with
//!    a live session (the same calls as a later run answers them: other `since_ms`,
//!    timestamps and server version, notifications in another order) with
//!    [`crate::protocol::replay::compare`]. Target: ≥ 200,000 messages/s for parse + compare, the whole
//!    replay comparison. Baseline: `serde_json::from_slice` of every line of the transcript.
//! 8. **record proxy**: a ~200-byte line through `cat` (floor) and through `parity record
//!    --out FILE -- cat` (this binary), interleaved; the added latency per message is
//!    (proxy − floor) ÷ 2, since a round trip crosses the proxy twice. Target: ≤ 20 µs.
//! 9. **profile**: `parity run --profile mcp` (both eras, default options) as a child process with stdout to
//!    null, and [`run_mcp`] in this process (the first run detects eras; later runs hit the
//!    per-process era cache). Target: ≤ 0.5 s.
//! 10. **http**: `@modelcontextprotocol/server-everything` in Streamable HTTP mode
//!     (`node …/dist/index.js streamableHttp`, `PORT` a free loopback port), checked `--runs`
//!     times by `parity run --profile mcp-http --url …` and as often by crates.io `mcp-tester
//!     conformance --format json` (0.8.0, installed by `tests/interop/install-mcp-tester.sh`),
//!     alternating, both as child processes timed from spawn to the end of their stdout. The
//!     cost per case is the median wall time ÷ cases (parity: cases executed; mcp-tester: tests
//!     not skipped); target: parity's ≤ mcp-tester's. Skipped (not an error) when the server or
//!     mcp-tester is not installed.
//!
//! Parts 2–4 run interleaved (all three peers alive, taking turns in blocks of 100 round
//! trips), and so do the three of part 6 and the two of part 8, so that load from elsewhere on
//! the machine moves a figure and its baseline together; the passes of part 7 rotate the order
//! of floor, parse and compare for the same reason. Part 5 is not interleaved (it is one
//! `run_generated`); it runs right after parts 2–4, whose floor is its baseline. Each latency
//! figure also reports the CPU time the calling thread (the one running the driver) spent per
//! round trip.
//!
//! Nothing here asserts on time: the figures are printed (and written with `--json`). The exit
//! code is 0 whatever the figures are, and 3 when a part could not run.

mod big_line;
mod floods;
mod generated;
mod guard;
mod http;
mod latency;
mod replay;
mod rows;
mod stdio;
pub use big_line::*;
pub use generated::*;
pub use guard::*;
pub use http::*;
pub use latency::*;
pub use replay::*;
pub use rows::*;
pub use stdio::*;

use crate::cli::{reference_target, EXIT_COULD_NOT_RUN};
use crate::engine::check::{Timing, Verdict};
use crate::engine::run::{EraSel, RunOptions};
use crate::profiles::equivalence::{LiveSurface, Plan, SurfaceSpec};
use crate::profiles::mcp::run_mcp;
use crate::protocol::mcp::{Client, Era};
use crate::transport::peer::{Peer, PeerSpec, Recv, ShutdownGrace};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
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
/// Messages (c2s and s2c lines) of the replay part's generated transcript, by default.
pub const REPLAY_MESSAGES: usize = 100_000;
/// Target for the whole replay comparison ([`crate::protocol::transcript::parse`] of the transcript,
/// then [`crate::protocol::replay::compare`]): at least this many messages per second.
pub const REPLAY_TARGET_PER_S: f64 = 200_000.0;
/// Timed passes of the replay part (the median is reported).
pub const REPLAY_REPEATS: usize = 5;
/// Target for the recording proxy: at most this many microseconds added per message.
pub const RECORD_TARGET_US: f64 = 20.0;
/// The line the record part sends (a `tools/call` request of about 200 bytes).
pub const RECORD_LINE: &str = r#"{"jsonrpc":"2.0","id":4217,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"notes/2026/11/design-review-minutes.md","offset":0,"limit":65536},"_meta":{"progressToken":"bench-4217"}}}"#;

/// Files of the guard part's generated tree, by default.
pub const GUARD_FILES: usize = 10_000;
/// Target for `parity guard` on the generated tree: at least this many files per second.
pub const GUARD_TARGET_PER_S: f64 = 20_000.0;
/// Timed passes of the guard part (the median is reported).
pub const GUARD_REPEATS: usize = 5;

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
    /// Runs of the MCP profile (each as a child `parity run`, and each in this process), and
    /// of each side of the http part.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Generated calls of the generated-equivalence part (each through MCP and ACP).
    #[arg(long, default_value_t = 2000)]
    pub calls: u32,
    /// Generator seed of the generated-equivalence part.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Messages of the replay part's generated transcript (parsed and compared).
    #[arg(long, default_value_t = REPLAY_MESSAGES)]
    pub replay_messages: usize,
    /// Files of the guard part's generated tree.
    #[arg(long, default_value_t = GUARD_FILES)]
    pub guard_files: usize,
    /// Write the figures as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run one part only: `floor`, `call`, `equivalence`, `memory`, `profile`, `replay`,
    /// `record`, `http`, `startup`, `guard`, `floods`; internal: `big-line` prints its figures as JSON (the parent runs it as a
    /// child so its peak RSS is clean), `echo` serves as the tokio-stdio echo peer.
    #[arg(long, value_enum, hide = true)]
    pub only: Option<Only>,
    /// Size of the big line in bytes (default 1 GiB).
    #[arg(long, hide = true, default_value_t = BIG_LINE_BYTES)]
    pub big_line_bytes: u64,
    /// Floods part: requests the request-flooding peer sends (default 10,000).
    #[arg(long, default_value_t = parity_fakes::REQUEST_FLOOD as u64)]
    pub flood_requests: u64,
    /// Floods part: bytes of the giant line (default 1 GiB).
    #[arg(long, default_value_t = BIG_LINE_BYTES)]
    pub flood_line_bytes: u64,
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
    /// Only the replay comparison speed (parse and compare a generated transcript).
    Replay,
    /// Only the recording proxy's latency (`cat` directly and behind `parity record`).
    Record,
    /// Only the mcp-http profile against server-everything over HTTP, beside `mcp-tester`.
    Http,
    /// Only the default MCP run against server-everything over stdio, beside one plain session.
    Stdio,
    /// Only the startup budget: real time from launch to `STARTUP_BUDGET_EXCEEDED`.
    Startup,
    /// Only `parity guard`'s scan of a generated source tree, beside a plain walk reading it.
    Guard,
    /// Only whole runs against the load peers (notification flood, request flood, giant
    /// line), with the run's peak RSS beside the bytes it read.
    Floods,
}

/// A Node preload that binds listeners given only a port to 127.0.0.1 (the http part's).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
const LOOPBACK_PRELOAD: &str = r#"const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || /^[0-9]+$/.test(String(args[0]))) && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
"#;

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
    /// Replay comparison speed on a generated transcript.
    pub replay: Option<ReplayBench>,
    /// Whether the whole replay comparison (parse + compare) met the 200,000 messages/s
    /// target.
    pub replay_met: Option<bool>,
    /// The recording proxy's latency beside the pipe round-trip floor.
    pub record: Option<RecordBench>,
    /// Whether the proxy's added latency per message met the 20 µs target.
    pub record_met: Option<bool>,
    /// The mcp-http profile against server-everything over HTTP beside `mcp-tester`.
    pub http: Option<HttpBench>,
    /// Whether parity's total wall was at most mcp-tester's with at least as many cases.
    pub http_met: Option<bool>,
    /// The default MCP run against server-everything over stdio beside one plain session.
    pub stdio: Option<StdioBench>,
    /// Whether the run's wall was at most [`STDIO_TARGET_RATIO`] plain sessions.
    pub stdio_met: Option<bool>,
    /// The startup budget's real elapsed time (docs/dispatcher.md).
    pub startup: Option<StartupBench>,
    /// `parity guard`'s scan speed on a generated tree beside a plain walk reading every file.
    pub guard: Option<GuardBench>,
    /// Whether the scan met the 20,000 files/s target.
    pub guard_met: Option<bool>,
    /// Whole runs against the load peers ([`floods`]).
    pub floods: Option<Vec<floods::FloodRun>>,
    /// Whether every load peaked at ≤ 64 MiB with every verdict judged.
    pub floods_met: Option<bool>,
    /// Parts that were skipped because something they need is not installed, and why.
    pub skipped: Vec<String>,
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
        let at_cap = crate::transport::wire::DEFAULT_LINE_CAP as u64 - 1;
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
    let mut replay = None;
    if want(Only::Replay) {
        let n = args.replay_messages;
        eprintln!(
            "  replay comparison: {n} messages, parse and compare ({REPLAY_REPEATS} passes) …"
        );
        replay = replay_speed(n, REPLAY_REPEATS)
            .map_err(|e| errors.push(format!("replay comparison: {e}")))
            .ok();
    }
    let mut record = None;
    if want(Only::Record) {
        eprintln!("  record proxy: cat directly and behind `parity record` (interleaved) …");
        record = record_latencies(iterations, warmup)
            .await
            .map_err(|e| errors.push(format!("record proxy: {e}")))
            .ok();
    }
    let mut guard = None;
    // A parity built without the `guard` feature skips the part, unless asked for it alone.
    let guard_skipped = (!cfg!(feature = "guard") && args.only.is_none())
        .then(|| "guard: this parity was built without the `guard` feature".to_string());
    if want(Only::Guard) && guard_skipped.is_none() {
        let n = args.guard_files.max(1);
        eprintln!("  guard: {n} generated files, plain walk and guard scan ({GUARD_REPEATS} passes each, alternating) …");
        guard = guard_speed(n, GUARD_REPEATS)
            .map_err(|e| errors.push(format!("guard: {e}")))
            .ok();
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
    let (mut http, mut skipped) = (None, Vec::new());
    skipped.extend(guard_skipped);
    if want(Only::Http) {
        eprintln!(
            "  http: server-everything over Streamable HTTP, parity mcp-http and mcp-tester \
             conformance ({} runs each, alternating) …",
            args.runs.max(1)
        );
        match http_part(args.runs.max(1)).await {
            Ok(h) => http = Some(h),
            Err(HttpError::Skipped(why)) => skipped.push(format!("http: {why}")),
            Err(HttpError::Failed(e)) => errors.push(format!("http: {e}")),
        }
    }

    let mut stdio = None;
    if want(Only::Stdio) {
        eprintln!(
            "  stdio: server-everything over stdio, parity run --mcp and one plain session ({} runs each, alternating) …",
            args.runs.max(1)
        );
        match stdio_part(args.runs.max(1)).await {
            Ok(b) => stdio = Some(b),
            Err(HttpError::Skipped(why)) => skipped.push(format!("stdio: {why}")),
            Err(HttpError::Failed(e)) => errors.push(format!("stdio: {e}")),
        }
    }

    let mut startup = None;
    if want(Only::Startup) {
        eprintln!(
            "  startup budget: {} launches of `parity reference mcp` with a 30 s start under a \
             {STARTUP_BUDGET_MS} ms budget …",
            args.runs.max(1)
        );
        startup = startup_budget(args.runs.max(1))
            .await
            .map_err(|e| errors.push(format!("startup budget: {e}")))
            .ok();
    }
    let mut flood_runs = None;
    if want(Only::Floods) {
        eprintln!("  floods: whole runs against the load peers, peak RSS beside bytes read …");
        flood_runs = floods::floods(floods::FloodSizes {
            requests: args.flood_requests,
            line_bytes: args.flood_line_bytes,
        })
        .await
        .map_err(|e| errors.push(format!("floods: {e}")))
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
        replay_met: replay
            .as_ref()
            .map(|r| r.total_per_s >= REPLAY_TARGET_PER_S),
        replay,
        record_met: record
            .as_ref()
            .map(|r| r.added_per_message_us <= RECORD_TARGET_US),
        record,
        http_met: http
            .as_ref()
            .map(|h| h.ratio <= HTTP_TARGET_RATIO && h.parity.cases >= h.mcp_tester.cases),
        stdio_met: stdio.as_ref().map(|s| s.ratio <= STDIO_TARGET_RATIO),
        stdio,
        http,
        startup,
        guard_met: guard.as_ref().map(|g| g.files_per_s >= GUARD_TARGET_PER_S),
        guard,
        floods_met: flood_runs
            .as_ref()
            .map(|f| f.iter().all(floods::FloodRun::met)),
        floods: flood_runs,
        skipped,
        rows: Vec::new(),
        errors,
    };
    report.rows = rows(&report);
    crate::outln!("{}", table(&report.rows));
    for s in &report.skipped {
        eprintln!("skipped: {s}");
    }
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

/// The budget the startup part configures, in milliseconds.
const STARTUP_BUDGET_MS: u64 = 200;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
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
    fn replay_part_runs_on_a_small_transcript() {
        let t = crate::protocol::transcript::parse("t", &replay_transcript(500));
        let t = t.map_err(|e| e.to_string());
        assert_eq!(
            t.as_ref()
                .map(|t| (t.header.protocol.as_str(), t.events.len())),
            Ok(("mcp", 501))
        );
        let kinds = replay_session(500, true);
        let notes = kinds
            .iter()
            .filter(|(_, b)| String::from_utf8_lossy(b).contains("notifications/"))
            .count();
        assert!(notes > 10, "{notes}");
        let r = replay_speed(500, 2);
        assert_eq!(
            r.as_ref().map(|r| (r.messages, r.repeats, r.differences)),
            Ok((500, 2, 0))
        );
        let r = r.map_err(|e| e.to_string());
        let rows = r.as_ref().map(replay_rows).unwrap_or_default();
        assert_eq!(rows.len(), 5);
        assert!(rows[0].target.contains("200,000"), "{:?}", rows[0]);
        assert!(matches!(rows[0].met.as_str(), "yes" | "NO"));
        assert!(r.is_ok_and(|r| r.identical > 0 && r.identical < r.messages));
    }

    #[test]
    fn replay_rows_judge_the_whole_comparison() {
        let r = ReplayBench {
            messages: 100_000,
            lines: 100_002,
            bytes: 30 << 20,
            repeats: 5,
            floor_ms: 200.0,
            parse_ms: 150.0,
            compare_ms: 300.0,
            total_ms: 450.0,
            floor_per_s: 500_000.0,
            parse_per_s: 666_667.0,
            compare_per_s: 333_333.0,
            total_per_s: 222_222.0,
            identical: 80_000,
            differences: 0,
        };
        let rows = replay_rows(&r);
        assert_eq!(rows[0].met, "yes");
        assert_eq!(rows[0].ratio, "2.25×");
        assert!(
            rows[0].figure.starts_with("222,222/s (4.50 µs/msg"),
            "{}",
            rows[0].figure
        );
        let slow = ReplayBench {
            total_per_s: 199_999.0,
            ..r
        };
        assert_eq!(replay_rows(&slow)[0].met, "NO");
        assert_eq!(per_s(1_234_567.4), "1,234,567/s");
        assert_eq!(per_s(999.0), "999/s");
    }

    #[test]
    fn record_rows_halve_the_added_round_trip() {
        let floor = Latency::of(&[Duration::from_micros(20)]);
        let proxy = Latency::of(&[Duration::from_micros(50)]);
        let (Some(floor), Some(proxy)) = (floor, proxy) else {
            panic!("no latency")
        };
        let r = RecordBench {
            line_bytes: RECORD_LINE.len(),
            floor,
            proxy,
            added_per_message_us: (proxy.median_us - floor.median_us) / 2.0,
            recorded: (10, 10),
            round_trips: 10,
            transcript_bytes: 4096,
        };
        let rows = record_rows(&r);
        assert_eq!(rows[0].figure, "15.0 µs");
        assert_eq!(rows[0].met, "yes");
        assert_eq!(rows[0].ratio, "2.50× (RTT)");
        let slow = RecordBench {
            added_per_message_us: 20.5,
            ..r
        };
        assert_eq!(record_rows(&slow)[0].met, "NO");
    }

    #[test]
    fn record_line_is_a_200_byte_request() {
        let v: Result<Value, _> = serde_json::from_str(RECORD_LINE);
        assert!(v.is_ok_and(|v| v["method"] == "tools/call"));
        assert!((190..=210).contains(&RECORD_LINE.len()));
    }

    #[test]
    fn parity_counts_executed_cases_and_the_slowest() {
        let report = json!({"cases": {
            "a@mcp-http#1": {"verdict": "pass", "duration_ms": 3},
            "b@mcp-http#1": {"verdict": "warn", "duration_ms": 5592},
            "c@mcp-http#1": {"verdict": "fail", "duration_ms": 310},
            "d@mcp-http#1": {"verdict": "skip", "duration_ms": 0},
            "e@mcp-http#1": {"verdict": "not-run"},
            "f@mcp-http#1": {"verdict": "pass", "duration_ms": 1}
        }});
        let (executed, verdicts, slowest) = parity_counts(&report).unwrap();
        assert_eq!(executed, 4);
        assert_eq!(verdicts, "2 pass, 1 fail, 1 warn, 1 skip, 1 not-run");
        assert_eq!(slowest, Some(("b@mcp-http#1".to_string(), 5592.0)));
        assert!(parity_counts(&json!({"cases": []})).is_err());
    }

    #[test]
    fn mcp_tester_counts_tests_not_skipped() {
        let test = |name: &str, status: &str, secs: u64, nanos: u64| {
            json!({"name": name, "category": "Core", "status": status,
                   "duration": {"secs": secs, "nanos": nanos}, "error": null, "details": null})
        };
        let report = json!({
            "tests": [
                test("Initialize", "Passed", 0, 12_500_000),
                test("Tools list", "Passed", 0, 3_000_000),
                test("Task lifecycle", "Skipped", 0, 0),
                test("Unknown method", "Warning", 1, 500_000_000),
                test("Resources read", "Failed", 0, 1_000_000)
            ],
            "duration": {"secs": 1, "nanos": 0},
            "timestamp": "2026-01-01T00:00:00Z",
            "summary": {"total": 5, "passed": 2, "failed": 1, "warnings": 1, "skipped": 1}
        });
        let pretty = serde_json::to_string_pretty(&report).unwrap();
        let out = format!("Connecting …\n{pretty}\n");
        let (ran, verdicts, slowest) = mcp_tester_counts(&out).unwrap();
        assert_eq!(ran, 4);
        assert_eq!(verdicts, "2 passed, 1 failed, 1 warning, 1 skipped");
        assert_eq!(slowest, Some(("Unknown method".to_string(), 1500.0)));
        assert!(mcp_tester_counts("no report\n").is_err());
        assert!(mcp_tester_counts("{\"summary\": {}}\n").is_err());
    }

    #[test]
    fn http_side_takes_the_median_run_and_per_case_cost() {
        let run = |cases, ms: f64| (cases, ms, "exit status: 1".to_string(), String::new(), None);
        let s = http_side(
            "x".into(),
            vec![run(25, 900.0), run(25, 1100.0), run(25, 1000.0)],
        );
        assert_eq!(s.cases, 25);
        assert_eq!(s.median_ms, 1000.0);
        assert_eq!(s.per_case_ms, 40.0);
        assert_eq!(s.runs_ms, vec![900.0, 1100.0, 1000.0]);
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(&[row("a", "1 µs".into(), "-", "-", "-", "-")]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("measure  figure"));
    }
}
