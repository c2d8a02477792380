//! The server features beyond tools: resources, prompts, completion and logging, plus the
//! `outputSchema` the tools publish. No tool logic lives here: the workspace is reached only
//! through [`Dispatcher::call`] (`list_dir` to list resources, `read_file` to read one).
//!
//! # What is served, per era
//!
//! | method | legacy (2024-11-05…2025-11-25) | modern (2026-07-28) |
//! |---|---|---|
//! | `resources/list`, `resources/read`, `resources/templates/list` | yes | yes, with `ttlMs`/`cacheScope` |
//! | `resources/subscribe`, `resources/unsubscribe` | yes (`resources.subscribe: true`) | no (removed) |
//! | `prompts/list`, `prompts/get` | yes | yes (`prompts/list` with cache hints) |
//! | `completion/complete` | declared from 2025-03-26 (answered at 2024-11-05 too) | yes |
//! | `logging/setLevel` | yes (`logging: {}`) | no: 2026-07-28 deprecates logging and says new implementations SHOULD NOT adopt it |
//!
//! Resources are the regular files at the workspace root, as `workspace:///<name>` with
//! `mimeType: "text/plain"`, paginated like the tools; the one template is
//! `workspace:///{path}`. An unknown URI is −32002 "Resource not found" in the legacy era
//! (`server/resources`, Error Handling, SHOULD) and −32602 at 2026-07-28 (MUST). Prompts:
//! `summarize_workspace` (no arguments) and `explain_file` (required `path`); an unknown name or
//! a missing required argument is −32602. Completion offers the workspace file names that begin
//! with the typed value, for `explain_file`'s `path` and the template's `path`, at most 100.

use serde_json::{json, Map, Value};

use crate::dispatcher::{Dispatcher, OutcomeKind, RefusalCode, ToolCall};

/// The dispatcher whose workspace these features serve, as another surface names it (the
/// facade's HTTP surface): surfaces name the dispatcher type only through its entry points.
#[cfg(feature = "http")]
pub(crate) type Workspace = Dispatcher;

const INVALID_PARAMS: i64 = -32602;
/// Legacy "Resource not found" (`server/resources`, Error Handling).
const RESOURCE_NOT_FOUND: i64 = -32002;

/// The URI prefix of the workspace resources.
pub(crate) const SCHEME_PREFIX: &str = "workspace:///";
/// The one resource template.
pub(crate) const TEMPLATE: &str = "workspace:///{path}";
/// `ttlMs` of results that follow the workspace, which `write_file` changes: stale at once.
const LIVE_TTL_MS: u64 = 0;
/// The eight RFC 5424 levels, in order (`server/utilities/logging`).
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
const RESOURCE_CURSOR_PREFIX: &str = "parity-resources:";

/// The `outputSchema` of every tool: the parity outcome object the `structuredContent` of each
/// result carries (`{"outcome", "value" | "code" + "message" | "message", "warnings"}`).
pub(crate) fn outcome_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "outcome": {"type": "string", "enum": ["ok", "refused", "tool_error"]},
            "value": {},
            "code": {"type": "string"},
            "message": {"type": "string"},
            "warnings": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["outcome", "warnings"]
    })
}

/// The server capabilities at a legacy `revision`, or at 2026-07-28 when `None`.
pub(crate) fn capabilities(revision: Option<&str>) -> Value {
    let mut caps = Map::new();
    caps.insert("tools".into(), json!({"listChanged": false}));
    match revision {
        Some(_) => caps.insert(
            "resources".into(),
            json!({"subscribe": true, "listChanged": false}),
        ),
        None => caps.insert("resources".into(), json!({"listChanged": false})),
    };
    caps.insert("prompts".into(), json!({"listChanged": false}));
    if revision != Some("2024-11-05") {
        caps.insert("completions".into(), json!({}));
    }
    if revision.is_some() {
        caps.insert("logging".into(), json!({}));
    }
    Value::Object(caps)
}

/// Whether `method` is one of these features in the era (`revision` `None` = 2026-07-28).
pub(crate) fn handles(method: &str, revision: Option<&str>) -> bool {
    let both = matches!(
        method,
        "resources/list"
            | "resources/read"
            | "resources/templates/list"
            | "prompts/list"
            | "prompts/get"
            | "completion/complete"
    );
    let legacy = matches!(
        method,
        "resources/subscribe" | "resources/unsubscribe" | "logging/setLevel"
    );
    both || (legacy && revision.is_some())
}

/// Checks a `logging/setLevel` request's params: `Ok(level)` or `Err((code, message))`.
pub(crate) fn log_level(params: Option<&Value>) -> Result<String, (i64, String)> {
    match params.and_then(|p| p.get("level")) {
        Some(Value::String(l)) if LOG_LEVELS.contains(&l.as_str()) => Ok(l.clone()),
        Some(other) => Err((
            INVALID_PARAMS,
            format!(
                "Invalid params: unknown log level {other}; one of {}",
                LOG_LEVELS.join(", ")
            ),
        )),
        None => Err((
            INVALID_PARAMS,
            "Invalid params: `level` is required".to_owned(),
        )),
    }
}

/// The 2026-07-28 `notifications/subscriptions/acknowledged` for a `subscriptions/listen`
/// request `id` (`basic/patterns/subscriptions`): the honoured subset of the requested filter,
/// which is empty, since the reference declares no `listChanged` and no `subscribe`, and the
/// subscription id (the request's id) in `_meta`. `Err` (−32602) when `notifications` is not an
/// object.
pub(crate) fn acknowledgement(id: &Value, params: Option<&Value>) -> Result<Value, (i64, String)> {
    match params.and_then(|p| p.get("notifications")) {
        Some(Value::Object(_)) => Ok(json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "notifications": {},
                "_meta": {"io.modelcontextprotocol/subscriptionId": id},
            },
        })),
        _ => Err(invalid("`notifications` must be an object")),
    }
}

type Answer = Result<Map<String, Value>, (i64, String)>;

fn invalid(message: impl Into<String>) -> (i64, String) {
    (
        INVALID_PARAMS,
        format!("Invalid params: {}", message.into()),
    )
}

fn object(params: Option<&Value>) -> Result<Map<String, Value>, (i64, String)> {
    match params {
        None => Ok(Map::new()),
        Some(Value::Object(p)) => Ok(p.clone()),
        Some(_) => Err(invalid("params must be an object")),
    }
}

/// Answers one feature request (`handles` said yes) at a legacy `revision`, or at 2026-07-28
/// when `None`; `page_size` is the list page size (0 = one page). The result lacks the modern
/// `resultType` and `_meta`, which the caller adds.
pub(crate) async fn handle(
    dispatcher: &Dispatcher,
    method: &str,
    params: Option<&Value>,
    revision: Option<&str>,
    page_size: usize,
) -> Answer {
    let params = object(params)?;
    let modern = revision.is_none();
    let result = match method {
        "resources/list" => {
            let files = workspace_files(dispatcher).await?;
            let resources: Vec<Value> = files.iter().map(|f| resource_json(f)).collect();
            page(
                "resources",
                resources,
                params.get("cursor"),
                page_size,
                modern.then_some(LIVE_TTL_MS),
            )?
        }
        "resources/templates/list" => page(
            "resourceTemplates",
            vec![json!({
                "uriTemplate": TEMPLATE,
                "name": "workspace-file",
                "description": "A file of the workspace, by its path relative to the root",
                "mimeType": "text/plain",
            })],
            params.get("cursor"),
            page_size,
            modern.then_some(super::LIST_TTL_MS),
        )?,
        "resources/read" => {
            let uri = uri_param(&params)?;
            let text = read(dispatcher, &uri, modern).await?;
            let mut r = Map::new();
            r.insert(
                "contents".into(),
                json!([{"uri": uri, "mimeType": "text/plain", "text": text}]),
            );
            if modern {
                hints(&mut r, LIVE_TTL_MS);
            }
            r
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let uri = uri_param(&params)?;
            read(dispatcher, &uri, modern).await?;
            Map::new()
        }
        "prompts/list" => page(
            "prompts",
            prompts(),
            params.get("cursor"),
            page_size,
            modern.then_some(super::LIST_TTL_MS),
        )?,
        "prompts/get" => get_prompt(&params, revision)?,
        "completion/complete" => complete(dispatcher, &params).await?,
        _ => return Err((-32601, format!("Method not found: {method}"))),
    };
    Ok(result)
}

fn hints(r: &mut Map<String, Value>, ttl_ms: u64) {
    r.insert("ttlMs".into(), Value::from(ttl_ms));
    r.insert("cacheScope".into(), Value::from("public"));
}

fn uri_param(params: &Map<String, Value>) -> Result<String, (i64, String)> {
    match params.get("uri") {
        Some(Value::String(u)) => Ok(u.clone()),
        Some(_) => Err(invalid("`uri` must be a string")),
        None => Err(invalid("`uri` is required")),
    }
}

/// The names of the regular files at the workspace root, sorted.
async fn workspace_files(dispatcher: &Dispatcher) -> Result<Vec<String>, (i64, String)> {
    let outcome = dispatcher
        .call(ToolCall::new("list_dir", json!({"path": "."})))
        .await;
    let OutcomeKind::Ok { value } = &outcome.kind else {
        return Err((
            -32603,
            "Internal error: the workspace could not be listed".into(),
        ));
    };
    let mut names: Vec<String> = value
        .get("entries")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter(|e| e.get("kind").and_then(Value::as_str) == Some("file"))
                .filter_map(|e| e.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    Ok(names)
}

/// A workspace path as the path of a `workspace:///` URI: every byte outside RFC 3986's
/// unreserved characters and `/` percent-encoded, so any file name gives a valid URI.
pub(crate) fn uri_of(path: &str) -> String {
    let mut uri = String::from(SCHEME_PREFIX);
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The workspace path of a `workspace:///` URI, percent-decoded; `None` for another URI or a
/// path that does not decode to UTF-8.
fn path_of(uri: &str) -> Option<String> {
    let encoded = uri.strip_prefix(SCHEME_PREFIX)?;
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = encoded.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().filter(|p| !p.is_empty())
}

fn resource_json(name: &str) -> Value {
    json!({
        "uri": uri_of(name),
        "name": name,
        "mimeType": "text/plain",
    })
}

/// Reads a `workspace:///` URI through `read_file`: the text, or the revision's not-found error.
async fn read(dispatcher: &Dispatcher, uri: &str, modern: bool) -> Result<String, (i64, String)> {
    let not_found = || {
        let code = if modern {
            INVALID_PARAMS
        } else {
            RESOURCE_NOT_FOUND
        };
        (code, format!("Resource not found: {uri}"))
    };
    let Some(path) = path_of(uri) else {
        return Err(not_found());
    };
    let outcome = dispatcher
        .call(ToolCall::new("read_file", json!({"path": path})))
        .await;
    match outcome.kind {
        OutcomeKind::Ok { value } => Ok(value
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()),
        OutcomeKind::Refused {
            code: RefusalCode::NotFound | RefusalCode::IsADirectory,
            ..
        } => Err(not_found()),
        OutcomeKind::Refused { message, .. } | OutcomeKind::ToolError { message } => {
            Err(invalid(format!("{uri}: {message}")))
        }
        OutcomeKind::ProtocolError { code, message } => Err((code, message)),
    }
}

/// One page of `items` under `key`, from an opaque cursor, with `nextCursor` when more remain
/// and the modern cache hints when `ttl_ms` is given. An unknown cursor is −32602.
fn page(
    key: &str,
    items: Vec<Value>,
    cursor: Option<&Value>,
    page_size: usize,
    ttl_ms: Option<u64>,
) -> Answer {
    let start = match cursor.filter(|c| !c.is_null()) {
        None => 0,
        Some(c) => c
            .as_str()
            .and_then(|c| decode_cursor(key, c, items.len()))
            .ok_or_else(|| invalid("unknown cursor"))?,
    };
    let size = if page_size == 0 {
        items.len()
    } else {
        page_size
    };
    let end = start.saturating_add(size).min(items.len());
    let mut r = Map::new();
    r.insert(
        key.into(),
        Value::Array(items.get(start..end).unwrap_or_default().to_vec()),
    );
    if end < items.len() {
        r.insert("nextCursor".into(), Value::from(encode_cursor(key, end)));
    }
    if let Some(ttl) = ttl_ms {
        hints(&mut r, ttl);
    }
    Ok(r)
}

fn encode_cursor(key: &str, start: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{RESOURCE_CURSOR_PREFIX}{key}:{start}"))
}

fn decode_cursor(key: &str, cursor: &str, len: usize) -> Option<usize> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let digits = text
        .strip_prefix(RESOURCE_CURSOR_PREFIX)?
        .strip_prefix(key)?
        .strip_prefix(':')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let start: usize = digits.parse().ok()?;
    (start > 0 && start < len).then_some(start)
}

fn prompts() -> Vec<Value> {
    vec![
        json!({
            "name": "summarize_workspace",
            "title": "Summarize the workspace",
            "description": "Asks for a summary of the workspace files",
        }),
        json!({
            "name": "explain_file",
            "title": "Explain a file",
            "description": "Asks for an explanation of one workspace file",
            "arguments": [{
                "name": "path",
                "description": "The file's path, relative to the workspace root",
                "required": true
            }],
        }),
    ]
}

fn get_prompt(params: &Map<String, Value>, revision: Option<&str>) -> Answer {
    let name = match params.get("name") {
        Some(Value::String(n)) => n.as_str(),
        _ => return Err(invalid("`name` must be a string")),
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) if a.values().all(Value::is_string) => a.clone(),
        Some(_) => return Err(invalid("`arguments` must map names to strings")),
    };
    let text = |t: String| json!({"role": "user", "content": {"type": "text", "text": t}});
    let messages = match name {
        "summarize_workspace" => vec![text(
            "Summarize the files of the workspace; list them with list_dir first.".into(),
        )],
        "explain_file" => {
            let Some(path) = arguments.get("path").and_then(Value::as_str) else {
                return Err(invalid("missing required argument `path`"));
            };
            let mut m = vec![text(format!("Explain what the file {path} is for."))];
            // `resource_link` blocks exist from 2025-06-18.
            if !matches!(revision, Some("2024-11-05" | "2025-03-26")) {
                m.push(json!({"role": "user", "content": {
                    "type": "resource_link",
                    "uri": uri_of(path),
                    "name": path,
                    "mimeType": "text/plain"
                }}));
            }
            m
        }
        other => return Err(invalid(format!("unknown prompt {other:?}"))),
    };
    let mut r = Map::new();
    r.insert("messages".into(), Value::Array(messages));
    Ok(r)
}

async fn complete(dispatcher: &Dispatcher, params: &Map<String, Value>) -> Answer {
    let reference = params.get("ref").and_then(Value::as_object);
    let argument = params.get("argument").and_then(Value::as_object);
    let (Some(reference), Some(argument)) = (reference, argument) else {
        return Err(invalid("`ref` and `argument` are required objects"));
    };
    let known = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => reference.get("name").and_then(Value::as_str) == Some("explain_file"),
        Some("ref/resource") => reference.get("uri").and_then(Value::as_str) == Some(TEMPLATE),
        _ => {
            return Err(invalid(
                "`ref.type` must be \"ref/prompt\" or \"ref/resource\"",
            ))
        }
    };
    if !known {
        return Err(invalid("unknown prompt or resource template"));
    }
    if argument.get("name").and_then(Value::as_str) != Some("path") {
        return Err(invalid("unknown argument: only `path` completes"));
    }
    let typed = argument
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let matching: Vec<String> = workspace_files(dispatcher)
        .await?
        .into_iter()
        .filter(|f| f.starts_with(typed))
        .collect();
    let total = matching.len();
    let values: Vec<Value> = matching.into_iter().take(100).map(Value::from).collect();
    let mut r = Map::new();
    r.insert(
        "completion".into(),
        json!({"values": values, "total": total, "hasMore": total > 100}),
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_bound_to_their_list() {
        let c = encode_cursor("resources", 2);
        assert_eq!(decode_cursor("resources", &c, 5), Some(2));
        assert_eq!(decode_cursor("prompts", &c, 5), None);
        assert_eq!(decode_cursor("resources", &c, 2), None);
        assert_eq!(decode_cursor("resources", "bogus", 5), None);
    }

    #[test]
    fn uris_are_percent_encoded_and_decoded() {
        assert_eq!(uri_of("a b/é.txt"), "workspace:///a%20b/%C3%A9.txt");
        assert_eq!(path_of(&uri_of("a b/é.txt")).as_deref(), Some("a b/é.txt"));
        assert_eq!(path_of("workspace:///%zz"), None);
        assert_eq!(path_of("file:///a"), None);
    }

    #[test]
    fn capabilities_follow_the_era() {
        let old = capabilities(Some("2024-11-05"));
        assert!(old.get("completions").is_none() && old.get("logging").is_some());
        let modern = capabilities(None);
        assert!(modern.get("logging").is_none() && modern.get("completions").is_some());
        assert_eq!(modern["resources"].get("subscribe"), None);
        assert!(handles("logging/setLevel", Some("2025-11-25")));
        assert!(!handles("logging/setLevel", None));
        assert!(!handles("resources/subscribe", None));
    }

    #[test]
    fn log_levels_are_checked() {
        assert_eq!(
            log_level(Some(&json!({"level": "debug"}))),
            Ok("debug".into())
        );
        assert_eq!(
            log_level(Some(&json!({"level": "verbose"}))).map_err(|e| e.0),
            Err(INVALID_PARAMS)
        );
        assert!(log_level(None).is_err());
    }

    #[test]
    fn prompts_refuse_unknown_names_and_missing_arguments() {
        let get = |p: Value| get_prompt(p.as_object().unwrap_or(&Map::new()), Some("2025-11-25"));
        assert!(get(json!({"name": "summarize_workspace"})).is_ok());
        assert_eq!(
            get(json!({"name": "nope"})).map_err(|e| e.0),
            Err(INVALID_PARAMS)
        );
        assert_eq!(
            get(json!({"name": "explain_file"})).map_err(|e| e.0),
            Err(INVALID_PARAMS)
        );
        let ok = get(json!({"name": "explain_file", "arguments": {"path": "a.txt"}}));
        assert_eq!(
            ok.map(|r| r["messages"].as_array().map_or(0, Vec::len)),
            Ok(2)
        );
    }
}
