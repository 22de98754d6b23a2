//! `agentpact`: the one binary users run.
//!
//! Subcommands follow DESIGN.md: `dev`, `deploy`, `index`, `serve`, `push`, `mcp`, `wallet`, `migrate`, and `bench`
//! for the figures of BENCHMARKS.md.

mod database;
mod deploy;
mod dev;
mod index;
mod logging;
mod mcp;
mod memory;
mod progress;
mod push;
mod serve;
mod settings;
mod signal;
mod wallet;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// AgentPact: on-chain escrow for AI agents hiring each other.
#[derive(Debug, Parser)]
#[command(name = "agentpact", version)]
struct Cli {
    /// Log as JSON lines instead of text.
    #[arg(long, global = true, env = "LOG_JSON")]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole stack locally: anvil, contracts, demo pacts, Postgres, the indexer, the API
    /// with the dashboard, and webhook delivery.
    Dev(dev::DevArgs),
    /// Deploy OracleRegistry and AgentPact and write deployments/<chain_id>.json.
    Deploy(Box<deploy::DeployArgs>),
    /// Follow the contracts' events into Postgres.
    Index(index::IndexArgs),
    /// Serve the dashboard, the GraphQL API over the index and the negotiation relay.
    Serve(serve::ServeArgs),
    /// Deliver signed webhooks for pact events and clock alarms (docs/push.md).
    Push(Box<push::PushArgs>),
    /// Serve the MCP tools to an agent (stdio by default).
    Mcp(Box<mcp::McpArgs>),
    /// Create the database DATABASE_URL names when it does not exist, then apply the migrations.
    ///
    /// The first command to run on a new server: every other command that reads the database
    /// refuses a missing one and says to run this.
    Migrate(settings::DatabaseArgs),
    /// The human's controls of a wallet an agent signs with: its policy (budgets, counterparties,
    /// expiry), its kill switch and its ledger (docs/mcp.md §Policy).
    Wallet(wallet::WalletArgs),
    /// Generate load and measure the indexer, the API, the MCP server, the relay and webhooks
    /// (BENCHMARKS.md).
    Bench(agentpact_lab::bench::BenchArgs),
}

fn main() -> ExitCode {
    // First, before the runtime starts its threads: this may replace the process (memory.rs says
    // why). Before `.env` is read, so the replacement's initial environment (what
    // /proc/<pid>/environ shows) holds no secret that only the file had.
    memory::fix_mmap_threshold();
    let _ = dotenvy::dotenv();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("agentpact: could not start the async runtime: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_json);
    let result = match cli.command {
        Command::Index(args) => index::run(args).await,
        Command::Serve(args) => serve::run(args).await,
        Command::Push(args) => push::run(*args).await,
        Command::Migrate(args) => migrate(args).await,
        Command::Deploy(args) => deploy::run(*args).await,
        Command::Dev(args) => dev::run(args).await,
        Command::Mcp(args) => mcp::run(*args).await,
        Command::Wallet(args) => wallet::run(args).await,
        Command::Bench(args) => agentpact_lab::bench::run(args).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agentpact: {}", agentpact_contracts::rpc::with_causes(e.as_ref()));
            ExitCode::from(2)
        }
    }
}

async fn migrate(args: settings::DatabaseArgs) -> anyhow::Result<()> {
    database::migrated(&args, 1).await?;
    tracing::info!("migrations applied");
    Ok(())
}
