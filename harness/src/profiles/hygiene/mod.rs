//! The hygiene probe and the `hygiene` profile of `parity run` (seed rules 38–57, fault classes
//! B19 and B20; `docs/hygiene.md`); `parity hygiene [--target FILE] [-- CMD…]` is
//! `crate::cli::hygiene`, and the `[hygiene]` declarations are [`crate::engine::decl`].
//!
//! It proves from outside that a host which launches children keeps a bearer token out of
//! their environments, argv, its own output and loose files, hands them a private file instead,
//! rotates that file in place and removes everything when it stops:
//!
//! 1. A random canary (`PARITYCANARY` + 32 hex digits) becomes the token of the header the
//!    target declares (default `Bearer {token}`, the delivered form), delivered through the
//!    declared channel: an environment variable (default `PARITY_MCP_AUTHORIZATION`), a stdin
//!    line, or a file parity writes (its path in a variable or in the command's
//!    `{credential_file}`). What the host's credential files must hold is the stored form
//!    (`stored`, default the same). A second canary is planted in the legacy raw-credential
//!    variables, and a decoy file holding it is named by the stale file variables the target
//!    declares (none by default). The host gets a fresh private `TMPDIR` and working directory.
//! 2. [`crate::transport::proctrack`] follows the whole tree (ptrace, or subreaper plus `/proc` polling)
//!    and reads every process's argv and environment at every exec.
//! 3. Once the tree is quiet, every file a descendant's `*_FILE` variable (or a declared one)
//!    names is inspected, and the temp and working directories are searched for copies.
//! 4. The rotation hook delivers a third canary; the files must keep their paths and take the
//!    stored form of the new token. Then the stdio shutdown sequence (close stdin, wait, SIGTERM, wait, SIGKILL)
//!    and a last look: files, directories, `.tmp` and descendants must all be gone.
//!
//! Each canary is searched raw, URL-encoded and base64-encoded (standard and URL-safe
//! alphabets, at each of the three alignments), and replaced by a placeholder (`[CANARY]`,
//! `[CANARY-ROTATED]`, `[CANARY-LEGACY]`) in every message, evidence line and note.
//!
//! Every verdict's message names the rule it rests on ([`rests_on`]), and every `not-run` and
//! `timeout` message the [`step`] that could not read or was waiting.
//!
//! Size (2860 lines, 370 of them tests): the probe (canaries, delivery, the traced run, files,
//! stray copies, rotation and the shutdown sequence) and the fourteen checks that judge one
//! observation share its types; the probe and the judges are the split to make when the file
//! grows again.

mod profile;
pub use profile::HygieneProfile;

use crate::engine::check::{Check, Finding, Level, Revs, Status, Timing};
pub use crate::engine::decl::{
    hygiene_reference as reference_decl, Delivery, HygieneDecl, Rotation, DEFAULT_HEADER,
    DEFAULT_LEGACY, DEFAULT_ROTATION_LINE, DEFAULT_VARIABLE, REFERENCE_ENDPOINT,
    REFERENCE_STALE_FILE_VARS,
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

/// A faulty or benign host of the zoo as a hygiene target: `parity fake-host <name>` (its child
/// is the idle helper), under the reference's declarations (the zoo follows the reference
/// launcher's contract, so the seed host's stale file variables are planted too).
pub fn fake_host_decl(exe: &str, name: &str) -> HygieneDecl {
    HygieneDecl {
        command: Some(format!(
            "{} fake-host {name}",
            crate::engine::target::shell_quote(exe)
        )),
        env: vec![("PARITY_MCP_ENDPOINT".into(), REFERENCE_ENDPOINT.into())],
        stale_file_vars: REFERENCE_STALE_FILE_VARS
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..HygieneDecl::default()
    }
}

/// A benign host of the zoo as a hygiene target: [`fake_host_decl`] with what it declares (its
/// stored form) and the variables its parent hands it.
pub fn benign_host_decl(exe: &str, b: &parity_fakes::HostBenign) -> HygieneDecl {
    let mut d = fake_host_decl(exe, b.name);
    d.stored = b.stored.map(str::to_owned);
    d.env
        .extend(b.env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    d
}

/// The steps of a probe, as the messages of `not-run` and `timeout` verdicts (and the reasons a
/// host could not be observed) name the one that was waiting or failed.
pub mod step {
    /// Making the canaries and the private directories, before the host starts.
    pub const PREPARE: &str = "preparing the probe";
    /// Starting the host under the tracker.
    pub const SPAWN: &str = "spawning the host";
    /// Waiting until a descendant executed and the tree was quiet for `settle_ms`.
    pub const SETTLE: &str = "waiting for the tree to settle";
    /// Reading every process's argv and environment at its exec, for the whole run.
    pub const TRACK: &str = "following the tree";
    /// Reading the credential files' metadata and bytes.
    pub const INSPECT: &str = "inspecting the credential files";
    /// Searching `$TMPDIR`, the working directory and the credential directories.
    pub const SEARCH: &str = "searching for stray copies";
    /// Delivering the rotated token and waiting for every credential file to take it.
    pub const ROTATION: &str = "rotation";
    /// The stdio shutdown sequence and the linger time that follows it.
    pub const SHUTDOWN: &str = "shutdown";
    /// Reading the host's stdout and stderr.
    pub const OUTPUT: &str = "reading the host's output";
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
    /// Exactly the stored form of this canary ([`HygieneDecl::stored_form`] filled in).
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
    /// Declared stale file variables (planted naming [`Observation::decoy`]).
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
    /// The start-up budget, in milliseconds, when it ran out while the host was still running
    /// and no descendant had executed (`None`: a descendant executed, or the host ended).
    pub settle_timed_out: Option<u64>,
    /// The shutdown sequence had to send SIGKILL: the host ignored stdin EOF and SIGTERM, so it
    /// never got to close its scope, and what it removes at exit cannot be judged.
    pub killed: bool,
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
/// Errors (the run could not happen), each naming its [`step`]: no command, no random
/// source, the scratch directories cannot be made, the host cannot start, or it ended with a
/// failure status before the tree settled and started no child (the message carries its status
/// and last stderr line, redacted).
pub fn observe(probe: &Probe) -> Result<Observation, String> {
    let decl = &probe.decl;
    let Some((program, args)) = probe.command.split_first() else {
        return Err(format!(
            "{}: no host command: give `-- CMD…` or `[hygiene] command`",
            step::PREPARE
        ));
    };
    let prepare = |e: String| format!("{}: {e}", step::PREPARE);
    let started = Instant::now();
    let secrets = Secrets::new().map_err(prepare)?;
    // The delivered form (what the host is handed) and the stored form (what the files it
    // hands its children must hold) of each token.
    let header = render(&decl.header, &secrets.current.token, "");
    let legacy_header = render(&decl.header, &secrets.legacy.token, "");
    let stored = |t: &str| render(decl.stored_form(), t, "");
    let scratch = tempfile::Builder::new()
        .prefix("parity-hygiene-")
        .tempdir()
        .map_err(|e| prepare(format!("cannot create a temporary directory: {e}")))?;
    let tmp_root = scratch.path().join("tmp");
    mkdir_private(&tmp_root).map_err(prepare)?;
    let cwd_root = match &decl.cwd {
        Some(c) => c.clone(),
        None => {
            let c = scratch.path().join("cwd");
            mkdir_private(&c).map_err(prepare)?;
            c
        }
    };
    // The decoy: a stale credential file, as a parent's store would have left it.
    let decoy_dir = scratch.path().join("decoy");
    mkdir_private(&decoy_dir).map_err(prepare)?;
    let decoy = decoy_dir.join("authorization");
    write_private(&decoy, stored(&secrets.legacy.token).as_bytes()).map_err(prepare)?;
    let delivered = match &decl.delivery {
        Delivery::File { .. } => {
            let d = scratch.path().join("delivered");
            mkdir_private(&d).map_err(prepare)?;
            let f = d.join("authorization");
            write_private(&f, header.as_bytes()).map_err(prepare)?;
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
        keep_env: Some(env_filter(decl, &secrets, &decoy)),
    })
    .map_err(|e| format!("{}: {e}", step::SPAWN))?;
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
    // A descendant has executed (a fork that never did is the host's own code).
    let executed = |t: &Tracker| {
        t.procs()
            .iter()
            .any(|p| !p.host && !p.thread && !p.images.is_empty())
    };
    while tracker.host_exit().is_none() && Instant::now() < until && !executed(&tracker) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // The budget ran out while the host kept running without a child: a missing answer.
    let settle_timed_out =
        (tracker.host_exit().is_none() && !executed(&tracker)).then_some(budget.as_millis() as u64);
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
                "{}: the host ended ({exit}) before it started any child; its last stderr line: {}",
                step::SETTLE,
                crate::base::util::clip(&secrets.redact(&last), 300)
            )));
        }
    }
    let forms: Vec<Form> = [Which::Current, Which::Rotated, Which::Legacy]
        .into_iter()
        .map(|w| {
            let token = &secrets.get(w).token;
            Form {
                which: w,
                stored: stored(token),
                delivered: render(&decl.header, token, ""),
                token: token.clone(),
            }
        })
        .collect();
    let ctx = FileCtx {
        secrets: &secrets,
        forms: &forms,
        header_template: &decl.header,
        stored_template: decl.stored_form(),
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
        RotationObs::NotAttempted(format!(
            "{}: the host had ended before the rotation hook could be used ({})",
            step::ROTATION,
            tracker.host_exit().unwrap_or_default()
        ))
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
                None => Err(
                    "the host's stdin is closed, so the rotation line could not be written".into(),
                ),
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
            Err(e) => RotationObs::NotAttempted(format!("{}: {e}", step::ROTATION)),
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
    let mut killed = false;
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
            killed = true;
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
        settle_timed_out,
        killed,
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
/// (`hygiene.legacy`, `hygiene.stale-file`), any entry whose value is the decoy's path, under
/// whatever name (`hygiene.stale-file`), and any entry carrying a canary in any encoding
/// (`hygiene.env.child`).
fn env_filter(
    decl: &HygieneDecl,
    secrets: &Secrets,
    decoy: &Path,
) -> crate::transport::proctrack::EnvFilter {
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
    let decoy = decoy.as_os_str().as_bytes().to_vec();
    crate::transport::proctrack::EnvFilter(std::sync::Arc::new(move |entry: &[u8]| {
        let (name, value) = split_entry(entry);
        name.ends_with(b"_FILE")
            || names.contains(name)
            || value == decoy.as_slice()
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

/// One canary's forms: what a credential file must hold, what the host was handed, the bare
/// token.
struct Form {
    which: Which,
    /// [`HygieneDecl::stored_form`] filled in: what a credential file must hold.
    stored: String,
    /// [`HygieneDecl::header`] filled in: what the host is handed.
    delivered: String,
    /// The token itself.
    token: String,
}

/// What the file inspections need to know.
struct FileCtx<'a> {
    secrets: &'a Secrets,
    forms: &'a [Form],
    /// The delivered template (`header`), for messages: it holds no canary.
    header_template: &'a str,
    /// The stored template (`stored`, else `header`), for messages.
    stored_template: &'a str,
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

    /// What the bytes at `path` are: exactly a canary's stored form, or something else said
    /// without the bytes (a stored form with a newline, the delivered form or the bare token
    /// where the stored form differs, a canary among other bytes, or none).
    fn content_of(&self, path: &Path) -> Content {
        let bytes = match read_regular_capped(path) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Content::Other(format!(
                    "over {SCAN_FILE_CAP} bytes (too large to be the stored header)"
                ))
            }
            Err(e) => return Content::Unreadable(e.to_string()),
        };
        let is = |form: &str, newline: bool| {
            bytes.len() == form.len() + usize::from(newline)
                && bytes.starts_with(form.as_bytes())
                && (!newline || bytes.ends_with(b"\n"))
        };
        for f in self.forms {
            if is(&f.stored, false) {
                return Content::Header(f.which);
            }
        }
        let stored = self.stored_template;
        for f in self.forms {
            let ph = f.which.placeholder();
            if is(&f.stored, true) {
                return Content::Other(format!(
                    "the stored header (`{stored}`) of {ph} followed by a newline"
                ));
            }
            if f.delivered != f.stored && is(&f.delivered, false) {
                return Content::Other(format!(
                    "the header of {ph} as delivered (`{}`), not the stored form the target declares (`stored = \"{stored}\"`)",
                    self.header_template
                ));
            }
            if f.token != f.stored && is(&f.token, false) {
                return Content::Other(format!(
                    "the bare token {ph}, not the header (`{stored}`); a host that stores the bare token declares `stored = \"{{token}}\"`"
                ));
            }
        }
        let found = self
            .secrets
            .find(&bytes, &[Which::Current, Which::Rotated, Which::Legacy]);
        if let Some((w, _)) = found.first() {
            return Content::Other(format!(
                "{} bytes holding {} but not exactly the stored header (`{stored}`)",
                bytes.len(),
                w.placeholder()
            ));
        }
        Content::Other(format!(
            "{} bytes that are not the stored header (`{stored}`)",
            bytes.len()
        ))
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
            "No descendant inherits a legacy raw-credential variable (the ones rule 49 names, or those `legacy` declares), with any value, or the legacy canary under any name.",
            Level::Must,
            "Child environments MUST set T3_ACP_MCP_AUTHORIZATION, T3_MCP_BEARER_TOKEN and T3_CODE_MCP_AUTHORIZATION to undefined, keeping the keys present, so that merging over process.env cannot re-inherit them.",
            "hygiene#rule-49",
            judge_legacy,
        ),
        c(
            "hygiene.stale-file",
            "No descendant is handed a file variable that still names the decoy credential file parity planted in the host's environment (in the `stale_file_vars` it declares), in place of a credential file of the host's own. Passing a `*_FILE` variable on untouched is not judged (rule 50 keeps it); only one that still names the stale credential. Advisory: no rule forbids it in so many words; rule 48 says the children's file variable carries the host's credential path.",
            Level::Robustness,
            "The raw MCP Authorization value MUST NOT be put in the environment of ACP agents, their terminals or Pi. Those children MUST get a file path instead; for the ACP bridge and acp-mcp-call that path is in T3_ACP_MCP_AUTHORIZATION_FILE.",
            "hygiene#stale-file",
            judge_stale_file,
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
            "Every credential file holds exactly the stored form of the current token (`stored`, by default the header as delivered), with no newline.",
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
            "After the rotation hook every credential file keeps its path and takes the stored form of the new token through a rename (a new inode).",
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

/// The rule a check's verdicts rest on, as its messages name it: the seed rule of its quote
/// (`rule 39`), the fault class (`fault class B20`), or, for the advisory `hygiene.stale-file`,
/// the closest rule and that it is advisory.
pub fn rests_on(check: &str) -> &'static str {
    match check {
        "hygiene.env.child" | "hygiene.file.handed" => "rule 48",
        "hygiene.argv" => "rule 52",
        "hygiene.legacy" => "rule 49",
        "hygiene.stale-file" => "rule 48, advisory",
        "hygiene.output" => "fault class B20",
        "hygiene.file.mode" | "hygiene.file.content" => "rule 39",
        "hygiene.file.dir-mode" => "rule 38",
        "hygiene.stray-copy" => "rule 57",
        "hygiene.rotation" => "rules 40 and 42",
        "hygiene.cleanup.tmp" => "rule 42",
        "hygiene.cleanup.files" => "rule 46",
        "hygiene.cleanup.descendants" => "fault class B18",
        _ => "docs/hygiene.md",
    }
}

/// `f` with its message naming the rule its verdict rests on (`… (rule 39)`), so a reader of
/// the message alone knows it; a message that already names a narrower rule in parentheses
/// (`hygiene.rotation`'s `(rule 42)`, say) is left as it is. A pass has no message.
fn cited(check: &str, mut f: Finding) -> Finding {
    let cite = |m: &mut String| {
        if !m.contains("(rule ") {
            m.push_str(&format!(" ({})", rests_on(check)));
        }
    };
    match &mut f.status {
        Status::Pass => {}
        Status::Violated(m)
        | Status::Advisory(m)
        | Status::Skip(m)
        | Status::NotRun(m)
        | Status::Timeout(m)
        | Status::Failed(m) => cite(m),
    }
    f
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
    /// What breaks the rule: a fail (or a warn, by the check's level).
    violations: Vec<String>,
    /// What could not be judged because the probe waited in vain (each names the [`step`]):
    /// a timeout, unless a violation was found.
    waiting: Vec<String>,
    /// What could not be read (each names the [`step`]): not-run, unless a violation was found
    /// or the probe waited in vain.
    unreadable: Vec<String>,
}

impl Tally {
    fn new(obs: &Observation) -> Tally {
        Tally {
            evidence: head(obs),
            violations: Vec::new(),
            waiting: Vec::new(),
            unreadable: Vec::new(),
        }
    }
    /// The finding: a violation if any (the first, and how many more `what`), else a timeout
    /// if the probe waited in vain, else not-run if something could not be read, else a pass
    /// with `pass_line` as the last evidence line.
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
        if !self.waiting.is_empty() {
            let first = self.waiting[0].clone();
            self.evidence.extend(self.waiting);
            self.evidence.extend(self.unreadable);
            return Finding {
                status: Status::Timeout(format!(
                    "could not be judged, so this cannot pass: {first}"
                )),
                evidence: self.evidence,
            };
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
            "{}: {} process(es) ended before polling could read them: {}",
            step::TRACK,
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
                Err(e) => v.unreadable.push(format!(
                    "{}: the environment of {} could not be read at its exec: {e}",
                    step::TRACK,
                    who(p)
                )),
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
            format!(
                "{}: {n} descendant(s), but no exec image of any could be read",
                step::TRACK
            ),
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
                Err(e) => v.unreadable.push(format!(
                    "{}: the argv of {} could not be read at its exec: {e}",
                    step::TRACK,
                    who(p)
                )),
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
        v.unreadable.push(format!(
            "{}: the host's own image ({}) was never read",
            step::TRACK,
            who(h)
        ));
    }
    if images == 0 && v.unreadable.is_empty() {
        return Finding::not_run(
            format!("{}: no process image could be read", step::TRACK),
            head(obs),
        );
    }
    missed_unreadable(obs, &mut v);
    v.finish(
        "argv words",
        format!("{images} exec image(s) read: no argv holds a canary"),
    )
}

/// The environments of the descendants' exec images, each with its process; an image whose
/// environment could not be read is noted in `v` (not-run).
fn readable_envs<'a>(obs: &'a Observation, v: &mut Tally) -> Vec<(&'a Proc, &'a [Vec<u8>])> {
    let mut out = Vec::new();
    for p in descendants(obs) {
        for img in &p.images {
            match &img.env {
                Err(e) => v.unreadable.push(format!(
                    "{}: the environment of {} could not be read at its exec: {e}",
                    step::TRACK,
                    who(p)
                )),
                Ok(env) => out.push((p, env.as_slice())),
            }
        }
    }
    out
}

fn judge_legacy(obs: &Observation) -> Finding {
    if descendants(obs).next().is_none() {
        return Finding::skip("the host started no child during the run");
    }
    if obs.legacy_vars.is_empty() {
        return Finding::skip(
            "the target plants no legacy variable (`legacy = []`), so nothing carried the legacy canary",
        );
    }
    let mut v = Tally::new(obs);
    for (p, env) in readable_envs(obs, &mut v) {
        for entry in env {
            let name = var_name(entry);
            if obs.legacy_vars.contains(&name) {
                v.violations.push(format!(
                    "{} inherited the legacy variable {name} (it must be unset in a child's environment)",
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
    missed_unreadable(obs, &mut v);
    v.evidence.push(format!(
        "planted: {} with {}",
        obs.legacy_vars.join(", "),
        Which::Legacy.placeholder()
    ));
    v.finish(
        "inherited variables",
        "no descendant inherited a legacy variable or the legacy canary".into(),
    )
}

/// `hygiene.stale-file`: a descendant's variable (any name) whose value is the decoy's path
/// was handed the stale credential file parity planted, not one of the host's own. A planted
/// name that names another file (the host replaced it) or any other `*_FILE` variable passed
/// on untouched is fine (rule 50 keeps them).
fn judge_stale_file(obs: &Observation) -> Finding {
    if descendants(obs).next().is_none() {
        return Finding::skip("the host started no child during the run");
    }
    if obs.stale_file_vars.is_empty() {
        return Finding::skip(
            "the target plants no stale file variable (declare the ones the host's parent may leave in `stale_file_vars`)",
        );
    }
    let mut v = Tally::new(obs);
    let decoy = obs.decoy.as_os_str().as_bytes();
    let mut replaced: Vec<String> = Vec::new();
    for (p, env) in readable_envs(obs, &mut v) {
        for entry in env {
            let (name, value) = split_entry(entry);
            let name = String::from_utf8_lossy(name).into_owned();
            if value == decoy {
                let how = if obs.stale_file_vars.contains(&name) {
                    "inherited"
                } else {
                    "was handed, under another name,"
                };
                v.violations.push(format!(
                    "{} {how} {name} still naming the decoy credential file parity planted in the host's environment, not a credential file of the host's own",
                    who(p)
                ));
            } else if obs.stale_file_vars.contains(&name) && !replaced.contains(&name) {
                replaced.push(name);
            }
        }
    }
    missed_unreadable(obs, &mut v);
    v.evidence.push(format!(
        "planted: {} naming a decoy file",
        obs.stale_file_vars.join(", ")
    ));
    let kept = if replaced.is_empty() {
        String::new()
    } else {
        format!(" ({} passed on naming another file)", replaced.join(", "))
    };
    v.finish(
        "variables",
        format!("no descendant was handed the decoy credential file{kept}"),
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
                "{}: {} bytes of {name} past the {} MiB cap were not searched",
                step::OUTPUT,
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
            format!("{}: no child of the host was seen; under polling a child shorter than the interval can be missed entirely, so this cannot be judged", step::TRACK),
            head(obs),
        );
    }
    if let (0, Some(budget)) = (n, obs.settle_timed_out) {
        // The host kept running and started nothing: it may start its children later (on a
        // connection, say). A missing answer, not a violation.
        return Finding {
            status: Status::Timeout(format!(
                "{}: the host was still running after the {budget} ms start-up budget and had started no child, so none was handed a credential file (declare a command that starts its child, docs/hygiene.md)",
                step::SETTLE
            )),
            evidence: head(obs),
        };
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
                Err(e) => v.unreadable.push(format!(
                    "{}: the environment of {} could not be read at its exec: {e}",
                    step::TRACK,
                    who(p)
                )),
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
            "{}: {file} did not exist once settled, so its directory was not judged",
            step::INSPECT
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
            None => v.unreadable.push(format!(
                "{}: the directory {dir} could not be read {phase}",
                step::INSPECT
            )),
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
                "{}: the host had already ended ({}) when the tree settled, and {} was gone",
                step::SETTLE,
                obs.ended_early.as_deref().unwrap_or(""),
                file_line(obs, f)
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
                "{} holds the stored header of {}, not of the delivered token {}",
                file_line(obs, f),
                w.placeholder(),
                Which::Current.placeholder()
            )),
            Content::Other(d) => v
                .violations
                .push(format!("{} holds {d}", file_line(obs, f))),
            Content::Unreadable(e) => v.unreadable.push(format!(
                "{} once settled: {} could not be read: {e}",
                step::INSPECT,
                file_line(obs, f)
            )),
        }
    }
    v.finish(
        "files",
        format!(
            "{} credential file(s) hold exactly the stored header of the delivered token",
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
                "{} {}: {} file(s) over {} MiB not searched",
                step::SEARCH,
                s.phase,
                s.skipped_large,
                SCAN_FILE_CAP / (1024 * 1024)
            ));
        }
        if s.unreadable > 0 {
            v.unreadable.push(format!(
                "{} {}: {} file(s) could not be read",
                step::SEARCH,
                s.phase,
                s.unreadable
            ));
        }
        if s.truncated {
            v.unreadable.push(format!(
                "{} {}: stopped after {SCAN_ENTRY_CAP} directory entries, the rest not searched",
                step::SEARCH,
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
        // `why` names the step (rotation).
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
                "{} is gone after the rotation: the path moved{whereto} (rule 40)",
                file_line(obs, f)
            ));
            continue;
        }
        // Each finding names the rule it rests on: the path (40), the rename (42), the bytes
        // written (39).
        match &after.content {
            Content::Header(Which::Rotated) => {
                if before.exists && before.ino == after.ino {
                    v.violations.push(format!(
                        "{} took the new header in place (same inode {}): a reader may see it partly written; write `<path>.tmp` and rename it over the file (rule 42)",
                        file_line(obs, f),
                        after.ino
                    ));
                }
            }
            // The host did not take the new header within the deadline: no answer, not a
            // violation.
            Content::Header(Which::Current) => v.waiting.push(format!(
                "{}: {} still held the previous header {deadline_ms} ms after the rotation hook",
                step::ROTATION,
                file_line(obs, f)
            )),
            Content::Header(w) => v.violations.push(format!(
                "after the rotation, {} holds the stored header of {} (rule 39)",
                file_line(obs, f),
                w.placeholder()
            )),
            Content::Other(d) => v.violations.push(format!(
                "after the rotation, {} holds {d} (rule 39)",
                file_line(obs, f)
            )),
            Content::Unreadable(e) => v.unreadable.push(format!(
                "{} after rotation: {} could not be read: {e}",
                step::INSPECT,
                file_line(obs, f)
            )),
        }
    }
    v.finish(
        "files",
        format!(
            "{} credential file(s) kept their path and took the stored header of the new token through a rename within {waited_ms} ms",
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
            if left != Some(true) {
                continue;
            }
            if phase == "after shutdown" && obs.killed {
                v.waiting.push(format!("{}: {tmp} is left behind after shutdown, but the host ignored stdin EOF and SIGTERM and was killed, so it never got to remove it", step::SHUTDOWN));
            } else {
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
    // A host killed with SIGKILL never closed its scope: what is left is a missing answer to
    // the shutdown sequence, not a violation of rule 46.
    let killed = |what: String| {
        format!(
            "{}: {what} after shutdown, but the host ignored stdin EOF and SIGTERM and was killed, so it never got to close its scope",
            step::SHUTDOWN
        )
    };
    for f in &obs.files {
        let Some((file, dir, _)) = f.after_shutdown else {
            continue;
        };
        let mut left = Vec::new();
        if file {
            left.push(format!("{} still exists", file_line(obs, f)));
        }
        if dir {
            let d = f.path.parent().map(|d| place(obs, d)).unwrap_or_default();
            left.push(format!("its directory {d} still exists"));
        }
        for l in left {
            if obs.killed {
                v.waiting.push(killed(l));
            } else {
                v.violations.push(format!("{l} after shutdown"));
            }
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
        let left = format!(
            "pid {pid} (`{}`) was still running after the host ended",
            crate::base::util::clip(argv0, 80)
        );
        if obs.killed {
            // The host was killed before it could stop its children: a missing answer to the
            // shutdown sequence, not a violation.
            v.waiting.push(format!(
                "{}: {left}, but the host ignored stdin EOF and SIGTERM and was killed, so it never got to stop its children",
                step::SHUTDOWN
            ));
        } else {
            v.violations.push(left);
        }
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
            report.could_not_run.push(format!(
                "{}: cannot find this executable: {e}",
                step::PREPARE
            ));
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
                .push(format!("the hygiene probe's thread failed: {e}"));
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
        let finding = cited(check.id, f(&obs));
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

/// The selftest's runs: each faulty host with the checks it must trip, each benign host (under
/// its declarations) with the checks it must pass, and the clean reference with every hygiene
/// check: (role, the peer's name, report).
pub async fn selftest_runs(
    cx: &crate::engine::selftest::SelftestContext,
) -> Vec<(crate::engine::selftest::SelftestRole, String, RunReport)> {
    use crate::engine::selftest::SelftestRole;
    let exe = cx.exe.clone();
    let mut runs: Vec<(SelftestRole, String, HygieneDecl, RunOptions)> = Vec::new();
    if let Some(o) = cx.options(&[]) {
        runs.push((
            SelftestRole::Reference,
            "reference launcher".into(),
            reference_decl(&exe),
            o,
        ));
    }
    for b in parity_fakes::host_benign_catalogue() {
        if let Some(o) = cx.options(b.passes) {
            runs.push((
                SelftestRole::Benign,
                b.name.into(),
                benign_host_decl(&exe, b),
                o,
            ));
        }
    }
    for f in parity_fakes::host_catalogue() {
        if let Some(o) = cx.options(f.checks) {
            runs.push((
                SelftestRole::Fault,
                f.name.into(),
                fake_host_decl(&exe, f.name),
                o,
            ));
        }
    }
    // Four hosts at a time: each probe waits on time (settle, rotation, shutdown), not CPU.
    let sem = Arc::new(tokio::sync::Semaphore::new(4));
    let mut set = tokio::task::JoinSet::new();
    for (role, name, decl, o) in runs {
        let sem = sem.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let shown = match role {
                SelftestRole::Reference => {
                    "parity reference launch -- parity reference bridge".to_owned()
                }
                _ => format!("parity fake-host {name}"),
            };
            let report = run_hygiene(&shown, &decl, &Overrides::default(), &o).await;
            (role, name, report)
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
            legacy_vars: DEFAULT_LEGACY.iter().map(|s| s.to_string()).collect(),
            stale_file_vars: REFERENCE_STALE_FILE_VARS
                .iter()
                .map(|s| s.to_string())
                .collect(),
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
            settle_timed_out: None,
            killed: false,
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
            assert_ne!(rests_on(c.id), "docs/hygiene.md", "{} names no rule", c.id);
        }
    }

    #[test]
    fn every_message_names_the_rule_it_rests_on() {
        let f = cited("hygiene.file.content", Finding::skip("no file"));
        assert_eq!(f.status, Status::Skip("no file (rule 39)".into()));
        let f = cited(
            "hygiene.stale-file",
            Finding::violated("handed the decoy", vec![]),
        );
        assert_eq!(
            f.status,
            Status::Violated("handed the decoy (rule 48, advisory)".into())
        );
        // A narrower rule named by the judge stays the only one.
        let f = cited(
            "hygiene.rotation",
            Finding::violated("took it in place (rule 42)", vec![]),
        );
        assert_eq!(
            f.status,
            Status::Violated("took it in place (rule 42)".into())
        );
        assert_eq!(
            cited("hygiene.argv", Finding::pass(vec![])).status,
            Status::Pass
        );
    }

    #[test]
    fn a_stale_file_variable_fails_only_while_it_names_the_decoy() {
        let mut obs = polled_obs();
        obs.method = Method::Ptrace;
        assert_eq!(judge_stale_file(&obs).status, Status::Pass);
        // Inherited untouched, still naming the decoy: an advisory finding, and not one of
        // `hygiene.legacy`'s any more.
        obs.procs[1].images[0].env = Ok(vec![
            b"T3_ACP_MCP_AUTHORIZATION_FILE=/nonexistent/decoy".to_vec(),
            b"PARITY_MCP_AUTHORIZATION_FILE=/nonexistent/own".to_vec(),
        ]);
        let f = judge_stale_file(&obs);
        assert!(
            matches!(&f.status, Status::Violated(m) if m.contains("inherited T3_ACP_MCP_AUTHORIZATION_FILE still naming the decoy")),
            "{f:?}"
        );
        assert_eq!(judge_legacy(&obs).status, Status::Pass);
        // The same name replaced by the host's own path, and another `*_FILE` variable passed
        // on untouched (rule 50): fine.
        obs.procs[1].images[0].env = Ok(vec![
            b"T3_ACP_MCP_AUTHORIZATION_FILE=/nonexistent/own".to_vec(),
            b"HOST_SETTINGS_FILE=/dev/null".to_vec(),
        ]);
        let f = judge_stale_file(&obs);
        assert_eq!(f.status, Status::Pass);
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains("T3_ACP_MCP_AUTHORIZATION_FILE passed on naming another file")),
            "{f:?}"
        );
        // The decoy under another name is still the decoy.
        obs.procs[1].images[0].env = Ok(vec![b"AGENT_CREDENTIALS=/nonexistent/decoy".to_vec()]);
        assert!(matches!(
            judge_stale_file(&obs).status,
            Status::Violated(m) if m.contains("under another name")
        ));
        // Nothing planted: nothing to judge.
        obs.stale_file_vars.clear();
        assert!(matches!(judge_stale_file(&obs).status, Status::Skip(_)));
    }

    #[test]
    fn waiting_in_vain_is_a_timeout_naming_the_step() {
        // A host still running at the end of the start-up budget, with no child.
        let mut obs = polled_obs();
        obs.method = Method::Ptrace;
        obs.procs.truncate(1);
        obs.settle_timed_out = Some(30_000);
        assert!(matches!(
            judge_file_handed(&obs).status,
            Status::Timeout(m) if m.starts_with(step::SETTLE) && m.contains("30000 ms")
        ));
        // A host that was killed at shutdown never closed its scope.
        let mut obs = polled_obs();
        obs.files.push(CredFile {
            path: PathBuf::from("/nonexistent/cred/authorization"),
            var: "PARITY_MCP_AUTHORIZATION_FILE".into(),
            pid: 11,
            argv0: "idle".into(),
            settled: None,
            rotated: None,
            after_shutdown: Some((true, true, true)),
        });
        obs.leftovers.push((12, "linger".into()));
        for judge in [
            judge_cleanup_files,
            judge_cleanup_tmp,
            judge_cleanup_descendants,
        ] {
            assert!(matches!(judge(&obs).status, Status::Violated(_)));
        }
        obs.killed = true;
        for judge in [
            judge_cleanup_files,
            judge_cleanup_tmp,
            judge_cleanup_descendants,
        ] {
            let f = judge(&obs);
            assert!(
                matches!(&f.status, Status::Timeout(m) if m.contains(step::SHUTDOWN) && m.contains("was killed")),
                "{f:?}"
            );
        }
    }

    #[test]
    fn the_stored_form_is_what_a_credential_file_must_hold() {
        let secrets = Secrets::new().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("authorization");
        let forms = |stored: &str| -> Vec<Form> {
            [Which::Current, Which::Rotated, Which::Legacy]
                .into_iter()
                .map(|w| {
                    let t = secrets.get(w).token.clone();
                    Form {
                        which: w,
                        stored: render(stored, &t, ""),
                        delivered: render("Bearer {token}", &t, ""),
                        token: t,
                    }
                })
                .collect()
        };
        let host_env = HashMap::new();
        let content = |stored: &str, bytes: String| {
            std::fs::write(&file, bytes).unwrap();
            let forms = forms(stored);
            let ctx = FileCtx {
                secrets: &secrets,
                forms: &forms,
                header_template: "Bearer {token}",
                stored_template: stored,
                tmp_root: dir.path(),
                cwd_root: dir.path(),
                decoy: Path::new("/nonexistent/decoy"),
                delivered: None,
                host_env: &host_env,
                file_vars: &[],
            };
            ctx.content_of(&file)
        };
        let tok = secrets.current.token.clone();
        let rot = secrets.rotated.token.clone();
        // Declared `stored = "{token}"`: the bare token is the header at rest, the delivered
        // form is not.
        assert_eq!(
            content("{token}", tok.clone()),
            Content::Header(Which::Current)
        );
        assert_eq!(
            content("{token}", rot.clone()),
            Content::Header(Which::Rotated)
        );
        assert!(matches!(
            content("{token}", format!("Bearer {tok}")),
            Content::Other(m) if m.contains("as delivered") && m.contains("stored = \"{token}\"")
        ));
        // Undeclared: the stored form is the header, and a bare token says how to declare it.
        assert_eq!(
            content("Bearer {token}", format!("Bearer {tok}")),
            Content::Header(Which::Current)
        );
        assert!(matches!(
            content("Bearer {token}", tok.clone()),
            Content::Other(m) if m.contains("the bare token [CANARY]") && !m.contains(&tok)
        ));
        assert!(matches!(
            content("{token}", format!("{tok}\n")),
            Content::Other(m) if m.contains("followed by a newline")
        ));
    }
}
