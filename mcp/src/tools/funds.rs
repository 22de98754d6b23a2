//! Collecting credits, in every currency the escrow holds some for this wallet.

use alloy::primitives::U256;
use serde_json::json;

use super::index_note;
use crate::{
    chain::Chain,
    money::show,
    outcome::{Answer, ToolError},
};

pub async fn withdraw(chain: &Chain, _: super::Nothing) -> Result<Answer, ToolError> {
    let mut withdrawn = Vec::new();
    let mut sentences = Vec::new();
    let mut indexed = true;
    for (currency, credit) in chain.credits().await? {
        if credit.is_zero() {
            continue;
        }
        let mined = chain.write(chain.pact.withdraw(currency.address), U256::ZERO).await?;
        indexed &= mined.indexed;
        sentences.push(show(credit, &currency));
        withdrawn.push(json!({
            "currency": currency.symbol, "currencyAddress": currency.address,
            "amount": crate::input::shown(credit, currency.decimals), "txHash": mined.receipt.transaction_hash,
        }));
    }
    if withdrawn.is_empty() {
        // Nothing anywhere: the escrow's own refusal (NothingToWithdraw) says so; nothing is sent.
        chain.write(chain.pact.withdraw(alloy::primitives::Address::ZERO), U256::ZERO).await?;
    }
    Ok(Answer::new(
        format!("Withdrew {} to {}.{}", sentences.join(" and "), chain.me, index_note(indexed)),
        json!({ "withdrawn": withdrawn, "to": chain.me }),
    ))
}
