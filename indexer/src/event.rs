//! The journal's unit: one decoded contract event and where on the chain it happened.
//!
//! [`EventBody`] is what the journal stores as JSON (`events.data`), tagged by `kind`; the
//! projections are rebuilt from it alone, so it carries every field of the on-chain event.

mod declare;

use agentpact_contracts::{
    AgentPact::AgentPactEvents, AgentRegistry::AgentRegistryEvents, EventKind,
    OracleRegistry::OracleRegistryEvents,
};
use agentpact_schema::ChainText;
use alloy::primitives::{Address, B256, Bytes, U256};
use declare::{journal_events, once, subject};
use serde::{Deserialize, Serialize};

pub use declare::Subject;

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

journal_events! {
    /// What happened: one variant per event of AgentPact, OracleRegistry and AgentRegistry, with all
    /// its fields. Every string field is a [`ChainText`]: the exact bytes the chain emitted, whatever
    /// they hold (docs/indexer.md §Text the chain emits).
    ///
    /// This is each event's one declaration (docs/architecture.md §Adding an event): its fields and
    /// the binding's field each decodes from, what it is about (`pact:`/`account:`/nothing), and
    /// `once` when its rows are written once per event and never replayed. The kind, the subject,
    /// the text fields, the replay's exclusion and the decoding are derived from it
    /// ([`declare::journal_events`]).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all_fields = "camelCase")]
    #[allow(missing_docs)] // the fields are the events' own, documented in docs/contracts.md
    pub enum EventBody {
        AgentPactEvents {
            PactCreated(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                creator: Address = creator,
                /// The only address that may accept; zero when anyone may.
                counterparty: Address = counterparty,
                initiator: u8 = initiator,
                arbitrator: Address = arbitrator,
                spec_hash: B256 = specHash,
                spec_uri: ChainText = specUri,
                deadline: u64 = deadline,
                accept_by: u64 = acceptBy,
                review_period: u64 = reviewPeriod,
                threshold: u8 = threshold,
                /// The currency of payment and stakes: zero for ETH, else an allowed token.
                currency: Address = currency,
                #[serde(with = "decimal")]
                payment: U256 = payment,
                #[serde(with = "decimal")]
                stake: U256 = stake,
                #[serde(with = "decimal")]
                deposit: U256 = deposit,
                oracles: Vec<Address> = oracles,
                weights: Vec<u8> = weights,
            }
            PactAccepted(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                accepter: Address = accepter,
                buyer: Address = buyer,
                seller: Address = seller,
                #[serde(with = "decimal")]
                deposit: U256 = deposit,
            }
            PactCancelled(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                creator: Address = creator,
            }
            WorkStarted(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                seller: Address = seller,
            }
            WorkSubmitted(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                seller: Address = seller,
                proof_hash: B256 = proofHash,
            }
            VerificationSubmitted(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                oracle: Address = oracle,
                score: u8 = score,
                proof: B256 = proof,
            }
            VerificationFinalized(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                score: u8 = score,
                passed: bool = passed,
                score_count: u8 = scoreCount,
            }
            WorkApproved(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                by: Address = by,
                automatic: bool = auto_,
            }
            WorkRejected(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                buyer: Address = buyer,
            }
            DisputeRaised(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                by: Address = by,
                arbitrator: Address = arbitrator,
            }
            DisputeResolved(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                arbitrator: Address = arbitrator,
                /// Basis points of the pot (payment and both stakes) to the seller.
                seller_share: u16 = sellerShare,
            }
            TimeoutClaimed(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                caller: Address = caller,
                from: u8 = from,
            }
            SettlementProposed(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                by: Address = by,
                /// The pact's status when offered: the offer lapses when the pact leaves it.
                status: u8 = status,
                round: u32 = round,
                /// Basis points of the payment to the seller; each stake goes back to its owner.
                seller_share: u16 = sellerShare,
                expires_at: u64 = expiresAt,
            }
            SettlementWithdrawn(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                by: Address = by,
                round: u32 = round,
            }
            OffersVoided(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                by: Address = by,
                /// The pact's verdict count after it.
                epoch: u32 = epoch,
            }
            SettlementAccepted(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                by: Address = by,
                round: u32 = round,
                seller_share: u16 = sellerShare,
            }
            PactEnded(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                /// `AgentPact.Ending`'s code.
                ending: u8 = ending,
                /// The status the pact ended in.
                status: u8 = status,
            }
            PactStaged(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                /// Each stage's amount and deadline, in order.
                stages: Vec<StageTerm> = stages,
            }
            StageSubmitted(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                seller: Address = seller,
                proof_hash: B256 = proofHash,
            }
            StageScored(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                oracle: Address = oracle,
                score: u8 = score,
                proof: B256 = proof,
            }
            StageFinalized(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                score: u8 = score,
                passed: bool = passed,
                score_count: u8 = scoreCount,
            }
            StageApproved(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                by: Address = by,
                auto: bool = auto_,
            }
            StageRejected(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                buyer: Address = buyer,
            }
            StageDisputed(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                by: Address = by,
                arbitrator: Address = arbitrator,
            }
            StageResolved(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                arbitrator: Address = arbitrator,
                seller_share: u16 = sellerShare,
            }
            StageTimedOut(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                caller: Address = caller,
                from: u8 = from,
            }
            StageEnded(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                stage: u8 = stage,
                /// `AgentPact.Ending`'s code.
                ending: u8 = ending,
                /// The status the stage ended in.
                status: u8 = status,
                #[serde(with = "decimal")]
                to_seller: U256 = toSeller,
                #[serde(with = "decimal")]
                to_buyer: U256 = toBuyer,
            }
            Payout(pact: pact_id, once) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                to: Address = to,
                currency: Address = currency,
                #[serde(with = "decimal")]
                amount: U256 = amount,
            }
            Withdrawn(account: account, once) {
                account: Address = account,
                currency: Address = currency,
                #[serde(with = "decimal")]
                amount: U256 = amount,
            }
            CurrencyAllowed() {
                currency: Address = currency,
                decimals: u8 = decimals,
                symbol: ChainText = symbol,
            }
        }
        OracleRegistryEvents {
            OracleRegistered(account: oracle) {
                oracle: Address = oracle,
                #[serde(with = "decimal")]
                stake: U256 = stake,
                capabilities: Vec<ChainText> = capabilities,
            }
            StakeIncreased(account: oracle) {
                oracle: Address = oracle,
                #[serde(with = "decimal")]
                amount: U256 = amount,
                #[serde(with = "decimal")]
                total_stake: U256 = totalStake,
            }
            CapabilitiesUpdated(account: oracle) {
                oracle: Address = oracle,
                capabilities: Vec<ChainText> = capabilities,
            }
            OracleDeregistered(account: oracle) {
                oracle: Address = oracle,
                unlock_at: u64 = unlockAt,
            }
            StakeWithdrawn(account: oracle) {
                oracle: Address = oracle,
                #[serde(with = "decimal")]
                amount: U256 = amount,
            }
        }
        AgentRegistryEvents {
            AgentRegistered(account: agent) {
                agent: Address = agent,
                profile: Profile = profile,
            }
            ProfileUpdated(account: agent) {
                agent: Address = agent,
                profile: Profile = profile,
            }
            AgentDeactivated(account: agent) {
                agent: Address = agent,
            }
            AgentReactivated(account: agent) {
                agent: Address = agent,
            }
            FeedbackGiven(pact: pact_id) {
                #[serde(with = "decimal")]
                pact_id: U256 = pactId,
                from: Address = from,
                to: Address = to,
                rating: u8 = rating,
                tags: Vec<ChainText> = tags,
                comment: ChainText = comment,
            }
        }
        /// An event of the chain's ERC-8004 registries (stored under its own `kind`, like the others).
        #[serde(untagged)]
        Erc8004(Erc8004Event),
    }
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

/// One stage of a pact of several, as `PactStaged` announces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageTerm {
    /// Its part of the payment, in base units of the pact's currency.
    #[serde(with = "decimal")]
    pub amount: U256,
    /// The last second its work may be delivered.
    pub deadline: u64,
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
    /// The pact the event is about, if any (`events.pact_id`).
    pub const fn pact_id(&self) -> Option<U256> {
        match self.subject() {
            Subject::Pact(id) => Some(id),
            Subject::Account(_) | Subject::None => None,
        }
    }

    /// The account the event is about when it is not about a pact (`events.account`): the oracle
    /// of an oracle registry event, the agent of an agent registry event, the withdrawer of a
    /// withdrawal.
    pub const fn account(&self) -> Option<Address> {
        match self.subject() {
            Subject::Account(account) => Some(account),
            Subject::Pact(_) | Subject::None => None,
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
