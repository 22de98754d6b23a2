//! `agentpact bench api`: the GraphQL API over a generated, indexed chain, served on loopback.
//! For each query and each concurrency, clients send in a closed loop for a fixed time; reported:
//! requests/s and p50/p99 latency. Clients, server and Postgres share this machine's cores, so the
//! figures are a floor for a server with a machine of its own.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use agentpact_api::{Databases, ServeConfig};
use agentpact_indexer::Config;
use anyhow::Context;
use serde_json::{Value, json};

use super::{Percentiles, Workload, lab::Lab, ms};

/// Flags of `agentpact bench api`.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    #[command(flatten)]
    workload: Workload,
    /// Seconds each measurement runs.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Concurrent clients, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    clients: Vec<usize>,
}

/// The variables of a query's `n`th request.
type Inputs = Arc<dyn Fn(u64) -> Value + Send + Sync>;

/// Runs the benchmark and prints a table.
pub async fn run(args: ApiArgs) -> anyhow::Result<()> {
    let lab = Lab::open(&args.workload, "api").await?;
    let started = Instant::now();
    lab.indexer(Config::default()).catch_up().await?;
    // What autovacuum does to tables this size within minutes: planner statistics, and the
    // visibility map that lets counts read indexes alone.
    sqlx::query("VACUUM ANALYZE").execute(&lab.pool).await?;
    println!("indexed in {:.1?}", started.elapsed());

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/graphql", listener.local_addr()?);
    let config = ServeConfig {
        chain_id: lab.anvil.chain_id(),
        cors_origins: Vec::new(),
        ready_max_lag_blocks: u64::MAX,
        ready_max_silence: Duration::from_secs(3_600),
        ready_max_replica_lag_blocks: 2,
        rate_limit: None,
        negotiation: Default::default(),
        connections: Default::default(),
    };
    let serving = tokio::spawn(agentpact_api::serve(
        listener,
        Databases::single(lab.pool.clone()),
        config,
        std::future::pending(),
    ));

    let total = args.workload.pacts.max(1) as u64;
    let sellers: Vec<String> = lab.cast.sellers.iter().map(|s| s.to_checksum(None)).collect();
    let seller = move |n: u64| sellers[(n % sellers.len() as u64) as usize].clone();
    let queries: [(&str, &str, Inputs); 4] = [
        (
            "pact(id)",
            "query($id: BigInt!) { pact(id: $id) { id status payment buyer seller deadline oracles { address weight } } }",
            Arc::new(move |n| json!({ "id": (n % total).to_string() })),
        ),
        (
            "pacts(seller, COMPLETED, first 20) + totalCount",
            "query($s: Address!) { pacts(filter: { seller: $s, status: [COMPLETED] }, first: 20) {
                totalCount edges { node { id payment closedAt } } } }",
            Arc::new({
                let seller = seller.clone();
                move |n| json!({ "s": seller(n) })
            }),
        ),
        (
            "reputation(address)",
            "query($a: Address!) { reputation(address: $a) { score { value rated }
                asSeller { pacts completed volume disputeRate } asBuyer { pacts } } }",
            Arc::new(move |n| json!({ "a": seller(n) })),
        ),
        (
            "pact(id).timeline",
            "query($id: BigInt!) { pact(id: $id) { timeline { kind blockNumber txHash timestamp } } }",
            Arc::new(move |n| json!({ "id": (n % total).to_string() })),
        ),
    ];
    let client = reqwest::Client::builder().pool_max_idle_per_host(256).build()?;
    println!("| query | clients | requests/s | p50 | p99 | errors |");
    println!("|---|---|---|---|---|---|");
    for (name, query, inputs) in &queries {
        for &clients in &args.clients {
            let report =
                load(&client, &url, query, inputs, clients, Duration::from_secs(args.seconds)).await?;
            println!(
                "| {name} | {clients} | {:.0} | {} | {} | {} |",
                report.per_second,
                report.latency.map_or_else(|| "-".into(), |p| ms(p.p50)),
                report.latency.map_or_else(|| "-".into(), |p| ms(p.p99)),
                report.errors
            );
        }
    }
    serving.abort();
    Ok(())
}

struct Report {
    per_second: f64,
    latency: Option<Percentiles>,
    errors: usize,
}

/// `clients` clients, each sending `query` in a closed loop for `length`, each with a fixed
/// pseudo-random sequence of inputs so runs are comparable.
async fn load(
    client: &reqwest::Client,
    url: &str,
    query: &str,
    inputs: &Inputs,
    clients: usize,
    length: Duration,
) -> anyhow::Result<Report> {
    let until = Instant::now() + length;
    let mut running = Vec::new();
    for c in 0..clients as u64 {
        let bodies: Vec<String> = (0..2_000u64)
            .map(|i| {
                json!({ "query": query, "variables": inputs((i * 2_654_435_761 + c * 40_503) % 1_000_003) })
                    .to_string()
            })
            .collect();
        let (client, url) = (client.clone(), url.to_owned());
        running.push(tokio::spawn(async move {
            let (mut latencies, mut errors) = (Vec::new(), 0usize);
            for body in bodies.iter().cycle() {
                if Instant::now() >= until {
                    break;
                }
                let sent = Instant::now();
                let answer = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await;
                let ok = match answer {
                    Ok(response) => response.json::<Value>().await.is_ok_and(|v| v.get("errors").is_none()),
                    Err(_) => false,
                };
                if ok {
                    latencies.push(sent.elapsed());
                } else {
                    errors += 1;
                }
            }
            (latencies, errors)
        }));
    }
    let (mut all, mut errors) = (Vec::new(), 0);
    for client in running {
        let (latencies, e) = client.await.context("a load client panicked")?;
        all.extend(latencies);
        errors += e;
    }
    Ok(Report {
        per_second: all.len() as f64 / length.as_secs_f64(),
        latency: Percentiles::of(&mut all),
        errors,
    })
}
