//! A ranking run: one generation of trusted scores, written in one transaction
//! (migrations/0022_trusted_reputation.sql). It reads one snapshot (REPEATABLE READ) of the chain's
//! pairs and checkpoint, ranks ([`super::rank`]), replaces the chain's rows of `reputation_trust`,
//! `reputation_raters`, `reputation_scores` and `erc8004_trusted`, and records the run in
//! `reputation_runs` (clearing `dirty`). Readers see the previous generation until it commits.

use std::{collections::HashMap, time::Instant};

use agentpact_contracts::ReputationRole;
use agentpact_schema::{Corrupt, i64_of};
use alloy::primitives::Address;
use futures::TryStreamExt;
use sqlx::{Connection, PgConnection};

use super::rank::{self, ALPHA, Pair};
use crate::IndexError;

/// Rows one statement writes: the arrays a statement binds stay bounded at any size of graph.
const WRITE_CHUNK: usize = 50_000;

/// The roles a pair can be in, in the order of their index.
const ROLES: [ReputationRole; 3] = [ReputationRole::Buyer, ReputationRole::Seller, ReputationRole::Oracle];

/// What a generation was computed from and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The checkpoint's block when the pairs were read (`None`: nothing indexed yet).
    pub block_number: Option<i64>,
    /// Addresses of the trust graph.
    pub nodes: usize,
    /// Edges of the trust graph (ordered pairs with a positive endorsement).
    pub edges: usize,
    /// Ordered pairs (rater, ratee), roles pooled.
    pub pairs: usize,
    /// The seeds present in the graph.
    pub seeds: usize,
    /// The mass quantile τ (0 without seeds).
    pub tau: f64,
    /// Milliseconds from the snapshot to the last row written.
    pub took_ms: u64,
    /// Milliseconds of the ranking alone (no database).
    pub rank_ms: u64,
}

/// A ranking that computed a value that is not a number (NaN or infinite) for an address: the
/// chain's `reputation_pairs` hold one (changed by hand, or damaged). Nothing of the generation is
/// written: a numeric NaN sorts above every number, and `reputation_score` would make it 5.00.
#[derive(Debug, thiserror::Error)]
#[error(
    "the reputation ranking of chain {chain_id} computed a {what} of {value} for {address}, which is not a \
     number: no generation was written. Its rows of reputation_pairs hold a non-finite evidence or \
     endorsement: re-index into a fresh database"
)]
pub struct NotFinite {
    /// The chain id.
    pub chain_id: u64,
    /// The address the value is of.
    pub address: Address,
    /// Which value: `pi`, `trust as a rater`, `weight` or `credit`.
    pub what: &'static str,
    /// The value.
    pub value: f64,
}

/// Whether `chain_id` needs a generation for `seeds`: its pairs changed since the last one
/// (`dirty`), none was ever written, or it was computed from other seeds.
pub async fn due(conn: &mut PgConnection, chain_id: u64, seeds: &[Address]) -> Result<bool, sqlx::Error> {
    let run = sqlx::query!(
        "SELECT dirty, computed_at IS NOT NULL AS \"ran!\", seeds FROM reputation_runs WHERE chain_id = $1",
        i64_of(chain_id)
    )
    .fetch_optional(conn)
    .await?;
    Ok(match run {
        None => true,
        Some(run) => run.dirty || !run.ran || run.seeds != seed_list(seeds),
    })
}

/// The seeds as stored: sorted, each once.
fn seed_list(seeds: &[Address]) -> Vec<Vec<u8>> {
    let mut list: Vec<Vec<u8>> = seeds.iter().map(|s| s.to_vec()).collect();
    list.sort_unstable();
    list.dedup();
    list
}

/// One row of `reputation_pairs` as the ranking reads it.
struct RolePair {
    ratee: u32,
    rater: u32,
    role: u8,
    pacts: i32,
    paid_pacts: i32,
    evidence: f64,
    endorsement: f64,
}

/// The chain's pairs with dense node indices.
struct Loaded {
    addresses: Vec<Vec<u8>>,
    pairs: Vec<RolePair>,
}

/// Computes and writes a generation of `chain_id`'s trusted scores from `seeds`, in one transaction.
pub async fn run_generation(
    conn: &mut PgConnection,
    chain_id: u64,
    seeds: &[Address],
) -> Result<Generation, IndexError> {
    let started = Instant::now();
    let chain = i64_of(chain_id);
    let mut tx = conn.begin().await?;
    sqlx::query!("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").execute(&mut *tx).await?;
    let at = sqlx::query!("SELECT block_number, block_time FROM checkpoints WHERE chain_id = $1", chain)
        .fetch_optional(&mut *tx)
        .await?;
    let loaded = load(&mut tx, chain).await?;
    let ranking = Instant::now();
    let index: HashMap<&[u8], u32> =
        loaded.addresses.iter().enumerate().map(|(i, a)| (a.as_slice(), i as u32)).collect();
    let seed_nodes: Vec<u32> =
        seed_list(seeds).iter().filter_map(|s| index.get(s.as_slice()).copied()).collect();
    let pooled = pool(&loaded.pairs);
    let ranked = rank::rank(loaded.addresses.len(), &pooled.pairs, &seed_nodes, ALPHA);
    let scores = scores(&loaded.pairs, &pooled, &ranked.trust);
    let rank_ms = ranking.elapsed().as_millis() as u64;
    let edges = pooled.pairs.iter().filter(|p| p.endorsement > 0.0 && p.rater != p.ratee).count();
    all_finite(chain_id, &loaded.addresses, &pooled, &ranked, &scores)?;

    for table_delete in [
        sqlx::query!("DELETE FROM reputation_trust WHERE chain_id = $1", chain),
        sqlx::query!("DELETE FROM reputation_raters WHERE chain_id = $1", chain),
        sqlx::query!("DELETE FROM reputation_scores WHERE chain_id = $1", chain),
        sqlx::query!("DELETE FROM erc8004_trusted WHERE chain_id = $1", chain),
    ] {
        table_delete.execute(&mut *tx).await?;
    }
    write_trust(&mut tx, chain, &loaded.addresses, &ranked).await?;
    write_raters(&mut tx, chain, &loaded.addresses, &pooled, &ranked.trust).await?;
    write_scores(&mut tx, chain, &loaded.addresses, &scores).await?;
    write_erc8004(&mut tx, chain).await?;

    let generation = Generation {
        block_number: at.as_ref().map(|a| a.block_number),
        nodes: loaded.addresses.len(),
        edges,
        pairs: pooled.pairs.len(),
        seeds: seed_nodes.len(),
        tau: ranked.tau,
        took_ms: started.elapsed().as_millis() as u64,
        rank_ms,
    };
    sqlx::query!(
        "INSERT INTO reputation_runs (chain_id, dirty, block_number, block_time, computed_at, took_ms, seeds, alpha,
                                      tau, nodes, edges)
         VALUES ($1, false, $2, $3, now(), $4, $5, $6, $7, $8, $9)
         ON CONFLICT (chain_id) DO UPDATE SET dirty = false, block_number = $2, block_time = $3, computed_at = now(),
             took_ms = $4, seeds = $5, alpha = $6, tau = $7, nodes = $8, edges = $9",
        chain,
        generation.block_number,
        at.and_then(|a| a.block_time),
        i32::try_from(generation.took_ms).unwrap_or(i32::MAX),
        &seed_list(seeds),
        ALPHA,
        ranked.tau,
        i32::try_from(generation.nodes).unwrap_or(i32::MAX),
        i32::try_from(generation.edges).unwrap_or(i32::MAX),
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(generation)
}

/// Reads every pair of the chain in one query, numbering the addresses as they come.
async fn load(conn: &mut PgConnection, chain: i64) -> Result<Loaded, IndexError> {
    let mut index: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut addresses = Vec::new();
    let mut node = |address: Vec<u8>| {
        *index.entry(address).or_insert_with_key(|a| {
            addresses.push(a.clone());
            (addresses.len() - 1) as u32
        })
    };
    let mut rows = sqlx::query!(
        "SELECT ratee, rater, role, pacts, paid_pacts, evidence, endorsement FROM reputation_pairs WHERE chain_id = $1",
        chain
    )
    .fetch(&mut *conn);
    let mut pairs = Vec::new();
    while let Some(row) = rows.try_next().await? {
        let Some(role) = ROLES.iter().position(|r| r.name() == row.role) else {
            return Err(Corrupt {
                table: "reputation_pairs",
                key: format!("chain {chain} ratee 0x{}", alloy::hex::encode(&row.ratee)),
                column: "role",
                value: row.role,
            }
            .into());
        };
        pairs.push(RolePair {
            ratee: node(row.ratee),
            rater: node(row.rater),
            role: role as u8,
            pacts: row.pacts,
            paid_pacts: row.paid_pacts,
            evidence: row.evidence,
            endorsement: row.endorsement,
        });
    }
    drop(rows);
    Ok(in_address_order(Loaded { addresses, pairs }))
}

/// The same pairs with nodes numbered in address order, so that a generation depends only on the
/// pairs, never on the order Postgres returned them in: two indexes of one chain (one rebuilt
/// through a reorg, one fresh) write the same numbers to the last bit.
fn in_address_order(loaded: Loaded) -> Loaded {
    let Loaded { addresses, mut pairs } = loaded;
    let mut order: Vec<u32> = (0..addresses.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| addresses[a as usize].cmp(&addresses[b as usize]));
    let mut renumbered = vec![0u32; addresses.len()];
    for (new, &old) in order.iter().enumerate() {
        renumbered[old as usize] = new as u32;
    }
    for p in &mut pairs {
        p.ratee = renumbered[p.ratee as usize];
        p.rater = renumbered[p.rater as usize];
    }
    let mut addresses: Vec<Option<Vec<u8>>> = addresses.into_iter().map(Some).collect();
    let addresses = order.iter().filter_map(|&old| addresses[old as usize].take()).collect();
    Loaded { addresses, pairs }
}

/// The pairs with roles pooled: one per (ratee, rater), sorted so, with their sums.
struct Pooled {
    pairs: Vec<Pair>,
    pacts: Vec<i32>,
    paid_pacts: Vec<i32>,
    evidence: Vec<f64>,
    endorsement: Vec<f64>,
    /// For each role pair (in the order given), its pooled pair.
    of_role_pair: Vec<u32>,
}

/// Pools the roles of each (ratee, rater): the trust graph's edge weighs Σ max(0, C) over the roles.
fn pool(role_pairs: &[RolePair]) -> Pooled {
    let mut order: Vec<u32> = (0..role_pairs.len() as u32).collect();
    order.sort_unstable_by_key(|&i| {
        let p = &role_pairs[i as usize];
        (p.ratee, p.rater, p.role)
    });
    let mut pooled = Pooled {
        pairs: Vec::new(),
        pacts: Vec::new(),
        paid_pacts: Vec::new(),
        evidence: Vec::new(),
        endorsement: Vec::new(),
        of_role_pair: vec![0; role_pairs.len()],
    };
    for &i in &order {
        let p = &role_pairs[i as usize];
        let same = pooled.pairs.last().is_some_and(|q| (q.ratee, q.rater) == (p.ratee, p.rater));
        if !same {
            pooled.pairs.push(Pair { ratee: p.ratee, rater: p.rater, endorsement: 0.0 });
            pooled.pacts.push(0);
            pooled.paid_pacts.push(0);
            pooled.evidence.push(0.0);
            pooled.endorsement.push(0.0);
        }
        let at = pooled.pairs.len() - 1;
        pooled.pairs[at].endorsement += p.endorsement.max(0.0);
        pooled.pacts[at] += p.pacts;
        pooled.paid_pacts[at] += p.paid_pacts;
        pooled.evidence[at] += p.evidence;
        pooled.endorsement[at] += p.endorsement;
        pooled.of_role_pair[i as usize] = at as u32;
    }
    pooled
}

/// One row of `reputation_scores`: an address in a role (index into [`ROLES`], or `ROLES.len()`
/// for all roles).
struct Score {
    address: u32,
    role: u8,
    weight: f64,
    credit: f64,
    raters: i32,
    trusted_raters: i32,
}

/// The trusted sums per (ratee, role) and over all roles: Σ t·W, Σ t·C, the raters with evidence
/// and those of them trusted.
fn scores(role_pairs: &[RolePair], pooled: &Pooled, trust: &[f64]) -> Vec<Score> {
    let all = ROLES.len() as u8;
    // (ratee, role, rater) is unique: the sums run in one order whatever the input's.
    let mut keyed: Vec<(u32, u8, u32, f64, f64, f64)> =
        role_pairs
            .iter()
            .zip(&pooled.of_role_pair)
            .map(|(p, &at)| (p.ratee, p.role, p.rater, p.evidence, p.endorsement, trust[at as usize]))
            .chain(pooled.pairs.iter().enumerate().map(|(at, p)| {
                (p.ratee, all, p.rater, pooled.evidence[at], pooled.endorsement[at], trust[at])
            }))
            .collect();
    keyed.sort_unstable_by_key(|k| (k.0, k.1, k.2));
    let mut scores: Vec<Score> = Vec::new();
    for (address, role, _, evidence, endorsement, t) in keyed {
        if scores.last().is_none_or(|s| (s.address, s.role) != (address, role)) {
            scores.push(Score { address, role, weight: 0.0, credit: 0.0, raters: 0, trusted_raters: 0 });
        }
        let Some(s) = scores.last_mut() else { continue };
        s.weight += t * evidence;
        s.credit += t * endorsement;
        if evidence > 0.0 {
            s.raters += 1;
            s.trusted_raters += i32::from(t > 0.0);
        }
    }
    scores
}

/// Refuses a generation holding a value that is not a number ([`NotFinite`]): each node's π, each
/// rater's trust (which `erc8004_trusted` weighs clients by) and each score's sums.
fn all_finite(
    chain_id: u64,
    addresses: &[Vec<u8>],
    pooled: &Pooled,
    ranked: &rank::Ranked,
    scores: &[Score],
) -> Result<(), NotFinite> {
    let values = ranked
        .pi
        .iter()
        .enumerate()
        .map(|(node, &pi)| (node as u32, "pi", pi))
        .chain(pooled.pairs.iter().zip(&ranked.trust).map(|(p, &t)| (p.rater, "trust as a rater", t)))
        .chain(
            scores.iter().flat_map(|s| [(s.address, "weight", s.weight), (s.address, "credit", s.credit)]),
        );
    for (node, what, value) in values {
        if !value.is_finite() {
            let address = Address::try_from(addresses[node as usize].as_slice()).unwrap_or_default();
            return Err(NotFinite { chain_id, address, what, value });
        }
    }
    Ok(())
}

/// `reputation_trust`: every node's π and global trust as a rater.
async fn write_trust(
    conn: &mut PgConnection,
    chain: i64,
    addresses: &[Vec<u8>],
    ranked: &rank::Ranked,
) -> Result<(), sqlx::Error> {
    for start in (0..addresses.len()).step_by(WRITE_CHUNK) {
        let end = (start + WRITE_CHUNK).min(addresses.len());
        let trust: Vec<f64> =
            ranked.pi[start..end].iter().map(|&pi| rank::trust_of(pi, ranked.tau)).collect();
        sqlx::query!(
            "INSERT INTO reputation_trust (chain_id, address, pi, trust)
             SELECT $1, * FROM UNNEST($2::bytea[], $3::float8[], $4::float8[])",
            chain,
            &addresses[start..end],
            &ranked.pi[start..end],
            &trust
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// `reputation_raters`: every pooled pair with its rater's trust as a rater of its ratee.
async fn write_raters(
    conn: &mut PgConnection,
    chain: i64,
    addresses: &[Vec<u8>],
    pooled: &Pooled,
    trust: &[f64],
) -> Result<(), sqlx::Error> {
    let address = |i: u32| addresses[i as usize].clone();
    for start in (0..pooled.pairs.len()).step_by(WRITE_CHUNK) {
        let chunk = start..(start + WRITE_CHUNK).min(pooled.pairs.len());
        let ratees: Vec<Vec<u8>> = pooled.pairs[chunk.clone()].iter().map(|p| address(p.ratee)).collect();
        let raters: Vec<Vec<u8>> = pooled.pairs[chunk.clone()].iter().map(|p| address(p.rater)).collect();
        sqlx::query!(
            "INSERT INTO reputation_raters (chain_id, ratee, rater, pacts, paid_pacts, evidence, endorsement, trust)
             SELECT $1, * FROM UNNEST($2::bytea[], $3::bytea[], $4::int[], $5::int[], $6::float8[], $7::float8[],
                                      $8::float8[])",
            chain,
            &ratees,
            &raters,
            &pooled.pacts[chunk.clone()],
            &pooled.paid_pacts[chunk.clone()],
            &pooled.evidence[chunk.clone()],
            &pooled.endorsement[chunk.clone()],
            &trust[chunk],
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// `reputation_scores`, the score itself computed by `reputation_score` (its one definition).
async fn write_scores(
    conn: &mut PgConnection,
    chain: i64,
    addresses: &[Vec<u8>],
    scores: &[Score],
) -> Result<(), sqlx::Error> {
    let role_name = |r: u8| ROLES.get(r as usize).map_or("all", |role| role.name());
    for chunk in scores.chunks(WRITE_CHUNK) {
        let address: Vec<Vec<u8>> = chunk.iter().map(|s| addresses[s.address as usize].clone()).collect();
        let role: Vec<&str> = chunk.iter().map(|s| role_name(s.role)).collect();
        let weight: Vec<f64> = chunk.iter().map(|s| s.weight).collect();
        let credit: Vec<f64> = chunk.iter().map(|s| s.credit).collect();
        let raters: Vec<i32> = chunk.iter().map(|s| s.raters).collect();
        let trusted: Vec<i32> = chunk.iter().map(|s| s.trusted_raters).collect();
        sqlx::query!(
            "INSERT INTO reputation_scores (chain_id, address, role, weight, credit, score, raters, trusted_raters)
             SELECT $1, a, r, w, c, reputation_score(c::numeric, w::numeric), n, t
             FROM UNNEST($2::bytea[], $3::text[], $4::float8[], $5::float8[], $6::int[], $7::int[]) AS u(a, r, w, c, n, t)",
            chain,
            &address,
            &role as &[&str],
            &weight,
            &credit,
            &raters,
            &trusted,
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// `erc8004_trusted`: per agent, each grounded client's vote (its mean value / 100, weighing what
/// its paid pacts weigh: the view `erc8004_client_votes`) times the client's trust as a rater of
/// the agent's current wallet.
async fn write_erc8004(conn: &mut PgConnection, chain: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"
        WITH trusted AS (
            SELECT c.agent_id, c.client, c.vote::float8 AS vote, c.weight::float8 AS weight,
                   coalesce(r.trust, 0) AS trust
            FROM erc8004_client_votes c
            JOIN erc8004_agent_state s ON s.chain_id = $1 AND s.agent_id = c.agent_id
            LEFT JOIN reputation_raters r ON r.chain_id = $1 AND r.ratee = s.wallet AND r.rater = c.client
            WHERE c.chain_id = $1
        ),
        -- Summed in the clients' order: floating-point sums in whatever order the plan reads the
        -- rows would differ in the last bit between two indexes of one chain.
        sums AS (
            SELECT agent_id, sum(trust * weight ORDER BY client) AS weight,
                   sum(trust * weight * vote ORDER BY client) AS credit, count(*) FILTER (WHERE trust > 0) AS clients
            FROM trusted GROUP BY 1
        )
        INSERT INTO erc8004_trusted (chain_id, agent_id, weight, credit, score, clients)
        SELECT $1, agent_id, weight, credit, reputation_score(credit::numeric, weight::numeric), clients FROM sums
        "#,
        chain
    )
    .execute(conn)
    .await
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`all_finite`] says of one pair, rater 0x01… (the seed) of ratee 0x02…, as a seller.
    fn checked(evidence: f64, endorsement: f64) -> Result<(), NotFinite> {
        let addresses = vec![vec![1u8; 20], vec![2u8; 20]];
        let pairs =
            [RolePair { ratee: 1, rater: 0, role: 1, pacts: 1, paid_pacts: 1, evidence, endorsement }];
        let pooled = pool(&pairs);
        let ranked = rank::rank(addresses.len(), &pooled.pairs, &[0], ALPHA);
        let scores = scores(&pairs, &pooled, &ranked.trust);
        all_finite(7, &addresses, &pooled, &ranked, &scores)
    }

    #[test]
    fn a_pair_that_is_not_a_number_stops_the_generation_naming_its_ratee() {
        assert!(checked(1.0, 0.5).is_ok());
        let Err(nan_evidence) = checked(f64::NAN, 0.5) else { panic!("a NaN evidence was written") };
        assert_eq!(
            (nan_evidence.chain_id, nan_evidence.address, nan_evidence.what),
            (7, Address::repeat_byte(2), "weight")
        );
        // max(0, NaN) is 0 in Rust: the NaN endorsement gives the graph no edge, and still the credit.
        let Err(nan_endorsement) = checked(1.0, f64::NAN) else { panic!("a NaN endorsement was written") };
        assert_eq!((nan_endorsement.address, nan_endorsement.what), (Address::repeat_byte(2), "credit"));
        let Err(infinite) = checked(f64::INFINITY, 0.5) else { panic!("an infinite evidence was written") };
        assert!(infinite.to_string().contains("0x0202020202020202020202020202020202020202"), "{infinite}");
    }
}
