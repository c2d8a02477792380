//! The backend lifecycle reported by `status` and driven by `retry`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A backend lifecycle state.
///
/// The reference's local runtime starts `active`. `retry` follows a by-state table (see
/// [`crate::dispatcher`]); other transitions are made by the embedding program through
/// [`crate::dispatcher::Dispatcher::set_lifecycle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LifecycleState {
    /// A connection attempt is in progress.
    Connecting,
    /// The backend is usable.
    Active,
    /// The backend went away (cleanly or not yet reconnected).
    Disconnected,
    /// The last attempt failed; `reason` says why.
    Error,
    /// The backend is shutting down; `retry` is refused.
    Stopping,
}

impl LifecycleState {
    /// The wire string: `"connecting"`, `"active"`, `"disconnected"`, `"error"` or
    /// `"stopping"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleState::Connecting => "connecting",
            LifecycleState::Active => "active",
            LifecycleState::Disconnected => "disconnected",
            LifecycleState::Error => "error",
            LifecycleState::Stopping => "stopping",
        }
    }

    /// One of exactly two display labels: `"active"` for [`LifecycleState::Active`],
    /// `"disconnected"` for every other state.
    pub fn label(self) -> &'static str {
        match self {
            LifecycleState::Active => "active",
            _ => "disconnected",
        }
    }
}

impl fmt::Display for LifecycleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A point-in-time view of the lifecycle, the `ok` value of `status` and `retry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleSnapshot {
    /// The current state.
    pub state: LifecycleState,
    /// A short machine-readable reason for the state (typically a code such as
    /// `"BACKEND_NOT_ACTIVE"`), or `None`.
    pub reason: Option<String>,
    /// When the state was entered, in milliseconds since the epoch, read from the
    /// dispatcher's [`crate::dispatcher::Clock`].
    pub since_ms: u64,
}

impl LifecycleSnapshot {
    /// `{"label":"active"|"disconnected","state":<state>,"reason":null|<string>,"since_ms":<u64>}`.
    pub fn to_json(&self) -> Value {
        json!({
            "label": self.state.label(),
            "state": self.state.as_str(),
            "reason": self.reason,
            "since_ms": self.since_ms,
        })
    }
}
