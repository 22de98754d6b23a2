//! The read layer over the index: typed queries that return domain types. The GraphQL server
//! (`agentpact-api`) and the MCP server both read through [`Reader`], so they answer the same
//! question the same way, and neither depends on the other: an edit in the GraphQL schema rebuilds
//! no MCP code.
//!
//! - [`Reader`] and its modules: one per question (pacts, agents, reputation, ...), every row
//!   through `agentpact_schema::Cells`.
//! - [`Databases`]: where reads go (the primary, or a streaming replica and its replay lag).
//! - [`live`]: the indexer's notifications, and those of one more channel its caller names (the
//!   relay's), as broadcast streams.
//! - What the relay checks a message against, inside its own transaction (any executor):
//!   [`agents::listed`], [`currencies::currencies_on`], [`pact_terms`].
//!
//! It depends on no crate that writes: the layer every server reads through sits above no writer
//! (the servers build the relay's store over [`Reader::pool`] themselves).

pub mod agents;
pub mod balances;
pub mod counts;
pub mod currencies;
pub mod cursor;
pub mod databases;
pub mod erc8004;
pub mod history;
pub mod live;
pub mod negotiations;
pub mod oracles;
pub mod pact_terms;
pub mod pacts;
pub mod reputation;
pub mod settlements;
pub mod stages;
pub mod status;
pub mod timeline;
pub mod trust;
pub mod wallet_ledger;

use sqlx::PgPool;

pub use agents::{Agent, AgentMatch, AgentSearch, Capability, Feedback};
pub use balances::{Balance, Withdrawal};
pub use counts::{Count, MAX_COUNTED};
pub use currencies::Currency;
pub use cursor::Cursor;
pub use databases::Databases;
pub use erc8004::{AgentRef, Erc8004Agent, Erc8004Feedback, Erc8004Reputation, RegistryMatch};
pub use history::{Interval, MAX_BUCKETS, ScoreBand, VolumeBucket};
pub use oracles::{Oracle, OracleFilter, OracleStatus, Verification};
pub use pact_terms::PactTerms;
pub use pacts::{Pact, PactFilter, PactOracle, PactOrder, PactOrderField, Page, PageRequest, SortDirection};
pub use reputation::{Reputation, RoleReputation, Score, ScoreView};
pub use settlements::{Settlement, SettlementState};
pub use stages::Stage;
pub use status::{CurrencyVolume, IndexerStatus, Meta, Stats, StatusCount};
pub use timeline::TimelineEvent;
pub use trust::{Basis, BasisRater, RaterSource, ReputationRun, ReputationSnapshot};

/// The largest page a list query returns; asking for more is an error, not a silent cut.
pub const MAX_PAGE_SIZE: u32 = 100;

/// The page size when the caller names none.
pub const DEFAULT_PAGE_SIZE: u32 = 20;

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Postgres failed.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A cursor that this API did not hand out, or one made for another ordering.
    #[error("{0}")]
    BadCursor(String),
    /// More rows asked for than [`MAX_PAGE_SIZE`].
    #[error("a page holds at most {max} items; asked for {asked}. Page through with `after`/`before`")]
    PageTooLarge {
        /// The limit.
        max: u32,
        /// What was asked.
        asked: u32,
    },
    /// Arguments that contradict each other or make no sense (e.g. `first` and `last` together).
    #[error("{0}")]
    BadArgument(String),
    /// A value in the index that cannot be read back: a corrupt row, never read as a default.
    #[error(transparent)]
    Corrupt(#[from] agentpact_schema::Corrupt),
}

impl ReadError {
    /// A stable code for clients (GraphQL `extensions.code`).
    pub const fn code(&self) -> &'static str {
        match self {
            Self::Db(_) => "INTERNAL",
            Self::BadCursor(_) => "BAD_CURSOR",
            Self::PageTooLarge { .. } => "PAGE_TOO_LARGE",
            Self::BadArgument(_) => "BAD_ARGUMENT",
            Self::Corrupt(_) => "INDEX_CORRUPT",
        }
    }
}

/// Reads the index. Cheap to clone (a pool handle).
#[derive(Debug, Clone)]
pub struct Reader {
    pool: PgPool,
    /// Whether `pool` is a streaming replica, which may not have replayed a change yet.
    replica: bool,
}

impl Reader {
    /// A reader over the index in `pool`.
    pub const fn new(pool: PgPool) -> Self {
        Self { pool, replica: false }
    }

    /// A reader over the index in `pool`, a streaming replica of the database the indexer writes.
    pub const fn of_replica(pool: PgPool) -> Self {
        Self { pool, replica: true }
    }

    /// Whether this reader reads a replica.
    pub const fn is_replica(&self) -> bool {
        self.replica
    }

    /// Waits (at most [`crate::databases::REPLAY_WAIT`]) until a replica has replayed the index of
    /// `chain_id` to `block`, a block a notification named; at once on the primary, which had it
    /// when it notified. `false` when the wait ran out or the status could not be read.
    pub async fn replayed(&self, chain_id: u64, block: u64) -> bool {
        use crate::databases::{REPLAY_POLL, REPLAY_WAIT};
        if !self.replica {
            return true;
        }
        match self.wait_until_indexed(chain_id, block, REPLAY_WAIT, REPLAY_POLL).await {
            Ok(replayed) => replayed,
            Err(e) => {
                tracing::warn!(error = %e, block, "could not read how far the replica has replayed");
                false
            }
        }
    }

    /// The pool it reads from.
    pub const fn pool(&self) -> &PgPool {
        &self.pool
    }
}
