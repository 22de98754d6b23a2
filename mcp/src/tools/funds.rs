//! Collecting credits.

use alloy::primitives::{Address, U256};
use serde_json::json;

use super::index_note;
use crate::{
    chain::Chain,
    input::eth,
    outcome::{Answer, ToolError},
};

pub async fn withdraw(chain: &Chain, _: super::Nothing) -> Result<Answer, ToolError> {
    let credit = chain
        .pact
        .balances(Address::ZERO, chain.me)
        .call()
        .await
        .map_err(|e| super::pact::read_failed(e, U256::ZERO))?;
    let mined = chain.write(chain.pact.withdraw(Address::ZERO), U256::ZERO).await?;
    Ok(Answer::new(
        format!("Withdrew {} ETH to {}.{}", eth(credit), chain.me, index_note(mined.indexed)),
        json!({ "withdrawnEth": eth(credit), "to": chain.me, "txHash": mined.receipt.transaction_hash }),
    ))
}
