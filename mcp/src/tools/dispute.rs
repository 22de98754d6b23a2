//! Disputes: raised by a party, resolved by the pact's arbitrator.

use agentpact_contracts::{AgentPact, PactStatus};
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{index_note, receipt};
use crate::{
    bounds::ADDRESS_CHARS,
    chain::Chain,
    input,
    money::show,
    outcome::{Answer, ToolError},
    views::{InCurrency, PactStep, decimal},
};

/// Input of `raise-dispute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RaiseDispute {
    /// The pact ID.
    pact_id: u64,
    /// Arbitrator address: must be the one the pact names.
    #[schemars(length(max = ADDRESS_CHARS))]
    arbitrator: String,
}

/// Input of `resolve-dispute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveDispute {
    /// The pact ID.
    pact_id: u64,
    /// true = seller wins (COMPLETED, seller gets payment and both stakes), false = buyer wins (REFUNDED).
    seller_wins: bool,
}

/// What `raise-dispute` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Raised {
    /// The pact (DISPUTED).
    #[serde(flatten)]
    step: PactStep,
    /// Who decides.
    #[schemars(with = "String")]
    arbitrator: alloy::primitives::Address,
}

/// What `resolve-dispute` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    /// The pact (COMPLETED when the seller won, REFUNDED when the buyer did).
    #[serde(flatten)]
    step: PactStep,
    /// seller or buyer.
    winner: &'static str,
    /// The currency of the credit.
    #[serde(flatten)]
    money: InCurrency,
    /// What the resolution credited, to both sides together.
    credited: String,
}

pub async fn raise(chain: &Chain, i: RaiseDispute) -> Result<Answer<Raised>, ToolError> {
    let id = U256::from(i.pact_id);
    let arbitrator = input::address("arbitrator", &i.arbitrator)?;
    let mined = chain.write(chain.pact.raiseDispute(id, arbitrator), U256::ZERO).await?;
    Answer::new(
        format!(
            "Pact #{id} is DISPUTED. Arbitrator {arbitrator} decides within 7 days; after that anyone may claim-timeout.{}",
            index_note(mined.indexed)
        ),
        Raised { step: PactStep::new(id, PactStatus::Disputed, mined.receipt.transaction_hash), arbitrator },
    )
}

pub async fn resolve(chain: &Chain, i: ResolveDispute) -> Result<Answer<Resolved>, ToolError> {
    let id = U256::from(i.pact_id);
    let mined = chain.write(chain.pact.resolveDispute(id, i.seller_wins), U256::ZERO).await?;
    let credited: U256 = receipt::events::<AgentPact::Payout>(&mined.receipt).iter().map(|p| p.amount).sum();
    let currency = chain.currency_at(receipt::currency(&mined.receipt)).await?;
    let (winner, status) =
        if i.seller_wins { ("seller", PactStatus::Completed) } else { ("buyer", PactStatus::Refunded) };
    let data = Resolved {
        step: PactStep::new(id, status, mined.receipt.transaction_hash),
        winner,
        money: InCurrency::of(&currency),
        credited: decimal(credited, &currency),
    };
    Answer::new(
        format!(
            "Dispute on pact #{id} resolved for the {winner}: the pact is {} and {} was credited.{}",
            status.name(),
            show(credited, &currency),
            index_note(mined.indexed)
        ),
        data,
    )
}
