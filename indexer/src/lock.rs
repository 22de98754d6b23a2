//! One active writer per chain: a Postgres session advisory lock held by the connection that
//! writes. A second indexer waits for it; when the first dies its session ends, the lock is
//! released, and the second takes over from the checkpoint.

use std::time::Duration;

use sqlx::PgConnection;

/// The first key of the lock: "APCT" (AgentPaCT), so no other application's locks collide.
const NAMESPACE: i32 = 0x4150_4354;

/// Waits until this connection holds the writer lock of `chain_id`, polling every `interval`
/// (a poll, not a blocking call, so the waiting task can be cancelled).
pub async fn acquire(conn: &mut PgConnection, chain_id: u64, interval: Duration) -> Result<(), sqlx::Error> {
    let key = lock_key(chain_id);
    let mut announced = false;
    loop {
        let got: bool =
            sqlx::query_scalar!(r#"SELECT pg_try_advisory_lock($1, $2) AS "got!""#, NAMESPACE, key)
                .fetch_one(&mut *conn)
                .await?;
        if got {
            tracing::info!(chain_id, "holding the writer lock");
            return Ok(());
        }
        if !announced {
            tracing::info!(chain_id, "another indexer writes this chain; standing by");
            announced = true;
        }
        tokio::time::sleep(interval).await;
    }
}

/// The lock's second key: the chain id folded into 31 bits.
fn lock_key(chain_id: u64) -> i32 {
    i32::try_from(chain_id % (i32::MAX as u64)).unwrap_or(0)
}
