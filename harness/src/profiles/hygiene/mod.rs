//! The hygiene probe and the `hygiene` profile of `parity run` (seed rules 38–57, fault classes
//! B19 and B20; `docs/hygiene.md`); `parity hygiene [--target FILE] [-- CMD…]` is
//! `crate::cli::hygiene`, and the `[hygiene]` declarations are [`crate::engine::decl`].
//!
//! It proves from outside that a host which launches children keeps a bearer token out of
//! their environments, argv, its own output and loose files, hands them a private file instead,
//! rotates that file in place and removes everything when it stops:
//!
//! 1. A random canary (`PARITYCANARY` + 32 hex digits) becomes the token of the header the
//!    target declares (default `Bearer {token}`), delivered through the declared channel: an
//!    environment variable (default `PARITY_MCP_AUTHORIZATION`), a stdin line, or a file parity
//!    writes (its path in a variable or in the command's `{credential_file}`). A second canary
//!    is planted in the legacy raw-credential variables, and a decoy file holding it is named by
//!    the stale file variables. The host gets a fresh private `TMPDIR` and working directory.
//! 2. [`crate::transport::proctrack`] follows the whole tree (ptrace, or subreaper plus `/proc` polling)
//!    and reads every process's argv and environment at every exec.
//! 3. Once the tree is quiet, every file a descendant's `*_FILE` variable (or a declared one)
//!    names is inspected, and the temp and working directories are searched for copies.
//! 4. The rotation hook delivers a third canary; the files must keep their paths and take the
//!    new header. Then the stdio shutdown sequence (close stdin, wait, SIGTERM, wait, SIGKILL)
//!    and a last look: files, directories, `.tmp` and descendants must all be gone.
//!
//! Each canary is searched raw, URL-encoded and base64-encoded (standard and URL-safe
//! alphabets, at each of the three alignments), and replaced by a placeholder (`[CANARY]`,
//! `[CANARY-ROTATED]`, `[CANARY-LEGACY]`) in every message, evidence line and note.
//!
//! Size (2335 lines): the probe (canaries, delivery, the traced run, files, stray copies, rotation
//! and the shutdown sequence) and the thirteen checks that judge one observation share its types;
//! the probe and the judges are the split to make when the file grows again.

mod profile;
pub use profile::HygieneProfile;

use crate::engine::check::{Check, Finding, Level, Revs, Status, Timing};
pub use crate::engine::decl::{
    hygiene_reference as reference_decl, Delivery, HygieneDecl, Rotation, DEFAULT_HEADER,
    DEFAULT_LEGACY, DEFAULT_ROTATION_LINE, DEFAULT_STALE_FILE_VARS, DEFAULT_VARIABLE,
    REFERENCE_ENDPOINT,
};
use crate::engine::run::{RunOptions, RunReport};
use crate::transport::proctrack::{Method, Proc, Tracker};
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The binding of hygiene cases (`hygiene.env.child@host#v1`).
pub const BINDING: &str = "host";

/// The revision of parity's hygiene rules.
pub const REVISION: &str = "v1";

/// Files larger than this are not searched for canaries (counted as skipped).
pub const SCAN_FILE_CAP: u64 = 16 * 1024 * 1024;

/// At most this many directory entries are visited per search.
pub const SCAN_ENTRY_CAP: usize = 10_000;

/// Bytes of the host's stdout and of its stderr kept and searched; the rest is counted.
pub const OUTPUT_CAP: usize = 64 * 1024 * 1024;

/// A faulty host as a hygiene target: `parity fake-host <name>` (its child is the idle helper).
pub fn fake_host_decl(exe: &str, name: &str) -> HygieneDecl {
    HygieneDecl {
        command: Some(format!(
            "{} fake-host {name}",
            crate::engine::target::shell_quote(exe)
        )),
        env: vec![("PARITY_MCP_ENDPOINT".into(), REFERENCE_ENDPOINT.into())],
        ..HygieneDecl::default()
    }
}

// -------------------------------------------------------------------------------------------
// Canaries
// -------------------------------------------------------------------------------------------

/// Which canary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Which {
    /// The token delivered at start.
    Current,
    /// The token delivered by the rotation hook.
    Rotated,
    /// The token planted in the legacy and stale variables.
    Legacy,
}

impl Which {
    /// The placeholder that replaces it in reports.
    pub fn placeholder(self) -> &'static str {
        match self {
            Which::Current => "[CANARY]",
            Which::Rotated => "[CANARY-ROTATED]",
            Which::Legacy => "[CANARY-LEGACY]",
        }
    }
}

/// One canary token and the byte patterns it can be found by. Its `Debug` form never shows the
/// token.
#[derive(Clone)]
pub struct Canary {
    /// Which one.
    pub which: Which,
    /// The token.
    pub token: String,
    /// (encoding, pattern): raw, URL-encoded, and the stable middle of its base64 (standard
    /// and URL-safe) at each of the three alignments.
    pub patterns: Vec<(&'static str, String)>,
}

impl std::fmt::Debug for Canary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Canary")
            .field("which", &self.which)
            .field("token", &self.which.placeholder())
            .finish_non_exhaustive()
    }
}

impl Canary {
    /// A canary of `token`.
    pub fn new(which: Which, token: String) -> Canary {
        let patterns = patterns(&token);
        Canary {
            which,
            token,
            patterns,
        }
    }

    /// The encoding it is found in within `hay`, if any (the first pattern that matches).
    pub fn find(&self, hay: &[u8]) -> Option<&'static str> {
        self.patterns
            .iter()
            .find(|(_, p)| memchr::memmem::find(hay, p.as_bytes()).is_some())
            .map(|(label, _)| *label)
    }
}

/// A fresh canary token: `PARITYCANARY` followed by 32 random lowercase hex digits.
///
/// Errors: the system's random source failed.
pub fn canary_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("PARITYCANARY{hex}"))
}

pub use crate::base::secret::patterns;

/// The three canaries of one probe.
#[derive(Debug, Clone)]
pub struct Secrets {
    /// Delivered at start.
    pub current: Canary,
    /// Delivered by the rotation hook.
    pub rotated: Canary,
    /// Planted in the legacy and stale variables.
    pub legacy: Canary,
}

impl Secrets {
    /// Three fresh canaries.
    ///
    /// Errors: the system's random source failed.
    pub fn new() -> Result<Secrets, String> {
        Ok(Secrets {
            current: Canary::new(Which::Current, canary_token()?),
            rotated: Canary::new(Which::Rotated, canary_token()?),
            legacy: Canary::new(Which::Legacy, canary_token()?),
        })
    }

    /// The canary of `which`.
    pub fn get(&self, which: Which) -> &Canary {
        match which {
            Which::Current => &self.current,
            Which::Rotated => &self.rotated,
            Which::Legacy => &self.legacy,
        }
    }

    /// Every canary of `which` found in `hay`, with the encoding.
    pub fn find(&self, hay: &[u8], which: &[Which]) -> Vec<(Which, &'static str)> {
        which
            .iter()
            .filter_map(|w| self.get(*w).find(hay).map(|e| (*w, e)))
            .collect()
    }

    /// `s` with every canary, in every encoding, replaced by its placeholder
    /// (`[CANARY]`, or `[CANARY:base64]` for an encoded one).
    pub fn redact(&self, s: &str) -> String {
        let mut out = s.to_owned();
        for c in [&self.current, &self.rotated, &self.legacy] {
            let mut pats: Vec<&(&'static str, String)> = c.patterns.iter().collect();
            pats.sort_by_key(|(_, p)| std::cmp::Reverse(p.len()));
            for (label, p) in pats {
                if out.contains(p.as_str()) {
                    let ph = if *label == "raw" {
                        c.which.placeholder().to_owned()
                    } else {
                        format!(
                            "{}:{}]",
                            c.which.placeholder().trim_end_matches(']'),
                            label.split(' ').next().unwrap_or(label)
                        )
                    };
                    out = out.replace(p.as_str(), &ph);
                }
            }
        }
        redact_fragments(&out)
    }
}

/// Replaces what is left of a raw canary cut short (`PARITYCANARY` and any hex digits after
/// it, as a clipped line may hold) with `[CANARY-PART]`, so not even part of a token reaches
/// a report.
fn redact_fragments(s: &str) -> String {
    const PREFIX: &str = "PARITYCANARY";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(PREFIX) {
        out.push_str(&rest[..i]);
        out.push_str("[CANARY-PART]");
        let after = &rest[i + PREFIX.len()..];
        let hex = after.bytes().take_while(|b| b.is_ascii_hexdigit()).count();
        rest = &after[hex..];
    }
    out.push_str(rest);
    out
}

/// A template with `{token}` and `{header}` filled in.
fn render(template: &str, token: &str, header: &str) -> String {
    template
        .replace("{header}", header)
        .replace("{token}", token)
}

// -------------------------------------------------------------------------------------------
// The observation
// -------------------------------------------------------------------------------------------

/// What a credential file's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Exactly the header of this canary.
    Header(Which),
    /// Something else, described without its bytes.
    Other(String),
    /// It could not be read.
    Unreadable(String),
}

/// A credential file's state at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// It exists (as anything).
    pub exists: bool,
    /// It is a symbolic link.
    pub symlink: bool,
    /// It is a regular file.
    pub regular: bool,
    /// Owner uid.
    pub uid: u32,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// Inode number.
    pub ino: u64,
    /// The bytes, judged.
    pub content: Content,
    /// The parent directory's owner uid and permission bits, when it exists.
    pub dir: Option<(u32, u32)>,
    /// The parent is a shared directory (the temp or working directory itself, `/tmp`).
    pub dir_shared: bool,
    /// `<path>.tmp` exists (after a rotation: was seen during the settle window that follows).
    pub tmp_exists: bool,
}

/// A file a descendant's environment names.
#[derive(Debug, Clone)]
pub struct CredFile {
    /// Its path.
    pub path: PathBuf,
    /// The variable that named it.
    pub var: String,
    /// The first process seen with it: pid and argv\[0\].
    pub pid: i32,
    /// argv\[0\] of that process.
    pub argv0: String,
    /// Its state once the tree settled.
    pub settled: Option<FileState>,
    /// Its state once the rotation was picked up (or the deadline passed).
    pub rotated: Option<FileState>,
    /// After shutdown: (the file, its directory, its `.tmp`) still exist.
    pub after_shutdown: Option<(bool, bool, bool)>,
}

/// One search of the temp and working directories for canaries.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// `settled`, `after rotation` or `after shutdown`.
    pub phase: &'static str,
    /// (file, canary, encoding) of every hit.
    pub hits: Vec<(PathBuf, Which, &'static str)>,
    /// Files over [`SCAN_FILE_CAP`] not searched.
    pub skipped_large: usize,
    /// Files that could not be read.
    pub unreadable: usize,
    /// The entry cap was reached.
    pub truncated: bool,
}

/// What happened to the rotation hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RotationObs {
    /// None declared.
    NotDeclared,
    /// Not attempted: no descendant's environment named a credential file.
    NoFiles,
    /// Not attempted, and why.
    NotAttempted(String),
    /// Delivered; every file held the new header after `waited_ms`, or the deadline
    /// (`deadline_ms`) passed.
    Done {
        /// How long until every file took the new header (or the deadline).
        waited_ms: u64,
        /// The deadline.
        deadline_ms: u64,
    },
}

/// A host's captured output stream: raw bytes, which may hold a canary — never shown without
/// [`Secrets::redact`].
#[derive(Debug, Clone, Default)]
pub struct Stream {
    /// The bytes kept (at most [`OUTPUT_CAP`]).
    pub bytes: Vec<u8>,
    /// Bytes past the cap, counted and not searched.
    pub dropped: u64,
}

/// Everything one probe saw; the checks judge it.
#[derive(Debug, Clone)]
pub struct Observation {
    /// How the tree was followed.
    pub method: Method,
    /// The host's pid.
    pub host_pid: i32,
    /// Every process of the tree.
    pub procs: Vec<Proc>,
    /// The canaries.
    pub secrets: Secrets,
    /// Declared legacy variables (planted).
    pub legacy_vars: Vec<String>,
    /// Declared stale file variables (planted).
    pub stale_file_vars: Vec<String>,
    /// The decoy file the stale file variables name.
    pub decoy: PathBuf,
    /// The file parity delivered the header in (file delivery).
    pub delivered: Option<PathBuf>,
    /// Declared variables that name a credential file besides `*_FILE` (`file_vars`).
    pub file_vars: Vec<String>,
    /// The host's private temp directory.
    pub tmp_root: PathBuf,
    /// The host's working directory.
    pub cwd_root: PathBuf,
    /// The user's uid (the owner of the directories parity made), which credential files and
    /// their directories must have.
    pub uid: u32,
    /// Credential files seen.
    pub files: Vec<CredFile>,
    /// The searches for stray copies.
    pub scans: Vec<Scan>,
    /// The rotation.
    pub rotation: RotationObs,
    /// Shutdown steps taken (`stdin closed`, `SIGTERM after 2000 ms`, …).
    pub shutdown_steps: Vec<String>,
    /// How the host ended.
    pub host_exit: Option<String>,
    /// The host had already ended when the tree settled (its status), so what it cleaned up
    /// at exit could not be inspected while it ran.
    pub ended_early: Option<String>,
    /// Descendants still running after the host ended and the linger time passed.
    pub leftovers: Vec<(i32, String)>,
    /// The host's stdout.
    pub stdout: Stream,
    /// The host's stderr.
    pub stderr: Stream,
    /// Wall time of the probe, in milliseconds.
    pub duration_ms: u64,
}

/// One probe to run.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Declarations.
    pub decl: HygieneDecl,
    /// The host command's words.
    pub command: Vec<String>,
    /// Deadlines and shutdown graces.
    pub timing: Timing,
    /// The `parity` binary (the stub and the fakes).
    pub exe: PathBuf,
}

static NEXT_MARK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn mkdir_private(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot set the mode of {}: {e}", p.display()))
}

fn write_private(p: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = p.with_extension("parity-tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, p).map_err(|e| format!("cannot write {}: {e}", p.display()))
}

/// Starts a reader thread that keeps up to [`OUTPUT_CAP`] bytes of `r`.
fn reader(
    mut r: impl Read + Send + 'static,
) -> (Arc<Mutex<Stream>>, std::sync::mpsc::Receiver<()>) {
    let stream = Arc::new(Mutex::new(Stream::default()));
    let (tx, rx) = std::sync::mpsc::channel();
    let s = stream.clone();
    let _ = std::thread::Builder::new()
        .name("parity-hygiene-output".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match r.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut g = match s.lock() {
                            Ok(g) => g,
                            Err(p) => p.into_inner(),
                        };
                        let room = OUTPUT_CAP.saturating_sub(g.bytes.len()).min(n);
                        g.bytes.extend_from_slice(&buf[..room]);
                        g.dropped += (n - room) as u64;
                    }
                }
            }
            let _ = tx.send(());
        });
    (stream, rx)
}

fn take_stream(s: &Arc<Mutex<Stream>>) -> Stream {
    match s.lock() {
        Ok(g) => g.clone(),
        Err(p) => p.into_inner().clone(),
    }
}

/// Runs one probe: starts the host, follows its tree, delivers, rotates, shuts it down and
/// collects what every check judges. Blocking.
///
/// Errors (the run could not happen): no command, no random source, the scratch directories
/// cannot be made, the host cannot start, or it ended with a failure status before the tree
/// settled and started no child (the message carries its status and last stderr line,
/// redacted).
pub fn observe(probe: &Probe) -> Result<Observation, String> {
    let decl = &probe.decl;
    let Some((program, args)) = probe.command.split_first() else {
        return Err("no host command: give `-- CMD…` or `[hygiene] command`".into());
    };
    let started = Instant::now();
    let secrets = Secrets::new()?;
    let header = render(&decl.header, &secrets.current.token, "");
    let legacy_header = render(&decl.header, &secrets.legacy.token, "");
    let scratch = tempfile::Builder::new()
        .prefix("parity-hygiene-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let tmp_root = scratch.path().join("tmp");
    mkdir_private(&tmp_root)?;
    let cwd_root = match &decl.cwd {
        Some(c) => c.clone(),
        None => {
            let c = scratch.path().join("cwd");
            mkdir_private(&c)?;
            c
        }
    };
    let decoy_dir = scratch.path().join("decoy");
    mkdir_private(&decoy_dir)?;
    let decoy = decoy_dir.join("authorization");
    write_private(&decoy, legacy_header.as_bytes())?;
    let delivered = match &decl.delivery {
        Delivery::File { .. } => {
            let d = scratch.path().join("delivered");
            mkdir_private(&d)?;
            let f = d.join("authorization");
            write_private(&f, header.as_bytes())?;
            Some(f)
        }
        _ => None,
    };
    // The host's environment: parity's own, minus everything the probe sets.
    let marker_value = format!(
        "{}-h{}",
        std::process::id(),
        NEXT_MARK.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut set: Vec<(String, String)> = Vec::new();
    set.push(("TMPDIR".into(), tmp_root.to_string_lossy().into_owned()));
    set.push((
        crate::transport::peer::MARKER_VAR.into(),
        marker_value.clone(),
    ));
    let delivered_var = match &decl.delivery {
        Delivery::Env { variable } => Some(variable.clone()),
        Delivery::File { variable } => variable.clone(),
        Delivery::Stdin { .. } => None,
    };
    for v in &decl.legacy {
        if Some(v) != delivered_var.as_ref() {
            set.push((v.clone(), legacy_header.clone()));
        }
    }
    for v in &decl.stale_file_vars {
        if Some(v) != delivered_var.as_ref() {
            set.push((v.clone(), decoy.to_string_lossy().into_owned()));
        }
    }
    set.extend(decl.env.iter().cloned());
    match (&decl.delivery, &delivered) {
        (Delivery::Env { variable }, _) => set.push((variable.clone(), header.clone())),
        (Delivery::File { variable: Some(v) }, Some(f)) => {
            set.push((v.clone(), f.to_string_lossy().into_owned()))
        }
        _ => {}
    }
    let names: std::collections::HashSet<String> = set.iter().map(|(k, _)| k.clone()).collect();
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !names.contains(k.to_string_lossy().as_ref()))
        .collect();
    env.extend(
        set.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    let host_env: HashMap<Vec<u8>, Vec<u8>> = env
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    let file_word = delivered
        .as_ref()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{credential_file}", &file_word))
        .collect();
    let program = program.replace("{credential_file}", &file_word);
    let mut tracker = Tracker::start(crate::transport::proctrack::Spec {
        stub: probe.exe.clone(),
        program,
        args,
        env,
        cwd: cwd_root.clone(),
        ptrace: decl.ptrace,
        poll: Duration::from_millis(decl.poll_ms.max(1)),
        marker: format!("{}={marker_value}", crate::transport::peer::MARKER_VAR),
        keep_env: Some(env_filter(decl, &secrets)),
    })?;
    let (out, out_done) = match tracker.stdout.take() {
        Some(o) => reader(o),
        None => reader(std::io::empty()),
    };
    let (err, err_done) = match tracker.stderr.take() {
        Some(e) => reader(e),
        None => reader(std::io::empty()),
    };
    if let Delivery::Stdin { line } = &decl.delivery {
        if let Some(stdin) = tracker.stdin.as_mut() {
            let l = render(line, &secrets.current.token, &header);
            let _ = stdin
                .write_all(l.as_bytes())
                .and_then(|()| stdin.write_all(b"\n"))
                .and_then(|()| stdin.flush());
        }
    }
    // Settle: quiet for settle_ms, and a descendant executed (or the start-up budget passed).
    let settle = Duration::from_millis(decl.settle_ms.max(1));
    let budget = probe.timing.case;
    let until = Instant::now() + budget;
    tracker.wait_quiet(settle, budget);
    while tracker.host_exit().is_none()
        && Instant::now() < until
        && !tracker
            .procs()
            .iter()
            .any(|p| !p.host && !p.thread && !p.images.is_empty())
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    tracker.wait_quiet(settle, until.saturating_duration_since(Instant::now()));
    let early = tracker.host_exit();
    let procs = tracker.procs();
    if let Some(exit) = &early {
        let failed = exit != "exit status: 0";
        let no_child = !procs.iter().any(|p| !p.host && !p.thread);
        if failed && no_child {
            let _ = err_done.recv_timeout(Duration::from_secs(2));
            let stderr = take_stream(&err);
            let last = String::from_utf8_lossy(&stderr.bytes)
                .lines()
                .last()
                .unwrap_or("")
                .to_owned();
            drop(tracker);
            return Err(secrets.redact(&format!(
                "the host ended ({exit}) before it started any child; its last stderr line: {}",
                crate::base::util::clip(&secrets.redact(&last), 300)
            )));
        }
    }
    let headers = [
        (Which::Current, header.clone()),
        (
            Which::Rotated,
            render(&decl.header, &secrets.rotated.token, ""),
        ),
        (Which::Legacy, legacy_header.clone()),
    ];
    let ctx = FileCtx {
        secrets: &secrets,
        headers: &headers,
        tmp_root: &tmp_root,
        cwd_root: &cwd_root,
        decoy: &decoy,
        delivered: delivered.as_deref(),
        host_env: &host_env,
        file_vars: &decl.file_vars,
    };
    let mut files = ctx.collect(&procs, Vec::new());
    for f in files.iter_mut() {
        f.settled = Some(ctx.capture(&f.path));
    }
    let mut scans = vec![ctx.scan("settled", &files)];
    // Rotation.
    let rotation = if decl.rotation == Rotation::None {
        RotationObs::NotDeclared
    } else if tracker.host_exit().is_some() {
        RotationObs::NotAttempted("the host had ended before the rotation".into())
    } else if files.is_empty() {
        RotationObs::NoFiles
    } else {
        let new_header = render(&decl.header, &secrets.rotated.token, "");
        let asked = match &decl.rotation {
            Rotation::Stdin { line } => match tracker.stdin.as_mut() {
                Some(stdin) => {
                    let l = render(line, &secrets.rotated.token, &new_header);
                    stdin
                        .write_all(l.as_bytes())
                        .and_then(|()| stdin.write_all(b"\n"))
                        .and_then(|()| stdin.flush())
                        .map_err(|e| format!("the rotation line could not be written: {e}"))
                }
                None => Err("the host's stdin is closed".into()),
            },
            Rotation::File { signal } => match &delivered {
                Some(f) => write_private(f, new_header.as_bytes()).and_then(|()| match signal {
                    Some(s) => crate::base::util::parse_signal(s).map(|sig| {
                        let _ = nix::sys::signal::kill(
                            nix::unistd::Pid::from_raw(tracker.host_pid),
                            sig,
                        );
                    }),
                    None => Ok(()),
                }),
                None => Err("rotation = \"file\" needs delivery = \"file\"".into()),
            },
            Rotation::None => Ok(()),
        };
        match asked {
            Err(e) => RotationObs::NotAttempted(e),
            Ok(()) => {
                let deadline = probe.timing.message;
                let t0 = Instant::now();
                // A file missing this long is taken as moved (a writer that deletes and
                // recreates it comes back sooner).
                let gone_for = Duration::from_millis(500).min(deadline);
                let mut missing_since: Vec<Option<Instant>> = vec![None; files.len()];
                loop {
                    let mut settled = true;
                    for (i, f) in files.iter().enumerate() {
                        match ctx.content_of(&f.path) {
                            Content::Header(Which::Rotated) => missing_since[i] = None,
                            _ if f.path.symlink_metadata().is_err() => {
                                let since = *missing_since[i].get_or_insert_with(Instant::now);
                                if since.elapsed() < gone_for {
                                    settled = false;
                                }
                            }
                            _ => {
                                missing_since[i] = None;
                                settled = false;
                            }
                        }
                    }
                    if settled || t0.elapsed() >= deadline {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                let waited_ms = t0.elapsed().as_millis() as u64;
                // Then a settle window, watching for a `.tmp` the host leaves behind once the
                // write is done (it may come just after the rename).
                let mut tmp_seen = vec![false; files.len()];
                let until = Instant::now() + settle;
                loop {
                    for (i, f) in files.iter().enumerate() {
                        tmp_seen[i] |= tmp_of(&f.path).symlink_metadata().is_ok();
                    }
                    if Instant::now() >= until {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                for (i, f) in files.iter_mut().enumerate() {
                    let mut st = ctx.capture(&f.path);
                    st.tmp_exists |= tmp_seen[i];
                    f.rotated = Some(st);
                }
                scans.push(ctx.scan("after rotation", &files));
                RotationObs::Done {
                    waited_ms,
                    deadline_ms: deadline.as_millis() as u64,
                }
            }
        }
    };
    // Shutdown: the stdio sequence.
    let grace = probe.timing.grace;
    let mut steps = Vec::new();
    let t0 = Instant::now();
    drop(tracker.stdin.take());
    steps.push("stdin closed".to_owned());
    if tracker.wait_host(grace.after_eof).is_none() {
        tracker.signal_host_group(nix::sys::signal::Signal::SIGTERM);
        steps.push(format!(
            "SIGTERM to the host's process group after {} ms",
            t0.elapsed().as_millis()
        ));
        if tracker.wait_host(grace.after_term).is_none() {
            tracker.signal_host_group(nix::sys::signal::Signal::SIGKILL);
            steps.push(format!(
                "SIGKILL to the host's process group after {} ms",
                t0.elapsed().as_millis()
            ));
            let _ = tracker.wait_host(Duration::from_secs(2));
        }
    }
    let host_exit = tracker.host_exit();
    if let Some(e) = &host_exit {
        steps.push(format!(
            "the host ended ({e}) {} ms after stdin closed",
            t0.elapsed().as_millis()
        ));
    }
    let leftovers: Vec<(i32, String)> = tracker
        .descendants_after(Duration::from_millis(decl.linger_ms))
        .iter()
        .map(|p| (p.pid, p.argv0()))
        .collect();
    let method = tracker.method();
    let host_pid = tracker.host_pid;
    let procs = tracker.finish();
    let mut files = ctx.collect(&procs, files);
    for f in files.iter_mut() {
        let tmp = tmp_of(&f.path);
        let dir_left = f
            .path
            .parent()
            .is_some_and(|d| !ctx.shared_dir(d) && d.symlink_metadata().is_ok());
        f.after_shutdown = Some((
            f.path.symlink_metadata().is_ok(),
            dir_left,
            tmp.symlink_metadata().is_ok(),
        ));
    }
    scans.push(ctx.scan("after shutdown", &files));
    let _ = out_done.recv_timeout(Duration::from_secs(2));
    let _ = err_done.recv_timeout(Duration::from_secs(2));
    let obs = Observation {
        method,
        host_pid,
        procs,
        secrets: secrets.clone(),
        legacy_vars: decl.legacy.clone(),
        stale_file_vars: decl.stale_file_vars.clone(),
        decoy,
        delivered,
        file_vars: decl.file_vars.clone(),
        uid: std::fs::metadata(&tmp_root)
            .map(|m| m.uid())
            .unwrap_or_else(|_| nix::unistd::geteuid().as_raw()),
        tmp_root,
        cwd_root,
        files,
        scans,
        rotation,
        shutdown_steps: steps,
        host_exit,
        ended_early: early,
        leftovers,
        stdout: take_stream(&out),
        stderr: take_stream(&err),
        duration_ms: started.elapsed().as_millis() as u64,
    };
    drop(scratch);
    Ok(obs)
}

/// Which environment entries of an exec image the judges need, so only those are kept: a
/// `*_FILE` or declared file variable (credential files), a declared legacy or stale variable
/// (`hygiene.legacy`), and any entry carrying a canary in any encoding (`hygiene.env.child`).
fn env_filter(decl: &HygieneDecl, secrets: &Secrets) -> crate::transport::proctrack::EnvFilter {
    let mut names: HashSet<Vec<u8>> = HashSet::new();
    for n in decl
        .file_vars
        .iter()
        .chain(&decl.legacy)
        .chain(&decl.stale_file_vars)
    {
        names.insert(n.as_bytes().to_vec());
    }
    let secrets = secrets.clone();
    crate::transport::proctrack::EnvFilter(std::sync::Arc::new(move |entry: &[u8]| {
        let name = &entry[..entry.iter().position(|b| *b == b'=').unwrap_or(entry.len())];
        name.ends_with(b"_FILE")
            || names.contains(name)
            || !secrets
                .find(entry, &[Which::Current, Which::Rotated, Which::Legacy])
                .is_empty()
    }))
}

fn tmp_of(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// What the file inspections need to know.
struct FileCtx<'a> {
    secrets: &'a Secrets,
    headers: &'a [(Which, String)],
    tmp_root: &'a Path,
    cwd_root: &'a Path,
    decoy: &'a Path,
    delivered: Option<&'a Path>,
    host_env: &'a HashMap<Vec<u8>, Vec<u8>>,
    file_vars: &'a [String],
}

impl FileCtx<'_> {
    /// Adds to `files` every credential file a descendant's environment names: a `*_FILE`
    /// variable (or a declared one) the host set or changed, except the decoy and the file
    /// parity delivered.
    fn collect(&self, procs: &[Proc], mut files: Vec<CredFile>) -> Vec<CredFile> {
        for p in procs.iter().filter(|p| !p.host && !p.thread) {
            for img in &p.images {
                let Ok(env) = &img.env else { continue };
                for entry in env {
                    let Some(eq) = entry.iter().position(|b| *b == b'=') else {
                        continue;
                    };
                    let (name, value) = (&entry[..eq], &entry[eq + 1..]);
                    let name_s = String::from_utf8_lossy(name).into_owned();
                    let declared = self.file_vars.iter().any(|v| v.as_bytes() == name);
                    if value.is_empty() || !(declared || name.ends_with(b"_FILE")) {
                        continue;
                    }
                    let path = PathBuf::from(OsStr::from_bytes(value));
                    if path == self.decoy || Some(path.as_path()) == self.delivered {
                        continue;
                    }
                    if !declared && self.host_env.get(name).map(Vec::as_slice) == Some(value) {
                        continue;
                    }
                    if files.iter().any(|f| f.path == path) {
                        continue;
                    }
                    files.push(CredFile {
                        path,
                        var: name_s,
                        pid: p.pid,
                        argv0: p.argv0(),
                        settled: None,
                        rotated: None,
                        after_shutdown: None,
                    });
                }
            }
        }
        files
    }

    fn shared_dir(&self, d: &Path) -> bool {
        d == self.tmp_root
            || d == self.cwd_root
            || d == Path::new("/")
            || d == Path::new("/tmp")
            || d == std::env::temp_dir()
    }

    fn content_of(&self, path: &Path) -> Content {
        let bytes = match read_regular_capped(path) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Content::Other(format!(
                    "over {SCAN_FILE_CAP} bytes (too large to be the header)"
                ))
            }
            Err(e) => return Content::Unreadable(e.to_string()),
        };
        for (w, h) in self.headers {
            if bytes == h.as_bytes() {
                return Content::Header(*w);
            }
        }
        for (w, h) in self.headers {
            let mut with_newline = h.as_bytes().to_vec();
            with_newline.push(b'\n');
            if bytes == with_newline {
                return Content::Other(format!(
                    "the header of {} followed by a newline",
                    w.placeholder()
                ));
            }
        }
        let found = self
            .secrets
            .find(&bytes, &[Which::Current, Which::Rotated, Which::Legacy]);
        if let Some((w, _)) = found.first() {
            return Content::Other(format!(
                "{} bytes holding {} but not exactly the header",
                bytes.len(),
                w.placeholder()
            ));
        }
        Content::Other(format!("{} bytes that are not the header", bytes.len()))
    }

    fn capture(&self, path: &Path) -> FileState {
        let lmeta = path.symlink_metadata();
        let dir = path.parent();
        let dmeta = dir.and_then(|d| d.metadata().ok());
        let mut st = FileState {
            exists: lmeta.is_ok(),
            symlink: lmeta.as_ref().is_ok_and(|m| m.file_type().is_symlink()),
            regular: lmeta.as_ref().is_ok_and(|m| m.file_type().is_file()),
            uid: 0,
            mode: 0,
            ino: 0,
            content: Content::Unreadable("missing".into()),
            dir: dmeta.map(|m| (m.uid(), m.mode() & 0o7777)),
            dir_shared: dir.is_some_and(|d| self.shared_dir(d)),
            tmp_exists: tmp_of(path).symlink_metadata().is_ok(),
        };
        if let Ok(m) = &lmeta {
            st.uid = m.uid();
            st.mode = m.mode() & 0o7777;
            st.ino = m.ino();
            st.content = self.content_of(path);
        }
        st
    }

    /// Searches the temp and working directories (recursively) and each credential file's
    /// directory for canaries, skipping the credential files and their `.tmp`.
    fn scan(&self, phase: &'static str, files: &[CredFile]) -> Scan {
        let mut scan = Scan {
            phase,
            ..Scan::default()
        };
        let skip: Vec<PathBuf> = files
            .iter()
            .flat_map(|f| [f.path.clone(), tmp_of(&f.path)])
            .collect();
        let mut visited = 0usize;
        let mut seen_files = std::collections::HashSet::new();
        let mut stack: Vec<(PathBuf, bool)> = vec![
            (self.tmp_root.to_path_buf(), true),
            (self.cwd_root.to_path_buf(), true),
        ];
        for f in files {
            if let Some(d) = f.path.parent() {
                if !self.shared_dir(d) {
                    stack.push((d.to_path_buf(), false));
                }
            }
        }
        while let Some((dir, recurse)) = stack.pop() {
            let rd = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                // Removed meanwhile (a credential directory after shutdown): nothing to search.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => {
                    scan.unreadable += 1;
                    continue;
                }
            };
            for e in rd.flatten() {
                visited += 1;
                if visited > SCAN_ENTRY_CAP {
                    scan.truncated = true;
                    return scan;
                }
                let path = e.path();
                let Ok(meta) = path.symlink_metadata() else {
                    continue;
                };
                if meta.is_dir() {
                    if recurse {
                        stack.push((path, true));
                    }
                    continue;
                }
                if !meta.is_file() || skip.contains(&path) || !seen_files.insert(path.clone()) {
                    continue;
                }
                if meta.len() > SCAN_FILE_CAP {
                    scan.skipped_large += 1;
                    continue;
                }
                let bytes = match read_regular_capped(&path) {
                    Ok(Some(b)) => b,
                    Ok(None) => {
                        scan.skipped_large += 1;
                        continue;
                    }
                    // Deleted between the listing and the read: no copy left to find.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(_) => {
                        scan.unreadable += 1;
                        continue;
                    }
                };
                for (w, enc) in self
                    .secrets
                    .find(&bytes, &[Which::Current, Which::Rotated, Which::Legacy])
                {
                    scan.hits.push((path.clone(), w, enc));
                }
            }
        }
        scan
    }
}

/// Reads `path` if it is a regular file of at most [`SCAN_FILE_CAP`] bytes: opened without
/// following a final symlink and without blocking (a FIFO named by a host cannot stall the
/// probe), checked on the open handle, and read through a cap (a file that grows meanwhile,
/// or a device, cannot exhaust memory). `Ok(None)` when it holds more than the cap.
///
/// Errors: the file cannot be opened or read, or is not a regular file.
fn read_regular_capped(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(SCAN_FILE_CAP + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > SCAN_FILE_CAP {
        return Ok(None);
    }
    Ok(Some(bytes))
}

// -------------------------------------------------------------------------------------------
// The checks
// -------------------------------------------------------------------------------------------

/// A hygiene check's judgment of one observation.
pub type JudgeFn = fn(&Observation) -> Finding;

/// The hygiene checks (each `CheckKind::Own`: this profile runs them, [`checks`] has the
/// judgments).
pub fn catalogue() -> Vec<Check> {
    checks().into_iter().map(|(c, _)| c).collect()
}

/// The hygiene checks with their judgments.
fn checks() -> Vec<(Check, JudgeFn)> {
    let c = |id, requirement, level, quote, section, f: JudgeFn| {
        (
            Check::own(
                id,
                requirement,
                level,
                quote,
                section,
                Revs::Only(&[REVISION]),
                None,
            ),
            f,
        )
    };
    vec![
        c(
            "hygiene.env.child",
            "No descendant of the host (child, grandchild, short-lived or not) has the delivered token, or the rotated one, in its environment, in any encoding.",
            Level::MustNot,
            "The raw MCP Authorization value MUST NOT be put in the environment of ACP agents, their terminals or Pi. Those children MUST get a file path instead.",
            "hygiene#rule-48",
            judge_env_child,
        ),
        c(
            "hygiene.argv",
            "No process of the tree, the host included, has a canary on its argv.",
            Level::MustNot,
            "A credential MUST NOT appear on any child's argv; commands take endpoints and paths through the environment only.",
            "hygiene#rule-52",
            judge_argv,
        ),
        c(
            "hygiene.legacy",
            "No descendant inherits a legacy raw-credential variable, a stale file variable pointing at the decoy, or the legacy canary under any name.",
            Level::Must,
            "Child environments MUST set T3_ACP_MCP_AUTHORIZATION, T3_MCP_BEARER_TOKEN and T3_CODE_MCP_AUTHORIZATION to undefined, keeping the keys present, so that merging over process.env cannot re-inherit them.",
            "hygiene#rule-49",
            judge_legacy,
        ),
        c(
            "hygiene.output",
            "The host's stdout and stderr (which its children share unless it redirects them) never carry a canary.",
            Level::MustNot,
            "Logs redact by value, not only by key name.",
            "hygiene#b20",
            judge_output,
        ),
        c(
            "hygiene.file.handed",
            "The host hands its children the credential as a file path: at least one descendant's environment names a credential file.",
            Level::Must,
            "The raw MCP Authorization value MUST NOT be put in the environment of ACP agents, their terminals or Pi. Those children MUST get a file path instead.",
            "hygiene#rule-48",
            judge_file_handed,
        ),
        c(
            "hygiene.file.mode",
            "Every credential file a child is handed is a regular file owned by the user with mode 0600, after the first write and after rotation.",
            Level::Must,
            "After every successful write the file MUST be mode 0600 (not checked on Windows) and hold exactly the header bytes, with no newline.",
            "hygiene#rule-39",
            judge_file_mode,
        ),
        c(
            "hygiene.file.dir-mode",
            "Every credential file sits in a private directory of its own, owned by the user with mode 0700.",
            Level::Must,
            "Each key MUST get its own file inside its own fresh private temp directory (created by mkdtemp, so 0700 on POSIX).",
            "hygiene#rule-38",
            judge_dir_mode,
        ),
        c(
            "hygiene.file.content",
            "Every credential file holds exactly the current header bytes, with no newline.",
            Level::Must,
            "After every successful write the file MUST be mode 0600 (not checked on Windows) and hold exactly the header bytes, with no newline.",
            "hygiene#rule-39",
            judge_file_content,
        ),
        c(
            "hygiene.stray-copy",
            "No other file under the host's temp directory, its working directory or a credential file's directory holds a canary (searched settled, after rotation and after shutdown).",
            Level::MustNot,
            "The MCP config file MUST hold the literal Bearer ${OPENAB_SESSION_TOKEN}, never the token, and MUST be written 0600 through a same-directory temp file and rename.",
            "hygiene#rule-57",
            judge_stray_copy,
        ),
        c(
            "hygiene.rotation",
            "After the rotation hook every credential file keeps its path and takes the new header through a rename (a new inode).",
            Level::Must,
            "The path for a key MUST stay the same for the scope's lifetime, across rotations and removals.",
            "hygiene#rule-40",
            judge_rotation,
        ),
        c(
            "hygiene.cleanup.tmp",
            "No `<path>.tmp` is left beside a credential file once a write settled, nor after shutdown.",
            Level::Must,
            "A changed header MUST be written to <path>.tmp with mode 0600 and renamed over <path>, giving a new inode.",
            "hygiene#rule-42",
            judge_cleanup_tmp,
        ),
        c(
            "hygiene.cleanup.files",
            "After the stdio shutdown sequence every credential file and its directory are gone.",
            Level::Must,
            "Closing the scope MUST delete every key's directory.",
            "hygiene#rule-46",
            judge_cleanup_files,
        ),
        c(
            "hygiene.cleanup.descendants",
            "After the host ends (stdio shutdown sequence), none of its descendants is still running.",
            Level::Must,
            "Every old child is shut down (close stdin, wait, SIGTERM, SIGKILL) and reaped. No process is left in Z state and none is orphaned.",
            "hygiene#descendants",
            judge_cleanup_descendants,
        ),
    ]
}

fn who(p: &Proc) -> String {
    format!(
        "pid {} (`{}`)",
        p.pid,
        crate::base::util::clip(&p.argv0(), 80)
    )
}

fn head(obs: &Observation) -> Vec<String> {
    vec![format!("tracking: {}", obs.method.describe())]
}

fn descendants(obs: &Observation) -> impl Iterator<Item = &Proc> {
    obs.procs.iter().filter(|p| !p.host && !p.thread)
}

fn var_name(entry: &[u8]) -> String {
    String::from_utf8_lossy(split_entry(entry).0).into_owned()
}

/// An environment entry's name and value bytes (`NAME=value`; no `=`: all name).
fn split_entry(entry: &[u8]) -> (&[u8], &[u8]) {
    match entry.iter().position(|b| *b == b'=') {
        Some(eq) => (&entry[..eq], &entry[eq + 1..]),
        None => (entry, &[]),
    }
}

/// Collects violations, unreadable processes and notes, then decides.
struct Tally {
    evidence: Vec<String>,
    violations: Vec<String>,
    unreadable: Vec<String>,
}

impl Tally {
    fn new(obs: &Observation) -> Tally {
        Tally {
            evidence: head(obs),
            violations: Vec::new(),
            unreadable: Vec::new(),
        }
    }
    fn finish(mut self, what: &str, pass_line: String) -> Finding {
        if !self.violations.is_empty() {
            let n = self.violations.len();
            let first = self.violations[0].clone();
            self.evidence.extend(self.violations);
            return Finding::violated(
                if n == 1 {
                    first
                } else {
                    format!("{first} (and {} more {what})", n - 1)
                },
                self.evidence,
            );
        }
        if !self.unreadable.is_empty() {
            let first = self.unreadable[0].clone();
            self.evidence.extend(self.unreadable);
            return Finding::not_run(
                format!("could not be judged, so this cannot pass: {first}"),
                self.evidence,
            );
        }
        self.evidence.push(pass_line);
        Finding::pass(self.evidence)
    }
}

/// Polling only: a descendant seen but gone before it could be read might have held what the
/// check looks for, so it makes the check `not-run` (unless a violation was found anyway).
fn missed_unreadable(obs: &Observation, v: &mut Tally) {
    let missed: Vec<String> = descendants(obs).filter(|p| p.missed).map(who).collect();
    if !missed.is_empty() {
        v.unreadable.push(format!(
            "{} process(es) ended before polling could read them: {}",
            missed.len(),
            missed.join(", ")
        ));
    }
}

fn judge_env_child(obs: &Observation) -> Finding {
    if descendants(obs).next().is_none() {
        return Finding::skip("the host started no child during the run");
    }
    let mut v = Tally::new(obs);
    let mut images = 0;
    for p in descendants(obs) {
        for img in &p.images {
            match &img.env {
                Err(e) => v.unreadable.push(format!("{}: {e}", who(p))),
                Ok(env) => {
                    images += 1;
                    for entry in env {
                        for (w, enc) in obs.secrets.find(entry, &[Which::Current, Which::Rotated]) {
                            v.violations.push(format!(
                                "{} has {} in its environment variable {} ({enc}), read at its exec {} ms into the run",
                                who(p),
                                w.placeholder(),
                                var_name(entry),
                                img.at_ms
                            ));
                        }
                    }
                }
            }
        }
    }
    missed_unreadable(obs, &mut v);
    for p in descendants(obs) {
        let vars: usize = p
            .images
            .iter()
            .filter(|i| i.env.is_ok())
            .map(|i| i.env_vars)
            .sum();
        v.evidence.push(format!(
            "{}: {} exec image(s), {vars} variable(s) read",
            who(p),
            p.images.len()
        ));
    }
    let n = descendants(obs).count();
    if images == 0 && v.violations.is_empty() && v.unreadable.is_empty() {
        // Nothing was judged: no verdict can rest on it (a host that started no child at all
        // is judged by the other checks).
        return Finding::not_run(
            format!("{n} descendant(s), but no exec image of any could be read"),
            v.evidence.clone(),
        );
    }
    v.finish(
        "process variables",
        format!("{n} descendant(s), {images} exec image(s) read: no environment holds the token"),
    )
}

fn judge_argv(obs: &Observation) -> Finding {
    let mut v = Tally::new(obs);
    let mut images = 0;
    for p in obs.procs.iter().filter(|p| !p.thread) {
        for img in &p.images {
            match &img.argv {
                Err(e) => v.unreadable.push(format!("{}: {e}", who(p))),
                Ok(argv) => {
                    images += 1;
                    for (i, word) in argv.iter().enumerate() {
                        for (w, enc) in obs
                            .secrets
                            .find(word, &[Which::Current, Which::Rotated, Which::Legacy])
                        {
                            v.violations.push(format!(
                                "{} has {} in argv[{i}] ({enc})",
                                who(p),
                                w.placeholder()
                            ));
                        }
                    }
                }
            }
        }
    }
    if let Some(h) = obs.procs.iter().find(|p| p.host && p.images.is_empty()) {
        // Polling may never read a host that hides its `/proc` entries (a non-dumpable one,
        // seen by another user): its argv was not judged.
        v.unreadable
            .push(format!("{}: the host's own image was never read", who(h)));
    }
    if images == 0 && v.unreadable.is_empty() {
        return Finding::not_run("no process image could be read", head(obs));
    }
    missed_unreadable(obs, &mut v);
    v.finish(
        "argv words",
        format!("{images} exec image(s) read: no argv holds a canary"),
    )
}

fn judge_legacy(obs: &Observation) -> Finding {
    if descendants(obs).next().is_none() {
        return Finding::skip("the host started no child during the run");
    }
    let mut v = Tally::new(obs);
    let decoy = obs.decoy.as_os_str().as_bytes();
    for p in descendants(obs) {
        for img in &p.images {
            let env = match &img.env {
                Err(e) => {
                    v.unreadable.push(format!("{}: {e}", who(p)));
                    continue;
                }
                Ok(env) => env,
            };
            for entry in env {
                let name = var_name(entry);
                let value = split_entry(entry).1;
                if obs.legacy_vars.contains(&name) {
                    v.violations.push(format!(
                        "{} inherited the legacy variable {name} (it must be unset in a child's environment)",
                        who(p)
                    ));
                } else if obs.stale_file_vars.contains(&name) && value == decoy {
                    v.violations.push(format!(
                        "{} inherited the stale {name}, still naming the decoy file parity planted",
                        who(p)
                    ));
                } else if let Some(enc) = obs.secrets.legacy.find(entry) {
                    v.violations.push(format!(
                        "{} has {} in its environment variable {name} ({enc})",
                        who(p),
                        Which::Legacy.placeholder()
                    ));
                }
            }
        }
    }
    missed_unreadable(obs, &mut v);
    v.evidence.push(format!(
        "planted: {} with {}; {} naming a decoy file",
        obs.legacy_vars.join(", "),
        Which::Legacy.placeholder(),
        obs.stale_file_vars.join(", ")
    ));
    v.finish(
        "inherited variables",
        "no descendant inherited a legacy or stale variable".into(),
    )
}

fn judge_output(obs: &Observation) -> Finding {
    let mut v = Tally::new(obs);
    for (name, s) in [("stdout", &obs.stdout), ("stderr", &obs.stderr)] {
        for (i, line) in s.bytes.split(|b| *b == b'\n').enumerate() {
            let found = obs
                .secrets
                .find(line, &[Which::Current, Which::Rotated, Which::Legacy]);
            if let Some((w, enc)) = found.first() {
                let text = obs.secrets.redact(&String::from_utf8_lossy(line));
                v.violations.push(format!(
                    "the host's {name} line {} carries {} ({enc}): {}",
                    i + 1,
                    w.placeholder(),
                    crate::base::util::clip(text.trim_end(), 200)
                ));
            }
        }
        if s.dropped > 0 {
            v.unreadable.push(format!(
                "{} bytes of {name} past the {} MiB cap were not searched",
                s.dropped,
                OUTPUT_CAP / (1024 * 1024)
            ));
        }
    }
    v.finish(
        "lines",
        format!(
            "{} bytes of stdout and {} of stderr searched: no canary",
            obs.stdout.bytes.len(),
            obs.stderr.bytes.len()
        ),
    )
}

/// The credential files and the states the file checks judge: (file, phase, state).
fn states(obs: &Observation) -> Vec<(&CredFile, &'static str, &FileState)> {
    let mut v = Vec::new();
    for f in &obs.files {
        if let Some(s) = &f.settled {
            v.push((f, "once settled", s));
        }
        if let Some(s) = &f.rotated {
            v.push((f, "after rotation", s));
        }
    }
    v
}

fn no_files(obs: &Observation) -> Finding {
    Finding {
        status: Status::Skip(
            "no descendant's environment named a credential file (a `*_FILE` variable, or one of `file_vars`)".into(),
        ),
        evidence: head(obs),
    }
}

fn file_line(obs: &Observation, f: &CredFile) -> String {
    format!(
        "{} (named by {} of pid {} `{}`)",
        place(obs, &f.path),
        f.var,
        f.pid,
        crate::base::util::clip(&f.argv0, 80)
    )
}

fn judge_file_handed(obs: &Observation) -> Finding {
    let n = descendants(obs).count();
    if !obs.files.is_empty() {
        let mut ev = head(obs);
        ev.extend(obs.files.iter().map(|f| file_line(obs, f)));
        ev.push(format!(
            "{} credential file(s) handed to {n} descendant(s)",
            obs.files.len()
        ));
        return Finding::pass(ev);
    }
    if n == 0 && matches!(obs.method, Method::Poll { .. }) {
        return Finding::not_run(
            "no child of the host was seen; under polling a child shorter than the interval can be missed entirely, so this cannot be judged",
            head(obs),
        );
    }
    if n == 0 {
        return Finding::violated(
            "the host started no child during the run, so none was handed a credential file: nothing shows the host keeps the token out of its children (declare a command that starts its child, docs/hygiene.md)".to_owned(),
            head(obs),
        );
    }
    let mut v = Tally::new(obs);
    for p in descendants(obs) {
        for img in &p.images {
            match &img.env {
                Err(e) => v.unreadable.push(format!("{}: {e}", who(p))),
                Ok(env) => {
                    // Passing on the file parity delivered (file channel) is a path too.
                    let names_delivered = obs.delivered.as_ref().is_some_and(|d| {
                        env.iter().any(|e| {
                            let (name, value) = split_entry(e);
                            let file_var = name.ends_with(b"_FILE")
                                || obs.file_vars.iter().any(|v| v.as_bytes() == name);
                            file_var && value == d.as_os_str().as_bytes()
                        })
                    });
                    if names_delivered {
                        let mut ev = head(obs);
                        ev.push(format!(
                            "{} was handed the path of the file parity delivered the header in",
                            who(p)
                        ));
                        return Finding::pass(ev);
                    }
                }
            }
        }
    }
    missed_unreadable(obs, &mut v);
    if !v.unreadable.is_empty() {
        return v.finish("processes", String::new());
    }
    v.violations.push(format!(
        "none of the host's {n} descendant(s) was handed a credential file: no environment names one in a `*_FILE` variable or one of `file_vars`"
    ));
    v.finish("processes", String::new())
}

/// Runs `judge` on every state of every credential file that existed (settled and after
/// rotation). A file missing once the tree settled is reported through `missing` (a file gone
/// after rotation is `hygiene.rotation`'s finding). `None` when no file was handed (skip).
fn each_existing_state(
    obs: &Observation,
    missing: impl Fn(&mut Tally, String),
    mut judge: impl FnMut(&mut Tally, &CredFile, &'static str, &FileState),
) -> Option<Tally> {
    if obs.files.is_empty() {
        return None;
    }
    let mut v = Tally::new(obs);
    for (f, phase, s) in states(obs) {
        if s.exists {
            judge(&mut v, f, phase, s);
        } else if phase == "once settled" {
            missing(&mut v, file_line(obs, f));
        }
    }
    Some(v)
}

fn judge_file_mode(obs: &Observation) -> Finding {
    let missing = |v: &mut Tally, file: String| {
        v.violations.push(format!(
            "{file} names a file that does not exist once settled"
        ))
    };
    let Some(mut v) = each_existing_state(obs, missing, |v, f, phase, s| {
        if s.symlink || !s.regular {
            v.violations.push(format!(
                "{} is not a regular file {phase}",
                file_line(obs, f)
            ));
        } else if s.uid != obs.uid {
            v.violations.push(format!(
                "{} is owned by uid {}, not the user ({}) {phase}",
                file_line(obs, f),
                s.uid,
                obs.uid
            ));
        } else if s.mode != 0o600 {
            v.violations.push(format!(
                "{} has mode {:04o}, not 0600, {phase}",
                file_line(obs, f),
                s.mode
            ));
        }
    }) else {
        return no_files(obs);
    };
    for f in &obs.files {
        v.evidence.push(file_line(obs, f));
    }
    v.finish(
        "files",
        format!(
            "{} credential file(s): regular, the user's, 0600",
            obs.files.len()
        ),
    )
}

fn judge_dir_mode(obs: &Observation) -> Finding {
    let missing = |v: &mut Tally, file: String| {
        v.unreadable.push(format!(
            "{file} did not exist once settled: its directory was not judged"
        ))
    };
    let Some(v) = each_existing_state(obs, missing, |v, f, phase, s| {
        let dir = f
            .path
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        if s.dir_shared {
            v.violations.push(format!(
                "{} sits directly in the shared directory {dir}, not in a private directory of its own",
                file_line(obs, f)
            ));
            return;
        }
        match s.dir {
            None => v
                .unreadable
                .push(format!("the directory {dir} could not be read {phase}")),
            Some((uid, _)) if uid != obs.uid => v.violations.push(format!(
                "its directory {dir} is owned by uid {uid}, not the user, {phase}"
            )),
            Some((_, mode)) if mode != 0o700 => v.violations.push(format!(
                "{} sits in {dir}, which has mode {mode:04o}, not 0700, {phase}",
                file_line(obs, f)
            )),
            Some(_) => {}
        }
    }) else {
        return no_files(obs);
    };
    v.finish(
        "directories",
        format!(
            "{} credential file(s), each in a private 0700 directory of the user's",
            obs.files.len()
        ),
    )
}

fn judge_file_content(obs: &Observation) -> Finding {
    if obs.files.is_empty() {
        return no_files(obs);
    }
    let mut v = Tally::new(obs);
    for f in &obs.files {
        let Some(s) = &f.settled else { continue };
        if !s.exists && obs.ended_early.is_some() {
            v.unreadable.push(format!(
                "{} was gone: the host had already ended ({})",
                file_line(obs, f),
                obs.ended_early.as_deref().unwrap_or("")
            ));
            continue;
        }
        if !s.exists {
            v.violations.push(format!(
                "{} does not exist once the tree settled",
                file_line(obs, f)
            ));
            continue;
        }
        match &s.content {
            Content::Header(Which::Current) => {}
            Content::Header(w) => v.violations.push(format!(
                "{} holds the header of {}, not the delivered one",
                file_line(obs, f),
                w.placeholder()
            )),
            Content::Other(d) => v
                .violations
                .push(format!("{} holds {d}", file_line(obs, f))),
            Content::Unreadable(e) => v
                .unreadable
                .push(format!("{} could not be read: {e}", file_line(obs, f))),
        }
    }
    v.finish(
        "files",
        format!(
            "{} credential file(s) hold exactly the delivered header",
            obs.files.len()
        ),
    )
}

fn place(obs: &Observation, p: &Path) -> String {
    if let Ok(rest) = p.strip_prefix(&obs.tmp_root) {
        format!("$TMPDIR/{}", rest.display())
    } else if let Ok(rest) = p.strip_prefix(&obs.cwd_root) {
        format!("$CWD/{}", rest.display())
    } else {
        p.display().to_string()
    }
}

fn judge_stray_copy(obs: &Observation) -> Finding {
    let mut v = Tally::new(obs);
    let mut seen = std::collections::HashSet::new();
    for s in &obs.scans {
        for (path, w, enc) in &s.hits {
            if seen.insert((path.clone(), *w)) {
                v.violations.push(format!(
                    "{} holds {} ({enc}), found {}",
                    place(obs, path),
                    w.placeholder(),
                    s.phase
                ));
            }
        }
        // A partial search cannot show that no copy exists: `not-run`, unless one was found.
        if s.skipped_large > 0 {
            v.unreadable.push(format!(
                "{}: {} file(s) over {} MiB not searched",
                s.phase,
                s.skipped_large,
                SCAN_FILE_CAP / (1024 * 1024)
            ));
        }
        if s.unreadable > 0 {
            v.unreadable.push(format!(
                "{}: {} file(s) could not be read",
                s.phase, s.unreadable
            ));
        }
        if s.truncated {
            v.unreadable.push(format!(
                "{}: stopped after {SCAN_ENTRY_CAP} directory entries, the rest not searched",
                s.phase
            ));
        }
    }
    v.finish(
        "files",
        format!(
            "$TMPDIR, $CWD and the credential directories searched {} time(s): no other file holds a canary",
            obs.scans.len()
        ),
    )
}

fn judge_rotation(obs: &Observation) -> Finding {
    let (waited_ms, deadline_ms) = match &obs.rotation {
        RotationObs::NotDeclared => {
            return Finding::skip("the target declares no rotation hook (`rotation = \"none\"`)")
        }
        RotationObs::NoFiles => return no_files(obs),
        RotationObs::NotAttempted(why) => return Finding::not_run(why.clone(), head(obs)),
        RotationObs::Done {
            waited_ms,
            deadline_ms,
        } => (*waited_ms, *deadline_ms),
    };
    let mut v = Tally::new(obs);
    for f in &obs.files {
        let (Some(before), Some(after)) = (&f.settled, &f.rotated) else {
            continue;
        };
        if !after.exists {
            let moved: Vec<String> = obs
                .scans
                .iter()
                .flat_map(|s| s.hits.iter())
                .filter(|(_, w, _)| *w == Which::Rotated)
                .map(|(p, _, _)| place(obs, p))
                .collect();
            let whereto = if moved.is_empty() {
                String::new()
            } else {
                format!("; the new header went to {}", moved.join(", "))
            };
            v.violations.push(format!(
                "{} is gone after the rotation: the path moved{whereto}",
                file_line(obs, f)
            ));
            continue;
        }
        match &after.content {
            Content::Header(Which::Rotated) => {
                if before.exists && before.ino == after.ino {
                    v.violations.push(format!(
                        "{} took the new header in place (same inode {}): a reader may see it partly written; write `<path>.tmp` and rename it over the file",
                        file_line(obs, f),
                        after.ino
                    ));
                }
            }
            Content::Header(Which::Current) => v.violations.push(format!(
                "{} still holds the previous header {deadline_ms} ms after the rotation hook",
                file_line(obs, f)
            )),
            Content::Header(w) => v.violations.push(format!(
                "{} holds the header of {} after the rotation",
                file_line(obs, f),
                w.placeholder()
            )),
            Content::Other(d) => v.violations.push(format!(
                "{} holds {d} after the rotation",
                file_line(obs, f)
            )),
            Content::Unreadable(e) => v
                .unreadable
                .push(format!("{} could not be read: {e}", file_line(obs, f))),
        }
    }
    v.finish(
        "files",
        format!(
            "{} credential file(s) kept their path and took the new header through a rename within {waited_ms} ms",
            obs.files.len()
        ),
    )
}

fn judge_cleanup_tmp(obs: &Observation) -> Finding {
    if obs.files.is_empty() {
        return no_files(obs);
    }
    let mut v = Tally::new(obs);
    for f in &obs.files {
        let tmp = place(obs, &tmp_of(&f.path));
        for (phase, left) in [
            ("once settled", f.settled.as_ref().map(|s| s.tmp_exists)),
            ("after rotation", f.rotated.as_ref().map(|s| s.tmp_exists)),
            ("after shutdown", f.after_shutdown.map(|(_, _, t)| t)),
        ] {
            if left == Some(true) {
                v.violations.push(format!("{tmp} is left behind {phase}"));
            }
        }
    }
    v.finish(
        "leftovers",
        format!("no `.tmp` beside {} credential file(s)", obs.files.len()),
    )
}

fn judge_cleanup_files(obs: &Observation) -> Finding {
    if obs.files.is_empty() {
        return no_files(obs);
    }
    let mut v = Tally::new(obs);
    v.evidence.extend(obs.shutdown_steps.iter().cloned());
    for f in &obs.files {
        let Some((file, dir, _)) = f.after_shutdown else {
            continue;
        };
        if file {
            v.violations
                .push(format!("{} still exists after shutdown", file_line(obs, f)));
        }
        if dir {
            let d = f.path.parent().map(|d| place(obs, d)).unwrap_or_default();
            v.violations
                .push(format!("its directory {d} still exists after shutdown"));
        }
    }
    v.finish(
        "leftovers",
        format!(
            "{} credential file(s) and their directories are gone after shutdown",
            obs.files.len()
        ),
    )
}

fn judge_cleanup_descendants(obs: &Observation) -> Finding {
    let mut v = Tally::new(obs);
    v.evidence.extend(obs.shutdown_steps.iter().cloned());
    for (pid, argv0) in &obs.leftovers {
        v.violations.push(format!(
            "pid {pid} (`{}`) was still running after the host ended",
            crate::base::util::clip(argv0, 80)
        ));
    }
    v.finish(
        "processes",
        format!(
            "{} descendant(s), none left after the host ended",
            descendants(obs).count()
        ),
    )
}

// -------------------------------------------------------------------------------------------
// Running the profile
// -------------------------------------------------------------------------------------------

/// Overrides of the declarations from the command line.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The host command (`-- CMD…`).
    pub command: Vec<String>,
    /// `--no-ptrace`.
    pub no_ptrace: bool,
    /// `--poll-ms N`.
    pub poll_ms: Option<u64>,
}

/// Runs the hygiene checks selected by `opts` against the host of `decl` (with `over`
/// applied), as cases `check@host#v1`. A host that could not be observed gives no case and the
/// reason in `could_not_run`.
pub async fn run_hygiene(
    name: &str,
    decl: &HygieneDecl,
    over: &Overrides,
    opts: &RunOptions,
) -> RunReport {
    use crate::engine::run::{case_id, to_result};
    let started = Instant::now();
    let mut report = RunReport {
        target: name.to_owned(),
        ..RunReport::default()
    };
    let planned: Vec<(Check, JudgeFn)> = checks()
        .into_iter()
        .filter(|(c, _)| opts.selection.selects(&case_id(BINDING, c.id, REVISION)))
        .collect();
    if planned.is_empty() {
        return report;
    }
    let mut decl = decl.clone();
    if over.no_ptrace {
        decl.ptrace = false;
    }
    if let Some(ms) = over.poll_ms {
        decl.poll_ms = ms.max(1);
    }
    let command = if over.command.is_empty() {
        match decl
            .command
            .as_deref()
            .map(crate::transport::peer::split_words)
            .transpose()
        {
            Ok(Some(words)) => words,
            Ok(None) => Vec::new(),
            Err(e) => {
                report.could_not_run.push(format!("[hygiene] command: {e}"));
                return report;
            }
        }
    } else {
        over.command.clone()
    };
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            report
                .could_not_run
                .push(format!("cannot find this executable: {e}"));
            return report;
        }
    };
    opts.control.planned(planned.len());
    let probe = Probe {
        decl,
        command,
        timing: opts.timing,
        exe,
    };
    let observed = tokio::task::spawn_blocking(move || observe(&probe)).await;
    let obs = match observed {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            report
                .could_not_run
                .push(format!("the host could not be observed: {e}"));
            report.duration_ms = started.elapsed().as_millis() as u64;
            return report;
        }
        Err(e) => {
            report
                .could_not_run
                .push(format!("the hygiene probe failed: {e}"));
            return report;
        }
    };
    report.eras.insert(BINDING.into(), REVISION.into());
    report
        .notes
        .push(format!("hygiene tracking: {}", obs.method.describe()));
    if let Some(e) = &obs.ended_early {
        let tail: Vec<String> = String::from_utf8_lossy(&obs.stderr.bytes)
            .lines()
            .rev()
            .take(3)
            .map(|l| crate::base::util::clip(&obs.secrets.redact(l), 200))
            .collect();
        report.notes.push(format!(
            "hygiene: the host ended ({e}) before the tree settled; its last stderr lines: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ));
    }
    let missed = obs.procs.iter().filter(|p| p.missed).count();
    if missed > 0 {
        report.notes.push(format!(
            "hygiene: {missed} process(es) ended before polling could read them"
        ));
    }
    for (check, f) in planned {
        let finding = f(&obs);
        let mut r = to_result(BINDING, &check, REVISION, finding, obs.duration_ms);
        r.message = obs.secrets.redact(&r.message);
        r.evidence = r.evidence.iter().map(|e| obs.secrets.redact(e)).collect();
        opts.control.finished(&r);
        report.cases.push(r);
    }
    report.notes = report.notes.iter().map(|n| obs.secrets.redact(n)).collect();
    report.duration_ms = started.elapsed().as_millis() as u64;
    report
}

/// The `hygiene` profile of `parity run`: the target's `[hygiene]`.
///
/// Errors: the target has no `[hygiene]`.
pub async fn run_profile(
    target: &crate::engine::target::Target,
    opts: &RunOptions,
) -> Result<RunReport, String> {
    let decl = target
        .hygiene
        .as_ref()
        .ok_or("the target has no [hygiene]")?;
    let name = match &decl.command {
        Some(c) => c.clone(),
        None => target.name.clone(),
    };
    Ok(run_hygiene(&name, decl, &Overrides::default(), opts).await)
}

/// The selftest's runs: each faulty host with the checks it must fail, and the clean
/// reference with every hygiene check. (fault name or `None` for the reference, report).
pub async fn selftest_runs(
    cx: &crate::engine::selftest::SelftestContext,
) -> Vec<(Option<&'static str>, RunReport)> {
    let exe = cx.exe.clone();
    // Four hosts at a time: each probe waits on time (settle, rotation, shutdown), not CPU.
    let sem = Arc::new(tokio::sync::Semaphore::new(4));
    let mut set = tokio::task::JoinSet::new();
    for f in parity_fakes::host_catalogue() {
        let Some(o) = cx.options(f.checks) else {
            continue;
        };
        let decl = fake_host_decl(&exe, f.name);
        let name = f.name;
        let sem = sem.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (
                Some(name),
                run_hygiene(
                    &format!("parity fake-host {name}"),
                    &decl,
                    &Overrides::default(),
                    &o,
                )
                .await,
            )
        });
    }
    if let Some(o) = cx.options(&[]) {
        let decl = reference_decl(&exe);
        let sem = sem.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (
                None,
                run_hygiene(
                    "parity reference launch -- parity reference bridge",
                    &decl,
                    &Overrides::default(),
                    &o,
                )
                .await,
            )
        });
    }
    let mut out = Vec::new();
    while let Some(j) = set.join_next().await {
        if let Ok(r) = j {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn canaries_are_found_in_every_encoding_and_redacted() {
        use base64::Engine as _;
        let s = Secrets::new().unwrap();
        let tok = s.current.token.clone();
        assert!(tok.starts_with("PARITYCANARY") && tok.len() == 44);
        // A clipped token leaves no fragment behind.
        let cut = &tok[..20];
        assert_eq!(
            redact_fragments(&format!("log: {cut}… and PARITYCANARY")),
            "log: [CANARY-PART]… and [CANARY-PART]"
        );
        for pad in ["", "x", "xy"] {
            let raw = format!("{pad}Bearer {tok}\n");
            for enc in [
                base64::engine::general_purpose::STANDARD.encode(&raw),
                base64::engine::general_purpose::URL_SAFE.encode(&raw),
            ] {
                assert!(s.current.find(enc.as_bytes()).is_some(), "{enc}");
                let red = s.redact(&format!("X={enc}"));
                assert!(s.current.find(red.as_bytes()).is_none(), "{red}");
                assert!(red.contains("[CANARY:base64"), "{red}");
            }
        }
        let red = s.redact(&format!("Authorization: Bearer {tok} {}", s.legacy.token));
        assert_eq!(red, "Authorization: Bearer [CANARY] [CANARY-LEGACY]");
        assert!(s.current.find(b"Bearer PARITYCANARY").is_none());
    }

    #[test]
    fn templates_fill_token_and_header() {
        assert_eq!(render("Bearer {token}", "T", ""), "Bearer T");
        assert_eq!(
            render("rotate {header}", "T", "Bearer T"),
            "rotate Bearer T"
        );
    }

    /// A quiet observation under polling: the host and one child that executed `idle` with a
    /// clean environment.
    fn polled_obs() -> Observation {
        let proc_ = |pid: i32, host: bool| Proc {
            pid,
            ppid: 1,
            host,
            thread: false,
            first_ms: 0,
            first_argv: None,
            images: vec![crate::transport::proctrack::Image {
                at_ms: 1,
                argv: Ok(vec![b"idle".to_vec()]),
                env: Ok(vec![b"PATH=/bin".to_vec()]),
                env_vars: 1,
            }],
            exit_ms: None,
            exit: None,
            missed: false,
            start_ticks: 0,
        };
        Observation {
            method: Method::Poll {
                interval: Duration::from_millis(5),
                reason: "test".into(),
            },
            host_pid: 10,
            procs: vec![proc_(10, true), proc_(11, false)],
            secrets: Secrets::new().unwrap(),
            legacy_vars: vec![],
            stale_file_vars: vec![],
            decoy: PathBuf::from("/nonexistent/decoy"),
            delivered: None,
            file_vars: vec![],
            tmp_root: PathBuf::from("/nonexistent/tmp"),
            cwd_root: PathBuf::from("/nonexistent/cwd"),
            uid: 0,
            files: vec![],
            scans: vec![Scan {
                phase: "settled",
                hits: vec![],
                skipped_large: 0,
                unreadable: 0,
                truncated: false,
            }],
            rotation: RotationObs::NotDeclared,
            shutdown_steps: vec![],
            host_exit: None,
            ended_early: None,
            leftovers: vec![],
            stdout: Stream::default(),
            stderr: Stream::default(),
            duration_ms: 1,
        }
    }

    fn is_not_run(f: &Finding) -> bool {
        matches!(f.status, Status::NotRun(_))
    }

    #[test]
    fn a_process_polling_missed_makes_the_process_checks_not_run() {
        let mut obs = polled_obs();
        assert_eq!(judge_env_child(&obs).status, Status::Pass);
        assert_eq!(judge_legacy(&obs).status, Status::Pass);
        // A third process, seen but gone before it could be read.
        let mut gone = obs.procs[1].clone();
        gone.pid = 12;
        gone.images.clear();
        gone.missed = true;
        obs.procs.push(gone);
        for f in [judge_env_child(&obs), judge_legacy(&obs), judge_argv(&obs)] {
            assert!(is_not_run(&f), "{f:?}");
            assert!(f.evidence.iter().any(|e| e.contains("pid 12")), "{f:?}");
        }
        // A violation still fails, missed process or not.
        let tok = obs.secrets.current.token.clone();
        obs.procs[1].images[0].env = Ok(vec![format!("X=Bearer {tok}").into_bytes()]);
        assert!(matches!(judge_env_child(&obs).status, Status::Violated(_)));
    }

    #[test]
    fn a_partial_search_for_stray_copies_is_not_a_pass() {
        let obs = polled_obs();
        assert_eq!(judge_stray_copy(&obs).status, Status::Pass);
        for tweak in [
            (|s: &mut Scan| s.truncated = true) as fn(&mut Scan),
            |s: &mut Scan| s.skipped_large = 1,
            |s: &mut Scan| s.unreadable = 2,
        ] {
            let mut o = obs.clone();
            tweak(&mut o.scans[0]);
            let f = judge_stray_copy(&o);
            assert!(is_not_run(&f), "{f:?}");
            // A copy found in the part that was searched still fails.
            o.scans[0]
                .hits
                .push((PathBuf::from("/nonexistent/tmp/x"), Which::Current, "raw"));
            assert!(matches!(judge_stray_copy(&o).status, Status::Violated(_)));
        }
    }

    #[test]
    fn a_host_that_hands_no_file_fails_rule_48() {
        let mut obs = polled_obs();
        let f = judge_file_handed(&obs);
        assert!(
            matches!(&f.status, Status::Violated(m) if m.contains("none of the host's 1")),
            "{f:?}"
        );
        // Handing the file parity delivered (file channel) is handing a path.
        obs.delivered = Some(PathBuf::from("/nonexistent/delivered"));
        obs.procs[1].images[0].env = Ok(vec![b"MY_FILE=/nonexistent/delivered".to_vec()]);
        assert_eq!(judge_file_handed(&obs).status, Status::Pass);
        // In a declared variable too.
        obs.procs[1].images[0].env = Ok(vec![b"AUTH_PATH=/nonexistent/delivered".to_vec()]);
        assert!(matches!(
            judge_file_handed(&obs).status,
            Status::Violated(_)
        ));
        obs.file_vars = vec!["AUTH_PATH".into()];
        assert_eq!(judge_file_handed(&obs).status, Status::Pass);
        // No child seen: under polling it may have been missed (not-run); traced, it fails.
        obs.procs.truncate(1);
        assert!(is_not_run(&judge_file_handed(&obs)));
        obs.method = Method::Ptrace;
        assert!(matches!(
            judge_file_handed(&obs).status,
            Status::Violated(m) if m.contains("started no child")
        ));
    }

    #[test]
    fn every_check_has_a_hygiene_section() {
        for c in catalogue() {
            assert!(c.section.starts_with("hygiene#"), "{}", c.id);
            assert!(c.id.starts_with("hygiene."), "{}", c.id);
        }
    }
}
