//! Documentation that is generated from the code must match it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn docs_checks_md_is_the_generated_catalogue() {
    let on_disk = std::fs::read_to_string(repo().join("docs/checks.md")).unwrap();
    let generated =
        parity_harness::reports::catalogue_doc::markdown(&parity_harness::profiles::builtin());
    assert!(
        on_disk == generated,
        "docs/checks.md is stale: regenerate it with `cargo run -p parity-harness -- list --markdown > docs/checks.md`"
    );
}

#[test]
fn readme_opens_with_the_two_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let head: Vec<&str> = readme.lines().take(6).collect();
    assert!(
        head.iter()
            .any(|l| l.starts_with("cargo run -p parity-harness -- run")),
        "{head:?}"
    );
    assert!(
        head.iter().any(|l| l.starts_with("cargo test --workspace")),
        "{head:?}"
    );
}

#[test]
fn every_check_is_in_the_coverage_matrix() {
    let cov = std::fs::read_to_string(repo().join("docs/coverage.md")).unwrap();
    let acp = parity_harness::profiles::acp::catalogue();
    assert!(!acp.is_empty(), "the ACP catalogue is empty");
    for c in parity_harness::profiles::mcp::catalogue()
        .into_iter()
        .chain(acp)
        .chain(parity_harness::profiles::mcp::http::catalogue())
        .chain(parity_harness::profiles::facade::catalogue())
        .chain(parity_harness::profiles::hygiene::catalogue())
        .chain(parity_harness::profiles::dispatcher::catalogue())
        .chain(parity_harness::profiles::guard::catalogue())
    {
        assert!(
            cov.contains(&format!("`{}`", c.id)),
            "docs/coverage.md never mentions `{}`",
            c.id
        );
    }
}

#[test]
fn the_worked_example_of_docs_target_md_loads() {
    let text = std::fs::read_to_string(repo().join("docs/target.md")).unwrap();
    let start = text.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = start + text[start..].find("```").expect("the block ends");
    let t = parity_harness::engine::target::parse("docs/target.md", &text[start..end])
        .unwrap_or_else(|e| panic!("the worked example does not load: {e}"));
    let acp = t.acp.expect("an ACP surface");
    assert_eq!(acp.tool_method.as_deref(), Some("realm/tool"));
    assert_eq!(acp.rules.result, "/outcome");
    assert_eq!(t.mcp.expect("an MCP surface").rules.classes.len(), 1);
    assert_eq!(t.equivalence.seed, Some(42));
}

/// `text` with every run of whitespace (line breaks included) as one space.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `a, b and c` (each item wrapped in `quote`).
fn english_list(items: &[String], quote: &str) -> String {
    let q: Vec<String> = items.iter().map(|i| format!("{quote}{i}{quote}")).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => q.join(""),
    }
}

fn number_word(n: usize) -> &'static str {
    [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ]
    .get(n)
    .copied()
    .unwrap_or("many")
}

/// The section of `doc` from the heading `from` to the next heading of the same level.
fn section<'a>(doc: &'a str, from: &str) -> &'a str {
    let start = doc
        .find(from)
        .unwrap_or_else(|| panic!("no heading {from:?}"));
    let level = from.chars().take_while(|c| *c == '#').count();
    let rest = &doc[start + from.len()..];
    let end = rest
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|i| {
            let line = &rest[*i..];
            line.starts_with(&"#".repeat(level)) && !line.starts_with(&"#".repeat(level + 1))
        })
        .unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn the_default_run_profiles_are_the_ones_help_and_docs_name() {
    let default = parity_harness::cli::default_run_profiles();
    assert!(default.len() >= 2, "{default:?}");
    // `parity run --help`.
    let help = common::run(&["run", "--help"]);
    help.assert_code(0);
    let want = format!(
        "on the bundled reference (no target, --mcp, --acp or --url) that is {} (",
        english_list(&default, "")
    );
    assert!(
        flat(&help.stdout).contains(&want),
        "run --help lacks {want:?}\n{help}"
    );
    // docs/target.md.
    let target = std::fs::read_to_string(repo().join("docs/target.md")).unwrap();
    let want = format!(
        "bundled reference with {} profiles: {} (",
        number_word(default.len()),
        english_list(&default, "`")
    );
    assert!(
        flat(&target).contains(&want),
        "docs/target.md lacks {want:?}"
    );
}

#[test]
fn every_profile_is_in_the_profile_tables() {
    let target = std::fs::read_to_string(repo().join("docs/target.md")).unwrap();
    let start = std::fs::read_to_string(repo().join("docs/getting-started.md")).unwrap();
    let row = start
        .lines()
        .find(|l| l.starts_with("| `--profile P` |"))
        .expect("the --profile row of docs/getting-started.md");
    let help = common::run(&["run", "--help"]);
    let help = flat(&help.stdout);
    for p in parity_harness::engine::target::PROFILES {
        assert!(
            target.lines().any(|l| l.starts_with(&format!("| `{p}` |"))),
            "docs/target.md has no row for profile {p}"
        );
        assert!(
            row.contains(&format!("`{p}`")),
            "docs/getting-started.md's --profile row lacks {p}: {row}"
        );
        assert!(help.contains(&format!(" {p}")), "run --help lacks {p}");
    }
}

#[test]
fn docs_ci_md_names_every_junit_suite_and_binding() {
    let ci = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let junit = flat(section(&ci, "### `--junit FILE`"));
    let suites = parity_harness::engine::target::PROFILES
        .iter()
        .copied()
        .chain(["parity", "baseline"]);
    for s in suites {
        assert!(
            junit.contains(&format!("`{s}`")),
            "docs/ci.md's JUnit section never names the suite `{s}`"
        );
    }
    for (b, _) in parity_harness::profiles::builtin().bindings() {
        assert!(
            junit.contains(&format!("`{b}`")),
            "docs/ci.md's JUnit section never names the binding `{b}`"
        );
    }
}

/// docs/library.md's example test is the one `tests/tests/library.rs` runs, line for line
/// (only the server command and the function's name and signature differ).
#[test]
fn library_md_shows_the_example_the_tests_run() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/library.md")).unwrap();
    let tests = std::fs::read_to_string(root.join("tests/tests/library.rs")).unwrap();
    let start = doc
        .find("fn my_server_speaks_mcp() {\n")
        .expect("the example in docs/library.md");
    let body = &doc[start + "fn my_server_speaks_mcp() {\n".len()..];
    let body = &body[..body.find("\n}\n").expect("the example's end")];
    let ours = body.replace("Run::mcp(\"node dist/server.js\")", "Run::mcp(server)");
    assert!(
        tests.contains(&format!("fn example_test(server: &str) {{\n{ours}\n}}")),
        "docs/library.md's example and tests/tests/library.rs's example_test differ:\n{ours}"
    );
    for used in [
        "use parity_harness::api::Run;",
        "use parity_harness::engine::check::Verdict;",
    ] {
        assert!(doc.contains(used) && tests.contains(used), "{used}");
    }
}
