//! The GitHub Action (`action.yml`) against its documentation (`docs/ci.md`): the inputs of the
//! action and the rows of the input table are the same set with the same defaults, every
//! `inputs.*` the steps use is declared, the runner is checked first, the install is the
//! README's, and the cache key covers every file the binary is built from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    description: String,
    required: bool,
    default: String,
}

#[derive(Deserialize)]
struct Step {
    name: String,
    #[serde(default)]
    run: String,
    #[serde(default)]
    uses: String,
    #[serde(default, rename = "if")]
    condition: String,
}

#[derive(Deserialize)]
struct Runs {
    using: String,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
struct Action {
    inputs: BTreeMap<String, Input>,
    runs: Runs,
}

fn action_text() -> String {
    std::fs::read_to_string(repo().join("action.yml")).unwrap()
}

fn action() -> Action {
    serde_saphyr::from_str(&action_text()).expect("action.yml parses")
}

/// The rows of the input table under `## GitHub Actions` in docs/ci.md: name → default, both
/// without backticks and quotes.
fn documented_inputs() -> BTreeMap<String, String> {
    let doc = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let start = doc
        .find("\n## GitHub Actions")
        .expect("a GitHub Actions section");
    let rest = &doc[start + 1..];
    let section = &rest[..rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3)];
    let table = section
        .split("\n\n")
        .find(|block| {
            block
                .trim_start()
                .starts_with("| input | default | meaning |")
        })
        .expect("an input table");
    let bare = |s: &str| s.trim().trim_matches('`').trim_matches('\'').to_string();
    table
        .lines()
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.split('|').collect();
            (bare(cells[1]), bare(cells[2]))
        })
        .collect()
}

#[test]
fn every_input_is_documented_with_its_default_and_every_documented_one_exists() {
    let action = action();
    let documented = documented_inputs();
    let declared: Vec<&String> = action.inputs.keys().collect();
    let listed: Vec<&String> = documented.keys().collect();
    assert_eq!(
        declared, listed,
        "action.yml inputs vs the docs/ci.md input table"
    );
    for (name, input) in &action.inputs {
        assert_eq!(
            documented[name], input.default,
            "the default of input `{name}` in docs/ci.md"
        );
        assert!(!input.required, "input `{name}` is optional");
        assert!(
            !input.description.trim().is_empty(),
            "input `{name}` has a description"
        );
    }
}

#[test]
fn the_steps_use_only_declared_inputs_and_check_the_runner_first() {
    let text = action_text();
    let action = action();
    assert_eq!(action.runs.using, "composite");
    for (i, _) in text.match_indices("inputs.") {
        let name: String = text[i + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        assert!(
            action.inputs.contains_key(&name),
            "action.yml uses undeclared input `{name}`"
        );
    }
    let first = &action.runs.steps[0];
    assert!(
        first.run.contains("!= Linux") && first.run.contains("::error"),
        "the first step refuses a non-Linux runner: {}",
        first.run
    );
    // The timeout multiplier reaches parity.
    assert!(text.contains("--timeout-multiplier \"$IN_TIMEOUT_MULTIPLIER\""));
    // The summary is parity's own, and the artifact link comes from the upload step.
    let summary = action
        .runs
        .steps
        .iter()
        .find(|s| s.run.contains("GITHUB_STEP_SUMMARY"))
        .expect("a summary step");
    assert!(summary.run.contains("report summary"), "{}", summary.run);
    assert!(summary.run.contains("--html-url"), "{}", summary.run);
    assert!(
        summary.condition.contains("always()"),
        "{}",
        summary.condition
    );
    assert!(action
        .runs
        .steps
        .iter()
        .any(|s| s.uses.starts_with("actions/upload-artifact@")));
    // The job fails with parity's code in a last step, after the upload and the summary.
    let last = action.runs.steps.last().unwrap();
    assert!(last.run.contains("exit"), "{}", last.name);
}

#[test]
fn it_installs_like_the_readme_and_keys_the_cache_by_every_source_file() {
    let action = action();
    let install = action
        .runs
        .steps
        .iter()
        .find(|s| s.name == "Install parity")
        .expect("an install step");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains("cargo install --locked --path harness"));
    assert!(
        install.run.contains("cargo install --locked")
            && install
                .run
                .contains("--path \"$PARITY_ACTION_PATH/harness\"")
    );
    assert!(install.run.contains("parity-harness --version"));
    let resolve = action
        .runs
        .steps
        .iter()
        .find(|s| s.name == "Resolve the parity to install")
        .expect("a resolve step");
    // Every crate directory the binary is built from is hashed whole (no name filter), with the
    // lock file and the workspace manifest; the embedded files live inside the harness crate.
    for part in [
        "Cargo.lock",
        "Cargo.toml",
        "find harness fakes reference-impl",
    ] {
        assert!(resolve.run.contains(part), "cache key lacks {part}");
    }
    assert!(
        !resolve.run.contains("-name '*.rs'"),
        "the key hashes every file"
    );
    for dir in std::fs::read_dir(repo()).unwrap().flatten() {
        let p = dir.path();
        if p.join("Cargo.toml").is_file() && p.file_name().is_some_and(|n| n != "tests") {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                resolve.run.contains(&format!(" {name}")),
                "crate directory {name} is not in the cache key"
            );
        }
    }
    assert!(repo().join("harness/scenarios").is_dir());
}
