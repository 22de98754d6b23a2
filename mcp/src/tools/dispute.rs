//! Disputes: raised by a party, resolved by the pact's arbitrator.

use agentpact_contracts::{
    PactStatus,
    rules::{Division, FULL_SHARE},
};
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{
    index_note,
    settlement::{Credits, Divided, Verdict, percent, void_before_verdict, voided_note},
};
use crate::{
    bounds::ADDRESS_CHARS,
    chain::Chain,
    input,
    money::show,
    outcome::{Answer, ToolError},
    views::{PactStep, decimal},
};

/// Input of `raise-dispute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RaiseDispute {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// Arbitrator address: must be the one the pact names.
    #[schemars(length(max = ADDRESS_CHARS))]
    arbitrator: String,
}

/// Input of `resolve-dispute`: `sellerWins` (seed 002) or `sellerShare`, not both.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveDispute {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// true = seller wins (COMPLETED, seller gets payment and both stakes), false = buyer wins (REFUNDED).
    seller_wins: Option<bool>,
    /// Instead of a winner, the seller's share of the pot (payment and both stakes) in basis
    /// points, 0-10000 (7000 = 70%, the buyer gets the rest): SPLIT between 0 and 10000.
    #[schemars(range(max = FULL_SHARE))]
    seller_share: Option<u16>,
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
    /// The pact (COMPLETED when the seller won, REFUNDED when the buyer did, SPLIT between) and
    /// what each side was credited.
    #[serde(flatten)]
    divided: Divided,
    /// seller, buyer, or neither (a split).
    winner: &'static str,
    /// What the resolution credited, to both sides together.
    credited: String,
}

pub async fn raise(chain: &Chain, i: RaiseDispute) -> Result<Answer<Raised>, ToolError> {
    let id = i.pact_id.0;
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
    let id = i.pact_id.0;
    let share = match (i.seller_wins, i.seller_share) {
        (Some(true), None) => FULL_SHARE,
        (Some(false), None) => 0,
        (None, Some(share)) => share,
        (Some(_), Some(_)) => {
            return Err(ToolError::Invalid("give sellerWins or sellerShare, not both".into()));
        }
        (None, None) => {
            return Err(ToolError::Invalid(
                "give sellerWins (true or false) or sellerShare (basis points of the pot to the seller, 0-10000)"
                    .into(),
            ));
        }
    };
    // The parties and the currency, for the credits: a ruling changes neither.
    let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    let currency = chain.currency_at(pact.currency).await?;
    let voided = void_before_verdict(chain, id, &pact, 0, Verdict::Ruling).await?;
    // `resolveDispute(sellerWins)` is `resolveDisputeShare` at 10000 or 0: one call for both.
    let mined = chain.write(chain.pact.resolveDisputeShare(id, share), U256::ZERO).await?;
    let credits = Credits::of(&mined, &pact, share, Division::Ruling);
    let divided = Divided::new(id, share, &mined, &credits, &currency);
    let (winner, ruling) = match share {
        FULL_SHARE => ("seller", "resolved for the seller".to_owned()),
        0 => ("buyer", "resolved for the buyer".to_owned()),
        _ => ("neither", format!("split at {} of the pot to the seller", percent(share))),
    };
    let text = format!(
        "Dispute on pact #{id} {ruling}: the pact is {}. Credited: {} to the seller, {} to the buyer.{}{}",
        divided.step.status,
        show(credits.to_seller, &currency),
        show(credits.to_buyer, &currency),
        voided_note(voided),
        index_note(mined.indexed)
    );
    let credited = decimal(credits.to_seller + credits.to_buyer, &currency);
    Answer::new(text, Resolved { divided, winner, credited })
}
