//! The lab: what the `agentpact` binary (`dev`, `bench`) and the test harness share to run the
//! system locally and measure it.
//!
//! - [`local`]: the pinned anvil and a throw-away PostgreSQL cluster (DESIGN.md §External parts).
//! - [`Cast`]: which dev account plays which part.
//! - [`bench`]: the history generator and the benchmarks behind BENCHMARKS.md.
//! - [`wait_until_indexed`]: wait for the index before reading what was just written.
//! - [`replay`]: a chain recorded from a node and served back over JSON-RPC by our own server.
//! - [`usdc`]: the test USDC the dev stack and the tests allow beside ETH.

pub mod bench;
mod cast;
mod indexed;
pub mod local;
pub mod replay;
pub mod usdc;

pub use cast::Cast;
pub use indexed::wait_until_indexed;
