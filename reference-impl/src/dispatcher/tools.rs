//! The workspace tools (`read_file`, `write_file`, `list_dir`, `exec`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::args::as_integer;
use super::paths::{io_failure, resolve};
use super::refusal::RefusalCode;
use super::{arg_str, Failure};

/// Bytes of `exec` stdout and of stderr kept, each: 1 MiB. The rest is read and dropped
/// (so the child never blocks on a full pipe) and the outcome gets a warning.
pub const EXEC_OUTPUT_CAP: usize = 1024 * 1024;

/// `PATH` for `exec` children when the server itself has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Runs blocking filesystem work off the async threads.
async fn blocking<F>(work: F) -> Result<Value, Failure>
where
    F: FnOnce() -> Result<Value, Failure> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(Failure::ToolError(format!("tool task failed: {e}"))))
}

fn owned_path(arguments: &Map<String, Value>, default: Option<&str>) -> String {
    arg_str(arguments, "path")
        .or(default)
        .unwrap_or_default()
        .to_owned()
}

/// Files up to this size (256 KiB) are read on the calling task: the few syscalls cost less than
/// the hop to a blocking thread. Larger files are read on the blocking pool, so a big read never
/// stalls the surface's other requests.
pub const INLINE_READ_MAX: u64 = 256 * 1024;

/// `read_file {path}` → `{"content": string}`.
pub(crate) async fn read_file(
    root: &Path,
    arguments: &Map<String, Value>,
) -> Result<Value, Failure> {
    let user = owned_path(arguments, None);
    let path = resolve(root, &user)?;
    let meta = fs::metadata(&path).map_err(|e| io_failure(&user, &e))?;
    if meta.is_dir() {
        return Err(Failure::refused(
            RefusalCode::IsADirectory,
            format!("path `{user}` is a directory"),
        ));
    }
    if !meta.is_file() {
        return Err(Failure::ToolError(format!(
            "path `{user}` is not a regular file"
        )));
    }
    let read = move || {
        let bytes = fs::read(&path).map_err(|e| io_failure(&user, &e))?;
        let content = String::from_utf8(bytes)
            .map_err(|_| Failure::ToolError(format!("file `{user}` is not valid UTF-8")))?;
        Ok(json!({ "content": content }))
    };
    if meta.len() <= INLINE_READ_MAX {
        read()
    } else {
        blocking(read).await
    }
}

/// `write_file {path, content}` → `{"bytes_written": n}`.
pub(crate) async fn write_file(
    root: &Path,
    arguments: &Map<String, Value>,
) -> Result<Value, Failure> {
    let root = root.to_path_buf();
    let user = owned_path(arguments, None);
    let content = arg_str(arguments, "content").unwrap_or_default().to_owned();
    blocking(move || {
        let path = resolve(&root, &user)?;
        match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(Failure::refused(
                    RefusalCode::IsADirectory,
                    format!("path `{user}` is a directory"),
                ));
            }
            Ok(meta) if !meta.is_file() => {
                return Err(Failure::ToolError(format!(
                    "path `{user}` is not a regular file"
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_failure(&user, &e)),
        }
        fs::write(&path, content.as_bytes()).map_err(|e| io_failure(&user, &e))?;
        Ok(json!({ "bytes_written": content.len() }))
    })
    .await
}

/// `list_dir {path?}` → `{"entries":[{"name","kind"}]}` sorted by name. `kind` is
/// `"dir"` when the entry (following symbolic links) is a directory, else `"file"`.
pub(crate) async fn list_dir(
    root: &Path,
    arguments: &Map<String, Value>,
) -> Result<Value, Failure> {
    let root = root.to_path_buf();
    let user = owned_path(arguments, Some("."));
    blocking(move || {
        let path = resolve(&root, &user)?;
        let meta = fs::metadata(&path).map_err(|e| io_failure(&user, &e))?;
        if !meta.is_dir() {
            return Err(Failure::refused(
                RefusalCode::NotADirectory,
                format!("path `{user}` is not a directory"),
            ));
        }
        let mut entries = Vec::new();
        for entry in fs::read_dir(&path).map_err(|e| io_failure(&user, &e))? {
            let entry = entry.map_err(|e| io_failure(&user, &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_dir = fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            entries.push((name, if is_dir { "dir" } else { "file" }));
        }
        entries.sort();
        let entries: Vec<Value> = entries
            .into_iter()
            .map(|(name, kind)| json!({ "name": name, "kind": kind }))
            .collect();
        Ok(json!({ "entries": entries }))
    })
    .await
}

/// Reads `reader` to the end, keeping the first `cap` bytes. Returns the kept bytes and
/// whether anything was dropped.
async fn read_capped<R: AsyncRead + Unpin>(
    reader: Option<R>,
    cap: usize,
) -> io::Result<(Vec<u8>, bool)> {
    let mut kept = Vec::new();
    let mut truncated = false;
    let Some(mut reader) = reader else {
        return Ok((kept, truncated));
    };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok((kept, truncated));
        }
        let room = cap.saturating_sub(kept.len());
        let take = n.min(room);
        kept.extend_from_slice(chunk.get(..take).unwrap_or_default());
        truncated |= take < n;
    }
}

/// `exec {argv, timeout_ms?}` → `{"exit_code","stdout","stderr"}`.
pub(crate) async fn exec(
    root: &Path,
    allow: &[String],
    max_timeout_ms: u64,
    arguments: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<Value, Failure> {
    let argv: Vec<String> = arguments
        .get("argv")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let Some((program, rest)) = argv.split_first() else {
        return Err(Failure::refused(
            RefusalCode::InvalidArguments,
            "argument `argv` must have at least 1 item(s)",
        ));
    };
    if argv.iter().any(|arg| arg.contains('\0')) {
        return Err(Failure::refused(
            RefusalCode::InvalidArguments,
            "argument `argv` must not contain a NUL byte",
        ));
    }
    if !allow.iter().any(|allowed| allowed == program) {
        return Err(Failure::refused(
            RefusalCode::ExecNotAllowed,
            format!("program `{program}` is not in the exec allow-list"),
        ));
    }
    let timeout_ms = arguments
        .get("timeout_ms")
        .and_then(as_integer)
        .map_or(max_timeout_ms, |requested| requested.min(max_timeout_ms));

    let cwd: PathBuf = fs::canonicalize(root)
        .map_err(|e| Failure::ToolError(format!("workspace root is not accessible: {e}")))?;
    let path_var = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let mut command = Command::new(program);
    command
        .args(rest)
        .current_dir(&cwd)
        .env_clear()
        .env("PATH", path_var)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Failure::refused(
            RefusalCode::NotFound,
            format!("program `{program}` was not found"),
        ),
        _ => Failure::ToolError(format!("failed to start `{program}`: {e}")),
    })?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let run = async {
        let (out, err, status) = tokio::join!(
            read_capped(stdout, EXEC_OUTPUT_CAP),
            read_capped(stderr, EXEC_OUTPUT_CAP),
            child.wait()
        );
        (out, err, status)
    };
    let finished = tokio::time::timeout(Duration::from_millis(timeout_ms), run).await;
    let Ok((out, err, status)) = finished else {
        // `kill` also reaps; an error means the child already exited.
        let _ = child.kill().await;
        return Err(Failure::refused(
            RefusalCode::ToolTimeout,
            format!("`{program}` exceeded the time limit of {timeout_ms} ms and was killed"),
        ));
    };
    let status =
        status.map_err(|e| Failure::ToolError(format!("failed to wait for `{program}`: {e}")))?;
    let (stdout, stdout_cut) =
        out.map_err(|e| Failure::ToolError(format!("failed to read stdout of `{program}`: {e}")))?;
    let (stderr, stderr_cut) =
        err.map_err(|e| Failure::ToolError(format!("failed to read stderr of `{program}`: {e}")))?;
    if stdout_cut {
        warnings.push(format!("stdout truncated to {EXEC_OUTPUT_CAP} bytes"));
    }
    if stderr_cut {
        warnings.push(format!("stderr truncated to {EXEC_OUTPUT_CAP} bytes"));
    }
    Ok(json!({
        "exit_code": status.code(),
        "stdout": String::from_utf8_lossy(&stdout),
        "stderr": String::from_utf8_lossy(&stderr),
    }))
}
