//! The harness itself: each test gets its own database and its own chain.

use agentpact_contracts::DeployOptions;
use agentpact_tests::{
    HarnessError,
    chain::{BASE_SEPOLIA_CHAIN_ID, TestChain},
    postgres::TestDatabase,
};
use alloy::providers::Provider;
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn each_test_gets_a_fresh_migrated_database_that_is_dropped_afterwards() -> Result<(), HarnessError> {
    let a = TestDatabase::create().await?;
    let b = TestDatabase::create().await?;
    assert_ne!(a.name(), b.name());

    let migrated: bool =
        sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL").fetch_one(a.pool()).await?;
    assert!(migrated, "migrations were not applied");
    let journal: bool =
        sqlx::query_scalar("SELECT to_regclass('events') IS NOT NULL").fetch_one(a.pool()).await?;
    assert!(journal, "the schema of migrations/ is missing");

    sqlx::query("CREATE TABLE only_in_a (x int)").execute(a.pool()).await?;
    let in_b: bool =
        sqlx::query_scalar("SELECT to_regclass('only_in_a') IS NOT NULL").fetch_one(b.pool()).await?;
    assert!(!in_b, "databases of two tests share tables");

    let url = a.url().to_owned();
    PgConnection::connect(&url).await?.close().await?;
    drop(a);
    assert!(PgConnection::connect(&url).await.is_err(), "database {url} outlived its test");
    Ok(())
}

#[tokio::test]
async fn anvil_runs_as_base_sepolia_with_both_contracts_deployed() -> Result<(), HarnessError> {
    let chain = TestChain::start_with(BASE_SEPOLIA_CHAIN_ID, DeployOptions::default()).await?;
    assert_eq!(chain.provider.get_chain_id().await?, BASE_SEPOLIA_CHAIN_ID);
    for address in [chain.deployment.agent_pact, chain.deployment.oracle_registry] {
        assert!(!chain.provider.get_code_at(address).await?.is_empty(), "no code at {address}");
    }
    assert_eq!(chain.pact.registry().call().await?, chain.deployment.oracle_registry);
    assert!(
        chain.deployment.block >= 1 && chain.deployment.block <= chain.provider.get_block_number().await?
    );
    Ok(())
}

#[tokio::test]
async fn two_chains_are_independent() -> Result<(), HarnessError> {
    let (one, two) = tokio::try_join!(TestChain::start(), TestChain::start())?;
    assert_ne!(one.anvil.port(), two.anvil.port());
    let two_before = two.provider.get_block_number().await?;
    one.increase_time(1000).await?;
    assert_eq!(two.provider.get_block_number().await?, two_before);
    Ok(())
}
