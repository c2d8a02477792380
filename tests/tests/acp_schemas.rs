//! parity's own ACP v1 message validation (`acp.schema.v1-messages`) agrees with the official
//! ACP v1 JSON schema (read from `$PARITY_SCHEMAS_DIR/acp/`, by default
//! `../shared/spec/schemas/acp/`, never copied) on a corpus of valid messages and one-field
//! mutations of them. Without the schema each test says what it did not cross-check and passes,
//! unless `PARITY_REQUIRE_SCHEMAS=1` (see `official/mod.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parity_harness::profiles::acp::{validate_agent_message, validate_result};
use serde_json::{json, Value};

use crate::official;

/// The official ACP v1 schema, or `None` (after saying that `what` was not cross-checked).
fn schema(what: &str) -> Option<Value> {
    let path = official::dir("acp", what)?.join("v1-schema.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
    Some(serde_json::from_str(&text).unwrap())
}

fn validator(doc: &Value, def: &str) -> jsonschema::Validator {
    let root = json!({"$defs": doc["$defs"], "$ref": format!("#/$defs/{def}")});
    jsonschema::validator_for(&root).unwrap()
}

/// (method, official definition, valid result, mutations that break it).
fn results() -> Vec<(&'static str, &'static str, Value, Vec<Value>)> {
    let init = json!({
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": false,
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
            "mcpCapabilities": {"http": false, "sse": false},
            "_meta": {"parity": {"toolMethod": "_parity/tool"}}
        },
        "authMethods": [{"id": "token", "name": "Token"}],
        "agentInfo": {"name": "a", "version": "1"}
    });
    let with = |path: &str, v: Value| {
        let mut x = init.clone();
        *x.pointer_mut(path).unwrap() = v;
        x
    };
    let without = |key: &str| {
        let mut x = init.clone();
        x.as_object_mut().unwrap().remove(key);
        x
    };
    vec![
        (
            "initialize",
            "InitializeResponse",
            init.clone(),
            vec![
                with("/protocolVersion", json!("1")),
                with("/protocolVersion", json!(70000)),
                with("/protocolVersion", json!(-1)),
                without("protocolVersion"),
                with("/agentCapabilities/loadSession", json!("no")),
                with("/agentCapabilities/promptCapabilities/image", json!(1)),
                with("/agentCapabilities/mcpCapabilities/http", json!("false")),
                with("/agentCapabilities/_meta", json!([])),
                with("/authMethods", json!({})),
                with("/authMethods/0/id", json!(3)),
                with("/agentInfo/name", json!(null)),
                with("/agentInfo", json!("parity")),
                json!([]),
            ],
        ),
        (
            "session/new",
            "NewSessionResponse",
            json!({"sessionId": "sess_1"}),
            vec![
                json!({}),
                json!({"sessionId": 1}),
                json!({"sessionId": "s", "modes": "all"}),
                json!({"sessionId": "s", "configOptions": {}}),
                json!("sess_1"),
            ],
        ),
        (
            "session/prompt",
            "PromptResponse",
            json!({"stopReason": "end_turn"}),
            vec![
                json!({}),
                json!({"stopReason": "done"}),
                json!({"stopReason": 1}),
                json!({"stopReason": "Cancelled"}),
                json!(null),
            ],
        ),
    ]
}

#[test]
fn parity_and_the_official_schema_agree_on_v1_results() {
    let Some(doc) = schema("parity's ACP result validation") else {
        return;
    };
    let mut checked = 0;
    for (method, def, valid, mutations) in results() {
        let v = validator(&doc, def);
        let ours = validate_result(method, &valid);
        assert!(v.is_valid(&valid), "{def}: the base case must be valid");
        assert!(
            ours.is_empty(),
            "{method}: parity rejects a valid result: {ours:?}"
        );
        for m in mutations {
            assert!(!v.is_valid(&m), "{def}: the mutation must be invalid: {m}");
            assert!(
                !validate_result(method, &m).is_empty(),
                "{method}: parity accepts what the official schema rejects: {m}"
            );
            checked += 1;
        }
        // Every stop reason the schema knows, parity knows.
        if method == "session/prompt" {
            for r in parity_harness::protocol::acp::STOP_REASONS {
                let m = json!({"stopReason": r});
                assert!(v.is_valid(&m), "{r}");
                assert!(validate_result(method, &m).is_empty(), "{r}");
            }
        }
    }
    assert!(checked >= 20);
}

#[test]
fn parity_and_the_official_schema_agree_on_session_updates() {
    let Some(doc) = schema("parity's session/update validation") else {
        return;
    };
    let v = validator(&doc, "SessionNotification");
    let chunk = |kind: &str| {
        json!({"sessionId": "s", "update": {"sessionUpdate": kind,
            "content": {"type": "text", "text": "hi"}}})
    };
    for kind in [
        "agent_message_chunk",
        "user_message_chunk",
        "agent_thought_chunk",
    ] {
        let n = chunk(kind);
        assert!(v.is_valid(&n), "{kind}");
        assert!(
            validate_agent_message("session/update", Some(&n)).is_empty(),
            "{kind}"
        );
    }
    let bad = [
        chunk("agent_message"),
        json!({"sessionId": "s"}),
        json!({"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}}),
        json!({"sessionId": 3, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}}),
        json!({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}),
        json!({"sessionId": "s", "update": "agent_message_chunk"}),
    ];
    for n in bad {
        assert!(!v.is_valid(&n), "the schema must reject {n}");
        assert!(
            !validate_agent_message("session/update", Some(&n)).is_empty(),
            "parity accepts what the official schema rejects: {n}"
        );
    }
    // parity's list of update kinds is the schema's.
    let schema_text = doc["$defs"]["SessionUpdate"].to_string();
    for kind in parity_harness::profiles::acp::SESSION_UPDATES {
        assert!(
            schema_text.contains(&format!("\"{kind}\"")),
            "{kind} is not in the schema"
        );
    }
}

#[test]
fn parity_knows_every_agent_to_client_method_of_the_schema() {
    let Some(dir) = official::dir("acp", "parity's list of agent-to-client methods") else {
        return;
    };
    let meta_path = dir.join("v1-meta.json");
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(meta_path).unwrap()).unwrap();
    let client_methods = meta["clientMethods"]
        .as_object()
        .expect("v1-meta.json lists clientMethods");
    let protocol = meta["protocolMethods"].as_object().unwrap();
    let schema_methods: Vec<&str> = client_methods
        .values()
        .chain(protocol.values())
        .filter_map(Value::as_str)
        .collect();
    for method in &schema_methods {
        assert!(
            parity_harness::protocol::acp::AGENT_TO_CLIENT_METHODS.contains(method),
            "{method} is a v1 agent-to-client method parity does not know"
        );
    }
    for method in parity_harness::protocol::acp::AGENT_TO_CLIENT_METHODS {
        assert!(
            schema_methods.contains(&method),
            "parity lists {method}, which v1-meta.json does not have"
        );
    }
}
