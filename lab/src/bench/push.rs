//! `agentpact bench push`: webhooks at 10,000 subscriptions. The indexer follows anvil (polling
//! every `--poll-ms`), push matches and delivers in this process to a loopback receiver that
//! records when each POST arrived. (1) Latency: one pact created at a time, timed from its
//! receipt (the block mined) until the one subscription that watches its buyer receives it, with
//! every other subscription watching someone else. (2) Throughput: every subscription watching
//! everything, `--events` pacts created at once: deliveries per second until all have arrived.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use agentpact_contracts::WebhookMode;
use agentpact_indexer::Config;
use agentpact_push::{
    Filter, Policy, PushConfig, Registration, Targets, sign::ServerKey, subscription::Proof,
};
use alloy::{primitives::Address, signers::local::PrivateKeySigner};
use anyhow::Context;

use super::{Percentiles, Workload, lab::Lab, ms};

/// Flags of `agentpact bench push`.
#[derive(Debug, Clone, clap::Args)]
pub struct PushArgs {
    /// Subscriptions registered.
    #[arg(long, default_value_t = 10_000)]
    subscriptions: usize,
    /// Pacts created one at a time for the latency run.
    #[arg(long, default_value_t = 100)]
    samples: usize,
    /// Pacts created at once for the throughput run (each delivered to every subscription).
    #[arg(long, default_value_t = 3)]
    events: usize,
    /// The indexer's poll interval in milliseconds (part of every latency).
    #[arg(long, default_value_t = 100)]
    poll_ms: u64,
    /// A Postgres server to create the benchmark's database on; without it, a private cluster.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
}

/// What the receiver saw: (transaction hash, subscription) and when.
type Arrivals = Arc<Mutex<Vec<(String, i64, Instant)>>>;

/// Runs the benchmark and prints what it measured.
pub async fn run(args: PushArgs) -> anyhow::Result<()> {
    let lab = Lab::open(&Workload { pacts: 1, seed: 1, database_url: args.database_url.clone() }, "push", 1)
        .await?;
    let chain_id = lab.anvil.chain_id();
    let indexer =
        lab.indexer(Config { poll_interval: Duration::from_millis(args.poll_ms), ..Config::default() });
    tokio::spawn(agentpact_indexer::run(indexer, std::future::pending()));

    let arrivals: Arrivals = Arc::default();
    let url = receiver(arrivals.clone()).await?;
    let targets = Targets::parse("127.0.0.1/32").map_err(anyhow::Error::msg)?;
    let config = PushConfig {
        targets: targets.clone(),
        poll: Duration::from_millis(args.poll_ms),
        owner_rate: agentpact_http::rate_limit::Rate { per_second: 1e9, burst: 1e9 },
        ..PushConfig::new(chain_id)
    };
    let key = ServerKey::new(PrivateKeySigner::random());
    let metrics = agentpact_push::Metrics::for_chain(chain_id);
    tokio::spawn(agentpact_push::run(lab.pool.clone(), config, key, metrics, std::future::pending()));

    let buyer = lab.cast.buyers[0];
    let policy = Policy { targets, max_per_owner: u32::MAX };
    // Latency: one subscription watches the buyer, the rest watch strangers.
    let started = Instant::now();
    let watcher = subscribe(&lab, &policy, &url, 0, Some(buyer)).await?;
    for n in 1..args.subscriptions {
        subscribe(&lab, &policy, &url, n, Some(Address::with_last_byte(1).create(n as u64))).await?;
    }
    println!("{} subscriptions registered in {:.1} s", args.subscriptions, started.elapsed().as_secs_f64());
    let mut samples = Vec::with_capacity(args.samples);
    for i in 0..args.samples {
        // Land at a different point of the indexer's poll cycle each time.
        tokio::time::sleep(Duration::from_millis((i as u64) * 389 % args.poll_ms.max(1))).await;
        let (tx, mined) = create_pact(&lab, buyer).await?;
        loop {
            let seen = arrivals
                .lock()
                .ok()
                .and_then(|a| a.iter().find(|(h, s, _)| *h == tx && *s == watcher).map(|x| x.2));
            if let Some(at) = seen {
                samples.push(at.saturating_duration_since(mined));
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let latency = Percentiles::of(&mut samples).context("no samples")?;

    // Throughput: every subscription watches everything.
    sqlx::query("UPDATE webhook_subscriptions SET party = NULL").execute(&lab.pool).await?;
    let before = arrivals.lock().map(|a| a.len()).unwrap_or(0);
    let started = Instant::now();
    for _ in 0..args.events {
        create_pact(&lab, buyer).await?;
    }
    let expected = before + args.events * args.subscriptions;
    while arrivals.lock().map(|a| a.len()).unwrap_or(0) < expected {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let elapsed = started.elapsed();
    let delivered = args.events * args.subscriptions;

    println!("webhooks at {} subscriptions (indexer poll {} ms)", args.subscriptions, args.poll_ms);
    println!("| measure | value |\n|---|---|");
    println!("| mined → received, p50 | {} |", ms(latency.p50));
    println!("| mined → received, p95 | {} |", ms(latency.p95));
    println!("| mined → received, p99 | {} |", ms(latency.p99));
    println!("| mined → received, max | {} |", ms(latency.max));
    println!(
        "| throughput: {delivered} deliveries ({} events × {}) | {:.0} deliveries/s ({:.1} s) |",
        args.events,
        args.subscriptions,
        delivered as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    Ok(())
}

/// Registers subscription `n` (its own owner) to `url`, watching `party`; returns its id.
async fn subscribe(
    lab: &Lab,
    policy: &Policy,
    url: &str,
    n: usize,
    party: Option<Address>,
) -> anyhow::Result<i64> {
    let registration = Registration {
        chain_id: lab.anvil.chain_id(),
        owner: Address::with_last_byte(2).create(n as u64),
        url: format!("{url}/{n}"),
        mode: WebhookMode::Instant,
        filter: Filter { party, ..Filter::default() },
        issued_at: 0,
    };
    let stored =
        agentpact_push::subscription::register(&lab.pool, policy, &registration, Proof::Operator, None)
            .await
            .map_err(|e| anyhow::anyhow!("registering subscription {n}: {e}"))?;
    Ok(stored.id)
}

/// Creates a pact of `buyer`; returns its transaction hash (as bodies show it) and when its block
/// was mined.
async fn create_pact(lab: &Lab, buyer: Address) -> anyhow::Result<(String, Instant)> {
    let (hash, mined) = lab.send_live_pact(buyer).await?;
    let mined = mined.await.context("the receipt watcher panicked")??;
    Ok((format!("{hash:#x}"), mined))
}

/// A loopback receiver recording each POST's `txHash`, `subscriptionId` and arrival; its base URL.
async fn receiver(arrivals: Arrivals) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}/hook", listener.local_addr()?);
    let app = axum::Router::new().route(
        "/hook/{n}",
        axum::routing::post(move |body: axum::body::Bytes| {
            let arrivals = arrivals.clone();
            async move {
                let at = Instant::now();
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) {
                    let tx = v["txHash"].as_str().unwrap_or_default().to_owned();
                    let sub = v["subscriptionId"].as_i64().unwrap_or_default();
                    if let Ok(mut a) = arrivals.lock() {
                        a.push((tx, sub, at));
                    }
                }
                axum::http::StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base)
}
