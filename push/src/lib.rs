//! Push: agents sleep between jobs and every escrow window closes at one second for everyone, so
//! the server tells them (docs/push.md).
//!
//! - [`subscription`]: who wants to be told what, and where: a URL and a filter, registered with
//!   the owner's signature (the MCP tool) or by the operator (GraphQL), capped per owner.
//! - [`target`]: which URLs may be called at all: private, loopback and link-local addresses are
//!   refused unless the operator opens their range, at registration and again at every connection.
//! - [`dispatch`]: matching the indexer's journal to subscriptions into an outbox
//!   (`webhook_deliveries`), per mode: **instant** (as indexed) and **finalized** (past the
//!   finality depth). [`revoke`] queues a revocation for each event a reorganisation removed after
//!   it may have been sent.
//! - [`alarms`]: a reminder before each window a pact waits in closes, and a notice when it closed,
//!   computed from the index on chain time.
//! - [`deliver`]: the signed POSTs ([`sign`]), one subscription's deliveries in order, retries
//!   with backoff, dead letters, a per-owner rate.
//! - [`sink`]: the same deliveries published to the brokers the operator runs (NATS JetStream,
//!   Redis Streams, RabbitMQ), each a subscription whose target names the sink, acknowledged by
//!   the broker.
//! - [`run`]: the loop `agentpact push` runs, until an orderly [`stop`]; [`metrics`] what it
//!   counts.
//!
//! Everything is state in Postgres: a process killed at any point loses nothing (an attempt not
//! recorded as answered is sent again, with the same idempotency key), and several processes may
//! run at once without sending one delivery twice at the same time.

pub mod alarms;
pub mod config;
pub mod deliver;
pub mod dispatch;
pub mod metrics;
pub mod revoke;
pub mod run;
pub mod sign;
pub mod sink;
pub mod stop;
pub mod subscription;
pub mod target;

pub use config::{Policy, PushConfig, Retry};
pub use metrics::Metrics;
pub use run::run;
pub use subscription::{Filter, Refusal, Registration, Subscription};
pub use target::Targets;

use agentpact_schema::Corrupt;

/// What stops a push pass.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The database failed or refused a statement.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A stored value could not be read back.
    #[error(transparent)]
    Corrupt(#[from] Corrupt),
    /// The HTTP client could not be built (a TLS backend missing).
    #[error("building the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
}

impl PushError {
    /// Whether the process should stop and ask for a person: a corrupt row does not heal by
    /// retrying; a database that hiccupped or a pass that lost a race does.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Corrupt(_) | Self::Client(_))
    }

    /// Whether the pass lost a race with another writer (serialization failure or deadlock) and
    /// should simply run again.
    pub fn is_conflict(&self) -> bool {
        match self {
            Self::Database(e) => {
                matches!(e.as_database_error().and_then(|d| d.code()).as_deref(), Some("40001" | "40P01"))
            }
            _ => false,
        }
    }
}
