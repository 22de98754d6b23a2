//! The index held to its schema: every table the migrations create is undone by a rollback (or
//! says why it needs no undo), every closed set's CHECK constraint lists exactly its Rust enum, and
//! a corrupt value in the indexer's own bookkeeping stops it naming table, key and column, while
//! the MCP server reports a corrupt row as INDEX_CORRUPT, not as the agent's input.

use std::collections::BTreeSet;

use agentpact_contracts::{
    DeliveryState, DisputeCause, DisputeOutcome, Initiator, NoticeKind, OracleStatus, Outcome, PactStatus,
    ReputationRole, WebhookMode,
};
use agentpact_indexer::{IndexError, project};
use agentpact_mcp::Role;
use agentpact_tests::{
    HarnessError,
    chain::ether,
    index::{self, small_ranges},
    mcp::{TestAgent, test_limits},
    pacts::Market,
    postgres::TestDatabase,
};
use serde_json::json;
use sqlx::PgPool;

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// Tables a rollback handles itself (`reorg::rollback`: the journal truncated, the remembered
/// blocks forgotten, the checkpoint moved; a chain's identity never changes).
const BOOKKEEPING: [&str; 4] = ["chains", "checkpoints", "blocks", "events"];
/// Tables recomputed from the projections in the same transaction: `pact_counts` by triggers,
/// `reputation`, `reputation_pairs` and `erc8004_reputation` by `reputation::refresh` (every
/// ratee's pairs after a rollback), `reputation_pending` and `erc8004_pending` emptied by it, and
/// `reputation_runs.dirty` set by it.
const DERIVED: [&str; 7] = [
    "pact_counts",
    "reputation",
    "reputation_pairs",
    "reputation_pending",
    "erc8004_reputation",
    "erc8004_pending",
    "reputation_runs",
];
/// One generation of trusted scores, replaced whole by the ranking run from `reputation_pairs`
/// after a pass (`reputation::generation`): a rollback marks the pairs dirty and the next run
/// replaces the generation, so it needs no undo of its own.
const GENERATION: [&str; 4] =
    ["reputation_trust", "reputation_raters", "reputation_scores", "erc8004_trusted"];
/// What a backfill far behind the head put off (`indexer::defer`): no chain content, and a rollback
/// leaves it alone — the deferral outlives it, and the batch that reaches the head empties both.
const UPKEEP: [&str; 2] = ["deferred_objects", "deferred_chains"];
/// Tables no chain event writes: the relay's, the MCP server's, push's (a reorganisation is its own
/// business: revocations, not rollbacks), the wallet policy's, the migrator's.
const NOT_FROM_THE_CHAIN: [&str; 13] = [
    "conversations",
    "negotiation_messages",
    "mcp_confirmations",
    "mcp_tasks",
    "webhook_subscriptions",
    "webhook_cursors",
    "webhook_alarm_cursors",
    "webhook_deliveries",
    "webhook_matched_blocks",
    "wallet_controls",
    "wallet_spends",
    "wallet_ledger",
    "_sqlx_migrations",
];

async fn tables(pool: &PgPool) -> Result<BTreeSet<String>> {
    Ok(sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .collect())
}

#[tokio::test]
async fn every_table_the_migrations_create_has_an_undo_or_a_reason_it_needs_none() -> Result {
    let db = TestDatabase::create().await?;
    let catalog = tables(db.pool()).await?;
    let mut placed = BTreeSet::new();
    for name in project::TABLES
        .iter()
        .map(|(t, _)| *t)
        .chain(BOOKKEEPING)
        .chain(DERIVED)
        .chain(GENERATION)
        .chain(UPKEEP)
        .chain(NOT_FROM_THE_CHAIN)
    {
        assert!(placed.insert(name.to_owned()), "{name} is placed twice");
    }
    let unplaced: Vec<_> = catalog.difference(&placed).collect();
    assert!(
        unplaced.is_empty(),
        "tables with no undo: {unplaced:?}. Add each to indexer::project::TABLES with its Undo, or to a list here saying why none is needed"
    );
    let gone: Vec<_> = placed.difference(&catalog).collect();
    assert!(gone.is_empty(), "listed but not in the schema: {gone:?}");
    Ok(())
}

/// The quoted names of a CHECK constraint's `IN (...)` list.
async fn check_names(pool: &PgPool, constraint: &str) -> Result<BTreeSet<String>> {
    let definition: String =
        sqlx::query_scalar("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = $1")
            .bind(constraint)
            .fetch_one(pool)
            .await?;
    Ok(definition.split('\'').skip(1).step_by(2).map(str::to_owned).collect())
}

fn names(all: impl IntoIterator<Item = &'static str>) -> BTreeSet<String> {
    all.into_iter().map(str::to_owned).collect()
}

#[tokio::test]
async fn each_closed_sets_check_constraint_lists_exactly_its_enum() -> Result {
    let db = TestDatabase::create().await?;
    let pool = db.pool();
    let cases = [
        ("pacts_outcome_known", names(Outcome::ALL.iter().map(|m| m.name()))),
        ("disputes_cause_known", names(DisputeCause::ALL.iter().map(|m| m.name()))),
        ("disputes_outcome_known", names(DisputeOutcome::ALL.iter().map(|m| m.name()))),
        ("oracles_status_known", names(OracleStatus::ALL.iter().map(|m| m.name()))),
        ("reputation_role_known", names(ReputationRole::ALL.iter().map(|m| m.name()))),
        ("conversations_status_known", names(agentpact_negotiation::Status::ALL.iter().map(|m| m.name()))),
        ("webhook_subscriptions_mode_known", names(WebhookMode::ALL.iter().map(|m| m.name()))),
        ("webhook_cursors_mode_known", names(WebhookMode::ALL.iter().map(|m| m.name()))),
        ("webhook_deliveries_kind_known", names(NoticeKind::ALL.iter().map(|m| m.name()))),
        ("webhook_deliveries_state_known", names(DeliveryState::ALL.iter().map(|m| m.name()))),
    ];
    for (constraint, expected) in cases {
        assert_eq!(
            check_names(pool, constraint).await?,
            expected,
            "{constraint} must list exactly its closed set's names: add a migration that drops the CHECK and adds it with the set's names"
        );
    }
    // The codes: every status and initiator the contract has is accepted, the next one refused.
    for status in PactStatus::ALL {
        assert_inserts(pool, 0, i16::from(status.code()), true).await?;
    }
    let last = PactStatus::ALL[PactStatus::ALL.len() - 1];
    assert_inserts(pool, 0, i16::from(last.code()) + 1, false).await?;
    assert_inserts(pool, 0, -1, false).await?;
    for initiator in [Initiator::Buyer, Initiator::Seller] {
        assert_inserts(pool, i16::from(initiator.code()), 0, true).await?;
    }
    assert_inserts(pool, 2, 0, false).await?;
    Ok(())
}

/// Whether a pact row with `initiator` and `status` passes the table's constraints (rolled back
/// either way).
async fn assert_inserts(pool: &PgPool, initiator: i16, status: i16, accepted: bool) -> Result {
    let mut tx = pool.begin().await?;
    let result = sqlx::query(
        "INSERT INTO pacts (chain_id, pact_id, initiator, status, creator, arbitrator, spec_hash, spec_uri, deadline,
                            review_period, threshold, payment, buyer_stake, seller_stake, created_at, created_block,
                            updated_block, accept_by, currency)
         VALUES (1, 1, $1, $2, '\\x00', '\\x00', '\\x00', '', now(), 0, 1, 1, 0, 0, now(), 0, 0, now(), '\\x00')",
    )
    .bind(initiator)
    .bind(status)
    .execute(&mut *tx)
    .await;
    assert_eq!(result.is_ok(), accepted, "initiator {initiator}, status {status}: {result:?}");
    Ok(())
}

/// What the indexer says when it meets `damage`, done to an index of `m` after it caught up.
async fn indexer_meets(m: &Market, db: &TestDatabase, damage: &str) -> Result<IndexError> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(damage.to_owned())).execute(db.pool()).await?;
    match index::indexer(&m.chain, db.pool(), small_ranges()).catch_up().await {
        Ok(pass) => Err(HarnessError::Process(format!("the indexer carried on past {damage:?}: {pass:?}"))),
        Err(e) => Ok(e),
    }
}

#[tokio::test]
async fn a_corrupt_value_in_the_indexers_bookkeeping_stops_it_naming_table_key_and_column() -> Result {
    let m = Market::open().await?;
    m.funded(Initiator::Buyer, ether(1)).await?;
    let chain = m.chain.anvil.chain_id();
    let cases = [
        (
            "UPDATE checkpoints SET block_hash = '\\x0102'",
            "checkpoints",
            format!("chain {chain}"),
            "block_hash",
            "0x0102",
        ),
        (
            "UPDATE checkpoints SET block_number = -5",
            "checkpoints",
            format!("chain {chain}"),
            "block_number",
            "-5",
        ),
        ("UPDATE chains SET agent_pact = '\\x01'", "chains", format!("chain {chain}"), "agent_pact", "0x01"),
        ("UPDATE chains SET genesis_hash = '\\x'", "chains", format!("chain {chain}"), "genesis_hash", "0x"),
        // A checkpoint the chain does not have sends the indexer to its remembered blocks, the
        // newest of which holds three bytes.
        (
            "UPDATE checkpoints SET block_hash = decode(repeat('ab', 32), 'hex');
             UPDATE blocks SET hash = '\\x030303' WHERE number = (SELECT max(number) FROM blocks)",
            "blocks",
            format!("chain {chain} block"),
            "hash",
            "0x030303",
        ),
    ];
    for (damage, table, key, column, value) in cases {
        let db = TestDatabase::create().await?;
        index::indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
        let before = index::dump(db.pool()).await?;
        let error = indexer_meets(&m, &db, damage).await?;
        assert!(error.is_fatal(), "{damage}: {error}");
        let IndexError::Corrupt(corrupt) = &error else {
            return Err(HarnessError::Process(format!("{damage}: not a corrupt value: {error}")));
        };
        assert_eq!(
            (corrupt.table, corrupt.column, corrupt.value.as_str()),
            (table, column, value),
            "{damage}"
        );
        assert!(corrupt.key.starts_with(&key), "{damage}: key {}", corrupt.key);
        assert!(error.to_string().contains("re-index"), "says what to do: {error}");
        // It stopped before writing anything: the projections are as they were.
        let after = index::dump(db.pool()).await?;
        let projections = |d: &str| {
            d.split("== ")
                .filter(|t| !t.starts_with("checkpoints") && !t.starts_with("chains"))
                .collect::<Vec<_>>()
                .join("")
        };
        assert_eq!(projections(&after), projections(&before), "{damage}: the indexer wrote past the damage");
    }
    Ok(())
}

#[tokio::test]
async fn the_mcp_server_reports_a_corrupt_index_row_as_index_corrupt_not_as_the_agents_input() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    let db = TestDatabase::create().await?;
    index::indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, test_limits()).await?;
    sqlx::query("UPDATE pacts SET arbitrator = '\\x01' WHERE pact_id = $1::text::numeric")
        .bind(id.to_string())
        .execute(db.pool())
        .await?;
    let reply = agent.call("list-pacts", json!({})).await?;
    assert!(reply.is_error, "{}", reply.text);
    let error = &reply.data["error"];
    assert_eq!(error["code"], "INDEX_CORRUPT", "{}", reply.text);
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("pacts")
            && message.contains(&format!("pact {id}"))
            && message.contains("arbitrator"),
        "names table, key and column: {message}"
    );
    assert!(!message.contains("Invalid input"), "{message}");
    Ok(())
}
