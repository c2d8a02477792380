//! The start-up budget and the latency part: one request and its answer over a pipe, through a
//! peer process and in memory, and the per-profile wall time (`parity bench`, docs/performance.md).

use super::*;

/// The startup budget measured over real processes: from spawning `parity reference mcp`
/// (a 30 s simulated start under a [`STARTUP_BUDGET_MS`] budget) to the first `status` that
/// reads `STARTUP_BUDGET_EXCEEDED`, polled every 2 ms. The figure includes the process start
/// and the MCP handshake; it is a benchmark, never an assertion.
#[derive(Debug, Clone, Serialize)]
pub struct StartupBench {
    /// The configured budget, ms.
    pub budget_ms: u64,
    /// Launches measured.
    pub runs: usize,
    /// Elapsed time per launch, ms.
    pub elapsed_ms: Vec<f64>,
    /// Median elapsed time, ms.
    pub median_ms: f64,
    /// `median_ms ÷ budget_ms`.
    pub ratio: f64,
}

pub(super) async fn startup_budget(runs: usize) -> Result<StartupBench, String> {
    let dir = tempfile::Builder::new()
        .prefix("parity-bench-startup-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let policy = dir.path().join("slow.toml");
    std::fs::write(
        &policy,
        format!(
            "startup_budget_ms = {STARTUP_BUDGET_MS}\n[runtime]\nkind = \"simulated\"\nstart_delay_ms = 30000\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    let policy = policy.to_string_lossy().into_owned();
    let spec = SurfaceSpec::Mcp {
        spec: self_spec(&["reference", "mcp", "--policy", &policy]),
        revision: "2025-11-25".into(),
        rules: Default::default(),
        http: None,
    };
    let timing = Timing::scaled(1.0);
    let mut elapsed = Vec::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let mut s = LiveSurface::open(&spec, timing).await?;
        let done = loop {
            let c = s.call("status", &serde_json::json!({})).await;
            match c {
                Ok(c)
                    if c.outcome.pointer("/value/reason").and_then(Value::as_str)
                        == Some("STARTUP_BUDGET_EXCEEDED") =>
                {
                    break Ok(t0.elapsed());
                }
                Ok(_) if t0.elapsed() < Duration::from_secs(10) => {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                Ok(c) => break Err(format!("never settled; last {}", c.outcome)),
                Err(e) => break Err(e.text().to_owned()),
            }
        };
        s.close(timing).await;
        elapsed.push(done?.as_secs_f64() * 1000.0);
    }
    let mut sorted = elapsed.clone();
    sorted.sort_by(f64::total_cmp);
    let median_ms = median(&sorted);
    Ok(StartupBench {
        budget_ms: STARTUP_BUDGET_MS,
        runs,
        elapsed_ms: elapsed,
        median_ms,
        ratio: median_ms / STARTUP_BUDGET_MS as f64,
    })
}

/// A spec for this binary with `args`.
pub(super) fn self_spec(args: &[&str]) -> PeerSpec {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "parity".into());
    PeerSpec::new(exe, args.iter().map(|a| a.to_string()).collect())
}

/// Echo mode: copies stdin lines to stdout through tokio's stdio (blocking-pool backed, as the
/// reference server's), flushing after each.
pub(super) async fn echo_stdio() -> i32 {
    echo_lines(tokio::io::stdin(), tokio::io::stdout()).await
}

/// Copies lines from `reader` to `writer`, flushing after each; 0 at EOF, 1 on an I/O error.
pub(super) async fn echo_lines<R, W>(reader: R, mut writer: W) -> i32
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

pub(super) fn short(recv: &Recv) -> String {
    match recv {
        Recv::Line(l) => format!(
            "a line: {}",
            crate::base::util::clip(&String::from_utf8_lossy(&l.bytes), 120)
        ),
        Recv::Eof => "end of stream".into(),
        Recv::Timeout => "nothing before the deadline".into(),
    }
}

/// Round trips per block: the parts of one group take turns block by block (the first part
/// rotating), so a change in machine load hits the figure and its baseline alike.
pub(super) const BLOCK: usize = 100;

/// One thing to measure round trips against.
pub(super) enum Rig {
    /// `send_raw` of [`SMALL_LINE`], `recv` of its echo.
    Echo(Peer),
    /// `send_raw` of a frame (one line with its `\n`), `recv` of its echo.
    Frame(Peer, Vec<u8>),
    /// `tools/call status` with the driver, after the legacy handshake.
    Call(Box<Client>),
}

impl Rig {
    /// An echo rig over a process peer.
    pub(super) fn echo(spec: &PeerSpec) -> Result<Rig, String> {
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
        Ok(Rig::Call(Box::new(client)))
    }

    /// One round trip and its time.
    pub(super) async fn round(&mut self) -> Result<Duration, String> {
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
            Rig::Frame(peer, frame) => {
                let t0 = Instant::now();
                peer.send_raw(frame).await.map_err(|e| e.to_string())?;
                let got = peer.recv(t0 + ROUND_TRIP_DEADLINE).await;
                let dt = t0.elapsed();
                match &got {
                    Recv::Line(l) if frame.strip_suffix(b"\n") == Some(&l.bytes[..]) => Ok(dt),
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

    pub(super) fn peer(&mut self) -> &mut Peer {
        match self {
            Rig::Echo(peer) | Rig::Frame(peer, _) => peer,
            Rig::Call(client) => &mut client.peer,
        }
    }
}

/// [`SMALL_LINE`] with its newline.
pub(super) const ECHO_FRAME: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n";

/// Measures the rigs interleaved: `warmup` unmeasured round trips each, then `iterations`
/// each in blocks of [`BLOCK`], taking turns. Returns one summary per rig, in order.
pub(super) async fn interleaved(
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
pub(super) async fn close(rigs: Vec<Rig>) {
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
pub(super) async fn process_latencies(
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
pub(super) async fn memory_latencies(
    iterations: usize,
    warmup: usize,
) -> Result<Vec<Latency>, String> {
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
pub(super) fn mem_peer(near: tokio::io::DuplexStream) -> Peer {
    let (r, w) = tokio::io::split(near);
    Peer::from_io(r, w, crate::transport::wire::DEFAULT_LINE_CAP)
}

/// Answers each request line with a canned result: `initialize` gets a 2025-11-25 result,
/// anything else the reference's `status` result (same shape and size).
pub(super) async fn canned_responder<R, W>(reader: R, mut writer: W)
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
pub(super) async fn profile_child(runs: usize) -> Result<ProfileRuns, String> {
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
pub(super) async fn profile_in_process(runs: usize) -> Result<ProfileRuns, String> {
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
