//! Who may read a negotiation: its two parties and the operator (docs/api.md §Negotiations).
//!
//! A party proves who it is by signing [`reading_text`] (EIP-191, `personal_sign`) with its key:
//! a short text naming its address, the chain and when it was signed, valid for
//! [`SIGNATURE_LIFETIME`] seconds either side of now (as webhook subscriptions signed through MCP
//! are). It sends `Authorization: AgentPact <address> <issued> <signature>` with a POST to
//! `/graphql`, or the same value as `authorization` in a websocket's `connection_init` payload;
//! [`authorization`] builds it. The operator sends its bearer token. Anything else reading a
//! negotiation gets FORBIDDEN, whether or not the conversation exists.

use std::time::Duration;

use agentpact_negotiation::ConversationRecord;
pub use agentpact_push::subscription::SIGNATURE_LIFETIME;
use agentpact_push::subscription::now_unix;
use alloy::{
    primitives::{Address, Signature},
    signers::{Signer, SignerSync},
};
use async_graphql::Context;

use super::errors::Code;

/// The `Authorization` scheme of a party's signed request.
pub const SCHEME: &str = "AgentPact";

/// The text a party signs to read its negotiations on `chain_id` at `issued_at` (Unix seconds).
pub fn reading_text(chain_id: u64, reader: Address, issued_at: u64) -> String {
    format!(
        "AgentPact negotiation read\nchain: {chain_id}\nreader: {}\nissued: {issued_at}",
        reader.to_checksum(None)
    )
}

/// The `Authorization` header value that lets `signer` read its negotiations on `chain_id` for
/// the next [`SIGNATURE_LIFETIME`] seconds.
pub fn authorization(
    signer: &(impl SignerSync + Signer),
    chain_id: u64,
) -> Result<String, alloy::signers::Error> {
    authorization_at(signer, chain_id, now_unix())
}

/// The `Authorization` header value `signer` signed at `issued_at` (Unix seconds) to read its
/// negotiations on `chain_id`: good until [`SIGNATURE_LIFETIME`] seconds after.
pub fn authorization_at(
    signer: &(impl SignerSync + Signer),
    chain_id: u64,
    issued_at: u64,
) -> Result<String, alloy::signers::Error> {
    let address = signer.address();
    let signature = signer.sign_message_sync(reading_text(chain_id, address, issued_at).as_bytes())?;
    Ok(format!(
        "{SCHEME} {} {issued_at} 0x{}",
        address.to_checksum(None),
        alloy::hex::encode(signature.as_bytes())
    ))
}

/// What a request carries to read negotiations, as it arrived (a signature is checked against
/// the chain each read names).
#[derive(Debug, Clone)]
pub enum Credential {
    /// The operator's bearer token.
    Operator,
    /// A party's signed claim.
    Signed {
        /// Who claims to ask.
        reader: Address,
        /// When it says it signed.
        issued_at: u64,
        /// Its signature of [`reading_text`].
        signature: Signature,
    },
    /// An `AgentPact` authorization that could not be read; why.
    Malformed(&'static str),
}

impl Credential {
    /// The credential in an `Authorization` value of the `AgentPact` scheme; `None` for any other
    /// scheme (the operator's bearer token is recognised by the server, which knows it).
    pub fn from_authorization(value: &str) -> Option<Self> {
        let rest = value.strip_prefix(SCHEME)?.strip_prefix(' ')?;
        let mut parts = rest.split(' ');
        let (Some(reader), Some(issued), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Some(Self::Malformed("it takes three parts: <address> <issued> <signature>"));
        };
        let Ok(reader) = reader.parse() else {
            return Some(Self::Malformed("its address is not a 0x-prefixed 20-byte hex address"));
        };
        let Ok(issued_at) = issued.parse() else {
            return Some(Self::Malformed("its issued time is not Unix seconds"));
        };
        let Ok(signature) = signature.parse() else {
            return Some(Self::Malformed("its signature is not a 65-byte hex signature"));
        };
        Some(Self::Signed { reader, issued_at, signature })
    }
}

/// Who reads, once the credential holds for the chain read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The operator: every conversation.
    Operator,
    /// A party: the conversations it takes part in.
    Party(Address),
}

impl Access {
    /// Whether this reader may read `conversation`.
    pub fn may_read(self, conversation: &ConversationRecord) -> bool {
        match self {
            Self::Operator => true,
            Self::Party(me) => {
                conversation.conversation.seeker == me || conversation.conversation.worker == me
            }
        }
    }

    /// Whether this reader may read the conversations of `agent`.
    pub fn may_read_agent(self, agent: Address) -> bool {
        self == Self::Operator || self == Self::Party(agent)
    }
}

/// FORBIDDEN saying how to read negotiations, revealing nothing of any.
pub fn forbidden(why: impl std::fmt::Display) -> async_graphql::Error {
    Code::Forbidden.error(format!(
        "{why}: a negotiation is its parties' to read; sign \"AgentPact negotiation read\" for this chain with a party's key \
         and send Authorization: {SCHEME} <address> <issued> <signature> (docs/api.md §Negotiations), or the operator's token"
    ))
}

impl Credential {
    /// How long a stream this credential opened may still run: until its signature lapses
    /// ([`SIGNATURE_LIFETIME`] after it was signed); the operator's token does not lapse.
    pub fn remaining(&self) -> Duration {
        match self {
            Self::Signed { issued_at, .. } => {
                Duration::from_secs((issued_at + SIGNATURE_LIFETIME).saturating_sub(now_unix()))
            }
            Self::Operator | Self::Malformed(_) => Duration::MAX,
        }
    }
}

/// The reader the request's credential vouches for on `chain_id`, or FORBIDDEN.
pub fn access(ctx: &Context<'_>, chain_id: u64) -> async_graphql::Result<Access> {
    match ctx.data_opt::<Credential>() {
        None => Err(forbidden("this request carries no credential")),
        Some(Credential::Operator) => Ok(Access::Operator),
        Some(Credential::Malformed(why)) => {
            Err(forbidden(format!("the AgentPact authorization is malformed: {why}")))
        }
        Some(&Credential::Signed { reader, issued_at, signature }) => {
            let now = now_unix();
            if issued_at.abs_diff(now) > SIGNATURE_LIFETIME {
                return Err(forbidden(format!(
                    "the authorization was signed at {issued_at}, more than {SIGNATURE_LIFETIME} s from now ({now}); sign it again"
                )));
            }
            match signature.recover_address_from_msg(reading_text(chain_id, reader, issued_at)) {
                Ok(signer) if signer == reader => Ok(Access::Party(reader)),
                _ => Err(forbidden(format!(
                    "the signature does not recover to {} for chain {chain_id}",
                    reader.to_checksum(None)
                ))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloy::signers::local::PrivateKeySigner;

    use super::*;

    #[test]
    fn a_signed_authorization_reads_back_as_its_signer() {
        let signer = PrivateKeySigner::random();
        let value = authorization(&signer, 31337).expect("signs");
        let Some(Credential::Signed { reader, issued_at, signature }) =
            Credential::from_authorization(&value)
        else {
            panic!("{value} reads back as a signed credential");
        };
        assert_eq!(reader, signer.address());
        let text = reading_text(31337, reader, issued_at);
        assert_eq!(signature.recover_address_from_msg(text).ok(), Some(signer.address()));
    }

    #[test]
    fn other_schemes_are_not_ours_and_bad_parts_are_named() {
        assert!(Credential::from_authorization("Bearer abc").is_none());
        assert!(Credential::from_authorization("AgentPactX 1 2 3").is_none());
        for bad in [
            "AgentPact ",
            "AgentPact 0x1 2",
            "AgentPact nope 1 0x00",
            "AgentPact 0x0000000000000000000000000000000000000001 soon 0x00",
        ] {
            assert!(matches!(Credential::from_authorization(bad), Some(Credential::Malformed(_))), "{bad}");
        }
    }
}
