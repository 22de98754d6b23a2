//! Writes that outlive their call, as tasks (the MCP tasks extension, `io.modelcontextprotocol/tasks`).
//!
//! A write whose transaction is not mined within the call's time goes on in the background
//! ([`crate::call`]). A client that declared the tasks extension gets a task handle instead of
//! the `PENDING` answer, and polls `tasks/get` until the task holds the tool's result. The task
//! lives in `mcp_tasks` (migrations/0013), so the poll may land on any process holding the same
//! key; only that wallet's server reads it. A client without the extension gets `PENDING` and
//! polls `get-transaction`, as before.

use agentpact_schema::i64_of;
use alloy::primitives::{Address, B256};
use chrono::{DateTime, SecondsFormat, Utc};
use rmcp::model::{CallToolResult, DetailedTask, Task, TaskPayload, TaskStatus};
use serde_json::Value;
use sqlx::PgPool;

/// How often a client is asked to poll, in milliseconds.
const POLL_MS: u64 = 1_000;

/// The tasks, in the database every process shares.
#[derive(Debug, Clone)]
pub struct Tasks {
    pool: PgPool,
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl Tasks {
    /// The tasks kept in `pool` (the primary: they are written).
    pub const fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Opens a task for `tool`'s call by `wallet` on chain `chain_id`, waiting for `tx`.
    pub async fn open(
        &self,
        chain_id: u64,
        wallet: Address,
        tool: &str,
        tx: B256,
    ) -> Result<Task, sqlx::Error> {
        let id = format!("task-{}", alloy::hex::encode(rand::random::<[u8; 16]>()));
        let created = sqlx::query_scalar!(
            "INSERT INTO mcp_tasks (id, chain_id, wallet, tool, tx_hash, status)
             VALUES ($1, $2, $3, $4, $5, 'working') RETURNING created_at",
            id,
            i64_of(chain_id),
            wallet.as_slice(),
            tool,
            tx.as_slice()
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(Task::new(id, TaskStatus::Working, timestamp(created), timestamp(created))
            .with_status_message(working(tool, tx))
            .with_poll_interval_ms(POLL_MS))
    }

    /// Records the tool's `result` as the end of task `id`.
    pub async fn finish(&self, id: &str, result: &CallToolResult) -> Result<(), sqlx::Error> {
        let result = serde_json::to_value(result).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        sqlx::query!(
            "UPDATE mcp_tasks SET status = 'completed', result = $2, updated_at = now() WHERE id = $1",
            id,
            result
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Task `id` of `wallet` on chain `chain_id` as `tasks/get` shows it; `None` when there is no
    /// such task of this wallet.
    pub async fn get(
        &self,
        id: &str,
        chain_id: u64,
        wallet: Address,
    ) -> Result<Option<DetailedTask>, sqlx::Error> {
        let row = sqlx::query!(
            "SELECT tool, tx_hash, status, result, created_at, updated_at FROM mcp_tasks
             WHERE id = $1 AND chain_id = $2 AND wallet = $3",
            id,
            i64_of(chain_id),
            wallet.as_slice()
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let decode =
            |what: String| sqlx::Error::ColumnDecode { index: "mcp_tasks".into(), source: what.into() };
        let tx = B256::try_from(row.tx_hash.as_slice())
            .map_err(|_| decode(format!("task {id}: tx_hash is not 32 bytes")))?;
        let task = Task::new(id, TaskStatus::Working, timestamp(row.created_at), timestamp(row.updated_at))
            .with_poll_interval_ms(POLL_MS);
        let tool = row.tool;
        let payload = match (row.status.as_str(), row.result) {
            ("working", None) => TaskPayload::Working,
            ("completed", Some(Value::Object(result))) => TaskPayload::Completed { result },
            (other, _) => {
                return Err(decode(format!(
                    "task {id}: status {other:?} with a result that does not fit it"
                )));
            }
        };
        let task = match payload {
            TaskPayload::Working => task.with_status_message(working(&tool, tx)),
            _ => task.with_status_message(format!("{tool} finished: transaction {tx}")),
        };
        Ok(Some(DetailedTask::new(task, payload)))
    }
}

fn working(tool: &str, tx: B256) -> String {
    format!("{tool} sent transaction {tx}; waiting for it to be mined and indexed")
}
