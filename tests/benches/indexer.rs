//! Indexer benchmark (not a test; figures go to BENCHMARKS.md):
//!
//! 1. backfill: mine pact lifecycles until the chain holds at least `EVENTS` events, then index
//!    the whole chain into a fresh database and report events/s;
//! 2. latency: with the indexer following the head, send transactions and measure from the
//!    receipt (block mined) to the `pact_updated` notification (change committed).
//!
//! Run: `scripts/bench` (or `cargo bench -p agentpact-tests --bench indexer`), with DATABASE_URL
//! or a local PostgreSQL install, like the tests. `BENCH_EVENTS` overrides the event count.

use std::time::{Duration, Instant};

use agentpact_contracts::{AgentPact, Initiator};
use agentpact_indexer::{Config, PACT_CHANNEL};
use agentpact_tests::{
    HarnessError,
    chain::{TestChain, ether, hash, send},
    index::indexer,
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{primitives::Address, providers::Provider};

/// Parallel groups of (buyer, seller, oracle) sending lifecycles.
const GROUPS: usize = 4;
/// Events one lifecycle emits: created, accepted, started, submitted, scored, finalized,
/// approved + two payouts.
const EVENTS_PER_LIFECYCLE: usize = 9;

fn main() -> Result<(), HarnessError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    runtime.block_on(bench())
}

async fn bench() -> Result<(), HarnessError> {
    let events: usize = std::env::var("BENCH_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let m = Market::open().await?;
    let groups = groups(&m).await?;

    let lifecycles = events.div_ceil(EVENTS_PER_LIFECYCLE);
    let started = Instant::now();
    let per_group = lifecycles.div_ceil(GROUPS);
    let mut tasks = Vec::new();
    for group in groups.clone() {
        let chain = ChainRef::of(&m.chain);
        tasks.push(tokio::spawn(async move { chain.lifecycles(group, per_group).await }));
    }
    for task in tasks {
        task.await.map_err(|e| HarnessError::Process(e.to_string()))??;
    }
    let head = m.chain.provider.get_block_number().await?;
    println!("generated {} lifecycles in {} blocks in {:.1?}", per_group * GROUPS, head, started.elapsed());

    let db = TestDatabase::create().await?;
    let mut ix = indexer(&m.chain, db.pool(), Config::default());
    let started = Instant::now();
    ix.catch_up().await?;
    let took = started.elapsed();
    let indexed: i64 = sqlx::query_scalar("SELECT count(*) FROM events").fetch_one(db.pool()).await?;
    println!(
        "backfill: {indexed} events, {head} blocks in {took:.2?} = {:.0} events/s, {:.0} blocks/s",
        indexed as f64 / took.as_secs_f64(),
        head as f64 / took.as_secs_f64()
    );

    for poll in [Duration::from_millis(100), Duration::from_secs(1)] {
        latency(&m, &groups[0], poll).await?;
    }
    Ok(())
}

/// Measures block-mined → change-committed delay for 40 transactions with the indexer following.
async fn latency(m: &Market, group: &Group, poll: Duration) -> Result<(), HarnessError> {
    let db = TestDatabase::create().await?;
    let config = Config { poll_interval: poll, ..Config::default() };
    let mut ix = indexer(&m.chain, db.pool(), config);
    ix.catch_up().await?;
    let follower = tokio::spawn(agentpact_indexer::run(ix, std::future::pending()));
    let mut listener = sqlx::postgres::PgListener::connect(db.url()).await?;
    listener.listen(PACT_CHANNEL).await?;

    let chain = ChainRef::of(&m.chain);
    let mut delays = Vec::new();
    for i in 0..40u64 {
        let id = m.chain.pact.pactCount().call().await?.to_string();
        let call = chain.create_call(group).await?;
        // With automine the block is mined before the node answers the send.
        let _pending = call.send().await?;
        let at = Instant::now();
        loop {
            let note = listener.recv().await?;
            if pact_of(note.payload()).as_deref() == Some(id.as_str()) {
                break;
            }
        }
        delays.push(at.elapsed());
        // Land at a different point of the poll cycle each time.
        let poll_ms = u64::try_from(poll.as_millis()).unwrap_or(1000).max(1);
        tokio::time::sleep(Duration::from_millis(i * 389 % poll_ms)).await;
    }
    follower.abort();
    delays.sort();
    let pick = |q: f64| delays[((delays.len() as f64 - 1.0) * q) as usize];
    println!(
        "latency with a {poll:?} poll: p50 {:.0?}, p95 {:.0?}, max {:.0?} (block mined -> pact change committed)",
        pick(0.5),
        pick(0.95),
        pick(1.0)
    );
    Ok(())
}

fn pact_of(payload: &str) -> Option<String> {
    Some(serde_json::from_str::<serde_json::Value>(payload).ok()?.get("pactId")?.as_str()?.to_owned())
}

/// One parallel sender: its own buyer, seller and oracle, so nonces never race.
#[derive(Debug, Clone, Copy)]
struct Group {
    buyer: Address,
    seller: Address,
    oracle: Address,
    arbitrator: Address,
}

async fn groups(m: &Market) -> Result<Vec<Group>, HarnessError> {
    let a = &m.chain.accounts;
    let mut groups = Vec::new();
    for g in 0..GROUPS {
        let group =
            Group { buyer: a[1 + 4 * g], seller: a[2 + 4 * g], oracle: a[3 + 4 * g], arbitrator: a[19] };
        m.register_oracle(group.oracle).await?;
        groups.push(group);
    }
    Ok(groups)
}

/// What a sender task needs of the chain (the chain itself stays with the main task).
#[derive(Clone)]
struct ChainRef {
    pact: AgentPact::AgentPactInstance<alloy::providers::DynProvider>,
    provider: alloy::providers::DynProvider,
}

impl ChainRef {
    fn of(chain: &TestChain) -> Self {
        Self { pact: chain.pact.clone(), provider: chain.provider.clone() }
    }

    /// A buyer-initiated pact create call for group `g`.
    async fn create_call(
        &self,
        g: &Group,
    ) -> Result<
        alloy::contract::CallBuilder<
            &alloy::providers::DynProvider,
            std::marker::PhantomData<AgentPact::createPactCall>,
        >,
        HarnessError,
    > {
        let now = self.provider.get_block_by_number(Default::default()).await?.map(|b| b.header.timestamp);
        let terms = AgentPact::Terms {
            initiator: Initiator::Buyer.code(),
            specHash: hash(7),
            specUri: "ipfs://bench".into(),
            deadline: now.unwrap_or_default() + 30 * 24 * 3600,
            reviewPeriod: 0,
            threshold: 50,
            arbitrator: g.arbitrator,
            payment: ether(1),
            oracles: vec![g.oracle],
            weights: vec![100],
        };
        Ok(self.pact.createPact(terms).from(g.buyer).value(ether(1) + stake()))
    }

    /// Runs `n` full lifecycles (create → approve) for group `g`.
    async fn lifecycles(&self, g: Group, n: usize) -> Result<(), HarnessError> {
        for _ in 0..n {
            let created = send(self.create_call(&g).await?).await?;
            let id = created
                .receipt
                .decoded_log::<AgentPact::PactCreated>()
                .map(|log| log.data.pactId)
                .ok_or_else(|| HarnessError::Process("createPact emitted no PactCreated".into()))?;
            send(self.pact.acceptPact(id).from(g.seller).value(stake())).await?;
            send(self.pact.startWork(id).from(g.seller)).await?;
            send(self.pact.submitWork(id, hash(8)).from(g.seller)).await?;
            send(self.pact.submitVerification(id, 90, hash(9)).from(g.oracle)).await?;
            send(self.pact.finalizeVerification(id).from(g.oracle)).await?;
            send(self.pact.approveWork(id).from(g.buyer)).await?;
        }
        Ok(())
    }
}

/// Each side's stake on a 1 ETH pact.
fn stake() -> alloy::primitives::U256 {
    ether(1) / alloy::primitives::U256::from(10u8)
}
