//! Offers to settle a pact (`settlements`): one row per round, marked when withdrawn, accepted or
//! voided by a verdict (an oracle's score, a `voidOffers`).
//! The pact's own ending (status, outcome, share) is folded with the other status events
//! (`changes`); replacing an offer needs no write, the higher round says it.

use agentpact_schema::i64_of;
use sqlx::PgConnection;

use super::Place;
use alloy::primitives::{Address, U256};

/// Records offer `round` on `pact_id`, made by `by` while the pact was in `status`.
#[allow(clippy::too_many_arguments)] // the event's own fields
pub(super) async fn proposed(
    conn: &mut PgConnection,
    at: &Place,
    pact_id: &U256,
    by: &Address,
    status: &u8,
    round: &u32,
    seller_share: &u16,
    expires_at: &u64,
) -> Result<(), sqlx::Error> {
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

/// Marks offer `round` on `pact_id` withdrawn.
pub(super) async fn withdrawn(
    conn: &mut PgConnection,
    at: &Place,
    pact_id: &U256,
    round: &u32,
) -> Result<(), sqlx::Error> {
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

/// Marks offer `round` on `pact_id` accepted by `by` (the pact's ending is folded in `changes`).
pub(super) async fn accepted(
    conn: &mut PgConnection,
    at: &Place,
    pact_id: &U256,
    by: &Address,
    round: &u32,
) -> Result<(), sqlx::Error> {
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

/// The verdicts (an oracle's score, a `voidOffers`) of a run of events with no settlement event
/// among them, to void the offer standing on each pact they are about (docs/contracts.md §Verdicts
/// void offers) in one statement. As the escrow's `OfferVoided` rule, a verdict voids the pact's last
/// offer whatever its status or expiry (the reader says LAPSED first where the status moved on);
/// replaced rounds, and an offer withdrawn or accepted, are left as they ended; the first verdict
/// of the run on a pact is the one that voided.
#[derive(Default)]
pub(super) struct Voids {
    chain_ids: Vec<i64>,
    pact_ids: Vec<String>,
    times: Vec<i64>,
    seen: std::collections::HashSet<(i64, U256)>,
}

impl Voids {
    /// Adds a verdict on `pact_id` given at `at`.
    pub(super) fn push(&mut self, pact_id: U256, at: Place) {
        if self.seen.insert((at.chain_id, pact_id)) {
            self.chain_ids.push(at.chain_id);
            self.pact_ids.push(pact_id.to_string());
            self.times.push(at.time);
        }
    }

    /// Writes the run's voids and starts a new run.
    pub(super) async fn write(&mut self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        if self.seen.is_empty() {
            return Ok(());
        }
        let run = std::mem::take(self);
        sqlx::query!(
            "UPDATE settlements s SET voided_at = to_timestamp(v.at)
             FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS v(chain_id, pact_id, at)
             WHERE s.chain_id = v.chain_id AND s.pact_id = v.pact_id::numeric
               AND s.withdrawn_at IS NULL AND s.accepted_at IS NULL AND s.voided_at IS NULL
               AND s.round = (SELECT max(l.round) FROM settlements l
                              WHERE l.chain_id = s.chain_id AND l.pact_id = s.pact_id)",
            &run.chain_ids,
            &run.pact_ids,
            &run.times,
        )
        .execute(conn)
        .await
        .map(drop)
    }
}
