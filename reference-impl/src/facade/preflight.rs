//! Pre-flight argument validation (seed rules 27–29).
//!
//! Arguments are validated against the tool's `inputSchema` with the `jsonschema` crate
//! before the source is called. The dialect follows the schema's `$schema` (draft 4, 6, 7,
//! 2019-09, 2020-12); without one it is draft 2020-12 (MCP 2025-11-25 made 2020-12 the
//! default dialect). A schema whose dialect cannot be compiled is refused. The crate is
//! built without its network and file features, so a remote `$ref` is never fetched: it
//! fails to compile and the call is refused.
//!
//! A refusal names the capability and **every** failing path, as JSON Pointers into the
//! arguments, each with the schema keyword that failed. It never quotes argument values,
//! so a refusal cannot echo a secret the caller put in an argument.

use serde_json::{Map, Value};

/// Why a call was refused before dispatch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreflightError {
    /// `arguments` was neither an object nor null/omitted (rule 27).
    #[error("invalid arguments for capability `{tool}`: `arguments` must be an object")]
    NotAnObject {
        /// The published name of the capability.
        tool: String,
    },
    /// The arguments break the schema; `failures` lists `"<pointer>: <keyword>"` for
    /// every failing path (rule 29).
    #[error("invalid arguments for capability `{tool}`: {}", failures.join("; "))]
    Invalid {
        /// The published name of the capability.
        tool: String,
        /// One entry per failure, `"/path: fails `keyword`"` (`/` is the root).
        failures: Vec<String>,
    },
    /// The tool's own schema could not be compiled (unknown dialect, remote `$ref`, …).
    #[error("capability `{tool}` has an input schema that cannot be compiled: {reason}")]
    BadSchema {
        /// The published name of the capability.
        tool: String,
        /// What the compiler reported.
        reason: String,
    },
}

/// The argument object of a call (rule 27): an object as is, null or absent as `{}`.
///
/// # Errors
/// [`PreflightError::NotAnObject`] for any other type.
pub fn arguments_object(tool: &str, arguments: Option<&Value>) -> Result<Value, PreflightError> {
    match arguments {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(v @ Value::Object(_)) => Ok(v.clone()),
        Some(_) => Err(PreflightError::NotAnObject {
            tool: tool.to_owned(),
        }),
    }
}

/// Validates `args` against `schema` for capability `tool` (rules 28, 29). An empty
/// schema (`{}` or `true`) accepts anything.
///
/// # Errors
/// [`PreflightError::Invalid`] with every failing path, or [`PreflightError::BadSchema`].
pub fn validate(tool: &str, schema: &Value, args: &Value) -> Result<(), PreflightError> {
    let validator = jsonschema::validator_for(schema).map_err(|e| PreflightError::BadSchema {
        tool: tool.to_owned(),
        reason: e.to_string(),
    })?;
    let mut failures: Vec<String> = validator
        .iter_errors(args)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            let schema_path = e.schema_path().to_string();
            let keyword = schema_path
                .rsplit('/')
                .next()
                .unwrap_or("schema")
                .to_owned();
            format!("{path}: fails `{keyword}`")
        })
        .collect();
    failures.dedup();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(PreflightError::Invalid {
            tool: tool.to_owned(),
            failures,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_string_for_an_integer_is_refused_naming_the_capability_and_path() {
        let schema = json!({"type":"object","properties":{"x":{"type":"integer"}}});
        let err = validate("echo_channel", &schema, &json!({"x": "seven"})).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`echo_channel`"), "{text}");
        assert!(text.contains("/x: fails `type`"), "{text}");
        assert!(!text.contains("seven"), "values are never quoted: {text}");
    }

    #[test]
    fn every_failing_path_is_reported() {
        let schema = json!({
            "type":"object",
            "properties":{"a":{"type":"integer"},"b":{"type":"string"}},
            "required":["c"],
        });
        let err = validate("t", &schema, &json!({"a": "x", "b": 1})).unwrap_err();
        let PreflightError::Invalid { failures, .. } = err else {
            panic!("{err:?}")
        };
        assert!(
            failures.iter().any(|f| f.starts_with("/a:")),
            "{failures:?}"
        );
        assert!(
            failures.iter().any(|f| f.starts_with("/b:")),
            "{failures:?}"
        );
        assert!(
            failures.iter().any(|f| f.contains("required")),
            "{failures:?}"
        );
    }

    #[test]
    fn empty_schemas_accept_anything_and_the_dialect_follows_schema() {
        validate("t", &json!({}), &json!({"anything": [1, 2]})).unwrap();
        validate("t", &json!(true), &json!({"anything": [1, 2]})).unwrap();
        // Draft 4 `exclusiveMaximum` is a boolean; under 2020-12 it would be a number.
        let d4 = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": true}},
        });
        assert!(validate("t", &d4, &json!({"n": 5})).is_err());
        validate("t", &d4, &json!({"n": 4})).unwrap();
        // 2020-12 by default: `prefixItems` is understood.
        let d2020 = json!({"type":"object","properties":{"p":{"prefixItems":[{"type":"string"}]}}});
        assert!(validate("t", &d2020, &json!({"p": [1]})).is_err());
    }

    #[test]
    fn unknown_dialects_and_remote_refs_are_refused_not_fetched() {
        let unknown = json!({"$schema": "https://example.invalid/my-dialect", "type": "object"});
        assert!(matches!(
            validate("t", &unknown, &json!({})),
            Err(PreflightError::BadSchema { .. })
        ));
        let remote = json!({"$ref": "http://127.0.0.1:9/schema.json"});
        assert!(matches!(
            validate("t", &remote, &json!({})),
            Err(PreflightError::BadSchema { .. })
        ));
    }

    #[test]
    fn arguments_must_be_an_object_or_null() {
        assert_eq!(arguments_object("t", None).unwrap(), json!({}));
        assert_eq!(
            arguments_object("t", Some(&Value::Null)).unwrap(),
            json!({})
        );
        assert!(arguments_object("t", Some(&json!([1]))).is_err());
        assert!(arguments_object("t", Some(&json!("s"))).is_err());
    }
}
