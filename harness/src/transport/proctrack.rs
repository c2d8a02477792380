//! Process tracking for the hygiene probe (`parity hygiene`, `docs/hygiene.md`): start a host
//! and follow its whole descendant tree for the entire run, reading every process's argv and
//! environment at every `exec`.
//!
//! **With ptrace** (the default): a dedicated tracer thread starts the host through
//! `parity hygiene-exec -- CMD…`, a stub that stops itself (SIGSTOP) before it executes `CMD`.
//! The tracer attaches with `PTRACE_SEIZE` (options TRACEFORK, TRACEVFORK, TRACECLONE,
//! TRACEEXEC and EXITKILL), resumes the stub, and from then on every fork, vfork, clone and exec
//! of the tree stops at an event. At each exec stop the new image's `/proc/<pid>/environ` and
//! `/proc/<pid>/cmdline` are read — the environment is read there and only there, since between
//! fork and exec a child still shows its parent's environment. Each new process's argv is also
//! recorded as it first appears (at the fork event). Signals are forwarded: a
//! signal-delivery stop is resumed with its signal re-injected (real-time signals included), a
//! group-stop is kept with `PTRACE_LISTEN` (so `SIGSTOP`/`SIGCONT` behave as without a tracer),
//! anything else is resumed as it was. Every ptrace call and every `waitpid` on a tracee is
//! made from the tracer thread.
//!
//! **Without ptrace** (refused with `EPERM`, e.g. `kernel.yama.ptrace_scope` = 3 or a container
//! without the permission, or asked for with `--no-ptrace`): the harness is a child subreaper
//! (orphans are re-parented to it) and polls `/proc` at a declared interval (default 5 ms). A
//! process belongs to the tree when its parent does, when it is in the host's process group, or
//! when it was re-parented to the harness and carries the run's marker variable. A child whose
//! executable and argument/environment addresses still equal its parent's has not executed
//! yet and is read again at the next poll. A process that lives shorter than the interval can be
//! missed; one seen but gone before it could be read is counted as missed.
//!
//! Reviewed `unsafe` (the second module with any, after `peer`): three libc calls that nix does
//! not offer in a form that keeps real-time signals — `waitpid` into a local status word,
//! `ptrace(PTRACE_CONT)` with a raw signal number and `ptrace(PTRACE_LISTEN)`.
//!
//! Size (1160 lines): the ptrace tracer and its `/proc` fallback are one state machine over the
//! traced tree.

use nix::sys::ptrace;
use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Default interval of the `/proc` polling fallback.
pub const DEFAULT_POLL: Duration = Duration::from_millis(5);

/// The hidden subcommand of the `parity` binary that stops itself, then executes its arguments.
pub const STUB_COMMAND: &str = "hygiene-exec";

/// How long ending an observation waits for the tracer or poller thread to finish, sweeping
/// the tree with SIGKILL meanwhile, before it leaves the thread to end on its own.
const END_GRACE: Duration = Duration::from_secs(5);

/// How the tree was followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// ptrace: every fork, clone and exec event.
    Ptrace,
    /// Subreaper plus `/proc` polling at `interval`; `reason` says why ptrace was not used.
    Poll {
        /// The polling interval.
        interval: Duration,
        /// Why (ptrace refused with its error, or `--no-ptrace`).
        reason: String,
    },
}

impl Method {
    /// One line for the report: `ptrace (fork, clone and exec events)` or
    /// `/proc polling every 5 ms with a child subreaper (…reason…); processes shorter than the interval can be missed`.
    pub fn describe(&self) -> String {
        match self {
            Method::Ptrace => "ptrace (fork, vfork, clone and exec events of the whole tree)".into(),
            Method::Poll { interval, reason } => format!(
                "/proc polling every {} ms with a child subreaper ({reason}); processes shorter than the interval can be missed",
                interval.as_millis()
            ),
        }
    }
}

/// One program image a process ran: what `/proc` showed right after the exec.
#[derive(Debug, Clone)]
pub struct Image {
    /// Milliseconds since the host started.
    pub at_ms: u64,
    /// The argv words, or why they could not be read.
    pub argv: Result<Vec<Vec<u8>>, String>,
    /// The environment entries (`NAME=value`) the [`Spec::keep_env`] filter kept (all of
    /// them without a filter), or why the environment could not be read. Only these are kept,
    /// so a tree of many large environments costs memory in proportion to what matters.
    pub env: Result<Vec<Vec<u8>>, String>,
    /// How many entries the environment had, kept or not (0 when it could not be read).
    pub env_vars: usize,
}

/// One process of the tree.
#[derive(Debug, Clone)]
pub struct Proc {
    /// Process id.
    pub pid: i32,
    /// Parent process id when it appeared.
    pub ppid: i32,
    /// This is the host itself.
    pub host: bool,
    /// A thread of another process (followed, never judged on its own).
    pub thread: bool,
    /// Milliseconds since the host started, when it appeared.
    pub first_ms: u64,
    /// argv as it first appeared (a forked child shows its parent's until it executes).
    pub first_argv: Option<Vec<Vec<u8>>>,
    /// Every image it executed, in order.
    pub images: Vec<Image>,
    /// Milliseconds since the host started, when it ended (or was last seen).
    pub exit_ms: Option<u64>,
    /// How it ended (`exit status: 0`, `signal: 9`), when known.
    pub exit: Option<String>,
    /// Polling only: it was seen but ended before it could be read.
    pub missed: bool,
    /// Its start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`), 0 when it
    /// could not be read: with the pid it names this process and no later one that reuses
    /// the pid, so a signal never reaches a stranger.
    pub start_ticks: u64,
}

impl Proc {
    /// The process's argv\[0\] as text (lossy; the last image's, else the first seen).
    pub fn argv0(&self) -> String {
        let last = self
            .images
            .iter()
            .rev()
            .find_map(|i| i.argv.as_ref().ok().and_then(|a| a.first().cloned()));
        let word = last.or_else(|| self.first_argv.as_ref().and_then(|a| a.first().cloned()));
        word.map(|w| String::from_utf8_lossy(&w).into_owned())
            .unwrap_or_else(|| "?".into())
    }

    /// Whether it is still running.
    pub fn alive(&self) -> bool {
        self.exit_ms.is_none()
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The `parity` binary that serves [`STUB_COMMAND`].
    pub stub: PathBuf,
    /// The host program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment (nothing else is inherited).
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Try ptrace first (false: poll from the start).
    pub ptrace: bool,
    /// Polling interval of the fallback.
    pub poll: Duration,
    /// The marker variable's `NAME=value`, so polling can claim re-parented orphans.
    pub marker: String,
    /// Which environment entries to keep at each image read (the rest are only counted);
    /// `None` keeps every entry.
    pub keep_env: Option<EnvFilter>,
}

/// A predicate over one environment entry (`NAME=value` bytes): `true` keeps it in
/// [`Image::env`]. Called on the tracer thread at every exec read.
#[derive(Clone)]
pub struct EnvFilter(pub Arc<EnvPredicate>);

/// The predicate an [`EnvFilter`] holds.
pub type EnvPredicate = dyn Fn(&[u8]) -> bool + Send + Sync;

impl std::fmt::Debug for EnvFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EnvFilter(..)")
    }
}

#[derive(Debug)]
struct State {
    method: Method,
    procs: Vec<Proc>,
    live: HashMap<i32, usize>,
    host_exit: Option<String>,
    last_change: Instant,
    done: bool,
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
    stop: AtomicBool,
    start: Instant,
    keep_env: Option<EnvFilter>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
    fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }
}

/// A running host under observation. Dropping it kills whatever is left of the tree.
pub struct Tracker {
    /// The host's pid (also its process group).
    pub host_pid: i32,
    /// The host's stdin, until closed.
    pub stdin: Option<ChildStdin>,
    /// The host's stdout, for a reader thread.
    pub stdout: Option<ChildStdout>,
    /// The host's stderr, for a reader thread.
    pub stderr: Option<ChildStderr>,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type Pipes = (ChildStdin, ChildStdout, ChildStderr);

impl Tracker {
    /// Starts the host through the stub and begins following it (ptrace, or the polling
    /// fallback when ptrace is refused or not wanted).
    ///
    /// Errors: the stub cannot start, or ends before it stops itself (the message says how).
    pub fn start(spec: Spec) -> Result<Tracker, String> {
        crate::transport::peer::become_subreaper();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                method: Method::Ptrace,
                procs: Vec::new(),
                live: HashMap::new(),
                host_exit: None,
                last_change: Instant::now(),
                done: false,
            }),
            cond: Condvar::new(),
            stop: AtomicBool::new(false),
            start: Instant::now(),
            keep_env: spec.keep_env.clone(),
        });
        let (tx, rx) = std::sync::mpsc::channel::<Result<(i32, Pipes), String>>();
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("parity-tracer".into())
            .spawn(move || tracer_main(spec, sh, tx))
            .map_err(|e| format!("failed to start the tracer thread: {e}"))?;
        match rx.recv() {
            Ok(Ok((pid, (stdin, stdout, stderr)))) => Ok(Tracker {
                host_pid: pid,
                stdin: Some(stdin),
                stdout: Some(stdout),
                stderr: Some(stderr),
                shared,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => {
                let _ = thread.join();
                Err("the tracer thread ended before the host started".into())
            }
        }
    }

    /// How the tree is followed.
    pub fn method(&self) -> Method {
        self.shared.lock().method.clone()
    }

    /// Milliseconds since the host started.
    pub fn now_ms(&self) -> u64 {
        self.shared.ms()
    }

    /// Every process seen so far (the host first), in order of appearance.
    pub fn procs(&self) -> Vec<Proc> {
        self.shared.lock().procs.clone()
    }

    /// How the host ended, once it has.
    pub fn host_exit(&self) -> Option<String> {
        self.shared.lock().host_exit.clone()
    }

    /// Waits until the tree has been quiet (no process appeared, executed or ended) for
    /// `quiet`, the host has ended, or `max` has passed.
    pub fn wait_quiet(&self, quiet: Duration, max: Duration) {
        let until = Instant::now() + max;
        let mut st = self.shared.lock();
        loop {
            let now = Instant::now();
            if st.host_exit.is_some() || now >= until {
                return;
            }
            let since = now.saturating_duration_since(st.last_change);
            if since >= quiet {
                return;
            }
            let wait = (quiet - since).min(until - now);
            st = match self.shared.cond.wait_timeout(st, wait) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Waits up to `timeout` for the host to end; returns how it ended.
    pub fn wait_host(&self, timeout: Duration) -> Option<String> {
        let st = self.wait_while(timeout, timeout, |st| st.host_exit.is_none());
        st.host_exit.clone()
    }

    /// Live descendants (threads excluded), waiting up to `grace` for them to end first.
    pub fn descendants_after(&self, grace: Duration) -> Vec<Proc> {
        let left = |st: &State| -> Vec<Proc> {
            st.procs
                .iter()
                .filter(|p| !p.host && !p.thread && p.alive())
                .cloned()
                .collect()
        };
        let st = self.wait_while(grace, Duration::from_millis(20), |st| !left(st).is_empty());
        left(&st)
    }

    /// Holds the state lock while `pending` says so and `timeout` has not passed, waking on
    /// every change of the tree and at least every `step`; returns the lock.
    fn wait_while(
        &self,
        timeout: Duration,
        step: Duration,
        mut pending: impl FnMut(&State) -> bool,
    ) -> MutexGuard<'_, State> {
        let until = Instant::now() + timeout;
        let mut st = self.shared.lock();
        loop {
            let now = Instant::now();
            if !pending(&st) || now >= until {
                return st;
            }
            st = match self.shared.cond.wait_timeout(st, (until - now).min(step)) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Sends `sig` to the host's process group.
    pub fn signal_host_group(&self, sig: Signal) {
        let _ = signal::killpg(Pid::from_raw(self.host_pid), sig);
    }

    /// Kills (SIGKILL) the host's group and every live process of the tree.
    ///
    /// A pid is signalled only while `/proc` shows the very process the tree recorded (same
    /// start time), and the host's group only while the host has not been reaped or a live
    /// member of the tree is still in it: once a pid or group id is free, the kernel may hand
    /// it to an unrelated process, which must never be signalled.
    pub fn kill_all(&self) {
        let st = self.shared.lock();
        let host_reaped = st.host_exit.is_some();
        let live: Vec<(i32, u64)> = st
            .procs
            .iter()
            .filter(|p| p.alive() && !p.thread && p.pid > 1)
            .map(|p| (p.pid, p.start_ticks))
            .collect();
        drop(st);
        // A start time of 0 (unknown) never matches: such a pid is not signalled (the host's
        // group still is, while the host is not reaped).
        let same = |pid: i32, start: u64| {
            start != 0 && stat_of(pid).is_some_and(|s| s.state != 'Z' && s.start == start)
        };
        let group_in_use = live.iter().any(|(pid, start)| {
            same(*pid, *start) && stat_of(*pid).is_some_and(|s| s.pgrp == self.host_pid)
        });
        if !host_reaped || group_in_use {
            self.signal_host_group(Signal::SIGKILL);
        }
        for (pid, start) in live {
            if same(pid, start) {
                let _ = signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    }

    /// Ends the observation: kills what is left, stops the tracer or poller, and returns every
    /// process seen.
    pub fn finish(mut self) -> Vec<Proc> {
        self.end();
        self.procs()
    }

    fn end(&mut self) {
        self.stdin.take();
        self.shared.stop.store(true, Ordering::SeqCst);
        self.kill_all();
        if let Some(t) = self.thread.take() {
            // The tracer ends once no tracee is left (each was killed above, and it kills any
            // that stops from now on); the poller at its next round. A process forked between
            // the snapshot and the kill is caught by the next sweep; after `END_GRACE` the
            // thread is left to finish on its own rather than hang the probe.
            let until = Instant::now() + END_GRACE;
            while !t.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
                self.kill_all();
            }
            if t.is_finished() {
                let _ = t.join();
                // Only now: while the thread runs, its waits need the statuses.
                self.reap_orphans();
            }
        }
    }

    /// Reaps every process of the tree that was re-parented to this process (the subreaper)
    /// and has ended but not been waited for, so none stays a zombie while parity runs on.
    fn reap_orphans(&self) {
        let me = std::process::id() as i32;
        let pids: Vec<(i32, u64)> = self
            .shared
            .lock()
            .procs
            .iter()
            .filter(|p| !p.thread && !p.host)
            .map(|p| (p.pid, p.start_ticks))
            .collect();
        for (pid, start) in pids {
            reap_if_orphan_zombie(pid, start, me);
        }
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.end();
        }
    }
}

// -------------------------------------------------------------------------------------------
// The tracer thread
// -------------------------------------------------------------------------------------------

fn tracer_main(
    spec: Spec,
    shared: Arc<Shared>,
    tx: std::sync::mpsc::Sender<Result<(i32, Pipes), String>>,
) {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(&spec.stub);
    cmd.arg(STUB_COMMAND)
        .arg("--")
        .arg(&spec.program)
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = tx.send(Err(format!(
                "failed to start `{}`: {e}",
                spec.stub.display()
            )));
            return;
        }
    };
    let pid = child.id() as i32;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = tx.send(Err("the host has no pipes".into()));
        return;
    };
    // The child is reaped by this thread's waits below, never through `child`.
    drop(child);
    // The stub stops itself before it executes the host program.
    loop {
        match wait_raw(pid, libc::WUNTRACED | libc::__WALL) {
            Ok((_, st)) if libc::WIFSTOPPED(st) => break,
            Ok((_, st)) => {
                let _ = tx.send(Err(format!(
                    "the host ended before it started ({})",
                    describe_status(st)
                )));
                return;
            }
            Err(e) if e == libc::EINTR => continue,
            Err(e) => {
                let _ = tx.send(Err(format!(
                    "failed to wait for the host: {}",
                    std::io::Error::from_raw_os_error(e)
                )));
                return;
            }
        }
    }
    let first_argv = read_nul_list(pid, "cmdline").ok();
    let method = if spec.ptrace {
        let options = ptrace::Options::PTRACE_O_TRACEFORK
            | ptrace::Options::PTRACE_O_TRACEVFORK
            | ptrace::Options::PTRACE_O_TRACECLONE
            | ptrace::Options::PTRACE_O_TRACEEXEC
            | ptrace::Options::PTRACE_O_EXITKILL;
        match ptrace::seize(Pid::from_raw(pid), options) {
            Ok(()) => Method::Ptrace,
            Err(e) => Method::Poll {
                interval: spec.poll,
                reason: format!("ptrace refused: {e}"),
            },
        }
    } else {
        Method::Poll {
            interval: spec.poll,
            reason: "ptrace not used (--no-ptrace or `ptrace = false`)".into(),
        }
    };
    {
        let mut st = shared.lock();
        st.method = method.clone();
        let idx = st.procs.len();
        st.procs.push(Proc {
            pid,
            ppid: std::process::id() as i32,
            host: true,
            thread: false,
            first_ms: 0,
            first_argv,
            images: Vec::new(),
            exit_ms: None,
            exit: None,
            missed: false,
            start_ticks: stat_of(pid).map(|s| s.start).unwrap_or(0),
        });
        st.live.insert(pid, idx);
        st.last_change = Instant::now();
    }
    let stub_signature = signature(pid);
    let _ = signal::kill(Pid::from_raw(pid), Signal::SIGCONT);
    let _ = tx.send(Ok((pid, (stdin, stdout, stderr))));
    match method {
        Method::Ptrace => trace_loop(pid, &shared),
        Method::Poll { interval, .. } => {
            poll_loop(pid, stub_signature, interval, &spec.marker, &shared)
        }
    }
    let mut st = shared.lock();
    st.done = true;
    let now = shared.ms();
    for p in st.procs.iter_mut().filter(|p| p.exit_ms.is_none()) {
        p.exit_ms = Some(now);
    }
    drop(st);
    shared.cond.notify_all();
}

const EVENT_FORK: i32 = 1;
const EVENT_VFORK: i32 = 2;
const EVENT_CLONE: i32 = 3;
const EVENT_EXEC: i32 = 4;
const EVENT_STOP: i32 = 128;

fn trace_loop(host: i32, shared: &Arc<Shared>) {
    let me = std::process::id() as i32;
    // Tracees that ended while their parent had not waited for them yet: when that parent
    // ends first, they are re-parented to parity (the subreaper) as zombies, to be reaped.
    let mut zombies: Vec<(i32, u64)> = Vec::new();
    loop {
        let (pid, status) = match wait_raw(-1, libc::__WALL | libc::__WNOTHREAD) {
            Ok(x) => x,
            Err(e) if e == libc::EINTR => continue,
            // ECHILD: no tracee is left.
            Err(_) => return,
        };
        let mut st = shared.lock();
        let now = shared.ms();
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            let how = describe_status(status);
            let mut start = 0;
            if let Some(idx) = st.live.remove(&pid) {
                st.procs[idx].exit_ms = Some(now);
                st.procs[idx].exit = Some(how.clone());
                start = st.procs[idx].start_ticks;
            }
            if pid == host {
                st.host_exit = Some(how);
            }
            st.last_change = Instant::now();
            drop(st);
            shared.cond.notify_all();
            if pid != host && start != 0 {
                zombies.push((pid, start));
            }
            // Reap the ones now parity's; forget those gone (their parent reaped them).
            zombies.retain(|&(z, start)| match stat_of(z) {
                Some(s) if s.start == start && s.state == 'Z' => {
                    if s.ppid == me {
                        let _ = try_reap(z);
                        false
                    } else {
                        true
                    }
                }
                _ => false,
            });
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        if shared.stop.load(Ordering::SeqCst) {
            // Ending: any tracee that stops (a process forked after the last sweep among
            // them) is killed, so the loop runs out of tracees and the thread ends.
            let _ = signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            cont_raw(pid, 0);
            continue;
        }
        let sig = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xff;
        if !st.live.contains_key(&pid) {
            // A new tracee whose own first stop came before its parent's fork event.
            let ppid = stat_of(pid).map(|s| s.ppid).unwrap_or(0);
            add_proc(&mut st, pid, ppid, now);
        }
        match event {
            EVENT_FORK | EVENT_VFORK | EVENT_CLONE => {
                if let Ok(new) = ptrace::getevent(Pid::from_raw(pid)) {
                    let new = new as i32;
                    if !st.live.contains_key(&new) {
                        add_proc(&mut st, new, pid, now);
                    }
                    if let Some(idx) = st.live.get(&new).copied() {
                        st.procs[idx].ppid = pid;
                        if event == EVENT_CLONE && is_thread(new) {
                            st.procs[idx].thread = true;
                        }
                    }
                }
                cont_raw(pid, 0);
            }
            EVENT_EXEC => {
                // A non-leader thread that executes takes the leader's pid; its old id ends.
                if let Ok(former) = ptrace::getevent(Pid::from_raw(pid)) {
                    let former = former as i32;
                    if former != pid {
                        if let Some(idx) = st.live.remove(&former) {
                            st.procs[idx].exit_ms = Some(now);
                            st.procs[idx].exit = Some("replaced by exec".into());
                        }
                    }
                }
                let image = read_image(pid, now, shared.keep_env.as_ref());
                if let Some(idx) = st.live.get(&pid).copied() {
                    st.procs[idx].images.push(image);
                    st.procs[idx].thread = false;
                }
                cont_raw(pid, 0);
            }
            EVENT_STOP => {
                if matches!(
                    sig,
                    libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
                ) {
                    // A group-stop: keep it stopped until SIGCONT, as without a tracer.
                    listen_raw(pid);
                } else {
                    cont_raw(pid, 0);
                }
            }
            0 => {
                // A signal-delivery stop: deliver the signal.
                cont_raw(pid, sig);
            }
            _ => cont_raw(pid, 0),
        }
        st.last_change = Instant::now();
        drop(st);
        shared.cond.notify_all();
    }
}

fn add_proc(st: &mut State, pid: i32, ppid: i32, now: u64) {
    let idx = st.procs.len();
    st.procs.push(Proc {
        pid,
        ppid,
        host: false,
        thread: false,
        first_ms: now,
        first_argv: read_nul_list(pid, "cmdline").ok(),
        images: Vec::new(),
        exit_ms: None,
        exit: None,
        missed: false,
        start_ticks: stat_of(pid).map(|s| s.start).unwrap_or(0),
    });
    st.live.insert(pid, idx);
}

/// Reads a fresh image of `pid`: its argv, and of its environment only the entries `keep`
/// keeps (with the count of all of them).
fn read_image(pid: i32, now: u64, keep: Option<&EnvFilter>) -> Image {
    let mut env_vars = 0;
    let env = read_nul_list(pid, "environ").map(|entries| {
        env_vars = entries.len();
        match keep {
            Some(EnvFilter(f)) => entries.into_iter().filter(|e| f(e)).collect(),
            None => entries,
        }
    });
    Image {
        at_ms: now,
        argv: read_nul_list(pid, "cmdline"),
        env,
        env_vars,
    }
}

/// Reaps `pid` when it is a zombie child of `me` with the recorded start time (0, unknown:
/// never, since the pid might be someone else's by now).
fn reap_if_orphan_zombie(pid: i32, start: u64, me: i32) {
    let ours = start != 0
        && stat_of(pid).is_some_and(|s| s.ppid == me && s.state == 'Z' && s.start == start);
    if ours {
        let _ = try_reap(pid);
    }
}

/// `/proc/<pid>/<file>` split at NUL bytes (empty trailing entry dropped).
fn read_nul_list(pid: i32, file: &str) -> Result<Vec<Vec<u8>>, String> {
    let bytes = std::fs::read(format!("/proc/{pid}/{file}"))
        .map_err(|e| format!("/proc/{pid}/{file}: {e}"))?;
    Ok(bytes
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

fn is_thread(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Tgid:").map(|v| v.trim().to_owned()))
        })
        .and_then(|v| v.parse::<i32>().ok())
        .is_some_and(|tgid| tgid != pid)
}

/// The fields of `/proc/<pid>/stat` the poller uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    ppid: i32,
    pgrp: i32,
    state: char,
    start: u64,
    arg_start: u64,
    env_start: u64,
}

fn stat_of(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = text.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Field n of proc(5) is f[n - 3].
    let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    Some(Stat {
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: num(22)?,
        arg_start: num(48).unwrap_or(0),
        env_start: num(50).unwrap_or(0),
    })
}

/// What identifies a program image from outside: the executable and where its argument and
/// environment blocks sit. A forked child keeps its parent's until it executes.
type Signature = Option<(String, u64, u64)>;

fn signature(pid: i32) -> Signature {
    let s = stat_of(pid)?;
    // An exiting process has released its memory: nothing left to read.
    if s.state == 'Z' || s.state == 'X' || (s.arg_start == 0 && s.env_start == 0) {
        return None;
    }
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some((exe, s.arg_start, s.env_start))
}

// -------------------------------------------------------------------------------------------
// The polling fallback
// -------------------------------------------------------------------------------------------

struct Polled {
    start: u64,
    sig: Signature,
    /// The image was read for this signature.
    read_sig: Signature,
}

fn poll_loop(host: i32, stub_sig: Signature, interval: Duration, marker: &str, shared: &Shared) {
    let me = std::process::id() as i32;
    let mut tracked: HashMap<i32, Polled> = HashMap::new();
    tracked.insert(
        host,
        Polled {
            start: stat_of(host).map(|s| s.start).unwrap_or(0),
            sig: stub_sig.clone(),
            read_sig: stub_sig,
        },
    );
    let mut ignored: HashSet<i32> = HashSet::new();
    loop {
        poll_once(host, me, marker, &mut tracked, &mut ignored, shared);
        // The host is this thread's child; orphans re-parented to the harness are reaped too.
        reap_polled(host, me, &tracked, shared);
        let stop = shared.stop.load(Ordering::SeqCst);
        let st = shared.lock();
        let any_alive = st.procs.iter().any(|p| p.alive());
        drop(st);
        if stop && !any_alive {
            return;
        }
        if stop {
            // Asked to stop with processes still listed: one more round sees them gone.
            std::thread::sleep(Duration::from_millis(5));
            let st = shared.lock();
            let pids: Vec<i32> = st
                .procs
                .iter()
                .filter(|p| p.alive())
                .map(|p| p.pid)
                .collect();
            drop(st);
            if pids
                .iter()
                .all(|p| stat_of(*p).is_none_or(|s| s.state == 'Z'))
            {
                poll_once(host, me, marker, &mut tracked, &mut ignored, shared);
                reap_polled(host, me, &tracked, shared);
                let mut st = shared.lock();
                let now = shared.ms();
                for p in st.procs.iter_mut().filter(|p| p.alive()) {
                    p.exit_ms = Some(now);
                }
                return;
            }
            continue;
        }
        std::thread::sleep(interval);
    }
}

fn reap_polled(host: i32, me: i32, tracked: &HashMap<i32, Polled>, shared: &Shared) {
    for (&pid, _) in tracked.iter() {
        let ours = pid == host || stat_of(pid).is_some_and(|s| s.ppid == me && s.state == 'Z');
        if !ours {
            continue;
        }
        if let Some(status) = try_reap(pid) {
            let mut st = shared.lock();
            let now = shared.ms();
            let how = describe_status(status);
            if let Some(idx) = st.live.remove(&pid) {
                st.procs[idx].exit_ms = Some(now);
                st.procs[idx].exit = Some(how.clone());
            }
            if pid == host {
                st.host_exit = Some(how);
            }
            st.last_change = Instant::now();
            drop(st);
            shared.cond.notify_all();
        }
    }
}

fn poll_once(
    host: i32,
    me: i32,
    marker: &str,
    tracked: &mut HashMap<i32, Polled>,
    ignored: &mut HashSet<i32>,
    shared: &Shared,
) {
    let listed: Vec<i32> = match std::fs::read_dir("/proc") {
        Ok(d) => d
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
            .collect(),
        Err(_) => return,
    };
    let listed_set: HashSet<i32> = listed.iter().copied().collect();
    let mut changed = false;
    let mut st = shared.lock();
    let now = shared.ms();
    // Ended: gone from /proc, a zombie, or a new process under the same pid.
    let mut ended = Vec::new();
    for (&pid, t) in tracked.iter() {
        if !st.live.contains_key(&pid) {
            continue;
        }
        let s = if listed_set.contains(&pid) {
            stat_of(pid)
        } else {
            None
        };
        match s {
            Some(s) if s.state != 'Z' && s.start == t.start => {}
            _ => ended.push(pid),
        }
    }
    for pid in ended {
        if let Some(idx) = st.live.remove(&pid) {
            let p = &mut st.procs[idx];
            p.exit_ms = Some(now);
            let t = &tracked[&pid];
            if p.images.is_empty() && !p.host && t.sig != parent_sig(tracked, p.ppid) {
                p.missed = true;
            }
            changed = true;
        }
    }
    // New processes, to a fixpoint (a child listed before its parent is claimed next round).
    let mut fresh: Vec<(i32, Stat)> = listed
        .iter()
        .filter(|p| !tracked.contains_key(p) && !ignored.contains(p))
        .filter_map(|p| stat_of(*p).map(|s| (*p, s)))
        .collect();
    loop {
        let mut claimed = false;
        fresh.retain(|(pid, s)| {
            let parent_live = st.live.contains_key(&s.ppid);
            let orphan_ours = s.ppid == me
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == marker.as_bytes()));
            if parent_live || s.pgrp == host || orphan_ours {
                let idx = st.procs.len();
                st.procs.push(Proc {
                    pid: *pid,
                    ppid: s.ppid,
                    host: false,
                    thread: false,
                    first_ms: now,
                    first_argv: read_nul_list(*pid, "cmdline").ok(),
                    images: Vec::new(),
                    exit_ms: None,
                    exit: None,
                    missed: false,
                    start_ticks: s.start,
                });
                st.live.insert(*pid, idx);
                tracked.insert(
                    *pid,
                    Polled {
                        start: s.start,
                        sig: None,
                        read_sig: None,
                    },
                );
                claimed = true;
                changed = true;
                false
            } else {
                true
            }
        });
        if !claimed {
            break;
        }
    }
    for (pid, s) in fresh {
        if s.state != 'Z' {
            ignored.insert(pid);
        }
    }
    // Read every live tracked process whose image changed since it was last read.
    let live: Vec<(i32, usize)> = st.live.iter().map(|(p, i)| (*p, *i)).collect();
    for (pid, idx) in live {
        let sig = signature(pid);
        let ppid = st.procs[idx].ppid;
        let host_proc = st.procs[idx].host;
        let Some(t) = tracked.get(&pid) else { continue };
        let parent = parent_sig(tracked, ppid);
        let unexec = if host_proc {
            // The host still runs the stub until it executes its program.
            sig == t.read_sig && st.procs[idx].images.is_empty()
        } else {
            sig.is_some() && sig == parent && st.procs[idx].images.is_empty()
        };
        let already = sig.is_some() && sig == t.read_sig && !st.procs[idx].images.is_empty();
        // A host that made itself non-dumpable shows no addresses to another user, so its
        // signature is unknown: its program runs once its argv is no longer the stub's
        // (argv stays world-readable).
        let hidden_host_exec = host_proc
            && sig.is_none()
            && st.procs[idx].images.is_empty()
            && stat_of(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X')
            && read_nul_list(pid, "cmdline").ok().is_some_and(|argv| {
                !argv.is_empty() && Some(&argv) != st.procs[idx].first_argv.as_ref()
            });
        if (sig.is_none() && !hidden_host_exec) || unexec || already {
            if let Some(t) = tracked.get_mut(&pid) {
                t.sig = sig;
            }
            continue;
        }
        let image = read_image(pid, now, shared.keep_env.as_ref());
        // A zombie's files read empty, and a process that ended meanwhile cannot be read: only
        // a live image counts (an ended one is judged as missed next round).
        let gone = |r: &Result<Vec<Vec<u8>>, String>| {
            r.as_ref()
                .err()
                .is_some_and(|e| e.contains("No such process") || e.contains("No such file"))
        };
        let live_now = stat_of(pid).is_some_and(|s| s.state != 'Z' && s.state != 'X');
        if live_now && !gone(&image.env) && !gone(&image.argv) {
            st.procs[idx].images.push(image);
            changed = true;
            if let Some(t) = tracked.get_mut(&pid) {
                t.sig = sig.clone();
                t.read_sig = sig;
            }
        }
    }
    if changed {
        st.last_change = Instant::now();
    }
    drop(st);
    if changed {
        shared.cond.notify_all();
    }
}

fn parent_sig(tracked: &HashMap<i32, Polled>, ppid: i32) -> Signature {
    tracked.get(&ppid).and_then(|t| t.sig.clone())
}

// -------------------------------------------------------------------------------------------
// The stub and the reviewed libc calls
// -------------------------------------------------------------------------------------------

/// The stub's body (`parity hygiene-exec -- CMD ARGS…`): stops itself with SIGSTOP so the
/// tracer can attach before anything of the host runs, then replaces itself with `CMD`.
/// Returns only on failure: 127 with one stderr line when `CMD` cannot be executed, 2 when no
/// command was given.
pub fn stub_exec(command: &[String]) -> i32 {
    use std::os::unix::process::CommandExt;
    let Some((program, args)) = command.split_first() else {
        eprintln!("parity {STUB_COMMAND}: no command given");
        return 2;
    };
    let _ = signal::raise(Signal::SIGSTOP);
    let err = std::process::Command::new(program).args(args).exec();
    eprintln!("parity {STUB_COMMAND}: cannot run `{program}`: {err}");
    127
}

/// `waitpid(pid, &status, flags)`; returns the pid and raw status, or the errno.
#[allow(unsafe_code)]
fn wait_raw(pid: i32, flags: i32) -> Result<(i32, i32), i32> {
    let mut status: libc::c_int = 0;
    // SAFETY: waitpid writes only into `status`, a local that outlives the call.
    let r = unsafe { libc::waitpid(pid, &mut status, flags) };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok((r, status))
    }
}

/// Reaps `pid` if it has ended; returns its raw status.
fn try_reap(pid: i32) -> Option<i32> {
    match wait_raw(pid, libc::WNOHANG | libc::__WALL) {
        Ok((r, st)) if r == pid => Some(st),
        _ => None,
    }
}

/// `ptrace(PTRACE_CONT, pid, 0, sig)` with a raw signal number (nix's `Signal` has no
/// real-time signals). Errors (the tracee is gone) are ignored.
#[allow(unsafe_code)]
fn cont_raw(pid: i32, sig: i32) {
    // SAFETY: PTRACE_CONT takes integers only (the signal travels in the data argument as an
    // integer); no memory of ours is read or written.
    unsafe {
        libc::ptrace(
            libc::PTRACE_CONT,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            sig as libc::c_long as *mut libc::c_void,
        );
    }
}

/// `ptrace(PTRACE_LISTEN, pid, 0, 0)`: leave a seized tracee in its group-stop until SIGCONT.
#[allow(unsafe_code)]
fn listen_raw(pid: i32) {
    // SAFETY: PTRACE_LISTEN takes no pointers (both are null); no memory of ours is touched.
    unsafe {
        libc::ptrace(
            libc::PTRACE_LISTEN,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            std::ptr::null_mut::<libc::c_void>(),
        );
    }
}

/// A raw wait status as text: `exit status: N` or `signal: N (NAME)`.
fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit status: {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        let n = libc::WTERMSIG(status);
        match Signal::try_from(n) {
            Ok(s) => format!("signal: {n} ({})", s.as_str()),
            Err(_) => format!("signal: {n}"),
        }
    } else {
        format!("status {status:#x}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn describes_exit_statuses() {
        assert_eq!(describe_status(3 << 8), "exit status: 3");
        assert_eq!(describe_status(9), "signal: 9 (SIGKILL)");
    }

    #[test]
    fn reads_our_own_stat() {
        let s = stat_of(std::process::id() as i32).unwrap();
        assert!(matches!(s.state, 'R' | 'S'));
        assert!(s.start > 0);
    }
}
