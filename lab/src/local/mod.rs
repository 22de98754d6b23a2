//! Local services for development and tests (DESIGN.md §External parts): the pinned anvil and a
//! throw-away PostgreSQL cluster.

mod anvil;
mod postgres;

pub use anvil::{anvil_binary, spawn_anvil};
pub use postgres::{PrivateCluster, free_port, fresh_database, with_database};
