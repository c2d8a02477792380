//! Equivalence: the seed's contract test (one dispatcher behind the MCP and the ACP surface, in
//! process and over real processes), the `acp` and `equivalence` profiles on the default target,
//! the faulty ACP surfaces that must fail them, and target-file errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use parity_harness::engine::outcome::{self, AcpRules, McpRules};
use parity_harness::protocol::mcp::{Client, Era, Reply};
use parity_harness::transport::peer::Peer;
use parity_reference::dispatcher::{Dispatcher, DispatcherConfig};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The six tools once each, plus a refusal, invalid arguments and an unknown tool.
fn contract_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": "README.md"})),
        (
            "write_file",
            json!({"path": "notes/c.txt", "content": "contract\n"}),
        ),
        ("list_dir", json!({"path": "notes"})),
        ("exec", json!({"argv": ["echo", "contract"]})),
        ("status", json!({})),
        ("retry", json!({})),
        ("read_file", json!({"path": "notes/missing.txt"})),
        ("read_file", json!({})),
        ("no_such_tool", json!({})),
    ]
}

fn seeded_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "parity reference workspace\n").unwrap();
    std::fs::create_dir_all(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/hello.txt"), "hello\n").unwrap();
    dir
}

/// A harness client over in-memory streams to a surface served by `serve`.
fn in_memory_client(
    serve: impl FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream),
    era: Era,
) -> Client {
    let (client_w, server_r) = tokio::io::duplex(1 << 20);
    let (server_w, client_r) = tokio::io::duplex(1 << 20);
    serve(server_r, server_w);
    let peer = Peer::from_io(client_r, client_w, 16 << 20);
    Client::new(peer, era, "2025-11-25", Duration::from_secs(10))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_dispatcher_behind_mcp_and_acp_gives_equal_outcomes_in_process() {
    let ws = seeded_workspace();
    let config = DispatcherConfig::new(ws.path().to_path_buf());
    let dispatcher = Arc::new(Dispatcher::new(config.clone()));

    let d = dispatcher.clone();
    let mcp_config = parity_reference::mcp::McpServerConfig::new(config.clone());
    let mut mcp = in_memory_client(
        move |r, w| {
            tokio::spawn(parity_reference::mcp::serve_shared(r, w, d, mcp_config));
        },
        Era::Legacy,
    );
    let d = dispatcher.clone();
    let acp_config = parity_reference::acp::AcpAgentConfig::new(config);
    let mut acp = parity_harness::protocol::acp::as_acp(in_memory_client(
        move |r, w| {
            tokio::spawn(parity_reference::acp::serve_shared(r, w, d, acp_config));
        },
        Era::Legacy,
    ));

    let init = mcp.initialize("2025-11-25").await.unwrap();
    assert!(init.result().is_some(), "{}", init.describe());
    let init = acp
        .request(
            "initialize",
            parity_harness::protocol::acp::initialize_params(1),
        )
        .await
        .unwrap();
    assert!(init.result().is_some(), "{}", init.describe());
    let session = parity_harness::protocol::acp::new_session(&mut acp, json!([]))
        .await
        .unwrap();
    let sid = parity_harness::protocol::acp::session_id(&session).expect("a session id");

    let mut kinds = Vec::new();
    for (name, args) in contract_calls() {
        let m = mcp
            .request("tools/call", json!({"name": name, "arguments": args}))
            .await
            .unwrap();
        let a = parity_harness::protocol::acp::tool_call(
            &mut acp,
            "_parity/tool",
            None,
            Some(&sid),
            name,
            &args,
        )
        .await
        .unwrap();
        let (Reply::Message(m), Reply::Message(a)) = (m, a) else {
            panic!("{name}: a surface did not answer");
        };
        let om = outcome::from_mcp(&m, &McpRules::default());
        let oa = outcome::from_acp(&a, &AcpRules::default());
        // One dispatcher: even the messages and the lifecycle times agree.
        assert_eq!(
            outcome::comparable(&om, &[], true),
            outcome::comparable(&oa, &[], true),
            "{name} {args}: MCP {m} vs ACP {a}"
        );
        kinds.push(om["outcome"].as_str().unwrap().to_string());
    }
    assert_eq!(
        kinds,
        [
            "ok",
            "ok",
            "ok",
            "ok",
            "ok",
            "ok",
            "refused",
            "refused",
            "protocol_error"
        ]
    );
    // The ACP write and the MCP write went to the same workspace.
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes/c.txt")).unwrap(),
        "contract\n"
    );
}

#[test]
fn the_contract_holds_over_real_processes_and_the_default_target_passes_acp_and_equivalence() {
    let r = common::run_json(&[
        "run",
        "--profile",
        "acp",
        "--profile",
        "equivalence",
        "--cases",
        "30",
        "--seed",
        "5",
    ]);
    r.assert_code(0);
    let cases = r.cases();
    let acp = cases.keys().filter(|k| k.ends_with("@acp#v1")).count();
    assert_eq!(acp, parity_harness::profiles::acp::catalogue().len(), "{r}");
    assert_eq!(
        r.verdict("equivalence.scenario.mcp.scenario.reference.six-tools@equivalence#all"),
        Some("pass"),
        "{r}"
    );
    for tool in [
        "read_file",
        "write_file",
        "list_dir",
        "exec",
        "status",
        "retry",
    ] {
        assert_eq!(
            r.verdict(&format!("equivalence.generated.{tool}@equivalence#all")),
            Some("pass"),
            "{r}"
        );
    }
    assert!(cases.values().all(|c| c["verdict"] == "pass"), "{r}");
    assert_eq!(r.report.as_ref().unwrap()["seed"], 5, "{r}");
    assert!(r.stdout.contains("equivalence: seed 5"), "{r}");
}

/// A target file with the reference MCP server and the given ACP agent subcommand.
fn target_with_acp(dir: &std::path::Path, acp: &str) -> String {
    let exe = common::parity_str();
    let path = dir.join("parity.toml");
    std::fs::write(
        &path,
        format!(
            "version = 1\nname = \"drift\"\n\n[surfaces.mcp]\ncommand = \"'{exe}' reference mcp\"\nreference = true\n\n[surfaces.acp]\ncommand = \"'{exe}' {acp}\"\n\n[equivalence]\nvolatile = [\"/value/since_ms\"]\nstateful = [\"write_file\"]\n"
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn an_acp_surface_that_changes_one_field_fails_with_a_diff_naming_tool_surfaces_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let target = target_with_acp(dir.path(), "fake acp-outcome-drift");
    let r = common::run(&[
        "run",
        "--target",
        &target,
        "--profile",
        "equivalence",
        "--cases",
        "0",
    ]);
    r.assert_code(1);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("read_file") && l.contains(" differ at "))
        .unwrap_or_else(|| panic!("no mismatch line naming read_file\n{r}"));
    assert!(line.contains("mcp-stdio#2025-11-25"), "{line}");
    assert!(line.contains("acp#v1"), "{line}");
    assert!(line.contains("/value/content"), "{line}");
    // The unified diff of the two outcomes follows.
    assert!(r.stdout.contains("--- mcp-stdio#"), "{r}");
    assert!(r.stdout.contains("+++ acp#v1"), "{r}");
    assert!(r.stdout.contains("\\r\\n"), "{r}");
    // And the two responses as they came.
    assert!(r.stdout.contains("mcp-stdio#2025-11-25 answered: {"), "{r}");
    assert!(r.stdout.contains("acp#v1 answered: {"), "{r}");
}

#[test]
fn a_surface_that_does_not_start_is_named_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::parity_str();
    let dead = "sh -c 'echo the-surface-is-broken >&2; exit 3'";
    // A dead ACP agent: every case is not-run, and says what the agent wrote and how it ended.
    let path = dir.path().join("dead-acp.toml");
    std::fs::write(
        &path,
        format!(
            "version = 1\nprofiles = [\"equivalence\"]\n[surfaces.mcp]\ncommand = \"'{exe}' reference mcp\"\nreference = true\n[surfaces.acp]\ncommand = \"{dead}\"\n"
        ),
    )
    .unwrap();
    let r = common::run_json(&["run", "--target", path.to_str().unwrap(), "--cases", "1"]);
    r.assert_code(3);
    assert!(!r.cases().is_empty(), "{r}");
    for (id, c) in r.cases() {
        assert_eq!(c["verdict"], "not-run", "{id}\n{r}");
        let m = c["message"].as_str().unwrap();
        assert!(
            m.contains("acp#v1: initialize")
                && m.contains("the-surface-is-broken")
                && m.contains("exit status: 3"),
            "{id}: {m}"
        );
    }
    // A dead MCP server with only equivalence asked for: the run says why it had one surface.
    let path = dir.path().join("dead-mcp.toml");
    std::fs::write(
        &path,
        format!(
            "version = 1\nprofiles = [\"equivalence\"]\n[surfaces.mcp]\ncommand = \"{dead}\"\n[surfaces.acp]\ncommand = \"'{exe}' reference acp\"\n"
        ),
    )
    .unwrap();
    let r = common::run(&["run", "--target", path.to_str().unwrap()]);
    r.assert_code(3);
    let out = format!("{}{}", r.stdout, r.stderr);
    assert!(
        out.contains("equivalence needs at least two surfaces")
            && out.contains("the-surface-is-broken"),
        "{r}"
    );
}

#[test]
fn a_drift_only_for_long_strings_is_found_and_shrunk_to_eleven_characters() {
    let dir = tempfile::tempdir().unwrap();
    let target = target_with_acp(dir.path(), "fake acp-long-string-drift");
    let r = common::run_json(&[
        "run",
        "--target",
        &target,
        "--profile",
        "equivalence",
        "--filter",
        "equivalence.generated.read_file*",
        "--cases",
        "200",
        "--seed",
        "11",
    ]);
    r.assert_code(1);
    let case = &r.cases()["equivalence.generated.read_file@equivalence#all"];
    assert_eq!(case["verdict"], "fail", "{r}");
    let step = case["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find_map(|e| e.split_once("- call: ").map(|(_, s)| s.to_string()))
        .unwrap_or_else(|| panic!("no minimal call in the evidence\n{r}"));
    let call: Value = serde_json::from_str(&step).unwrap();
    assert_eq!(call["name"], "read_file", "{step}");
    let path = call["arguments"]["path"].as_str().unwrap();
    assert_eq!(path.chars().count(), 11, "shrunk call: {step}");
    assert!(
        case["message"].as_str().unwrap().contains("--seed 11"),
        "{r}"
    );
}

#[test]
fn a_thousand_generated_calls_per_tool_pass_against_the_reference() {
    // MCP over stdio and ACP: the surfaces the thousand-call figure is about. The HTTP surface
    // joins them in the default run (`the_contract_holds…`), with the default case count: a
    // stateful tool there starts a fresh facade per call, which would make this test minutes.
    let dir = tempfile::tempdir().unwrap();
    let exe = common::parity_str();
    let path = dir.path().join("parity.toml");
    std::fs::write(
        &path,
        format!(
            "version = 1\n[surfaces.mcp]\ncommand = \"'{exe}' reference mcp\"\nreference = true\n[surfaces.acp]\ncommand = \"'{exe}' reference acp\"\n[equivalence]\nvolatile = [\"/value/since_ms\"]\n"
        ),
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let r = common::run_json(&[
        "run",
        "--target",
        &p,
        "--profile",
        "equivalence",
        "--filter",
        "equivalence.generated.*",
        "--cases",
        "1000",
        "--seed",
        "2026",
    ]);
    r.assert_code(0);
    let cases = r.cases();
    assert_eq!(cases.len(), 6, "{r}");
    for (id, c) in cases {
        assert_eq!(c["verdict"], "pass", "{id}\n{r}");
        let agreed = c["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .any(|e| e.starts_with("1000 generated call(s) agreed"));
        assert!(agreed, "{id} did not run 1000 calls\n{r}");
    }
}

#[test]
fn a_target_file_with_an_unknown_key_or_a_bad_pointer_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parity.toml");
    std::fs::write(
        &path,
        "version = 1\n[surfaces.acp]\ncommand = \"x\"\ntool_methd = \"_x/tool\"\n",
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let r = common::run(&["run", "--target", &p]);
    r.assert_code(2);
    assert!(
        r.stderr
            .contains(&format!("{p}:4:1: surfaces.acp.tool_methd: unknown field")),
        "{r}"
    );
    std::fs::write(
        &path,
        "version = 1\n[surfaces.acp]\ncommand = \"x\"\nresult = \"outcome\"\n",
    )
    .unwrap();
    let r = common::run(&["run", "--target", &p]);
    r.assert_code(2);
    assert!(
        r.stderr
            .contains(&format!("{p}:4:10: surfaces.acp.result:")),
        "{r}"
    );
}

#[test]
fn a_third_party_tool_method_name_is_used_and_an_unprefixed_one_is_warned_about() {
    // The reference agent serving `realm/tool`, as a third-party system might.
    let acp = format!(
        "{} reference acp --tool-method realm/tool",
        common::parity_str()
    );
    let r = common::run_json(&[
        "run",
        "--acp",
        &acp,
        "--tool-method",
        "realm/tool",
        "--profile",
        "acp",
    ]);
    r.assert_code(0);
    assert_eq!(
        r.verdict("acp.ext.tool-method-prefix@acp#v1"),
        Some("warn"),
        "{r}"
    );
    assert!(
        r.stdout.contains("`realm/tool` does not begin with `_`"),
        "{r}"
    );
    assert_eq!(
        r.verdict("acp.ext.tool-method-advertised@acp#v1"),
        Some("pass"),
        "{r}"
    );
}

#[test]
fn equivalence_with_a_single_surface_could_not_run() {
    let mcp = format!("{} reference mcp", common::parity_str());
    let r = common::run(&[
        "run",
        "--mcp",
        &mcp,
        "--era",
        "legacy",
        "--profile",
        "equivalence",
    ]);
    r.assert_code(3);
    assert!(
        r.stderr
            .contains("equivalence needs at least two surfaces; the target has 1"),
        "{r}"
    );
}

#[test]
fn a_surface_that_dies_mid_call_is_not_run_and_never_shrunk() {
    let dir = tempfile::tempdir().unwrap();
    let exe = common::parity_str();
    let path = dir.path().join("parity.toml");
    // The MCP surface exits on its first tools/call; the ACP surface is the clean reference.
    std::fs::write(
        &path,
        format!(
            "version = 1\n[surfaces.mcp]\ncommand = \"'{exe}' fake exit-mid-call\"\neras = \"legacy\"\nreference = true\n[surfaces.acp]\ncommand = \"'{exe}' reference acp\"\n"
        ),
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let r = common::run_json(&[
        "run",
        "--target",
        &p,
        "--profile",
        "equivalence",
        "--filter",
        "equivalence.generated.read_file",
        "--filter",
        "equivalence.scenario.mcp.scenario.reference.six-tools",
        "--cases",
        "50",
        "--seed",
        "1",
    ]);
    let cases = r.cases();
    assert_eq!(cases.len(), 2, "{r}");
    for (id, c) in cases {
        assert_eq!(c["verdict"], "not-run", "{id}\n{r}");
        assert!(
            c["message"]
                .as_str()
                .unwrap()
                .contains("mcp-stdio#2025-11-25"),
            "{id}: the message names the surface\n{r}"
        );
    }
    // Each message names the call that went unanswered: the method, the tool, its arguments.
    for (id, c) in cases {
        let m = c["message"].as_str().unwrap();
        assert!(m.contains("tools/call call of "), "{id}: {m}");
    }
    let generated = &cases["equivalence.generated.read_file@equivalence#all"];
    let m = generated["message"].as_str().unwrap();
    assert!(m.contains("could not be compared"), "{r}");
    assert!(m.contains("tools/call call of read_file {"), "{m}");
    // Nothing was shrunk: no minimal call is offered.
    assert!(
        !generated["evidence"].to_string().contains("minimal call"),
        "{r}"
    );
    r.assert_code(3);
}

#[test]
fn volatile_values_declared_on_the_command_line_are_normalized() {
    let mcp = format!("{} reference mcp", common::parity_str());
    let acp = format!("{} reference acp", common::parity_str());
    let base = [
        "run",
        "--mcp",
        mcp.as_str(),
        "--acp",
        acp.as_str(),
        "--profile",
        "equivalence",
        "--filter",
        "equivalence.generated.status",
        "--cases",
        "5",
        "--seed",
        "4",
    ];
    // The two processes start at different times: `status` reports different `since_ms`.
    let r = common::run(&base);
    r.assert_code(1);
    assert!(r.stdout.contains("/value/since_ms"), "{r}");
    let mut with = base.to_vec();
    with.extend(["--volatile", "/value/since_ms"]);
    common::run(&with).assert_code(0);
    let mut bad = base.to_vec();
    bad.extend(["--volatile", "value"]);
    let r = common::run(&bad);
    r.assert_code(2);
    assert!(r.stderr.contains("--volatile"), "{r}");
}

#[test]
fn a_tool_method_given_for_the_bundled_reference_is_the_one_it_serves() {
    let r = common::run_json(&["run", "--profile", "acp", "--tool-method", "_acme/tool"]);
    r.assert_code(0);
    assert_eq!(
        r.verdict("acp.ext.tool-method-served@acp#v1"),
        Some("pass"),
        "{r}"
    );
}

/// The worked example `example` of docs/target.md, with `parity` replaced by this build's
/// binary, written to `dir/name`; `keep` filters its lines (all: `|_| true`).
fn example_target(
    dir: &std::path::Path,
    example: &str,
    name: &str,
    keep: &dyn Fn(&str) -> bool,
) -> String {
    let text = common::docs_example("target.md", example);
    let exe = common::parity_str();
    let text: String = text
        .lines()
        .filter(|l| keep(l))
        .map(|l| l.replace("command = \"parity ", &format!("command = \"'{exe}' ")) + "\n")
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A line filter that leaves out the TOML table `header` (through the next header).
fn without_table(header: &'static str) -> impl Fn(&str) -> bool {
    let inside = std::cell::Cell::new(false);
    move |l: &str| {
        if l.starts_with('[') {
            inside.set(l == header);
        }
        !inside.get()
    }
}

/// Runs `target` and requires every case to pass or skip, scenario and generated cases to
/// exist, at least six to pass, and exit 0.
fn passes_every_equivalence_case(target: &str) {
    let r = common::run_json(&["run", "--target", target, "--cases", "15", "--seed", "3"]);
    let cases = r.cases();
    for family in ["equivalence.generated.", "equivalence.scenario."] {
        assert!(cases.keys().any(|k| k.starts_with(family)), "{family}\n{r}");
    }
    for (id, c) in cases {
        assert!(
            c["verdict"] == "pass" || c["verdict"] == "skip",
            "{id}: {}\n{r}",
            c["message"]
        );
    }
    assert!(
        cases.values().filter(|c| c["verdict"] == "pass").count() >= 6,
        "{r}"
    );
    r.assert_code(0);
}

/// Runs five generated calls of read_file through `target` and requires a fail whose message
/// contains `says`.
fn read_file_differs(target: &str, says: &str) {
    let r = common::run_json(&[
        "run",
        "--target",
        target,
        "--filter",
        "equivalence.generated.read_file",
        "--cases",
        "5",
        "--seed",
        "3",
    ]);
    let c = &r.cases()["equivalence.generated.read_file@equivalence#all"];
    assert_eq!(c["verdict"], "fail", "{r}");
    assert!(c["message"].to_string().contains(says), "{says}\n{r}");
    r.assert_code(1);
}

#[test]
fn a_server_with_its_own_result_shape_passes_once_declared_as_the_docs_show() {
    let example = common::docs_example("target.md", "mcp-status-results");
    // The self-test declares the same server with the same table.
    assert!(
        example.contains(parity_fakes::STATUS_RESULTS_DECLARATION),
        "{example}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (ex, all) = ("mcp-status-results", |_: &str| true);
    passes_every_equivalence_case(&example_target(dir.path(), ex, "declared.toml", &all));
    // Without the table the status-shaped text is compared whole: the calls differ.
    let keep = without_table("[surfaces.mcp.outcome]");
    read_file_differs(
        &example_target(dir.path(), ex, "bare.toml", &keep),
        "status",
    );
}

#[test]
fn the_self_test_declares_the_wrapped_call_agent_as_the_docs_example_does() {
    // `parity selftest` reads the agent's declaration from parity_fakes; the worked example of
    // docs/target.md must say the same, key for key.
    let example = common::docs_example("target.md", "acp-wrapped-call");
    let text = |t: &str| -> toml::Value { toml::from_str(t).unwrap() };
    let documented = text(&example);
    let acp = &documented["surfaces"]["acp"];
    let declared = text(&format!(
        "[surfaces.acp]\ncommand = \"x\"\n{}",
        parity_fakes::WRAPPED_CALL_DECLARATION
    ));
    let declared = &declared["surfaces"]["acp"];
    for key in ["tool_method", "params", "outcome"] {
        assert_eq!(acp.get(key), declared.get(key), "{key}");
    }
    assert!(acp["command"]
        .as_str()
        .unwrap()
        .ends_with("fake acp-wrapped-call"));
}

#[test]
fn an_agent_with_its_own_call_and_result_shape_passes_once_declared_as_the_docs_show() {
    let dir = tempfile::tempdir().unwrap();
    let all = |_: &str| true;
    passes_every_equivalence_case(&example_target(
        dir.path(),
        "acp-wrapped-call",
        "parity.toml",
        &all,
    ));
}

#[test]
fn the_same_agent_without_the_declaration_differs_on_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let ex = "acp-wrapped-call";
    // Without `params`: the agent refuses the ToolCall map with -32602.
    let no_params = |l: &str| !l.starts_with("params");
    read_file_differs(
        &example_target(dir.path(), ex, "a.toml", &no_params),
        "-32602",
    );
    // With `params` but without the outcome table: the status-shaped results are compared whole.
    let keep = without_table("[surfaces.acp.outcome]");
    read_file_differs(&example_target(dir.path(), ex, "b.toml", &keep), "status");
}

#[test]
fn errors_in_the_call_and_result_keys_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    for (lines, line, key, says) in [
        (
            "[surfaces.acp]\ncommand = \"x\"\nparams = { call = \"{arguments}\" }\n",
            "4",
            "surfaces.acp.params",
            "{tool}",
        ),
        (
            "[surfaces.acp]\ncommand = \"x\"\nparams = { name = \"{tool}\", args = \"x{arguments}\" }\n",
            "4",
            "surfaces.acp.params",
            "exactly",
        ),
        (
            "[surfaces.acp]\ncommand = \"x\"\n[surfaces.acp.outcome]\nok = \"ok\"\n",
            "5",
            "surfaces.acp.outcome.kind",
            "need `kind`",
        ),
        (
            "[surfaces.acp]\ncommand = \"x\"\n[surfaces.acp.outcome]\nkind = \"status\"\nok = \"ok\"\n",
            "5",
            "surfaces.acp.outcome.kind",
            "not a JSON pointer",
        ),
        (
            "[surfaces.mcp]\ncommand = \"x\"\n[surfaces.mcp.outcome]\nkind = \"/s\"\nok = [\"a\"]\nrefused = [\"b\", \"a\"]\n",
            "7",
            "surfaces.mcp.outcome.refused",
            "two outcome kinds",
        ),
        (
            "[surfaces.mcp]\ncommand = \"x\"\n[surfaces.mcp.outcome]\nkind = \"/s\"\nok = { a = 1 }\n",
            "6",
            "surfaces.mcp.outcome.ok",
            "a string, number or boolean",
        ),
        (
            "[surfaces.mcp]\ncommand = \"x\"\n[surfaces.mcp.outcome]\nkind = \"/s\"\n",
            "5",
            "surfaces.mcp.outcome.kind",
            "needs the values",
        ),
    ] {
        let path = dir.path().join("parity.toml");
        std::fs::write(&path, format!("version = 1\n{lines}")).unwrap();
        let p = path.to_string_lossy().into_owned();
        let r = common::run(&["run", "--target", &p]);
        r.assert_code(2);
        let want = format!("parity.toml:{line}:");
        let err = r
            .stderr
            .lines()
            .find(|l| l.contains(&want))
            .unwrap_or_else(|| panic!("no error at line {line} for {lines:?}\n{r}"));
        assert!(err.contains(&format!(": {key}: ")), "{err}");
        assert!(err.contains(says), "{err}");
    }
}
