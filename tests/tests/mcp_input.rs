//! The MCP server holds every `tools/call` to the input schema it declares and to the contracts'
//! bounds before anything is read, simulated or sent (issue #31): every case the outside fuzz
//! found, a table of bad inputs generated from every tool's published schema, non-object
//! arguments over the in-memory pipe, stdio and HTTP, and the registries' bounds read back from
//! the deployed contracts. Each refusal is `INVALID_INPUT` (never `INTERNAL`) naming the field, and
//! nothing is sent: the wallet's nonce, the pact count, the registries and the relay's log stay as
//! they were.

use std::time::Duration;

use agentpact_mcp::{PactServer, Role, bounds};
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    mcp::{StdioAgent, TestAgent, binary_env, dev_key, test_limits},
    pacts::Market,
    postgres::TestDatabase,
    python::mcp_call,
};
use alloy::{hex, primitives::U256, providers::Provider};
use rmcp::model::{ClientRequest, CustomRequest, ErrorCode};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// A market, its index database, a relay on it, and a `full` agent (dev account 1) using both.
struct Stage {
    m: Market,
    db: TestDatabase,
    _relay: TestApi,
    agent: TestAgent,
}

impl Stage {
    async fn open() -> Result<Self> {
        let m = Market::open().await?;
        let db = TestDatabase::create().await?;
        let relay = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
        // No indexer runs: writes answer without waiting for one.
        let limits = agentpact_mcp::WriteLimits { index_wait: Duration::ZERO, ..test_limits() };
        let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits).await?;
        agent.use_relay(&relay.base)?;
        Ok(Self { m, db, _relay: relay, agent })
    }

    /// What refusing must leave untouched: the wallet's nonce, the pacts, the agent's registry
    /// records, and the relay's log of its conversations.
    async fn untouched(&self) -> Result<(u64, U256, bool, u64, usize)> {
        let (chain, me) = (&self.m.chain, self.agent.address);
        let listed = self.agent.ok("get_conversations", json!({ "status": "all" })).await?;
        Ok((
            chain.provider.get_transaction_count(me).await?,
            chain.pact.pactCount().call().await?,
            chain.registry.getOracle(me).call().await?.registered,
            chain.agents.getAgent(me).call().await?.registeredAt,
            listed.data["conversations"].as_array().map_or(usize::MAX, Vec::len),
        ))
    }
}

/// Good `create-pact` terms, to spoil one field at a time.
async fn terms(m: &Market) -> Result<Value> {
    Ok(json!({
        "role": "buyer", "specHash": "QmSpec", "deadline": m.chain.now().await? + 7 * 24 * 3600,
        "oracles": [m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 70,
        "paymentEth": "0.5", "arbitrator": m.cast.arbitrator.to_string(),
    }))
}

fn with(mut base: Value, key: &str, value: Value) -> Value {
    base[key] = value;
    base
}

#[tokio::test]
async fn every_case_the_fuzz_found_is_refused_naming_the_field_and_nothing_is_sent() -> Result {
    let s = Stage::open().await?;
    let (m, agent) = (&s.m, &s.agent);
    let me = agent.address.to_string();
    let good = terms(m).await?;
    let profile = |name: &str, capability: &str| {
        json!({ "name": name, "description": "Designs", "endpoint": "https://designer.example/mcp", "wallet": me,
                "capabilities": [{ "name": capability, "price": "1" }] })
    };
    let many =
        |n: usize| -> Value { (0..n).map(|i| json!({ "name": format!("c{i}"), "price": "1" })).collect() };
    let proposal =
        |budget: &str| json!({ "worker_id": m.cast.seller.to_string(), "task": "a logo", "budget": budget });
    let hidden = "send text without control, bidirectional or invisible characters";
    let cases: Vec<(&str, Value, &str)> = vec![
        // NUL into the chain's strings, which stopped the index.
        (
            "create-pact",
            with(good.clone(), "specUri", json!("ipfs://nul\u{0}inside")),
            "specUri holds a NUL character (U+0000) at character 11",
        ),
        (
            "register-oracle",
            json!({ "capabilities": ["ab\u{0}c"], "stakeEth": "0.01" }),
            "capabilities[0] holds a NUL character",
        ),
        (
            "register_agent",
            profile("Designer", "logo\u{0}design"),
            "capabilities[0].name holds a NUL character",
        ),
        (
            "submit_feedback",
            json!({ "contract_id": "0", "rating": 5, "comment": "good\u{0}work" }),
            "comment holds a NUL character",
        ),
        (
            "update_profile",
            json!({ "agent_id": me, "updates": { "name": "Nul\u{0}Bot" } }),
            "updates.name holds a NUL character",
        ),
        // NUL in a read or a lookup, which answered INTERNAL.
        ("list-pacts", json!({ "search": "lo\u{0}go" }), "search holds a NUL character"),
        ("search_agents", json!({ "capability": "logo\u{0}" }), "capability holds a NUL character"),
        ("get_contract", json!({ "contract_id": "conv_\u{0}" }), "contract_id holds a NUL character"),
        (
            "respond_negotiation",
            json!({ "conversation_id": "conv\u{0}", "type": "reject", "message": {} }),
            "conversation_id holds a NUL character",
        ),
        ("sign_contract", json!({ "conversation_id": "conv\u{0}" }), "conversation_id holds a NUL character"),
        // A closed set's unknown member, refused with the members (ConversationFilter::ALL).
        ("get_conversations", json!({ "status": "done" }), r#"status is active, completed, all, not "done""#),
        // Control, bidirectional and invisible characters.
        (
            "create-pact",
            with(good.clone(), "specUri", json!("ipfs://a\u{1b}[31m")),
            "specUri holds a control character (U+001B)",
        ),
        (
            "create-pact",
            with(good.clone(), "specUri", json!("ipfs://bell\u{7}")),
            "specUri holds a control character (U+0007)",
        ),
        (
            "create-pact",
            with(good.clone(), "specUri", json!("ipfs://evil\u{202e}fdp.exe")),
            "specUri holds a bidirectional control (U+202E)",
        ),
        (
            "create-pact",
            with(good.clone(), "specUri", json!("ipfs://zero\u{200b}width")),
            "specUri holds an invisible character (U+200B)",
        ),
        (
            "register_agent",
            profile("Design\u{202e}Bot", "logo-design"),
            "name holds a bidirectional control (U+202E) at character 7",
        ),
        (
            "update_profile",
            json!({ "agent_id": me, "updates": { "name": "Design\u{202e}Bot" } }),
            "updates.name holds a bidirectional control",
        ),
        // The declared schema, held.
        ("list-pacts", json!({ "first": 0 }), "list-pacts: first must be at least 1, not 0"),
        (
            "search_agents",
            json!({ "capability": "logo-design", "limit": 0 }),
            "limit must be at least 1, not 0",
        ),
        (
            "send_proposal",
            with(proposal("1 ETH"), "wait_seconds", json!(26)),
            "wait_seconds must be at most 25, not 26",
        ),
        (
            "respond_negotiation",
            json!({ "conversation_id": "c1", "type": "reject", "message": {}, "wait_seconds": 1000 }),
            "wait_seconds must be at most 25",
        ),
        (
            "register_agent",
            with(profile("Designer", "x"), "capabilities", many(10_000)),
            "capabilities holds 10000 items; it takes 1 to 16",
        ),
        (
            "update_profile",
            json!({ "agent_id": me, "updates": { "capabilities": many(10_000) } }),
            "updates.capabilities holds 10000 items; it takes 1 to 16",
        ),
        (
            "register-oracle",
            json!({ "capabilities": vec!["x"; 17], "stakeEth": "0.01" }),
            "capabilities holds 17 items; it takes 1 to 16",
        ),
        (
            "submit_feedback",
            json!({ "contract_id": "0", "rating": 5, "tags": vec!["t"; 9] }),
            "tags holds 9 items; it takes at most 8",
        ),
        // The contracts' byte bounds, which the schemas' character counts cannot hold alone.
        (
            "register_agent",
            profile(&"é".repeat(33), "x"),
            "name is 66 bytes long; the contract takes at most 64 bytes",
        ),
        (
            "register-oracle",
            json!({ "capabilities": ["é".repeat(33)], "stakeEth": "0.01" }),
            "capabilities[0] is 66 bytes long",
        ),
        (
            "submit_feedback",
            json!({ "contract_id": "0", "rating": 5, "tags": ["é".repeat(17)] }),
            "tags[0] is 34 bytes long",
        ),
        (
            "create-pact",
            with(good.clone(), "specUri", json!(format!("https://{}", "é".repeat(125)))),
            "the spec URI is 258 bytes long",
        ),
        // Links that are not links: the chain would hold them for every reader to open.
        (
            "create-pact",
            with(good.clone(), "specUri", json!("javascript:alert(1)")),
            "specUri must be a link with one of the schemes https://",
        ),
        (
            "create-pact",
            with(good.clone(), "specUri", json!("data:text/html,<script>alert(1)</script>")),
            "specUri must be a link",
        ),
        (
            "register_agent",
            with(profile("Designer", "logo-design"), "metadata_uri", json!("javascript:alert(1)")),
            "metadata_uri must be a link",
        ),
        (
            "update_profile",
            json!({ "agent_id": me, "updates": { "metadata_uri": "file:///etc/passwd" } }),
            "updates.metadata_uri must be a link",
        ),
        // An empty or blank id is no id.
        ("get_contract", json!({ "contract_id": "" }), "contract_id is empty"),
        ("get_contract", json!({ "contract_id": "   " }), "contract_id is blank"),
        ("sign_contract", json!({ "conversation_id": "  " }), "conversation_id is blank"),
        (
            "get_contract",
            json!({ "contract_id": "no such id!" }),
            "contract_id \"no such id!\" is neither a pact id",
        ),
        // Values that mean nothing.
        (
            "create-pact",
            with(good.clone(), "specHash", json!("hello world")),
            "specHash must be a bytes32 hash (0x and 64 hex digits) or an IPFS CID",
        ),
        ("send_proposal", proposal("0"), "budget 0 ETH is too small"),
        (
            "send_proposal",
            proposal("0.000000000000000009 ETH"),
            "budget 0.000000000000000009 ETH is too small",
        ),
        (
            "send_proposal",
            proposal("1000000000000000000000 ETH"),
            "budget 1000000000000000000000 ETH is more than a pact can pay",
        ),
        (
            "send_proposal",
            proposal("0.0000000000000000001 ETH"),
            "budget: 0.0000000000000000001 has 19 decimal places; ETH has 18: round the amount",
        ),
        ("send_proposal", proposal("5 DAI"), "budget: the escrow does not take \"DAI\""),
        ("send_proposal", proposal("five"), "budget: \"five\" is not an amount"),
        (
            "send_proposal",
            with(proposal("1 ETH"), "deadline", json!("2020-01-01T00:00:00Z")),
            "deadline 2020-01-01T00:00:00Z must be from",
        ),
        (
            "send_proposal",
            with(proposal("1 ETH"), "deadline", json!("next week")),
            "deadline must be an ISO 8601 time",
        ),
        ("send_proposal", with(proposal("1 ETH"), "task", json!("  ")), "task is blank"),
    ];
    let before = s.untouched().await?;
    for (tool, args, says) in cases {
        let (code, text) = agent.refused(tool, args.clone()).await?;
        assert_eq!(code, "INVALID_INPUT", "{tool} {args}: {text}");
        assert!(text.contains(says), "{tool}: {text:?} should say {says:?}");
        assert_eq!(text.contains(hidden), says.contains(" holds a"), "{tool}: {text}");
    }

    // A pact that does not exist is said not to exist, as get-pact says it.
    let oracle = m.cast.oracles[0].to_string();
    let (code, text) =
        agent.refused("get-verification", json!({ "pactId": 999_999, "oracle": oracle })).await?;
    let (_, from_get_pact) = agent.refused("get-pact", json!({ "pactId": 999_999 })).await?;
    assert_eq!(code, "CONTRACT_REVERT", "{text}");
    assert!(text.contains("Pact #999999 does not exist"), "{text}");
    assert_eq!(text, from_get_pact);
    assert_eq!(s.untouched().await?, before, "a refused call changed the chain or the relay's log");
    Ok(())
}

/// Links as an agent's own client sends them (the official Python SDK's `Client` in its default
/// mode, spawning the `agentpact mcp` binary): a `javascript:` spec URI or metadata URI is refused
/// before anything is sent, and the chain holds nothing of it.
#[tokio::test]
async fn links_that_are_not_links_are_refused_through_the_python_sdk() -> Result {
    let s = Stage::open().await?;
    let (m, me) = (&s.m, s.agent.address.to_string());
    let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), s.db.url());
    env.push(("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))));
    let profile = json!({ "name": "Designer", "description": "Designs", "endpoint": "https://designer.example/mcp",
        "wallet": me, "capabilities": [{ "name": "logo-design", "price": "1" }], "metadata_uri": "javascript:alert(1)" });
    let cases = [
        ("create-pact", with(terms(m).await?, "specUri", json!("javascript:alert(1)")), "specUri"),
        ("register_agent", profile, "metadata_uri"),
    ];
    let before = s.untouched().await?;
    for (tool, args, field) in cases {
        let answer = mcp_call(env.clone(), tool, &args).await?;
        let text = answer["text"].as_str().unwrap_or_default();
        assert_eq!(answer["isError"], true, "{tool}: {answer}");
        assert!(text.contains(&format!("{field} must be a link")), "{tool}: {text}");
    }
    assert_eq!(s.untouched().await?, before, "a refused link reached the chain");
    Ok(())
}

/// What a schema says a value is: its `$ref` resolved.
fn resolved<'a>(schema: &'a Value, defs: &'a Value) -> &'a Value {
    match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => &defs[name],
        None => schema,
    }
}

fn types_of(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A value of `schema`'s type that is not wrong in itself, to fill a list with.
fn sample(schema: &Value) -> Value {
    match types_of(schema).first().copied() {
        Some("integer" | "number") => schema.get("minimum").cloned().unwrap_or(json!(1)),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("a"),
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// Bad values for a value of `schema` at `path`: (what is wrong, the value, what the refusal must
/// name). Generated from the schema alone: a wrong type, each bound crossed by one, hidden
/// characters in text, and, for objects, the same one level down plus an unknown field and a
/// field name holding NUL.
fn bad_values(schema: &Value, defs: &Value, path: &str) -> Vec<(String, Value, String)> {
    let schema = resolved(schema, defs);
    let types = types_of(schema);
    let mut bad: Vec<(String, Value, String)> = Vec::new();
    let mut add = |what: &str, value: Value, names: String| bad.push((what.to_owned(), value, names));
    let allows = |value: &Value| {
        types.iter().any(|t| match *t {
            "null" => value.is_null(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "string" => value.is_string(),
            "array" => value.is_array(),
            _ => value.is_object(),
        })
    };
    if !types.is_empty() && !path.is_empty() {
        let wrong = [json!(true), json!(7), json!(1.5), json!("x"), json!([]), json!({})]
            .into_iter()
            .find(|v| !allows(v));
        if let Some(wrong) = wrong {
            add("a wrong type", wrong, path.to_owned());
        }
    }
    if schema["oneOf"].as_array().is_some_and(|o| o.iter().all(|b| b.get("const").is_some())) {
        add("an unknown variant", json!("not-a-variant"), path.to_owned());
        add("an unknown variant of another type", json!(7), path.to_owned());
    }
    let whole = types.contains(&"integer");
    if let Some(min) = schema["minimum"].as_f64() {
        add(
            "below its minimum",
            if whole { json!(min as i64 - 1) } else { json!(min - 0.5) },
            path.to_owned(),
        );
    }
    if let Some(max) = schema["maximum"].as_f64() {
        add(
            "above its maximum",
            if whole { json!(max as i64 + 1) } else { json!(max + 0.5) },
            path.to_owned(),
        );
    }
    if types.contains(&"string") {
        if let Some(max) = schema["maxLength"].as_u64() {
            add("too long", json!("a".repeat(max as usize + 1)), path.to_owned());
        }
        if schema["minLength"].as_u64().is_some_and(|min| min > 0) {
            add("too short", json!(""), path.to_owned());
        }
        for hidden in ['\u{0}', '\u{1b}', '\u{202e}', '\u{200b}'] {
            add("a hidden character", json!(format!("a{hidden}b")), path.to_owned());
        }
    }
    if types.contains(&"array") {
        let items = resolved(&schema["items"], defs);
        if let Some(max) = schema["maxItems"].as_u64() {
            add("too many items", Value::Array(vec![sample(items); max as usize + 1]), path.to_owned());
        }
        if schema["minItems"].as_u64().is_some_and(|min| min > 0) {
            add("too few items", json!([]), path.to_owned());
        }
        let at = format!("{}[0]", if path.is_empty() { "arguments" } else { path });
        for (what, value, names) in bad_values(items, defs, &at) {
            add(&format!("an item {what}"), json!([value]), names);
        }
    }
    if types.contains(&"object") {
        for (key, field) in schema["properties"].as_object().into_iter().flatten() {
            for (what, value, names) in bad_values(field, defs, &child(path, key)) {
                add(&what, json!({ key: value }), names);
            }
        }
        add("an unknown field", json!({ "zz_unknown": 1 }), "zz_unknown".into());
        add("a field name holding NUL", json!({ "a\u{0}b": 1 }), "field name".into());
    }
    if types.is_empty() && schema.get("oneOf").is_none() {
        // Any JSON (a negotiation message): its text is held all the same.
        add("a hidden character in any JSON", json!({ "k": "a\u{0}b" }), child(path, "k"));
    }
    bad
}

#[tokio::test]
async fn every_tool_refuses_bad_inputs_generated_from_its_published_schema_and_sends_nothing() -> Result {
    let s = Stage::open().await?;
    let tools = s.agent.client.list_all_tools().await.map_err(process)?;
    assert_eq!(tools.len(), Role::Full.tools().len(), "a full agent lists every tool");
    let before = s.untouched().await?;
    let mut refused = 0;
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        for (what, args, names) in bad_values(&schema, &schema["$defs"], "") {
            let (code, text) = s.agent.refused(&tool.name, args.clone()).await?;
            let context = format!(
                "{} with {what} ({}): {text}",
                tool.name,
                args.to_string().chars().take(120).collect::<String>()
            );
            assert_eq!(code, "INVALID_INPUT", "{context}");
            assert!(text.contains(&names), "{context}: should name {names:?}");
            assert!(text.len() < 1_000, "{context}: too long an answer");
            refused += 1;
        }
        for not_an_object in [json!([1]), json!("x"), json!(7), json!(true)] {
            let (code, message) = raw_call(&s.agent, &tool.name, not_an_object.clone()).await?;
            assert_eq!(code, ErrorCode::INVALID_PARAMS, "{} with {not_an_object}: {message}", tool.name);
            assert!(
                message.starts_with(&format!(
                    "{}: arguments must be a JSON object of the tool's inputs, not ",
                    tool.name
                )),
                "{message}"
            );
            refused += 1;
        }
    }
    assert!(refused > 600, "only {refused} refusals over {} tools: the schemas were not read", tools.len());
    assert_eq!(s.untouched().await?, before, "a refused call changed the chain or the relay's log");
    Ok(())
}

/// Sends `tools/call` with `arguments` as given (the typed client only sends objects); returns the
/// JSON-RPC error's code and message.
async fn raw_call(agent: &TestAgent, tool: &str, arguments: Value) -> Result<(ErrorCode, String)> {
    let params = json!({ "name": tool, "arguments": arguments });
    let request = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
    match agent.client.send_request(request).await {
        Err(rmcp::ServiceError::McpError(e)) => Ok((e.code, e.message.into_owned())),
        other => Err(process(format!("{tool} with {arguments}: not a JSON-RPC error: {other:?}"))),
    }
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_invalid_params_over_stdio_and_http() -> Result {
    let s = Stage::open().await?;
    let say = "arguments must be a JSON object of the tool's inputs";
    let (code, message) = raw_call(&s.agent, "get-pact", json!([1])).await?;
    assert_eq!(
        (code, message.as_str()),
        (ErrorCode::INVALID_PARAMS, format!("get-pact: {say}, not an array").as_str())
    );

    // stdio: the binary an agent runs.
    let key = format!("0x{}", hex::encode(dev_key(&s.m.chain, 1)?.to_bytes()));
    let mut env = binary_env(&s.m.chain, &s.m.chain.anvil.endpoint(), s.db.url());
    env.push(("PRIVATE_KEY", key));
    let mut stdio = StdioAgent::start(&env).await?;
    for (arguments, kind) in
        [(json!(["x"]), "an array"), (json!("x"), "the string \"x\""), (json!(7), "the number 7")]
    {
        let answer = stdio.call("list-pacts", arguments).await?;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(answer["error"]["message"], format!("list-pacts: {say}, not {kind}"), "{answer}");
    }
    let answer = stdio.call("no-such-tool", json!([1])).await?;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    stdio.finish().await?;

    // Streamable HTTP: the same server behind the HTTP assembly.
    let t = agentpact_tests::index::target(&s.m.chain);
    let chain = agentpact_mcp::connect(
        s.m.chain.anvil.endpoint_url(),
        &agentpact_contracts::rpc::RpcLimits::default(),
        t.chain_id,
        t.contracts,
        dev_key(&s.m.chain, 1)?,
        agentpact_read::Reader::new(s.db.pool().clone()),
        test_limits(),
    )
    .await
    .map_err(process)?;
    let router = agentpact_mcp::http::router(PactServer::new(chain, Role::Full), Default::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(process)?;
    let url = format!("http://{}/mcp", listener.local_addr().map_err(process)?);
    let server = tokio::spawn(agentpact_http::connections::serve(
        listener,
        router,
        Default::default(),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request =
            client.post(&url).header("accept", "application/json, text/event-stream").json(&body);
        if let Some(id) = session {
            request = request.header("mcp-session-id", id);
        }
        request.send()
    };
    let opened = post(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "http", "version": "0" } } }),
        None,
    )
    .await
    .map_err(process)?;
    let session = opened.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), session.clone())
        .await
        .map_err(process)?;
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": { "name": "get_contract", "arguments": [] } });
    let body = post(call, session).await.map_err(process)?.text().await.map_err(process)?;
    let answer: Value = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok().filter(|v| v["id"] == 2))
        .ok_or_else(|| process(format!("no answer to the call in {body:?}")))?;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["message"], format!("get_contract: {say}, not an array"), "{answer}");
    server.abort();
    Ok(())
}

#[tokio::test]
async fn the_registries_bounds_the_tools_declare_are_the_contracts_own() -> Result {
    let m = Market::open().await?;
    let (agents, oracles) = (&m.chain.agents, &m.chain.registry);
    let read = [
        (agents.MAX_CAPABILITIES().call().await?, bounds::MAX_AGENT_CAPABILITIES),
        (agents.MAX_NAME().call().await?, bounds::MAX_NAME),
        (agents.MAX_DESCRIPTION().call().await?, bounds::MAX_DESCRIPTION),
        (agents.MAX_URI().call().await?, bounds::MAX_URI),
        (agents.MAX_TAGS().call().await?, bounds::MAX_TAGS),
        (agents.MAX_TAG().call().await?, bounds::MAX_TAG),
        (oracles.MAX_CAPABILITIES().call().await?, bounds::MAX_ORACLE_CAPABILITIES),
        (oracles.MAX_CAPABILITY().call().await?, bounds::MAX_ORACLE_CAPABILITY),
    ];
    for (n, (on_chain, declared)) in read.into_iter().enumerate() {
        assert_eq!(on_chain, U256::from(declared), "bound {n}");
    }
    Ok(())
}
