//! Live changes: one Postgres LISTEN per server process on the indexer's pact channel and on one
//! more channel its caller names (the servers name the relay's negotiation channel), fanned out to
//! every subscriber in the process. Any number of API replicas each listen for themselves, so
//! nothing is shared between them but Postgres (a message accepted by one replica reaches
//! subscribers of every replica).
//!
//! The read layer knows the indexer's notes only: the other channel's name and the type of its
//! notes come from the crate that writes them, so this crate depends on no crate that writes.

use std::time::Duration;

use agentpact_contracts::channels::PACT_CHANNEL;
pub use agentpact_contracts::channels::PactChange;
use serde::de::DeserializeOwned;
use sqlx::{PgPool, postgres::PgListener};
use tokio::sync::broadcast;

/// How many changes a slow subscriber may fall behind before it skips ahead.
const BUFFER: usize = 4096;

/// The fan-out of pact changes, and of the notes `M` of the other channel (the relay's messages,
/// for the servers), to subscribers in this process.
#[derive(Debug, Clone)]
pub struct Live<M> {
    sender: broadcast::Sender<PactChange>,
    messages: broadcast::Sender<M>,
}

impl<M: DeserializeOwned + Clone + Send + 'static> Live<M> {
    /// Starts listening on `pool`'s database, to the pact channel and to `channel`, whose notes
    /// are JSON `M`; the listener runs until the process ends and reconnects by itself when the
    /// connection drops.
    pub async fn start(pool: &PgPool, channel: &'static str) -> Result<Self, sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen_all([PACT_CHANNEL, channel]).await?;
        let (sender, _) = broadcast::channel(BUFFER);
        let (messages, _) = broadcast::channel(BUFFER);
        let live = Self { sender: sender.clone(), messages: messages.clone() };
        tokio::spawn(forward(listener, channel, sender, messages));
        Ok(live)
    }

    /// A receiver of every pact change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<PactChange> {
        self.sender.subscribe()
    }

    /// A receiver of every note of the other channel from now on.
    pub fn subscribe_messages(&self) -> broadcast::Receiver<M> {
        self.messages.subscribe()
    }
}

async fn forward<M: DeserializeOwned>(
    mut listener: PgListener,
    channel: &'static str,
    sender: broadcast::Sender<PactChange>,
    messages: broadcast::Sender<M>,
) {
    loop {
        match listener.recv().await {
            // No subscriber is not an error: changes are not kept for later.
            Ok(note) if note.channel() == channel => match serde_json::from_str::<M>(note.payload()) {
                Ok(message) => drop(messages.send(message)),
                Err(e) => tracing::warn!(error = %e, channel, "unreadable notification"),
            },
            Ok(note) => match serde_json::from_str::<PactChange>(note.payload()) {
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
