//! What graph-node's clients expect to ask: `_meta` (the indexed block with its parent hash, so a
//! client notices a reorganisation, and whether indexing fails; and how fresh the reputation
//! scores are) and `block: { number_gte }` on the
//! root queries (answer once the index the query reads holds that block: a writer reads its own
//! write, on a replica too).

use std::{collections::HashMap, time::Duration};

use tokio::time::Instant;

use async_graphql::{ComplexObject, Context, InputObject, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    chain_of,
    errors::{Code, to_graphql},
    scalars::{Address, Bytes32},
};
use crate::read::{self, IndexerStatus, Reader};

/// The block a query must see: `block: { number_gte: N }` answers once the index holds block N.
#[derive(InputObject, Clone, Copy)]
pub struct BlockHeight {
    /// The lowest block the answer may be read at.
    #[graphql(name = "number_gte")]
    number_gte: u64,
}

/// How long a query with `block: { number_gte }` waits for the index before it is refused with
/// BLOCK_NOT_INDEXED (`BLOCK_WAIT_MS`).
#[derive(Debug, Clone, Copy)]
pub struct BlockWait(pub Duration);

impl Default for BlockWait {
    /// Five seconds: a few of the indexer's polls.
    fn default() -> Self {
        Self(Duration::from_secs(5))
    }
}

/// How often waiting queries look at the checkpoint again: at most once per this, per chain and
/// server, however many wait ([`IndexedBlocks`]).
const BLOCK_POLL: Duration = Duration::from_millis(50);
/// Blocks past the head the indexer last saw that a query may still wait for: further is not a
/// write the client just made, and is refused at once.
const AHEAD_OF_HEAD: u64 = 64;

/// Where the indexer stands per chain, read from the index at most once per [`BLOCK_POLL`] for
/// every query of the server: a request with a thousand aliased `block` arguments costs the
/// database what one does.
#[derive(Default)]
pub struct IndexedBlocks {
    last: tokio::sync::Mutex<HashMap<u64, (Instant, Option<IndexerStatus>)>>,
}

impl IndexedBlocks {
    async fn status(&self, reader: &Reader, chain: u64) -> Result<Option<IndexerStatus>> {
        // Held across the read: queries arriving meanwhile take its answer instead of reading.
        let mut last = self.last.lock().await;
        if let Some((at, status)) = last.get(&chain)
            && at.elapsed() < BLOCK_POLL
        {
            return Ok(status.clone());
        }
        let status = reader.indexer_status(chain).await.map_err(to_graphql)?;
        last.insert(chain, (Instant::now(), status.clone()));
        Ok(status)
    }
}

/// The chain asked for (or the server's), once the index the query reads holds `block` when one
/// is asked; BLOCK_NOT_INDEXED when it does not within [`BlockWait`], or the block is far past the
/// chain's head.
pub(super) async fn indexed(
    ctx: &Context<'_>,
    asked: Option<u64>,
    block: Option<BlockHeight>,
) -> Result<u64> {
    let chain = chain_of(ctx, asked)?;
    let Some(BlockHeight { number_gte }) = block else { return Ok(chain) };
    let (reader, blocks) = (ctx.data::<Reader>()?, ctx.data::<IndexedBlocks>()?);
    let wait = ctx.data_opt::<BlockWait>().copied().unwrap_or_default().0;
    let until = Instant::now() + wait;
    loop {
        let status = blocks.status(reader, chain).await?;
        let at = status.as_ref().map(|s| s.indexed_block);
        if at.is_some_and(|b| b >= number_gte) {
            return Ok(chain);
        }
        if let Some(head) = status.as_ref().and_then(|s| s.head_block)
            && number_gte > head.saturating_add(AHEAD_OF_HEAD)
        {
            return Err(Code::BlockNotIndexed.error(format!(
                "block {number_gte} is past chain {chain}'s head ({head}) as the indexer last saw it: ask for a block that was mined"
            )));
        }
        if Instant::now() >= until {
            let at = at.map_or_else(|| "no block yet".to_owned(), |b| format!("block {b}"));
            return Err(Code::BlockNotIndexed.error(format!(
                "the index of chain {chain} holds {at}, not yet block {number_gte}, after waiting {} ms: retry shortly",
                wait.as_millis()
            )));
        }
        tokio::time::sleep(BLOCK_POLL).await;
    }
}

/// The indexed block and whether indexing fails.
#[derive(SimpleObject)]
#[graphql(name = "_Meta_", complex)]
pub struct Meta {
    /// The last block fully indexed: every answer reads the index at it.
    block: MetaBlock,
    /// Whether the indexer's last pass failed (it retries; `indexerStatus` tells its lag).
    has_indexing_errors: bool,
    /// The chain, for `reputation`.
    #[graphql(skip)]
    chain_id: u64,
}

#[ComplexObject]
impl Meta {
    /// The ranking run behind every reputation score: scores are computed periodically, not with
    /// each block, so they are as fresh as this says. Null before the first run (every score is
    /// then 3.00).
    async fn reputation(&self, ctx: &Context<'_>) -> Result<Option<ReputationRun>> {
        let run = ctx.data::<Reader>()?.reputation_run(self.chain_id).await.map_err(to_graphql)?;
        Ok(run.map(ReputationRun::from))
    }
}

/// What the current reputation scores were computed from, and when.
#[derive(SimpleObject)]
pub struct ReputationRun {
    /// The last block whose pacts the run read.
    block: u64,
    /// That block's time.
    block_time: Option<DateTime<Utc>>,
    /// When the run finished.
    computed_at: DateTime<Utc>,
    /// Seconds since then.
    age_seconds: u64,
    /// The seed set trust flows from.
    seeds: Vec<Address>,
    /// The walk's restart probability (0.3: a mean walk of 2.33 hops).
    alpha: f64,
    /// The trust at which a rater counts fully (the 80 % mass quantile).
    tau: f64,
    /// How long the run took, in milliseconds.
    took_ms: u64,
    /// Addresses in the trust graph.
    nodes: u64,
    /// Endorsements between them.
    edges: u64,
    /// What a reader should know about these scores: set when no seeds are configured.
    note: Option<String>,
}

impl From<read::ReputationRun> for ReputationRun {
    fn from(r: read::ReputationRun) -> Self {
        Self {
            note: r.seeds.is_empty().then(|| NO_SEEDS.to_owned()),
            block: r.block,
            block_time: r.block_time,
            computed_at: r.computed_at,
            age_seconds: r.age_seconds,
            seeds: r.seeds.into_iter().map(Address).collect(),
            alpha: r.alpha,
            tau: r.tau,
            took_ms: r.took_ms,
            nodes: r.nodes,
            edges: r.edges,
        }
    }
}

/// `_meta.reputation.note` when the run had no seeds.
const NO_SEEDS: &str = "no seeds configured: every global score is 3.00";

/// A block, as graph-node's `_meta` gives it.
#[derive(SimpleObject)]
#[graphql(name = "_Block_")]
pub struct MetaBlock {
    /// Its number.
    number: u64,
    /// Its hash.
    hash: Bytes32,
    /// Its parent's hash; null when the indexer did not record it (a rollback to an old block).
    parent_hash: Option<Bytes32>,
    /// When it was mined, in Unix seconds; null when unknown.
    timestamp: Option<i64>,
}

/// `_meta`.
#[derive(Default)]
pub struct MetaQuery;

#[Object]
impl MetaQuery {
    /// The indexed block (number, hash, parent hash, time), whether indexing fails and how fresh
    /// the reputation scores are; null before the indexer's first batch. With `block`, answers once the index holds that block.
    #[graphql(name = "_meta")]
    async fn meta(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
    ) -> Result<Option<Meta>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let meta = ctx.data::<Reader>()?.meta(chain).await.map_err(to_graphql)?;
        Ok(meta.map(|m| Meta {
            block: MetaBlock {
                number: m.number,
                hash: Bytes32(m.hash),
                parent_hash: m.parent_hash.map(Bytes32),
                timestamp: m.timestamp.map(|t| t.timestamp()),
            },
            has_indexing_errors: m.failing_since.is_some(),
            chain_id: chain,
        }))
    }
}
