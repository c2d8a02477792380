//! The frame model and the newline-delimited JSON-RPC transport.
//!
//! A transport emits [`WireEvent`]s: a direction, a monotonic time since the session started and
//! a [`Frame`]. For stdio a frame is one line (MCP 2025-11-25 `basic/transports` §stdio: "messages
//! are delimited by newlines, and MUST NOT contain embedded newlines"). Every raw frame is kept as
//! received, before parsing; nothing here repairs what a peer sent. Classification follows
//! JSON-RPC 2.0 §4–§6: request, notification, response, error, batch, or invalid.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Default per-line byte cap: 16 MiB. A longer line is skipped to the next newline.
pub const DEFAULT_LINE_CAP: usize = 16 * 1024 * 1024;

/// How many bytes of an over-cap line are kept as evidence (the rest is counted and hashed).
pub const OVER_CAP_PREFIX: usize = 4096;

/// Lines longer than this (1 MiB) are assembled only with a share of [`LARGE_LINES`]: the
/// bytes of a line are held until its newline or the cap, so several peers sending huge lines
/// at once would otherwise hold a cap's worth each.
pub const LARGE_LINE: usize = 1 << 20;

/// Bytes the whole process may hold in lines being assembled past [`LARGE_LINE`] (16 MiB): a
/// reader whose line grows past [`LARGE_LINE`] first takes the rest of its cap from here (all
/// of it at once, so no two readers can wait on each other) and gives it back when the line
/// ends or crosses the cap. With the default 16 MiB cap, one huge line is assembled at a time;
/// the others' readers wait (at most [`LARGE_LINE_WAIT`]), and their peers wait on their
/// stdout. A cap over 16 MiB lets a line grow past its share.
pub const LARGE_LINES: usize = 16 << 20;

/// How long a reader waits for its share of [`LARGE_LINES`] before it assembles its line
/// without one (1 s): the bound holds while huge lines arrive at pipe speed, and a peer that
/// stalls in the middle of one delays the others by at most this.
pub const LARGE_LINE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

fn large_lines() -> &'static tokio::sync::Semaphore {
    static SEM: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(LARGE_LINES);
    &SEM
}

/// Direction of a frame on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Client (the harness) to server/agent: the peer's stdin.
    C2s,
    /// Server/agent to client: the peer's stdout.
    S2c,
    /// The peer's stderr (diagnostics; never protocol).
    Stderr,
    /// The peer exited; the frame holds its status as text.
    Exit,
    /// A note beside the frames, never protocol: what a bridge saw of the transport under its
    /// lines (over Streamable HTTP, each answer's status line, the headers that matter and a
    /// clipped body), or a remark a check adds to its evidence ([`crate::transport::peer::Peer::note`]).
    Note,
}

/// One stdio line as received: bytes without the terminating `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The line's bytes, or only a prefix of [`OVER_CAP_PREFIX`] bytes when `over_cap` is set.
    pub bytes: Vec<u8>,
    /// Full length of the line in bytes, excluding the `\n`.
    pub len: u64,
    /// The line exceeded the byte cap: `bytes` is a prefix and `sha256` is the digest of it all.
    pub over_cap: bool,
    /// Hex SHA-256 of the whole line, set only when `over_cap`.
    pub sha256: Option<String>,
    /// False when the stream ended before a `\n` terminated this line.
    pub terminated: bool,
    /// Only a prefix was kept by the session's bounded frame log (`crate::transport::framelog`: cut to
    /// [`crate::transport::framelog::FRAME_KEEP`] bytes, or 4 KiB in a thinned log; `sha256` holds the
    /// digest of the whole line when the log had it whole); the reader still saw the whole line.
    pub elided: bool,
}

/// A frame: the unit a transport emits. Only stdio lines exist so far; HTTP requests, responses
/// and SSE events join this enum without changing [`WireEvent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A newline-delimited stdio line (stdout, stdin or stderr).
    Line(Line),
    /// The peer's exit status, as text (`exit status: 0`, `signal: 9`).
    Exit(String),
    /// Frames the session's bounded frame log dropped here ([`crate::transport::framelog`]): how many and
    /// their bytes (line lengths). Never protocol: monitors skip it and say it was there.
    Gap {
        /// Frames dropped.
        frames: u64,
        /// Their bytes.
        bytes: u64,
    },
}

/// A frame with its direction and its monotonic time since the session started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireEvent {
    /// Which way the frame travelled.
    pub dir: Dir,
    /// Time since the session started (monotonic clock).
    pub t: Duration,
    /// The raw frame.
    pub frame: Frame,
}

impl WireEvent {
    /// The frame's bytes as lossy text, cut to `max` bytes, for evidence excerpts.
    pub fn excerpt(&self, max: usize) -> String {
        match &self.frame {
            Frame::Line(l) => {
                let cut = &l.bytes[..l.bytes.len().min(max)];
                let mut s = String::from_utf8_lossy(cut).into_owned();
                if l.over_cap || l.bytes.len() > max {
                    s.push_str(&format!("… ({} bytes)", l.len));
                }
                s
            }
            Frame::Exit(s) => s.clone(),
            Frame::Gap { frames, bytes } => gap_text(*frames, *bytes),
        }
    }

    /// The line, when this event is a line frame.
    pub fn line(&self) -> Option<&Line> {
        match &self.frame {
            Frame::Line(l) => Some(l),
            Frame::Exit(_) | Frame::Gap { .. } => None,
        }
    }
}

/// How a [`Frame::Gap`] reads in evidence.
pub fn gap_text(frames: u64, bytes: u64) -> String {
    format!(
        "({frames} frames, {bytes} bytes, left out here: the session's frame log keeps a bounded head and tail, docs/architecture.md §Memory budget)"
    )
}

/// Reads newline-delimited lines with a byte cap, never buffering more than the cap for a line.
///
/// Errors: only I/O errors of the underlying stream. A line over the cap is returned as a
/// [`Line`] with `over_cap` set (prefix, length, SHA-256), and reading resumes after its `\n`.
pub struct LineReader<R> {
    inner: R,
    cap: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Wraps a buffered reader; `cap` is the per-line byte cap (bytes, excluding the newline).
    pub fn new(inner: R, cap: usize) -> Self {
        Self { inner, cap }
    }

    /// Reads the next line. `Ok(None)` at end of stream with no pending bytes.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut bytes: Vec<u8> = Vec::new();
        let mut len: u64 = 0;
        let mut hasher: Option<Sha256> = None;
        // A share of [`LARGE_LINES`], held while a line past [`LARGE_LINE`] is assembled.
        let mut share: Option<tokio::sync::SemaphorePermit<'static>> = None;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                if len == 0 {
                    return Ok(None);
                }
                return Ok(Some(finish(bytes, len, hasher, false)));
            }
            let (chunk, found) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let n = chunk.len();
            if hasher.is_none()
                && share.is_none()
                && self.cap > LARGE_LINE
                && bytes.len() + n > LARGE_LINE
            {
                // Room for the rest of the line up to the cap, taken at once and before the
                // chunk is consumed (while this waits, the peer's bytes stay in the pipe).
                let room = self.cap.min(LARGE_LINES).saturating_sub(bytes.len());
                let permits = u32::try_from(room.max(1)).unwrap_or(u32::MAX);
                // At most [`LARGE_LINE_WAIT`]: a peer that stalls halfway through a huge line
                // must not hold every other reader up; past the wait the line is read anyway.
                share = tokio::time::timeout(LARGE_LINE_WAIT, large_lines().acquire_many(permits))
                    .await
                    .ok()
                    .and_then(Result::ok);
                bytes.reserve_exact(room);
                continue;
            }
            len += n as u64;
            if let Some(h) = hasher.as_mut() {
                h.update(chunk);
                let room = OVER_CAP_PREFIX.saturating_sub(bytes.len());
                bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            } else if len as usize > self.cap {
                // Crossing the cap: keep a prefix, hash everything from here on.
                let mut h = Sha256::new();
                h.update(&bytes);
                h.update(chunk);
                hasher = Some(h);
                let room = OVER_CAP_PREFIX.saturating_sub(bytes.len().min(OVER_CAP_PREFIX));
                bytes.truncate(OVER_CAP_PREFIX);
                bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                bytes.shrink_to_fit();
                share = None;
            } else {
                bytes.extend_from_slice(chunk);
            }
            let consumed = if found { n + 1 } else { n };
            self.inner.consume(consumed);
            if found {
                return Ok(Some(finish(bytes, len, hasher, true)));
            }
        }
    }
}

impl Line {
    /// The line went over the byte cap and only a prefix of it is kept, so it cannot be read
    /// (a line over a cap below [`OVER_CAP_PREFIX`] may still be kept whole).
    pub fn cut(&self) -> bool {
        self.over_cap && (self.bytes.len() as u64) < self.len
    }

    /// A copy of everything but the bytes (which are left empty).
    pub fn clone_header(&self) -> Line {
        Line {
            bytes: Vec::new(),
            len: self.len,
            over_cap: self.over_cap,
            sha256: self.sha256.clone(),
            terminated: self.terminated,
            elided: self.elided,
        }
    }
}

fn finish(mut bytes: Vec<u8>, len: u64, hasher: Option<Sha256>, terminated: bool) -> Line {
    if bytes.capacity() - bytes.len() > LARGE_LINE {
        // Room reserved up to the cap for a large line that ended sooner.
        bytes.shrink_to_fit();
    }
    let over_cap = hasher.is_some();
    let sha256 = hasher.map(|h| {
        h.finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    });
    Line {
        bytes,
        len,
        over_cap,
        sha256,
        terminated,
        elided: false,
    }
}

/// The JSON-RPC 2.0 class of one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Has `method` and an `id` member (JSON-RPC §4).
    Request,
    /// Has `method` and no `id` member (JSON-RPC §4.1).
    Notification,
    /// Has `result` and `id` (JSON-RPC §5).
    Response,
    /// Has `error` and `id` (JSON-RPC §5.1).
    Error,
    /// A JSON array (JSON-RPC §6).
    Batch,
    /// Anything else; the reason says why.
    Invalid(String),
}

/// A classified frame: the parsed value (when it parsed) and its class.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    /// The parsed JSON value, if the bytes were valid UTF-8 JSON (a BOM makes them invalid).
    pub value: Option<Value>,
    /// The JSON-RPC class.
    pub kind: Kind,
    /// The bytes were valid UTF-8.
    pub utf8: bool,
    /// The bytes started with a UTF-8 byte-order mark.
    pub bom: bool,
}

/// Classifies one frame's bytes. Never repairs: a BOM or invalid UTF-8 make the message invalid
/// (JSON text exchanged between systems MUST NOT start with a BOM, RFC 8259 §8.1).
pub fn classify(bytes: &[u8]) -> Classified {
    let bom = bytes.starts_with(&[0xEF, 0xBB, 0xBF]);
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(_) => {
            return Classified {
                value: None,
                kind: Kind::Invalid("not valid UTF-8".into()),
                utf8: false,
                bom,
            }
        }
    };
    if bom {
        return Classified {
            value: None,
            kind: Kind::Invalid("starts with a byte-order mark".into()),
            utf8: true,
            bom,
        };
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Classified {
                value: None,
                kind: Kind::Invalid(format!("not JSON: {e}")),
                utf8: true,
                bom,
            }
        }
    };
    let kind = classify_value(&value);
    Classified {
        value: Some(value),
        kind,
        utf8: true,
        bom,
    }
}

/// Classifies a parsed JSON value as a JSON-RPC 2.0 message (see [`Kind`]).
pub fn classify_value(value: &Value) -> Kind {
    let obj = match value {
        Value::Array(items) if items.is_empty() => return Kind::Invalid("empty batch".into()),
        Value::Array(_) => return Kind::Batch,
        Value::Object(o) => o,
        _ => return Kind::Invalid("not a JSON object or array".into()),
    };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Kind::Invalid("`jsonrpc` is not exactly \"2.0\"".into());
    }
    let id = obj.get("id");
    let id_ok = |id: &Value| id.is_string() || id.is_i64() || id.is_u64();
    if let Some(m) = obj.get("method") {
        if !m.is_string() {
            return Kind::Invalid("`method` is not a string".into());
        }
        if obj.contains_key("result") || obj.contains_key("error") {
            return Kind::Invalid("has `method` and `result`/`error`".into());
        }
        if let Some(p) = obj.get("params") {
            if !p.is_object() && !p.is_array() {
                return Kind::Invalid("`params` is neither object nor array".into());
            }
        }
        return match id {
            None => Kind::Notification,
            Some(id) if id_ok(id) => Kind::Request,
            Some(_) => Kind::Invalid("request `id` is not a string or integer".into()),
        };
    }
    let has_result = obj.contains_key("result");
    let has_error = obj.contains_key("error");
    match (has_result, has_error) {
        (true, true) => return Kind::Invalid("has both `result` and `error`".into()),
        (false, false) => return Kind::Invalid("has none of `method`, `result`, `error`".into()),
        _ => {}
    }
    match id {
        None => return Kind::Invalid("response without `id`".into()),
        Some(Value::Null) if has_result => {
            return Kind::Invalid("result response with null `id`".into())
        }
        Some(Value::Null) => {}
        Some(id) if id_ok(id) => {}
        Some(_) => return Kind::Invalid("response `id` is not a string, integer or null".into()),
    }
    if has_result {
        Kind::Response
    } else {
        match obj.get("error") {
            Some(Value::Object(e))
                if e.get("code").is_some_and(|c| c.is_i64())
                    && e.get("message").is_some_and(|m| m.is_string()) =>
            {
                Kind::Error
            }
            _ => Kind::Invalid("`error` lacks an integer `code` or a string `message`".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn lines(input: &[u8], cap: usize) -> Vec<Line> {
        let mut r = LineReader::new(tokio::io::BufReader::with_capacity(7, input), cap);
        let mut out = Vec::new();
        while let Ok(Some(l)) = r.next_line().await {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_marks_unterminated_tail() {
        let got = lines(b"abc\n\nxyz", 100).await;
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].bytes, b"abc");
        assert!(got[0].terminated);
        assert_eq!(got[1].len, 0);
        assert_eq!(got[2].bytes, b"xyz");
        assert!(!got[2].terminated);
    }

    #[tokio::test]
    async fn over_cap_line_is_skipped_to_next_newline_with_digest() {
        let mut input = vec![b'a'; 10_000];
        input.extend_from_slice(b"\nok\n");
        let got = lines(&input, 100).await;
        assert_eq!(got.len(), 2);
        assert!(got[0].over_cap);
        assert_eq!(got[0].len, 10_000);
        assert_eq!(got[0].bytes.len(), OVER_CAP_PREFIX);
        let expect: String = Sha256::digest(vec![b'a'; 10_000])
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got[0].sha256.as_deref(), Some(expect.as_str()));
        assert_eq!(got[1].bytes, b"ok");
        assert!(!got[1].over_cap);
    }

    #[test]
    fn classification_follows_json_rpc() {
        let k = |v: Value| classify_value(&v);
        assert_eq!(
            k(json!({"jsonrpc":"2.0","id":0,"method":"m"})),
            Kind::Request
        );
        assert_eq!(k(json!({"jsonrpc":"2.0","method":"m"})), Kind::Notification);
        assert!(matches!(
            k(json!({"jsonrpc":"2.0","id":null,"method":"m"})),
            Kind::Invalid(_)
        ));
        assert_eq!(
            k(json!({"jsonrpc":"2.0","id":"1","result":{}})),
            Kind::Response
        );
        assert_eq!(
            k(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})),
            Kind::Error
        );
        assert!(matches!(
            k(json!({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}})),
            Kind::Invalid(_)
        ));
        assert!(matches!(
            k(json!({"jsonrpc":"1.0","id":1,"result":{}})),
            Kind::Invalid(_)
        ));
        assert_eq!(
            k(json!([{"jsonrpc":"2.0","id":1,"method":"m"}])),
            Kind::Batch
        );
        assert!(matches!(k(json!([])), Kind::Invalid(_)));
    }

    #[test]
    fn bom_and_bad_utf8_are_invalid_not_repaired() {
        let c = classify(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"m\"}");
        assert!(c.bom);
        assert!(matches!(c.kind, Kind::Invalid(_)));
        let c = classify(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}");
        assert!(!c.utf8);
        assert!(matches!(c.kind, Kind::Invalid(_)));
    }
}
