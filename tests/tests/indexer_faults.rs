//! An RPC that fails, answers garbage, caps `eth_getLogs` or serves a block whose parent is missing,
//! a database connection that drops: the indexer recovers each time and the index still equals one
//! clean run. A log it cannot decode stops it before anything of that batch is written.

use std::time::Duration;

use agentpact_contracts::{Initiator, rpc::RpcLimits};
use agentpact_indexer::{Config, Indexer};
use agentpact_tests::{
    HarnessError,
    chain::{ether, send},
    index::{self, caught_up, dump, fresh_dump, indexer, small_ranges},
    pacts::Market,
    postgres::TestDatabase,
    rpc_proxy::{Faults, FaultyRpc},
};
use alloy::providers::DynProvider;

type Result = std::result::Result<(), HarnessError>;

async fn some_history(m: &Market) -> Result {
    for initiator in [Initiator::Buyer, Initiator::Seller, Initiator::Buyer] {
        let id = m.pending_approval(initiator, ether(1)).await?;
        send(m.chain.pact.approveWork(id).from(m.cast.buyer)).await?;
    }
    m.withdraw_all(m.cast.seller).await?;
    Ok(())
}

/// An indexer of `m`'s chain into `db`, reading through `proxy` with the production transport.
async fn through(
    proxy: &FaultyRpc,
    db: &TestDatabase,
    m: &Market,
    config: Config,
) -> std::result::Result<Indexer<DynProvider>, HarnessError> {
    index::through(proxy.url(), &m.chain, db.pool(), config, &RpcLimits::default()).await
}

fn quick_retries() -> Config {
    Config {
        poll_interval: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        ..small_ranges()
    }
}

/// Runs the indexer through a proxy with `faults` until it holds the chain's head.
async fn follow_through(
    m: &Market,
    faults: Faults,
) -> std::result::Result<(FaultyRpc, TestDatabase, agentpact_indexer::Metrics), HarnessError> {
    follow_with(m, faults, quick_retries()).await
}

/// [`follow_through`] with the indexer configured as `config`.
async fn follow_with(
    m: &Market,
    faults: Faults,
    config: Config,
) -> std::result::Result<(FaultyRpc, TestDatabase, agentpact_indexer::Metrics), HarnessError> {
    let proxy = FaultyRpc::start(m.chain.provider.clone(), faults).await?;
    let db = TestDatabase::create().await?;
    let ix = through(&proxy, &db, m, config).await?;
    let metrics = ix.metrics();
    let task = tokio::spawn(agentpact_indexer::run(ix, std::future::pending()));
    caught_up(&m.chain, db.pool()).await?;
    task.abort();
    Ok((proxy, db, metrics))
}

#[tokio::test]
async fn an_rpc_failing_every_third_request_is_retried_and_the_index_is_exact() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    let (proxy, db, metrics) =
        follow_through(&m, Faults { fail_every: Some(3), ..Faults::default() }).await?;
    assert!(proxy.failed() >= 3, "the proxy injected {} failures", proxy.failed());
    assert!(metrics.render().contains("kind=\"rpc\""), "RPC errors are counted:\n{}", metrics.render());
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?);
    Ok(())
}

#[tokio::test]
async fn an_rpc_that_caps_get_logs_makes_the_ranges_shrink_and_the_backfill_completes() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    // The most logs one block of the history holds: a pact's end (the closing event, two payouts and
    // `PactEnded`). A range shrinks to a block at the least, so the cap must let one through.
    let proxy =
        FaultyRpc::start(m.chain.provider.clone(), Faults { max_logs: Some(4), ..Faults::default() }).await?;
    let db = TestDatabase::create().await?;
    let wide = Config { initial_range: 10_000, max_range: 10_000, ..small_ranges() };
    through(&proxy, &db, &m, wide).await?.catch_up().await?;
    assert!(proxy.failed() > 0, "the cap never bit: the test proves nothing");
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?);
    Ok(())
}

#[tokio::test]
async fn a_dropped_database_connection_is_recovered() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    let db = TestDatabase::create().await?;
    let ix = indexer(&m.chain, db.pool(), quick_retries());
    let metrics = ix.metrics();
    let task = tokio::spawn(agentpact_indexer::run(ix, std::future::pending()));
    caught_up(&m.chain, db.pool()).await?;

    // What a Postgres restart does to the indexer's sessions.
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .execute(db.pool())
    .await?;
    let id = m.funded(Initiator::Seller, ether(3)).await?;
    send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
    caught_up(&m.chain, db.pool()).await?;
    assert!(!task.is_finished(), "the indexer exited instead of recovering");
    task.abort();
    assert!(
        metrics.render().contains("kind=\"db\""),
        "the dropped connection went unnoticed:\n{}",
        metrics.render()
    );
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?);
    Ok(())
}

#[tokio::test]
async fn garbage_answers_are_retried_and_never_become_rows() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    let (proxy, db, _) = follow_through(&m, Faults { garbage_every: Some(4), ..Faults::default() }).await?;
    assert!(proxy.failed() >= 3, "the proxy sent {} garbage answers", proxy.failed());
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?);
    Ok(())
}

#[tokio::test]
async fn a_block_whose_parent_is_missing_is_read_again_and_never_becomes_a_row() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    // Ranges wide enough to hold several blocks, whose parent links the batch checks.
    let wide = Config { initial_range: 10_000, max_range: 10_000, ..quick_retries() };
    let (proxy, db, metrics) =
        follow_with(&m, Faults { orphan_blocks: Some(3), ..Faults::default() }, wide).await?;
    assert_eq!(proxy.failed(), 3, "three blocks were served without their parent");
    assert!(
        metrics.render().contains("kind=\"chain_moved\""),
        "a missing parent is a chain that moved under the batch: retried, counted\n{}",
        metrics.render()
    );
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?);
    Ok(())
}

#[tokio::test]
async fn a_batch_that_does_not_extend_the_previous_one_is_read_again() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    // One block per batch: no batch has a link of its own to check, only the one to the block
    // the previous batch ended on (a reorg between two batches of a pass looks like this).
    // The first batches extend nothing yet (their orphaned parents have nothing to be compared
    // with, and their hashes are right), so the faults last long enough to reach later ones.
    let single = Config { initial_range: 1, max_range: 1, ..quick_retries() };
    let (proxy, db, metrics) =
        follow_with(&m, Faults { orphan_blocks: Some(8), ..Faults::default() }, single).await?;
    assert_eq!(proxy.failed(), 8);
    assert!(
        metrics.render().contains("kind=\"chain_moved\""),
        "a batch whose first block is not the child of the last one indexed is retried\n{}",
        metrics.render()
    );
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?);
    Ok(())
}

#[tokio::test]
async fn an_undecodable_log_from_the_contract_stops_the_indexer_without_writing_it() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    let faults = Faults { forge_log_from: Some(m.chain.deployment.agent_pact), ..Faults::default() };
    let proxy = FaultyRpc::start(m.chain.provider.clone(), faults).await?;
    let db = TestDatabase::create().await?;
    let wide = Config { initial_range: 10_000, max_range: 10_000, ..small_ranges() };
    let outcome = through(&proxy, &db, &m, wide).await?.catch_up().await;
    let error = outcome.expect_err("a log this build cannot decode must stop the indexer");
    assert_eq!(error.kind(), "decode", "{error}");
    assert!(error.is_fatal(), "not retried: the contracts are not the ones this build knows");
    assert_eq!(proxy.failed(), 1, "the forged log was served");
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM events").fetch_one(db.pool()).await?;
    assert_eq!(rows, 0, "nothing of the batch holding the forged log may be written");
    Ok(())
}
