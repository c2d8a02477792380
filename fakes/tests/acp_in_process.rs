//! Faulty ACP agents used in-process: the reference ACP agent behind a fault layer over
//! `tokio::io::duplex`. Every fault of the catalogue has a case here proving its wire effect,
//! and every case is also run against the clean reference to prove the effect is the fault's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parity_fakes::{acp_catalogue, AcpFaultInfo, Fault};
use parity_reference::acp::AcpAgentConfig;
use parity_reference::dispatcher::DispatcherConfig;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// One step of a conversation with an agent.
enum Step {
    /// Sends a JSON message as one line.
    Send(Value),
    /// Sends raw bytes as one line.
    Raw(&'static [u8]),
    /// Reads until a response with this id arrives (tool calls are aborted at EOF).
    Wait(Value),
}

/// Everything the agent wrote (raw lines without `\n`) and its exit status.
struct Out {
    lines: Vec<Vec<u8>>,
    status: i32,
}

impl Out {
    /// Every line that parses as a JSON object.
    fn messages(&self) -> Vec<Value> {
        self.lines
            .iter()
            .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
            .filter(Value::is_object)
            .collect()
    }

    /// Every message (objects, or objects inside arrays) with this `id` and no `method`.
    fn responses(&self, id: &Value) -> Vec<Value> {
        self.lines
            .iter()
            .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
            .flat_map(|v| match v {
                Value::Array(a) => a,
                other => vec![other],
            })
            .filter(|v| v.get("method").is_none() && v.get("id") == Some(id))
            .collect()
    }

    /// The one response with this `id`.
    fn response(&self, id: &Value) -> Result<Value, String> {
        let r = self.responses(id);
        match r.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(format!("{} responses with id {id}: {r:?}", r.len())),
        }
    }

    fn dump(&self) -> String {
        self.lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn ensure(ok: bool, what: impl Into<String>) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(what.into())
    }
}

/// Passes every line through unchanged: the clean reference.
struct Passthrough;
impl Fault for Passthrough {}

/// Runs `steps` against the reference ACP agent behind `fault`, then closes stdin and
/// collects everything up to EOF.
async fn run(fault: Box<dyn Fault>, tool_method: Option<&str>, steps: &[Step]) -> Out {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "parity reference workspace\n").unwrap();
    std::fs::create_dir_all(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/hello.txt"), "hello\n").unwrap();
    let mut config = AcpAgentConfig::new(DispatcherConfig::new(dir.path()));
    if let Some(m) = tool_method {
        config.tool_method = m.to_string();
    }
    let (mut client_w, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, client_r) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(parity_fakes::serve_faulty_acp(
        fault, config, server_r, server_w,
    ));
    let mut reader = BufReader::new(client_r);
    let mut lines = Vec::new();
    let deadline = Duration::from_secs(10);
    for step in steps {
        match step {
            Step::Send(v) => {
                let mut l = serde_json::to_vec(v).unwrap();
                l.push(b'\n');
                // A fault that exited no longer reads; later writes may fail.
                let _ = client_w.write_all(&l).await;
            }
            Step::Raw(b) => {
                let _ = client_w.write_all(b).await;
                let _ = client_w.write_all(b"\n").await;
            }
            Step::Wait(id) => loop {
                let mut buf = Vec::new();
                let n = tokio::time::timeout(deadline, reader.read_until(b'\n', &mut buf))
                    .await
                    .expect("no response in time")
                    .unwrap();
                if n == 0 {
                    break;
                }
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                let hit = serde_json::from_slice::<Value>(&buf)
                    .ok()
                    .map(|v| match v {
                        Value::Array(a) => a,
                        other => vec![other],
                    })
                    .is_some_and(|vs| {
                        vs.iter()
                            .any(|v| v.get("method").is_none() && v.get("id") == Some(id))
                    });
                lines.push(buf);
                if hit {
                    break;
                }
            },
        }
    }
    drop(client_w);
    loop {
        let mut buf = Vec::new();
        let n = tokio::time::timeout(deadline, reader.read_until(b'\n', &mut buf))
            .await
            .expect("no EOF in time")
            .unwrap();
        if n == 0 {
            break;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        lines.push(buf);
    }
    let status = tokio::time::timeout(deadline, server)
        .await
        .expect("the layer did not end")
        .unwrap();
    Out { lines, status }
}

fn req(id: impl Into<Value>, method: &str, params: Value) -> Step {
    Step::Send(json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}))
}

fn note(method: &str, params: Value) -> Step {
    Step::Send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

fn init_at(id: i64, version: u64) -> Step {
    req(
        id,
        "initialize",
        json!({"protocolVersion": version, "clientCapabilities": {}}),
    )
}

fn init() -> Step {
    init_at(1, 1)
}

fn new_session(id: impl Into<Value>, servers: Value) -> Step {
    req(
        id,
        "session/new",
        json!({"cwd": "/tmp", "mcpServers": servers}),
    )
}

fn prompt(id: i64, session: &str, text: &str) -> Step {
    req(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    )
}

fn tool(id: i64, method: &str, name: &str, arguments: Value) -> Step {
    req(id, method, json!({"name": name, "arguments": arguments}))
}

fn stdio_entry(env: Value) -> Value {
    json!({"name": "probe", "command": "/bin/true", "args": ["x"], "env": env})
}

fn warnings_of(out: &Out, id: i64) -> Result<Vec<Value>, String> {
    let r = out.response(&json!(id))?;
    r.pointer("/result/warnings")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| format!("no result warnings for id {id}: {r}"))
}

const TRUNCATED: &str = "TRUNCATED: a string argument is longer than 10 characters";

/// A fault's conversation and the claim about its output.
struct Case {
    steps: Vec<Step>,
    claim: fn(&Out) -> Result<(), String>,
}

fn case(name: &str) -> Option<Case> {
    let c = |steps: Vec<Step>, claim: fn(&Out) -> Result<(), String>| Some(Case { steps, claim });
    match name {
        "acp-stdout-banner" => c(vec![init()], |o| {
            ensure(
                o.lines.first().map(Vec::as_slice) == Some(b"parity agent ready".as_slice()),
                "the banner is not the first line",
            )?;
            ensure(
                o.response(&json!(1))?.pointer("/result/protocolVersion") == Some(&json!(1)),
                "initialize is still answered after the banner",
            )
        }),
        "acp-pretty-print" => c(vec![init()], |o| {
            ensure(
                o.lines.first().map(Vec::as_slice) == Some(b"{".as_slice()),
                "the first message does not start with a lone `{` line",
            )?;
            ensure(
                o.lines.len() > 3 && o.messages().is_empty(),
                "the message is not spread over several lines",
            )
        }),
        "acp-latin1" => c(
            vec![init(), new_session(2, json!([])), prompt(3, "sess_1", "hi")],
            |o| {
                let bad: Vec<_> = o
                    .lines
                    .iter()
                    .filter(|l| std::str::from_utf8(l).is_err())
                    .collect();
                ensure(bad.len() == 1, "exactly one line is not UTF-8")?;
                ensure(
                    bad[0].contains(&0xE9)
                        && String::from_utf8_lossy(bad[0]).contains("agent_message_chunk"),
                    "the invalid line is the agent_message_chunk with a raw 0xE9",
                )
            },
        ),
        "acp-jsonrpc-missing" => c(vec![init(), new_session(2, json!([]))], |o| {
            for id in [1, 2] {
                let r = o.response(&json!(id))?;
                ensure(r.get("jsonrpc").is_none(), format!("{r} still has jsonrpc"))?;
                ensure(r.get("result").is_some(), format!("{r} lost its result"))?;
            }
            Ok(())
        }),
        "acp-result-and-error" => c(vec![init(), new_session(2, json!([]))], |o| {
            let r = o.response(&json!(2))?;
            ensure(
                r.pointer("/result/sessionId").is_some() && r.get("error").is_some(),
                format!("session/new has not both result and error: {r}"),
            )?;
            ensure(
                o.response(&json!(1))?.get("error").is_none(),
                "initialize is untouched",
            )
        }),
        "acp-bad-update" => c(
            vec![init(), new_session(2, json!([])), prompt(3, "sess_1", "hi")],
            |o| {
                let updates: Vec<_> = o
                    .messages()
                    .into_iter()
                    .filter(|v| v.get("method") == Some(&json!("session/update")))
                    .collect();
                ensure(
                    updates.len() == 1
                        && updates[0].pointer("/params/update/sessionUpdate")
                            == Some(&json!("agent_message")),
                    format!("updates: {updates:?}"),
                )
            },
        ),
        "acp-batch-responses" => c(vec![init()], |o| {
            let v: Value = serde_json::from_slice(&o.lines[0]).map_err(|e| e.to_string())?;
            ensure(
                v.as_array()
                    .is_some_and(|a| a.len() == 1 && a[0].get("id") == Some(&json!(1))),
                format!("not a one-element batch: {v}"),
            )
        }),
        "acp-early-update" => c(vec![init(), new_session(2, json!([]))], |o| {
            let msgs = o.messages();
            let update = msgs
                .iter()
                .position(|v| {
                    v.get("method") == Some(&json!("session/update"))
                        && v.pointer("/params/sessionId") == Some(&json!("sess_1"))
                })
                .ok_or("no session/update for sess_1")?;
            let created = msgs
                .iter()
                .position(|v| v.get("id") == Some(&json!(2)))
                .ok_or("no session/new response")?;
            ensure(
                update < created,
                "the update does not precede the session/new response",
            )
        }),
        "acp-fs-request" => c(
            vec![
                init(),
                new_session(2, json!([])),
                Step::Wait(json!(2)),
                Step::Send(json!({"jsonrpc": "2.0", "id": "agent-1", "result": {"content": "h"}})),
                req(3, "parity/no-such-method", json!({})),
            ],
            |o| {
                let reqs: Vec<_> = o
                    .messages()
                    .into_iter()
                    .filter(|v| v.get("method") == Some(&json!("fs/read_text_file")))
                    .collect();
                ensure(reqs.len() == 1, format!("fs requests: {reqs:?}"))?;
                ensure(
                    reqs[0].get("id") == Some(&json!("agent-1"))
                        && reqs[0].pointer("/params/path") == Some(&json!("/etc/hostname"))
                        && reqs[0].pointer("/params/sessionId") == Some(&json!("sess_1")),
                    format!("wrong fs request: {}", reqs[0]),
                )?;
                ensure(
                    o.response(&json!(3))?.pointer("/error/code") == Some(&json!(-32601)),
                    "the agent keeps serving after the client's answer",
                )
            },
        ),
        "acp-string-version" => c(vec![init()], |o| {
            ensure(
                o.response(&json!(1))?.pointer("/result/protocolVersion") == Some(&json!("1")),
                "protocolVersion is not the string \"1\"",
            )
        }),
        "acp-version-echo" => c(vec![init_at(1, 65535), init_at(2, 1)], |o| {
            ensure(
                o.response(&json!(1))?.pointer("/result/protocolVersion") == Some(&json!(65535)),
                "65535 is not echoed",
            )?;
            ensure(
                o.response(&json!(2))?.pointer("/result/protocolVersion") == Some(&json!(1)),
                "1 is not echoed",
            )
        }),
        "acp-version-error" => c(vec![init_at(1, 65535), init_at(2, 1)], |o| {
            let r = o.response(&json!(1))?;
            ensure(
                r.pointer("/error/code") == Some(&json!(-32602))
                    && r.pointer("/error/message") == Some(&json!("unsupported protocol version")),
                format!("65535 is not refused: {r}"),
            )?;
            ensure(
                o.response(&json!(2))?.pointer("/result/protocolVersion") == Some(&json!(1)),
                "version 1 is not served",
            )
        }),
        "acp-id-stringify" => c(
            vec![
                init(),
                new_session(9_007_199_254_740_991_i64, json!([])),
                new_session(1000, json!([])),
            ],
            |o| {
                ensure(
                    o.response(&json!("9007199254740991"))?
                        .pointer("/result/sessionId")
                        .is_some(),
                    "the big id is not answered as a string",
                )?;
                ensure(
                    o.responses(&json!(9_007_199_254_740_991_i64)).is_empty(),
                    "the big id is also answered as an integer",
                )?;
                o.response(&json!(1000)).map(|_| ())
            },
        ),
        "acp-answer-twice" => c(
            vec![
                init(),
                Step::Wait(json!(1)),
                req(2, "parity/no-such-method", json!({})),
                Step::Wait(json!(2)),
            ],
            |o| {
                let copies = o.responses(&json!(1));
                ensure(
                    copies.len() == 2 && copies[0] == copies[1],
                    format!("initialize answered {} times: {copies:?}", copies.len()),
                )
            },
        ),
        "acp-deaf-after-init" => c(
            vec![
                init(),
                Step::Wait(json!(1)),
                req(2, "parity/no-such-method", json!({})),
            ],
            |o| {
                o.response(&json!(1))?;
                ensure(
                    o.responses(&json!(2)).is_empty(),
                    "a request after initialize was answered",
                )
            },
        ),
        "acp-parse-error-silent" => c(
            vec![
                init(),
                Step::Raw(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": "),
                req(2, "parity/no-such-method", json!({})),
            ],
            |o| {
                ensure(
                    !o.messages()
                        .iter()
                        .any(|v| v.pointer("/error/code") == Some(&json!(-32700))),
                    "the unparsable line was answered",
                )?;
                o.response(&json!(2)).map(|_| ())
            },
        ),
        "acp-unknown-method-internal" => c(
            vec![
                init(),
                req(2, "parity/no-such-method", json!({})),
                req(3, "_parity_probe/unknown", json!({})),
            ],
            |o| {
                ensure(
                    o.response(&json!(2))?.pointer("/error/code") == Some(&json!(-32603)),
                    "the unknown method is not -32603",
                )?;
                ensure(
                    o.response(&json!(3))?.pointer("/error/code") == Some(&json!(-32601)),
                    "the unknown extension is not -32601",
                )
            },
        ),
        "acp-answer-notifications" => c(
            vec![
                init(),
                note(
                    "session/cancel",
                    json!({"sessionId": "parity-no-such-session"}),
                ),
                note("_parity_probe/note", json!({"x": 1})),
            ],
            |o| {
                let answers = o.responses(&Value::Null);
                ensure(
                    answers.len() == 2 && answers.iter().all(|a| a["result"] == json!({})),
                    format!("notification answers: {answers:?}"),
                )
            },
        ),
        "acp-crash-on-ext" => c(
            vec![
                init(),
                tool(2, "_parity/tool", "read_file", json!({"path": "README.md"})),
                Step::Wait(json!(2)),
                req(3, "_parity_probe/unknown", json!({"x": 1})),
                req(4, "parity/no-such-method", json!({})),
            ],
            |o| {
                ensure(o.status == 1, format!("exit status {}", o.status))?;
                o.response(&json!(2))?;
                ensure(
                    o.responses(&json!(3)).is_empty() && o.responses(&json!(4)).is_empty(),
                    "the agent answered after the extension request",
                )
            },
        ),
        "acp-ext-internal-error" => c(
            vec![
                init(),
                req(2, "_parity_probe/unknown", json!({})),
                req(3, "parity/no-such-method", json!({})),
            ],
            |o| {
                ensure(
                    o.response(&json!(2))?.pointer("/error/code") == Some(&json!(-32603)),
                    "the unknown extension is not -32603",
                )?;
                ensure(
                    o.response(&json!(3))?.pointer("/error/code") == Some(&json!(-32601)),
                    "the unknown method is not -32601",
                )
            },
        ),
        "acp-unprefixed-tool-method" => c(
            vec![
                init(),
                tool(2, "parity/tool", "read_file", json!({"path": "README.md"})),
                Step::Wait(json!(2)),
            ],
            |o| {
                let r = o.response(&json!(2))?;
                ensure(
                    r.pointer("/result/outcome") == Some(&json!("ok")),
                    format!("parity/tool is not served: {r}"),
                )?;
                ensure(
                    o.response(&json!(1))?
                        .pointer("/result/agentCapabilities/_meta/parity/toolMethod")
                        == Some(&json!("parity/tool")),
                    "the bare tool method is not advertised",
                )
            },
        ),
        "acp-no-meta" => c(vec![init()], |o| {
            let r = o.response(&json!(1))?;
            let caps = r
                .pointer("/result/agentCapabilities")
                .ok_or("no agentCapabilities")?;
            ensure(
                caps.get("_meta").is_none(),
                format!("_meta is still there: {caps}"),
            )
        }),
        "acp-reject-empty-servers" => c(
            vec![
                init(),
                new_session(2, json!([])),
                new_session(3, json!([stdio_entry(json!([]))])),
            ],
            |o| {
                let r = o.response(&json!(2))?;
                ensure(
                    r.pointer("/error/code") == Some(&json!(-32602))
                        && r.pointer("/error/message")
                            == Some(&json!("at least one MCP server is required")),
                    format!("empty mcpServers is not refused: {r}"),
                )?;
                ensure(
                    o.response(&json!(3))?.pointer("/result/sessionId") == Some(&json!("sess_1")),
                    "a session with a server is not created (or the refused one was forwarded)",
                )
            },
        ),
        "acp-reject-stdio-server" => c(
            vec![
                init(),
                new_session(
                    2,
                    json!([stdio_entry(json!([{"name": "A", "value": "1"}]))]),
                ),
                new_session(3, json!([])),
            ],
            |o| {
                let r = o.response(&json!(2))?;
                ensure(
                    r.pointer("/error/code") == Some(&json!(-32602))
                        && r.pointer("/error/message") == Some(&json!("env must be an object")),
                    format!("the stdio server is not refused: {r}"),
                )?;
                ensure(
                    o.response(&json!(3))?.pointer("/result/sessionId") == Some(&json!("sess_1")),
                    "an empty mcpServers is not served (or the refused one was forwarded)",
                )
            },
        ),
        "acp-env-internal-error" => c(
            vec![
                init(),
                new_session(2, json!([stdio_entry(json!({"PARITY_PROBE": "1"}))])),
            ],
            |o| {
                let r = o.response(&json!(2))?;
                ensure(
                    r.pointer("/error/code") == Some(&json!(-32603)),
                    format!("the env map is not answered -32603: {r}"),
                )
            },
        ),
        "acp-no-tool-method" => c(
            vec![
                init(),
                req(
                    5,
                    "_parity/tool",
                    json!({"name": "status", "arguments": {}}),
                ),
            ],
            |o| {
                ensure(
                    o.response(&json!(5))?.pointer("/error/code") == Some(&json!(-32601)),
                    "the tool method is still served",
                )
            },
        ),
        "acp-exit-on-ext-notification" => c(
            vec![
                init(),
                note("_x/note", json!({})),
                req(9, "_x/y", json!({})),
            ],
            |o| {
                ensure(o.status == 0, format!("exit status {}, not 0", o.status))?;
                ensure(
                    o.response(&json!(9)).is_err(),
                    "the agent still answers after an extension notification",
                )
            },
        ),
        "acp-crash-on-non-object" => c(
            vec![init(), Step::Send(json!(5)), req(9, "_x/y", json!({}))],
            |o| {
                ensure(o.status == 1, format!("exit status {}, not 1", o.status))?;
                ensure(
                    o.response(&json!(9)).is_err(),
                    "the agent still answers after a non-object line",
                )
            },
        ),
        "acp-bad-stop-reason" => c(
            vec![init(), new_session(2, json!([])), prompt(3, "sess_1", "hi")],
            |o| {
                ensure(
                    o.response(&json!(3))?.pointer("/result/stopReason") == Some(&json!("done")),
                    "stopReason is not \"done\"",
                )
            },
        ),
        "acp-cancel-error" => c(
            vec![
                init(),
                new_session(2, json!([])),
                prompt(3, "sess_1", parity_reference::acp::WAIT_FOR_CANCEL),
                note("session/cancel", json!({"sessionId": "sess_1"})),
                req(4, "parity/no-such-method", json!({})),
                prompt(5, "sess_1", "hi"),
            ],
            |o| {
                let r = o.response(&json!(3))?;
                ensure(
                    r.pointer("/error/code") == Some(&json!(-32800))
                        && r.pointer("/error/message") == Some(&json!("Request cancelled")),
                    format!("the cancelled prompt is not an error: {r}"),
                )?;
                o.response(&json!(4))?;
                ensure(
                    o.response(&json!(5))?.pointer("/result/stopReason")
                        == Some(&json!("end_turn")),
                    "the session does not serve a later prompt",
                )
            },
        ),
        "acp-outcome-drift" => c(
            vec![
                init(),
                tool(2, "_parity/tool", "read_file", json!({"path": "README.md"})),
                Step::Wait(json!(2)),
                tool(3, "_parity/tool", "list_dir", json!({})),
                Step::Wait(json!(3)),
            ],
            |o| {
                let r = o.response(&json!(2))?;
                ensure(
                    r.pointer("/result/value/content")
                        == Some(&json!("parity reference workspace\r\n")),
                    format!("README.md is not read with CRLF: {r}"),
                )?;
                ensure(
                    o.response(&json!(3))?.pointer("/result/outcome") == Some(&json!("ok")),
                    "list_dir is not served",
                )
            },
        ),
        "acp-long-string-drift" => c(
            vec![
                init(),
                // 11 characters.
                tool(
                    2,
                    "_parity/tool",
                    "read_file",
                    json!({"path": "notes/a.txt"}),
                ),
                Step::Wait(json!(2)),
                // 10 characters.
                tool(
                    3,
                    "_parity/tool",
                    "read_file",
                    json!({"path": "ab/cd/e.md"}),
                ),
                Step::Wait(json!(3)),
                // 10 characters, 20 bytes.
                tool(
                    4,
                    "_parity/tool",
                    "read_file",
                    json!({"path": "éééééééééé"}),
                ),
                Step::Wait(json!(4)),
                // 11 characters inside an array.
                tool(5, "_parity/tool", "exec", json!({"argv": ["abcdefghijk"]})),
                Step::Wait(json!(5)),
                // A protocol error is left alone.
                tool(
                    6,
                    "_parity/tool",
                    "no_such_tool_at_all",
                    json!({"x": "abcdefghijkl"}),
                ),
                Step::Wait(json!(6)),
            ],
            |o| {
                let t = json!(TRUNCATED);
                ensure(warnings_of(o, 2)?.contains(&t), "no warning for 11 chars")?;
                ensure(!warnings_of(o, 3)?.contains(&t), "a warning for 10 chars")?;
                ensure(
                    !warnings_of(o, 4)?.contains(&t),
                    "a warning for 10 chars of 20 bytes",
                )?;
                ensure(
                    warnings_of(o, 5)?.contains(&t),
                    "no warning for an array item",
                )?;
                let e = o.response(&json!(6))?;
                ensure(
                    e.get("error").is_some() && e.get("result").is_none(),
                    format!("the protocol error was changed: {e}"),
                )
            },
        ),
        _ => None,
    }
}

#[tokio::test]
async fn every_acp_fault_shows_its_wire_effect_and_the_reference_does_not() {
    let mut failures = Vec::new();
    for f in acp_catalogue() {
        let Some(Case { steps, claim }) = case(f.name) else {
            failures.push(format!("{}: no test case", f.name));
            continue;
        };
        let out = run((f.make)(), f.tool_method, &steps).await;
        if let Err(e) = claim(&out) {
            failures.push(format!("{}: {e}\n--- output ---\n{}", f.name, out.dump()));
        }
        let clean = run(Box::new(Passthrough), None, &steps).await;
        if claim(&clean).is_ok() {
            failures.push(format!(
                "{}: the clean reference shows the same effect\n--- output ---\n{}",
                f.name,
                clean.dump()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn acp_fault_names_are_unique_prefixed_and_each_trips_a_check() {
    let all: &[AcpFaultInfo] = acp_catalogue();
    assert_eq!(all.len(), 32);
    let mut seen = HashSet::new();
    for f in all {
        assert!(seen.insert(f.name), "duplicate name {}", f.name);
        assert!(
            f.name.starts_with("acp-"),
            "{} lacks the acp- prefix",
            f.name
        );
        // The one bad agent for the harness's own tests trips nothing on purpose.
        if f.name != "acp-deaf-after-init" {
            assert!(!f.trips.is_empty(), "{} trips nothing", f.name);
        }
        assert!(!f.description.is_empty(), "{} has no description", f.name);
        assert_eq!(parity_fakes::find_acp(f.name).map(|g| g.name), Some(f.name));
    }
    let echo = parity_fakes::find_acp("acp-version-echo").unwrap();
    assert!(echo.description.contains("B23"));
    let unprefixed = parity_fakes::find_acp("acp-unprefixed-tool-method").unwrap();
    assert_eq!(unprefixed.tool_method, Some("parity/tool"));
    for name in ["acp-outcome-drift", "acp-long-string-drift"] {
        assert_eq!(
            parity_fakes::find_acp(name).unwrap().profile,
            parity_fakes::AcpProfile::Equivalence
        );
    }
}
