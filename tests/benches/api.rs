//! GraphQL API benchmark (not a test; figures go to BENCHMARKS.md).
//!
//! Builds a chain of `BENCH_PACTS` pacts (default 100,000: a fifth of them full lifecycles, the rest
//! open), indexes it, serves it over loopback HTTP, and for each query and each concurrency runs
//! clients in a closed loop for `BENCH_SECONDS` (default 5), reporting requests/s and p50/p99.
//!
//! Run: `scripts/bench api` (or `cargo bench -p agentpact-tests --bench api`), with DATABASE_URL or
//! a local PostgreSQL install, like the tests.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    index::indexer,
    load::{Cast, Generator},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::primitives::Address;
use serde_json::{Value, json};

fn main() -> Result<(), HarnessError> {
    agentpact_tests::load::block_on(bench())
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

async fn bench() -> Result<(), HarnessError> {
    let pacts = env("BENCH_PACTS", 100_000);
    let seconds = env("BENCH_SECONDS", 5) as u64;
    let m = Market::open().await?;
    let cast = Cast::of(&m).await?;
    let started = Instant::now();
    let mut generator = Generator::start(&m.chain, cast.clone()).await?;
    let completed = generator.lifecycles(pacts / 5).await?;
    generator.open_pacts(pacts.saturating_sub(completed)).await?;
    generator.finish().await?;
    println!("generated {pacts} pacts ({completed} completed) in {:.1?}", started.elapsed());

    let db = TestDatabase::create().await?;
    let started = Instant::now();
    indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM events").fetch_one(db.pool()).await?;
    println!("indexed {events} events in {:.1?}", started.elapsed());
    // What autovacuum does to a table of this size within minutes: statistics for the planner and
    // the visibility map that lets counts read indexes alone.
    sqlx::query("VACUUM ANALYZE").execute(db.pool()).await?;

    let pool = sqlx::postgres::PgPoolOptions::new().max_connections(16).connect(db.url()).await?;
    let server = TestApi::start(&pool, api::config(m.chain.anvil.chain_id())).await?;
    let server = Arc::new(server);
    let total = pacts as u64;
    let sellers = cast.sellers.clone();
    let queries: [(&str, &str, Inputs); 4] = [
        (
            "pact(id)",
            "query($id: BigInt!) { pact(id: $id) { id status payment buyer seller deadline oracles { address weight } } }",
            Box::new(move |n| json!({ "id": (n % total).to_string() })),
        ),
        (
            "pacts(seller, COMPLETED, first 20) + totalCount",
            "query($s: Address!) { pacts(filter: { seller: $s, status: [COMPLETED] }, first: 20) {
                totalCount edges { node { id payment closedAt } } } }",
            Box::new({
                let sellers = sellers.clone();
                move |n| json!({ "s": seller(&sellers, n) })
            }),
        ),
        (
            "reputation(address)",
            "query($a: Address!) { reputation(address: $a) { score { value rated }
                asSeller { pacts completed volume disputeRate } asBuyer { pacts } } }",
            Box::new(move |n| json!({ "a": seller(&sellers, n) })),
        ),
        (
            "pact(id).timeline",
            "query($id: BigInt!) { pact(id: $id) { timeline { kind blockNumber txHash timestamp } } }",
            Box::new(move |n| json!({ "id": (n % total).to_string() })),
        ),
    ];
    println!("| query | concurrency | requests/s | p50 | p99 | errors |");
    println!("|---|---|---|---|---|---|");
    for (name, query, variables) in &queries {
        for concurrency in [1usize, 16, 64] {
            let report = load(&server, query, variables, concurrency, Duration::from_secs(seconds)).await?;
            println!(
                "| {name} | {concurrency} | {:.0} | {:.2} ms | {:.2} ms | {} |",
                report.per_second, report.p50_ms, report.p99_ms, report.errors
            );
        }
    }
    Ok(())
}

/// The variables of the `n`th request of a query.
type Inputs = Box<dyn Fn(u64) -> Value + Send + Sync>;

fn seller(sellers: &[Address], n: u64) -> String {
    sellers[(n % sellers.len() as u64) as usize].to_checksum(None)
}

struct Report {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: usize,
}

/// `concurrency` clients, each sending `query` in a closed loop for `length`.
async fn load(
    server: &Arc<TestApi>,
    query: &str,
    variables: &(dyn Fn(u64) -> Value + Send + Sync),
    concurrency: usize,
    length: Duration,
) -> Result<Report, HarnessError> {
    let until = Instant::now() + length;
    let mut clients = Vec::new();
    for c in 0..concurrency {
        // Each client's inputs are a fixed pseudo-random sequence: runs are comparable.
        let inputs: Vec<Value> =
            (0..2_000u64).map(|i| variables((i * 2_654_435_761 + c as u64 * 40_503) % 1_000_003)).collect();
        let (server, query) = (Arc::clone(server), query.to_owned());
        clients.push(tokio::spawn(async move {
            let (mut latencies, mut errors) = (Vec::new(), 0usize);
            for vars in inputs.iter().cycle() {
                if Instant::now() >= until {
                    break;
                }
                let sent = Instant::now();
                match server.post(&query, vars.clone()).await {
                    Ok(response) if response.get("errors").is_none() => latencies.push(sent.elapsed()),
                    _ => errors += 1,
                }
            }
            (latencies, errors)
        }));
    }
    let (mut all, mut errors) = (Vec::new(), 0);
    for client in clients {
        let (latencies, e) = client.await.map_err(|e| HarnessError::Process(e.to_string()))?;
        all.extend(latencies);
        errors += e;
    }
    all.sort();
    let pick =
        |q: f64| all.get(((all.len().max(1) - 1) as f64 * q) as usize).map_or(0.0, |d| d.as_secs_f64() * 1e3);
    Ok(Report {
        per_second: all.len() as f64 / length.as_secs_f64(),
        p50_ms: pick(0.5),
        p99_ms: pick(0.99),
        errors,
    })
}
