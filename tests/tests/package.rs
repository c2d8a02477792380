//! The `parity-harness` package holds every file the crate embeds: `cargo package --list`
//! (no build, no network) must name each `include_str!`/`include_bytes!` target of
//! `harness/src`, and each must lie inside the crate's directory. Without this a published
//! crate would not build (`scenario.rs` embeds the shipped scenarios and recordings).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn harness_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The embedded files, relative to the crate directory (`scenarios/mcp/x.yaml`).
fn embedded() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&harness_dir().join("src"), &mut files);
    let mut out = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for mac in ["include_str!(\"", "include_bytes!(\""] {
            for (i, _) in text.match_indices(mac) {
                let rest = &text[i + mac.len()..];
                let arg = &rest[..rest.find('"').expect("a closed string literal")];
                let rel_to_src = f.parent().unwrap().strip_prefix(harness_dir()).unwrap();
                let p = lexical(&rel_to_src.join(arg));
                assert!(
                    !p.starts_with(".."),
                    "{} embeds {arg}, which is outside the harness crate",
                    f.display()
                );
                out.insert(p.to_string_lossy().into_owned());
            }
        }
    }
    out
}

#[test]
fn every_embedded_file_is_in_the_harness_package() {
    let embedded = embedded();
    assert!(
        embedded.iter().any(|e| e.starts_with("scenarios/")),
        "no embedded scenario found: {embedded:?}"
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "package",
            "--list",
            "--allow-dirty",
            "--offline",
            "-p",
            "parity-harness",
        ])
        .current_dir(harness_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo package --list failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: BTreeSet<&str> = stdout.lines().collect();
    let missing: Vec<&String> = embedded
        .iter()
        .filter(|e| !listed.contains(e.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "embedded but not packaged: {missing:?}\nlisted: {listed:?}"
    );
}
