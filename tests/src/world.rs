//! Worlds of many agents for the reputation tests: fresh wallets one provider signs for, pacts
//! between any two parties walked by the parties themselves to any end a pact can have, and
//! ratings in AgentRegistry and in the ERC-8004 registries.
//!
//! Money is ETH, counted in USDC-equivalents at the docs' 25 USDC = 0.01 ETH ([`usdc`]): one of
//! them is the evidence floor (`pact_evidence`, migrations/0022).
//!
//! A world is built fast by walking many pacts at once: every transaction is sent holding its
//! sender's lock ([`World::by`]), so one sender's transactions never race for a nonce while
//! different senders' overlap, and a pact learns its id from its own `PactCreated` event.

use agentpact_contracts::{
    AgentPact::{self, AgentPactInstance},
    AgentRegistry::{self, AgentRegistryInstance},
    Initiator,
    erc8004::RegistrationFile,
};
use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use alloy::{
    contract::{CallBuilder, CallDecoder},
    network::TransactionBuilder,
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
    rpc::types::{TransactionReceipt, TransactionRequest},
    signers::local::PrivateKeySigner,
    sol_types::SolEvent,
};

use crate::{
    HarnessError,
    chain::{Mined, hash},
    erc8004::Registries,
    pacts::{Market, REVIEW_PERIOD, accepter_deposit, creator_deposit},
};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// One USDC-equivalent in wei (0.0004 ETH): the value at which a pact weighs one whole job. The
/// view `pact_evidence` (migrations/0022_trusted_reputation.sql) defines it for ETH pacts; this is
/// its floor repeated so that a world can price its pacts before any index exists.
pub const USDC_IN_WEI: u64 = 400_000_000_000_000;

/// `n` whole USDC-equivalents in wei.
pub fn usdc(n: u64) -> U256 {
    U256::from(n) * U256::from(USDC_IN_WEI)
}

/// The gas limit of a world's transaction: more than any escrow or AgentRegistry call needs.
const GAS: u64 = 1_000_000;

/// The most a world's transaction pays per gas (2 gwei): above anvil's base fee, which starts at
/// 1 gwei and falls with blocks of one transaction.
const MAX_FEE: u128 = 2_000_000_000;

/// How often a world asks for a receipt not yet there: anvil mines a transaction in a few
/// milliseconds, and dozens of walks asking every millisecond or two would keep it busy answering.
const RECEIPT_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// The review period of a pact the buyer lets lapse: the shortest the contract allows.
const SHORT_REVIEW: u64 = 60 * 60;
/// The deadline of a pact whose seller is to miss it, from its creation: six hours, so that
/// another walk moving the clock meanwhile leaves its acceptance window (to an hour before the
/// deadline) open, and a day of chain time passes it.
const SHORT_DEADLINE: u64 = 6 * 60 * 60;

/// A failure of a world's own (an answer missing or not as expected) as a harness error.
pub fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// A market's chain with fresh wallets: every call here is sent through one provider that signs
/// for them and for the dev accounts.
pub struct World<'a> {
    /// The market: its chain, registered oracles and cast.
    pub m: &'a Market,
    /// Signs for the dev accounts and every wallet of the world.
    pub provider: DynProvider,
    pact: AgentPactInstance<DynProvider>,
    agents: AgentRegistryInstance<DynProvider>,
    registries: Registries,
    /// Each sender's lock: held while one of its transactions is in flight.
    senders: Mutex<HashMap<Address, Arc<tokio::sync::Mutex<()>>>>,
}

impl<'a> World<'a> {
    /// `m`'s chain with `n` fresh wallets, none funded yet ([`World::fund`]).
    pub fn with_wallets(m: &'a Market, n: usize) -> Result<(Self, Vec<Address>)> {
        let keys: Vec<PrivateKeySigner> = (0..n).map(|_| PrivateKeySigner::random()).collect();
        let wallets = keys.iter().map(PrivateKeySigner::address).collect();
        let provider = m.chain.provider_also_signing(keys)?;
        let world = Self {
            m,
            pact: AgentPact::new(m.chain.deployment.agent_pact, provider.clone()),
            agents: AgentRegistry::new(m.chain.deployment.agent_registry, provider.clone()),
            registries: Registries::at(m.chain.erc8004, provider.clone()),
            provider,
            senders: Mutex::default(),
        };
        Ok((world, wallets))
    }

    /// The escrow, sending through the world's provider.
    pub fn pact(&self) -> &AgentPactInstance<DynProvider> {
        &self.pact
    }

    /// `who`'s lock, which its transactions are sent under.
    fn sender(&self, who: Address) -> Arc<tokio::sync::Mutex<()>> {
        let mut senders = self.senders.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        senders.entry(who).or_default().clone()
    }

    /// `who` sends `call`, none of its other transactions in flight meanwhile, at a fixed gas
    /// limit and fee ([`GAS`], [`MAX_FEE`]) instead of asking the node to estimate each (anvil
    /// runs a call several times to estimate it: most of a world's time). A call that reverts on
    /// chain is estimated then, and fails with the contract's error by name.
    pub async fn by<D: CallDecoder>(
        &self,
        who: Address,
        call: CallBuilder<&DynProvider, D>,
    ) -> Result<Mined> {
        let sender = self.sender(who);
        let _turn = sender.lock().await;
        let call = call.from(who).gas(GAS).max_fee_per_gas(MAX_FEE).max_priority_fee_per_gas(1);
        let receipt = self.receipt(*call.send().await?.tx_hash()).await?;
        if !receipt.status() {
            return Err(match call.block(alloy::eips::BlockId::pending()).estimate_gas().await {
                Err(e) => e.into(),
                Ok(_) => process(format!("{who}'s transaction {} reverted", receipt.transaction_hash)),
            });
        }
        let gas_cost = U256::from(receipt.gas_used) * U256::from(receipt.effective_gas_price);
        Ok(Mined { receipt, gas_cost })
    }

    /// `from` sends `amount` wei to `to`.
    pub async fn pay(&self, from: Address, to: Address, amount: U256) -> Result {
        let sender = self.sender(from);
        let _turn = sender.lock().await;
        let tx = TransactionRequest::default().with_from(from).with_to(to).with_value(amount);
        self.receipt(*self.provider.send_transaction(tx).await?.tx_hash()).await?;
        Ok(())
    }

    /// The receipt of transaction `hash`, asked for at once and then every [`RECEIPT_POLL`] until
    /// the node has mined it (up to a minute). Not through alloy's pending-transaction watcher:
    /// that one fetches every block in turn, and with a block per transaction it becomes the
    /// queue every walk waits in.
    async fn receipt(&self, hash: alloy::primitives::TxHash) -> Result<TransactionReceipt> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            if let Some(receipt) = self.provider.get_transaction_receipt(hash).await? {
                return Ok(receipt);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(process(format!("transaction {hash} was not mined within a minute")));
            }
            tokio::time::sleep(RECEIPT_POLL).await;
        }
    }

    /// `from` sends each of `wallets` `amount` wei.
    pub async fn fund(&self, from: Address, wallets: &[Address], amount: U256) -> Result {
        for w in wallets {
            self.pay(from, *w, amount).await?;
        }
        Ok(())
    }

    /// `who` withdraws its ETH credits from the escrow.
    pub async fn withdraw(&self, who: Address) -> Result {
        self.by(who, self.pact.withdraw(Address::ZERO)).await?;
        Ok(())
    }

    /// `rater`, a party of the ended `pact`, rates the other party `stars` (1-5) in AgentRegistry.
    pub async fn rate(&self, pact: U256, rater: Address, stars: u8) -> Result {
        self.by(rater, self.agents.submitFeedback(pact, stars, vec![], String::new())).await?;
        Ok(())
    }

    /// Registers `who` in the ERC-8004 Identity Registry as `name`; its agent id.
    pub async fn register_8004(&self, who: Address, name: &str) -> Result<U256> {
        let chain = self.m.chain.anvil.chain_id();
        let mcp = "https://a.example/mcp";
        let file = RegistrationFile::ours(name, "logos", mcp, vec!["logo-design".into()], chain, who);
        let sender = self.sender(who);
        let _turn = sender.lock().await;
        self.registries.register(who, file.to_data_uri()).await
    }

    /// `client` gives ERC-8004 agent `agent` feedback of `value` (0-100), tagged with `pact` when
    /// one is behind it.
    pub async fn feedback_8004(
        &self,
        agent: U256,
        client: Address,
        value: i128,
        pact: Option<U256>,
    ) -> Result {
        let tag = pact.map(|p| format!("pact:{p}")).unwrap_or_default();
        let sender = self.sender(client);
        let _turn = sender.lock().await;
        self.registries.rate(agent, client, value, &tag, "quality").await?;
        Ok(())
    }
}

/// How a pact ends, each as its parties (or its clock) end it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Work submitted, every oracle scores, the buyer finalizes the scores and approves.
    Approved,
    /// Work submitted and scored; the buyer stays silent past the one-hour review period and the
    /// seller completes it ([`Walked::finish`] after the clock ran out).
    AutoApproved,
    /// Work submitted, the buyer disputes, the arbitrator rules this many basis points to the
    /// seller (10000: the seller won, 0: the buyer won).
    Ruled(u16),
    /// The buyer offers to end the funded pact with this many basis points of the payment to the
    /// seller, the seller accepts: an agreement.
    Settled(u16),
    /// The seller never works; past the deadline (six hours) the buyer takes the refund
    /// ([`Walked::finish`]).
    TimedOut,
    /// The buyer disputes and the arbitrator stays silent; past the dispute window the buyer takes
    /// the refund ([`Walked::finish`]).
    ArbitratorSilent,
}

/// One pact between any two parties.
#[derive(Debug, Clone)]
pub struct Deal {
    /// Creates it and pays.
    pub buyer: Address,
    /// Accepts it and works (or does not).
    pub seller: Address,
    /// Its oracles (registered in OracleRegistry), at `weights`.
    pub oracles: Vec<Address>,
    /// The oracles' weights, summing to 100.
    pub weights: Vec<u8>,
    /// What every oracle scores the work (0-100); the threshold is 70.
    pub score: u8,
    /// Its arbitrator.
    pub arbitrator: Address,
    /// Its payment, in wei.
    pub payment: U256,
    /// Seconds of chain time the seller works between starting and submitting.
    pub work: u64,
}

/// A deal walked as far as its parties can take it now: ended, or waiting for a clock.
#[derive(Debug, Clone)]
pub struct Walked {
    /// The pact.
    pub id: U256,
    /// Its buyer.
    pub buyer: Address,
    /// Its seller.
    pub seller: Address,
    /// How it ends.
    pub end: End,
}

impl Walked {
    /// Whether the pact waits for a clock to run out before [`Walked::finish`] can end it.
    pub fn waiting(&self) -> bool {
        matches!(self.end, End::AutoApproved | End::TimedOut | End::ArbitratorSilent)
    }

    /// Ends a pact waiting for its clock, once the chain's time has passed it (an hour for an
    /// auto-approval, six hours for a timeout, the contract's dispute window for a silent
    /// arbitrator); a pact that has ended already is left as it is.
    pub async fn finish(&self, w: &World<'_>) -> Result {
        let pact = &w.pact;
        match self.end {
            End::AutoApproved => w.by(self.seller, pact.autoApprove(self.id)).await?,
            End::TimedOut | End::ArbitratorSilent => w.by(self.buyer, pact.claimTimeout(self.id)).await?,
            End::Approved | End::Ruled(_) | End::Settled(_) => return Ok(()),
        };
        Ok(())
    }
}

impl Deal {
    /// Created by the buyer naming the seller (deadline in seven days; six hours when the seller
    /// is to miss it) and accepted by the seller.
    pub async fn funded(&self, w: &World<'_>, end: End) -> Result<U256> {
        let now = w.m.chain.now().await?;
        let deadline = if end == End::TimedOut { SHORT_DEADLINE } else { 7 * 24 * 60 * 60 };
        let terms = AgentPact::Terms {
            initiator: Initiator::Buyer.code(),
            specHash: hash(1),
            specUri: "ipfs://QmJob".into(),
            deadline: now + deadline,
            acceptBy: 0,
            reviewPeriod: if end == End::AutoApproved { SHORT_REVIEW } else { REVIEW_PERIOD },
            threshold: 70,
            arbitrator: self.arbitrator,
            counterparty: self.seller,
            currency: Address::ZERO,
            payment: self.payment,
            oracles: self.oracles.clone(),
            weights: self.weights.clone(),
        };
        let pact = &w.pact;
        let deposit = creator_deposit(Initiator::Buyer, self.payment);
        let created = w.by(self.buyer, pact.createPact(terms).value(deposit)).await?;
        let id = created
            .receipt
            .inner
            .logs()
            .iter()
            .find_map(|l| AgentPact::PactCreated::decode_log(&l.inner).ok())
            .map(|e| e.pactId)
            .ok_or_else(|| process("createPact emitted no PactCreated event"))?;
        let deposit = accepter_deposit(Initiator::Buyer, self.payment);
        w.by(self.seller, pact.acceptPact(id).value(deposit)).await?;
        Ok(id)
    }

    /// Funded, then walked towards `end` as far as no clock stands in the way: an approval, a
    /// ruling or a settlement ends the pact here; the others wait for [`Walked::finish`].
    pub async fn walk(&self, w: &World<'_>, end: End) -> Result<Walked> {
        let pact = &w.pact;
        let id = self.funded(w, end).await?;
        let submit = || async {
            w.by(self.seller, pact.startWork(id)).await?;
            if self.work > 0 {
                w.m.chain.increase_time(self.work).await?;
            }
            w.by(self.seller, pact.submitWork(id, hash(2))).await?;
            Ok::<_, HarnessError>(())
        };
        match end {
            End::Approved | End::AutoApproved => {
                submit().await?;
                for oracle in &self.oracles {
                    w.by(*oracle, pact.submitVerification(id, self.score, hash(3))).await?;
                }
                w.by(self.buyer, pact.finalizeVerification(id)).await?;
                if end == End::Approved {
                    w.by(self.buyer, pact.approveWork(id)).await?;
                }
            }
            End::Ruled(share) => {
                submit().await?;
                w.by(self.buyer, pact.raiseDispute(id, self.arbitrator)).await?;
                w.by(self.arbitrator, pact.resolveDisputeShare(id, share)).await?;
            }
            End::Settled(share) => {
                w.by(self.buyer, pact.proposeSettlement(id, share, 0)).await?;
                let round = pact.getSettlement(id).call().await?.round;
                w.by(self.seller, pact.acceptSettlement(id, round, share)).await?;
            }
            End::TimedOut => {}
            End::ArbitratorSilent => {
                w.by(self.buyer, pact.raiseDispute(id, self.arbitrator)).await?;
            }
        }
        Ok(Walked { id, buyer: self.buyer, seller: self.seller, end })
    }

    /// Walked to `end`, the chain's clock moved past any clock it waits for, and ended.
    pub async fn ended(&self, w: &World<'_>, end: End) -> Result<U256> {
        let walked = self.walk(w, end).await?;
        if walked.waiting() {
            let wait = match end {
                End::ArbitratorSilent => w.pact.DISPUTE_PERIOD().call().await?,
                End::TimedOut => SHORT_DEADLINE,
                _ => SHORT_REVIEW,
            };
            w.m.chain.increase_time(wait + 1).await?;
            walked.finish(w).await?;
        }
        Ok(walked.id)
    }
}
