//! The closed sets the index stores and every surface shows: how a pact ended, why a dispute
//! opened and how it closed, whether an oracle takes work, the role a reputation row is about.
//! Each is one enum here; the indexer binds its names into SQL as values, migrations/0015 guards
//! each column with a CHECK over the same names (a test compares them), and the readers read them
//! back through `Cells::named`. A name is the exact text the column holds.
//!
//! [`closed_set!`](crate::closed_set), which declares each, is exported for the closed sets outside
//! the index too (the contract's statuses, the relay's conversation statuses, message types and
//! refusal codes, the read layer's orderings and settlement states), so none keeps a hand list.

/// Every closed set declared by [`closed_set!`], for code that shows any of them without a list of
/// its own (the GraphQL schema's enums): its members, their names and their doc comments.
pub trait ClosedSet: Copy + Eq + Send + Sync + 'static {
    /// Every member, in declaration order.
    const MEMBERS: &'static [Self];

    /// Its name: the text stored and shown.
    fn name(self) -> &'static str;

    /// Its doc comment, what a user reads about it: each `///` line as written (with the space
    /// after `///`), each ending in a newline; empty when it has none.
    fn doc(self) -> &'static str;
}

/// Declares a closed set: the enum, `ALL` (every variant, in declaration order), `name` (the text
/// stored and shown), `doc` (the variant's doc comment), `from_name`, `names`, `Display` and
/// [`ClosedSet`]. One list feeds them all, so none can miss a variant.
///
/// The set's own attributes (docs, more derives, `repr`) pass through, as do each variant's (docs,
/// `#[default]`) and its discriminant (`Funded = 1 => "FUNDED"`). A variant's doc comment is
/// both its rustdoc and what `doc` returns, so the text users read about a member (the GraphQL
/// schema's description of its value) is written once, here. It always derives `Debug`, `Clone`,
/// `Copy`, `PartialEq`, `Eq` and `Hash`. A leading `serde;` also derives `Serialize` and
/// `Deserialize` with each variant as its name, and `serde, schema;` `JsonSchema` too (the calling
/// crate then depends on `serde`, and `schemars`).
#[macro_export]
macro_rules! closed_set {
    (
        @enum [$($attr:tt)*] $vis:vis $set:ident {
            $( [$($vattr:tt)*] [$($serde:tt)*] $variant:ident $(= $code:literal)? => $name:literal, )+
        }
    ) => {
        $($attr)*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $set {
            $( $($vattr)* $($serde)* $variant $(= $code)?, )+
        }

        impl $set {
            /// Every member, in declaration order.
            pub const ALL: [Self; [$(stringify!($variant)),+].len()] = [$(Self::$variant),+];

            /// Its name: the text stored and shown.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $name, )+
                }
            }

            /// Its doc comment: each `///` line as written, each ending in a newline.
            pub const fn doc(self) -> &'static str {
                match self {
                    $( Self::$variant => $crate::__closed_set_doc!($($vattr)*), )+
                }
            }

            /// The member named `name` (exact).
            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|m| m.name() == name)
            }

            /// Every name, for binding a whole set into SQL.
            pub fn names() -> Vec<&'static str> {
                Self::ALL.iter().map(|m| m.name()).collect()
            }
        }

        impl $crate::vocab::ClosedSet for $set {
            const MEMBERS: &'static [Self] = &Self::ALL;

            fn name(self) -> &'static str {
                Self::name(self)
            }

            fn doc(self) -> &'static str {
                Self::doc(self)
            }
        }

        impl ::std::fmt::Display for $set {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
    (
        serde, schema;
        $(#[$meta:meta])*
        $vis:vis enum $set:ident {
            $( $(#[$($vattr:tt)*])* $variant:ident $(= $code:literal)? => $name:literal, )+
        }
    ) => {
        $crate::closed_set! {
            @enum [$(#[$meta])* #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]] $vis $set {
                $( [$(#[$($vattr)*])*] [#[serde(rename = $name)]] $variant $(= $code)? => $name, )+
            }
        }
    };
    (
        serde;
        $(#[$meta:meta])*
        $vis:vis enum $set:ident {
            $( $(#[$($vattr:tt)*])* $variant:ident $(= $code:literal)? => $name:literal, )+
        }
    ) => {
        $crate::closed_set! {
            @enum [$(#[$meta])* #[derive(serde::Serialize, serde::Deserialize)]] $vis $set {
                $( [$(#[$($vattr)*])*] [#[serde(rename = $name)]] $variant $(= $code)? => $name, )+
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $set:ident {
            $( $(#[$($vattr:tt)*])* $variant:ident $(= $code:literal)? => $name:literal, )+
        }
    ) => {
        $crate::closed_set! {
            @enum [$(#[$meta])*] $vis $set {
                $( [$(#[$($vattr)*])*] [] $variant $(= $code)? => $name, )+
            }
        }
    };
}

/// The doc comment among a variant's attributes, for [`closed_set!`]: its `doc` lines, each ending
/// in a newline, the other attributes skipped.
#[doc(hidden)]
#[macro_export]
macro_rules! __closed_set_doc {
    () => { "" };
    (#[doc = $line:literal] $($rest:tt)*) => {
        concat!($line, "\n", $crate::__closed_set_doc!($($rest)*))
    };
    (#[$($other:tt)*] $($rest:tt)*) => {
        $crate::__closed_set_doc!($($rest)*)
    };
}

closed_set! {
    serde, schema;
    /// How a finished pact ended (`pacts.outcome`).
    pub enum Outcome {
        /// The buyer approved the work.
        Approved => "approved",
        /// Nobody objected within the review period: approved by the clock.
        AutoApproved => "auto_approved",
        /// The arbitrator ruled everything to the seller.
        SellerWon => "seller_won",
        /// The arbitrator ruled everything to the buyer.
        BuyerWon => "buyer_won",
        /// The arbitrator divided the pot.
        Split => "split",
        /// Both sides accepted a settlement.
        Settled => "settled",
        /// The seller (or the oracles) missed a deadline: refunded by the clock.
        Timeout => "timeout",
        /// The arbitrator missed its window: refunded by the clock.
        DisputeTimeout => "dispute_timeout",
        /// The creator withdrew a pact nobody had accepted.
        Cancelled => "cancelled",
        /// Nobody accepted the pact in time.
        Expired => "expired",
    }
}

impl Outcome {
    /// The ending a pact met that ended with this outcome, as escrow v3's events tell it (a ruling
    /// or settlement at `seller_share` basis points; ignored otherwise): a settlement at 0 is a
    /// cancel by agreement, any other a split. Escrow v4 says its own in `PactEnded`, which goes by
    /// the amounts (a share whose seller part rounds to nothing is a cancel too).
    pub const fn ending(self, seller_share: u16) -> crate::Ending {
        use crate::Ending;
        match self {
            Self::Approved | Self::AutoApproved => Ending::Completed,
            Self::SellerWon | Self::BuyerWon | Self::Split => Ending::Ruled,
            Self::Settled if seller_share == 0 => Ending::CancelledByAgreement,
            Self::Settled => Ending::Split,
            Self::Timeout => Ending::RefundedAfterFailure,
            Self::DisputeTimeout => Ending::ArbitratorSilent,
            Self::Cancelled => Ending::Withdrawn,
            Self::Expired => Ending::Expired,
        }
    }
}

closed_set! {
    serde, schema;
    /// Why a dispute opened (`disputes.cause`).
    pub enum DisputeCause {
        /// A party raised it.
        Raised => "raised",
        /// The buyer rejected the work.
        Rejected => "rejected",
        /// The oracles' weighted score missed the threshold.
        FailedVerification => "failed_verification",
    }
}

closed_set! {
    serde, schema;
    /// How a dispute closed (`disputes.outcome`).
    pub enum DisputeOutcome {
        /// Ruled everything to the seller.
        Seller => "seller",
        /// Ruled everything to the buyer.
        Buyer => "buyer",
        /// Ruled a division of the pot.
        Split => "split",
        /// The sides settled.
        Settled => "settled",
        /// The arbitrator did not rule in time.
        Timeout => "timeout",
    }
}

closed_set! {
    serde, schema;
    /// Whether an oracle takes work (`oracles.status`).
    pub enum OracleStatus {
        /// Registered and staked: pacts may name it.
        Active => "active",
        /// Deregistered; its stake unlocks at `unlockAt` (`oracles.unlock_at`).
        Deregistered => "deregistered",
    }
}

closed_set! {
    serde, schema;
    /// The part an address played in the pacts a reputation row sums (`reputation.role`).
    pub enum ReputationRole {
        /// It paid for work.
        Buyer => "buyer",
        /// It did the work.
        Seller => "seller",
        /// It scored the work.
        Oracle => "oracle",
    }
}

closed_set! {
    serde, schema;
    /// When a webhook subscription is told of an event (`webhook_subscriptions.mode`).
    pub enum WebhookMode {
        /// As soon as the event is indexed; a reorganisation that removes it later sends a
        /// revocation.
        Instant => "instant",
        /// Only once the event's block is past the finality depth: never revoked.
        Finalized => "finalized",
    }
}

closed_set! {
    serde, schema;
    /// What a webhook delivery tells (`webhook_deliveries.kind`).
    pub enum NoticeKind {
        /// A pact event.
        Event => "event",
        /// A reorganisation removed an event delivered before.
        Revocation => "revocation",
        /// A window a party must act in closes soon.
        Reminder => "reminder",
        /// A window closed with the pact still waiting in it.
        Closed => "closed",
    }
}

closed_set! {
    serde, schema;
    /// Where a webhook delivery stands (`webhook_deliveries.state`).
    pub enum DeliveryState {
        /// Not yet answered with a 2xx: waiting for its (next) attempt.
        Pending => "pending",
        /// A 2xx answered it.
        Delivered => "delivered",
        /// Every attempt failed: kept for its owner to see (the dead letters).
        Dead => "dead",
        /// Never sent: a reorganisation removed its event first.
        Cancelled => "cancelled",
    }
}

closed_set! {
    serde, schema;
    /// The window a pact waits in, by its status: each closes at one second for everyone.
    pub enum WindowKind {
        /// NEGOTIATING: the counterparty accepts by `acceptBy`.
        Acceptance => "acceptance",
        /// FUNDED / IN_PROGRESS: the seller submits by the deadline.
        Deadline => "deadline",
        /// PENDING_VERIFY: oracles score (and parties may dispute) until it closes.
        Verification => "verification",
        /// PENDING_APPROVAL: the buyer approves or rejects until it closes.
        Review => "review",
        /// DISPUTED: the arbitrator rules until it closes.
        Dispute => "dispute",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_reads_back_from_its_name_and_names_are_distinct() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(
            all: &[T],
            name: fn(T) -> &'static str,
            from: fn(&str) -> Option<T>,
        ) {
            let mut seen = std::collections::HashSet::new();
            for &m in all {
                assert_eq!(from(name(m)), Some(m));
                assert!(seen.insert(name(m)), "{} twice", name(m));
            }
            assert_eq!(from("no such name"), None);
        }
        check(&Outcome::ALL, Outcome::name, Outcome::from_name);
        check(&DisputeCause::ALL, DisputeCause::name, DisputeCause::from_name);
        check(&DisputeOutcome::ALL, DisputeOutcome::name, DisputeOutcome::from_name);
        check(&OracleStatus::ALL, OracleStatus::name, OracleStatus::from_name);
        check(&ReputationRole::ALL, ReputationRole::name, ReputationRole::from_name);
        assert_eq!(Outcome::from_name("SELLER_WON"), None, "names are exact");
    }

    #[test]
    fn a_members_doc_is_its_doc_comment_alone() {
        closed_set! {
            #[derive(Default)]
            enum Sample {
                /// First line,
                /// second line.
                #[default]
                Documented => "documented",
                Bare => "bare",
            }
        }
        assert_eq!(Sample::Documented.doc(), " First line,\n second line.\n");
        assert_eq!(Sample::Bare.doc(), "");
        assert_eq!(
            (Sample::names(), Sample::from_name("bare")),
            (vec!["documented", "bare"], Some(Sample::Bare))
        );
        assert_eq!(Sample::default(), Sample::Documented, "other attributes pass through");
        assert_eq!(<Outcome as ClosedSet>::doc(Outcome::Approved), " The buyer approved the work.\n");
        assert_eq!(<Outcome as ClosedSet>::MEMBERS, &Outcome::ALL[..]);
    }
}
