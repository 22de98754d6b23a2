//! Every forbidden call reverts with its own custom error (decoded by name, with its arguments) and
//! leaves the pact as it was: wrong caller, wrong status, wrong value, too early, too late, bad terms.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator, PactStatus,
};
use agentpact_tests::{
    HarnessError,
    chain::{ether, hash, revert_of, send},
    pacts::{DEADLINE_IN, Market, accepter_deposit, creator_deposit, stake},
};
use alloy::primitives::{Address, U256};

type Result = std::result::Result<(), HarnessError>;

/// Sends `$call`, expects it to revert with `AgentPact::$error { .. }` exactly.
macro_rules! assert_reverts {
    ($call:expr, $error:ident { $($field:ident : $value:expr),* $(,)? }) => {{
        let got = revert_of::<AgentPactErrors, _, _>($call).await;
        assert_eq!(got, AgentPactErrors::$error(AgentPact::$error { $($field: $value),* }));
    }};
}

fn payment() -> U256 {
    ether(1)
}

fn code(s: PactStatus) -> u8 {
    s.code()
}

#[tokio::test]
async fn calls_on_a_pact_that_does_not_exist() -> Result {
    let m = Market::open().await?;
    let missing = U256::from(42u8);
    assert_reverts!(m.chain.pact.getPact(missing), PactNotFound { pactId: missing });
    assert_reverts!(m.chain.pact.acceptPact(missing).from(m.cast.seller), PactNotFound { pactId: missing });
    assert_reverts!(m.chain.pact.claimTimeout(missing).from(m.cast.seller), PactNotFound { pactId: missing });
    Ok(())
}

#[tokio::test]
async fn terms_that_cannot_be_honoured_are_refused() -> Result {
    let m = Market::open().await?;
    let buyer = m.cast.buyer;
    let create = |terms: AgentPact::Terms| {
        let deposit = creator_deposit(Initiator::Buyer, terms.payment);
        m.chain.pact.createPact(terms).from(buyer).value(deposit)
    };
    let good = m.terms(Initiator::Buyer, payment()).await?;

    let mut t = good.clone();
    t.payment = U256::from(9u8);
    assert_reverts!(create(t), PaymentTooSmall { payment: U256::from(9u8), minimum: U256::from(10u8) });

    let mut t = good.clone();
    let now = m.chain.now().await?;
    t.deadline = now - 1;
    let got = revert_of::<AgentPactErrors, _, _>(create(t)).await;
    assert!(
        matches!(got, AgentPactErrors::DeadlineInPast(AgentPact::DeadlineInPast { deadline, .. }) if deadline == now - 1)
    );

    let mut t = good.clone();
    t.threshold = 101;
    assert_reverts!(create(t), ThresholdTooHigh { threshold: 101 });

    let mut t = good.clone();
    t.arbitrator = Address::ZERO;
    assert_reverts!(create(t), InvalidArbitrator { arbitrator: Address::ZERO });
    let mut t = good.clone();
    t.arbitrator = buyer;
    assert_reverts!(create(t), InvalidArbitrator { arbitrator: buyer });

    let mut t = good.clone();
    (t.oracles, t.weights) = (vec![], vec![]);
    assert_reverts!(
        create(t),
        OracleCountOutOfRange { count: U256::ZERO, minimum: U256::from(1u8), maximum: U256::from(10u8) }
    );
    let mut t = good.clone();
    t.oracles = vec![m.cast.oracles[0]; 11];
    t.weights = vec![9; 11];
    assert_reverts!(
        create(t),
        OracleCountOutOfRange {
            count: U256::from(11u8),
            minimum: U256::from(1u8),
            maximum: U256::from(10u8)
        }
    );

    let mut t = good.clone();
    t.weights = vec![100];
    assert_reverts!(create(t), LengthMismatch { oracles: U256::from(2u8), weights: U256::from(1u8) });

    let mut t = good.clone();
    t.weights = vec![60, 39];
    assert_reverts!(create(t), WeightsSum { sum: U256::from(99u8) });
    let mut t = good.clone();
    t.weights = vec![60, 41];
    assert_reverts!(create(t), WeightsSum { sum: U256::from(101u8) });

    let mut t = good.clone();
    t.weights = vec![100, 0];
    assert_reverts!(create(t), ZeroWeight { oracle: m.cast.oracles[1] });

    let mut t = good.clone();
    t.oracles = vec![m.cast.oracles[0], m.cast.oracles[0]];
    assert_reverts!(create(t), DuplicateOracle { oracle: m.cast.oracles[0] });

    let mut t = good.clone();
    t.oracles[1] = m.cast.stranger;
    assert_reverts!(create(t), OracleNotActive { oracle: m.cast.stranger });

    let mut t = good.clone();
    t.oracles[1] = buyer;
    assert_reverts!(create(t), ConflictOfInterest { who: buyer });

    let deposit = creator_deposit(Initiator::Buyer, payment());
    let short = m.chain.pact.createPact(good.clone()).from(buyer).value(deposit - U256::from(1u8));
    assert_reverts!(short, WrongValue { sent: deposit - U256::from(1u8), required: deposit });
    let seller_deposit = creator_deposit(Initiator::Seller, payment());
    let mut t = good.clone();
    t.initiator = Initiator::Seller.code();
    let seller_paid_like_a_buyer = m.chain.pact.createPact(t).from(m.cast.seller).value(deposit);
    assert_reverts!(seller_paid_like_a_buyer, WrongValue { sent: deposit, required: seller_deposit });

    assert_eq!(m.chain.pact.pactCount().call().await?, U256::ZERO, "a refused pact was stored");
    assert_eq!(m.chain.balance(m.chain.deployment.agent_pact).await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn an_oracle_that_left_the_registry_cannot_be_named() -> Result {
    let m = Market::open().await?;
    let leaving = m.cast.oracles[1];
    send(m.chain.registry.deregister().from(leaving)).await?;
    let terms = m.terms(Initiator::Buyer, payment()).await?;
    let create =
        m.chain.pact.createPact(terms).from(m.cast.buyer).value(creator_deposit(Initiator::Buyer, payment()));
    assert_reverts!(create, OracleNotActive { oracle: leaving });
    Ok(())
}

#[tokio::test]
async fn accepting_needs_the_right_deposit_and_no_conflict_of_interest() -> Result {
    for initiator in [Initiator::Buyer, Initiator::Seller] {
        let m = Market::open().await?;
        let (id, _) = m.create(m.terms(initiator, payment()).await?).await?;
        let owed = accepter_deposit(initiator, payment());
        let accept = |who: Address, value: U256| m.chain.pact.acceptPact(id).from(who).value(value);
        let accepter = m.accepter(initiator);

        assert_reverts!(
            accept(accepter, owed + U256::from(1u8)),
            WrongValue { sent: owed + U256::from(1u8), required: owed }
        );
        assert_reverts!(accept(accepter, U256::ZERO), WrongValue { sent: U256::ZERO, required: owed });
        let creator = m.creator(initiator);
        assert_reverts!(accept(creator, owed), ConflictOfInterest { who: creator });
        assert_reverts!(accept(m.cast.arbitrator, owed), ConflictOfInterest { who: m.cast.arbitrator });
        assert_reverts!(accept(m.cast.oracles[0], owed), ConflictOfInterest { who: m.cast.oracles[0] });
        assert_eq!(m.status(id).await?, PactStatus::Negotiating);

        send(accept(accepter, owed)).await?;
        let want = code(PactStatus::Negotiating);
        let have = code(PactStatus::Funded);
        assert_reverts!(accept(m.cast.stranger, owed), WrongStatus { have: have, want: want });
    }
    Ok(())
}

#[tokio::test]
async fn only_the_creator_cancels_and_only_before_acceptance() -> Result {
    let m = Market::open().await?;
    let (id, _) = m.create(m.terms(Initiator::Seller, payment()).await?).await?;
    assert_reverts!(m.chain.pact.cancelPact(id).from(m.cast.buyer), NotCreator {});
    m.accept(id, Initiator::Seller, payment()).await?;
    let (have, want) = (code(PactStatus::Funded), code(PactStatus::Negotiating));
    assert_reverts!(m.chain.pact.cancelPact(id).from(m.cast.seller), WrongStatus { have: have, want: want });
    Ok(())
}

#[tokio::test]
async fn only_the_seller_works_and_only_in_order() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, payment()).await?;
    let pact = &m.chain.pact;
    let (funded, in_progress) = (code(PactStatus::Funded), code(PactStatus::InProgress));

    assert_reverts!(pact.startWork(id).from(m.cast.buyer), NotSeller {});
    assert_reverts!(
        pact.submitWork(id, hash(2)).from(m.cast.seller),
        WrongStatus { have: funded, want: in_progress }
    );
    send(pact.startWork(id).from(m.cast.seller)).await?;
    assert_reverts!(pact.startWork(id).from(m.cast.seller), WrongStatus { have: in_progress, want: funded });
    assert_reverts!(pact.submitWork(id, hash(2)).from(m.cast.buyer), NotSeller {});
    assert_reverts!(pact.submitWork(id, alloy::primitives::B256::ZERO).from(m.cast.seller), ZeroHash {});
    assert_eq!(m.status(id).await?, PactStatus::InProgress);

    let late = m.funded(Initiator::Buyer, payment()).await?;
    let deadline = pact.getPact(late).call().await?.deadline;
    m.chain.increase_time(DEADLINE_IN + 1).await?;
    assert_reverts!(pact.startWork(late).from(m.cast.seller), DeadlinePassed { deadline: deadline });
    Ok(())
}

#[tokio::test]
async fn only_named_oracles_score_once_within_range() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, payment()).await?;
    let pact = &m.chain.pact;
    let oracle = m.cast.oracles[0];
    let (in_progress, pending) = (code(PactStatus::InProgress), code(PactStatus::PendingVerify));

    send(pact.startWork(id).from(m.cast.seller)).await?;
    assert_reverts!(
        pact.submitVerification(id, 90, hash(3)).from(oracle),
        WrongStatus { have: in_progress, want: pending }
    );
    m.submit(id).await?;

    // A registered oracle that this pact did not name.
    let outsider = m.cast.stranger;
    m.register_oracle(outsider).await?;
    assert_reverts!(pact.submitVerification(id, 90, hash(3)).from(outsider), NotPactOracle {});
    assert_reverts!(pact.submitVerification(id, 90, hash(3)).from(m.cast.seller), NotPactOracle {});
    assert_reverts!(pact.submitVerification(id, 101, hash(3)).from(oracle), ScoreTooHigh { score: 101 });
    assert_reverts!(pact.submitVerification(id, 90, alloy::primitives::B256::ZERO).from(oracle), ZeroHash {});
    send(pact.submitVerification(id, 90, hash(3)).from(oracle)).await?;
    assert_reverts!(pact.submitVerification(id, 10, hash(4)).from(oracle), AlreadyScored { oracle: oracle });

    let v = pact.getVerification(id, oracle).call().await?;
    assert_eq!((v.submitted, v.score, v.proof), (true, 90, hash(3)), "the second score changed the first");
    Ok(())
}

#[tokio::test]
async fn only_the_buyer_reviews_and_only_after_verification() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let early = m.funded(Initiator::Seller, payment()).await?;
    let (funded, approval) = (code(PactStatus::Funded), code(PactStatus::PendingApproval));
    assert_reverts!(pact.approveWork(early).from(m.cast.buyer), WrongStatus { have: funded, want: approval });
    assert_reverts!(pact.rejectWork(early).from(m.cast.buyer), WrongStatus { have: funded, want: approval });
    assert_reverts!(pact.autoApprove(early).from(m.cast.buyer), WrongStatus { have: funded, want: approval });

    let id = m.pending_approval(Initiator::Seller, payment()).await?;
    assert_reverts!(pact.approveWork(id).from(m.cast.seller), NotBuyer {});
    assert_reverts!(pact.rejectWork(id).from(m.cast.stranger), NotBuyer {});
    assert_eq!(m.status(id).await?, PactStatus::PendingApproval);
    Ok(())
}

#[tokio::test]
async fn disputes_go_to_the_agreed_arbitrator_only() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let arbitrator = m.cast.arbitrator;
    let (id, _) = m.create(m.terms(Initiator::Buyer, payment()).await?).await?;
    let negotiating = code(PactStatus::Negotiating);
    assert_reverts!(
        pact.raiseDispute(id, arbitrator).from(m.cast.buyer),
        NotDisputable { have: negotiating }
    );
    m.accept(id, Initiator::Buyer, payment()).await?;

    assert_reverts!(pact.raiseDispute(id, arbitrator).from(m.cast.stranger), NotParty {});
    let judge_of_my_choosing = m.cast.stranger;
    assert_reverts!(
        pact.raiseDispute(id, judge_of_my_choosing).from(m.cast.buyer),
        ArbitratorMismatch { given: judge_of_my_choosing, agreed: arbitrator }
    );
    let (funded, disputed) = (code(PactStatus::Funded), code(PactStatus::Disputed));
    assert_reverts!(
        pact.resolveDispute(id, true).from(arbitrator),
        WrongStatus { have: funded, want: disputed }
    );

    send(pact.raiseDispute(id, arbitrator).from(m.cast.seller)).await?;
    assert_reverts!(pact.raiseDispute(id, arbitrator).from(m.cast.buyer), NotDisputable { have: disputed });
    assert_reverts!(pact.resolveDispute(id, true).from(m.cast.seller), NotArbitrator {});
    assert_reverts!(pact.resolveDispute(id, false).from(m.cast.buyer), NotArbitrator {});
    assert_eq!(m.status(id).await?, PactStatus::Disputed);
    Ok(())
}

#[tokio::test]
async fn terminal_pacts_accept_nothing_more() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.pending_approval(Initiator::Buyer, payment()).await?;
    send(pact.approveWork(id).from(m.cast.buyer)).await?;
    let completed = code(PactStatus::Completed);
    assert_reverts!(
        pact.approveWork(id).from(m.cast.buyer),
        WrongStatus { have: completed, want: code(PactStatus::PendingApproval) }
    );
    assert_reverts!(pact.claimTimeout(id).from(m.cast.buyer), NoTimeoutFrom { have: completed });
    assert_reverts!(
        pact.raiseDispute(id, m.cast.arbitrator).from(m.cast.buyer),
        NotDisputable { have: completed }
    );
    assert_eq!(m.credit(m.cast.seller).await?, payment() + stake(payment()), "paid twice");
    Ok(())
}

#[tokio::test]
async fn withdrawing_nothing_is_refused() -> Result {
    let m = Market::open().await?;
    assert_reverts!(m.chain.pact.withdraw(Address::ZERO).from(m.cast.stranger), NothingToWithdraw {});
    Ok(())
}
