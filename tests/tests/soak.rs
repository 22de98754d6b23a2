//! The whole stack under fire: agents drive random pact lifecycles through the MCP server while a
//! chaos loop kills and restarts the indexer, terminates its database sessions and reorganises
//! the chain, with the indexer's RPC slow (0-30 ms a request) and failing every few requests
//! through a proxy. At the end the index must equal a fresh index of the canonical chain, and
//! every pact must read as the contract holds it.
//!
//! CI runs the short version; `scripts/soak <seconds>` runs the long one. The seed is printed;
//! rerun one with `AGENTPACT_SEED=<seed>`.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use agentpact_indexer::{Config, Indexer};
use agentpact_mcp::{Role, WriteLimits};
use agentpact_tests::{
    HarnessError,
    index::{assert_index_matches_chain, checkpoint_block, dump, fresh_dump, small_ranges, target},
    mcp::{TestAgent, test_limits},
    pacts::Market,
    postgres::TestDatabase,
    rpc_proxy::{Faults, FaultyRpc},
};
use alloy::{
    primitives::U256,
    providers::{DynProvider, Provider},
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

#[derive(Default)]
struct Tally {
    lifecycles: AtomicU64,
    completed: AtomicU64,
    calls: AtomicU64,
    refused: AtomicU64,
    restarts: AtomicU64,
    terminations: AtomicU64,
    reorgs: AtomicU64,
}

#[tokio::test]
async fn soak_short() -> Result {
    soak(Duration::from_secs(8)).await
}

#[tokio::test]
#[ignore = "long: run with scripts/soak <seconds>"]
async fn soak_long() -> Result {
    let seconds = std::env::var("SOAK_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    soak(Duration::from_secs(seconds)).await
}

async fn soak(length: Duration) -> Result {
    let seed = std::env::var("AGENTPACT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    eprintln!("soak: seed {seed} (AGENTPACT_SEED={seed} reruns it), {length:?}");
    let m = Arc::new(Market::open().await?);
    let db = Arc::new(TestDatabase::create().await?);
    let proxy = FaultyRpc::start(
        m.chain.provider.clone(),
        Faults { fail_every: Some(9), latency_ms: Some((0, 30)), ..Faults::default() },
    )
    .await?;
    let metrics = agentpact_indexer::Metrics::for_chain(m.chain.anvil.chain_id());
    let through: DynProvider = agentpact_indexer::transport::connect(
        proxy.url().parse().map_err(|e| HarnessError::Process(format!("{e}")))?,
        &agentpact_contracts::rpc::RpcLimits::default(),
        &metrics,
    )
    .await
    .map_err(|e| HarnessError::Process(e.to_string()))?;
    let config = Config {
        poll_interval: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
        ..small_ranges()
    };
    let start_indexer = {
        let (db, m) = (db.clone(), m.clone());
        move || {
            let ix = Indexer::new(db.pool().clone(), through.clone(), target(&m.chain), config)
                .with_metrics(metrics.clone());
            tokio::spawn(async move {
                let _ = agentpact_indexer::run(ix, std::future::pending()).await;
            })
        }
    };
    let mut indexer = start_indexer();

    let limits = WriteLimits { index_wait: Duration::from_millis(300), ..test_limits() };
    let agent = |n, role| TestAgent::start(&m.chain, &db, n, role, limits);
    let agents = Arc::new([
        agent(1, Role::Seeker).await?,
        agent(2, Role::Worker).await?,
        agent(4, Role::Oracle).await?,
        agent(5, Role::Oracle).await?,
    ]);
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    // anvil snapshots and reverts are only consistent between blocks: no tool call may be sending
    // while one is taken (a snapshot racing a mined block leaves logs the state does not have).
    let gate = Arc::new(tokio::sync::RwLock::new(()));
    let trading =
        tokio::spawn(trade(m.clone(), agents.clone(), tally.clone(), stop.clone(), gate.clone(), seed));

    let mut rng = StdRng::seed_from_u64(seed ^ 0xc4a05);
    // The chaos lasts `length`, and longer (up to ten times) until a lifecycle has completed under
    // it: on a loaded machine a few seconds may not see one through.
    let start = Instant::now();
    let ran_long_enough = || start.elapsed() >= length && tally.completed.load(Ordering::Relaxed) > 0;
    while !ran_long_enough() && start.elapsed() < length * 10 {
        tokio::time::sleep(Duration::from_millis(rng.random_range(200..600))).await;
        match rng.random_range(0..3) {
            0 => {
                indexer.abort(); // as SIGKILL: mid-batch, no cleanup
                indexer = start_indexer();
                tally.restarts.fetch_add(1, Ordering::Relaxed);
            }
            1 => {
                sqlx::query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                )
                .execute(db.pool())
                .await?;
                tally.terminations.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                let snapshot: U256 = {
                    let _quiet = gate.write().await;
                    m.chain.provider.raw_request("evm_snapshot".into(), ()).await?
                };
                tokio::time::sleep(Duration::from_millis(rng.random_range(100..400))).await;
                let reverted: bool = {
                    let _quiet = gate.write().await;
                    m.chain.provider.raw_request("evm_revert".into(), (snapshot,)).await?
                };
                if reverted {
                    tally.reorgs.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    trading.await.map_err(|e| HarnessError::Process(e.to_string()))??;
    indexer.abort();
    // Past the last revert's height, so the indexer sees the last reorg as a fork, not a lagging node.
    let checkpoint = u64::try_from(checkpoint_block(db.pool()).await?).unwrap_or(0);
    let head = m.chain.provider.get_block_number().await?;
    let _: Value = m
        .chain
        .provider
        .raw_request("anvil_mine".into(), (U256::from(checkpoint.saturating_sub(head) + 1),))
        .await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;

    let t = |c: &AtomicU64| c.load(Ordering::Relaxed);
    eprintln!(
        "soak: {} lifecycles ({} completed), {} tool calls ({} refused); survived {} indexer kills, \
         {} database session terminations, {} reorgs, {} injected RPC errors",
        t(&tally.lifecycles),
        t(&tally.completed),
        t(&tally.calls),
        t(&tally.refused),
        t(&tally.restarts),
        t(&tally.terminations),
        t(&tally.reorgs),
        proxy.failed()
    );
    assert!(t(&tally.completed) > 0, "no lifecycle completed: the soak exercised nothing");
    assert!(t(&tally.restarts) + t(&tally.terminations) + t(&tally.reorgs) > 0, "no fault was injected");
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?, "the index differs from a fresh one");
    assert_index_matches_chain(&m.chain, db.pool()).await?;
    Ok(())
}

/// Seconds since the epoch by this machine's clock, which anvil's follows. (Asking the node races
/// the chaos loop's reverts.)
fn wall_clock() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Random lifecycles until told to stop, each cut short at a random step. Refusals are expected
/// (a reorg can undo a pact under an agent's feet) and counted.
async fn trade(
    m: Arc<Market>,
    agents: Arc<[TestAgent; 4]>,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
    gate: Arc<tokio::sync::RwLock<()>>,
    seed: u64,
) -> Result {
    let mut rng = StdRng::seed_from_u64(seed);
    let [buyer, seller, oracle_a, oracle_b] = &*agents;
    let c = &m.cast;
    while !stop.load(Ordering::Relaxed) {
        // Every third lifecycle runs to the end and is approved; the others stop at a random step.
        let n = tally.lifecycles.fetch_add(1, Ordering::Relaxed);
        let whole = n.is_multiple_of(3);
        let steps = if whole { 9 } else { rng.random_range(1..=9) };
        let verdict = if whole || rng.random_bool(0.8) { "approve-work" } else { "reject-work" };
        let terms = json!({
            "role": "buyer", "specHash": "QmSoak", "deadline": wall_clock() + 30 * 86_400,
            "oracles": [c.oracles[0].to_string(), c.oracles[1].to_string()], "oracleWeights": [50, 50],
            "threshold": 50, "paymentEth": "0.01", "arbitrator": c.arbitrator.to_string(),
        });
        let call = |agent: &'static str, tool: &'static str, args: Value| (agent, tool, args);
        let created = {
            let _sending = gate.read().await;
            buyer.call("create-pact", terms).await?
        };
        tally.calls.fetch_add(1, Ordering::Relaxed);
        let Some(id) = created.data["pactId"].as_str().and_then(|s| s.parse::<u64>().ok()) else {
            tally.refused.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let proof = format!("0x{}", "5a".repeat(32));
        let plan = [
            call("seller", "accept-pact", json!({ "pactId": id })),
            call("seller", "start-work", json!({ "pactId": id })),
            call("seller", "submit-work", json!({ "pactId": id, "proofHash": proof })),
            call("oracle_a", "submit-verification", json!({ "pactId": id, "score": 80, "proof": proof })),
            call("oracle_b", "submit-verification", json!({ "pactId": id, "score": 60, "proof": proof })),
            call("oracle_a", "finalize-verification", json!({ "pactId": id })),
            call("buyer", verdict, json!({ "pactId": id })),
            call("seller", "withdraw", json!({})),
        ];
        for (who, tool, args) in plan.into_iter().take(steps - 1) {
            let agent = match who {
                "buyer" => buyer,
                "seller" => seller,
                "oracle_a" => oracle_a,
                _ => oracle_b,
            };
            let reply = {
                let _sending = gate.read().await;
                agent.call(tool, args).await?
            };
            tally.calls.fetch_add(1, Ordering::Relaxed);
            if reply.is_error {
                tally.refused.fetch_add(1, Ordering::Relaxed);
                break;
            }
            if tool == "approve-work" {
                tally.completed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    Ok(())
}
