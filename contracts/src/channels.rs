//! The Postgres notification channels one part of the stack announces on and another listens to.

use alloy::primitives::{Address, U256};
use serde::Deserialize;

/// The channel the indexer announces each committed pact change on, with a [`PactChange`] as
/// JSON; the API's subscriptions listen to it.
pub const PACT_CHANNEL: &str = "pact_updated";

/// A committed change of one pact, as the indexer announces it on [`PACT_CHANNEL`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PactChange {
    /// The chain.
    pub chain_id: u64,
    /// The pact.
    pub pact_id: U256,
    /// Its status after the change (the contract's code).
    pub status: u8,
    /// The block of the change.
    pub block: u64,
    /// Its creator, buyer, seller, arbitrator and oracles (as far as known).
    pub parties: Vec<Address>,
}
