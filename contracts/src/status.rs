//! The contract's `Status` and `Initiator` enums with the codes and names of the public interface.

use std::fmt;

/// A code that names no variant of the enum it was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} code {code}")]
pub struct UnknownCode {
    /// Which enum was being read.
    pub kind: &'static str,
    /// The code that was read.
    pub code: u8,
}

/// Where a pact stands. The numeric codes are those of `AgentPact.Status`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[repr(u8)]
pub enum PactStatus {
    /// Open for the counterparty to accept.
    Negotiating = 0,
    /// Both parties deposited, ready to start.
    Funded = 1,
    /// Work underway.
    InProgress = 2,
    /// Work submitted, awaiting oracle scores.
    PendingVerify = 3,
    /// Successfully completed, payment released.
    Completed = 4,
    /// Under dispute.
    Disputed = 5,
    /// Refunded to the buyer (or to the creator of a pact nobody accepted).
    Refunded = 6,
    /// Oracle verification passed, awaiting buyer approval.
    PendingApproval = 7,
    /// Ended with the payment divided between the sides: a settlement both accepted, or a ruling.
    Split = 8,
}

impl PactStatus {
    /// Every status, in code order.
    pub const ALL: [Self; 9] = [
        Self::Negotiating,
        Self::Funded,
        Self::InProgress,
        Self::PendingVerify,
        Self::Completed,
        Self::Disputed,
        Self::Refunded,
        Self::PendingApproval,
        Self::Split,
    ];

    /// The contract's numeric code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The name used in the contract and in every user-facing output, e.g. `PENDING_APPROVAL`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Negotiating => "NEGOTIATING",
            Self::Funded => "FUNDED",
            Self::InProgress => "IN_PROGRESS",
            Self::PendingVerify => "PENDING_VERIFY",
            Self::Completed => "COMPLETED",
            Self::Disputed => "DISPUTED",
            Self::Refunded => "REFUNDED",
            Self::PendingApproval => "PENDING_APPROVAL",
            Self::Split => "SPLIT",
        }
    }

    /// One sentence saying what the status means.
    pub const fn description(self) -> &'static str {
        match self {
            Self::Negotiating => "Open for counterparty to accept",
            Self::Funded => "Both parties staked, ready to start",
            Self::InProgress => "Work underway",
            Self::PendingVerify => "Work submitted, awaiting oracle scores",
            Self::Completed => "Successfully completed, payment released",
            Self::Disputed => "Under dispute",
            Self::Refunded => "Refunded to buyer",
            Self::PendingApproval => "Oracle verification passed, awaiting buyer approval",
            Self::Split => "Ended with the payment divided between buyer and seller",
        }
    }

    /// Whether the pact can no longer change.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Refunded | Self::Split)
    }
}

impl TryFrom<u8> for PactStatus {
    type Error = UnknownCode;

    fn try_from(code: u8) -> Result<Self, Self::Error> {
        Self::ALL.get(usize::from(code)).copied().ok_or(UnknownCode { kind: "status", code })
    }
}

impl fmt::Display for PactStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which side created a pact. The numeric codes are those of `AgentPact.Initiator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[repr(u8)]
pub enum Initiator {
    /// A request for work: the buyer created it and deposited payment + stake.
    Buyer = 0,
    /// An offer: the seller created it and deposited its stake.
    Seller = 1,
}

impl Initiator {
    /// The contract's numeric code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// `BUYER` or `SELLER`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Buyer => "BUYER",
            Self::Seller => "SELLER",
        }
    }

    /// The side that accepts a pact this side created.
    pub const fn counterparty(self) -> Self {
        match self {
            Self::Buyer => Self::Seller,
            Self::Seller => Self::Buyer,
        }
    }
}

impl TryFrom<u8> for Initiator {
    type Error = UnknownCode;

    fn try_from(code: u8) -> Result<Self, Self::Error> {
        match code {
            0 => Ok(Self::Buyer),
            1 => Ok(Self::Seller),
            _ => Err(UnknownCode { kind: "initiator", code }),
        }
    }
}

impl fmt::Display for Initiator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_round_trip_and_match_the_seed_table() {
        let names: Vec<_> = PactStatus::ALL.iter().map(|s| (s.code(), s.name())).collect();
        assert_eq!(
            names,
            [
                (0, "NEGOTIATING"),
                (1, "FUNDED"),
                (2, "IN_PROGRESS"),
                (3, "PENDING_VERIFY"),
                (4, "COMPLETED"),
                (5, "DISPUTED"),
                (6, "REFUNDED"),
                (7, "PENDING_APPROVAL"),
                (8, "SPLIT"),
            ]
        );
        for s in PactStatus::ALL {
            assert_eq!(PactStatus::try_from(s.code()), Ok(s));
        }
        assert_eq!(PactStatus::try_from(9), Err(UnknownCode { kind: "status", code: 9 }));
    }

    #[test]
    fn initiator_codes_round_trip() {
        assert_eq!(Initiator::try_from(0), Ok(Initiator::Buyer));
        assert_eq!(Initiator::try_from(1), Ok(Initiator::Seller));
        assert!(Initiator::try_from(2).is_err());
        assert_eq!(Initiator::Buyer.counterparty(), Initiator::Seller);
        assert_eq!(serde_json::to_string(&Initiator::Seller).ok().as_deref(), Some("\"SELLER\""));
    }
}
