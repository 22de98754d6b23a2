//! Reputation of an address as seller, buyer and oracle, read from the aggregates the indexer
//! keeps (`reputation`), never recomputed per request.
//!
//! The 0-5 score (docs/api.md §Reputation) is a Bayesian mean: every rated pact (or verification)
//! earns a credit between 0 and 1, and [`PRIOR_WEIGHT`] imaginary pacts of credit [`PRIOR_MEAN`]
//! are added before averaging:
//!
//! `score = 5 × (Σ credit + PRIOR_WEIGHT × PRIOR_MEAN) / (rated + PRIOR_WEIGHT)`
//!
//! With no history the score is 3.0; one perfect pact gives 3.33, while 100 pacts at 0.9 give
//! 4.43: a lucky single pact cannot beat a long good record.

use alloy::primitives::{Address, U256};

use super::{
    ReadError, Reader,
    convert::{i64_of, u64_of, u256},
};

/// The mean credit assumed before any history (3.0 of 5).
pub const PRIOR_MEAN: f64 = 0.6;

/// How many pacts the prior counts as.
pub const PRIOR_WEIGHT: f64 = 5.0;

/// A 0-5 score and how many rated pacts it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// 0 to 5, rounded to two decimals.
    pub value: f64,
    /// The rated pacts (or verifications) behind it.
    pub rated: u64,
}

impl Score {
    /// The score of `rated` pacts that earned `credit` in all.
    pub fn of(credit: f64, rated: u64) -> Self {
        let raw = 5.0 * (credit + PRIOR_WEIGHT * PRIOR_MEAN) / (rated as f64 + PRIOR_WEIGHT);
        Self { value: (raw.clamp(0.0, 5.0) * 100.0).round() / 100.0, rated }
    }
}

/// What one role's history says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RoleReputation {
    /// Pacts in this role (for an oracle: pacts it scored).
    pub pacts: u64,
    /// Of those, completed.
    pub completed: u64,
    /// Refunded.
    pub refunded: u64,
    /// Disputed at some point.
    pub disputed: u64,
    /// Ended by a timeout (a silent seller or arbitrator).
    pub timed_out: u64,
    /// Payment of the completed ones, in wei.
    pub volume: U256,
    /// Buyer/seller: the mean final oracle score of their pacts; oracle: the mean score it gave.
    pub mean_score: Option<f64>,
    /// Oracle only: 100 − the mean distance between its score and the final score.
    pub agreement: Option<f64>,
    /// Finished pacts (or verifications) that count toward the score.
    pub rated: u64,
    /// The sum of their credits.
    pub credit: f64,
}

impl RoleReputation {
    /// Disputed pacts per pact, 0 to 1 (0 without pacts).
    pub fn dispute_rate(&self) -> f64 {
        ratio(self.disputed, self.pacts)
    }

    /// Timed-out pacts per pact, 0 to 1.
    pub fn timeout_rate(&self) -> f64 {
        ratio(self.timed_out, self.pacts)
    }

    /// The 0-5 score of this role alone.
    pub fn score(&self) -> Score {
        Score::of(self.credit, self.rated)
    }
}

/// An address's reputation in every role.
#[derive(Debug, Clone, PartialEq)]
pub struct Reputation {
    /// The address.
    pub address: Address,
    /// As seller.
    pub as_seller: RoleReputation,
    /// As buyer.
    pub as_buyer: RoleReputation,
    /// As oracle.
    pub as_oracle: RoleReputation,
}

impl Reputation {
    /// The 0-5 score over all roles together.
    pub fn overall(&self) -> Score {
        let roles = [&self.as_seller, &self.as_buyer, &self.as_oracle];
        Score::of(roles.iter().map(|r| r.credit).sum(), roles.iter().map(|r| r.rated).sum())
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

impl Reader {
    /// The reputation of `address` on `chain_id` (all zeros for an address with no history).
    pub async fn reputation(&self, chain_id: u64, address: Address) -> Result<Reputation, ReadError> {
        let rows = sqlx::query!(
            r#"SELECT role, pacts, completed, refunded, disputed, timed_out, volume::text AS "volume!",
                      mean_score::float8 AS mean_score, agreement::float8 AS agreement, rated,
                      credit::float8 AS "credit!"
               FROM reputation WHERE chain_id = $1 AND address = $2"#,
            i64_of(chain_id),
            address.as_slice(),
        )
        .fetch_all(self.pool())
        .await?;
        let mut rep = Reputation {
            address,
            as_seller: RoleReputation::default(),
            as_buyer: RoleReputation::default(),
            as_oracle: RoleReputation::default(),
        };
        for r in rows {
            let count = |n: i32| u64_of(i64::from(n));
            let role = RoleReputation {
                pacts: count(r.pacts),
                completed: count(r.completed),
                refunded: count(r.refunded),
                disputed: count(r.disputed),
                timed_out: count(r.timed_out),
                volume: u256(&r.volume),
                mean_score: r.mean_score,
                agreement: r.agreement,
                rated: count(r.rated),
                credit: r.credit,
            };
            match r.role.as_str() {
                "seller" => rep.as_seller = role,
                "buyer" => rep.as_buyer = role,
                _ => rep.as_oracle = role,
            }
        }
        Ok(rep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_pacts_shrink_toward_the_prior() {
        assert_eq!(Score::of(0.0, 0).value, 3.0);
        let lucky = Score::of(1.0, 1).value;
        let steady = Score::of(90.0, 100).value;
        assert_eq!((lucky, steady), (3.33, 4.43));
        assert!(steady > lucky);
        assert_eq!(Score::of(0.0, 1000).value, 0.01);
    }
}
