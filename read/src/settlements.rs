//! Offers to settle a pact, every round of them (docs/contracts.md §Escrow v3).

use agentpact_contracts::{PactStatus, closed_set};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, U256};
use chrono::{DateTime, Utc};

use super::{ReadError, Reader};

/// One offer to end a pact with the payment divided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// Its number among the pact's offers (from 1); an acceptance names it.
    pub round: u32,
    /// The party that made it.
    pub proposed_by: Address,
    /// The pact's status when it was made: it lapses when the pact leaves it.
    pub offered_in: PactStatus,
    /// Basis points of the payment to the seller (each stake goes back to its owner).
    pub seller_share: u16,
    /// The last moment it may be accepted.
    pub expires_at: DateTime<Utc>,
    /// When it was made.
    pub proposed_at: DateTime<Utc>,
    /// When its maker took it back.
    pub withdrawn_at: Option<DateTime<Utc>>,
    /// When a verdict given after it (an oracle's score, a `voidOffers`) voided it.
    pub voided_at: Option<DateTime<Utc>>,
    /// Who accepted it.
    pub accepted_by: Option<Address>,
    /// When it was accepted.
    pub accepted_at: Option<DateTime<Utc>>,
}

closed_set! {
    /// Where an offer stands; its name is the one in every output.
    pub enum SettlementState {
        /// It can be accepted now.
        Open => "OPEN",
        /// The other party accepted it: the pact ended by it.
        Accepted => "ACCEPTED",
        /// Its maker took it back.
        Withdrawn => "WITHDRAWN",
        /// A later offer took its place.
        Replaced => "REPLACED",
        /// A verdict given after it (an oracle's score, the arbitrator's `voidOffers`) voided it.
        Voided => "VOIDED",
        /// It expired, or the pact moved on from the status it was made in.
        Lapsed => "LAPSED",
    }
}

impl Settlement {
    /// Where the offer stands, on a pact now in `status`, when `latest` is the pact's last round: in
    /// the order the escrow refuses an acceptance (a status moved on before a verdict before an
    /// expiry).
    pub fn state(&self, status: PactStatus, latest: u32, now: DateTime<Utc>) -> SettlementState {
        if self.accepted_at.is_some() {
            SettlementState::Accepted
        } else if self.withdrawn_at.is_some() {
            SettlementState::Withdrawn
        } else if self.round < latest {
            SettlementState::Replaced
        } else if status != self.offered_in {
            SettlementState::Lapsed
        } else if self.voided_at.is_some() {
            SettlementState::Voided
        } else if now > self.expires_at {
            SettlementState::Lapsed
        } else {
            SettlementState::Open
        }
    }
}

impl Reader {
    /// Every offer to settle pact `pact_id` on `chain_id`, in the order they were made.
    pub async fn settlements(&self, chain_id: u64, pact_id: U256) -> Result<Vec<Settlement>, ReadError> {
        let rows = sqlx::query!(
            r#"SELECT round, proposed_by, offered_in, seller_share, expires_at, proposed_at, withdrawn_at,
                      voided_at, accepted_by, accepted_at
               FROM settlements WHERE chain_id = $1 AND pact_id = $2::text::numeric ORDER BY round"#,
            i64_of(chain_id),
            pact_id.to_string(),
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let row = Cells {
                    table: "settlements",
                    key: format!("chain {chain_id} pact {pact_id} round {}", r.round),
                };
                Ok(Settlement {
                    round: row.int("round", r.round)?,
                    proposed_by: row.address("proposed_by", &r.proposed_by)?,
                    offered_in: row.code("offered_in", r.offered_in)?,
                    seller_share: row.int("seller_share", r.seller_share)?,
                    expires_at: r.expires_at,
                    proposed_at: r.proposed_at,
                    withdrawn_at: r.withdrawn_at,
                    voided_at: r.voided_at,
                    accepted_by: r
                        .accepted_by
                        .as_deref()
                        .map(|b| row.address("accepted_by", b))
                        .transpose()?,
                    accepted_at: r.accepted_at,
                })
            })
            .collect()
    }
}
