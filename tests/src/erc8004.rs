//! The chain's ERC-8004 registries (contracts/dev) as tests use them: register an agent, rate it.

use agentpact_contracts::{
    Erc8004, IdentityRegistry, IdentityRegistry::IdentityRegistryInstance, ReputationRegistry,
    ReputationRegistry::ReputationRegistryInstance,
};
use alloy::{
    primitives::{Address, B256, U256},
    providers::DynProvider,
    sol_types::SolEvent,
};

use crate::{
    HarnessError,
    chain::{Mined, TestChain, send},
};

/// The Identity and Reputation registries, sending through one provider.
pub struct Registries {
    /// The Identity Registry.
    pub identity: IdentityRegistryInstance<DynProvider>,
    /// The Reputation Registry.
    pub reputation: ReputationRegistryInstance<DynProvider>,
}

impl Registries {
    /// `chain`'s registries, sending as the dev accounts.
    pub fn of(chain: &TestChain) -> Self {
        Self::at(chain.erc8004, chain.provider.clone())
    }

    /// The registries at `at`, sending through `provider` (which signs for the senders).
    pub fn at(at: Erc8004, provider: DynProvider) -> Self {
        Self {
            identity: IdentityRegistry::new(at.identity, provider.clone()),
            reputation: ReputationRegistry::new(at.reputation, provider),
        }
    }

    /// `who` registers with the registration file at `uri`; the agent id its `Registered` event
    /// gives.
    pub async fn register(&self, who: Address, uri: String) -> Result<U256, HarnessError> {
        let mined = send(self.identity.register_2(uri).from(who)).await?;
        mined
            .receipt
            .inner
            .logs()
            .iter()
            .find_map(|l| IdentityRegistry::Registered::decode_log(&l.inner).ok())
            .map(|e| e.agentId)
            .ok_or_else(|| HarnessError::Process("register(uri) emitted no Registered event".into()))
    }

    /// `client` rates agent `agent` `value` (0 decimals) tagged `tag1` and `tag2`, with no endpoint
    /// or feedback file.
    pub async fn rate(
        &self,
        agent: U256,
        client: Address,
        value: i128,
        tag1: &str,
        tag2: &str,
    ) -> Result<Mined, HarnessError> {
        let call = self.reputation.giveFeedback(
            agent,
            value,
            0,
            tag1.into(),
            tag2.into(),
            String::new(),
            String::new(),
            B256::ZERO,
        );
        Ok(send(call.from(client)).await?)
    }
}
