//! The closed sets GraphQL shows and takes, as enums of the schema. Each mirrors the Rust enum of
//! the crate that owns the set (`remote`: the derive matches both ways, so a member added there
//! does not build until it is added here). Where the set has names of its own (the index's
//! column, the protocol's field), the schema's values are those names, as the fields answered
//! when they were Strings, and the test below holds each value to its name: one spelling in the
//! index, webhook bodies, MCP answers and GraphQL.

use async_graphql::Enum;

/// An event of AgentPact, OracleRegistry, AgentRegistry or the ERC-8004 registries, named as in
/// the contract.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[graphql(remote = "agentpact_contracts::EventKind", rename_items = "PascalCase")]
pub enum EventKind {
    /// `createPact`: a pact was offered, its creator's deposit escrowed.
    PactCreated,
    /// `acceptPact`: the counterparty accepted and deposited.
    PactAccepted,
    /// `cancelPact`: the creator withdrew a pact nobody had accepted.
    PactCancelled,
    /// `startWork`: the seller started.
    WorkStarted,
    /// `submitWork`: the seller submitted its proof.
    WorkSubmitted,
    /// `submitVerification`: an oracle scored the work.
    VerificationSubmitted,
    /// `finalizeVerification`: the oracles' weighted score was tallied.
    VerificationFinalized,
    /// `approveWork` or `autoApprove`: the work was approved.
    WorkApproved,
    /// `rejectWork`: the buyer rejected the work.
    WorkRejected,
    /// `raiseDispute`: a party took the pact to its arbitrator.
    DisputeRaised,
    /// `resolveDispute(Share)`: the arbitrator ruled.
    DisputeResolved,
    /// `claimTimeout`: a window closed and the clock decided.
    TimeoutClaimed,
    /// `proposeSettlement`: a party offered a division of the payment.
    SettlementProposed,
    /// `withdrawSettlement`: its maker withdrew an offer.
    SettlementWithdrawn,
    /// `acceptSettlement`: the other party accepted an offer.
    SettlementAccepted,
    /// A credit to a party or an oracle.
    Payout,
    /// `withdraw`: an account took out its credits.
    Withdrawn,
    /// The escrow's constructor allowed a currency.
    CurrencyAllowed,
    /// OracleRegistry: an oracle registered with its stake.
    OracleRegistered,
    /// OracleRegistry: an oracle added stake.
    StakeIncreased,
    /// OracleRegistry: an oracle changed its capabilities.
    CapabilitiesUpdated,
    /// OracleRegistry: an oracle deregistered.
    OracleDeregistered,
    /// OracleRegistry: an oracle took its stake out.
    StakeWithdrawn,
    /// AgentRegistry: an agent registered its profile.
    AgentRegistered,
    /// AgentRegistry: an agent changed its profile.
    ProfileUpdated,
    /// AgentRegistry: an agent deactivated itself.
    AgentDeactivated,
    /// AgentRegistry: an agent reactivated itself.
    AgentReactivated,
    /// AgentRegistry: a party of a finished pact rated the other.
    FeedbackGiven,
    /// ERC-8004 Identity Registry: an agent token changed hands (ERC-721 `Transfer`).
    Transfer,
    /// ERC-8004 Identity Registry: an agent registered.
    Registered,
    /// ERC-8004 Identity Registry: an agent's registration file moved.
    #[graphql(name = "URIUpdated")]
    UriUpdated,
    /// ERC-8004 Identity Registry: an agent's metadata entry was set.
    MetadataSet,
    /// ERC-8004 Reputation Registry: feedback was given.
    NewFeedback,
    /// ERC-8004 Reputation Registry: feedback was revoked.
    FeedbackRevoked,
}

#[cfg(test)]
mod tests {
    use async_graphql::{Name, Value, resolver_utils::enum_value};

    use super::{
        super::{
            negotiation::{ConversationStatus, MessageType},
            types::PactOutcome,
            webhooks::NoticeKind,
        },
        *,
    };

    /// Every member of `all` shows in the schema as its own name.
    fn shown_as_named<R: Copy, G: From<R> + async_graphql::resolver_utils::EnumType>(
        all: &[R],
        name: fn(R) -> &'static str,
    ) {
        for &member in all {
            assert_eq!(enum_value(G::from(member)), Value::Enum(Name::new(name(member))));
        }
    }

    #[test]
    fn each_value_is_its_members_name_in_the_index_and_on_the_wire() {
        use agentpact_contracts as c;
        shown_as_named::<_, EventKind>(&c::EventKind::ALL[..], c::EventKind::name);
        shown_as_named::<_, NoticeKind>(&c::NoticeKind::ALL[..], c::NoticeKind::name);
        shown_as_named::<_, PactOutcome>(&c::Outcome::ALL[..], c::Outcome::name);
        use agentpact_negotiation as n;
        shown_as_named::<_, MessageType>(&n::MessageType::ALL[..], n::MessageType::name);
        shown_as_named::<_, ConversationStatus>(&n::Status::ALL[..], n::Status::name);
    }
}
