//! A chain recorded from a node and served back over JSON-RPC by a server of our own, as it was or
//! amplified many times over: histories bigger than anvil can hold (issue #36). The replay answers
//! what an indexer asks of a node (docs/indexer.md §Replay).
//!
//! - [`record`]: [`Recording`], every header and every log of a node's chain, read once.
//! - [`amplify`]: [`Amplified`], the recording repeated with pact ids, parties, blocks, times and
//!   hashes renumbered (copy 0 is the recording itself).
//! - [`branch`]: what is served at a moment: a revealed head, and a side branch that stages a reorg.
//! - [`serve`]: [`Replay`], the chain served at a loopback URL.

pub mod amplify;
mod branch;
pub mod record;
pub mod serve;

pub use amplify::Amplified;
pub use record::Recording;
pub use serve::{Replay, Serving};
