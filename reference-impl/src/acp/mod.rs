//! ACP v1 stdio agent over the [`Dispatcher`] (Agent Client Protocol, protocol version
//! [`PROTOCOL_VERSION`]).
//!
//! **Architecture invariant:** this module holds no tool logic. It frames lines,
//! validates JSON-RPC envelopes and ACP params, keeps per-connection session state and
//! encodes [`Outcome`](crate::dispatcher::Outcome)s; tool behaviour comes only from
//! `Dispatcher::call`.
//!
//! # Wire rules
//!
//! JSON-RPC 2.0 over newline-delimited UTF-8 (`transports.mdx`): input lines are capped
//! at [`MAX_LINE_BYTES`] (shared with the MCP surface). Output is one compact JSON object
//! per line, `\n`-terminated and flushed per message, through one writer task, so
//! messages never interleave.
//!
//! | input | answer |
//! |---|---|
//! | blank line | ignored |
//! | over-long line, or not UTF-8 JSON | −32700, id `null` |
//! | a JSON array (v1 has no batches) | one −32600, id `null` |
//! | not an object; no `"jsonrpc":"2.0"`; non-string `method`; `params` neither object, array nor `null` | −32600, echoing the id when it is valid |
//! | `id` present but not a string or an integer (`null` included) | −32600, id `null` |
//! | a response (`result` xor `error`, no `method`) | ignored: the agent never sends requests |
//! | a notification (no `id`) | never answered; unknown ones are ignored |
//! | a request for any other method (unknown `_`-prefixed ones included) | −32601 `"Method not found"` |
//!
//! Field errors in params are −32602 with a message naming the field (e.g.
//! `` `mcpServers[0].env[1].value` must be a string ``) and `error.data` =
//! `{"field": "<the same path>"}`.
//!
//! # Methods
//!
//! - **`initialize`** — params must be an object whose `protocolVersion` is a JSON
//!   integer in `0..=65535`, else −32602 naming `protocolVersion`. Version negotiation
//!   (`initialization.mdx`): a supported version (only [`PROTOCOL_VERSION`]) is echoed;
//!   any other version is answered with the agent's latest, [`PROTOCOL_VERSION`] (never an
//!   error, even for 65535). The result advertises no optional capability
//!   (`loadSession`, every `promptCapabilities` and `mcpCapabilities` member `false`), no
//!   `authMethods`, `agentInfo` `{name, title: "parity reference agent", version}`, and
//!   the extension method under `agentCapabilities._meta.parity.toolMethod`. `initialize`
//!   may be repeated; it holds no state. **Requests other than `initialize` are served
//!   even before `initialize`**: the agent keeps no negotiated state that would change
//!   their answers, and refusing them would only add a failure mode to test.
//! - **`session/new`** — `cwd` must be a string holding an absolute path; `mcpServers` a
//!   required array. Each entry with `type` `"http"` or `"sse"` is −32602 naming
//!   `mcpServers[i]` (the transport is not supported: `mcpCapabilities` are `false`); any
//!   other `type` but `"stdio"` is −32602 naming `mcpServers[i].type`. A stdio entry
//!   needs `name` and `command` strings, `args` an array of strings and `env` an array of
//!   `{name: string, value: string}` objects; a wrong shape names the exact field. The
//!   entries are recorded with the session but **never started** (the reference agent
//!   calls no MCP tools). `additionalDirectories` and `_meta` are ignored. Result:
//!   `{"sessionId": "sess_<n>"}`, `n` counting from 1 per connection.
//! - **`session/prompt`** — `sessionId` must name a session of this connection and
//!   `prompt` be an array of ContentBlock objects each with a string `type` (a `text`
//!   block also needs a string `text`); else −32602 naming `sessionId`, `prompt`,
//!   `prompt[i]` or `prompt[i].text`. A second prompt on a session whose turn is still
//!   open is −32600 `"a prompt turn is already running on this session"` and leaves the
//!   open turn alone. See "Deterministic prompt turns".
//! - **`session/cancel`** (notification) — ends the open turn of that session with
//!   `{"stopReason":"cancelled"}` (never an error). Cancelling an idle or unknown session
//!   is ignored.
//! - **The tool method** ([`AcpAgentConfig::tool_method`], default [`TOOL_METHOD`]) —
//!   params are the tool call `{"name": string, "arguments"?: …}`; other members
//!   (`_meta`, `sessionId`, …) are ignored. A missing or non-string `name` (or params that
//!   are not an object) is −32602 naming `name`. Absent `arguments` become `{}`; present
//!   ones are passed on unchanged, objects or not (the dispatcher itself answers
//!   `protocol_error` −32602 for non-objects). `Dispatcher::call` runs in a spawned task,
//!   so calls overlap and answer in completion order. A `protocol_error` outcome becomes a
//!   JSON-RPC error with its `code` and `message`; every other outcome is the `result`,
//!   exactly [`Outcome::to_json`](crate::dispatcher::Outcome::to_json) (e.g.
//!   `{"outcome":"ok","value":{…},"warnings":[]}`). Standard method names take precedence
//!   over a configured tool method of the same name.
//! - **`$/cancel_request`** (notification, `cancellation.mdx`) — `{"requestId": id}`
//!   aborts the in-flight tool call with that id (an `exec` child is killed) and answers
//!   that request −32800 `"Request cancelled"`; nothing else is sent for it. Ids of
//!   anything else (including an open prompt turn, which `session/cancel` ends) are
//!   ignored.
//!
//! # Deterministic prompt turns
//!
//! The agent has no model. For each accepted `session/prompt`, the `text` of every
//! `text` block is joined with `"\n"` (other block types are ignored):
//!
//! - if the joined text is exactly [`WAIT_FOR_CANCEL`], the turn stays open — nothing is
//!   sent — until a `session/cancel` for that session arrives; then the prompt is
//!   answered `{"stopReason":"cancelled"}`;
//! - otherwise the agent sends one `session/update` notification
//!   `{"sessionId": …, "update": {"sessionUpdate": "agent_message_chunk", "content":
//!   {"type": "text", "text": "parity reference agent received: <joined text>"}}}` and
//!   then answers `{"stopReason":"end_turn"}`.
//!
//! Every message about a session is queued after the `session/new` response that
//! created it (they are produced in input order on one queue), so a `session/update`
//! never precedes it.
//!
//! # End of input
//!
//! At EOF, in-flight tool calls are aborted (nothing is sent for them), open prompt
//! turns are dropped unanswered, queued output is flushed and [`serve`] returns `Ok(())`.

mod agent;

#[cfg(test)]
mod tests;

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::dispatcher::{Dispatcher, DispatcherConfig};
use crate::mcp::framing;

use agent::Agent;

pub use crate::mcp::MAX_LINE_BYTES;

/// The default name of the extension request that runs one tool call
/// (`extensibility.mdx`: custom methods start with `_`).
pub const TOOL_METHOD: &str = "_parity/tool";

/// The ACP protocol version this agent supports: the only one, hence also its latest.
pub const PROTOCOL_VERSION: u64 = 1;

/// The prompt text that keeps a turn open until `session/cancel`.
pub const WAIT_FOR_CANCEL: &str = "wait_for_cancel";

/// The prefix of the `agent_message_chunk` text answering any other prompt.
pub const ECHO_PREFIX: &str = "parity reference agent received: ";

/// How to run the ACP agent.
#[derive(Debug, Clone)]
pub struct AcpAgentConfig {
    /// The dispatcher to serve.
    pub dispatcher: DispatcherConfig,
    /// The extension request method that runs a tool call; default [`TOOL_METHOD`].
    /// Advertised under `agentCapabilities._meta.parity.toolMethod`.
    pub tool_method: String,
    /// `agentInfo.name`; default `"parity-reference"`.
    pub agent_name: String,
    /// `agentInfo.version`; default this crate's version.
    pub agent_version: String,
}

impl AcpAgentConfig {
    /// The default configuration over `dispatcher`.
    pub fn new(dispatcher: DispatcherConfig) -> Self {
        AcpAgentConfig {
            dispatcher,
            tool_method: TOOL_METHOD.to_owned(),
            agent_name: "parity-reference".to_owned(),
            agent_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// Serves ACP v1 over `reader`/`writer` until `reader` reaches EOF.
///
/// Generic so in-process peers can drive it over `tokio::io::duplex`. Must run inside a
/// tokio runtime (it spawns the writer and tool-call tasks).
///
/// # Errors
/// An I/O error reading `reader`, or writing/flushing `writer` (e.g. a closed pipe); in
/// both cases in-flight calls are aborted first. EOF on `reader` is `Ok(())`.
pub async fn serve<R, W>(reader: R, writer: W, config: AcpAgentConfig) -> io::Result<()>
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
    config: AcpAgentConfig,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    framing::serve_lines(
        reader,
        writer,
        |queue| {
            Agent::new(
                dispatcher,
                queue,
                config.tool_method,
                config.agent_name,
                config.agent_version,
            )
        },
        "parity-reference acp",
    )
    .await
}

/// [`serve`] over the process's stdin and stdout.
///
/// # Errors
/// As [`serve`].
pub async fn serve_stdio(config: AcpAgentConfig) -> io::Result<()> {
    // As the MCP surface: pipes go through the reactor, anything else (a terminal, a file)
    // through tokio's portable stdin/stdout.
    match (crate::mcp::pipe_reader(), crate::mcp::pipe_writer()) {
        (Some(r), Some(w)) => serve(r, w, config).await,
        (Some(r), None) => serve(r, tokio::io::stdout(), config).await,
        (None, Some(w)) => serve(tokio::io::stdin(), w, config).await,
        (None, None) => serve(tokio::io::stdin(), tokio::io::stdout(), config).await,
    }
}
