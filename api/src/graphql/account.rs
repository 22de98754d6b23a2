//! An address's money in the escrow: credits per currency (paid out by its pacts, withdrawn,
//! still owed) and its withdrawals.

use async_graphql::{Context, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    errors::to_graphql,
    meta::{BlockHeight, indexed},
    scalars::{Address, BigInt},
    types::Currency,
};
use crate::read::{self, MAX_PAGE_SIZE, Reader};

/// The account query.
#[derive(Default)]
pub struct AccountQuery;

#[Object]
impl AccountQuery {
    /// What the escrow holds for `address` (nothing yet for an address never paid).
    async fn account(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        address: Address,
    ) -> Result<Account> {
        Ok(Account { chain: indexed(ctx, chain_id, block).await?, address: address.0 })
    }
}

/// What the escrow holds for an address.
pub struct Account {
    chain: u64,
    address: alloy::primitives::Address,
}

/// What the escrow holds for an address: payouts are credits, withdrawn in one call per currency.
#[Object]
impl Account {
    /// The address.
    async fn address(&self) -> Address {
        Address(self.address)
    }
    /// Its credits in each currency it was ever paid in (ETH first).
    async fn balances(&self, ctx: &Context<'_>) -> Result<Vec<Balance>> {
        let balances = ctx.data::<Reader>()?.balances(self.chain, self.address).await.map_err(to_graphql)?;
        Ok(balances.into_iter().map(Into::into).collect())
    }
    /// Its latest withdrawals, newest first: at most `first` (≤ 100).
    #[graphql(complexity = "first.min(MAX_PAGE_SIZE) as usize * child_complexity + 1")]
    async fn withdrawals(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: u32,
    ) -> Result<Vec<Withdrawal>> {
        let reader = ctx.data::<Reader>()?;
        let list = reader.withdrawals(self.chain, self.address, first).await.map_err(to_graphql)?;
        Ok(list.into_iter().map(Into::into).collect())
    }
}

/// An address's credits in one currency.
#[derive(SimpleObject)]
pub struct Balance {
    /// The currency.
    currency: Currency,
    /// Credited by the payouts of its pacts, in all, in base units.
    credited: BigInt,
    /// The same as an exact decimal.
    credited_formatted: String,
    /// Withdrawn, in all, in base units.
    withdrawn: BigInt,
    /// The same as an exact decimal.
    withdrawn_formatted: String,
    /// Credited and not yet withdrawn (the escrow's `balances` getter), in base units.
    owed: BigInt,
    /// The same as an exact decimal.
    owed_formatted: String,
}

impl From<read::Balance> for Balance {
    fn from(b: read::Balance) -> Self {
        let format = |amount| b.currency.format(amount);
        Self {
            credited_formatted: format(b.credited),
            withdrawn_formatted: format(b.withdrawn),
            owed_formatted: format(b.owed),
            credited: BigInt(b.credited),
            withdrawn: BigInt(b.withdrawn),
            owed: BigInt(b.owed),
            currency: Currency(b.currency),
        }
    }
}

/// One withdrawal of credits.
#[derive(SimpleObject)]
pub struct Withdrawal {
    /// The currency.
    currency: Currency,
    /// How much, in base units.
    amount: BigInt,
    /// The same as an exact decimal.
    amount_formatted: String,
    /// The block that carried it.
    block_number: u64,
    /// When.
    withdrawn_at: DateTime<Utc>,
}

impl From<read::Withdrawal> for Withdrawal {
    fn from(w: read::Withdrawal) -> Self {
        Self {
            amount_formatted: w.currency.format(w.amount),
            amount: BigInt(w.amount),
            block_number: w.block_number,
            withdrawn_at: w.withdrawn_at,
            currency: Currency(w.currency),
        }
    }
}
