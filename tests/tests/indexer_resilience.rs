//! The indexer survives what production does to it: killed at any moment, two of them on one
//! database, a range read twice. Each time the result must equal one clean run.

use std::time::Duration;

use agentpact_contracts::Initiator;
use agentpact_indexer::{Config, Pass};
use agentpact_tests::{
    HarnessError,
    chain::{ether, send},
    erc8004::Registries,
    index::{
        checkpoint_block, dump, fresh_dump, indexer, kill_during_backfill, small_ranges, wait_for_checkpoint,
    },
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{
    primitives::{Address, U256},
    providers::Provider,
};

type Result = std::result::Result<(), HarnessError>;

/// A chain with a few dozen events spread over many blocks, in ETH and USDC: the middle round is
/// in USDC (a payment of 1-3 USDC where the others pay 1-3 ETH). The seller is an ERC-8004 agent:
/// each round its buyer rates it for a completed pact (grounded) and the stranger without one;
/// the second round moves its registration file, the third revokes the stranger's first feedback.
async fn busy_market() -> std::result::Result<Market, HarnessError> {
    let m = Market::open().await?;
    let registries = Registries::of(&m.chain);
    let agent =
        registries.register(m.cast.seller, "data:application/json,{\"name\":\"Seller\"}".into()).await?;
    for round in 0..3u64 {
        let (currency, unit) = match round {
            1 => (*m.chain.usdc.address(), U256::from(1_000_000u64)),
            _ => (Address::ZERO, ether(1)),
        };
        for initiator in [Initiator::Buyer, Initiator::Seller] {
            let id = m.pending_approval_in(currency, initiator, unit * U256::from(1 + round)).await?;
            send(m.chain.pact.approveWork(id).from(m.cast.buyer)).await?;
            registries.rate(agent, m.cast.buyer, 80, &format!("pact:{id}"), "").await?;
        }
        registries.rate(agent, m.cast.stranger, 5, "", "").await?;
        match round {
            1 => drop(
                send(registries.identity.setAgentURI(agent, "ipfs://moved".into()).from(m.cast.seller))
                    .await?,
            ),
            2 => drop(send(registries.reputation.revokeFeedback(agent, 1).from(m.cast.stranger)).await?),
            _ => {}
        }
        m.funded_in(currency, Initiator::Buyer, unit).await?;
        m.withdraw_in(currency, m.cast.seller).await?;
    }
    Ok(m)
}

#[tokio::test]
async fn killed_at_any_moment_the_index_ends_equal_to_one_clean_run() -> Result {
    let m = busy_market().await?;
    let head = m.chain.provider.get_block_number().await?;
    let db = TestDatabase::create().await?;
    let chain = &m.chain;
    let stopped_partway =
        kill_during_backfill(&db, head, 24, |pool| async move { Ok(indexer(chain, &pool, small_ranges())) })
            .await?;
    assert!(stopped_partway > 3, "the kills did not land during the backfill ({stopped_partway} did)");
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    let fresh = fresh_dump(&m.chain).await?;
    for table in ["erc8004_agents", "erc8004_agent_changes", "erc8004_feedback", "erc8004_revocations"] {
        assert!(
            !fresh.contains(&format!("== {table}\n\n")),
            "the run wrote no {table}: the kills did not cover it"
        );
    }
    assert_eq!(dump(db.pool()).await?, fresh);
    Ok(())
}

#[tokio::test]
async fn a_range_read_twice_is_indexed_once() -> Result {
    let m = busy_market().await?;
    let db = TestDatabase::create().await?;
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    let once = dump(db.pool()).await?;
    // As if a second reader had started from an older checkpoint: move it back 8 blocks (to a
    // block still on the chain) and index again.
    sqlx::query(
        "UPDATE checkpoints c SET block_number = b.number, block_hash = b.hash
         FROM blocks b WHERE b.chain_id = c.chain_id AND b.number = c.block_number - 8",
    )
    .execute(db.pool())
    .await?;
    assert!(checkpoint_block(db.pool()).await? < m.chain.provider.get_block_number().await? as i64);
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    assert_eq!(dump(db.pool()).await?, once, "events at the overlap were indexed twice");
    Ok(())
}

#[tokio::test]
async fn a_standby_indexer_takes_over_when_the_writer_dies() -> Result {
    let m = busy_market().await?;
    let db = TestDatabase::create().await?;
    let config = Config { poll_interval: Duration::from_millis(50), ..small_ranges() };
    let first =
        tokio::spawn(agentpact_indexer::run(indexer(&m.chain, db.pool(), config), std::future::pending()));
    let head = m.chain.provider.get_block_number().await?;
    wait_for_checkpoint(db.pool(), head).await?;
    let standby =
        tokio::spawn(agentpact_indexer::run(indexer(&m.chain, db.pool(), config), std::future::pending()));
    // Until the standby has asked for the lock (a fixed pause may end before a slow machine's
    // standby asks, and then the count below proves nothing): two sessions besides this one have
    // asked for it last or hold it.
    let asked = || async {
        let sessions: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity a
             WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
               AND (a.query LIKE '%pg_try_advisory_lock%'
                    OR EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted))",
        )
        .fetch_one(db.pool())
        .await?;
        Ok(sessions >= 2)
    };
    agentpact_tests::until(Duration::from_secs(60), "the standby asking for the writer lock", asked).await?;
    let holders: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .fetch_one(db.pool())
    .await?;
    assert_eq!(holders, 1, "exactly one indexer holds the writer lock");

    first.abort();
    let _ = first.await;
    let id = m.funded(Initiator::Seller, ether(2)).await?;
    send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
    let head = m.chain.provider.get_block_number().await?;
    wait_for_checkpoint(db.pool(), head).await?;
    assert!(!standby.is_finished(), "the standby stopped");
    standby.abort();
    assert_eq!(dump(db.pool()).await?, fresh_dump(&m.chain).await?, "a gap or a duplicate at the hand-over");
    Ok(())
}

#[tokio::test]
async fn catching_up_reports_the_new_checkpoint() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let head = m.chain.provider.get_block_number().await?;
    let pass = indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    assert!(matches!(pass, Pass::Indexed(cp) if cp.block_number == head), "{pass:?}");
    Ok(())
}
