//! Peers: the processes (or in-memory streams) a case talks to.
//!
//! Architecture invariant: this is the only module of the harness that starts, signals or reaps
//! processes, and the only one with `unsafe` code (three reviewed libc calls: `prctl`,
//! `kill`, `waitpid`) — except [`crate::transport::proctrack`], which traces the hygiene probe's host with
//! ptrace from a thread of its own and has three reviewed calls of its own. A spawned peer runs in its own process group; the harness is a child
//! subreaper (`PR_SET_CHILD_SUBREAPER`), so a descendant that calls `setsid` and loses its parent
//! is re-parented to us and can be reaped; every descendant is also tagged with a per-peer
//! environment marker, which finds it even outside the process group.
//!
//! stdout is read by the [`crate::transport::wire::LineReader`] with a byte cap; stderr is drained
//! concurrently (a peer flooding stderr never stalls), keeping a bounded amount as evidence.
//! stdin is written by a writer task of its own, fed by a queue ([`Peer::send_raw`] only
//! enqueues), so a write blocked on a full pipe never stops the reading: a session is full
//! duplex whatever the peer does. A `c2s` frame is logged when it is queued, with the time it
//! was queued; the writer writes in queue order, and a write that had to wait for the peer to
//! read adds a note saying how long.
//! Shutdown follows MCP's stdio sequence (lifecycle §Shutdown): close stdin, wait, SIGTERM,
//! wait, SIGKILL, with each step's time recorded.
//!
//! Size (1513 lines): process start, group and marker, subreaper, reading and writing tasks, the
//! bounded frame log hookup and the stdio shutdown sequence are one process's life cycle.

use crate::transport::framelog::{Budget, FrameLog};
use crate::transport::wire::{Dir, Frame, Line, LineReader, WireEvent, DEFAULT_LINE_CAP};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Name of the environment variable that tags every process a peer starts.
pub const MARKER_VAR: &str = "PARITY_PEER_MARK";

/// Bytes of stdout lines read ahead of the session (read and waiting for [`Peer::recv`]):
/// 1 MiB, a longer line counting as 1 MiB. Past it the reader waits for the session to take
/// lines, so lines the session has not asked for yet cannot grow parity's memory.
pub const READ_AHEAD: usize = 1 << 20;

/// Bytes of stderr kept as evidence per peer; the rest is counted, not stored.
pub const STDERR_KEEP: usize = 256 * 1024;

/// Most bytes of answers to the peer's own requests that may wait in a peer's write queue
/// (4 MiB, about 60,000 answers to `ping`): past it, [`Peer::send_answer`] drops the answer and
/// notes it, so a peer that floods requests and never reads its stdin cannot grow parity's
/// memory. The client's own writes (probes, requests) are always queued: their size is fixed
/// by the checks.
pub const ANSWER_QUEUE_CAP: usize = 4 * 1024 * 1024;

/// How long a write may wait for the peer to read before the frame log gets a note saying so.
pub const SLOW_WRITE: Duration = Duration::from_secs(1);

/// How long [`Peer::close_stdin`] waits for the write queue to drain before it drops what is
/// left (the peer is not reading) and closes the pipe anyway.
pub const CLOSE_DRAIN: Duration = Duration::from_secs(1);

/// What to start: program, arguments, environment and working directory.
#[derive(Debug, Clone)]
pub struct PeerSpec {
    /// Program to run (looked up on `PATH` when it has no slash).
    pub program: String,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Variables to set in the child's environment.
    pub env: Vec<(String, String)>,
    /// Start from an empty environment (plus `env`) instead of the harness's own.
    pub env_clear: bool,
    /// Working directory; the harness's own when `None`.
    pub cwd: Option<PathBuf>,
    /// Per-line byte cap for stdout (default [`DEFAULT_LINE_CAP`]).
    pub line_cap: usize,
}

impl PeerSpec {
    /// A spec from a program and its arguments, inheriting environment and cwd.
    pub fn new(program: impl Into<String>, args: Vec<String>) -> Self {
        Self {
            program: program.into(),
            args,
            env: Vec::new(),
            env_clear: false,
            cwd: None,
            line_cap: DEFAULT_LINE_CAP,
        }
    }

    /// Parses a shell-like command line (whitespace-separated words; single and double quotes
    /// group words; no expansion). Errors when it is empty or a quote is unterminated.
    pub fn from_command_line(cmd: &str) -> Result<Self, String> {
        let words = split_words(cmd)?;
        let mut it = words.into_iter();
        let program = it.next().ok_or_else(|| "empty command".to_string())?;
        Ok(Self::new(program, it.collect()))
    }

    /// The command as one display string.
    pub fn display(&self) -> String {
        let mut s = self.program.clone();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Splits a command line into words: whitespace separates, quotes group, backslash escapes the
/// next character outside single quotes.
pub fn split_words(cmd: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x) => cur.push(x),
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Errors starting or talking to a peer.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The process could not be started.
    #[error("failed to start `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing to the peer's stdin failed (it closed it, or exited). Writes are queued, so the
    /// error of a write is returned by the next [`Peer::send_raw`] after it.
    #[error("failed to write to the peer: {0}")]
    Write(std::io::Error),
    /// stdin was already closed.
    #[error("failed to write to the peer: stdin is closed")]
    StdinClosed,
}

/// What [`Peer::recv`] saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recv {
    /// A stdout line.
    Line(Line),
    /// stdout reached end of stream.
    Eof,
    /// Nothing arrived before the deadline.
    Timeout,
}

/// One step of the shutdown sequence and when it ended, in ms since shutdown began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownStep {
    /// `stdin-closed`, `exited`, `sigterm`, `sigkill`, `descendants-killed`.
    pub step: &'static str,
    /// Milliseconds since shutdown began.
    pub at_ms: u64,
}

/// The record of a shutdown: the steps taken and how the process ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShutdownReport {
    /// Steps in order.
    pub steps: Vec<ShutdownStep>,
    /// How the process ended (`exit status: 0`, `signal: 15`), or `None` for in-memory peers.
    pub status: Option<String>,
    /// The process exited on its own after stdin closed, before any signal.
    pub exited_on_eof: bool,
    /// Milliseconds from closing stdin to exit, when it exited on EOF.
    pub eof_exit_ms: Option<u64>,
    /// Descendants that were still alive after the peer ended and had to be killed.
    pub stray_descendants: usize,
}

/// Grace periods of the shutdown sequence.
#[derive(Debug, Clone, Copy)]
pub struct ShutdownGrace {
    /// Wait after closing stdin before SIGTERM.
    pub after_eof: Duration,
    /// Wait after SIGTERM before SIGKILL.
    pub after_term: Duration,
}

impl Default for ShutdownGrace {
    fn default() -> Self {
        Self {
            after_eof: Duration::from_millis(2000),
            after_term: Duration::from_millis(1000),
        }
    }
}

type SharedLog = Arc<Mutex<FrameLog>>;

/// A handle on a peer's frame log that outlives the peer.
#[derive(Clone)]
pub struct LogHandle(SharedLog);

impl LogHandle {
    /// A copy of the frames the log kept so far, gaps shown as [`Frame::Gap`].
    pub fn events(&self) -> Vec<WireEvent> {
        lock(&self.0).events_from(0)
    }

    /// Frames the log dropped so far and their bytes ([`crate::transport::framelog::FrameLog::dropped`]).
    pub fn dropped(&self) -> (u64, u64) {
        lock(&self.0).dropped()
    }
}

/// A running peer: a child process or an in-memory stream pair.
pub struct Peer {
    start: Instant,
    log: SharedLog,
    /// The write queue and its task; `None` once stdin is closed.
    stdin: Option<Writer>,
    /// The first write error the writer task met (kind and text), shared with it.
    write_error: Arc<Mutex<Option<(std::io::ErrorKind, String)>>>,
    /// Bytes queued and not yet written, shared with the writer task.
    backlog: Arc<Backlog>,
    /// Answers to the peer's requests dropped because the queue was full ([`ANSWER_QUEUE_CAP`]).
    answers_dropped: u64,
    lines: mpsc::Receiver<Option<Line>>,
    /// Permits for [`READ_AHEAD`]: the reader takes a line's worth before it hands the line
    /// over, [`Peer::recv`] gives them back.
    read_ahead: Arc<tokio::sync::Semaphore>,
    stdout_eof: bool,
    child: Option<tokio::process::Child>,
    pid: Option<u32>,
    marker: Option<String>,
    command: String,
    stderr_total: Arc<AtomicU64>,
    /// The task draining stderr, awaited (briefly) at shutdown so the log holds the last lines.
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    /// Set for a bridged peer ([`Peer::bridged`]): lines written and lines settled.
    settling: Option<Settling>,
}

/// The line a bridge writes on "stdout" once it has delivered everything one input line
/// produced ([`Peer::bridged`]). Never a JSON text (a raw NUL cannot occur in one), so it
/// cannot be confused with a message.
pub const SETTLED_MARKER: &[u8] = b"\0parity-settled";

/// The prefix of a note line a bridge writes on "stdout" ([`Peer::bridged`]): the rest of the
/// line is logged as a [`Dir::Note`] frame (what the transport under the bridge showed: an HTTP
/// status line and headers) and never reaches the caller. Starts with a raw NUL, so no JSON
/// text can look like it.
pub const NOTE_MARKER: &[u8] = b"\0parity-note ";

/// Counts for a bridged peer: input lines written (newlines sent) and input lines the bridge
/// has settled (markers received).
#[derive(Debug, Default, Clone, Copy)]
struct Settling {
    written: u64,
    settled: u64,
}

/// One entry of a peer's write queue.
enum WriteCmd {
    /// Bytes to write, and when they were queued (since the peer started).
    Bytes(Vec<u8>, Duration),
    /// Shut the write side down (EOF for the peer) and end the task.
    Close,
}

/// The sending half of a peer's write queue and the task that drains it into stdin.
struct Writer {
    tx: mpsc::UnboundedSender<WriteCmd>,
    task: tokio::task::JoinHandle<()>,
}

/// Bytes waiting in a write queue, and a wake-up for whoever waits for it to drain.
#[derive(Default)]
struct Backlog {
    bytes: std::sync::atomic::AtomicUsize,
    drained: tokio::sync::Notify,
}

/// How long shutdown waits for stderr's last lines once the process is gone (a descendant may
/// hold the pipe open).
const STDERR_DRAIN: Duration = Duration::from_millis(250);

static NEXT_MARK: AtomicU64 = AtomicU64::new(1);

/// Process groups of the peers currently running, so a signal to the harness can end them.
fn live_groups() -> &'static Mutex<HashSet<i32>> {
    static LIVE: std::sync::OnceLock<Mutex<HashSet<i32>>> = std::sync::OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

fn track(pgid: Option<u32>, live: bool) {
    let Some(pg) = pgid else { return };
    let mut g = match live_groups().lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if live {
        g.insert(pg as i32);
    } else {
        g.remove(&(pg as i32));
    }
}

/// Set once the harness is stopping: no new peer may start.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Kills every running peer's process group and every process carrying one of this harness's
/// peer markers, and refuses to start new peers from then on. For signal handlers.
pub fn kill_all_peers() {
    STOPPING.store(true, Ordering::SeqCst);
    // Twice: a peer being started while the first pass ran is caught by the second.
    kill_pass();
    std::thread::sleep(std::time::Duration::from_millis(50));
    kill_pass();
}

fn kill_pass() {
    let groups: Vec<i32> = match live_groups().lock() {
        Ok(g) => g.iter().copied().collect(),
        Err(p) => p.into_inner().iter().copied().collect(),
    };
    for pg in groups {
        signal_group(pg, libc::SIGKILL);
    }
    for pid in processes_marked_by_us() {
        kill_pid(pid, libc::SIGKILL);
    }
}

/// Ends whatever a run left behind: processes carrying this harness's peer markers, and
/// children re-parented to it (the subreaper) that no peer owns any more — including a
/// descendant that cleared its environment. Kills them and reaps them. Call only when no peer
/// of this process is running (the end of `parity run`). Returns how many it ended.
pub async fn reap_orphans() -> usize {
    let me = std::process::id() as i32;
    let mut left: HashSet<i32> = processes_marked_by_us().into_iter().collect();
    left.extend(
        all_pids()
            .into_iter()
            .filter(|pid| parent_of(*pid) == Some(me)),
    );
    for pid in &left {
        kill_pid(*pid, libc::SIGKILL);
    }
    reap(&left).await;
    left.len()
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every pid listed in /proc.
fn all_pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
        .collect()
}

/// Live processes with a `PARITY_PEER_MARK=…` entry whose text (after `=`) passes `keep`.
fn processes_with_marker(keep: impl Fn(&[u8]) -> bool) -> Vec<i32> {
    let key = format!("{MARKER_VAR}=");
    all_pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .filter_map(|kv| kv.strip_prefix(key.as_bytes()))
                    .any(&keep)
            })
        })
        .filter(|pid| alive(*pid))
        .collect()
}

/// Live processes whose marker was set by this harness process (`<our pid>-<n>`).
fn processes_marked_by_us() -> Vec<i32> {
    let prefix = format!("{}-", std::process::id());
    processes_with_marker(|m| m.starts_with(prefix.as_bytes()))
}

impl Peer {
    /// Starts a process peer. Becomes a child subreaper first (once per harness process).
    ///
    /// Errors: [`PeerError::Spawn`] when the program cannot be started.
    pub fn spawn(spec: &PeerSpec) -> Result<Peer, PeerError> {
        if STOPPING.load(Ordering::SeqCst) {
            return Err(PeerError::Spawn {
                command: spec.display(),
                source: std::io::Error::other("the harness is stopping"),
            });
        }
        become_subreaper();
        crate::transport::watchdog::ensure();
        let mark = format!(
            "{}-{}",
            std::process::id(),
            NEXT_MARK.fetch_add(1, Ordering::Relaxed)
        );
        let mut cmd = tokio::process::Command::new(&spec.program);
        cmd.args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if spec.env_clear {
            cmd.env_clear();
        }
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        cmd.env(MARKER_VAR, &mark);
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|source| PeerError::Spawn {
            command: spec.display(),
            source,
        })?;
        track(child.id(), true);
        tracing::debug!(command = %spec.display(), pid = ?child.id(), "peer started");
        let start = Instant::now();
        let log: SharedLog = Arc::new(Mutex::new(FrameLog::default()));
        let write_error = Arc::new(Mutex::new(None));
        let backlog = Arc::new(Backlog::default());
        let stdin = child.stdin.take().map(|s| {
            start_writer(
                Box::new(s),
                start,
                log.clone(),
                write_error.clone(),
                backlog.clone(),
            )
        });
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tx, rx) = mpsc::channel(256);
        let read_ahead = Arc::new(tokio::sync::Semaphore::new(READ_AHEAD));
        if let Some(out) = stdout {
            tokio::spawn(read_lines(
                out,
                spec.line_cap,
                Dir::S2c,
                start,
                log.clone(),
                (tx, read_ahead.clone()),
                None,
            ));
        }
        let stderr_total = Arc::new(AtomicU64::new(0));
        let stderr_task = stderr
            .map(|err| tokio::spawn(drain_stderr(err, start, log.clone(), stderr_total.clone())));
        Ok(Peer {
            start,
            log,
            stdin,
            write_error,
            backlog,
            answers_dropped: 0,
            lines: rx,
            read_ahead,
            stdout_eof: false,
            pid: child.id(),
            child: Some(child),
            marker: Some(mark),
            command: spec.display(),
            stderr_total,
            stderr_task,
            settling: None,
        })
    }

    /// An in-memory peer over any reader (its stdout) and writer (its stdin).
    pub fn from_io<R, W>(reader: R, writer: W, line_cap: usize) -> Peer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Peer::from_io_marked(reader, writer, line_cap, None)
    }

    fn from_io_marked<R, W>(
        reader: R,
        writer: W,
        line_cap: usize,
        marker: Option<&'static [u8]>,
    ) -> Peer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let start = Instant::now();
        let log: SharedLog = Arc::new(Mutex::new(FrameLog::default()));
        let (tx, rx) = mpsc::channel(256);
        let read_ahead = Arc::new(tokio::sync::Semaphore::new(READ_AHEAD));
        tokio::spawn(read_lines(
            reader,
            line_cap,
            Dir::S2c,
            start,
            log.clone(),
            (tx, read_ahead.clone()),
            marker,
        ));
        let write_error = Arc::new(Mutex::new(None));
        let backlog = Arc::new(Backlog::default());
        let stdin = Some(start_writer(
            Box::new(writer),
            start,
            log.clone(),
            write_error.clone(),
            backlog.clone(),
        ));
        Peer {
            start,
            log,
            stdin,
            write_error,
            backlog,
            answers_dropped: 0,
            lines: rx,
            read_ahead,
            stdout_eof: false,
            child: None,
            pid: None,
            marker: None,
            command: "(in-memory)".into(),
            stderr_total: Arc::new(AtomicU64::new(0)),
            stderr_task: None,
            settling: None,
        }
    }

    /// An in-memory peer in front of a bridge to another transport (the Streamable HTTP
    /// bridge, `http_bridge`): like [`Peer::from_io`], and the bridge writes
    /// [`SETTLED_MARKER`] as a line of its own once everything one input line produced has
    /// been written (the answer to that line's POST, or nothing for a line it skipped). The
    /// marker never reaches the frame log or the caller. While stdin is open and every line
    /// written has settled, nothing more can arrive, so [`Peer::recv`] returns
    /// [`Recv::Timeout`] at once instead of waiting out its deadline.
    pub fn bridged<R, W>(reader: R, writer: W, line_cap: usize) -> Peer
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut peer = Peer::from_io_marked(reader, writer, line_cap, Some(SETTLED_MARKER));
        peer.settling = Some(Settling::default());
        peer
    }

    /// The same peer, shown as `command` in evidence and errors (in-memory peers).
    pub fn named(mut self, command: impl Into<String>) -> Peer {
        self.command = command.into();
        self
    }

    /// The command line this peer runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The process id, for process peers.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Time since the peer started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Queues raw bytes for the peer's stdin exactly as given (no newline is added), and
    /// records them as one `c2s` frame per line, at the time they were queued. Never waits for
    /// the peer to read: the writer task writes the queue in order ([`Peer::flushed`] waits
    /// for it).
    ///
    /// Errors: stdin was closed ([`PeerError::StdinClosed`]), or an earlier queued write
    /// failed ([`PeerError::Write`]: the peer closed its stdin or exited).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), PeerError> {
        self.enqueue(bytes)
    }

    /// Queues an answer to a request the peer sent, as one compact JSON line, unless
    /// [`ANSWER_QUEUE_CAP`] bytes are already waiting to be written (a peer flooding requests
    /// without reading its stdin): then the answer is dropped, the first drop is noted in the
    /// frame log, and `Ok(false)` is returned. Never waits.
    ///
    /// Errors: as [`Peer::send_raw`].
    pub fn send_answer(&mut self, value: &serde_json::Value) -> Result<bool, PeerError> {
        let mut bytes = serde_json::to_vec(value).unwrap_or_default();
        bytes.push(b'\n');
        if self.backlog.bytes.load(Ordering::Relaxed) + bytes.len() > ANSWER_QUEUE_CAP {
            self.answers_dropped += 1;
            if self.answers_dropped == 1 {
                self.note(format!(
                    "parity dropped its answer to a request of the peer: {} bytes were already waiting to be written to the peer's stdin (cap {ANSWER_QUEUE_CAP}); the peer is not reading",
                    self.backlog.bytes.load(Ordering::Relaxed)
                ));
            }
            return Ok(false);
        }
        self.enqueue(&bytes).map(|()| true)
    }

    /// How many answers [`Peer::send_answer`] dropped because the write queue was full.
    pub fn answers_dropped(&self) -> u64 {
        self.answers_dropped
    }

    /// Whether a queued write failed (the peer closed its stdin or exited).
    pub fn write_failed(&self) -> bool {
        lock_err(&self.write_error).is_some()
    }

    /// Bytes queued for the peer's stdin and not yet written.
    pub fn write_backlog(&self) -> usize {
        self.backlog.bytes.load(Ordering::Relaxed)
    }

    /// Waits until everything queued so far has been written (true), or `timeout` passes, or
    /// a write failed (false).
    pub async fn flushed(&self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.backlog.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if lock_err(&self.write_error).is_some() {
                return false;
            }
            if self.backlog.bytes.load(Ordering::Relaxed) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    fn enqueue(&mut self, bytes: &[u8]) -> Result<(), PeerError> {
        if let Some((kind, text)) = lock_err(&self.write_error).clone() {
            return Err(PeerError::Write(std::io::Error::new(kind, text)));
        }
        let Some(writer) = &self.stdin else {
            return Err(PeerError::StdinClosed);
        };
        let t = self.start.elapsed();
        {
            let mut log = lock(&self.log);
            let mut rest = bytes;
            while !rest.is_empty() {
                let (line, next, terminated) = match rest.iter().position(|b| *b == b'\n') {
                    Some(i) => (&rest[..i], &rest[i + 1..], true),
                    None => (rest, &rest[rest.len()..], false),
                };
                log.push(WireEvent {
                    dir: Dir::C2s,
                    t,
                    frame: Frame::Line(Line {
                        bytes: line[..line.len().min(crate::transport::wire::OVER_CAP_PREFIX * 16)]
                            .to_vec(),
                        len: line.len() as u64,
                        over_cap: false,
                        sha256: None,
                        terminated,
                        elided: false,
                    }),
                });
                rest = next;
            }
        }
        self.backlog.bytes.fetch_add(bytes.len(), Ordering::Relaxed);
        if writer.tx.send(WriteCmd::Bytes(bytes.to_vec(), t)).is_err() {
            self.backlog.bytes.fetch_sub(bytes.len(), Ordering::Relaxed);
            return Err(PeerError::Write(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the peer's stdin writer has ended",
            )));
        }
        if let Some(s) = &mut self.settling {
            s.written += bytes.iter().filter(|b| **b == b'\n').count() as u64;
        }
        Ok(())
    }

    /// Writes one JSON value as a compact line plus `\n`.
    pub async fn send_json(&mut self, value: &serde_json::Value) -> Result<(), PeerError> {
        let mut bytes = serde_json::to_vec(value).unwrap_or_default();
        bytes.push(b'\n');
        self.send_raw(&bytes).await
    }

    /// Waits for the next stdout line until `deadline`.
    ///
    /// A bridged peer ([`Peer::bridged`]) whose every line written has settled returns
    /// [`Recv::Timeout`] at once while its stdin is open: nothing more can come.
    pub async fn recv(&mut self, deadline: Instant) -> Recv {
        loop {
            if self.stdout_eof {
                return Recv::Eof;
            }
            if let Some(s) = self.settling {
                if self.stdin.is_some() && s.settled >= s.written {
                    return Recv::Timeout;
                }
            }
            match tokio::time::timeout_at(deadline.into(), self.lines.recv()).await {
                Ok(Some(Some(line))) => {
                    self.read_ahead.add_permits(read_ahead_cost(&line));
                    if let Some(s) = &mut self.settling {
                        if line.terminated && line.bytes == SETTLED_MARKER {
                            s.settled += 1;
                            continue;
                        }
                    }
                    return Recv::Line(line);
                }
                Ok(Some(None)) | Ok(None) => {
                    self.stdout_eof = true;
                    return Recv::Eof;
                }
                Err(_) => return Recv::Timeout,
            }
        }
    }

    /// Closes the peer's stdin (EOF for the peer) once the write queue has drained, waiting
    /// for that at most [`CLOSE_DRAIN`]; what a peer that does not read leaves in the queue is
    /// dropped (and noted in the frame log) and the pipe closed anyway.
    pub async fn close_stdin(&mut self) {
        let Some(mut w) = self.stdin.take() else {
            return;
        };
        let _ = w.tx.send(WriteCmd::Close);
        drop(w.tx);
        if tokio::time::timeout(CLOSE_DRAIN, &mut w.task)
            .await
            .is_err()
        {
            w.task.abort();
            let _ = w.task.await;
            let left = self.backlog.bytes.swap(0, Ordering::Relaxed);
            self.note(format!(
                "{left} bytes queued for the peer's stdin were never written: it did not read them within {} ms; stdin was closed anyway",
                CLOSE_DRAIN.as_millis()
            ));
        }
        if self.answers_dropped > 1 {
            self.note(format!(
                "parity dropped {} answers to requests of the peer in all (its write queue was full)",
                self.answers_dropped
            ));
        }
    }

    /// A shared handle on the frame log, so frames can be salvaged from a case that was
    /// abandoned at its deadline.
    pub fn log_handle(&self) -> LogHandle {
        LogHandle(self.log.clone())
    }

    /// A copy of the frames the log kept so far, in order, each run of dropped frames shown
    /// as one [`Frame::Gap`] ([`crate::transport::framelog`]).
    pub fn events(&self) -> Vec<WireEvent> {
        lock(&self.log).events_from(0)
    }

    /// How many frames were logged so far, kept or not: a mark for [`Peer::events_from`].
    pub fn event_count(&self) -> usize {
        lock(&self.log).len()
    }

    /// The kept frames logged at mark `from` or later (all of them for 0), gaps included.
    pub fn events_from(&self, from: usize) -> Vec<WireEvent> {
        lock(&self.log).events_from(from)
    }

    /// Gives the frame log a new budget (a replay keeps the whole recording: [`Budget::at_least`]).
    /// The frames kept so far are logged again under it, so marks taken before
    /// ([`Peer::event_count`]) no longer apply: call it before the session starts.
    pub fn set_log_budget(&self, budget: Budget) {
        let mut log = lock(&self.log);
        let mut fresh = FrameLog::new(budget);
        for ev in log.events_from(0) {
            fresh.push(ev);
        }
        *log = fresh;
    }

    /// Frames the log dropped so far and their bytes (0 and 0 while it kept everything).
    pub fn log_dropped(&self) -> (u64, u64) {
        lock(&self.log).dropped()
    }

    /// Whether the session can still be used: stdin open, stdout not at its end, and the
    /// process (if any) still running.
    pub fn is_open(&mut self) -> bool {
        self.stdin.is_some()
            && lock_err(&self.write_error).is_none()
            && !self.stdout_eof
            && self.try_exited().is_none()
    }

    /// Whether this peer is a bridge to another transport ([`Peer::bridged`]).
    pub fn is_bridged(&self) -> bool {
        self.settling.is_some()
    }

    /// The text of the last [`Dir::Note`] in the frame log (for a bridged peer over HTTP: what
    /// the last answer was at the HTTP level), if any.
    pub fn last_note(&self) -> Option<String> {
        lock(&self.log)
            .iter_rev()
            .find(|e| e.dir == Dir::Note)
            .and_then(|e| e.line())
            .map(|l| String::from_utf8_lossy(&l.bytes).into_owned())
    }

    /// When the harness last wrote to the peer (the time of the last [`Dir::C2s`] frame, since
    /// the peer started), if it ever did.
    pub fn last_write_at(&self) -> Option<std::time::Duration> {
        lock(&self.log)
            .iter_rev()
            .find(|e| e.dir == Dir::C2s)
            .map(|e| e.t)
    }

    /// The texts of the [`Dir::Note`] frames logged at or after `t` (time since the peer
    /// started), oldest first.
    pub fn notes_since(&self, t: std::time::Duration) -> Vec<String> {
        let log = lock(&self.log);
        let mut notes: Vec<String> = log
            .iter_rev()
            .filter(|e| e.dir == Dir::Note && e.t >= t)
            .filter_map(|e| e.line())
            .map(|l| String::from_utf8_lossy(&l.bytes).into_owned())
            .collect();
        notes.reverse();
        notes
    }

    /// Adds `text` to the frame log as a [`Dir::Note`] (a remark beside the frames, shown in
    /// evidence; never protocol, so no monitor judges it).
    pub fn note(&self, text: impl Into<String>) {
        let bytes = text.into().into_bytes();
        lock(&self.log).push(WireEvent {
            dir: Dir::Note,
            t: self.start.elapsed(),
            frame: Frame::Line(Line {
                len: bytes.len() as u64,
                bytes,
                over_cap: false,
                sha256: None,
                terminated: true,
                elided: false,
            }),
        });
    }

    /// Total stderr bytes the peer wrote (including those not kept).
    pub fn stderr_bytes(&self) -> u64 {
        self.stderr_total.load(Ordering::Relaxed)
    }

    /// Whether the process has exited (always false for in-memory peers).
    pub fn try_exited(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(st)) => Some(st.to_string()),
            _ => None,
        }
    }

    /// Runs the stdio shutdown sequence (close stdin, wait, SIGTERM, wait, SIGKILL), then kills
    /// and reaps every descendant still alive. Safe to call on an already exited peer.
    pub async fn shutdown(&mut self, grace: ShutdownGrace) -> ShutdownReport {
        let t0 = Instant::now();
        let ms = |t0: Instant| t0.elapsed().as_millis() as u64;
        let mut report = ShutdownReport::default();
        let descendants_before = self.marked_processes();
        self.close_stdin().await;
        report.steps.push(ShutdownStep {
            step: "stdin-closed",
            at_ms: ms(t0),
        });
        let Some(mut child) = self.child.take() else {
            return report;
        };
        let pgid = self.pid.map(|p| p as i32);
        // Lines the peer still writes are taken meanwhile (they are in the frame log already),
        // so a peer blocked on a full stdout can still see EOF and exit.
        let (lines, permits) = (&mut self.lines, &self.read_ahead);
        let mut status = wait_draining(&mut child, lines, permits, grace.after_eof).await;
        if let Some(Ok(_)) = &status {
            report.exited_on_eof = true;
            report.eof_exit_ms = Some(ms(t0));
        } else {
            if let Some(pg) = pgid {
                signal_group(pg, libc::SIGTERM);
            }
            report.steps.push(ShutdownStep {
                step: "sigterm",
                at_ms: ms(t0),
            });
            status = wait_draining(&mut child, lines, permits, grace.after_term).await;
            if !matches!(status, Some(Ok(_))) {
                if let Some(pg) = pgid {
                    signal_group(pg, libc::SIGKILL);
                }
                let _ = child.start_kill();
                report.steps.push(ShutdownStep {
                    step: "sigkill",
                    at_ms: ms(t0),
                });
                status = wait_draining(&mut child, lines, permits, Duration::from_secs(5)).await;
            }
        }
        if let Some(Ok(st)) = status {
            report.status = Some(st.to_string());
            report.steps.push(ShutdownStep {
                step: "exited",
                at_ms: ms(t0),
            });
            lock(&self.log).push(WireEvent {
                dir: Dir::Exit,
                t: self.start.elapsed(),
                frame: Frame::Exit(st.to_string()),
            });
        }
        // Whatever is left of the tree: the group, anything carrying the marker, and whatever
        // was a descendant before we began.
        if let Some(pg) = pgid {
            signal_group(pg, libc::SIGKILL);
        }
        track(self.pid, false);
        let mut left: HashSet<i32> = self.marked_processes().into_iter().collect();
        left.extend(descendants_before.iter().copied().filter(|p| alive(*p)));
        if !left.is_empty() {
            report.stray_descendants = left.len();
            for pid in &left {
                kill_pid(*pid, libc::SIGKILL);
            }
            report.steps.push(ShutdownStep {
                step: "descendants-killed",
                at_ms: ms(t0),
            });
            reap(&left).await;
        }
        // The process is gone: its last stderr lines (why it failed, often) belong in the log.
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(STDERR_DRAIN, task).await;
        }
        report
    }

    /// PIDs of live processes carrying this peer's marker (the peer and its descendants).
    fn marked_processes(&self) -> Vec<i32> {
        let Some(mark) = &self.marker else {
            return Vec::new();
        };
        let own = self.pid.filter(|_| self.child.is_some()).map(|p| p as i32);
        processes_with_marker(|m| m == mark.as_bytes())
            .into_iter()
            .filter(|pid| Some(*pid) != own)
            .collect()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // Last resort for a peer whose case was abandoned: kill its group and marked
        // descendants. `kill_on_drop` handles the direct child; [`reap_orphans`] reaps the
        // rest at the end of a run.
        if self.child.is_some() {
            track(self.pid, false);
            if let Some(pg) = self.pid {
                signal_group(pg as i32, libc::SIGKILL);
            }
            for pid in self.marked_processes() {
                kill_pid(pid, libc::SIGKILL);
            }
        }
    }
}

fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, FrameLog> {
    match log.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn lock_err(
    e: &Mutex<Option<(std::io::ErrorKind, String)>>,
) -> std::sync::MutexGuard<'_, Option<(std::io::ErrorKind, String)>> {
    match e.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Starts the writer task of a peer's stdin and returns its queue.
fn start_writer(
    stdin: Box<dyn AsyncWrite + Unpin + Send>,
    start: Instant,
    log: SharedLog,
    error: Arc<Mutex<Option<(std::io::ErrorKind, String)>>>,
    backlog: Arc<Backlog>,
) -> Writer {
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(write_queue(stdin, rx, start, log, error, backlog));
    Writer { tx, task }
}

/// The writer task: writes each queued entry in order and flushes it. The first error is
/// kept (the next [`Peer::send_raw`] returns it) and ends the task, dropping the rest of the
/// queue. A write that waited [`SLOW_WRITE`] or more for the peer to read adds a note (at most
/// one per [`SLOW_WRITE`]).
async fn write_queue(
    mut stdin: Box<dyn AsyncWrite + Unpin + Send>,
    mut rx: mpsc::UnboundedReceiver<WriteCmd>,
    start: Instant,
    log: SharedLog,
    error: Arc<Mutex<Option<(std::io::ErrorKind, String)>>>,
    backlog: Arc<Backlog>,
) {
    let mut last_note: Option<Duration> = None;
    while let Some(cmd) = rx.recv().await {
        match cmd {
            WriteCmd::Bytes(bytes, queued_at) => {
                let res = async {
                    stdin.write_all(&bytes).await?;
                    stdin.flush().await
                }
                .await;
                backlog.bytes.fetch_sub(bytes.len(), Ordering::Relaxed);
                if let Err(e) = res {
                    *lock_err(&error) = Some((e.kind(), e.to_string()));
                    // What is still queued will never be written.
                    rx.close();
                    while let Ok(WriteCmd::Bytes(b, _)) = rx.try_recv() {
                        backlog.bytes.fetch_sub(b.len(), Ordering::Relaxed);
                    }
                    backlog.drained.notify_waiters();
                    return;
                }
                let now = start.elapsed();
                let waited = now.saturating_sub(queued_at);
                if waited >= SLOW_WRITE && last_note.is_none_or(|t| now - t >= SLOW_WRITE) {
                    last_note = Some(now);
                    let text = format!(
                        "parity's write queued at {} ms was written at {} ms: the peer did not read its stdin meanwhile",
                        queued_at.as_millis(),
                        now.as_millis()
                    )
                    .into_bytes();
                    lock(&log).push(WireEvent {
                        dir: Dir::Note,
                        t: now,
                        frame: Frame::Line(Line {
                            len: text.len() as u64,
                            bytes: text,
                            over_cap: false,
                            sha256: None,
                            terminated: true,
                            elided: false,
                        }),
                    });
                }
                if backlog.bytes.load(Ordering::Relaxed) == 0 {
                    backlog.drained.notify_waiters();
                }
            }
            WriteCmd::Close => {
                let _ = stdin.shutdown().await;
                return;
            }
        }
    }
}

/// Waits up to `dur` for the child to exit while taking (and dropping) the lines its reader
/// hands over, so the reader keeps draining stdout. `None` when `dur` passed first.
async fn wait_draining(
    child: &mut tokio::process::Child,
    lines: &mut mpsc::Receiver<Option<Line>>,
    permits: &tokio::sync::Semaphore,
    dur: Duration,
) -> Option<std::io::Result<std::process::ExitStatus>> {
    let deadline = tokio::time::Instant::now() + dur;
    let mut open = true;
    loop {
        tokio::select! {
            st = child.wait() => return Some(st),
            l = lines.recv(), if open => match l {
                Some(Some(line)) => permits.add_permits(read_ahead_cost(&line)),
                _ => open = false,
            },
            () = tokio::time::sleep_until(deadline) => return None,
        }
    }
}

/// The [`READ_AHEAD`] permits one line takes while it waits for [`Peer::recv`].
fn read_ahead_cost(line: &Line) -> usize {
    line.bytes.len().clamp(1, READ_AHEAD)
}

/// Hands a line to the session once its [`READ_AHEAD`] permits are free. False when the
/// session is gone.
async fn hand_over(
    (tx, permits): &(mpsc::Sender<Option<Line>>, Arc<tokio::sync::Semaphore>),
    line: Line,
) -> bool {
    let Ok(n) = u32::try_from(read_ahead_cost(&line)) else {
        return false;
    };
    tokio::select! {
        p = permits.acquire_many(n) => match p {
            Ok(p) => p.forget(),
            Err(_) => return false,
        },
        // The session is gone: nobody will give the permits back.
        () = tx.closed() => return false,
    }
    tx.send(Some(line)).await.is_ok()
}

async fn read_lines<R: AsyncRead + Unpin>(
    reader: R,
    cap: usize,
    dir: Dir,
    start: Instant,
    log: SharedLog,
    out: (mpsc::Sender<Option<Line>>, Arc<tokio::sync::Semaphore>),
    marker: Option<&'static [u8]>,
) {
    let mut r = LineReader::new(BufReader::with_capacity(64 * 1024, reader), cap);
    loop {
        match r.next_line().await {
            Ok(Some(line)) if marker.is_some_and(|m| line.terminated && line.bytes == m) => {
                if !hand_over(&out, line).await {
                    continue;
                }
            }
            Ok(Some(line)) if marker.is_some() && line.bytes.starts_with(NOTE_MARKER) => {
                let text = line.bytes[NOTE_MARKER.len()..].to_vec();
                lock(&log).push(WireEvent {
                    dir: Dir::Note,
                    t: start.elapsed(),
                    frame: Frame::Line(Line {
                        len: text.len() as u64,
                        bytes: text,
                        over_cap: false,
                        sha256: None,
                        terminated: true,
                        elided: false,
                    }),
                });
            }
            Ok(Some(line)) => {
                // The log keeps what its budget allows ([`crate::transport::framelog`]).
                lock(&log).push_line(dir, start.elapsed(), &line);
                if !hand_over(&out, line).await {
                    // Nobody listens any more; keep draining so the peer never blocks.
                    continue;
                }
            }
            Ok(None) | Err(_) => {
                let _ = out.0.send(None).await;
                return;
            }
        }
    }
}

async fn drain_stderr<R: AsyncRead + Unpin>(
    reader: R,
    start: Instant,
    log: SharedLog,
    total: Arc<AtomicU64>,
) {
    let mut r = LineReader::new(BufReader::with_capacity(64 * 1024, reader), 64 * 1024);
    let mut kept = 0usize;
    while let Ok(Some(line)) = r.next_line().await {
        total.fetch_add(line.len + 1, Ordering::Relaxed);
        if kept < STDERR_KEEP {
            kept += line.bytes.len();
            lock(&log).push(WireEvent {
                dir: Dir::Stderr,
                t: start.elapsed(),
                frame: Frame::Line(line),
            });
        }
    }
}

/// Marks the harness as a child subreaper so orphaned descendants of peers are re-parented to
/// it (Linux `prctl(PR_SET_CHILD_SUBREAPER)`); idempotent. A no-op where unsupported.
#[allow(unsafe_code)]
pub fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integer arguments and touches no
        // memory of ours.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    });
}

#[allow(unsafe_code)]
fn signal_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

#[allow(unsafe_code)]
fn kill_pid(pid: i32, sig: i32) {
    if pid > 1 && pid as u32 != std::process::id() {
        // SAFETY: kill(2) on one pid; no memory is touched.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            // The state is the first field after the parenthesised command name.
            let state = s
                .rsplit_once(')')
                .and_then(|(_, r)| r.trim().chars().next());
            !matches!(state, Some('Z') | Some('X') | None)
        }
        Err(_) => false,
    }
}

/// Reaps the given pids if they are our children (re-parented to the subreaper), waiting up to
/// two seconds in total.
#[allow(unsafe_code)]
async fn reap(pids: &HashSet<i32>) {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut pending: Vec<i32> = pids.iter().copied().collect();
    while !pending.is_empty() && Instant::now() < deadline {
        pending.retain(|pid| {
            let mut status = 0;
            // SAFETY: waitpid on a specific pid with WNOHANG writes only into `status`, a local.
            let r = unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) };
            // r == 0: still running; r == pid: reaped; r < 0: not our child (ECHILD) or gone.
            r == 0 || (r < 0 && alive(*pid))
        });
        if !pending.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A child started for a transparent proxy (`parity record`): stdin, stdout and stderr piped,
/// its own process group (so a terminal's Ctrl-C reaches it once, forwarded by the proxy), the
/// proxy's environment and working directory. Not tracked by [`kill_all_peers`]: the proxy
/// forwards signals itself ([`signal_pid`]) and exits with the child's status.
///
/// Errors: the program cannot be started.
pub fn spawn_proxied(program: &str, args: &[String]) -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
}

/// Sends signal `sig` to one process (a proxied child). Does nothing for pids 0 and 1 or the
/// harness itself.
pub fn signal_pid(pid: u32, sig: i32) {
    if let Ok(p) = i32::try_from(pid) {
        kill_pid(p, sig);
    }
}

/// Starts `parity watchdog <our pid>` ([`crate::transport::watchdog`]) in its own process group, stdout
/// and stderr to `/dev/null`, and returns the write end of its stdin (close-on-exec, so no peer
/// inherits it): when this process ends, however it ends, the watchdog reads end-of-file.
///
/// Errors: this executable cannot be found or started.
pub fn spawn_watchdog() -> std::io::Result<std::process::ChildStdin> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    let mut child = std::process::Command::new(exe)
        .args(["watchdog", &std::process::id().to_string()])
        .env_remove(MARKER_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the watchdog's stdin was not piped"))
}

/// SIGKILLs every live process whose peer marker starts with `prefix` (`<parity pid>-`), and
/// its process group; returns how many it found.
pub fn kill_marked(prefix: &str) -> usize {
    let pids = processes_with_marker(|m| m.starts_with(prefix.as_bytes()));
    for &pid in &pids {
        if let Some(pg) = group_of(pid) {
            signal_group(pg, libc::SIGKILL);
        }
        kill_pid(pid, libc::SIGKILL);
    }
    pids.len()
}

/// The process group of `pid`, from `/proc/<pid>/stat` (the fifth field).
fn group_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// Why a hook command gave no output: it ran past its deadline, or it could not start or
/// ended badly. The message does not repeat the command line (the caller names the hook).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookError {
    /// It ran past the deadline and was killed with its process group: "ran past N ms".
    Timeout(String),
    /// It could not start, or exited non-zero: the exit status and the last stderr line.
    Failed(String),
}

impl std::fmt::Display for HookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookError::Timeout(m) | HookError::Failed(m) => f.write_str(m),
        }
    }
}

/// Runs a hook command (a facade's mint or revoke command, `docs/facade.md`) to completion
/// with stdin closed and returns its stdout, at most 64 KiB, trimmed of surrounding
/// whitespace. The child runs in its own process group and is killed (with its group) when
/// `timeout` passes.
///
/// Errors: [`HookError::Timeout`] when it runs past `timeout`; [`HookError::Failed`] when the
/// program cannot start or exits non-zero (the exit status and the last stderr line).
pub async fn run_hook(spec: &PeerSpec, timeout: Duration) -> Result<String, HookError> {
    use tokio::io::AsyncReadExt;
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| HookError::Failed(format!("cannot start `{}`: {e}", spec.program)))?;
    let pid = child.id();
    let (Some(mut out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(HookError::Failed("the hook has no pipes".into()));
    };
    let work = async {
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let mut out = (&mut out).take(64 * 1024);
        let mut err = (&mut err).take(64 * 1024);
        let (_, _, status) = tokio::join!(
            out.read_to_end(&mut stdout),
            err.read_to_end(&mut stderr),
            child.wait()
        );
        (stdout, stderr, status)
    };
    match tokio::time::timeout(timeout, work).await {
        Ok((stdout, _, Ok(status))) if status.success() => {
            Ok(String::from_utf8_lossy(&stdout).trim().to_owned())
        }
        Ok((_, stderr, status)) => {
            let last = String::from_utf8_lossy(&stderr)
                .lines()
                .last()
                .unwrap_or_default()
                .to_owned();
            let status = match status {
                Ok(s) => s.to_string(),
                Err(e) => e.to_string(),
            };
            Err(HookError::Failed(if last.is_empty() {
                format!("failed ({status}) with nothing on stderr")
            } else {
                format!("failed ({status}): {last}")
            }))
        }
        Err(_) => {
            if let Some(p) = pid.and_then(|p| i32::try_from(p).ok()) {
                signal_group(p, libc::SIGKILL);
            }
            Err(HookError::Timeout(format!(
                "ran past {} ms and was killed",
                timeout.as_millis()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_command_lines() {
        let w = split_words(r#"node "dist/my server.js" --x 'a b' c\ d"#).unwrap_or_default();
        assert_eq!(w, vec!["node", "dist/my server.js", "--x", "a b", "c d"]);
        assert!(split_words("a 'b").is_err());
        assert!(PeerSpec::from_command_line("   ").is_err());
    }

    /// A bridged peer waits while a line is unsettled and ends a wait at once (no virtual time
    /// passes) once every line written has settled. (Deadlines are std instants, so only one
    /// wait may advance the paused clock: the unsettled one.)
    #[tokio::test(start_paused = true)]
    async fn bridged_peer_ends_waits_once_every_line_settled() -> std::io::Result<()> {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let (harness_w, bridge_r) = tokio::io::duplex(4096);
        let (mut bridge_w, harness_r) = tokio::io::duplex(4096);
        let mut peer = Peer::bridged(harness_r, harness_w, 1 << 16);
        let far = Duration::from_secs(3600);

        // Nothing written yet: nothing can come.
        let t0 = tokio::time::Instant::now();
        assert_eq!(peer.recv(Instant::now() + far).await, Recv::Timeout);
        assert_eq!(t0.elapsed(), Duration::ZERO);

        // A line written and not yet settled: the wait runs to its deadline.
        peer.send_raw(b"{\"id\":1}\n")
            .await
            .map_err(std::io::Error::other)?;
        let t1 = tokio::time::Instant::now();
        assert_eq!(peer.recv(Instant::now() + far).await, Recv::Timeout);
        assert!(t1.elapsed() > Duration::ZERO, "it waited for its deadline");
        let far = far * 4;

        // The bridge answers, then settles the line: the answer arrives, the marker does not.
        let mut input = tokio::io::BufReader::new(bridge_r);
        let mut line = String::new();
        input.read_line(&mut line).await?;
        assert_eq!(line, "{\"id\":1}\n");
        bridge_w.write_all(b"{\"id\":1,\"result\":{}}\n").await?;
        bridge_w.write_all(SETTLED_MARKER).await?;
        bridge_w.write_all(b"\n").await?;
        match peer.recv(Instant::now() + far).await {
            Recv::Line(l) => assert_eq!(l.bytes, b"{\"id\":1,\"result\":{}}"),
            other => panic!("expected the answer, got {other:?}"),
        }
        let t2 = tokio::time::Instant::now();
        assert_eq!(peer.recv(Instant::now() + far).await, Recv::Timeout);
        assert_eq!(t2.elapsed(), Duration::ZERO);
        assert!(
            peer.events().iter().all(|e| match &e.frame {
                Frame::Line(l) => l.bytes != SETTLED_MARKER,
                _ => true,
            }),
            "the marker never reaches the frame log"
        );
        Ok(())
    }
}
