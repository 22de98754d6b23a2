//! Endings in the index (#55 step 2, docs/contracts.md §Endings): an index of pacts that ended
//! before the escrow emitted `PactEnded` is migrated in place to the ending each outcome names, as
//! the indexer reads escrow v3's events (`Outcome::ending`). (A fresh index reads each pact's ending from the chain's
//! `PactEnded`: `index::assert_index_matches_chain` compares it with `getLedger` for every pact.)

use agentpact_contracts::{Ending, Outcome, PactStatus, rules::FULL_SHARE};
use agentpact_tests::{HarnessError, postgres::TestDatabase};
use alloy::primitives::U256;

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// The last migration of the schema before endings.
const BEFORE_ENDINGS: i64 = 24;

#[tokio::test]
async fn an_index_built_before_endings_gets_each_outcomes_ending_in_place() -> Result {
    let db = TestDatabase::create_at(BEFORE_ENDINGS).await?;
    let pool = db.pool();
    // One ended pact per outcome (settlements at 0 and above, of a dust payment among them), and
    // one still live.
    let ten = U256::from(10u8);
    let mut rows = vec![(None, U256::from(10u64.pow(18)), None)];
    for outcome in Outcome::ALL {
        let share = match outcome {
            Outcome::SellerWon => Some(FULL_SHARE),
            Outcome::BuyerWon => Some(0),
            Outcome::Split => Some(7_000),
            Outcome::Settled => Some(6_000),
            _ => None,
        };
        rows.push((Some(outcome), U256::from(10u64.pow(18)), share));
    }
    rows.extend([(Some(Outcome::Settled), ten, Some(0)), (Some(Outcome::Settled), ten, Some(999))]);
    rows.extend([(Some(Outcome::Settled), ten, Some(1_000)), (Some(Outcome::Settled), ten, Some(6_000))]);
    for (id, (outcome, payment, share)) in rows.iter().enumerate() {
        sqlx::query(
            "INSERT INTO pacts (chain_id, pact_id, initiator, status, creator, arbitrator, spec_hash, spec_uri, deadline,
                                review_period, threshold, payment, buyer_stake, seller_stake, created_at, created_block,
                                updated_block, accept_by, currency, outcome, seller_share, closed_at)
             VALUES (1, $1, 0, $2, '\\x00', '\\x00', '\\x00', '', now(), 0, 1, $3::numeric, 0, 0, now(), 0, 0, now(), '\\x00',
                     $4, $5, CASE WHEN $4 IS NULL THEN NULL ELSE now() END)",
        )
        .bind(id as i64)
        .bind(i16::from(if outcome.is_some() { PactStatus::Refunded } else { PactStatus::Funded }.code()))
        .bind(payment.to_string())
        .bind(outcome.map(|o| o.name()))
        .bind(share.map(i32::from))
        .execute(pool)
        .await?;
    }
    let checkpoints: i64 = sqlx::query_scalar("SELECT count(*) FROM checkpoints").fetch_one(pool).await?;

    db.migrate().await?;

    let stored: Vec<(i64, i16)> =
        sqlx::query_as("SELECT pact_id::bigint, ending FROM pacts ORDER BY pact_id").fetch_all(pool).await?;
    let expected: Vec<(i64, i16)> = rows
        .iter()
        .enumerate()
        .map(|(id, (outcome, _, share))| {
            let ending = outcome.map_or(Ending::Live, |o| o.ending(share.unwrap_or(0)));
            (id as i64, i16::from(ending.code()))
        })
        .collect();
    assert_eq!(stored, expected);
    // The settlements of 10 wei: at 0 a cancel by agreement; at 999 bp escrow v3 paid the seller
    // nothing of the payment yet said SPLIT, and the index keeps its word; then splits.
    let dust: Vec<i16> = stored[stored.len() - 4..].iter().map(|r| r.1).collect();
    let code = |e: Ending| i16::from(e.code());
    assert_eq!(
        dust,
        [code(Ending::CancelledByAgreement), code(Ending::Split), code(Ending::Split), code(Ending::Split)]
    );
    assert_eq!(
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM checkpoints").fetch_one(pool).await?,
        checkpoints,
        "nothing but the endings changes"
    );
    Ok(())
}
