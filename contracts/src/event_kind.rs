//! The contracts' events by name: the closed set the journal's `events.kind` holds, shared by the
//! indexer that writes it and the api that reads it back. The list is checked against the `sol!`
//! bindings at compile time: a contract event without a kind here does not build.

use crate::{
    AgentPact::AgentPactEvents, AgentRegistry::AgentRegistryEvents, OracleRegistry::OracleRegistryEvents,
    closed_set,
};

closed_set! {
    serde, schema;
    /// One of the events of AgentPact, OracleRegistry and AgentRegistry, named as in the contract
    /// and in `events.kind`.
    pub enum EventKind {
        /// `PactCreated`.
        PactCreated => "PactCreated",
        /// `PactAccepted`.
        PactAccepted => "PactAccepted",
        /// `PactCancelled`.
        PactCancelled => "PactCancelled",
        /// `WorkStarted`.
        WorkStarted => "WorkStarted",
        /// `WorkSubmitted`.
        WorkSubmitted => "WorkSubmitted",
        /// `VerificationSubmitted`.
        VerificationSubmitted => "VerificationSubmitted",
        /// `VerificationFinalized`.
        VerificationFinalized => "VerificationFinalized",
        /// `WorkApproved`.
        WorkApproved => "WorkApproved",
        /// `WorkRejected`.
        WorkRejected => "WorkRejected",
        /// `DisputeRaised`.
        DisputeRaised => "DisputeRaised",
        /// `DisputeResolved`.
        DisputeResolved => "DisputeResolved",
        /// `TimeoutClaimed`.
        TimeoutClaimed => "TimeoutClaimed",
        /// `SettlementProposed`.
        SettlementProposed => "SettlementProposed",
        /// `SettlementWithdrawn`.
        SettlementWithdrawn => "SettlementWithdrawn",
        /// `SettlementAccepted`.
        SettlementAccepted => "SettlementAccepted",
        /// `Payout`.
        Payout => "Payout",
        /// `Withdrawn`.
        Withdrawn => "Withdrawn",
        /// `CurrencyAllowed`.
        CurrencyAllowed => "CurrencyAllowed",
        /// `OracleRegistered`.
        OracleRegistered => "OracleRegistered",
        /// `StakeIncreased`.
        StakeIncreased => "StakeIncreased",
        /// `CapabilitiesUpdated`.
        CapabilitiesUpdated => "CapabilitiesUpdated",
        /// `OracleDeregistered`.
        OracleDeregistered => "OracleDeregistered",
        /// `StakeWithdrawn`.
        StakeWithdrawn => "StakeWithdrawn",
        /// `AgentRegistered`.
        AgentRegistered => "AgentRegistered",
        /// `ProfileUpdated`.
        ProfileUpdated => "ProfileUpdated",
        /// `AgentDeactivated`.
        AgentDeactivated => "AgentDeactivated",
        /// `AgentReactivated`.
        AgentReactivated => "AgentReactivated",
        /// `FeedbackGiven`.
        FeedbackGiven => "FeedbackGiven",
        /// ERC-8004 Identity Registry: `Transfer` (ERC-721) of an agent token.
        Transfer => "Transfer",
        /// ERC-8004 Identity Registry: `Registered`.
        Registered => "Registered",
        /// ERC-8004 Identity Registry: `URIUpdated`.
        UriUpdated => "URIUpdated",
        /// ERC-8004 Identity Registry: `MetadataSet`.
        MetadataSet => "MetadataSet",
        /// ERC-8004 Reputation Registry: `NewFeedback`.
        NewFeedback => "NewFeedback",
        /// ERC-8004 Reputation Registry: `FeedbackRevoked`.
        FeedbackRevoked => "FeedbackRevoked",
    }
}

/// The events' names as the bindings generate them from the committed ABIs.
const CONTRACT_EVENTS: [&[&str]; 3] =
    [AgentPactEvents::VARIANT_NAMES, OracleRegistryEvents::VARIANT_NAMES, AgentRegistryEvents::VARIANT_NAMES];

/// The ERC-8004 registries' events the indexer follows (of all they emit: approvals and responses
/// are not followed; `crate::erc8004::FOLLOWED` holds their selectors).
pub const ERC8004_EVENTS: [&str; 6] =
    ["Transfer", "Registered", "URIUpdated", "MetadataSet", "NewFeedback", "FeedbackRevoked"];

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn is_kind(name: &str) -> bool {
    let mut i = 0;
    while i < EventKind::ALL.len() {
        if same(EventKind::ALL[i].name(), name) {
            return true;
        }
        i += 1;
    }
    false
}

// Every event of the bindings is a kind, and there are no more kinds than events: adding an event
// to a contract stops the build here until it has its kind (and, through `EventBody::kind`, its
// journal variant and every match that must handle it).
const _: () = {
    let mut events = 0;
    let mut c = 0;
    while c < CONTRACT_EVENTS.len() {
        let mut i = 0;
        while i < CONTRACT_EVENTS[c].len() {
            assert!(
                is_kind(CONTRACT_EVENTS[c][i]),
                "a contract event has no EventKind: add it to contracts/src/event_kind.rs"
            );
            events += 1;
            i += 1;
        }
        c += 1;
    }
    let mut i = 0;
    while i < ERC8004_EVENTS.len() {
        assert!(is_kind(ERC8004_EVENTS[i]), "a followed ERC-8004 event has no EventKind");
        events += 1;
        i += 1;
    }
    assert!(events == EventKind::ALL.len(), "an EventKind names no contract event");
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IdentityRegistry::IdentityRegistryEvents, ReputationRegistry::ReputationRegistryEvents};

    #[test]
    fn every_kind_reads_back_from_its_name_and_is_an_event_of_the_bindings() {
        let followed =
            [IdentityRegistryEvents::VARIANT_NAMES, ReputationRegistryEvents::VARIANT_NAMES].concat();
        assert!(ERC8004_EVENTS.iter().all(|e| followed.contains(e)), "{ERC8004_EVENTS:?} in {followed:?}");
        let events: std::collections::HashSet<&str> =
            CONTRACT_EVENTS.concat().into_iter().chain(ERC8004_EVENTS).collect();
        for kind in EventKind::ALL {
            assert_eq!(EventKind::from_name(kind.name()), Some(kind));
            assert!(events.contains(kind.name()), "{kind} is not an event of the contracts");
        }
        assert_eq!(events.len(), EventKind::ALL.len());
        assert_eq!(EventKind::from_name("payout"), None, "names are exact");
    }
}
