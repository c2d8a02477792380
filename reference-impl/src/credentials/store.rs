//! The credential store: one private file per key (seed rules 38–47, `seed-rules.md` §5; the
//! seed's `makeMcpCredentialFiles`).
//!
//! Shape: [`CredentialStore::new`] (or [`CredentialStore::new_in`] a base directory) makes an
//! empty store; [`CredentialStore::write`] puts a header value (the bytes of an `Authorization`
//! header, e.g. `Bearer abc`) in a key's file and returns the file's path;
//! [`CredentialStore::remove`] deletes a key's file but keeps its path;
//! [`CredentialStore::close`] (or dropping the store) deletes every directory.
//!
//! On disk, the first write for a key creates a fresh directory `<base>/parity-cred-XXXXXX`
//! (random suffix, created exclusively like `mkdtemp`, mode 0700) holding one file
//! `authorization` (mode 0600) whose content is exactly the header bytes, with no newline.
//!
//! A write of a changed header never touches the live file: it deletes any leftover
//! `<path>.tmp`, creates `<path>.tmp` exclusively (create-new, mode 0600), writes and syncs it,
//! and renames it over `<path>`. The path stays the same and the inode changes, so a reader that
//! opens the path sees either the old or the new header, whole, and never a missing file. Every
//! write and remove holds one lock, so they are serialized; the store is `Send + Sync`.
//!
//! The store never logs, prints or formats a header: its `Debug` output shows keys and paths.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::{AUTHORIZATION_FILE_NAME, DIR_PREFIX};

/// Mode of a key's directory (rule 38: what `mkdtemp` gives on POSIX).
pub const DIR_MODE: u32 = 0o700;

/// Mode of a key's file and of its `.tmp` (rules 39 and 42).
pub const FILE_MODE: u32 = 0o600;

/// Number of random characters in a directory name (`parity-cred-XXXXXX`).
const RANDOM_CHARS: usize = 6;

/// A step a test or a faulty host can replace: called with the `.tmp` path.
pub type TmpHook = Box<dyn Fn(&Path) + Send + Sync>;

/// A replacement for the rename step: called with `(from, to)`.
pub type RenameHook = Box<dyn Fn(&Path, &Path) -> io::Result<()> + Send + Sync>;

/// Fault-injection seam of [`CredentialStore`]: steps of a rotation that a test (or a faulty
/// host built around the store) replaces, so a failed rename or a file planted at the wrong
/// moment can be tested deterministically. [`StoreHooks::default`] changes nothing; the
/// reference launcher never sets a hook.
#[derive(Default)]
pub struct StoreHooks {
    /// Called after the leftover `<path>.tmp` was deleted and before `<path>.tmp` is created
    /// exclusively, with the `.tmp` path (rule 47: a file planted here makes the write fail).
    pub after_tmp_delete: Option<TmpHook>,
    /// Replaces `std::fs::rename(tmp, path)` (rule 43: a failing rename).
    pub rename: Option<RenameHook>,
}

impl fmt::Debug for StoreHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreHooks")
            .field("after_tmp_delete", &self.after_tmp_delete.is_some())
            .field("rename", &self.rename.is_some())
            .finish()
    }
}

/// One key's directory, file and recorded header.
struct Entry {
    dir: PathBuf,
    path: PathBuf,
    /// The header the file holds, recorded only after a successful write (rule 43); `None`
    /// after `remove` (rule 45).
    header: Option<String>,
}

struct State {
    entries: BTreeMap<String, Entry>,
    closed: bool,
}

/// Per-key private credential files (seed rules 38–47).
///
/// Every method takes `&self`; one internal lock serializes writes, removes and the close
/// (rule 47), so one store can be shared between threads (`Arc<CredentialStore>`).
///
/// Errors are `std::io::Error`s whose message names the file and the step that failed
/// ("failed to create …", "failed to rename …"); they never contain a header.
pub struct CredentialStore {
    base: PathBuf,
    state: Mutex<State>,
    hooks: StoreHooks,
}

impl fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        let paths: BTreeMap<&str, &Path> = state
            .entries
            .iter()
            .map(|(k, e)| (k.as_str(), e.path.as_path()))
            .collect();
        f.debug_struct("CredentialStore")
            .field("base", &self.base)
            .field("paths", &paths)
            .field("closed", &state.closed)
            .finish_non_exhaustive()
    }
}

impl Default for CredentialStore {
    fn default() -> Self {
        CredentialStore::new()
    }
}

impl CredentialStore {
    /// An empty store whose directories go under the system temp directory
    /// (`std::env::temp_dir()`, which honours `TMPDIR`). Nothing is created until the first
    /// [`write`](Self::write).
    pub fn new() -> Self {
        CredentialStore::new_in(std::env::temp_dir())
    }

    /// An empty store whose directories go under `base` (which must exist when the first key is
    /// written).
    pub fn new_in(base: impl Into<PathBuf>) -> Self {
        CredentialStore::with_hooks(base, StoreHooks::default())
    }

    /// Like [`new_in`](Self::new_in), with fault-injection `hooks` ([`StoreHooks`]).
    pub fn with_hooks(base: impl Into<PathBuf>, hooks: StoreHooks) -> Self {
        CredentialStore {
            base: base.into(),
            state: Mutex::new(State {
                entries: BTreeMap::new(),
                closed: false,
            }),
            hooks,
        }
    }

    /// The directory keys' directories are created in.
    pub fn base(&self) -> &Path {
        &self.base
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves the state consistent (every field is updated
        // only after the step it describes succeeded), so a poisoned lock is still usable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `header` as `key`'s file and returns the file's path (rules 38–44, 47).
    ///
    /// - The first write for `key` creates its directory (0700) under the base directory; the
    ///   path `<dir>/authorization` then stays the same for the store's life (rule 40).
    /// - A header equal to the recorded one writes nothing: same path, same inode (rule 41).
    /// - Otherwise any leftover `<path>.tmp` is deleted, `<path>.tmp` is created exclusively
    ///   with mode 0600, written, synced and renamed over `<path>` (rule 42), then the header is
    ///   recorded. The file holds exactly the header bytes (rule 39).
    ///
    /// # Errors
    /// The store is closed; the directory cannot be created; the `.tmp` cannot be deleted or
    /// created (a `.tmp` that appears between the delete and the create makes the create fail
    /// with `AlreadyExists`, and is never written into); writing, syncing or renaming fails. On
    /// a failed write, sync or rename the store's own `.tmp` is removed; on any failure the old
    /// content and the recorded header stay as they were (rule 43), and a retry writes the
    /// same path (rule 44).
    pub fn write(&self, key: &str, header: &str) -> io::Result<PathBuf> {
        let mut state = self.lock();
        if state.closed {
            return Err(io::Error::other("the credential store is closed"));
        }
        if !state.entries.contains_key(key) {
            let dir = self.create_dir()?;
            let path = dir.join(AUTHORIZATION_FILE_NAME);
            state.entries.insert(
                key.to_owned(),
                Entry {
                    dir,
                    path,
                    header: None,
                },
            );
        }
        let Some(entry) = state.entries.get_mut(key) else {
            return Err(io::Error::other("the credential store lost a key"));
        };
        if entry.header.as_deref() == Some(header) {
            return Ok(entry.path.clone());
        }
        self.replace(&entry.dir, &entry.path, header.as_bytes())?;
        entry.header = Some(header.to_owned());
        Ok(entry.path.clone())
    }

    /// The path of `key`'s file, if `key` was ever written (also after [`remove`](Self::remove),
    /// which keeps the path; `None` after [`close`](Self::close)).
    pub fn path(&self, key: &str) -> Option<PathBuf> {
        self.lock().entries.get(key).map(|e| e.path.clone())
    }

    /// Every key's directory, in key order (empty after [`close`](Self::close)).
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.lock()
            .entries
            .values()
            .map(|e| e.dir.clone())
            .collect()
    }

    /// Deletes `key`'s file and `.tmp` and forgets its header, keeping the path for a later
    /// [`write`](Self::write) (rule 45). The header is forgotten first, so even when a delete
    /// fails the next write of any header writes the file again. An unknown key, or a key whose
    /// file is already gone, is a no-op.
    ///
    /// # Errors
    /// Deleting `<path>` or `<path>.tmp` fails with anything but "not found".
    pub fn remove(&self, key: &str) -> io::Result<()> {
        let mut state = self.lock();
        let Some(entry) = state.entries.get_mut(key) else {
            return Ok(());
        };
        entry.header = None;
        let path = entry.path.clone();
        let first = remove_if_present(&path);
        let second = remove_if_present(&tmp_path(&path));
        first.and(second)
    }

    /// Deletes every key's directory and everything in it, and closes the store: later writes
    /// fail, removes are no-ops (rule 46). Closing twice is a no-op.
    ///
    /// # Errors
    /// The first directory that could not be deleted (the others are still deleted).
    pub fn close(&self) -> io::Result<()> {
        let mut state = self.lock();
        state.closed = true;
        let entries = std::mem::take(&mut state.entries);
        let mut result = Ok(());
        for entry in entries.into_values() {
            match fs::remove_dir_all(&entry.dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    if result.is_ok() {
                        result = Err(annotate(e, "delete", &entry.dir));
                    }
                }
            }
        }
        result
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Creates a fresh private directory like `mkdtemp` (exclusive, random name) and makes its
    /// mode exactly 0700 whatever the umask.
    fn create_dir(&self) -> io::Result<PathBuf> {
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .rand_bytes(RANDOM_CHARS)
            .permissions(Permissions::from_mode(DIR_MODE))
            .tempdir_in(&self.base)
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "failed to create a credential directory in {}: {e}",
                        self.base.display()
                    ),
                )
            })?
            .keep();
        if let Err(e) = fs::set_permissions(&dir, Permissions::from_mode(DIR_MODE)) {
            let _ = fs::remove_dir(&dir);
            return Err(annotate(e, "set the mode of", &dir));
        }
        Ok(dir)
    }

    /// Rotation: delete leftover `.tmp`, create it exclusively 0600, write, sync, rename.
    fn replace(&self, dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let tmp = tmp_path(path);
        remove_if_present(&tmp)?;
        if let Some(hook) = &self.hooks.after_tmp_delete {
            hook(&tmp);
        }
        // `create_new` is O_CREAT|O_EXCL: a `.tmp` that exists now (planted, or left by a
        // racing writer) makes this fail instead of being written into. It is not the store's
        // file, so it is left alone; the next write deletes it first.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&tmp)
            .map_err(|e| annotate(e, "create", &tmp))?;
        let written = file
            // The umask may have cleared bits of the requested mode: make it exactly 0600.
            .set_permissions(Permissions::from_mode(FILE_MODE))
            .map_err(|e| annotate(e, "set the mode of", &tmp))
            .and_then(|()| {
                file.write_all(bytes)
                    .map_err(|e| annotate(e, "write", &tmp))
            })
            .and_then(|()| file.sync_all().map_err(|e| annotate(e, "sync", &tmp)));
        drop(file);
        let renamed = written.and_then(|()| {
            match &self.hooks.rename {
                Some(hook) => hook(&tmp, path),
                None => fs::rename(&tmp, path),
            }
            .map_err(|e| annotate(e, "rename", &tmp))
        });
        if let Err(e) = renamed {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        // Make the rename durable; the new content is already in place, so a directory that
        // cannot be synced is not an error.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for CredentialStore {
    /// Closes the store (best effort): every directory is deleted.
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// `<path>.tmp`.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(annotate(e, "delete", path)),
    }
}

fn annotate(e: io::Error, step: &str, path: &Path) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("failed to {step} {}: {e}", path.display()),
    )
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
