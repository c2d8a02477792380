//! MCP stdio server over the [`Dispatcher`], dual-era.
//!
//! **Architecture invariant:** this module holds no tool logic. It frames lines,
//! validates JSON-RPC envelopes, negotiates the protocol era and encodes
//! [`Outcome`](crate::dispatcher::Outcome)s; tool behaviour comes only from
//! `Dispatcher::call` and `Dispatcher::tools`.
//!
//! # Eras
//!
//! The server starts in **modern** mode (revision [`MODERN_REVISION`], 2026-07-28,
//! `basic/index`, "Request metadata"): each request must carry
//! `params._meta["io.modelcontextprotocol/protocolVersion"]` and
//! `params._meta["io.modelcontextprotocol/clientCapabilities"]` (missing → −32602; a
//! version other than 2026-07-28 → −32022 with `data.supported` and `data.requested`).
//! Every modern result carries `"resultType":"complete"` and
//! `"_meta":{"io.modelcontextprotocol/serverInfo":{name,version}}`. Methods:
//! `server/discover`, `tools/list`, `tools/call`, and the server features of
//! `features` (resources, prompts, completion); `ping` was removed → −32601.
//!
//! An `initialize` request (2025-11-25 `basic/lifecycle`) switches the process to
//! **legacy** mode: a requested revision in [`LEGACY_REVISIONS`] is echoed, anything else
//! is answered with [`LATEST_LEGACY_REVISION`]. Legacy methods: `initialize`, `ping`
//! (→ `{}`), `tools/list`, `tools/call`, and the server features of `features` (with
//! `resources/subscribe`, `resources/unsubscribe` and `logging/setLevel`). Batches (JSON arrays) are processed only in a
//! session negotiated at 2025-03-26; everywhere else a batch gets one −32600 with id
//! null.
//!
//! # Wire rules
//!
//! Input is newline-delimited, each line capped at [`MAX_LINE_BYTES`]; an over-long line
//! is skipped and answered with −32700 (id null), as is a line that is not UTF-8 JSON.
//! Blank lines are ignored. Output is compact one-line JSON + `\n`, flushed per message,
//! through one writer task. Notifications are never answered; client responses are
//! ignored; `notifications/cancelled` aborts the in-flight `tools/call` with that exact
//! id and nothing is sent for it afterwards. At EOF, in-flight calls are aborted (an
//! `exec` child is killed), queued output is flushed and [`serve`] returns `Ok(())`.

pub(crate) mod features;

/// The eight RFC 5424 levels `logging/setLevel` accepts, in order (`server/utilities/logging`).
pub use features::LOG_LEVELS;
pub(crate) mod framing;
pub(crate) mod server;

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::dispatcher::{Dispatcher, DispatcherConfig};

use server::Server;

/// The stateless revision served in modern mode.
pub const MODERN_REVISION: &str = "2026-07-28";

/// The legacy revisions whose `initialize` request is echoed.
pub const LEGACY_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The revision answered to an `initialize` that requests an unsupported revision.
pub const LATEST_LEGACY_REVISION: &str = "2025-11-25";

/// The only revision whose sessions accept JSON-RPC batches (2025-03-26
/// `basic/index`, "Batching").
pub const BATCH_REVISION: &str = "2025-03-26";

/// Longest accepted input line, in bytes, excluding the `\n`: 16 MiB.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// `ttlMs` of modern `server/discover` and `tools/list` results: 5 minutes. The tool
/// list is static, so any value is truthful; `cacheScope` is `"public"` because nothing
/// in either result depends on the caller.
pub const LIST_TTL_MS: u64 = 300_000;

/// Default tools per `tools/list` page: 4, so the six tools span two pages.
pub const DEFAULT_PAGE_SIZE: usize = 4;

/// How to run the MCP server.
#[derive(Debug, Clone)]
pub struct McpServerConfig {
    /// The dispatcher to serve.
    pub dispatcher: DispatcherConfig,
    /// Tools per `tools/list` page; default [`DEFAULT_PAGE_SIZE`]. `0` puts every tool on
    /// one page.
    pub page_size: usize,
    /// `serverInfo.name`; default `"parity-reference"`.
    pub server_name: String,
    /// `serverInfo.version`; default this crate's version.
    pub server_version: String,
}

impl McpServerConfig {
    /// The default configuration over `dispatcher`.
    pub fn new(dispatcher: DispatcherConfig) -> Self {
        McpServerConfig {
            dispatcher,
            page_size: DEFAULT_PAGE_SIZE,
            server_name: "parity-reference".to_owned(),
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// Serves MCP over `reader`/`writer` until `reader` reaches EOF.
///
/// Generic so in-process peers can drive it over `tokio::io::duplex`. Must run inside a
/// tokio runtime (it spawns the writer and tool-call tasks).
///
/// # Errors
/// An I/O error reading `reader`, or writing/flushing `writer` (e.g. a closed pipe); in
/// both cases in-flight calls are aborted first. EOF on `reader` is `Ok(())`.
pub async fn serve<R, W>(reader: R, writer: W, config: McpServerConfig) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let dispatcher = Arc::new(Dispatcher::new(config.dispatcher.clone()));
    serve_shared(reader, writer, dispatcher, config).await
}

/// [`serve`] over an existing dispatcher, which other surfaces may share (the contract test
/// runs one dispatcher behind the MCP and the ACP surface); `config.dispatcher` is not used.
///
/// # Errors
/// As [`serve`].
pub async fn serve_shared<R, W>(
    reader: R,
    writer: W,
    dispatcher: Arc<Dispatcher>,
    config: McpServerConfig,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    framing::serve_lines(
        reader,
        writer,
        |queue| {
            Server::new(
                dispatcher,
                queue,
                config.page_size,
                config.server_name,
                config.server_version,
            )
        },
        "parity-reference mcp",
    )
    .await
}

/// [`serve`] over the process's stdin and stdout.
///
/// # Errors
/// As [`serve`].
pub async fn serve_stdio(config: McpServerConfig) -> io::Result<()> {
    // When stdin and stdout are pipes (the usual case for a stdio server), drive them through
    // the reactor: tokio's `stdin()`/`stdout()` hand every read and write to a blocking
    // thread, which costs a thread hop per message. Anything else (a terminal, a file) keeps
    // the portable path.
    match (pipe_reader(), pipe_writer()) {
        (Some(r), Some(w)) => serve(r, w, config).await,
        (Some(r), None) => serve(r, tokio::io::stdout(), config).await,
        (None, Some(w)) => serve(tokio::io::stdin(), w, config).await,
        (None, None) => serve(tokio::io::stdin(), tokio::io::stdout(), config).await,
    }
}

/// stdin as a non-blocking pipe receiver, when it is a pipe (shared with the ACP
/// surface).
pub(crate) fn pipe_reader() -> Option<tokio::net::unix::pipe::Receiver> {
    use std::os::fd::AsFd;
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()
}

/// stdout as a non-blocking pipe sender, when it is a pipe (shared with the ACP
/// surface).
pub(crate) fn pipe_writer() -> Option<tokio::net::unix::pipe::Sender> {
    use std::os::fd::AsFd;
    let fd = io::stdout().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()
}
