//! parity's own validation of MCP message shapes, per revision.
//!
//! An independent, hand-written reading of each revision's `schema.ts`/`schema.json` for the
//! messages a tools server sends: error objects, and the results of `initialize`, `ping`,
//! `server/discover`, `tools/list` and `tools/call`. The tests cross-check it against the
//! official JSON schemas so that parity and the schema agree on valid and invalid instances;
//! it never reads those schemas at run time.

use crate::protocol::mcp::Era;
use serde_json::Value;

/// Content block types allowed in a tool result, per revision.
pub fn content_types(revision: &str) -> &'static [&'static str] {
    match revision {
        "2024-11-05" => &["text", "image", "resource"],
        "2025-03-26" => &["text", "image", "audio", "resource"],
        _ => &["text", "image", "audio", "resource_link", "resource"],
    }
}

fn is_int(v: &Value) -> bool {
    v.is_i64() || v.is_u64()
}

fn want_str(o: &serde_json::Map<String, Value>, k: &str, path: &str, errs: &mut Vec<String>) {
    match o.get(k) {
        Some(Value::String(_)) => {}
        Some(_) => errs.push(format!("{path}.{k} is not a string")),
        None => errs.push(format!("{path}.{k} is missing")),
    }
}

fn opt_type(
    o: &serde_json::Map<String, Value>,
    k: &str,
    pred: fn(&Value) -> bool,
    what: &str,
    path: &str,
    errs: &mut Vec<String>,
) {
    if let Some(v) = o.get(k) {
        if !pred(v) {
            errs.push(format!("{path}.{k} is not {what}"));
        }
    }
}

/// Validates an error object (`error` member of a response): integer `code`, string
/// `message`, optional `data`. Returns the problems found (empty when valid).
pub fn validate_error(err: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let Some(o) = err.as_object() else {
        return vec!["error is not an object".into()];
    };
    match o.get("code") {
        Some(c) if is_int(c) => {}
        Some(_) => errs.push("error.code is not an integer".into()),
        None => errs.push("error.code is missing".into()),
    }
    want_str(o, "message", "error", &mut errs);
    errs
}

/// Validates the `result` of a request `method` at `revision`. Unknown methods are checked only
/// for being an object (and, in 2026-07-28, for `resultType`).
pub fn validate_result(method: &str, result: &Value, revision: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let Some(o) = result.as_object() else {
        return vec!["result is not an object".into()];
    };
    let modern = Era::of(revision) == Era::Modern;
    if modern {
        match o.get("resultType") {
            Some(Value::String(_)) => {}
            Some(_) => errs.push("result.resultType is not a string".into()),
            None => errs.push("result.resultType is missing".into()),
        }
    }
    opt_type(
        o,
        "_meta",
        Value::is_object,
        "an object",
        "result",
        &mut errs,
    );
    match method {
        "initialize" => {
            want_str(o, "protocolVersion", "result", &mut errs);
            match o.get("capabilities") {
                Some(Value::Object(_)) => {}
                _ => errs.push("result.capabilities is missing or not an object".into()),
            }
            match o.get("serverInfo") {
                Some(Value::Object(si)) => {
                    want_str(si, "name", "result.serverInfo", &mut errs);
                    want_str(si, "version", "result.serverInfo", &mut errs);
                }
                _ => errs.push("result.serverInfo is missing or not an object".into()),
            }
            opt_type(
                o,
                "instructions",
                Value::is_string,
                "a string",
                "result",
                &mut errs,
            );
        }
        "server/discover" => {
            match o.get("supportedVersions") {
                Some(Value::Array(a)) if a.iter().all(Value::is_string) => {}
                _ => errs.push("result.supportedVersions is missing or not a string array".into()),
            }
            match o.get("capabilities") {
                Some(Value::Object(_)) => {}
                _ => errs.push("result.capabilities is missing or not an object".into()),
            }
            cache_hints(o, &mut errs);
            opt_type(
                o,
                "instructions",
                Value::is_string,
                "a string",
                "result",
                &mut errs,
            );
        }
        "tools/list" => {
            match o.get("tools") {
                Some(Value::Array(tools)) => {
                    for (i, t) in tools.iter().enumerate() {
                        validate_tool_at(t, revision, &format!("result.tools[{i}]"), &mut errs);
                    }
                }
                _ => errs.push("result.tools is missing or not an array".into()),
            }
            opt_type(
                o,
                "nextCursor",
                Value::is_string,
                "a string",
                "result",
                &mut errs,
            );
            if modern {
                cache_hints(o, &mut errs);
            }
        }
        "tools/call" => {
            match o.get("content") {
                Some(Value::Array(items)) => {
                    let allowed = content_types(revision);
                    for (i, c) in items.iter().enumerate() {
                        validate_content(c, allowed, &format!("result.content[{i}]"), &mut errs);
                    }
                }
                _ => errs.push("result.content is missing or not an array".into()),
            }
            opt_type(
                o,
                "isError",
                Value::is_boolean,
                "a boolean",
                "result",
                &mut errs,
            );
            if revision != "2024-11-05" && revision != "2025-03-26" && !modern {
                opt_type(
                    o,
                    "structuredContent",
                    Value::is_object,
                    "an object",
                    "result",
                    &mut errs,
                );
            }
        }
        _ => {}
    }
    errs
}

fn cache_hints(o: &serde_json::Map<String, Value>, errs: &mut Vec<String>) {
    match o.get("ttlMs") {
        Some(v) if v.as_u64().is_some() => {}
        Some(_) => errs.push("result.ttlMs is not a non-negative integer".into()),
        None => errs.push("result.ttlMs is missing".into()),
    }
    match o.get("cacheScope").and_then(Value::as_str) {
        Some("public") | Some("private") => {}
        Some(_) => errs.push("result.cacheScope is not \"public\" or \"private\"".into()),
        None => errs.push("result.cacheScope is missing".into()),
    }
}

/// Validates one `Tool` definition at the strictest legacy reading (2025-11-25); see
/// [`validate_tool_at`].
pub fn validate_tool(t: &Value, path: &str, errs: &mut Vec<String>) {
    validate_tool_at(t, "2025-11-25", path, errs);
}

/// Validates one `Tool` definition as `revision` defines it: string `name`, `inputSchema` an
/// object whose `type` is `"object"`, optional string `description`; optional object
/// `annotations` (from 2025-03-26); optional string `title` and optional object `outputSchema`
/// (from 2025-06-18), whose `type` must be `"object"` in 2025-06-18 and 2025-11-25 but may be
/// any JSON Schema in 2026-07-28 (where `structuredContent` may be any JSON value). Members a
/// revision does not define are not checked, as the revision's schema allows any extra member.
pub fn validate_tool_at(t: &Value, revision: &str, path: &str, errs: &mut Vec<String>) {
    let Some(o) = t.as_object() else {
        errs.push(format!("{path} is not an object"));
        return;
    };
    let has_annotations = revision != "2024-11-05";
    let has_title_and_output = has_annotations && revision != "2025-03-26";
    let modern = Era::of(revision) == Era::Modern;
    want_str(o, "name", path, errs);
    match o.get("inputSchema") {
        Some(Value::Object(s)) => {
            if s.get("type") != Some(&Value::String("object".into())) {
                errs.push(format!("{path}.inputSchema.type is not \"object\""));
            }
        }
        Some(_) => errs.push(format!("{path}.inputSchema is not an object")),
        None => errs.push(format!("{path}.inputSchema is missing")),
    }
    opt_type(o, "description", Value::is_string, "a string", path, errs);
    if has_annotations {
        opt_type(o, "annotations", Value::is_object, "an object", path, errs);
    }
    if has_title_and_output {
        opt_type(o, "title", Value::is_string, "a string", path, errs);
        match o.get("outputSchema") {
            None => {}
            Some(Value::Object(_)) if modern => {}
            Some(Value::Object(s)) if s.get("type") == Some(&Value::String("object".into())) => {}
            Some(_) => errs.push(format!("{path}.outputSchema is not an object schema")),
        }
    }
}

fn validate_content(c: &Value, allowed: &[&str], path: &str, errs: &mut Vec<String>) {
    let Some(o) = c.as_object() else {
        errs.push(format!("{path} is not an object"));
        return;
    };
    let ty = o.get("type").and_then(Value::as_str).unwrap_or("");
    if !allowed.contains(&ty) {
        errs.push(format!("{path}.type {ty:?} is not one of {allowed:?}"));
        return;
    }
    match ty {
        "text" => want_str(o, "text", path, errs),
        "image" | "audio" => {
            want_str(o, "data", path, errs);
            want_str(o, "mimeType", path, errs);
        }
        "resource_link" => {
            want_str(o, "uri", path, errs);
            want_str(o, "name", path, errs);
        }
        "resource" => match o.get("resource") {
            Some(Value::Object(r)) => want_str(r, "uri", &format!("{path}.resource"), errs),
            _ => errs.push(format!("{path}.resource is missing or not an object")),
        },
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_list_shapes() {
        let ok = json!({"tools":[{"name":"a","inputSchema":{"type":"object"}}]});
        assert!(validate_result("tools/list", &ok, "2025-11-25").is_empty());
        let bad = json!({"tools":[{"name":"a","inputSchema":null}]});
        assert_eq!(validate_result("tools/list", &bad, "2025-11-25").len(), 1);
        // Modern results need resultType and the cache hints.
        assert_eq!(validate_result("tools/list", &ok, "2026-07-28").len(), 3);
    }

    #[test]
    fn call_content_types_follow_revision() {
        let audio = json!({"content":[{"type":"audio","data":"","mimeType":"audio/wav"}]});
        assert!(!validate_result("tools/call", &audio, "2024-11-05").is_empty());
        assert!(validate_result("tools/call", &audio, "2025-03-26").is_empty());
    }
}
