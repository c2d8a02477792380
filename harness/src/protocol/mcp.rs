//! The MCP client driver, both protocol eras.
//!
//! Legacy era (2024-11-05 … 2025-11-25): the `initialize` handshake, then
//! `notifications/initialized` (`basic/lifecycle`). Modern era (2026-07-28): no handshake; every
//! request carries `params._meta` with `io.modelcontextprotocol/protocolVersion` and
//! `io.modelcontextprotocol/clientCapabilities` (`basic/index`), and `server/discover` tells what
//! a server supports. Responses are correlated by id (value and type), in any order; requests the
//! server sends to the client are answered deterministically (see [`answer_server_request`]).
//! The driver returns observations and never panics on what a peer sent.
//!
//! Size (1121 lines): the MCP client driver for both eras: handshakes, matching responses by id,
//! answering server requests, and the inbox bounds; about 130 lines are unit tests.

use crate::transport::peer::{Peer, PeerError, Recv};
use crate::transport::wire::{classify, Classified, Line};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

/// The legacy revisions, oldest first.
pub const LEGACY_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The modern (stateless) revision.
pub const MODERN_REVISION: &str = "2026-07-28";
/// Every revision parity knows, oldest first.
pub const ALL_REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// `_meta` key of the protocol version on every 2026-07-28 request.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities on every 2026-07-28 request.
pub const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client info on 2026-07-28 requests.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// The protocol era a session speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `initialize` handshake revisions.
    Legacy,
    /// 2026-07-28: per-request `_meta`, `server/discover`.
    Modern,
}

impl Era {
    /// The era of a revision string (anything not legacy is modern).
    pub fn of(revision: &str) -> Era {
        if LEGACY_REVISIONS.contains(&revision) {
            Era::Legacy
        } else {
            Era::Modern
        }
    }
}

/// A message received from the server, with its raw line and class.
///
/// `class` is the strict reading of the raw line (what checks and monitors judge). `value` is
/// the driver's tolerant reading, used only to keep a session going so that every fault gets
/// observed: a leading byte-order mark is ignored, and a message spread over several lines is
/// reassembled (its last line carries the joined value). Nothing is repaired on the wire.
#[derive(Debug, Clone)]
pub struct Inbound {
    /// The raw line.
    pub line: Line,
    /// Its strict classification.
    pub class: Classified,
    /// The tolerant parse (see above), if any.
    pub value: Option<Value>,
    /// `value` is also the strict parse (moved out of `class.value` to save a copy).
    strict_is_value: bool,
    /// A response (a message with `result` or `error` and no `method`) whose id, not null,
    /// an earlier response of this session already carried: a request answered twice. Checks
    /// never take it for the answer they wait for, nor for an answer to a notification;
    /// `mcp.base.duplicate-response` and `acp.base.duplicate-response` judge it.
    pub repeat: bool,
    /// The line is no message by itself but starts or continues one spread over several lines
    /// that the driver is reassembling: it answers nothing on its own.
    pub reassembling: bool,
}

impl Inbound {
    /// The driver's (tolerant) parsed JSON value, if any.
    pub fn value(&self) -> Option<&Value> {
        self.value.as_ref()
    }

    /// The strict parse of the raw line (`None` when the line is not JSON as sent).
    pub fn strict(&self) -> Option<&Value> {
        if self.strict_is_value {
            self.value.as_ref()
        } else {
            self.class.value.as_ref()
        }
    }
}

/// Most messages a session's inbox keeps (older ones are dropped first).
pub const MAX_INBOX: usize = 10_000;

/// Most bytes a session's inbox keeps (2 MiB, each message counted as four times its line, for
/// the parsed value beside it, plus 512): past it messages are dropped until half of it is left,
/// the peer's own requests and notifications first, so a peer flooding
/// large notifications cannot exhaust memory (`docs/architecture.md` §Memory budget).
pub const MAX_INBOX_BYTES: usize = 2 << 20;

/// Most requests of the peer a session keeps in [`Client::server_requests`] (all are
/// answered; later ones are not kept).
pub const MAX_SERVER_REQUESTS: usize = 1_000;

/// Most response ids a session remembers to tell a repeated response ([`Inbound::repeat`]);
/// past it, later ids are not remembered (a repeat of one of them is not flagged).
pub const MAX_ANSWERED_IDS: usize = 100_000;

/// Most lines a multi-line message may span before the driver gives up reassembling it.
const MAX_REASSEMBLY_LINES: usize = 200;
/// Most bytes a reassembled message may hold.
const MAX_REASSEMBLY_BYTES: usize = 4 * 1024 * 1024;

/// The stdout lines over the line cap a session skipped unread: only a prefix of each was kept
/// ([`crate::transport::wire::OVER_CAP_PREFIX`] bytes), which cannot be parsed, so any of them may have
/// held the answer a check waited for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    /// How many lines were skipped.
    pub lines: u64,
    /// The length of the longest of them in bytes (excluding the newline).
    pub longest: u64,
}

impl Skipped {
    /// Counts one more skipped line of `len` bytes.
    pub fn add(&mut self, len: u64) {
        self.lines = self.lines.saturating_add(1);
        self.longest = self.longest.max(len);
    }

    /// Adds the lines another session skipped.
    pub fn merge(&mut self, other: Skipped) {
        self.lines = self.lines.saturating_add(other.lines);
        self.longest = self.longest.max(other.longest);
    }

    /// What to tell the user, given the line cap in bytes (`--line-cap`): the length seen, the
    /// cap and the flag to raise it. `None` when no line was skipped.
    pub fn note(&self, cap: usize) -> Option<String> {
        match self.lines {
            0 => None,
            1 => Some(format!(
                "the server sent a line of {} bytes, over the line cap of {cap} bytes, which parity skipped unread; if it was the answer, raise the cap with --line-cap",
                self.longest
            )),
            n => Some(format!(
                "the server sent {n} lines over the line cap of {cap} bytes (the longest {} bytes), which parity skipped unread; if one was the answer, raise the cap with --line-cap",
                self.longest
            )),
        }
    }
}

/// What a request produced.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A response or error response with the request's id.
    Message(Value),
    /// The server closed stdout first.
    Eof,
    /// Nothing with that id arrived before the deadline.
    Timeout,
}

impl Reply {
    /// The whole response message.
    pub fn message(&self) -> Option<&Value> {
        match self {
            Reply::Message(v) => Some(v),
            _ => None,
        }
    }
    /// The `result` member, if this is a success response.
    pub fn result(&self) -> Option<&Value> {
        self.message().and_then(|m| m.get("result"))
    }
    /// The `error` member, if this is an error response.
    pub fn error(&self) -> Option<&Value> {
        self.message().and_then(|m| m.get("error"))
    }
    /// The error code, if this is an error response with an integer code.
    pub fn error_code(&self) -> Option<i64> {
        self.error()
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
    }
    /// A short description for evidence.
    pub fn describe(&self) -> String {
        match self {
            Reply::Message(v) => crate::base::util::clip(&v.to_string(), 400),
            Reply::Eof => "the server closed stdout".into(),
            Reply::Timeout => "no response before the deadline".into(),
        }
    }
}

/// A client session over one peer.
pub struct Client {
    /// The peer this session talks to.
    pub peer: Peer,
    /// The era the session speaks.
    pub era: Era,
    /// The revision in use: the negotiated one (legacy) or 2026-07-28 (modern).
    pub revision: String,
    /// Per-message deadline.
    pub timeout: Duration,
    /// Messages received that were not the awaited response, in order.
    pub inbox: Vec<Inbound>,
    /// Requests the server sent us (already answered): the first [`MAX_SERVER_REQUESTS`].
    pub server_requests: Vec<Value>,
    /// Bytes [`Client::inbox`] holds, as last counted ([`MAX_INBOX_BYTES`]).
    inbox_bytes: usize,
    next_id: i64,
    partial: Option<(Vec<u8>, usize)>,
    /// The last bytes written did not end a line: answers to server requests wait until they
    /// do, so they never land inside a message the client is still writing.
    mid_line: bool,
    deferred: Vec<Value>,
    /// How requests the peer sends are answered: [`answer_server_request`] for MCP, the ACP
    /// driver's `crate::protocol::acp::answer_agent_request` for ACP agents.
    pub answer: fn(&Value) -> Value,
    /// Read a one-message batch array as that message (ACP v1 has no batches, so an agent that
    /// wraps its messages is still understood; the monitors judge the batch). Off for MCP,
    /// whose batch checks need the array.
    pub unwrap_batches: bool,
    /// The start-up phase of this session (see [`StartClock`]).
    pub clock: StartClock,
    /// A place among the process starts allowed at once ([`start_gate`]), held from spawn to
    /// the first answer.
    gate: Option<tokio::sync::OwnedSemaphorePermit>,
    /// The server was seen answering a probe after the barrier request sent behind it: barriers
    /// cannot decide for it, so later waits behind one run to the deadline.
    pub out_of_order: bool,
    /// How long to wait for a late probe answer once its barrier was answered.
    pub barrier_window: Duration,
    /// The session belongs to a shared pool (`crate::engine::check::SessionPool`): closing it hands
    /// it back instead of shutting it down.
    pub pooled: bool,
    /// The index of the first frame of the current lease of a shared session.
    pub lease_mark: usize,
    /// The ids (JSON text) of the responses received so far, for [`Inbound::repeat`]; kept
    /// across leases, so a duplicate of an earlier check's answer is known as one.
    answered: std::collections::HashSet<String>,
    /// The stdout lines over the line cap this session (this lease, when shared) skipped.
    pub skipped: Skipped,
}

/// What a wait behind a barrier found ([`Client::behind_barrier`]).
#[derive(Debug)]
pub struct Barrier {
    /// The probe's answer, when one came.
    pub answer: Option<Inbound>,
    /// The id of the barrier request.
    pub id: Value,
    /// The barrier request was answered (with a result or an error): the server read
    /// everything sent before it.
    pub answered: bool,
    /// The server closed stdout.
    pub eof: bool,
    /// The probe's answer came after the barrier's.
    pub late: bool,
    /// When the probe was written (time since the peer started): the last write before the
    /// barrier request. Notes from then on may tell what came at the transport level.
    pub probe_at: Option<std::time::Duration>,
    /// Lines over the line cap that came during the wait: skipped unread, so neither the
    /// probe's answer nor the barrier's, but either may have been one of them.
    pub unread: u64,
}

impl Barrier {
    /// The probe got no answer although the server answered the barrier request sent after
    /// it (and the silence window after that passed): proof it read the probe and chose not
    /// to answer. False when the server answers out of order (the wait then ran to its
    /// deadline instead).
    /// False too when a line over the line cap came during the wait ([`Barrier::unread`]): it
    /// may have been the probe's answer.
    pub fn proves_unanswered(&self) -> bool {
        self.answer.is_none() && self.answered && self.unread == 0
    }

    /// Over Streamable HTTP, the note of the probe's POST when the server refused it by HTTP
    /// status with no JSON-RPC message in the body ([`crate::transport::http_bridge::BARE_REFUSAL`]):
    /// the probe was answered, at the transport level. `None` over stdio, and when the probe
    /// got a JSON-RPC answer or no HTTP answer at all.
    pub fn http_refusal(&self, peer: &crate::transport::peer::Peer) -> Option<String> {
        let at = self.probe_at?;
        if !peer.is_bridged() {
            return None;
        }
        peer.notes_since(at)
            .into_iter()
            .find(|n| crate::transport::http_bridge::bare_refusal(n))
    }

    /// A short account for messages: how the barrier request fared.
    pub fn describe(&self) -> String {
        match (self.answered, self.eof) {
            (true, _) if self.unread > 0 => format!(
                "the server answered the request sent after it (id {}), but a line over the line cap came before that answer and may have been this one",
                self.id
            ),
            (true, _) => format!(
                "the server answered the request sent after it (id {}), so it read it and did not reply",
                self.id
            ),
            (false, true) => "the server closed its stdout".to_string(),
            (false, false) => format!(
                "nothing came before the deadline, not even an answer to the request sent after it (id {})",
                self.id
            ),
        }
    }
}

/// When a session was asked for, when its peer was spawned and when it first answered: the
/// start-up phase.
///
/// Until the peer writes its first stdout line, waits run to the start-up deadline
/// (`startup` from spawn) rather than to the per-message deadline; the time spent waiting for a
/// place at [`start_gate`] and starting is added to the case deadline
/// ([`crate::engine::check::Ctx::within_deadline`]). Cloning shares the instants.
#[derive(Debug, Clone)]
pub struct StartClock {
    /// When the session was asked for (before waiting at the start gate).
    pub queued: Instant,
    /// When the peer was spawned (set once, after the start gate).
    pub spawned: std::sync::Arc<std::sync::OnceLock<Instant>>,
    /// Start-up deadline, measured from `spawned`.
    pub startup: Duration,
    /// When the first stdout line arrived (set once).
    pub first: std::sync::Arc<std::sync::OnceLock<Instant>>,
}

impl StartClock {
    /// A clock for a session asked for now, its peer spawned now.
    pub fn new(startup: Duration) -> StartClock {
        let c = StartClock::queued(startup);
        c.mark_spawned();
        c
    }

    /// A clock for a session asked for now, whose peer is not spawned yet.
    pub fn queued(startup: Duration) -> StartClock {
        StartClock {
            queued: Instant::now(),
            spawned: std::sync::Arc::new(std::sync::OnceLock::new()),
            startup,
            first: std::sync::Arc::new(std::sync::OnceLock::new()),
        }
    }

    /// Records that the peer was spawned now (once).
    pub fn mark_spawned(&self) {
        let _ = self.spawned.set(Instant::now());
    }

    /// When the peer was spawned (when it was queued, before that).
    pub fn spawned_at(&self) -> Instant {
        self.spawned.get().copied().unwrap_or(self.queued)
    }

    /// How long the peer took from spawn to its first stdout line, once it wrote one.
    pub fn took(&self) -> Option<Duration> {
        self.first
            .get()
            .map(|f| f.saturating_duration_since(self.spawned_at()))
    }

    /// Time spent waiting at the start gate and starting, as of `now`: from being queued to
    /// the first answer, or to `now` while none came; the starting part never more than the
    /// start-up deadline.
    pub fn spent(&self, now: Instant) -> Duration {
        let end = self.first.get().copied().unwrap_or(now);
        let gate = self.spawned_at().saturating_duration_since(self.queued);
        let starting = end.saturating_duration_since(self.spawned_at());
        match self.spawned.get() {
            Some(_) => gate + starting.min(self.startup),
            None => now.saturating_duration_since(self.queued),
        }
    }
}

/// The semaphore that bounds how many peer processes may be starting at once (spawned and not
/// yet answered): the machine's available parallelism, so a run with `--jobs 8` on a 2-core
/// machine does not starve its own servers of CPU while they import.
pub fn start_gate() -> std::sync::Arc<tokio::sync::Semaphore> {
    static GATE: std::sync::OnceLock<std::sync::Arc<tokio::sync::Semaphore>> =
        std::sync::OnceLock::new();
    GATE.get_or_init(|| {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        std::sync::Arc::new(tokio::sync::Semaphore::new(n.max(1)))
    })
    .clone()
}

/// The client info parity sends (`initialize.clientInfo`, `_meta` clientInfo).
pub fn client_info() -> Value {
    json!({"name": "parity", "version": env!("CARGO_PKG_VERSION")})
}

/// The `_meta` object for a 2026-07-28 request at `revision`.
pub fn modern_meta(revision: &str) -> Value {
    json!({
        META_VERSION: revision,
        META_CAPS: {},
        META_CLIENT_INFO: client_info(),
    })
}

impl Client {
    /// Wraps a peer; nothing is sent yet.
    pub fn new(peer: Peer, era: Era, revision: &str, timeout: Duration) -> Client {
        Client {
            peer,
            era,
            revision: revision.to_string(),
            timeout,
            inbox: Vec::new(),
            server_requests: Vec::new(),
            inbox_bytes: 0,
            next_id: 1,
            partial: None,
            mid_line: false,
            deferred: Vec::new(),
            answer: answer_server_request,
            unwrap_batches: false,
            clock: StartClock::new(Duration::ZERO),
            gate: None,
            out_of_order: false,
            barrier_window: Duration::from_millis(300),
            pooled: false,
            lease_mark: 0,
            answered: std::collections::HashSet::new(),
            skipped: Skipped::default(),
        }
    }

    /// Starts a new lease of a shared session: what the previous check left in the inbox is
    /// dropped, and [`Client::session_events`] starts from here.
    pub fn lease(&mut self) {
        self.inbox.clear();
        self.server_requests.clear();
        self.lease_mark = self.peer.event_count();
        self.skipped = Skipped::default();
    }

    /// The frames of this lease (every frame, for a session that is not shared).
    pub fn session_events(&self) -> Vec<crate::transport::wire::WireEvent> {
        self.peer.events_from(self.lease_mark)
    }

    /// Sends a barrier request behind a probe that may get no answer, and waits for the
    /// probe's answer (the first message `is_answer` accepts) and for the barrier's.
    ///
    /// The barrier is the era's request every server answers (`method`, with this client's
    /// `_meta` in the modern era; a fresh id). Once it is answered, the wait for the probe
    /// ends after `barrier_window` of silence: a server that answered a later request read
    /// the probe. A server seen answering a probe after its barrier is marked
    /// [`Client::out_of_order`], and later waits run to the per-message deadline. Over the
    /// Streamable HTTP bridge there is no silence window: the wait ends once every POST sent
    /// has had its HTTP answer, since the POSTs of a session run side by side and the
    /// probe's answer may come after the barrier's. Messages that are neither go to the inbox.
    ///
    /// Errors: writing the barrier failed (the peer stopped reading).
    pub async fn behind_barrier(
        &mut self,
        method: &str,
        is_answer: impl Fn(&Inbound) -> bool,
    ) -> Result<Barrier, PeerError> {
        let params = self.with_meta(json!({}));
        self.behind_barrier_with(method, params, is_answer).await
    }

    /// [`Client::behind_barrier`] with the barrier request's `params` given exactly (ACP's
    /// barrier is a full `initialize`, which every agent answers, with a result or an error).
    /// A repeated response ([`Inbound::repeat`]) is never taken for the probe's answer.
    ///
    /// Errors: writing the barrier failed (the peer stopped reading).
    pub async fn behind_barrier_with(
        &mut self,
        method: &str,
        params: Value,
        is_answer: impl Fn(&Inbound) -> bool,
    ) -> Result<Barrier, PeerError> {
        let id = json!(format!("parity-barrier-{}", self.next_id));
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id.clone(), "method": method, "params": params});
        let probe_at = self.peer.last_write_at();
        self.peer.send_json(&msg).await?;
        let mut out = Barrier {
            answer: None,
            id: id.clone(),
            answered: false,
            eof: false,
            late: false,
            probe_at,
            unread: 0,
        };
        let mut deadline = Instant::now() + self.timeout;
        loop {
            match self.next_inbound(deadline).await {
                // Only a prefix of it was kept: it answers nothing that can be judged.
                Ok(inb) if inb.line.cut() => out.unread += 1,
                Ok(inb) => {
                    let is_barrier = inb.value().is_some_and(|v| {
                        v.get("method").is_none()
                            && v.get("id") == Some(&id)
                            && (v.get("result").is_some() || v.get("error").is_some())
                    });
                    if is_barrier {
                        out.answered = true;
                        if out.answer.is_some() {
                            return Ok(out);
                        }
                        // Over a bridge the wait ends by itself once every POST sent has
                        // been answered at the HTTP level ([`Peer::bridged`]): the POSTs run
                        // side by side, so the probe's own answer (a bare HTTP refusal, say)
                        // may come after the barrier's, however long it takes.
                        if !self.out_of_order && !self.peer.is_bridged() {
                            deadline = Instant::now() + self.barrier_window;
                        }
                        continue;
                    }
                    if out.answer.is_none() && !inb.repeat && is_answer(&inb) {
                        if out.answered {
                            out.late = true;
                            self.out_of_order = true;
                        }
                        out.answer = Some(inb);
                        if out.answered {
                            return Ok(out);
                        }
                        continue;
                    }
                    self.stash(inb);
                }
                Err(Recv::Eof) => {
                    out.eof = true;
                    return Ok(out);
                }
                Err(_) => return Ok(out),
            }
        }
    }

    /// The same client with a start-up phase: until the first answer, waits run to
    /// `clock.spawned_at() + clock.startup`, and `gate` (a place at [`start_gate`]) is held.
    pub fn starting(
        mut self,
        clock: StartClock,
        gate: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> Client {
        self.clock = clock;
        self.gate = gate;
        self
    }

    /// The deadline of a wait that would end at `deadline`: while the peer has not answered
    /// yet, not before the end of its start-up phase.
    fn startup_deadline(&self, deadline: Instant) -> Instant {
        if self.clock.first.get().is_some() {
            return deadline;
        }
        deadline.max(self.clock.spawned_at() + self.clock.startup)
    }

    /// Keeps a message that was not the awaited one; past [`MAX_INBOX`] messages the oldest
    /// are dropped, so a flooding peer cannot exhaust memory.
    fn stash(&mut self, inb: Inbound) {
        if self.inbox.len() >= MAX_INBOX {
            self.inbox.drain(..MAX_INBOX / 10);
        }
        let cost = |i: &Inbound| 4 * i.line.bytes.len() + 512;
        self.inbox_bytes += cost(&inb);
        self.inbox.push(inb);
        if self.inbox_bytes > MAX_INBOX_BYTES {
            // The count may be stale (checks take messages out): recount, then drop the
            // peer's own requests and notifications first (oldest first), and only then other
            // messages: a check may still look for a response here. The newest always stays.
            let mut total: usize = self.inbox.iter().map(cost).sum();
            for responses_too in [false, true] {
                if total <= MAX_INBOX_BYTES / 2 {
                    break;
                }
                let last = self.inbox.len().saturating_sub(1);
                let mut i = 0;
                self.inbox.retain(|m| {
                    let droppable = i < last
                        && total > MAX_INBOX_BYTES / 2
                        && (responses_too || m.value().is_some_and(|v| v.get("method").is_some()));
                    i += 1;
                    if droppable {
                        total -= cost(m);
                    }
                    !droppable
                });
            }
            self.inbox_bytes = total;
        }
    }

    /// The last id [`Client::fresh_id`] handed out (0 before any).
    pub fn last_id(&self) -> i64 {
        self.next_id - 1
    }

    /// A fresh request id (integers from 1 upward).
    pub fn fresh_id(&mut self) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        json!(id)
    }

    /// Params with the era's `_meta` added (modern era only); `params` must be an object or null.
    pub fn with_meta(&self, params: Value) -> Value {
        if self.era != Era::Modern {
            return params;
        }
        let mut obj = match params {
            Value::Object(o) => o,
            _ => Map::new(),
        };
        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
        if let (Value::Object(m), Value::Object(add)) = (meta, modern_meta(&self.revision)) {
            for (k, v) in add {
                m.entry(k).or_insert(v);
            }
        }
        Value::Object(obj)
    }

    /// Sends a request with a fresh id and the era's `_meta`, and waits for its response.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Reply, PeerError> {
        let id = self.fresh_id();
        let params = self.with_meta(params);
        self.request_as(id, method, Some(params)).await
    }

    /// Sends a request with the given id and params exactly (no `_meta` added) and waits.
    pub async fn request_as(
        &mut self,
        id: Value,
        method: &str,
        params: Option<Value>,
    ) -> Result<Reply, PeerError> {
        let mut msg = json!({"jsonrpc": "2.0", "id": id.clone(), "method": method});
        if let (Some(p), Value::Object(o)) = (params, &mut msg) {
            o.insert("params".into(), p);
        }
        self.peer.send_json(&msg).await?;
        Ok(self.wait_response(&id).await)
    }

    /// Sends a notification (the era's `_meta` is not added: notifications carry none).
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), PeerError> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let (Some(p), Value::Object(o)) = (params, &mut msg) {
            o.insert("params".into(), p);
        }
        self.peer.send_json(&msg).await
    }

    /// Sends raw bytes as given. Answers to server requests are held back while the bytes
    /// written so far end mid-line, and sent once a line is complete.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), PeerError> {
        self.peer.send_raw(bytes).await?;
        if let Some(last) = bytes.last() {
            self.mid_line = *last != b'\n';
        }
        if !self.mid_line {
            for answer in std::mem::take(&mut self.deferred) {
                self.peer.send_answer(&answer)?;
            }
        }
        Ok(())
    }

    /// Receives one message until `deadline`, answering server requests on the way.
    /// `None` on EOF or timeout (see the `Recv` in the second element).
    pub async fn next_inbound(&mut self, deadline: Instant) -> Result<Inbound, Recv> {
        let deadline = self.startup_deadline(deadline);
        self.next_inbound_until(deadline).await
    }

    /// [`Client::next_inbound`] without the start-up extension (silence windows).
    async fn next_inbound_until(&mut self, deadline: Instant) -> Result<Inbound, Recv> {
        let got = self.peer.recv(deadline).await;
        if !matches!(got, Recv::Timeout) && self.clock.first.get().is_none() {
            // The first answer (or the end of stdout) ends the start-up phase.
            let _ = self.clock.first.set(Instant::now());
            self.gate = None;
        }
        match got {
            Recv::Line(line) => {
                if line.cut() {
                    self.skipped.add(line.len);
                }
                let mut class = classify(&line.bytes);
                let (mut value, mut strict_is_value) = self.tolerant(&line, &mut class);
                if self.unwrap_batches {
                    if let Some(Value::Array(items)) = &mut value {
                        if items.len() == 1 && items[0].is_object() {
                            value = items.pop();
                            strict_is_value = false;
                        }
                    }
                }
                let repeat = value.as_ref().is_some_and(|v| self.note_response(v));
                let reassembling = value.is_none() && self.partial.is_some();
                let inbound = Inbound {
                    line,
                    class,
                    value,
                    strict_is_value,
                    repeat,
                    reassembling,
                };
                let is_request = inbound.value().is_some_and(|v| {
                    v.get("method").is_some_and(Value::is_string) && v.get("id").is_some()
                });
                if is_request {
                    if let Some(v) = inbound.value().cloned() {
                        let answer = (self.answer)(&v);
                        if self.server_requests.len() < MAX_SERVER_REQUESTS {
                            self.server_requests.push(v);
                        }
                        // Queued, never awaited: the writer task writes it, so a peer that
                        // floods requests without reading is still drained.
                        if self.mid_line {
                            self.deferred.push(answer);
                        } else {
                            let _ = self.peer.send_answer(&answer);
                        }
                    }
                }
                Ok(inbound)
            }
            other => Err(other),
        }
    }

    /// Remembers the id of a response and tells whether an earlier response carried it
    /// already ([`Inbound::repeat`]). Null ids and messages that are not responses are not
    /// remembered.
    fn note_response(&mut self, v: &Value) -> bool {
        let is_response =
            v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some());
        let Some(id) = v.get("id").filter(|id| is_response && !id.is_null()) else {
            return false;
        };
        let key = id.to_string();
        if self.answered.contains(&key) {
            return true;
        }
        if self.answered.len() < MAX_ANSWERED_IDS {
            self.answered.insert(key);
        }
        false
    }

    /// The tolerant reading of a line (see [`Inbound`]), and whether it is the strict parse
    /// (then moved out of `class.value`).
    fn tolerant(&mut self, line: &Line, class: &mut Classified) -> (Option<Value>, bool) {
        if let Some((mut buf, n)) = self.partial.take() {
            // A line that is a message on its own ends any reassembly under way: the earlier
            // line was noise (a `[INFO] …` log line), not the start of a message.
            if class
                .value
                .as_ref()
                .is_some_and(|v| v.is_object() || v.is_array())
            {
                return (class.value.take(), true);
            }
            buf.push(b'\n');
            buf.extend_from_slice(&line.bytes);
            if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                return (Some(v), false);
            }
            if n < MAX_REASSEMBLY_LINES && buf.len() < MAX_REASSEMBLY_BYTES {
                self.partial = Some((buf, n + 1));
                return (None, false);
            }
        }
        if class.value.is_some() {
            return (class.value.take(), true);
        }
        let body = line
            .bytes
            .strip_prefix(&[0xEF, 0xBB, 0xBF][..])
            .unwrap_or(&line.bytes);
        if let Ok(v) = serde_json::from_slice::<Value>(body) {
            return (Some(v), false);
        }
        let starts_json = body
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b == b'{' || *b == b'[');
        if starts_json && !line.over_cap {
            self.partial = Some((body.to_vec(), 1));
        }
        (None, false)
    }

    /// Waits for the response whose id equals `id` in value and type; everything else received
    /// meanwhile goes to the inbox.
    pub async fn wait_response(&mut self, id: &Value) -> Reply {
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.next_inbound(deadline).await {
                Ok(inb) => {
                    let answers = |v: &Value| {
                        v.get("method").is_none()
                            && (v.get("result").is_some() || v.get("error").is_some())
                            && v.get("id") == Some(id)
                    };
                    if !inb.repeat && inb.value().is_some_and(answers) {
                        if let Some(v) = inb.value {
                            return Reply::Message(v);
                        }
                        continue;
                    }
                    // Tolerant reading: a response wrapped in a batch array the client never
                    // sent still answers the request (the monitors judge the batch itself).
                    if let Some(Value::Array(items)) = inb.value() {
                        if let Some(v) = items.iter().find(|v| answers(v)) {
                            return Reply::Message(v.clone());
                        }
                    }
                    self.stash(inb);
                }
                Err(Recv::Eof) => return Reply::Eof,
                Err(_) => return Reply::Timeout,
            }
        }
    }

    /// Waits for the next response (a message with `result` or `error` and no `method`) until
    /// the per-message deadline; notifications and server requests received meanwhile go to
    /// the inbox (server requests are answered).
    pub async fn next_response(&mut self) -> Result<Inbound, Recv> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let inb = self.next_inbound(deadline).await?;
            // A repeated response answers nothing the caller is waiting for.
            let is_response = !inb.repeat
                && inb.value().is_some_and(|v| {
                    v.is_array()
                        || (v.get("method").is_none()
                            && (v.get("result").is_some() || v.get("error").is_some()))
                });
            // A line that is not JSON at all is returned too: the caller judges it. A line over
            // the cap is not: its prefix cannot tell whether it was JSON ([`Client::skipped`]).
            if is_response || inb.value().is_none() && self.partial.is_none() && !inb.line.cut() {
                return Ok(inb);
            }
            self.stash(inb);
        }
    }

    /// Waits for the next message of any kind until the per-message deadline.
    pub async fn next_message(&mut self) -> Result<Inbound, Recv> {
        let deadline = Instant::now() + self.timeout;
        self.next_inbound(deadline).await
    }

    /// Collects everything that arrives within `window` (silence checks). Stops early at EOF.
    pub async fn collect_for(&mut self, window: Duration) -> (Vec<Inbound>, bool) {
        let deadline = Instant::now() + window;
        let mut got = Vec::new();
        loop {
            match self.next_inbound_until(deadline).await {
                Ok(inb) => got.push(inb),
                Err(Recv::Eof) => return (got, true),
                Err(_) => return (got, false),
            }
        }
    }

    /// Legacy handshake at `version`: `initialize`, then `notifications/initialized` when it
    /// succeeded. Records the negotiated revision.
    pub async fn initialize(&mut self, version: &str) -> Result<Reply, PeerError> {
        let id = self.fresh_id();
        let reply = self
            .request_as(id, "initialize", Some(initialize_params(version)))
            .await?;
        if let Some(v) = reply
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
        {
            self.revision = v.to_string();
            self.notify("notifications/initialized", None).await?;
        }
        Ok(reply)
    }

    /// `server/discover` with the modern `_meta`.
    pub async fn discover(&mut self) -> Result<Reply, PeerError> {
        self.request("server/discover", json!({})).await
    }
}

/// `initialize` params for a version.
pub fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"roots": {"listChanged": false}, "sampling": {}, "elicitation": {}},
        "clientInfo": client_info(),
    })
}

/// The deterministic answer to a request the server sent the client:
/// `ping` → `{}`; `roots/list` → no roots; `sampling/createMessage` → the text "parity";
/// `elicitation/create` → `decline`; anything else → −32601.
pub fn answer_server_request(req: &Value) -> Value {
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let method = req.get("method").and_then(Value::as_str).unwrap_or("");
    let result = match method {
        "ping" => json!({}),
        "roots/list" => json!({"roots": []}),
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "parity"},
            "model": "parity-deterministic",
            "stopReason": "endTurn"
        }),
        "elicitation/create" => json!({"action": "decline"}),
        _ => {
            return json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "Method not found"}})
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// What era detection found for a target command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EraSupport {
    /// The legacy revision the server answered `initialize` (at 2025-11-25) with, if any.
    pub legacy: Option<String>,
    /// The server is modern: `server/discover` gave a result or a recognized modern error.
    pub modern: bool,
    /// Revisions listed by `server/discover`, when it answered.
    pub supported_versions: Vec<String>,
    /// How the decision was made, for the report.
    pub notes: Vec<String>,
    /// Milliseconds from spawning the legacy probe's peer to its `initialize` answer (stdio
    /// only, when it answered).
    pub legacy_startup_ms: Option<u64>,
    /// Milliseconds from spawning the modern probe's peer to its `server/discover` answer
    /// (stdio only, when it answered).
    pub modern_startup_ms: Option<u64>,
}

impl EraSupport {
    /// The longer of the two measured start-up times: later sessions' start-up deadlines are at
    /// least three times this.
    pub fn started_in(&self) -> Option<Duration> {
        self.legacy_startup_ms
            .max(self.modern_startup_ms)
            .map(Duration::from_millis)
    }
}

/// Classifies a `server/discover` reply per the 2026-07-28 backward-compatibility rule: a
/// result, or a recognized modern error (−32022), means modern; any other error, or a
/// timeout, means legacy. Never keyed to one legacy error code.
pub fn discover_means_modern(reply: &Reply) -> bool {
    match reply {
        Reply::Message(m) => {
            m.get("result").is_some_and(Value::is_object)
                || m.get("error")
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_i64)
                    == Some(-32022)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// An in-memory server that answers only requests whose method is `ping`, in order,
    /// after `delay` for the first one.
    fn client_of_pinger(first_delay: Duration) -> Client {
        let (client_w, server_r) = tokio::io::duplex(1 << 16);
        let (mut server_w, client_r) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let mut lines = BufReader::new(server_r).lines();
            let mut first = true;
            while let Ok(Some(l)) = lines.next_line().await {
                let Ok(v) = serde_json::from_str::<Value>(&l) else {
                    continue;
                };
                if v.get("method") == Some(&json!("ping")) {
                    if first {
                        tokio::time::sleep(first_delay).await;
                        first = false;
                    }
                    let answer = json!({"jsonrpc": "2.0", "id": v["id"], "result": {}});
                    let _ = server_w.write_all(format!("{answer}\n").as_bytes()).await;
                }
            }
        });
        let peer = Peer::from_io(client_r, client_w, 1 << 16);
        Client::new(peer, Era::Legacy, "2025-11-25", Duration::from_secs(5))
    }

    #[tokio::test(start_paused = true)]
    async fn a_barrier_proves_a_probe_unanswered_without_waiting_out_the_deadline() {
        let mut c = client_of_pinger(Duration::ZERO);
        c.barrier_window = Duration::from_millis(300);
        assert!(c.peer.send_raw(b"garbage\n").await.is_ok());
        let t0 = tokio::time::Instant::now();
        let b = c.behind_barrier("ping", |_| true).await;
        let Ok(b) = b else {
            panic!("the barrier could not be sent");
        };
        assert!(b.proves_unanswered(), "{b:?}");
        // The barrier window, not the 5 s deadline.
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn without_an_answer_to_the_barrier_nothing_is_proven() {
        let mut c = client_of_pinger(Duration::from_secs(60));
        assert!(c.peer.send_raw(b"garbage\n").await.is_ok());
        let Ok(b) = c.behind_barrier("ping", |_| true).await else {
            panic!("the barrier could not be sent");
        };
        assert!(!b.proves_unanswered() && !b.answered && !b.eof, "{b:?}");
    }

    #[tokio::test]
    async fn the_first_answer_of_a_session_may_take_the_start_up_deadline() {
        // Real time (the start clock reads the system's): a 600 ms start against a 100 ms
        // per-message deadline and a 10 s start-up deadline.
        let mut c = client_of_pinger(Duration::from_millis(600))
            .starting(StartClock::new(Duration::from_secs(10)), None);
        c.timeout = Duration::from_millis(100);
        let r = c.request("ping", json!({})).await;
        assert!(matches!(r, Ok(Reply::Message(_))), "{r:?}");
        let took = c.clock.took().unwrap_or_default();
        assert!(took >= Duration::from_millis(600), "{took:?}");
        // Without a start-up phase the same start is a timeout.
        let mut c = client_of_pinger(Duration::from_millis(600));
        c.timeout = Duration::from_millis(100);
        let r = c.request("ping", json!({})).await;
        assert!(matches!(r, Ok(Reply::Timeout)), "{r:?}");
    }

    /// An in-memory server with a 1 KiB line cap on the client's side that answers every line
    /// that is not a `ping` request with a line of more than 8 KiB, and every `ping` with a result.
    fn client_of_long_answers() -> Client {
        let (client_w, server_r) = tokio::io::duplex(1 << 16);
        let (mut server_w, client_r) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let mut lines = BufReader::new(server_r).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                let v = serde_json::from_str::<Value>(&l).unwrap_or(Value::Null);
                let answer = if v.get("method") == Some(&json!("ping")) {
                    json!({"jsonrpc": "2.0", "id": v["id"], "result": {}}).to_string()
                } else {
                    let pad = "x".repeat(8000);
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": pad}})
                        .to_string()
                };
                let _ = server_w.write_all(format!("{answer}\n").as_bytes()).await;
            }
        });
        let peer = Peer::from_io(client_r, client_w, 1024);
        Client::new(peer, Era::Legacy, "2025-11-25", Duration::from_secs(5))
    }

    #[tokio::test(start_paused = true)]
    async fn a_line_over_the_cap_is_no_answer_and_proves_nothing_behind_a_barrier() {
        let mut c = client_of_long_answers();
        assert!(c.peer.send_raw(b"garbage\n").await.is_ok());
        let Ok(b) = c.behind_barrier("ping", |_| true).await else {
            panic!("the barrier could not be sent");
        };
        // The barrier was answered after the unread line: that line may have been the answer.
        assert!(b.answered && b.answer.is_none() && b.unread == 1, "{b:?}");
        assert!(!b.proves_unanswered(), "{b:?}");
        assert!(
            b.describe().contains("over the line cap"),
            "{}",
            b.describe()
        );
        assert_eq!(c.skipped.lines, 1);
        assert!(c.skipped.longest > 8000, "{:?}", c.skipped);
        let note = c.skipped.note(1024).unwrap_or_default();
        assert!(
            note.contains(&format!("a line of {} bytes", c.skipped.longest))
                && note.contains("line cap of 1024 bytes")
                && note.contains("--line-cap"),
            "{note}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn next_response_does_not_return_a_line_over_the_cap_as_one_that_is_not_json() {
        let mut c = client_of_long_answers();
        assert!(c.peer.send_raw(b"garbage\n").await.is_ok());
        let r = c.next_response().await;
        assert!(matches!(r, Err(Recv::Timeout)), "{r:?}");
        assert_eq!(c.skipped.lines, 1);
        assert_eq!(Skipped::default().note(1024), None);
    }
}
