//! The relay's tables, `conversations` and `negotiation_messages` (the append-only audit log). The
//! index tables it checks messages against (`agents`, `pacts`, `currencies`) it reads through
//! `agentpact-read`, the one reader of the index. Every query is checked against the schema at
//! compile time; every row is read back through [`Cells`], so a value that does not convert is an
//! error naming the table, key and column, never a default.
//!
//! Reads ([`Store`]) serve GraphQL and the MCP tools; the writes take the relay's open transaction.

use agentpact_contracts::closed_set;
use agentpact_schema::{Cells, Corrupt, i64_of};
use alloy::primitives::{Address, B256, U256};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{PgConnection, PgPool};

use crate::{
    machine::{Conversation, StageTerm, Status, Terms},
    message::{Envelope, MessageType, StageOffer},
    price::Price,
};

/// The channel the relay announces each accepted message on, with a [`MessageNote`].
pub const NEGOTIATION_CHANNEL: &str = "negotiation_message";

/// The most conversations one read lists.
pub const MAX_LIST: u32 = 100;

/// A negotiation message the relay accepted, as it announces it on [`NEGOTIATION_CHANNEL`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageNote {
    /// The chain.
    pub chain_id: u64,
    /// The conversation.
    pub conversation_id: String,
    /// The message's place in it.
    pub seq: i32,
    /// The sender.
    pub from: Address,
    /// The recipient.
    pub to: Address,
}

/// A conversation with what the relay knows beyond the state machine.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationRecord {
    /// The chain.
    pub chain_id: u64,
    /// Parties, status, terms, clock.
    pub conversation: Conversation,
    /// The pact that carries the terms, once signed.
    pub pact_id: Option<U256>,
    /// The document the pact's spec hash covers, once signed.
    pub terms_document: Option<String>,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// One message of the audit log.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    /// Its conversation.
    pub conversation_id: String,
    /// Its place, from 1.
    pub seq: i32,
    /// Its type.
    pub kind: MessageType,
    /// The sender (zero for the relay's `contract` message).
    pub from: Address,
    /// The recipient.
    pub to: Address,
    /// The timestamp as signed.
    pub timestamp: String,
    /// The payload.
    pub payload: Value,
    /// The signature (empty for the relay's own message).
    pub signature: String,
    /// When the relay accepted it.
    pub received_at: DateTime<Utc>,
}

closed_set! {
    /// Which conversations to list, by the names `get_conversations` and GraphQL's
    /// `conversations(status:)` take.
    #[derive(Default)]
    pub enum ConversationFilter {
        /// Still negotiating.
        #[default]
        Active => "active",
        /// Contracted, declined or abandoned.
        Completed => "completed",
        /// Every one.
        All => "all",
    }
}

/// Why a read or write of the relay's tables failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A stored value cannot be read back.
    #[error(transparent)]
    Corrupt(#[from] Corrupt),
    /// More conversations asked for than [`MAX_LIST`].
    #[error("a page holds at most {max} items; asked for {asked}")]
    PageTooLarge {
        /// The limit.
        max: u32,
        /// What was asked.
        asked: u32,
    },
}

/// A `conversations` row as stored.
struct ConversationRow {
    id: String,
    seeker: Vec<u8>,
    worker: Vec<u8>,
    status: String,
    task: Option<String>,
    requirements: Option<Vec<String>>,
    price: Option<String>,
    deadline: Option<DateTime<Utc>>,
    terms_by: Option<Vec<u8>>,
    stages: Option<serde_json::Value>,
    expires_at: DateTime<Utc>,
    pact_id: Option<String>,
    terms_document: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ConversationRow {
    fn read(self, chain_id: u64) -> Result<ConversationRecord, Corrupt> {
        let cells =
            Cells { table: "conversations", key: format!("chain {chain_id} conversation {}", self.id) };
        let terms = match self.terms_by {
            Some(by) => Some(Terms {
                task: cells.present("task", self.task)?,
                requirements: cells.present("requirements", self.requirements)?,
                price: cells
                    .named("price", &cells.present("price", self.price)?, |t| Price::parse(t).ok())?,
                deadline: self.deadline,
                stages: match self.stages {
                    None => Vec::new(),
                    Some(stored) => cells.named("stages", &stored.to_string(), |text| {
                        let offers: Vec<StageOffer> = serde_json::from_str(text).ok()?;
                        StageTerm::read_all(&offers).ok()
                    })?,
                },
                by: cells.address("terms_by", &by)?,
            }),
            None => None,
        };
        let pact_id = self.pact_id.as_deref().map(|p| cells.u256("pact_id", p)).transpose()?;
        Ok(ConversationRecord {
            chain_id,
            conversation: Conversation {
                seeker: cells.address("seeker", &self.seeker)?,
                worker: cells.address("worker", &self.worker)?,
                status: cells.named("status", &self.status, Status::from_name)?,
                terms,
                expires_at: self.expires_at,
                id: self.id,
                signed: pact_id.is_some(),
            },
            pact_id,
            terms_document: self.terms_document,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A `negotiation_messages` row as stored.
struct MessageRow {
    conversation_id: String,
    seq: i32,
    kind: String,
    sender: Vec<u8>,
    recipient: Vec<u8>,
    sent_at: String,
    payload: Value,
    signature: String,
    received_at: DateTime<Utc>,
}

impl MessageRow {
    fn read(self, chain_id: u64) -> Result<StoredMessage, Corrupt> {
        let cells = Cells {
            table: "negotiation_messages",
            key: format!("chain {chain_id} conversation {} seq {}", self.conversation_id, self.seq),
        };
        Ok(StoredMessage {
            kind: cells.named("kind", &self.kind, MessageType::from_name)?,
            from: cells.address("sender", &self.sender)?,
            to: cells.address("recipient", &self.recipient)?,
            conversation_id: self.conversation_id,
            seq: self.seq,
            timestamp: self.sent_at,
            payload: self.payload,
            signature: self.signature,
            received_at: self.received_at,
        })
    }
}

/// The relay's tables, read. Cheap to clone (a pool handle).
#[derive(Debug, Clone)]
pub struct Store {
    pool: PgPool,
}

impl Store {
    /// The tables in `pool`'s database.
    pub const fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// The pool.
    pub(crate) const fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Conversation `id` on `chain_id`.
    pub async fn conversation(
        &self,
        chain_id: u64,
        id: &str,
    ) -> Result<Option<ConversationRecord>, StoreError> {
        let row = sqlx::query_as!(
            ConversationRow,
            r#"SELECT id, seeker, worker, status, task, requirements, price, deadline, terms_by, stages,
                      expires_at, pact_id::text AS pact_id, terms_document, created_at, updated_at
               FROM conversations WHERE chain_id = $1 AND id = $2"#,
            i64_of(chain_id),
            id
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.read(chain_id)).transpose()?)
    }

    /// The conversation that became pact `pact_id`, if any.
    pub async fn conversation_of_pact(
        &self,
        chain_id: u64,
        pact_id: U256,
    ) -> Result<Option<ConversationRecord>, StoreError> {
        let row = sqlx::query_as!(
            ConversationRow,
            r#"SELECT id, seeker, worker, status, task, requirements, price, deadline, terms_by, stages,
                      expires_at, pact_id::text AS pact_id, terms_document, created_at, updated_at
               FROM conversations WHERE chain_id = $1 AND pact_id = $2::text::numeric"#,
            i64_of(chain_id),
            pact_id.to_string()
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.read(chain_id)).transpose()?)
    }

    /// Up to `limit` (at most [`MAX_LIST`]) conversations `agent` takes part in, latest change first.
    pub async fn conversations(
        &self,
        chain_id: u64,
        agent: Address,
        filter: ConversationFilter,
        limit: u32,
    ) -> Result<Vec<ConversationRecord>, StoreError> {
        if limit > MAX_LIST {
            return Err(StoreError::PageTooLarge { max: MAX_LIST, asked: limit });
        }
        let negotiating = match filter {
            ConversationFilter::Active => Some(true),
            ConversationFilter::Completed => Some(false),
            ConversationFilter::All => None,
        };
        let rows = sqlx::query_as!(
            ConversationRow,
            r#"SELECT id, seeker, worker, status, task, requirements, price, deadline, terms_by, stages,
                      expires_at, pact_id::text AS pact_id, terms_document, created_at, updated_at
               FROM conversations
               WHERE chain_id = $1 AND (seeker = $2 OR worker = $2)
                 AND ($3::bool IS NULL OR (status = 'NEGOTIATING') = $3)
               ORDER BY updated_at DESC, id LIMIT $4"#,
            i64_of(chain_id),
            agent.as_slice(),
            negotiating,
            i64::from(limit)
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| r.read(chain_id)).collect::<Result<_, _>>()?)
    }

    /// Every message of conversation `id`, in order.
    pub async fn conversation_messages(
        &self,
        chain_id: u64,
        id: &str,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        self.messages_after(chain_id, id, 0).await
    }

    /// The messages of conversation `id` after `seq`, in order.
    pub async fn messages_after(
        &self,
        chain_id: u64,
        id: &str,
        seq: i32,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let rows = sqlx::query_as!(
            MessageRow,
            "SELECT conversation_id, seq, kind, sender, recipient, sent_at, payload, signature, received_at
             FROM negotiation_messages WHERE chain_id = $1 AND conversation_id = $2 AND seq > $3 ORDER BY seq",
            i64_of(chain_id),
            id,
            seq
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| r.read(chain_id)).collect::<Result<_, _>>()?)
    }
}

/// Conversation `id`, locked for the rest of the transaction.
pub(crate) async fn lock(
    conn: &mut PgConnection,
    chain_id: u64,
    id: &str,
) -> Result<Option<ConversationRecord>, StoreError> {
    let row = sqlx::query_as!(
        ConversationRow,
        r#"SELECT id, seeker, worker, status, task, requirements, price, deadline, terms_by, stages,
                  expires_at, pact_id::text AS pact_id, terms_document, created_at, updated_at
           FROM conversations WHERE chain_id = $1 AND id = $2 FOR UPDATE"#,
        i64_of(chain_id),
        id
    )
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|r| r.read(chain_id)).transpose()?)
}

/// Whether a message with signing digest `digest` was accepted before.
pub(crate) async fn seen(conn: &mut PgConnection, digest: B256) -> Result<bool, StoreError> {
    let seen = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM negotiation_messages WHERE digest = $1) AS "seen!""#,
        digest.as_slice()
    )
    .fetch_one(conn)
    .await?;
    Ok(seen)
}

/// How many messages conversation `id` holds.
pub(crate) async fn written(conn: &mut PgConnection, chain_id: u64, id: &str) -> Result<i64, StoreError> {
    let count = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM negotiation_messages WHERE chain_id = $1 AND conversation_id = $2"#,
        i64_of(chain_id),
        id
    )
    .fetch_one(conn)
    .await?;
    Ok(count)
}

/// Marks conversation `id` as abandoned: its clock ran out before the message at `now`.
pub(crate) async fn abandon(
    conn: &mut PgConnection,
    chain_id: u64,
    id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query!(
        "UPDATE conversations SET status = $3, updated_at = $4 WHERE chain_id = $1 AND id = $2",
        i64_of(chain_id),
        id,
        Status::Abandoned.name(),
        now
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Writes `c` as the machine left it: a new row when `new`, else the existing one of the same
/// parties. `false` when nothing was written (two openings of one id raced and the other won).
pub(crate) async fn save(
    conn: &mut PgConnection,
    chain_id: u64,
    c: &Conversation,
    new: bool,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let t = c.terms.as_ref();
    let (task, requirements) = (t.map(|t| t.task.as_str()), t.map(|t| t.requirements.as_slice()));
    let (price, deadline, by) =
        (t.map(|t| t.price.to_string()), t.and_then(|t| t.deadline), t.map(|t| t.by.to_vec()));
    let stages = t.filter(|t| !t.stages.is_empty()).map(|t| {
        serde_json::Value::Array(
            t.stages.iter().map(|s| serde_json::to_value(s.offer()).unwrap_or_default()).collect(),
        )
    });
    // One upsert: a new conversation's row is inserted (an opening that lost a race to the same id
    // changes nothing); an existing one's is updated when its parties are the same.
    let written = sqlx::query!(
        "INSERT INTO conversations (chain_id, id, seeker, worker, status, task, requirements, price, deadline,
                                    terms_by, expires_at, created_at, updated_at, stages)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $14)
         ON CONFLICT (chain_id, id) DO UPDATE
           SET status = EXCLUDED.status, task = EXCLUDED.task, requirements = EXCLUDED.requirements,
               price = EXCLUDED.price, deadline = EXCLUDED.deadline, terms_by = EXCLUDED.terms_by,
               stages = EXCLUDED.stages, expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
           WHERE NOT $13 AND conversations.seeker = EXCLUDED.seeker AND conversations.worker = EXCLUDED.worker",
        i64_of(chain_id),
        c.id,
        c.seeker.as_slice(),
        c.worker.as_slice(),
        c.status.name(),
        task,
        requirements as Option<&[String]>,
        price,
        deadline,
        by,
        c.expires_at,
        now,
        new,
        stages
    )
    .execute(conn)
    .await?;
    Ok(written.rows_affected() > 0)
}

/// Links conversation `id` to pact `pact_id`, whose spec hash covers `document`.
pub(crate) async fn link(
    conn: &mut PgConnection,
    chain_id: u64,
    id: &str,
    pact_id: U256,
    document: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query!(
        "UPDATE conversations SET pact_id = $3::text::numeric, terms_document = $4, updated_at = $5
         WHERE chain_id = $1 AND id = $2",
        i64_of(chain_id),
        id,
        pact_id.to_string(),
        document,
        now
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Appends `e` to the audit log as its conversation's next message and announces it on
/// [`NEGOTIATION_CHANNEL`]; its place in the conversation.
pub(crate) async fn append(
    conn: &mut PgConnection,
    chain_id: u64,
    e: &Envelope,
    digest: B256,
    now: DateTime<Utc>,
) -> Result<i32, StoreError> {
    let seq = sqlx::query_scalar!(
        r#"INSERT INTO negotiation_messages (chain_id, conversation_id, seq, kind, sender, recipient, sent_at, payload,
                                             signature, digest, received_at)
           SELECT $1, $2, coalesce(max(seq), 0) + 1, $3, $4, $5, $6, $7, $8, $9, $10
           FROM negotiation_messages WHERE chain_id = $1 AND conversation_id = $2
           RETURNING seq"#,
        i64_of(chain_id),
        e.conversation_id,
        e.kind.name(),
        e.from.as_slice(),
        e.to.as_slice(),
        e.timestamp,
        e.payload,
        e.signature,
        digest.as_slice(),
        now
    )
    .fetch_one(&mut *conn)
    .await?;
    let note =
        MessageNote { chain_id, conversation_id: e.conversation_id.clone(), seq, from: e.from, to: e.to };
    // Plain data (numbers, strings, addresses) always serializes.
    let note = serde_json::to_string(&note).unwrap_or_default();
    sqlx::query!("SELECT pg_notify($1, $2)", NEGOTIATION_CHANNEL, note).execute(conn).await?;
    Ok(seq)
}
