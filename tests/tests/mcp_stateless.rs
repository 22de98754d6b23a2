//! MCP 2026-07-28 as a deployment runs it: `agentpact mcp --http` processes with one key behind a
//! round-robin TCP proxy serve one agent between them (calls, a `subscriptions/listen` stream, a
//! confirmation begun on one and finished on the other); a human confirms or declines a spend in
//! a real headless Chromium on the server's page, which answers once and expires; a write the node
//! does not mine within the call becomes a task the client polls to its result.

use std::time::Duration;

use agentpact_tests::{
    HarnessError,
    browser::{Browser, ENTER, TAB},
    index,
    mcp::{binary_env, dev_key},
    mcp_http::{self, ModernClient, answer_page, asked, by_url, retry},
    pacts::Market,
    postgres::TestDatabase,
    round_robin::RoundRobin,
};
use alloy::{hex, providers::Provider};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn failed(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// A market an indexer follows, and the environment of `agentpact mcp` as the buyer, asking its
/// human above 0.3 ETH.
struct Setting {
    m: Market,
    db: TestDatabase,
    _indexer: tokio::task::JoinHandle<()>,
    env: Vec<(&'static str, String)>,
}

impl Setting {
    async fn open(extra: &[(&'static str, &str)]) -> Result<Self> {
        let m = Market::open().await?;
        let (db, indexer) = index::followed(&m.chain).await?;
        let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
        env.push(("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))));
        env.push(("CONFIRM_ABOVE_ETH", "0.3".to_owned()));
        env.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
        Ok(Self { m, db, _indexer: indexer, env })
    }

    /// An `agentpact mcp --http` process: it and its address (`host:port`).
    async fn server(&self) -> Result<(tokio::process::Child, String)> {
        mcp_http::serve(&self.env).await
    }

    /// Buyer terms paying `eth`, open to any seller.
    async fn terms(&self, eth: &str) -> Result<Value> {
        Ok(json!({
            "role": "buyer", "specHash": "QmStateless", "deadline": self.m.chain.now().await? + 86_400,
            "oracles": [self.m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
            "paymentEth": eth, "arbitrator": self.m.cast.arbitrator.to_string(),
        }))
    }
}

async fn pact_count(client: &ModernClient) -> Result<u64> {
    let count = client.call("get-pact-count", json!({})).await?;
    count["structuredContent"]["count"]
        .as_str()
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| failed(format!("get-pact-count: {count}")))
}

/// The code of a refused tool result.
fn code(result: &Value) -> &str {
    result["structuredContent"]["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn two_processes_behind_a_round_robin_proxy_serve_one_agent() -> Result {
    let s = Setting::open(&[]).await?;
    let (_a, a) = s.server().await?;
    let (_b, b) = s.server().await?;
    let proxy = RoundRobin::start(vec![a, b]).await?;
    let client = ModernClient::new(&proxy.url("/mcp"), by_url())?;
    let on = |n: usize| n % 2;

    // Connection 0, upstream A: the stream.
    let filter = json!({ "resourceSubscriptions": ["pact://pacts/0"], "resourcesListChanged": true });
    let mut stream = client.listen(filter).await?;
    stream.next("notifications/subscriptions/acknowledged", Duration::from_secs(10)).await?;
    assert_eq!(pact_count(&client).await?, 0);

    // The first ask lands on A (an even connection); its retry, which sends, on B.
    if on(proxy.order().len()) != 0 {
        pact_count(&client).await?;
    }
    let terms = s.terms("0.5").await?;
    let first = client.call("create-pact", terms.clone()).await?;
    let (page, state) = asked(&first)?;
    assert!(
        page.starts_with(&proxy.url("/confirm/")),
        "the page is reached the way the agent reached the server: {page}"
    );
    let answered = answer_page(&page, "confirm").await?;
    assert_eq!(answered, 200, "the confirm was recorded by whichever process took it");
    if on(proxy.order().len()) != 1 {
        pact_count(&client).await?;
    }
    let sent_on = proxy.order().len();
    let created = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(created["isError"], false, "the retry on the other process sends: {created}");
    assert_eq!(created["structuredContent"]["pactId"], "0", "{created}");
    assert_eq!(proxy.order().len(), sent_on + 1, "the retry took one new connection: the one to B");

    // The stream on A hears the write made through B (through the index, not the process).
    let updated = stream.next("notifications/resources/updated", Duration::from_secs(20)).await?;
    assert_eq!(updated["params"]["uri"], "pact://pacts/0", "{updated}");
    stream.next("notifications/resources/list_changed", Duration::from_secs(20)).await?;

    assert!(proxy.connections().iter().all(|&c| c >= 3), "both served the agent: {:?}", proxy.connections());
    Ok(())
}

#[tokio::test]
async fn a_human_confirms_or_declines_a_deposit_on_the_page_in_a_real_browser() -> Result {
    let s = Setting::open(&[]).await?;
    let (_server, at) = s.server().await?;
    let client = ModernClient::new(&format!("http://{at}/mcp"), by_url())?;
    let browser = Browser::start(1000, 800).await?;
    let terms = s.terms("0.5").await?;
    let standing = "document.getElementById('standing').textContent";

    // Confirmed with the keyboard: the first stop on the page is the confirm button.
    let (page, state) = asked(&client.call("create-pact", terms.clone()).await?)?;
    browser.goto(&page).await?;
    let shown = browser.run("return document.getElementById('summary').textContent", json!([])).await?;
    let shown = shown.as_str().unwrap_or_default();
    for part in ["create-pact", "0.55 ETH", "anyone who accepts", "0.3 ETH (CONFIRM_ABOVE_ETH)"] {
        assert!(shown.contains(part), "the page shows {part}: {shown}");
    }
    browser.press(&[TAB, ENTER]).await?;
    let said = browser
        .wait_for(
            "the confirm",
            &format!("return {standing}.includes('Confirmed') ? {standing} : null"),
            Duration::from_secs(10),
        )
        .await?;
    assert!(said.as_str().unwrap_or_default().starts_with("Confirmed"), "{said}");
    let origin = format!("http://{at}/");
    let requested = browser.requested_urls().await?;
    assert!(requested.iter().all(|u| u.starts_with(&origin)), "nothing loaded from elsewhere: {requested:?}");
    let created = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(created["structuredContent"]["pactId"], "0", "sent once the human confirmed: {created}");

    // The same page again: answered, no buttons; a second answer and a second retry do nothing.
    browser.goto(&page).await?;
    let buttons = browser.run("return document.querySelectorAll('button').length", json!([])).await?;
    assert_eq!(buttons, 0, "a used page offers nothing to press");
    let again = answer_page(&page, "confirm").await?;
    assert_eq!(again, 409, "a reused page changes nothing");
    let replayed = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(code(&replayed), "NOT_CONFIRMED", "a yes is spent once: {replayed}");
    assert_eq!(pact_count(&client).await?, 1);

    // Declined by a click: nothing is sent.
    let (page, state) = asked(&client.call("create-pact", terms.clone()).await?)?;
    browser.goto(&page).await?;
    browser.click("#decline").await?;
    browser
        .wait_for(
            "the decline",
            &format!("return {standing}.includes('Declined') ? {standing} : null"),
            Duration::from_secs(10),
        )
        .await?;
    let declined = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(code(&declined), "NOT_CONFIRMED", "{declined}");
    assert_eq!(pact_count(&client).await?, 1, "nothing was sent when the human declined");

    // Expired: the page says so and takes no answer; the retry sends nothing.
    let (page, state) = asked(&client.call("create-pact", terms.clone()).await?)?;
    sqlx::query(
        "UPDATE mcp_confirmations SET expires_at = now() - interval '1 second' WHERE decision IS NULL",
    )
    .execute(s.db.pool())
    .await
    .map_err(failed)?;
    browser.goto(&page).await?;
    let said = browser.run(&format!("return {standing}"), json!([])).await?;
    assert!(said.as_str().unwrap_or_default().contains("expired"), "{said}");
    let late = answer_page(&page, "confirm").await?;
    assert_eq!(late, 409, "an expired page changes nothing");
    let expired = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(code(&expired), "NOT_CONFIRMED", "{expired}");
    assert_eq!(pact_count(&client).await?, 1);

    // A retry naming the first page for other terms is not this call's confirmation.
    let other = s.terms("0.6").await?;
    let mismatched = client.call_with(retry(&other, &state)).await?;
    assert_eq!(code(&mismatched), "NOT_CONFIRMED", "{mismatched}");
    browser.close().await?;
    Ok(())
}

#[tokio::test]
async fn a_write_not_mined_within_the_call_becomes_a_task_polled_to_its_result() -> Result {
    let s = Setting::open(&[("CALL_TIMEOUT_SECS", "1"), ("RECEIPT_TIMEOUT_SECS", "60")]).await?;
    let (_server, at) = s.server().await?;
    let url = format!("http://{at}/mcp");
    let tasks = ModernClient::new(&url, json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }))?;
    let terms = s.terms("0.1").await?;
    let provider = &s.m.chain.provider;
    let _: Value = provider.raw_request("evm_setAutomine".into(), (false,)).await.map_err(failed)?;

    let answered = tasks.call("create-pact", terms.clone()).await?;
    assert_eq!(answered["resultType"], "task", "not mined within the call: a task: {answered}");
    let id = answered["taskId"].as_str().ok_or_else(|| failed(format!("no taskId: {answered}")))?.to_owned();
    let working = tasks.request("tasks/get", json!({ "taskId": id })).await?;
    assert_eq!(working["result"]["status"], "working", "{working}");

    let _: Value = provider.raw_request("evm_setAutomine".into(), (true,)).await.map_err(failed)?;
    s.m.chain.mine().await?;
    let mut done = Value::Null;
    for _ in 0..200 {
        done = tasks.request("tasks/get", json!({ "taskId": id })).await?;
        if done["result"]["status"] != "working" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["structuredContent"]["pactId"], "0", "the tool's answer: {done}");

    // The write offered the node's estimate plus a margin: well above what it used.
    let tx = done["result"]["result"]["structuredContent"]["txHash"].as_str().unwrap_or_default();
    let tx: alloy::primitives::B256 = tx.parse().map_err(|e| failed(format!("txHash {tx}: {e}")))?;
    let sent =
        provider.get_transaction_by_hash(tx).await.map_err(failed)?.ok_or_else(|| failed("no such tx"))?;
    let receipt =
        provider.get_transaction_receipt(tx).await.map_err(failed)?.ok_or_else(|| failed("no receipt"))?;
    let limit = alloy::consensus::Transaction::gas_limit(&sent);
    assert!(limit * 100 >= receipt.gas_used * 120, "gas limit {limit} for {} used", receipt.gas_used);

    // A client without the extension gets PENDING with the hash, as before.
    let plain = ModernClient::new(&url, json!({}))?;
    let _: Value = provider.raw_request("evm_setAutomine".into(), (false,)).await.map_err(failed)?;
    let pending = plain.call("create-pact", terms).await?;
    assert_eq!(code(&pending), "PENDING", "{pending}");
    let _: Value = provider.raw_request("evm_setAutomine".into(), (true,)).await.map_err(failed)?;
    let unknown = tasks.request("tasks/get", json!({ "taskId": "task-nope" })).await?;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    Ok(())
}

/// The 5 minutes of a confirmation bound its yes as well as its question: a human confirms, the
/// agent's retry comes after the confirmation expired (its expiry moved back, as 5 minutes
/// passing would), and it is refused as NOT_CONFIRMED saying so; nothing is sent.
#[tokio::test]
async fn a_yes_taken_after_its_confirmation_expired_sends_nothing() -> Result {
    let s = Setting::open(&[]).await?;
    let (_server, at) = s.server().await?;
    let client = ModernClient::new(&format!("http://{at}/mcp"), by_url())?;
    let terms = s.terms("0.5").await?;
    let (page, state) = asked(&client.call("create-pact", terms.clone()).await?)?;
    assert_eq!(answer_page(&page, "confirm").await?, 200, "the human confirmed in time");
    let moved = sqlx::query(
        "UPDATE mcp_confirmations SET expires_at = now() - interval '1 second' WHERE decision = 'confirmed'",
    )
    .execute(s.db.pool())
    .await
    .map_err(failed)?;
    assert_eq!(moved.rows_affected(), 1);

    let late = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(code(&late), "NOT_CONFIRMED", "{late}");
    let said = late["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("expired") && said.contains("call again"), "{said}");
    assert_eq!(pact_count(&client).await?, 0, "nothing was sent");
    let page = reqwest::get(&page).await.map_err(failed)?.text().await.map_err(failed)?;
    assert!(page.contains("did not take it in time"), "the page says the yes lapsed: {page}");
    Ok(())
}
