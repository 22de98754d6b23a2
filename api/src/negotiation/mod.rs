//! Negotiation (seed 004): signed HIRE/1.0 messages between two registered agents, relayed by the
//! api server. [`message`] is the envelope, its typed payloads and its EIP-712 signature;
//! [`machine`] the conversation state machine with its timeouts; [`relay`] checks, stores (the
//! append-only audit log) and announces messages; [`http`] serves the relay's endpoints.

pub mod http;
pub mod machine;
pub mod message;
pub mod relay;

pub use machine::{Conversation, Refusal, Status, Terms, Timeouts};
pub use message::{Envelope, MessageType, PROTOCOL};
pub use relay::{Accepted, CODES, Clock, NEGOTIATION_CHANNEL, Relay, RelayError, terms_document};
