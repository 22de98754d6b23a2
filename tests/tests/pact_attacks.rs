//! The attacks an outside review reproduced against escrow v1, each played against v2 and shown
//! refused by its custom error, beside the honest path at the same boundary: the last second a
//! window allows and the first one it refuses. The clock is set to exact seconds with
//! `evm_setNextBlockTimestamp`; a snapshot lets both sides of a boundary be tried on one pact.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator,
    OracleRegistry::OracleRegistryErrors,
    PactStatus,
    rules::{MAX_DURATION, MAX_PAYMENT, MAX_REVIEW_PERIOD, MAX_SPEC_URI, MIN_WORK_WINDOW},
};
use agentpact_tests::{
    HarnessError,
    chain::{ether, hash, revert_of, send},
    pacts::{Market, accepter_deposit, creator_deposit, stake},
};
use alloy::primitives::{Address, U256};

type Result = std::result::Result<(), HarnessError>;

const BOTH: [Initiator; 2] = [Initiator::Buyer, Initiator::Seller];
const VERIFICATION_PERIOD: u64 = 3 * 24 * 60 * 60;

fn payment() -> U256 {
    ether(1)
}

/// Attack 1: accepting in the last allowed second and claiming the timeout a second later took the
/// seller's stake (v1 let acceptance run to the deadline). Now acceptance closes at `acceptBy`, at
/// least `MIN_WORK_WINDOW` before the deadline, and the seller works in that window.
#[tokio::test]
async fn a_last_second_accept_leaves_the_seller_its_work_window() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let (id, _) = m.create(m.terms(initiator, payment()).await?).await?;
        let p = m.chain.pact.getPact(id).call().await?;
        assert_eq!(p.acceptBy, p.deadline - MIN_WORK_WINDOW, "acceptBy 0 means an hour before the deadline");
        let accept = || {
            m.chain
                .pact
                .acceptPact(id)
                .from(m.accepter(initiator))
                .value(accepter_deposit(initiator, payment()))
        };

        // The first refused second: too late to accept; the creator's deposit goes back.
        let before = m.chain.snapshot().await?;
        m.chain.at(p.acceptBy + 1).await?;
        let late = revert_of::<AgentPactErrors, _, _>(accept()).await;
        assert_eq!(
            late,
            AgentPactErrors::AcceptWindowClosed(AgentPact::AcceptWindowClosed { acceptBy: p.acceptBy })
        );
        send(m.chain.pact.claimTimeout(id).from(m.cast.stranger)).await?;
        assert_eq!(m.credit(m.creator(initiator)).await?, creator_deposit(initiator, payment()));
        m.chain.restore(before).await?;

        // The last allowed second: the accept is taken, and before it the timeout is not.
        m.chain.at(p.acceptBy).await?;
        let open =
            revert_of::<AgentPactErrors, _, _>(m.chain.pact.claimTimeout(id).from(m.cast.stranger)).await;
        assert_eq!(
            open,
            AgentPactErrors::AcceptWindowOpen(AgentPact::AcceptWindowOpen { acceptBy: p.acceptBy })
        );
        m.chain.at(p.acceptBy).await?;
        send(accept()).await?;

        // The v1 attack's second step, a second later: the seller still has its hour.
        m.chain.at(p.acceptBy + 1).await?;
        let grab = revert_of::<AgentPactErrors, _, _>(m.chain.pact.claimTimeout(id).from(m.cast.buyer)).await;
        assert_eq!(
            grab,
            AgentPactErrors::DeadlineNotReached(AgentPact::DeadlineNotReached { deadline: p.deadline })
        );
        m.chain.at(p.acceptBy + 2).await?;
        send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
        m.chain.at(p.deadline).await?; // the last second the work is taken
        send(m.chain.pact.submitWork(id, hash(7)).from(m.cast.seller)).await?;
        assert_eq!(m.status(id).await?, PactStatus::PendingVerify, "{initiator:?}");
    }
    Ok(())
}

/// Attack 2: the buyer rejected verified work after the review period, front-running
/// `autoApprove`. Now rejection closes at the second auto-approval opens.
#[tokio::test]
async fn verified_work_can_be_rejected_only_within_the_review_period() -> Result {
    let m = Market::open().await?;
    let id = m.pending_approval(Initiator::Buyer, payment()).await?;
    let p = m.chain.pact.getPact(id).call().await?;
    let ends = p.verifiedAt + p.reviewPeriod;

    let before = m.chain.snapshot().await?;
    m.chain.at(ends).await?;
    let early = revert_of::<AgentPactErrors, _, _>(m.chain.pact.autoApprove(id).from(m.cast.stranger)).await;
    assert_eq!(early, AgentPactErrors::ReviewPeriodActive(AgentPact::ReviewPeriodActive { endsAt: ends }));
    m.chain.at(ends).await?;
    send(m.chain.pact.rejectWork(id).from(m.cast.buyer)).await?; // the last second a reject is taken
    assert_eq!(m.status(id).await?, PactStatus::Disputed);
    m.chain.restore(before).await?;

    m.chain.at(ends + 1).await?;
    let late = revert_of::<AgentPactErrors, _, _>(m.chain.pact.rejectWork(id).from(m.cast.buyer)).await;
    assert_eq!(late, AgentPactErrors::ReviewPeriodOver(AgentPact::ReviewPeriodOver { endedAt: ends }));
    m.chain.at(ends + 1).await?;
    send(m.chain.pact.autoApprove(id).from(m.cast.stranger)).await?;
    assert_eq!(m.credit(m.cast.seller).await?, payment() + stake(payment()));
    Ok(())
}

/// Attack 3: a review period or deadline centuries away trapped the seller's money. Every clock
/// is bounded: the longest allowed still ends, one second more is refused.
#[tokio::test]
async fn every_clock_is_bounded_and_the_longest_still_ends() -> Result {
    let m = Market::open().await?;
    let now = m.chain.now().await? + 10;
    let refused = |terms: AgentPact::Terms| {
        let deposit = creator_deposit(Initiator::Buyer, terms.payment);
        m.chain.pact.createPact(terms).from(m.cast.buyer).value(deposit)
    };
    let mut t = m.terms(Initiator::Buyer, payment()).await?;

    t.reviewPeriod = MAX_REVIEW_PERIOD + 1;
    let e = revert_of::<AgentPactErrors, _, _>(refused(t.clone())).await;
    assert_eq!(
        e,
        AgentPactErrors::ReviewPeriodTooLong(AgentPact::ReviewPeriodTooLong {
            reviewPeriod: MAX_REVIEW_PERIOD + 1,
            maximum: MAX_REVIEW_PERIOD
        })
    );
    t.reviewPeriod = u64::MAX; // v1 overflowed verifiedAt + reviewPeriod
    assert!(matches!(
        revert_of::<AgentPactErrors, _, _>(refused(t.clone())).await,
        AgentPactErrors::ReviewPeriodTooLong(_)
    ));
    t.reviewPeriod = MAX_REVIEW_PERIOD;

    let (earliest, latest) = (now + MIN_WORK_WINDOW + 1, now + MAX_DURATION);
    for deadline in [latest + 1, earliest - 1, u64::MAX] {
        t.deadline = deadline;
        m.chain.at(now).await?;
        let e = revert_of::<AgentPactErrors, _, _>(refused(t.clone())).await;
        assert_eq!(
            e,
            AgentPactErrors::DeadlineOutOfRange(AgentPact::DeadlineOutOfRange { deadline, earliest, latest }),
        );
    }
    m.chain.mine().await?;

    // acceptBy: in the future and at least the work window before the deadline.
    let now = m.chain.now().await? + 10;
    t.deadline = now + 2 * MIN_WORK_WINDOW;
    for accept_by in [now, t.deadline - MIN_WORK_WINDOW + 1] {
        t.acceptBy = accept_by;
        m.chain.at(now).await?;
        let e = revert_of::<AgentPactErrors, _, _>(refused(t.clone())).await;
        let (earliest, latest) = (now + 1, t.deadline - MIN_WORK_WINDOW);
        assert_eq!(
            e,
            AgentPactErrors::AcceptByOutOfRange(AgentPact::AcceptByOutOfRange {
                acceptBy: accept_by,
                earliest,
                latest
            })
        );
    }
    m.chain.mine().await?;

    // The spec URI and the payment.
    t = m.terms(Initiator::Buyer, payment()).await?;
    t.specUri = "x".repeat(MAX_SPEC_URI + 1);
    let e = revert_of::<AgentPactErrors, _, _>(refused(t.clone())).await;
    assert_eq!(
        e,
        AgentPactErrors::SpecUriTooLong(AgentPact::SpecUriTooLong {
            length: U256::from(MAX_SPEC_URI + 1),
            maximum: U256::from(MAX_SPEC_URI)
        })
    );
    t.specUri = "x".repeat(MAX_SPEC_URI);
    for huge in [MAX_PAYMENT + U256::from(1u8), U256::MAX] {
        let mut big = t.clone();
        big.payment = huge;
        let call = m.chain.pact.createPact(big).from(m.cast.buyer).value(U256::ZERO);
        let e = revert_of::<AgentPactErrors, _, _>(call).await;
        assert_eq!(
            e,
            AgentPactErrors::PaymentTooLarge(AgentPact::PaymentTooLarge {
                payment: huge,
                maximum: MAX_PAYMENT
            })
        );
    }

    // The longest of everything: deadline a year ahead, review period 30 days. A seller who
    // delivers at the deadline's last second is paid by a bystander once the clocks run out.
    let now = m.chain.now().await? + 10;
    t.deadline = now + MAX_DURATION;
    t.reviewPeriod = MAX_REVIEW_PERIOD;
    m.chain.at(now).await?;
    let (id, _) = m.create(t.clone()).await?;
    m.accept(id, Initiator::Buyer, payment()).await?;
    send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
    m.chain.at(t.deadline).await?;
    m.submit(id).await?;
    m.score(id, &[90, 80]).await?;
    send(m.chain.pact.finalizeVerification(id).from(m.cast.stranger)).await?;
    let verified = m.chain.pact.getPact(id).call().await?.verifiedAt;
    m.chain.at(verified + MAX_REVIEW_PERIOD + 1).await?;
    send(m.chain.pact.autoApprove(id).from(m.cast.stranger)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Completed);
    Ok(())
}

/// Attack 4: a pact negotiated for one worker was accepted first by a stranger. A pact that names
/// its counterparty can be accepted by it alone, and the counterparty cannot be a conflicted party.
#[tokio::test]
async fn a_pact_for_a_named_counterparty_is_accepted_by_it_alone() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let mut t = m.terms(initiator, payment()).await?;
        let named = m.accepter(initiator);
        t.counterparty = named;
        let (id, _) = m.create(t.clone()).await?;
        let deposit = accepter_deposit(initiator, payment());
        let call = m.chain.pact.acceptPact(id).from(m.cast.stranger).value(deposit);
        let e = revert_of::<AgentPactErrors, _, _>(call).await;
        assert_eq!(e, AgentPactErrors::NotCounterparty(AgentPact::NotCounterparty { counterparty: named }));
        assert_eq!(m.status(id).await?, PactStatus::Negotiating, "the stranger changed nothing");
        m.accept(id, initiator, payment()).await?;
        assert_eq!(m.status(id).await?, PactStatus::Funded);

        let creator = m.creator(initiator);
        for conflicted in [creator, m.cast.arbitrator, m.cast.oracles[1]] {
            t.counterparty = conflicted;
            let call =
                m.chain.pact.createPact(t.clone()).from(creator).value(creator_deposit(initiator, payment()));
            let e = revert_of::<AgentPactErrors, _, _>(call).await;
            assert_eq!(
                e,
                AgentPactErrors::ConflictOfInterest(AgentPact::ConflictOfInterest { who: conflicted })
            );
        }
    }
    Ok(())
}

/// Attack 5: a seller that missed its deadline disputed instead of forfeiting its stake. Disputes
/// from FUNDED and IN_PROGRESS close with the deadline, from PENDING_VERIFY with the verification
/// window; after them, the timeout (or finalization) is the exit.
#[tokio::test]
async fn a_party_past_its_window_cannot_dispute() -> Result {
    let m = Market::open().await?;
    let dispute = |id: U256, by: Address| m.chain.pact.raiseDispute(id, m.cast.arbitrator).from(by);
    for started in [false, true] {
        let id = m.funded(Initiator::Buyer, payment()).await?;
        if started {
            send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
        }
        let deadline = m.chain.pact.getPact(id).call().await?.deadline;
        let before = m.chain.snapshot().await?;
        m.chain.at(deadline).await?;
        send(dispute(id, m.cast.seller)).await?; // the last second a dispute is taken
        m.chain.restore(before).await?;
        m.chain.at(deadline + 1).await?;
        let e = revert_of::<AgentPactErrors, _, _>(dispute(id, m.cast.seller)).await;
        assert_eq!(e, AgentPactErrors::DeadlinePassed(AgentPact::DeadlinePassed { deadline }));
        m.chain.at(deadline + 1).await?;
        send(m.chain.pact.claimTimeout(id).from(m.cast.buyer)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Refunded, "the silent seller forfeits");
    }

    let id = m.funded(Initiator::Buyer, payment()).await?;
    m.submitted(id).await?;
    let closes = m.chain.pact.getPact(id).call().await?.submittedAt + VERIFICATION_PERIOD;
    let before = m.chain.snapshot().await?;
    m.chain.at(closes).await?;
    send(dispute(id, m.cast.buyer)).await?;
    m.chain.restore(before).await?;
    m.chain.at(closes + 1).await?;
    let e = revert_of::<AgentPactErrors, _, _>(dispute(id, m.cast.buyer)).await;
    assert_eq!(e, AgentPactErrors::VerificationClosed(AgentPact::VerificationClosed { closedAt: closes }));
    Ok(())
}

/// Finding 6, oracles: capability lists are bounded like every other string and list.
#[tokio::test]
async fn oracle_capabilities_are_bounded() -> Result {
    let m = Market::open().await?;
    let who = m.chain.accounts[9];
    let stake = m.chain.options.min_oracle_stake;
    let register = |caps: Vec<String>| m.chain.registry.register(caps).from(who).value(stake);
    let e = revert_of::<OracleRegistryErrors, _, _>(register(vec!["c".into(); 17])).await;
    assert!(matches!(e, OracleRegistryErrors::CapabilityCount(x) if x.count == U256::from(17u8)));
    let e = revert_of::<OracleRegistryErrors, _, _>(register(vec!["c".repeat(65)])).await;
    assert!(matches!(e, OracleRegistryErrors::CapabilityTooLong(x) if x.length == U256::from(65u8)));
    send(register((0..16).map(|i| format!("{i:0>64}")).collect())).await?;
    Ok(())
}

/// The bounds clients check before sending (`agentpact_contracts::rules`) are the contract's.
#[tokio::test]
async fn the_rust_rules_are_the_contracts_rules() -> Result {
    use agentpact_contracts::rules;
    let m = Market::open().await?;
    let c = &m.chain.pact;
    assert_eq!(c.MIN_WORK_WINDOW().call().await?, rules::MIN_WORK_WINDOW);
    assert_eq!(c.MAX_DURATION().call().await?, rules::MAX_DURATION);
    assert_eq!(c.MAX_REVIEW_PERIOD().call().await?, rules::MAX_REVIEW_PERIOD);
    assert_eq!(c.DEFAULT_REVIEW_PERIOD().call().await?, rules::DEFAULT_REVIEW_PERIOD);
    assert_eq!(c.VERIFICATION_PERIOD().call().await?, rules::VERIFICATION_PERIOD);
    assert_eq!(c.DISPUTE_PERIOD().call().await?, rules::DISPUTE_PERIOD);
    assert_eq!(c.MAX_SPEC_URI().call().await?, U256::from(rules::MAX_SPEC_URI));
    assert_eq!(c.MAX_PAYMENT().call().await?, rules::MAX_PAYMENT);
    assert_eq!(c.MAX_ORACLES().call().await?, U256::from(rules::MAX_ORACLES));
    assert_eq!(c.STAKE_DIVISOR().call().await?, U256::from(rules::STAKE_DIVISOR));
    Ok(())
}

/// Found in review: an oracle that scored after the verification window could front-run
/// `finalizeVerification` and turn a fail into a pass. Scoring closes the second finalization by
/// anyone opens.
#[tokio::test]
async fn a_late_oracle_cannot_change_a_closed_verification() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, payment()).await?;
    m.submitted(id).await?;
    let closes = m.chain.pact.getPact(id).call().await?.submittedAt + VERIFICATION_PERIOD;
    let late_score = || m.chain.pact.submitVerification(id, 100, hash(3)).from(m.cast.oracles[0]);

    let before = m.chain.snapshot().await?;
    m.chain.at(closes).await?;
    send(late_score()).await?; // the last second a score is taken
    m.chain.restore(before).await?;

    m.chain.at(closes + 1).await?;
    let e = revert_of::<AgentPactErrors, _, _>(late_score()).await;
    assert_eq!(e, AgentPactErrors::VerificationClosed(AgentPact::VerificationClosed { closedAt: closes }));
    m.chain.at(closes + 1).await?;
    send(m.chain.pact.finalizeVerification(id).from(m.cast.stranger)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Disputed, "both oracles silent: score 0 fails");
    Ok(())
}

/// Found in review: an arbitrator could rule after its window, front-running the timeout that
/// refunds each side. Here the buyer names a wallet it owns as the arbitrator (the seller accepted
/// those terms): inside the window its ruling stands, as agreed; one second after, it cannot undo
/// the seller's right to its stake.
#[tokio::test]
async fn an_arbitrator_owned_by_a_party_cannot_rule_after_its_window() -> Result {
    let m = Market::open().await?;
    let owned = m.chain.accounts[9]; // the buyer's second wallet
    let mut terms = m.terms(Initiator::Buyer, payment()).await?;
    terms.arbitrator = owned;
    let (id, _) = m.create(terms).await?;
    m.accept(id, Initiator::Buyer, payment()).await?;
    send(m.chain.pact.raiseDispute(id, owned).from(m.cast.buyer)).await?;
    let ends = m.chain.pact.getPact(id).call().await?.disputedAt + 7 * 24 * 60 * 60;
    let rule = || m.chain.pact.resolveDispute(id, false).from(owned);

    let before = m.chain.snapshot().await?;
    m.chain.at(ends).await?;
    send(rule()).await?; // the last second a ruling is taken
    assert_eq!(m.credit(m.cast.buyer).await?, payment() + stake(payment()) * U256::from(2u8));
    m.chain.restore(before).await?;

    m.chain.at(ends + 1).await?;
    let e = revert_of::<AgentPactErrors, _, _>(rule()).await;
    assert_eq!(e, AgentPactErrors::DisputePeriodOver(AgentPact::DisputePeriodOver { endedAt: ends }));
    m.chain.at(ends + 1).await?;
    send(m.chain.pact.claimTimeout(id).from(m.cast.seller)).await?;
    assert_eq!(m.credit(m.cast.seller).await?, stake(payment()), "the seller keeps its stake");
    Ok(())
}
