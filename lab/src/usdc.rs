//! The dev stack's and the tests' USDC: a [`TestToken`] with USDC's symbol and 6 decimals and
//! EIP-2612 permits, deployed before the escrow so the escrow can allow it, and minted to the dev
//! accounts. On Base Sepolia the real USDC is allowed instead ([`BASE_SEPOLIA_USDC`]).

use agentpact_contracts::TestToken;
use alloy::{
    primitives::{Address, U256, address},
    providers::Provider,
};
use anyhow::Context;

/// Circle's USDC on Base Sepolia (chain 84532), the token `agentpact deploy` allows there.
pub const BASE_SEPOLIA_USDC: Address = address!("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
/// USDC's decimals.
pub const DECIMALS: u8 = 6;
/// What each dev account is minted: 1,000,000 USDC.
pub const MINTED: U256 = U256::from_limbs([1_000_000_000_000, 0, 0, 0]);

/// Deploys a test USDC from the provider's default sender and mints [`MINTED`] to each of
/// `holders`; returns its address.
pub async fn deploy_test_usdc<P: Provider>(provider: P, holders: &[Address]) -> anyhow::Result<Address> {
    let token = TestToken::deploy(&provider, "USD Coin (test)".into(), "USDC".into(), DECIMALS)
        .await
        .context("deploying the test USDC")?;
    for holder in holders {
        token
            .mint(*holder, MINTED)
            .send()
            .await
            .context("minting test USDC")?
            .get_receipt()
            .await
            .context("minting test USDC")?;
    }
    Ok(*token.address())
}
