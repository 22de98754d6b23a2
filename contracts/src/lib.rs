//! AgentPact's on-chain half, seen from Rust.
//!
//! - [`bindings`]: alloy `sol!` bindings generated from the committed artifacts in
//!   `contracts/artifacts` (built by `contracts/build` from `contracts/src`).
//! - [`PactStatus`] and [`Initiator`]: the contract's enums with their human names.
//! - [`deploy`]: deploys OracleRegistry and AgentPact and reports where and when.

pub mod bindings;
mod deploy;
mod status;

pub use bindings::{AgentPact, OracleRegistry};
pub use deploy::{DeployError, DeployOptions, Deployment, deploy};
pub use status::{Initiator, PactStatus, UnknownCode};
