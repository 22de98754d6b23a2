//! Reads the contracts' logs with `eth_getLogs` over block ranges whose size adapts: halved
//! when the RPC says a result is too large, shrunk at once to the target's share of the blocks
//! when a result is over twice the target, doubled while results stay small. Keeping results
//! near the target keeps the indexer's memory bounded however dense the chain.

use alloy::{
    primitives::Address,
    providers::Provider,
    rpc::types::{Filter, Log},
    transports::{RpcError, TransportError},
};

use agentpact_contracts::Contracts;

/// Logs per request we aim at: a range returning under half of it doubles, one returning over
/// twice it shrinks. 10,000 keeps a backfill's peak under 150 MB (BENCHMARKS.md: a range in
/// flight costs ~2-3 KB a log while its answer is parsed) while a dense chain's ranges still span
/// several blocks, so a pact's steps in them fold into one row change.
const TARGET_LOGS: usize = 10_000;

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
            // At least halved, and to the size that would have held about the target.
            let scaled = (TARGET_LOGS as u64).saturating_mul(self.blocks) / logs as u64;
            self.blocks = scaled.min(self.blocks / 2).max(1);
        }
    }

    /// The RPC refused the range as too large: halve it, and for a refusal of too many blocks
    /// (or one whose reason is unknown) never grow back past the limit the endpoint named, or
    /// else half of what it refused — so one refusal teaches the endpoint's limit for good.
    /// False when the range is one block already.
    pub fn refused(&mut self, why: Option<Refusal>) -> bool {
        if self.blocks == 1 {
            return false;
        }
        let half = self.blocks / 2;
        if why != Some(Refusal::TooManyLogs) {
            let limit = match why {
                Some(Refusal::TooManyBlocks { limit: Some(l) }) if l < self.blocks => l,
                _ => half,
            };
            self.max = self.max.min(limit).max(1);
        }
        self.blocks = half.min(self.max).max(1);
        true
    }

    /// The most blocks a range will span.
    pub const fn max(&self) -> u64 {
        self.max
    }

    /// Blocks in the next range.
    pub const fn blocks(&self) -> u64 {
        self.blocks
    }
}

/// The addresses whose logs a range ending at block `to` is read for: before `deployment_block`
/// only the ERC-8004 registries' (read from an earlier block when `ERC8004_START_BLOCK` says so;
/// the escrow's contracts did not exist), from it on every contract's. A range never spans the
/// deployment block ([`within_phase`]).
pub fn addresses(contracts: &Contracts, deployment_block: u64, to: u64) -> Vec<Address> {
    match contracts.erc8004 {
        Some(registries) if to < deployment_block => vec![registries.identity, registries.reputation],
        _ => contracts.addresses(),
    }
}

/// `end`, or the block before `deployment_block` when a range from `from` would otherwise span
/// it: the blocks before the deployment are read for other addresses than the blocks from it.
pub fn within_phase(from: u64, end: u64, deployment_block: u64) -> u64 {
    if from < deployment_block { end.min(deployment_block - 1) } else { end }
}

/// The logs of `addresses` in blocks `from..=to`.
pub async fn logs<P: Provider>(
    provider: &P,
    addresses: Vec<Address>,
    from: u64,
    to: u64,
) -> Result<Vec<Log>, TransportError> {
    let filter = Filter::new()
        .address(addresses)
        .event_signature(crate::decode::selectors())
        .from_block(from)
        .to_block(to);
    provider.get_logs(&filter).await
}

/// Why an RPC refused an `eth_getLogs` range, in the words of the providers and node clients
/// (docs/indexer.md §Endpoints lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The answer would hold too many logs or bytes ("query returned more than 10000 results",
    /// "Log response size exceeded"): a denser stretch of chain; a smaller range passes.
    TooManyLogs,
    /// The range spans more blocks than the endpoint serves ("query exceeds max block range 500",
    /// "eth_getLogs is limited to a 10,000 range", "range 640 exceeds limit of 500"), with the
    /// limit when the message names one.
    TooManyBlocks {
        /// The most blocks the endpoint says it serves.
        limit: Option<u64>,
    },
}

/// Codes providers refuse a log range with whatever the wording: -32614 ("limit exceeded").
const RANGE_CODES: [i64; 1] = [-32_614];

/// How messages about too many logs or bytes read (lower case).
const TOO_MANY_LOGS: [&str; 7] = [
    "more than",
    "results",
    "response size",
    "size exceeded",
    "too many logs",
    "response is too big",
    "bytes",
];

/// How messages about too many blocks read (lower case).
const TOO_MANY_BLOCKS: [&str; 12] = [
    "block range",
    "range too large",
    "range is too large",
    "range too wide",
    "range is too wide",
    "limited to",
    "exceeds limit",
    "exceed maximum",
    "exceeds max",
    "exceeds the limit",
    "too many blocks",
    "max is",
];

/// Whether (and why) `error` is an RPC refusing an `eth_getLogs` range as too large. A rate
/// limit ("too many requests", "rate limit") is none: the transport waits it out.
pub fn refusal(error: &TransportError) -> Option<Refusal> {
    let RpcError::ErrorResp(payload) = error else { return None };
    let message = payload.message.to_lowercase();
    if crate::transport::says_rate_limit(&message) {
        return None;
    }
    if TOO_MANY_LOGS.iter().any(|hint| message.contains(hint)) {
        return Some(Refusal::TooManyLogs);
    }
    if TOO_MANY_BLOCKS.iter().any(|hint| message.contains(hint)) || RANGE_CODES.contains(&payload.code) {
        return Some(Refusal::TooManyBlocks { limit: named_limit(&message) });
    }
    None
}

/// The smallest positive number in `message` ("10,000" and "1k" read as 10000 and 1000): the limit
/// a range refusal names, if it names one.
fn named_limit(message: &str) -> Option<u64> {
    let ungrouped = message.replace(',', "");
    ungrouped
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|word| match word.strip_suffix('k') {
            Some(thousands) => thousands.parse::<u64>().ok().map(|n| n.saturating_mul(1_000)),
            None => word.parse().ok(),
        })
        .filter(|n| *n > 0)
        .min()
}

#[cfg(test)]
mod tests {
    use agentpact_contracts::{Contracts, Erc8004};
    use alloy::primitives::Address;

    use super::{RangeSize, TARGET_LOGS, addresses, within_phase};

    #[test]
    fn blocks_before_the_deployment_are_read_for_the_registries_only() {
        let registries = Erc8004 { identity: Address::repeat_byte(4), reputation: Address::repeat_byte(5) };
        let contracts = Contracts {
            agent_pact: Address::repeat_byte(1),
            oracle_registry: Address::repeat_byte(2),
            agent_registry: Address::repeat_byte(3),
            erc8004: Some(registries),
        };
        assert_eq!(addresses(&contracts, 100, 99), vec![registries.identity, registries.reputation]);
        assert_eq!(addresses(&contracts, 100, 100), contracts.addresses(), "from the deployment on, all");
        let without = Contracts { erc8004: None, ..contracts };
        assert_eq!(addresses(&without, 100, 99), without.addresses(), "never an empty filter (every log)");
        assert_eq!(within_phase(10, 500, 100), 99, "a range before the deployment stops short of it");
        assert_eq!(within_phase(10, 50, 100), 50);
        assert_eq!(within_phase(100, 500, 100), 500, "from the deployment on, as the range says");
        assert_eq!(within_phase(0, 500, 0), 500);
    }

    #[test]
    fn ranges_grow_when_small_and_halve_when_refused() {
        let mut r = RangeSize::new(100, 1_000);
        assert_eq!(r.end(10, 1_000_000), 109);
        assert_eq!(r.end(10, 50), 50, "never past the head");
        r.succeeded(1);
        assert_eq!(r.blocks(), 200);
        r.succeeded(TARGET_LOGS / 2);
        assert_eq!(r.blocks(), 200, "a full range does not grow");
        r.succeeded(TARGET_LOGS * 2 + 2);
        assert_eq!(r.blocks(), 99, "an overfull one shrinks to what would have held the target");
        r.succeeded(TARGET_LOGS * 8);
        assert_eq!(r.blocks(), 12, "at once, however overfull (99 / 8)");
        r.succeeded(TARGET_LOGS * 2 + 2);
        assert_eq!(r.blocks(), 5, "at least halved");
        let mut single = RangeSize::new(1, 10);
        single.succeeded(TARGET_LOGS * 100);
        assert_eq!(single.blocks(), 1, "never below one block");
        r.succeeded(1);
        for _ in 0..10 {
            r.succeeded(0);
        }
        assert_eq!(r.blocks(), 1_000, "capped");
        let mut one = RangeSize::new(2, 10);
        assert!(one.refused(Some(super::Refusal::TooManyLogs)));
        assert!(!one.refused(None), "a single block cannot shrink");
    }

    #[test]
    fn a_refusal_of_blocks_teaches_the_limit_and_one_of_logs_does_not() {
        use super::Refusal::{TooManyBlocks, TooManyLogs};
        let mut r = RangeSize::new(640, 50_000);
        assert!(r.refused(Some(TooManyBlocks { limit: Some(500) })));
        assert_eq!((r.blocks(), r.max()), (320, 500), "halved, and never past the named 500 again");
        for _ in 0..5 {
            r.succeeded(0);
        }
        assert_eq!(r.blocks(), 500);
        let mut unknown = RangeSize::new(1_024, 50_000);
        assert!(unknown.refused(None));
        assert_eq!((unknown.blocks(), unknown.max()), (512, 512), "no limit named: half of what was refused");
        let mut dense = RangeSize::new(1_024, 50_000);
        assert!(dense.refused(Some(TooManyLogs)));
        assert_eq!((dense.blocks(), dense.max()), (512, 50_000), "a dense stretch teaches no limit");
    }

    #[test]
    fn the_providers_wordings_are_recognised() {
        use alloy::{rpc::json_rpc::ErrorPayload, transports::RpcError};

        use super::{Refusal::*, refusal};
        let said = |code: i64, message: &str| {
            refusal(&RpcError::ErrorResp(ErrorPayload {
                code,
                message: message.to_owned().into(),
                data: None,
            }))
        };
        let blocks = |limit| Some(TooManyBlocks { limit });
        // Node clients and public endpoints, as their documentation and answers word it.
        assert_eq!(said(-32_005, "query returned more than 10000 results"), Some(TooManyLogs));
        assert_eq!(
            said(
                -32_602,
                "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response."
            ),
            Some(TooManyLogs)
        );
        assert_eq!(said(-32_614, "block range too large"), blocks(None));
        assert_eq!(said(-32_005, "query exceeds max block range 500"), blocks(Some(500)));
        assert_eq!(said(-32_614, "eth_getLogs is limited to a 500 range"), blocks(Some(500)));
        assert_eq!(said(-32_602, "range 640 exceeds limit of 500"), blocks(Some(500)));
        assert_eq!(
            said(-32_000, "eth_getLogs and eth_newFilter are limited to a 10,000 blocks range"),
            blocks(Some(10_000))
        );
        assert_eq!(said(-32_000, "exceed maximum block range: 5000"), blocks(Some(5_000)));
        assert_eq!(said(-32_600, "eth_getLogs range is too large, max is 1k blocks"), blocks(Some(1_000)));
        assert_eq!(said(-32_000, "Block range is too wide"), blocks(None));
        assert_eq!(said(-32_614, "something else entirely"), blocks(None), "the code alone");
        // Rate limits are not range refusals, nor are other errors.
        assert_eq!(said(-32_005, "Too many requests, exceeded limit of 10 per second"), None);
        assert_eq!(said(429, "rate limit exceeded"), None);
        assert_eq!(said(-32_602, "invalid params"), None);
    }
}
