//! Store tests mirroring the seed's list (T3-ST `makeMcpCredentialFiles`, rules 38–47, issue 7
//! "Build the reference" point 5). Each one drives the real file system in a fresh temporary
//! base directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

fn ino(path: &Path) -> u64 {
    fs::metadata(path).unwrap().ino()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().mode() & 0o7777
}

fn content(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

/// The `parity-cred-*` directories under `base`.
fn cred_dirs(base: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(DIR_PREFIX))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn store_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CredentialStore>();
}

#[test]
fn rewrites_a_keys_file_in_place_and_skips_an_unchanged_header() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    let path = store.write("mcp", "Bearer one").unwrap();

    // Rule 38: own fresh private directory under the base, named like mkdtemp.
    let dir = path.parent().unwrap();
    assert_eq!(dir.parent().unwrap(), base.path());
    let name = dir.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("parity-cred-"), "{name}");
    assert_eq!(name.len(), "parity-cred-".len() + 6, "{name}");
    assert_eq!(mode(dir), 0o700);
    assert_eq!(path.file_name().unwrap(), "authorization");
    // Rule 39: 0600, exactly the header bytes, no newline.
    assert_eq!(mode(&path), 0o600);
    assert_eq!(fs::read(&path).unwrap(), b"Bearer one");
    let first = ino(&path);

    // Rule 41: unchanged header: same path, same inode, no write.
    let again = store.write("mcp", "Bearer one").unwrap();
    assert_eq!(again, path);
    assert_eq!(ino(&path), first);
    assert_eq!(store.path("mcp").unwrap(), path);
}

#[test]
fn rotation_keeps_path_and_mode_with_a_new_inode() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    let path = store.write("mcp", "Bearer one").unwrap();
    let first = ino(&path);
    // Keep the old inode open, so the file system cannot hand the same number to the new file.
    let old = File::open(&path).unwrap();

    let rotated = store.write("mcp", "Bearer two-longer").unwrap();
    assert_eq!(rotated, path, "rule 40: the path survives rotation");
    assert_ne!(
        ino(&path),
        first,
        "rule 42: rotation renames a new file over the old one"
    );
    assert_eq!(mode(&path), 0o600);
    assert_eq!(content(&path), "Bearer two-longer");
    assert!(!tmp_path(&path).exists(), "no .tmp after a rotation");
    // The old inode was never written into.
    let mut was = String::new();
    (&old).read_to_string(&mut was).unwrap();
    assert_eq!(was, "Bearer one");
    assert_eq!(cred_dirs(base.path()).len(), 1);
}

#[test]
fn puts_a_removed_file_back_at_the_same_path() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    let path = store.write("mcp", "Bearer one").unwrap();
    fs::write(tmp_path(&path), b"leftover").unwrap();

    store.remove("mcp").unwrap();
    assert!(!path.exists(), "rule 45: remove deletes the file");
    assert!(
        !tmp_path(&path).exists(),
        "rule 45: remove deletes the .tmp"
    );
    assert_eq!(
        store.path("mcp").unwrap(),
        path,
        "rule 45: the path is kept"
    );
    assert!(path.parent().unwrap().is_dir());
    // Removing again, and removing an unknown key, are no-ops.
    store.remove("mcp").unwrap();
    store.remove("unknown").unwrap();
    assert!(store.path("unknown").is_none());

    // The header was forgotten, so writing the same header again writes the file.
    let back = store.write("mcp", "Bearer one").unwrap();
    assert_eq!(back, path);
    assert_eq!(content(&path), "Bearer one");
    assert_eq!(mode(&path), 0o600);
    assert_eq!(
        cred_dirs(base.path()),
        vec![path.parent().unwrap().to_path_buf()]
    );
}

/// A rename hook that fails while `fail` is set.
fn failing_rename(fail: Arc<AtomicBool>, calls: Arc<AtomicUsize>) -> StoreHooks {
    StoreHooks {
        rename: Some(Box::new(move |from: &Path, to: &Path| {
            calls.fetch_add(1, Ordering::SeqCst);
            if fail.load(Ordering::SeqCst) {
                Err(io::Error::other("injected rename failure"))
            } else {
                fs::rename(from, to)
            }
        })),
        ..StoreHooks::default()
    }
}

#[test]
fn leaves_no_temporary_file_behind_when_a_write_fails() {
    let base = tempfile::tempdir().unwrap();
    let fail = Arc::new(AtomicBool::new(true));
    let calls = Arc::new(AtomicUsize::new(0));
    let store =
        CredentialStore::with_hooks(base.path(), failing_rename(fail.clone(), calls.clone()));

    // The very first write fails: no file, no .tmp, and the error is surfaced (rule 43).
    let err = store.write("mcp", "Bearer one").unwrap_err();
    assert!(err.to_string().contains("failed to rename"), "{err}");
    assert!(!err.to_string().contains("Bearer"), "{err}");
    let path = store.path("mcp").unwrap();
    assert!(!path.exists());
    assert!(!tmp_path(&path).exists(), "rule 43: the .tmp is removed");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the injected rename ran");

    // `remove` clears the (absent) file even though no header was ever recorded (rule 45).
    store.remove("mcp").unwrap();

    // A retry reuses the same path and directory (rule 44).
    fail.store(false, Ordering::SeqCst);
    assert_eq!(store.write("mcp", "Bearer one").unwrap(), path);
    assert_eq!(content(&path), "Bearer one");
    let good = ino(&path);

    // A later failed rotation keeps the old content and the recorded header.
    fail.store(true, Ordering::SeqCst);
    assert!(store.write("mcp", "Bearer two").is_err());
    assert_eq!(
        content(&path),
        "Bearer one",
        "rule 43: old content readable"
    );
    assert_eq!(ino(&path), good);
    assert!(!tmp_path(&path).exists(), "rule 43: the .tmp is removed");
    // The recorded header is still "Bearer one": writing it again is a no-op (no rename runs).
    let before = calls.load(Ordering::SeqCst);
    assert_eq!(store.write("mcp", "Bearer one").unwrap(), path);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        before,
        "rule 43: recorded header unchanged"
    );
    assert_eq!(ino(&path), good);

    // Only one directory (one file) was ever created for the key (rule 44).
    assert_eq!(cred_dirs(base.path()).len(), 1);
}

#[test]
fn a_planted_0644_tmp_is_replaced_never_written_into() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    let path = store.write("mcp", "Bearer one").unwrap();
    let tmp = tmp_path(&path);
    fs::write(&tmp, b"planted").unwrap();
    fs::set_permissions(&tmp, Permissions::from_mode(0o644)).unwrap();
    let planted = File::open(&tmp).unwrap();
    let planted_ino = planted.metadata().unwrap().ino();

    store.write("mcp", "Bearer two").unwrap();
    assert_eq!(content(&path), "Bearer two");
    assert_eq!(
        mode(&path),
        0o600,
        "rule 47: the new file is 0600, not the planted 0644"
    );
    assert_ne!(
        ino(&path),
        planted_ino,
        "rule 47: the planted inode is not the new file"
    );
    assert!(!tmp.exists());
    let mut was = String::new();
    (&planted).read_to_string(&mut was).unwrap();
    assert_eq!(
        was, "planted",
        "rule 47: the planted file was never written into"
    );
}

#[test]
fn a_tmp_planted_between_the_delete_and_the_create_makes_the_write_fail() {
    let base = tempfile::tempdir().unwrap();
    let plant = Arc::new(AtomicBool::new(false));
    let planted = Arc::new(AtomicUsize::new(0));
    let hooks = StoreHooks {
        after_tmp_delete: Some(Box::new({
            let plant = plant.clone();
            let planted = planted.clone();
            move |tmp: &Path| {
                if plant.load(Ordering::SeqCst) {
                    fs::write(tmp, b"planted").unwrap();
                    fs::set_permissions(tmp, Permissions::from_mode(0o644)).unwrap();
                    planted.fetch_add(1, Ordering::SeqCst);
                }
            }
        })),
        ..StoreHooks::default()
    };
    let store = CredentialStore::with_hooks(base.path(), hooks);
    let path = store.write("mcp", "Bearer one").unwrap();
    let good = ino(&path);

    plant.store(true, Ordering::SeqCst);
    let err = store.write("mcp", "Bearer two").unwrap_err();
    assert_eq!(
        planted.load(Ordering::SeqCst),
        1,
        "the hook planted the file"
    );
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
    assert_eq!(
        content(&path),
        "Bearer one",
        "rule 47: the old content stays"
    );
    assert_eq!(ino(&path), good);
    assert_eq!(
        fs::read(tmp_path(&path)).unwrap(),
        b"planted",
        "rule 47: the planted .tmp was never written into"
    );

    // The recorded header is unchanged: writing it again is a no-op.
    assert_eq!(store.write("mcp", "Bearer one").unwrap(), path);
    assert_eq!(ino(&path), good);

    // Without the intruder, the next rotation deletes the leftover and succeeds.
    plant.store(false, Ordering::SeqCst);
    store.write("mcp", "Bearer two").unwrap();
    assert_eq!(content(&path), "Bearer two");
    assert!(!tmp_path(&path).exists());
}

#[test]
fn removes_every_keys_directory_when_the_store_closes() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    let a = store.write("a", "Bearer a").unwrap();
    let b = store.write("b", "Bearer b").unwrap();
    let c = store.write("c", "Bearer c").unwrap();
    store.remove("c").unwrap();
    let dirs: Vec<PathBuf> = [&a, &b, &c]
        .iter()
        .map(|p| p.parent().unwrap().to_path_buf())
        .collect();
    assert_ne!(dirs[0], dirs[1], "rule 38: one directory per key");
    assert_ne!(dirs[1], dirs[2]);
    assert_eq!(cred_dirs(base.path()).len(), 3);

    store.close().unwrap();
    for d in &dirs {
        assert!(!d.exists(), "rule 46: {} is gone", d.display());
    }
    assert!(cred_dirs(base.path()).is_empty());
    assert!(store.is_closed());
    assert!(
        store.write("a", "Bearer a").is_err(),
        "a closed store refuses writes"
    );
    store.remove("a").unwrap();
    store.close().unwrap();
}

#[test]
fn dropping_the_store_removes_its_directories() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    let path = store.write("mcp", "Bearer one").unwrap();
    assert!(path.exists());
    drop(store);
    assert!(!path.parent().unwrap().exists());
    assert!(cred_dirs(base.path()).is_empty());
}

#[test]
fn a_reader_never_sees_the_file_missing_or_partial_through_1000_rotations() {
    use std::sync::atomic::AtomicUsize;
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    // Headers of different lengths, so a partial read can be told from a whole one.
    let header = |i: usize| format!("Bearer {i}-{}", "x".repeat(i % 97));
    let path = store.write("mcp", &header(0)).unwrap();
    let stop = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    let (seen, bad) = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut seen = std::collections::HashSet::new();
            let mut bad = Vec::new();
            loop {
                // Read once more after the writer finished.
                let last = stop.load(Ordering::SeqCst);
                match fs::read_to_string(&path) {
                    Ok(text) => {
                        let version = text
                            .strip_prefix("Bearer ")
                            .and_then(|rest| rest.split_once('-'))
                            .and_then(|(i, _)| i.parse::<usize>().ok())
                            .filter(|i| *i <= 1000 && text == header(*i));
                        match version {
                            Some(i) => {
                                seen.insert(i);
                            }
                            None => bad.push(format!("partial content: {text:?}")),
                        }
                    }
                    Err(e) => bad.push(format!("read failed: {e}")),
                }
                reads.fetch_add(1, Ordering::SeqCst);
                if last {
                    break;
                }
            }
            (seen, bad)
        });
        for i in 1..=1000 {
            // Every 50 rotations, wait for the reader to complete a read, so reads are spread
            // over the whole run however the threads are scheduled (bounded: a stuck reader
            // fails the test instead of hanging it).
            if i % 50 == 0 {
                let before = reads.load(Ordering::SeqCst);
                let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
                while reads.load(Ordering::SeqCst) == before {
                    assert!(
                        std::time::Instant::now() < until,
                        "the reader stopped reading"
                    );
                    std::thread::yield_now();
                }
            }
            assert_eq!(store.write("mcp", &header(i)).unwrap(), path);
        }
        stop.store(true, Ordering::SeqCst);
        reader.join().unwrap()
    });
    let reads = reads.load(Ordering::SeqCst);
    assert!(
        bad.is_empty(),
        "{} bad reads of {reads}: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
    // At least one read in each of the 20 stretches of 50 rotations, each seeing a whole
    // header; the final read sees the last one.
    assert!(reads >= 21, "{reads} reads");
    assert!(
        seen.len() >= 20,
        "only {} distinct headers read",
        seen.len()
    );
    assert!(seen.contains(&1000));
    assert_eq!(content(&path), header(1000));
    assert!(!tmp_path(&path).exists());
}

#[test]
fn concurrent_writers_are_serialized() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    std::thread::scope(|s| {
        for t in 0..4 {
            let store = &store;
            s.spawn(move || {
                for i in 0..100 {
                    // Without the lock, one writer would delete another's .tmp mid-write and a
                    // rename would fail with "not found".
                    store.write("mcp", &format!("Bearer {t}-{i}")).unwrap();
                    if i % 10 == 0 {
                        store.remove("mcp").unwrap();
                    }
                }
            });
        }
    });
    let path = store.path("mcp").unwrap();
    let text = content(&path);
    assert!(
        text.starts_with("Bearer ") && text.ends_with("-99"),
        "{text}"
    );
    assert!(!tmp_path(&path).exists());
    assert_eq!(cred_dirs(base.path()).len(), 1);
}

#[test]
fn debug_output_never_shows_a_header() {
    let base = tempfile::tempdir().unwrap();
    let store = CredentialStore::new_in(base.path());
    store.write("mcp", "Bearer secret-value").unwrap();
    let shown = format!("{store:?}");
    assert!(shown.contains("mcp"), "{shown}");
    assert!(!shown.contains("secret-value"), "{shown}");
}
