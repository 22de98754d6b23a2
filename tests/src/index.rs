//! Helpers for indexer tests: an indexer for a [`TestChain`], and a dump of every index table to
//! compare two databases.

use agentpact_contracts::{EventKind, PactStatus};
use agentpact_indexer::{Config, Contracts, Indexer, Target};
use alloy::{
    primitives::{Address, U256},
    providers::DynProvider,
};
use sqlx::{PgPool, Row};

use crate::{HarnessError, chain::TestChain};

/// What an indexer of `chain` follows.
pub fn target(chain: &TestChain) -> Target {
    Target {
        chain_id: chain.anvil.chain_id(),
        contracts: Contracts::from(&chain.deployment),
        deployment_block: chain.deployment.block,
    }
}

/// An indexer of `chain` writing to `pool`.
pub fn indexer(chain: &TestChain, pool: &PgPool, config: Config) -> Indexer<DynProvider> {
    Indexer::new(pool.clone(), chain.provider.clone(), target(chain), config)
}

/// An indexer of `chain` writing to `pool` that ranks reputation from `seeds` (the trust anchors)
/// at the end of every pass that changed it: each [`Indexer::catch_up`] leaves a generation of
/// trusted scores for what it indexed.
pub fn ranking(chain: &TestChain, pool: &PgPool, seeds: Vec<Address>) -> Indexer<DynProvider> {
    let every = std::time::Duration::ZERO;
    indexer(chain, pool, Config::default()).with_ranking(agentpact_indexer::Ranking { seeds, every })
}

/// An indexer of `chain` into `pool` reading through the RPC at `url` (a proxy) with the production
/// transport within `limits` (its retries counted in the indexer's metrics).
pub async fn through(
    url: &str,
    chain: &TestChain,
    pool: &PgPool,
    config: Config,
    limits: &agentpact_contracts::rpc::RpcLimits,
) -> Result<Indexer<DynProvider>, HarnessError> {
    through_to(url, target(chain), pool, config, limits).await
}

/// An indexer of `target` into `pool` reading the node at `url` (a proxy, a replay) with the
/// production transport within `limits`, as `agentpact index` connects.
pub async fn through_to(
    url: &str,
    target: Target,
    pool: &PgPool,
    config: Config,
    limits: &agentpact_contracts::rpc::RpcLimits,
) -> Result<Indexer<DynProvider>, HarnessError> {
    let failed = |e: agentpact_contracts::rpc::ConnectError| HarnessError::Process(e.to_string());
    let url: alloy::transports::http::reqwest::Url =
        url.parse().map_err(|e| HarnessError::Process(format!("node url {url}: {e}")))?;
    let metrics = agentpact_indexer::Metrics::for_chain(target.chain_id);
    let provider =
        agentpact_indexer::transport::connect(url.clone(), limits, &metrics).await.map_err(failed)?;
    let heads = agentpact_indexer::transport::head_source(&url, limits).await.map_err(failed)?;
    Ok(Indexer::new(pool.clone(), provider, target, config).with_metrics(metrics).with_heads(heads))
}

/// An indexer of `chain` following it into `pool` in the background (polling every 25 ms) until
/// the handle is dropped or aborted: the index the MCP servers of a test read. It ranks
/// reputation without seeds: every global score is 3.00 ([`follow_ranking`] names seeds).
pub fn follow(chain: &TestChain, pool: &PgPool) -> tokio::task::JoinHandle<()> {
    follow_ranking(chain, pool, Vec::new())
}

/// [`follow`], ranking reputation from `seeds` after every pass that changed it
/// ([`ranked_up`] waits for that ranking).
pub fn follow_ranking(chain: &TestChain, pool: &PgPool, seeds: Vec<Address>) -> tokio::task::JoinHandle<()> {
    let config = Config { poll_interval: std::time::Duration::from_millis(25), ..Config::default() };
    let ranking = agentpact_indexer::Ranking { seeds, every: std::time::Duration::ZERO };
    let indexer = indexer(chain, pool, config).with_ranking(ranking);
    tokio::spawn(async move {
        let _ = agentpact_indexer::run(indexer, std::future::pending()).await;
    })
}

/// A fresh database that an indexer follows `chain` into in the background (see [`follow`]),
/// returned once it has caught up with the chain's head (the MCP tools learn the allowed
/// currencies from the index). The indexer stops when the handle is dropped or aborted.
pub async fn followed(
    chain: &TestChain,
) -> Result<(crate::postgres::TestDatabase, tokio::task::JoinHandle<()>), HarnessError> {
    followed_ranking(chain, Vec::new()).await
}

/// [`followed`], the indexer ranking reputation from `seeds` ([`follow_ranking`]).
pub async fn followed_ranking(
    chain: &TestChain,
    seeds: Vec<Address>,
) -> Result<(crate::postgres::TestDatabase, tokio::task::JoinHandle<()>), HarnessError> {
    let db = crate::postgres::TestDatabase::create().await?;
    let indexer = follow_ranking(chain, db.pool(), seeds);
    caught_up(chain, db.pool()).await?;
    Ok((db, indexer))
}

/// Waits (up to 60 s) until an indexer following `chain` into `pool` has committed the chain's
/// latest block and ranked what it indexed: a generation of scores stands and no pair changed
/// since it was computed (`reputation_runs`, migrations/0022). Both are read in one statement, one
/// snapshot: read apart, a pass committing between them (the head's pairs, the run marked dirty)
/// let a stale ranking pass for the head's.
pub async fn ranked_up(chain: &TestChain, pool: &PgPool) -> Result<(), HarnessError> {
    let head = alloy::providers::Provider::get_block_number(&chain.provider).await?;
    let chain_id = chain.anvil.chain_id() as i64;
    crate::until(std::time::Duration::from_secs(60), "the ranking of the chain's head", || async move {
        let ranked: bool = sqlx::query_scalar(
            "SELECT coalesce((SELECT NOT dirty AND computed_at IS NOT NULL FROM reputation_runs WHERE chain_id = $1), false)
                AND (SELECT coalesce(max(block_number), -1) FROM checkpoints) >= $2",
        )
        .bind(chain_id)
        .bind(head as i64)
        .fetch_one(pool)
        .await?;
        Ok(ranked)
    })
    .await
}

/// Small ranges and a short finality depth: many batches, and reorgs within reach; upkeep
/// deferred whenever more blocks are left than indexed (the default: every first backfill).
pub fn small_ranges() -> Config {
    Config { initial_range: 2, max_range: 4, finality_depth: 12, ..Config::default() }
}

/// Tables of the schema left out of [`dump`], and why: none of them is content the chain decides.
pub const NOT_DUMPED: [(&str, &str); 2] = [
    ("_sqlx_migrations", "when each migration ran"),
    ("blocks", "which recent hashes are kept depends on the head at the time of each batch"),
];

/// How some tables are compared (columns, rows kept); every other table of the catalog is
/// compared whole. `pact_counts` only by its rows that count something: a reorg may leave a row at
/// zero where a fresh index never made one. `checkpoints` without its clocks. `reputation_runs`
/// (the generation [`dump`] writes) without when it ran and how long it took, nor the block it
/// was read at: the checkpoint's, compared in `checkpoints`.
const DUMPED_AS: [(&str, &str, &str); 3] = [
    ("pact_counts", "*", "pacts <> 0 OR payment <> 0"),
    ("checkpoints", "chain_id, block_number, block_hash", "true"),
    ("reputation_runs", "chain_id, dirty, seeds, alpha, tau, nodes, edges", "true"),
];

/// How many times [`dump`] starts over when its generation met an indexer's committing under it.
const DUMP_ATTEMPTS: usize = 5;

/// The dump of a fresh, uninterrupted index of `chain`: what any other way of building the index
/// must equal.
pub async fn fresh_dump(chain: &TestChain) -> Result<String, HarnessError> {
    let fresh = crate::postgres::TestDatabase::create().await?;
    indexer(chain, fresh.pool(), small_ranges()).catch_up().await?;
    dump(fresh.pool()).await
}

/// The block of the checkpoint in `pool` (-1 before the first batch).
pub async fn checkpoint_block(pool: &PgPool) -> Result<i64, HarnessError> {
    Ok(sqlx::query_scalar("SELECT coalesce(max(block_number), -1) FROM checkpoints").fetch_one(pool).await?)
}

/// Starts an indexer (made by `start` on a pool of its own) against `db` `attempts` times and
/// kills each run a few milliseconds after its first commit — in or between its next transactions
/// whatever the machine's speed (a fixed delay landed before the first commit or after the last one
/// on a slow or a fast machine) — closing its pool, so its connections and any open transaction die
/// with it. Returns how many kills left the checkpoint short of `head`.
pub async fn kill_during_backfill<F, Fut>(
    db: &crate::postgres::TestDatabase,
    head: u64,
    attempts: u64,
    start: F,
) -> Result<u64, HarnessError>
where
    F: Fn(PgPool) -> Fut,
    Fut: std::future::Future<Output = Result<Indexer<DynProvider>, HarnessError>>,
{
    let mut stopped_partway = 0;
    for attempt in 0..attempts {
        let pool = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(db.url()).await?;
        let before = checkpoint_block(db.pool()).await?;
        let mut ix = start(pool.clone()).await?;
        let run = tokio::spawn(async move { ix.catch_up().await });
        wait_for_progress(db.pool(), before, &run).await?;
        tokio::time::sleep(std::time::Duration::from_millis(attempt % 5)).await;
        run.abort();
        let _ = run.await;
        pool.close().await;
        let at = checkpoint_block(db.pool()).await?;
        if at >= 0 && (at as u64) < head {
            stopped_partway += 1;
        }
    }
    Ok(stopped_partway)
}

/// Waits until the checkpoint has moved past `before` or `run` has ended (up to 15 s): where a
/// kill test aborts a run, so the kill lands after a commit whatever the machine's speed.
async fn wait_for_progress<T>(
    pool: &PgPool,
    before: i64,
    run: &tokio::task::JoinHandle<T>,
) -> std::result::Result<(), HarnessError> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    while checkpoint_block(pool).await? == before && !run.is_finished() {
        if tokio::time::Instant::now() > deadline {
            return Err(HarnessError::Process(format!(
                "the indexer committed nothing past block {before} in 15 s"
            )));
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    Ok(())
}

/// Waits (up to 60 s: a bound for a stuck indexer, not a speed) until an indexer running elsewhere
/// has committed `chain`'s latest block (and, with it, the reputation of everything below).
pub async fn caught_up(chain: &TestChain, pool: &PgPool) -> Result<(), HarnessError> {
    let head = alloy::providers::Provider::get_block_number(&chain.provider).await?;
    wait_for_checkpoint(pool, head).await
}

/// Waits (up to 60 s) until an indexer running elsewhere has committed block `block`.
pub async fn wait_for_checkpoint(pool: &PgPool, block: u64) -> Result<(), HarnessError> {
    wait_for_checkpoint_within(pool, block, std::time::Duration::from_secs(60)).await
}

/// Waits (up to `limit`) until an indexer running elsewhere has committed block `block`.
pub async fn wait_for_checkpoint_within(
    pool: &PgPool,
    block: u64,
    limit: std::time::Duration,
) -> Result<(), HarnessError> {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if checkpoint_block(pool).await? >= block as i64 {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Err(HarnessError::Process(format!("the indexer did not reach block {block} in {limit:?}")))
}

/// The event kinds of the contracts that the index at `pool` never journaled: a scenario meant to
/// exercise every event (`Market::every_status`) leaves this empty.
pub async fn kinds_never_journaled(pool: &PgPool) -> Result<Vec<&'static str>, HarnessError> {
    let journaled: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT kind FROM events").fetch_all(pool).await?;
    Ok(EventKind::ALL.iter().map(|k| k.name()).filter(|name| !journaled.iter().any(|j| j == name)).collect())
}

/// Every row of every table the migrations create (read from the catalog, so a new table is
/// compared without anyone listing it), as sorted text, table by table; [`NOT_DUMPED`] and
/// [`DUMPED_AS`] say what is left out. The ranking's generation is compared too, written first by
/// the dump itself from the same seeds for any index (every address of each chain's pairs): an
/// indexer ranks when due, with its own seeds, so which generation an index holds is timing, while
/// a generation of given pairs and seeds must be the same to the last bit. The dump runs in one
/// transaction that it rolls back: it changes nothing.
pub async fn dump(pool: &PgPool) -> Result<String, HarnessError> {
    for attempt in 1..=DUMP_ATTEMPTS {
        match dump_once(pool).await {
            // An indexer committed its own generation under the dump's: start over.
            Err(HarnessError::Index(e)) if conflicted(&e) && attempt < DUMP_ATTEMPTS => continue,
            done => return done,
        }
    }
    Err(HarnessError::Process(format!("the dump met a concurrent generation {DUMP_ATTEMPTS} times")))
}

/// One attempt of [`dump`].
async fn dump_once(pool: &PgPool) -> Result<String, HarnessError> {
    let mut tx = pool.begin().await?;
    // One snapshot for the generation and every table read (run_generation's own level).
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").execute(&mut *tx).await?;
    let chains: Vec<i64> =
        sqlx::query_scalar("SELECT chain_id FROM chains ORDER BY 1").fetch_all(&mut *tx).await?;
    for chain in chains {
        let seeds: Vec<Vec<u8>> = sqlx::query_scalar(
            "SELECT ratee FROM reputation_pairs WHERE chain_id = $1
             UNION SELECT rater FROM reputation_pairs WHERE chain_id = $1 ORDER BY 1",
        )
        .bind(chain)
        .fetch_all(&mut *tx)
        .await?;
        let seeds: Vec<Address> = seeds.iter().filter_map(|s| Address::try_from(s.as_slice()).ok()).collect();
        agentpact_indexer::reputation::run_generation(&mut tx, chain as u64, &seeds).await?;
    }
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut out = String::new();
    for table in tables.iter().filter(|t| !NOT_DUMPED.iter().any(|(n, _)| n == t)) {
        let (columns, kept) =
            DUMPED_AS.iter().find(|(n, ..)| n == table).map_or(("*", "true"), |&(_, c, k)| (c, k));
        let sql = format!(
            "SELECT coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '') FROM (SELECT {columns} FROM {table} WHERE {kept}) r"
        );
        let rows: String = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(&mut *tx).await?;
        out.push_str(&format!("== {table}\n{rows}\n"));
    }
    tx.rollback().await?;
    Ok(out)
}

/// Whether a generation failed only for meeting a concurrent transaction (serialization failure,
/// deadlock): worth starting over.
fn conflicted(e: &agentpact_indexer::IndexError) -> bool {
    let agentpact_indexer::IndexError::Db(sqlx::Error::Database(db)) = e else { return false };
    matches!(db.code().as_deref(), Some("40001" | "40P01"))
}

/// Compares the index in `pool` with the contracts on `chain`, field by field: every pact (terms,
/// status, clocks, scores, oracles and weights, each oracle's verification, who rated it), every
/// account's unwithdrawn credit, every oracle and every agent profile. Returns the statuses the pacts are in.
///
/// # Panics
/// On the first difference: that is the test failing.
pub async fn assert_index_matches_chain(
    chain: &TestChain,
    pool: &PgPool,
) -> Result<std::collections::HashSet<PactStatus>, HarnessError> {
    let count = chain.pact.pactCount().call().await?;
    let mut statuses = std::collections::HashSet::new();
    let mut counts = FlatCounts::default();
    for n in 0..count.to::<u64>() {
        let id = U256::from(n);
        let p = chain.pact.getPact(id).call().await?;
        let row = sqlx::query(
            "SELECT status, initiator, buyer, seller, arbitrator, counterparty, spec_hash, spec_uri, spec_uri_bytes,
                    threshold, score_count,
                    final_score, proof_hash, payment::text, buyer_stake::text, seller_stake::text, review_period,
                    extract(epoch FROM deadline)::bigint AS deadline,
                    extract(epoch FROM accept_by)::bigint AS accept_by,
                    coalesce(extract(epoch FROM submitted_at)::bigint, 0) AS submitted_at,
                    coalesce(extract(epoch FROM verified_at)::bigint, 0) AS verified_at,
                    coalesce(extract(epoch FROM disputed_at)::bigint, 0) AS disputed_at,
                    currency, ending
             FROM pacts WHERE pact_id = $1::text::numeric",
        )
        .bind(id.to_string())
        .fetch_one(pool)
        .await?;
        let address = |col: &str| -> Address {
            row.get::<Option<Vec<u8>>, _>(col).map(|b| Address::from_slice(&b)).unwrap_or_default()
        };
        let amount = |col: &str| -> U256 { row.get::<String, _>(col).parse().unwrap_or(U256::MAX) };
        let secs = |col: &str| -> u64 { row.get::<i64, _>(col) as u64 };
        let context = format!("pact {n}");
        assert_eq!(row.get::<i16, _>("status"), i16::from(p.status), "{context} status");
        assert_eq!(row.get::<i16, _>("initiator"), i16::from(p.initiator), "{context}");
        assert_eq!(
            (address("buyer"), address("seller"), address("arbitrator"), address("counterparty")),
            (p.buyer, p.seller, p.arbitrator, p.counterparty),
            "{context}"
        );
        assert_eq!(row.get::<Vec<u8>, _>("spec_hash"), p.specHash.to_vec(), "{context}");
        let spec_uri = row.get::<String, _>("spec_uri");
        assert_text(&spec_uri, row.get("spec_uri_bytes"), &p.specUri, &format!("{context} spec_uri"));
        assert_eq!(row.get::<i16, _>("threshold"), i16::from(p.threshold), "{context}");
        assert_eq!(row.get::<i16, _>("score_count"), i16::from(p.scoreCount), "{context}");
        assert_eq!(
            row.get::<Option<i16>, _>("final_score").unwrap_or(0),
            i16::from(p.finalScore),
            "{context}"
        );
        assert_eq!(
            row.get::<Option<Vec<u8>>, _>("proof_hash").unwrap_or(vec![0; 32]),
            p.proofHash.to_vec(),
            "{context}"
        );
        assert_eq!(
            (amount("payment"), amount("buyer_stake"), amount("seller_stake")),
            (p.payment, p.buyerStake, p.sellerStake),
            "{context}"
        );
        assert_eq!(row.get::<i64, _>("review_period") as u64, p.reviewPeriod, "{context}");
        assert_eq!(secs("deadline"), p.deadline, "{context}");
        assert_eq!(secs("accept_by"), p.acceptBy, "{context}");
        assert_eq!(row.get::<Vec<u8>, _>("currency"), p.currency.to_vec(), "{context} currency");
        assert_eq!(secs("submitted_at"), p.submittedAt, "{context}");
        assert_eq!(secs("verified_at"), p.verifiedAt, "{context}");
        assert_eq!(secs("disputed_at"), p.disputedAt, "{context}");

        let oracles: Vec<(Vec<u8>, i16)> = sqlx::query_as(
            "SELECT oracle, weight FROM pact_oracles WHERE pact_id = $1::text::numeric ORDER BY position",
        )
        .bind(id.to_string())
        .fetch_all(pool)
        .await?;
        let expected: Vec<(Vec<u8>, i16)> =
            p.oracles.iter().zip(&p.weights).map(|(o, w)| (o.to_vec(), i16::from(*w))).collect();
        assert_eq!(oracles, expected, "{context} oracles");
        for oracle in &p.oracles {
            let v = chain.pact.getVerification(id, *oracle).call().await?;
            let score: Option<i16> = sqlx::query_scalar(
                "SELECT score FROM verifications WHERE pact_id = $1::text::numeric AND stage = 0 AND oracle = $2",
            )
            .bind(id.to_string())
            .bind(oracle.to_vec())
            .fetch_optional(pool)
            .await?;
            assert_eq!(score, v.submitted.then_some(i16::from(v.score)), "{context} score of {oracle}");
        }
        assert_stages_match(chain, pool, id, &p.oracles).await?;
        // The last offer to settle: its round, maker, share and expiry; standing on chain (made,
        // not taken back or accepted, no verdict since) exactly when the index has it neither
        // withdrawn, accepted nor voided.
        let offer = chain.pact.getSettlement(id).call().await?;
        let ledger = chain.pact.getLedger(id).call().await?;
        assert_eq!(row.get::<i16, _>("ending"), i16::from(ledger.ending), "{context} ending");
        let last: Option<(i64, Vec<u8>, i32, i64, bool)> = sqlx::query_as(
            "SELECT round, proposed_by, seller_share, extract(epoch FROM expires_at)::bigint,
                    withdrawn_at IS NULL AND accepted_at IS NULL AND voided_at IS NULL
             FROM settlements WHERE pact_id = $1::text::numeric ORDER BY round DESC LIMIT 1",
        )
        .bind(id.to_string())
        .fetch_optional(pool)
        .await?;
        let (round, by, share, expires, standing) = last.unwrap_or((0, Vec::new(), 0, 0, false));
        assert_eq!(round, i64::from(offer.round), "{context} settlement round");
        if offer.round > 0 {
            assert_eq!(
                (share, expires as u64),
                (i32::from(offer.sellerShare), offer.expiresAt),
                "{context} settlement"
            );
            let on_chain = !offer.by.is_zero() && ledger.offerEpoch == ledger.epoch;
            assert_eq!(standing, on_chain, "{context} settlement standing");
            if standing {
                assert_eq!(by, offer.by.to_vec(), "{context} settlement maker");
            }
        }
        for party in [p.buyer, p.seller] {
            let rated: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM feedback WHERE pact_id = $1::text::numeric AND rater = $2)",
            )
            .bind(id.to_string())
            .bind(party.to_vec())
            .fetch_one(pool)
            .await?;
            assert_eq!(
                rated,
                chain.agents.hasRated(id, party).call().await?,
                "{context} feedback by {party}"
            );
        }
        statuses.insert(PactStatus::try_from(p.status).map_err(|e| HarnessError::Process(e.to_string()))?);
        counts.add(&p);
    }
    counts.assert_kept(pool).await?;

    for who in &chain.accounts {
        for currency in chain.currencies() {
            let owed: String = sqlx::query_scalar(
                "SELECT ((SELECT coalesce(sum(amount), 0) FROM payouts WHERE account = $1 AND currency = $2)
                       - (SELECT coalesce(sum(amount), 0) FROM withdrawals WHERE account = $1 AND currency = $2))::text",
            )
            .bind(who.to_vec())
            .bind(currency.to_vec())
            .fetch_one(pool)
            .await?;
            assert_eq!(
                owed.parse::<U256>().ok(),
                Some(chain.pact.balances(currency, *who).call().await?),
                "credit of {who} in {currency}"
            );
        }

        let o = chain.registry.getOracle(*who).call().await?;
        let row: Option<OracleRow> = sqlx::query_as(
            "SELECT stake::text, capabilities, capabilities_bytes, status FROM oracles WHERE address = $1",
        )
        .bind(who.to_vec())
        .fetch_optional(pool)
        .await?;
        let expected = o.registered.then(|| {
            let status = if o.active { "active" } else { "deregistered" };
            (o.stake.to_string(), status.to_owned())
        });
        assert_eq!(row.as_ref().map(|r| (r.0.clone(), r.3.clone())), expected, "oracle {who}");
        if let Some((_, shown, exact, _)) = &row {
            assert_texts(shown, exact.as_deref(), &o.capabilities, &format!("oracle {who} capabilities"));
        }

        let a = chain.agents.getAgent(*who).call().await?;
        let row = sqlx::query(
            "SELECT name, name_bytes, description, description_bytes, endpoint, endpoint_bytes, metadata_uri,
                    metadata_uri_bytes, active FROM agents WHERE address = $1",
        )
        .bind(who.to_vec())
        .fetch_optional(pool)
        .await?;
        let p = &a.profile;
        assert_eq!(row.is_some(), a.registeredAt != 0, "agent {who} registered");
        if let Some(row) = row {
            for (column, chain) in [
                ("name", &p.name),
                ("description", &p.description),
                ("endpoint", &p.endpoint),
                ("metadata_uri", &p.metadataUri),
            ] {
                let shown: String = row.get(column);
                assert_text(
                    &shown,
                    row.get(format!("{column}_bytes").as_str()),
                    chain,
                    &format!("agent {who} {column}"),
                );
            }
            assert_eq!(row.get::<bool, _>("active"), a.active, "agent {who} active");
        }
        let caps = sqlx::query(
            "SELECT name, name_bytes, description, description_bytes, price::text AS price, currency
             FROM agent_capabilities WHERE address = $1 ORDER BY position",
        )
        .bind(who.to_vec())
        .fetch_all(pool)
        .await?;
        assert_eq!(caps.len(), p.capabilities.len(), "capabilities of agent {who}");
        for (row, c) in caps.iter().zip(&p.capabilities) {
            let context = format!("capability of agent {who}");
            assert_text(&row.get::<String, _>("name"), row.get("name_bytes"), &c.name, &context);
            assert_text(
                &row.get::<String, _>("description"),
                row.get("description_bytes"),
                &c.description,
                &context,
            );
            assert_eq!(
                (row.get::<String, _>("price"), row.get::<Vec<u8>, _>("currency")),
                (c.price.to_string(), c.currency.to_vec()),
                "{context}"
            );
        }
    }
    Ok(statuses)
}

/// Compares the stages of pact `id` with `getStages` field by field, and each stage's scores with
/// `getStageVerification`: a pact of several has a `pact_stages` row per stage, a one-stage pact
/// none (its pact row is its stage, compared by the caller).
async fn assert_stages_match(
    chain: &TestChain,
    pool: &PgPool,
    id: U256,
    oracles: &[Address],
) -> Result<(), HarnessError> {
    let on_chain = chain.pact.getStages(id).call().await?;
    let rows = sqlx::query(
        "SELECT stage, amount::text, extract(epoch FROM deadline)::bigint AS deadline, status, ending, score_count,
                coalesce(final_score, 0::smallint) AS final_score, coalesce(proof_hash, '\\x'::bytea) AS proof_hash,
                coalesce(extract(epoch FROM submitted_at)::bigint, 0) AS submitted_at,
                coalesce(extract(epoch FROM verified_at)::bigint, 0) AS verified_at,
                coalesce(extract(epoch FROM disputed_at)::bigint, 0) AS disputed_at
         FROM pact_stages WHERE pact_id = $1::text::numeric ORDER BY stage",
    )
    .bind(id.to_string())
    .fetch_all(pool)
    .await?;
    if on_chain.len() == 1 {
        assert!(rows.is_empty(), "pact {id} has one stage: no pact_stages rows");
        return Ok(());
    }
    assert_eq!(rows.len(), on_chain.len(), "pact {id}: a row per stage");
    for (k, (row, s)) in rows.iter().zip(&on_chain).enumerate() {
        let context = format!("pact {id} stage {k}");
        let secs = |col: &str| row.get::<i64, _>(col) as u64;
        assert_eq!(row.get::<i16, _>("stage") as usize, k, "{context}");
        assert_eq!(row.get::<String, _>("amount"), s.amount.to_string(), "{context} amount");
        assert_eq!(
            (secs("deadline"), secs("submitted_at"), secs("verified_at"), secs("disputed_at")),
            (s.deadline, s.submittedAt, s.verifiedAt, s.disputedAt),
            "{context} deadline and clocks"
        );
        assert_eq!(
            (row.get::<i16, _>("status"), row.get::<i16, _>("ending")),
            (i16::from(s.status), i16::from(s.ending)),
            "{context} status and ending"
        );
        assert_eq!(
            (row.get::<i16, _>("score_count"), row.get::<i16, _>("final_score")),
            (i16::from(s.scoreCount), i16::from(s.finalScore)),
            "{context} scores"
        );
        let proof = row.get::<Vec<u8>, _>("proof_hash");
        let expected = if s.proofHash.is_zero() { Vec::new() } else { s.proofHash.to_vec() };
        assert_eq!(proof, expected, "{context} proof");
        for oracle in oracles {
            let v = chain.pact.getStageVerification(id, k as u8, *oracle).call().await?;
            let score: Option<i16> = sqlx::query_scalar(
                "SELECT score FROM verifications WHERE pact_id = $1::text::numeric AND stage = $2 AND oracle = $3",
            )
            .bind(id.to_string())
            .bind(k as i16)
            .bind(oracle.to_vec())
            .fetch_optional(pool)
            .await?;
            assert_eq!(score, v.submitted.then_some(i16::from(v.score)), "{context} score of {oracle}");
        }
    }
    Ok(())
}

/// An `oracles` row as the comparison reads it: stake, capabilities (display forms and exact
/// bytes), status.
type OracleRow = (String, Vec<String>, Option<Vec<Vec<u8>>>, String);

/// Checks one text column of a projection against the chain: `shown` must be the display form of
/// the exact text (`exact` when the projection keeps the bytes, else `shown` itself), and the exact
/// text must read as `chain`, the getter's (lossy, as the bindings decode a `string`) reading.
///
/// # Panics
/// On a difference: that is the test failing.
fn assert_text(shown: &str, exact: Option<Vec<u8>>, chain: &str, context: &str) {
    let text = agentpact_schema::ChainText::stored(shown.to_owned(), exact);
    assert_eq!(
        text.display(),
        shown,
        "{context}: the text column is not the display form of the exact bytes"
    );
    assert_eq!(
        String::from_utf8_lossy(text.as_bytes()),
        chain,
        "{context}: the exact bytes are not the chain's"
    );
}

/// [`assert_text`] for a `text[]` column and the `bytea[]` beside it.
fn assert_texts(shown: &[String], exact: Option<&[Vec<u8>]>, chain: &[String], context: &str) {
    assert_eq!(shown.len(), chain.len(), "{context}: how many");
    if let Some(exact) = exact {
        assert_eq!(exact.len(), shown.len(), "{context}: bytes beside every text");
    }
    for (i, (s, c)) in shown.iter().zip(chain).enumerate() {
        assert_text(s, exact.map(|e| e[i].clone()), c, &format!("{context}[{i}]"));
    }
}

/// The flat counts (`pact_counts`, migrations/0010) as the chain says they should be: per status,
/// for the chain and per buyer, seller, party, oracle and currency, the pacts and their payment.
#[derive(Default)]
struct FlatCounts(std::collections::BTreeMap<(String, Vec<u8>, i16), (i64, U256)>);

impl FlatCounts {
    fn add(&mut self, p: &agentpact_contracts::AgentPact::Pact) {
        let creator = if p.initiator == 0 { p.buyer } else { p.seller };
        let mut parties = vec![creator, p.buyer, p.seller, p.arbitrator];
        parties.extend(&p.oracles);
        parties.retain(|a| *a != Address::ZERO);
        parties.sort();
        parties.dedup();
        let known = |a: Address| (a != Address::ZERO).then(|| a.to_vec());
        let keys = [
            ("all", Some(Vec::new())),
            ("buyer", known(p.buyer)),
            ("seller", known(p.seller)),
            ("currency", Some(p.currency.to_vec())),
        ]
        .into_iter()
        .filter_map(|(dimension, subject)| subject.map(|s| (dimension, s)))
        .chain(parties.iter().map(|a| ("party", a.to_vec())))
        .chain(p.oracles.iter().map(|o| ("oracle", o.to_vec())));
        for (dimension, subject) in keys {
            let entry = self.0.entry((dimension.to_owned(), subject, i16::from(p.status))).or_default();
            entry.0 += 1;
            entry.1 += p.payment;
        }
    }

    /// Compares with what the indexer kept.
    async fn assert_kept(&self, pool: &PgPool) -> Result<(), HarnessError> {
        let rows: Vec<(String, Vec<u8>, i16, i64, String)> = sqlx::query_as(
            "SELECT dimension, subject, status, pacts, payment::text FROM pact_counts WHERE pacts <> 0 OR payment <> 0",
        )
        .fetch_all(pool)
        .await?;
        let kept: std::collections::BTreeMap<_, _> = rows
            .into_iter()
            .map(|(d, s, status, n, payment)| ((d, s, status), (n, payment.parse().unwrap_or(U256::MAX))))
            .collect();
        assert_eq!(kept, self.0, "pact_counts against the chain's pacts");
        Ok(())
    }
}
