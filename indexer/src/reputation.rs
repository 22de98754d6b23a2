//! Per-address reputation aggregates (`reputation`) and per-agent ERC-8004 aggregates
//! (`erc8004_reputation`), recomputed from the projections in one statement each for a set of
//! addresses. Batches only [`mark`] the pacts they touched (the ERC-8004 projection marks its
//! agents in `erc8004_pending`); the last batch of each pass recomputes them once
//! ([`refresh_pending`]) in its own transaction, as does the start of each session (for notes a
//! session that stopped mid-pass left behind), so the aggregates are consistent with what they
//! summarise whenever the checkpoint is at the head the pass saw, after a reorg as after any pass.
//!
//! What a finished pact proves is defined once, by the view `pact_evidence`
//! (migrations/0016_grounded_reputation.sql): its weight is the value escrowed times the time it
//! was really locked (`min(1, payment / 0.01 ETH × locked / 1 day)`, 25 whole units of a token for
//! 0.01 ETH), and it is `paid` when the seller received something. The 0-5 score over evidence is
//! defined once too, by the SQL function `reputation_score` (docs/api.md §Reputation).
//!
//! Each row holds a role's inputs of that score: `rated`, the finished pacts (or scored
//! verifications) that say something about the address in that role; their credits between 0 and 1
//! (a seller: the final oracle score of an approved pact, 1 without oracles, 1 for a dispute won,
//! its share of a split or settlement, 0 for a dispute lost or a deadline missed; a buyer: 1 for
//! approving, 0.75 for letting the review period lapse, 1 for a dispute won or a timeout claimed
//! against a silent seller, 0 for a dispute lost, its share of a split, 1 for a settlement; an
//! oracle: 1 - |its score - the final score| / 100, and only where another oracle scored too; a
//! dispute nobody ruled on, and a cancelled or expired pact, are not rated); grouped **by
//! counterparty** (the other party; for an oracle, the seller), each counterparty's pacts weighing
//! at most 1 together: `weight` sums those capped weights and `credit` the credits times them.
//!
//! Feedback (AgentRegistry) adds, per role, the ratings the address received as that party of a
//! finished pact: their count, mean, the distinct counterparties (`feedback_raters`) and
//! `feedback_credit`, the sum over those counterparties of (their mean rating - 1) / 4 times their
//! vote's weight: what the paid pacts they rated weigh, at most 1. A rating of a refunded pact is
//! counted and shown but weighs nothing. `volume` is the completed payment of ETH pacts, in wei.
//!
//! ERC-8004 feedback is grounded when the client paid the agent's wallet through a pact that
//! settled (the view `erc8004_grounding`); per agent the raw figures (unrevoked feedback, clients,
//! mean value) and the grounded ones (one vote per client, weighing what its paid pacts weigh).

use agentpact_contracts::{Outcome, PactStatus, ReputationRole};
use alloy::primitives::U256;
use sqlx::PgConnection;

use agentpact_schema::i64_of;

use crate::IndexError;

/// Which addresses and agents to refresh.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// These addresses (the buyers, sellers and oracles of the pacts a pass touched), the ERC-8004
    /// agents whose wallets they are, and these ERC-8004 agents (ids as decimal text).
    Marked {
        /// The addresses.
        addresses: &'a [Vec<u8>],
        /// The ERC-8004 agents.
        agents: &'a [String],
    },
    /// Every address and agent of the chain (after a reorg).
    All,
}

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

/// The table of outcomes (module docs): a new [`Outcome`] does not build until it is scored here.
const fn reading(outcome: Outcome) -> Reading {
    use Credit::{BuyerShare, Percent, Score, SellerShare};
    let (buyer, seller, timed_out) = match outcome {
        Outcome::Approved => (Some(Percent(100)), Some(Score), false),
        Outcome::AutoApproved => (Some(Percent(75)), Some(Score), false),
        Outcome::SellerWon => (Some(Percent(0)), Some(Percent(100)), false),
        Outcome::BuyerWon => (Some(Percent(100)), Some(Percent(0)), false),
        Outcome::Split => (Some(BuyerShare), Some(SellerShare), false),
        Outcome::Settled => (Some(Percent(100)), Some(SellerShare), false),
        Outcome::Timeout => (Some(Percent(100)), Some(Percent(0)), true),
        Outcome::DisputeTimeout => (None, None, true),
        Outcome::Cancelled | Outcome::Expired => (None, None, false),
    };
    Reading { buyer, seller, timed_out }
}

/// [`reading`] of every outcome, as the reputation query binds it: one row per rated
/// (outcome, role) with its credit's terms, and the outcomes that count as timed out.
#[derive(Default)]
struct Rated {
    outcomes: Vec<&'static str>,
    roles: Vec<&'static str>,
    base: Vec<i32>,
    by_score: Vec<i32>,
    by_share: Vec<i32>,
    timed_out: Vec<&'static str>,
}

impl Rated {
    fn new() -> Self {
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

/// Notes that the parties of `pacts` need their aggregates recomputed (by [`refresh_pending`]).
pub async fn mark(conn: &mut PgConnection, chain_id: u64, pacts: &[U256]) -> Result<(), sqlx::Error> {
    if pacts.is_empty() {
        return Ok(());
    }
    let ids: Vec<String> = pacts.iter().map(U256::to_string).collect();
    sqlx::query!(
        "INSERT INTO reputation_pending (chain_id, pact_id)
         SELECT $1, id::numeric FROM UNNEST($2::text[]) AS u(id) ON CONFLICT DO NOTHING",
        i64_of(chain_id),
        &ids
    )
    .execute(conn)
    .await
    .map(drop)
}

/// Recomputes the aggregates of every party of the pacts [`mark`]ed on `chain_id`, and clears the
/// marks.
pub async fn refresh_pending(conn: &mut PgConnection, chain_id: u64) -> Result<(), IndexError> {
    // The parties, not the pacts, come back: a backfill marks every pact it indexed (a million
    // ids held at once cost the process ~70 MB at its end), while parties are few.
    let addresses = sqlx::query_scalar!(
        r#"WITH done AS (DELETE FROM reputation_pending WHERE chain_id = $1 RETURNING pact_id)
           SELECT p.buyer AS "a!" FROM pacts p JOIN done USING (pact_id) WHERE p.chain_id = $1 AND p.buyer IS NOT NULL
           UNION SELECT p.seller FROM pacts p JOIN done USING (pact_id) WHERE p.chain_id = $1 AND p.seller IS NOT NULL
           UNION SELECT po.oracle FROM pact_oracles po JOIN done USING (pact_id) WHERE po.chain_id = $1"#,
        i64_of(chain_id)
    )
    .fetch_all(&mut *conn)
    .await?;
    let agents = sqlx::query_scalar!(
        r#"DELETE FROM erc8004_pending WHERE chain_id = $1 RETURNING agent_id::text AS "id!""#,
        i64_of(chain_id)
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(refresh(conn, chain_id, Scope::Marked { addresses: &addresses, agents: &agents }).await?)
}

/// Recomputes the aggregates of `scope` on `chain_id` as buyer, seller and oracle.
pub async fn refresh(conn: &mut PgConnection, chain_id: u64, scope: Scope<'_>) -> Result<(), sqlx::Error> {
    let chain = i64_of(chain_id);
    let (all, addresses, agents): (bool, &[Vec<u8>], &[String]) = match scope {
        Scope::All => (true, &[], &[]),
        Scope::Marked { addresses: [], agents: [] } => return Ok(()),
        Scope::Marked { addresses, agents } => (false, addresses, agents),
    };
    sqlx::query!(
        "DELETE FROM reputation WHERE chain_id = $1 AND ($2 OR address = ANY($3))",
        chain,
        all,
        addresses
    )
    .execute(&mut *conn)
    .await?;
    let rated = Rated::new();
    sqlx::query!(
        r#"
        WITH credits AS (
            SELECT * FROM unnest($5::text[], $6::text[], $7::int[], $8::int[], $9::int[])
                     AS c(outcome, role, base, by_score, by_share)
        ),
        roles AS (
            SELECT p.pact_id, p.buyer AS address, $13 AS role, p.seller AS counterparty, p.status, p.disputed_at, p.outcome,
                   p.payment, p.currency, p.final_score::numeric AS score, NULL::numeric AS miss,
                   (c.base + c.by_score * coalesce(p.final_score / 100.0, 1)
                    + c.by_share * coalesce(p.seller_share, 0) / 10000.0) / 100 AS credit
            FROM pacts p LEFT JOIN credits c ON c.outcome = p.outcome AND c.role = $13
            WHERE p.chain_id = $1 AND p.buyer IS NOT NULL AND ($2 OR p.buyer = ANY($3))
            UNION ALL
            SELECT p.pact_id, p.seller, $14, p.buyer, p.status, p.disputed_at, p.outcome, p.payment, p.currency, p.final_score, NULL,
                   (c.base + c.by_score * coalesce(p.final_score / 100.0, 1)
                    + c.by_share * coalesce(p.seller_share, 0) / 10000.0) / 100
            FROM pacts p LEFT JOIN credits c ON c.outcome = p.outcome AND c.role = $14
            WHERE p.chain_id = $1 AND p.seller IS NOT NULL AND ($2 OR p.seller = ANY($3))
            UNION ALL
            -- An oracle is rated only where another oracle scored too: a sole oracle agrees with itself.
            SELECT p.pact_id, v.oracle, $15, p.seller, p.status, p.disputed_at, p.outcome, p.payment, p.currency, v.score,
                   abs(v.score - p.final_score),
                   CASE WHEN p.score_count >= 2 THEN 1 - abs(v.score - p.final_score) / 100.0 END
            FROM verifications v JOIN pacts p USING (chain_id, pact_id)
            WHERE v.chain_id = $1 AND ($2 OR v.oracle = ANY($3))
        ),
        outcomes AS (
            SELECT address, role,
                   count(*) AS pacts,
                   count(*) FILTER (WHERE status = $11) AS completed,
                   count(*) FILTER (WHERE status = $12) AS refunded,
                   count(*) FILTER (WHERE disputed_at IS NOT NULL) AS disputed,
                   count(*) FILTER (WHERE outcome = ANY($10)) AS timed_out,
                   coalesce(sum(payment) FILTER (WHERE status = $11 AND currency = $4), 0) AS volume,
                   round(avg(score), 2) AS mean_score,
                   round(100 - avg(miss), 2) AS agreement
            FROM roles GROUP BY address, role
        ),
        -- Evidence by counterparty: each counterparty's pacts weigh at most 1 together.
        by_counterparty AS (
            SELECT r.address, r.role, r.counterparty, count(*) AS rated, sum(e.weight) AS w,
                   sum(e.weight * r.credit) AS wc
            FROM roles r JOIN pact_evidence e ON e.chain_id = $1 AND e.pact_id = r.pact_id
            WHERE r.credit IS NOT NULL
            GROUP BY 1, 2, 3
        ),
        evidence AS (
            SELECT address, role, sum(rated) AS rated, count(*) FILTER (WHERE w > 0) AS counterparties,
                   sum(least(1, w)) AS weight,
                   sum(CASE WHEN w > 0 THEN wc * least(1, w) / w ELSE 0 END) AS credit
            FROM by_counterparty GROUP BY 1, 2
        ),
        -- Feedback received, in the role the ratee had in the pact; one vote per counterparty,
        -- weighing what the paid pacts it rated weigh (at most 1). A rating of a pact that paid the
        -- seller nothing (a refund) is shown but weighs nothing.
        per_rater AS (
            SELECT f.ratee AS address, CASE WHEN f.ratee = e.seller THEN $14 ELSE $13 END AS role,
                   f.rater, count(*) AS given, avg(f.rating) AS mean,
                   least(1, coalesce(sum(e.weight) FILTER (WHERE e.paid), 0)) AS w
            FROM feedback f JOIN pact_evidence e USING (chain_id, pact_id)
            WHERE f.chain_id = $1 AND ($2 OR f.ratee = ANY($3))
            GROUP BY 1, 2, 3
        ),
        received AS (
            SELECT address, role, sum(given) AS given, count(*) AS raters,
                   round(sum(mean * given) / sum(given), 2) AS mean, sum(w * (mean - 1) / 4) AS credit,
                   sum(w) AS weight
            FROM per_rater GROUP BY address, role
        )
        INSERT INTO reputation
            (chain_id, address, role, pacts, completed, refunded, disputed, timed_out, volume, mean_score,
             agreement, rated, counterparties, credit, weight, feedback_count, feedback_raters, feedback_mean,
             feedback_credit, feedback_weight)
        SELECT $1, o.address, o.role, o.pacts, o.completed, o.refunded, o.disputed, o.timed_out, o.volume,
               o.mean_score, o.agreement, coalesce(v.rated, 0), coalesce(v.counterparties, 0),
               coalesce(v.credit, 0), coalesce(v.weight, 0), coalesce(f.given, 0), coalesce(f.raters, 0),
               f.mean, coalesce(f.credit, 0), coalesce(f.weight, 0)
        FROM outcomes o LEFT JOIN evidence v USING (address, role) LEFT JOIN received f USING (address, role)
        "#,
        chain,
        all,
        addresses,
        alloy::primitives::Address::ZERO.as_slice(),
        &rated.outcomes as &[&str],
        &rated.roles as &[&str],
        &rated.base,
        &rated.by_score,
        &rated.by_share,
        &rated.timed_out as &[&str],
        i16::from(PactStatus::Completed.code()),
        i16::from(PactStatus::Refunded.code()),
        ReputationRole::Buyer.name(),
        ReputationRole::Seller.name(),
        ReputationRole::Oracle.name(),
    )
    .execute(&mut *conn)
    .await?;
    refresh_erc8004(conn, chain, all, addresses, agents).await
}

/// Recomputes the ERC-8004 aggregates of every agent (`all`), or of `agents` and of the agents
/// whose wallet is one of `wallets` (paid through a pact just settled: its grounding may change).
async fn refresh_erc8004(
    conn: &mut PgConnection,
    chain: i64,
    all: bool,
    wallets: &[Vec<u8>],
    agents: &[String],
) -> Result<(), sqlx::Error> {
    let ids = sqlx::query_scalar!(
        r#"SELECT agent_id::text AS "id!" FROM erc8004_agent_state
           WHERE chain_id = $1 AND ($2 OR wallet = ANY($3) OR agent_id = ANY($4::text[]::numeric[]))
           UNION SELECT DISTINCT agent_id::text FROM erc8004_feedback WHERE chain_id = $1 AND $2"#,
        chain,
        all,
        wallets,
        agents
    )
    .fetch_all(&mut *conn)
    .await?;
    let ids: Vec<String> = ids.into_iter().chain(agents.iter().cloned()).collect();
    sqlx::query!(
        "DELETE FROM erc8004_reputation WHERE chain_id = $1 AND ($2 OR agent_id = ANY($3::text[]::numeric[]))",
        chain,
        all,
        &ids
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"
        WITH live AS (
            SELECT f.agent_id, f.client, f.value / 10::numeric ^ f.value_decimals AS value, g.vote, g.weight,
                   g.grounding_pacts IS NOT NULL AS grounded
            FROM erc8004_feedback f
            JOIN erc8004_grounding g USING (chain_id, agent_id, client, feedback_index)
            WHERE f.chain_id = $1 AND f.agent_id = ANY($2::text[]::numeric[]) AND NOT g.revoked
        ),
        clients AS (
            SELECT agent_id, client, count(*) FILTER (WHERE grounded) AS given, avg(vote) FILTER (WHERE grounded) AS vote,
                   max(weight) AS weight
            FROM live GROUP BY agent_id, client
        ),
        raw AS (
            SELECT agent_id, count(*) AS feedback, count(DISTINCT client) AS clients, avg(value) AS mean_value
            FROM live GROUP BY agent_id
        ),
        grounded AS (
            SELECT agent_id, coalesce(sum(given), 0) AS grounded, count(*) FILTER (WHERE given > 0) AS grounded_clients,
                   coalesce(sum(weight), 0) AS weight, coalesce(sum(weight * vote) FILTER (WHERE given > 0), 0) AS credit
            FROM clients GROUP BY agent_id
        )
        INSERT INTO erc8004_reputation (chain_id, agent_id, feedback, clients, mean_value, grounded,
                                        grounded_clients, grounded_weight, grounded_credit, grounded_score)
        SELECT $1, a.id, coalesce(r.feedback, 0), coalesce(r.clients, 0), r.mean_value, coalesce(g.grounded, 0),
               coalesce(g.grounded_clients, 0), coalesce(g.weight, 0), coalesce(g.credit, 0),
               reputation_score(coalesce(g.credit, 0), coalesce(g.weight, 0))
        FROM (SELECT DISTINCT unnest($2::text[])::numeric AS id) a
        LEFT JOIN raw r ON r.agent_id = a.id LEFT JOIN grounded g ON g.agent_id = a.id
        ON CONFLICT (chain_id, agent_id) DO NOTHING
        "#,
        chain,
        &ids
    )
    .execute(conn)
    .await
    .map(drop)
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
}
