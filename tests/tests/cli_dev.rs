//! `agentpact dev` as a newcomer runs it: a process that brings the whole stack up in a fresh
//! checkout with nothing configured, serves the demo pacts its banner lists, scores its market
//! history's honest veteran and newcomer above the farm as the banner says, answers README's
//! GraphQL examples, takes a new pact from MCP agents (the real stdio binary) to COMPLETED while its
//! webhooks tell the seller, and after Ctrl-C stops quietly, leaves nothing running and nothing new
//! in the checkout.

use std::collections::BTreeSet;

use agentpact_contracts::PactStatus;
use agentpact_tests::{
    HarnessError, anvil,
    api::{Subscription, TestApi},
    dev::DevStack,
    docs::{self, code_blocks, section},
    mcp::StdioAgent,
    webhooks::Receiver,
};
use alloy::{hex, signers::local::PrivateKeySigner};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// The port of an `http://host:port/…` URL.
fn port_of(url: &str) -> Option<u16> {
    url.split("://").nth(1)?.split('/').next()?.rsplit(':').next()?.parse().ok()
}

/// The demo pacts the banner lists: (id, status, currency symbol), from its lines
/// `  ETH: 0 NEGOTIATING, 1 FUNDED, …`.
fn demo_in_banner(printed: &[String]) -> BTreeSet<(u64, String, String)> {
    let mut pacts = BTreeSet::new();
    for line in printed.iter().skip_while(|line| !line.starts_with("Demo:")).skip(1) {
        let Some((symbol, listed)) = line.strip_prefix("  ").and_then(|line| line.split_once(": ")) else {
            break;
        };
        for pact in listed.split(", ") {
            if let Some((id, status)) = pact.split_once(' ')
                && let Ok(id) = id.parse()
            {
                pacts.insert((id, status.to_owned(), symbol.to_owned()));
            }
        }
    }
    pacts
}

/// The market history's agents the banner scores: who → (address, score), from its lines
/// `  veteran  0x… 4.16  …` under `Reputation (…`.
fn market_in_banner(printed: &[String]) -> std::collections::BTreeMap<String, (String, f64)> {
    printed
        .iter()
        .skip_while(|line| !line.starts_with("Reputation ("))
        .skip(2)
        .map_while(|line| {
            let mut words = line.strip_prefix("  ")?.split_whitespace();
            let (who, address, score) = (words.next()?, words.next()?, words.next()?.parse().ok()?);
            address.starts_with("0x").then(|| (who.to_owned(), (address.to_owned(), score)))
        })
        .collect()
}

/// The pacts of the market history, from the banner's `Reputation (a market of N pacts, …`.
fn market_pacts_in_banner(printed: &[String]) -> Option<u64> {
    let line = printed.iter().find_map(|line| line.strip_prefix("Reputation (a market of "))?;
    line.split_whitespace().next()?.parse().ok()
}

/// Where `value` says nothing: null, zero, an empty string or list (a boolean says something
/// either way), by path.
fn empty_fields(value: &Value, path: &str) -> Vec<String> {
    match value {
        Value::Null => vec![path.to_owned()],
        Value::Number(n) if n.as_f64() == Some(0.0) => vec![path.to_owned()],
        Value::String(s) if s.is_empty() || s == "0" => vec![path.to_owned()],
        Value::Array(items) if items.is_empty() => vec![path.to_owned()],
        Value::Array(items) => items
            .iter()
            .enumerate()
            .flat_map(|(n, item)| empty_fields(item, &format!("{path}[{n}]")))
            .collect(),
        Value::Object(fields) => {
            fields.iter().flat_map(|(name, field)| empty_fields(field, &format!("{path}.{name}"))).collect()
        }
        _ => Vec::new(),
    }
}

/// Runs README's GraphQL examples against `api`: each query must answer without an error and
/// with no empty field; each subscription is returned started, for the caller to make it fire.
async fn readme_examples(api: &TestApi) -> Result<Vec<Subscription>> {
    let readme = docs::read("README.md")?;
    let examples = section(&readme, "## GraphQL examples")?;
    let mut subscriptions = Vec::new();
    for block in code_blocks(&examples, "graphql") {
        for operation in block.split("\n\n").filter(|o| !o.trim().is_empty()) {
            let code = operation.lines().find(|line| !line.starts_with('#')).unwrap_or_default();
            if code.starts_with("subscription") {
                subscriptions.push(api.subscribe(operation, json!({})).await?);
                continue;
            }
            let answer = api.post(operation, json!({})).await?;
            assert!(answer.get("errors").is_none(), "README's example {operation}\nanswers {answer}");
            let empty = empty_fields(&answer["data"], "data");
            assert!(empty.is_empty(), "README's example {operation}\nanswers empty {empty:?}: {answer}");
        }
    }
    assert!(!subscriptions.is_empty(), "README's GraphQL examples include a subscription");
    Ok(subscriptions)
}

#[tokio::test]
async fn the_dev_stack_comes_up_takes_a_pact_to_completed_and_stops_cleanly() -> Result {
    let dev = DevStack::start().await?;
    assert!(
        dev.printed[0].starts_with("Dashboard: http://127.0.0.1:"),
        "the dashboard's URL comes first: {:?}",
        dev.printed
    );
    let (graphql, rpc, database) = (dev.graphql.clone(), dev.rpc.clone(), dev.database.clone());
    let (dir, api_port) = (dev.deployments.clone(), dev.api_port);
    let client = reqwest::Client::new();
    let query = |q: &'static str| {
        let (client, graphql) = (client.clone(), graphql.clone());
        async move {
            let response = client.post(graphql).json(&json!({ "query": q })).send().await.map_err(process)?;
            let body: Value = response.json().await.map_err(process)?;
            Ok::<_, HarnessError>(body["data"].clone())
        }
    };
    // The banner's demo pacts are the pacts the index holds, each in the status and currency named.
    let banner = demo_in_banner(&dev.printed);
    let pacts = query("{ pacts(first: 100) { edges { node { id status currency { symbol } } } } }").await?;
    let indexed: BTreeSet<(u64, String, String)> = pacts["pacts"]["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|edge| {
            let node = &edge["node"];
            let id = node["id"].as_str()?.parse().ok()?;
            Some((id, node["status"].as_str()?.to_owned(), node["currency"]["symbol"].as_str()?.to_owned()))
        })
        .collect();
    // Then the market history's pacts, each completed in ETH, as many as the banner says.
    let market_pacts = market_pacts_in_banner(&dev.printed).unwrap_or_default();
    let first = banner.len() as u64;
    let market_made = (first..first + market_pacts).map(|id| (id, "COMPLETED".to_owned(), "ETH".to_owned()));
    let made: BTreeSet<_> = banner.iter().cloned().chain(market_made).collect();
    assert!(market_pacts > 0, "no market history in the banner: {:?}", dev.printed);
    assert_eq!(made, indexed, "the banner's demo and market pacts against the index: {:?}", dev.printed);
    // The market history: the honest veteran and newcomer above the farm, the farm's puppets
    // near a stranger, each score the banner prints the one the API answers.
    let market = market_in_banner(&dev.printed);
    let score = |who: &str| market.get(who).map(|(_, score)| *score).unwrap_or_default();
    assert_eq!(market.len(), 4, "veteran, newcomer, farm and puppet in the banner: {:?}", dev.printed);
    for honest in ["veteran", "newcomer"] {
        assert!(score(honest) >= score("farm") + 0.5, "{honest} against the farm: {market:?}");
    }
    assert!(score("puppet") < score("farm") && score("puppet") <= 3.2, "the farm's puppets: {market:?}");
    for (who, (address, printed)) in &market {
        let answer = client
            .post(&graphql)
            .json(&json!({ "query": "query($a: Address!) { reputation(address: $a) { score { value } } }",
                           "variables": { "a": address } }))
            .send()
            .await
            .map_err(process)?
            .json::<Value>()
            .await
            .map_err(process)?;
        assert_eq!(
            answer["data"]["reputation"]["score"]["value"].as_f64(),
            Some(*printed),
            "{who}: {answer}"
        );
    }
    let api = TestApi::at(format!("http://127.0.0.1:{}", dev.api_port));
    let mut subscriptions = readme_examples(&api).await?;

    let stats = query("{ stats { byStatus { status count } } }").await?;
    for s in PactStatus::ALL {
        let row =
            stats["stats"]["byStatus"].as_array().and_then(|l| l.iter().find(|r| r["status"] == s.name()));
        assert!(row.is_some_and(|r| r["count"].as_u64() >= Some(1)), "no demo pact is {s}: {stats}");
    }
    // The demo runs every status in each currency: ETH 0.1 and USDC 5 completed, once each; the
    // market history (cli/src/dev/market.rs) completes 0.403 ETH more: 6 × 0.01 (the clients'
    // jobs for the anchors) + 12 × 0.02 (the veteran's) + 18 × 0.001 (the newcomer's) + 3 × 0.01
    // (the farm's honest jobs) + 5 × 0.011 (its puppets').
    let volumes = query("{ stats { volumes { currency { symbol decimals } completedFormatted } } }").await?;
    assert_eq!(
        volumes["stats"]["volumes"],
        json!([
            { "currency": { "symbol": "ETH", "decimals": 18 }, "completedFormatted": "0.503" },
            { "currency": { "symbol": "USDC", "decimals": 6 }, "completedFormatted": "5" },
        ]),
        "{volumes}"
    );
    let found = query(
        r#"{ searchAgents(capability: "logo-design") { edges { node { name capabilities { priceFormatted currency { symbol } } } } } }"#,
    )
    .await?;
    let designer = &found["searchAgents"]["edges"][0]["node"];
    assert_eq!(designer["name"], "DesignBot Pro", "{found}");
    assert_eq!(
        designer["capabilities"][0],
        json!({ "priceFormatted": "5", "currency": { "symbol": "USDC" } })
    );

    // A new pact through the real MCP binary: buyer, seller and both oracles, each its own process.
    let node = anvil::spawn(31_337)?; // only for anvil's dev keys, the same on every anvil
    let key =
        |n: usize| format!("0x{}", hex::encode(PrivateKeySigner::from(node.keys()[n].clone()).to_bytes()));
    let address = |n: usize| node.addresses()[n].to_string();
    let agent = |n: usize| {
        let env = vec![
            ("PRIVATE_KEY", key(n)),
            ("RPC_URL", rpc.clone()),
            ("CHAIN_ID", "31337".to_owned()),
            ("DATABASE_URL", database.clone()),
            ("DEPLOYMENTS_DIR", dir.display().to_string()),
            ("WEBHOOK_ALLOW_TARGETS", "127.0.0.1/32".to_owned()),
        ];
        async move { StdioAgent::start(&env).await }
    };
    let (mut buyer, mut seller) = (agent(1).await?, agent(2).await?);
    let (mut oracle_a, mut oracle_b) = (agent(4).await?, agent(5).await?);
    let deadline =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_err(process)?.as_secs()
            + 86_400;
    let created = buyer
        .ok(
            "create-pact",
            json!({
                "role": "buyer", "specHash": "QmDevStackTest", "deadline": deadline,
                "oracles": [address(4), address(5)], "oracleWeights": [60, 40], "threshold": 70,
                "paymentEth": "0.2", "arbitrator": address(3),
            }),
        )
        .await?;
    let id: u64 = created["pactId"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| process(format!("{created}")))?;
    // README's subscription (a change to a pact of the dev buyer) hears of it.
    for subscription in &mut subscriptions {
        let change = subscription.next_data().await?;
        let empty = empty_fields(&change, "data");
        assert!(empty.is_empty(), "README's subscription answers empty {empty:?}: {change}");
        assert_eq!(change["pactUpdated"]["id"], id.to_string().as_str(), "{change}");
    }
    // The seller sleeps between jobs: the stack's push tells it, signed by dev account 9.
    let receiver = Receiver::start(None).await?;
    let subscribed =
        seller.ok("subscribe_webhook", json!({ "url": receiver.url(), "pactIds": [id] })).await?;
    assert_eq!(subscribed["mode"], "instant", "{subscribed}");
    seller.ok("accept-pact", json!({ "pactId": id })).await?;
    seller.ok("start-work", json!({ "pactId": id })).await?;
    seller.ok("submit-work", json!({ "pactId": id, "proofHash": format!("0x{}", "ab".repeat(32)) })).await?;
    let proof = format!("0x{}", "cd".repeat(32));
    oracle_a.ok("submit-verification", json!({ "pactId": id, "score": 90, "proof": proof })).await?;
    oracle_b.ok("submit-verification", json!({ "pactId": id, "score": 80, "proof": proof })).await?;
    oracle_a.ok("finalize-verification", json!({ "pactId": id })).await?;
    buyer.ok("approve-work", json!({ "pactId": id })).await?;
    let seen = client
        .post(&graphql)
        .json(&json!({ "query": "query($id: BigInt!) { pact(id: $id) { status outcome } }", "variables": { "id": id.to_string() } }))
        .send()
        .await
        .map_err(process)?
        .json::<Value>()
        .await
        .map_err(process)?;
    assert_eq!(seen["data"]["pact"], json!({ "status": "COMPLETED", "outcome": "approved" }), "{seen}");
    let told = receiver
        .until("the approval, by webhook", |r| r.iter().any(|r| r.body["event"] == "WorkApproved"))
        .await?;
    assert!(told.iter().all(|r| r.signature_ok), "signed by the key the tests know: {told:?}");
    assert!(told.iter().all(|r| r.body["pactId"] == id.to_string().as_str()), "{told:?}");
    drop((buyer, seller, oracle_a, oracle_b));

    // Ctrl-C: everything the stack started stops, quietly, and the checkout holds nothing new.
    let new = dev.new_in_checkout()?;
    assert!(dev.deployments.join("31337.json").is_file(), "no deployments file in {:?}", dev.deployments);
    assert_eq!(new, "", "agentpact dev left new files in a fresh checkout (git status)");
    dev.stop().await?;
    for (what, port) in
        [("anvil", port_of(&rpc)), ("Postgres", port_of(&database)), ("the API", Some(api_port))]
    {
        let port = port.ok_or_else(|| process(format!("no port for {what}")))?;
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "{what} still listens on {port} after Ctrl-C"
        );
    }
    Ok(())
}
