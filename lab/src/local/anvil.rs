//! The pinned anvil: where it is, and starting it.

use std::path::PathBuf;

use alloy::node_bindings::{Anvil, AnvilInstance};
use anyhow::{Context, bail};

/// The anvil binary: `$ANVIL_BIN` when set, else the one `scripts/install-tools` put under
/// `node_modules` (the `@foundry-rs/anvil` npm package pinned in `package-lock.json`).
pub fn anvil_binary() -> PathBuf {
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

/// Starts the pinned anvil as `configure` sets it up (port, chain id, flags); killed on drop.
pub fn spawn_anvil(configure: impl FnOnce(Anvil) -> Anvil) -> anyhow::Result<AnvilInstance> {
    let bin = anvil_binary();
    if !bin.is_file() {
        bail!("anvil not found at {}: run scripts/install-tools (or set ANVIL_BIN)", bin.display());
    }
    configure(Anvil::at(bin)).try_spawn().context("starting anvil")
}
