//! Escrow v4's verdicts void offers (#55 step 3, docs/proposals/55-escrow-v4.md §3): the three
//! attacks of an offer outliving the verdict it was priced before, replayed and each refused by
//! name beside the honest path, and `voidOffers`' own rules, each at its exact second.
//! "In one block" is one block: automine is turned off, both transactions are sent, one
//! `evm_mine` takes them in the order sent, and the refused one's error is read from the node's
//! trace of it. The clock is set to exact seconds; a snapshot lets both sides of a boundary be
//! tried on one pact.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator, PactStatus,
    rules::VERDICT_MARGIN,
};
use agentpact_tests::{
    HarnessError,
    chain::{ether, hash, revert_of, send},
    pacts::{Market, stake},
};
use alloy::primitives::{Address, U256};

type Result = std::result::Result<(), HarnessError>;

const VERIFICATION_PERIOD: u64 = 3 * 24 * 60 * 60;
const DISPUTE_PERIOD: u64 = 7 * 24 * 60 * 60;
/// `NotVerdictGiver(who, have)`.
fn not_verdict_giver(who: Address, have: PactStatus) -> AgentPactErrors {
    AgentPactErrors::NotVerdictGiver(AgentPact::NotVerdictGiver { who, have: have.code() })
}

/// `OfferVoided(offeredAt, epoch)`.
fn voided(offered_at: u32, epoch: u32) -> AgentPactErrors {
    AgentPactErrors::OfferVoided(AgentPact::OfferVoided { offeredAt: offered_at, epoch })
}

/// The attack: the buyer offers 60% while the work is being verified. The oracle scores it 0 and,
/// in the same block right behind the score, the seller takes the offer that was priced before
/// the score (v3: SPLIT, the seller 0.6 ETH of a payment the score says it did not earn). Now the
/// score voids the offer: `OfferVoided(n, n + 1)`, and the pact goes on to DISPUTED as the scores
/// say. Honest paths: the seller taking the offer before any score, and a new offer made after the
/// score (priced on it) taken at once.
#[tokio::test]
async fn offer_outlives_the_verdict() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let payment = ether(1);
    let id = m.funded(Initiator::Buyer, payment).await?;
    m.submitted(id).await?;
    send(pact.proposeSettlement(id, 6_000, 0).from(m.cast.buyer)).await?;
    let n = pact.getLedger(id).call().await?.epoch;
    assert_eq!(pact.getLedger(id).call().await?.offerEpoch, n, "the offer records the epoch it was made at");

    // Honest: taken before any verdict, the offer ends the pact as priced.
    let before = m.chain.snapshot().await?;
    let seller0 = m.credit(m.cast.seller).await?;
    send(pact.acceptSettlement(id, 1, 6_000).from(m.cast.seller)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Split);
    let sixty = payment * U256::from(6u8) / U256::from(10u8);
    assert_eq!(m.credit(m.cast.seller).await? - seller0, sixty + stake(payment));
    m.chain.restore(before).await?;

    // The attack: the score and the acceptance behind it, in one block.
    let score = pact.submitVerification(id, 0, hash(3)).from(m.cast.oracles[0]).into_transaction_request();
    let take = pact.acceptSettlement(id, 1, 6_000).from(m.cast.seller).into_transaction_request();
    let mined = m.in_one_block(vec![score, take]).await?;
    assert!(mined[0].receipt.status(), "the score is mined");
    assert_eq!(mined[1].error, Some(voided(n, n + 1)), "the acceptance behind the score");
    assert_eq!(pact.getLedger(id).call().await?.epoch, n + 1, "a score is a verdict");
    assert_eq!(m.status(id).await?, PactStatus::PendingVerify, "nothing was settled");
    assert_eq!(pact.getSettlement(id).call().await?.by, m.cast.buyer, "the offer is on record, void");

    // In its own later block the acceptance is refused the same way.
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, 1, 6_000).from(m.cast.seller)).await,
        voided(n, n + 1)
    );

    // Honest: an offer made after the score, priced on it, stands until the next verdict.
    let before = m.chain.snapshot().await?;
    send(pact.proposeSettlement(id, 1_000, 0).from(m.cast.buyer)).await?;
    send(pact.acceptSettlement(id, 2, 1_000).from(m.cast.seller)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Split, "an offer made after the verdict");
    m.chain.restore(before).await?;

    // The other oracle scores 0 too: the pact finalizes to DISPUTED as the scores say.
    send(pact.submitVerification(id, 0, hash(4)).from(m.cast.oracles[1])).await?;
    send(pact.finalizeVerification(id).from(m.cast.stranger)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Disputed);
    assert_eq!(pact.getPact(id).call().await?.finalScore, 0);
    Ok(())
}

/// The attack: the seller's 50% offer stands in a dispute, and the buyer, seeing the arbitrator's
/// ruling of 100% to the seller coming, takes it ahead of the ruling (v3: SPLIT, the seller 0.6
/// ETH instead of the pot's 1.2). The arbitrator sends `voidOffers` first, which tells nothing of
/// its ruling; the acceptance behind it is `OfferVoided`, and the ruling then pays the seller the
/// whole pot to the wei. An acceptance ahead of `voidOffers` knew nothing of the ruling and ends
/// the pact as offered; one behind the ruling itself is v3's `SettlementStale`.
#[tokio::test]
async fn offer_outlives_the_pending_ruling() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let payment = ether(1);
    let pot = payment + stake(payment) + stake(payment);
    let id = m.funded(Initiator::Buyer, payment).await?;
    send(pact.raiseDispute(id, m.cast.arbitrator).from(m.cast.buyer)).await?;
    send(pact.proposeSettlement(id, 5_000, 0).from(m.cast.seller)).await?;
    let n = pact.getLedger(id).call().await?.epoch;
    let (seller0, buyer0) = (m.credit(m.cast.seller).await?, m.credit(m.cast.buyer).await?);

    // Honest: taken ahead of any verdict, the offer ends the pact as priced.
    let before = m.chain.snapshot().await?;
    send(pact.acceptSettlement(id, 1, 5_000).from(m.cast.buyer)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Split);
    assert_eq!(m.credit(m.cast.seller).await? - seller0, payment / U256::from(2u8) + stake(payment));
    m.chain.restore(before).await?;

    // The ruling first, the acceptance behind it: v3's stale offer.
    let before = m.chain.snapshot().await?;
    let rule = pact.resolveDispute(id, true).from(m.cast.arbitrator).into_transaction_request();
    let take = pact.acceptSettlement(id, 1, 5_000).from(m.cast.buyer).into_transaction_request();
    let mined = m.in_one_block(vec![rule, take]).await?;
    assert!(mined[0].receipt.status(), "the ruling is mined");
    let stale = AgentPactErrors::SettlementStale(AgentPact::SettlementStale {
        offeredIn: PactStatus::Disputed.code(),
        have: PactStatus::Completed.code(),
    });
    assert_eq!(mined[1].error, Some(stale), "the acceptance behind the ruling");
    m.chain.restore(before).await?;

    // The attack: the arbitrator voids the offers, the buyer's acceptance lands right behind.
    let void = pact.voidOffers(id).from(m.cast.arbitrator).into_transaction_request();
    let take = pact.acceptSettlement(id, 1, 5_000).from(m.cast.buyer).into_transaction_request();
    let mined = m.in_one_block(vec![void, take]).await?;
    assert!(mined[0].receipt.status(), "voidOffers is mined");
    let event = mined[0].receipt.decoded_log::<AgentPact::OffersVoided>().map(|l| l.data);
    assert_eq!(event, Some(AgentPact::OffersVoided { pactId: id, by: m.cast.arbitrator, epoch: n + 1 }));
    assert_eq!(mined[1].error, Some(voided(n, n + 1)), "the acceptance behind voidOffers");
    assert_eq!(m.status(id).await?, PactStatus::Disputed);

    // The ruling: all to the seller, the whole pot to the wei; the buyer gets nothing.
    send(pact.resolveDispute(id, true).from(m.cast.arbitrator)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Completed);
    assert_eq!(m.credit(m.cast.seller).await? - seller0, pot, "the seller takes the pot");
    assert_eq!(m.credit(m.cast.buyer).await? - buyer0, U256::ZERO, "the buyer takes nothing");
    Ok(())
}

/// The attack: a seller that never delivered takes the buyer's 30% offer at the deadline second,
/// instead of forfeiting its stake to the timeout a second later (v3: SPLIT). A deadline cannot
/// void an offer, so offers end an hour before it: the default expiry is `deadline − 3600`, taken
/// then (on a snapshot) and refused a second later with `SettlementExpired`; an explicit expiry a
/// second past it, or an offer made in the last hour, is refused with `SettlementExpiryOutOfRange`;
/// the buyer's timeout then takes everything.
#[tokio::test]
async fn offer_outlives_the_deadline() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let payment = ether(1);
    assert_eq!(pact.VERDICT_MARGIN().call().await?, VERDICT_MARGIN);
    let id = m.funded(Initiator::Seller, payment).await?;
    let deadline = pact.getPact(id).call().await?.deadline;
    let latest = deadline - VERDICT_MARGIN;

    let out_of_range = |expires_at: u64, earliest: u64| {
        AgentPactErrors::SettlementExpiryOutOfRange(AgentPact::SettlementExpiryOutOfRange {
            expiresAt: expires_at,
            earliest,
            latest,
        })
    };
    let t = m.chain.now().await? + 1;
    m.chain.at(t).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(id, 3_000, latest + 1).from(m.cast.buyer))
            .await,
        out_of_range(latest + 1, t),
        "an explicit expiry in the last hour"
    );
    send(pact.proposeSettlement(id, 3_000, latest).from(m.cast.buyer)).await?;
    assert_eq!(pact.getSettlement(id).call().await?.expiresAt, latest, "the latest expiry is allowed");
    send(pact.proposeSettlement(id, 3_000, 0).from(m.cast.buyer)).await?;
    assert_eq!(pact.getSettlement(id).call().await?.expiresAt, latest, "0 means an hour before the deadline");

    // Taken at the expiry's second, on a snapshot.
    let before = m.chain.snapshot().await?;
    let seller0 = m.credit(m.cast.seller).await?;
    m.chain.at(latest).await?;
    send(pact.acceptSettlement(id, 2, 3_000).from(m.cast.seller)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Split);
    let thirty = payment * U256::from(3u8) / U256::from(10u8);
    assert_eq!(m.credit(m.cast.seller).await? - seller0, thirty + stake(payment));
    m.chain.restore(before).await?;

    // Offers made in the last hour: with 0 at its first second the offer lives that one second; a
    // second later no offer can be made at all.
    let before = m.chain.snapshot().await?;
    m.chain.at(latest).await?;
    send(pact.proposeSettlement(id, 3_000, 0).from(m.cast.buyer)).await?;
    assert_eq!(pact.getSettlement(id).call().await?.expiresAt, latest);
    m.chain.restore(before).await?;
    let before = m.chain.snapshot().await?;
    m.chain.at(latest + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(id, 3_000, 0).from(m.cast.buyer)).await,
        out_of_range(0, latest + 1),
        "an offer in the window's last hour"
    );
    m.chain.restore(before).await?;

    // The attack, an hour early and at the deadline second: expired.
    let expired = AgentPactErrors::SettlementExpired(AgentPact::SettlementExpired { expiresAt: latest });
    m.chain.at(latest + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, 2, 3_000).from(m.cast.seller)).await,
        expired
    );
    m.chain.at(deadline).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, 2, 3_000).from(m.cast.seller)).await,
        expired,
        "the deadline second"
    );

    // The seller never delivered: the buyer's timeout takes the payment and both stakes.
    let buyer0 = m.credit(m.cast.buyer).await?;
    m.chain.at(deadline + 1).await?;
    send(pact.claimTimeout(id).from(m.cast.buyer)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Refunded);
    assert_eq!(m.credit(m.cast.buyer).await? - buyer0, payment + stake(payment) + stake(payment));
    Ok(())
}

/// `voidOffers` is the verdict giver's alone: while the work is verified, an oracle of the pact
/// that has not scored; while it is disputed, its arbitrator. A stranger, a party, an oracle that
/// already scored, the arbitrator before the dispute and an oracle in the dispute are each
/// `NotVerdictGiver`; each giver voids once (`AlreadyVoided`), until the last second of its
/// window (the next is v3's `VerificationClosed` / `DisputePeriodOver`). Each void adds one to the
/// pact's epoch and is recorded in `voided`.
#[tokio::test]
async fn void_offers_is_the_verdict_givers_once_each_within_its_window() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let void = |id: U256, by: Address| revert_of::<AgentPactErrors, _, _>(pact.voidOffers(id).from(by));
    let (o0, o1) = (m.cast.oracles[0], m.cast.oracles[1]);

    // FUNDED: nobody gives a verdict yet.
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    for who in [m.cast.arbitrator, o0, m.cast.buyer, m.cast.seller, m.cast.stranger] {
        assert_eq!(void(id, who).await, not_verdict_giver(who, PactStatus::Funded), "{who}");
    }

    // PENDING_VERIFY: the oracles that have not scored, once each.
    m.submitted(id).await?;
    let closes = pact.getPact(id).call().await?.submittedAt + VERIFICATION_PERIOD;
    for who in [m.cast.arbitrator, m.cast.buyer, m.cast.seller, m.cast.stranger] {
        assert_eq!(void(id, who).await, not_verdict_giver(who, PactStatus::PendingVerify), "{who}");
    }
    let mined = send(pact.voidOffers(id).from(o0)).await?;
    let event = mined.receipt.decoded_log::<AgentPact::OffersVoided>().map(|l| l.data);
    assert_eq!(event, Some(AgentPact::OffersVoided { pactId: id, by: o0, epoch: 1 }));
    let voided = || async { Ok::<_, HarnessError>(pact.getStage(id, 0).call().await?.voided) };
    assert_eq!((pact.getLedger(id).call().await?.epoch, voided().await?), (1, 1 << 0), "oracle 0's bit");
    assert_eq!(void(id, o0).await, AgentPactErrors::AlreadyVoided(AgentPact::AlreadyVoided { who: o0 }));
    send(pact.submitVerification(id, 90, hash(3)).from(o0)).await?; // voiding does not take its score
    assert_eq!(pact.getLedger(id).call().await?.epoch, 2);
    assert_eq!(void(id, o0).await, not_verdict_giver(o0, PactStatus::PendingVerify), "it has scored");
    let before = m.chain.snapshot().await?;
    m.chain.at(closes).await?;
    send(pact.voidOffers(id).from(o1)).await?;
    let epoch = pact.getLedger(id).call().await?.epoch;
    assert_eq!((epoch, voided().await?), (3, 1 << 0 | 1 << 1), "oracle 1's bit, at the last second");
    m.chain.restore(before).await?;
    m.chain.at(closes + 1).await?;
    assert_eq!(
        void(id, o1).await,
        AgentPactErrors::VerificationClosed(AgentPact::VerificationClosed { closedAt: closes })
    );

    // DISPUTED (the silent oracle scores 0): the arbitrator, once, until the window's last second.
    m.chain.at(closes + 1).await?;
    send(pact.finalizeVerification(id).from(m.cast.stranger)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Disputed, "54 fails the pass mark of 70");
    let ends = pact.getPact(id).call().await?.disputedAt + DISPUTE_PERIOD;
    for who in [o0, o1, m.cast.buyer, m.cast.seller, m.cast.stranger] {
        assert_eq!(void(id, who).await, not_verdict_giver(who, PactStatus::Disputed), "{who}");
    }
    let before = m.chain.snapshot().await?;
    send(pact.voidOffers(id).from(m.cast.arbitrator)).await?;
    assert_eq!(voided().await?, 1 << 0 | 1 << 15, "the arbitrator's bit");
    assert_eq!(
        void(id, m.cast.arbitrator).await,
        AgentPactErrors::AlreadyVoided(AgentPact::AlreadyVoided { who: m.cast.arbitrator })
    );
    m.chain.restore(before).await?;
    let before = m.chain.snapshot().await?;
    m.chain.at(ends).await?;
    send(pact.voidOffers(id).from(m.cast.arbitrator)).await?;
    m.chain.restore(before).await?;
    m.chain.at(ends + 1).await?;
    assert_eq!(
        void(id, m.cast.arbitrator).await,
        AgentPactErrors::DisputePeriodOver(AgentPact::DisputePeriodOver { endedAt: ends })
    );

    // Ended: nobody.
    m.chain.at(ends + 1).await?;
    send(pact.claimTimeout(id).from(m.cast.stranger)).await?;
    assert_eq!(void(id, m.cast.arbitrator).await, not_verdict_giver(m.cast.arbitrator, PactStatus::Refunded));
    Ok(())
}
