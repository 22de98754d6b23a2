//! What the escrow holds for an address: credited by the payouts of its pacts, taken out by its
//! withdrawals (one call takes all of a currency), and still owed.

use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, U256};
use chrono::{DateTime, Utc};

use super::{Currency, MAX_PAGE_SIZE, ReadError, Reader};

/// An address's credits in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Balance {
    /// The currency.
    pub currency: Currency,
    /// Credited by payouts, in all.
    pub credited: U256,
    /// Withdrawn, in all.
    pub withdrawn: U256,
    /// Credited and not yet withdrawn: what the escrow's `balances` getter says.
    pub owed: U256,
}

/// One withdrawal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withdrawal {
    /// The currency.
    pub currency: Currency,
    /// How much, in its base units.
    pub amount: U256,
    /// The block that carried it.
    pub block_number: u64,
    /// Its time.
    pub withdrawn_at: DateTime<Utc>,
}

impl Reader {
    /// `address`'s credits in each currency it was ever paid in, in the order the escrow
    /// announced the currencies. Withdrawals above the credits are a corrupt index (a negative
    /// `owed` named as such), not a balance.
    pub async fn balances(&self, chain_id: u64, address: Address) -> Result<Vec<Balance>, ReadError> {
        let rows = sqlx::query!(
            r#"WITH moved AS (
                   SELECT currency, amount AS credited, 0::numeric AS withdrawn FROM payouts
                   WHERE chain_id = $1 AND account = $2
                   UNION ALL
                   SELECT currency, 0::numeric, amount FROM withdrawals
                   WHERE chain_id = $1 AND account = $2
               )
               SELECT m.currency AS "currency!", sum(m.credited)::text AS "credited!",
                      sum(m.withdrawn)::text AS "withdrawn!", (sum(m.credited) - sum(m.withdrawn))::text AS "owed!",
                      c.symbol AS "symbol?", c.decimals AS "decimals?"
               FROM moved m LEFT JOIN currencies c ON c.chain_id = $1 AND c.address = m.currency
               GROUP BY m.currency, c.symbol, c.decimals, c.block_number
               ORDER BY c.block_number, m.currency"#,
            i64_of(chain_id),
            address.as_slice(),
        )
        .fetch_all(self.pool())
        .await?;
        let row = Cells { table: "payouts", key: format!("chain {chain_id} {address} balance") };
        rows.into_iter()
            .map(|r| {
                Ok(Balance {
                    currency: super::currencies::currency_of(
                        &row,
                        "currency",
                        &r.currency,
                        r.symbol,
                        r.decimals,
                    )?,
                    credited: row.u256("amount", &r.credited)?,
                    withdrawn: row.u256("withdrawals.amount", &r.withdrawn)?,
                    owed: row.u256("credited - withdrawn", &r.owed)?,
                })
            })
            .collect()
    }

    /// `address`'s latest withdrawals, newest first, at most `first` (≤ [`MAX_PAGE_SIZE`]).
    pub async fn withdrawals(
        &self,
        chain_id: u64,
        address: Address,
        first: u32,
    ) -> Result<Vec<Withdrawal>, ReadError> {
        if first > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: first });
        }
        let rows = sqlx::query!(
            r#"SELECT w.currency, w.amount::text AS "amount!", w.block_number, w.withdrawn_at,
                      c.symbol AS "symbol?", c.decimals AS "decimals?"
               FROM withdrawals w LEFT JOIN currencies c ON c.chain_id = w.chain_id AND c.address = w.currency
               WHERE w.chain_id = $1 AND w.account = $2
               ORDER BY w.block_number DESC, w.log_index DESC LIMIT $3"#,
            i64_of(chain_id),
            address.as_slice(),
            i64::from(first),
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|r| {
                let row = Cells {
                    table: "withdrawals",
                    key: format!("chain {chain_id} {address} block {}", r.block_number),
                };
                Ok(Withdrawal {
                    currency: super::currencies::currency_of(
                        &row,
                        "currency",
                        &r.currency,
                        r.symbol,
                        r.decimals,
                    )?,
                    amount: row.u256("amount", &r.amount)?,
                    block_number: row.int("block_number", r.block_number)?,
                    withdrawn_at: r.withdrawn_at,
                })
            })
            .collect()
    }
}
