//! Escrow v3 (docs/contracts.md §Escrow v3): the one-second-review attack replayed and refused by
//! name beside the honest path at the new bounds, split rulings, and settlements offered,
//! replaced, withdrawn and accepted, each rule at the last second it allows and the first it
//! refuses. The clock is set to exact seconds; a snapshot lets both sides of a boundary be tried
//! on one pact.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator, PactStatus,
    rules::{FULL_SHARE, MIN_REVIEW_PERIOD, MIN_THRESHOLD, VERDICT_MARGIN},
};
use agentpact_tests::{
    HarnessError,
    chain::{ether, revert_of, send},
    pacts::{Market, accepter_deposit, creator_deposit, stake},
};
use alloy::primitives::U256;

type Result = std::result::Result<(), HarnessError>;

const DISPUTE_PERIOD: u64 = 7 * 24 * 60 * 60;

/// A tenth of an ether: the review's stake on a 1 ETH pact.
fn tenth() -> U256 {
    ether(1) / U256::from(10u8)
}

/// The review's attack: a seller offers `reviewPeriod = 1` and `threshold = 0`, submits junk that
/// the honest oracle scores 0, finalizes (0 >= 0) and auto-approves two seconds later, before the
/// buyer can reject. Both terms are now refused by name; at the new bounds (an hour, a pass mark
/// of 1) junk scored 0 fails verification, and work that passes leaves the buyer its full hour.
#[tokio::test]
async fn a_one_second_review_window_is_refused_and_the_buyer_keeps_its_hour() -> Result {
    let market = Market::open().await?;
    let m = &market;
    let offer = |review: u64, threshold: u8| async move {
        let t = m.terms(Initiator::Seller, ether(1)).await?;
        Ok::<_, HarnessError>(AgentPact::Terms { reviewPeriod: review, threshold, ..t })
    };
    let create = |t: AgentPact::Terms| {
        let deposit = creator_deposit(Initiator::Seller, t.payment);
        m.chain.pact.createPact(t).from(m.cast.seller).value(deposit)
    };

    // The attack's terms, and the last refused value of each bound.
    let too_short = |r: u64| {
        AgentPactErrors::ReviewPeriodTooShort(AgentPact::ReviewPeriodTooShort {
            reviewPeriod: r,
            minimum: MIN_REVIEW_PERIOD,
        })
    };
    assert_eq!(revert_of::<AgentPactErrors, _, _>(create(offer(1, 0).await?)).await, too_short(1));
    let last_refused = MIN_REVIEW_PERIOD - 1;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(create(offer(last_refused, 70).await?)).await,
        too_short(last_refused)
    );
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(create(offer(MIN_REVIEW_PERIOD, 0).await?)).await,
        AgentPactErrors::ThresholdTooLow(AgentPact::ThresholdTooLow { threshold: 0, minimum: MIN_THRESHOLD })
    );

    // The first allowed values: junk scored 0 fails verification and goes to the arbitrator.
    let (junk, _) = m.create(offer(MIN_REVIEW_PERIOD, MIN_THRESHOLD).await?).await?;
    m.accept(junk, Initiator::Seller, ether(1)).await?;
    m.submitted(junk).await?;
    m.verified(junk, &[0, 0]).await?;
    assert_eq!(m.status(junk).await?, PactStatus::Disputed, "a 0 no longer passes");

    // Work that passes: two seconds later (the attack's autoApprove) and at the hour's last second,
    // only the buyer may act; at the next second anyone may approve.
    let (passed, _) = m.create(offer(MIN_REVIEW_PERIOD, MIN_THRESHOLD).await?).await?;
    m.accept(passed, Initiator::Seller, ether(1)).await?;
    m.submitted(passed).await?;
    m.verified(passed, &[1, 1]).await?;
    let p = m.chain.pact.getPact(passed).call().await?;
    assert_eq!(p.reviewPeriod, MIN_REVIEW_PERIOD);
    let ends = p.verifiedAt + MIN_REVIEW_PERIOD;
    let auto = || m.chain.pact.autoApprove(passed).from(m.cast.seller);
    let active = AgentPactErrors::ReviewPeriodActive(AgentPact::ReviewPeriodActive { endsAt: ends });
    m.chain.at(p.verifiedAt + 2).await?;
    assert_eq!(revert_of::<AgentPactErrors, _, _>(auto()).await, active);
    let before = m.chain.snapshot().await?;
    m.chain.at(ends).await?;
    assert_eq!(revert_of::<AgentPactErrors, _, _>(auto()).await, active);
    m.chain.at(ends).await?;
    send(m.chain.pact.rejectWork(passed).from(m.cast.buyer)).await?;
    assert_eq!(m.status(passed).await?, PactStatus::Disputed, "rejected at the hour's last second");
    m.chain.restore(before).await?;
    m.chain.at(ends + 1).await?;
    send(auto()).await?;
    assert_eq!(m.status(passed).await?, PactStatus::Completed, "the buyer let its hour pass");
    Ok(())
}

/// A ruling divides the pot (payment and both stakes) at the share, in ETH and in USDC, rounding
/// toward the buyer; 0 and 10000 are the seed's two rulings; a share above 10000 and a caller
/// other than the arbitrator are refused.
#[tokio::test]
async fn a_split_ruling_divides_the_pot_in_every_currency() -> Result {
    let m = Market::open().await?;
    for currency in m.chain.currencies() {
        let payment = if currency.is_zero() { ether(1) } else { U256::from(1_000_000_007u64) };
        let pot = payment + stake(payment) + stake(payment);
        for share in [7_000u16, 1, FULL_SHARE - 1, 0, FULL_SHARE] {
            let id = m.funded_in(currency, Initiator::Buyer, payment).await?;
            send(m.chain.pact.raiseDispute(id, m.cast.arbitrator).from(m.cast.seller)).await?;
            let too_large = revert_of::<AgentPactErrors, _, _>(
                m.chain.pact.resolveDisputeShare(id, FULL_SHARE + 1).from(m.cast.arbitrator),
            )
            .await;
            assert_eq!(
                too_large,
                AgentPactErrors::ShareTooLarge(AgentPact::ShareTooLarge {
                    share: FULL_SHARE + 1,
                    maximum: FULL_SHARE
                })
            );
            let stranger = revert_of::<AgentPactErrors, _, _>(
                m.chain.pact.resolveDisputeShare(id, share).from(m.cast.buyer),
            )
            .await;
            assert_eq!(stranger, AgentPactErrors::NotArbitrator(AgentPact::NotArbitrator {}));
            let (seller0, buyer0) =
                (m.credit_in(currency, m.cast.seller).await?, m.credit_in(currency, m.cast.buyer).await?);
            send(m.chain.pact.resolveDisputeShare(id, share).from(m.cast.arbitrator)).await?;
            let to_seller = pot * U256::from(share) / U256::from(FULL_SHARE);
            assert_eq!(m.credit_in(currency, m.cast.seller).await? - seller0, to_seller, "share {share}");
            assert_eq!(m.credit_in(currency, m.cast.buyer).await? - buyer0, pot - to_seller, "share {share}");
            let status = match share {
                0 => PactStatus::Refunded,
                FULL_SHARE => PactStatus::Completed,
                _ => PactStatus::Split,
            };
            assert_eq!(m.status(id).await?, status, "share {share}");
        }
    }
    Ok(())
}

/// Offers replace each other, a withdrawn one cannot be accepted, nobody accepts its own or a
/// replaced offer, a stranger accepts nothing; the other party accepts the standing one and the
/// pact ends with the payment divided and each stake back to its owner.
#[tokio::test]
async fn a_settlement_ends_the_pact_with_no_arbitrator() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.funded(Initiator::Seller, ether(1)).await?;
    let accept = |by, round: u32, share: u16| {
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, round, share).from(by))
    };

    let none = AgentPactErrors::NoSettlement(AgentPact::NoSettlement { pactId: id });
    assert_eq!(accept(m.cast.buyer, 0, 0).await, none);
    send(pact.proposeSettlement(id, 6_000, 0).from(m.cast.buyer)).await?;
    send(pact.proposeSettlement(id, 8_000, 0).from(m.cast.seller)).await?; // a counter-offer replaces it
    assert_eq!(
        accept(m.cast.seller, 1, 6_000).await,
        AgentPactErrors::OwnSettlement(AgentPact::OwnSettlement {}),
        "the seller made the standing offer"
    );
    assert_eq!(
        accept(m.cast.buyer, 1, 6_000).await,
        AgentPactErrors::SettlementReplaced(AgentPact::SettlementReplaced { round: 2, sellerShare: 8_000 }),
        "round 1 was replaced"
    );
    assert_eq!(
        accept(m.cast.buyer, 2, 6_000).await,
        AgentPactErrors::SettlementReplaced(AgentPact::SettlementReplaced { round: 2, sellerShare: 8_000 }),
        "the share named is not the offer's"
    );
    assert_eq!(accept(m.cast.stranger, 2, 8_000).await, AgentPactErrors::NotParty(AgentPact::NotParty {}));
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.withdrawSettlement(id).from(m.cast.buyer)).await,
        AgentPactErrors::NotProposer(AgentPact::NotProposer {})
    );
    send(pact.withdrawSettlement(id).from(m.cast.seller)).await?;
    assert_eq!(accept(m.cast.buyer, 2, 8_000).await, none, "withdrawn");
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(id, FULL_SHARE + 1, 0).from(m.cast.seller))
            .await,
        AgentPactErrors::ShareTooLarge(AgentPact::ShareTooLarge {
            share: FULL_SHARE + 1,
            maximum: FULL_SHARE
        })
    );
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(id, 5_000, 0).from(m.cast.stranger)).await,
        AgentPactErrors::NotParty(AgentPact::NotParty {})
    );

    send(pact.proposeSettlement(id, 7_000, 0).from(m.cast.seller)).await?;
    let offer = pact.getSettlement(id).call().await?;
    assert_eq!((offer.by, offer.round, offer.sellerShare), (m.cast.seller, 3, 7_000));
    send(pact.acceptSettlement(id, 3, 7_000).from(m.cast.buyer)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Split);
    assert_eq!(m.credit(m.cast.seller).await?, tenth() * U256::from(8u8), "70% of the payment and its stake");
    assert_eq!(m.credit(m.cast.buyer).await?, tenth() * U256::from(4u8), "30% of the payment and its stake");
    assert_eq!(pact.getSettlement(id).call().await?.by, alloy::primitives::Address::ZERO, "accepted once");
    assert!(matches!(accept(m.cast.buyer, 3, 7_000).await, AgentPactErrors::NoSettlement(_)));

    // 0 is a mutual cancel: each side gets back exactly what it put in.
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    send(pact.proposeSettlement(id, 0, 0).from(m.cast.seller)).await?;
    let (seller0, buyer0) = (m.credit(m.cast.seller).await?, m.credit(m.cast.buyer).await?);
    send(pact.acceptSettlement(id, 1, 0).from(m.cast.buyer)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Refunded);
    assert_eq!(m.credit(m.cast.seller).await? - seller0, accepter_deposit(Initiator::Buyer, ether(1)));
    assert_eq!(m.credit(m.cast.buyer).await? - buyer0, creator_deposit(Initiator::Buyer, ether(1)));
    Ok(())
}

/// An offer lives until an hour before its window's last second at the latest (v4's
/// `VERDICT_MARGIN`, docs/proposals/55-escrow-v4.md §3; v3 let it live to the window's last
/// second): accepted at `end − 3600`, the pact ends; at `end − 3599` the acceptance is refused, and
/// the exit opens after the window. An offer lapses when the pact moves on from the status it
/// priced, and cannot be made to outlive its window.
#[tokio::test]
async fn an_offer_at_the_windows_last_second_and_the_exit_at_the_next_both_behave() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;

    // DISPUTED: the dispute window.
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    send(pact.raiseDispute(id, m.cast.arbitrator).from(m.cast.buyer)).await?;
    let end = pact.getPact(id).call().await?.disputedAt + DISPUTE_PERIOD;
    let last = end - VERDICT_MARGIN; // an offer's last second
    let past =
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(id, 5_000, last + 1).from(m.cast.seller))
            .await;
    let now = m.chain.now().await?;
    assert!(
        matches!(past, AgentPactErrors::SettlementExpiryOutOfRange(ref e) if e.expiresAt == last + 1 && e.latest == last && e.earliest >= now),
        "{past:?}"
    );
    send(pact.proposeSettlement(id, 5_000, 0).from(m.cast.seller)).await?;
    assert_eq!(
        pact.getSettlement(id).call().await?.expiresAt,
        last,
        "0 means an hour before the window's end"
    );
    let before = m.chain.snapshot().await?;
    m.chain.at(last).await?;
    send(pact.acceptSettlement(id, 1, 5_000).from(m.cast.buyer)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Split);
    m.chain.restore(before).await?;
    m.chain.at(last + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, 1, 5_000).from(m.cast.buyer)).await,
        AgentPactErrors::SettlementExpired(AgentPact::SettlementExpired { expiresAt: last })
    );
    m.chain.at(end + 2).await?;
    send(pact.claimTimeout(id).from(m.cast.stranger)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Refunded);

    // FUNDED: the deadline; and an offer that lapses when the seller starts.
    let id = m.funded(Initiator::Seller, ether(1)).await?;
    let deadline = pact.getPact(id).call().await?.deadline;
    let last = deadline - VERDICT_MARGIN;
    send(pact.proposeSettlement(id, 2_500, 0).from(m.cast.buyer)).await?;
    let before = m.chain.snapshot().await?;
    m.chain.at(last).await?;
    send(pact.acceptSettlement(id, 1, 2_500).from(m.cast.seller)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Split);
    m.chain.restore(before).await?;
    let before = m.chain.snapshot().await?; // a snapshot is used up by its restore
    m.chain.at(last + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, 1, 2_500).from(m.cast.seller)).await,
        AgentPactErrors::SettlementExpired(AgentPact::SettlementExpired { expiresAt: last })
    );
    m.chain.at(deadline + 2).await?;
    send(pact.claimTimeout(id).from(m.cast.buyer)).await?;
    m.chain.restore(before).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    let stale = AgentPactErrors::SettlementStale(AgentPact::SettlementStale {
        offeredIn: PactStatus::Funded.code(),
        have: PactStatus::InProgress.code(),
    });
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, 1, 2_500).from(m.cast.seller)).await,
        stale
    );

    // Nothing to settle before acceptance or after the end.
    let (open, _) = m.create(m.terms(Initiator::Buyer, ether(1)).await?).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(open, 5_000, 0).from(m.cast.buyer)).await,
        AgentPactErrors::NotSettleable(AgentPact::NotSettleable { have: PactStatus::Negotiating.code() })
    );
    m.submit(id).await?;
    m.verified(id, &[90, 90]).await?;
    send(pact.approveWork(id).from(m.cast.buyer)).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(id, 5_000, 0).from(m.cast.buyer)).await,
        AgentPactErrors::NotSettleable(AgentPact::NotSettleable { have: PactStatus::Completed.code() })
    );
    Ok(())
}
