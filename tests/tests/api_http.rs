//! The API as a client meets it over HTTP: live updates over a websocket, limits and input errors
//! with codes, the query console, health, readiness, metrics and CORS.

use std::time::{Duration, Instant};

use agentpact_contracts::Initiator;
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::{ether, send},
    pacts::Market,
    postgres::TestDatabase,
};
use serde_json::json;

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn http(e: reqwest::Error) -> HarnessError {
    HarnessError::Process(e.to_string())
}

async fn indexed_market() -> Result<(Market, TestDatabase)> {
    let m = Market::open().await?;
    m.funded(Initiator::Buyer, ether(1)).await?;
    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    Ok((m, db))
}

#[tokio::test]
async fn a_subscriber_sees_a_transaction_within_a_second() -> Result {
    let (m, db) = indexed_market().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    let config = Config { poll_interval: Duration::from_millis(50), ..Config::default() };
    let indexer = agentpact_tests::index::indexer(&m.chain, db.pool(), config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(agentpact_indexer::run(indexer, async move { drop(stopped.await) }));

    let q = "subscription($f: PactUpdateFilter) { pactUpdated(filter: $f) { id status seller } }";
    let mut only_ours =
        api.subscribe(q, json!({ "f": { "pactId": "0", "status": ["IN_PROGRESS"] } })).await?;
    let mut by_party = api.subscribe(q, json!({ "f": { "party": m.cast.buyer.to_checksum(None) } })).await?;
    // The party filter is decided from the notification, which names every party, oracles too.
    let mut by_oracle =
        api.subscribe(q, json!({ "f": { "party": m.cast.oracles[1].to_checksum(None) } })).await?;
    let mut unrelated =
        api.subscribe(q, json!({ "f": { "party": m.cast.stranger.to_checksum(None) } })).await?;
    // A change to another pact of the buyer first: the pact filter must skip it.
    m.create(m.terms(Initiator::Buyer, ether(2)).await?).await?;
    let created = by_party.next_data().await?;
    assert_eq!(created["pactUpdated"]["id"], "1", "{created}");
    assert_eq!(by_oracle.next_data().await?["pactUpdated"]["id"], "1");

    send(m.chain.pact.startWork(alloy::primitives::U256::ZERO).from(m.cast.seller)).await?;
    let mined = Instant::now();
    // A functional bound (20 poll intervals), not a performance target: BENCHMARKS.md has the figures.
    let update = tokio::time::timeout(Duration::from_secs(1), only_ours.next_data())
        .await
        .map_err(|_| HarnessError::Process("no pactUpdated within 1 s of the transaction".into()))??;
    let took = mined.elapsed();
    assert_eq!(
        update["pactUpdated"],
        json!({ "id": "0", "status": "IN_PROGRESS", "seller": m.cast.seller.to_checksum(None) })
    );
    assert_eq!(by_party.next_data().await?["pactUpdated"]["status"], "IN_PROGRESS");
    // The stranger's own pact, after all of the above: the first thing the stranger's filter
    // receives (a wait for silence would end before a slow machine delivers what it should not).
    let terms = m.terms(Initiator::Buyer, ether(1)).await?;
    let deposit = agentpact_tests::pacts::creator_deposit(Initiator::Buyer, ether(1));
    send(m.chain.pact.createPact(terms).from(m.cast.stranger).value(deposit)).await?;
    let first = unrelated.next_data().await?;
    assert_eq!(first["pactUpdated"]["id"], "2", "a stranger's filter received another's pact first: {first}");
    eprintln!("pactUpdated arrived {took:?} after the receipt");
    drop(stop);
    running.await.map_err(|e| HarnessError::Process(e.to_string()))??;
    Ok(())
}

#[tokio::test]
async fn limits_and_bad_input_get_documented_codes_and_change_nothing() -> Result {
    let (m, db) = indexed_market().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    let full_page = "pacts(first: 100) { edges { node { id status initiator creator buyer seller arbitrator specHash
        specUri deadline reviewPeriod threshold payment buyerStake sellerStake proofHash scoreCount finalScore
        createdAt acceptedAt submittedAt verifiedAt disputedAt closedAt outcome createdBlock updatedBlock } } }";
    let alias_bomb = format!(
        "{{ {} }}",
        (0..3000).map(|i| format!("a{i}: stats {{ activeOracles }}")).collect::<String>()
    );
    // Eleven levels (introspection has its own bound: api_hostile).
    let deep = "{ pacts { edges { node { negotiation { pact { negotiation { pact { negotiation { pact { negotiation { id } } } } } } } } } } }";
    let cases = [
        (deep.to_owned(), json!({}), "QUERY_TOO_DEEP"),
        (format!("{{ a: {full_page} b: {full_page} }}"), json!({}), "QUERY_TOO_COMPLEX"),
        (
            "query($a: Address!) { reputation(address: $a) { score { value } } }".into(),
            json!({ "a": "0x1234" }),
            "BAD_ADDRESS",
        ),
        (
            "query($a: Address!) { reputation(address: $a) { score { value } } }".into(),
            json!({ "a": "0x70997970C51812dc3A010C7d01b50e0d17dc79C9" }),
            "BAD_ADDRESS",
        ),
        ("{ pact(id: \"-1\") { id } }".into(), json!({}), "BAD_BIG_INT"),
        ("{ pact(id: \"1e3\") { id } }".into(), json!({}), "BAD_BIG_INT"),
        ("{ pacts(filter: { minPayment: \"lots\" }) { totalCount } }".into(), json!({}), "BAD_BIG_INT"),
        ("{ pact(id: \"1\") { nope } }".into(), json!({}), "GRAPHQL_VALIDATION_FAILED"),
        ("{ pact(id: ".into(), json!({}), "GRAPHQL_VALIDATION_FAILED"),
        ("{ verifications { score } }".into(), json!({}), "BAD_ARGUMENT"),
        ("{ oracles(first: 1000) { address } }".into(), json!({}), "PAGE_TOO_LARGE"),
        ("{ pacts(first: 1000000000) { totalCount } }".into(), json!({}), "PAGE_TOO_LARGE"),
        (
            "query($a: Address!) { reputation(address: $a) { basis(first: 101) { untrusted { raters } } } }"
                .into(),
            json!({ "a": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }),
            "PAGE_TOO_LARGE",
        ),
        (
            "query($a: Address!, $v: Address) { reputation(address: $a, viewer: $v) { score { value } } }"
                .into(),
            json!({ "a": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "v": "0x1234" }),
            "BAD_ADDRESS",
        ),
        (alias_bomb, json!({}), "QUERY_TOO_COMPLEX"),
        (
            "query($s: String) { pacts(filter: { search: $s }) { totalCount } }".into(),
            json!({ "s": "logo ".repeat(100) }),
            "BAD_ARGUMENT",
        ),
        ("{ ...A } fragment A on Query { ...A }".into(), json!({}), "GRAPHQL_VALIDATION_FAILED"),
    ];
    let before = agentpact_tests::index::dump(db.pool()).await?;
    for (query, vars, code) in cases {
        let response = api.post(&query, vars).await?;
        let error = &response["errors"][0];
        assert_eq!(error["extensions"]["code"], code, "{query}: {response}");
        assert!(
            error["message"].as_str().is_some_and(|m| m.len() > 10),
            "a message that says what is wrong: {error}"
        );
    }
    // Past the parser: a body over the limit is refused unread, a batch is not accepted.
    let post = |body: String| {
        api.client()
            .post(format!("{}/graphql", api.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let huge = json!({ "query": format!("{{ stats {{ activeOracles }} }}{}", " ".repeat(agentpact_api::server::MAX_BODY_BYTES)) });
    let status = |r: reqwest::Response| r.status().as_u16();
    assert_eq!(post(huge.to_string()).await.map(status).map_err(http)?, 413, "an oversized body");
    let one = json!({ "query": "{ stats { activeOracles } }" });
    let batch = json!([one, one]);
    assert_eq!(post(batch.to_string()).await.map(status).map_err(http)?, 400, "a batch");
    let lower = api
        .data(
            "query($a: Address!) { reputation(address: $a) { address } }",
            json!({ "a": format!("{:#x}", m.cast.buyer) }),
        )
        .await?;
    assert_eq!(
        lower["reputation"]["address"],
        json!(m.cast.buyer.to_checksum(None)),
        "lower case is accepted"
    );
    // This market names no seeds: the ranking ran, and `_meta` says what that means.
    let meta = api.data("{ _meta { reputation { seeds note } } }", json!({})).await?;
    assert_eq!(
        meta["_meta"]["reputation"],
        json!({ "seeds": [], "note": "no seeds configured: every global score is 3.00" }),
        "{meta}"
    );
    assert_eq!(agentpact_tests::index::dump(db.pool()).await?, before, "bad queries changed the index");
    Ok(())
}

#[tokio::test]
async fn console_health_readiness_metrics_and_cors() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    // The default bound on the indexer's silence (30 s): no check below races it on a slow machine.
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;

    // The query console is the dashboard's page, its script served by the binary (tests/tests/
    // dashboard.rs drives it in a browser).
    let (status, page) = api.get("/graphql").await?;
    assert_eq!(status, 200);
    assert!(page.contains(r#"src="/assets/js/main.js""#), "console page: {page:.300}");
    let (status, script) = api.get("/assets/js/pages/console.js").await?;
    assert_eq!(status, 200);
    assert!(script.contains("export async function console"), "{script:.200}");
    assert_eq!(api.get("/assets/../Cargo.toml").await?.0, 404);
    assert_eq!(api.get("/healthz").await?, (200, "ok".to_owned()));
    let (status, body) = api.get("/readyz").await?;
    assert_eq!(status, 503, "nothing indexed yet: {body}");
    assert!(body.contains("has not been indexed"), "{body}");

    let mut indexer = agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default());
    indexer.catch_up().await?;
    let (status, body) = api.get("/readyz").await?;
    assert_eq!(status, 200, "{body}");

    // An indexer far behind the head (as mid-backfill) is not ready.
    sqlx::query("UPDATE checkpoints SET head_block = block_number + 11").execute(db.pool()).await?;
    let (status, body) = api.get("/readyz").await?;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("11 blocks behind"), "{body}");
    indexer.catch_up().await?;
    assert_eq!(api.get("/readyz").await?.0, 200);
    // An indexer that stopped reporting is not ready either: its last report a minute old, past
    // the 30 s bound (made so, not waited for).
    sqlx::query("UPDATE checkpoints SET head_seen_at = now() - interval '1 minute'")
        .execute(db.pool())
        .await?;
    let (status, body) = api.get("/readyz").await?;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("has not reported"), "{body}");

    api.data("{ stats { pacts } }", json!({})).await?; // with the console's GET: 2 answers on /graphql
    let (status, metrics) = api.get("/metrics").await?;
    assert_eq!(status, 200);
    assert!(
        metrics.contains("agentpact_api_requests_total{route=\"/graphql\",status=\"200\"} 2"),
        "{metrics}"
    );
    assert!(metrics.contains("agentpact_api_index_lag_blocks{chain_id=\"31337\"} 0"), "{metrics}");

    let preflight = |origin: &'static str| {
        api.client()
            .request(reqwest::Method::OPTIONS, format!("{}/graphql", api.base))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .send()
    };
    let allowed =
        preflight("https://dashboard.example").await.map_err(|e| HarnessError::Process(e.to_string()))?;
    assert_eq!(
        allowed.headers().get("access-control-allow-origin").map(|v| v.as_bytes()),
        Some(&b"https://dashboard.example"[..])
    );
    let other = preflight("https://evil.example").await.map_err(|e| HarnessError::Process(e.to_string()))?;
    assert_eq!(other.headers().get("access-control-allow-origin"), None);
    Ok(())
}

#[tokio::test]
async fn a_client_over_its_rate_gets_429_with_retry_after() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let mut config = api::config(m.chain.anvil.chain_id());
    // One token every 20 s: the burst of 3 is spent however slowly the machine sends the requests.
    config.rate_limit = Some(agentpact_http::rate_limit::Rate { per_second: 0.05, burst: 3.0 });
    let api = TestApi::start(db.pool(), config).await?;
    for _ in 0..3 {
        api.data("{ stats { pacts } }", json!({})).await?;
    }
    let refused = api
        .client()
        .post(format!("{}/graphql", api.base))
        .json(&json!({ "query": "{ stats { pacts } }" }))
        .send()
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    assert_eq!(refused.status().as_u16(), 429);
    // The wait until the next token, in whole seconds: 20 less the seconds since the burst began.
    let retry_after = refused.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    assert!(retry_after.is_some_and(|s| (11..=20).contains(&s)), "Retry-After: {retry_after:?}");
    let body: serde_json::Value = refused.json().await.map_err(|e| HarnessError::Process(e.to_string()))?;
    assert_eq!(body["errors"][0]["extensions"]["code"], "RATE_LIMITED");
    assert_eq!(api.get("/healthz").await?.0, 200, "health checks are not limited");
    Ok(())
}
