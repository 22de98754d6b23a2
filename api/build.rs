//! Rebuilds the crate when a file under `dashboard/` changes. `include_str!` alone records the
//! files by absolute path, so when two checkouts share one target dir (a fresh-clone CI check
//! beside the working copy) the last one to build decides which files are watched, and the other
//! keeps serving a stale page; this path is relative to the package, so each checkout watches
//! its own.
fn main() {
    println!("cargo:rerun-if-changed=../dashboard");
}
