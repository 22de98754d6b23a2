//! The private key, hunted through everything the binaries print (stdout, stderr at debug level)
//! while they fail in every way this project knows: bad input, unknown tools, tools outside the
//! role, the spending cap, reverts, an RPC that fails and then goes away, an unfunded wallet, a
//! malformed key, a deploy that cannot pay. (The keystore password has its own hunt in
//! `mcp_stdio.rs`.)

use agentpact_tests::{
    HarnessError,
    cli::binary,
    mcp::{StdioAgent, binary_env, dev_key},
    pacts::Market,
    postgres::TestDatabase,
    rpc_proxy::{Faults, FaultyRpc},
};
use alloy::{hex, signers::local::PrivateKeySigner};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// `agentpact mcp`'s environment for `key` against `rpc` in `role`, logging at debug level.
fn env(m: &Market, db: &TestDatabase, key: &str, rpc: &str, role: &str) -> Vec<(&'static str, String)> {
    let mut env = binary_env(&m.chain, rpc, db.url());
    env.extend([
        ("PRIVATE_KEY", key.to_owned()),
        ("MCP_ROLE", role.to_owned()),
        ("INDEX_WAIT_MS", "0".to_owned()),
        ("RUST_LOG", "debug".to_owned()),
    ]);
    env
}

/// The error code of a failed tool call (`isError`), or the JSON-RPC error of a refused request.
fn failure(answer: &Value) -> Option<String> {
    if answer["isError"] == true {
        return Some(answer["structuredContent"]["error"]["code"].as_str().unwrap_or("?").to_owned());
    }
    answer.get("error").map(|e| format!("json-rpc {}", e["code"]))
}

fn assert_secret_absent(printed: &str, secret: &str, path: &str) {
    assert!(!printed.is_empty(), "{path}: nothing printed, the search below would prove nothing");
    assert!(
        !printed.to_lowercase().contains(&secret.to_lowercase()),
        "{path}: the private key appeared in what the process printed"
    );
}

#[tokio::test]
async fn no_failure_path_of_the_mcp_server_prints_the_key() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let signer = dev_key(&m.chain, 1)?;
    let key = hex::encode(signer.to_bytes());
    let proxy = FaultyRpc::start(
        m.chain.provider.clone(),
        Faults { fail_every: Some(4), latency_ms: Some((0, 20)), ..Faults::default() },
    )
    .await?;
    let deadline = m.chain.now().await? + 30 * 24 * 60 * 60;
    let terms = |payment: &str| {
        json!({
            "role": "buyer", "specHash": "QmSecret", "deadline": deadline,
            "oracles": [m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
            "paymentEth": payment, "arbitrator": m.cast.arbitrator.to_string(),
        })
    };
    let mut seeker = StdioAgent::start(&env(&m, &db, &format!("0x{key}"), proxy.url(), "seeker")).await?;
    let must_fail = [
        ("create-pact", json!({ "role": "buyer" })),
        ("create-pact", json!({ "role": 7, "paymentEth": ["0.1"] })),
        ("create-pact", terms("1000000")),
        ("create-pact", json!({ "role": "buyer", "specHash": "x".repeat(100_000) })),
        ("accept-pact", json!({ "pactId": 999_999 })),
        ("submit-verification", json!({ "pactId": 0, "score": 50, "proof": "0x00" })),
        ("steal-everything", json!({ "to": "me" })),
    ];
    for (tool, args) in must_fail {
        let answer = seeker.call(tool, args).await?;
        assert!(failure(&answer).is_some(), "{tool} must fail: {answer}");
    }
    // Through a proxy failing every fourth request: some of these fail, some succeed.
    for _ in 0..4 {
        seeker.call("create-pact", terms("0.01")).await?;
        seeker.call("get-pact", json!({ "pactId": 0 })).await?;
    }
    proxy.stop().await;
    let cut_off = seeker.call("create-pact", terms("0.01")).await?;
    assert_eq!(failure(&cut_off).as_deref(), Some("RPC_UNAVAILABLE"), "{cut_off}");
    assert_secret_absent(&seeker.finish().await?, &key, "failing tool calls");

    let pauper = PrivateKeySigner::random();
    let pauper_key = hex::encode(pauper.to_bytes());
    let rpc = m.chain.anvil.endpoint();
    let mut broke = StdioAgent::start(&env(&m, &db, &format!("0x{pauper_key}"), &rpc, "full")).await?;
    let answer = broke.call("create-pact", terms("0.01")).await?;
    assert_eq!(failure(&answer).as_deref(), Some("INSUFFICIENT_FUNDS"), "{answer}");
    assert_secret_absent(&broke.finish().await?, &pauper_key, "an unfunded wallet");
    Ok(())
}

#[tokio::test]
async fn a_malformed_key_or_a_failed_deploy_is_reported_without_the_key() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let key = hex::encode(dev_key(&m.chain, 1)?.to_bytes());
    let rpc = m.chain.anvil.endpoint();
    // One character off: not hex, so not a key, but still almost all of one.
    let malformed = format!("0x{}z", &key[..63]);
    let mut command = tokio::process::Command::new(binary());
    command.arg("mcp").envs(env(&m, &db, &malformed, &rpc, "full"));
    let output = command.output().await.map_err(process)?;
    let printed =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(2), "a malformed key must be refused: {printed}");
    assert_secret_absent(&printed, &key[..63], "a malformed key");

    let pauper_key = hex::encode(PrivateKeySigner::random().to_bytes());
    let dir = std::env::temp_dir().join(format!("agentpact-secrets-{}", db.name()));
    let output = tokio::process::Command::new(binary())
        .args(["deploy", "--rpc-url", &rpc, "--deployments-dir"])
        .arg(&dir)
        .env("PRIVATE_KEY", format!("0x{pauper_key}"))
        .env("RUST_LOG", "debug")
        .output()
        .await
        .map_err(process)?;
    let printed =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(!output.status.success(), "an unfunded deploy must fail: {printed}");
    assert_secret_absent(&printed, &pauper_key, "a deploy that cannot pay");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// At `RUST_LOG=trace` the MCP server logs none of what a call carries that lets its reader act:
/// a confirmation page's address and token (with them anyone confirms a spend; over MCP
/// 2026-07-28 the token is the `requestState`), `subscribe_webhook`'s HMAC secret and its URL's
/// token, and the private key. The spend is confirmed through the page as a human would, so the
/// elicitation carrying the page did pass through the server.
#[tokio::test]
async fn trace_logs_hold_no_confirmation_token_webhook_secret_or_key() -> Result {
    let m = Market::open().await?;
    let (db, _indexer) = agentpact_tests::index::followed(&m.chain).await?;
    let key = hex::encode(dev_key(&m.chain, 1)?.to_bytes());
    let mut env = env(&m, &db, &format!("0x{key}"), &m.chain.anvil.endpoint(), "full");
    env.extend([
        ("RUST_LOG", "trace".to_owned()),
        ("CONFIRM_ABOVE_ETH", "0.3".to_owned()),
        ("WEBHOOK_ALLOW_TARGETS", "127.0.0.1/32".to_owned()),
    ]);
    let mut agent = StdioAgent::spawn(&env).await?;
    agent.handshake_with(json!({ "elicitation": { "url": {} } })).await?;

    let hmac_secret = hex::encode(rand::random::<[u8; 20]>());
    let url_token = hex::encode(rand::random::<[u8; 20]>());
    let port = agentpact_tests::cli::free_port()?;
    let target = format!("http://127.0.0.1:{port}/hook?token={url_token}");
    agent.ok("subscribe_webhook", json!({ "url": target, "hmacSecret": hmac_secret })).await?;
    let terms = json!({
        "role": "buyer", "specHash": "QmTrace", "deadline": m.chain.now().await? + 86_400,
        "oracles": [m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
        "paymentEth": "0.5", "arbitrator": m.cast.arbitrator.to_string(),
    });
    let (created, pages) = agent.call_confirming("create-pact", terms, "confirm").await?;
    assert_eq!(created["result"]["structuredContent"]["pactId"], "0", "confirmed on the page: {created}");
    let page = pages.first().ok_or_else(|| process("no page was asked"))?.clone();
    let page_token = page.rsplit('/').next().unwrap_or_default().to_owned();
    assert_eq!(page_token.len(), 64, "{page}");

    let (_, logged) = agent.stop().await?;
    assert!(
        logged.contains("TRACE"),
        "trace logging printed nothing at trace: the search would prove nothing"
    );
    for (what, secret) in [
        ("the page's address", page.as_str()),
        ("the page's token (the requestState)", &page_token),
        ("the HMAC secret", &hmac_secret),
        ("the webhook URL's token", &url_token),
        ("the private key", &key),
    ] {
        assert!(!logged.to_lowercase().contains(&secret.to_lowercase()), "{what} appeared in the trace log");
    }
    Ok(())
}
