//! The indexer's projections say what the chain says: pacts in every status, built with every event
//! type (counted: each kind of `EventKind` is journaled), are indexed and compared field by field
//! with the contracts' own getters.

use agentpact_contracts::{Initiator, PactStatus};
use agentpact_indexer::{Config, Indexer};
use agentpact_tests::{
    HarnessError,
    chain::{ether, send},
    index::{assert_index_matches_chain, kinds_never_journaled},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::providers::Provider;

type Result = std::result::Result<(), HarnessError>;

fn indexer(m: &Market, db: &TestDatabase) -> Indexer<alloy::providers::DynProvider> {
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default())
}

#[tokio::test]
async fn projections_match_the_contracts_field_by_field() -> Result {
    let m = Market::open().await?;
    m.every_status().await?;
    let db = TestDatabase::create().await?;
    let pass = indexer(&m, &db).catch_up().await?;
    let head = m.chain.provider.get_block_number().await?;
    assert!(matches!(pass, agentpact_indexer::Pass::Indexed(cp) if cp.block_number == head), "{pass:?}");

    let statuses = assert_index_matches_chain(&m.chain, db.pool()).await?;
    assert_eq!(statuses.len(), PactStatus::ALL.len(), "the scenario misses a status: {statuses:?}");

    // Every event the contracts can emit went through the projections above: a new event with no
    // step in `Market::every_status` fails here, not in production.
    let missing = kinds_never_journaled(db.pool()).await?;
    assert!(missing.is_empty(), "Market::every_status emits no {missing:?}: add a step that does");
    Ok(())
}

#[tokio::test]
async fn indexing_again_changes_nothing_and_new_blocks_are_picked_up() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    let mut indexer = indexer(&m, &db);
    indexer.catch_up().await?;
    let journal = "SELECT count(*) FROM events";
    let before: i64 = sqlx::query_scalar(journal).fetch_one(db.pool()).await?;
    indexer.catch_up().await?;
    assert_eq!(sqlx::query_scalar::<_, i64>(journal).fetch_one(db.pool()).await?, before);

    // A fresh indexer over the same database resumes from the checkpoint.
    send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
    let mut resumed = self::indexer(&m, &db);
    resumed.catch_up().await?;
    assert_eq!(sqlx::query_scalar::<_, i64>(journal).fetch_one(db.pool()).await?, before + 1);
    let status: i16 = sqlx::query_scalar("SELECT status FROM pacts WHERE pact_id = $1::text::numeric")
        .bind(id.to_string())
        .fetch_one(db.pool())
        .await?;
    assert_eq!(status, i16::from(PactStatus::InProgress.code()));
    Ok(())
}

#[tokio::test]
async fn every_committed_pact_change_is_announced_for_the_api() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let mut listener = sqlx::postgres::PgListener::connect(db.url()).await?;
    listener.listen(agentpact_indexer::PACT_CHANNEL).await?;
    let id = m.funded(Initiator::Seller, ether(1)).await?;
    indexer(&m, &db).catch_up().await?;

    let note = tokio::time::timeout(std::time::Duration::from_secs(5), listener.recv())
        .await
        .map_err(|_| HarnessError::Process("no notification within 5 s".into()))??;
    let payload: serde_json::Value =
        serde_json::from_str(note.payload()).map_err(|e| HarnessError::Process(e.to_string()))?;
    assert_eq!(payload["pactId"], serde_json::json!(id.to_string()));
    assert_eq!(payload["status"], serde_json::json!(PactStatus::Funded.code()));
    assert_eq!(payload["chainId"], serde_json::json!(m.chain.anvil.chain_id()));
    Ok(())
}

#[tokio::test]
async fn reputation_aggregates_match_a_hand_computed_history() -> Result {
    let m = Market::open().await?;
    m.reputation_history().await?;

    let db = TestDatabase::create().await?;
    indexer(&m, &db).catch_up().await?;
    let row = |who: alloy::primitives::Address, role: &'static str| {
        let pool = db.pool().clone();
        async move {
            sqlx::query_as::<_, (i32, i32, i32, i32, i32, String, Option<String>, Option<String>)>(
                "SELECT pacts, completed, refunded, disputed, timed_out, volume::text, mean_score::text, agreement::text
                 FROM reputation WHERE address = $1 AND role = $2",
            )
            .bind(who.to_vec())
            .bind(role)
            .fetch_one(&pool)
            .await
        }
    };
    let two = ether(2).to_string();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(row(m.cast.seller, "seller").await?, (3, 1, 2, 1, 1, two.clone(), some("50.00"), None));
    assert_eq!(row(m.cast.buyer, "buyer").await?, (3, 1, 2, 1, 1, two.clone(), some("50.00"), None));
    // Oracle 0 gave 90 and 10 against finals 86 and 14; oracle 1 gave 80 and 20.
    assert_eq!(
        row(m.cast.oracles[0], "oracle").await?,
        (2, 1, 1, 1, 0, two.clone(), some("50.00"), some("96.00"))
    );
    assert_eq!(row(m.cast.oracles[1], "oracle").await?, (2, 1, 1, 1, 0, two, some("50.00"), some("94.00")));
    Ok(())
}
