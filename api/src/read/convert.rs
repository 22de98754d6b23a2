//! From the index's column types to domain types. The indexer wrote every value, so a value that
//! does not convert means a corrupt row: it reads as zero rather than failing a whole page, and the
//! projection tests compare every field with the chain.

use alloy::primitives::{Address, B256, U256};

/// 20 bytes to an address.
pub fn address(bytes: &[u8]) -> Address {
    Address::try_from(bytes).unwrap_or_default()
}

/// 32 bytes to a hash.
pub fn hash(bytes: &[u8]) -> B256 {
    B256::try_from(bytes).unwrap_or_default()
}

/// A NUMERIC read as text to a `U256`.
pub fn u256(text: &str) -> U256 {
    text.parse().unwrap_or_default()
}

/// A count or block number (never negative in the index) to `u64`.
pub fn u64_of(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A chain id or block number to the BIGINT it is stored as.
pub fn i64_of(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
