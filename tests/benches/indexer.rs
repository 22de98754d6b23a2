//! Indexer benchmark (not a test; figures go to BENCHMARKS.md):
//!
//! 1. backfill: mine pact lifecycles until the chain holds at least `EVENTS` events, then index
//!    the whole chain into a fresh database and report events/s;
//! 2. latency: with the indexer following the head, send transactions and measure from the
//!    receipt (block mined) to the `pact_updated` notification (change committed).
//!
//! Run: `scripts/bench` (or `cargo bench -p agentpact-tests --bench indexer`), with DATABASE_URL
//! or a local PostgreSQL install, like the tests. `BENCH_EVENTS` overrides the event count.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use agentpact_contracts::{AgentPact, Initiator};
use agentpact_indexer::{Config, PACT_CHANNEL};
use agentpact_tests::{
    HarnessError,
    chain::{TestChain, hash},
    index::indexer,
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
};
use serde_json::Value;

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
    let cast = Cast::of(&m).await?;

    let started = Instant::now();
    let generator = Generator::start(&m.chain, cast.clone()).await?;
    let lifecycles = generator.run(events.div_ceil(EVENTS_PER_LIFECYCLE)).await?;
    let head = m.chain.provider.get_block_number().await?;
    println!("generated {lifecycles} lifecycles in {head} blocks in {:.1?}", started.elapsed());

    let db = TestDatabase::create().await?;
    let mut ix = indexer(&m.chain, db.pool(), Config::default());
    let started = Instant::now();
    ix.catch_up().await?;
    let took = started.elapsed();
    let indexed: i64 = sqlx::query_scalar("SELECT count(*) FROM events").fetch_one(db.pool()).await?;
    // Every lifecycle emits 9 events: fewer means some generated transaction reverted.
    let expected = (lifecycles * EVENTS_PER_LIFECYCLE) as i64;
    if indexed < expected {
        return Err(HarnessError::Process(format!(
            "only {indexed} of {expected} events: transactions reverted"
        )));
    }
    println!(
        "backfill: {indexed} events, {head} blocks in {took:.2?} = {:.0} events/s, {:.0} blocks/s",
        indexed as f64 / took.as_secs_f64(),
        head as f64 / took.as_secs_f64()
    );

    for poll in [Duration::from_millis(100), Duration::from_secs(1)] {
        latency(&m, &cast, poll).await?;
    }
    Ok(())
}

/// Measures block-mined → change-committed delay for 40 transactions with the indexer following.
async fn latency(m: &Market, cast: &Cast, poll: Duration) -> Result<(), HarnessError> {
    let db = TestDatabase::create().await?;
    let config = Config { poll_interval: poll, ..Config::default() };
    let mut ix = indexer(&m.chain, db.pool(), config);
    ix.catch_up().await?;
    let follower = tokio::spawn(agentpact_indexer::run(ix, std::future::pending()));
    let mut listener = sqlx::postgres::PgListener::connect(db.url()).await?;
    listener.listen(PACT_CHANNEL).await?;

    let mut delays = Vec::new();
    for i in 0..40u64 {
        let id = m.chain.pact.pactCount().call().await?.to_string();
        let deadline = m.chain.now().await? + 30 * 24 * 3600;
        let oracle = cast.oracles[0];
        let call = m
            .chain
            .pact
            .createPact(terms(cast, oracle, deadline))
            .from(cast.buyer)
            .value(payment() + stake());
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

/// Who sends what: one buyer creates and approves every pact (so pact ids follow its nonces),
/// sellers and oracles take turns.
#[derive(Debug, Clone)]
struct Cast {
    buyer: Address,
    sellers: Vec<Address>,
    oracles: Vec<Address>,
    arbitrator: Address,
}

impl Cast {
    async fn of(m: &Market) -> Result<Self, HarnessError> {
        let a = &m.chain.accounts;
        let cast =
            Self { buyer: a[1], sellers: a[2..=8].to_vec(), oracles: a[9..=12].to_vec(), arbitrator: a[19] };
        for oracle in &cast.oracles {
            m.register_oracle(*oracle).await?;
        }
        Ok(cast)
    }
}

/// A small payment, so 10,000 ETH of dev balance pays for many thousand pacts.
fn payment() -> U256 {
    U256::from(1_000_000_000_000_000u64)
}

fn stake() -> U256 {
    payment() / U256::from(10u8)
}

fn terms(cast: &Cast, oracle: Address, deadline: u64) -> AgentPact::Terms {
    AgentPact::Terms {
        initiator: Initiator::Buyer.code(),
        specHash: hash(7),
        specUri: "ipfs://bench".into(),
        deadline,
        reviewPeriod: 0,
        threshold: 50,
        arbitrator: cast.arbitrator,
        payment: payment(),
        oracles: vec![oracle],
        weights: vec![100],
    }
}

/// Fills blocks with many transactions each: automine off, transactions sent with explicit nonces
/// and gas (no estimation against a state that does not exist yet), then mined in phases so that
/// each phase only depends on blocks already mined. One round: the buyer creates a batch of pacts;
/// sellers accept, start and submit; oracles score and finalize; the buyer approves.
struct Generator {
    pact: AgentPact::AgentPactInstance<DynProvider>,
    provider: DynProvider,
    cast: Cast,
    nonces: HashMap<Address, u64>,
}

/// Pacts per round.
const ROUND: usize = 400;

impl Generator {
    async fn start(chain: &TestChain, cast: Cast) -> Result<Self, HarnessError> {
        let provider = chain.provider.clone();
        let _: Value = provider.raw_request("evm_setAutomine".into(), (false,)).await?;
        let _: Value =
            provider.raw_request("evm_setBlockGasLimit".into(), (U256::from(2_000_000_000u64),)).await?;
        let mut nonces = HashMap::new();
        for who in cast.sellers.iter().chain(&cast.oracles).chain([&cast.buyer]) {
            nonces.insert(*who, provider.get_transaction_count(*who).await?);
        }
        Ok(Self { pact: chain.pact.clone(), provider, cast, nonces })
    }

    /// Runs whole rounds until at least `lifecycles` pacts went from creation to approval.
    async fn run(mut self, lifecycles: usize) -> Result<usize, HarnessError> {
        let mut done = 0;
        while done < lifecycles {
            self.round().await?;
            done += ROUND;
        }
        let _: Value = self.provider.raw_request("evm_setAutomine".into(), (true,)).await?;
        Ok(done)
    }

    async fn round(&mut self) -> Result<(), HarnessError> {
        let first: u64 = self.pact.pactCount().call().await?.to();
        let deadline =
            self.provider.get_block_by_number(Default::default()).await?.map_or(0, |b| b.header.timestamp)
                + 30 * 24 * 3600;
        let ids: Vec<U256> = (first..first + ROUND as u64).map(U256::from).collect();
        let (buyer, cast, pact) = (self.cast.buyer, self.cast.clone(), self.pact.clone());
        let value = payment() + stake();
        for (i, _) in ids.iter().enumerate() {
            let oracle = cast.oracles[i % cast.oracles.len()];
            self.fire(buyer, pact.createPact(terms(&cast, oracle, deadline)).value(value)).await?;
        }
        self.mine().await?;
        for (i, id) in ids.iter().enumerate() {
            let seller = cast.sellers[i % cast.sellers.len()];
            self.fire(seller, pact.acceptPact(*id).value(stake())).await?;
            self.fire(seller, pact.startWork(*id)).await?;
            self.fire(seller, pact.submitWork(*id, hash(8))).await?;
        }
        self.mine().await?;
        for (i, id) in ids.iter().enumerate() {
            let oracle = cast.oracles[i % cast.oracles.len()];
            self.fire(oracle, pact.submitVerification(*id, 90, hash(9))).await?;
            self.fire(oracle, pact.finalizeVerification(*id)).await?;
        }
        self.mine().await?;
        for id in &ids {
            self.fire(buyer, pact.approveWork(*id)).await?;
        }
        self.mine().await
    }

    /// Sends `call` from `from` with the next nonce, without waiting for it to be mined.
    async fn fire<C: alloy::contract::CallDecoder>(
        &mut self,
        from: Address,
        call: alloy::contract::CallBuilder<&DynProvider, C>,
    ) -> Result<(), HarnessError> {
        let nonce = self.nonces.entry(from).or_default();
        let call = call
            .from(from)
            .nonce(*nonce)
            .gas(1_000_000)
            .max_fee_per_gas(100_000_000_000)
            .max_priority_fee_per_gas(0);
        drop(call.send().await?);
        *nonce += 1;
        Ok(())
    }

    /// Mines until the pool is empty.
    async fn mine(&self) -> Result<(), HarnessError> {
        loop {
            let _: Value = self.provider.raw_request("evm_mine".into(), ()).await?;
            let status: Value = self.provider.raw_request("txpool_status".into(), ()).await?;
            let pending = status.get("pending").and_then(Value::as_str).unwrap_or("0x0");
            if pending == "0x0" || pending == "0" {
                return Ok(());
            }
        }
    }
}
