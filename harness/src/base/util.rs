//! Small helpers shared by the harness modules.

/// Like `println!`, but a closed stdout (`parity list | head`) is not a panic: write errors are
/// ignored.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// Like `print!`, ignoring write errors (see [`outln!`]).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// What a JSON value is, for error messages: `null`, `a boolean`, `a number`, `a string`,
/// `an array`, `an object`.
pub fn json_type(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Cuts `s` to at most `max` bytes on a character boundary, adding `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Writes `contents` to `path` (created or truncated), creating its directory first when it
/// is missing, the way `--json`, `--junit` and `--html` expect.
///
/// Errors: the directory cannot be created or the file cannot be written.
pub fn write_file(path: &std::path::Path, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, contents)
}

/// The signal named `name` (`HUP`, `usr1`, `SIGTERM`; case-insensitive, `SIG` optional).
///
/// Errors: not a signal name, as "\"NAME\" is not a signal name (HUP, USR1, …)".
pub fn parse_signal(name: &str) -> Result<nix::sys::signal::Signal, String> {
    let upper = name.trim().to_ascii_uppercase();
    let full = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    full.parse::<nix::sys::signal::Signal>()
        .map_err(|_| format!("{name:?} is not a signal name (HUP, USR1, …)"))
}

/// Whether `name` is a signal name [`parse_signal`] accepts (`HUP`, `SIGUSR1`, …).
pub fn valid_signal(name: &str) -> bool {
    parse_signal(name).is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(super::clip("héllo", 2), "h…");
        assert_eq!(super::clip("abc", 5), "abc");
    }
}
