//! AgentPact's on-chain half, seen from Rust.
//!
//! - [`bindings`]: alloy `sol!` bindings generated from the committed artifacts in
//!   `contracts/artifacts` (built by `contracts/build` from `contracts/src`).
//! - [`PactStatus`] and [`Initiator`]: the contract's enums with their human names.
//! - [`deploy`]: deploys OracleRegistry, AgentPact and AgentRegistry and reports where and when.
//! - [`erc8004`]: where a chain's ERC-8004 registries are, and [`erc8004::deploy_registries`], the
//!   dev stack's and the tests' stand-ins for them on anvil.
//! - [`permit`]: EIP-2612 permits for token deposits in one transaction.
//! - [`rpc`]: how every part reaches a node: request and connect timeouts, a requests-per-second
//!   ceiling.
//! - [`rules`]: the escrow's rules on terms and the stake rule, for clients that refuse bad
//!   terms before sending them.
//! - [`links`]: which URI schemes are links (what our tools write, what the dashboard links).
//! - [`money`]: the one amount grammar and way of writing amounts, the currencies a deployment
//!   takes and which one a name means.
//! - [`vocab`]: the closed sets the index stores and every surface shows ([`Outcome`],
//!   [`DisputeCause`], [`DisputeOutcome`], [`OracleStatus`], [`ReputationRole`]).
//! - [`Contracts`] (one deployment's addresses) and [`channels`] (the notification channels and
//!   their payloads): vocabulary the indexer, the API and the MCP server share, so none of them
//!   depends on another for it.

mod addresses;
pub mod bindings;
pub mod channels;
mod deploy;
pub mod erc8004;
mod event_kind;
pub mod links;
pub mod money;
pub mod parse;
pub mod permit;
pub mod rpc;
pub mod rules;
mod status;
pub mod vocab;

pub use addresses::Contracts;
pub use bindings::{
    AgentPact, AgentRegistry, IdentityRegistry, OracleRegistry, ReputationRegistry, TestToken,
};
pub use deploy::{DeployError, DeployOptions, Deployment, deploy};
pub use erc8004::Erc8004;
pub use event_kind::EventKind;
pub use status::{Ending, Initiator, PactStatus, UnknownCode};
pub use vocab::{
    DeliveryState, DisputeCause, DisputeOutcome, NoticeKind, OracleStatus, Outcome, ReputationRole,
    WebhookMode, WindowKind,
};

/// The committed compiler artifacts (`abi`, `bytecode`, `deployedBytecode`), for tools that hand
/// the ABI to clients.
pub mod artifacts {
    /// AgentPact's artifact JSON.
    pub const AGENT_PACT: &str = include_str!("../artifacts/AgentPact.json");
    /// OracleRegistry's artifact JSON.
    pub const ORACLE_REGISTRY: &str = include_str!("../artifacts/OracleRegistry.json");
    /// AgentRegistry's artifact JSON.
    pub const AGENT_REGISTRY: &str = include_str!("../artifacts/AgentRegistry.json");
    /// The test and dev stand-in for ERC-8004's Identity Registry (contracts/dev).
    pub const IDENTITY_REGISTRY: &str = include_str!("../artifacts/dev/IdentityRegistry.json");
    /// The test and dev stand-in for ERC-8004's Reputation Registry (contracts/dev).
    pub const REPUTATION_REGISTRY: &str = include_str!("../artifacts/dev/ReputationRegistry.json");
}
