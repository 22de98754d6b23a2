//! The wallet ledger (migrations/0023, written by the MCP server's policy, docs/mcp.md §Policy) as
//! its readers see it: the human's export (`agentpact wallet ledger`), the page beside a
//! confirmation, the operator's GraphQL `walletLedger`. Entries are returned as stored — the body
//! verbatim, so a reader can check the hash and signature itself.

use agentpact_schema::i64_of;
use alloy::primitives::{Address, B256};
use sqlx::PgPool;

/// One ledger entry as stored.
#[derive(Debug, Clone)]
pub struct LedgerEntry {
    /// Its position in the wallet's chain, from 1.
    pub seq: i64,
    /// The body, exactly as hashed (a compact JSON text).
    pub body: String,
    /// keccak256 of the body.
    pub hash: B256,
    /// The wallet's EIP-191 signature of "AgentPact wallet ledger entry 0x<hash>" (65 bytes).
    pub signature: Vec<u8>,
}

/// Which end of the ledger to read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// Oldest first, from this entry on (1: the first).
    Entry(i64),
    /// Newest first.
    Newest,
}

/// At most `limit` entries of the ledger of `wallet` on `chain_id`, read `from` one end.
pub async fn entries(
    pool: &PgPool,
    chain_id: u64,
    wallet: Address,
    from: From,
    limit: i64,
) -> Result<Vec<LedgerEntry>, sqlx::Error> {
    let (start, newest) = match from {
        From::Entry(seq) => (seq, false),
        From::Newest => (1, true),
    };
    let rows = sqlx::query!(
        "SELECT seq, body, hash, signature FROM wallet_ledger
         WHERE chain_id = $1 AND wallet = $2 AND seq >= $3
         ORDER BY CASE WHEN $4 THEN -seq ELSE seq END LIMIT $5",
        i64_of(chain_id),
        wallet.as_slice(),
        start,
        newest,
        limit
    )
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|row| {
            let hash = B256::try_from(row.hash.as_slice()).map_err(|_| sqlx::Error::ColumnDecode {
                index: format!("wallet_ledger.hash of entry {}", row.seq),
                source: "not 32 bytes".into(),
            })?;
            Ok(LedgerEntry { seq: row.seq, body: row.body, hash, signature: row.signature })
        })
        .collect()
}
