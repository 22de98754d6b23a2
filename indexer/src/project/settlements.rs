//! Offers to settle a pact (`settlements`): one row per round, marked when withdrawn or accepted.
//! The pact's own ending (status, outcome, share) is folded with the other status events
//! (`changes`); replacing an offer needs no write, the higher round says it.

use agentpact_schema::i64_of;
use sqlx::PgConnection;

use super::Place;
use crate::event::{EventBody, JournalEvent};

/// Applies one settlement event (other kinds are left alone).
pub(super) async fn apply(conn: &mut PgConnection, e: &JournalEvent) -> Result<(), sqlx::Error> {
    let at = Place::of(e);
    match &e.body {
        EventBody::SettlementProposed { pact_id, by, status, round, seller_share, expires_at } => {
            sqlx::query!(
                "INSERT INTO settlements (chain_id, pact_id, round, proposed_by, offered_in, seller_share, expires_at,
                                          proposed_at, block_number)
                 VALUES ($1, $2::text::numeric, $3, $4, $5, $6, to_timestamp($7::bigint), to_timestamp($8::bigint), $9)",
                at.chain_id,
                pact_id.to_string(),
                i64::from(*round),
                by.as_slice(),
                i16::from(*status),
                i32::from(*seller_share),
                i64_of(*expires_at),
                at.time,
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::SettlementWithdrawn { pact_id, round, .. } => {
            sqlx::query!(
                "UPDATE settlements SET withdrawn_at = to_timestamp($4::bigint)
                 WHERE chain_id = $1 AND pact_id = $2::text::numeric AND round = $3",
                at.chain_id,
                pact_id.to_string(),
                i64::from(*round),
                at.time,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::SettlementAccepted { pact_id, by, round, .. } => {
            sqlx::query!(
                "UPDATE settlements SET accepted_by = $4, accepted_at = to_timestamp($5::bigint)
                 WHERE chain_id = $1 AND pact_id = $2::text::numeric AND round = $3",
                at.chain_id,
                pact_id.to_string(),
                i64::from(*round),
                by.as_slice(),
                at.time,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        // Not this projection's: `apply_batch` routes them elsewhere.
        EventBody::PactCreated { .. }
        | EventBody::PactAccepted { .. }
        | EventBody::PactCancelled { .. }
        | EventBody::WorkStarted { .. }
        | EventBody::WorkSubmitted { .. }
        | EventBody::VerificationSubmitted { .. }
        | EventBody::VerificationFinalized { .. }
        | EventBody::WorkApproved { .. }
        | EventBody::WorkRejected { .. }
        | EventBody::DisputeRaised { .. }
        | EventBody::DisputeResolved { .. }
        | EventBody::TimeoutClaimed { .. }
        | EventBody::Payout { .. }
        | EventBody::Withdrawn { .. }
        | EventBody::CurrencyAllowed { .. }
        | EventBody::OracleRegistered { .. }
        | EventBody::StakeIncreased { .. }
        | EventBody::CapabilitiesUpdated { .. }
        | EventBody::OracleDeregistered { .. }
        | EventBody::StakeWithdrawn { .. }
        | EventBody::AgentRegistered { .. }
        | EventBody::ProfileUpdated { .. }
        | EventBody::AgentDeactivated { .. }
        | EventBody::AgentReactivated { .. }
        | EventBody::FeedbackGiven { .. }
        | EventBody::Erc8004(_) => Ok(()),
    }
}
