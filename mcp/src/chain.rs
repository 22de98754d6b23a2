//! The agent's wallet on the chain: reads through the RPC, and the one path every write takes —
//! spending cap, funds, simulation (a revert decoded by name), send, receipt, then a bounded wait
//! until the indexer has the block, so the answer reads the agent's own write.

use std::{sync::OnceLock, time::Duration};

use agentpact_contracts::{
    AgentPact::AgentPactInstance, AgentRegistry::AgentRegistryInstance,
    OracleRegistry::OracleRegistryInstance,
};
use agentpact_negotiation::RelayClient;
use agentpact_read::{Pact, PactFilter, PactOrder, PageRequest, Reader};
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionReceipt,
    signers::local::PrivateKeySigner,
    transports::{RpcError, TransportErrorKind, http::reqwest::Url},
};
use tokio::sync::Mutex;

use crate::{
    call,
    input::eth,
    outcome::{Missing, ToolError},
    policy::Guard,
    revert,
};

/// Limits on writes.
#[derive(Debug, Clone, Copy)]
pub struct WriteLimits {
    /// No write sends more than this value (wei).
    pub max_value: U256,
    /// No deposit takes more USDC than this, read with 18 decimals (`MAX_VALUE_USDC`).
    pub max_value_usdc: U256,
    /// How long a write follows its transaction for a receipt (past the call's answer, when the
    /// call's own time runs out first).
    pub receipt_timeout: Duration,
    /// How long one tool call may take before it answers (at most 30 s): a transaction not mined
    /// by then is answered as pending.
    pub call_timeout: Duration,
    /// Deposits of more ETH than this (wei) are sent only once the human confirms them.
    pub confirm_above: U256,
    /// Deposits of more USDC than this (read with 18 decimals) are sent only once the human
    /// confirms them.
    pub confirm_above_usdc: U256,
    /// How long to wait for the indexer to reach the write's block.
    pub index_wait: Duration,
}

/// Where the webhook tools store subscriptions (the primary database, which `agentpact push`
/// reads) and the operator's policy they are held to.
#[derive(Debug, Clone)]
pub struct Webhooks {
    /// The primary database.
    pub pool: sqlx::PgPool,
    /// Permitted targets and the cap per owner.
    pub policy: agentpact_push::Policy,
}

/// Whether a transaction moves its call's admitted spend (the wallet policy counts the spend sent
/// with it, and released if it fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moves {
    /// It moves the spend (a deposit, a settlement).
    TheSpend,
    /// It moves nothing of it (a token approval before the deposit).
    Nothing,
}

/// A mined write.
#[derive(Debug, Clone)]
pub struct Mined {
    /// Its receipt.
    pub receipt: TransactionReceipt,
    /// Whether the index had the block before the wait ran out.
    pub indexed: bool,
}

/// The agent's wallet, contracts and index.
pub struct Chain {
    /// Signs as the agent.
    pub provider: DynProvider,
    /// AgentPact.
    pub pact: AgentPactInstance<DynProvider>,
    /// OracleRegistry.
    pub registry: OracleRegistryInstance<DynProvider>,
    /// AgentRegistry.
    pub agents: AgentRegistryInstance<DynProvider>,
    /// The chain's ERC-8004 registries, when configured (`ERC8004_IDENTITY_ADDRESS`,
    /// `ERC8004_REPUTATION_ADDRESS`, the deployments file, or the chain's known singletons).
    pub erc8004: Option<agentpact_contracts::Erc8004>,
    /// The agent's address.
    pub me: Address,
    /// The chain id.
    pub chain_id: u64,
    /// The index.
    pub reader: Reader,
    /// Signs negotiation messages (EIP-712) as the agent; never printed.
    signer: PrivateKeySigner,
    /// The negotiation relay (the api server's `/hire` endpoints), when configured.
    relay: OnceLock<RelayClient>,
    /// Where webhook subscriptions are stored and the policy they are held to, when configured.
    webhooks: OnceLock<Webhooks>,
    /// The wallet policy, kill switch and ledger (docs/mcp.md §Policy), when configured.
    guard: OnceLock<Guard>,
    limits: WriteLimits,
    /// One write at a time from this key: nonces never collide or skip.
    sending: Mutex<()>,
}

impl Chain {
    /// The agent `me` on `chain_id`, signing through `provider`.
    pub fn new(
        provider: DynProvider,
        contracts: agentpact_contracts::Contracts,
        signer: PrivateKeySigner,
        chain_id: u64,
        reader: Reader,
        limits: WriteLimits,
    ) -> Self {
        let me = signer.address();
        let pact = AgentPactInstance::new(contracts.agent_pact, provider.clone());
        let registry = OracleRegistryInstance::new(contracts.oracle_registry, provider.clone());
        let agents = AgentRegistryInstance::new(contracts.agent_registry, provider.clone());
        Self {
            provider,
            pact,
            registry,
            agents,
            erc8004: contracts.erc8004,
            me,
            chain_id,
            reader,
            signer,
            relay: OnceLock::new(),
            webhooks: OnceLock::new(),
            guard: OnceLock::new(),
            limits,
            sending: Mutex::new(()),
        }
    }

    /// This wallet's pacts in any role, newest first: at most `first`, and whether more follow.
    pub async fn my_pacts(&self, first: u32) -> Result<(Vec<Pact>, bool), ToolError> {
        let filter = PactFilter { party: Some(self.me), ..PactFilter::default() };
        let page = PageRequest { first: Some(first), ..PageRequest::default() };
        let found = self.reader.pacts(self.chain_id, &filter, PactOrder::default(), &page).await?;
        Ok((found.items.into_iter().map(|(_, p)| p).collect(), found.has_next_page))
    }

    /// The relay's tables, read over the index's pool (they share its database): the read layer
    /// depends on no crate that writes, so the relay's store is built here.
    pub fn negotiations(&self) -> agentpact_negotiation::Store {
        agentpact_negotiation::Store::new(self.reader.pool().clone())
    }

    /// Points the negotiation tools at the relay at `url` (the api server's base URL); once.
    pub fn set_relay(&self, url: Url) {
        let _ = self.relay.set(RelayClient::new(url));
    }

    /// The relay, or why negotiation is unavailable.
    pub fn relay(&self) -> Result<&RelayClient, ToolError> {
        self.relay.get().ok_or(ToolError::NotConfigured(Missing::Relay))
    }

    /// Lets the webhook tools store subscriptions in `webhooks.pool` under `webhooks.policy`; once.
    pub fn set_webhooks(&self, webhooks: Webhooks) {
        let _ = self.webhooks.set(webhooks);
    }

    /// Where webhook subscriptions go, or why the webhook tools are unavailable.
    pub fn webhooks(&self) -> Result<&Webhooks, ToolError> {
        self.webhooks.get().ok_or(ToolError::NotConfigured(Missing::Webhooks))
    }

    /// Holds every signature and transaction of this wallet to the policy, kill switch and ledger
    /// kept in `pool` (the primary database); once.
    pub fn set_guard(&self, pool: sqlx::PgPool) {
        let _ = self.guard.set(Guard::new(pool, self.chain_id, self.signer.clone()));
    }

    /// The wallet policy's guard, when configured.
    pub fn guard(&self) -> Option<&Guard> {
        self.guard.get()
    }

    /// Makes a signature (a negotiation message, a webhook request) with `sign`, unless the human
    /// froze the wallet or its policy expired.
    async fn signing<T>(&self, sign: impl FnOnce() -> Result<T, ToolError>) -> Result<T, ToolError> {
        match self.guard() {
            Some(guard) => {
                let current = call::Call::current();
                guard.sign_with(current.as_ref().map_or("(no call)", call::Call::tool), sign).await
            }
            None => sign(),
        }
    }

    /// Releases the spend the policy admitted for the current call if the call never sent it
    /// (a refusal after the admission, a simulation that failed): it stops counting.
    pub async fn release_unsent(&self) {
        if let (Some(guard), Some(admitted)) =
            (self.guard(), call::Call::current().as_ref().and_then(call::Call::admitted))
        {
            guard.release_unsent(&admitted).await;
        }
    }

    /// The agent's EIP-191 signature of `text` (a webhook subscription or cancellation), unless
    /// the human froze the wallet or its policy expired.
    pub async fn sign_text(&self, text: &str) -> Result<alloy::primitives::Signature, ToolError> {
        use alloy::signers::SignerSync;
        self.signing(|| {
            self.signer
                .sign_message_sync(text.as_bytes())
                .map_err(|source| ToolError::Signing { what: "request", source })
        })
        .await
    }

    /// The agent's key, for signatures made here (permits); never printed.
    pub(crate) const fn signer(&self) -> &PrivateKeySigner {
        &self.signer
    }

    /// `envelope` signed by the agent (EIP-712, HIRE/1.0), unless the human froze the wallet or its
    /// policy expired.
    pub async fn sign_envelope(
        &self,
        envelope: agentpact_negotiation::Envelope,
    ) -> Result<agentpact_negotiation::Envelope, ToolError> {
        use alloy::signers::SignerSync;
        self.signing(|| {
            envelope.signed_with(self.chain_id, |hash| {
                self.signer
                    .sign_hash_sync(hash)
                    .map_err(|source| ToolError::Signing { what: "message", source })
            })
        })
        .await
    }

    /// The write limits.
    pub const fn limits(&self) -> WriteLimits {
        self.limits
    }

    /// The agent's balance.
    pub async fn balance(&self) -> Result<U256, ToolError> {
        self.provider.get_balance(self.me).await.map_err(rpc)
    }

    /// The chain's latest block timestamp.
    pub async fn now(&self) -> Result<u64, ToolError> {
        let block = self.provider.get_block_by_number(Default::default()).await.map_err(rpc)?;
        block.map(|b| b.header.timestamp).ok_or(ToolError::NoLatestBlock)
    }

    /// Runs `call` (sending `value` wei) as the agent: checks, simulates, sends, waits.
    pub async fn write<D: CallDecoder>(
        &self,
        call: CallBuilder<&DynProvider, D>,
        value: U256,
    ) -> Result<Mined, ToolError> {
        self.write_as(call, value, Moves::TheSpend).await
    }

    /// Runs `call` as [`Chain::write`] does, as a transaction that `moves` the call's admitted
    /// spend or not (a token approval moves nothing: the deposit after it does).
    pub(crate) async fn write_as<D: CallDecoder>(
        &self,
        call: CallBuilder<&DynProvider, D>,
        value: U256,
        moves: Moves,
    ) -> Result<Mined, ToolError> {
        self.check_eth_cap(value)?;
        let call = call.from(self.me).value(value);
        let balance = self.balance().await?;
        if balance < value {
            return Err(self.insufficient(value, balance));
        }
        if let Err(e) = call.call_raw().await {
            return Err(self.refusal(e, value, balance));
        }
        // The node's estimate plus a margin, as wallets send: an estimate taken while the node is
        // loaded can come out short, and a transaction out of gas still costs its gas.
        let estimate = call.estimate_gas().await.map_err(|e| self.refusal(e, value, balance))?;
        let call = call.gas(with_gas_margin(estimate));
        call::report("simulated: the contract accepts it").await;
        let current = call::Call::current();
        let tool = current.as_ref().map_or("(no call)", call::Call::tool);
        let admitted = current.as_ref().and_then(call::Call::admitted).filter(|_| moves == Moves::TheSpend);
        let pending = {
            let _turn = self.sending.lock().await;
            call::send(async {
                let broadcast = async {
                    let pending = call.send().await.map_err(|e| self.refusal(e, value, balance))?;
                    let tx = *pending.tx_hash();
                    Ok((pending, tx))
                };
                match self.guard() {
                    Some(guard) => guard.send(tool, admitted.as_ref(), broadcast).await,
                    None => broadcast.await,
                }
            })
            .await?
        };
        let tx = *pending.tx_hash();
        call::report(format!("sent: transaction {tx}, waiting for it to be mined")).await;
        let receipt =
            pending.with_timeout(Some(self.limits.receipt_timeout)).get_receipt().await.map_err(|e| {
                use alloy::providers::PendingTransactionError as Pending;
                match e {
                    Pending::TxWatcher(_) => ToolError::Pending {
                        tx: tx.to_string(),
                        seconds: self.limits.receipt_timeout.as_secs(),
                    },
                    // The node stopped answering after the transaction was sent, or the watch failed:
                    // it may still be mined.
                    source => {
                        tracing::warn!(%tx, error = %source, "could not watch for the receipt");
                        ToolError::ReceiptLost { tx, source: Box::new(source) }
                    }
                }
            })?;
        if let Some(guard) = self.guard() {
            let failed = (!receipt.status()).then_some("mined reverted");
            guard.mined(tool, admitted.as_ref(), tx, failed).await;
        }
        if !receipt.status() {
            return Err(ToolError::MinedReverted { tx });
        }
        let block = receipt.block_number.map_or_else(String::new, |b| format!(" in block {b}"));
        call::report(format!("mined{block}: transaction {tx}")).await;
        // A receipt must say its block; without one the write is mined but cannot be said to be
        // indexed (waiting for block 0 would call any index caught up).
        let indexed = match receipt.block_number {
            Some(block) => self.wait_for_index(block).await,
            None => {
                tracing::warn!(%tx, "the node's receipt names no block; not waiting for the index");
                false
            }
        };
        call::report(if indexed { "indexed" } else { "mined; the index has not caught up yet" }).await;
        Ok(Mined { receipt, indexed })
    }

    /// Refuses sending more ETH than the spending cap, `MAX_VALUE_ETH`.
    pub(crate) fn check_eth_cap(&self, value: U256) -> Result<(), ToolError> {
        if value > self.limits.max_value {
            return Err(ToolError::OverCap {
                value: format!("{} ETH", eth(value)),
                cap: format!("{} ETH", eth(self.limits.max_value)),
                setting: "MAX_VALUE_ETH",
            });
        }
        Ok(())
    }

    /// Waits (bounded) until the index holds `block`; a failed read is logged and counts as not yet.
    async fn wait_for_index(&self, block: u64) -> bool {
        let poll = Duration::from_millis(25);
        match self.reader.wait_until_indexed(self.chain_id, block, self.limits.index_wait, poll).await {
            Ok(indexed) => indexed,
            Err(e) => {
                tracing::warn!(error = %e, block, "could not read the indexer's progress");
                false
            }
        }
    }

    fn insufficient(&self, need: U256, have: U256) -> ToolError {
        ToolError::InsufficientFunds {
            need: format!("{} ETH", eth(need)),
            have: format!("{} ETH", eth(have)),
            address: self.me.to_checksum(None),
        }
    }

    /// What a failed simulation or send means for the agent.
    fn refusal(&self, e: alloy::contract::Error, value: U256, balance: U256) -> ToolError {
        if let Some(data) = e.as_revert_data()
            && let Some(r) = revert::decode(&data)
        {
            return ToolError::Reverted(r);
        }
        let text = e.to_string();
        if text.contains("insufficient funds") || text.contains("Insufficient funds") {
            return self.insufficient(value, balance);
        }
        match e {
            alloy::contract::Error::TransportError(t) => rpc(t),
            other => ToolError::Unprepared(Box::new(other)),
        }
    }
}

/// What a failed read of a contract (of `what`, said only when needed) means for the agent: the
/// contract's refusal, the RPC's failure, or another failure of the read.
pub fn read_failed(e: alloy::contract::Error, what: impl FnOnce() -> String) -> ToolError {
    if let Some(r) = e.as_revert_data().and_then(|data| revert::decode(&data)) {
        return ToolError::Reverted(r);
    }
    match e {
        alloy::contract::Error::TransportError(t) => rpc(t),
        source => ToolError::ReadFailed { what: what(), source: Box::new(source) },
    }
}

/// An RPC failure: unreachable, or an error the node returned.
pub fn rpc(e: RpcError<TransportErrorKind>) -> ToolError {
    match e {
        RpcError::Transport(kind) => ToolError::RpcDown(kind),
        other => ToolError::RpcAnswer(Box::new(other)),
    }
}

/// How much gas a write offers above the node's estimate, in percent.
pub const GAS_MARGIN_PERCENT: u64 = 25;

/// `estimate` plus [`GAS_MARGIN_PERCENT`].
pub const fn with_gas_margin(estimate: u64) -> u64 {
    estimate.saturating_add(estimate.saturating_mul(GAS_MARGIN_PERCENT) / 100)
}
