//! What a Sybil ring and a griefer can do to the scores, measured against the real contracts, the
//! test ERC-8004 registries and the indexer (docs/api.md §What a score costs prints these
//! figures; `--nocapture` shows them).
//!
//! The ring: one owner funds 50 wallets; all 50 give the farmed agent five-star ERC-8004 feedback
//! without any pact, and 20 of them buy from it through pacts of the full-weight size (0.01 ETH)
//! with the farmer's own oracle and arbitrator, each approved seconds after it was funded, the
//! capital recycled from one wallet to the next, each rated five stars in AgentPact and in ERC-8004
//! (tagged with its pact). Three honest clients hire the farmed agent and another agent through
//! ordinary pacts (0.05 ETH, two days of work, the market's independent oracles), rating it four
//! stars (80). The ring must
//! move the grounded and the AgentPact scores less than one honest pact does.
//!
//! The griefer: ten fresh wallets each hire an honest seller naming an arbitrator that never
//! answers, dispute, and take the refund when the dispute times out, then rate it one star. The
//! honest seller's score must move by less than 0.3.

use agentpact_contracts::{AgentPact, AgentRegistry, Initiator, erc8004::RegistrationFile};
use agentpact_read::{AgentRef, Reader};
use agentpact_tests::{
    HarnessError,
    chain::{ether, hash, send},
    erc8004::Registries,
    index::indexer,
    index::small_ranges,
    pacts::{Market, REVIEW_PERIOD, accepter_deposit, creator_deposit},
    postgres::TestDatabase,
};
use alloy::{
    network::TransactionBuilder,
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
    signers::local::PrivateKeySigner,
};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// Two days: an ordinary job's time between acceptance and approval.
const ORDINARY_WORK: u64 = 2 * 24 * 60 * 60;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// One pact between any two parties, walked to its end by the parties themselves.
struct Deal {
    buyer: Address,
    seller: Address,
    oracles: Vec<Address>,
    weights: Vec<u8>,
    arbitrator: Address,
    payment: U256,
}

impl Deal {
    /// The terms: a buyer's request naming the seller, due in seven days, one-day review.
    async fn terms(&self, m: &Market) -> Result<AgentPact::Terms> {
        let now = m.chain.now().await?;
        Ok(AgentPact::Terms {
            initiator: Initiator::Buyer.code(),
            specHash: hash(1),
            specUri: "ipfs://QmLogo".into(),
            deadline: now + 7 * 24 * 60 * 60,
            acceptBy: 0,
            reviewPeriod: REVIEW_PERIOD,
            threshold: 70,
            arbitrator: self.arbitrator,
            counterparty: self.seller,
            currency: Address::ZERO,
            payment: self.payment,
            oracles: self.oracles.clone(),
            weights: self.weights.clone(),
        })
    }

    /// Created by the buyer and accepted by the seller, through `provider` (which signs for both).
    async fn funded(&self, m: &Market, provider: &DynProvider) -> Result<U256> {
        let pact = AgentPact::new(m.chain.deployment.agent_pact, provider.clone());
        let id = pact.pactCount().call().await?;
        let deposit = creator_deposit(Initiator::Buyer, self.payment);
        send(pact.createPact(self.terms(m).await?).from(self.buyer).value(deposit)).await?;
        let deposit = accepter_deposit(Initiator::Buyer, self.payment);
        send(pact.acceptPact(id).from(self.seller).value(deposit)).await?;
        Ok(id)
    }

    /// Funded, worked on for `work` seconds of chain time, scored 95 by every oracle, approved.
    async fn settled(&self, m: &Market, provider: &DynProvider, work: u64) -> Result<U256> {
        let pact = AgentPact::new(m.chain.deployment.agent_pact, provider.clone());
        let id = self.funded(m, provider).await?;
        if work > 0 {
            m.chain.increase_time(work).await?;
        }
        send(pact.startWork(id).from(self.seller)).await?;
        send(pact.submitWork(id, hash(2)).from(self.seller)).await?;
        for oracle in &self.oracles {
            send(pact.submitVerification(id, 95, hash(3)).from(*oracle)).await?;
        }
        send(pact.finalizeVerification(id).from(self.seller)).await?;
        send(pact.approveWork(id).from(self.buyer)).await?;
        Ok(id)
    }
}

/// The three scores of an agent side by side.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scores {
    /// AgentPact's 0-5 score (all roles).
    agentpact: f64,
    /// The raw ERC-8004 mean value (0-100), none without feedback.
    raw: Option<f64>,
    /// The 0-5 score of the grounded ERC-8004 feedback.
    grounded: f64,
    /// The share of ERC-8004 feedback that is ungrounded.
    ungrounded: f64,
}

async fn scores(m: &Market, db: &TestDatabase, who: Address) -> Result<Scores> {
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    let chain = m.chain.anvil.chain_id();
    let reader = Reader::new(db.pool().clone());
    let ours = reader.reputation(chain, who).await.map_err(process)?;
    let theirs = reader
        .erc8004_agent(chain, AgentRef::Address(who))
        .await
        .map_err(process)?
        .ok_or_else(|| process(format!("{who} has no ERC-8004 identity in the index")))?;
    Ok(Scores {
        agentpact: ours.overall.value,
        raw: theirs.reputation.mean_value,
        grounded: theirs.reputation.grounded_score,
        ungrounded: theirs.reputation.ungrounded_share(),
    })
}

/// Registers `who` in the ERC-8004 Identity Registry with a data-URI file listing `skill`.
async fn register_8004(m: &Market, who: Address, name: &str) -> Result<U256> {
    let chain = m.chain.anvil.chain_id();
    let file = RegistrationFile::ours(
        name,
        "logos",
        "https://a.example/mcp",
        vec!["logo-design".into()],
        chain,
        who,
    );
    Registries::of(&m.chain).register(who, file.to_data_uri()).await
}

/// `client` rates `agent` `value` (0-100) in ERC-8004, tagged with `pact` when given.
async fn feedback_8004(
    m: &Market,
    provider: &DynProvider,
    agent: U256,
    client: Address,
    value: i128,
    pact: Option<U256>,
) -> Result {
    let tag = pact.map(|p| format!("pact:{p}")).unwrap_or_default();
    Registries::at(m.chain.erc8004, provider.clone()).rate(agent, client, value, &tag, "quality").await?;
    Ok(())
}

/// `n` fresh wallets and a provider that signs for them and for the dev accounts.
fn ring(m: &Market, n: usize) -> Result<(Vec<Address>, DynProvider)> {
    // (The harness's provider signs for the dev accounts only.)
    let keys: Vec<PrivateKeySigner> = (0..n).map(|_| PrivateKeySigner::random()).collect();
    let addresses = keys.iter().map(PrivateKeySigner::address).collect();
    Ok((addresses, m.chain.provider_also_signing(keys)?))
}

async fn pay(provider: &DynProvider, from: Address, to: Address, amount: U256) -> Result {
    let tx = TransactionRequest::default().with_from(from).with_to(to).with_value(amount);
    provider.send_transaction(tx).await?.get_receipt().await.map_err(process)?;
    Ok(())
}

#[tokio::test]
async fn a_sybil_ring_moves_the_grounded_and_agentpact_scores_less_than_one_honest_pact() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let a = &m.chain.accounts;
    let (owner, farmed, own_oracle, own_arbitrator, honest) = (a[10], a[11], a[12], a[13], a[14]);
    let clients = [a[15], a[16], a[17]];
    let (wallets, provider) = ring(&m, 50)?;
    m.register_oracle(own_oracle).await?;
    let farmed_id = register_8004(&m, farmed, "Farmed Logos").await?;
    let honest_id = register_8004(&m, honest, "Honest Logos").await?;
    let before = scores(&m, &db, farmed).await?;

    // One honest pact of ordinary size and duration, rated five stars in both registries.
    let ordinary = |buyer, seller| Deal {
        buyer,
        seller,
        oracles: m.cast.oracles.clone(),
        weights: vec![60, 40],
        arbitrator: m.cast.arbitrator,
        payment: ether(1) / U256::from(20u8),
    };
    let agents = Ratings(&m, &provider);
    let first = ordinary(clients[0], farmed).settled(&m, &provider, ORDINARY_WORK).await?;
    agents.rate(first, clients[0], 5).await?;
    feedback_8004(&m, &provider, farmed_id, clients[0], 80, Some(first)).await?;
    let one_honest = scores(&m, &db, farmed).await?;
    let honest_move = (one_honest.agentpact - before.agentpact, one_honest.grounded - before.grounded);

    // The other honest pacts: the two other clients hire the farmed agent; all three hire the other.
    for (i, client) in clients.iter().enumerate() {
        if i > 0 {
            let id = ordinary(*client, farmed).settled(&m, &provider, ORDINARY_WORK).await?;
            agents.rate(id, *client, 5).await?;
            feedback_8004(&m, &provider, farmed_id, *client, 80, Some(id)).await?;
        }
        let id = ordinary(*client, honest).settled(&m, &provider, ORDINARY_WORK).await?;
        agents.rate(id, *client, 5).await?;
        feedback_8004(&m, &provider, honest_id, *client, 100, Some(id)).await?;
    }
    let honest_only = scores(&m, &db, farmed).await?;
    let other_before_ring = scores(&m, &db, honest).await?;

    // The ring. The owner funds each wallet for gas; the farm's capital is 0.012 ETH, passed on
    // from one buyer to the next through the farmer (who withdraws what each pact paid).
    let full_size = ether(1) / U256::from(100u8);
    for w in &wallets {
        pay(&provider, owner, *w, ether(1) / U256::from(50u8)).await?;
        feedback_8004(&m, &provider, farmed_id, *w, 100, None).await?;
    }
    let pact = AgentPact::new(m.chain.deployment.agent_pact, provider.clone());
    for w in wallets.iter().take(20) {
        pay(&provider, farmed, *w, creator_deposit(Initiator::Buyer, full_size)).await?;
        let farm = Deal {
            buyer: *w,
            seller: farmed,
            oracles: vec![own_oracle],
            weights: vec![100],
            arbitrator: own_arbitrator,
            payment: full_size,
        };
        let id = farm.settled(&m, &provider, 0).await?;
        send(pact.withdraw(Address::ZERO).from(farmed)).await?;
        agents.rate(id, *w, 5).await?;
        feedback_8004(&m, &provider, farmed_id, *w, 100, Some(id)).await?;
    }
    let with_ring = scores(&m, &db, farmed).await?;
    let other = scores(&m, &db, honest).await?;
    let ring_move = (with_ring.agentpact - honest_only.agentpact, with_ring.grounded - honest_only.grounded);

    println!("farmed agent  before: {before:?}");
    println!("              after one honest pact: {one_honest:?} (moved {honest_move:?})");
    println!("              after three honest clients: {honest_only:?}");
    println!("              after the ring: {with_ring:?} (moved {ring_move:?})");
    println!("other agent   after three honest clients: {other_before_ring:?}; after the ring: {other:?}");

    assert!(honest_move.0 > 0.0 && honest_move.1 > 0.0, "an honest pact counts: {honest_move:?}");
    assert!(
        ring_move.0.abs() < honest_move.0,
        "AgentPact: ring {ring_move:?} vs one honest pact {honest_move:?}"
    );
    assert!(
        ring_move.1.abs() < honest_move.1,
        "grounded: ring {ring_move:?} vs one honest pact {honest_move:?}"
    );
    // The raw ERC-8004 score is what the ring bought: 70 values of 100 beside three honest 80s.
    assert_eq!(honest_only.raw, Some(80.0));
    assert!(with_ring.raw.is_some_and(|raw| raw > 99.0), "{with_ring:?}");
    // 30 of 73 have no pact behind them; the 20 farm buyers' two feedbacks each are grounded (by
    // the tag, or by the parties when untagged), but their pacts weigh next to nothing.
    assert!((with_ring.ungrounded - 30.0 / 73.0).abs() < 1e-9, "{with_ring:?}");
    assert_eq!(other, other_before_ring, "the ring did not touch the other agent");
    Ok(())
}

#[tokio::test]
async fn silent_arbitrator_refunds_by_griefers_move_an_honest_seller_by_less_than_three_tenths() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let a = &m.chain.accounts;
    let (seller, silent) = (a[10], a[11]);
    let (griefers, provider) = ring(&m, 10)?;
    register_8004(&m, seller, "Honest Seller").await?;
    let agents = Ratings(&m, &provider);
    // An honest record: five clients, ordinary pacts, rated 4 and 5 stars.
    for (i, client) in a[12..17].iter().enumerate() {
        let deal = Deal {
            buyer: *client,
            seller,
            oracles: m.cast.oracles.clone(),
            weights: vec![60, 40],
            arbitrator: m.cast.arbitrator,
            payment: ether(1) / U256::from(20u8),
        };
        let id = deal.settled(&m, &provider, ORDINARY_WORK).await?;
        agents.rate(id, *client, if i % 2 == 0 { 5 } else { 4 }).await?;
    }
    let before = scores(&m, &db, seller).await?;

    let pact = AgentPact::new(m.chain.deployment.agent_pact, provider.clone());
    let small = ether(1) / U256::from(100u8);
    // Past the contract's dispute window, a silent arbitrator's pact can be refunded.
    let dispute_wait = pact.DISPUTE_PERIOD().call().await? + 1;
    for g in &griefers {
        pay(&provider, a[18], *g, ether(1) / U256::from(20u8)).await?;
        let deal = Deal {
            buyer: *g,
            seller,
            oracles: m.cast.oracles.clone(),
            weights: vec![60, 40],
            arbitrator: silent,
            payment: small,
        };
        let id = deal.funded(&m, &provider).await?;
        send(pact.raiseDispute(id, silent).from(*g)).await?;
        m.chain.increase_time(dispute_wait).await?;
        send(pact.claimTimeout(id).from(*g)).await?;
        agents.rate(id, *g, 1).await?; // a rating of a refund: shown, weighs nothing
    }
    let after = scores(&m, &db, seller).await?;
    println!("griefed seller before: {before:?}; after ten silent-arbitrator refunds: {after:?}");
    assert!(before.agentpact > 3.5, "an honest record to sink: {before:?}");
    assert!((after.agentpact - before.agentpact).abs() < 0.3, "{before:?} → {after:?}");
    Ok(())
}

/// AgentRegistry ratings from any party `provider` signs for.
struct Ratings<'a>(&'a Market, &'a DynProvider);

impl Ratings<'_> {
    async fn rate(&self, pact: U256, rater: Address, rating: u8) -> Result {
        let agents = AgentRegistry::new(self.0.chain.deployment.agent_registry, self.1.clone());
        send(agents.submitFeedback(pact, rating, vec![], String::new()).from(rater)).await?;
        Ok(())
    }
}
