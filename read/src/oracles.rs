//! Oracles as the registry knows them, and the scores they gave.

use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, B256, U256};
use chrono::{DateTime, Utc};

use super::{MAX_PAGE_SIZE, ReadError, Reader};

pub use agentpact_contracts::OracleStatus;

/// An oracle of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oracle {
    /// Its address.
    pub address: Address,
    /// Its stake, in wei.
    pub stake: U256,
    /// What it can verify.
    pub capabilities: Vec<String>,
    /// Active or deregistered.
    pub status: OracleStatus,
    /// When it registered.
    pub registered_at: DateTime<Utc>,
    /// When a deregistered oracle's stake can be withdrawn.
    pub unlock_at: Option<DateTime<Utc>>,
}

/// Which oracles to list.
#[derive(Debug, Clone, Default)]
pub struct OracleFilter {
    /// Offering this capability (exact name).
    pub capability: Option<String>,
    /// Staking at least this (wei).
    pub min_stake: Option<U256>,
    /// In this status.
    pub status: Option<OracleStatus>,
}

/// One oracle's score on one pact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// The pact.
    pub pact_id: U256,
    /// The stage of the pact it scored (0 for a one-stage pact).
    pub stage: u8,
    /// The oracle.
    pub oracle: Address,
    /// Its score, 0-100.
    pub score: u8,
    /// Hash of its evidence.
    pub proof: B256,
    /// When it was submitted.
    pub submitted_at: DateTime<Utc>,
    /// The block that carried it.
    pub block_number: u64,
}

impl Reader {
    /// The oracle at `address` on `chain_id`, if registered (a withdrawn oracle is gone).
    pub async fn oracle(&self, chain_id: u64, oracle: Address) -> Result<Option<Oracle>, ReadError> {
        let list = self.oracles_where(chain_id, Some(oracle), &OracleFilter::default(), 1).await?;
        Ok(list.into_iter().next())
    }

    /// Up to `limit` (at most [`MAX_PAGE_SIZE`]) oracles passing `filter`, largest stake first.
    pub async fn oracles(
        &self,
        chain_id: u64,
        filter: &OracleFilter,
        limit: u32,
    ) -> Result<Vec<Oracle>, ReadError> {
        if limit > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: limit });
        }
        self.oracles_where(chain_id, None, filter, limit).await
    }

    async fn oracles_where(
        &self,
        chain_id: u64,
        only: Option<Address>,
        filter: &OracleFilter,
        limit: u32,
    ) -> Result<Vec<Oracle>, ReadError> {
        let rows = sqlx::query!(
            r#"SELECT address, stake::text AS "stake!", capabilities, status, registered_at, unlock_at
               FROM oracles
               WHERE chain_id = $1 AND ($2::bytea IS NULL OR address = $2)
                 AND ($3::text IS NULL OR $3 = ANY(capabilities))
                 AND ($4::text IS NULL OR stake >= $4::numeric)
                 AND ($5::text IS NULL OR status = $5)
               ORDER BY stake DESC, address LIMIT $6"#,
            i64_of(chain_id),
            only.map(|a| a.to_vec()),
            filter.capability,
            filter.min_stake.map(|s| s.to_string()),
            filter.status.map(OracleStatus::name),
            i64::from(limit),
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let row = Cells {
                    table: "oracles",
                    key: format!("chain {chain_id} oracle 0x{}", alloy::hex::encode(&r.address)),
                };
                Ok(Oracle {
                    address: row.address("address", &r.address)?,
                    stake: row.u256("stake", &r.stake)?,
                    capabilities: r.capabilities,
                    status: row.named("status", &r.status, OracleStatus::from_name)?,
                    registered_at: r.registered_at,
                    unlock_at: r.unlock_at,
                })
            })
            .collect()
    }

    /// The scores given on `pact_id` (in submission order), or by `oracle` (newest first, at most
    /// `limit`). At least one of the two must be given.
    pub async fn verifications(
        &self,
        chain_id: u64,
        pact_id: Option<U256>,
        oracle: Option<Address>,
        limit: u32,
    ) -> Result<Vec<Verification>, ReadError> {
        if pact_id.is_none() && oracle.is_none() {
            return Err(ReadError::BadArgument("name a `pactId`, an `oracle`, or both".into()));
        }
        if limit > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: limit });
        }
        let rows = sqlx::query!(
            r#"SELECT pact_id::text AS "pact_id!", stage, oracle, score, proof, submitted_at, block_number
               FROM verifications
               WHERE chain_id = $1 AND ($2::text IS NULL OR pact_id = $2::numeric)
                 AND ($3::bytea IS NULL OR oracle = $3)
               ORDER BY CASE WHEN $2::text IS NULL THEN -block_number ELSE block_number END, stage, oracle
               LIMIT $4"#,
            i64_of(chain_id),
            pact_id.map(|p| p.to_string()),
            oracle.map(|a| a.to_vec()),
            i64::from(limit),
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let key = format!(
                    "chain {chain_id} pact {} stage {} oracle 0x{}",
                    r.pact_id,
                    r.stage,
                    alloy::hex::encode(&r.oracle)
                );
                let row = Cells { table: "verifications", key };
                Ok(Verification {
                    pact_id: row.u256("pact_id", &r.pact_id)?,
                    stage: row.int("stage", r.stage)?,
                    oracle: row.address("oracle", &r.oracle)?,
                    score: row.int("score", r.score)?,
                    proof: row.hash("proof", &r.proof)?,
                    submitted_at: r.submitted_at,
                    block_number: row.int("block_number", r.block_number)?,
                })
            })
            .collect()
    }
}
