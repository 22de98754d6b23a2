//! Reading tool inputs: amounts, addresses, hashes and ids, each with an error that says what a
//! good value looks like. Amounts are base units (`U256`; wei for ETH) inside and decimal strings
//! in their currency at the edge, read and written by the one money module
//! (`agentpact_contracts::money`), as the relay and the dashboard read and write them.

use agentpact_contracts::{links, money};
use alloy::primitives::{Address, B256, U256, keccak256};

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

/// A JSON number (e.g. `10` or `0.05`) of a currency with `decimals` decimals (`unit` names it)
/// as base units.
pub fn number(field: &str, value: f64, decimals: u8, unit: &str) -> Result<U256, InvalidInput> {
    if !value.is_finite() || value < 0.0 {
        return Err(InvalidInput(format!("{field} must be a non-negative amount of {unit}, not {value}")));
    }
    units(field, &value.to_string(), decimals, unit)
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
        assert_eq!(number("max_price", 10.0, 18, "ETH"), Ok(U256::from(10u8) * U256::from(10u64.pow(18))));
        assert_eq!(number("max_price", 0.05, 18, "ETH"), eth_amount("max_price", "0.05"));
        assert_eq!(number("max_price", 10.0, 6, "USDC"), Ok(U256::from(10_000_000u64)));
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(number("max_price", bad, 6, "USDC").expect_err("bad").0.contains("max_price"));
        }
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
