//! Strings the Rust bindings cannot hold: a Solidity `string` is any bytes (NUL, invalid UTF-8),
//! and an attacker's wallet sends whatever it likes. A test builds a call with a placeholder of
//! the same length for each such string ([`RawStrings::hold`]), then [`RawStrings::patch`] puts
//! the bytes in its place in the ABI-encoded call data (a string's encoding is its length word
//! followed by its bytes, wherever it stands: argument, struct field, array element).

use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::{Bytes, TxKind, U256},
    providers::DynProvider,
};

use crate::{
    HarnessError,
    chain::{Mined, send},
};

/// Raw strings to put into encoded call data in place of their placeholders.
#[derive(Debug, Default)]
pub struct RawStrings(Vec<(Vec<u8>, Vec<u8>)>);

/// The characters placeholders are made of: none of them is in any ordinary test string.
const DIGITS: &[u8; 4] = b"~^`|";

impl RawStrings {
    /// A placeholder for `bytes`, to build the call with: as long as `bytes`, and distinct from
    /// every other placeholder of that length.
    ///
    /// # Panics
    /// When placeholders of one length run out (a test holding more than 4^len strings of a
    /// length `len` below 8): a test bug.
    pub fn hold(&mut self, bytes: &[u8]) -> String {
        if bytes.is_empty() {
            return String::new();
        }
        let index = self.0.iter().filter(|(p, _)| p.len() == bytes.len()).count();
        let mut placeholder = vec![DIGITS[0]; bytes.len()];
        let mut n = index;
        for slot in placeholder.iter_mut().rev() {
            *slot = DIGITS[n % 4];
            n /= 4;
        }
        assert!(n == 0, "too many held strings of {} bytes", bytes.len());
        self.0.push((placeholder.clone(), bytes.to_vec()));
        String::from_utf8(placeholder).unwrap_or_default()
    }

    /// `calldata` with every held placeholder replaced by its bytes.
    pub fn patch(&self, calldata: &[u8]) -> Result<Bytes, HarnessError> {
        let mut data = calldata.to_vec();
        for (placeholder, bytes) in &self.0 {
            let mut needle = U256::from(placeholder.len()).to_be_bytes::<32>().to_vec();
            needle.extend_from_slice(placeholder);
            // A length word starts on a word of the encoded arguments, which end the data (after a
            // call's selector or a deployment's bytecode) a whole number of words long: an
            // unaligned match is another string's length and bytes that happen to read the same
            // (a string of 0x37e bytes whose placeholder begins "~~" holds the needle of "~~~" one
            // byte before its length word).
            let aligned = |i: usize| (data.len() - i).is_multiple_of(32);
            let at: Vec<usize> = data
                .windows(needle.len())
                .enumerate()
                .filter(|(i, w)| aligned(*i) && *w == needle)
                .map(|(i, _)| i)
                .collect();
            let [at] = at[..] else {
                return Err(HarnessError::Process(format!(
                    "placeholder {:?} stands {} times in the call data, not once",
                    String::from_utf8_lossy(placeholder),
                    at.len()
                )));
            };
            data[at + 32..at + 32 + bytes.len()].copy_from_slice(bytes);
        }
        Ok(data.into())
    }
}

/// Sends `call` (sender, value and target as it was built) with the strings `raw` holds in place
/// of their placeholders, and waits for its receipt.
pub async fn send_raw<D: CallDecoder>(
    provider: &DynProvider,
    raw: &RawStrings,
    call: CallBuilder<&DynProvider, D>,
) -> Result<Mined, HarnessError> {
    let input = raw.patch(call.calldata())?;
    let request = call.into_transaction_request();
    let mut patched = CallBuilder::new_raw(provider.clone(), input);
    if let Some(TxKind::Call(to)) = request.to {
        patched = patched.to(to);
    }
    if let Some(from) = request.from {
        patched = patched.from(from);
    }
    if let Some(value) = request.value {
        patched = patched.value(value);
    }
    Ok(send(patched).await?)
}

/// `pattern` repeated and cut to exactly `len` bytes: the longest value of a field, made of
/// `pattern`'s bytes.
pub fn filled(pattern: &[u8], len: usize) -> Vec<u8> {
    pattern.iter().copied().cycle().take(len).collect()
}

#[cfg(test)]
mod tests {
    use alloy::sol_types::SolValue;

    use super::*;

    #[test]
    fn placeholders_are_replaced_where_the_strings_stand() {
        let mut raw = RawStrings::default();
        let a = raw.hold(b"\0\xff");
        let b = raw.hold(b"x\0");
        let c = raw.hold(b"");
        assert_ne!(a, b);
        let encoded = (a, vec![b, "ok".to_owned()], c).abi_encode_params();
        let patched = raw.patch(&encoded).expect("patched");
        let expected = (
            Bytes::from_static(b"\0\xff"),
            vec![Bytes::from_static(b"x\0"), Bytes::from_static(b"ok")],
            Bytes::new(),
        )
            .abi_encode_params();
        assert_eq!(patched.to_vec(), expected);
        assert_eq!(filled(b"ab", 5), b"ababa");
    }
}
