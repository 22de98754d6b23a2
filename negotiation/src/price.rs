//! A price as HIRE/1.0 messages name it: an amount and the currency's symbol, `"5 USDC"` or
//! `"0.5 ETH"` (a bare number is ETH, as before currencies). The amount is read by the one amount
//! grammar (`agentpact_contracts::money`), so a price reads as the MCP tools and the dashboard
//! read an amount. The relay compares prices in their canonical form; only signing a pact turns
//! one into base units, with the decimals of the currency the escrow takes under that symbol.

use std::fmt;

use agentpact_contracts::money::{AmountError, Decimal};
use alloy::primitives::U256;

/// The longest currency symbol accepted (ERC-20 symbols are short: "USDC", "cbBTC").
pub const MAX_SYMBOL: usize = 11;

/// What writing a price asks for, said after each refusal.
const EXAMPLE: &str = "write e.g. \"5 USDC\" or \"0.5 ETH\"";

/// Text that is not a price; the message says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    /// What follows the amount is not a currency symbol (a letter, then at most
    /// [`MAX_SYMBOL`] letters and digits in all).
    #[error("{text:?} does not name a currency symbol after its number: {EXAMPLE}")]
    Symbol {
        /// The price as given.
        text: String,
    },
    /// The number is not an amount by the one grammar.
    #[error("{0}; {EXAMPLE}")]
    Amount(AmountError),
}

/// A price: a non-negative decimal in a named currency, canonical (the amount as
/// [`Decimal`] writes it, the symbol in capitals), so two ways of writing one price are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Price {
    amount: Decimal,
    currency: String,
}

impl Price {
    /// Reads `"5 USDC"`, `"0.50 eth"`, `".5 USDC"` or `"5"` (ETH).
    pub fn parse(text: &str) -> Result<Self, PriceError> {
        let t = text.trim_ascii();
        let (number, symbol) = match t.split_once(' ') {
            Some((n, s)) => (n, s.trim_ascii()),
            None => (t, "ETH"),
        };
        let symbol_ok = symbol.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && symbol.len() <= MAX_SYMBOL
            && symbol.bytes().all(|b| b.is_ascii_alphanumeric());
        if !symbol_ok {
            return Err(PriceError::Symbol { text: text.to_owned() });
        }
        let amount = Decimal::parse(number).map_err(PriceError::Amount)?;
        Ok(Self { amount, currency: symbol.to_ascii_uppercase() })
    }

    /// The amount, canonical: `"5"`, `"0.5"` when written.
    pub fn amount(&self) -> &Decimal {
        &self.amount
    }

    /// The currency's symbol, in capitals: `"USDC"`.
    pub fn currency(&self) -> &str {
        &self.currency
    }

    /// The price in base units of a currency with `decimals` decimals; an error when it has more
    /// decimal places than the currency, or does not fit 256 bits.
    pub fn base_units(&self, decimals: u8) -> Result<U256, AmountError> {
        self.amount.units(decimals, &self.currency)
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount, self.currency)
    }
}

#[cfg(test)]
mod tests {
    use agentpact_contracts::money::{self, AMOUNT_VECTORS};
    use serde_json::Value;

    use super::*;

    fn price(text: &str) -> Price {
        Price::parse(text).expect(text)
    }

    #[test]
    fn prices_are_canonical() {
        assert_eq!(price("5 USDC").to_string(), "5 USDC");
        assert_eq!(price(" 005.500 usdc ").to_string(), "5.5 USDC");
        assert_eq!(price("0.50 eth"), price("0.5 ETH"));
        assert_eq!(price(".5 ETH"), price("0.5 ETH"), "the one grammar takes \".5\"");
        assert_eq!(price("5. USDC"), price("5 USDC"), "and \"5.\"");
        assert_eq!(price("5"), price("5 ETH"), "a bare number is ETH");
        assert_eq!(price("0").to_string(), "0 ETH");
        assert_eq!(price("000.000 USDC").to_string(), "0 USDC");
        assert_ne!(price("5 USDC"), price("5 ETH"));
    }

    #[test]
    fn base_units_use_the_currencys_decimals() {
        assert_eq!(price("5 USDC").base_units(6), Ok(U256::from(5_000_000u64)));
        assert_eq!(price("5.000001 USDC").base_units(6), Ok(U256::from(5_000_001u64)));
        let finer = price("5.0000001 USDC").base_units(6).expect_err("7 places");
        assert_eq!(finer.to_string(), "5.0000001 has 7 decimal places; USDC has 6: round the amount");
        assert_eq!(price("0.5 ETH").base_units(18), Ok(U256::from(500_000_000_000_000_000u64)));
        assert!(price(&format!("{} ETH", "9".repeat(78))).base_units(18).is_err(), "does not fit");
    }

    #[test]
    fn what_is_not_a_price_says_what_to_write() {
        for bad in
            ["five", "5 bananas!", "5 USDC USDC", "-5 USDC", "5,5 USDC", ". USDC", "5 5", "", "1e3 ETH"]
        {
            let why = Price::parse(bad).expect_err(bad).to_string();
            assert!(why.contains("e.g. \"5 USDC\""), "{bad:?}: {why}");
        }
        assert!(Price::parse(&"1".repeat(79)).is_err(), "more digits than a uint256 has");
        assert!(Price::parse("5 ABCDEFGHIJKL").is_err(), "a symbol longer than 11");
    }

    #[test]
    fn every_amount_vector_reads_as_a_price_as_the_one_grammar_reads_it() {
        let table: Value = serde_json::from_str(AMOUNT_VECTORS).expect("amounts.json is JSON");
        for v in table["vectors"].as_array().into_iter().flatten() {
            let input = v["input"].as_str().expect("input");
            let decimals = v["decimals"].as_u64().and_then(|d| u8::try_from(d).ok()).expect("decimals");
            // An amount with a blank inside is a price with a symbol ("5 USDC"), not an amount.
            if input.trim_ascii().contains(' ') {
                continue;
            }
            let mut prices = vec![(input.to_owned(), "ETH")];
            if !input.trim_ascii().is_empty() {
                prices.push((format!("{input} TOKEN"), "TOKEN"));
            }
            for (text, unit) in prices {
                let read = Price::parse(&text).map_err(|e| match e {
                    PriceError::Amount(why) => why,
                    other => panic!("{text:?}: {other}"),
                });
                assert_eq!(
                    read.and_then(|p| p.base_units(decimals)),
                    money::parse(input, decimals, unit),
                    "{text:?} in a currency of {decimals} decimals"
                );
            }
        }
    }
}
