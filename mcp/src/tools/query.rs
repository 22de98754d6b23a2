//! Read tools. They read the index (fast, filterable); `get-pact` also reads the contract when the
//! index lags and says so.

use agentpact_contracts::{Initiator, PactStatus};
use agentpact_read::{AgentRef, Pact, PactFilter, PactOrder, PageRequest};
use std::sync::LazyLock;

use alloy::{
    primitives::{Address, U256},
    providers::Provider,
};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::PactId;
use crate::{
    bounds::{ADDRESS_CHARS, CURSOR_CHARS, HASH_CHARS, WORD_CHARS},
    chain::Chain,
    input::{self, eth},
    outcome::{Answer, ToolError},
    views::{Erc8004View, InCurrency, PactDetails, PactView, ReputationView, decimal},
};

/// Input of `get-verification`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetVerification {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// Oracle address.
    #[schemars(length(max = ADDRESS_CHARS))]
    oracle: String,
}

/// Input of `list-pacts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListPacts {
    /// Only these statuses, e.g. ["NEGOTIATING"] for open pacts.
    #[schemars(length(max = PactStatus::ALL.len()))]
    status: Option<Vec<PactStatus>>,
    /// Only pacts where this address is creator, buyer, seller, arbitrator or oracle ("me" for this wallet).
    #[schemars(length(max = ADDRESS_CHARS))]
    party: Option<String>,
    /// Only this buyer ("me" for this wallet).
    #[schemars(length(max = ADDRESS_CHARS))]
    buyer: Option<String>,
    /// Only this seller ("me" for this wallet).
    #[schemars(length(max = ADDRESS_CHARS))]
    seller: Option<String>,
    /// Only pacts created by this side: "buyer" (requests for work) or "seller" (offers).
    #[schemars(length(max = WORD_CHARS))]
    initiator: Option<String>,
    /// Words that must appear in the spec URI.
    #[schemars(length(max = 200))]
    search: Option<String>,
    /// How many (1-100, default 20).
    #[schemars(range(min = 1, max = 100))]
    first: Option<u32>,
    /// The `nextCursor` of the previous page.
    #[schemars(length(max = CURSOR_CHARS))]
    cursor: Option<String>,
}

/// Input of `get-reputation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetReputation {
    /// The address (default: this wallet).
    #[schemars(length(max = ADDRESS_CHARS))]
    address: Option<String>,
}

fn pact_line(p: &Pact) -> String {
    format!(
        "Pact #{}: {} ({}), {}, {} by {}, deadline {}.",
        p.id,
        p.status.name(),
        p.status.description(),
        crate::money::show(p.payment, &p.currency),
        if p.initiator == Initiator::Buyer { "requested" } else { "offered" },
        p.creator,
        p.deadline.to_rfc3339()
    )
}

/// What `get-pact` answers: the pact as the index has it and, when the index lags behind the
/// chain or has not seen the pact, the contract's own view.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PactReport {
    /// The pact's id.
    pact_id: String,
    /// The pact as the index has it; each of these fields null while the index has not seen it.
    #[serde(flatten)]
    indexed: Indexed,
    /// The contract's view, given when the index lags (null otherwise).
    on_chain: Option<OnChain>,
    /// How many blocks the index is behind the chain, given with `onChain` (null otherwise).
    index_lag_blocks: Option<u64>,
    /// The latest offer to settle it, when one was made (null otherwise).
    settlement: Option<OfferView>,
}

/// A pact's indexed fields in `get-pact`'s answer, flattened into it: the pact as the index has
/// it, or, while the index has not seen it, every one of those fields present as null (a field
/// with nothing to say is null, never left out: docs/mcp.md §Outputs).
#[derive(Debug)]
struct Indexed(Option<PactDetails>);

impl Indexed {
    /// The names [`PactDetails`] answers under, read once from its own output schema.
    fn names() -> &'static [String] {
        static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
            let generator = schemars::generate::SchemaSettings::default().for_serialize().into_generator();
            let schema = generator.into_root_schema_for::<PactDetails>();
            let properties = schema.get("properties").and_then(serde_json::Value::as_object);
            properties.map(|p| p.keys().cloned().collect()).unwrap_or_default()
        });
        &NAMES
    }
}

impl Serialize for Indexed {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match &self.0 {
            Some(details) => details.serialize(serializer),
            None => {
                let names = Self::names();
                let mut map = serializer.serialize_map(Some(names.len()))?;
                for name in names {
                    map.serialize_entry(name, &None::<()>)?;
                }
                map.end()
            }
        }
    }
}

impl JsonSchema for Indexed {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IndexedPact".into()
    }

    /// [`PactDetails`]' schema with every property also allowed to be null.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = PactDetails::json_schema(generator);
        let properties = schema.get_mut("properties").and_then(serde_json::Value::as_object_mut);
        for property in properties.into_iter().flat_map(|p| p.values_mut()) {
            let given = std::mem::take(property);
            *property = serde_json::json!({ "anyOf": [given, { "type": "null" }] });
        }
        schema
    }
}

/// An offer to settle a pact, as the index has it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfferView {
    /// Its round: accept-settlement names it.
    round: u32,
    /// The party that made it.
    #[schemars(with = "String")]
    proposed_by: Address,
    /// Basis points of the payment to the seller (each stake goes back to its owner).
    seller_share: u16,
    /// Last Unix second it may be accepted.
    expires_at: i64,
    /// OPEN (the other party can accept it), ACCEPTED, WITHDRAWN, REPLACED, VOIDED (a verdict came
    /// after it) or LAPSED.
    state: &'static str,
}

/// A pact as the contract has it now.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OnChain {
    /// Its status.
    status: &'static str,
    /// The buyer (the zero address before there is one).
    #[schemars(with = "String")]
    buyer: Address,
    /// The seller (the zero address before there is one).
    #[schemars(with = "String")]
    seller: Address,
    /// The payment in base units of the currency.
    payment_base_units: String,
    /// The currency's token address (zero for ETH).
    #[schemars(with = "String")]
    currency_address: Address,
    /// Unix second by which the work must be submitted.
    deadline: u64,
    /// Last Unix second the pact may be accepted.
    accept_by: u64,
    /// The only address that may accept (zero: anyone).
    #[schemars(with = "String")]
    counterparty: Address,
    /// How many oracles have scored.
    score_count: u8,
    /// The weighted score (0 before it is finalized).
    final_score: u8,
    /// Unix second the verification was finalized (0 before).
    verified_at: u64,
}

pub async fn pact(chain: &Chain, i: PactId) -> Result<Answer<PactReport>, ToolError> {
    let id = i.pact_id.0;
    let indexed = chain.reader.pact(chain.chain_id, id).await?;
    let lag = chain.reader.indexer_status(chain.chain_id).await?.map_or(u64::MAX, |s| s.lag_blocks());
    let mut report = PactReport {
        pact_id: id.to_string(),
        indexed: Indexed(indexed.as_ref().map(PactDetails::of)),
        on_chain: None,
        index_lag_blocks: None,
        settlement: None,
    };
    if let Some(p) = &indexed {
        let offers = chain.reader.settlements(chain.chain_id, id).await?;
        if let Some(o) = offers.last() {
            // Expiry is a chain clock: the latest block's time, read only when there is an offer.
            let now = i64::try_from(chain.now().await?)
                .ok()
                .and_then(|t| chrono::DateTime::from_timestamp(t, 0))
                .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC);
            report.settlement = Some(OfferView {
                round: o.round,
                proposed_by: o.proposed_by,
                seller_share: o.seller_share,
                expires_at: o.expires_at.timestamp(),
                state: o.state(p.status, o.round, now).name(),
            });
        }
    }
    if let Some(p) = indexed.as_ref().filter(|_| lag == 0) {
        return Answer::new(pact_line(p), report);
    }
    // The index lags (or has not seen the pact): the contract says where the pact stands now.
    let onchain = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    let status =
        PactStatus::try_from(onchain.status).map_err(|source| ToolError::UnknownCode { pact: id, source })?;
    report.on_chain = Some(OnChain {
        status: status.name(),
        buyer: onchain.buyer,
        seller: onchain.seller,
        payment_base_units: onchain.payment.to_string(),
        currency_address: onchain.currency,
        deadline: onchain.deadline,
        accept_by: onchain.acceptBy,
        counterparty: onchain.counterparty,
        score_count: onchain.scoreCount,
        final_score: onchain.finalScore,
        verified_at: onchain.verifiedAt,
    });
    report.index_lag_blocks = Some(lag);
    let text = match &indexed {
        Some(p) if p.status == status => {
            format!("{} (The index is behind the chain; the contract agrees on the status.)", pact_line(p))
        }
        _ => format!(
            "Pact #{id} is {} on chain ({}); the index has not caught up yet, so other details may be older.",
            status.name(),
            status.description()
        ),
    };
    Answer::new(text, report)
}

/// What `get-verification` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationReport {
    /// The pact.
    pact_id: String,
    /// The oracle.
    #[schemars(with = "String")]
    oracle: Address,
    /// Whether it has scored.
    submitted: bool,
    /// Its score, 0-100, once submitted (null before).
    score: Option<u8>,
    /// The proof hash of its evidence (null before it scored).
    proof: Option<String>,
    /// Unix second it scored (null before).
    submitted_at: Option<i64>,
    /// The block of its score (null before it scored).
    block: Option<u64>,
}

pub async fn verification(
    chain: &Chain,
    i: GetVerification,
) -> Result<Answer<VerificationReport>, ToolError> {
    let id = i.pact_id.0;
    let oracle = input::address("oracle", &i.oracle)?;
    let found = chain.reader.verifications(chain.chain_id, Some(id), Some(oracle), 1).await?;
    let text = match found.first() {
        Some(v) => format!("Oracle {oracle} scored pact #{id} {}/100 (proof {}).", v.score, v.proof),
        None => {
            // No score: say why, as get-pact would (a pact that does not exist is PactNotFound).
            let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
            if !pact.oracles.contains(&oracle) {
                return Err(ToolError::Invalid(format!(
                    "oracle {oracle} is not one of pact #{id}'s oracles ({})",
                    pact.oracles.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
                )));
            }
            format!("Oracle {oracle} has not scored pact #{id}.")
        }
    };
    let v = found.first();
    Answer::new(
        text,
        VerificationReport {
            pact_id: id.to_string(),
            oracle,
            submitted: v.is_some(),
            score: v.map(|v| v.score),
            proof: v.map(|v| v.proof.to_string()),
            submitted_at: v.map(|v| v.submitted_at.timestamp()),
            block: v.map(|v| v.block_number),
        },
    )
}

/// What `get-my-address` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Wallet {
    /// This wallet.
    #[schemars(with = "String")]
    address: Address,
    /// Its ETH balance.
    balance_eth: String,
    /// Its balance of each token the escrow takes (ETH is `balanceEth`).
    tokens: Vec<TokenBalance>,
    /// Its ETH credit waiting in the escrow.
    credit_eth: String,
    /// Its credit in each currency the escrow takes.
    credits: Vec<Credit>,
    /// The chain.
    chain_id: u64,
}

/// What the wallet holds of one token the escrow takes.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenBalance {
    /// The token.
    #[serde(flatten)]
    money: InCurrency,
    /// Its decimals (base units per whole unit, as a power of ten).
    decimals: u8,
    /// The balance, in whole units of the token.
    balance: String,
}

/// A credit waiting in the escrow in one currency.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Credit {
    /// The currency.
    #[serde(flatten)]
    money: InCurrency,
    /// The credit, in the currency.
    credit: String,
}

pub async fn my_address(chain: &Chain, _: super::Nothing) -> Result<Answer<Wallet>, ToolError> {
    let balance = chain.balance().await?;
    let held = chain.token_balances().await?;
    let credits = chain.credits().await?;
    let eth_credit = credits.iter().find(|(c, _)| c.address.is_zero()).map_or(U256::ZERO, |(_, v)| *v);
    let owed: Vec<String> =
        credits.iter().filter(|(_, v)| !v.is_zero()).map(|(c, v)| crate::money::show(*v, c)).collect();
    let owed_text =
        if owed.is_empty() { "no credit".to_owned() } else { format!("{} credit", owed.join(" and ")) };
    let per_currency =
        credits.iter().map(|(c, v)| Credit { money: InCurrency::of(c), credit: decimal(*v, c) }).collect();
    let holdings: Vec<String> = std::iter::once(format!("{} ETH", eth(balance)))
        .chain(held.iter().map(|(c, v)| crate::money::show(*v, c)))
        .collect();
    let tokens = held
        .iter()
        .map(|(c, v)| TokenBalance {
            money: InCurrency::of(c),
            decimals: c.decimals,
            balance: decimal(*v, c),
        })
        .collect();
    Answer::new(
        format!(
            "{} holds {}, plus {owed_text} in AgentPact (withdraw to collect).",
            chain.me,
            holdings.join(" and "),
        ),
        Wallet {
            address: chain.me,
            balance_eth: eth(balance),
            tokens,
            credit_eth: eth(eth_credit),
            credits: per_currency,
            chain_id: chain.chain_id,
        },
    )
}

/// What `get-pact-count` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PactCount {
    /// How many pacts exist (ids 0 to count - 1).
    count: String,
}

pub async fn pact_count(chain: &Chain, _: super::Nothing) -> Result<Answer<PactCount>, ToolError> {
    let count = chain.pact.pactCount().call().await.map_err(|e| super::pact::read_failed(e, U256::ZERO))?;
    Answer::new(
        format!("{count} pacts have been created (ids 0 to {}).", count.saturating_sub(U256::from(1))),
        PactCount { count: count.to_string() },
    )
}

/// What `list-pacts` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PactPage {
    /// The pacts, newest first.
    pacts: Vec<PactView>,
    /// Pass as `cursor` for the next page; null on the last.
    next_cursor: Option<String>,
}

pub async fn list(chain: &Chain, i: ListPacts) -> Result<Answer<PactPage>, ToolError> {
    let account = |field: &str, v: &Option<String>| -> Result<Option<Address>, ToolError> {
        match v.as_deref() {
            None => Ok(None),
            Some("me") => Ok(Some(chain.me)),
            Some(a) => Ok(Some(input::address(field, a)?)),
        }
    };
    let statuses = i.status.unwrap_or_default();
    let initiator = match i.initiator.as_deref() {
        None => None,
        Some("buyer") => Some(Initiator::Buyer),
        Some("seller") => Some(Initiator::Seller),
        Some(other) => {
            return Err(ToolError::Invalid(format!("initiator is \"buyer\" or \"seller\", not {other:?}")));
        }
    };
    let filter = PactFilter {
        statuses,
        buyer: account("buyer", &i.buyer)?,
        seller: account("seller", &i.seller)?,
        party: account("party", &i.party)?,
        initiator,
        search: i.search,
        ..PactFilter::default()
    };
    let page = PageRequest { first: Some(i.first.unwrap_or(20)), after: i.cursor, ..PageRequest::default() };
    let found = chain.reader.pacts(chain.chain_id, &filter, PactOrder::default(), &page).await?;
    let next = found.has_next_page.then(|| found.items.last().map(|(c, _)| c.clone())).flatten();
    let lines: Vec<String> = found.items.iter().map(|(_, p)| pact_line(p)).collect();
    let text = if lines.is_empty() {
        "No pacts match.".to_owned()
    } else {
        let more = if next.is_some() { "\nMore: pass nextCursor as cursor." } else { "" };
        format!("{}{more}", lines.join("\n"))
    };
    Answer::new(
        text,
        PactPage { pacts: found.items.iter().map(|(_, p)| PactView::of(p)).collect(), next_cursor: next },
    )
}

/// What `get-reputation` answers: the address's reputation in AgentPact, and its ERC-8004 side
/// when it has an identity there.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReputationReport {
    /// Its reputation in every role.
    #[serde(flatten)]
    reputation: ReputationView,
    /// Its ERC-8004 identity and feedback (raw and grounded), when it has one; null otherwise.
    erc8004: Option<Erc8004View>,
}

pub async fn reputation(chain: &Chain, i: GetReputation) -> Result<Answer<ReputationReport>, ToolError> {
    let address = match i.address.as_deref() {
        None | Some("me") => chain.me,
        Some(a) => input::address("address", a)?,
    };
    let r = chain.reader.reputation(chain.chain_id, address).await?;
    let overall = r.overall;
    let (feedback, mean) = r.feedback();
    let rating = mean.map_or_else(String::new, |m| format!(", rated {m:.1}/5 by its counterparties"));
    let identity = chain.reader.erc8004_agent(chain.chain_id, AgentRef::Address(address)).await?;
    let erc8004 = identity.as_ref().map_or_else(String::new, |e| {
        let raw = e.reputation.mean_value.map_or_else(String::new, |v| format!(", raw mean value {v:.1}"));
        format!(
            " ERC-8004 agent #{}: grounded score {:.2}/5 from {} of {} feedback{raw}.",
            e.agent_id, e.reputation.grounded_score, e.reputation.grounded, e.reputation.feedback
        )
    });
    Answer::new(
        format!(
            "{address}: score {:.2}/5 over {} rated pacts and {} feedback ratings{rating}. As seller {} pacts ({} completed), as buyer {} ({} completed), as oracle {} scored.{erc8004}",
            overall.value,
            overall.rated,
            feedback,
            r.as_seller.pacts,
            r.as_seller.completed,
            r.as_buyer.pacts,
            r.as_buyer.completed,
            r.as_oracle.pacts
        ),
        ReputationReport {
            reputation: ReputationView::of(&r),
            erc8004: identity.as_ref().map(Erc8004View::of),
        },
    )
}

/// Input of `get-transaction`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetTransaction {
    /// The transaction's hash, as a write's answer (or its PENDING error) gave it.
    #[schemars(length(max = HASH_CHARS))]
    tx_hash: String,
}

/// What `get-transaction` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransactionReport {
    /// The transaction.
    #[schemars(with = "String")]
    tx_hash: alloy::primitives::B256,
    /// PENDING (sent, not mined), MINED, REVERTED (mined, undone), or UNKNOWN (the node does not
    /// know it: dropped, or never sent from here).
    status: &'static str,
    /// The block it was mined in.
    block: Option<u64>,
    /// Whether the index has read that block (list-pacts and resources show its effect).
    indexed: bool,
}

pub async fn transaction(chain: &Chain, i: GetTransaction) -> Result<Answer<TransactionReport>, ToolError> {
    let tx_hash = input::hash("txHash", &i.tx_hash)?;
    let receipt = chain.provider.get_transaction_receipt(tx_hash).await.map_err(crate::chain::rpc)?;
    let (status, block, text) = match &receipt {
        Some(r) if r.status() => ("MINED", r.block_number, "was mined"),
        Some(r) => ("REVERTED", r.block_number, "was mined and reverted: it changed nothing"),
        None if chain
            .provider
            .get_transaction_by_hash(tx_hash)
            .await
            .map_err(crate::chain::rpc)?
            .is_some() =>
        {
            ("PENDING", None, "is pending: sent, not mined yet. Ask again later; do not send it again")
        }
        None => (
            "UNKNOWN",
            None,
            "is not known to the node: it was dropped or never sent. Read the pact (get-pact) before sending again",
        ),
    };
    let indexed = match block {
        Some(b) => chain.reader.indexer_status(chain.chain_id).await?.is_some_and(|s| s.indexed_block >= b),
        None => false,
    };
    let place = match (block, indexed) {
        (Some(b), true) => format!(" in block {b}, which the index has read"),
        (Some(b), false) => format!(" in block {b}; the index has not read it yet"),
        (None, _) => String::new(),
    };
    Answer::new(
        format!("Transaction {tx_hash} {text}{place}."),
        TransactionReport { tx_hash, status, block, indexed },
    )
}
