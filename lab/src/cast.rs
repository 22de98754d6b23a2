//! Who plays which part on a dev chain: the one assignment of anvil's dev accounts that the demo
//! pacts of `agentpact dev` and the tests share (account 0 deploys).

use alloy::primitives::Address;
use anyhow::bail;

/// The parts of a pact, each a distinct funded dev account.
#[derive(Debug, Clone)]
pub struct Cast {
    /// Pays for the work (dev account 1).
    pub buyer: Address,
    /// Does the work (dev account 2).
    pub seller: Address,
    /// Judges disputes (dev account 3).
    pub arbitrator: Address,
    /// Score work once registered (dev accounts 4 and 5).
    pub oracles: Vec<Address>,
    /// Anyone else: a party to nothing (dev account 6).
    pub stranger: Address,
}

impl Cast {
    /// How many dev accounts a cast takes, the deployer's included.
    pub const ACCOUNTS: usize = 7;

    /// The parts, from the node's dev accounts.
    pub fn of(accounts: &[Address]) -> anyhow::Result<Self> {
        if accounts.len() < Self::ACCOUNTS {
            bail!("the node has {} accounts; a cast needs {}", accounts.len(), Self::ACCOUNTS);
        }
        Ok(Self {
            buyer: accounts[1],
            seller: accounts[2],
            arbitrator: accounts[3],
            oracles: vec![accounts[4], accounts[5]],
            stranger: accounts[6],
        })
    }
}
