//! Follows AgentPact and OracleRegistry events into Postgres (DESIGN.md §Index).
//!
//! The data's way, one module a step: [`fetch`] logs over adaptive block ranges, [`decode`] them
//! into [`event::EventBody`] values, append them to the [`journal`], [`project`] them into the
//! tables the API reads, and move the [`checkpoint`] — all of a range in one transaction
//! ([`backfill`]).

pub mod backfill;
pub mod checkpoint;
pub mod decode;
pub mod event;
pub mod fetch;
pub mod journal;
pub mod project;

pub use backfill::{Backfill, IndexError, Target};
pub use decode::Contracts;
