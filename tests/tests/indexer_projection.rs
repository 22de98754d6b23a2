//! The indexer's projections say what the chain says: pacts in every status, built with every event
//! type, are indexed and compared field by field with the contracts' own getters.

use agentpact_contracts::{Initiator, PactStatus};
use agentpact_indexer::{Config, Contracts, Indexer, Target};
use agentpact_tests::{
    HarnessError,
    chain::{ether, send},
    pacts::{DEADLINE_IN, Market},
    postgres::TestDatabase,
};
use alloy::{
    primitives::{Address, U256},
    providers::Provider,
};
use sqlx::Row;

type Result = std::result::Result<(), HarnessError>;

fn indexer(m: &Market, db: &TestDatabase) -> Indexer<alloy::providers::DynProvider> {
    let d = m.chain.deployment;
    let target = Target {
        chain_id: m.chain.anvil.chain_id(),
        contracts: Contracts { agent_pact: d.agent_pact, oracle_registry: d.oracle_registry },
        deployment_block: d.block,
    };
    Indexer::new(db.pool().clone(), m.chain.provider.clone(), target, Config::default())
}

/// Pacts in every status, reached through every kind of event.
async fn every_status(m: &Market) -> std::result::Result<(), HarnessError> {
    let pact = &m.chain.pact;
    let pay = ether(1) + U256::from(3u8);
    m.create(m.terms(Initiator::Seller, pay).await?).await?; // NEGOTIATING
    m.funded(Initiator::Buyer, pay).await?; // FUNDED
    let started = m.funded(Initiator::Seller, pay).await?;
    send(pact.startWork(started).from(m.cast.seller)).await?; // IN_PROGRESS
    let scoring = m.funded(Initiator::Buyer, pay).await?;
    m.submitted(scoring).await?;
    m.score(scoring, &[77]).await?; // PENDING_VERIFY with one score
    m.pending_approval(Initiator::Seller, pay).await?; // PENDING_APPROVAL
    let approved = m.pending_approval(Initiator::Buyer, pay).await?;
    send(pact.approveWork(approved).from(m.cast.buyer)).await?; // COMPLETED
    let failed = m.funded(Initiator::Seller, pay).await?;
    m.submitted(failed).await?;
    m.verified(failed, &[10, 20]).await?; // DISPUTED by a failing score
    let rejected = m.pending_approval(Initiator::Buyer, pay).await?;
    send(pact.rejectWork(rejected).from(m.cast.buyer)).await?;
    send(pact.resolveDispute(rejected, false).from(m.cast.arbitrator)).await?; // REFUNDED by ruling
    let (cancelled, _) = m.create(m.terms(Initiator::Buyer, pay).await?).await?;
    send(pact.cancelPact(cancelled).from(m.cast.buyer)).await?;
    let raised = m.funded(Initiator::Buyer, pay).await?;
    send(pact.raiseDispute(raised, m.cast.arbitrator).from(m.cast.seller)).await?;
    let timed_out = m.funded(Initiator::Seller, pay).await?;
    m.chain.increase_time(DEADLINE_IN + 1).await?;
    send(pact.claimTimeout(timed_out).from(m.cast.buyer)).await?; // REFUNDED by timeout
    m.withdraw_all(m.cast.buyer).await?;

    let registry = &m.chain.registry;
    let leaving = m.chain.accounts[8];
    m.register_oracle(leaving).await?;
    send(registry.increaseStake().from(m.cast.oracles[0]).value(U256::from(5u8))).await?;
    send(registry.updateCapabilities(vec!["audit".into()]).from(m.cast.oracles[1])).await?;
    send(registry.deregister().from(leaving)).await?;
    let gone = m.chain.accounts[9];
    m.register_oracle(gone).await?;
    send(registry.deregister().from(gone)).await?;
    m.chain.increase_time(m.chain.options.oracle_cooldown_secs).await?;
    send(registry.withdrawStake().from(gone)).await?;
    Ok(())
}

#[tokio::test]
async fn projections_match_the_contracts_field_by_field() -> Result {
    let m = Market::open().await?;
    every_status(&m).await?;
    let db = TestDatabase::create().await?;
    let pass = indexer(&m, &db).catch_up().await?;
    let head = m.chain.provider.get_block_number().await?;
    assert!(matches!(pass, agentpact_indexer::Pass::Indexed(cp) if cp.block_number == head), "{pass:?}");

    let count = m.chain.pact.pactCount().call().await?;
    let mut statuses = std::collections::HashSet::new();
    for n in 0..count.to::<u64>() {
        let id = U256::from(n);
        let p = m.chain.pact.getPact(id).call().await?;
        let row = sqlx::query(
            "SELECT status, initiator, buyer, seller, arbitrator, spec_hash, spec_uri, threshold, score_count,
                    final_score, proof_hash, payment::text, buyer_stake::text, seller_stake::text, review_period,
                    extract(epoch FROM deadline)::bigint AS deadline,
                    coalesce(extract(epoch FROM submitted_at)::bigint, 0) AS submitted_at,
                    coalesce(extract(epoch FROM verified_at)::bigint, 0) AS verified_at,
                    coalesce(extract(epoch FROM disputed_at)::bigint, 0) AS disputed_at,
                    extract(epoch FROM created_at)::bigint AS created_at
             FROM pacts WHERE pact_id = $1::text::numeric",
        )
        .bind(id.to_string())
        .fetch_one(db.pool())
        .await?;
        let address = |col: &str| -> Address {
            row.get::<Option<Vec<u8>>, _>(col).map(|b| Address::from_slice(&b)).unwrap_or_default()
        };
        let amount = |col: &str| -> U256 { row.get::<String, _>(col).parse().unwrap_or(U256::MAX) };
        let secs = |col: &str| -> u64 { row.get::<i64, _>(col) as u64 };
        let context = format!("pact {n}");
        assert_eq!(row.get::<i16, _>("status"), i16::from(p.status), "{context} status");
        assert_eq!(row.get::<i16, _>("initiator"), i16::from(p.initiator), "{context}");
        assert_eq!(
            (address("buyer"), address("seller"), address("arbitrator")),
            (p.buyer, p.seller, p.arbitrator),
            "{context}"
        );
        assert_eq!(row.get::<Vec<u8>, _>("spec_hash"), p.specHash.to_vec(), "{context}");
        assert_eq!(row.get::<String, _>("spec_uri"), p.specUri, "{context}");
        assert_eq!(row.get::<i16, _>("threshold"), i16::from(p.threshold), "{context}");
        assert_eq!(row.get::<i16, _>("score_count"), i16::from(p.scoreCount), "{context}");
        assert_eq!(
            row.get::<Option<i16>, _>("final_score").unwrap_or(0),
            i16::from(p.finalScore),
            "{context}"
        );
        assert_eq!(
            row.get::<Option<Vec<u8>>, _>("proof_hash").unwrap_or(vec![0; 32]),
            p.proofHash.to_vec(),
            "{context}"
        );
        assert_eq!(
            (amount("payment"), amount("buyer_stake"), amount("seller_stake")),
            (p.payment, p.buyerStake, p.sellerStake),
            "{context}"
        );
        assert_eq!(row.get::<i64, _>("review_period") as u64, p.reviewPeriod, "{context}");
        assert_eq!(secs("deadline"), p.deadline, "{context}");
        assert_eq!(secs("created_at"), p.createdAt, "{context}");
        assert_eq!(secs("submitted_at"), p.submittedAt, "{context}");
        assert_eq!(secs("verified_at"), p.verifiedAt, "{context}");
        assert_eq!(secs("disputed_at"), p.disputedAt, "{context}");

        let oracles: Vec<(Vec<u8>, i16)> = sqlx::query_as(
            "SELECT oracle, weight FROM pact_oracles WHERE pact_id = $1::text::numeric ORDER BY position",
        )
        .bind(id.to_string())
        .fetch_all(db.pool())
        .await?;
        let expected: Vec<(Vec<u8>, i16)> =
            p.oracles.iter().zip(&p.weights).map(|(o, w)| (o.to_vec(), i16::from(*w))).collect();
        assert_eq!(oracles, expected, "{context} oracles");
        for oracle in &p.oracles {
            let v = m.chain.pact.getVerification(id, *oracle).call().await?;
            let score: Option<i16> = sqlx::query_scalar(
                "SELECT score FROM verifications WHERE pact_id = $1::text::numeric AND oracle = $2",
            )
            .bind(id.to_string())
            .bind(oracle.to_vec())
            .fetch_optional(db.pool())
            .await?;
            assert_eq!(score, v.submitted.then_some(i16::from(v.score)), "{context} score of {oracle}");
        }
        statuses.insert(PactStatus::try_from(p.status).map_err(|e| HarnessError::Process(e.to_string()))?);
    }
    assert_eq!(statuses.len(), PactStatus::ALL.len(), "the scenario misses a status: {statuses:?}");

    for who in &m.chain.accounts {
        let owed: String = sqlx::query_scalar(
            "SELECT ((SELECT coalesce(sum(amount), 0) FROM payouts WHERE account = $1)
                   - (SELECT coalesce(sum(amount), 0) FROM withdrawals WHERE account = $1))::text",
        )
        .bind(who.to_vec())
        .fetch_one(db.pool())
        .await?;
        assert_eq!(owed.parse::<U256>().ok(), Some(m.credit(*who).await?), "credit of {who}");

        let o = m.chain.registry.getOracle(*who).call().await?;
        let row: Option<(String, Vec<String>, String)> =
            sqlx::query_as("SELECT stake::text, capabilities, status FROM oracles WHERE address = $1")
                .bind(who.to_vec())
                .fetch_optional(db.pool())
                .await?;
        let expected = o.registered.then(|| {
            let status = if o.active { "active" } else { "deregistered" };
            (o.stake.to_string(), o.capabilities.clone(), status.to_owned())
        });
        assert_eq!(row, expected, "oracle {who}");
    }
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
