//! The exact bytes of an event's string fields. The `sol!` bindings decode a Solidity `string`
//! lossily (invalid UTF-8 becomes "�"); the index keeps what the chain emitted, so when a decoded
//! string shows that loss, the log's data is decoded again from the contract's ABI with every
//! `string` read as `bytes` (the two share one encoding).

use std::{collections::HashMap, sync::LazyLock};

use agentpact_contracts::artifacts;
use alloy::{
    dyn_abi::{DynSolType, DynSolValue},
    json_abi::JsonAbi,
    primitives::{B256, LogData},
};

/// The non-indexed fields of one event, as their types and as read for exact strings.
struct DataTypes {
    /// The declared types: where a `string` stands.
    declared: Vec<DynSolType>,
    /// The same with every `string` as `bytes`.
    as_bytes: DynSolType,
}

/// One contract's events by selector.
type Events = HashMap<B256, DataTypes>;

/// Which contract's ABI a log is read with.
#[derive(Debug, Clone, Copy)]
pub(super) enum Abi {
    AgentPact,
    OracleRegistry,
    AgentRegistry,
    IdentityRegistry,
    ReputationRegistry,
}

/// Why the exact strings could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ExactError {
    /// The committed artifact's ABI does not parse: the build is broken.
    #[error("the committed ABI of {0:?} does not parse: {1}")]
    Abi(&'static str, String),
    /// The log's selector is none of the contract's events.
    #[error("no event of the contract has selector {0}")]
    UnknownEvent(B256),
    /// The exact strings are not the ones the bindings decoded (their count or their text).
    #[error("the log's {exact} exact strings do not match its {decoded} decoded ones")]
    Misaligned {
        /// How many strings the bindings decoded.
        decoded: usize,
        /// How many the ABI read.
        exact: usize,
    },
    /// The data does not decode as the event's fields.
    #[error("the log's data does not decode as its event's fields: {0}")]
    Data(#[source] alloy::dyn_abi::Error),
}

static AGENT_PACT: LazyLock<Result<Events, String>> = LazyLock::new(|| events(artifacts::AGENT_PACT));
static ORACLE_REGISTRY: LazyLock<Result<Events, String>> =
    LazyLock::new(|| events(artifacts::ORACLE_REGISTRY));
static AGENT_REGISTRY: LazyLock<Result<Events, String>> = LazyLock::new(|| events(artifacts::AGENT_REGISTRY));
static IDENTITY_REGISTRY: LazyLock<Result<Events, String>> =
    LazyLock::new(|| events(artifacts::IDENTITY_REGISTRY));
static REPUTATION_REGISTRY: LazyLock<Result<Events, String>> =
    LazyLock::new(|| events(artifacts::REPUTATION_REGISTRY));

/// Every string in `log`'s data, as the exact bytes emitted, in the order the ABI encodes them
/// (depth-first): the order of [`crate::event::EventBody::texts_mut`].
pub(super) fn strings(abi: Abi, log: &LogData) -> Result<Vec<Vec<u8>>, ExactError> {
    let (name, events) = match abi {
        Abi::AgentPact => ("AgentPact", &*AGENT_PACT),
        Abi::OracleRegistry => ("OracleRegistry", &*ORACLE_REGISTRY),
        Abi::AgentRegistry => ("AgentRegistry", &*AGENT_REGISTRY),
        Abi::IdentityRegistry => ("IdentityRegistry", &*IDENTITY_REGISTRY),
        Abi::ReputationRegistry => ("ReputationRegistry", &*REPUTATION_REGISTRY),
    };
    let events = events.as_ref().map_err(|why| ExactError::Abi(name, why.clone()))?;
    let selector = log.topics().first().copied().unwrap_or_default();
    let types = events.get(&selector).ok_or(ExactError::UnknownEvent(selector))?;
    let DynSolValue::Tuple(values) =
        types.as_bytes.abi_decode_sequence(&log.data).map_err(ExactError::Data)?
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (ty, value) in types.declared.iter().zip(&values) {
        collect(ty, value, &mut out);
    }
    Ok(out)
}

/// The events of an artifact (`{"abi": [...], ...}`) by selector.
fn events(artifact: &str) -> Result<Events, String> {
    #[derive(serde::Deserialize)]
    struct Artifact {
        abi: JsonAbi,
    }
    let artifact: Artifact = serde_json::from_str(artifact).map_err(|e| e.to_string())?;
    let mut events = Events::new();
    for event in artifact.abi.events() {
        let declared = event
            .inputs
            .iter()
            .filter(|p| !p.indexed)
            .map(|p| DynSolType::parse(&p.selector_type()).map_err(|e| format!("{}: {e}", event.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let as_bytes = DynSolType::Tuple(declared.iter().map(string_as_bytes).collect());
        events.insert(event.selector(), DataTypes { declared, as_bytes });
    }
    Ok(events)
}

/// `ty` with every `string` read as `bytes`.
fn string_as_bytes(ty: &DynSolType) -> DynSolType {
    match ty {
        DynSolType::String => DynSolType::Bytes,
        DynSolType::Array(inner) => DynSolType::Array(Box::new(string_as_bytes(inner))),
        DynSolType::FixedArray(inner, n) => DynSolType::FixedArray(Box::new(string_as_bytes(inner)), *n),
        DynSolType::Tuple(items) => DynSolType::Tuple(items.iter().map(string_as_bytes).collect()),
        other => other.clone(),
    }
}

/// Pushes the bytes of every value that `ty` declares a `string`, depth-first.
fn collect(ty: &DynSolType, value: &DynSolValue, out: &mut Vec<Vec<u8>>) {
    match (ty, value) {
        (DynSolType::String, DynSolValue::Bytes(bytes)) => out.push(bytes.clone()),
        (DynSolType::Array(inner) | DynSolType::FixedArray(inner, _), DynSolValue::Array(items))
        | (DynSolType::FixedArray(inner, _), DynSolValue::FixedArray(items)) => {
            for item in items {
                collect(inner, item, out);
            }
        }
        (DynSolType::Tuple(types), DynSolValue::Tuple(items)) => {
            for (t, item) in types.iter().zip(items) {
                collect(t, item, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_committed_abi_parses() {
        for (abi, events) in [
            (Abi::AgentPact, &*AGENT_PACT),
            (Abi::OracleRegistry, &*ORACLE_REGISTRY),
            (Abi::AgentRegistry, &*AGENT_REGISTRY),
            (Abi::IdentityRegistry, &*IDENTITY_REGISTRY),
            (Abi::ReputationRegistry, &*REPUTATION_REGISTRY),
        ] {
            let events = events.as_ref().unwrap_or_else(|why| panic!("{abi:?}: {why}"));
            assert!(!events.is_empty(), "{abi:?} has events");
        }
    }
}
