//! An anvil with the contracts deployed, and what contract tests need around it.

use agentpact_contracts::{
    AgentPact::{self, AgentPactInstance},
    AgentRegistry::{self, AgentRegistryInstance},
    DeployOptions, Deployment, Erc8004,
    OracleRegistry::{self, OracleRegistryInstance},
    TestToken::{self, TestTokenInstance},
};
use alloy::{
    contract::{CallBuilder, CallDecoder},
    node_bindings::AnvilInstance,
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider, ProviderBuilder},
    rpc::types::TransactionReceipt,
    signers::local::PrivateKeySigner,
    sol_types::SolInterface,
};

use crate::{HarnessError, anvil};

/// The local development chain id anvil uses by default.
pub const ANVIL_CHAIN_ID: u64 = 31_337;
/// Base Sepolia's chain id; tests of remote-network support run anvil with it.
pub const BASE_SEPOLIA_CHAIN_ID: u64 = 84_532;

/// A private anvil with a test USDC (6 decimals, minted to every account) and OracleRegistry,
/// AgentPact (allowing that USDC) and AgentRegistry deployed from account 0, then our ERC-8004
/// Identity and Reputation registries (contracts/dev), which the deployment names.
///
/// The provider signs locally with the anvil dev keys; pick the sender of a call with `.from(addr)`.
pub struct TestChain {
    /// The node; dropping the chain stops it.
    pub anvil: AnvilInstance,
    /// A provider that can sign for every account in [`TestChain::accounts`].
    pub provider: DynProvider,
    /// Where the contracts are (`erc8004`: the registries below).
    pub deployment: Deployment,
    /// Our ERC-8004 Identity and Reputation registries on this chain.
    pub erc8004: Erc8004,
    /// The funded dev accounts (10,000 ETH each at start).
    pub accounts: Vec<Address>,
    /// The options the contracts were deployed with.
    pub options: DeployOptions,
    /// The AgentPact contract.
    pub pact: AgentPactInstance<DynProvider>,
    /// The OracleRegistry contract.
    pub registry: OracleRegistryInstance<DynProvider>,
    /// The AgentRegistry contract.
    pub agents: AgentRegistryInstance<DynProvider>,
    /// The test USDC the escrow allows (1,000,000 USDC minted to each account).
    pub usdc: TestTokenInstance<DynProvider>,
}

/// A mined transaction and what it cost its sender in gas.
#[derive(Debug)]
pub struct Mined {
    /// The receipt.
    pub receipt: TransactionReceipt,
    /// gas used × effective gas price, in wei.
    pub gas_cost: U256,
}

impl Mined {
    /// The escrow's events in the transaction, in order (other contracts' logs left out).
    pub fn events(&self) -> Vec<AgentPact::AgentPactEvents> {
        use alloy::sol_types::SolEventInterface;
        self.receipt
            .inner
            .logs()
            .iter()
            .filter_map(|l| AgentPact::AgentPactEvents::decode_log(&l.inner).ok().map(|e| e.data))
            .collect()
    }
}

/// A provider for `anvil` that signs for its dev accounts and for `extra` keys. Simple nonce
/// management: a nonce is read from the node for every transaction (the default cached manager
/// hands out a nonce before gas estimation, so a call that reverts in estimation leaves a gap and
/// the sender's next transaction never mines).
fn signing_provider(
    anvil: &AnvilInstance,
    extra: Vec<PrivateKeySigner>,
) -> Result<DynProvider, HarnessError> {
    let mut wallet =
        anvil.wallet().ok_or_else(|| HarnessError::Process("anvil reported no dev keys".into()))?;
    for key in extra {
        wallet.register_signer(key);
    }
    let provider = ProviderBuilder::new()
        .disable_recommended_fillers()
        .with_gas_estimation()
        .with_simple_nonce_management()
        .fetch_chain_id()
        .wallet(wallet)
        .connect_http(anvil.endpoint_url())
        .erased();
    // anvil mines on receipt of a transaction; poll for receipts often, not every 250 ms.
    provider.client().set_poll_interval(std::time::Duration::from_millis(5));
    Ok(provider)
}

impl TestChain {
    /// A provider that signs, as [`TestChain::provider`] does, for the dev accounts and also for
    /// `keys` (fresh wallets a test makes).
    pub fn provider_also_signing(&self, keys: Vec<PrivateKeySigner>) -> Result<DynProvider, HarnessError> {
        signing_provider(&self.anvil, keys)
    }

    /// Starts anvil with the local chain id and deploys with default options.
    pub async fn start() -> Result<Self, HarnessError> {
        Self::start_with(ANVIL_CHAIN_ID, DeployOptions::default()).await
    }

    /// Starts anvil with `chain_id` and deploys with `options`.
    pub async fn start_with(chain_id: u64, options: DeployOptions) -> Result<Self, HarnessError> {
        Self::start_on(anvil::spawn(chain_id)?, options).await
    }

    /// Starts a local chain whose clock begins at `genesis` (Unix seconds), for stories dated in
    /// the past, and deploys with default options.
    pub async fn start_at(genesis: u64) -> Result<Self, HarnessError> {
        Self::start_on(anvil::spawn_at(ANVIL_CHAIN_ID, Some(genesis))?, DeployOptions::default()).await
    }

    async fn start_on(anvil: AnvilInstance, options: DeployOptions) -> Result<Self, HarnessError> {
        let accounts = anvil.addresses().to_vec();
        let provider = signing_provider(&anvil, Vec::new())?;
        let usdc = agentpact_lab::usdc::deploy_test_usdc(provider.clone(), &accounts)
            .await
            .map_err(|e| HarnessError::Process(format!("{e:#}")))?;
        let options = DeployOptions { tokens: [vec![usdc], options.tokens].concat(), ..options };
        let deployment = agentpact_contracts::deploy(provider.clone(), options.clone()).await?;
        // After the contracts: their addresses and deployment block stay what they were before.
        let (erc8004, erc8004_block) = agentpact_contracts::erc8004::deploy_registries_at(&provider).await?;
        let deployment =
            Deployment { erc8004: Some(erc8004), block: deployment.block.min(erc8004_block), ..deployment };
        let pact = AgentPact::new(deployment.agent_pact, provider.clone());
        let registry = OracleRegistry::new(deployment.oracle_registry, provider.clone());
        let agents = AgentRegistry::new(deployment.agent_registry, provider.clone());
        let usdc = TestToken::new(usdc, provider.clone());
        Ok(Self { anvil, provider, deployment, erc8004, accounts, options, pact, registry, agents, usdc })
    }

    /// The currencies pacts here may be paid in: ETH (the zero address), the test USDC and any
    /// token allowed by [`TestChain::redeploy_allowing`].
    pub fn currencies(&self) -> Vec<Address> {
        [vec![Address::ZERO], self.options.tokens.clone()].concat()
    }

    /// Deploys the contracts again with `tokens` allowed beside the test USDC and points this chain
    /// at the new deployment (beside the same ERC-8004 registries): for tokens that must exist
    /// before the escrow that allows them.
    pub async fn redeploy_allowing(&mut self, tokens: Vec<Address>) -> Result<(), HarnessError> {
        let options =
            DeployOptions { tokens: [self.options.tokens.clone(), tokens].concat(), ..self.options.clone() };
        let deployment = agentpact_contracts::deploy(self.provider.clone(), options.clone()).await?;
        self.pact = AgentPact::new(deployment.agent_pact, self.provider.clone());
        self.registry = OracleRegistry::new(deployment.oracle_registry, self.provider.clone());
        self.agents = AgentRegistry::new(deployment.agent_registry, self.provider.clone());
        // From the earlier block on: the registries' history since the first deployment counts.
        let block = deployment.block.min(self.deployment.block);
        self.deployment = Deployment { erc8004: Some(self.erc8004), block, ..deployment };
        self.options = options;
        Ok(())
    }

    /// What `who` holds of `currency`: ETH in wei, a token in its base units.
    pub async fn holding(&self, currency: Address, who: Address) -> Result<U256, HarnessError> {
        if currency.is_zero() {
            self.balance(who).await
        } else {
            Ok(TestToken::new(currency, &self.provider).balanceOf(who).call().await?)
        }
    }

    /// The ETH balance of `who`, in wei.
    pub async fn balance(&self, who: Address) -> Result<U256, HarnessError> {
        Ok(self.provider.get_balance(who).await?)
    }

    /// The timestamp of the latest block.
    pub async fn now(&self) -> Result<u64, HarnessError> {
        let block = self.provider.get_block_number().await?;
        let header = self
            .provider
            .get_block_by_number(block.into())
            .await?
            .ok_or_else(|| HarnessError::Process(format!("block {block} vanished")))?;
        Ok(header.header.timestamp)
    }

    /// Makes the next block's timestamp exactly `t` (no block is mined): the next transaction runs
    /// at that second, for tests of the last allowed second and the first refused one.
    pub async fn at(&self, t: u64) -> Result<(), HarnessError> {
        let _: serde_json::Value =
            self.provider.raw_request("evm_setNextBlockTimestamp".into(), (t,)).await?;
        Ok(())
    }

    /// Mines an empty block.
    pub async fn mine(&self) -> Result<(), HarnessError> {
        let _: serde_json::Value = self.provider.raw_request("evm_mine".into(), ()).await?;
        Ok(())
    }

    /// Saves the chain's state; [`TestChain::restore`] returns to it.
    pub async fn snapshot(&self) -> Result<U256, HarnessError> {
        Ok(self.provider.raw_request("evm_snapshot".into(), ()).await?)
    }

    /// Returns to the state saved as `snapshot`, forgetting every block since.
    pub async fn restore(&self, snapshot: U256) -> Result<(), HarnessError> {
        let _: bool = self.provider.raw_request("evm_revert".into(), (snapshot,)).await?;
        Ok(())
    }

    /// Makes every later block one second after the one before (its jumps aside), whatever the
    /// wall clock does: a run whose windows open and close by chain time then takes the same
    /// course on a loaded machine as on an idle one.
    pub async fn one_second_blocks(&self) -> Result<(), HarnessError> {
        let _: serde_json::Value =
            self.provider.raw_request("anvil_setBlockTimestampInterval".into(), (1u64,)).await?;
        Ok(())
    }

    /// Moves the chain's clock forward by `secs` and mines a block at the new time.
    pub async fn increase_time(&self, secs: u64) -> Result<(), HarnessError> {
        let _: serde_json::Value = self.provider.raw_request("evm_increaseTime".into(), (secs,)).await?;
        let _: serde_json::Value = self.provider.raw_request("evm_mine".into(), ()).await?;
        Ok(())
    }
}

/// Sends a contract call, waits for its receipt and reports the gas it cost.
/// A call that reverts returns the error carrying the revert data.
pub async fn send<P: Provider, D: CallDecoder>(
    call: CallBuilder<P, D>,
) -> Result<Mined, alloy::contract::Error> {
    // Gas is the node's estimate plus a fifth: anvil 1.7.1 now and then estimates short with the
    // machine loaded (seen: `updateProfile` mined out of gas at exactly its estimate, ~1 run in
    // 100 beside two CPU hogs), and the call then fails on chain instead of doing its work.
    // Estimated at the pending block, as alloy's gas filler does: the call runs at the next block's
    // time (a test may have set it), not the latest block's.
    let call = call.block(alloy::eips::BlockId::pending());
    let estimate = call.estimate_gas().await?;
    let receipt = call.gas(estimate + estimate / 5).send().await?.get_receipt().await?;
    let gas_cost = U256::from(receipt.gas_used) * U256::from(receipt.effective_gas_price);
    Ok(Mined { receipt, gas_cost })
}

/// Sends a call that must revert and decodes the custom error it reverted with.
///
/// # Panics
/// When the call succeeds, or reverts with data that is not one of `E`'s errors: both are test
/// failures.
pub async fn revert_of<E: SolInterface + std::fmt::Debug, P: Provider, D: CallDecoder>(
    call: CallBuilder<P, D>,
) -> E {
    match send(call).await {
        Ok(mined) => {
            panic!("expected a revert, but the call was mined: {:?}", mined.receipt.transaction_hash)
        }
        Err(e) => match e.as_decoded_interface_error::<E>() {
            Some(decoded) => decoded,
            None => panic!("reverted, but not with a known custom error: {e}"),
        },
    }
}

/// A 32-byte value that is not zero, distinct for each `n` (spec and proof hashes in tests).
pub fn hash(n: u64) -> B256 {
    B256::from(U256::from(n) + U256::from(1u8))
}

/// `eth` whole ether in wei.
pub fn ether(eth: u64) -> U256 {
    U256::from(eth) * U256::from(10u64).pow(U256::from(18u8))
}
