//! `parity record` and `parity replay` (docs/transcripts.md) over real processes and pipes:
//! a real client (`rmcp`) recorded through the proxy, replayed against the reference and a
//! faulty peer, and served back to the same client; redaction of secrets from every source;
//! byte transparency, exit statuses and signal forwarding of the proxy; peers that die or are
//! cut off mid-message; and the errors for transcripts that cannot be read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use parity_harness::protocol::transcript::{self, Direction, Event};
use rmcp::model::{CallToolRequestParams, ClientConfig, ErrorCode, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ServiceError, ServiceExt};
use serde_json::{json, Value};
use std::future::Future;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Upper bound for any one step; never a timing assertion, only a guard against a hang.
const DEADLINE: Duration = Duration::from_secs(60);

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {DEADLINE:?}"))
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().expect("arguments object")
}

/// Everything the rmcp client got in one session, as JSON (for comparing sessions).
#[derive(Debug, PartialEq)]
struct Outcomes {
    tools: Value,
    read: Value,
    list: Value,
    refusal: Value,
    unknown: Value,
}

/// A `tools/call` outcome as JSON: the result, or the protocol error's code and message.
fn outcome(r: Result<rmcp::model::CallToolResult, ServiceError>) -> Value {
    match r {
        Ok(res) => json!({"result": serde_json::to_value(&res).expect("result as JSON")}),
        Err(ServiceError::McpError(e)) => {
            json!({"error": {"code": e.code.0, "message": e.message.to_string()}})
        }
        Err(other) => panic!("tools/call failed outside the protocol: {other}"),
    }
}

/// The session of the done-when: initialize, tools/list, read_file README.md, list_dir,
/// a refused read_file (`../x`) and an unknown tool. Shuts the client (and its child) down.
async fn session(transport: TokioChildProcess) -> Outcomes {
    let config = ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_11_25);
    let client: RunningService<RoleClient, ClientConfig> =
        within("initialize", config.serve(transport))
            .await
            .expect("rmcp initialize handshake");
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("parity-reference")
    );
    let tools = within("tools/list", client.list_all_tools())
        .await
        .expect("tools/list");
    assert!(
        tools.iter().any(|t| t.name == "read_file"),
        "read_file listed: {tools:?}"
    );
    let call = |name: &'static str, a: Value| {
        let client = &client;
        async move {
            outcome(
                within(
                    name,
                    client.call_tool(CallToolRequestParams::new(name).with_arguments(args(a))),
                )
                .await,
            )
        }
    };
    let read = call("read_file", json!({"path": "README.md"})).await;
    assert!(
        read.to_string().contains("parity reference workspace"),
        "README.md content: {read}"
    );
    assert_eq!(read["result"]["isError"], json!(false), "{read}");
    let list = call("list_dir", json!({"path": "."})).await;
    assert!(list.to_string().contains("README.md"), "list_dir: {list}");
    let refusal = call("read_file", json!({"path": "../x"})).await;
    assert_eq!(
        (
            &refusal["result"]["isError"],
            &refusal["result"]["structuredContent"]["code"]
        ),
        (&json!(true), &json!("PATH_OUTSIDE_ROOT")),
        "../x is refused: {refusal}"
    );
    let unknown = call("no_such_tool", json!({})).await;
    assert_eq!(
        unknown["error"]["code"],
        json!(ErrorCode::INVALID_PARAMS.0),
        "an unknown tool is a protocol error: {unknown}"
    );
    within("shutdown", client.cancel()).await.expect("shutdown");
    Outcomes {
        tools: serde_json::to_value(&tools).expect("tools as JSON"),
        read,
        list,
        refusal,
        unknown,
    }
}

/// rmcp's child-process transport on `parity <args>`.
fn parity_child(args: &[&str]) -> TokioChildProcess {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cmd = tokio::process::Command::new(common::parity()).configure(|c| {
        c.args(&args);
    });
    TokioChildProcess::new(cmd).expect("spawn parity")
}

/// Records the done-when session against the reference into `dir/session.jsonl`.
async fn record_reference_session(dir: &Path) -> (PathBuf, Outcomes) {
    let t = dir.join("session.jsonl");
    let parity = common::parity_str();
    let got = session(parity_child(&[
        "record",
        "--out",
        t.to_str().expect("UTF-8 path"),
        "--",
        &parity,
        "reference",
        "mcp",
    ]))
    .await;
    (t, got)
}

fn load(path: &Path) -> transcript::Transcript {
    transcript::load(path).unwrap_or_else(|e| {
        panic!(
            "the transcript does not load: {e}\n{}",
            std::fs::read_to_string(path).unwrap_or_default()
        )
    })
}

fn events(t: &transcript::Transcript) -> Vec<&Event> {
    t.events.iter().map(|(_, e)| e).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_session_recorded_then_replayed_against_reference_and_a_faulty_peer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (t, _) = record_reference_session(dir.path()).await;
    let tr = load(&t);
    assert_eq!(tr.header.protocol, "mcp");
    assert_eq!(tr.header.era.as_deref(), Some("legacy"));
    assert_eq!(tr.header.protocol_version, Some(json!("2025-11-25")));
    let evs = events(&tr);
    let last = evs.last().expect("events");
    assert_eq!(
        (last.dir, last.code),
        (Direction::Exit, Some(0)),
        "{last:?}"
    );
    let c2s_calls = evs
        .iter()
        .filter(|e| e.dir == Direction::C2s && e.text().contains("\"tools/call\""))
        .count();
    assert_eq!(c2s_calls, 4, "four tools/call requests recorded");

    let file = t.to_str().expect("UTF-8 path");
    let same = common::run(&["replay", file, "--mcp", &reference_cmd()]);
    same.assert_code(0);
    assert!(same.stdout.contains(" 0 difference(s)"), "{same}");
    assert!(!same.stdout.contains("DIFF"), "{same}");

    let faulty = common::run(&[
        "replay",
        file,
        "--mcp",
        &common::fake_cmd("unknown-tool-iserror"),
    ]);
    faulty.assert_code(1);
    assert!(
        faulty.stdout.contains("DIFF  response to tools/call (id "),
        "the differing message is named\n{faulty}"
    );
    assert!(
        faulty.stdout.contains(&format!("({file}:")),
        "the block names the transcript line\n{faulty}"
    );
    let diff_lines: Vec<&str> = faulty.stdout.lines().map(str::trim_start).collect();
    assert!(
        diff_lines.iter().any(|l| l.starts_with("--- recorded"))
            && diff_lines.iter().any(|l| l.starts_with("+++ live")),
        "a unified diff\n{faulty}"
    );
    assert!(
        diff_lines
            .iter()
            .any(|l| l.starts_with('-') && !l.starts_with("---") && l.contains("error")),
        "the recorded protocol error is a `-` line\n{faulty}"
    );
    assert!(
        diff_lines
            .iter()
            .any(|l| l.starts_with('+') && !l.starts_with("+++") && l.contains("isError")),
        "the live isError result is a `+` line\n{faulty}"
    );
    assert!(faulty.stdout.contains(" 1 difference(s)"), "{faulty}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_the_recorded_client_as_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (t, real) = record_reference_session(dir.path()).await;
    let file = t.to_str().expect("UTF-8 path");

    // The same client against the recording: the same answers.
    let served = session(parity_child(&["replay", file, "--serve"])).await;
    assert_eq!(served, real, "--serve answers as the reference did");

    // A call the recording does not have: -32601, and a note on stderr.
    let cmd = tokio::process::Command::new(common::parity()).configure(|c| {
        c.args(["replay", file, "--serve"]);
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn parity replay --serve");
    let mut stderr = stderr.expect("piped stderr");
    let stderr_text = tokio::spawn(async move {
        let mut s = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut s).await;
        s
    });
    let config = ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_11_25);
    let client = within("initialize", config.serve(transport))
        .await
        .expect("initialize answered from the recording");
    let other = within(
        "tools/call with other arguments",
        client.call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(args(json!({"path": "not-recorded.md"}))),
        ),
    )
    .await;
    match other {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND, "{e:?}");
            assert!(e.message.contains("tools/call"), "{e:?}");
        }
        other => panic!("an unrecorded call must be a -32601 error, got {other:?}"),
    }
    // The recorded call still answers after the miss.
    let again = outcome(
        within(
            "tools/call read_file",
            client.call_tool(
                CallToolRequestParams::new("read_file")
                    .with_arguments(args(json!({"path": "README.md"}))),
            ),
        )
        .await,
    );
    assert_eq!(again, real.read);
    within("shutdown", client.cancel()).await.expect("shutdown");
    let err = within("stderr of --serve", stderr_text)
        .await
        .expect("stderr reader");
    assert!(
        err.contains("no recorded answer for tools/call") && err.contains("not-recorded.md"),
        "stderr names the unmatched request: {err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Raw proxy runs (std::process, real pipes)
// ---------------------------------------------------------------------------------------------

/// A `parity record` process with its pipes; waits with a deadline and kills on drop.
struct Proxy {
    child: Child,
    /// What the proxy wrote on stdout so far (appended by a reader thread).
    seen: Arc<Mutex<Vec<u8>>>,
    out: Option<std::thread::JoinHandle<()>>,
    err: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl Proxy {
    fn start(t: &Path, extra: &[&str], command: &[&str], env: &[(&str, &str)]) -> Proxy {
        let mut a: Vec<&str> = vec!["record", "--out", t.to_str().expect("UTF-8 path")];
        a.extend_from_slice(extra);
        a.push("--");
        a.extend_from_slice(command);
        let mut child = Command::new(common::parity())
            .args(&a)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start parity record");
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        Proxy {
            child,
            seen,
            out: Some(std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n @ 1..) = out.read(&mut buf) {
                    sink.lock()
                        .expect("stdout buffer")
                        .extend_from_slice(&buf[..n]);
                }
            })),
            err: Some(std::thread::spawn(move || {
                let mut b = Vec::new();
                let _ = err.read_to_end(&mut b);
                b
            })),
        }
    }

    fn stdin(&mut self) -> &mut std::process::ChildStdin {
        self.child.stdin.as_mut().expect("stdin still open")
    }

    fn stdout_so_far(&self) -> Vec<u8> {
        self.seen.lock().expect("stdout buffer").clone()
    }

    fn close_stdin(&mut self) {
        drop(self.child.stdin.take());
    }

    /// Waits for the proxy (closing nothing); returns its status, stdout and stderr.
    fn finish(mut self) -> (ExitStatus, Vec<u8>, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                break st;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "parity record did not exit within {DEADLINE:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        self.close_stdin();
        let _ = self.out.take().expect("stdout").join();
        let out = self.stdout_so_far();
        let err = self.err.take().expect("stderr").join().unwrap_or_default();
        (status, out, String::from_utf8_lossy(&err).into_owned())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A canary nobody else would write: hashed from the pid, the time and a label.
fn canary(label: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write(label.as_bytes());
    format!("cnry{:016x}", h.finish())
}

#[test]
fn secrets_from_env_messages_argv_and_patterns_never_reach_the_transcript() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("secret.jsonl");
    let env_secret = canary("env");
    let auth_secret = canary("auth");
    let argv_secret = canary("argv");
    let user_secret = canary("user");
    // The child shows the environment secret and its own argument on stdout and stderr, then
    // echoes the client (`cat`).
    let script = r#"printf '%s\n' "{\"token\":\"$MY_SERVICE_TOKEN\",\"arg\":\"$2\"}"; echo "env $MY_SERVICE_TOKEN arg $2" >&2; exec cat"#;
    let mut p = Proxy::start(
        &t,
        &["--redact", &user_secret],
        &["sh", "-c", script, "sh", "--api-key", &argv_secret],
        &[("MY_SERVICE_TOKEN", &env_secret)],
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "read_file",
        "arguments": {"path": "x", "headers": {"Authorization": format!("Bearer {auth_secret}")}}}});
    let user = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"account": user_secret.clone()}});
    let sent = format!("{call}\n{user}\n");
    p.stdin().write_all(sent.as_bytes()).expect("write");
    p.close_stdin();
    let (status, out, err) = p.finish();
    assert_eq!(status.code(), Some(0), "stderr: {err}");
    // The client and the terminal see everything unchanged: redaction is for the file only.
    let out = String::from_utf8(out).expect("UTF-8 stdout");
    for s in [&env_secret, &argv_secret, &auth_secret, &user_secret] {
        assert!(
            out.contains(s.as_str()),
            "{s} forwarded to the client: {out}"
        );
    }
    assert!(out.ends_with(&sent), "the client lines echoed: {out}");
    assert!(
        err.contains(&env_secret) && err.contains(&argv_secret),
        "{err}"
    );

    let bytes = std::fs::read(&t).expect("transcript");
    let text = String::from_utf8_lossy(&bytes);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&t).expect("metadata").permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the transcript is private");
    for (what, s) in [
        ("environment", &env_secret),
        ("Authorization", &auth_secret),
        ("argv", &argv_secret),
        ("--redact", &user_secret),
    ] {
        assert!(
            !bytes.windows(s.len()).any(|w| w == s.as_bytes()),
            "the {what} canary leaked into the transcript:\n{text}"
        );
    }
    for rule in [
        "[REDACTED:env:MY_SERVICE_TOKEN]",
        "[REDACTED:authorization]",
        "[REDACTED:arg:5]",
        "[REDACTED:user-1]",
    ] {
        assert!(text.contains(rule), "{rule} in the transcript:\n{text}");
    }
    let tr = load(&t);
    assert_eq!(
        tr.header.command.get(5).map(String::as_str),
        Some("[REDACTED:arg:5]"),
        "the recorded command is redacted: {:?}",
        tr.header.command
    );
    let ids: Vec<&str> = tr
        .header
        .redaction
        .iter()
        .map(|(i, _)| i.as_str())
        .collect();
    for id in ["env:MY_SERVICE_TOKEN", "arg:5", "authorization", "user-1"] {
        assert!(
            ids.contains(&id),
            "rule {id} described in the header: {ids:?}"
        );
    }
    let covers = format!("{:?}", tr.header.redaction);
    assert!(!covers.contains(&user_secret), "{covers}");
    // Redacted messages stay JSON.
    let c2s: Vec<&Event> = events(&tr)
        .into_iter()
        .filter(|e| e.dir == Direction::C2s)
        .collect();
    assert_eq!(c2s.len(), 2, "{c2s:?}");
    for e in c2s {
        let v: Value = serde_json::from_slice(&e.bytes)
            .unwrap_or_else(|err| panic!("redacted line is still JSON ({err}): {}", e.text()));
        assert!(v.is_object());
    }
}

fn exit_event(tr: &transcript::Transcript) -> &Event {
    let last = &tr.events.last().expect("events").1;
    assert_eq!(last.dir, Direction::Exit, "the last event is the exit");
    last
}

#[test]
fn proxy_is_byte_transparent_and_records_binary_and_partial_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("cat.jsonl");
    let mut p = Proxy::start(&t, &[], &["cat"], &[]);
    let mut sent: Vec<u8> = Vec::new();
    sent.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
    sent.extend_from_slice(b"\xff\xfe not utf-8 \xc3\x28\n");
    sent.extend_from_slice(b"\n");
    sent.extend_from_slice(b"no newline at EOF");
    p.stdin().write_all(&sent).expect("write");
    p.close_stdin();
    let (status, out, err) = p.finish();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(out, sent, "the bytes come back unchanged");

    let tr = load(&t);
    assert_eq!(tr.header.protocol, "unknown");
    for dir in [Direction::C2s, Direction::S2c] {
        let lines: Vec<&Event> = events(&tr).into_iter().filter(|e| e.dir == dir).collect();
        let bytes: Vec<&[u8]> = lines.iter().map(|e| e.bytes.as_slice()).collect();
        assert_eq!(
            bytes,
            vec![
                &b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}"[..],
                &b"\xff\xfe not utf-8 \xc3\x28"[..],
                &b""[..],
                &b"no newline at EOF"[..],
            ],
            "{dir:?} lines"
        );
        let partial: Vec<bool> = lines.iter().map(|e| e.partial).collect();
        assert_eq!(partial, vec![false, false, false, true], "{dir:?} partial");
    }
    assert_eq!(exit_event(&tr).code, Some(0));
    // In the file: base64 for the binary line, `partial: true` for the last.
    let text = std::fs::read_to_string(&t).expect("transcript is UTF-8");
    let objs: Vec<Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let binary: Vec<&Value> = objs.iter().filter(|o| o.get("raw_b64").is_some()).collect();
    assert_eq!(binary.len(), 2, "c2s and s2c binary lines: {text}");
    for o in &binary {
        assert_eq!(o["raw_b64"], json!("//4gbm90IHV0Zi04IMMo"), "{o}");
        assert!(o.get("raw").is_none(), "{o}");
    }
    let partial: Vec<&Value> = objs
        .iter()
        .filter(|o| o.get("partial") == Some(&json!(true)))
        .collect();
    assert_eq!(partial.len(), 2, "{text}");
    for o in partial {
        assert_eq!(o["raw"], json!("no newline at EOF"), "{o}");
    }
}

#[test]
fn proxy_exits_with_the_child_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("exit7.jsonl");
    let p = Proxy::start(&t, &[], &["sh", "-c", "exit 7"], &[]);
    let (status, out, err) = p.finish();
    assert_eq!(status.code(), Some(7), "{err}");
    assert!(out.is_empty());
    let tr = load(&t);
    let ex = exit_event(&tr);
    assert_eq!(ex.code, Some(7));
    assert_eq!(ex.status.as_deref(), Some("exit status: 7"));

    // A command that cannot start: 127, like a shell, and still a valid transcript.
    let t = dir.path().join("missing.jsonl");
    let p = Proxy::start(&t, &[], &["/nonexistent/parity-test-no-such-server"], &[]);
    let (status, _, err) = p.finish();
    assert_eq!(status.code(), Some(127), "{err}");
    assert!(err.contains("failed to start"), "{err}");
    assert_eq!(exit_event(&load(&t)).code, Some(127));

    // A bad --redact pattern: a usage error before anything starts or is written.
    let t = dir.path().join("bad-redact.jsonl");
    let p = Proxy::start(&t, &["--redact", "("], &["sh", "-c", "echo started"], &[]);
    let (status, out, err) = p.finish();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("--redact #1"), "{err}");
    assert!(out.is_empty(), "the child never started");
    assert!(!t.exists(), "no transcript for a usage error");
}

/// Whether process `pid` has a handler installed for signal `sig` (`SigCgt` in /proc).
fn catches(pid: u32, sig: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|m| m & (1u64 << (sig - 1)) != 0)
}

#[test]
fn sigterm_to_the_proxy_is_forwarded_to_the_child() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("term.jsonl");
    let mut p = Proxy::start(
        &t,
        &[],
        &["sh", "-c", "echo \"ready $$\"; exec sleep 30"],
        &[],
    );
    let pid = p.child.id();
    // Wait until the child's line came through the proxy and the proxy catches SIGTERM (no
    // sleep-and-hope).
    let started = Instant::now();
    let child_pid: i32 = loop {
        let out = String::from_utf8_lossy(&p.stdout_so_far()).into_owned();
        let child_pid = out
            .strip_prefix("ready ")
            .and_then(|r| r.strip_suffix('\n'))
            .and_then(|n| n.parse().ok());
        if let Some(n) = child_pid.filter(|_| catches(pid, libc::SIGTERM)) {
            break n;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the proxy never got ready: {out:?}"
        );
        assert!(
            p.child.try_wait().expect("try_wait").is_none(),
            "the proxy exited early"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let sent = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let (status, out, err) = p.finish();
    assert_eq!(
        (status.code(), status.signal()),
        (Some(143), None),
        "128 + SIGTERM; stderr: {err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out),
        format!("ready {child_pid}\n")
    );
    let tr = load(&t);
    let ready = format!("ready {child_pid}");
    assert!(
        events(&tr)
            .iter()
            .any(|e| e.dir == Direction::S2c && e.bytes == ready.as_bytes() && !e.partial),
        "{:?}",
        tr.events
    );
    let ex = exit_event(&tr);
    assert_eq!(ex.code, Some(143), "{ex:?}");
    assert!(
        ex.status.as_deref().is_some_and(|s| s.contains("15")),
        "{ex:?}"
    );
    // The child is gone (not merely orphaned).
    let alive = std::fs::read_to_string(format!("/proc/{child_pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.split_whitespace().next().unwrap_or("").to_string())
        })
        .is_some_and(|state| state != "Z" && state != "X");
    if alive {
        common::kill_pid(child_pid);
    }
    assert!(!alive, "the child {child_pid} still runs after SIGTERM");
}

#[test]
fn child_dying_mid_message_leaves_a_valid_transcript() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("half.jsonl");
    let p = Proxy::start(
        &t,
        &[],
        &["sh", "-c", r#"printf '{"jsonrpc":'; exit 3"#],
        &[],
    );
    let (status, out, err) = p.finish();
    assert_eq!(status.code(), Some(3), "{err}");
    assert_eq!(out, b"{\"jsonrpc\":");
    let tr = load(&t);
    let evs = events(&tr);
    let n = evs.len();
    assert!(n >= 2, "{evs:?}");
    let half = evs[n - 2];
    assert_eq!(
        (half.dir, half.bytes.as_slice(), half.partial),
        (Direction::S2c, &b"{\"jsonrpc\":"[..], true),
        "{half:?}"
    );
    assert_eq!(
        (evs[n - 1].dir, evs[n - 1].code),
        (Direction::Exit, Some(3))
    );
}

#[test]
fn client_closing_mid_message_gives_the_child_eof() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("cut.jsonl");
    // The child echoes what it got, then says it saw EOF.
    let mut p = Proxy::start(&t, &[], &["sh", "-c", "cat; echo; echo got-eof"], &[]);
    p.stdin()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":")
        .expect("write");
    p.close_stdin();
    let (status, out, err) = p.finish();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":\ngot-eof\n"
    );
    let tr = load(&t);
    let c2s: Vec<&Event> = events(&tr)
        .into_iter()
        .filter(|e| e.dir == Direction::C2s)
        .collect();
    assert_eq!(c2s.len(), 1, "{c2s:?}");
    assert_eq!(c2s[0].bytes, b"{\"jsonrpc\":\"2.0\",\"id\":");
    assert!(c2s[0].partial);
    assert_eq!(exit_event(&tr).code, Some(0));
}

// ---------------------------------------------------------------------------------------------
// parity replay: bad transcripts and targets that cannot start
// ---------------------------------------------------------------------------------------------

fn header() -> String {
    json!({"format": transcript::FORMAT, "parity": "0.1.0", "protocol": "mcp",
        "transport": "stdio"})
    .to_string()
}

fn ev(seq: u64, dir: &str, raw: &str) -> String {
    json!({"seq": seq, "t_ms": 0, "dir": dir, "raw": raw}).to_string()
}

/// Writes `ok.jsonl` in `dir`: a recorded `initialize`, its response when given, and the exit.
fn initialize_transcript(dir: &std::path::Path, response: Option<&str>) -> std::path::PathBuf {
    let path = dir.join("ok.jsonl");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut lines = vec![header(), ev(1, "c2s", init)];
    lines.extend(response.map(|r| ev(2, "s2c", r)));
    let seq = lines.len();
    lines.push(json!({"seq": seq, "t_ms": 2, "dir": "exit", "code": 0}).to_string());
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path
}

fn reference_cmd() -> String {
    format!("{} reference mcp", common::parity_str())
}

#[test]
fn bad_transcripts_exit_2_naming_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let cases: Vec<(&str, String, &str, Option<&str>, &str)> = vec![
        ("empty", String::new(), ":1", None, "missing header"),
        (
            "no-header",
            format!("{}\n", ev(1, "c2s", init)),
            ":1",
            Some("format"),
            "header",
        ),
        (
            "format-2",
            format!(
                "{}\n{}\n",
                json!({"format": "parity-transcript/2", "parity": "9", "protocol": "mcp",
                    "transport": "stdio"}),
                ev(1, "c2s", init)
            ),
            ":1",
            Some("format"),
            "unknown format version",
        ),
        (
            "truncated",
            format!(
                "{}\n{}\n{{\"seq\":2,\"t_ms\":1,\"di",
                header(),
                ev(1, "c2s", init)
            ),
            ":3",
            None,
            "not JSON",
        ),
        (
            "seq-gap",
            format!(
                "{}\n{}\n{}\n",
                header(),
                ev(1, "c2s", init),
                ev(3, "s2c", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
            ),
            ":3",
            Some("seq"),
            "expected seq 2, got 3",
        ),
    ];
    for (name, text, line, field, message) in cases {
        let path = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&path, text).expect("write");
        let file = path.to_str().expect("UTF-8 path");
        let run = common::run(&["replay", file, "--mcp", &reference_cmd()]);
        run.assert_code(2);
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(
            first.contains(&format!("{file}{line}:")),
            "{name}: stderr names {file}{line}\n{run}"
        );
        if let Some(f) = field {
            assert!(
                first.contains(&format!("field `{f}`")),
                "{name}: stderr names the field `{f}`\n{run}"
            );
        }
        assert!(first.contains(message), "{name}: `{message}`\n{run}");
        assert!(
            !run.stdout.contains("difference(s)"),
            "{name}: no replay\n{run}"
        );
    }
}

#[test]
fn replay_against_a_command_that_does_not_exist_exits_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = initialize_transcript(dir.path(), None);
    let file = path.to_str().expect("UTF-8 path");
    let run = common::run(&[
        "replay",
        file,
        "--mcp",
        "/nonexistent/parity-test-no-such-server --stdio",
    ]);
    run.assert_code(3);
    assert!(
        run.stderr
            .contains("/nonexistent/parity-test-no-such-server"),
        "{run}"
    );
}

/// Sends `line` through the proxy and waits until the proxy's stdout holds `lines` lines.
fn exchange(p: &mut Proxy, line: &str, lines: usize) {
    p.stdin().write_all(format!("{line}\n").as_bytes()).unwrap();
    p.stdin().flush().unwrap();
    let started = Instant::now();
    while p.stdout_so_far().iter().filter(|b| **b == b'\n').count() < lines {
        assert!(started.elapsed() < DEADLINE, "no answer to {line}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_acp_session_is_recorded_with_its_version_and_replays_against_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("acp.jsonl");
    let parity = common::parity_str();
    let mut p = Proxy::start(&t, &[], &[&parity, "reference", "acp"], &[]);
    exchange(
        &mut p,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}"#,
        1,
    );
    exchange(
        &mut p,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
        2,
    );
    let out = String::from_utf8(p.stdout_so_far()).unwrap();
    let session: Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    let sid = session["result"]["sessionId"].as_str().unwrap().to_string();
    exchange(
        &mut p,
        &json!({"jsonrpc":"2.0","id":3,"method":"_parity/tool","params":{"sessionId": sid, "name":"read_file","arguments":{"path":"README.md"}}}).to_string(),
        3,
    );
    p.close_stdin();
    let (status, _, _) = p.finish();
    assert_eq!(status.code(), Some(0));
    let tr = load(&t);
    assert_eq!(tr.header.protocol, "acp");
    assert_eq!(tr.header.era, None);
    assert_eq!(tr.header.protocol_version, Some(json!(1)));
    let ts = t.to_str().unwrap();
    let reference = format!("{parity} reference acp");
    let r = Command::new(common::parity())
        .args(["replay", ts, "--acp", &reference])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("3 response(s) received; 0 difference(s)"),
        "{stdout}"
    );
    // An agent whose tool method returns other bytes (CRLF line endings) is caught.
    let drift = common::fake_cmd("acp-outcome-drift");
    let r = Command::new(common::parity())
        .args(["replay", ts, "--acp", &drift])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("DIFF  response to _parity/tool (id 3)"),
        "{stdout}"
    );
    assert!(stdout.contains("\\r\\n"), "{stdout}");
}

#[test]
fn a_cut_recording_is_noted_and_a_target_that_sends_nothing_could_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("cut.jsonl");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    // The recording ended after the request: its response is not compared, and a note says so.
    std::fs::write(&t, format!("{}\n{}\n", header(), ev(1, "c2s", init))).unwrap();
    let r = Command::new(common::parity())
        .args(["replay", t.to_str().unwrap(), "--mcp", &reference_cmd()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("note: 1 recorded request(s) have no recorded response"),
        "{stdout}"
    );
    // A target that exits at once sends nothing back: the replay could not run.
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    std::fs::write(
        &t,
        format!(
            "{}\n{}\n{}\n",
            header(),
            ev(1, "c2s", init),
            ev(2, "s2c", answer)
        ),
    )
    .unwrap();
    let r = Command::new(common::parity())
        .args([
            "replay",
            t.to_str().unwrap(),
            "--mcp",
            "true",
            "--timeout-ms",
            "500",
        ])
        .output()
        .unwrap();
    assert_eq!(
        r.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
}

/// The version the bumped reference reports (`parity reference mcp --server-version`).
const BUMPED: &str = "99.1.2-bumped";

/// Records one session with `parity reference mcp` (with `extra` arguments) through the proxy
/// into `t`: the era's opening, then `tools/list`, with parity's client info in each request.
fn record_era_session(t: &Path, modern: bool, extra: &[&str]) {
    let parity = common::parity_str();
    let mut command = vec![parity.as_str(), "reference", "mcp"];
    command.extend_from_slice(extra);
    let mut p = Proxy::start(t, &[], &command, &[]);
    let client = json!({"name": "parity", "version": env!("CARGO_PKG_VERSION")});
    if modern {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": client,
        });
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": meta}});
        exchange(&mut p, &discover.to_string(), 1);
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": {"_meta": meta}});
        exchange(&mut p, &list.to_string(), 2);
    } else {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}});
        exchange(&mut p, &init.to_string(), 1);
        p.stdin()
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .unwrap();
        exchange(
            &mut p,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            2,
        );
    }
    p.close_stdin();
    let (status, _, err) = p.finish();
    assert_eq!(status.code(), Some(0), "{err}");
}

#[test]
fn a_recording_replays_without_difference_after_the_server_version_changes() {
    let dir = tempfile::tempdir().unwrap();
    let bumped = format!(
        "{} reference mcp --server-version {BUMPED}",
        common::parity_str()
    );
    for (era, modern) in [("legacy", false), ("modern", true)] {
        let before = dir.path().join(format!("{era}-before.jsonl"));
        let after = dir.path().join(format!("{era}-after.jsonl"));
        record_era_session(&before, modern, &[]);
        record_era_session(&after, modern, &["--server-version", BUMPED]);
        // The bump is real: the server reports another version on the wire in this era.
        let before_text = std::fs::read_to_string(&before).unwrap();
        let after_text = std::fs::read_to_string(&after).unwrap();
        assert!(!before_text.contains(BUMPED), "{era}: {before_text}");
        assert!(after_text.contains(BUMPED), "{era}: {after_text}");
        if modern {
            assert!(
                after_text.contains("io.modelcontextprotocol/serverInfo"),
                "{era}: {after_text}"
            );
        }
        // Yet the old recording replays against the bumped server with no difference.
        let r = common::run(&["replay", before.to_str().unwrap(), "--mcp", &bumped]);
        r.assert_code(0);
        assert!(r.stdout.contains("0 difference(s)"), "{era}: {r}");
    }
}

/// A replay compares the whole live exchange or nothing: against a server that floods
/// notifications (far more than twice the recording), the frame log drops frames, so the
/// exchange is not compared and `parity replay` exits 3 saying so, never 0 or 1 on half an
/// exchange.
#[test]
fn a_replay_whose_live_exchange_was_cut_is_not_compared_and_exits_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = initialize_transcript(
        dir.path(),
        Some(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
        ),
    );
    let file = path.to_str().expect("UTF-8 path");
    let run = common::run(&[
        "replay",
        file,
        "--mcp",
        &common::fake_cmd("load-notification-flood"),
    ]);
    run.assert_code(3);
    assert!(
        run.stderr.contains("the live exchange was not compared")
            && run.stderr.contains("were left out"),
        "{run}"
    );
}
