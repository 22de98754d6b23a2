//! The real `agentpact mcp` binary, over stdio in raw JSON-RPC as an MCP client speaks it, and over
//! streamable HTTP with `--http`. Over stdio:
//! nothing but protocol on stdout, tools that work, and the private key nowhere in what it printed.

use std::process::Stdio;

use agentpact_tests::{
    HarnessError,
    cli::binary,
    mcp::{StdioAgent, binary_env, dev_key},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::hex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

#[tokio::test]
async fn the_stdio_binary_speaks_json_rpc_and_never_prints_the_key() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let key = hex::encode(dev_key(&m.chain, 1)?.to_bytes());
    let d = m.chain.deployment;
    let mut child = tokio::process::Command::new(binary())
        .arg("mcp")
        .env("PRIVATE_KEY", format!("0x{key}"))
        .envs(binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url()))
        .env("INDEX_WAIT_MS", "0")
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(process)?;
    let mut stdin = child.stdin.take().ok_or_else(|| process("no stdin"))?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or_else(|| process("no stdout"))?).lines();
    let mut stderr = child.stderr.take().ok_or_else(|| process("no stderr"))?;
    // Drain stderr as it comes: debug logging fills a pipe buffer long before the test ends.
    let logged = tokio::spawn(async move {
        let mut all = String::new();
        let _ = stderr.read_to_string(&mut all).await;
        all
    });
    let mut printed = Vec::new();

    let terms = json!({
        "role": "buyer", "specHash": "QmStdio", "deadline": m.chain.now().await? + 86_400,
        "oracles": [m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
        "paymentEth": "0.5", "arbitrator": m.cast.arbitrator.to_string(),
    });
    let requests = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "get-my-address", "arguments": {} } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "create-pact", "arguments": terms } }),
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": { "name": "create-pact", "arguments": { "role": "buyer" } } }),
        json!({ "jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": { "uri": "pact://config" } }),
    ];
    let mut answers = std::collections::BTreeMap::new();
    for request in requests {
        stdin.write_all(format!("{request}\n").as_bytes()).await.map_err(process)?;
        let Some(id) = request.get("id").and_then(Value::as_u64) else { continue };
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), stdout.next_line())
            .await
            .map_err(|_| process(format!("no answer to request {id}")))?
            .map_err(process)?
            .ok_or_else(|| process("stdout closed"))?;
        printed.push(line.clone());
        let answer: Value = serde_json::from_str(&line)
            .map_err(|e| process(format!("not JSON-RPC on stdout: {line:?}: {e}")))?;
        assert_eq!((answer["jsonrpc"].as_str(), answer["id"].as_u64()), (Some("2.0"), Some(id)), "{line}");
        answers.insert(id, answer);
    }
    drop(stdin); // the client goes away: the server ends
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .map_err(process)?
        .map_err(process)?;
    while let Some(line) = stdout.next_line().await.map_err(process)? {
        printed.push(line);
    }
    let errors = logged.await.map_err(process)?;
    assert!(status.success(), "exit {status:?}: {errors}");

    assert_eq!(answers[&1]["result"]["serverInfo"]["name"], "agent-pact");
    assert_eq!(
        answers[&2]["result"]["tools"].as_array().map(Vec::len),
        Some(agentpact_mcp::Role::Full.tools().len())
    );
    let me = m.cast.buyer.to_checksum(None);
    assert!(
        answers[&3]["result"]["content"][0]["text"].as_str().is_some_and(|t| t.starts_with(&me)),
        "{}",
        answers[&3]
    );
    assert_eq!(
        answers[&4]["result"]["content"][0]["text"]
            .as_str()
            .map(|t| t.split(" (The index").next().unwrap_or_default()),
        Some("Pact #0 created as BUYER. Deposited: 0.55 ETH (0.5 payment + 0.05 stake). Open for sellers.")
    );
    assert_eq!(answers[&5]["result"]["isError"], true);
    assert!(
        answers[&6]["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(&d.agent_pact.to_checksum(None))),
        "{}",
        answers[&6]
    );

    let everything = format!("{}\n{errors}", printed.join("\n"));
    assert!(!errors.is_empty(), "debug logging printed nothing: the check below would prove nothing");
    assert!(!everything.to_lowercase().contains(&key), "the private key appeared in the output");
    Ok(())
}

#[tokio::test]
async fn the_binary_serves_streamable_http_to_holders_of_its_token_at_a_limited_rate() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let key = format!("0x{}", hex::encode(dev_key(&m.chain, 4)?.to_bytes()));
    let open = refused_start(&key, None).await?;
    assert_eq!(open.status.code(), Some(2), "an open wallet on the network must be refused");
    assert!(String::from_utf8_lossy(&open.stderr).contains("MCP_HTTP_TOKEN"));

    let port = agentpact_tests::cli::free_port()?;
    let mut child =
        http_server(&m, &db, &key, port, ["--rate-limit-per-sec", "1", "--rate-limit-burst", "2"])?;
    let client = reqwest::Client::new();
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "http", "version": "0" } } });
    let post = |token: &'static str| {
        client
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .json(&initialize)
            .send()
    };
    let mut refused = None;
    // Until it listens (a debug build starting on a loaded machine takes a while).
    for _ in 0..1_200 {
        if let Ok(response) = post("wrong-token").await {
            refused = Some(response.status().as_u16());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(refused, Some(401), "a wrong token must be refused");
    let response = post("s3cret-token-0123456789").await.map_err(process)?;
    assert_eq!(response.status().as_u16(), 200);
    let body = response.text().await.map_err(process)?;
    assert!(body.contains("\"agent-pact\""), "initialize over HTTP: {body}");
    // Eight more at once: the burst of 2 is spent and a token comes a second, so however slowly
    // this machine sends them, some must wait.
    let flood = futures::future::join_all((0..8).map(|_| post("s3cret-token-0123456789"))).await;
    let statuses: Vec<u16> = flood.iter().map(|r| r.as_ref().map_or(0, |r| r.status().as_u16())).collect();
    assert!(statuses.iter().all(|s| matches!(s, 200 | 429)), "{statuses:?}");
    let waiting: Vec<_> = flood.iter().flatten().filter(|r| r.status().as_u16() == 429).collect();
    assert!(!waiting.is_empty(), "past the burst of 2, every request was served: {statuses:?}");
    assert!(waiting.iter().all(|r| r.headers().contains_key("retry-after")), "a 429 without Retry-After");
    child.kill().await.map_err(process)?;
    Ok(())
}

#[tokio::test]
async fn a_keystore_unlocks_with_its_password_and_neither_is_ever_printed() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let dir = std::env::temp_dir().join(format!("agentpact-keystore-{}", db.name()));
    std::fs::create_dir_all(&dir).map_err(process)?;
    let key = dev_key(&m.chain, 2)?.to_bytes();
    let password = "correct horse battery staple";
    let (signer, _) = alloy::signers::local::PrivateKeySigner::encrypt_keystore(
        &dir,
        &mut rand08::thread_rng(),
        key,
        password,
        Some("agent.json"),
    )
    .map_err(process)?;
    let run = |given: &str| {
        let mut command = tokio::process::Command::new(binary());
        command
            .args(["mcp", "--keystore"])
            .arg(dir.join("agent.json"))
            .env("KEYSTORE_PASSWORD", given)
            .env_remove("PRIVATE_KEY")
            .envs(binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url()))
            .env("RUST_LOG", "debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    };
    let secrets = [password.to_owned(), hex::encode(key)];

    let wrong = run("tr0ub4dor&3").output().await.map_err(process)?;
    let said =
        format!("{}{}", String::from_utf8_lossy(&wrong.stdout), String::from_utf8_lossy(&wrong.stderr));
    assert_eq!(wrong.status.code(), Some(2), "{said}");
    assert!(said.contains("wrong password"), "{said}");
    assert!(!said.contains("tr0ub4dor"), "the password given appeared in the output");

    let mut child = run(password).spawn().map_err(process)?;
    let mut stdin = child.stdin.take().ok_or_else(|| process("no stdin"))?;
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "ks", "version": "0" } } });
    let me = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "get-my-address", "arguments": {} } });
    let lines = format!(
        "{initialize}\n{}\n{me}\n",
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
    );
    stdin.write_all(lines.as_bytes()).await.map_err(process)?;
    // Stdin closes only once the last answer is out (a fixed 2 s pause before closing it could end
    // before a slow machine had unlocked the keystore, a deliberately costly computation, and answered).
    let mut stdout = BufReader::new(child.stdout.take().ok_or_else(|| process("no stdout"))?).lines();
    let mut stderr = child.stderr.take().ok_or_else(|| process("no stderr"))?;
    // Drained as it comes: debug logging would fill the pipe and stall the server.
    let logged = tokio::spawn(async move {
        let mut all = String::new();
        let _ = stderr.read_to_string(&mut all).await;
        all
    });
    let mut printed = Vec::new();
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Some(line) = stdout.next_line().await.map_err(process)? {
            let answered = serde_json::from_str::<Value>(&line).is_ok_and(|a| a["id"] == 2);
            printed.push(line);
            if answered {
                break;
            }
        }
        drop(stdin);
        while let Some(line) = stdout.next_line().await.map_err(process)? {
            printed.push(line);
        }
        child.wait().await.map_err(process)
    })
    .await
    .map_err(|_| process("no answer to get-my-address, or no exit after stdin closed, within 60 s"))??;
    let said = format!("{}\n{}", printed.join("\n"), logged.await.map_err(process)?);
    assert!(status.success(), "{said}");
    assert!(
        said.contains(&signer.address().to_checksum(None)),
        "get-my-address answered for the keystore's key: {said}"
    );
    for secret in &secrets {
        assert!(!said.to_lowercase().contains(&secret.to_lowercase()), "a secret appeared in the output");
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// `agentpact mcp --http 0.0.0.0:0` with `token` as MCP_HTTP_TOKEN (unset when `None`): a start
/// that must be refused; returns what the process said.
async fn refused_start(
    key: &str,
    token: Option<&str>,
) -> std::result::Result<std::process::Output, HarnessError> {
    let mut command = tokio::process::Command::new(binary());
    command.args(["mcp", "--http", "0.0.0.0:0"]).env("PRIVATE_KEY", key);
    match token {
        Some(t) => command.env("MCP_HTTP_TOKEN", t),
        None => command.env_remove("MCP_HTTP_TOKEN"),
    };
    command.output().await.map_err(process)
}

/// `agentpact mcp --http 127.0.0.1:<port> --role oracle` with token `s3cret-token-0123456789` and `rate`.
fn http_server(
    m: &Market,
    db: &TestDatabase,
    key: &str,
    port: u16,
    rate: [&str; 4],
) -> std::result::Result<tokio::process::Child, HarnessError> {
    tokio::process::Command::new(binary())
        .args(["mcp", "--http", &format!("127.0.0.1:{port}"), "--role", "oracle"])
        .args(rate)
        .env("MCP_HTTP_TOKEN", "s3cret-token-0123456789")
        .env("PRIVATE_KEY", key)
        .envs(binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(process)
}

/// The resident memory of process `pid`, in KiB (Linux).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test]
async fn the_http_server_refuses_empty_tokens_huge_bodies_foreign_origins_and_echoes_little() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let key = format!("0x{}", hex::encode(dev_key(&m.chain, 4)?.to_bytes()));
    let empty = refused_start(&key, Some("")).await?;
    assert_eq!(empty.status.code(), Some(2), "an empty token must not start a server that admits nobody");
    assert!(String::from_utf8_lossy(&empty.stderr).contains("empty"));

    let port = agentpact_tests::cli::free_port()?;
    let mut child =
        http_server(&m, &db, &key, port, ["--rate-limit-per-sec", "0", "--rate-limit-burst", "1"])?;
    let pid = child.id().unwrap_or_default();
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let rpc = |body: Value, session: Option<&str>, origin: Option<&str>| {
        let mut request = client
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("authorization", "Bearer s3cret-token-0123456789")
            .json(&body);
        if let Some(s) = session {
            request = request.header("mcp-session-id", s);
        }
        if let Some(o) = origin {
            request = request.header("origin", o);
        }
        request.send()
    };
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "http", "version": "0" } } });
    let mut ready = None;
    for _ in 0..1_200 {
        if let Ok(response) = rpc(initialize.clone(), None, None).await {
            ready = Some(response);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let ready = ready.ok_or_else(|| process("the HTTP server never answered"))?;
    assert_eq!(ready.status().as_u16(), 200);

    // A web page elsewhere may not drive the wallet; a local inspector may.
    let foreign = rpc(initialize.clone(), None, Some("https://evil.example")).await.map_err(process)?;
    assert_eq!(foreign.status().as_u16(), 403);
    let local = rpc(initialize.clone(), None, Some("http://localhost:6274")).await.map_err(process)?;
    assert_eq!(local.status().as_u16(), 200);

    // A 100 MB body is refused unread (413, or the connection closed before all of it was sent),
    // and the server's memory stays small.
    let huge = vec![b' '; 100 * 1024 * 1024];
    let sent = client
        .post(&url)
        .header("authorization", "Bearer s3cret-token-0123456789")
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await;
    if let Ok(response) = sent {
        assert_eq!(response.status().as_u16(), 413, "a 100 MB body");
    }
    let rss = rss_kib(pid).unwrap_or(u64::MAX);
    assert!(rss < 150 * 1024, "resident memory after a 100 MB body: {rss} KiB");

    // Unknown names are not echoed whole.
    let session = ready
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| process("no mcp-session-id"))?;
    rpc(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), Some(&session), None)
        .await
        .map_err(process)?;
    let long = "x".repeat(500_000);
    for (method, params) in [
        ("tools/call", json!({ "name": long, "arguments": {} })),
        ("resources/read", json!({ "uri": format!("pact://{long}") })),
    ] {
        let answer = rpc(
            json!({ "jsonrpc": "2.0", "id": 2, "method": method, "params": params }),
            Some(&session),
            None,
        )
        .await
        .map_err(process)?
        .text()
        .await
        .map_err(process)?;
        assert!(answer.contains("\"error\""), "{method}: {}", &answer[..answer.len().min(300)]);
        assert!(answer.len() < 2_000, "{method} echoed {} bytes", answer.len());
    }

    // Held connections: the same accept loop as the API, at most 256 from one address.
    let server: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().map_err(process)?;
    let mut held = Vec::new();
    for _ in 0..300 {
        let socket = tokio::net::TcpSocket::new_v4().map_err(process)?;
        socket.bind("127.0.0.3:0".parse().map_err(process)?).map_err(process)?;
        let mut stream = socket.connect(server).await.map_err(process)?;
        let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, b"POST /mcp HTTP/1.1\r\n").await;
        held.push(stream);
    }
    let mut closed = 0;
    for stream in &mut held {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(std::time::Duration::from_millis(20), stream.read(&mut byte)).await;
        if matches!(read, Ok(Ok(0) | Err(_))) {
            closed += 1;
        }
    }
    assert!(closed >= 40, "{closed} of 300 half-sent requests closed at once (256 per address)");
    assert_eq!(
        rpc(initialize.clone(), None, None).await.map_err(process)?.status().as_u16(),
        200,
        "others served"
    );
    drop(held);

    // Sessions are capped (6,000 in 1.8 s once took 257 MB): past 256, 503 with Retry-After;
    // closing one makes room.
    let (mut opened, mut refused) = (Vec::new(), 0);
    for _ in 0..300 {
        let response = rpc(initialize.clone(), None, None).await.map_err(process)?;
        match response.status().as_u16() {
            200 => opened.extend(
                response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned),
            ),
            503 => {
                assert!(response.headers().contains_key("retry-after"));
                refused += 1;
            }
            other => return Err(process(format!("initialize answered {other}"))),
        }
    }
    assert!(refused >= 40 && opened.len() <= 256, "{} opened, {refused} refused", opened.len());
    let rss = rss_kib(pid).unwrap_or(u64::MAX);
    assert!(rss < 150 * 1024, "resident memory with every session open: {rss} KiB");
    let closed = client
        .delete(&url)
        .header("authorization", "Bearer s3cret-token-0123456789")
        .header("mcp-session-id", opened.first().map(String::as_str).unwrap_or_default())
        .send()
        .await
        .map_err(process)?;
    assert!(closed.status().is_success(), "DELETE of a session: {}", closed.status());
    let again = rpc(initialize.clone(), None, None).await.map_err(process)?;
    assert_eq!(again.status().as_u16(), 200, "a closed session makes room");
    child.kill().await.map_err(process)?;
    Ok(())
}

/// Over stdio, what a client of either protocol sends first is answered and the session goes on:
/// an unknown method is a JSON-RPC error, never a closed pipe; `server/discover` names both
/// versions; a 2026-07-28 call needs no handshake; a 2025-11-25 client still starts with
/// `initialize` on a fresh process.
#[tokio::test]
async fn an_unknown_method_first_is_answered_with_an_error_and_either_protocol_goes_on() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
    env.push(("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))));
    let modern = agentpact_tests::mcp_http::meta(&json!({}));

    let mut agent = StdioAgent::spawn(&env).await?;
    let unknown = agent.exchange("no/such-method", json!({ "_meta": modern })).await?;
    assert_eq!(unknown["error"]["code"], -32601, "an unknown method first: {unknown}");
    let discover = agent.exchange("server/discover", json!({ "_meta": modern })).await?;
    let versions = &discover["result"]["supportedVersions"];
    assert!(
        versions
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28")) && v.contains(&json!("2025-11-25"))),
        "server/discover names both protocols: {discover}"
    );
    let call = json!({ "name": "get-pact-count", "arguments": {}, "_meta": modern });
    let count = agent.exchange("tools/call", call).await?;
    assert_eq!(
        count["result"]["structuredContent"]["count"], "0",
        "a 2026-07-28 call with no handshake: {count}"
    );
    assert_eq!(count["result"]["resultType"], "complete", "{count}");

    let mut legacy = StdioAgent::spawn(&env).await?;
    let unknown = legacy.exchange("no/such-method", json!({})).await?;
    assert!(unknown["error"]["code"].is_i64(), "an unknown method before initialize: {unknown}");
    legacy.handshake().await?;
    let count = legacy.call("get-pact-count", json!({})).await?;
    assert_eq!(count["structuredContent"]["count"], "0", "{count}");
    assert!(count.get("resultType").is_none(), "a 2025-11-25 session sees no resultType: {count}");
    let after = legacy.exchange("no/such-method", json!({})).await?;
    assert_eq!(after["error"]["code"], -32601, "an unknown method in the session: {after}");
    Ok(())
}

/// A `tools/call` of get-pact whose message nests `levels` deep in all (its `pactId` is arrays in
/// arrays), carrying `meta` as its params' `_meta` when given.
fn deep_call(id: u64, levels: usize, meta: Option<Value>) -> String {
    let mut pact_id = json!(1);
    for _ in 3..levels {
        pact_id = json!([pact_id]);
    }
    let mut params = json!({ "name": "get-pact", "arguments": { "pactId": pact_id } });
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }).to_string()
}

/// Whether `answer` is the JSON-RPC error `code` to request `id` whose message says `says`.
fn refusal(answer: &Value, id: Value, code: i64, says: &str) -> bool {
    answer["id"] == id
        && answer["error"]["code"] == code
        && answer["error"]["message"].as_str().is_some_and(|m| m.contains(says))
}

/// Every message the server cannot read — one level deeper than the deepest it reads, far past
/// serde_json's own limit, not JSON, over 1 MiB — is answered with a JSON-RPC error that names
/// the limit, over stdio and streamable HTTP, and the session goes on; the deepest it reads is
/// answered by the tool.
#[tokio::test]
async fn every_message_too_deep_too_large_or_broken_is_answered_and_the_session_goes_on() -> Result {
    use agentpact_mcp::frame::{MAX_DEPTH, MAX_MESSAGE_BYTES};
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
    env.push(("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))));
    let deepest = format!("at most {MAX_DEPTH}");
    let largest = format!("more than {MAX_MESSAGE_BYTES} bytes");
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(MAX_MESSAGE_BYTES)
    );

    // Over stdio.
    let mut agent = StdioAgent::start(&env).await?;
    let boundary = agent.raw(&deep_call(100, MAX_DEPTH, None)).await?;
    assert_eq!((&boundary["id"], &boundary["result"]["isError"]), (&json!(100), &json!(true)), "{boundary}");
    let past = agent.raw(&deep_call(101, MAX_DEPTH + 1, None)).await?;
    assert!(refusal(&past, json!(101), -32600, &deepest), "{past}");
    let far = agent.raw(&deep_call(102, 200, None)).await?;
    assert!(refusal(&far, json!(102), -32600, &deepest), "past serde_json's 128 levels: {far}");
    let broken = agent.raw(r#"{"jsonrpc":"2.0","id":103,"method":"#).await?;
    assert!(refusal(&broken, Value::Null, -32700, "not JSON"), "{broken}");
    let large = agent.raw(&huge).await?;
    assert!(refusal(&large, Value::Null, -32600, &largest), "{large}");
    let pong = agent.exchange("ping", json!({})).await?;
    assert!(pong.get("result").is_some(), "the session goes on: {pong}");
    assert_eq!(agent.ok("get-pact-count", json!({})).await?["count"], "0");

    // Over streamable HTTP (MCP 2026-07-28: each request stands alone).
    let (_server, at) = agentpact_tests::mcp_http::serve(&env).await?;
    let client = agentpact_tests::mcp_http::ModernClient::new(&format!("http://{at}/mcp"), json!({}))?;
    let meta = || Some(agentpact_tests::mcp_http::meta(&json!({})));
    let (status, boundary) = client.post_raw("get-pact", deep_call(200, MAX_DEPTH, meta())).await?;
    let answered = boundary.iter().find(|a| a["id"] == 200);
    assert!(
        status.is_success() && answered.is_some_and(|a| a["result"]["isError"] == true),
        "{status} {boundary:?}"
    );
    for (body, status_wanted, id, code, says) in [
        (deep_call(201, MAX_DEPTH + 1, meta()), 400, json!(201), -32600, deepest.as_str()),
        (deep_call(202, 200, meta()), 400, json!(202), -32600, deepest.as_str()),
        (r#"{"jsonrpc":"2.0","id":203,"#.to_owned(), 400, Value::Null, -32700, "not JSON"),
        (huge.clone(), 413, Value::Null, -32600, largest.as_str()),
    ] {
        let (status, answers) = client.post_raw("get-pact", body).await?;
        assert_eq!(status.as_u16(), status_wanted, "{answers:?}");
        assert!(answers.first().is_some_and(|a| refusal(a, id.clone(), code, says)), "{answers:?}");
    }
    let count = client.call("get-pact-count", json!({})).await?;
    assert_eq!(count["structuredContent"]["count"], "0", "the server goes on: {count}");
    Ok(())
}

/// One floor for every token: `MCP_HTTP_TOKEN` and `OPERATOR_TOKEN` shorter than 16 characters
/// refuse to start, saying what to do. On loopback without a token the server makes one and
/// prints it: a local process without it is refused (401), with it served; `--no-token` is the
/// operator's explicit way to admit every local process, and is refused beyond loopback.
#[tokio::test]
async fn tokens_have_one_floor_and_loopback_gets_a_printed_token_unless_turned_off() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let key = format!("0x{}", hex::encode(dev_key(&m.chain, 4)?.to_bytes()));
    let short = refused_start(&key, Some("a")).await?;
    let said = String::from_utf8_lossy(&short.stderr);
    assert_eq!(short.status.code(), Some(2), "{said}");
    assert!(said.contains("MCP_HTTP_TOKEN has 1 characters") && said.contains("openssl rand"), "{said}");
    let operator = tokio::process::Command::new(binary())
        .arg("serve")
        .env("DATABASE_URL", db.url())
        .env("API_ADDR", "127.0.0.1:0")
        .env("OPERATOR_TOKEN", "fifteen-chars-x")
        .output()
        .await
        .map_err(process)?;
    let said = String::from_utf8_lossy(&operator.stderr);
    assert!(!operator.status.success(), "{said}");
    assert!(said.contains("OPERATOR_TOKEN has 15 characters, fewer than the 16"), "{said}");
    let open = tokio::process::Command::new(binary())
        .args(["mcp", "--http", "0.0.0.0:0", "--no-token"])
        .env("PRIVATE_KEY", &key)
        .env_remove("MCP_HTTP_TOKEN")
        .output()
        .await
        .map_err(process)?;
    assert!(!open.status.success(), "--no-token beyond loopback must be refused");

    let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
    env.push(("PRIVATE_KEY", key));
    let (_made, at, token) = agentpact_tests::mcp_http::serve_with_made_token(&env).await?;
    assert!(token.len() >= agentpact_http::bearer::MIN_TOKEN_CHARS, "{token}");
    let url = format!("http://{at}/mcp");
    let stranger = agentpact_tests::mcp_http::ModernClient::new(&url, json!({}))?;
    let refused = stranger.call("get-my-address", json!({})).await.err().map(|e| e.to_string());
    assert!(refused.as_deref().is_some_and(|e| e.contains("401")), "{refused:?}");
    let holder = agentpact_tests::mcp_http::ModernClient::new(&url, json!({}))?.with_token(&token);
    let me = holder.call("get-my-address", json!({})).await?;
    assert_eq!(me["isError"], false, "{me}");

    let (_open, at) = agentpact_tests::mcp_http::serve(&env).await?;
    let anyone = agentpact_tests::mcp_http::ModernClient::new(&format!("http://{at}/mcp"), json!({}))?;
    assert_eq!(anyone.call("get-my-address", json!({})).await?["isError"], false, "--no-token admits anyone");
    Ok(())
}

/// A session that subscribed while the index could not be read (its tables missing, as while
/// `agentpact index` migrates a fresh database) is told once the index is back, and hears every
/// change after.
#[tokio::test]
async fn a_session_that_subscribed_while_the_index_was_unreadable_is_told_once_it_is_back() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let hide = |from: &str, to: &str| format!("ALTER TABLE {from} RENAME TO {to}");
    sqlx::query(sqlx::AssertSqlSafe(hide("pacts", "pacts_migrating")))
        .execute(db.pool())
        .await
        .map_err(process)?;
    let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
    env.push(("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))));
    let mut agent = StdioAgent::start(&env).await?;
    let subscribed = agent.exchange("resources/subscribe", json!({ "uri": "pact://pacts/0" })).await?;
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    let limit = std::time::Duration::from_secs(60);
    agent.until_logged("cannot follow the index's changes yet", limit).await?;

    sqlx::query(sqlx::AssertSqlSafe(hide("pacts_migrating", "pacts")))
        .execute(db.pool())
        .await
        .map_err(process)?;
    let _indexer = agentpact_tests::index::follow(&m.chain, db.pool());
    agentpact_tests::index::caught_up(&m.chain, db.pool()).await?;
    let terms = json!({
        "role": "buyer", "specHash": "QmBack", "deadline": m.chain.now().await? + 86_400,
        "oracles": [m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
        "paymentEth": "0.1", "arbitrator": m.cast.arbitrator.to_string(),
    });
    agent.ok("create-pact", terms.clone()).await?;
    let told = agent.notification("notifications/resources/updated", limit).await?;
    assert_eq!(told["params"]["uri"], "pact://pacts/0", "{told}");

    // Followed from here on: a subscription made now hears of the next change.
    agent.exchange("resources/subscribe", json!({ "uri": "pact://pacts/1" })).await?;
    agent.ok("create-pact", terms).await?;
    loop {
        let told = agent.notification("notifications/resources/updated", limit).await?;
        if told["params"]["uri"] == "pact://pacts/1" {
            break;
        }
    }
    Ok(())
}
