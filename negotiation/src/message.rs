//! HIRE/1.0 messages (seed 004): the envelope every negotiation message travels in, its typed
//! payloads, and the EIP-712 signature that binds the envelope to the sender's wallet.
//!
//! The signature is an EIP-712 signature (domain `HIRE`, version `1.0`, the chain id) over
//! `HireMessage(string protocol,string messageType,address from,address to,string timestamp,
//! string conversationId,bytes32 payloadHash)`, where `payloadHash` is the keccak256 of the payload
//! as canonical JSON (object keys sorted, no whitespace). Any client that can sign typed data can
//! take part; the timestamp is signed exactly as sent.

use agentpact_contracts::closed_set;
use alloy::{
    primitives::{Address, B256, Signature, keccak256},
    sol_types::{Eip712Domain, SolStruct, eip712_domain},
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

/// The protocol every message names.
pub const PROTOCOL: &str = "HIRE/1.0";

/// The longest conversation id accepted.
pub const MAX_CONVERSATION_ID: usize = 64;

/// The largest payload, in bytes of its canonical JSON: a negotiation message is a task, terms
/// or questions, not a document (link one instead).
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024;

/// The longest timestamp: RFC 3339 with nanoseconds and an offset (`2025-01-30T10:00:00.123456789+00:00`).
pub const MAX_TIMESTAMP: usize = 35;

alloy::sol! {
    /// What a HIRE/1.0 message's signature covers.
    struct HireMessage {
        string protocol;
        string messageType;
        address from;
        address to;
        string timestamp;
        string conversationId;
        bytes32 payloadHash;
    }
}

closed_set! {
    serde;
    /// The eight message types of seed 004, in its order, named as on the wire.
    pub enum MessageType {
        /// Seeker → worker: initial interest.
        Inquiry => "inquiry",
        /// Worker → seeker: what can be done.
        Capability => "capability",
        /// Seeker → worker: a formal task proposal (puts terms on the table).
        Proposal => "proposal",
        /// Either: questions or answers.
        Clarification => "clarification",
        /// Worker → seeker: modified terms.
        Counter => "counter",
        /// Either: accept the terms on the table.
        Accept => "accept",
        /// Either: decline to proceed.
        Reject => "reject",
        /// The relay: the agreement became a pact.
        Contract => "contract",
    }
}

/// A HIRE/1.0 message as it travels: seed 004's envelope, `from`/`to` being agents' addresses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// Always [`PROTOCOL`].
    pub protocol: String,
    /// The message type.
    #[serde(rename = "type")]
    pub kind: MessageType,
    /// The sender's wallet.
    pub from: Address,
    /// The recipient's wallet.
    pub to: Address,
    /// When the sender wrote it, RFC 3339 / ISO 8601 (signed as written).
    pub timestamp: String,
    /// The conversation it belongs to (chosen by whoever opens it).
    pub conversation_id: String,
    /// The type's payload.
    pub payload: Value,
    /// The sender's EIP-712 signature, 0x and 130 hex digits.
    pub signature: String,
}

/// Why a message cannot even be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// Not the protocol this relay speaks.
    #[error("protocol must be \"{PROTOCOL}\", not {0:?}")]
    Protocol(String),
    /// The timestamp is not ISO 8601.
    #[error("timestamp must be ISO 8601 such as 2025-01-30T10:00:00Z, not {0:?}")]
    Timestamp(String),
    /// The conversation id is empty, too long or has odd characters.
    #[error("conversation_id must be 1-{MAX_CONVERSATION_ID} letters, digits, '_' or '-'")]
    ConversationId,
    /// The payload does not fit the type.
    #[error("payload of a {kind} message: {why}")]
    Payload {
        /// The type.
        kind: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The signature is not 65 bytes of hex.
    #[error("signature must be 0x and 130 hex digits (an EIP-712 signature)")]
    Signature,
    /// The payload is larger than [`MAX_PAYLOAD_BYTES`].
    #[error("the payload is {0} bytes; at most {MAX_PAYLOAD_BYTES} are relayed (link a document instead)")]
    TooLarge(usize),
    /// A text holds a NUL character, which nothing downstream can store.
    #[error("the payload holds a NUL character (\\u0000); remove it")]
    Nul,
}

/// Whether `id` can name a conversation: 1 to [`MAX_CONVERSATION_ID`] ASCII letters, digits,
/// `_` or `-`.
pub fn conversation_id_ok(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_CONVERSATION_ID
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Envelope {
    /// A `kind` message from `from` to `to` in conversation `id`, stamped `timestamp`, unsigned.
    pub fn new(
        kind: MessageType,
        from: Address,
        to: Address,
        id: &str,
        timestamp: String,
        payload: Value,
    ) -> Self {
        Self {
            protocol: PROTOCOL.into(),
            kind,
            from,
            to,
            timestamp,
            conversation_id: id.to_owned(),
            payload,
            signature: String::new(),
        }
    }

    /// The message signed by `sign`, which signs the EIP-712 hash on `chain_id` with the sender's key.
    pub fn signed_with<E>(
        mut self,
        chain_id: u64,
        sign: impl FnOnce(&B256) -> Result<Signature, E>,
    ) -> Result<Self, E> {
        self.signature = sign(&self.signing_hash(chain_id))?.to_string();
        Ok(self)
    }

    /// The EIP-712 hash the signature covers, on `chain_id`.
    pub fn signing_hash(&self, chain_id: u64) -> B256 {
        self.typed().eip712_signing_hash(&domain(chain_id))
    }

    /// The wallet that signed the message, if the signature is well formed.
    pub fn signer(&self, chain_id: u64) -> Result<Address, Malformed> {
        let signature: Signature = self.signature.parse().map_err(|_| Malformed::Signature)?;
        signature.recover_address_from_prehash(&self.signing_hash(chain_id)).map_err(|_| Malformed::Signature)
    }

    /// When the sender says it wrote the message: RFC 3339, at most [`MAX_TIMESTAMP`] characters
    /// (nanoseconds at most; the timestamp is stored and signed as written).
    pub fn sent_at(&self) -> Result<DateTime<Utc>, Malformed> {
        let bad = || Malformed::Timestamp(self.timestamp.chars().take(40).collect());
        if self.timestamp.len() > MAX_TIMESTAMP {
            return Err(bad());
        }
        DateTime::parse_from_rfc3339(&self.timestamp).map(|t| t.with_timezone(&Utc)).map_err(|_| bad())
    }

    /// Checks everything that does not need the conversation: protocol, timestamp, id, payload
    /// shape, signature shape. Returns the typed payload.
    pub fn check(&self) -> Result<Payload, Malformed> {
        if self.protocol != PROTOCOL {
            return Err(Malformed::Protocol(self.protocol.chars().take(40).collect()));
        }
        self.sent_at()?;
        if !conversation_id_ok(&self.conversation_id) {
            return Err(Malformed::ConversationId);
        }
        if self.signature.len() != 132 {
            return Err(Malformed::Signature);
        }
        let bytes = canonical_json(&self.payload).len();
        if bytes > MAX_PAYLOAD_BYTES {
            return Err(Malformed::TooLarge(bytes));
        }
        if agentpact_schema::holds_nul(&self.payload) {
            return Err(Malformed::Nul);
        }
        Payload::parse(self.kind, &self.payload)
    }

    fn typed(&self) -> HireMessage {
        HireMessage {
            protocol: self.protocol.clone(),
            messageType: self.kind.name().to_owned(),
            from: self.from,
            to: self.to,
            timestamp: self.timestamp.clone(),
            conversationId: self.conversation_id.clone(),
            payloadHash: keccak256(canonical_json(&self.payload)),
        }
    }
}

/// The EIP-712 domain of HIRE/1.0 on `chain_id`.
pub fn domain(chain_id: u64) -> Eip712Domain {
    eip712_domain! { name: "HIRE", version: "1.0", chain_id: chain_id, }
}

/// `value` as JSON with every object's keys sorted and no whitespace: what `payloadHash` and the
/// terms document hash.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(","))
        }
        other => other.to_string(),
    }
}

/// A message's content, by type (seed 004's example payloads).
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// `task`, `requirements?`, `budget?`.
    Inquiry(Inquiry),
    /// `capabilities?`, `price?`, `message?`.
    Capability(CapabilityOffer),
    /// `task`, `requirements?`, `budget`, `deadline?`.
    Proposal(Proposal),
    /// `questions?` and/or `answers?`.
    Clarification(Clarification),
    /// `price`, `accepted_requirements?`, `estimated_delivery?`.
    Counter(Counter),
    /// `accepted_terms { price, deadline? }`.
    Accept(Accept),
    /// `reason?`.
    Reject(Reject),
    /// `pact_id`, `spec_hash`.
    Contract(ContractNote),
}

impl Payload {
    fn parse(kind: MessageType, value: &Value) -> Result<Self, Malformed> {
        fn typed<T: DeserializeOwned>(kind: MessageType, value: &Value) -> Result<T, Malformed> {
            serde_json::from_value(value.clone())
                .map_err(|e| Malformed::Payload { kind: kind.name(), why: e.to_string() })
        }
        let payload = match kind {
            MessageType::Inquiry => Self::Inquiry(typed(kind, value)?),
            MessageType::Capability => Self::Capability(typed(kind, value)?),
            MessageType::Proposal => Self::Proposal(typed(kind, value)?),
            MessageType::Clarification => {
                let c: Clarification = typed(kind, value)?;
                if c.questions.is_empty() && c.answers.is_empty() {
                    return Err(Malformed::Payload {
                        kind: kind.name(),
                        why: "give questions or answers".into(),
                    });
                }
                Self::Clarification(c)
            }
            MessageType::Counter => Self::Counter(typed(kind, value)?),
            MessageType::Accept => Self::Accept(typed(kind, value)?),
            MessageType::Reject => Self::Reject(typed(kind, value)?),
            MessageType::Contract => Self::Contract(typed(kind, value)?),
        };
        Ok(payload)
    }
}

/// An `inquiry`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inquiry {
    /// What the seeker wants done.
    pub task: String,
    /// Specifics.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// A rough budget, e.g. "5 USDC".
    pub budget: Option<String>,
}

/// A `capability` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityOffer {
    /// What the worker can do.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Its price, e.g. "5 USDC".
    pub price: Option<String>,
    /// Free words.
    pub message: Option<String>,
}

/// A `proposal`: the seeker's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    /// The task.
    pub task: String,
    /// Specific requirements.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// The budget, e.g. "5 USDC".
    pub budget: String,
    /// ISO 8601 deadline.
    pub deadline: Option<String>,
    /// The price in stages, each due by its own deadline (AgentPact's extension: absent is one
    /// payment, and such a payload reads and hashes as seed 004's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageOffer>>,
}

/// The longest stage title, in bytes.
pub const MAX_STAGE_TITLE: usize = 64;

/// One stage of terms in stages: a part of the price, due by its own deadline. Escrow v4 pays it
/// on its own (docs/contracts.md §Stages); the stages' prices sum to the terms' price and the
/// last one's deadline is the terms' deadline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageOffer {
    /// What the stage delivers, e.g. "wireframes" (at most [`MAX_STAGE_TITLE`] bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its part of the price, in the terms' currency, e.g. "2 USDC".
    pub price: String,
    /// ISO 8601 deadline of its delivery.
    pub deadline: String,
}

/// A `clarification`: questions, answers, or both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clarification {
    /// Questions.
    #[serde(default)]
    pub questions: Vec<String>,
    /// Answers.
    #[serde(default)]
    pub answers: Vec<String>,
}

/// A `counter`: the worker's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counter {
    /// The requirements the worker takes on (all of the proposal's when absent).
    pub accepted_requirements: Option<Vec<String>>,
    /// The price, e.g. "5 USDC".
    pub price: String,
    /// ISO 8601 delivery (the new deadline).
    pub estimated_delivery: Option<String>,
    /// The price in stages (the table's stages when absent; `[]` for one payment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageOffer>>,
}

/// An `accept`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accept {
    /// The terms accepted: they must be the ones on the table.
    pub accepted_terms: AcceptedTerms,
}

/// The terms an `accept` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptedTerms {
    /// The price, e.g. "5 USDC".
    pub price: String,
    /// ISO 8601 deadline.
    pub deadline: Option<String>,
    /// The stages accepted, when named: they must be the table's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageOffer>>,
}

/// A `reject`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reject {
    /// Why.
    pub reason: Option<String>,
}

/// The relay's `contract` note: the pact that carries the agreed terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractNote {
    /// The pact id.
    pub pact_id: String,
    /// Its spec hash: keccak256 of the terms document.
    pub spec_hash: B256,
}

#[cfg(test)]
mod tests {
    use alloy::signers::{SignerSync, local::PrivateKeySigner};
    use serde_json::json;

    use super::*;

    fn proposal(from: Address, to: Address) -> Envelope {
        let payload = json!({ "task": "logo design", "requirements": ["SVG format"], "budget": "5 ETH",
                              "deadline": "2025-01-31T12:00:00Z" });
        Envelope::new(MessageType::Proposal, from, to, "conv_xyz", "2025-01-30T10:00:00Z".into(), payload)
    }

    #[test]
    fn a_signature_binds_sender_payload_and_chain() {
        let key = PrivateKeySigner::random();
        let m = proposal(key.address(), Address::repeat_byte(2))
            .signed_with(31337, |hash| key.sign_hash_sync(hash))
            .expect("sign");
        assert!(m.check().is_ok());
        assert_eq!(m.signer(31337), Ok(key.address()));
        assert_ne!(m.signer(84532), Ok(key.address()), "another chain's domain");
        let mut tampered = m.clone();
        tampered.payload["budget"] = json!("50 ETH");
        assert_ne!(tampered.signer(31337), Ok(key.address()));
        // Key order does not matter; content does.
        let mut reordered = m.clone();
        reordered.payload = serde_json::from_str(
            r#"{"deadline":"2025-01-31T12:00:00Z","budget":"5 ETH","requirements":["SVG format"],"task":"logo design"}"#,
        )
        .expect("json");
        assert_eq!(reordered.signer(31337), Ok(key.address()));
    }

    #[test]
    fn payloads_are_typed() {
        let mut m = proposal(Address::ZERO, Address::ZERO);
        m.signature = format!("0x{}", "0".repeat(130));
        m.payload = json!({ "task": "x" });
        assert!(matches!(m.check(), Err(Malformed::Payload { kind: "proposal", .. })));
        m.kind = MessageType::Clarification;
        m.payload = json!({});
        assert!(matches!(m.check(), Err(Malformed::Payload { .. })));
        m.protocol = "HIRE/2.0".into();
        assert!(matches!(m.check(), Err(Malformed::Protocol(_))));
    }
}
