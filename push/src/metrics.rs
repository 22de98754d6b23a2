//! What `agentpact push` counts, in Prometheus text (it serves it on `GET /metrics`): deliveries
//! queued, delivered, failed attempts, dead letters and revocations, subscriptions with a delivery
//! waiting, and the latency from an event's block to its delivery (a histogram; the chain's clock
//! against this machine's, so it is only as good as both).

use std::{
    collections::BTreeMap,
    fmt::Write,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 10] = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0, 3600.0];

/// Shared, cheap to clone; every clone updates the same numbers.
#[derive(Debug, Clone, Default)]
pub struct Metrics(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    chain_id: AtomicU64,
    queued: AtomicU64,
    revoked: AtomicU64,
    delivered: AtomicU64,
    failed: AtomicU64,
    dead: AtomicU64,
    pending: AtomicU64,
    latency_buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_micros: AtomicU64,
    sinks: Mutex<BTreeMap<String, SinkCounts>>,
}

/// A per-sink series: its name, Prometheus type, help and value.
type SinkSeries = (&'static str, &'static str, &'static str, fn(&SinkCounts) -> u64);

/// What one broker sink did.
#[derive(Debug, Default, Clone, Copy)]
struct SinkCounts {
    published: u64,
    retried: u64,
    failed: u64,
    lag: u64,
}

impl Metrics {
    /// Metrics of `chain_id`.
    pub fn for_chain(chain_id: u64) -> Self {
        let m = Self::default();
        m.0.chain_id.store(chain_id, Ordering::Relaxed);
        m
    }

    /// `n` deliveries written to the outbox, `revoked` of them revocations.
    pub fn queued(&self, n: u64, revoked: u64) {
        self.0.queued.fetch_add(n + revoked, Ordering::Relaxed);
        self.0.revoked.fetch_add(revoked, Ordering::Relaxed);
    }

    /// A delivery answered with a 2xx, `latency` after its block was mined (events only).
    pub fn delivered(&self, latency: Option<Duration>) {
        self.0.delivered.fetch_add(1, Ordering::Relaxed);
        if let Some(latency) = latency {
            let seconds = latency.as_secs_f64();
            for (bound, bucket) in BUCKETS.iter().zip(&self.0.latency_buckets) {
                if seconds <= *bound {
                    bucket.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.0.latency_count.fetch_add(1, Ordering::Relaxed);
            self.0
                .latency_micros
                .fetch_add(u64::try_from(latency.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
        }
    }

    /// An attempt that failed; `dead` when it was the last one.
    pub fn failed(&self, dead: bool) {
        self.0.failed.fetch_add(1, Ordering::Relaxed);
        if dead {
            self.0.dead.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A delivery acknowledged by sink `name`'s broker.
    pub fn sink_published(&self, name: &str) {
        self.sink(name, |c| c.published += 1);
    }

    /// A publish to sink `name` that failed: to be retried, or given up (`dead`).
    pub fn sink_failed(&self, name: &str, dead: bool) {
        self.sink(name, |c| if dead { c.failed += 1 } else { c.retried += 1 });
    }

    /// How many blocks sink `name`'s oldest waiting event is behind the indexed block.
    pub fn set_sink_lag(&self, name: &str, blocks: u64) {
        self.sink(name, |c| c.lag = blocks);
    }

    fn sink(&self, name: &str, change: impl FnOnce(&mut SinkCounts)) {
        // A poisoned lock only means another thread panicked mid-update of a counter.
        let mut sinks = self.0.sinks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        change(sinks.entry(name.to_owned()).or_default());
    }

    /// Webhook subscriptions with a delivery waiting in the outbox, as last counted.
    pub fn set_pending(&self, n: u64) {
        self.0.pending.store(n, Ordering::Relaxed);
    }

    /// The Prometheus text.
    pub fn render(&self) -> String {
        let i = &self.0;
        let chain = i.chain_id.load(Ordering::Relaxed);
        let mut out = String::new();
        let mut counter = |name: &str, help: &str, value: u64| {
            let _ =
                writeln!(out, "# HELP agentpact_push_{name} {help}\n# TYPE agentpact_push_{name} counter");
            let _ = writeln!(out, "agentpact_push_{name}{{chain_id=\"{chain}\"}} {value}");
        };
        counter("queued_total", "Deliveries written to the outbox.", i.queued.load(Ordering::Relaxed));
        counter(
            "revoked_total",
            "Revocations written after a reorganisation.",
            i.revoked.load(Ordering::Relaxed),
        );
        counter("delivered_total", "Deliveries answered with a 2xx.", i.delivered.load(Ordering::Relaxed));
        counter("failed_total", "Delivery attempts that failed.", i.failed.load(Ordering::Relaxed));
        counter("dead_total", "Deliveries given up (dead letters).", i.dead.load(Ordering::Relaxed));
        let _ = writeln!(
            out,
            "# HELP agentpact_push_pending Webhook subscriptions with a delivery waiting in the outbox.\n# TYPE agentpact_push_pending gauge\nagentpact_push_pending{{chain_id=\"{chain}\"}} {}",
            i.pending.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP agentpact_push_latency_seconds From an event's block to its delivery.\n# TYPE agentpact_push_latency_seconds histogram"
        );
        for (bound, bucket) in BUCKETS.iter().zip(&i.latency_buckets) {
            let _ = writeln!(
                out,
                "agentpact_push_latency_seconds_bucket{{chain_id=\"{chain}\",le=\"{bound}\"}} {}",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = i.latency_count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "agentpact_push_latency_seconds_bucket{{chain_id=\"{chain}\",le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            out,
            "agentpact_push_latency_seconds_sum{{chain_id=\"{chain}\"}} {}\nagentpact_push_latency_seconds_count{{chain_id=\"{chain}\"}} {count}",
            i.latency_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let sinks = i.sinks.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let series: [SinkSeries; 4] = [
            ("published_total", "counter", "Deliveries a broker sink acknowledged.", |c| c.published),
            (
                "retried_total",
                "counter",
                "Publishes to a broker sink that failed and wait for a retry.",
                |c| c.retried,
            ),
            ("failed_total", "counter", "Publishes to a broker sink given up (dead letters).", |c| c.failed),
            (
                "lag_blocks",
                "gauge",
                "Blocks between the indexed block and a sink's oldest waiting event.",
                |c| c.lag,
            ),
        ];
        for (name, kind, help, value) in series {
            if sinks.is_empty() {
                break;
            }
            let _ = writeln!(
                out,
                "# HELP agentpact_push_sink_{name} {help}\n# TYPE agentpact_push_sink_{name} {kind}"
            );
            for (sink, counts) in &sinks {
                let _ = writeln!(
                    out,
                    "agentpact_push_sink_{name}{{chain_id=\"{chain}\",sink=\"{sink}\"}} {}",
                    value(counts)
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
    fn counts_and_latency_buckets_render() {
        let m = Metrics::for_chain(84532);
        m.queued(3, 1);
        m.delivered(Some(Duration::from_millis(700)));
        m.failed(true);
        m.sink_published("market");
        m.sink_failed("market", false);
        m.set_sink_lag("market", 3);
        let text = m.render();
        assert!(
            text.contains("agentpact_push_sink_published_total{chain_id=\"84532\",sink=\"market\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("agentpact_push_sink_retried_total{chain_id=\"84532\",sink=\"market\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("agentpact_push_sink_lag_blocks{chain_id=\"84532\",sink=\"market\"} 3"),
            "{text}"
        );
        assert!(text.contains("agentpact_push_queued_total{chain_id=\"84532\"} 4"), "{text}");
        assert!(text.contains("agentpact_push_dead_total{chain_id=\"84532\"} 1"), "{text}");
        assert!(
            text.contains("agentpact_push_latency_seconds_bucket{chain_id=\"84532\",le=\"0.5\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("agentpact_push_latency_seconds_bucket{chain_id=\"84532\",le=\"1\"} 1"),
            "{text}"
        );
    }
}
