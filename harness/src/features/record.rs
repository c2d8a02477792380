//! `parity record`: a transparent stdio proxy that writes a transcript (docs/transcripts.md).
//!
//! A client (an IDE, an agent host) starts `parity record --out FILE -- CMD…` in place of the
//! server. Bytes are forwarded unchanged in both directions by one OS thread per stream
//! (blocking read, write, flush: the latency of one copy); a copy of each chunk goes over a
//! bounded channel to a writer thread that splits lines, redacts secrets
//! ([`crate::protocol::transcript::Redactor`]), detects the protocol and writes the JSONL transcript,
//! flushing whenever its queue drains, so a proxy that is killed leaves a valid file.
//!
//! EOF on the proxy's stdin closes the child's stdin; SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1
//! and SIGUSR2 are forwarded to the child; the child's exit becomes an `exit` event and the
//! proxy's own exit status (the code, or 128 + the signal number).

use crate::protocol::transcript::{Direction, Event, Header, Redactor};
use crate::transport::wire::{DEFAULT_LINE_CAP, OVER_CAP_PREFIX};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::{Duration, Instant};

/// What `parity record` needs.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Where the transcript goes (created or truncated, mode 0600; its directory is created).
    pub out: PathBuf,
    /// The user's extra redaction patterns (regular expressions), in order.
    pub redact: Vec<String>,
    /// The server or agent command: program and arguments.
    pub command: Vec<String>,
}

/// How long the proxy waits for the child's stdout and stderr to reach EOF after the child
/// exited (a descendant may still hold the pipes open).
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);

/// Chunks queued for the writer before the copying threads wait (backpressure, never loss).
const QUEUE: usize = 4096;

enum Msg {
    Chunk(Direction, Duration, Vec<u8>),
    Eof(Direction, Duration),
    Exit(Duration, Option<i32>, String),
    /// Events have been held for [`HOLD_TIME`] without the protocol being detected.
    Tick,
}

/// Runs the proxy until the child exits; returns the exit code the proxy should exit with.
/// Errors are printed to stderr (never stdout, which belongs to the protocol): a bad
/// `--redact` pattern or an unwritable `--out` exits 2 before the child starts; a command that
/// cannot start exits 127 like a shell.
pub async fn run(opts: RecordOptions) -> i32 {
    let Some((program, args)) = opts.command.split_first() else {
        eprintln!("error: parity record needs a command after `--`");
        return crate::base::exit::EXIT_USAGE;
    };
    let env: Vec<(String, String)> = std::env::vars().collect();
    // The same rules for parity's own log lines (crate::engine::redact).
    if let Ok(r) = Redactor::new(&env, &opts.command, &opts.redact) {
        crate::engine::redact::install(r);
    }
    let redactor = match Redactor::new(&env, &opts.command, &opts.redact) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return crate::base::exit::EXIT_USAGE;
        }
    };
    let file = match open_out(&opts.out) {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "error: failed to create the transcript {}: {e}",
                opts.out.display()
            );
            return crate::base::exit::EXIT_USAGE;
        }
    };
    let start = Instant::now();
    let started_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let header = Header {
        parity: env!("CARGO_PKG_VERSION").to_string(),
        protocol: "unknown".into(),
        era: None,
        protocol_version: None,
        transport: "stdio".into(),
        command: redactor.command(&opts.command),
        started_unix_ms,
        redaction: redactor.describe(),
    };
    let (tx, rx) = sync_channel::<Msg>(QUEUE);
    let writer = std::thread::spawn(move || write_transcript(file, header, redactor, rx));
    // Signal handlers first: a signal that arrives while the child starts is forwarded too.
    let signals = listen_signals();
    let mut child = match crate::transport::peer::spawn_proxied(program, args) {
        Ok(c) => c,
        Err(e) => {
            let msg = format!("parity record: failed to start `{program}`: {e}");
            eprintln!("{msg}");
            let _ = tx.send(Msg::Chunk(
                Direction::Stderr,
                start.elapsed(),
                format!("{msg}\n").into_bytes(),
            ));
            let _ = tx.send(Msg::Exit(start.elapsed(), Some(127), msg));
            drop(tx);
            let _ = writer.join();
            return 127;
        }
    };
    let pid = child.id();
    let forward_signals = tokio::spawn(forward_signals(signals, pid));
    let mut pumps = Vec::new();
    if let Some(child_in) = child.stdin.take() {
        let tx = tx.clone();
        pumps.push((
            false,
            std::thread::spawn(move || {
                pump(std::io::stdin(), Some(child_in), Direction::C2s, start, &tx)
            }),
        ));
    }
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        pumps.push((
            true,
            std::thread::spawn(move || {
                pump(out, Some(std::io::stdout()), Direction::S2c, start, &tx)
            }),
        ));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        pumps.push((
            true,
            std::thread::spawn(move || {
                pump(err, Some(std::io::stderr()), Direction::Stderr, start, &tx)
            }),
        ));
    }
    let status = tokio::task::spawn_blocking(move || child.wait()).await;
    forward_signals.abort();
    let (code, text) = match status {
        Ok(Ok(s)) => exit_code(s),
        Ok(Err(e)) => (None, format!("failed to wait for the child: {e}")),
        Err(e) => (None, format!("failed to wait for the child: {e}")),
    };
    // The child is gone: let its stdout and stderr drain (bounded), then close the transcript.
    let deadline = Instant::now() + DRAIN_AFTER_EXIT;
    for (wait, h) in pumps {
        if !wait {
            continue; // the stdin pump may block on the client forever
        }
        while !h.is_finished() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let _ = tx.send(Msg::Exit(start.elapsed(), code, text));
    drop(tx);
    // The stdin pump still holds a sender while the client keeps stdin open; the writer stops
    // at the exit event instead of waiting for every sender.
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    code.unwrap_or(1)
}

/// The proxy's exit code for a child status: the code, or 128 + the signal; and its text.
fn exit_code(s: std::process::ExitStatus) -> (Option<i32>, String) {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => (Some(c), format!("exit status: {c}")),
        (None, Some(sig)) => (Some(128 + sig), format!("signal: {sig}")),
        (None, None) => (None, s.to_string()),
    }
}

fn open_out(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// The signals the proxy forwards, registered (so their default action no longer applies).
fn listen_signals() -> Vec<(tokio::signal::unix::Signal, i32)> {
    use tokio::signal::unix::{signal, SignalKind};
    [
        (SignalKind::interrupt(), libc::SIGINT),
        (SignalKind::terminate(), libc::SIGTERM),
        (SignalKind::hangup(), libc::SIGHUP),
        (SignalKind::quit(), libc::SIGQUIT),
        (SignalKind::user_defined1(), libc::SIGUSR1),
        (SignalKind::user_defined2(), libc::SIGUSR2),
    ]
    .into_iter()
    .filter_map(|(kind, num)| signal(kind).ok().map(|s| (s, num)))
    .collect()
}

/// Forwards every signal received to the child, until aborted. The per-signal tasks live in a
/// `JoinSet`, so aborting this task (once the child is reaped) aborts them all: no signal goes
/// to a pid that may have been reused.
async fn forward_signals(signals: Vec<(tokio::signal::unix::Signal, i32)>, pid: u32) {
    let mut tasks = tokio::task::JoinSet::new();
    for (mut s, num) in signals {
        tasks.spawn(async move {
            while s.recv().await.is_some() {
                crate::transport::peer::signal_pid(pid, num);
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}

/// Copies `from` to `to` chunk by chunk (each write flushed at once), sending a copy of every
/// chunk to the writer. A failing `to` (the reader went away) stops the forwarding, not the
/// recording. At EOF, `to` is dropped (closing the child's stdin for the c2s pump).
fn pump<R: Read, W: Write>(
    mut from: R,
    mut to: Option<W>,
    dir: Direction,
    start: Instant,
    tx: &SyncSender<Msg>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // Queue the copy before forwarding: the answer to a request is then never recorded
        // before the request itself (the other direction's thread only sees it afterwards).
        let recorded = tx
            .send(Msg::Chunk(dir, start.elapsed(), buf[..n].to_vec()))
            .is_ok();
        if let Some(w) = to.as_mut() {
            if w.write_all(&buf[..n]).and_then(|_| w.flush()).is_err() {
                to = None;
            }
        }
        if !recorded {
            // The writer has finished (the child exited): keep forwarding, without recording.
            match to.as_mut() {
                Some(w) => {
                    let mut w = FlushEach(w);
                    let _ = std::io::copy(&mut from, &mut w);
                }
                None => {
                    let _ = std::io::copy(&mut from, &mut std::io::sink());
                }
            }
            break;
        }
    }
    drop(to);
    let _ = tx.send(Msg::Eof(dir, start.elapsed()));
}

/// A writer that flushes after every write (a forwarded chunk must not wait in a buffer).
struct FlushEach<'a, W: Write>(&'a mut W);

impl<W: Write> Write for FlushEach<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.0.flush()?;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// For a line over the cap: its full length and the hex SHA-256 of it all.
type Over = Option<(u64, String)>;

/// Splits one direction's chunks into lines with the byte cap (DEFAULT_LINE_CAP): a longer
/// line keeps a prefix, its length and its SHA-256.
#[derive(Default)]
struct Lines {
    buf: Vec<u8>,
    len: u64,
    hash: Option<Sha256>,
}

impl Lines {
    fn push(&mut self, mut chunk: &[u8], mut out: impl FnMut(Vec<u8>, Over)) {
        while !chunk.is_empty() {
            let (part, rest, ended) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            self.len += part.len() as u64;
            if let Some(h) = self.hash.as_mut() {
                h.update(part);
            } else if self.buf.len() + part.len() > DEFAULT_LINE_CAP {
                let mut h = Sha256::new();
                h.update(&self.buf);
                h.update(part);
                self.hash = Some(h);
                let room = OVER_CAP_PREFIX.saturating_sub(self.buf.len());
                self.buf.extend_from_slice(&part[..room.min(part.len())]);
                self.buf.truncate(OVER_CAP_PREFIX);
            } else {
                self.buf.extend_from_slice(part);
            }
            if ended {
                self.emit(&mut out);
            }
            chunk = rest;
        }
    }

    fn emit(&mut self, out: &mut impl FnMut(Vec<u8>, Over)) {
        let over = self.hash.take().map(|h| {
            let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            (self.len, hex)
        });
        if over.is_some() {
            self.buf.truncate(OVER_CAP_PREFIX);
        }
        out(std::mem::take(&mut self.buf), over);
        self.len = 0;
    }

    /// At EOF: the unterminated rest, if any.
    fn finish(&mut self) -> Option<(Vec<u8>, Over)> {
        if self.len == 0 && self.buf.is_empty() {
            return None;
        }
        let mut got = None;
        self.emit(&mut |b, o| got = Some((b, o)));
        got
    }
}

/// Protocol detection from the first messages (header fields `protocol`, `era`,
/// `protocol_version`).
#[derive(Default)]
struct Detect {
    protocol: Option<&'static str>,
    era: Option<&'static str>,
    version: Option<Value>,
    init_id: Option<Value>,
    decided: bool,
}

impl Detect {
    fn see(&mut self, dir: Direction, bytes: &[u8]) {
        if self.decided || !matches!(dir, Direction::C2s | Direction::S2c) {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
            return;
        };
        let method = v.get("method").and_then(Value::as_str);
        let meta_version = v
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .cloned();
        match (dir, method) {
            (Direction::C2s, Some("initialize")) if self.protocol.is_none() => {
                let pv = v.pointer("/params/protocolVersion").cloned();
                if pv.as_ref().is_some_and(Value::is_number) {
                    self.protocol = Some("acp");
                } else {
                    self.protocol = Some("mcp");
                    self.era = Some("legacy");
                }
                self.version = pv;
                self.init_id = v.get("id").cloned();
            }
            (Direction::C2s, Some(m))
                if self.protocol.is_none()
                    && (m == "server/discover" || meta_version.is_some()) =>
            {
                self.protocol = Some("mcp");
                self.era = Some("modern");
                self.version = meta_version;
                self.decided = true;
            }
            (Direction::S2c, None)
                if self.init_id.is_some() && v.get("id") == self.init_id.as_ref() =>
            {
                if let Some(pv) = v.pointer("/result/protocolVersion") {
                    self.version = Some(pv.clone());
                }
                self.decided = true;
            }
            _ => {}
        }
    }
}

/// Events wait for the protocol to be detected (so the header can say it) for at most this
/// many events; then the header is written with what is known.
const HOLD_EVENTS: usize = 64;

/// … and for at most this long, so a proxy killed while a server hangs before answering
/// `initialize` still leaves a transcript with a header.
const HOLD_TIME: Duration = Duration::from_millis(500);

fn write_transcript(
    file: std::fs::File,
    mut header: Header,
    redactor: Redactor,
    rx: Receiver<Msg>,
) {
    let mut out = std::io::BufWriter::new(file);
    let mut lines: [Lines; 3] = Default::default();
    let mut detect = Detect::default();
    let mut held: Vec<Event> = Vec::new();
    let mut header_written = false;
    let mut seq = 0u64;
    let mut line_buf: Vec<u8> = Vec::with_capacity(4096);
    let mut write_ev = |ev: &Event, out: &mut std::io::BufWriter<std::fs::File>| {
        line_buf.clear();
        ev.write_json(&mut line_buf);
        line_buf.push(b'\n');
        let _ = out.write_all(&line_buf);
    };
    let slot = |d: Direction| match d {
        Direction::C2s => 0,
        Direction::S2c => 1,
        _ => 2,
    };
    let finish_header = |header: &mut Header, detect: &Detect| {
        if let Some(p) = detect.protocol {
            header.protocol = p.to_string();
        }
        header.era = detect.era.map(str::to_string);
        header.protocol_version = detect.version.clone();
    };
    // Events are written as they come and flushed whenever the queue is drained, so a proxy
    // that is killed loses at most what was still queued.
    let mut next = rx.recv().ok();
    while let Some(msg) = next.take() {
        let mut made: Vec<(Direction, Duration, Vec<u8>, Over, bool)> = Vec::new();
        let mut exit = None;
        let mut ticked = false;
        match msg {
            Msg::Tick => ticked = true,
            Msg::Chunk(dir, t, bytes) => {
                lines[slot(dir)].push(&bytes, |b, over| made.push((dir, t, b, over, false)));
            }
            Msg::Eof(dir, t) => {
                if let Some((b, over)) = lines[slot(dir)].finish() {
                    made.push((dir, t, b, over, true));
                }
            }
            Msg::Exit(t, code, status) => {
                for d in [Direction::C2s, Direction::S2c, Direction::Stderr] {
                    if let Some((b, over)) = lines[slot(d)].finish() {
                        made.push((d, t, b, over, true));
                    }
                }
                exit = Some((t, code, status));
            }
        }
        for (dir, t, bytes, over, partial) in made {
            if over.is_none() {
                detect.see(dir, &bytes);
            }
            seq += 1;
            let mut ev = Event::line(
                seq,
                t.as_millis() as u64,
                dir,
                redactor.apply(&bytes).into_owned(),
            );
            if let Some((len, sha)) = over {
                ev.len = Some(len);
                ev.sha256 = Some(sha);
            }
            ev.partial = partial;
            if header_written {
                write_ev(&ev, &mut out);
            } else {
                held.push(ev);
            }
        }
        if let Some((t, code, status)) = &exit {
            seq += 1;
            let mut ev = Event::line(seq, t.as_millis() as u64, Direction::Exit, Vec::new());
            ev.code = *code;
            ev.status = Some(redactor.apply_str(status));
            held.push(ev);
        }
        if !header_written
            && (detect.decided || held.len() >= HOLD_EVENTS || exit.is_some() || ticked)
        {
            finish_header(&mut header, &detect);
            let _ = writeln!(out, "{}", header.to_json());
            for ev in held.drain(..) {
                write_ev(&ev, &mut out);
            }
            let _ = out.flush();
            header_written = true;
        } else if header_written {
            for ev in held.drain(..) {
                write_ev(&ev, &mut out);
            }
        }
        if exit.is_some() {
            break;
        }
        next = match rx.try_recv() {
            Ok(m) => Some(m),
            Err(std::sync::mpsc::TryRecvError::Empty) if !header_written && !held.is_empty() => {
                match rx.recv_timeout(HOLD_TIME) {
                    Ok(m) => Some(m),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Some(Msg::Tick),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
                }
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                let _ = out.flush();
                rx.recv().ok()
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
        };
    }
    if !header_written {
        finish_header(&mut header, &detect);
        let _ = writeln!(out, "{}", header.to_json());
        for ev in held.drain(..) {
            write_ev(&ev, &mut out);
        }
    }
    let _ = out.flush();
    let _ = out.get_ref().sync_all();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn lines_split_across_chunks_and_cap() {
        let mut l = Lines::default();
        let mut got = Vec::new();
        l.push(b"ab", |b, o| got.push((b, o)));
        l.push(b"c\nd\n\ne", |b, o| got.push((b, o)));
        assert_eq!(
            got.iter().map(|(b, _)| b.clone()).collect::<Vec<_>>(),
            vec![b"abc".to_vec(), b"d".to_vec(), b"".to_vec()]
        );
        assert_eq!(l.finish().map(|(b, _)| b), Some(b"e".to_vec()));
        assert!(l.finish().is_none());
        let big = vec![b'x'; DEFAULT_LINE_CAP + 10];
        let mut got = Vec::new();
        l.push(&big, |b, o| got.push((b, o)));
        l.push(b"\n", |b, o| got.push((b, o)));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0.len(), OVER_CAP_PREFIX);
        assert_eq!(got[0].1.as_ref().map(|o| o.0), Some(big.len() as u64));
    }

    #[test]
    fn detects_mcp_legacy_acp_and_modern() {
        let mut d = Detect::default();
        d.see(Direction::C2s, br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#);
        assert!(!d.decided);
        d.see(
            Direction::S2c,
            br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#,
        );
        assert!(d.decided);
        assert_eq!((d.protocol, d.era), (Some("mcp"), Some("legacy")));
        assert_eq!(d.version, Some(Value::from("2025-11-25")));
        let mut d = Detect::default();
        d.see(
            Direction::C2s,
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        );
        assert_eq!(d.protocol, Some("acp"));
        let mut d = Detect::default();
        d.see(Direction::C2s, br#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
        assert_eq!((d.era, d.decided), (Some("modern"), true));
        assert_eq!(d.version, Some(Value::from("2026-07-28")));
    }
}
