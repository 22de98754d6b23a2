//! What a pact's amounts are counted in: native ETH (the zero address) or an allowed token, with
//! the decimals and symbol the escrow announced for it (`currencies`, from `CurrencyAllowed`).

use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, U256, utils::format_units};

use super::{ReadError, Reader};

/// A currency of the deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Currency {
    /// The token's address; zero for native ETH.
    pub address: Address,
    /// Its symbol ("ETH", "USDC").
    pub symbol: String,
    /// How many decimals its base units have (18 for ETH, 6 for USDC).
    pub decimals: u8,
}

impl Currency {
    /// Native ETH: the zero address, 18 decimals; the escrow always takes it.
    pub fn eth() -> Self {
        Self { address: Address::ZERO, symbol: "ETH".into(), decimals: 18 }
    }

    /// `amount` base units as an exact decimal with every decimal place ("5.000000" for five USDC).
    pub fn format(&self, amount: U256) -> String {
        format_units(amount, self.decimals).unwrap_or_else(|_| amount.to_string())
    }

    /// A row's currency from its address and the announced decimals and symbol joined beside it;
    /// a currency the escrow never announced is a corrupt row naming `column`.
    pub(super) fn of(
        row: &Cells,
        column: &'static str,
        address: &[u8],
        symbol: Option<String>,
        decimals: Option<i16>,
    ) -> Result<Self, ReadError> {
        Ok(Self {
            address: row.address(column, address)?,
            symbol: row.present("currencies.symbol", symbol)?,
            decimals: row.int("currencies.decimals", row.present("currencies.decimals", decimals)?)?,
        })
    }
}

impl Reader {
    /// The currencies pacts on `chain_id` may be paid in, in the order the escrow announced them
    /// (ETH first).
    pub async fn currencies(&self, chain_id: u64) -> Result<Vec<Currency>, ReadError> {
        let rows = sqlx::query!(
            "SELECT address, symbol, decimals FROM currencies WHERE chain_id = $1 ORDER BY block_number, address",
            i64_of(chain_id)
        )
        .fetch_all(self.pool())
        .await?;
        let cells = Cells { table: "currencies", key: format!("chain {chain_id}") };
        rows.into_iter()
            .map(|c| Currency::of(&cells, "address", &c.address, Some(c.symbol), Some(c.decimals)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_exact_with_every_decimal_place() {
        let usdc = Currency { address: Address::repeat_byte(1), symbol: "USDC".into(), decimals: 6 };
        assert_eq!(usdc.format(U256::from(5_000_000u64)), "5.000000");
        assert_eq!(usdc.format(U256::from(5_500_007u64)), "5.500007");
        assert_eq!(usdc.format(U256::from(1u8)), "0.000001");
        let eth = Currency::eth();
        assert_eq!(eth.format(U256::from(10u64).pow(U256::from(18u8))), "1.000000000000000000");
        assert_eq!(eth.format(U256::MAX).len(), 79, "the largest uint256 keeps every digit");
    }
}
