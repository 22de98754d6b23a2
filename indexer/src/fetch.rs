//! Reads the contracts' logs with `eth_getLogs` over block ranges whose size adapts: halved
//! when the RPC says a result is too large or a result is over twice the target, doubled while
//! results stay small. Keeping results near the target keeps the indexer's memory bounded however
//! dense the chain.

use alloy::{
    providers::Provider,
    rpc::types::{Filter, Log},
    transports::{RpcError, TransportError},
};

use agentpact_contracts::Contracts;

/// Logs per request we aim below; a range that returns fewer grows.
const TARGET_LOGS: usize = 5_000;

/// The size of the next `eth_getLogs` range.
#[derive(Debug, Clone, Copy)]
pub struct RangeSize {
    blocks: u64,
    max: u64,
}

impl RangeSize {
    /// Starts at `initial` blocks and never grows past `max`.
    pub const fn new(initial: u64, max: u64) -> Self {
        Self { blocks: if initial == 0 { 1 } else { initial }, max }
    }

    /// The last block of the range that starts at `from`, not past `head`.
    pub fn end(&self, from: u64, head: u64) -> u64 {
        from.saturating_add(self.blocks - 1).min(head)
    }

    /// A range returned `logs` logs: grow while results are small, shrink when they are large.
    pub fn succeeded(&mut self, logs: usize) {
        if logs < TARGET_LOGS / 2 {
            self.blocks = (self.blocks * 2).min(self.max);
        } else if logs > TARGET_LOGS * 2 {
            self.blocks = (self.blocks / 2).max(1);
        }
    }

    /// The RPC refused a range as too large: halve it. False when it is one block already.
    pub fn shrink(&mut self) -> bool {
        if self.blocks == 1 {
            return false;
        }
        self.blocks /= 2;
        true
    }

    /// Blocks in the next range.
    pub const fn blocks(&self) -> u64 {
        self.blocks
    }
}

/// The logs of the contracts in blocks `from..=to`.
pub async fn logs<P: Provider>(
    provider: &P,
    contracts: Contracts,
    from: u64,
    to: u64,
) -> Result<Vec<Log>, TransportError> {
    let filter = Filter::new().address(contracts.addresses()).from_block(from).to_block(to);
    provider.get_logs(&filter).await
}

/// Whether the RPC refused a `eth_getLogs` range for returning too much (providers word it
/// differently: "query returned more than 10000 results", "log response size exceeded", ...).
pub fn is_result_too_large(error: &TransportError) -> bool {
    let RpcError::ErrorResp(payload) = error else { return false };
    let message = payload.message.to_lowercase();
    // "Too many requests" is a rate limit, waited out by the transport, not a range to shrink.
    let rate_limit = ["too many requests", "rate limit"].iter().any(|hint| message.contains(hint));
    !rate_limit
        && ["more than", "too many", "size exceeded", "limit exceeded", "range too large", "block range"]
            .iter()
            .any(|hint| message.contains(hint))
}

#[cfg(test)]
mod tests {
    use super::RangeSize;

    #[test]
    fn ranges_grow_when_small_and_halve_when_refused() {
        let mut r = RangeSize::new(100, 1_000);
        assert_eq!(r.end(10, 1_000_000), 109);
        assert_eq!(r.end(10, 50), 50, "never past the head");
        r.succeeded(1);
        assert_eq!(r.blocks(), 200);
        r.succeeded(10_000);
        assert_eq!(r.blocks(), 200, "a full range does not grow");
        r.succeeded(10_001);
        assert_eq!(r.blocks(), 100, "an overfull one shrinks");
        r.succeeded(1);
        for _ in 0..10 {
            r.succeeded(0);
        }
        assert_eq!(r.blocks(), 1_000, "capped");
        let mut one = RangeSize::new(2, 10);
        assert!(one.shrink());
        assert!(!one.shrink(), "a single block cannot shrink");
    }
}
