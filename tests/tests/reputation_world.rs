//! The world of issue #53 on the real stack (docs/proposals/53-reputation.md §3; docs/api.md
//! §Reputation, "The world test", prints the figures; `--nocapture` shows the table): real
//! contracts, the test ERC-8004 registries, the indexer and its ranking from the market's anchors,
//! Postgres, and the scores as the read layer serves them.
//!
//! - **The market**: 30 agents, m00–m29, anchors m00 and m01 (the ranking's seeds), trading with
//!   each other over 30 days of chain time: 300 pacts between random pairs, 1–60 USDC (paid in
//!   ETH at 25 USDC = 0.01 ETH), mostly approved after an independent oracle's score, some
//!   auto-approved, disputes ruled either way or split, timeouts and settlements, rated 1–5★ by
//!   most buyers and some sellers. A seeded PRNG: the same world every run.
//! - **The newcomer**: 200 jobs, 10 each for 20 market clients (m02–m21), 2 USDC, 15 minutes of
//!   work each, an independent oracle scoring 90, approved, rated 5★.
//! - **The farmer**: 20 puppet client wallets; the same 0.011 ETH recycled through all of them;
//!   its own oracle scoring 100 and its own arbitrator; 5★ from each puppet.
//! - **The settlement farm**: 20 puppets, each settling at 100 % with no work.
//! - **The ERC-8004 ring**: 50 wallets giving one agent five-star ERC-8004 feedback without pacts.
//! - Each farm also sells 3 honest jobs to market clients (25 USDC, independent oracle 85, 4–5★),
//!   and each has a **twin**: an identity that does the same 3 jobs for the same clients and
//!   nothing else, the farm's "honest work alone".
//! - **gseller**, an honest seller of 5 ordinary clients, and its **griefers**: 10 cooperative
//!   cancels (settlements at 0 % the seller agreed to), 10 one-basis-point settlements, 10
//!   disputes before a silent arbitrator refunded by timeout, each rated 1★; each griefing done
//!   once by 10 fresh wallets and once by 10 trusted market clients, the world re-ranked after each.
//!
//! Asserted (issue #53, "Done means"): the newcomer scores ≥ 4.0 as seen by m09 (a market client
//! that hired it) and by a viewer with no history (the global view); every farm identity (the
//! farmer, the settlement farm, the ring's agent, each farm's best puppet) scores at most its
//! twin's score + 0.1 in both views, each puppet at most a stranger's 3.00 + 0.1; the ring's
//! trusted ERC-8004 score at most its twin's + 0.1; each griefing moves gseller by ≤ 0.1.

use std::collections::BTreeMap;

use futures::future::try_join_all;

use agentpact_read::{AgentRef, Reader, Score};
use agentpact_tests::{
    HarnessError,
    chain::ether,
    index::ranking,
    pacts::Market,
    postgres::TestDatabase,
    world::{Deal, End, Walked, World, process, usdc},
};
use alloy::primitives::{Address, U256};
use rand::{Rng, SeedableRng, rngs::StdRng};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// The world's seed.
const SEED: u64 = 53;
/// One day of chain time.
const DAY: u64 = 24 * 60 * 60;
/// The market: agents, days, pacts per day.
const MARKET: usize = 30;
const DAYS: usize = 30;
const PACTS_PER_DAY: usize = 10;
/// Puppets per farm, and the ERC-8004 ring's wallets.
const PUPPETS: usize = 20;
const RING: usize = 50;
/// Griefers per griefing.
const GRIEFERS: usize = 10;
/// The viewer: a market client that hired the newcomer.
const VIEWER: usize = 9;
/// How far a farm may score above its honest work alone, and a griefing move an honest score.
const SLACK: f64 = 0.1;
/// A stranger's score.
const STRANGER: f64 = 3.0;

/// The world's identities.
struct Cast {
    market: Vec<Address>,
    newcomer: Address,
    farmer: Farm,
    sfarm: Farm,
    ring: Farm,
    gseller: Address,
    /// 30 fresh wallets: 10 per griefing.
    griefers: Vec<Address>,
    own_oracle: Address,
    own_arbitrator: Address,
    silent_arbitrator: Address,
}

/// A farm: the identity that sells, its puppets (the ring's wallets, for the ERC-8004 ring), its
/// twin, and the market clients it sells honest work to.
struct Farm {
    agent: Address,
    puppets: Vec<Address>,
    twin: Address,
    clients: [usize; 3],
}

impl Cast {
    /// Splits fresh `wallets` into the world's identities; the farmer's oracle and arbitrator and
    /// the silent arbitrator are dev accounts (an oracle registers with a dev account's stake).
    fn of(m: &Market, wallets: &[Address]) -> Self {
        let mut next = wallets.iter().copied();
        let mut take = |n: usize| -> Vec<Address> { next.by_ref().take(n).collect() };
        let market = take(MARKET);
        let one = |v: Vec<Address>| v[0];
        let newcomer = one(take(1));
        let farmer =
            Farm { agent: one(take(1)), puppets: take(PUPPETS), twin: one(take(1)), clients: [3, 4, 5] };
        let sfarm =
            Farm { agent: one(take(1)), puppets: take(PUPPETS), twin: one(take(1)), clients: [6, 7, 8] };
        let ring =
            Farm { agent: one(take(1)), puppets: take(RING), twin: one(take(1)), clients: [10, 11, 12] };
        let gseller = one(take(1));
        let griefers = take(3 * GRIEFERS);
        let a = &m.chain.accounts;
        Self {
            market,
            newcomer,
            farmer,
            sfarm,
            ring,
            gseller,
            griefers,
            own_oracle: a[10],
            own_arbitrator: a[11],
            silent_arbitrator: a[12],
        }
    }

    /// How many fresh wallets [`Cast::of`] takes.
    const WALLETS: usize = MARKET + 1 + 2 * (PUPPETS + 2) + (RING + 2) + 1 + 3 * GRIEFERS;
}

/// A deal at the market's terms: `oracle` at weight 100 scoring `score`, the cast's arbitrator.
fn deal(m: &Market, buyer: Address, seller: Address, oracle: Address, score: u8, value: u64) -> Deal {
    Deal {
        buyer,
        seller,
        oracles: vec![oracle],
        weights: vec![100],
        score,
        arbitrator: m.cast.arbitrator,
        payment: usdc(value),
        work: 0,
    }
}

/// One pact of the market as the PRNG drew it: the deal, how it ends and the ratings its parties
/// give (none when they do not rate).
struct Trade {
    deal: Deal,
    end: End,
    of_seller: Option<u8>,
    of_buyer: Option<u8>,
}

/// A day of the market: 10 pacts between random pairs of its agents, 1–60 USDC, an independent
/// oracle scoring 75–100; 76 % approved, 8 % auto-approved, 6 % disputes (won by the seller, by
/// the buyer, split), 5 % timeouts, 5 % settlements at 50–100 %. Most buyers rate the seller by
/// how it went, half the sellers rate the buyer.
fn day(m: &Market, c: &Cast, rng: &mut StdRng) -> Vec<Trade> {
    let oracles = &m.cast.oracles;
    (0..PACTS_PER_DAY)
        .map(|_| {
            let buyer = rng.random_range(0..MARKET);
            let seller = (buyer + rng.random_range(1..MARKET)) % MARKET;
            let value = rng.random_range(1..=60);
            let oracle = oracles[rng.random_range(0..oracles.len())];
            let score = rng.random_range(75..=100);
            let end = match rng.random::<f64>() {
                r if r < 0.76 => End::Approved,
                r if r < 0.84 => End::AutoApproved,
                r if r < 0.87 => End::Ruled(10_000),
                r if r < 0.89 => End::Ruled(0),
                r if r < 0.90 => End::Ruled(5_000),
                r if r < 0.95 => End::TimedOut,
                _ => End::Settled(rng.random_range(5_000..=10_000)),
            };
            let (good, bad) = (rng.random_range(4..=5), rng.random_range(1..=2));
            let of_seller = match end {
                End::Approved | End::AutoApproved | End::Ruled(10_000) => good,
                End::Ruled(0) | End::TimedOut | End::ArbitratorSilent => bad,
                End::Ruled(_) | End::Settled(_) => 3,
            };
            let of_buyer = if end == End::Ruled(10_000) { bad } else { good };
            Trade {
                deal: deal(m, c.market[buyer], c.market[seller], oracle, score, value),
                end,
                of_seller: rng.random_bool(0.8).then_some(of_seller),
                of_buyer: rng.random_bool(0.5).then_some(of_buyer),
            }
        })
        .collect()
}

/// The market: 300 pacts over 30 days, each day's walked at once, the clock moved a day, the
/// pacts that wait for it ended; each rated as it ended.
async fn trade(w: &World<'_>, c: &Cast, rng: &mut StdRng) -> Result {
    let days: Vec<Vec<Trade>> = (0..DAYS).map(|_| day(w.m, c, rng)).collect();
    for trades in &days {
        let walked = try_join_all(trades.iter().map(|t| async move {
            let walked = t.deal.walk(w, t.end).await?;
            if !walked.waiting() {
                rated(w, t, &walked).await?;
            }
            Ok::<_, HarnessError>(walked)
        }))
        .await?;
        w.m.chain.increase_time(DAY).await?;
        try_join_all(trades.iter().zip(&walked).filter(|(_, p)| p.waiting()).map(|(t, p)| async move {
            p.finish(w).await?;
            rated(w, t, p).await
        }))
        .await?;
    }
    Ok(())
}

/// The ratings of an ended trade.
async fn rated(w: &World<'_>, t: &Trade, walked: &Walked) -> Result {
    if let Some(stars) = t.of_seller {
        w.rate(walked.id, walked.buyer, stars).await?;
    }
    if let Some(stars) = t.of_buyer {
        w.rate(walked.id, walked.seller, stars).await?;
    }
    Ok(())
}

/// `seller` sells 3 honest jobs to `clients` (25 USDC, the independent oracle scoring 85), rated
/// 5, 4 and 5★; the pacts.
async fn honest_jobs(w: &World<'_>, c: &Cast, seller: Address, clients: [usize; 3]) -> Result<Vec<U256>> {
    try_join_all(clients.into_iter().zip([5, 4, 5]).map(|(client, stars)| async move {
        let buyer = c.market[client];
        let id = deal(w.m, buyer, seller, w.m.cast.oracles[0], 85, 25).ended(w, End::Approved).await?;
        w.rate(id, buyer, stars).await?;
        Ok::<_, HarnessError>(id)
    }))
    .await
}

/// The newcomer's 200 jobs: 10 for each of m02–m21 (the clients' jobs walked at once), 2 USDC,
/// 15 minutes of work, the independent oracle scoring 90, approved, 5★.
async fn newcomer(w: &World<'_>, c: &Cast) -> Result {
    try_join_all(c.market[2..22].iter().map(|client| async move {
        for _ in 0..10 {
            let job = Deal { work: 15 * 60, ..deal(w.m, *client, c.newcomer, w.m.cast.oracles[1], 90, 2) };
            let id = job.ended(w, End::Approved).await?;
            w.rate(id, *client, 5).await?;
        }
        Ok::<_, HarnessError>(())
    }))
    .await?;
    Ok(())
}

/// The farmer: each puppet in turn is handed the 0.011 ETH a 0.01 ETH pact deposits, buys from
/// the farmer (its own oracle scoring 100, its own arbitrator), approves at once and rates 5★;
/// the farmer withdraws what the pact paid and hands it to the next puppet.
async fn farm(w: &World<'_>, c: &Cast) -> Result {
    let f = &c.farmer;
    let payment = ether(1) / U256::from(100u8);
    for puppet in &f.puppets {
        w.pay(f.agent, *puppet, payment + payment / U256::from(10u8)).await?;
        let job = Deal {
            oracles: vec![c.own_oracle],
            arbitrator: c.own_arbitrator,
            payment,
            ..deal(w.m, *puppet, f.agent, c.own_oracle, 100, 0)
        };
        let id = job.ended(w, End::Approved).await?;
        w.withdraw(f.agent).await?;
        w.rate(id, *puppet, 5).await?;
    }
    Ok(())
}

/// The settlement farm: each puppet in turn is handed 0.011 ETH, buys a 0.01 ETH job, offers to
/// settle at 100 % with no work done, the farm accepts, the puppet rates 5★; the farm withdraws
/// and hands the money on.
async fn settlement_farm(w: &World<'_>, c: &Cast) -> Result {
    let f = &c.sfarm;
    let payment = ether(1) / U256::from(100u8);
    for puppet in &f.puppets {
        w.pay(f.agent, *puppet, payment + payment / U256::from(10u8)).await?;
        let job = Deal { payment, ..deal(w.m, *puppet, f.agent, w.m.cast.oracles[0], 100, 0) };
        let id = job.ended(w, End::Settled(10_000)).await?;
        w.withdraw(f.agent).await?;
        w.rate(id, *puppet, 5).await?;
    }
    Ok(())
}

/// The ERC-8004 ring's agent and its twin register in ERC-8004; their honest clients give
/// feedback tagged with each pact (80, 90, 80); the ring's 50 wallets give the agent 100 each
/// without any pact.
async fn ring(w: &World<'_>, c: &Cast, agent_jobs: &[U256], twin_jobs: &[U256]) -> Result {
    let r = &c.ring;
    let agent = w.register_8004(r.agent, "Ring Logos").await?;
    let twin = w.register_8004(r.twin, "Twin Logos").await?;
    for (i, client) in r.clients.iter().enumerate() {
        let value = if i == 1 { 90 } else { 80 };
        w.feedback_8004(agent, c.market[*client], value, Some(agent_jobs[i])).await?;
        w.feedback_8004(twin, c.market[*client], value, Some(twin_jobs[i])).await?;
    }
    for wallet in &r.puppets {
        w.feedback_8004(agent, *wallet, 100, None).await?;
    }
    Ok(())
}

/// One griefing of gseller: `griefers` each buy a 25 USDC job naming the silent arbitrator, end
/// it as `end` (a silent arbitrator's dispute refunded once the dispute window passed) and rate
/// it 1★.
async fn grief(w: &World<'_>, c: &Cast, griefers: &[Address], end: End) -> Result {
    let mut walked = Vec::new();
    for g in griefers {
        let job =
            Deal { arbitrator: c.silent_arbitrator, ..deal(w.m, *g, c.gseller, w.m.cast.oracles[0], 85, 25) };
        walked.push(job.walk(w, end).await?);
    }
    if end == End::ArbitratorSilent {
        w.m.chain.increase_time(w.pact().DISPUTE_PERIOD().call().await? + 1).await?;
    }
    for pact in walked {
        pact.finish(w).await?;
        w.rate(pact.id, pact.buyer, 1).await?;
    }
    Ok(())
}

/// An agent's score over all roles in the global view (the seeds' trust alone: what a viewer
/// with no history sees), as the viewer sees it, and what the global one rests on.
#[derive(Debug, Clone, Copy)]
struct Seen {
    global: Score,
    viewed: f64,
}

/// Reads the world's scores from the index.
struct Scores<'a> {
    reader: Reader,
    chain: u64,
    viewer: Address,
    m: &'a Market,
    db: &'a TestDatabase,
    seeds: Vec<Address>,
}

impl Scores<'_> {
    /// Indexes what the chain holds and ranks it from the seeds: a new generation of scores.
    async fn rank(&self) -> Result {
        ranking(&self.m.chain, self.db.pool(), self.seeds.clone()).catch_up().await?;
        Ok(())
    }

    async fn of(&self, who: Address) -> Result<Seen> {
        let global = self.reader.reputation(self.chain, who).await.map_err(process)?.overall;
        let viewed =
            self.reader.reputation_seen_by(self.chain, who, Some(self.viewer)).await.map_err(process)?;
        Ok(Seen { global, viewed: viewed.overall.value })
    }

    /// The best of `who`'s scores, view by view.
    async fn best_of(&self, who: &[Address]) -> Result<Seen> {
        let mut best = self.of(who[0]).await?;
        for w in &who[1..] {
            let s = self.of(*w).await?;
            if s.global.value > best.global.value {
                best.global = s.global;
            }
            best.viewed = best.viewed.max(s.viewed);
        }
        Ok(best)
    }

    /// The trusted ERC-8004 score of `who`'s identity (its grounded feedback, each client times its
    /// trust), and the raw mean value (0-100) of its feedback.
    async fn trusted(&self, who: Address) -> Result<(f64, f64)> {
        let agent = self.reader.erc8004_agent(self.chain, AgentRef::Address(who)).await.map_err(process)?;
        let agent = agent.ok_or_else(|| process(format!("{who} has no ERC-8004 identity in the index")))?;
        Ok((agent.reputation.trusted_score, agent.reputation.mean_value.unwrap_or_default()))
    }
}

/// `lane`, saying when it ended.
async fn timed(
    what: &str,
    started: std::time::Instant,
    lane: impl std::future::Future<Output = Result>,
) -> Result {
    let done = lane.await;
    println!("{what} built after {:?}", started.elapsed());
    done
}

/// What the test found wrong, every one of them reported together after the table.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check(&mut self, holds: bool, what: String) {
        if !holds {
            self.0.push(what);
        }
    }
}

#[tokio::test]
async fn the_worlds_honest_newcomer_earns_trust_its_farms_do_not_and_griefing_moves_nothing() -> Result {
    let started = std::time::Instant::now();
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let (w, wallets) = World::with_wallets(&m, Cast::WALLETS)?;
    let c = Cast::of(&m, &wallets);
    let bank = m.chain.accounts[19];
    w.fund(bank, &c.market, ether(2)).await?;
    let modest = ether(1) / U256::from(10u8);
    let farms = [("farmer", &c.farmer), ("settlement farm", &c.sfarm), ("ERC-8004 ring's agent", &c.ring)];
    let sellers: Vec<Address> = [c.newcomer, c.gseller]
        .into_iter()
        .chain(farms.iter().flat_map(|(_, f)| [f.agent, f.twin]))
        .collect();
    w.fund(bank, &sellers, modest).await?;
    w.fund(bank, &c.griefers, modest).await?;
    let gas = ether(1) / U256::from(100u8);
    for (_, f) in farms {
        w.fund(bank, &f.puppets, gas).await?;
    }
    m.register_oracle(c.own_oracle).await?;
    let mut rng = StdRng::seed_from_u64(SEED);
    println!("wallets funded after {:?}", started.elapsed());

    // The market, the newcomer and the rest walked at once (each sender one transaction at a time).
    let rest = async {
        let jobs = try_join_all(farms.iter().flat_map(|(_, f)| [f.agent, f.twin]).map(|seller| {
            let clients =
                farms.iter().find(|(_, f)| f.agent == seller || f.twin == seller).map(|(_, f)| f.clients);
            let (w, c) = (&w, &c);
            async move {
                Ok::<_, HarnessError>((seller, honest_jobs(w, c, seller, clients.unwrap_or_default()).await?))
            }
        }))
        .await?;
        let jobs: BTreeMap<Address, Vec<U256>> = jobs.into_iter().collect();
        let gseller = try_join_all(c.market[22..27].iter().enumerate().map(|(i, client)| {
            let (w, c, m) = (&w, &c, &m);
            async move {
                let id = deal(m, *client, c.gseller, m.cast.oracles[i % 2], 85, 25)
                    .ended(w, End::Approved)
                    .await?;
                w.rate(id, *client, if i % 2 == 0 { 5 } else { 4 }).await
            }
        }));
        tokio::try_join!(
            farm(&w, &c),
            settlement_farm(&w, &c),
            ring(&w, &c, &jobs[&c.ring.agent], &jobs[&c.ring.twin]),
            gseller
        )?;
        Ok::<_, HarnessError>(())
    };
    tokio::try_join!(
        timed("market", started, trade(&w, &c, &mut rng)),
        timed("newcomer", started, newcomer(&w, &c)),
        timed("farms, twins and gseller", started, rest)
    )?;
    println!("world built after {:?}", started.elapsed());

    let viewer = c.market[VIEWER];
    let scores = Scores {
        reader: Reader::new(db.pool().clone()),
        chain: m.chain.anvil.chain_id(),
        viewer,
        m: &m,
        db: &db,
        seeds: vec![c.market[0], c.market[1]],
    };
    scores.rank().await?;
    println!("world ranked after {:?}", started.elapsed());

    let mut failed = Failures::default();
    let mut table: Vec<(String, Seen, Option<Seen>)> = Vec::new();
    for (i, a) in c.market.iter().enumerate() {
        table.push((format!("m{i:02}"), scores.of(*a).await?, None));
    }
    let newcomer = scores.of(c.newcomer).await?;
    table.push(("newcomer".into(), newcomer, None));
    failed.check(newcomer.global.value >= 4.0, format!("the newcomer scores {:?} globally", newcomer.global));
    failed.check(
        newcomer.viewed >= 4.0,
        format!("the newcomer scores {} as seen by its client", newcomer.viewed),
    );
    for (name, f) in farms {
        let twin = scores.of(f.twin).await?;
        let kinds = [
            (name.to_owned(), scores.of(f.agent).await?),
            (format!("{name}'s puppets (max)"), scores.best_of(&f.puppets).await?),
        ];
        for (who, seen) in kinds {
            failed.check(
                seen.global.value <= twin.global.value + SLACK,
                format!("{who}: {} globally, its honest work alone {}", seen.global.value, twin.global.value),
            );
            failed.check(
                seen.viewed <= twin.viewed + SLACK,
                format!(
                    "{who}: {} as seen by m{VIEWER:02}, its honest work alone {}",
                    seen.viewed, twin.viewed
                ),
            );
            table.push((who, seen, Some(twin)));
        }
        failed.check(twin.global.value > STRANGER, format!("{name}'s honest work alone counts: {twin:?}"));
        table.push((format!("{name}'s twin"), twin, None));
    }
    for (name, f) in &farms[..2] {
        let puppets = scores.best_of(&f.puppets).await?;
        failed.check(
            puppets.global.value.max(puppets.viewed) <= STRANGER + SLACK,
            format!("a puppet scores {puppets:?}"),
        );
        // The farm is a single identity: every walk from the seeds to a puppet passes through it,
        // so its 20 puppets are raters of it (the farm did its work) trusted at exactly 0, and
        // only its 3 honest clients count.
        let farm = scores.of(f.agent).await?.global;
        failed.check(
            (farm.raters, farm.trusted_raters) == (PUPPETS as u64 + 3, 3),
            format!(
                "{name}: {} raters, {} of them trusted (20 puppets at 0 and 3 clients)",
                farm.raters, farm.trusted_raters
            ),
        );
    }
    let ((ring_trusted, ring_raw), (twin_trusted, twin_raw)) =
        (scores.trusted(c.ring.agent).await?, scores.trusted(c.ring.twin).await?);
    failed.check(
        ring_trusted <= twin_trusted + SLACK,
        format!("the ring's agent's trusted ERC-8004 score {ring_trusted}, its twin's {twin_trusted}"),
    );
    // What the ring bought: the raw mean of its 53 feedbacks, against the twin's 3.
    failed.check(
        ring_raw > twin_raw,
        format!("the ring's raw ERC-8004 mean {ring_raw}, its twin's {twin_raw}"),
    );

    // Griefing, each applied to the world as it stands, re-ranked, and gseller compared.
    let mut griefings = Vec::new();
    let fresh = c.griefers.chunks(GRIEFERS);
    let trusted = &c.market[11..11 + GRIEFERS];
    let kinds = [
        ("cooperative cancels (0 %)", End::Settled(0)),
        ("1-basis-point settlements", End::Settled(1)),
        ("silent-arbitrator refunds", End::ArbitratorSilent),
    ];
    for ((what, end), fresh) in kinds.into_iter().zip(fresh) {
        for (by, griefers) in [("10 fresh wallets", fresh), ("10 market clients", trusted)] {
            let before = scores.of(c.gseller).await?;
            grief(&w, &c, griefers, end).await?;
            scores.rank().await?;
            let after = scores.of(c.gseller).await?;
            let moved = (after.global.value - before.global.value, after.viewed - before.viewed);
            failed.check(
                moved.0.abs() <= SLACK && moved.1.abs() <= SLACK,
                format!("{what} by {by} moved gseller by {moved:?}"),
            );
            griefings.push((format!("{what} by {by}"), before, moved));
        }
    }

    println!(
        "| agent | global (seeds) | as seen by m{VIEWER:02} | honest work alone (twin) | trusted weight / trusted raters / raters |"
    );
    println!("|---|---|---|---|---|");
    for (agent, seen, twin) in &table {
        let twin = twin.map_or(String::new(), |t| format!("{:.2} / {:.2}", t.global.value, t.viewed));
        let g = seen.global;
        println!(
            "| {agent} | {:.2} | {:.2} | {twin} | {:.1} / {} / {} |",
            g.value, seen.viewed, g.weight, g.trusted_raters, g.raters
        );
    }
    println!(
        "ERC-8004, grounded and trusted: the ring's agent {ring_trusted:.2}, its twin {twin_trusted:.2} \
         (raw mean value: {ring_raw:.1}, {twin_raw:.1})"
    );
    println!("| griefing of gseller | before (global / as seen by m{VIEWER:02}) | moved |");
    println!("|---|---|---|");
    for (what, before, moved) in &griefings {
        println!(
            "| {what} | {:.2} / {:.2} | {:+.2} / {:+.2} |",
            before.global.value, before.viewed, moved.0, moved.1
        );
    }
    println!("world checked after {:?}", started.elapsed());
    assert!(failed.0.is_empty(), "{:#?}", failed.0);
    Ok(())
}
