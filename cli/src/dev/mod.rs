//! `agentpact dev`: the whole stack on this machine with nothing configured — the pinned anvil,
//! a test USDC, the contracts, our ERC-8004 registries, demo pacts in every status in ETH and in
//! USDC, a small market history in which reputations differ, Postgres, migrations, the indexer
//! (its ranking seeded with the market's anchors), the API and webhook delivery — and the
//! configuration an MCP client needs. Ctrl-C stops everything it started.

mod demo;
mod market;

use std::{path::PathBuf, time::Duration};

use agentpact_api::ServeConfig;
use agentpact_contracts::{DeployOptions, Deployment, deploy, erc8004::deploy_registries_at, rpc::RpcLimits};
use agentpact_indexer::{Config, Contracts, Indexer, Ranking, Target};
use agentpact_lab::{
    Cast,
    local::{fresh_database, spawn_anvil},
};
use agentpact_push::sink::{Broker, SinkConfig};
use agentpact_read::Reader;
use agentpact_schema::MIGRATOR;
use alloy::{
    hex,
    network::EthereumWallet,
    node_bindings::AnvilInstance,
    providers::{Provider, ProviderBuilder},
    signers::local::PrivateKeySigner,
};
use anyhow::{Context, bail};
use tokio::sync::watch;

use crate::signal;

/// The local chain's id (anvil's default).
const CHAIN_ID: u64 = 31_337;
/// The database the stack creates (and re-creates on every start) on a DATABASE_URL server.
const DATABASE: &str = "agentpact_dev";

/// Flags of `agentpact dev`.
#[derive(Debug, Clone, clap::Args)]
pub struct DevArgs {
    /// Port of the local chain's JSON-RPC.
    #[arg(long, env = "DEV_ANVIL_PORT", default_value_t = 8545)]
    anvil_port: u16,
    /// Port of the GraphQL API.
    #[arg(long, env = "DEV_API_PORT", default_value_t = 8080)]
    api_port: u16,
    /// A Postgres server to use instead of a private cluster; the stack (re)creates the
    /// database `agentpact_dev` on it, so point it at a development server only.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
    /// Where to write `31337.json` for `agentpact mcp` and `index` to read.
    #[arg(long, env = "DEPLOYMENTS_DIR", default_value = "deployments")]
    deployments_dir: PathBuf,
    /// Also publish every pact event to a broker running on this machine, with the default
    /// options (docs/push.md §Streams): nats (JetStream on 127.0.0.1:4222), redis
    /// (127.0.0.1:6379) or amqp (RabbitMQ on 127.0.0.1:5672 as guest). Repeat, or comma-separate,
    /// for several.
    #[arg(long = "sink", env = "DEV_SINKS", value_delimiter = ',', value_parser = ["nats", "redis", "amqp"])]
    sinks: Vec<String>,
}

/// The broker sinks of `names` on this machine's brokers, with the default options.
fn local_sinks(names: &[String]) -> anyhow::Result<Vec<SinkConfig>> {
    names
        .iter()
        .map(|name| {
            let broker = Broker::from_name(name).with_context(|| format!("no broker {name}"))?;
            let url = match broker {
                Broker::Nats => "nats://127.0.0.1:4222",
                Broker::Redis => "redis://127.0.0.1:6379/0",
                Broker::Amqp => "amqp://guest:guest@127.0.0.1:5672/%2f",
            };
            SinkConfig::parse(broker, url, "").map_err(anyhow::Error::msg)
        })
        .collect()
}

/// Runs the stack until Ctrl-C or SIGTERM.
pub async fn run(args: DevArgs) -> anyhow::Result<()> {
    for (port, flag) in [(args.anvil_port, "--anvil-port"), (args.api_port, "--api-port")] {
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_err() {
            bail!(
                "port {port} is in use (another stack, or a node?): stop it or pass {flag} with a free port"
            );
        }
    }
    let (database_url, cluster) = fresh_database(args.database_url.as_deref(), DATABASE).await?;
    // Twenty accounts: enough for `agentpact bench gen` to fill this chain too.
    let anvil =
        spawn_anvil(|anvil| anvil.port(args.anvil_port).chain_id(CHAIN_ID).args(["--accounts", "20"]))?;
    let (deployment, demo, market, mcp_key) = deploy_with_demo(&anvil, &args.deployments_dir).await?;
    let push_key = anvil.keys().get(PUSH_ACCOUNT).cloned().context("anvil has no tenth dev account")?;
    let push_key = PrivateKeySigner::from(push_key);
    let sinks = local_sinks(&args.sinks)?;

    let services = Services::new()?;
    let (stop, stopped) = watch::channel(false);
    let ranking = Ranking { seeds: market.anchors.clone(), every: Duration::ZERO };
    let start = start(
        anvil.endpoint_url(),
        database_url.clone(),
        deployment,
        ranking,
        args.api_port,
        (push_key, sinks),
        stopped,
    );
    let (running, reader) = services.run(start).await??;
    let standing = market.standing(&reader, CHAIN_ID).await.context("reading the market's scores")?;
    let deployments = std::fs::canonicalize(&args.deployments_dir).unwrap_or(args.deployments_dir.clone());
    print_welcome(&anvil, args.api_port, &database_url, &deployments, &demo, &standing, &mcp_key);
    signal::shutdown().await;
    eprintln!("agentpact dev: stopping");
    let _ = stop.send(true);
    for task in running {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    services.stop().await;
    drop(anvil); // kills the node
    drop(cluster); // stops and deletes the private cluster
    Ok(())
}

/// The runtime the stack's services (indexer, API, push) run on, apart from the one that started
/// them: stopping it ends every task they spawned (the API's notification listener among them)
/// and so closes every database connection before Postgres stops, which would otherwise warn of
/// each one it cut.
struct Services(Option<tokio::runtime::Runtime>);

impl Services {
    fn new() -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .thread_name("dev-services")
            .enable_all()
            .build()
            .context("starting the services' runtime")?;
        Ok(Self(Some(runtime)))
    }

    /// Runs `task` on this runtime; its result.
    async fn run<T: Send + 'static>(
        &self,
        task: impl std::future::Future<Output = T> + Send + 'static,
    ) -> anyhow::Result<T> {
        let runtime = self.0.as_ref().context("the services' runtime has stopped")?;
        runtime.spawn(task).await.context("the services' start panicked")
    }

    /// Stops every task left on it, waiting (at most 5 s) until they are gone.
    async fn stop(mut self) {
        if let Some(runtime) = self.0.take() {
            let _ =
                tokio::task::spawn_blocking(move || runtime.shutdown_timeout(Duration::from_secs(5))).await;
        }
    }
}

impl Drop for Services {
    /// On an early return: a runtime may not be dropped inside another's task, only let go.
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Migrates the database and starts the indexer (its reputation `ranking`), webhook delivery
/// (signed with `push_key`, to the broker `sinks` too) and the API on `api_port`, each until
/// `stopped`; returns once
/// everything up to the chain's head is indexed and ranked (so what is printed next is true), with
/// the three tasks and a reader of the index.
async fn start(
    rpc: alloy::transports::http::reqwest::Url,
    database_url: String,
    deployment: Deployment,
    ranking: Ranking,
    api_port: u16,
    (push_key, sinks): (PrivateKeySigner, Vec<SinkConfig>),
    stopped: watch::Receiver<bool>,
) -> anyhow::Result<([tokio::task::JoinHandle<()>; 3], Reader)> {
    let pool = sqlx::postgres::PgPoolOptions::new().max_connections(12).connect(&database_url).await?;
    MIGRATOR.run(&pool).await.context("applying migrations")?;
    let metrics = agentpact_indexer::Metrics::for_chain(CHAIN_ID);
    let reader = agentpact_indexer::transport::connect(rpc.clone(), &RpcLimits::default(), &metrics).await?;
    let target = Target {
        chain_id: CHAIN_ID,
        contracts: Contracts::from(&deployment),
        deployment_block: deployment.block,
    };
    let config = Config { poll_interval: Duration::from_millis(200), ..Config::default() };
    let until_stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stop| *stop).await;
    };
    let indexing = agentpact_indexer::run(
        Indexer::new(pool.clone(), reader, target, config).with_metrics(metrics).with_ranking(ranking),
        until_stopped(stopped.clone()),
    );
    let indexing = tokio::spawn(async move { drop(indexing.await) });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", api_port)).await?;
    let serve_config = ServeConfig {
        chain_id: CHAIN_ID,
        cors_origins: vec!["*".into()],
        ready_max_lag_blocks: 10,
        ready_max_silence: Duration::from_secs(30),
        ready_max_replica_lag_blocks: 2,
        rate_limit: None,
        negotiation: Default::default(),
        connections: Default::default(),
        block_wait: Duration::from_secs(5),
        operator: None,
    };
    let pushing = push(push_key, sinks, &database_url, until_stopped(stopped.clone())).await?;
    let pushing = tokio::spawn(async move { drop(pushing.await) });
    let reader = Reader::new(pool.clone());
    let databases = agentpact_read::Databases::single(pool);
    let serving = agentpact_api::serve(listener, databases, serve_config, until_stopped(stopped));
    let serving = tokio::spawn(async move { drop(serving.await) });

    let head = ProviderBuilder::new().connect_http(rpc).get_block_number().await?;
    agentpact_lab::wait_until_indexed(&reader, CHAIN_ID, head, Duration::from_secs(60)).await?;
    market::wait_until_ranked(&reader, CHAIN_ID, head, Duration::from_secs(60)).await?;
    Ok(([indexing, serving, pushing], reader))
}

/// Webhook delivery on the dev chain, signed by `key` (dev account 9's), with loopback targets open
/// (a local agent's receiver), and to `sinks`; its own pool, as `agentpact push` has. Returns the
/// delivery, to spawn.
async fn push(
    key: PrivateKeySigner,
    sinks: Vec<SinkConfig>,
    database_url: &str,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<impl std::future::Future<Output = Result<(), agentpact_push::PushError>> + Send + 'static>
{
    let config = agentpact_push::PushConfig {
        targets: agentpact_push::Targets::parse(LOOPBACK).map_err(anyhow::Error::msg)?,
        concurrency: 4,
        poll: Duration::from_millis(200),
        sinks,
        ..agentpact_push::PushConfig::new(CHAIN_ID)
    };
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(config.pool_size())
        .connect(database_url)
        .await?;
    let key = agentpact_push::sign::ServerKey::new(key);
    let metrics = agentpact_push::Metrics::for_chain(CHAIN_ID);
    Ok(agentpact_push::run(pool, config, key, metrics, shutdown))
}

/// The dev account whose key signs webhooks (anvil's public account 9: test use only).
const PUSH_ACCOUNT: usize = 9;
/// The ranges webhook targets may reach on the dev stack: this machine.
const LOOPBACK: &str = "127.0.0.0/8,::1/128";

/// Deploys from dev account 0 (the test USDC, the contracts and the ERC-8004 registries), runs the
/// demo, writes the deployments file (the registries in it, its block the earlier of the two
/// deployments'), plays the market history; returns the deployment, the demo's pacts, the market's
/// parties and the key the printed MCP configuration uses (dev account 1, the demo's buyer).
async fn deploy_with_demo(
    anvil: &AnvilInstance,
    dir: &std::path::Path,
) -> anyhow::Result<(Deployment, [demo::Made; 2], market::Market, String)> {
    let signers: Vec<PrivateKeySigner> = anvil.keys().iter().cloned().map(PrivateKeySigner::from).collect();
    let mut wallet = EthereumWallet::from(signers[0].clone());
    for signer in &signers[1..] {
        wallet.register_signer(signer.clone());
    }
    let provider = ProviderBuilder::new()
        .with_simple_nonce_management()
        .wallet(wallet)
        .connect_http(anvil.endpoint_url())
        .erased();
    let usdc = agentpact_lab::usdc::deploy_test_usdc(provider.clone(), anvil.addresses()).await?;
    let deployment =
        deploy(provider.clone(), DeployOptions { tokens: vec![usdc], ..DeployOptions::default() }).await?;
    // Our ERC-8004 registries (contracts/dev): anvil has no singletons to follow.
    let (erc8004, erc8004_block) =
        deploy_registries_at(&provider).await.context("deploying the ERC-8004 registries")?;
    let deployment =
        Deployment { erc8004: Some(erc8004), block: deployment.block.min(erc8004_block), ..deployment };
    let cast = Cast::of(anvil.addresses())?;
    let made = demo::run(&provider, &deployment, &cast, usdc).await.context("creating the demo pacts")?;
    let market = market::run(anvil, &deployment, cast.oracles[0], cast.arbitrator)
        .await
        .context("playing the market history")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join(format!("{CHAIN_ID}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(&deployment)? + "\n")
        .with_context(|| format!("writing {}", file.display()))?;
    Ok((deployment, made, market, format!("0x{}", hex::encode(signers[1].to_bytes()))))
}

fn print_welcome(
    anvil: &AnvilInstance,
    api_port: u16,
    database_url: &str,
    deployments: &std::path::Path,
    demo: &[demo::Made],
    standing: &market::Standing,
    key: &str,
) {
    let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "agentpact".into());
    let mcp = serde_json::json!({ "mcpServers": { "agent-pact": {
        "command": exe,
        "args": ["mcp", "--role", "full"],
        "env": {
            "PRIVATE_KEY": key,
            "RPC_URL": anvil.endpoint(),
            "CHAIN_ID": CHAIN_ID.to_string(),
            "DATABASE_URL": database_url,
            "DEPLOYMENTS_DIR": deployments.display().to_string(),
            "HIRE_RELAY_URL": format!("http://127.0.0.1:{api_port}/"),
            "WEBHOOK_ALLOW_TARGETS": LOOPBACK,
        }
    } } });
    println!(
        "Dashboard: http://127.0.0.1:{api_port}/   (open it in a browser)\n\
         \n\
         AgentPact dev stack is up (Ctrl-C stops it).\n\
         GraphQL: http://127.0.0.1:{api_port}/graphql   (POST queries; a query console in a browser)\n\
         Chain:   {} (chain id {CHAIN_ID}), contracts in {}/{CHAIN_ID}.json\n\
         Postgres: {database_url}\n\
         Demo: one pact in each status per currency, SPLIT twice (by a ruling, by a settlement):\n\
         {}\
         Oracles are dev accounts 4 and 5; the seller (account 2) is the agent DesignBot Pro,\n\
         offering logo-design for 5 USDC.\n\
         {}\
         Webhooks: delivered as agents subscribe (subscribe_webhook), signed by dev account {PUSH_ACCOUNT}\n\
         ({}); targets on this machine are allowed.\n\
         \n\
         Try:\n  curl -s http://127.0.0.1:{api_port}/graphql -H 'content-type: application/json' \\\n    \
         -d '{{\"query\":\"{{ stats {{ pacts byStatus {{ status count }} }} }}\"}}'\n  \
         curl -s http://127.0.0.1:{api_port}/graphql -H 'content-type: application/json' \\\n    \
         -d '{{\"query\":\"{{ searchAgents(capability: \\\"logo-design\\\") {{ edges {{ reputation node {{ name }} }} }} }}\"}}'\n\
         \n\
         MCP client configuration (Claude Desktop / Claude Code); the key is anvil's public dev\n\
         account 1, test ETH only, never for a real network:\n{}",
        anvil.endpoint(),
        deployments.display(),
        demo_lines(demo),
        standing,
        anvil.addresses().get(PUSH_ACCOUNT).map(ToString::to_string).unwrap_or_default(),
        serde_json::to_string_pretty(&mcp).unwrap_or_default()
    );
}

/// The banner's lines of demo pacts, one per currency: `  ETH: 0 NEGOTIATING, 1 FUNDED, …`.
fn demo_lines(demo: &[demo::Made]) -> String {
    demo.iter()
        .map(|made| {
            let pacts: Vec<String> = made.pacts.iter().map(|(id, status)| format!("{id} {status}")).collect();
            format!("  {}: {}\n", made.symbol, pacts.join(", "))
        })
        .collect()
}
