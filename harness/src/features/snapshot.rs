//! Snapshots of scenario exchanges (`parity run --snapshots DIR [--accept]`,
//! docs/transcripts.md §Snapshots).
//!
//! Per scenario case, the canonical exchange is stored in `DIR/<case>.snap`: a header line,
//! then one message per line (`c2s `/`s2c ` plus the message as compact JSON with keys sorted
//! and volatile values as placeholders, see `crate::protocol::replay::Normalizer`; a stdout line that is
//! not JSON is kept as `s2c-text ` plus the text). stderr is never part of a snapshot.
//! A later run compares: a mismatch fails the case with a diff and writes `<case>.snap.new`;
//! `--accept` writes the new exchange as the snapshot instead. A missing snapshot is created.
//! Protocol-purity checks are never judged from snapshots, so accepting one cannot hide a
//! stdout fault.

use crate::protocol::replay::{canonical, Normalizer};
use crate::transport::wire::{Dir, WireEvent};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The first line of every snapshot file, followed by the case id.
pub const HEADER: &str = "# parity snapshot 1:";

/// A directory of snapshots for one run.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    accept: bool,
    norm: Normalizer,
    produced: Mutex<BTreeSet<String>>,
    /// Snapshots created, accepted and differing in this run.
    counts: [std::sync::atomic::AtomicUsize; 3],
}

/// What comparing one case's exchange gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compared {
    /// Same as the stored snapshot.
    Same,
    /// No snapshot existed; it was written.
    Created(PathBuf),
    /// `--accept`: the snapshot was (re)written.
    Accepted(PathBuf),
    /// It differs: the diff (stored → now), and the `.snap.new` written.
    Differs {
        /// Unified diff, stored → this run.
        diff: String,
        /// The pending file.
        pending: PathBuf,
    },
    /// The snapshot could not be read or written.
    Error(String),
}

/// The file name of a case's snapshot: the case id with `#` as `+` and any character other
/// than letters, digits, `.`, `_`, `-`, `@`, `+` as `_`, plus `.snap`.
pub fn file_name(case_id: &str) -> String {
    let mut s: String = case_id
        .chars()
        .map(|c| match c {
            '#' => '+',
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '+') => c,
            _ => '_',
        })
        .collect();
    s.push_str(".snap");
    s
}

/// The canonical exchange of a case's sessions (see the module documentation).
pub fn render(case_id: &str, sessions: &[Vec<WireEvent>], norm: &Normalizer) -> String {
    let mut out = format!("{HEADER} {case_id}\n");
    for (i, events) in sessions.iter().enumerate() {
        if sessions.len() > 1 {
            out.push_str(&format!("# session {}\n", i + 1));
        }
        for e in events {
            let tag = match e.dir {
                Dir::C2s => "c2s",
                Dir::S2c => "s2c",
                _ => continue,
            };
            let Some(l) = e.line() else { continue };
            for part in l.bytes.split(|b| *b == b'\n') {
                if part.is_empty() {
                    continue;
                }
                match serde_json::from_slice::<serde_json::Value>(part) {
                    Ok(v) => {
                        out.push_str(tag);
                        out.push(' ');
                        out.push_str(&canonical(&norm.message(&v)));
                    }
                    Err(_) => {
                        out.push_str(tag);
                        out.push_str("-text ");
                        out.push_str(&String::from_utf8_lossy(part).replace('\r', "\\r"));
                    }
                }
                out.push('\n');
            }
        }
    }
    out
}

impl Store {
    /// A store over `dir` (created when missing); `accept` rewrites differing snapshots;
    /// `volatile_keys` are member names whose values become `[VOLATILE]` (the last segments of
    /// the target's volatile outcome pointers, e.g. `since_ms`).
    ///
    /// Errors: `dir` cannot be created or is not a directory.
    pub fn new(dir: &Path, accept: bool, volatile_keys: Vec<String>) -> Result<Store, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--snapshots {}: failed to create: {e}", dir.display()))?;
        Ok(Store {
            dir: dir.to_path_buf(),
            accept,
            norm: Normalizer::new(Vec::new(), volatile_keys),
            produced: Mutex::new(BTreeSet::new()),
            counts: Default::default(),
        })
    }

    /// Compares (or stores) one case's exchange.
    pub fn compare(&self, case_id: &str, sessions: &[Vec<WireEvent>]) -> Compared {
        let name = file_name(case_id);
        if let Ok(mut p) = self.produced.lock() {
            p.insert(name.clone());
        }
        let path = self.dir.join(&name);
        let pending = self.dir.join(format!("{name}.new"));
        let now = crate::engine::redact::text(&render(case_id, sessions, &self.norm));
        let write = |p: &Path| {
            std::fs::write(p, &now).map_err(|e| format!("failed to write {}: {e}", p.display()))
        };
        let stored = match std::fs::read_to_string(&path) {
            Ok(s) => Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Compared::Error(format!("failed to read {}: {e}", path.display())),
        };
        let _ = std::fs::remove_file(&pending);
        match stored {
            Some(s) if s == now => Compared::Same,
            None => match write(&path) {
                Ok(()) => Compared::Created(path),
                Err(e) => Compared::Error(e),
            },
            Some(_) if self.accept => match write(&path) {
                Ok(()) => Compared::Accepted(path),
                Err(e) => Compared::Error(e),
            },
            Some(s) => {
                let diff = similar::TextDiff::from_lines(&s, &now)
                    .unified_diff()
                    .context_radius(2)
                    .header(&name, &format!("{name}.new"))
                    .to_string();
                match write(&pending) {
                    Ok(()) => Compared::Differs { diff, pending },
                    Err(e) => Compared::Error(e),
                }
            }
        }
    }

    /// One line for the console: how many snapshots were written, accepted and left pending
    /// (`None` when every exchange matched its snapshot).
    pub fn summary(&self) -> Option<String> {
        let n = |i: usize| self.counts[i].load(std::sync::atomic::Ordering::Relaxed);
        let (created, accepted, pending) = (n(0), n(1), n(2));
        if created + accepted + pending == 0 {
            return None;
        }
        Some(format!(
            "snapshots in {}: {created} written, {accepted} accepted, {pending} differing (review the .snap.new files, then run with --accept)",
            self.dir.display()
        ))
    }

    /// Snapshot files in the directory that belong to no case of this run (sorted).
    pub fn unreferenced(&self) -> Vec<PathBuf> {
        let produced = match self.produced.lock() {
            Ok(p) => p.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = rd
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_str()?.to_string();
                (n.ends_with(".snap") && !produced.contains(&n)).then(|| e.path())
            })
            .collect();
        out.sort();
        out
    }

    /// Applies a comparison to a scenario case's result: a difference or an I/O error fails
    /// the case (with the diff in the evidence); a created or accepted snapshot adds a note to
    /// the message.
    pub fn judge(&self, result: &mut crate::engine::run::CaseResult, sessions: &[Vec<WireEvent>]) {
        use crate::engine::check::Verdict;
        if !matches!(
            result.verdict,
            Verdict::Pass | Verdict::Warn | Verdict::Fail
        ) {
            // Not compared, but still a case of this run: its snapshot is not unreferenced.
            if let Ok(mut p) = self.produced.lock() {
                p.insert(file_name(&result.id));
            }
            return;
        }
        let (left_out, _) = crate::transport::framelog::left_out(sessions.iter().flatten());
        if left_out > 0 {
            // The exchange is not whole: comparing it (or writing it) would be a false claim.
            if let Ok(mut p) = self.produced.lock() {
                p.insert(file_name(&result.id));
            }
            let note = format!(
                "snapshot not compared: the session's frame log left out {left_out} frames (the server sent more than a scenario session keeps, docs/architecture.md §Memory budget)"
            );
            result.message = if result.message.is_empty() {
                note
            } else {
                format!("{}; {note}", result.message)
            };
            return;
        }
        let outcome = self.compare(&result.id, sessions);
        let slot = match outcome {
            Compared::Created(_) => Some(0),
            Compared::Accepted(_) => Some(1),
            Compared::Differs { .. } => Some(2),
            _ => None,
        };
        if let Some(i) = slot {
            self.counts[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        match outcome {
            Compared::Same => {}
            Compared::Created(p) | Compared::Accepted(p) => {
                let note = format!("snapshot written: {}", p.display());
                if result.message.is_empty() {
                    result.message = note;
                } else {
                    result.message = format!("{}; {note}", result.message);
                }
            }
            Compared::Differs { diff, pending } => {
                result.verdict = Verdict::Fail;
                result.message = format!(
                    "the exchange differs from its snapshot; {} written (review it, then run with --accept){}",
                    pending.display(),
                    if result.message.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", result.message)
                    }
                );
                result.evidence = diff.lines().take(200).map(str::to_string).collect();
            }
            Compared::Error(e) => {
                result.verdict = Verdict::Fail;
                result.message = format!("snapshot: {e}");
            }
        }
    }
}

impl crate::engine::run::ScenarioListener for Store {
    fn finished(&self, result: &mut crate::engine::run::CaseResult, sessions: &[Vec<WireEvent>]) {
        self.judge(result, sessions);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::transport::wire::{Frame, Line};
    use std::time::Duration;

    fn ev(dir: Dir, s: &str) -> WireEvent {
        WireEvent {
            dir,
            t: Duration::ZERO,
            frame: Frame::Line(Line {
                bytes: s.as_bytes().to_vec(),
                len: s.len() as u64,
                over_cap: false,
                sha256: None,
                terminated: true,
                elided: false,
            }),
        }
    }

    #[test]
    fn store_creates_compares_and_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let a = vec![vec![
            ev(Dir::C2s, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            ev(Dir::Stderr, "log"),
            ev(Dir::S2c, r#"{"result":{},"jsonrpc":"2.0","id":1}"#),
        ]];
        let b = vec![vec![ev(Dir::S2c, "banner")]];
        let s = Store::new(dir.path(), false, Vec::new()).unwrap();
        assert!(matches!(
            s.compare("x@mcp-stdio#1", &a),
            Compared::Created(_)
        ));
        let text = std::fs::read_to_string(dir.path().join("x@mcp-stdio+1.snap")).unwrap();
        assert_eq!(
            text,
            "# parity snapshot 1: x@mcp-stdio#1\nc2s {\"id\":\"[ID]\",\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\ns2c {\"id\":\"[ID]\",\"jsonrpc\":\"2.0\",\"result\":{}}\n"
        );
        assert_eq!(s.compare("x@mcp-stdio#1", &a), Compared::Same);
        let Compared::Differs { diff, pending } = s.compare("x@mcp-stdio#1", &b) else {
            panic!("no difference")
        };
        assert!(diff.contains("+s2c-text banner"), "{diff}");
        assert!(pending.exists());
        std::fs::write(dir.path().join("gone.snap"), "").unwrap();
        assert_eq!(s.unreferenced(), vec![dir.path().join("gone.snap")]);
        let s = Store::new(dir.path(), true, Vec::new()).unwrap();
        assert!(matches!(
            s.compare("x@mcp-stdio#1", &b),
            Compared::Accepted(_)
        ));
        assert!(!pending.exists());
        assert_eq!(s.compare("x@mcp-stdio#1", &b), Compared::Same);
    }
}
