//! Pacts paid in a token: every payout path to the base unit in USDC (6 decimals), deposits by
//! exact allowance and by EIP-2612 permit, and tokens that misbehave (a fee on transfer, `false`
//! answers, no return data, re-entry, a downward rebase) or are not on the allowlist: each is
//! refused with state unchanged, or is harmless.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors, AgentPactInstance},
    AgentRegistry::{self, AgentRegistryErrors},
    DeployOptions, Initiator, PactStatus, TestToken,
};
use agentpact_tests::{
    HarnessError,
    chain::{TestChain, revert_of, send},
    pacts::{DEADLINE_IN, Market, REVIEW_PERIOD, accepter_deposit, creator_deposit, stake},
    receiver::{HostileToken::HostileTokenInstance, deploy_hostile_token},
};
use alloy::{
    primitives::{Address, U256},
    providers::DynProvider,
    sol_types::{SolCall, SolError},
};

type Result = std::result::Result<(), HarnessError>;

/// 5 USDC and 7 base units: the stake rounds down (0.5 USDC), and a payout that forgot the odd
/// unit shows.
fn payment() -> U256 {
    U256::from(5_000_007u64)
}

/// How a USDC pact ends, and what each party must be credited for it.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Approved,
    AutoApproved,
    SellerWinsDispute,
    BuyerWinsDispute,
    SellerNeverDelivers,
    ArbitratorSilent,
    Cancelled,
    NeverAccepted,
}

impl Ending {
    const ALL: [Self; 8] = [
        Self::Approved,
        Self::AutoApproved,
        Self::SellerWinsDispute,
        Self::BuyerWinsDispute,
        Self::SellerNeverDelivers,
        Self::ArbitratorSilent,
        Self::Cancelled,
        Self::NeverAccepted,
    ];

    /// (buyer's credit, seller's credit) of a pact paying `p`, created by `initiator`.
    fn credits(self, initiator: Initiator, p: U256) -> (U256, U256) {
        let s = stake(p);
        match self {
            Self::Approved | Self::AutoApproved => (s, p + s),
            Self::SellerWinsDispute => (U256::ZERO, p + s + s),
            Self::BuyerWinsDispute | Self::SellerNeverDelivers => (p + s + s, U256::ZERO),
            Self::ArbitratorSilent => (p + s, s),
            Self::Cancelled | Self::NeverAccepted => match initiator {
                Initiator::Buyer => (p + s, U256::ZERO),
                Initiator::Seller => (U256::ZERO, s),
            },
        }
    }
}

/// Walks a USDC pact created by `initiator` to `ending`.
async fn end(m: &Market, initiator: Initiator, ending: Ending) -> std::result::Result<U256, HarnessError> {
    let usdc = *m.chain.usdc.address();
    let pact = &m.chain.pact;
    let (id, _) = m.create(m.terms_in(usdc, initiator, payment()).await?).await?;
    match ending {
        Ending::Cancelled => {
            send(pact.cancelPact(id).from(m.creator(initiator))).await?;
            return Ok(id);
        }
        Ending::NeverAccepted => {
            m.chain.increase_time(DEADLINE_IN).await?;
            send(pact.claimTimeout(id).from(m.cast.stranger)).await?;
            return Ok(id);
        }
        _ => {}
    }
    m.accept(id, initiator, payment()).await?;
    match ending {
        Ending::SellerNeverDelivers => {
            m.chain.increase_time(DEADLINE_IN + 1).await?;
            send(pact.claimTimeout(id).from(m.cast.stranger)).await?;
            return Ok(id);
        }
        Ending::ArbitratorSilent => {
            send(pact.raiseDispute(id, m.cast.arbitrator).from(m.cast.buyer)).await?;
            m.chain.increase_time(8 * 24 * 60 * 60).await?;
            send(pact.claimTimeout(id).from(m.cast.stranger)).await?;
            return Ok(id);
        }
        _ => {}
    }
    m.submitted(id).await?;
    m.verified(id, &[90, 80]).await?;
    match ending {
        Ending::Approved => send(pact.approveWork(id).from(m.cast.buyer)).await?,
        Ending::AutoApproved => {
            m.chain.increase_time(REVIEW_PERIOD + 1).await?;
            send(pact.autoApprove(id).from(m.cast.stranger)).await?
        }
        Ending::SellerWinsDispute | Ending::BuyerWinsDispute => {
            send(pact.rejectWork(id).from(m.cast.buyer)).await?;
            let seller_wins = matches!(ending, Ending::SellerWinsDispute);
            send(pact.resolveDispute(id, seller_wins).from(m.cast.arbitrator)).await?
        }
        _ => unreachable!("handled above"),
    };
    Ok(id)
}

#[tokio::test]
async fn every_payout_path_pays_usdc_to_the_unit_and_never_touches_eth() -> Result {
    for initiator in [Initiator::Buyer, Initiator::Seller] {
        let m = Market::open().await?;
        let usdc = *m.chain.usdc.address();
        let escrow = m.chain.deployment.agent_pact;
        let (buyer, seller) = (m.cast.buyer, m.cast.seller);
        let start = (m.chain.holding(usdc, buyer).await?, m.chain.holding(usdc, seller).await?);
        let (mut owed_buyer, mut owed_seller) = (U256::ZERO, U256::ZERO);
        for ending in Ending::ALL {
            let id = end(&m, initiator, ending).await?;
            let (b, s) = ending.credits(initiator, payment());
            owed_buyer += b;
            owed_seller += s;
            let context = format!("{initiator:?} pact {id} {ending:?}");
            assert!(m.status(id).await?.is_terminal(), "{context}");
            assert_eq!(m.credit_in(usdc, buyer).await?, owed_buyer, "{context}: buyer's USDC credit");
            assert_eq!(m.credit_in(usdc, seller).await?, owed_seller, "{context}: seller's USDC credit");
            assert_eq!(m.credit(buyer).await?, U256::ZERO, "{context}: a USDC pact credits no ETH");
            assert_eq!(m.credit(seller).await?, U256::ZERO, "{context}: a USDC pact credits no ETH");
        }
        assert_eq!(m.withdraw_in(usdc, buyer).await?, owed_buyer);
        assert_eq!(m.withdraw_in(usdc, seller).await?, owed_seller);
        assert_eq!(m.chain.holding(usdc, escrow).await?, U256::ZERO, "the escrow keeps nothing");
        assert_eq!(m.chain.pact.owed(usdc).call().await?, U256::ZERO);
        // Each party ends with what it put in, plus or minus what the endings moved between them.
        let end_holdings = (m.chain.holding(usdc, buyer).await?, m.chain.holding(usdc, seller).await?);
        assert_eq!(
            end_holdings.0 + end_holdings.1,
            start.0 + start.1,
            "{initiator:?}: USDC was created or lost"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_permit_creates_and_accepts_in_one_transaction_each() -> Result {
    let m = Market::open().await?;
    let usdc = *m.chain.usdc.address();
    let (pact, escrow) = (&m.chain.pact, m.chain.deployment.agent_pact);
    let terms = m.terms_in(usdc, Initiator::Buyer, payment()).await?;
    let deposit = creator_deposit(Initiator::Buyer, payment());

    // A permit for one unit less than the deposit does not do: refused, nothing moves.
    let short = m.permit(usdc, m.cast.buyer, deposit - U256::from(1u8)).await?;
    let refused = revert_of::<AgentPactErrors, _, _>(
        pact.createPactWithPermit(terms.clone(), short).from(m.cast.buyer),
    )
    .await;
    assert_eq!(refused, AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token: usdc }));
    assert_eq!(pact.pactCount().call().await?, U256::ZERO);

    let permit = m.permit(usdc, m.cast.buyer, deposit).await?;
    let id = pact.pactCount().call().await?;
    send(pact.createPactWithPermit(terms, permit).from(m.cast.buyer)).await?;
    assert_eq!(m.chain.holding(usdc, escrow).await?, deposit);
    assert_eq!(m.chain.usdc.allowance(m.cast.buyer, escrow).call().await?, U256::ZERO, "exactly the deposit");

    // Somebody submits the seller's permit first (front-running it): accepting still works.
    let owed = accepter_deposit(Initiator::Buyer, payment());
    let permit = m.permit(usdc, m.cast.seller, owed).await?;
    let t = &m.chain.usdc;
    send(
        t.permit(m.cast.seller, escrow, owed, permit.deadline, permit.v, permit.r, permit.s)
            .from(m.cast.stranger),
    )
    .await?;
    send(pact.acceptPactWithPermit(id, permit).from(m.cast.seller)).await?;
    assert_eq!(m.status(id).await?, PactStatus::Funded);
    assert_eq!(m.chain.holding(usdc, escrow).await?, deposit + owed);

    // An ETH pact takes no permit.
    let eth_terms = m.terms(Initiator::Buyer, payment()).await?;
    let any = m.permit(usdc, m.cast.buyer, deposit).await?;
    let refused =
        revert_of::<AgentPactErrors, _, _>(pact.createPactWithPermit(eth_terms, any).from(m.cast.buyer))
            .await;
    assert_eq!(refused, AgentPactErrors::NoPermitForNative(AgentPact::NoPermitForNative {}));
    Ok(())
}

#[tokio::test]
async fn token_deposits_take_exactly_the_allowance_and_no_eth() -> Result {
    let m = Market::open().await?;
    let usdc = *m.chain.usdc.address();
    let pact = &m.chain.pact;
    let terms = m.terms_in(usdc, Initiator::Seller, payment()).await?;
    let deposit = creator_deposit(Initiator::Seller, payment());
    let escrow = m.chain.deployment.agent_pact;

    send(m.chain.usdc.approve(escrow, deposit - U256::from(1u8)).from(m.cast.seller)).await?;
    let refused =
        revert_of::<AgentPactErrors, _, _>(pact.createPact(terms.clone()).from(m.cast.seller)).await;
    assert_eq!(refused, AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token: usdc }));

    send(m.chain.usdc.approve(escrow, deposit).from(m.cast.seller)).await?;
    let refused = revert_of::<AgentPactErrors, _, _>(
        pact.createPact(terms.clone()).from(m.cast.seller).value(U256::from(1u8)),
    )
    .await;
    assert_eq!(
        refused,
        AgentPactErrors::WrongValue(AgentPact::WrongValue { sent: U256::from(1u8), required: U256::ZERO })
    );
    assert_eq!(pact.pactCount().call().await?, U256::ZERO, "nothing was created");
    assert_eq!(m.chain.holding(usdc, escrow).await?, U256::ZERO);
    assert_eq!(m.chain.balance(escrow).await?, U256::ZERO);

    send(pact.createPact(terms).from(m.cast.seller)).await?;
    assert_eq!(m.chain.holding(usdc, escrow).await?, deposit);
    Ok(())
}

#[tokio::test]
async fn an_allowance_to_the_escrow_serves_its_owner_alone() -> Result {
    let m = Market::open().await?;
    let usdc = *m.chain.usdc.address();
    let (pact, escrow) = (&m.chain.pact, m.chain.deployment.agent_pact);
    // The buyer has approved far more than any deposit; a stranger, and the buyer's own second
    // wallet (the arbitrator of the buyer's pacts), try to pay their deposits out of it.
    send(m.chain.usdc.approve(escrow, U256::MAX).from(m.cast.buyer)).await?;
    let before = m.chain.holding(usdc, m.cast.buyer).await?;
    for thief in [m.cast.stranger, m.cast.arbitrator] {
        let mut terms = m.terms_in(usdc, Initiator::Buyer, payment()).await?;
        terms.arbitrator = m.cast.buyer;
        let refused = revert_of::<AgentPactErrors, _, _>(pact.createPact(terms).from(thief)).await;
        assert_eq!(
            refused,
            AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token: usdc })
        );
    }
    let id = m.create(m.terms_in(usdc, Initiator::Seller, payment()).await?).await?.0;
    let refused = revert_of::<AgentPactErrors, _, _>(pact.acceptPact(id).from(m.cast.stranger)).await;
    assert_eq!(refused, AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token: usdc }));

    // Nor does the buyer's permit, replayed by someone else: the escrow only takes from the caller.
    let permit = m.permit(usdc, m.cast.buyer, accepter_deposit(Initiator::Seller, payment())).await?;
    let refused =
        revert_of::<AgentPactErrors, _, _>(pact.acceptPactWithPermit(id, permit).from(m.cast.stranger)).await;
    assert_eq!(refused, AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token: usdc }));
    assert_eq!(m.chain.holding(usdc, m.cast.buyer).await?, before, "the buyer paid for nobody");
    assert_eq!(m.status(id).await?, PactStatus::Negotiating);
    Ok(())
}

#[tokio::test]
async fn a_token_off_the_allowlist_is_refused_everywhere() -> Result {
    let m = Market::open().await?;
    let stranger_token = TestToken::deploy(m.chain.provider.clone(), "Other".into(), "OTH".into(), 6).await?;
    let other = *stranger_token.address();
    send(stranger_token.mint(m.cast.buyer, payment() * U256::from(2u8))).await?;
    let escrow = m.chain.deployment.agent_pact;
    send(stranger_token.approve(escrow, payment() * U256::from(2u8)).from(m.cast.buyer)).await?;
    let terms = m.terms_in(other, Initiator::Buyer, payment()).await?;
    let pact = &m.chain.pact;

    let refused = revert_of::<AgentPactErrors, _, _>(pact.createPact(terms.clone()).from(m.cast.buyer)).await;
    assert_eq!(
        refused,
        AgentPactErrors::CurrencyNotAllowed(AgentPact::CurrencyNotAllowed { currency: other })
    );
    let permit = m.permit(other, m.cast.buyer, payment()).await?;
    let refused =
        revert_of::<AgentPactErrors, _, _>(pact.createPactWithPermit(terms, permit).from(m.cast.buyer)).await;
    assert_eq!(
        refused,
        AgentPactErrors::CurrencyNotAllowed(AgentPact::CurrencyNotAllowed { currency: other })
    );
    assert_eq!(stranger_token.balanceOf(escrow).call().await?, U256::ZERO);
    assert!(!pact.acceptsCurrency(other).call().await?);
    assert!(pact.acceptsCurrency(Address::ZERO).call().await?);
    assert!(pact.acceptsCurrency(*m.chain.usdc.address()).call().await?);

    // The market takes no price in it either.
    let profile = AgentRegistry::Profile {
        name: "designer".into(),
        description: String::new(),
        endpoint: String::new(),
        metadataUri: String::new(),
        capabilities: vec![AgentRegistry::Capability {
            name: "logo-design".into(),
            description: String::new(),
            price: payment(),
            currency: other,
        }],
    };
    let refused =
        revert_of::<AgentRegistryErrors, _, _>(m.chain.agents.register(profile).from(m.cast.seller)).await;
    assert_eq!(
        refused,
        AgentRegistryErrors::CurrencyNotAccepted(AgentRegistry::CurrencyNotAccepted { currency: other })
    );
    Ok(())
}

#[tokio::test]
async fn each_allowed_currency_is_announced_with_its_decimals_and_symbol() -> Result {
    let m = Market::open().await?;
    let announced = m.chain.pact.CurrencyAllowed_filter().from_block(0).query().await?;
    let seen: Vec<(Address, u8, String)> =
        announced.into_iter().map(|(e, _)| (e.currency, e.decimals, e.symbol)).collect();
    assert_eq!(seen, vec![(Address::ZERO, 18, "ETH".into()), (*m.chain.usdc.address(), 6, "USDC".into())]);

    // A deployment cannot allow an account without code, nor the same token twice.
    for tokens in [vec![m.cast.stranger], vec![*m.chain.usdc.address(); 2]] {
        let options = DeployOptions { tokens, ..DeployOptions::default() };
        assert!(agentpact_contracts::deploy(m.chain.provider.clone(), options).await.is_err());
    }
    Ok(())
}

/// A market whose escrow also allows a [`HostileToken`] (6 decimals), which buyer and seller have
/// approved without limit.
struct Hostile {
    m: Market,
    token: HostileTokenInstance<DynProvider>,
}

impl Hostile {
    async fn open() -> std::result::Result<Self, HarnessError> {
        let mut chain = TestChain::start().await?;
        let token = deploy_hostile_token(&chain, 6).await?;
        chain.redeploy_allowing(vec![*token.address()]).await?;
        let m = Market::open_on(chain).await?;
        for who in [m.cast.buyer, m.cast.seller] {
            send(token.approve(m.chain.deployment.agent_pact, U256::MAX).from(who)).await?;
        }
        Ok(Self { m, token })
    }

    /// The escrow that allows the token.
    fn escrow(&self) -> &AgentPactInstance<DynProvider> {
        &self.m.chain.pact
    }

    async fn set(&self, mode: u8, data: Vec<u8>) -> Result {
        send(self.token.configure(mode, *self.escrow().address(), data.into())).await?;
        Ok(())
    }

    async fn terms(&self) -> std::result::Result<AgentPact::Terms, HarnessError> {
        self.m.terms_in(*self.token.address(), Initiator::Buyer, payment()).await
    }

    /// Creates pact 0 in the token, has it accepted, disputed and won by the seller; returns the
    /// pot credited to the seller.
    async fn seller_wins_first_pact(&self) -> std::result::Result<U256, HarnessError> {
        let (buyer, seller, arbitrator) = (self.m.cast.buyer, self.m.cast.seller, self.m.cast.arbitrator);
        send(self.escrow().createPact(self.terms().await?).from(buyer)).await?;
        send(self.escrow().acceptPact(U256::ZERO).from(seller)).await?;
        send(self.escrow().raiseDispute(U256::ZERO, arbitrator).from(buyer)).await?;
        send(self.escrow().resolveDispute(U256::ZERO, true).from(arbitrator)).await?;
        Ok(payment() + stake(payment()) * U256::from(2u8))
    }

    /// The buyer proposes a pact of two stages (the payment, then twice it) in the token.
    async fn staged(&self) -> Result {
        let amounts = [payment(), payment() + payment()];
        let (terms, stages) = self.m.staged_terms(*self.token.address(), Initiator::Buyer, &amounts).await?;
        send(self.escrow().createStagedPact(terms, stages).from(self.m.cast.buyer)).await?;
        Ok(())
    }

    async fn held(&self) -> std::result::Result<U256, HarnessError> {
        Ok(self.token.balanceOf(*self.escrow().address()).call().await?)
    }
}

const NORMAL: u8 = 0;
const FEE: u8 = 1;
const FALSE: u8 = 2;
const SILENT: u8 = 3;
const REENTER: u8 = 4;

#[tokio::test]
async fn a_fee_on_transfer_is_refused_with_nothing_changed() -> Result {
    let h = Hostile::open().await?;
    h.set(FEE, vec![]).await?;
    let deposit = creator_deposit(Initiator::Buyer, payment());
    let refused =
        revert_of::<AgentPactErrors, _, _>(h.escrow().createPact(h.terms().await?).from(h.m.cast.buyer))
            .await;
    let token = *h.token.address();
    let arrived = deposit - deposit / U256::from(100u8);
    assert_eq!(
        refused,
        AgentPactErrors::DepositMismatch(AgentPact::DepositMismatch { token, expected: deposit, arrived })
    );
    assert_eq!(h.escrow().pactCount().call().await?, U256::ZERO);
    assert_eq!(h.held().await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn a_token_answering_false_is_a_failed_transfer() -> Result {
    let h = Hostile::open().await?;
    h.set(FALSE, vec![]).await?;
    let token = *h.token.address();
    let refused =
        revert_of::<AgentPactErrors, _, _>(h.escrow().createPact(h.terms().await?).from(h.m.cast.buyer))
            .await;
    assert_eq!(refused, AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token }));
    assert_eq!(h.escrow().pactCount().call().await?, U256::ZERO);

    // A credit in a token that later answers false stays credited, and is paid once it behaves.
    h.set(NORMAL, vec![]).await?;
    send(h.escrow().createPact(h.terms().await?).from(h.m.cast.buyer)).await?;
    send(h.escrow().cancelPact(U256::ZERO).from(h.m.cast.buyer)).await?;
    let credit = creator_deposit(Initiator::Buyer, payment());
    h.set(FALSE, vec![]).await?;
    let refused = revert_of::<AgentPactErrors, _, _>(h.escrow().withdraw(token).from(h.m.cast.buyer)).await;
    assert_eq!(refused, AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token }));
    assert_eq!(h.escrow().balances(token, h.m.cast.buyer).call().await?, credit);
    h.set(NORMAL, vec![]).await?;
    send(h.escrow().withdraw(token).from(h.m.cast.buyer)).await?;
    assert_eq!(h.held().await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn a_token_returning_nothing_works_end_to_end() -> Result {
    let h = Hostile::open().await?;
    h.set(SILENT, vec![]).await?;
    let seller = h.m.cast.seller;
    let pot = h.seller_wins_first_pact().await?;
    let token = *h.token.address();
    let before = h.token.balanceOf(seller).call().await?;
    send(h.escrow().withdraw(token).from(seller)).await?;
    assert_eq!(h.token.balanceOf(seller).call().await?, before + pot);
    assert_eq!(h.held().await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn a_token_that_reenters_the_escrow_gets_nothing() -> Result {
    let h = Hostile::open().await?;
    let (buyer, seller) = (h.m.cast.buyer, h.m.cast.seller);
    let token = *h.token.address();
    // The seller is owed a pot; the token then tries to withdraw it again from inside a transfer.
    let pot = h.seller_wins_first_pact().await?;
    for call in [
        AgentPact::withdrawCall { currency: token }.abi_encode(),
        AgentPact::acceptPactCall { pactId: U256::from(1u8) }.abi_encode(),
        AgentPact::claimTimeoutCall { pactId: U256::ZERO }.abi_encode(),
    ] {
        h.set(REENTER, call).await?;
        // A second pact's deposit runs the token's re-entry from inside the escrow.
        send(h.escrow().createPact(h.terms().await?).from(buyer)).await?;
        assert!(!h.token.lastReentrySucceeded().call().await?, "a re-entry went through");
        let selector = h.token.lastReentryResult().call().await?;
        assert_eq!(&selector[..4], AgentPact::Reentrancy::SELECTOR.as_slice(), "refused by the guard");
    }
    h.set(NORMAL, vec![]).await?;
    let before = h.token.balanceOf(seller).call().await?;
    send(h.escrow().withdraw(token).from(seller)).await?;
    assert_eq!(h.token.balanceOf(seller).call().await?, before + pot, "paid once, exactly");
    let deposits = creator_deposit(Initiator::Buyer, payment()) * U256::from(3u8);
    assert_eq!(h.held().await?, deposits, "the three open pacts' deposits, nothing else");
    assert_eq!(h.escrow().owed(token).call().await?, deposits);
    Ok(())
}

/// Hostile tokens during stage payouts: a token re-entering every stage act and a settlement of
/// another pact from inside `createStagedPact`'s deposit is refused by the guard; a credit of a
/// stage's release survives the token answering `false` at withdrawal, and is paid once it behaves.
#[tokio::test]
async fn a_hostile_token_gets_nothing_from_stage_payouts() -> Result {
    let h = Hostile::open().await?;
    let (buyer, seller) = (h.m.cast.buyer, h.m.cast.seller);
    let token = *h.token.address();
    // Pact 0: stage 0 verified and waiting for the buyer's review; stage 1 disputed.
    h.staged().await?;
    let id = U256::ZERO;
    send(h.escrow().acceptPact(id).from(seller)).await?;
    send(h.escrow().startWork(id).from(seller)).await?;
    send(h.escrow().submitStage(id, 0, agentpact_tests::chain::hash(2)).from(seller)).await?;
    for (oracle, score) in h.m.cast.oracles.iter().zip([90u8, 80]) {
        send(h.escrow().scoreStage(id, 0, score, agentpact_tests::chain::hash(3)).from(*oracle)).await?;
    }
    send(h.escrow().finalizeStage(id, 0).from(h.m.cast.stranger)).await?;
    send(h.escrow().disputeStage(id, 1, h.m.cast.arbitrator).from(buyer)).await?;
    for call in [
        AgentPact::approveStageCall { pactId: id, stage: 0 }.abi_encode(),
        AgentPact::autoApproveStageCall { pactId: id, stage: 0 }.abi_encode(),
        AgentPact::resolveStageCall { pactId: id, stage: 1, sellerShare: 10_000 }.abi_encode(),
        AgentPact::claimStageTimeoutCall { pactId: id, stage: 1 }.abi_encode(),
        AgentPact::acceptSettlementCall { pactId: id, round: 1, sellerShare: 10_000 }.abi_encode(),
        AgentPact::withdrawCall { currency: token }.abi_encode(),
    ] {
        h.set(REENTER, call).await?;
        h.staged().await?;
        assert!(!h.token.lastReentrySucceeded().call().await?, "a re-entry went through");
        let selector = h.token.lastReentryResult().call().await?;
        assert_eq!(&selector[..4], AgentPact::Reentrancy::SELECTOR.as_slice(), "refused by the guard");
    }
    h.set(NORMAL, vec![]).await?;
    send(h.escrow().approveStage(id, 0).from(buyer)).await?;
    let released = payment() + stake(payment());
    assert_eq!(h.escrow().balances(token, seller).call().await?, released, "stage 0's release, once");
    h.set(FALSE, vec![]).await?;
    let refused = revert_of::<AgentPactErrors, _, _>(h.escrow().withdraw(token).from(seller)).await;
    assert_eq!(refused, AgentPactErrors::TokenTransferFailed(AgentPact::TokenTransferFailed { token }));
    assert_eq!(h.escrow().balances(token, seller).call().await?, released, "the credit stays");
    h.set(NORMAL, vec![]).await?;
    let before = h.token.balanceOf(seller).call().await?;
    send(h.escrow().withdraw(token).from(seller)).await?;
    assert_eq!(h.token.balanceOf(seller).call().await?, before + released);
    assert_eq!(h.held().await?, h.escrow().owed(token).call().await?, "held = owed");
    Ok(())
}

#[tokio::test]
async fn a_token_that_shrinks_what_the_escrow_holds_takes_no_new_deposit() -> Result {
    let h = Hostile::open().await?;
    let token = *h.token.address();
    send(h.escrow().createPact(h.terms().await?).from(h.m.cast.buyer)).await?;
    let owed = creator_deposit(Initiator::Buyer, payment());
    send(h.token.shrink(*h.escrow().address(), U256::from(1u8))).await?;
    let refused =
        revert_of::<AgentPactErrors, _, _>(h.escrow().createPact(h.terms().await?).from(h.m.cast.buyer))
            .await;
    assert_eq!(
        refused,
        AgentPactErrors::BalanceShort(AgentPact::BalanceShort { token, owed, held: owed - U256::from(1u8) })
    );
    assert_eq!(h.escrow().pactCount().call().await?, U256::from(1u8));
    Ok(())
}

#[tokio::test]
async fn usdc_and_eth_pacts_side_by_side_keep_separate_books() -> Result {
    let m = Market::open().await?;
    let usdc = *m.chain.usdc.address();
    let escrow = m.chain.deployment.agent_pact;
    let eth_payment = agentpact_tests::chain::ether(1);
    let in_usdc = m.create(m.terms_in(usdc, Initiator::Buyer, payment()).await?).await?.0;
    let in_eth = m.create(m.terms(Initiator::Buyer, eth_payment).await?).await?.0;
    m.accept(in_usdc, Initiator::Buyer, payment()).await?;
    m.accept(in_eth, Initiator::Buyer, eth_payment).await?;
    let full = |p: U256| p + stake(p) * U256::from(2u8);
    assert_eq!(m.chain.holding(usdc, escrow).await?, full(payment()));
    assert_eq!(m.chain.balance(escrow).await?, full(eth_payment));
    send(m.chain.pact.raiseDispute(in_usdc, m.cast.arbitrator).from(m.cast.buyer)).await?;
    send(m.chain.pact.resolveDispute(in_usdc, false).from(m.cast.arbitrator)).await?;
    assert_eq!(m.credit_in(usdc, m.cast.buyer).await?, full(payment()));
    assert_eq!(m.credit(m.cast.buyer).await?, U256::ZERO);
    let refused =
        revert_of::<AgentPactErrors, _, _>(m.chain.pact.withdraw(Address::ZERO).from(m.cast.buyer)).await;
    assert_eq!(refused, AgentPactErrors::NothingToWithdraw(AgentPact::NothingToWithdraw {}));
    Ok(())
}
