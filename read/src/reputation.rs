//! Reputation of an address as seller, buyer and oracle, read from the aggregates the indexer
//! keeps (`reputation`), never recomputed per request.
//!
//! The 0-5 score is computed by the database's `reputation_score(credit, weight)`
//! (migrations/0016_grounded_reputation.sql), the one definition every surface reads: a Bayesian
//! mean over evidence each piece of which weighs 0-1 by the value escrowed times the time it was
//! locked, at most 1 per counterparty, with five imaginary pieces at 3.0 before any history
//! (docs/api.md §Reputation).

use agentpact_contracts::{PactStatus, ReputationRole};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, U256};

use super::{Currency, ReadError, Reader};

/// A 0-5 score and the evidence it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Score {
    /// 0 to 5, rounded to two decimals.
    pub value: f64,
    /// The rated pacts (or verifications) behind it.
    pub rated: u64,
    /// The counterparties whose feedback is behind it.
    pub raters: u64,
    /// What the pacts and votes weigh together, each counterparty at most 1.
    pub weight: f64,
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
    /// The distinct counterparties behind them (for an oracle: the sellers).
    pub counterparties: u64,
    /// Their weights summed per counterparty, each counterparty at most 1.
    pub weight: f64,
    /// Their credits summed, each times its weight.
    pub credit: f64,
    /// Feedback ratings received in this role.
    pub feedback_count: u64,
    /// The distinct counterparties that gave them.
    pub feedback_raters: u64,
    /// Their mean rating, 1-5 (none without feedback).
    pub feedback_mean: Option<f64>,
    /// The counterparties' votes' weights summed: each what the paid pacts it rated weigh, at most 1.
    pub feedback_weight: f64,
    /// The counterparties' votes summed: each one's mean rating mapped from 1-5 onto 0-1, times
    /// its weight.
    pub feedback_votes: f64,
    /// The 0-5 score of this role alone.
    pub score: Score,
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
    /// The 0-5 score over all roles together.
    pub overall: Score,
}

impl Reputation {
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
                      feedback_weight::float8 AS "feedback_weight!", counterparties,
                      reputation_score(credit + feedback_credit, weight + feedback_weight)::float8 AS "score!",
                      reputation_score(sum(credit + feedback_credit) OVER (), sum(weight + feedback_weight) OVER ())::float8
                          AS "overall!"
               FROM reputation WHERE chain_id = $1 AND address = $2"#,
            i64_of(chain_id),
            address.as_slice(),
        )
        .fetch_all(self.pool())
        .await?;
        // Roles (or an address) without history score what no evidence scores.
        let prior = if rows.len() < ReputationRole::ALL.len() { self.prior_score().await? } else { 0.0 };
        let prior = Score { value: prior, ..Score::default() };
        let fresh = RoleReputation { score: prior, ..RoleReputation::default() };
        let mut rep = Reputation {
            address,
            as_seller: fresh.clone(),
            as_buyer: fresh.clone(),
            as_oracle: fresh,
            overall: prior,
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
                counterparties: count("counterparties", r.counterparties)?,
                score: Score::default(),
            };
            let score = |roles: &[&RoleReputation], value| Score {
                value,
                rated: roles.iter().map(|r| r.rated).sum(),
                raters: roles.iter().map(|r| r.feedback_raters).sum(),
                weight: roles.iter().map(|r| r.weight + r.feedback_weight).sum::<f64>(),
            };
            let role = RoleReputation { score: score(&[&role], r.score), ..role };
            *rep.role(&row, &r.role)? = role;
            rep.overall = score(&[&rep.as_seller, &rep.as_buyer, &rep.as_oracle], r.overall);
        }
        Ok(rep)
    }

    /// The score of an address without history (3.0), as `reputation_score` defines it.
    pub async fn prior_score(&self) -> Result<f64, ReadError> {
        Ok(sqlx::query_scalar!(r#"SELECT reputation_score(0, 0)::float8 AS "prior!""#)
            .fetch_one(self.pool())
            .await?)
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
