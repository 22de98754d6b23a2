//! Turns raw logs of the three contracts and of the chain's ERC-8004 registries into [`EventBody`] values, with every string field as
//! the exact bytes the chain emitted ([`exact`]).

mod erc8004;
mod exact;

use agentpact_contracts::{
    AgentPact::{self, AgentPactEvents},
    AgentRegistry::{self, AgentRegistryEvents},
    Contracts,
    IdentityRegistry::IdentityRegistryEvents,
    OracleRegistry::{self, OracleRegistryEvents},
    ReputationRegistry::ReputationRegistryEvents,
};
use agentpact_schema::ChainText;
use alloy::{
    primitives::{Address, B256},
    sol_types::SolEventInterface,
};

use crate::event::{Capability, EventBody, Profile};

pub use exact::ExactError;

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
    /// The log is an ERC-8004 registry event the indexer does not follow: the node answered
    /// for events the filter did not ask for.
    #[error("log from {contract} is a {event}, which the filter did not ask for")]
    NotFollowed {
        /// The registry.
        contract: Address,
        /// The event's name.
        event: &'static str,
    },
    /// The log decoded, but its strings' exact bytes could not be read back from its data.
    #[error("log from {contract}: {source}")]
    Strings {
        /// The contract.
        contract: Address,
        /// Why.
        source: ExactError,
    },
}

/// The selectors (topic 0) of every event the indexer reads: all of our three contracts', and the
/// ERC-8004 registries' it follows. The log filter asks for these alone.
pub fn selectors() -> Vec<B256> {
    [AgentPactEvents::SELECTORS, OracleRegistryEvents::SELECTORS, AgentRegistryEvents::SELECTORS]
        .concat()
        .into_iter()
        .map(B256::from)
        .chain(erc8004::SELECTORS)
        .collect()
}

/// Decodes one log of any of `contracts`.
pub fn decode(contracts: &Contracts, log: &alloy::primitives::Log) -> Result<EventBody, DecodeError> {
    let contract = log.address;
    let undecodable = |source| DecodeError::Undecodable { contract, source };
    let (mut body, abi) = if contract == contracts.agent_pact {
        (
            AgentPactEvents::decode_log(log).map(|l| from_pact(l.data)).map_err(undecodable)?,
            exact::Abi::AgentPact,
        )
    } else if contract == contracts.oracle_registry {
        let body =
            OracleRegistryEvents::decode_log(log).map(|l| from_registry(l.data)).map_err(undecodable)?;
        (body, exact::Abi::OracleRegistry)
    } else if contract == contracts.agent_registry {
        let body = AgentRegistryEvents::decode_log(log).map(|l| from_agents(l.data)).map_err(undecodable)?;
        (body, exact::Abi::AgentRegistry)
    } else if let Some(registries) =
        contracts.erc8004.filter(|r| contract == r.identity || contract == r.reputation)
    {
        let not_followed = |event| DecodeError::NotFollowed { contract, event };
        if contract == registries.identity {
            let event = IdentityRegistryEvents::decode_log(log).map_err(undecodable)?.data;
            (erc8004::identity(event).map_err(not_followed)?, exact::Abi::IdentityRegistry)
        } else {
            let event = ReputationRegistryEvents::decode_log(log).map_err(undecodable)?.data;
            (erc8004::reputation(event).map_err(not_followed)?, exact::Abi::ReputationRegistry)
        }
    } else {
        return Err(DecodeError::UnknownContract(contract));
    };
    restore_exact_strings(&mut body, abi, &log.data)
        .map_err(|source| DecodeError::Strings { contract, source })?;
    Ok(body)
}

/// Sets every string of `body` to the bytes the chain emitted, where the lossy decoding changed
/// them (a "�" in the decoded text; plain text is already exact). Each exact string must decode
/// lossily to the text it replaces, which holds the two orders to each other.
fn restore_exact_strings(
    body: &mut EventBody,
    abi: exact::Abi,
    data: &alloy::primitives::LogData,
) -> Result<(), ExactError> {
    let mut texts = body.texts_mut();
    if !texts.iter().any(|t| t.as_bytes().windows(3).any(|w| w == "\u{fffd}".as_bytes())) {
        return Ok(());
    }
    let exact = exact::strings(abi, data)?;
    let aligned = exact.len() == texts.len()
        && texts.iter().zip(&exact).all(|(t, e)| String::from_utf8_lossy(e).as_bytes() == t.as_bytes());
    if !aligned {
        return Err(ExactError::Misaligned { decoded: texts.len(), exact: exact.len() });
    }
    for (text, bytes) in texts.iter_mut().zip(exact) {
        **text = ChainText::from_bytes(bytes);
    }
    Ok(())
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
            seller_share: e.sellerShare,
        },
        E::TimeoutClaimed(e) => {
            EventBody::TimeoutClaimed { pact_id: e.pactId, caller: e.caller, from: e.from }
        }
        E::SettlementProposed(e) => EventBody::SettlementProposed {
            pact_id: e.pactId,
            by: e.by,
            status: e.status,
            round: e.round,
            seller_share: e.sellerShare,
            expires_at: e.expiresAt,
        },
        E::SettlementWithdrawn(e) => {
            EventBody::SettlementWithdrawn { pact_id: e.pactId, by: e.by, round: e.round }
        }
        E::SettlementAccepted(e) => EventBody::SettlementAccepted {
            pact_id: e.pactId,
            by: e.by,
            round: e.round,
            seller_share: e.sellerShare,
        },
        E::Payout(e) => {
            EventBody::Payout { pact_id: e.pactId, to: e.to, currency: e.currency, amount: e.amount }
        }
        E::Withdrawn(e) => {
            EventBody::Withdrawn { account: e.account, currency: e.currency, amount: e.amount }
        }
        E::CurrencyAllowed(e) => {
            EventBody::CurrencyAllowed { currency: e.currency, decimals: e.decimals, symbol: e.symbol.into() }
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
        spec_uri: e.specUri.into(),
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
            EventBody::OracleRegistered { oracle, stake, capabilities: texts(capabilities) }
        }
        E::StakeIncreased(e) => {
            EventBody::StakeIncreased { oracle: e.oracle, amount: e.amount, total_stake: e.totalStake }
        }
        E::CapabilitiesUpdated(e) => {
            EventBody::CapabilitiesUpdated { oracle: e.oracle, capabilities: texts(e.capabilities) }
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
            tags: texts(e.tags),
            comment: e.comment.into(),
        },
    }
}

fn profile(p: AgentRegistry::Profile) -> Profile {
    Profile {
        name: p.name.into(),
        description: p.description.into(),
        endpoint: p.endpoint.into(),
        metadata_uri: p.metadataUri.into(),
        capabilities: p
            .capabilities
            .into_iter()
            .map(|c| Capability {
                name: c.name.into(),
                description: c.description.into(),
                price: c.price,
                currency: c.currency,
            })
            .collect(),
    }
}

fn texts(strings: Vec<String>) -> Vec<ChainText> {
    strings.into_iter().map(ChainText::from).collect()
}

#[cfg(test)]
mod tests {
    use agentpact_contracts::{AgentRegistry, Contracts};
    use alloy::{
        primitives::{Address, Log, U256},
        sol_types::SolEvent,
    };

    use super::*;

    fn contracts() -> Contracts {
        Contracts {
            agent_pact: Address::repeat_byte(1),
            oracle_registry: Address::repeat_byte(2),
            agent_registry: Address::repeat_byte(3),
            erc8004: None,
        }
    }

    /// `data` with each of `swaps`' ASCII placeholders (stood after its length word) replaced by bytes
    /// of the same length.
    fn swapped(mut data: Vec<u8>, swaps: &[(&str, &[u8])]) -> Vec<u8> {
        for (placeholder, bytes) in swaps {
            let at = data
                .windows(placeholder.len())
                .position(|w| w == placeholder.as_bytes())
                .expect("placeholder");
            data[at..at + bytes.len()].copy_from_slice(bytes);
        }
        data
    }

    #[test]
    fn strings_keep_the_exact_bytes_the_chain_emitted_in_abi_order() {
        let capability = |name: &str, description: &str| AgentRegistry::Capability {
            name: name.into(),
            description: description.into(),
            price: U256::from(1),
            currency: Address::ZERO,
        };
        let event = AgentRegistry::ProfileUpdated {
            agent: Address::repeat_byte(9),
            profile: AgentRegistry::Profile {
                name: "NAME".into(),
                description: "plain".into(),
                endpoint: "ENDPOINT".into(),
                metadataUri: "".into(),
                capabilities: vec![capability("CAPA", "also plain"), capability("CAPB", "DESCB")],
            },
        };
        let data = event.encode_log_data();
        let raw = swapped(
            data.data.to_vec(),
            &[
                ("NAME", b"\xff\0\xfe\x1b"),
                ("ENDPOINT", b"end\xc3\x28\0\0\0"),
                ("CAPB", b"\xe2\x80\xae\0"),
                ("DESCB", b"\0\0\0\0\0"),
            ],
        );
        let log = Log::new_unchecked(contracts().agent_registry, data.topics().to_vec(), raw.into());
        let EventBody::ProfileUpdated { profile, .. } = decode(&contracts(), &log).expect("decodes") else {
            panic!("not a profile update")
        };
        assert_eq!(profile.name.as_bytes(), b"\xff\0\xfe\x1b");
        assert_eq!(profile.description.as_bytes(), b"plain");
        assert_eq!(profile.endpoint.as_bytes(), b"end\xc3\x28\0\0\0");
        assert_eq!(profile.metadata_uri.as_bytes(), b"");
        assert_eq!(profile.capabilities[0].name.as_bytes(), b"CAPA");
        assert_eq!(profile.capabilities[1].name.as_bytes(), b"\xe2\x80\xae\0");
        assert_eq!(profile.capabilities[1].description.as_bytes(), b"\0\0\0\0\0");
        assert_eq!(profile.name.display(), "\u{fffd}\u{2400}\u{fffd}\u{241b}");
    }
}
