//! Every transition of the AgentPact state machine, from both initiators, with every payout checked
//! to the wei: ETH balances before and after each deposit (gas included), the credits each party
//! is owed, and what each party actually receives when it withdraws.

use agentpact_contracts::{Initiator, PactStatus};
use agentpact_tests::{
    HarnessError,
    chain::{ether, send},
    pacts::{Market, REVIEW_PERIOD, accepter_deposit, creator_deposit, stake},
};
use alloy::primitives::U256;

type Result = std::result::Result<(), HarnessError>;

const BOTH: [Initiator; 2] = [Initiator::Buyer, Initiator::Seller];

/// 1 ETH and 7 wei: the stake rounds down (0.1 ETH), and a payout that forgot the odd wei shows.
fn payment() -> U256 {
    ether(1) + U256::from(7u8)
}

#[tokio::test]
async fn approved_work_pays_the_seller_and_returns_the_buyer_stake() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let (pact, chain) = (&m.chain.pact, &m.chain);
        let (creator, accepter) = (m.creator(initiator), m.accepter(initiator));
        let escrow = m.chain.deployment.agent_pact;

        let before = chain.balance(creator).await?;
        let (id, mined) = m.create(m.terms(initiator, payment()).await?).await?;
        assert_eq!(
            chain.balance(creator).await?,
            before - creator_deposit(initiator, payment()) - mined.gas_cost
        );
        assert_eq!(m.status(id).await?, PactStatus::Negotiating);
        assert_eq!(chain.balance(escrow).await?, creator_deposit(initiator, payment()));

        let before = chain.balance(accepter).await?;
        let mined = m.accept(id, initiator, payment()).await?;
        assert_eq!(
            chain.balance(accepter).await?,
            before - accepter_deposit(initiator, payment()) - mined.gas_cost
        );
        assert_eq!(m.status(id).await?, PactStatus::Funded);
        assert_eq!(chain.balance(escrow).await?, payment() + stake(payment()) * U256::from(2u8));

        let p = pact.getPact(id).call().await?;
        assert_eq!((p.buyer, p.seller, p.initiator), (m.cast.buyer, m.cast.seller, initiator.code()));
        assert_eq!((p.buyerStake, p.sellerStake), (stake(payment()), stake(payment())));

        send(pact.startWork(id).from(m.cast.seller)).await?;
        assert_eq!(m.status(id).await?, PactStatus::InProgress);
        m.submit(id).await?;
        assert_eq!(m.status(id).await?, PactStatus::PendingVerify);

        m.verified(id, &[90, 80]).await?;
        let p = pact.getPact(id).call().await?;
        assert_eq!(PactStatus::try_from(p.status), Ok(PactStatus::PendingApproval));
        assert_eq!(p.finalScore, 86, "0.6 * 90 + 0.4 * 80");
        assert_eq!(p.verifiedAt, chain.now().await?);

        send(pact.approveWork(id).from(m.cast.buyer)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Completed);
        assert_eq!(m.credit(m.cast.seller).await?, payment() + stake(payment()));
        assert_eq!(m.credit(m.cast.buyer).await?, stake(payment()));

        assert_eq!(m.withdraw_all(m.cast.seller).await?, payment() + stake(payment()));
        assert_eq!(m.withdraw_all(m.cast.buyer).await?, stake(payment()));
        assert_eq!(chain.balance(escrow).await?, U256::ZERO, "escrow keeps nothing after a completed pact");
    }
    Ok(())
}

#[tokio::test]
async fn a_silent_buyer_is_auto_approved_after_the_review_period() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let id = m.pending_approval(initiator, payment()).await?;
        m.chain.increase_time(REVIEW_PERIOD + 1).await?;
        send(m.chain.pact.autoApprove(id).from(m.cast.stranger)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Completed);
        assert_eq!(m.credit(m.cast.seller).await?, payment() + stake(payment()));
        assert_eq!(m.credit(m.cast.buyer).await?, stake(payment()));
        assert_eq!(m.credit(m.cast.stranger).await?, U256::ZERO, "the caller earns nothing");
    }
    Ok(())
}

#[tokio::test]
async fn rejected_work_goes_to_the_arbitrator_and_the_winner_takes_everything() -> Result {
    for initiator in BOTH {
        for seller_wins in [true, false] {
            let m = Market::open().await?;
            let id = m.pending_approval(initiator, payment()).await?;
            send(m.chain.pact.rejectWork(id).from(m.cast.buyer)).await?;
            assert_eq!(m.status(id).await?, PactStatus::Disputed);

            send(m.chain.pact.resolveDispute(id, seller_wins).from(m.cast.arbitrator)).await?;
            let pot = payment() + stake(payment()) * U256::from(2u8);
            let (winner, loser, status) = if seller_wins {
                (m.cast.seller, m.cast.buyer, PactStatus::Completed)
            } else {
                (m.cast.buyer, m.cast.seller, PactStatus::Refunded)
            };
            assert_eq!(m.status(id).await?, status);
            assert_eq!(m.credit(winner).await?, pot);
            assert_eq!(m.credit(loser).await?, U256::ZERO);
            assert_eq!(m.credit(m.cast.arbitrator).await?, U256::ZERO);
            assert_eq!(m.withdraw_all(winner).await?, pot);
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_failing_weighted_score_disputes_the_pact() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let id = m.funded(initiator, payment()).await?;
        m.submitted(id).await?;
        // 0.6 * 100 + 0.4 * 20 = 68 < 70: one generous oracle is not enough.
        m.verified(id, &[100, 20]).await?;
        let p = m.chain.pact.getPact(id).call().await?;
        assert_eq!(PactStatus::try_from(p.status), Ok(PactStatus::Disputed));
        assert_eq!(p.finalScore, 68);
        assert_eq!(p.verifiedAt, 0);
        assert_eq!(p.disputedAt, m.chain.now().await?);
    }
    Ok(())
}

#[tokio::test]
async fn a_score_exactly_at_the_threshold_passes() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, payment()).await?;
    m.submitted(id).await?;
    m.verified(id, &[70, 70]).await?;
    assert_eq!(m.status(id).await?, PactStatus::PendingApproval);
    Ok(())
}

#[tokio::test]
async fn either_party_can_dispute_an_active_pact() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let arbitrator = m.cast.arbitrator;
        let funded = m.funded(initiator, payment()).await?;
        send(m.chain.pact.raiseDispute(funded, arbitrator).from(m.cast.buyer)).await?;

        let started = m.funded(initiator, payment()).await?;
        send(m.chain.pact.startWork(started).from(m.cast.seller)).await?;
        send(m.chain.pact.raiseDispute(started, arbitrator).from(m.cast.seller)).await?;

        let submitted = m.funded(initiator, payment()).await?;
        m.submitted(submitted).await?;
        send(m.chain.pact.raiseDispute(submitted, arbitrator).from(m.cast.buyer)).await?;

        for id in [funded, started, submitted] {
            let p = m.chain.pact.getPact(id).call().await?;
            assert_eq!(PactStatus::try_from(p.status), Ok(PactStatus::Disputed));
            assert_eq!(p.arbitrator, arbitrator);
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_creator_can_cancel_an_unaccepted_pact() -> Result {
    for initiator in BOTH {
        let m = Market::open().await?;
        let creator = m.creator(initiator);
        let (id, _) = m.create(m.terms(initiator, payment()).await?).await?;
        send(m.chain.pact.cancelPact(id).from(creator)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Refunded);
        assert_eq!(m.withdraw_all(creator).await?, creator_deposit(initiator, payment()));
    }
    Ok(())
}

#[tokio::test]
async fn credits_from_several_pacts_add_up_and_withdraw_once() -> Result {
    let m = Market::open().await?;
    for initiator in BOTH {
        let id = m.pending_approval(initiator, payment()).await?;
        send(m.chain.pact.approveWork(id).from(m.cast.buyer)).await?;
    }
    let two = U256::from(2u8);
    assert_eq!(m.withdraw_all(m.cast.seller).await?, (payment() + stake(payment())) * two);
    assert_eq!(m.withdraw_all(m.cast.buyer).await?, stake(payment()) * two);
    assert_eq!(m.credit(m.cast.seller).await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn pact_ids_count_up_from_zero_and_the_terms_are_stored() -> Result {
    let m = Market::open().await?;
    assert_eq!(m.chain.pact.pactCount().call().await?, U256::ZERO);
    let terms = m.terms(Initiator::Seller, payment()).await?;
    let (id, _) = m.create(terms.clone()).await?;
    assert_eq!(id, U256::ZERO);
    assert_eq!(m.chain.pact.pactCount().call().await?, U256::from(1u8));
    let p = m.chain.pact.getPact(id).call().await?;
    assert_eq!(p.seller, m.cast.seller);
    assert_eq!(p.buyer, alloy::primitives::Address::ZERO);
    assert_eq!((p.specHash, p.specUri.as_str()), (terms.specHash, terms.specUri.as_str()));
    assert_eq!(
        (p.deadline, p.reviewPeriod, p.threshold),
        (terms.deadline, terms.reviewPeriod, terms.threshold)
    );
    assert_eq!((p.oracles, p.weights), (terms.oracles, terms.weights));
    assert_eq!((p.payment, p.sellerStake, p.buyerStake), (payment(), stake(payment()), U256::ZERO));
    Ok(())
}

#[tokio::test]
async fn a_zero_review_period_means_the_three_day_default() -> Result {
    let m = Market::open().await?;
    let mut terms = m.terms(Initiator::Buyer, payment()).await?;
    terms.reviewPeriod = 0;
    let (id, _) = m.create(terms).await?;
    let p = m.chain.pact.getPact(id).call().await?;
    assert_eq!(p.reviewPeriod, 3 * 24 * 60 * 60);
    assert_eq!(m.chain.pact.DEFAULT_REVIEW_PERIOD().call().await?, 3 * 24 * 60 * 60);
    Ok(())
}
