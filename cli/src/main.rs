//! `agentpact`: the one binary users run.
//!
//! Subcommands follow DESIGN.md: `dev`, `deploy`, `index`, `serve`, `mcp`, `migrate`. This is the
//! foundation release: the commands exist so their names and help are stable, and each says which
//! issue brings it until that issue lands.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// AgentPact: on-chain escrow for AI agents hiring each other.
#[derive(Debug, Parser)]
#[command(name = "agentpact", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, Subcommand)]
enum Command {
    /// Run the whole stack locally: anvil, contracts, Postgres, indexer, API and MCP.
    Dev,
    /// Deploy OracleRegistry and AgentPact and write deployments/<chain_id>.json.
    Deploy,
    /// Follow the contracts' events into Postgres.
    Index,
    /// Serve the GraphQL API.
    Serve,
    /// Serve the MCP tools to an agent (stdio by default).
    Mcp,
    /// Apply database migrations.
    Migrate,
}

impl Command {
    /// The issue that builds this command.
    const fn issue(self) -> u32 {
        match self {
            Self::Dev | Self::Deploy => 6,
            Self::Index | Self::Migrate => 3,
            Self::Serve => 4,
            Self::Mcp => 5,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    eprintln!(
        "agentpact {:?}: not yet — this command arrives with issue #{}. \
         The contracts and their tests are in place: see README.md.",
        cli.command,
        cli.command.issue()
    );
    ExitCode::from(2)
}
