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
    // A 2026-07-28 input-required result (prompts/get, resources/read, tools/call) has the
    // shape of its own type, judged by the mcp.modern.input-required-* checks.
    if modern && o.get("resultType").and_then(Value::as_str) == Some("input_required") {
        return errs;
    }
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
        "resources/list" => list_of(o, "resources", validate_resource, revision, &mut errs),
        "resources/templates/list" => list_of(
            o,
            "resourceTemplates",
            validate_template,
            revision,
            &mut errs,
        ),
        "prompts/list" => list_of(o, "prompts", validate_prompt, revision, &mut errs),
        "resources/read" => match o.get("contents") {
            Some(Value::Array(items)) => {
                for (i, c) in items.iter().enumerate() {
                    validate_resource_contents(c, &format!("result.contents[{i}]"), &mut errs);
                }
            }
            _ => errs.push("result.contents is missing or not an array".into()),
        },
        "prompts/get" => {
            opt_type(
                o,
                "description",
                Value::is_string,
                "a string",
                "result",
                &mut errs,
            );
            match o.get("messages") {
                Some(Value::Array(items)) => {
                    let allowed = content_types(revision);
                    for (i, m) in items.iter().enumerate() {
                        let path = format!("result.messages[{i}]");
                        let Some(mo) = m.as_object() else {
                            errs.push(format!("{path} is not an object"));
                            continue;
                        };
                        match mo.get("role").and_then(Value::as_str) {
                            Some("user" | "assistant") => {}
                            _ => errs.push(format!("{path}.role is not \"user\" or \"assistant\"")),
                        }
                        match mo.get("content") {
                            Some(c) => {
                                validate_content(c, allowed, &format!("{path}.content"), &mut errs)
                            }
                            None => errs.push(format!("{path}.content is missing")),
                        }
                    }
                }
                _ => errs.push("result.messages is missing or not an array".into()),
            }
        }
        "completion/complete" => match o.get("completion") {
            Some(Value::Object(c)) => {
                match c.get("values") {
                    Some(Value::Array(v)) if v.iter().all(Value::is_string) => {}
                    _ => errs
                        .push("result.completion.values is missing or not a string array".into()),
                }
                opt_type(
                    c,
                    "total",
                    Value::is_number,
                    "a number",
                    "result.completion",
                    &mut errs,
                );
                opt_type(
                    c,
                    "hasMore",
                    Value::is_boolean,
                    "a boolean",
                    "result.completion",
                    &mut errs,
                );
            }
            _ => errs.push("result.completion is missing or not an object".into()),
        },
        _ => {}
    }
    errs
}

/// The RFC 5424 levels `notifications/message` may carry (`server/utilities/logging`).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

type ItemCheck = fn(&Value, &str, &str, &mut Vec<String>);

fn list_of(
    o: &serde_json::Map<String, Value>,
    key: &str,
    item: ItemCheck,
    revision: &str,
    errs: &mut Vec<String>,
) {
    match o.get(key) {
        Some(Value::Array(items)) => {
            for (i, t) in items.iter().enumerate() {
                item(t, revision, &format!("result.{key}[{i}]"), errs);
            }
        }
        _ => errs.push(format!("result.{key} is missing or not an array")),
    }
    opt_type(
        o,
        "nextCursor",
        Value::is_string,
        "a string",
        "result",
        errs,
    );
    // The cache hints of these lists are mcp.modern.cache-hints', under the caching page.
}

/// `annotations` of a resource, template or content block: `audience` an array of
/// `"user"`/`"assistant"`, `priority` a number from 0 to 1, `lastModified` a string.
fn validate_annotations(o: &serde_json::Map<String, Value>, path: &str, errs: &mut Vec<String>) {
    let Some(a) = o.get("annotations") else {
        return;
    };
    let Some(a) = a.as_object() else {
        errs.push(format!("{path}.annotations is not an object"));
        return;
    };
    if let Some(aud) = a.get("audience") {
        let ok = aud.as_array().is_some_and(|l| {
            l.iter()
                .all(|r| matches!(r.as_str(), Some("user" | "assistant")))
        });
        if !ok {
            errs.push(format!(
                "{path}.annotations.audience is not an array of \"user\"/\"assistant\""
            ));
        }
    }
    if let Some(p) = a.get("priority") {
        if !p.as_f64().is_some_and(|p| (0.0..=1.0).contains(&p)) {
            errs.push(format!(
                "{path}.annotations.priority is not a number from 0 to 1"
            ));
        }
    }
    opt_type(
        a,
        "lastModified",
        Value::is_string,
        "a string",
        &format!("{path}.annotations"),
        errs,
    );
}

/// `icons` (2025-11-25 and later): an array of `{src, mimeType?, sizes?, theme?}`.
fn validate_icons(
    o: &serde_json::Map<String, Value>,
    revision: &str,
    path: &str,
    errs: &mut Vec<String>,
) {
    if matches!(revision, "2024-11-05" | "2025-03-26" | "2025-06-18") {
        return;
    }
    let Some(icons) = o.get("icons") else {
        return;
    };
    let Some(list) = icons.as_array() else {
        errs.push(format!("{path}.icons is not an array"));
        return;
    };
    for (i, icon) in list.iter().enumerate() {
        let p = format!("{path}.icons[{i}]");
        let Some(io) = icon.as_object() else {
            errs.push(format!("{p} is not an object"));
            continue;
        };
        want_str(io, "src", &p, errs);
        opt_type(io, "mimeType", Value::is_string, "a string", &p, errs);
        if let Some(s) = io.get("sizes") {
            if !s.as_array().is_some_and(|l| l.iter().all(Value::is_string)) {
                errs.push(format!("{p}.sizes is not an array of strings"));
            }
        }
        if let Some(t) = io.get("theme") {
            if !matches!(t.as_str(), Some("light" | "dark")) {
                errs.push(format!("{p}.theme is not \"light\" or \"dark\""));
            }
        }
    }
}

fn validate_resource(r: &Value, revision: &str, path: &str, errs: &mut Vec<String>) {
    let Some(o) = r.as_object() else {
        errs.push(format!("{path} is not an object"));
        return;
    };
    want_str(o, "uri", path, errs);
    want_str(o, "name", path, errs);
    opt_type(o, "description", Value::is_string, "a string", path, errs);
    opt_type(o, "mimeType", Value::is_string, "a string", path, errs);
    opt_type(o, "size", Value::is_number, "a number", path, errs);
    validate_annotations(o, path, errs);
    validate_icons(o, revision, path, errs);
}

fn validate_template(r: &Value, revision: &str, path: &str, errs: &mut Vec<String>) {
    let Some(o) = r.as_object() else {
        errs.push(format!("{path} is not an object"));
        return;
    };
    want_str(o, "uriTemplate", path, errs);
    want_str(o, "name", path, errs);
    opt_type(o, "description", Value::is_string, "a string", path, errs);
    opt_type(o, "mimeType", Value::is_string, "a string", path, errs);
    validate_annotations(o, path, errs);
    validate_icons(o, revision, path, errs);
}

fn validate_prompt(r: &Value, revision: &str, path: &str, errs: &mut Vec<String>) {
    let Some(o) = r.as_object() else {
        errs.push(format!("{path} is not an object"));
        return;
    };
    want_str(o, "name", path, errs);
    opt_type(o, "description", Value::is_string, "a string", path, errs);
    match o.get("arguments") {
        None => {}
        Some(Value::Array(args)) => {
            for (i, a) in args.iter().enumerate() {
                let p = format!("{path}.arguments[{i}]");
                let Some(ao) = a.as_object() else {
                    errs.push(format!("{p} is not an object"));
                    continue;
                };
                want_str(ao, "name", &p, errs);
                opt_type(ao, "description", Value::is_string, "a string", &p, errs);
                opt_type(ao, "required", Value::is_boolean, "a boolean", &p, errs);
            }
        }
        Some(_) => errs.push(format!("{path}.arguments is not an array")),
    }
    validate_icons(o, revision, path, errs);
}

/// A `TextResourceContents` or `BlobResourceContents` item: string `uri`, and a string
/// `text` or `blob` (base64 is judged by `mcp.resources.read`, not here).
fn validate_resource_contents(c: &Value, path: &str, errs: &mut Vec<String>) {
    let Some(o) = c.as_object() else {
        errs.push(format!("{path} is not an object"));
        return;
    };
    want_str(o, "uri", path, errs);
    opt_type(o, "mimeType", Value::is_string, "a string", path, errs);
    match (o.get("text"), o.get("blob")) {
        (Some(Value::String(_)), _) | (None, Some(Value::String(_))) => {}
        (None, None) => errs.push(format!("{path} has neither text nor blob")),
        (Some(_), _) => errs.push(format!("{path}.text is not a string")),
        (None, Some(_)) => errs.push(format!("{path}.blob is not a string")),
    }
}

/// Whether `v` is a JSON integer >= 0, as JSON Schema counts integers (`60000.0` is one).
pub fn non_negative_integer(v: &Value) -> bool {
    v.as_u64().is_some()
        || v.as_f64()
            .is_some_and(|f| f.is_finite() && f >= 0.0 && f.fract() == 0.0)
}

fn cache_hints(o: &serde_json::Map<String, Value>, errs: &mut Vec<String>) {
    match o.get("ttlMs") {
        Some(v) if non_negative_integer(v) => {}
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
        match o.get("annotations") {
            None => {}
            Some(Value::Object(a)) => {
                let p = format!("{path}.annotations");
                opt_type(a, "title", Value::is_string, "a string", &p, errs);
                for hint in [
                    "readOnlyHint",
                    "destructiveHint",
                    "idempotentHint",
                    "openWorldHint",
                ] {
                    opt_type(a, hint, Value::is_boolean, "a boolean", &p, errs);
                }
            }
            Some(_) => errs.push(format!("{path}.annotations is not an object")),
        }
    }
    validate_icons(o, revision, path, errs);
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
            Some(r @ Value::Object(_)) => {
                validate_resource_contents(r, &format!("{path}.resource"), errs)
            }
            _ => errs.push(format!("{path}.resource is missing or not an object")),
        },
        _ => {}
    }
    validate_annotations(o, path, errs);
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
