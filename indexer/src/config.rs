//! Settings of the indexer that do not name the chain (see [`crate::Target`] for that).

use std::time::Duration;

/// How the indexer reads and how careful it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Blocks below `head - finality_depth` are taken as final: their hashes are forgotten and no
    /// reorganisation is expected to reach them.
    pub finality_depth: u64,
    /// How often to ask for a new head while following it.
    pub poll_interval: Duration,
    /// Blocks in the first `eth_getLogs` range.
    pub initial_range: u64,
    /// Most blocks in one `eth_getLogs` range.
    pub max_range: u64,
    /// The longest wait between retries after an RPC or database error.
    pub max_backoff: Duration,
    /// A pass that starts at least this many blocks below the head, with more blocks to go than
    /// already indexed, defers secondary indexes and flat counts until it reaches the head
    /// ([`crate::defer`]); `None`: never.
    pub defer_upkeep_behind: Option<u64>,
}

/// The [`Config::defer_upkeep_behind`] that defers any pass with more blocks to go than already
/// indexed. Blocks, not events, are what a pass knows before reading: a generated history packs
/// 70,000 events into 59 blocks, so a threshold in blocks would miss the backfills that pay most;
/// rebuilding costs about what the rows already indexed cost, which "more to go than done" bounds.
pub const DEFER_UPKEEP_BEHIND: u64 = 1;

impl Default for Config {
    /// 64 blocks of finality (Base and Ethereum reorganise far less), a 1-second poll, ranges from
    /// 10 blocks (doubling while results are small, so a sparse chain reaches the cap within a
    /// dozen ranges and a dense one holds 5,000-20,000 logs at once, more only where the density
    /// jumps) up to 50,000 blocks, passes retried at most 30 seconds apart (each RPC call is retried by the transport,
    /// `transport::connect`), upkeep deferred by any pass with more blocks to go than done
    /// ([`DEFER_UPKEEP_BEHIND`]).
    fn default() -> Self {
        Self {
            finality_depth: 64,
            poll_interval: Duration::from_secs(1),
            initial_range: 10,
            max_range: 50_000,
            max_backoff: Duration::from_secs(30),
            defer_upkeep_behind: Some(DEFER_UPKEEP_BEHIND),
        }
    }
}

/// Whom the indexer's ranking trusts first and how often it may run (`reputation::generation`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranking {
    /// The seed set: the addresses trust starts from (operator or community anchors). Without
    /// seeds nobody is trusted as a rater, and every global score is 3.00.
    pub seeds: Vec<alloy::primitives::Address>,
    /// The least time between two runs of this process; a run happens only after a pass that
    /// left the pairs changed (or when none was recorded, or the seeds changed). 0: after every
    /// such pass.
    pub every: Duration,
}
