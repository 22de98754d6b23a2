//! The indexer as a service: take the writer lock, then follow the head forever (woken by each
//! new head of a websocket subscription where there is one, else polling), retrying RPC and
//! database failures with backoff (an RPC that is down or a Postgres restart makes it wait and
//! resume, not exit or spin) and stopping only on errors that need a person.

use std::time::Duration;

use alloy::{providers::Provider, pubsub::SubscriptionStream, rpc::types::Header};
use futures::StreamExt;

use crate::{
    checkpoint, lock,
    sync::{IndexError, Indexer, Pass},
};

/// Runs until `shutdown` resolves (returns `Ok`) or a fatal error (returns it).
pub async fn run<P: Provider>(
    mut indexer: Indexer<P>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), IndexError> {
    tokio::pin!(shutdown);
    let mut backoff = Backoff::new(indexer.config().max_backoff);
    let mut health = Health::default();
    loop {
        tokio::select! {
            () = &mut shutdown => return Ok(()),
            result = session(&mut indexer, &mut backoff, &mut health) => {
                let Err(e) = result;
                indexer.metrics().error(e.kind());
                // Recorded by the writer only (a standby waiting for the lock speaks for no index),
                // and not for the chain moving under a batch: a race the next pass reads.
                if health.writer && !matches!(e, IndexError::ChainMoved { .. }) {
                    health.failing = true;
                    let chain_id = indexer.target().chain_id;
                    if let Err(db) = checkpoint::record_failure(indexer.pool(), chain_id, e.kind()).await {
                        tracing::debug!(error = %db, "the failure could not be recorded");
                    }
                }
                if e.is_fatal() {
                    tracing::error!(error = %e, "indexer stopped");
                    return Err(e);
                }
                let wait = backoff.next();
                tracing::warn!(error = %e, retry_in = ?wait, "indexer error; retrying");
                tokio::select! {
                    () = &mut shutdown => return Ok(()),
                    () = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}

/// What `_meta.hasIndexingErrors` needs of the run loop.
#[derive(Debug)]
struct Health {
    /// Whether this process holds the writer lock (only the writer records failures).
    writer: bool,
    /// Whether a failure may be recorded: unknown at start (a crashed process may have left one),
    /// so the first pass that completes clears it.
    failing: bool,
}

impl Default for Health {
    fn default() -> Self {
        Self { writer: false, failing: true }
    }
}

/// One connection's life: lock, check the chain, then follow the head until something fails.
async fn session<P: Provider>(
    indexer: &mut Indexer<P>,
    backoff: &mut Backoff,
    health: &mut Health,
) -> Result<std::convert::Infallible, IndexError> {
    let target = indexer.target();
    let poll = indexer.config().poll_interval;
    health.writer = false;
    let mut conn = indexer.pool().acquire().await?.detach();
    lock::acquire(&mut conn, target.chain_id, poll).await?;
    health.writer = true;
    indexer.prepare(&mut conn).await?;
    let mut heads = None;
    loop {
        match indexer.pass(&mut conn).await? {
            Pass::Indexed(cp) => tracing::trace!(block = cp.block_number, "caught up"),
            Pass::Waiting { head } => tracing::trace!(head, "waiting for the RPC"),
        }
        backoff.reset();
        if health.failing {
            checkpoint::record_recovery(&mut conn, target.chain_id).await?;
            health.failing = false;
        }
        if heads.is_none() {
            // First, or again after the subscription ended (a websocket that dropped for good).
            heads = indexer.subscribe_heads().await;
        }
        next_block(&mut heads, poll).await;
    }
}

/// Waits for the next block: the subscription's next head or the poll interval, whichever comes
/// first (the interval alone without a subscription, or once it has ended).
async fn next_block(heads: &mut Option<SubscriptionStream<Header>>, poll: Duration) {
    let Some(stream) = heads.as_mut() else { return tokio::time::sleep(poll).await };
    tokio::select! {
        next = stream.next() => if next.is_none() {
            tracing::warn!("the new-heads subscription ended; polling instead");
            *heads = None;
        },
        () = tokio::time::sleep(poll) => {}
    }
}

/// Exponential backoff from 100 ms, doubling up to a cap.
#[derive(Debug)]
struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(100);

    fn new(max: Duration) -> Self {
        Self { next: Self::FIRST, max }
    }

    fn next(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(self.max);
        wait
    }

    fn reset(&mut self) {
        self.next = Self::FIRST;
    }
}
