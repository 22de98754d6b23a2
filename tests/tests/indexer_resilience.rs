//! The indexer survives what production does to it: killed at any moment, two of them on one
//! database, a range read twice. Each time the result must equal one clean run.

use std::time::Duration;

use agentpact_contracts::{DeployOptions, Initiator};
use agentpact_indexer::{Config, Pass};
use agentpact_tests::{
    HarnessError,
    chain::{TestChain, ether, send},
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

/// The definitions of the database's indexes and triggers, sorted: what a deferral must leave as
/// the migrations made it.
async fn catalog(pool: &sqlx::PgPool) -> std::result::Result<Vec<String>, HarnessError> {
    Ok(sqlx::query_scalar(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()
         UNION ALL
         SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
         ORDER BY 1",
    )
    .fetch_all(pool)
    .await?)
}

/// The backend pids of `db`'s sessions waiting for a lock in a statement on `table`.
async fn waiting_on(db: &TestDatabase, table: &str) -> std::result::Result<Vec<i32>, HarnessError> {
    Ok(sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()
         AND wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'",
    )
    .bind(table)
    .fetch_all(db.pool())
    .await?)
}

/// Ends every session of `db` waiting for a lock in a statement on `table` (as a crash would end
/// its connection); how many it ended.
async fn end_waiting_on(db: &TestDatabase, table: &str) -> std::result::Result<usize, HarnessError> {
    let pids = waiting_on(db, table).await?;
    for pid in &pids {
        sqlx::query("SELECT pg_terminate_backend($1)").bind(pid).execute(db.pool()).await?;
    }
    Ok(pids.len())
}

#[tokio::test]
async fn killed_while_indexes_and_counts_wait_the_index_ends_equal_to_one_that_never_deferred() -> Result {
    let m = busy_market().await?;
    let head = m.chain.provider.get_block_number().await?;
    let reference = TestDatabase::create().await?;
    let never = Config { defer_upkeep_behind: None, ..small_ranges() };
    indexer(&m.chain, reference.pool(), never).catch_up().await?;
    let db = TestDatabase::create().await?;

    // Deferred batches never touch pact_counts; the transaction reaching the head recounts it
    // after building the indexes and triggers again. Holding its lock here stops that transaction
    // there, however fast the machine, so every run below is killed either mid-backfill or inside
    // the rebuild.
    let mut holder = db.pool().begin().await?;
    sqlx::query("LOCK TABLE pact_counts IN ACCESS EXCLUSIVE MODE").execute(&mut *holder).await?;
    let (mut partway, mut deferred_seen) = (0, 0);
    for attempt in 0u64.. {
        let pool = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(db.url()).await?;
        let before = checkpoint_block(db.pool()).await?;
        let mut ix = indexer(&m.chain, &pool, small_ranges());
        let run = tokio::spawn(async move { ix.catch_up().await });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let rebuilding = loop {
            let waiting = !waiting_on(&db, "pact_counts").await?.is_empty();
            if waiting || checkpoint_block(db.pool()).await? > before {
                break waiting;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(HarnessError::Process("neither a commit nor the rebuild in 60 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        if rebuilding {
            // Its connection ends inside the rebuild: nothing of that transaction may land.
            end_waiting_on(&db, "pact_counts").await?;
            let ended = run.await.map_err(|e| HarnessError::Process(e.to_string()))?;
            assert!(ended.is_err(), "the run survived the end of its connection: {ended:?}");
            pool.close().await;
            break;
        }
        tokio::time::sleep(Duration::from_millis(attempt % 5)).await;
        run.abort();
        let _ = run.await;
        pool.close().await;
        partway += 1;
        let waiting: i64 =
            sqlx::query_scalar("SELECT count(*) FROM deferred_objects").fetch_one(db.pool()).await?;
        deferred_seen += u64::from(waiting > 20);
    }
    holder.rollback().await?;
    assert!(partway >= 3, "the kills did not land during the backfill ({partway} did)");
    assert_eq!(deferred_seen, partway, "a session did not carry on with the deferral it found");
    assert!(checkpoint_block(db.pool()).await? < head as i64, "the killed rebuild's checkpoint landed");
    assert_ne!(catalog(db.pool()).await?, catalog(reference.pool()).await?, "nothing was deferred");

    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    assert_eq!(
        dump(db.pool()).await?,
        dump(reference.pool()).await?,
        "differs from an index that never deferred"
    );
    assert_eq!(
        catalog(db.pool()).await?,
        catalog(reference.pool()).await?,
        "an index or trigger was not built again"
    );
    // The planner's statistics too: without them every live pass after a deferred backfill of
    // 100k pacts hashed the whole chain's pacts (BENCHMARKS.md §The write path).
    let with_statistics: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT tablename::text FROM pg_stats WHERE schemaname = current_schema()
         AND tablename IN ('events', 'pacts', 'pact_oracles') ORDER BY 1",
    )
    .fetch_all(db.pool())
    .await?;
    assert_eq!(with_statistics, ["events", "pact_oracles", "pacts"], "the deferral left no statistics");

    // A stop longer than the history before it: more blocks to go than indexed, so the next pass
    // defers again — now over counts that already hold every pact, which it must recount, not add to.
    // (A funded pact joins rows the counts already hold; a started one makes new ones.)
    m.funded(Initiator::Buyer, ether(1)).await?;
    let id = m.funded(Initiator::Seller, ether(2)).await?;
    send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
    let blocks = m.chain.provider.get_block_number().await? + 1;
    let _: serde_json::Value = m.chain.provider.raw_request("anvil_mine".into(), (blocks,)).await?;
    let built = || async {
        sqlx::query_scalar::<_, sqlx::postgres::types::Oid>("SELECT 'pacts_by_status'::regclass::oid")
            .fetch_one(db.pool())
            .await
    };
    let before = built().await?;
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    indexer(&m.chain, reference.pool(), never).catch_up().await?;
    assert_ne!(built().await?, before, "the second backfill did not defer");
    assert_eq!(dump(db.pool()).await?, dump(reference.pool()).await?, "a second deferral differs");
    Ok(())
}

#[tokio::test]
async fn a_second_chain_writing_while_the_first_defers_keeps_its_counts() -> Result {
    let first = busy_market().await?;
    let second = Market::open_on(TestChain::start_with(84_532, DeployOptions::default()).await?).await?;
    for initiator in [Initiator::Buyer, Initiator::Seller] {
        let id = second.funded(initiator, ether(1)).await?;
        send(second.chain.pact.startWork(id).from(second.cast.seller)).await?;
        second.funded(initiator, ether(3)).await?;
    }
    let never = Config { defer_upkeep_behind: None, ..small_ranges() };
    let reference = TestDatabase::create().await?;
    indexer(&first.chain, reference.pool(), never).catch_up().await?;
    indexer(&second.chain, reference.pool(), never).catch_up().await?;

    // The first chain, alone in the database, defers; it is stopped inside its rebuild (held by a
    // lock on pact_counts), so its indexes and count triggers stay dropped.
    let db = TestDatabase::create().await?;
    let mut holder = db.pool().begin().await?;
    sqlx::query("LOCK TABLE pact_counts IN ACCESS EXCLUSIVE MODE").execute(&mut *holder).await?;
    let pool = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(db.url()).await?;
    let mut ix = indexer(&first.chain, &pool, small_ranges());
    let run = tokio::spawn(async move { ix.catch_up().await });
    let rebuilding = || async { Ok(!waiting_on(&db, "pact_counts").await?.is_empty()) };
    agentpact_tests::until(Duration::from_secs(60), "the first chain's rebuild", rebuilding).await?;
    end_waiting_on(&db, "pact_counts").await?;
    assert!(run.await.map_err(|e| HarnessError::Process(e.to_string()))?.is_err());
    pool.close().await;
    holder.rollback().await?;

    // The second chain does not defer (it is not alone) but writes while the triggers are gone:
    // its batches mark its counts stale, and reaching its head it builds the objects and recounts.
    indexer(&second.chain, db.pool(), small_ranges()).catch_up().await?;
    let waiting: i64 =
        sqlx::query_scalar("SELECT count(*) FROM deferred_objects").fetch_one(db.pool()).await?;
    let marked: Vec<i64> =
        sqlx::query_scalar("SELECT chain_id FROM deferred_chains").fetch_all(db.pool()).await?;
    assert_eq!((waiting, marked), (0, vec![31_337]), "the second chain left upkeep undone");
    indexer(&first.chain, db.pool(), small_ranges()).catch_up().await?;
    assert_eq!(dump(db.pool()).await?, dump(reference.pool()).await?, "two chains' counts");
    assert_eq!(catalog(db.pool()).await?, catalog(reference.pool()).await?);
    Ok(())
}
