//! The outcome of one tool call (`DESIGN.md`, "The outcome model").

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::refusal::{RefusalCode, UnknownRefusalCode};

/// JSON-RPC "Invalid params" (`-32602`), the code the dispatcher uses for an unknown tool
/// name or non-object arguments (MCP 2025-11-25 `server/tools`, "Error Handling").
pub const INVALID_PARAMS: i64 = -32602;

/// What happened to one tool call, independent of the surface that carried it.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeKind {
    /// The tool ran and produced `value` (shape documented per tool in
    /// [`crate::dispatcher`]).
    Ok {
        /// The tool's result.
        value: Value,
    },
    /// The dispatcher declined the call for a catalogued reason.
    Refused {
        /// The stable catalogue code.
        code: RefusalCode,
        /// Human-readable detail; never contains the absolute workspace root.
        message: String,
    },
    /// The tool was attempted and failed for a reason outside the catalogue (an I/O error,
    /// a file that is not UTF-8, …).
    ToolError {
        /// Human-readable detail.
        message: String,
    },
    /// The call itself was malformed at the protocol level (unknown tool, arguments not an
    /// object); surfaces map it to a JSON-RPC error with this `code`.
    ProtocolError {
        /// A JSON-RPC error code, e.g. [`INVALID_PARAMS`].
        code: i64,
        /// The JSON-RPC error message, e.g. `"Unknown tool: nope"`.
        message: String,
    },
}

/// The normalized result of one tool call: a kind plus advisory warnings.
///
/// Serialized (by [`Outcome::to_json`] and by `serde`) as one flat object:
///
/// ```json
/// {"outcome":"ok","value":{"content":"hi"},"warnings":[]}
/// {"outcome":"refused","code":"NOT_FOUND","message":"…","warnings":[]}
/// {"outcome":"tool_error","message":"…","warnings":[]}
/// {"outcome":"protocol_error","code":-32602,"message":"…","warnings":[]}
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// What happened.
    pub kind: OutcomeKind,
    /// Advisory notes that did not change the result, e.g. a mutating call allowed in
    /// `advisory` policy mode while the backend is not active. Each starts with a
    /// catalogue code when one applies (`"BACKEND_NOT_ACTIVE: …"`).
    pub warnings: Vec<String>,
}

/// Error from [`Outcome::from_json`]: the value is not an outcome object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutcomeParseError {
    /// The value is not a JSON object.
    #[error("failed to read outcome: not a JSON object")]
    NotAnObject,
    /// A member is missing or has the wrong type.
    #[error("failed to read outcome: member `{0}` is missing or has the wrong type")]
    BadMember(&'static str),
    /// `outcome` is not one of `ok`, `refused`, `tool_error`, `protocol_error`.
    #[error("failed to read outcome: unknown outcome `{0}`")]
    UnknownOutcome(String),
    /// `code` of a refusal is not in the catalogue.
    #[error("failed to read outcome: {0}")]
    UnknownCode(#[from] UnknownRefusalCode),
}

impl Outcome {
    /// An `ok` outcome without warnings.
    pub fn ok(value: Value) -> Self {
        Self::from_kind(OutcomeKind::Ok { value })
    }

    /// A `refused` outcome without warnings.
    pub fn refused(code: RefusalCode, message: impl Into<String>) -> Self {
        Self::from_kind(OutcomeKind::Refused {
            code,
            message: message.into(),
        })
    }

    /// A `tool_error` outcome without warnings.
    pub fn tool_error(message: impl Into<String>) -> Self {
        Self::from_kind(OutcomeKind::ToolError {
            message: message.into(),
        })
    }

    /// A `protocol_error` outcome without warnings.
    pub fn protocol_error(code: i64, message: impl Into<String>) -> Self {
        Self::from_kind(OutcomeKind::ProtocolError {
            code,
            message: message.into(),
        })
    }

    fn from_kind(kind: OutcomeKind) -> Self {
        Outcome {
            kind,
            warnings: Vec::new(),
        }
    }

    /// The `outcome` discriminator: `"ok"`, `"refused"`, `"tool_error"` or
    /// `"protocol_error"`.
    pub fn label(&self) -> &'static str {
        match self.kind {
            OutcomeKind::Ok { .. } => "ok",
            OutcomeKind::Refused { .. } => "refused",
            OutcomeKind::ToolError { .. } => "tool_error",
            OutcomeKind::ProtocolError { .. } => "protocol_error",
        }
    }

    /// Whether the kind is `ok`.
    pub fn is_ok(&self) -> bool {
        matches!(self.kind, OutcomeKind::Ok { .. })
    }

    /// The flat JSON object documented on [`Outcome`]; members in the order `outcome`,
    /// then the kind's members, then `warnings`.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("outcome".into(), Value::from(self.label()));
        match &self.kind {
            OutcomeKind::Ok { value } => {
                map.insert("value".into(), value.clone());
            }
            OutcomeKind::Refused { code, message } => {
                map.insert("code".into(), Value::from(code.as_str()));
                map.insert("message".into(), Value::from(message.as_str()));
            }
            OutcomeKind::ToolError { message } => {
                map.insert("message".into(), Value::from(message.as_str()));
            }
            OutcomeKind::ProtocolError { code, message } => {
                map.insert("code".into(), Value::from(*code));
                map.insert("message".into(), Value::from(message.as_str()));
            }
        }
        map.insert(
            "warnings".into(),
            Value::Array(
                self.warnings
                    .iter()
                    .map(|w| Value::from(w.as_str()))
                    .collect(),
            ),
        );
        Value::Object(map)
    }

    /// Reads the flat object produced by [`Outcome::to_json`]. A missing `warnings`
    /// member reads as no warnings.
    ///
    /// # Errors
    /// [`OutcomeParseError`] when the value is not an object of that shape.
    pub fn from_json(value: &Value) -> Result<Self, OutcomeParseError> {
        let obj = value.as_object().ok_or(OutcomeParseError::NotAnObject)?;
        let text = |key: &'static str| {
            obj.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or(OutcomeParseError::BadMember(key))
        };
        let label = text("outcome")?;
        let kind = match label.as_str() {
            "ok" => OutcomeKind::Ok {
                value: obj
                    .get("value")
                    .cloned()
                    .ok_or(OutcomeParseError::BadMember("value"))?,
            },
            "refused" => OutcomeKind::Refused {
                code: text("code")?.parse()?,
                message: text("message")?,
            },
            "tool_error" => OutcomeKind::ToolError {
                message: text("message")?,
            },
            "protocol_error" => OutcomeKind::ProtocolError {
                code: obj
                    .get("code")
                    .and_then(Value::as_i64)
                    .ok_or(OutcomeParseError::BadMember("code"))?,
                message: text("message")?,
            },
            _ => return Err(OutcomeParseError::UnknownOutcome(label)),
        };
        let warnings = match obj.get("warnings") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|w| {
                    w.as_str()
                        .map(str::to_owned)
                        .ok_or(OutcomeParseError::BadMember("warnings"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(OutcomeParseError::BadMember("warnings")),
        };
        Ok(Outcome { kind, warnings })
    }
}

impl Serialize for Outcome {
    /// Serializes exactly as [`Outcome::to_json`].
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}
