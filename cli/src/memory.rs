//! glibc's malloc tuned for the binary's long runs, with no setting asked of the user.
//!
//! glibc raises its mmap threshold after each large free, so the indexer's large short-lived
//! buffers (a log range's answer, a statement's parameters) then come from heap arenas that
//! fragment, and a long backfill's resident memory grows with the history (BENCHMARKS.md: 184 MiB
//! instead of 112 MiB at 100k pacts). A fixed threshold stops that. glibc reads it from
//! `MALLOC_MMAP_THRESHOLD_` once, when the process starts, and setting it from inside needs
//! `mallopt`, which is `unsafe` (forbidden in this workspace); so the binary, started without the
//! variable, replaces itself (`exec`, same process id, same arguments and descriptors) with a copy
//! of itself started with it. A value the user set is kept as it is.

/// The threshold: allocations of 128 KiB and more are mapped and given back when freed.
const MMAP_THRESHOLD: &str = "131072";

/// glibc's variable for [`MMAP_THRESHOLD`].
const VARIABLE: &str = "MALLOC_MMAP_THRESHOLD_";

/// Re-executes this binary with [`MMAP_THRESHOLD`] when the environment does not set
/// `MALLOC_MMAP_THRESHOLD_`. Returns only when nothing needed doing or the `exec` failed (then the
/// binary runs as it is, with glibc's default, and says so on stderr). Call it first in `main`,
/// before any thread starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn fix_mmap_threshold() {
    use std::os::unix::process::CommandExt as _;

    if std::env::var_os(VARIABLE).is_some() {
        return;
    }
    let Ok(me) = std::env::current_exe() else {
        return;
    };
    let error =
        std::process::Command::new(me).args(std::env::args_os().skip(1)).env(VARIABLE, MMAP_THRESHOLD).exec();
    eprintln!(
        "agentpact: running with glibc's default mmap threshold ({error} re-executing with {VARIABLE}={MMAP_THRESHOLD}); set it in the environment to keep long runs' memory flat"
    );
}

/// Elsewhere (another libc or OS) there is nothing to tune.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn fix_mmap_threshold() {}
