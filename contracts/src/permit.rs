//! EIP-2612 permits: what a token holder signs so the escrow may take a deposit in the same
//! transaction that creates or accepts a pact (`createPactWithPermit`, `acceptPactWithPermit`).

use alloy::{
    primitives::{Address, B256, U256},
    signers::{SignerSync, local::PrivateKeySigner},
    sol_types::{Eip712Domain, SolStruct},
};

use crate::bindings::Currencies;

alloy::sol! {
    /// The EIP-2612 message: `owner` allows `spender` to take `value`, once (`nonce`), until
    /// `deadline`.
    #[derive(Debug)]
    struct Permit {
        address owner;
        address spender;
        uint256 value;
        uint256 nonce;
        uint256 deadline;
    }
}

/// The EIP-712 domain a token signs permits in, as its `eip712Domain()` (EIP-5267) or its `name()`
/// and `version()` say.
pub fn domain(name: String, version: String, chain_id: u64, token: Address) -> Eip712Domain {
    Eip712Domain::new(Some(name.into()), Some(version.into()), Some(U256::from(chain_id)), Some(token), None)
}

/// Signs a permit for `escrow` to take exactly `value` of the token of `domain` from `signer`.
pub fn sign(
    signer: &PrivateKeySigner,
    domain: &Eip712Domain,
    escrow: Address,
    value: U256,
    nonce: U256,
    deadline: u64,
) -> Result<Currencies::Permit, alloy::signers::Error> {
    let message =
        Permit { owner: signer.address(), spender: escrow, value, nonce, deadline: U256::from(deadline) };
    let hash: B256 = message.eip712_signing_hash(domain);
    let signature = signer.sign_hash_sync(&hash)?;
    Ok(Currencies::Permit {
        deadline: U256::from(deadline),
        v: 27 + u8::from(signature.v()),
        r: signature.r().into(),
        s: signature.s().into(),
    })
}
