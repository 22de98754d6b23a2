//! Paging through hundreds of pacts, forward and backward, in every ordering: no gap, no repeat,
//! and the order the chain's values say.

use agentpact_contracts::Initiator;
use agentpact_indexer::{Config, Indexer};
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{primitives::U256, providers::DynProvider};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

const PACTS: u64 = 240;
const PAGE: u64 = 37;

/// (id, payment, deadline) of each pact made.
type Made = Vec<(U256, U256, u64)>;

/// Creates `n` seller-initiated pacts whose payments and deadlines repeat, so ties need the id.
async fn create(m: &Market, n: u64, made: &mut Made) -> Result {
    for _ in 0..n {
        let i = made.len() as u64;
        let mut terms = m.terms(Initiator::Seller, U256::from((i % 7 + 1) * 1000)).await?;
        terms.deadline = m.chain.now().await? + 30 * 24 * 3600 + (i % 5) * 3600;
        let deadline = terms.deadline;
        let payment = terms.payment;
        let (id, _) = m.create(terms).await?;
        made.push((id, payment, deadline));
    }
    Ok(())
}

struct Walk<'a> {
    api: &'a TestApi,
    order: Value,
}

impl Walk<'_> {
    /// One page: (ids, cursors of first and last, hasNextPage, hasPreviousPage).
    async fn page(&self, args: Value) -> Result<(Vec<U256>, Value, Value, bool, bool)> {
        let q = "query($o: PactOrder, $first: Int, $after: String, $last: Int, $before: String) {
            pacts(orderBy: $o, first: $first, after: $after, last: $last, before: $before) {
              totalCount edges { cursor node { id } }
              pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }";
        let mut vars = args;
        vars["o"] = self.order.clone();
        let d = self.api.data(q, vars).await?;
        let c = &d["pacts"];
        let ids = c["edges"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| e["node"]["id"].as_str().and_then(|s| s.parse().ok()).unwrap_or(U256::MAX))
            .collect();
        let info = &c["pageInfo"];
        Ok((
            ids,
            info["startCursor"].clone(),
            info["endCursor"].clone(),
            info["hasNextPage"] == true,
            info["hasPreviousPage"] == true,
        ))
    }

    async fn forward(&self, mut between_pages: impl AsyncFnMut() -> Result) -> Result<Vec<U256>> {
        let (mut all, mut after) = (Vec::new(), Value::Null);
        loop {
            let (ids, _, end, next, previous) = self.page(json!({ "first": PAGE, "after": after })).await?;
            assert_eq!(previous, !after.is_null(), "hasPreviousPage going forward");
            all.extend(ids);
            if !next {
                return Ok(all);
            }
            after = end;
            between_pages().await?;
        }
    }

    async fn backward(&self) -> Result<Vec<U256>> {
        let (mut all, mut before) = (Vec::new(), Value::Null);
        loop {
            let (mut ids, start, _, next, previous) =
                self.page(json!({ "last": PAGE, "before": before })).await?;
            assert_eq!(next, !before.is_null(), "hasNextPage going backward");
            ids.extend(all);
            all = ids;
            if !previous {
                return Ok(all);
            }
            before = start;
        }
    }
}

fn sorted(made: &Made, key: impl Fn(&(U256, U256, u64)) -> U256, descending: bool) -> Vec<U256> {
    let mut rows: Vec<(U256, U256)> = made.iter().map(|r| (key(r), r.0)).collect();
    rows.sort();
    if descending {
        rows.reverse();
    }
    rows.into_iter().map(|(_, id)| id).collect()
}

#[tokio::test]
async fn hundreds_of_pacts_page_forward_and_backward_in_every_order() -> Result {
    let m = Market::open().await?;
    let mut made = Made::new();
    create(&m, PACTS, &mut made).await?;
    let db = TestDatabase::create().await?;
    let mut indexer: Indexer<DynProvider> =
        agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default());
    indexer.catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;

    let cases = [
        (json!({ "field": "CREATED", "direction": "DESC" }), sorted(&made, |r| r.0, true)),
        (json!({ "field": "PAYMENT", "direction": "ASC" }), sorted(&made, |r| r.1, false)),
        (json!({ "field": "PAYMENT", "direction": "DESC" }), sorted(&made, |r| r.1, true)),
        (json!({ "field": "DEADLINE", "direction": "DESC" }), sorted(&made, |r| U256::from(r.2), true)),
        // Each pact was created in its own block and not changed since: block order is id order.
        (json!({ "field": "UPDATED", "direction": "ASC" }), sorted(&made, |r| r.0, false)),
    ];
    for (order, want) in cases {
        let walk = Walk { api: &api, order: order.clone() };
        assert_eq!(walk.forward(async || Ok(())).await?, want, "forward by {order}");
        assert_eq!(walk.backward().await?, want, "backward by {order}");
    }

    // Pacts created while a client pages oldest-first show up at the end, none repeated or lost.
    let walk = Walk { api: &api, order: json!({ "field": "CREATED", "direction": "ASC" }) };
    let mut added = false;
    let seen = walk
        .forward(async || {
            if !added {
                added = true;
                create(&m, 3, &mut made).await?;
                indexer.catch_up().await?;
            }
            Ok(())
        })
        .await?;
    assert_eq!(seen, sorted(&made, |r| r.0, false));
    assert_eq!(seen.len() as u64, PACTS + 3);
    Ok(())
}

#[tokio::test]
async fn bad_page_requests_get_a_coded_error() -> Result {
    let m = Market::open().await?;
    create(&m, 3, &mut Made::new()).await?;
    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    let q = "query($first: Int, $last: Int, $after: String, $o: PactOrder) {
        pacts(first: $first, last: $last, after: $after, orderBy: $o) { edges { cursor } } }";
    let payment_cursor = {
        let d = api.data(q, json!({ "first": 1, "o": { "field": "PAYMENT" } })).await?;
        d["pacts"]["edges"][0]["cursor"].clone()
    };
    for (vars, code) in [
        (json!({ "first": 101 }), "PAGE_TOO_LARGE"),
        (json!({ "first": 2, "last": 2 }), "BAD_ARGUMENT"),
        (json!({ "first": 2, "after": "not-a-cursor" }), "BAD_CURSOR"),
        (json!({ "first": 2, "after": "YXJyYXljb25uZWN0aW9uOjE=" }), "BAD_CURSOR"),
        (json!({ "first": 2, "after": payment_cursor }), "BAD_CURSOR"),
    ] {
        let response = api.post(q, vars.clone()).await?;
        assert_eq!(response["errors"][0]["extensions"]["code"], code, "{vars}: {response}");
        assert_eq!(response["data"], Value::Null, "{vars}");
    }
    Ok(())
}
