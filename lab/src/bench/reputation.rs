//! `agentpact bench reputation`: the indexer's reputation ranking (issue #53) timed at the sizes
//! of BENCHMARKS.md — one generation run (read the pairs, rank, write the trust, the raters and
//! the scores in one transaction) over a market of 10k, 100k and 1M pacts between a tenth as
//! many agents.
//!
//! The ranking reads nothing but `reputation_pairs` (migrations/0022_trusted_reputation.sql), so
//! the market is written there directly, as the indexer's refresh would leave it: a seeded draw
//! of pacts in Postgres (`generate_series`, `setseed`), each a buyer picked uniformly and a seller
//! picked with a popularity skew (a few sellers do most of the work, as in a real market),
//! summed per (ratee, role, rater) into the pair's counts, evidence and endorsement by the
//! migration's formulas. A chain-made history would take hours at a million pacts here and give
//! 212 agents per copy (BENCHMARKS.md §The history); what the run costs depends only on the
//! graph's nodes and edges. The seeds are the busiest sellers, one per hundred agents (at least
//! three), as docs/proposals/53-reputation.md §7 recommends.

use std::time::{Duration, Instant};

use agentpact_indexer::reputation::run_generation;
use agentpact_schema::MIGRATOR;
use alloy::primitives::Address;
use anyhow::{Context, bail};
use sqlx::PgPool;

use super::{ms, peak_rss_mib};

/// The chain id the synthetic market is written under.
const CHAIN_ID: u64 = 53;

/// Flags of `agentpact bench reputation`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReputationArgs {
    /// Sizes of the market in pacts, comma-separated, each measured on a database of its own.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000,1000000")]
    pacts: Vec<u64>,
    /// Pacts per agent: a market of N pacts has N / this agents.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pacts_per_agent: u64,
    /// Ranking runs timed per size, one after another over the same pairs.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Seed of the draw: the same seed gives the same market.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A Postgres server to create the benchmark's database on (it is dropped and re-created);
    /// without it, a private cluster.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
}

/// Runs the benchmark and prints a table.
pub async fn run(args: ReputationArgs) -> anyhow::Result<()> {
    println!(
        "| pacts | agents | seeds | pairs written | nodes | edges | market written in | run p50 / max | of which ranking | peak RSS (before) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &pacts in &args.pacts {
        let agents = (pacts / args.pacts_per_agent).max(2);
        let (database_url, _cluster) =
            crate::local::fresh_database(args.database_url.as_deref(), "agentpact_bench_reputation").await?;
        let pool = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(&database_url).await?;
        MIGRATOR.run(&pool).await?;
        let started = Instant::now();
        let pairs = market(&pool, pacts, agents, args.seed).await?;
        let written = started.elapsed();
        let seeds: Vec<Address> = (0..(agents / 100).max(3)).map(address).collect();
        let before = peak_rss_mib(std::process::id()).unwrap_or(f64::NAN);
        let mut conn = pool.acquire().await?;
        let (mut walls, mut ranking) = (Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..args.runs {
            let started = Instant::now();
            let run = run_generation(&mut conn, CHAIN_ID, &seeds).await?;
            walls.push(started.elapsed());
            ranking.push(Duration::from_millis(run.rank_ms));
            last = Some(run);
        }
        drop(conn);
        let run = last.context("no run")?;
        let peak = peak_rss_mib(std::process::id()).unwrap_or(f64::NAN);
        let wall = super::Percentiles::of(&mut walls).context("no run timed")?;
        let ranked = super::Percentiles::of(&mut ranking).context("no run timed")?;
        println!(
            "| {pacts} | {agents} | {} | {pairs} | {} | {} | {:.1} s | {} / {} | {} | {peak:.0} MiB ({before:.0}) |",
            run.seeds,
            run.nodes,
            run.edges,
            written.as_secs_f64(),
            ms(wall.p50),
            ms(wall.max),
            ms(ranked.p50),
        );
        pool.close().await;
    }
    Ok(())
}

/// Agent `n`'s address: `n + 1` as a 20-byte big-endian number (never the zero address).
fn address(n: u64) -> Address {
    let mut bytes = [0u8; 20];
    bytes[12..].copy_from_slice(&(n + 1).to_be_bytes());
    Address::from(bytes)
}

/// Writes the pairs of a market of `pacts` pacts between `agents` agents drawn with `seed`, plus
/// the chain and checkpoint rows a run reads its block from; returns the pairs written.
///
/// Each pact: buyer uniform, seller `floor(agents · u²)` (skewed to the low ids), never the same
/// agent; 85 % approved with an oracle score of 60-100 (seller credit 0.6-1, buyer credit 1),
/// 5 % won by the seller (credit 1 / 0), 10 % refunded (0 / 1, unpaid); the buyer rates 70 % of
/// paid pacts 4-5★ (1★ of unpaid ones: shown, never weighed), the seller rates 40 % of them 5★. Every pact is above
/// the value floor (q = 1) and none is a settlement (m = 1), so n = pacts of the pair.
async fn market(pool: &PgPool, pacts: u64, agents: u64, seed: u64) -> anyhow::Result<u64> {
    let mut tx = pool.begin().await?;
    // setseed takes -1..1.
    let draw = ((seed % 2_000) as f64 / 1_000.0) - 1.0;
    sqlx::query("SELECT setseed($1)").bind(draw).execute(&mut *tx).await?;
    sqlx::query(
        "INSERT INTO chains (chain_id, genesis_hash, agent_pact, oracle_registry, deployment_block,
                             erc8004_start_block)
         VALUES ($1, '\\x00', '\\x00', '\\x00', 0, 0)",
    )
    .bind(CHAIN_ID as i64)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO checkpoints (chain_id, block_number, block_hash, block_time) VALUES ($1, $2, '\\x00', now())",
    )
        .bind(CHAIN_ID as i64)
        .bind(pacts as i64)
        .execute(&mut *tx)
        .await?;
    let written = sqlx::query(
        r#"WITH pact AS (
               SELECT floor(random() * $2)::bigint AS buyer,
                      floor($2 * power(random(), 2))::bigint AS seller,
                      random() AS fate, random() AS oracle, random() AS by_buyer, random() AS by_seller
               FROM generate_series(1, $3::bigint)
           ),
           side AS (
               SELECT seller AS ratee, 'seller' AS role, buyer AS rater, fate < 0.9 AS paid,
                      CASE WHEN fate < 0.85 THEN 0.6 + 0.4 * oracle WHEN fate < 0.9 THEN 1 ELSE 0 END AS credit,
                      CASE WHEN by_buyer >= 0.7 THEN NULL WHEN fate >= 0.9 THEN 1
                           ELSE 4 + (by_buyer < 0.35)::int END AS rating
               FROM pact WHERE buyer <> seller
               UNION ALL
               SELECT buyer, 'buyer', seller, fate < 0.9,
                      CASE WHEN fate < 0.85 OR fate >= 0.9 THEN 1 ELSE 0 END,
                      CASE WHEN by_seller < 0.4 AND fate < 0.9 THEN 5 END
               FROM pact WHERE buyer <> seller
           ),
           pair AS (
               SELECT ratee, role, rater, count(*) AS pacts, count(*) FILTER (WHERE paid) AS paid_pacts,
                      count(*)::numeric AS jobs, sum(credit)::numeric AS credit_sum,
                      count(*) FILTER (WHERE paid AND rating IS NOT NULL)::numeric AS rated_jobs,
                      count(rating) AS ratings, avg(rating)::numeric(8, 4) AS rating_mean,
                      -- The vote: only the ratings of paid pacts weigh, as in the indexer's pairs.
                      avg(rating) FILTER (WHERE paid)::numeric AS vote
               FROM side GROUP BY ratee, role, rater
           )
           INSERT INTO reputation_pairs (chain_id, ratee, role, rater, pacts, paid_pacts, jobs, credit_sum,
                                         rated_jobs, ratings, rating_mean, evidence, endorsement)
           SELECT $1, decode(lpad(to_hex(ratee + 1), 40, '0'), 'hex'), role,
                  decode(lpad(to_hex(rater + 1), 40, '0'), 'hex'), pacts, paid_pacts, jobs, credit_sum,
                  rated_jobs, ratings, rating_mean, reputation_evidence(jobs, rated_jobs),
                  reputation_endorsement(jobs, credit_sum, rated_jobs, vote)
           FROM pair"#,
    )
    .bind(CHAIN_ID as i64)
    .bind(agents as i64)
    .bind(pacts as i64)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    if written == 0 {
        bail!("the market of {pacts} pacts wrote no pairs");
    }
    sqlx::query("ANALYZE reputation_pairs").execute(pool).await?;
    Ok(written)
}
