//! The session-gating facade over MCP Streamable HTTP: the `facade` profile against the
//! reference facade in both catalogue forms (one through a target file), the listener's
//! answers to bad HTTP input, and the loopback-only rule. The faulty facades are proven by
//! `parity selftest` (tests/selftest.rs); the rmcp client is in tests/rmcp_http.rs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// A running `parity reference facade`, stopped (stdin closed, then killed) on drop.
struct Facade {
    child: Child,
    url: String,
}

impl Facade {
    fn start(extra: &[&str]) -> Facade {
        let mut child = Command::new(common::parity())
            .args(["reference", "facade", "--admin"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
        Facade { child, url }
    }

    fn addr(&self) -> String {
        let rest = self.url.strip_prefix("http://").unwrap();
        rest.split('/').next().unwrap().to_owned()
    }
}

impl Drop for Facade {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw HTTP/1.1 exchange: status code, head and body (the server closes after it).
fn raw(addr: &str, request: &[u8]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn post(addr: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String, String) {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    raw(addr, &bytes)
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

fn initialize(addr: &str) -> String {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let (status, head, _) = post(addr, &[JSON, ACCEPT], body.to_string().as_bytes());
    assert_eq!(status, 200, "{head}");
    head.lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id: ")
                .map(|v| v.trim().to_owned())
        })
        .expect("a session id")
}

fn mint(addr: &str, channel: &str) -> String {
    let body = json!({"channel": channel}).to_string();
    let req = format!(
        "POST /admin/mint HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, _, body) = raw(addr, req.as_bytes());
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["token"].as_str().unwrap().to_owned()
}

#[test]
fn the_reference_facade_passes_the_facade_profile_in_the_meta_form() {
    let run = common::run_json(&["run", "--profile", "facade"]);
    run.assert_code(0);
    let verdicts = run.verdicts_of("facade.naming-rules");
    assert_eq!(verdicts.len(), 1, "{verdicts:?}");
    assert_eq!(run.cases().len(), 10);
    for (id, case) in run.cases() {
        assert_eq!(case["verdict"], "pass", "{id}: {case}");
    }
}

#[test]
fn the_reference_facade_passes_every_check_of_the_mcp_http_profile() {
    let run = common::run_json(&["run", "--profile", "mcp-http"]);
    run.assert_code(0);
    assert!(run.cases().len() >= 40, "{:?}", run.cases().keys());
    // Transport-neutral checks through the bridge, and the transport's own.
    assert!(run
        .verdict("mcp.base.id-echo@mcp-http#2025-11-25")
        .is_some());
    assert!(run
        .verdict("mcp.http.sse-framing@mcp-http#2025-11-25")
        .is_some());
    for (id, case) in run.cases() {
        // The 2026-07-28 logging rules the reference does not adopt skip, by design.
        let by_design = parity_harness::engine::reference::skipped_by_design(id);
        let want = if by_design { "skip" } else { "pass" };
        assert_eq!(case["verdict"], want, "{id}: {case}");
    }
}

#[test]
fn a_target_file_runs_the_direct_form_started_by_command() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.log");
    let exe = common::parity_str();
    let six = [
        "read_file",
        "write_file",
        "list_dir",
        "exec",
        "status",
        "retry",
    ];
    let mut anonymous: Vec<String> = six.iter().map(|s| s.to_string()).collect();
    anonymous.extend(six.iter().map(|s| format!("parity.{s}")));
    let mut session = anonymous.clone();
    session.push("echo_channel".into());
    let list = |v: &[String]| {
        v.iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let target = format!(
        r#"version = 1
name = "direct facade"
profiles = ["facade"]

[surfaces.http]
command = "{exe} reference facade --admin --catalogue direct --downstream 'ref={exe} reference mcp' --audit-log {audit}"

[facade]
catalogue = "direct"
admin = "same-origin"
session_tool = "echo_channel"
session_arguments = {{ x = 7 }}
invalid_arguments = {{ x = "seven" }}
canary_argument = "note"
audit_log = "{audit}"

[facade.topology]
anonymous = [{anon}]
session = [{sess}]
"#,
        audit = audit.display(),
        anon = list(&anonymous),
        sess = list(&session),
    );
    let path = dir.path().join("parity.toml");
    std::fs::write(&path, target).unwrap();
    let run = common::run_json(&["run", "--target", path.to_str().unwrap()]);
    run.assert_code(0);
    assert_eq!(run.cases().len(), 10, "{:?}", run.cases().keys());
    for (id, case) in run.cases() {
        assert_eq!(case["verdict"], "pass", "{id}: {case}");
    }
    // The audit log holds hashes, never the canary arguments.
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(log.contains("\"args_sha256\""), "{log}");
    assert!(!log.contains("parity-canary-"), "{log}");
}

#[test]
fn a_facade_target_with_a_bad_key_is_an_error_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parity.toml");
    std::fs::write(
        &path,
        "version = 1\n[surfaces.http]\nurl = \"http://127.0.0.1:9/mcp\"\n[facade]\nsession_tool = \"t\"\ninvalid_arguments = { x = 1 }\nadmin = \"same-origin\"\nremint = \"sometimes\"\n",
    )
    .unwrap();
    let run = common::run(&["run", "--target", path.to_str().unwrap()]);
    run.assert_code(2);
    assert!(
        run.stderr.contains(":8:") && run.stderr.contains("facade.remint"),
        "{}",
        run.stderr
    );
}

/// The worked example of docs/facade.md (the one-line-audit facade) as a runnable target:
/// each command's leading `parity` is the binary under test, the audit log is `audit`.
fn one_line_audit_target(audit: &std::path::Path) -> String {
    let text = common::docs_example("facade.md", "facade-one-line-audit");
    // The self-test runs the same file.
    assert_eq!(
        text,
        parity_harness::profiles::facade::ONE_LINE_AUDIT_TARGET
    );
    text.replace("= \"parity ", &format!("= \"'{}' ", common::parity_str()))
        .replace("/tmp/gateway-audit.log", audit.to_str().unwrap())
}

#[test]
fn the_one_line_audit_example_passes_every_facade_check() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.log");
    let path = dir.path().join("parity.toml");
    std::fs::write(&path, one_line_audit_target(&audit)).unwrap();
    let run = common::run_json(&["run", "--target", path.to_str().unwrap()]);
    run.assert_code(0);
    assert_eq!(run.cases().len(), 10, "{:?}", run.cases().keys());
    for (id, case) in run.cases() {
        assert_eq!(case["verdict"], "pass", "{id}: {case}");
    }
    // One line per call, the facade's own members, hashes and never the canary.
    let log = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["capability"] == "write_file"),
        "{log}"
    );
    assert!(
        lines.iter().all(|l| l["fields"]["digest"].is_string()),
        "{log}"
    );
    assert!(!log.contains("parity-canary-"), "{log}");
}

#[test]
fn the_one_line_audit_facade_without_its_declarations_does_not_pass() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.log");
    let declared = one_line_audit_target(&audit);
    // Without [facade.audit]: the three audit checks cannot find the call's lines and say
    // which members the lines hold; never a pass, never a fail.
    let (before, after) = declared.split_once("[facade.audit]").unwrap();
    let rest = &after[after.find("[facade.topology]").unwrap()..];
    let path = dir.path().join("undeclared.toml");
    std::fs::write(&path, format!("{before}{rest}")).unwrap();
    let run = common::run_json(&["run", "--target", path.to_str().unwrap()]);
    run.assert_code(3);
    for check in [
        "facade.audit-shape",
        "facade.audit-no-plaintext",
        "facade.preflight-before-dispatch",
    ] {
        let case = &run.cases()[&format!("{check}@facade#2025-11-25")];
        assert_eq!(case["verdict"], "not-run", "{check}: {case}");
        let message = case["message"].as_str().unwrap();
        assert!(
            message.contains("none with `channel` =")
                && message.contains("/fields/session")
                && message.contains("[facade.audit]"),
            "{check}: {message}"
        );
    }
    // Without `prints = "port"` the facade's port is no URL: the profile cannot start it.
    let path = dir.path().join("no-prints.toml");
    let no_prints: String = declared
        .lines()
        .filter(|l| !l.starts_with("prints"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, no_prints).unwrap();
    let run = common::run(&["run", "--target", path.to_str().unwrap()]);
    run.assert_code(3);
    assert!(
        run.stderr.contains("is not an http:// URL")
            && run.stderr.contains("declare `prints = \"port\"`"),
        "{}",
        run.stderr
    );
}

/// Runs the facade profile on the reference facade with `mint` as its mint command (and
/// `timeouts`, TOML lines, before it), checks the exit code is `code`, and gives the verdict
/// and the message of `facade.token-sees-session-tools`.
fn with_mint_hook(mint: &str, timeouts: &str, code: i32) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let target = format!(
        r#"version = 1
profiles = ["facade"]
{timeouts}
[surfaces.http]
command = "{exe} reference facade"
[facade]
mint_command = "{mint}"
revoke_command = "true"
session_tool = "echo_channel"
invalid_arguments = {{ x = "seven" }}
"#,
        exe = common::parity_str()
    );
    let path = dir.path().join("parity.toml");
    std::fs::write(&path, target).unwrap();
    let run = common::run_json(&["run", "--target", path.to_str().unwrap()]);
    run.assert_code(code);
    let case = &run.cases()["facade.token-sees-session-tools@facade#2025-11-25"];
    (
        case["verdict"].as_str().unwrap().to_owned(),
        case["message"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_failing_mint_hook_leaves_the_cases_not_run_naming_the_hook() {
    let (verdict, message) = with_mint_hook("false --port {port}", "", 3);
    assert_eq!(verdict, "not-run", "{message}");
    // The hook's command line with its port filled in and the channel appended, once.
    assert!(
        message.starts_with("the mint hook `false --port ")
            && message.contains(" parity-sees-")
            && message.contains("failed (exit status: 1)")
            && message.matches("false --port").count() == 1
            && !message.contains("{port}"),
        "{message}"
    );
}

#[test]
fn a_mint_hook_past_the_deadline_is_a_timeout_naming_the_hook() {
    let (verdict, message) =
        with_mint_hook("sh -c 'sleep 30' mint", "[timeouts]\nmessage_ms = 2000", 1);
    assert_eq!(verdict, "timeout", "{message}");
    assert!(
        message.starts_with("the mint hook `sh -c ")
            && message.contains(" parity-sees-")
            && message.contains("ran past 2000 ms"),
        "{message}"
    );
}

#[test]
fn a_bad_facade_audit_or_start_key_is_an_error_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parity.toml");
    for (body, line, key) in [
        (
            "[surfaces.http]\ncommand = \"gw\"\nprints = \"pid\"\n[facade]\nsession_tool = \"t\"\ninvalid_arguments = {}\nadmin = \"same-origin\"\n",
            4,
            "surfaces.http.prints",
        ),
        (
            "[surfaces.http]\nurl = \"http://127.0.0.1:9/mcp\"\n[facade]\nsession_tool = \"t\"\ninvalid_arguments = {}\nadmin = \"same-origin\"\n[facade.audit]\nlines = \"two\"\n",
            9,
            "facade.audit.lines",
        ),
        (
            "[surfaces.http]\nurl = \"http://127.0.0.1:9/mcp\"\n[facade]\nsession_tool = \"t\"\npreflight_tool = \"w\"\nadmin = \"same-origin\"\n",
            6,
            "facade.preflight_invalid_arguments",
        ),
    ] {
        std::fs::write(&path, format!("version = 1\n{body}")).unwrap();
        let run = common::run(&["run", "--target", path.to_str().unwrap()]);
        run.assert_code(2);
        assert!(
            run.stderr.contains(&format!("parity.toml:{line}:")) && run.stderr.contains(key),
            "{body}: {}",
            run.stderr
        );
    }
}

#[test]
fn bad_http_input_gets_clear_errors_and_echoes_nothing() {
    let facade = Facade::start(&[]);
    let addr = facade.addr();
    let sid = initialize(&addr);
    let session = ("Mcp-Session-Id", sid.as_str());
    let secret = "hunter2-secret-argument";

    // Not JSON.
    let (status, _, body) = post(&addr, &[JSON, ACCEPT, session], b"{not json");
    assert_eq!(status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["code"],
        -32700
    );
    // No content type.
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_capability","arguments":{"name":"echo_channel","arguments":{"note": secret}}}});
    let (status, _, body) = post(&addr, &[ACCEPT, session], call.to_string().as_bytes());
    assert_eq!(status, 415, "{body}");
    assert!(!body.contains(secret));
    // A body one byte over the 4 MiB limit: the facade reads it all to find it too long, so
    // no byte is left unread when it answers 413 and closes (a larger body would leave some,
    // and the reset that closing then sends may discard the answer before the test reads it).
    let big = vec![b' '; 4 * 1024 * 1024 + 1];
    let (status, _, body) = post(&addr, &[JSON, ACCEPT, session], &big);
    assert_eq!(status, 413, "{body}");
    // A token of the wrong length and a garbage header value: the anonymous view, and the
    // value is not echoed.
    for auth in ["Bearer abc", "Bearer \u{e9}zz", "Basic Zm9vOmJhcg=="] {
        let (status, _, body) = post(
            &addr,
            &[JSON, ACCEPT, session, ("Authorization", auth)],
            call.to_string().as_bytes(),
        );
        assert_eq!(status, 200, "{auth}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["result"]["isError"], true, "{body}");
        assert!(
            v["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("unknown capability"),
            "{body}"
        );
        assert!(
            !body.contains(secret) && !body.contains("abc") && !body.contains("Zm9v"),
            "{body}"
        );
    }
    // A schema-invalid call with a token: refused naming the tool, without quoting values.
    let token = mint(&addr, "chan-bad-input");
    let invalid = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_capability","arguments":{"name":"echo_channel","arguments":{"x": secret}}}});
    let auth = format!("Bearer {token}");
    let (status, _, body) = post(
        &addr,
        &[JSON, ACCEPT, session, ("Authorization", &auth)],
        invalid.to_string().as_bytes(),
    );
    assert_eq!(status, 200);
    assert!(
        body.contains("echo_channel") && body.contains("/x"),
        "{body}"
    );
    assert!(!body.contains(secret) && !body.contains(&token), "{body}");
    // An unknown session id and a missing one.
    let list = json!({"jsonrpc":"2.0","id":4,"method":"tools/list"}).to_string();
    let (status, _, _) = post(
        &addr,
        &[JSON, ACCEPT, ("Mcp-Session-Id", "nope")],
        list.as_bytes(),
    );
    assert_eq!(status, 404);
    let (status, _, _) = post(&addr, &[JSON, ACCEPT], list.as_bytes());
    assert_eq!(status, 400);
    // A foreign Origin.
    let (status, _, _) = post(
        &addr,
        &[JSON, ACCEPT, session, ("Origin", "http://evil.example")],
        list.as_bytes(),
    );
    assert_eq!(status, 403);
}

#[test]
fn two_hundred_concurrent_anonymous_requests_are_all_answered() {
    let facade = Facade::start(&[]);
    let addr = facade.addr();
    let sid = initialize(&addr);
    let handles: Vec<_> = (0..200)
        .map(|i| {
            let addr = addr.clone();
            let sid = sid.clone();
            std::thread::spawn(move || {
                let body = json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"search_capabilities","arguments":{}}});
                post(
                    &addr,
                    &[JSON, ACCEPT, ("Mcp-Session-Id", &sid)],
                    body.to_string().as_bytes(),
                )
            })
        })
        .collect();
    for h in handles {
        let (status, _, body) = h.join().unwrap();
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let names: Vec<&str> = v["result"]["structuredContent"]["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(!names.contains(&"echo_channel"), "{names:?}");
    }
}

#[test]
fn the_listener_refuses_non_loopback_addresses() {
    for addr in ["0.0.0.0:0", "192.168.1.10:0", "[::]:0", "nonsense"] {
        let out = Command::new(common::parity())
            .args(["reference", "facade", "--listen", addr])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("loopback-only"), "{addr}: {stderr}");
        assert!(out.stdout.is_empty(), "{addr}");
    }
}

#[test]
fn the_admin_hook_is_off_unless_enabled_and_refuses_browsers() {
    let mut child = Command::new(common::parity())
        .args(["reference", "facade"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let body = r#"{"channel":"c"}"#;
    let req = format!(
        "POST /admin/mint HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, _, _) = raw(&addr, req.as_bytes());
    assert_eq!(status, 404);
    drop(child.stdin.take());
    let _ = child.wait();

    let facade = Facade::start(&[]);
    let addr = facade.addr();
    let req = format!(
        "POST /admin/mint HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nOrigin: http://localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, _, _) = raw(&addr, req.as_bytes());
    assert_eq!(status, 403);
}
