//! The buyer's review: approve, reject, or let the review period lapse.

use agentpact_contracts::{AgentPact, PactStatus};
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::U256,
    providers::DynProvider,
};
use serde_json::json;

use super::{PactId, index_note, receipt};
use agentpact_api::read::Currency;

use crate::{
    chain::{Chain, Mined},
    money::{show, with_amounts},
    outcome::{Answer, ToolError},
};

pub async fn approve(chain: &Chain, i: PactId) -> Result<Answer, ToolError> {
    let id = U256::from(i.pact_id);
    let done = complete(chain, chain.pact.approveWork(id), id).await?;
    Ok(done.answer(format!(
        "Pact #{id} approved. {} released to seller, {} stake returned to you (credited: use withdraw to collect).",
        show(done.to_seller, &done.currency),
        show(done.to_buyer, &done.currency),
    )))
}

pub async fn auto_approve(chain: &Chain, i: PactId) -> Result<Answer, ToolError> {
    let id = U256::from(i.pact_id);
    let done = complete(chain, chain.pact.autoApprove(id), id).await?;
    Ok(done.answer(format!(
        "Review period expired. Pact #{id} auto-approved. Payment released to seller ({}; {} stake back to the buyer).",
        show(done.to_seller, &done.currency),
        show(done.to_buyer, &done.currency),
    )))
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
    fn answer(&self, text: String) -> Answer {
        let data = json!({
            "pactId": self.id.to_string(), "status": PactStatus::Completed.name(),
            "txHash": self.mined.receipt.transaction_hash,
        });
        let amounts = [("sellerCredited", self.to_seller), ("buyerCredited", self.to_buyer)];
        Answer::new(text + index_note(self.mined.indexed), with_amounts(data, &self.currency, amounts))
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

pub async fn reject(chain: &Chain, i: PactId) -> Result<Answer, ToolError> {
    let id = U256::from(i.pact_id);
    let mined = chain.write(chain.pact.rejectWork(id), U256::ZERO).await?;
    let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    Ok(Answer::new(
        format!(
            "Pact #{id} rejected: it is DISPUTED. Its arbitrator {} decides within 7 days.{}",
            pact.arbitrator,
            index_note(mined.indexed)
        ),
        json!({
            "pactId": id.to_string(), "status": PactStatus::Disputed.name(), "arbitrator": pact.arbitrator,
            "txHash": mined.receipt.transaction_hash,
        }),
    ))
}
