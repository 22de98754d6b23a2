//! Money, one way everywhere: the one grammar amounts are read with (MCP tool inputs, the relay's
//! prices, the dashboard's forms in `dashboard/js/format.js`), the one way they are written
//! (`"5.5"`: no trailing zeros, as seeds 000, 002 and 004 show them), the currencies a deployment
//! takes and which one a name means.
//!
//! An amount is ASCII digits with at most one decimal point and at least one digit, blanks (space,
//! tab, CR, LF, form feed) around it ignored: `5`, `0.5`, `.5` and `5.` are amounts; a sign, an
//! exponent, a thousands separator or any other digit is not. Trailing zeros carry no value, so
//! `5.0000000` is 5 USDC, while `5.0000001` is finer than USDC's 6 decimals and refused. The table
//! in `contracts/vectors/amounts.json` ([`AMOUNT_VECTORS`]) holds every reader to this.

use std::fmt;

use alloy::primitives::{Address, U256};

/// The table of amount vectors (input, decimals, then base units and how they are written, or the
/// kind of error) that the Rust readers and the dashboard's are tested against.
pub const AMOUNT_VECTORS: &str = include_str!("../vectors/amounts.json");

/// The most significant digits before the point any amount may have: a `uint256` has 78.
pub const MAX_WHOLE_DIGITS: usize = 78;

/// The most decimal places after trailing zeros any amount may have: a currency's decimals are a
/// `uint8`.
pub const MAX_PLACES: usize = u8::MAX as usize;

/// Text that is not an amount, or an amount a currency cannot hold; the message says what to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Nothing but blanks.
    #[error("the amount is empty: write a number such as 5 or 0.5")]
    Empty,
    /// Not digits with at most one decimal point.
    #[error(
        "{0:?} is not an amount: write digits with at most one decimal point, such as 5 or 0.5 (no sign, exponent or separators)"
    )]
    NotAnAmount(String),
    /// More digits before the point, or places after it, than any currency's base units hold.
    #[error(
        "{0} digits on one side of the point are more than any currency's amounts have: at most 78 before it and 255 after it"
    )]
    TooLong(usize),
    /// More decimal places than the currency has.
    #[error("{amount} has {places} decimal places; {unit} has {decimals}: round the amount")]
    TooPrecise {
        /// The amount, as [`Decimal`] writes it.
        amount: Decimal,
        /// Its decimal places.
        places: usize,
        /// The currency's symbol.
        unit: String,
        /// The currency's decimals.
        decimals: u8,
    },
    /// Base units that do not fit in 256 bits.
    #[error("{amount} {unit} is too large: its base units do not fit in 256 bits")]
    TooLarge {
        /// The amount, as [`Decimal`] writes it.
        amount: Decimal,
        /// The currency's symbol.
        unit: String,
    },
}

/// A non-negative decimal number in its one written form: no leading zeros before the point, no
/// trailing zeros after it, no point when there is no fraction (`"5"`, `"0.5"`, `"5.5"`), so two
/// ways of writing one amount are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The digits before the point, without leading zeros (empty for zero).
    whole: String,
    /// The digits after the point, without trailing zeros.
    fraction: String,
}

impl Decimal {
    /// Reads `text` by the one amount grammar (see the module's documentation).
    pub fn parse(text: &str) -> Result<Self, AmountError> {
        let t = text.trim_ascii();
        if t.is_empty() {
            return Err(AmountError::Empty);
        }
        let (whole, fraction) = t.split_once('.').unwrap_or((t, ""));
        let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || !digits(fraction) || whole.len() + fraction.len() == 0 {
            return Err(AmountError::NotAnAmount(text.to_owned()));
        }
        let whole = whole.trim_start_matches('0');
        let fraction = fraction.trim_end_matches('0');
        if whole.len() > MAX_WHOLE_DIGITS {
            return Err(AmountError::TooLong(whole.len()));
        }
        if fraction.len() > MAX_PLACES {
            return Err(AmountError::TooLong(fraction.len()));
        }
        Ok(Self { whole: whole.to_owned(), fraction: fraction.to_owned() })
    }

    /// `amount` base units of a currency with `decimals` decimals.
    pub fn of_units(amount: U256, decimals: u8) -> Self {
        let digits = amount.to_string();
        let split = digits.len().saturating_sub(usize::from(decimals));
        let (whole, fraction) = digits.split_at(split);
        let fraction = format!("{fraction:0>width$}", width = usize::from(decimals));
        Self {
            whole: whole.trim_start_matches('0').to_owned(),
            fraction: fraction.trim_end_matches('0').to_owned(),
        }
    }

    /// Its decimal places (trailing zeros not counted).
    pub fn places(&self) -> usize {
        self.fraction.len()
    }

    /// It in base units of the currency `unit` with `decimals` decimals: refused when it has more
    /// places than the currency, or its base units do not fit in 256 bits.
    pub fn units(&self, decimals: u8, unit: &str) -> Result<U256, AmountError> {
        let places = self.places();
        if places > usize::from(decimals) {
            return Err(AmountError::TooPrecise {
                amount: self.clone(),
                places,
                unit: unit.to_owned(),
                decimals,
            });
        }
        let too_large = || AmountError::TooLarge { amount: self.clone(), unit: unit.to_owned() };
        let padding = std::iter::repeat_n(b'0', usize::from(decimals) - places);
        let ten = U256::from(10u8);
        self.whole.bytes().chain(self.fraction.bytes()).chain(padding).try_fold(U256::ZERO, |n, digit| {
            n.checked_mul(ten).and_then(|n| n.checked_add(U256::from(digit - b'0'))).ok_or_else(too_large)
        })
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = if self.whole.is_empty() { "0" } else { &self.whole };
        if self.fraction.is_empty() { f.write_str(whole) } else { write!(f, "{whole}.{}", self.fraction) }
    }
}

/// `text` in base units of the currency `unit` with `decimals` decimals, read by the one grammar.
pub fn parse(text: &str, decimals: u8, unit: &str) -> Result<U256, AmountError> {
    Decimal::parse(text)?.units(decimals, unit)
}

/// `amount` base units of a currency with `decimals` decimals, written the one way: `5500000`, 6
/// → `"5.5"`; `5000000`, 6 → `"5"`.
pub fn format(amount: U256, decimals: u8) -> String {
    Decimal::of_units(amount, decimals).to_string()
}

/// A currency a deployment takes: native ETH (the zero address) or a token, with the symbol and
/// decimals the escrow announced for it.
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

    /// `text` in base units of this currency.
    pub fn parse(&self, text: &str) -> Result<U256, AmountError> {
        parse(text, self.decimals, &self.symbol)
    }

    /// `amount` base units of this currency as a decimal: `"5.5"`.
    pub fn format(&self, amount: U256) -> String {
        format(amount, self.decimals)
    }

    /// `amount` base units of this currency as a person reads them: `"5.5 USDC"`.
    pub fn show(&self, amount: U256) -> String {
        format!("{} {}", self.format(amount), self.symbol)
    }
}

/// A name that means no currency of the deployment, or more than one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CurrencyError {
    /// It starts with 0x but is not an address.
    #[error("{0}")]
    Address(String),
    /// No currency the escrow takes has that symbol or address.
    #[error("the escrow does not take {wanted:?}; it takes {takes}")]
    Unknown {
        /// The name given.
        wanted: String,
        /// What it takes, as `SYMBOL (address)`, comma-separated.
        takes: String,
    },
    /// Several currencies the escrow takes share the symbol.
    #[error("the escrow takes {count} currencies called {wanted:?}: name one by its address ({addresses})")]
    Ambiguous {
        /// The symbol given.
        wanted: String,
        /// How many share it.
        count: usize,
        /// Their addresses, comma-separated.
        addresses: String,
    },
}

/// The currency among `known` (as the index has them; ETH is taken also when it is not listed,
/// the contract's rule) that `wanted` names: a symbol in any ASCII case, or an address.
pub fn resolve(known: &[Currency], wanted: &str) -> Result<Currency, CurrencyError> {
    let eth = Currency::eth();
    let mut all: Vec<&Currency> = Vec::with_capacity(known.len() + 1);
    if !known.iter().any(|c| c.address.is_zero()) {
        all.push(&eth);
    }
    all.extend(known);
    let wanted = wanted.trim();
    let by_address = wanted
        .starts_with("0x")
        .then(|| crate::parse::address(wanted))
        .transpose()
        .map_err(CurrencyError::Address)?;
    let named: Vec<&Currency> = all
        .iter()
        .copied()
        .filter(|c| by_address.map_or_else(|| c.symbol.eq_ignore_ascii_case(wanted), |a| c.address == a))
        .collect();
    match named.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(CurrencyError::Unknown {
            wanted: wanted.to_owned(),
            takes: all.iter().map(|c| format!("{} ({})", c.symbol, c.address)).collect::<Vec<_>>().join(", "),
        }),
        many => Err(CurrencyError::Ambiguous {
            wanted: wanted.to_owned(),
            count: many.len(),
            addresses: many.iter().map(|c| c.address.to_string()).collect::<Vec<_>>().join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// The kind of error a vector names.
    fn kind(e: &AmountError) -> &'static str {
        match e {
            AmountError::Empty => "empty",
            AmountError::NotAnAmount(_) => "not_an_amount",
            AmountError::TooLong(_) => "too_long",
            AmountError::TooPrecise { .. } => "too_precise",
            AmountError::TooLarge { .. } => "too_large",
        }
    }

    #[test]
    fn every_vector_reads_and_writes_as_the_table_says() {
        let table: Value = serde_json::from_str(AMOUNT_VECTORS).expect("amounts.json is JSON");
        let vectors = table["vectors"].as_array().expect("a list of vectors");
        assert!(vectors.len() > 30, "the table has its vectors");
        for v in vectors {
            let input = v["input"].as_str().expect("input");
            let decimals = v["decimals"].as_u64().and_then(|d| u8::try_from(d).ok()).expect("decimals");
            let read = parse(input, decimals, "TOKEN");
            match (v["units"].as_str(), v["error"].as_str()) {
                (Some(units), None) => {
                    let units: U256 = units.parse().expect("units");
                    assert_eq!(read, Ok(units), "{v}");
                    assert_eq!(format(units, decimals), v["shown"].as_str().expect("shown"), "{v}");
                    assert_eq!(
                        parse(&format(units, decimals), decimals, "TOKEN"),
                        Ok(units),
                        "{v}: round trip"
                    );
                }
                (None, Some(error)) => assert_eq!(read.map_err(|e| kind(&e)), Err(error), "{v}"),
                _ => panic!("a vector has units or an error: {v}"),
            }
        }
    }

    #[test]
    fn the_sentences_say_what_to_write() {
        assert_eq!(
            parse("5.0000001", 6, "USDC").expect_err("7 places").to_string(),
            "5.0000001 has 7 decimal places; USDC has 6: round the amount"
        );
        assert_eq!(
            parse("1", 78, "BIG").expect_err("10^78").to_string(),
            "1 BIG is too large: its base units do not fit in 256 bits"
        );
        assert!(
            parse("1e3", 18, "ETH")
                .expect_err("exponent")
                .to_string()
                .starts_with("\"1e3\" is not an amount")
        );
        assert_eq!(Currency::eth().show(U256::from(550_000_000_000_000_000u64)), "0.55 ETH");
        assert_eq!(Decimal::parse(" 005.500 ").map(|d| d.to_string()), Ok("5.5".to_owned()));
        assert_eq!(Decimal::parse(".5"), Decimal::parse("0.50"));
    }

    #[test]
    fn a_name_means_one_currency_or_says_why_not() {
        let usdc = Currency { address: Address::repeat_byte(1), symbol: "USDC".into(), decimals: 6 };
        let known = vec![Currency::eth(), usdc.clone()];
        assert_eq!(resolve(&known, "usdc"), Ok(usdc.clone()));
        assert_eq!(resolve(&known, &usdc.address.to_string()), Ok(usdc.clone()));
        assert_eq!(
            resolve(std::slice::from_ref(&usdc), "ETH"),
            Ok(Currency::eth()),
            "ETH before the index lists it"
        );
        let unknown = resolve(&known, "DAI").expect_err("DAI").to_string();
        assert!(unknown.starts_with("the escrow does not take \"DAI\"; it takes ETH (0x"), "{unknown}");
        let twin = Currency { address: Address::repeat_byte(2), ..usdc.clone() };
        let ambiguous = resolve(&[usdc, twin], "USDC").expect_err("two USDC").to_string();
        assert!(
            ambiguous.starts_with("the escrow takes 2 currencies called \"USDC\": name one by its address")
        );
        assert!(matches!(resolve(&known, "0x12"), Err(CurrencyError::Address(_))));
        assert!(
            resolve(&known, "ＵＳＤＣ").is_err(),
            "a symbol matches in ASCII case only, as the relay and the MCP server both read it"
        );
    }
}
