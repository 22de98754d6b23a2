//! Negotiations as the relay stored them: conversations and their messages (the audit log).

use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, U256};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::Row;

use super::{MAX_PAGE_SIZE, ReadError, Reader};
use crate::negotiation::{Conversation, relay};

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
    /// Its type (`proposal`, …).
    pub kind: String,
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

/// Which conversations to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConversationFilter {
    /// Still negotiating.
    #[default]
    Active,
    /// Contracted, declined or abandoned.
    Completed,
    /// Every one.
    All,
}

const COLUMNS: &str = "id, seeker, worker, status, task, requirements, price::text AS price, deadline, terms_by, \
    expires_at, pact_id::text AS pact_id, terms_document, created_at, updated_at";

impl Reader {
    /// Conversation `id` on `chain_id`.
    pub async fn conversation(
        &self,
        chain_id: u64,
        id: &str,
    ) -> Result<Option<ConversationRecord>, ReadError> {
        let sql = format!("SELECT {COLUMNS} FROM conversations WHERE chain_id = $1 AND id = $2");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(i64_of(chain_id))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.map(|r| record(chain_id, &r)).transpose()?)
    }

    /// The conversation that became pact `pact_id`, if any.
    pub async fn conversation_of_pact(
        &self,
        chain_id: u64,
        pact_id: U256,
    ) -> Result<Option<ConversationRecord>, ReadError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM conversations WHERE chain_id = $1 AND pact_id = $2::text::numeric"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(i64_of(chain_id))
            .bind(pact_id.to_string())
            .fetch_optional(self.pool())
            .await?;
        Ok(row.map(|r| record(chain_id, &r)).transpose()?)
    }

    /// Up to `limit` (at most [`MAX_PAGE_SIZE`]) conversations `agent` takes part in, latest
    /// change first.
    pub async fn conversations(
        &self,
        chain_id: u64,
        agent: Address,
        filter: ConversationFilter,
        limit: u32,
    ) -> Result<Vec<ConversationRecord>, ReadError> {
        if limit > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: limit });
        }
        let status = match filter {
            ConversationFilter::Active => "AND status = 'NEGOTIATING'",
            ConversationFilter::Completed => "AND status <> 'NEGOTIATING'",
            ConversationFilter::All => "",
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM conversations WHERE chain_id = $1 AND (seeker = $2 OR worker = $2) {status}
             ORDER BY updated_at DESC, id LIMIT $3"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(i64_of(chain_id))
            .bind(agent.to_vec())
            .bind(i64::from(limit))
            .fetch_all(self.pool())
            .await?;
        Ok(rows.iter().map(|r| record(chain_id, r)).collect::<Result<_, _>>()?)
    }

    /// Every message of conversation `id`, in order.
    pub async fn conversation_messages(
        &self,
        chain_id: u64,
        id: &str,
    ) -> Result<Vec<StoredMessage>, ReadError> {
        self.messages_where(chain_id, id, 0).await
    }

    /// The messages of conversation `id` after `seq`, in order.
    pub async fn messages_after(
        &self,
        chain_id: u64,
        id: &str,
        seq: i32,
    ) -> Result<Vec<StoredMessage>, ReadError> {
        self.messages_where(chain_id, id, seq).await
    }

    async fn messages_where(
        &self,
        chain_id: u64,
        id: &str,
        after: i32,
    ) -> Result<Vec<StoredMessage>, ReadError> {
        let rows = sqlx::query(
            "SELECT conversation_id, seq, kind, sender, recipient, sent_at, payload, signature, received_at
             FROM negotiation_messages WHERE chain_id = $1 AND conversation_id = $2 AND seq > $3 ORDER BY seq",
        )
        .bind(i64_of(chain_id))
        .bind(id)
        .bind(after)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let seq: i32 = r.try_get("seq")?;
                let row = Cells {
                    table: "negotiation_messages",
                    key: format!("chain {chain_id} conversation {id} seq {seq}"),
                };
                let address = |column: &'static str| -> Result<Address, ReadError> {
                    Ok(row.address(column, &r.try_get::<Vec<u8>, _>(column)?)?)
                };
                Ok(StoredMessage {
                    conversation_id: r.try_get("conversation_id")?,
                    seq,
                    kind: r.try_get("kind")?,
                    from: address("sender")?,
                    to: address("recipient")?,
                    timestamp: r.try_get("sent_at")?,
                    payload: r.try_get("payload")?,
                    signature: r.try_get("signature")?,
                    received_at: r.try_get("received_at")?,
                })
            })
            .collect()
    }
}

fn record(chain_id: u64, r: &sqlx::postgres::PgRow) -> Result<ConversationRecord, sqlx::Error> {
    Ok(ConversationRecord {
        chain_id,
        conversation: relay::conversation(r)?,
        pact_id: r.try_get::<Option<String>, _>("pact_id")?.and_then(|p| p.parse().ok()),
        terms_document: r.try_get("terms_document")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}
