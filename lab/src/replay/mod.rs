//! A chain recorded from a node and served back over JSON-RPC by a server of our own: the ground
//! for histories bigger than anvil can hold (issue #36). The replay answers what an indexer asks
//! of a node (docs/indexer.md §Replay) from the recording, exactly as the node answered.
//!
//! - [`record`]: [`Recording`], every header and every log of a node's chain, read once.
//! - [`serve`]: [`Replay`], the recording served at a loopback URL.

pub mod record;
pub mod serve;

pub use record::Recording;
pub use serve::Replay;
