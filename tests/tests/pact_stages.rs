//! Escrow v4's pacts in stages (#55 step 4, docs/contracts.md §Stages): a pact of 1 to 8 stages,
//! each with its amount and deadline and its own run (submit, scores, review, dispute, ruling,
//! timeouts), stakes of a tenth of each stage, a settlement over the stages still held, and the
//! pact's status its lowest live stage's. Each rule at its exact second and amount, every credit
//! to the base unit, in ETH and in USDC.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors, AgentPactEvents},
    Ending, Initiator, PactStatus,
    rules::{self, Division, MAX_PAYMENT, MAX_STAGES},
};
use agentpact_tests::{
    HarnessError,
    chain::{Mined, ether, hash, revert_of, send},
    pacts::{Market, staged_stake, stake},
};
use alloy::primitives::{Address, U256};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn units(n: u64) -> U256 {
    U256::from(n)
}

/// The statuses of every stage of pact `id`.
async fn statuses(m: &Market, id: U256) -> Result<Vec<PactStatus>> {
    let stages = m.chain.pact.getStages(id).call().await?;
    stages
        .iter()
        .map(|s| PactStatus::try_from(s.status).map_err(|e| HarnessError::Process(e.to_string())))
        .collect()
}

/// The `StageEnded` events of `mined`: (stage, ending, status, to seller, to buyer).
fn stage_ends(mined: &Mined) -> Vec<(u8, Ending, PactStatus, U256, U256)> {
    mined
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentPactEvents::StageEnded(e) => Some((
                e.stage,
                Ending::try_from(e.ending).expect("a known ending"),
                PactStatus::try_from(e.status).expect("a known status"),
                e.toSeller,
                e.toBuyer,
            )),
            _ => None,
        })
        .collect()
}

/// Asserts the escrow holds exactly what it owes in `currency`.
async fn assert_conserved(m: &Market, currency: Address) -> Result {
    let held = m.chain.holding(currency, m.chain.deployment.agent_pact).await?;
    assert_eq!(held, m.chain.pact.owed(currency).call().await?, "held = owed in {currency}");
    Ok(())
}

/// The seller of a funded staged pact starts, and submits stage `k`.
async fn submit(m: &Market, id: U256, k: u8) -> Result<Mined> {
    Ok(send(m.chain.pact.submitStage(id, k, hash(20 + u64::from(k))).from(m.cast.seller)).await?)
}

/// Both oracles score stage `k` and a stranger finalizes it.
async fn verify(m: &Market, id: U256, k: u8, scores: [u8; 2]) -> Result<Mined> {
    for (oracle, score) in m.cast.oracles.iter().zip(scores) {
        send(m.chain.pact.scoreStage(id, k, score, hash(30)).from(*oracle)).await?;
    }
    Ok(send(m.chain.pact.finalizeStage(id, k).from(m.cast.stranger)).await?)
}

#[tokio::test]
async fn staged_terms_are_checked_before_anything_is_taken() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let buyer = m.cast.buyer;
    let amounts = [ether(1), ether(2), ether(3)];
    let (terms, stages) = m.staged_terms(Address::ZERO, Initiator::Buyer, &amounts).await?;
    let deposit = terms.payment + staged_stake(&stages);
    let refused = |t: AgentPact::Terms, s: Vec<AgentPact::StageTerms>| {
        revert_of::<AgentPactErrors, _, _>(pact.createStagedPact(t, s).from(buyer).value(deposit))
    };
    let count = |n: usize| {
        AgentPactErrors::StageCountOutOfRange(AgentPact::StageCountOutOfRange {
            count: units(n as u64),
            minimum: units(1),
            maximum: units(MAX_STAGES as u64),
        })
    };
    assert_eq!(refused(terms.clone(), vec![]).await, count(0), "no stage");
    let nine = vec![AgentPact::StageTerms { amount: ether(1), deadline: terms.deadline }; MAX_STAGES + 1];
    let nine_terms = AgentPact::Terms { payment: ether(9), ..terms.clone() };
    assert_eq!(refused(nine_terms, nine).await, count(MAX_STAGES + 1), "one stage too many");

    let mut over = stages.clone();
    over[1].amount += units(1);
    assert_eq!(
        refused(terms.clone(), over).await,
        AgentPactErrors::StageAmountsSum(AgentPact::StageAmountsSum {
            sum: ether(6) + units(1),
            payment: ether(6)
        }),
        "amounts summing above the payment"
    );
    let mut under = stages.clone();
    under[2].amount -= units(1);
    assert_eq!(
        refused(terms.clone(), under).await,
        AgentPactErrors::StageAmountsSum(AgentPact::StageAmountsSum {
            sum: ether(6) - units(1),
            payment: ether(6)
        })
    );
    let mut dust = stages.clone();
    dust[0].amount = units(9);
    assert_eq!(
        refused(AgentPact::Terms { payment: ether(5) + units(9), ..terms.clone() }, dust).await,
        AgentPactErrors::PaymentTooSmall(AgentPact::PaymentTooSmall {
            payment: units(9),
            minimum: units(10)
        }),
        "a stage whose stake would be 0"
    );
    // Each stage at most MAX_PAYMENT, so the sum cannot overflow; the sum is held to it too.
    let mut huge = stages.clone();
    huge[0].amount = MAX_PAYMENT + units(1);
    assert_eq!(
        refused(terms.clone(), huge).await,
        AgentPactErrors::PaymentTooLarge(AgentPact::PaymentTooLarge {
            payment: MAX_PAYMENT + units(1),
            maximum: MAX_PAYMENT
        })
    );
    let mut twins = stages.clone();
    twins[0].amount = MAX_PAYMENT;
    twins[1].amount = MAX_PAYMENT;
    let twin_sum = MAX_PAYMENT + MAX_PAYMENT + ether(3);
    assert_eq!(
        refused(AgentPact::Terms { payment: twin_sum, ..terms.clone() }, twins).await,
        AgentPactErrors::PaymentTooLarge(AgentPact::PaymentTooLarge {
            payment: twin_sum,
            maximum: MAX_PAYMENT
        }),
        "stages each allowed, summing above the largest payment"
    );

    let mut backwards = stages.clone();
    backwards[1].deadline = backwards[0].deadline - 1;
    assert_eq!(
        refused(terms.clone(), backwards.clone()).await,
        AgentPactErrors::StageDeadlineOutOfOrder(AgentPact::StageDeadlineOutOfOrder {
            stage: units(1),
            deadline: backwards[1].deadline,
            previous: backwards[0].deadline,
        })
    );
    let mut short = stages.clone();
    short[2].deadline = terms.deadline - 1;
    assert_eq!(
        refused(terms.clone(), short).await,
        AgentPactErrors::LastStageDeadline(AgentPact::LastStageDeadline {
            deadline: terms.deadline - 1,
            pactDeadline: terms.deadline,
        })
    );

    // Acceptance closes at least an hour before the first stage is due: its last second is
    // allowed, the next refused.
    let first = stages[0].deadline;
    let late = AgentPact::Terms { acceptBy: first - rules::MIN_WORK_WINDOW + 1, ..terms.clone() };
    let now = m.chain.now().await?;
    let error = refused(late, stages.clone()).await;
    match error {
        AgentPactErrors::AcceptByOutOfRange(e) => {
            assert_eq!(
                (e.acceptBy, e.latest),
                (first - rules::MIN_WORK_WINDOW + 1, first - rules::MIN_WORK_WINDOW)
            );
            assert!(e.earliest > now);
        }
        other => panic!("expected AcceptByOutOfRange, got {other:?}"),
    }
    let on_time = AgentPact::Terms { acceptBy: first - rules::MIN_WORK_WINDOW, ..terms.clone() };
    let (id, _) = m.create_staged(on_time, stages.clone()).await?;
    assert_eq!(pact.getPact(id).call().await?.acceptBy, first - rules::MIN_WORK_WINDOW);
    let (id, mined) = m.create_staged(terms.clone(), stages.clone()).await?;
    assert_eq!(
        pact.getPact(id).call().await?.acceptBy,
        first - rules::MIN_WORK_WINDOW,
        "0: an hour before the first stage"
    );
    let staged: Vec<_> = mined
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentPactEvents::PactStaged(e) => Some(e.stages),
            _ => None,
        })
        .collect();
    assert_eq!(staged.len(), 1, "PactStaged once");
    assert_eq!(
        staged[0].iter().map(|s| (s.amount, s.deadline)).collect::<Vec<_>>(),
        stages.iter().map(|s| (s.amount, s.deadline)).collect::<Vec<_>>()
    );
    assert_eq!(pact.getLedger(id).call().await?.stages, 3);
    assert_conserved(&m, Address::ZERO).await
}

#[tokio::test]
async fn stakes_are_a_tenth_of_each_stage_so_they_follow_what_is_unreleased() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    // 15 + 15: stakes 1 + 1, not a tenth of 30 (3).
    let amounts = [units(15), units(15)];
    let (terms, stages) = m.staged_terms(Address::ZERO, Initiator::Buyer, &amounts).await?;
    let (id, mined) = m.create_staged(terms, stages).await?;
    let created = mined.receipt.decoded_log::<AgentPact::PactCreated>().expect("PactCreated").data;
    assert_eq!((created.stake, created.deposit), (units(2), units(32)));
    send(pact.acceptPact(id).from(m.cast.seller).value(units(2))).await?;
    let p = pact.getPact(id).call().await?;
    assert_eq!((p.payment, p.buyerStake, p.sellerStake), (units(30), units(2), units(2)));
    assert_eq!(m.chain.balance(m.chain.deployment.agent_pact).await?, units(34));
    assert_conserved(&m, Address::ZERO).await?;

    // A one-stage pact is v3's: one stage of the whole payment, a tenth of it staked.
    let one = m.funded(Initiator::Seller, units(30)).await?;
    let stages = pact.getStages(one).call().await?;
    assert_eq!(stages.len(), 1);
    assert_eq!(
        (stages[0].amount, PactStatus::try_from(stages[0].status).ok()),
        (30, Some(PactStatus::Funded))
    );
    assert_eq!(pact.getPact(one).call().await?.sellerStake, units(3));
    assert_eq!(pact.getLedger(one).call().await?.stages, 1);
    Ok(())
}

/// The acceptance run in miniature, in ETH and in USDC: three stages, one approved, one disputed
/// and ruled 70/30, one settled at 40 %; every credit to the base unit, each stage's figures in
/// its `StageEnded`, and the pact ending MIXED in SPLIT with its last transaction.
#[tokio::test]
async fn three_stages_end_three_ways_each_credit_to_the_unit() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let usdc = *m.chain.usdc.address();
    for (currency, amounts) in [
        (Address::ZERO, [ether(1), ether(2) + units(7), ether(3) + units(3)]),
        (usdc, [units(1_000_000), units(2_500_007), units(3_000_003)]),
    ] {
        let (buyer, seller) = (m.cast.buyer, m.cast.seller);
        let before = (m.credit_in(currency, buyer).await?, m.credit_in(currency, seller).await?);
        let id = m.staged(currency, Initiator::Buyer, &amounts).await?;
        send(pact.startWork(id).from(seller)).await?;
        assert_eq!(statuses(&m, id).await?, [PactStatus::InProgress; 3], "startWork starts every stage");

        // Stage 0: submitted, verified, approved.
        submit(&m, id, 0).await?;
        verify(&m, id, 0, [90, 80]).await?;
        let approved = send(pact.approveStage(id, 0).from(buyer)).await?;
        let s0 = stake(amounts[0]);
        assert_eq!(
            stage_ends(&approved),
            [(0, Ending::Completed, PactStatus::Completed, amounts[0] + s0, s0)]
        );
        assert_eq!(m.status(id).await?, PactStatus::InProgress, "the pact shows stage 1 now");

        // Stage 1: submitted and disputed by the buyer; ruled 70/30 of its pot.
        submit(&m, id, 1).await?;
        send(pact.disputeStage(id, 1, m.cast.arbitrator).from(buyer)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Disputed);
        let ruled = send(pact.resolveStage(id, 1, 7_000).from(m.cast.arbitrator)).await?;
        let (to_seller_1, to_buyer_1) = rules::division(amounts[1], 7_000, Division::Ruling);
        let pot1 = amounts[1] + stake(amounts[1]) + stake(amounts[1]);
        assert_eq!(to_seller_1, pot1 * units(7_000) / units(10_000));
        assert_eq!(stage_ends(&ruled), [(1, Ending::Ruled, PactStatus::Split, to_seller_1, to_buyer_1)]);

        // Stage 2: settled at 40 %, the offer covering it alone.
        send(pact.proposeSettlement(id, 4_000, 0).from(seller)).await?;
        let round = pact.getSettlement(id).call().await?.round;
        let settled = send(pact.acceptSettlement(id, round, 4_000).from(buyer)).await?;
        let (to_seller_2, to_buyer_2) = rules::division(amounts[2], 4_000, Division::Settlement);
        assert_eq!(to_seller_2, amounts[2] * units(4_000) / units(10_000) + stake(amounts[2]));
        assert_eq!(stage_ends(&settled), [(2, Ending::Split, PactStatus::Split, to_seller_2, to_buyer_2)]);
        let ended = settled.receipt.decoded_log::<AgentPact::PactEnded>().expect("PactEnded").data;
        assert_eq!((ended.ending, ended.status), (Ending::Mixed.code(), PactStatus::Split.code()));
        assert!(matches!(settled.events().last(), Some(AgentPactEvents::PactEnded(_))), "PactEnded last");
        assert_eq!(pact.getLedger(id).call().await?.ending, Ending::Mixed.code());
        assert_eq!(m.status(id).await?, PactStatus::Split);

        let seller_total = amounts[0] + s0 + to_seller_1 + to_seller_2;
        let buyer_total = s0 + to_buyer_1 + to_buyer_2;
        let deposits: U256 = amounts.iter().map(|a| *a + stake(*a) + stake(*a)).sum();
        assert_eq!(seller_total + buyer_total, deposits, "every unit deposited is credited");
        assert_eq!(m.credit_in(currency, seller).await? - before.1, seller_total, "{currency}: seller");
        assert_eq!(m.credit_in(currency, buyer).await? - before.0, buyer_total, "{currency}: buyer");
        let endings: Vec<_> = pact.getStages(id).call().await?.iter().map(|s| s.ending).collect();
        assert_eq!(endings, [Ending::Completed.code(), Ending::Ruled.code(), Ending::Split.code()]);
        assert_conserved(&m, currency).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_missed_stage_deadline_refunds_that_stage_alone_at_the_next_second() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let amounts = [ether(1), ether(2)];
    let id = m.staged(Address::ZERO, Initiator::Buyer, &amounts).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    let d0 = pact.getStage(id, 0).call().await?.deadline;
    let refused =
        |k: u8| revert_of::<AgentPactErrors, _, _>(pact.claimStageTimeout(id, k).from(m.cast.stranger));

    // At stage 0's deadline second it can still be delivered and not yet be claimed.
    let before = m.chain.snapshot().await?;
    m.chain.at(d0).await?;
    assert_eq!(
        refused(0).await,
        AgentPactErrors::DeadlineNotReached(AgentPact::DeadlineNotReached { deadline: d0 })
    );
    m.chain.at(d0).await?;
    submit(&m, id, 0).await?;
    m.chain.restore(before).await?;

    // From the next second: not delivered, but claimed, by anyone.
    m.chain.at(d0 + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.submitStage(id, 0, hash(5)).from(m.cast.seller)).await,
        AgentPactErrors::DeadlinePassed(AgentPact::DeadlinePassed { deadline: d0 })
    );
    let buyer_before = m.credit(m.cast.buyer).await?;
    let claimed = send(pact.claimStageTimeout(id, 0).from(m.cast.stranger)).await?;
    let refund = amounts[0] + stake(amounts[0]) + stake(amounts[0]);
    assert_eq!(
        stage_ends(&claimed),
        [(0, Ending::RefundedAfterFailure, PactStatus::Refunded, U256::ZERO, refund)]
    );
    assert_eq!(m.credit(m.cast.buyer).await? - buyer_before, refund, "stage 0's amount and both its stakes");
    assert_eq!(statuses(&m, id).await?, [PactStatus::Refunded, PactStatus::InProgress], "stage 1 untouched");
    assert_eq!(m.status(id).await?, PactStatus::InProgress);
    assert_eq!(
        refused(1).await,
        AgentPactErrors::DeadlineNotReached(AgentPact::DeadlineNotReached {
            deadline: pact.getStage(id, 1).call().await?.deadline,
        })
    );

    // Stage 1 delivered and approved: the pact ends SPLIT (one refunded, one completed), MIXED.
    submit(&m, id, 1).await?;
    verify(&m, id, 1, [90, 80]).await?;
    let approved = send(pact.approveStage(id, 1).from(m.cast.buyer)).await?;
    let ended = approved.receipt.decoded_log::<AgentPact::PactEnded>().expect("PactEnded").data;
    assert_eq!((ended.ending, ended.status), (Ending::Mixed.code(), PactStatus::Split.code()));
    assert_conserved(&m, Address::ZERO).await
}

#[tokio::test]
async fn the_pact_shows_its_lowest_live_stage() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.staged(Address::ZERO, Initiator::Seller, &[ether(1), ether(1), ether(1)]).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    // The last stage moves first: the pact still shows stage 0's status.
    submit(&m, id, 2).await?;
    assert_eq!(m.status(id).await?, PactStatus::InProgress);
    let shown = pact.getPact(id).call().await?;
    assert_eq!(shown.submittedAt, 0, "getPact's lifecycle fields are stage 0's");
    submit(&m, id, 0).await?;
    assert_eq!(m.status(id).await?, PactStatus::PendingVerify);
    verify(&m, id, 0, [90, 80]).await?;
    send(pact.approveStage(id, 0).from(m.cast.buyer)).await?;
    assert_eq!(m.status(id).await?, PactStatus::InProgress, "stage 1 is now the lowest live one");
    send(pact.disputeStage(id, 1, m.cast.arbitrator).from(m.cast.seller)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Disputed);
    let shown = pact.getPact(id).call().await?;
    assert!(shown.disputedAt > 0 && shown.submittedAt == 0, "stage 1's fields");
    send(pact.resolveStage(id, 1, 10_000).from(m.cast.arbitrator)).await?;
    assert_eq!(m.status(id).await?, PactStatus::PendingVerify, "stage 2, submitted first, now shows");
    verify(&m, id, 2, [90, 80]).await?;
    let mined = send(pact.approveStage(id, 2).from(m.cast.buyer)).await?;
    // Every stage paid the seller in full: COMPLETED, though one was ruled.
    let ended = mined.receipt.decoded_log::<AgentPact::PactEnded>().expect("PactEnded").data;
    assert_eq!((ended.ending, ended.status), (Ending::Mixed.code(), PactStatus::Completed.code()));
    let shown = pact.getPact(id).call().await?;
    assert_eq!(shown.proofHash, hash(22), "once none is live, the last stage's fields");
    let stages: Vec<_> = pact
        .getStages(id)
        .call()
        .await?
        .iter()
        .map(|s| {
            (PactStatus::try_from(s.status).expect("status"), Ending::try_from(s.ending).expect("ending"))
        })
        .collect();
    assert_eq!(
        rules::pact_of_stages(&stages),
        (PactStatus::Completed, Ending::Mixed),
        "the Rust rule agrees"
    );
    Ok(())
}

#[tokio::test]
async fn v3_calls_on_a_pact_of_stages_name_the_stage_calls_and_stages_are_bounded() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.staged(Address::ZERO, Initiator::Buyer, &[ether(1), ether(1)]).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    let use_stage = AgentPactErrors::UseStage(AgentPact::UseStage { pactId: id, stages: units(2) });
    let seller = m.cast.seller;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.submitWork(id, hash(2)).from(seller)).await,
        use_stage
    );
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.raiseDispute(id, m.cast.arbitrator).from(seller)).await,
        use_stage
    );
    assert_eq!(revert_of::<AgentPactErrors, _, _>(pact.claimTimeout(id).from(seller)).await, use_stage);
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.submitStage(id, 2, hash(2)).from(seller)).await,
        AgentPactErrors::NoSuchStage(AgentPact::NoSuchStage {
            pactId: id,
            stage: units(2),
            stages: units(2)
        })
    );
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.getStage(id, 2).from(seller)).await,
        AgentPactErrors::NoSuchStage(AgentPact::NoSuchStage {
            pactId: id,
            stage: units(2),
            stages: units(2)
        })
    );
    // The stage calls work on a one-stage pact, as stage 0, with v3's events.
    let one = m.funded(Initiator::Buyer, ether(1)).await?;
    send(pact.startWork(one).from(seller)).await?;
    let mined = send(pact.submitStage(one, 0, hash(2)).from(seller)).await?;
    assert!(mined.receipt.decoded_log::<AgentPact::WorkSubmitted>().is_some(), "v3's event");
    assert!(mined.receipt.decoded_log::<AgentPact::StageSubmitted>().is_none());
    // A stranger and the other party are refused a stage's acts as they are a pact's.
    submit(&m, id, 0).await?;
    verify(&m, id, 0, [90, 80]).await?;
    for who in [m.cast.stranger, seller, m.cast.arbitrator] {
        assert_eq!(
            revert_of::<AgentPactErrors, _, _>(pact.approveStage(id, 0).from(who)).await,
            AgentPactErrors::NotBuyer(AgentPact::NotBuyer {})
        );
    }
    Ok(())
}

#[tokio::test]
async fn an_oracle_scores_each_stage_once() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.staged(Address::ZERO, Initiator::Buyer, &[ether(1), ether(1)]).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    submit(&m, id, 0).await?;
    submit(&m, id, 1).await?;
    let o0 = m.cast.oracles[0];
    send(pact.scoreStage(id, 0, 90, hash(30)).from(o0)).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.scoreStage(id, 0, 10, hash(30)).from(o0)).await,
        AgentPactErrors::AlreadyScored(AgentPact::AlreadyScored { oracle: o0 })
    );
    send(pact.scoreStage(id, 1, 20, hash(31)).from(o0)).await?;
    assert_eq!(pact.getStageVerification(id, 0, o0).call().await?.score, 90);
    assert_eq!(pact.getStageVerification(id, 1, o0).call().await?.score, 20);
    assert_eq!(pact.getVerification(id, o0).call().await?.score, 90, "getVerification is stage 0's");
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.scoreStage(id, 0, 90, hash(30)).from(m.cast.stranger)).await,
        AgentPactErrors::NotPactOracle(AgentPact::NotPactOracle {})
    );
    // Stage 1 fails on its own scores (20 and a silent oracle: 12), stage 0 passes on its own
    // (90 from both).
    send(pact.scoreStage(id, 0, 90, hash(30)).from(m.cast.oracles[1])).await?;
    let closes = pact.getStage(id, 1).call().await?.submittedAt + rules::VERIFICATION_PERIOD;
    m.chain.at(closes + 1).await?;
    send(pact.finalizeStage(id, 1).from(m.cast.stranger)).await?;
    send(pact.finalizeStage(id, 0).from(m.cast.stranger)).await?;
    assert_eq!(statuses(&m, id).await?, [PactStatus::PendingApproval, PactStatus::Disputed]);
    assert_eq!(
        (pact.getStage(id, 0).call().await?.finalScore, pact.getStage(id, 1).call().await?.finalScore),
        (90, 12)
    );
    Ok(())
}

/// On a pact of several stages a change of any stage is a verdict: an offer priced before stage
/// 1 was delivered is void once it is, though the pact's status (stage 0's) did not move.
#[tokio::test]
async fn a_change_of_any_stage_voids_the_standing_offer() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.staged(Address::ZERO, Initiator::Buyer, &[ether(1), ether(1)]).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    send(pact.proposeSettlement(id, 5_000, 0).from(m.cast.buyer)).await?;
    let offer = pact.getSettlement(id).call().await?;
    let epoch = pact.getLedger(id).call().await?.epoch;
    submit(&m, id, 1).await?;
    assert_eq!(m.status(id).await?, PactStatus::InProgress, "the pact's status did not move");
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, offer.round, 5_000).from(m.cast.seller))
            .await,
        AgentPactErrors::OfferVoided(AgentPact::OfferVoided { offeredAt: epoch, epoch: epoch + 1 })
    );
    // Stage 1 approved, then an offer over what is still held (stage 0 alone) taken: stage 1's
    // release is not touched.
    verify(&m, id, 1, [90, 80]).await?;
    send(pact.approveStage(id, 1).from(m.cast.buyer)).await?;
    send(pact.proposeSettlement(id, 5_000, 0).from(m.cast.seller)).await?;
    let round = pact.getSettlement(id).call().await?.round;
    let mined = send(pact.acceptSettlement(id, round, 5_000).from(m.cast.buyer)).await?;
    let half = ether(1) / units(2);
    assert_eq!(
        stage_ends(&mined),
        [(0, Ending::Split, PactStatus::Split, half + stake(ether(1)), half + stake(ether(1)))]
    );
    assert_conserved(&m, Address::ZERO).await
}

/// Front-runs in one block on a pact of stages: stage 1's approval and the acceptance of an offer
/// priced while it was held, mined right behind it (the offer is void: `OfferVoided`); and at
/// stage 0's first second past its deadline, the seller's late delivery behind a stranger's claim
/// (the claim ends stage 0 alone, the delivery finds it REFUNDED), with stage 1 untouched.
#[tokio::test]
async fn front_runs_in_one_block_on_a_pact_of_stages() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.staged(Address::ZERO, Initiator::Buyer, &[ether(1), ether(1)]).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    submit(&m, id, 1).await?;
    for (oracle, score) in m.cast.oracles.iter().zip([90u8, 80]) {
        send(pact.scoreStage(id, 1, score, hash(30)).from(*oracle)).await?;
    }
    // The seller offers 50 % while stage 1 is still being verified; in one block the stage passes
    // (finalized by anyone) and the buyer takes the offer right behind it.
    send(pact.proposeSettlement(id, 5_000, 0).from(m.cast.seller)).await?;
    let epoch = pact.getLedger(id).call().await?.epoch;
    let finalize = pact.finalizeStage(id, 1).from(m.cast.stranger).into_transaction_request();
    let take = pact.acceptSettlement(id, 1, 5_000).from(m.cast.buyer).into_transaction_request();
    let mined = m.in_one_block(vec![finalize, take]).await?;
    assert!(mined[0].receipt.status(), "the finalization is mined");
    assert_eq!(
        mined[1].error,
        Some(AgentPactErrors::OfferVoided(AgentPact::OfferVoided { offeredAt: epoch, epoch: epoch + 1 }))
    );
    assert_eq!(statuses(&m, id).await?, [PactStatus::InProgress, PactStatus::PendingApproval]);

    // Stage 0's deadline passes: claim and late delivery in one block at its first refused second.
    send(pact.approveStage(id, 1).from(m.cast.buyer)).await?;
    let d0 = pact.getStage(id, 0).call().await?.deadline;
    m.chain.at(d0 + 1).await?;
    let claim = pact.claimStageTimeout(id, 0).from(m.cast.stranger).into_transaction_request();
    let late = pact.submitStage(id, 0, hash(9)).from(m.cast.seller).into_transaction_request();
    let mined = m.in_one_block(vec![claim, late]).await?;
    assert!(mined[0].receipt.status(), "the claim is mined");
    assert_eq!(
        mined[1].error,
        Some(AgentPactErrors::WrongStatus(AgentPact::WrongStatus {
            have: PactStatus::Refunded.code(),
            want: PactStatus::InProgress.code(),
        }))
    );
    assert_eq!(statuses(&m, id).await?, [PactStatus::Refunded, PactStatus::Completed]);
    assert_conserved(&m, Address::ZERO).await
}

#[tokio::test]
async fn an_offer_waits_for_every_live_stage_to_have_a_window() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.staged(Address::ZERO, Initiator::Buyer, &[ether(1), ether(1)]).await?;
    send(pact.startWork(id).from(m.cast.seller)).await?;
    submit(&m, id, 1).await?;
    verify(&m, id, 1, [90, 80]).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.proposeSettlement(id, 5_000, 0).from(m.cast.seller)).await,
        AgentPactErrors::NotSettleable(AgentPact::NotSettleable { have: PactStatus::PendingApproval.code() }),
        "stage 1 awaits the buyer's review"
    );
    // The offer's latest expiry is an hour before the earliest live window closes: stage 0's
    // deadline, earlier than stage 1's.
    let id = m.staged(Address::ZERO, Initiator::Buyer, &[ether(1), ether(1)]).await?;
    let d0 = pact.getStage(id, 0).call().await?.deadline;
    send(pact.proposeSettlement(id, 5_000, 0).from(m.cast.seller)).await?;
    assert_eq!(pact.getSettlement(id).call().await?.expiresAt, d0 - rules::VERDICT_MARGIN);
    Ok(())
}

/// A settlement over two live stages of 10 base units at 1 bp gives the seller nothing of either:
/// each stage ends a cancel by agreement (REFUNDED), and so does the pact.
#[tokio::test]
async fn a_dust_settlement_over_stages_is_a_cancel() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let id = m.staged(Address::ZERO, Initiator::Buyer, &[units(10), units(10)]).await?;
    send(pact.proposeSettlement(id, 1, 0).from(m.cast.buyer)).await?;
    let round = pact.getSettlement(id).call().await?.round;
    let mined = send(pact.acceptSettlement(id, round, 1).from(m.cast.seller)).await?;
    let each = (Ending::CancelledByAgreement, PactStatus::Refunded, units(1), units(11));
    assert_eq!(
        stage_ends(&mined),
        [(0, each.0, each.1, each.2, each.3), (1, each.0, each.1, each.2, each.3)]
    );
    let ended = mined.receipt.decoded_log::<AgentPact::PactEnded>().expect("PactEnded").data;
    assert_eq!(
        (ended.ending, ended.status),
        (Ending::CancelledByAgreement.code(), PactStatus::Refunded.code())
    );
    assert_eq!(
        rules::end_of_division(units(10), 1, Division::Settlement),
        (PactStatus::Refunded, Ending::CancelledByAgreement)
    );
    assert_conserved(&m, Address::ZERO).await
}

/// An unaccepted pact of stages ends as one: the creator's one refund, each stage REFUNDED with
/// the pact's ending, its part of the deposit in its `StageEnded`.
#[tokio::test]
async fn an_unaccepted_pact_of_stages_ends_whole() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let amounts = [units(100), units(250)];
    let (terms, stages) = m.staged_terms(Address::ZERO, Initiator::Seller, &amounts).await?;
    let (id, _) = m.create_staged(terms, stages).await?;
    let cancelled = send(pact.cancelPact(id).from(m.cast.seller)).await?;
    assert_eq!(
        stage_ends(&cancelled),
        [
            (0, Ending::Withdrawn, PactStatus::Refunded, units(10), U256::ZERO),
            (1, Ending::Withdrawn, PactStatus::Refunded, units(25), U256::ZERO),
        ]
    );
    let payouts: Vec<_> = cancelled
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentPactEvents::Payout(p) => Some((p.to, p.amount)),
            _ => None,
        })
        .collect();
    assert_eq!(payouts, [(m.cast.seller, units(35))], "one refund of the whole deposit");

    let (terms, stages) = m.staged_terms(Address::ZERO, Initiator::Buyer, &amounts).await?;
    let (id, _) = m.create_staged(terms, stages).await?;
    let accept_by = pact.getPact(id).call().await?.acceptBy;
    m.chain.at(accept_by + 1).await?;
    let expired = send(pact.claimTimeout(id).from(m.cast.stranger)).await?;
    assert_eq!(
        stage_ends(&expired),
        [
            (0, Ending::Expired, PactStatus::Refunded, U256::ZERO, units(110)),
            (1, Ending::Expired, PactStatus::Refunded, U256::ZERO, units(275)),
        ]
    );
    let ended = expired.receipt.decoded_log::<AgentPact::PactEnded>().expect("PactEnded").data;
    assert_eq!((ended.ending, ended.status), (Ending::Expired.code(), PactStatus::Refunded.code()));
    assert_conserved(&m, Address::ZERO).await
}

/// The statuses a stage may move to from `from` in one call (its own or a pact-wide one).
fn may_follow(from: PactStatus, to: PactStatus) -> bool {
    use PactStatus::*;
    from == to
        || match from {
            Negotiating => matches!(to, Funded | Refunded),
            Funded | InProgress => {
                matches!(to, InProgress | PendingVerify | Disputed | Refunded | Split | Completed)
            }
            PendingVerify => matches!(to, PendingApproval | Disputed | Refunded | Split | Completed),
            PendingApproval => matches!(to, Completed | Disputed),
            Disputed => matches!(to, Completed | Refunded | Split),
            Completed | Refunded | Split => false,
        }
}

/// One pact of the random run: its id, currency, stage count and last seen stage statuses.
struct Tracked {
    id: U256,
    currency: Address,
    statuses: Vec<PactStatus>,
}

/// What the escrow must still hold for pact `id`: the creator's deposit while nobody accepted,
/// then every live stage's amount and both its stakes.
async fn locked(m: &Market, id: U256) -> Result<U256> {
    let pact = &m.chain.pact;
    let p = pact.getPact(id).call().await?;
    if p.status == PactStatus::Negotiating.code() {
        return Ok(if p.initiator == Initiator::Buyer.code() {
            p.payment + p.buyerStake
        } else {
            p.sellerStake
        });
    }
    let stages = pact.getStages(id).call().await?;
    Ok(stages
        .iter()
        .filter(|s| !PactStatus::try_from(s.status).expect("status").is_terminal())
        .map(|s| U256::from(s.amount) + stake(U256::from(s.amount)) * units(2))
        .sum())
}

/// Random acts by every actor (the parties, the arbitrator, both oracles, a stranger; the right
/// one most often, anyone at times) on pacts of 2, 3 and 8 stages in ETH and USDC, with the clock
/// jumping: after every step the escrow holds what it owes in each currency, and that is exactly
/// the live pacts' locked amounts plus every unwithdrawn credit; each pact's status and ending are
/// its stages' by `rules::pact_of_stages`; a call naming stage k moves no other stage, and every
/// stage moves only as the machine allows. The fixed seed reaches every status at stages 0, 1
/// and the last.
#[tokio::test]
async fn pacts_of_stages_conserve_every_unit_under_random_acts() -> Result {
    use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};
    let m = Market::open().await?;
    // The course of the run is the seed's alone: block times do not follow the wall clock.
    m.chain.one_second_blocks().await?;
    let pact = &m.chain.pact;
    let usdc = *m.chain.usdc.address();
    let c = &m.cast;
    let actors = [c.buyer, c.seller, c.arbitrator, c.oracles[0], c.oracles[1], c.stranger];
    let mut rng = StdRng::seed_from_u64(55);
    let mut pacts: Vec<Tracked> = Vec::new();
    let mut reached: std::collections::HashSet<(usize, PactStatus)> = Default::default();
    let shapes = [2usize, 3, 8];
    let (mut created, mut taken, mut refused) = (0usize, 0usize, 0usize);
    let mut acts_taken = std::collections::BTreeMap::new();
    for step in 0..700 {
        // Keep three pacts live: a new one, in turn of size and currency, replaces an ended one.
        pacts.retain(|t| t.statuses.iter().any(|s| !s.is_terminal()));
        while pacts.len() < 3 {
            let n = shapes[created % shapes.len()];
            let currency = if created % 2 == 0 { Address::ZERO } else { usdc };
            let amounts: Vec<U256> = (0..n).map(|_| units(rng.random_range(10..5_000_000))).collect();
            let initiator = if rng.random_bool(0.5) { Initiator::Buyer } else { Initiator::Seller };
            let id = if rng.random_bool(0.8) {
                m.staged(currency, initiator, &amounts).await?
            } else {
                let (terms, stages) = m.staged_terms(currency, initiator, &amounts).await?;
                m.create_staged(terms, stages).await?.0
            };
            created += 1;
            pacts.push(Tracked { id, currency, statuses: statuses(&m, id).await? });
        }
        let t = pacts.choose(&mut rng).expect("three pacts");
        let (id, n) = (t.id, t.statuses.len());
        // A live stage most often: an ended one refuses nearly everything.
        let live: Vec<u8> = (0..n as u8).filter(|k| !t.statuses[usize::from(*k)].is_terminal()).collect();
        let k = match live.choose(&mut rng) {
            Some(k) if rng.random_bool(0.9) => *k,
            _ => rng.random_range(0..n) as u8,
        };
        let pick = |rng: &mut StdRng, right: Address| {
            if rng.random_bool(0.85) { right } else { *actors.choose(rng).expect("actors") }
        };
        let share = *[0u16, 1, 3_000, 7_000, 9_999, 10_000].choose(&mut rng).expect("shares");
        let oracle = *c.oracles.choose(&mut rng).expect("oracles");
        // Mostly an act the stage's status has (by the right actor, most often), at times any act.
        let fitting: &[u32] = match t.statuses[usize::from(k)] {
            PactStatus::Negotiating => &[16, 13],
            PactStatus::Funded => &[0, 7, 10, 9],
            PactStatus::InProgress => &[1, 1, 7, 10, 9],
            PactStatus::PendingVerify => &[2, 2, 2, 3, 3, 7, 10, 12],
            PactStatus::PendingApproval => &[4, 5, 6],
            PactStatus::Disputed => &[8, 8, 9, 10, 12],
            PactStatus::Completed | PactStatus::Refunded | PactStatus::Split => &[11, 14],
        };
        let act = match rng.random_range(0..40) {
            0 => 15,
            1..=4 => rng.random_range(0..17),
            5..=7 => 11,
            _ => *fitting.choose(&mut rng).expect("acts"),
        };
        let (named, result) = match act {
            0 => (None, Some(send(pact.startWork(id).from(pick(&mut rng, c.seller))).await)),
            1 => (Some(k), Some(send(pact.submitStage(id, k, hash(7)).from(pick(&mut rng, c.seller))).await)),
            2 => {
                // The right oracle: one that has not scored the stage yet.
                let mut silent = Vec::new();
                for o in &c.oracles {
                    if !pact.getStageVerification(id, k, *o).call().await?.submitted {
                        silent.push(*o);
                    }
                }
                let oracle = silent.choose(&mut rng).copied().unwrap_or(oracle);
                let score =
                    if rng.random_bool(0.7) { rng.random_range(70..=100) } else { rng.random_range(0..=100) };
                (
                    Some(k),
                    Some(send(pact.scoreStage(id, k, score, hash(8)).from(pick(&mut rng, oracle))).await),
                )
            }
            3 => (Some(k), Some(send(pact.finalizeStage(id, k).from(pick(&mut rng, c.stranger))).await)),
            4 => (Some(k), Some(send(pact.approveStage(id, k).from(pick(&mut rng, c.buyer))).await)),
            5 => (Some(k), Some(send(pact.rejectStage(id, k).from(pick(&mut rng, c.buyer))).await)),
            6 => (Some(k), Some(send(pact.autoApproveStage(id, k).from(pick(&mut rng, c.stranger))).await)),
            7 => {
                let party = if rng.random_bool(0.5) { c.buyer } else { c.seller };
                (
                    Some(k),
                    Some(send(pact.disputeStage(id, k, c.arbitrator).from(pick(&mut rng, party))).await),
                )
            }
            8 => (
                Some(k),
                Some(send(pact.resolveStage(id, k, share).from(pick(&mut rng, c.arbitrator))).await),
            ),
            9 => (Some(k), Some(send(pact.claimStageTimeout(id, k).from(pick(&mut rng, c.stranger))).await)),
            10 => {
                let party = if rng.random_bool(0.5) { c.buyer } else { c.seller };
                (None, Some(send(pact.proposeSettlement(id, share, 0).from(pick(&mut rng, party))).await))
            }
            11 => {
                let offer = pact.getSettlement(id).call().await?;
                let other = if offer.by == c.buyer { c.seller } else { c.buyer };
                (
                    None,
                    Some(
                        send(
                            pact.acceptSettlement(id, offer.round, offer.sellerShare)
                                .from(pick(&mut rng, other)),
                        )
                        .await,
                    ),
                )
            }
            12 => {
                let giver = if rng.random_bool(0.5) { c.arbitrator } else { oracle };
                (None, Some(send(pact.voidOffers(id).from(pick(&mut rng, giver))).await))
            }
            13 => (None, Some(send(pact.claimTimeout(id).from(pick(&mut rng, c.stranger))).await)),
            14 => (
                None,
                Some(send(pact.withdraw(t.currency).from(*actors.choose(&mut rng).expect("actors"))).await),
            ),
            16 => {
                let p = pact.getPact(id).call().await?;
                let by_buyer = p.initiator == Initiator::Buyer.code();
                let (accepter, deposit) =
                    if by_buyer { (c.seller, p.buyerStake) } else { (c.buyer, p.payment + p.sellerStake) };
                let who = pick(&mut rng, accepter);
                let value = m.allow(t.currency, who, deposit).await?;
                (None, Some(send(pact.acceptPact(id).from(who).value(value)).await))
            }
            _ => {
                let jump = *[600u64, 3_600, 3_600, 86_400, 3 * 86_400 + 1, 7 * 86_400 + 1]
                    .choose(&mut rng)
                    .expect("jumps");
                // Set, not increased: anvil ignores `evm_increaseTime` under a block interval.
                let now = m.chain.now().await?;
                m.chain.at(now + jump).await?;
                m.chain.mine().await?;
                (None, None)
            }
        };
        match result {
            None => {}
            Some(Ok(_)) => {
                taken += 1;
                *acts_taken.entry(act).or_insert(0usize) += 1;
            }
            Some(Err(e)) => match e.as_decoded_interface_error::<AgentPactErrors>() {
                Some(_) => refused += 1,
                None => panic!(
                    "step {step}: act {act} on pact {id} stage {k} failed without an escrow error: {e}"
                ),
            },
        }

        // Every pact: stages moved only as allowed; a call naming one stage moved no other.
        for t in pacts.iter_mut() {
            let now = statuses(&m, t.id).await?;
            for (j, (before, after)) in t.statuses.iter().zip(&now).enumerate() {
                assert!(
                    may_follow(*before, *after),
                    "step {step}: pact {} stage {j}: {before:?} -> {after:?}",
                    t.id
                );
                if t.id == id
                    && named.is_some_and(|named| usize::from(named) != j)
                    && *before != PactStatus::Negotiating
                {
                    assert_eq!(before, after, "step {step}: act {act} on stage {k} moved stage {j}");
                }
            }
            let ends: Vec<_> = pact
                .getStages(t.id)
                .call()
                .await?
                .iter()
                .map(|s| {
                    (
                        PactStatus::try_from(s.status).expect("status"),
                        Ending::try_from(s.ending).expect("ending"),
                    )
                })
                .collect();
            let (status, ending) = rules::pact_of_stages(&ends);
            assert_eq!(m.status(t.id).await?, status, "step {step}: pact {}'s status is its stages'", t.id);
            if status.is_terminal() {
                assert_eq!(
                    pact.getLedger(t.id).call().await?.ending,
                    ending.code(),
                    "step {step}: pact {}",
                    t.id
                );
            }
            let last = now.len() - 1;
            for (j, s) in now.iter().enumerate() {
                if j == 0 || j == 1 || j == last {
                    reached.insert((if j == last { 2 } else { j }, *s));
                }
            }
            t.statuses = now;
        }
        // The books, per currency: held = owed = what live pacts lock + every credit.
        for currency in [Address::ZERO, usdc] {
            let held = m.chain.holding(currency, m.chain.deployment.agent_pact).await?;
            let owed = pact.owed(currency).call().await?;
            let mut sum = U256::ZERO;
            for t in pacts.iter().filter(|t| t.currency == currency) {
                sum += locked(&m, t.id).await?;
            }
            for who in actors {
                sum += m.credit_in(currency, who).await?;
            }
            assert_eq!((held, owed), (sum, sum), "step {step}: {currency}: held, owed = locked + credits");
        }
    }
    let missed: Vec<_> = [0usize, 1, 2]
        .iter()
        .flat_map(|j| PactStatus::ALL.iter().map(move |s| (*j, *s)))
        .filter(|r| !reached.contains(r))
        .collect();
    assert!(
        missed.is_empty(),
        "(stage: 0, 1, last; status) never reached: {missed:?} ({taken} taken, {refused} refused; taken by act: {acts_taken:?})"
    );
    Ok(())
}

/// Every window of a stage at its last second and the first second it refuses, each on its own
/// stage while the other runs on untouched: stage 1's delivery by its own deadline; stage 0's
/// rejection until its review window closes, auto-approval from the next second; stage 1's scores
/// until its verification window closes, finalizing with an oracle silent from the next second,
/// a ruling until its dispute window closes, the arbitrator-silent refund from the next second.
#[tokio::test]
async fn every_stage_window_closes_at_its_last_second() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let (seller, buyer, stranger, arbitrator) =
        (m.cast.seller, m.cast.buyer, m.cast.stranger, m.cast.arbitrator);
    let amounts = [ether(1), ether(2)];
    let id = m.staged(Address::ZERO, Initiator::Buyer, &amounts).await?;
    send(pact.startWork(id).from(seller)).await?;

    // Stage 1's delivery: taken at its deadline, refused a second later.
    let d1 = pact.getStage(id, 1).call().await?.deadline;
    let before = m.chain.snapshot().await?;
    m.chain.at(d1 + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.submitStage(id, 1, hash(5)).from(seller)).await,
        AgentPactErrors::DeadlinePassed(AgentPact::DeadlinePassed { deadline: d1 })
    );
    m.chain.restore(before).await?;
    let before = m.chain.snapshot().await?;
    m.chain.at(d1).await?;
    submit(&m, id, 1).await?;
    m.chain.restore(before).await?;

    // Stage 0's review: a rejection at its last second, auto-approval from the next.
    submit(&m, id, 0).await?;
    verify(&m, id, 0, [90, 80]).await?;
    let ends = pact.getStage(id, 0).call().await?.verifiedAt + pact.getPact(id).call().await?.reviewPeriod;
    let before = m.chain.snapshot().await?;
    m.chain.at(ends).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.autoApproveStage(id, 0).from(stranger)).await,
        AgentPactErrors::ReviewPeriodActive(AgentPact::ReviewPeriodActive { endsAt: ends })
    );
    m.chain.at(ends).await?;
    send(pact.rejectStage(id, 0).from(buyer)).await?;
    assert_eq!(statuses(&m, id).await?, [PactStatus::Disputed, PactStatus::InProgress]);
    m.chain.restore(before).await?;
    m.chain.at(ends + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.rejectStage(id, 0).from(buyer)).await,
        AgentPactErrors::ReviewPeriodOver(AgentPact::ReviewPeriodOver { endedAt: ends })
    );
    m.chain.at(ends + 1).await?;
    let approved = send(pact.autoApproveStage(id, 0).from(stranger)).await?;
    let paid = amounts[0] + stake(amounts[0]);
    assert_eq!(
        stage_ends(&approved),
        [(0, Ending::Completed, PactStatus::Completed, paid, stake(amounts[0]))]
    );
    assert_eq!(statuses(&m, id).await?, [PactStatus::Completed, PactStatus::InProgress], "stage 1 untouched");

    // Stage 1's verification: oracle 0 scores at the window's last second, when finalizing is
    // still refused; a second later oracle 1 is too late and anyone finalizes (100 × 60 % = 60,
    // under the pass mark of 70: DISPUTED).
    submit(&m, id, 1).await?;
    let closes = pact.getStage(id, 1).call().await?.submittedAt + rules::VERIFICATION_PERIOD;
    m.chain.at(closes).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.finalizeStage(id, 1).from(stranger)).await,
        AgentPactErrors::VerificationOpen(AgentPact::VerificationOpen {
            scored: 0,
            total: units(2),
            closesAt: closes
        })
    );
    m.chain.at(closes).await?;
    send(pact.scoreStage(id, 1, 100, hash(30)).from(m.cast.oracles[0])).await?;
    m.chain.at(closes + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.scoreStage(id, 1, 100, hash(30)).from(m.cast.oracles[1]))
            .await,
        AgentPactErrors::VerificationClosed(AgentPact::VerificationClosed { closedAt: closes })
    );
    m.chain.at(closes + 1).await?;
    send(pact.finalizeStage(id, 1).from(stranger)).await?;
    assert_eq!(statuses(&m, id).await?, [PactStatus::Completed, PactStatus::Disputed]);

    // Stage 1's dispute: ruled at its window's last second, or from the next second refunded as
    // the arbitrator was silent (each stake back to its owner, the amount to the buyer).
    let ends = pact.getStage(id, 1).call().await?.disputedAt + rules::DISPUTE_PERIOD;
    let before = m.chain.snapshot().await?;
    m.chain.at(ends).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.claimStageTimeout(id, 1).from(stranger)).await,
        AgentPactErrors::DisputePeriodActive(AgentPact::DisputePeriodActive { endsAt: ends })
    );
    m.chain.at(ends).await?;
    let ruled = send(pact.resolveStage(id, 1, 7_000).from(arbitrator)).await?;
    assert_eq!(stage_ends(&ruled)[0].1, Ending::Ruled);
    m.chain.restore(before).await?;
    m.chain.at(ends + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.resolveStage(id, 1, 7_000).from(arbitrator)).await,
        AgentPactErrors::DisputePeriodOver(AgentPact::DisputePeriodOver { endedAt: ends })
    );
    m.chain.at(ends + 1).await?;
    let silent = send(pact.claimStageTimeout(id, 1).from(stranger)).await?;
    let s = stake(amounts[1]);
    assert_eq!(stage_ends(&silent), [(1, Ending::ArbitratorSilent, PactStatus::Refunded, s, amounts[1] + s)]);
    assert_eq!(m.status(id).await?, PactStatus::Split, "one stage paid, one refunded");
    assert_conserved(&m, Address::ZERO).await
}

/// A party's puppets as the verdict givers of a pact of stages — the buyer's second wallets as
/// its arbitrator and an oracle: the oracle's score of one stage moves no other and voids the
/// standing offer (a verdict, as any score); the arbitrator reaches only the stage in dispute
/// (a ruling on another is `WrongStatus`), voids offers once while that dispute stands
/// (`AlreadyVoided`), and has no ruling after its window; the seller's other stage is paid on
/// its own review.
#[tokio::test]
async fn a_partys_puppets_as_verdict_givers_reach_one_stage_once() -> Result {
    let m = Market::open().await?;
    let pact = &m.chain.pact;
    let (seller, buyer, stranger) = (m.cast.seller, m.cast.buyer, m.cast.stranger);
    let (puppet_oracle, puppet_arbitrator) = (m.cast.oracles[0], m.cast.arbitrator);
    let amounts = [ether(1), ether(1)];
    let id = m.staged(Address::ZERO, Initiator::Buyer, &amounts).await?;
    send(pact.startWork(id).from(seller)).await?;
    submit(&m, id, 0).await?;
    submit(&m, id, 1).await?;

    // The seller offers 80 %; the puppet oracle scores stage 1 at 0: the offer is void, stage 0
    // is not moved, and the puppet cannot score stage 1 again.
    send(pact.proposeSettlement(id, 8_000, 0).from(seller)).await?;
    let offer = pact.getSettlement(id).call().await?;
    let epoch = pact.getLedger(id).call().await?.epoch;
    send(pact.scoreStage(id, 1, 0, hash(31)).from(puppet_oracle)).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.acceptSettlement(id, offer.round, 8_000).from(buyer)).await,
        AgentPactErrors::OfferVoided(AgentPact::OfferVoided { offeredAt: epoch, epoch: epoch + 1 })
    );
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.scoreStage(id, 1, 0, hash(31)).from(puppet_oracle)).await,
        AgentPactErrors::AlreadyScored(AgentPact::AlreadyScored { oracle: puppet_oracle })
    );
    assert_eq!(statuses(&m, id).await?, [PactStatus::PendingVerify, PactStatus::PendingVerify]);

    // Stage 0 passes on honest scores and stage 1 fails on the puppet's (0 and 80: 32).
    verify(&m, id, 0, [90, 80]).await?;
    send(pact.scoreStage(id, 1, 80, hash(32)).from(m.cast.oracles[1])).await?;
    send(pact.finalizeStage(id, 1).from(stranger)).await?;
    assert_eq!(statuses(&m, id).await?, [PactStatus::PendingApproval, PactStatus::Disputed]);

    // The puppet arbitrator: no ruling on stage 0, one void while stage 1 is disputed.
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.resolveStage(id, 0, 0).from(puppet_arbitrator)).await,
        AgentPactErrors::WrongStatus(AgentPact::WrongStatus {
            have: PactStatus::PendingApproval.code(),
            want: PactStatus::Disputed.code(),
        })
    );
    send(pact.voidOffers(id).from(puppet_arbitrator)).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.voidOffers(id).from(puppet_arbitrator)).await,
        AgentPactErrors::AlreadyVoided(AgentPact::AlreadyVoided { who: puppet_arbitrator })
    );

    // Past its window the puppet rules nothing; the seller's stage 0 is paid on its own review
    // and stage 1 is refunded as the arbitrator was silent, each stake back to its owner.
    let ends = pact.getStage(id, 1).call().await?.disputedAt + rules::DISPUTE_PERIOD;
    m.chain.at(ends + 1).await?;
    assert_eq!(
        revert_of::<AgentPactErrors, _, _>(pact.resolveStage(id, 1, 0).from(puppet_arbitrator)).await,
        AgentPactErrors::DisputePeriodOver(AgentPact::DisputePeriodOver { endedAt: ends })
    );
    let seller_before = m.credit(seller).await?;
    m.chain.at(ends + 1).await?;
    send(pact.autoApproveStage(id, 0).from(stranger)).await?;
    send(pact.claimStageTimeout(id, 1).from(stranger)).await?;
    let s = stake(ether(1));
    assert_eq!(
        m.credit(seller).await? - seller_before,
        ether(1) + s + s,
        "stage 0 paid, both seller stakes back"
    );
    assert_eq!(m.status(id).await?, PactStatus::Split);
    assert_conserved(&m, Address::ZERO).await
}
