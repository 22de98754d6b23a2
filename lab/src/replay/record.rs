//! Reading a node's whole chain once: each block's header as the node sent it (JSON) and every log,
//! block by block, so the replay answers what the node answered.

use alloy::{
    primitives::B256,
    providers::Provider,
    rpc::types::{Filter, Header, Log},
};
use anyhow::{Context as _, bail};
use serde_json::Value;

/// Every header and log of a chain, as its node served them.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The chain's id.
    pub chain_id: u64,
    /// Block `n`'s header and transaction hashes (`eth_getBlockByNumber(n, false)`) at index `n`.
    blocks: Vec<Value>,
    /// The same headers, typed: what a copy's header is made from.
    headers: Vec<Header>,
    /// Block `n`'s logs, in order, at index `n`.
    logs: Vec<Vec<Log>>,
}

impl Recording {
    /// Reads the chain `provider` serves, from genesis to its head, one block at a time (a block of
    /// a generated history holds up to ~10,000 logs; the whole chain in one answer would be
    /// gigabytes). Fails when the node's answers do not hold together — a header that does not
    /// hash to its hash, a parent that is not the previous block, a log of another block: the chain
    /// moved while it was read, or the node serves what it did not make.
    pub async fn read<P: Provider>(provider: &P) -> anyhow::Result<Self> {
        let chain_id = provider.get_chain_id().await.context("eth_chainId")?;
        let head = provider.get_block_number().await.context("eth_blockNumber")?;
        let (mut blocks, mut headers, mut logs) = (Vec::new(), Vec::new(), Vec::new());
        for n in 0..=head {
            let block: Value = provider
                .raw_request("eth_getBlockByNumber".into(), (quantity(n), false))
                .await
                .with_context(|| format!("eth_getBlockByNumber({n})"))?;
            let header: Header = serde_json::from_value(block.clone())
                .with_context(|| format!("block {n}'s header does not parse"))?;
            if header.inner.hash_slow() != header.hash {
                bail!("block {n}'s header does not hash to its hash {}", header.hash);
            }
            if let Some(parent) = headers.last().map(|h: &Header| h.hash)
                && header.inner.parent_hash != parent
            {
                bail!("block {n}'s parent is not block {}: the chain moved while it was read", n - 1);
            }
            let in_block = provider
                .get_logs(&Filter::new().at_block_hash(header.hash))
                .await
                .with_context(|| format!("eth_getLogs of block {n}"))?;
            if let Some(log) = in_block.iter().find(|l| l.block_number != Some(n)) {
                bail!("the node served a log of block {:?} for block {n}", log.block_number);
            }
            blocks.push(block);
            headers.push(header);
            logs.push(in_block);
        }
        Ok(Self { chain_id, blocks, headers, logs })
    }

    /// The last block recorded.
    pub fn head(&self) -> u64 {
        self.blocks.len().saturating_sub(1) as u64
    }

    /// Block `n`'s header and transaction hashes as the node sent them, when recorded.
    pub fn block(&self, n: u64) -> Option<&Value> {
        self.blocks.get(usize::try_from(n).ok()?)
    }

    /// Block `n`'s header, typed, when recorded.
    pub fn header(&self, n: u64) -> Option<&Header> {
        self.headers.get(usize::try_from(n).ok()?)
    }

    /// The hash of block `n`, when recorded.
    pub fn hash(&self, n: u64) -> Option<B256> {
        self.header(n).map(|h| h.hash)
    }

    /// Block `n`'s logs, in order.
    pub fn logs_of(&self, n: u64) -> &[Log] {
        usize::try_from(n).ok().and_then(|n| self.logs.get(n)).map_or(&[], Vec::as_slice)
    }

    /// How many logs the chain holds.
    pub fn log_count(&self) -> usize {
        self.logs.iter().map(Vec::len).sum()
    }
}

/// `n` as a JSON-RPC quantity.
pub(crate) fn quantity(n: u64) -> String {
    format!("0x{n:x}")
}
