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

use agentpact_indexer::{Config, PACT_CHANNEL};
use agentpact_tests::{
    HarnessError,
    index::indexer,
    load::{Cast, EVENTS_PER_LIFECYCLE, Generator, stake},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::providers::Provider;

fn main() -> Result<(), HarnessError> {
    agentpact_tests::load::block_on(bench())
}

async fn bench() -> Result<(), HarnessError> {
    let events: usize = std::env::var("BENCH_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let m = Market::open().await?;
    let cast = Cast::of(&m).await?;

    let started = Instant::now();
    let mut generator = Generator::start(&m.chain, cast.clone()).await?;
    let lifecycles = generator.lifecycles(events.div_ceil(EVENTS_PER_LIFECYCLE)).await?;
    generator.finish().await?;
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
        let terms = cast.terms(i as usize, deadline);
        let value = terms.payment + stake(terms.payment);
        let call = m.chain.pact.createPact(terms).from(cast.buyer).value(value);
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
