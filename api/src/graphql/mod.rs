//! The GraphQL schema (DESIGN.md §GraphQL API): read-only over the index (the operator's webhooks
//! are the one thing it writes), with limits on depth, complexity and page size, and a code on every
//! error.

mod account;
mod admission;
mod answer_cap;
mod closed_sets;
pub mod cost;
mod erc8004;
mod errors;
mod history;
mod map_responses;
mod market;
mod meta;
mod negotiation;
pub mod negotiation_access;
mod query;
pub mod scalars;
mod settlement;
mod subscription;
mod types;
mod wallet_ledger;
mod webhooks;

use agentpact_negotiation::Store;
use async_graphql::{Context, MergedObject, MergedSubscription, Schema};

pub use admission::{MAX_DEPTH, MAX_EXPANDED_FIELDS, MAX_INTROSPECTION_DEPTH};
pub use answer_cap::MAX_ANSWER_BYTES;
pub use errors::{Code, to_graphql};
pub use meta::BlockWait;
pub use webhooks::OperatorAccess;

use map_responses::MapResponses;

use crate::{live::Live, read::Reader};

/// The API's schema type.
pub type ApiSchema = Schema<QueryRoot, MutationRoot, SubscriptionRoot>;

/// The chain a query means when it names none.
#[derive(Debug, Clone, Copy)]
pub struct ChainId(pub u64);

/// The root of every query: pacts, the agent market, negotiations, charts, accounts and `_meta`.
#[derive(MergedObject, Default)]
pub struct QueryRoot(
    query::PactQuery,
    market::MarketQuery,
    erc8004::Erc8004Query,
    negotiation::NegotiationQuery,
    history::HistoryQuery,
    account::AccountQuery,
    meta::MetaQuery,
    webhooks::WebhookQuery,
    wallet_ledger::WalletLedgerQuery,
);

/// The root of every mutation: the operator's webhooks (the index itself is written only by the
/// indexer, from the chain).
#[derive(MergedObject, Default)]
pub struct MutationRoot(webhooks::WebhookMutation);

/// The root of every subscription: pact changes and negotiation messages.
#[derive(MergedSubscription, Default)]
pub struct SubscriptionRoot(subscription::PactSubscription, negotiation::NegotiationSubscription);

/// The chain asked for, or the server's.
fn chain_of(ctx: &Context<'_>, asked: Option<u64>) -> async_graphql::Result<u64> {
    Ok(asked.unwrap_or(ctx.data::<ChainId>()?.0))
}

/// The most expensive query accepted: each field costs 1, a list of pacts costs its page size
/// times its selection, and the fields that read far more than a row cost what [`cost`] says; a
/// full page of 100 pacts with every field, its `totalCount` and `stats` fits, ten pages do not,
/// nor ten `stats`.
pub const MAX_COMPLEXITY: usize = 5_000;

/// The schema over `reader` (and the relay's tables in the same database), announcing changes
/// from `live`, defaulting to `chain`; a query with `block: { number_gte }` waits up to
/// `block_wait` for the index.
pub fn schema(reader: Reader, live: Live, chain: ChainId, block_wait: BlockWait) -> ApiSchema {
    builder()
        .data(Store::new(reader.pool().clone()))
        .data(reader)
        .data(live)
        .data(chain)
        .data(block_wait)
        .data(meta::IndexedBlocks::default())
        .finish()
}

/// The schema in SDL, as checked in at `api/schema.graphql`.
pub fn sdl() -> String {
    builder().finish().sdl()
}

fn builder() -> async_graphql::SchemaBuilder<QueryRoot, MutationRoot, SubscriptionRoot> {
    Schema::build(QueryRoot::default(), MutationRoot::default(), SubscriptionRoot::default())
        .limit_complexity(MAX_COMPLEXITY)
        .extension(admission::Admission)
        .extension(MapResponses(answer_cap::capped))
        .extension(MapResponses(errors::label))
}

#[cfg(test)]
mod tests {
    /// The checked-in SDL matches the code; `UPDATE_SCHEMA=1 cargo test -p agentpact-api` rewrites it.
    #[test]
    fn checked_in_sdl_matches_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema.graphql");
        let sdl = super::sdl();
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(path, &sdl).expect("write api/schema.graphql");
        }
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == sdl,
            "api/schema.graphql is out of date: run `UPDATE_SCHEMA=1 cargo test -p agentpact-api` and commit it"
        );
    }
}
