//! `agentpact bench index`: the backfill of a generated chain into an empty database (events/s,
//! time, peak memory, time by phase), checked against the history that was generated; then the
//! delay from a block being mined (its receipt appearing) to its pact change being committed, with
//! the indexer following the head.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use agentpact_contracts::{AgentPact, PactStatus};
use agentpact_indexer::{Config, PACT_CHANNEL, Ranking, metrics::Phase};
use agentpact_read::Reader;
use alloy::{primitives::U256, providers::Provider};
use anyhow::{Context, bail};

use super::{Amplification, Percentiles, Workload, lab::Lab, market::Fate, ms, peak_rss};

/// Flags of `agentpact bench index`.
#[derive(Debug, Clone, clap::Args)]
pub struct IndexArgs {
    #[command(flatten)]
    workload: Workload,
    #[command(flatten)]
    amplification: Amplification,
    /// The follower's poll interval while latency is measured, in milliseconds.
    #[arg(long, default_value_t = 100)]
    poll_ms: u64,
    /// Transactions whose latency is measured.
    #[arg(long, default_value_t = 100)]
    samples: u32,
}

/// Runs the benchmark and prints its figures.
pub async fn run(args: IndexArgs) -> anyhow::Result<()> {
    let lab = Lab::open(&args.workload, "index", args.amplification.copies).await?;
    backfill(&lab).await?;
    if lab.replay.is_some() {
        println!("live: not measured on an amplified history (its blocks are replayed, not mined)");
        return Ok(());
    }
    let delays = follow(&lab, Duration::from_millis(args.poll_ms), args.samples).await?;
    let p = Percentiles::of(&mut delays.clone()).context("no latency sample")?;
    println!(
        "live ({} ms poll, {} transactions): block mined -> committed p50 {}, p95 {}, p99 {}, max {}",
        args.poll_ms,
        delays.len(),
        ms(p.p50),
        ms(p.p95),
        ms(p.p99),
        ms(p.max)
    );
    Ok(())
}

/// Indexes the generated history into the empty database with `agentpact index` — this binary in
/// a process of its own, as deployed, with its default configuration and the lab's reputation
/// seeds ([`Lab::seeds`]) — timed from its start until its checkpoint reaches the head; prints
/// events/s, that process's peak RSS and its time by phase (from its `/metrics`); then waits for
/// the ranking run that follows (so what is read next has its scores) and prints what it cost;
/// and checks the index against the history.
pub(super) async fn backfill(lab: &Lab) -> anyhow::Result<()> {
    let head = lab.source.get_block_number().await?;
    let chain_id = lab.anvil.chain_id();
    let metrics_addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let started = Instant::now();
    let mut indexer = lab
        .command("index")?
        .env("METRICS_ADDR", metrics_addr.to_string())
        .env("REPUTATION_SEEDS", lab.seeds().iter().map(ToString::to_string).collect::<Vec<_>>().join(","))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting agentpact index")?;
    let pid = indexer.id().context("agentpact index exited at once")?;
    // Its checkpoint read every 5 ms (the timing's resolution), unless the process ends first.
    let reader = Reader::new(lab.pool.clone());
    let within = Duration::from_secs(3_600);
    tokio::select! {
        status = indexer.wait() => bail!("agentpact index stopped ({}) before reaching block {head}", status?),
        reached = reader.wait_until_indexed(chain_id, head, within, Duration::from_millis(5)) => {
            if !reached? {
                bail!("agentpact index did not reach block {head} within {within:?}");
            }
        }
    }
    let took = started.elapsed();
    let peak = peak_rss(pid);
    let metrics = reqwest::get(format!("http://{metrics_addr}/metrics")).await?.text().await?;
    let run = tokio::select! {
        status = indexer.wait() => bail!("agentpact index stopped ({}) before ranking block {head}", status?),
        run = ranked(&reader, chain_id, head, within) => run?,
    };
    let ready = started.elapsed().saturating_sub(took);
    let peak_ranked = peak_rss(pid);
    indexer.kill().await?;
    let events = metric(&metrics, "agentpact_indexer_events_total{").context("no event count in /metrics")?;
    println!(
        "backfill (agentpact index, its own process): {events} events in {took:.2?} = {:.0} events/s; peak RSS {}",
        events / took.as_secs_f64(),
        peak,
    );
    let phases: Vec<String> = Phase::ALL
        .iter()
        .map(|p| {
            let series = format!(
                "agentpact_indexer_phase_seconds_total{{chain_id=\"{chain_id}\",phase=\"{}\"}}",
                p.name()
            );
            let seconds = metric(&metrics, &series).unwrap_or(f64::NAN);
            format!("{} {seconds:.2}s", p.name())
        })
        .collect();
    println!("  time by phase (RPC overlaps writing): {}", phases.join(", "));
    println!(
        "  reputation ranking ({} seeds): {} nodes, {} edges, the run {} ms, its scores ready {ready:.2?} after the head; peak RSS then {peak_ranked}",
        run.seeds.len(),
        run.nodes,
        run.edges,
        run.took_ms
    );
    check_plan(lab).await
}

/// The ranking run that read block `head` on `chain_id`, once there is one (polled every 5 ms, at
/// most `within`).
async fn ranked(
    reader: &Reader,
    chain_id: u64,
    head: u64,
    within: Duration,
) -> anyhow::Result<agentpact_read::ReputationRun> {
    let started = Instant::now();
    loop {
        if let Some(run) = reader.reputation_run(chain_id).await?.filter(|run| run.block >= head) {
            return Ok(run);
        }
        if started.elapsed() > within {
            bail!("agentpact index did not rank block {head} within {within:?}");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The value of the first series in a Prometheus text exposition whose line starts with `prefix`.
fn metric(exposition: &str, prefix: &str) -> Option<f64> {
    exposition.lines().find(|l| l.starts_with(prefix))?.rsplit(' ').next()?.parse().ok()
}

/// Fails unless the index holds exactly what the generator planned, times the copies served:
/// pacts by status, and payments per currency completed and still open (a benchmark of a history
/// that went wrong would measure the wrong thing).
async fn check_plan(lab: &Lab) -> anyhow::Result<()> {
    use std::collections::BTreeMap;
    let copies = lab.copies();
    let mut planned: BTreeMap<PactStatus, u64> = BTreeMap::new();
    for (fate, n) in &lab.generated.fates {
        *planned.entry(status_of(*fate)).or_default() += *n as u64 * copies;
    }
    let mut volumes: BTreeMap<String, (U256, U256)> = BTreeMap::new();
    for ((fate, symbol), payment) in &lab.generated.payments {
        let (completed, open) = volumes.entry(symbol.clone()).or_default();
        match status_of(*fate) {
            PactStatus::Completed => *completed += *payment * U256::from(copies),
            PactStatus::Refunded => {}
            _ => *open += *payment * U256::from(copies),
        }
    }
    let stats = Reader::new(lab.pool.clone()).stats(lab.anvil.chain_id()).await?;
    let indexed: BTreeMap<PactStatus, u64> =
        stats.by_status.iter().filter(|s| s.count > 0).map(|s| (s.status, s.count)).collect();
    if planned != indexed {
        bail!("the index holds {indexed:?} but the generator made {planned:?}");
    }
    let indexed_volumes: BTreeMap<String, (U256, U256)> = stats
        .volumes
        .iter()
        .filter(|v| volumes.contains_key(&v.currency.symbol) || v.completed + v.open > U256::ZERO)
        .map(|v| (v.currency.symbol.clone(), (v.completed, v.open)))
        .collect();
    if volumes != indexed_volumes {
        bail!("the index holds volumes {indexed_volumes:?} but the generator paid {volumes:?}");
    }
    println!(
        "  checked: pacts by status and volumes per currency in the index equal the plan ({copies} x the generated history) {indexed:?}"
    );
    Ok(())
}

/// The status a fate ends in.
fn status_of(fate: Fate) -> PactStatus {
    match fate {
        Fate::Open => PactStatus::Negotiating,
        Fate::Funded => PactStatus::Funded,
        Fate::Started => PactStatus::InProgress,
        Fate::Submitted => PactStatus::PendingVerify,
        Fate::Verified => PactStatus::PendingApproval,
        Fate::Approved | Fate::SellerWinsDispute => PactStatus::Completed,
        Fate::FailedVerification | Fate::Rejected => PactStatus::Disputed,
        Fate::Cancelled | Fate::BuyerWinsDispute | Fate::TimedOut => PactStatus::Refunded,
        // A staged pact: two stages paid in full, one divided.
        Fate::SplitRuling | Fate::Settled | Fate::Staged => PactStatus::Split,
    }
}

/// With the indexer following the head, sends `samples` pact creations (automine) and measures from
/// each one's receipt appearing (its block mined) to its `pact_updated` notification (committed).
async fn follow(lab: &Lab, poll: Duration, samples: u32) -> anyhow::Result<Vec<Duration>> {
    // Ranking as `agentpact index` does by default (`--reputation-every 60`): at most one run
    // among the samples, inside a pass as deployed.
    let ranking = Ranking { seeds: lab.seeds(), every: Duration::from_secs(60) };
    let indexer = lab.indexer(Config { poll_interval: poll, ..Config::default() }).with_ranking(ranking);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let following = tokio::spawn(agentpact_indexer::run(indexer, async move {
        let _ = stopped.await;
    }));
    let mut listener = sqlx::postgres::PgListener::connect(&lab.database_url).await?;
    listener.listen(PACT_CHANNEL).await?;
    let pact = AgentPact::new(lab.deployment.agent_pact, lab.provider.clone());
    let poll_ms = u64::try_from(poll.as_millis()).unwrap_or(1_000).max(1);
    let mut delays = Vec::new();
    for i in 0..samples {
        let id = pact.pactCount().call().await?.to_string();
        let (_, mined) = lab.send_live_pact(lab.cast.buyers[0]).await?;
        loop {
            let note = tokio::time::timeout(Duration::from_secs(30), listener.recv())
                .await
                .context("no pact_updated within 30 s: the indexer stopped following")??;
            let changed: serde_json::Value = serde_json::from_str(note.payload()).unwrap_or_default();
            if changed["pactId"].as_str() == Some(id.as_str()) {
                break;
            }
        }
        let committed = Instant::now();
        let mined = mined.await.context("the receipt watcher panicked")??;
        delays.push(committed.saturating_duration_since(mined));
        // Land at a different point of the poll cycle each time.
        tokio::time::sleep(Duration::from_millis(u64::from(i) * 389 % poll_ms)).await;
    }
    let _ = stop.send(());
    let _ = following.await;
    Ok(delays)
}
