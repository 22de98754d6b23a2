//! `submit_feedback` (seed 000): this wallet, a party of a finished pact, rates the other party.

use agentpact_contracts::AgentRegistry;
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{
    erc8004::{self, FeedbackOutcome, GivenFeedback},
    index_note, receipt,
};
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
    /// The contract: the id of a pact that ended (COMPLETED, REFUNDED or SPLIT) this wallet was
    /// buyer or seller of, or the conversation that became it (as sign_contract answers both).
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
    /// The same rating as ERC-8004 feedback on the rated seller (value (rating − 1) × 25, tagged
    /// `pact:{id}` and `agentpact`), when given; null otherwise (`erc8004Skipped` or
    /// `erc8004Error` says why).
    erc8004: Option<GivenFeedback>,
    /// Why no ERC-8004 feedback was given: no registries known, the rated party has no ERC-8004
    /// identity, is the buyer, or the pact did not pay the seller; null when given or failed.
    erc8004_skipped: Option<String>,
    /// Why the ERC-8004 feedback failed after the AgentRegistry rating succeeded (that rating
    /// stands); null otherwise.
    erc8004_error: Option<String>,
}

pub async fn submit(chain: &Chain, i: SubmitFeedback) -> Result<Answer<Rated>, ToolError> {
    let (id, _) = super::negotiation::pact_of_contract(chain, &i.contract_id).await?;
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
    let mut text = format!("Rated {whom} {}/5 for pact #{id}.{}", i.rating, index_note(mined.indexed));
    let (mut given, mut skipped, mut failed) = (None, None, None);
    match erc8004::give_feedback(chain, id, ratee, i.rating).await {
        FeedbackOutcome::Given(feedback, sentence) => {
            text = format!("{text} {sentence}");
            given = Some(feedback);
        }
        FeedbackOutcome::Skipped(why) => {
            text = format!("{text} No ERC-8004 feedback: {why}.");
            skipped = Some(why);
        }
        FeedbackOutcome::Failed(why) => {
            text = format!(
                "{text} The ERC-8004 feedback failed: {} The AgentRegistry rating stands (it is given once per pact).",
                erc8004::closed(&why)
            );
            failed = Some(why);
        }
    }
    Answer::new(
        text,
        Rated {
            contract_id: id.to_string(),
            ratee,
            rating: i.rating,
            tags,
            tx_hash: mined.receipt.transaction_hash,
            erc8004: given,
            erc8004_skipped: skipped,
            erc8004_error: failed,
        },
    )
}
