//! One pass of the indexer: check that the indexed blocks are still the chain's (rolling back a
//! reorganisation), then index from the checkpoint to the head one adaptive range at a time. Each
//! range is a single transaction of journal rows, projections, recent block hashes, notifications
//! and the new checkpoint, so a crash at any instant loses nothing and duplicates nothing.

use std::collections::{BTreeSet, HashMap};

use alloy::{
    eips::BlockNumberOrTag,
    primitives::{B256, U256},
    providers::{DynProvider, Provider},
    pubsub::SubscriptionStream,
    rpc::types::{Header, Log},
    transports::TransportError,
};
use futures::{StreamExt, TryStreamExt};
use sqlx::{Connection, PgConnection, PgPool};

use agentpact_contracts::Contracts;

use crate::{
    checkpoint::{self, BlockRef, ChainIdentity, Checkpoint, Head},
    config::{Config, Ranking},
    decode::{self, DecodeError},
    defer,
    event::JournalEvent,
    fetch::{self, RangeSize},
    journal,
    metrics::{Metrics, Phase},
    notify, project,
    reorg::{self, Continuity},
    reputation,
};

/// Block headers read at once: the node answers them in parallel, and a backfill reads one per
/// block holding an event.
const CONCURRENT_HEADER_READS: usize = 16;

/// Most events one statement writes: a range's events go to the database in slices of this many
/// (in the range's one transaction), so the buffers a statement's parameters take stay bounded
/// however many logs one range or block holds.
const WRITE_CHUNK: usize = 20_000;

/// The error kind ([`Metrics::error`]) of a ranking run that failed after its pass committed.
pub const RANKING_FAILED: &str = "ranking";

/// A database built from another chain or other contracts than the ones configured.
#[derive(Debug)]
pub struct ChainMismatch {
    /// The chain id.
    pub chain_id: u64,
    /// What the database was built from.
    pub stored: ChainIdentity,
    /// What the RPC and the configuration say now.
    pub ours: ChainIdentity,
}

/// Why indexing stopped.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The RPC failed; retried with backoff.
    #[error("RPC: {0}")]
    Rpc(#[from] TransportError),
    /// Postgres failed; retried with backoff.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A value the indexer wrote cannot be read back: the database was changed by hand or is
    /// damaged. Re-index into a fresh database.
    #[error(transparent)]
    Corrupt(#[from] agentpact_schema::Corrupt),
    /// A log of the contracts could not be decoded: the contracts are not the ones this build knows.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The RPC returned a block or log without the fields every node sends; retried.
    #[error("the RPC returned incomplete data: {0}")]
    Incomplete(String),
    /// The chain reorganised while a batch was being read (its logs and block hashes disagree);
    /// nothing was written, and the next pass rolls the reorganisation back.
    #[error("the chain changed at block {block} while the batch was read; retrying")]
    ChainMoved {
        /// The first block whose hash disagreed.
        block: u64,
    },
    /// The database indexes another chain (or other contracts) under this chain id: e.g. an anvil
    /// restarted from block 0. The indexer writes nothing; index into a fresh database or delete
    /// this chain's rows.
    #[error(
        "this database indexes chain {} from genesis {} (AgentPact {}, AgentRegistry {}), but the RPC's \
         chain has genesis {} (AgentPact {}, AgentRegistry {}). Refusing to mix them: use a fresh \
         database for the new chain or contracts",
        .0.chain_id, .0.stored.genesis_hash, .0.stored.agent_pact, .0.stored.agent_registry,
        .0.ours.genesis_hash, .0.ours.agent_pact, .0.ours.agent_registry
    )]
    ChainMismatch(Box<ChainMismatch>),
    /// The database read the ERC-8004 registries from another block than the one configured
    /// (`ERC8004_START_BLOCK`): the blocks between the two would be skipped, or kept where they
    /// should not be. The indexer writes nothing.
    #[error(
        "this database read chain {chain_id}'s ERC-8004 registries from block {stored}, but they are now \
         to be read from block {ours} (ERC8004_START_BLOCK, else the deployment block). An index's start \
         cannot move: set ERC8004_START_BLOCK={stored} again, or index into a fresh database from block {ours}"
    )]
    Erc8004StartMoved {
        /// The chain id.
        chain_id: u64,
        /// The first block the database read the registries from.
        stored: u64,
        /// The first block configured now.
        ours: u64,
    },
    /// A reputation ranking computed a value that is not a number: its pairs are damaged. The
    /// generation is not written; re-index into a fresh database.
    #[error(transparent)]
    NotFinite(#[from] reputation::generation::NotFinite),
    /// A reorganisation reached below every block still remembered (deeper than the finality
    /// depth). The indexer writes nothing; re-index into a fresh database, with a larger
    /// `--finality-depth` if this chain reorganises that deep.
    #[error("chain {chain_id} reorganised below block {lowest_checked}, deeper than the finality depth")]
    ReorgTooDeep {
        /// The chain id.
        chain_id: u64,
        /// The lowest remembered block, which no longer matches the chain.
        lowest_checked: u64,
    },
}

impl IndexError {
    /// Whether retrying can help: false for errors that need a person.
    pub const fn is_fatal(&self) -> bool {
        matches!(
            self,
            Self::Decode(_)
                | Self::Corrupt(_)
                | Self::NotFinite(_)
                | Self::ChainMismatch { .. }
                | Self::Erc8004StartMoved { .. }
                | Self::ReorgTooDeep { .. }
        )
    }

    /// A short label for metrics and logs.
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Rpc(_) => "rpc",
            Self::Db(_) => "db",
            Self::Decode(_) => "decode",
            Self::Corrupt(_) => "corrupt",
            Self::NotFinite(_) => "not_finite",
            Self::Incomplete(_) => "incomplete",
            Self::ChainMoved { .. } => "chain_moved",
            Self::ChainMismatch { .. } => "chain_mismatch",
            Self::Erc8004StartMoved { .. } => "erc8004_start_moved",
            Self::ReorgTooDeep { .. } => "reorg_too_deep",
        }
    }
}

/// What the indexer follows on one chain.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The chain id.
    pub chain_id: u64,
    /// The two contracts.
    pub contracts: Contracts,
    /// The block the contracts were deployed in: nothing before it is read.
    pub deployment_block: u64,
}

/// What one pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Indexed up to the head; the new checkpoint.
    Indexed(Checkpoint),
    /// The RPC's head is behind the index (a lagging node); nothing was written.
    Waiting {
        /// The RPC's head.
        head: u64,
    },
}

/// Indexes one chain into one database.
pub struct Indexer<P> {
    pool: PgPool,
    provider: P,
    target: Target,
    /// The first block of the ERC-8004 registries' logs: the deployment block, or an earlier one
    /// ([`Indexer::with_erc8004_start`]). Blocks before the deployment block are read for the
    /// registries only.
    erc8004_start: u64,
    config: Config,
    range: RangeSize,
    /// The last log range that failed, to shrink one that fails twice whatever the reason.
    failed_range: Option<(u64, u64)>,
    /// Where new heads are announced (a websocket), if anywhere: `run` wakes at each.
    heads: Option<DynProvider>,
    metrics: Metrics,
    /// The ranking's seeds and least interval ([`Indexer::with_ranking`]).
    ranking: Ranking,
    /// When this process last wrote a generation.
    last_ranked: Option<std::time::Instant>,
    /// Whether the absence of seeds was already told.
    warned_unseeded: bool,
}

impl<P: Provider> Indexer<P> {
    /// An indexer for `target`, reading through `provider` and writing to `pool`.
    pub fn new(pool: PgPool, provider: P, target: Target, config: Config) -> Self {
        let range = RangeSize::new(config.initial_range, config.max_range);
        let metrics = Metrics::for_chain(target.chain_id);
        let erc8004_start = target.deployment_block;
        Self {
            pool,
            provider,
            target,
            erc8004_start,
            config,
            range,
            failed_range: None,
            heads: None,
            metrics,
            ranking: Ranking::default(),
            last_ranked: None,
            warned_unseeded: false,
        }
    }

    /// The indexer ranking reputation from `ranking`'s seeds, at most once per `ranking.every`
    /// (default: no seeds, after every pass that changed the pairs).
    pub fn with_ranking(self, ranking: Ranking) -> Self {
        Self { ranking, ..self }
    }

    /// The indexer reading the ERC-8004 registries' logs from `block` on, when that is before the
    /// deployment block (agents registered before the escrow existed): the blocks before the
    /// deployment are read for the registries' addresses only. Without registries, or from a
    /// later block, the registries are read from the deployment block, as everything else. The
    /// start is part of the index's identity: another one on an existing database is refused
    /// ([`IndexError::Erc8004StartMoved`]).
    pub fn with_erc8004_start(self, block: u64) -> Self {
        let deployment = self.target.deployment_block;
        let erc8004_start =
            if self.target.contracts.erc8004.is_some() { block.min(deployment) } else { deployment };
        Self { erc8004_start, ..self }
    }

    /// The indexer counting into `metrics` (those its transport counts RPC failures into:
    /// `transport::connect`) instead of its own.
    pub fn with_metrics(self, metrics: Metrics) -> Self {
        Self { metrics, ..self }
    }

    /// The indexer woken by each head `source` announces (`transport::head_source`), polling
    /// only as a fallback.
    pub fn with_heads(self, source: Option<DynProvider>) -> Self {
        Self { heads: source, ..self }
    }

    /// The `newHeads` subscription of the head source, when there is one and it subscribes.
    pub async fn subscribe_heads(&self) -> Option<SubscriptionStream<Header>> {
        let source = self.heads.as_ref()?;
        match source.subscribe_blocks().await {
            Ok(subscription) => Some(subscription.into_stream()),
            Err(error) => {
                tracing::warn!(%error, "subscribing to new heads failed; polling instead");
                None
            }
        }
    }

    /// The indexer's counters and gauges.
    pub fn metrics(&self) -> Metrics {
        self.metrics.clone()
    }

    /// The database pool the indexer writes through.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The chain and contracts followed.
    pub fn target(&self) -> Target {
        self.target
    }

    /// One pass on a connection from the pool (no lock): what tests and one-shot runs use.
    pub async fn catch_up(&mut self) -> Result<Pass, IndexError> {
        let mut conn = self.pool.acquire().await?;
        self.prepare(&mut conn).await?;
        self.pass(&mut conn).await
    }

    /// Registers the chain in the database, or checks that the database indexes this very chain.
    pub async fn prepare(&self, conn: &mut PgConnection) -> Result<(), IndexError> {
        let t = self.target;
        let genesis =
            self.hash_at(0).await?.ok_or_else(|| IndexError::Incomplete("no genesis block".into()))?;
        let ours = ChainIdentity {
            genesis_hash: genesis,
            agent_pact: t.contracts.agent_pact,
            oracle_registry: t.contracts.oracle_registry,
            agent_registry: t.contracts.agent_registry,
            deployment_block: t.deployment_block,
            erc8004: t.contracts.erc8004,
            erc8004_start_block: self.erc8004_start,
        };
        let stored = checkpoint::register_chain(conn, t.chain_id, ours).await?;
        // The same chain and contracts, read from another start: refused in its own words.
        let same_but_start =
            ChainIdentity { erc8004_start_block: ours.erc8004_start_block, ..stored } == ours;
        if stored != ours && same_but_start {
            return Err(IndexError::Erc8004StartMoved {
                chain_id: t.chain_id,
                stored: stored.erc8004_start_block,
                ours: ours.erc8004_start_block,
            });
        }
        if stored != ours {
            return Err(IndexError::ChainMismatch(Box::new(ChainMismatch {
                chain_id: t.chain_id,
                stored,
                ours,
            })));
        }
        // Aggregates a previous session noted but did not get to (it stopped mid-pass) — unless
        // that session was deferring: then the batch that reaches the head refreshes them, with
        // the indexes they are read through built again.
        if defer::is_deferred(conn, t.chain_id).await? {
            return Ok(());
        }
        self.refresh_reputation(conn).await
    }

    /// Recomputes the reputation of the parties of every pact a batch noted, in one transaction.
    async fn refresh_reputation(&self, conn: &mut PgConnection) -> Result<(), IndexError> {
        let mut tx = conn.begin().await?;
        reputation::refresh_pending(&mut tx, self.target.chain_id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Checks continuity with the chain, rolls back a reorg, then indexes up to the head.
    pub async fn pass(&mut self, conn: &mut PgConnection) -> Result<Pass, IndexError> {
        let latest = self.block(BlockNumberOrTag::Latest).await?.header;
        let seen = Head { number: latest.number, time: latest.timestamp };
        let head = seen.number;
        self.metrics.set_head(head);
        let chain_id = self.target.chain_id;
        checkpoint::record_head(conn, chain_id, seen).await?;
        let mut from = self.erc8004_start;
        let mut at = None;
        if let Some(cp) = checkpoint::load(conn, chain_id).await? {
            self.metrics.set_indexed(cp.block_number);
            // The head just read is the checkpoint's block itself: continuity is proven without
            // asking again (an idle indexer costs one call per poll, not two).
            let continuity = if latest.number == cp.block_number && latest.hash == cp.block_hash {
                Continuity::Intact
            } else {
                let recent = checkpoint::recent_blocks(conn, chain_id, cp.block_number).await?;
                reorg::continuity(cp, &recent, head, |n| self.hash_at(n)).await?
            };
            match continuity {
                Continuity::Intact => {}
                Continuity::Lagging { head } => {
                    tracing::info!(
                        head,
                        checkpoint = cp.block_number,
                        "RPC head is behind the index; waiting"
                    );
                    return Ok(Pass::Waiting { head });
                }
                Continuity::Forked { fork } => {
                    let undone = reorg::rollback(conn, chain_id, fork).await?;
                    self.metrics.reorg();
                    self.metrics.set_indexed(fork.block_number);
                    tracing::warn!(
                        fork = fork.block_number,
                        from = cp.block_number,
                        orphaned = undone.orphaned_events,
                        pacts = undone.pacts.len(),
                        "reorg rolled back"
                    );
                    at = Some(fork);
                    from = fork.block_number + 1;
                }
                Continuity::TooDeep { lowest_checked } => {
                    return Err(IndexError::ReorgTooDeep { chain_id, lowest_checked });
                }
            }
            if at.is_none() {
                at = Some(cp);
                from = cp.block_number + 1;
            }
        }
        let deferred = self.defer_upkeep(conn, from, head).await?;
        // The next range's logs are read while this range is written: RPC and database overlap.
        let mut prefetched: Option<(u64, u64, Result<Fetched, TransportError>)> = None;
        while from <= head {
            let started = std::time::Instant::now();
            let (to, fetched) = match prefetched.take() {
                Some((start, to, fetched)) if start == from => (to, fetched),
                _ => {
                    let to = self.range_end(from, head);
                    (to, self.logs(from, to).await)
                }
            };
            let fetched = match fetched {
                Ok(fetched) => fetched,
                Err(e) => {
                    // A refusal in words we know shrinks the range at once; any other failure of
                    // the same range twice in a row (an endpoint's own wording) shrinks it too.
                    let why = fetch::refusal(&e);
                    let again = self.failed_range.replace((from, to)) == Some((from, to));
                    if (why.is_some() || again) && self.range.refused(why) {
                        tracing::warn!(from, to, blocks = self.range.blocks(), max = self.range.max(), error = %e,
                            "the RPC refused the log range; shrinking it");
                        continue;
                    }
                    return Err(e.into());
                }
            };
            self.failed_range = None;
            self.range.succeeded(fetched.logs.len());
            let (next_from, next_to) = (to + 1, self.range_end(to + 1, head));
            let next = async {
                if next_from > head {
                    return None;
                }
                Some((next_from, next_to, self.logs(next_from, next_to).await))
            };
            let (batch, next) =
                tokio::join!(self.commit(conn, at, from, to, Plan { head: seen, deferred }, &fetched), next);
            let (checkpoint, events) = batch?;
            prefetched = next;
            self.metrics.batch(to, events, started.elapsed());
            at = Some(checkpoint);
            from = to + 1;
        }
        match at {
            Some(cp) => {
                // The events are committed: a ranking that fails (the same way each time, were its
                // pairs damaged) must not fail the pass, or the session would repeat it forever
                // and the index would report indexing errors. The previous generation stands; a
                // lost connection fails the next query all the same.
                if let Err(error) = self.rank_if_due(conn).await {
                    self.metrics.error(RANKING_FAILED);
                    tracing::warn!(chain_id = self.target.chain_id, %error, "reputation ranking failed; the previous generation stands");
                }
                Ok(Pass::Indexed(cp))
            }
            None => Ok(Pass::Waiting { head }),
        }
    }

    /// Writes a generation of trusted scores ([`reputation::generation`]) when the pairs changed
    /// since the last one (or none was recorded, or the seeds changed), at least
    /// [`Ranking::every`] after this process's last, and upkeep is not deferred (the pass that
    /// reaches the head ends a deferral and ranks).
    async fn rank_if_due(&mut self, conn: &mut PgConnection) -> Result<(), IndexError> {
        let chain_id = self.target.chain_id;
        if self.last_ranked.is_some_and(|at| at.elapsed() < self.ranking.every)
            || defer::is_deferred(conn, chain_id).await?
            || !reputation::generation::due(conn, chain_id, &self.ranking.seeds).await?
        {
            return Ok(());
        }
        if self.ranking.seeds.is_empty() && !self.warned_unseeded {
            self.warned_unseeded = true;
            tracing::warn!("no reputation seeds: every global score is 3.00; set --reputation-seeds");
        }
        // A failed run counts as one: it is retried no sooner than a successful one would be.
        self.last_ranked = Some(std::time::Instant::now());
        let generation = reputation::run_generation(conn, chain_id, &self.ranking.seeds).await?;
        tracing::info!(
            chain_id,
            block = generation.block_number,
            nodes = generation.nodes,
            edges = generation.edges,
            seeds = generation.seeds,
            tau = generation.tau,
            took_ms = generation.took_ms,
            "reputation ranked"
        );
        Ok(())
    }

    /// Whether this pass, from block `from` to `head`, writes with upkeep deferred: it was
    /// already (a session stopped while deferring: its checkpoint is below the head it saw, since
    /// the batch reaching that head ends a deferral), or begins now because the pass is far behind
    /// ([`defer::worth_it`]).
    async fn defer_upkeep(&self, conn: &mut PgConnection, from: u64, head: u64) -> Result<bool, IndexError> {
        let chain_id = self.target.chain_id;
        if defer::is_deferred(conn, chain_id).await? {
            return Ok(true);
        }
        let indexed = from.saturating_sub(self.erc8004_start);
        let behind = (head + 1).saturating_sub(from);
        if !defer::worth_it(self.config.defer_upkeep_behind, indexed, behind) {
            return Ok(false);
        }
        let began = defer::begin(conn, chain_id, from).await?;
        if began {
            tracing::info!(
                chain_id,
                from,
                head,
                "far behind the head: secondary indexes and flat counts wait until it is reached"
            );
        }
        Ok(began)
    }

    /// Builds the deferred indexes and counts again ([`defer::finish`]), brings the reputations
    /// every deferred batch noted up to date and gathers the tables' statistics
    /// ([`defer::analyze`]), in `conn`'s transaction.
    async fn catch_up_upkeep(&self, conn: &mut PgConnection) -> Result<(), IndexError> {
        let started = std::time::Instant::now();
        defer::finish(conn, self.target.chain_id).await?;
        tracing::info!(chain_id = self.target.chain_id, took = ?started.elapsed(), "deferred indexes and flat counts built");
        reputation::refresh_pending(conn, self.target.chain_id).await?;
        Ok(defer::analyze(conn).await?)
    }

    /// Journals, projects, remembers recent blocks, announces changed pacts and moves the
    /// checkpoint for blocks `from..=to`, which extend the checkpoint `extends`, in one
    /// transaction; the one reaching the `plan`'s head also ends a deferral. Returns the
    /// checkpoint and the number of new events. Runs in a `batch` span (chain, from, to, logs)
    /// that every log line inside carries.
    #[tracing::instrument(name = "batch", level = "info", skip(self, conn, extends, plan, fetched),
        fields(chain_id = self.target.chain_id, logs = fetched.logs.len()))]
    async fn commit(
        &self,
        conn: &mut PgConnection,
        extends: Option<Checkpoint>,
        from: u64,
        to: u64,
        plan: Plan,
        fetched: &Fetched,
    ) -> Result<(Checkpoint, u64), IndexError> {
        let Plan { head, deferred } = plan;
        let logs = &fetched.logs[..];
        let reading = std::time::Instant::now();
        let final_below = head.number.saturating_sub(self.config.finality_depth);
        let recent = self.block_refs(from.max(final_below), to).await?;
        let mut blocks: HashMap<u64, (B256, u64)> =
            recent.iter().map(|b| (b.number, (b.hash, b.timestamp))).collect();
        let mut first_parent = recent.first().filter(|b| b.number == from).map(|b| b.parent_hash);
        // Every block holding a log, the range's last block, and its first (whose parent must be
        // the block the batch extends), as the chain has them now.
        let unseen: BTreeSet<u64> = logs
            .iter()
            .filter_map(|l| l.block_number)
            .chain([to])
            .chain(first_parent.is_none().then_some(from))
            .filter(|n| !blocks.contains_key(n))
            .collect();
        for header in self.headers(unseen).await? {
            if header.number == from {
                first_parent = Some(header.parent_hash);
            }
            blocks.insert(header.number, (header.hash, header.timestamp));
        }
        // The chain may have moved between this batch and the one before it (or the checkpoint):
        // then the batch does not extend what is indexed, and writing it would leave the orphaned
        // blocks below it in the journal with nothing left to notice them.
        if let Some(prev) = extends
            && prev.block_number + 1 == from
            && first_parent != Some(prev.block_hash)
        {
            return Err(IndexError::ChainMoved { block: from });
        }
        self.metrics.phase(Phase::Rpc, reading.elapsed());
        consistent(&recent, &blocks, logs)?;
        let (end, end_time) =
            blocks.get(&to).copied().ok_or_else(|| IndexError::Incomplete(format!("block {to} not read")))?;
        // `to` as read before the logs must be `to` as read now, and the child of `to - 1` as read
        // now (or as indexed, when the batch is the one block after the checkpoint).
        let parent_now = to.checked_sub(1).and_then(|p| {
            let extended = extends.filter(|cp| cp.block_number == p).map(|cp| cp.block_hash);
            blocks.get(&p).map(|(hash, _)| *hash).or(extended)
        });
        let end_parent = match fetched.last {
            Some((hash, parent)) if hash == end && parent_now.is_none_or(|p| p == parent) => parent,
            _ => return Err(IndexError::ChainMoved { block: to }),
        };
        let writing = std::time::Instant::now();
        let chain_id = self.target.chain_id;
        let mut tx = conn.begin().await?;
        let (mut touched, mut new_events, mut decoding) = (BTreeSet::new(), 0, std::time::Duration::ZERO);
        // Slices in journal order: projecting them one after another is projecting the range, and
        // only one slice's events are decoded at a time.
        for slice in logs.chunks(WRITE_CHUNK) {
            let decoded = std::time::Instant::now();
            let events = self.journal_events(slice, &blocks)?;
            decoding += decoded.elapsed();
            let new = journal::append(&mut tx, &events).await?;
            project::apply_batch(&mut tx, &new).await?;
            touched.extend(new.iter().filter_map(|e| e.body.pact_id()));
            new_events += new.len();
        }
        self.metrics.phase(Phase::Decode, decoding);
        let touched_list: Vec<U256> = touched.iter().copied().collect();
        reputation::mark(&mut tx, chain_id, &touched_list).await?;
        // Upkeep another chain's backfill put off since this pass began is this chain's too.
        let deferred = deferred || defer::join(&mut tx, chain_id, from).await?;
        // The pass's last batch (the one reaching the head it saw) brings every party the pass
        // touched up to date in its own transaction, and builds what a deferring pass put off:
        // a reader that sees the checkpoint at the head sees the reputation, indexes and counts
        // of everything below it.
        if to == head.number && deferred {
            self.catch_up_upkeep(&mut tx).await?;
        } else if to == head.number {
            reputation::refresh_pending(&mut tx, chain_id).await?;
        }
        notify::pacts(&mut tx, chain_id, &touched).await?;
        checkpoint::record_blocks(&mut tx, chain_id, &recent, final_below).await?;
        let checkpoint = Checkpoint { block_number: to, block_hash: end };
        checkpoint::save(&mut tx, chain_id, checkpoint, Some(end_time), Some(end_parent), Some(head)).await?;
        tx.commit().await?;
        self.metrics.phase(Phase::Db, writing.elapsed().saturating_sub(decoding));
        tracing::debug!(from, to, events = new_events, "indexed");
        Ok((checkpoint, new_events as u64))
    }

    /// The logs as journal events, timed by their blocks (`blocks`: hash and time by number) when
    /// the node leaves `blockTimestamp` out.
    fn journal_events(
        &self,
        logs: &[Log],
        blocks: &HashMap<u64, (B256, u64)>,
    ) -> Result<Vec<JournalEvent>, IndexError> {
        logs.iter()
            .map(|log| {
                let missing = || IndexError::Incomplete(format!("log without its block or index: {log:?}"));
                let block_number = log.block_number.ok_or_else(missing)?;
                let block_time = match log.block_timestamp {
                    Some(t) => t,
                    None => blocks.get(&block_number).ok_or_else(missing)?.1,
                };
                Ok(JournalEvent {
                    chain_id: self.target.chain_id,
                    block_number,
                    log_index: log.log_index.ok_or_else(missing)?,
                    block_hash: log.block_hash.ok_or_else(missing)?,
                    tx_hash: log.transaction_hash.ok_or_else(missing)?,
                    block_time,
                    contract: log.address(),
                    body: decode::decode(&self.target.contracts, &log.inner)?,
                })
            })
            .collect()
    }

    /// The last block of the log range that starts at `from`: not past `head`, nor across the
    /// deployment block (before it, only the registries are read: [`fetch::addresses`]).
    fn range_end(&self, from: u64, head: u64) -> u64 {
        fetch::within_phase(from, self.range.end(from, head), self.target.deployment_block)
    }

    /// The contracts' logs in blocks `from..=to`, and the hash block `to` had just before they
    /// were read; timed as RPC (the transport retries). [`Self::commit`] reads the blocks again
    /// after the logs: if `to` then has another hash, the chain moved while the batch was read,
    /// and a block that had no log of ours on the old branch may have one on the new (the check of
    /// each log's block hash cannot see a log that was never served).
    async fn logs(&self, from: u64, to: u64) -> Result<Fetched, TransportError> {
        let started = std::time::Instant::now();
        let before = self.provider.get_block_by_number(BlockNumberOrTag::Number(to)).await?;
        let addresses = fetch::addresses(&self.target.contracts, self.target.deployment_block, to);
        let logs = fetch::logs(&self.provider, addresses, from, to).await?;
        self.metrics.phase(Phase::Rpc, started.elapsed());
        Ok(Fetched { logs, last: before.map(|b| (b.header.hash, b.header.parent_hash)) })
    }

    /// The hashes of blocks `from..=to` (empty when `from > to`).
    async fn block_refs(&self, from: u64, to: u64) -> Result<Vec<BlockRef>, IndexError> {
        let headers = self.headers(from..=to).await?;
        Ok(headers
            .into_iter()
            .map(|h| BlockRef {
                number: h.number,
                hash: h.hash,
                parent_hash: h.parent_hash,
                timestamp: h.timestamp,
            })
            .collect())
    }

    /// The headers of blocks `numbers`, in that order, a few read at once.
    async fn headers(&self, numbers: impl IntoIterator<Item = u64>) -> Result<Vec<Header>, IndexError> {
        futures::stream::iter(numbers)
            .map(|n| self.block(BlockNumberOrTag::Number(n)))
            .buffered(CONCURRENT_HEADER_READS)
            .map_ok(|block| block.header)
            .try_collect()
            .await
    }

    async fn block(&self, number: BlockNumberOrTag) -> Result<alloy::rpc::types::Block, IndexError> {
        self.provider
            .get_block_by_number(number)
            .await?
            .ok_or_else(|| IndexError::Incomplete(format!("block {number} not found")))
    }

    /// The chain's hash of block `number`, or `None` when it has no such block.
    async fn hash_at(&self, number: u64) -> Result<Option<B256>, IndexError> {
        let block = self.provider.get_block_by_number(BlockNumberOrTag::Number(number)).await?;
        Ok(block.map(|b| b.header.hash))
    }
}

/// What a pass decided before writing its batches: the head it saw (the batch reaching it ends the
/// pass) and whether upkeep is deferred.
#[derive(Debug, Clone, Copy)]
struct Plan {
    head: Head,
    deferred: bool,
}

/// A range's logs as read, with its last block's hash and parent hash just before.
struct Fetched {
    logs: Vec<Log>,
    /// `None` when the node had no such block yet.
    last: Option<(B256, B256)>,
}

/// Checks that a batch was read from one chain: the recent blocks link parent to child, and each
/// log's block hash is the chain's hash of its block as read after the logs (`hashes`: hash and
/// time of every block with a log). A reorganisation between reading the logs and reading the
/// blocks would otherwise journal events of an abandoned branch under the new branch's hashes,
/// where no later check could see them — even below the finality depth, when a lagging indexer
/// reads a range that was still the tip when its logs were served (the chaos soak found this).
fn consistent(
    recent: &[BlockRef],
    hashes: &HashMap<u64, (B256, u64)>,
    logs: &[Log],
) -> Result<(), IndexError> {
    if let Some(pair) = recent.windows(2).find(|pair| pair[1].parent_hash != pair[0].hash) {
        return Err(IndexError::ChainMoved { block: pair[1].number });
    }
    // A log without its block's number or hash is refused when it is decoded.
    let moved = logs
        .iter()
        .filter_map(|l| Some((l.block_number?, l.block_hash?)))
        .find(|(number, hash)| hashes.get(number).is_some_and(|(h, _)| h != hash));
    match moved {
        Some((block, _)) => Err(IndexError::ChainMoved { block }),
        None => Ok(()),
    }
}
