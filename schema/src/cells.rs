//! From column types to domain types. A writer of ours wrote every value, so a value that does not
//! convert means a corrupt row: reading through [`Cells`] fails with the table, key and column
//! named ([`Corrupt`]), never with a default.

use std::fmt::Display;

use alloy::primitives::{Address, B256, U256};

/// A stored value that cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the index holds an unreadable value in {table} ({key}), column {column}: {value}; re-index this chain"
)]
pub struct Corrupt {
    /// The table.
    pub table: &'static str,
    /// The row's key.
    pub key: String,
    /// The column.
    pub column: &'static str,
    /// What it holds, shortened.
    pub value: String,
}

/// The cells of one row being read, and where they came from, for the error when one does not convert.
pub struct Cells {
    /// The table.
    pub table: &'static str,
    /// The row's key, as a person would name it (`chain 31337 pact 4`).
    pub key: String,
}

impl Cells {
    fn corrupt(&self, column: &'static str, value: impl Display) -> Corrupt {
        let value: String = value.to_string().chars().take(80).collect();
        let error = Corrupt { table: self.table, key: self.key.clone(), column, value };
        tracing::error!(%error, "corrupt row");
        error
    }

    /// 20 bytes to an address.
    pub fn address(&self, column: &'static str, bytes: &[u8]) -> Result<Address, Corrupt> {
        Address::try_from(bytes).map_err(|_| self.corrupt(column, alloy::hex::encode_prefixed(bytes)))
    }

    /// 32 bytes to a hash.
    pub fn hash(&self, column: &'static str, bytes: &[u8]) -> Result<B256, Corrupt> {
        B256::try_from(bytes).map_err(|_| self.corrupt(column, alloy::hex::encode_prefixed(bytes)))
    }

    /// A NUMERIC read as text to a `U256`.
    pub fn u256(&self, column: &'static str, text: &str) -> Result<U256, Corrupt> {
        text.parse().map_err(|_| self.corrupt(column, text))
    }

    /// An integer column to the narrower or unsigned type it holds (`u8`, `u16`, `u64`).
    pub fn int<T: TryFrom<i64>>(&self, column: &'static str, n: impl Into<i64>) -> Result<T, Corrupt> {
        let n: i64 = n.into();
        T::try_from(n).map_err(|_| self.corrupt(column, n))
    }

    /// A text column to the closed set it names, through `parse`.
    pub fn named<T>(
        &self,
        column: &'static str,
        text: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, Corrupt> {
        parse(text).ok_or_else(|| self.corrupt(column, text))
    }

    /// A nullable column that must hold a value in this row (its other columns say so).
    pub fn present<T>(&self, column: &'static str, value: Option<T>) -> Result<T, Corrupt> {
        value.ok_or_else(|| self.corrupt(column, "NULL"))
    }

    /// A code column to the closed set it names (a status, an initiator).
    pub fn code<T: TryFrom<u8>>(&self, column: &'static str, n: i16) -> Result<T, Corrupt> {
        u8::try_from(n).ok().and_then(|c| T::try_from(c).ok()).ok_or_else(|| self.corrupt(column, n))
    }
}

/// A chain id or block number to the BIGINT it is stored as (saturating: no chain comes close).
pub fn i64_of(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_does_not_convert_names_table_key_and_column() {
        let cells = Cells { table: "pacts", key: "chain 1 pact 4".into() };
        let e = cells.address("seller", &[1, 2, 3]).expect_err("three bytes are no address");
        assert_eq!(
            (e.table, e.key.as_str(), e.column, e.value.as_str()),
            ("pacts", "chain 1 pact 4", "seller", "0x010203")
        );
        assert!(cells.u256("payment", "-1").is_err());
        assert!(cells.int::<u8>("threshold", 256).is_err());
        assert_eq!(cells.int::<u8>("threshold", 255), Ok(255));
    }
}
