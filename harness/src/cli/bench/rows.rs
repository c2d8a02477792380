//! The report tables: the machine, each part's rows (measure, figure, baseline, ratio, target
//! met) and the plain-text table `parity bench` prints.

use super::*;

pub(super) fn machine() -> Machine {
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

pub(super) fn us(v: f64) -> String {
    format!("{v:.1} µs")
}

/// The median, with the caller thread's CPU per round trip when known.
pub(super) fn median_cpu(l: &Latency) -> String {
    match l.caller_cpu_us {
        Some(c) => format!("{} (CPU {c:.1})", us(l.median_us)),
        None => us(l.median_us),
    }
}

pub(super) fn ms(v: f64) -> String {
    format!("{v:.0} ms")
}

pub(super) fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

pub(super) fn yes_no(met: bool) -> String {
    if met { "yes" } else { "NO" }.to_string()
}

pub(super) fn row(
    measure: &str,
    figure: String,
    baseline: &str,
    ratio: &str,
    target: &str,
    met: &str,
) -> Row {
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
    if let Some(f) = &r.floods {
        out.extend(floods::rows(f));
    }
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
    if let Some(rp) = &r.replay {
        out.extend(replay_rows(rp));
    }
    if let Some(rc) = &r.record {
        out.extend(record_rows(rc));
    }
    if let Some(g) = &r.guard {
        out.push(row(
            &format!("guard: {} generated files, files/s", g.files),
            format!("{} ({:.1} ms)", per_s(g.files_per_s), g.scan_ms),
            &format!("plain walk + read {}", per_s(g.walk_per_s)),
            &format!("{:.2}×", g.scan_ms / g.walk_ms.max(1e-9)),
            "≥ 20,000 files/s",
            &yes_no(g.files_per_s >= GUARD_TARGET_PER_S),
        ));
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
    if let Some(b) = &r.startup {
        out.push(row(
            "startup budget: launch → STARTUP_BUDGET_EXCEEDED (median)",
            format!("{:.0} ms", b.median_ms),
            &format!("budget {} ms", b.budget_ms),
            &format!("{:.2}×", b.ratio),
            "-",
            "-",
        ));
    }
    if let Some(h) = &r.http {
        out.extend(http_rows(h));
    }
    if let Some(b) = &r.stdio {
        out.push(row(
            "stdio: parity run --mcp server-everything vs one plain session (median)",
            format!("{} ({} cases)", ms(b.parity_ms), b.cases),
            &format!("session {}", ms(b.session_ms)),
            &format!("{:.2}×", b.ratio),
            &format!("≤ {STDIO_TARGET_RATIO:.1}×"),
            &yes_no(b.ratio <= STDIO_TARGET_RATIO),
        ));
        out.push(row(
            "  server processes started per era (besides the era probes)",
            b.processes.clone(),
            "-",
            "-",
            "-",
            "-",
        ));
    }
    out
}

/// The rows of one generated-equivalence measurement: calls per second against two floor
/// round trips per call (judged on the multi-threaded runtime only), then the breakdown.
pub(super) fn generated_rows(g: &GeneratedBench, floor: Option<Latency>) -> Vec<Row> {
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

/// Messages per second with thousands separators (`412,345/s`).
pub(super) fn per_s(v: f64) -> String {
    let n = v.round().max(0.0) as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out + "/s"
}

/// The rows of the replay part: the whole comparison (parse + compare, judged), then each
/// step, against the floor (`serde_json::from_slice` of every line); ratios are times per
/// message over the floor's.
pub(super) fn replay_rows(r: &ReplayBench) -> Vec<Row> {
    let floor = format!("floor {}", per_s(r.floor_per_s));
    let ratio = |ms: f64| format!("{:.2}×", ms / r.floor_ms.max(1e-9));
    let per_msg = |ms: f64| format!("{:.2} µs/msg", ms * 1e3 / r.messages.max(1) as f64);
    let mut out = vec![row(
        &format!("replay: parse + compare, {} messages, msg/s", r.messages),
        format!(
            "{} ({}, {:.0} ms)",
            per_s(r.total_per_s),
            per_msg(r.total_ms),
            r.total_ms
        ),
        &floor,
        &ratio(r.total_ms),
        "≥ 200,000/s (parse + compare)",
        &yes_no(r.total_per_s >= REPLAY_TARGET_PER_S),
    )];
    for (name, rate, ms) in [
        ("  transcript::parse", r.parse_per_s, r.parse_ms),
        (
            "  Exchange::of_transcript + replay::compare",
            r.compare_per_s,
            r.compare_ms,
        ),
    ] {
        out.push(row(
            name,
            format!("{} ({}, {ms:.0} ms)", per_s(rate), per_msg(ms)),
            &floor,
            &ratio(ms),
            "-",
            "-",
        ));
    }
    out.push(row(
        "  floor: serde_json::from_slice of every line",
        format!(
            "{} ({}, {:.0} ms)",
            per_s(r.floor_per_s),
            per_msg(r.floor_ms),
            r.floor_ms
        ),
        "-",
        "-",
        "-",
        "-",
    ));
    out.push(row(
        "  transcript; messages byte-identical on both sides",
        format!(
            "{} lines, {:.1} MiB; {} of {} ({:.0} %)",
            r.lines,
            r.bytes as f64 / (1 << 20) as f64,
            r.identical,
            r.messages,
            r.identical as f64 * 100.0 / r.messages.max(1) as f64
        ),
        "-",
        "-",
        "-",
        "-",
    ));
    out
}

/// The rows of the record part: the added latency per message (judged), then both round
/// trips.
pub(super) fn record_rows(r: &RecordBench) -> Vec<Row> {
    let f = r.floor;
    let p = r.proxy;
    vec![
        row(
            "record proxy: added latency per message ((proxy − floor) ÷ 2)",
            us(r.added_per_message_us),
            &format!("floor RTT {}", us(f.median_us)),
            &format!("{:.2}× (RTT)", p.median_us / f.median_us.max(1e-9)),
            "≤ 20.0 µs",
            &yes_no(r.added_per_message_us <= RECORD_TARGET_US),
        ),
        row(
            &format!("  floor: {}-byte line through cat, median", r.line_bytes),
            median_cpu(&f),
            "-",
            "-",
            "-",
            "-",
        ),
        row(
            "  through parity record -- cat, median",
            median_cpu(&p),
            &format!("floor {}", us(f.median_us)),
            &format!("{:.2}×", p.median_us / f.median_us.max(1e-9)),
            "-",
            "-",
        ),
        row(
            "  p99: floor / through the proxy",
            format!("{} / {}", us(f.p99_us), us(p.p99_us)),
            "-",
            &format!("{:.2}×", p.p99_us / f.p99_us.max(1e-9)),
            "-",
            "-",
        ),
        row(
            "  recorded c2s / s2c lines; transcript size",
            format!(
                "{} / {} of {}; {:.1} KiB",
                r.recorded.0,
                r.recorded.1,
                r.round_trips,
                r.transcript_bytes as f64 / 1024.0
            ),
            "-",
            "-",
            "-",
            "-",
        ),
    ]
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
