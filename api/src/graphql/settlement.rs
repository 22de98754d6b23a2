//! How a ruling or a settlement divided a pact's money, and the offers to settle it.

use agentpact_contracts::{Ending, Outcome, rules};
use alloy::primitives::U256;
use async_graphql::Object;
use chrono::{DateTime, Utc};

use super::{
    closed_sets::{DivisionKind, PactStatus, SettlementState},
    scalars::{Address, BigInt},
};
use crate::read;

/// How a ruling or a settlement divided a pact's money, and what each side was credited.
pub struct Division {
    by: rules::Division,
    seller_share: u16,
    seller: U256,
    buyer: U256,
    currency: read::Currency,
    stages: Vec<u8>,
}

impl Division {
    /// The division that ended `pact` (whose stages are `stages`), if a ruling or a settlement
    /// ended it. On a pact of several stages only a settlement can (a ruling divides one stage),
    /// and it divided only what was still held: every live stage, each side credited what those
    /// stages' ends paid it.
    pub fn of(pact: &read::Pact, stages: &[read::Stage]) -> Option<Self> {
        let share = pact.seller_share?;
        // Every outcome named: a new one must say whether a share divided its money.
        let by = match pact.outcome? {
            Outcome::Settled => rules::Division::Settlement,
            Outcome::SellerWon | Outcome::BuyerWon | Outcome::Split => rules::Division::Ruling,
            Outcome::Approved
            | Outcome::AutoApproved
            | Outcome::Timeout
            | Outcome::DisputeTimeout
            | Outcome::Cancelled
            | Outcome::Expired => return None,
        };
        let currency = pact.currency.clone();
        if stages.len() <= 1 {
            let (seller, buyer) = rules::division(pact.payment, share, by);
            return Some(Self { by, seller_share: share, seller, buyer, currency, stages: vec![0] });
        }
        // On a pact of several only a settlement is pact-wide (a ruling is one stage's, told by
        // its milestone): it ends every stage it divides SPLIT or CANCELLED_BY_AGREEMENT.
        let divided: Vec<&read::Stage> = stages
            .iter()
            .filter(|s| matches!(s.ending, Ending::Split | Ending::CancelledByAgreement))
            .collect();
        if by != rules::Division::Settlement || divided.is_empty() {
            return None;
        }
        let seller = divided.iter().filter_map(|s| s.to_seller).sum();
        let buyer = divided.iter().filter_map(|s| s.to_buyer).sum();
        Some(Self {
            by,
            seller_share: share,
            seller,
            buyer,
            currency,
            stages: divided.iter().map(|s| s.index).collect(),
        })
    }
}

/// How a ruling or a settlement divided a pact's money, and what each side was credited.
#[Object]
impl Division {
    /// A ruling or a settlement.
    async fn by(&self) -> DivisionKind {
        self.by.into()
    }
    /// Basis points to the seller (10000 = all of it): of the pot for a ruling, of the payment
    /// for a settlement (on a pact of stages: of what the stages in `stages` held).
    async fn seller_share(&self) -> u16 {
        self.seller_share
    }
    /// The stages it divided, from 0: `[0]` for a pact of one stage; on a pact of several, the
    /// stages still held when it came (the ones released before it are not divided).
    async fn stages(&self) -> &[u8] {
        &self.stages
    }
    /// What the seller was credited, in base units of the pact's currency.
    async fn seller_credit(&self) -> BigInt {
        BigInt(self.seller)
    }
    /// The same as an exact decimal.
    async fn seller_credit_formatted(&self) -> String {
        self.currency.format(self.seller)
    }
    /// What the buyer was credited, in base units of the pact's currency.
    async fn buyer_credit(&self) -> BigInt {
        BigInt(self.buyer)
    }
    /// The same as an exact decimal.
    async fn buyer_credit_formatted(&self) -> String {
        self.currency.format(self.buyer)
    }
}

/// An offer to end a pact with the payment divided.
pub struct SettlementOffer {
    offer: read::Settlement,
    state: read::SettlementState,
}

impl SettlementOffer {
    /// Every offer on a pact now in `status`, with where each stands at `now`.
    pub fn all(
        offers: Vec<read::Settlement>,
        status: agentpact_contracts::PactStatus,
        now: DateTime<Utc>,
    ) -> Vec<Self> {
        let latest = offers.last().map_or(0, |o| o.round);
        offers
            .into_iter()
            .map(|offer| {
                let state = offer.state(status, latest, now);
                Self { offer, state }
            })
            .collect()
    }
}

/// An offer to end a pact with the payment divided.
#[Object]
impl SettlementOffer {
    /// Its number among the pact's offers (from 1): `acceptSettlement` names it.
    async fn round(&self) -> u32 {
        self.offer.round
    }
    /// The party that made it.
    async fn proposed_by(&self) -> Address {
        Address(self.offer.proposed_by)
    }
    /// The pact's status when it was made; it lapses when the pact leaves it.
    async fn offered_in(&self) -> PactStatus {
        self.offer.offered_in.into()
    }
    /// Basis points of the payment to the seller; each stake goes back to its owner.
    async fn seller_share(&self) -> u16 {
        self.offer.seller_share
    }
    /// The last moment it may be accepted.
    async fn expires_at(&self) -> DateTime<Utc> {
        self.offer.expires_at
    }
    /// When it was made.
    async fn proposed_at(&self) -> DateTime<Utc> {
        self.offer.proposed_at
    }
    /// When its maker took it back.
    async fn withdrawn_at(&self) -> Option<DateTime<Utc>> {
        self.offer.withdrawn_at
    }
    /// When a verdict given after it (an oracle's score, the arbitrator's or an oracle's
    /// `voidOffers`) voided it: it can no longer be accepted.
    async fn voided_at(&self) -> Option<DateTime<Utc>> {
        self.offer.voided_at
    }
    /// Who accepted it.
    async fn accepted_by(&self) -> Option<Address> {
        self.offer.accepted_by.map(Address)
    }
    /// When it was accepted.
    async fn accepted_at(&self) -> Option<DateTime<Utc>> {
        self.offer.accepted_at
    }
    /// Where it stands now.
    async fn state(&self) -> SettlementState {
        self.state.into()
    }
}
