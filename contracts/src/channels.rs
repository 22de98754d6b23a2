//! The Postgres notification channels one part of the stack announces on and another listens to.

use alloy::primitives::{Address, U256};
use serde::{Deserialize, Serialize};

/// The channel the indexer announces each committed pact change on, with a [`PactChange`] as
/// JSON; the API's subscriptions listen to it.
pub const PACT_CHANNEL: &str = "pact_updated";

/// A committed change of one pact, as the indexer announces it on [`PACT_CHANNEL`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PactChange {
    /// The chain.
    pub chain_id: u64,
    /// The pact (decimal on the wire, as every pact id the API shows).
    #[serde(serialize_with = "decimal")]
    pub pact_id: U256,
    /// Its status after the change (the contract's code).
    pub status: u8,
    /// The block of the change.
    pub block: u64,
    /// Its creator, buyer, seller, arbitrator and oracles (as far as known).
    pub parties: Vec<Address>,
}

/// A `U256` as its decimal string (serde's default for it is hex).
fn decimal<S: serde::Serializer>(n: &U256, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_goes_on_the_wire_as_the_api_reads_it() {
        let change = PactChange {
            chain_id: 31337,
            pact_id: U256::from(12),
            status: 1,
            block: 7,
            parties: vec![Address::ZERO],
        };
        let wire = serde_json::to_value(&change).expect("serializes");
        assert_eq!(wire["pactId"], "12");
        assert_eq!(wire["chainId"], 31337);
        assert_eq!(serde_json::from_value::<PactChange>(wire).expect("reads back"), change);
    }
}
