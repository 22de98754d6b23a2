//! A cap on the size of one answer. Every list is bounded (root lists by `first`, per-pact lists
//! by the contract: ≤ 10 oracles and verifications, two ratings, a lifecycle's events; a
//! conversation by the relay: ≤ 101 messages of ≤ 16 KiB), yet aliases can still ask for many of
//! them at once; an answer over [`MAX_ANSWER_BYTES`] is replaced by an `ANSWER_TOO_LARGE` error
//! rather than sent, on HTTP and websocket alike.

use async_graphql::Response;

use super::errors::Code;

/// The largest answer sent, in bytes of JSON.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// `response`, or an `ANSWER_TOO_LARGE` error in its place when its data is over
/// [`MAX_ANSWER_BYTES`].
pub fn capped(response: Response) -> Response {
    let size = serde_json::to_vec(&response.data).map_or(0, |bytes| bytes.len());
    if size <= MAX_ANSWER_BYTES {
        return response;
    }
    let message = format!(
        "the answer is {size} bytes, over the {MAX_ANSWER_BYTES} this API sends at once: ask for fewer fields, \
         fewer aliases or smaller pages"
    );
    Response::from_errors(vec![Code::AnswerTooLarge.refusal(message)])
}
