//! An index escrow v3's indexer made, upgraded in place (#55, docs/indexer.md §Upgrading): no
//! re-index. The fixture (`tests/fixtures/v3-index`, made by its `make` script with the last v3
//! commit's own binary) is a chain escrow v3 ran on — anvil's state, every block and log — and the
//! index v3's `agentpact index` made of it. The test loads both, applies today's migrations as
//! `agentpact migrate` does, lets the chain go on (every live pact ended by a bystander, on the v3
//! escrow), and indexes on with today's indexer: its first log read starts right after the v3
//! checkpoint, and the index it leaves equals a fresh index of the whole chain.

use std::{path::Path, process::Command};

use agentpact_contracts::{AgentPact, Deployment, Ending, PactStatus};
use agentpact_indexer::{Config, Contracts, Indexer, Target};
use agentpact_tests::{
    HarnessError,
    anvil::{ACCOUNTS, binary},
    chain::send,
    index::{dump, small_ranges},
    postgres::TestDatabase,
    rpc_proxy::{Faults, FaultyRpc},
};
use alloy::{
    node_bindings::{Anvil, AnvilInstance},
    primitives::U256,
    providers::{DynProvider, Provider, ProviderBuilder},
};

type Result<T = ()> = std::result::Result<T, HarnessError>;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/v3-index");
/// The fixture's chain.
const CHAIN_ID: u64 = 31_337;

/// An I/O failure on `what`, as the harness reports it.
fn io(what: String) -> impl FnOnce(std::io::Error) -> HarnessError {
    move |e| HarnessError::Process(format!("{what}: {e}"))
}

/// A fixture file, gunzipped.
fn gunzip(name: &str) -> Result<Vec<u8>> {
    let path = Path::new(FIXTURE).join(name);
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(&path)
        .output()
        .map_err(io(format!("gzip -dc {}", path.display())))?;
    if !out.status.success() {
        return Err(HarnessError::Process(format!(
            "gzip -dc {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(out.stdout)
}

/// Anvil serving the fixture's chain (every block, hash and log as v3 left them), mining on.
fn v3_chain(state: &tempfile::TempDir) -> Result<AnvilInstance> {
    let file = state.path().join("chain.json");
    std::fs::write(&file, gunzip("chain.json.gz")?).map_err(io(format!("writing {}", file.display())))?;
    let anvil = Anvil::at(binary())
        .chain_id(CHAIN_ID)
        .args(["--accounts", &ACCOUNTS.to_string(), "--load-state"])
        .arg(&file);
    Ok(anvil.try_spawn()?)
}

fn target(deployment: &Deployment) -> Target {
    Target { chain_id: CHAIN_ID, contracts: Contracts::from(deployment), deployment_block: deployment.block }
}

/// The v3 checkpoint: block and hash.
async fn checkpoint(db: &TestDatabase) -> Result<(i64, Vec<u8>)> {
    Ok(sqlx::query_as("SELECT block_number, block_hash FROM checkpoints WHERE chain_id = $1")
        .bind(CHAIN_ID as i64)
        .fetch_one(db.pool())
        .await?)
}

/// Every pact still live on the v3 escrow ended by a stranger once all its clocks ran out: new
/// blocks of v3 events (timeouts, auto-approvals, finalizations and their payouts) after the
/// checkpoint.
async fn end_every_live_pact(
    provider: &DynProvider,
    escrow: &AgentPact::AgentPactInstance<DynProvider>,
    stranger: alloy::primitives::Address,
) -> Result<usize> {
    let _: serde_json::Value = provider.raw_request("evm_increaseTime".into(), (400u64 * 24 * 3600,)).await?;
    let mut ended = 0;
    for n in 0..escrow.pactCount().call().await?.to::<u64>() {
        let id = U256::from(n);
        let status = PactStatus::try_from(escrow.getPact(id).call().await?.status)
            .map_err(|e| HarnessError::Process(e.to_string()))?;
        match status {
            s if s.is_terminal() => continue,
            PactStatus::PendingVerify => send(escrow.finalizeVerification(id).from(stranger)).await?,
            PactStatus::PendingApproval => send(escrow.autoApprove(id).from(stranger)).await?,
            _ => send(escrow.claimTimeout(id).from(stranger)).await?,
        };
        ended += 1;
    }
    Ok(ended)
}

#[tokio::test]
async fn a_v3_index_is_migrated_in_place_and_indexes_on_from_its_checkpoint() -> Result {
    let state = tempfile::tempdir().map_err(io("a temporary directory".into()))?;
    let anvil = v3_chain(&state)?;
    let file = Path::new(FIXTURE).join("31337.json");
    let deployment: Deployment =
        serde_json::from_slice(&std::fs::read(&file).map_err(io(file.display().to_string()))?)
            .map_err(|e| HarnessError::Process(format!("the fixture's deployment: {e}")))?;
    let provider = ProviderBuilder::new()
        .wallet(anvil.wallet().ok_or_else(|| HarnessError::Process("anvil reported no dev keys".into()))?)
        .connect_http(anvil.endpoint_url())
        .erased();

    // The v3 index, as v3 left it.
    let db = TestDatabase::empty().await?;
    let sql = String::from_utf8(gunzip("index.sql.gz")?).map_err(|e| HarnessError::Process(e.to_string()))?;
    db.restore(&sql).await?;
    let v3_checkpoint = checkpoint(&db).await?;
    let pacts: i64 = sqlx::query_scalar("SELECT count(*) FROM pacts").fetch_one(db.pool()).await?;
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM events").fetch_one(db.pool()).await?;
    assert!(pacts > 0 && events > 0, "the fixture holds an index: {pacts} pacts, {events} events");
    let head = provider.get_block_number().await?;
    assert_eq!(v3_checkpoint.0 as u64, head, "the v3 index had caught up with its chain");
    let hash = provider.get_block_by_number(head.into()).await?.map(|b| b.header.hash.to_vec());
    assert_eq!(hash, Some(v3_checkpoint.1.clone()), "the loaded chain is the one v3 indexed");

    // `agentpact migrate`: today's migrations on top, the checkpoint and the rows kept.
    db.migrate().await?;
    assert_eq!(checkpoint(&db).await?, v3_checkpoint, "the checkpoint is kept");
    let after: (i64, i64) =
        sqlx::query_as("SELECT (SELECT count(*) FROM pacts), (SELECT count(*) FROM events)")
            .fetch_one(db.pool())
            .await?;
    assert_eq!(after, (pacts, events));
    let unended: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pacts WHERE outcome IS NOT NULL AND ending = $1")
            .bind(i16::from(Ending::Live.code()))
            .fetch_one(db.pool())
            .await?;
    assert_eq!(unended, 0, "every pact v3 ended has its ending");

    // The chain goes on, on the v3 escrow; today's indexer follows from the checkpoint.
    let escrow = AgentPact::new(deployment.agent_pact, provider.clone());
    let ended = end_every_live_pact(&provider, &escrow, anvil.addresses()[ACCOUNTS - 1]).await?;
    assert!(ended > 0, "the fixture leaves live pacts to end after the upgrade");
    let proxy = FaultyRpc::start(provider.clone(), Faults::default()).await?;
    let through: DynProvider = ProviderBuilder::new()
        .connect_http(proxy.url().parse().map_err(|e| HarnessError::Process(format!("proxy url: {e}")))?)
        .erased();
    Indexer::new(db.pool().clone(), through, target(&deployment), small_ranges()).catch_up().await?;
    let ranges = proxy.log_ranges();
    let first = ranges.iter().map(|r| r.0).min();
    assert_eq!(
        first,
        Some(v3_checkpoint.0 as u64 + 1),
        "no block the v3 index read is read again: {ranges:?}"
    );

    // Equal to an index of the whole chain made by today's indexer from nothing.
    let fresh = TestDatabase::create().await?;
    Indexer::new(fresh.pool().clone(), provider.clone(), target(&deployment), Config::default())
        .catch_up()
        .await?;
    assert_eq!(dump(db.pool()).await?, dump(fresh.pool()).await?);
    Ok(())
}
