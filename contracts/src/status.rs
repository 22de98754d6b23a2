//! The contract's `Status`, `Ending` and `Initiator` enums with the codes and names of the public interface,
//! each a [`closed_set!`](crate::closed_set): one list gives the enum, `ALL` and the names.

use crate::closed_set;

/// A code that names no variant of the enum it was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} code {code}")]
pub struct UnknownCode {
    /// Which enum was being read.
    pub kind: &'static str,
    /// The code that was read.
    pub code: u8,
}

/// The contract's numeric code of each member of a `#[repr(u8)]` closed set whose `ALL` is in code
/// order, and the member a code names (`kind` says which enum in the error).
macro_rules! coded {
    ($($set:ident: $kind:literal),+ $(,)?) => {$(
        impl $set {
            /// The contract's numeric code.
            pub const fn code(self) -> u8 {
                self as u8
            }
        }

        impl TryFrom<u8> for $set {
            type Error = UnknownCode;

            fn try_from(code: u8) -> Result<Self, Self::Error> {
                Self::ALL.get(usize::from(code)).copied().ok_or(UnknownCode { kind: $kind, code })
            }
        }
    )+};
}

coded!(PactStatus: "status", Ending: "ending", Initiator: "initiator");

closed_set! {
    serde, schema;
    /// Where a pact stands. The numeric codes are those of `AgentPact.Status`; the names are the
    /// contract's, used in every user-facing output; `ALL` is in code order.
    #[derive(PartialOrd, Ord)]
    #[repr(u8)]
    pub enum PactStatus {
        /// Open for the counterparty to accept.
        Negotiating = 0 => "NEGOTIATING",
        /// Both parties deposited, ready to start.
        Funded = 1 => "FUNDED",
        /// Work underway.
        InProgress = 2 => "IN_PROGRESS",
        /// Work submitted, awaiting oracle scores.
        PendingVerify = 3 => "PENDING_VERIFY",
        /// Successfully completed, payment released.
        Completed = 4 => "COMPLETED",
        /// Under dispute.
        Disputed = 5 => "DISPUTED",
        /// Refunded to the buyer (or to the creator of a pact nobody accepted).
        Refunded = 6 => "REFUNDED",
        /// Oracle verification passed, awaiting buyer approval.
        PendingApproval = 7 => "PENDING_APPROVAL",
        /// Ended with the payment divided between the sides: a settlement both accepted, or a ruling.
        Split = 8 => "SPLIT",
    }
}

impl PactStatus {
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

closed_set! {
    serde, schema;
    /// How a pact ended, which its status alone does not say (a cancel by agreement and a lost
    /// dispute both end REFUNDED). The numeric codes are those of `AgentPact.Ending`, which
    /// `PactEnded` carries; the status says where the money went, the ending who decided it.
    /// `ALL` is in code order.
    #[repr(u8)]
    pub enum Ending {
        /// Not ended yet.
        Live = 0 => "LIVE",
        /// The buyer approved the work, or its review period lapsed.
        Completed = 1 => "COMPLETED",
        /// The deadline passed with nothing delivered: the buyer refunded, the seller's stake with it.
        RefundedAfterFailure = 2 => "REFUNDED_AFTER_FAILURE",
        /// Both sides agreed to end it with none of the payment to the seller.
        CancelledByAgreement = 3 => "CANCELLED_BY_AGREEMENT",
        /// Both sides agreed to divide the payment, the seller getting some or all of it.
        Split = 4 => "SPLIT",
        /// The arbitrator ruled, at any share.
        Ruled = 5 => "RULED",
        /// The arbitrator let its window lapse: each side got back what it put in.
        ArbitratorSilent = 6 => "ARBITRATOR_SILENT",
        /// The creator withdrew it before anyone accepted.
        Withdrawn = 7 => "WITHDRAWN",
        /// Nobody accepted it in time.
        Expired = 8 => "EXPIRED",
        /// A pact of several stages whose stages ended in different ways (never a stage's ending).
        Mixed = 9 => "MIXED",
    }
}

closed_set! {
    serde;
    /// Which side created a pact. The numeric codes are those of `AgentPact.Initiator`; `ALL` is in
    /// code order.
    #[repr(u8)]
    pub enum Initiator {
        /// A request for work: the buyer created it and deposited payment + stake.
        Buyer = 0 => "BUYER",
        /// An offer: the seller created it and deposited its stake.
        Seller = 1 => "SELLER",
    }
}

impl Initiator {
    /// The side that accepts a pact this side created.
    pub const fn counterparty(self) -> Self {
        match self {
            Self::Buyer => Self::Seller,
            Self::Seller => Self::Buyer,
        }
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
    fn ending_codes_are_the_contracts() {
        let names: Vec<_> = Ending::ALL.iter().map(|e| (e.code(), e.name())).collect();
        assert_eq!(
            names,
            [
                (0, "LIVE"),
                (1, "COMPLETED"),
                (2, "REFUNDED_AFTER_FAILURE"),
                (3, "CANCELLED_BY_AGREEMENT"),
                (4, "SPLIT"),
                (5, "RULED"),
                (6, "ARBITRATOR_SILENT"),
                (7, "WITHDRAWN"),
                (8, "EXPIRED"),
                (9, "MIXED"),
            ]
        );
        for e in Ending::ALL {
            assert_eq!(Ending::try_from(e.code()), Ok(e));
        }
        assert_eq!(Ending::try_from(10), Err(UnknownCode { kind: "ending", code: 10 }));
    }

    #[test]
    fn initiator_codes_round_trip() {
        for (code, initiator) in [(0, Initiator::Buyer), (1, Initiator::Seller)] {
            assert_eq!(Initiator::try_from(code), Ok(initiator));
            assert_eq!(initiator.code(), code);
        }
        assert_eq!(Initiator::ALL.len(), 2);
        assert!(Initiator::try_from(2).is_err());
        assert_eq!(Initiator::Buyer.counterparty(), Initiator::Seller);
        assert_eq!(serde_json::to_string(&Initiator::Seller).ok().as_deref(), Some("\"SELLER\""));
    }
}
