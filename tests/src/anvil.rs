//! Finds the pinned anvil binary and starts it.

use std::path::PathBuf;

use alloy::node_bindings::{Anvil, AnvilInstance};

use crate::HarnessError;

/// Funded dev accounts each anvil starts with (the randomized tests use many actors).
pub const ACCOUNTS: usize = 20;

/// The anvil binary: `$ANVIL_BIN` when set, else the one `scripts/install-tools` put under
/// `node_modules` (the `@foundry-rs/anvil` npm package pinned in `package-lock.json`).
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("ANVIL_BIN") {
        return PathBuf::from(path);
    }
    let platform = match (std::env::consts::OS, std::env::consts::ARCH) {
        (os, "x86_64") => format!("{os}-amd64"),
        (os, "aarch64") => format!("{os}-arm64"),
        (os, arch) => format!("{os}-{arch}"),
    };
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    workspace.join(format!("node_modules/@foundry-rs/anvil-{platform}/bin/anvil"))
}

/// Starts anvil on a free port with `chain_id`; it stops when the instance is dropped.
pub fn spawn(chain_id: u64) -> Result<AnvilInstance, HarnessError> {
    let bin = binary();
    if !bin.is_file() {
        return Err(HarnessError::AnvilMissing(bin));
    }
    Ok(Anvil::at(bin).chain_id(chain_id).args(["--accounts", &ACCOUNTS.to_string()]).try_spawn()?)
}
