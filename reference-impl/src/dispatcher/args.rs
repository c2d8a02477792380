//! Argument declarations: one table per tool drives both the published `inputSchema` and
//! the validation the dispatcher applies, so the two cannot drift apart.

use serde_json::{json, Map, Value};

/// The JSON type a declared argument accepts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FieldKind {
    /// A JSON string.
    String,
    /// A JSON integer (a number with no fractional part, as JSON Schema 2020-12 defines
    /// `integer`) that is at least `minimum`.
    Integer { minimum: u64 },
    /// A JSON array of strings with at least `min_items` items.
    StringArray { min_items: usize },
}

/// One declared argument.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) kind: FieldKind,
    pub(crate) required: bool,
    pub(crate) description: &'static str,
}

/// The `inputSchema` for a field table: `{"type":"object","properties":{…},
/// "required":[…],"additionalProperties":false}`.
pub(crate) fn input_schema(fields: &[Field]) -> Value {
    let mut properties = Map::new();
    for field in fields {
        let schema = match field.kind {
            FieldKind::String => json!({"type": "string", "description": field.description}),
            FieldKind::Integer { minimum } => json!({
                "type": "integer",
                "minimum": minimum,
                "description": field.description,
            }),
            FieldKind::StringArray { min_items } => json!({
                "type": "array",
                "items": {"type": "string"},
                "minItems": min_items,
                "description": field.description,
            }),
        };
        properties.insert(field.name.to_owned(), schema);
    }
    let required: Vec<Value> = fields
        .iter()
        .filter(|f| f.required)
        .map(|f| Value::from(f.name))
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Checks `args` against `fields`: declared fields first (in declaration order: missing
/// required, then type), then undeclared members (in the order received).
///
/// Returns the message for the first problem; it always names the field in backticks.
pub(crate) fn validate(fields: &[Field], args: &Map<String, Value>) -> Result<(), String> {
    for field in fields {
        match args.get(field.name) {
            None if field.required => {
                return Err(format!("missing required argument `{}`", field.name));
            }
            None => {}
            Some(value) => check_kind(field, value)?,
        }
    }
    if let Some(extra) = args
        .keys()
        .find(|key| !fields.iter().any(|f| f.name == key.as_str()))
    {
        return Err(format!("unknown argument `{extra}`"));
    }
    Ok(())
}

fn check_kind(field: &Field, value: &Value) -> Result<(), String> {
    match field.kind {
        FieldKind::String => {
            if value.is_string() {
                Ok(())
            } else {
                Err(format!("argument `{}` must be a string", field.name))
            }
        }
        FieldKind::Integer { minimum } => match as_integer(value) {
            Some(n) if n >= minimum => Ok(()),
            _ => Err(format!(
                "argument `{}` must be an integer >= {minimum}",
                field.name
            )),
        },
        FieldKind::StringArray { min_items } => {
            let Some(items) = value.as_array() else {
                return Err(format!(
                    "argument `{}` must be an array of strings",
                    field.name
                ));
            };
            if items.len() < min_items {
                return Err(format!(
                    "argument `{}` must have at least {min_items} item(s)",
                    field.name
                ));
            }
            if let Some(index) = items.iter().position(|item| !item.is_string()) {
                return Err(format!(
                    "argument `{}[{index}]` must be a string",
                    field.name
                ));
            }
            Ok(())
        }
    }
}

/// A non-negative JSON integer as `u64`. Accepts a float with no fractional part
/// (`5.0`), as JSON Schema's `integer` does; anything else, including negatives, is
/// `None`.
pub(crate) fn as_integer(value: &Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    if f.fract() == 0.0 && f >= 0.0 && f <= u64::MAX as f64 {
        // Truncation is exact here: `f` is integral and in range.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = f as u64;
        Some(n)
    } else {
        None
    }
}
