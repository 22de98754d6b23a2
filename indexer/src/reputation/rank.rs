//! The ranking: how far each address is trusted as a rater of each other address
//! (docs/proposals/53-reputation.md §2, §4, §5). Pure: dense node indices in, numbers out.
//!
//! The trust graph has an edge u→v weighing u's positive endorsements of v (Σ over v's roles of
//! max(0, C(u,v))); `P` is its row-normalised matrix, and a node without out-edges drops its mass
//! (it is never sent back to the seeds). Trust from the seeds is the personalised PageRank
//! `π = α·s + (1 − α)·π·P` (s uniform over the seeds present), by power iteration. `τ` is the π
//! at which the nodes sorted by π descending first hold [`TRUSTED_MASS`] of Σπ (a mass quantile:
//! wallets without mass cannot move it). As a rater of v, u counts only the walks from the seeds
//! to u that never touch v: `π^{¬v}(u) = π(u) − π(v)·ρ_v(u)/ρ_v(v)`, ρ_v the same walk restarted
//! at v alone (split each killed walk at its first visit to v), and `t_v(u) = min(1, π^{¬v}(u)/τ)`.
//!
//! ρ_v is estimated by a local push (Andersen–Chung–Lang) from v, only at the precision v's own
//! trust needs: residuals are pushed while above `ε_v = min(`[`PUSH_EPSILON`]`, `[`PUSH_PRECISION`]`·α·τ/π(v))`,
//! so the error the push leaves in `π(v)·ρ_v(u)/ρ_v(v)/τ` (u's trust) is about
//! [`PUSH_PRECISION`] whatever π(v) (measured against the exclusion computed exactly in the test
//! `the_push_agrees_with_the_exact_exclusion`: 0.74·[`PUSH_PRECISION`] at most, asserted below
//! half of [`RESOLUTION`]), and a ratee with little trust costs little. Trust below
//! [`RESOLUTION`] is 0,
//! so a rater every walk to whom passes through v (a single-identity farm's puppets) gets exactly
//! 0. A ratee with `π(v) < `[`SKIP_BELOW`]`·α·τ` is not pushed from: its raters keep their global
//! trust `min(1, π(u)/τ)`. Since `Σ_u π(v)·ρ_v(u)/ρ_v(v) ≤ π(v)/α` (ρ_v sums to at most 1 and
//! ρ_v(v) ≥ α) and W ≤ 2 per role, that adds at most `2·π(v)/(α·τ) < 2·`[`SKIP_BELOW`]` = 0.01`
//! units of trusted evidence per role to v; and a rater every walk to whom passes through such a
//! v has `π(u) ≤ π(v)·(1 − α)/α < 0.0035·τ`, below [`RESOLUTION`]: its trust is 0 all the same.
//!
//! Whatever the push's error, `t_v(u) ≤ min(1, π(u)/τ)`: the exclusion only removes trust, so the
//! bound of §4 (`Σ_{u∈S} t_v(u)·W(u,v) ≤ 2(1−α)/(α·τ)·Σ_{(b,x)∈A} π(b)·P(b,x)` for any set S
//! without seeds and its attack edges A) holds up to π's own convergence error.

use std::collections::VecDeque;

/// The restart probability: a walk's mean length is (1 − α)/α = 2.33 hops.
pub const ALPHA: f64 = 0.3;

/// The share of all trust held by the nodes whose π is at least τ.
pub const TRUSTED_MASS: f64 = 0.8;

/// Power iteration stops when an iteration changes π by less than this (L1), or after
/// [`MAX_STEPS`].
pub const CONVERGED: f64 = 1e-10;

/// The most power iterations.
pub const MAX_STEPS: usize = 200;

/// Ratees whose π is below `SKIP_BELOW·α·τ` are not pushed from (module docs: their raters keep
/// their global trust, adding at most 0.01 units of evidence).
pub const SKIP_BELOW: f64 = 0.005;

/// The coarsest residual threshold of a push.
pub const PUSH_EPSILON: f64 = 1e-2;

/// A push from v stops at residuals of `PUSH_PRECISION·α·τ/π(v)` when that is finer than
/// [`PUSH_EPSILON`]: the more trust v has, the more its exclusion matters, the finer the push.
/// The error in a rater's trust is about this (module docs). On a synthetic market of 100k agents
/// and 2M edges (one core, release) a ranking took 38 s at 1e-3, 15 s at 3e-3 and 5 s at 1e-2.
pub const PUSH_PRECISION: f64 = 1e-2;

/// Trust below this is 0 (module docs).
pub const RESOLUTION: f64 = 0.02;

/// What one rater's pacts and ratings say of one ratee, roles pooled: an edge of the trust graph.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// The ratee's node.
    pub ratee: u32,
    /// The rater's node.
    pub rater: u32,
    /// The rater's positive endorsement of the ratee: Σ over the ratee's roles of max(0, C).
    pub endorsement: f64,
}

/// The trust graph, as compressed rows of out-edges with their probabilities.
#[derive(Debug, Clone)]
pub struct Graph {
    /// Edges of node u: `offsets[u]..offsets[u + 1]`.
    offsets: Vec<usize>,
    targets: Vec<u32>,
    probabilities: Vec<f64>,
}

impl Graph {
    /// The graph of `nodes` nodes whose edges are the pairs with a positive endorsement (a pair
    /// of a node with itself is not an edge). Parallel pairs add up.
    pub fn new(nodes: usize, pairs: &[Pair]) -> Self {
        let edge = |p: &&Pair| p.endorsement > 0.0 && p.rater != p.ratee;
        let mut offsets = vec![0usize; nodes + 1];
        for p in pairs.iter().filter(edge) {
            offsets[p.rater as usize + 1] += 1;
        }
        for u in 0..nodes {
            offsets[u + 1] += offsets[u];
        }
        let mut next = offsets.clone();
        let mut targets = vec![0u32; offsets[nodes]];
        let mut weights = vec![0f64; offsets[nodes]];
        for p in pairs.iter().filter(edge) {
            let at = &mut next[p.rater as usize];
            targets[*at] = p.ratee;
            weights[*at] = p.endorsement;
            *at += 1;
        }
        for u in 0..nodes {
            let row = offsets[u]..offsets[u + 1];
            let total: f64 = weights[row.clone()].iter().sum();
            weights[row].iter_mut().for_each(|w| *w /= total);
        }
        Self { offsets, targets, probabilities: weights }
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The number of edges.
    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    /// Node `u`'s out-edges: targets and their probabilities.
    fn row(&self, u: usize) -> (&[u32], &[f64]) {
        let row = self.offsets[u]..self.offsets[u + 1];
        (&self.targets[row.clone()], &self.probabilities[row])
    }

    /// `π = α·s + (1 − α)·π·P`, s uniform over `seeds` (out-of-range and repeated seeds are
    /// ignored), by power iteration from s; with the number of iterations.
    pub fn stationary(&self, seeds: &[u32], alpha: f64) -> (Vec<f64>, usize) {
        let n = self.nodes();
        let mut restart = vec![0f64; n];
        let mut present: Vec<u32> = seeds.iter().copied().filter(|&s| (s as usize) < n).collect();
        present.sort_unstable();
        present.dedup();
        if present.is_empty() {
            return (restart, 0);
        }
        let share = 1.0 / present.len() as f64;
        for &s in &present {
            restart[s as usize] = share;
        }
        let mut pi = restart.clone();
        let mut next = vec![0f64; n];
        for step in 1..=MAX_STEPS {
            next.iter_mut().zip(&restart).for_each(|(x, s)| *x = alpha * s);
            for (u, &mass) in pi.iter().enumerate() {
                if mass == 0.0 {
                    continue;
                }
                let spread = (1.0 - alpha) * mass;
                let (targets, probabilities) = self.row(u);
                for (&v, &p) in targets.iter().zip(probabilities) {
                    next[v as usize] += spread * p;
                }
            }
            let change: f64 = pi.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            std::mem::swap(&mut pi, &mut next);
            if change < CONVERGED {
                return (pi, step);
            }
        }
        (pi, MAX_STEPS)
    }
}

/// The π at which the nodes sorted by π descending first hold `share` of Σπ; 0 when Σπ = 0.
pub fn mass_quantile(pi: &[f64], share: f64) -> f64 {
    let mut sorted: Vec<f64> = pi.iter().copied().filter(|&x| x > 0.0).collect();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let total: f64 = sorted.iter().sum();
    let mut held = 0.0;
    for &x in &sorted {
        held += x;
        if held >= share * total {
            return x;
        }
    }
    sorted.last().copied().unwrap_or(0.0)
}

/// Trust as a rater from a π value (global, or with walks through a ratee removed): `π/τ` at
/// most 1, and 0 below [`RESOLUTION`] or without trust (τ = 0).
pub fn trust_of(pi: f64, tau: f64) -> f64 {
    if tau <= 0.0 {
        return 0.0;
    }
    let t = (pi / tau).min(1.0);
    if t < RESOLUTION { 0.0 } else { t }
}

/// The result of a ranking.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// Each node's trust from the seeds.
    pub pi: Vec<f64>,
    /// The mass quantile of π ([`TRUSTED_MASS`]); 0 without seeds.
    pub tau: f64,
    /// Each pair's `t_v(u)`, in the order of the pairs given.
    pub trust: Vec<f64>,
    /// Power iterations run.
    pub steps: usize,
    /// Ratees whose exclusion was pushed (the others had too little trust to matter).
    pub pushed: usize,
    /// Edge operations spent by the pushes.
    pub push_work: u64,
}

/// Ranks: π from `seeds` over the graph of `pairs` among `nodes` nodes, τ, and each pair's
/// trust of its rater as a rater of its ratee (module docs).
pub fn rank(nodes: usize, pairs: &[Pair], seeds: &[u32], alpha: f64) -> Ranked {
    let graph = Graph::new(nodes, pairs);
    let (pi, steps) = graph.stationary(seeds, alpha);
    let tau = mass_quantile(&pi, TRUSTED_MASS);
    let mut trust = vec![0f64; pairs.len()];
    let (mut pushed, mut push_work) = (0, 0);
    if tau > 0.0 {
        let mut push = Push::new(nodes);
        for (ratee, group) in by_ratee(nodes, pairs).groups() {
            let v = ratee as usize;
            // Without a rater trusted at all, there is nothing to exclude.
            let trusted = group.iter().any(|&i| trust_of(pi[pairs[i as usize].rater as usize], tau) > 0.0);
            let exclude = trusted && pi[v] > 0.0 && pi[v] >= SKIP_BELOW * alpha * tau;
            if exclude {
                let epsilon = PUSH_EPSILON.min(PUSH_PRECISION * alpha * tau / pi[v]);
                push_work += push.run(&graph, ratee, alpha, epsilon);
                pushed += 1;
            }
            for &i in group {
                let u = pairs[i as usize].rater as usize;
                trust[i as usize] = if u == v {
                    0.0
                } else if exclude {
                    let killed = pi[v] * push.p[u] / push.p[v];
                    trust_of((pi[u] - killed).max(0.0), tau)
                } else {
                    trust_of(pi[u], tau)
                };
            }
            if exclude {
                push.clear();
            }
        }
    }
    Ranked { pi, tau, trust, steps, pushed, push_work }
}

/// The pairs' indices grouped by ratee (a counting sort).
struct ByRatee {
    offsets: Vec<usize>,
    order: Vec<u32>,
}

fn by_ratee(nodes: usize, pairs: &[Pair]) -> ByRatee {
    let mut offsets = vec![0usize; nodes + 1];
    for p in pairs {
        offsets[p.ratee as usize + 1] += 1;
    }
    for v in 0..nodes {
        offsets[v + 1] += offsets[v];
    }
    let mut next = offsets.clone();
    let mut order = vec![0u32; pairs.len()];
    for (i, p) in pairs.iter().enumerate() {
        let at = &mut next[p.ratee as usize];
        order[*at] = i as u32;
        *at += 1;
    }
    ByRatee { offsets, order }
}

impl ByRatee {
    /// Each ratee with at least one pair, and its pairs' indices.
    fn groups(&self) -> impl Iterator<Item = (u32, &[u32])> {
        self.offsets
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[1] > w[0])
            .map(|(v, w)| (v as u32, &self.order[w[0]..w[1]]))
    }
}

/// The workspace of local pushes, reused from ratee to ratee (dense arrays, cleared through the
/// list of nodes a push touched).
struct Push {
    /// The estimate of ρ_v.
    p: Vec<f64>,
    /// The mass not yet pushed.
    r: Vec<f64>,
    queued: Vec<bool>,
    touched: Vec<u32>,
    seen: Vec<bool>,
    queue: VecDeque<u32>,
}

impl Push {
    fn new(nodes: usize) -> Self {
        Self {
            p: vec![0.0; nodes],
            r: vec![0.0; nodes],
            queued: vec![false; nodes],
            touched: Vec::new(),
            seen: vec![false; nodes],
            queue: VecDeque::new(),
        }
    }

    fn touch(&mut self, u: usize) {
        if !self.seen[u] {
            self.seen[u] = true;
            self.touched.push(u as u32);
        }
    }

    /// Pushes from `start` until every residual is at most `epsilon`; returns the edge operations spent. `p` then holds the
    /// estimate of ρ_start, with `p[start] ≥ α`.
    fn run(&mut self, graph: &Graph, start: u32, alpha: f64, epsilon: f64) -> u64 {
        let s = start as usize;
        self.touch(s);
        self.r[s] = 1.0;
        let mut work = self.push(graph, s, alpha, epsilon);
        while let Some(u) = self.queue.pop_front() {
            let u = u as usize;
            self.queued[u] = false;
            if self.r[u] > epsilon {
                work += self.push(graph, u, alpha, epsilon);
            }
        }
        work
    }

    /// Moves α of `u`'s residual to its estimate and spreads the rest along its out-edges (a node
    /// without any drops it), queueing the targets that cross the threshold.
    fn push(&mut self, graph: &Graph, u: usize, alpha: f64, epsilon: f64) -> u64 {
        let mass = std::mem::take(&mut self.r[u]);
        self.p[u] += alpha * mass;
        let spread = (1.0 - alpha) * mass;
        let (targets, probabilities) = graph.row(u);
        for (&y, &prob) in targets.iter().zip(probabilities) {
            let y = y as usize;
            self.touch(y);
            self.r[y] += spread * prob;
            if !self.queued[y] && self.r[y] > epsilon {
                self.queued[y] = true;
                self.queue.push_back(y as u32);
            }
        }
        targets.len() as u64
    }

    /// Zeroes what the last push touched.
    fn clear(&mut self) {
        for &u in &self.touched {
            let u = u as usize;
            self.p[u] = 0.0;
            self.r[u] = 0.0;
            self.seen[u] = false;
        }
        self.touched.clear();
    }
}

#[cfg(test)]
mod tests;
