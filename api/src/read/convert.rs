//! From the index's column types to domain types. The indexer wrote every value, so a value that
//! does not convert means a corrupt row: reading through a [`Cells`] fails with the table, key and
//! column named ([`ReadError::Corrupt`]), never with a default. (The relay's conversation rows are
//! read by `negotiation::relay`, which moves to its own crate with issue #17.)

use std::fmt::Display;

use alloy::primitives::{Address, B256, U256};

use super::ReadError;

/// The cells of one row being read, and where they came from, for the error when one does not convert.
pub struct Cells {
    /// The table.
    pub table: &'static str,
    /// The row's key, as a person would name it (`chain 31337 pact 4`).
    pub key: String,
}

impl Cells {
    fn corrupt(&self, column: &'static str, value: impl Display) -> ReadError {
        let value: String = value.to_string().chars().take(80).collect();
        let error = ReadError::Corrupt { table: self.table, key: self.key.clone(), column, value };
        tracing::error!(%error, "corrupt index row");
        error
    }

    /// 20 bytes to an address.
    pub fn address(&self, column: &'static str, bytes: &[u8]) -> Result<Address, ReadError> {
        Address::try_from(bytes).map_err(|_| self.corrupt(column, alloy::hex::encode_prefixed(bytes)))
    }

    /// 32 bytes to a hash.
    pub fn hash(&self, column: &'static str, bytes: &[u8]) -> Result<B256, ReadError> {
        B256::try_from(bytes).map_err(|_| self.corrupt(column, alloy::hex::encode_prefixed(bytes)))
    }

    /// A NUMERIC read as text to a `U256`.
    pub fn u256(&self, column: &'static str, text: &str) -> Result<U256, ReadError> {
        text.parse().map_err(|_| self.corrupt(column, text))
    }

    /// An integer column to the narrower or unsigned type it holds (`u8`, `u16`, `u64`).
    pub fn int<T: TryFrom<i64>>(&self, column: &'static str, n: impl Into<i64>) -> Result<T, ReadError> {
        let n: i64 = n.into();
        T::try_from(n).map_err(|_| self.corrupt(column, n))
    }

    /// A text column to the closed set it names, through `parse`.
    pub fn named<T>(
        &self,
        column: &'static str,
        text: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, ReadError> {
        parse(text).ok_or_else(|| self.corrupt(column, text))
    }

    /// A code column to the closed set it names (a status, an initiator).
    pub fn code<T: TryFrom<u8>>(&self, column: &'static str, n: i16) -> Result<T, ReadError> {
        u8::try_from(n).ok().and_then(|c| T::try_from(c).ok()).ok_or_else(|| self.corrupt(column, n))
    }
}

/// A chain id or block number to the BIGINT it is stored as.
pub fn i64_of(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
