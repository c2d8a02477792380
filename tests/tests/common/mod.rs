//! Helpers shared by the integration tests: locate (and build once) the `parity` binary, run it
//! over real pipes with a generous deadline, find the processes a run left behind, and print
//! everything (command, exit status, stdout, stderr) when an assertion fails.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The environment variable the harness tags every peer process with (`<harness pid>-<n>`).
pub const MARKER_VAR: &str = parity_harness::transport::peer::MARKER_VAR;

/// An upper bound for any one `parity run` in these tests: never a timing assertion, only a
/// guard against a hang.
pub const RUN_DEADLINE: Duration = Duration::from_secs(300);

/// Path of the `parity` binary, built once per test binary.
///
/// `cargo test` does not build other packages' binaries, so the first call runs
/// `cargo build --workspace --bins --tests` (a no-op for everything but the binary when the
/// tests are fresh). That selection resolves dependency features exactly as
/// `cargo test --workspace` does, so the binary links the dependencies the test build already
/// compiled; `cargo build -p parity-harness --bin parity` would resolve them without the
/// workspace's dev-dependencies and compile some 80 crates a second time. Set
/// `PARITY_TESTS_NO_BUILD=1` to use whatever binary is already there.
pub fn parity() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // The binary belongs to another package, so cargo does not set CARGO_BIN_EXE_parity
        // for these tests: it sits next to this test's `deps/` directory once built.
        let path = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent()?.parent().map(|d| d.join("parity")))
            .expect("failed to locate the target directory from the test executable");
        if std::env::var_os("PARITY_TESTS_NO_BUILD").is_none() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--quiet", "--workspace", "--bins", "--tests"]);
            if path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "release")
            {
                cmd.arg("--release");
            }
            let out = cmd
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .expect("failed to run cargo build for the parity binary");
            assert!(
                out.status.success(),
                "cargo build --workspace --bins --tests failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            path.is_file(),
            "parity binary not found at {}",
            path.display()
        );
        path
    })
    .clone()
}

/// The `parity` path as a string, for building `--mcp` command lines.
pub fn parity_str() -> String {
    parity().to_string_lossy().into_owned()
}

/// `--mcp` value that serves one faulty peer of the zoo.
pub fn fake_cmd(fault: &str) -> String {
    format!("{} fake {fault}", parity_str())
}

/// What one run of `parity` produced.
pub struct Run {
    /// The arguments, for failure messages.
    pub args: Vec<String>,
    /// Process id of the `parity` process itself.
    pub pid: u32,
    /// Exit code, when it exited (rather than being killed by a signal).
    pub code: Option<i32>,
    /// Terminating signal, when there was one.
    pub signal: Option<i32>,
    /// Captured stdout (lossy UTF-8).
    pub stdout: String,
    /// Captured stderr (lossy UTF-8).
    pub stderr: String,
    /// The JSON report, when one was asked for and written.
    pub report: Option<Value>,
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "command: parity {}", self.args.join(" "))?;
        writeln!(
            f,
            "pid: {}, exit code: {:?}, signal: {:?}",
            self.pid, self.code, self.signal
        )?;
        writeln!(f, "--- stdout ---\n{}", clip(&self.stdout, 20_000))?;
        writeln!(f, "--- stderr ---\n{}", clip(&self.stderr, 8_000))
    }
}

fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Run {
    /// Asserts the run exited (no signal) with `code`.
    pub fn assert_code(&self, code: i32) {
        assert_eq!(self.code, Some(code), "expected exit code {code}\n{self}");
    }

    /// The verdict of every case printed on the console, by case id.
    pub fn console_verdicts(&self) -> BTreeMap<String, String> {
        console_verdicts(&self.stdout)
    }

    /// The JSON report's `cases` object (panics, with the output, when there is none).
    pub fn cases(&self) -> &serde_json::Map<String, Value> {
        self.report
            .as_ref()
            .and_then(|r| r.get("cases"))
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("no JSON report with `cases`\n{self}"))
    }

    /// The verdict of one case from the JSON report, if the case exists.
    pub fn verdict(&self, case_id: &str) -> Option<&str> {
        self.cases()
            .get(case_id)
            .and_then(|c| c.get("verdict"))
            .and_then(Value::as_str)
    }

    /// Every case of a check (any revision) with its verdict, from the JSON report.
    pub fn verdicts_of(&self, check: &str) -> Vec<(String, String)> {
        self.cases()
            .iter()
            .filter(|(_, c)| c.get("check").and_then(Value::as_str) == Some(check))
            .map(|(id, c)| {
                (
                    id.clone(),
                    c.get("verdict")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect()
    }
}

/// Parses the console lines `VERDICT  check@binding#revision (N ms)`.
pub fn console_verdicts(stdout: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        let (Some(tag), Some(id)) = (words.next(), words.next()) else {
            continue;
        };
        if matches!(
            tag,
            "PASS" | "FAIL" | "WARN" | "SKIP" | "NOT-RUN" | "TIMEOUT" | "FLAKY" | "XFAIL"
        ) && id.contains('@')
            && id.contains('#')
        {
            out.insert(id.to_string(), tag.to_string());
        }
    }
    out
}

/// Runs `parity <args>` over pipes and waits for it (at most [`RUN_DEADLINE`]).
pub fn run(args: &[&str]) -> Run {
    run_inner(args, false, &[])
}

/// Runs `parity <args> --json <tmp>` and parses the report it writes.
pub fn run_json(args: &[&str]) -> Run {
    run_inner(args, true, &[])
}

/// [`run_json`] with extra environment variables for `parity` (and so its peers).
pub fn run_json_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_inner(args, true, env)
}

/// [`run`] with extra environment variables for `parity` (and so its peers).
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_inner(args, false, env)
}

fn run_inner(args: &[&str], json: bool, env: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let report_path = dir.path().join("report.json");
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    if json {
        all.push("--json".into());
        all.push(report_path.to_string_lossy().into_owned());
    }
    let mut child = Command::new(parity())
        .args(&all)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("failed to start parity");
    let pid = child.id();
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if started.elapsed() > RUN_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            kill_marked(&format!("{pid}-"));
            panic!(
                "parity {} did not finish within {:?} (killed)",
                all.join(" "),
                RUN_DEADLINE
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap_or_default()).into_owned();
    let report = if json {
        std::fs::read_to_string(&report_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
    } else {
        None
    };
    Run {
        args: all,
        pid,
        code: status.code(),
        signal: status.signal(),
        stdout,
        stderr,
        report,
    }
}

/// A live process found in /proc.
#[derive(Debug, Clone)]
pub struct Proc {
    /// Its pid.
    pub pid: i32,
    /// Its command line, arguments joined by spaces.
    pub cmdline: String,
    /// The value of [`MARKER_VAR`] in its environment.
    pub marker: String,
    /// Its session id (field 6 of /proc/pid/stat).
    pub sid: i32,
}

/// Live (not zombie) processes whose [`MARKER_VAR`] value starts with `prefix`.
///
/// Pass `"<harness pid>-"` to find exactly the peers (and their descendants) of one harness
/// process: other harness processes running in parallel use their own pid.
pub fn marked_processes(prefix: &str) -> Vec<Proc> {
    let needle = format!("{MARKER_VAR}={prefix}");
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let Some(kv) = env
            .split(|b| *b == 0)
            .find(|kv| kv.starts_with(needle.as_bytes()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command name: state ppid pgrp session ...
        let rest: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, r)| r.split_whitespace().collect())
            .unwrap_or_default();
        if matches!(rest.first(), Some(&"Z") | Some(&"X") | None) {
            continue;
        }
        let sid = rest.get(3).and_then(|s| s.parse().ok()).unwrap_or(-1);
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| {
                c.split(|b| *b == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        let marker = String::from_utf8_lossy(&kv[MARKER_VAR.len() + 1..]).into_owned();
        out.push(Proc {
            pid,
            cmdline,
            marker,
            sid,
        });
    }
    out
}

/// Kills (SIGKILL, by pid) every live process whose marker starts with `prefix`: cleanup for
/// processes a test caused, never a broad match.
pub fn kill_marked(prefix: &str) {
    for p in marked_processes(prefix) {
        kill_pid(p.pid);
    }
}

/// Sends SIGKILL to one pid with the `kill` utility (no unsafe code in tests).
pub fn kill_pid(pid: i32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// The body of the fenced block that follows the marker `<!-- example: NAME -->` in
/// `docs/<doc>` (the worked examples of the docs, loaded by the tests so they stay true).
/// Panics, naming the doc and the example, when the marker or its fenced block is missing.
pub fn docs_example(doc: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("docs")
        .join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("docs/{doc}: {e}"));
    let marker = format!("<!-- example: {name} -->");
    let after = text
        .split_once(&marker)
        .unwrap_or_else(|| panic!("docs/{doc} has no `{marker}`"))
        .1;
    let open = after
        .find("```")
        .unwrap_or_else(|| panic!("docs/{doc}: no fenced block after `{marker}`"));
    let body = &after[open + 3..];
    let body = &body[body.find('\n').map_or(0, |i| i + 1)..];
    let close = body
        .find("\n```")
        .unwrap_or_else(|| panic!("docs/{doc}: the block after `{marker}` is not closed"));
    body[..close + 1].to_string()
}
