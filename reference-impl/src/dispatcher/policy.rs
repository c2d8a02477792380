//! The policy file: the policy mode, the lifecycle's time bounds and the backend runtime
//! (seed `001`: `startupBudgetMs` and `toolQueueMs` are policy keys, D-23/D-28/D-91;
//! `loadPolicyFile` reads a closed schema).
//!
//! TOML with closed keys; every key is optional and defaults as [`DispatcherConfig::new`]:
//!
//! ```toml
//! mode = "required"          # "required" | "advisory" (default "advisory")
//! startup_budget_ms = 10000  # integer >= 1
//! tool_queue_ms = 2000       # integer >= 1
//! tool_timeout_ms = 30000    # integer >= 1
//!
//! [runtime]
//! kind = "simulated"         # "local" (default) | "simulated"
//! start_delay_ms = 30000     # simulated only; integer >= 0, default 0
//! fail_attempts = 0          # simulated only; the first N attempts fail, default 0
//! fail_reason = "BACKEND_START_FAILED"  # simulated only; the failed attempts' reason
//! stop_after_ms = 0          # simulated only; begin stopping this long after the first
//!                            # successful start (default: never)
//! ```
//!
//! Without a `[runtime]` table the backend is the local runtime already started, so the
//! dispatcher starts `active` exactly as with no policy file. With one, the backend starts
//! detached under the startup budget.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use super::runtime::{BackendRuntime, LocalRuntime, SimulatedRuntime, DEFAULT_FAIL_REASON};
use super::{DispatcherConfig, PolicyMode};

/// A policy file error: `file:line:col: key: message`, or `file: message` when the file could
/// not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct PolicyError {
    /// The file as given.
    pub file: String,
    /// 1-based line; 0 when the file could not be read.
    pub line: usize,
    /// 1-based column; 0 when the file could not be read.
    pub col: usize,
    /// The dotted key at fault (`mode`, `runtime.kind`), or empty.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl PolicyError {
    fn render(&self) -> String {
        match (self.line, self.key.is_empty()) {
            (0, _) => format!("{}: {}", self.file, self.message),
            (_, true) => format!("{}:{}:{}: {}", self.file, self.line, self.col, self.message),
            (_, false) => format!(
                "{}:{}:{}: {}: {}",
                self.file, self.line, self.col, self.key, self.message
            ),
        }
    }
}

/// Which backend runtime the policy selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuntimeKind {
    /// [`LocalRuntime`]: every attempt succeeds at once.
    #[default]
    Local,
    /// [`SimulatedRuntime`]: a configured delay and failures.
    Simulated,
}

/// The `[runtime]` table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimePolicy {
    /// The runtime.
    #[serde(default)]
    pub kind: RuntimeKind,
    /// Simulated: milliseconds each start attempt takes.
    #[serde(default)]
    pub start_delay_ms: u64,
    /// Simulated: how many attempts fail before one succeeds.
    #[serde(default)]
    pub fail_attempts: u32,
    /// Simulated: the reason of a failed attempt; default `BACKEND_START_FAILED`.
    #[serde(default)]
    pub fail_reason: Option<String>,
    /// Simulated: milliseconds after the first successful start until the backend begins
    /// stopping on its own; `None` for never.
    #[serde(default)]
    pub stop_after_ms: Option<u64>,
}

impl RuntimePolicy {
    /// The runtime this table describes.
    pub fn build(&self) -> Arc<dyn BackendRuntime> {
        match self.kind {
            RuntimeKind::Local => Arc::new(LocalRuntime),
            RuntimeKind::Simulated => {
                let runtime = SimulatedRuntime::new(
                    self.start_delay_ms,
                    self.fail_attempts,
                    self.fail_reason
                        .clone()
                        .unwrap_or_else(|| DEFAULT_FAIL_REASON.to_owned()),
                );
                Arc::new(match self.stop_after_ms {
                    Some(ms) => runtime.stopping_after(ms),
                    None => runtime,
                })
            }
        }
    }
}

/// A parsed policy file; absent keys are `None` and leave the configuration's value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// `mode`.
    pub mode: Option<PolicyMode>,
    /// `startup_budget_ms`.
    pub startup_budget_ms: Option<u64>,
    /// `tool_queue_ms`.
    pub tool_queue_ms: Option<u64>,
    /// `tool_timeout_ms`.
    pub tool_timeout_ms: Option<u64>,
    /// `[runtime]`.
    pub runtime: Option<RuntimePolicy>,
}

impl Policy {
    /// Parses policy text; `file` names it in errors.
    ///
    /// # Errors
    /// [`PolicyError`] for invalid TOML, an unknown key, a wrong type or value, or a bound of
    /// 0 milliseconds, naming the line, column and key.
    pub fn parse(text: &str, file: &str) -> Result<Policy, PolicyError> {
        let policy: Policy = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            located(text, file, offset, e.message().to_owned())
        })?;
        for (key, value) in [
            ("startup_budget_ms", policy.startup_budget_ms),
            ("tool_queue_ms", policy.tool_queue_ms),
            ("tool_timeout_ms", policy.tool_timeout_ms),
        ] {
            if value == Some(0) {
                let offset = key_offset(text, key).unwrap_or(0);
                let mut err = located(text, file, offset, "must be at least 1".to_owned());
                err.key = key.to_owned();
                return Err(err);
            }
        }
        Ok(policy)
    }

    /// Reads and parses a policy file.
    ///
    /// # Errors
    /// [`PolicyError`] with line 0 when the file cannot be read (or is not UTF-8); otherwise
    /// as [`Policy::parse`].
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| PolicyError {
            file: file.clone(),
            line: 0,
            col: 0,
            key: String::new(),
            message: format!("failed to read the policy file: {e}"),
        })?;
        Policy::parse(&text, &file)
    }

    /// Applies the policy to `config`: each present key replaces the configuration's value.
    pub fn apply(&self, config: &mut DispatcherConfig) {
        if let Some(mode) = self.mode {
            config.policy = mode;
        }
        if let Some(v) = self.startup_budget_ms {
            config.startup_budget_ms = v;
        }
        if let Some(v) = self.tool_queue_ms {
            config.tool_queue_ms = v;
        }
        if let Some(v) = self.tool_timeout_ms {
            config.tool_timeout_ms = v;
        }
        if let Some(r) = &self.runtime {
            config.runtime = Some(r.build());
        }
    }
}

/// An error at byte `offset` of `text`, with the key of that line (prefixed by its table).
fn located(text: &str, file: &str, offset: usize, message: String) -> PolicyError {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    let line_text = text
        .get(line_start..)
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("");
    let key = match line_text.split_once('=') {
        Some((k, _)) if !line_text.trim_start().starts_with('[') => {
            let k = k.trim().trim_matches('"');
            match table_of(before) {
                Some(t) => format!("{t}.{k}"),
                None => k.to_owned(),
            }
        }
        _ => table_header(line_text)
            .or_else(|| table_of(text.get(..line_start).unwrap_or("")))
            .unwrap_or_default(),
    };
    PolicyError {
        file: file.to_owned(),
        line,
        col,
        key,
        message,
    }
}

/// The table header (`[name]`) of a line, if it is one.
fn table_header(line: &str) -> Option<String> {
    let t = line.trim();
    let inner = t.strip_prefix('[')?.split(']').next()?;
    Some(inner.trim().to_owned())
}

/// The last table header before the end of `before`.
fn table_of(before: &str) -> Option<String> {
    before.lines().rev().find_map(table_header)
}

/// The byte offset of the first top-level line assigning `key`.
fn key_offset(text: &str, key: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if table_header(line).is_some() {
            return None;
        }
        if let Some((k, _)) = line.split_once('=') {
            if k.trim() == key {
                return Some(offset + (line.len() - line.trim_start().len()));
            }
        }
        offset += line.len();
    }
    None
}
