//! The HTTP plumbing the servers share — the GraphQL API (`agentpact serve`), the MCP server
//! (`agentpact mcp --http`) and the metrics of the indexer and push — so that none depends on
//! another to have it:
//!
//! - [`bearer`]: whether a request carries the token a server expects;
//! - [`connections`]: accepting with limits per address and in all, header and body timeouts;
//! - [`rate_limit`]: a token bucket per client address, 429 with `Retry-After` beyond it;
//! - [`metrics`]: `GET /metrics` for the processes that serve nothing else.

pub mod bearer;
pub mod connections;
pub mod metrics;
pub mod rate_limit;
