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
//! # Lifecycle and retry table
//!
//! The state starts `active` (stamped with the clock at construction). `retry`:
//!
//! | state | effect | result |
//! |---|---|---|
//! | `error`, `disconnected` | → `connecting` → `active` (the local runtime always connects), `reason` cleared | `ok`, the new snapshot |
//! | `active`, `connecting` | none | `ok`, the current snapshot unchanged |
//! | `stopping` | none | `refused` `RETRY_REFUSED` |
//!
//! # Policy mode
//!
//! In [`PolicyMode::Required`], the mutating tools (`write_file`, `exec`) are refused
//! `BACKEND_NOT_ACTIVE` while the state is not `active`; in [`PolicyMode::Advisory`] (the
//! default) they run and the outcome carries a warning starting `"BACKEND_NOT_ACTIVE: "`.
//!
//! # Order of checks
//!
//! 1. unknown tool name → `protocol_error` −32602 `"Unknown tool: <name>"`;
//! 2. arguments not a JSON object → `protocol_error` −32602;
//! 3. argument validation → `refused` `INVALID_ARGUMENTS` (names the field);
//! 4. policy → `refused` `BACKEND_NOT_ACTIVE` or a warning;
//! 5. the tool itself.

mod args;
mod clock;
mod lifecycle;
mod outcome;
mod paths;
mod refusal;
mod tools;

#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use serde_json::{Map, Value};

pub use clock::{Clock, FixedClock, ManualClock, SystemClock};
pub use lifecycle::{LifecycleSnapshot, LifecycleState};
pub use outcome::{Outcome, OutcomeKind, OutcomeParseError, INVALID_PARAMS};
pub use refusal::{catalogue, RefusalCode, UnknownRefusalCode};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
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

/// The reference tool dispatcher. Cheap to share behind an `Arc`; `call` may run
/// concurrently from many tasks.
pub struct Dispatcher {
    root: PathBuf,
    exec_allow: Vec<String>,
    exec_timeout_ms: u64,
    clock: Arc<dyn Clock>,
    policy: PolicyMode,
    lifecycle: Mutex<LifecycleSnapshot>,
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatcher")
            .field("root", &self.root)
            .field("exec_allow", &self.exec_allow)
            .field("exec_timeout_ms", &self.exec_timeout_ms)
            .field("policy", &self.policy)
            .field("lifecycle", &self.lifecycle())
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A dispatcher over `config.root`, lifecycle `active` since `config.clock.now_ms()`.
    pub fn new(config: DispatcherConfig) -> Self {
        let since_ms = config.clock.now_ms();
        Dispatcher {
            root: config.root,
            exec_allow: config.exec_allow,
            exec_timeout_ms: config.exec_timeout_ms,
            clock: config.clock,
            policy: config.policy,
            lifecycle: Mutex::new(LifecycleSnapshot {
                state: LifecycleState::Active,
                reason: None,
                since_ms,
            }),
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

    /// The six tools in a fixed order: `read_file`, `write_file`, `list_dir`, `exec`,
    /// `status`, `retry`.
    pub fn tools(&self) -> Vec<ToolDescriptor> {
        Tool::ALL.into_iter().map(Tool::descriptor).collect()
    }

    /// The current lifecycle snapshot.
    pub fn lifecycle(&self) -> LifecycleSnapshot {
        self.lock_lifecycle().clone()
    }

    /// Moves the lifecycle to `state` with `reason`, stamped with the clock, and returns
    /// the new snapshot. For embedding programs and tests; peers change it only through
    /// `retry`.
    pub fn set_lifecycle(
        &self,
        state: LifecycleState,
        reason: Option<String>,
    ) -> LifecycleSnapshot {
        let mut guard = self.lock_lifecycle();
        *guard = LifecycleSnapshot {
            state,
            reason,
            since_ms: self.clock.now_ms(),
        };
        guard.clone()
    }

    fn lock_lifecycle(&self) -> MutexGuard<'_, LifecycleSnapshot> {
        // The snapshot is always left consistent, so a poisoned lock is still usable.
        self.lifecycle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs one tool call and returns its outcome; never panics on peer input.
    ///
    /// See the module documentation for the tools, the order of checks and the refusals.
    /// Cancel-safe: dropping the future abandons the call (and kills an `exec` child).
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
        let mut warnings = Vec::new();
        if tool.mutating() {
            let state = self.lock_lifecycle().state;
            if state != LifecycleState::Active {
                match self.policy {
                    PolicyMode::Required => {
                        return Outcome::refused(
                            RefusalCode::BackendNotActive,
                            format!(
                                "backend state is {state}; policy `required` refuses `{}`",
                                tool.name()
                            ),
                        );
                    }
                    PolicyMode::Advisory => warnings.push(format!(
                        "BACKEND_NOT_ACTIVE: backend state is {state}; advisory policy allowed `{}`",
                        tool.name()
                    )),
                }
            }
        }
        let result = match tool {
            Tool::ReadFile => tools::read_file(&self.root, &arguments).await,
            Tool::WriteFile => tools::write_file(&self.root, &arguments).await,
            Tool::ListDir => tools::list_dir(&self.root, &arguments).await,
            Tool::Exec => {
                tools::exec(
                    &self.root,
                    &self.exec_allow,
                    self.exec_timeout_ms,
                    &arguments,
                    &mut warnings,
                )
                .await
            }
            Tool::Status => Ok(self.lifecycle().to_json()),
            Tool::Retry => self.retry().map(|snapshot| snapshot.to_json()),
        };
        let mut outcome = match result {
            Ok(value) => Outcome::ok(value),
            Err(failure) => failure.into_outcome(),
        };
        outcome.warnings = warnings;
        outcome
    }

    fn retry(&self) -> Result<LifecycleSnapshot, Failure> {
        let mut guard = self.lock_lifecycle();
        match guard.state {
            LifecycleState::Stopping => Err(Failure::refused(
                RefusalCode::RetryRefused,
                "backend is stopping; retry is refused",
            )),
            LifecycleState::Active | LifecycleState::Connecting => Ok(guard.clone()),
            LifecycleState::Error | LifecycleState::Disconnected => {
                // error|disconnected → connecting → active: the local runtime has nothing
                // to connect to, so the attempt succeeds at once.
                *guard = LifecycleSnapshot {
                    state: LifecycleState::Connecting,
                    reason: None,
                    since_ms: self.clock.now_ms(),
                };
                *guard = LifecycleSnapshot {
                    state: LifecycleState::Active,
                    reason: None,
                    since_ms: self.clock.now_ms(),
                };
                Ok(guard.clone())
            }
        }
    }
}

/// Reads argument `name` as a string (after validation).
fn arg_str<'a>(arguments: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}
