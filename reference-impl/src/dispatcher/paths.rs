//! Confinement of peer-supplied paths to the workspace root.
//!
//! A path is resolved like `realpath(3)`, one component at a time, starting from the
//! canonical root: every existing symbolic link is followed (relative targets against
//! the link's directory, absolute targets from `/`), `..` is applied to the physical
//! parent, and the final location must lie under the canonical root. A missing final
//! component is allowed (so `write_file` can create it); a missing intermediate one is
//! `NOT_FOUND`. The returned path has no symbolic link in any existing component, so
//! opening it cannot leave the root (barring a concurrent rename, which the reference
//! does not defend against).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::refusal::RefusalCode;
use super::Failure;

/// Symbolic links followed per resolution before giving up (Linux's `MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;

enum Step {
    Parent,
    Name(OsString),
}

/// Resolves `user` (relative to `root`) to a symlink-free absolute path inside the
/// canonical root.
///
/// # Errors
/// - `INVALID_ARGUMENTS` when `user` contains a NUL byte;
/// - `PATH_OUTSIDE_ROOT` when `user` is absolute, climbs above the root with `..`, or
///   resolves outside the root through symbolic links;
/// - `NOT_FOUND` / `NOT_A_DIRECTORY` when an intermediate component is missing or is not
///   a directory;
/// - `tool_error` when the root is not accessible, on other I/O errors, or after
///   [`MAX_SYMLINKS`] links.
pub(crate) fn resolve(root: &Path, user: &str) -> Result<PathBuf, Failure> {
    if user.contains('\0') {
        return Err(Failure::refused(
            RefusalCode::InvalidArguments,
            "argument `path` must not contain a NUL byte",
        ));
    }
    let outside = || {
        Failure::refused(
            RefusalCode::PathOutsideRoot,
            format!("path `{user}` is outside the workspace root"),
        )
    };
    let mut queue = VecDeque::new();
    let mut depth: usize = 0;
    for component in Path::new(user).components() {
        match component {
            Component::Prefix(_) | Component::RootDir => return Err(outside()),
            Component::CurDir => {}
            Component::ParentDir => {
                depth = depth.checked_sub(1).ok_or_else(outside)?;
                queue.push_back(Step::Parent);
            }
            Component::Normal(name) => {
                depth += 1;
                queue.push_back(Step::Name(name.to_owned()));
            }
        }
    }

    let root = fs::canonicalize(root)
        .map_err(|e| Failure::ToolError(format!("workspace root is not accessible: {e}")))?;
    let mut current = root.clone();
    let mut links = 0usize;
    while let Some(step) = queue.pop_front() {
        match step {
            Step::Parent => {
                current.pop();
            }
            Step::Name(name) => {
                let candidate = current.join(&name);
                match fs::symlink_metadata(&candidate) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_SYMLINKS {
                            return Err(Failure::ToolError(format!(
                                "path `{user}`: too many levels of symbolic links"
                            )));
                        }
                        let target = fs::read_link(&candidate).map_err(|e| io_failure(user, &e))?;
                        let mut prefix = Vec::new();
                        for component in target.components() {
                            match component {
                                Component::Prefix(_) | Component::RootDir => {
                                    current = PathBuf::from(component.as_os_str());
                                    prefix.clear();
                                }
                                Component::CurDir => {}
                                Component::ParentDir => prefix.push(Step::Parent),
                                Component::Normal(part) => {
                                    prefix.push(Step::Name(part.to_owned()));
                                }
                            }
                        }
                        for step in prefix.into_iter().rev() {
                            queue.push_front(step);
                        }
                    }
                    Ok(meta) => {
                        if !meta.is_dir() && !queue.is_empty() {
                            return Err(Failure::refused(
                                RefusalCode::NotADirectory,
                                format!("path `{user}`: a component is not a directory"),
                            ));
                        }
                        current = candidate;
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound && queue.is_empty() => {
                        current = candidate;
                    }
                    Err(e) => return Err(io_failure(user, &e)),
                }
            }
        }
    }
    if current.starts_with(&root) {
        Ok(current)
    } else {
        Err(outside())
    }
}

/// Maps an I/O error on the peer path `user` to a refusal or a tool error. The message
/// names only the peer's own path, never the absolute root, so outcomes compare equal
/// across surfaces with different roots.
pub(crate) fn io_failure(user: &str, error: &io::Error) -> Failure {
    match error.kind() {
        io::ErrorKind::NotFound => Failure::refused(
            RefusalCode::NotFound,
            format!("path `{user}` does not exist"),
        ),
        io::ErrorKind::NotADirectory => Failure::refused(
            RefusalCode::NotADirectory,
            format!("path `{user}`: a component is not a directory"),
        ),
        io::ErrorKind::IsADirectory => Failure::refused(
            RefusalCode::IsADirectory,
            format!("path `{user}` is a directory"),
        ),
        _ => Failure::ToolError(format!("path `{user}`: {error}")),
    }
}
