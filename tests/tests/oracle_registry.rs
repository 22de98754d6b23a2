//! OracleRegistry: join with a minimum stake and capabilities, raise the stake, change capabilities,
//! leave with a cooldown before the stake comes back.

use agentpact_contracts::OracleRegistry::{self, OracleRegistryErrors};
use agentpact_tests::{
    HarnessError,
    chain::{TestChain, revert_of, send},
};
use alloy::primitives::U256;

type Result = std::result::Result<(), HarnessError>;

macro_rules! assert_reverts {
    ($call:expr, $error:ident { $($field:ident : $value:expr),* $(,)? }) => {{
        let got = revert_of::<OracleRegistryErrors, _, _>($call).await;
        assert_eq!(got, OracleRegistryErrors::$error(OracleRegistry::$error { $($field: $value),* }));
    }};
}

fn caps(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn an_oracle_registers_raises_its_stake_and_updates_capabilities() -> Result {
    let chain = TestChain::start().await?;
    let (reg, oracle) = (&chain.registry, chain.accounts[4]);
    let min = chain.options.min_oracle_stake;
    assert_eq!(reg.minStake().call().await?, min);

    assert!(!reg.isActive(oracle).call().await?);
    send(reg.register(caps(&["code-review"])).from(oracle).value(min)).await?;
    assert!(reg.isActive(oracle).call().await?);

    send(reg.increaseStake().from(oracle).value(U256::from(5u8))).await?;
    send(reg.updateCapabilities(caps(&["testing", "audit"])).from(oracle)).await?;
    let o = reg.getOracle(oracle).call().await?;
    assert_eq!(o.stake, min + U256::from(5u8));
    assert_eq!(o.capabilities, caps(&["testing", "audit"]));
    assert!(o.registered && o.active);
    assert_eq!(chain.balance(chain.deployment.oracle_registry).await?, min + U256::from(5u8));
    Ok(())
}

#[tokio::test]
async fn leaving_returns_the_stake_only_after_the_cooldown() -> Result {
    let chain = TestChain::start().await?;
    let (reg, oracle) = (&chain.registry, chain.accounts[4]);
    let min = chain.options.min_oracle_stake;
    send(reg.register(caps(&["code-review"])).from(oracle).value(min)).await?;

    assert_reverts!(reg.withdrawStake().from(oracle), StillActive {});
    send(reg.deregister().from(oracle)).await?;
    assert!(!reg.isActive(oracle).call().await?);
    let unlock_at = chain.now().await? + chain.options.oracle_cooldown_secs;
    assert_reverts!(reg.withdrawStake().from(oracle), CooldownActive { unlockAt: unlock_at });
    assert_reverts!(reg.register(caps(&["x"])).from(oracle).value(min), AlreadyRegistered {});
    assert_reverts!(reg.increaseStake().from(oracle).value(U256::from(1u8)), NotActive {});

    chain.increase_time(chain.options.oracle_cooldown_secs).await?;
    let before = chain.balance(oracle).await?;
    let mined = send(reg.withdrawStake().from(oracle)).await?;
    assert_eq!(chain.balance(oracle).await?, before + min - mined.gas_cost);
    assert_eq!(reg.getOracle(oracle).call().await?.stake, U256::ZERO);
    assert_reverts!(reg.withdrawStake().from(oracle), NotRegistered {});

    // Gone for good: it may join again from scratch.
    send(reg.register(caps(&["again"])).from(oracle).value(min)).await?;
    assert!(reg.isActive(oracle).call().await?);
    Ok(())
}

#[tokio::test]
async fn registry_refusals() -> Result {
    let chain = TestChain::start().await?;
    let (reg, oracle, stranger) = (&chain.registry, chain.accounts[4], chain.accounts[6]);
    let min = chain.options.min_oracle_stake;
    let less = min - U256::from(1u8);
    assert_reverts!(
        reg.register(caps(&["x"])).from(oracle).value(less),
        StakeTooLow { sent: less, minimum: min }
    );
    assert_reverts!(reg.register(vec![]).from(oracle).value(min), NoCapabilities {});
    assert_reverts!(reg.increaseStake().from(stranger).value(U256::from(1u8)), NotRegistered {});
    assert_reverts!(reg.updateCapabilities(caps(&["x"])).from(stranger), NotRegistered {});
    assert_reverts!(reg.deregister().from(stranger), NotRegistered {});

    send(reg.register(caps(&["x"])).from(oracle).value(min)).await?;
    assert_reverts!(reg.register(caps(&["x"])).from(oracle).value(min), AlreadyRegistered {});
    assert_reverts!(reg.increaseStake().from(oracle), ZeroValue {});
    assert_reverts!(reg.updateCapabilities(vec![]).from(oracle), NoCapabilities {});
    assert_eq!(reg.getOracle(oracle).call().await?.capabilities, caps(&["x"]));
    Ok(())
}
