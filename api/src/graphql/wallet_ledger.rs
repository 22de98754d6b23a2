//! The wallet ledger of an agent's MCP server (docs/mcp.md §Policy) for the operator: every
//! attempt the server decided for a wallet — allowed, held, refused, sent, mined, failed — as
//! stored, hash-chained and signed. Only a request carrying the operator's token reads it.

use agentpact_read::wallet_ledger::{self, From};
use async_graphql::{Context, Object, Result, SimpleObject};

use super::{
    chain_of,
    errors::{Code, to_graphql},
    scalars::{Address, Bytes32},
    webhooks::operator,
};

/// The most entries one request returns.
const MAX_ENTRIES: u32 = 100;

/// One ledger entry.
#[derive(SimpleObject)]
pub struct WalletLedgerEntry {
    /// Its position in the wallet's chain, from 1.
    seq: i64,
    /// The entry exactly as hashed: a compact JSON text (seq, prev, at, chain_id, wallet, event,
    /// tool, amount, currency, counterparty, rule, reason, tx, policy).
    body: String,
    /// keccak256 of `body`.
    hash: Bytes32,
    /// The wallet's EIP-191 signature of "AgentPact wallet ledger entry <hash>", hex.
    signature: String,
}

/// The operator's read of wallet ledgers.
#[derive(Default)]
pub struct WalletLedgerQuery;

#[Object]
impl WalletLedgerQuery {
    /// The ledger of `wallet`, oldest first, at most `first` (≤ 100; absent: 100) entries after
    /// entry `after` (absent or 0: from the first). Operator only.
    async fn wallet_ledger(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        wallet: Address,
        first: Option<u32>,
        after: Option<i64>,
    ) -> Result<Vec<WalletLedgerEntry>> {
        let (first, after) = (first.unwrap_or(MAX_ENTRIES), after.unwrap_or(0));
        let chain = chain_of(ctx, chain_id)?;
        let access =
            operator(ctx, "wallet ledgers are the operator's (and the human's: agentpact wallet ledger)")?;
        if first > MAX_ENTRIES || after < 0 {
            return Err(Code::BadArgument.error(format!(
                "first is at most {MAX_ENTRIES} and after at least 0: page with after = the last seq you have"
            )));
        }
        let from = From::Entry(after.saturating_add(1));
        let entries = wallet_ledger::entries(&access.pool, chain, wallet.0, from, i64::from(first))
            .await
            .map_err(to_graphql)?;
        Ok(entries
            .into_iter()
            .map(|e| WalletLedgerEntry {
                seq: e.seq,
                body: e.body,
                hash: Bytes32(e.hash),
                signature: format!("0x{}", alloy::hex::encode(&e.signature)),
            })
            .collect())
    }
}
