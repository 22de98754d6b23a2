//! Follows AgentPact, OracleRegistry and AgentRegistry events into Postgres (DESIGN.md §Index).
//!
//! The data's way, one module a step: [`fetch`] logs over adaptive block ranges, [`decode`] them
//! into [`event::EventBody`] values, append them to the [`journal`], [`project`] them into the
//! tables the API reads, and move the [`checkpoint`] — all of a range in one transaction
//! ([`sync`]). [`reorg`] notices and rolls back reorganisations; [`lock`] keeps one writer per
//! chain; [`run`] follows the head, retrying failed passes; [`transport`] retries single RPC calls
//! under the provider; [`notify`] announces committed changes; [`metrics`] counts; [`reputation`]
//! keeps per-address aggregates and per-pair evidence, and after each pass that changed them ranks
//! the raters from the configured seeds ([`Ranking`]) into a generation of trusted scores;
//! [`defer`] puts off secondary indexes and flat counts while a backfill is far behind.

pub mod checkpoint;
pub mod config;
pub mod decode;
pub mod defer;
pub mod event;
pub mod fetch;
pub mod journal;
pub mod lock;
pub mod metrics;
pub mod notify;
pub mod project;
pub mod reorg;
pub mod reputation;
pub mod run;
pub mod sync;
pub mod transport;

pub use agentpact_contracts::{Contracts, channels::PACT_CHANNEL};
pub use config::{Config, Ranking};
pub use metrics::Metrics;
pub use run::run;
pub use sync::{ChainMismatch, IndexError, Indexer, Pass, Target};
