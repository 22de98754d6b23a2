//! Escrow v4's endings (#55 step 2, docs/contracts.md §Endings): every way a pact ends says which
//! one, on chain, in `PactEnded(pactId, ending, status)` as the last event of its last
//! transaction and in `getLedger(pactId).ending`, and no other transaction says it; a division's
//! status follows its amounts, so a settlement whose seller part rounds to nothing is a cancel by
//! agreement ending REFUNDED, never a "SPLIT" that paid the seller 0 wei.

use agentpact_contracts::{
    AgentPact::AgentPactEvents,
    Ending, Initiator, PactStatus,
    rules::{self, Division},
};
use agentpact_tests::{
    HarnessError,
    chain::{Mined, ether, send},
    pacts::{DEADLINE_IN, Market, REVIEW_PERIOD},
};
use alloy::primitives::U256;

type Result<T = ()> = std::result::Result<T, HarnessError>;

const DISPUTE_PERIOD: u64 = 7 * 24 * 60 * 60;

/// Asserts that `mined` ended pact `id` with `ending` in `status`: `PactEnded` is its last event,
/// once, and the pact and its ledger say the same afterwards.
async fn assert_ended(m: &Market, id: U256, mined: &Mined, ending: Ending, status: PactStatus) -> Result {
    let events = mined.events();
    let ended: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentPactEvents::PactEnded(e) => Some((e.pactId, e.ending, e.status)),
            _ => None,
        })
        .collect();
    assert_eq!(ended, [(id, ending.code(), status.code())], "pact {id}: {events:?}");
    assert!(matches!(events.last(), Some(AgentPactEvents::PactEnded(_))), "PactEnded comes last: {events:?}");
    assert_eq!(m.status(id).await?, status);
    assert_eq!(m.chain.pact.getLedger(id).call().await?.ending, ending.code());
    Ok(())
}

/// Asserts that `mined` ended nothing.
fn assert_not_ended(mined: &Mined) {
    let events = mined.events();
    assert!(!events.iter().any(|e| matches!(e, AgentPactEvents::PactEnded(_))), "{events:?}");
}

#[tokio::test]
async fn every_way_to_end_a_pact_names_its_ending_last_and_once() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let pay = ether(1);

    let approved = m.pending_approval(Initiator::Buyer, pay).await?;
    let mined = send(pact.approveWork(approved).from(m.cast.buyer)).await?;
    assert_ended(&m, approved, &mined, Ending::Completed, PactStatus::Completed).await?;

    let (cancelled, _) = m.create(m.terms(Initiator::Buyer, pay).await?).await?;
    let mined = send(pact.cancelPact(cancelled).from(m.cast.buyer)).await?;
    assert_ended(&m, cancelled, &mined, Ending::Withdrawn, PactStatus::Refunded).await?;

    let ruled = m.funded(Initiator::Seller, pay).await?;
    let raised = send(pact.raiseDispute(ruled, m.cast.arbitrator).from(m.cast.buyer)).await?;
    assert_not_ended(&raised);
    let mined = send(pact.resolveDisputeShare(ruled, 7_000).from(m.cast.arbitrator)).await?;
    assert_ended(&m, ruled, &mined, Ending::Ruled, PactStatus::Split).await?;

    let lost = m.funded(Initiator::Buyer, pay).await?;
    send(pact.raiseDispute(lost, m.cast.arbitrator).from(m.cast.seller)).await?;
    let mined = send(pact.resolveDispute(lost, false).from(m.cast.arbitrator)).await?;
    assert_ended(&m, lost, &mined, Ending::Ruled, PactStatus::Refunded).await?;

    let cancel = m.funded(Initiator::Buyer, pay).await?;
    send(pact.proposeSettlement(cancel, 0, 0).from(m.cast.seller)).await?;
    let mined = send(pact.acceptSettlement(cancel, 1, 0).from(m.cast.buyer)).await?;
    assert_ended(&m, cancel, &mined, Ending::CancelledByAgreement, PactStatus::Refunded).await?;

    let split = m.funded(Initiator::Buyer, pay).await?;
    send(pact.proposeSettlement(split, 6_000, 0).from(m.cast.buyer)).await?;
    let mined = send(pact.acceptSettlement(split, 1, 6_000).from(m.cast.seller)).await?;
    assert_ended(&m, split, &mined, Ending::Split, PactStatus::Split).await?;

    let all = m.funded(Initiator::Buyer, pay).await?;
    send(pact.proposeSettlement(all, 10_000, 0).from(m.cast.buyer)).await?;
    let mined = send(pact.acceptSettlement(all, 1, 10_000).from(m.cast.seller)).await?;
    assert_ended(&m, all, &mined, Ending::Split, PactStatus::Completed).await?;

    // The clocks, from one start: the review lapses, the deadline passes, the arbitrator stays
    // silent, nobody accepts.
    let auto = m.pending_approval(Initiator::Seller, pay).await?;
    let abandoned = m.funded(Initiator::Seller, pay).await?;
    let silent = m.funded(Initiator::Buyer, pay).await?;
    send(pact.raiseDispute(silent, m.cast.arbitrator).from(m.cast.buyer)).await?;
    let (unaccepted, _) = m.create(m.terms(Initiator::Seller, pay).await?).await?;
    m.chain.increase_time(DEADLINE_IN.max(REVIEW_PERIOD).max(DISPUTE_PERIOD) + 1).await?;
    let mined = send(pact.autoApprove(auto).from(m.cast.stranger)).await?;
    assert_ended(&m, auto, &mined, Ending::Completed, PactStatus::Completed).await?;
    let mined = send(pact.claimTimeout(abandoned).from(m.cast.stranger)).await?;
    assert_ended(&m, abandoned, &mined, Ending::RefundedAfterFailure, PactStatus::Refunded).await?;
    let mined = send(pact.claimTimeout(silent).from(m.cast.stranger)).await?;
    assert_ended(&m, silent, &mined, Ending::ArbitratorSilent, PactStatus::Refunded).await?;
    let mined = send(pact.claimTimeout(unaccepted).from(m.cast.stranger)).await?;
    assert_ended(&m, unaccepted, &mined, Ending::Expired, PactStatus::Refunded).await?;

    // A live pact's ledger says LIVE.
    let live = m.funded(Initiator::Buyer, pay).await?;
    assert_eq!(pact.getLedger(live).call().await?.ending, Ending::Live.code());
    Ok(())
}

#[tokio::test]
async fn a_division_that_rounds_the_sellers_part_to_nothing_is_not_a_split() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    // The smallest payment: 10 wei, each stake 1, the pot 12.
    let pay = U256::from(10u8);
    for (share, by) in [
        (1, Division::Settlement),
        (999, Division::Settlement),
        (1_000, Division::Settlement),
        (833, Division::Ruling),
        (834, Division::Ruling),
        (9_999, Division::Ruling),
    ] {
        let id = m.funded(Initiator::Buyer, pay).await?;
        let before = (m.credit(m.cast.seller).await?, m.credit(m.cast.buyer).await?);
        let mined = match by {
            Division::Settlement => {
                send(pact.proposeSettlement(id, share, 0).from(m.cast.buyer)).await?;
                send(pact.acceptSettlement(id, 1, share).from(m.cast.seller)).await?
            }
            Division::Ruling => {
                send(pact.raiseDispute(id, m.cast.arbitrator).from(m.cast.buyer)).await?;
                send(pact.resolveDisputeShare(id, share).from(m.cast.arbitrator)).await?
            }
        };
        let (status, ending) = rules::end_of_division(pay, share, by);
        assert_ended(&m, id, &mined, ending, status).await?;
        let (seller, buyer) = rules::division(pay, share, by);
        let after = (m.credit(m.cast.seller).await?, m.credit(m.cast.buyer).await?);
        assert_eq!((after.0 - before.0, after.1 - before.1), (seller, buyer), "{share} bp by {by}");
    }
    // The figures the rule gives, spelled out: 1 and 999 bp of 10 wei give the seller nothing of the
    // payment (its stake back: a cancel by agreement); 1000 bp gives it 1 wei (a split); 833 bp of
    // the 12-wei pot rounds to 0 (REFUNDED), 834 bp to 1 (SPLIT); every ruling is RULED.
    let ended: Vec<_> = [
        (1, Division::Settlement),
        (1_000, Division::Settlement),
        (833, Division::Ruling),
        (834, Division::Ruling),
    ]
    .map(|(share, by)| rules::end_of_division(pay, share, by))
    .to_vec();
    assert_eq!(
        ended,
        [
            (PactStatus::Refunded, Ending::CancelledByAgreement),
            (PactStatus::Split, Ending::Split),
            (PactStatus::Refunded, Ending::Ruled),
            (PactStatus::Split, Ending::Ruled),
        ]
    );
    Ok(())
}
