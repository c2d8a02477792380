//! Newline-delimited framing for the stdio transport (MCP `basic/transports`, "stdio":
//! one UTF-8 JSON-RPC message per line, no embedded newlines). ACP v1 uses the same
//! framing (`transports.mdx`), so the ACP surface ([`crate::acp`]) reuses this module.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::UnboundedReceiver;

/// One unit read from the input.
#[derive(Debug)]
pub(crate) enum Frame {
    /// A line without its terminating `\n` (a final unterminated line counts too).
    Line(Vec<u8>),
    /// A line longer than the cap; its bytes were discarded up to the next `\n`.
    TooLong,
    /// End of input.
    Eof,
}

/// Reads lines of at most `cap` bytes (excluding the `\n`). Cancel-safe: partial input
/// is kept in `self` between calls.
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    cap: usize,
    line: Vec<u8>,
    discarding: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, cap: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, reader),
            cap,
            line: Vec::new(),
            discarding: false,
            eof: false,
        }
    }

    /// The next frame.
    ///
    /// # Errors
    /// An I/O error from the underlying reader.
    pub(crate) async fn next_frame(&mut self) -> io::Result<Frame> {
        loop {
            if self.eof {
                return Ok(Frame::Eof);
            }
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                self.eof = true;
                if self.discarding {
                    self.discarding = false;
                    return Ok(Frame::TooLong);
                }
                if !self.line.is_empty() {
                    return Ok(Frame::Line(std::mem::take(&mut self.line)));
                }
                return Ok(Frame::Eof);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let body_len = newline.unwrap_or(available.len());
            if !self.discarding {
                if self.line.len().saturating_add(body_len) > self.cap {
                    self.discarding = true;
                    self.line = Vec::new();
                } else {
                    self.line
                        .extend_from_slice(available.get(..body_len).unwrap_or_default());
                }
            }
            let consumed = newline.map_or(body_len, |i| i + 1);
            self.inner.consume(consumed);
            if newline.is_some() {
                if self.discarding {
                    self.discarding = false;
                    return Ok(Frame::TooLong);
                }
                return Ok(Frame::Line(std::mem::take(&mut self.line)));
            }
        }
    }
}

/// The single writer: writes each queued message followed by `\n` and flushes after
/// each, so concurrent producers never interleave bytes. Ends (after flushing and
/// shutting the writer down) when every sender is dropped.
///
/// # Errors
/// The first write, flush or shutdown error.
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut queue: UnboundedReceiver<Vec<u8>>,
) -> io::Result<()> {
    while let Some(mut message) = queue.recv().await {
        message.push(b'\n');
        writer.write_all(&message).await?;
        writer.flush().await?;
    }
    writer.flush().await?;
    writer.shutdown().await
}

/// A line-based JSON-RPC surface (the MCP server, the ACP agent) as [`serve_lines`] drives it.
pub(crate) trait LineSurface {
    /// Handles one input line (without its `\n`).
    fn handle_line(&mut self, bytes: &[u8]);
    /// Answers an over-long line.
    fn reply_parse_error(&self);
    /// Drops the results of finished tasks.
    fn reap(&mut self);
    /// Aborts in-flight work so nothing more is sent, and releases the writer queue.
    fn shutdown(self) -> impl std::future::Future<Output = ()> + Send;
}

/// The serve loop both surfaces share: one writer task fed by a queue, lines read with the cap
/// [`super::MAX_LINE_BYTES`] and handed to the surface `make` builds over the queue, until EOF
/// on `reader` or a failed write; then the surface shuts down and the queued output is
/// flushed. `label` names the surface in the one stderr line a write failure gets.
///
/// # Errors
/// An I/O error reading `reader`, or writing/flushing `writer`. EOF is `Ok(())`.
pub(crate) async fn serve_lines<R, W, S>(
    reader: R,
    writer: W,
    make: impl FnOnce(tokio::sync::mpsc::UnboundedSender<Vec<u8>>) -> S,
    label: &str,
) -> io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: LineSurface,
{
    let (queue, outbox) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let mut writer_task = tokio::spawn(write_loop(writer, outbox));
    let mut surface = make(queue);
    let mut lines = LineReader::new(reader, super::MAX_LINE_BYTES);
    let mut writer_result = None;
    let read_result = loop {
        tokio::select! {
            frame = lines.next_frame() => match frame {
                Ok(Frame::Line(bytes)) => surface.handle_line(&bytes),
                Ok(Frame::TooLong) => surface.reply_parse_error(),
                Ok(Frame::Eof) => break Ok(()),
                Err(e) => break Err(e),
            },
            done = &mut writer_task => {
                writer_result = Some(done);
                break Ok(());
            }
        }
        surface.reap();
    };
    surface.shutdown().await;
    let written = match writer_result {
        Some(done) => done,
        None => writer_task.await,
    };
    let written =
        written.unwrap_or_else(|e| Err(io::Error::other(format!("writer task failed: {e}"))));
    if let Err(e) = &written {
        eprintln!("{label}: failed to write output: {e}");
    }
    read_result.and(written)
}
