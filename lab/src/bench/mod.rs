//! `agentpact bench`: reproducible load and the figures of BENCHMARKS.md. `gen` fills a running
//! anvil; `index`, `api`, `mcp`, `relay` and `push` each start their own anvil and database, generate the same
//! history for the same seed, and print what they measured; `reputation` writes a market's
//! reputation pairs straight into a database and times the ranking over them. Benchmarks measure;
//! tests assert.

mod api;
mod generate;
mod index;
mod lab;
mod load;
mod market;
mod mcp;
mod parties;
mod push;
mod relay;
mod reputation;
mod streams;

use std::time::Duration;

use clap::Subcommand;

/// Flags of `agentpact bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Fill a running anvil with pacts in a realistic mix of lifecycles.
    Gen(generate::GenArgs),
    /// Backfill a generated chain into an empty database, then measure follow latency.
    Index(index::IndexArgs),
    /// Requests/s and latency of the GraphQL API over a generated, indexed chain.
    Api(api::ApiArgs),
    /// The load generator `api` runs in another process: request bodies from a file, in a loop.
    Load(load::LoadArgs),
    /// The MCP server's own cost per read tool, and a whole lifecycle through the stdio binary.
    Mcp(mcp::McpBenchArgs),
    /// The negotiation relay: send-to-subscription latency and messages/s.
    Relay(relay::RelayArgs),
    /// Webhooks at 10,000 subscriptions, or a broker sink (`--sink nats|redis|amqp`): block mined
    /// to webhook received (or message consumed), and deliveries/s (or events/s).
    Push(push::PushArgs),
    /// The reputation ranking (one generation: read the pairs, rank, write) at 10k, 100k and 1M pacts.
    Reputation(reputation::ReputationArgs),
}

/// Runs the chosen benchmark.
pub async fn run(args: BenchArgs) -> anyhow::Result<()> {
    match args.command {
        BenchCommand::Gen(args) => generate::run(args).await,
        BenchCommand::Index(args) => index::run(args).await,
        BenchCommand::Api(args) => api::run(args).await,
        BenchCommand::Load(args) => load::run(args).await,
        BenchCommand::Mcp(args) => mcp::run(args).await,
        BenchCommand::Relay(args) => relay::run(args).await,
        BenchCommand::Push(args) => push::run(args).await,
        BenchCommand::Reputation(args) => reputation::run(args).await,
    }
}

/// The history a benchmark runs on.
#[derive(Debug, Clone, clap::Args)]
pub struct Workload {
    /// Pacts to generate.
    #[arg(long, default_value_t = 10_000)]
    pacts: usize,
    /// Seed of the generator: the same seed gives the same history.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A Postgres server to create the benchmark's database on (it is dropped and re-created);
    /// without it, a private cluster.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
}

/// A provider that fills nothing in: the node (anvil) picks the sender (its first account), the
/// nonce and the gas of what is sent through it. Deploys through it need no key. `url` may be
/// http(s) or ws(s).
async fn node_signed(
    url: &alloy::transports::http::reqwest::Url,
) -> anyhow::Result<alloy::providers::DynProvider> {
    use alloy::providers::{Provider, ProviderBuilder};
    let client = agentpact_contracts::rpc::client(url.clone(), &Default::default()).await?;
    Ok(ProviderBuilder::default().connect_client(client).erased())
}

/// Deploys a test USDC minted to `holders`, then the contracts with it allowed, through the
/// node's own signing: the generated market settles in ETH and in USDC.
async fn deploy_with_usdc(
    url: &alloy::transports::http::reqwest::Url,
    holders: &[alloy::primitives::Address],
) -> anyhow::Result<agentpact_contracts::Deployment> {
    let provider = node_signed(url).await?;
    let usdc = crate::usdc::deploy_test_usdc(provider.clone(), holders).await?;
    let options = agentpact_contracts::DeployOptions { tokens: vec![usdc], ..Default::default() };
    Ok(agentpact_contracts::deploy(provider, options).await?)
}

/// How many times the generated history is indexed: `--copies 10` of `--pacts 100000` is a
/// million pacts, served by the lab's replay (crate::replay: every event one the contracts
/// emitted, pact ids, parties, blocks, times and hashes renumbered per copy); 1 is anvil itself.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Amplification {
    /// Copies of the history the indexer reads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    copies: u64,
}

/// Latency percentiles of a sample.
#[derive(Debug, Clone, Copy)]
struct Percentiles {
    p50: Duration,
    p95: Duration,
    p99: Duration,
    max: Duration,
}

impl Percentiles {
    /// The percentiles of `samples` (sorted here); `None` when there are none.
    fn of(samples: &mut [Duration]) -> Option<Self> {
        samples.sort_unstable();
        let at = |q: f64| {
            let last = samples.len().checked_sub(1)?;
            samples.get(((last as f64) * q).round() as usize).copied()
        };
        Some(Self { p50: at(0.5)?, p95: at(0.95)?, p99: at(0.99)?, max: at(1.0)? })
    }
}

/// Milliseconds with two decimals, for tables.
fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// The peak resident memory of process `pid` as the benchmarks print it: `N MiB`, or `unknown`
/// where `/proc` cannot tell.
fn peak_rss(pid: u32) -> String {
    peak_rss_mib(pid).map_or_else(|| "unknown".into(), |m| format!("{m:.0} MiB"))
}

/// The peak resident memory of process `pid` (`VmHWM` in `/proc/<pid>/status`), in MiB (Linux).
fn peak_rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}
