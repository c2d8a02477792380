//! `parity reference bridge`: a stdio MCP to Streamable HTTP bridge that takes its credential
//! from a file (seed rules 53–56, `seed-rules.md` §6; the seed's `t3 acp-mcp-bridge` after the
//! change from a raw variable to a file path). The command line, exit codes and decisions are in
//! `docs/credentials.md`.
//!
//! Configuration comes from the environment only (rule 52: no endpoint or credential on argv):
//! [`ENDPOINT_VAR`] is the endpoint URL (a loopback `http://` URL) and
//! [`AUTHORIZATION_FILE_VAR`] the path of the file holding the `Authorization` header value. With
//! either missing, the file unreadable or its content unusable, or the endpoint not loopback,
//! [`run`] writes one stderr line naming what is wrong (never a value), nothing on stdout, sends
//! no HTTP request and returns [`EXIT_USAGE`] (2) (rule 56).
//!
//! Each stdin line is one JSON-RPC message (MCP stdio framing). Each becomes one POST to the
//! endpoint with `authorization` read from the file just before the request (rule 53: a rotated
//! file is followed), `accept: application/json, text/event-stream` and
//! `content-type: application/json`, plus `mcp-session-id` and `mcp-protocol-version` once the
//! server gave them (rule 54). The answer becomes stdout lines (rule 55): a JSON body one line, an
//! SSE body one line per event holding a JSON-RPC message, 202/204 nothing; a non-2xx answer to a
//! request with an id becomes JSON-RPC error −32603 `upstream responded with HTTP <status>.`;
//! a stdin line that is not JSON becomes error −32700 with id `null`. At stdin EOF the bridge
//! waits for the answers still streaming, ends the session with a `DELETE` (best effort) and
//! returns 0.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::{AUTHORIZATION_FILE_VAR, ENDPOINT_VAR};

/// The name used in diagnostics.
pub const COMMAND: &str = "parity reference bridge";

/// Exit code: no endpoint, no usable credential file, or a non-loopback endpoint.
pub const EXIT_USAGE: i32 = 2;

/// The `accept` value sent with every POST (rule 54).
pub const ACCEPT_POST: &str = "application/json, text/event-stream";

/// The session header (MCP 2025-11-25 `basic/transports` "Session Management").
pub const SESSION_HEADER: &str = "mcp-session-id";

/// The protocol-version header (MCP 2025-11-25 `basic/transports` "Protocol Version Header").
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// JSON-RPC "internal error": the upstream failed a request (rule 55).
pub const INTERNAL_ERROR: i64 = -32603;

/// JSON-RPC "parse error": a stdin line that is not JSON (rule 55).
pub const PARSE_ERROR: i64 = -32700;

/// The longest stdin line read (16 MiB); a longer one is skipped to its newline and answered
/// with a parse error.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The most bytes read of one response body or one SSE event (16 MiB).
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// The largest credential file read (64 KiB).
pub const MAX_CREDENTIAL: u64 = 64 * 1024;

/// How long connecting to the endpoint may take: 10 s. Answers themselves have no deadline (a
/// tool call may take long).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the bridge sends and how it authenticates, read from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeConfig {
    /// The endpoint (loopback `http://`).
    pub endpoint: reqwest::Url,
    /// The credential file, re-read before every request.
    pub file: PathBuf,
}

impl BridgeConfig {
    /// Reads [`ENDPOINT_VAR`] and [`AUTHORIZATION_FILE_VAR`], checks the endpoint is a loopback
    /// `http://` URL and that the file holds a usable header.
    ///
    /// # Errors
    /// One line (without the `parity reference bridge:` prefix) naming what is missing or
    /// unusable; it never holds a value of either variable or the file's content.
    pub fn from_env() -> Result<Self, String> {
        let endpoint = std::env::var_os(ENDPOINT_VAR).filter(|v| !v.is_empty());
        let file = std::env::var_os(AUTHORIZATION_FILE_VAR).filter(|v| !v.is_empty());
        let (endpoint, file) = match (endpoint, file) {
            (Some(e), Some(f)) => (e, PathBuf::from(f)),
            (e, f) => {
                let missing: Vec<&str> = [
                    (e.is_none(), ENDPOINT_VAR),
                    (f.is_none(), AUTHORIZATION_FILE_VAR),
                ]
                .into_iter()
                .filter_map(|(m, n)| m.then_some(n))
                .collect();
                return Err(format!(
                    "requires {ENDPOINT_VAR} and {AUTHORIZATION_FILE_VAR}; not set: {}.",
                    missing.join(", ")
                ));
            }
        };
        let endpoint = endpoint
            .to_str()
            .ok_or_else(|| format!("{ENDPOINT_VAR} is not UTF-8."))
            .and_then(loopback_url)?;
        read_header(&file)?;
        Ok(BridgeConfig { endpoint, file })
    }
}

/// Parses `url` and accepts only `http://` URLs on a loopback host (`127.0.0.0/8`, `[::1]`,
/// `localhost`) without user information, as every parity HTTP client does.
///
/// # Errors
/// Why the URL is unusable, naming [`ENDPOINT_VAR`] but not the URL.
pub fn loopback_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| format!("{ENDPOINT_VAR} is not a URL ({e})."))?;
    if parsed.scheme() != "http" {
        return Err(format!(
            "{ENDPOINT_VAR} must be an http:// URL (the bridge talks to loopback only, no TLS)."
        ));
    }
    let host = parsed
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err(format!(
            "{ENDPOINT_VAR} is not a loopback URL (127.0.0.1, [::1] or localhost only)."
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!("{ENDPOINT_VAR} carries a user name or password."));
    }
    Ok(parsed)
}

/// Reads the header value from `file`: the whole content, less one trailing `\n` or `\r\n`;
/// it must be non-empty UTF-8 without control characters other than tab.
///
/// # Errors
/// Why the file is unusable, naming [`AUTHORIZATION_FILE_VAR`] but neither the path nor the
/// content.
pub fn read_header(file: &Path) -> Result<String, String> {
    use std::io::Read;
    let unreadable = |e: std::io::Error| {
        format!("cannot read the file named by {AUTHORIZATION_FILE_VAR} ({e}).")
    };
    let f = std::fs::File::open(file).map_err(unreadable)?;
    let mut bytes = Vec::new();
    f.take(MAX_CREDENTIAL + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_CREDENTIAL {
        return Err(format!(
            "the file named by {AUTHORIZATION_FILE_VAR} is larger than {MAX_CREDENTIAL} bytes."
        ));
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("the file named by {AUTHORIZATION_FILE_VAR} is not UTF-8."))?;
    if text.is_empty() {
        return Err(format!(
            "the file named by {AUTHORIZATION_FILE_VAR} is empty."
        ));
    }
    if text.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(format!(
            "the file named by {AUTHORIZATION_FILE_VAR} holds a control character, not a header value."
        ));
    }
    Ok(text)
}

fn diag(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{COMMAND}: {message}");
}

/// Runs the bridge on the process's stdin and stdout with the configuration from the
/// environment; returns the exit code: 0 after stdin EOF, [`EXIT_USAGE`] (2) for a missing or
/// unusable configuration (one stderr line, nothing on stdout, no request), 1 when the HTTP
/// client cannot be built.
pub async fn run() -> i32 {
    let config = match BridgeConfig::from_env() {
        Ok(c) => c,
        Err(message) => {
            diag(&message);
            return EXIT_USAGE;
        }
    };
    let stdin = tokio::io::BufReader::new(tokio::io::stdin());
    match serve(config, stdin, tokio::io::stdout()).await {
        Ok(()) => 0,
        Err(message) => {
            diag(&message);
            1
        }
    }
}

/// The session state the server handed out, replayed on later requests (rule 54).
#[derive(Debug, Default)]
struct Session {
    id: Option<String>,
    version: Option<String>,
}

/// One bridge: the HTTP client, the endpoint, the credential file and the session.
struct Bridge {
    client: reqwest::Client,
    config: BridgeConfig,
    session: Mutex<Session>,
    out: mpsc::UnboundedSender<String>,
}

/// What a stdin message expects back.
struct Expect {
    /// Ids of the requests it holds (an object with `method` and `id`, or those inside a
    /// batch).
    ids: Vec<Value>,
    /// The id of an `initialize` request, whose result carries the protocol version.
    initialize: Option<Value>,
}

impl Expect {
    fn of(message: &Value) -> Expect {
        let one = |m: &Value| -> Option<(Value, bool)> {
            let obj = m.as_object()?;
            let method = obj.get("method")?.as_str()?;
            let id = obj.get("id")?;
            Some((id.clone(), method == "initialize"))
        };
        let mut ids = Vec::new();
        let mut initialize = None;
        let members: Vec<&Value> = match message {
            Value::Array(a) => a.iter().collect(),
            m => vec![m],
        };
        for m in members {
            if let Some((id, init)) = one(m) {
                if init {
                    initialize = Some(id.clone());
                }
                ids.push(id);
            }
        }
        Expect { ids, initialize }
    }
}

fn error_line(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// One stdout line for a message received as `raw` text: `raw` itself when it is already one
/// line, else its compact form.
fn one_line(raw: &str, value: &Value) -> String {
    let raw = raw.trim();
    if raw.contains(['\n', '\r']) {
        value.to_string()
    } else {
        raw.to_owned()
    }
}

/// Serves stdin lines from `input` and writes answers to `output` until `input` ends, then
/// waits for answers still streaming and ends the session.
///
/// # Errors
/// The HTTP client cannot be built.
pub async fn serve<R, W>(config: BridgeConfig, mut input: R, output: W) -> Result<(), String>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .map_err(|e| format!("failed to build the HTTP client: {e}"))?;
    let (out, mut lines) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = lines.recv().await {
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
                // The client is gone; keep draining so senders never block.
                while lines.recv().await.is_some() {}
                return;
            }
        }
    });
    let bridge = Arc::new(Bridge {
        client,
        config,
        session: Mutex::new(Session::default()),
        out,
    });
    let mut streams = tokio::task::JoinSet::new();
    loop {
        let line = match read_line(&mut input).await {
            Ok(Some(line)) => line,
            Ok(None) | Err(_) => break,
        };
        if let Some(stream) = bridge.forward(line).await {
            streams.spawn(stream);
        }
    }
    while streams.join_next().await.is_some() {}
    bridge.end_session().await;
    drop(bridge);
    let _ = writer.await;
    Ok(())
}

/// One stdin line without its line ending; `Some(None)` for a line over [`MAX_LINE`] (skipped);
/// `None` at EOF.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
) -> std::io::Result<Option<Option<Vec<u8>>>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (take, done) = match memchr_newline(available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if !too_long {
            if line.len() + take > MAX_LINE + 1 {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&available[..take]);
            }
        }
        input.consume(take);
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(None));
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Some(line)))
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

type Stream = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

impl Bridge {
    fn emit(&self, line: String) {
        let _ = self.out.send(line);
    }

    fn fail(&self, expect: &Expect, message: &str) {
        for id in &expect.ids {
            self.emit(error_line(id, INTERNAL_ERROR, message));
        }
    }

    /// Forwards one stdin line. Returns the rest of an SSE answer to stream concurrently (so a
    /// client can answer a server request sent on that stream); everything else is finished
    /// before the next line is read.
    async fn forward(self: &Arc<Self>, line: Option<Vec<u8>>) -> Option<Stream> {
        let Some(line) = line else {
            self.emit(error_line(
                &Value::Null,
                PARSE_ERROR,
                "Parse error: the line is too long.",
            ));
            return None;
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let message: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(_) => {
                self.emit(error_line(&Value::Null, PARSE_ERROR, "Parse error"));
                return None;
            }
        };
        let expect = Expect::of(&message);
        // Rule 53: the header is read from the file for every request.
        let header = match read_header(&self.config.file) {
            Ok(h) => h,
            Err(problem) => {
                diag(&format!("{problem} The message was not sent."));
                self.fail(&expect, "the bridge has no usable credential file.");
                return None;
            }
        };
        let mut headers = HeaderMap::new();
        let Ok(mut auth) = HeaderValue::from_str(&header) else {
            diag(
                "the credential file does not hold a valid header value. The message was not sent.",
            );
            self.fail(&expect, "the bridge has no usable credential file.");
            return None;
        };
        auth.set_sensitive(true);
        headers.insert(AUTHORIZATION, auth);
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_POST));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.session_headers(&mut headers);
        let request = self
            .client
            .post(self.config.endpoint.clone())
            .headers(headers)
            .body(line);
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                diag(&format!(
                    "the upstream could not be reached: {}",
                    e.without_url()
                ));
                self.fail(&expect, "upstream could not be reached.");
                return None;
            }
        };
        let status = response.status();
        if let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            self.lock_session().id = Some(id.to_owned());
        }
        if !status.is_success() {
            if expect.ids.is_empty() {
                diag(&format!(
                    "upstream responded with HTTP {} to a message without an id.",
                    status.as_u16()
                ));
            }
            self.fail(
                &expect,
                &format!("upstream responded with HTTP {}.", status.as_u16()),
            );
            return None;
        }
        if status.as_u16() == 202 || status.as_u16() == 204 {
            return None;
        }
        let media = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        match media.as_str() {
            "application/json" => {
                self.json_body(response, &expect).await;
                None
            }
            "text/event-stream" => {
                let inline = expect.initialize.is_some();
                let this = Arc::clone(self);
                let stream: Stream = Box::pin(async move { this.sse_body(response, expect).await });
                if inline {
                    // The initialize answer sets the version the next requests carry.
                    stream.await;
                    None
                } else {
                    Some(stream)
                }
            }
            _ => {
                self.fail(
                    &expect,
                    "upstream answered with an unsupported content type.",
                );
                None
            }
        }
    }

    fn lock_session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn session_headers(&self, headers: &mut HeaderMap) {
        let session = self.lock_session();
        if let Some(v) = session
            .id
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            headers.insert(SESSION_HEADER, v);
        }
        if let Some(v) = session
            .version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            headers.insert(VERSION_HEADER, v);
        }
    }

    /// Emits one received JSON-RPC message, noting the protocol version of an initialize
    /// result; returns the id it answers, if any.
    fn deliver(&self, raw: &str, expect: &Expect) -> Option<Value> {
        let Ok(value) = serde_json::from_str::<Value>(raw) else {
            diag("upstream sent a message that is not JSON; dropped.");
            return None;
        };
        let answers = |m: &Value| {
            m.as_object()
                .filter(|o| o.contains_key("result") || o.contains_key("error"))
                .and_then(|o| o.get("id"))
                .cloned()
        };
        if let (Some(init), Some(obj)) = (&expect.initialize, value.as_object()) {
            if obj.get("id") == Some(init) {
                if let Some(v) = obj
                    .get("result")
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_str)
                {
                    self.lock_session().version = Some(v.to_owned());
                }
            }
        }
        let id = answers(&value);
        self.emit(one_line(raw, &value));
        id
    }

    async fn json_body(&self, mut response: reqwest::Response, expect: &Expect) {
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > MAX_BODY {
                        self.fail(expect, "upstream response is too large.");
                        return;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(_) => {
                    self.fail(expect, "upstream closed the connection early.");
                    return;
                }
            }
        }
        let Ok(text) = String::from_utf8(body) else {
            self.fail(expect, "upstream sent a body that is not UTF-8.");
            return;
        };
        if text.trim().is_empty() {
            self.fail(expect, "upstream returned no response.");
            return;
        }
        if serde_json::from_str::<Value>(&text).is_err() {
            self.fail(expect, "upstream sent a body that is not JSON.");
            return;
        }
        self.deliver(&text, expect);
    }

    async fn sse_body(self: Arc<Self>, mut response: reqwest::Response, expect: Expect) {
        let mut parser = SseParser::default();
        let mut answered = BTreeSet::new();
        let mut broken = None;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => match parser.feed(&chunk) {
                    Ok(events) => {
                        for data in events {
                            if data.trim().is_empty() {
                                continue; // a priming or keep-alive event
                            }
                            if let Some(id) = self.deliver(&data, &expect) {
                                answered.insert(id.to_string());
                            }
                        }
                    }
                    Err(()) => {
                        broken = Some("upstream sent an SSE event that is too large.");
                        break;
                    }
                },
                Ok(None) => break,
                Err(_) => {
                    broken = Some("upstream closed the stream early.");
                    break;
                }
            }
        }
        for id in &expect.ids {
            if !answered.contains(&id.to_string()) {
                self.emit(error_line(
                    id,
                    INTERNAL_ERROR,
                    broken.unwrap_or("upstream closed the stream without a response."),
                ));
            }
        }
    }

    /// Sends `DELETE` with the session id, if the server gave one (best effort: any answer or
    /// error is ignored; without a usable credential no request is sent).
    async fn end_session(&self) {
        let mut headers = HeaderMap::new();
        self.session_headers(&mut headers);
        if !headers.contains_key(SESSION_HEADER) {
            return;
        }
        let Ok(header) = read_header(&self.config.file) else {
            return;
        };
        let Ok(mut auth) = HeaderValue::from_str(&header) else {
            return;
        };
        auth.set_sensitive(true);
        headers.insert(AUTHORIZATION, auth);
        let _ = tokio::time::timeout(
            CONNECT_TIMEOUT,
            self.client
                .delete(self.config.endpoint.clone())
                .headers(headers)
                .send(),
        )
        .await;
    }
}

/// An incremental Server-Sent Events parser (WHATWG HTML "server-sent events", the parts MCP
/// uses): lines end with `\n` (a preceding `\r` is dropped); `data:` fields of one event are
/// joined with `\n`; a blank line dispatches the event; comments and other fields are ignored;
/// an event unfinished when the stream ends is discarded.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
    data: Option<String>,
    size: usize,
}

impl SseParser {
    /// Feeds `chunk` and returns the data of every event it completed.
    ///
    /// # Errors
    /// An event or a line grew past [`MAX_BODY`] bytes.
    #[allow(clippy::result_unit_err)]
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<String>, ()> {
        self.pending.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(rel) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let end = start + rel;
            let mut line = &self.pending[start..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            start = end + 1;
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    events.push(data);
                }
                self.size = 0;
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_str(), ""),
            };
            if field == "data" {
                self.size += value.len() + 1;
                if self.size > MAX_BODY {
                    return Err(());
                }
                match &mut self.data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => self.data = Some(value.to_owned()),
                }
            }
        }
        self.pending.drain(..start);
        if self.pending.len() > MAX_BODY {
            return Err(());
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn sse_events_are_split_joined_and_may_arrive_in_pieces() {
        let mut p = SseParser::default();
        assert!(p.feed(b": comment\nid: 1\ndata:").unwrap().is_empty());
        assert!(p.feed(b"\n\nevent: message\ndata: {\"a\":").unwrap() == vec![String::new()]);
        let got = p.feed(b"1}\r\ndata: 2\r\n\r\ndata: x").unwrap();
        assert_eq!(got, vec!["{\"a\":1}\n2".to_owned()]);
        assert!(p.feed(b"").unwrap().is_empty());
    }

    #[test]
    fn only_loopback_http_endpoints_are_accepted() {
        for good in [
            "http://127.0.0.1:1/mcp",
            "http://[::1]:2/",
            "http://localhost:3/x",
        ] {
            assert!(loopback_url(good).is_ok(), "{good}");
        }
        for bad in [
            "https://127.0.0.1/",
            "http://10.0.0.1/mcp",
            "http://example.com/",
            "http://u:p@127.0.0.1/",
            "not a url",
        ] {
            let e = loopback_url(bad).unwrap_err();
            assert!(e.contains(ENDPOINT_VAR), "{e}");
            assert!(!e.contains("10.0.0.1") && !e.contains("example.com"), "{e}");
        }
    }

    #[test]
    fn the_credential_file_is_read_whole_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("authorization");
        std::fs::write(&f, b"Bearer abc").unwrap();
        assert_eq!(read_header(&f).unwrap(), "Bearer abc");
        std::fs::write(&f, b"Bearer abc\n").unwrap();
        assert_eq!(read_header(&f).unwrap(), "Bearer abc");
        std::fs::write(&f, b"").unwrap();
        assert!(read_header(&f).unwrap_err().contains("is empty"));
        std::fs::write(&f, b"Bearer a\nb").unwrap();
        let e = read_header(&f).unwrap_err();
        assert!(
            e.contains("control character") && !e.contains("Bearer"),
            "{e}"
        );
        let e = read_header(&dir.path().join("missing")).unwrap_err();
        assert!(
            e.contains(AUTHORIZATION_FILE_VAR) && !e.contains("missing"),
            "{e}"
        );
    }

    #[test]
    fn expected_ids_come_from_requests_only() {
        let e = Expect::of(&json!({"jsonrpc": "2.0", "id": 7, "method": "initialize"}));
        assert_eq!(e.ids, vec![json!(7)]);
        assert_eq!(e.initialize, Some(json!(7)));
        let e = Expect::of(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(e.ids.is_empty());
        let e = Expect::of(&json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
        assert!(
            e.ids.is_empty(),
            "a response to the server expects nothing back"
        );
        let e = Expect::of(
            &json!([{"jsonrpc": "2.0", "id": "a", "method": "ping"}, {"jsonrpc": "2.0", "method": "x"}]),
        );
        assert_eq!(e.ids, vec![json!("a")]);
    }

    #[test]
    fn multi_line_json_becomes_one_line() {
        let raw = "{\n  \"a\": 1\n}";
        let v: Value = serde_json::from_str(raw).unwrap();
        assert_eq!(one_line(raw, &v), "{\"a\":1}");
        assert_eq!(one_line("{\"a\": 1}", &v), "{\"a\": 1}");
    }
}
