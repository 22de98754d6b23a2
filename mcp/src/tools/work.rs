//! The seller's steps: start and submit.

use agentpact_contracts::PactStatus;
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{PactId, index_note};
use crate::{
    bounds::HASH_CHARS,
    chain::Chain,
    input,
    outcome::{Answer, ToolError},
    views::PactStep,
};

/// Input of `submit-work`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitWork {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// Hash of the work deliverable: 0x and 64 hex digits (bytes32), not zero.
    #[schemars(length(max = HASH_CHARS))]
    proof_hash: String,
}

/// What `submit-work` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Submitted {
    /// The pact (PENDING_VERIFY).
    #[serde(flatten)]
    step: PactStep,
    /// The deliverable's hash.
    #[schemars(with = "String")]
    proof_hash: alloy::primitives::B256,
}

pub async fn start(chain: &Chain, i: PactId) -> Result<Answer<PactStep>, ToolError> {
    let id = i.pact_id.0;
    let mined = chain.write(chain.pact.startWork(id), U256::ZERO).await?;
    Answer::new(
        format!(
            "Work started on pact #{id}: it is IN_PROGRESS. Submit before the deadline.{}",
            index_note(mined.indexed)
        ),
        PactStep::new(id, PactStatus::InProgress, mined.receipt.transaction_hash),
    )
}

pub async fn submit(chain: &Chain, i: SubmitWork) -> Result<Answer<Submitted>, ToolError> {
    let id = i.pact_id.0;
    let proof = input::hash("proofHash", &i.proof_hash)?;
    let mined = chain.write(chain.pact.submitWork(id, proof), U256::ZERO).await?;
    Answer::new(
        format!("Work submitted. Awaiting oracle verification.{}", index_note(mined.indexed)),
        Submitted {
            step: PactStep::new(id, PactStatus::PendingVerify, mined.receipt.transaction_hash),
            proof_hash: proof,
        },
    )
}
