//! The stages of pacts of several (`pact_stages`), and what they make of their pact's row: its status
//! (`rules::pact_of_stages`) and its current stage's clocks and scores, as `getPact` gives them.
//!
//! A batch's stage events are applied in journal order to the stored rows of the pacts they touch
//! (read in one statement), then every touched pact's stages are written back in one statement and
//! their pact rows in one more. Reading first makes the pact-wide events exact: acceptance funds
//! every stage, `WorkStarted` starts the funded ones, whatever the earlier batches left. A
//! one-stage pact has no rows (its pact row is its stage); the pact-wide events of such pacts find
//! none and change nothing here. A stage's disputes go to `disputes` with the pact's own.

use std::collections::BTreeMap;

use agentpact_contracts::{DisputeCause, DisputeOutcome, Ending, PactStatus, rules};
use agentpact_schema::i64_of;
use alloy::primitives::U256;
use sqlx::PgConnection;

use super::{changes::PactChanges, misrouted, unreadable};
use crate::event::{EventBody, JournalEvent};

/// One stage as `pact_stages` holds it.
#[derive(Debug, Clone)]
struct StageRow {
    amount: String,
    deadline: i64,
    status: PactStatus,
    proof_hash: Option<Vec<u8>>,
    submitted_at: Option<i64>,
    score_count: i16,
    final_score: Option<i16>,
    verified_at: Option<i64>,
    disputed_at: Option<i64>,
    seller_share: Option<i32>,
    ending: Ending,
    closed_at: Option<i64>,
    to_seller: Option<String>,
    to_buyer: Option<String>,
    updated_block: i64,
}

/// The stage events of a batch, and the pact-wide ones that move stages, in journal order.
#[derive(Default)]
pub(super) struct StageChanges<'a> {
    chain_id: i64,
    events: Vec<&'a JournalEvent>,
}

impl<'a> StageChanges<'a> {
    /// Takes a stage event, `PactStaged`, `PactAccepted` or `WorkStarted` (the router,
    /// `apply_batch`, sends only those), and records in `disputes` the dispute it opens or closes.
    pub(super) fn push(
        &mut self,
        e: &'a JournalEvent,
        disputes: &mut PactChanges,
    ) -> Result<(), sqlx::Error> {
        use EventBody as E;
        match &e.body {
            E::StageFinalized { pact_id, stage, passed: false, .. } => {
                disputes.open_dispute(*pact_id, *stage, DisputeCause::FailedVerification, None, e);
            }
            E::StageRejected { pact_id, stage, buyer } => {
                disputes.open_dispute(*pact_id, *stage, DisputeCause::Rejected, Some(*buyer), e);
            }
            E::StageDisputed { pact_id, stage, by, .. } => {
                disputes.open_dispute(*pact_id, *stage, DisputeCause::Raised, Some(*by), e);
            }
            E::StageResolved { pact_id, stage, seller_share, .. } => {
                let winner = match rules::status_at_share(*seller_share) {
                    PactStatus::Completed => DisputeOutcome::Seller,
                    PactStatus::Refunded => DisputeOutcome::Buyer,
                    _ => DisputeOutcome::Split,
                };
                disputes.close_dispute(*pact_id, Some(*stage), winner, e);
            }
            E::StageTimedOut { pact_id, stage, from, .. } if *from == PactStatus::Disputed.code() => {
                disputes.close_dispute(*pact_id, Some(*stage), DisputeOutcome::Timeout, e);
            }
            E::PactStaged { .. }
            | E::PactAccepted { .. }
            | E::WorkStarted { .. }
            | E::StageSubmitted { .. }
            | E::StageScored { .. }
            | E::StageFinalized { .. }
            | E::StageApproved { .. }
            | E::StageTimedOut { .. }
            | E::StageEnded { .. } => {}
            other => return Err(misrouted(other.kind(), "the stages")),
        }
        self.chain_id = i64_of(e.chain_id);
        self.events.push(e);
        Ok(())
    }

    /// Applies the events to the stored stages of the pacts they touch, then writes those stages
    /// and their pacts' rows. Run after the batch's pacts and pact changes are written.
    pub(super) async fn write(self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        if self.events.is_empty() {
            return Ok(());
        }
        let touched: Vec<String> =
            self.events.iter().filter_map(|e| e.body.pact_id()).map(|id| id.to_string()).collect();
        let mut pacts = stored(conn, self.chain_id, &touched).await?;
        // The time and block each pact's last stage change happened at.
        let mut last: BTreeMap<U256, (i64, i64)> = BTreeMap::new();
        for e in &self.events {
            let Some(pact_id) = e.body.pact_id() else { continue };
            let (time, block) = (i64_of(e.block_time), i64_of(e.block_number));
            if let EventBody::PactStaged { stages, .. } = &e.body {
                let rows =
                    stages.iter().map(|t| StageRow::negotiating(&t.amount, t.deadline, block)).collect();
                pacts.insert(pact_id, rows);
            }
            // A one-stage pact's acceptance or start: it has no stages here.
            let Some(rows) = pacts.get_mut(&pact_id) else { continue };
            apply(e, rows, time, block)?;
            last.insert(pact_id, (time, block));
        }
        let pacts: BTreeMap<U256, Vec<StageRow>> =
            pacts.into_iter().filter(|(id, rows)| last.contains_key(id) && !rows.is_empty()).collect();
        if pacts.is_empty() {
            return Ok(());
        }
        write_stages(conn, self.chain_id, &pacts).await?;
        write_pacts(conn, self.chain_id, &pacts, &last).await
    }
}

/// Applies one event to its pact's stages, as the contract changes them.
fn apply(e: &JournalEvent, rows: &mut [StageRow], time: i64, block: i64) -> Result<(), sqlx::Error> {
    use EventBody as E;
    let moved = |rows: &mut [StageRow], from: PactStatus, to: PactStatus| {
        for row in rows.iter_mut().filter(|r| r.status == from) {
            row.status = to;
            row.updated_block = block;
        }
    };
    let stage = match &e.body {
        E::PactAccepted { .. } => {
            moved(rows, PactStatus::Negotiating, PactStatus::Funded);
            return Ok(());
        }
        E::WorkStarted { .. } => {
            moved(rows, PactStatus::Funded, PactStatus::InProgress);
            return Ok(());
        }
        E::StageSubmitted { stage, .. }
        | E::StageScored { stage, .. }
        | E::StageFinalized { stage, .. }
        | E::StageApproved { stage, .. }
        | E::StageRejected { stage, .. }
        | E::StageDisputed { stage, .. }
        | E::StageResolved { stage, .. }
        | E::StageTimedOut { stage, .. }
        | E::StageEnded { stage, .. } => *stage,
        _ => return Ok(()),
    };
    let Some(row) = rows.get_mut(usize::from(stage)) else {
        return Err(unreadable(e, "a stage its pact does not have"));
    };
    row.updated_block = block;
    match &e.body {
        E::StageSubmitted { proof_hash, .. } => {
            row.status = PactStatus::PendingVerify;
            row.proof_hash = Some(proof_hash.to_vec());
            row.submitted_at = Some(time);
        }
        E::StageScored { .. } => row.score_count = row.score_count.saturating_add(1),
        E::StageFinalized { score, passed, .. } => {
            row.final_score = Some(i16::from(*score));
            if *passed {
                row.status = PactStatus::PendingApproval;
                row.verified_at = Some(time);
            } else {
                row.status = PactStatus::Disputed;
                row.disputed_at = Some(time);
            }
        }
        E::StageRejected { .. } | E::StageDisputed { .. } => {
            row.status = PactStatus::Disputed;
            row.disputed_at = Some(time);
        }
        E::StageResolved { seller_share, .. } => row.seller_share = Some(i32::from(*seller_share)),
        E::StageEnded { ending, status, to_seller, to_buyer, .. } => {
            let (Ok(ending), Ok(status)) = (Ending::try_from(*ending), PactStatus::try_from(*status)) else {
                return Err(unreadable(e, "an ending or a status code no AgentPact has"));
            };
            row.status = status;
            row.ending = ending;
            row.closed_at = Some(time);
            row.to_seller = Some(to_seller.to_string());
            row.to_buyer = Some(to_buyer.to_string());
        }
        // Approvals and timeouts end the stage in the `StageEnded` that follows them.
        _ => {}
    }
    Ok(())
}

impl StageRow {
    /// A stage as `PactStaged` creates it.
    fn negotiating(amount: &U256, deadline: u64, block: i64) -> Self {
        Self {
            amount: amount.to_string(),
            deadline: i64_of(deadline),
            status: PactStatus::Negotiating,
            proof_hash: None,
            submitted_at: None,
            score_count: 0,
            final_score: None,
            verified_at: None,
            disputed_at: None,
            seller_share: None,
            ending: Ending::Live,
            closed_at: None,
            to_seller: None,
            to_buyer: None,
            updated_block: block,
        }
    }
}

/// The stored stages of `pact_ids`, by pact, in order.
async fn stored(
    conn: &mut PgConnection,
    chain_id: i64,
    pact_ids: &[String],
) -> Result<BTreeMap<U256, Vec<StageRow>>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT pact_id::text AS "pact_id!", stage, amount::text AS "amount!",
                  extract(epoch FROM deadline)::bigint AS "deadline!", status, proof_hash,
                  extract(epoch FROM submitted_at)::bigint AS submitted_at, score_count, final_score,
                  extract(epoch FROM verified_at)::bigint AS verified_at,
                  extract(epoch FROM disputed_at)::bigint AS disputed_at, seller_share, ending,
                  extract(epoch FROM closed_at)::bigint AS closed_at, to_seller::text, to_buyer::text,
                  updated_block
           FROM pact_stages WHERE chain_id = $1 AND pact_id = ANY($2::text[]::numeric[])
           ORDER BY pact_id, stage"#,
        chain_id,
        pact_ids as &[String],
    )
    .fetch_all(conn)
    .await?;
    let mut pacts: BTreeMap<U256, Vec<StageRow>> = BTreeMap::new();
    for r in rows {
        let place = || format!("pact_stages row (pact {}, stage {})", r.pact_id, r.stage);
        let unreadable = |what: &str| sqlx::Error::Protocol(format!("{} holds {what}", place()));
        let pact_id: U256 = r.pact_id.parse().map_err(|_| unreadable("a pact id that is not a number"))?;
        let status = u8::try_from(r.status).ok().and_then(|c| PactStatus::try_from(c).ok());
        let ending = u8::try_from(r.ending).ok().and_then(|c| Ending::try_from(c).ok());
        let (Some(status), Some(ending)) = (status, ending) else {
            return Err(unreadable("a status or an ending code no AgentPact has"));
        };
        pacts.entry(pact_id).or_default().push(StageRow {
            amount: r.amount,
            deadline: r.deadline,
            status,
            proof_hash: r.proof_hash,
            submitted_at: r.submitted_at,
            score_count: r.score_count,
            final_score: r.final_score,
            verified_at: r.verified_at,
            disputed_at: r.disputed_at,
            seller_share: r.seller_share,
            ending,
            closed_at: r.closed_at,
            to_seller: r.to_seller,
            to_buyer: r.to_buyer,
            updated_block: r.updated_block,
        });
    }
    Ok(pacts)
}

/// Writes every stage of `pacts` (new ones inserted, stored ones replaced) in one statement.
async fn write_stages(
    conn: &mut PgConnection,
    chain_id: i64,
    pacts: &BTreeMap<U256, Vec<StageRow>>,
) -> Result<(), sqlx::Error> {
    let mut c = StageColumns::default();
    for (id, rows) in pacts {
        for (k, row) in rows.iter().enumerate() {
            c.push(id, k, row);
        }
    }
    sqlx::query!(
        "INSERT INTO pact_stages (chain_id, pact_id, stage, amount, deadline, status, proof_hash, submitted_at,
             score_count, final_score, verified_at, disputed_at, seller_share, ending, closed_at, to_seller,
             to_buyer, updated_block)
         SELECT $1, id::numeric, k, amt::numeric, to_timestamp(dl), st, ph, to_timestamp(sub), sc, fs,
                to_timestamp(v), to_timestamp(d), ss, en, to_timestamp(cl), ts::numeric, tb::numeric, blk
         FROM UNNEST($2::text[], $3::smallint[], $4::text[], $5::bigint[], $6::smallint[], $7::bytea[],
                     $8::bigint[], $9::smallint[], $10::smallint[], $11::bigint[], $12::bigint[], $13::int[],
                     $14::smallint[], $15::bigint[], $16::text[], $17::text[], $18::bigint[])
              AS u(id, k, amt, dl, st, ph, sub, sc, fs, v, d, ss, en, cl, ts, tb, blk)
         ON CONFLICT (chain_id, pact_id, stage) DO UPDATE SET
             status = excluded.status, proof_hash = excluded.proof_hash, submitted_at = excluded.submitted_at,
             score_count = excluded.score_count, final_score = excluded.final_score,
             verified_at = excluded.verified_at, disputed_at = excluded.disputed_at,
             seller_share = excluded.seller_share, ending = excluded.ending, closed_at = excluded.closed_at,
             to_seller = excluded.to_seller, to_buyer = excluded.to_buyer, updated_block = excluded.updated_block",
        chain_id,
        &c.pact_id,
        &c.stage,
        &c.amount,
        &c.deadline,
        &c.status,
        &c.proof_hash as &[Option<Vec<u8>>],
        &c.submitted_at as &[Option<i64>],
        &c.score_count,
        &c.final_score as &[Option<i16>],
        &c.verified_at as &[Option<i64>],
        &c.disputed_at as &[Option<i64>],
        &c.seller_share as &[Option<i32>],
        &c.ending,
        &c.closed_at as &[Option<i64>],
        &c.to_seller as &[Option<String>],
        &c.to_buyer as &[Option<String>],
        &c.updated_block,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// Writes each pact's status and its current stage's clocks and scores (its lowest live stage, or
/// its last once none lives, as `getPact` does), and when it ended, in one statement.
async fn write_pacts(
    conn: &mut PgConnection,
    chain_id: i64,
    pacts: &BTreeMap<U256, Vec<StageRow>>,
    last: &BTreeMap<U256, (i64, i64)>,
) -> Result<(), sqlx::Error> {
    let mut c = StageColumns::default();
    let mut closed_at = Vec::new();
    for (id, rows) in pacts {
        let ends: Vec<(PactStatus, Ending)> = rows.iter().map(|r| (r.status, r.ending)).collect();
        let (status, _) = rules::pact_of_stages(&ends);
        let k = rows.iter().position(|r| !r.status.is_terminal()).unwrap_or(rows.len() - 1);
        let (time, block) = last.get(id).copied().unwrap_or_default();
        let mut current = rows[k].clone();
        current.status = status;
        current.updated_block = block;
        c.push(id, k, &current);
        closed_at.push(status.is_terminal().then_some(time));
    }
    sqlx::query!(
        "UPDATE pacts p SET status = u.st, proof_hash = u.ph, submitted_at = to_timestamp(u.sub),
             score_count = u.sc, final_score = u.fs, verified_at = to_timestamp(u.v),
             disputed_at = to_timestamp(u.d), closed_at = coalesce(p.closed_at, to_timestamp(u.cl)),
             updated_block = greatest(p.updated_block, u.blk)
         FROM UNNEST($2::text[], $3::smallint[], $4::bytea[], $5::bigint[], $6::smallint[], $7::smallint[],
                     $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
              AS u(id, st, ph, sub, sc, fs, v, d, cl, blk)
         WHERE p.chain_id = $1 AND p.pact_id = u.id::numeric",
        chain_id,
        &c.pact_id,
        &c.status,
        &c.proof_hash as &[Option<Vec<u8>>],
        &c.submitted_at as &[Option<i64>],
        &c.score_count,
        &c.final_score as &[Option<i16>],
        &c.verified_at as &[Option<i64>],
        &c.disputed_at as &[Option<i64>],
        &closed_at as &[Option<i64>],
        &c.updated_block,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// Stages as columns, for UNNEST.
#[derive(Default)]
struct StageColumns {
    pact_id: Vec<String>,
    stage: Vec<i16>,
    amount: Vec<String>,
    deadline: Vec<i64>,
    status: Vec<i16>,
    proof_hash: Vec<Option<Vec<u8>>>,
    submitted_at: Vec<Option<i64>>,
    score_count: Vec<i16>,
    final_score: Vec<Option<i16>>,
    verified_at: Vec<Option<i64>>,
    disputed_at: Vec<Option<i64>>,
    seller_share: Vec<Option<i32>>,
    ending: Vec<i16>,
    closed_at: Vec<Option<i64>>,
    to_seller: Vec<Option<String>>,
    to_buyer: Vec<Option<String>>,
    updated_block: Vec<i64>,
}

impl StageColumns {
    fn push(&mut self, pact_id: &U256, k: usize, row: &StageRow) {
        self.pact_id.push(pact_id.to_string());
        // At most MAX_STAGES (8) stages: `PactStaged` is read only from our contracts.
        self.stage.push(i16::try_from(k).unwrap_or(i16::MAX));
        self.amount.push(row.amount.clone());
        self.deadline.push(row.deadline);
        self.status.push(i16::from(row.status.code()));
        self.proof_hash.push(row.proof_hash.clone());
        self.submitted_at.push(row.submitted_at);
        self.score_count.push(row.score_count);
        self.final_score.push(row.final_score);
        self.verified_at.push(row.verified_at);
        self.disputed_at.push(row.disputed_at);
        self.seller_share.push(row.seller_share);
        self.ending.push(i16::from(row.ending.code()));
        self.closed_at.push(row.closed_at);
        self.to_seller.push(row.to_seller.clone());
        self.to_buyer.push(row.to_buyer.clone());
        self.updated_block.push(row.updated_block);
    }
}
