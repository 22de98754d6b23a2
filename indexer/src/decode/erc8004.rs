//! Logs of the chain's ERC-8004 registries into [`Erc8004Event`]s. Only the events the indexer
//! follows are asked for ([`selectors`]); any other (an approval, a response) is refused here as
//! one no honest node sends for the filter asked.

use agentpact_contracts::{
    IdentityRegistry::{self, IdentityRegistryEvents},
    ReputationRegistry::{self, ReputationRegistryEvents},
};
use alloy::{primitives::B256, sol_types::SolEvent};

use crate::event::{Erc8004Event, EventBody};

/// The selectors (topic 0) of the ERC-8004 events the indexer follows.
pub const SELECTORS: [B256; 6] = [
    IdentityRegistry::Transfer::SIGNATURE_HASH,
    IdentityRegistry::Registered::SIGNATURE_HASH,
    IdentityRegistry::URIUpdated::SIGNATURE_HASH,
    IdentityRegistry::MetadataSet::SIGNATURE_HASH,
    ReputationRegistry::NewFeedback::SIGNATURE_HASH,
    ReputationRegistry::FeedbackRevoked::SIGNATURE_HASH,
];

/// An Identity Registry event, or the name of one the indexer does not follow.
pub(super) fn identity(event: IdentityRegistryEvents) -> Result<EventBody, &'static str> {
    use IdentityRegistryEvents as E;
    Ok(EventBody::Erc8004(match event {
        E::Transfer(e) => Erc8004Event::Transfer { from: e.from, to: e.to, agent_id: e.tokenId },
        E::Registered(e) => {
            Erc8004Event::Registered { agent_id: e.agentId, agent_uri: e.agentURI.into(), owner: e.owner }
        }
        E::URIUpdated(e) => Erc8004Event::UriUpdated {
            agent_id: e.agentId,
            new_uri: e.newURI.into(),
            updated_by: e.updatedBy,
        },
        E::MetadataSet(e) => {
            Erc8004Event::MetadataSet { agent_id: e.agentId, key: e.key.into(), value: e.value }
        }
        E::Approval(_) => return Err("Approval"),
        E::ApprovalForAll(_) => return Err("ApprovalForAll"),
    }))
}

/// A Reputation Registry event, or the name of one the indexer does not follow.
pub(super) fn reputation(event: ReputationRegistryEvents) -> Result<EventBody, &'static str> {
    use ReputationRegistryEvents as E;
    Ok(EventBody::Erc8004(match event {
        E::NewFeedback(e) => Erc8004Event::NewFeedback {
            agent_id: e.agentId,
            client: e.clientAddress,
            feedback_index: e.feedbackIndex,
            value: e.value,
            value_decimals: e.valueDecimals,
            tag1: e.tag1.into(),
            tag2: e.tag2.into(),
            endpoint: e.endpoint.into(),
            feedback_uri: e.feedbackURI.into(),
            feedback_hash: e.feedbackHash,
        },
        E::FeedbackRevoked(e) => Erc8004Event::FeedbackRevoked {
            agent_id: e.agentId,
            client: e.clientAddress,
            feedback_index: e.feedbackIndex,
        },
        E::ResponseAppended(_) => return Err("ResponseAppended"),
    }))
}
