//! Finds the pinned anvil binary and starts it.

use std::path::PathBuf;

use alloy::node_bindings::{Anvil, AnvilInstance};

use crate::HarnessError;

/// Funded dev accounts each anvil starts with (the randomized tests use many actors).
pub const ACCOUNTS: usize = 20;

/// The anvil binary (see [`agentpact_lab::local::anvil_binary`]).
pub fn binary() -> PathBuf {
    agentpact_lab::local::anvil_binary()
}

/// Starts anvil on a free port with `chain_id`; it stops when the instance is dropped.
pub fn spawn(chain_id: u64) -> Result<AnvilInstance, HarnessError> {
    spawn_at(chain_id, None)
}

/// Starts anvil with `chain_id` and, when given, a genesis block at `genesis` (Unix seconds): its
/// clock runs on from there.
pub fn spawn_at(chain_id: u64, genesis: Option<u64>) -> Result<AnvilInstance, HarnessError> {
    let bin = binary();
    if !bin.is_file() {
        return Err(HarnessError::AnvilMissing(bin));
    }
    let mut anvil = Anvil::at(bin).chain_id(chain_id).args(["--accounts", &ACCOUNTS.to_string()]);
    if let Some(t) = genesis {
        anvil = anvil.args(["--timestamp", &t.to_string()]);
    }
    Ok(anvil.try_spawn()?)
}
