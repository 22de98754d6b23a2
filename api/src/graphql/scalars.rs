//! The API's scalars: uint256 amounts as decimal strings (`BigInt`), checksummed addresses
//! (`Address`) and 32-byte hashes (`Bytes32`). Timestamps use async-graphql's `DateTime` (RFC 3339,
//! UTC). The closed sets (the contract's enums among them) are in `closed_sets`.

use alloy::primitives::{self, B256, U256};
use async_graphql::{InputValueResult, Scalar, ScalarType, Value};

use super::errors::Code;

/// A uint256 as a decimal string, e.g. wei amounts and pact ids: `"500000000000000000"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BigInt(pub U256);

/// Prefix of every `BigInt` parse error (its code is `BAD_BIG_INT`), by which `errors::label` knows
/// one that async-graphql passed on without its code.
pub const BIG_INT_ERROR: &str = "not a BigInt";
/// Prefix of every `Address` parse error (its code is `BAD_ADDRESS`), by which `errors::label` knows
/// one that async-graphql passed on without its code.
pub const ADDRESS_ERROR: &str = "not an Address";
/// Prefix of every `Bytes32` parse error (its code is `BAD_BYTES32`), by which `errors::label` knows
/// one that async-graphql passed on without its code.
pub const BYTES32_ERROR: &str = "not a Bytes32";

/// A uint256 as a decimal string, e.g. wei amounts and pact ids: "500000000000000000".
#[Scalar(name = "BigInt")]
impl ScalarType for BigInt {
    fn parse(value: Value) -> InputValueResult<Self> {
        let text = match &value {
            Value::String(s) => s.clone(),
            Value::Number(n) if n.is_u64() => n.to_string(),
            _ => {
                return Err(Code::BadBigInt.input_error(format!(
                    "{BIG_INT_ERROR}: expected a decimal string such as \"500000000000000000\", got {value}"
                )));
            }
        };
        let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        match text.parse::<U256>() {
            Ok(n) if digits => Ok(Self(n)),
            _ => Err(Code::BadBigInt.input_error(format!(
                "{BIG_INT_ERROR}: {text:?} is not a whole decimal number between 0 and 2^256-1"
            ))),
        }
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.to_string())
    }
}

/// An Ethereum address, written EIP-55 checksummed. Input may be all lower- or upper-case, or
/// checksummed; mixed case with a wrong checksum is refused as a likely typo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address(pub primitives::Address);

/// An Ethereum address, output EIP-55 checksummed; input in lower case or checksummed.
#[Scalar(name = "Address")]
impl ScalarType for Address {
    fn parse(value: Value) -> InputValueResult<Self> {
        let Value::String(text) = &value else {
            return Err(Code::BadAddress
                .input_error(format!("{ADDRESS_ERROR}: expected a 0x-prefixed string, got {value}")));
        };
        agentpact_contracts::parse::address(text)
            .map(Self)
            .map_err(|why| Code::BadAddress.input_error(format!("{ADDRESS_ERROR}: {why}")))
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.to_checksum(None))
    }
}

/// A 32-byte hash as 0x-prefixed hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes32(pub B256);

/// A 32-byte hash as 0x-prefixed hex.
#[Scalar(name = "Bytes32")]
impl ScalarType for Bytes32 {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(s) if s.starts_with("0x") && s.len() == 66 => s.parse().map(Self).map_err(|_| {
                Code::BadBytes32.input_error(format!("{BYTES32_ERROR}: {s:?} is not 0x and 64 hex digits"))
            }),
            _ => Err(Code::BadBytes32
                .input_error(format!("{BYTES32_ERROR}: expected 0x and 64 hex digits, got {value}"))),
        }
    }

    fn to_value(&self) -> Value {
        Value::String(self.0.to_string())
    }
}
