//! Waiting for the index: what `dev` and the benchmarks do before they read what they just wrote.

use std::time::Duration;

use agentpact_read::Reader;
use anyhow::bail;

/// Waits (up to `limit`, checking every 100 ms) until the index of `chain_id` holds block `head`;
/// an error when it does not by then.
pub async fn wait_until_indexed(
    reader: &Reader,
    chain_id: u64,
    head: u64,
    limit: Duration,
) -> anyhow::Result<()> {
    if !reader.wait_until_indexed(chain_id, head, limit, Duration::from_millis(100)).await? {
        bail!("the indexer did not reach block {head} within {limit:?}; see the log above");
    }
    Ok(())
}
