//! Public RPC endpoints as they behave (issue #19), played by the misbehaving proxy in front of
//! anvil: log ranges refused over a block limit in each provider's own words (and in words nobody
//! documented), HTTP 429 with `Retry-After` at 10 and 25 requests a second, and a node that takes
//! requests and never answers — under a running indexer, and in front of each command.

use std::time::{Duration, Instant};

use agentpact_contracts::{Initiator, rpc::RpcLimits};
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::ether,
    cli::run_within,
    index::{self, caught_up, dump, fresh_dump, small_ranges},
    mcp::{binary_env, dev_key},
    pacts::Market,
    postgres::TestDatabase,
    rpc_proxy::{Faults, FaultyRpc, RangeLimit},
    tcp_relay::TcpRelay,
    until,
};

use alloy::hex;

type Result = std::result::Result<(), HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// Three completed pacts and a withdrawal: a few dozen blocks with logs.
async fn some_history(m: &Market) -> Result {
    for initiator in [Initiator::Buyer, Initiator::Seller, Initiator::Buyer] {
        m.completed(initiator, ether(1)).await?;
    }
    m.withdraw_all(m.cast.seller).await?;
    Ok(())
}

/// Retries a few milliseconds apart, and ranges that start wide.
fn wide_and_quick() -> Config {
    Config {
        initial_range: 64,
        max_range: 1_000,
        poll_interval: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        ..small_ranges()
    }
}

#[tokio::test]
async fn each_providers_range_refusal_and_an_unknown_one_teach_the_limit_and_the_index_is_exact() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    // Each as the provider or node client words it; the last in words no table knows.
    let refusals = [
        (-32_005, "query exceeds max block range {limit}"),
        (-32_614, "eth_getLogs is limited to a {limit} range"),
        (-32_602, "range {asked} exceeds limit of {limit}"),
        (-32_000, "exceed maximum block range: {limit}"),
        (-32_600, "eth_getLogs range is too large, max is {limit} blocks"),
        (-32_000, "computer says no"),
    ];
    for (code, message) in refusals {
        let limit = RangeLimit { blocks: 5, code, message };
        let faults = Faults { range_limit: Some(limit), ..Faults::default() };
        let proxy = FaultyRpc::start(m.chain.provider.clone(), faults).await?;
        let db = TestDatabase::create().await?;
        let mut ix =
            index::through(proxy.url(), &m.chain, db.pool(), wide_and_quick(), &RpcLimits::default()).await?;
        // A pass that meets a refusal it cannot read fails; the next one, refused the same range
        // again, halves it. Passes until the head, as the running indexer would make them.
        let mut passes = 1;
        while let Err(e) = ix.catch_up().await {
            passes += 1;
            assert!(passes <= 12, "{message:?}: still failing after {passes} passes: {e}");
        }
        assert!(
            dump(db.pool()).await? == fresh_dump(&m.chain).await?,
            "{message:?}: the index differs from a fresh one"
        );
        assert!(proxy.failed() > 0, "{message:?}: the limit never bit; the case proves nothing");
        let named = !message.contains("computer");
        if named {
            assert_eq!((passes, proxy.failed()), (1, 1), "{message:?}: one refusal names the limit");
        }
        // What was learned holds: more history, no new refusal.
        let refused = proxy.failed();
        m.completed(Initiator::Seller, ether(1)).await?;
        ix.catch_up().await?;
        assert_eq!(proxy.failed(), refused, "{message:?}: refused again after learning the limit");
    }
    Ok(())
}

#[tokio::test]
async fn a_rate_limited_endpoint_is_followed_to_the_head_through_budgets_of_10_and_25_requests() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    for budget in [10, 25] {
        // The endpoint refuses once a budget of requests is spent, however slowly they came (a
        // rate the indexer had to reach went unrefused on a loaded machine), until a second after
        // its 429. No ceiling of our own: the 429s and their Retry-After pace the indexer.
        let faults = Faults { budget: Some(budget), ..Faults::default() };
        let proxy = FaultyRpc::start(m.chain.provider.clone(), faults).await?;
        let db = TestDatabase::create().await?;
        let ix =
            index::through(proxy.url(), &m.chain, db.pool(), wide_and_quick(), &RpcLimits::default()).await?;
        let (started, metrics) = (Instant::now(), ix.metrics());
        let task = tokio::spawn(agentpact_indexer::run(ix, std::future::pending()));
        let failed = |what: &str, e: HarnessError| {
            process(format!(
                "budget {budget}: {what}: {e}; {} answered 429 in {} spent budgets; metrics:\n{}",
                proxy.failed(),
                proxy.budgets_spent(),
                metrics.render()
            ))
        };
        // The backfill, then idle polls (one call each), spend budgets until two have run out: the
        // indexer has been refused, waited, been served again and refused again.
        until(Duration::from_secs(60), "two budgets spent", || async { Ok(proxy.budgets_spent() >= 2) })
            .await
            .map_err(|e| failed("never refused twice", e))?;
        // New history after the refusals: the indexer, its budget running out again and again,
        // follows it to the head.
        m.completed(Initiator::Seller, ether(1)).await?;
        index::wait_for_checkpoint_within(db.pool(), head(&m).await?, Duration::from_secs(60))
            .await
            .map_err(|e| failed("not at the head", e))?;
        task.abort();
        assert!(proxy.failed() >= 2, "budget {budget}: {} refused; the case proves nothing", proxy.failed());
        assert!(
            dump(db.pool()).await? == fresh_dump(&m.chain).await?,
            "budget {budget}: the index differs from a fresh one"
        );
        eprintln!(
            "budget of {budget}: at the head in {:.1?}, {} answered 429 in {} spent budgets",
            started.elapsed(),
            proxy.failed(),
            proxy.budgets_spent()
        );
    }
    // With the ceiling set under the endpoint's plan, it is not refused at all (one second's
    // boundary may let one through twice).
    let faults = Faults { max_rps: Some(10), ..Faults::default() };
    let proxy = FaultyRpc::start(m.chain.provider.clone(), faults).await?;
    let db = TestDatabase::create().await?;
    let limits = RpcLimits { max_rps: std::num::NonZeroU32::new(8), ..RpcLimits::default() };
    let mut ix = index::through(proxy.url(), &m.chain, db.pool(), wide_and_quick(), &limits).await?;
    ix.catch_up().await?;
    assert!(proxy.failed() <= 2, "with RPC_MAX_RPS=8 against 10/s, {} requests were refused", proxy.failed());
    assert!(
        dump(db.pool()).await? == fresh_dump(&m.chain).await?,
        "with a ceiling: the index differs from a fresh one"
    );
    Ok(())
}

#[tokio::test]
async fn an_idle_indexer_asks_the_endpoint_once_per_poll() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    let proxy = FaultyRpc::start(m.chain.provider.clone(), Faults::default()).await?;
    let db = TestDatabase::create().await?;
    let mut ix =
        index::through(proxy.url(), &m.chain, db.pool(), wide_and_quick(), &RpcLimits::default()).await?;
    ix.catch_up().await?;
    let mut conn = db.pool().acquire().await?;
    let before = proxy.requests();
    for _ in 0..5 {
        ix.pass(&mut conn).await?;
    }
    // On a free tier every call counts: the head it reads proves the checkpoint still stands.
    assert_eq!(proxy.requests() - before, 5, "five idle passes, one call each");
    Ok(())
}

#[tokio::test]
async fn a_websocket_head_subscription_wakes_the_indexer_and_survives_a_drop() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    let anvil = m.chain.anvil.endpoint_url();
    let relay = TcpRelay::start(format!("127.0.0.1:{}", anvil.port().unwrap_or(8545))).await?;
    let db = TestDatabase::create().await?;
    // A poll far longer than the test: only the subscription can wake the indexer in time.
    let config = Config { poll_interval: Duration::from_secs(600), ..wide_and_quick() };
    let ix = index::through(&relay.ws_url(), &m.chain, db.pool(), config, &RpcLimits::default()).await?;
    let task = tokio::spawn(agentpact_indexer::run(ix, std::future::pending()));
    caught_up(&m.chain, db.pool()).await?;
    m.completed(Initiator::Buyer, ether(1)).await?;
    caught_up(&m.chain, db.pool())
        .await
        .map_err(|e| process(format!("no new head woke the indexer: {e}")))?;

    // The connections drop (both the calls' and the subscription's); they come back by themselves.
    relay.cut();
    m.completed(Initiator::Seller, ether(2)).await?;
    caught_up(&m.chain, db.pool())
        .await
        .map_err(|e| process(format!("not following after the drop: {e}")))?;
    task.abort();
    assert!(dump(db.pool()).await? == fresh_dump(&m.chain).await?, "the index differs from a fresh one");

    // The other commands take a ws:// URL as well: a deployment over the websocket.
    let dir = std::env::temp_dir().join(format!("agentpact-ws-{}", std::process::id()));
    let mut env = binary_env(&m.chain, &relay.ws_url(), db.url());
    env.push(("PRIVATE_KEY", hex::encode(dev_key(&m.chain, 1)?.to_bytes())));
    let deploy = ["deploy", "--deployments-dir", &dir.display().to_string(), "--force"].map(str::to_owned);
    let args: Vec<&str> = deploy.iter().map(String::as_str).collect();
    let deployed = run_within(&args, env, Duration::from_secs(60)).await?;
    let _ = std::fs::remove_dir_all(&dir);
    assert!(deployed.success, "deploy over ws://: {}", deployed.stderr);
    Ok(())
}

async fn head(m: &Market) -> std::result::Result<u64, HarnessError> {
    Ok(alloy::providers::Provider::get_block_number(&m.chain.provider).await?)
}

#[tokio::test]
async fn a_node_that_stops_answering_makes_the_indexer_unready_and_it_recovers() -> Result {
    let m = Market::open().await?;
    some_history(&m).await?;
    let proxy = FaultyRpc::start(m.chain.provider.clone(), Faults::default()).await?;
    let db = TestDatabase::create().await?;
    let limits = RpcLimits { timeout: Duration::from_secs(1), ..RpcLimits::default() };
    let ix = index::through(proxy.url(), &m.chain, db.pool(), wide_and_quick(), &limits).await?;
    let metrics = ix.metrics();
    let task = tokio::spawn(agentpact_indexer::run(ix, std::future::pending()));
    caught_up(&m.chain, db.pool()).await?;
    let mut config = api::config(m.chain.anvil.chain_id());
    config.ready_max_silence = Duration::from_secs(2);
    let api = TestApi::start(db.pool(), config).await?;
    let ready = || async {
        let response = api.client().get(format!("{}/readyz", api.base)).send().await.map_err(process)?;
        let status = response.status().as_u16();
        Ok::<_, HarnessError>((status, response.text().await.unwrap_or_default()))
    };
    assert_eq!(ready().await?.0, 200);

    proxy.stall(true);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (status, why) = ready().await?;
    assert_eq!(status, 503, "a silent node must make the index unready: {why}");
    assert!(why.contains("has not reported"), "{why}");
    let text = metrics.render();
    assert!(metrics.head_age() >= Duration::from_secs(3), "the head age must grow:\n{text}");
    assert!(text.contains("kind=\"rpc\""), "the timeouts must be counted as RPC errors:\n{text}");

    proxy.stall(false);
    m.completed(Initiator::Buyer, ether(2)).await?;
    caught_up(&m.chain, db.pool()).await?;
    assert_eq!(ready().await?.0, 200, "ready again once the node answers");
    assert!(metrics.head_age() < Duration::from_secs(2));
    task.abort();
    assert!(dump(db.pool()).await? == fresh_dump(&m.chain).await?, "the index differs from a fresh one");
    Ok(())
}

#[tokio::test]
async fn every_command_facing_a_silent_node_stops_within_its_timeout_and_says_why() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let proxy = FaultyRpc::start(m.chain.provider.clone(), Faults::default()).await?;
    proxy.stall(true);
    let key = hex::encode(dev_key(&m.chain, 1)?.to_bytes());
    let commands: [(&str, &[&str]); 3] = [
        ("deploy", &["deploy", "--deployments-dir", "/nonexistent/agentpact-test"]),
        ("index", &["index", "--metrics-addr", "127.0.0.1:0"]),
        ("mcp", &["mcp"]),
    ];
    for (name, args) in commands {
        let mut env = binary_env(&m.chain, proxy.url(), db.url());
        env.extend([("PRIVATE_KEY", key.clone()), ("RPC_TIMEOUT_SECS", "1".to_owned())]);
        let started = Instant::now();
        let run = run_within(args, env, Duration::from_secs(30)).await?;
        let said = run.stderr.trim();
        assert!(!run.success, "agentpact {name} succeeded against a silent node: {said}");
        assert!(said.contains("timed out"), "agentpact {name} does not say the node timed out: {said}");
        assert!(!said.contains(&key), "agentpact {name} printed the key");
        eprintln!("agentpact {name}: stopped after {:.1?}: {said}", started.elapsed());
    }
    Ok(())
}
