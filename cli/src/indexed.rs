//! Waiting for the index: what `dev` and the benchmarks do before they read what they just wrote.

use std::time::Duration;

use agentpact_api::Reader;
use anyhow::bail;

/// Waits (up to `limit`, checking every 100 ms) until the index of `chain_id` holds block `head`.
pub async fn wait_until_indexed(
    reader: &Reader,
    chain_id: u64,
    head: u64,
    limit: Duration,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if reader.indexer_status(chain_id).await?.is_some_and(|s| s.indexed_block >= head) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the indexer did not reach block {head} within {limit:?}; see the log above")
}
