//! Reads on a real streaming replica, as an operator runs it: a private primary and a hot standby
//! made from it with `pg_basebackup -R`; the indexer writes the primary; two `agentpact serve`
//! processes read the standby (DATABASE_URL the primary, READ_DATABASE_URL the standby) and
//! answer alike, each subscription hears a change, the relay takes a message through them; an MCP
//! agent reading the standby reads its own write; the standby stopped makes /readyz fail with the
//! reason, started again makes it ready.

use std::{process::Stdio, time::Duration};

use agentpact_mcp::Role;
use agentpact_read::Reader;
use agentpact_tests::{
    HarnessError,
    api::TestApi,
    cli::{binary, free_port, until_listening},
    index,
    mcp::{TestAgent, dev_key, test_limits},
    pacts::Market,
    postgres::ReplicatedDatabase,
};
use alloy::providers::Provider;
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// `agentpact serve` reading the standby, and a client of it once it listens.
async fn serve(m: &Market, db: &ReplicatedDatabase) -> Result<(tokio::process::Child, TestApi)> {
    let port = free_port()?;
    let child = tokio::process::Command::new(binary())
        .arg("serve")
        .env("DATABASE_URL", &db.primary_url)
        .env("READ_DATABASE_URL", &db.replica_url)
        .env("CHAIN_ID", m.chain.anvil.chain_id().to_string())
        .env("API_ADDR", format!("127.0.0.1:{port}"))
        .env("RATE_LIMIT_PER_SEC", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(process)?;
    until_listening(port, "agentpact serve").await?;
    Ok((child, TestApi::at(format!("http://127.0.0.1:{port}"))))
}

/// `/readyz` until it answers `status` (up to 60 s); its body.
async fn readyz_until(api: &TestApi, status: u16) -> Result<String> {
    let mut last = (0, String::new());
    for _ in 0..1_200 {
        last = api.get("/readyz").await?;
        if last.0 == status {
            return Ok(last.1);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(process(format!("/readyz never answered {status}; last {} {}", last.0, last.1)))
}

#[tokio::test]
async fn api_processes_read_a_streaming_replica_and_are_ready_only_while_it_follows() -> Result {
    let m = Market::open().await?;
    m.every_status().await?;
    let db = ReplicatedDatabase::create().await?;
    let _indexer = index::follow(&m.chain, db.primary());
    index::caught_up(&m.chain, db.primary()).await?;
    let (_one, a) = serve(&m, &db).await?;
    let (_two, b) = serve(&m, &db).await?;
    for api in [&a, &b] {
        let ready: Value = serde_json::from_str(&readyz_until(api, 200).await?).map_err(process)?;
        assert!(ready["replicaLagBlocks"].as_u64().is_some(), "{ready}");
    }

    // The standby has what the indexer wrote on the primary, and both processes answer alike.
    let query = "{ pacts(first: 100) { edges { node { id status buyer seller payment } } } }";
    let (from_a, from_b) = (a.data(query, json!({})).await?, b.data(query, json!({})).await?);
    assert_eq!(from_a, from_b);
    let listed = from_a["pacts"]["edges"].as_array().map(Vec::len).unwrap_or_default();
    assert!(listed >= 8, "every status's pact is read from the standby: {from_a}");

    // A subscription on each process hears a change the indexer announces on the primary, and
    // reads it from the standby once the standby has it.
    let subscription = "subscription { pactUpdated { id status } }";
    let mut subs = [a.subscribe(subscription, json!({})).await?, b.subscribe(subscription, json!({})).await?];
    let reader = Reader::of_replica(db.replica().clone());
    let url = m.chain.anvil.endpoint_url();
    let agent =
        TestAgent::start_reading(&m.chain, reader, dev_key(&m.chain, 1)?, url, Role::Full, test_limits())
            .await?;
    let terms = json!({
        "role": "buyer", "specHash": "QmReplica", "deadline": m.chain.now().await? + 86_400,
        "oracles": [m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
        "paymentEth": "0.1", "arbitrator": m.cast.arbitrator.to_string(),
    });
    // The MCP write waits until the standby has its block, so its answer and a read after it
    // see it there.
    let created = agent.ok("create-pact", terms).await?;
    assert!(!created.text.contains("not caught up"), "{}", created.text);
    let id = created.data["pactId"].as_str().unwrap_or_default().to_owned();
    let mine = agent.ok("list-pacts", json!({ "party": "me", "status": ["NEGOTIATING"] })).await?;
    assert!(
        mine.data["pacts"].as_array().is_some_and(|p| p.iter().any(|p| p["pactId"] == id.as_str())),
        "the write is read back from the standby: {}",
        mine.data
    );
    for sub in &mut subs {
        let change = sub.next_data().await?;
        assert_eq!(change["pactUpdated"], json!({ "id": id, "status": "NEGOTIATING" }));
    }

    // The relay takes a message through a process whose reads go to the standby.
    agent.use_relay(&a.base)?;
    let worker = m.cast.seller.to_checksum(None);
    let proposed = agent
        .ok("send_proposal", json!({ "worker_id": worker, "task": "a logo", "budget": "0.5 ETH" }))
        .await?;
    assert_eq!(proposed.data["status"], "NEGOTIATING", "{}", proposed.text);

    // The standby pauses its replay while the primary moves on: not ready, saying how far behind;
    // a subscriber told of a new pact waits for the standby instead of reading it stale there.
    // The blocks that make it fall behind come first: a subscriber waits for the standby a bounded
    // time (5 s), so only the new pact is announced while it is paused, and only just before the
    // replay resumes (waiting for readiness meanwhile could outlast that bound on a loaded machine).
    sqlx::query("SELECT pg_wal_replay_pause()").execute(db.replica()).await?;
    let _: Value =
        m.chain.provider.raw_request("anvil_mine".into(), (alloy::primitives::U256::from(4),)).await?;
    let behind = readyz_until(&a, 503).await?;
    assert!(behind.contains("blocks behind the primary's") && behind.contains("bound: 2"), "{behind}");
    let url = m.chain.anvil.endpoint_url();
    let other = TestAgent::start_reading(
        &m.chain,
        Reader::new(db.primary().clone()),
        dev_key(&m.chain, 7)?,
        url,
        Role::Full,
        test_limits(),
    )
    .await?;
    let second = other
        .ok(
            "create-pact",
            json!({
                "role": "buyer", "specHash": "QmPaused", "deadline": m.chain.now().await? + 86_400,
                "oracles": [m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
                "paymentEth": "0.1", "arbitrator": m.cast.arbitrator.to_string(),
            }),
        )
        .await?;
    let second = second.data["pactId"].as_str().unwrap_or_default().to_owned();
    sqlx::query("SELECT pg_wal_replay_resume()").execute(db.replica()).await?;
    for sub in &mut subs {
        let change = sub.next_data().await?;
        assert_eq!(
            change["pactUpdated"],
            json!({ "id": second, "status": "NEGOTIATING" }),
            "read once replayed"
        );
    }
    readyz_until(&a, 200).await?;

    // The standby stopped: not ready, saying why; started again: ready once it has caught up.
    db.stop_replica()?;
    let why = readyz_until(&a, 503).await?;
    assert!(why.contains("read database does not answer"), "{why}");
    db.start_replica()?;
    readyz_until(&a, 200).await?;
    readyz_until(&b, 200).await?;
    Ok(())
}
