//! Reorganisations: after the chain abandons indexed blocks, the orphaned events disappear and the
//! index equals a fresh index of the canonical chain, for depths 1 to 6. A node that merely lags
//! behind the index is waited for, not taken for a reorg. Reorgs are made with `evm_snapshot` /
//! `evm_revert`: the reverted blocks are replaced by different ones at the same heights, among
//! them agent profile changes and feedback, an offer to settle and its acceptance (a SPLIT pact
//! and its payouts), in pacts, payouts and withdrawals of ETH and USDC, and ERC-8004 registrations,
//! URI changes, feedback (grounded and not) and revocations, and a pact of two stages whose stages
//! the two branches move differently (`pact_stages`).

use agentpact_contracts::Initiator;
use agentpact_indexer::Pass;
use agentpact_tests::{
    HarnessError,
    agents::profile,
    chain::{ether, hash, send},
    erc8004::Registries,
    index::{dump, indexer, small_ranges},
    pacts::{Market, creator_deposit},
    postgres::TestDatabase,
};
use alloy::{primitives::U256, providers::Provider};

type Result = std::result::Result<(), HarnessError>;

/// Pacts the two branches act on, made before the fork: two running ones (`a` in ETH, `b` in
/// USDC), a running pact of two stages (`staged`, in ETH) and a completed one in USDC whose seller
/// is a registered agent.
struct Before {
    a: U256,
    b: U256,
    staged: U256,
    done: U256,
    /// The seller's ERC-8004 agent id.
    agent: U256,
}

async fn shared_history(m: &Market) -> std::result::Result<Before, HarnessError> {
    let usdc = *m.chain.usdc.address();
    let done = m.completed_in(usdc, Initiator::Seller, usdc_units(1)).await?;
    send(m.chain.agents.register(profile("Seller", &[("audit", ether(1))])).from(m.cast.seller)).await?;
    let a = m.funded(Initiator::Buyer, ether(2)).await?;
    let b = m.funded_in(usdc, Initiator::Seller, usdc_units(3)).await?;
    let staged = m.staged(alloy::primitives::Address::ZERO, Initiator::Buyer, &[ether(1), ether(2)]).await?;
    send(m.chain.pact.startWork(staged).from(m.cast.seller)).await?;
    let registries = Registries::of(&m.chain);
    let agent =
        registries.register(m.cast.seller, "data:application/json,{\"name\":\"Seller\"}".into()).await?;
    registries.rate(agent, m.cast.buyer, 70, &format!("pact:{done}"), "").await?;
    Ok(Before { a, b, staged, done, agent })
}

/// Step `i` of the branch that will be abandoned: one transaction, one block.
async fn abandoned_step(m: &Market, p: &Before, i: usize) -> std::result::Result<(), HarnessError> {
    let pact = &m.chain.pact;
    match i {
        0 => {
            send(pact.submitStage(p.staged, 0, hash(7)).from(m.cast.seller)).await?;
            send(pact.proposeSettlement(p.a, 5_000, 0).from(m.cast.buyer)).await?;
            let registries = Registries::of(&m.chain);
            registries.rate(p.agent, m.cast.buyer, 90, &format!("pact:{}", p.done), "").await?;
            send(registries.identity.setAgentURI(p.agent, "ipfs://moved".into()).from(m.cast.seller)).await?;
        }
        1 => drop(send(pact.acceptSettlement(p.a, 1, 5_000).from(m.cast.seller)).await?), // SPLIT, paid out
        2 => {
            let cheaper = profile("Seller", &[("audit", ether(1) / U256::from(2)), ("review", ether(1))]);
            drop(send(m.chain.agents.updateProfile(cheaper).from(m.cast.seller)).await?)
        }
        3 => drop(m.register_oracle(m.chain.accounts[10]).await?),
        4 => drop(m.withdraw_in(*m.chain.usdc.address(), m.cast.seller).await?),
        _ => drop(
            send(m.chain.agents.submitFeedback(p.done, 5, vec![], String::new()).from(m.cast.buyer)).await?,
        ),
    }
    Ok(())
}

/// Step `i` of the branch that wins: different transactions at the same heights.
async fn canonical_step(m: &Market, p: &Before, i: usize) -> std::result::Result<(), HarnessError> {
    let pact = &m.chain.pact;
    match i {
        0 => {
            send(pact.disputeStage(p.staged, 1, m.cast.arbitrator).from(m.cast.buyer)).await?;
            send(pact.raiseDispute(p.a, m.cast.arbitrator).from(m.cast.buyer)).await?;
            let registries = Registries::of(&m.chain);
            send(registries.reputation.revokeFeedback(p.agent, 1).from(m.cast.buyer)).await?;
            registries.rate(p.agent, m.cast.stranger, 10, "", "").await?;
        }
        1 => {
            // A USDC pact in one transaction: the deposit comes with a permit.
            let usdc = *m.chain.usdc.address();
            let terms = m.terms_in(usdc, Initiator::Buyer, usdc_units(6)).await?;
            let permit =
                m.permit(usdc, m.cast.buyer, creator_deposit(Initiator::Buyer, terms.payment)).await?;
            drop(send(pact.createPactWithPermit(terms, permit).from(m.cast.buyer)).await?)
        }
        2 => drop(send(m.chain.agents.deactivate().from(m.cast.seller)).await?),
        3 => drop(m.withdraw_in(*m.chain.usdc.address(), m.cast.buyer).await?),
        4 => drop(send(pact.startWork(p.b).from(m.cast.seller)).await?),
        _ => drop(
            send(m.chain.agents.submitFeedback(p.done, 2, vec![], String::new()).from(m.cast.buyer)).await?,
        ),
    }
    Ok(())
}

/// `n` whole USDC in base units.
fn usdc_units(n: u64) -> U256 {
    U256::from(n * 1_000_000)
}

async fn snapshot(m: &Market) -> std::result::Result<U256, HarnessError> {
    Ok(m.chain.provider.raw_request("evm_snapshot".into(), ()).await?)
}

async fn revert(m: &Market, id: U256) -> Result {
    let reverted: bool = m.chain.provider.raw_request("evm_revert".into(), (id,)).await?;
    assert!(reverted, "evm_revert refused snapshot {id}");
    Ok(())
}

#[tokio::test]
async fn reorged_blocks_leave_the_index_equal_to_a_fresh_index_of_the_canonical_chain() -> Result {
    for depth in [1usize, 2, 3, 6] {
        let m = Market::open().await?;
        let before = shared_history(&m).await?;
        let db = TestDatabase::create().await?;
        let mut ix = indexer(&m.chain, db.pool(), small_ranges());
        ix.catch_up().await?;

        let fork = m.chain.provider.get_block_number().await?;
        let snap = snapshot(&m).await?;
        for i in 0..depth {
            abandoned_step(&m, &before, i).await?;
        }
        ix.catch_up().await?;
        let on_abandoned_branch = dump(db.pool()).await?;

        // The node goes back to the fork: the same blocks up to there, nothing after. That is a
        // lagging node as far as anyone can tell; the index must wait and change nothing.
        revert(&m, snap).await?;
        assert_eq!(ix.catch_up().await?, Pass::Waiting { head: fork }, "depth {depth}");
        assert_eq!(dump(db.pool()).await?, on_abandoned_branch, "a lagging node changed the index");

        for i in 0..depth {
            canonical_step(&m, &before, i).await?;
        }
        ix.catch_up().await?;

        let fresh = TestDatabase::create().await?;
        indexer(&m.chain, fresh.pool(), small_ranges()).catch_up().await?;
        let (rebuilt, expected) = (dump(db.pool()).await?, dump(fresh.pool()).await?);
        assert_eq!(rebuilt, expected, "depth {depth}: the reorged index differs from a fresh one");
        assert_ne!(rebuilt, on_abandoned_branch, "depth {depth}: the reorg changed nothing");
    }
    Ok(())
}

#[tokio::test]
async fn a_reorg_deeper_than_the_finality_depth_stops_the_indexer_without_writing() -> Result {
    let m = Market::open().await?;
    let before = shared_history(&m).await?;
    let db = TestDatabase::create().await?;
    let config = agentpact_indexer::Config { finality_depth: 2, ..small_ranges() };
    let snap = snapshot(&m).await?;
    for i in 0..6 {
        abandoned_step(&m, &before, i).await?;
    }
    let mut ix = indexer(&m.chain, db.pool(), config);
    ix.catch_up().await?;
    let indexed = dump(db.pool()).await?;
    revert(&m, snap).await?;
    for i in 0..6 {
        canonical_step(&m, &before, i).await?;
    }
    let err = ix.catch_up().await.expect_err("a reorg below the finality depth went unnoticed");
    assert!(matches!(err, agentpact_indexer::IndexError::ReorgTooDeep { .. }), "{err}");
    assert!(err.is_fatal());
    assert_eq!(dump(db.pool()).await?, indexed, "the indexer wrote after a reorg it cannot repair");
    Ok(())
}

#[tokio::test]
async fn a_corrupt_journal_row_met_by_a_rollback_stops_the_indexer_naming_it() -> Result {
    let m = Market::open().await?;
    let before = shared_history(&m).await?;
    let db = TestDatabase::create().await?;
    let snap = snapshot(&m).await?;
    for i in 0..3 {
        abandoned_step(&m, &before, i).await?;
    }
    let mut ix = indexer(&m.chain, db.pool(), small_ranges());
    ix.catch_up().await?;
    // The first journal row of pact `a` (kept below the fork, so the rollback replays it) holds a
    // hash that is no hash.
    sqlx::query(
        "UPDATE events SET tx_hash = '\\x0102' WHERE (block_number, log_index) =
           (SELECT block_number, log_index FROM events WHERE pact_id = $1::text::numeric
            ORDER BY block_number, log_index LIMIT 1)",
    )
    .bind(before.a.to_string())
    .execute(db.pool())
    .await?;
    let indexed = dump(db.pool()).await?;
    revert(&m, snap).await?;
    for i in 0..3 {
        canonical_step(&m, &before, i).await?;
    }
    let err = ix.catch_up().await.expect_err("a corrupt journal row was replayed");
    assert!(matches!(err, agentpact_indexer::IndexError::Corrupt(_)), "{err}");
    assert!(err.is_fatal(), "a corrupt row needs a person, not a retry");
    let said = err.to_string();
    assert!(said.contains("events") && said.contains("tx_hash") && said.contains("0x0102"), "{said}");
    assert_eq!(dump(db.pool()).await?, indexed, "nothing of the rollback was committed");
    Ok(())
}

#[tokio::test]
async fn a_restarted_chain_under_the_same_id_is_refused() -> Result {
    let first = Market::open().await?;
    shared_history(&first).await?;
    let db = TestDatabase::create().await?;
    indexer(&first.chain, db.pool(), small_ranges()).catch_up().await?;
    let indexed = dump(db.pool()).await?;
    drop(first);

    // "anvil restarted": a new chain from block 0 with the same chain id.
    let second = Market::open().await?;
    let err = indexer(&second.chain, db.pool(), small_ranges())
        .catch_up()
        .await
        .expect_err("a new chain was indexed into the old chain's tables");
    assert!(matches!(err, agentpact_indexer::IndexError::ChainMismatch { .. }), "{err}");
    assert!(err.to_string().contains("fresh database"), "the error says what to do: {err}");
    assert_eq!(dump(db.pool()).await?, indexed);
    Ok(())
}

#[tokio::test]
async fn a_ranking_that_fails_leaves_the_pass_indexed_and_counts_the_error() -> Result {
    let m = Market::open().await?;
    shared_history(&m).await?;
    let db = TestDatabase::create().await?;
    let mut ix = agentpact_tests::index::ranking(&m.chain, db.pool(), vec![m.cast.buyer]);
    ix.catch_up().await?;
    let generation = "SELECT count(*) FROM reputation_scores";
    let scores: i64 = sqlx::query_scalar(generation).fetch_one(db.pool()).await?;
    assert!(scores > 0, "the first pass wrote no generation");
    // A pair whose evidence is no number (written by hand): every ranking of the chain fails on it
    // the same way, until someone re-indexes. The pairs are marked changed, and a block comes.
    sqlx::query(
        "UPDATE reputation_pairs SET evidence = 'NaN' WHERE (ratee, role, rater) =
           (SELECT ratee, role, rater FROM reputation_pairs ORDER BY 1, 2, 3 LIMIT 1)",
    )
    .execute(db.pool())
    .await?;
    sqlx::query("UPDATE reputation_runs SET dirty = true").execute(db.pool()).await?;
    m.chain.mine().await?;
    let head = m.chain.provider.get_block_number().await?;
    let pass = ix.catch_up().await?;
    assert!(matches!(pass, Pass::Indexed(cp) if cp.block_number == head), "{pass:?}");
    let metrics = ix.metrics().render();
    assert!(metrics.contains("kind=\"ranking\"} 1"), "the failed ranking is not counted: {metrics}");
    let (dirty, kept): (bool, i64) = sqlx::query_as(
        "SELECT (SELECT dirty FROM reputation_runs), (SELECT count(*) FROM reputation_scores)",
    )
    .fetch_one(db.pool())
    .await?;
    assert_eq!((dirty, kept), (true, scores), "the previous generation stands, still due");
    // The next pass retries it (every = 0), and the session goes on.
    m.chain.mine().await?;
    ix.catch_up().await?;
    assert!(ix.metrics().render().contains("kind=\"ranking\"} 2"), "the ranking was not retried");
    Ok(())
}
