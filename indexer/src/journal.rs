//! The append-only journal of decoded events (`events`), written one batch per statement.

use agentpact_schema::{Cells, i64_of};
use sqlx::PgConnection;

use crate::{
    IndexError,
    event::{EventBody, JournalEvent},
};

/// Appends `batch` to the journal in one multi-row insert and returns the events that were new
/// (borrowed from `batch`: a backfill's events are not copied).
///
/// An event already in the journal (same chain, block and log index: a backfill meeting the live
/// head, a batch retried after a lost commit) is skipped, so it is projected once.
pub async fn append<'a>(
    conn: &mut PgConnection,
    batch: &'a [JournalEvent],
) -> Result<Vec<&'a JournalEvent>, sqlx::Error> {
    let Some(first) = batch.first() else { return Ok(Vec::new()) };
    let chain_id = i64_of(first.chain_id);
    let mut columns = Columns::default();
    for e in batch {
        columns.push(e);
    }
    let inserted = sqlx::query!(
        r#"
        INSERT INTO events
            (chain_id, block_number, log_index, block_hash, tx_hash, block_time, contract, kind, pact_id, account, data)
        SELECT $1, n, i, bh, th, to_timestamp(t), c, k, p::numeric, a, d::jsonb
        FROM UNNEST($2::bigint[], $3::int[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bytea[],
                    $8::text[], $9::text[], $10::bytea[], $11::text[])
             AS u(n, i, bh, th, t, c, k, p, a, d)
        ON CONFLICT (chain_id, block_number, log_index) DO NOTHING
        RETURNING block_number, log_index
        "#,
        chain_id,
        &columns.block_number,
        &columns.log_index,
        &columns.block_hash,
        &columns.tx_hash,
        &columns.block_time,
        &columns.contract,
        &columns.kind,
        &columns.pact_id as &[Option<String>],
        &columns.account as &[Option<Vec<u8>>],
        &columns.data,
    )
    .fetch_all(&mut *conn)
    .await?;
    let new: std::collections::HashSet<(i64, i32)> =
        inserted.into_iter().map(|r| (r.block_number, r.log_index)).collect();
    Ok(batch.iter().filter(|e| new.contains(&(i64_of(e.block_number), to_i32(e.log_index)))).collect())
}

/// The batch as one array per column, for UNNEST.
#[derive(Default)]
struct Columns {
    block_number: Vec<i64>,
    log_index: Vec<i32>,
    block_hash: Vec<Vec<u8>>,
    tx_hash: Vec<Vec<u8>>,
    block_time: Vec<i64>,
    contract: Vec<Vec<u8>>,
    kind: Vec<String>,
    pact_id: Vec<Option<String>>,
    account: Vec<Option<Vec<u8>>>,
    data: Vec<String>,
}

impl Columns {
    fn push(&mut self, e: &JournalEvent) {
        self.block_number.push(i64_of(e.block_number));
        self.log_index.push(to_i32(e.log_index));
        self.block_hash.push(e.block_hash.to_vec());
        self.tx_hash.push(e.tx_hash.to_vec());
        self.block_time.push(i64_of(e.block_time));
        self.contract.push(e.contract.to_vec());
        self.kind.push(e.body.kind().name().to_owned());
        self.pact_id.push(e.body.pact_id().map(|id| id.to_string()));
        self.account.push(e.body.account().map(|a| a.to_vec()));
        // Serializing plain data (numbers, strings, hex) cannot fail.
        self.data.push(serde_json::to_string(&e.body).unwrap_or_default());
    }
}

/// The names of the kinds whose rows are written once per event ([`EventBody::ONCE`]): a reorg
/// neither rebuilds what they touched nor replays them.
fn once_kinds() -> Vec<String> {
    EventBody::ONCE.iter().map(|k| k.name().to_owned()).collect()
}

/// Log indexes are small; saturate rather than wrap.
pub(crate) fn to_i32(n: u64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// What the events above block `above` touched: the pacts (as decimal text) and the accounts
/// (oracles and agents), leaving out the events written once ([`EventBody::ONCE`]: a payout or a
/// withdrawal changes no pact's or account's projection).
pub async fn touched_above(
    conn: &mut PgConnection,
    chain_id: u64,
    above: u64,
) -> Result<(Vec<String>, Vec<Vec<u8>>), sqlx::Error> {
    let (chain, above, once) = (i64_of(chain_id), i64_of(above), once_kinds());
    let pacts = sqlx::query_scalar!(
        r#"SELECT DISTINCT pact_id::text AS "pact_id!" FROM events
           WHERE chain_id = $1 AND block_number > $2 AND pact_id IS NOT NULL AND kind <> ALL($3)"#,
        chain,
        above,
        &once[..]
    )
    .fetch_all(&mut *conn)
    .await?;
    let accounts = sqlx::query_scalar!(
        r#"SELECT DISTINCT account AS "account!" FROM events
           WHERE chain_id = $1 AND block_number > $2 AND account IS NOT NULL AND kind <> ALL($3)"#,
        chain,
        above,
        &once[..]
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok((pacts, accounts))
}

/// Deletes the journal above block `above`; how many events went.
pub async fn truncate_above(conn: &mut PgConnection, chain_id: u64, above: u64) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        "DELETE FROM events WHERE chain_id = $1 AND block_number > $2",
        i64_of(chain_id),
        i64_of(above)
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// The journal's history of `pacts` and `accounts`, in order, for a replay: without the events
/// written once ([`EventBody::ONCE`]: payouts, withdrawals), whose rows stay when their pact is
/// rebuilt. Every row reads back
/// into the event it recorded, or the read fails naming it.
pub async fn history(
    conn: &mut PgConnection,
    chain_id: u64,
    pacts: &[String],
    accounts: &[Vec<u8>],
) -> Result<Vec<JournalEvent>, IndexError> {
    let rows = sqlx::query!(
        r#"SELECT block_number, log_index, block_hash, tx_hash,
                  extract(epoch FROM block_time)::bigint AS "block_time!", contract, data::text AS "data!"
           FROM events
           WHERE chain_id = $1
             AND (pact_id = ANY($2::text[]::numeric[]) OR account = ANY($3)) AND kind <> ALL($4)
           ORDER BY block_number, log_index"#,
        i64_of(chain_id),
        pacts,
        accounts,
        &once_kinds()[..]
    )
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|r| {
            let cells = Cells {
                table: "events",
                key: format!("chain {chain_id} block {} log {}", r.block_number, r.log_index),
            };
            let body: EventBody = cells.named("data", &r.data, |text| serde_json::from_str(text).ok())?;
            Ok(JournalEvent {
                chain_id,
                block_number: cells.int("block_number", r.block_number)?,
                log_index: cells.int("log_index", r.log_index)?,
                block_hash: cells.hash("block_hash", &r.block_hash)?,
                tx_hash: cells.hash("tx_hash", &r.tx_hash)?,
                block_time: cells.int("block_time", r.block_time)?,
                contract: cells.address("contract", &r.contract)?,
                body,
            })
        })
        .collect()
}
