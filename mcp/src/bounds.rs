//! The bounds the tools declare in their input schemas and hold every call to
//! (`tools::schema_check`), beside the escrow's own in `agentpact_contracts::rules`.
//!
//! The registries' constants are the contracts' (`AgentRegistry.sol`, `OracleRegistry.sol`: counted
//! in bytes; `tests/tests/mcp_input.rs` reads each back from a deployed contract). The text lengths
//! are what a well-formed value of each kind can be, so an oversized one is refused by its length
//! before anything reads it.

/// Most capabilities one agent profile may list (AgentRegistry `MAX_CAPABILITIES`).
pub const MAX_AGENT_CAPABILITIES: usize = 16;
/// Longest agent or capability name, in bytes (AgentRegistry `MAX_NAME`).
pub const MAX_NAME: usize = 64;
/// Longest agent or capability description, in bytes (AgentRegistry `MAX_DESCRIPTION`).
pub const MAX_DESCRIPTION: usize = 1024;
/// Longest endpoint, metadata URI or feedback comment, in bytes (AgentRegistry `MAX_URI`).
pub const MAX_URI: usize = 256;
/// Most tags one feedback may carry (AgentRegistry `MAX_TAGS`).
pub const MAX_TAGS: usize = 8;
/// Longest feedback tag, in bytes (AgentRegistry `MAX_TAG`).
pub const MAX_TAG: usize = 32;
/// Most capabilities an oracle may register (OracleRegistry `MAX_CAPABILITIES`).
pub const MAX_ORACLE_CAPABILITIES: usize = 16;
/// Longest oracle capability, in bytes (OracleRegistry `MAX_CAPABILITY`).
pub const MAX_ORACLE_CAPABILITY: usize = 64;

/// An address: 0x and 40 hex digits.
pub const ADDRESS_CHARS: usize = 42;
/// A 32-byte hash: 0x and 64 hex digits.
pub const HASH_CHARS: usize = 66;
/// A webhook's target URL (`agentpact_push::target::MAX_URL`).
pub const URL_CHARS: usize = agentpact_push::target::MAX_URL;
/// A decimal amount: a `uint256` has 78 digits, and a point.
pub const AMOUNT_CHARS: usize = 80;
/// A currency: a symbol ("USDC") or a token's address.
pub const CURRENCY_CHARS: usize = ADDRESS_CHARS;
/// A price with its currency ("5 USDC"): an amount, a space and a symbol.
pub const PRICE_CHARS: usize = AMOUNT_CHARS + 1 + agentpact_negotiation::price::MAX_SYMBOL;
/// A cursor the read tools hand out (hex of the last row's sort key and id).
pub const CURSOR_CHARS: usize = 512;
/// A contract id: a pact id (at most 78 digits, perhaps after "#") or a conversation id.
pub const CONTRACT_ID_CHARS: usize = 80;
/// A conversation id, as the relay takes them.
pub const CONVERSATION_ID_CHARS: usize = agentpact_negotiation::message::MAX_CONVERSATION_ID;
/// An ISO 8601 time, as the relay takes them.
pub const TIME_CHARS: usize = agentpact_negotiation::message::MAX_TIMESTAMP;
/// A task description in a proposal (the relay takes 16 KiB of payload in all).
pub const TASK_CHARS: usize = 4096;
/// Most requirements one proposal lists.
pub const MAX_REQUIREMENTS: usize = 32;
/// Longest requirement in a proposal.
pub const REQUIREMENT_CHARS: usize = 1024;
/// A word the read tools take from a short list ("active", "buyer", "NEGOTIATING").
pub const WORD_CHARS: usize = 32;
