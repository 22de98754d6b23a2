//! Where the pinned anvil is.

use std::path::PathBuf;

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
