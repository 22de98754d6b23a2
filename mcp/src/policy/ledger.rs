//! The ledger of every attempt: one entry per decision and per transaction's fate, appended in
//! the decision's own transaction under the wallet's lock, so the entries of all processes form
//! one chain. An entry's body is a compact JSON text stored verbatim; its hash is the keccak256
//! of that text; the wallet's key signs "AgentPact wallet ledger entry 0x<hash>" (EIP-191). Each
//! body names the previous entry's hash, so removing, reordering or editing an entry breaks the
//! chain; `scripts/verify-ledger.py` checks a ledger offline (docs/mcp.md §Policy).

use agentpact_schema::i64_of;
use alloy::{
    primitives::{Address, B256, U256, keccak256},
    signers::{SignerSync, local::PrivateKeySigner},
};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{Postgres, Transaction};

use crate::outcome::ToolError;

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The policy let a spend through (it is reserved).
    Allowed,
    /// The policy holds a spend for the human's yes.
    Held,
    /// Refused, by the rule the entry names.
    Refused,
    /// A transaction was sent.
    Sent,
    /// A sent transaction was mined and succeeded.
    Mined,
    /// A transaction failed: refused by the node, or mined reverted.
    Failed,
}

impl Event {
    /// Its name in the body and the `event` column.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Held => "held",
            Self::Refused => "refused",
            Self::Sent => "sent",
            Self::Mined => "mined",
            Self::Failed => "failed",
        }
    }
}

/// The spend an entry is about.
#[derive(Debug, Clone)]
pub struct SpendNote {
    /// In base units.
    pub amount: U256,
    /// The currency's symbol.
    pub symbol: String,
    /// To whom, when named.
    pub counterparty: Option<Address>,
}

/// One entry before it is chained.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// What happened.
    pub event: Event,
    /// The tool whose call it was.
    pub tool: &'a str,
    /// The spend, when the call makes one.
    pub spend: Option<&'a SpendNote>,
    /// The rule that refused or held it.
    pub rule: Option<&'a str>,
    /// The sentence saying what was decided or what happened.
    pub reason: &'a str,
    /// The transaction, once sent.
    pub tx: Option<B256>,
}

/// The body as hashed: its keys in this order, compact.
#[derive(Serialize)]
struct Body<'a> {
    v: u8,
    seq: i64,
    prev: String,
    at: String,
    chain_id: u64,
    wallet: String,
    event: &'static str,
    tool: &'a str,
    amount: Option<String>,
    currency: Option<&'a str>,
    counterparty: Option<String>,
    rule: Option<&'a str>,
    reason: &'a str,
    tx: Option<String>,
    policy: Option<String>,
}

/// The message the wallet signs for the entry whose hash is `hash`.
pub fn signed_text(hash: B256) -> String {
    format!("AgentPact wallet ledger entry {hash}")
}

/// Where an entry goes: the wallet's chain, its key, the policy in force and the clock.
pub struct Chainer<'k> {
    /// The chain.
    pub chain_id: u64,
    /// Signs each entry; its address is the wallet.
    pub signer: &'k PrivateKeySigner,
    /// The keccak256 of the policy the decision was made under, if one was set.
    pub policy: Option<B256>,
    /// The database's time of the decision.
    pub now: DateTime<Utc>,
}

impl Chainer<'_> {
    /// Appends `entry` to the wallet's ledger inside `tx` (which holds the wallet's lock).
    pub async fn append(
        &self,
        tx: &mut Transaction<'_, Postgres>,
        entry: &Entry<'_>,
    ) -> Result<(), ToolError> {
        let wallet = self.signer.address();
        let last = sqlx::query!(
            "SELECT seq, hash FROM wallet_ledger WHERE chain_id = $1 AND wallet = $2 ORDER BY seq DESC LIMIT 1",
            i64_of(self.chain_id),
            wallet.as_slice()
        )
        .fetch_optional(&mut **tx)
        .await
        .map_err(ToolError::PolicyStore)?;
        let (seq, prev) = match last {
            Some(row) => {
                (row.seq + 1, B256::try_from(row.hash.as_slice()).map_err(|_| unreadable_hash(row.seq))?)
            }
            None => (1, B256::ZERO),
        };
        let body = Body {
            v: 1,
            seq,
            prev: prev.to_string(),
            at: self.now.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
            chain_id: self.chain_id,
            wallet: wallet.to_checksum(None),
            event: entry.event.name(),
            tool: entry.tool,
            amount: entry.spend.map(|s| s.amount.to_string()),
            currency: entry.spend.map(|s| s.symbol.as_str()),
            counterparty: entry.spend.and_then(|s| s.counterparty).map(|a| a.to_checksum(None)),
            rule: entry.rule,
            reason: entry.reason,
            tx: entry.tx.map(|t| t.to_string()),
            policy: self.policy.map(|p| p.to_string()),
        };
        let body = serde_json::to_string(&body)
            .map_err(|source| ToolError::Unserializable { what: "a ledger entry", source })?;
        let hash = keccak256(body.as_bytes());
        let signature = self
            .signer
            .sign_message_sync(signed_text(hash).as_bytes())
            .map_err(|source| ToolError::Signing { what: "ledger entry", source })?
            .as_bytes();
        sqlx::query!(
            "INSERT INTO wallet_ledger (chain_id, wallet, seq, at, event, tool, body, hash, signature)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            i64_of(self.chain_id),
            wallet.as_slice(),
            seq,
            self.now,
            entry.event.name(),
            entry.tool,
            body,
            hash.as_slice(),
            signature.as_slice()
        )
        .execute(&mut **tx)
        .await
        .map_err(ToolError::PolicyStore)?;
        Ok(())
    }
}

/// A stored hash that is not 32 bytes: the ledger cannot be extended from it.
fn unreadable_hash(seq: i64) -> ToolError {
    ToolError::PolicyStore(sqlx::Error::ColumnDecode {
        index: format!("wallet_ledger.hash of entry {seq}"),
        source: "not 32 bytes".into(),
    })
}
