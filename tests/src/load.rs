//! Large histories fast, for the benchmarks: many transactions per block (automine off, explicit
//! nonces and gas, mined in phases so each phase only depends on blocks already mined).
//!
//! One buyer creates every pact (so pact ids follow its nonces); seven sellers and four oracles
//! take turns. Pacts vary in payment and spec URI so filters and search have something to choose.

use std::collections::HashMap;

use agentpact_contracts::{AgentPact, Initiator};
use alloy::{
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
};
use serde_json::Value;

use crate::{
    HarnessError,
    chain::{TestChain, hash},
    pacts::Market,
};

/// Events one full lifecycle emits: created, accepted, started, submitted, scored, finalized,
/// approved + two payouts.
pub const EVENTS_PER_LIFECYCLE: usize = 9;

/// Pacts per round of lifecycles.
const ROUND: usize = 400;

/// Pacts created per block by [`Generator::open_pacts`].
const CREATES_PER_BLOCK: usize = 2_000;

/// Words the spec URIs are made of.
const SPEC_WORDS: [&str; 8] =
    ["logo", "translation", "audit", "dataset", "summary", "website", "review", "voice"];

/// Who sends what.
#[derive(Debug, Clone)]
pub struct Cast {
    /// Creates, and approves, every pact.
    pub buyer: Address,
    /// Accept, start and submit in turn.
    pub sellers: Vec<Address>,
    /// Score in turn, one per pact.
    pub oracles: Vec<Address>,
    /// Named by every pact.
    pub arbitrator: Address,
}

impl Cast {
    /// Dev accounts 1 (buyer), 2-8 (sellers), 9-12 (oracles, registered here) and 19 (arbitrator).
    pub async fn of(m: &Market) -> Result<Self, HarnessError> {
        let a = &m.chain.accounts;
        let cast =
            Self { buyer: a[1], sellers: a[2..=8].to_vec(), oracles: a[9..=12].to_vec(), arbitrator: a[19] };
        for oracle in &cast.oracles {
            m.register_oracle(*oracle).await?;
        }
        Ok(cast)
    }

    /// The terms of the `n`th pact: a small payment (1 to 5 finney, so the dev balance pays for
    /// many thousand pacts), one oracle, a spec URI of two words.
    pub fn terms(&self, n: usize, deadline: u64) -> AgentPact::Terms {
        let words = (SPEC_WORDS[n % SPEC_WORDS.len()], SPEC_WORDS[(n / 8) % SPEC_WORDS.len()]);
        AgentPact::Terms {
            initiator: Initiator::Buyer.code(),
            specHash: hash(7),
            specUri: format!("ipfs://bench/{}-{}/{n}", words.0, words.1),
            deadline,
            reviewPeriod: 0,
            threshold: 50,
            arbitrator: self.arbitrator,
            payment: payment(n),
            oracles: vec![self.oracles[n % self.oracles.len()]],
            weights: vec![100],
        }
    }
}

/// The payment of the `n`th pact.
pub fn payment(n: usize) -> U256 {
    U256::from(1_000_000_000_000_000u64) * U256::from(n % 5 + 1)
}

/// The stake on a payment.
pub fn stake(payment: U256) -> U256 {
    payment / U256::from(10u8)
}

/// Runs a benchmark's `main` body on a multi-threaded runtime.
pub fn block_on(bench: impl Future<Output = Result<(), HarnessError>>) -> Result<(), HarnessError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| HarnessError::Process(e.to_string()))?
        .block_on(bench)
}

/// Fills blocks with many transactions each.
pub struct Generator {
    pact: AgentPact::AgentPactInstance<DynProvider>,
    provider: DynProvider,
    cast: Cast,
    nonces: HashMap<Address, u64>,
}

impl Generator {
    /// Turns automine off (until the generator finishes) and learns the senders' nonces.
    pub async fn start(chain: &TestChain, cast: Cast) -> Result<Self, HarnessError> {
        let provider = chain.provider.clone();
        let _: Value = provider.raw_request("evm_setAutomine".into(), (false,)).await?;
        let _: Value =
            provider.raw_request("evm_setBlockGasLimit".into(), (U256::from(2_000_000_000u64),)).await?;
        let mut nonces = HashMap::new();
        for who in cast.sellers.iter().chain(&cast.oracles).chain([&cast.buyer]) {
            nonces.insert(*who, provider.get_transaction_count(*who).await?);
        }
        Ok(Self { pact: chain.pact.clone(), provider, cast, nonces })
    }

    /// Runs whole rounds until at least `lifecycles` pacts went from creation to approval;
    /// returns how many did.
    pub async fn lifecycles(&mut self, lifecycles: usize) -> Result<usize, HarnessError> {
        let mut done = 0;
        while done < lifecycles {
            self.round().await?;
            done += ROUND;
        }
        Ok(done)
    }

    /// Creates `n` pacts that stay open (NEGOTIATING), many per block.
    pub async fn open_pacts(&mut self, n: usize) -> Result<(), HarnessError> {
        let mut left = n;
        while left > 0 {
            let batch = left.min(CREATES_PER_BLOCK);
            let first: usize = self.pact.pactCount().call().await?.to();
            let deadline = self.deadline().await?;
            for i in first..first + batch {
                self.create(i, deadline).await?;
            }
            self.mine().await?;
            left -= batch;
        }
        Ok(())
    }

    /// Turns automine back on.
    pub async fn finish(self) -> Result<(), HarnessError> {
        let _: Value = self.provider.raw_request("evm_setAutomine".into(), (true,)).await?;
        Ok(())
    }

    /// One round: the buyer creates a batch of pacts; sellers accept, start and submit; oracles
    /// score and finalize; the buyer approves. Mined after each phase.
    async fn round(&mut self) -> Result<(), HarnessError> {
        let first: usize = self.pact.pactCount().call().await?.to();
        let deadline = self.deadline().await?;
        let ids: Vec<usize> = (first..first + ROUND).collect();
        let (cast, pact) = (self.cast.clone(), self.pact.clone());
        for &n in &ids {
            self.create(n, deadline).await?;
        }
        self.mine().await?;
        for &n in &ids {
            let (id, seller) = (U256::from(n), cast.sellers[n % cast.sellers.len()]);
            self.fire(seller, pact.acceptPact(id).value(stake(payment(n)))).await?;
            self.fire(seller, pact.startWork(id)).await?;
            self.fire(seller, pact.submitWork(id, hash(8))).await?;
        }
        self.mine().await?;
        for &n in &ids {
            let (id, oracle) = (U256::from(n), cast.oracles[n % cast.oracles.len()]);
            self.fire(oracle, pact.submitVerification(id, 90, hash(9))).await?;
            self.fire(oracle, pact.finalizeVerification(id)).await?;
        }
        self.mine().await?;
        for &n in &ids {
            self.fire(cast.buyer, pact.approveWork(U256::from(n))).await?;
        }
        self.mine().await
    }

    /// The buyer creates pact number `n`.
    async fn create(&mut self, n: usize, deadline: u64) -> Result<(), HarnessError> {
        let (terms, pact) = (self.cast.terms(n, deadline), self.pact.clone());
        let value = terms.payment + stake(terms.payment);
        self.fire(self.cast.buyer, pact.createPact(terms).value(value)).await
    }

    /// Thirty days after the latest block.
    async fn deadline(&self) -> Result<u64, HarnessError> {
        let latest = self.provider.get_block_by_number(Default::default()).await?;
        Ok(latest.map_or(0, |b| b.header.timestamp) + 30 * 24 * 3600)
    }

    /// Sends `call` from `from` with the next nonce, without waiting for it to be mined.
    async fn fire<C: alloy::contract::CallDecoder>(
        &mut self,
        from: Address,
        call: alloy::contract::CallBuilder<&DynProvider, C>,
    ) -> Result<(), HarnessError> {
        let nonce = self.nonces.entry(from).or_default();
        let call = call
            .from(from)
            .nonce(*nonce)
            .gas(1_000_000)
            .max_fee_per_gas(100_000_000_000)
            .max_priority_fee_per_gas(0);
        drop(call.send().await?);
        *nonce += 1;
        Ok(())
    }

    /// Mines until the pool is empty.
    async fn mine(&self) -> Result<(), HarnessError> {
        loop {
            let _: Value = self.provider.raw_request("evm_mine".into(), ()).await?;
            let status: Value = self.provider.raw_request("txpool_status".into(), ()).await?;
            let pending = status.get("pending").and_then(Value::as_str).unwrap_or("0x0");
            if pending == "0x0" || pending == "0" {
                return Ok(());
            }
        }
    }
}
