//! `parity guard` (docs/guard.md) as a user runs it: the repository's own `guard.toml` passes;
//! the TypeScript example of docs/guard.md (`tests/fixtures/guard/ts-project`, laid out like
//! the seed's project) passes clean, and one injected violation per rule kind fails with the
//! exact `file:line:col` and rule id; a forbidden symbol in a comment or a string does not
//! trigger a code-only rule but does trigger an everything-mode one; `.gitignore` is honoured;
//! binary, non-UTF-8 and unreadable files are skipped and counted; bad rules files name file,
//! line and key; the ratchet baseline grandfathers known violations and fails when one is fixed
//! but still listed; JSON and JUnit carry the same findings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one `parity guard` produced.
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Value,
    what: String,
}

impl Out {
    fn show(&self) -> String {
        format!(
            "{}\nexit: {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.what, self.code, self.stdout, self.stderr
        )
    }

    /// The error-level violations not baselined, as `path:line:col rule`.
    fn errors(&self) -> Vec<String> {
        self.json["violations"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter(|v| v["severity"] == "error" && v["baselined"] == false)
                    .map(|v| {
                        format!(
                            "{}:{}:{} {}",
                            v["path"].as_str().unwrap(),
                            v["line"],
                            v["col"],
                            v["rule"].as_str().unwrap()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Runs `parity guard ARGS --json <tmp>` in `dir`.
fn guard(dir: &Path, args: &[&str]) -> Out {
    let report = tempfile::NamedTempFile::new().unwrap();
    let json_path = report.path().to_string_lossy().into_owned();
    let mut all: Vec<&str> = vec!["guard", "--json", &json_path];
    all.extend_from_slice(args);
    let out = Command::new(common::parity())
        .args(&all)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(report.path()).unwrap_or_default();
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json: serde_json::from_str(&text).unwrap_or(Value::Null),
        what: format!("parity {} (in {})", all.join(" "), dir.display()),
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A fresh copy of the TypeScript example project.
fn ts_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        &repo_root().join("tests/fixtures/guard/ts-project"),
        dir.path(),
    );
    dir
}

fn append(path: &Path, line: &str) {
    let mut text = std::fs::read_to_string(path).unwrap_or_default();
    text.push_str(line);
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

#[test]
fn the_repository_guards_itself() {
    // No baseline: every layer and profile rule holds over the whole tree.
    let out = guard(&repo_root(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.show());
    assert_eq!(out.json["baselined"].as_u64(), Some(0), "{}", out.show());
    assert!(
        out.json["files_scanned"].as_u64().unwrap() > 100,
        "{}",
        out.show()
    );
    let rules: Vec<&str> = out.json["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for id in [
        "surfaces-hold-no-tool-logic",
        "surfaces-call-the-dispatcher-entry-points",
        "harness-spawns-only-in-peer",
        "reference-never-uses-the-harness",
        "layer-base-imports-no-layer",
        "layer-engine-imports-no-profile-report-or-cli",
        "profile-mcp-names-no-other-profile",
    ] {
        assert!(rules.contains(&id), "{id} missing: {rules:?}");
    }
    assert!(out.stdout.contains(": ok"), "{}", out.show());
}

/// The repository's rules over a scratch tree: grouped and aliased imports that the plain
/// symbols miss, a path dependency on the harness, and calls split by comments (which match
/// only once comments are blanked, so the raw-bytes prefilter must not skip the file).
#[test]
fn the_repository_rules_catch_grouped_imports_path_dependencies_and_split_calls() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(repo_root().join("guard.toml"), root.join("guard.toml")).unwrap();
    let put = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put(
        "reference-impl/src/mcp/grouped.rs",
        "use std::{fs, process};\nuse crate::dispatcher::{\n    Dispatcher,\n    tools as tl,\n};\n",
    );
    put(
        "reference-impl/src/mcp/split.rs",
        "fn f() {\n    dispatcher\n        // note\n        .reset();\n}\n",
    );
    put(
        "harness/src/grouped.rs",
        "use std::process::{Child, Stdio};\nuse std::os::unix::process::CommandExt;\n",
    );
    put(
        "reference-impl/Cargo.toml",
        "[dependencies]\nh = { path = \"../harness\" }\n",
    );
    let out = guard(root, &[]);
    assert_eq!(out.code, Some(1), "{}", out.show());
    let errors = out.errors();
    for want in [
        "harness/src/grouped.rs:1:5 harness-spawns-only-in-peer",
        "harness/src/grouped.rs:2:29 harness-spawns-only-in-peer",
        "reference-impl/Cargo.toml:2:7 reference-never-uses-the-harness",
        "reference-impl/src/mcp/grouped.rs:1:5 surfaces-hold-no-tool-logic",
        "reference-impl/src/mcp/grouped.rs:1:5 reference-spawns-only-in-exec-launch-downstream",
        "reference-impl/src/mcp/grouped.rs:2:12 surfaces-hold-no-tool-logic",
        "reference-impl/src/mcp/split.rs:2:5 surfaces-call-the-dispatcher-entry-points",
    ] {
        assert!(
            errors.iter().any(|e| e == want),
            "{want} missing: {errors:#?}\n{}",
            out.show()
        );
    }
}

#[test]
fn the_typescript_example_passes_and_comments_or_strings_do_not_trigger_code_rules() {
    let dir = ts_project();
    let out = guard(dir.path(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.show());
    assert!(out.errors().is_empty(), "{}", out.show());
    // `readFileCapped` sits in a comment (3:67) and a string (9:41) of the MCP surface: the
    // code-only rule forbidding it stays silent, the everything-mode rule warns at both.
    let found: Vec<String> = out.json["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            format!(
                "{}:{}:{} {} {}",
                v["path"].as_str().unwrap(),
                v["line"],
                v["col"],
                v["rule"].as_str().unwrap(),
                v["severity"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![
            "src/surfaces/mcp/server.ts:3:67 internals-not-named-in-surface-text warn",
            "src/surfaces/mcp/server.ts:9:41 internals-not-named-in-surface-text warn",
        ],
        "{}",
        out.show()
    );
    assert!(
        out.stdout
            .contains("src/surfaces/mcp/server.ts:3:67: warn[internals-not-named-in-surface-text]"),
        "{}",
        out.show()
    );
    assert_eq!(out.json["files_scanned"], 8, "{}", out.show());
}

/// Injects `line` at the end of `file` (relative to the example), runs the guard, and asserts
/// exit 1 with exactly one error at `col` of the new line, under `rule`.
fn injected(file: &str, line: &str, col: usize, rule: &str) {
    let dir = ts_project();
    let path = dir.path().join(file);
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    append(&path, line);
    let at = format!("{file}:{}:{col}", lines(&path));
    let out = guard(dir.path(), &[]);
    assert_eq!(out.code, Some(1), "{}", out.show());
    assert_eq!(out.errors(), vec![format!("{at} {rule}")], "{}", out.show());
    assert!(
        out.stdout.contains(&format!("{at}: error[{rule}] ")),
        "{}",
        out.show()
    );
    assert!(
        out.stdout.contains(line),
        "the offending line: {}",
        out.show()
    );
}

#[test]
fn an_injected_forbidden_reference_fails_at_its_location() {
    injected(
        "src/host-plugin/plugin.ts",
        "export const peek = (p: string) => listDir(p);",
        36,
        "surfaces-no-tool-internals",
    );
}

#[test]
fn an_injected_process_spawn_outside_its_module_fails_at_its_location() {
    injected(
        "src/tools/shell.ts",
        "import { execFile } from \"child_process\";",
        27,
        "spawn-only-in-session-execution",
    );
}

#[test]
fn an_injected_call_past_the_entry_point_fails_at_its_location() {
    injected(
        "src/surfaces/acp/agent.ts",
        "export function resetAll(dispatcher: ToolDispatcher) { dispatcher.reset(); }",
        56,
        "surfaces-call-only-dispatch",
    );
}

#[test]
fn gitignored_files_are_not_scanned() {
    let dir = ts_project();
    std::fs::write(dir.path().join(".gitignore"), "src/surfaces/generated/\n").unwrap();
    let gen = dir.path().join("src/surfaces/generated/out.ts");
    std::fs::create_dir_all(gen.parent().unwrap()).unwrap();
    std::fs::write(&gen, "export const x = listDir(\".\");\n").unwrap();
    let out = guard(dir.path(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.show());
    std::fs::remove_file(dir.path().join(".gitignore")).unwrap();
    let out = guard(dir.path(), &[]);
    assert_eq!(
        out.errors(),
        vec!["src/surfaces/generated/out.ts:1:18 surfaces-no-tool-internals"],
        "{}",
        out.show()
    );
}

#[test]
fn binary_non_utf8_and_unreadable_files_are_skipped_and_counted() {
    let dir = ts_project();
    let surf = dir.path().join("src/surfaces/mcp");
    std::fs::write(surf.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0listDir(").unwrap();
    std::fs::write(surf.join("latin1.ts"), b"// caf\xe9\nlistDir(x);\n").unwrap();
    std::os::unix::fs::symlink("does-not-exist.ts", surf.join("dangling.ts")).unwrap();
    // A FIFO and a link to it are passed over (reading one would block), not counted.
    let fifo = surf.join("pipe.ts");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("pipe.ts", surf.join("to-pipe.ts")).unwrap();
    let out = guard(dir.path(), &[]);
    assert_eq!(out.code, Some(0), "{}", out.show());
    let skipped: Vec<String> = out.json["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["path"].as_str().unwrap(),
                s["why"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        skipped,
        vec![
            "src/surfaces/mcp/dangling.ts unreadable",
            "src/surfaces/mcp/latin1.ts not-utf8",
            "src/surfaces/mcp/logo.png binary",
        ],
        "{}",
        out.show()
    );
    assert_eq!(out.json["files_scanned"], 11, "{}", out.show());
    assert!(out.stdout.contains("3 skipped"), "{}", out.show());
}

#[test]
fn bad_rules_files_name_file_line_and_key() {
    let dir = ts_project();
    let rules = dir.path().join("guard.toml");
    let good = std::fs::read_to_string(&rules).unwrap();
    let cases = [
        (
            good.replace("entry = [\"call\"]", "entry = [\"call\"]\nentrys = [\"x\"]"),
            "guard.toml:30:1: rule[2].entrys: unknown field `entrys`",
        ),
        (
            good.replace("files = [\"src/**\"]", "files = [\"src/{a\"]"),
            "guard.toml:18:10: rule[1].files: invalid glob \"src/{a\"",
        ),
        (
            good.replace(r"'\bspawn\('", r"'\bspawn('"),
            "guard.toml:21:13: rule[1].patterns: invalid regular expression",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(&rules, &text).unwrap();
        let out = guard(dir.path(), &[]);
        assert_eq!(out.code, Some(2), "{}", out.show());
        assert!(out.stderr.contains(want), "want {want:?}\n{}", out.show());
    }
    let out = guard(dir.path(), &["--rules", "missing.toml"]);
    assert_eq!(out.code, Some(2), "{}", out.show());
    assert!(
        out.stderr.contains("missing.toml: failed to read"),
        "{}",
        out.show()
    );
}

#[test]
fn the_baseline_ratchet_only_shrinks() {
    let dir = ts_project();
    let plugin = dir.path().join("src/host-plugin/plugin.ts");
    append(&plugin, "export const peek = (p: string) => listDir(p);");
    let base = dir.path().join("guard-baseline.json");
    let base_s = base.to_string_lossy().into_owned();
    let out = guard(dir.path(), &["--write-baseline", &base_s]);
    assert_eq!(out.code, Some(0), "{}", out.show());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    // The two warnings of the example and the injected error.
    let listed = written["violations"].as_array().unwrap();
    assert_eq!(listed.len(), 3, "{written}");
    assert_eq!(
        listed
            .iter()
            .filter(|e| e["rule"] == "surfaces-no-tool-internals")
            .count(),
        1,
        "{written}"
    );
    // Known: reported as baselined, exit 0, even when lines above it move.
    let text = std::fs::read_to_string(&plugin).unwrap();
    std::fs::write(&plugin, format!("// moved down\n{text}")).unwrap();
    let out = guard(dir.path(), &["--baseline", &base_s]);
    assert_eq!(out.code, Some(0), "{}", out.show());
    assert!(
        out.stdout
            .contains("src/host-plugin/plugin.ts:7:36: baselined[surfaces-no-tool-internals]"),
        "{}",
        out.show()
    );
    // A new violation still fails.
    append(&plugin, "export const peek2 = (p: string) => listDir(p);");
    let out = guard(dir.path(), &["--baseline", &base_s]);
    assert_eq!(out.code, Some(1), "{}", out.show());
    assert_eq!(
        out.errors(),
        vec!["src/host-plugin/plugin.ts:8:37 surfaces-no-tool-internals"]
    );
    // Both fixed, the entry still listed: stale, exit 1.
    std::fs::write(
        &plugin,
        text.lines().take(5).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    let out = guard(dir.path(), &["--baseline", &base_s]);
    assert_eq!(out.code, Some(1), "{}", out.show());
    assert_eq!(
        out.json["stale"].as_array().unwrap().len(),
        1,
        "{}",
        out.show()
    );
    assert!(
        out.stdout.contains("stale baseline entry"),
        "{}",
        out.show()
    );
}

#[test]
fn junit_has_one_case_per_rule_and_fails_the_broken_one() {
    let dir = ts_project();
    append(
        &dir.path().join("src/surfaces/acp/agent.ts"),
        "export function resetAll(dispatcher: ToolDispatcher) { dispatcher.reset(); }",
    );
    let junit = dir.path().join("out/guard.xml");
    let out = guard(dir.path(), &["--junit", &junit.to_string_lossy()]);
    assert_eq!(out.code, Some(1), "{}", out.show());
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"4\""), "{xml}");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<testcase name=\"surfaces-call-only-dispatch\""),
        "{xml}"
    );
    assert!(xml.contains("src/surfaces/acp/agent.ts:7:56"), "{xml}");
}

/// Runs `parity run --target parity.toml --json` in `dir`; returns (exit code, the guard case,
/// output for messages).
fn run_profile(dir: &Path) -> (Option<i32>, Value, String) {
    let report = dir.join("run.json");
    let out = Command::new(common::parity())
        .args(["run", "--target", "parity.toml", "--json"])
        .arg(&report)
        .current_dir(dir)
        .output()
        .unwrap();
    let show = format!(
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_default())
        .unwrap_or(Value::Null);
    if !json.is_null() {
        // Every guard run's report matches the published schema.
        let schema: Value = serde_json::from_str(
            &std::fs::read_to_string(repo_root().join("docs/report.schema.json")).unwrap(),
        )
        .unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{}
{show}",
            errors.join("\n")
        );
    }
    (
        out.status.code(),
        json["cases"]["guard.rules@source#guard-1"].clone(),
        show,
    )
}

#[test]
fn the_guard_profile_of_parity_run_fails_a_violation_and_passes_a_clean_tree() {
    let dir = ts_project();
    std::fs::write(
        dir.path().join("parity.toml"),
        "version = 1\nname = \"ts-example\"\n\n[guard]\nrules = \"guard.toml\"\nroot = \".\"\n",
    )
    .unwrap();
    // The example as shipped: only the everything-mode rule's warnings.
    let (code, case, show) = run_profile(dir.path());
    assert_eq!(code, Some(0), "{show}");
    assert_eq!(case["verdict"], "warn", "{show}");
    // One injected violation: the case fails with its location in the evidence.
    let plugin = dir.path().join("src/host-plugin/plugin.ts");
    append(&plugin, "export const peek = (p: string) => listDir(p);");
    let (code, case, show) = run_profile(dir.path());
    assert_eq!(code, Some(1), "{show}");
    assert_eq!(case["verdict"], "fail", "{show}");
    assert!(
        case["evidence"].as_array().unwrap().iter().any(|e| e
            .as_str()
            .unwrap()
            .starts_with("src/host-plugin/plugin.ts:6:36: error[surfaces-no-tool-internals]")),
        "{show}"
    );
    // Without the warn rule and the violation: a pass.
    let rules = dir.path().join("guard.toml");
    let text = std::fs::read_to_string(&rules).unwrap();
    let cut = text
        .find("[[rule]]\nid = \"internals-not-named-in-surface-text\"")
        .unwrap();
    std::fs::write(&rules, &text[..cut]).unwrap();
    let fixed = std::fs::read_to_string(&plugin)
        .unwrap()
        .replace("export const peek = (p: string) => listDir(p);\n", "");
    std::fs::write(&plugin, fixed).unwrap();
    let (code, case, show) = run_profile(dir.path());
    assert_eq!(code, Some(0), "{show}");
    assert_eq!(case["verdict"], "pass", "{show}");
    // A bad rules file is a configuration error.
    std::fs::write(&rules, "[[rule]]\nid = \"x\"\nkind = \"forbidden\"\nreason = \"r\"\nfiles = [\"[\"]\nsymbols = [\"s\"]\n").unwrap();
    let (code, _, show) = run_profile(dir.path());
    assert_eq!(code, Some(2), "{show}");
    assert!(
        show.contains("guard.toml:5:10: rule[0].files: invalid glob"),
        "{show}"
    );
}

#[test]
fn a_guard_table_with_an_unknown_key_names_the_target_file_line_and_key() {
    let dir = ts_project();
    std::fs::write(
        dir.path().join("parity.toml"),
        "version = 1\n\n[guard]\nrules = \"guard.toml\"\nroots = \".\"\n",
    )
    .unwrap();
    let (code, _, show) = run_profile(dir.path());
    assert_eq!(code, Some(2), "{show}");
    assert!(
        show.contains("parity.toml:5:1: guard.roots: unknown field `roots`"),
        "{show}"
    );
}

#[test]
fn docs_guard_md_shows_the_example_rules_file_as_tested() {
    let doc = std::fs::read_to_string(repo_root().join("docs/guard.md")).unwrap();
    let rules =
        std::fs::read_to_string(repo_root().join("tests/fixtures/guard/ts-project/guard.toml"))
            .unwrap();
    // The file without its opening comment lines.
    let body: String = rules
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        doc.contains(&format!("```toml\n{body}```")),
        "docs/guard.md must show tests/fixtures/guard/ts-project/guard.toml as it is:\n{body}"
    );
}

/// The layer rules of `guard.toml` (docs/architecture.md §Layers), over a copy of the harness's
/// tree: for each rule, a back-import injected in the four shapes — a plain
/// `use`, a grouped `use crate::{…}` spread over lines, a `super::` path and a fully qualified
/// path in an expression — is reported with its file, line and rule, and nothing else is.
#[test]
fn every_layer_and_profile_rule_catches_each_shape_of_back_import() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(repo_root().join("guard.toml"), root.join("guard.toml")).unwrap();
    copy_tree(&repo_root().join("harness/src"), &root.join("harness/src"));
    // (rule, folder the file goes in, the path named, what `super::` is followed by)
    let mut cases: Vec<(String, String, String, String)> = [
        (
            "layer-base-imports-no-layer",
            "base",
            "transport::wire",
            "super::transport",
        ),
        (
            "layer-transport-imports-only-base",
            "transport",
            "protocol::mcp",
            "super::protocol",
        ),
        (
            "layer-protocol-imports-only-transport-and-base",
            "protocol",
            "engine::check",
            "super::engine",
        ),
        (
            "layer-engine-imports-no-profile-report-or-cli",
            "engine",
            "profiles::mcp",
            "super::profiles",
        ),
        (
            "layer-profiles-import-no-report-feature-or-cli",
            "profiles/facade",
            "reports::junit",
            "super::super::reports",
        ),
        (
            "layer-reports-and-features-import-no-cli",
            "reports",
            "cli::selftest",
            "super::cli",
        ),
        (
            "layer-reports-and-features-import-no-cli",
            "features",
            "cli::bench",
            "super::cli",
        ),
    ]
    .iter()
    .map(|(r, d, p, s)| (r.to_string(), d.to_string(), p.to_string(), s.to_string()))
    .collect();
    let profiles = [
        "acp",
        "dispatcher",
        "equivalence",
        "facade",
        "guard",
        "hygiene",
        "mcp",
    ];
    for (i, p) in profiles.iter().enumerate() {
        let other = profiles[(i + 1) % profiles.len()];
        cases.push((
            format!("profile-{}-names-no-other-profile", p.replace('_', "-")),
            format!("profiles/{p}"),
            format!("profiles::{other}"),
            "super".to_string(),
        ));
    }
    let mut want = Vec::new();
    for (n, (rule, folder, named, sup)) in cases.iter().enumerate() {
        let (head, leaf) = named.split_once("::").unwrap();
        let rel = format!("harness/src/{folder}/injected{n}.rs");
        // A profile's `super::` path names the sibling profile (`super::acp::x`); a layer's names
        // the layer above through the crate root (`super::super::engine::check`).
        let sup_path = if sup == "super" {
            format!("super::{leaf}::x")
        } else {
            format!("{sup}::{leaf}::x")
        };
        let text = format!(
            "use crate::{named}::Thing;\nuse crate::{{\n    base::util,\n    {named}::Other,\n}};\nfn f() {{ {sup_path}(); }}\nfn g() -> u8 {{ crate::{head}::{leaf}::value(1) }}\n"
        );
        let p = root.join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        for line in [1, 2, 6, 7] {
            want.push((rel.clone(), line, rule.clone()));
        }
    }
    let out = guard(root, &[]);
    assert_eq!(out.code, Some(1), "{}", out.show());
    let errors = out.errors();
    for (rel, line, rule) in &want {
        let at = format!("{rel}:{line}:");
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&at) && e.ends_with(&format!(" {rule}"))),
            "{at} {rule} missing: {errors:#?}"
        );
    }
    // Only the injected files are reported: the rest of the tree is as baselined.
    let stray: Vec<&String> = errors.iter().filter(|e| !e.contains("/injected")).collect();
    assert!(stray.is_empty(), "{stray:#?}\n{}", out.show());
}
