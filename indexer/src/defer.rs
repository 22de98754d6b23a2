//! Deferred upkeep while far behind the head (migrations/0017, docs/indexer.md §Deferred upkeep).
//!
//! A backfill writes every row of the index once and most `pacts` rows several times; each write
//! also updates the secondary indexes of its table and, for `pacts` and `pact_oracles`, the
//! triggers that keep `pact_counts`. When a pass starts far behind the head, [`begin`] drops those
//! indexes and triggers (keeping their definitions in `deferred_objects`, in the same transaction)
//! and marks the chain's counts stale; the batch that reaches the head calls [`finish`] in its own
//! transaction, which builds them again from the definitions and recounts the chain from its
//! rows, so a reader that sees the checkpoint at the head sees every index and count. A kill at
//! any instant leaves either the objects or their definitions, and the next session carries on
//! deferred until it reaches the head.

use agentpact_schema::i64_of;
use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// The tables whose non-unique indexes wait: the ones every backfill batch writes. Unique indexes
/// and primary keys stay (the journal's and the projections' upserts need them).
const TABLES: [&str; 6] = ["events", "pacts", "pact_oracles", "verifications", "payouts", "withdrawals"];

/// The triggers that keep `pact_counts` (migrations/0010). `pacts_delete_oracles_first` stays: a
/// reorg's rollback needs it whatever the counts.
const TRIGGERS: [&str; 5] = [
    "pacts_counted_insert",
    "pacts_counted_update",
    "pacts_counted_delete",
    "pact_oracles_counted_insert",
    "pact_oracles_counted_delete",
];

/// Whether a pass that starts `behind` blocks below the head (counting the head), with `indexed`
/// blocks already indexed since the deployment, should defer: at least `min_behind` blocks to go
/// (`None`: never defer), and more to go than done — rebuilding costs about what the rows already
/// indexed cost to sort, so it pays only when the rows still to come outnumber them.
pub fn worth_it(min_behind: Option<u64>, indexed: u64, behind: u64) -> bool {
    min_behind.is_some_and(|min| behind >= min.max(1) && behind > indexed)
}

/// Whether `chain_id`'s upkeep is deferred now (a pass began deferring and no batch has reached
/// the head since).
pub async fn is_deferred(conn: &mut PgConnection, chain_id: u64) -> Result<bool, sqlx::Error> {
    let found = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM deferred_chains WHERE chain_id = $1) AS "found!""#,
        i64_of(chain_id)
    )
    .fetch_one(conn)
    .await?;
    Ok(found)
}

/// Drops the deferred indexes and triggers, keeping their definitions, and marks `chain_id`'s
/// counts stale, in one transaction; `from` is the first block the backfill will write. Defers
/// only when `chain_id` is the only chain of the database (the objects are shared by every chain:
/// another chain following its head would lose its counts and indexes). Returns whether it
/// deferred.
pub async fn begin(conn: &mut PgConnection, chain_id: u64, from: u64) -> Result<bool, sqlx::Error> {
    let mut tx = conn.begin().await?;
    let alone = sqlx::query_scalar!(
        r#"SELECT count(*) FILTER (WHERE chain_id <> $1) = 0 AS "alone!" FROM chains"#,
        i64_of(chain_id)
    )
    .fetch_one(&mut *tx)
    .await?;
    if !alone {
        return Ok(false);
    }
    sqlx::query!(
        "INSERT INTO deferred_chains (chain_id, since_block) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        i64_of(chain_id),
        i64_of(from)
    )
    .execute(&mut *tx)
    .await?;
    // (The query macro types a text[] parameter as `&[String]`.)
    let tables: Vec<String> = TABLES.iter().map(|t| (*t).to_owned()).collect();
    let triggers: Vec<String> = TRIGGERS.iter().map(|t| (*t).to_owned()).collect();
    // The statements are made by Postgres from its own catalog (`%I` quotes each name).
    let drops = sqlx::query_scalar!(
        r#"WITH found AS (
               SELECT i.relname::text AS name, 'index' AS kind, t.relname::text AS table_name,
                      pg_get_indexdef(i.oid) AS definition
               FROM pg_index x
               JOIN pg_class i ON i.oid = x.indexrelid
               JOIN pg_class t ON t.oid = x.indrelid
               WHERE t.relnamespace = current_schema()::regnamespace AND t.relname::text = ANY($1)
                 AND NOT x.indisunique AND NOT x.indisprimary
               UNION ALL
               SELECT g.tgname::text, 'trigger', t.relname::text, pg_get_triggerdef(g.oid)
               FROM pg_trigger g
               JOIN pg_class t ON t.oid = g.tgrelid
               WHERE t.relnamespace = current_schema()::regnamespace AND g.tgname::text = ANY($2)
                 AND NOT g.tgisinternal
           ), kept AS (
               INSERT INTO deferred_objects (name, kind, table_name, definition)
               SELECT name, kind, table_name, definition FROM found
               ON CONFLICT (name) DO NOTHING
               RETURNING name, kind, table_name
           )
           SELECT CASE kind WHEN 'index' THEN format('DROP INDEX %I', name)
                            ELSE format('DROP TRIGGER %I ON %I', name, table_name) END AS "statement!"
           FROM kept"#,
        &tables,
        &triggers
    )
    .fetch_all(&mut *tx)
    .await?;
    for drop in drops {
        sqlx::raw_sql(AssertSqlSafe(drop)).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// Whether any object is deferred now (by this chain's backfill or another's); if so, marks
/// `chain_id`'s counts stale too, in the caller's transaction. Called at the end of every batch,
/// after its writes: another chain's backfill may have dropped the count triggers since this
/// pass began, leaving this batch's rows uncounted; while this batch holds its row locks on
/// `pacts` and `pact_oracles`, no drop can land before the mark does. `from` is the batch's first
/// block.
pub async fn join(conn: &mut PgConnection, chain_id: u64, from: u64) -> Result<bool, sqlx::Error> {
    let marked = sqlx::query_scalar!(
        r#"WITH marked AS (
               INSERT INTO deferred_chains (chain_id, since_block)
               SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM deferred_objects)
               ON CONFLICT DO NOTHING
               RETURNING chain_id
           )
           SELECT EXISTS (SELECT 1 FROM deferred_objects) AS "deferred!""#,
        i64_of(chain_id),
        i64_of(from)
    )
    .fetch_one(conn)
    .await?;
    Ok(marked)
}

/// Builds every deferred index and trigger again from its stored definition and recounts
/// `chain_id`'s `pact_counts` from its rows, in the caller's transaction (the one reaching the
/// head). Objects another chain's backfill deferred are built too: a chain still behind keeps its
/// mark and recounts when it reaches its head.
pub async fn finish(conn: &mut PgConnection, chain_id: u64) -> Result<(), sqlx::Error> {
    // Sorting a million-row index in memory rather than in temporary files.
    sqlx::query!("SELECT set_config('maintenance_work_mem', '256MB', true)").fetch_one(&mut *conn).await?;
    let definitions = sqlx::query_scalar!("DELETE FROM deferred_objects RETURNING definition")
        .fetch_all(&mut *conn)
        .await?;
    for definition in definitions {
        sqlx::raw_sql(AssertSqlSafe(definition)).execute(&mut *conn).await?;
    }
    let chain = i64_of(chain_id);
    sqlx::query!("DELETE FROM pact_counts WHERE chain_id = $1", chain).execute(&mut *conn).await?;
    // What the triggers would have added row by row, added at once (migrations/0010's functions).
    sqlx::query!(
        "INSERT INTO pact_counts (chain_id, dimension, subject, status, pacts, payment)
         SELECT c.chain_id, c.dimension, c.subject, c.status, sum(c.pacts), sum(c.payment)
         FROM (
             SELECT c.* FROM pacts p, pact_row_counts(p, 1) c WHERE p.chain_id = $1
             UNION ALL
             SELECT c.* FROM pact_oracles po
                 JOIN pacts p ON p.chain_id = po.chain_id AND p.pact_id = po.pact_id,
                 pact_oracle_counts(p, po.oracle, 1) c
             WHERE po.chain_id = $1
         ) c
         GROUP BY c.chain_id, c.dimension, c.subject, c.status
         HAVING sum(c.pacts) <> 0 OR sum(c.payment) <> 0",
        chain
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!("DELETE FROM deferred_chains WHERE chain_id = $1", chain).execute(&mut *conn).await?;
    Ok(())
}

/// Gathers the planner's statistics of every table a deferred backfill wrote, in the caller's
/// transaction (after [`finish`] and the reputation refresh). Without them — autovacuum may be
/// off, or not come by before a backfill of a few seconds ends — the planner takes each table
/// for a few hundred rows: a live pass at 100k pacts hashed the whole chain's pacts to join one
/// block's (150 ms a pass). ANALYZE reads a sample of a fixed size, whatever the table's (1.5 s
/// for these at 100k pacts).
pub async fn analyze(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    let tables = format!("ANALYZE {}, pact_counts, reputation_pending, reputation", TABLES.join(", "));
    sqlx::raw_sql(AssertSqlSafe(tables)).execute(conn).await.map(drop)
}

#[cfg(test)]
mod tests {
    use super::worth_it;

    #[test]
    fn defers_only_when_more_is_left_than_done_and_enough_is_left() {
        // A first backfill: nothing indexed yet.
        assert!(worth_it(Some(1_000), 0, 1_000));
        assert!(!worth_it(Some(1_000), 0, 999));
        // A restart after a long stop: more to go than done, or not.
        assert!(worth_it(Some(1_000), 5_000, 5_001));
        assert!(!worth_it(Some(1_000), 5_000, 5_000));
        // Never, when turned off; and a pass with nothing to do never defers.
        assert!(!worth_it(None, 0, u64::MAX));
        assert!(!worth_it(Some(1), 0, 0));
        assert!(worth_it(Some(1), 0, 1));
    }
}
