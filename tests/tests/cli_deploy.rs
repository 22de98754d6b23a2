//! `agentpact deploy` as a user runs it against a node: both contracts deployed from the key's
//! account, the deployments file written for the other commands, and what it refuses.

use std::process::{Command, Output};

use agentpact_contracts::{Deployment, OracleRegistry};
use agentpact_tests::{HarnessError, anvil, cli::binary};
use alloy::{
    hex,
    providers::{Provider, ProviderBuilder},
    signers::local::PrivateKeySigner,
};

type Result = std::result::Result<(), HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

fn deploy(
    rpc: &str,
    key: &PrivateKeySigner,
    dir: &std::path::Path,
    extra: &[&str],
) -> std::io::Result<Output> {
    Command::new(binary())
        .args(["deploy", "--rpc-url", rpc, "--deployments-dir"])
        .arg(dir)
        .args(extra)
        .env("PRIVATE_KEY", hex::encode(key.to_bytes()))
        .env_remove("KEYSTORE")
        .output()
}

#[tokio::test]
async fn deploy_writes_the_deployments_file_of_the_chain_it_finds() -> Result {
    // Base Sepolia's chain id, as a Base Sepolia deployment would see it.
    let node = anvil::spawn(84_532)?;
    let key = PrivateKeySigner::from(node.keys()[0].clone());
    let dir = std::env::temp_dir().join(format!("agentpact-deploy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = deploy(&node.endpoint(), &key, &dir, &["--min-oracle-stake-eth", "0.05"]).map_err(process)?;
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let file = dir.join("84532.json");
    let text = std::fs::read_to_string(&file).map_err(process)?;
    let d: Deployment = serde_json::from_str(&text).map_err(process)?;
    assert!(said.contains(&d.agent_pact.to_string()) && said.contains("84532.json"), "{said}");
    let provider = ProviderBuilder::new().connect_http(node.endpoint_url());
    assert!(!provider.get_code_at(d.agent_pact).await?.is_empty(), "no AgentPact code at {}", d.agent_pact);
    let registry = OracleRegistry::new(d.oracle_registry, &provider);
    assert_eq!(registry.minStake().call().await?, alloy::primitives::U256::from(50_000_000_000_000_000u64));
    assert!(!said.contains(&hex::encode(key.to_bytes())), "the key appeared in the output");

    let again = deploy(&node.endpoint(), &key, &dir, &[]).map_err(process)?;
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("Pass --force"), "{:?}", again);
    assert_eq!(std::fs::read_to_string(&file).map_err(process)?, text, "a refused deploy changed the file");
    let forced = deploy(&node.endpoint(), &key, &dir, &["--force"]).map_err(process)?;
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));

    let broke = deploy(&node.endpoint(), &PrivateKeySigner::random(), &dir, &["--force"]).map_err(process)?;
    assert_eq!(broke.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&broke.stderr).contains("has no ETH"), "{:?}", broke);

    // https is spoken (TLS), so a plain-http node behind an https URL fails at the connection.
    let tls =
        deploy(&node.endpoint().replacen("http", "https", 1), &key, &dir, &["--force"]).map_err(process)?;
    assert_eq!(tls.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&tls.stderr).contains("is the node up?"), "{:?}", tls);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
