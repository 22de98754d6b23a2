//! The ERC-8004 side of the market tools: `register_agent` also registers the agent in the chain's
//! Identity Registry (`erc8004: true`), and `submit_feedback` gives the rating as ERC-8004 feedback
//! too when the rated seller has an identity and the pact paid it, with a feedback file that
//! proves the payout. The file formats are `agentpact_contracts::erc8004`'s.

use agentpact_contracts::{
    Erc8004, IdentityRegistry, PactStatus, ReputationRegistry,
    erc8004::{FeedbackFile, PactProof, RegistrationFile},
};
use agentpact_read::{AgentRef, Erc8004Agent};
use alloy::{
    primitives::{Address, B256, U256},
    providers::Provider,
};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use super::{index_note, receipt};
use crate::{chain::Chain, outcome::ToolError};

/// `why` as a sentence of its own: ending in a full stop.
pub fn closed(why: &str) -> String {
    let why = why.trim_end();
    if why.ends_with(['.', '!', '?']) { why.to_owned() } else { format!("{why}.") }
}

/// The refusal of an ERC-8004 registration on a chain with no ERC-8004 registries configured: none known
/// to this server, or `missing` (the configured addresses holding no contract here, as Base
/// Sepolia's singletons on a local chain with its id).
fn no_registries(chain: &Chain, missing: Option<String>) -> ToolError {
    crate::outcome::Missing::Erc8004 { chain_id: chain.chain_id, absent: missing }.into()
}

/// The configured `registries` that hold no contract on the chain, named for a refusal; `None`
/// when both do.
async fn absent(chain: &Chain, registries: Erc8004) -> Result<Option<String>, ToolError> {
    let mut empty = Vec::new();
    for (name, at) in [("Identity", registries.identity), ("Reputation", registries.reputation)] {
        if chain.provider.get_code_at(at).await.map_err(crate::chain::rpc)?.is_empty() {
            empty.push(format!("the {name} Registry address {at} holds no contract"));
        }
    }
    Ok((!empty.is_empty()).then(|| empty.join("; ")))
}

/// An ERC-8004 registration checked before anything is sent: the registries, and the identity
/// this wallet already has there (from the index), if any.
pub struct Plan {
    registries: Erc8004,
    existing: Option<Erc8004Agent>,
}

/// What an ERC-8004 registration did.
pub struct Registration {
    /// The agent's token id (none when the receipt named none).
    pub agent_id: Option<U256>,
    /// The transaction, when one was sent.
    pub tx_hash: Option<B256>,
    /// "registered" or "already_registered".
    pub status: &'static str,
    /// What happened, in a sentence.
    pub sentence: String,
}

impl Plan {
    /// The plan for this wallet, or the refusal when the chain has no registries configured:
    /// none known, or none deployed where they are said to be.
    pub async fn make(chain: &Chain) -> Result<Self, ToolError> {
        let registries = chain.erc8004.ok_or_else(|| no_registries(chain, None))?;
        if let Some(missing) = absent(chain, registries).await? {
            return Err(no_registries(chain, Some(missing)));
        }
        let existing = chain
            .reader
            .erc8004_agent(chain.chain_id, AgentRef::Address(chain.me))
            .await?
            .filter(|a| a.wallet == Some(chain.me) || a.owner == Some(chain.me));
        Ok(Self { registries, existing })
    }

    /// Registers this wallet with `register(agentURI)`, its registration file naming `endpoint` as
    /// its MCP service and `skills`; or answers the identity it already has.
    pub async fn register(
        self,
        chain: &Chain,
        name: &str,
        description: &str,
        endpoint: &str,
        skills: Vec<String>,
    ) -> Result<Registration, ToolError> {
        if let Some(a) = self.existing {
            return Ok(Registration {
                agent_id: Some(a.agent_id),
                tx_hash: None,
                status: "already_registered",
                sentence: format!(
                    "This wallet already is ERC-8004 agent #{} (registered {}): not registered again.",
                    a.agent_id,
                    a.registered_at.format("%Y-%m-%d %H:%M UTC")
                ),
            });
        }
        let file = RegistrationFile::ours(name, description, endpoint, skills, chain.chain_id, chain.me);
        let identity = IdentityRegistry::new(self.registries.identity, chain.provider.clone());
        let call = identity.call_builder(&IdentityRegistry::register_2Call { agentURI: file.to_data_uri() });
        let mined = chain.write(call, U256::ZERO).await?;
        let agent_id = receipt::events::<IdentityRegistry::Registered>(&mined.receipt)
            .iter()
            .find(|e| e.owner == chain.me)
            .map(|e| e.agentId);
        let sentence = match agent_id {
            Some(id) => format!(
                "Registered in ERC-8004 as agent #{id} (Identity Registry {}).{}",
                self.registries.identity,
                index_note(mined.indexed)
            ),
            None => format!(
                "Registered in ERC-8004 (transaction {}), but its receipt names no Registered event: get_agent shows the id once indexed.",
                mined.receipt.transaction_hash
            ),
        };
        Ok(Registration {
            agent_id,
            tx_hash: Some(mined.receipt.transaction_hash),
            status: "registered",
            sentence,
        })
    }
}

/// The ERC-8004 feedback a rating also gave.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GivenFeedback {
    /// The rated agent's ERC-8004 token id (decimal).
    pub agent_id: String,
    /// The `giveFeedback` transaction.
    #[schemars(with = "String")]
    pub tx_hash: B256,
    /// The feedback file as given (`data:application/json;base64,…`; its keccak256 is the
    /// feedback hash): the ERC's fields and `agentPact`, the pact and the transaction that paid
    /// the agent.
    pub feedback_uri: String,
}

/// What became of the ERC-8004 side of a rating.
pub enum FeedbackOutcome {
    /// Given.
    Given(GivenFeedback, String),
    /// Not given, and why (no registries, no identity, the pact did not pay the rated agent).
    Skipped(String),
    /// Tried and failed (the AgentRegistry rating stands): why.
    Failed(String),
}

/// Gives `rating` of pact `pact_id` as ERC-8004 feedback on `ratee`, when that fits: the server
/// knows the registries, the pact paid its seller (COMPLETED or SPLIT), the ratee is that seller
/// and has an ERC-8004 identity (in the index), and this wallet is not its owner.
pub async fn give_feedback(
    chain: &Chain,
    pact_id: U256,
    ratee: Option<Address>,
    rating: u8,
) -> FeedbackOutcome {
    match plan_feedback(chain, pact_id, ratee, rating).await {
        Ok(Ok((file, agent, registries))) => send_feedback(chain, file, &agent, registries).await,
        Ok(Err(why)) => FeedbackOutcome::Skipped(why),
        Err(e) => FeedbackOutcome::Failed(format!("the index could not say whether to give it: {e}")),
    }
}

/// The feedback file to give, or why none is given.
async fn plan_feedback(
    chain: &Chain,
    pact_id: U256,
    ratee: Option<Address>,
    rating: u8,
) -> Result<Result<(FeedbackFile, Erc8004Agent, Erc8004), String>, ToolError> {
    let Some(registries) = chain.erc8004 else {
        return Ok(Err(format!(
            "this server knows no ERC-8004 registries on chain {} (ERC8004_IDENTITY_ADDRESS, ERC8004_REPUTATION_ADDRESS)",
            chain.chain_id
        )));
    };
    let Some(ratee) = ratee else {
        return Ok(Err("the rating's receipt names no rated address".into()));
    };
    let Some(pact) = chain.reader.pact(chain.chain_id, pact_id).await? else {
        return Ok(Err(format!("pact #{pact_id} is not in the index yet")));
    };
    if !matches!(pact.status, PactStatus::Completed | PactStatus::Split) {
        return Ok(Err(format!(
            "pact #{pact_id} is {}: it did not pay the seller, so it grounds no ERC-8004 feedback",
            pact.status.name()
        )));
    }
    if pact.seller != Some(ratee) {
        return Ok(Err(format!(
            "{ratee} is pact #{pact_id}'s buyer: ERC-8004 feedback rates the agent paid for the work"
        )));
    }
    let Some(agent) = chain.reader.erc8004_agent(chain.chain_id, AgentRef::Address(ratee)).await? else {
        return Ok(Err(format!("{ratee} has no ERC-8004 identity")));
    };
    if agent.owner == Some(chain.me) {
        return Ok(Err(format!(
            "this wallet owns ERC-8004 agent #{}: the Reputation Registry refuses an agent's own feedback",
            agent.agent_id
        )));
    }
    let timeline = chain.reader.timeline(chain.chain_id, pact_id).await?;
    let payout = timeline.iter().rev().find(|e| {
        e.kind == agentpact_contracts::EventKind::Payout
            && e.data["to"].as_str().and_then(|to| to.parse::<Address>().ok()) == Some(ratee)
    });
    let Some(payout) = payout else {
        return Ok(Err(format!("the index holds no payout of pact #{pact_id} to {ratee} yet")));
    };
    let proof = PactProof {
        chain_id: chain.chain_id,
        contract: *chain.pact.address(),
        pact_id: pact_id.to_string(),
        seller: ratee,
        payout_tx: payout.tx_hash,
        status: pact.status.name().to_owned(),
    };
    let created_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let file = FeedbackFile::ours(
        chain.chain_id,
        registries.identity,
        agent.agent_id,
        chain.me,
        created_at,
        rating,
        proof,
    );
    Ok(Ok((file, agent, registries)))
}

async fn send_feedback(
    chain: &Chain,
    file: FeedbackFile,
    agent: &Erc8004Agent,
    registries: Erc8004,
) -> FeedbackOutcome {
    let reputation = ReputationRegistry::new(registries.reputation, chain.provider.clone());
    let uri = file.to_data_uri();
    let pact_id = file.agent_pact.pact_id.clone();
    // The chain gets exactly what the file says: its value, decimals and tags.
    let call = reputation.giveFeedback(
        agent.agent_id,
        i128::from(file.value),
        file.value_decimals,
        file.tag1.clone(),
        file.tag2.clone(),
        agent.mcp_endpoint.clone().unwrap_or_default(),
        uri.clone(),
        file.hash(),
    );
    match chain.write(call, U256::ZERO).await {
        Ok(mined) => {
            let sentence = format!(
                "Also given as ERC-8004 feedback {} on agent #{} (tagged pact:{pact_id}, with the payout's proof).{}",
                file.value,
                agent.agent_id,
                index_note(mined.indexed)
            );
            FeedbackOutcome::Given(
                GivenFeedback {
                    agent_id: agent.agent_id.to_string(),
                    tx_hash: mined.receipt.transaction_hash,
                    feedback_uri: uri,
                },
                sentence,
            )
        }
        Err(e) => FeedbackOutcome::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use agentpact_contracts::erc8004::{FEEDBACK_TAG, pact_tag};
    use alloy::{primitives::U256, sol_types::SolCall};

    #[test]
    fn the_registration_call_is_register_with_a_uri_and_the_tags_are_the_files() {
        assert_eq!(agentpact_contracts::IdentityRegistry::register_2Call::SIGNATURE, "register(string)");
        assert_eq!((pact_tag(U256::from(7)), FEEDBACK_TAG), ("pact:7".to_owned(), "agentpact"));
    }
}
