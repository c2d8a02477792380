//! Load peers: the reference MCP server behind a layer that sends far more than a session
//! needs, for the memory benchmark (`parity bench --only floods`) and the bounded-memory tests.
//! They break no rule a check judges (a flood of notifications is allowed, a 1 GiB line is over
//! the line cap, not against the spec), so they are in no catalogue of faults: `parity fake
//! <name>` serves them by name ([`serve_load`]).

use parity_reference::mcp::{serve, McpServerConfig};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How long the notification flood holds each of the server's messages before it sends it.
pub const FLOOD_DELAY: Duration = Duration::from_secs(4);

/// Environment variable giving the giant line's size in bytes (default [`GIANT_LINE`]).
pub const GIANT_LINE_VAR: &str = "PARITY_FAKE_GIANT_LINE_BYTES";

/// The giant line's default size: 1 GiB.
pub const GIANT_LINE: u64 = 1 << 30;

/// The load peers: name and what it does.
pub const LOAD_PEERS: &[(&str, &str)] = &[
    (
        "load-notification-flood",
        "sends `notifications/message` at full speed for as long as it runs, and each of the server's own messages 4 s late",
    ),
    (
        "load-giant-line",
        "after its first message, writes one line of 1 GiB (`PARITY_FAKE_GIANT_LINE_BYTES`), then serves like the reference",
    ),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Load {
    Flood,
    Giant,
}

/// Serves the load peer `name` over the given client streams; `None` when no load peer has that
/// name. Returns the exit status (0 once the client closed stdin).
pub async fn serve_load<R, W>(
    name: &str,
    config: McpServerConfig,
    stdin: R,
    stdout: W,
) -> Option<i32>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let load = match name {
        "load-notification-flood" => Load::Flood,
        "load-giant-line" => Load::Giant,
        _ => return None,
    };
    let (mut srv_in_w, srv_in_r) = tokio::io::duplex(1 << 20);
    let (srv_out_w, srv_out_r) = tokio::io::duplex(1 << 20);
    tokio::spawn(serve(srv_in_r, srv_out_w, config));
    // The client's lines go to the server as they come; the task ends at stdin EOF.
    let mut input = tokio::spawn(async move {
        let mut lines = BufReader::new(stdin);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if srv_in_w.write_all(&line).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    // The server's lines, held back by the flood's delay.
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut out = BufReader::new(srv_out_r);
        loop {
            let mut line = Vec::new();
            match out.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) if load == Load::Flood => {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(FLOOD_DELAY).await;
                        let _ = tx.send(line);
                    });
                }
                Ok(_) => {
                    let _ = tx.send(line);
                }
            }
        }
    });
    let mut stdout = stdout;
    // Sixteen notifications of about 2 KiB each per write.
    let data =
        "a notification of the flood, one of very many, sent as fast as the client reads them. "
            .repeat(22);
    let one = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","logger":"load","data":"{data}"}}}}"#
    );
    let mut chunk = Vec::new();
    for _ in 0..16 {
        chunk.extend_from_slice(one.as_bytes());
        chunk.push(b'\n');
    }
    let mut giant_sent = load != Load::Giant;
    loop {
        tokio::select! {
            biased;
            _ = &mut input => break,
            m = rx.recv() => {
                let Some(line) = m else { break };
                if stdout.write_all(&line).await.is_err() {
                    break;
                }
                if !giant_sent {
                    giant_sent = true;
                    if write_giant(&mut stdout).await.is_err() {
                        break;
                    }
                }
                let _ = stdout.flush().await;
            }
            () = std::future::ready(()), if load == Load::Flood => {
                if stdout.write_all(&chunk).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = stdout.flush().await;
    Some(0)
}

/// Writes the giant line in 1 MiB pieces (the peer never holds it whole).
async fn write_giant<W: AsyncWrite + Unpin>(stdout: &mut W) -> std::io::Result<()> {
    let size = std::env::var(GIANT_LINE_VAR)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(GIANT_LINE);
    let piece = vec![b'x'; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(piece.len() as u64) as usize;
        stdout.write_all(&piece[..n]).await?;
        left -= n as u64;
    }
    stdout.write_all(b"\n").await
}
