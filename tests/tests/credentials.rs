//! Credential-file hygiene from the reference side (seed rules 38–56, docs/credentials.md):
//! `parity reference launch` hands its child a private file's path and never the header, rotates
//! the file in place on a control line, and removes everything at shutdown; `parity reference
//! bridge` refuses to start without an endpoint and a readable file, re-reads the file before
//! every POST, and speaks Streamable HTTP to a recording server and to the reference facade.
//!
//! Every test drives the real `parity` binary over real pipes. Waits are bounded by a generous
//! deadline that only guards against a hang; nothing asserts on time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A hang guard for one expected line or exit; never a timing assertion.
const DEADLINE: Duration = Duration::from_secs(120);

/// Variables a test clears so the environment of `cargo test` cannot leak into a case.
const CLEARED: [&str; 8] = [
    "PARITY_MCP_AUTHORIZATION",
    "PARITY_MCP_AUTHORIZATION_FILE",
    "PARITY_MCP_ENDPOINT",
    "T3_ACP_MCP_AUTHORIZATION",
    "T3_MCP_BEARER_TOKEN",
    "T3_CODE_MCP_AUTHORIZATION",
    "T3_ACP_MCP_AUTHORIZATION_FILE",
    "T3_ACP_MCP_ENDPOINT",
];

/// A random-looking marker unlikely to occur anywhere by chance.
fn canary(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("PARITYCANARY{tag}{}x{nanos:x}", std::process::id())
}

/// A `parity` process over pipes, with stdout and stderr read line by line on threads and
/// kept for failure messages.
struct Proc {
    what: String,
    child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<String>,
    err: Receiver<String>,
    out_log: Arc<Mutex<Vec<String>>>,
    err_log: Arc<Mutex<Vec<String>>>,
    /// Process groups the launcher started (its child's), killed on drop if the test failed.
    groups: Vec<String>,
}

fn pump(stream: impl Read + Send + 'static, log: Arc<Mutex<Vec<String>>>) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            log.lock().unwrap().push(line.clone());
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

impl Proc {
    fn start(args: &[&str], env: &[(&str, &str)], tmpdir: &Path) -> Proc {
        let mut cmd = Command::new(common::parity());
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("TMPDIR", tmpdir);
        for name in CLEARED {
            cmd.env_remove(name);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let out_log = Arc::new(Mutex::new(Vec::new()));
        let err_log = Arc::new(Mutex::new(Vec::new()));
        let out = pump(child.stdout.take().unwrap(), out_log.clone());
        let err = pump(child.stderr.take().unwrap(), err_log.clone());
        Proc {
            what: format!("parity {}", args.join(" ")),
            stdin: child.stdin.take(),
            child,
            out,
            err,
            out_log,
            err_log,
            groups: Vec::new(),
        }
    }

    fn report(&self) -> String {
        format!(
            "command: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.what,
            self.out_log.lock().unwrap().join("\n"),
            self.err_log.lock().unwrap().join("\n")
        )
    }

    /// Writes `line` to a process that may already have exited without reading it (one that
    /// refuses its configuration exits at once): a broken pipe is not an error then.
    fn send_unread(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        for bytes in [line.as_bytes(), b"\n"] {
            match stdin.write_all(bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return,
                other => other.unwrap(),
            }
        }
        match stdin.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.unwrap(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    fn out_line(&self) -> String {
        self.out
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|e| panic!("no stdout line ({e})\n{}", self.report()))
    }

    fn err_line(&self) -> String {
        self.err
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|e| panic!("no stderr line ({e})\n{}", self.report()))
    }

    /// Waits for the exit; returns the code (None: killed by a signal).
    fn wait(&mut self) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Drain the pumps to EOF, so the logs are whole.
                for rx in [&self.out, &self.err] {
                    while rx.recv_timeout(DEADLINE).is_ok() {}
                }
                return status.code();
            }
            assert!(
                start.elapsed() < DEADLINE,
                "did not exit\n{}",
                self.report()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stdout_all(&self) -> Vec<String> {
        self.out_log.lock().unwrap().clone()
    }

    fn stderr_all(&self) -> Vec<String> {
        self.err_log.lock().unwrap().clone()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        // A failed assertion may leave the launcher's child group behind (a stubborn child and
        // its `sleep 1000`): then kill every process of the groups the test recorded.
        if std::thread::panicking() {
            for pgid in self.groups.drain(..) {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pgid}")])
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// The `parity-cred-*` entries under `dir`.
fn cred_dirs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("parity-cred-"))
        })
        .collect()
}

/// Waits (bounded) until `path` exists, as written by a child script.
fn wait_for_file(path: &Path, proc: &Proc) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text;
            }
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{} never appeared\n{}",
            path.display(),
            proc.report()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` is gone (or a zombie waiting for its reaper).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

fn wait_gone(pid: &str) {
    let start = Instant::now();
    while !gone(pid) {
        assert!(start.elapsed() < DEADLINE, "process {pid} is still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child script that records what it received in `$OUT` and then waits for its stdin to end.
const PROBE: &str = r#"
printf '%s\n' "$PARITY_MCP_AUTHORIZATION_FILE" > "$OUT/path.tmp"
cat "$PARITY_MCP_AUTHORIZATION_FILE" > "$OUT/content"
env > "$OUT/env"
tr '\0' ' ' < /proc/$$/cmdline > "$OUT/cmdline"
printf '%s %s\n' "$$" "$(cut -d' ' -f5 /proc/$$/stat)" > "$OUT/pgid"
mv "$OUT/path.tmp" "$OUT/path"
cat > /dev/null
echo eof > "$OUT/eof"
"#;

#[test]
fn launch_hands_the_child_a_private_file_path_and_never_the_header() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let secret = canary("A");
    let legacy = canary("L");
    let header = format!("Bearer {secret}");
    let out_dir = out.path().to_str().unwrap();
    let mut launch = Proc::start(
        &[
            "reference",
            "launch",
            "--endpoint",
            "http://127.0.0.1:9/mcp",
            "--",
            "sh",
            "-c",
            PROBE,
        ],
        &[
            ("OUT", out_dir),
            ("PARITY_MCP_AUTHORIZATION", &header),
            ("T3_ACP_MCP_AUTHORIZATION", &format!("Bearer {legacy}")),
            ("T3_MCP_BEARER_TOKEN", &legacy),
            ("T3_CODE_MCP_AUTHORIZATION", &format!("Bearer {legacy}")),
            ("PARITY_MCP_AUTHORIZATION_FILE", "/stale/authorization"),
            ("T3_ACP_MCP_AUTHORIZATION_FILE", "/stale/t3"),
            ("T3_ACP_MCP_ENDPOINT", "http://127.0.0.1:1/stale"),
            ("UNRELATED_FILE", "/etc/unrelated"),
        ],
        tmp.path(),
    );
    let path = PathBuf::from(wait_for_file(&out.path().join("path"), &launch).trim_end());

    // Rule 38/39: a fresh 0700 directory under the temp dir holding a 0600 file with exactly
    // the header.
    let dir = path.parent().unwrap();
    assert_eq!(dir.parent().unwrap(), tmp.path(), "{}", path.display());
    assert!(dir
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("parity-cred-"));
    assert_eq!(path.file_name().unwrap(), "authorization");
    assert_eq!(std::fs::metadata(dir).unwrap().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::read_to_string(out.path().join("content")).unwrap(),
        header
    );

    // Rules 48–52: the child's environment has the path and the endpoint, keeps unrelated
    // variables, and holds neither canary nor any legacy or stale variable.
    let env_text = std::fs::read_to_string(out.path().join("env")).unwrap();
    let env: BTreeMap<&str, &str> = env_text.lines().filter_map(|l| l.split_once('=')).collect();
    assert_eq!(
        env.get("PARITY_MCP_AUTHORIZATION_FILE"),
        Some(&path.to_str().unwrap())
    );
    assert_eq!(
        env.get("PARITY_MCP_ENDPOINT"),
        Some(&"http://127.0.0.1:9/mcp")
    );
    assert_eq!(env.get("UNRELATED_FILE"), Some(&"/etc/unrelated"));
    assert!(env.contains_key("PATH"));
    for name in [
        "PARITY_MCP_AUTHORIZATION",
        "T3_ACP_MCP_AUTHORIZATION",
        "T3_MCP_BEARER_TOKEN",
        "T3_CODE_MCP_AUTHORIZATION",
        "T3_ACP_MCP_AUTHORIZATION_FILE",
        "T3_ACP_MCP_ENDPOINT",
    ] {
        assert!(
            !env.contains_key(name),
            "{name} reached the child:\n{env_text}"
        );
    }
    assert!(
        !env_text.contains(&secret) && !env_text.contains(&legacy),
        "{env_text}"
    );
    let cmdline = std::fs::read_to_string(out.path().join("cmdline")).unwrap();
    assert!(!cmdline.contains(&secret), "rule 52: {cmdline}");
    // The child leads its own process group.
    let pgid = std::fs::read_to_string(out.path().join("pgid")).unwrap();
    let (pid, group) = pgid.trim().split_once(' ').unwrap();
    assert_eq!(pid, group, "the child runs in its own process group");

    // stdin EOF: the child's stdin closes, it exits on its own, and everything is removed.
    launch.close_stdin();
    assert_eq!(launch.wait(), Some(0), "{}", launch.report());
    assert_eq!(
        std::fs::read_to_string(out.path().join("eof")).unwrap(),
        "eof\n"
    );
    assert!(
        !dir.exists(),
        "rule 46: the directory is removed at shutdown"
    );
    assert!(cred_dirs(tmp.path()).is_empty());
    let all = format!(
        "{}\n{}",
        launch.stdout_all().join("\n"),
        launch.stderr_all().join("\n")
    );
    assert!(
        !all.contains(&secret),
        "the launcher printed the header\n{all}"
    );
}

#[test]
fn launch_rotates_the_file_at_the_same_path_on_a_control_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let first = format!("Bearer {}", canary("R1"));
    let second = format!("Bearer {}", canary("R2"));
    let mut launch = Proc::start(
        &["reference", "launch", "--bearer-stdin", "sh", "-c", PROBE],
        &[("OUT", out.path().to_str().unwrap())],
        tmp.path(),
    );
    launch.send(&first);
    let path = PathBuf::from(wait_for_file(&out.path().join("path"), &launch).trim_end());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
    let before = std::fs::metadata(&path).unwrap();

    launch.send(&format!("rotate {second}"));
    assert_eq!(launch.err_line(), "parity-launch: rotated");
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        second,
        "rule 53: same path, new content"
    );
    assert_ne!(
        after.ino(),
        before.ino(),
        "rule 42: a new inode renamed over the old"
    );
    assert_eq!(after.permissions().mode() & 0o777, 0o600);

    // An unknown line is reported without being echoed; a bad header is refused.
    launch.send(&format!("set {second}"));
    let unknown = launch.err_line();
    assert!(
        unknown.starts_with("parity-launch: ") && !unknown.contains(&second),
        "{unknown}"
    );
    launch.send("rotate ");
    assert!(launch.err_line().contains("refused"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), second);

    launch.close_stdin();
    assert_eq!(launch.wait(), Some(0), "{}", launch.report());
    assert!(
        cred_dirs(tmp.path()).is_empty(),
        "everything removed at stdin EOF"
    );
    let err = launch.stderr_all().join("\n");
    assert!(!err.contains(&first) && !err.contains(&second), "{err}");
}

/// A child that ignores stdin EOF and leaves a grandchild in its group.
const STUBBORN: &str = r#"
sleep 1000 &
printf '%s %s\n' "$$" "$!" > "$OUT/pids.tmp"
mv "$OUT/pids.tmp" "$OUT/pids"
wait
"#;

fn stop_a_stubborn_child(by_signal: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut launch = Proc::start(
        &["reference", "launch", "--", "sh", "-c", STUBBORN],
        &[
            ("OUT", out.path().to_str().unwrap()),
            ("PARITY_MCP_AUTHORIZATION", "Bearer stubborn"),
        ],
        tmp.path(),
    );
    let pids = wait_for_file(&out.path().join("pids"), &launch);
    let (child, grandchild) = pids.trim().split_once(' ').unwrap();
    // The launcher starts its child as the leader of a group of its own.
    launch.groups.push(child.to_owned());
    assert_eq!(cred_dirs(tmp.path()).len(), 1);
    if by_signal {
        let status = Command::new("kill")
            .args(["-TERM", &launch.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    } else {
        launch.close_stdin();
    }
    // The child did not exit on its own: the group got SIGTERM, and the launcher exits 0.
    assert_eq!(launch.wait(), Some(0), "{}", launch.report());
    wait_gone(child);
    wait_gone(grandchild);
    assert!(cred_dirs(tmp.path()).is_empty(), "everything removed");
}

#[test]
fn launch_stops_a_child_that_ignores_stdin_eof_and_its_grandchild() {
    stop_a_stubborn_child(false);
}

#[test]
fn launch_stops_the_child_and_removes_everything_on_sigterm() {
    stop_a_stubborn_child(true);
}

#[test]
fn launch_exits_with_the_childs_own_code_and_removes_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let mut launch = Proc::start(
        &["reference", "launch", "--", "sh", "-c", "exit 7"],
        &[("PARITY_MCP_AUTHORIZATION", "Bearer seven")],
        tmp.path(),
    );
    assert_eq!(launch.wait(), Some(7), "{}", launch.report());
    assert!(cred_dirs(tmp.path()).is_empty());
}

#[test]
fn launch_without_a_header_starts_nothing() {
    for (args, env, stdin) in [
        (vec!["reference", "launch", "--", "sh", "-c"], vec![], None),
        (
            vec!["reference", "launch", "--", "sh", "-c"],
            vec![("PARITY_MCP_AUTHORIZATION", "")],
            None,
        ),
        (
            vec!["reference", "launch", "--bearer-stdin", "--", "sh", "-c"],
            vec![],
            None,
        ),
        (
            vec!["reference", "launch", "--bearer-stdin", "--", "sh", "-c"],
            vec![],
            Some(""),
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let marker = out.path().join("started");
        let script = format!("touch '{}'", marker.display());
        let mut full = args.clone();
        full.push(&script);
        let mut launch = Proc::start(&full, &env, tmp.path());
        if let Some(line) = stdin {
            // A launcher that refuses its arguments may exit before it reads the line.
            launch.send_unread(line);
        }
        launch.close_stdin();
        assert_eq!(launch.wait(), Some(2), "{}", launch.report());
        let err = launch.stderr_all();
        assert_eq!(err.len(), 1, "one stderr line\n{}", launch.report());
        assert!(err[0].starts_with("parity-launch: "), "{}", launch.report());
        assert!(launch.stdout_all().is_empty());
        assert!(!marker.exists(), "nothing was started");
        assert!(
            cred_dirs(tmp.path()).is_empty(),
            "no credential file was written"
        );
    }
}

/// One request a [`Upstream`] received.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    headers: BTreeMap<String, String>,
    body: String,
}

/// A loopback HTTP/1.1 server that records every request and answers each with the raw
/// response its script gives (`Connection: close`); shut down on drop.
struct Upstream {
    url: String,
    addr: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    stream.set_read_timeout(Some(DEADLINE)).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let method = first.split_whitespace().next()?.to_owned();
    let mut headers = BTreeMap::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':')?;
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded {
        method,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

impl Upstream {
    fn start(script: impl Fn(&Recorded) -> String + Send + 'static) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (requests, connections, stop) =
                (requests.clone(), connections.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(mut stream) = stream else { continue };
                    connections.fetch_add(1, Ordering::SeqCst);
                    let Some(request) = read_request(&mut stream) else {
                        continue;
                    };
                    let response = script(&request);
                    requests.lock().unwrap().push(request);
                    let _ = stream.write_all(response.as_bytes());
                    let _ = stream.flush();
                }
            })
        };
        Upstream {
            url: format!("http://{addr}/mcp"),
            addr,
            requests,
            connections,
            stop,
            thread: Some(thread),
        }
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn http_response(status: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut r = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    r
}

/// One fail-closed case of the bridge: what it is, its environment, and the variable its
/// stderr line must name.
type FailCase<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

#[test]
fn bridge_without_an_endpoint_or_a_usable_file_exits_2_and_sends_nothing() {
    let upstream = Upstream::start(|_| http_response("200 OK", &[], ""));
    let dir = tempfile::tempdir().unwrap();
    let secret = canary("B");
    let good = dir.path().join("authorization");
    std::fs::write(&good, format!("Bearer {secret}")).unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "").unwrap();
    let missing = dir.path().join("missing");
    let (good_s, empty_s, missing_s, dir_s) = (
        good.to_str().unwrap(),
        empty.to_str().unwrap(),
        missing.to_str().unwrap(),
        dir.path().to_str().unwrap(),
    );
    let url = upstream.url.as_str();
    let cases: Vec<FailCase> = vec![
        ("nothing set", vec![], "PARITY_MCP_ENDPOINT"),
        (
            "no endpoint",
            vec![("PARITY_MCP_AUTHORIZATION_FILE", good_s)],
            "PARITY_MCP_ENDPOINT",
        ),
        (
            "no file variable",
            vec![("PARITY_MCP_ENDPOINT", url)],
            "PARITY_MCP_AUTHORIZATION_FILE",
        ),
        (
            "a missing file",
            vec![
                ("PARITY_MCP_ENDPOINT", url),
                ("PARITY_MCP_AUTHORIZATION_FILE", missing_s),
            ],
            "PARITY_MCP_AUTHORIZATION_FILE",
        ),
        (
            "an unreadable file (a directory)",
            vec![
                ("PARITY_MCP_ENDPOINT", url),
                ("PARITY_MCP_AUTHORIZATION_FILE", dir_s),
            ],
            "PARITY_MCP_AUTHORIZATION_FILE",
        ),
        (
            "an empty file",
            vec![
                ("PARITY_MCP_ENDPOINT", url),
                ("PARITY_MCP_AUTHORIZATION_FILE", empty_s),
            ],
            "PARITY_MCP_AUTHORIZATION_FILE",
        ),
        (
            "a non-loopback endpoint",
            vec![
                ("PARITY_MCP_ENDPOINT", "http://192.0.2.1/mcp"),
                ("PARITY_MCP_AUTHORIZATION_FILE", good_s),
            ],
            "PARITY_MCP_ENDPOINT",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (what, env, names) in cases {
        let mut bridge = Proc::start(&["reference", "bridge"], &env, tmp.path());
        // The bridge may exit 2 before it reads the line.
        bridge.send_unread(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        bridge.close_stdin();
        assert_eq!(bridge.wait(), Some(2), "{what}\n{}", bridge.report());
        let err = bridge.stderr_all();
        assert_eq!(err.len(), 1, "{what}: one stderr line\n{}", bridge.report());
        assert!(
            err[0].contains(names),
            "{what}: names {names}\n{}",
            bridge.report()
        );
        assert!(
            !err[0].contains(&secret) && !err[0].contains(dir_s),
            "{what}: {}",
            err[0]
        );
        assert!(bridge.stdout_all().is_empty(), "{what}: nothing on stdout");
    }
    assert_eq!(
        upstream.connections.load(Ordering::SeqCst),
        0,
        "no HTTP request was sent"
    );
}

#[test]
fn bridge_posts_with_the_header_read_from_the_file_for_every_request() {
    let upstream = Upstream::start(|r| {
        let msg: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        match (r.method.as_str(), msg["method"].as_str()) {
            ("DELETE", _) => http_response("204 No Content", &[], ""),
            (_, Some("initialize")) => http_response(
                "200 OK",
                &[("Content-Type", "application/json"), ("Mcp-Session-Id", "sess-1")],
                // A pretty-printed body: the bridge must still write one line.
                "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, \"serverInfo\": {\"name\": \"up\", \"version\": \"1\"}}\n}",
            ),
            (_, Some("notifications/initialized")) => http_response("202 Accepted", &[], ""),
            (_, Some("tools/list")) => {
                let body = "id: 0\ndata:\n\n: keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[]}}\n\n";
                format!(
                    "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/event-stream\r\n\r\n{body}"
                )
            }
            (_, Some("tools/call")) => http_response("204 No Content", &[], ""),
            _ => http_response("500 Internal Server Error", &[], "oops"),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("authorization");
    std::fs::write(&file, "Bearer first").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut bridge = Proc::start(
        &["reference", "bridge"],
        &[
            ("PARITY_MCP_ENDPOINT", &upstream.url),
            ("PARITY_MCP_AUTHORIZATION_FILE", file.to_str().unwrap()),
        ],
        tmp.path(),
    );
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    bridge.send(init);
    let line: Value = serde_json::from_str(&bridge.out_line()).unwrap();
    assert_eq!(line["id"], 1);
    assert_eq!(line["result"]["protocolVersion"], "2025-06-18");

    // Rotate the file: every later request must carry the new header (rule 53).
    let tmp_file = dir.path().join("authorization.new");
    std::fs::write(&tmp_file, "Bearer second").unwrap();
    std::fs::rename(&tmp_file, &file).unwrap();

    bridge.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    bridge.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    // The 202 produced nothing: the next line answers tools/list, from an SSE event.
    assert_eq!(
        serde_json::from_str::<Value>(&bridge.out_line()).unwrap(),
        json!({"jsonrpc":"2.0","id":2,"result":{"tools":[]}})
    );
    bridge.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    assert_eq!(
        serde_json::from_str::<Value>(&bridge.out_line()).unwrap(),
        json!({"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"upstream responded with HTTP 500."}})
    );
    bridge.send(r#"{"jsonrpc":"2.0","method":"notifications/boom"}"#);
    bridge.send("this is not json");
    assert_eq!(
        serde_json::from_str::<Value>(&bridge.out_line()).unwrap()["error"]["code"],
        -32700
    );
    bridge.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}"#);
    bridge.close_stdin();
    assert_eq!(bridge.wait(), Some(0), "{}", bridge.report());

    let out = bridge.stdout_all();
    assert_eq!(
        out.len(),
        4,
        "the 202, the notification's 500 and the 204 printed nothing\n{}",
        bridge.report()
    );
    let parse: Value = serde_json::from_str(&out[3]).unwrap();
    assert_eq!(parse["id"], Value::Null);
    assert!(!bridge.stderr_all().join("\n").contains("second"));

    let requests = upstream.requests();
    let methods: Vec<&str> = requests.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(
        methods,
        ["POST", "POST", "POST", "POST", "POST", "POST", "DELETE"],
        "{requests:#?}"
    );
    let bodies: Vec<&str> = requests.iter().map(|r| r.body.as_str()).collect();
    assert_eq!(bodies[0], init, "the line is sent as it was received");
    for (i, r) in requests.iter().enumerate() {
        let expected = if i == 0 {
            "Bearer first"
        } else {
            "Bearer second"
        };
        assert_eq!(
            r.headers.get("authorization").map(String::as_str),
            Some(expected),
            "request {i}"
        );
        if r.method == "POST" {
            assert_eq!(
                r.headers.get("accept").map(String::as_str),
                Some("application/json, text/event-stream"),
                "request {i}"
            );
            assert_eq!(
                r.headers.get("content-type").map(String::as_str),
                Some("application/json")
            );
        }
        if i == 0 {
            assert!(!r.headers.contains_key("mcp-session-id"));
            assert!(!r.headers.contains_key("mcp-protocol-version"));
        } else {
            // Rule 54: the session id and the negotiated version are replayed.
            assert_eq!(
                r.headers.get("mcp-session-id").map(String::as_str),
                Some("sess-1"),
                "request {i}"
            );
            assert_eq!(
                r.headers.get("mcp-protocol-version").map(String::as_str),
                Some("2025-06-18"),
                "request {i}"
            );
        }
    }
}

/// A running `parity reference facade --admin`, stopped on drop.
struct Facade {
    _proc: Proc,
    url: String,
    addr: String,
}

impl Facade {
    fn start(extra: &[&str], tmp: &Path) -> Facade {
        let mut args = vec!["reference", "facade", "--admin", "--catalogue", "direct"];
        args.extend_from_slice(extra);
        let proc = Proc::start(&args, &[], tmp);
        let url = proc.out_line();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let addr = url
            .strip_prefix("http://")
            .and_then(|r| r.split('/').next())
            .unwrap()
            .to_owned();
        Facade {
            _proc: proc,
            url,
            addr,
        }
    }

    /// Mints a session token through the admin hook.
    fn mint(&self, channel: &str) -> String {
        let body = json!({"channel": channel}).to_string();
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(DEADLINE)).unwrap();
        write!(
            s,
            "POST /admin/mint HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
        v["token"].as_str().unwrap().to_owned()
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// The tool names of a `tools/list` answer line.
fn tool_names(line: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    v["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {line}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn bridge_follows_a_rotated_file_against_the_reference_facade_over_sse() {
    let tmp = tempfile::tempdir().unwrap();
    let facade = Facade::start(&["--response", "sse"], tmp.path());
    // The store the launcher uses writes and rotates the file.
    let store_dir = tempfile::tempdir().unwrap();
    let store = parity_reference::credentials::CredentialStore::new_in(store_dir.path());
    let path = store.write("mcp", "Bearer not-a-live-token").unwrap();
    let mut bridge = Proc::start(
        &["reference", "bridge"],
        &[
            ("PARITY_MCP_ENDPOINT", &facade.url),
            ("PARITY_MCP_AUTHORIZATION_FILE", path.to_str().unwrap()),
        ],
        tmp.path(),
    );
    bridge.send(INIT);
    let init: Value = serde_json::from_str(&bridge.out_line()).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    bridge.send(INITIALIZED);
    bridge.send(LIST);
    let anonymous = tool_names(&bridge.out_line());
    assert!(
        !anonymous.iter().any(|n| n.contains("echo_channel")),
        "{anonymous:?}"
    );

    // A minted token written through the store: the very next request carries it.
    let token = facade.mint("chan-1");
    assert_eq!(
        store.write("mcp", &format!("Bearer {token}")).unwrap(),
        path
    );
    bridge.send(LIST);
    let session = tool_names(&bridge.out_line());
    assert!(
        session.iter().any(|n| n.contains("echo_channel")),
        "{session:?}"
    );

    bridge.close_stdin();
    assert_eq!(bridge.wait(), Some(0), "{}", bridge.report());
    let err = bridge.stderr_all().join("\n");
    assert!(!err.contains(&token), "{err}");
    drop(facade);
}

/// A host script: asks the bridge for the tool list once, waits for `$OUT/go`, asks again,
/// then waits for its stdin (the launcher's pipe) to end.
const HOST_SCRIPT: &str = r#"
printf '%s\n%s\n%s\n' "$INIT" "$INITIALIZED" "$LIST" | "$PARITY" reference bridge > "$OUT/first.tmp" 2> "$OUT/first.err"
mv "$OUT/first.tmp" "$OUT/first"
while [ ! -e "$OUT/go" ]; do sleep 0.05; done
printf '%s\n%s\n%s\n' "$INIT" "$INITIALIZED" "$LIST" | "$PARITY" reference bridge > "$OUT/second.tmp" 2> "$OUT/second.err"
mv "$OUT/second.tmp" "$OUT/second"
cat > /dev/null
"#;

#[test]
fn launch_and_bridge_reach_the_facade_and_follow_a_rotation() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let facade = Facade::start(&[], tmp.path());
    let parity = common::parity_str();
    let mut launch = Proc::start(
        &[
            "reference",
            "launch",
            "--bearer-stdin",
            "--endpoint",
            &facade.url,
            "--",
            "sh",
            "-c",
            HOST_SCRIPT,
        ],
        &[
            ("OUT", out.path().to_str().unwrap()),
            ("PARITY", &parity),
            ("INIT", INIT),
            ("INITIALIZED", INITIALIZED),
            ("LIST", LIST),
        ],
        tmp.path(),
    );
    launch.send("Bearer not-a-live-token");
    let first = wait_for_file(&out.path().join("first"), &launch);
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 2, "{first}");
    assert!(
        !tool_names(lines[1])
            .iter()
            .any(|n| n.contains("echo_channel")),
        "{first}"
    );

    let token = facade.mint("chan-2");
    launch.send(&format!("rotate Bearer {token}"));
    assert_eq!(launch.err_line(), "parity-launch: rotated");
    std::fs::write(out.path().join("go"), "").unwrap();
    let second = wait_for_file(&out.path().join("second"), &launch);
    let lines: Vec<&str> = second.lines().collect();
    assert_eq!(lines.len(), 2, "{second}");
    assert!(
        tool_names(lines[1])
            .iter()
            .any(|n| n.contains("echo_channel")),
        "{second}"
    );

    launch.close_stdin();
    assert_eq!(launch.wait(), Some(0), "{}", launch.report());
    assert!(
        cred_dirs(tmp.path()).is_empty(),
        "the launcher removed its directory"
    );
    for f in ["first.err", "second.err"] {
        let err = std::fs::read_to_string(out.path().join(f)).unwrap();
        assert!(!err.contains(&token), "{f}: {err}");
    }
    assert!(!launch.stderr_all().join("\n").contains(&token));
}
