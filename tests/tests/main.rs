//! The end-to-end tests, one module per file beside this one, in one test binary: each file was
//! its own binary linking the whole stack (~450 crates) before, and on two cores the links and the
//! monomorphized copies cost more than the tests (docs/testing.md §One binary). nextest still runs
//! every test in its own process, so no state is shared between them.

mod agent_registry;
mod api_currencies;
mod api_fuzz;
mod api_graphql;
mod api_hostile;
mod api_http;
mod api_meta;
mod api_pagination;
mod api_replicas;
mod cli_bench;
mod cli_deploy;
mod cli_dev;
mod cli_index;
mod cli_serve;
mod compose;
mod dashboard;
mod docs_facts;
mod erc8004_registries;
mod harness;
mod hostile_receivers;
mod index_catalog;
mod indexer_endpoints;
mod indexer_faults;
mod indexer_projection;
mod indexer_reorgs;
mod indexer_replay;
mod indexer_resilience;
mod indexer_text;
mod market;
mod mcp_clients;
mod mcp_erc8004;
mod mcp_flows;
mod mcp_guards;
mod mcp_input;
mod mcp_round_trip;
mod mcp_stateless;
mod mcp_stdio;
mod negotiation;
mod oracle_registry;
mod pact_attacks;
mod pact_currencies;
mod pact_errors;
mod pact_invariants;
mod pact_lifecycle;
mod pact_settlements;
mod pact_timeouts;
mod push_policy;
mod push_webhooks;
mod readme_sepolia;
mod reputation_world;
mod rpc_tls;
mod secrets;
mod soak;
