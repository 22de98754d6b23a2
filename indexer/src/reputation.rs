//! Per-address reputation aggregates (`reputation`), recomputed from the projections in one
//! statement for a set of addresses. Batches only [`mark`] the pacts they touched; the last batch
//! of each pass recomputes their parties once ([`refresh_pending`]) in its own transaction, as
//! does the start of each session (for notes a session that stopped mid-pass left behind), so the
//! aggregates are consistent with the pacts, verifications and feedback they summarise whenever
//! the checkpoint is at the head the pass saw, after a reorg as after any pass (during a
//! multi-batch backfill they trail by at most that pass).
//!
//! Besides the counts, each row holds the inputs of the 0-5 score (docs/api.md §Reputation):
//! `rated`, the finished pacts (or scored verifications) that say something about the address in
//! that role, and `credit`, the sum of their credits between 0 and 1. A seller earns the final
//! oracle score of an approved pact (1 without oracles) and 1 for a dispute won; a buyer earns 1
//! for approving, 0.75 for letting the review period lapse, 1 for a dispute won or a timeout
//! claimed against a silent seller, 0 for a dispute lost; an unresolved dispute earns both 0.5; a
//! ruling that divides the pot earns each side its share of it, and a settlement earns the seller
//! its share of the payment and the buyer 1 (it paid what the seller agreed it owed);
//! an oracle earns 1 - |its score - the final score| / 100. Cancelled and expired pacts are not rated.
//!
//! Feedback (AgentRegistry) adds, per role, the ratings the address received as that party of a
//! finished pact: their count, mean, the number of distinct counterparties (`feedback_raters`) and
//! `feedback_credit`, the sum over those counterparties of (their mean rating - 1) / 4. Each
//! counterparty is one vote, however often it rated: a flood from one counterparty counts once.
//!
//! Evidence is weighted by the value escrowed, so that a farm of tiny self-dealt pacts buys no
//! score: a pact weighs `min(1, payment / FULL_WEIGHT_WEI)` (`weight` sums them, `credit` sums
//! weight x credit), and a counterparty's vote weighs `min(1, the payments of the pacts it rated /
//! FULL_WEIGHT_WEI)` (`feedback_weight`, `feedback_credit`). The API divides by the weights, not
//! the counts. A pact in a token counts fully at [`FULL_WEIGHT_TOKEN_UNITS`] whole units of it
//! (its decimals from `currencies`): the deployer allows dollar stablecoins (USDC), and 25 of them
//! weigh about what 0.01 ETH does. `volume` is the completed payment of ETH pacts, in wei: amounts
//! in different currencies are never added together.

use agentpact_contracts::{Outcome, PactStatus, ReputationRole};
use alloy::primitives::U256;
use sqlx::PgConnection;

use agentpact_schema::{Cells, i64_of};

use crate::IndexError;

/// The payment, in wei, at and above which a pact (or a counterparty's vote) counts fully toward
/// reputation: 0.01 ETH. A pact of 10 wei weighs 10⁻¹⁵ of an ordinary one.
pub const FULL_WEIGHT_WEI: u64 = 10_000_000_000_000_000;

/// The whole units of an allowed token at and above which a pact in it counts fully: 25 (USDC).
pub const FULL_WEIGHT_TOKEN_UNITS: i64 = 25;

/// Which addresses to refresh.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// The buyers, sellers and oracles of these pacts (the ones a batch touched).
    Pacts(&'a [U256]),
    /// Every address of the chain (after a reorg).
    All,
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
    let ids = sqlx::query_scalar!(
        r#"DELETE FROM reputation_pending WHERE chain_id = $1 RETURNING pact_id::text AS "id!""#,
        i64_of(chain_id)
    )
    .fetch_all(&mut *conn)
    .await?;
    let cells = Cells { table: "reputation_pending", key: format!("chain {chain_id}") };
    let pacts = ids.iter().map(|id| cells.u256("pact_id", id)).collect::<Result<Vec<U256>, _>>()?;
    Ok(refresh(conn, chain_id, Scope::Pacts(&pacts)).await?)
}

/// Recomputes the aggregates of `scope` on `chain_id` as buyer, seller and oracle.
pub async fn refresh(conn: &mut PgConnection, chain_id: u64, scope: Scope<'_>) -> Result<(), sqlx::Error> {
    let chain = i64_of(chain_id);
    let (all, addresses): (bool, Vec<Vec<u8>>) = match scope {
        Scope::All => (true, Vec::new()),
        Scope::Pacts([]) => return Ok(()),
        Scope::Pacts(pacts) => {
            let ids: Vec<String> = pacts.iter().map(U256::to_string).collect();
            let addresses = sqlx::query_scalar!(
                r#"SELECT buyer AS "a!" FROM pacts WHERE chain_id = $1 AND pact_id = ANY($2::text[]::numeric[]) AND buyer IS NOT NULL
                   UNION SELECT seller FROM pacts WHERE chain_id = $1 AND pact_id = ANY($2::text[]::numeric[]) AND seller IS NOT NULL
                   UNION SELECT oracle FROM pact_oracles WHERE chain_id = $1 AND pact_id = ANY($2::text[]::numeric[])"#,
                chain,
                &ids
            )
            .fetch_all(&mut *conn)
            .await?;
            (false, addresses)
        }
    };
    sqlx::query!(
        "DELETE FROM reputation WHERE chain_id = $1 AND ($2 OR address = ANY($3))",
        chain,
        all,
        &addresses
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"
        WITH fulls AS (
            SELECT address AS currency,
                   CASE WHEN address = $5 THEN $4::text::numeric ELSE $6::bigint * 10::numeric ^ decimals END AS full
            FROM currencies WHERE chain_id = $1
        ),
        roles AS (
            SELECT p.buyer AS address, $17 AS role, p.status, p.disputed_at, p.outcome, p.payment, p.currency,
                   p.final_score::numeric AS score, NULL::numeric AS miss,
                   CASE p.outcome WHEN $7 THEN 1 WHEN $8 THEN 0.75 WHEN $9 THEN 1
                        WHEN $10 THEN 1 WHEN $11 THEN 0 WHEN $12 THEN 0.5
                        WHEN $13 THEN 1 - p.seller_share / 10000.0 WHEN $14 THEN 1 END AS credit
            FROM pacts p WHERE p.chain_id = $1 AND p.buyer IS NOT NULL AND ($2 OR p.buyer = ANY($3))
            UNION ALL
            SELECT p.seller, $18, p.status, p.disputed_at, p.outcome, p.payment, p.currency, p.final_score, NULL,
                   CASE p.outcome WHEN $7 THEN coalesce(p.final_score / 100.0, 1)
                        WHEN $8 THEN coalesce(p.final_score / 100.0, 1) WHEN $11 THEN 1
                        WHEN $9 THEN 0 WHEN $10 THEN 0 WHEN $12 THEN 0.5
                        WHEN $13 THEN p.seller_share / 10000.0 WHEN $14 THEN p.seller_share / 10000.0 END
            FROM pacts p WHERE p.chain_id = $1 AND p.seller IS NOT NULL AND ($2 OR p.seller = ANY($3))
            UNION ALL
            SELECT v.oracle, $19, p.status, p.disputed_at, p.outcome, p.payment, p.currency, v.score,
                   abs(v.score - p.final_score), 1 - abs(v.score - p.final_score) / 100.0
            FROM verifications v JOIN pacts p USING (chain_id, pact_id)
            WHERE v.chain_id = $1 AND ($2 OR v.oracle = ANY($3))
        ),
        weighted AS (SELECT r.*, least(1, r.payment / f.full) AS w FROM roles r JOIN fulls f USING (currency)),
        outcomes AS (
            SELECT address, role,
                   count(*) AS pacts,
                   count(*) FILTER (WHERE status = $15) AS completed,
                   count(*) FILTER (WHERE status = $16) AS refunded,
                   count(*) FILTER (WHERE disputed_at IS NOT NULL) AS disputed,
                   count(*) FILTER (WHERE outcome IN ($10, $12)) AS timed_out,
                   coalesce(sum(payment) FILTER (WHERE status = $15 AND currency = $5), 0) AS volume,
                   round(avg(score), 2) AS mean_score,
                   round(100 - avg(miss), 2) AS agreement,
                   count(credit) AS rated,
                   coalesce(sum(w * credit), 0) AS credit,
                   coalesce(sum(w) FILTER (WHERE credit IS NOT NULL), 0) AS weight
            FROM weighted GROUP BY address, role
        ),
        -- Feedback received, in the role the ratee had in the pact; one vote per counterparty.
        per_rater AS (
            SELECT f.ratee AS address, CASE WHEN f.ratee = p.seller THEN $18 ELSE $17 END AS role,
                   f.rater, count(*) AS given, avg(f.rating) AS mean,
                   least(1, sum(p.payment / w.full)) AS w
            FROM feedback f JOIN pacts p USING (chain_id, pact_id) JOIN fulls w ON w.currency = p.currency
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
             agreement, rated, credit, weight, feedback_count, feedback_raters, feedback_mean, feedback_credit,
             feedback_weight)
        SELECT $1, o.address, o.role, o.pacts, o.completed, o.refunded, o.disputed, o.timed_out, o.volume,
               o.mean_score, o.agreement, o.rated, o.credit, o.weight, coalesce(f.given, 0), coalesce(f.raters, 0),
               f.mean, coalesce(f.credit, 0), coalesce(f.weight, 0)
        FROM outcomes o LEFT JOIN received f USING (address, role)
        "#,
        chain,
        all,
        &addresses,
        FULL_WEIGHT_WEI.to_string(),
        alloy::primitives::Address::ZERO.as_slice(),
        FULL_WEIGHT_TOKEN_UNITS,
        Outcome::Approved.name(),
        Outcome::AutoApproved.name(),
        Outcome::BuyerWon.name(),
        Outcome::Timeout.name(),
        Outcome::SellerWon.name(),
        Outcome::DisputeTimeout.name(),
        Outcome::Split.name(),
        Outcome::Settled.name(),
        i16::from(PactStatus::Completed.code()),
        i16::from(PactStatus::Refunded.code()),
        ReputationRole::Buyer.name(),
        ReputationRole::Seller.name(),
        ReputationRole::Oracle.name(),
    )
    .execute(conn)
    .await
    .map(drop)
}
