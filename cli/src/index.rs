//! `agentpact index`: follow the contracts' events into Postgres until interrupted.

use std::{net::SocketAddr, time::Duration};

use agentpact_indexer::{Config, Indexer, Metrics, Target};
use alloy::providers::Provider;
use anyhow::{Context, bail};

use crate::{
    database, progress,
    settings::{ChainArgs, DatabaseArgs, RankingArgs},
    signal,
};

/// Flags of `agentpact index`.
#[derive(Debug, Clone, clap::Args)]
pub struct IndexArgs {
    #[command(flatten)]
    chain: ChainArgs,
    #[command(flatten)]
    database: DatabaseArgs,
    #[command(flatten)]
    ranking: RankingArgs,
    /// Blocks below head minus this are taken as final (no reorg reaches them).
    #[arg(long, env = "FINALITY_DEPTH", default_value_t = Config::default().finality_depth)]
    finality_depth: u64,
    /// How often to ask the RPC for a new head, in milliseconds.
    #[arg(long, env = "POLL_INTERVAL_MS", default_value_t = 1000)]
    poll_interval_ms: u64,
    /// Put off secondary indexes and flat counts while a pass starts at least this many blocks
    /// behind the head with more blocks to go than already indexed (1: any such pass); they are
    /// built when the head is reached (docs/indexer.md §Deferred upkeep). 0: never.
    #[arg(long, env = "DEFER_UPKEEP_BEHIND", default_value_t = agentpact_indexer::config::DEFER_UPKEEP_BEHIND)]
    defer_upkeep_behind: u64,
    /// Read the ERC-8004 registries from this block on, before the deployment block, so agents
    /// registered before the escrow was deployed are seen (the blocks before the deployment are
    /// read for the registries only). Default: the deployment block. Fixed for an index once it
    /// is built (docs/indexer.md §ERC-8004 start block).
    #[arg(long, env = "ERC8004_START_BLOCK")]
    erc8004_start_block: Option<u64>,
    /// Where to serve Prometheus metrics (GET /metrics).
    #[arg(long, env = "METRICS_ADDR", default_value = "127.0.0.1:9464")]
    metrics_addr: SocketAddr,
}

/// Runs the indexer until Ctrl-C (or SIGTERM); an error that needs a person ends it.
pub async fn run(args: IndexArgs) -> anyhow::Result<()> {
    let target = args.chain.target()?;
    let erc8004_start = erc8004_start(&target, args.erc8004_start_block)?;
    let metrics = Metrics::for_chain(target.chain_id);
    let (url, limits) = (args.chain.rpc_url()?, args.chain.rpc.limits());
    let provider = agentpact_indexer::transport::connect(url.clone(), &limits, &metrics).await?;
    let heads = agentpact_indexer::transport::head_source(&url, &limits).await?;
    let served =
        provider.get_chain_id().await.context("asking RPC_URL for its chain id (is the node up?)")?;
    if served != target.chain_id {
        bail!(
            "RPC_URL serves chain {served}, but CHAIN_ID is {}: point them at the same chain",
            target.chain_id
        );
    }
    let pool = database::migrated(&args.database, 4).await?;

    let config = Config {
        finality_depth: args.finality_depth,
        poll_interval: Duration::from_millis(args.poll_interval_ms.max(10)),
        defer_upkeep_behind: (args.defer_upkeep_behind > 0).then_some(args.defer_upkeep_behind),
        ..Config::default()
    };
    let indexer = Indexer::new(pool, provider, target, config)
        .with_erc8004_start(erc8004_start)
        .with_metrics(metrics)
        .with_heads(heads)
        .with_ranking(args.ranking.ranking());
    let listener = tokio::net::TcpListener::bind(args.metrics_addr)
        .await
        .with_context(|| format!("binding the metrics address {} (METRICS_ADDR)", args.metrics_addr))?;
    let metrics = indexer.metrics();
    tokio::spawn(agentpact_http::metrics::serve(listener, move || metrics.render()));
    tokio::spawn(progress::report(indexer.metrics()));
    tracing::info!(chain_id = target.chain_id, agent_pact = %target.contracts.agent_pact, metrics = %args.metrics_addr, "indexing");
    agentpact_indexer::run(indexer, signal::shutdown()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// The first block of the ERC-8004 registries' logs: `asked` (`ERC8004_START_BLOCK`) or the
/// deployment block. Refused when it cannot mean what it says: no registries are followed, or it
/// is after the deployment block (everything is read from there anyway).
fn erc8004_start(target: &Target, asked: Option<u64>) -> anyhow::Result<u64> {
    let deployment = target.deployment_block;
    let Some(block) = asked else { return Ok(deployment) };
    if target.contracts.erc8004.is_none() {
        bail!(
            "ERC8004_START_BLOCK is {block}, but no ERC-8004 registries are followed on chain {}: set \
             ERC8004_IDENTITY_ADDRESS and ERC8004_REPUTATION_ADDRESS, or unset ERC8004_START_BLOCK",
            target.chain_id
        );
    }
    if block > deployment {
        bail!(
            "ERC8004_START_BLOCK is {block}, after the deployment block {deployment} that every contract \
             is read from anyway: give an earlier block, or unset ERC8004_START_BLOCK"
        );
    }
    Ok(block)
}
