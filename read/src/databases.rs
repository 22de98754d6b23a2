//! Where the server reads and writes. The primary takes the relay's writes and the LISTEN of live
//! changes (a hot standby refuses both); every read (GraphQL) goes to the read database: a
//! streaming replica of the primary, or the primary itself. A replica replays the primary's WAL
//! some time behind it; the server says how far (in blocks of the index) and waits for a block it
//! was told of before reading it there.

use std::time::Duration;

use sqlx::PgPool;

use crate::{ReadError, Reader};

/// How long a reader waits for the read database to replay a change it was told of.
pub const REPLAY_WAIT: Duration = Duration::from_secs(5);

/// How often it looks meanwhile.
pub const REPLAY_POLL: Duration = Duration::from_millis(20);

/// The primary and, when reads go elsewhere, its replica.
#[derive(Debug, Clone)]
pub struct Databases {
    /// The primary: LISTEN/NOTIFY and the relay's writes.
    pub primary: PgPool,
    /// A streaming replica of the primary that serves the reads; `None` reads the primary.
    pub replica: Option<PgPool>,
}

/// How far the replica is behind the primary, as `/readyz` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaLag {
    /// The block the indexer has committed on the primary.
    pub primary_block: u64,
    /// The block the replica has replayed.
    pub replica_block: u64,
}

impl ReplicaLag {
    /// Blocks the replica is behind.
    pub const fn blocks(&self) -> u64 {
        self.primary_block.saturating_sub(self.replica_block)
    }
}

impl Databases {
    /// One database for everything.
    pub fn single(pool: PgPool) -> Self {
        Self { primary: pool, replica: None }
    }

    /// The reader of the read database.
    pub fn reader(&self) -> Reader {
        match &self.replica {
            Some(replica) => Reader::of_replica(replica.clone()),
            None => Reader::new(self.primary.clone()),
        }
    }

    /// How far the replica, which has replayed the index of `chain_id` to `replayed`, is behind
    /// the primary; `None` without a replica (then `replayed` is the primary's own block).
    pub async fn replica_lag(&self, chain_id: u64, replayed: u64) -> Result<Option<ReplicaLag>, ReadError> {
        if self.replica.is_none() {
            return Ok(None);
        }
        let primary = Reader::new(self.primary.clone()).indexer_status(chain_id).await?;
        let primary_block = primary.map_or(0, |s| s.indexed_block);
        Ok(Some(ReplicaLag { primary_block, replica_block: replayed }))
    }
}
