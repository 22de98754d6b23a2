//! Randomized sequences of calls by random actors, checked against an independent model after every
//! step. The actors include strangers, callers that come a second late (the clock is often set to
//! exactly the last allowed second of some window, or the first refused one), terms out of every
//! bound, pacts reserved for one counterparty, and a party that owns a second wallet it uses as
//! accepter and as the arbitrator of its own pacts.
//! - the contract accepts exactly the calls the model allows, and lands in the model's status and
//!   ending (`getLedger`); the runs together end pacts in every way there is;
//! - every refusal is a custom error the client can decode by name;
//! - pacts are paid in ETH, in the test USDC (6 decimals, deposits through exact allowances) or in
//!   a hostile token that its minter switches at random between behaving, returning no data,
//!   re-entering the escrow on every transfer, taking a 1% fee and answering `false`: deposits in
//!   it are refused exactly while it takes a fee or answers false, a withdrawal while it answers
//!   false keeps the credit, and one while it takes a fee still debits the escrow exactly;
//!   every credit matches the payout table in its pact's currency, and for each currency the
//!   escrow's holding (and its own `owed` book) equals the sum of every locked amount plus every
//!   unwithdrawn credit in it: no currency ever pays for another;
//! - disputes end in rulings of any share of the pot (the seed's `resolveDispute(sellerWins)` and
//!   `resolveDisputeShare` side by side), and parties offer, replace, withdraw and accept
//!   settlements: strangers accept, parties accept their own offers, offers are accepted after
//!   they were replaced, after they expired, after the pact moved on, after a verdict (a score, a
//!   `voidOffers`) voided them, at the latest second they may live (an hour before their window
//!   ends: the clock is often set to it or the next) and at the last second of their window (and
//!   the exit is then claimed at the next); random actors (the pact's oracles before and after
//!   scoring, its arbitrator, parties, strangers) call `voidOffers` in every status;
//! - every ended pact left each party that did its part on time at least what it put in, unless
//!   the arbitrator named in its terms ruled against it or it agreed to a settlement;
//! - every live pact has an exit a bystander can take alone, opening within a bounded time; the
//!   contract is asked (on a snapshot moved to that second) whether it takes it;
//! - once every clock has run out, a bystander can end every pact, and after everyone withdraws
//!   the escrow holds nothing;
//! - the indexer, fed the same history, agrees with the contracts field by field.
//!
//! The seed is printed; rerun one with `AGENTPACT_SEED=<seed>`.

#[path = "model/mod.rs"]
mod model;

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Ending, Initiator, PactStatus,
};
use agentpact_tests::{
    HarnessError,
    chain::{Mined, TestChain, hash, send},
    index,
    pacts::Market,
    postgres::TestDatabase,
    receiver::{HostileToken::HostileTokenInstance, deploy_hostile_token},
};
use alloy::{
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
    sol_types::SolCall,
};
use model::{Action, Escrow, Proposal};
use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};

type Result = std::result::Result<(), HarnessError>;

const STEPS: usize = 250;
/// The seeds every run takes; together they reach every status, ending and currency (asserted).
const FIXED_SEEDS: [u64; 2] = [3, 8];
/// Pacts that can still move: below the minimum a new one is created, at the maximum none is.
const MIN_LIVE_PACTS: usize = 3;
const MAX_LIVE_PACTS: usize = 8;
const DAY: u64 = 24 * 60 * 60;
/// Seconds the node's clock may run on between reading the latest block and simulating a call.
const CLOCK_SLACK: u64 = 60;

struct Actors {
    parties: Vec<Address>,
    oracles: Vec<Address>,
    arbitrators: Vec<Address>,
    everyone: Vec<Address>,
    /// A party and the second wallet it owns: it accepts the party's pacts and arbitrates them.
    owner: Address,
    puppet: Address,
}

struct Run {
    m: Market,
    actors: Actors,
    model: Escrow,
    rng: StdRng,
    refusals: usize,
    accepted: usize,
    /// Every status some pact entered during the run.
    reached: std::collections::HashSet<PactStatus>,
    /// The hostile currency, and the mode its minter last set.
    hostile: HostileTokenInstance<DynProvider>,
    mode: TokenMode,
    /// Deposits refused only because the hostile token misbehaved at the time.
    token_refusals: usize,
    /// Pacts proposed so far (the currencies take turns by it).
    proposals: usize,
    /// `voidOffers` calls taken, and acceptances refused because a verdict voided their offer.
    voids: usize,
    voided_accepts: usize,
}

/// What the hostile token does (`HostileToken.Mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenMode {
    Normal = 0,
    Fee = 1,
    False = 2,
    Silent = 3,
    Reenter = 4,
}

impl TokenMode {
    const ALL: [Self; 5] = [Self::Normal, Self::Fee, Self::False, Self::Silent, Self::Reenter];
}

#[tokio::test]
async fn random_sequences_keep_the_books_balanced_and_every_pact_can_end() -> Result {
    // Two fixed seeds, and one new seed each run to explore. Together they reach every status and
    // see the misbehaving token refuse deposits (checked below; the fee-taking token's own refusal,
    // the escrow's arrival check, has its test in pact_currencies.rs).
    let seeds: Vec<u64> = match std::env::var("AGENTPACT_SEED") {
        Ok(seed) => vec![
            seed.parse().map_err(|_| HarnessError::Process(format!("AGENTPACT_SEED={seed} is not a u64")))?,
        ],
        Err(_) => {
            let fresh = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(3);
            [FIXED_SEEDS.as_slice(), &[fresh]].concat()
        }
    };
    let mut reached = std::collections::HashSet::new();
    let mut endings = std::collections::HashSet::new();
    let mut token_refusals = 0;
    let (mut voids, mut voided_accepts) = (0, 0);
    // What the runs cover (statuses, endings, currencies, refusals) is counted over the fixed
    // seeds alone: the fresh seed explores, and whether it happens to reach a status must not
    // decide whether the test passes.
    let (mut funded_in, mut currencies) = (std::collections::HashSet::<Address>::new(), 0);
    for seed in seeds {
        eprintln!("pact_invariants seed: {seed} (rerun with AGENTPACT_SEED={seed})");
        let mut run = Run::start(seed).await?;
        for step in 0..STEPS {
            if step == STEPS / 2 {
                // Halfway the minter makes the token refuse every deposit, whatever the random
                // switches did so far; until it switches again, half the new pacts try that token.
                run.set_token_mode(TokenMode::False).await?;
            }
            run.step().await?;
            run.check_books().await?;
            run.check_promises();
            if step % 50 == 49 {
                run.check_exits().await?;
            }
        }
        // The indexer, fed the same random history, must agree with the contracts field by field:
        // once with pacts in every status, once more (incrementally) after every pact has ended.
        let db = TestDatabase::create().await?;
        let mut indexer = index::indexer(&run.m.chain, db.pool(), index::small_ranges());
        indexer.catch_up().await?;
        index::assert_index_matches_chain(&run.m.chain, db.pool()).await?;
        run.end_everything().await?;
        indexer.catch_up().await?;
        index::assert_index_matches_chain(&run.m.chain, db.pool()).await?;
        let ended: std::collections::BTreeSet<_> = run.model.pacts.iter().map(|p| p.ending.name()).collect();
        eprintln!(
            "seed {seed}: {} calls accepted, {} refused ({} deposits by the misbehaving token); {} voidOffers taken, {} acceptances of voided offers refused; pacts ended {ended:?}",
            run.accepted, run.refusals, run.token_refusals, run.voids, run.voided_accepts
        );
        if !FIXED_SEEDS.contains(&seed) {
            continue;
        }
        let funded = run.model.pacts.iter().filter(|p| !p.buyer.is_zero() && !p.seller.is_zero());
        funded_in.extend(funded.map(|p| p.currency));
        currencies = run.m.chain.currencies().len();
        reached.extend(run.model.pacts.iter().map(|p| p.status));
        endings.extend(run.model.pacts.iter().map(|p| p.ending));
        reached.extend(run.reached);
        token_refusals += run.token_refusals;
        voids += run.voids;
        voided_accepts += run.voided_accepts;
    }
    // What the runs covered: checked over the fixed seeds, not when one seed is rerun by hand.
    if std::env::var("AGENTPACT_SEED").is_err() {
        assert!(token_refusals > 0, "the hostile token never refused a deposit: it tests too little");
        assert!(
            voids > 0 && voided_accepts > 0,
            "{voids} voidOffers, {voided_accepts} voided offers refused"
        );
        assert_eq!(
            funded_in.len(),
            currencies,
            "pacts were funded in {funded_in:?} only: every currency must be tried"
        );
        let missed: Vec<_> = PactStatus::ALL.iter().filter(|s| !reached.contains(s)).collect();
        assert!(missed.is_empty(), "the random runs never reached {missed:?}: they test too little");
        // LIVE is compared after every step while pacts live; the runs end them all. MIXED is a
        // pact of several stages' alone, which pact_stages.rs ends (the model's pacts have one).
        let missed: Vec<_> = Ending::ALL
            .iter()
            .filter(|e| !matches!(e, Ending::Live | Ending::Mixed) && !endings.contains(e))
            .collect();
        assert!(missed.is_empty(), "the random runs never ended a pact {missed:?}: they test too little");
    }
    Ok(())
}

impl Run {
    async fn start(seed: u64) -> std::result::Result<Self, HarnessError> {
        let mut chain = TestChain::start().await?;
        let hostile = deploy_hostile_token(&chain, 6).await?;
        chain.redeploy_allowing(vec![*hostile.address()]).await?;
        let m = Market::open_on(chain).await?;
        let a = &m.chain.accounts;
        let actors = Actors {
            parties: a[1..=3].iter().chain(&a[7..=10]).chain(&a[15..=15]).copied().collect(),
            oracles: m.cast.oracles.iter().chain(&a[11..=12]).copied().collect(),
            arbitrators: a[13..=15].to_vec(),
            everyone: a[1..].to_vec(),
            owner: a[1],
            puppet: a[15],
        };
        for oracle in &actors.oracles[2..] {
            m.register_oracle(*oracle).await?;
        }
        Ok(Self {
            m,
            actors,
            model: Escrow::default(),
            rng: StdRng::seed_from_u64(seed),
            refusals: 0,
            accepted: 0,
            reached: Default::default(),
            hostile,
            mode: TokenMode::Normal,
            token_refusals: 0,
            proposals: 0,
            voids: 0,
            voided_accepts: 0,
        })
    }

    async fn step(&mut self) -> Result {
        let roll = self.rng.random_range(0..100);
        let live = self.model.pacts.iter().filter(|p| !p.status.is_terminal()).count();
        if live < MIN_LIVE_PACTS || (roll < 15 && live < MAX_LIVE_PACTS) {
            self.create().await
        } else if roll < 25 {
            self.withdraw().await
        } else if roll < 32 {
            let secs = self.rng.random_range(0..DAY / 2);
            self.m.chain.increase_time(secs).await
        } else if roll < 34 {
            let mode = *TokenMode::ALL.choose(&mut self.rng).unwrap_or(&TokenMode::Normal);
            self.set_token_mode(mode).await
        } else if roll < 39 {
            self.late_call().await
        } else if roll < 47 {
            self.verdict_race().await
        } else {
            let id = self.pick_pact();
            let action = self.random_action(id);
            let caller = self.caller_for(id, action);
            self.act(id, action, caller).await
        }
    }

    /// Proposes random terms, one in five of them out of some bound; the contract must take
    /// exactly the ones the model allows.
    async fn create(&mut self) -> Result {
        let now = self.m.chain.now().await?;
        let rng = &mut self.rng;
        let initiator = if rng.random_bool(0.5) { Initiator::Buyer } else { Initiator::Seller };
        // While the hostile token refuses deposits, half the new pacts try it: its refusals are
        // part of what the run must cover, whatever path the other choices took.
        let refusing = matches!(self.mode, TokenMode::Fee | TokenMode::False);
        // Otherwise the currencies take turns, so that every one is funded in every run.
        let currencies = self.m.chain.currencies();
        self.proposals += 1;
        let currency = if refusing && rng.random_bool(0.5) {
            *self.hostile.address()
        } else {
            currencies[self.proposals % currencies.len()]
        };
        // Up to 2 ETH, or up to 20,000 units of a 6-decimal token.
        let most: u64 = if currency.is_zero() { 2_000_000_000_000_000_000 } else { 20_000_000_000 };
        let creator = *self.actors.parties.choose(rng).unwrap_or(&self.m.cast.buyer);
        let count = rng.random_range(1..=self.actors.oracles.len());
        let oracles: Vec<Address> = self.actors.oracles.choose_multiple(rng, count).copied().collect();
        // Low pass marks half the time, so that verification passes often enough.
        let highest_mark = if rng.random_bool(0.5) { 30 } else { 100 };
        let mut arbitrator = *self.actors.arbitrators.choose(rng).unwrap_or(&self.m.cast.arbitrator);
        if creator == self.actors.owner && rng.random_bool(0.5) {
            arbitrator = self.actors.puppet; // judge in its own cause, through a second wallet
        }
        let mut p = Proposal {
            initiator,
            creator,
            arbitrator,
            counterparty: rng.random_bool(0.3).then(|| *self.actors.parties.choose(rng).unwrap_or(&creator)),
            weights: random_weights(rng, count),
            threshold: rng.random_range(model::MIN_THRESHOLD..=highest_mark),
            oracles,
            currency,
            payment: U256::from(rng.random_range(10u64..=most)),
            deadline: now + rng.random_range(model::MIN_WORK_WINDOW + 2 * CLOCK_SLACK..5 * DAY),
            accept_by: 0,
            review_period: if rng.random_bool(0.3) {
                0
            } else {
                rng.random_range(model::MIN_REVIEW_PERIOD..2 * DAY)
            },
            spec_uri_len: rng.random_range(10..=40),
        };
        if rng.random_bool(0.4) {
            p.accept_by = rng.random_range(now + CLOCK_SLACK..=p.deadline - model::MIN_WORK_WINDOW);
        }
        // One in five proposals breaks or meets a bound exactly.
        if rng.random_bool(0.2) {
            match rng.random_range(0..9) {
                0 => p.deadline = now + model::MIN_WORK_WINDOW + rng.random_range(0..=1),
                1 => p.deadline = now + model::MAX_DURATION + rng.random_range(0..=CLOCK_SLACK),
                2 => p.accept_by = p.deadline - model::MIN_WORK_WINDOW + rng.random_range(0..=1),
                3 => p.review_period = model::MAX_REVIEW_PERIOD + rng.random_range(0..=1),
                4 => p.spec_uri_len = model::MAX_SPEC_URI + rng.random_range(0..=1),
                5 => p.counterparty = Some(p.arbitrator),
                6 => p.review_period = model::MIN_REVIEW_PERIOD - rng.random_range(0..=1),
                7 => p.threshold = model::MIN_THRESHOLD - rng.random_range(0..=1),
                _ => p.payment = U256::from(rng.random_range(9u64..=11)),
            }
        }
        let terms = AgentPact::Terms {
            initiator: initiator.code(),
            specHash: hash(rng.random()),
            specUri: "u".repeat(p.spec_uri_len),
            deadline: p.deadline,
            acceptBy: p.accept_by,
            reviewPeriod: p.review_period,
            threshold: p.threshold,
            arbitrator: p.arbitrator,
            counterparty: p.counterparty.unwrap_or_default(),
            currency: p.currency,
            payment: p.payment,
            oracles: p.oracles.clone(),
            weights: p.weights.clone(),
        };
        let stake = p.payment / U256::from(10u8);
        let deposit = match initiator {
            Initiator::Buyer => p.payment + stake,
            Initiator::Seller => stake,
        };
        let value = self.m.allow(p.currency, creator, deposit).await?;
        match send(self.m.chain.pact.createPact(terms).from(creator).value(value)).await {
            Ok(_) => {
                let at = self.m.chain.now().await?;
                assert!(
                    p.allowed(at) && !self.model.refuses(p.currency, deposit),
                    "terms {p:?} were taken at {at} with the token {:?}; the model refuses them",
                    self.mode
                );
                self.model.pacts.push(p.open(at));
                self.accepted += 1;
                self.reached.insert(PactStatus::Negotiating);
            }
            Err(e) => {
                let decoded = e.as_decoded_interface_error::<AgentPactErrors>();
                assert!(decoded.is_some(), "createPact failed without a custom error: {e}");
                let terms_ok = p.allowed(now) && p.allowed(now + CLOCK_SLACK);
                let token_refuses = self.model.refuses(p.currency, deposit);
                assert!(
                    !terms_ok || token_refuses,
                    "terms {p:?} were refused ({decoded:?}); the model takes them"
                );
                self.refusals += 1;
                self.token_refusals += usize::from(terms_ok);
            }
        }
        Ok(())
    }

    /// Sets the clock to exactly the last second a live pact's current window allows, or the
    /// first one it refuses, and has a random caller try a random action then; or, a third of the
    /// time while the status has a window, to the last second an offer may live (an hour before
    /// the window's end) or the next, and tries a settlement step.
    async fn late_call(&mut self) -> Result {
        let now = self.m.chain.now().await?;
        let id = self.pick_pact();
        let later = u64::from(self.rng.random_bool(0.5));
        let (at, action) = match self.model.pacts[id].latest_expiry() {
            Some(latest) if self.rng.random_bool(0.33) => (latest + later, self.settlement_action(id)),
            _ => {
                let Some(opens) = self.model.pacts[id].exit_opens_at() else { return Ok(()) };
                (opens + later - 1, self.random_action(id))
            }
        };
        if at <= now {
            return Ok(());
        }
        let caller = self.caller_for(id, action);
        // An accept's allowance is approved first: its transaction must not take the set second.
        let value = self.deposit_for(id, action, caller).await?;
        self.m.chain.at(at).await?;
        self.act_at(id, action, caller, value, Some(at)).await?;
        if self.m.chain.now().await? < at {
            // Refused: mine the set second away so the clock stays where the model thinks it is.
            self.m.chain.mine().await?;
        }
        Ok(())
    }

    /// A verdict and an acceptance right behind it: on a pact being verified or disputed, with an
    /// offer standing (a party makes one first when none stands, and sometimes anew), a verdict
    /// giver (mostly the right one: an oracle that has not scored, the arbitrator) scores, voids
    /// the offers or rules, then the other party tries to take the offer. Without a pact being
    /// verified or disputed, a party of one at work raises a dispute.
    async fn verdict_race(&mut self) -> Result {
        // Among those whose window still takes offers.
        let now = self.m.chain.now().await? + 1;
        let judged: Vec<usize> = (0..self.model.pacts.len())
            .filter(|i| {
                let p = &self.model.pacts[*i];
                matches!(p.status, PactStatus::PendingVerify | PactStatus::Disputed)
                    && p.latest_expiry().is_some_and(|latest| now < latest)
            })
            .collect();
        let Some(&id) = judged.choose(&mut self.rng) else {
            // None: a party of a pact still at work sends it to its arbitrator.
            let working: Vec<usize> = (0..self.model.pacts.len())
                .filter(|i| {
                    matches!(self.model.pacts[*i].status, PactStatus::Funded | PactStatus::InProgress)
                })
                .collect();
            let Some(&id) = working.choose(&mut self.rng) else { return Ok(()) };
            let p = &self.model.pacts[id];
            let by = if self.rng.random_bool(0.5) { p.buyer } else { p.seller };
            return self.act(id, Action::RaiseDispute, by).await;
        };
        if self.model.pacts[id].offer.is_none() || self.rng.random_bool(0.2) {
            let p = &self.model.pacts[id];
            let by = if self.rng.random_bool(0.5) { p.buyer } else { p.seller };
            let share = self.rng.random_range(0..=model::FULL_SHARE);
            self.act(id, Action::Propose { share, expires_at: 0 }, by).await?;
        }
        let p = &self.model.pacts[id];
        let verdict = match p.status {
            PactStatus::PendingVerify if self.rng.random_bool(0.5) => self.shape(id, Action::Score(0)),
            PactStatus::Disputed if self.rng.random_bool(0.2) => {
                self.shape(id, Action::Resolve { share: 0, legacy: false })
            }
            _ => Action::VoidOffers,
        };
        // The right giver mostly: an oracle that has not scored, or the arbitrator.
        let p = &self.model.pacts[id];
        let silent: Vec<Address> = p.oracles.iter().filter(|o| !p.scores.contains_key(*o)).copied().collect();
        let right = match (verdict, p.status) {
            (Action::Resolve { .. }, _) | (_, PactStatus::Disputed) => Some(p.arbitrator),
            _ => silent.choose(&mut self.rng).copied(),
        };
        let giver = match right {
            Some(giver) if self.rng.random_bool(0.7) => giver,
            _ => self.caller_for(id, verdict),
        };
        self.act(id, verdict, giver).await?;
        let p = &self.model.pacts[id];
        let Some(o) = p.offer else { return Ok(()) };
        let taker = if o.by == p.buyer { p.seller } else { p.buyer };
        self.act(id, Action::AcceptOffer { round: o.round, share: o.share }, taker).await
    }

    /// Every ended pact kept the escrow's promise to the parties that did their part.
    fn check_promises(&self) {
        for (id, p) in self.model.pacts.iter().enumerate() {
            if let Some(broken) = p.broken_promise() {
                panic!("pact {id} ended {} and broke the promise: {broken}", p.status);
            }
        }
    }

    /// Every live pact has an exit that a bystander can take alone once its clocks have run out,
    /// opening within a bounded time of its creation; on a snapshot moved to that second, the
    /// contract must take it.
    async fn check_exits(&mut self) -> Result {
        let now = self.m.chain.now().await?;
        for id in 0..self.model.pacts.len() {
            let p = &self.model.pacts[id];
            let (Some(opens), Some(exit)) = (p.exit_opens_at(), self.model.timeout_exit(id)) else {
                continue;
            };
            assert!(
                opens <= p.created_at + model::LONGEST_LIFE,
                "pact {id} in {}: its exit opens at {opens}, past the longest life from {}",
                p.status,
                p.created_at
            );
            assert!(self.model.outcome(id, exit, self.m.cast.stranger, opens.max(now + 1)).is_some());
            let snapshot = self.m.chain.snapshot().await?;
            self.m.chain.at(opens.max(now + 1)).await?;
            self.m.chain.mine().await?;
            let taken = self.exit_call(id, exit).await;
            self.m.chain.restore(snapshot).await?;
            if let Err(e) = taken {
                panic!("pact {id} in {}: a bystander's {exit:?} at {opens} was refused: {e}", p.status);
            }
        }
        Ok(())
    }

    /// Simulates a bystander's exit from pact `id` (no transaction is sent).
    async fn exit_call(&self, id: usize, exit: Action) -> std::result::Result<(), alloy::contract::Error> {
        let pact = &self.m.chain.pact;
        let (pid, by) = (U256::from(id), self.m.cast.stranger);
        match exit {
            Action::Finalize => pact.finalizeVerification(pid).from(by).call().await.map(drop),
            Action::AutoApprove => pact.autoApprove(pid).from(by).call().await.map(drop),
            _ => pact.claimTimeout(pid).from(by).call().await.map(drop),
        }
    }

    /// Mostly a pact that can still move, sometimes any pact.
    fn pick_pact(&mut self) -> usize {
        let live: Vec<usize> =
            (0..self.model.pacts.len()).filter(|i| !self.model.pacts[*i].status.is_terminal()).collect();
        match live.choose(&mut self.rng) {
            Some(id) if self.rng.random_bool(0.9) => *id,
            _ => self.rng.random_range(0..self.model.pacts.len()),
        }
    }

    /// Mostly the action that fits the pact's status, sometimes any action at all.
    fn random_action(&mut self, id: usize) -> Action {
        let rng = &mut self.rng;
        let (propose, accept) =
            (Action::Propose { share: 0, expires_at: 0 }, Action::AcceptOffer { round: 0, share: 0 });
        let resolve = Action::Resolve { share: 0, legacy: false };
        let fitting: &[Action] = match self.model.pacts[id].status {
            PactStatus::Negotiating => {
                &[Action::Accept, Action::Accept, Action::Cancel, Action::ClaimTimeout]
            }
            // One settlement step in eight while the status has a window for it (an accept when an
            // offer stands), so that the lifecycle still reaches every status.
            PactStatus::Funded | PactStatus::InProgress | PactStatus::PendingVerify
                if rng.random_bool(0.125) =>
            {
                if self.model.pacts[id].offer.is_some() && rng.random_bool(0.6) {
                    &[accept]
                } else {
                    &[propose]
                }
            }
            PactStatus::Funded => &[Action::Start, Action::Start, Action::RaiseDispute, Action::ClaimTimeout],
            PactStatus::InProgress => {
                &[Action::Submit, Action::Submit, Action::RaiseDispute, Action::ClaimTimeout]
            }
            PactStatus::PendingVerify => &[
                Action::Score(0),
                Action::Score(0),
                Action::Finalize,
                Action::RaiseDispute,
                Action::VoidOffers,
            ],
            PactStatus::PendingApproval => &[Action::Approve, Action::Reject, Action::AutoApprove],
            PactStatus::Disputed => &[
                resolve,
                resolve,
                Action::ClaimTimeout,
                propose,
                accept,
                Action::WithdrawOffer,
                Action::VoidOffers,
            ],
            PactStatus::Completed | PactStatus::Refunded | PactStatus::Split => &[],
        };
        let any = [
            Action::Accept,
            Action::Cancel,
            Action::Start,
            Action::Submit,
            Action::Score(0),
            Action::Finalize,
            Action::Approve,
            Action::Reject,
            Action::AutoApprove,
            Action::RaiseDispute,
            resolve,
            Action::ClaimTimeout,
            propose,
            accept,
            Action::WithdrawOffer,
            Action::VoidOffers,
        ];
        let pick = if fitting.is_empty() || rng.random_bool(0.15) { &any[..] } else { fitting };
        let action = pick.choose(rng).copied().unwrap_or(Action::ClaimTimeout);
        self.shape(id, action)
    }

    /// A settlement step on pact `id`: accepting the standing offer mostly, when one stands, else
    /// an offer.
    fn settlement_action(&mut self, id: usize) -> Action {
        let action = if self.model.pacts[id].offer.is_some() && self.rng.random_bool(0.6) {
            Action::AcceptOffer { round: 0, share: 0 }
        } else {
            Action::Propose { share: 0, expires_at: 0 }
        };
        self.shape(id, action)
    }

    /// `action` with random arguments where it takes any.
    fn shape(&mut self, id: usize, action: Action) -> Action {
        let rng = &mut self.rng;
        let p = &self.model.pacts[id];
        match action {
            // Mostly scores that pass the usual marks, so that verification passes often enough.
            Action::Score(_) => Action::Score(if rng.random_bool(0.7) {
                rng.random_range(50..=100)
            } else {
                rng.random_range(0..=100)
            }),
            Action::Resolve { .. } => {
                Action::Resolve { share: random_share(rng), legacy: rng.random_bool(0.5) }
            }
            Action::Propose { .. } => {
                // 0 (the latest allowed), the latest allowed second (an hour before the window's
                // end), a second past it, the window's last second, or earlier (sometimes already
                // past).
                let end = p.window_end().unwrap_or(p.deadline);
                let latest = end - model::VERDICT_MARGIN;
                let expires_at = match rng.random_range(0..6) {
                    0 => 0,
                    1 => latest,
                    2 => latest + 1,
                    3 => end,
                    _ => end.saturating_sub(rng.random_range(0..2 * DAY)),
                };
                Action::Propose { share: random_share(rng), expires_at }
            }
            Action::AcceptOffer { .. } => match p.offer {
                // Mostly the standing offer; sometimes the one it replaced, or another share.
                Some(o) => match rng.random_range(0..10) {
                    0 => Action::AcceptOffer { round: o.round.saturating_sub(1), share: o.share },
                    1 => Action::AcceptOffer { round: o.round, share: o.share ^ 1 },
                    _ => Action::AcceptOffer { round: o.round, share: o.share },
                },
                None => Action::AcceptOffer { round: p.rounds, share: random_share(rng) },
            },
            other => other,
        }
    }

    /// Mostly the actor the action is meant for, sometimes anyone.
    fn caller_for(&mut self, id: usize, action: Action) -> Address {
        let p = &self.model.pacts[id];
        let rng = &mut self.rng;
        let anyone = *self.actors.everyone.choose(rng).unwrap_or(&p.creator);
        if rng.random_bool(0.2) {
            return anyone;
        }
        let party = if rng.random_bool(0.5) { p.buyer } else { p.seller };
        match action {
            Action::Accept if p.creator == self.actors.owner && rng.random_bool(0.5) => self.actors.puppet,
            Action::Accept if p.counterparty.is_some() && rng.random_bool(0.6) => {
                p.counterparty.unwrap_or(anyone)
            }
            Action::Accept => *self
                .actors
                .parties
                .iter()
                .filter(|a| **a != p.creator)
                .collect::<Vec<_>>()
                .choose(rng)
                .copied()
                .unwrap_or(&anyone),
            Action::Cancel => p.creator,
            Action::Start | Action::Submit => p.seller,
            Action::Score(_) => *p.oracles.choose(rng).unwrap_or(&anyone),
            Action::Approve | Action::Reject => p.buyer,
            Action::RaiseDispute | Action::Propose { .. } => party,
            // The other party mostly; sometimes the offer's own maker.
            Action::AcceptOffer { .. } => match p.offer {
                Some(o) if rng.random_bool(0.8) => {
                    if o.by == p.buyer {
                        p.seller
                    } else {
                        p.buyer
                    }
                }
                Some(o) => o.by,
                None => party,
            },
            Action::WithdrawOffer => p.offer.map_or(party, |o| o.by),
            Action::Resolve { .. } => p.arbitrator,
            // The verdict givers mostly (an oracle that may have scored already, the arbitrator
            // whatever the status), sometimes a party.
            Action::VoidOffers => match rng.random_range(0..5) {
                0 | 1 => *p.oracles.choose(rng).unwrap_or(&anyone),
                2 | 3 => p.arbitrator,
                _ => party,
            },
            Action::Finalize | Action::AutoApprove | Action::ClaimTimeout => anyone,
        }
    }

    /// Makes the call, then holds the contract to the model: accepted exactly when the model
    /// allows it, in the model's status; refused with a decodable custom error otherwise.
    async fn act(&mut self, id: usize, action: Action, caller: Address) -> Result {
        let value = self.deposit_for(id, action, caller).await?;
        self.act_at(id, action, caller, value, None).await
    }

    /// What `action` by `caller` sends along: an accept's deposit as value for ETH, or, for a
    /// token, nothing once the exact allowance is approved.
    async fn deposit_for(
        &self,
        id: usize,
        action: Action,
        caller: Address,
    ) -> std::result::Result<U256, HarnessError> {
        let p = &self.model.pacts[id];
        match action {
            Action::Accept => self.m.allow(p.currency, caller, p.accepter_deposit()).await,
            _ => Ok(U256::ZERO),
        }
    }

    /// [`Run::act`] sending `value`, with the next block's time set to `exact` beforehand, when
    /// given: then a refusal is checked at that very second.
    async fn act_at(
        &mut self,
        id: usize,
        action: Action,
        caller: Address,
        value: U256,
        exact: Option<u64>,
    ) -> Result {
        let before = self.m.chain.now().await?;
        let result = self.send(id, action, caller, value).await;
        let p = &self.model.pacts[id];
        match result {
            Ok(mined) => {
                // The time the call ran at is its block's, not the latest block's read afterwards
                // (which may be a later one).
                let block = mined.receipt.block_number.ok_or_else(|| {
                    HarnessError::Process(format!("{action:?} on pact {id}: the receipt names no block"))
                })?;
                let header = self.m.chain.provider.get_block_by_number(block.into()).await?;
                let now = header
                    .map(|b| b.header.timestamp)
                    .ok_or_else(|| HarnessError::Process(format!("block {block} vanished")))?;
                let expected = self.model.outcome(id, action, caller, now);
                assert!(
                    expected.is_some(),
                    "pact {id} in {}: {action:?} by {caller} was accepted at {now}; the model forbids it: {p:?}",
                    p.status
                );
                self.model.apply(id, action, caller, now);
                self.reached.insert(self.model.pacts[id].status);
                self.accepted += 1;
                self.voids += usize::from(action == Action::VoidOffers);
            }
            Err(e) => {
                let decoded = e.as_decoded_interface_error::<AgentPactErrors>();
                assert!(decoded.is_some(), "{action:?} on pact {id} failed without a custom error: {e}");
                // The node simulated the call at a time between the latest block and a little after
                // it (its clock runs on); every time rule is a single bound, so the model must
                // forbid the call at one end of that window.
                let allowed = match exact {
                    Some(at) => self.model.outcome(id, action, caller, at).is_some(),
                    None => {
                        self.model.outcome(id, action, caller, before).is_some()
                            && self.model.outcome(id, action, caller, before + CLOCK_SLACK).is_some()
                    }
                };
                assert!(
                    !allowed,
                    "pact {id} in {}: {action:?} by {caller} was refused ({decoded:?}); the model allows it",
                    p.status
                );
                self.refusals += 1;
                self.voided_accepts += usize::from(matches!(decoded, Some(AgentPactErrors::OfferVoided(_))));
            }
        }
        let on_chain = self.m.status(U256::from(id)).await?;
        assert_eq!(on_chain, self.model.pacts[id].status, "pact {id} after {action:?}");
        let ending = self.m.chain.pact.getLedger(U256::from(id)).call().await?.ending;
        assert_eq!(ending, self.model.pacts[id].ending.code(), "pact {id}'s ending after {action:?}");
        Ok(())
    }

    /// Sends `action`; `value` is the ETH an accept sends along (zero for a token pact).
    async fn send(
        &self,
        id: usize,
        action: Action,
        caller: Address,
        value: U256,
    ) -> std::result::Result<Mined, alloy::contract::Error> {
        let pact = &self.m.chain.pact;
        let p = &self.model.pacts[id];
        let pid = U256::from(id);
        match action {
            Action::Accept => send(pact.acceptPact(pid).from(caller).value(value)).await,
            Action::Cancel => send(pact.cancelPact(pid).from(caller)).await,
            Action::Start => send(pact.startWork(pid).from(caller)).await,
            Action::Submit => send(pact.submitWork(pid, hash(id as u64)).from(caller)).await,
            Action::Score(s) => send(pact.submitVerification(pid, s, hash(s.into())).from(caller)).await,
            Action::Finalize => send(pact.finalizeVerification(pid).from(caller)).await,
            Action::Approve => send(pact.approveWork(pid).from(caller)).await,
            Action::Reject => send(pact.rejectWork(pid).from(caller)).await,
            Action::AutoApprove => send(pact.autoApprove(pid).from(caller)).await,
            Action::RaiseDispute => send(pact.raiseDispute(pid, p.arbitrator).from(caller)).await,
            Action::Resolve { share, legacy: true } if share == 0 || share == model::FULL_SHARE => {
                send(pact.resolveDispute(pid, share == model::FULL_SHARE).from(caller)).await
            }
            Action::Resolve { share, .. } => send(pact.resolveDisputeShare(pid, share).from(caller)).await,
            Action::ClaimTimeout => send(pact.claimTimeout(pid).from(caller)).await,
            Action::Propose { share, expires_at } => {
                send(pact.proposeSettlement(pid, share, expires_at).from(caller)).await
            }
            Action::AcceptOffer { round, share } => {
                send(pact.acceptSettlement(pid, round, share).from(caller)).await
            }
            Action::WithdrawOffer => send(pact.withdrawSettlement(pid).from(caller)).await,
            Action::VoidOffers => send(pact.voidOffers(pid).from(caller)).await,
        }
    }

    async fn withdraw(&mut self) -> Result {
        let who = *self.actors.everyone.choose(&mut self.rng).unwrap_or(&self.m.cast.buyer);
        let currency = *self.m.chain.currencies().choose(&mut self.rng).unwrap_or(&Address::ZERO);
        let owed = self.model.credit(currency, who);
        if owed.is_zero() {
            let refused = send(self.m.chain.pact.withdraw(currency).from(who)).await;
            let decoded = refused.err().and_then(|e| e.as_decoded_interface_error::<AgentPactErrors>());
            assert_eq!(decoded, Some(AgentPactErrors::NothingToWithdraw(AgentPact::NothingToWithdraw {})));
        } else if currency != *self.hostile.address()
            || matches!(self.mode, TokenMode::Normal | TokenMode::Silent | TokenMode::Reenter)
        {
            assert_eq!(self.m.withdraw_in(currency, who).await?, owed);
            self.model.credits.insert((currency, who), U256::ZERO);
        } else if self.mode == TokenMode::False {
            let refused = send(self.m.chain.pact.withdraw(currency).from(who)).await;
            let decoded = refused.err().and_then(|e| e.as_decoded_interface_error::<AgentPactErrors>());
            let failed = AgentPact::TokenTransferFailed { token: currency };
            assert_eq!(decoded, Some(AgentPactErrors::TokenTransferFailed(failed)), "the credit must stay");
        } else {
            // The token keeps 1% on the way out: the escrow is debited the whole credit, which is
            // what the books must show; the owner receives what the token lets through.
            let before = self.m.chain.holding(currency, who).await?;
            send(self.m.chain.pact.withdraw(currency).from(who)).await?;
            let received = self.m.chain.holding(currency, who).await? - before;
            assert_eq!(received, owed - owed / U256::from(100u8));
            self.model.credits.insert((currency, who), U256::ZERO);
        }
        Ok(())
    }

    /// The hostile token's minter switches it to `mode`; in REENTER it tries to withdraw from the
    /// escrow from inside every transfer.
    async fn set_token_mode(&mut self, mode: TokenMode) -> Result {
        let token = *self.hostile.address();
        let reentry = AgentPact::withdrawCall { currency: token }.abi_encode();
        send(self.hostile.configure(mode as u8, self.m.chain.deployment.agent_pact, reentry.into())).await?;
        self.mode = mode;
        self.model.refusing.clear();
        match mode {
            TokenMode::False => self.model.refusing.insert(token, U256::ZERO),
            TokenMode::Fee => self.model.refusing.insert(token, U256::from(100u8)),
            TokenMode::Normal | TokenMode::Silent | TokenMode::Reenter => None,
        };
        Ok(())
    }

    /// For each currency, the escrow holds exactly what is locked plus what is owed (and its own
    /// book of what it owes says the same), and owes each actor what the model says.
    async fn check_books(&self) -> Result {
        let escrow = self.m.chain.deployment.agent_pact;
        for currency in self.m.chain.currencies() {
            let expected = self.model.expected_balance(currency);
            let held = self.m.chain.holding(currency, escrow).await?;
            assert_eq!(held, expected, "escrow holding of {currency} != locked + credits");
            assert_eq!(self.m.chain.pact.owed(currency).call().await?, expected, "owed({currency})");
            for who in &self.actors.everyone {
                let credit = self.m.credit_in(currency, *who).await?;
                assert_eq!(credit, self.model.credit(currency, *who), "credit of {who} in {currency}");
            }
        }
        Ok(())
    }

    /// Lets every clock run out, then has a bystander end every pact; then everyone withdraws and
    /// the escrow must be empty.
    async fn end_everything(&mut self) -> Result {
        self.set_token_mode(TokenMode::Normal).await?;
        let bystander = self.m.cast.stranger;
        for _round in 0..3 {
            self.m.chain.increase_time(8 * DAY).await?;
            for id in 0..self.model.pacts.len() {
                if let Some(exit) = self.model.timeout_exit(id) {
                    self.act(id, exit, bystander).await?;
                }
            }
        }
        for (id, p) in self.model.pacts.iter().enumerate() {
            assert!(p.status.is_terminal(), "pact {id} is stuck in {} after every timeout passed", p.status);
        }
        self.check_books().await?;
        for currency in self.m.chain.currencies() {
            for who in self.actors.everyone.clone() {
                if !self.model.credit(currency, who).is_zero() {
                    self.m.withdraw_in(currency, who).await?;
                    self.model.credits.insert((currency, who), U256::ZERO);
                }
            }
            let escrow = self.m.chain.deployment.agent_pact;
            assert_eq!(
                self.m.chain.holding(currency, escrow).await?,
                U256::ZERO,
                "escrow still holds {currency}"
            );
        }
        Ok(())
    }
}

/// A share in basis points: all to one side, a random split, or one past the most.
fn random_share(rng: &mut StdRng) -> u16 {
    match rng.random_range(0..8) {
        // Nothing to the seller: a cancel by agreement, as often as all of it and its bound.
        0 | 3 => 0,
        1 => model::FULL_SHARE,
        2 => model::FULL_SHARE + 1,
        _ => rng.random_range(1..model::FULL_SHARE),
    }
}

/// `count` positive weights that sum to 100.
fn random_weights(rng: &mut StdRng, count: usize) -> Vec<u8> {
    let mut weights = vec![1u8; count];
    for _ in 0..(100 - count) {
        let i = rng.random_range(0..count);
        weights[i] += 1;
    }
    weights
}
