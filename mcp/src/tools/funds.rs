//! Collecting credits, in every currency the escrow holds some for this wallet.

use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use super::index_note;
use crate::{
    chain::Chain,
    money::show,
    outcome::{Answer, ToolError},
    views::{InCurrency, decimal},
};

/// What `withdraw` answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Withdrawn {
    /// One withdrawal per currency this wallet had credit in.
    withdrawn: Vec<Withdrawal>,
    /// Where the money went: this wallet.
    #[schemars(with = "String")]
    to: alloy::primitives::Address,
}

/// One currency's withdrawal.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Withdrawal {
    /// The currency.
    #[serde(flatten)]
    money: InCurrency,
    /// How much, in the currency.
    amount: String,
    /// The transaction.
    #[schemars(with = "String")]
    tx_hash: alloy::primitives::B256,
}

pub async fn withdraw(chain: &Chain, _: super::Nothing) -> Result<Answer<Withdrawn>, ToolError> {
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
        withdrawn.push(Withdrawal {
            money: InCurrency::of(&currency),
            amount: decimal(credit, &currency),
            tx_hash: mined.receipt.transaction_hash,
        });
    }
    if withdrawn.is_empty() {
        // Nothing anywhere: the escrow's own refusal (NothingToWithdraw) says so; nothing is sent.
        chain.write(chain.pact.withdraw(alloy::primitives::Address::ZERO), U256::ZERO).await?;
    }
    Answer::new(
        format!("Withdrew {} to {}.{}", sentences.join(" and "), chain.me, index_note(indexed)),
        Withdrawn { withdrawn, to: chain.me },
    )
}
