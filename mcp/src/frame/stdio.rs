//! MCP over stdio, one JSON-RPC message per line, with every line held to [`super::check`] before
//! rmcp reads it: a line too long, too deep or not JSON is answered with an error on stdout (the
//! request's id when it can be read) and the next line is read as usual.

use std::sync::Arc;

use rmcp::{
    RoleServer,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    sync::{Mutex, mpsc},
};

use super::{MAX_MESSAGE_BYTES, Refusal, check};

/// The server's end of stdio: messages read from stdin that passed [`check`], answers written to
/// stdout one line each.
pub struct Stdio {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    out: Output,
}

/// Stdout, shared by rmcp's answers and the refusals: each line is written whole under the lock.
type Output = Arc<Mutex<tokio::io::Stdout>>;

impl Stdio {
    /// Starts reading this process's stdin.
    pub fn start() -> Self {
        let out: Output = Arc::new(Mutex::new(tokio::io::stdout()));
        let (sender, incoming) = mpsc::channel(16);
        tokio::spawn(read(BufReader::new(tokio::io::stdin()), sender, Arc::clone(&out)));
        Self { incoming, out }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = Arc::clone(&self.out);
        async move { write(&out, &serde_json::to_value(item)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// Writes `message` as one line.
async fn write(out: &Output, message: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

/// How one read of a line ended.
enum Line {
    /// A line (without its newline) is in the buffer.
    Whole,
    /// The line had more than [`MAX_MESSAGE_BYTES`]; it was read and dropped.
    TooLong,
    /// Stdin closed.
    End,
}

/// Reads lines from `input` until it closes: each that passes [`check`] and reads as a message
/// goes to `sender`; each other is answered on `out`.
async fn read<R: tokio::io::AsyncRead + Unpin>(
    mut input: BufReader<R>,
    sender: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    out: Output,
) {
    let mut line = Vec::new();
    loop {
        let refusal = match next_line(&mut input, &mut line).await {
            Ok(Line::End) => return,
            Err(e) => {
                tracing::warn!(error = %e, "stdin could not be read; the session ends");
                return;
            }
            Ok(Line::TooLong) => Refusal::too_large(),
            Ok(Line::Whole) => {
                let text = line.strip_suffix(b"\r").unwrap_or(&line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match check(text).and_then(|()| message(text)) {
                    Ok(Some(message)) => {
                        if sender.send(message).await.is_err() {
                            return; // the session ended
                        }
                        continue;
                    }
                    Ok(None) => continue,
                    Err(refusal) => refusal,
                }
            }
        };
        tracing::info!(code = refusal.code, "refused a message before reading it");
        if !refusal.notification && write(&out, &refusal.answer()).await.is_err() {
            return;
        }
    }
}

/// The message `text` holds; `None` for a notification MCP does not have (ignored, as rmcp
/// does); a refusal for JSON that is no message of MCP's.
fn message(text: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Refusal> {
    serde_json::from_slice(text).map(Some).or_else(|e: serde_json::Error| {
        let value: Value = serde_json::from_slice(text).unwrap_or_default();
        if value.get("id").is_none() && value.get("method").is_some() {
            return Ok(None);
        }
        Err(Refusal {
            id: value.get("id").cloned().unwrap_or_default(),
            code: -32600,
            message: format!(
                "the message is no JSON-RPC message of MCP's ({}): send \"jsonrpc\": \"2.0\", \"id\", \"method\" \
                 and \"params\"",
                kind(&e)
            ),
            notification: false,
        })
    })
}

/// Reads the next line of `input` into `line` (cleared first), without ever holding more than
/// [`MAX_MESSAGE_BYTES`] of it.
async fn next_line<R: tokio::io::AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    line.clear();
    let mut dropped = false;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (dropped, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Whole,
            });
        }
        let (chunk, ends) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], true),
            None => (buffer, false),
        };
        let used = chunk.len() + usize::from(ends);
        if !dropped && line.len() + chunk.len() <= MAX_MESSAGE_BYTES {
            line.extend_from_slice(chunk);
        } else {
            dropped = true;
            line.clear();
        }
        input.consume(used);
        if ends {
            return Ok(if dropped { Line::TooLong } else { Line::Whole });
        }
    }
}

/// What kind of mismatch `e` is, without the values it may quote (which could be secrets).
fn kind(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Data => "a member is missing or of the wrong type",
        _ => "it could not be read",
    }
}
