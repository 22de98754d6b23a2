//! A benchmark's own world: the pinned anvil with the generated history on it, and an empty,
//! migrated database. Everything it started stops when it is dropped.

use std::time::Instant;

use crate::{
    local::{PrivateCluster, fresh_database, spawn_anvil},
    replay::{Amplified, Recording, Replay},
};
use agentpact_contracts::{AgentPact, Deployment};
use agentpact_indexer::{Config, Contracts, Indexer, Target};
use agentpact_schema::MIGRATOR;
use alloy::{
    node_bindings::AnvilInstance,
    primitives::{Address, TxHash, U256, keccak256},
    providers::{DynProvider, Provider, ProviderBuilder},
};
use sqlx::PgPool;

use super::{
    Workload,
    market::{ACCOUNTS, Crowd, Generated, Generator},
    parties::Parties,
};

/// The prefix of the database each benchmark (re)creates: `agentpact_bench_<benchmark>`, so
/// different benchmarks can run at once against one server.
const DATABASE: &str = "agentpact_bench";

/// Anvil, the contracts, the history and a database.
pub struct Lab {
    /// The node (killed on drop).
    pub anvil: AnvilInstance,
    /// Talks to the node, which signs for its dev accounts.
    pub provider: DynProvider,
    /// What indexers read: anvil itself, or the replay of its history amplified.
    pub source: DynProvider,
    /// The source's URL.
    pub source_url: String,
    /// The replay, when the history is served amplified.
    pub replay: Option<Replay>,
    /// Where the contracts are.
    pub deployment: Deployment,
    /// Which dev account plays which part outside the history (live pacts, the MCP wallet).
    pub cast: Crowd,
    /// The parties that played the history.
    pub parties: Parties,
    /// What the generator made.
    pub generated: Generated,
    /// The empty, migrated database.
    pub pool: PgPool,
    /// Its URL.
    pub database_url: String,
    _cluster: Option<PrivateCluster>,
}

impl Lab {
    /// Starts anvil, deploys, generates `workload`'s history and prepares the database of
    /// `benchmark` (`index`, `api`, …). With `copies` above 1, indexers read the history from the
    /// lab's replay (crate::replay) repeated `copies` times, renumbered, instead of from anvil.
    pub async fn open(workload: &Workload, benchmark: &str, copies: u64) -> anyhow::Result<Self> {
        // Without old states in memory: anvil otherwise keeps one per block and reaches gigabytes
        // (and crawls) within tens of thousands of pacts. Blocks, receipts and logs are kept.
        let anvil = spawn_anvil(|a| a.args(["--accounts", &ACCOUNTS.to_string(), "--prune-history"]))?;
        let provider = ProviderBuilder::new().connect_http(anvil.endpoint_url()).erased();
        let deployment = super::deploy_with_usdc(&anvil.endpoint_url(), anvil.addresses()).await?;
        let cast = Crowd::of(anvil.addresses())?;
        let started = Instant::now();
        let generator = Generator::start(provider.clone(), &deployment, cast.clone(), workload.seed).await?;
        let parties = generator.parties().clone();
        let generated = generator.run(workload.pacts, |_| {}).await?;
        let head = provider.get_block_number().await?;
        println!(
            "history: {} pacts (seed {}), {} steps in {} transactions in {head} blocks, generated in {:.1?}",
            workload.pacts,
            workload.seed,
            generated.steps,
            generated.transactions,
            started.elapsed()
        );
        let (replay, source_url) = if copies > 1 {
            let started = Instant::now();
            let amplified = Amplified::new(Recording::read(&provider).await?, &deployment, copies)?;
            println!(
                "amplified: {copies} copies, {} pacts in {} blocks (recorded and renumbered in {:.1?}), served by the lab's replay",
                amplified.pacts_per_copy() * copies,
                amplified.head() + 1,
                started.elapsed()
            );
            let replay = Replay::serve(amplified).await?;
            let url = replay.url.clone();
            (Some(replay), url)
        } else {
            (None, anvil.endpoint())
        };
        let source = ProviderBuilder::new().connect_http(source_url.parse()?).erased();
        let (database_url, cluster) =
            fresh_database(workload.database_url.as_deref(), &format!("{DATABASE}_{benchmark}")).await?;
        let pool = sqlx::postgres::PgPoolOptions::new().max_connections(16).connect(&database_url).await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self {
            anvil,
            provider,
            source,
            source_url,
            replay,
            deployment,
            cast,
            parties,
            generated,
            pool,
            database_url,
            _cluster: cluster,
        })
    }

    /// What the indexer follows.
    pub fn target(&self) -> Target {
        Target {
            chain_id: self.anvil.chain_id(),
            contracts: Contracts::from(&self.deployment),
            deployment_block: self.deployment.block,
        }
    }

    /// An indexer of the history into the database.
    pub fn indexer(&self, config: Config) -> Indexer<DynProvider> {
        Indexer::new(self.pool.clone(), self.source.clone(), self.target(), config)
    }

    /// How many times the history is served (1: anvil itself).
    pub fn copies(&self) -> u64 {
        self.replay.as_ref().map_or(1, |r| r.with_chain(Amplified::copies))
    }

    /// The reputation ranking's seeds: the history's first two buyers and first two sellers (2 %
    /// of its traders), as an operator names established agents of its market.
    pub fn seeds(&self) -> Vec<Address> {
        self.parties.buyers.iter().take(2).chain(self.parties.sellers.iter().take(2)).copied().collect()
    }

    /// The sellers of every copy of the history.
    pub fn sellers(&self) -> Vec<Address> {
        let Some(replay) = &self.replay else { return self.parties.sellers.clone() };
        replay.with_chain(|chain| {
            (0..chain.copies())
                .flat_map(|copy| self.parties.sellers.iter().map(move |s| chain.party(*s, copy)))
                .collect()
        })
    }

    /// Sends the creation of a pact by `buyer` (ETH, one oracle, due in a day) and returns its
    /// transaction's hash and a task that yields when its receipt appeared (its block mined): anvil
    /// answers the send before it has mined the block (hundreds of ms with a large state), so the
    /// receipt is polled every 5 ms.
    pub async fn send_live_pact(
        &self,
        buyer: Address,
    ) -> anyhow::Result<(TxHash, tokio::task::JoinHandle<anyhow::Result<Instant>>)> {
        let pact = AgentPact::new(self.deployment.agent_pact, self.provider.clone());
        let id = pact.pactCount().call().await?.to_string();
        let now =
            self.provider.get_block_by_number(Default::default()).await?.map_or(0, |b| b.header.timestamp);
        let payment = U256::from(1_000_000_000_000_000u64);
        let terms = AgentPact::Terms {
            initiator: agentpact_contracts::Initiator::Buyer.code(),
            specHash: keccak256(id.as_bytes()),
            specUri: format!("ipfs://bench/live/{id}"),
            deadline: now + 86_400,
            acceptBy: 0,
            reviewPeriod: 0,
            threshold: 50,
            arbitrator: self.cast.arbitrator,
            counterparty: Address::ZERO,
            currency: Address::ZERO,
            payment,
            oracles: vec![self.cast.oracles[0]],
            weights: vec![100],
        };
        agentpact_contracts::rules::check_terms(&terms, buyer, now)?;
        let pending = pact
            .createPact(terms)
            .from(buyer)
            .value(payment + agentpact_contracts::rules::stake(payment))
            .send()
            .await?;
        let (hash, provider) = (*pending.tx_hash(), self.provider.clone());
        let mined = tokio::spawn(async move {
            loop {
                if provider.get_transaction_receipt(hash).await?.is_some() {
                    return Ok(Instant::now());
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        });
        Ok((hash, mined))
    }

    /// `agentpact <subcommand>` (this very binary) pointed at the node, the contracts and the
    /// database as an operator would configure it and nothing more: no `MALLOC_MMAP_THRESHOLD_`
    /// (the binary fixes its own, cli/src/memory.rs), logging warnings unless `RUST_LOG` says
    /// otherwise; killed when dropped.
    pub fn command(&self, subcommand: &str) -> anyhow::Result<tokio::process::Command> {
        self.command_on(subcommand, None)
    }

    /// [`Lab::command`] under `taskset -c <cpus>` when `cpus` names some (`0-2`, `0,3`): the
    /// process keeps to them from its first instruction, so its runtime sizes itself to them as
    /// it would on a machine of that many cores.
    pub fn command_on(
        &self,
        subcommand: &str,
        cpus: Option<&str>,
    ) -> anyhow::Result<tokio::process::Command> {
        let d = self.deployment;
        let exe = std::env::current_exe()?;
        let mut command = match cpus {
            Some(cpus) => {
                let mut taskset = tokio::process::Command::new("taskset");
                taskset.args(["-c", cpus]).arg(exe);
                taskset
            }
            None => tokio::process::Command::new(exe),
        };
        command
            .arg(subcommand)
            .env("RPC_URL", &self.source_url)
            .env("CHAIN_ID", self.anvil.chain_id().to_string())
            .env("AGENT_PACT_ADDRESS", d.agent_pact.to_string())
            .env("ORACLE_REGISTRY_ADDRESS", d.oracle_registry.to_string())
            .env("AGENT_REGISTRY_ADDRESS", d.agent_registry.to_string())
            .env("DEPLOYMENT_BLOCK", d.block.to_string())
            .env("DATABASE_URL", &self.database_url)
            .env_remove("MALLOC_MMAP_THRESHOLD_")
            .kill_on_drop(true);
        // Quiet unless whoever runs the benchmark asked for more.
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", "warn");
        }
        Ok(command)
    }
}
