//! `agentpact deploy` as a user runs it against a node: both contracts deployed from the key's
//! account, the deployments file written for the other commands, and what it refuses.

use std::process::{Command, Output};

use agentpact_contracts::{Deployment, OracleRegistry};
use agentpact_tests::{HarnessError, anvil, cli::binary, postgres::TestDatabase, python::mcp_call};
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

/// The MCP client configuration `deploy` prints starts `agentpact mcp` from a working directory
/// that holds no deployments file (the test's, not the deployments directory), through the
/// official Python SDK: its addresses are the deployment's, and the key is in none of it.
#[tokio::test]
async fn deploy_prints_a_client_configuration_that_works_from_any_directory() -> Result {
    let node = anvil::spawn(84_532)?;
    let key = PrivateKeySigner::from(node.keys()[0].clone());
    let dir = std::env::temp_dir().join(format!("agentpact-deploy-config-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = deploy(&node.endpoint(), &key, &dir, &[]).map_err(process)?;
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{printed}{}", String::from_utf8_lossy(&out.stderr));
    assert!(printed.contains("Allowed tokens  none (ETH only)"), "{printed}");
    let hex_key = hex::encode(key.to_bytes());
    assert!(!printed.contains(&hex_key) && !String::from_utf8_lossy(&out.stderr).contains(&hex_key));
    let d: Deployment =
        serde_json::from_str(&std::fs::read_to_string(dir.join("84532.json")).map_err(process)?)
            .map_err(process)?;
    let json = printed.find("\n{").map(|at| &printed[at..]).ok_or_else(|| process(&printed))?;
    let config: serde_json::Value = serde_json::from_str(json).map_err(process)?;
    let server = &config["mcpServers"]["agentpact"];
    assert_eq!(server["command"].as_str(), Some(binary().to_string_lossy().as_ref()), "{config}");
    let env = server["env"].as_object().ok_or_else(|| process(&config))?;
    for (name, address) in [
        ("AGENT_PACT_ADDRESS", d.agent_pact),
        ("ORACLE_REGISTRY_ADDRESS", d.oracle_registry),
        ("AGENT_REGISTRY_ADDRESS", d.agent_registry),
    ] {
        assert_eq!(env[name], address.to_string(), "{config}");
    }
    assert_eq!(env["DEPLOYMENT_BLOCK"], d.block.to_string(), "{config}");
    assert!(
        !std::path::Path::new("deployments/84532.json").exists(),
        "the test's directory holds a deployment"
    );

    let db = TestDatabase::create().await?;
    let bare = vec![
        ("RPC_URL", node.endpoint()),
        ("CHAIN_ID", "84532".to_owned()),
        ("DATABASE_URL", db.url().to_owned()),
        ("PRIVATE_KEY", format!("0x{hex_key}")),
    ];
    let lost = agentpact_tests::cli::run_within(&["mcp"], bare, std::time::Duration::from_secs(60)).await?;
    let looked = std::env::current_dir().map_err(process)?.join("deployments/84532.json");
    assert!(!lost.success, "{}", lost.stderr);
    for says in [looked.display().to_string(), "DEPLOYMENTS_DIR".into(), "Do not deploy again".into()] {
        assert!(lost.stderr.contains(&says), "{says:?} missing: {}", lost.stderr);
    }
    assert!(!lost.stderr.contains(&hex_key));
    let mut started: Vec<(String, String)> =
        env.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect();
    started.retain(|(k, _)| k != "DATABASE_URL");
    started.push(("DATABASE_URL".into(), db.url().to_owned()));
    started.push(("PRIVATE_KEY".into(), format!("0x{hex_key}")));
    let answer = mcp_call(started, "get-my-address", &serde_json::json!({})).await?;
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(answer["structured"]["address"], key.address().to_string(), "{answer}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
