//! A party that is a malicious contract: re-entering on payment gets it nothing extra, and refusing
//! payment locks nobody's funds but its own (pull payments).

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator,
    OracleRegistry::{self, OracleRegistryErrors},
    PactStatus,
};
use agentpact_tests::{
    HarnessError,
    chain::{ether, hash, revert_of, send},
    pacts::{Market, stake},
    receiver::HostileReceiver::{self, HostileReceiverInstance},
};
use alloy::{
    primitives::{Address, Bytes, U256},
    providers::DynProvider,
    sol_types::{SolCall, SolInterface},
};

type Result = std::result::Result<(), HarnessError>;

const ACCEPT: u8 = 0;
const REENTER: u8 = 1;
const REFUSE: u8 = 2;

/// A market plus a hostile contract, owned by account 7, that has sold work on a completed pact
/// and is owed payment + its stake.
struct Scene {
    m: Market,
    hostile: HostileReceiverInstance<DynProvider>,
    owner: Address,
}

fn payment() -> U256 {
    ether(3)
}

impl Scene {
    async fn new() -> std::result::Result<Self, HarnessError> {
        let m = Market::open().await?;
        let owner = m.chain.accounts[7];
        let deployed = send(HostileReceiver::deploy_builder(m.chain.provider.clone()).from(owner)).await?;
        let address = deployed
            .receipt
            .contract_address
            .ok_or_else(|| HarnessError::Process("HostileReceiver was not deployed".into()))?;
        let hostile = HostileReceiver::new(address, m.chain.provider.clone());
        Ok(Self { m, hostile, owner })
    }

    /// Has the hostile contract call the escrow with `call`, forwarding `value`.
    fn exec<C: SolCall>(
        &self,
        target: Address,
        call: C,
        value: U256,
    ) -> alloy::contract::CallBuilder<&DynProvider, std::marker::PhantomData<HostileReceiver::execCall>> {
        self.hostile.exec(target, Bytes::from(call.abi_encode())).from(self.owner).value(value)
    }

    /// The hostile contract sells work to the buyer, which is approved.
    async fn sell_completed_work(&self) -> std::result::Result<U256, HarnessError> {
        let (m, escrow) = (&self.m, self.m.chain.deployment.agent_pact);
        let (id, _) = m.create(m.terms(Initiator::Buyer, payment()).await?).await?;
        send(self.exec(escrow, AgentPact::acceptPactCall { pactId: id }, stake(payment()))).await?;
        send(self.exec(escrow, AgentPact::startWorkCall { pactId: id }, U256::ZERO)).await?;
        let submit = AgentPact::submitWorkCall { pactId: id, proofHash: hash(2) };
        send(self.exec(escrow, submit, U256::ZERO)).await?;
        m.verified(id, &[90, 90]).await?;
        send(m.chain.pact.approveWork(id).from(m.cast.buyer)).await?;
        assert_eq!(m.status(id).await?, PactStatus::Completed);
        Ok(id)
    }

    /// The hostile contract registers as an oracle, leaves, and waits out the cooldown: its stake
    /// is ready to withdraw. Returns the stake.
    async fn retired_oracle(&self) -> std::result::Result<U256, HarnessError> {
        let (chain, registry) = (&self.m.chain, self.m.chain.deployment.oracle_registry);
        let min = chain.options.min_oracle_stake;
        let register = OracleRegistry::registerCall { capabilities: vec!["testing".into()] };
        send(self.exec(registry, register, min)).await?;
        send(self.exec(registry, OracleRegistry::deregisterCall {}, U256::ZERO)).await?;
        chain.increase_time(chain.options.oracle_cooldown_secs).await?;
        Ok(min)
    }

    async fn configure<C: SolCall>(&self, mode: u8, reentry: C) -> std::result::Result<(), HarnessError> {
        send(self.hostile.configure(mode, Bytes::from(reentry.abi_encode())).from(self.owner)).await?;
        Ok(())
    }
}

#[tokio::test]
async fn re_entering_withdraw_is_stopped_and_pays_once() -> Result {
    let s = Scene::new().await?;
    let (m, escrow, hostile) = (&s.m, s.m.chain.deployment.agent_pact, *s.hostile.address());
    s.sell_completed_work().await?;
    let owed = payment() + stake(payment());
    assert_eq!(m.credit(hostile).await?, owed);

    s.configure(REENTER, AgentPact::withdrawCall { currency: Address::ZERO }).await?;
    send(s.exec(escrow, AgentPact::withdrawCall { currency: Address::ZERO }, U256::ZERO)).await?;

    assert_eq!(m.chain.balance(hostile).await?, owed, "paid exactly once");
    assert_eq!(m.credit(hostile).await?, U256::ZERO);
    assert_eq!(s.hostile.reentryAttempts().call().await?, U256::from(1u8));
    assert!(!s.hostile.lastReentrySucceeded().call().await?);
    let result = s.hostile.lastReentryResult().call().await?;
    assert_eq!(
        AgentPactErrors::abi_decode(&result).ok(),
        Some(AgentPactErrors::Reentrancy(AgentPact::Reentrancy {})),
        "the guard, not an empty balance, stopped the re-entry"
    );
    assert_eq!(m.chain.balance(escrow).await?, stake(payment()), "only the buyer's stake is left");
    assert_eq!(m.withdraw_all(m.cast.buyer).await?, stake(payment()));
    Ok(())
}

#[tokio::test]
async fn re_entering_during_a_pact_call_is_stopped() -> Result {
    let s = Scene::new().await?;
    let (m, escrow, hostile) = (&s.m, s.m.chain.deployment.agent_pact, *s.hostile.address());
    s.sell_completed_work().await?;
    // Another pact the hostile contract would like to end early while being paid.
    let other = m.funded(Initiator::Buyer, payment()).await?;
    s.configure(REENTER, AgentPact::claimTimeoutCall { pactId: other }).await?;
    send(s.exec(escrow, AgentPact::withdrawCall { currency: Address::ZERO }, U256::ZERO)).await?;
    let result = s.hostile.lastReentryResult().call().await?;
    assert_eq!(
        AgentPactErrors::abi_decode(&result).ok(),
        Some(AgentPactErrors::Reentrancy(AgentPact::Reentrancy {}))
    );
    assert_eq!(m.status(other).await?, PactStatus::Funded);
    assert_eq!(m.chain.balance(hostile).await?, payment() + stake(payment()));
    Ok(())
}

#[tokio::test]
async fn a_receiver_that_refuses_payment_locks_only_its_own_credit() -> Result {
    let s = Scene::new().await?;
    let (m, escrow, hostile) = (&s.m, s.m.chain.deployment.agent_pact, *s.hostile.address());
    s.sell_completed_work().await?;
    let owed = payment() + stake(payment());

    s.configure(REFUSE, AgentPact::withdrawCall { currency: Address::ZERO }).await?;
    let refused = revert_of::<AgentPactErrors, _, _>(s.exec(
        escrow,
        AgentPact::withdrawCall { currency: Address::ZERO },
        U256::ZERO,
    ))
    .await;
    assert_eq!(refused, AgentPactErrors::TransferFailed(AgentPact::TransferFailed {}));
    assert_eq!(m.credit(hostile).await?, owed, "a failed withdrawal keeps the credit");

    // The counterparty is paid regardless.
    assert_eq!(m.withdraw_all(m.cast.buyer).await?, stake(payment()));

    // And the refuser can still take its money once it accepts it.
    s.configure(ACCEPT, AgentPact::withdrawCall { currency: Address::ZERO }).await?;
    send(s.exec(escrow, AgentPact::withdrawCall { currency: Address::ZERO }, U256::ZERO)).await?;
    assert_eq!(m.chain.balance(hostile).await?, owed);
    assert_eq!(m.chain.balance(escrow).await?, U256::ZERO);
    Ok(())
}

#[tokio::test]
async fn re_entering_the_registry_stake_withdrawal_is_stopped() -> Result {
    let s = Scene::new().await?;
    let (chain, registry, hostile) = (&s.m.chain, s.m.chain.deployment.oracle_registry, *s.hostile.address());
    let min = s.retired_oracle().await?;

    s.configure(REENTER, OracleRegistry::withdrawStakeCall {}).await?;
    send(s.exec(registry, OracleRegistry::withdrawStakeCall {}, U256::ZERO)).await?;
    assert_eq!(chain.balance(hostile).await?, min, "stake paid exactly once");
    assert_eq!(chain.balance(registry).await?, min * U256::from(2u8), "the two market oracles' stakes stay");
    let result = s.hostile.lastReentryResult().call().await?;
    assert_eq!(
        OracleRegistryErrors::abi_decode(&result).ok(),
        Some(OracleRegistryErrors::Reentrancy(OracleRegistry::Reentrancy {}))
    );
    Ok(())
}

#[tokio::test]
async fn an_oracle_that_refuses_its_stake_keeps_it_in_the_registry() -> Result {
    let s = Scene::new().await?;
    let (chain, registry, hostile) = (&s.m.chain, s.m.chain.deployment.oracle_registry, *s.hostile.address());
    let min = s.retired_oracle().await?;

    s.configure(REFUSE, OracleRegistry::withdrawStakeCall {}).await?;
    let refused = revert_of::<OracleRegistryErrors, _, _>(s.exec(
        registry,
        OracleRegistry::withdrawStakeCall {},
        U256::ZERO,
    ))
    .await;
    assert_eq!(refused, OracleRegistryErrors::TransferFailed(OracleRegistry::TransferFailed {}));
    assert_eq!(
        chain.registry.getOracle(hostile).call().await?.stake,
        min,
        "a failed withdrawal keeps the stake"
    );
    Ok(())
}
