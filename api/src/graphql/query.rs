//! The root query: pacts, verifications, oracles, reputation, stats and the indexer's status.

use async_graphql::{Context, InputObject, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    closed_sets::{Initiator, OracleStatus, PactOrderField, PactStatus, SortDirection},
    errors::to_graphql,
    meta::{BlockHeight, indexed},
    scalars::{Address, BigInt},
    types::{Currency, IndexerStatus, Oracle, Pact, Reputation, Stats, Verification},
};
use crate::read::{self, Count, PactFilter as ReadFilter, Reader};

/// Which pacts to list; every field narrows the list.
#[derive(InputObject, Default)]
pub struct PactFilter {
    /// Any of these statuses.
    status: Option<Vec<PactStatus>>,
    /// This buyer.
    buyer: Option<Address>,
    /// This seller.
    seller: Option<Address>,
    /// This account in any role: creator, buyer, seller, arbitrator or oracle.
    party: Option<Address>,
    /// Naming this oracle.
    oracle: Option<Address>,
    /// Created by this side.
    initiator: Option<Initiator>,
    /// Paid in this currency (the token's address; 0x000…000 for ETH).
    currency: Option<Address>,
    /// Payment at least this, in base units of the pact's currency (combine with `currency`).
    min_payment: Option<BigInt>,
    /// Payment at most this, in base units of the pact's currency (combine with `currency`).
    max_payment: Option<BigInt>,
    /// Deadline at or after.
    deadline_from: Option<DateTime<Utc>>,
    /// Deadline at or before.
    deadline_to: Option<DateTime<Utc>>,
    /// Created at or after.
    created_from: Option<DateTime<Utc>>,
    /// Created at or before.
    created_to: Option<DateTime<Utc>>,
    /// Words that must all appear in the spec URI (case-insensitive; punctuation separates words).
    search: Option<String>,
}

impl From<PactFilter> for ReadFilter {
    fn from(f: PactFilter) -> Self {
        Self {
            statuses: f.status.unwrap_or_default().into_iter().map(|s| s.0).collect(),
            buyer: f.buyer.map(|a| a.0),
            seller: f.seller.map(|a| a.0),
            party: f.party.map(|a| a.0),
            oracle: f.oracle.map(|a| a.0),
            initiator: f.initiator.map(|i| i.0),
            currency: f.currency.map(|a| a.0),
            min_payment: f.min_payment.map(|n| n.0),
            max_payment: f.max_payment.map(|n| n.0),
            deadline_from: f.deadline_from,
            deadline_to: f.deadline_to,
            created_from: f.created_from,
            created_to: f.created_to,
            search: f.search,
        }
    }
}

/// How pacts are sorted (default: newest first).
#[derive(InputObject, Clone, Copy, Default)]
pub struct PactOrder {
    /// The field.
    #[graphql(default)]
    field: PactOrderField,
    /// The direction.
    #[graphql(default)]
    direction: SortDirection,
}

/// Which oracles to list.
#[derive(InputObject, Default)]
pub struct OracleFilter {
    /// Offering this capability (exact name).
    capability: Option<String>,
    /// Staking at least this (wei).
    min_stake: Option<BigInt>,
    /// In this status.
    status: Option<OracleStatus>,
}

/// A page of pacts (Relay connection).
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct PactConnection {
    /// The pacts of the page with their cursors.
    edges: Vec<PactEdge>,
    /// Where the page sits in the whole list.
    page_info: PageInfo,
    #[graphql(skip)]
    chain_id: u64,
    #[graphql(skip)]
    filter: ReadFilter,
    /// The count, read once for `totalCount` and `totalCountExact` together.
    #[graphql(skip)]
    count: tokio::sync::OnceCell<Count>,
}

#[async_graphql::ComplexObject]
impl PactConnection {
    /// The pacts of the page.
    async fn nodes(&self) -> Vec<&Pact> {
        self.edges.iter().map(|e| &e.node).collect()
    }

    // Both counts are weighed by the admission check, once per selection (cost::TOTAL_COUNT): a
    // list's complexity would multiply them by the page size.
    /// How many pacts pass the filter, on all pages. Exact for no filter, or statuses with at most
    /// one of buyer, seller, party, oracle and currency (counts the indexer keeps); for other
    /// filters exact up to 10000, and 10000 with `totalCountExact` false past it.
    async fn total_count(&self, ctx: &Context<'_>) -> Result<u64> {
        Ok(self.count(ctx).await?.value)
    }

    /// Whether `totalCount` is the whole count (false: at least that many).
    async fn total_count_exact(&self, ctx: &Context<'_>) -> Result<bool> {
        Ok(self.count(ctx).await?.exact)
    }
}

impl PactConnection {
    async fn count(&self, ctx: &Context<'_>) -> Result<Count> {
        let reader = ctx.data::<Reader>()?;
        let count = self.count.get_or_try_init(|| reader.count_pacts(self.chain_id, &self.filter));
        count.await.copied().map_err(to_graphql)
    }
}

/// One pact of a page and its cursor.
#[derive(SimpleObject)]
pub struct PactEdge {
    /// Pass to `after` or `before` to page from this pact.
    cursor: String,
    /// The pact.
    node: Pact,
}

/// Relay page information.
#[derive(SimpleObject)]
pub struct PageInfo {
    /// More items follow this page.
    pub(super) has_next_page: bool,
    /// More items precede this page.
    pub(super) has_previous_page: bool,
    /// The cursor of the first item of the page.
    pub(super) start_cursor: Option<String>,
    /// The cursor of the last item of the page.
    pub(super) end_cursor: Option<String>,
}

/// Queries over pacts, oracles, reputation and the indexer.
#[derive(Default)]
pub struct PactQuery;

/// Queries over pacts, oracles, reputation and the indexer.
#[Object]
impl PactQuery {
    /// One pact, or null when the index has no such pact (yet).
    async fn pact(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        id: BigInt,
    ) -> Result<Option<Pact>> {
        let chain = indexed(ctx, chain_id, block).await?;
        Ok(ctx.data::<Reader>()?.pact(chain, id.0).await.map_err(to_graphql)?.map(Pact))
    }

    /// Pacts passing `filter`, sorted by `orderBy`, a page at a time: `first` (at most 100) after
    /// the cursor `after`, or `last` before `before`.
    #[graphql(
        complexity = "first.or(last).unwrap_or(read::DEFAULT_PAGE_SIZE).min(read::MAX_PAGE_SIZE) as usize \
                      * child_complexity + 1 \
                      + if filter.as_ref().is_some_and(|f| f.search.is_some()) { super::cost::SEARCH } else { 0 }"
    )]
    #[allow(clippy::too_many_arguments)] // the Relay arguments plus filter and order
    async fn pacts(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        filter: Option<PactFilter>,
        order_by: Option<PactOrder>,
        first: Option<u32>,
        after: Option<String>,
        last: Option<u32>,
        before: Option<String>,
    ) -> Result<PactConnection> {
        let chain = indexed(ctx, chain_id, block).await?;
        let filter: ReadFilter = filter.unwrap_or_default().into();
        let order = order_by.unwrap_or_default();
        let order = read::PactOrder { field: order.field.0, direction: order.direction.0 };
        let request = read::PageRequest { first, after, last, before };
        let page = ctx.data::<Reader>()?.pacts(chain, &filter, order, &request).await.map_err(to_graphql)?;
        let edges: Vec<PactEdge> =
            page.items.into_iter().map(|(cursor, pact)| PactEdge { cursor, node: Pact(pact) }).collect();
        let page_info = PageInfo {
            has_next_page: page.has_next_page,
            has_previous_page: page.has_previous_page,
            start_cursor: edges.first().map(|e| e.cursor.clone()),
            end_cursor: edges.last().map(|e| e.cursor.clone()),
        };
        Ok(PactConnection { edges, page_info, chain_id: chain, filter, count: tokio::sync::OnceCell::new() })
    }

    /// Scores given on a pact (in submission order) or by an oracle (newest first); name at
    /// least one of `pactId` and `oracle`.
    async fn verifications(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        pact_id: Option<BigInt>,
        oracle: Option<Address>,
        #[graphql(default = 100)] first: u32,
    ) -> Result<Vec<Verification>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let list = ctx
            .data::<Reader>()?
            .verifications(chain, pact_id.map(|p| p.0), oracle.map(|a| a.0), first)
            .await
            .map_err(to_graphql)?;
        Ok(list.into_iter().map(Verification).collect())
    }

    /// One oracle, or null when it is not registered.
    async fn oracle(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        address: Address,
    ) -> Result<Option<Oracle>> {
        let chain = indexed(ctx, chain_id, block).await?;
        Ok(ctx.data::<Reader>()?.oracle(chain, address.0).await.map_err(to_graphql)?.map(Oracle))
    }

    /// Oracles passing `filter`, largest stake first, at most `first` (≤ 100).
    async fn oracles(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        filter: Option<OracleFilter>,
        #[graphql(default = 100)] first: u32,
    ) -> Result<Vec<Oracle>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let f = filter.unwrap_or_default();
        let filter = read::OracleFilter {
            capability: f.capability,
            min_stake: f.min_stake.map(|s| s.0),
            status: f.status.map(|s| s.0),
        };
        let list = ctx.data::<Reader>()?.oracles(chain, &filter, first).await.map_err(to_graphql)?;
        Ok(list.into_iter().map(Oracle).collect())
    }

    /// An address's reputation as seller, buyer and oracle (zeros and a 3.0 score without history).
    /// With `viewer`, its score over all roles as that address sees it: the viewer's own
    /// counterparties trusted as far as it endorsed them (a viewer with no history sees the global
    /// score).
    #[graphql(complexity = "super::cost::REPUTATION + child_complexity")]
    async fn reputation(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        address: Address,
        viewer: Option<Address>,
    ) -> Result<Reputation> {
        let chain = indexed(ctx, chain_id, block).await?;
        let reader = ctx.data::<Reader>()?;
        let rep = reader.reputation_seen_by(chain, address.0, viewer.map(|v| v.0)).await;
        Ok(Reputation(rep.map_err(to_graphql)?, chain))
    }

    /// The currencies the escrow takes: ETH, then the tokens of its allowlist, as it announced them.
    async fn currencies(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
    ) -> Result<Vec<Currency>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let known = ctx.data::<Reader>()?.currencies(chain).await.map_err(to_graphql)?;
        Ok(known.into_iter().map(Currency).collect())
    }

    /// Pacts by status, volumes and active oracles.
    #[graphql(complexity = "super::cost::STATS + child_complexity")]
    async fn stats(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
    ) -> Result<Stats> {
        let chain = indexed(ctx, chain_id, block).await?;
        Ok(Stats(ctx.data::<Reader>()?.stats(chain).await.map_err(to_graphql)?))
    }

    /// Where the indexer stands: null before its first batch.
    async fn indexer_status(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
    ) -> Result<Option<IndexerStatus>> {
        let chain = indexed(ctx, chain_id, block).await?;
        Ok(ctx.data::<Reader>()?.indexer_status(chain).await.map_err(to_graphql)?.map(Into::into))
    }
}
