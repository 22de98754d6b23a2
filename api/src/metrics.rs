//! The API's Prometheus metrics: requests and their time by route and status class, plus the
//! indexer's lag as the index records it (so a dashboard watching the API sees the data's age).

use std::{
    collections::BTreeMap,
    fmt::Write,
    sync::{Arc, Mutex},
    time::Duration,
};

use crate::read::IndexerStatus;

/// Request counters, shared by every clone.
#[derive(Debug, Clone, Default)]
pub struct ApiMetrics(Arc<Mutex<BTreeMap<(String, u16), Counter>>>);

#[derive(Debug, Default, Clone, Copy)]
struct Counter {
    requests: u64,
    seconds: f64,
}

impl ApiMetrics {
    /// A request to `route` answered with `status` after `took`.
    pub fn request(&self, route: &str, status: u16, took: Duration) {
        if let Ok(mut map) = self.0.lock() {
            let c = map.entry((route.to_owned(), status)).or_default();
            c.requests += 1;
            c.seconds += took.as_secs_f64();
        }
    }

    /// The metrics in the Prometheus text format, with the indexer's `status` when known.
    pub fn render(&self, status: Option<&IndexerStatus>) -> String {
        let mut out = String::from(
            "# HELP agentpact_api_requests_total HTTP requests by route and status.\n\
             # TYPE agentpact_api_requests_total counter\n",
        );
        let counters: Vec<_> =
            self.0.lock().map(|m| m.iter().map(|(k, v)| (k.clone(), *v)).collect()).unwrap_or_default();
        for ((route, code), c) in &counters {
            let _ = writeln!(
                out,
                "agentpact_api_requests_total{{route=\"{route}\",status=\"{code}\"}} {}",
                c.requests
            );
        }
        out.push_str(
            "# HELP agentpact_api_request_seconds_total Time spent answering, by route and status.\n\
             # TYPE agentpact_api_request_seconds_total counter\n",
        );
        for ((route, code), c) in &counters {
            let _ = writeln!(
                out,
                "agentpact_api_request_seconds_total{{route=\"{route}\",status=\"{code}\"}} {}",
                c.seconds
            );
        }
        if let Some(s) = status {
            let chain = s.chain_id;
            for (name, help, value) in [
                ("agentpact_api_index_block", "Last block in the index.", s.indexed_block),
                ("agentpact_api_index_lag_blocks", "Blocks the index is behind the head.", s.lag_blocks()),
                ("agentpact_api_index_lag_seconds", "Chain seconds the index is behind.", s.lag_seconds()),
            ] {
                let _ = writeln!(
                    out,
                    "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{chain_id=\"{chain}\"}} {value}"
                );
            }
        }
        out
    }
}
