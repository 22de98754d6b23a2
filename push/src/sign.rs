//! How a receiver knows a delivery came from this server, unchanged (docs/push.md §Verifying).
//!
//! The signed content is `{webhook-id}.{webhook-timestamp}.{body}`, as Standard Webhooks has it.
//! - `agentpact-signature`: the server key's EIP-191 (`personal_sign`) signature of that content,
//!   `0x` and 65 bytes in hex; `agentpact-signer` names the key's address. A receiver checks it
//!   with any Ethereum library against the address the operator publishes: no shared secret.
//! - `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of the content under the
//!   subscription's secret (its UTF-8 bytes), when the owner chose one.

use alloy::{
    primitives::Address,
    signers::{SignerSync, local::PrivateKeySigner},
};
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The server's delivery key. Its `Debug` shows the address only.
#[derive(Clone)]
pub struct ServerKey(PrivateKeySigner);

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerKey({})", self.0.address())
    }
}

/// The headers of one delivery attempt, in the order sent.
pub type Headers = Vec<(&'static str, String)>;

impl ServerKey {
    /// The key.
    pub fn new(signer: PrivateKeySigner) -> Self {
        Self(signer)
    }

    /// The address receivers check signatures against.
    pub fn address(&self) -> Address {
        self.0.address()
    }

    /// The signature headers for `body` sent as `id` at `timestamp` (Unix seconds), with the
    /// HMAC header when `hmac_secret` is given.
    pub fn headers(&self, id: &str, timestamp: i64, body: &str, hmac_secret: Option<&str>) -> Headers {
        let content = format!("{id}.{timestamp}.{body}");
        let mut headers = vec![
            ("webhook-id", id.to_owned()),
            ("webhook-timestamp", timestamp.to_string()),
            ("agentpact-signer", self.address().to_checksum(None)),
        ];
        // A local key signs without failing; a failure would leave the delivery unsigned, which
        // every receiver refuses, so the header is simply left out.
        if let Ok(signature) = self.0.sign_message_sync(content.as_bytes()) {
            headers.push(("agentpact-signature", format!("0x{}", alloy::hex::encode(signature.as_bytes()))));
        }
        if let Some(secret) = hmac_secret {
            headers.push(("webhook-signature", format!("v1,{}", hmac(secret, &content))));
        }
        headers
    }
}

/// Base64 of HMAC-SHA256 of `content` under `secret`'s UTF-8 bytes.
pub fn hmac(secret: &str, content: &str) -> String {
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(content.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use alloy::primitives::Signature;

    use super::*;

    #[test]
    fn the_signature_recovers_to_the_server_and_the_hmac_is_rfc_4231s() {
        let key = ServerKey::new(PrivateKeySigner::random());
        let headers = key.headers("84532:0xab:3", 1_700_000_000, "{\"a\":1}", Some("s3cret"));
        let get = |name: &str| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()).expect(name);
        let signature: Signature = get("agentpact-signature").parse().expect("a signature");
        let recovered =
            signature.recover_address_from_msg("84532:0xab:3.1700000000.{\"a\":1}").expect("recoverable");
        assert_eq!(recovered, key.address());
        assert!(get("webhook-signature").starts_with("v1,"));
        assert_eq!(format!("{key:?}"), format!("ServerKey({})", key.address()), "no key material in Debug");
        // RFC 4231 test case 2: key "Jefe", "what do ya want for nothing?".
        assert_eq!(
            alloy::hex::encode(
                base64::engine::general_purpose::STANDARD
                    .decode(hmac("Jefe", "what do ya want for nothing?"))
                    .expect("base64")
            ),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
