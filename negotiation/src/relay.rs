//! The relay: accepts a signed message, checks it (shape, signature, sender, clock, registration,
//! replay, state machine), stores it in the audit log with the conversation's new state in one
//! transaction, and announces it on [`crate::NEGOTIATION_CHANNEL`] for subscribers. It also
//! records the system `contract` message once the agreed pact is on chain.

use std::{sync::Arc, time::Duration};

use alloy::primitives::{Address, B256, U256, keccak256};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::PgPool;

use crate::{
    Code,
    machine::{self, Conversation, Refusal, Status, Timeouts},
    message::{ContractNote, Envelope, Malformed, MessageType, PROTOCOL, canonical_json, conversation_id_ok},
    store::{self, Store, StoreError},
};

/// The most messages agents may write into one conversation (the relay's `contract` message may
/// still follow): a negotiation that has not converged by then is better started anew.
pub const MAX_MESSAGES: i64 = 100;

/// How far a message's timestamp may be from the relay's clock.
pub const MAX_SKEW: Duration = Duration::from_secs(300);

/// The relay's time: the system clock, or one a test moves by hand.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>);

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self(Arc::new(Utc::now))
    }

    /// A clock reading `now()`.
    pub fn from_fn(now: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    /// The time.
    pub fn now(&self) -> DateTime<Utc> {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({})", self.now().to_rfc3339())
    }
}

/// Why the relay refused a message; nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The message cannot be read.
    #[error("{0}")]
    Malformed(#[from] Malformed),
    /// The signature is not `from`'s.
    #[error(
        "the signature is not {from}'s: sign the EIP-712 HireMessage with the sender's key (domain HIRE 1.0, chain {chain_id})"
    )]
    BadSignature {
        /// The claimed sender.
        from: Address,
        /// The chain of the domain.
        chain_id: u64,
    },
    /// The timestamp is too far from the relay's clock.
    #[error("timestamp {timestamp} is more than {} s from the relay's clock ({now}): send fresh messages", MAX_SKEW.as_secs())]
    Stale {
        /// The message's timestamp.
        timestamp: String,
        /// The relay's time.
        now: DateTime<Utc>,
    },
    /// The sender or the recipient is not a registered agent.
    #[error("{0} is not a registered agent on this chain: register_agent first")]
    NotRegistered(Address),
    /// The very same message was accepted before.
    #[error("this message was already accepted (same signed content): replays are refused")]
    Replayed,
    /// The state machine refuses.
    #[error("{0}")]
    Refused(#[from] Refusal),
    /// The pact does not carry the agreed terms.
    #[error("{0}")]
    PactMismatch(String),
    /// The conversation holds [`MAX_MESSAGES`] messages already.
    #[error(
        "conversation {0} already holds {MAX_MESSAGES} messages, the most the relay keeps for one; open a new conversation"
    )]
    Full(String),
    /// The relay's tables could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for RelayError {
    fn from(e: sqlx::Error) -> Self {
        Self::Store(e.into())
    }
}

impl RelayError {
    /// The stable code clients read.
    pub const fn code(&self) -> Code {
        match self {
            Self::Malformed(_) => Code::BadMessage,
            Self::BadSignature { .. } => Code::BadSignature,
            Self::Stale { .. } => Code::StaleMessage,
            Self::NotRegistered(_) => Code::NotRegistered,
            Self::Replayed => Code::Replayed,
            Self::Refused(r) => r.code(),
            Self::PactMismatch(_) => Code::PactMismatch,
            Self::Full(_) => Code::ConversationFull,
            Self::Store(_) => Code::Internal,
        }
    }
}

/// A message the relay accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    /// Its conversation.
    pub conversation_id: String,
    /// Its place in the conversation, from 1.
    pub seq: i32,
    /// The conversation's status after it.
    pub status: Status,
    /// When the other side's time to answer runs out (RFC 3339).
    pub expires_at: String,
}

/// The relay over the index database of one chain.
#[derive(Debug, Clone)]
pub struct Relay {
    store: Store,
    chain_id: u64,
    timeouts: Timeouts,
    clock: Clock,
}

impl Relay {
    /// A relay for `chain_id` storing in `pool`.
    pub const fn new(pool: PgPool, chain_id: u64, timeouts: Timeouts, clock: Clock) -> Self {
        Self { store: Store::new(pool), chain_id, timeouts, clock }
    }

    /// Checks `envelope` and, if every check passes, stores it and announces it.
    pub async fn submit(&self, envelope: &Envelope) -> Result<Accepted, RelayError> {
        let payload = envelope.check()?;
        if envelope.kind == MessageType::Contract {
            return Err(Refusal::Illegal {
                kind: "contract",
                rule: "comes only from the relay, after sign_contract",
            }
            .into());
        }
        if envelope.signer(self.chain_id)? != envelope.from {
            return Err(RelayError::BadSignature { from: envelope.from, chain_id: self.chain_id });
        }
        let now = self.clock.now();
        let skew = (envelope.sent_at()? - now).abs();
        if skew > chrono::Duration::from_std(MAX_SKEW).unwrap_or(chrono::Duration::MAX) {
            return Err(RelayError::Stale { timestamp: envelope.timestamp.clone(), now });
        }
        let registered = self.store.registered(self.chain_id, &[envelope.from, envelope.to]).await?;
        if let Some(stranger) = [envelope.from, envelope.to].into_iter().find(|a| !registered.contains(a)) {
            return Err(RelayError::NotRegistered(stranger));
        }
        let digest = envelope.signing_hash(self.chain_id);
        let mut tx = self.store.pool().begin().await?;
        let current =
            store::lock(&mut tx, self.chain_id, &envelope.conversation_id).await?.map(|r| r.conversation);
        if store::seen(&mut tx, digest).await? {
            return Err(RelayError::Replayed);
        }
        if current.is_some()
            && store::written(&mut tx, self.chain_id, &envelope.conversation_id).await? >= MAX_MESSAGES
        {
            return Err(RelayError::Full(envelope.conversation_id.clone()));
        }
        let step = machine::step(
            current.as_ref(),
            &envelope.conversation_id,
            envelope.from,
            envelope.to,
            &payload,
            now,
            &self.timeouts,
        );
        let next = match step {
            Ok(next) => next,
            Err(Refusal::Expired { id, expired_at }) => {
                // The clock ran out before this message: the conversation is over.
                store::abandon(&mut tx, self.chain_id, &id, now).await?;
                tx.commit().await?;
                return Err(Refusal::Expired { id, expired_at }.into());
            }
            Err(other) => return Err(other.into()),
        };
        if !store::save(&mut tx, self.chain_id, &next, current.is_none(), now).await? {
            // Two openings of one id raced and the other won.
            return Err(Refusal::Illegal {
                kind: "opening",
                rule: "names a conversation id another opening just took: pick a new id",
            }
            .into());
        }
        let seq = store::append(&mut tx, self.chain_id, envelope, digest, now).await?;
        tx.commit().await?;
        Ok(Accepted {
            conversation_id: next.id.clone(),
            seq,
            status: next.status,
            expires_at: next.expires_at.to_rfc3339(),
        })
    }

    /// Records that pact `pact_id` carries the agreed terms of conversation `id`: the pact (as
    /// indexed) must be the seeker's request reserved for the worker (its counterparty) at the
    /// agreed price and deadline, its spec hash the hash of [`terms_document`]. Then links the
    /// two and appends the relay's `contract` message.
    pub async fn link_pact(&self, id: &str, pact_id: U256) -> Result<Accepted, RelayError> {
        if !conversation_id_ok(id) {
            return Err(Malformed::ConversationId.into());
        }
        let mut tx = self.store.pool().begin().await?;
        let record = store::lock(&mut tx, self.chain_id, id)
            .await?
            .ok_or_else(|| Refusal::NotOpened { id: id.to_owned() })?;
        let conversation = record.conversation;
        if conversation.status != Status::Contracted {
            return Err(RelayError::PactMismatch(format!(
                "conversation {id} is {}: only an accepted (CONTRACTED) conversation becomes a pact",
                conversation.status.name()
            )));
        }
        if let Some(existing) = record.pact_id {
            return Err(RelayError::PactMismatch(format!("conversation {id} is already pact #{existing}")));
        }
        let document = terms_document(self.chain_id, &conversation).map_err(RelayError::PactMismatch)?;
        let spec_hash = keccak256(document.as_bytes());
        let pact = store::indexed_pact(&mut tx, self.chain_id, pact_id).await?.ok_or_else(|| {
            RelayError::PactMismatch(format!("pact #{pact_id} is not in the index (yet): wait for its block"))
        })?;
        if !carries_agreement(&pact, &conversation, spec_hash) {
            return Err(RelayError::PactMismatch(format!(
                "pact #{pact_id} is not the seeker's request reserved for the worker {} with the agreed price, deadline and terms hash {spec_hash}",
                conversation.worker
            )));
        }
        let now = self.clock.now();
        store::link(&mut tx, self.chain_id, id, pact_id, &document, now).await?;
        let note = ContractNote { pact_id: pact_id.to_string(), spec_hash };
        let envelope = Envelope::new(
            MessageType::Contract,
            Address::ZERO,
            conversation.seeker,
            id,
            now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            serde_json::to_value(&note).unwrap_or_default(),
        );
        // The relay's own message: its digest is the terms' hash under the pact id, unique per pact.
        let digest = keccak256([spec_hash.as_slice(), &pact_id.to_be_bytes::<32>()].concat());
        let seq = store::append(&mut tx, self.chain_id, &envelope, digest, now).await?;
        tx.commit().await?;
        Ok(Accepted {
            conversation_id: id.to_owned(),
            seq,
            status: Status::Contracted,
            expires_at: conversation.expires_at.to_rfc3339(),
        })
    }
}

/// The document a signed conversation's pact commits to (its spec hash is the keccak256 of this
/// text): the protocol, chain, conversation, parties and the accepted terms, as canonical JSON.
pub fn terms_document(chain_id: u64, c: &Conversation) -> Result<String, String> {
    let terms = c.terms.as_ref().ok_or_else(|| format!("conversation {} has no terms", c.id))?;
    let deadline = terms.deadline.ok_or_else(|| {
        format!("conversation {} agreed no deadline; a pact needs one: propose or counter with one", c.id)
    })?;
    Ok(canonical_json(&json!({
        "protocol": PROTOCOL,
        "chainId": chain_id,
        "conversationId": c.id,
        "seeker": c.seeker,
        "worker": c.worker,
        "task": terms.task,
        "requirements": terms.requirements,
        "priceWei": terms.price.to_string(),
        "deadline": deadline.timestamp(),
    })))
}

/// Whether `pact` is the seeker's request reserved for the worker at the agreed price and deadline,
/// its spec hash `spec_hash`.
fn carries_agreement(pact: &store::IndexedPact, c: &Conversation, spec_hash: B256) -> bool {
    let terms = c.terms.as_ref();
    pact.creator == c.seeker
        && pact.initiator == 0
        && pact.counterparty == Some(c.worker)
        && pact.spec_hash == spec_hash
        && terms.is_some_and(|t| pact.payment == t.price)
        && terms.and_then(|t| t.deadline).is_some_and(|d| d.timestamp() == pact.deadline)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_answered_by_some_refusal() {
        let refusals = [
            RelayError::Malformed(Malformed::Signature),
            RelayError::BadSignature { from: Address::ZERO, chain_id: 1 },
            RelayError::Stale { timestamp: String::new(), now: Utc::now() },
            RelayError::NotRegistered(Address::ZERO),
            RelayError::Replayed,
            RelayError::Refused(Refusal::NotOpened { id: String::new() }),
            RelayError::Refused(Refusal::Closed { id: String::new(), status: Status::Declined }),
            RelayError::Refused(Refusal::Expired { id: String::new(), expired_at: Utc::now() }),
            RelayError::Refused(Refusal::NotParties {
                id: String::new(),
                seeker: Address::ZERO,
                worker: Address::ZERO,
            }),
            RelayError::Refused(Refusal::Illegal { kind: "x", rule: "y" }),
            RelayError::Refused(Refusal::BadValue(String::new())),
            RelayError::PactMismatch(String::new()),
            RelayError::Full(String::new()),
            RelayError::Store(StoreError::Db(sqlx::Error::RowNotFound)),
        ];
        let codes: std::collections::HashSet<Code> = refusals.iter().map(RelayError::code).collect();
        assert_eq!(codes.len(), Code::ALL.len(), "every code is some refusal's");
    }
}
