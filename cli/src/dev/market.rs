//! A small market history for the dev stack, so that a newcomer to the project sees what a
//! reputation score means from the first second (docs/api.md §Reputation): the anchors the dev
//! indexer trusts (its ranking's seeds), three market clients they vouch for, an honest veteran,
//! an honest newcomer whose many small jobs count as surely as large ones, and a farm whose
//! puppets' five stars weigh nothing.
//!
//! Every pact is paid in ETH, above the one-dollar floor (0.0004 ETH) that makes a pact a whole
//! job, scored by an oracle, approved, and rated by both parties:
//!
//! | who | history | pacts |
//! |---|---|---|
//! | anchors | dev accounts 10, 11, 12: the established market, the seeds | — |
//! | market clients | three addresses, each hired two anchors once (0.01 ETH) | 6 |
//! | veteran (dev account 7) | three jobs for each anchor, one for each client; 0.02 ETH, oracle 95 | 12 |
//! | newcomer (dev account 8) | three small jobs for each anchor and each client; 0.001 ETH, oracle 95 | 18 |
//! | farm | three honest jobs for the clients (0.01 ETH, oracle 85, 4★), then five puppets hire it | 8 |
//!
//! The puppets buy one after another with the same 0.011 ETH, which the farm withdraws and hands
//! to the next; its own oracle scores each job 100 and both sides rate five stars. None of the
//! puppets is trusted by anyone the anchors trust, so the farm scores what its three honest jobs
//! give and the puppets stay near a stranger's 3.00.

use agentpact_contracts::{AgentPact, AgentRegistry, Deployment, Initiator, OracleRegistry, money, rules};
use agentpact_read::{Reader, Score};
use alloy::{
    network::TransactionBuilder,
    node_bindings::AnvilInstance,
    primitives::{Address, B256, U256, keccak256},
    providers::{DynProvider, Provider, ProviderBuilder},
    rpc::types::TransactionRequest,
};
use anyhow::{Context, bail};

use super::demo::send;

/// The dev accounts of the anchors: the dev indexer's reputation seeds.
pub const ANCHOR_ACCOUNTS: [usize; 3] = [10, 11, 12];
/// The dev account of the honest veteran.
pub const VETERAN_ACCOUNT: usize = 7;
/// The dev account of the honest newcomer.
pub const NEWCOMER_ACCOUNT: usize = 8;
/// Puppet wallets of the farm.
const PUPPETS: usize = 5;
/// Market clients.
const CLIENTS: usize = 3;

/// Who played the history, for the banner.
#[derive(Debug, Clone)]
pub struct Market {
    /// The seeds of the dev indexer's ranking.
    pub anchors: Vec<Address>,
    /// Three jobs for each anchor and one for each client.
    pub veteran: Address,
    /// Three small jobs for each anchor and each client.
    pub newcomer: Address,
    /// Three honest jobs, then five puppets.
    pub farm: Address,
    /// The farm's puppet buyers.
    pub puppets: Vec<Address>,
    /// Pacts the history made.
    pub pacts: usize,
}

/// One job of the history: who buys, who sells, for how much, scored how, rated how.
struct Job {
    buyer: Address,
    seller: Address,
    payment: U256,
    oracle: Address,
    score: u8,
    /// The buyer's rating of the seller, 1-5.
    rating: u8,
}

/// Plays the history on the dev chain at `anvil` where `deployment` runs: the anchors, veteran
/// and newcomer are anvil's dev accounts; the clients, the farm, its oracle and its puppets are
/// addresses derived from fixed words (the same on every start), funded by anvil
/// (`anvil_setBalance`) except the puppets, which only ever hold the farm's recycled ETH. Anvil
/// signs every transaction (its dev accounts, and the others impersonated): the history is
/// hundreds of transactions, and signing them here would cost a debug build seconds.
/// `oracle` must be a registered oracle among the dev accounts; `arbitrator` is named in every
/// pact.
pub async fn run(
    anvil: &AnvilInstance,
    deployment: &Deployment,
    oracle: Address,
    arbitrator: Address,
) -> anyhow::Result<Market> {
    // Fills nothing in: the node picks the nonce and the gas, and signs.
    let provider = ProviderBuilder::default().connect_http(anvil.endpoint_url()).erased();
    let derived =
        |name: String| Address::from_slice(&keccak256(format!("agentpact dev market: {name}"))[12..]);
    let clients: Vec<Address> = (0..CLIENTS).map(|i| derived(format!("client {i}"))).collect();
    let puppets: Vec<Address> = (0..PUPPETS).map(|i| derived(format!("puppet {i}"))).collect();
    let (farm, farm_oracle) = (derived("farm".into()), derived("farm oracle".into()));
    let funded = U256::from(100u8) * U256::from(10u8).pow(U256::from(18u8));
    for &who in clients.iter().chain(&puppets).chain([&farm, &farm_oracle]) {
        let _: serde_json::Value = provider.raw_request("anvil_impersonateAccount".into(), (who,)).await?;
        if !puppets.contains(&who) {
            let _: serde_json::Value = provider.raw_request("anvil_setBalance".into(), (who, funded)).await?;
        }
    }
    let dev = |n: usize| anvil.addresses().get(n).copied().context("anvil has too few dev accounts");
    let anchors = ANCHOR_ACCOUNTS.iter().map(|&n| dev(n)).collect::<anyhow::Result<Vec<_>>>()?;
    let (veteran, newcomer) = (dev(VETERAN_ACCOUNT)?, dev(NEWCOMER_ACCOUNT)?);
    let eth = |amount: &str| money::Currency::eth().parse(amount);
    let (client_job, veteran_job, small_job, farm_job) =
        (eth("0.01")?, eth("0.02")?, eth("0.001")?, eth("0.011")?);

    let mut jobs = Vec::new();
    let job = |buyer, seller, payment, score, rating| Job { buyer, seller, payment, oracle, score, rating };
    for (i, &client) in clients.iter().enumerate() {
        for anchor in [anchors[i], anchors[(i + 1) % anchors.len()]] {
            jobs.push(job(client, anchor, client_job, 90, 5));
        }
    }
    for &buyer in &anchors {
        jobs.extend((0..3).map(|_| job(buyer, veteran, veteran_job, 95, 5)));
    }
    jobs.extend(clients.iter().map(|&buyer| job(buyer, veteran, veteran_job, 95, 5)));
    for &buyer in anchors.iter().chain(&clients) {
        jobs.extend((0..3).map(|_| job(buyer, newcomer, small_job, 95, 5)));
    }
    jobs.extend(clients.iter().map(|&buyer| job(buyer, farm, client_job, 85, 4)));

    let market = Play {
        pact: AgentPact::new(deployment.agent_pact, provider.clone()),
        feedback: AgentRegistry::new(deployment.agent_registry, provider.clone()),
        provider: provider.clone(),
        arbitrator,
    };
    for job in &jobs {
        market.job(job).await?;
    }
    let registry = OracleRegistry::new(deployment.oracle_registry, provider.clone());
    let stake = registry.minStake().call().await?;
    send(registry.register(vec!["design".into()]).from(farm_oracle).value(stake)).await?;
    // Enough for the payment, the buyer's stake and its gas, handed from puppet to puppet.
    let float = farm_job + rules::stake(farm_job) + eth("0.005")?;
    for &puppet in &puppets {
        let hand_over = TransactionRequest::default().with_from(farm).with_to(puppet).with_value(float);
        provider.send_transaction(hand_over).await?.get_receipt().await?;
        market.job(&Job { oracle: farm_oracle, ..job(puppet, farm, farm_job, 100, 5) }).await?;
        send(market.pact.withdraw(Address::ZERO).from(farm)).await?;
    }
    Ok(Market { anchors, veteran, newcomer, farm, puppets, pacts: jobs.len() + PUPPETS })
}

/// Plays jobs through the escrow and the agent registry.
struct Play {
    pact: AgentPact::AgentPactInstance<DynProvider>,
    feedback: AgentRegistry::AgentRegistryInstance<DynProvider>,
    provider: DynProvider,
    arbitrator: Address,
}

impl Play {
    /// Takes `job` from its buyer's offer (for that seller only) to COMPLETED, then both parties
    /// rate each other: the buyer `job.rating`, the seller five stars.
    async fn job(&self, job: &Job) -> anyhow::Result<()> {
        let now =
            self.provider.get_block_by_number(Default::default()).await?.map_or(0, |b| b.header.timestamp);
        let terms = AgentPact::Terms {
            initiator: Initiator::Buyer.code(),
            specHash: B256::repeat_byte(0x3a),
            specUri: "ipfs://QmDevMarketJob".into(),
            deadline: now + 14 * 24 * 3600,
            acceptBy: 0,
            reviewPeriod: 0,
            threshold: 70,
            arbitrator: self.arbitrator,
            counterparty: job.seller,
            currency: Address::ZERO,
            payment: job.payment,
            oracles: vec![job.oracle],
            weights: vec![100],
        };
        rules::check_terms(&terms, job.buyer, now)?;
        let stake = rules::stake(job.payment);
        let id = self.pact.pactCount().call().await?;
        let pact = &self.pact;
        send(pact.createPact(terms).from(job.buyer).value(job.payment + stake)).await?;
        send(pact.acceptPact(id).from(job.seller).value(stake)).await?;
        send(pact.startWork(id).from(job.seller)).await?;
        send(pact.submitWork(id, keccak256(id.to_be_bytes::<32>())).from(job.seller)).await?;
        send(pact.submitVerification(id, job.score, B256::repeat_byte(0xac)).from(job.oracle)).await?;
        send(pact.finalizeVerification(id).from(job.buyer)).await?;
        send(pact.approveWork(id).from(job.buyer)).await?;
        send(self.feedback.submitFeedback(id, job.rating, vec![], String::new()).from(job.buyer)).await?;
        send(self.feedback.submitFeedback(id, 5, vec![], String::new()).from(job.seller))
            .await
            .with_context(|| format!("market pact {id}"))
    }
}

impl Market {
    /// The market's agents as the index scores them now (global view), for the banner.
    pub async fn standing(&self, reader: &Reader, chain_id: u64) -> anyhow::Result<Standing> {
        let score = |address| async move {
            Ok::<_, anyhow::Error>(reader.reputation(chain_id, address).await?.overall)
        };
        let mut puppets = Vec::with_capacity(self.puppets.len());
        for &puppet in &self.puppets {
            puppets.push((puppet, score(puppet).await?));
        }
        let best_puppet = puppets
            .into_iter()
            .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
            .context("the market has no puppets")?;
        let run = reader.reputation_run(chain_id).await?.context("the index holds no ranking run")?;
        Ok(Standing {
            anchors: self.anchors.clone(),
            pacts: self.pacts,
            block: run.block,
            veteran: (self.veteran, score(self.veteran).await?),
            newcomer: (self.newcomer, score(self.newcomer).await?),
            farm: (self.farm, score(self.farm).await?),
            puppet: best_puppet,
            puppets: self.puppets.len(),
            prior: reader.prior_score().await?,
        })
    }
}

/// The market's agents and their scores as read back from the index, printed in the banner one
/// agent a line: `  <who> <address> <score>  <what it did>`.
pub struct Standing {
    anchors: Vec<Address>,
    /// Pacts of the market history.
    pacts: usize,
    /// The block the ranking had read.
    block: u64,
    veteran: (Address, Score),
    newcomer: (Address, Score),
    farm: (Address, Score),
    /// The best-scored puppet.
    puppet: (Address, Score),
    puppets: usize,
    /// A stranger's score.
    prior: f64,
}

impl std::fmt::Display for Standing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let anchors: Vec<String> = self.anchors.iter().map(ToString::to_string).collect();
        let accounts: Vec<String> = ANCHOR_ACCOUNTS.iter().map(ToString::to_string).collect();
        writeln!(
            f,
            "Reputation (a market of {} pacts, global view ranked at block {}), trusted from the anchors,\n\
             dev accounts {} (the indexer's seeds: {}):",
            self.pacts,
            self.block,
            accounts.join(", "),
            anchors.join(", ")
        )?;
        agent(
            f,
            "veteran",
            &self.veteran,
            "dev account 7: 12 jobs of 0.02 ETH for the anchors and 3 market clients",
        )?;
        agent(f, "newcomer", &self.newcomer, "dev account 8: 18 small jobs of 0.001 ETH for the same six")?;
        agent(
            f,
            "farm",
            &self.farm,
            &format!("3 honest jobs, then {} puppets' five stars, the same 0.011 ETH recycled", self.puppets),
        )?;
        agent(f, "puppet", &self.puppet, "the best-scored puppet, trusted only by the farm")?;
        writeln!(f, "  a stranger scores {:.2}", self.prior)
    }
}

/// One agent's line of [`Standing`].
fn agent(
    f: &mut std::fmt::Formatter<'_>,
    who: &str,
    (address, score): &(Address, Score),
    what: &str,
) -> std::fmt::Result {
    writeln!(
        f,
        "  {who:<8} {address} {:.2}  {what} ({} of {} raters trusted, weight {:.1})",
        score.value, score.trusted_raters, score.raters, score.weight
    )
}

/// Waits until the indexer's ranking has read block `head` on `chain_id` (polled every 100 ms,
/// at most `limit`).
pub async fn wait_until_ranked(
    reader: &Reader,
    chain_id: u64,
    head: u64,
    limit: std::time::Duration,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    loop {
        if reader.reputation_run(chain_id).await?.is_some_and(|run| run.block >= head) {
            return Ok(());
        }
        if started.elapsed() > limit {
            bail!(
                "the indexer's reputation ranking did not reach block {head} within {limit:?}; see the log above"
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
