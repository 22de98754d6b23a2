//! What the replay serves at a moment: the amplified chain up to a revealed head — a node whose
//! chain grows as a test or benchmark reveals it — and, while a reorg is staged, a side branch in
//! place of its last blocks. The side branch repeats the *next* copy's blocks (other pacts, other
//! parties, every event one the contracts emitted), so what an indexer took from it must be rolled
//! back, not merely overwritten by the same events.

use alloy::{primitives::B256, rpc::types::Log};
use anyhow::{Context as _, bail};
use serde_json::Value;

use super::amplify::{Amplified, Source};

/// The side branch's extra data byte: its blocks hash differently from the canonical ones.
const SIDE_SALT: u8 = 0x5e;

/// The amplified chain as served now.
#[derive(Debug)]
pub(crate) struct Served {
    chain: Amplified,
    /// The last canonical block revealed.
    revealed: u64,
    side: Option<Side>,
}

/// Blocks served in place of canonical blocks `from..from + blocks.len()`.
#[derive(Debug)]
struct Side {
    from: u64,
    blocks: Vec<Value>,
    hashes: Vec<B256>,
    sources: Vec<Source>,
    timestamps: Vec<u64>,
}

impl Side {
    fn last(&self) -> u64 {
        self.from + self.blocks.len() as u64 - 1
    }
}

impl Served {
    /// `chain`, revealed up to `head` (its own head when larger).
    pub(crate) fn new(chain: Amplified, head: u64) -> Self {
        let revealed = head.min(chain.head());
        Self { chain, revealed, side: None }
    }

    /// The chain behind the view.
    pub(crate) fn chain(&self) -> &Amplified {
        &self.chain
    }

    /// The head a node would report now: the side branch's last block while one is staged.
    pub(crate) fn head(&self) -> u64 {
        self.side.as_ref().map_or(self.revealed, Side::last)
    }

    /// Reveals the canonical chain up to `head` (at most its own head); while a side branch is
    /// staged, it takes effect when the branch is settled.
    pub(crate) fn reveal(&mut self, head: u64) {
        self.revealed = head.min(self.chain.head());
    }

    /// Serves a side branch over blocks `from..=to` (each the next copy's block at that place)
    /// until [`Self::settle`]; the head becomes `to`. `from` must be a copy's first block: a branch
    /// starting mid-copy would carry events of pacts created in blocks it does not hold.
    pub(crate) fn fork(&mut self, from: u64, to: u64) -> anyhow::Result<()> {
        if from == 0 || to < from || to > self.chain.head() {
            bail!("replay: a side branch over blocks {from}..={to} of a chain of {}", self.chain.head());
        }
        if !(1..self.chain.copies()).any(|copy| self.chain.first_block_of(copy) == from) {
            bail!("replay: a side branch must start at a copy's first block, not at block {from}");
        }
        let mut side = Side {
            from,
            blocks: Vec::new(),
            hashes: Vec::new(),
            sources: Vec::new(),
            timestamps: Vec::new(),
        };
        let mut parent = self.chain.hash(from - 1).context("replay: no block before the side branch")?;
        for n in from..=to {
            let canonical = self.chain.source(n).context("replay: a block without a source")?;
            if canonical.copy + 1 >= self.chain.copies() || canonical.copy == 0 {
                bail!("replay: a side branch at block {n} needs a copy after the block's own copy");
            }
            let source = Source { block: canonical.block, copy: canonical.copy + 1 };
            let timestamp = self.chain.timestamp(n).context("replay: a block without a time")?;
            let (block, hash) = self.chain.make_block(n, source, parent, timestamp, Some(SIDE_SALT))?;
            side.blocks.push(block);
            side.hashes.push(hash);
            side.sources.push(source);
            side.timestamps.push(timestamp);
            parent = hash;
        }
        self.side = Some(side);
        Ok(())
    }

    /// Drops the side branch: the canonical chain is served again, up to the revealed head or the
    /// branch's last block, whichever is later (a reorg replaces a branch with one as long).
    pub(crate) fn settle(&mut self) {
        if let Some(side) = self.side.take() {
            self.revealed = self.revealed.max(side.last());
        }
    }

    /// Block `n` as a node answers it, when served.
    pub(crate) fn block(&self, n: u64) -> Option<&Value> {
        if n > self.head() {
            return None;
        }
        match &self.side {
            Some(side) if n >= side.from => side.blocks.get((n - side.from) as usize),
            _ => self.chain.block(n),
        }
    }

    /// The number of the served block with `hash`.
    pub(crate) fn number_of_hash(&self, hash: &B256) -> Option<u64> {
        if let Some(side) = &self.side
            && let Some(i) = side.hashes.iter().position(|h| h == hash)
        {
            return Some(side.from + i as u64);
        }
        let n = self.chain.number_of_hash(hash)?;
        let hidden = self.side.as_ref().is_some_and(|side| n >= side.from);
        (n <= self.head() && !hidden).then_some(n)
    }

    /// The logs of served block `n`.
    pub(crate) fn logs(&self, n: u64) -> anyhow::Result<Vec<Log>> {
        if n > self.head() {
            return Ok(Vec::new());
        }
        match &self.side {
            Some(side) if n >= side.from => {
                let i = (n - side.from) as usize;
                self.chain.logs(side.sources[i], n, side.hashes[i], side.timestamps[i])
            }
            _ => {
                let source = self.chain.source(n).context("replay: a block without a source")?;
                let hash = self.chain.hash(n).context("replay: a block without a hash")?;
                let timestamp = self.chain.timestamp(n).context("replay: a block without a time")?;
                self.chain.logs(source, n, hash, timestamp)
            }
        }
    }
}
