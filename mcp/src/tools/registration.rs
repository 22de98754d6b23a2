//! Joining the market (seed 000): `register_agent` and `update_profile` write this wallet's profile
//! to AgentRegistry. An agent is its wallet, so the only agent a server can register or edit is
//! its own.

use agentpact_contracts::{AgentRegistry, links};
use alloy::primitives::U256;
use alloy::primitives::{Address, B256};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{erc8004, index_note};
use crate::{
    bounds::{
        ADDRESS_CHARS, AMOUNT_CHARS, CURRENCY_CHARS, MAX_AGENT_CAPABILITIES, MAX_DESCRIPTION, MAX_NAME,
        MAX_URI,
    },
    chain::Chain,
    input,
    money::show,
    outcome::{Answer, ToolError},
    views::{InCurrency, decimal},
};

/// One capability as a tool takes it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilityInput {
    /// Its name, e.g. logo-design (1-64 bytes; searches match it without regard to case).
    #[schemars(length(min = 1, max = MAX_NAME))]
    name: String,
    /// What it covers (at most 1024 bytes).
    #[schemars(length(max = MAX_DESCRIPTION))]
    description: Option<String>,
    /// Price per job in `currency`, e.g. "5" or "0.05".
    #[schemars(length(min = 1, max = AMOUNT_CHARS))]
    price: String,
    /// The currency of the price: "USDC" (the default where the escrow takes it, else "ETH"),
    /// "ETH", or an allowed token's address.
    #[schemars(length(max = CURRENCY_CHARS))]
    currency: Option<String>,
}

/// Input of `register_agent`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterAgent {
    /// Agent display name (1-64 bytes).
    #[schemars(length(min = 1, max = MAX_NAME))]
    name: String,
    /// What the agent does (at most 1024 bytes).
    #[schemars(length(max = MAX_DESCRIPTION))]
    description: String,
    /// List of capabilities offered (1-16).
    #[schemars(length(min = 1, max = MAX_AGENT_CAPABILITIES))]
    capabilities: Vec<CapabilityInput>,
    /// URL where agent can be reached (http or https, at most 256 bytes).
    #[schemars(length(min = 1, max = MAX_URI))]
    endpoint: String,
    /// Payment address: this server's wallet (an agent is its wallet).
    #[schemars(length(max = ADDRESS_CHARS))]
    wallet: String,
    /// A link with more about the agent (optional, at most 256 bytes; https, http, ipfs, ar or
    /// hire scheme).
    #[schemars(length(max = MAX_URI))]
    metadata_uri: Option<String>,
    /// Also register the agent in the chain's ERC-8004 Identity Registry (default false): its
    /// registration file (a data: URI on chain) names `endpoint` as its MCP service, the
    /// capabilities as skills and this wallet. An ERC-8004 identity this wallet already has is
    /// reused, not doubled; a wallet already in AgentRegistry is registered in ERC-8004 only.
    /// Refused before anything is sent when the server knows no ERC-8004 registries.
    #[serde(default)]
    erc8004: bool,
}

/// The fields `update_profile` may change; the others keep their values.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileUpdates {
    /// New display name (1-64 bytes).
    #[schemars(length(min = 1, max = MAX_NAME))]
    name: Option<String>,
    /// New description (at most 1024 bytes).
    #[schemars(length(max = MAX_DESCRIPTION))]
    description: Option<String>,
    /// New capability list (replaces the old one; 1-16).
    #[schemars(length(min = 1, max = MAX_AGENT_CAPABILITIES))]
    capabilities: Option<Vec<CapabilityInput>>,
    /// New endpoint URL (http or https, at most 256 bytes).
    #[schemars(length(min = 1, max = MAX_URI))]
    endpoint: Option<String>,
    /// New metadata link (at most 256 bytes; https, http, ipfs, ar or hire scheme; "" clears it).
    #[schemars(length(max = MAX_URI))]
    metadata_uri: Option<String>,
    /// false steps out of the market (searches skip the agent), true comes back.
    active: Option<bool>,
}

/// Input of `update_profile`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateProfile {
    /// The agent: this server's wallet address.
    #[schemars(length(max = ADDRESS_CHARS))]
    agent_id: String,
    /// Fields to update (name, description, capabilities, endpoint, metadata_uri, active).
    updates: ProfileUpdates,
}

/// What `register_agent` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentRegistered {
    /// The agent's id: this wallet.
    #[schemars(with = "String")]
    agent_id: Address,
    /// Its name.
    name: String,
    /// What it offers, each at its price.
    capabilities: Vec<Offer>,
    /// The AgentRegistry transaction; null when this wallet was registered there already and
    /// only the ERC-8004 registration was asked (`erc8004: true`).
    #[schemars(with = "Option<String>")]
    tx_hash: Option<B256>,
    /// Its ERC-8004 agent id (decimal) when `erc8004` was asked and it has one; null otherwise.
    erc8004_agent_id: Option<String>,
    /// The ERC-8004 registration's transaction; null when none was sent (not asked, an identity
    /// reused, or failed).
    #[schemars(with = "Option<String>")]
    erc8004_tx_hash: Option<B256>,
    /// What happened in ERC-8004: "registered", "already_registered" (this wallet's identity
    /// there reused), "failed" (the AgentRegistry registration stands; `erc8004Error` says why);
    /// null when not asked.
    erc8004_status: Option<&'static str>,
    /// Why the ERC-8004 registration failed after the AgentRegistry one succeeded; null otherwise.
    erc8004_error: Option<String>,
}

/// What `update_profile` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileUpdated {
    /// The agent's id: this wallet.
    #[schemars(with = "String")]
    agent_id: Address,
    /// Its name.
    name: String,
    /// Whether it is in the market.
    active: bool,
    /// What it offers, each at its price.
    capabilities: Vec<Offer>,
    /// The transactions sent (profile, then standing), in order.
    #[schemars(with = "Vec<String>")]
    tx_hashes: Vec<B256>,
}

/// A capability offered at a price.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Offer {
    /// Its name.
    name: String,
    /// What the agent does for it.
    description: String,
    /// The price, in the currency.
    price: String,
    /// The currency of the price.
    #[serde(flatten)]
    money: InCurrency,
}

pub async fn register(chain: &Chain, i: RegisterAgent) -> Result<Answer<AgentRegistered>, ToolError> {
    own(chain, "wallet", &i.wallet)?;
    let profile = AgentRegistry::Profile {
        name: name("name", &i.name)?,
        description: text("description", i.description, MAX_DESCRIPTION)?,
        endpoint: endpoint("endpoint", &i.endpoint)?,
        metadataUri: metadata_uri("metadata_uri", i.metadata_uri.unwrap_or_default())?,
        capabilities: capabilities(chain, "capabilities", &i.capabilities).await?,
    };
    // Everything ERC-8004 needs is checked before the first transaction, so a refusal leaves
    // nothing half done.
    let erc8004 = if i.erc8004 { Some(erc8004::Plan::make(chain).await?) } else { None };
    let listed = match &erc8004 {
        Some(_) => {
            let current =
                chain.agents.getAgent(chain.me).call().await.map_err(|e| registration_failed(chain, e))?;
            current.registeredAt != 0
        }
        None => false,
    };
    let mined = if listed {
        None
    } else {
        Some(chain.write(chain.agents.register(profile.clone()), U256::ZERO).await?)
    };
    let (offered, capabilities) = offers(chain, &profile).await?;
    let mut text = match &mined {
        Some(m) => format!(
            "Registered {} as agent {} offering {offered}.{}",
            profile.name,
            chain.me,
            index_note(m.indexed)
        ),
        None => format!(
            "{} is already registered in AgentRegistry; its profile there is unchanged (update_profile edits it).",
            chain.me
        ),
    };
    let mut answer = AgentRegistered {
        agent_id: chain.me,
        name: profile.name.clone(),
        capabilities,
        tx_hash: mined.as_ref().map(|m| m.receipt.transaction_hash),
        erc8004_agent_id: None,
        erc8004_tx_hash: None,
        erc8004_status: None,
        erc8004_error: None,
    };
    if let Some(plan) = erc8004 {
        let skills = profile.capabilities.iter().map(|c| c.name.clone()).collect();
        match plan.register(chain, &profile.name, &profile.description, &profile.endpoint, skills).await {
            Ok(done) => {
                text.push(' ');
                text.push_str(&done.sentence);
                answer.erc8004_agent_id = done.agent_id.map(|id| id.to_string());
                answer.erc8004_tx_hash = done.tx_hash;
                answer.erc8004_status = Some(done.status);
            }
            // Nothing was sent in this call: the refusal is the answer.
            Err(e) if mined.is_none() => return Err(e),
            Err(e) => {
                let why = e.to_string();
                text.push_str(&format!(
                    " The ERC-8004 registration failed: {} The AgentRegistry registration stands; call register_agent again with erc8004: true to register in ERC-8004 only.",
                    erc8004::closed(&why)
                ));
                answer.erc8004_status = Some("failed");
                answer.erc8004_error = Some(why);
            }
        }
    }
    Answer::new(text, answer)
}

/// What a failed read of this wallet's registration means for the agent.
fn registration_failed(chain: &Chain, e: alloy::contract::Error) -> ToolError {
    crate::chain::read_failed(e, || format!("the registration of {}", chain.me))
}

pub async fn update(chain: &Chain, i: UpdateProfile) -> Result<Answer<ProfileUpdated>, ToolError> {
    own(chain, "agent_id", &i.agent_id)?;
    let u = i.updates;
    let edits_profile = u.name.is_some()
        || u.description.is_some()
        || u.capabilities.is_some()
        || u.endpoint.is_some()
        || u.metadata_uri.is_some();
    if !edits_profile && u.active.is_none() {
        return Err(ToolError::Invalid(
            "updates names no field: give name, description, capabilities, endpoint, metadata_uri or active"
                .into(),
        ));
    }
    // The fields as given are checked before anything is read.
    let new_name = u.name.as_deref().map(|given| name("updates.name", given)).transpose()?;
    let new_description =
        u.description.map(|given| text("updates.description", given, MAX_DESCRIPTION)).transpose()?;
    let new_endpoint = u.endpoint.as_deref().map(|url| endpoint("updates.endpoint", url)).transpose()?;
    let new_metadata = u.metadata_uri.map(|uri| metadata_uri("updates.metadata_uri", uri)).transpose()?;
    let current = chain.agents.getAgent(chain.me).call().await.map_err(|e| registration_failed(chain, e))?;
    if current.registeredAt == 0 {
        return Err(ToolError::Invalid(format!(
            "{} is not a registered agent: register_agent first",
            chain.me
        )));
    }
    let mut profile = current.profile;
    profile.name = new_name.unwrap_or(profile.name);
    profile.description = new_description.unwrap_or(profile.description);
    profile.endpoint = new_endpoint.unwrap_or(profile.endpoint);
    profile.metadataUri = new_metadata.unwrap_or(profile.metadataUri);
    if let Some(list) = &u.capabilities {
        profile.capabilities = capabilities(chain, "updates.capabilities", list).await?;
    }
    let mut txs = Vec::new();
    let mut indexed = true;
    if edits_profile {
        let mined = chain.write(chain.agents.updateProfile(profile.clone()), U256::ZERO).await?;
        txs.push(mined.receipt.transaction_hash);
        indexed &= mined.indexed;
    }
    let active = u.active.unwrap_or(current.active);
    if active != current.active {
        let mined = if active {
            chain.write(chain.agents.reactivate(), U256::ZERO).await?
        } else {
            chain.write(chain.agents.deactivate(), U256::ZERO).await?
        };
        txs.push(mined.receipt.transaction_hash);
        indexed &= mined.indexed;
    }
    let standing = if active { "in the market" } else { "out of the market (searches skip it)" };
    let (offered, capabilities) = offers(chain, &profile).await?;
    Answer::new(
        format!("Updated {}: offers {offered}, {standing}.{}", profile.name, index_note(indexed)),
        ProfileUpdated { agent_id: chain.me, name: profile.name, active, capabilities, tx_hashes: txs },
    )
}

/// Refuses any agent but this server's own wallet.
fn own(chain: &Chain, field: &str, text: &str) -> Result<(), ToolError> {
    let given = input::address(field, text)?;
    if given != chain.me {
        return Err(ToolError::Invalid(format!(
            "{field} is {given}, but this server signs as {}: an agent is its wallet, so it can only register \
             and edit itself. Pass {}",
            chain.me, chain.me
        )));
    }
    Ok(())
}

/// An agent's display name (`field`): not blank, at most [`MAX_NAME`] bytes once trimmed.
fn name(field: &str, given: &str) -> Result<String, ToolError> {
    let name = input::filled(field, given)?;
    input::fits(field, name, MAX_NAME)?;
    Ok(name.to_owned())
}

/// A text the registry stores as given, within its `max` bytes.
fn text(field: &str, given: String, max: usize) -> Result<String, ToolError> {
    input::fits(field, &given, max)?;
    Ok(given)
}

/// The metadata URI `field` gives: empty, or a link ([`links::check`]) within [`MAX_URI`] bytes.
fn metadata_uri(field: &str, given: String) -> Result<String, ToolError> {
    links::check(field, &given).map_err(ToolError::Invalid)?;
    text(field, given, MAX_URI)
}

/// The http(s) URL `field` gives, at most [`MAX_URI`] bytes once trimmed.
fn endpoint(field: &str, text: &str) -> Result<String, ToolError> {
    let t = text.trim();
    input::fits(field, t, MAX_URI)?;
    let ok = (t.starts_with("https://") || t.starts_with("http://"))
        && t.len() > "https://".len()
        && !t.chars().any(char::is_whitespace);
    if !ok {
        return Err(ToolError::Invalid(format!(
            "{field} must be an http(s) URL where the agent can be reached, e.g. https://agent.example/mcp, not {text:?}"
        )));
    }
    Ok(t.to_owned())
}

/// The capabilities `field` lists, each priced in its currency, within the registry's bounds.
async fn capabilities(
    chain: &Chain,
    field: &str,
    list: &[CapabilityInput],
) -> Result<Vec<AgentRegistry::Capability>, ToolError> {
    let mut out = Vec::with_capacity(list.len());
    for (n, c) in list.iter().enumerate() {
        let name = input::filled(&format!("{field}[{n}].name"), &c.name)?;
        input::fits(&format!("{field}[{n}].name"), name, MAX_NAME)?;
        let description = c.description.clone().unwrap_or_default();
        input::fits(&format!("{field}[{n}].description"), &description, MAX_DESCRIPTION)?;
        let currency = chain.market_currency(&format!("currency of {name}"), c.currency.as_deref()).await?;
        out.push(AgentRegistry::Capability {
            name: name.to_owned(),
            description,
            price: input::units(&format!("price of {name}"), &c.price, currency.decimals, &currency.symbol)?,
            currency: currency.address,
        });
    }
    Ok(out)
}

/// What `p` offers, as a sentence ("logo-design (5 USDC), …") and as JSON, each price in its
/// currency.
async fn offers(chain: &Chain, p: &AgentRegistry::Profile) -> Result<(String, Vec<Offer>), ToolError> {
    let mut text = Vec::with_capacity(p.capabilities.len());
    let mut list = Vec::with_capacity(p.capabilities.len());
    for c in &p.capabilities {
        let currency = chain.currency_at(c.currency).await?;
        text.push(format!("{} ({})", c.name, show(c.price, &currency)));
        list.push(Offer {
            name: c.name.clone(),
            description: c.description.clone(),
            price: decimal(c.price, &currency),
            money: InCurrency::of(&currency),
        });
    }
    Ok((text.join(", "), list))
}
