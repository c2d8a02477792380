//! The server-feature checks (resources, prompts, completion, logging, cache hints, tool
//! results, input-required results) against the bundled reference over real pipes, and the
//! declarations that decide which tools parity may call (`[tools]`, `--call-tools`).

use crate::common::{self, run_json};

/// Every server-feature check, by id prefix.
const FEATURES: &[&str] = &[
    "mcp.resources.*",
    "mcp.prompts.*",
    "mcp.completion.*",
    "mcp.logging.*",
    "mcp.modern.resource-not-found",
    "mcp.modern.log-*",
    "mcp.modern.cache-hints",
    "mcp.modern.list-stable",
    "mcp.modern.tools-order",
    "mcp.modern.input-required-*",
    "mcp.tools.structured-content",
    "mcp.tools.result-content",
];

fn filters() -> Vec<String> {
    FEATURES
        .iter()
        .flat_map(|f| ["--filter".to_string(), format!("{f}@*")])
        .collect()
}

fn reference_mcp() -> String {
    format!("{} reference mcp", common::parity_str())
}

/// The `tools/call` requests a case's evidence shows parity sending, as the called names.
fn called_tools(evidence: &serde_json::Value) -> Vec<String> {
    let mut names = Vec::new();
    let lines = evidence
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l.as_str());
    for line in lines.filter(|l| l.starts_with('→')) {
        let Some(at) = line.find("\"method\":\"tools/call\"") else {
            continue;
        };
        if let Some(n) = line[at..].split("\"name\":\"").nth(1) {
            names.push(n.split('"').next().unwrap_or("").to_string());
        }
    }
    names
}

#[test]
fn the_reference_passes_every_server_feature_check() {
    let f = filters();
    let mut args: Vec<&str> = vec!["run", "--profile", "mcp"];
    args.extend(f.iter().map(String::as_str));
    let r = run_json(&args);
    r.assert_code(0);
    let cases = r.cases();
    assert!(
        cases.len() >= 40,
        "too few feature cases: {}\n{r}",
        cases.len()
    );
    for (id, c) in cases {
        let verdict = c["verdict"].as_str().unwrap_or("");
        // The reference does not adopt logging at 2026-07-28, as that revision advises, and never
        // asks for input; benign fakes pass those checks instead (`parity selftest`).
        let by_design = parity_harness::engine::reference::skipped_by_design(id);
        if by_design {
            assert_eq!(verdict, "skip", "{id}: {c}");
            continue;
        }
        assert_eq!(verdict, "pass", "{id}: {c}");
    }
    // The tool-result check ran in both eras and called only the tools the reference declares
    // safe.
    assert_eq!(
        cases
            .keys()
            .filter(|id| id.starts_with("mcp.tools.structured-content@"))
            .count(),
        2
    );
    for (id, c) in cases
        .iter()
        .filter(|(id, _)| id.starts_with("mcp.tools.structured-content@"))
    {
        let called = called_tools(&c["evidence"]);
        assert!(!called.is_empty(), "{id} called nothing: {c}");
        assert!(
            called.iter().all(|n| {
                [
                    "read_file",
                    "write_file",
                    "list_dir",
                    "exec",
                    "status",
                    "retry",
                ]
                .contains(&n.as_str())
            }),
            "{id} called an undeclared tool: {called:?}"
        );
    }
}

#[test]
fn without_a_declaration_no_tool_is_called_and_the_skip_says_how_to_declare() {
    let mcp = reference_mcp();
    let r = run_json(&[
        "run",
        "--mcp",
        &mcp,
        "--filter",
        "mcp.tools.structured-content@*",
    ]);
    // Nothing executed: a run of skips only is not a pass.
    r.assert_code(3);
    assert_eq!(
        r.verdicts_of("mcp.tools.structured-content").len(),
        2,
        "{r}"
    );
    for (id, v) in r.verdicts_of("mcp.tools.structured-content") {
        assert_eq!(v, "skip", "{id}\n{r}");
        let c = &r.cases()[&id];
        let msg = c["message"].as_str().unwrap_or("");
        assert!(
            msg.contains("[tools] safe") && msg.contains("--call-tools read-only"),
            "{msg}"
        );
        assert!(called_tools(&c["evidence"]).is_empty(), "{c}");
    }
}

#[test]
fn call_tools_read_only_calls_only_tools_annotated_read_only_and_not_destructive() {
    let mcp = reference_mcp();
    let r = run_json(&[
        "run",
        "--mcp",
        &mcp,
        "--call-tools",
        "read-only",
        "--filter",
        "mcp.tools.structured-content@*",
    ]);
    r.assert_code(0);
    // The reference's tools/list, for their annotations.
    let list = std::process::Command::new(common::parity())
        .args(["reference", "mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = {
        use std::io::Write;
        let mut child = list;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
        .unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{}}}}"#
        )
        .unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"cursor":"cGFyaXR5LXRvb2xzOjQ"}}}}"#
        )
        .unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    let mut read_only = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for t in v
            .pointer("/result/tools")
            .and_then(|t| t.as_array())
            .into_iter()
            .flatten()
        {
            let ro = t.pointer("/annotations/readOnlyHint") == Some(&serde_json::json!(true));
            let destructive =
                t.pointer("/annotations/destructiveHint") == Some(&serde_json::json!(true));
            if ro && !destructive {
                read_only.push(t["name"].as_str().unwrap().to_string());
            }
        }
    }
    assert!(
        !read_only.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut any = false;
    for (id, v) in r.verdicts_of("mcp.tools.structured-content") {
        assert_eq!(v, "pass", "{id}\n{r}");
        let called = called_tools(&r.cases()[&id]["evidence"]);
        any |= !called.is_empty();
        for n in &called {
            assert!(
                read_only.contains(n),
                "{id} called {n}, not read-only: {read_only:?}"
            );
        }
    }
    assert!(any, "nothing was called\n{r}");
}

#[test]
fn never_keeps_a_tool_out_of_the_result_checks_and_the_invalid_arguments_probe() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parity.toml");
    let all = r#"["read_file", "write_file", "list_dir", "exec", "status", "retry"]"#;
    std::fs::write(
        &path,
        format!(
            "version = 1\n[surfaces.mcp]\ncommand = {:?}\n[tools]\nsafe = {all}\nnever = {all}\n",
            reference_mcp()
        ),
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let r = run_json(&[
        "run",
        "--target",
        &p,
        "--profile",
        "mcp",
        "--filter",
        "mcp.tools.structured-content@*",
        "--filter",
        "mcp.tools.invalid-arguments@*",
    ]);
    r.assert_code(3);
    for check in [
        "mcp.tools.structured-content",
        "mcp.tools.invalid-arguments",
    ] {
        let cases = r.verdicts_of(check);
        assert!(!cases.is_empty(), "{r}");
        for (id, v) in cases {
            assert_eq!(v, "skip", "{id}\n{r}");
            let called = called_tools(&r.cases()[&id]["evidence"]);
            assert!(called.is_empty(), "{id} called {called:?}");
        }
    }
}

#[test]
fn declared_prompt_arguments_are_sent_and_bad_declarations_name_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parity.toml");
    std::fs::write(
        &path,
        format!(
            "version = 1\n[surfaces.mcp]\ncommand = {:?}\n[prompts.explain_file]\narguments = {{ path = \"README.md\" }}\n",
            reference_mcp()
        ),
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let r = run_json(&[
        "run",
        "--target",
        &p,
        "--profile",
        "mcp",
        "--filter",
        "mcp.prompts.get@*",
    ]);
    r.assert_code(0);
    assert_eq!(r.verdicts_of("mcp.prompts.get").len(), 2, "{r}");
    for (id, v) in r.verdicts_of("mcp.prompts.get") {
        assert_eq!(v, "pass", "{id}\n{r}");
        let ev = r.cases()[&id]["evidence"].to_string();
        assert!(
            ev.contains("explain_file") && ev.contains("README.md"),
            "{id}: {ev}"
        );
    }
    // A bad `tools.call` and an unknown prompt key are configuration errors at their line.
    for (body, key) in [
        ("[tools]\ncall = \"maybe\"\n", "tools.call"),
        ("[prompts.x]\nargs = { a = \"b\" }\n", "prompts.x.args"),
    ] {
        std::fs::write(
            &path,
            format!("version = 1\n[surfaces.mcp]\ncommand = \"true\"\n{body}"),
        )
        .unwrap();
        let r = run_json(&["run", "--target", &p]);
        r.assert_code(2);
        assert!(r.stderr.contains(":5:"), "{r}");
        assert!(r.stderr.contains(key), "{key}\n{r}");
    }
}
