//! `parity reference launch`: the reference host (seed rules 38–52 from the host's side; fault
//! classes B19 and B20). The command line, control lines and exit codes are documented in
//! `docs/credentials.md`.
//!
//! The launcher takes an `Authorization` header value (`Bearer …`) from
//! [`AUTHORIZATION_VAR`] or, with `--bearer-stdin`, from the first line
//! of its stdin; writes it through a [`CredentialStore`] under key [`MCP_KEY`]; and starts one
//! child with the environment [`ChildEnvBuilder`] builds: the inherited environment without the
//! legacy raw-credential variables and stale file/endpoint variables, plus
//! [`AUTHORIZATION_FILE_VAR`](super::AUTHORIZATION_FILE_VAR) (the file's path) and, when known, [`ENDPOINT_VAR`]. The header is
//! never put on an argv, in the child's environment, or in any output.
//!
//! The child runs in its own process group; its stdin is a pipe the launcher holds open and
//! writes nothing to; its stdout and stderr are the launcher's. The launcher's stdin is a control
//! channel: `rotate <header>` rewrites the file at the same path. On stdin EOF, SIGTERM, SIGINT or
//! SIGHUP it runs the stdio shutdown sequence (close the child's stdin, wait [`GRACE`], SIGTERM
//! the group, wait [`GRACE`], SIGKILL the group), closes the store (every credential directory
//! removed) and exits.

use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use super::env::{apply, ChildEnvBuilder};
use super::store::CredentialStore;
use super::{AUTHORIZATION_VAR, ENDPOINT_VAR, MCP_KEY};

/// The prefix of every line the launcher writes on stderr.
pub const DIAG_PREFIX: &str = "parity-launch:";

/// How long each step of the shutdown sequence waits for the child: 2 s.
pub const GRACE: Duration = Duration::from_secs(2);

/// How long the launcher waits for the child after SIGKILL before giving up: 5 s.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// How often the launcher looks whether the child's process group is empty: every 10 ms.
const GROUP_POLL: Duration = Duration::from_millis(10);

/// The longest control line read from stdin (1 MiB); a longer line is skipped to its newline
/// and reported as unknown.
pub const MAX_CONTROL_LINE: usize = 1024 * 1024;

/// The control line that rotates the header: `rotate <header>`.
pub const ROTATE: &str = "rotate";

/// Exit code: no header, an invalid header, or a bad command line.
pub const EXIT_USAGE: i32 = 2;

/// Exit code: the credential file could not be written (nothing was started).
pub const EXIT_COULD_NOT_RUN: i32 = 3;

/// Exit code: the child could not be started (as a shell, and as `parity record`).
pub const EXIT_SPAWN_FAILED: i32 = 127;

/// What `parity reference launch` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchOptions {
    /// `--endpoint URL`: the MCP endpoint handed to the child in [`ENDPOINT_VAR`]; `None` falls
    /// back to the launcher's own [`ENDPOINT_VAR`], and without either the child gets none.
    pub endpoint: Option<String>,
    /// `--bearer-stdin`: read the header from the first line of stdin instead of
    /// [`AUTHORIZATION_VAR`].
    pub bearer_stdin: bool,
    /// The child's program and arguments (at least the program).
    pub command: Vec<OsString>,
}

/// Marks this process not dumpable (`prctl(PR_SET_DUMPABLE, 0)`), since it holds the header
/// in memory and, with the environment channel, in its own environment (fault class B20: a
/// crash dump records both, and `systemd-coredump` keeps the environment as
/// `COREDUMP_ENVIRON`). It also keeps other processes of the same user from attaching to it
/// or reading its `/proc/<pid>/environ`. The flag is reset at `execve`, so the child is not
/// affected.
///
/// Errors: the `prctl` call failed (its errno).
pub fn protect_from_core_dumps() -> nix::Result<()> {
    nix::sys::prctl::set_dumpable(false)
}

/// Writes one diagnostic line on stderr, ignoring write errors. Callers never pass a header.
fn diag(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{DIAG_PREFIX} {message}");
}

/// Why a header value cannot be used (never containing the value).
fn header_problem(header: &str) -> Option<&'static str> {
    if header.is_empty() {
        return Some("is empty");
    }
    // RFC 9110 field values: visible characters, spaces and tabs; no CR, LF, NUL or other
    // control characters (they would split or end the header).
    if header
        .bytes()
        .any(|b| (b < 0x20 && b != b'\t') || b == 0x7f)
    {
        return Some("contains a control character");
    }
    None
}

/// One line of the stdin control channel, without its line ending (`\n` or `\r\n`); `None`
/// for a line that was too long or not UTF-8.
type Control = Option<String>;

/// Reads stdin on a detached thread (a blocking read must not hold the process open when a
/// signal stops it) and sends each line; the channel closes at EOF or on a read error.
fn spawn_stdin_reader() -> mpsc::UnboundedReceiver<Control> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut reader = stdin.lock();
        loop {
            let mut buf = Vec::new();
            let limit = u64::try_from(MAX_CONTROL_LINE)
                .unwrap_or(u64::MAX)
                .saturating_add(1);
            match (&mut reader).take(limit).read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let complete = buf.last() == Some(&b'\n');
            if !complete && buf.len() > MAX_CONTROL_LINE {
                // Skip the rest of the over-long line without keeping it.
                loop {
                    let Ok(available) = reader.fill_buf() else {
                        return;
                    };
                    if available.is_empty() {
                        break;
                    }
                    match available.iter().position(|&b| b == b'\n') {
                        Some(i) => {
                            reader.consume(i + 1);
                            break;
                        }
                        None => {
                            let n = available.len();
                            reader.consume(n);
                        }
                    }
                }
                if tx.send(None).is_err() {
                    return;
                }
                continue;
            }
            if complete {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
            }
            let line = String::from_utf8(buf).ok();
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// SIGTERM, SIGINT and SIGHUP, each installed before the child starts.
struct StopSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn install() -> std::io::Result<Self> {
        Ok(StopSignals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Completes with the number of the first stop signal received.
    async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => Signal::SIGTERM as i32,
            _ = self.int.recv() => Signal::SIGINT as i32,
            _ = self.hup.recv() => Signal::SIGHUP as i32,
        }
    }
}

/// The launcher's exit code for a child's status: its code, or 128 + the signal that killed it.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    }
}

/// Runs `parity reference launch` and returns its exit code (see `docs/credentials.md`):
///
/// - the child's own exit code (or 128 + signal) when it exits before a stop is requested, or
///   after a requested stop closed its stdin;
/// - 0 when a requested stop (stdin EOF, SIGTERM, SIGINT, SIGHUP) had to signal the child's
///   process group;
/// - [`EXIT_USAGE`] (2) when there is no header or it is not a valid header value, or no
///   command (nothing is started);
/// - [`EXIT_COULD_NOT_RUN`] (3) when the credential file cannot be written;
/// - [`EXIT_SPAWN_FAILED`] (127) when the child cannot be started;
/// - 128 + signal when a stop signal arrives before the child started.
///
/// Diagnostics are single stderr lines beginning `parity-launch:`; none holds the header.
pub async fn run(options: LaunchOptions) -> i32 {
    if let Err(e) = protect_from_core_dumps() {
        diag(&format!(
            "could not turn core dumps off ({e}); a crash could record the header"
        ));
    }
    let Some((program, args)) = options.command.split_first() else {
        diag("no command to launch: give `parity reference launch [--] CMD [ARGS...]`");
        return EXIT_USAGE;
    };
    let mut stops = match StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            diag(&format!("failed to install the signal handlers: {e}"));
            return EXIT_COULD_NOT_RUN;
        }
    };
    let mut control = spawn_stdin_reader();

    let header = if options.bearer_stdin {
        tokio::select! {
            line = control.recv() => match line {
                Some(Some(line)) => line,
                Some(None) => {
                    diag("the bearer line on stdin is not UTF-8 or is too long; nothing started");
                    return EXIT_USAGE;
                }
                None => {
                    diag("--bearer-stdin: stdin ended before the bearer line; nothing started");
                    return EXIT_USAGE;
                }
            },
            sig = stops.recv() => return 128 + sig,
        }
    } else {
        match std::env::var(AUTHORIZATION_VAR) {
            Ok(v) if !v.is_empty() => v,
            Ok(_) | Err(std::env::VarError::NotPresent) => {
                diag(&format!(
                    "no Authorization header: set {AUTHORIZATION_VAR} or pass --bearer-stdin; nothing started"
                ));
                return EXIT_USAGE;
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                diag(&format!(
                    "{AUTHORIZATION_VAR} is not UTF-8; nothing started"
                ));
                return EXIT_USAGE;
            }
        }
    };
    if let Some(problem) = header_problem(&header) {
        diag(&format!(
            "the Authorization header {problem}; nothing started"
        ));
        return EXIT_USAGE;
    }
    let endpoint = options
        .endpoint
        .clone()
        .or_else(|| std::env::var(ENDPOINT_VAR).ok())
        .filter(|e| !e.is_empty());

    let store = CredentialStore::new();
    let path = match store.write(MCP_KEY, &header) {
        Ok(p) => p,
        Err(e) => {
            diag(&format!("failed to write the credential file: {e}"));
            let _ = store.close();
            return EXIT_COULD_NOT_RUN;
        }
    };
    drop(header);

    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(false);
    apply(
        &ChildEnvBuilder::new().build(None, Some(&path), endpoint.as_deref()),
        &mut command,
    );
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            diag(&format!(
                "failed to start `{}`: {e}",
                program.to_string_lossy()
            ));
            let _ = store.close();
            return EXIT_SPAWN_FAILED;
        }
    };
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let child_stdin = child.stdin.take();

    // The child runs; rotate on request until it exits or a stop is requested.
    let code = loop {
        tokio::select! {
            status = child.wait() => {
                // The child exited on its own: clear what is left of its group.
                let code = match status {
                    Ok(s) => exit_code(s),
                    Err(e) => {
                        diag(&format!("failed to wait for the child: {e}"));
                        1
                    }
                };
                if let Some(pgid) = pgid {
                    clear_group(pgid).await;
                }
                break code;
            }
            line = control.recv() => match line {
                Some(line) => handle_control(&store, line.as_deref()),
                None => break shutdown(&mut child, child_stdin, pgid).await,
            },
            _ = stops.recv() => break shutdown(&mut child, child_stdin, pgid).await,
        }
    };
    finish(&store, &path, code)
}

/// Closes the store; a store that cannot be removed turns a 0 into 1.
fn finish(store: &CredentialStore, path: &std::path::Path, code: i32) -> i32 {
    match store.close() {
        Ok(()) => code,
        Err(e) => {
            diag(&format!(
                "failed to remove the credential directory of {}: {e}",
                path.display()
            ));
            if code == 0 {
                1
            } else {
                code
            }
        }
    }
}

/// Acts on one control line (`None`: not UTF-8, or too long).
fn handle_control(store: &CredentialStore, line: Option<&str>) {
    let Some(line) = line else {
        diag("ignored a control line that is not UTF-8 or is too long");
        return;
    };
    if line.trim().is_empty() {
        return;
    }
    let Some(rest) = line.strip_prefix(ROTATE) else {
        // The line is not echoed: it might be a header sent without `rotate`.
        diag("ignored an unknown control line (expected `rotate <header>`)");
        return;
    };
    let Some(header) = rest.strip_prefix(' ') else {
        diag("ignored an unknown control line (expected `rotate <header>`)");
        return;
    };
    if let Some(problem) = header_problem(header) {
        diag(&format!("rotation refused: the header {problem}"));
        return;
    }
    match store.write(MCP_KEY, header) {
        Ok(_) => diag("rotated"),
        Err(e) => diag(&format!("rotation failed, the old header stays: {e}")),
    }
}

/// The stdio shutdown sequence: close the child's stdin, wait [`GRACE`]; SIGTERM its process
/// group, wait [`GRACE`]; SIGKILL the group. Returns the child's own exit code when it exited
/// after its stdin closed, else 0.
async fn shutdown(
    child: &mut tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    pgid: Option<Pid>,
) -> i32 {
    drop(stdin);
    if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
        let code = match status {
            Ok(s) => exit_code(s),
            Err(e) => {
                diag(&format!("failed to wait for the child: {e}"));
                1
            }
        };
        if let Some(pgid) = pgid {
            clear_group(pgid).await;
        }
        return code;
    }
    let Some(pgid) = pgid else {
        let _ = child.start_kill();
        let _ = tokio::time::timeout(KILL_WAIT, child.wait()).await;
        return 0;
    };
    let _ = killpg(pgid, Signal::SIGTERM);
    if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
        // The leader is gone; give the rest of the group what is left of the grace.
        wait_group_empty(pgid, GRACE).await;
    }
    if group_alive(pgid) {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    if tokio::time::timeout(KILL_WAIT, child.wait()).await.is_err() {
        diag("the child did not exit after SIGKILL");
    }
    0
}

/// After the group's leader exited: SIGTERM whatever is left of its group, wait up to
/// [`GRACE`], then SIGKILL it.
async fn clear_group(pgid: Pid) {
    if !group_alive(pgid) {
        return;
    }
    let _ = killpg(pgid, Signal::SIGTERM);
    wait_group_empty(pgid, GRACE).await;
    if group_alive(pgid) {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
}

/// Whether any process is left in group `pgid` (signal 0: existence and permission check).
fn group_alive(pgid: Pid) -> bool {
    !matches!(killpg(pgid, None), Err(Errno::ESRCH))
}

async fn wait_group_empty(pgid: Pid, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(GROUP_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the copy of this test binary that checks the flag, so the test process itself
    /// stays dumpable.
    const DUMPABLE_CHILD: &str = "PARITY_TEST_DUMPABLE_CHILD";

    #[test]
    #[allow(clippy::unwrap_used, clippy::expect_used)]
    fn the_launcher_turns_core_dumps_off_for_itself() {
        if std::env::var_os(DUMPABLE_CHILD).is_some() {
            assert!(nix::sys::prctl::get_dumpable().unwrap());
            protect_from_core_dumps().unwrap();
            assert!(!nix::sys::prctl::get_dumpable().unwrap());
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "credentials::launch::tests::the_launcher_turns_core_dumps_off_for_itself",
                "--exact",
                "--nocapture",
            ])
            .env(DUMPABLE_CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains("1 passed"),
            "the check ran in the copy: {text}"
        );
    }

    #[test]
    fn header_values_are_checked_without_echoing_them() {
        assert_eq!(header_problem("Bearer abc"), None);
        assert_eq!(header_problem("Bearer\tabc"), None);
        assert_eq!(header_problem(""), Some("is empty"));
        assert_eq!(
            header_problem("Bearer a\r\nX: y"),
            Some("contains a control character")
        );
        assert_eq!(
            header_problem("Bearer \u{0}"),
            Some("contains a control character")
        );
    }

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(15)), 143);
    }
}
