//! What an operator sets: the registration policy every registering process applies, and how
//! `agentpact push` matches and delivers.

use std::time::Duration;

use agentpact_http::rate_limit::Rate;

use crate::{Targets, sink::SinkConfig};

/// What a registration must satisfy, wherever it comes from (MCP, GraphQL).
#[derive(Debug, Clone)]
pub struct Policy {
    /// The address ranges a target may resolve to beyond the public internet.
    pub targets: Targets,
    /// Active subscriptions one owner may hold on a chain.
    pub max_per_owner: u32,
}

impl Default for Policy {
    /// Public targets only; 100 subscriptions an owner.
    fn default() -> Self {
        Self { targets: Targets::default(), max_per_owner: 100 }
    }
}

/// When a failed delivery is tried again, and when it is given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts before a delivery becomes a dead letter.
    pub max_attempts: u32,
    /// The wait after the first failure; doubled after each next one.
    pub first_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
}

impl Retry {
    /// The wait after the `attempts`-th failed attempt (1 for the first).
    pub fn backoff(&self, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1).min(30);
        self.first_backoff.saturating_mul(1 << doublings).min(self.max_backoff)
    }
}

impl Default for Retry {
    /// 12 attempts, from 1 s doubling up to 1 hour apart: about 3.5 hours before a dead letter.
    fn default() -> Self {
        Self {
            max_attempts: 12,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(3600),
        }
    }
}

/// How `agentpact push` runs on one chain.
#[derive(Debug, Clone)]
pub struct PushConfig {
    /// The chain.
    pub chain_id: u64,
    /// Blocks below the indexed block minus this are final (the indexer's `FINALITY_DEPTH`):
    /// finalized subscriptions hear of nothing above it.
    pub finality_depth: u64,
    /// How long before a window closes its reminder goes out (chain time).
    pub remind_before: Duration,
    /// Where targets may resolve to (the same [`Targets`] registrations are held to).
    pub targets: Targets,
    /// Failed deliveries.
    pub retry: Retry,
    /// How long one POST may take, connection included.
    pub timeout: Duration,
    /// Subscriptions delivered to at once.
    pub concurrency: usize,
    /// Deliveries one owner's subscriptions may receive, all together.
    pub owner_rate: Rate,
    /// Events matched in one database transaction.
    pub batch: u32,
    /// How often to look again without a notification (retries due, a clock alarm, a missed
    /// notice).
    pub poll: Duration,
    /// The brokers deliveries are also published to (docs/push.md §Streams).
    pub sinks: Vec<SinkConfig>,
}

impl PushConfig {
    /// The defaults for `chain_id`: finality 64 blocks, reminders an hour ahead, public targets
    /// only, [`Retry::default`], 10-second POSTs, 16 at once, 20 deliveries a second per owner
    /// (a burst of 100), batches of 500 events, a look every 500 ms, no broker sinks.
    pub fn new(chain_id: u64) -> Self {
        Self {
            chain_id,
            finality_depth: 64,
            remind_before: Duration::from_secs(3600),
            targets: Targets::default(),
            retry: Retry::default(),
            timeout: Duration::from_secs(10),
            concurrency: 16,
            owner_rate: Rate { per_second: 20.0, burst: 100.0 },
            batch: 500,
            poll: Duration::from_millis(500),
            sinks: Vec::new(),
        }
    }
}

impl PushConfig {
    /// Database connections a process needs: two for each delivery turn (its lock and its
    /// statements; a sink has one turn at a time), and a few for matching, alarms and the
    /// notification listener.
    pub fn pool_size(&self) -> u32 {
        let turns = self.concurrency.saturating_add(self.sinks.len());
        u32::try_from(turns.saturating_mul(2).saturating_add(4)).unwrap_or(u32::MAX)
    }
}

/// The body of a delivery is at most this many bytes: a longer one is a dead letter, never sent.
pub const MAX_BODY: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_ceiling() {
        let retry = Retry {
            max_attempts: 5,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(5),
        };
        let waits: Vec<u64> = (1..=5).map(|n| retry.backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 5, 5]);
        assert_eq!(Retry::default().backoff(u32::MAX), Duration::from_secs(3600), "no overflow");
    }
}
