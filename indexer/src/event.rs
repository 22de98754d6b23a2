//! The journal's unit: one decoded contract event and where on the chain it happened.
//!
//! [`EventBody`] is what the journal stores as JSON (`events.data`), tagged by `kind`; the
//! projections are rebuilt from it alone, so it carries every field of the on-chain event.

use agentpact_contracts::EventKind;
use agentpact_schema::ChainText;
use alloy::primitives::{Address, B256, Bytes, U256};
use serde::{Deserialize, Serialize};

/// One event in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEvent {
    /// The chain it happened on.
    pub chain_id: u64,
    /// Its block.
    pub block_number: u64,
    /// Its position in the block.
    pub log_index: u64,
    /// The hash of its block (to tell an orphaned event from a canonical one).
    pub block_hash: B256,
    /// The transaction that emitted it.
    pub tx_hash: B256,
    /// The timestamp of its block, in seconds.
    pub block_time: u64,
    /// The contract that emitted it.
    pub contract: Address,
    /// What happened.
    pub body: EventBody,
}

/// What happened: one variant per event of AgentPact, OracleRegistry and AgentRegistry, with all
/// its fields. Every string field is a [`ChainText`]: the exact bytes the chain emitted, whatever
/// they hold (docs/indexer.md §Text the chain emits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all_fields = "camelCase")]
#[allow(missing_docs)] // the fields are the events' own, documented in docs/contracts.md
pub enum EventBody {
    PactCreated {
        #[serde(with = "decimal")]
        pact_id: U256,
        creator: Address,
        /// The only address that may accept; zero when anyone may.
        counterparty: Address,
        initiator: u8,
        arbitrator: Address,
        spec_hash: B256,
        spec_uri: ChainText,
        deadline: u64,
        accept_by: u64,
        review_period: u64,
        threshold: u8,
        /// The currency of payment and stakes: zero for ETH, else an allowed token.
        currency: Address,
        #[serde(with = "decimal")]
        payment: U256,
        #[serde(with = "decimal")]
        stake: U256,
        #[serde(with = "decimal")]
        deposit: U256,
        oracles: Vec<Address>,
        weights: Vec<u8>,
    },
    PactAccepted {
        #[serde(with = "decimal")]
        pact_id: U256,
        accepter: Address,
        buyer: Address,
        seller: Address,
        #[serde(with = "decimal")]
        deposit: U256,
    },
    PactCancelled {
        #[serde(with = "decimal")]
        pact_id: U256,
        creator: Address,
    },
    WorkStarted {
        #[serde(with = "decimal")]
        pact_id: U256,
        seller: Address,
    },
    WorkSubmitted {
        #[serde(with = "decimal")]
        pact_id: U256,
        seller: Address,
        proof_hash: B256,
    },
    VerificationSubmitted {
        #[serde(with = "decimal")]
        pact_id: U256,
        oracle: Address,
        score: u8,
        proof: B256,
    },
    VerificationFinalized {
        #[serde(with = "decimal")]
        pact_id: U256,
        score: u8,
        passed: bool,
        score_count: u8,
    },
    WorkApproved {
        #[serde(with = "decimal")]
        pact_id: U256,
        by: Address,
        automatic: bool,
    },
    WorkRejected {
        #[serde(with = "decimal")]
        pact_id: U256,
        buyer: Address,
    },
    DisputeRaised {
        #[serde(with = "decimal")]
        pact_id: U256,
        by: Address,
        arbitrator: Address,
    },
    DisputeResolved {
        #[serde(with = "decimal")]
        pact_id: U256,
        arbitrator: Address,
        /// Basis points of the pot (payment and both stakes) to the seller.
        seller_share: u16,
    },
    TimeoutClaimed {
        #[serde(with = "decimal")]
        pact_id: U256,
        caller: Address,
        from: u8,
    },
    SettlementProposed {
        #[serde(with = "decimal")]
        pact_id: U256,
        by: Address,
        /// The pact's status when offered: the offer lapses when the pact leaves it.
        status: u8,
        round: u32,
        /// Basis points of the payment to the seller; each stake goes back to its owner.
        seller_share: u16,
        expires_at: u64,
    },
    SettlementWithdrawn {
        #[serde(with = "decimal")]
        pact_id: U256,
        by: Address,
        round: u32,
    },
    SettlementAccepted {
        #[serde(with = "decimal")]
        pact_id: U256,
        by: Address,
        round: u32,
        seller_share: u16,
    },
    Payout {
        #[serde(with = "decimal")]
        pact_id: U256,
        to: Address,
        currency: Address,
        #[serde(with = "decimal")]
        amount: U256,
    },
    Withdrawn {
        account: Address,
        currency: Address,
        #[serde(with = "decimal")]
        amount: U256,
    },
    CurrencyAllowed {
        currency: Address,
        decimals: u8,
        symbol: ChainText,
    },
    OracleRegistered {
        oracle: Address,
        #[serde(with = "decimal")]
        stake: U256,
        capabilities: Vec<ChainText>,
    },
    StakeIncreased {
        oracle: Address,
        #[serde(with = "decimal")]
        amount: U256,
        #[serde(with = "decimal")]
        total_stake: U256,
    },
    CapabilitiesUpdated {
        oracle: Address,
        capabilities: Vec<ChainText>,
    },
    OracleDeregistered {
        oracle: Address,
        unlock_at: u64,
    },
    StakeWithdrawn {
        oracle: Address,
        #[serde(with = "decimal")]
        amount: U256,
    },
    AgentRegistered {
        agent: Address,
        profile: Profile,
    },
    ProfileUpdated {
        agent: Address,
        profile: Profile,
    },
    AgentDeactivated {
        agent: Address,
    },
    AgentReactivated {
        agent: Address,
    },
    FeedbackGiven {
        #[serde(with = "decimal")]
        pact_id: U256,
        from: Address,
        to: Address,
        rating: u8,
        tags: Vec<ChainText>,
        comment: ChainText,
    },
    /// An event of the chain's ERC-8004 registries (stored under its own `kind`, like the others).
    #[serde(untagged)]
    Erc8004(Erc8004Event),
}

/// What happened in the chain's ERC-8004 Identity or Reputation registry: the events the indexer
/// follows (docs/erc8004.md), with all their fields. Not about a pact, nor about an account of
/// ours: their rows are written once per event and never replayed (`project::TABLES`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all_fields = "camelCase")]
#[allow(missing_docs)] // the fields are the events' own (ERC-8004)
pub enum Erc8004Event {
    /// An agent token was minted (from zero) or changed hands.
    Transfer {
        from: Address,
        to: Address,
        #[serde(with = "decimal")]
        agent_id: U256,
    },
    Registered {
        #[serde(with = "decimal")]
        agent_id: U256,
        agent_uri: ChainText,
        owner: Address,
    },
    #[serde(rename = "URIUpdated")]
    UriUpdated {
        #[serde(with = "decimal")]
        agent_id: U256,
        new_uri: ChainText,
        updated_by: Address,
    },
    MetadataSet {
        #[serde(with = "decimal")]
        agent_id: U256,
        key: ChainText,
        value: Bytes,
    },
    NewFeedback {
        #[serde(with = "decimal")]
        agent_id: U256,
        client: Address,
        feedback_index: u64,
        /// The value as given, `value / 10^value_decimals` (int128, as decimal text).
        #[serde(with = "decimal")]
        value: i128,
        value_decimals: u8,
        tag1: ChainText,
        tag2: ChainText,
        endpoint: ChainText,
        feedback_uri: ChainText,
        feedback_hash: B256,
    },
    FeedbackRevoked {
        #[serde(with = "decimal")]
        agent_id: U256,
        client: Address,
        feedback_index: u64,
    },
}

impl Erc8004Event {
    /// The event's kind.
    pub const fn kind(&self) -> EventKind {
        match self {
            Self::Transfer { .. } => EventKind::Transfer,
            Self::Registered { .. } => EventKind::Registered,
            Self::UriUpdated { .. } => EventKind::UriUpdated,
            Self::MetadataSet { .. } => EventKind::MetadataSet,
            Self::NewFeedback { .. } => EventKind::NewFeedback,
            Self::FeedbackRevoked { .. } => EventKind::FeedbackRevoked,
        }
    }

    /// The agent it is about.
    pub const fn agent_id(&self) -> U256 {
        match self {
            Self::Transfer { agent_id, .. }
            | Self::Registered { agent_id, .. }
            | Self::UriUpdated { agent_id, .. }
            | Self::MetadataSet { agent_id, .. }
            | Self::NewFeedback { agent_id, .. }
            | Self::FeedbackRevoked { agent_id, .. } => *agent_id,
        }
    }

    /// Every string field, in the order the event's ABI encodes them (non-indexed only).
    fn texts_mut(&mut self) -> Vec<&mut ChainText> {
        match self {
            Self::Registered { agent_uri, .. } => vec![agent_uri],
            Self::UriUpdated { new_uri, .. } => vec![new_uri],
            Self::MetadataSet { key, .. } => vec![key],
            Self::NewFeedback { tag1, tag2, endpoint, feedback_uri, .. } => {
                vec![tag1, tag2, endpoint, feedback_uri]
            }
            Self::Transfer { .. } | Self::FeedbackRevoked { .. } => Vec::new(),
        }
    }
}

/// An agent's published profile, as AgentRegistry's events carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// Display name.
    pub name: ChainText,
    /// What the agent does.
    pub description: ChainText,
    /// Where the agent can be reached.
    pub endpoint: ChainText,
    /// A URI to more about the agent (may be empty).
    pub metadata_uri: ChainText,
    /// What it offers, in its own order.
    pub capabilities: Vec<Capability>,
}

/// One capability of a [`Profile`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capability {
    /// Its name (e.g. `logo-design`).
    pub name: ChainText,
    /// What it covers.
    pub description: ChainText,
    /// Price per job, in base units of `currency`.
    #[serde(with = "decimal")]
    pub price: U256,
    /// The price's currency: zero for ETH, else an allowed token.
    pub currency: Address,
}

impl EventBody {
    /// The event's kind (its name is `events.kind`).
    pub const fn kind(&self) -> EventKind {
        match self {
            Self::PactCreated { .. } => EventKind::PactCreated,
            Self::PactAccepted { .. } => EventKind::PactAccepted,
            Self::PactCancelled { .. } => EventKind::PactCancelled,
            Self::WorkStarted { .. } => EventKind::WorkStarted,
            Self::WorkSubmitted { .. } => EventKind::WorkSubmitted,
            Self::VerificationSubmitted { .. } => EventKind::VerificationSubmitted,
            Self::VerificationFinalized { .. } => EventKind::VerificationFinalized,
            Self::WorkApproved { .. } => EventKind::WorkApproved,
            Self::WorkRejected { .. } => EventKind::WorkRejected,
            Self::DisputeRaised { .. } => EventKind::DisputeRaised,
            Self::DisputeResolved { .. } => EventKind::DisputeResolved,
            Self::TimeoutClaimed { .. } => EventKind::TimeoutClaimed,
            Self::SettlementProposed { .. } => EventKind::SettlementProposed,
            Self::SettlementWithdrawn { .. } => EventKind::SettlementWithdrawn,
            Self::SettlementAccepted { .. } => EventKind::SettlementAccepted,
            Self::Payout { .. } => EventKind::Payout,
            Self::Withdrawn { .. } => EventKind::Withdrawn,
            Self::CurrencyAllowed { .. } => EventKind::CurrencyAllowed,
            Self::OracleRegistered { .. } => EventKind::OracleRegistered,
            Self::StakeIncreased { .. } => EventKind::StakeIncreased,
            Self::CapabilitiesUpdated { .. } => EventKind::CapabilitiesUpdated,
            Self::OracleDeregistered { .. } => EventKind::OracleDeregistered,
            Self::StakeWithdrawn { .. } => EventKind::StakeWithdrawn,
            Self::AgentRegistered { .. } => EventKind::AgentRegistered,
            Self::ProfileUpdated { .. } => EventKind::ProfileUpdated,
            Self::AgentDeactivated { .. } => EventKind::AgentDeactivated,
            Self::AgentReactivated { .. } => EventKind::AgentReactivated,
            Self::FeedbackGiven { .. } => EventKind::FeedbackGiven,
            Self::Erc8004(e) => e.kind(),
        }
    }

    /// The pact the event is about, if any (`events.pact_id`).
    pub const fn pact_id(&self) -> Option<U256> {
        match self {
            Self::PactCreated { pact_id, .. }
            | Self::PactAccepted { pact_id, .. }
            | Self::PactCancelled { pact_id, .. }
            | Self::WorkStarted { pact_id, .. }
            | Self::WorkSubmitted { pact_id, .. }
            | Self::VerificationSubmitted { pact_id, .. }
            | Self::VerificationFinalized { pact_id, .. }
            | Self::WorkApproved { pact_id, .. }
            | Self::WorkRejected { pact_id, .. }
            | Self::DisputeRaised { pact_id, .. }
            | Self::DisputeResolved { pact_id, .. }
            | Self::TimeoutClaimed { pact_id, .. }
            | Self::SettlementProposed { pact_id, .. }
            | Self::SettlementWithdrawn { pact_id, .. }
            | Self::SettlementAccepted { pact_id, .. }
            | Self::Payout { pact_id, .. }
            | Self::FeedbackGiven { pact_id, .. } => Some(*pact_id),
            Self::Withdrawn { .. }
            | Self::CurrencyAllowed { .. }
            | Self::OracleRegistered { .. }
            | Self::StakeIncreased { .. }
            | Self::CapabilitiesUpdated { .. }
            | Self::OracleDeregistered { .. }
            | Self::StakeWithdrawn { .. }
            | Self::AgentRegistered { .. }
            | Self::ProfileUpdated { .. }
            | Self::AgentDeactivated { .. }
            | Self::AgentReactivated { .. }
            | Self::Erc8004(_) => None,
        }
    }

    /// Every string field, in the order the event's ABI encodes them (depth-first over its data),
    /// so that [`crate::decode`] can set each to the exact bytes the chain emitted.
    pub fn texts_mut(&mut self) -> Vec<&mut ChainText> {
        match self {
            Self::PactCreated { spec_uri, .. } => vec![spec_uri],
            Self::CurrencyAllowed { symbol, .. } => vec![symbol],
            Self::OracleRegistered { capabilities, .. } | Self::CapabilitiesUpdated { capabilities, .. } => {
                capabilities.iter_mut().collect()
            }
            Self::AgentRegistered { profile, .. } | Self::ProfileUpdated { profile, .. } => {
                let Profile { name, description, endpoint, metadata_uri, capabilities } = profile;
                let mut texts = vec![name, description, endpoint, metadata_uri];
                for c in capabilities {
                    texts.extend([&mut c.name, &mut c.description]);
                }
                texts
            }
            Self::FeedbackGiven { tags, comment, .. } => {
                let mut texts: Vec<&mut ChainText> = tags.iter_mut().collect();
                texts.push(comment);
                texts
            }
            Self::Erc8004(e) => e.texts_mut(),
            Self::PactAccepted { .. }
            | Self::PactCancelled { .. }
            | Self::WorkStarted { .. }
            | Self::WorkSubmitted { .. }
            | Self::VerificationSubmitted { .. }
            | Self::VerificationFinalized { .. }
            | Self::WorkApproved { .. }
            | Self::WorkRejected { .. }
            | Self::DisputeRaised { .. }
            | Self::DisputeResolved { .. }
            | Self::TimeoutClaimed { .. }
            | Self::SettlementProposed { .. }
            | Self::SettlementWithdrawn { .. }
            | Self::SettlementAccepted { .. }
            | Self::Payout { .. }
            | Self::Withdrawn { .. }
            | Self::StakeIncreased { .. }
            | Self::OracleDeregistered { .. }
            | Self::StakeWithdrawn { .. }
            | Self::AgentDeactivated { .. }
            | Self::AgentReactivated { .. } => Vec::new(),
        }
    }

    /// The account the event is about when it is not about a pact (`events.account`): the oracle
    /// of an oracle registry event, the agent of an agent registry event, the withdrawer of a
    /// withdrawal.
    pub const fn account(&self) -> Option<Address> {
        match self {
            Self::Withdrawn { account, .. } => Some(*account),
            Self::OracleRegistered { oracle, .. }
            | Self::StakeIncreased { oracle, .. }
            | Self::CapabilitiesUpdated { oracle, .. }
            | Self::OracleDeregistered { oracle, .. }
            | Self::StakeWithdrawn { oracle, .. } => Some(*oracle),
            Self::AgentRegistered { agent, .. }
            | Self::ProfileUpdated { agent, .. }
            | Self::AgentDeactivated { agent }
            | Self::AgentReactivated { agent } => Some(*agent),
            // About a pact (its parties are in the pact's row), or about no one account.
            Self::PactCreated { .. }
            | Self::PactAccepted { .. }
            | Self::PactCancelled { .. }
            | Self::WorkStarted { .. }
            | Self::WorkSubmitted { .. }
            | Self::VerificationSubmitted { .. }
            | Self::VerificationFinalized { .. }
            | Self::WorkApproved { .. }
            | Self::WorkRejected { .. }
            | Self::DisputeRaised { .. }
            | Self::DisputeResolved { .. }
            | Self::TimeoutClaimed { .. }
            | Self::SettlementProposed { .. }
            | Self::SettlementWithdrawn { .. }
            | Self::SettlementAccepted { .. }
            | Self::Payout { .. }
            | Self::FeedbackGiven { .. }
            | Self::CurrencyAllowed { .. }
            | Self::Erc8004(_) => None,
        }
    }
}

/// Numbers in the journal as decimal strings, as the API shows amounts and ids (JSON numbers lose
/// precision past 2^53): uint256 ids and amounts, ERC-8004's int128 values. Reading a uint256 also
/// accepts the 0x-hex form that journals written before this change hold.
mod decimal {
    use std::{fmt::Display, str::FromStr};

    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<T: Display, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub fn deserialize<'de, T: FromStr, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse()
            .map_err(|_| D::Error::custom(format!("{text:?} is not a whole number its field can hold")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erc8004_events_are_stored_flat_under_their_own_kind_and_read_back() {
        let feedback = EventBody::Erc8004(Erc8004Event::NewFeedback {
            agent_id: U256::from(7u8),
            client: Address::repeat_byte(2),
            feedback_index: 1,
            value: -170_141_183_460_469_231_731_687_303_715_884_105_728,
            value_decimals: 2,
            tag1: "pact:3".into(),
            tag2: ChainText::from_bytes(b"\xff\0".to_vec()),
            endpoint: "".into(),
            feedback_uri: "data:,".into(),
            feedback_hash: B256::repeat_byte(9),
        });
        let json = serde_json::to_value(&feedback).expect("serialises");
        assert_eq!(json["kind"], "NewFeedback");
        assert_eq!(json["value"], "-170141183460469231731687303715884105728", "int128 as decimal text");
        assert_eq!(serde_json::from_value::<EventBody>(json).expect("reads back"), feedback);
        let uri = EventBody::Erc8004(Erc8004Event::UriUpdated {
            agent_id: U256::MAX,
            new_uri: "ipfs://x".into(),
            updated_by: Address::ZERO,
        });
        let json = serde_json::to_value(&uri).expect("serialises");
        assert_eq!((json["kind"].as_str(), uri.kind().name()), (Some("URIUpdated"), "URIUpdated"));
        assert_eq!(serde_json::from_value::<EventBody>(json).expect("reads back"), uri);
        // A kind no variant has is refused, not read as something else.
        assert!(serde_json::from_value::<EventBody>(serde_json::json!({"kind": "Approval"})).is_err());
    }
}
