//! Helpers for indexer tests: an indexer for a [`TestChain`], and a dump of every index table to
//! compare two databases.

use agentpact_indexer::{Config, Contracts, Indexer, Target};
use alloy::providers::DynProvider;
use sqlx::PgPool;

use crate::{HarnessError, chain::TestChain};

/// What an indexer of `chain` follows.
pub fn target(chain: &TestChain) -> Target {
    let d = chain.deployment;
    Target {
        chain_id: chain.anvil.chain_id(),
        contracts: Contracts { agent_pact: d.agent_pact, oracle_registry: d.oracle_registry },
        deployment_block: d.block,
    }
}

/// An indexer of `chain` writing to `pool`.
pub fn indexer(chain: &TestChain, pool: &PgPool, config: Config) -> Indexer<DynProvider> {
    Indexer::new(pool.clone(), chain.provider.clone(), target(chain), config)
}

/// Small ranges and a short finality depth: many batches, and reorgs within reach.
pub fn small_ranges() -> Config {
    Config { initial_range: 2, max_range: 4, finality_depth: 12, ..Config::default() }
}

/// The tables whose content must not depend on how the index was built (crashes, restarts,
/// reorgs, two writers). `blocks` is left out: which recent hashes are kept depends on the head
/// at the time of each batch.
const TABLES: [&str; 9] = [
    "events",
    "pacts",
    "pact_oracles",
    "verifications",
    "disputes",
    "oracles",
    "payouts",
    "withdrawals",
    "checkpoints",
];

/// Every row of the index tables as sorted text, table by table (checkpoint times left out).
pub async fn dump(pool: &PgPool) -> Result<String, HarnessError> {
    let mut out = String::new();
    for table in TABLES {
        let columns = if table == "checkpoints" { "chain_id, block_number, block_hash" } else { "*" };
        let sql = format!(
            "SELECT coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '') FROM (SELECT {columns} FROM {table}) r"
        );
        let rows: String = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(pool).await?;
        out.push_str(&format!("== {table}\n{rows}\n"));
    }
    Ok(out)
}
