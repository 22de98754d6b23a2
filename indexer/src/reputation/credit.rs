//! What a finished pact credits each of its parties, between 0 and 1 (docs/proposals/53-reputation.md
//! §2): the table of outcomes, and the rows the aggregates query binds it as.

use agentpact_contracts::{Outcome, ReputationRole};

/// What a finished pact credits one of its parties, between 0 and 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credit {
    /// A fixed part, in hundredths.
    Percent(u8),
    /// The final oracle score out of 100 (all of it when no oracle scored).
    Score,
    /// The seller's share of the division.
    SellerShare,
    /// The buyer's share: what the seller's leaves.
    BuyerShare,
}

impl Credit {
    /// As the query computes it, in hundredths: `base + by_score × score + by_share × share`,
    /// the score and the seller's share each between 0 and 1.
    const fn terms(self) -> (i32, i32, i32) {
        match self {
            Self::Percent(p) => (p as i32, 0, 0),
            Self::Score => (0, 100, 0),
            Self::SellerShare => (0, 0, 100),
            Self::BuyerShare => (100, 0, -100),
        }
    }
}

/// What reputation reads from how a pact ended.
struct Reading {
    /// The buyer's credit; `None`: the outcome says nothing about the buyer.
    buyer: Option<Credit>,
    /// The seller's credit; `None`: the outcome says nothing about the seller.
    seller: Option<Credit>,
    /// Whether a clock ended it (counted in `timed_out`).
    timed_out: bool,
}

/// The table of outcomes: a new [`Outcome`] does not build until it is scored here. A settlement
/// (an agreement) credits both sides fully: what it weighs is the share that was paid
/// ([`SETTLED`]'s multiplier in the pairs), so an agreement is never read as a failure.
const fn reading(outcome: Outcome) -> Reading {
    use Credit::{BuyerShare, Percent, Score, SellerShare};
    let (buyer, seller, timed_out) = match outcome {
        Outcome::Approved => (Some(Percent(100)), Some(Score), false),
        Outcome::AutoApproved => (Some(Percent(75)), Some(Score), false),
        Outcome::SellerWon => (Some(Percent(0)), Some(Percent(100)), false),
        Outcome::BuyerWon => (Some(Percent(100)), Some(Percent(0)), false),
        Outcome::Split => (Some(BuyerShare), Some(SellerShare), false),
        Outcome::Settled => (Some(Percent(100)), Some(Percent(100)), false),
        Outcome::Timeout => (Some(Percent(100)), Some(Percent(0)), true),
        Outcome::DisputeTimeout => (None, None, true),
        Outcome::Cancelled | Outcome::Expired => (None, None, false),
    };
    Reading { buyer, seller, timed_out }
}

/// The outcome whose pacts weigh the seller's share of a job (`seller_share / 10000`) instead of
/// a whole one, and whose ratings are shown but not weighed: an agreement.
pub(super) const SETTLED: Outcome = Outcome::Settled;

/// [`reading`] of every outcome, as the reputation query binds it: one row per rated
/// (outcome, role) with its credit's terms, and the outcomes that count as timed out.
#[derive(Default)]
pub(super) struct Rated {
    pub(super) outcomes: Vec<&'static str>,
    pub(super) roles: Vec<&'static str>,
    pub(super) base: Vec<i32>,
    pub(super) by_score: Vec<i32>,
    pub(super) by_share: Vec<i32>,
    pub(super) timed_out: Vec<&'static str>,
}

impl Rated {
    /// Every outcome's reading.
    pub(super) fn new() -> Self {
        let mut rated = Self::default();
        for outcome in Outcome::ALL {
            let r = reading(outcome);
            for (role, credit) in [(ReputationRole::Buyer, r.buyer), (ReputationRole::Seller, r.seller)] {
                if let Some((base, by_score, by_share)) = credit.map(Credit::terms) {
                    rated.outcomes.push(outcome.name());
                    rated.roles.push(role.name());
                    rated.base.push(base);
                    rated.by_score.push(by_score);
                    rated.by_share.push(by_share);
                }
            }
            if r.timed_out {
                rated.timed_out.push(outcome.name());
            }
        }
        rated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_credit_lies_between_nothing_and_everything_whatever_the_score_and_share() {
        for outcome in Outcome::ALL {
            let r = reading(outcome);
            for (base, by_score, by_share) in [r.buyer, r.seller].into_iter().flatten().map(Credit::terms) {
                for (score, share) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    let credit = base + by_score * score + by_share * share;
                    assert!((0..=100).contains(&credit), "{outcome}: {credit} hundredths");
                }
            }
        }
        let rated = Rated::new();
        assert_eq!(rated.timed_out, [Outcome::Timeout.name(), Outcome::DisputeTimeout.name()]);
        assert!(!rated.outcomes.contains(&Outcome::Cancelled.name()), "a cancelled pact is not rated");
    }

    #[test]
    fn a_settlement_is_never_a_failure_for_either_side() {
        let r = reading(SETTLED);
        assert_eq!((r.buyer, r.seller), (Some(Credit::Percent(100)), Some(Credit::Percent(100))));
    }
}
