//! The read side of AgentPact (DESIGN.md §GraphQL API).
//!
//! The read layer (`agentpact-read`, named `read` here) answers; [`graphql`] shapes those answers as
//! the public schema; [`server`] serves it over HTTP with health, readiness and metrics, accepting
//! through `agentpact-http` (connection limits, rate limits) as the MCP server does.

pub mod dashboard;
pub mod graphql;
mod metrics;
pub mod server;
pub mod websocket;

// The sibling crates under the names the modules here use for them.
use agentpact_http::{connections, rate_limit};
use agentpact_read as read;
use agentpact_read::databases;
pub use server::{NegotiationConfig, OperatorConfig, ServeConfig, ServeError, app, serve};

/// What the subscriptions follow: the indexer's pact changes and the relay's messages, on one
/// LISTEN connection per process (`agentpact-read` names the indexer's channel, the relay its own).
mod live {
    pub use agentpact_read::live::PactChange;

    /// The process's listener on both channels.
    pub type Live = agentpact_read::live::Live<agentpact_negotiation::MessageNote>;
}
