//! Demo pacts for the local stack: two registered oracles, one pact in every status and the seller
//! in the agent market with feedback on its completed pact, so a dashboard or an agent has
//! something to look at from the first second.

use agentpact_contracts::{AgentPact, AgentRegistry, Deployment, Initiator, OracleRegistry, rules};
use agentpact_lab::Cast;
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::{Address, B256, U256, utils::parse_ether},
    providers::{DynProvider, Provider},
};
use anyhow::{Context, bail};

struct Demo<'a> {
    pact: AgentPact::AgentPactInstance<DynProvider>,
    provider: &'a DynProvider,
    cast: &'a Cast,
    payment: U256,
}

/// Registers the oracles and creates pacts 0-7, one per status in code order: NEGOTIATING,
/// FUNDED, IN_PROGRESS, PENDING_VERIFY, COMPLETED, DISPUTED, REFUNDED, PENDING_APPROVAL; registers
/// the seller as an agent offering logo design, and the buyer rates the completed pact.
/// `provider` must sign for every account of `cast`.
pub async fn run(provider: &DynProvider, deployment: &Deployment, cast: &Cast) -> anyhow::Result<()> {
    let registry = OracleRegistry::new(deployment.oracle_registry, provider.clone());
    for &oracle in &cast.oracles {
        let stake = registry.minStake().call().await?;
        send(registry.register(vec!["code-review".into(), "design".into()]).from(oracle).value(stake))
            .await?;
    }
    let d = Demo {
        pact: AgentPact::new(deployment.agent_pact, provider.clone()),
        provider,
        cast,
        payment: parse_ether("0.1")?,
    };
    d.create(Initiator::Buyer).await?; // 0 NEGOTIATING
    d.funded(Initiator::Buyer).await?; // 1 FUNDED
    let started = d.funded(Initiator::Seller).await?;
    send(d.pact.startWork(started).from(cast.seller)).await?; // 2 IN_PROGRESS
    let scoring = d.delivered().await?;
    d.score(scoring, cast.oracles[0], 85).await?; // 3 PENDING_VERIFY, one of two scores in
    let done = d.verified().await?;
    send(d.pact.approveWork(done).from(cast.buyer)).await?; // 4 COMPLETED
    let market = AgentRegistry::new(deployment.agent_registry, provider.clone());
    let profile = AgentRegistry::Profile {
        name: "DesignBot Pro".into(),
        description: "Logos and brand kits, delivered as SVG".into(),
        endpoint: "http://127.0.0.1:3001/mcp".into(),
        metadataUri: String::new(),
        capabilities: vec![AgentRegistry::Capability {
            name: "logo-design".into(),
            description: "A logo in three variants".into(),
            price: d.payment,
            currency: Address::ZERO,
        }],
    };
    send(market.register(profile).from(cast.seller)).await?;
    send(market.submitFeedback(done, 5, vec!["fast".into()], String::new()).from(cast.buyer)).await?;
    let disputed = d.funded(Initiator::Buyer).await?;
    send(d.pact.raiseDispute(disputed, cast.arbitrator).from(cast.seller)).await?; // 5 DISPUTED
    let cancelled = d.create(Initiator::Buyer).await?;
    send(d.pact.cancelPact(cancelled).from(cast.buyer)).await?; // 6 REFUNDED
    d.verified().await?; // 7 PENDING_APPROVAL
    Ok(())
}

impl Demo<'_> {
    async fn create(&self, initiator: Initiator) -> anyhow::Result<U256> {
        let now =
            self.provider.get_block_by_number(Default::default()).await?.map_or(0, |b| b.header.timestamp);
        let stake = rules::stake(self.payment);
        let (creator, deposit) = match initiator {
            Initiator::Buyer => (self.cast.buyer, self.payment + stake),
            Initiator::Seller => (self.cast.seller, stake),
        };
        let terms = AgentPact::Terms {
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
            currency: Address::ZERO,
            payment: self.payment,
            oracles: self.cast.oracles.clone(),
            weights: vec![60, 40],
        };
        let id = self.pact.pactCount().call().await?;
        send(self.pact.createPact(terms).from(creator).value(deposit)).await?;
        Ok(id)
    }

    async fn funded(&self, initiator: Initiator) -> anyhow::Result<U256> {
        let id = self.create(initiator).await?;
        let stake = rules::stake(self.payment);
        let (accepter, deposit) = match initiator {
            Initiator::Buyer => (self.cast.seller, stake),
            Initiator::Seller => (self.cast.buyer, self.payment + stake),
        };
        send(self.pact.acceptPact(id).from(accepter).value(deposit)).await?;
        Ok(id)
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

async fn send<D: CallDecoder>(call: CallBuilder<&DynProvider, D>) -> anyhow::Result<()> {
    let receipt = call.send().await.context("a demo transaction was refused")?.get_receipt().await?;
    if !receipt.status() {
        bail!("demo transaction {} reverted", receipt.transaction_hash);
    }
    Ok(())
}
