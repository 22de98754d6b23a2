//! A recorded history made `copies` times longer without a bigger node (issue #36): copy 0 is the
//! recording itself (every header and log with the fields and values the node sent); copy `k ≥ 1` repeats its *body* — the blocks from the first
//! pact's creation to the head — after copy `k - 1`, renumbered so no two copies share a name:
//!
//! - blocks: body block `b` of copy `k` is block `b + k·L` (`L` the body's length); its header is
//!   the recorded one with that number, the timestamp moved by `k·D` (`D` the body's duration plus
//!   two seconds), the parent the previous block's new hash, and the hash recomputed from it
//!   (keccak of the RLP header, as a node computes it); transaction hashes are `keccak(tx ‖ k)`;
//! - pacts: pact `i` of copy `k` is pact `i + k·P` (`P` the pacts the recording made); in the
//!   creation its spec hash is `keccak(hash ‖ k)`, its spec URI ends `#copy-k`, its deadline and
//!   acceptance cut-off move by `k·D`, as a settlement offer's expiry and each stage's deadline in
//!   a `PactStaged` do;
//! - parties: every buyer, seller and arbitrator of a pact is `keccak("agentpact-replay" ‖ address ‖
//!   k)`'s last 20 bytes in copy `k`, wherever its address stands in a log (a topic or an ABI
//!   word); oracles (a party that is also a registered oracle stays itself), contracts and
//!   currencies are shared by every copy.
//!
//! Every event is one the real contracts emitted; only the numbering is synthetic. What cannot be
//! renumbered safely is refused when the amplification is made, never served: an oracle or agent
//! registration in the body (a second copy would register the same oracle twice), an ERC-8004
//! registry event in the body (its agent ids would repeat), a pact created out of order, a spec URI
//! the copy suffix would take past the escrow's limit.

use std::collections::{HashMap, HashSet};

use agentpact_contracts::{AgentPact, Contracts, Deployment, OracleRegistry};
use agentpact_indexer::{decode::decode, event::Subject};
use alloy::{
    primitives::{Address, B256, Bytes, LogData, U256, keccak256},
    rpc::types::Log,
    sol_types::SolEvent,
};
use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::{Recording, record::quantity};

/// Which recorded block a served block repeats, in which copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// The recorded block.
    pub block: u64,
    /// The copy: 0 is the recording itself.
    pub copy: u64,
}

/// A recording served `copies` times over (see the module's documentation).
#[derive(Debug)]
pub struct Amplified {
    recording: Recording,
    copies: u64,
    /// The body's first block (`F`): the block of the first pact creation.
    body: u64,
    /// Pacts per copy (`P`).
    pacts: u64,
    /// Seconds between a body block and its next copy (`D`).
    span: u64,
    /// The deployment's contracts (their logs are decoded as the indexer decodes them).
    contracts: Contracts,
    /// The pacts' buyers, sellers and arbitrators, each with its name in copies 1, 2, …
    /// (computed once: serving looks every ABI word of every log up here).
    parties: HashMap<Address, Vec<Address>>,
    /// Every served block of the canonical chain, JSON as a node answers it, at index `n`.
    blocks: Vec<Value>,
    /// Their hashes.
    hashes: Vec<B256>,
    by_hash: HashMap<B256, u64>,
}

impl Amplified {
    /// `recording` (made with `deployment`) served `copies` times over; `copies` 1 is the
    /// recording alone. Fails, naming the block and event, on a body it cannot renumber.
    pub fn new(recording: Recording, deployment: &Deployment, copies: u64) -> anyhow::Result<Self> {
        if copies == 0 {
            bail!("amplify: at least one copy (the recording itself)");
        }
        let escrow = deployment.agent_pact;
        let created = AgentPact::PactCreated::SIGNATURE_HASH;
        let body = (0..=recording.head()).find(|&n| {
            recording.logs_of(n).iter().any(|l| l.address() == escrow && l.topic0() == Some(&created))
        });
        let body = match body {
            Some(body) => body,
            None if copies == 1 => recording.head(),
            None => bail!("amplify: the recording holds no pact creation to repeat"),
        };
        let mut amplified = Self {
            copies,
            body,
            pacts: 0,
            span: 0,
            contracts: Contracts::from(deployment),
            parties: HashMap::new(),
            blocks: Vec::new(),
            hashes: Vec::new(),
            by_hash: HashMap::new(),
            recording,
        };
        amplified.learn_body(deployment)?;
        let (first, last) =
            (amplified.timestamp_of(body)?, amplified.timestamp_of(amplified.recording.head())?);
        amplified.span =
            last.checked_sub(first).context("amplify: the head is older than the first pact")? + 2;
        amplified.body_len().checked_mul(copies).context("amplify: too many copies")?;
        for n in 0..=amplified.head() {
            let source = amplified.source(n).context("amplify: a block without a source")?;
            let parent = match n.checked_sub(1) {
                Some(previous) => amplified.hash(previous).context("amplify: blocks out of order")?,
                None => amplified.recording_header(0)?.inner.parent_hash,
            };
            let timestamp = amplified.timestamp(n).context("amplify: a block without a time")?;
            let (block, hash) = amplified.make_block(n, source, parent, timestamp, None)?;
            if source.copy == 0 && Some(hash) != amplified.recording.hash(n) {
                bail!("amplify: block {n} rebuilt hashes to {hash}, not to its recorded hash");
            }
            amplified.by_hash.insert(hash, n);
            amplified.hashes.push(hash);
            amplified.blocks.push(block);
        }
        Ok(amplified)
    }

    /// Counts the pacts, collects the parties and refuses what cannot be repeated.
    /// A recording served once is never renumbered: it may hold anything.
    fn learn_body(&mut self, deployment: &Deployment) -> anyhow::Result<()> {
        if self.copies == 1 {
            return Ok(());
        }
        let (mut oracles, mut parties) = (HashSet::new(), HashSet::new());
        for n in 0..=self.recording.head() {
            for log in self.recording.logs_of(n) {
                let data = &log.inner.data;
                let at = || format!("amplify: block {n}, log {}", log.log_index.unwrap_or_default());
                if log.address() == deployment.oracle_registry {
                    if n >= self.body {
                        bail!("{}: an oracle registry event in the body cannot be repeated", at());
                    }
                    if let Ok(e) = OracleRegistry::OracleRegistered::decode_log_data(data) {
                        oracles.insert(e.oracle);
                    }
                    continue;
                }
                if n < self.body {
                    continue;
                }
                let topic0 = log.topic0().copied().unwrap_or_default();
                if deployment
                    .erc8004
                    .as_ref()
                    .is_some_and(|r| [r.identity, r.reputation].contains(&log.address()))
                {
                    bail!(
                        "{}: an ERC-8004 registry event in the body cannot be repeated (its agent ids)",
                        at()
                    );
                }
                if ![self.contracts.agent_pact, self.contracts.agent_registry].contains(&log.address()) {
                    continue;
                }
                let subject = self.subject(log).with_context(at)?;
                if log.address() == self.contracts.agent_registry {
                    if !matches!(subject, Subject::Pact(_)) {
                        bail!("{}: an agent registry event not about a pact cannot be repeated", at());
                    }
                    continue;
                }
                if topic0 == AgentPact::PactCreated::SIGNATURE_HASH {
                    let e = AgentPact::PactCreated::decode_log_data(data).with_context(at)?;
                    if e.pactId != U256::from(self.pacts) {
                        bail!("{}: pact {} created where pact {} was next", at(), e.pactId, self.pacts);
                    }
                    self.pacts += 1;
                    parties.extend([e.creator, e.counterparty, e.arbitrator]);
                    let longest = e.specUri.len() + format!("#copy-{}", self.copies - 1).len();
                    if longest > agentpact_contracts::rules::MAX_SPEC_URI {
                        bail!(
                            "{}: pact {}'s spec URI would pass the escrow's limit in a copy",
                            at(),
                            e.pactId
                        );
                    }
                } else if topic0 == AgentPact::PactAccepted::SIGNATURE_HASH {
                    let e = AgentPact::PactAccepted::decode_log_data(data).with_context(at)?;
                    parties.extend([e.accepter, e.buyer, e.seller]);
                } else if subject == Subject::None {
                    bail!("{}: escrow event {topic0} is about neither a pact nor an account", at());
                }
            }
        }
        let contracts = [
            self.contracts.agent_pact,
            deployment.oracle_registry,
            self.contracts.agent_registry,
            Address::ZERO,
        ];
        parties.retain(|a| !oracles.contains(a) && !contracts.contains(a));
        self.parties = parties
            .into_iter()
            .map(|party| (party, (1..self.copies).map(|copy| renamed(party, copy)).collect()))
            .collect();
        // Every log of the body renumbers (its events decode), so serving cannot fail later.
        for b in self.body..=self.recording.head() {
            for log in self.recording.logs_of(b) {
                self.renumber(log, 1).with_context(|| format!("amplify: a log of block {b}"))?;
            }
        }
        Ok(())
    }

    /// The last block of the amplified chain.
    pub fn head(&self) -> u64 {
        self.recording.head() + (self.copies - 1) * self.body_len()
    }

    /// Blocks in the body (`L`).
    fn body_len(&self) -> u64 {
        self.recording.head() + 1 - self.body
    }

    /// The chain's id.
    pub fn chain_id(&self) -> u64 {
        self.recording.chain_id
    }

    /// How many copies.
    pub fn copies(&self) -> u64 {
        self.copies
    }

    /// Pacts each copy makes.
    pub fn pacts_per_copy(&self) -> u64 {
        self.pacts
    }

    /// The first block of copy `copy` (`copy ≥ 1`: its first body block).
    pub fn first_block_of(&self, copy: u64) -> u64 {
        if copy == 0 { 0 } else { self.recording.head() + 1 + (copy - 1) * self.body_len() }
    }

    /// What block `n` of the amplified chain repeats, when it exists.
    pub fn source(&self, n: u64) -> Option<Source> {
        let head = self.recording.head();
        if n <= head {
            return Some(Source { block: n, copy: 0 });
        }
        let past = n - head - 1;
        let copy = 1 + past / self.body_len();
        (copy < self.copies).then(|| Source { block: self.body + past % self.body_len(), copy })
    }

    /// How much later copy `copy`'s blocks and pact times are than the recording's, in seconds.
    pub fn seconds_later(&self, copy: u64) -> u64 {
        copy * self.span
    }

    /// `party` as copy `copy` names it: itself in copy 0 or when it is not a pact's party.
    pub fn party(&self, party: Address, copy: u64) -> Address {
        let names = self.parties.get(&party);
        copy.checked_sub(1).and_then(|k| names?.get(usize::try_from(k).ok()?)).copied().unwrap_or(party)
    }

    /// Block `n` of the canonical chain as a node answers it, when it exists.
    pub fn block(&self, n: u64) -> Option<&Value> {
        self.blocks.get(usize::try_from(n).ok()?)
    }

    /// The hash of block `n` of the canonical chain.
    pub fn hash(&self, n: u64) -> Option<B256> {
        self.hashes.get(usize::try_from(n).ok()?).copied()
    }

    /// The number of the canonical block with `hash`.
    pub fn number_of_hash(&self, hash: &B256) -> Option<u64> {
        self.by_hash.get(hash).copied()
    }

    /// The timestamp of canonical block `n`.
    pub fn timestamp(&self, n: u64) -> Option<u64> {
        let source = self.source(n)?;
        Some(self.recording.header(source.block)?.inner.timestamp + source.copy * self.span)
    }

    fn timestamp_of(&self, recorded: u64) -> anyhow::Result<u64> {
        Ok(self.recording_header(recorded)?.inner.timestamp)
    }

    fn recording_header(&self, n: u64) -> anyhow::Result<&alloy::rpc::types::Header> {
        self.recording.header(n).with_context(|| format!("amplify: block {n} was not recorded"))
    }

    /// Block `n` made from `source`: the recorded header renumbered, its parent `parent`, its
    /// time `timestamp`, and `salt` (a side branch's) as its extra data; with its new hash.
    pub(crate) fn make_block(
        &self,
        n: u64,
        source: Source,
        parent: B256,
        timestamp: u64,
        salt: Option<u8>,
    ) -> anyhow::Result<(Value, B256)> {
        let recorded = self.recording_header(source.block)?;
        let mut header = recorded.inner.clone();
        header.number = n;
        header.timestamp = timestamp;
        header.parent_hash = parent;
        if let Some(salt) = salt {
            header.extra_data = Bytes::from(vec![salt; 32]);
        }
        let hash = header.hash_slow();
        let mut block = self.recording.block(source.block).cloned().unwrap_or(Value::Null);
        block["number"] = json!(quantity(n));
        block["hash"] = json!(hash);
        block["parentHash"] = json!(parent);
        block["timestamp"] = json!(quantity(timestamp));
        block["extraData"] = json!(header.extra_data);
        if let Some(txs) = block["transactions"].as_array_mut() {
            for tx in txs {
                let recorded: B256 = tx.as_str().and_then(|t| t.parse().ok()).with_context(|| {
                    format!("amplify: block {}'s transaction {tx} is not a hash", source.block)
                })?;
                *tx = json!(transaction(recorded, source.copy));
            }
        }
        Ok((block, hash))
    }

    /// The logs of a block made from `source`, numbered `n`, with `hash` and `timestamp`.
    pub(crate) fn logs(
        &self,
        source: Source,
        n: u64,
        hash: B256,
        timestamp: u64,
    ) -> anyhow::Result<Vec<Log>> {
        self.recording
            .logs_of(source.block)
            .iter()
            .map(|recorded| {
                let mut log = recorded.clone();
                if source.copy > 0 {
                    log.inner.data = self.renumber(recorded, source.copy)?;
                    log.transaction_hash = recorded.transaction_hash.map(|t| transaction(t, source.copy));
                }
                log.block_number = Some(n);
                log.block_hash = Some(hash);
                log.block_timestamp = Some(timestamp);
                Ok(log)
            })
            .collect()
    }

    /// What `log` is about, as the indexer's declaration of its event says: a pact's events name
    /// it by `topic1`, and are renumbered in every copy.
    fn subject(&self, log: &Log) -> anyhow::Result<Subject> {
        Ok(decode(&self.contracts, &log.inner)?.subject())
    }

    /// `log`'s topics and data as copy `copy` emits them.
    fn renumber(&self, log: &Log, copy: u64) -> anyhow::Result<LogData> {
        let data = &log.inner.data;
        let shift = U256::from(copy * self.pacts);
        let later = |t: u64| if t == 0 { 0 } else { t + copy * self.span };
        let topic0 = log.topic0().copied().unwrap_or_default();
        let own =
            log.address() == self.contracts.agent_pact || log.address() == self.contracts.agent_registry;
        let mut renumbered = if own && topic0 == AgentPact::PactCreated::SIGNATURE_HASH {
            let mut e = AgentPact::PactCreated::decode_log_data(data)?;
            e.pactId += shift;
            e.specHash = keccak256([e.specHash.as_slice(), &copy.to_be_bytes()].concat());
            e.specUri = format!("{}#copy-{copy}", e.specUri);
            e.deadline = later(e.deadline);
            e.acceptBy = later(e.acceptBy);
            e.encode_log_data()
        } else if own && topic0 == AgentPact::PactStaged::SIGNATURE_HASH {
            // Each stage is due as late in its copy as its pact is.
            let mut e = AgentPact::PactStaged::decode_log_data(data)?;
            e.pactId += shift;
            for stage in &mut e.stages {
                stage.deadline = later(stage.deadline);
            }
            e.encode_log_data()
        } else if own && topic0 == AgentPact::SettlementProposed::SIGNATURE_HASH {
            let mut e = AgentPact::SettlementProposed::decode_log_data(data)?;
            e.pactId += shift;
            e.expiresAt = later(e.expiresAt);
            e.encode_log_data()
        } else if own && matches!(self.subject(log)?, Subject::Pact(_)) {
            let mut topics = data.topics().to_vec();
            let id = topics.get(1).context("a pact event without its pact id")?;
            topics[1] = B256::from(U256::from_be_bytes(id.0) + shift);
            LogData::new_unchecked(topics, data.data.clone())
        } else {
            data.clone()
        };
        // Parties, wherever they stand: a topic or an ABI word of the data.
        let (mut topics, mut bytes) = (renumbered.topics().to_vec(), renumbered.data.to_vec());
        let words = topics.iter_mut().skip(1).map(|t| t.0.as_mut_slice()).chain(bytes.chunks_exact_mut(32));
        for word in words {
            if word[..12] == [0; 12] {
                let named = self.party(Address::from_slice(&word[12..]), copy);
                word[12..].copy_from_slice(named.as_slice());
            }
        }
        renumbered = LogData::new_unchecked(topics, bytes.into());
        Ok(renumbered)
    }
}

/// Party `party`'s name in copy `copy ≥ 1`.
fn renamed(party: Address, copy: u64) -> Address {
    let seed = [b"agentpact-replay".as_slice(), party.as_slice(), &copy.to_be_bytes()].concat();
    Address::from_slice(&keccak256(seed)[12..])
}

/// Transaction `tx` as copy `copy` names it.
fn transaction(tx: B256, copy: u64) -> B256 {
    if copy == 0 { tx } else { keccak256([tx.as_slice(), &copy.to_be_bytes()].concat()) }
}
