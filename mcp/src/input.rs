//! Reading tool inputs: amounts, addresses, hashes and ids, each with an error that says what a
//! good value looks like. Amounts are base units (`U256`; wei for ETH) inside and decimal strings
//! in their currency at the edge.

use alloy::primitives::{Address, B256, U256, keccak256, utils};

/// A tool input that cannot be used; the message says what to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidInput(pub String);

/// `"0.5"` ETH as wei. At most 18 decimals, no sign, no exponent.
pub fn eth_amount(field: &str, text: &str) -> Result<U256, InvalidInput> {
    units(field, text, 18, "ETH")
}

/// `"5.5"` of a currency with `decimals` decimals (`unit` names it) as base units. No sign, no
/// exponent, no more decimals than the currency has.
pub fn units(field: &str, text: &str, decimals: u8, unit: &str) -> Result<U256, InvalidInput> {
    let t = text.trim();
    let digits_and_dot =
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') && t.matches('.').count() <= 1;
    let places = t.split_once('.').map_or(0, |(_, d)| d.len());
    if !digits_and_dot || places > usize::from(decimals) || t == "." {
        return Err(InvalidInput(format!(
            "{field} must be an {unit} amount like \"0.5\" (digits, at most {decimals} decimals), not {text:?}"
        )));
    }
    utils::parse_units(t, decimals)
        .map(Into::into)
        .map_err(|_| InvalidInput(format!("{field} {text:?} is too large")))
}

/// A JSON number (e.g. `10` or `0.05`) of a currency with `decimals` decimals (`unit` names it)
/// as base units.
pub fn number(field: &str, value: f64, decimals: u8, unit: &str) -> Result<U256, InvalidInput> {
    if !value.is_finite() || value < 0.0 {
        return Err(InvalidInput(format!("{field} must be a non-negative amount of {unit}, not {value}")));
    }
    units(field, &value.to_string(), decimals, unit)
}

/// Wei as ETH without trailing zeros: `550000000000000000` → `"0.55"`.
pub fn eth(wei: U256) -> String {
    shown(wei, 18)
}

/// Base units of a currency with `decimals` decimals, without trailing zeros: `5500000`, 6 →
/// `"5.5"`.
pub fn shown(amount: U256, decimals: u8) -> String {
    let text = utils::format_units(amount, decimals).unwrap_or_else(|_| amount.to_string());
    if !text.contains('.') {
        return text;
    }
    let text = text.trim_end_matches('0');
    text.strip_suffix('.').unwrap_or(text).to_owned()
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
/// Returns the hash and the URI to store (`ipfs://<cid>` for a CID).
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
        assert_eq!(shown(U256::from(5_500_000u64), 6), "5.5");
        assert_eq!(shown(U256::from(10u8), 0), "10");
        let err = units("payment", "0.0000001", 6, "USDC").expect_err("seven decimals");
        assert!(err.0.contains("at most 6 decimals") && err.0.contains("USDC"), "{err}");
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
