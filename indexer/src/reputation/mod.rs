//! Reputation (docs/api.md §Reputation; the design: docs/proposals/53-reputation.md). Two layers.
//!
//! In the events' transaction: batches only [`mark`] the pacts they touched (the ERC-8004
//! projection marks its agents in `erc8004_pending`); the last batch of each pass recomputes them
//! once ([`refresh_pending`]), as does the start of each session (for notes a session that stopped
//! mid-pass left behind), so what is kept is consistent with the projections whenever the
//! checkpoint is at the head the pass saw, after a reorg as after any pass. What is kept:
//! per-address counts by role (`reputation`), per-pair evidence (`reputation_pairs`:
//! [`aggregates`], with the credits of [`credit`]) and per-agent ERC-8004 aggregates
//! (`erc8004_reputation`: [`erc8004`]). Every refresh marks the chain's ranking stale.
//!
//! After the pass: a ranking run ([`generation`]) reads every pair of the chain, computes how far
//! each address is trusted as a rater of each other ([`rank`]: a personalised PageRank from the
//! configured seeds that never counts walks through the rated address) and replaces the chain's
//! generation of trusted scores in one transaction.
//!
//! What a finished pact weighs is defined once, by the view `pact_evidence`
//! (migrations/0022_trusted_reputation.sql): its payment against a one-dollar floor, at most 1,
//! and `paid` when the seller received something. The 0-5 score over evidence is defined once
//! too, by the SQL function `reputation_score`.

mod aggregates;
mod credit;
mod erc8004;
pub mod generation;
pub mod rank;

use alloy::primitives::U256;
use sqlx::PgConnection;

use agentpact_schema::i64_of;

use crate::IndexError;

pub use generation::{Generation, run_generation};

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

/// Recomputes the aggregates and pairs of `scope` on `chain_id` as buyer, seller and oracle, and
/// marks the chain's ranking stale (`reputation_runs.dirty`).
pub async fn refresh(conn: &mut PgConnection, chain_id: u64, scope: Scope<'_>) -> Result<(), sqlx::Error> {
    let chain = i64_of(chain_id);
    let (all, addresses, agents): (bool, &[Vec<u8>], &[String]) = match scope {
        Scope::All => (true, &[], &[]),
        Scope::Marked { addresses: [], agents: [] } => return Ok(()),
        Scope::Marked { addresses, agents } => (false, addresses, agents),
    };
    aggregates::refresh(conn, chain, all, addresses).await?;
    erc8004::refresh(conn, chain, all, addresses, agents).await
}
