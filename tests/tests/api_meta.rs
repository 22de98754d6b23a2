//! GraphQL `_meta` and `block: { number_gte }` (docs/api.md §Meta) against a real anvil, the
//! indexer and Postgres: `_meta` tells the indexed block as the chain has it (hash, parent hash,
//! time) and whether indexing fails (an RPC that stops answering makes it true, its return false
//! again); a query asking for a block the index has not reached is refused after the wait, waits
//! for it when the indexer comes, and one far past the head is refused at once.

use std::time::Duration;

use agentpact_contracts::{Initiator, rpc::RpcLimits};
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::ether,
    index::{self, caught_up, follow},
    pacts::Market,
    postgres::TestDatabase,
    rpc_proxy::{Faults, FaultyRpc},
};
use alloy::providers::Provider;
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

const META: &str = "{ _meta { block { number hash parentHash timestamp } hasIndexingErrors } }";

/// The `extensions.code` of the first error of `response`.
fn code(response: &Value) -> &str {
    response["errors"][0]["extensions"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn meta_tells_the_indexed_block_as_the_chain_has_it_and_whether_indexing_fails() -> Result {
    let m = Market::open().await?;
    m.funded(Initiator::Buyer, ether(1)).await?;
    let proxy = FaultyRpc::start(m.chain.provider.clone(), Faults::default()).await?;
    let db = TestDatabase::create().await?;
    // Requests held by the proxy time out quickly, and failed passes are retried quickly.
    let limits = RpcLimits { timeout: Duration::from_millis(500), ..RpcLimits::default() };
    let config = Config {
        poll_interval: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        ..Config::default()
    };
    let indexer = index::through(proxy.url(), &m.chain, db.pool(), config, &limits).await?;
    let _task = tokio::spawn(agentpact_indexer::run(indexer, std::future::pending()));
    caught_up(&m.chain, db.pool()).await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;

    let meta = api.data(META, json!({})).await?["_meta"].clone();
    let number = meta["block"]["number"].as_u64().unwrap_or_default();
    let block = m
        .chain
        .provider
        .get_block_by_number(number.into())
        .await?
        .ok_or_else(|| HarnessError::Process(format!("no block {number}")))?;
    assert_eq!(meta["block"]["hash"], block.header.hash.to_string(), "{meta}");
    assert_eq!(meta["block"]["parentHash"], block.header.parent_hash.to_string(), "{meta}");
    assert_eq!(meta["block"]["timestamp"].as_u64(), Some(block.header.timestamp), "{meta}");
    assert_eq!(meta["hasIndexingErrors"], false, "{meta}");

    // The node stops answering: the indexer's passes fail, and `_meta` says so.
    proxy.stall(true);
    agentpact_tests::until(Duration::from_secs(60), "hasIndexingErrors", || async {
        Ok(api.data(META, json!({})).await?["_meta"]["hasIndexingErrors"] == true)
    })
    .await?;
    let failure: Option<String> =
        sqlx::query_scalar("SELECT failure FROM checkpoints").fetch_one(db.pool()).await?;
    assert_eq!(failure.as_deref(), Some("rpc"), "the kind, never the message");
    // It answers again: the next pass that completes clears it.
    proxy.stall(false);
    agentpact_tests::until(Duration::from_secs(60), "indexing healthy again", || async {
        Ok(api.data(META, json!({})).await?["_meta"]["hasIndexingErrors"] == false)
    })
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_query_at_a_block_not_yet_indexed_waits_for_it_or_is_refused_after_the_bound() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let first = follow(&m.chain, db.pool());
    caught_up(&m.chain, db.pool()).await?;
    let indexed = m.chain.provider.get_block_number().await?;
    first.abort();
    let _ = first.await;

    // A write the index has not read: its block is what a writer knows.
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    let mined = m.chain.provider.get_block_number().await?;
    let query = "query($id: BigInt!, $at: Int!) {
        pact(id: $id, block: { number_gte: $at }) { status }
        _meta(block: { number_gte: $at }) { block { number } } }";
    let at = json!({ "id": id.to_string(), "at": mined });

    let impatient = api::config(m.chain.anvil.chain_id());
    let impatient = TestApi::start(
        db.pool(),
        agentpact_api::ServeConfig { block_wait: Duration::from_millis(300), ..impatient },
    )
    .await?;
    let refused = impatient.post(query, at.clone()).await?;
    assert_eq!(code(&refused), "BLOCK_NOT_INDEXED", "{refused}");
    let said = refused["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(said.contains(&format!("holds block {indexed}, not yet block {mined}")), "{said}");
    let far = impatient.post(query, json!({ "id": id.to_string(), "at": mined + 1_000 })).await?;
    assert_eq!(code(&far), "BLOCK_NOT_INDEXED", "{far}");
    assert!(far["errors"][0]["message"].as_str().is_some_and(|m| m.contains("past chain")), "{far}");

    // Asked before the indexer runs again: answered once it has the block, with the write in it.
    let patient = api::config(m.chain.anvil.chain_id());
    let patient = TestApi::start(
        db.pool(),
        agentpact_api::ServeConfig { block_wait: Duration::from_secs(60), ..patient },
    )
    .await?;
    let asked = tokio::spawn(async move { patient.post(query, at).await });
    let _second = follow(&m.chain, db.pool());
    let answered = asked.await.map_err(|e| HarnessError::Process(e.to_string()))??;
    assert!(answered.get("errors").is_none(), "{answered}");
    assert_eq!(answered["data"]["pact"]["status"], "FUNDED", "{answered}");
    assert!(answered["data"]["_meta"]["block"]["number"].as_u64() >= Some(mined), "{answered}");
    Ok(())
}
