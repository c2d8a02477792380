//! Bad ACP agents get verdicts, not a hang: an agent that never answers, one that writes a huge
//! line or garbage, one that sends the client requests parity did not offer, one that answers
//! in the wrong shapes. Every run ends with an exit code and no process left behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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

/// Every faulty ACP agent through the whole ACP profile: the checks it is built to trip fail
/// (or warn), and any other check that does not pass is one of the few side effects listed here
/// with the reason, so a fault never earns another check a wrong verdict.
#[test]
fn each_faulty_agent_trips_its_checks_and_nothing_unexplained() {
    // (fault, checks that may also not pass, why)
    let side_effects: &[(&str, &[&str])] = &[
        // A pretty-printed, Latin-1, jsonrpc-less or result-and-error line is not a valid
        // message, so stdout purity fails with the framing check.
        ("acp-pretty-print", &["acp.stdio.stdout-purity"]),
        ("acp-latin1", &["acp.stdio.stdout-purity"]),
        ("acp-jsonrpc-missing", &["acp.stdio.stdout-purity"]),
        ("acp-result-and-error", &["acp.stdio.stdout-purity"]),
        // The reply to a notification has id null and a result: not a valid response.
        ("acp-answer-notifications", &["acp.stdio.stdout-purity"]),
        // A string protocolVersion breaks the v1 shape and negotiation too.
        (
            "acp-string-version",
            &["acp.schema.v1-messages", "acp.init.version-negotiation"],
        ),
        ("acp-bad-stop-reason", &["acp.schema.v1-messages"]),
        // Without a session there is no prompt to judge.
        (
            "acp-reject-empty-servers",
            &["acp.prompt.stop-reason", "acp.prompt.cancel"],
        ),
    ];
    let mut problems = Vec::new();
    for f in parity_fakes::acp_catalogue() {
        if f.profile != parity_fakes::AcpProfile::Acp || f.trips.is_empty() {
            continue;
        }
        let acp = fake_cmd(f.name);
        let method = f.tool_method.unwrap_or("_parity/tool");
        let r = run_json(&[
            "run",
            "--acp",
            &acp,
            "--tool-method",
            method,
            "--profile",
            "acp",
        ]);
        let allowed: &[&str] = side_effects
            .iter()
            .find(|(n, _)| *n == f.name)
            .map(|(_, a)| *a)
            .unwrap_or(&[]);
        for (id, verdict) in verdicts(&r) {
            let check = id.split('@').next().unwrap_or("");
            let tripped = f.trips.contains(&check);
            // acp.prompt.cancel needs a declared cancel prompt: without one it may skip.
            if verdict == "pass" || verdict == "skip" || tripped || allowed.contains(&check) {
                continue;
            }
            problems.push(format!("{}: {id} is {verdict}", f.name));
        }
        for t in f.trips {
            let got: Vec<String> = verdicts(&r)
                .into_iter()
                .filter(|(id, _)| id.starts_with(&format!("{t}@")))
                .map(|(_, v)| v)
                .collect();
            if !got.iter().any(|v| v == "fail" || v == "warn") && *t != "acp.prompt.cancel" {
                problems.push(format!("{}: {t} is {got:?}, not tripped", f.name));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// An agent that floods the client with 10,000 extension requests (reading nothing until the
/// client has read them) gets judged verdicts from the checks that send a probe that may get
/// no answer, and they pass: the client's writes are queued, so its reading never stalls.
#[test]
fn a_flooding_agent_gets_judged_verdicts_and_passes() {
    let r = run_bad_agent(
        "acp-request-flood",
        &[
            "--filter",
            "acp.base.parse-error",
            "--filter",
            "acp.base.invalid-request",
            "--filter",
            "acp.base.id-echo",
        ],
        &[0],
    );
    let v = verdicts(&r);
    assert_eq!(v.len(), 3, "{r}");
    assert!(v.iter().all(|(_, x)| x == "pass"), "{v:?}\n{r}");
}

/// An agent that answers nothing after `initialize` gives the probes of acp.base.parse-error
/// and acp.base.invalid-request no answer, and no answer to the `initialize` sent after them
/// either: without proof that it read them, the verdict is `timeout`, never `fail`.
#[test]
fn no_answer_without_proof_is_a_timeout_not_a_fail() {
    let r = run_bad_agent(
        "acp-deaf-after-init",
        &[
            "--timeout-multiplier",
            "0.3",
            "--filter",
            "acp.base.parse-error",
            "--filter",
            "acp.base.invalid-request",
        ],
        &[0, 1, 2],
    );
    for check in ["acp.base.parse-error", "acp.base.invalid-request"] {
        let id = format!("{check}@acp#v1");
        assert_eq!(r.verdict(&id), Some("timeout"), "{id}\n{r}");
        let m = r.cases()[&id]["message"].as_str().unwrap_or("").to_string();
        assert!(
            m.contains("whether the agent read it is unknown"),
            "{id}: {m}"
        );
    }
}
