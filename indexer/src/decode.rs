//! Turns raw logs of the three contracts into [`EventBody`] values.

use agentpact_contracts::{
    AgentPact::{self, AgentPactEvents},
    AgentRegistry::{self, AgentRegistryEvents},
    Contracts,
    OracleRegistry::{self, OracleRegistryEvents},
};
use alloy::{primitives::Address, sol_types::SolEventInterface};

use crate::event::{Capability, EventBody, Profile};

/// A log the indexer cannot turn into an event.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The log came from none of the contracts.
    #[error("log from {0}, which is none of AgentPact, OracleRegistry and AgentRegistry")]
    UnknownContract(Address),
    /// The log came from one of the contracts but matches none of its events: the deployed
    /// contract is not the one these bindings were built from.
    #[error("undecodable log from {contract}: {source}")]
    Undecodable {
        /// The contract.
        contract: Address,
        /// Why decoding failed.
        source: alloy::sol_types::Error,
    },
}

/// Decodes one log of any of `contracts`.
pub fn decode(contracts: &Contracts, log: &alloy::primitives::Log) -> Result<EventBody, DecodeError> {
    let contract = log.address;
    let undecodable = |source| DecodeError::Undecodable { contract, source };
    if contract == contracts.agent_pact {
        AgentPactEvents::decode_log(log).map(|l| from_pact(l.data)).map_err(undecodable)
    } else if contract == contracts.oracle_registry {
        OracleRegistryEvents::decode_log(log).map(|l| from_registry(l.data)).map_err(undecodable)
    } else if contract == contracts.agent_registry {
        AgentRegistryEvents::decode_log(log).map(|l| from_agents(l.data)).map_err(undecodable)
    } else {
        Err(DecodeError::UnknownContract(contract))
    }
}

fn from_pact(event: AgentPactEvents) -> EventBody {
    use AgentPactEvents as E;
    match event {
        E::PactCreated(e) => created(e),
        E::PactAccepted(e) => EventBody::PactAccepted {
            pact_id: e.pactId,
            accepter: e.accepter,
            buyer: e.buyer,
            seller: e.seller,
            deposit: e.deposit,
        },
        E::PactCancelled(e) => EventBody::PactCancelled { pact_id: e.pactId, creator: e.creator },
        E::WorkStarted(e) => EventBody::WorkStarted { pact_id: e.pactId, seller: e.seller },
        E::WorkSubmitted(e) => {
            EventBody::WorkSubmitted { pact_id: e.pactId, seller: e.seller, proof_hash: e.proofHash }
        }
        E::VerificationSubmitted(e) => EventBody::VerificationSubmitted {
            pact_id: e.pactId,
            oracle: e.oracle,
            score: e.score,
            proof: e.proof,
        },
        E::VerificationFinalized(e) => EventBody::VerificationFinalized {
            pact_id: e.pactId,
            score: e.score,
            passed: e.passed,
            score_count: e.scoreCount,
        },
        E::WorkApproved(e) => EventBody::WorkApproved { pact_id: e.pactId, by: e.by, automatic: e.auto_ },
        E::WorkRejected(e) => EventBody::WorkRejected { pact_id: e.pactId, buyer: e.buyer },
        E::DisputeRaised(e) => {
            EventBody::DisputeRaised { pact_id: e.pactId, by: e.by, arbitrator: e.arbitrator }
        }
        E::DisputeResolved(e) => EventBody::DisputeResolved {
            pact_id: e.pactId,
            arbitrator: e.arbitrator,
            seller_wins: e.sellerWins,
        },
        E::TimeoutClaimed(e) => {
            EventBody::TimeoutClaimed { pact_id: e.pactId, caller: e.caller, from: e.from }
        }
        E::Payout(e) => {
            EventBody::Payout { pact_id: e.pactId, to: e.to, currency: e.currency, amount: e.amount }
        }
        E::Withdrawn(e) => {
            EventBody::Withdrawn { account: e.account, currency: e.currency, amount: e.amount }
        }
        E::CurrencyAllowed(e) => {
            EventBody::CurrencyAllowed { currency: e.currency, decimals: e.decimals, symbol: e.symbol }
        }
    }
}

fn created(e: AgentPact::PactCreated) -> EventBody {
    EventBody::PactCreated {
        pact_id: e.pactId,
        creator: e.creator,
        counterparty: e.counterparty,
        initiator: e.initiator,
        arbitrator: e.arbitrator,
        spec_hash: e.specHash,
        spec_uri: e.specUri,
        deadline: e.deadline,
        accept_by: e.acceptBy,
        review_period: e.reviewPeriod,
        threshold: e.threshold,
        currency: e.currency,
        payment: e.payment,
        stake: e.stake,
        deposit: e.deposit,
        oracles: e.oracles,
        weights: e.weights,
    }
}

fn from_registry(event: OracleRegistryEvents) -> EventBody {
    use OracleRegistryEvents as E;
    match event {
        E::OracleRegistered(OracleRegistry::OracleRegistered { oracle, stake, capabilities }) => {
            EventBody::OracleRegistered { oracle, stake, capabilities }
        }
        E::StakeIncreased(e) => {
            EventBody::StakeIncreased { oracle: e.oracle, amount: e.amount, total_stake: e.totalStake }
        }
        E::CapabilitiesUpdated(e) => {
            EventBody::CapabilitiesUpdated { oracle: e.oracle, capabilities: e.capabilities }
        }
        E::OracleDeregistered(e) => EventBody::OracleDeregistered { oracle: e.oracle, unlock_at: e.unlockAt },
        E::StakeWithdrawn(e) => EventBody::StakeWithdrawn { oracle: e.oracle, amount: e.amount },
    }
}

fn from_agents(event: AgentRegistryEvents) -> EventBody {
    use AgentRegistryEvents as E;
    match event {
        E::AgentRegistered(e) => EventBody::AgentRegistered { agent: e.agent, profile: profile(e.profile) },
        E::ProfileUpdated(e) => EventBody::ProfileUpdated { agent: e.agent, profile: profile(e.profile) },
        E::AgentDeactivated(e) => EventBody::AgentDeactivated { agent: e.agent },
        E::AgentReactivated(e) => EventBody::AgentReactivated { agent: e.agent },
        E::FeedbackGiven(e) => EventBody::FeedbackGiven {
            pact_id: e.pactId,
            from: e.from,
            to: e.to,
            rating: e.rating,
            tags: e.tags,
            comment: e.comment,
        },
    }
}

fn profile(p: AgentRegistry::Profile) -> Profile {
    Profile {
        name: p.name,
        description: p.description,
        endpoint: p.endpoint,
        metadata_uri: p.metadataUri,
        capabilities: p
            .capabilities
            .into_iter()
            .map(|c| Capability {
                name: c.name,
                description: c.description,
                price: c.price,
                currency: c.currency,
            })
            .collect(),
    }
}
