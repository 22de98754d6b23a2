//! Turns raw logs of the three contracts and of the chain's ERC-8004 registries into [`EventBody`] values, with every string field as
//! the exact bytes the chain emitted ([`exact`]).

mod erc8004;
mod exact;

use agentpact_contracts::{
    AgentPact::AgentPactEvents, AgentRegistry::AgentRegistryEvents, Contracts,
    IdentityRegistry::IdentityRegistryEvents, OracleRegistry::OracleRegistryEvents,
    ReputationRegistry::ReputationRegistryEvents,
};
use agentpact_schema::ChainText;
use alloy::{
    primitives::{Address, B256},
    sol_types::SolEventInterface,
};

use crate::event::EventBody;

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
            AgentPactEvents::decode_log(log).map(|l| EventBody::from(l.data)).map_err(undecodable)?,
            exact::Abi::AgentPact,
        )
    } else if contract == contracts.oracle_registry {
        let body =
            OracleRegistryEvents::decode_log(log).map(|l| EventBody::from(l.data)).map_err(undecodable)?;
        (body, exact::Abi::OracleRegistry)
    } else if contract == contracts.agent_registry {
        let body =
            AgentRegistryEvents::decode_log(log).map(|l| EventBody::from(l.data)).map_err(undecodable)?;
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
