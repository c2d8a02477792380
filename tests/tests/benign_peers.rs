//! Benign peers: correct but unusual implementations (an ACP agent that requires
//! authentication, one with no extension, an HTTP server that refuses notifications with a
//! 4xx, one that answers HeaderMismatch at 2026-07-28) must get no fail and no warn from the
//! checks they list; and each check widened for them still fails on its faulty peer. Real
//! processes over real pipes; the HTTP servers listen on a loopback port chosen by the system
//! and are shut down by parity at the end of each run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{fake_cmd, kill_marked, marked_processes, parity_str, run_json, Run};

/// Checks the run left no process behind and was not killed by a signal.
fn no_leftovers(r: &Run) {
    let prefix = format!("{}-", r.pid);
    let left = marked_processes(&prefix);
    kill_marked(&prefix);
    assert!(left.is_empty(), "processes outlived the run: {left:?}\n{r}");
    assert_eq!(r.signal, None, "parity died of a signal\n{r}");
}

/// Every case of `check` as (case id, verdict, message, evidence joined).
fn cases_of(r: &Run, check: &str) -> Vec<(String, String, String, String)> {
    r.cases()
        .iter()
        .filter(|(_, c)| c["check"].as_str() == Some(check))
        .map(|(id, c)| {
            let evidence = c["evidence"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|e| e.as_str())
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            (
                id.clone(),
                c["verdict"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
                evidence,
            )
        })
        .collect()
}

/// The cases that failed or warned.
fn bad(r: &Run) -> Vec<String> {
    r.cases()
        .iter()
        .filter(|(_, c)| matches!(c["verdict"].as_str(), Some("fail") | Some("warn")))
        .map(|(id, c)| format!("{id}: {} {}", c["verdict"], c["message"]))
        .collect()
}

fn run_acp(name: &str, tool_method: Option<&str>) -> Run {
    let acp = fake_cmd(name);
    let mut args = vec!["run", "--acp", &acp, "--profile", "acp"];
    if let Some(m) = tool_method {
        args.extend(["--tool-method", m]);
    }
    let r = run_json(&args);
    no_leftovers(&r);
    r
}

/// Runs the mcp-http profile against `parity fake-http <name>` (started by parity from a
/// target file, on a port of its own; stopped by parity at the end).
fn run_http(name: &str, filter: Option<&str>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("parity.toml");
    let command = format!("{} fake-http {name} --catalogue direct", parity_str());
    std::fs::write(
        &target,
        format!(
            "version = 1\n[surfaces.http]\ncommand = {}\n",
            toml_string(&command)
        ),
    )
    .unwrap();
    let target = target.to_string_lossy().into_owned();
    let mut args = vec!["run", "--target", &target, "--profile", "mcp-http"];
    if let Some(f) = filter {
        args.extend(["--filter", f]);
    }
    let r = run_json(&args);
    no_leftovers(&r);
    r
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn each_benign_acp_agent_passes_what_it_lists_and_nothing_fails_or_warns() {
    let mut problems = Vec::new();
    for b in parity_fakes::acp_benign_catalogue() {
        let r = run_acp(b.name, b.tool_method);
        assert!(!r.cases().is_empty(), "{}: no cases\n{r}", b.name);
        for p in b.passes {
            let got = cases_of(&r, p);
            if got.is_empty() {
                problems.push(format!("{}: {p} did not run", b.name));
            }
        }
        // The agents are the clean reference behind a benign layer: nothing may fail or warn.
        problems.extend(bad(&r).into_iter().map(|l| format!("{}: {l}", b.name)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn an_agent_that_requires_authentication_is_not_run_and_told_why() {
    let r = run_acp("acp-auth-required", None);
    for check in [
        "acp.session.new-empty-mcp-servers",
        "acp.session.new-stdio-server",
        "acp.session.new-invalid-params",
        "acp.prompt.stop-reason",
    ] {
        let got = cases_of(&r, check);
        assert_eq!(got.len(), 1, "{check}\n{r}");
        let (id, verdict, message, _) = &got[0];
        assert_eq!(verdict, "not-run", "{id}: {message}");
        assert!(
            message.contains("-32000 (Authentication required)"),
            "{id}: {message}"
        );
        assert!(message.contains("parity-login"), "{id}: {message}");
        assert!(!message.contains("refused"), "{id}: {message}");
    }
}

#[test]
fn an_agent_that_declares_no_tool_method_is_skipped_with_how_to_declare_one() {
    let r = run_acp("acp-no-extensions", None);
    for check in [
        "acp.ext.tool-method-served",
        "acp.ext.tool-method-advertised",
        "acp.ext.tool-method-prefix",
    ] {
        let got = cases_of(&r, check);
        assert_eq!(got.len(), 1, "{check}\n{r}");
        let (id, verdict, message, _) = &got[0];
        assert_eq!(verdict, "skip", "{id}: {message}");
        assert!(message.contains("--tool-method"), "{id}: {message}");
        assert!(!message.contains("_parity/tool"), "{id}: {message}");
    }
}

#[test]
fn the_tool_method_checks_still_trip_their_faulty_agents() {
    // Declared: the faults of the catalogue, as before.
    let r = run_acp("acp-no-meta", Some("_parity/tool"));
    assert_eq!(
        r.verdict("acp.ext.tool-method-advertised@acp#v1"),
        Some("warn"),
        "{r}"
    );
    let r = run_acp("acp-no-tool-method", Some("_parity/tool"));
    assert_eq!(
        r.verdict("acp.ext.tool-method-served@acp#v1"),
        Some("warn"),
        "{r}"
    );
    // Undeclared: the agent advertises `_parity/tool` and does not serve it.
    let r = run_acp("acp-no-tool-method", None);
    let got = cases_of(&r, "acp.ext.tool-method-served");
    assert_eq!(got.len(), 1, "{r}");
    assert_eq!(got[0].1, "warn", "{got:?}");
    assert!(got[0].2.contains("advertises"), "{got:?}");
    // A refusal of `mcpServers: []` is still a failure, named as what it is.
    let r = run_acp("acp-reject-empty-servers", None);
    let got = cases_of(&r, "acp.session.new-empty-mcp-servers");
    assert_eq!(got.len(), 1, "{r}");
    assert_eq!(got[0].1, "fail", "{got:?}");
    assert!(got[0].2.contains("invalid params (-32602)"), "{got:?}");
}

#[test]
fn each_benign_http_server_passes_what_it_lists() {
    let mut problems = Vec::new();
    for b in parity_fakes::http_benign_catalogue() {
        let r = run_http(b.name, None);
        assert!(!r.cases().is_empty(), "{}: no cases\n{r}", b.name);
        for p in b.passes {
            let got = cases_of(&r, p);
            if got.is_empty() {
                problems.push(format!("{}: {p} did not run", b.name));
            }
            for (id, verdict, message, _) in got {
                if verdict == "fail" || verdict == "warn" {
                    problems.push(format!("{}: {id} is {verdict}: {message}", b.name));
                }
            }
        }
        problems.extend(bad(&r).into_iter().map(|l| format!("{}: {l}", b.name)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_refused_notification_passes_and_the_evidence_shows_the_refusal() {
    let r = run_http(
        "http-notification-refused",
        Some("mcp.base.notification-unanswered*"),
    );
    let got = cases_of(&r, "mcp.base.notification-unanswered");
    assert!(!got.is_empty(), "{r}");
    for (id, verdict, message, evidence) in got {
        assert_eq!(verdict, "pass", "{id}: {message}\n{evidence}");
        assert!(
            evidence.contains("refused by HTTP status"),
            "{id}\n{evidence}"
        );
        assert!(
            evidence.contains("HTTP 400 Bad Request"),
            "{id}\n{evidence}"
        );
        assert!(
            evidence.contains("content-type: application/json"),
            "{id}\n{evidence}"
        );
    }
}

#[test]
fn header_mismatch_at_2026_07_28_over_http_is_accepted_and_said_so() {
    let r = run_http(
        "http-meta-header-mismatch",
        Some("mcp.modern.meta-required@mcp-http#2026-07-28"),
    );
    let got = cases_of(&r, "mcp.modern.meta-required");
    assert_eq!(got.len(), 1, "{r}");
    let (id, verdict, message, evidence) = &got[0];
    assert_eq!(verdict, "pass", "{id}: {message}\n{evidence}");
    assert!(
        evidence.contains("-32020 (HeaderMismatch), accepted"),
        "{evidence}"
    );
}

#[test]
fn the_widened_http_checks_still_fail_their_faulty_servers() {
    let r = run_http(
        "http-notification-error-200",
        Some("mcp.base.notification-unanswered*"),
    );
    let got = cases_of(&r, "mcp.base.notification-unanswered");
    assert!(!got.is_empty(), "{r}");
    assert!(got.iter().all(|c| c.1 == "fail"), "{got:?}");
    let r = run_http(
        "http-header-mismatch-overreach",
        Some("mcp.modern.meta-required@mcp-http#2026-07-28"),
    );
    let got = cases_of(&r, "mcp.modern.meta-required");
    assert_eq!(got.len(), 1, "{r}");
    assert_eq!(got[0].1, "fail", "{got:?}");
    assert!(got[0].2.contains("-32020"), "{got:?}");
}

#[test]
fn over_stdio_the_rules_are_as_strict_as_before() {
    for (fault, check) in [
        ("meta-optional", "mcp.modern.meta-required"),
        ("notification-answered", "mcp.base.notification-unanswered"),
        ("null-id-notification", "mcp.base.invalid-request"),
    ] {
        let mcp = fake_cmd(fault);
        let filter = format!("{check}@*");
        let r = run_json(&[
            "run",
            "--mcp",
            &mcp,
            "--profile",
            "mcp",
            "--filter",
            &filter,
        ]);
        no_leftovers(&r);
        let got = cases_of(&r, check);
        assert!(!got.is_empty(), "{fault}\n{r}");
        assert!(
            got.iter().any(|c| c.1 == "fail"),
            "{fault}: {check} did not fail: {got:?}"
        );
    }
}

#[test]
fn bare_http_refusals_are_named_as_what_came() {
    // A server that refuses a batch and an unparsable body with HTTP 415 and a plain-text
    // body: the verdicts name the status, never "got no response".
    let r = run_http("http-bare-refusals", Some("mcp.base.*"));
    let batch = cases_of(&r, "mcp.base.batch");
    assert_eq!(batch.len(), 1, "{r}");
    assert_eq!(batch[0].1, "fail", "{batch:?}");
    assert!(
        batch[0].2.contains("refused by HTTP status")
            && batch[0].2.contains("HTTP 415 Unsupported Media Type")
            && batch[0].2.contains("must support receiving batches"),
        "{batch:?}"
    );
    let parse = cases_of(&r, "mcp.base.parse-error");
    assert!(!parse.is_empty(), "{r}");
    for (id, verdict, message, _) in &parse {
        assert_eq!(verdict, "warn", "{id}: {message}");
        assert!(
            message.contains("HTTP 415 Unsupported Media Type")
                && message.contains("fail to deserialize request body")
                && !message.contains("got no response"),
            "{id}: {message}"
        );
    }
    // In revisions without batches the same refusal is the answer a client needs.
    for (id, verdict, message, _) in cases_of(&r, "mcp.base.batch-rejected") {
        assert_eq!(verdict, "pass", "{id}: {message}");
    }
}

/// An agent that stops answering is not one that stopped serving: `acp-deaf-after-init`
/// answers `initialize` and then nothing, so the follow-up `initialize` of the checks that ask
/// whether the agent kept serving gets no answer, and those checks say so with `timeout`,
/// never the `warn` a closed stdout earns (that side: `acp-exit-on-ext-notification` in the
/// self-test). A flooding agent under tiny deadlines showed the same on a slow machine, but a
/// fast one could get through the flood in time; this peer does not depend on the machine.
#[test]
fn an_agent_that_stops_answering_times_out_rather_than_warns() {
    let acp = fake_cmd("acp-deaf-after-init");
    let r = run_json(&[
        "run",
        "--acp",
        &acp,
        "--profile",
        "acp",
        "--filter",
        "acp.ext.unknown-notification-ignored",
        "--timeout-multiplier",
        "0.2",
    ]);
    no_leftovers(&r);
    let got = cases_of(&r, "acp.ext.unknown-notification-ignored");
    assert_eq!(got.len(), 1, "{r}");
    let (id, verdict, message, _) = &got[0];
    assert_eq!(verdict, "timeout", "{id}: {message}\n{r}");
    assert!(message.contains("could not be judged"), "{message}");
}
