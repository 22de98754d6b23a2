//! The relay: accepts a signed message, checks it (shape, signature, sender, clock, registration,
//! replay, state machine), stores it in the audit log with the conversation's new state in one
//! transaction, and announces it on [`NEGOTIATION_CHANNEL`] for subscribers. It also records the
//! system `contract` message once the agreed pact is on chain.

use std::{sync::Arc, time::Duration};

use alloy::primitives::{Address, B256, U256, keccak256};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;
use sqlx::{PgConnection, PgPool, Row};

use super::{
    machine::{self, Conversation, Refusal, Status, Terms, Timeouts},
    message::{ContractNote, Envelope, Malformed, MessageType, PROTOCOL, canonical_json, conversation_id_ok},
};

/// The channel new messages are announced on: `{"chainId","conversationId","seq","from","to"}`.
pub const NEGOTIATION_CHANNEL: &str = "negotiation_message";

/// Every code the relay answers a refusal with (`RelayError::code`).
pub const CODES: [&str; 13] = [
    "BAD_MESSAGE",
    "BAD_SIGNATURE",
    "STALE_MESSAGE",
    "NOT_REGISTERED",
    "REPLAYED",
    "NO_CONVERSATION",
    "CONVERSATION_CLOSED",
    "CONVERSATION_EXPIRED",
    "WRONG_PARTIES",
    "ILLEGAL_TRANSITION",
    "PACT_MISMATCH",
    "CONVERSATION_FULL",
    "INTERNAL",
];

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
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}

impl RelayError {
    /// A stable code for clients.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::Malformed(_) => "BAD_MESSAGE",
            Self::BadSignature { .. } => "BAD_SIGNATURE",
            Self::Stale { .. } => "STALE_MESSAGE",
            Self::NotRegistered(_) => "NOT_REGISTERED",
            Self::Replayed => "REPLAYED",
            Self::Refused(r) => r.code(),
            Self::PactMismatch(_) => "PACT_MISMATCH",
            Self::Full(_) => "CONVERSATION_FULL",
            Self::Db(_) => "INTERNAL",
        }
    }
}

/// A message the relay accepted.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    /// Its conversation.
    pub conversation_id: String,
    /// Its place in the conversation, from 1.
    pub seq: i32,
    /// The conversation's status after it.
    pub status: &'static str,
    /// When the other side's time to answer runs out (RFC 3339).
    pub expires_at: String,
}

/// The relay over the index database of one chain.
#[derive(Debug, Clone)]
pub struct Relay {
    pool: PgPool,
    chain_id: u64,
    timeouts: Timeouts,
    clock: Clock,
}

impl Relay {
    /// A relay for `chain_id` storing in `pool`.
    pub const fn new(pool: PgPool, chain_id: u64, timeouts: Timeouts, clock: Clock) -> Self {
        Self { pool, chain_id, timeouts, clock }
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
        let registered = self.registered(&[envelope.from, envelope.to]).await?;
        if let Some(stranger) = [envelope.from, envelope.to].into_iter().find(|a| !registered.contains(a)) {
            return Err(RelayError::NotRegistered(stranger));
        }
        let digest = envelope.signing_hash(self.chain_id);
        let mut tx = self.pool.begin().await?;
        let current = load(&mut tx, self.chain_id, &envelope.conversation_id, true).await?;
        if seen(&mut tx, digest).await? {
            return Err(RelayError::Replayed);
        }
        if current.is_some()
            && written(&mut tx, self.chain_id, &envelope.conversation_id).await? >= MAX_MESSAGES
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
                sqlx::query(
                    "UPDATE conversations SET status = $3, updated_at = $4 WHERE chain_id = $1 AND id = $2",
                )
                .bind(chain(self.chain_id))
                .bind(&id)
                .bind(Status::Abandoned.name())
                .bind(now)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                return Err(Refusal::Expired { id, expired_at }.into());
            }
            Err(other) => return Err(other.into()),
        };
        save(&mut tx, self.chain_id, &next, current.is_none(), now).await?;
        let seq = append(&mut tx, self.chain_id, envelope, digest, now).await?;
        tx.commit().await?;
        Ok(Accepted {
            conversation_id: next.id.clone(),
            seq,
            status: next.status.name(),
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
        let mut tx = self.pool.begin().await?;
        let conversation = load(&mut tx, self.chain_id, id, true)
            .await?
            .ok_or_else(|| Refusal::NotOpened { id: id.to_owned() })?;
        if conversation.status != Status::Contracted {
            return Err(RelayError::PactMismatch(format!(
                "conversation {id} is {}: only an accepted (CONTRACTED) conversation becomes a pact",
                conversation.status.name()
            )));
        }
        let linked: Option<String> =
            sqlx::query_scalar("SELECT pact_id::text FROM conversations WHERE chain_id = $1 AND id = $2")
                .bind(chain(self.chain_id))
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
        if let Some(existing) = linked {
            return Err(RelayError::PactMismatch(format!("conversation {id} is already pact #{existing}")));
        }
        let document = terms_document(self.chain_id, &conversation).map_err(RelayError::PactMismatch)?;
        let spec_hash = keccak256(document.as_bytes());
        check_pact(&mut tx, self.chain_id, &conversation, pact_id, spec_hash).await?;
        let now = self.clock.now();
        sqlx::query(
            "UPDATE conversations SET pact_id = $3::text::numeric, terms_document = $4, updated_at = $5
             WHERE chain_id = $1 AND id = $2",
        )
        .bind(chain(self.chain_id))
        .bind(id)
        .bind(pact_id.to_string())
        .bind(&document)
        .bind(now)
        .execute(&mut *tx)
        .await?;
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
        let seq = append(&mut tx, self.chain_id, &envelope, digest, now).await?;
        tx.commit().await?;
        Ok(Accepted {
            conversation_id: id.to_owned(),
            seq,
            status: Status::Contracted.name(),
            expires_at: conversation.expires_at.to_rfc3339(),
        })
    }

    /// Which of `agents` are registered in AgentRegistry (as indexed), in one round trip.
    async fn registered(&self, agents: &[Address]) -> Result<Vec<Address>, sqlx::Error> {
        let keys: Vec<Vec<u8>> = agents.iter().map(|a| a.to_vec()).collect();
        let found: Vec<Vec<u8>> =
            sqlx::query_scalar("SELECT address FROM agents WHERE chain_id = $1 AND address = ANY($2)")
                .bind(chain(self.chain_id))
                .bind(&keys)
                .fetch_all(&self.pool)
                .await?;
        Ok(found.iter().filter_map(|a| Address::try_from(a.as_slice()).ok()).collect())
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

async fn check_pact(
    conn: &mut PgConnection,
    chain_id: u64,
    c: &Conversation,
    pact_id: U256,
    spec_hash: B256,
) -> Result<(), RelayError> {
    let row = sqlx::query(
        "SELECT creator, initiator, counterparty, spec_hash, payment::text AS payment,
                extract(epoch FROM deadline)::bigint AS deadline
         FROM pacts WHERE chain_id = $1 AND pact_id = $2::text::numeric",
    )
    .bind(chain(chain_id))
    .bind(pact_id.to_string())
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| {
        RelayError::PactMismatch(format!("pact #{pact_id} is not in the index (yet): wait for its block"))
    })?;
    let terms = c.terms.as_ref();
    let creator: Vec<u8> = row.try_get("creator")?;
    let initiator: i16 = row.try_get("initiator")?;
    let counterparty: Option<Vec<u8>> = row.try_get("counterparty")?;
    let hash: Vec<u8> = row.try_get("spec_hash")?;
    let payment: String = row.try_get("payment")?;
    let deadline: i64 = row.try_get("deadline")?;
    let agreed = creator == c.seeker.to_vec()
        && initiator == 0
        && counterparty == Some(c.worker.to_vec())
        && hash == spec_hash.to_vec()
        && terms.is_some_and(|t| payment == t.price.to_string())
        && terms.and_then(|t| t.deadline).is_some_and(|d| d.timestamp() == deadline);
    if !agreed {
        return Err(RelayError::PactMismatch(format!(
            "pact #{pact_id} is not the seeker's request reserved for the worker {} with the agreed price, deadline and terms hash {spec_hash}",
            c.worker
        )));
    }
    Ok(())
}

/// The conversation `id`, locked for this transaction when `lock`.
pub(crate) async fn load(
    conn: &mut PgConnection,
    chain_id: u64,
    id: &str,
    lock: bool,
) -> Result<Option<Conversation>, sqlx::Error> {
    let sql = format!(
        "SELECT id, seeker, worker, status, task, requirements, price::text AS price, deadline, terms_by, expires_at
         FROM conversations WHERE chain_id = $1 AND id = $2{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let row =
        sqlx::query(sqlx::AssertSqlSafe(sql)).bind(chain(chain_id)).bind(id).fetch_optional(conn).await?;
    row.map(|r| conversation(&r)).transpose()
}

/// A `conversations` row as the machine's [`Conversation`].
pub(crate) fn conversation(r: &sqlx::postgres::PgRow) -> Result<Conversation, sqlx::Error> {
    let address = |col: &str| -> Result<Address, sqlx::Error> {
        Ok(Address::try_from(r.try_get::<Vec<u8>, _>(col)?.as_slice()).unwrap_or_default())
    };
    let by: Option<Vec<u8>> = r.try_get("terms_by")?;
    let terms = match by {
        Some(by) => Some(Terms {
            task: r.try_get::<Option<String>, _>("task")?.unwrap_or_default(),
            requirements: r.try_get::<Option<Vec<String>>, _>("requirements")?.unwrap_or_default(),
            price: r.try_get::<Option<String>, _>("price")?.and_then(|p| p.parse().ok()).unwrap_or_default(),
            deadline: r.try_get("deadline")?,
            by: Address::try_from(by.as_slice()).unwrap_or_default(),
        }),
        None => None,
    };
    let status: String = r.try_get("status")?;
    Ok(Conversation {
        id: r.try_get("id")?,
        seeker: address("seeker")?,
        worker: address("worker")?,
        status: Status::from_name(&status).unwrap_or(Status::Abandoned),
        terms,
        expires_at: r.try_get("expires_at")?,
    })
}

async fn seen(conn: &mut PgConnection, digest: B256) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM negotiation_messages WHERE digest = $1)")
        .bind(digest.to_vec())
        .fetch_one(conn)
        .await
}

async fn save(
    conn: &mut PgConnection,
    chain_id: u64,
    c: &Conversation,
    new: bool,
    now: DateTime<Utc>,
) -> Result<(), RelayError> {
    let t = c.terms.as_ref();
    let sql = if new {
        "INSERT INTO conversations (chain_id, id, seeker, worker, status, task, requirements, price, deadline,
                                    terms_by, expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::numeric, $9, $10, $11, $12, $12)
         ON CONFLICT (chain_id, id) DO NOTHING"
    } else {
        "UPDATE conversations SET status = $5, task = $6, requirements = $7, price = $8::text::numeric,
                deadline = $9, terms_by = $10, expires_at = $11, updated_at = $12
         WHERE chain_id = $1 AND id = $2 AND seeker = $3 AND worker = $4"
    };
    let written = sqlx::query(sql)
        .bind(chain(chain_id))
        .bind(&c.id)
        .bind(c.seeker.to_vec())
        .bind(c.worker.to_vec())
        .bind(c.status.name())
        .bind(t.map(|t| t.task.clone()))
        .bind(t.map(|t| t.requirements.clone()))
        .bind(t.map(|t| t.price.to_string()))
        .bind(t.and_then(|t| t.deadline))
        .bind(t.map(|t| t.by.to_vec()))
        .bind(c.expires_at)
        .bind(now)
        .execute(conn)
        .await?
        .rows_affected();
    if written == 0 {
        // Two openings of one id raced and the other won.
        return Err(Refusal::Illegal {
            kind: "opening",
            rule: "names a conversation id another opening just took: pick a new id",
        }
        .into());
    }
    Ok(())
}

/// Appends `e` to the audit log as its conversation's next message and announces it.
/// How many messages conversation `id` holds.
async fn written(conn: &mut PgConnection, chain_id: u64, id: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT count(*) FROM negotiation_messages WHERE chain_id = $1 AND conversation_id = $2",
    )
    .bind(chain(chain_id))
    .bind(id)
    .fetch_one(conn)
    .await
}

async fn append(
    conn: &mut PgConnection,
    chain_id: u64,
    e: &Envelope,
    digest: B256,
    now: DateTime<Utc>,
) -> Result<i32, sqlx::Error> {
    let seq: i32 = sqlx::query_scalar(
        "INSERT INTO negotiation_messages (chain_id, conversation_id, seq, kind, sender, recipient, sent_at, payload,
                                           signature, digest, received_at)
         SELECT $1, $2, coalesce(max(seq), 0) + 1, $3, $4, $5, $6, $7, $8, $9, $10
         FROM negotiation_messages WHERE chain_id = $1 AND conversation_id = $2
         RETURNING seq",
    )
    .bind(chain(chain_id))
    .bind(&e.conversation_id)
    .bind(e.kind.name())
    .bind(e.from.to_vec())
    .bind(e.to.to_vec())
    .bind(&e.timestamp)
    .bind(&e.payload)
    .bind(&e.signature)
    .bind(digest.to_vec())
    .bind(now)
    .fetch_one(&mut *conn)
    .await?;
    let note = json!({
        "chainId": chain_id, "conversationId": e.conversation_id, "seq": seq, "from": e.from, "to": e.to,
    });
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(NEGOTIATION_CHANNEL)
        .bind(note.to_string())
        .execute(conn)
        .await?;
    Ok(seq)
}

fn chain(chain_id: u64) -> i64 {
    i64::try_from(chain_id).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_code_is_listed() {
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
            RelayError::Db(sqlx::Error::RowNotFound),
        ];
        for e in refusals {
            assert!(CODES.contains(&e.code()), "{} is not in CODES", e.code());
        }
    }
}
