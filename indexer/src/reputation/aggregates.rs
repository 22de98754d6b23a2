//! The per-address aggregates (`reputation`: counts by role) and the per-pair evidence
//! (`reputation_pairs`: what each counterparty's pacts and ratings say of an address in a role,
//! migrations/0022_trusted_reputation.sql), recomputed for a set of ratees in one statement that
//! reads each pact once.
//!
//! Per pair (rater u, ratee v, role), from the pacts where u was v's counterparty (for an oracle,
//! the seller): `jobs` n = Σ q·m over the rated pacts, q = `pact_evidence.weight` (the payment
//! against a one-dollar floor, at most 1), m = the seller's share of a settlement and 1 otherwise;
//! `credit_sum` = Σ q·m·credit ([`super::credit`]); `rated_jobs` = Σ q over the paid pacts that
//! are not settlements which u rated (AgentRegistry feedback), `ratings` and `rating_mean` over
//! every rating u gave v in that role (shown; the vote weighs only the weighed ones). Then
//! `evidence` W = e + f and `endorsement` C = e·(credit_sum / n) + f·(vote − 1) / 4, with
//! e = min(1, log2(1 + n) / 2), f = min(1, log2(1 + rated_jobs) / 2): the SQL functions
//! `reputation_evidence` and `reputation_endorsement`, their one definition.

use agentpact_contracts::{PactStatus, ReputationRole};
use sqlx::PgConnection;

use super::credit::{Rated, SETTLED};

/// Deletes and recomputes the `reputation` rows and the `reputation_pairs` rows of the ratees
/// `addresses` (every ratee when `all`) on chain `chain`.
pub(super) async fn refresh(
    conn: &mut PgConnection,
    chain: i64,
    all: bool,
    addresses: &[Vec<u8>],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM reputation WHERE chain_id = $1 AND ($2 OR address = ANY($3))",
        chain,
        all,
        addresses
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "DELETE FROM reputation_pairs WHERE chain_id = $1 AND ($2 OR ratee = ANY($3))",
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
                   p.seller_share, p.payment, p.currency, p.final_score::numeric AS score, NULL::numeric AS miss,
                   (c.base + c.by_score * coalesce(p.final_score / 100.0, 1)
                    + c.by_share * coalesce(p.seller_share, 0) / 10000.0) / 100 AS credit
            FROM pacts p LEFT JOIN credits c ON c.outcome = p.outcome AND c.role = $13
            WHERE p.chain_id = $1 AND p.buyer IS NOT NULL AND ($2 OR p.buyer = ANY($3))
            UNION ALL
            SELECT p.pact_id, p.seller, $14, p.buyer, p.status, p.disputed_at, p.outcome, p.seller_share, p.payment,
                   p.currency, p.final_score, NULL,
                   (c.base + c.by_score * coalesce(p.final_score / 100.0, 1)
                    + c.by_share * coalesce(p.seller_share, 0) / 10000.0) / 100
            FROM pacts p LEFT JOIN credits c ON c.outcome = p.outcome AND c.role = $14
            WHERE p.chain_id = $1 AND p.seller IS NOT NULL AND ($2 OR p.seller = ANY($3))
            UNION ALL
            -- An oracle is rated only where another oracle scored too: a sole oracle agrees with itself.
            SELECT p.pact_id, v.oracle, $15, p.seller, p.status, p.disputed_at, p.outcome, p.seller_share, p.payment,
                   p.currency, v.score, abs(v.score - p.final_score),
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
        -- What each counterparty's pacts say: a settlement weighs the share that was paid.
        by_pact AS (
            SELECT r.address, r.role, r.counterparty, r.credit, e.paid, e.pact_id IS NOT NULL AND r.credit IS NOT NULL AS rated,
                   e.weight * CASE WHEN r.outcome = $16 THEN coalesce(r.seller_share, 0) / 10000.0 ELSE 1 END AS jobs
            FROM roles r LEFT JOIN pact_evidence e ON e.chain_id = $1 AND e.pact_id = r.pact_id
        ),
        pair_pacts AS (
            SELECT address AS ratee, role, counterparty AS rater, count(*) AS pacts,
                   count(*) FILTER (WHERE paid) AS paid_pacts, count(*) FILTER (WHERE rated) AS rated,
                   coalesce(sum(jobs) FILTER (WHERE rated), 0) AS jobs,
                   coalesce(sum(jobs * credit) FILTER (WHERE rated), 0) AS credit_sum
            FROM by_pact WHERE counterparty IS NOT NULL GROUP BY 1, 2, 3
        ),
        -- Feedback received, in the role the ratee had in the pact. Every rating is shown; only
        -- those of paid pacts that are not settlements weigh (a refund or an agreement cannot
        -- be used to grief).
        pair_ratings AS (
            SELECT f.ratee, CASE WHEN f.ratee = e.seller THEN $14 ELSE $13 END AS role, f.rater,
                   count(*) AS ratings, avg(f.rating) AS mean,
                   coalesce(sum(e.weight) FILTER (WHERE e.paid AND e.outcome IS DISTINCT FROM $16), 0) AS rated_jobs,
                   avg(f.rating) FILTER (WHERE e.paid AND e.outcome IS DISTINCT FROM $16) AS vote_mean
            FROM feedback f JOIN pact_evidence e USING (chain_id, pact_id)
            WHERE f.chain_id = $1 AND ($2 OR f.ratee = ANY($3))
            GROUP BY 1, 2, 3
        ),
        pairs AS (
            SELECT ratee, role, rater, coalesce(a.pacts, 0) AS pacts, coalesce(a.paid_pacts, 0) AS paid_pacts,
                   coalesce(a.rated, 0) AS rated, coalesce(a.jobs, 0) AS jobs, coalesce(a.credit_sum, 0) AS credit_sum,
                   coalesce(b.rated_jobs, 0) AS rated_jobs, coalesce(b.ratings, 0) AS ratings, b.mean, b.vote_mean
            FROM pair_pacts a FULL JOIN pair_ratings b USING (ratee, role, rater)
        ),
        written AS (
            INSERT INTO reputation_pairs (chain_id, ratee, role, rater, pacts, paid_pacts, jobs, credit_sum, rated_jobs,
                                          ratings, rating_mean, evidence, endorsement)
            SELECT $1, ratee, role, rater, pacts, paid_pacts, jobs, credit_sum, rated_jobs, ratings, round(mean, 4),
                   reputation_evidence(jobs, rated_jobs),
                   reputation_endorsement(jobs, credit_sum, rated_jobs, vote_mean)
            FROM pairs WHERE pacts > 0 OR ratings > 0
        ),
        received AS (
            SELECT ratee AS address, role, sum(rated) AS rated, sum(ratings) AS given,
                   count(*) FILTER (WHERE ratings > 0) AS raters,
                   round(sum(mean * ratings) / nullif(sum(ratings), 0), 2) AS mean
            FROM pairs GROUP BY 1, 2
        )
        INSERT INTO reputation
            (chain_id, address, role, pacts, completed, refunded, disputed, timed_out, volume, mean_score,
             agreement, rated, feedback_count, feedback_raters, feedback_mean)
        SELECT $1, o.address, o.role, o.pacts, o.completed, o.refunded, o.disputed, o.timed_out, o.volume,
               o.mean_score, o.agreement, coalesce(f.rated, 0), coalesce(f.given, 0), coalesce(f.raters, 0), f.mean
        FROM outcomes o LEFT JOIN received f USING (address, role)
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
        SETTLED.name(),
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "INSERT INTO reputation_runs (chain_id, dirty) VALUES ($1, true)
         ON CONFLICT (chain_id) DO UPDATE SET dirty = true",
        chain
    )
    .execute(conn)
    .await
    .map(drop)
}
