//! What the MCP server refuses, and how: every validation error, a revert decoded by name, role
//! filtering, the spending cap, missing funds, an RPC that is down, a receipt that never comes —
//! each a clear `isError` result, and nothing sent. Plus the resources and concurrent writes.

use std::time::Duration;

use agentpact_mcp::Role;
use agentpact_tests::{
    HarnessError,
    chain::ether,
    mcp::{TestAgent, binary_env, dev_key, test_limits},
    pacts::Market,
    postgres::TestDatabase,
    python::mcp_call,
    rpc_proxy::{Faults, FaultyRpc},
};
use alloy::{hex, primitives::U256, providers::Provider, signers::local::PrivateKeySigner};
use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// No indexer runs in these tests: writes answer without waiting for one.
fn limits() -> agentpact_mcp::WriteLimits {
    agentpact_mcp::WriteLimits { index_wait: Duration::ZERO, ..test_limits() }
}

async fn terms(m: &Market, payment: &str) -> Result<Value> {
    Ok(json!({
        "role": "buyer",
        "specHash": "QmSpec",
        "deadline": m.chain.now().await? + 7 * 24 * 3600,
        "oracles": [m.cast.oracles[0].to_string(), m.cast.oracles[1].to_string()],
        "oracleWeights": [60, 40],
        "threshold": 70,
        "paymentEth": payment,
        "arbitrator": m.cast.arbitrator.to_string(),
    }))
}

/// The agent's transaction count: unchanged means nothing was sent.
async fn nonce(m: &Market, agent: &TestAgent) -> Result<u64> {
    Ok(m.chain.provider.get_transaction_count(agent.address).await?)
}

fn with(mut base: Value, key: &str, value: Value) -> Value {
    base[key] = value;
    base
}

#[tokio::test]
async fn bad_input_is_refused_with_what_to_fix_and_nothing_is_sent() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits()).await?;
    let good = terms(&m, "0.5").await?;
    let deadline = good["deadline"].as_u64().unwrap_or_default();
    let mut no_role = good.clone();
    no_role.as_object_mut().map(|o| o.remove("role"));
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "create-pact",
            with(good.clone(), "oracles", json!(["0x1234", m.cast.oracles[1].to_string()])),
            "oracles[0]",
        ),
        ("create-pact", with(good.clone(), "oracleWeights", json!([50, 40])), "sum to 100"),
        ("create-pact", with(good.clone(), "oracleWeights", json!([100])), "one weight per oracle"),
        ("create-pact", with(good.clone(), "oracleWeights", json!([100, 0])), "sum to 100"),
        ("create-pact", with(good.clone(), "deadline", json!(1_000)), "must be between"),
        ("create-pact", with(good.clone(), "deadline", json!(deadline + 400 * 86_400)), "at most 365 days"),
        (
            "create-pact",
            with(good.clone(), "acceptBy", json!(deadline)),
            "at least an hour before the deadline",
        ),
        ("create-pact", with(good.clone(), "reviewPeriod", json!(2_592_001)), "30 days"),
        ("create-pact", with(good.clone(), "specUri", json!("x".repeat(257))), "257 bytes"),
        (
            "create-pact",
            with(good.clone(), "counterparty", json!(m.cast.arbitrator.to_string())),
            "counterparty",
        ),
        ("create-pact", with(good.clone(), "counterparty", json!("0xZZ")), "counterparty"),
        ("create-pact", with(good.clone(), "paymentEth", json!("lots")), "paymentEth"),
        ("create-pact", with(good.clone(), "paymentEth", json!("0.000000000000000001")), "too small"),
        ("create-pact", with(good.clone(), "threshold", json!(101)), "threshold"),
        ("create-pact", with(good.clone(), "role", json!("boss")), "unknown variant"),
        ("create-pact", with(good.clone(), "paymentEth", json!(0.5)), "invalid type"),
        ("create-pact", with(good.clone(), "extra", json!(1)), "unknown field"),
        ("create-pact", with(good.clone(), "arbitrator", json!(m.cast.buyer.to_string())), "third party"),
        ("create-pact", with(good.clone(), "specHash", json!("x".repeat(600))), "specHash"),
        ("create-pact", no_role, "missing field `role`"),
        ("submit-work", json!({ "pactId": 0, "proofHash": "0x12" }), "proofHash"),
        ("submit-work", json!({ "pactId": 0, "proofHash": format!("0x{}", "0".repeat(64)) }), "zero"),
        (
            "submit-verification",
            json!({ "pactId": 0, "score": 101, "proof": format!("0x{}", "1".repeat(64)) }),
            "0-100",
        ),
        ("accept-pact", json!({ "pactId": -1 }), "pactId must be at least 0, not -1"),
        ("accept-pact", json!({}), "missing field `pactId`"),
        ("register-oracle", json!({ "capabilities": [], "stakeEth": "0.01" }), "capabilities"),
        ("raise-dispute", json!({ "pactId": 0, "arbitrator": "nobody" }), "arbitrator"),
        ("get-reputation", json!({ "address": "0xZZ" }), "address"),
        ("list-pacts", json!({ "status": ["DONE"] }), "status"),
        ("list-pacts", json!({ "first": 1000 }), "at most 100"),
        ("list-pacts", json!({ "cursor": "not-a-cursor" }), "cursor"),
    ];
    let sent_before = nonce(&m, &agent).await?;
    for (tool, args, says) in cases {
        let (code, text) = agent.refused(tool, args.clone()).await?;
        assert_eq!(code, "INVALID_INPUT", "{tool} {args}: {text}");
        assert!(text.contains(says), "{tool} {args}: {text:?} should mention {says:?}");
    }
    assert_eq!(nonce(&m, &agent).await?, sent_before, "a refused call sent a transaction");
    assert_eq!(m.chain.pact.pactCount().call().await?, U256::ZERO);

    let unknown = agent.client.call_tool(rmcp::model::CallToolRequestParams::new("delete-everything")).await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error: {unknown:?}");
    Ok(())
}

/// Every tool, generated from its published schema: no arguments when some are required, then each
/// argument in turn as an object (a type no argument has) and as a 1 MB string.
#[tokio::test]
async fn every_tool_refuses_missing_wrong_typed_and_oversized_arguments() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits()).await?;
    let tools = agent.client.list_all_tools().await.map_err(|e| HarnessError::Process(e.to_string()))?;
    let sent_before = nonce(&m, &agent).await?;
    let mut refusals = 0;
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        if schema["required"].as_array().is_some_and(|r| !r.is_empty()) {
            let (code, text) = agent.refused(&tool.name, json!({})).await?;
            assert_eq!(code, "INVALID_INPUT", "{} without arguments: {text}", tool.name);
            assert!(text.contains("missing field"), "{}: {text}", tool.name);
            refusals += 1;
        }
        for name in schema["properties"].as_object().into_iter().flat_map(|p| p.keys()) {
            for wrong in [json!({ "nested": [1] }), json!("9".repeat(1 << 20))] {
                let (code, text) = agent.refused(&tool.name, json!({ name: wrong })).await?;
                assert_eq!(code, "INVALID_INPUT", "{} with a bad {name}: {text}", tool.name);
                assert!(
                    text.len() < 1_000,
                    "{} {name}: the answer echoes the oversized input: {}",
                    tool.name,
                    &text[..300]
                );
                refusals += 1;
            }
        }
    }
    assert!(refusals > 60, "only {refusals} refusals over {} tools: the schemas were not read", tools.len());
    assert_eq!(nonce(&m, &agent).await?, sent_before, "a refused call sent a transaction");
    Ok(())
}

#[tokio::test]
async fn a_contract_refusal_is_named_and_explained_before_anything_is_sent() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let stranger = TestAgent::start(&m.chain, &db, 6, Role::Full, limits()).await?;
    let id = m.funded(agentpact_contracts::Initiator::Buyer, ether(1)).await?;
    let sent_before = nonce(&m, &stranger).await?;
    let (code, text) = stranger.refused("approve-work", json!({ "pactId": id.to::<u64>() })).await?;
    assert_eq!(code, "CONTRACT_REVERT");
    assert!(
        text.contains("WrongStatus") && text.contains("FUNDED") && text.contains("PENDING_APPROVAL"),
        "{text}"
    );
    let (_, text) = stranger.refused("start-work", json!({ "pactId": id.to::<u64>() })).await?;
    assert!(text.contains("NotSeller"), "{text}");
    let (_, text) = stranger.refused("accept-pact", json!({ "pactId": 99 })).await?;
    assert!(text.contains("PactNotFound"), "{text}");
    let (_, text) = stranger.refused("withdraw", json!({})).await?;
    assert!(text.contains("NothingToWithdraw"), "{text}");
    let reply = stranger.call("get-pact", json!({ "pactId": 99 })).await?;
    assert!(reply.is_error && reply.text.contains("PactNotFound"), "{}", reply.text);
    assert_eq!(nonce(&m, &stranger).await?, sent_before, "a simulated refusal must not be sent");

    // Nothing indexes this chain: get-pact reads the contract and says the index lags.
    let lagging = stranger.ok("get-pact", json!({ "pactId": id.to::<u64>() })).await?;
    assert!(
        lagging.text.contains("is FUNDED on chain") && lagging.text.contains("not caught up"),
        "{}",
        lagging.text
    );
    assert_eq!(lagging.data["onChain"]["status"], "FUNDED");
    Ok(())
}

#[tokio::test]
async fn roles_decide_which_tools_are_listed_and_callable() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let listed = |role| {
        let (m, db) = (&m, &db);
        async move {
            let agent = TestAgent::start(&m.chain, db, 1, role, limits()).await?;
            let tools =
                agent.client.list_all_tools().await.map_err(|e| HarnessError::Process(e.to_string()))?;
            Ok::<_, HarnessError>((agent, tools.into_iter().map(|t| t.name.to_string()).collect::<Vec<_>>()))
        }
    };
    let (_, full) = listed(Role::Full).await?;
    assert_eq!(full, Role::Full.tools(), "a full agent lists every tool of the catalog");
    let (worker, tools) = listed(Role::Worker).await?;
    assert!(
        tools.contains(&"submit-work".to_owned()) && !tools.contains(&"approve-work".to_owned()),
        "{tools:?}"
    );
    let (code, text) = worker.refused("approve-work", json!({ "pactId": 0 })).await?;
    assert_eq!(
        (code.as_str(), text.as_str()),
        ("FORBIDDEN", "The tool approve-work is not available to the worker role.")
    );
    let (_, tools) = listed(Role::Arbitrator).await?;
    assert!(
        tools.contains(&"resolve-dispute".to_owned()) && !tools.contains(&"create-pact".to_owned()),
        "{tools:?}"
    );
    let (_, tools) = listed(Role::Oracle).await?;
    assert!(
        tools.contains(&"submit-verification".to_owned()) && tools.contains(&"get-pact".to_owned()),
        "{tools:?}"
    );
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits()).await?;
    let tools = agent.client.list_all_tools().await.map_err(|e| HarnessError::Process(e.to_string()))?;
    let create =
        tools.iter().find(|t| t.name == "create-pact").map(|t| Value::Object((*t.input_schema).clone()));
    let create = create.unwrap_or_default();
    assert_eq!(
        (&create["properties"]["threshold"]["minimum"], &create["properties"]["threshold"]["maximum"]),
        (&json!(1), &json!(100)),
        "{create}"
    );
    assert!(create["properties"]["paymentEth"]["description"].as_str().is_some_and(|d| d.contains("ETH")));
    Ok(())
}

/// The annotations a client shows its human: what reads is read-only, idempotent and stays here;
/// what moves money or ends a pact (deposits, stakes, payouts, withdrawals) is destructive; the rest
/// writes without destroying. Classified here from the names and the escrow, not from the code.
#[tokio::test]
async fn every_tool_is_annotated_by_what_it_does() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits()).await?;
    let tools = agent.client.list_all_tools().await.map_err(|e| HarnessError::Process(e.to_string()))?;
    let moves_money = [
        "create-pact",
        "accept-pact",
        "sign_contract",
        "register-oracle",
        "approve-work",
        "auto-approve",
        "claim-timeout",
        "resolve-dispute",
        "accept-settlement",
        "withdraw",
        "create-staged-pact",
        "approve-stage",
        "auto-approve-stage",
        "resolve-stage",
        "claim-stage-timeout",
    ];
    let mut classes = std::collections::BTreeMap::new();
    for tool in &tools {
        let name = tool.name.as_ref();
        let a = tool.annotations.clone().unwrap_or_default();
        assert!(a.title.as_deref().is_some_and(|t| t.len() > 3 && !t.contains('-')), "{name}: {a:?}");
        let reads = ["get", "list", "search"].iter().any(|p| name.starts_with(p));
        let destructive = moves_money.contains(&name);
        let hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint);
        let expected = (Some(reads), Some(destructive), Some(reads), Some(!reads));
        assert_eq!(hints, expected, "{name}: (read-only, destructive, idempotent, open world)");
        *classes.entry((reads, destructive)).or_insert(0) += 1;
    }
    // Each tool is held to its class above; the three classes exist (no count to keep by hand).
    assert_eq!(
        classes.into_keys().collect::<Vec<_>>(),
        [(false, false), (false, true), (true, false)],
        "writes, money movers and reads"
    );
    let again = agent.client.list_all_tools().await.map_err(|e| HarnessError::Process(e.to_string()))?;
    let names = |list: &[rmcp::model::Tool]| list.iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    assert_eq!(names(&tools), names(&again), "tools/list keeps one order");
    assert_eq!(names(&tools)[..3], ["create-pact", "accept-pact", "claim-timeout"], "seed 002's order first");
    Ok(())
}

/// No call runs past 30 s: a write whose transaction the node does not mine answers PENDING with
/// the hash at the call's limit, sends nothing twice, and `get-transaction` follows it up until
/// the node mines it.
#[tokio::test]
async fn a_write_the_node_does_not_mine_answers_pending_within_30_s() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    // The receipt wait is longer than the call's limit: the 30 s cap is what answers.
    let patient = agentpact_mcp::WriteLimits { receipt_timeout: Duration::from_secs(120), ..limits() };
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, patient).await?;
    assert_eq!(patient.call_timeout, Duration::from_secs(30));
    let _: Value = m.chain.provider.raw_request("evm_setAutomine".into(), (false,)).await?;
    let started = std::time::Instant::now();
    let reply = agent.call("create-pact", terms(&m, "0.5").await?).await?;
    let took = started.elapsed();
    assert!(reply.is_error, "{}", reply.text);
    assert_eq!(reply.data["error"]["code"], "PENDING", "{}", reply.text);
    assert!(took >= Duration::from_secs(29) && took < Duration::from_secs(32), "answered after {took:?}");
    let tx = reply.data["error"]["txHash"].as_str().unwrap_or_default().to_owned();
    assert!(reply.text.contains(&tx) && reply.text.contains("not mined within 30 s"), "{}", reply.text);
    assert!(reply.text.contains("Do not send it again"), "{}", reply.text);

    let pending = agent.ok("get-transaction", json!({ "txHash": tx })).await?;
    assert_eq!(pending.data["status"], "PENDING", "{}", pending.text);
    assert!(pending.text.contains("do not send it again"), "{}", pending.text);

    let _: Value = m.chain.provider.raw_request("evm_mine".into(), ()).await?;
    let _: Value = m.chain.provider.raw_request("evm_setAutomine".into(), (true,)).await?;
    let mined = agent.ok("get-transaction", json!({ "txHash": tx })).await?;
    assert_eq!(mined.data["status"], "MINED", "{}", mined.text);
    assert!(mined.data["block"].as_u64().is_some(), "{}", mined.data);
    assert_eq!(m.chain.pact.pactCount().call().await?, U256::from(1), "sent once, mined once");
    let pact = agent.ok("get-pact", json!({ "pactId": 0 })).await?;
    assert_eq!(pact.data["onChain"]["status"], "NEGOTIATING", "{}", pact.data);
    Ok(())
}

/// The seeds' flows as prompts: listed with their arguments, made with the human's words, and a
/// missing, unknown or oversized argument refused with what to do.
#[tokio::test]
async fn the_seeds_flows_are_prompts_a_human_fills_in() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits()).await?;
    let failed = |e: rmcp::ServiceError| HarnessError::Process(e.to_string());
    let prompts = agent.client.list_all_prompts().await.map_err(failed)?;
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["request-work", "offer-service", "collect-after-review", "hire-agent"]);
    let hire = &prompts[3];
    let required: Vec<&str> = hire
        .arguments
        .iter()
        .flatten()
        .filter(|a| a.required == Some(true))
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(required, ["capability", "max_price"]);
    let templates = agent.client.list_all_resource_templates().await.map_err(failed)?;
    let uris: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(uris, ["pact://pacts/{id}", "hire://agents/{address}", "hire://conversations/{id}"]);
    for (uri, says) in [
        ("pact://pacts/three", "a pact id is a whole number"),
        ("hire://conversations/conv_nobody", "there is no conversation"),
    ] {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let refused = agent.client.read_resource(params).await.expect_err(uri);
        assert!(refused.to_string().contains(says), "{uri}: {refused}");
        // The address is at fault: invalid params, with the structured error a tool answers.
        let rmcp::ServiceError::McpError(refused) = refused else { panic!("{uri}: not a JSON-RPC error") };
        assert_eq!(refused.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{uri}");
        assert_eq!(
            refused.data.as_ref().map(|d| &d["error"]["code"]),
            Some(&json!("INVALID_INPUT")),
            "{uri}"
        );
    }

    let ask = |name: &str, args: Value| {
        let params =
            GetPromptRequestParams::new(name).with_arguments(args.as_object().cloned().unwrap_or_default());
        agent.client.get_prompt(params)
    };
    // Seed 000: "Find me a logo designer under 10 USDC".
    let made =
        ask("hire-agent", json!({ "capability": "logo-design", "max_price": "10" })).await.map_err(failed)?;
    let text = match made.messages[0].content.as_text() {
        Some(content) => content.text.clone(),
        None => return Err(HarnessError::Process(format!("not text: {:?}", made.messages[0].content))),
    };
    assert!(text.starts_with("Find me an agent for logo-design under 10 USDC."), "{text}");
    for tool in ["search_agents", "get_agent", "send_proposal", "respond_negotiation", "sign_contract"] {
        assert!(text.contains(tool), "the hire flow names {tool}: {text}");
    }
    for (name, args, says) in [
        ("hire-agent", json!({ "capability": "logo-design" }), "needs the argument \"max_price\""),
        ("hire-agent", json!({ "capability": "x", "max_price": "1", "colour": "red" }), "not one it takes"),
        ("request-work", json!({ "task": "x".repeat(501), "payment": "1" }), "at most 500"),
        ("make-coffee", json!({}), "there is no prompt \"make-coffee\""),
    ] {
        let refused = ask(name, args).await.expect_err("refused");
        assert!(refused.to_string().contains(says), "{name}: {refused}");
    }
    Ok(())
}

#[tokio::test]
async fn the_spending_cap_missing_funds_a_dead_rpc_and_a_lost_receipt_each_say_so() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let mut capped = limits();
    capped.max_value = ether(1) / U256::from(10u8);
    let careful = TestAgent::start(&m.chain, &db, 1, Role::Full, capped).await?;
    let (code, text) = careful.refused("create-pact", terms(&m, "0.5").await?).await?;
    assert_eq!(code, "SPENDING_CAP");
    assert!(text.contains("0.55 ETH is above the spending cap of 0.1 ETH"), "{text}");

    let pauper = PrivateKeySigner::random();
    let broke =
        TestAgent::start_with(&m.chain, &db, pauper, m.chain.anvil.endpoint_url(), Role::Full, limits())
            .await?;
    let (code, text) = broke.refused("create-pact", terms(&m, "0.5").await?).await?;
    assert_eq!(code, "INSUFFICIENT_FUNDS", "{text}");
    assert!(text.contains("needs 0.55 ETH") && text.contains("holds 0 ETH"), "{text}");

    let proxy = FaultyRpc::start(m.chain.provider.clone(), Faults::default()).await?;
    let url = proxy.url().parse().map_err(|e| HarnessError::Process(format!("{e}")))?;
    let cut_off = TestAgent::start_with(
        &m.chain,
        &db,
        agentpact_tests::mcp::dev_key(&m.chain, 2)?,
        url,
        Role::Full,
        limits(),
    )
    .await?;
    proxy.stop().await;
    let (code, text) = cut_off.refused("create-pact", terms(&m, "0.5").await?).await?;
    assert_eq!(code, "RPC_UNAVAILABLE", "{text}");
    assert!(text.contains("Nothing was sent"), "{text}");

    let mut impatient = limits();
    impatient.receipt_timeout = Duration::from_secs(1);
    let waiting = TestAgent::start(&m.chain, &db, 7, Role::Full, impatient).await?;
    let _: Value = m.chain.provider.raw_request("evm_setAutomine".into(), (false,)).await?;
    let (code, text) = waiting.refused("create-pact", terms(&m, "0.5").await?).await?;
    let _: Value = m.chain.provider.raw_request("evm_setAutomine".into(), (true,)).await?;
    assert_eq!(code, "PENDING", "{text}");
    assert!(
        text.contains("is pending: not mined within 1 s") && text.contains("Do not send it again"),
        "{text}"
    );
    Ok(())
}

/// `agentpact mcp` started without `HIRE_RELAY_URL`, as an agent's own client starts it (the
/// official Python SDK): negotiating is refused as the server's configuration, naming the variable
/// and what to set it to, not as an unexpected failure.
#[tokio::test]
async fn negotiating_without_a_relay_names_the_setting_to_make() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
    env.push(("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))));
    let worker = dev_key(&m.chain, 2)?.address().to_string();
    let proposal = json!({ "worker_id": worker, "task": "A logo", "budget": "0.01 ETH" });
    let answer = mcp_call(env, "send_proposal", &proposal).await?;
    let text = answer["text"].as_str().unwrap_or_default();
    assert_eq!(answer["isError"], true, "{answer}");
    assert_eq!(answer["structured"]["error"]["code"], "NOT_CONFIGURED", "{answer}");
    assert!(text.contains("HIRE_RELAY_URL") && text.contains("agentpact serve"), "{text}");
    Ok(())
}

#[tokio::test]
async fn resources_and_concurrent_writes_from_one_key() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Seeker, limits()).await?;
    let config = agent.resource("pact://config").await?;
    // Checksummed, as every address an answer or a resource carries (docs/mcp.md §Outputs).
    assert_eq!(config["agentPact"], json!(m.chain.deployment.agent_pact.to_string()));
    assert_eq!(config["agentRegistry"], json!(m.chain.deployment.agent_registry.to_string()));
    assert_eq!((config["role"].as_str(), config["chainId"].as_u64()), (Some("seeker"), Some(31337)));
    for uri in ["pact://abi/agent-pact", "pact://abi/oracle-registry", "pact://abi/agent-registry"] {
        let abi = agent.resource(uri).await?;
        let functions =
            abi.as_array().map_or(0, |items| items.iter().filter(|i| i["type"] == "function").count());
        assert!(functions > 0, "{uri}");
    }
    assert!(
        agent
            .client
            .read_resource(ReadResourceRequestParams::new("pact://nothing".to_owned()))
            .await
            .is_err()
    );

    // Eight writes at once from one key: every one mined, ids 0-7, no nonce collides or skips.
    let terms = terms(&m, "0.01").await?;
    let calls = (0..8).map(|_| agent.ok("create-pact", terms.clone()));
    let replies = futures::future::try_join_all(calls).await?;
    let mut ids: Vec<u64> = replies.iter().filter_map(|r| r.data["pactId"].as_str()?.parse().ok()).collect();
    ids.sort();
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
    Ok(())
}

#[tokio::test]
async fn a_thousand_concurrent_calls_from_one_key_neither_deadlock_nor_collide() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits()).await?;
    let sent_before = nonce(&m, &agent).await?;
    let terms = terms(&m, "0.01").await?;
    let calls = (0..1_000).map(|i| {
        let (agent, terms) = (&agent, terms.clone());
        async move {
            match i % 20 {
                0 => agent.ok("create-pact", terms).await,
                1 => agent
                    .refused("approve-work", json!({ "pactId": 999_999 }))
                    .await
                    .map(|_| Default::default()),
                n if n % 2 == 0 => agent.ok("get-pact-count", json!({})).await,
                _ => agent.ok("get-my-address", json!({})).await,
            }
        }
    });
    let replies =
        tokio::time::timeout(Duration::from_secs(120), futures::future::try_join_all(calls)).await.map_err(
            |_| HarnessError::Process("1,000 calls did not finish within 120 s: a deadlock?".into()),
        )??;
    assert_eq!(replies.len(), 1_000);
    let mut ids: Vec<u64> = replies.iter().filter_map(|r| r.data["pactId"].as_str()?.parse().ok()).collect();
    ids.sort();
    assert_eq!(ids, (0..50).collect::<Vec<_>>(), "50 writes, 50 pacts, none lost or doubled");
    assert_eq!(nonce(&m, &agent).await?, sent_before + 50, "exactly one transaction per write");
    assert_eq!(m.chain.pact.pactCount().call().await?, U256::from(50));
    Ok(())
}

#[tokio::test]
async fn a_receipt_that_names_no_block_is_not_reported_as_indexed() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    // The index has a checkpoint (it caught up once) and then stops following.
    agentpact_tests::index::indexer(&m.chain, db.pool(), agentpact_tests::index::small_ranges())
        .catch_up()
        .await?;
    let faults = Faults { receipts_without_block: true, ..Faults::default() };
    let proxy = FaultyRpc::start(m.chain.provider.clone(), faults).await?;
    let limits = agentpact_mcp::WriteLimits { index_wait: Duration::from_millis(300), ..test_limits() };
    let url = proxy.url().parse().map_err(|e| HarnessError::Process(format!("{e}")))?;
    let key = agentpact_tests::mcp::dev_key(&m.chain, 9)?;
    let agent = TestAgent::start_with(&m.chain, &db, key, url, Role::Full, limits).await?;
    let answer =
        agent.ok("register-oracle", json!({ "capabilities": ["audit"], "stakeEth": "0.01" })).await?;
    // Mined, but the receipt names no block: the answer must not claim the index has it (waiting
    // for "block 0" used to call any index caught up).
    assert!(answer.text.contains("has not caught up"), "{}", answer.text);
    Ok(())
}

/// A call the client cancels after its transaction went out is not half done: the transaction is
/// mined once, the pact reads back, and the wallet's next write goes through (its turn to send was
/// given back). A call whose time runs out before it sent anything answers TIMEOUT, sends nothing.
#[tokio::test]
async fn a_cancelled_call_finishes_what_it_sent_and_one_out_of_time_sends_nothing() -> Result {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, limits()).await?;
    let terms = terms(&m, "0.5").await?;
    let _: Value = m.chain.provider.raw_request("evm_setAutomine".into(), (false,)).await?;
    let params = CallToolRequestParams::new("create-pact")
        .with_arguments(terms.as_object().cloned().unwrap_or_default());
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = agent
        .client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    let pending = || async {
        m.chain.provider.get_transaction_count(agent.address).pending().await.map_err(HarnessError::from)
    };
    let before = nonce(&m, &agent).await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while pending().await? == before {
        assert!(std::time::Instant::now() < deadline, "the transaction never reached the node");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    handle
        .cancel(Some("the human changed their mind".into()))
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    let _: Value = m.chain.provider.raw_request("evm_mine".into(), ()).await?;
    let _: Value = m.chain.provider.raw_request("evm_setAutomine".into(), (true,)).await?;
    assert_eq!(m.chain.pact.pactCount().call().await?, U256::from(1), "what was sent was mined, once");
    let read = agent.ok("get-pact", json!({ "pactId": 0 })).await?;
    assert_eq!(read.data["onChain"]["status"], "NEGOTIATING", "{}", read.data);
    let next = agent.ok("create-pact", terms.clone()).await?;
    assert_eq!(next.data["pactId"], "1", "the next write is not blocked: {}", next.text);

    // Out of time before anything was sent: the node stops answering mid-call.
    let proxy = FaultyRpc::start(m.chain.provider.clone(), Faults::default()).await?;
    let url = proxy.url().parse().map_err(|e| HarnessError::Process(format!("{e}")))?;
    let short = agentpact_mcp::WriteLimits { call_timeout: Duration::from_secs(2), ..limits() };
    let key = agentpact_tests::mcp::dev_key(&m.chain, 2)?;
    let stuck = TestAgent::start_with(&m.chain, &db, key, url, Role::Full, short).await?;
    let sent_before = nonce(&m, &stuck).await?;
    proxy.stall(true);
    let started = std::time::Instant::now();
    let (code, text) = stuck.refused("create-pact", terms).await?;
    assert_eq!(code, "TIMEOUT", "{text}");
    assert!(text.contains("nothing was sent") && started.elapsed() < Duration::from_secs(5), "{text}");
    proxy.stall(false);
    assert_eq!(nonce(&m, &stuck).await?, sent_before, "nothing sent");
    assert_eq!(m.chain.pact.pactCount().call().await?, U256::from(2));
    Ok(())
}

/// Above the confirmation threshold a client that cannot ask its human is refused with nothing
/// sent; at the threshold nothing is asked; above the hard cap the cap refuses first.
#[tokio::test]
async fn a_spend_above_the_threshold_needs_a_human_and_the_cap_stays_above_it() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let careful = agentpact_mcp::WriteLimits { confirm_above: ether(55) / U256::from(100), ..limits() };
    // rmcp's bare client offers no elicitation: it cannot ask a human.
    let agent = TestAgent::start(&m.chain, &db, 1, Role::Full, careful).await?;
    let sent_before = nonce(&m, &agent).await?;
    let (code, text) = agent.refused("create-pact", terms(&m, "0.6").await?).await?;
    assert_eq!(code, "NOT_CONFIRMED", "{text}");
    assert!(text.contains("0.66 ETH") && text.contains("cannot ask its human"), "{text}");
    // 20 + 2 ETH, past the tests' 10 ETH cap.
    let (code, text) = agent.refused("create-pact", terms(&m, "20").await?).await?;
    assert_eq!(code, "SPENDING_CAP", "the cap is checked before anyone is asked: {text}");
    assert_eq!(nonce(&m, &agent).await?, sent_before, "nothing sent");
    // 0.5 payment + 0.05 stake = exactly the threshold: not asked.
    agent.ok("create-pact", terms(&m, "0.5").await?).await?;
    Ok(())
}
