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
        /// `createPact`: a pact was offered, its creator's deposit escrowed.
        PactCreated => "PactCreated",
        /// `acceptPact`: the counterparty accepted and deposited.
        PactAccepted => "PactAccepted",
        /// `cancelPact`: the creator withdrew a pact nobody had accepted.
        PactCancelled => "PactCancelled",
        /// `startWork`: the seller started.
        WorkStarted => "WorkStarted",
        /// `submitWork`: the seller submitted its proof.
        WorkSubmitted => "WorkSubmitted",
        /// `submitVerification`: an oracle scored the work.
        VerificationSubmitted => "VerificationSubmitted",
        /// `finalizeVerification`: the oracles' weighted score was tallied.
        VerificationFinalized => "VerificationFinalized",
        /// `approveWork` or `autoApprove`: the work was approved.
        WorkApproved => "WorkApproved",
        /// `rejectWork`: the buyer rejected the work.
        WorkRejected => "WorkRejected",
        /// `raiseDispute`: a party took the pact to its arbitrator.
        DisputeRaised => "DisputeRaised",
        /// `resolveDispute(Share)`: the arbitrator ruled.
        DisputeResolved => "DisputeResolved",
        /// `claimTimeout`: a window closed and the clock decided.
        TimeoutClaimed => "TimeoutClaimed",
        /// `proposeSettlement`: a party offered a division of the payment.
        SettlementProposed => "SettlementProposed",
        /// `withdrawSettlement`: its maker withdrew an offer.
        SettlementWithdrawn => "SettlementWithdrawn",
        /// `voidOffers`: the arbitrator or an oracle, about to give its verdict, voided the offers.
        OffersVoided => "OffersVoided",
        /// `acceptSettlement`: the other party accepted an offer.
        SettlementAccepted => "SettlementAccepted",
        /// The last event of a pact's last transaction: how it ended, in which status.
        PactEnded => "PactEnded",
        /// `createStagedPact` with two stages or more: each stage's amount and deadline.
        PactStaged => "PactStaged",
        /// `submitStage`: the seller delivered one stage.
        StageSubmitted => "StageSubmitted",
        /// `scoreStage`: an oracle scored one stage.
        StageScored => "StageScored",
        /// `finalizeStage`: one stage's scores were tallied.
        StageFinalized => "StageFinalized",
        /// `approveStage` or `autoApproveStage`: one stage was approved.
        StageApproved => "StageApproved",
        /// `rejectStage`: the buyer rejected one stage.
        StageRejected => "StageRejected",
        /// `disputeStage`: a party took one stage to the arbitrator.
        StageDisputed => "StageDisputed",
        /// `resolveStage`: the arbitrator ruled on one stage.
        StageResolved => "StageResolved",
        /// `claimStageTimeout`: a window of one stage closed and the clock decided.
        StageTimedOut => "StageTimedOut",
        /// One stage of a pact of several ended: how, in which status, and each side's part.
        StageEnded => "StageEnded",
        /// A credit to a party or an oracle.
        Payout => "Payout",
        /// `withdraw`: an account took out its credits.
        Withdrawn => "Withdrawn",
        /// The escrow's constructor allowed a currency.
        CurrencyAllowed => "CurrencyAllowed",
        /// OracleRegistry: an oracle registered with its stake.
        OracleRegistered => "OracleRegistered",
        /// OracleRegistry: an oracle added stake.
        StakeIncreased => "StakeIncreased",
        /// OracleRegistry: an oracle changed its capabilities.
        CapabilitiesUpdated => "CapabilitiesUpdated",
        /// OracleRegistry: an oracle deregistered.
        OracleDeregistered => "OracleDeregistered",
        /// OracleRegistry: an oracle took its stake out.
        StakeWithdrawn => "StakeWithdrawn",
        /// AgentRegistry: an agent registered its profile.
        AgentRegistered => "AgentRegistered",
        /// AgentRegistry: an agent changed its profile.
        ProfileUpdated => "ProfileUpdated",
        /// AgentRegistry: an agent deactivated itself.
        AgentDeactivated => "AgentDeactivated",
        /// AgentRegistry: an agent reactivated itself.
        AgentReactivated => "AgentReactivated",
        /// AgentRegistry: a party of a finished pact rated the other.
        FeedbackGiven => "FeedbackGiven",
        /// ERC-8004 Identity Registry: an agent token changed hands (ERC-721 `Transfer`).
        Transfer => "Transfer",
        /// ERC-8004 Identity Registry: an agent registered.
        Registered => "Registered",
        /// ERC-8004 Identity Registry: an agent's registration file moved.
        UriUpdated => "URIUpdated",
        /// ERC-8004 Identity Registry: an agent's metadata entry was set.
        MetadataSet => "MetadataSet",
        /// ERC-8004 Reputation Registry: feedback was given.
        NewFeedback => "NewFeedback",
        /// ERC-8004 Reputation Registry: feedback was revoked.
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
