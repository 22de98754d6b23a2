//! The agent market end to end (issue #9, seed 000): agents register through their MCP servers,
//! seekers search them by capability, price and reputation — through MCP and GraphQL, over a real
//! anvil, indexer and Postgres — and feedback on finished pacts moves reputation as computed by hand.

use agentpact_contracts::Initiator;
use agentpact_mcp::Role;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::{ether, send},
    mcp::{TestAgent, test_limits},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::primitives::{Address, U256};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// A market with its index followed in the background and a GraphQL API over it.
struct Stage {
    m: Market,
    db: TestDatabase,
    api: TestApi,
    _indexer: tokio::task::JoinHandle<()>,
}

impl Stage {
    /// The market, its index ranking reputation from one seed, the cast's buyer: the market's
    /// anchor whose trust reaches the agents it dealt with (docs/api.md §Reputation).
    async fn open() -> Result<Self> {
        let m = Market::open().await?;
        let (db, indexer) = agentpact_tests::index::followed_ranking(&m.chain, vec![m.cast.buyer]).await?;
        let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
        Ok(Self { m, db, api, _indexer: indexer })
    }

    /// Waits until the index has the chain's latest block and has ranked it: the scores read
    /// next are those of everything done so far.
    async fn synced(&self) -> Result {
        agentpact_tests::index::ranked_up(&self.m.chain, self.db.pool()).await
    }

    /// Dev account `n` as an agent in `role`.
    async fn agent(&self, n: usize, role: Role) -> Result<TestAgent> {
        TestAgent::start(&self.m.chain, &self.db, n, role, test_limits()).await
    }

    /// Registers dev account `n` through its own worker server, offering `offers` as (capability,
    /// price in USDC, the market's default currency).
    async fn register(&self, n: usize, name: &str, offers: &[(&str, &str)]) -> Result<TestAgent> {
        let agent = self.agent(n, Role::Worker).await?;
        let capabilities: Vec<Value> = offers
            .iter()
            .map(|(cap, price)| json!({ "name": cap, "description": format!("{cap} by {name}"), "price": price }))
            .collect();
        agent
            .ok(
                "register_agent",
                json!({
                    "name": name, "description": format!("{name} at your service"), "capabilities": capabilities,
                    "endpoint": format!("https://agent{n}.example/mcp"), "wallet": agent.address.to_string(),
                }),
            )
            .await?;
        Ok(agent)
    }
}

fn ids(reply: &Value) -> Vec<Address> {
    reply["agents"].as_array().into_iter().flatten().filter_map(|a| a["id"].as_str()?.parse().ok()).collect()
}

/// A seeker finds the oracles a pact must name: the registry's active ones, with their stake and
/// capabilities, from the index; an oracle that deregistered is no longer offered.
#[tokio::test]
async fn a_seeker_finds_the_active_oracles_a_pact_needs() -> Result {
    let s = Stage::open().await?;
    let (kept, left) = (s.m.cast.oracles[0], s.m.cast.oracles[1]);
    send(s.m.chain.registry.deregister().from(left)).await?;
    s.synced().await?;
    let seeker = s.agent(1, Role::Seeker).await?;
    let found = |reply: &Value| -> Vec<Address> {
        let oracles = reply["oracles"].as_array().into_iter().flatten();
        oracles.filter_map(|o| o["address"].as_str()?.parse().ok()).collect()
    };
    let all = seeker.ok("search_oracles", json!({})).await?.data;
    assert_eq!(found(&all), [kept], "{all}");
    let stake = alloy::primitives::utils::format_ether(s.m.chain.options.min_oracle_stake);
    assert_eq!(all["oracles"][0]["stakeEth"], stake.trim_end_matches('0').trim_end_matches('.'), "{all}");
    assert_eq!(all["oracles"][0]["capabilities"], json!(["code-review", "testing"]), "{all}");
    assert_eq!(all["oracles"][0]["asOracle"]["pacts"], 0, "{all}");
    let testing = seeker.ok("search_oracles", json!({ "capability": "testing" })).await?.data;
    assert_eq!(found(&testing), [kept], "{testing}");
    let none = seeker.ok("search_oracles", json!({ "capability": "logo-design" })).await?.data;
    assert!(found(&none).is_empty(), "{none}");
    Ok(())
}

#[tokio::test]
async fn find_me_a_logo_designer_under_10() -> Result {
    let s = Stage::open().await?;
    let a = &s.m.chain.accounts;
    let design_bot = s.register(2, "DesignBot Pro", &[("logo-design", "5"), ("branding", "20")]).await?;
    s.register(7, "PixelSmith", &[("Logo-Design", "8")]).await?;
    s.register(8, "Budget Logos", &[("logo-design", "9.5")]).await?;
    s.register(9, "Premium Brand", &[("logo-design", "12")]).await?;
    s.register(6, "Polyglot", &[("translation", "3")]).await?;
    let sleepy = s.register(3, "Sleepy Logos", &[("logo-design", "4")]).await?;
    sleepy
        .ok(
            "update_profile",
            json!({ "agent_id": sleepy.address.to_string(), "updates": { "active": false } }),
        )
        .await?;

    // DesignBot Pro (the cast's seller) earns its reputation: a 1 ETH pact (at least the 0.0004 ETH
    // floor: one whole job, n = 1) approved after oracle scores 90/80 (final 86: credit 0.86), and
    // a four-star rating from the buyer on that paid pact (vote (4 - 1) / 4 = 0.75). The pair
    // buyer → seller: e = min(1, log2(1 + 1) / 2) = 0.5, f = 0.5, W = 1, C = 0.5 × 0.86 + 0.5 × 0.75
    // = 0.805. The buyer is the ranking's seed; its trust as a rater of the seller counts the walks
    // that never touch the seller: those that stop at the buyer, π¬S(B) = α = 0.3. The trust graph
    // is B → S (C 0.805), S → B (the buyer's approval, 0.5 × 1), S → each oracle (0.5 × 0.96 and
    // 0.5 × 0.94); π(B) = 0.3 + 0.7 × 0.7 × (0.5 / 1.45) × π(B) = 0.361, π(S) = 0.7 × π(B) = 0.253,
    // π(O) = 0.059 and 0.057: B and S first hold 80 % of Σπ = 0.730, so τ = π(S) = 0.253 and
    // t = min(1, 0.3 / 0.253) = 1. Score: 5 × (0.805 + 3) / (1 + 5) = 3.17. Everyone else has no
    // trusted history: 3.00. (A five-star rating would give 5 × (0.93 + 3) / 6 = 3.275, on the
    // rounding's edge.)
    let pact = s.m.completed(Initiator::Buyer, ether(1)).await?;
    let seeker = s.agent(1, Role::Seeker).await?;
    seeker
        .ok("submit_feedback", json!({ "contract_id": pact.to_string(), "rating": 4, "tags": ["fast"] }))
        .await?;
    s.synced().await?;

    let found = seeker.ok("search_agents", json!({ "capability": "logo-design", "max_price": 10 })).await?;
    assert_eq!(ids(&found.data), vec![design_bot.address, a[7], a[8]], "{}", found.text);
    assert!(found.text.starts_with("Found 3 agents for logo-design at most 10 USDC"), "{}", found.text);
    assert!(found.text.contains("DesignBot Pro (3.17 rating, 5 USDC)"), "{}", found.text);
    assert!(found.text.contains("DesignBot Pro looks best"), "{}", found.text);
    let best = &found.data["agents"][0];
    assert_eq!((best["reputation"].as_f64(), best["pricing"]["price"].as_str()), (Some(3.17), Some("5")));
    assert_eq!(found.data["nextCursor"], Value::Null);
    // The agent resource by its address says what get_agent says.
    let profile = seeker.resource(&format!("hire://agents/{}", design_bot.address)).await?;
    let agent = seeker.ok("get_agent", json!({ "agent_id": design_bot.address.to_string() })).await?;
    assert_eq!(profile, agent.data, "the template and the tool agree");
    assert_eq!(profile["name"], "DesignBot Pro", "{profile}");

    // Each filter on its own, and paging.
    let search = |args: Value| seeker.ok("search_agents", args);
    let all = search(json!({ "capability": "LOGO-design" })).await?;
    assert_eq!(
        ids(&all.data),
        vec![design_bot.address, a[7], a[8], a[9]],
        "case does not matter; inactive skipped"
    );
    let trusted = search(json!({ "capability": "logo-design", "min_reputation": 3.1 })).await?;
    assert_eq!(ids(&trusted.data), vec![design_bot.address]);
    let cheap = search(json!({ "capability": "logo-design", "max_price": 8 })).await?;
    assert_eq!(ids(&cheap.data), vec![design_bot.address, a[7]], "the price bound includes its edge");
    let first = search(json!({ "capability": "logo-design", "limit": 3 })).await?;
    assert_eq!(ids(&first.data), vec![design_bot.address, a[7], a[8]]);
    let cursor = first.data["nextCursor"].as_str().unwrap_or_default().to_owned();
    let rest = search(json!({ "capability": "logo-design", "limit": 3, "cursor": cursor })).await?;
    assert_eq!((ids(&rest.data), &rest.data["nextCursor"]), (vec![a[9]], &Value::Null));
    let none = search(json!({ "capability": "logo-design", "max_price": 1 })).await?;
    assert_eq!(none.text, "No active agent offers logo-design at most 1 USDC.");

    // The same search through GraphQL (prices in USDC base units), and the whole market with those
    // out of it.
    let usdc = s.m.chain.usdc.address().to_string();
    let q = "query($c: String!, $k: Address, $p: BigInt, $r: Float, $n: Int, $after: String) {
        searchAgents(capability: $c, currency: $k, maxPrice: $p, minReputation: $r, first: $n, after: $after) {
            edges { cursor reputation capability { name price priceFormatted currency { symbol decimals } }
                    node { address name endpoint active } }
            pageInfo { hasNextPage endCursor } } }";
    let page = s.api.data(q, json!({ "c": "logo-design", "k": usdc, "p": "10000000", "n": 2 })).await?;
    let edges = page["searchAgents"]["edges"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = edges.iter().filter_map(|e| e["node"]["name"].as_str()).collect();
    assert_eq!(names, ["DesignBot Pro", "PixelSmith"]);
    assert_eq!(
        edges[1]["capability"],
        json!({ "name": "Logo-Design", "price": "8000000", "priceFormatted": "8",
                "currency": { "symbol": "USDC", "decimals": 6 } })
    );
    assert_eq!(page["searchAgents"]["pageInfo"]["hasNextPage"], true);
    let after = page["searchAgents"]["pageInfo"]["endCursor"].clone();
    let page = s
        .api
        .data(q, json!({ "c": "logo-design", "k": usdc, "p": "10000000", "n": 2, "after": after }))
        .await?;
    let names: Vec<&str> = page["searchAgents"]["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["node"]["name"].as_str())
        .collect();
    assert_eq!(
        (names, &page["searchAgents"]["pageInfo"]["hasNextPage"]),
        (vec!["Budget Logos"], &json!(false))
    );
    let market = s
        .api
        .data("{ agents(includeInactive: true, first: 100) { edges { node { name active } } } }", json!({}))
        .await?;
    let everyone = market["agents"]["edges"].as_array().map_or(0, Vec::len);
    assert_eq!(everyone, 6);
    let out = s.api.data("{ agents(first: 100) { edges { node { name } } } }", json!({})).await?;
    assert_eq!(
        out["agents"]["edges"].as_array().map_or(0, Vec::len),
        5,
        "an inactive agent is out of the market"
    );

    // Bad search input is refused with what to fix.
    let (code, text) =
        seeker.refused("search_agents", json!({ "capability": "logo-design", "min_reputation": 7 })).await?;
    assert_eq!(code, "INVALID_INPUT", "{text}");
    assert!(text.contains("0 to 5"), "{text}");
    let err = s.api.post(q, json!({ "c": "logo-design", "after": "not-a-cursor" })).await?;
    assert_eq!(err["errors"][0]["extensions"]["code"], "BAD_CURSOR", "{err}");
    Ok(())
}

#[tokio::test]
async fn profiles_are_written_by_their_own_wallet_and_read_back_everywhere() -> Result {
    let s = Stage::open().await?;
    let worker = s.agent(2, Role::Worker).await?;
    let me = worker.address.to_string();
    let register = |wallet: &str, capabilities: Value| {
        json!({ "name": "Scribe", "description": "Writes", "capabilities": capabilities,
                "endpoint": "https://scribe.example/mcp", "wallet": wallet })
    };
    let someone_else = s.m.cast.buyer.to_string();
    let (code, text) = worker
        .refused("register_agent", register(&someone_else, json!([{ "name": "copy", "price": "1" }])))
        .await?;
    assert_eq!(code, "INVALID_INPUT");
    assert!(text.contains("an agent is its wallet"), "{text}");
    let (_, text) = worker
        .refused(
            "register_agent",
            register(&me, json!([{ "name": "copy", "price": "10", "currency": "DAI" }])),
        )
        .await?;
    assert!(text.contains("does not take \"DAI\""), "{text}");
    let (code, text) = worker
        .refused(
            "register_agent",
            register(&me, json!([{ "name": "copy", "price": "1" }, { "name": "copy", "price": "2" }])),
        )
        .await?;
    assert_eq!(code, "CONTRACT_REVERT", "{text}");
    assert!(text.contains("DuplicateCapability") && text.contains("listed twice"), "{text}");
    assert_eq!(
        s.m.chain.agents.getAgent(worker.address).call().await?.registeredAt,
        0,
        "nothing was registered"
    );

    worker.ok("register_agent", register(&me, json!([{ "name": "copywriting", "price": "0.5" }]))).await?;
    let (_, text) = worker
        .refused("register_agent", register(&me, json!([{ "name": "copywriting", "price": "0.5" }])))
        .await?;
    assert!(text.contains("AgentAlreadyRegistered"), "{text}");
    let updated = worker
        .ok(
            "update_profile",
            json!({ "agent_id": me, "updates": { "capabilities": [{ "name": "copywriting", "price": "0.25" },
                                                                   { "name": "editing", "price": "0.1" }] } }),
        )
        .await?;
    assert!(updated.text.contains("copywriting (0.25 USDC), editing (0.1 USDC)"), "{}", updated.text);
    let (_, text) =
        worker.refused("update_profile", json!({ "agent_id": me, "updates": { "colour": "red" } })).await?;
    assert!(text.contains("unknown field"), "{text}");

    // get_agent (a seeker's tool) and GraphQL read the update; the worker's role has no get_agent.
    let seeker = s.agent(1, Role::Seeker).await?;
    let got = seeker.ok("get_agent", json!({ "agent_id": me })).await?;
    assert_eq!(got.data["name"], "Scribe");
    assert_eq!(
        got.data["capabilities"][1],
        json!({ "name": "editing", "description": "", "price": "0.1", "currency": "USDC",
                "currencyAddress": s.m.chain.usdc.address().to_string(), "priceBaseUnits": "100000" })
    );
    assert_eq!(got.data["reputation"]["score"], 3.0);
    let (code, _) = worker.refused("get_agent", json!({ "agent_id": me })).await?;
    assert_eq!(code, "FORBIDDEN");
    let (code, text) =
        seeker.refused("get_agent", json!({ "agent_id": s.m.cast.stranger.to_string() })).await?;
    assert_eq!(code, "INVALID_INPUT");
    assert!(text.contains("no agent is registered"), "{text}");
    let q = "query($a: Address!) { agent(address: $a) { name active capabilities { name price } reputation { score { value } } } }";
    let agent = s.api.data(q, json!({ "a": me })).await?;
    assert_eq!(
        agent["agent"]["capabilities"][0],
        json!({ "name": "copywriting", "price": "250000" }),
        "0.25 USDC in base units"
    );

    // hire://profile and hire://contracts: this wallet's profile, statistics and pacts.
    let pact = s.m.completed(Initiator::Seller, ether(1)).await?;
    let open = s.m.funded(Initiator::Buyer, ether(1)).await?;
    s.synced().await?;
    let profile = worker.resource("hire://profile").await?;
    assert_eq!(
        (profile["registered"].as_bool(), profile["profile"]["name"].as_str()),
        (Some(true), Some("Scribe"))
    );
    assert_eq!(profile["statistics"]["asSeller"]["completed"], 1);
    let contracts = worker.resource("hire://contracts").await?;
    let listed = |key: &str| -> Vec<String> {
        contracts[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["pactId"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!((listed("active"), listed("past")), (vec![open.to_string()], vec![pact.to_string()]));
    let stranger = s.agent(6, Role::Full).await?;
    let nobody = stranger.resource("hire://profile").await?;
    assert_eq!((nobody["registered"].as_bool(), &nobody["profile"]), (Some(false), &Value::Null));
    Ok(())
}

#[tokio::test]
async fn feedback_moves_reputation_as_computed_by_hand_and_a_flood_counts_once() -> Result {
    let s = Stage::open().await?;
    let (buyer, seller) = (s.agent(1, Role::Seeker).await?, s.agent(2, Role::Full).await?);
    let rate = |pact: U256, rating: u8| json!({ "contract_id": pact.to_string(), "rating": rating });

    // The rules, as an agent meets them.
    let running = s.m.funded(Initiator::Buyer, ether(1)).await?;
    let (code, text) = buyer.refused("submit_feedback", rate(running, 5)).await?;
    assert_eq!(code, "CONTRACT_REVERT");
    assert!(text.contains("PactNotFinished") && text.contains("FUNDED"), "{text}");
    // It names every status AgentRegistry takes feedback in, SPLIT among them.
    assert!(text.contains("once it has ended: COMPLETED, REFUNDED or SPLIT."), "{text}");
    let (code, text) = buyer.refused("submit_feedback", rate(running, 6)).await?;
    assert_eq!((code.as_str(), text.contains("1 to 5")), ("INVALID_INPUT", true), "{text}");
    let worker = s.agent(2, Role::Worker).await?;
    let (code, _) = worker.refused("submit_feedback", rate(running, 5)).await?;
    assert_eq!(code, "FORBIDDEN", "seed 000 gives submit_feedback to seekers (and full)");

    // Three completed 1 ETH pacts between one buyer and one seller (final oracle score 86 each,
    // each above the floor: one job each); the buyer rates all three 5 stars, the seller rates the
    // buyer 2 stars once.
    let mut pacts = Vec::new();
    for _ in 0..3 {
        pacts.push(s.m.completed(Initiator::Buyer, ether(1)).await?);
    }
    for pact in &pacts {
        let reply = buyer.ok("submit_feedback", json!({ "contract_id": pact.to_string(), "rating": 5, "tags": ["fast", "clear"], "comment": "ipfs://review" })).await?;
        assert_eq!(reply.data["ratee"], json!(s.m.cast.seller.to_checksum(None)));
    }
    let (code, text) = buyer.refused("submit_feedback", rate(pacts[0], 1)).await?;
    assert!(code == "CONTRACT_REVERT" && text.contains("AlreadyRated"), "{text}");
    let stranger = s.agent(6, Role::Full).await?;
    let (_, text) = stranger.refused("submit_feedback", rate(pacts[0], 1)).await?;
    assert!(text.contains("NotPactParty"), "{text}");
    seller.ok("submit_feedback", rate(pacts[0], 2)).await?;

    // Seller: 3 paid jobs at credit 0.86 from ONE counterparty, e = min(1, log2(1 + 3) / 2) = 1,
    // and ONE vote of (5 - 1) / 4 = 1 from it however often it rated, f = min(1, log2(1 + 3) / 2)
    // = 1: W = 2, C = 0.86 + 1 = 1.86. The buyer, the ranking's seed, trusts itself as its rater
    // through the walks that stop at it, π¬S(B) = α = 0.3, against τ = π(S): the trust graph is
    // B → S (C 1.86), S → B (three approvals and a 2-star vote on one paid pact: 1 + 0.5 × 0.25
    // = 1.125), S → the oracles (missing by 4 and 6: 0.96, 0.94); π(B) = 0.3 + 0.49 × (1.125 /
    // 3.025) × π(B) = 0.367, π(S) = 0.257, π(O) = 0.057, 0.056, so B and S first hold 80 % of
    // Σπ = 0.737, τ = 0.257 and t = min(1, 0.3 / 0.257) = 1: 5 × (1.86 + 3) / (2 + 5) = 3.47,
    // trusted weight 2. Counting each pact would give 5 × (2.58 + 1 + 3) / (3 + 1 + 5) = 3.66, each
    // rating too 5 × (2.58 + 3 + 3) / (3 + 3 + 5) = 3.90.
    // Buyer: its one rater, the seller, is trusted only through walks from the seed, which all
    // start at the buyer itself: π¬B(S) = 0, so globally the buyer scores the prior 3.00 (an
    // anchor does not vouch for itself).
    s.synced().await?;
    let q = "query($a: Address!) { reputation(address: $a) {
        score { value rated raters weight } feedback { count raters meanRating }
        asSeller { score { value } feedback { count raters meanRating } }
        asBuyer { score { value } feedback { count raters meanRating } }
        recentFeedback(first: 2) { pactId rater rating tags comment } } }";
    let rep = |who: Address| {
        let api = &s.api;
        async move { api.data(q, json!({ "a": who.to_checksum(None) })).await.map(|d| d["reputation"].clone()) }
    };
    let of_seller = rep(s.m.cast.seller).await?;
    assert_eq!(of_seller["score"], json!({ "value": 3.47, "rated": 3, "raters": 1, "weight": 2.0 }));
    assert_eq!(of_seller["asSeller"]["feedback"], json!({ "count": 3, "raters": 1, "meanRating": 5.0 }));
    assert_eq!(of_seller["feedback"], json!({ "count": 3, "raters": 1, "meanRating": 5.0 }));
    let recent = &of_seller["recentFeedback"];
    assert_eq!(recent.as_array().map(Vec::len), Some(2));
    assert_eq!(recent[0]["pactId"], pacts[2].to_string(), "newest first");
    assert_eq!(recent[0]["tags"], json!(["fast", "clear"]));
    let of_buyer = rep(s.m.cast.buyer).await?;
    assert_eq!(of_buyer["asBuyer"]["score"]["value"], 3.0);
    assert_eq!(of_buyer["asBuyer"]["feedback"], json!({ "count": 1, "raters": 1, "meanRating": 2.0 }));
    assert_eq!(of_buyer["asSeller"]["feedback"]["count"], 0);

    let on_pact = s
        .api
        .data(
            "query($id: BigInt!) { pact(id: $id) { feedback { rater rating } } }",
            json!({ "id": pacts[0].to_string() }),
        )
        .await?;
    let ratings: Vec<u64> = on_pact["pact"]["feedback"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["rating"].as_u64())
        .collect();
    assert_eq!(ratings, [2, 5], "newest first: the seller rated after the buyer");

    // The MCP reputation tool tells the same story.
    let told = buyer.ok("get-reputation", json!({ "address": s.m.cast.seller.to_string() })).await?;
    assert!(told.text.contains("score 3.47/5") && told.text.contains("3 feedback ratings"), "{}", told.text);
    Ok(())
}

#[tokio::test]
async fn a_farm_of_tiny_self_dealt_pacts_moves_the_score_less_than_one_honest_pact() -> Result {
    use agentpact_tests::chain::hash;
    let s = Stage::open().await?;
    let (m, pact) = (&s.m, &s.m.chain.pact);
    let q = "query($a: Address!) { reputation(address: $a) { score { value rated raters weight } } }";
    let score = |who: Address| {
        let api = &s.api;
        async move {
            api.data(q, json!({ "a": who.to_checksum(None) })).await.map(|d| d["reputation"]["score"].clone())
        }
    };
    // The farmer works for its own second wallet: a hundred pacts of 10 wei (a stake of 1 wei each
    // side), each scored 100 by both oracles, approved and rated five stars.
    let (farmer, puppet) = (m.chain.accounts[7], m.chain.accounts[8]);
    for _ in 0..100 {
        let mut terms = m.terms(Initiator::Buyer, U256::from(10u8)).await?;
        terms.counterparty = farmer;
        let id = pact.pactCount().call().await?;
        send(pact.createPact(terms).from(puppet).value(U256::from(11u8))).await?;
        send(pact.acceptPact(id).from(farmer).value(U256::from(1u8))).await?;
        send(pact.startWork(id).from(farmer)).await?;
        send(pact.submitWork(id, hash(1)).from(farmer)).await?;
        m.verified(id, &[100, 100]).await?;
        send(pact.approveWork(id).from(puppet)).await?;
        send(m.chain.agents.submitFeedback(id, 5, vec![], String::new()).from(puppet)).await?;
    }

    // A pact of the full reference size, 0.01 ETH (25 USDC, above the 0.0004 ETH floor), approved
    // seconds after acceptance: speed no longer costs weight, it is one whole job. The seed buyer
    // trusts itself fully as the seller's rater (τ = π(S) = 0.253 < π¬S(B) = α = 0.3, the graph of
    // find_me_a_logo_designer_under_10 with C(B, S) = 0.43): e = 0.5, C = 0.5 × 0.86,
    // 5 × (0.43 + 3) / (0.5 + 5) = 3.12 for the fresh seller (the cast's, no history yet).
    s.synced().await?;
    let fresh = score(m.cast.seller).await?;
    assert_eq!(fresh, json!({ "value": 3.0, "rated": 0, "raters": 0, "weight": 0.0 }));
    m.completed(Initiator::Buyer, ether(1) / U256::from(100u8)).await?;
    s.synced().await?;
    let quick = score(m.cast.seller).await?;
    assert_eq!(quick, json!({ "value": 3.12, "rated": 1, "raters": 1, "weight": 0.5 }));

    // One honest pact more: 0.5 ETH, scored 90 and 80 (final 86), rated five stars.
    let honest = m.completed(Initiator::Buyer, ether(1) / U256::from(2u8)).await?;
    send(m.chain.agents.submitFeedback(honest, 5, vec![], String::new()).from(m.cast.buyer)).await?;
    s.synced().await?;

    let (farmed, earned) = (score(farmer).await?, score(m.cast.seller).await?);
    // The farm: 100 pacts of 10 wei are 100 × 10 / (4 × 10^14) = 2.5 × 10^-12 jobs, 0 at the ten
    // decimals kept, and its only counterparty, the puppet, is trusted by no walk from the seed:
    // nothing moves from the prior 3.00, whatever the ratings say.
    // The honest seller: two paid jobs from one counterparty, e = log2(1 + 2) / 2 = 0.7925 at
    // credit 0.86, and the buyer's vote of 1 on one rated paid job, f = 0.5: W = 1.2925,
    // C = 0.7925 × 0.86 + 0.5 = 1.1815; the seed's trust is 1 as above (τ = π(S): the graph's
    // shape is that of the quick pact, the seller's out-mass split 0.7925 : 0.7925 × 0.96 :
    // 0.7925 × 0.94, the same shares): 5 × (1.1815 + 3) / (1.2925 + 5) = 3.32.
    let (farm_gain, honest_gain) =
        (farmed["value"].as_f64().unwrap_or(9.0) - 3.0, earned["value"].as_f64().unwrap_or(0.0) - 3.0);
    assert_eq!((&farmed["value"], &farmed["weight"]), (&json!(3.0), &json!(0.0)), "{farmed}");
    assert_eq!((&earned["value"], &earned["rated"], &earned["raters"]), (&json!(3.32), &json!(2), &json!(1)));
    let weight = earned["weight"].as_f64().unwrap_or_default();
    assert!((weight - (3f64.log2() / 2.0 + 0.5)).abs() < 1e-9, "{earned}");
    assert!(
        farm_gain < honest_gain,
        "100 farmed pacts moved the score by {farm_gain}, one honest pact by {honest_gain}"
    );
    Ok(())
}
