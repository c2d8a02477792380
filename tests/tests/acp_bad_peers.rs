//! Bad ACP agents get verdicts, not a hang: an agent that never answers, one that writes a huge
//! line or garbage, one that sends the client requests parity did not offer, one that answers
//! in the wrong shapes. Every run ends with an exit code and no process left behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fake_cmd, kill_marked, marked_processes, run_json, Run};

/// Runs `parity run --acp "<parity> fake <fault>" --profile acp <extra>` with a JSON report and
/// checks it exited with one of `codes` and left no process behind.
fn run_bad_agent(fault: &str, extra: &[&str], codes: &[i32]) -> Run {
    let acp = fake_cmd(fault);
    let mut args = vec!["run", "--acp", &acp, "--profile", "acp"];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    let prefix = format!("{}-", r.pid);
    let left = marked_processes(&prefix);
    kill_marked(&prefix);
    assert!(
        left.is_empty(),
        "{fault}: processes outlived the run: {left:?}\n{r}"
    );
    assert_eq!(r.signal, None, "{fault}: parity died of a signal\n{r}");
    assert!(
        r.code.is_some_and(|c| codes.contains(&c)),
        "{fault}: exit code {:?}, expected one of {codes:?}\n{r}",
        r.code
    );
    r
}

fn verdicts(r: &Run) -> Vec<(String, String)> {
    r.cases()
        .iter()
        .map(|(id, c)| (id.clone(), c["verdict"].as_str().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn an_agent_that_never_answers_could_not_run() {
    let r = run_bad_agent("hang", &["--timeout-multiplier", "0.3"], &[3]);
    assert!(r.cases().is_empty(), "{r}");
    assert!(r.stderr.contains("did not answer initialize"), "{r}");
}

#[test]
fn an_agent_writing_a_huge_line_or_garbage_gets_verdicts() {
    for fault in ["huge-line", "binary-garbage"] {
        let r = run_bad_agent(fault, &["--timeout-multiplier", "0.5"], &[1, 3]);
        // Whatever the agent does, the run ends: with verdicts, or as could-not-run.
        if r.code == Some(1) {
            assert!(!verdicts(&r).is_empty(), "{fault}\n{r}");
        }
    }
}

#[test]
fn requests_the_client_did_not_offer_are_answered_and_judged() {
    let r = run_bad_agent("acp-fs-request", &[], &[1]);
    assert_eq!(
        r.verdict("acp.init.capabilities-respected@acp#v1"),
        Some("fail"),
        "{r}"
    );
    // Nothing hung: the driver answered the agent's fs request with -32601 and went on.
    let v = verdicts(&r);
    assert!(v.iter().all(|(_, x)| x != "timeout"), "{v:?}\n{r}");
    let evidence = r.cases()["acp.init.capabilities-respected@acp#v1"].to_string();
    assert!(evidence.contains("fs/read_text_file"), "{r}");
}

#[test]
fn wrong_shapes_are_failures_not_crashes() {
    for fault in [
        "acp-bad-update",
        "acp-string-version",
        "acp-bad-stop-reason",
    ] {
        let r = run_bad_agent(fault, &[], &[1]);
        assert_eq!(
            r.verdict("acp.schema.v1-messages@acp#v1"),
            Some("fail"),
            "{fault}\n{r}"
        );
    }
}
