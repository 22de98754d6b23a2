//! The read side of AgentPact (DESIGN.md §GraphQL API).
//!
//! [`read`] is the read layer: typed queries over the index returning domain types, shared by the
//! GraphQL schema ([`graphql`]) and the MCP server. [`server`] serves the schema over HTTP with
//! health, readiness and metrics; [`live`] turns the indexer's notifications into subscription
//! events.

pub mod connections;
pub mod dashboard;
pub mod databases;
pub mod graphql;
pub mod live;
mod metrics;
pub mod rate_limit;
pub mod read;
pub mod server;
pub mod websocket;

pub use databases::Databases;
pub use read::Reader;
pub use server::{NegotiationConfig, ServeConfig, ServeError, app, serve};
