//! The exits that need no cooperation: every non-terminal status ends in a terminal one once its
//! clock runs out, whoever stays silent (the counterparty, the seller, an oracle, the buyer, the
//! arbitrator). Time moves with `evm_increaseTime`.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator, PactStatus,
};
use agentpact_tests::{
    HarnessError,
    chain::{ether, revert_of, send},
    pacts::{DEADLINE_IN, Market, REVIEW_PERIOD, creator_deposit, stake},
};
use alloy::primitives::U256;

type Result = std::result::Result<(), HarnessError>;

const BOTH: [Initiator; 2] = [Initiator::Buyer, Initiator::Seller];
const VERIFICATION_PERIOD: u64 = 3 * 24 * 60 * 60;
const DISPUTE_PERIOD: u64 = 7 * 24 * 60 * 60;

fn payment() -> U256 {
    ether(2)
}

#[tokio::test]
async fn the_published_windows_are_the_ones_tested() -> Result {
    let m = Market::open().await?;
    assert_eq!(m.chain.pact.VERIFICATION_PERIOD().call().await?, VERIFICATION_PERIOD);
    assert_eq!(m.chain.pact.DISPUTE_PERIOD().call().await?, DISPUTE_PERIOD);
    // The rules the MCP server and the model read are the contract's.
    assert_eq!(m.chain.pact.VERDICT_MARGIN().call().await?, agentpact_contracts::rules::VERDICT_MARGIN);
    Ok(())
}

#[tokio::test]
async fn an_unaccepted_pact_past_its_acceptance_window_refunds_its_creator() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let (id, _) = m.create(m.terms(initiator, payment()).await?).await?;
        let accept_by = m.chain.pact.getPact(id).call().await?.acceptBy;

        let early =
            revert_of::<AgentPactErrors, _, _>(m.chain.pact.claimTimeout(id).from(m.cast.stranger)).await;
        assert_eq!(
            early,
            AgentPactErrors::AcceptWindowOpen(AgentPact::AcceptWindowOpen { acceptBy: accept_by })
        );

        m.chain.increase_time(DEADLINE_IN + 1).await?;
        let late = revert_of::<AgentPactErrors, _, _>(
            m.chain
                .pact
                .acceptPact(id)
                .from(m.accepter(initiator))
                .value(creator_deposit(initiator.counterparty(), payment())),
        )
        .await;
        assert_eq!(
            late,
            AgentPactErrors::AcceptWindowClosed(AgentPact::AcceptWindowClosed { acceptBy: accept_by })
        );

        send(m.chain.pact.claimTimeout(id).from(m.cast.stranger)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Refunded);
        assert_eq!(m.withdraw_all(m.creator(initiator)).await?, creator_deposit(initiator, payment()));
        assert_eq!(m.credit(m.accepter(initiator)).await?, U256::ZERO);
    }
    Ok(())
}

#[tokio::test]
async fn a_seller_who_never_delivers_forfeits_its_stake_to_the_buyer() -> Result {
    for initiator in BOTH {
        for started in [false, true] {
            let m = Market::open().await?;
            let id = m.funded(initiator, payment()).await?;
            if started {
                send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
            }
            m.chain.increase_time(DEADLINE_IN + 1).await?;
            if started {
                let late = revert_of::<AgentPactErrors, _, _>(
                    m.chain.pact.submitWork(id, agentpact_tests::chain::hash(2)).from(m.cast.seller),
                )
                .await;
                assert!(matches!(late, AgentPactErrors::DeadlinePassed(_)), "{late:?}");
            }
            send(m.chain.pact.claimTimeout(id).from(m.cast.buyer)).await?;
            assert_eq!(m.status(id).await?, PactStatus::Refunded);
            assert_eq!(m.credit(m.cast.buyer).await?, payment() + stake(payment()) * U256::from(2u8));
            assert_eq!(m.credit(m.cast.seller).await?, U256::ZERO);
        }
    }
    Ok(())
}

#[tokio::test]
async fn silent_oracles_count_as_zero_once_the_verification_window_closes() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, payment()).await?;
    m.submitted(id).await?;
    // Only the 60%-weight oracle answers, with 100: 60 < 70 once the other one counts as 0.
    m.score(id, &[100]).await?;
    let submitted_at = m.chain.pact.getPact(id).call().await?.submittedAt;
    let open =
        revert_of::<AgentPactErrors, _, _>(m.chain.pact.finalizeVerification(id).from(m.cast.seller)).await;
    assert_eq!(
        open,
        AgentPactErrors::VerificationOpen(AgentPact::VerificationOpen {
            scored: 1,
            total: U256::from(2u8),
            closesAt: submitted_at + VERIFICATION_PERIOD,
        })
    );
    m.chain.increase_time(VERIFICATION_PERIOD + 1).await?;
    send(m.chain.pact.finalizeVerification(id).from(m.cast.seller)).await?;
    let p = m.chain.pact.getPact(id).call().await?;
    assert_eq!(
        (PactStatus::try_from(p.status), p.finalScore, p.scoreCount),
        (Ok(PactStatus::Disputed), 60, 1)
    );
    Ok(())
}

#[tokio::test]
async fn a_pact_whose_oracles_all_stay_silent_still_ends() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Seller, payment()).await?;
    m.submitted(id).await?;
    m.chain.increase_time(VERIFICATION_PERIOD + 1).await?;
    send(m.chain.pact.finalizeVerification(id).from(m.cast.stranger)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Disputed);
    m.chain.increase_time(DISPUTE_PERIOD + 1).await?;
    send(m.chain.pact.claimTimeout(id).from(m.cast.stranger)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Refunded);
    Ok(())
}

#[tokio::test]
async fn a_silent_arbitrator_ends_in_each_side_getting_back_what_it_put_in() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let id = m.pending_approval(initiator, payment()).await?;
        send(m.chain.pact.rejectWork(id).from(m.cast.buyer)).await?;
        let disputed_at = m.chain.pact.getPact(id).call().await?.disputedAt;

        let early =
            revert_of::<AgentPactErrors, _, _>(m.chain.pact.claimTimeout(id).from(m.cast.seller)).await;
        let ends_at = disputed_at + DISPUTE_PERIOD;
        assert_eq!(
            early,
            AgentPactErrors::DisputePeriodActive(AgentPact::DisputePeriodActive { endsAt: ends_at })
        );

        m.chain.increase_time(DISPUTE_PERIOD + 1).await?;
        send(m.chain.pact.claimTimeout(id).from(m.cast.seller)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Refunded);
        assert_eq!(m.withdraw_all(m.cast.buyer).await?, payment() + stake(payment()));
        assert_eq!(m.withdraw_all(m.cast.seller).await?, stake(payment()));
    }
    Ok(())
}

#[tokio::test]
async fn the_review_period_must_pass_before_auto_approval() -> Result {
    let m = Market::open().await?;
    let id = m.pending_approval(Initiator::Buyer, payment()).await?;
    let verified_at = m.chain.pact.getPact(id).call().await?.verifiedAt;
    let early = revert_of::<AgentPactErrors, _, _>(m.chain.pact.autoApprove(id).from(m.cast.seller)).await;
    let ends_at = verified_at + REVIEW_PERIOD;
    assert_eq!(early, AgentPactErrors::ReviewPeriodActive(AgentPact::ReviewPeriodActive { endsAt: ends_at }));
    // The buyer can still answer right up to the end of the window.
    m.chain.increase_time(REVIEW_PERIOD - 10).await?;
    send(m.chain.pact.approveWork(id).from(m.cast.buyer)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Completed);
    Ok(())
}

#[tokio::test]
async fn there_is_no_timeout_from_a_status_with_its_own_exit() -> Result {
    let m = Market::open().await?;
    let id = m.pending_approval(Initiator::Buyer, payment()).await?;
    m.chain.increase_time(DEADLINE_IN + DISPUTE_PERIOD).await?;
    let err = revert_of::<AgentPactErrors, _, _>(m.chain.pact.claimTimeout(id).from(m.cast.buyer)).await;
    assert_eq!(
        err,
        AgentPactErrors::NoTimeoutFrom(AgentPact::NoTimeoutFrom { have: PactStatus::PendingApproval.code() })
    );
    Ok(())
}
