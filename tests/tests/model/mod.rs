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
/// Seconds between the close of acceptance and the deadline, at the least.
pub const MIN_WORK_WINDOW: u64 = 60 * 60;
/// Latest deadline after creation.
pub const MAX_DURATION: u64 = 365 * 24 * 60 * 60;
/// Longest review period.
pub const MAX_REVIEW_PERIOD: u64 = 30 * 24 * 60 * 60;
/// Review period of terms that give zero.
pub const DEFAULT_REVIEW_PERIOD: u64 = 3 * 24 * 60 * 60;
/// Longest spec URI in bytes.
pub const MAX_SPEC_URI: usize = 256;
/// Longest a pact can stay open from its creation until a bystander can end it, whatever happens:
/// the longest deadline, then oracles, the longest review and an arbitrator all silent for as long
/// as they may be.
pub const LONGEST_LIFE: u64 = MAX_DURATION + VERIFICATION_PERIOD + MAX_REVIEW_PERIOD + DISPUTE_PERIOD + 1;

/// What a creator proposes, as the model sees it.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub initiator: Initiator,
    pub creator: Address,
    pub arbitrator: Address,
    pub counterparty: Option<Address>,
    pub oracles: Vec<Address>,
    pub weights: Vec<u8>,
    pub threshold: u8,
    /// Zero for ETH, else a token.
    pub currency: Address,
    pub payment: U256,
    pub deadline: u64,
    /// 0: the latest allowed.
    pub accept_by: u64,
    /// 0: the default.
    pub review_period: u64,
    pub spec_uri_len: usize,
}

impl Proposal {
    /// Whether the contract must take these terms at time `now` (oracles and weights are always
    /// valid in the randomized test; their rules have tests of their own).
    pub fn allowed(&self, now: u64) -> bool {
        let last_accept = self.deadline.saturating_sub(MIN_WORK_WINDOW);
        let accept_by = if self.accept_by == 0 { last_accept } else { self.accept_by };
        let conflicted = |a: Address| a == self.creator || a == self.arbitrator || self.oracles.contains(&a);
        self.payment >= U256::from(10u8)
            && self.deadline > now + MIN_WORK_WINDOW
            && self.deadline <= now + MAX_DURATION
            && accept_by > now
            && accept_by <= last_accept
            && self.review_period <= MAX_REVIEW_PERIOD
            && self.spec_uri_len <= MAX_SPEC_URI
            && self.arbitrator != self.creator
            && !self.oracles.contains(&self.creator)
            && self.counterparty.is_none_or(|c| !conflicted(c))
    }

    /// The pact these terms open at time `now`.
    pub fn open(&self, now: u64) -> Pact {
        let (buyer, seller) = match self.initiator {
            Initiator::Buyer => (self.creator, Address::ZERO),
            Initiator::Seller => (Address::ZERO, self.creator),
        };
        Pact {
            initiator: self.initiator,
            creator: self.creator,
            buyer,
            seller,
            arbitrator: self.arbitrator,
            counterparty: self.counterparty,
            oracles: self.oracles.clone(),
            weights: self.weights.clone(),
            threshold: self.threshold,
            currency: self.currency,
            payment: self.payment,
            deadline: self.deadline,
            accept_by: if self.accept_by == 0 { self.deadline - MIN_WORK_WINDOW } else { self.accept_by },
            review_period: if self.review_period == 0 { DEFAULT_REVIEW_PERIOD } else { self.review_period },
            created_at: now,
            status: PactStatus::Negotiating,
            scores: HashMap::new(),
            submitted_at: 0,
            verified_at: 0,
            disputed_at: 0,
            ruling: None,
            paid: HashMap::new(),
        }
    }
}

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
    pub counterparty: Option<Address>,
    pub oracles: Vec<Address>,
    pub weights: Vec<u8>,
    pub threshold: u8,
    pub currency: Address,
    pub payment: U256,
    pub deadline: u64,
    pub accept_by: u64,
    pub review_period: u64,
    pub created_at: u64,
    pub status: PactStatus,
    pub scores: HashMap<Address, u8>,
    pub submitted_at: u64,
    pub verified_at: u64,
    pub disputed_at: u64,
    /// The arbitrator's ruling, once it ruled: `Some(true)` for the seller.
    pub ruling: Option<bool>,
    /// What this pact credited to each address.
    pub paid: HashMap<Address, U256>,
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

    /// Base units of its currency the escrow holds for this pact.
    pub fn locked(&self) -> U256 {
        match self.status {
            PactStatus::Negotiating => self.creator_deposit(),
            s if s.is_terminal() => U256::ZERO,
            _ => self.payment + self.stake() * U256::from(2u8),
        }
    }

    /// The first second a bystander can end the pact without anyone's help (`None` once it ended).
    pub fn exit_opens_at(&self) -> Option<u64> {
        match self.status {
            PactStatus::Negotiating => Some(self.accept_by + 1),
            PactStatus::Funded | PactStatus::InProgress => Some(self.deadline + 1),
            PactStatus::PendingVerify => Some(self.submitted_at + VERIFICATION_PERIOD + 1),
            PactStatus::PendingApproval => Some(self.verified_at + self.review_period + 1),
            PactStatus::Disputed => Some(self.disputed_at + DISPUTE_PERIOD + 1),
            PactStatus::Completed | PactStatus::Refunded => None,
        }
    }

    /// The escrow's promise for an ended pact: each party that did its part on time got at least
    /// what it put in, unless the arbitrator named in the terms ruled against it. The creator of
    /// an unaccepted pact gets its deposit back. The buyer always did its part (it paid); it gets
    /// its payment back unless the work was approved (by it, or by its silence) or the arbitrator
    /// gave it to the seller. The seller did its part when it delivered before the deadline.
    /// Returns the broken promise, if any.
    pub fn broken_promise(&self) -> Option<String> {
        if !self.status.is_terminal() {
            return None;
        }
        let got = |who: Address| self.paid.get(&who).copied().unwrap_or_default();
        let stake = self.stake();
        if self.buyer.is_zero() || self.seller.is_zero() {
            let back = got(self.creator);
            return (back < self.creator_deposit())
                .then(|| format!("the creator got {back} of its deposit {}", self.creator_deposit()));
        }
        let work_paid = self.status == PactStatus::Completed;
        let buyer_owed = if self.ruling == Some(true) {
            U256::ZERO
        } else if work_paid {
            stake
        } else {
            self.payment + stake
        };
        if got(self.buyer) < buyer_owed {
            return Some(format!("the buyer got {} of the {buyer_owed} it is owed", got(self.buyer)));
        }
        let delivered = self.submitted_at != 0;
        if delivered && self.ruling != Some(false) && got(self.seller) < stake {
            return Some(format!("the seller delivered and got {} of its stake {stake}", got(self.seller)));
        }
        None
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

/// The model: every pact, every credit by (currency, owner), and the currencies whose token
/// refuses deposits at the moment, with the smallest deposit it refuses (a token answering
/// `false` refuses every deposit; one keeping 1% refuses those of 100 base units and more, as
/// 1% of less rounds to nothing).
#[derive(Debug, Default)]
pub struct Escrow {
    pub pacts: Vec<Pact>,
    pub credits: HashMap<(Address, Address), U256>,
    pub refusing: HashMap<Address, U256>,
}

impl Escrow {
    /// Base units of `currency` the escrow must hold: everything locked in pacts paid in it plus
    /// every unwithdrawn credit in it.
    pub fn expected_balance(&self, currency: Address) -> U256 {
        let locked: U256 = self.pacts.iter().filter(|p| p.currency == currency).map(Pact::locked).sum();
        let credits: U256 = self.credits.iter().filter(|((c, _), _)| *c == currency).map(|(_, v)| *v).sum();
        locked + credits
    }

    /// Whether the token of `currency` refuses a deposit of `amount` at the moment.
    pub fn refuses(&self, currency: Address, amount: U256) -> bool {
        self.refusing.get(&currency).is_some_and(|least| amount >= *least)
    }

    /// The credit in `currency` the model says `who` is owed.
    pub fn credit(&self, currency: Address, who: Address) -> U256 {
        self.credits.get(&(currency, who)).copied().unwrap_or_default()
    }

    /// Whether `caller` may take `action` on pact `id` at time `now`; when it may, the status the
    /// pact must end in. `None` means the contract must refuse.
    pub fn outcome(&self, id: usize, action: Action, caller: Address, now: u64) -> Option<PactStatus> {
        use PactStatus::*;
        let p = self.pacts.get(id)?;
        let party = caller == p.buyer || caller == p.seller;
        match (action, p.status) {
            (Action::Accept, Negotiating)
                if now <= p.accept_by
                    && p.counterparty.is_none_or(|c| c == caller)
                    && caller != p.creator
                    && caller != p.arbitrator
                    && !p.oracles.contains(&caller)
                    && !self.refuses(p.currency, p.accepter_deposit()) =>
            {
                Some(Funded)
            }
            (Action::Cancel, Negotiating) if caller == p.creator => Some(Refunded),
            (Action::Start, Funded) if caller == p.seller && now <= p.deadline => Some(InProgress),
            (Action::Submit, InProgress) if caller == p.seller && now <= p.deadline => Some(PendingVerify),
            (Action::Score(s), PendingVerify)
                if s <= 100
                    && p.oracles.contains(&caller)
                    && !p.scores.contains_key(&caller)
                    && now <= p.submitted_at + VERIFICATION_PERIOD =>
            {
                Some(PendingVerify)
            }
            (Action::Finalize, PendingVerify)
                if p.scores.len() == p.oracles.len() || now > p.submitted_at + VERIFICATION_PERIOD =>
            {
                Some(if p.weighted_score() >= p.threshold { PendingApproval } else { Disputed })
            }
            (Action::Approve, PendingApproval) if caller == p.buyer => Some(Completed),
            (Action::Reject, PendingApproval)
                if caller == p.buyer && now <= p.verified_at + p.review_period =>
            {
                Some(Disputed)
            }
            (Action::AutoApprove, PendingApproval) if now > p.verified_at + p.review_period => {
                Some(Completed)
            }
            (Action::RaiseDispute, Funded | InProgress) if party && now <= p.deadline => Some(Disputed),
            (Action::RaiseDispute, PendingVerify) if party && now <= p.submitted_at + VERIFICATION_PERIOD => {
                Some(Disputed)
            }
            (Action::Resolve { seller_wins }, Disputed)
                if caller == p.arbitrator && now <= p.disputed_at + DISPUTE_PERIOD =>
            {
                Some(if seller_wins { Completed } else { Refunded })
            }
            (Action::ClaimTimeout, Negotiating) if now > p.accept_by => Some(Refunded),
            (Action::ClaimTimeout, Funded | InProgress) if now > p.deadline => Some(Refunded),
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
                p.ruling = Some(seller_wins);
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
            *self.credits.entry((p.currency, to)).or_default() += amount;
            *p.paid.entry(to).or_default() += amount;
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
