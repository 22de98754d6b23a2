//! Where a chain's ERC-8004 registries live: the Identity Registry (agents as ERC-721 tokens with
//! a registration file) and the Reputation Registry (feedback on them). They are singletons per
//! chain, deployed by their authors, not by us; the indexer follows them beside our contracts and
//! the MCP server writes to them (docs/erc8004.md). On anvil, where no singleton exists,
//! [`deploy_registries`] deploys our own (contracts/dev) for `agentpact dev` and the tests.

use alloy::{
    primitives::{Address, B256, U256, address, keccak256},
    providers::Provider,
};

use crate::{DeployError, IdentityRegistry, ReputationRegistry, deploy::send_deployment};

/// The addresses of one chain's ERC-8004 Identity and Reputation registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Erc8004 {
    /// The Identity Registry (ERC-721: agentId → owner, registration file, agent wallet).
    pub identity: Address,
    /// The Reputation Registry (`giveFeedback`, `revokeFeedback`, `NewFeedback`).
    pub reputation: Address,
}

/// Base Sepolia's chain id.
pub const BASE_SEPOLIA: u64 = 84_532;

impl Erc8004 {
    /// The registries deployed on Base Sepolia, as the ERC-8004 SDK (`agent0-sdk`) lists them.
    pub const BASE_SEPOLIA: Self = Self {
        identity: address!("8004A818BFB912233c491871b3d84c89A494BD9e"),
        reputation: address!("8004B663056A597Dffe9eCcC1965A193B7388713"),
    };

    /// The documented registries of `chain_id`, if we know them.
    pub const fn known(chain_id: u64) -> Option<Self> {
        match chain_id {
            BASE_SEPOLIA => Some(Self::BASE_SEPOLIA),
            _ => None,
        }
    }
}

/// Deploys an Identity Registry, then a Reputation Registry bound to it, from the provider's
/// default sender: the dev and test stand-ins for a chain's ERC-8004 singletons (contracts/dev,
/// written from the ERC's text; the SDK conformance test, tests/tests/erc8004_registries.rs, drives
/// them with `agent0-sdk`). For anvil only: on a public chain follow its singletons
/// ([`Erc8004::known`]).
pub async fn deploy_registries<P: Provider>(provider: &P) -> Result<Erc8004, DeployError> {
    Ok(deploy_registries_at(provider).await?.0)
}

/// [`deploy_registries`], also saying the block of the first deployment transaction (an indexer of
/// the registries starts there).
pub async fn deploy_registries_at<P: Provider>(provider: &P) -> Result<(Erc8004, u64), DeployError> {
    let (identity, block) =
        send_deployment("IdentityRegistry", IdentityRegistry::deploy_builder(provider)).await?;
    let reputation_call = ReputationRegistry::deploy_builder(provider, identity);
    let (reputation, _) = send_deployment("ReputationRegistry", reputation_call).await?;
    Ok((Erc8004 { identity, reputation }, block))
}

/// The registration file type ERC-8004 names.
pub const REGISTRATION_TYPE: &str = "https://eips.ethereum.org/EIPS/eip-8004#registration-v1";

/// The metadata key of the address paid for an agent (reserved by ERC-8004).
pub const AGENT_WALLET_KEY: &str = "agentWallet";

/// An ERC-8004 registration file: the parts the index reads and the MCP server writes. Fields
/// it does not name are ignored when reading.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationFile {
    /// [`REGISTRATION_TYPE`].
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The agent's name.
    #[serde(default)]
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Where and how it is reached (`MCP`, `A2A`, `OASF` with its skills, `wallet`, …).
    #[serde(default)]
    pub services: Vec<Service>,
    /// Whether it takes work.
    #[serde(default = "yes")]
    pub active: bool,
}

const fn yes() -> bool {
    true
}

/// One entry of a registration file's `services`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Service {
    /// `MCP`, `A2A`, `OASF`, `wallet`, `ENS`, `DID`.
    pub name: String,
    /// Its URL (or, for `wallet`, `eip155:{chain}:{address}`).
    pub endpoint: String,
    /// The protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What the agent can do through it (OASF skills).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
}

/// Why a URI is not a registration file the index can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    /// Not a `data:` URI: the file lives elsewhere (https, ipfs) and is not fetched.
    #[error("not a data: URI")]
    NotData,
    /// A `data:` URI that does not hold JSON, or not base64 / percent-encoded as it says.
    #[error("the data: URI does not decode: {0}")]
    Encoding(String),
    /// The JSON is not a registration file.
    #[error("not a registration file: {0}")]
    Json(String),
}

impl RegistrationFile {
    /// A file of ours: `name`, `description`, the MCP endpoint, the capabilities as OASF skills,
    /// and the AgentPact wallet on `chain_id`.
    pub fn ours(
        name: &str,
        description: &str,
        mcp: &str,
        skills: Vec<String>,
        chain_id: u64,
        wallet: Address,
    ) -> Self {
        let service = |name: &str, endpoint: String, version: Option<&str>, skills| Service {
            name: name.into(),
            endpoint,
            version: version.map(Into::into),
            skills,
        };
        Self {
            kind: REGISTRATION_TYPE.into(),
            name: name.into(),
            description: description.into(),
            services: vec![
                service("MCP", mcp.into(), Some("2026-07-28"), Vec::new()),
                service("OASF", "https://github.com/agntcy/oasf/".into(), Some("v0.8.0"), skills),
                service("wallet", format!("eip155:{chain_id}:{wallet}"), None, Vec::new()),
            ],
            active: true,
        }
    }

    /// The file as a `data:application/json;base64,…` URI, stored on chain as the agent URI.
    pub fn to_data_uri(&self) -> String {
        use base64::Engine as _;
        let json = serde_json::to_vec(self).unwrap_or_default();
        format!("data:application/json;base64,{}", base64::engine::general_purpose::STANDARD.encode(json))
    }

    /// Reads a file given as a `data:` URI (base64 or percent-encoded JSON).
    pub fn from_uri(uri: &[u8]) -> Result<Self, RegistrationError> {
        serde_json::from_slice(&data_uri_json(uri)?).map_err(|e| RegistrationError::Json(e.to_string()))
    }

    /// The endpoint of its first `MCP` service.
    pub fn mcp_endpoint(&self) -> Option<&str> {
        self.services.iter().find(|s| s.name.eq_ignore_ascii_case("mcp")).map(|s| s.endpoint.as_str())
    }

    /// Every skill any service lists, in order, without repeats.
    pub fn skills(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for skill in self.services.iter().flat_map(|s| &s.skills) {
            if !all.contains(skill) {
                all.push(skill.clone());
            }
        }
        all
    }
}

/// The JSON bytes a `data:application/json` URI holds (base64 or percent-encoded).
fn data_uri_json(uri: &[u8]) -> Result<Vec<u8>, RegistrationError> {
    use base64::Engine as _;
    let rest = uri.strip_prefix(b"data:").ok_or(RegistrationError::NotData)?;
    let comma = rest.iter().position(|&b| b == b',').ok_or(RegistrationError::Encoding("no comma".into()))?;
    let (header, payload) = (&rest[..comma], &rest[comma + 1..]);
    let header = String::from_utf8_lossy(header).to_ascii_lowercase();
    if !header.starts_with("application/json") {
        return Err(RegistrationError::Encoding(format!("media type {header:?} is not application/json")));
    }
    if header.ends_with(";base64") {
        let text: Vec<u8> = payload.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(&text)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(&text))
            .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&text))
            .map_err(|e| RegistrationError::Encoding(e.to_string()))
    } else {
        percent_decode(payload)
    }
}

/// `tag2` of every ERC-8004 feedback we give: who wrote it.
pub const FEEDBACK_TAG: &str = "agentpact";

/// `tag1` of the ERC-8004 feedback on pact `pact_id`: `pact:{id}`, the tag the index grounds the
/// feedback by (the pact must have paid the rated agent's wallet, with the client as buyer).
pub fn pact_tag(pact_id: U256) -> String {
    format!("pact:{pact_id}")
}

/// A 1-5 rating on ERC-8004's 0-100 scale (`valueDecimals` 0), which the SDKs average: 1 → 0,
/// 2 → 25, 3 → 50, 4 → 75, 5 → 100. Out-of-range ratings are clamped to 1-5.
pub const fn rating_value(rating: u8) -> i64 {
    let r = if rating < 1 {
        1
    } else if rating > 5 {
        5
    } else {
        rating
    };
    (r as i64 - 1) * 25
}

/// The pact a feedback of ours is about, and the proof that it paid the agent: enough for anyone
/// to check the rating against the chain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PactProof {
    /// The chain the pact is on.
    pub chain_id: u64,
    /// The AgentPact contract holding it.
    pub contract: Address,
    /// The pact's id, as a decimal string.
    pub pact_id: String,
    /// The seller the payout credited: the rated agent's wallet.
    pub seller: Address,
    /// The transaction whose `Payout` credited the rated agent (the seller).
    pub payout_tx: B256,
    /// How the pact ended: `COMPLETED` or `SPLIT`.
    pub status: String,
}

/// An ERC-8004 feedback file (the off-chain part of `giveFeedback`: its `feedbackURI`, with
/// `feedbackHash` the keccak256 of the file's bytes), as the MCP server writes one: the ERC's
/// fields, and `agentPact`, which proves the client paid the agent through a settled pact.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackFile {
    /// `eip155:{chain}:{identityRegistry}`.
    pub agent_registry: String,
    /// The rated agent's token id (a JSON number while it fits 64 bits, else a decimal string).
    #[serde(with = "agent_id_json")]
    pub agent_id: U256,
    /// `eip155:{chain}:{client}`: who rates.
    pub client_address: String,
    /// When the feedback was written (RFC 3339, UTC).
    pub created_at: String,
    /// The value given on chain.
    pub value: i64,
    /// Its decimals (0).
    pub value_decimals: u8,
    /// `tag1` as given on chain ([`pact_tag`]).
    pub tag1: String,
    /// `tag2` as given on chain ([`FEEDBACK_TAG`]).
    pub tag2: String,
    /// The ERC's optional payment proof, which ERC-8004's SDKs and subgraph read: the client
    /// paid the agent's wallet in the payout transaction of [`FeedbackFile::agent_pact`].
    pub proof_of_payment: ProofOfPayment,
    /// The pact behind the rating.
    pub agent_pact: PactProof,
}

/// The ERC-8004 feedback file's `proofOfPayment`: who paid whom, on which chain, in which
/// transaction (for a pact, the escrow's release to the seller).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProofOfPayment {
    /// The client: the pact's buyer.
    pub from_address: Address,
    /// The agent's wallet: the pact's seller.
    pub to_address: Address,
    /// The chain id, as a decimal string (the ERC's example writes it so).
    pub chain_id: String,
    /// The payout transaction.
    pub tx_hash: B256,
}

impl FeedbackFile {
    /// The file `client` writes on `chain_id` about agent `agent_id` of the Identity Registry at
    /// `identity`, for `rating` (1-5) of the pact `proof` names.
    pub fn ours(
        chain_id: u64,
        identity: Address,
        agent_id: U256,
        client: Address,
        created_at: String,
        rating: u8,
        proof: PactProof,
    ) -> Self {
        Self {
            agent_registry: format!("eip155:{chain_id}:{identity}"),
            agent_id,
            client_address: format!("eip155:{chain_id}:{client}"),
            created_at,
            value: rating_value(rating),
            value_decimals: 0,
            tag1: format!("pact:{}", proof.pact_id),
            tag2: FEEDBACK_TAG.into(),
            proof_of_payment: ProofOfPayment {
                from_address: client,
                to_address: proof.seller,
                chain_id: proof.chain_id.to_string(),
                tx_hash: proof.payout_tx,
            },
            agent_pact: proof,
        }
    }

    /// The file's bytes: compact JSON, what `feedbackHash` hashes.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// `feedbackHash`: the keccak256 of [`FeedbackFile::to_json`].
    pub fn hash(&self) -> B256 {
        keccak256(self.to_json())
    }

    /// `feedbackURI`: the file as a `data:application/json;base64,…` URI.
    pub fn to_data_uri(&self) -> String {
        use base64::Engine as _;
        format!(
            "data:application/json;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(self.to_json())
        )
    }

    /// Reads a file given as a `data:` URI (base64 or percent-encoded JSON).
    pub fn from_uri(uri: &[u8]) -> Result<Self, RegistrationError> {
        serde_json::from_slice(&data_uri_json(uri)?).map_err(|e| RegistrationError::Json(e.to_string()))
    }
}

/// An agent id in a feedback file: a JSON number as the ERC shows it, or a decimal string when it
/// is too large for one.
mod agent_id_json {
    use alloy::primitives::U256;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(id: &U256, s: S) -> Result<S::Ok, S::Error> {
        match u64::try_from(*id) {
            Ok(n) => s.serialize_u64(n),
            Err(_) => s.serialize_str(&id.to_string()),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<U256, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Id {
            Number(u64),
            Text(String),
        }
        match Id::deserialize(d)? {
            Id::Number(n) => Ok(U256::from(n)),
            Id::Text(t) => t.parse().map_err(D::Error::custom),
        }
    }
}

fn percent_decode(text: &[u8]) -> Result<Vec<u8>, RegistrationError> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' {
            let hex = text.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(byte.ok_or_else(|| RegistrationError::Encoding(format!("bad escape at byte {i}")))?);
            i += 3;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_of_ours_reads_back_from_its_data_uri() {
        let wallet = Address::repeat_byte(7);
        let file = RegistrationFile::ours(
            "Ada",
            "logos",
            "https://a.example/mcp",
            vec!["logo-design".into()],
            84_532,
            wallet,
        );
        let back = RegistrationFile::from_uri(file.to_data_uri().as_bytes()).expect("reads back");
        assert_eq!(back, file);
        assert_eq!(back.mcp_endpoint(), Some("https://a.example/mcp"));
        assert_eq!(back.skills(), ["logo-design"]);
    }

    #[test]
    fn a_feedback_file_reads_back_and_its_hash_is_the_keccak_of_its_bytes() {
        let (identity, client, contract) =
            (Address::repeat_byte(1), Address::repeat_byte(2), Address::repeat_byte(3));
        let proof = PactProof {
            chain_id: 31_337,
            contract,
            pact_id: "12".into(),
            seller: Address::repeat_byte(4),
            payout_tx: B256::repeat_byte(9),
            status: "COMPLETED".into(),
        };
        let file = FeedbackFile::ours(
            31_337,
            identity,
            U256::from(4),
            client,
            "2026-11-24T12:00:00Z".into(),
            4,
            proof,
        );
        assert_eq!(
            (file.value, file.value_decimals, file.tag1.as_str(), file.tag2.as_str()),
            (75, 0, "pact:12", "agentpact")
        );
        let uri = file.to_data_uri();
        assert!(uri.starts_with("data:application/json;base64,"), "{uri}");
        let back = FeedbackFile::from_uri(uri.as_bytes()).expect("reads back");
        assert_eq!(back, file);
        assert_eq!(file.hash(), keccak256(data_uri_json(uri.as_bytes()).expect("decodes")));
        // The ERC's field names, and agentPact's.
        let json: serde_json::Value = serde_json::from_slice(&file.to_json()).expect("json");
        assert_eq!(json["agentRegistry"], format!("eip155:31337:{identity}"));
        assert_eq!(json["clientAddress"], format!("eip155:31337:{client}"));
        assert_eq!(json["agentId"], 4);
        assert_eq!(json["createdAt"], "2026-11-24T12:00:00Z");
        assert_eq!(json["value"], 75);
        assert_eq!(json["valueDecimals"], 0);
        let pact = &json["agentPact"];
        assert_eq!(
            (pact["chainId"].as_u64(), pact["pactId"].as_str(), pact["status"].as_str()),
            (Some(31_337), Some("12"), Some("COMPLETED"))
        );
        assert_eq!(pact["contract"], contract.to_string());
        assert_eq!(pact["payoutTx"], B256::repeat_byte(9).to_string());
        // The ERC's payment proof: the client paid the seller in the payout transaction.
        let paid = &json["proofOfPayment"];
        assert_eq!(
            (paid["fromAddress"].as_str(), paid["toAddress"].as_str(), paid["chainId"].as_str()),
            (Some(&*client.to_string()), Some(&*Address::repeat_byte(4).to_string()), Some("31337"))
        );
        assert_eq!(paid["txHash"], B256::repeat_byte(9).to_string());
        // An id past 64 bits is written as a decimal string and read back.
        let big = FeedbackFile { agent_id: U256::MAX, ..file };
        assert_eq!(FeedbackFile::from_uri(big.to_data_uri().as_bytes()).expect("reads").agent_id, U256::MAX);
        assert_eq!([1, 2, 3, 4, 5].map(rating_value), [0, 25, 50, 75, 100]);
    }

    #[test]
    fn other_uris_and_broken_files_are_refused_not_guessed() {
        assert_eq!(
            RegistrationFile::from_uri(b"https://a.example/agent.json"),
            Err(RegistrationError::NotData)
        );
        assert!(matches!(
            RegistrationFile::from_uri(b"data:text/plain,hi"),
            Err(RegistrationError::Encoding(_))
        ));
        assert!(matches!(
            RegistrationFile::from_uri(b"data:application/json;base64,!!"),
            Err(RegistrationError::Encoding(_))
        ));
        assert!(matches!(
            RegistrationFile::from_uri(b"data:application/json,%7B%7D%5B"),
            Err(RegistrationError::Json(_))
        ));
        let plain = RegistrationFile::from_uri(br#"data:application/json,{"name":"B%20b","services":[]}"#)
            .expect("percent");
        assert_eq!((plain.name.as_str(), plain.active), ("B b", true));
    }
}
