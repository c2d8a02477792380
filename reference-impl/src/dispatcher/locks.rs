//! The one lock table shared by the lifecycle and the tool calls (seed `001`, D-96 and
//! P5-D15: "one LockTable passed to both the controller and the dispatcher").
//!
//! Keys are strings: [`LIFECYCLE_KEY`] for the lifecycle, and `path:<normalized path>` ([`path_key`]) for a
//! workspace path. Each key is a fair read/write lock:
//!
//! - a transition out of `active` (a backend that begins stopping) holds the lifecycle key for
//!   writing; transitions out of `connecting`, `error` or `disconnected` take no key (they
//!   cannot change what a running call was admitted under, and must not wait for one);
//! - a mutating tool (`write_file`, `exec`) holds it for reading across its policy check and
//!   its run, so a backend never stops under a mutation;
//! - `write_file` holds its path for writing, `read_file` and `list_dir` for reading, so calls
//!   on one path never interleave.
//!
//! Every wait is bounded by the caller (`tool_queue_ms`); a call that waits longer is refused
//! `QUEUE_TIMEOUT` (D-91).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

/// The key of the lifecycle in the table.
pub const LIFECYCLE_KEY: &str = "lifecycle";

/// Entries beyond this count are pruned of unheld keys on the next lookup.
const PRUNE_ABOVE: usize = 1024;

/// A held lock; released on drop.
#[derive(Debug)]
pub enum LockGuard {
    /// Shared hold.
    Read(OwnedRwLockReadGuard<()>),
    /// Exclusive hold.
    Write(OwnedRwLockWriteGuard<()>),
}

/// The lock could not be taken within the wait bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("waited {waited_ms} ms for `{key}` without getting it")]
pub struct QueueTimeout {
    /// The key waited for.
    pub key: String,
    /// The bound that ran out, in milliseconds.
    pub waited_ms: u64,
}

/// A table of named read/write locks; clone the `Arc` to share one table.
///
/// The dispatcher's keys: [`LIFECYCLE_KEY`], held exclusively by a transition out of
/// `active` and shared by a mutating tool across its policy check and run; and
/// [`path_key`] of a path, held exclusively by `write_file` and shared by `read_file` and
/// `list_dir`. The lifecycle key is always taken before a path key, so no two calls deadlock.
#[derive(Debug, Default)]
pub struct LockTable {
    entries: Mutex<HashMap<String, Arc<RwLock<()>>>>,
}

impl LockTable {
    /// An empty table.
    pub fn new() -> Self {
        LockTable::default()
    }

    fn entry(&self, key: &str) -> Arc<RwLock<()>> {
        let mut map = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() > PRUNE_ABOVE {
            // Only the table holds an unheld, unwaited key.
            map.retain(|_, lock| Arc::strong_count(lock) > 1);
        }
        map.entry(key.to_owned()).or_default().clone()
    }

    /// Takes `key` for reading, waiting at most `wait` (on tokio's timer).
    ///
    /// # Errors
    /// [`QueueTimeout`] when the wait runs out.
    pub async fn read(&self, key: &str, wait: Duration) -> Result<LockGuard, QueueTimeout> {
        let lock = self.entry(key);
        tokio::time::timeout(wait, lock.read_owned())
            .await
            .map(LockGuard::Read)
            .map_err(|_| timed_out(key, wait))
    }

    /// Takes `key` for writing, waiting at most `wait` (on tokio's timer).
    ///
    /// # Errors
    /// [`QueueTimeout`] when the wait runs out.
    pub async fn write(&self, key: &str, wait: Duration) -> Result<LockGuard, QueueTimeout> {
        let lock = self.entry(key);
        tokio::time::timeout(wait, lock.write_owned())
            .await
            .map(LockGuard::Write)
            .map_err(|_| timed_out(key, wait))
    }

    /// Takes `key` for writing with no bound (the startup settle, which must happen).
    pub async fn write_unbounded(&self, key: &str) -> LockGuard {
        LockGuard::Write(self.entry(key).write_owned().await)
    }
}

fn timed_out(key: &str, wait: Duration) -> QueueTimeout {
    QueueTimeout {
        key: key.to_owned(),
        waited_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
    }
}

/// The table key of a workspace path argument: `path:` and the path normalized lexically
/// (empty and `.` components dropped, `a/..` folded), so `a//b`, `./a/b` and `c/../a/b` share
/// the key of `a/b`; `"."` and `""` name the root (`path:.`). Symbolic links are not
/// resolved: two names of one file through a link get two keys.
pub fn path_key(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        "path:.".to_owned()
    } else {
        format!("path:{}", parts.join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::path_key;

    #[test]
    fn one_path_written_many_ways_has_one_key() {
        for p in [
            "a/b",
            "./a/b",
            "a//b",
            "a/./b/",
            "c/../a/b",
            "./c/d/../../a/b",
        ] {
            assert_eq!(path_key(p), "path:a/b", "{p}");
        }
        for p in ["", ".", "./", "a/.."] {
            assert_eq!(path_key(p), "path:.", "{p}");
        }
        assert_eq!(path_key("../x"), "path:../x");
    }
}
