//! Read tools. They read the index (fast, filterable); `get-pact` also reads the contract when the
//! index lags and says so.

use agentpact_api::read::{Pact, PactFilter, PactOrder, PageRequest, Reputation, RoleReputation};
use agentpact_contracts::{Initiator, PactStatus};
use alloy::primitives::{Address, U256};
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;
use serde_json::{Value, json};

use super::PactId;
use crate::{
    chain::Chain,
    input::{self, eth},
    outcome::{Answer, ToolError},
};

/// Input of `get-verification`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetVerification {
    /// The pact ID.
    pact_id: u64,
    /// Oracle address.
    oracle: String,
}

/// Input of `list-pacts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListPacts {
    /// Only these statuses, e.g. ["NEGOTIATING"] for open pacts.
    status: Option<Vec<String>>,
    /// Only pacts where this address is creator, buyer, seller, arbitrator or oracle ("me" for this wallet).
    party: Option<String>,
    /// Only this buyer.
    buyer: Option<String>,
    /// Only this seller.
    seller: Option<String>,
    /// Only pacts created by this side: "buyer" (requests for work) or "seller" (offers).
    initiator: Option<String>,
    /// Words that must appear in the spec URI.
    #[schemars(length(max = 200))]
    search: Option<String>,
    /// How many (1-100, default 20).
    #[schemars(range(min = 1, max = 100))]
    first: Option<u32>,
    /// The `nextCursor` of the previous page.
    cursor: Option<String>,
}

/// Input of `get-reputation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetReputation {
    /// The address (default: this wallet).
    address: Option<String>,
}

/// A pact's facts as the tools show them.
pub(crate) fn pact_json(p: &Pact) -> Value {
    let amounts = [("payment", p.payment), ("buyerStake", p.buyer_stake), ("sellerStake", p.seller_stake)];
    crate::money::with_amounts(pact_facts(p), &p.currency, amounts)
}

fn pact_facts(p: &Pact) -> Value {
    json!({
        "pactId": p.id.to_string(),
        "status": p.status.name(),
        "statusDescription": p.status.description(),
        "initiator": p.initiator.name(),
        "buyer": p.buyer,
        "seller": p.seller,
        "arbitrator": p.arbitrator,
        "counterparty": p.counterparty,
        "deadline": p.deadline.timestamp(),
        "acceptBy": p.accept_by.timestamp(),
        "specHash": p.spec_hash,
        "specUri": p.spec_uri,
        "threshold": p.threshold,
        "oracles": p.oracles.iter().map(|o| o.address).collect::<Vec<_>>(),
        "weights": p.oracles.iter().map(|o| o.weight).collect::<Vec<_>>(),
        "reviewPeriod": p.review_period,
        "scoreCount": p.score_count,
        "finalScore": p.final_score,
        "verifiedAt": p.verified_at.map(|t| t.timestamp()),
        "outcome": p.outcome,
    })
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

pub async fn pact(chain: &Chain, i: PactId) -> Result<Answer, ToolError> {
    let id = U256::from(i.pact_id);
    let indexed = chain.reader.pact(chain.chain_id, id).await?;
    let lag = chain.reader.indexer_status(chain.chain_id).await?.map_or(u64::MAX, |s| s.lag_blocks());
    if let Some(p) = indexed.as_ref().filter(|_| lag == 0) {
        return Ok(Answer::new(pact_line(p), pact_json(p)));
    }
    // The index lags (or has not seen the pact): the contract says where the pact stands now.
    let onchain = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    let status = PactStatus::try_from(onchain.status).map_err(|e| ToolError::Failed(e.to_string()))?;
    let mut data = indexed.as_ref().map_or_else(|| json!({ "pactId": id.to_string() }), pact_json);
    data["onChain"] = json!({
        "status": status.name(), "buyer": onchain.buyer, "seller": onchain.seller,
        "paymentBaseUnits": onchain.payment.to_string(), "currencyAddress": onchain.currency, "deadline": onchain.deadline, "acceptBy": onchain.acceptBy,
        "counterparty": onchain.counterparty, "scoreCount": onchain.scoreCount,
        "finalScore": onchain.finalScore, "verifiedAt": onchain.verifiedAt,
    });
    data["indexLagBlocks"] = json!(lag);
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
    Ok(Answer::new(text, data))
}

pub async fn verification(chain: &Chain, i: GetVerification) -> Result<Answer, ToolError> {
    let id = U256::from(i.pact_id);
    let oracle = input::address("oracle", &i.oracle)?;
    let found = chain.reader.verifications(chain.chain_id, Some(id), Some(oracle), 1).await?;
    Ok(match found.first() {
        Some(v) => Answer::new(
            format!("Oracle {oracle} scored pact #{id} {}/100 (proof {}).", v.score, v.proof),
            json!({
                "pactId": id.to_string(), "oracle": oracle, "submitted": true, "score": v.score, "proof": v.proof,
                "submittedAt": v.submitted_at.timestamp(), "block": v.block_number,
            }),
        ),
        None => Answer::new(
            format!("Oracle {oracle} has not scored pact #{id}."),
            json!({ "pactId": id.to_string(), "oracle": oracle, "submitted": false }),
        ),
    })
}

pub async fn my_address(chain: &Chain, _: super::Nothing) -> Result<Answer, ToolError> {
    let balance = chain.balance().await?;
    let credits = chain.credits().await?;
    let eth_credit = credits.iter().find(|(c, _)| c.address.is_zero()).map_or(U256::ZERO, |(_, v)| *v);
    let owed: Vec<String> =
        credits.iter().filter(|(_, v)| !v.is_zero()).map(|(c, v)| crate::money::show(*v, c)).collect();
    let owed_text =
        if owed.is_empty() { "no credit".to_owned() } else { format!("{} credit", owed.join(" and ")) };
    let per_currency: Vec<Value> = credits
        .iter()
        .map(|(c, v)| json!({ "currency": c.symbol, "currencyAddress": c.address, "credit": input::shown(*v, c.decimals) }))
        .collect();
    Ok(Answer::new(
        format!(
            "{} holds {} ETH, plus {owed_text} in AgentPact (withdraw to collect).",
            chain.me,
            eth(balance),
        ),
        json!({
            "address": chain.me, "balanceEth": eth(balance), "creditEth": eth(eth_credit), "credits": per_currency,
            "chainId": chain.chain_id,
        }),
    ))
}

pub async fn pact_count(chain: &Chain, _: super::Nothing) -> Result<Answer, ToolError> {
    let count = chain.pact.pactCount().call().await.map_err(|e| super::pact::read_failed(e, U256::ZERO))?;
    Ok(Answer::new(
        format!("{count} pacts have been created (ids 0 to {}).", count.saturating_sub(U256::from(1))),
        json!({ "count": count.to_string() }),
    ))
}

pub async fn list(chain: &Chain, i: ListPacts) -> Result<Answer, ToolError> {
    let account = |field: &str, v: &Option<String>| -> Result<Option<Address>, ToolError> {
        match v.as_deref() {
            None => Ok(None),
            Some("me") => Ok(Some(chain.me)),
            Some(a) => Ok(Some(input::address(field, a)?)),
        }
    };
    let statuses = i
        .status
        .unwrap_or_default()
        .iter()
        .map(|s| {
            PactStatus::ALL.into_iter().find(|st| st.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
                ToolError::Invalid(format!(
                    "status {s:?} is not one of {}",
                    PactStatus::ALL.map(PactStatus::name).join(", ")
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
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
    Ok(Answer::new(
        text,
        json!({ "pacts": found.items.iter().map(|(_, p)| pact_json(p)).collect::<Vec<_>>(), "nextCursor": next }),
    ))
}

pub async fn reputation(chain: &Chain, i: GetReputation) -> Result<Answer, ToolError> {
    let address = match i.address.as_deref() {
        None | Some("me") => chain.me,
        Some(a) => input::address("address", a)?,
    };
    let r = chain.reader.reputation(chain.chain_id, address).await?;
    let overall = r.overall();
    let (feedback, mean) = r.feedback();
    let rating = mean.map_or_else(String::new, |m| format!(", rated {m:.1}/5 by its counterparties"));
    Ok(Answer::new(
        format!(
            "{address}: score {:.2}/5 over {} rated pacts and {} feedback ratings{rating}. As seller {} pacts ({} completed), as buyer {} ({} completed), as oracle {} scored.",
            overall.value,
            overall.rated,
            feedback,
            r.as_seller.pacts,
            r.as_seller.completed,
            r.as_buyer.pacts,
            r.as_buyer.completed,
            r.as_oracle.pacts
        ),
        reputation_json(&r),
    ))
}

/// A reputation's facts as the tools and resources show them.
pub(crate) fn reputation_json(r: &Reputation) -> Value {
    let overall = r.overall();
    let (count, mean) = r.feedback();
    let role = |x: &RoleReputation| {
        json!({
            "pacts": x.pacts, "completed": x.completed, "refunded": x.refunded, "disputed": x.disputed,
            "timedOut": x.timed_out, "volumeEth": eth(x.volume), "meanScore": x.mean_score, "agreement": x.agreement,
            "disputeRate": x.dispute_rate(), "timeoutRate": x.timeout_rate(),
            "feedback": { "count": x.feedback_count, "raters": x.feedback_raters, "meanRating": x.feedback_mean },
            "score": x.score().value,
        })
    };
    json!({
        "address": r.address, "score": overall.value, "rated": overall.rated, "raters": overall.raters,
        "weight": overall.weight,
        "feedback": { "count": count, "meanRating": mean },
        "asSeller": role(&r.as_seller), "asBuyer": role(&r.as_buyer), "asOracle": role(&r.as_oracle),
    })
}
