//! Creating, accepting and timing out pacts.

use agentpact_contracts::{
    AgentPact, Initiator, PactStatus,
    rules::{self, MAX_ORACLES},
};
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{PactId, index_note, receipt};
use crate::{
    bounds::{ADDRESS_CHARS, AMOUNT_CHARS, CURRENCY_CHARS},
    chain::Chain,
    input,
    money::{Spend, deposit_of, show},
    outcome::{Answer, ToolError},
    views::{InCurrency, PactStep, decimal},
};

/// Which side the creator takes.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A request for work: the creator pays.
    Buyer,
    /// An offer: the creator works.
    Seller,
}

/// Input of `create-pact` (seed 002, plus the arbitrator our contract fixes at creation).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatePact {
    /// Who is creating this pact: "buyer" (request for work) or "seller" (offer).
    role: Role,
    /// The work/service specification: an IPFS hash (e.g. "Qm…", stored as ipfs://…, its keccak256 as the spec hash) or a bytes32 hex hash.
    #[schemars(length(min = 1, max = input::MAX_SPEC))]
    spec_hash: String,
    /// Unix timestamp (seconds) by which the work must be submitted: more than an hour ahead (the
    /// seller's work window after acceptance closes) and at most 365 days ahead.
    deadline: u64,
    /// Last Unix second the counterparty may accept; at least an hour before the deadline
    /// (default: exactly an hour before it).
    accept_by: Option<u64>,
    /// The only address that may accept this pact (e.g. the agent you negotiated with); anyone may
    /// when omitted.
    #[schemars(length(max = ADDRESS_CHARS))]
    counterparty: Option<String>,
    /// Oracle addresses for verification (1 to 10, registered and active).
    #[schemars(length(min = 1, max = MAX_ORACLES), inner(length(max = ADDRESS_CHARS)))]
    oracles: Vec<String>,
    /// Weight per oracle, in the order of `oracles`; each 1-100, summing to 100.
    #[schemars(length(min = 1, max = MAX_ORACLES), inner(range(max = 100)))]
    oracle_weights: Vec<u8>,
    /// Minimum weighted score (1-100) for the work to pass; 0 is refused, as it would pass work
    /// every oracle scored 0.
    #[schemars(range(min = rules::MIN_THRESHOLD, max = rules::MAX_THRESHOLD))]
    threshold: u8,
    /// What the pact is paid in: "ETH" (the default), "USDC", or the address of a token the escrow
    /// allows (pact://config lists them).
    #[schemars(length(max = CURRENCY_CHARS))]
    currency: Option<String>,
    /// Payment in `currency`, e.g. "5" for 5 USDC. Each side stakes 10% of it.
    #[schemars(length(max = AMOUNT_CHARS))]
    payment: Option<String>,
    /// Payment in ETH, e.g. "0.5", for an ETH pact (the same as `payment` with `currency` ETH).
    #[schemars(length(max = AMOUNT_CHARS))]
    payment_eth: Option<String>,
    /// Buyer review window in seconds after verification passes: at least 3600 (an hour), at most
    /// 2592000 (30 days); 0 or omitted means 259200 (3 days).
    #[schemars(range(max = rules::MAX_REVIEW_PERIOD))]
    review_period: Option<u64>,
    /// Who settles disputes: an address that is neither party (required by the contract).
    #[schemars(length(max = ADDRESS_CHARS))]
    arbitrator: String,
    /// Where the specification can be read: a link (https, http, ipfs, ar or hire scheme) of at
    /// most 256 bytes (default: ipfs://<specHash> for an IPFS hash).
    #[schemars(length(max = rules::MAX_SPEC_URI))]
    spec_uri: Option<String>,
}

/// What `create-pact` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    /// The new pact (NEGOTIATING).
    #[serde(flatten)]
    step: PactStep,
    /// The side this wallet took: BUYER or SELLER.
    role: &'static str,
    /// The currency of the amounts.
    #[serde(flatten)]
    money: InCurrency,
    /// What this wallet deposited.
    deposited: String,
    /// The payment.
    payment: String,
    /// Each side's stake.
    stake: String,
}

pub async fn create(chain: &Chain, i: CreatePact) -> Result<Answer<Created>, ToolError> {
    let currency = chain.currency("currency", i.currency()).await?;
    let Some((field, payment)) = i.payment(&currency)? else {
        return Err(ToolError::Invalid(format!(
            "give the payment in {} as payment, e.g. \"5\"",
            currency.symbol
        )));
    };
    let stake = rules::stake(payment);
    if stake.is_zero() {
        return Err(ToolError::Invalid(format!(
            "{field} is too small: its 10% stake would be 0 base units of {}",
            currency.symbol
        )));
    }
    let terms = i.terms(&currency, payment)?;
    check_terms(chain, &terms).await?;
    let initiator = i.initiator();
    let counterparty = (!terms.counterparty.is_zero()).then_some(terms.counterparty);
    let deposit = creator_deposit(initiator, payment, stake);
    let does = match initiator {
        Initiator::Buyer => format!("request work paying {} (and stake 10%)", show(payment, &currency)),
        Initiator::Seller => format!("offer work for {} (staking 10%)", show(payment, &currency)),
    };
    let spend = Spend::paying(does, counterparty);
    let plain = chain.pact.createPact(terms.clone());
    let mined = chain
        .deposit(spend, &currency, deposit, plain, |p| chain.pact.createPactWithPermit(terms, p))
        .await?;
    let id = receipt::announced::<AgentPact::PactCreated>(&mined.receipt)?.pactId;
    let text = match initiator {
        Initiator::Buyer => format!(
            "Pact #{id} created as BUYER. Deposited: {}. Open for sellers.",
            deposit_of(payment, stake, &currency)
        ),
        Initiator::Seller => {
            format!(
                "Pact #{id} created as SELLER. Staked {}. Listing open for buyers.",
                show(stake, &currency)
            )
        }
    };
    let data = Created::new(id, initiator, &mined, &currency, deposit, payment, stake);
    Answer::new(text + index_note(mined.indexed), data)
}

/// What the creator of a pact deposits: the payment and its stake as the buyer, its stake as the
/// seller.
pub(super) fn creator_deposit(initiator: Initiator, payment: U256, stake: U256) -> U256 {
    match initiator {
        Initiator::Buyer => payment + stake,
        Initiator::Seller => stake,
    }
}

impl Created {
    /// The answer for pact `id`, created by `mined` as `initiator`.
    pub(super) fn new(
        id: U256,
        initiator: Initiator,
        mined: &crate::chain::Mined,
        currency: &agentpact_read::Currency,
        deposit: U256,
        payment: U256,
        stake: U256,
    ) -> Self {
        Self {
            step: PactStep::new(id, PactStatus::Negotiating, mined.receipt.transaction_hash),
            role: initiator.name(),
            money: InCurrency::of(currency),
            deposited: decimal(deposit, currency),
            payment: decimal(payment, currency),
            stake: decimal(stake, currency),
        }
    }
}

impl CreatePact {
    /// The currency asked for (`None`: ETH).
    pub(super) fn currency(&self) -> Option<&str> {
        self.currency.as_deref()
    }

    /// The side the creator takes.
    pub(super) fn initiator(&self) -> Initiator {
        match self.role {
            Role::Buyer => Initiator::Buyer,
            Role::Seller => Initiator::Seller,
        }
    }

    /// The payment asked for in `currency` (`payment`, or `paymentEth` for ETH), with the field
    /// that gave it; `None` when neither is given.
    pub(super) fn payment(
        &self,
        currency: &agentpact_read::Currency,
    ) -> Result<Option<(&'static str, U256)>, ToolError> {
        match (&self.payment, &self.payment_eth) {
            (Some(p), None) => {
                Ok(Some(("payment", input::units("payment", p, currency.decimals, &currency.symbol)?)))
            }
            (None, Some(p)) if currency.address.is_zero() => {
                Ok(Some(("paymentEth", input::eth_amount("paymentEth", p)?)))
            }
            (None, Some(_)) => Err(ToolError::Invalid(format!(
                "paymentEth is for ETH pacts; give the payment in {} as payment",
                currency.symbol
            ))),
            (Some(_), Some(_)) => Err(ToolError::Invalid("give payment or paymentEth, not both".into())),
            (None, None) => Ok(None),
        }
    }

    /// The contract's terms for these inputs, paying `payment` of `currency`.
    pub(super) fn terms(
        &self,
        currency: &agentpact_read::Currency,
        payment: U256,
    ) -> Result<AgentPact::Terms, ToolError> {
        let oracles = self
            .oracles
            .iter()
            .enumerate()
            .map(|(n, o)| input::address(&format!("oracles[{n}]"), o))
            .collect::<Result<Vec<_>, _>>()?;
        let arbitrator = input::address("arbitrator", &self.arbitrator)?;
        let (spec_hash, spec_uri) = input::spec(&self.spec_hash, self.spec_uri.as_deref())?;
        let counterparty =
            self.counterparty.as_deref().map(|c| input::address("counterparty", c)).transpose()?;
        Ok(AgentPact::Terms {
            initiator: self.initiator().code(),
            specHash: spec_hash,
            specUri: spec_uri,
            deadline: self.deadline,
            acceptBy: self.accept_by.unwrap_or(0),
            reviewPeriod: self.review_period.unwrap_or(0),
            threshold: self.threshold,
            arbitrator,
            counterparty: counterparty.unwrap_or_default(),
            currency: currency.address,
            payment,
            oracles,
            weights: self.oracle_weights.clone(),
        })
    }
}

/// What `accept-pact` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    /// The pact (FUNDED).
    #[serde(flatten)]
    pub(crate) step: PactStep,
    /// The side this wallet joined as: BUYER or SELLER.
    pub(crate) role: &'static str,
    /// The currency of the deposit.
    #[serde(flatten)]
    pub(crate) money: InCurrency,
    /// What this wallet deposited.
    pub(crate) deposited: String,
}

pub async fn accept(chain: &Chain, i: PactId) -> Result<Answer<Accepted>, ToolError> {
    let id = i.pact_id.0;
    let pact = chain.pact.getPact(id).call().await.map_err(|e| read_failed(e, id))?;
    let initiator =
        Initiator::try_from(pact.initiator).map_err(|source| ToolError::UnknownCode { pact: id, source })?;
    // The creator's stake as the escrow holds it, which the accepter matches: a tenth of the
    // payment, or on a pact of stages the sum of a tenth of each (which rounds differently).
    let stake = pact.buyerStake.max(pact.sellerStake);
    let (role, deposit) = match initiator {
        Initiator::Buyer => (Initiator::Seller, stake),
        Initiator::Seller => (Initiator::Buyer, pact.payment + stake),
    };
    let currency = chain.currency_at(pact.currency).await?;
    let creator = match initiator {
        Initiator::Buyer => pact.buyer,
        Initiator::Seller => pact.seller,
    };
    let spend = Spend::paying(
        format!("accept pact #{id} as {} ({} payment)", role.name(), show(pact.payment, &currency)),
        Some(creator),
    );
    let plain = chain.pact.acceptPact(id);
    let mined =
        chain.deposit(spend, &currency, deposit, plain, |p| chain.pact.acceptPactWithPermit(id, p)).await?;
    let text = match role {
        Initiator::Seller => format!("Accepted pact #{id} as SELLER. Staked {}.", show(deposit, &currency)),
        Initiator::Buyer => {
            format!("Accepted pact #{id} as BUYER. Deposited {}.", deposit_of(pact.payment, stake, &currency))
        }
    };
    let data = Accepted {
        step: PactStep::new(id, PactStatus::Funded, mined.receipt.transaction_hash),
        role: role.name(),
        money: InCurrency::of(&currency),
        deposited: decimal(deposit, &currency),
    };
    Answer::new(text + index_note(mined.indexed), data)
}

/// What `claim-timeout` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimedOut {
    /// The pact (REFUNDED).
    #[serde(flatten)]
    step: PactStep,
    /// The status it left.
    from: &'static str,
    /// The currency of the credit.
    #[serde(flatten)]
    money: InCurrency,
    /// What this wallet was credited (withdraw collects it).
    credited: String,
}

pub async fn claim_timeout(chain: &Chain, i: PactId) -> Result<Answer<TimedOut>, ToolError> {
    let id = i.pact_id.0;
    let mined = chain.write(chain.pact.claimTimeout(id), U256::ZERO).await?;
    let from = receipt::events::<AgentPact::TimeoutClaimed>(&mined.receipt)
        .first()
        .and_then(|e| PactStatus::try_from(e.from).ok())
        .map_or("its status", PactStatus::name);
    let credited = receipt::credited(&mined.receipt, chain.me);
    let currency = chain.currency_at(receipt::currency(&mined.receipt)).await?;
    let text = format!(
        "Timeout claimed: pact #{id} left {from} and is REFUNDED. Credited to you: {} (use withdraw to collect).",
        show(credited, &currency)
    );
    let data = TimedOut {
        step: PactStep::new(id, PactStatus::Refunded, mined.receipt.transaction_hash),
        from,
        money: InCurrency::of(&currency),
        credited: decimal(credited, &currency),
    };
    Answer::new(text + index_note(mined.indexed), data)
}

/// Refuses terms the contract would refuse (money, clocks, sizes, the arbitrator, the
/// counterparty, the oracles and their weights) with `rules::check_terms`'s sentence, before
/// anything is simulated: `create-pact` and `sign_contract` both come through here. The chain's
/// latest block time is the contract's `now`, and a sentence about a clock says it.
pub async fn check_terms(chain: &Chain, terms: &AgentPact::Terms) -> Result<(), ToolError> {
    check_staged(chain, terms, &[]).await
}

/// [`check_terms`] for a pact of `stages` (none: one stage), and the rules of its stages.
pub async fn check_staged(
    chain: &Chain,
    terms: &AgentPact::Terms,
    stages: &[AgentPact::StageTerms],
) -> Result<(), ToolError> {
    let now = chain.now().await?;
    rules::check_terms(terms, chain.me, now).map_err(|source| ToolError::Terms { source, now })?;
    if stages.is_empty() {
        return Ok(());
    }
    rules::check_stages(terms, stages, now).map_err(|source| ToolError::Terms { source, now })
}

/// What a failed read of pact `id` means for the agent.
pub fn read_failed(e: alloy::contract::Error, id: U256) -> ToolError {
    crate::chain::read_failed(e, || format!("pact #{id}"))
}
