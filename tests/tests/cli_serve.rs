//! `agentpact serve` as a user runs it: a process that answers GraphQL over the index, stops
//! cleanly on SIGTERM, and refuses what it cannot do with a message that says what to do.

use std::{
    process::{Command, Output, Stdio},
    time::Duration,
};

use agentpact_contracts::Initiator;
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    chain::ether,
    cli::{binary, free_port},
    pacts::Market,
    postgres::TestDatabase,
};
use serde_json::{Value, json};

type Result = std::result::Result<(), HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

fn serve(database_url: &str, chain_id: u64, port: u16) -> Command {
    let mut command = Command::new(binary());
    command
        .arg("serve")
        .args(["--database-url", database_url])
        .args(["--chain-id", &chain_id.to_string()])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

#[tokio::test]
async fn the_serve_command_answers_graphql_and_stops_on_sigterm() -> Result {
    let m = Market::open().await?;
    m.funded(Initiator::Seller, ether(1)).await?;
    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let port = free_port()?;
    let child = serve(db.url(), m.chain.anvil.chain_id(), port).spawn().map_err(process)?;

    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let mut healthy = false;
    for _ in 0..1_200 {
        if client.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status().is_success()) {
            healthy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(healthy, "agentpact serve did not answer /healthz within 60 s");
    let body = json!({ "query": "{ pact(id: \"0\") { status initiator } indexerStatus { lagBlocks } }" });
    let response: Value = client
        .post(format!("{base}/graphql"))
        .json(&body)
        .send()
        .await
        .map_err(process)?
        .json()
        .await
        .map_err(process)?;
    assert_eq!(
        response["data"],
        json!({ "pact": { "status": "FUNDED", "initiator": "SELLER" }, "indexerStatus": { "lagBlocks": 0 } })
    );
    assert_eq!(client.get(format!("{base}/readyz")).send().await.map_err(process)?.status().as_u16(), 200);

    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().map_err(process)?;
    assert!(killed.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .map_err(process)?
        .map_err(process)?;
    assert!(
        output.status.success(),
        "exit after SIGTERM: {:?} {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

fn refused(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "stdout: {}", String::from_utf8_lossy(&output.stdout));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn the_serve_command_refuses_what_it_cannot_do() -> Result {
    let db = TestDatabase::create().await?;
    let no_database = agentpact_tests::postgres::with_database(db.url(), "agentpact_no_such_db");
    let stderr = refused(&serve(&no_database, 31337, free_port()?).output().map_err(process)?);
    assert!(stderr.contains("DATABASE_URL"), "{stderr}");

    let taken = std::net::TcpListener::bind("127.0.0.1:0").map_err(process)?;
    let port = taken.local_addr().map_err(process)?.port();
    let stderr = refused(&serve(db.url(), 31337, port).output().map_err(process)?);
    assert!(stderr.contains("is another server using that port"), "{stderr}");

    let stderr = refused(
        &serve(db.url(), 31337, free_port()?)
            .args(["--cors-origin", "bad\norigin"])
            .output()
            .map_err(process)?,
    );
    assert!(stderr.contains("CORS origin"), "{stderr}");
    Ok(())
}
