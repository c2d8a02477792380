//! Bad peers (hang, huge line, binary garbage, stderr flood, exit mid-call, a `setsid`
//! grandchild): each gets a verdict within its deadline, the run goes on, `parity` never dies of
//! a signal, and no descendant of a peer outlives the run.
//!
//! "No descendant outlives the run" is checked precisely: the harness tags every peer it starts
//! (and so every descendant) with `PARITY_PEER_MARK=<harness pid>-<n>`, so after a run exits we
//! look for live processes whose marker starts with that run's own pid. Runs of other tests,
//! in parallel, carry other pids.
//!
//! The runs are serialized (one lock) so that six runs, each with up to eight peers, do not
//! compete for two cores; deadlines are upper bounds, never timed assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{fake_cmd, kill_marked, kill_pid, marked_processes, parity, run_json, Run};
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `parity run --mcp "<parity> fake <fault>" <extra>` with a JSON report, and checks what
/// every bad-peer run must hold: it exited (no signal) with one of `codes`, the report's
/// `exit_code` agrees, and no process carrying this run's peer marker is still alive.
fn run_bad(fault: &str, extra: &[&str], codes: &[i32]) -> Run {
    let mcp = fake_cmd(fault);
    let mut args = vec!["run", "--mcp", &mcp];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    let prefix = format!("{}-", r.pid);
    let left = marked_processes(&prefix);
    // Clean up before asserting, so a failure does not leak processes into other tests.
    kill_marked(&prefix);
    assert!(
        left.is_empty(),
        "{fault}: processes of this run outlived it: {left:?}\n{r}"
    );
    assert_eq!(r.signal, None, "{fault}: parity died of a signal\n{r}");
    assert!(
        r.code.is_some_and(|c| codes.contains(&c)),
        "{fault}: exit code {:?}, expected one of {codes:?}\n{r}",
        r.code
    );
    if let Some(report) = &r.report {
        assert_eq!(
            report.get("exit_code").and_then(|v| v.as_i64()),
            r.code.map(i64::from),
            "{fault}: report exit_code\n{r}"
        );
    }
    r
}

fn case(check: &str, rev: &str) -> String {
    format!("{check}@mcp-stdio#{rev}")
}

/// Asserts every reported case got a verdict other than `timeout` (a hang would show as one).
fn no_case_timed_out(r: &Run) {
    let timed_out: Vec<&String> = r
        .cases()
        .iter()
        .filter(|(_, c)| c.get("verdict").and_then(|v| v.as_str()) == Some("timeout"))
        .map(|(id, _)| id)
        .collect();
    assert!(timed_out.is_empty(), "cases timed out: {timed_out:?}\n{r}");
}

#[test]
fn hang_could_not_run_and_is_killed() {
    let _g = serial();
    let r = run_bad("hang", &["--timeout-multiplier", "0.3"], &[3]);
    assert!(r.cases().is_empty(), "{r}");
    assert!(r.stdout.contains("no check executed"), "{r}");
    let notes = r
        .report
        .as_ref()
        .and_then(|v| v.get("notes"))
        .map(|n| n.to_string())
        .unwrap_or_default();
    assert!(notes.contains("no response before the deadline"), "{r}");
}

#[test]
fn huge_line_fails_stdout_purity_without_crashing() {
    let _g = serial();
    // Only the monitors' sessions and the era probes: four 64 MiB lines instead of ~100. The
    // multiplier is generous because a debug harness needs about a second to read two 64 MiB
    // lines at once; with 0.3 the 1.5 s message deadline makes the outcome depend on load.
    let r = run_bad(
        "huge-line",
        &[
            "--filter",
            "mcp.stdio.*",
            "--timeout-multiplier",
            "3",
            "--jobs",
            "2",
        ],
        &[1],
    );
    for rev in [LEGACY, MODERN] {
        let id = case("mcp.stdio.stdout-purity", rev);
        assert_eq!(r.verdict(&id), Some("fail"), "{id}\n{r}");
        let message = r.cases()[&id]["message"].as_str().unwrap_or("").to_string();
        assert!(
            message.contains("not an MCP message"),
            "{id}: the message says why\n{r}"
        );
    }
    no_case_timed_out(&r);
}

#[test]
fn huge_line_full_run_at_short_deadlines_ends_with_a_verdict() {
    let _g = serial();
    // Whatever the load, the run ends: either no era was detected in time (3) or checks ran and
    // stdout purity failed (1). It never passes and never crashes.
    let r = run_bad("huge-line", &["--timeout-multiplier", "0.3"], &[1, 3]);
    for (id, verdict) in r.verdicts_of("mcp.stdio.stdout-purity") {
        assert_eq!(verdict, "fail", "{id}\n{r}");
    }
    if r.code == Some(1) {
        assert!(!r.verdicts_of("mcp.stdio.stdout-purity").is_empty(), "{r}");
    }
}

#[test]
fn binary_garbage_fails_purity_and_utf8_and_the_run_goes_on() {
    let _g = serial();
    let r = run_bad("binary-garbage", &["--timeout-multiplier", "1"], &[1]);
    for rev in [LEGACY, MODERN] {
        for check in ["mcp.stdio.stdout-purity", "mcp.stdio.utf8"] {
            let id = case(check, rev);
            assert_eq!(r.verdict(&id), Some("fail"), "{id}\n{r}");
        }
        // The garbage precedes the first message only; the session still works.
        for check in ["mcp.tools.input-schema", "mcp.tools.name-format"] {
            let id = case(check, rev);
            assert_eq!(r.verdict(&id), Some("pass"), "{id}\n{r}");
        }
    }
    no_case_timed_out(&r);
}

#[test]
fn stderr_flood_never_stalls_the_protocol() {
    let _g = serial();
    let r = run_bad("stderr-flood", &["--timeout-multiplier", "2"], &[0]);
    let cases = r.cases();
    assert!(cases.len() > 20, "{r}");
    for rev in [LEGACY, MODERN] {
        assert!(cases.keys().any(|id| id.ends_with(rev)), "{rev}\n{r}");
    }
    // Every case passes, or does not apply to a non-reference target (skip).
    let bad: Vec<(&String, String)> = cases
        .iter()
        .map(|(id, c)| (id, c["verdict"].as_str().unwrap_or("").to_string()))
        .filter(|(_, v)| v != "pass" && v != "skip")
        .collect();
    assert!(bad.is_empty(), "{bad:?}\n{r}");
    let passed = cases.values().filter(|c| c["verdict"] == "pass").count();
    assert!(passed > 20, "only {passed} cases passed\n{r}");
}

#[test]
fn exit_mid_call_gives_the_tool_checks_a_verdict() {
    let _g = serial();
    // Declaring the reference's slow call makes the cancellation check call a tool too.
    let r = run_bad(
        "exit-mid-call",
        &[
            // The reference's tools are annotated: its read-only ones may be called.
            "--call-tools",
            "read-only",
            "--timeout-multiplier",
            "1",
            "--slow-call",
            r#"{"name":"exec","arguments":{"argv":["sleep","30"]}}"#,
        ],
        &[1],
    );
    no_case_timed_out(&r);
    for rev in [LEGACY, MODERN] {
        for check in ["mcp.tools.unknown-tool", "mcp.tools.invalid-arguments"] {
            let id = case(check, rev);
            let c = &r.cases()[&id];
            assert!(
                matches!(c["verdict"].as_str(), Some("warn") | Some("fail")),
                "{id}: {c}\n{r}"
            );
            assert!(
                c["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("closed stdout"),
                "{id}: {c}"
            );
        }
        // The call itself stops the server, before parity sends the cancellation 50 ms later:
        // cancellation cannot be judged. Only if the server were slower than that to read the
        // call would the cancellation reach it first, and its exit then be a fail.
        let id = case("mcp.base.cancellation", rev);
        let c = &r.cases()[&id];
        let message = c["message"].as_str().unwrap_or("");
        match c["verdict"].as_str() {
            Some("not-run") => assert!(
                message.contains("during the declared slow call, before it could be cancelled")
                    && message.contains("exit status: 3"),
                "{id}: {c}"
            ),
            Some("fail") => assert!(message.contains("closed its stdout"), "{id}: {c}"),
            other => panic!("{id}: {other:?}\n{r}"),
        }
        // Checks that never call a tool still pass: the run went on.
        let id = case("mcp.tools.pagination", rev);
        assert_eq!(r.verdict(&id), Some("pass"), "{id}\n{r}");
    }
}

#[test]
fn setsid_child_does_not_outlive_the_run() {
    let _g = serial();
    let r = run_bad("setsid-child", &["--timeout-multiplier", "1"], &[0]);
    // run_bad already proved no marked process is left; say it once more about `sleep 600`,
    // the grandchild that left the peer's process group.
    let sleepers: Vec<_> = marked_processes(&format!("{}-", r.pid))
        .into_iter()
        .filter(|p| p.cmdline == "sleep 600")
        .collect();
    assert!(sleepers.is_empty(), "{sleepers:?}\n{r}");
    assert!(r.cases().len() > 20, "the run went on\n{r}");
}

/// The faults really are what the tests above assume; otherwise those tests would pass
/// vacuously. Each fake is started directly, with a marker of this test's own.
#[test]
fn the_bad_peers_are_really_bad() {
    let _g = serial();
    let deadline = Duration::from_secs(60);
    let spawn = |fault: &str, mark: &str| {
        Command::new(parity())
            .args(["fake", fault])
            .env(common::MARKER_VAR, mark)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fake")
    };
    let me = std::process::id();

    // huge-line: the first stdout line is 64 MiB.
    let mut c = spawn("huge-line", &format!("parity-tests-{me}-huge"));
    let mut out = BufReader::new(c.stdout.take().expect("stdout"));
    let mut line = Vec::new();
    out.read_until(b'\n', &mut line).expect("read");
    assert_eq!(line.len(), 64 * 1024 * 1024 + 1);
    let _ = c.kill();
    let _ = c.wait();

    // binary-garbage: the first bytes on stdout are not UTF-8.
    let mut c = spawn("binary-garbage", &format!("parity-tests-{me}-garbage"));
    let mut first = vec![0u8; 4096];
    c.stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("read");
    assert!(std::str::from_utf8(&first).is_err());
    let _ = c.kill();
    let _ = c.wait();

    // stderr-flood: more than a MiB of stderr while stdin is still open.
    let mut c = spawn("stderr-flood", &format!("parity-tests-{me}-flood"));
    let mut err = c.stderr.take().expect("stderr");
    let mut seen = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    let t0 = Instant::now();
    while seen <= 1 << 20 && t0.elapsed() < deadline {
        match err.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen += n,
        }
    }
    let _ = c.kill();
    let _ = c.wait();
    assert!(seen > 1 << 20, "stderr-flood wrote only {seen} bytes");

    // setsid-child: a `sleep 600` carrying the marker, in a session of its own.
    let mark = format!("parity-tests-{me}-setsid");
    let mut c = spawn("setsid-child", &mark);
    let t0 = Instant::now();
    let found = loop {
        let found: Vec<_> = marked_processes(&mark)
            .into_iter()
            .filter(|p| p.cmdline == "sleep 600")
            .collect();
        if !found.is_empty() || t0.elapsed() > deadline {
            break found;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let fake_sid = marked_processes(&mark)
        .into_iter()
        .find(|p| p.pid as u32 == c.id())
        .map(|p| p.sid);
    let _ = c.kill();
    let _ = c.wait();
    for p in &found {
        kill_pid(p.pid);
    }
    kill_marked(&mark);
    assert_eq!(found.len(), 1, "setsid-child started no `sleep 600`");
    assert_ne!(
        Some(found[0].sid),
        fake_sid,
        "the grandchild runs in a session of its own"
    );
}

/// No message or note of a report carries Rust `Debug` output.
fn no_debug_output(r: &Run) {
    for (id, c) in r.cases() {
        let m = c["message"].as_str().unwrap_or("");
        for token in ["None", "Some(", "(none)"] {
            assert!(!m.contains(token), "{id}: {token} in {m:?}\n{r}");
        }
    }
}

/// A server that takes 7 s to start (longer than the 5 s per-message deadline) gets the
/// verdicts of the reference, with default flags and no not-run: start-up is its own phase.
#[test]
fn a_slow_starting_server_gets_verdicts_not_not_run() {
    let _g = serial();
    let r = run_bad(
        "benign-slow-start",
        &[
            "--filter",
            "mcp.lifecycle.version-negotiation",
            "--filter",
            "mcp.base.ping",
            "--era",
            "legacy",
        ],
        &[0],
    );
    for check in ["mcp.lifecycle.version-negotiation", "mcp.base.ping"] {
        assert_eq!(
            r.verdict(&case(check, LEGACY)),
            Some("pass"),
            "{check}\n{r}"
        );
    }
    let report = r.report.as_ref().unwrap();
    let ms = report["startup_ms"]["legacy"].as_u64().unwrap_or(0);
    assert!(ms >= 7000, "the measured start-up is reported: {ms}\n{r}");
    let notes = report["notes"].to_string();
    assert!(notes.contains("start-up: the server answered"), "{r}");
}

/// A server that reads an unparsable line and answers nothing fails mcp.base.parse-error on
/// the barrier's proof (it answered a request sent after the line), not on a deadline.
#[test]
fn a_server_that_ignores_garbage_fails_parse_error_on_the_barriers_proof() {
    let _g = serial();
    let r = run_bad(
        "garbage-ignored",
        &["--filter", "mcp.base.parse-error"],
        &[1],
    );
    for rev in [LEGACY, MODERN] {
        let id = case("mcp.base.parse-error", rev);
        assert_eq!(r.verdict(&id), Some("fail"), "{id}\n{r}");
        let c = &r.cases()[&id];
        let m = c["message"].as_str().unwrap_or("");
        assert!(m.contains("answered the request sent after it"), "{m}");
        assert!(
            c["quote"]
                .as_str()
                .unwrap_or("")
                .contains("the Server MUST reply with a Response"),
            "{c}"
        );
    }
    no_debug_output(&r);
}

/// A server that exits mid-case is reported with its exit status, never as a bare
/// "Broken pipe".
#[test]
fn a_server_that_exits_mid_case_says_how_it_ended() {
    let _g = serial();
    let r = run_bad("garbage-exits", &["--filter", "mcp.base.parse-error"], &[1]);
    for rev in [LEGACY, MODERN] {
        let id = case("mcp.base.parse-error", rev);
        let m = r.cases()[&id]["message"].as_str().unwrap_or("").to_string();
        assert!(m.contains("exit status"), "{id}: {m}\n{r}");
    }
}

/// Correct but unusual servers pass: error responses without `id` from 2025-11-25, and
/// errors answered after the next response (out of order).
#[test]
fn benign_servers_pass_the_envelope_checks() {
    let _g = serial();
    for peer in ["benign-idless-errors", "benign-late-errors"] {
        let r = run_bad(
            peer,
            &[
                "--filter",
                "mcp.base.parse-error",
                "--filter",
                "mcp.base.invalid-request",
                "--filter",
                "mcp.stdio.stdout-purity",
                "--filter",
                "mcp.base.message-schema",
            ],
            &[0],
        );
        assert!(r.cases().len() >= 8, "{peer}\n{r}");
        for (id, c) in r.cases() {
            assert_eq!(c["verdict"], "pass", "{peer}: {id}: {c}\n{r}");
        }
    }
}

/// The deliberately malformed requests of mcp.modern.meta-required are judged by that check
/// alone: a server that serves them fails it, and neither shape monitor counts it again.
#[test]
fn one_behaviour_is_counted_once() {
    let _g = serial();
    let r = run_bad(
        "meta-optional",
        &[
            "--era",
            "modern",
            "--filter",
            "mcp.modern.meta-required",
            "--filter",
            "mcp.modern.result-type",
            "--filter",
            "mcp.base.message-schema",
        ],
        &[1],
    );
    assert_eq!(
        r.verdict(&case("mcp.modern.meta-required", MODERN)),
        Some("fail"),
        "{r}"
    );
    for check in ["mcp.modern.result-type", "mcp.base.message-schema"] {
        assert_eq!(
            r.verdict(&case(check, MODERN)),
            Some("pass"),
            "{check}\n{r}"
        );
    }
    no_debug_output(&r);
}

/// Scenarios written for the bundled reference are not planned against another server: one
/// note, no skip line per scenario.
#[test]
fn reference_only_scenarios_are_not_planned_against_other_servers() {
    let _g = serial();
    let r = run_bad(
        "benign-idless-errors",
        &["--filter", "mcp.scenario.*", "--era", "legacy"],
        &[0],
    );
    assert!(!r.cases().is_empty(), "{r}");
    for (id, c) in r.cases() {
        assert!(!id.contains(".reference."), "{id}\n{r}");
        assert_ne!(c["verdict"], "skip", "{id}: {c}");
    }
    let notes = r.report.as_ref().unwrap()["notes"].to_string();
    assert!(
        notes.contains("run only against the bundled reference"),
        "{r}"
    );
}

/// A correct server that floods parity with 10,000 `ping` and `roots/list` requests (and reads
/// nothing until parity has read them) gets judged verdicts, and passes: parity's writes go
/// through a queue of their own, so its reading never waits on a blocked pipe. Before, these
/// checks stalled to the case deadline.
#[test]
fn a_request_flood_gets_judged_verdicts_and_they_pass() {
    let _g = serial();
    // The peer really floods: after the handshake, 10,000 requests come before the answer to
    // the next request.
    let mark = format!("parity-tests-{}-request-flood", std::process::id());
    let mut c = Command::new(parity())
        .args(["fake", "benign-request-flood"])
        .env(common::MARKER_VAR, &mark)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fake");
    use std::io::Write;
    let mut stdin = c.stdin.take().expect("stdin");
    let mut out = BufReader::new(c.stdout.take().expect("stdout")).lines();
    // The handshake first (the flood starts once it has been answered), then one request.
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{"roots":{{}}}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .expect("write");
    let mut next = || -> serde_json::Value {
        let line = out.next().expect("a line").expect("read");
        serde_json::from_str(&line).expect("json")
    };
    while next()["id"] != 1 {}
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .expect("write");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#).expect("write");
    let mut requests = 0;
    loop {
        let v = next();
        if v["id"] == 2 {
            break;
        }
        if v["method"] == "ping" || v["method"] == "roots/list" {
            requests += 1;
        }
    }
    drop(stdin);
    let _ = c.kill();
    let _ = c.wait();
    kill_marked(&mark);
    assert_eq!(requests, 10_000, "the flood came before the answer");

    let checks = [
        "mcp.base.parse-error",
        "mcp.base.batch",
        "mcp.base.batch-rejected",
        "mcp.base.invalid-request",
        "mcp.base.id-echo",
        "mcp.base.notification-unanswered",
    ];
    let mut extra = Vec::new();
    for check in checks {
        extra.extend(["--filter", check]);
    }
    let r = run_bad("benign-request-flood", &extra, &[0]);
    for check in checks {
        let got = r.verdicts_of(check);
        assert!(!got.is_empty(), "{check} did not run\n{r}");
        for (id, verdict) in got {
            assert_eq!(verdict, "pass", "{id}\n{r}");
        }
    }
    no_debug_output(&r);
}

/// A server that answers every request twice: the copy is reported by
/// mcp.base.duplicate-response, with both frames, and never blamed on the check whose turn it
/// arrived in (here mcp.base.notification-unanswered, which before counted it as "a
/// notification was answered").
#[test]
fn a_duplicate_response_is_its_own_verdict_and_the_next_check_is_not_blamed() {
    let _g = serial();
    let r = run_bad(
        "answer-twice",
        &[
            "--jobs",
            "1",
            "--filter",
            "mcp.base.id-echo",
            "--filter",
            "mcp.base.notification-unanswered",
            "--filter",
            "mcp.base.duplicate-response",
        ],
        &[0],
    );
    for rev in [LEGACY, MODERN] {
        let dup = &r.cases()[&case("mcp.base.duplicate-response", rev)];
        assert_eq!(dup["verdict"], "warn", "{rev}\n{r}");
        let m = dup["message"].as_str().unwrap_or("");
        assert!(
            m.contains("first at") && m.contains("again at") && m.contains("2 times"),
            "{m}"
        );
        assert!(m.contains("the Server MUST reply with a Response"), "{m}");
        for check in ["mcp.base.notification-unanswered", "mcp.base.id-echo"] {
            let id = case(check, rev);
            assert_eq!(r.verdict(&id), Some("pass"), "{id}\n{r}");
        }
        // The copy really arrived in the notification check's turn: a response whose id no
        // request of that turn carried.
        let ev: Vec<String> = r.cases()[&case("mcp.base.notification-unanswered", rev)]["evidence"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        // Evidence lines are clipped, so the id is read from the text: what follows `"id":`.
        let ids = |arrow: &str| -> Vec<String> {
            ev.iter()
                .filter_map(|l| l.strip_prefix(arrow))
                .filter_map(|l| l.split_once("\"id\":").map(|(_, rest)| rest))
                .filter_map(|rest| rest.split([',', '}']).next().map(String::from))
                .collect()
        };
        let sent = ids("→");
        assert!(
            ids("←").iter().any(|id| !sent.contains(id)),
            "no copy arrived in the notification check's turn: {ev:?}"
        );
    }
    no_debug_output(&r);
}

#[test]
fn an_answer_over_the_line_cap_is_reported_as_one_with_its_length_the_cap_and_the_flag() {
    let _g = serial();
    // The fake answers tools/list with a line over 256 KiB; at a 64 KiB cap parity cannot read
    // it. The check waited for that answer: a `timeout` (never a fail) that says what happened.
    let r = run_bad(
        "long-answer",
        &[
            "--line-cap",
            "65536",
            "--filter",
            "mcp.tools.input-schema",
            "--timeout-multiplier",
            "0.3",
        ],
        &[1],
    );
    for rev in [LEGACY, MODERN] {
        let id = case("mcp.tools.input-schema", rev);
        assert_eq!(r.verdict(&id), Some("timeout"), "{id}\n{r}");
        let message = r.cases()[&id]["message"].as_str().unwrap_or("").to_string();
        let len: u64 = message
            .split("a line of ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(
            len > parity_fakes::LONG_ANSWER_PAD as u64,
            "{id}: the message names the line's length\n{r}"
        );
        assert!(
            message.contains("over the line cap of 65536 bytes") && message.contains("--line-cap"),
            "{id}: the message names the cap and the flag\n{r}"
        );
    }
}

/// A server that sends notifications at full speed and each of its answers 4 s late: every
/// case is judged (the frame log keeps a bounded head and tail, never the whole flood), the
/// evidence names the frames it left out, and the envelope monitor says it judged the frames
/// kept. (The peak RSS of such a run is measured by `parity bench --only floods`, not here.)
#[test]
fn a_notification_flood_is_judged_on_a_bounded_log_that_says_what_it_left_out() {
    let _g = serial();
    let checks = [
        "mcp.base.ping",
        "mcp.lifecycle.version-negotiation",
        "mcp.stdio.stdout-purity",
    ];
    let mut extra = vec!["--era", "legacy"];
    for check in checks {
        extra.extend(["--filter", check]);
    }
    let r = run_bad("load-notification-flood", &extra, &[0]);
    for check in checks {
        let got = r.verdicts_of(check);
        assert!(!got.is_empty(), "{check} did not run\n{r}");
        for (id, verdict) in got {
            assert_eq!(verdict, "pass", "{id}\n{r}");
        }
    }
    let purity = &r.cases()[&case("mcp.stdio.stdout-purity", LEGACY)];
    let message = purity["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("judged on the frames kept")
            && message.contains("were left out by the sessions' bounded frame logs"),
        "the monitor does not say it judged a bounded log: {message:?}\n{r}"
    );
    let evidence = r.cases()[&case("mcp.base.ping", LEGACY)]["evidence"].to_string();
    assert!(
        evidence.contains("left out here"),
        "the evidence does not show the frames left out: {evidence}\n{r}"
    );
    no_debug_output(&r);
}

/// A valid answer longer than the frame log's 64 KiB cut (here a 256 KiB `tools/list` result,
/// under the default line cap) is a response, so the log keeps it whole: stdout purity judges
/// it and passes, with no warning and no "kept only as a prefix" note.
#[test]
fn a_long_valid_answer_is_judged_whole_by_the_envelope_monitor() {
    let _g = serial();
    let r = run_bad(
        "long-answer",
        &[
            "--era",
            "legacy",
            "--filter",
            "mcp.stdio.stdout-purity",
            "--filter",
            "mcp.tools.input-schema",
        ],
        &[0],
    );
    let purity = &r.cases()[&case("mcp.stdio.stdout-purity", LEGACY)];
    assert_eq!(purity["verdict"], "pass", "{r}");
    let message = purity["message"].as_str().unwrap_or_default();
    assert!(
        !message.contains("prefix"),
        "the long answer was not judged whole: {message:?}\n{r}"
    );
}
