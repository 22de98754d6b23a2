//! An independent model of the escrow: the state machine of DESIGN.md and the payout table, written
//! without looking at the contract's storage. The randomized test drives the contract and this
//! model side by side and checks that they agree.

use std::collections::HashMap;

use agentpact_contracts::{Initiator, PactStatus};
use alloy::primitives::{Address, U256};

/// Seconds the oracles have after submission.
pub const VERIFICATION_PERIOD: u64 = 3 * 24 * 60 * 60;
/// Seconds the arbitrator has after a dispute starts.
pub const DISPUTE_PERIOD: u64 = 7 * 24 * 60 * 60;

/// A call a test can make on a pact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Accept,
    Cancel,
    Start,
    Submit,
    Score(u8),
    Finalize,
    Approve,
    Reject,
    AutoApprove,
    RaiseDispute,
    Resolve { seller_wins: bool },
    ClaimTimeout,
}

/// What the model knows of one pact.
#[derive(Debug, Clone)]
pub struct Pact {
    pub initiator: Initiator,
    pub creator: Address,
    pub buyer: Address,
    pub seller: Address,
    pub arbitrator: Address,
    pub oracles: Vec<Address>,
    pub weights: Vec<u8>,
    pub threshold: u8,
    pub payment: U256,
    pub deadline: u64,
    pub review_period: u64,
    pub status: PactStatus,
    pub scores: HashMap<Address, u8>,
    pub submitted_at: u64,
    pub verified_at: u64,
    pub disputed_at: u64,
}

impl Pact {
    /// 10% of the payment.
    pub fn stake(&self) -> U256 {
        self.payment / U256::from(10u8)
    }

    /// What the creator deposited.
    pub fn creator_deposit(&self) -> U256 {
        match self.initiator {
            Initiator::Buyer => self.payment + self.stake(),
            Initiator::Seller => self.stake(),
        }
    }

    /// What the accepter deposits.
    pub fn accepter_deposit(&self) -> U256 {
        match self.initiator {
            Initiator::Buyer => self.stake(),
            Initiator::Seller => self.payment + self.stake(),
        }
    }

    /// Wei the escrow holds for this pact.
    pub fn locked(&self) -> U256 {
        match self.status {
            PactStatus::Negotiating => self.creator_deposit(),
            s if s.is_terminal() => U256::ZERO,
            _ => self.payment + self.stake() * U256::from(2u8),
        }
    }

    /// sum(weight × score) / 100, silent oracles scoring 0.
    pub fn weighted_score(&self) -> u8 {
        let sum: u32 = self
            .oracles
            .iter()
            .zip(&self.weights)
            .map(|(o, w)| u32::from(*w) * u32::from(self.scores.get(o).copied().unwrap_or(0)))
            .sum();
        u8::try_from(sum / 100).unwrap_or(u8::MAX)
    }
}

/// The model: every pact and every credit.
#[derive(Debug, Default)]
pub struct Escrow {
    pub pacts: Vec<Pact>,
    pub credits: HashMap<Address, U256>,
}

impl Escrow {
    /// Wei the escrow must hold: everything locked plus every unwithdrawn credit.
    pub fn expected_balance(&self) -> U256 {
        self.pacts.iter().map(Pact::locked).sum::<U256>() + self.credits.values().copied().sum::<U256>()
    }

    /// The credit the model says `who` is owed.
    pub fn credit(&self, who: Address) -> U256 {
        self.credits.get(&who).copied().unwrap_or_default()
    }

    /// Whether `caller` may take `action` on pact `id` at time `now`; when it may, the status the
    /// pact must end in. `None` means the contract must refuse.
    pub fn outcome(&self, id: usize, action: Action, caller: Address, now: u64) -> Option<PactStatus> {
        use PactStatus::*;
        let p = self.pacts.get(id)?;
        let party = caller == p.buyer || caller == p.seller;
        match (action, p.status) {
            (Action::Accept, Negotiating)
                if now <= p.deadline
                    && caller != p.creator
                    && caller != p.arbitrator
                    && !p.oracles.contains(&caller) =>
            {
                Some(Funded)
            }
            (Action::Cancel, Negotiating) if caller == p.creator => Some(Refunded),
            (Action::Start, Funded) if caller == p.seller && now <= p.deadline => Some(InProgress),
            (Action::Submit, InProgress) if caller == p.seller && now <= p.deadline => Some(PendingVerify),
            (Action::Score(s), PendingVerify)
                if s <= 100 && p.oracles.contains(&caller) && !p.scores.contains_key(&caller) =>
            {
                Some(PendingVerify)
            }
            (Action::Finalize, PendingVerify)
                if p.scores.len() == p.oracles.len() || now > p.submitted_at + VERIFICATION_PERIOD =>
            {
                Some(if p.weighted_score() >= p.threshold { PendingApproval } else { Disputed })
            }
            (Action::Approve, PendingApproval) if caller == p.buyer => Some(Completed),
            (Action::Reject, PendingApproval) if caller == p.buyer => Some(Disputed),
            (Action::AutoApprove, PendingApproval) if now > p.verified_at + p.review_period => {
                Some(Completed)
            }
            (Action::RaiseDispute, Funded | InProgress | PendingVerify) if party => Some(Disputed),
            (Action::Resolve { seller_wins }, Disputed) if caller == p.arbitrator => {
                Some(if seller_wins { Completed } else { Refunded })
            }
            (Action::ClaimTimeout, Negotiating | Funded | InProgress) if now > p.deadline => Some(Refunded),
            (Action::ClaimTimeout, Disputed) if now > p.disputed_at + DISPUTE_PERIOD => Some(Refunded),
            _ => None,
        }
    }

    /// Applies an action the contract accepted at block time `now`: status, clocks and payouts.
    pub fn apply(&mut self, id: usize, action: Action, caller: Address, now: u64) {
        let Some(next) = self.outcome(id, action, caller, now) else { return };
        let p = &mut self.pacts[id];
        let from = p.status;
        p.status = next;
        let (payment, stake) = (p.payment, p.stake());
        let mut payouts: Vec<(Address, U256)> = Vec::new();
        match action {
            Action::Accept => match p.initiator {
                Initiator::Buyer => p.seller = caller,
                Initiator::Seller => p.buyer = caller,
            },
            Action::Submit => p.submitted_at = now,
            Action::Score(s) => {
                p.scores.insert(caller, s);
            }
            Action::Finalize | Action::Reject | Action::RaiseDispute if next == PactStatus::Disputed => {
                p.disputed_at = now
            }
            Action::Finalize => p.verified_at = now,
            Action::Approve | Action::AutoApprove => {
                payouts = vec![(p.seller, payment + stake), (p.buyer, stake)];
            }
            Action::Resolve { seller_wins } => {
                let winner = if seller_wins { p.seller } else { p.buyer };
                payouts = vec![(winner, payment + stake + stake)];
            }
            Action::Cancel => payouts = vec![(p.creator, p.creator_deposit())],
            Action::ClaimTimeout => {
                payouts = match from {
                    PactStatus::Negotiating => vec![(p.creator, p.creator_deposit())],
                    PactStatus::Disputed => vec![(p.buyer, payment + stake), (p.seller, stake)],
                    _ => vec![(p.buyer, payment + stake + stake)],
                }
            }
            _ => {}
        }
        for (to, amount) in payouts {
            *self.credits.entry(to).or_default() += amount;
        }
    }

    /// The one exit a bystander can take from a non-terminal pact once every clock has run out.
    pub fn timeout_exit(&self, id: usize) -> Option<Action> {
        match self.pacts.get(id)?.status {
            PactStatus::PendingVerify => Some(Action::Finalize),
            PactStatus::PendingApproval => Some(Action::AutoApprove),
            s if s.is_terminal() => None,
            _ => Some(Action::ClaimTimeout),
        }
    }
}
