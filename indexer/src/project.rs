//! Applies journal events to the projections (pacts, pact_oracles, verifications, disputes,
//! oracles, payouts, withdrawals). Projections are derived from the journal alone: applying the
//! journal of a pact in order from an empty table rebuilds its rows exactly.

use agentpact_contracts::PactStatus;
use alloy::primitives::{Address, U256};
use sqlx::PgConnection;

use crate::{
    event::{EventBody, JournalEvent},
    journal::{to_i32, to_i64},
};

/// Applies one event (already in the journal) to the projections.
pub async fn apply(conn: &mut PgConnection, e: &JournalEvent) -> Result<(), sqlx::Error> {
    let at =
        Place { chain_id: to_i64(e.chain_id), block: to_i64(e.block_number), time: to_i64(e.block_time) };
    match &e.body {
        EventBody::PactCreated { .. } => created(conn, &at, &e.body).await,
        EventBody::PactAccepted { pact_id, buyer, seller, .. } => {
            sqlx::query!(
                "UPDATE pacts SET buyer = $3, seller = $4, buyer_stake = greatest(buyer_stake, seller_stake),
                     seller_stake = greatest(buyer_stake, seller_stake), status = $5,
                     accepted_at = to_timestamp($6::bigint), updated_block = $7
                 WHERE chain_id = $1 AND pact_id = $2::text::numeric",
                at.chain_id,
                pact_id.to_string(),
                buyer.as_slice(),
                seller.as_slice(),
                code(PactStatus::Funded),
                at.time,
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::WorkStarted { pact_id, .. } => set_status(conn, &at, *pact_id, PactStatus::InProgress).await,
        EventBody::WorkSubmitted { pact_id, proof_hash, .. } => {
            sqlx::query!(
                "UPDATE pacts SET status = $3, proof_hash = $4, submitted_at = to_timestamp($5::bigint), updated_block = $6
                 WHERE chain_id = $1 AND pact_id = $2::text::numeric",
                at.chain_id,
                pact_id.to_string(),
                code(PactStatus::PendingVerify),
                proof_hash.as_slice(),
                at.time,
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::VerificationSubmitted { pact_id, oracle, score, proof } => {
            sqlx::query!(
                "INSERT INTO verifications (chain_id, pact_id, oracle, score, proof, submitted_at, block_number)
                 VALUES ($1, $2::text::numeric, $3, $4, $5, to_timestamp($6::bigint), $7)",
                at.chain_id,
                pact_id.to_string(),
                oracle.as_slice(),
                i16::from(*score),
                proof.as_slice(),
                at.time,
                at.block,
            )
            .execute(&mut *conn)
            .await?;
            sqlx::query!(
                "UPDATE pacts SET score_count = score_count + 1, updated_block = $3
                 WHERE chain_id = $1 AND pact_id = $2::text::numeric",
                at.chain_id,
                pact_id.to_string(),
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::VerificationFinalized { pact_id, score, passed, .. } => {
            let status = if *passed { PactStatus::PendingApproval } else { PactStatus::Disputed };
            sqlx::query!(
                "UPDATE pacts SET status = $3, final_score = $4,
                     verified_at = CASE WHEN $5 THEN to_timestamp($6::bigint) END,
                     disputed_at = CASE WHEN $5 THEN NULL ELSE to_timestamp($6::bigint) END,
                     updated_block = $7
                 WHERE chain_id = $1 AND pact_id = $2::text::numeric",
                at.chain_id,
                pact_id.to_string(),
                code(status),
                i16::from(*score),
                passed,
                at.time,
                at.block,
            )
            .execute(&mut *conn)
            .await?;
            if *passed { Ok(()) } else { open_dispute(conn, &at, *pact_id, "failed_verification", None).await }
        }
        EventBody::WorkApproved { pact_id, automatic, .. } => {
            let outcome = if *automatic { "auto_approved" } else { "approved" };
            close(conn, &at, *pact_id, PactStatus::Completed, outcome).await
        }
        EventBody::WorkRejected { pact_id, buyer } => {
            open_dispute(conn, &at, *pact_id, "rejected", Some(*buyer)).await
        }
        EventBody::DisputeRaised { pact_id, by, .. } => open_dispute(conn, &at, *pact_id, "raised", Some(*by)).await,
        EventBody::DisputeResolved { pact_id, seller_wins, .. } => {
            let (status, winner) =
                if *seller_wins { (PactStatus::Completed, "seller") } else { (PactStatus::Refunded, "buyer") };
            close(conn, &at, *pact_id, status, &format!("{winner}_won")).await?;
            close_dispute(conn, &at, *pact_id, winner).await
        }
        EventBody::PactCancelled { pact_id, .. } => {
            close(conn, &at, *pact_id, PactStatus::Refunded, "cancelled").await
        }
        EventBody::TimeoutClaimed { pact_id, from, .. } => {
            let outcome = match PactStatus::try_from(*from) {
                Ok(PactStatus::Negotiating) => "expired",
                Ok(PactStatus::Disputed) => "dispute_timeout",
                _ => "timeout",
            };
            close(conn, &at, *pact_id, PactStatus::Refunded, outcome).await?;
            if *from == PactStatus::Disputed.code() {
                close_dispute(conn, &at, *pact_id, "timeout").await?;
            }
            Ok(())
        }
        EventBody::Payout { pact_id, to, amount } => {
            sqlx::query!(
                "INSERT INTO payouts (chain_id, block_number, log_index, pact_id, account, amount, paid_at)
                 VALUES ($1, $2, $3, $4::text::numeric, $5, $6::text::numeric, to_timestamp($7::bigint))",
                at.chain_id,
                at.block,
                to_i32(e.log_index),
                pact_id.to_string(),
                to.as_slice(),
                amount.to_string(),
                at.time,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::Withdrawn { account, amount } => {
            sqlx::query!(
                "INSERT INTO withdrawals (chain_id, block_number, log_index, account, amount, withdrawn_at)
                 VALUES ($1, $2, $3, $4, $5::text::numeric, to_timestamp($6::bigint))",
                at.chain_id,
                at.block,
                to_i32(e.log_index),
                account.as_slice(),
                amount.to_string(),
                at.time,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::OracleRegistered { oracle, stake, capabilities } => {
            sqlx::query!(
                "INSERT INTO oracles (chain_id, address, stake, capabilities, status, registered_at, updated_block)
                 VALUES ($1, $2, $3::text::numeric, $4, 'active', to_timestamp($5::bigint), $6)",
                at.chain_id,
                oracle.as_slice(),
                stake.to_string(),
                capabilities,
                at.time,
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::StakeIncreased { oracle, total_stake, .. } => {
            sqlx::query!(
                "UPDATE oracles SET stake = $3::text::numeric, updated_block = $4 WHERE chain_id = $1 AND address = $2",
                at.chain_id,
                oracle.as_slice(),
                total_stake.to_string(),
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::CapabilitiesUpdated { oracle, capabilities } => {
            sqlx::query!(
                "UPDATE oracles SET capabilities = $3, updated_block = $4 WHERE chain_id = $1 AND address = $2",
                at.chain_id,
                oracle.as_slice(),
                capabilities,
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::OracleDeregistered { oracle, unlock_at } => {
            sqlx::query!(
                "UPDATE oracles SET status = 'deregistered', unlock_at = to_timestamp($3::bigint), updated_block = $4
                 WHERE chain_id = $1 AND address = $2",
                at.chain_id,
                oracle.as_slice(),
                to_i64(*unlock_at),
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        EventBody::StakeWithdrawn { oracle, .. } => {
            sqlx::query!("DELETE FROM oracles WHERE chain_id = $1 AND address = $2", at.chain_id, oracle.as_slice())
                .execute(conn)
                .await
                .map(drop)
        }
    }
}

/// Where and when an event happened, as the database stores it.
struct Place {
    chain_id: i64,
    block: i64,
    time: i64,
}

fn code(status: PactStatus) -> i16 {
    i16::from(status.code())
}

async fn created(conn: &mut PgConnection, at: &Place, body: &EventBody) -> Result<(), sqlx::Error> {
    let EventBody::PactCreated {
        pact_id,
        creator,
        initiator,
        arbitrator,
        spec_hash,
        spec_uri,
        deadline,
        review_period,
        threshold,
        payment,
        stake,
        oracles,
        weights,
        ..
    } = body
    else {
        return Ok(());
    };
    let by_buyer = *initiator == agentpact_contracts::Initiator::Buyer.code();
    let (buyer, seller) = if by_buyer { (Some(creator), None) } else { (None, Some(creator)) };
    let (buyer_stake, seller_stake) = if by_buyer { (*stake, U256::ZERO) } else { (U256::ZERO, *stake) };
    sqlx::query!(
        "INSERT INTO pacts (chain_id, pact_id, initiator, status, creator, buyer, seller, arbitrator, spec_hash,
             spec_uri, deadline, review_period, threshold, payment, buyer_stake, seller_stake, created_at,
             created_block, updated_block)
         VALUES ($1, $2::text::numeric, $3, $4, $5, $6, $7, $8, $9, $10, to_timestamp($11::bigint), $12, $13,
             $14::text::numeric, $15::text::numeric, $16::text::numeric, to_timestamp($17::bigint), $18, $18)",
        at.chain_id,
        pact_id.to_string(),
        i16::from(*initiator),
        code(PactStatus::Negotiating),
        creator.as_slice(),
        buyer.map(|a| a.as_slice()),
        seller.map(|a| a.as_slice()),
        arbitrator.as_slice(),
        spec_hash.as_slice(),
        spec_uri,
        to_i64(*deadline),
        to_i64(*review_period),
        i16::from(*threshold),
        payment.to_string(),
        buyer_stake.to_string(),
        seller_stake.to_string(),
        at.time,
        at.block,
    )
    .execute(&mut *conn)
    .await?;
    let positions: Vec<i16> = (0..oracles.len()).map(|i| i16::try_from(i).unwrap_or(i16::MAX)).collect();
    let addresses: Vec<Vec<u8>> = oracles.iter().map(|o| o.to_vec()).collect();
    let weights: Vec<i16> = weights.iter().map(|w| i16::from(*w)).collect();
    sqlx::query!(
        "INSERT INTO pact_oracles (chain_id, pact_id, position, oracle, weight)
         SELECT $1, $2::text::numeric, p, o, w FROM UNNEST($3::smallint[], $4::bytea[], $5::smallint[]) AS u(p, o, w)",
        at.chain_id,
        pact_id.to_string(),
        &positions,
        &addresses,
        &weights,
    )
    .execute(conn)
    .await
    .map(drop)
}

async fn set_status(
    conn: &mut PgConnection,
    at: &Place,
    pact_id: U256,
    status: PactStatus,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE pacts SET status = $3, updated_block = $4 WHERE chain_id = $1 AND pact_id = $2::text::numeric",
        at.chain_id,
        pact_id.to_string(),
        code(status),
        at.block,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// Moves a pact to a terminal status, recording how it ended.
async fn close(
    conn: &mut PgConnection,
    at: &Place,
    pact_id: U256,
    status: PactStatus,
    outcome: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE pacts SET status = $3, closed_at = to_timestamp($4::bigint), updated_block = $5, outcome = $6
         WHERE chain_id = $1 AND pact_id = $2::text::numeric",
        at.chain_id,
        pact_id.to_string(),
        code(status),
        at.time,
        at.block,
        outcome,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// Moves a pact to DISPUTED and records why.
async fn open_dispute(
    conn: &mut PgConnection,
    at: &Place,
    pact_id: U256,
    cause: &str,
    opened_by: Option<Address>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE pacts SET status = $3, disputed_at = to_timestamp($4::bigint), updated_block = $5
         WHERE chain_id = $1 AND pact_id = $2::text::numeric",
        at.chain_id,
        pact_id.to_string(),
        code(PactStatus::Disputed),
        at.time,
        at.block,
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "INSERT INTO disputes (chain_id, pact_id, cause, opened_by, arbitrator, opened_at)
         SELECT chain_id, pact_id, $3, $4, arbitrator, to_timestamp($5::bigint)
         FROM pacts WHERE chain_id = $1 AND pact_id = $2::text::numeric",
        at.chain_id,
        pact_id.to_string(),
        cause,
        opened_by.as_ref().map(|a| a.as_slice()),
        at.time,
    )
    .execute(conn)
    .await
    .map(drop)
}

async fn close_dispute(
    conn: &mut PgConnection,
    at: &Place,
    pact_id: U256,
    outcome: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE disputes SET outcome = $3, closed_at = to_timestamp($4::bigint)
         WHERE chain_id = $1 AND pact_id = $2::text::numeric",
        at.chain_id,
        pact_id.to_string(),
        outcome,
        at.time,
    )
    .execute(conn)
    .await
    .map(drop)
}
