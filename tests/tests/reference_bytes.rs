//! The reference's exact bytes, pinned with `insta` on every surface.
//!
//! Each test starts the real `parity reference mcp` / `parity reference acp` process over real
//! pipes (its default workspace: a fresh temporary directory seeded with `README.md` and
//! `notes/hello.txt`), writes every request line by hand, and snapshots each response line
//! exactly as the process wrote it (minus the `\n` terminator, which is asserted separately):
//!
//! - MCP legacy era (2025-11-25): `initialize`, both `tools/list` pages, and a `tools/call` per
//!   tool (plus refusals and an unknown-tool protocol error);
//! - MCP modern era (2026-07-28, stateless): `server/discover`, both `tools/list` pages and
//!   `tools/call`s;
//! - ACP v1: `initialize`, `session/new` and the `_parity/tool` extension method per tool.
//!
//! Only volatile substrings are redacted, each with a named placeholder (see [`redact`]):
//! `since_ms` (a wall-clock timestamp) becomes `[TIME]`, and the package version inside
//! `serverInfo` / `agentInfo` becomes `[VERSION]` (after asserting it is the package version).
//! Nothing else is volatile: session ids are `sess_<n>` counting from 1 per connection, the
//! `tools/list` cursor is a fixed encoding of an offset, and messages quote the caller's path,
//! never the temporary workspace root (asserted for every line).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Upper bound for one response line; never a timing assertion, only a guard against a hang.
const REPLY_DEADLINE: Duration = Duration::from_secs(60);

/// The per-request `_meta` every 2026-07-28 request carries (`protocolVersion` and
/// `clientCapabilities` are required by the reference; `clientInfo` is what a client sends).
const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"parity-tests","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A `parity reference <surface>` process driven line by line over its stdio pipes.
///
/// Local to this file: `common` runs `parity` to completion with stdin closed, while these
/// tests need an interactive request/response session over the same pipes.
struct Reference {
    what: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    /// Raw stdout lines, each with its `\n` (the last one may lack it).
    lines: mpsc::Receiver<Vec<u8>>,
    stderr: Option<std::thread::JoinHandle<String>>,
    /// Wall clock just before the process started: a lower bound for its `since_ms`.
    started_ms: u64,
    finished: bool,
}

impl Reference {
    /// Starts `parity reference <surface>` with its default (temporary) workspace.
    fn start(surface: &'static str) -> Reference {
        let started_ms = now_ms();
        let mut child = Command::new(common::parity())
            .args(["reference", surface])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start parity reference {surface}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Reference {
            what: surface,
            stdin: child.stdin.take(),
            child,
            lines: rx,
            stderr: Some(stderr),
            started_ms,
            finished: false,
        }
    }

    /// Writes one request or notification line exactly as given, plus `\n`.
    fn send_line(&mut self, line: &str) {
        assert!(!line.contains('\n'), "one message per line: {line}");
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("write to parity reference {}: {e}", self.what));
    }

    /// The next line the process wrote, checked for framing (UTF-8, one `\n`, no `\r`) and
    /// returned without its terminator.
    fn next_line(&mut self) -> String {
        let raw = self.lines.recv_timeout(REPLY_DEADLINE).unwrap_or_else(|e| {
            panic!(
                "parity reference {} wrote no line within {REPLY_DEADLINE:?} ({e})",
                self.what
            )
        });
        let text = String::from_utf8(raw).expect("the reference writes UTF-8");
        let line = text
            .strip_suffix('\n')
            .unwrap_or_else(|| panic!("the line is not `\\n`-terminated: {text:?}"));
        assert!(
            !line.contains('\r') && !line.contains('\n') && !line.starts_with('\u{feff}'),
            "compact one-line output, no CR, no BOM: {line:?}"
        );
        // Messages quote the caller's path, never the workspace root (a temporary directory).
        let tmp = std::env::temp_dir();
        let tmp = tmp.to_string_lossy();
        let tmp = tmp.trim_end_matches('/');
        assert!(
            tmp.is_empty() || !line.contains(tmp),
            "the temporary workspace root leaked into the bytes: {line}"
        );
        line.to_owned()
    }

    /// Sends one request line and returns the very next line, which must be its response
    /// (`jsonrpc` 2.0, the id echoed, no `method`), redacted for snapshotting.
    fn request(&mut self, id: &Value, line: &str) -> String {
        let sent: Value = serde_json::from_str(line).expect("the request line is JSON");
        assert_eq!(&sent["id"], id, "the request line carries id {id}");
        self.send_line(line);
        let reply = self.next_line();
        let v: Value = serde_json::from_str(&reply)
            .unwrap_or_else(|e| panic!("the reference wrote a non-JSON line ({e}): {reply}"));
        assert_eq!(v["jsonrpc"], "2.0", "jsonrpc 2.0: {reply}");
        assert_eq!(&v["id"], id, "the response echoes the request id: {reply}");
        assert!(
            v.get("method").is_none(),
            "a response, not a request: {reply}"
        );
        assert!(
            v.get("result").is_some() != v.get("error").is_some(),
            "exactly one of result and error: {reply}"
        );
        self.redact(&reply)
    }

    /// Replaces exactly the volatile substrings of `line` with named placeholders.
    fn redact(&self, line: &str) -> String {
        redact(line, self.started_ms)
    }

    /// Closes stdin (EOF), checks that nothing more is written and that the process exits 0.
    fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + REPLY_DEADLINE;
        let mut late = Vec::new();
        loop {
            match self.lines.recv_timeout(REPLY_DEADLINE) {
                Ok(line) => late.push(String::from_utf8_lossy(&line).into_owned()),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                    "parity reference {} kept stdout open after EOF on stdin",
                    self.what
                ),
            }
        }
        let status = loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                break st;
            }
            assert!(
                Instant::now() < deadline,
                "parity reference {} did not exit after EOF",
                self.what
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        self.finished = true;
        let stderr = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        assert!(
            late.is_empty(),
            "unexpected lines after the last response: {late:?}"
        );
        assert!(
            status.success(),
            "parity reference {} exited with {status} at EOF; stderr:\n{stderr}",
            self.what
        );
    }
}

impl Drop for Reference {
    /// A failed test must not leave the process behind: close stdin so it exits (and removes
    /// its temporary workspace) by itself, and kill it only if it has not within a few seconds.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Replaces the volatile substrings of a response line with named placeholders:
///
/// - `since_ms` of the lifecycle snapshot (`status`, `retry`) is the wall-clock time the
///   process started, in ms since the epoch; it changes on every run, so its digits become
///   `[TIME]` — both as a JSON member (`"since_ms":N`) and inside the `tools/call` text, where
///   the value is JSON-encoded in a string (`\"since_ms\":N`). The value is first checked to
///   lie between the moment the test started the process and now (with a minute's slack).
/// - the package version inside `serverInfo` (MCP) and `agentInfo` (ACP) is stable in this
///   repository, but pinning it would break these snapshots on every version bump, so it
///   becomes `[VERSION]` after being asserted equal to `CARGO_PKG_VERSION`.
fn redact(line: &str, started_ms: u64) -> String {
    let mut out = line.to_owned();
    for key in [r#""since_ms":"#, r#"\"since_ms\":"#] {
        let mut from = 0;
        while let Some(pos) = out[from..].find(key) {
            let start = from + pos + key.len();
            let digits = out[start..].bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                // Not a value: the tool descriptions quote `\"since_ms\": integer`.
                from = start;
                continue;
            }
            let ms: u64 = out[start..start + digits]
                .parse()
                .unwrap_or_else(|e| panic!("since_ms is an integer ({e}): {line}"));
            assert!(
                ms + 60_000 >= started_ms && ms <= now_ms() + 60_000,
                "since_ms {ms} is the process start time (started at {started_ms}): {line}"
            );
            out.replace_range(start..start + digits, "[TIME]");
            from = start + "[TIME]".len();
        }
    }
    let version = format!(r#""version":"{}""#, env!("CARGO_PKG_VERSION"));
    for key in [r#"serverInfo":{"#, r#""agentInfo":{"#] {
        let mut from = 0;
        while let Some(pos) = out[from..].find(key) {
            let start = from + pos + key.len();
            // The info objects are flat: the first `}` closes them.
            let end = start + out[start..].find('}').expect("info object closed");
            let rel = out[start..end]
                .find(&version)
                .unwrap_or_else(|| panic!("{key} carries version {version}: {line}"));
            let at = start + rel;
            out.replace_range(at..at + version.len(), r#""version":"[VERSION]""#);
            from = at;
        }
    }
    out
}

/// The legacy-era `tools/call` request line.
fn legacy_call(id: i64, name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    )
}

/// The modern-era request line: `params` members plus the required `_meta`.
fn modern_request(id: i64, method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{MODERN_META}}}}}"#
    )
}

/// The ACP tool extension request line.
fn acp_tool(id: i64, session: &str, name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"_parity/tool","params":{{"sessionId":"{session}","name":"{name}","arguments":{arguments}}}}}"#
    )
}

fn id(n: i64) -> Value {
    Value::from(n)
}

/// The tool calls made on every surface: (snapshot suffix, tool, arguments). Sequential, so
/// `list_dir` sees the file `write_file` created.
const CALLS: &[(&str, &str, &str)] = &[
    ("read_file", "read_file", r#"{"path":"README.md"}"#),
    (
        "write_file",
        "write_file",
        r#"{"path":"notes/out.txt","content":"written by parity-tests\n"}"#,
    ),
    ("list_dir", "list_dir", r#"{"path":"notes"}"#),
    ("list_dir_root", "list_dir", r#"{}"#),
    ("exec", "exec", r#"{"argv":["echo","hello","parity"]}"#),
    ("status", "status", r#"{}"#),
    ("retry", "retry", r#"{}"#),
    (
        "read_file_outside_root",
        "read_file",
        r#"{"path":"../outside.txt"}"#,
    ),
    ("exec_not_allowed", "exec", r#"{"argv":["ls"]}"#),
    ("unknown_tool", "nope", r#"{}"#),
];

#[test]
fn mcp_legacy_era_bytes() {
    let mut r = Reference::start("mcp");

    let init = r.request(
        &id(1),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"parity-tests","version":"0"}}}"#,
    );
    insta::assert_snapshot!("mcp_legacy_initialize", init);
    r.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let page1 = r.request(
        &id(2),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
    );
    insta::assert_snapshot!("mcp_legacy_tools_list_page1", page1);
    let cursor = serde_json::from_str::<Value>(&page1).expect("JSON")["result"]["nextCursor"]
        .as_str()
        .expect("the first page has a nextCursor")
        .to_owned();
    let page2 = r.request(
        &id(3),
        &format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"cursor":"{cursor}"}}}}"#
        ),
    );
    insta::assert_snapshot!("mcp_legacy_tools_list_page2", page2);

    for (n, (name, tool, arguments)) in (10..).zip(CALLS) {
        let reply = r.request(&id(n), &legacy_call(n, tool, arguments));
        insta::assert_snapshot!(format!("mcp_legacy_tools_call_{name}"), reply);
    }
    r.finish();
}

#[test]
fn mcp_modern_era_bytes() {
    let mut r = Reference::start("mcp");

    let discover = r.request(&id(1), &modern_request(1, "server/discover", ""));
    insta::assert_snapshot!("mcp_modern_server_discover", discover);

    let page1 = r.request(&id(2), &modern_request(2, "tools/list", ""));
    insta::assert_snapshot!("mcp_modern_tools_list_page1", page1);
    let cursor = serde_json::from_str::<Value>(&page1).expect("JSON")["result"]["nextCursor"]
        .as_str()
        .expect("the first page has a nextCursor")
        .to_owned();
    let page2 = r.request(
        &id(3),
        &modern_request(3, "tools/list", &format!(r#""cursor":"{cursor}""#)),
    );
    insta::assert_snapshot!("mcp_modern_tools_list_page2", page2);

    for (n, (name, tool, arguments)) in (10..).zip(CALLS) {
        let params = format!(r#""name":"{tool}","arguments":{arguments}"#);
        let reply = r.request(&id(n), &modern_request(n, "tools/call", &params));
        insta::assert_snapshot!(format!("mcp_modern_tools_call_{name}"), reply);
    }
    r.finish();
}

#[test]
fn acp_v1_bytes() {
    let mut r = Reference::start("acp");

    let init = r.request(
        &id(1),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"parity-tests","version":"0"}}}"#,
    );
    insta::assert_snapshot!("acp_initialize", init);

    // The session id is deterministic (`sess_<n>`, counting from 1 per connection), so it is
    // pinned rather than redacted.
    let session = r.request(
        &id(2),
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
    );
    insta::assert_snapshot!("acp_session_new", session);
    let session_id = serde_json::from_str::<Value>(&session).expect("JSON")["result"]["sessionId"]
        .as_str()
        .expect("session/new returns a sessionId")
        .to_owned();

    for (n, (name, tool, arguments)) in (10..).zip(CALLS) {
        let reply = r.request(&id(n), &acp_tool(n, &session_id, tool, arguments));
        insta::assert_snapshot!(format!("acp_tool_{name}"), reply);
    }
    r.finish();
}

#[test]
fn redaction_replaces_only_the_volatile_substrings() {
    let v = env!("CARGO_PKG_VERSION");
    let t = now_ms();
    let line = format!(
        r#"{{"a":{{"serverInfo":{{"name":"x","version":"{v}"}},"since_ms":{t},"text":"{{\"since_ms\":{t}}}","version":"{v}"}},"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"x","version":"{v}"}}}},"agentInfo":{{"name":"y","title":"z","version":"{v}"}}}}"#
    );
    assert_eq!(
        redact(&line, t),
        format!(
            r#"{{"a":{{"serverInfo":{{"name":"x","version":"[VERSION]"}},"since_ms":[TIME],"text":"{{\"since_ms\":[TIME]}}","version":"{v}"}},"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"x","version":"[VERSION]"}}}},"agentInfo":{{"name":"y","title":"z","version":"[VERSION]"}}}}"#
        )
    );
}
