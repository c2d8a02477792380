//! Documentation that is generated from the code must match it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn docs_checks_md_is_the_generated_catalogue() {
    let on_disk = std::fs::read_to_string(repo().join("docs/checks.md")).unwrap();
    let generated = parity_harness::catalogue_doc::markdown();
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
    let acp = parity_harness::checks_acp::catalogue();
    assert!(!acp.is_empty(), "the ACP catalogue is empty");
    for c in parity_harness::checks_mcp::catalogue()
        .into_iter()
        .chain(acp)
        .chain(parity_harness::checks_http::catalogue())
        .chain(parity_harness::facade::catalogue())
        .chain(parity_harness::hygiene::catalogue())
        .chain(parity_harness::dispatcher::catalogue())
        .chain(parity_harness::guard::catalogue())
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
    let t = parity_harness::target::parse("docs/target.md", &text[start..end])
        .unwrap_or_else(|e| panic!("the worked example does not load: {e}"));
    let acp = t.acp.expect("an ACP surface");
    assert_eq!(acp.tool_method.as_deref(), Some("realm/tool"));
    assert_eq!(acp.rules.result, "/outcome");
    assert_eq!(t.mcp.expect("an MCP surface").rules.classes.len(), 1);
    assert_eq!(t.equivalence.seed, Some(42));
}
