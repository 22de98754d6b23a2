//! `agentpact bench api`: the GraphQL API over a generated, indexed chain, served on loopback by
//! `agentpact serve` in a process of its own, as deployed (its defaults, but no rate limit). For
//! each query and each concurrency, clients in another process (`bench load`) send in a closed
//! loop for a fixed time; reported: requests/s and p50/p99 latency. With `taskset` there, the load
//! keeps to the last CPU and the server to the others from its start (so its runtime has one
//! worker per CPU it has); Postgres floats over every core, so the figures are a floor for a
//! server with a machine of its own.

use std::{process::Stdio, sync::Arc, time::Duration};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::{Amplification, Workload, lab::Lab, load, market::SPEC_WORDS};

/// Flags of `agentpact bench api`.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    #[command(flatten)]
    workload: Workload,
    #[command(flatten)]
    amplification: Amplification,
    /// Seconds each measurement runs.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Concurrent clients, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    clients: Vec<usize>,
    /// Only the queries whose name contains one of these words (comma-separated), e.g.
    /// `--only 'pact(id)'` to profile one; every query when absent.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// The variables of a query's `n`th request.
type Inputs = Arc<dyn Fn(u64) -> Value + Send + Sync>;

/// Runs the benchmark and prints a table.
pub async fn run(args: ApiArgs) -> anyhow::Result<()> {
    let lab = Lab::open(&args.workload, "api", args.amplification.copies).await?;
    super::index::backfill(&lab).await?;
    // What autovacuum does to tables this size within minutes: planner statistics, and the
    // visibility map that lets counts read indexes alone.
    sqlx::query("VACUUM ANALYZE").execute(&lab.pool).await?;

    let placement = pin_apart().await;
    let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let mut server = lab
        .command_on("serve", placement.as_ref().map(|p| p.server.as_str()))?
        .env("API_ADDR", addr.to_string())
        .env("RATE_LIMIT_PER_SEC", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting agentpact serve")?;
    let server_pid = server.id().context("agentpact serve exited at once")?;
    tokio::select! {
        status = server.wait() => bail!("agentpact serve stopped ({}) before it answered", status?),
        up = serving(addr) => up?,
    }
    let url = format!("http://{addr}/graphql");

    let total = (args.workload.pacts as u64 * lab.copies()).max(1);
    let sellers: Vec<String> = lab.sellers().iter().map(|s| s.to_checksum(None)).collect();
    let seller = move |n: u64| sellers[(n % sellers.len() as u64) as usize].clone();
    let hostile = Hostile::at_the_limit();
    let queries: [(&str, &str, Inputs); 9] = [
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
            Arc::new({
                let seller = seller.clone();
                move |n| json!({ "a": seller(n) })
            }),
        ),
        (
            "searchAgents(capability, first 20)",
            "query($c: String!) { searchAgents(capability: $c, first: 20) { edges { reputation node { address name } } } }",
            Arc::new(move |n| json!({ "c": SPEC_WORDS[(n % SPEC_WORDS.len() as u64) as usize] })),
        ),
        (
            "pact(id).timeline",
            "query($id: BigInt!) { pact(id: $id) { timeline { kind blockNumber txHash timestamp } } }",
            Arc::new(move |n| json!({ "id": (n % total).to_string() })),
        ),
        (
            "dashboard (cost ≈ 3,100: the most expensive accepted)",
            "query($w: String!) { stats { pacts byStatus { status count } volumes { completed open } }
                pacts(filter: { search: $w }, first: 100) { totalCount totalCountExact edges { node {
                    id status payment buyer seller deadline createdAt outcome finalScore currency { symbol }
                    timeline { kind blockNumber } } } } }",
            Arc::new(move |n| json!({ "w": SPEC_WORDS[(n % SPEC_WORDS.len() as u64) as usize] })),
        ),
        ("hostile: stats aliased to the cost limit", &hostile.stats, Arc::new(|_| json!({}))),
        (
            "hostile: page totalCount aliased to the cost limit",
            &hostile.counts,
            Arc::new(move |n| json!({ "s": seller(n) })),
        ),
        (
            "hostile: timelines of distinct pacts aliased to the cost limit",
            &hostile.timelines,
            Arc::new(move |n| {
                let ids: serde_json::Map<String, Value> = (0..TIMELINE_ALIASES)
                    .map(|i| (format!("p{i}"), json!(((n + i * 7_919) % total).to_string())))
                    .collect();
                Value::Object(ids)
            }),
        ),
    ];
    match &placement {
        Some(Placement { server, load }) => {
            println!("agentpact serve on CPUs {server}, the load from another process on CPU {load}")
        }
        None => println!(
            "agentpact serve in its own process, the load from another process, unpinned (no taskset, or one CPU)"
        ),
    }
    let dir = std::env::temp_dir().join(format!("agentpact-bench-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!("| query | clients | requests/s | p50 | p99 | errors |");
    println!("|---|---|---|---|---|---|");
    let chosen =
        |name: &str| args.only.is_empty() || args.only.iter().any(|word| name.contains(word.as_str()));
    for (name, query, inputs) in queries.iter().filter(|(name, ..)| chosen(name)) {
        let bodies = dir.join("bodies.jsonl");
        // A fixed pseudo-random sequence of inputs, so runs are comparable.
        // 20,000 bodies; 1,000 of the hostile ones (tens of kilobytes each).
        let count = if query.len() < 1_000 { 20_000 } else { 1_000 };
        let lines: Vec<String> = (0..count)
            .map(|i| {
                json!({ "query": query, "variables": inputs(i * 2_654_435_761 % 1_000_003) }).to_string()
            })
            .collect();
        std::fs::write(&bodies, lines.join("\n"))?;
        for &clients in &args.clients {
            let r = load::in_another_process(
                &url,
                &bodies,
                clients,
                args.seconds,
                placement.as_ref().map(|p| p.load),
            )
            .await?;
            println!(
                "| {name} | {clients} | {:.0} | {:.1} ms | {:.1} ms | {} |",
                r.per_second, r.p50_ms, r.p99_ms, r.errors
            );
        }
    }
    println!("server peak RSS {}", super::peak_rss(server_pid));
    server.kill().await?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

/// Waits until the server at `addr` answers `/healthz` (a minute at most).
async fn serving(addr: std::net::SocketAddr) -> anyhow::Result<()> {
    let url = format!("http://{addr}/healthz");
    for _ in 0..1_200 {
        if reqwest::get(&url).await.is_ok_and(|r| r.status().is_success()) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("agentpact serve did not answer {url} within a minute")
}

/// Aliases in the hostile queries: each as many as the cost limit (5,000) accepts.
const STATS_ALIASES: usize = 95;
const COUNT_ALIASES: usize = 45;
const TIMELINE_ALIASES: u64 = 200;

/// The accepted queries a hostile client would send: one expensive field aliased as often as
/// the complexity limit lets it (docs/api.md §Costs). Refused ones cost nothing to measure.
struct Hostile {
    /// `stats` × 95 (cost 51 each).
    stats: String,
    /// A seller's completed pacts' `totalCount` × 45 (cost ~102 each).
    counts: String,
    /// `pact(id).timeline` of 200 different pacts (cost ~22 each).
    timelines: String,
}

impl Hostile {
    fn at_the_limit() -> Self {
        let aliases = |n: usize, field: &dyn Fn(usize) -> String| {
            (0..n).map(|i| format!("a{i}: {} ", field(i))).collect::<String>()
        };
        let stats = format!("{{ {} }}", aliases(STATS_ALIASES, &|_| "stats { pacts }".into()));
        let counts = format!(
            "query($s: Address!) {{ {} }}",
            aliases(COUNT_ALIASES, &|_| {
                "pacts(filter: { seller: $s, status: [COMPLETED] }, first: 1) { totalCount }".into()
            })
        );
        let variables: String = (0..TIMELINE_ALIASES).map(|i| format!("$p{i}: BigInt! ")).collect();
        let timelines = format!(
            "query({variables}) {{ {} }}",
            aliases(TIMELINE_ALIASES as usize, &|i| format!("pact(id: $p{i}) {{ timeline {{ kind }} }}"))
        );
        Self { stats, counts, timelines }
    }
}

/// Where the server and the load run when they are pinned apart.
struct Placement {
    /// The server's CPUs, as `taskset -c` takes them: every CPU but the last.
    server: String,
    /// The load's CPU: the last.
    load: usize,
}

/// Keeps this process to the server's CPUs and says where each runs; `None` when there is one
/// CPU or no `taskset`.
async fn pin_apart() -> Option<Placement> {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    if cpus < 2 {
        return None;
    }
    let server = format!("0-{}", cpus - 2);
    let pid = std::process::id().to_string();
    let pinned =
        tokio::process::Command::new("taskset").args(["-a", "-p", "-c", &server, &pid]).output().await;
    pinned.ok().filter(|o| o.status.success()).map(|_| Placement { server, load: cpus - 1 })
}
