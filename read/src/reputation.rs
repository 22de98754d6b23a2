//! Reputation of an address as seller, buyer and oracle: the counts the indexer keeps per role
//! (`reputation`) beside the trusted scores of the ranking run's current generation
//! (`reputation_scores`, migrations/0022_trusted_reputation.sql), never recomputed per request
//! (docs/api.md §Reputation).
//!
//! A score is `reputation_score(Σ t·C, Σ t·W)` over the address's counterparties: each one's
//! evidence W (paid jobs above a value floor, with diminishing returns) and endorsement C, times
//! its trust t as a rater of that address (a personalised PageRank from the configured seeds that
//! never counts walks through the rated address). Without a row the address scores the prior,
//! `reputation_score(0, 0)` = 3.00. A viewer also trusts its own counterparties as far as it
//! endorsed them ([`Reader::reputation_seen_by`]); what a score rests on is [`crate::trust`].

use agentpact_contracts::{PactStatus, ReputationRole, closed_set};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, U256};
use sqlx::PgConnection;

use super::{Currency, ReadError, Reader};

/// The name of the score over every role together in `reputation_scores.role`.
pub(crate) const ALL_ROLES: &str = "all";

closed_set! {
    /// Whose trust a score weighs its counterparties by.
    #[derive(Default)]
    pub enum ScoreView {
        /// The market's: trust from the configured seeds alone, the same for everyone.
        #[default]
        Global => "GLOBAL",
        /// A viewer's: the market's, raised where the viewer itself endorsed a counterparty.
        Viewer => "VIEWER",
    }
}

/// A 0-5 score and the evidence it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Score {
    /// 0 to 5, rounded to two decimals.
    pub value: f64,
    /// The rated pacts (or verifications) behind it, as the role counts have them.
    pub rated: u64,
    /// The counterparties with evidence of it.
    pub raters: u64,
    /// Of those, the ones trusted as raters at all (trust > 0).
    pub trusted_raters: u64,
    /// The trusted weight: each counterparty's evidence (at most 5: 2 as seller, 2 as buyer, 1 as
    /// oracle) times its trust, summed.
    pub weight: f64,
    /// Whose trust weighed it.
    pub view: ScoreView,
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
    /// Feedback ratings received in this role.
    pub feedback_count: u64,
    /// The distinct counterparties that gave them.
    pub feedback_raters: u64,
    /// Their mean rating, 1-5 (none without feedback).
    pub feedback_mean: Option<f64>,
    /// The 0-5 score of this role alone (always the global view: a viewer's trust raises the
    /// score over all roles, [`Reputation::overall`]).
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
    /// The 0-5 score over all roles together, in the view asked for.
    pub overall: Score,
    /// The same in the global view (`overall` itself when no viewer was asked).
    pub global: Score,
    /// Who it was asked as seen by (none: the global view).
    pub viewer: Option<Address>,
    /// Whether the viewer is itself one of the counterparties behind `overall` (false in the
    /// global view).
    pub viewer_rated: bool,
    /// Of the counterparties behind `overall`, those the viewer itself endorsed: its own
    /// counterparties (0 in the global view).
    pub viewers_counterparties: u64,
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

    /// Paid pacts in every role together (completed ones).
    pub fn completed(&self) -> u64 {
        [&self.as_seller, &self.as_buyer].iter().map(|r| r.completed).sum()
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

impl Reader {
    /// The reputation of `address` on `chain_id` in the global view (zero counts and the prior
    /// score for an address with no history).
    pub async fn reputation(&self, chain_id: u64, address: Address) -> Result<Reputation, ReadError> {
        self.reputation_seen_by(chain_id, address, None).await
    }

    /// The reputation of `address` on `chain_id` as `viewer` sees it: its score over all roles
    /// weighs each counterparty u by `1` when u is the viewer, else by `max(t, min(1, C(viewer,
    /// u)))`, the viewer's own endorsement of u raising the market's trust. A viewer that
    /// endorsed none of the address's counterparties sees exactly the global score. Role scores
    /// stay global. Without a viewer, the global view. With one, its two reads share one
    /// snapshot ([`Reader::reputation_snapshot`] adds the basis and the run).
    pub async fn reputation_seen_by(
        &self,
        chain_id: u64,
        address: Address,
        viewer: Option<Address>,
    ) -> Result<Reputation, ReadError> {
        if viewer.is_none() {
            return reputation_on(&mut *self.pool().acquire().await?, chain_id, address, None).await;
        }
        let mut tx = self.snapshot().await?;
        let rep = reputation_on(&mut tx, chain_id, address, viewer).await?;
        tx.commit().await?;
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

/// [`Reader::reputation_seen_by`] on `conn`.
pub(crate) async fn reputation_on(
    conn: &mut PgConnection,
    chain_id: u64,
    address: Address,
    viewer: Option<Address>,
) -> Result<Reputation, ReadError> {
    let roles: Vec<&str> = ReputationRole::ALL.iter().map(|r| r.name()).chain([ALL_ROLES]).collect();
    let rows = sqlx::query!(
        r#"SELECT k.role AS "role!", coalesce(r.pacts, 0) AS "pacts!", coalesce(r.completed, 0) AS "completed!",
                  coalesce(r.refunded, 0) AS "refunded!", coalesce(r.disputed, 0) AS "disputed!",
                  coalesce(r.timed_out, 0) AS "timed_out!", coalesce(r.volume, 0)::text AS "volume!",
                  r.mean_score::float8 AS mean_score, r.agreement::float8 AS agreement,
                  coalesce(r.rated, 0) AS "rated!", coalesce(r.feedback_count, 0) AS "feedback_count!",
                  coalesce(r.feedback_raters, 0) AS "feedback_raters!", r.feedback_mean::float8 AS feedback_mean,
                  coalesce(s.score, reputation_score(0, 0))::float8 AS "score!",
                  coalesce(s.weight, 0) AS "weight!", coalesce(s.raters, 0) AS "raters!",
                  coalesce(s.trusted_raters, 0) AS "trusted_raters!"
           FROM unnest($3::text[]) AS k(role)
           LEFT JOIN reputation r ON r.chain_id = $1 AND r.address = $2 AND r.role = k.role
           LEFT JOIN reputation_scores s ON s.chain_id = $1 AND s.address = $2 AND s.role = k.role"#,
        i64_of(chain_id),
        address.as_slice(),
        &roles as &[&str],
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut rep = Reputation {
        address,
        as_seller: RoleReputation::default(),
        as_buyer: RoleReputation::default(),
        as_oracle: RoleReputation::default(),
        overall: Score::default(),
        global: Score::default(),
        viewer,
        viewer_rated: false,
        viewers_counterparties: 0,
    };
    for r in rows {
        let row = Cells { table: "reputation", key: format!("chain {chain_id} {address} as {}", r.role) };
        let count = |column, n: i32| row.int::<u64>(column, n);
        let score = Score {
            value: r.score,
            rated: count("rated", r.rated)?,
            raters: count("reputation_scores.raters", r.raters)?,
            trusted_raters: count("reputation_scores.trusted_raters", r.trusted_raters)?,
            weight: r.weight,
            view: ScoreView::Global,
        };
        if r.role == ALL_ROLES {
            rep.overall = score;
            continue;
        }
        *rep.role(&row, &r.role)? = RoleReputation {
            pacts: count("pacts", r.pacts)?,
            completed: count("completed", r.completed)?,
            refunded: count("refunded", r.refunded)?,
            disputed: count("disputed", r.disputed)?,
            timed_out: count("timed_out", r.timed_out)?,
            volume: row.u256("volume", &r.volume)?,
            mean_score: r.mean_score,
            agreement: r.agreement,
            feedback_count: count("feedback_count", r.feedback_count)?,
            feedback_raters: count("feedback_raters", r.feedback_raters)?,
            feedback_mean: r.feedback_mean,
            score,
        };
    }
    rep.overall.rated = [&rep.as_seller, &rep.as_buyer, &rep.as_oracle].iter().map(|r| r.score.rated).sum();
    rep.global = rep.overall;
    if let Some(viewer) = viewer {
        let seen = super::trust::basis_on(conn, chain_id, address, Some(viewer), 0).await?;
        rep.overall.view = ScoreView::Viewer;
        rep.viewer_rated = seen.viewer_rated;
        rep.viewers_counterparties = seen.viewers_counterparties;
        // Nothing the viewer endorsed raised a rater: the stored global score, exactly.
        if seen.raised {
            rep.overall = Score { rated: rep.overall.rated, ..seen.score };
        }
    }
    Ok(rep)
}
