//! The closed refusal catalogue.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A stable refusal code: why the dispatcher declined a well-formed tool call.
///
/// The catalogue is closed: every refusal the reference emits carries one of these codes,
/// serialized as its SCREAMING_SNAKE_CASE string (see [`RefusalCode::as_str`]). The codes
/// are part of the outcome model (`DESIGN.md`, "The outcome model") and are compared
/// verbatim across surfaces, so renaming one is a breaking change.
///
/// [`catalogue`] lists every code with a one-line description, for generated docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RefusalCode {
    /// `INVALID_ARGUMENTS`: an argument is missing, has the wrong JSON type or value, or
    /// an unknown argument was supplied. The message names the field.
    InvalidArguments,
    /// `PATH_OUTSIDE_ROOT`: the path is absolute, climbs above the workspace root with
    /// `..`, or resolves (through symbolic links) to a location outside the root.
    PathOutsideRoot,
    /// `NOT_FOUND`: the path (or one of its parent directories), or the program named by
    /// `argv[0]`, does not exist.
    NotFound,
    /// `NOT_A_DIRECTORY`: a directory was required (`list_dir`, or an intermediate path
    /// component) but the path names something else.
    NotADirectory,
    /// `IS_A_DIRECTORY`: a file was required (`read_file`, `write_file`) but the path
    /// names a directory.
    IsADirectory,
    /// `EXEC_NOT_ALLOWED`: `argv[0]` of an `exec` call is not in the exec allow-list.
    ExecNotAllowed,
    /// `TOOL_TIMEOUT`: the tool ran past its time limit (`tool_timeout_ms`, or the `exec`
    /// limit) and was stopped (`exec`: the child was killed).
    ToolTimeout,
    /// `BACKEND_NOT_ACTIVE`: the policy mode is `required`, the tool is mutating, and the
    /// backend lifecycle state is not `active`.
    BackendNotActive,
    /// `RETRY_REFUSED`: `retry` was called while the backend is `stopping`.
    RetryRefused,
    /// `QUEUE_TIMEOUT`: the call waited longer than `tool_queue_ms` for its turn in the lock
    /// table (a lifecycle transition or another call on the same path held it; seed `001`,
    /// D-91 and D-96).
    QueueTimeout,
}

impl RefusalCode {
    /// Every code, in catalogue order.
    pub const ALL: [RefusalCode; 10] = [
        RefusalCode::InvalidArguments,
        RefusalCode::PathOutsideRoot,
        RefusalCode::NotFound,
        RefusalCode::NotADirectory,
        RefusalCode::IsADirectory,
        RefusalCode::ExecNotAllowed,
        RefusalCode::ToolTimeout,
        RefusalCode::BackendNotActive,
        RefusalCode::RetryRefused,
        RefusalCode::QueueTimeout,
    ];

    /// The stable wire string, e.g. `"NOT_FOUND"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::InvalidArguments => "INVALID_ARGUMENTS",
            RefusalCode::PathOutsideRoot => "PATH_OUTSIDE_ROOT",
            RefusalCode::NotFound => "NOT_FOUND",
            RefusalCode::NotADirectory => "NOT_A_DIRECTORY",
            RefusalCode::IsADirectory => "IS_A_DIRECTORY",
            RefusalCode::ExecNotAllowed => "EXEC_NOT_ALLOWED",
            RefusalCode::ToolTimeout => "TOOL_TIMEOUT",
            RefusalCode::BackendNotActive => "BACKEND_NOT_ACTIVE",
            RefusalCode::RetryRefused => "RETRY_REFUSED",
            RefusalCode::QueueTimeout => "QUEUE_TIMEOUT",
        }
    }

    /// The one-line description used in generated documentation (the same text as in
    /// [`catalogue`]).
    pub fn description(self) -> &'static str {
        CATALOGUE
            .iter()
            .find(|(code, _)| *code == self)
            .map_or("", |(_, text)| *text)
    }
}

impl fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error returned by [`RefusalCode::from_str`] for a string outside the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown refusal code `{0}`")]
pub struct UnknownRefusalCode(pub String);

impl FromStr for RefusalCode {
    type Err = UnknownRefusalCode;

    /// Parses the exact wire string (case-sensitive), e.g. `"PATH_OUTSIDE_ROOT"`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RefusalCode::ALL
            .iter()
            .copied()
            .find(|code| code.as_str() == s)
            .ok_or_else(|| UnknownRefusalCode(s.to_owned()))
    }
}

const CATALOGUE: [(RefusalCode, &str); 10] = [
    (
        RefusalCode::InvalidArguments,
        "An argument is missing, has the wrong type or value, or is not declared by the tool's inputSchema; the message names the field.",
    ),
    (
        RefusalCode::PathOutsideRoot,
        "The path is absolute, climbs above the workspace root with `..`, or resolves through a symbolic link to a location outside the root.",
    ),
    (
        RefusalCode::NotFound,
        "The path, one of its parent directories, or the program named by argv[0] does not exist.",
    ),
    (
        RefusalCode::NotADirectory,
        "A directory was required (list_dir, or an intermediate path component) but the path names something else.",
    ),
    (
        RefusalCode::IsADirectory,
        "A file was required (read_file, write_file) but the path names a directory.",
    ),
    (
        RefusalCode::ExecNotAllowed,
        "argv[0] of an exec call is not in the exec allow-list.",
    ),
    (
        RefusalCode::ToolTimeout,
        "The tool ran past its time limit and was stopped; for exec the child process was killed.",
    ),
    (
        RefusalCode::BackendNotActive,
        "Policy mode is `required`, the tool is mutating (write_file, exec) and the backend lifecycle state is not `active`.",
    ),
    (
        RefusalCode::RetryRefused,
        "retry was called while the backend is `stopping`.",
    ),
    (
        RefusalCode::QueueTimeout,
        "The call waited longer than tool_queue_ms for its turn in the lock table (a lifecycle transition or another call on the same path held it).",
    ),
];

/// The whole refusal catalogue as `(code, description)` pairs, in a stable order, so
/// documentation (`docs/reference.md`, the check catalogue) can be generated from it.
pub fn catalogue() -> &'static [(RefusalCode, &'static str)] {
    &CATALOGUE
}
