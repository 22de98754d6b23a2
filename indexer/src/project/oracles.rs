//! OracleRegistry's events into `oracles`: one row per oracle, rebuilt from its events in order.

use agentpact_contracts::OracleStatus;
use agentpact_schema::{ChainText, i64_of};
use alloy::primitives::{Address, U256};
use sqlx::PgConnection;

use super::{Place, displays, exact_if_any_not_plain};

/// An oracle registered with `stake` and `capabilities`: active.
pub(super) async fn registered(
    conn: &mut PgConnection,
    at: &Place,
    oracle: &Address,
    stake: &U256,
    capabilities: &[ChainText],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO oracles (chain_id, address, stake, capabilities, capabilities_bytes, status, registered_at,
                              updated_block)
         VALUES ($1, $2, $3::text::numeric, $4, $5, $8, to_timestamp($6::bigint), $7)",
        at.chain_id,
        oracle.as_slice(),
        stake.to_string(),
        &displays(capabilities),
        exact_if_any_not_plain(capabilities) as Option<Vec<Vec<u8>>>,
        at.time,
        at.block,
        OracleStatus::Active.name(),
    )
    .execute(conn)
    .await
    .map(drop)
}

/// An oracle's stake is now `total_stake`.
pub(super) async fn staked(
    conn: &mut PgConnection,
    at: &Place,
    oracle: &Address,
    total_stake: &U256,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE oracles SET stake = $3::text::numeric, updated_block = $4 WHERE chain_id = $1 AND address = $2",
        at.chain_id,
        oracle.as_slice(),
        total_stake.to_string(),
        at.block,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// An oracle's capabilities changed.
pub(super) async fn capabilities_updated(
    conn: &mut PgConnection,
    at: &Place,
    oracle: &Address,
    capabilities: &[ChainText],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE oracles SET capabilities = $3, capabilities_bytes = $4, updated_block = $5
         WHERE chain_id = $1 AND address = $2",
        at.chain_id,
        oracle.as_slice(),
        &displays(capabilities),
        exact_if_any_not_plain(capabilities) as Option<Vec<Vec<u8>>>,
        at.block,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// An oracle stepped out; its stake unlocks at `unlock_at`.
pub(super) async fn deregistered(
    conn: &mut PgConnection,
    at: &Place,
    oracle: &Address,
    unlock_at: &u64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE oracles SET status = $5, unlock_at = to_timestamp($3::bigint), updated_block = $4
         WHERE chain_id = $1 AND address = $2",
        at.chain_id,
        oracle.as_slice(),
        i64_of(*unlock_at),
        at.block,
        OracleStatus::Deregistered.name(),
    )
    .execute(conn)
    .await
    .map(drop)
}

/// An oracle took its stake back: gone.
pub(super) async fn withdrawn(
    conn: &mut PgConnection,
    at: &Place,
    oracle: &Address,
) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM oracles WHERE chain_id = $1 AND address = $2", at.chain_id, oracle.as_slice())
        .execute(conn)
        .await
        .map(drop)
}
