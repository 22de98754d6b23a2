//! A price as HIRE/1.0 messages name it: a decimal number and the currency's symbol, `"5 USDC"`
//! or `"0.5 ETH"` (a bare number is ETH, as before currencies). The relay compares prices in this
//! canonical form; only signing a pact turns one into base units, with the decimals of the
//! currency the escrow takes under that symbol.

use std::fmt;

use alloy::primitives::{U256, utils::parse_units};

/// The longest currency symbol accepted (ERC-20 symbols are short: "USDC", "cbBTC").
pub const MAX_SYMBOL: usize = 11;

/// The most digits a price may have: a `uint256` has 78.
const MAX_DIGITS: usize = 78;

/// A price: a non-negative decimal in a named currency, canonical (no leading zeros, no trailing
/// fractional zeros, the symbol in capitals), so two ways of writing one price are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Price {
    amount: String,
    currency: String,
}

impl Price {
    /// Reads `"5 USDC"`, `"0.50 eth"` or `"5"` (ETH); the error says what to write instead.
    pub fn parse(text: &str) -> Result<Self, String> {
        let example = "write e.g. \"5 USDC\" or \"0.5 ETH\"";
        let t = text.trim();
        let (number, symbol) = match t.split_once(' ') {
            Some((n, s)) => (n, s.trim()),
            None => (t, "ETH"),
        };
        let symbol_ok = symbol.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && symbol.len() <= MAX_SYMBOL
            && symbol.bytes().all(|b| b.is_ascii_alphanumeric());
        if !symbol_ok {
            return Err(format!("{text:?} does not name a currency symbol after its number: {example}"));
        }
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty()
            || !digits_ok(whole)
            || !digits_ok(fraction)
            || whole.len() + fraction.len() > MAX_DIGITS
        {
            return Err(format!("{text:?} is not an amount: {example}"));
        }
        let whole = whole.trim_start_matches('0');
        let fraction = fraction.trim_end_matches('0');
        let amount = match (whole.is_empty(), fraction.is_empty()) {
            (true, true) => "0".to_owned(),
            (_, true) => whole.to_owned(),
            (true, false) => format!("0.{fraction}"),
            (false, false) => format!("{whole}.{fraction}"),
        };
        Ok(Self { amount, currency: symbol.to_ascii_uppercase() })
    }

    /// The decimal number, canonical: `"5"`, `"0.5"`.
    pub fn amount(&self) -> &str {
        &self.amount
    }

    /// The currency's symbol, in capitals: `"USDC"`.
    pub fn currency(&self) -> &str {
        &self.currency
    }

    /// The price in base units of a currency with `decimals` decimals; an error when it has more
    /// decimal places than the currency, or does not fit 256 bits.
    pub fn base_units(&self, decimals: u8) -> Result<U256, String> {
        let places = self.amount.split_once('.').map_or(0, |(_, f)| f.len());
        if places > usize::from(decimals) {
            return Err(format!(
                "{self} has {places} decimal places; {} has {decimals}: round the price",
                self.currency
            ));
        }
        parse_units(&self.amount, decimals)
            .map(Into::into)
            .map_err(|_| format!("{self} is too large for a pact"))
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.amount, self.currency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(text: &str) -> Price {
        Price::parse(text).expect(text)
    }

    #[test]
    fn prices_are_canonical() {
        assert_eq!(price("5 USDC").to_string(), "5 USDC");
        assert_eq!(price(" 005.500 usdc ").to_string(), "5.5 USDC");
        assert_eq!(price("0.50 eth"), price("0.5 ETH"));
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
        assert!(finer.contains("7 decimal places; USDC has 6"), "{finer}");
        assert_eq!(price("0.5 ETH").base_units(18), Ok(U256::from(500_000_000_000_000_000u64)));
        assert!(price(&format!("{} ETH", "9".repeat(78))).base_units(18).is_err(), "does not fit");
    }

    #[test]
    fn what_is_not_a_price_says_what_to_write() {
        for bad in
            ["five", "5 bananas!", "5 USDC USDC", "-5 USDC", "5,5 USDC", ".5 USDC", "5 5", "", "1e3 ETH"]
        {
            let why = Price::parse(bad).expect_err(bad);
            assert!(why.contains("e.g. \"5 USDC\""), "{bad:?}: {why}");
        }
        assert!(Price::parse(&"1".repeat(79)).is_err(), "more digits than a uint256 has");
        assert!(Price::parse("5 ABCDEFGHIJKL").is_err(), "a symbol longer than 11");
    }
}
