//! The buyer's review: approve, reject, or let the review period lapse.

use agentpact_contracts::{AgentPact, PactStatus};
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::U256,
    providers::DynProvider,
};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use super::{PactId, index_note, receipt};
use agentpact_read::Currency;

use crate::{
    chain::{Chain, Mined},
    money::show,
    outcome::{Answer, ToolError},
    views::{InCurrency, PactStep, decimal},
};

/// What `approve-work` and `auto-approve` answer.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Approved {
    /// The pact (COMPLETED).
    #[serde(flatten)]
    step: PactStep,
    /// The currency of the credits.
    #[serde(flatten)]
    money: InCurrency,
    /// Credited to the seller: payment and its stake.
    seller_credited: String,
    /// Credited to the buyer: its stake back.
    buyer_credited: String,
}

/// What `reject-work` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rejected {
    /// The pact (DISPUTED).
    #[serde(flatten)]
    step: PactStep,
    /// Who decides now.
    #[schemars(with = "String")]
    arbitrator: alloy::primitives::Address,
}

pub async fn approve(chain: &Chain, i: PactId) -> Result<Answer<Approved>, ToolError> {
    let id = i.pact_id.0;
    let done = complete(chain, chain.pact.approveWork(id), id).await?;
    done.answer(format!(
        "Pact #{id} approved. {} released to seller, {} stake returned to you (credited: use withdraw to collect).",
        show(done.to_seller, &done.currency),
        show(done.to_buyer, &done.currency),
    ))
}

pub async fn auto_approve(chain: &Chain, i: PactId) -> Result<Answer<Approved>, ToolError> {
    let id = i.pact_id.0;
    let done = complete(chain, chain.pact.autoApprove(id), id).await?;
    done.answer(format!(
        "Review period expired. Pact #{id} auto-approved. Payment released to seller ({}; {} stake back to the buyer).",
        show(done.to_seller, &done.currency),
        show(done.to_buyer, &done.currency),
    ))
}

/// A pact completed by approval: what the seller and the buyer were credited.
struct Completed {
    id: U256,
    mined: Mined,
    to_seller: U256,
    to_buyer: U256,
    currency: Currency,
}

impl Completed {
    fn answer(&self, text: String) -> Result<Answer<Approved>, ToolError> {
        let data = Approved {
            step: PactStep::new(self.id, PactStatus::Completed, self.mined.receipt.transaction_hash),
            money: InCurrency::of(&self.currency),
            seller_credited: decimal(self.to_seller, &self.currency),
            buyer_credited: decimal(self.to_buyer, &self.currency),
        };
        Answer::new(text + index_note(self.mined.indexed), data)
    }
}

/// Sends an approval of pact `id` and reads what it credited to each side.
async fn complete<D: CallDecoder>(
    chain: &Chain,
    call: CallBuilder<&DynProvider, D>,
    id: U256,
) -> Result<Completed, ToolError> {
    let mined = chain.write(call, U256::ZERO).await?;
    let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    let payouts = receipt::events::<AgentPact::Payout>(&mined.receipt);
    let to = |who| payouts.iter().filter(|p| p.to == who).map(|p| p.amount).sum::<U256>();
    let (to_seller, to_buyer) = (to(pact.seller), to(pact.buyer));
    let currency = chain.currency_at(pact.currency).await?;
    Ok(Completed { id, mined, to_seller, to_buyer, currency })
}

pub async fn reject(chain: &Chain, i: PactId) -> Result<Answer<Rejected>, ToolError> {
    let id = i.pact_id.0;
    let mined = chain.write(chain.pact.rejectWork(id), U256::ZERO).await?;
    let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    Answer::new(
        format!(
            "Pact #{id} rejected: it is DISPUTED. Its arbitrator {} decides within 7 days.{}",
            pact.arbitrator,
            index_note(mined.indexed)
        ),
        Rejected {
            step: PactStep::new(id, PactStatus::Disputed, mined.receipt.transaction_hash),
            arbitrator: pact.arbitrator,
        },
    )
}
