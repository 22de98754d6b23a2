//! An independent model of the escrow: the state machine of DESIGN.md and the payout table, written
//! without looking at the contract's storage. The randomized test drives the contract and this
//! model side by side and checks that they agree.

use std::collections::{HashMap, HashSet};

use agentpact_contracts::{
    Ending, Initiator, PactStatus,
    rules::{self, Division},
};
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
/// Shortest review period other than 0 (the default).
pub const MIN_REVIEW_PERIOD: u64 = 60 * 60;
/// Lowest pass mark.
pub const MIN_THRESHOLD: u8 = 1;
/// Seconds before a window's end from which no offer to settle stands: the latest expiry.
pub const VERDICT_MARGIN: u64 = 60 * 60;
/// Basis points that give one side everything.
pub const FULL_SHARE: u16 = 10_000;
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
            && (self.review_period == 0 || self.review_period >= MIN_REVIEW_PERIOD)
            && self.threshold >= MIN_THRESHOLD
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
            ending: Ending::Live,
            settled: None,
            offer: None,
            rounds: 0,
            epoch: 0,
            voided: HashSet::new(),
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
    /// A ruling of `share` basis points of the pot to the seller; `legacy` sends 0 and 10000 as
    /// `resolveDispute(sellerWins)`.
    Resolve {
        share: u16,
        legacy: bool,
    },
    ClaimTimeout,
    /// An offer to settle at `share` basis points of the payment, until `expires_at` (0: the
    /// latest allowed, `VERDICT_MARGIN` before the window's end).
    Propose {
        share: u16,
        expires_at: u64,
    },
    /// Accepting the offer of `round` at `share`.
    AcceptOffer {
        round: u32,
        share: u16,
    },
    WithdrawOffer,
    /// A verdict giver (an oracle that has not scored, the arbitrator of a dispute) voids every
    /// offer standing.
    VoidOffers,
}

/// An offer to settle that stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    pub by: Address,
    /// The status it was made in.
    pub status: PactStatus,
    pub share: u16,
    pub round: u32,
    pub expires_at: u64,
    /// The pact's verdict count when it was made: it is void once that has moved on.
    pub epoch: u32,
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
    /// The arbitrator's ruling, once it ruled: basis points of the pot to the seller.
    pub ruling: Option<u16>,
    /// How it ended (LIVE until then), as `PactEnded` and `getLedger` must say.
    pub ending: Ending,
    /// The settlement both parties agreed, once accepted: basis points of the payment to the seller.
    pub settled: Option<u16>,
    /// The offer to settle that stands, if any.
    pub offer: Option<Offer>,
    /// Offers made on the pact so far.
    pub rounds: u32,
    /// Verdicts given on the pact so far: scores and `voidOffers`.
    pub epoch: u32,
    /// Who has used its `voidOffers` on the pact, in the role it held (an oracle while
    /// PENDING_VERIFY, the arbitrator while DISPUTED).
    pub voided: HashSet<(Address, PactStatus)>,
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
            PactStatus::Completed | PactStatus::Refunded | PactStatus::Split => None,
        }
    }

    /// The last second of the window the status gives the parties to dispute, settle or rule in.
    pub fn window_end(&self) -> Option<u64> {
        match self.status {
            PactStatus::Funded | PactStatus::InProgress => Some(self.deadline),
            PactStatus::PendingVerify => Some(self.submitted_at + VERIFICATION_PERIOD),
            PactStatus::Disputed => Some(self.disputed_at + DISPUTE_PERIOD),
            _ => None,
        }
    }

    /// The latest second an offer made now may stand until, if the status has a window.
    pub fn latest_expiry(&self) -> Option<u64> {
        self.window_end().map(|end| end - VERDICT_MARGIN)
    }

    /// Payment and both stakes.
    pub fn pot(&self) -> U256 {
        self.payment + self.stake() + self.stake()
    }

    /// The escrow's promise for an ended pact: each party that did its part on time got at least
    /// what it put in, unless the arbitrator named in the terms ruled against it or it agreed to
    /// less in a settlement. The creator of an unaccepted pact gets its deposit back. The buyer
    /// always did its part (it paid); it gets its payment back unless the work was approved (by
    /// it, or by its silence) or the arbitrator gave some of it to the seller, and then at least
    /// the share of the pot the ruling left it. The seller did its part when it delivered before
    /// the deadline. Returns the broken promise, if any.
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
        if self.settled.is_some() {
            return None; // both agreed to it: one offered, the other accepted
        }
        let full = U256::from(FULL_SHARE);
        if let Some(share) = self.ruling {
            let to_seller = self.pot() * U256::from(share) / full;
            let (buyer_owed, seller_owed) = (self.pot() - to_seller, to_seller);
            if got(self.buyer) < buyer_owed || got(self.seller) < seller_owed {
                return Some(format!(
                    "the ruling of {share} basis points left the buyer {} (owed {buyer_owed}) and the seller {} (owed {seller_owed})",
                    got(self.buyer),
                    got(self.seller)
                ));
            }
            return None;
        }
        let buyer_owed = if self.status == PactStatus::Completed { stake } else { self.payment + stake };
        if got(self.buyer) < buyer_owed {
            return Some(format!("the buyer got {} of the {buyer_owed} it is owed", got(self.buyer)));
        }
        let delivered = self.submitted_at != 0;
        if delivered && got(self.seller) < stake {
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
            (Action::Resolve { share, .. }, Disputed)
                if caller == p.arbitrator && now <= p.disputed_at + DISPUTE_PERIOD && share <= FULL_SHARE =>
            {
                Some(rules::end_of_division(p.payment, share, Division::Ruling).0)
            }
            (Action::Propose { share, expires_at }, _) => {
                p.window_end().filter(|end| now <= *end)?;
                let latest = p.latest_expiry()?;
                let expires = if expires_at == 0 { latest } else { expires_at };
                (party && share <= FULL_SHARE && now <= expires && expires <= latest).then_some(p.status)
            }
            (Action::VoidOffers, Disputed)
                if caller == p.arbitrator
                    && now <= p.disputed_at + DISPUTE_PERIOD
                    && !p.voided.contains(&(caller, Disputed)) =>
            {
                Some(Disputed)
            }
            (Action::VoidOffers, PendingVerify)
                if p.oracles.contains(&caller)
                    && !p.scores.contains_key(&caller)
                    && now <= p.submitted_at + VERIFICATION_PERIOD
                    && !p.voided.contains(&(caller, PendingVerify)) =>
            {
                Some(PendingVerify)
            }
            (Action::WithdrawOffer, _) => p.offer.filter(|o| o.by == caller).map(|_| p.status),
            (Action::AcceptOffer { round, share }, _) => p
                .offer
                .filter(|o| {
                    party
                        && caller != o.by
                        && o.round == round
                        && o.share == share
                        && o.status == p.status
                        && o.epoch == p.epoch
                        && now <= o.expires_at
                })
                .map(|_| rules::end_of_division(p.payment, share, Division::Settlement).0),
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
                p.epoch += 1; // a score is a verdict: it voids the standing offer
            }
            Action::VoidOffers => {
                p.voided.insert((caller, from));
                p.epoch += 1;
            }
            Action::Finalize | Action::Reject | Action::RaiseDispute if next == PactStatus::Disputed => {
                p.disputed_at = now
            }
            Action::Finalize => p.verified_at = now,
            Action::Approve | Action::AutoApprove => {
                p.ending = Ending::Completed;
                payouts = vec![(p.seller, payment + stake), (p.buyer, stake)];
            }
            Action::Resolve { share, .. } => {
                p.ending = Ending::Ruled;
                p.ruling = Some(share);
                let to_seller = p.pot() * U256::from(share) / U256::from(FULL_SHARE);
                payouts = vec![(p.seller, to_seller), (p.buyer, p.pot() - to_seller)];
            }
            Action::Propose { share, expires_at } => {
                p.rounds += 1;
                let expires_at = if expires_at == 0 { p.latest_expiry().unwrap_or(now) } else { expires_at };
                p.offer = Some(Offer {
                    by: caller,
                    status: from,
                    share,
                    round: p.rounds,
                    expires_at,
                    epoch: p.epoch,
                });
            }
            Action::WithdrawOffer => p.offer = None,
            Action::AcceptOffer { share, .. } => {
                p.offer = None;
                p.settled = Some(share);
                p.ending = rules::end_of_division(payment, share, Division::Settlement).1;
                let to_seller = payment * U256::from(share) / U256::from(FULL_SHARE) + stake;
                payouts = vec![(p.seller, to_seller), (p.buyer, p.pot() - to_seller)];
            }
            Action::Cancel => {
                p.ending = Ending::Withdrawn;
                payouts = vec![(p.creator, p.creator_deposit())];
            }
            Action::ClaimTimeout => {
                (p.ending, payouts) = match from {
                    PactStatus::Negotiating => (Ending::Expired, vec![(p.creator, p.creator_deposit())]),
                    PactStatus::Disputed => {
                        (Ending::ArbitratorSilent, vec![(p.buyer, payment + stake), (p.seller, stake)])
                    }
                    _ => (Ending::RefundedAfterFailure, vec![(p.buyer, payment + stake + stake)]),
                }
            }
            _ => {}
        }
        for (to, amount) in payouts.into_iter().filter(|(_, amount)| !amount.is_zero()) {
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
