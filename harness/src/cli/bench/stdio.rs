//! The stdio part: a whole `parity run` of the reference against one plain session of the same
//! server (`parity bench --only stdio`).

use super::*;

/// The stdio part's figures: `parity run --mcp` (default flags) against server-everything over
/// stdio, beside one plain session of the same server (spawn, `initialize`,
/// `notifications/initialized`, `tools/list`, close stdin, SIGTERM after 300 ms as parity's
/// own sessions do), alternating.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StdioBench {
    /// The server command.
    pub command: String,
    /// Median wall time of `parity run`, from spawn to the end of its stdout, in ms.
    pub parity_ms: f64,
    /// Every parity run's wall time, in ms.
    pub parity_runs_ms: Vec<f64>,
    /// Cases executed by the median run.
    pub cases: usize,
    /// The verdicts of the last run.
    pub verdicts: String,
    /// The `N server process(es) started` notes of the last run, per era.
    pub processes: String,
    /// Median wall time of one plain session, in ms.
    pub session_ms: f64,
    /// Every plain session's wall time, in ms.
    pub session_runs_ms: Vec<f64>,
    /// `parity_ms` ÷ `session_ms`.
    pub ratio: f64,
}

/// One plain session of `spec`: spawn, `initialize`, `notifications/initialized`,
/// `tools/list`, then the close parity's ordinary sessions use. Returns its wall time in ms.
pub(super) async fn plain_session(spec: &PeerSpec) -> Result<f64, String> {
    let t0 = Instant::now();
    let peer = Peer::spawn(spec).map_err(|e| e.to_string())?;
    let mut c = Client::new(peer, Era::Legacy, "2025-11-25", Duration::from_secs(30));
    let init = c
        .initialize("2025-11-25")
        .await
        .map_err(|e| e.to_string())?;
    if init.result().is_none() {
        return Err(format!("initialize got {}", init.describe()));
    }
    let tools = c
        .request("tools/list", serde_json::json!({}))
        .await
        .map_err(|e| e.to_string())?;
    if tools.result().is_none() {
        return Err(format!("tools/list got {}", tools.describe()));
    }
    let grace = ShutdownGrace {
        after_eof: crate::engine::check::CLOSE_AFTER_EOF,
        after_term: Duration::from_secs(1),
    };
    c.peer.shutdown(grace).await;
    Ok(t0.elapsed().as_secs_f64() * 1e3)
}

/// The stdio part (see [`StdioBench`]); skipped when server-everything is not installed.
pub(super) async fn stdio_part(runs: usize) -> Result<StdioBench, HttpError> {
    use HttpError::{Failed, Skipped};
    let root = repo_root().ok_or_else(|| {
        Skipped("no repository root (a directory with tests/interop/install.sh) found".into())
    })?;
    let entry = root.join(EVERYTHING_ENTRY);
    if !entry.is_file() {
        return Err(Skipped(format!(
            "server-everything not found at {} (run tests/interop/install.sh)",
            entry.display()
        )));
    }
    let server = PeerSpec::new(
        "node",
        vec![entry.to_string_lossy().into_owned(), "stdio".into()],
    );
    let dir = tempfile::Builder::new()
        .prefix("parity-bench-stdio-")
        .tempdir()
        .map_err(|e| Failed(format!("cannot create a temporary directory: {e}")))?;
    let json = dir.path().join("report.json");
    let json_arg = json.to_string_lossy().into_owned();
    let cmd = server.display();
    let parity = self_spec(&["run", "--mcp", &cmd, "--json", &json_arg]);
    let (mut p_runs, mut s_runs) = (Vec::new(), Vec::new());
    let (mut cases, mut verdicts, mut processes) = (Vec::new(), String::new(), String::new());
    for round in 0..runs {
        for side in [round % 2, 1 - round % 2] {
            if side == 0 {
                let _ = std::fs::remove_file(&json);
                let (_, ms, status) = run_to_end(&parity).await.map_err(Failed)?;
                let text = std::fs::read_to_string(&json).map_err(|e| {
                    Failed(format!(
                        "`{}` ({status}) wrote no report: {e}",
                        parity.display()
                    ))
                })?;
                let report: Value = serde_json::from_str(&text)
                    .map_err(|e| Failed(format!("parity's JSON report does not parse: {e}")))?;
                let (n, v, _) = parity_counts(&report).map_err(Failed)?;
                cases.push(n);
                verdicts = v;
                processes = report
                    .get("notes")
                    .and_then(Value::as_array)
                    .map(|notes| {
                        notes
                            .iter()
                            .filter_map(Value::as_str)
                            .filter(|n| n.contains("server process(es) started"))
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                    .unwrap_or_default();
                p_runs.push(ms);
            } else {
                s_runs.push(plain_session(&server).await.map_err(Failed)?);
            }
        }
    }
    let mut p_sorted = p_runs.clone();
    p_sorted.sort_by(f64::total_cmp);
    let mut s_sorted = s_runs.clone();
    s_sorted.sort_by(f64::total_cmp);
    cases.sort_unstable();
    let (parity_ms, session_ms) = (median(&p_sorted), median(&s_sorted));
    Ok(StdioBench {
        command: cmd,
        parity_ms,
        parity_runs_ms: p_runs,
        cases: cases.get(cases.len() / 2).copied().unwrap_or(0),
        verdicts,
        processes,
        session_ms,
        session_runs_ms: s_runs,
        ratio: parity_ms / session_ms.max(1e-9),
    })
}

/// Target for the stdio part: the default run's wall at most this many plain sessions.
pub const STDIO_TARGET_RATIO: f64 = 5.0;
