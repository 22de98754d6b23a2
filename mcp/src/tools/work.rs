//! The seller's steps: start and submit.

use agentpact_contracts::PactStatus;
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;
use serde_json::json;

use super::{PactId, index_note};
use crate::{
    chain::Chain,
    input,
    outcome::{Answer, ToolError},
};

/// Input of `submit-work`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitWork {
    /// The pact ID.
    pact_id: u64,
    /// Hash of the work deliverable: 0x and 64 hex digits (bytes32), not zero.
    proof_hash: String,
}

pub async fn start(chain: &Chain, i: PactId) -> Result<Answer, ToolError> {
    let id = U256::from(i.pact_id);
    let mined = chain.write(chain.pact.startWork(id), U256::ZERO).await?;
    Ok(Answer::new(
        format!(
            "Work started on pact #{id}: it is IN_PROGRESS. Submit before the deadline.{}",
            index_note(mined.indexed)
        ),
        json!({ "pactId": id.to_string(), "status": PactStatus::InProgress.name(), "txHash": mined.receipt.transaction_hash }),
    ))
}

pub async fn submit(chain: &Chain, i: SubmitWork) -> Result<Answer, ToolError> {
    let id = U256::from(i.pact_id);
    let proof = input::hash("proofHash", &i.proof_hash)?;
    let mined = chain.write(chain.pact.submitWork(id, proof), U256::ZERO).await?;
    Ok(Answer::new(
        format!("Work submitted. Awaiting oracle verification.{}", index_note(mined.indexed)),
        json!({
            "pactId": id.to_string(), "status": PactStatus::PendingVerify.name(), "proofHash": proof,
            "txHash": mined.receipt.transaction_hash,
        }),
    ))
}
