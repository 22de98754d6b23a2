//! `agentpact bench push`: webhooks at 10,000 subscriptions, or with `--sink <broker>` the same
//! deliveries published to a broker (bench::streams). The indexer follows anvil (polling every
//! `--poll-ms`), push matches and delivers in this process to a loopback receiver, or a consumer
//! of the broker, that records when each delivery arrived. (1) Latency: one pact created at a
//! time, timed from its receipt (the block mined) until the one subscription that watches its
//! buyer (the sink, with `--sink`) has it, with every other subscription watching someone else.
//! (2) Throughput: for webhooks, every subscription watching everything, `--events` pacts created
//! at once: deliveries per second until all have arrived; for a sink, push stopped while
//! `--events` pacts are created and indexed, then started again: events per second until the
//! consumer has the last. A first pact, not counted, lets a sink connect to its broker.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use agentpact_contracts::WebhookMode;
use agentpact_indexer::Config;
use agentpact_push::{
    Filter, Policy, PushConfig, Registration, Targets, sign::ServerKey, sink::Broker, subscription::Proof,
};
use alloy::{primitives::Address, providers::Provider, signers::local::PrivateKeySigner};
use anyhow::Context;

use super::{Percentiles, Workload, lab::Lab, ms, streams};

/// Flags of `agentpact bench push`.
#[derive(Debug, Clone, clap::Args)]
pub struct PushArgs {
    /// Subscriptions registered.
    #[arg(long, default_value_t = 10_000)]
    subscriptions: usize,
    /// Pacts created one at a time for the latency run.
    #[arg(long, default_value_t = 100)]
    samples: usize,
    /// Pacts created for the throughput run: default 3 for webhooks (each delivered to every
    /// subscription), 500 for a sink.
    #[arg(long)]
    events: Option<usize>,
    /// The indexer's poll interval in milliseconds (part of every latency).
    #[arg(long, default_value_t = 100)]
    poll_ms: u64,
    /// Measure a broker sink instead of webhooks: nats, redis or amqp (the webhook subscriptions
    /// are still registered, all watching strangers).
    #[arg(long, value_parser = broker)]
    sink: Option<Broker>,
    /// The sink's broker; without it, the broker's usual port on 127.0.0.1.
    #[arg(long)]
    broker_url: Option<String>,
    /// A Postgres server to create the benchmark's database on; without it, a private cluster.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
}

/// `--sink`'s value.
fn broker(name: &str) -> Result<Broker, String> {
    Broker::from_name(name).ok_or_else(|| format!("{name:?} is not a broker: nats, redis or amqp"))
}

/// What the receiver or the consumer saw: (transaction hash, subscription) and when.
pub type Arrivals = Arc<Mutex<Vec<(String, i64, Instant)>>>;

/// How long one delivery may take before the benchmark gives up.
const PATIENCE: Duration = Duration::from_secs(60);

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
    let mut config = PushConfig {
        targets: targets.clone(),
        poll: Duration::from_millis(args.poll_ms),
        owner_rate: agentpact_http::rate_limit::Rate { per_second: 1e9, burst: 1e9 },
        ..PushConfig::new(chain_id)
    };
    let consumer = match args.sink {
        Some(broker) => {
            let broker_url = args.broker_url.as_deref().unwrap_or(streams::local_url(broker));
            let mut consumer =
                streams::Consumer::start(broker, broker_url, chain_id, arrivals.clone()).await?;
            consumer.sink.party = Some(lab.cast.buyers[0]);
            config.sinks.push(consumer.sink.clone());
            Some(consumer)
        }
        None => None,
    };
    let measured =
        measure(&lab, &args, config, &Policy { targets, max_per_owner: u32::MAX }, &url, &arrivals).await;
    // The stream, keys or exchange of the run go even when the measuring failed.
    if let Some(consumer) = consumer {
        consumer.close().await?;
    }
    measured
}

/// Registers the subscriptions, runs push with `config`, measures and prints.
async fn measure(
    lab: &Lab,
    args: &PushArgs,
    config: PushConfig,
    policy: &Policy,
    url: &str,
    arrivals: &Arrivals,
) -> anyhow::Result<()> {
    let buyer = lab.cast.buyers[0];
    // Latency: the watcher (the first subscription, or the sink) watches the buyer, the rest
    // watch strangers.
    let started = Instant::now();
    let mut first = None;
    for n in 0..args.subscriptions {
        let party =
            if n == 0 && args.sink.is_none() { buyer } else { Address::with_last_byte(1).create(n as u64) };
        first = first.or(Some(subscribe(lab, policy, url, n, Some(party)).await?));
    }
    println!("{} subscriptions registered in {:.1} s", args.subscriptions, started.elapsed().as_secs_f64());
    let push = Running::start(lab, config.clone());
    let watcher = match config.sinks.first() {
        Some(sink) => sink_subscription(lab, &sink.target()).await?,
        None => first.context("--subscriptions 0 leaves no webhook to watch")?,
    };
    let mut samples = Vec::with_capacity(args.samples);
    // One more pact first, not counted: a sink connects to its broker at its first publish.
    for i in 0..=args.samples {
        // Land at a different point of the indexer's poll cycle each time.
        tokio::time::sleep(Duration::from_millis((i as u64) * 389 % args.poll_ms.max(1))).await;
        let (tx, mined) = create_pact(lab, buyer).await?;
        let at =
            until(arrivals, PATIENCE, |a| a.iter().find(|(h, s, _)| *h == tx && *s == watcher).map(|x| x.2))
                .await?;
        if i > 0 {
            samples.push(at.saturating_duration_since(mined));
        }
    }
    let latency = Percentiles::of(&mut samples).context("no samples")?;

    let (delivered, elapsed) = match args.sink {
        None => {
            // Every subscription watches everything.
            let events = args.events.unwrap_or(3);
            sqlx::query("UPDATE webhook_subscriptions SET party = NULL").execute(&lab.pool).await?;
            let before = arrivals.lock().map(|a| a.len()).unwrap_or(0);
            let started = Instant::now();
            for _ in 0..events {
                create_pact(lab, buyer).await?;
            }
            let expected = before + events * args.subscriptions;
            until(arrivals, PATIENCE * 10, |a| (a.len() >= expected).then_some(())).await?;
            push.stop().await?;
            (events * args.subscriptions, started.elapsed())
        }
        Some(_) => {
            // The events wait, indexed, while push is stopped; then it publishes them all.
            let events = args.events.unwrap_or(500);
            push.stop().await?;
            let count = |a: &[(String, i64, Instant)]| a.iter().filter(|x| x.1 == watcher).count();
            let expected = arrivals.lock().map(|a| count(&a)).unwrap_or(0) + events;
            for _ in 0..events {
                create_pact(lab, buyer).await?;
            }
            indexed(lab, lab.provider.get_block_number().await?).await?;
            let started = Instant::now();
            let push = Running::start(lab, config.clone());
            until(arrivals, PATIENCE * 10, |a| (count(a) >= expected).then_some(())).await?;
            let elapsed = started.elapsed();
            push.stop().await?;
            (events, elapsed)
        }
    };

    let (transport, arrived, unit) = match args.sink {
        None => (format!("webhooks at {} subscriptions", args.subscriptions), "received", "deliveries"),
        Some(broker) => (
            format!("the {} sink beside {} webhook subscriptions", broker.name(), args.subscriptions),
            "consumed",
            "events",
        ),
    };
    println!("{transport} (indexer poll {} ms)", args.poll_ms);
    println!("| measure | value |\n|---|---|");
    println!("| mined → {arrived}, p50 | {} |", ms(latency.p50));
    println!("| mined → {arrived}, p95 | {} |", ms(latency.p95));
    println!("| mined → {arrived}, p99 | {} |", ms(latency.p99));
    println!("| mined → {arrived}, max | {} |", ms(latency.max));
    println!(
        "| throughput: {delivered} {unit} | {:.0} {unit}/s ({:.1} s) |",
        delivered as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    Ok(())
}

/// push's loop in this process, until stopped.
struct Running {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), agentpact_push::PushError>>,
}

impl Running {
    /// Starts push with `config` on the lab's database.
    fn start(lab: &Lab, config: PushConfig) -> Self {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let key = ServerKey::new(PrivateKeySigner::random());
        let metrics = agentpact_push::Metrics::for_chain(config.chain_id);
        let shutdown = async {
            let _ = stopped.await;
        };
        let task = tokio::spawn(agentpact_push::run(lab.pool.clone(), config, key, metrics, shutdown));
        Self { stop, task }
    }

    /// Asks it to stop and waits until it has.
    async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await.context("push panicked")??;
        Ok(())
    }
}

/// Waits until `seen` finds what it looks for in the arrivals, at most `patience`.
async fn until<T>(
    arrivals: &Arrivals,
    patience: Duration,
    seen: impl Fn(&[(String, i64, Instant)]) -> Option<T>,
) -> anyhow::Result<T> {
    let deadline = Instant::now() + patience;
    loop {
        if let Some(found) = arrivals.lock().ok().and_then(|a| seen(&a)) {
            return Ok(found);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "nothing arrived within {patience:?}: is the receiver or the broker up (RUST_LOG=warn shows push's errors)?"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The id of the subscription push registered for the sink `target` (at its start).
async fn sink_subscription(lab: &Lab, target: &str) -> anyhow::Result<i64> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let id: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM webhook_subscriptions WHERE url = $1 AND cancelled_at IS NULL",
        )
        .bind(target)
        .fetch_optional(&lab.pool)
        .await?;
        if let Some(id) = id {
            return Ok(id);
        }
        anyhow::ensure!(Instant::now() < deadline, "push registered no subscription for {target}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the indexer has indexed block `head`.
async fn indexed(lab: &Lab, head: u64) -> anyhow::Result<()> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let at: Option<i64> = sqlx::query_scalar("SELECT block_number FROM checkpoints WHERE chain_id = $1")
            .bind(agentpact_schema::i64_of(lab.anvil.chain_id()))
            .fetch_optional(&lab.pool)
            .await?;
        if at.and_then(|b| u64::try_from(b).ok()).is_some_and(|b| b >= head) {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "the indexer did not reach block {head}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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
                record(&arrivals, &body, Instant::now());
                axum::http::StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base)
}

/// Records a delivery's `body` (its `txHash` and `subscriptionId`) as arrived `at`.
pub fn record(arrivals: &Arrivals, body: &[u8], at: Instant) {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        let tx = v["txHash"].as_str().unwrap_or_default().to_owned();
        let sub = v["subscriptionId"].as_i64().unwrap_or_default();
        if let Ok(mut a) = arrivals.lock() {
            a.push((tx, sub, at));
        }
    }
}
