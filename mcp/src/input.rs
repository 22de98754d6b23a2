//! Reading tool inputs: amounts, addresses, hashes and ids, each with an error that says what a
//! good value looks like. Amounts are base units (`U256`; wei for ETH) inside and decimal strings
//! in their currency at the edge, read and written by the one money module
//! (`agentpact_contracts::money`), as the relay and the dashboard read and write them.
//!
//! One rule for ids and amounts, in and out (docs/mcp.md §Input): an id ([`Id`]) is answered as
//! a decimal string (a uint256 does not fit a JSON number) and taken as that string or a whole
//! number; an amount ([`Amount`]) is answered as a decimal string and taken as one, or as the
//! JSON number a field took before. So whatever one tool answers, another takes back as is.

use std::borrow::Cow;

use agentpact_contracts::{links, money};
use alloy::primitives::{Address, B256, U256, keccak256};
use rmcp::schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, de};

/// A tool input that cannot be used; the message says what to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidInput(pub String);

/// The decimals of ETH (wei).
const ETH_DECIMALS: u8 = 18;

/// `"0.5"` ETH as wei, by the one amount grammar.
pub fn eth_amount(field: &str, text: &str) -> Result<U256, InvalidInput> {
    units(field, text, ETH_DECIMALS, "ETH")
}

/// `"5.5"` of a currency with `decimals` decimals (`unit` names it) as base units, by the one
/// amount grammar: no sign, no exponent, no finer than the currency.
pub fn units(field: &str, text: &str, decimals: u8, unit: &str) -> Result<U256, InvalidInput> {
    money::parse(text, decimals, unit).map_err(|why| InvalidInput(format!("{field}: {why}")))
}

/// The one pattern a string id's schema declares: decimal digits.
pub const DIGITS: &str = "^[0-9]+$";

/// The most decimal digits a uint256 takes.
const ID_DIGITS: u32 = 78;

/// An id a tool takes (a pact's, a webhook subscription's, a settlement round): a whole number
/// (`12`) or the decimal string tools answer (`"12"`), up to a uint256.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id(pub U256);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Id;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "an id: a whole number such as 12, or its decimal digits as a string such as \"12\"",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id(U256::from(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                let digits = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
                U256::from_str_radix(v, 10)
                    .ok()
                    .filter(|_| digits)
                    .map(Id)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl JsonSchema for Id {
    fn schema_name() -> Cow<'static, str> {
        "Id".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["integer", "string"], "minimum": 0, "pattern": DIGITS, "maxLength": ID_DIGITS })
    }
}

/// The longest amount an [`Amount`] takes, in characters.
const AMOUNT_CHARS: u32 = 100;

/// An amount a tool takes: a decimal string in its currency (`"10.5"`), as every tool answers
/// amounts, or a JSON number (`10.5`) where a field took one before. Read by [`units`].
#[derive(Debug, Clone, PartialEq)]
pub struct Amount(String);

impl Amount {
    /// The amount as base units of a currency with `decimals` decimals (`unit` names it).
    pub fn units(&self, field: &str, decimals: u8, unit: &str) -> Result<U256, InvalidInput> {
        units(field, &self.0, decimals, unit)
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Text(String),
            Number(f64),
        }
        match Given::deserialize(deserializer)? {
            Given::Text(text) => Ok(Self(text)),
            Given::Number(n) if n.is_finite() && n >= 0.0 => Ok(Self(n.to_string())),
            Given::Number(n) => Err(de::Error::custom(format!("an amount must not be negative, not {n}"))),
        }
    }
}

impl JsonSchema for Amount {
    fn schema_name() -> Cow<'static, str> {
        "Amount".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["string", "number"], "minimum": 0, "minLength": 1, "maxLength": AMOUNT_CHARS })
    }
}

/// Wei as ETH, written the one way: `550000000000000000` → `"0.55"`.
pub fn eth(wei: U256) -> String {
    money::format(wei, ETH_DECIMALS)
}

/// An address, lower-case or correctly checksummed.
pub fn address(field: &str, text: &str) -> Result<Address, InvalidInput> {
    agentpact_contracts::parse::address(text.trim()).map_err(|why| InvalidInput(format!("{field}: {why}")))
}

/// A non-zero 32-byte hash as 0x and 64 hex digits.
pub fn hash(field: &str, text: &str) -> Result<B256, InvalidInput> {
    let h: B256 = text
        .trim()
        .parse()
        .ok()
        .filter(|_| text.trim().len() == 66 && text.trim().starts_with("0x"))
        .ok_or_else(|| {
            InvalidInput(format!("{field} must be 0x followed by 64 hex digits (a bytes32), not {text:?}"))
        })?;
    if h.is_zero() {
        return Err(InvalidInput(format!("{field} must not be zero")));
    }
    Ok(h)
}

/// The longest specification reference `spec` reads, in characters.
pub const MAX_SPEC: usize = 512;

/// A specification reference: a bytes32 hash as is, or an IPFS CID (such as `Qm…` or `bafy…`:
/// letters, digits, `-` and `_`, as the multibase alphabets write one) hashed with keccak256.
/// Returns the hash and the URI to store (`ipfs://<cid>` for a CID); a URI given must be a link
/// ([`links::check`]).
pub fn spec(text: &str, uri: Option<&str>) -> Result<(B256, String), InvalidInput> {
    let t = text.trim();
    let cid_like = t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if t.is_empty() || t.len() > MAX_SPEC || !(t.starts_with("0x") || cid_like) {
        return Err(InvalidInput(format!(
            "specHash must be a bytes32 hash (0x and 64 hex digits) or an IPFS CID such as \"QmXoyp…\" \
             (1-{MAX_SPEC} letters and digits), not {text:?}"
        )));
    }
    let uri = uri.map(str::trim).filter(|u| !u.is_empty());
    if let Some(uri) = uri {
        links::check("specUri", uri).map_err(InvalidInput)?;
    }
    if t.starts_with("0x") {
        return Ok((hash("specHash", t)?, uri.unwrap_or_default().to_owned()));
    }
    Ok((keccak256(t.as_bytes()), uri.map_or_else(|| format!("ipfs://{t}"), str::to_owned)))
}

/// `text` without the blanks around it, which must leave something: an empty or blank id or name
/// is none.
pub fn filled<'a>(field: &str, text: &'a str) -> Result<&'a str, InvalidInput> {
    let t = text.trim();
    if t.is_empty() {
        return Err(InvalidInput(format!(
            "{field} is {}; give a value",
            if text.is_empty() { "empty" } else { "blank" }
        )));
    }
    Ok(t)
}

/// Refuses `text` when it is longer than the `max` bytes a contract stores for `field` (the
/// schemas count characters; a character outside ASCII takes 2 to 4 bytes).
pub fn fits(field: &str, text: &str, max: usize) -> Result<(), InvalidInput> {
    if text.len() > max {
        return Err(InvalidInput(format!(
            "{field} is {} bytes long; the contract takes at most {max} bytes (a character outside ASCII takes 2 to 4)",
            text.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eth_amounts_round_trip_and_bad_ones_say_why() {
        assert_eq!(eth_amount("paymentEth", "0.5"), Ok(U256::from(500_000_000_000_000_000u64)));
        assert_eq!(eth(U256::from(550_000_000_000_000_000u64)), "0.55");
        assert_eq!(eth(U256::from(2_000_000_000_000_000_000u64)), "2");
        assert_eq!(eth(U256::ZERO), "0");
        assert_eq!(units("payment", "5.5", 6, "USDC"), Ok(U256::from(5_500_000u64)));
        assert_eq!(units("payment", ".5", 6, "USDC"), Ok(U256::from(500_000u64)));
        let err = units("payment", "0.0000001", 6, "USDC").expect_err("seven decimals");
        assert_eq!(err.0, "payment: 0.0000001 has 7 decimal places; USDC has 6: round the amount");
        for bad in ["", "-1", "1e18", "0.1234567890123456789", "abc", "1.2.3", "."] {
            let err = eth_amount("paymentEth", bad).expect_err(bad);
            assert!(err.0.contains("paymentEth"), "{err}");
        }
        let amount = |v: serde_json::Value| serde_json::from_value::<Amount>(v).expect("an amount");
        assert_eq!(
            amount(10.into()).units("max_price", 18, "ETH"),
            Ok(U256::from(10u8) * U256::from(10u64.pow(18)))
        );
        assert_eq!(amount(0.05.into()).units("max_price", 18, "ETH"), eth_amount("max_price", "0.05"));
        assert_eq!(amount("10".into()).units("max_price", 6, "USDC"), Ok(U256::from(10_000_000u64)));
        assert!(serde_json::from_value::<Amount>((-1.0).into()).is_err());
        assert!(amount("-1".into()).units("max_price", 6, "USDC").expect_err("bad").0.contains("max_price"));
    }

    #[test]
    fn every_amount_vector_reads_as_the_one_grammar_reads_it() {
        let table: serde_json::Value =
            serde_json::from_str(money::AMOUNT_VECTORS).expect("amounts.json is JSON");
        for v in table["vectors"].as_array().into_iter().flatten() {
            let input = v["input"].as_str().expect("input");
            let decimals = v["decimals"].as_u64().and_then(|d| u8::try_from(d).ok()).expect("decimals");
            let expected = money::parse(input, decimals, "TOKEN").map_err(|why| format!("amount: {why}"));
            assert_eq!(units("amount", input, decimals, "TOKEN").map_err(|e| e.0), expected, "{v}");
        }
    }

    #[test]
    fn ids_are_taken_as_whole_numbers_or_their_decimal_strings() {
        let id = |v: serde_json::Value| serde_json::from_value::<Id>(v).map(|id| id.0);
        assert_eq!(id(12.into()).ok(), Some(U256::from(12u8)));
        assert_eq!(id("12".into()).ok(), Some(U256::from(12u8)));
        assert_eq!(id(U256::MAX.to_string().into()).ok(), Some(U256::MAX));
        for bad in [
            serde_json::json!(-1),
            1.5.into(),
            "".into(),
            " 1".into(),
            "+1".into(),
            "0x1".into(),
            "1e3".into(),
        ] {
            let err = id(bad.clone()).expect_err("not an id").to_string();
            assert!(err.contains("an id: a whole number"), "{bad}: {err}");
        }
        assert!(id(format!("{}0", U256::MAX).into()).is_err(), "above a uint256");
    }

    #[test]
    fn hashes_and_specs() {
        assert!(hash("proofHash", "0x12").is_err());
        assert!(hash("proofHash", &format!("0x{}", "0".repeat(64))).is_err());
        let (h, uri) = spec("QmHeroSection", None).expect("cid");
        assert_eq!((h, uri.as_str()), (keccak256("QmHeroSection"), "ipfs://QmHeroSection"));
        assert!(spec("bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi", None).is_ok());
        for bad in ["hello world", "ipfs://Qm", "Qm\u{200b}x", "", "   ", &"Q".repeat(MAX_SPEC + 1)] {
            let err = spec(bad, None).expect_err(bad);
            assert!(err.0.starts_with("specHash must be"), "{err}");
        }
        for bad in ["javascript:alert(1)", "data:text/html,x", "file:///etc/passwd"] {
            let err = spec("QmHeroSection", Some(bad)).expect_err(bad);
            assert!(err.0.starts_with("specUri must be a link"), "{err}");
        }
        assert!(spec("QmHeroSection", Some("https://example.com/spec.md")).is_ok());
    }

    #[test]
    fn blank_ids_and_overlong_texts_are_named() {
        assert_eq!(filled("contract_id", " 7 "), Ok("7"));
        assert_eq!(filled("contract_id", "").expect_err("empty").0, "contract_id is empty; give a value");
        assert_eq!(filled("contract_id", " \t").expect_err("blank").0, "contract_id is blank; give a value");
        assert!(fits("name", &"é".repeat(32), 64).is_ok());
        let err = fits("name", &"é".repeat(33), 64).expect_err("66 bytes");
        assert!(err.0.starts_with("name is 66 bytes long; the contract takes at most 64 bytes"), "{err}");
    }
}
