//! Reputation of an address as seller, buyer and oracle, read from the aggregates the indexer
//! keeps (`reputation`), never recomputed per request.
//!
//! The 0-5 score (docs/api.md §Reputation) is a Bayesian mean weighted by escrowed value: every
//! rated pact (or verification) earns a credit between 0 and 1 and weighs `w = min(1, payment /
//! 0.01 ETH)`; every counterparty that gave feedback casts one vote between 0 and 1 (its mean
//! rating, 1-5, mapped onto 0-1) weighing `v = min(1, payments of the pacts it rated / 0.01 ETH)`;
//! and [`PRIOR_WEIGHT`] imaginary samples of [`PRIOR_MEAN`] are added before averaging:
//!
//! `score = 5 × (Σ w·credit + Σ v·vote + PRIOR_WEIGHT × PRIOR_MEAN) / (Σ w + Σ v + PRIOR_WEIGHT)`
//!
//! With no history the score is 3.0; one perfect pact of 0.01 ETH or more gives 3.33, while 100
//! such pacts at 0.9 give 4.43: a lucky single pact cannot beat a long good record, a counterparty
//! rating a hundred times weighs what it weighs rating once, and a hundred self-dealt pacts of a
//! few wei weigh next to nothing.

use agentpact_contracts::{PactStatus, ReputationRole};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, U256};

use super::{Currency, ReadError, Reader};

/// The mean credit assumed before any history (3.0 of 5).
pub const PRIOR_MEAN: f64 = 0.6;

/// How many pacts the prior counts as.
pub const PRIOR_WEIGHT: f64 = 5.0;

/// A 0-5 score and the evidence it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// 0 to 5, rounded to two decimals.
    pub value: f64,
    /// The rated pacts (or verifications) behind it.
    pub rated: u64,
    /// The counterparties whose feedback is behind it.
    pub raters: u64,
    /// What the pacts and votes weigh together, each between 0 and 1 by the value escrowed.
    pub weight: f64,
}

impl Score {
    /// The score of the evidence of `roles` together.
    pub fn of(roles: &[&RoleReputation]) -> Self {
        let sum = |f: fn(&RoleReputation) -> f64| roles.iter().map(|r| f(r)).sum::<f64>();
        let weight = sum(|r| r.weight + r.feedback_weight);
        let credit = sum(|r| r.credit + r.feedback_votes);
        let raw = 5.0 * (credit + PRIOR_WEIGHT * PRIOR_MEAN) / (weight + PRIOR_WEIGHT);
        Self {
            value: (raw.clamp(0.0, 5.0) * 100.0).round() / 100.0,
            rated: roles.iter().map(|r| r.rated).sum(),
            raters: roles.iter().map(|r| r.feedback_raters).sum(),
            weight: (weight * 10_000.0).round() / 10_000.0,
        }
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
    /// Payment of the completed ETH ones, in wei (every currency: [`Reader::volumes`]).
    pub volume: U256,
    /// Buyer/seller: the mean final oracle score of their pacts; oracle: the mean score it gave.
    pub mean_score: Option<f64>,
    /// Oracle only: 100 − the mean distance between its score and the final score.
    pub agreement: Option<f64>,
    /// Finished pacts (or verifications) that count toward the score.
    pub rated: u64,
    /// Their weights summed: each `min(1, payment / 0.01 ETH)`.
    pub weight: f64,
    /// Their credits summed, each times its weight.
    pub credit: f64,
    /// Feedback ratings received in this role.
    pub feedback_count: u64,
    /// The distinct counterparties that gave them.
    pub feedback_raters: u64,
    /// Their mean rating, 1-5 (none without feedback).
    pub feedback_mean: Option<f64>,
    /// The counterparties' votes' weights summed: each `min(1, payments it rated / 0.01 ETH)`.
    pub feedback_weight: f64,
    /// The counterparties' votes summed: each one's mean rating mapped from 1-5 onto 0-1, times
    /// its weight.
    pub feedback_votes: f64,
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
        Score::of(&[self])
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
        Score::of(&[&self.as_seller, &self.as_buyer, &self.as_oracle])
    }

    /// The role a row names in its `role` column.
    fn role(&mut self, row: &Cells, name: &str) -> Result<&mut RoleReputation, agentpact_schema::Corrupt> {
        Ok(match row.named("role", name, ReputationRole::from_name)? {
            ReputationRole::Seller => &mut self.as_seller,
            ReputationRole::Buyer => &mut self.as_buyer,
            ReputationRole::Oracle => &mut self.as_oracle,
        })
    }

    /// Feedback received in every role together: (ratings, their mean).
    pub fn feedback(&self) -> (u64, Option<f64>) {
        let roles = [&self.as_seller, &self.as_buyer];
        let count: u64 = roles.iter().map(|r| r.feedback_count).sum();
        let sum: f64 = roles.iter().map(|r| r.feedback_mean.unwrap_or(0.0) * r.feedback_count as f64).sum();
        (count, (count > 0).then(|| (sum / count as f64 * 100.0).round() / 100.0))
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
                      weight::float8 AS "weight!", credit::float8 AS "credit!", feedback_count, feedback_raters,
                      feedback_mean::float8 AS feedback_mean, feedback_credit::float8 AS "feedback_credit!",
                      feedback_weight::float8 AS "feedback_weight!"
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
            let row = Cells { table: "reputation", key: format!("chain {chain_id} {address} as {}", r.role) };
            let count = |column, n: i32| row.int::<u64>(column, n);
            let role = RoleReputation {
                pacts: count("pacts", r.pacts)?,
                completed: count("completed", r.completed)?,
                refunded: count("refunded", r.refunded)?,
                disputed: count("disputed", r.disputed)?,
                timed_out: count("timed_out", r.timed_out)?,
                volume: row.u256("volume", &r.volume)?,
                mean_score: r.mean_score,
                agreement: r.agreement,
                rated: count("rated", r.rated)?,
                weight: r.weight,
                credit: r.credit,
                feedback_count: count("feedback_count", r.feedback_count)?,
                feedback_raters: count("feedback_raters", r.feedback_raters)?,
                feedback_mean: r.feedback_mean,
                feedback_weight: r.feedback_weight,
                feedback_votes: r.feedback_credit,
            };
            *rep.role(&row, &r.role)? = role;
        }
        Ok(rep)
    }

    /// What `address` was paid through completed pacts as `role` ("seller", "buyer", or
    /// "oracle": the pacts it scored), in each currency paid in, in the order the escrow announced
    /// the currencies: never summed across currencies. Read from the pacts when asked (GraphQL
    /// `RoleReputation.volumes`), not with every reputation.
    pub async fn volumes(
        &self,
        chain_id: u64,
        address: Address,
        role: ReputationRole,
    ) -> Result<Vec<(Currency, U256)>, ReadError> {
        let rows = sqlx::query!(
            r#"WITH paid AS (
                   SELECT currency, payment FROM pacts
                   WHERE chain_id = $1 AND seller = $2 AND status = $4 AND $3 = $5
                   UNION ALL
                   SELECT currency, payment FROM pacts
                   WHERE chain_id = $1 AND buyer = $2 AND status = $4 AND $3 = $6
                   UNION ALL
                   SELECT p.currency, p.payment
                   FROM verifications v JOIN pacts p USING (chain_id, pact_id)
                   WHERE v.chain_id = $1 AND v.oracle = $2 AND p.status = $4 AND $3 = $7
               )
               SELECT paid.currency AS "currency!", sum(paid.payment)::text AS "amount!",
                      c.symbol AS "symbol?", c.decimals AS "decimals?"
               FROM paid LEFT JOIN currencies c ON c.chain_id = $1 AND c.address = paid.currency
               GROUP BY paid.currency, c.symbol, c.decimals, c.block_number
               ORDER BY c.block_number, paid.currency"#,
            i64_of(chain_id),
            address.as_slice(),
            role.name(),
            i16::from(PactStatus::Completed.code()),
            ReputationRole::Seller.name(),
            ReputationRole::Buyer.name(),
            ReputationRole::Oracle.name(),
        )
        .fetch_all(self.pool())
        .await?;
        let row = Cells { table: "pacts", key: format!("chain {chain_id} {address} as {role} volume") };
        rows.into_iter()
            .map(|r| {
                let currency =
                    super::currencies::currency_of(&row, "currency", &r.currency, r.symbol, r.decimals)?;
                Ok((currency, row.u256("payment", &r.amount)?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pacts` full-weight pacts earning `credit` in all, and `raters` full-weight votes
    /// summing to `votes`.
    fn score(credit: f64, pacts: u64, votes: f64, raters: u64) -> f64 {
        let role = RoleReputation {
            rated: pacts,
            weight: pacts as f64,
            credit,
            feedback_raters: raters,
            feedback_weight: raters as f64,
            feedback_votes: votes,
            ..Default::default()
        };
        role.score().value
    }

    #[test]
    fn few_pacts_shrink_toward_the_prior() {
        assert_eq!(score(0.0, 0, 0.0, 0), 3.0);
        let lucky = score(1.0, 1, 0.0, 0);
        let steady = score(90.0, 100, 0.0, 0);
        assert_eq!((lucky, steady), (3.33, 4.43));
        assert!(steady > lucky);
        assert_eq!(score(0.0, 1000, 0.0, 0), 0.01);
    }

    #[test]
    fn each_counterparty_is_one_vote() {
        // Two pacts at credit 1; one counterparty's five-star vote moves the score once...
        let one_vote = score(2.0, 2, 1.0, 1);
        assert_eq!(one_vote, 3.75);
        // ...and three counterparties' votes three times as much evidence.
        assert_eq!(score(2.0, 2, 3.0, 3), 4.0);
        // A one-star vote pulls down as far as a five-star one pulls up.
        assert_eq!(score(2.0, 2, 0.0, 1), 3.13);
    }

    #[test]
    fn evidence_counts_by_the_value_escrowed() {
        // A hundred perfect pacts of 10 wei each (weight 10⁻¹⁵), each rated five stars by its own
        // wallet, against one ordinary pact at 0.86 with one five-star vote.
        let tiny = 1e-15;
        let farm = RoleReputation {
            rated: 100,
            weight: 100.0 * tiny,
            credit: 100.0 * tiny,
            feedback_raters: 100,
            feedback_weight: 100.0 * tiny,
            feedback_votes: 100.0 * tiny,
            ..Default::default()
        };
        assert_eq!(farm.score().value, 3.0);
        assert_eq!(score(0.86, 1, 1.0, 1), 3.47);
    }
}
