//! Audit lines for source calls (seed rules 33–36).
//!
//! Each line is one compact JSON object followed by `\n`:
//!
//! - entry, after pre-flight passed and before the source is called:
//!   `{"target":"mcp.audit","message":"facade source call","provider":P,"tool":T,"channel":C,"args_sha256":H}`
//! - exit, after the source returned: the same members with `"message":"facade source call exit"`
//!   and `"is_error":bool`.
//!
//! `tool` is the bare tool name; `channel` is `-` when anonymous, and a channel of the form
//! `acp_<uuid>` or `sess_<uuid>` is logged as `#` plus the first 8 hex digits of the
//! SHA-256 of the uuid text (rule 36), so both forms of one uuid give one tag. `args_sha256`
//! is the lowercase hex SHA-256 of the compact JSON bytes of the validated argument object
//! (serde_json's serialization, members in the order received). Arguments and tokens are
//! never written. Lines go to a file (appended, created with mode 0600) or to stderr.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

/// Where audit lines go.
#[derive(Debug)]
pub struct AuditSink {
    file: Option<Mutex<File>>,
}

/// Lowercase hex SHA-256 of the compact JSON serialization of `args` (rule 35).
pub fn args_sha256(args: &Value) -> String {
    let bytes = serde_json::to_vec(args).unwrap_or_default();
    hex(&Sha256::digest(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The channel as logged (rules 34, 36): `-` for anonymous, `#xxxxxxxx` for
/// `acp_<uuid>`/`sess_<uuid>`, anything else unchanged.
pub fn channel_tag(channel: Option<&str>) -> String {
    let Some(channel) = channel else {
        return "-".to_owned();
    };
    let uuid = channel
        .strip_prefix("acp_")
        .or_else(|| channel.strip_prefix("sess_"))
        .filter(|u| is_uuid(u));
    match uuid {
        Some(u) => format!("#{}", &hex(&Sha256::digest(u.as_bytes()))[..8]),
        None => channel.to_owned(),
    }
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

impl AuditSink {
    /// Lines to stderr.
    pub fn stderr() -> Self {
        AuditSink { file: None }
    }

    /// Lines appended to `path` (created with mode 0600 when missing).
    ///
    /// # Errors
    /// The file cannot be opened for appending.
    pub fn file(path: &Path) -> io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(AuditSink {
            file: Some(Mutex::new(file)),
        })
    }

    /// Appends `line` as one compact JSON line (the sink's own entry and exit lines go
    /// through it; a layer that writes its own line format may too). A write error is
    /// reported on stderr, never to the caller: auditing does not fail a call.
    pub fn write_line(&self, line: &Value) {
        let mut bytes = serde_json::to_vec(line).unwrap_or_default();
        bytes.push(b'\n');
        let result = match &self.file {
            Some(f) => {
                let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
                f.write_all(&bytes).and_then(|()| f.flush())
            }
            None => {
                let mut e = io::stderr().lock();
                e.write_all(&bytes).and_then(|()| e.flush())
            }
        };
        if let Err(e) = result {
            eprintln!("parity-reference facade: audit line not written: {e}");
        }
    }
}

/// What the facade knows about one source call when it audits it. `args` is the
/// validated argument object: given so an implementation *could* misuse it (a faulty peer
/// does); [`AuditSink`] never writes it.
#[derive(Debug, Clone, Copy)]
pub struct AuditEvent<'a> {
    /// The provider label.
    pub provider: &'a str,
    /// The bare tool name.
    pub tool: &'a str,
    /// The caller's channel, `None` when anonymous.
    pub channel: Option<&'a str>,
    /// [`args_sha256`] of `args`.
    pub args_sha256: &'a str,
    /// The validated arguments.
    pub args: &'a Value,
}

/// An audit destination (rules 33–35).
pub trait AuditLog: Send + Sync {
    /// The entry line, written after pre-flight passed and before dispatch.
    fn entry(&self, event: &AuditEvent<'_>);
    /// The exit line, written after the source returned.
    fn exit(&self, event: &AuditEvent<'_>, is_error: bool);
}

impl AuditLog for AuditSink {
    fn entry(&self, e: &AuditEvent<'_>) {
        self.write_line(&json!({
            "target": "mcp.audit",
            "message": "facade source call",
            "provider": e.provider,
            "tool": e.tool,
            "channel": channel_tag(e.channel),
            "args_sha256": e.args_sha256,
        }));
    }

    fn exit(&self, e: &AuditEvent<'_>, is_error: bool) {
        self.write_line(&json!({
            "target": "mcp.audit",
            "message": "facade source call exit",
            "provider": e.provider,
            "tool": e.tool,
            "channel": channel_tag(e.channel),
            "args_sha256": e.args_sha256,
            "is_error": is_error,
        }));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn channel_tags() {
        let zero = "00000000-0000-0000-0000-000000000000";
        assert_eq!(channel_tag(Some(&format!("acp_{zero}"))), "#12b9377c");
        assert_eq!(channel_tag(Some(&format!("sess_{zero}"))), "#12b9377c");
        assert_eq!(channel_tag(Some("chan-42")), "chan-42");
        assert_eq!(channel_tag(Some("acp_not-a-uuid")), "acp_not-a-uuid");
        assert_eq!(channel_tag(None), "-");
    }

    #[test]
    fn args_hash_is_lowercase_hex_of_compact_json() {
        // sha256(b"{}")
        assert_eq!(
            args_sha256(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn lines_go_to_the_file_without_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let sink = AuditSink::file(&path).unwrap();
        let args = json!({"secret": "hunter2"});
        let h = args_sha256(&args);
        let mut e = AuditEvent {
            provider: "echo",
            tool: "echo_channel",
            channel: Some("c"),
            args_sha256: &h,
            args: &args,
        };
        sink.entry(&e);
        e.channel = None;
        sink.exit(&e, false);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("hunter2"));
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["message"], "facade source call");
        assert_eq!(lines[1]["channel"], "-");
        assert_eq!(lines[1]["is_error"], false);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
