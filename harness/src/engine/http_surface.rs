//! An HTTP surface parity reaches: a URL, or a command parity starts that prints its endpoint
//! URL as its first stdout line (`[surfaces.http]`, docs/target.md). Shared by the `mcp-http`,
//! `facade` and `equivalence` profiles, so it sits in the engine.

use crate::transport::peer::PeerSpec;
use std::time::{Duration, Instant};

/// A URL or a line, clipped for a message.
fn clip(s: &str) -> String {
    crate::base::util::clip(s, 600)
}

/// Where the facade comes from: a URL to reach, or a command parity starts.
#[derive(Debug, Clone)]
pub enum FacadeSource {
    /// A running facade at this URL.
    Url(String),
    /// A command that starts the facade and prints its endpoint URL as the first stdout
    /// line (`parity reference facade` does).
    Command(PeerSpec),
}

/// A started facade process: its peer (shut down with the stdio sequence) and URL.
pub struct Started {
    /// The process.
    pub peer: crate::transport::peer::Peer,
    /// Its endpoint URL.
    pub url: String,
}

/// Starts a facade command and reads its URL (the first stdout line, `http://…`) within
/// `deadline`.
///
/// Errors: the command cannot start, prints no URL in time, or exits; the message carries
/// its last stderr lines.
pub async fn start(spec: &PeerSpec, deadline: Duration) -> Result<Started, String> {
    let mut peer = crate::transport::peer::Peer::spawn(spec).map_err(|e| e.to_string())?;
    let until = Instant::now() + deadline;
    let failed = |peer: &crate::transport::peer::Peer, why: String| {
        format!(
            "{why}{}",
            crate::engine::run::stderr_and_exit(&peer.events())
        )
    };
    match peer.recv(until).await {
        crate::transport::peer::Recv::Line(line) => {
            let text = String::from_utf8_lossy(&line.bytes).trim().to_owned();
            if text.starts_with("http://") {
                Ok(Started { peer, url: text })
            } else {
                let why = format!(
                    "the facade's first stdout line is not an http:// URL: {}",
                    clip(&text)
                );
                let msg = failed(&peer, why);
                peer.shutdown(crate::transport::peer::ShutdownGrace::default())
                    .await;
                Err(msg)
            }
        }
        other => {
            let why = match other {
                crate::transport::peer::Recv::Eof => {
                    "the facade closed its stdout without printing its URL".to_string()
                }
                crate::transport::peer::Recv::Timeout => format!(
                    "the facade printed no URL within {} ms",
                    deadline.as_millis()
                ),
                crate::transport::peer::Recv::Line(_) => {
                    "the facade printed something other than its URL".to_string()
                }
            };
            let msg = failed(&peer, why);
            peer.shutdown(crate::transport::peer::ShutdownGrace::default())
                .await;
            Err(msg)
        }
    }
}

/// The bundled reference as an MCP server over Streamable HTTP, as the `mcp-http` profile and
/// the self-test start it: `<exe> reference facade --catalogue direct --response sse`.
pub fn reference_http_spec(exe: String) -> PeerSpec {
    PeerSpec::new(
        exe,
        [
            "reference",
            "facade",
            "--catalogue",
            "direct",
            "--response",
            "sse",
        ]
        .map(String::from)
        .to_vec(),
    )
}
