//! Reading what people type: addresses as the GraphQL API and the MCP tools both accept them.

use alloy::primitives::Address;

/// Reads an address the way every interface accepts one (GraphQL, MCP tools): 0x and 40 hex
/// digits, EIP-55 checked when the case is mixed; otherwise a sentence saying what is wrong.
pub fn address(text: &str) -> Result<Address, String> {
    let hex = text.strip_prefix("0x").ok_or_else(|| format!("{text:?} does not start with 0x"))?;
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{text:?} is not 0x followed by 40 hex digits"));
    }
    let mixed = hex.bytes().any(|b| b.is_ascii_lowercase()) && hex.bytes().any(|b| b.is_ascii_uppercase());
    if mixed {
        Address::parse_checksummed(text, None).map_err(|_| {
            format!("{text:?} has a wrong EIP-55 checksum; check it for a typo, or write it in lower case")
        })
    } else {
        text.parse().map_err(|_| format!("{text:?} is not an address"))
    }
}
