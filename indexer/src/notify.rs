//! Announcing committed pact changes on [`PACT_CHANNEL`]: each note a
//! [`PactChange`] built here and serialized by serde, so the api parses it with the same type and a
//! renamed field fails to compile rather than at run time. Delivered when the transaction commits.

use std::collections::BTreeSet;

use agentpact_contracts::channels::{PACT_CHANNEL, PactChange};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::U256;
use sqlx::PgConnection;

use crate::IndexError;

/// Announces the current state of `pacts`, each with its parties (creator, buyer, seller,
/// arbitrator, oracles) so that a subscriber filtering by party reads the database only for the
/// changes it wants.
pub async fn pacts(conn: &mut PgConnection, chain_id: u64, pacts: &BTreeSet<U256>) -> Result<(), IndexError> {
    if pacts.is_empty() {
        return Ok(());
    }
    let ids: Vec<String> = pacts.iter().map(U256::to_string).collect();
    let rows = sqlx::query!(
        r#"SELECT pact_id::text AS "pact_id!", status, updated_block,
                  ARRAY(SELECT p FROM unnest(ARRAY[creator, buyer, seller, arbitrator]
                                             || ARRAY(SELECT o.oracle FROM pact_oracles o
                                                      WHERE o.chain_id = pacts.chain_id AND o.pact_id = pacts.pact_id)) AS p
                        WHERE p IS NOT NULL) AS "parties!"
           FROM pacts WHERE chain_id = $1 AND pact_id = ANY($2::text[]::numeric[])"#,
        i64_of(chain_id),
        &ids,
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut notes = Vec::with_capacity(rows.len());
    for r in rows {
        let cells = Cells { table: "pacts", key: format!("chain {chain_id} pact {}", r.pact_id) };
        let change = PactChange {
            chain_id,
            pact_id: cells.u256("pact_id", &r.pact_id)?,
            status: cells.int("status", r.status)?,
            block: cells.int("updated_block", r.updated_block)?,
            parties: r.parties.iter().map(|p| cells.address("parties", p)).collect::<Result<_, _>>()?,
        };
        // Plain data (numbers, strings, addresses) always serializes.
        notes.push(serde_json::to_string(&change).unwrap_or_default());
    }
    sqlx::query!("SELECT pg_notify($1, note) FROM unnest($2::text[]) AS note", PACT_CHANNEL, &notes)
        .fetch_all(conn)
        .await?;
    Ok(())
}
