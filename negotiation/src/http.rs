//! The relay's HTTP endpoints:
//!
//! - `POST /hire/messages`: a signed [`Envelope`]. 201 with the conversation's new state, or an
//!   error `{"error": {"code", "message"}}` (400 unreadable or stale, 401 bad signature, 403 an
//!   opening message to someone who is not a registered agent, 409 replayed or refused by the state
//!   machine, 410 closed or expired).
//! - `POST /hire/contracts`: `{"conversationId", "pactId"}` — links an accepted conversation to the
//!   pact that carries its terms (checked against the index) and appends the relay's `contract`
//!   message. Anyone may ask: the pact on chain is the proof.
//!
//! Every refusal is a [`RelayError`], answered by its one [`IntoResponse`]: the status its
//! [`Code`] maps to and one body, `{"error": {"code", "message"}}`, which [`crate::RelayClient`]
//! reads back with the same type.

use alloy::primitives::U256;
use axum::{
    Json, Router,
    extract::{State, rejection::JsonRejection},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::post,
};
use serde::{Deserialize, Serialize};

use crate::{Accepted, Code, Envelope, Relay, RelayError};

/// The relay's routes, for a router of any state.
pub fn routes<S: Clone + Send + Sync + 'static>(relay: Relay) -> Router<S> {
    Router::new()
        .route("/hire/messages", post(message))
        .route("/hire/contracts", post(contract))
        .with_state(relay)
}

/// What an endpoint answers: 201 with the message accepted, or the refusal.
type Answer = Result<(StatusCode, Json<Accepted>), RelayError>;

async fn message(State(relay): State<Relay>, body: Result<Json<Envelope>, JsonRejection>) -> Answer {
    let Json(envelope) = body?;
    Ok((StatusCode::CREATED, Json(relay.submit(&envelope).await?)))
}

/// The body of `POST /hire/contracts`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LinkPact {
    conversation_id: String,
    pact_id: U256,
}

async fn contract(State(relay): State<Relay>, body: Result<Json<LinkPact>, JsonRejection>) -> Answer {
    let Json(link) = body?;
    Ok((StatusCode::CREATED, Json(relay.link_pact(&link.conversation_id, link.pact_id).await?)))
}

/// A body that is not the endpoint's JSON: `BAD_MESSAGE`, saying why in at most 300 characters.
impl From<JsonRejection> for RelayError {
    fn from(e: JsonRejection) -> Self {
        Self::Body(e.body_text().chars().take(300).collect())
    }
}

/// The body of every refusal: `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ErrorBody {
    pub(crate) error: Said,
}

/// A refusal's code and what it says.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Said {
    pub(crate) code: Code,
    pub(crate) message: String,
}

impl RelayError {
    /// The refusal as sent: its code's HTTP status and body. The relay's own failures are logged
    /// and told to the client without their details.
    fn answer(self) -> (StatusCode, ErrorBody) {
        let code = self.code();
        let message = match self {
            Self::Store(_) | Self::Index(_) => {
                tracing::error!(error = %self, "relay database failure");
                "the relay's database failed; retry shortly".to_owned()
            }
            other => other.to_string(),
        };
        let status = StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, ErrorBody { error: Said { code, message } })
    }
}

impl IntoResponse for RelayError {
    fn into_response(self) -> Response {
        let (status, body) = self.answer();
        (status, Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{StoreError, machine::Refusal};

    #[test]
    fn a_refusal_is_sent_with_its_codes_status_in_the_body_the_client_reads() {
        let refused = RelayError::Refused(Refusal::NotOpened { id: "c1".into() });
        let said = refused.to_string();
        let (status, body) = refused.answer();
        assert_eq!(status, StatusCode::NOT_FOUND);
        let sent = serde_json::to_value(&body).expect("serializes");
        assert_eq!(sent, serde_json::json!({ "error": { "code": "NO_CONVERSATION", "message": said } }));
        let read: ErrorBody = serde_json::from_value(sent).expect("the client's type reads it");
        assert_eq!((read.error.code, read.error.message), (Code::NoConversation, said));
    }

    #[test]
    fn the_relays_own_failure_is_a_500_without_its_details() {
        let (status, body) = RelayError::Store(StoreError::Db(sqlx::Error::PoolTimedOut)).answer();
        assert_eq!((status, body.error.code), (StatusCode::INTERNAL_SERVER_ERROR, Code::Internal));
        assert!(!body.error.message.contains("pool"), "{}", body.error.message);
    }

    #[test]
    fn an_unreadable_body_is_a_bad_message() {
        let (status, body) = RelayError::Body("expected value at line 1".into()).answer();
        assert_eq!((status, body.error.code), (StatusCode::BAD_REQUEST, Code::BadMessage));
    }
}
