//! The relay's HTTP endpoints:
//!
//! - `POST /hire/messages`: a signed [`Envelope`]. 201 with the conversation's new state, or an
//!   error `{"error": {"code", "message"}}` (400 unreadable or stale, 401 bad signature, 403 not a
//!   registered agent, 409 replayed or refused by the state machine, 410 closed or expired).
//! - `POST /hire/contracts`: `{"conversationId", "pactId"}` — links an accepted conversation to the
//!   pact that carries its terms (checked against the index) and appends the relay's `contract`
//!   message. Anyone may ask: the pact on chain is the proof.

use alloy::primitives::U256;
use axum::{
    Json, Router,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::post,
};
use serde::Deserialize;
use serde_json::json;

use crate::{Accepted, Code, Envelope, Relay, RelayError};

/// The relay's routes, for a router of any state.
pub fn routes<S: Clone + Send + Sync + 'static>(relay: Relay) -> Router<S> {
    Router::new()
        .route("/hire/messages", post(message))
        .route("/hire/contracts", post(contract))
        .with_state(relay)
}

async fn message(
    State(relay): State<Relay>,
    body: Result<Json<Envelope>, axum::extract::rejection::JsonRejection>,
) -> Response {
    match body {
        Ok(Json(envelope)) => answer(relay.submit(&envelope).await),
        Err(e) => bad_body(&e.body_text()),
    }
}

/// The body of `POST /hire/contracts`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LinkPact {
    conversation_id: String,
    pact_id: U256,
}

async fn contract(
    State(relay): State<Relay>,
    body: Result<Json<LinkPact>, axum::extract::rejection::JsonRejection>,
) -> Response {
    match body {
        Ok(Json(link)) => answer(relay.link_pact(&link.conversation_id, link.pact_id).await),
        Err(e) => bad_body(&e.body_text()),
    }
}

fn answer(result: Result<Accepted, RelayError>) -> Response {
    match result {
        Ok(accepted) => (StatusCode::CREATED, Json(accepted)).into_response(),
        Err(RelayError::Store(why)) => {
            tracing::error!(error = %why, "relay database failure");
            refusal(Code::Internal, "the relay's database failed; retry shortly")
        }
        Err(e) => refusal(e.code(), &e.to_string()),
    }
}

fn bad_body(why: &str) -> Response {
    let message: String = why.chars().take(300).collect();
    refusal(Code::BadMessage, &message)
}

/// `{"error": {"code", "message"}}` with the code's HTTP status.
fn refusal(code: Code, message: &str) -> Response {
    let status = StatusCode::from_u16(code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}
