//! The profile registry extended through the library (docs/library.md): the `toy_profile`
//! example registers one more profile, `toy` (one check, `toy.answer@toy#v1`), with
//! `Registry::register` and runs `parity_harness::cli::run_with`, the entry point of the
//! `parity` binary. `list`, `run`, the JSON and JUnit reports, `baseline write` and a run
//! against that baseline all know the toy with no change to the harness.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The built `toy_profile` example (built on first use, as `common::parity` builds parity).
fn toy() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent()?.parent().map(Path::to_path_buf))
            .expect("the target directory of the test executable");
        let path = dir.join("examples").join("toy_profile");
        if std::env::var_os("PARITY_TESTS_NO_BUILD").is_none() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args([
                "build",
                "--quiet",
                "-p",
                "parity-tests",
                "--example",
                "toy_profile",
            ]);
            if dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let out = cmd
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .expect("cargo build of the toy_profile example");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(path.is_file(), "{} not built", path.display());
        path
    })
    .clone()
}

fn toy_run(args: &[&str], fail: bool) -> Output {
    let mut cmd = Command::new(toy());
    cmd.args(args).env_remove("GITHUB_ACTIONS");
    if fail {
        cmd.env("TOY_VERDICT", "fail");
    } else {
        cmd.env_remove("TOY_VERDICT");
    }
    cmd.output().expect("the toy parity runs")
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_profile_registered_through_the_library_is_listed_run_reported_and_baselined() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_string_lossy().into_owned();

    // list: the toy's check with its binding, beside parity's own.
    let list = toy_run(&["list", "--json"], false);
    assert_eq!(list.status.code(), Some(0), "{}", show(&list));
    let items: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let toy = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "toy.answer")
        .unwrap_or_else(|| panic!("toy.answer not listed: {}", show(&list)));
    assert_eq!(toy["binding"], "toy");
    assert_eq!(toy["quote"], "The toy MUST answer 42.");
    assert!(items
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["id"] == "mcp.stdio.stdout-purity"));

    // run: the toy's one case, passing, in the JSON and JUnit reports.
    let (json, junit) = (p("pass.json"), p("pass.xml"));
    let run = toy_run(
        &[
            "run",
            "--profile",
            "toy",
            "--json",
            &json,
            "--junit",
            &junit,
        ],
        false,
    );
    assert_eq!(run.status.code(), Some(0), "{}", show(&run));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = report["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 1, "{report}");
    assert_eq!(cases["toy.answer@toy#v1"]["verdict"], "pass", "{report}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuite name=\"toy\" tests=\"1\""), "{xml}");
    assert!(xml.contains("toy.answer@toy#v1"), "{xml}");

    // A failing run, a baseline written from its report with no extra flag, and a run against
    // that baseline: the failure is expected, the run passes.
    let fail_json = p("fail.json");
    let failed = toy_run(
        &["run", "--profile", "toy", "-q", "--json", &fail_json],
        true,
    );
    assert_eq!(failed.status.code(), Some(1), "{}", show(&failed));
    let baseline = p("baseline.yaml");
    let write = toy_run(
        &[
            "baseline", "write", "--from", &fail_json, "--out", &baseline,
        ],
        false,
    );
    assert_eq!(write.status.code(), Some(0), "{}", show(&write));
    let text = std::fs::read_to_string(&baseline).unwrap();
    assert!(text.contains("case: toy.answer@toy#v1"), "{text}");
    let expected = toy_run(
        &["run", "--profile", "toy", "-q", "--baseline", &baseline],
        true,
    );
    assert_eq!(expected.status.code(), Some(0), "{}", show(&expected));
    assert!(
        String::from_utf8_lossy(&expected.stdout).contains("XFAIL    toy.answer@toy#v1"),
        "{}",
        show(&expected)
    );

    // The plain parity binary has no toy: the name is refused as --profile's values are.
    let plain = Command::new(crate::common::parity())
        .args(["run", "--profile", "toy"])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(2), "{}", show(&plain));
    assert!(
        String::from_utf8_lossy(&plain.stderr)
            .contains("invalid value 'toy' for '--profile <PROFILE>'"),
        "{}",
        show(&plain)
    );
}

// --- the library API (parity_harness::api) ------------------------------------------------

use parity_harness::api::Run;
use parity_harness::engine::check::Verdict;

/// The example test of docs/library.md, the same lines but for the server command
/// (`docs::library_md_shows_the_example_the_tests_run` checks they agree).
fn example_test(server: &str) {
    let outcome = Run::mcp(server)
        .profile("mcp")
        .timeout_multiplier(2.0)
        .execute()
        .expect("parity could run the server");
    let ping = "mcp.base.ping@mcp-stdio#2025-11-25";
    assert_eq!(outcome.verdicts().get(ping), Some(&Verdict::Pass));
    outcome.assert_passed();
}

#[test]
fn the_library_checks_a_stdio_server_from_a_test() {
    example_test(&format!("{} reference mcp", crate::common::parity_str()));
}

#[test]
fn the_library_assertion_names_the_failing_case_its_quote_and_evidence() {
    let outcome = Run::mcp(&crate::common::fake_cmd("stdout-banner"))
        .profile("mcp")
        .filter("mcp.stdio.stdout-purity")
        .execute()
        .expect("parity could run the faulty server");
    assert_eq!(outcome.exit_code(), 1, "{:?}", outcome.verdicts());
    let failed: Vec<&str> = outcome.failures().iter().map(|c| c.id.as_str()).collect();
    assert!(
        failed
            .iter()
            .all(|id| id.starts_with("mcp.stdio.stdout-purity@"))
            && !failed.is_empty(),
        "{failed:?}"
    );
    let panic = std::panic::catch_unwind(|| outcome.assert_passed()).expect_err("it must panic");
    let text = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        text.contains("FAIL mcp.stdio.stdout-purity@mcp-stdio#"),
        "{text}"
    );
    assert!(
        text.contains(
            "\"The server MUST NOT write anything to its stdout that is not a valid MCP message.\""
        ),
        "{text}"
    );
    assert!(text.contains("    "), "evidence lines are indented: {text}");
}

#[test]
fn the_library_says_why_a_run_could_not_happen() {
    let missing = Run::mcp("/nonexistent/parity-no-such-server")
        .profile("mcp")
        .execute();
    let e = missing.expect_err("a server that cannot start is no outcome");
    assert_eq!(e.code, 3, "{e}");
    assert!(e.message.contains("the MCP surface did not start"), "{e}");
    let bad = Run::mcp("x").profile("no-such-profile").execute();
    let e = bad.expect_err("an unknown profile is a usage error");
    assert_eq!(e.code, 2, "{e}");
    assert!(
        e.message
            .contains("invalid value 'no-such-profile' for '--profile"),
        "{e}"
    );
}

#[test]
fn the_library_refuses_an_empty_selection_and_console_flags() {
    let reference = format!("{} reference mcp", crate::common::parity_str());
    let none = Run::mcp(&reference)
        .profile("mcp")
        .filter("mcp.no-such-check")
        .execute();
    let e = none.expect_err("a selection that keeps no case is no outcome");
    assert_eq!(e.code, 3, "{e}");
    assert!(e.message.contains("no case matched the selection"), "{e}");
    let color = Run::mcp(&reference)
        .profile("mcp")
        .arg("--color")
        .arg("always")
        .execute();
    let e = color.expect_err("--color shapes a console the library does not print");
    assert_eq!(e.code, 2, "{e}");
    assert!(e.message.contains("--verbose and --color"), "{e}");
    let verbose = Run::mcp(&reference).arg("--verbose").execute();
    let e = verbose.expect_err("--verbose shapes a console the library does not print");
    assert_eq!(e.code, 2, "{e}");
    assert!(
        e.message.contains("--verbose and --color") && !e.message.contains("--quiet"),
        "{e}"
    );
    let clap = Run::mcp(&reference).arg("--no-such-flag").execute();
    let e = clap.expect_err("an unknown flag is a usage error");
    assert_eq!(e.code, 2, "{e}");
    assert!(
        !e.message.starts_with("error:") && !e.message.contains("Usage:"),
        "the sentence alone: {e}"
    );
}

#[test]
fn the_library_writes_the_report_files_it_is_asked_for() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("out/report.json");
    let junit = dir.path().join("report.xml");
    let outcome = Run::mcp(&format!("{} reference mcp", crate::common::parity_str()))
        .profile("mcp")
        .filter("mcp.base.ping")
        .arg("--json")
        .arg(json.as_os_str())
        .arg("--junit")
        .arg(junit.as_os_str())
        .execute()
        .expect("parity could run the reference");
    outcome.assert_passed();
    let text = std::fs::read_to_string(&json).expect("the JSON report was written");
    let value: serde_json::Value = serde_json::from_str(&text).expect("the JSON report parses");
    let ids: Vec<&str> = value["cases"]
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(ids.len(), outcome.report.cases.len(), "{ids:?}");
    assert!(
        ids.iter().all(|id| id.starts_with("mcp.base.ping@")),
        "{ids:?}"
    );
    let xml = std::fs::read_to_string(&junit).expect("the JUnit report was written");
    assert!(xml.contains("mcp.base.ping@mcp-stdio#2025-11-25"), "{xml}");
}
