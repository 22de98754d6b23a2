//! Live changes: one Postgres LISTEN per server process on the indexer's pact channel and the
//! relay's negotiation channel, fanned out to every subscriber in the process. Any number of API
//! replicas each listen for themselves, so nothing is shared between them but Postgres (a message
//! accepted by one replica reaches subscribers of every replica).

use std::time::Duration;

use agentpact_contracts::channels::PACT_CHANNEL;
pub use agentpact_contracts::channels::PactChange;
use sqlx::{PgPool, postgres::PgListener};
use tokio::sync::broadcast;

pub use agentpact_negotiation::MessageNote;
use agentpact_negotiation::NEGOTIATION_CHANNEL;

/// How many changes a slow subscriber may fall behind before it skips ahead.
const BUFFER: usize = 4096;

/// The fan-out of pact changes and negotiation messages to subscribers in this process.
#[derive(Debug, Clone)]
pub struct Live {
    sender: broadcast::Sender<PactChange>,
    messages: broadcast::Sender<MessageNote>,
}

impl Live {
    /// Starts listening on `pool`'s database; the listener runs until the process ends and
    /// reconnects by itself when the connection drops.
    pub async fn start(pool: &PgPool) -> Result<Self, sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen_all([PACT_CHANNEL, NEGOTIATION_CHANNEL]).await?;
        let (sender, _) = broadcast::channel(BUFFER);
        let (messages, _) = broadcast::channel(BUFFER);
        let live = Self { sender: sender.clone(), messages: messages.clone() };
        tokio::spawn(forward(listener, sender, messages));
        Ok(live)
    }

    /// A receiver of every pact change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<PactChange> {
        self.sender.subscribe()
    }

    /// A receiver of every negotiation message from now on.
    pub fn subscribe_messages(&self) -> broadcast::Receiver<MessageNote> {
        self.messages.subscribe()
    }
}

async fn forward(
    mut listener: PgListener,
    sender: broadcast::Sender<PactChange>,
    messages: broadcast::Sender<MessageNote>,
) {
    loop {
        match listener.recv().await {
            // No subscriber is not an error: changes are not kept for later.
            Ok(note) if note.channel() == NEGOTIATION_CHANNEL => {
                match serde_json::from_str::<MessageNote>(note.payload()) {
                    Ok(message) => drop(messages.send(message)),
                    Err(e) => tracing::warn!(error = %e, "unreadable negotiation notification"),
                }
            }
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
