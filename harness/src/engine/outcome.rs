//! The outcome model of equivalence (`DESIGN.md`, "The outcome model"): one tool call through
//! any surface becomes one normalized outcome, a JSON object of one of four shapes:
//!
//! ```json
//! {"outcome": "ok", "value": <any>, "warnings": [<string>…]}
//! {"outcome": "refused", "code": "<catalogue code>", "message": "…", "warnings": […]}
//! {"outcome": "tool_error", "message": "…", "warnings": […]}
//! {"outcome": "protocol_error", "code": <JSON-RPC code or its mapped class>, "message": "…"}
//! ```
//!
//! Extraction rules are data (the target file's `[surfaces.*.outcome]`), with defaults that fit
//! the reference:
//!
//! - **MCP** (`tools/call`): a JSON-RPC error is `protocol_error` with its code. Otherwise the
//!   payload is the value at `structured` (default `/structuredContent`), else the text at
//!   `text` (default `/content/0/text`) parsed as JSON, else that text as a string. A payload
//!   that is itself an outcome object (a string `outcome` among the four kinds, as the
//!   reference encodes it) is taken as is; otherwise `isError` (pointer `is_error`, default
//!   `/isError`) true makes it `tool_error` with the text as message, and false makes it `ok`
//!   with the payload as value.
//! - **ACP** (the tool extension method): a JSON-RPC error is `protocol_error`; otherwise the
//!   payload is the value at `result` (default: the whole result) and is read as above (an
//!   outcome object, else `ok`).
//!
//! - **A result in its own shape** (both surfaces, `[surfaces.*.outcome]` `kind` and friends,
//!   [`KindMap`]): when the payload holds the declared field and its value is one the target
//!   maps to `ok`, `refused` or `tool_error`, the outcome is built from the declared pointers
//!   (value, code, message, warnings) instead; any other payload is read as above.
//!
//! Protocol-error codes go through the surface's `errors` map (code → class name) before
//! comparison, so an unknown tool may be −32602 on one surface and −32601 on another and still
//! match when both map to the same class. The envelope (ids, `content`, `_meta`, `isError`) is
//! stripped; [`envelope_problems`] judges its shape separately.

use serde_json::{json, Map, Value};
use similar::TextDiff;
use std::collections::BTreeMap;

/// The four outcome kinds.
pub const KINDS: [&str; 4] = ["ok", "refused", "tool_error", "protocol_error"];

/// A rule that reads an outcome of one surface as an error class, so it can match another
/// surface's protocol error: an unknown tool may be −32602 on one surface and a `tool_error`
/// "Unknown tool" on a meta-tool facade (target file `[[surfaces.*.classes]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassRule {
    /// The outcome kind it applies to: `refused`, `tool_error` or `protocol_error`.
    pub kind: String,
    /// The outcome's `code` (a catalogue code, or a JSON-RPC code written as text), when given.
    pub code: Option<String>,
    /// A substring of the outcome's `message`, when given.
    pub message_contains: Option<String>,
    /// The class: a matching outcome becomes `{"outcome": "protocol_error", "code": class}`.
    pub class: String,
}

/// Reads `outcome` as an error class when a rule matches it (the first that does).
pub fn apply_classes(outcome: Value, rules: &[ClassRule]) -> Value {
    let kind = outcome.get("outcome").and_then(Value::as_str).unwrap_or("");
    let code = outcome.get("code").map(|c| match c {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let message = outcome
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    for r in rules {
        let hit = r.kind == kind
            && r.code.as_ref().is_none_or(|c| Some(c) == code.as_ref())
            && r.message_contains
                .as_ref()
                .is_none_or(|m| message.contains(m.as_str()));
        if hit {
            return json!({"outcome": "protocol_error", "code": r.class, "message": message});
        }
    }
    outcome
}

/// Extraction rules of an MCP surface (JSON pointers into the `tools/call` result).
#[derive(Debug, Clone, PartialEq)]
pub struct McpRules {
    /// Where the structured payload sits; default `/structuredContent`.
    pub structured: String,
    /// Where the text payload sits; default `/content/0/text`.
    pub text: String,
    /// Where the error flag sits; default `/isError`.
    pub is_error: String,
    /// JSON-RPC error code → class name, for comparison.
    pub errors: BTreeMap<i64, String>,
    /// Outcomes read as error classes.
    pub classes: Vec<ClassRule>,
    /// A result that names its outcome kind in a field of its own, when declared.
    pub kinds: Option<KindMap>,
}

impl Default for McpRules {
    fn default() -> Self {
        McpRules {
            structured: "/structuredContent".into(),
            text: "/content/0/text".into(),
            is_error: "/isError".into(),
            errors: BTreeMap::new(),
            classes: Vec::new(),
            kinds: None,
        }
    }
}

/// How to read a payload that carries its outcome in a shape of its own (target file
/// `[surfaces.mcp.outcome]` / `[surfaces.acp.outcome]`: `kind`, `ok`, `refused`, `tool_error`,
/// `value`, `code`, `message`, `warnings`; docs/target.md §"Calls and results in another
/// shape"). Every pointer is a JSON pointer (RFC 6901) into the payload: the MCP payload of
/// [`from_mcp`], or the value at the ACP surface's `result`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KindMap {
    /// The fields whose value names the outcome kind (`kind`, e.g. `["/status"]`), read in
    /// order: the first that is present and holds a value some kind lists decides.
    pub fields: Vec<String>,
    /// The field values that mean `ok` (any JSON scalar, e.g. `"ok"` or `true`).
    pub ok: Vec<Value>,
    /// The field values that mean `refused`.
    pub refused: Vec<Value>,
    /// The field values that mean `tool_error`.
    pub tool_error: Vec<Value>,
    /// Where an `ok` outcome's value sits; `None`: the whole payload.
    pub value: Option<String>,
    /// Where a `refused` outcome's code sits; `None` (or nothing there): `null`.
    pub code: Option<String>,
    /// Where the message of a `refused` or `tool_error` outcome sits, if anywhere.
    pub message: Option<String>,
    /// Where the warnings sit (an array); `None` (or nothing there): `[]`.
    pub warnings: Option<String>,
}

impl KindMap {
    /// The outcome kind a field value names, if any kind lists it ([`same_scalar`]).
    fn kind_of(&self, v: &Value) -> Option<&'static str> {
        let listed = |values: &[Value]| values.iter().any(|x| same_scalar(x, v));
        if listed(&self.ok) {
            Some("ok")
        } else if listed(&self.refused) {
            Some("refused")
        } else if listed(&self.tool_error) {
            Some("tool_error")
        } else {
            None
        }
    }

    /// The outcome of `payload` when one of its kind fields holds a mapped value (the first
    /// such field in [`KindMap::fields`] order); `None` otherwise (every field is missing or
    /// holds a value no kind lists), so the default reading applies.
    pub fn read(&self, payload: &Value) -> Option<Value> {
        let kind = self
            .fields
            .iter()
            .filter_map(|f| payload.pointer(f))
            .find_map(|v| self.kind_of(v))?;
        let at = |p: &Option<String>| p.as_deref().and_then(|p| payload.pointer(p)).cloned();
        let mut out = Map::new();
        out.insert("outcome".into(), json!(kind));
        match kind {
            "ok" => {
                let value = match &self.value {
                    Some(p) => payload.pointer(p).cloned().unwrap_or(Value::Null),
                    None => payload.clone(),
                };
                out.insert("value".into(), value);
            }
            "refused" => {
                out.insert("code".into(), at(&self.code).unwrap_or(Value::Null));
            }
            _ => {}
        }
        if kind != "ok" {
            if let Some(m) = at(&self.message) {
                out.insert("message".into(), m);
            }
        }
        out.insert(
            "warnings".into(),
            at(&self.warnings).unwrap_or_else(|| json!([])),
        );
        Some(Value::Object(out))
    }
}

/// Whether two kind values are the same: equal JSON, or numbers of equal value (`1` and
/// `1.0`), as a TOML declaration and a peer's JSON may write one number either way.
pub fn same_scalar(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            // Integers as integers (exact beyond 2^53); a float against either as a float.
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(i), Some(j), _, _) => i == j,
                (_, _, Some(i), Some(j)) => i == j,
                _ if x.is_f64() || y.is_f64() => x.as_f64() == y.as_f64(),
                _ => false,
            }
        }
        _ => a == b,
    }
}

/// Extraction rules of an ACP surface.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AcpRules {
    /// Where the outcome sits in the tool method's result; default `""` (the whole result).
    pub result: String,
    /// JSON-RPC error code → class name, for comparison.
    pub errors: BTreeMap<i64, String>,
    /// Outcomes read as error classes.
    pub classes: Vec<ClassRule>,
    /// A result that names its outcome kind in a field of its own, when declared.
    pub kinds: Option<KindMap>,
}

fn protocol_error(err: &Value, errors: &BTreeMap<i64, String>) -> Value {
    let code = err.get("code").and_then(Value::as_i64);
    let class = match code {
        Some(c) => errors.get(&c).map(|s| json!(s)).unwrap_or_else(|| json!(c)),
        None => Value::Null,
    };
    json!({
        "outcome": "protocol_error",
        "code": class,
        "message": err.get("message").cloned().unwrap_or(Value::Null),
    })
}

/// The payload as an outcome object when it is one (a string `outcome` among [`KINDS`]), with
/// `warnings` defaulted to `[]`.
fn as_outcome(payload: &Value) -> Option<Value> {
    let o = payload.as_object()?;
    let kind = o.get("outcome")?.as_str()?;
    if !KINDS.contains(&kind) {
        return None;
    }
    let mut out = Map::new();
    out.insert("outcome".into(), json!(kind));
    for k in ["value", "code", "message"] {
        if let Some(v) = o.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    if kind != "protocol_error" {
        out.insert(
            "warnings".into(),
            o.get("warnings").cloned().unwrap_or_else(|| json!([])),
        );
    }
    Some(Value::Object(out))
}

/// The outcome of an MCP `tools/call` response message (the whole JSON-RPC message), with the
/// surface's class rules applied.
pub fn from_mcp(message: &Value, rules: &McpRules) -> Value {
    apply_classes(read_mcp(message, rules), &rules.classes)
}

fn read_mcp(message: &Value, rules: &McpRules) -> Value {
    if let Some(err) = message.get("error") {
        return protocol_error(err, &rules.errors);
    }
    let Some(result) = message.get("result") else {
        return json!({"outcome": "protocol_error", "code": null, "message": "no result and no error"});
    };
    let text = result
        .pointer(&rules.text)
        .and_then(Value::as_str)
        .map(str::to_string);
    let payload = result
        .pointer(&rules.structured)
        .cloned()
        .or_else(|| {
            text.as_deref()
                .map(|t| serde_json::from_str(t).unwrap_or_else(|_| json!(t)))
        })
        .unwrap_or(Value::Null);
    if let Some(o) = rules.kinds.as_ref().and_then(|k| k.read(&payload)) {
        return o;
    }
    if let Some(o) = as_outcome(&payload) {
        return o;
    }
    let is_error = result
        .pointer(&rules.is_error)
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if is_error {
        json!({"outcome": "tool_error", "message": text.unwrap_or_default(), "warnings": []})
    } else {
        json!({"outcome": "ok", "value": payload, "warnings": []})
    }
}

/// The outcome of an ACP tool-method response message (the whole JSON-RPC message), with the
/// surface's class rules applied.
pub fn from_acp(message: &Value, rules: &AcpRules) -> Value {
    apply_classes(read_acp(message, rules), &rules.classes)
}

fn read_acp(message: &Value, rules: &AcpRules) -> Value {
    if let Some(err) = message.get("error") {
        return protocol_error(err, &rules.errors);
    }
    let Some(result) = message.get("result") else {
        return json!({"outcome": "protocol_error", "code": null, "message": "no result and no error"});
    };
    let payload = result
        .pointer(&rules.result)
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(o) = rules.kinds.as_ref().and_then(|k| k.read(&payload)) {
        return o;
    }
    as_outcome(&payload)
        .unwrap_or_else(|| json!({"outcome": "ok", "value": payload, "warnings": []}))
}

/// Problems with the shape of a response envelope, judged apart from the outcome: an MCP
/// `tools/call` result needs a `content` array and a boolean or absent `isError`; an ACP result
/// must be a JSON value (any), and an error on either surface needs an integer `code` and a
/// string `message`.
pub fn envelope_problems(message: &Value, mcp: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(err) = message.get("error") {
        if !err.get("code").is_some_and(Value::is_i64) {
            out.push("error.code must be an integer".into());
        }
        if !err.get("message").is_some_and(Value::is_string) {
            out.push("error.message must be a string".into());
        }
        return out;
    }
    let Some(result) = message.get("result") else {
        out.push("the response has neither result nor error".into());
        return out;
    };
    if mcp {
        if !result.get("content").is_some_and(Value::is_array) {
            out.push("result.content must be an array".into());
        }
        if result.get("isError").is_some_and(|v| !v.is_boolean()) {
            out.push("result.isError must be a boolean".into());
        }
    }
    out
}

/// What is compared: the kind plus `value` and `warnings` (ok), `code` and `warnings`
/// (refused), `code` (protocol_error); messages only when `messages` is set. Values at the
/// `volatile` pointers are replaced by `"<volatile>"` (pointers that do not resolve are
/// ignored).
pub fn comparable(outcome: &Value, volatile: &[String], messages: bool) -> Value {
    let kind = outcome.get("outcome").and_then(Value::as_str).unwrap_or("");
    let keep: &[&str] = match kind {
        "ok" => &["outcome", "value", "warnings"],
        "refused" => &["outcome", "code", "warnings"],
        "tool_error" => &["outcome", "warnings"],
        "protocol_error" => &["outcome", "code"],
        _ => &["outcome"],
    };
    let mut out = Map::new();
    for k in keep {
        if let Some(v) = outcome.get(*k) {
            out.insert((*k).into(), v.clone());
        }
    }
    if messages && kind != "ok" {
        if let Some(m) = outcome.get("message") {
            out.insert("message".into(), m.clone());
        }
    }
    let mut v = Value::Object(out);
    for p in volatile {
        if let Some(slot) = v.pointer_mut(p) {
            *slot = json!("<volatile>");
        }
    }
    v
}

/// The JSON pointers at which two values differ (an array of a different length differs at the
/// array; a member present on one side only differs at the member).
pub fn differing_paths(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_into(a, b, String::new(), &mut out);
    out
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn diff_into(a: &Value, b: &Value, path: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}/{}", escape(k));
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => diff_into(u, v, p, out),
                    _ => out.push(p),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                diff_into(u, v, format!("{path}/{i}"), out);
            }
        }
        _ if a == b => {}
        _ => out.push(if path.is_empty() { "/".into() } else { path }),
    }
}

/// A unified diff of the pretty JSON of two values, labelled with the two surfaces.
pub fn unified_diff(a: &Value, b: &Value, label_a: &str, label_b: &str) -> String {
    let x = serde_json::to_string_pretty(a).unwrap_or_default() + "\n";
    let y = serde_json::to_string_pretty(b).unwrap_or_default() + "\n";
    TextDiff::from_lines(&x, &y)
        .unified_diff()
        .context_radius(3)
        .header(label_a, label_b)
        .to_string()
}

/// Whether `p` is a JSON pointer (RFC 6901): empty, or `/`-separated tokens where `~` is
/// followed only by `0` or `1`.
pub fn valid_pointer(p: &str) -> bool {
    if p.is_empty() {
        return true;
    }
    if !p.starts_with('/') {
        return false;
    }
    let b = p.as_bytes();
    b.iter()
        .enumerate()
        .all(|(i, c)| *c != b'~' || matches!(b.get(i + 1), Some(b'0') | Some(b'1')))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn mcp_reference_encoding_is_read_as_the_outcome() {
        let msg = json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],
            "structuredContent":{"outcome":"refused","code":"NOT_FOUND","message":"m","warnings":[]},"isError":true}});
        let o = from_mcp(&msg, &McpRules::default());
        assert_eq!(o["outcome"], "refused");
        assert_eq!(o["code"], "NOT_FOUND");
    }

    #[test]
    fn mcp_plain_results_become_ok_or_tool_error() {
        let ok = json!({"result":{"content":[{"type":"text","text":"{\"a\":1}"}]}});
        assert_eq!(from_mcp(&ok, &McpRules::default())["value"], json!({"a":1}));
        let text = json!({"result":{"content":[{"type":"text","text":"hello"}]}});
        assert_eq!(
            from_mcp(&text, &McpRules::default())["value"],
            json!("hello")
        );
        let err = json!({"result":{"content":[{"type":"text","text":"boom"}],"isError":true}});
        let o = from_mcp(&err, &McpRules::default());
        assert_eq!(o["outcome"], "tool_error");
        assert_eq!(o["message"], "boom");
    }

    #[test]
    fn a_declared_kind_field_reads_a_result_of_its_own_shape() {
        let kinds = KindMap {
            fields: vec!["/status".into()],
            ok: vec![json!("ok")],
            refused: vec![json!("refused"), json!("denied")],
            tool_error: vec![json!("error")],
            value: Some("/value".into()),
            code: Some("/code".into()),
            message: Some("/message".into()),
            warnings: Some("/notes".into()),
        };
        let rules = AcpRules {
            kinds: Some(kinds.clone()),
            ..AcpRules::default()
        };
        let ok = from_acp(
            &json!({"result": {"status": "ok", "value": {"a": 1}, "notes": ["w"]}}),
            &rules,
        );
        assert_eq!(
            ok,
            json!({"outcome": "ok", "value": {"a": 1}, "warnings": ["w"]})
        );
        let refused = from_acp(
            &json!({"result": {"status": "denied", "code": "NOT_FOUND", "message": "m"}}),
            &rules,
        );
        assert_eq!(
            refused,
            json!({"outcome": "refused", "code": "NOT_FOUND", "message": "m", "warnings": []})
        );
        let err = from_acp(
            &json!({"result": {"status": "error", "message": "boom"}}),
            &rules,
        );
        assert_eq!(err["outcome"], "tool_error");
        assert_eq!(err["message"], "boom");
        // A value no kind lists, or no field at all: the default reading.
        let other = from_acp(&json!({"result": {"status": "maybe"}}), &rules);
        assert_eq!(other["outcome"], "ok");
        assert_eq!(other["value"], json!({"status": "maybe"}));
        let reference = from_acp(
            &json!({"result": {"outcome": "refused", "code": "X", "warnings": []}}),
            &rules,
        );
        assert_eq!(reference["code"], "X");
        // MCP: the payload is the structured content (or the parsed text).
        let mcp = McpRules {
            kinds: Some(KindMap {
                value: None,
                ..kinds
            }),
            ..McpRules::default()
        };
        let o = from_mcp(
            &json!({"result": {"content": [{"type": "text", "text": "{\"status\":\"refused\",\"code\":7}"}]}}),
            &mcp,
        );
        assert_eq!(o["outcome"], "refused");
        assert_eq!(o["code"], 7);
        let o = from_mcp(
            &json!({"result": {"content": [], "structuredContent": {"status": "ok", "n": 2}}}),
            &mcp,
        );
        assert_eq!(o["value"], json!({"status": "ok", "n": 2}));
    }

    #[test]
    fn several_kind_fields_are_read_in_order_and_numbers_match_by_value() {
        // {"ok": true, "data": …} or {"ok": false, "err": {"kind": "refused" | "error", …}}
        let kinds = KindMap {
            fields: vec!["/err/kind".into(), "/ok".into()],
            ok: vec![json!(true)],
            refused: vec![json!("refused")],
            tool_error: vec![json!("error"), json!(2)],
            value: Some("/data".into()),
            code: Some("/err/code".into()),
            message: Some("/err/msg".into()),
            warnings: None,
        };
        let read = |v: Value| kinds.read(&v).unwrap();
        assert_eq!(read(json!({"ok": true, "data": 5}))["value"], 5);
        let r = read(json!({"ok": false, "err": {"kind": "refused", "code": "NOPE"}}));
        assert_eq!(
            (r["outcome"].as_str(), r["code"].as_str()),
            (Some("refused"), Some("NOPE"))
        );
        let e = read(json!({"ok": false, "err": {"kind": "error", "msg": "boom"}}));
        assert_eq!(
            (e["outcome"].as_str(), e["message"].as_str()),
            (Some("tool_error"), Some("boom"))
        );
        // An unlisted value in the first field: the next field decides.
        assert_eq!(
            read(json!({"ok": true, "err": {"kind": "?"}}))["outcome"],
            "ok"
        );
        assert_eq!(
            read(json!({"ok": false, "err": {"kind": 2.0}}))["outcome"],
            "tool_error"
        );
        assert!(kinds.read(&json!({"ok": false})).is_none());
        assert!(same_scalar(&json!(1), &json!(1.0)));
        assert!(!same_scalar(
            &json!(9_007_199_254_740_993_u64),
            &json!(9_007_199_254_740_992_u64)
        ));
        assert!(!same_scalar(&json!(-1), &json!(u64::MAX)));
        assert!(!same_scalar(&json!(1), &json!("1")));
    }

    #[test]
    fn protocol_errors_map_through_the_class_table() {
        let mut rules = AcpRules::default();
        rules.errors.insert(-32601, "unknown_tool".into());
        let o = from_acp(&json!({"error":{"code":-32601,"message":"x"}}), &rules);
        assert_eq!(o["code"], "unknown_tool");
        let o = from_acp(&json!({"error":{"code":-32602,"message":"x"}}), &rules);
        assert_eq!(o["code"], -32602);
    }

    #[test]
    fn class_rules_let_a_tool_error_match_a_protocol_error() {
        let mut mcp = McpRules::default();
        mcp.classes.push(ClassRule {
            kind: "tool_error".into(),
            code: None,
            message_contains: Some("Unknown tool".into()),
            class: "unknown_tool".into(),
        });
        let mut acp = AcpRules::default();
        acp.errors.insert(-32601, "unknown_tool".into());
        let m = from_mcp(
            &json!({"result":{"content":[{"type":"text","text":"Unknown tool: x"}],"isError":true}}),
            &mcp,
        );
        let a = from_acp(
            &json!({"error":{"code":-32601,"message":"Method not found"}}),
            &acp,
        );
        assert_eq!(comparable(&m, &[], false), comparable(&a, &[], false));
        // A rule that does not match leaves the outcome alone.
        let other = from_mcp(
            &json!({"result":{"content":[{"type":"text","text":"disk full"}],"isError":true}}),
            &mcp,
        );
        assert_eq!(other["outcome"], "tool_error");
        let coded = apply_classes(
            json!({"outcome":"protocol_error","code":-32602,"message":"m"}),
            &[ClassRule {
                kind: "protocol_error".into(),
                code: Some("-32602".into()),
                message_contains: None,
                class: "bad".into(),
            }],
        );
        assert_eq!(coded["code"], "bad");
    }

    #[test]
    fn acp_result_pointer_selects_the_outcome() {
        let rules = AcpRules {
            result: "/outcome".into(),
            ..AcpRules::default()
        };
        let msg = json!({"result":{"outcome":{"outcome":"ok","value":3}}});
        assert_eq!(from_acp(&msg, &rules)["value"], 3);
        let plain = json!({"result":{"n":3}});
        assert_eq!(
            from_acp(&plain, &AcpRules::default())["value"],
            json!({"n":3})
        );
    }

    #[test]
    fn comparison_ignores_volatile_values_and_messages() {
        let a = json!({"outcome":"ok","value":{"since_ms":1,"label":"active"},"warnings":[]});
        let b = json!({"outcome":"ok","value":{"since_ms":2,"label":"active"},"warnings":[]});
        let v = vec!["/value/since_ms".to_string()];
        assert_eq!(comparable(&a, &v, false), comparable(&b, &v, false));
        assert_eq!(
            differing_paths(&comparable(&a, &[], false), &comparable(&b, &[], false)),
            vec!["/value/since_ms"]
        );
        let r1 = json!({"outcome":"refused","code":"X","message":"one","warnings":[]});
        let r2 = json!({"outcome":"refused","code":"X","message":"two","warnings":[]});
        assert_eq!(comparable(&r1, &[], false), comparable(&r2, &[], false));
        assert_ne!(comparable(&r1, &[], true), comparable(&r2, &[], true));
    }

    #[test]
    fn differing_paths_name_members_and_arrays() {
        let a = json!({"x":[1,2],"y":{"a~b/c":1},"z":1});
        let b = json!({"x":[1,3],"y":{"a~b/c":2}});
        assert_eq!(differing_paths(&a, &b), vec!["/x/1", "/y/a~0b~1c", "/z"]);
        assert!(unified_diff(&a, &b, "mcp", "acp").contains("--- mcp"));
    }

    #[test]
    fn pointers_are_validated() {
        assert!(valid_pointer(""));
        assert!(valid_pointer("/a/~0/~1"));
        assert!(!valid_pointer("a"));
        assert!(!valid_pointer("/a~2"));
        assert!(!valid_pointer("/a~"));
    }
}
