//! What a pact's amounts are counted in: native ETH (the zero address) or an allowed token, with
//! the decimals and symbol the escrow announced for it (`currencies`, from `CurrencyAllowed`).

pub use agentpact_contracts::money::Currency;
use agentpact_schema::{Cells, i64_of};
use sqlx::PgExecutor;

use super::{ReadError, Reader};

/// A row's currency from its address and the announced decimals and symbol joined beside it; a
/// currency the escrow never announced is a corrupt row naming `column`.
pub(super) fn currency_of(
    row: &Cells,
    column: &'static str,
    address: &[u8],
    symbol: Option<String>,
    decimals: Option<i16>,
) -> Result<Currency, ReadError> {
    Ok(Currency {
        address: row.address(column, address)?,
        symbol: row.present("currencies.symbol", symbol)?,
        decimals: row.int("currencies.decimals", row.present("currencies.decimals", decimals)?)?,
    })
}

impl Reader {
    /// The currencies pacts on `chain_id` may be paid in, in the order the escrow announced them
    /// (ETH first).
    pub async fn currencies(&self, chain_id: u64) -> Result<Vec<Currency>, ReadError> {
        currencies_on(self.pool(), chain_id).await
    }
}

/// [`Reader::currencies`] on `db`: the relay reads them inside its own transaction.
pub async fn currencies_on<'e>(db: impl PgExecutor<'e>, chain_id: u64) -> Result<Vec<Currency>, ReadError> {
    let rows = sqlx::query!(
        "SELECT address, symbol, decimals FROM currencies WHERE chain_id = $1 ORDER BY block_number, address",
        i64_of(chain_id)
    )
    .fetch_all(db)
    .await?;
    let cells = Cells { table: "currencies", key: format!("chain {chain_id}") };
    rows.into_iter()
        .map(|c| currency_of(&cells, "address", &c.address, Some(c.symbol), Some(c.decimals)))
        .collect()
}
