//! The status events of a batch (accepted, started, submitted, finalized, approved, rejected,
//! disputed, resolved, settled, cancelled, timed out, ended) and its oracles' scores folded into one change per
//! pact, written in one statement, plus the disputes they open and close in two more. Folding is
//! exact because every such event sets columns to values (the last event's value of a column is
//! the one that stays), except acceptance's stake equalisation, which the statement applies to the
//! stored stakes, and scores, which add to the stored count.

use agentpact_schema::i64_of;
use std::collections::BTreeMap;

use agentpact_contracts::{
    DisputeCause, DisputeOutcome, Ending, Outcome, PactStatus, rules::status_at_share,
};
use alloy::primitives::{Address, U256};
use sqlx::PgConnection;

use super::code;
use crate::event::{EventBody, JournalEvent};

/// A pact's columns as a batch leaves them; `None` leaves a column as stored.
#[derive(Debug, Default)]
struct Change {
    status: Option<i16>,
    buyer: Option<Vec<u8>>,
    seller: Option<Vec<u8>>,
    accepted_at: Option<i64>,
    proof_hash: Option<Vec<u8>>,
    submitted_at: Option<i64>,
    final_score: Option<i16>,
    /// `Some(None)` clears the column.
    verified_at: Option<Option<i64>>,
    /// `Some(None)` clears the column.
    disputed_at: Option<Option<i64>>,
    closed_at: Option<i64>,
    outcome: Option<Outcome>,
    /// `AgentPact.Ending`'s code, from `PactEnded`.
    ending: Option<i16>,
    /// Basis points to the seller, when a ruling or a settlement divided the money.
    seller_share: Option<i32>,
    /// Oracle scores submitted in the batch, added to the stored count.
    scores: i16,
    updated_block: i64,
}

/// A dispute opened by an event, on a stage (0 for a one-stage pact).
struct Opened {
    pact_id: String,
    stage: i16,
    cause: DisputeCause,
    by: Option<Vec<u8>>,
    time: i64,
}

/// A dispute closed by an event: a stage's, or (`None`, a settlement) every open one of the pact.
struct Closed {
    pact_id: String,
    stage: Option<i16>,
    outcome: DisputeOutcome,
    time: i64,
}

/// The changes of a batch, by pact, and its disputes in journal order.
#[derive(Default)]
pub(super) struct PactChanges {
    chain_id: i64,
    pacts: BTreeMap<U256, Change>,
    opened: Vec<Opened>,
    closed: Vec<Closed>,
}

impl PactChanges {
    /// Folds a status event (or an oracle's score) of pact `pact_id` into its change. The router
    /// (`apply_batch`, the one match that must name every event) sends only those here; any other
    /// is refused as misrouted, never dropped.
    pub(super) fn push(&mut self, pact_id: U256, e: &JournalEvent) -> Result<(), sqlx::Error> {
        let (time, block) = (i64_of(e.block_time), i64_of(e.block_number));
        let mut opened = None;
        let mut closed = None;
        let fresh = !self.pacts.contains_key(&pact_id);
        let change = self.pacts.entry(pact_id).or_default();
        // A pact's end as escrow v3's events tell it; v4's `PactEnded` behind them then gives the
        // contract's own status and ending (which differ only for dust divisions).
        let close = |c: &mut Change, status: PactStatus, outcome: Outcome, share: Option<u16>| {
            c.status = Some(code(status));
            c.closed_at = Some(time);
            c.outcome = Some(outcome);
            c.ending = Some(i16::from(outcome.ending(share.unwrap_or(0)).code()));
            c.seller_share = share.map(i32::from);
        };
        match &e.body {
            EventBody::PactAccepted { buyer, seller, .. } => {
                change.status = Some(code(PactStatus::Funded));
                change.buyer = Some(buyer.to_vec());
                change.seller = Some(seller.to_vec());
                change.accepted_at = Some(time);
            }
            EventBody::WorkStarted { .. } => change.status = Some(code(PactStatus::InProgress)),
            EventBody::VerificationSubmitted { .. } => change.scores = change.scores.saturating_add(1),
            EventBody::WorkSubmitted { proof_hash, .. } => {
                change.status = Some(code(PactStatus::PendingVerify));
                change.proof_hash = Some(proof_hash.to_vec());
                change.submitted_at = Some(time);
            }
            EventBody::VerificationFinalized { score, passed, .. } => {
                change.final_score = Some(i16::from(*score));
                if *passed {
                    change.status = Some(code(PactStatus::PendingApproval));
                    change.verified_at = Some(Some(time));
                    change.disputed_at = Some(None);
                } else {
                    change.verified_at = Some(None);
                    opened = Some((DisputeCause::FailedVerification, None));
                }
            }
            EventBody::WorkApproved { automatic, .. } => {
                close(
                    change,
                    PactStatus::Completed,
                    if *automatic { Outcome::AutoApproved } else { Outcome::Approved },
                    None,
                );
            }
            EventBody::WorkRejected { buyer, .. } => opened = Some((DisputeCause::Rejected, Some(*buyer))),
            EventBody::DisputeRaised { by, .. } => opened = Some((DisputeCause::Raised, Some(*by))),
            EventBody::DisputeResolved { seller_share, .. } => {
                let status = status_at_share(*seller_share);
                let (outcome, winner) = match status {
                    PactStatus::Completed => (Outcome::SellerWon, DisputeOutcome::Seller),
                    PactStatus::Refunded => (Outcome::BuyerWon, DisputeOutcome::Buyer),
                    _ => (Outcome::Split, DisputeOutcome::Split),
                };
                close(change, status, outcome, Some(*seller_share));
                closed = Some(winner);
            }
            EventBody::SettlementAccepted { seller_share, .. } => {
                close(change, status_at_share(*seller_share), Outcome::Settled, Some(*seller_share));
                closed = Some(DisputeOutcome::Settled);
            }
            EventBody::PactEnded { ending, status, .. } => {
                let (Ok(ending), Ok(status)) = (Ending::try_from(*ending), PactStatus::try_from(*status))
                else {
                    return Err(super::unreadable(e, "an ending or a status code no AgentPact has"));
                };
                change.status = Some(code(status));
                change.ending = Some(i16::from(ending.code()));
            }
            EventBody::PactCancelled { .. } => close(change, PactStatus::Refunded, Outcome::Cancelled, None),
            EventBody::TimeoutClaimed { from, .. } => {
                let outcome = match PactStatus::try_from(*from) {
                    Ok(PactStatus::Negotiating) => Outcome::Expired,
                    Ok(PactStatus::Disputed) => Outcome::DisputeTimeout,
                    _ => Outcome::Timeout,
                };
                close(change, PactStatus::Refunded, outcome, None);
                if *from == PactStatus::Disputed.code() {
                    closed = Some(DisputeOutcome::Timeout);
                }
            }
            // The router (`apply_batch`) sends only the status events above.
            other => {
                if fresh {
                    self.pacts.remove(&pact_id);
                }
                return Err(super::misrouted(other.kind(), "the pact changes"));
            }
        }
        change.updated_block = block;
        if let Some((cause, by)) = opened {
            change.status = Some(code(PactStatus::Disputed));
            change.disputed_at = Some(Some(time));
            self.open_dispute(pact_id, 0, cause, by, e);
        }
        if let Some(outcome) = closed {
            // A settlement closes whatever dispute a stage of the pact has open.
            let stage = (!matches!(e.body, EventBody::SettlementAccepted { .. })).then_some(0);
            self.close_dispute(pact_id, stage, outcome, e);
        }
        self.chain_id = i64_of(e.chain_id);
        Ok(())
    }

    /// Records the dispute event `e` opens on stage `stage` of `pact_id`.
    pub(super) fn open_dispute(
        &mut self,
        pact_id: U256,
        stage: u8,
        cause: DisputeCause,
        by: Option<Address>,
        e: &JournalEvent,
    ) {
        self.chain_id = i64_of(e.chain_id);
        self.opened.push(Opened {
            pact_id: pact_id.to_string(),
            stage: i16::from(stage),
            cause,
            by: by.map(|a| a.to_vec()),
            time: i64_of(e.block_time),
        });
    }

    /// Records the dispute of stage `stage` of `pact_id` (every open one of the pact when `None`)
    /// that event `e` closes.
    pub(super) fn close_dispute(
        &mut self,
        pact_id: U256,
        stage: Option<u8>,
        outcome: DisputeOutcome,
        e: &JournalEvent,
    ) {
        self.chain_id = i64_of(e.chain_id);
        self.closed.push(Closed {
            pact_id: pact_id.to_string(),
            stage: stage.map(i16::from),
            outcome,
            time: i64_of(e.block_time),
        });
    }

    /// Writes the changes, then the disputes opened, then the disputes closed.
    pub(super) async fn write(self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        if !self.pacts.is_empty() {
            self.write_pacts(conn).await?;
        }
        self.write_disputes(conn).await
    }

    async fn write_pacts(&self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        let c = Columns::of(&self.pacts);
        sqlx::query!(
            "UPDATE pacts p SET
                 status = coalesce(u.st, p.status),
                 buyer = coalesce(u.b, p.buyer),
                 seller = coalesce(u.s, p.seller),
                 buyer_stake = CASE WHEN u.acc IS NULL THEN p.buyer_stake ELSE greatest(p.buyer_stake, p.seller_stake) END,
                 seller_stake = CASE WHEN u.acc IS NULL THEN p.seller_stake ELSE greatest(p.buyer_stake, p.seller_stake) END,
                 accepted_at = coalesce(to_timestamp(u.acc), p.accepted_at),
                 proof_hash = coalesce(u.ph, p.proof_hash),
                 submitted_at = coalesce(to_timestamp(u.sub), p.submitted_at),
                 final_score = coalesce(u.fs, p.final_score),
                 verified_at = CASE WHEN u.set_v THEN to_timestamp(u.v) ELSE p.verified_at END,
                 disputed_at = CASE WHEN u.set_d THEN to_timestamp(u.d) ELSE p.disputed_at END,
                 closed_at = coalesce(to_timestamp(u.cl), p.closed_at),
                 outcome = coalesce(u.oc, p.outcome),
                 ending = coalesce(u.en, p.ending),
                 seller_share = coalesce(u.ss, p.seller_share),
                 score_count = p.score_count + u.sc,
                 updated_block = u.blk
             FROM UNNEST($2::text[], $3::smallint[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bytea[],
                         $8::bigint[], $9::smallint[], $10::bool[], $11::bigint[], $12::bool[], $13::bigint[],
                         $14::bigint[], $15::text[], $16::smallint[], $17::int[], $18::smallint[], $19::bigint[])
                  AS u(id, st, b, s, acc, ph, sub, fs, set_v, v, set_d, d, cl, oc, en, ss, sc, blk)
             WHERE p.chain_id = $1 AND p.pact_id = u.id::numeric",
            self.chain_id,
            &c.pact_id,
            &c.status as &[Option<i16>],
            &c.buyer as &[Option<Vec<u8>>],
            &c.seller as &[Option<Vec<u8>>],
            &c.accepted_at as &[Option<i64>],
            &c.proof_hash as &[Option<Vec<u8>>],
            &c.submitted_at as &[Option<i64>],
            &c.final_score as &[Option<i16>],
            &c.set_verified,
            &c.verified_at as &[Option<i64>],
            &c.set_disputed,
            &c.disputed_at as &[Option<i64>],
            &c.closed_at as &[Option<i64>],
            &c.outcome as &[Option<&str>],
            &c.ending as &[Option<i16>],
            &c.seller_share as &[Option<i32>],
            &c.scores,
            &c.updated_block,
        )
        .execute(conn)
        .await
        .map(drop)
    }

    /// Inserts the disputes opened, then closes the disputes closed (an event opens a stage's
    /// dispute at most once, and closes only an open one).
    async fn write_disputes(&self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        if !self.opened.is_empty() {
            let ids: Vec<&str> = self.opened.iter().map(|o| o.pact_id.as_str()).collect();
            let stages: Vec<i16> = self.opened.iter().map(|o| o.stage).collect();
            let causes: Vec<&str> = self.opened.iter().map(|o| o.cause.name()).collect();
            let by: Vec<Option<Vec<u8>>> = self.opened.iter().map(|o| o.by.clone()).collect();
            let times: Vec<i64> = self.opened.iter().map(|o| o.time).collect();
            sqlx::query!(
                "INSERT INTO disputes (chain_id, pact_id, stage, cause, opened_by, arbitrator, opened_at)
                 SELECT p.chain_id, p.pact_id, u.k, u.c, u.b, p.arbitrator, to_timestamp(u.t)
                 FROM UNNEST($2::text[], $3::smallint[], $4::text[], $5::bytea[], $6::bigint[]) AS u(id, k, c, b, t)
                 JOIN pacts p ON p.chain_id = $1 AND p.pact_id = u.id::numeric",
                self.chain_id,
                &ids as &[&str],
                &stages,
                &causes as &[&str],
                &by as &[Option<Vec<u8>>],
                &times,
            )
            .execute(&mut *conn)
            .await?;
        }
        if !self.closed.is_empty() {
            let ids: Vec<&str> = self.closed.iter().map(|c| c.pact_id.as_str()).collect();
            let stages: Vec<Option<i16>> = self.closed.iter().map(|c| c.stage).collect();
            let outcomes: Vec<&str> = self.closed.iter().map(|c| c.outcome.name()).collect();
            let times: Vec<i64> = self.closed.iter().map(|c| c.time).collect();
            sqlx::query!(
                "UPDATE disputes d SET outcome = u.o, closed_at = to_timestamp(u.t)
                 FROM UNNEST($2::text[], $3::smallint[], $4::text[], $5::bigint[]) AS u(id, k, o, t)
                 WHERE d.chain_id = $1 AND d.pact_id = u.id::numeric AND d.closed_at IS NULL
                   AND (u.k IS NULL OR d.stage = u.k)",
                self.chain_id,
                &ids as &[&str],
                &stages as &[Option<i16>],
                &outcomes as &[&str],
                &times,
            )
            .execute(conn)
            .await?;
        }
        Ok(())
    }
}

/// The changes as columns, for UNNEST.
#[derive(Default)]
struct Columns {
    pact_id: Vec<String>,
    status: Vec<Option<i16>>,
    buyer: Vec<Option<Vec<u8>>>,
    seller: Vec<Option<Vec<u8>>>,
    accepted_at: Vec<Option<i64>>,
    proof_hash: Vec<Option<Vec<u8>>>,
    submitted_at: Vec<Option<i64>>,
    final_score: Vec<Option<i16>>,
    set_verified: Vec<bool>,
    verified_at: Vec<Option<i64>>,
    set_disputed: Vec<bool>,
    disputed_at: Vec<Option<i64>>,
    closed_at: Vec<Option<i64>>,
    outcome: Vec<Option<&'static str>>,
    ending: Vec<Option<i16>>,
    seller_share: Vec<Option<i32>>,
    scores: Vec<i16>,
    updated_block: Vec<i64>,
}

impl Columns {
    fn of(pacts: &BTreeMap<U256, Change>) -> Self {
        let mut c = Self::default();
        for (id, change) in pacts {
            c.pact_id.push(id.to_string());
            c.status.push(change.status);
            c.buyer.push(change.buyer.clone());
            c.seller.push(change.seller.clone());
            c.accepted_at.push(change.accepted_at);
            c.proof_hash.push(change.proof_hash.clone());
            c.submitted_at.push(change.submitted_at);
            c.final_score.push(change.final_score);
            c.set_verified.push(change.verified_at.is_some());
            c.verified_at.push(change.verified_at.flatten());
            c.set_disputed.push(change.disputed_at.is_some());
            c.disputed_at.push(change.disputed_at.flatten());
            c.closed_at.push(change.closed_at);
            c.outcome.push(change.outcome.map(Outcome::name));
            c.ending.push(change.ending);
            c.seller_share.push(change.seller_share);
            c.scores.push(change.scores);
            c.updated_block.push(change.updated_block);
        }
        c
    }
}
