//! `submit_feedback` (seed 000): this wallet, a party of a finished pact, rates the other party.

use agentpact_contracts::AgentRegistry;
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{index_note, receipt};
use crate::{
    bounds::{CONTRACT_ID_CHARS, MAX_TAG, MAX_TAGS, MAX_URI},
    chain::Chain,
    input,
    outcome::{Answer, ToolError},
};

/// Input of `submit_feedback`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitFeedback {
    /// The contract: the id of a COMPLETED or REFUNDED pact this wallet was buyer or seller of.
    #[schemars(length(min = 1, max = CONTRACT_ID_CHARS))]
    contract_id: String,
    /// 1 (poor) to 5 (excellent).
    #[schemars(range(min = 1, max = 5))]
    rating: u8,
    /// Short labels, e.g. ["fast", "clear"] (at most 8, each up to 32 bytes).
    #[schemars(length(max = MAX_TAGS), inner(length(max = MAX_TAG)))]
    tags: Option<Vec<String>>,
    /// A short comment or a URI to a longer one (up to 256 bytes).
    #[schemars(length(max = MAX_URI))]
    comment: Option<String>,
}

/// What `submit_feedback` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rated {
    /// The pact rated.
    contract_id: String,
    /// Who was rated.
    #[schemars(with = "Option<String>")]
    ratee: Option<alloy::primitives::Address>,
    /// The rating, 1-5.
    rating: u8,
    /// The tags given.
    tags: Vec<String>,
    /// The transaction.
    #[schemars(with = "String")]
    tx_hash: alloy::primitives::B256,
}

pub async fn submit(chain: &Chain, i: SubmitFeedback) -> Result<Answer<Rated>, ToolError> {
    let id: U256 = i.contract_id.trim().trim_start_matches('#').parse().map_err(|_| {
        ToolError::Invalid(format!("contract_id must be a pact id such as \"12\", not {:?}", i.contract_id))
    })?;
    let tags: Vec<String> = i.tags.unwrap_or_default().iter().map(|t| t.trim().to_owned()).collect();
    for (n, tag) in tags.iter().enumerate() {
        input::fits(&format!("tags[{n}]"), tag, MAX_TAG)?;
    }
    let comment = i.comment.unwrap_or_default();
    input::fits("comment", &comment, MAX_URI)?;
    let mined =
        chain.write(chain.agents.submitFeedback(id, i.rating, tags.clone(), comment), U256::ZERO).await?;
    let ratee = receipt::events::<AgentRegistry::FeedbackGiven>(&mined.receipt).first().map(|e| e.to);
    let whom = ratee.map_or_else(|| "the other party".to_owned(), |a| a.to_string());
    Answer::new(
        format!("Rated {whom} {}/5 for pact #{id}.{}", i.rating, index_note(mined.indexed)),
        Rated {
            contract_id: id.to_string(),
            ratee,
            rating: i.rating,
            tags,
            tx_hash: mined.receipt.transaction_hash,
        },
    )
}
