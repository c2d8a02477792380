//! The hygiene probe (`parity hygiene`, docs/hygiene.md) against real processes: the bundled
//! reference launcher and bridge pass every check; every faulty host of the zoo fails the check
//! it names, with evidence naming the process, variable or file; no canary reaches any report
//! (console, JSON, JUnit); every benign host passes under its declarations; the `/proc` polling
//! fallback works; a target file declares the stdin and file channels and the stored form, and
//! runs as the `hygiene` profile of `parity run`; and the worked example of docs/target.md for a
//! host that stores the bare token passes every check.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// A loopback endpoint nobody listens on: the bridge sends nothing during the probe.
const ENDPOINT: &str = "http://127.0.0.1:9/mcp";

/// What one `parity hygiene` or `parity run` produced.
struct Probe {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Value,
    junit: String,
    html: String,
    what: String,
}

impl Probe {
    fn verdict(&self, check: &str) -> &str {
        self.case(check)
            .get("verdict")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn case(&self, check: &str) -> &Value {
        self.json
            .get("cases")
            .and_then(|c| c.get(format!("{check}@host#v1")))
            .unwrap_or_else(|| panic!("no case {check}\n{self}"))
    }

    /// Message and evidence of a case, as one text.
    fn said(&self, check: &str) -> String {
        let c = self.case(check);
        let mut s = c
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        for e in c
            .get("evidence")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            s.push('\n');
            s.push_str(e.as_str().unwrap_or(""));
        }
        s
    }

    fn checks(&self) -> Vec<(String, String)> {
        self.json
            .get("cases")
            .and_then(Value::as_object)
            .map(|m| {
                m.values()
                    .map(|c| {
                        (
                            c["check"].as_str().unwrap_or("").to_owned(),
                            c["verdict"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// No canary in any encoding anywhere: console, stderr, JSON, JUnit and HTML.
    fn assert_no_canary(&self) {
        let json = self.json.to_string();
        for (name, text) in [
            ("stdout", self.stdout.as_str()),
            ("stderr", self.stderr.as_str()),
            ("JSON", json.as_str()),
            ("JUnit", self.junit.as_str()),
            ("HTML", self.html.as_str()),
        ] {
            for p in canary_prefix_patterns() {
                assert!(
                    !text.contains(&p),
                    "the {name} report holds a canary ({p})\n{self}"
                );
            }
        }
    }
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "command: {}", self.what)?;
        writeln!(f, "exit code: {:?}", self.code)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout)?;
        writeln!(f, "--- stderr ---\n{}", self.stderr)?;
        writeln!(
            f,
            "--- JSON ---\n{}",
            serde_json::to_string_pretty(&self.json).unwrap_or_default()
        )
    }
}

/// The canary's fixed prefix, raw and base64 (standard and URL-safe) at each alignment: a
/// canary is `PARITYCANARY` + 32 random hex digits, so its prefix is what a report could leak
/// in any form the probe searches.
fn canary_prefix_patterns() -> Vec<String> {
    use base64_free::encode;
    let mut v = vec!["PARITYCANARY".to_owned()];
    for pad in 0..3usize {
        let mut bytes = vec![0u8; pad];
        bytes.extend_from_slice(b"PARITYCANARY");
        for url in [false, true] {
            let enc = encode(&bytes, url);
            let skip = (pad * 4).div_ceil(3);
            let core: String = enc.chars().skip(skip).collect();
            v.push(core[..core.len() - 3].to_owned());
        }
    }
    v
}

/// A small base64 encoder, so the test does not share the harness's.
mod base64_free {
    pub fn encode(bytes: &[u8], url: bool) -> String {
        let alphabet: &[u8] = if url {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        } else {
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        };
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            let chars = chunk.len() + 1;
            for i in 0..chars {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }
}

/// Runs `parity <pre…> --json J --junit U --html H <post…>` and reads the three reports.
fn probe(pre: &[&str], post: &[&str]) -> Probe {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let junit = dir.path().join("r.xml");
    let html = dir.path().join("r.html");
    let mut args: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
    args.extend([
        "--json".into(),
        json.to_string_lossy().into_owned(),
        "--junit".into(),
        junit.to_string_lossy().into_owned(),
        "--html".into(),
        html.to_string_lossy().into_owned(),
    ]);
    args.extend(post.iter().map(|s| s.to_string()));
    let out = Command::new(common::parity())
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Probe {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json: std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null),
        junit: std::fs::read_to_string(&junit).unwrap_or_default(),
        html: std::fs::read_to_string(&html).unwrap_or_default(),
        what: format!("parity {}", args.join(" ")),
    }
}

/// Probes the bundled pair, `parity reference launch -- parity reference bridge`.
fn reference_probe(pre: &[&str]) -> Probe {
    let exe = common::parity_str();
    probe(
        pre,
        &[
            "--",
            &exe,
            "reference",
            "launch",
            "--endpoint",
            ENDPOINT,
            "--",
            &exe,
            "reference",
            "bridge",
        ],
    )
}

/// The seed host's stale file variables, as `stale_file_vars = […]` (the zoo follows the
/// reference launcher, whose target plants them; the default plants none).
fn stale_vars_line() -> String {
    let vars: Vec<String> = parity_harness::engine::decl::REFERENCE_STALE_FILE_VARS
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    format!("stale_file_vars = [{}]\n", vars.join(", "))
}

/// `parity hygiene --target T <extra…> -- parity fake-host <name>`, where `T` declares `body`
/// (more `[hygiene]` keys) and the seed host's stale file variables.
fn fake_host_with(extra: &[&str], name: &str, body: &str) -> Probe {
    let exe = common::parity_str();
    let dir = tempfile::tempdir().unwrap();
    let target = write_target(
        dir.path(),
        &format!("version = 1\n[hygiene]\n{}{body}", stale_vars_line()),
    );
    let mut pre = vec!["hygiene", "--target", target.as_str()];
    pre.extend_from_slice(extra);
    probe(&pre, &["--", &exe, "fake-host", name])
}

/// A host of the zoo under the declarations `parity selftest` gives it.
fn fake_host(extra: &[&str], fault: &str) -> Probe {
    fake_host_with(extra, fault, "")
}

fn assert_all_pass(p: &Probe) {
    assert_all_pass_but(p, &[]);
}

/// Every check passes, except those of `skipped`, which skip.
fn assert_all_pass_but(p: &Probe, skipped: &[&str]) {
    let checks = p.checks();
    assert_eq!(
        checks.len(),
        parity_harness::profiles::hygiene::catalogue().len(),
        "{p}"
    );
    for (check, verdict) in checks {
        let want = if skipped.contains(&check.as_str()) {
            "skip"
        } else {
            "pass"
        };
        assert_eq!(verdict, want, "{check}\n{p}");
    }
    assert_eq!(p.code, Some(0), "{p}");
}

/// A command given without a target plants no stale file variable: the stale check has
/// nothing to judge.
const UNPLANTED: [&str; 1] = ["hygiene.stale-file"];

#[test]
fn the_reference_launcher_and_bridge_pass_every_check() {
    // Given as a command, without a target: the default declarations plant no stale file
    // variable, so the stale check skips, saying how to declare them.
    let p = reference_probe(&["hygiene"]);
    assert_all_pass_but(&p, &UNPLANTED);
    assert!(
        p.said("hygiene.stale-file").contains("stale_file_vars"),
        "{p}"
    );
    assert!(
        p.stdout.contains("hygiene tracking: ptrace"),
        "the report names the tracking method\n{p}"
    );
    // Evidence names what was looked at: the bridge and its credential file.
    assert!(p.said("hygiene.env.child").contains("pid "), "{p}");
    assert!(
        p.said("hygiene.file.mode")
            .contains("named by PARITY_MCP_AUTHORIZATION_FILE"),
        "{p}"
    );
    p.assert_no_canary();
    // With no command at all, the same bundled pair is probed under the reference's own
    // target, which plants the seed host's stale file variables: every check passes.
    let d = probe(&["hygiene"], &[]);
    assert_all_pass(&d);
    assert!(
        d.said("hygiene.stale-file")
            .contains("planted: PARITY_MCP_AUTHORIZATION_FILE, T3_ACP_MCP_AUTHORIZATION_FILE"),
        "{d}"
    );
    d.assert_no_canary();
}

/// The checks that judge credential files: `skip` when no child was handed one.
const FILE_CHECKS: [&str; 6] = [
    "hygiene.file.mode",
    "hygiene.file.dir-mode",
    "hygiene.file.content",
    "hygiene.rotation",
    "hygiene.cleanup.tmp",
    "hygiene.cleanup.files",
];

/// What `host-no-file` fails or skips besides `hygiene.file.handed`.
const NO_FILE_ALSO: [&str; 7] = [
    FILE_CHECKS[0],
    FILE_CHECKS[1],
    FILE_CHECKS[2],
    FILE_CHECKS[3],
    FILE_CHECKS[4],
    FILE_CHECKS[5],
    "hygiene.stray-copy",
];

/// (fault, check it must fail, other checks allowed to fail with it, a word of the evidence).
const FAULTS: [(&str, &str, &[&str], &str); 16] = [
    (
        "host-env-child",
        "hygiene.env.child",
        &[],
        "PARITY_MCP_AUTHORIZATION",
    ),
    ("host-argv", "hygiene.argv", &[], "argv["),
    (
        "host-env-grandchild",
        "hygiene.env.child",
        &[],
        "UPSTREAM_AUTHORIZATION",
    ),
    ("host-short-lived", "hygiene.env.child", &[], "HOST_TOKEN"),
    (
        "host-no-file",
        "hygiene.file.handed",
        // With no credential file handed, the file checks have nothing to judge (skip), and
        // the file the host keeps to itself in $TMPDIR is a stray copy.
        &NO_FILE_ALSO,
        "none of the host's",
    ),
    ("host-file-mode", "hygiene.file.mode", &[], "mode 0644"),
    ("host-dir-mode", "hygiene.file.dir-mode", &[], "mode 0755"),
    (
        "host-file-newline",
        "hygiene.file.content",
        &[],
        "followed by a newline",
    ),
    (
        "host-dir-left",
        "hygiene.cleanup.files",
        &[],
        "still exists after shutdown",
    ),
    (
        "host-tmp-left",
        "hygiene.cleanup.tmp",
        &[],
        ".tmp is left behind",
    ),
    ("host-legacy", "hygiene.legacy", &[], "T3_MCP_BEARER_TOKEN"),
    (
        "host-stale-file",
        "hygiene.stale-file",
        &[],
        "inherited T3_ACP_MCP_AUTHORIZATION_FILE still naming the decoy",
    ),
    ("host-log", "hygiene.output", &[], "stderr line"),
    (
        "host-rotation-path",
        "hygiene.rotation",
        // The moved file holds the new header where no child looks: a stray copy as well.
        &["hygiene.stray-copy"],
        "the path moved",
    ),
    (
        "host-stray-copy",
        "hygiene.stray-copy",
        &[],
        "fake-host-session.json",
    ),
    (
        "host-orphan",
        "hygiene.cleanup.descendants",
        &[],
        "still running after the host ended",
    ),
];

#[test]
fn every_faulty_host_fails_its_check_with_evidence_and_no_canary() {
    // The table covers the zoo, and every hygiene check is proven by a fault.
    let zoo: Vec<&str> = parity_fakes::host_catalogue()
        .iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(zoo.len(), FAULTS.len());
    for c in parity_harness::profiles::hygiene::catalogue() {
        assert!(
            FAULTS.iter().any(|(_, check, _, _)| *check == c.id),
            "no faulty host proves {}",
            c.id
        );
    }
    // Three probes at a time.
    let results: Vec<(usize, Probe)> = std::thread::scope(|s| {
        let mut out = Vec::new();
        for chunk in FAULTS.iter().enumerate().collect::<Vec<_>>().chunks(3) {
            let handles: Vec<_> = chunk
                .iter()
                .map(|(i, (fault, _, _, _))| {
                    let i = *i;
                    s.spawn(move || (i, fake_host(&[], fault)))
                })
                .collect();
            for h in handles {
                out.push(h.join().unwrap());
            }
        }
        out
    });
    for (i, p) in results {
        let (fault, check, also, word) = FAULTS[i];
        assert!(zoo.contains(&fault), "{fault} is not in the zoo");
        let level = parity_harness::profiles::hygiene::catalogue()
            .into_iter()
            .find(|c| c.id == check)
            .map(|c| c.level.violation_verdict().as_str())
            .unwrap();
        assert_eq!(
            p.verdict(check),
            level,
            "{fault} must make {check} {level}\n{p}"
        );
        assert!(
            p.said(check).contains(word),
            "{fault}: the evidence of {check} names `{word}`\n{p}"
        );
        // The message names the rule the verdict rests on.
        let rule = parity_harness::profiles::hygiene::rests_on(check);
        let message = p.case(check)["message"].as_str().unwrap_or("");
        // hygiene.rotation's findings name the narrower rule they rest on (40, 42 or 39).
        let narrower = check.starts_with("hygiene.rotation")
            && ["(rule 39)", "(rule 40)", "(rule 42)"]
                .iter()
                .any(|r| message.contains(r));
        assert!(
            message.contains(&format!("({rule})")) || narrower,
            "{fault}: the message of {check} names {rule}\n{p}"
        );
        for (other, verdict) in p.checks() {
            if other != check && !also.contains(&other.as_str()) {
                assert_eq!(verdict, "pass", "{fault}: {other} should pass\n{p}");
            }
        }
        if fault == "host-no-file" {
            for c in FILE_CHECKS {
                assert_eq!(p.verdict(c), "skip", "{fault}: {c}\n{p}");
            }
        }
        assert_eq!(
            p.code,
            Some(if level == "fail" { 1 } else { 0 }),
            "{fault}\n{p}"
        );
        p.assert_no_canary();
    }
}

#[test]
fn the_polling_fallback_passes_the_reference_and_catches_a_leaking_child() {
    let clean = reference_probe(&["hygiene", "--no-ptrace"]);
    assert_all_pass_but(&clean, &UNPLANTED);
    assert!(
        clean.stdout.contains("/proc polling every 5 ms"),
        "the report says it polled, with the interval\n{clean}"
    );
    let leak = fake_host(&["--no-ptrace", "--poll-ms", "2"], "host-env-child");
    assert_eq!(leak.verdict("hygiene.env.child"), "fail", "{leak}");
    assert!(leak.stdout.contains("/proc polling every 2 ms"), "{leak}");
    leak.assert_no_canary();
    let legacy = fake_host(&["--no-ptrace"], "host-legacy");
    assert_eq!(legacy.verdict("hygiene.legacy"), "fail", "{legacy}");
    // A child that exits at once may end between two polls: then it is missed, and a missed
    // process makes the check not-run. Caught or missed, it is never a pass.
    // A child shorter than the interval may be caught (fail), seen but not read (not-run), or
    // never seen at all: then the pass says, in its evidence, that such processes can be
    // missed (the unit tests pin the seen-but-unread case).
    let short = fake_host(&["--no-ptrace", "--poll-ms", "50"], "host-short-lived");
    let said = short.said("hygiene.env.child");
    match short.verdict("hygiene.env.child") {
        "fail" => assert!(said.contains("HOST_TOKEN"), "{short}"),
        "not-run" => assert!(
            said.contains("ended before polling could read them"),
            "{short}"
        ),
        "pass" => assert!(
            said.contains("shorter than the interval can be missed"),
            "{short}"
        ),
        other => panic!("unexpected verdict {other}\n{short}"),
    }
    short.assert_no_canary();
}

#[test]
fn a_host_that_starts_no_child_fails_the_file_hand_over() {
    // `true` ends at once and hands nothing to anyone: nothing shows the host keeps the
    // token out of its children, so the run cannot be green.
    let p = probe(&["hygiene"], &["--", "true"]);
    assert_eq!(p.verdict("hygiene.file.handed"), "fail", "{p}");
    assert!(
        p.said("hygiene.file.handed").contains("started no child"),
        "{p}"
    );
    assert_eq!(p.code, Some(1), "{p}");
    p.assert_no_canary();
}

#[test]
fn a_host_that_keeps_running_without_a_child_is_a_timeout_not_a_failure() {
    // `sleep` starts nothing for the whole start-up budget (30 s, here a twentieth): parity
    // waited in vain, so `hygiene.file.handed` is a timeout naming the step, never a fail.
    let p = probe(
        &["hygiene", "--timeout-multiplier", "0.05"],
        &["--", "sleep", "30"],
    );
    assert_eq!(p.verdict("hygiene.file.handed"), "timeout", "{p}");
    let message = p.case("hygiene.file.handed")["message"]
        .as_str()
        .unwrap_or("");
    assert!(
        message.starts_with("waiting for the tree to settle")
            && message.contains("1500 ms")
            && message.ends_with("(rule 48)"),
        "{p}"
    );
    for (check, verdict) in p.checks() {
        assert_ne!(verdict, "fail", "{check}\n{p}");
    }
    assert_eq!(p.code, Some(1), "{p}");
}

fn write_target(dir: &Path, body: &str) -> String {
    let path = dir.join("parity.toml");
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_target_declares_the_stdin_and_file_channels_and_runs_as_a_profile() {
    let exe = common::parity_str();
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let dir = tempfile::tempdir().unwrap();
    // The bearer as the first stdin line (`parity reference launch --bearer-stdin`), through
    // `parity run --target` and the hygiene profile.
    let target = write_target(
        dir.path(),
        &format!(
            r#"version = 1
name = "stdin host"
[hygiene]
command = "{exe} reference launch --bearer-stdin -- {exe} reference bridge"
delivery = "stdin"
stdin_line = "{{header}}"
env = {{ PARITY_MCP_ENDPOINT = "http://127.0.0.1:9/mcp" }}
{stale}"#,
            exe = q(&exe),
            stale = stale_vars_line()
        ),
    );
    let run = probe(&["run", "--target", &target], &[]);
    assert_all_pass(&run);
    run.assert_no_canary();
    // The header in a file parity writes, its path as `{credential_file}` on the host's argv:
    // a shell reads it into the fake host's own variable (with a builtin: a `cat` child would
    // inherit the planted legacy variables and fail `hygiene.legacy`), then becomes the fake
    // host.
    let file_dir = tempfile::tempdir().unwrap();
    let target = write_target(
        file_dir.path(),
        &format!(
            r#"version = 1
[hygiene]
command = "sh -c 'read -r PARITY_MCP_AUTHORIZATION < \"$1\"; export PARITY_MCP_AUTHORIZATION; exec \"$0\" fake-host clean' {exe} {{credential_file}}"
delivery = "file"
ptrace = false
{stale}"#,
            exe = q(&exe),
            stale = stale_vars_line()
        ),
    );
    let file = probe(&["hygiene", "--target", &target], &[]);
    assert_all_pass(&file);
    assert!(
        file.stdout.contains("/proc polling"),
        "ptrace = false\n{file}"
    );
    file.assert_no_canary();
}

#[test]
fn the_report_search_finds_an_encoded_canary() {
    // A negative control for `assert_no_canary`: the prefix patterns find a canary, raw or in
    // base64 at any alignment, in either alphabet.
    let token = "PARITYCANARY0123456789abcdef0123456789abcdef";
    for pad in ["", "x", "xy"] {
        for url in [false, true] {
            let enc = base64_free::encode(format!("{pad}Bearer {token}").as_bytes(), url);
            assert!(
                canary_prefix_patterns()
                    .iter()
                    .any(|p| enc.contains(p.as_str())),
                "{enc}"
            );
        }
    }
    assert!(canary_prefix_patterns()
        .iter()
        .any(|p| token.contains(p.as_str())));
}

#[test]
fn a_malformed_hygiene_table_is_a_configuration_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let target = write_target(
        dir.path(),
        "version = 1\n[hygiene]\ncommand = \"host\"\ndelivery = \"pigeon\"\n",
    );
    let p = probe(&["hygiene", "--target", &target], &[]);
    assert_eq!(p.code, Some(2), "{p}");
    assert!(
        p.stderr.contains(":4:") && p.stderr.contains("hygiene.delivery"),
        "{p}"
    );
    let target = write_target(dir.path(), "version = 1\n[hygiene]\nheader = \"Bearer\"\n");
    let p = probe(&["hygiene", "--target", &target], &[]);
    assert_eq!(p.code, Some(2), "{p}");
    assert!(p.stderr.contains("hygiene.header"), "{p}");
    // A stored form without `{token}` names its file, line and key.
    let target = write_target(
        dir.path(),
        "version = 1\n[hygiene]\nheader = \"Bearer {token}\"\nstored = \"Bearer\"\n",
    );
    let p = probe(&["hygiene", "--target", &target], &[]);
    assert_eq!(p.code, Some(2), "{p}");
    assert!(
        p.stderr.contains("parity.toml:4:") && p.stderr.contains("hygiene.stored"),
        "{p}"
    );
}

#[test]
fn every_benign_host_passes_under_its_declarations() {
    let benign = parity_fakes::host_benign_catalogue();
    assert!(benign.len() >= 2);
    for b in benign {
        let mut body = String::new();
        if let Some(stored) = b.stored {
            body.push_str(&format!("stored = {stored:?}\n"));
        }
        if !b.env.is_empty() {
            let env: Vec<String> = b.env.iter().map(|(k, v)| format!("{k} = {v:?}")).collect();
            body.push_str(&format!("env = {{ {} }}\n", env.join(", ")));
        }
        let p = fake_host_with(&[], b.name, &body);
        assert_all_pass(&p);
        p.assert_no_canary();
    }
}

#[test]
fn a_host_that_stores_the_bare_token_fails_the_content_check_unless_it_says_so() {
    // Undeclared, the file must hold the header as delivered: the bare token is not it, and
    // the message says how to declare it (the rotated file holds the bare new token too).
    let p = fake_host_with(&[], "benign-host-bare-token", "");
    assert_eq!(p.verdict("hygiene.file.content"), "fail", "{p}");
    let said = p.said("hygiene.file.content");
    assert!(
        said.contains("the bare token [CANARY]")
            && said.contains("stored = \"{token}\"")
            && said.contains("(rule 39)"),
        "{p}"
    );
    for (check, verdict) in p.checks() {
        if check != "hygiene.file.content" && check != "hygiene.rotation" {
            assert_eq!(verdict, "pass", "{check}\n{p}");
        }
    }
    assert_eq!(p.code, Some(1), "{p}");
    p.assert_no_canary();
    // Declared, it passes everything (every_benign_host_passes_under_its_declarations), and a
    // host that stores the header as delivered then fails: the stored form is what counts.
    let clean = fake_host_with(&[], "clean", "stored = \"{token}\"\n");
    assert_eq!(clean.verdict("hygiene.file.content"), "fail", "{clean}");
    assert!(
        clean.said("hygiene.file.content").contains("as delivered"),
        "{clean}"
    );
    clean.assert_no_canary();
}

#[test]
fn a_command_without_a_target_plants_no_stale_file_variable() {
    // `hygiene.legacy` judges only the rule-49 variables; the stale one the faulty host passes
    // on is not planted by default, so nothing is judged (skip), and nothing fails.
    let exe = common::parity_str();
    let p = probe(&["hygiene"], &["--", &exe, "fake-host", "host-stale-file"]);
    assert_all_pass_but(&p, &UNPLANTED);
    assert!(
        p.said("hygiene.stale-file")
            .contains("the target plants no stale file variable"),
        "{p}"
    );
    // Planted (the reference's declarations), the same host warns; `hygiene.legacy` passes.
    let planted = fake_host(&[], "host-stale-file");
    assert_eq!(planted.verdict("hygiene.stale-file"), "warn", "{planted}");
    assert_eq!(planted.verdict("hygiene.legacy"), "pass", "{planted}");
    assert_eq!(planted.code, Some(0), "{planted}");
}

#[test]
fn the_worked_example_of_a_host_that_stores_the_bare_token_passes_every_check() {
    // docs/target.md: a host handed `Bearer <token>` in a file that stores the bare token.
    let example = common::docs_example("target.md", "hygiene-bare-token");
    assert!(example.contains("stored = \"{token}\""), "{example}");
    assert!(example.contains("delivery = \"file\""), "{example}");
    let exe = common::parity_str();
    let quoted = format!("'{}'", exe.replace('\'', "'\\''"));
    let body = example.replace("\"parity fake-host ", &format!("\"{quoted} fake-host "));
    assert_ne!(
        body, example,
        "the example's command is `parity fake-host …`"
    );
    let dir = tempfile::tempdir().unwrap();
    let target = write_target(dir.path(), &body);
    let p = probe(&["run", "--target", &target], &[]);
    assert_all_pass(&p);
    p.assert_no_canary();
}

#[test]
fn a_host_that_cannot_start_is_could_not_run() {
    let p = probe(&["hygiene"], &["--", "/nonexistent/parity-no-such-host"]);
    assert_eq!(p.code, Some(3), "{p}");
    assert!(p.stderr.contains("could not be observed"), "{p}");
    // The reason names the step that was waiting.
    assert!(p.stderr.contains("waiting for the tree to settle"), "{p}");
    p.assert_no_canary();
}
