//! The MCP tools' ERC-8004 side end to end, against the harness's anvil with the Identity and
//! Reputation registries deployed and the indexer following them: a worker registers in both
//! registries, finishes a pact, and the buyer's rating lands in ERC-8004 too, grounded in the pact,
//! with a feedback file that names the pact and the transaction that paid the worker. An agent
//! without ERC-8004 feedback ranks by its AgentPact score. Without registries, asking for ERC-8004
//! is refused and nothing is sent.

use agentpact_contracts::{
    AgentPact, Contracts, Erc8004, IdentityRegistry, Initiator, ReputationRegistry, erc8004::FeedbackFile,
};
use agentpact_mcp::Role;
use agentpact_read::{AgentRef, Reader};
use agentpact_tests::{
    HarnessError,
    chain::ether,
    erc8004::Registries,
    index::target,
    mcp::{Reply, TestAgent, dev_key, test_limits},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{
    primitives::{Address, B256, U256},
    providers::Provider,
    rpc::types::TransactionReceipt,
    sol_types::SolEvent,
};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn fail(what: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(what.to_string())
}

/// A market with its index (and the registries) followed in the background.
struct Stage {
    m: Market,
    db: TestDatabase,
    _indexer: tokio::task::JoinHandle<()>,
}

impl Stage {
    async fn open() -> Result<Self> {
        Self::ranking(|_| Vec::new()).await
    }

    /// [`Stage::open`], the indexer ranking reputation from the seeds `seeds` names.
    async fn ranking(seeds: impl FnOnce(&Market) -> Vec<Address>) -> Result<Self> {
        let m = Market::open().await?;
        let (db, indexer) = agentpact_tests::index::followed_ranking(&m.chain, seeds(&m)).await?;
        Ok(Self { m, db, _indexer: indexer })
    }

    async fn synced(&self) -> Result {
        agentpact_tests::index::caught_up(&self.m.chain, self.db.pool()).await
    }

    fn reader(&self) -> Reader {
        Reader::new(self.db.pool().clone())
    }

    fn chain_id(&self) -> u64 {
        self.m.chain.anvil.chain_id()
    }

    async fn nonce(&self, who: Address) -> Result<u64> {
        Ok(self.m.chain.provider.get_transaction_count(who).await?)
    }

    async fn receipt(&self, tx: B256) -> Result<TransactionReceipt> {
        self.m
            .chain
            .provider
            .get_transaction_receipt(tx)
            .await?
            .ok_or_else(|| fail(format!("no receipt for {tx}")))
    }
}

/// `register_agent`'s input for `wallet`, offering logo-design.
fn registration(wallet: Address, erc8004: bool) -> Value {
    json!({
        "name": "DesignBot Pro", "description": "Logos that last",
        "capabilities": [{ "name": "logo-design", "price": "5" }],
        "endpoint": "https://designbot.example/mcp", "wallet": wallet.to_string(), "erc8004": erc8004,
    })
}

fn address(v: &Value) -> Option<Address> {
    v.as_str()?.parse().ok()
}

fn text_at<'a>(reply: &'a Reply, pointer: &str) -> &'a str {
    reply.data.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

#[tokio::test]
async fn a_worker_registered_in_erc8004_is_rated_there_grounded_in_the_pact_that_paid_it() -> Result {
    let s = Stage::open().await?;
    let chain_id = s.chain_id();
    let worker = TestAgent::start(&s.m.chain, &s.db, 2, Role::Worker, test_limits()).await?;
    assert_eq!(worker.address, s.m.cast.seller);

    // Registered in AgentRegistry, then in the Identity Registry, in one call.
    let registered = worker.ok("register_agent", registration(worker.address, true)).await?;
    assert_eq!(text_at(&registered, "/erc8004Status"), "registered", "{}", registered.text);
    let id: U256 = text_at(&registered, "/erc8004AgentId").parse().map_err(fail)?;
    assert!(registered.data["txHash"].is_string() && registered.data["erc8004TxHash"].is_string());
    assert!(registered.text.contains(&format!("ERC-8004 as agent #{id}")), "{}", registered.text);
    assert_eq!(registered.data["erc8004Error"], Value::Null);
    let identity = IdentityRegistry::new(s.m.chain.erc8004.identity, s.m.chain.provider.clone());
    assert_eq!(identity.ownerOf(id).call().await?, worker.address);
    assert_eq!(identity.getAgentWallet(id).call().await?, worker.address);

    // The index reads the registration file back: name, MCP endpoint, skills, wallet.
    s.synced().await?;
    let agent = s
        .reader()
        .erc8004_agent(chain_id, AgentRef::Id(id))
        .await
        .map_err(fail)?
        .ok_or_else(|| fail("the index has no ERC-8004 agent"))?;
    assert_eq!(agent.name.as_deref(), Some("DesignBot Pro"));
    assert_eq!(agent.description.as_deref(), Some("Logos that last"));
    assert_eq!(agent.mcp_endpoint.as_deref(), Some("https://designbot.example/mcp"));
    assert_eq!(agent.skills, ["logo-design"]);
    assert_eq!((agent.wallet, agent.owner), (Some(worker.address), Some(worker.address)));

    // Asking again sends nothing: the wallet is in AgentRegistry and has its identity.
    let nonce = s.nonce(worker.address).await?;
    let again = worker.ok("register_agent", registration(worker.address, true)).await?;
    assert_eq!(text_at(&again, "/erc8004Status"), "already_registered", "{}", again.text);
    assert_eq!(text_at(&again, "/erc8004AgentId"), id.to_string());
    assert_eq!((&again.data["txHash"], &again.data["erc8004TxHash"]), (&Value::Null, &Value::Null));
    assert!(again.text.contains("already registered in AgentRegistry"), "{}", again.text);
    assert!(again.text.contains(&format!("already is ERC-8004 agent #{id}")), "{}", again.text);
    let profile = worker.resource("hire://profile").await?;
    assert_eq!(profile["profile"]["erc8004"]["agentId"].as_str(), Some(&*id.to_string()), "{profile}");
    assert_eq!(s.nonce(worker.address).await?, nonce, "nothing was sent");

    // A pact the worker was paid for, rated five stars by its buyer.
    let pact = s.m.completed(Initiator::Buyer, ether(1)).await?;
    s.synced().await?;
    let seeker = TestAgent::start(&s.m.chain, &s.db, 1, Role::Seeker, test_limits()).await?;
    assert_eq!(seeker.address, s.m.cast.buyer);
    let rated = seeker
        .ok("submit_feedback", json!({ "contract_id": pact.to_string(), "rating": 5, "tags": ["fast"] }))
        .await?;
    assert_eq!(text_at(&rated, "/erc8004/agentId"), id.to_string(), "{}", rated.text);
    assert_eq!((&rated.data["erc8004Skipped"], &rated.data["erc8004Error"]), (&Value::Null, &Value::Null));
    assert!(rated.text.contains(&format!("ERC-8004 feedback 100 on agent #{id}")), "{}", rated.text);

    // The feedback file names the pact and the transaction whose Payout paid the worker; the
    // chain's feedback carries its hash and the file's value and tags.
    let uri = text_at(&rated, "/erc8004/feedbackUri");
    let file = FeedbackFile::from_uri(uri.as_bytes()).map_err(fail)?;
    assert_eq!(file.agent_pact.pact_id, pact.to_string());
    assert_eq!((file.agent_pact.chain_id, file.agent_pact.contract), (chain_id, *s.m.chain.pact.address()));
    assert_eq!(file.agent_pact.status, "COMPLETED");
    assert_eq!(file.agent_registry, format!("eip155:{chain_id}:{}", s.m.chain.erc8004.identity));
    assert_eq!(file.client_address, format!("eip155:{chain_id}:{}", seeker.address));
    assert_eq!((file.agent_id, file.value, file.value_decimals), (id, 100, 0));
    let payout = s.receipt(file.agent_pact.payout_tx).await?;
    let paid: Vec<AgentPact::Payout> = payout
        .inner
        .logs()
        .iter()
        .filter_map(|l| AgentPact::Payout::decode_log(&l.inner).ok().map(|e| e.data))
        .collect();
    assert!(
        paid.iter().any(|p| p.pactId == pact && p.to == worker.address && !p.amount.is_zero()),
        "the payout transaction pays the worker for pact #{pact}: {paid:?}"
    );
    let tx: B256 = text_at(&rated, "/erc8004/txHash").parse().map_err(fail)?;
    let given = s.receipt(tx).await?;
    let feedback = given
        .inner
        .logs()
        .iter()
        .find_map(|l| ReputationRegistry::NewFeedback::decode_log(&l.inner).ok().map(|e| e.data))
        .ok_or_else(|| fail("no NewFeedback"))?;
    assert_eq!((feedback.agentId, feedback.clientAddress), (id, seeker.address));
    assert_eq!((feedback.value, feedback.valueDecimals), (100, 0));
    assert_eq!(
        (feedback.tag1.as_str(), feedback.tag2.as_str()),
        (format!("pact:{pact}").as_str(), "agentpact")
    );
    assert_eq!((feedback.feedbackURI.as_str(), feedback.feedbackHash), (uri, file.hash()));
    assert_eq!(feedback.endpoint, "https://designbot.example/mcp");

    // The index grounds it in the pact.
    s.synced().await?;
    let reader = s.reader();
    let agent =
        reader.erc8004_agent(chain_id, AgentRef::Id(id)).await.map_err(fail)?.ok_or_else(|| fail("gone"))?;
    assert_eq!((agent.reputation.feedback, agent.reputation.grounded), (1, 1));
    let list = reader.erc8004_feedback(chain_id, id, 10).await.map_err(fail)?;
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].tagged_pact, list[0].grounding_pacts.clone()), (Some(pact), vec![pact]));
    assert_eq!(list[0].value, "100");

    // The reads show the ERC-8004 side: by address and by token id alike.
    let by_address = seeker.ok("get_agent", json!({ "agent_id": worker.address.to_string() })).await?;
    let by_id = seeker.ok("get_agent", json!({ "erc8004_agent_id": id.to_string() })).await?;
    // Alike but for when the ranking last ran: a run may land between the two reads.
    let but_ranking_time = |data: &Value| {
        let mut data = data.clone();
        if let Some(reputation) = data["reputation"].as_object_mut() {
            reputation.remove("computed");
        }
        data
    };
    assert_eq!(but_ranking_time(&by_address.data), but_ranking_time(&by_id.data));
    let e = &by_id.data["erc8004"];
    assert_eq!(
        (e["agentId"].as_str(), e["grounded"].as_u64(), e["feedback"].as_u64()),
        (Some(&*id.to_string()), Some(1), Some(1))
    );
    assert_eq!((address(&e["wallet"]), e["rawMeanValue"].as_f64()), (Some(worker.address), Some(100.0)));
    assert_eq!(e["ungroundedShare"].as_f64(), Some(0.0));
    assert_eq!(by_id.data["name"], "DesignBot Pro");

    // Once a ranking run has read the pact: the score as the seeker sees it counts its own paid
    // pact fully, whatever the market's trust in it; a viewer with no history sees the global one.
    let paid_in = payout.block_number.ok_or_else(|| fail("the payout was mined in no block"))?;
    agentpact_tests::until(std::time::Duration::from_secs(30), "a ranking run past the payout", || async {
        Ok(reader.reputation_run(chain_id).await.map_err(fail)?.is_some_and(|run| run.block >= paid_in))
    })
    .await?;
    let global = reader.reputation(chain_id, worker.address).await.map_err(fail)?.overall.value;
    let worker_id = worker.address.to_string();
    let seen = seeker.ok("get_agent", json!({ "agent_id": worker_id, "as_seen_by": "me" })).await?;
    let mine = seen.data["reputation"]["score"].as_f64().ok_or_else(|| fail("no score"))?;
    assert_eq!(seen.data["reputation"]["view"], "VIEWER", "{}", seen.text);
    assert_eq!(seen.data["reputation"]["globalScore"].as_f64(), Some(global), "{}", seen.text);
    assert!(mine > 3.0 && mine >= global, "its own paid pact counts for the seeker: {}", seen.text);
    let said = format!("as seen by you: {mine:.2}, you dealt with it yourself");
    assert!(seen.text.contains(&said) && seen.text.contains("computed at block"), "{}", seen.text);
    let stranger = Address::repeat_byte(0x5a).to_string();
    let theirs = seeker.ok("get_agent", json!({ "agent_id": worker_id, "as_seen_by": stranger })).await?;
    assert_eq!(theirs.data["reputation"]["score"].as_f64(), Some(global), "{}", theirs.text);
    assert_eq!(theirs.data["reputation"]["view"], "VIEWER", "{}", theirs.text);
    let (code, text) =
        seeker.refused("get_agent", json!({ "agent_id": worker_id, "as_seen_by": "you" })).await?;
    assert_eq!(code, "INVALID_INPUT", "{text}");
    assert!(text.contains("as_seen_by"), "a bad viewer is named: {text}");
    for both_or_neither in
        [json!({ "agent_id": worker.address.to_string(), "erc8004_agent_id": "0" }), json!({})]
    {
        let (code, text) = seeker.refused("get_agent", both_or_neither).await?;
        assert_eq!(code, "INVALID_INPUT", "{text}");
        assert!(text.contains("agent_id") && text.contains("erc8004_agent_id"), "{text}");
    }
    let (code, text) = seeker.refused("get_agent", json!({ "erc8004_agent_id": "999" })).await?;
    assert_eq!(code, "INVALID_INPUT", "{text}");
    let reputation = seeker.ok("get-reputation", json!({ "address": worker.address.to_string() })).await?;
    assert_eq!(reputation.data["erc8004"]["grounded"], 1, "{}", reputation.text);
    let found = seeker.ok("search_agents", json!({ "capability": "logo-design" })).await?;
    let best = &found.data["agents"][0];
    assert_eq!(address(&best["id"]), Some(worker.address), "{}", found.text);
    assert_eq!(best["erc8004AgentId"].as_str(), Some(&*id.to_string()));
    // The scores are the index's, whatever they come to: the trusted one beside the raw grounded one.
    assert_eq!(best["groundedScore"].as_f64(), Some(agent.reputation.grounded_score), "{best}");
    assert_eq!(best["trustedScore"].as_f64(), Some(agent.reputation.trusted_score), "{best}");
    assert_eq!(found.data["erc8004Only"], json!([]), "the worker is in both registries");

    // An agent only in ERC-8004 with the skill is found beside the market's.
    let stranger = s.m.cast.stranger;
    let file = agentpact_contracts::erc8004::RegistrationFile::ours(
        "Outsider",
        "ERC-8004 only",
        "https://outsider.example/mcp",
        vec!["logo-design".into()],
        chain_id,
        stranger,
    );
    Registries::of(&s.m.chain).register(stranger, file.to_data_uri()).await?;
    s.synced().await?;
    let found = seeker.ok("search_agents", json!({ "capability": "logo-design" })).await?;
    let only = found.data["erc8004Only"].as_array().cloned().unwrap_or_default();
    assert_eq!(only.len(), 1, "{}", found.data);
    assert_eq!((only[0]["name"].as_str(), address(&only[0]["address"])), (Some("Outsider"), Some(stranger)));
    assert!(found.text.contains("In ERC-8004 only"), "{}", found.text);
    let outsider = seeker
        .ok(
            "get_agent",
            json!({ "erc8004_agent_id": only[0]["erc8004AgentId"].as_str().unwrap_or_default() }),
        )
        .await?;
    assert_eq!(
        (outsider.data["active"].as_bool(), outsider.data["capabilities"].clone()),
        (Some(false), json!([]))
    );
    assert!(outsider.text.contains("ERC-8004 only"), "{}", outsider.text);

    // The seller rating its buyer gives no ERC-8004 feedback: the buyer was not paid for work.
    let seller = TestAgent::start(&s.m.chain, &s.db, 2, Role::Full, test_limits()).await?;
    let back = seller.ok("submit_feedback", json!({ "contract_id": pact.to_string(), "rating": 4 })).await?;
    assert_eq!(back.data["erc8004"], Value::Null);
    assert!(text_at(&back, "/erc8004Skipped").contains("buyer"), "{}", back.text);
    Ok(())
}

/// An agent of ERC-8004 with paid pacts but no ERC-8004 feedback has a row of raw figures all the
/// same (the indexer writes one for every agent it marks): it ranks and filters by its AgentPact
/// score, in ERC-8004 only and once in both registries, never by the prior 3.00 of its empty
/// ERC-8004 side.
#[tokio::test]
async fn an_erc8004_agent_without_feedback_there_ranks_by_its_agentpact_score() -> Result {
    let s = Stage::ranking(|m| vec![m.cast.buyer]).await?;
    let chain_id = s.chain_id();
    let seller = s.m.cast.seller;
    let file = agentpact_contracts::erc8004::RegistrationFile::ours(
        "Paid Worker",
        "ERC-8004 first",
        "https://worker.example/mcp",
        vec!["logo-design".into()],
        chain_id,
        seller,
    );
    let id = Registries::of(&s.m.chain).register(seller, file.to_data_uri()).await?;
    // Paid by the seed, rated by nobody in ERC-8004; a ranking run reads the payment.
    s.m.completed(Initiator::Buyer, ether(1)).await?;
    let paid_in = s.m.chain.provider.get_block_number().await?;
    let reader = s.reader();
    agentpact_tests::until(std::time::Duration::from_secs(30), "a ranking run past the payment", || async {
        Ok(reader.reputation_run(chain_id).await.map_err(fail)?.is_some_and(|run| run.block >= paid_in))
    })
    .await?;
    let ours = reader.reputation(chain_id, seller).await.map_err(fail)?.global.value;
    assert!(ours > 3.0, "a paid pact for a seed lifts the seller above the prior: {ours}");
    let identity = reader
        .erc8004_agent(chain_id, AgentRef::Id(id))
        .await
        .map_err(fail)?
        .ok_or_else(|| fail("not indexed"))?;
    assert_eq!(identity.reputation.feedback, 0);

    // In ERC-8004 only: search_agents lists it beside the market by its AgentPact score, which
    // passes a minimum the prior fails.
    let seeker = TestAgent::start(&s.m.chain, &s.db, 1, Role::Seeker, test_limits()).await?;
    let found =
        seeker.ok("search_agents", json!({ "capability": "logo-design", "min_reputation": 3.05 })).await?;
    let only = found.data["erc8004Only"].as_array().cloned().unwrap_or_default();
    assert_eq!(only.len(), 1, "{}", found.text);
    assert_eq!(address(&only[0]["address"]), Some(seller), "{}", found.text);
    assert_eq!(only[0]["trustedScore"].as_f64(), Some(ours), "{}", found.text);

    // In both registries: the same score ranks it.
    let worker = TestAgent::start(&s.m.chain, &s.db, 2, Role::Worker, test_limits()).await?;
    worker.ok("register_agent", registration(seller, true)).await?;
    s.synced().await?;
    let matches = reader.search_registries(chain_id, "logo-design", 10).await.map_err(fail)?;
    let both = matches.iter().find(|r| r.address == Some(seller)).ok_or_else(|| fail("not found"))?;
    assert!(both.in_agentpact && both.agent_id == Some(id), "{both:?}");
    assert_eq!((both.score, both.grounded_score, both.agentpact_score), (ours, ours, ours), "{both:?}");
    Ok(())
}

/// An agent whose server is told `erc8004` for the chain's ERC-8004 registries (none: it knows
/// none).
async fn configured(s: &Stage, n: usize, role: Role, erc8004: Option<Erc8004>) -> Result<TestAgent> {
    let t = target(&s.m.chain);
    let contracts = Contracts { erc8004, ..t.contracts };
    let chain = agentpact_mcp::connect(
        s.m.chain.anvil.endpoint_url(),
        &agentpact_contracts::rpc::RpcLimits::default(),
        t.chain_id,
        contracts,
        dev_key(&s.m.chain, n)?,
        s.reader(),
        test_limits(),
    )
    .await
    .map_err(fail)?;
    TestAgent::serving(chain, role).await
}

#[tokio::test]
async fn without_registries_erc8004_is_refused_before_anything_is_sent() -> Result {
    let s = Stage::open().await?;
    let me = s.m.cast.seller;
    let identity = IdentityRegistry::new(s.m.chain.erc8004.identity, s.m.chain.provider.clone());
    // None known, or known where this chain has no contract: Base Sepolia's singletons, as on an
    // anvil started with --chain-id 84532.
    for (registries, says) in
        [(None, "registries configured."), (Some(Erc8004::BASE_SEPOLIA), "holds no contract")]
    {
        let worker = configured(&s, 2, Role::Worker, registries).await?;
        let nonce = s.nonce(me).await?;
        let refused = worker.call("register_agent", registration(me, true)).await?;
        assert!(refused.is_error, "{}", refused.text);
        assert_eq!(refused.data["error"]["code"], "NOT_CONFIGURED", "{}", refused.text);
        for needed in [
            &format!("chain {} has no ERC-8004 registries configured", s.chain_id()),
            says,
            "ERC8004_IDENTITY_ADDRESS",
            "ERC8004_REPUTATION_ADDRESS",
            "retry register_agent with erc8004: false",
            "Nothing was sent",
        ] {
            assert!(refused.text.contains(needed), "{needed}: {}", refused.text);
        }
        assert_eq!(s.nonce(me).await?, nonce, "nothing was sent");
        assert_eq!(
            s.m.chain.agents.getAgent(me).call().await?.registeredAt,
            0,
            "not in AgentRegistry either"
        );
        assert_eq!(identity.balanceOf(me).call().await?, U256::ZERO);
    }
    let worker = configured(&s, 2, Role::Worker, None).await?;

    // Without erc8004 the same server registers as before, and a rating says why ERC-8004 is left out.
    let registered = worker.call("register_agent", registration(me, false)).await?;
    assert!(!registered.is_error, "{}", registered.text);
    assert_eq!(
        (&registered.data["erc8004Status"], &registered.data["erc8004AgentId"]),
        (&Value::Null, &Value::Null)
    );
    let pact = s.m.completed(Initiator::Buyer, ether(1)).await?;
    s.synced().await?;
    let seeker = configured(&s, 1, Role::Seeker, None).await?;
    let rated =
        seeker.call("submit_feedback", json!({ "contract_id": pact.to_string(), "rating": 3 })).await?;
    assert!(!rated.is_error, "{}", rated.text);
    assert_eq!(rated.data["erc8004"], Value::Null);
    assert!(text_at(&rated, "/erc8004Skipped").contains("no ERC-8004 registries"), "{}", rated.text);
    Ok(())
}

#[tokio::test]
async fn an_erc8004_write_failing_after_the_agent_registry_one_is_explained_and_can_be_finished() -> Result {
    let s = Stage::open().await?;
    let me = s.m.cast.seller;
    let key = dev_key(&s.m.chain, 2)?;
    // Registries at a contract that is none (the OracleRegistry): their writes revert.
    let nowhere = s.m.chain.deployment.oracle_registry;
    let broken = Erc8004 { identity: nowhere, reputation: nowhere };
    let worker = configured(&s, 2, Role::Worker, Some(broken)).await?;
    let half = worker.call("register_agent", registration(me, true)).await?;
    assert!(!half.is_error, "the AgentRegistry registration stands: {}", half.text);
    assert!(half.data["txHash"].is_string());
    assert_eq!(text_at(&half, "/erc8004Status"), "failed", "{}", half.text);
    let why = text_at(&half, "/erc8004Error");
    assert!(!why.is_empty() && half.text.contains(why), "{}", half.text);
    assert!(half.text.contains("register_agent again with erc8004: true"), "{}", half.text);
    let secret = alloy::primitives::hex::encode(key.to_bytes());
    assert!(!half.text.contains(&secret) && !half.data.to_string().contains(&secret), "no key in answers");
    assert_ne!(s.m.chain.agents.getAgent(me).call().await?.registeredAt, 0);
    let identity = IdentityRegistry::new(s.m.chain.erc8004.identity, s.m.chain.provider.clone());
    assert_eq!(identity.balanceOf(me).call().await?, U256::ZERO);

    // The same call through a server that knows the registries finishes it: ERC-8004 only.
    let fixed = TestAgent::start(&s.m.chain, &s.db, 2, Role::Worker, test_limits()).await?;
    let done = fixed.ok("register_agent", registration(me, true)).await?;
    assert_eq!(text_at(&done, "/erc8004Status"), "registered", "{}", done.text);
    assert_eq!(done.data["txHash"], Value::Null, "AgentRegistry is not written again");
    let id: U256 = text_at(&done, "/erc8004AgentId").parse().map_err(fail)?;
    assert_eq!(identity.getAgentWallet(id).call().await?, me);

    // A rating whose ERC-8004 feedback fails: the AgentRegistry rating stands and says why.
    let pact = s.m.completed(Initiator::Buyer, ether(1)).await?;
    s.synced().await?;
    let wrong_reputation = Erc8004 { identity: s.m.chain.erc8004.identity, reputation: nowhere };
    let seeker = configured(&s, 1, Role::Seeker, Some(wrong_reputation)).await?;
    let rated =
        seeker.call("submit_feedback", json!({ "contract_id": pact.to_string(), "rating": 5 })).await?;
    assert!(!rated.is_error, "{}", rated.text);
    assert!(rated.data["txHash"].is_string());
    assert_eq!((&rated.data["erc8004"], &rated.data["erc8004Skipped"]), (&Value::Null, &Value::Null));
    assert!(!text_at(&rated, "/erc8004Error").is_empty(), "{}", rated.text);
    assert!(rated.text.contains("The AgentRegistry rating stands"), "{}", rated.text);
    Ok(())
}
