//! Negotiation (seed 004): signed HIRE/1.0 messages between a seeker (any wallet) and a worker (a
//! registered agent), relayed by the api server. The declared second writer of the database, of
//! its own tables only (`conversations`, `negotiation_messages`; docs/architecture.md).
//!
//! - [`message`]: the envelope, its typed payloads and its EIP-712 signature.
//! - [`price`]: a price as messages name it ("5 USDC"), and in a currency's base units.
//! - [`machine`]: the conversation state machine with its timeouts.
//! - [`offer`]: what terms must be for an accept to make a pact of them.
//! - [`relay`]: checks a message, stores it and announces it; links the pact that carries the terms.
//! - [`store`]: the relay's tables, every query checked at compile time, every row read fail-loud.
//! - [`http`]: the relay's endpoints, which the api server mounts.
//! - [`client`]: the typed client of those endpoints, which the MCP server uses.
//! - [`Code`]: the closed set of refusal codes both sides speak.

pub mod client;
mod code;
pub mod http;
pub mod machine;
pub mod message;
#[cfg(test)]
mod model_test;
pub mod offer;
pub mod price;
pub mod relay;
pub mod store;

pub use client::{ClientError, RelayClient};
pub use code::Code;
pub use machine::{Conversation, Refusal, StageTerm, Status, Terms, Timeouts};
pub use message::{Envelope, MessageType, PROTOCOL};
pub use price::{Price, PriceError};
pub use relay::{Accepted, Agreement, AgreementError, Clock, Relay, RelayError};
pub use store::{
    ConversationFilter, ConversationRecord, MessageNote, NEGOTIATION_CHANNEL, Store, StoreError,
    StoredMessage,
};
