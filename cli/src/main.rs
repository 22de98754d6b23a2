//! `agentpact`: the one binary users run.
//!
//! Subcommands follow DESIGN.md: `dev`, `deploy`, `index`, `serve`, `mcp`, `migrate`. Those not
//! built yet say which issue brings them.

mod index;
mod logging;
mod progress;
mod settings;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// AgentPact: on-chain escrow for AI agents hiring each other.
#[derive(Debug, Parser)]
#[command(name = "agentpact", version, about)]
struct Cli {
    /// Log as JSON lines instead of text.
    #[arg(long, global = true, env = "LOG_JSON")]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole stack locally: anvil, contracts, Postgres, indexer, API and MCP.
    Dev,
    /// Deploy OracleRegistry and AgentPact and write deployments/<chain_id>.json.
    Deploy,
    /// Follow the contracts' events into Postgres.
    Index(index::IndexArgs),
    /// Serve the GraphQL API.
    Serve,
    /// Serve the MCP tools to an agent (stdio by default).
    Mcp,
    /// Apply database migrations.
    Migrate(settings::DatabaseArgs),
}

#[tokio::main]
async fn main() -> ExitCode {
    let _ = dotenvy::dotenv();
    let cli = Cli::parse();
    logging::init(cli.log_json);
    let result = match cli.command {
        Command::Index(args) => index::run(args).await,
        Command::Migrate(database) => migrate(database).await,
        Command::Dev | Command::Deploy => not_yet("dev/deploy", 6),
        Command::Serve => not_yet("serve", 4),
        Command::Mcp => not_yet("mcp", 5),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agentpact: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn migrate(database: settings::DatabaseArgs) -> anyhow::Result<()> {
    let pool = database.connect(1).await?;
    agentpact_indexer::MIGRATOR.run(&pool).await?;
    tracing::info!("migrations applied");
    Ok(())
}

fn not_yet(command: &str, issue: u32) -> anyhow::Result<()> {
    anyhow::bail!(
        "`{command}` is not built yet; it arrives with issue #{issue}. See README.md for what works today."
    )
}
