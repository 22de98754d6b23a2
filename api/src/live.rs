//! Live pact changes: one Postgres LISTEN per server process on the indexer's channel, fanned out
//! to every subscriber in the process. Any number of API replicas each listen for themselves, so
//! nothing is shared between them but Postgres.

use std::time::Duration;

use agentpact_indexer::PACT_CHANNEL;
use alloy::primitives::U256;
use serde::Deserialize;
use sqlx::{PgPool, postgres::PgListener};
use tokio::sync::broadcast;

/// How many changes a slow subscriber may fall behind before it skips ahead.
const BUFFER: usize = 4096;

/// A committed change of one pact, as the indexer announces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PactChange {
    /// The chain.
    pub chain_id: u64,
    /// The pact.
    pub pact_id: U256,
    /// Its status after the change (the contract's code).
    pub status: u8,
    /// The block of the change.
    pub block: u64,
}

/// The fan-out of pact changes to subscribers in this process.
#[derive(Debug, Clone)]
pub struct Live {
    sender: broadcast::Sender<PactChange>,
}

impl Live {
    /// Starts listening on `pool`'s database; the listener runs until the process ends and
    /// reconnects by itself when the connection drops.
    pub async fn start(pool: &PgPool) -> Result<Self, sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen(PACT_CHANNEL).await?;
        let (sender, _) = broadcast::channel(BUFFER);
        let live = Self { sender: sender.clone() };
        tokio::spawn(forward(listener, sender));
        Ok(live)
    }

    /// A receiver of every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<PactChange> {
        self.sender.subscribe()
    }
}

async fn forward(mut listener: PgListener, sender: broadcast::Sender<PactChange>) {
    loop {
        match listener.recv().await {
            Ok(note) => match serde_json::from_str::<PactChange>(note.payload()) {
                // No subscriber is not an error: changes are not kept for later.
                Ok(change) => drop(sender.send(change)),
                Err(e) => {
                    tracing::warn!(error = %e, payload = note.payload(), "unreadable pact notification")
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "lost the pact notification connection; reconnecting");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}
