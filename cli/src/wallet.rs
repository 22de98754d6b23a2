//! `agentpact wallet`: the human's controls of a wallet an agent signs with through `agentpact
//! mcp` (docs/mcp.md §Policy) — its policy, its kill switch, its ledger. These commands need the
//! database the MCP servers use (DATABASE_URL), never the wallet's key: no agent, and no tool,
//! runs them.

use std::path::PathBuf;

use agentpact_mcp::policy::{rules::Policy, store};
use alloy::primitives::Address;
use anyhow::{Context, bail};

use crate::{database, settings::DatabaseArgs};

/// The human's controls of a wallet.
#[derive(Debug, clap::Args)]
pub struct WalletArgs {
    #[command(subcommand)]
    command: WalletCommand,
    #[command(flatten)]
    database: DatabaseArgs,
}

#[derive(Debug, clap::Subcommand)]
enum WalletCommand {
    /// Set, show or clear the policy every `agentpact mcp` process holds the wallet to.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Stop all signing for the wallet in every process: returns once a send in flight has
    /// finished and none can follow; each agent's next call is refused (FORBIDDEN) until `thaw`.
    Freeze {
        #[command(flatten)]
        wallet: WalletId,
        /// Why, as the agents' refusals will say it.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Lift the kill switch.
    Thaw {
        #[command(flatten)]
        wallet: WalletId,
    },
    /// Print the wallet's ledger as JSON lines ({"body", "hash", "signature"}), oldest first;
    /// `scripts/verify-ledger.py` checks such a file offline.
    Ledger {
        #[command(flatten)]
        wallet: WalletId,
    },
}

#[derive(Debug, clap::Subcommand)]
enum PolicyCommand {
    /// Set the policy in FILE (TOML; it names its wallet and chain) in place of any before it.
    Set {
        /// The policy file.
        file: PathBuf,
    },
    /// Print the policy set for the wallet, as stored (JSON), and whether it is frozen.
    Show {
        #[command(flatten)]
        wallet: WalletId,
    },
    /// Remove the wallet's policy: only the per-call caps and the kill switch hold it then.
    Clear {
        #[command(flatten)]
        wallet: WalletId,
    },
}

/// Which wallet, on which chain.
#[derive(Debug, clap::Args)]
struct WalletId {
    /// The wallet's address.
    #[arg(long)]
    wallet: Address,
    /// The chain.
    #[arg(long, env = "CHAIN_ID", default_value_t = 84532)]
    chain_id: u64,
}

/// Runs the command.
pub async fn run(args: WalletArgs) -> anyhow::Result<()> {
    let pool = database::connect(&args.database, 2).await?;
    match args.command {
        WalletCommand::Policy(PolicyCommand::Set { file }) => {
            let policy = read_policy(&file)?;
            let mut known = agentpact_read::Reader::new(pool.clone())
                .currencies(policy.chain_id)
                .await
                .context("reading the currencies the escrow takes")?;
            if !known.iter().any(|c| c.address.is_zero()) {
                known.insert(0, agentpact_read::Currency::eth());
            }
            if let Err(why) = policy.check_currencies(&known) {
                bail!("{}: {why}", file.display());
            }
            let digest = store::set_policy(&pool, &policy).await.context("storing the policy")?;
            println!(
                "policy {digest} set for wallet {} on chain {}: every agentpact mcp process holds it from its next call",
                policy.wallet, policy.chain_id
            );
        }
        WalletCommand::Policy(PolicyCommand::Show { wallet }) => {
            let controls =
                store::read(&pool, wallet.chain_id, wallet.wallet).await.context("reading the policy")?;
            let shown = serde_json::json!({
                "wallet": wallet.wallet,
                "chainId": wallet.chain_id,
                "policy": controls.policy,
                "policyDigest": controls.digest,
                "frozen": controls.frozen.map(|f| serde_json::json!({ "at": f.at.to_rfc3339(), "reason": f.reason })),
            });
            println!("{}", serde_json::to_string_pretty(&shown)?);
        }
        WalletCommand::Policy(PolicyCommand::Clear { wallet }) => {
            let cleared = store::clear_policy(&pool, wallet.chain_id, wallet.wallet).await?;
            println!("{}", if cleared { "policy cleared" } else { "the wallet had no policy" });
        }
        WalletCommand::Freeze { wallet, reason } => {
            let at = store::set_frozen(
                &pool,
                wallet.chain_id,
                wallet.wallet,
                Some(reason.as_deref().unwrap_or("")),
            )
            .await
            .context("turning the kill switch on")?;
            println!(
                "wallet {} frozen at {}: no agentpact mcp process signs for it until `agentpact wallet thaw --wallet {}`",
                wallet.wallet,
                at.to_rfc3339(),
                wallet.wallet
            );
        }
        WalletCommand::Thaw { wallet } => {
            store::set_frozen(&pool, wallet.chain_id, wallet.wallet, None)
                .await
                .context("lifting the kill switch")?;
            println!("wallet {} thawed: signing resumes under its policy", wallet.wallet);
        }
        WalletCommand::Ledger { wallet } => print_ledger(&pool, &wallet).await?,
    }
    Ok(())
}

/// The policy in `file`, checked.
fn read_policy(file: &PathBuf) -> anyhow::Result<Policy> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("reading the policy file {}", file.display()))?;
    let policy: Policy = toml::from_str(&text)
        .with_context(|| format!("{} is not a policy (docs/mcp.md §Policy shows one)", file.display()))?;
    if let Err(why) = policy.check(&agentpact_mcp::policy::tool_names()) {
        bail!("{}: {why}", file.display());
    }
    Ok(policy)
}

/// Prints the ledger of `wallet` as JSON lines, a page at a time.
async fn print_ledger(pool: &sqlx::PgPool, wallet: &WalletId) -> anyhow::Result<()> {
    use std::io::Write;
    const PAGE: i64 = 1000;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut from = 1;
    loop {
        let from_entry = agentpact_read::wallet_ledger::From::Entry(from);
        let entries =
            agentpact_read::wallet_ledger::entries(pool, wallet.chain_id, wallet.wallet, from_entry, PAGE)
                .await?;
        for entry in &entries {
            let line = serde_json::json!({
                "body": entry.body,
                "hash": entry.hash,
                "signature": format!("0x{}", alloy::hex::encode(&entry.signature)),
            });
            writeln!(out, "{line}")?;
        }
        match entries.last() {
            Some(last) if entries.len() as i64 == PAGE => from = last.seq + 1,
            _ => break,
        }
    }
    out.flush()?;
    Ok(())
}
