//! parity's own message validation against the official MCP JSON schemas, the third opinion.
//!
//! The schemas are read at test time from `$PARITY_SCHEMAS_DIR/mcp/`, by default
//! `<workspace>/../shared/spec/schemas/mcp/` (never copied into the project; without them each
//! test says what it did not cross-check and passes, unless `PARITY_REQUIRE_SCHEMAS=1`: see
//! `official/mod.rs`). For each revision the test drives `parity reference mcp` over real
//! pipes, validates EVERY message the reference emits against the revision's `JSONRPCMessage`,
//! and then checks that parity's validator (`parity_harness::protocol::validate`) and the official schema
//! agree on a corpus: the reference's own results and errors, mutations of them (required fields
//! dropped, wrong types, `inputSchema: null`, content type `"txt"`, no `resultType` in
//! 2026-07-28, ...) and the official 2026-07-28 examples.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::official;

use parity_harness::protocol::validate::{
    validate_error, validate_result, validate_tool, validate_tool_at,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const MODERN: &str = "2026-07-28";
const ALL_REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];
/// Upper bound for one reply from the reference; not a timing assertion.
const REPLY_DEADLINE: Duration = Duration::from_secs(60);

/// The official MCP schema directory, or `None` (after saying so) when it is absent.
fn schema_dir(what: &str) -> Option<PathBuf> {
    official::dir("mcp", what)
}

/// One revision's official schema document.
struct Schema {
    rev: &'static str,
    doc: Value,
    /// `definitions` (draft-07 revisions) or `$defs` (2020-12 revisions).
    defs_key: &'static str,
}

impl Schema {
    fn load(dir: &Path, rev: &'static str) -> Schema {
        let path = dir.join(format!("{rev}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read the official schema {}: {e}", path.display()));
        let doc: Value = serde_json::from_str(&text).expect("schema is JSON");
        let defs_key = if doc.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        Schema { rev, doc, defs_key }
    }

    fn has(&self, def: &str) -> bool {
        self.doc
            .get(self.defs_key)
            .and_then(|d| d.get(def))
            .is_some()
    }

    /// A validator for the definition at `pointer` (`InitializeResult`,
    /// `JSONRPCError/properties/error`, ...): the full document is the root resource, with a
    /// root `$ref` to the definition, so every internal `#/...` reference resolves.
    fn validator(&self, pointer: &str) -> jsonschema::Validator {
        let mut root = self.doc.clone();
        root.as_object_mut()
            .expect("schema root is an object")
            .insert(
                "$ref".into(),
                json!(format!("#/{}/{pointer}", self.defs_key)),
            );
        jsonschema::validator_for(&root)
            .unwrap_or_else(|e| panic!("{}: cannot build a validator for {pointer}: {e}", self.rev))
    }

    /// The error object definition: `Error` (2025-11-25 on) or the inline `error` member of
    /// `JSONRPCError` (earlier revisions).
    fn error_validator(&self) -> jsonschema::Validator {
        if self.has("Error") {
            self.validator("Error")
        } else {
            self.validator("JSONRPCError/properties/error")
        }
    }

    /// The result definition of a request method, if this revision has one.
    fn result_def(&self, method: &str) -> Option<&'static str> {
        let def = match method {
            "initialize" => "InitializeResult",
            "tools/list" => "ListToolsResult",
            "tools/call" => "CallToolResult",
            "server/discover" => "DiscoverResult",
            "ping" => "EmptyResult",
            _ => return None,
        };
        self.has(def).then_some(def)
    }
}

/// The official verdict with its first error, for messages.
fn official(v: &jsonschema::Validator, instance: &Value) -> Result<(), String> {
    match v.iter_errors(instance).next() {
        None => Ok(()),
        Some(e) => Err(format!("{e} at {}", e.instance_path())),
    }
}

// ---------------------------------------------------------------------------------------------
// Driving the reference over pipes
// ---------------------------------------------------------------------------------------------

/// A `parity reference mcp` process and every line it wrote to stdout.
struct Reference {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every stdout line, parsed; a line that is not JSON fails the test at once.
    emitted: Vec<Value>,
    next_id: i64,
    modern: bool,
    /// (method, response) for every request sent.
    exchanges: Vec<(String, Value)>,
}

impl Reference {
    fn start(modern: bool) -> Reference {
        let mut child = Command::new(common::parity())
            .args(["reference", "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start parity reference mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Reference {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            emitted: Vec::new(),
            next_id: 1,
            modern,
            exchanges: Vec::new(),
        }
    }

    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut bytes = serde_json::to_vec(msg).expect("serialize");
        bytes.push(b'\n');
        stdin.write_all(&bytes).expect("write to the reference");
        stdin.flush().expect("flush");
    }

    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(REPLY_DEADLINE)
            .expect("the reference answered within the deadline");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the reference wrote a non-JSON line ({e}): {line}"));
        self.emitted.push(v.clone());
        v
    }

    /// Sends a request (with the 2026-07-28 `_meta` in the modern era) and returns its response.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = params;
        if self.modern {
            params.as_object_mut().expect("params object").insert(
                "_meta".into(),
                json!({
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "parity-tests", "version": "0"},
                }),
            );
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.recv();
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                self.exchanges.push((method.to_string(), v.clone()));
                return v;
            }
        }
    }

    /// Closes stdin and waits for the exit; any late line is still collected and validated.
    fn finish(mut self) -> (Vec<Value>, Vec<(String, Value)>) {
        drop(self.stdin.take());
        while let Ok(line) = self.lines.recv_timeout(REPLY_DEADLINE) {
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("the reference wrote a non-JSON line ({e}): {line}"));
            self.emitted.push(v);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.emitted, self.exchanges)
    }
}

/// One session at `rev`: the handshake (legacy) or discovery (modern), every tools/list page,
/// tool calls that succeed, refuse and fail, and requests that must be errors.
fn session(rev: &str) -> (Vec<Value>, Vec<(String, Value)>) {
    let modern = rev == MODERN;
    let mut r = Reference::start(modern);
    if modern {
        r.request("server/discover", json!({}));
    } else {
        let init = r.request(
            "initialize",
            json!({"protocolVersion": rev, "capabilities": {},
                   "clientInfo": {"name": "parity-tests", "version": "0"}}),
        );
        assert_eq!(
            init.pointer("/result/protocolVersion"),
            Some(&json!(rev)),
            "the reference speaks {rev}"
        );
        r.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r.request("ping", json!({}));
    }
    let mut cursor: Option<Value> = None;
    let mut names = Vec::new();
    for _ in 0..50 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = r.request("tools/list", params);
        for t in page
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            names.push(t["name"].as_str().unwrap_or("").to_string());
        }
        cursor = page.pointer("/result/nextCursor").cloned();
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(names.len(), 6, "{rev}: six tools listed: {names:?}");
    for (name, args) in [
        ("read_file", json!({"path": "README.md"})),
        ("read_file", json!({})),
        ("read_file", json!({"path": "../../etc/passwd"})),
        ("read_file", json!({"path": "no-such-file.txt"})),
        ("write_file", json!({"path": "out.txt", "content": "é ✓"})),
        ("list_dir", json!({})),
        ("status", json!({})),
        ("retry", json!({})),
        ("exec", json!({"argv": ["definitely-not-allowed"]})),
        ("no_such_tool", json!({})),
    ] {
        r.request("tools/call", json!({"name": name, "arguments": args}));
    }
    r.request("tools/list", json!({"cursor": "not-a-cursor"}));
    r.request("no/such/method", json!({}));
    r.finish()
}

/// One revision's session with the reference.
struct Captured {
    rev: &'static str,
    /// Every message the reference wrote.
    emitted: Vec<Value>,
    /// (method, response) for every request sent.
    exchanges: Vec<(String, Value)>,
}

fn sessions() -> &'static [Captured] {
    static S: std::sync::OnceLock<Vec<Captured>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        ALL_REVISIONS
            .iter()
            .map(|rev| {
                let (emitted, exchanges) = session(rev);
                Captured {
                    rev,
                    emitted,
                    exchanges,
                }
            })
            .collect()
    })
}

// ---------------------------------------------------------------------------------------------
// Every message the reference emits is valid
// ---------------------------------------------------------------------------------------------

#[test]
fn every_message_the_reference_emits_is_schema_valid() {
    let Some(dir) = schema_dir("every message of the reference against JSONRPCMessage") else {
        return;
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    for Captured {
        rev,
        emitted,
        exchanges,
    } in sessions()
    {
        let schema = Schema::load(&dir, rev);
        let message = schema.validator("JSONRPCMessage");
        assert!(!emitted.is_empty(), "{rev}: nothing emitted");
        for m in emitted {
            checked += 1;
            if let Err(e) = official(&message, m) {
                problems.push(format!("{rev}: JSONRPCMessage: {e}\n  {m}"));
            }
        }
        // Results and errors against their own definitions, and parity agrees they are valid.
        let error_def = schema.error_validator();
        for (method, resp) in exchanges {
            if let Some(result) = resp.get("result") {
                if let Some(def) = schema.result_def(method) {
                    if let Err(e) = official(&schema.validator(def), result) {
                        problems.push(format!("{rev}: {def}: {e}\n  {resp}"));
                    }
                }
                let ours = validate_result(method, result, rev);
                if !ours.is_empty() {
                    problems.push(format!("{rev}: parity rejects {method} result: {ours:?}"));
                }
            } else if let Some(error) = resp.get("error") {
                if let Err(e) = official(&error_def, error) {
                    problems.push(format!("{rev}: error object: {e}\n  {resp}"));
                }
                let ours = validate_error(error);
                if !ours.is_empty() {
                    problems.push(format!("{rev}: parity rejects {method} error: {ours:?}"));
                }
            } else {
                problems.push(format!("{rev}: {method}: neither result nor error: {resp}"));
            }
        }
        // The session produced both kinds, so both paths above were exercised.
        assert!(
            exchanges.iter().any(|(_, r)| r.get("error").is_some()),
            "{rev}"
        );
        assert!(
            exchanges
                .iter()
                .any(|(m, r)| m == "tools/call"
                    && r.pointer("/result/isError") == Some(&json!(true))),
            "{rev}: an isError result"
        );
    }
    assert!(checked > 50, "only {checked} messages checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Agreement on mutated instances
// ---------------------------------------------------------------------------------------------

/// Expected validity of a mutated instance per the official schema at a revision.
#[derive(Clone, Copy)]
enum Expect {
    Valid,
    Invalid,
    /// Valid at the listed revisions, invalid elsewhere.
    ValidAt(&'static [&'static str]),
    /// Invalid at the listed revisions, valid elsewhere.
    InvalidAt(&'static [&'static str]),
}

impl Expect {
    fn valid(self, rev: &str) -> bool {
        match self {
            Expect::Valid => true,
            Expect::Invalid => false,
            Expect::ValidAt(l) => l.contains(&rev),
            Expect::InvalidAt(l) => !l.contains(&rev),
        }
    }
}

/// A mutation of a captured result (or error object): what it does and what it should yield.
struct Mutation {
    name: &'static str,
    /// The request method whose result it mutates, or `"error"` for error objects.
    target: &'static str,
    /// Revisions it applies to (empty = all).
    only: &'static [&'static str],
    expect: Expect,
    apply: fn(&mut Value),
}

fn remove(v: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    if let Some(o) = v.pointer_mut(parent).and_then(Value::as_object_mut) {
        o.remove(key);
    }
}

fn set(v: &mut Value, pointer: &str, x: Value) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    match v.pointer_mut(parent) {
        Some(Value::Object(o)) => {
            o.insert(key.to_string(), x);
        }
        Some(Value::Array(a)) => {
            let i: usize = key.parse().expect("index");
            a[i] = x;
        }
        _ => panic!("no parent for {pointer} in {v}"),
    }
}

const LEGACY_ONLY: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN_ONLY: &[&str] = &[MODERN];

fn keep(_: &mut Value) {}

macro_rules! m {
    ($name:expr, $target:expr, $only:expr, $expect:expr, keep) => {
        Mutation {
            name: $name,
            target: $target,
            only: $only,
            expect: $expect,
            apply: keep,
        }
    };
    ($name:expr, $target:expr, $only:expr, $expect:expr, |$v:ident| $body:expr) => {
        Mutation {
            name: $name,
            target: $target,
            only: $only,
            expect: $expect,
            apply: |$v: &mut Value| {
                $body;
            },
        }
    };
}

fn mutations() -> Vec<Mutation> {
    use Expect::*;
    vec![
        // --- initialize ---------------------------------------------------------------------
        m!("unchanged", "initialize", LEGACY_ONLY, Valid, keep),
        m!("extra member", "initialize", LEGACY_ONLY, Valid, |v| set(
            v,
            "/x-extra",
            json!(1)
        )),
        m!("no instructions", "initialize", LEGACY_ONLY, Valid, |v| {
            remove(v, "/instructions")
        }),
        m!(
            "no protocolVersion",
            "initialize",
            LEGACY_ONLY,
            Invalid,
            |v| remove(v, "/protocolVersion")
        ),
        m!(
            "protocolVersion 1",
            "initialize",
            LEGACY_ONLY,
            Invalid,
            |v| set(v, "/protocolVersion", json!(1))
        ),
        m!("no capabilities", "initialize", LEGACY_ONLY, Invalid, |v| {
            remove(v, "/capabilities")
        }),
        m!(
            "capabilities string",
            "initialize",
            LEGACY_ONLY,
            Invalid,
            |v| set(v, "/capabilities", json!("tools"))
        ),
        m!("no serverInfo", "initialize", LEGACY_ONLY, Invalid, |v| {
            remove(v, "/serverInfo")
        }),
        m!(
            "serverInfo array",
            "initialize",
            LEGACY_ONLY,
            Invalid,
            |v| set(v, "/serverInfo", json!([]))
        ),
        m!(
            "no serverInfo.name",
            "initialize",
            LEGACY_ONLY,
            Invalid,
            |v| remove(v, "/serverInfo/name")
        ),
        m!(
            "no serverInfo.version",
            "initialize",
            LEGACY_ONLY,
            Invalid,
            |v| remove(v, "/serverInfo/version")
        ),
        m!(
            "serverInfo.name 1",
            "initialize",
            LEGACY_ONLY,
            Invalid,
            |v| set(v, "/serverInfo/name", json!(1))
        ),
        m!("instructions 5", "initialize", LEGACY_ONLY, Invalid, |v| {
            set(v, "/instructions", json!(5))
        }),
        m!("_meta string", "initialize", LEGACY_ONLY, Invalid, |v| set(
            v,
            "/_meta",
            json!("x")
        )),
        m!("result array", "initialize", LEGACY_ONLY, Invalid, |v| *v =
            json!([])),
        // --- tools/list ---------------------------------------------------------------------
        m!("unchanged", "tools/list", &[], Valid, keep),
        m!("no tools listed", "tools/list", &[], Valid, |v| set(
            v,
            "/tools",
            json!([])
        )),
        m!("nextCursor string", "tools/list", &[], Valid, |v| set(
            v,
            "/nextCursor",
            json!("2")
        )),
        m!("no tools", "tools/list", &[], Invalid, |v| remove(
            v, "/tools"
        )),
        m!("tools object", "tools/list", &[], Invalid, |v| set(
            v,
            "/tools",
            json!({})
        )),
        m!("tool is a string", "tools/list", &[], Invalid, |v| set(
            v,
            "/tools/0",
            json!("read_file")
        )),
        m!("tool without name", "tools/list", &[], Invalid, |v| remove(
            v,
            "/tools/0/name"
        )),
        m!("tool name 7", "tools/list", &[], Invalid, |v| set(
            v,
            "/tools/0/name",
            json!(7)
        )),
        m!("no inputSchema", "tools/list", &[], Invalid, |v| remove(
            v,
            "/tools/0/inputSchema"
        )),
        m!("inputSchema null", "tools/list", &[], Invalid, |v| set(
            v,
            "/tools/0/inputSchema",
            Value::Null
        )),
        m!("inputSchema string", "tools/list", &[], Invalid, |v| set(
            v,
            "/tools/0/inputSchema",
            json!("object")
        )),
        m!("inputSchema type array", "tools/list", &[], Invalid, |v| {
            set(v, "/tools/0/inputSchema/type", json!("array"))
        }),
        m!(
            "inputSchema without type",
            "tools/list",
            &[],
            Invalid,
            |v| remove(v, "/tools/0/inputSchema/type")
        ),
        m!("description 1", "tools/list", &[], Invalid, |v| set(
            v,
            "/tools/0/description",
            json!(1)
        )),
        m!("nextCursor 3", "tools/list", &[], Invalid, |v| set(
            v,
            "/nextCursor",
            json!(3)
        )),
        m!(
            "title false",
            "tools/list",
            &[],
            InvalidAt(&["2025-06-18", "2025-11-25", MODERN]),
            |v| set(v, "/tools/0/title", json!(false))
        ),
        m!(
            "annotations string",
            "tools/list",
            &[],
            ValidAt(&["2024-11-05"]),
            |v| set(v, "/tools/0/annotations", json!("x"))
        ),
        m!(
            "outputSchema array type",
            "tools/list",
            &[],
            ValidAt(&["2024-11-05", "2025-03-26", MODERN]),
            |v| set(v, "/tools/0/outputSchema", json!({"type": "array"}))
        ),
        m!("outputSchema object", "tools/list", &[], Valid, |v| set(
            v,
            "/tools/0/outputSchema",
            json!({"type": "object"})
        )),
        m!("no resultType", "tools/list", MODERN_ONLY, Invalid, |v| {
            remove(v, "/resultType")
        }),
        m!("resultType 1", "tools/list", MODERN_ONLY, Invalid, |v| set(
            v,
            "/resultType",
            json!(1)
        )),
        m!("no ttlMs", "tools/list", MODERN_ONLY, Invalid, |v| remove(
            v, "/ttlMs"
        )),
        m!("ttlMs -1", "tools/list", MODERN_ONLY, Invalid, |v| set(
            v,
            "/ttlMs",
            json!(-1)
        )),
        m!("ttlMs string", "tools/list", MODERN_ONLY, Invalid, |v| set(
            v,
            "/ttlMs",
            json!("300")
        )),
        m!("no cacheScope", "tools/list", MODERN_ONLY, Invalid, |v| {
            remove(v, "/cacheScope")
        }),
        m!(
            "cacheScope everyone",
            "tools/list",
            MODERN_ONLY,
            Invalid,
            |v| set(v, "/cacheScope", json!("everyone"))
        ),
        // --- tools/call ---------------------------------------------------------------------
        m!("unchanged", "tools/call", &[], Valid, keep),
        m!("isError true", "tools/call", &[], Valid, |v| set(
            v,
            "/isError",
            json!(true)
        )),
        m!("no isError", "tools/call", &[], Valid, |v| remove(
            v, "/isError"
        )),
        m!("empty content", "tools/call", &[], Valid, |v| set(
            v,
            "/content",
            json!([])
        )),
        m!(
            "no structuredContent",
            "tools/call",
            &[],
            Valid,
            |v| remove(v, "/structuredContent")
        ),
        m!("no content", "tools/call", &[], Invalid, |v| remove(
            v, "/content"
        )),
        m!("content string", "tools/call", &[], Invalid, |v| set(
            v,
            "/content",
            json!("x")
        )),
        m!("content type txt", "tools/call", &[], Invalid, |v| set(
            v,
            "/content/0/type",
            json!("txt")
        )),
        m!("content without type", "tools/call", &[], Invalid, |v| {
            remove(v, "/content/0/type")
        }),
        m!(
            "text content without text",
            "tools/call",
            &[],
            Invalid,
            |v| remove(v, "/content/0/text")
        ),
        m!("text 1", "tools/call", &[], Invalid, |v| set(
            v,
            "/content/0/text",
            json!(1)
        )),
        m!("isError string", "tools/call", &[], Invalid, |v| set(
            v,
            "/isError",
            json!("false")
        )),
        m!("image without mimeType", "tools/call", &[], Invalid, |v| {
            set(v, "/content", json!([{"type": "image", "data": "AA=="}]))
        }),
        m!("image", "tools/call", &[], Valid, |v| set(
            v,
            "/content",
            json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}])
        )),
        m!(
            "audio",
            "tools/call",
            &[],
            InvalidAt(&["2024-11-05"]),
            |v| set(
                v,
                "/content",
                json!([{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}])
            )
        ),
        m!(
            "resource_link",
            "tools/call",
            &[],
            ValidAt(&["2025-06-18", "2025-11-25", MODERN]),
            |v| set(
                v,
                "/content",
                json!([{"type": "resource_link", "uri": "file:///x", "name": "x"}])
            )
        ),
        m!(
            "resource_link without name",
            "tools/call",
            &[],
            Invalid,
            |v| set(
                v,
                "/content",
                json!([{"type": "resource_link", "uri": "file:///x"}])
            )
        ),
        m!("embedded text resource", "tools/call", &[], Valid, |v| set(
            v,
            "/content",
            json!([{"type": "resource", "resource": {"uri": "file:///x", "text": "x"}}])
        )),
        m!(
            "embedded resource without uri",
            "tools/call",
            &[],
            Invalid,
            |v| set(
                v,
                "/content",
                json!([{"type": "resource", "resource": {"text": "x"}}])
            )
        ),
        m!(
            "structuredContent string",
            "tools/call",
            &[],
            InvalidAt(&["2025-06-18", "2025-11-25"]),
            |v| set(v, "/structuredContent", json!("str"))
        ),
        m!(
            "structuredContent array",
            "tools/call",
            &[],
            InvalidAt(&["2025-06-18", "2025-11-25"]),
            |v| set(v, "/structuredContent", json!([1, 2]))
        ),
        m!("no resultType", "tools/call", MODERN_ONLY, Invalid, |v| {
            remove(v, "/resultType")
        }),
        // --- server/discover ----------------------------------------------------------------
        m!("unchanged", "server/discover", MODERN_ONLY, Valid, keep),
        m!(
            "no instructions",
            "server/discover",
            MODERN_ONLY,
            Valid,
            |v| remove(v, "/instructions")
        ),
        m!(
            "no supportedVersions",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| remove(v, "/supportedVersions")
        ),
        m!(
            "supportedVersions string",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| set(v, "/supportedVersions", json!(MODERN))
        ),
        m!(
            "supportedVersions [1]",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| set(v, "/supportedVersions", json!([1]))
        ),
        m!(
            "no capabilities",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| remove(v, "/capabilities")
        ),
        m!(
            "capabilities array",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| set(v, "/capabilities", json!([]))
        ),
        m!("no ttlMs", "server/discover", MODERN_ONLY, Invalid, |v| {
            remove(v, "/ttlMs")
        }),
        m!(
            "ttlMs -1",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| set(v, "/ttlMs", json!(-1))
        ),
        m!("ttlMs 1.5", "server/discover", MODERN_ONLY, Invalid, |v| {
            set(v, "/ttlMs", json!(1.5))
        }),
        m!(
            "no cacheScope",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| remove(v, "/cacheScope")
        ),
        m!(
            "cacheScope everyone",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| set(v, "/cacheScope", json!("everyone"))
        ),
        m!(
            "no resultType",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| remove(v, "/resultType")
        ),
        m!(
            "instructions 1",
            "server/discover",
            MODERN_ONLY,
            Invalid,
            |v| set(v, "/instructions", json!(1))
        ),
        // --- error objects ------------------------------------------------------------------
        m!("unchanged", "error", &[], Valid, keep),
        m!("data object", "error", &[], Valid, |v| set(
            v,
            "/data",
            json!({"reason": "x"})
        )),
        m!("data null", "error", &[], Valid, |v| set(
            v,
            "/data",
            Value::Null
        )),
        m!("no code", "error", &[], Invalid, |v| remove(v, "/code")),
        m!("code string", "error", &[], Invalid, |v| set(
            v,
            "/code",
            json!("-32602")
        )),
        m!("code 1.5", "error", &[], Invalid, |v| set(
            v,
            "/code",
            json!(1.5)
        )),
        m!("no message", "error", &[], Invalid, |v| remove(
            v, "/message"
        )),
        m!("message 3", "error", &[], Invalid, |v| set(
            v,
            "/message",
            json!(3)
        )),
        m!("error array", "error", &[], Invalid, |v| *v = json!([])),
    ]
}

#[test]
fn parity_and_the_official_schema_agree_on_mutations() {
    let Some(dir) = schema_dir("parity's MCP validator against the official schemas on mutations")
    else {
        return;
    };
    let muts = mutations();
    let mut disagreements = Vec::new();
    let mut wrong_corpus = Vec::new();
    let mut compared = 0;
    let mut invalid_seen = 0;
    for Captured { rev, exchanges, .. } in sessions() {
        let schema = Schema::load(&dir, rev);
        let error_def = schema.error_validator();
        let mut validators: std::collections::HashMap<&str, jsonschema::Validator> =
            std::collections::HashMap::new();
        // One sample per target: the first result of each method, the first error object.
        let mut samples: Vec<(&str, Value)> = Vec::new();
        for (method, resp) in exchanges {
            let (target, value) = match (resp.get("result"), resp.get("error")) {
                (Some(r), _) => (method.as_str(), r),
                (None, Some(e)) => ("error", e),
                _ => continue,
            };
            // For tools/call, start from a result that carries structuredContent.
            if target == "tools/call" && value.get("structuredContent").is_none() {
                continue;
            }
            if !samples.iter().any(|(t, _)| *t == target) {
                samples.push((target, value.clone()));
            }
        }
        for mu in &muts {
            if !mu.only.is_empty() && !mu.only.contains(rev) {
                continue;
            }
            let Some((_, base)) = samples.iter().find(|(t, _)| *t == mu.target) else {
                wrong_corpus.push(format!("{rev}: no captured sample for {}", mu.target));
                continue;
            };
            let mut inst = base.clone();
            (mu.apply)(&mut inst);
            let (theirs, ours) = if mu.target == "error" {
                (official(&error_def, &inst), validate_error(&inst))
            } else {
                let def = schema
                    .result_def(mu.target)
                    .unwrap_or_else(|| panic!("{rev}: no definition for {}", mu.target));
                let v = validators
                    .entry(def)
                    .or_insert_with(|| schema.validator(def));
                (official(v, &inst), validate_result(mu.target, &inst, rev))
            };
            compared += 1;
            let expected = mu.expect.valid(rev);
            if !expected {
                invalid_seen += 1;
            }
            if theirs.is_ok() != expected {
                wrong_corpus.push(format!(
                    "{rev} {} / {}: expected the schema to say valid={expected}, it says {theirs:?}",
                    mu.target, mu.name
                ));
            }
            if theirs.is_ok() != ours.is_empty() {
                disagreements.push(format!(
                    "{rev} {} / {}: official {theirs:?}, parity {ours:?}\n  instance: {inst}",
                    mu.target, mu.name
                ));
            }
        }
    }
    assert!(compared > 200, "only {compared} comparisons");
    assert!(invalid_seen > 100, "only {invalid_seen} invalid instances");
    assert!(wrong_corpus.is_empty(), "{}", wrong_corpus.join("\n"));
    assert!(
        disagreements.is_empty(),
        "parity and the official schema disagree:\n{}",
        disagreements.join("\n")
    );
}

#[test]
fn validate_tool_agrees_with_the_tool_definition() {
    let Some(dir) = schema_dir("validate_tool against the Tool definition") else {
        return;
    };
    // Expected validity, or None where it depends on the revision (then the official schema
    // decides and parity must agree).
    let tools: [(Value, Option<bool>); 12] = [
        (
            json!({"name": "a", "inputSchema": {"type": "object"}}),
            Some(true),
        ),
        (
            json!({"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}, "description": "d"}),
            Some(true),
        ),
        (json!({"name": "a"}), Some(false)),
        (json!({"inputSchema": {"type": "object"}}), Some(false)),
        (json!({"name": "a", "inputSchema": null}), Some(false)),
        (
            json!({"name": "a", "inputSchema": {"type": "string"}}),
            Some(false),
        ),
        (json!({"name": "a", "inputSchema": {}}), Some(false)),
        (
            json!({"name": 1, "inputSchema": {"type": "object"}}),
            Some(false),
        ),
        (json!(["a"]), Some(false)),
        // Members only some revisions define.
        (
            json!({"name": "a", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
            None,
        ),
        (
            json!({"name": "a", "inputSchema": {"type": "object"}, "title": 1}),
            None,
        ),
        (
            json!({"name": "a", "inputSchema": {"type": "object"}, "annotations": []}),
            None,
        ),
    ];
    let mut problems = Vec::new();
    for rev in ALL_REVISIONS {
        let schema = Schema::load(&dir, rev);
        let tool = schema.validator("Tool");
        for (t, valid) in &tools {
            let theirs = official(&tool, t);
            let mut ours = Vec::new();
            validate_tool_at(t, rev, "tool", &mut ours);
            let valid = valid.unwrap_or(theirs.is_ok());
            if theirs.is_ok() != valid || ours.is_empty() != valid {
                problems.push(format!(
                    "{rev}: {t}: expected valid={valid}; official {theirs:?}, parity {ours:?}"
                ));
            }
        }
        // The revision-free entry point reads tools as 2025-11-25 does.
        if rev == "2025-11-25" {
            for (t, _) in &tools {
                let mut a = Vec::new();
                let mut b = Vec::new();
                validate_tool(t, "tool", &mut a);
                validate_tool_at(t, rev, "tool", &mut b);
                assert_eq!(a, b, "{t}");
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// The official 2026-07-28 examples
// ---------------------------------------------------------------------------------------------

fn examples(dir: &Path, kind: &str) -> Vec<(String, Value)> {
    let dir = dir.join(format!("examples-{MODERN}")).join(kind);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Value)> = rd
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).expect("read example");
            let v = serde_json::from_str(&text)
                .unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
            (format!("{kind}/{}", e.file_name().to_string_lossy()), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn parity_accepts_the_official_2026_examples() {
    let Some(dir) = schema_dir("parity's validator on the official 2026-07-28 examples") else {
        return;
    };
    let schema = Schema::load(&dir, MODERN);
    let mut problems = Vec::new();
    let mut seen = 0;
    for (kind, method) in [
        ("DiscoverResult", "server/discover"),
        ("ListToolsResult", "tools/list"),
        ("CallToolResult", "tools/call"),
    ] {
        let v = schema.validator(kind);
        for (name, ex) in examples(&dir, kind) {
            seen += 1;
            if let Err(e) = official(&v, &ex) {
                problems.push(format!(
                    "{name}: the official schema rejects its own example: {e}"
                ));
            }
            let ours = validate_result(method, &ex, MODERN);
            if !ours.is_empty() {
                problems.push(format!("{name}: parity rejects it: {ours:?}"));
            }
        }
        // The `…Response` examples are whole messages.
        let msg = schema.validator("JSONRPCMessage");
        for (name, ex) in examples(&dir, &format!("{kind}Response")) {
            seen += 1;
            if let Err(e) = official(&msg, &ex) {
                problems.push(format!("{name}: not a JSONRPCMessage: {e}"));
            }
            match ex.get("result") {
                Some(r) => {
                    let ours = validate_result(method, r, MODERN);
                    if !ours.is_empty() {
                        problems.push(format!("{name}: parity rejects its result: {ours:?}"));
                    }
                }
                None => problems.push(format!("{name}: no result")),
            }
        }
    }
    // Error examples: parity's error validation accepts every one.
    let err = schema.validator("Error");
    for kind in [
        "InvalidParamsError",
        "MethodNotFoundError",
        "InternalError",
        "ParseError",
    ] {
        for (name, ex) in examples(&dir, kind) {
            seen += 1;
            // Some error examples are whole responses; judge the error object.
            let obj = ex.get("error").unwrap_or(&ex);
            if let Err(e) = official(&err, obj) {
                problems.push(format!("{name}: the official Error rejects it: {e}"));
            }
            let ours = validate_error(obj);
            if !ours.is_empty() {
                problems.push(format!("{name}: parity rejects it: {ours:?}"));
            }
        }
    }
    assert!(
        seen >= 8,
        "only {seen} examples found under {}",
        dir.display()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every file under `dir` whose name is in `names`, skipping build output and VCS data.
fn files_named(dir: &Path, names: &[String], found: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules" | ".venv") {
                files_named(&p, names, found);
            }
        } else if names.contains(&name) {
            found.push(p);
        }
    }
}

#[test]
fn the_schemas_are_read_from_outside_the_repo_never_copied_in() {
    // The official schemas must not be copied into the project (DESIGN.md): no file of the
    // repository carries one of their names, with or without the schemas beside it.
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("repo");
    let mut names: Vec<String> = ALL_REVISIONS.iter().map(|r| format!("{r}.json")).collect();
    names.extend(["v1-schema.json".to_owned(), "v1-meta.json".to_owned()]);
    let mut copies = Vec::new();
    files_named(&repo, &names, &mut copies);
    assert!(
        copies.is_empty(),
        "official schemas copied into the repository: {copies:?}"
    );
    let Some(dir) = schema_dir("that the schema directory lies outside the repository") else {
        return;
    };
    let shared = dir.canonicalize().expect("schema dir");
    assert!(
        !shared.starts_with(&repo),
        "{} is inside the repo",
        shared.display()
    );
    for rev in ALL_REVISIONS {
        assert!(shared.join(format!("{rev}.json")).is_file(), "{rev}.json");
    }
}
