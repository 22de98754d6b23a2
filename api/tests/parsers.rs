//! Fuzzing the query-argument parsers with random input: they never panic, they accept exactly
//! the well-formed values, and what the API writes it reads back unchanged.

use agentpact_api::graphql::scalars::BigInt;
use agentpact_contracts::parse::address as parse_address;
use agentpact_read::{Cursor, PactOrderField};
use alloy::primitives::{Address, U256};
use async_graphql::{ScalarType, Value};
use proptest::prelude::*;

const FIELDS: [PactOrderField; 4] =
    [PactOrderField::Created, PactOrderField::Payment, PactOrderField::Deadline, PactOrderField::Updated];

fn mixed_case(hex: &str) -> bool {
    hex.chars().any(|c| c.is_ascii_lowercase()) && hex.chars().any(|c| c.is_ascii_uppercase())
}

proptest! {
    #[test]
    fn no_input_makes_a_parser_panic(text in ".{0,120}", field in 0usize..4) {
        let _ = Cursor::decode(&text, FIELDS[field]);
        let _ = parse_address(&text);
        let _ = BigInt::parse(Value::String(text));
    }

    #[test]
    fn cursors_round_trip(id in any::<[u8; 32]>(), key in any::<u64>(), field in 0usize..4) {
        let field = FIELDS[field];
        // What the API writes: no key for creation order, a deadline up to 9999-12-31, any
        // non-negative block or payment.
        let key = match field {
            PactOrderField::Created => String::new(),
            PactOrderField::Deadline => (key % 253_402_300_800).to_string(),
            _ => (key >> 1).to_string(),
        };
        let cursor = Cursor { field, key, id: U256::from_be_bytes(id) };
        prop_assert_eq!(Cursor::decode(&cursor.encode(), field).ok(), Some(cursor));
    }

    #[test]
    fn random_hex_is_not_a_cursor(noise in "[0-9a-f]{0,64}", field in 0usize..4) {
        prop_assert!(Cursor::decode(&noise, FIELDS[field]).is_err());
    }

    #[test]
    fn addresses_parse_lower_case_and_checksummed_but_not_a_broken_checksum(
        bytes in any::<[u8; 20]>(),
        flip in 0usize..40,
    ) {
        let address = Address::from(bytes);
        prop_assert_eq!(parse_address(&format!("{address:#x}")), Ok(address));
        let checksummed = address.to_checksum(None);
        prop_assert_eq!(parse_address(&checksummed), Ok(address));
        let mut chars: Vec<char> = checksummed.chars().collect();
        let c = chars[2 + flip];
        if c.is_ascii_alphabetic() {
            chars[2 + flip] = if c.is_ascii_uppercase() { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() };
            let broken: String = chars.into_iter().collect();
            if mixed_case(&broken[2..]) {
                prop_assert!(parse_address(&broken).is_err(), "{} passed with a broken checksum", broken);
            }
        }
    }

    #[test]
    fn big_ints_round_trip_as_decimal_strings(bytes in any::<[u8; 32]>()) {
        let n = U256::from_be_bytes(bytes);
        let value = BigInt(n).to_value();
        prop_assert_eq!(value.clone(), Value::String(n.to_string()));
        prop_assert_eq!(BigInt::parse(value).ok(), Some(BigInt(n)));
        let (negative, hex) = (format!("-{n}"), format!("0x{n:x}"));
        prop_assert!(BigInt::parse(Value::String(negative)).is_err());
        prop_assert!(BigInt::parse(Value::String(hex)).is_err());
    }
}
