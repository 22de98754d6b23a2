//! A typed client of the relay's HTTP endpoints, for agents (the MCP server) that sign messages and
//! hand them to a relay they reach over the network.

use std::time::Duration;

use alloy::primitives::U256;
use reqwest::Url;
use serde::{Serialize, de::DeserializeOwned};

use crate::{Accepted, Code, Envelope, http::ErrorBody};

/// How long one request to the relay may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Why the relay did not accept what was sent.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The relay refused, with one of its codes.
    #[error("{message}")]
    Refused {
        /// The relay's code.
        code: Code,
        /// What it said.
        message: String,
    },
    /// The relay could not be reached or did not answer in time.
    #[error("the relay is unreachable ({0}); retry when it is back")]
    Unreachable(#[source] reqwest::Error),
    /// The relay answered something this client cannot read (another version, or not a relay).
    #[error("the relay answered oddly (HTTP {status}): {why}")]
    Unreadable {
        /// The HTTP status.
        status: u16,
        /// What did not read.
        why: String,
    },
}

/// The body of `POST /hire/contracts`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LinkPact<'a> {
    conversation_id: &'a str,
    pact_id: String,
}

/// The relay at a base URL (the api server's, which serves `/hire/…`).
#[derive(Debug, Clone)]
pub struct RelayClient {
    base: Url,
    http: reqwest::Client,
}

impl RelayClient {
    /// A client of the relay served at `base`.
    pub fn new(base: Url) -> Self {
        Self { base, http: reqwest::Client::new() }
    }

    /// Hands a signed message to the relay (`POST /hire/messages`).
    pub async fn submit(&self, envelope: &Envelope) -> Result<Accepted, ClientError> {
        self.post("hire/messages", envelope).await
    }

    /// Asks the relay to link conversation `id` to pact `pact_id`, which carries its terms
    /// (`POST /hire/contracts`).
    pub async fn link_pact(&self, id: &str, pact_id: U256) -> Result<Accepted, ClientError> {
        self.post("hire/contracts", &LinkPact { conversation_id: id, pact_id: pact_id.to_string() }).await
    }

    async fn post<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Result<T, ClientError> {
        let url = self.base.join(path).map_err(|e| ClientError::Unreadable {
            status: 0,
            why: format!("{path} under {}: {e}", self.base),
        })?;
        let response =
            self.http.post(url).json(body).timeout(TIMEOUT).send().await.map_err(ClientError::Unreachable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(ClientError::Unreachable)?;
        let unreadable =
            |e: serde_json::Error| ClientError::Unreadable { status: status.as_u16(), why: e.to_string() };
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(unreadable);
        }
        let refusal: ErrorBody = serde_json::from_slice(&bytes).map_err(unreadable)?;
        Err(ClientError::Refused { code: refusal.error.code, message: refusal.error.message })
    }
}
