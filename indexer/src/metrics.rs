//! The indexer's Prometheus metrics: indexed block, head, lag, events and batches (rate() of the
//! counters gives events/s), batch latency and where it goes (RPC, decoding, database), reorgs,
//! errors by kind, and how long ago the head was last read: a node that stops answering leaves the
//! head and the lag frozen, and only that age shows it.

use std::{
    collections::BTreeMap,
    fmt::Write,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

/// Shared, cheap to clone; every clone updates the same numbers.
#[derive(Debug, Clone, Default)]
pub struct Metrics(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    chain_id: AtomicU64,
    head: AtomicU64,
    /// When the head was last read, or the metrics made if never.
    head_seen: Mutex<Option<Instant>>,
    indexed: AtomicU64,
    events: AtomicU64,
    batches: AtomicU64,
    batch_micros: AtomicU64,
    reorgs: AtomicU64,
    phase_micros: [AtomicU64; 3],
    errors: Mutex<BTreeMap<&'static str, u64>>,
}

agentpact_contracts::closed_set! {
    /// Where a batch spends its time, in pipeline order; its name labels metrics and reports.
    pub enum Phase {
        /// Reading logs and block headers from the RPC.
        Rpc => "rpc",
        /// Turning logs into journal events.
        Decode => "decode",
        /// The database transaction: journal, projections, reputation, checkpoint.
        Db => "db",
    }
}

impl Metrics {
    /// Labels every series with `chain_id`.
    pub fn for_chain(chain_id: u64) -> Self {
        let m = Self::default();
        m.0.chain_id.store(chain_id, Ordering::Relaxed);
        m.saw_head_now();
        m
    }

    /// The RPC's latest block, read just now.
    pub fn set_head(&self, head: u64) {
        self.0.head.store(head, Ordering::Relaxed);
        self.saw_head_now();
    }

    fn saw_head_now(&self) {
        if let Ok(mut seen) = self.0.head_seen.lock() {
            *seen = Some(Instant::now());
        }
    }

    /// How long ago the head was last read (since the metrics were made, if never).
    pub fn head_age(&self) -> Duration {
        self.0.head_seen.lock().ok().and_then(|seen| seen.map(|t| t.elapsed())).unwrap_or_default()
    }

    /// The index stands at block `block` (on start, after a rollback).
    pub fn set_indexed(&self, block: u64) {
        self.0.indexed.store(block, Ordering::Relaxed);
    }

    /// A batch up to block `to` committed `events` new events in `took`.
    pub fn batch(&self, to: u64, events: u64, took: Duration) {
        self.0.indexed.store(to, Ordering::Relaxed);
        self.0.events.fetch_add(events, Ordering::Relaxed);
        self.0.batches.fetch_add(1, Ordering::Relaxed);
        self.0.batch_micros.fetch_add(u64::try_from(took.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// `took` was spent in `phase`.
    pub fn phase(&self, phase: Phase, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.0.phase_micros[phase as usize].fetch_add(micros, Ordering::Relaxed);
    }

    /// Total time spent in `phase` so far.
    pub fn phase_total(&self, phase: Phase) -> Duration {
        Duration::from_micros(self.0.phase_micros[phase as usize].load(Ordering::Relaxed))
    }

    /// Events journaled so far.
    pub fn events(&self) -> u64 {
        self.0.events.load(Ordering::Relaxed)
    }

    /// A reorganisation was rolled back.
    pub fn reorg(&self) {
        self.0.reorgs.fetch_add(1, Ordering::Relaxed);
    }

    /// An error of `kind` happened (and was retried, or stopped the indexer).
    pub fn error(&self, kind: &'static str) {
        if let Ok(mut errors) = self.0.errors.lock() {
            *errors.entry(kind).or_default() += 1;
        }
    }

    /// The last indexed block.
    pub fn indexed_block(&self) -> u64 {
        self.0.indexed.load(Ordering::Relaxed)
    }

    /// The RPC's latest block, as last seen.
    pub fn head_block(&self) -> u64 {
        self.0.head.load(Ordering::Relaxed)
    }

    /// The metrics in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let i = &self.0;
        let chain = i.chain_id.load(Ordering::Relaxed);
        let (head, indexed) = (i.head.load(Ordering::Relaxed), i.indexed.load(Ordering::Relaxed));
        let mut out = String::new();
        let mut series = |name: &str, kind: &str, help: &str, value: String| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{chain_id=\"{chain}\"}} {value}"
            );
        };
        series("agentpact_indexer_head_block", "gauge", "Latest block of the RPC.", head.to_string());
        series("agentpact_indexer_indexed_block", "gauge", "Last block fully indexed.", indexed.to_string());
        series(
            "agentpact_indexer_lag_blocks",
            "gauge",
            "Blocks the index is behind the head.",
            head.saturating_sub(indexed).to_string(),
        );
        series(
            "agentpact_indexer_head_age_seconds",
            "gauge",
            "Seconds since the RPC's head was last read: grows while the node does not answer.",
            format!("{:.1}", self.head_age().as_secs_f64()),
        );
        series(
            "agentpact_indexer_events_total",
            "counter",
            "Events journaled.",
            i.events.load(Ordering::Relaxed).to_string(),
        );
        series(
            "agentpact_indexer_batches_total",
            "counter",
            "Ranges committed.",
            i.batches.load(Ordering::Relaxed).to_string(),
        );
        let seconds = i.batch_micros.load(Ordering::Relaxed) as f64 / 1e6;
        series(
            "agentpact_indexer_batch_seconds_total",
            "counter",
            "Time spent fetching and committing ranges.",
            seconds.to_string(),
        );
        series(
            "agentpact_indexer_reorgs_total",
            "counter",
            "Reorganisations rolled back.",
            i.reorgs.load(Ordering::Relaxed).to_string(),
        );
        let _ = writeln!(
            out,
            "# HELP agentpact_indexer_phase_seconds_total Time spent by phase of a batch.\n\
             # TYPE agentpact_indexer_phase_seconds_total counter"
        );
        for phase in Phase::ALL {
            let seconds = self.phase_total(phase).as_secs_f64();
            let _ = writeln!(
                out,
                "agentpact_indexer_phase_seconds_total{{chain_id=\"{chain}\",phase=\"{}\"}} {seconds}",
                phase.name()
            );
        }
        let _ = writeln!(
            out,
            "# HELP agentpact_indexer_errors_total Errors by kind.\n# TYPE agentpact_indexer_errors_total counter"
        );
        if let Ok(errors) = i.errors.lock() {
            for (kind, n) in errors.iter() {
                let _ = writeln!(
                    out,
                    "agentpact_indexer_errors_total{{chain_id=\"{chain}\",kind=\"{kind}\"}} {n}"
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_lag_and_errors_by_kind() {
        let m = Metrics::for_chain(84532);
        m.set_head(120);
        m.batch(100, 7, Duration::from_millis(250));
        m.error("rpc");
        m.error("rpc");
        m.phase(Phase::Db, Duration::from_millis(1_500));
        let text = m.render();
        assert!(
            text.contains("agentpact_indexer_phase_seconds_total{chain_id=\"84532\",phase=\"db\"} 1.5"),
            "{text}"
        );
        assert!(text.contains("agentpact_indexer_lag_blocks{chain_id=\"84532\"} 20"), "{text}");
        assert!(text.contains("agentpact_indexer_events_total{chain_id=\"84532\"} 7"), "{text}");
        assert!(text.contains("agentpact_indexer_errors_total{chain_id=\"84532\",kind=\"rpc\"} 2"), "{text}");
        assert!(text.contains("agentpact_indexer_head_age_seconds{chain_id=\"84532\"} 0.0"), "{text}");
    }
}
