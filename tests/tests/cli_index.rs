//! `agentpact index` as a user runs it: a process that indexes, serves metrics, survives `kill -9`
//! and refuses bad configuration with a message that says what to do.

use std::{
    io::{Read, Write},
    process::{Child, Command, Stdio},
};

use agentpact_contracts::Initiator;
use agentpact_tests::{
    HarnessError,
    chain::{ether, send},
    cli::{binary, free_port},
    index::{caught_up, dump, fresh_dump, wait_for_checkpoint},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::providers::Provider;

type Result = std::result::Result<(), HarnessError>;

/// `agentpact index` for the market's chain, with addresses from a deployments file, and
/// `MALLOC_MMAP_THRESHOLD_` as given (absent when `None`).
fn spawn_indexer(
    m: &Market,
    db: &TestDatabase,
    dir: &std::path::Path,
    metrics_port: u16,
    mmap_threshold: Option<&str>,
) -> std::io::Result<Child> {
    let mut command = Command::new(binary());
    match mmap_threshold {
        Some(value) => command.env("MALLOC_MMAP_THRESHOLD_", value),
        None => command.env_remove("MALLOC_MMAP_THRESHOLD_"),
    };
    command
        .arg("index")
        .args(["--rpc-url", m.chain.anvil.endpoint().as_str()])
        .args(["--chain-id", &m.chain.anvil.chain_id().to_string()])
        .arg("--deployments-dir")
        .arg(dir)
        .args(["--database-url", db.url()])
        .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")])
        .args(["--poll-interval-ms", "50", "--finality-depth", "12"])
        .env_remove("DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}

/// A spawned process, killed (SIGKILL) and reaped when dropped, so a failing assertion leaves no
/// indexer running.
struct Spawned(Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `MALLOC_MMAP_THRESHOLD_` process `pid` runs with, read from its environment in /proc.
fn mmap_threshold_of(pid: u32) -> std::result::Result<Option<String>, HarnessError> {
    let environ = std::fs::read(format!("/proc/{pid}/environ"))
        .map_err(|e| HarnessError::Process(format!("/proc/{pid}/environ: {e}")))?;
    Ok(environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(b"MALLOC_MMAP_THRESHOLD_="))
        .map(|v| String::from_utf8_lossy(v).into_owned()))
}

fn get_metrics(port: u16) -> std::result::Result<String, HarnessError> {
    let io = |e: std::io::Error| HarnessError::Process(format!("metrics: {e}"));
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(io)?;
    stream.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n").map_err(io)?;
    let mut response = String::new();
    stream.read_to_string(&mut response).map_err(io)?;
    Ok(response)
}

#[tokio::test]
async fn the_index_command_indexes_serves_metrics_and_survives_kill_9() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    let db = TestDatabase::create().await?;
    let dir = std::env::temp_dir().join(format!("agentpact-deployments-{}", db.name()));
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::Process(e.to_string()))?;
    let file = dir.join(format!("{}.json", m.chain.anvil.chain_id()));
    let json =
        serde_json::to_string(&m.chain.deployment).map_err(|e| HarnessError::Process(e.to_string()))?;
    std::fs::write(&file, json).map_err(|e| HarnessError::Process(e.to_string()))?;

    let port = free_port()?;
    let process =
        Spawned(spawn_indexer(&m, &db, &dir, port, None).map_err(|e| HarnessError::Process(e.to_string()))?);
    let head = m.chain.provider.get_block_number().await?;
    wait_for_checkpoint(db.pool(), head).await?;
    // Started without it, the indexing process (the same pid: it replaced itself) runs with the
    // fixed mmap threshold that keeps a long backfill's memory flat (cli/src/memory.rs).
    assert_eq!(mmap_threshold_of(process.0.id())?.as_deref(), Some("131072"));
    let metrics = get_metrics(port)?;
    let expected =
        format!("agentpact_indexer_indexed_block{{chain_id=\"{}\"}} {head}", m.chain.anvil.chain_id());
    assert!(metrics.contains(&expected), "{metrics}");

    drop(process); // SIGKILL: no chance to clean up
    send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
    m.submitted(m.funded(Initiator::Seller, ether(2)).await?).await?;

    let restarted = Spawned(
        spawn_indexer(&m, &db, &dir, free_port()?, Some("262144"))
            .map_err(|e| HarnessError::Process(e.to_string()))?,
    );
    caught_up(&m.chain, db.pool()).await?;
    assert_eq!(
        mmap_threshold_of(restarted.0.id())?.as_deref(),
        Some("262144"),
        "the user's own value is kept"
    );
    drop(restarted);
    let _ = std::fs::remove_dir_all(&dir);

    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?);
    Ok(())
}

#[tokio::test]
async fn bad_configuration_is_refused_with_what_to_do() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let run = |args: &[&str]| {
        Command::new(binary())
            .arg("index")
            .args(["--rpc-url", m.chain.anvil.endpoint().as_str(), "--database-url", db.url()])
            .args(args)
            .env_remove("AGENT_PACT_ADDRESS")
            .env_remove("ORACLE_REGISTRY_ADDRESS")
            .env_remove("AGENT_REGISTRY_ADDRESS")
            .env_remove("ERC8004_IDENTITY_ADDRESS")
            .env_remove("ERC8004_REPUTATION_ADDRESS")
            .env_remove("ERC8004_START_BLOCK")
            .output()
    };
    let io = |e: std::io::Error| HarnessError::Process(e.to_string());

    let nowhere = std::env::temp_dir().join("agentpact-no-deployments-here");
    let out =
        run(&["--chain-id", "31337", "--deployments-dir", nowhere.to_str().unwrap_or("x")]).map_err(io)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("AGENT_PACT_ADDRESS") && stderr.contains("agentpact deploy"), "{stderr}");

    let pact = m.chain.deployment.agent_pact.to_string();
    let registry = m.chain.deployment.oracle_registry.to_string();
    let agents = m.chain.deployment.agent_registry.to_string();
    let addresses = [
        "--agent-pact-address",
        &pact,
        "--oracle-registry-address",
        &registry,
        "--agent-registry-address",
        &agents,
    ];
    let out = run(&[&["--chain-id", "84532"], &addresses[..]].concat()).map_err(io)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("serves chain 31337") && stderr.contains("CHAIN_ID is 84532"), "{stderr}");

    let out = Command::new(binary())
        .args(["index", "--rpc-url", "ftp://rpc.example.invalid", "--database-url", db.url()])
        .args(addresses)
        .output()
        .map_err(io)?;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("give the node's http(s):// or ws(s):// JSON-RPC URL"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // An ERC-8004 start block with no registries to read, or after the deployment block.
    let deployment_block = m.chain.deployment.block.to_string();
    let at_deployment =
        [&["--chain-id", "31337", "--deployment-block", &deployment_block], &addresses[..]].concat();
    let out = run(&[&at_deployment[..], &["--erc8004-start-block", "0"]].concat()).map_err(io)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no ERC-8004 registries are followed on chain 31337")
            && stderr.contains("ERC8004_IDENTITY_ADDRESS"),
        "{stderr}"
    );
    let (identity, reputation) =
        (m.chain.erc8004.identity.to_string(), m.chain.erc8004.reputation.to_string());
    let later = (m.chain.deployment.block + 1).to_string();
    let registries = ["--erc8004-identity-address", &identity, "--erc8004-reputation-address", &reputation];
    let out =
        run(&[&at_deployment[..], &registries, &["--erc8004-start-block", &later]].concat()).map_err(io)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("after the deployment block {deployment_block}")), "{stderr}");

    let out = run(&["--chain-id", "31337", "--agent-pact-address", "0xnot-an-address"]).map_err(io)?;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("agent-pact-address"));
    let tables: i64 = sqlx::query_scalar("SELECT count(*) FROM chains").fetch_one(db.pool()).await?;
    assert_eq!(tables, 0, "a refused run wrote to the database");
    Ok(())
}
