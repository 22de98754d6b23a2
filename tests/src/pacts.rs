//! A cast of actors on a [`TestChain`] and steps that walk a pact through its lifecycle, so a test
//! reads as the story it checks.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator, PactStatus,
};
pub use agentpact_lab::Cast;
use alloy::{
    network::TransactionBuilder,
    primitives::{Address, Bytes, U256},
    providers::Provider,
    rpc::types::{TransactionReceipt, TransactionRequest},
    sol_types::SolInterface,
};
use serde_json::{Value, json};

use crate::{
    HarnessError,
    chain::{Mined, TestChain, ether, hash, send},
};

/// Review period of the standard terms, in seconds (one day).
pub const REVIEW_PERIOD: u64 = 24 * 60 * 60;
/// Deadline of the standard terms, in seconds from now (seven days).
pub const DEADLINE_IN: u64 = 7 * 24 * 60 * 60;
/// Pass threshold of the standard terms.
pub const THRESHOLD: u8 = 70;
/// Oracle weights of the standard terms, in the order of [`Cast::oracles`].
pub const WEIGHTS: [u8; 2] = [60, 40];

/// Gas for each transaction mined in one block (no estimate: the node would estimate the second
/// against the state before the first).
const GAS_IN_BLOCK: u64 = 1_000_000;

/// A transaction mined by [`Market::in_one_block`]: its receipt and, when it reverted, the
/// escrow's error.
pub struct InBlock {
    /// Its receipt.
    pub receipt: TransactionReceipt,
    /// The escrow's error, when it reverted.
    pub error: Option<AgentPactErrors>,
}

/// A chain with contracts, registered oracles and a cast.
pub struct Market {
    /// The chain.
    pub chain: TestChain,
    /// The actors.
    pub cast: Cast,
}

impl Market {
    /// Starts a chain and registers two oracles at the minimum stake.
    pub async fn open() -> Result<Self, HarnessError> {
        Self::open_on(TestChain::start().await?).await
    }

    /// Registers two oracles at the minimum stake on `chain` and casts its accounts.
    pub async fn open_on(chain: TestChain) -> Result<Self, HarnessError> {
        let cast = Cast::of(&chain.accounts).map_err(|e| HarnessError::Process(e.to_string()))?;
        let market = Self { chain, cast };
        for oracle in market.cast.oracles.clone() {
            market.register_oracle(oracle).await?;
        }
        Ok(market)
    }

    /// Registers `who` as an oracle with the minimum stake.
    pub async fn register_oracle(&self, who: Address) -> Result<Mined, HarnessError> {
        let call = self
            .chain
            .registry
            .register(vec!["code-review".into(), "testing".into()])
            .from(who)
            .value(self.chain.options.min_oracle_stake);
        Ok(send(call).await?)
    }

    /// The standard terms: `payment` wei, deadline in seven days, the cast's oracles at 60/40,
    /// threshold 70, a one-day review period.
    pub async fn terms(&self, initiator: Initiator, payment: U256) -> Result<AgentPact::Terms, HarnessError> {
        Ok(AgentPact::Terms {
            initiator: initiator.code(),
            specHash: hash(1),
            specUri: "ipfs://QmSpec".into(),
            deadline: self.chain.now().await? + DEADLINE_IN,
            acceptBy: 0,
            reviewPeriod: REVIEW_PERIOD,
            threshold: THRESHOLD,
            arbitrator: self.cast.arbitrator,
            counterparty: Address::ZERO,
            currency: Address::ZERO,
            payment,
            oracles: self.cast.oracles.clone(),
            weights: WEIGHTS.to_vec(),
        })
    }

    /// The creator of a pact started by `initiator`.
    pub fn creator(&self, initiator: Initiator) -> Address {
        match initiator {
            Initiator::Buyer => self.cast.buyer,
            Initiator::Seller => self.cast.seller,
        }
    }

    /// The party that accepts a pact started by `initiator`.
    pub fn accepter(&self, initiator: Initiator) -> Address {
        self.creator(initiator.counterparty())
    }

    /// Creates a pact with `terms`, depositing what its creator owes: as the call's value for ETH,
    /// through an allowance of exactly the deposit for a token. Returns its id.
    pub async fn create(&self, terms: AgentPact::Terms) -> Result<(U256, Mined), HarnessError> {
        let initiator =
            Initiator::try_from(terms.initiator).map_err(|e| HarnessError::Process(e.to_string()))?;
        let deposit = creator_deposit(initiator, terms.payment);
        let creator = self.creator(initiator);
        let id = self.chain.pact.pactCount().call().await?;
        let value = self.allow(terms.currency, creator, deposit).await?;
        let mined = send(self.chain.pact.createPact(terms).from(creator).value(value)).await?;
        Ok((id, mined))
    }

    /// Lets the escrow take `amount` of `currency` from `owner`: approves exactly that for a token
    /// (and returns zero), or returns it as the value to send for ETH.
    pub async fn allow(&self, currency: Address, owner: Address, amount: U256) -> Result<U256, HarnessError> {
        if currency.is_zero() {
            return Ok(amount);
        }
        let token = agentpact_contracts::TestToken::new(currency, &self.chain.provider);
        send(token.approve(self.chain.deployment.agent_pact, amount).from(owner)).await?;
        Ok(U256::ZERO)
    }

    /// A permit, signed by dev account `who`, for the escrow to take `value` of `token` (a
    /// [`agentpact_contracts::TestToken`]) within the hour.
    pub async fn permit(
        &self,
        token: Address,
        who: Address,
        value: U256,
    ) -> Result<agentpact_contracts::bindings::Currencies::Permit, HarnessError> {
        let index = self.chain.accounts.iter().position(|a| *a == who);
        let key = index
            .and_then(|i| self.chain.anvil.keys().get(i).cloned())
            .ok_or_else(|| HarnessError::Process(format!("{who} is not a dev account")))?;
        let signer = alloy::signers::local::PrivateKeySigner::from(key);
        let t = agentpact_contracts::TestToken::new(token, &self.chain.provider);
        let domain = agentpact_contracts::permit::domain(
            t.name().call().await?,
            t.version().call().await?,
            self.chain.anvil.chain_id(),
            token,
        );
        let nonce = t.nonces(who).call().await?;
        let deadline = self.chain.now().await? + 3600;
        agentpact_contracts::permit::sign(
            &signer,
            &domain,
            self.chain.deployment.agent_pact,
            value,
            nonce,
            deadline,
        )
        .map_err(|e| HarnessError::Process(e.to_string()))
    }

    /// The standard terms in `currency` (zero: ETH).
    pub async fn terms_in(
        &self,
        currency: Address,
        initiator: Initiator,
        payment: U256,
    ) -> Result<AgentPact::Terms, HarnessError> {
        Ok(AgentPact::Terms { currency, ..self.terms(initiator, payment).await? })
    }

    /// Creates a pact with the standard terms and has the counterparty accept it: FUNDED.
    pub async fn funded(&self, initiator: Initiator, payment: U256) -> Result<U256, HarnessError> {
        self.funded_in(Address::ZERO, initiator, payment).await
    }

    /// [`Self::funded`] in `currency` (zero: ETH).
    pub async fn funded_in(
        &self,
        currency: Address,
        initiator: Initiator,
        payment: U256,
    ) -> Result<U256, HarnessError> {
        let (id, _) = self.create(self.terms_in(currency, initiator, payment).await?).await?;
        self.accept(id, initiator, payment).await?;
        Ok(id)
    }

    /// The counterparty accepts pact `id`, depositing what it owes in the pact's currency.
    pub async fn accept(&self, id: U256, initiator: Initiator, payment: U256) -> Result<Mined, HarnessError> {
        let accepter = self.accepter(initiator);
        let currency = self.chain.pact.getPact(id).call().await?.currency;
        let value = self.allow(currency, accepter, accepter_deposit(initiator, payment)).await?;
        Ok(send(self.chain.pact.acceptPact(id).from(accepter).value(value)).await?)
    }

    /// The seller starts and submits work on a FUNDED pact: PENDING_VERIFY.
    pub async fn submitted(&self, id: U256) -> Result<(), HarnessError> {
        send(self.chain.pact.startWork(id).from(self.cast.seller)).await?;
        self.submit(id).await
    }

    /// The seller submits work on an IN_PROGRESS pact.
    pub async fn submit(&self, id: U256) -> Result<(), HarnessError> {
        send(self.chain.pact.submitWork(id, hash(2)).from(self.cast.seller)).await?;
        Ok(())
    }

    /// Each oracle submits the score at its position in `scores`.
    pub async fn score(&self, id: U256, scores: &[u8]) -> Result<(), HarnessError> {
        for (oracle, score) in self.cast.oracles.iter().zip(scores) {
            let call = self.chain.pact.submitVerification(id, *score, hash(3)).from(*oracle);
            send(call).await?;
        }
        Ok(())
    }

    /// Oracles score `scores` and a stranger finalizes.
    pub async fn verified(&self, id: U256, scores: &[u8]) -> Result<(), HarnessError> {
        self.score(id, scores).await?;
        send(self.chain.pact.finalizeVerification(id).from(self.cast.stranger)).await?;
        Ok(())
    }

    /// A pact walked to PENDING_APPROVAL with passing scores.
    pub async fn pending_approval(&self, initiator: Initiator, payment: U256) -> Result<U256, HarnessError> {
        self.pending_approval_in(Address::ZERO, initiator, payment).await
    }

    /// [`Self::pending_approval`] in `currency` (zero: ETH).
    pub async fn pending_approval_in(
        &self,
        currency: Address,
        initiator: Initiator,
        payment: U256,
    ) -> Result<U256, HarnessError> {
        let id = self.funded_in(currency, initiator, payment).await?;
        self.submitted(id).await?;
        self.verified(id, &[90, 80]).await?;
        Ok(id)
    }

    /// A pact between the cast's buyer and seller, approved after passing scores: COMPLETED.
    pub async fn completed(&self, initiator: Initiator, payment: U256) -> Result<U256, HarnessError> {
        self.completed_in(Address::ZERO, initiator, payment).await
    }

    /// [`Self::completed`] in `currency` (zero: ETH).
    pub async fn completed_in(
        &self,
        currency: Address,
        initiator: Initiator,
        payment: U256,
    ) -> Result<U256, HarnessError> {
        let id = self.pending_approval_in(currency, initiator, payment).await?;
        send(self.chain.pact.approveWork(id).from(self.cast.buyer)).await?;
        Ok(id)
    }

    /// Sends `txs` in order with automine off, then mines one block: every one of them lands in
    /// it, in the order sent (equal fees: anvil keeps the order of arrival; checked). A reverted
    /// one's error is read from the node's trace of it.
    pub async fn in_one_block(&self, txs: Vec<TransactionRequest>) -> Result<Vec<InBlock>, HarnessError> {
        let provider = &self.chain.provider;
        let _: Value = provider.raw_request("evm_setAutomine".into(), (false,)).await?;
        let mut pending = Vec::new();
        for tx in txs {
            pending.push(provider.send_transaction(tx.with_gas_limit(GAS_IN_BLOCK)).await?);
        }
        let _: Value = provider.raw_request("evm_mine".into(), ()).await?;
        let _: Value = provider.raw_request("evm_setAutomine".into(), (true,)).await?;
        let mut mined = Vec::new();
        for p in pending {
            let receipt =
                p.get_receipt().await.map_err(|e| HarnessError::Process(format!("receipt: {e}")))?;
            let error = if receipt.status() {
                None
            } else {
                let trace: Value = provider
                    .raw_request(
                        "debug_traceTransaction".into(),
                        (receipt.transaction_hash, json!({ "tracer": "callTracer" })),
                    )
                    .await?;
                let output: Bytes = serde_json::from_value(trace["output"].clone())
                    .map_err(|e| HarnessError::Process(format!("trace output {trace}: {e}")))?;
                Some(
                    AgentPactErrors::abi_decode(&output)
                        .map_err(|e| HarnessError::Process(format!("revert data {output}: {e}")))?,
                )
            };
            mined.push(InBlock { receipt, error });
        }
        let block = mined[0].receipt.block_number;
        for (i, tx) in mined.iter().enumerate() {
            assert_eq!(tx.receipt.block_number, block, "transaction {i} was mined in another block");
            assert_eq!(
                tx.receipt.transaction_index,
                Some(i as u64),
                "transaction {i} was mined out of order"
            );
        }
        Ok(mined)
    }

    /// The standard terms in `currency` paying `amounts` in as many stages, stage k due `k + 1`
    /// days from now and the last at the terms' deadline, with those stages.
    pub async fn staged_terms(
        &self,
        currency: Address,
        initiator: Initiator,
        amounts: &[U256],
    ) -> Result<(AgentPact::Terms, Vec<AgentPact::StageTerms>), HarnessError> {
        let payment = amounts.iter().copied().sum();
        let terms = self.terms_in(currency, initiator, payment).await?;
        let now = self.chain.now().await?;
        let stages = amounts
            .iter()
            .enumerate()
            .map(|(k, amount)| AgentPact::StageTerms {
                amount: *amount,
                deadline: if k + 1 == amounts.len() {
                    terms.deadline
                } else {
                    now + (k as u64 + 1) * 24 * 60 * 60
                },
            })
            .collect();
        Ok((terms, stages))
    }

    /// Creates a pact of `stages` with `terms`, its creator depositing the payment (a buyer) and a
    /// tenth of every stage. Returns its id.
    pub async fn create_staged(
        &self,
        terms: AgentPact::Terms,
        stages: Vec<AgentPact::StageTerms>,
    ) -> Result<(U256, Mined), HarnessError> {
        let initiator =
            Initiator::try_from(terms.initiator).map_err(|e| HarnessError::Process(e.to_string()))?;
        let stake = staged_stake(&stages);
        let deposit = if initiator == Initiator::Buyer { terms.payment + stake } else { stake };
        let creator = self.creator(initiator);
        let id = self.chain.pact.pactCount().call().await?;
        let value = self.allow(terms.currency, creator, deposit).await?;
        let mined = send(self.chain.pact.createStagedPact(terms, stages).from(creator).value(value)).await?;
        Ok((id, mined))
    }

    /// A pact paying `amounts` in as many stages (in `currency`), created by `initiator`'s side and
    /// accepted by the other: every stage FUNDED.
    pub async fn staged(
        &self,
        currency: Address,
        initiator: Initiator,
        amounts: &[U256],
    ) -> Result<U256, HarnessError> {
        let (terms, stages) = self.staged_terms(currency, initiator, amounts).await?;
        let stake = staged_stake(&stages);
        let payment = terms.payment;
        let (id, _) = self.create_staged(terms, stages).await?;
        let accepter = self.accepter(initiator);
        let deposit = if initiator == Initiator::Buyer { stake } else { payment + stake };
        let value = self.allow(currency, accepter, deposit).await?;
        send(self.chain.pact.acceptPact(id).from(accepter).value(value)).await?;
        Ok(id)
    }

    /// A pact of six stages of `pay` each, accepted and started, whose stages take every stage
    /// event: stage 0 verified and approved, 1 verified, rejected and ruled 70/30, 2 failing its
    /// verification, 3 disputed by the seller; stage 4 is left to time out (past its deadline,
    /// `claimStageTimeout(id, 4)`) and stage 5 in progress. The pact stands DISPUTED (stage 2).
    /// Returns its id.
    pub async fn every_stage_kind(&self, pay: U256) -> Result<U256, HarnessError> {
        let (m, pact) = (self, &self.chain.pact);
        let id = m.staged(Address::ZERO, Initiator::Buyer, &[pay; 6]).await?;
        send(pact.startWork(id).from(m.cast.seller)).await?;
        for (k, scores) in [(0, [90, 80]), (1, [90, 80]), (2, [10, 20])] {
            send(pact.submitStage(id, k, hash(50 + u64::from(k))).from(m.cast.seller)).await?;
            for (oracle, score) in m.cast.oracles.iter().zip(scores) {
                send(pact.scoreStage(id, k, score, hash(60 + u64::from(k))).from(*oracle)).await?;
            }
            send(pact.finalizeStage(id, k).from(m.cast.stranger)).await?;
        }
        send(pact.approveStage(id, 0).from(m.cast.buyer)).await?;
        send(pact.rejectStage(id, 1).from(m.cast.buyer)).await?;
        send(pact.resolveStage(id, 1, 7_000).from(m.cast.arbitrator)).await?;
        send(pact.disputeStage(id, 3, m.cast.arbitrator).from(m.cast.seller)).await?;
        Ok(id)
    }

    /// Pacts in every status, reached through every kind of event: NEGOTIATING, FUNDED,
    /// IN_PROGRESS, PENDING_VERIFY (one score in), PENDING_APPROVAL, COMPLETED, DISPUTED (failed
    /// verification; and raised), REFUNDED (by ruling, cancel and timeout), SPLIT (by a 70%
    /// ruling; by a settlement accepted after offers replaced and withdrawn); a withdrawal; oracles
    /// registering, staking more, changing capabilities, deregistering and withdrawing; agents
    /// registering, updating, stepping out and back; both parties rating a completed pact; an
    /// ERC-8004 identity registered, its file and metadata changed, rated and the rating revoked.
    pub async fn every_status(&self) -> Result<(), HarnessError> {
        let m = self;
        let pact = &m.chain.pact;
        let pay = ether(1) + U256::from(3u8);
        m.create(m.terms(Initiator::Seller, pay).await?).await?; // NEGOTIATING
        m.funded(Initiator::Buyer, pay).await?; // FUNDED
        let started = m.funded(Initiator::Seller, pay).await?;
        send(pact.startWork(started).from(m.cast.seller)).await?; // IN_PROGRESS
        let scoring = m.funded(Initiator::Buyer, pay).await?;
        m.submitted(scoring).await?;
        m.score(scoring, &[77]).await?; // PENDING_VERIFY with one score
        m.pending_approval(Initiator::Seller, pay).await?; // PENDING_APPROVAL
        let approved = m.pending_approval(Initiator::Buyer, pay).await?;
        send(pact.approveWork(approved).from(m.cast.buyer)).await?; // COMPLETED
        let failed = m.funded(Initiator::Seller, pay).await?;
        m.submitted(failed).await?;
        m.verified(failed, &[10, 20]).await?; // DISPUTED by a failing score
        let rejected = m.pending_approval(Initiator::Buyer, pay).await?;
        send(pact.rejectWork(rejected).from(m.cast.buyer)).await?;
        send(pact.resolveDispute(rejected, false).from(m.cast.arbitrator)).await?; // REFUNDED by ruling
        let ruled = m.funded(Initiator::Buyer, pay).await?;
        send(pact.raiseDispute(ruled, m.cast.arbitrator).from(m.cast.buyer)).await?;
        send(pact.resolveDisputeShare(ruled, 7_000).from(m.cast.arbitrator)).await?; // SPLIT by ruling
        let settled = m.funded(Initiator::Seller, pay).await?;
        send(pact.proposeSettlement(settled, 6_000, 0).from(m.cast.buyer)).await?;
        send(pact.proposeSettlement(settled, 8_000, 0).from(m.cast.seller)).await?; // replaces round 1
        send(pact.withdrawSettlement(settled).from(m.cast.seller)).await?;
        send(pact.proposeSettlement(settled, 7_500, 0).from(m.cast.seller)).await?;
        send(pact.acceptSettlement(settled, 3, 7_500).from(m.cast.buyer)).await?; // SPLIT by settlement
        let (cancelled, _) = m.create(m.terms(Initiator::Buyer, pay).await?).await?;
        send(pact.cancelPact(cancelled).from(m.cast.buyer)).await?;
        let raised = m.funded(Initiator::Buyer, pay).await?;
        send(pact.raiseDispute(raised, m.cast.arbitrator).from(m.cast.seller)).await?;
        send(pact.proposeSettlement(raised, 4_000, 0).from(m.cast.seller)).await?;
        send(pact.voidOffers(raised).from(m.cast.arbitrator)).await?; // the offer voided before a ruling
        let staged = m.every_stage_kind(pay).await?;
        let timed_out = m.funded(Initiator::Seller, pay).await?;
        m.chain.increase_time(DEADLINE_IN + 1).await?;
        send(pact.claimTimeout(timed_out).from(m.cast.buyer)).await?; // REFUNDED by timeout
        send(pact.claimStageTimeout(staged, 4).from(m.cast.stranger)).await?; // its last stage refunded
        m.withdraw_all(m.cast.buyer).await?;

        let registry = &m.chain.registry;
        let leaving = m.chain.accounts[8];
        m.register_oracle(leaving).await?;
        send(registry.increaseStake().from(m.cast.oracles[0]).value(U256::from(5u8))).await?;
        send(registry.updateCapabilities(vec!["audit".into()]).from(m.cast.oracles[1])).await?;
        send(registry.deregister().from(leaving)).await?;
        let gone = m.chain.accounts[9];
        m.register_oracle(gone).await?;
        send(registry.deregister().from(gone)).await?;
        m.chain.increase_time(m.chain.options.oracle_cooldown_secs).await?;
        send(registry.withdrawStake().from(gone)).await?;

        let agents = &m.chain.agents;
        let logo =
            |price| crate::agents::profile("Seller Studio", &[("logo-design", price), ("icons", ether(1))]);
        send(agents.register(logo(ether(5))).from(m.cast.seller)).await?;
        send(
            agents.register(crate::agents::profile("Buyer Inc", &[("review", ether(1))])).from(m.cast.buyer),
        )
        .await?;
        send(agents.updateProfile(logo(ether(4))).from(m.cast.seller)).await?;
        send(agents.deactivate().from(m.cast.buyer)).await?;
        send(agents.reactivate().from(m.cast.buyer)).await?;
        send(agents.deactivate().from(m.cast.buyer)).await?;
        send(
            agents.submitFeedback(approved, 5, vec!["fast".into()], "ipfs://great".into()).from(m.cast.buyer),
        )
        .await?;
        send(agents.submitFeedback(approved, 4, vec![], String::new()).from(m.cast.seller)).await?;

        // The chain's ERC-8004 registries: an identity (Registered, Transfer, MetadataSet), its
        // file moved (URIUpdated), a wallet named (MetadataSet), feedback given and revoked.
        let erc8004 = crate::erc8004::Registries::of(&m.chain);
        let seller = erc8004.register(m.cast.seller, "https://seller.example/agent.json".into()).await?;
        send(
            erc8004.identity.setAgentURI(seller, "https://seller.example/v2.json".into()).from(m.cast.seller),
        )
        .await?;
        let name = alloy::primitives::Bytes::from_static(b"Seller Studio");
        send(erc8004.identity.setMetadata(seller, "agentName".into(), name).from(m.cast.seller)).await?;
        erc8004.rate(seller, m.cast.buyer, 90, "pact", "").await?;
        send(erc8004.reputation.revokeFeedback(seller, 1).from(m.cast.buyer)).await?;
        Ok(())
    }

    /// The history the reputation tests compute by hand, between the cast's buyer and seller:
    /// a 2 ETH pact approved after scores 90 and 80 (final 86); a 1 ETH pact that failed
    /// verification with 10 and 20 (final 14) and went to the buyer by ruling; a 1 ETH pact the
    /// seller abandoned, refunded by a timeout.
    pub async fn reputation_history(&self) -> Result<(), HarnessError> {
        let pact = &self.chain.pact;
        let approved = self.pending_approval(Initiator::Buyer, ether(2)).await?;
        send(pact.approveWork(approved).from(self.cast.buyer)).await?;
        let lost = self.funded(Initiator::Seller, ether(1)).await?;
        self.submitted(lost).await?;
        self.verified(lost, &[10, 20]).await?;
        send(pact.resolveDispute(lost, false).from(self.cast.arbitrator)).await?;
        let abandoned = self.funded(Initiator::Buyer, ether(1)).await?;
        self.chain.increase_time(DEADLINE_IN + 1).await?;
        send(pact.claimTimeout(abandoned).from(self.cast.buyer)).await?;
        Ok(())
    }

    /// The pact's status.
    pub async fn status(&self, id: U256) -> Result<PactStatus, HarnessError> {
        let pact = self.chain.pact.getPact(id).call().await?;
        PactStatus::try_from(pact.status).map_err(|e| HarnessError::Process(e.to_string()))
    }

    /// Wei credited to `who` and not yet withdrawn.
    pub async fn credit(&self, who: Address) -> Result<U256, HarnessError> {
        self.credit_in(Address::ZERO, who).await
    }

    /// Base units of `currency` credited to `who` and not yet withdrawn.
    pub async fn credit_in(&self, currency: Address, who: Address) -> Result<U256, HarnessError> {
        Ok(self.chain.pact.balances(currency, who).call().await?)
    }

    /// `who` withdraws its ETH credits; checks that its balance rose by exactly the credit less gas
    /// and returns the amount withdrawn.
    pub async fn withdraw_all(&self, who: Address) -> Result<U256, HarnessError> {
        self.withdraw_in(Address::ZERO, who).await
    }

    /// `who` withdraws its credits in `currency`; checks that its holding rose by exactly the credit
    /// (less gas, for ETH) and returns the amount withdrawn.
    pub async fn withdraw_in(&self, currency: Address, who: Address) -> Result<U256, HarnessError> {
        let credit = self.credit_in(currency, who).await?;
        let before = self.chain.holding(currency, who).await?;
        let mined = send(self.chain.pact.withdraw(currency).from(who)).await?;
        let after = self.chain.holding(currency, who).await?;
        let gas = if currency.is_zero() { mined.gas_cost } else { U256::ZERO };
        if after + gas != before + credit {
            return Err(HarnessError::Process(format!(
                "withdraw of {credit} base units of {currency} by {who}: holding went {before} -> {after} with gas {gas}"
            )));
        }
        Ok(credit)
    }
}

/// 10% of `payment`: each side's stake.
pub fn stake(payment: U256) -> U256 {
    agentpact_contracts::rules::stake(payment)
}

/// Each side's stake on a pact of `stages`: a tenth of every stage, summed.
pub use agentpact_contracts::rules::staged_stake;

/// What the creator of a pact started by `initiator` deposits.
pub fn creator_deposit(initiator: Initiator, payment: U256) -> U256 {
    match initiator {
        Initiator::Buyer => payment + stake(payment),
        Initiator::Seller => stake(payment),
    }
}

/// What the accepter of a pact started by `initiator` deposits.
pub fn accepter_deposit(initiator: Initiator, payment: U256) -> U256 {
    creator_deposit(initiator.counterparty(), payment)
}
