//! What the server reads of each incoming message before rmcp does: its size and how deep it
//! nests. rmcp drops a line it cannot parse without a word, and serde_json gives up at 128 levels,
//! so a client that sent a deep or broken message would wait forever for its answer. Here every
//! such message gets a JSON-RPC error that names the limit — answering the request's id when it
//! can be read — and the session goes on: over stdio ([`stdio`]) and HTTP
//! ([`crate::http`] runs [`check`] on every POST body).

pub mod stdio;

use serde::Deserialize;
use serde_json::{Value, json};

/// The largest message read, in bytes: a tool call is a few kilobytes.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// The deepest a message may nest, counting each object and array, the message's own included
/// (`{"params":{"arguments":{}}}` is 3 deep). Well below serde_json's 128, so every message let
/// through is read whole, and far above what any tool's arguments need.
pub const MAX_DEPTH: usize = 64;

/// JSON-RPC's code for a message that is not JSON.
const PARSE_ERROR: i64 = -32700;

/// JSON-RPC's code for JSON that is no request this server reads.
const INVALID_REQUEST: i64 = -32600;

/// A message refused before rmcp reads it: the JSON-RPC error it is answered with.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The request's id, or null when it could not be read.
    pub id: Value,
    /// [`PARSE_ERROR`] or [`INVALID_REQUEST`].
    pub code: i64,
    /// What was wrong and what to do.
    pub message: String,
    /// Whether the message was a notification (a method without an id): it gets no answer.
    pub notification: bool,
}

impl Refusal {
    /// The JSON-RPC error message answering it.
    pub fn answer(&self) -> Value {
        json!({ "jsonrpc": "2.0", "id": self.id, "error": { "code": self.code, "message": self.message } })
    }

    /// A message over [`MAX_MESSAGE_BYTES`], left unread.
    pub fn too_large() -> Self {
        Self {
            id: Value::Null,
            code: INVALID_REQUEST,
            message: format!(
                "the message has more than {MAX_MESSAGE_BYTES} bytes, the most this server reads of one: send \
                 smaller arguments"
            ),
            notification: false,
        }
    }
}

/// The top of a message: its id and whether it names a method. Read with serde_json, which skips
/// the other members without recursing, so a message of any depth yields its id.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

/// `Ok` when rmcp may read `message`; otherwise the error it is answered with.
pub fn check(message: &[u8]) -> Result<(), Refusal> {
    if message.len() > MAX_MESSAGE_BYTES {
        return Err(Refusal::too_large());
    }
    let head = serde_json::from_slice::<Head>(message).map_err(|e| Refusal {
        id: Value::Null,
        code: if e.is_data() { INVALID_REQUEST } else { PARSE_ERROR },
        message: if e.is_data() {
            "the message is JSON but not a JSON-RPC message: send an object with \"jsonrpc\": \"2.0\", \"id\", \
             \"method\" and \"params\""
                .to_owned()
        } else {
            format!("the message is not JSON ({e}): send one JSON-RPC message, whole, per line or request body")
        },
        notification: false,
    })?;
    let depth = depth(message);
    if depth > MAX_DEPTH {
        return Err(Refusal {
            notification: head.id.is_none() && head.method.is_some(),
            id: head.id.unwrap_or(Value::Null),
            code: INVALID_REQUEST,
            message: format!(
                "the message nests {depth} levels deep; this server reads at most {MAX_DEPTH} (the message and \
                 its params count): send flatter arguments"
            ),
        });
    }
    Ok(())
}

/// How deep the JSON text `message` nests (its objects and arrays), read without recursion.
fn depth(message: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in message {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (_, _, b'"') => in_string = !in_string,
            (false, _, b'{' | b'[') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, _, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `tools/call` whose message nests `levels` deep in all.
    fn call(levels: usize) -> String {
        let inner = levels - 3;
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}1{}}}}}}}"#,
            "[".repeat(inner),
            "]".repeat(inner)
        )
    }

    #[test]
    fn depth_counts_brackets_outside_strings() {
        assert_eq!(depth(br#"{"a":"{[\"{","b":[[1]]}"#), 3);
        assert_eq!(depth(b"1"), 0);
        assert_eq!(depth(call(MAX_DEPTH).as_bytes()), MAX_DEPTH);
    }

    #[test]
    fn the_deepest_message_passes_and_one_past_it_is_answered_with_its_id() {
        assert_eq!(check(call(MAX_DEPTH).as_bytes()), Ok(()));
        let refused = check(call(MAX_DEPTH + 1).as_bytes()).expect_err("refused");
        assert_eq!((refused.id, refused.code), (json!(7), INVALID_REQUEST));
        assert!(refused.message.contains(&format!("at most {MAX_DEPTH}")), "{}", refused.message);
        let far = check(call(5000).as_bytes()).expect_err("refused");
        assert_eq!(far.id, json!(7), "read past serde_json's own limit: {}", far.message);
    }

    #[test]
    fn broken_and_oversized_messages_are_answered_with_a_null_id() {
        let broken = check(br#"{"jsonrpc":"2.0","id":1,"#).expect_err("refused");
        assert_eq!((broken.id, broken.code), (Value::Null, PARSE_ERROR));
        assert_eq!(check(br#""a string""#).expect_err("refused").code, INVALID_REQUEST);
        let huge = vec![b' '; MAX_MESSAGE_BYTES + 1];
        assert!(check(&huge).expect_err("refused").message.contains("more than 1048576 bytes"));
        let note =
            format!(r#"{{"jsonrpc":"2.0","method":"n","params":{}{}}}"#, "[".repeat(70), "]".repeat(70));
        assert!(check(note.as_bytes()).expect_err("refused").notification);
    }
}
