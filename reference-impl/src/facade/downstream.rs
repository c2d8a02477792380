//! Downstream MCP servers the facade spawns over stdio (seed rules 9, 12, 30).
//!
//! Each server is started once when the facade starts: `initialize` at revision
//! 2025-11-25, `notifications/initialized`, then `tools/list` following `nextCursor`
//! (at most 100 pages). A server that fails any step is listed as unavailable with a
//! redacted error (rule 12) and contributes no tools; the rest of the sweep goes on.
//! Calls are JSON-RPC requests correlated by id over one pipe pair; each waits at most the
//! call timeout. Lines longer than [`MAX_LINE`] end the connection. The child is killed
//! when the facade drops it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

use super::source::SourceTool;

/// Longest accepted line from a downstream server: 16 MiB.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// How to start one downstream server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownstreamSpec {
    /// The server name: the provider label and the prefix of duplicated names.
    pub name: String,
    /// The program to run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A running downstream server.
#[derive(Debug)]
pub struct Downstream {
    name: String,
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Pending,
    next_id: AtomicU64,
    _child: Child,
}

/// A server that could not be started or listed (rule 12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The server name.
    pub provider: String,
    /// What went wrong, with anything that looks like a credential removed.
    pub error: String,
}

/// Removes bearer tokens and `KEY=value` secrets from a message (rule 12's "redacted
/// error").
pub fn redact(message: &str) -> String {
    message
        .split(' ')
        .map(|word| {
            let lower = word.to_ascii_lowercase();
            if ["token", "secret", "password", "key"]
                .iter()
                .any(|k| lower.contains(k) && word.contains('='))
            {
                match word.split_once('=') {
                    Some((k, _)) => format!("{k}=[REDACTED]"),
                    None => word.to_owned(),
                }
            } else {
                word.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replace("Bearer ", "Bearer [REDACTED] ")
}

impl Downstream {
    /// Spawns `spec`, initializes it and lists its tools, each step within `timeout`.
    ///
    /// # Errors
    /// An [`Unavailable`] naming the step that failed.
    pub async fn start(
        spec: &DownstreamSpec,
        timeout: Duration,
    ) -> Result<(Downstream, Vec<SourceTool>), Unavailable> {
        let fail = |e: String| Unavailable {
            provider: spec.name.clone(),
            error: redact(&e),
        };
        let mut child = Command::new(&spec.program)
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| fail(format!("cannot start `{}`: {e}", spec.program)))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(fail("the child has no pipes".into()));
        };
        let pending: Pending = Arc::default();
        let reader_pending = pending.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                let read = (&mut reader)
                    .take(MAX_LINE as u64 + 1)
                    .read_until(b'\n', &mut line)
                    .await;
                match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) if line.len() > MAX_LINE => break,
                    Ok(_) => {}
                }
                let Ok(message) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                let Some(id) = message.get("id").and_then(Value::as_u64) else {
                    continue;
                };
                if message.get("method").is_some() {
                    continue; // a server request: the facade offers no client features
                }
                let waiter = reader_pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                if let Some(w) = waiter {
                    let _ = w.send(message);
                }
            }
            // Dropping the senders wakes every waiter with an error.
            reader_pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        });
        let server = Downstream {
            name: spec.name.clone(),
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
            next_id: AtomicU64::new(1),
            _child: child,
        };
        server
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "parity-reference-facade", "version": env!("CARGO_PKG_VERSION")},
                }),
                timeout,
            )
            .await
            .map_err(|e| fail(format!("initialize: {e}")))?;
        server
            .notify("notifications/initialized")
            .await
            .map_err(|e| fail(format!("notifications/initialized: {e}")))?;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let result = server
                .request("tools/list", params, timeout)
                .await
                .map_err(|e| fail(format!("tools/list: {e}")))?;
            for t in result
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                tools.push(SourceTool {
                    name: name.to_owned(),
                    description: t
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    input_schema: t.get("inputSchema").cloned().unwrap_or_else(|| json!({})),
                    annotations: t.get("annotations").cloned().unwrap_or(Value::Null),
                    // The facade wraps a downstream result in its own shape: the downstream's
                    // outputSchema does not describe it.
                    output_schema: Value::Null,
                });
            }
            cursor = result
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        Ok((server, tools))
    }

    /// The server name.
    pub fn name(&self) -> &str {
        &self.name
    }

    async fn write(&self, message: &Value) -> Result<(), String> {
        let mut bytes = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        stdin.write_all(&bytes).await.map_err(|e| e.to_string())?;
        stdin.flush().await.map_err(|e| e.to_string())
    }

    async fn notify(&self, method: &str) -> Result<(), String> {
        self.write(&json!({"jsonrpc": "2.0", "method": method}))
            .await
    }

    /// Sends a request and returns its `result`.
    ///
    /// # Errors
    /// A write failure, no answer within `timeout`, the server gone, or a JSON-RPC error
    /// (its code and message).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        // The write is bounded too: a server that stops reading its stdin must not hold the
        // pipe (and every later call) forever.
        let sent = match tokio::time::timeout(
            timeout,
            self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
        )
        .await
        {
            Ok(r) => r,
            Err(_) => Err(format!("not written within {} ms", timeout.as_millis())),
        };
        let answer = match sent {
            Ok(()) => tokio::time::timeout(timeout, rx).await,
            Err(e) => {
                self.forget(id);
                return Err(format!("write failed: {e}"));
            }
        };
        let message = match answer {
            Ok(Ok(m)) => m,
            Ok(Err(_)) => return Err("the server closed its output".into()),
            Err(_) => {
                self.forget(id);
                return Err(format!("no answer within {} ms", timeout.as_millis()));
            }
        };
        if let Some(error) = message.get("error") {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            let text = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error without a message");
            return Err(format!("JSON-RPC error {code}: {text}"));
        }
        message
            .get("result")
            .cloned()
            .ok_or_else(|| "a response without `result`".to_owned())
    }

    fn forget(&self, id: u64) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }
}
