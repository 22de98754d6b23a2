//! A market's history, fast and the same for the same seed: pacts in every status, created by
//! buyers and by sellers, with one to three oracles each, in ETH and (every third pact, when the
//! escrow allows a token) in that token, disputes won by each side, failed verifications and
//! timeouts, pacts in three stages (every tenth) each ended its own way, and the withdrawals that
//! follow.
//!
//! Fast means many steps per transaction and many transactions per block: the parties are
//! contracts driven a hundred lifecycle steps per transaction ([`Parties`]), automine is off, the
//! driver's nonce is tracked here, gas is fixed, and a round of pacts is driven in phases, mined
//! after each, so a phase only depends on blocks already mined. It needs a dev node that signs for
//! its accounts and lets balances be set (anvil).

use agentpact_contracts::{
    AgentPact, AgentRegistry, Deployment, Initiator, OracleRegistry, TestToken, rules,
};
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::{Address, B256, U256, keccak256},
    providers::{DynProvider, Provider},
};

use super::parties::{Parties, Steps};
use anyhow::{Context, bail};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::Value;

/// Pacts driven together, a phase of each mined in one block: blocks of up to ~10,000 escrow
/// events, dense but the size an indexer meets on a busy chain (a round of 100,000 makes blocks
/// of 100,000+ events, which an indexer must read whole: 2 GB for one `eth_getLogs`). Anvil 1.7.1
/// rebuilds its whole state trie for every block, so each block costs time in proportion to the
/// pacts already made (BENCHMARKS.md §The history).
const ROUND: usize = 5_000;

/// What each buyer and seller party holds of the token at the start: 10^9 whole tokens at 6 decimals.
const TOKENS_PER_TRADER: U256 = U256::from_limbs([1_000_000_000_000_000, 0, 0, 0]);

/// Accounts the generator needs: anvil's dev accounts 1-19 play every part.
pub const ACCOUNTS: usize = 20;

/// Words the spec URIs are made of, so search has something to find.
pub(super) const SPEC_WORDS: [&str; 8] =
    ["logo", "translation", "audit", "dataset", "summary", "website", "review", "voice"];

/// Which dev account plays which part outside the generated history (account 0 deploys): the
/// benchmarks' own live pacts and MCP wallet. The history itself is made by [`Parties`], driven
/// by `driver`.
#[derive(Debug, Clone)]
pub struct Crowd {
    /// Dev accounts 1-4.
    pub buyers: Vec<Address>,
    /// Dev accounts 13-17, registered as oracles.
    pub oracles: Vec<Address>,
    /// Dev account 18: sends the parties' transactions.
    pub driver: Address,
    /// Dev account 19.
    pub arbitrator: Address,
}

impl Crowd {
    /// The parts, from the node's accounts.
    pub fn of(accounts: &[Address]) -> anyhow::Result<Self> {
        if accounts.len() < ACCOUNTS {
            bail!("the node has {} accounts; start anvil with --accounts {ACCOUNTS}", accounts.len());
        }
        Ok(Self {
            buyers: accounts[1..=4].to_vec(),
            oracles: accounts[13..=17].to_vec(),
            driver: accounts[18],
            arbitrator: accounts[19],
        })
    }
}

/// Where a generated pact ends up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fate {
    /// Never accepted (NEGOTIATING).
    Open,
    /// Cancelled by its creator (REFUNDED).
    Cancelled,
    /// Accepted, nothing more (FUNDED).
    Funded,
    /// Work started (IN_PROGRESS).
    Started,
    /// Work submitted, oracles not done (PENDING_VERIFY).
    Submitted,
    /// Verified, the buyer still reviewing (PENDING_APPROVAL).
    Verified,
    /// Approved by the buyer (COMPLETED).
    Approved,
    /// The oracles' score under the threshold (DISPUTED).
    FailedVerification,
    /// Rejected by the buyer, the arbitrator silent (DISPUTED).
    Rejected,
    /// Rejected, then the arbitrator sides with the seller (COMPLETED).
    SellerWinsDispute,
    /// Rejected, then the arbitrator sides with the buyer (REFUNDED).
    BuyerWinsDispute,
    /// Rejected, then the arbitrator divides the pot (SPLIT).
    SplitRuling,
    /// Started, then the seller offers a division of the payment and the buyer accepts (SPLIT).
    Settled,
    /// Accepted, no work by the deadline, refund claimed (REFUNDED).
    TimedOut,
    /// In three stages (escrow v4): all delivered and verified, stage 0 approved, stage 1 rejected
    /// and divided by the arbitrator, stage 2 approved (SPLIT, ending MIXED). Every tenth pact, by
    /// id, whatever it drew.
    Staged,
}

impl Fate {
    /// Every fate with its weight: a market holds more finished pacts than open ones.
    const WEIGHTED: [(Self, u32); 14] = [
        (Self::Open, 10),
        (Self::Cancelled, 3),
        (Self::Funded, 6),
        (Self::Started, 6),
        (Self::Submitted, 6),
        (Self::Verified, 6),
        (Self::Approved, 40),
        (Self::FailedVerification, 3),
        (Self::Rejected, 3),
        (Self::SellerWinsDispute, 6),
        (Self::BuyerWinsDispute, 5),
        (Self::SplitRuling, 3),
        (Self::Settled, 3),
        (Self::TimedOut, 6),
    ];

    fn draw(rng: &mut StdRng) -> Self {
        let total: u32 = Self::WEIGHTED.iter().map(|(_, w)| w).sum();
        let mut pick = rng.random_range(0..total);
        for (fate, weight) in Self::WEIGHTED {
            if pick < weight {
                return fate;
            }
            pick -= weight;
        }
        Self::Approved
    }

    fn accepted(self) -> bool {
        !matches!(self, Self::Open | Self::Cancelled)
    }

    fn started(self) -> bool {
        self.accepted() && !matches!(self, Self::Funded | Self::TimedOut)
    }

    fn submitted(self) -> bool {
        self.started() && !matches!(self, Self::Started | Self::Settled)
    }

    fn scored(self) -> bool {
        self.submitted() && self != Self::Submitted
    }

    fn rejected(self) -> bool {
        matches!(self, Self::Rejected | Self::SellerWinsDispute | Self::BuyerWinsDispute | Self::SplitRuling)
    }

    /// Whether pact `id` is made in stages: every tenth, by id, so the seeded draws of every other
    /// pact stay those of earlier versions.
    fn staged(id: U256) -> bool {
        id % U256::from(10u8) == U256::from(9u8)
    }

    /// The seller's share, in basis points, that a split ruling or a settlement of pact `id` ends
    /// at: 10% to 90%, by the id.
    fn share(id: U256) -> u16 {
        1_000 + 1_000 * u16::try_from(id % U256::from(9u8)).unwrap_or(0)
    }
}

/// One generated pact: who plays it and how it goes.
#[derive(Debug, Clone)]
struct Plan {
    id: U256,
    fate: Fate,
    initiator: Initiator,
    buyer: Address,
    seller: Address,
    arbitrator: Address,
    oracles: Vec<Address>,
    scores: Vec<u8>,
    terms: AgentPact::Terms,
    /// Its stages, on a [`Fate::Staged`] pact; empty for a pact of one.
    stages: Vec<AgentPact::StageTerms>,
}

/// How many stages a [`Fate::Staged`] pact has.
const STAGES: u8 = 3;

impl Plan {
    fn creator(&self) -> Address {
        match self.initiator {
            Initiator::Buyer => self.buyer,
            Initiator::Seller => self.seller,
        }
    }

    fn accepter(&self) -> Address {
        match self.initiator {
            Initiator::Buyer => self.seller,
            Initiator::Seller => self.buyer,
        }
    }

    /// Each side's stake: a tenth of the payment, or of each stage on a pact of several.
    fn stake(&self) -> U256 {
        rules::stake_of(self.terms.payment, &self.stages)
    }

    fn creator_deposit(&self) -> U256 {
        match self.initiator {
            Initiator::Buyer => self.terms.payment + self.stake(),
            Initiator::Seller => self.stake(),
        }
    }

    fn accepter_deposit(&self) -> U256 {
        match self.initiator {
            Initiator::Buyer => self.stake(),
            Initiator::Seller => self.terms.payment + self.stake(),
        }
    }

    /// The value a call depositing `deposit` sends: the deposit for ETH, nothing for a token
    /// (the escrow pulls it under the allowance given at the start).
    fn value(&self, deposit: U256) -> U256 {
        if self.terms.currency.is_zero() { deposit } else { U256::ZERO }
    }
}

/// A token the escrow allows, as it announced it.
#[derive(Debug, Clone)]
struct Token {
    address: Address,
    decimals: u8,
    symbol: String,
}

/// What a run generated.
#[derive(Debug, Default)]
pub struct Generated {
    /// Pacts by fate.
    pub fates: std::collections::BTreeMap<Fate, usize>,
    /// Pacts by currency symbol.
    pub currencies: std::collections::BTreeMap<String, usize>,
    /// Payments (base units) by fate and currency symbol.
    pub payments: std::collections::BTreeMap<(Fate, String), U256>,
    /// Calls the parties made (creations, acceptances, scores, approvals, withdrawals, …).
    pub steps: usize,
    /// Node transactions they were sent in (every one mined without a revert, or the run fails).
    pub transactions: usize,
    /// Blocks mined.
    pub blocks: u64,
}

/// Fills a chain with pacts.
pub struct Generator {
    provider: DynProvider,
    pact: AgentPact::AgentPactInstance<DynProvider>,
    parties: Parties,
    token: Option<Token>,
    rng: StdRng,
    /// The driver's next nonce.
    nonce: u64,
    /// Steps not yet sent.
    steps: Steps,
    generated: Generated,
}

impl Generator {
    /// Registers the cast's oracles (when not yet: the benchmarks' live pacts name them), makes
    /// the parties ([`Parties::make`]), learns the first token the escrow allows and mints it to
    /// every buyer and seller party, turns automine off, then has the party oracles register, every
    /// seller register as an agent offering one spec word's service, and every trader let the escrow
    /// take the token (one unlimited allowance each: a generator of a million pacts, not an agent's
    /// wallet).
    pub async fn start(
        provider: DynProvider,
        deployment: &Deployment,
        cast: Crowd,
        seed: u64,
    ) -> anyhow::Result<Self> {
        let registry = OracleRegistry::new(deployment.oracle_registry, provider.clone());
        let stake = registry.minStake().call().await?;
        for oracle in &cast.oracles {
            if !registry.isActive(*oracle).call().await? {
                registry
                    .register(vec!["bench".into()])
                    .from(*oracle)
                    .value(stake)
                    .send()
                    .await?
                    .watch()
                    .await?;
            }
        }
        let parties = Parties::make(&provider, cast.driver).await?;
        let pact = AgentPact::new(deployment.agent_pact, provider.clone());
        let announced = pact.CurrencyAllowed_filter().from_block(deployment.block).query().await?;
        let token = announced.into_iter().map(|(e, _)| e).find(|e| !e.currency.is_zero()).map(|e| Token {
            address: e.currency,
            decimals: e.decimals,
            symbol: e.symbol,
        });
        // One mint to the first trader, who hands each other trader its share below (each mined
        // block costs anvil a pass over the whole state: few blocks, many steps).
        let traders: Vec<Address> = parties.traders().copied().collect();
        if let Some(token) = &token {
            let erc20 = TestToken::new(token.address, provider.clone());
            let minter = erc20.minter().call().await?;
            let all = TOKENS_PER_TRADER * U256::from(traders.len());
            erc20.mint(traders[0], all).from(minter).send().await?.get_receipt().await?;
        }
        let _: Value = provider.raw_request("evm_setAutomine".into(), (false,)).await?;
        let _: Value =
            provider.raw_request("evm_setBlockGasLimit".into(), (U256::from(1_000_000_000_000u64),)).await?;
        let nonce = provider.get_transaction_count(cast.driver).await?;
        let mut generator = Self {
            pact,
            provider,
            parties,
            token,
            rng: StdRng::seed_from_u64(seed),
            nonce,
            steps: Steps::default(),
            generated: Generated::default(),
        };
        for oracle in generator.parties.oracles.clone() {
            generator.step(oracle, registry.register(vec!["bench".into()]), stake)?;
        }
        // Every seller offers one of the spec words' services in the agent market at a price of its
        // own, so `searchAgents` has a market to rank (bench api).
        let market = AgentRegistry::new(deployment.agent_registry, generator.provider.clone());
        for (i, seller) in generator.parties.sellers.clone().into_iter().enumerate() {
            let profile = AgentRegistry::Profile {
                name: format!("bench seller {i}"),
                description: String::new(),
                endpoint: "http://127.0.0.1/mcp".into(),
                metadataUri: String::new(),
                capabilities: vec![AgentRegistry::Capability {
                    name: SPEC_WORDS[i % SPEC_WORDS.len()].into(),
                    description: String::new(),
                    price: U256::from(1 + i as u64) * U256::from(100_000_000_000_000u64),
                    currency: Address::ZERO,
                }],
            };
            generator.step(seller, market.register(profile), U256::ZERO)?;
        }
        if let Some(token) = generator.token.clone() {
            let erc20 = TestToken::new(token.address, generator.provider.clone());
            let escrow = *generator.pact.address();
            for who in &traders[1..] {
                generator.step(traders[0], erc20.transfer(*who, TOKENS_PER_TRADER), U256::ZERO)?;
            }
            for who in traders {
                generator.step(who, erc20.approve(escrow, U256::MAX), U256::ZERO)?;
            }
        }
        generator.mine().await?;
        Ok(generator)
    }

    /// The parties that play the history.
    pub fn parties(&self) -> &Parties {
        &self.parties
    }

    /// Generates `pacts` pacts, `progress` called with the count after each round; turns
    /// automine back on and returns what was made.
    pub async fn run(mut self, pacts: usize, progress: impl Fn(usize)) -> anyhow::Result<Generated> {
        let mut done = 0;
        while done < pacts {
            let n = (pacts - done).min(ROUND);
            self.round(n).await?;
            done += n;
            progress(done);
        }
        let _: Value = self.provider.raw_request("evm_setAutomine".into(), (true,)).await?;
        Ok(self.generated)
    }

    /// `n` pacts through every phase their fates need.
    async fn round(&mut self, n: usize) -> anyhow::Result<()> {
        let first: U256 = self.pact.pactCount().call().await?;
        let (first_block, now) = self.latest().await?;
        let plans: Vec<Plan> =
            (0..n).map(|i| self.plan(first + U256::from(i), now)).collect::<anyhow::Result<_>>()?;
        let pact = self.pact.clone();
        for p in &plans {
            *self.generated.fates.entry(p.fate).or_default() += 1;
            let symbol = match &self.token {
                Some(t) if t.address == p.terms.currency => t.symbol.as_str(),
                _ => "ETH",
            };
            *self.generated.currencies.entry(symbol.to_owned()).or_default() += 1;
            *self.generated.payments.entry((p.fate, symbol.to_owned())).or_default() += p.terms.payment;
            let deposit = p.value(p.creator_deposit());
            if p.stages.is_empty() {
                self.step(p.creator(), pact.createPact(p.terms.clone()), deposit)?;
            } else {
                self.step(p.creator(), pact.createStagedPact(p.terms.clone(), p.stages.clone()), deposit)?;
            }
        }
        self.mine().await?;
        for p in &plans {
            match p.fate {
                Fate::Open => {}
                Fate::Cancelled => self.step(p.creator(), pact.cancelPact(p.id), U256::ZERO)?,
                _ => self.step(p.accepter(), pact.acceptPact(p.id), p.value(p.accepter_deposit()))?,
            }
        }
        self.mine().await?;
        for p in plans.iter().filter(|p| p.fate.started()) {
            self.step(p.seller, pact.startWork(p.id), U256::ZERO)?;
            let proof = keccak256(p.id.to_be_bytes::<32>());
            if p.fate == Fate::Staged {
                for k in 0..STAGES {
                    self.step(p.seller, pact.submitStage(p.id, k, proof), U256::ZERO)?;
                }
            } else if p.fate.submitted() {
                self.step(p.seller, pact.submitWork(p.id, proof), U256::ZERO)?;
            }
        }
        self.mine().await?;
        for p in plans.iter().filter(|p| p.fate.scored()) {
            for (oracle, score) in p.oracles.iter().zip(&p.scores) {
                if p.fate == Fate::Staged {
                    for k in 0..STAGES {
                        self.step(
                            *oracle,
                            pact.scoreStage(p.id, k, *score, B256::repeat_byte(9)),
                            U256::ZERO,
                        )?;
                    }
                } else {
                    self.step(
                        *oracle,
                        pact.submitVerification(p.id, *score, B256::repeat_byte(9)),
                        U256::ZERO,
                    )?;
                }
            }
        }
        self.mine().await?;
        for p in plans.iter().filter(|p| p.fate.scored()) {
            if p.fate == Fate::Staged {
                for k in 0..STAGES {
                    self.step(p.oracles[0], pact.finalizeStage(p.id, k), U256::ZERO)?;
                }
            } else {
                self.step(p.oracles[0], pact.finalizeVerification(p.id), U256::ZERO)?;
            }
        }
        self.mine().await?;
        for p in &plans {
            match p.fate {
                Fate::Approved => self.step(p.buyer, pact.approveWork(p.id), U256::ZERO)?,
                Fate::Staged => {
                    self.step(p.buyer, pact.approveStage(p.id, 0), U256::ZERO)?;
                    self.step(p.buyer, pact.rejectStage(p.id, 1), U256::ZERO)?;
                    self.step(p.buyer, pact.approveStage(p.id, 2), U256::ZERO)?;
                }
                f if f.rejected() => self.step(p.buyer, pact.rejectWork(p.id), U256::ZERO)?,
                Fate::Settled => {
                    self.step(p.seller, pact.proposeSettlement(p.id, Fate::share(p.id), 0), U256::ZERO)?
                }
                _ => {}
            }
        }
        self.mine().await?;
        for p in &plans {
            match p.fate {
                Fate::SellerWinsDispute => {
                    self.step(p.arbitrator, pact.resolveDispute(p.id, true), U256::ZERO)?
                }
                Fate::BuyerWinsDispute => {
                    self.step(p.arbitrator, pact.resolveDispute(p.id, false), U256::ZERO)?
                }
                Fate::SplitRuling => {
                    self.step(p.arbitrator, pact.resolveDisputeShare(p.id, Fate::share(p.id)), U256::ZERO)?
                }
                Fate::Staged => {
                    self.step(p.arbitrator, pact.resolveStage(p.id, 1, Fate::share(p.id)), U256::ZERO)?
                }
                Fate::Settled => {
                    self.step(p.buyer, pact.acceptSettlement(p.id, 1, Fate::share(p.id)), U256::ZERO)?
                }
                _ => {}
            }
        }
        self.mine().await?;
        self.time_out(&plans, now).await?;
        self.withdraw_all().await?;
        self.check_receipts(first_block + 1).await
    }

    /// Moves past the short deadline of this round's timed-out pacts and claims their refunds.
    async fn time_out(&mut self, plans: &[Plan], now: u64) -> anyhow::Result<()> {
        let late: Vec<&Plan> = plans.iter().filter(|p| p.fate == Fate::TimedOut).collect();
        let Some(deadline) = late.iter().map(|p| p.terms.deadline).max() else { return Ok(()) };
        let jump = deadline.saturating_sub(now) + 1;
        let _: Value = self.provider.raw_request("evm_increaseTime".into(), (U256::from(jump),)).await?;
        self.mine().await?;
        let pact = self.pact.clone();
        for p in late {
            self.step(p.buyer, pact.claimTimeout(p.id), U256::ZERO)?;
        }
        self.mine().await
    }

    /// Every buyer and seller with a credit withdraws it, in each currency.
    async fn withdraw_all(&mut self) -> anyhow::Result<()> {
        let pact = self.pact.clone();
        let traders: Vec<Address> = self.parties.traders().copied().collect();
        let currencies: Vec<Address> =
            std::iter::once(Address::ZERO).chain(self.token.as_ref().map(|t| t.address)).collect();
        for who in traders {
            for &currency in &currencies {
                if pact.balances(currency, who).call().await? > U256::ZERO {
                    self.step(who, pact.withdraw(currency), U256::ZERO)?;
                }
            }
        }
        self.mine().await
    }

    /// The terms and parts of pact `id`, drawn from the seeded generator, held to the rules
    /// `create-pact` and `sign_contract` hold terms to (`rules::check_terms`) at chain time `now`.
    fn plan(&mut self, id: U256, now: u64) -> anyhow::Result<Plan> {
        let rng = &mut self.rng;
        let drawn = Fate::draw(rng);
        let fate = if Fate::staged(id) { Fate::Staged } else { drawn };
        let initiator = if rng.random_bool(0.7) { Initiator::Buyer } else { Initiator::Seller };
        let parties = &self.parties;
        let buyer = parties.buyers[rng.random_range(0..parties.buyers.len())];
        let seller = parties.sellers[rng.random_range(0..parties.sellers.len())];
        let arbitrator = parties.arbitrators[rng.random_range(0..parties.arbitrators.len())];
        let count = rng.random_range(1..=3usize);
        let start = rng.random_range(0..parties.oracles.len());
        let oracles: Vec<Address> =
            (0..count).map(|k| parties.oracles[(start + k) % parties.oracles.len()]).collect();
        let weights: Vec<u8> = match count {
            1 => vec![100],
            2 => vec![60, 40],
            _ => vec![50, 30, 20],
        };
        let scores: Vec<u8> = oracles
            .iter()
            .map(|_| {
                // Drawn as the fate drawn, so the stream stays the same; a staged pact's pass.
                let score = if drawn == Fate::FailedVerification {
                    rng.random_range(0..40)
                } else {
                    rng.random_range(60..=100)
                };
                if fate == Fate::Staged { score.max(60) } else { score }
            })
            .collect();
        // 0.0001-0.005 ETH, or 1-50 whole tokens for every third pact (by id, as below).
        let units = U256::from(rng.random_range(1..=50u64));
        let (currency, payment) =
            match self.token.as_ref().filter(|_| id % U256::from(3u8) == U256::from(1u8)) {
                Some(t) => (t.address, units * U256::from(10u8).pow(U256::from(t.decimals))),
                None => (Address::ZERO, units * U256::from(100_000_000_000_000u64)),
            };
        // Long enough for acceptance to close an hour before the deadline (the contract's work window).
        let deadline = if fate == Fate::TimedOut { now + 7_200 } else { now + 30 * 86_400 };
        // Most pacts are negotiated for one worker or client, as `sign_contract` makes them; every
        // fifth is open to anyone (by id, so the seeded draws stay those of earlier versions).
        let named = id % U256::from(5u8) != U256::ZERO;
        let words = (SPEC_WORDS[rng.random_range(0..8)], SPEC_WORDS[rng.random_range(0..8)]);
        let terms = AgentPact::Terms {
            initiator: initiator.code(),
            specHash: keccak256(id.to_be_bytes::<32>()),
            specUri: format!("ipfs://bench/{}-{}/{id}", words.0, words.1),
            deadline,
            acceptBy: 0,
            reviewPeriod: 0,
            threshold: 50,
            arbitrator,
            counterparty: Address::ZERO,
            currency,
            payment,
            oracles: oracles.clone(),
            weights,
        };
        // A staged pact: the payment in three parts due 10, 20 and 30 days on.
        let stages = if fate == Fate::Staged {
            let part = payment / U256::from(STAGES);
            (0..STAGES)
                .map(|k| AgentPact::StageTerms {
                    amount: if k + 1 == STAGES { payment - part * U256::from(STAGES - 1) } else { part },
                    deadline: now + 10 * 86_400 * (u64::from(k) + 1),
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut plan =
            Plan { id, fate, initiator, buyer, seller, arbitrator, oracles, scores, terms, stages };
        if named {
            plan.terms.counterparty = plan.accepter();
        }
        rules::check_terms(&plan.terms, plan.creator(), now)
            .with_context(|| format!("generated pact {id} has terms the escrow refuses"))?;
        if !plan.stages.is_empty() {
            rules::check_stages(&plan.terms, &plan.stages, now)
                .with_context(|| format!("generated pact {id} has stages the escrow refuses"))?;
        }
        Ok(plan)
    }

    /// The latest block's number and time.
    async fn latest(&self) -> anyhow::Result<(u64, u64)> {
        let latest = self.provider.get_block_by_number(Default::default()).await?;
        Ok(latest.map_or((0, 0), |b| (b.header.number, b.header.timestamp)))
    }

    /// Queues `call`, made by party `from` with `value`, for the next [`Self::mine`].
    fn step<D: CallDecoder>(
        &mut self,
        from: Address,
        call: CallBuilder<&DynProvider, D>,
        value: U256,
    ) -> anyhow::Result<()> {
        self.parties.step(&mut self.steps, from, call, value)?;
        self.generated.steps += 1;
        Ok(())
    }

    /// Sends the queued steps through the crowd, then mines until the pool is empty.
    async fn mine(&mut self) -> anyhow::Result<()> {
        let steps = std::mem::take(&mut self.steps);
        self.generated.transactions += self.parties.send(steps, &mut self.nonce).await?;
        loop {
            let _: Value = self.provider.raw_request("evm_mine".into(), ()).await?;
            self.generated.blocks += 1;
            let status: Value = self.provider.raw_request("txpool_status".into(), ()).await?;
            let pending = status.get("pending").and_then(Value::as_str).unwrap_or("0x0");
            if pending == "0x0" || pending == "0" {
                return Ok(());
            }
        }
    }

    /// Fails the run if a transaction mined since block `from` reverted: the history would not
    /// be the one planned.
    async fn check_receipts(&self, from: u64) -> anyhow::Result<()> {
        let (to, _) = self.latest().await?;
        for number in from..=to {
            let receipts = self.provider.get_block_receipts(number.into()).await?.unwrap_or_default();
            if let Some(failed) = receipts.iter().find(|r| !r.status()) {
                bail!(
                    "generated transaction {} reverted in block {number}: the history is not the planned one",
                    failed.transaction_hash
                );
            }
        }
        Ok(())
    }
}
