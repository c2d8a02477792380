//! The HTTP part: the mcp-http profile against server-everything beside crates.io mcp-tester on
//! the same server (`parity bench --only http`).

// Without the `http` feature the part is skipped, and its helpers are kept for the tests.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use super::*;

/// One side of the http part: a checker run `runs_ms.len()` times against the same server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HttpSide {
    /// The command line (with the URL).
    pub command: String,
    /// Cases of the median run (parity: executed cases; mcp-tester: tests not skipped).
    pub cases: usize,
    /// Cases of every run, in order (they should not vary).
    pub cases_per_run: Vec<usize>,
    /// Wall time of every run from spawn to the end of its stdout, in ms, in order.
    pub runs_ms: Vec<f64>,
    /// Median of `runs_ms`.
    pub median_ms: f64,
    /// `median_ms` ÷ `cases`.
    pub per_case_ms: f64,
    /// How each run ended (`exit status: 1`: some check failed).
    pub statuses: Vec<String>,
    /// The verdicts of the last run, e.g. `17 pass, 2 fail, 6 warn`.
    pub verdicts: String,
    /// The slowest case of the last run and its time in ms, when the output has case times.
    pub slowest_case: Option<(String, f64)>,
}

/// The http part's figures: parity's mcp-http profile and `mcp-tester conformance` against
/// one server-everything in Streamable HTTP mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HttpBench {
    /// The server's endpoint.
    pub url: String,
    /// server-everything's version (from its package.json).
    pub server_version: String,
    /// `parity run --profile mcp-http`.
    pub parity: HttpSide,
    /// `mcp-tester conformance`.
    pub mcp_tester: HttpSide,
    /// parity's median total wall ÷ mcp-tester's (lower is better); the target also asks
    /// parity to execute at least as many cases.
    pub ratio: f64,
}

/// Why the http part has no figures.
#[derive(Debug)]
pub(super) enum HttpError {
    /// Something it needs is not installed: skipped, not a failure.
    Skipped(String),
    /// It could not run.
    Failed(String),
}

/// The repository root: the first ancestor of the working directory, of this executable or
/// of the crate's source directory that holds `tests/interop/install.sh`.
pub(super) fn repo_root() -> Option<PathBuf> {
    let starts = [
        std::env::current_dir().ok(),
        std::env::current_exe().ok(),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR"))),
    ];
    starts.into_iter().flatten().find_map(|start| {
        start
            .ancestors()
            .find(|d| d.join("tests/interop/install.sh").is_file())
            .map(PathBuf::from)
    })
}

/// The mcp-tester binary: `$MCP_TESTER`, else [`MCP_TESTER_BIN`] under the root.
pub(super) fn mcp_tester_path(root: &std::path::Path) -> Result<PathBuf, String> {
    let path = match std::env::var_os("MCP_TESTER") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => root.join(MCP_TESTER_BIN),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "mcp-tester {MCP_TESTER_VERSION} not found at {} (run \
             tests/interop/install-mcp-tester.sh, or set MCP_TESTER)",
            path.display()
        ))
    }
}

/// Counts of one run: cases, the verdicts as text, and the slowest case with its
/// milliseconds.
pub type RunCounts = (usize, String, Option<(String, f64)>);

/// One timed run of a side: cases, milliseconds, exit status, verdicts, slowest case.
pub(super) type TimedRun = (usize, f64, String, String, Option<(String, f64)>);

/// Counts of a `parity run --json` report: `(executed, verdicts, slowest case)`, where
/// executed cases are those with verdict pass, fail, warn, timeout or flaky (as
/// [`crate::engine::run::RunReport::executed`]) and verdicts reads `17 pass, 2 fail, 6 warn`.
pub fn parity_counts(report: &Value) -> Result<RunCounts, String> {
    let cases = report
        .get("cases")
        .and_then(Value::as_object)
        .ok_or("the report has no `cases` object")?;
    let mut counts: Vec<(String, usize)> = Vec::new();
    let mut slowest: Option<(String, f64)> = None;
    for (id, case) in cases {
        let verdict = case.get("verdict").and_then(Value::as_str).unwrap_or("?");
        match counts.iter_mut().find(|(v, _)| v == verdict) {
            Some((_, n)) => *n += 1,
            None => counts.push((verdict.to_string(), 1)),
        }
        if let Some(ms) = case.get("duration_ms").and_then(Value::as_f64) {
            if slowest.as_ref().is_none_or(|(_, s)| ms > *s) {
                slowest = Some((id.clone(), ms));
            }
        }
    }
    let executed = counts
        .iter()
        .filter(|(v, _)| matches!(v.as_str(), "pass" | "fail" | "warn" | "timeout" | "flaky"))
        .map(|(_, n)| n)
        .sum();
    let order = [
        "pass", "fail", "warn", "timeout", "flaky", "skip", "not-run",
    ];
    counts.sort_by_key(|(v, _)| order.iter().position(|o| o == v).unwrap_or(order.len()));
    let verdicts = counts
        .iter()
        .map(|(v, n)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok((executed, verdicts, slowest))
}

/// Counts of `mcp-tester … --format json` output (one pretty-printed `TestReport`, possibly
/// after other lines): `(tests run, verdicts, slowest test)`, where tests run are those not
/// `Skipped`, and verdicts reads `8 passed, 0 failed, 1 warning, 2 skipped`.
pub fn mcp_tester_counts(stdout: &str) -> Result<RunCounts, String> {
    let start = stdout
        .lines()
        .scan(0usize, |at, l| {
            let here = *at;
            *at += l.len() + 1;
            Some((here, l))
        })
        .find(|(_, l)| l.starts_with('{'))
        .map(|(at, _)| at)
        .ok_or("mcp-tester printed no JSON report")?;
    let report: Value = serde_json::from_str(stdout[start..].trim_end())
        .map_err(|e| format!("mcp-tester's JSON report does not parse: {e}"))?;
    let tests = report
        .get("tests")
        .and_then(Value::as_array)
        .ok_or("mcp-tester's report has no `tests` array")?;
    let status = |t: &Value| {
        t.get("status")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let count = |s: &str| tests.iter().filter(|t| status(t) == s).count();
    let skipped = count("Skipped");
    let verdicts = format!(
        "{} passed, {} failed, {} warning, {skipped} skipped",
        count("Passed"),
        count("Failed"),
        count("Warning")
    );
    // `duration` is a serde `std::time::Duration`: `{"secs": s, "nanos": n}`.
    let ms = |t: &Value| {
        let d = t.get("duration")?;
        Some(d.get("secs")?.as_f64()? * 1e3 + d.get("nanos")?.as_f64()? / 1e6)
    };
    let slowest = tests
        .iter()
        .filter_map(|t| Some((t.get("name")?.as_str()?.to_owned(), ms(t)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    Ok((tests.len() - skipped, verdicts, slowest))
}

/// Runs `spec` to the end of its stdout (stdin open, untouched) and returns its stdout, the
/// wall time from spawn to the end of stdout in ms, and how it ended.
pub(super) async fn run_to_end(spec: &PeerSpec) -> Result<(String, f64, String), String> {
    let t0 = Instant::now();
    let mut peer = Peer::spawn(spec).map_err(|e| e.to_string())?;
    let deadline = t0 + HTTP_RUN_DEADLINE;
    let mut out = Vec::new();
    let ended = loop {
        match peer.recv(deadline).await {
            Recv::Line(l) => {
                out.extend_from_slice(&l.bytes);
                out.push(b'\n');
            }
            Recv::Eof => break Ok(t0.elapsed().as_secs_f64() * 1e3),
            Recv::Timeout => {
                break Err(format!(
                    "`{}` ran past {} s",
                    spec.display(),
                    HTTP_RUN_DEADLINE.as_secs()
                ))
            }
        }
    };
    let grace = ShutdownGrace {
        after_eof: Duration::from_secs(5),
        after_term: Duration::from_secs(1),
    };
    let status = peer.shutdown(grace).await.status.unwrap_or_default();
    Ok((String::from_utf8_lossy(&out).into_owned(), ended?, status))
}

/// Summarises one side's runs (`(cases, ms, status, verdicts, slowest)` each, in order).
pub(super) fn http_side(command: String, runs: Vec<TimedRun>) -> HttpSide {
    let mut sorted: Vec<f64> = runs.iter().map(|r| r.1).collect();
    sorted.sort_by(f64::total_cmp);
    let median_ms = median(&sorted);
    let mut cases_sorted: Vec<usize> = runs.iter().map(|r| r.0).collect();
    cases_sorted.sort_unstable();
    let cases = cases_sorted
        .get(cases_sorted.len() / 2)
        .copied()
        .unwrap_or(0);
    let last = runs.last();
    HttpSide {
        command,
        cases,
        cases_per_run: runs.iter().map(|r| r.0).collect(),
        median_ms,
        per_case_ms: median_ms / cases.max(1) as f64,
        statuses: runs.iter().map(|r| r.2.clone()).collect(),
        verdicts: last.map(|r| r.3.clone()).unwrap_or_default(),
        slowest_case: last.and_then(|r| r.4.clone()),
        runs_ms: runs.into_iter().map(|r| r.1).collect(),
    }
}

/// The http part of a `parity` built without the `http` feature: skipped, saying why.
#[cfg(not(feature = "http"))]
pub(super) async fn http_part(_runs: usize) -> Result<HttpBench, HttpError> {
    Err(HttpError::Skipped(
        crate::transport::http_bridge::NO_HTTP.into(),
    ))
}

/// The http part: server-everything in Streamable HTTP mode on a free loopback port, then
/// `runs` rounds of `parity run --profile mcp-http` and `mcp-tester conformance` against it
/// (the order alternating round by round), then the server is shut down.
#[cfg(feature = "http")]
pub(super) async fn http_part(runs: usize) -> Result<HttpBench, HttpError> {
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
    let package = entry
        .parent()
        .and_then(|d| d.parent())
        .map(|d| d.join("package.json"));
    let server_version = package
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|p| p.get("version")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    let tester = mcp_tester_path(&root).map_err(Skipped)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| Failed(format!("no free loopback port: {e}")))?
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    // server-everything listens on every interface for a bare PORT; a preload binds such
    // listeners to 127.0.0.1 so the benchmark's traffic stays on loopback (as
    // tests/interop/run.sh does).
    let preload_dir = tempfile::Builder::new()
        .prefix("parity-bench-http-")
        .tempdir()
        .map_err(|e| Failed(format!("cannot create a temporary directory: {e}")))?;
    let preload = preload_dir.path().join("listen-loopback.cjs");
    std::fs::write(&preload, LOOPBACK_PRELOAD)
        .map_err(|e| Failed(format!("cannot write {}: {e}", preload.display())))?;
    let mut spec = PeerSpec::new(
        "node",
        vec![
            "--require".into(),
            preload.to_string_lossy().into_owned(),
            entry.to_string_lossy().into_owned(),
            "streamableHttp".into(),
        ],
    );
    spec.env.push(("PORT".into(), port.to_string()));
    let mut server = Peer::spawn(&spec).map_err(|e| Skipped(format!("{e} (is node on PATH?)")))?;
    // Wait until it accepts connections.
    let t0 = Instant::now();
    let ready = loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break Ok(());
        }
        if let Some(st) = server.try_exited() {
            break Err(format!(
                "`{}` ended ({st}) before accepting connections",
                spec.display()
            ));
        }
        if t0.elapsed() > HTTP_SERVER_START_DEADLINE {
            break Err(format!(
                "`{}` accepted no connection on port {port} within {} s",
                spec.display(),
                HTTP_SERVER_START_DEADLINE.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // The server logs a stdout line per request and blocks once the pipe is full: a task
    // reads its stdout until told to stop, then shuts it down.
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let drain = tokio::spawn(async move {
        let far = Instant::now() + Duration::from_secs(24 * 3600);
        let mut eof = false;
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                r = server.recv(far), if !eof => eof = r == Recv::Eof,
            }
        }
        let grace = ShutdownGrace {
            after_eof: Duration::from_millis(200),
            after_term: Duration::from_secs(2),
        };
        server.shutdown(grace).await
    });
    let result = match ready {
        Ok(()) => http_rounds(runs, &url, &tester).await.map_err(Failed),
        Err(e) => Err(Failed(e)),
    };
    let _ = stop.send(());
    let _ = drain.await;
    let (parity, mcp_tester) = result?;
    Ok(HttpBench {
        url,
        server_version,
        ratio: parity.median_ms / mcp_tester.median_ms.max(1e-9),
        parity,
        mcp_tester,
    })
}

/// `runs` rounds of both checkers against `url`; parity first in even rounds, mcp-tester
/// first in odd ones.
pub(super) async fn http_rounds(
    runs: usize,
    url: &str,
    tester: &std::path::Path,
) -> Result<(HttpSide, HttpSide), String> {
    let dir = tempfile::Builder::new()
        .prefix("parity-bench-http-")
        .tempdir()
        .map_err(|e| format!("failed to create a temporary directory: {e}"))?;
    let json = dir.path().join("report.json");
    let jobs = HTTP_JOBS.to_string();
    let json_arg = json.to_string_lossy();
    let parity = self_spec(&[
        "run",
        "--url",
        url,
        "--profile",
        "mcp-http",
        "--jobs",
        &jobs,
        "--json",
        &json_arg,
    ]);
    let tester = PeerSpec::new(
        tester.to_string_lossy(),
        ["--format", "json", "conformance", url]
            .map(String::from)
            .to_vec(),
    );
    let (mut p_runs, mut t_runs) = (Vec::new(), Vec::new());
    for round in 0..runs {
        for side in [round % 2, 1 - round % 2] {
            if side == 0 {
                let _ = std::fs::remove_file(&json);
                let (_, ms, status) = run_to_end(&parity).await?;
                let text = std::fs::read_to_string(&json).map_err(|e| {
                    format!("`{}` ({status}) wrote no report: {e}", parity.display())
                })?;
                let report: Value = serde_json::from_str(&text)
                    .map_err(|e| format!("parity's JSON report does not parse: {e}"))?;
                let (cases, verdicts, slowest) = parity_counts(&report)?;
                p_runs.push((cases, ms, status, verdicts, slowest));
            } else {
                let (out, ms, status) = run_to_end(&tester).await?;
                let (cases, verdicts, slowest) = mcp_tester_counts(&out)
                    .map_err(|e| format!("`{}` ({status}): {e}", tester.display()))?;
                t_runs.push((cases, ms, status, verdicts, slowest));
            }
        }
    }
    let (p, t) = (
        http_side(parity.display(), p_runs),
        http_side(tester.display(), t_runs),
    );
    if p.cases == 0 || t.cases == 0 {
        return Err(format!(
            "a side ran no case (parity {}, mcp-tester {})",
            p.cases, t.cases
        ));
    }
    Ok((p, t))
}

/// The rows of the http part: parity's cost per case against mcp-tester's (judged), then each
/// side's cases and wall time, verdicts and slowest case.
pub(super) fn http_rows(h: &HttpBench) -> Vec<Row> {
    let (p, t) = (&h.parity, &h.mcp_tester);
    let slowest = |s: &HttpSide| {
        s.slowest_case
            .as_ref()
            .map(|(id, ms)| format!("{id} {ms:.0} ms"))
            .unwrap_or("-".into())
    };
    let runs = |s: &HttpSide| {
        s.runs_ms
            .iter()
            .map(|m| format!("{m:.0}"))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    vec![
        row(
            &format!(
                "http: parity mcp-http total wall vs mcp-tester {MCP_TESTER_VERSION} conformance"
            ),
            format!("{} ({} cases)", ms(p.median_ms), p.cases),
            &format!("mcp-tester {} ({} tests)", ms(t.median_ms), t.cases),
            &format!("{:.2}×", h.ratio),
            &format!("≤ {HTTP_TARGET_RATIO:.2}×, ≥ as many cases"),
            &yes_no(h.ratio <= HTTP_TARGET_RATIO && p.cases >= t.cases),
        ),
        row(
            &format!(
                "  parity run --profile mcp-http --jobs {HTTP_JOBS}: cases, median of {}",
                p.runs_ms.len()
            ),
            format!("{} cases, {}", p.cases, ms(p.median_ms)),
            &format!("runs {} ms", runs(p)),
            "-",
            "-",
            "-",
        ),
        row(
            &format!(
                "  mcp-tester conformance: tests run, median of {}",
                t.runs_ms.len()
            ),
            format!("{} tests, {}", t.cases, ms(t.median_ms)),
            &format!("runs {} ms", runs(t)),
            &format!("{:.2}× (wall)", p.median_ms / t.median_ms.max(1e-9)),
            "-",
            "-",
        ),
        row(
            "  verdicts: parity / mcp-tester",
            format!("{} / {}", p.verdicts, t.verdicts),
            "-",
            "-",
            "-",
            "-",
        ),
        row(
            "  slowest case: parity / mcp-tester",
            format!("{} / {}", slowest(p), slowest(t)),
            "-",
            "-",
            "-",
            "-",
        ),
        row(
            "  server",
            format!("server-everything {} at {}", h.server_version, h.url),
            "-",
            "-",
            "-",
            "-",
        ),
    ]
}

/// Target for the http part: parity's total wall at most this factor of mcp-tester's, while
/// executing at least as many cases.
pub const HTTP_TARGET_RATIO: f64 = 1.0;
/// The `mcp-tester` release the http part compares with (`tests/interop/install-mcp-tester.sh`).
pub const MCP_TESTER_VERSION: &str = "0.8.0";
/// `--jobs` of the http part's `parity run` (the default of `parity run`).
pub const HTTP_JOBS: usize = 8;
/// server-everything's entry point, relative to the repository root.
pub(super) const EVERYTHING_ENTRY: &str =
    "tests/interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
/// Where `tests/interop/install-mcp-tester.sh` installs mcp-tester, relative to the root.
pub(super) const MCP_TESTER_BIN: &str = "target/mcp-tester/bin/mcp-tester";
/// Deadline for one checker run of the http part.
pub(super) const HTTP_RUN_DEADLINE: Duration = Duration::from_secs(300);
/// Deadline for server-everything to accept connections.
pub(super) const HTTP_SERVER_START_DEADLINE: Duration = Duration::from_secs(30);
