//! Dispatcher lifecycle and policy over real processes (docs/dispatcher.md): the startup
//! budget through `parity reference mcp|acp --policy FILE` judged by the order of events only
//! (exact times are unit-tested on a paused clock in the reference crate), the `dispatcher`
//! profile on the reference, every faulty dispatcher failing the checks it must trip, and the
//! errors of policy files and `[dispatcher]` tables.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

/// A 30 s simulated start under a 200 ms budget.
const SLOW: &str = "mode = \"advisory\"\nstartup_budget_ms = 200\n\n[runtime]\nkind = \"simulated\"\nstart_delay_ms = 30000\n";

/// A stdio peer spoken to line by line; killed on drop.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Peer {
    fn start(args: &[&str]) -> Peer {
        let mut child = Command::new(common::parity())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Peer {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    /// Sends a request and reads lines until its response (notifications are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut buf = String::new();
            let n = self.stdout.read_line(&mut buf).unwrap();
            assert!(n > 0, "EOF waiting for the answer to {method}");
            let v: Value = serde_json::from_str(&buf).unwrap();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One surface under test: how to open it and how to call a tool through it.
enum Surface {
    Mcp,
    Acp { session: String },
}

impl Surface {
    fn open(kind: &str, policy: &std::path::Path) -> (Peer, Surface) {
        let policy = policy.to_str().unwrap();
        let mut peer = Peer::start(&["reference", kind, "--policy", policy]);
        if kind == "mcp" {
            let r = peer.request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            );
            assert!(r.get("result").is_some(), "{r}");
            writeln!(
                peer.stdin,
                "{}",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            )
            .unwrap();
            (peer, Surface::Mcp)
        } else {
            let r = peer.request(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {}}),
            );
            assert!(r.get("result").is_some(), "{r}");
            let r = peer.request("session/new", json!({"cwd": "/", "mcpServers": []}));
            let session = r
                .pointer("/result/sessionId")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned();
            (peer, Surface::Acp { session })
        }
    }

    /// The outcome object of one tool call.
    fn call(&self, peer: &mut Peer, name: &str, arguments: Value) -> Value {
        match self {
            Surface::Mcp => {
                let r = peer.request("tools/call", json!({"name": name, "arguments": arguments}));
                r.pointer("/result/structuredContent")
                    .cloned()
                    .unwrap_or_else(|| panic!("no outcome in {r}"))
            }
            Surface::Acp { session } => {
                let r = peer.request(
                    "_parity/tool",
                    json!({"sessionId": session, "name": name, "arguments": arguments}),
                );
                r.get("result")
                    .cloned()
                    .unwrap_or_else(|| panic!("no outcome in {r}"))
            }
        }
    }
}

/// Through each surface: the first status answers before the 30 s start could finish, with
/// the non-active label; status later reads disconnected with STARTUP_BUDGET_EXCEEDED; then
/// read_file still succeeds. Only the order of events is asserted.
#[test]
fn a_30_s_start_under_a_200_ms_budget_settles_disconnected_and_reads_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("slow.toml");
    std::fs::write(&policy, SLOW).unwrap();
    for kind in ["mcp", "acp"] {
        let (mut peer, surface) = Surface::open(kind, &policy);
        let first = surface.call(&mut peer, "status", json!({}));
        assert_eq!(first["outcome"], "ok", "{kind}: {first}");
        assert_eq!(first["value"]["label"], "disconnected", "{kind}: {first}");
        assert_ne!(first["value"]["state"], "active", "{kind}: {first}");
        let mut settled = first;
        // Bounded by the poll count only (a hang guard, not a timing assertion).
        for _ in 0..2_000 {
            if settled["value"]["reason"] == "STARTUP_BUDGET_EXCEEDED" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            settled = surface.call(&mut peer, "status", json!({}));
        }
        assert_eq!(
            settled["value"]["state"], "disconnected",
            "{kind}: {settled}"
        );
        assert_eq!(settled["value"]["label"], "disconnected");
        assert_eq!(settled["value"]["reason"], "STARTUP_BUDGET_EXCEEDED");
        let read = surface.call(&mut peer, "read_file", json!({"path": "README.md"}));
        assert_eq!(read["outcome"], "ok", "{kind}: {read}");
        assert_eq!(read["warnings"], json!([]));
        // Advisory: a write runs, with the warning.
        let write = surface.call(
            &mut peer,
            "write_file",
            json!({"path": "x.txt", "content": "x"}),
        );
        assert_eq!(write["outcome"], "ok", "{kind}: {write}");
        assert!(
            write["warnings"][0]
                .as_str()
                .unwrap()
                .starts_with("BACKEND_NOT_ACTIVE: "),
            "{kind}: {write}"
        );
    }
}

#[test]
fn the_dispatcher_profile_passes_on_the_reference_through_mcp_and_acp() {
    let run = common::run_json(&["run", "--profile", "dispatcher"]);
    run.assert_code(0);
    let cases = run.cases();
    for check in [
        "dispatcher.labels",
        "dispatcher.status-detail",
        "dispatcher.startup-budget",
        "dispatcher.session-continues",
        "dispatcher.required-refuses",
        "dispatcher.advisory-warns",
        "dispatcher.retry-table",
    ] {
        for binding in ["mcp-stdio#2025-11-25", "mcp-stdio#2026-07-28", "acp#v1"] {
            let id = format!("{check}@{binding}");
            assert_eq!(run.verdict(&id), Some("pass"), "{id}\n{run}");
        }
    }
    assert_eq!(
        run.verdict("dispatcher.equivalent@equivalence#all"),
        Some("pass"),
        "{run}"
    );
    assert_eq!(cases.len(), 22, "{run}");
}

/// A target file that serves one faulty dispatcher on both surfaces, with the configurations
/// as policy files in `dir`.
fn fault_target(dir: &std::path::Path, fault: &str) -> std::path::PathBuf {
    let p = common::parity_str();
    let files = [
        ("slow.toml", SLOW.to_owned()),
        ("required.toml", SLOW.replace("advisory", "required")),
        (
            "flaky.toml",
            "[runtime]\nkind = \"simulated\"\nfail_attempts = 1\n".to_owned(),
        ),
        (
            "stopping.toml",
            "[runtime]\nkind = \"simulated\"\nstop_after_ms = 50\n".to_owned(),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let arg = |name: &str| format!("[\"--policy\", {:?}]", dir.join(name).to_str().unwrap());
    let target = format!(
        "version = 1\nname = \"{fault}\"\n\n[surfaces.mcp]\ncommand = \"{p} fake-dispatcher {fault} mcp\"\n\n[surfaces.acp]\ncommand = \"{p} fake-dispatcher {fault} acp\"\n\n[dispatcher]\nlabels = [\"active\", \"disconnected\"]\n\n[dispatcher.configs]\nslow_start = {}\nrequired = {}\nflaky = {}\nstopping = {}\n",
        arg("slow.toml"),
        arg("required.toml"),
        arg("flaky.toml"),
        arg("stopping.toml"),
    );
    let path = dir.join(format!("{fault}.toml"));
    std::fs::write(&path, target).unwrap();
    path
}

/// Every faulty dispatcher of the zoo fails each check it names, through a target file.
#[test]
fn each_faulty_dispatcher_fails_the_checks_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let faults = parity_fakes::dispatcher_catalogue();
    assert!(faults.len() >= 10);
    let handles: Vec<_> = faults
        .iter()
        .map(|f| {
            let target = fault_target(dir.path(), f.name);
            let (name, checks) = (f.name, f.checks);
            std::thread::spawn(move || {
                let mut args = vec![
                    "run".to_owned(),
                    "--target".to_owned(),
                    target.to_string_lossy().into_owned(),
                    "--profile".to_owned(),
                    "dispatcher".to_owned(),
                ];
                for c in checks {
                    args.push("--filter".into());
                    args.push((*c).to_owned());
                }
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                (name, checks, common::run_json(&refs))
            })
        })
        .collect();
    for h in handles {
        let (name, checks, run) = h.join().unwrap();
        run.assert_code(1);
        for check in checks {
            let verdicts = run.verdicts_of(check);
            assert!(
                verdicts.iter().any(|(_, v)| v == "fail"),
                "{name} should fail {check}: {verdicts:?}\n{run}"
            );
        }
    }
}

#[test]
fn a_policy_file_with_an_unknown_key_or_a_wrong_type_is_a_usage_error_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        (
            "mode = \"required\"\nbudget = 3\n",
            ":2:1: budget: unknown field `budget`",
        ),
        (
            "[runtime]\nkind = \"simulated\"\nstart_delay_ms = \"30s\"\n",
            ":3:18: runtime.start_delay_ms: invalid type: string",
        ),
    ] {
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, text).unwrap();
        for kind in ["mcp", "acp", "facade"] {
            let run = common::run(&["reference", kind, "--policy", path.to_str().unwrap()]);
            run.assert_code(2);
            assert!(
                run.stderr.contains(&format!("bad.toml{want}")),
                "{kind}: want {want:?}\n{run}"
            );
        }
    }
}

#[test]
fn a_dispatcher_table_with_bad_labels_is_an_error_naming_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    std::fs::write(
        &path,
        "version = 1\n[surfaces.mcp]\ncommand = \"x\"\n[dispatcher]\nlabels = [\"active\", \"starting\", \"disconnected\"]\n[dispatcher.configs]\nslow_start = []\nrequired = []\nflaky = []\n",
    )
    .unwrap();
    let run = common::run(&["run", "--target", path.to_str().unwrap()]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("t.toml:5:10: dispatcher.labels: must be exactly two"),
        "{run}"
    );
}

/// The `[dispatcher]` block of docs/dispatcher.md, read at test time (the harness crate embeds
/// nothing from outside its own directory).
fn docs_block() -> String {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/dispatcher.md"
    ))
    .unwrap();
    let from = doc.find("### Target keys").unwrap_or(0);
    let rest = &doc[from..];
    let start = rest.find("```toml\n").map_or(0, |i| i + "```toml\n".len());
    let end = rest[start..].find("```").map_or(rest.len(), |i| start + i);
    rest[start..end].to_owned()
}

#[test]
fn the_documented_dispatcher_table_loads_with_every_key() -> Result<(), String> {
    use parity_harness::profiles::dispatcher::ToolNames;
    let text = format!(
        "version = 1\n[surfaces.mcp]\ncommand = \"server\"\n{}",
        docs_block()
    );
    let t =
        parity_harness::engine::target::parse("parity.toml", &text).map_err(|e| e.to_string())?;
    let d = t.dispatcher.ok_or("no [dispatcher]")?;
    assert_eq!(d.labels, ["active".to_owned(), "disconnected".to_owned()]);
    assert_eq!((d.budget_ms, d.tolerance_ms), (200, 3000));
    assert_eq!(d.tools, ToolNames::default());
    assert_eq!(d.read_arguments, json!({"path": "README.md"}));
    assert_eq!(d.configs.slow_start, ["--policy", "slow.toml"]);
    assert_eq!(
        d.configs.stopping,
        Some(vec!["--policy".to_owned(), "stopping.toml".to_owned()])
    );
    assert!(!d.reference);
    Ok(())
}
