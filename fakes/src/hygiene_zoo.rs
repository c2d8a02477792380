//! Faulty hosts for the hygiene probe (`parity hygiene`, `docs/hygiene.md`): small
//! self-contained hosts served by the hidden `parity fake-host <mode> [-- CMD…]`.
//!
//! The clean host (`clean`) follows the reference launcher's contract: it takes the
//! Authorization header from `PARITY_MCP_AUTHORIZATION` (or, when that is unset, from the file
//! `PARITY_MCP_AUTHORIZATION_PATH` names: parity's file delivery), writes it to a private file (a
//! fresh 0700 directory under the temp directory, a 0600 file holding exactly the header), starts its
//! child (CMD, or `parity fake-host idle`) with the inherited environment minus the raw
//! credential, legacy and stale file variables plus `PARITY_MCP_AUTHORIZATION_FILE`, rewrites
//! the file through `<path>.tmp` and a rename on the stdin line `rotate <header>`, and at stdin
//! EOF closes the child's stdin, waits (2 s, then kills it), removes the directory and exits
//! with the child's status. Each fault breaks exactly one of those promises; [`host_catalogue`]
//! names the hygiene check it must fail. The benign hosts ([`host_benign_catalogue`]) keep every
//! promise but differ from the clean host where a correct host may: the bytes they store, the
//! variable they hand the path in.
//!
//! Helper modes used by the faults: `idle` (reads stdin to EOF, exits 0), `exit` (exits at
//! once), `linger` (ignores everything and stays up to a minute) and `leak-grandchild` (reads
//! its credential file and starts a grandchild with the header in its environment).
//!
//! These hosts use only the standard library (no reference code), so a bug in the reference
//! credential store cannot hide a fault here.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The variable the fake hosts read the Authorization header from.
pub const AUTHORIZATION_VAR: &str = "PARITY_MCP_AUTHORIZATION";
/// The variable naming the credential file in a child's environment.
pub const FILE_VAR: &str = "PARITY_MCP_AUTHORIZATION_FILE";
/// The variable naming a file that holds the Authorization header (parity's file delivery,
/// `delivery = "file"`), read when [`AUTHORIZATION_VAR`] is unset. Not a `*_FILE` name: it is
/// the host's input, never handed to a child.
pub const AUTHORIZATION_PATH_VAR: &str = "PARITY_MCP_AUTHORIZATION_PATH";
/// The variable t3code's bridge reads its credential path from (seed rule 48), the one
/// `benign-host-file-var` hands its file in.
pub const T3_FILE_VAR: &str = "T3_ACP_MCP_AUTHORIZATION_FILE";
/// The endpoint variable passed on to the child when the host has one.
pub const ENDPOINT_VAR: &str = "PARITY_MCP_ENDPOINT";

/// The legacy raw-credential variables of seed rule 49.
pub const LEGACY: [&str; 3] = [
    "T3_ACP_MCP_AUTHORIZATION",
    "T3_MCP_BEARER_TOKEN",
    "T3_CODE_MCP_AUTHORIZATION",
];

/// Variables a clean host never passes on: the raw credential (in a variable or a path to it),
/// the legacy raw-credential variables (seed rule 49) and stale file and endpoint variables
/// inherited from its parent.
pub const STRIPPED: [&str; 9] = [
    "PARITY_MCP_AUTHORIZATION",
    "PARITY_MCP_AUTHORIZATION_PATH",
    "T3_ACP_MCP_AUTHORIZATION",
    "T3_MCP_BEARER_TOKEN",
    "T3_CODE_MCP_AUTHORIZATION",
    "PARITY_MCP_AUTHORIZATION_FILE",
    "PARITY_MCP_ENDPOINT",
    "T3_ACP_MCP_AUTHORIZATION_FILE",
    "T3_ACP_MCP_ENDPOINT",
];

/// One faulty host.
#[derive(Debug, Clone, Copy)]
pub struct HostFault {
    /// Name used by `parity fake-host <name>`.
    pub name: &'static str,
    /// What is wrong, in one sentence (with the fault class of `faults.md` when one fits).
    pub description: &'static str,
    /// The hygiene checks this host must fail (or warn, for a SHOULD-level check).
    pub checks: &'static [&'static str],
}

const FAULTS: [HostFault; 16] = [
    HostFault {
        name: "host-env-child",
        description: "passes the raw Authorization variable on to its child (B19)",
        checks: &["hygiene.env.child"],
    },
    HostFault {
        name: "host-argv",
        description: "starts a helper with the header on its argv (B19, CWE-214)",
        checks: &["hygiene.argv"],
    },
    HostFault {
        name: "host-env-grandchild",
        description: "its child reads the file and hands the header to a grandchild in the environment",
        checks: &["hygiene.env.child"],
    },
    HostFault {
        name: "host-short-lived",
        description: "starts a child with the header in its environment that exits at once (only exec tracing sees it)",
        checks: &["hygiene.env.child"],
    },
    HostFault {
        name: "host-no-file",
        description: "starts its child without the credential file variable (rule 48: children get a path)",
        checks: &["hygiene.file.handed"],
    },
    HostFault {
        name: "host-file-mode",
        description: "writes the credential file with mode 0644",
        checks: &["hygiene.file.mode"],
    },
    HostFault {
        name: "host-dir-mode",
        description: "creates the credential directory with mode 0755",
        checks: &["hygiene.file.dir-mode"],
    },
    HostFault {
        name: "host-file-newline",
        description: "writes the header followed by a newline",
        checks: &["hygiene.file.content"],
    },
    HostFault {
        name: "host-dir-left",
        description: "leaves the credential directory behind when it exits",
        checks: &["hygiene.cleanup.files"],
    },
    HostFault {
        name: "host-tmp-left",
        description: "leaves `<path>.tmp` holding the header behind after a rotation",
        checks: &["hygiene.cleanup.tmp"],
    },
    HostFault {
        name: "host-legacy",
        description: "passes the inherited legacy raw-credential variables (rule 49) through",
        checks: &["hygiene.legacy"],
    },
    HostFault {
        name: "host-stale-file",
        description: "passes the inherited `T3_ACP_MCP_AUTHORIZATION_FILE` on untouched while it names a stale credential file, beside its own in `PARITY_MCP_AUTHORIZATION_FILE`",
        checks: &["hygiene.stale-file"],
    },
    HostFault {
        name: "host-log",
        description: "logs the header on stderr (B20)",
        checks: &["hygiene.output"],
    },
    HostFault {
        name: "host-rotation-path",
        description: "rotates by writing a new directory and file and deleting the old one (the path moves)",
        checks: &["hygiene.rotation"],
    },
    HostFault {
        name: "host-stray-copy",
        description: "keeps a copy of the header in a session file under its temp directory (B20)",
        checks: &["hygiene.stray-copy"],
    },
    HostFault {
        name: "host-orphan",
        description: "starts a helper in its own process group and leaves it running after shutdown",
        checks: &["hygiene.cleanup.descendants"],
    },
];

/// Every faulty host.
pub fn host_catalogue() -> &'static [HostFault] {
    &FAULTS
}

/// One benign host: correct, but different from the clean host where a correct host may be.
#[derive(Debug, Clone, Copy)]
pub struct HostBenign {
    /// Name used by `parity fake-host <name>` (always starts with `benign-host-`).
    pub name: &'static str,
    /// How it differs from the clean host, in one sentence.
    pub description: &'static str,
    /// The hygiene checks it must pass (no fail, warn or timeout).
    pub passes: &'static [&'static str],
    /// What its target declares as `stored` (the form its credential files hold), if it
    /// differs from the delivered header.
    pub stored: Option<&'static str>,
    /// Variables its parent hands it (the target's `env`), besides the endpoint.
    pub env: &'static [(&'static str, &'static str)],
}

const BENIGN: [HostBenign; 2] = [
    HostBenign {
        name: "benign-host-bare-token",
        description: "handed `Bearer <token>`, stores the bare token in its children's credential file, and the bare new token on rotation (declared `stored = \"{token}\"`)",
        passes: &[
            "hygiene.file.content",
            "hygiene.rotation",
            "hygiene.file.mode",
            "hygiene.stray-copy",
            "hygiene.env.child",
        ],
        stored: Some("{token}"),
        env: &[],
    },
    HostBenign {
        name: "benign-host-file-var",
        description: "hands its credential file in `T3_ACP_MCP_AUTHORIZATION_FILE` (replacing the stale one it inherited) and passes an unrelated inherited `*_FILE` variable on untouched (rule 50)",
        passes: &[
            "hygiene.stale-file",
            "hygiene.legacy",
            "hygiene.file.handed",
            "hygiene.file.content",
            "hygiene.env.child",
        ],
        stored: None,
        env: &[("HOST_SETTINGS_FILE", "/dev/null")],
    },
];

/// Every benign host.
pub fn host_benign_catalogue() -> &'static [HostBenign] {
    &BENIGN
}

/// Looks a benign host up by name.
pub fn find_host_benign(name: &str) -> Option<&'static HostBenign> {
    BENIGN.iter().find(|b| b.name == name)
}

/// Looks a faulty host up by name.
pub fn find_host_fault(name: &str) -> Option<&'static HostFault> {
    FAULTS.iter().find(|f| f.name == name)
}

/// The helper modes of `parity fake-host` (not faults).
pub const HOST_HELPERS: [&str; 4] = ["idle", "exit", "linger", "leak-grandchild"];

/// Serves `parity fake-host <mode> [-- CMD…]`: `clean`, a fault of [`host_catalogue`], a benign
/// host of [`host_benign_catalogue`], or a helper of [`HOST_HELPERS`]. Returns the exit code: the
/// child's, 0, or 2 for an unknown mode or a missing header (one stderr line).
pub fn serve_host(mode: &str, command: &[String]) -> i32 {
    match mode {
        "idle" => {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            0
        }
        "exit" => 0,
        "linger" => {
            let until = Instant::now() + Duration::from_secs(60);
            while Instant::now() < until {
                std::thread::sleep(Duration::from_millis(200));
            }
            0
        }
        "leak-grandchild" => leak_grandchild(),
        "clean" => run_host(None, command),
        other => match find_host_fault(other)
            .map(|f| f.name)
            .or_else(|| find_host_benign(other).map(|b| b.name))
        {
            Some(name) => run_host(Some(name), command),
            None => {
                eprintln!(
                    "parity fake-host: unknown mode `{other}`; `parity fake --list` lists them"
                );
                2
            }
        },
    }
}

fn own_exe() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("parity"))
}

/// The fake host's credential store: one private directory and one file.
struct Store {
    dir: PathBuf,
    path: PathBuf,
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Store {
    fn create(dir_mode: u32, file_mode: u32, content: &[u8]) -> std::io::Result<Store> {
        let base = std::env::temp_dir();
        let dir = loop {
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let candidate = base.join(format!(
                "parity-fake-cred-{}-{n}-{nanos:x}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        };
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(dir_mode))?;
        let path = dir.join("authorization");
        write_new(&path, file_mode, content)?;
        Ok(Store { dir, path })
    }

    /// A clean rotation: the leftover `.tmp` removed, created exclusively 0600, written,
    /// synced and renamed over the file.
    fn rotate(&self, content: &[u8]) -> std::io::Result<()> {
        let tmp = tmp_of(&self.path);
        let _ = std::fs::remove_file(&tmp);
        write_new(&tmp, 0o600, content)?;
        std::fs::rename(&tmp, &self.path)
    }

    fn close(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tmp_of(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

fn write_new(path: &Path, mode: u32, content: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(content)?;
    f.sync_all()?;
    // Explicitly, so the umask cannot change a fault's mode.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// The header the host was handed: [`AUTHORIZATION_VAR`], else the file
/// [`AUTHORIZATION_PATH_VAR`] names (one line; a trailing newline is not part of it).
fn delivered_header() -> Result<String, String> {
    if let Ok(h) = std::env::var(AUTHORIZATION_VAR) {
        if !h.is_empty() {
            return Ok(h);
        }
    }
    let Some(path) = std::env::var_os(AUTHORIZATION_PATH_VAR) else {
        return Err(format!(
            "neither {AUTHORIZATION_VAR} nor {AUTHORIZATION_PATH_VAR} is set"
        ));
    };
    match std::fs::read_to_string(&path) {
        Ok(h) if !h.trim_end_matches('\n').is_empty() => Ok(h.trim_end_matches('\n').to_owned()),
        Ok(_) => Err(format!("the file {AUTHORIZATION_PATH_VAR} names is empty")),
        Err(e) => Err(format!(
            "cannot read the file {AUTHORIZATION_PATH_VAR} names: {e}"
        )),
    }
}

fn run_host(fault: Option<&str>, command: &[String]) -> i32 {
    let header = match delivered_header() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("parity fake-host: {e}");
            return 2;
        }
    };
    let is = |name: &str| fault == Some(name);
    if is("host-log") {
        eprintln!("parity fake-host: starting with authorization {header}");
    }
    // What the credential file holds: the header, or for the bare-token host the token alone.
    let stored = |h: &str| -> Vec<u8> {
        if is("benign-host-bare-token") {
            h.strip_prefix("Bearer ").unwrap_or(h).as_bytes().to_vec()
        } else {
            h.as_bytes().to_vec()
        }
    };
    let mut content = stored(&header);
    if is("host-file-newline") {
        content.push(b'\n');
    }
    let dir_mode = if is("host-dir-mode") { 0o755 } else { 0o700 };
    let file_mode = if is("host-file-mode") { 0o644 } else { 0o600 };
    let mut store = match Store::create(dir_mode, file_mode, &content) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("parity fake-host: failed to write the credential file: {e}");
            return 1;
        }
    };
    if is("host-stray-copy") {
        let copy = std::env::temp_dir().join("fake-host-session.json");
        let _ = write_new(
            &copy,
            0o600,
            format!("{{\"authorization\": \"{header}\"}}\n").as_bytes(),
        );
    }
    let exe = own_exe();
    // The child's environment: inherited, minus what a clean host strips, plus the file path.
    let file_var = if is("benign-host-file-var") {
        T3_FILE_VAR
    } else {
        FILE_VAR
    };
    let keep = |name: &str| -> bool {
        if is("host-env-child") && name == AUTHORIZATION_VAR {
            return true;
        }
        if is("host-legacy") && LEGACY.contains(&name) {
            return true;
        }
        if is("host-stale-file") && name == T3_FILE_VAR {
            return true;
        }
        name != file_var && !STRIPPED.contains(&name)
    };
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| keep(&k.to_string_lossy()))
        .collect();
    if !is("host-no-file") {
        env.push((file_var.into(), store.path.clone().into_os_string()));
    }
    if let Some(endpoint) = std::env::var_os(ENDPOINT_VAR) {
        env.push((ENDPOINT_VAR.into(), endpoint));
    }
    let spawn = |argv: &[OsString], extra: &[(&str, &str)], stdin: Stdio| -> Option<Child> {
        let (program, args) = argv.split_first()?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(stdin);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        match cmd.spawn() {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("parity fake-host: failed to start {program:?}: {e}");
                None
            }
        }
    };
    let helper = |mode: &str| -> Vec<OsString> {
        vec![
            exe.clone().into_os_string(),
            "fake-host".into(),
            mode.into(),
        ]
    };
    let main_argv: Vec<OsString> = if command.is_empty() {
        helper("idle")
    } else {
        command.iter().map(OsString::from).collect()
    };
    let Some(mut main) = spawn(&main_argv, &[], Stdio::piped()) else {
        store.close();
        return 1;
    };
    let mut side: Vec<Child> = Vec::new();
    if is("host-argv") {
        let mut argv = helper("idle");
        argv.extend(["--".into(), "--authorization".into(), header.clone().into()]);
        side.extend(spawn(&argv, &[], Stdio::piped()));
    }
    if is("host-env-grandchild") {
        side.extend(spawn(&helper("leak-grandchild"), &[], Stdio::piped()));
    }
    if is("host-short-lived") {
        if let Some(mut c) = spawn(&helper("exit"), &[("HOST_TOKEN", &header)], Stdio::null()) {
            let _ = c.wait();
        }
    }
    if is("host-orphan") {
        let mut cmd = Command::new(&exe);
        cmd.args(["fake-host", "linger"])
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // Never waited for: it outlives the host.
        let _ = cmd.spawn();
    }
    // The control channel: `rotate <header>` lines until EOF.
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Some(new) = line.strip_prefix("rotate ") else {
            eprintln!("parity fake-host: unknown control line ignored");
            continue;
        };
        let new = stored(new);
        let result = if is("host-rotation-path") {
            match Store::create(0o700, 0o600, &new) {
                Ok(moved) => {
                    store.close();
                    store = moved;
                    Ok(())
                }
                Err(e) => Err(e),
            }
        } else {
            store.rotate(&new).and_then(|()| {
                if is("host-tmp-left") {
                    write_new(&tmp_of(&store.path), 0o600, &new)
                } else {
                    Ok(())
                }
            })
        };
        match result {
            Ok(()) => eprintln!("parity fake-host: rotated"),
            Err(e) => eprintln!("parity fake-host: rotation failed: {e}"),
        }
    }
    // Shutdown: close the children's stdin, wait, then kill.
    drop(main.stdin.take());
    for c in side.iter_mut() {
        drop(c.stdin.take());
    }
    let code = stop(&mut main);
    for c in side.iter_mut() {
        stop(c);
    }
    if !is("host-dir-left") {
        store.close();
    }
    code
}

/// Waits up to 2 s for a child, then kills it; returns its exit code (1 when killed).
fn stop(child: &mut Child) -> i32 {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return st.code().unwrap_or(1),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return 1;
            }
        }
    }
}

/// `leak-grandchild`: reads the credential file named by [`FILE_VAR`] and starts a grandchild
/// (`parity fake-host idle`) with the header in `UPSTREAM_AUTHORIZATION`; stops it at stdin EOF.
fn leak_grandchild() -> i32 {
    let header = std::env::var_os(FILE_VAR)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let grandchild = Command::new(own_exe())
        .args(["fake-host", "idle"])
        .env("UPSTREAM_AUTHORIZATION", header)
        .stdin(Stdio::piped())
        .spawn();
    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
    if let Ok(mut g) = grandchild {
        drop(g.stdin.take());
        stop(&mut g);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_names_a_hygiene_check() {
        for f in host_catalogue() {
            assert!(!f.checks.is_empty(), "{}", f.name);
            assert!(
                f.checks.iter().all(|c| c.starts_with("hygiene.")),
                "{}",
                f.name
            );
            assert!(f.name.starts_with("host-"), "{}", f.name);
        }
        for b in host_benign_catalogue() {
            assert!(b.name.starts_with("benign-host-"), "{}", b.name);
            assert!(!b.passes.is_empty(), "{}", b.name);
            assert!(b.passes.iter().all(|c| c.starts_with("hygiene.")));
            assert!(find_host_fault(b.name).is_none(), "{}", b.name);
        }
    }

    #[test]
    fn a_store_writes_private_files_and_rotates_in_place() {
        let Ok(s) = Store::create(0o700, 0o600, b"Bearer a") else {
            panic!("store")
        };
        let meta = std::fs::metadata(&s.path).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(meta.ok(), Some(0o600));
        assert!(s.rotate(b"Bearer b").is_ok());
        assert_eq!(
            std::fs::read(&s.path).ok().as_deref(),
            Some(&b"Bearer b"[..])
        );
        assert!(!tmp_of(&s.path).exists());
        s.close();
        assert!(!s.dir.exists());
    }
}
