//! What a score rests on: the counterparties behind it with their trust as raters, in the
//! global view or a viewer's, and the ranking run that computed the current generation
//! (`reputation_raters`, `reputation_runs`: migrations/0022_trusted_reputation.sql).

use agentpact_contracts::closed_set;
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::Address;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::{MAX_PAGE_SIZE, ReadError, Reader, Reputation, Score, reputation::ScoreView};

closed_set! {
    /// Why a counterparty is trusted as a rater.
    pub enum RaterSource {
        /// It is the viewer itself: fully trusted by it.
        You => "YOU",
        /// One of the ranking's configured seeds.
        Seed => "SEED",
        /// The viewer's own counterparty: the viewer's endorsement of it raised its trust.
        YourCounterparty => "YOUR_COUNTERPARTY",
        /// Trust that reached it from the seeds through the market's endorsements.
        Market => "MARKET",
    }
}

/// One counterparty behind a score and what it weighs in it.
#[derive(Debug, Clone, PartialEq)]
pub struct BasisRater {
    /// The counterparty (the rater).
    pub counterparty: Address,
    /// Pacts with the rated address, every role.
    pub pacts: u64,
    /// Of those, paid.
    pub paid_pacts: u64,
    /// Its evidence W, 0-5: per role its pacts and its ratings, each up to 1 after three paid jobs
    /// (up to 2 as seller, 2 as buyer, 1 as oracle, which has pacts only).
    pub evidence: f64,
    /// Its endorsement C (0 to W: how good that evidence says the address is).
    pub endorsement: f64,
    /// Its trust as a rater of the address in this view, 0-1.
    pub trust: f64,
    /// Why it is trusted.
    pub source: RaterSource,
    /// What it adds to the trusted weight: trust × evidence.
    pub contribution: f64,
}

/// What a score rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Basis {
    /// The score over all roles in this view (`rated` left 0: the role counts hold it).
    pub score: Score,
    /// The trusted counterparties, largest contribution first (at most the `first` asked).
    pub raters: Vec<BasisRater>,
    /// Counterparties with trust 0 in this view: they weigh nothing.
    pub untrusted_raters: u64,
    /// The evidence they hold, which counts for nothing.
    pub untrusted_evidence: f64,
    /// The paid pacts of the trusted counterparties with the address.
    pub trusted_paid_pacts: u64,
    /// Whether the viewer's view raised any counterparty above its global trust: one the viewer
    /// endorsed, or the viewer itself when it is a rater (trusted fully in its own view). False in
    /// the global view; when false, the view's score is the global one.
    pub raised: bool,
    /// Whether the viewer is itself one of the counterparties (false in the global view).
    pub viewer_rated: bool,
    /// Counterparties the viewer itself endorsed: its own counterparties (0 in the global view).
    pub viewers_counterparties: u64,
}

/// The ranking run that computed the current generation of scores on a chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ReputationRun {
    /// The last block whose pacts it read.
    pub block: u64,
    /// That block's time.
    pub block_time: Option<DateTime<Utc>>,
    /// When it finished.
    pub computed_at: DateTime<Utc>,
    /// Seconds from then to the database's now.
    pub age_seconds: u64,
    /// How long it took, in milliseconds.
    pub took_ms: u64,
    /// The seed set trust flows from (empty: every global score is the prior).
    pub seeds: Vec<Address>,
    /// The walk's restart probability.
    pub alpha: f64,
    /// The trust at which a rater counts fully (the 80 % mass quantile of π).
    pub tau: f64,
    /// Addresses in the trust graph.
    pub nodes: u64,
    /// Endorsements in it.
    pub edges: u64,
}

/// One consistent reading of a score: the reputation, what its global score rests on and the run
/// that computed them, all from the same generation ([`Reader::reputation_snapshot`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ReputationSnapshot {
    /// The reputation, in the view asked for.
    pub reputation: Reputation,
    /// What its global score rests on.
    pub basis: Basis,
    /// The run that computed the generation read; none before the first.
    pub run: Option<ReputationRun>,
}

impl Reader {
    /// What the score of `address` on `chain_id` rests on, as `viewer` sees it (none: the
    /// global view): its score over all roles in that view, up to `first` (at most
    /// [`MAX_PAGE_SIZE`]) trusted counterparties by contribution, and the untrusted rest summed.
    /// A counterparty's trust is `t` (global), or for a viewer `1` when it is the viewer, else
    /// `max(t, min(1, C(viewer, u)))`.
    pub async fn basis(
        &self,
        chain_id: u64,
        address: Address,
        viewer: Option<Address>,
        first: u32,
    ) -> Result<Basis, ReadError> {
        basis_on(&mut *self.pool().acquire().await?, chain_id, address, viewer, first).await
    }

    /// The run that computed `chain_id`'s current scores; none before the first (also while the
    /// indexer's row for the chain waits for it, `computed_at` still null).
    pub async fn reputation_run(&self, chain_id: u64) -> Result<Option<ReputationRun>, ReadError> {
        run_on(&mut *self.pool().acquire().await?, chain_id).await
    }

    /// The reputation of `address` on `chain_id` as `viewer` sees it
    /// ([`Reader::reputation_seen_by`]), up to `first` counterparties its global score rests on
    /// ([`Reader::basis`]) and the run that computed them, read in one read-only REPEATABLE READ
    /// transaction: a ranking run committing meanwhile cannot mix two generations in one answer.
    pub async fn reputation_snapshot(
        &self,
        chain_id: u64,
        address: Address,
        viewer: Option<Address>,
        first: u32,
    ) -> Result<ReputationSnapshot, ReadError> {
        let mut tx = self.snapshot().await?;
        let reputation = super::reputation::reputation_on(&mut tx, chain_id, address, viewer).await?;
        let basis = basis_on(&mut tx, chain_id, address, None, first).await?;
        let run = run_on(&mut tx, chain_id).await?;
        tx.commit().await?;
        Ok(ReputationSnapshot { reputation, basis, run })
    }

    /// A read-only transaction whose statements all see the index as it stood at its first one.
    pub(crate) async fn snapshot(&self) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, ReadError> {
        Ok(self.pool().begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?)
    }
}

/// [`Reader::basis`] on `conn`.
pub(crate) async fn basis_on(
    conn: &mut PgConnection,
    chain_id: u64,
    address: Address,
    viewer: Option<Address>,
    first: u32,
) -> Result<Basis, ReadError> {
    if first > MAX_PAGE_SIZE {
        return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: first });
    }
    let rows = sqlx::query!(
        r#"WITH seen AS (
               SELECT r.rater, r.pacts, r.paid_pacts, r.evidence, r.endorsement, r.trust AS global,
                      r.rater = $3 AS viewer, v.endorsement > 0 AS viewers,
                      CASE WHEN r.rater = $3 THEN 1
                           ELSE greatest(r.trust, least(1, coalesce(v.endorsement, 0))) END AS t
               FROM reputation_raters r
               LEFT JOIN reputation_raters v ON v.chain_id = r.chain_id AND v.ratee = r.rater AND v.rater = $3
               -- A counterparty whose pacts weigh nothing (cancelled, expired) is no rater.
               WHERE r.chain_id = $1 AND r.ratee = $2 AND r.evidence > 0
           ),
           totals AS (
               SELECT reputation_score(coalesce(sum(t * endorsement), 0)::numeric,
                                       coalesce(sum(t * evidence), 0)::numeric)::float8 AS score,
                      coalesce(sum(t * evidence), 0) AS weight, count(*) AS raters,
                      count(*) FILTER (WHERE t > 0) AS trusted_raters,
                      count(*) FILTER (WHERE t = 0) AS untrusted_raters,
                      coalesce(sum(evidence) FILTER (WHERE t = 0), 0) AS untrusted_evidence,
                      coalesce(bool_or(t > global), false) AS raised,
                      coalesce(bool_or(viewer), false) AS viewer_rated,
                      count(*) FILTER (WHERE viewers) AS viewers_counterparties,
                      coalesce(sum(paid_pacts) FILTER (WHERE t > 0), 0) AS trusted_paid_pacts
               FROM seen
           )
           SELECT x.score AS "score!", x.weight AS "weight!", x.raters AS "raters!",
                  x.trusted_raters AS "trusted_raters!", x.untrusted_raters AS "untrusted_raters!",
                  x.untrusted_evidence AS "untrusted_evidence!", x.raised AS "raised!",
                  x.viewer_rated AS "viewer_rated!",
                  x.viewers_counterparties AS "viewers_counterparties!", x.trusted_paid_pacts AS "trusted_paid_pacts!",
                  s.rater AS "rater?", s.pacts AS "pacts?", s.paid_pacts AS "paid_pacts?",
                  s.evidence AS "evidence?", s.endorsement AS "endorsement?", s.global AS "global?",
                  s.t::float8 AS "trust?",
                  s.rater = ANY(coalesce((SELECT seeds FROM reputation_runs WHERE chain_id = $1), '{}'))
                      AS "seed?"
           FROM totals x
           LEFT JOIN LATERAL (
               SELECT * FROM seen WHERE t > 0 ORDER BY t * evidence DESC, rater LIMIT $4
           ) s ON true"#,
        i64_of(chain_id),
        address.as_slice(),
        viewer.map(|v| v.to_vec()),
        i64::from(first),
    )
    .fetch_all(&mut *conn)
    .await?;
    let cells = Cells { table: "reputation_raters", key: format!("chain {chain_id} ratee {address}") };
    let count = |column, n: i64| cells.int::<u64>(column, n);
    // One row at least: the totals, beside no rater when none is trusted.
    let top = cells.present("totals", rows.first())?;
    let mut basis = Basis {
        score: Score {
            value: top.score,
            rated: 0,
            raters: count("raters", top.raters)?,
            trusted_raters: count("trusted_raters", top.trusted_raters)?,
            weight: top.weight,
            view: if viewer.is_some() { ScoreView::Viewer } else { ScoreView::Global },
        },
        raters: Vec::with_capacity(rows.len()),
        untrusted_raters: count("untrusted_raters", top.untrusted_raters)?,
        untrusted_evidence: top.untrusted_evidence,
        trusted_paid_pacts: cells.int("paid_pacts", top.trusted_paid_pacts)?,
        raised: top.raised,
        viewer_rated: top.viewer_rated,
        viewers_counterparties: count("viewers_counterparties", top.viewers_counterparties)?,
    };
    for r in &rows {
        let Some(rater) = &r.rater else { continue };
        let counterparty = cells.address("rater", rater)?;
        let trust = cells.present("trust", r.trust)?;
        let global = cells.present("trust", r.global)?;
        let evidence = cells.present("evidence", r.evidence)?;
        let source = if viewer == Some(counterparty) {
            RaterSource::You
        } else if r.seed == Some(true) {
            RaterSource::Seed
        } else if trust > global {
            RaterSource::YourCounterparty
        } else {
            RaterSource::Market
        };
        basis.raters.push(BasisRater {
            counterparty,
            pacts: cells.int("pacts", cells.present("pacts", r.pacts)?)?,
            paid_pacts: cells.int("paid_pacts", cells.present("paid_pacts", r.paid_pacts)?)?,
            evidence,
            endorsement: cells.present("endorsement", r.endorsement)?,
            trust,
            source,
            contribution: trust * evidence,
        });
    }
    Ok(basis)
}

/// [`Reader::reputation_run`] on `conn`.
async fn run_on(conn: &mut PgConnection, chain_id: u64) -> Result<Option<ReputationRun>, ReadError> {
    let row = sqlx::query!(
        r#"SELECT block_number, block_time, computed_at AS "computed_at!", took_ms, seeds, alpha, tau,
                  nodes, edges,
                  greatest(0, extract(epoch FROM now() - computed_at))::float8 AS "age!"
           FROM reputation_runs WHERE chain_id = $1 AND computed_at IS NOT NULL"#,
        i64_of(chain_id),
    )
    .fetch_optional(conn)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let cells = Cells { table: "reputation_runs", key: format!("chain {chain_id}") };
    Ok(Some(ReputationRun {
        block: cells.int("block_number", cells.present("block_number", r.block_number)?)?,
        block_time: r.block_time,
        computed_at: r.computed_at,
        age_seconds: r.age as u64,
        took_ms: cells.int("took_ms", cells.present("took_ms", r.took_ms)?)?,
        seeds: r.seeds.iter().map(|s| cells.address("seeds", s)).collect::<Result<_, _>>()?,
        alpha: cells.present("alpha", r.alpha)?,
        tau: cells.present("tau", r.tau)?,
        nodes: cells.int("nodes", cells.present("nodes", r.nodes)?)?,
        edges: cells.int("edges", cells.present("edges", r.edges)?)?,
    }))
}
