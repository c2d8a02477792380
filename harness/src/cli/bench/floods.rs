//! The floods part of `parity bench` (`--only floods`): whole `parity run`s against peers that
//! send far more than a session needs, with parity's peak RSS beside the traffic it read.
//!
//! Each load runs `parity run --mcp "parity fake <load>"` as a child process over a handful of
//! checks (legacy era), while this process samples the child's `VmHWM` (peak RSS) and `rchar`
//! (bytes read, from `/proc/<pid>/io`: almost all of it the peer's stdout) every 20 ms. The
//! child's JSON report says which verdicts were judged (`pass`, `fail`, `warn`) and which were
//! not (`timeout`, `not-run`). Target (`docs/performance.md`): every load peaks at ≤ 64 MiB
//! and every verdict is judged.

use super::{mib, proc_field, row, self_spec, yes_no, Row, BIG_LINE_TARGET_KIB};
use serde::Serialize;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The checks each load run keeps (`--filter`): a handshake, request-response, a probe judged
/// behind a barrier, and the envelope monitor that reads every frame.
const CHECKS: &[&str] = &[
    "mcp.lifecycle.version-negotiation",
    "mcp.base.ping",
    "mcp.base.parse-error",
    "mcp.stdio.stdout-purity",
];

/// Sizes of the loads.
#[derive(Debug, Clone, Copy)]
pub struct FloodSizes {
    /// Requests the request-flooding peer sends (`PARITY_FAKE_REQUEST_FLOOD`).
    pub requests: u64,
    /// Bytes of the giant line (`PARITY_FAKE_GIANT_LINE_BYTES`).
    pub line_bytes: u64,
}

/// One load's figures.
#[derive(Debug, Clone, Serialize)]
pub struct FloodRun {
    /// What the load is.
    pub load: String,
    /// The `parity fake` peer that sends it (empty for the reference).
    pub peer: String,
    /// Peak RSS of the `parity run` process (last `VmHWM` sampled), KiB.
    pub peak_kib: u64,
    /// Bytes the `parity run` process read (last `rchar` sampled).
    pub read_bytes: u64,
    /// Wall time of the run, s.
    pub seconds: f64,
    /// Verdicts that judged the check (pass, fail, warn).
    pub judged: usize,
    /// Verdicts that did not (timeout, not-run, skip), as `id: verdict`.
    pub unjudged: Vec<String>,
    /// The run's exit status.
    pub exit: String,
}

impl FloodRun {
    /// Whether the load met the target: ≤ 64 MiB and every verdict judged.
    pub fn met(&self) -> bool {
        self.peak_kib <= BIG_LINE_TARGET_KIB && self.unjudged.is_empty() && self.judged > 0
    }
}

/// Runs the reference (the baseline) and the three loads, one after the other.
pub async fn floods(sizes: FloodSizes) -> Result<Vec<FloodRun>, String> {
    let loads = [
        ("no load (the reference)", "", None),
        ("notification flood", "load-notification-flood", None),
        (
            "request flood",
            "benign-request-flood",
            Some((parity_fakes::REQUEST_FLOOD_VAR, sizes.requests.to_string())),
        ),
        (
            "giant line",
            "load-giant-line",
            Some((
                parity_fakes::load::GIANT_LINE_VAR,
                sizes.line_bytes.to_string(),
            )),
        ),
    ];
    let mut out = Vec::new();
    for (load, peer, env) in loads {
        eprintln!("    {load} …");
        out.push(one(load, peer, env).await?);
    }
    Ok(out)
}

async fn one(load: &str, peer: &str, env: Option<(&str, String)>) -> Result<FloodRun, String> {
    let dir = tempfile::Builder::new()
        .prefix("parity-bench-floods-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let report = dir.path().join("report.json");
    let me = self_spec(&[]).program;
    let mut args: Vec<String> = vec![
        "run".into(),
        "--mcp".into(),
        if peer.is_empty() {
            format!("{me} reference mcp")
        } else {
            format!("{me} fake {peer}")
        },
        "--era".into(),
        "legacy".into(),
        "--quiet".into(),
        "--json".into(),
        report.to_string_lossy().into_owned(),
    ];
    for c in CHECKS {
        args.push("--filter".into());
        args.push((*c).into());
    }
    let mut cmd = tokio::process::Command::new(&me);
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if let Some((k, v)) = &env {
        cmd.env(k, v);
    }
    let t0 = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("failed to start `{me} run`: {e}"))?;
    let pid = child.id().ok_or("the run exited at once")?;
    let (mut peak, mut read) = (0u64, 0u64);
    let status = loop {
        if let Some((hwm, rchar)) = sample(pid) {
            peak = peak.max(hwm);
            read = read.max(rchar);
        }
        tokio::select! {
            st = child.wait() => break st.map_err(|e| e.to_string())?,
            () = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    };
    let seconds = t0.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&report)
        .map_err(|e| format!("the {load} run ended with {status} and wrote no report: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("its report: {e}"))?;
    let (mut judged, mut unjudged) = (0, Vec::new());
    if let Some(cases) = v["cases"].as_object() {
        for (id, c) in cases {
            let verdict = c["verdict"].as_str().unwrap_or("");
            match verdict {
                "pass" | "fail" | "warn" => judged += 1,
                _ => unjudged.push(format!("{id}: {verdict}")),
            }
        }
    }
    Ok(FloodRun {
        load: load.to_string(),
        peer: peer.to_string(),
        peak_kib: peak,
        read_bytes: read,
        seconds,
        judged,
        unjudged,
        exit: status.to_string(),
    })
}

/// `(VmHWM KiB, rchar bytes)` of a process, while it runs.
fn sample(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let hwm = proc_field(&status, "VmHWM:")?;
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let rchar = proc_field(&io, "rchar:").unwrap_or(0);
    Some((hwm, rchar))
}

/// The table rows of the floods part.
pub fn rows(runs: &[FloodRun]) -> Vec<Row> {
    let mut out = Vec::new();
    let base = runs.iter().find(|r| r.peer.is_empty()).map(|r| r.peak_kib);
    for r in runs {
        out.push(row(
            &format!("{}: peak RSS of `parity run`", r.load),
            mib(r.peak_kib),
            &base.map_or("-".to_string(), |b| format!("{} (no load)", mib(b))),
            &base.map_or("-".to_string(), |b| {
                format!("{:.2}×", r.peak_kib as f64 / b.max(1) as f64)
            }),
            "≤ 64 MiB, all judged",
            &yes_no(r.met()),
        ));
        out.push(row(
            "  bytes it read from the peer",
            format!("{:.1} MiB", r.read_bytes as f64 / f64::from(1 << 20)),
            "-",
            "-",
            "-",
            "-",
        ));
        out.push(row(
            "  verdicts judged / not judged",
            format!("{} / {}", r.judged, r.unjudged.len()),
            &format!("{:.1} s", r.seconds),
            "-",
            "-",
            "-",
        ));
    }
    out
}
