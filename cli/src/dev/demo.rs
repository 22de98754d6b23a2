//! Demo pacts for the local stack: two registered oracles, one pact in every status in ETH and
//! again in USDC (SPLIT twice: by a ruling and by a settlement), a pact of three stages in ETH
//! (one approved, one ruled, one in progress), and the seller in the agent market with feedback on its completed pacts, so a dashboard or an agent has
//! something to look at from the first second.

use agentpact_contracts::{
    AgentPact, AgentRegistry, Deployment, Initiator, OracleRegistry, PactStatus, TestToken, money, rules,
};
use agentpact_lab::Cast;
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider},
};
use anyhow::{Context, bail};

/// A day, in seconds.
const DAY: u64 = 24 * 60 * 60;

/// The demo pacts of one currency, as the banner shows them: the currency's symbol and each pact's
/// id with the status the demo left it in, in id order.
pub struct Made {
    /// "ETH" or "USDC".
    pub symbol: &'static str,
    /// (pact id, its status), in the order the demo created them.
    pub pacts: Vec<(U256, PactStatus)>,
}

/// Demo pacts in one currency, each for `payment` base units of it.
struct Demo<'a> {
    pact: AgentPact::AgentPactInstance<DynProvider>,
    provider: &'a DynProvider,
    cast: &'a Cast,
    currency: Address,
    payment: U256,
}

/// Registers the oracles, then creates pacts in every status twice: pacts 0-9 for 0.1 ETH and
/// 10-19 for 5 USDC (`usdc`, a token the escrow takes), each run in code order: NEGOTIATING,
/// FUNDED, IN_PROGRESS, PENDING_VERIFY, COMPLETED, DISPUTED, REFUNDED, PENDING_APPROVAL, then
/// SPLIT by a 70/30 ruling and SPLIT by a settlement the buyer accepted; then pact 20, of three
/// stages in ETH (listed with ETH's). Registers
/// the seller as an agent offering logo design for 5 USDC (seed 000's designer), and the buyer
/// rates both completed pacts. `provider` must sign for every account of `cast`. Returns what it
/// made, ETH's pacts first.
pub async fn run(
    provider: &DynProvider,
    deployment: &Deployment,
    cast: &Cast,
    usdc: Address,
) -> anyhow::Result<[Made; 2]> {
    let registry = OracleRegistry::new(deployment.oracle_registry, provider.clone());
    for &oracle in &cast.oracles {
        let stake = registry.minStake().call().await?;
        send(registry.register(vec!["code-review".into(), "design".into()]).from(oracle).value(stake))
            .await?;
    }
    let pact = AgentPact::new(deployment.agent_pact, provider.clone());
    let in_eth = Demo {
        pact: pact.clone(),
        provider,
        cast,
        currency: Address::ZERO,
        payment: money::Currency::eth().parse("0.1")?,
    };
    let in_usdc = Demo { pact, provider, cast, currency: usdc, payment: U256::from(5_000_000u64) };
    let mut eth = in_eth.every_status().await?;
    let usdc_pacts = in_usdc.every_status().await?;
    // Then a pact in stages, last so that the ids above stay as they were.
    eth.push((in_eth.staged().await?, PactStatus::InProgress));
    let made = [Made { symbol: "ETH", pacts: eth }, Made { symbol: "USDC", pacts: usdc_pacts }];
    let market = AgentRegistry::new(deployment.agent_registry, provider.clone());
    let profile = AgentRegistry::Profile {
        name: "DesignBot Pro".into(),
        description: "Logos and brand kits, delivered as SVG".into(),
        endpoint: "http://127.0.0.1:3001/mcp".into(),
        metadataUri: String::new(),
        capabilities: vec![AgentRegistry::Capability {
            name: "logo-design".into(),
            description: "A logo in three variants".into(),
            price: in_usdc.payment,
            currency: usdc,
        }],
    };
    send(market.register(profile).from(cast.seller)).await?;
    let completed = made.iter().flat_map(|m| &m.pacts).filter(|(_, status)| *status == PactStatus::Completed);
    for &(done, _) in completed {
        send(market.submitFeedback(done, 5, vec!["fast".into()], String::new()).from(cast.buyer)).await?;
    }
    Ok(made)
}

impl Demo<'_> {
    /// Ten new pacts, one in every status in code order and a second SPLIT: each id with the
    /// status it was left in.
    async fn every_status(&self) -> anyhow::Result<Vec<(U256, PactStatus)>> {
        use PactStatus::*;
        let cast = self.cast;
        let open = self.create(Initiator::Buyer).await?;
        let funded = self.funded(Initiator::Buyer).await?;
        let started = self.funded(Initiator::Seller).await?;
        send(self.pact.startWork(started).from(cast.seller)).await?;
        let scoring = self.delivered().await?;
        self.score(scoring, cast.oracles[0], 85).await?; // one of two scores in
        let done = self.verified().await?;
        send(self.pact.approveWork(done).from(cast.buyer)).await?;
        let disputed = self.funded(Initiator::Buyer).await?;
        send(self.pact.raiseDispute(disputed, cast.arbitrator).from(cast.seller)).await?;
        let cancelled = self.create(Initiator::Buyer).await?;
        send(self.pact.cancelPact(cancelled).from(cast.buyer)).await?;
        let approving = self.verified().await?;
        let ruled = self.funded(Initiator::Buyer).await?;
        send(self.pact.raiseDispute(ruled, cast.arbitrator).from(cast.buyer)).await?;
        send(self.pact.resolveDisputeShare(ruled, 7_000).from(cast.arbitrator)).await?; // ruled 70/30
        let settled = self.funded(Initiator::Seller).await?;
        send(self.pact.startWork(settled).from(cast.seller)).await?;
        send(self.pact.proposeSettlement(settled, 6_000, 0).from(cast.seller)).await?;
        send(self.pact.acceptSettlement(settled, 1, 6_000).from(cast.buyer)).await?; // settled 60/40
        Ok(vec![
            (open, Negotiating),
            (funded, Funded),
            (started, InProgress),
            (scoring, PendingVerify),
            (done, Completed),
            (disputed, Disputed),
            (cancelled, Refunded),
            (approving, PendingApproval),
            (ruled, Split),
            (settled, Split),
        ])
    }

    async fn create(&self, initiator: Initiator) -> anyhow::Result<U256> {
        let now = self.now().await?;
        let stake = rules::stake(self.payment);
        let (creator, deposit) = match initiator {
            Initiator::Buyer => (self.cast.buyer, self.payment + stake),
            Initiator::Seller => (self.cast.seller, stake),
        };
        let terms = self.terms(initiator, now);
        rules::check_terms(&terms, creator, now)?;
        let id = self.pact.pactCount().call().await?;
        let value = self.allow(creator, deposit).await?;
        send(self.pact.createPact(terms).from(creator).value(value)).await?;
        Ok(id)
    }

    /// A buyer's pact of three stages (a fifth, a third and the rest of the payment, due in 4, 9
    /// and 14 days), accepted and started: stage 0 verified and approved, stage 1 disputed and
    /// ruled 70/30 of its pot, stage 2 still in progress. Returns its id.
    async fn staged(&self) -> anyhow::Result<U256> {
        let (cast, now) = (self.cast, self.now().await?);
        let terms = self.terms(Initiator::Buyer, now);
        rules::check_terms(&terms, cast.buyer, now)?;
        let (first, second) = (self.payment / U256::from(5u8), self.payment / U256::from(3u8));
        let stages = [
            (first, now + 4 * DAY),
            (second, now + 9 * DAY),
            (self.payment - first - second, terms.deadline),
        ]
        .map(|(amount, deadline)| AgentPact::StageTerms { amount, deadline });
        let stake: U256 = stages.iter().map(|s| rules::stake(s.amount)).sum();
        let id = self.pact.pactCount().call().await?;
        let value = self.allow(cast.buyer, self.payment + stake).await?;
        send(self.pact.createStagedPact(terms, stages.to_vec()).from(cast.buyer).value(value)).await?;
        let value = self.allow(cast.seller, stake).await?;
        send(self.pact.acceptPact(id).from(cast.seller).value(value)).await?;
        send(self.pact.startWork(id).from(cast.seller)).await?;
        for k in [0, 1] {
            send(self.pact.submitStage(id, k, B256::repeat_byte(0xd0 + k)).from(cast.seller)).await?;
        }
        for (&oracle, score) in cast.oracles.iter().zip([90, 80]) {
            send(self.pact.scoreStage(id, 0, score, B256::repeat_byte(0xac)).from(oracle)).await?;
        }
        send(self.pact.finalizeStage(id, 0).from(cast.buyer)).await?;
        send(self.pact.approveStage(id, 0).from(cast.buyer)).await?;
        send(self.pact.disputeStage(id, 1, cast.arbitrator).from(cast.buyer)).await?;
        send(self.pact.resolveStage(id, 1, 7_000).from(cast.arbitrator)).await?;
        Ok(id)
    }

    /// The latest block's time.
    async fn now(&self) -> anyhow::Result<u64> {
        Ok(self.provider.get_block_by_number(Default::default()).await?.map_or(0, |b| b.header.timestamp))
    }

    /// The demo's terms for a pact `initiator` creates at `now`, due in 14 days.
    fn terms(&self, initiator: Initiator, now: u64) -> AgentPact::Terms {
        AgentPact::Terms {
            initiator: initiator.code(),
            specHash: B256::repeat_byte(0x5e),
            specUri: "ipfs://QmDemoLandingPageSpec".into(),
            deadline: now + 14 * 24 * 3600,
            acceptBy: 0,
            reviewPeriod: 0,
            threshold: 70,
            arbitrator: self.cast.arbitrator,
            // As a negotiated pact would: only the other demo party may accept.
            counterparty: match initiator {
                Initiator::Buyer => self.cast.seller,
                Initiator::Seller => self.cast.buyer,
            },
            currency: self.currency,
            payment: self.payment,
            oracles: self.cast.oracles.clone(),
            weights: vec![60, 40],
        }
    }

    async fn funded(&self, initiator: Initiator) -> anyhow::Result<U256> {
        let id = self.create(initiator).await?;
        let stake = rules::stake(self.payment);
        let (accepter, deposit) = match initiator {
            Initiator::Buyer => (self.cast.seller, stake),
            Initiator::Seller => (self.cast.buyer, self.payment + stake),
        };
        let value = self.allow(accepter, deposit).await?;
        send(self.pact.acceptPact(id).from(accepter).value(value)).await?;
        Ok(id)
    }

    /// Lets the escrow take `deposit` from `owner`: the value to send for ETH; for the token, an
    /// approval of exactly the deposit (and no value).
    async fn allow(&self, owner: Address, deposit: U256) -> anyhow::Result<U256> {
        if self.currency.is_zero() {
            return Ok(deposit);
        }
        let token = TestToken::new(self.currency, self.provider.clone());
        send(token.approve(*self.pact.address(), deposit).from(owner)).await?;
        Ok(U256::ZERO)
    }

    async fn delivered(&self) -> anyhow::Result<U256> {
        let id = self.funded(Initiator::Buyer).await?;
        send(self.pact.startWork(id).from(self.cast.seller)).await?;
        send(self.pact.submitWork(id, B256::repeat_byte(0xd0)).from(self.cast.seller)).await?;
        Ok(id)
    }

    async fn score(&self, id: U256, oracle: Address, score: u8) -> anyhow::Result<()> {
        send(self.pact.submitVerification(id, score, B256::repeat_byte(0xac)).from(oracle)).await
    }

    /// Delivered, scored 90 and 80, finalized: PENDING_APPROVAL.
    async fn verified(&self) -> anyhow::Result<U256> {
        let id = self.delivered().await?;
        for (&oracle, score) in self.cast.oracles.iter().zip([90, 80]) {
            self.score(id, oracle, score).await?;
        }
        send(self.pact.finalizeVerification(id).from(self.cast.buyer)).await?;
        Ok(id)
    }
}

/// Sends `call` and waits for its receipt; an error unless it was mined without a revert.
pub(super) async fn send<D: CallDecoder>(call: CallBuilder<&DynProvider, D>) -> anyhow::Result<()> {
    let receipt = call.send().await.context("a demo transaction was refused")?.get_receipt().await?;
    if !receipt.status() {
        bail!("demo transaction {} reverted", receipt.transaction_hash);
    }
    Ok(())
}
