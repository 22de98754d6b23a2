//! The contracts' events by name: the closed set the journal's `events.kind` holds, shared by the
//! indexer that writes it and the api that reads it back.

/// One of the events of AgentPact, OracleRegistry and AgentRegistry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `PactCreated`.
    PactCreated,
    /// `PactAccepted`.
    PactAccepted,
    /// `PactCancelled`.
    PactCancelled,
    /// `WorkStarted`.
    WorkStarted,
    /// `WorkSubmitted`.
    WorkSubmitted,
    /// `VerificationSubmitted`.
    VerificationSubmitted,
    /// `VerificationFinalized`.
    VerificationFinalized,
    /// `WorkApproved`.
    WorkApproved,
    /// `WorkRejected`.
    WorkRejected,
    /// `DisputeRaised`.
    DisputeRaised,
    /// `DisputeResolved`.
    DisputeResolved,
    /// `TimeoutClaimed`.
    TimeoutClaimed,
    /// `SettlementProposed`.
    SettlementProposed,
    /// `SettlementWithdrawn`.
    SettlementWithdrawn,
    /// `SettlementAccepted`.
    SettlementAccepted,
    /// `Payout`.
    Payout,
    /// `Withdrawn`.
    Withdrawn,
    /// `CurrencyAllowed`.
    CurrencyAllowed,
    /// `OracleRegistered`.
    OracleRegistered,
    /// `StakeIncreased`.
    StakeIncreased,
    /// `CapabilitiesUpdated`.
    CapabilitiesUpdated,
    /// `OracleDeregistered`.
    OracleDeregistered,
    /// `StakeWithdrawn`.
    StakeWithdrawn,
    /// `AgentRegistered`.
    AgentRegistered,
    /// `ProfileUpdated`.
    ProfileUpdated,
    /// `AgentDeactivated`.
    AgentDeactivated,
    /// `AgentReactivated`.
    AgentReactivated,
    /// `FeedbackGiven`.
    FeedbackGiven,
}

impl EventKind {
    /// Every kind, in the order the contracts declare them.
    pub const ALL: [Self; 28] = [
        Self::PactCreated,
        Self::PactAccepted,
        Self::PactCancelled,
        Self::WorkStarted,
        Self::WorkSubmitted,
        Self::VerificationSubmitted,
        Self::VerificationFinalized,
        Self::WorkApproved,
        Self::WorkRejected,
        Self::DisputeRaised,
        Self::DisputeResolved,
        Self::TimeoutClaimed,
        Self::SettlementProposed,
        Self::SettlementWithdrawn,
        Self::SettlementAccepted,
        Self::Payout,
        Self::Withdrawn,
        Self::CurrencyAllowed,
        Self::OracleRegistered,
        Self::StakeIncreased,
        Self::CapabilitiesUpdated,
        Self::OracleDeregistered,
        Self::StakeWithdrawn,
        Self::AgentRegistered,
        Self::ProfileUpdated,
        Self::AgentDeactivated,
        Self::AgentReactivated,
        Self::FeedbackGiven,
    ];

    /// The event's name, as in the contract and in `events.kind`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::PactCreated => "PactCreated",
            Self::PactAccepted => "PactAccepted",
            Self::PactCancelled => "PactCancelled",
            Self::WorkStarted => "WorkStarted",
            Self::WorkSubmitted => "WorkSubmitted",
            Self::VerificationSubmitted => "VerificationSubmitted",
            Self::VerificationFinalized => "VerificationFinalized",
            Self::WorkApproved => "WorkApproved",
            Self::WorkRejected => "WorkRejected",
            Self::DisputeRaised => "DisputeRaised",
            Self::DisputeResolved => "DisputeResolved",
            Self::TimeoutClaimed => "TimeoutClaimed",
            Self::SettlementProposed => "SettlementProposed",
            Self::SettlementWithdrawn => "SettlementWithdrawn",
            Self::SettlementAccepted => "SettlementAccepted",
            Self::Payout => "Payout",
            Self::Withdrawn => "Withdrawn",
            Self::CurrencyAllowed => "CurrencyAllowed",
            Self::OracleRegistered => "OracleRegistered",
            Self::StakeIncreased => "StakeIncreased",
            Self::CapabilitiesUpdated => "CapabilitiesUpdated",
            Self::OracleDeregistered => "OracleDeregistered",
            Self::StakeWithdrawn => "StakeWithdrawn",
            Self::AgentRegistered => "AgentRegistered",
            Self::ProfileUpdated => "ProfileUpdated",
            Self::AgentDeactivated => "AgentDeactivated",
            Self::AgentReactivated => "AgentReactivated",
            Self::FeedbackGiven => "FeedbackGiven",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(EventKind::from_name("payout"), None, "names are exact");
    }
}
