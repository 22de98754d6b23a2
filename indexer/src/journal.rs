//! The append-only journal of decoded events (`events`), written one batch per statement.

use agentpact_schema::i64_of;
use sqlx::PgConnection;

use crate::event::JournalEvent;

/// Appends `batch` to the journal in one multi-row insert and returns the events that were new.
///
/// An event already in the journal (same chain, block and log index: a backfill meeting the live
/// head, a batch retried after a lost commit) is skipped, so it is projected once.
pub async fn append(
    conn: &mut PgConnection,
    batch: &[JournalEvent],
) -> Result<Vec<JournalEvent>, sqlx::Error> {
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
    Ok(batch
        .iter()
        .filter(|e| new.contains(&(i64_of(e.block_number), to_i32(e.log_index))))
        .cloned()
        .collect())
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
        self.kind.push(e.body.kind().to_owned());
        self.pact_id.push(e.body.pact_id().map(|id| id.to_string()));
        self.account.push(e.body.account().map(|a| a.to_vec()));
        // Serializing plain data (numbers, strings, hex) cannot fail.
        self.data.push(serde_json::to_string(&e.body).unwrap_or_default());
    }
}

/// Log indexes are small; saturate rather than wrap.
pub(crate) fn to_i32(n: u64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
