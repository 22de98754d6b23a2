//! The database's shared vocabulary, below every crate that reads or writes it (docs/architecture.md):
//!
//! - [`MIGRATOR`]: the schema, `migrations/` embedded at compile time. Every writer (the indexer,
//!   the negotiation relay) and every reader migrates through this one migrator.
//! - [`Cells`]: reading a stored value back into its domain type, or failing with a [`Corrupt`]
//!   that names the table, the row's key and the column, never with a default.
//! - [`i64_of`]: a chain id or block number to the BIGINT it is stored as.
//! - [`holds_nul`], [`refused_char`], [`ChainText`]: text Postgres cannot store, text a client may
//!   not send, and text as the chain emitted it beside the form it is shown in.

mod cells;
mod text;

pub use cells::{Cells, Corrupt, i64_of};
pub use text::{ChainText, RefusedChar, holds_nul, refused_char};

/// The migrations of `migrations/`, embedded.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");
