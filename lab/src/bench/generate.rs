//! `agentpact bench gen`: fills a running anvil (e.g. the one of `agentpact dev`, or `anvil
//! --accounts 20`) with generated pacts in ETH and USDC, deploying a test USDC and the contracts
//! first when the deployments file does not name live ones.

use std::{path::PathBuf, time::Instant};

use agentpact_contracts::Deployment;
use alloy::providers::{Provider, ProviderBuilder};
use anyhow::Context;

use super::market::{Crowd, Generator};

/// Flags of `agentpact bench gen`.
#[derive(Debug, Clone, clap::Args)]
pub struct GenArgs {
    /// The anvil to fill (it must sign for its dev accounts: anvil, not a real network).
    #[arg(long, env = "RPC_URL", default_value = "http://127.0.0.1:8545")]
    rpc_url: String,
    /// Pacts to generate.
    #[arg(long, default_value_t = 10_000)]
    pacts: usize,
    /// Seed of the generator: the same seed on a fresh anvil gives the same history.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where `<chain_id>.json` is read from, or written to after deploying.
    #[arg(long, env = "DEPLOYMENTS_DIR", default_value = "deployments")]
    deployments_dir: PathBuf,
}

/// Generates the pacts and prints what was made.
pub async fn run(args: GenArgs) -> anyhow::Result<()> {
    let url: alloy::transports::http::reqwest::Url =
        args.rpc_url.parse().with_context(|| format!("RPC_URL {:?} is not a URL", args.rpc_url))?;
    // Mining one phase of a large round is one request that can take minutes.
    let limits = agentpact_contracts::rpc::RpcLimits {
        timeout: std::time::Duration::from_secs(3_600),
        ..Default::default()
    };
    let client = agentpact_contracts::rpc::client(url.clone(), &limits)
        .await
        .with_context(|| format!("no node answers at {}", args.rpc_url))?;
    let provider = ProviderBuilder::new().connect_client(client).erased();
    let chain_id =
        provider.get_chain_id().await.with_context(|| format!("no node answers at {}", args.rpc_url))?;
    let accounts = provider.get_accounts().await.context("the node lists no accounts: is it anvil?")?;
    let cast = Crowd::of(&accounts)?;
    let file = args.deployments_dir.join(format!("{chain_id}.json"));
    let deployment = match existing(&provider, &file).await {
        Some(deployment) => deployment,
        None => {
            let deployment = super::deploy_with_usdc(&url, &accounts).await?;
            std::fs::create_dir_all(&args.deployments_dir)
                .with_context(|| format!("creating {}", args.deployments_dir.display()))?;
            std::fs::write(&file, serde_json::to_string_pretty(&deployment)? + "\n")
                .with_context(|| format!("writing {}", file.display()))?;
            println!("deployed AgentPact at {} (written to {})", deployment.agent_pact, file.display());
            deployment
        }
    };
    let started = Instant::now();
    let generator = Generator::start(provider.clone(), &deployment, cast, args.seed).await?;
    let generated =
        generator.run(args.pacts, |done| eprint!("\rgenerated {done}/{} pacts", args.pacts)).await?;
    eprintln!();
    println!(
        "{} pacts (seed {}) in {:.1?}: {} steps in {} transactions, {} blocks mined",
        args.pacts,
        args.seed,
        started.elapsed(),
        generated.steps,
        generated.transactions,
        generated.blocks
    );
    for (fate, n) in &generated.fates {
        println!("  {fate:?}: {n}");
    }
    for (currency, n) in &generated.currencies {
        println!("  in {currency}: {n}");
    }
    Ok(())
}

/// The deployment in `file` when its AgentPact has code on this chain.
async fn existing(provider: &impl Provider, file: &std::path::Path) -> Option<Deployment> {
    let deployment: Deployment = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    let code = provider.get_code_at(deployment.agent_pact).await.ok()?;
    (!code.is_empty()).then_some(deployment)
}
