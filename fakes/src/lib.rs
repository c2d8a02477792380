//! Faulty peers: the parity reference MCP server with one injected fault each (the mutant zoo).
//!
//! Faults are layers around the clean reference, never flags inside it: the reference runs
//! in-process behind two `tokio::io::duplex` pipes, and a [`Fault`] sees every line going in
//! (client → server) and out (server → client) and may rewrite, drop, add, or end the process.
//! [`catalogue`] lists every fault with the checks it must trip; `parity selftest` and the tests
//! prove each pairing, and prove the clean reference passes.

#![forbid(unsafe_code)]

mod acp_zoo;
mod benign;
mod dispatcher_zoo;
#[cfg(feature = "http")]
mod facade;
mod features_zoo;
#[cfg(feature = "http")]
mod http_zoo;
mod hygiene_zoo;
mod layer;
pub mod load;
pub use layer::{REQUEST_FLOOD, REQUEST_FLOOD_VAR};
mod zoo;

use parity_reference::acp::AcpAgentConfig;
use parity_reference::mcp::{serve, McpServerConfig};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub use acp_zoo::{
    acp_benign_catalogue, acp_catalogue, WRAPPED_CALL_DECLARATION, WRAPPED_CALL_METHOD,
};
pub use benign::{benign_catalogue, ECHOED_SECRET_VAR, SLOW_START_MS, SLOW_START_VAR};
pub use dispatcher_zoo::{dispatcher_catalogue, find_dispatcher_fault, DispatcherFault};
#[cfg(feature = "http")]
pub use facade::{
    facade_benign_catalogue, facade_catalogue, find_facade_benign, find_facade_fault, FacadeBenign,
    FacadeFault,
};
pub use features_zoo::STATUS_RESULTS_DECLARATION;
#[cfg(feature = "http")]
pub use http_zoo::{
    find_http_benign, find_http_fault, http_benign_catalogue, http_catalogue, serve_http_fault,
    HttpBenign, HttpFault,
};
pub use hygiene_zoo::{
    find_host_benign, find_host_fault, host_benign_catalogue, host_catalogue, serve_host,
    HostBenign, HostFault, HOST_HELPERS,
};
pub use zoo::{catalogue, LONG_ANSWER_PAD};

/// What to do after handling an input line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep serving.
    Continue,
    /// End the process now with this exit status.
    Exit(i32),
}

/// What to do at stdin EOF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtEof {
    /// Let the reference see EOF and exit normally (the clean behaviour).
    Exit,
    /// Never exit (ignore EOF).
    Hang,
    /// Write these lines to stdout, then exit.
    WriteThenExit(Vec<Vec<u8>>),
}

/// Lines produced by a hook: to the reference server and to the client (stdout).
#[derive(Debug, Default)]
pub struct Io {
    /// Lines (without `\n`) to forward to the reference server.
    pub to_server: Vec<Vec<u8>>,
    /// Raw bytes to write to stdout (each entry written as given; add `\n` yourself).
    pub to_client: Vec<Vec<u8>>,
    /// Read no more input until everything queued for the client so far has been written to
    /// stdout (the client read it): a peer that does not read while it writes, as
    /// single-threaded servers do. Set by a hook on a client line.
    pub wait_written: bool,
}

impl Io {
    /// Queues a line (a `\n` is added) for the client.
    pub fn client_line(&mut self, line: impl Into<Vec<u8>>) {
        let mut l = line.into();
        l.push(b'\n');
        self.to_client.push(l);
    }
}

/// One injected fault: hooks on the lines crossing the layer. Defaults forward unchanged.
pub trait Fault: Send {
    /// Bytes to write to stdout before anything else.
    fn on_start(&mut self, _io: &mut Io) {}
    /// Bytes of stderr to write at start (a flood), 0 for none.
    fn stderr_flood_bytes(&self) -> u64 {
        0
    }
    /// A client line (without `\n`). Default: forward to the server.
    fn on_input(&mut self, line: &[u8], io: &mut Io) -> Flow {
        io.to_server.push(line.to_vec());
        Flow::Continue
    }
    /// A server line (without `\n`). Default: forward to the client.
    fn on_output(&mut self, line: &[u8], io: &mut Io) {
        io.client_line(line);
    }
    /// What happens at stdin EOF.
    fn at_eof(&mut self) -> AtEof {
        AtEof::Exit
    }
}

/// One entry of the zoo.
pub struct FaultInfo {
    /// Name used by `parity fake <name>`.
    pub name: &'static str,
    /// What the fault does, in one sentence (and the fault class of `faults.md` when one fits).
    pub description: &'static str,
    /// Check ids this fault must make fail (or warn, for a SHOULD-level check).
    pub trips: &'static [&'static str],
    /// Builds a fresh instance.
    pub make: fn() -> Box<dyn Fault>,
}

/// One benign peer: the reference MCP server answering in a correct but unusual way
/// (`fakes/src/benign.rs`). Served by `parity fake <name>` like the faults.
pub struct BenignInfo {
    /// Name used by `parity fake <name>` (always starts with `benign-`).
    pub name: &'static str,
    /// How it differs from the reference, in one sentence.
    pub description: &'static str,
    /// Check ids it must pass: any fail or warn there is a false verdict of parity's.
    pub passes: &'static [&'static str],
    /// Builds a fresh instance.
    pub make: fn() -> Box<dyn Fault>,
}

/// Looks a benign MCP peer up by name.
pub fn find_benign(name: &str) -> Option<&'static BenignInfo> {
    benign_catalogue().iter().find(|f| f.name == name)
}

/// Looks an MCP fault up by name.
pub fn find(name: &str) -> Option<&'static FaultInfo> {
    catalogue().iter().find(|f| f.name == name)
}

/// What a faulty ACP agent is checked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcpProfile {
    /// The ACP v1 checks: the fault runs as the target's ACP agent.
    Acp,
    /// Equivalence: the fault runs as the ACP surface beside the clean reference MCP server.
    Equivalence,
}

/// One faulty ACP agent: the reference ACP agent with one injected fault.
pub struct AcpFaultInfo {
    /// Name used by `parity fake <name>` (always starts with `acp-`).
    pub name: &'static str,
    /// What the fault does, in one sentence.
    pub description: &'static str,
    /// Check ids this fault must make fail (or warn, for a SHOULD-level or robustness check).
    pub trips: &'static [&'static str],
    /// Which profile catches it.
    pub profile: AcpProfile,
    /// The tool method the faulty agent serves and the target declares (default
    /// `_parity/tool`).
    pub tool_method: Option<&'static str>,
    /// Builds a fresh instance.
    pub make: fn() -> Box<dyn Fault>,
}

/// Looks an ACP fault up by name.
pub fn find_acp(name: &str) -> Option<&'static AcpFaultInfo> {
    acp_catalogue().iter().find(|f| f.name == name)
}

/// One benign ACP agent: the reference ACP agent behind a layer that makes it correct but
/// unusual (a conforming agent parity must not fail or warn about).
pub struct AcpBenignInfo {
    /// Name used by `parity fake <name>` (always starts with `acp-`).
    pub name: &'static str,
    /// What is unusual about it, in one sentence.
    pub description: &'static str,
    /// Check ids it must pass: none of them may fail or warn (`skip` and `not-run` are allowed
    /// where the check says why it could not judge).
    pub passes: &'static [&'static str],
    /// The tool method the target declares for it; `None`: the target declares none.
    pub tool_method: Option<&'static str>,
    /// Builds a fresh instance of its layer.
    pub make: fn() -> Box<dyn Fault>,
}

/// Looks a benign ACP agent up by name.
pub fn find_acp_benign(name: &str) -> Option<&'static AcpBenignInfo> {
    acp_benign_catalogue().iter().find(|f| f.name == name)
}

/// Serves the reference ACP agent through `fault` over the given client streams, like
/// [`serve_faulty`] does for MCP. Returns the exit status the process should end with.
pub async fn serve_faulty_acp<R, W>(
    fault: Box<dyn Fault>,
    config: AcpAgentConfig,
    stdin: R,
    stdout: W,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_layer(
        fault,
        move |r, w| tokio::spawn(parity_reference::acp::serve(r, w, config)),
        stdin,
        stdout,
    )
    .await
}

/// Serves the reference through `fault` over the given client streams (stdin, stdout).
/// Returns the exit status the process should end with.
///
/// Errors: none; I/O failures on the client streams end the session with status 0.
pub async fn serve_faulty<R, W>(
    fault: Box<dyn Fault>,
    config: McpServerConfig,
    stdin: R,
    stdout: W,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_layer(
        fault,
        move |r, w| tokio::spawn(serve(r, w, config)),
        stdin,
        stdout,
    )
    .await
}

/// One entry of the layer's stdout queue.
enum Out {
    /// Bytes to write.
    Bytes(Vec<u8>),
    /// Everything before this entry has been written: say so.
    Written(tokio::sync::oneshot::Sender<()>),
}

/// The server half of the layer: reads the fault's input, writes the clean server's output.
type ServerTask = tokio::task::JoinHandle<std::io::Result<()>>;

/// The fault layer around any line-based server started by `start`.
async fn serve_layer<R, W, S>(fault: Box<dyn Fault>, start: S, stdin: R, stdout: W) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    S: FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> ServerTask,
{
    let fault = Arc::new(Mutex::new(fault));
    let (srv_in_w, srv_in_r) = tokio::io::duplex(1 << 20);
    let (srv_out_w, srv_out_r) = tokio::io::duplex(1 << 20);
    let server = start(srv_in_r, srv_out_w);

    // One writer to stdout, so lines never interleave.
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Out>();
    let writer = tokio::spawn(async move {
        let mut stdout = stdout;
        while let Some(out) = out_rx.recv().await {
            match out {
                Out::Bytes(bytes) => {
                    if stdout.write_all(&bytes).await.is_err() {
                        break;
                    }
                    let _ = stdout.flush().await;
                }
                Out::Written(done) => {
                    let _ = done.send(());
                }
            }
        }
    });

    let mut start = Io::default();
    let flood = with(&fault, |f| {
        f.on_start(&mut start);
        f.stderr_flood_bytes()
    });
    for b in start.to_client {
        let _ = out_tx.send(Out::Bytes(b));
    }
    if flood > 0 {
        tokio::spawn(async move {
            let mut err = tokio::io::stderr();
            let chunk = vec![b'e'; 64 * 1024];
            let mut left = flood;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                if err.write_all(&chunk[..n]).await.is_err() {
                    break;
                }
                left -= n as u64;
            }
        });
    }

    // Server output → fault → stdout.
    let out_fault = fault.clone();
    let out_tx2 = out_tx.clone();
    let pump_out = tokio::spawn(async move {
        let mut lines = BufReader::new(srv_out_r).split(b'\n');
        while let Ok(Some(line)) = lines.next_segment().await {
            let mut io = Io::default();
            with(&out_fault, |f| f.on_output(&line, &mut io));
            for b in io.to_client {
                let _ = out_tx2.send(Out::Bytes(b));
            }
        }
    });

    // stdin → fault → server (or stdout).
    let mut srv_in = Some(srv_in_w);
    let mut reader = BufReader::with_capacity(64 * 1024, stdin);
    let mut buf = Vec::new();
    let status = loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break None,
            Ok(_) => {}
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        let mut io = Io::default();
        let flow = with(&fault, |f| f.on_input(&buf, &mut io));
        for b in io.to_client {
            let _ = out_tx.send(Out::Bytes(b));
        }
        if io.wait_written {
            // Stop reading until the client has read what is queued for it.
            let (done, written) = tokio::sync::oneshot::channel();
            if out_tx.send(Out::Written(done)).is_ok() {
                let _ = written.await;
            }
        }
        if let Some(w) = srv_in.as_mut() {
            for mut l in io.to_server {
                l.push(b'\n');
                if w.write_all(&l).await.is_err() {
                    break;
                }
            }
        }
        if let Flow::Exit(code) = flow {
            break Some(code);
        }
    };
    if let Some(code) = status {
        // Give queued output a moment to reach stdout, then end abruptly.
        drop(out_tx);
        let _ = tokio::time::timeout(std::time::Duration::from_millis(50), writer).await;
        return code;
    }
    match with(&fault, |f| f.at_eof()) {
        AtEof::Hang => {
            // Keep the process alive, ignoring EOF; the harness must escalate to signals.
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            }
        }
        AtEof::Exit => {
            drop(srv_in.take());
            let _ = server.await;
            let _ = pump_out.await;
        }
        AtEof::WriteThenExit(lines) => {
            drop(srv_in.take());
            let _ = server.await;
            let _ = pump_out.await;
            for mut l in lines {
                l.push(b'\n');
                let _ = out_tx.send(Out::Bytes(l));
            }
        }
    }
    drop(out_tx);
    let _ = writer.await;
    0
}

fn with<T>(fault: &Arc<Mutex<Box<dyn Fault>>>, f: impl FnOnce(&mut Box<dyn Fault>) -> T) -> T {
    match fault.lock() {
        Ok(mut g) => f(&mut g),
        Err(p) => f(&mut p.into_inner()),
    }
}

/// Starts `setsid sleep 600`: a descendant that leaves the process group and would outlive a
/// careless harness (the `setsid-child` bad peer). Errors: `setsid` could not be started.
pub fn spawn_setsid_grandchild() -> std::io::Result<u32> {
    let child = std::process::Command::new("setsid")
        .args(["sleep", "600"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    Ok(child.id())
}
