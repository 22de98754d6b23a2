//! Applies journal events to the projections (currencies, pacts, pact_stages, pact_oracles,
//! verifications, disputes, settlements, oracles, payouts, withdrawals, agents, agent_capabilities, feedback, and
//! the ERC-8004 registries' tables). Projections are derived from the journal alone: applying the
//! journal of a pact in order from an empty table rebuilds its rows exactly.

use agentpact_contracts::{EventKind, Initiator, PactStatus};
use agentpact_schema::{ChainText, i64_of};
use alloy::primitives::{Address, U256};
use sqlx::PgConnection;

mod agents;
mod changes;
mod erc8004;
mod oracles;
mod settlements;
mod stages;

use changes::PactChanges;
use stages::StageChanges;

use crate::{
    event::{EventBody, JournalEvent},
    journal::to_i32,
};

/// Applies journal events (new ones, or a replay after a reorg), in journal order, with as few
/// statements as the projections allow: creations, verifications, payouts and withdrawals are each
/// one multi-row statement per batch; the status events of a batch are folded into one change per
/// pact (each column's last value) and written in one statement, their disputes in two; oracle
/// and agent updates (rare) are a statement or two each. The same as applying each event in order: a creation is always
/// its pact's first event, a later event's value of a column replaces an earlier one's, a
/// verification adds one to its pact's score count, and verifications, payouts and withdrawals
/// insert rows no other event reads.
pub async fn apply_batch(conn: &mut PgConnection, events: &[&JournalEvent]) -> Result<(), sqlx::Error> {
    use EventBody as E;
    let mut created = Vec::new();
    let mut later = Bulk::default();
    let mut changes = PactChanges::default();
    let mut stages = StageChanges::default();
    let mut in_order = Vec::new();
    // The one place that says which projection an event feeds: every event is named, so a new
    // one does not compile until it has its projection (docs/architecture.md §Where to add). The
    // projections' own matches fold what is sent to them and refuse anything else as misrouted.
    for &e in events {
        match &e.body {
            E::PactCreated { .. } => created.push(e),
            // A verification's row, one more score on its pact's change, and (a verdict) the void
            // of the offer standing before it.
            E::VerificationSubmitted { pact_id, .. } => {
                later.push(e)?;
                changes.push(*pact_id, e)?;
                in_order.push(e);
            }
            E::OffersVoided { .. } => in_order.push(e),
            // A stage's score: its verification's row, a change of its stage, and a verdict.
            E::StageScored { .. } => {
                later.push(e)?;
                stages.push(e, &mut changes)?;
                in_order.push(e);
            }
            // Every other change of a stage on a pact of several is a verdict that voids the
            // offers standing before it, as well as a change of the stage.
            E::StageSubmitted { .. }
            | E::StageFinalized { .. }
            | E::StageApproved { .. }
            | E::StageRejected { .. }
            | E::StageDisputed { .. }
            | E::StageResolved { .. }
            | E::StageTimedOut { .. } => {
                stages.push(e, &mut changes)?;
                in_order.push(e);
            }
            E::PactStaged { .. } | E::StageEnded { .. } => stages.push(e, &mut changes)?,
            // The pact's change, and on a pact of several a change of its stages too.
            E::PactAccepted { pact_id, .. } | E::WorkStarted { pact_id, .. } => {
                changes.push(*pact_id, e)?;
                stages.push(e, &mut changes)?;
            }
            E::Payout { .. } | E::Withdrawn { .. } | E::FeedbackGiven { .. } => later.push(e)?,
            E::PactCancelled { pact_id, .. }
            | E::WorkSubmitted { pact_id, .. }
            | E::VerificationFinalized { pact_id, .. }
            | E::WorkApproved { pact_id, .. }
            | E::WorkRejected { pact_id, .. }
            | E::DisputeRaised { pact_id, .. }
            | E::DisputeResolved { pact_id, .. }
            | E::TimeoutClaimed { pact_id, .. }
            | E::PactEnded { pact_id, .. } => changes.push(*pact_id, e)?,
            // The pact's ending folds with the status events; the offer's row is marked in order.
            E::SettlementAccepted { pact_id, .. } => {
                changes.push(*pact_id, e)?;
                in_order.push(e);
            }
            E::SettlementProposed { .. }
            | E::SettlementWithdrawn { .. }
            | E::CurrencyAllowed { .. }
            | E::OracleRegistered { .. }
            | E::StakeIncreased { .. }
            | E::CapabilitiesUpdated { .. }
            | E::OracleDeregistered { .. }
            | E::StakeWithdrawn { .. }
            | E::AgentRegistered { .. }
            | E::ProfileUpdated { .. }
            | E::AgentDeactivated { .. }
            | E::AgentReactivated { .. }
            | E::Erc8004(_) => in_order.push(e),
        }
    }
    insert_created(conn, &created).await?;
    changes.write(conn).await?;
    stages.write(conn).await?;
    // Verdicts void offers in one statement per run of them: written before the next settlement
    // event (which may make, take back or accept an offer the verdicts came before) and at the end.
    let mut voids = settlements::Voids::default();
    for e in in_order {
        match &e.body {
            E::VerificationSubmitted { pact_id, .. }
            | E::OffersVoided { pact_id, .. }
            | E::StageSubmitted { pact_id, .. }
            | E::StageScored { pact_id, .. }
            | E::StageFinalized { pact_id, .. }
            | E::StageApproved { pact_id, .. }
            | E::StageRejected { pact_id, .. }
            | E::StageDisputed { pact_id, .. }
            | E::StageResolved { pact_id, .. }
            | E::StageTimedOut { pact_id, .. } => {
                voids.push(*pact_id, Place::of(e));
            }
            E::SettlementProposed { .. } | E::SettlementWithdrawn { .. } | E::SettlementAccepted { .. } => {
                voids.write(conn).await?;
                apply_in_order(conn, e).await?;
            }
            _ => apply_in_order(conn, e).await?,
        }
    }
    voids.write(conn).await?;
    later.write(conn).await
}

/// Applies one event of the projections written event by event, in journal order (each kind to
/// its own statement); `apply_batch` writes the others in bulk.
async fn apply_in_order(conn: &mut PgConnection, e: &JournalEvent) -> Result<(), sqlx::Error> {
    use EventBody as E;
    let at = &Place::of(e);
    match &e.body {
        E::SettlementProposed { pact_id, by, status, round, seller_share, expires_at } => {
            settlements::proposed(conn, at, pact_id, by, status, round, seller_share, expires_at).await
        }
        E::SettlementWithdrawn { pact_id, round, .. } => {
            settlements::withdrawn(conn, at, pact_id, round).await
        }
        E::SettlementAccepted { pact_id, by, round, .. } => {
            settlements::accepted(conn, at, pact_id, by, round).await
        }
        E::CurrencyAllowed { currency, decimals, symbol } => {
            currency_allowed(conn, e, currency, decimals, symbol).await
        }
        E::OracleRegistered { oracle, stake, capabilities } => {
            oracles::registered(conn, at, oracle, stake, capabilities).await
        }
        E::StakeIncreased { oracle, total_stake, .. } => oracles::staked(conn, at, oracle, total_stake).await,
        E::CapabilitiesUpdated { oracle, capabilities } => {
            oracles::capabilities_updated(conn, at, oracle, capabilities).await
        }
        E::OracleDeregistered { oracle, unlock_at } => {
            oracles::deregistered(conn, at, oracle, unlock_at).await
        }
        E::StakeWithdrawn { oracle, .. } => oracles::withdrawn(conn, at, oracle).await,
        E::AgentRegistered { agent, profile } | E::ProfileUpdated { agent, profile } => {
            agents::write_profile(conn, at, agent, profile).await
        }
        E::AgentDeactivated { agent } => agents::set_active(conn, at, agent, false).await,
        E::AgentReactivated { agent } => agents::set_active(conn, at, agent, true).await,
        E::Erc8004(event) => erc8004::apply(conn, e, event).await,
        // The router (`apply_batch`) writes the others in bulk.
        other => Err(misrouted(other.kind(), "the in-order projections")),
    }
}

/// An event the router (`apply_batch`, the one match that names every event) sent to a projection
/// that has no fold for it: a bug in the router, refused rather than dropped.
fn misrouted(kind: EventKind, to: &str) -> sqlx::Error {
    sqlx::Error::Protocol(format!(
        "a {kind} event was routed to {to}, which do not fold it: see project::apply_batch"
    ))
}

/// An event whose values no contract of ours emits: refused, naming where it is, never defaulted.
fn unreadable(e: &JournalEvent, what: &str) -> sqlx::Error {
    sqlx::Error::Protocol(format!(
        "the {} event at block {} log {} holds {what}: is the indexer older than the contract it follows?",
        e.body.kind(),
        e.block_number,
        e.log_index
    ))
}

/// Which rows of a projection table a rollback deletes before the journal that remains is
/// replayed over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undo {
    /// The rows written at a block above the fork (the column holds the block). Their events are
    /// never replayed (declared `once`: `EventBody::ONCE`, which `journal::history` leaves out), so
    /// the rows below the fork stay as they are.
    Above(&'static str),
    /// The rows of every pact an abandoned event touched (`pact_id`): rebuilt from the journal.
    Pacts,
    /// The rows of every account an abandoned event touched (the column holds the address):
    /// rebuilt from the journal.
    Accounts(&'static str),
}

/// Every table the projections write, with its undo, children before their parents (the order a
/// rollback deletes in, so no foreign key's cascade is relied on). `tests/tests/index_catalog.rs`
/// holds this list to the database's catalog: a table a migration adds is here, or named there
/// as bookkeeping or as derived, or the test fails.
pub const TABLES: &[(&str, Undo)] = &[
    ("feedback", Undo::Pacts),
    ("settlements", Undo::Pacts),
    ("disputes", Undo::Pacts),
    ("verifications", Undo::Pacts),
    ("pact_stages", Undo::Pacts),
    ("pact_oracles", Undo::Pacts),
    ("pacts", Undo::Pacts),
    ("payouts", Undo::Above("block_number")),
    ("withdrawals", Undo::Above("block_number")),
    ("currencies", Undo::Above("block_number")),
    ("agent_capabilities", Undo::Accounts("address")),
    ("agents", Undo::Accounts("address")),
    ("oracles", Undo::Accounts("address")),
    ("erc8004_revocations", Undo::Above("block_number")),
    ("erc8004_feedback", Undo::Above("block_number")),
    ("erc8004_agent_changes", Undo::Above("block_number")),
    ("erc8004_agents", Undo::Above("block_number")),
];

/// Undoes every projection above block `above` (a rollback to it), table by table as [`TABLES`]
/// says: the rows written above it, and the rows of the touched `pacts` and `accounts`, which
/// [`apply_batch`] then rebuilds from the journal that remains.
pub async fn rollback(
    conn: &mut PgConnection,
    chain_id: u64,
    above: u64,
    pacts: &[String],
    accounts: &[Vec<u8>],
) -> Result<(), sqlx::Error> {
    for &(table, undo) in TABLES {
        let sql = match undo {
            Undo::Above(column) => format!("DELETE FROM {table} WHERE chain_id = $1 AND {column} > $2"),
            Undo::Pacts => {
                format!("DELETE FROM {table} WHERE chain_id = $1 AND pact_id = ANY($3::text[]::numeric[])")
            }
            Undo::Accounts(column) => {
                format!("DELETE FROM {table} WHERE chain_id = $1 AND {column} = ANY($4)")
            }
        };
        // Only names from `TABLES` are formatted in; every value is bound.
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(i64_of(chain_id))
            .bind(i64_of(above))
            .bind(pacts)
            .bind(accounts)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Records a currency the escrow allows.
async fn currency_allowed(
    conn: &mut PgConnection,
    e: &JournalEvent,
    currency: &Address,
    decimals: &u8,
    symbol: &ChainText,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO currencies (chain_id, address, decimals, symbol, symbol_bytes, block_number)
         VALUES ($1, $2, $3, $4, $5, $6)",
        i64_of(e.chain_id),
        currency.as_slice(),
        i16::from(*decimals),
        &*symbol.display(),
        symbol.exact_if_not_plain(),
        i64_of(e.block_number),
    )
    .execute(conn)
    .await
    .map(drop)
}

/// The display forms of `texts`, for a `text[]` column.
fn displays(texts: &[ChainText]) -> Vec<String> {
    texts.iter().map(|t| t.display().into_owned()).collect()
}

/// The exact bytes of every one of `texts`, for the `bytea[]` beside a `text[]` column: `None`
/// when every display form is exact.
fn exact_if_any_not_plain(texts: &[ChainText]) -> Option<Vec<Vec<u8>>> {
    texts.iter().any(|t| !t.is_plain()).then(|| texts.iter().map(|t| t.as_bytes().to_vec()).collect())
}

/// Where and when an event happened, as the database stores it.
pub(super) struct Place {
    chain_id: i64,
    block: i64,
    time: i64,
}

impl Place {
    fn of(e: &JournalEvent) -> Self {
        Self { chain_id: i64_of(e.chain_id), block: i64_of(e.block_number), time: i64_of(e.block_time) }
    }
}

fn code(status: PactStatus) -> i16 {
    i16::from(status.code())
}

/// Inserts the pacts (and their oracles) of many `PactCreated` events in two statements.
async fn insert_created(conn: &mut PgConnection, events: &[&JournalEvent]) -> Result<(), sqlx::Error> {
    let Some(first) = events.first() else { return Ok(()) };
    let mut c = CreatedColumns::default();
    for e in events {
        c.push(e);
    }
    sqlx::query!(
        "INSERT INTO pacts (chain_id, pact_id, initiator, status, creator, buyer, seller, arbitrator, spec_hash,
             spec_uri, deadline, review_period, threshold, payment, buyer_stake, seller_stake, created_at,
             created_block, updated_block, counterparty, accept_by, currency, spec_uri_bytes)
         SELECT $1, id::numeric, i, $2, cr, b, s, a, sh, su, to_timestamp(dl), rp, th, pay::numeric,
                bs::numeric, ss::numeric, to_timestamp(t), blk, blk, cp, to_timestamp(ab), cur, sub
         FROM UNNEST($3::text[], $4::smallint[], $5::bytea[], $6::bytea[], $7::bytea[], $8::bytea[], $9::bytea[],
                     $10::text[], $11::bigint[], $12::bigint[], $13::smallint[], $14::text[], $15::text[],
                     $16::text[], $17::bigint[], $18::bigint[], $19::bytea[], $20::bigint[], $21::bytea[],
                     $22::bytea[])
              AS u(id, i, cr, b, s, a, sh, su, dl, rp, th, pay, bs, ss, t, blk, cp, ab, cur, sub)",
        i64_of(first.chain_id),
        code(PactStatus::Negotiating),
        &c.pact_id,
        &c.initiator,
        &c.creator,
        &c.buyer as &[Option<Vec<u8>>],
        &c.seller as &[Option<Vec<u8>>],
        &c.arbitrator,
        &c.spec_hash,
        &c.spec_uri,
        &c.deadline,
        &c.review_period,
        &c.threshold,
        &c.payment,
        &c.buyer_stake,
        &c.seller_stake,
        &c.time,
        &c.block,
        &c.counterparty as &[Option<Vec<u8>>],
        &c.accept_by,
        &c.currency,
        &c.spec_uri_bytes as &[Option<Vec<u8>>],
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        "INSERT INTO pact_oracles (chain_id, pact_id, position, oracle, weight)
         SELECT $1, id::numeric, p, o, w FROM UNNEST($2::text[], $3::smallint[], $4::bytea[], $5::smallint[])
              AS u(id, p, o, w)",
        i64_of(first.chain_id),
        &c.oracle_pact,
        &c.oracle_position,
        &c.oracle,
        &c.oracle_weight,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// The columns of many `PactCreated` events, for UNNEST.
#[derive(Default)]
struct CreatedColumns {
    pact_id: Vec<String>,
    initiator: Vec<i16>,
    creator: Vec<Vec<u8>>,
    buyer: Vec<Option<Vec<u8>>>,
    seller: Vec<Option<Vec<u8>>>,
    arbitrator: Vec<Vec<u8>>,
    spec_hash: Vec<Vec<u8>>,
    spec_uri: Vec<String>,
    spec_uri_bytes: Vec<Option<Vec<u8>>>,
    deadline: Vec<i64>,
    review_period: Vec<i64>,
    threshold: Vec<i16>,
    payment: Vec<String>,
    buyer_stake: Vec<String>,
    seller_stake: Vec<String>,
    time: Vec<i64>,
    block: Vec<i64>,
    counterparty: Vec<Option<Vec<u8>>>,
    accept_by: Vec<i64>,
    currency: Vec<Vec<u8>>,
    oracle_pact: Vec<String>,
    oracle_position: Vec<i16>,
    oracle: Vec<Vec<u8>>,
    oracle_weight: Vec<i16>,
}

impl CreatedColumns {
    fn push(&mut self, e: &JournalEvent) {
        let EventBody::PactCreated {
            pact_id,
            creator,
            initiator,
            arbitrator,
            spec_hash,
            spec_uri,
            deadline,
            accept_by,
            counterparty,
            review_period,
            threshold,
            currency,
            payment,
            stake,
            oracles,
            weights,
            ..
        } = &e.body
        else {
            return;
        };
        let by_buyer = Initiator::try_from(*initiator) == Ok(Initiator::Buyer);
        let id = pact_id.to_string();
        self.pact_id.push(id.clone());
        self.initiator.push(i16::from(*initiator));
        self.creator.push(creator.to_vec());
        self.buyer.push(by_buyer.then(|| creator.to_vec()));
        self.seller.push((!by_buyer).then(|| creator.to_vec()));
        self.arbitrator.push(arbitrator.to_vec());
        self.spec_hash.push(spec_hash.to_vec());
        self.spec_uri.push(spec_uri.display().into_owned());
        self.spec_uri_bytes.push(spec_uri.exact_if_not_plain());
        self.deadline.push(i64_of(*deadline));
        self.review_period.push(i64_of(*review_period));
        self.threshold.push(i16::from(*threshold));
        self.payment.push(payment.to_string());
        let (buyer_stake, seller_stake) = if by_buyer { (*stake, U256::ZERO) } else { (U256::ZERO, *stake) };
        self.buyer_stake.push(buyer_stake.to_string());
        self.seller_stake.push(seller_stake.to_string());
        self.time.push(i64_of(e.block_time));
        self.block.push(i64_of(e.block_number));
        self.counterparty.push((!counterparty.is_zero()).then(|| counterparty.to_vec()));
        self.accept_by.push(i64_of(*accept_by));
        self.currency.push(currency.to_vec());
        for (position, (oracle, weight)) in oracles.iter().zip(weights).enumerate() {
            self.oracle_pact.push(id.clone());
            self.oracle_position.push(i16::try_from(position).unwrap_or(i16::MAX));
            self.oracle.push(oracle.to_vec());
            self.oracle_weight.push(i16::from(*weight));
        }
    }
}

/// Verifications, payouts, withdrawals and feedback of a batch, written after its other events.
#[derive(Default)]
struct Bulk {
    chain_id: i64,
    verification_pact: Vec<String>,
    verification_stage: Vec<i16>,
    verification_oracle: Vec<Vec<u8>>,
    verification_score: Vec<i16>,
    verification_proof: Vec<Vec<u8>>,
    verification_time: Vec<i64>,
    verification_block: Vec<i64>,
    payout_block: Vec<i64>,
    payout_log: Vec<i32>,
    payout_pact: Vec<String>,
    payout_account: Vec<Vec<u8>>,
    payout_currency: Vec<Vec<u8>>,
    payout_amount: Vec<String>,
    payout_time: Vec<i64>,
    withdrawal_block: Vec<i64>,
    withdrawal_log: Vec<i32>,
    withdrawal_account: Vec<Vec<u8>>,
    withdrawal_currency: Vec<Vec<u8>>,
    withdrawal_amount: Vec<String>,
    withdrawal_time: Vec<i64>,
    feedback_pact: Vec<String>,
    feedback_rater: Vec<Vec<u8>>,
    feedback_ratee: Vec<Vec<u8>>,
    feedback_rating: Vec<i16>,
    /// Each feedback's tags (display forms) as a JSON array (Postgres has no arrays of arrays of
    /// varying length).
    feedback_tags: Vec<String>,
    /// Each feedback's tags' exact bytes as a JSON array of 0x-hex, when any is not plain.
    feedback_tags_bytes: Vec<Option<String>>,
    feedback_comment: Vec<String>,
    feedback_comment_bytes: Vec<Option<Vec<u8>>>,
    feedback_time: Vec<i64>,
    feedback_block: Vec<i64>,
    feedback_log: Vec<i32>,
}

impl Bulk {
    fn push(&mut self, e: &JournalEvent) -> Result<(), sqlx::Error> {
        self.chain_id = i64_of(e.chain_id);
        let (block, log, time) = (i64_of(e.block_number), to_i32(e.log_index), i64_of(e.block_time));
        match &e.body {
            EventBody::VerificationSubmitted { pact_id, oracle, score, proof } => {
                self.verification(pact_id, 0, oracle, *score, proof, time, block);
            }
            EventBody::StageScored { pact_id, stage, oracle, score, proof } => {
                self.verification(pact_id, *stage, oracle, *score, proof, time, block);
            }
            EventBody::Payout { pact_id, to, currency, amount } => {
                self.payout_block.push(block);
                self.payout_log.push(log);
                self.payout_pact.push(pact_id.to_string());
                self.payout_account.push(to.to_vec());
                self.payout_currency.push(currency.to_vec());
                self.payout_amount.push(amount.to_string());
                self.payout_time.push(time);
            }
            EventBody::Withdrawn { account, currency, amount } => {
                self.withdrawal_block.push(block);
                self.withdrawal_log.push(log);
                self.withdrawal_account.push(account.to_vec());
                self.withdrawal_currency.push(currency.to_vec());
                self.withdrawal_amount.push(amount.to_string());
                self.withdrawal_time.push(time);
            }
            EventBody::FeedbackGiven { pact_id, from, to, rating, tags, comment } => {
                self.feedback_pact.push(pact_id.to_string());
                self.feedback_rater.push(from.to_vec());
                self.feedback_ratee.push(to.to_vec());
                self.feedback_rating.push(i16::from(*rating));
                self.feedback_tags.push(serde_json::Value::from(displays(tags)).to_string());
                self.feedback_tags_bytes.push(tags.iter().any(|t| !t.is_plain()).then(|| {
                    serde_json::Value::from(tags.iter().map(ChainText::hex).collect::<Vec<_>>()).to_string()
                }));
                self.feedback_comment.push(comment.display().into_owned());
                self.feedback_comment_bytes.push(comment.exact_if_not_plain());
                self.feedback_time.push(time);
                self.feedback_block.push(block);
                self.feedback_log.push(log);
            }
            // The router (`apply_batch`) sends only the events above.
            other => return Err(misrouted(other.kind(), "the bulk rows")),
        }
        Ok(())
    }

    /// An oracle's score of stage `stage` of `pact_id` (0 for a one-stage pact's).
    #[allow(clippy::too_many_arguments)] // the event's own fields and where it happened
    fn verification(
        &mut self,
        pact_id: &U256,
        stage: u8,
        oracle: &Address,
        score: u8,
        proof: &alloy::primitives::B256,
        time: i64,
        block: i64,
    ) {
        self.verification_pact.push(pact_id.to_string());
        self.verification_stage.push(i16::from(stage));
        self.verification_oracle.push(oracle.to_vec());
        self.verification_score.push(i16::from(score));
        self.verification_proof.push(proof.to_vec());
        self.verification_time.push(time);
        self.verification_block.push(block);
    }

    async fn write(self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        if !self.verification_pact.is_empty() {
            sqlx::query!(
                "INSERT INTO verifications (chain_id, pact_id, stage, oracle, score, proof, submitted_at, block_number)
                 SELECT $1, id::numeric, k, o, s, p, to_timestamp(t), b
                 FROM UNNEST($2::text[], $3::smallint[], $4::bytea[], $5::smallint[], $6::bytea[], $7::bigint[],
                             $8::bigint[])
                      AS u(id, k, o, s, p, t, b)",
                self.chain_id,
                &self.verification_pact,
                &self.verification_stage,
                &self.verification_oracle,
                &self.verification_score,
                &self.verification_proof,
                &self.verification_time,
                &self.verification_block,
            )
            .execute(&mut *conn)
            .await?;
        }
        if !self.payout_block.is_empty() {
            sqlx::query!(
                "INSERT INTO payouts (chain_id, block_number, log_index, pact_id, account, amount, paid_at, currency)
                 SELECT $1, b, l, id::numeric, a, amt::numeric, to_timestamp(t), cur
                 FROM UNNEST($2::bigint[], $3::int[], $4::text[], $5::bytea[], $6::text[], $7::bigint[], $8::bytea[])
                      AS u(b, l, id, a, amt, t, cur)",
                self.chain_id,
                &self.payout_block,
                &self.payout_log,
                &self.payout_pact,
                &self.payout_account,
                &self.payout_amount,
                &self.payout_time,
                &self.payout_currency,
            )
            .execute(&mut *conn)
            .await?;
        }
        if !self.withdrawal_block.is_empty() {
            sqlx::query!(
                "INSERT INTO withdrawals (chain_id, block_number, log_index, account, amount, withdrawn_at, currency)
                 SELECT $1, b, l, a, amt::numeric, to_timestamp(t), cur
                 FROM UNNEST($2::bigint[], $3::int[], $4::bytea[], $5::text[], $6::bigint[], $7::bytea[])
                      AS u(b, l, a, amt, t, cur)",
                self.chain_id,
                &self.withdrawal_block,
                &self.withdrawal_log,
                &self.withdrawal_account,
                &self.withdrawal_amount,
                &self.withdrawal_time,
                &self.withdrawal_currency,
            )
            .execute(&mut *conn)
            .await?;
        }
        if !self.feedback_pact.is_empty() {
            sqlx::query!(
                "INSERT INTO feedback (chain_id, pact_id, rater, ratee, rating, tags, comment, given_at, block_number,
                                       log_index, tags_bytes, comment_bytes)
                 SELECT $1, id::numeric, r, e, g, ARRAY(SELECT jsonb_array_elements_text(tg::jsonb)), c, to_timestamp(t), b, l,
                        CASE WHEN tb IS NOT NULL THEN
                            ARRAY(SELECT decode(substr(x, 3), 'hex') FROM jsonb_array_elements_text(tb::jsonb) AS x)
                        END,
                        cb
                 FROM UNNEST($2::text[], $3::bytea[], $4::bytea[], $5::smallint[], $6::text[], $7::text[], $8::bigint[],
                             $9::bigint[], $10::int[], $11::text[], $12::bytea[]) AS u(id, r, e, g, tg, c, t, b, l, tb, cb)",
                self.chain_id,
                &self.feedback_pact,
                &self.feedback_rater,
                &self.feedback_ratee,
                &self.feedback_rating,
                &self.feedback_tags,
                &self.feedback_comment,
                &self.feedback_time,
                &self.feedback_block,
                &self.feedback_log,
                &self.feedback_tags_bytes as &[Option<String>],
                &self.feedback_comment_bytes as &[Option<Vec<u8>>],
            )
            .execute(conn)
            .await?;
        }
        Ok(())
    }
}
