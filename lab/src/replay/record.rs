//! Reading a node's whole chain once: each block's header and every log, kept as the node sent
//! them (JSON), so the replay answers byte for byte what the node answered.

use std::collections::HashMap;

use alloy::{primitives::B256, providers::Provider};
use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// Every header and log of a chain, as its node served them.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The chain's id.
    pub chain_id: u64,
    /// Block `n`'s header (`eth_getBlockByNumber(n, false)`) at index `n`.
    blocks: Vec<Value>,
    /// Block numbers by hash.
    by_hash: HashMap<B256, u64>,
    /// Every log, in chain order (block, then index in block).
    logs: Vec<Value>,
    /// Block `n`'s logs are `logs[starts[n]..starts[n + 1]]`.
    starts: Vec<usize>,
}

impl Recording {
    /// Reads the chain `provider` serves, from genesis to its head. Fails when the node's answers
    /// do not hold together (a log naming a block the headers do not have, or another hash for it):
    /// the chain moved while it was read.
    pub async fn read<P: Provider>(provider: &P) -> anyhow::Result<Self> {
        let chain_id = provider.get_chain_id().await.context("eth_chainId")?;
        let head = provider.get_block_number().await.context("eth_blockNumber")?;
        let mut blocks = Vec::new();
        let mut by_hash = HashMap::new();
        for n in 0..=head {
            let block: Value = provider
                .raw_request("eth_getBlockByNumber".into(), (quantity(n), false))
                .await
                .with_context(|| format!("eth_getBlockByNumber({n})"))?;
            by_hash.insert(hash_of(&block, "hash").with_context(|| format!("block {n}"))?, n);
            blocks.push(block);
        }
        let logs: Vec<Value> = provider
            .raw_request("eth_getLogs".into(), [json!({ "fromBlock": "0x0", "toBlock": quantity(head) })])
            .await
            .context("eth_getLogs over the whole chain")?;
        let mut starts = vec![0; blocks.len() + 1];
        for (i, log) in logs.iter().enumerate() {
            let n = number_of(log, "blockNumber").with_context(|| format!("log {i}"))?;
            let Some(block) = blocks.get(n as usize) else {
                bail!("log {i} is in block {n}, past the head {head} read before it: the chain moved");
            };
            if hash_of(log, "blockHash")? != hash_of(block, "hash")? {
                bail!("log {i} names another hash for block {n} than its header: the chain moved");
            }
            if i > 0 && number_of(&logs[i - 1], "blockNumber")? > n {
                bail!("the node served logs out of block order at log {i}");
            }
            starts[n as usize + 1] = i + 1;
        }
        // Blocks without logs start where the previous block ended.
        for n in 1..starts.len() {
            starts[n] = starts[n].max(starts[n - 1]);
        }
        Ok(Self { chain_id, blocks, by_hash, logs, starts })
    }

    /// The last block recorded.
    pub fn head(&self) -> u64 {
        self.blocks.len().saturating_sub(1) as u64
    }

    /// Block `n`'s header, when recorded.
    pub fn block(&self, n: u64) -> Option<&Value> {
        self.blocks.get(usize::try_from(n).ok()?)
    }

    /// The number of the block with `hash`, when recorded.
    pub fn number_of_hash(&self, hash: &B256) -> Option<u64> {
        self.by_hash.get(hash).copied()
    }

    /// Block `n`'s logs, in order.
    pub fn logs_of(&self, n: u64) -> &[Value] {
        match usize::try_from(n) {
            Ok(n) if n + 1 < self.starts.len() => &self.logs[self.starts[n]..self.starts[n + 1]],
            _ => &[],
        }
    }

    /// How many logs the chain holds.
    pub fn log_count(&self) -> usize {
        self.logs.len()
    }
}

/// `n` as a JSON-RPC quantity.
pub(crate) fn quantity(n: u64) -> String {
    format!("0x{n:x}")
}

/// The quantity at `field` of `v`.
fn number_of(v: &Value, field: &str) -> anyhow::Result<u64> {
    let text = v[field].as_str().with_context(|| format!("no {field}"))?;
    u64::from_str_radix(text.trim_start_matches("0x"), 16).with_context(|| format!("{field} {text:?}"))
}

/// The hash at `field` of `v`.
fn hash_of(v: &Value, field: &str) -> anyhow::Result<B256> {
    let text = v[field].as_str().with_context(|| format!("no {field}"))?;
    text.parse().with_context(|| format!("{field} {text:?}"))
}
