//! An HTTP surface parity reaches: a URL, or a command parity starts that prints its endpoint
//! as its first stdout line, either the whole URL or only its port (`[surfaces.http]`,
//! docs/target.md). Shared by the `mcp-http`, `facade` and `equivalence` profiles, so it sits
//! in the engine.

use crate::transport::peer::PeerSpec;
use std::time::{Duration, Instant};

/// A URL or a line, clipped for a message.
fn clip(s: &str) -> String {
    crate::base::util::clip(s, 600)
}

/// The host a port-printing command is reached at (`prints = "port"`): loopback IPv4.
pub const PORT_HOST: &str = "127.0.0.1";

/// The endpoint path of a port-printing command when `[surfaces.http] path` is not given.
pub const DEFAULT_PATH: &str = "/mcp";

/// Where the facade comes from: a URL to reach, or a command parity starts.
#[derive(Debug, Clone)]
pub enum FacadeSource {
    /// A running facade at this URL.
    Url(String),
    /// A command that starts the facade and prints its endpoint URL as the first stdout
    /// line (`parity reference facade` does; `prints = "url"`, the default).
    Command(PeerSpec),
    /// A command that starts the facade and prints only its port as the first stdout line
    /// (`prints = "port"`): the endpoint is `http://127.0.0.1:<port><path>`.
    PortCommand {
        /// The command.
        spec: PeerSpec,
        /// The endpoint path, starting with `/` (default [`DEFAULT_PATH`]).
        path: String,
    },
}

/// What a started command's first stdout line holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartLine {
    /// The endpoint URL, `http://…`.
    Url,
    /// A decimal TCP port (1–65535); the endpoint is `http://127.0.0.1:<port><path>`.
    Port {
        /// The endpoint path, starting with `/`.
        path: String,
    },
}

/// A started facade process: its peer (shut down with the stdio sequence) and URL.
pub struct Started {
    /// The process.
    pub peer: crate::transport::peer::Peer,
    /// Its endpoint URL.
    pub url: String,
}

/// The endpoint of `source`: the URL as given, or the command started (within `deadline`)
/// and the URL its first stdout line gives. The caller shuts the started process down.
///
/// Errors: as [`start_printing`].
pub async fn open(
    source: &FacadeSource,
    deadline: Duration,
) -> Result<(String, Option<Started>), String> {
    let started = match source {
        FacadeSource::Url(u) => return Ok((u.clone(), None)),
        FacadeSource::Command(spec) => start(spec, deadline).await?,
        FacadeSource::PortCommand { spec, path } => {
            start_printing(spec, &StartLine::Port { path: path.clone() }, deadline).await?
        }
    };
    Ok((started.url.clone(), Some(started)))
}

/// Starts a facade command and reads its URL (the first stdout line, `http://…`) within
/// `deadline`.
///
/// Errors: the command cannot start, prints no URL in time, or exits; the message carries
/// its last stderr lines.
pub async fn start(spec: &PeerSpec, deadline: Duration) -> Result<Started, String> {
    start_printing(spec, &StartLine::Url, deadline).await
}

/// The endpoint a first stdout line gives under `line`, or why it gives none.
///
/// Errors: under [`StartLine::Url`] a line that is not `http://…` (a bare port is pointed at
/// `prints = "port"`); under [`StartLine::Port`] a line that is not a port 1–65535.
pub fn endpoint_of_line(text: &str, line: &StartLine) -> Result<String, String> {
    let port: Option<u16> = text.parse().ok().filter(|p| *p > 0);
    match line {
        StartLine::Url if text.starts_with("http://") => Ok(text.to_owned()),
        StartLine::Url => Err(format!(
            "the facade's first stdout line is not an http:// URL: {}{}",
            clip(text),
            if port.is_some() {
                " (a port? declare `prints = \"port\"` under [surfaces.http])"
            } else {
                ""
            }
        )),
        StartLine::Port { path } => match port {
            Some(p) if text.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(format!("http://{PORT_HOST}:{p}{path}"))
            }
            _ => Err(format!(
                "the facade's first stdout line is not a port (1-65535), as `prints = \"port\"` declares: {}{}",
                clip(text),
                if text.starts_with("http://") {
                    " (a URL? drop `prints = \"port\"`)"
                } else {
                    ""
                }
            )),
        },
    }
}

/// Starts a facade command and reads its endpoint from its first stdout line, as `line`
/// says (a URL, or a port on 127.0.0.1 with a path), within `deadline`.
///
/// Errors: the command cannot start, prints nothing usable in time, or exits; the message
/// carries its last stderr lines.
pub async fn start_printing(
    spec: &PeerSpec,
    line: &StartLine,
    deadline: Duration,
) -> Result<Started, String> {
    let mut peer = crate::transport::peer::Peer::spawn(spec).map_err(|e| e.to_string())?;
    let until = Instant::now() + deadline;
    let failed = |peer: &crate::transport::peer::Peer, why: String| {
        format!(
            "{why}{}",
            crate::engine::run::stderr_and_exit(&peer.events())
        )
    };
    let what = match line {
        StartLine::Url => "URL",
        StartLine::Port { .. } => "port",
    };
    let why = match peer.recv(until).await {
        crate::transport::peer::Recv::Line(first) => {
            let text = String::from_utf8_lossy(&first.bytes).trim().to_owned();
            match endpoint_of_line(&text, line) {
                Ok(url) => return Ok(Started { peer, url }),
                Err(why) => why,
            }
        }
        crate::transport::peer::Recv::Eof => {
            format!("the facade closed its stdout without printing its {what}")
        }
        crate::transport::peer::Recv::Timeout => format!(
            "the facade printed no {what} within {} ms",
            deadline.as_millis()
        ),
    };
    let msg = failed(&peer, why);
    peer.shutdown(crate::transport::peer::ShutdownGrace::default())
        .await;
    Err(msg)
}

/// The host and port of an `http://` endpoint URL, as a hook command's `{host}` and
/// `{port}` get them: the host as written (`127.0.0.1`, `[::1]`, `localhost`), the port as
/// written or 80 when the URL gives none.
pub fn host_and_port(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    // An IPv6 literal keeps its brackets; the port is what follows `]:` or the last `:`.
    let split = match authority.rfind(']') {
        Some(close) => authority[close..]
            .find(':')
            .map(|i| close + i)
            .map(|i| (&authority[..i], &authority[i + 1..])),
        None => authority.rsplit_once(':'),
    };
    match split {
        Some((host, port)) if !port.is_empty() => (host.to_owned(), port.to_owned()),
        Some((host, _)) => (host.to_owned(), "80".to_owned()),
        None => (authority.to_owned(), "80".to_owned()),
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_first_line_gives_the_endpoint_its_declaration_says() {
        assert_eq!(
            endpoint_of_line("http://127.0.0.1:4/mcp", &StartLine::Url).as_deref(),
            Ok("http://127.0.0.1:4/mcp")
        );
        let port = StartLine::Port {
            path: "/rpc".into(),
        };
        assert_eq!(
            endpoint_of_line("41234", &port).as_deref(),
            Ok("http://127.0.0.1:41234/rpc")
        );
        let e = endpoint_of_line("41234", &StartLine::Url).unwrap_err();
        assert!(e.contains("prints = \"port\""), "{e}");
        for bad in ["0", "65536", "+80", "http://127.0.0.1:4/mcp", "", "port 80"] {
            assert!(endpoint_of_line(bad, &port).is_err(), "{bad}");
        }
    }

    #[test]
    fn hosts_and_ports_of_endpoints() {
        let hp = |u: &str| host_and_port(u);
        assert_eq!(
            hp("http://127.0.0.1:8080/mcp"),
            ("127.0.0.1".into(), "8080".into())
        );
        assert_eq!(hp("http://[::1]:9/x"), ("[::1]".into(), "9".into()));
        assert_eq!(hp("http://[::1]/x"), ("[::1]".into(), "80".into()));
        assert_eq!(
            hp("http://localhost/mcp"),
            ("localhost".into(), "80".into())
        );
        assert_eq!(hp("http://localhost:7?q"), ("localhost".into(), "7".into()));
    }
}
