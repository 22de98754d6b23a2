//! The policy's tables (migrations/0023): the human's controls of a wallet, its counted spends and
//! what its ledger says it sent. Every read that a decision rests on and every write it makes
//! happen in one transaction holding the wallet's advisory lock ([`lock`]), which every process
//! signing for the wallet and the human's `agentpact wallet` commands take: two decisions never
//! interleave, and a freeze waits for the send in flight.

use agentpact_contracts::money::Currency;
use agentpact_schema::i64_of;
use alloy::primitives::{Address, B256, U256, keccak256};
use chrono::{DateTime, Utc};
use sqlx::{PgPool, Postgres, Transaction};

use super::rules::{Frozen, Policy, Spent, Usage};

/// The human's controls of a wallet, as read under its lock.
#[derive(Debug, Clone, Default)]
pub struct Controls {
    /// The policy, when one is set.
    pub policy: Option<Policy>,
    /// The keccak256 of the policy as stored.
    pub digest: Option<B256>,
    /// The kill switch, when on.
    pub frozen: Option<Frozen>,
}

/// A transaction holding the wallet's lock, with the database's time and the controls read.
pub struct Locked<'c> {
    /// The transaction.
    pub tx: Transaction<'c, Postgres>,
    /// The database's clock when the lock was taken: every process decides by one clock.
    pub now: DateTime<Utc>,
    /// The controls.
    pub controls: Controls,
}

/// The advisory lock key of `wallet` on `chain_id`.
fn lock_key(chain_id: u64, wallet: Address) -> i64 {
    let mut bytes = b"agentpact wallet policy".to_vec();
    bytes.extend_from_slice(&chain_id.to_be_bytes());
    bytes.extend_from_slice(wallet.as_slice());
    let hash = keccak256(bytes);
    let mut key = [0u8; 8];
    key.copy_from_slice(&hash[..8]);
    i64::from_be_bytes(key)
}

/// Begins a transaction on `pool`, takes `wallet`'s lock and reads its controls.
pub async fn lock(pool: &PgPool, chain_id: u64, wallet: Address) -> Result<Locked<'static>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query!("SELECT pg_advisory_xact_lock($1)", lock_key(chain_id, wallet)).execute(&mut *tx).await?;
    let now = sqlx::query_scalar!(r#"SELECT clock_timestamp() AS "now!""#).fetch_one(&mut *tx).await?;
    let controls = read_in(&mut *tx, chain_id, wallet).await?;
    Ok(Locked { tx, now, controls })
}

/// The controls of `wallet` as they stand (for views; a decision reads them under [`lock`]).
pub async fn read(pool: &PgPool, chain_id: u64, wallet: Address) -> Result<Controls, sqlx::Error> {
    read_in(pool, chain_id, wallet).await
}

/// The controls of `wallet`, read through `db`.
async fn read_in<'e>(
    db: impl sqlx::PgExecutor<'e>,
    chain_id: u64,
    wallet: Address,
) -> Result<Controls, sqlx::Error> {
    let row = sqlx::query!(
        "SELECT policy, policy_digest, frozen_at, frozen_reason FROM wallet_controls
         WHERE chain_id = $1 AND wallet = $2",
        i64_of(chain_id),
        wallet.as_slice()
    )
    .fetch_optional(db)
    .await?;
    let Some(row) = row else { return Ok(Controls::default()) };
    Ok(Controls {
        policy: row
            .policy
            .map(|p| {
                serde_json::from_value::<Policy>(p)
                    .map_err(|e| decode("wallet_controls.policy", e.to_string()))
            })
            .transpose()?,
        digest: row
            .policy_digest
            .map(|d| {
                B256::try_from(d.as_slice())
                    .map_err(|_| decode("wallet_controls.policy_digest", "not 32 bytes"))
            })
            .transpose()?,
        frozen: row.frozen_at.map(|at| Frozen { at, reason: row.frozen_reason }),
    })
}

/// A stored value that does not read back, naming where.
fn decode(index: &str, why: impl Into<String>) -> sqlx::Error {
    sqlx::Error::ColumnDecode { index: index.to_owned(), source: why.into().into() }
}

impl Locked<'_> {
    /// What the rules need to judge a call to `counterparty` (when named): the spends and sends
    /// within the policy's longest periods, and whether the wallet paid `counterparty` before.
    pub async fn usage(
        &mut self,
        chain_id: u64,
        wallet: Address,
        counterparty: Option<Address>,
    ) -> Result<Usage, sqlx::Error> {
        let Some(policy) = &self.controls.policy else { return Ok(Usage::default()) };
        let seconds = |s: u64| i64::try_from(s).unwrap_or(i64::MAX);
        let (spend_lookback, calls_lookback) =
            (seconds(policy.spend_lookback()), seconds(policy.calls_lookback()));
        let spends = sqlx::query!(
            r#"SELECT at, currency, amount::text AS "amount!", counterparty FROM wallet_spends
               WHERE chain_id = $1 AND wallet = $2 AND state <> 'released'
                 AND at > $3::timestamptz - make_interval(secs => $4::float8)"#,
            i64_of(chain_id),
            wallet.as_slice(),
            self.now,
            spend_lookback as f64
        )
        .fetch_all(&mut *self.tx)
        .await?;
        let spends = spends
            .into_iter()
            .map(|row| {
                Ok(Spent {
                    at: row.at,
                    currency: address(&row.currency, "wallet_spends.currency")?,
                    amount: row
                        .amount
                        .parse()
                        .map_err(|_| decode("wallet_spends.amount", "not an integer"))?,
                    counterparty: row
                        .counterparty
                        .map(|c| address(&c, "wallet_spends.counterparty"))
                        .transpose()?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
        let sends = sqlx::query!(
            "SELECT at, tool FROM wallet_ledger
             WHERE chain_id = $1 AND wallet = $2 AND event = 'sent' AND at > $3::timestamptz - make_interval(secs => $4::float8)",
            i64_of(chain_id),
            wallet.as_slice(),
            self.now,
            calls_lookback as f64
        )
        .fetch_all(&mut *self.tx)
        .await?
        .into_iter()
        .map(|row| (row.at, row.tool))
        .collect();
        let known_counterparty = match counterparty {
            None => false,
            Some(to) => sqlx::query_scalar!(
                r#"SELECT EXISTS (SELECT 1 FROM wallet_spends
                   WHERE chain_id = $1 AND wallet = $2 AND counterparty = $3 AND state = 'sent') AS "known!""#,
                i64_of(chain_id),
                wallet.as_slice(),
                to.as_slice()
            )
            .fetch_one(&mut *self.tx)
            .await?,
        };
        Ok(Usage { spends, sends, known_counterparty })
    }

    /// Counts a spend of `amount` of `currency` to `counterparty` by `tool`, reserved now; its id.
    pub async fn reserve(
        &mut self,
        chain_id: u64,
        wallet: Address,
        tool: &str,
        currency: &Currency,
        amount: U256,
        counterparty: Option<Address>,
    ) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar!(
            "INSERT INTO wallet_spends (chain_id, wallet, at, tool, currency, amount, counterparty, state)
             VALUES ($1, $2, $3, $4, $5, $6::text::numeric, $7, 'reserved') RETURNING id",
            i64_of(chain_id),
            wallet.as_slice(),
            self.now,
            tool,
            currency.address.as_slice(),
            amount.to_string(),
            counterparty.as_ref().map(|c| c.as_slice())
        )
        .fetch_one(&mut *self.tx)
        .await
    }

    /// Releases the spend `id`: its transaction failed.
    pub async fn release(&mut self, id: i64) -> Result<(), sqlx::Error> {
        sqlx::query!("UPDATE wallet_spends SET state = 'released' WHERE id = $1", id)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    /// Marks the spend `id` sent by the transaction `hash`.
    pub async fn mark_sent(&mut self, id: i64, hash: B256) -> Result<(), sqlx::Error> {
        sqlx::query!("UPDATE wallet_spends SET state = 'sent', tx = $2 WHERE id = $1", id, hash.as_slice())
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }
}

/// Releases the spend `id` if its call never sent it.
pub async fn release_unsent(pool: &PgPool, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE wallet_spends SET state = 'released' WHERE id = $1 AND state = 'reserved'", id)
        .execute(pool)
        .await?;
    Ok(())
}

/// A stored address that must be 20 bytes.
fn address(bytes: &[u8], index: &str) -> Result<Address, sqlx::Error> {
    Address::try_from(bytes).map_err(|_| decode(index, "not 20 bytes"))
}

/// Sets `policy` for its wallet (the human's `agentpact wallet policy set`), under the wallet's
/// lock; its keccak256.
pub async fn set_policy(pool: &PgPool, policy: &Policy) -> Result<B256, sqlx::Error> {
    let json = serde_json::to_value(policy).map_err(|e| decode("the policy", e.to_string()))?;
    let digest = keccak256(json.to_string().as_bytes());
    let mut locked = lock(pool, policy.chain_id, policy.wallet).await?;
    sqlx::query!(
        "INSERT INTO wallet_controls (chain_id, wallet, policy, policy_digest, policy_set_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (chain_id, wallet) DO UPDATE
         SET policy = EXCLUDED.policy, policy_digest = EXCLUDED.policy_digest, policy_set_at = EXCLUDED.policy_set_at",
        i64_of(policy.chain_id),
        policy.wallet.as_slice(),
        json,
        digest.as_slice(),
        locked.now
    )
    .execute(&mut *locked.tx)
    .await?;
    locked.tx.commit().await?;
    Ok(digest)
}

/// Removes the policy of `wallet` (the kill switch stays as it is).
pub async fn clear_policy(pool: &PgPool, chain_id: u64, wallet: Address) -> Result<bool, sqlx::Error> {
    let mut locked = lock(pool, chain_id, wallet).await?;
    let done = sqlx::query!(
        "UPDATE wallet_controls SET policy = NULL, policy_digest = NULL, policy_set_at = NULL
         WHERE chain_id = $1 AND wallet = $2 AND policy IS NOT NULL",
        i64_of(chain_id),
        wallet.as_slice()
    )
    .execute(&mut *locked.tx)
    .await?;
    locked.tx.commit().await?;
    Ok(done.rows_affected() == 1)
}

/// Turns the kill switch of `wallet` on (`Some(reason)`, the reason possibly empty) or off
/// (`None`), under the wallet's lock: when this returns, a send that was in flight has finished
/// and no process sends for the wallet until it is turned off. The time it took effect.
pub async fn set_frozen(
    pool: &PgPool,
    chain_id: u64,
    wallet: Address,
    freeze: Option<&str>,
) -> Result<DateTime<Utc>, sqlx::Error> {
    let mut locked = lock(pool, chain_id, wallet).await?;
    let reason = freeze.map(str::trim).filter(|r| !r.is_empty());
    sqlx::query!(
        "INSERT INTO wallet_controls (chain_id, wallet, frozen_at, frozen_reason) VALUES ($1, $2, $3, $4)
         ON CONFLICT (chain_id, wallet) DO UPDATE SET frozen_at = EXCLUDED.frozen_at, frozen_reason = EXCLUDED.frozen_reason",
        i64_of(chain_id),
        wallet.as_slice(),
        freeze.map(|_| locked.now),
        reason
    )
    .execute(&mut *locked.tx)
    .await?;
    let now = locked.now;
    locked.tx.commit().await?;
    Ok(now)
}
