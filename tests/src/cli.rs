//! The `agentpact` binary as a user runs it: where cargo built it, and a free port to give it.

use std::path::PathBuf;

use crate::HarnessError;

/// The `agentpact` binary cargo built next to this test (`cargo nextest run --workspace` builds it).
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().and_then(|deps| deps.parent()).map(PathBuf::from).unwrap_or_default();
    let binary = dir.join("agentpact");
    assert!(binary.is_file(), "{} is missing: build it with `cargo build -p agentpact`", binary.display());
    binary
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> Result<u16, HarnessError> {
    agentpact_lab::local::free_port().map_err(HarnessError::Process)
}
