//! The big-line part: a 1 GiB line read in bounded memory, measured in a child run; and the
//! `/proc` readings the memory figures use.

use super::*;

/// Runs the big-line part in a child process (clean `VmHWM`) and reads its JSON line.
pub(super) async fn big_line_child(bytes: u64) -> Result<BigLine, String> {
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
    Some((
        proc_field(&status, "VmHWM:")?,
        proc_field(&status, "VmRSS:")?,
    ))
}

/// The first number after `name` (`VmHWM:`, `rchar:`) in a `/proc/<pid>/status` or `io` text.
pub(super) fn proc_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
}

/// Reads a `bytes`-long line, a newline and [`SMALL_LINE`] from a shell peer with
/// [`Peer::recv`], watching this process's memory.
pub(super) async fn big_line(bytes: u64) -> Result<BigLine, String> {
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
