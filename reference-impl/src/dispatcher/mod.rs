//! The reference tool dispatcher: the one tool entry point (`DESIGN.md`, "The reference
//! implementation" → `dispatcher`).
//!
//! [`Dispatcher::call`] turns a [`ToolCall`] into an [`Outcome`]; [`Dispatcher::tools`]
//! describes the six tools. Every surface (MCP stdio, later ACP and HTTP) calls only
//! these two functions.
//!
//! # Tools
//!
//! All paths are relative to the workspace root (`DispatcherConfig::root`); see
//! [`RefusalCode`] for the refusals each can produce.
//!
//! | tool | arguments | `ok` value |
//! |---|---|---|
//! | `read_file` | `{path: string}` | `{"content": string}` (the file must be UTF-8) |
//! | `write_file` | `{path: string, content: string}` | `{"bytes_written": <UTF-8 bytes>}`; creates or truncates; parent must exist |
//! | `list_dir` | `{path?: string}` (default `"."`) | `{"entries":[{"name":string,"kind":"file"\|"dir"}]}` sorted by name |
//! | `exec` | `{argv: [string, …], timeout_ms?: integer ≥ 1}` | `{"exit_code": int\|null, "stdout": string, "stderr": string}` |
//! | `status` | `{}` | `{"label","state","reason","since_ms"}` ([`LifecycleSnapshot::to_json`]) |
//! | `retry` | `{}` | same shape as `status`, after applying the retry table |
//!
//! `exec` runs `argv` directly (no shell) with the root as working directory, stdin
//! closed, and an environment holding only `PATH` (inherited, or a default) and
//! `LC_ALL=C`. `argv[0]` must equal an allow-list entry exactly. The time limit is
//! `timeout_ms` clamped to `DispatcherConfig::exec_timeout_ms` (which is also the
//! default); past it the child is killed and the call is refused `TOOL_TIMEOUT`.
//! Dropping the `call` future kills the child too (`kill_on_drop`). stdout and stderr are
//! decoded lossily as UTF-8 and each capped at [`EXEC_OUTPUT_CAP`] bytes (a warning
//! says when output was cut). `exit_code` is `null` when the child died from a signal.
//!
//! # Lifecycle and startup budget
//!
//! Seed `001` (P5-D8, D-28): the host session never waits on the backend's start. With no
//! backend runtime configured ([`DispatcherConfig::runtime`] `None`, the default) the local
//! runtime counts as started and the state is `active` from construction. With a runtime, the
//! state starts `connecting` and [`Dispatcher::new`] starts the backend detached: surfaces
//! answer at once. The attempt is bounded by `startup_budget_ms`; it settles the state to
//! `active` (success), `error` with the runtime's reason (failure), or, when the budget fires
//! first, `disconnected` with reason [`STARTUP_BUDGET_EXCEEDED`] (the attempt is dropped). The
//! session continues in every case: read-only tools are never gated.
//!
//! `status` reports one of exactly two display labels through one mapping
//! ([`LifecycleState::label`], CORE-02/D-27), the state, the reason and `since_ms`, the time
//! of the last transition.
//!
//! # Retry table
//!
//! `retry` (D-95, P5-D14):
//!
//! | state | effect | result |
//! |---|---|---|
//! | `error`, `disconnected` | → `connecting` (reason cleared), one start attempt bounded by the budget → `active`, or `error` with the runtime's reason or `STARTUP_BUDGET_EXCEEDED` | `ok`, the new snapshot |
//! | `active`, `connecting` | none | `ok`, the current snapshot unchanged |
//! | `stopping` | none | `refused` `RETRY_REFUSED` |
//!
//! The attempt runs in its own task, so a caller that goes away cannot leave the state
//! `connecting`.
//!
//! # Policy mode
//!
//! In [`PolicyMode::Required`], the mutating tools (`write_file`, `exec`) are refused
//! `BACKEND_NOT_ACTIVE` while the state is not `active`; in [`PolicyMode::Advisory`] (the
//! default) they run and the outcome carries a warning starting `"BACKEND_NOT_ACTIVE: "`
//! (D-23, D-63, P5-D6). Non-mutating tools are unaffected in both modes.
//!
//! # One lock table
//!
//! The lifecycle and the tool calls share one [`LockTable`] (D-96, P5-D15; its
//! documentation lists the keys). A transition out of `active` holds the lifecycle key
//! exclusively (the startup settle and `retry` take none: they change the state in one step
//! under the snapshot's mutex, and never wait for calls); mutating tools hold it shared across their policy check and run; calls on one path take
//! that path's key. A call that waits longer than `tool_queue_ms` (default 2 000) is refused
//! `QUEUE_TIMEOUT` (D-91). A file or exec tool that runs longer than `tool_timeout_ms`
//! (default 30 000) is refused `TOOL_TIMEOUT`; `status` and `retry` are bounded by the budget
//! instead.
//!
//! # Order of checks
//!
//! 1. unknown tool name → `protocol_error` −32602 `"Unknown tool: <name>"`;
//! 2. arguments not a JSON object → `protocol_error` −32602;
//! 3. argument validation → `refused` `INVALID_ARGUMENTS` (names the field);
//! 4. the lock table → `refused` `QUEUE_TIMEOUT`;
//! 5. policy → `refused` `BACKEND_NOT_ACTIVE` or a warning;
//! 6. the tool itself, bounded by `tool_timeout_ms` → `refused` `TOOL_TIMEOUT`.

mod args;
mod clock;
mod lifecycle;
mod locks;
mod outcome;
mod paths;
mod policy;
mod refusal;
mod runtime;
mod tools;

#[cfg(test)]
mod lifecycle_tests;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use clock::{Clock, FixedClock, ManualClock, SystemClock, TokioClock};
pub use lifecycle::{LifecycleSnapshot, LifecycleState};
pub use locks::{path_key, LockGuard, LockTable, QueueTimeout, LIFECYCLE_KEY};
pub use outcome::{Outcome, OutcomeKind, OutcomeParseError, INVALID_PARAMS};
pub use policy::{Policy, PolicyError, RuntimeKind, RuntimePolicy};
pub use refusal::{catalogue, RefusalCode, UnknownRefusalCode};
pub use runtime::{
    BackendRuntime, LocalRuntime, SimulatedRuntime, StartFuture, BACKEND_STOPPING,
    DEFAULT_FAIL_REASON,
};
pub use tools::{EXEC_OUTPUT_CAP, INLINE_READ_MAX};

use args::Field;

/// One tool invocation as every surface hands it to the dispatcher.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool name, e.g. `"read_file"`.
    pub name: String,
    /// The arguments; must be a JSON object (an MCP surface passes `{}` when the request
    /// has none).
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
        }
    }
}

/// Whether mutating tools require an `active` backend.
///
/// Seed `001` (D-23, D-63, P5-D6): the write/edit guard. Serialized and parsed as
/// `"required"` / `"advisory"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyMode {
    /// Mutating tools are refused `BACKEND_NOT_ACTIVE` unless the state is `active`.
    Required,
    /// Mutating tools run regardless; the outcome carries a warning when the state is not
    /// `active`.
    #[default]
    Advisory,
}

/// The programs `exec` allows by default: `echo`, `true`, `false`, `sleep`.
pub const DEFAULT_EXEC_ALLOW: [&str; 4] = ["echo", "true", "false", "sleep"];

/// The default and maximum `exec` time limit: 10 000 ms.
pub const DEFAULT_EXEC_TIMEOUT_MS: u64 = 10_000;

/// The default startup budget: 10 000 ms (seed `001`, `startupBudgetMs`, D-28/P5-D8).
pub const DEFAULT_STARTUP_BUDGET_MS: u64 = 10_000;

/// The default bound on waiting in the lock table: 2 000 ms (seed `001`, `toolQueueMs`,
/// D-91).
pub const DEFAULT_TOOL_QUEUE_MS: u64 = 2_000;

/// The default time limit of a file or exec tool: 30 000 ms.
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 30_000;

/// The lifecycle reason of a start that overran the startup budget (seed `001`, P5-D8).
pub const STARTUP_BUDGET_EXCEEDED: &str = "STARTUP_BUDGET_EXCEEDED";

/// How to build a [`Dispatcher`].
#[derive(Clone)]
pub struct DispatcherConfig {
    /// The workspace root every path is relative to. It is canonicalized on each call,
    /// so it may be created after the dispatcher.
    pub root: PathBuf,
    /// Programs `exec` may run, matched exactly against `argv[0]` and resolved through
    /// `PATH`. Default [`DEFAULT_EXEC_ALLOW`].
    pub exec_allow: Vec<String>,
    /// Default and maximum `exec` time limit in milliseconds. Default
    /// [`DEFAULT_EXEC_TIMEOUT_MS`].
    pub exec_timeout_ms: u64,
    /// Clock for lifecycle timestamps. Default [`SystemClock`].
    pub clock: Arc<dyn Clock>,
    /// Policy mode. Default [`PolicyMode::Advisory`].
    pub policy: PolicyMode,
    /// Milliseconds a backend start attempt may take before the state settles to
    /// `disconnected` with [`STARTUP_BUDGET_EXCEEDED`]. Default
    /// [`DEFAULT_STARTUP_BUDGET_MS`].
    pub startup_budget_ms: u64,
    /// Milliseconds a call may wait in the lock table before it is refused `QUEUE_TIMEOUT`.
    /// Default [`DEFAULT_TOOL_QUEUE_MS`].
    pub tool_queue_ms: u64,
    /// Milliseconds `read_file`, `write_file`, `list_dir` and `exec` may run before they are
    /// refused `TOOL_TIMEOUT`. Default [`DEFAULT_TOOL_TIMEOUT_MS`].
    pub tool_timeout_ms: u64,
    /// The backend runtime started detached at construction, or `None` (the default): the
    /// local runtime, already started, so the state is `active` from construction. `retry`
    /// uses [`LocalRuntime`] when `None`.
    pub runtime: Option<Arc<dyn BackendRuntime>>,
}

impl DispatcherConfig {
    /// The default configuration over `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DispatcherConfig {
            root: root.into(),
            exec_allow: DEFAULT_EXEC_ALLOW.iter().map(|s| (*s).to_owned()).collect(),
            exec_timeout_ms: DEFAULT_EXEC_TIMEOUT_MS,
            clock: Arc::new(SystemClock),
            policy: PolicyMode::default(),
            startup_budget_ms: DEFAULT_STARTUP_BUDGET_MS,
            tool_queue_ms: DEFAULT_TOOL_QUEUE_MS,
            tool_timeout_ms: DEFAULT_TOOL_TIMEOUT_MS,
            runtime: None,
        }
    }
}

impl fmt::Debug for DispatcherConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DispatcherConfig")
            .field("root", &self.root)
            .field("exec_allow", &self.exec_allow)
            .field("exec_timeout_ms", &self.exec_timeout_ms)
            .field("now_ms", &self.clock.now_ms())
            .field("policy", &self.policy)
            .field("startup_budget_ms", &self.startup_budget_ms)
            .field("tool_queue_ms", &self.tool_queue_ms)
            .field("tool_timeout_ms", &self.tool_timeout_ms)
            .field("runtime", &self.runtime.as_ref().map(|r| r.kind()))
            .finish()
    }
}

/// MCP tool annotations (hints), serialized with the MCP member names
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`; MCP 2025-03-26
/// and later, `ToolAnnotations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    pub read_only_hint: bool,
    /// The tool may overwrite or delete (meaningful when not read-only).
    pub destructive_hint: bool,
    /// Repeating the call with the same arguments has no further effect.
    pub idempotent_hint: bool,
    /// The tool may reach entities outside the workspace.
    pub open_world_hint: bool,
}

/// The description of one tool, as surfaces publish it (MCP `Tool`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    /// The tool name, `[a-z_]+`.
    pub name: String,
    /// A short human-readable title.
    pub title: String,
    /// What the tool does, its result shape and its refusals.
    pub description: String,
    /// A JSON Schema object: `{"type":"object","properties":{…},"required":[…],
    /// "additionalProperties":false}`; it matches the validation the dispatcher applies.
    pub input_schema: Value,
    /// Behaviour hints.
    pub annotations: ToolAnnotations,
    /// Whether the tool changes the workspace (`write_file`, `exec`); mutating tools are
    /// subject to the policy mode.
    pub mutating: bool,
}

/// Why a tool did not produce a value (internal; becomes an [`OutcomeKind`]).
#[derive(Debug)]
pub(crate) enum Failure {
    Refused(RefusalCode, String),
    ToolError(String),
}

impl Failure {
    pub(crate) fn refused(code: RefusalCode, message: impl Into<String>) -> Self {
        Failure::Refused(code, message.into())
    }

    fn into_outcome(self) -> Outcome {
        match self {
            Failure::Refused(code, message) => Outcome::refused(code, message),
            Failure::ToolError(message) => Outcome::tool_error(message),
        }
    }
}

/// The six tools, in publication order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    ReadFile,
    WriteFile,
    ListDir,
    Exec,
    Status,
    Retry,
}

impl Tool {
    const ALL: [Tool; 6] = [
        Tool::ReadFile,
        Tool::WriteFile,
        Tool::ListDir,
        Tool::Exec,
        Tool::Status,
        Tool::Retry,
    ];

    fn name(self) -> &'static str {
        match self {
            Tool::ReadFile => "read_file",
            Tool::WriteFile => "write_file",
            Tool::ListDir => "list_dir",
            Tool::Exec => "exec",
            Tool::Status => "status",
            Tool::Retry => "retry",
        }
    }

    fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    fn mutating(self) -> bool {
        matches!(self, Tool::WriteFile | Tool::Exec)
    }

    fn fields(self) -> &'static [Field] {
        use args::FieldKind;
        const PATH: Field = Field {
            name: "path",
            kind: FieldKind::String,
            required: true,
            description: "Path relative to the workspace root.",
        };
        match self {
            Tool::ReadFile => &[PATH],
            Tool::WriteFile => &[
                PATH,
                Field {
                    name: "content",
                    kind: FieldKind::String,
                    required: true,
                    description: "Text to write, encoded as UTF-8.",
                },
            ],
            Tool::ListDir => &[Field {
                name: "path",
                kind: FieldKind::String,
                required: false,
                description: "Directory relative to the workspace root; default \".\".",
            }],
            Tool::Exec => &[
                Field {
                    name: "argv",
                    kind: FieldKind::StringArray { min_items: 1 },
                    required: true,
                    description: "Program and arguments; argv[0] must be in the allow-list. No shell is involved.",
                },
                Field {
                    name: "timeout_ms",
                    kind: FieldKind::Integer { minimum: 1 },
                    required: false,
                    description: "Time limit in milliseconds, clamped to the server maximum (also the default).",
                },
            ],
            Tool::Status | Tool::Retry => &[],
        }
    }

    fn descriptor(self) -> ToolDescriptor {
        let (title, description, annotations) = match self {
            Tool::ReadFile => (
                "Read file",
                "Read a UTF-8 text file under the workspace root. Result: {\"content\": string}.",
                ToolAnnotations {
                    read_only_hint: true,
                    destructive_hint: false,
                    idempotent_hint: true,
                    open_world_hint: false,
                },
            ),
            Tool::WriteFile => (
                "Write file",
                "Create or overwrite a file under the workspace root (the parent directory must exist). Result: {\"bytes_written\": integer}.",
                ToolAnnotations {
                    read_only_hint: false,
                    destructive_hint: true,
                    idempotent_hint: true,
                    open_world_hint: false,
                },
            ),
            Tool::ListDir => (
                "List directory",
                "List a directory under the workspace root, sorted by name. Result: {\"entries\": [{\"name\": string, \"kind\": \"file\"|\"dir\"}]}.",
                ToolAnnotations {
                    read_only_hint: true,
                    destructive_hint: false,
                    idempotent_hint: true,
                    open_world_hint: false,
                },
            ),
            Tool::Exec => (
                "Run program",
                "Run an allow-listed program directly (no shell) in the workspace root with a time limit. Result: {\"exit_code\": integer|null, \"stdout\": string, \"stderr\": string}.",
                ToolAnnotations {
                    read_only_hint: false,
                    destructive_hint: true,
                    idempotent_hint: false,
                    open_world_hint: true,
                },
            ),
            Tool::Status => (
                "Backend status",
                "Report the backend lifecycle. Result: {\"label\": \"active\"|\"disconnected\", \"state\": string, \"reason\": string|null, \"since_ms\": integer}.",
                ToolAnnotations {
                    read_only_hint: true,
                    destructive_hint: false,
                    idempotent_hint: true,
                    open_world_hint: false,
                },
            ),
            Tool::Retry => (
                "Retry backend",
                "Reconnect the backend when it is in error or disconnected; refused while stopping. Result: the status object after the retry.",
                ToolAnnotations {
                    read_only_hint: false,
                    destructive_hint: false,
                    idempotent_hint: true,
                    open_world_hint: false,
                },
            ),
        };
        ToolDescriptor {
            name: self.name().to_owned(),
            title: title.to_owned(),
            description: description.to_owned(),
            input_schema: args::input_schema(self.fields()),
            annotations,
            mutating: self.mutating(),
        }
    }
}

/// The lifecycle state shared by the dispatcher and its detached start task.
struct Shared {
    clock: Arc<dyn Clock>,
    snapshot: Mutex<LifecycleSnapshot>,
    locks: Arc<LockTable>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, LifecycleSnapshot> {
        // The snapshot is always left consistent, so a poisoned lock is still usable.
        self.snapshot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, state: LifecycleState, reason: Option<String>) -> LifecycleSnapshot {
        let mut guard = self.lock();
        *guard = LifecycleSnapshot {
            state,
            reason,
            since_ms: self.clock.now_ms(),
        };
        guard.clone()
    }

    /// Moves the lifecycle to `state` only if it is still `connecting` (the attempt this
    /// settles is the current one); returns the snapshot either way. It takes no lock-table
    /// key: leaving `connecting` never changes what a running call was admitted under, so a
    /// settle never waits for calls (it happens when the start ends or the budget fires).
    fn settle(&self, state: LifecycleState, reason: Option<String>) -> LifecycleSnapshot {
        let mut guard = self.lock();
        if guard.state == LifecycleState::Connecting {
            *guard = LifecycleSnapshot {
                state,
                reason,
                since_ms: self.clock.now_ms(),
            };
        }
        guard.clone()
    }

    /// Awaits one start attempt until `deadline`. Settles `active`, `error` with the
    /// runtime's reason, or `overrun` with [`STARTUP_BUDGET_EXCEEDED`] (see
    /// [`Shared::settle`]).
    async fn attempt(
        &self,
        attempt: StartFuture,
        deadline: tokio::time::Instant,
        overrun: LifecycleState,
    ) -> LifecycleSnapshot {
        match tokio::time::timeout_at(deadline, attempt).await {
            Ok(Ok(())) => self.settle(LifecycleState::Active, None),
            Ok(Err(reason)) => self.settle(LifecycleState::Error, Some(reason)),
            Err(_) => self.settle(overrun, Some(STARTUP_BUDGET_EXCEEDED.to_owned())),
        }
    }
}

/// The reference tool dispatcher. Cheap to share behind an `Arc`; `call` may run
/// concurrently from many tasks.
pub struct Dispatcher {
    root: PathBuf,
    exec_allow: Vec<String>,
    exec_timeout_ms: u64,
    policy: PolicyMode,
    startup_budget: Duration,
    tool_queue: Duration,
    tool_timeout: Duration,
    runtime: Arc<dyn BackendRuntime>,
    shared: Arc<Shared>,
    startup: Option<tokio::task::JoinHandle<()>>,
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("root", &self.root)
            .field("exec_allow", &self.exec_allow)
            .field("exec_timeout_ms", &self.exec_timeout_ms)
            .field("policy", &self.policy)
            .field("startup_budget", &self.startup_budget)
            .field("tool_queue", &self.tool_queue)
            .field("tool_timeout", &self.tool_timeout)
            .field("runtime", &self.runtime.kind())
            .field("lifecycle", &self.lifecycle())
            .finish_non_exhaustive()
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        if let Some(task) = self.startup.take() {
            task.abort();
        }
    }
}

impl Dispatcher {
    /// A dispatcher over `config.root`.
    ///
    /// Without a runtime the lifecycle is `active` since `config.clock.now_ms()`. With one it
    /// is `connecting`, and the start runs detached on the current tokio runtime, settling
    /// within `startup_budget_ms` (module documentation). Built outside a tokio runtime with a
    /// backend runtime configured, nothing can start it: the state is `error` with reason
    /// `"NO_ASYNC_RUNTIME"` (`retry` inside a runtime starts it).
    pub fn new(config: DispatcherConfig) -> Self {
        let since_ms = config.clock.now_ms();
        let initial = if config.runtime.is_some() {
            LifecycleState::Connecting
        } else {
            LifecycleState::Active
        };
        let shared = Arc::new(Shared {
            clock: config.clock,
            snapshot: Mutex::new(LifecycleSnapshot {
                state: initial,
                reason: None,
                since_ms,
            }),
            locks: Arc::new(LockTable::new()),
        });
        let startup_budget = Duration::from_millis(config.startup_budget_ms);
        let mut startup = None;
        if let Some(runtime) = &config.runtime {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    let shared = shared.clone();
                    // The budget and the attempt start now, at construction.
                    let deadline = tokio::time::Instant::now() + startup_budget;
                    let attempt = runtime.start();
                    let stop_after = runtime.stop_after();
                    startup = Some(handle.spawn(async move {
                        // Neither the attempt nor its settle waits for calls: status and every
                        // tool go on, and the state settles when the start ends or the budget
                        // fires (`Shared::settle`).
                        let settled = shared
                            .attempt(attempt, deadline, LifecycleState::Disconnected)
                            .await;
                        if settled.state != LifecycleState::Active {
                            return;
                        }
                        // A runtime that shuts down on its own (simulated `stop_after_ms`).
                        if let Some(after) = stop_after {
                            tokio::time::sleep(after).await;
                            let _transition = shared.locks.write_unbounded(LIFECYCLE_KEY).await;
                            if shared.lock().state == LifecycleState::Active {
                                shared.set(
                                    LifecycleState::Stopping,
                                    Some(BACKEND_STOPPING.to_owned()),
                                );
                            }
                        }
                    }));
                }
                Err(_) => {
                    shared.set(LifecycleState::Error, Some("NO_ASYNC_RUNTIME".to_owned()));
                }
            }
        }
        Dispatcher {
            root: config.root,
            exec_allow: config.exec_allow,
            exec_timeout_ms: config.exec_timeout_ms,
            policy: config.policy,
            startup_budget,
            tool_queue: Duration::from_millis(config.tool_queue_ms),
            tool_timeout: Duration::from_millis(config.tool_timeout_ms),
            runtime: config
                .runtime
                .unwrap_or_else(|| Arc::new(LocalRuntime) as Arc<dyn BackendRuntime>),
            shared,
            startup,
        }
    }

    /// The workspace root as configured (not canonicalized).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The policy mode.
    pub fn policy(&self) -> PolicyMode {
        self.policy
    }

    /// The lock table shared by the lifecycle and the tool calls (one instance per
    /// dispatcher; D-96). Embedding programs and tests may hold keys in it.
    pub fn locks(&self) -> &Arc<LockTable> {
        &self.shared.locks
    }

    /// The six tools in a fixed order: `read_file`, `write_file`, `list_dir`, `exec`,
    /// `status`, `retry`.
    pub fn tools(&self) -> Vec<ToolDescriptor> {
        Tool::ALL.into_iter().map(Tool::descriptor).collect()
    }

    /// The current lifecycle snapshot.
    pub fn lifecycle(&self) -> LifecycleSnapshot {
        self.shared.lock().clone()
    }

    /// Moves the lifecycle to `state` with `reason`, stamped with the clock, and returns
    /// the new snapshot. For embedding programs and tests (e.g. `stopping` at shutdown);
    /// peers change it only through `retry`. It takes no lock: a transition in progress
    /// (the startup settle, `retry`) may overwrite it.
    pub fn set_lifecycle(
        &self,
        state: LifecycleState,
        reason: Option<String>,
    ) -> LifecycleSnapshot {
        self.shared.set(state, reason)
    }

    /// Runs one tool call and returns its outcome; never panics on peer input.
    ///
    /// See the module documentation for the tools, the order of checks and the refusals.
    /// Cancel-safe: dropping the future abandons the call (and kills an `exec` child); a
    /// `retry` attempt already begun still settles.
    pub async fn call(&self, call: ToolCall) -> Outcome {
        let Some(tool) = Tool::from_name(&call.name) else {
            return Outcome::protocol_error(INVALID_PARAMS, format!("Unknown tool: {}", call.name));
        };
        let Value::Object(arguments) = call.arguments else {
            return Outcome::protocol_error(
                INVALID_PARAMS,
                format!(
                    "Invalid arguments for tool {}: arguments must be a JSON object",
                    call.name
                ),
            );
        };
        if let Err(message) = args::validate(tool.fields(), &arguments) {
            return Outcome::refused(RefusalCode::InvalidArguments, message);
        }
        let result = match tool {
            Tool::Status => Ok(self.lifecycle().to_json()),
            Tool::Retry => self.retry().await.map(|snapshot| snapshot.to_json()),
            _ => {
                let mut warnings = Vec::new();
                let result = self.file_or_exec(tool, &arguments, &mut warnings).await;
                let mut outcome = match result {
                    Ok(value) => Outcome::ok(value),
                    Err(failure) => failure.into_outcome(),
                };
                outcome.warnings = warnings;
                return outcome;
            }
        };
        match result {
            Ok(value) => Outcome::ok(value),
            Err(failure) => failure.into_outcome(),
        }
    }

    /// `read_file`, `write_file`, `list_dir`, `exec`: locks, policy, then the tool bounded by
    /// the tool time limit.
    async fn file_or_exec(
        &self,
        tool: Tool,
        arguments: &Map<String, Value>,
        warnings: &mut Vec<String>,
    ) -> Result<Value, Failure> {
        let locks = &self.shared.locks;
        let queue = |e: QueueTimeout| {
            Failure::refused(RefusalCode::QueueTimeout, format!("`{}` {e}", tool.name()))
        };
        // The lifecycle key first (shared), then the path: one order, so no deadlock.
        let _lifecycle = if tool.mutating() {
            Some(
                locks
                    .read(LIFECYCLE_KEY, self.tool_queue)
                    .await
                    .map_err(queue)?,
            )
        } else {
            None
        };
        let _path = match tool {
            Tool::ReadFile | Tool::ListDir => {
                let key = path_key(arg_str(arguments, "path").unwrap_or("."));
                Some(locks.read(&key, self.tool_queue).await.map_err(queue)?)
            }
            Tool::WriteFile => {
                let key = path_key(arg_str(arguments, "path").unwrap_or("."));
                Some(locks.write(&key, self.tool_queue).await.map_err(queue)?)
            }
            _ => None,
        };
        if tool.mutating() {
            let state = self.shared.lock().state;
            if state != LifecycleState::Active {
                match self.policy {
                    PolicyMode::Required => {
                        return Err(Failure::refused(
                            RefusalCode::BackendNotActive,
                            format!(
                                "backend state is {state}; policy `required` refuses `{}`",
                                tool.name()
                            ),
                        ));
                    }
                    PolicyMode::Advisory => warnings.push(format!(
                        "BACKEND_NOT_ACTIVE: backend state is {state}; advisory policy allowed `{}`",
                        tool.name()
                    )),
                }
            }
        }
        let run = async {
            match tool {
                Tool::ReadFile => tools::read_file(&self.root, arguments).await,
                Tool::WriteFile => tools::write_file(&self.root, arguments).await,
                Tool::ListDir => tools::list_dir(&self.root, arguments).await,
                _ => {
                    tools::exec(
                        &self.root,
                        &self.exec_allow,
                        self.exec_timeout_ms,
                        arguments,
                        warnings,
                    )
                    .await
                }
            }
        };
        match tokio::time::timeout(self.tool_timeout, run).await {
            Ok(result) => result,
            Err(_) => Err(Failure::refused(
                RefusalCode::ToolTimeout,
                format!(
                    "`{}` ran past its limit of {} ms",
                    tool.name(),
                    self.tool_timeout.as_millis()
                ),
            )),
        }
    }

    /// The retry table (module documentation). The state is read and, from `error` or
    /// `disconnected`, moved to `connecting` in one step under the snapshot's mutex, so of
    /// concurrent retries exactly one starts an attempt and the others answer `connecting` at
    /// once; nothing waits on the lock table (leaving a non-active state never changes what a
    /// running call was admitted under).
    async fn retry(&self) -> Result<LifecycleSnapshot, Failure> {
        {
            let mut guard = self.shared.lock();
            match guard.state {
                LifecycleState::Stopping => {
                    return Err(Failure::refused(
                        RefusalCode::RetryRefused,
                        "backend is stopping; retry is refused",
                    ))
                }
                LifecycleState::Active | LifecycleState::Connecting => return Ok(guard.clone()),
                LifecycleState::Error | LifecycleState::Disconnected => {
                    *guard = LifecycleSnapshot {
                        state: LifecycleState::Connecting,
                        reason: None,
                        since_ms: self.shared.clock.now_ms(),
                    };
                }
            }
        }
        let shared = self.shared.clone();
        let deadline = tokio::time::Instant::now() + self.startup_budget;
        let start = self.runtime.start();
        // Its own task: the transition completes even if this call is dropped.
        let attempt =
            tokio::spawn(
                async move { shared.attempt(start, deadline, LifecycleState::Error).await },
            );
        match attempt.await {
            Ok(snapshot) => Ok(snapshot),
            Err(e) => Err(Failure::ToolError(format!("retry attempt failed: {e}"))),
        }
    }
}

/// Reads argument `name` as a string (after validation).
fn arg_str<'a>(arguments: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}
