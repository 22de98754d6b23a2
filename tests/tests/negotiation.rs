//! Negotiation (issue #10, seed 004) over a real relay, anvil, indexer and Postgres: the seed's
//! five-message flow verbatim and then `sign_contract`; every illegal transition; timeouts on a
//! controlled clock; forged, replayed, stale and misaddressed messages; two MCP servers
//! negotiating with each other through the relay. The seeker is a wallet that never registered
//! anything (a buyer lists nothing to hire); only the worker is a registered agent.

use std::sync::{Arc, Mutex};

use agentpact_api::NegotiationConfig;
use agentpact_contracts::{AgentPact, Initiator, PactStatus, rules::TermsError};
use agentpact_mcp::Role;
use agentpact_negotiation::{Agreement, Clock, Envelope, MessageType, Store, Timeouts};
use agentpact_tests::{
    HarnessError,
    agents::profile,
    api::{self, TestApi},
    chain::{TestChain, ether, send},
    mcp::{TestAgent, binary_env, dev_key, test_limits},
    pacts::Market,
    postgres::TestDatabase,
    python::mcp_call,
};
use alloy::{
    primitives::{Address, U256, keccak256},
    providers::Provider,
    signers::{SignerSync, local::PrivateKeySigner},
};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// 2025-01-30T10:00:00Z, when the seed's example starts.
const SEED_START: i64 = 1_738_231_200;

/// A market whose worker (account 2) is a registered agent and whose seeker (account 1) never
/// registered anything, its index followed, and an api (with the relay) whose clock the test moves.
struct Stage {
    m: Market,
    db: TestDatabase,
    api: TestApi,
    clock: Arc<Mutex<DateTime<Utc>>>,
    _indexer: tokio::task::JoinHandle<()>,
}

impl Stage {
    async fn open(chain: TestChain, start: DateTime<Utc>, timeouts: Timeouts) -> Result<Self> {
        let m = Market::open_on(chain).await?;
        send(
            m.chain.agents.register(profile("Logo Worker", &[("logo-design", ether(5))])).from(m.cast.seller),
        )
        .await?;
        let db = TestDatabase::create().await?;
        let indexer = agentpact_tests::index::follow(&m.chain, db.pool());
        let clock = Arc::new(Mutex::new(start));
        let read = clock.clone();
        let mut config = api::config(m.chain.anvil.chain_id());
        config.negotiation = NegotiationConfig {
            timeouts,
            clock: Clock::from_fn(move || read.lock().map(|t| *t).unwrap_or_default()),
        };
        let api = TestApi::start(db.pool(), config).await?;
        let stage = Self { m, db, api, clock, _indexer: indexer };
        stage.synced().await?;
        Ok(stage)
    }

    /// The seed's story: a chain and a relay clock at 2025-01-30T10:00:00Z.
    async fn seed_story() -> Result<Self> {
        let start = DateTime::from_timestamp(SEED_START, 0).unwrap_or_default();
        Self::open(TestChain::start_at(SEED_START as u64).await?, start, Timeouts::default()).await
    }

    async fn synced(&self) -> Result {
        agentpact_tests::index::caught_up(&self.m.chain, self.db.pool()).await
    }

    /// Keeps the relay's clock on real time while the handle lives: MCP servers stamp their
    /// messages with the system clock.
    fn real_time(&self) -> tokio::task::JoinHandle<()> {
        let clock = self.clock.clone();
        tokio::spawn(async move {
            loop {
                if let Ok(mut c) = clock.lock() {
                    *c = Utc::now();
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
    }

    fn set_clock(&self, rfc3339: &str) {
        if let (Ok(mut clock), Ok(t)) = (self.clock.lock(), DateTime::parse_from_rfc3339(rfc3339)) {
            *clock = t.with_timezone(&Utc);
        }
    }

    fn key(&self, n: usize) -> Result<PrivateKeySigner> {
        dev_key(&self.m.chain, n)
    }

    /// A signed message from `key` to `to`.
    fn signed(
        &self,
        key: &PrivateKeySigner,
        kind: MessageType,
        to: Address,
        id: &str,
        at: &str,
        payload: Value,
    ) -> Result<Envelope> {
        Envelope::new(kind, key.address(), to, id, at.into(), payload)
            .signed_with(self.m.chain.anvil.chain_id(), |hash| key.sign_hash_sync(hash))
            .map_err(|e| HarnessError::Process(e.to_string()))
    }

    /// Posts `e` to the relay at the relay time `e.timestamp`; returns the status and the answer.
    async fn post(&self, e: &Envelope) -> Result<(u16, Value)> {
        self.set_clock(&e.timestamp);
        self.post_raw(&serde_json::to_value(e).unwrap_or_default()).await
    }

    async fn post_raw(&self, body: &Value) -> Result<(u16, Value)> {
        self.post_to("hire/messages", body).await
    }

    /// Posts `body` to the relay's `path`; returns the status and the answer.
    async fn post_to(&self, path: &str, body: &Value) -> Result<(u16, Value)> {
        let response = self
            .api
            .client()
            .post(format!("{}/{path}", self.api.base))
            .json(body)
            .send()
            .await
            .map_err(|e| HarnessError::Process(e.to_string()))?;
        let status = response.status().as_u16();
        Ok((status, response.json().await.unwrap_or_default()))
    }

    /// Dev account `n` calls `tool` of the `agentpact mcp` binary through the official Python
    /// SDK's default client, with this relay, the relay's clock set to now (the message is signed
    /// now).
    async fn sdk_call(&self, n: usize, tool: &str, args: Value) -> Result<Value> {
        let mut env = binary_env(&self.m.chain, &self.m.chain.anvil.endpoint(), self.db.url());
        env.extend([
            ("PRIVATE_KEY", format!("0x{}", alloy::hex::encode(self.key(n)?.to_bytes()))),
            ("HIRE_RELAY_URL", self.api.base.clone()),
        ]);
        *self.clock.lock().map_err(|e| HarnessError::Process(e.to_string()))? = Utc::now();
        mcp_call(env, tool, &args).await
    }

    async fn messages(&self, id: &str) -> Result<Vec<String>> {
        let q = "query($id: String!) { conversation(id: $id) { messages { type } } }";
        let data = self.api.data_as(api::OPERATOR, q, json!({ "id": id })).await?;
        Ok(data["conversation"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["type"].as_str().map(str::to_owned))
            .collect())
    }
}

fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or_default()
}

/// The words of `text` that look like a tool's name (every one is `word_word` or `word-word`):
/// a refusal names none, so it never sends an agent to a tool its role may lack.
fn tool_like_words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| {
            let parts: Vec<&str> = w.split(['_', '-']).collect();
            parts.len() > 1
                && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase()))
        })
        .collect()
}

/// The top-level keys of an answer, sorted.
fn keys(answer: &Value) -> Vec<String> {
    let mut keys: Vec<String> = answer.as_object().into_iter().flatten().map(|(k, _)| k.clone()).collect();
    keys.sort();
    keys
}

/// The fields docs/mcp.md §Outputs lists for `sign_contract`, which both sides answer.
const SIGNED_FIELDS: [&str; 12] = [
    "contractId",
    "conversationId",
    "currency",
    "currencyAddress",
    "deposited",
    "hash",
    "pactId",
    "payment",
    "role",
    "status",
    "termsDocument",
    "txHash",
];

#[tokio::test]
async fn the_seeds_five_messages_verbatim_then_a_pact_with_those_terms() -> Result {
    let s = Stage::seed_story().await?;
    let (seeker, worker) = (s.key(1)?, s.key(2)?);
    let (to_worker, to_seeker) = (worker.address(), seeker.address());
    let q = "query($a: Address!) { agent(address: $a) { name } }";
    let seeker_agent = s.api.data(q, json!({ "a": to_seeker.to_checksum(None) })).await?;
    assert_eq!(seeker_agent["agent"], Value::Null, "the seeker never registered anything");
    // Seed 004's example, word for word but for the agents' ids (their addresses).
    let flow = [
        s.signed(
            &seeker,
            MessageType::Proposal,
            to_worker,
            "conv_xyz",
            "2025-01-30T10:00:00Z",
            json!({
                "task": "logo design",
                "requirements": ["SVG format", "3 variations", "tech startup style"],
                "budget": "5 USDC",
                "deadline": "2025-01-31T12:00:00Z"
            }),
        )?,
        s.signed(
            &worker,
            MessageType::Clarification,
            to_seeker,
            "conv_xyz",
            "2025-01-30T10:00:05Z",
            json!({
                "questions": ["What colors should I use?", "Any specific style references?"]
            }),
        )?,
        s.signed(
            &seeker,
            MessageType::Clarification,
            to_worker,
            "conv_xyz",
            "2025-01-30T10:00:10Z",
            json!({
                "answers": ["Colors: #FF5733, #333333", "Style: minimalist, modern"]
            }),
        )?,
        s.signed(
            &worker,
            MessageType::Counter,
            to_seeker,
            "conv_xyz",
            "2025-01-30T10:00:15Z",
            json!({
                "accepted_requirements": ["SVG format", "3 variations"],
                "price": "5 USDC",
                "estimated_delivery": "2025-01-30T18:00:00Z"
            }),
        )?,
        s.signed(
            &seeker,
            MessageType::Accept,
            to_worker,
            "conv_xyz",
            "2025-01-30T10:00:20Z",
            json!({
                "accepted_terms": { "price": "5 USDC", "deadline": "2025-01-30T18:00:00Z" }
            }),
        )?,
    ];
    let mut statuses = Vec::new();
    for (n, message) in flow.iter().enumerate() {
        let (status, answer) = s.post(message).await?;
        assert_eq!(status, 201, "message {}: {answer}", n + 1);
        assert_eq!(answer["seq"], n + 1);
        statuses.push(answer["status"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(statuses, ["NEGOTIATING", "NEGOTIATING", "NEGOTIATING", "NEGOTIATING", "CONTRACTED"]);

    // A pact with the agreed terms that anyone could accept is not this conversation's contract:
    // the relay links only a pact reserved for the worker.
    let chain_id = s.m.chain.anvil.chain_id();
    let usdc = *s.m.chain.usdc.address();
    let five = U256::from(5_000_000u64);
    let record = Store::new(s.db.pool().clone())
        .conversation(chain_id, "conv_xyz")
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    let agreed = record
        .and_then(|r| Agreement::reached(chain_id, &r.conversation, usdc, 6).ok())
        .ok_or_else(|| HarnessError::Process("conv_xyz has no agreement".into()))?;
    assert!(agreed.document.contains("logo design"), "the agreed terms document: {:?}", agreed.document);
    assert_eq!((agreed.price.to_string(), agreed.payment), ("5 USDC".to_owned(), five));
    let mut open = s.m.terms_in(usdc, Initiator::Buyer, five).await?;
    (open.specHash, open.deadline) = (agreed.spec_hash, 1_738_260_000);
    let (open_id, _) = s.m.create(open.clone()).await?;
    // The same terms reserved for the worker but in ETH: 5 wei is not 5 USDC.
    let mut in_eth = AgentPact::Terms { counterparty: to_worker, currency: Address::ZERO, ..open };
    in_eth.payment = U256::from(5_000_000u64);
    let (eth_id, _) = s.m.create(in_eth).await?;
    s.synced().await?;
    for pact in [open_id, eth_id] {
        let (status, answer) = s
            .post_to("hire/contracts", &json!({ "conversationId": "conv_xyz", "pactId": pact.to_string() }))
            .await?;
        assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("PACT_MISMATCH")), "{answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap_or_default().contains("reserved for the worker"),
            "{answer}"
        );
    }

    // sign_contract: the seeker's server makes the pact; the worker's accepts it.
    let buyer = TestAgent::start(&s.m.chain, &s.db, 1, Role::Seeker, test_limits()).await?;
    let seller = TestAgent::start(&s.m.chain, &s.db, 2, Role::Worker, test_limits()).await?;
    buyer.use_relay(&s.api.base)?;
    seller.use_relay(&s.api.base)?;
    let signed = buyer
        .ok(
            "sign_contract",
            json!({ "conversation_id": "conv_xyz", "arbitrator": s.m.cast.arbitrator.to_string(),
                    "oracles": [s.m.cast.oracles[0].to_string(), s.m.cast.oracles[1].to_string()],
                    "oracle_weights": [60, 40] }),
        )
        .await?;
    assert!(signed.text.starts_with("Contract signed: pact #2"), "{}", signed.text);
    assert!(signed.text.contains("Deposited: 5.5 USDC (5 payment + 0.5 stake)"), "{}", signed.text);
    let document = signed.data["termsDocument"].as_str().unwrap_or_default().to_owned();
    let terms: Value = serde_json::from_str(&document).unwrap_or_default();
    assert_eq!(terms["requirements"], json!(["SVG format", "3 variations"]), "the counter's requirements");
    assert_eq!(terms["task"], "logo design");

    let id = U256::from(2u8);
    let pact = s.m.chain.pact.getPact(id).call().await?;
    assert_eq!((pact.currency, pact.payment), (usdc, five), "exactly 5 USDC");
    assert_eq!(
        signed.data["termsDocument"],
        json!(agreed.document),
        "the relay's document and the server's agree"
    );
    assert_eq!(pact.deadline, 1_738_260_000, "2025-01-30T18:00:00Z, the accepted deadline");
    assert_eq!(pact.specHash, keccak256(document.as_bytes()));
    assert_eq!(pact.specUri, "hire://conversations/conv_xyz");
    assert_eq!((pact.buyer, pact.initiator), (to_seeker, 0));
    assert_eq!(pact.counterparty, to_worker, "only the negotiated worker may accept");
    assert_eq!(pact.acceptBy, 1_738_260_000 - 3_600, "acceptance closes an hour before the deadline");
    let accepted = seller.ok("sign_contract", json!({ "conversation_id": "conv_xyz" })).await?;
    assert!(
        accepted.text.starts_with("Contract signed. Accepted pact #2 as SELLER. Staked 0.5 USDC."),
        "{}",
        accepted.text
    );
    assert_eq!(s.m.status(id).await?, PactStatus::Funded);
    assert_eq!(s.m.chain.pact.getPact(id).call().await?.seller, to_worker);
    // Both sides answer with one shape, every documented field filled, the same agreement.
    assert_eq!(keys(&signed.data), SIGNED_FIELDS, "the seeker's answer: {}", signed.data);
    assert_eq!(keys(&accepted.data), SIGNED_FIELDS, "the worker's answer: {}", accepted.data);
    for same in ["contractId", "pactId", "conversationId", "hash", "termsDocument", "payment", "currency"] {
        assert_eq!(signed.data[same], accepted.data[same], "{same} on both sides");
    }
    assert_eq!((signed.data["pactId"].as_str(), signed.data["contractId"].as_str()), (Some("2"), Some("2")));
    assert_eq!(
        (signed.data["role"].as_str(), signed.data["status"].as_str(), signed.data["deposited"].as_str()),
        (Some("BUYER"), Some("NEGOTIATING"), Some("5.5"))
    );
    assert_eq!(
        (
            accepted.data["role"].as_str(),
            accepted.data["status"].as_str(),
            accepted.data["deposited"].as_str()
        ),
        (Some("SELLER"), Some("FUNDED"), Some("0.5"))
    );
    assert_ne!(signed.data["txHash"], accepted.data["txHash"], "each side's own transaction");
    // The escrow holds this pact's 5 + 0.5 + 0.5 USDC beside the 5.5 of the unlinked one above.
    assert_eq!(s.m.chain.holding(usdc, s.m.chain.deployment.agent_pact).await?, U256::from(11_500_000u64));

    // Both ways in GraphQL, to the buyer's signed request: the pact shows its negotiation, the
    // conversation its pact. Anyone sees how many messages it took, and nothing more.
    let q = "{ pact(id: 2) { status negotiation { id status termsDocument messages { type from } } }
               conversation(id: \"conv_xyz\") { status price deadline requirements pact { id payment } } }";
    let data = s.api.data_as(&api::reading_as(&seeker, s.m.chain.anvil.chain_id())?, q, json!({})).await?;
    let public =
        s.api.post("{ pact(id: 2) { negotiationMessageCount negotiation { task } } }", json!({})).await?;
    assert_eq!(public["data"]["pact"], json!({ "negotiationMessageCount": 6 }), "{public}");
    assert_eq!(public["errors"][0]["extensions"]["code"], "FORBIDDEN", "{public}");
    assert!(!public.to_string().contains("logo design"), "{public}");
    let negotiation = &data["pact"]["negotiation"];
    assert_eq!(
        (negotiation["id"].as_str(), negotiation["status"].as_str()),
        (Some("conv_xyz"), Some("CONTRACTED"))
    );
    assert_eq!(negotiation["termsDocument"], json!(document));
    let kinds: Vec<&str> =
        negotiation["messages"].as_array().into_iter().flatten().filter_map(|m| m["type"].as_str()).collect();
    assert_eq!(kinds, ["proposal", "clarification", "clarification", "counter", "accept", "contract"]);
    assert_eq!(negotiation["messages"][5]["from"], json!(Address::ZERO), "the relay's own message");
    assert_eq!(data["conversation"]["pact"], json!({ "id": "2", "payment": "5000000" }));
    assert_eq!(data["conversation"]["price"], "5 USDC");
    assert_eq!(data["conversation"]["deadline"], "2025-01-30T18:00:00+00:00");

    let thread = buyer.resource("hire://conversations/conv_xyz").await?;
    assert_eq!(thread["conversation"]["status"], "CONTRACTED", "{thread}");
    assert_eq!(thread["conversation"]["price"], "5 USDC");
    assert_eq!(thread["messages"].as_array().map(Vec::len), Some(6), "five messages and the relay's");
    let got = buyer.ok("get_contract", json!({ "contract_id": "2" })).await?;
    assert_eq!(got.data["conversation"]["conversationId"], "conv_xyz");
    assert_eq!(got.data["hash"], json!(keccak256(document.as_bytes())));
    assert!(got.text.contains("FUNDED for 5 USDC"), "{}", got.text);

    // The work is done, verified and approved: the worker's withdrawal receives 5.5 USDC, to the unit.
    s.m.submitted(id).await?;
    s.m.verified(id, &[90, 80]).await?;
    buyer.ok("approve-work", json!({ "pactId": 2 })).await?;
    let before = s.m.chain.holding(usdc, to_worker).await?;
    let withdrawn = seller.ok("withdraw", json!({})).await?;
    assert!(withdrawn.text.starts_with("Withdrew 5.5 USDC to "), "{}", withdrawn.text);
    assert_eq!(s.m.chain.holding(usdc, to_worker).await? - before, U256::from(5_500_000u64));
    Ok(())
}

#[tokio::test]
async fn every_illegal_transition_is_refused_and_changes_nothing() -> Result {
    let s = Stage::seed_story().await?;
    let (seeker, worker, stranger) = (s.key(1)?, s.key(2)?, s.key(6)?);
    let (w, k) = (worker.address(), seeker.address());
    let at = "2025-01-30T10:00:00Z";
    let proposal = json!({ "task": "logo", "budget": "5 ETH", "deadline": "2025-01-31T12:00:00Z" });
    let accept = json!({ "accepted_terms": { "price": "5 ETH", "deadline": "2025-01-31T12:00:00Z" } });

    // Before any conversation: only an inquiry or a proposal opens one.
    let (status, answer) = s
        .post(&s.signed(&seeker, MessageType::Clarification, w, "c1", at, json!({ "questions": ["?"] }))?)
        .await?;
    assert_eq!((status, code(&answer)), (404, "NO_CONVERSATION"), "{answer}");
    s.post(&s.signed(&seeker, MessageType::Inquiry, w, "c1", at, json!({ "task": "logo" }))?).await?;

    let cases = [
        (&seeker, MessageType::Inquiry, w, json!({ "task": "again" }), "only opens"),
        (&seeker, MessageType::Capability, w, json!({ "price": "1 ETH" }), "comes from the worker"),
        (&worker, MessageType::Proposal, k, proposal.clone(), "comes from the seeker"),
        (&seeker, MessageType::Counter, w, json!({ "price": "1 ETH" }), "comes from the worker"),
        (&worker, MessageType::Counter, k, json!({ "price": "1 ETH" }), "needs terms on the table"),
        (&worker, MessageType::Accept, k, accept.clone(), "needs terms on the table"),
        (
            &seeker,
            MessageType::Contract,
            w,
            json!({ "pact_id": "0", "spec_hash": format!("0x{}", "1".repeat(64)) }),
            "only from the relay",
        ),
    ];
    for (n, (key, kind, to, payload, rule)) in cases.into_iter().enumerate() {
        let at = format!("2025-01-30T10:00:{:02}Z", n + 1);
        let (status, answer) = s.post(&s.signed(key, kind, to, "c1", &at, payload)?).await?;
        assert_eq!(status, 409, "{kind:?}: {answer}");
        assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains(rule)), "{kind:?}: {answer}");
    }
    assert_eq!(s.messages("c1").await?, ["inquiry"], "refusals store nothing");

    // Terms on the table: the proposer cannot accept its own, nor accept other terms.
    s.post(&s.signed(&seeker, MessageType::Proposal, w, "c1", "2025-01-30T10:00:20Z", proposal)?).await?;
    let (_, answer) = s
        .post(&s.signed(&seeker, MessageType::Accept, w, "c1", "2025-01-30T10:00:21Z", accept.clone())?)
        .await?;
    assert!(
        answer["error"]["message"].as_str().is_some_and(|m| m.contains("not the sender's own")),
        "{answer}"
    );
    let cheaper = json!({ "accepted_terms": { "price": "4 ETH" } });
    let (_, answer) =
        s.post(&s.signed(&worker, MessageType::Accept, k, "c1", "2025-01-30T10:00:22Z", cheaper)?).await?;
    assert_eq!(code(&answer), "ILLEGAL_TRANSITION");
    assert!(
        answer["error"]["message"].as_str().is_some_and(|m| m.contains("not the terms on the table")),
        "{answer}"
    );
    // A third agent may not speak in it (registered, but not a party).
    send(s.m.chain.agents.register(profile("Stranger", &[("x", ether(1))])).from(stranger.address())).await?;
    s.synced().await?;
    let (_, answer) = s
        .post(&s.signed(
            &stranger,
            MessageType::Clarification,
            w,
            "c1",
            "2025-01-30T10:00:23Z",
            json!({ "questions": ["hi"] }),
        )?)
        .await?;
    assert_eq!(code(&answer), "WRONG_PARTIES", "{answer}");

    // Rejected: closed for good.
    let (_, answer) = s
        .post(&s.signed(
            &worker,
            MessageType::Reject,
            k,
            "c1",
            "2025-01-30T10:00:24Z",
            json!({ "reason": "busy" }),
        )?)
        .await?;
    assert_eq!(answer["status"], "DECLINED");
    let (status, answer) = s
        .post(&s.signed(
            &seeker,
            MessageType::Clarification,
            w,
            "c1",
            "2025-01-30T10:00:25Z",
            json!({ "questions": ["why?"] }),
        )?)
        .await?;
    assert_eq!((status, code(&answer)), (410, "CONVERSATION_CLOSED"), "{answer}");
    assert_eq!(s.messages("c1").await?, ["inquiry", "proposal", "reject"]);
    Ok(())
}

/// No dead ends (issue #51): an offer no pact can carry is refused when it is made, not after it
/// was accepted, and the conversation goes on; terms without a deadline cannot be accepted; an
/// agreement that cannot be signed (the chain changed under it) ends by either side's reject.
#[tokio::test]
async fn every_agreement_can_become_a_pact_or_be_left_by_either_side() -> Result {
    let s = Stage::seed_story().await?;
    let (seeker, worker) = (s.key(1)?, s.key(2)?);
    let (w, k) = (worker.address(), seeker.address());
    let deadline = "2025-01-31T12:00:00Z";
    let say = |key: &PrivateKeySigner, kind, id: &str, at: &str, payload: Value| {
        let to = if key.address() == k { w } else { k };
        s.signed(key, kind, to, id, &format!("2025-01-30T10:{at}Z"), payload)
    };
    let status = |answer: &Value| answer["status"].as_str().unwrap_or_default().to_owned();

    // A counter at more than any pact can hold: refused as made; the table keeps the proposal.
    let proposal = json!({ "task": "logo", "budget": "5 ETH", "deadline": deadline });
    s.post(&say(&seeker, MessageType::Proposal, "c1", "00:00", proposal)?).await?;
    let huge = json!({ "price": "9999999999999999999999999999 ETH", "estimated_delivery": deadline });
    let (code_of, answer) = s.post(&say(&worker, MessageType::Counter, "c1", "00:01", huge)?).await?;
    assert_eq!((code_of, code(&answer)), (400, "BAD_MESSAGE"), "{answer}");
    assert!(
        answer["error"]["message"].as_str().is_some_and(|m| m.contains("cannot be a pact's payment")),
        "{answer}"
    );
    // A deadline a pact signed now could not have: refused the same way.
    let soon = json!({ "price": "4 ETH", "estimated_delivery": "2025-01-30T11:00:00Z" });
    let (_, answer) = s.post(&say(&worker, MessageType::Counter, "c1", "00:02", soon)?).await?;
    assert_eq!(code(&answer), "BAD_MESSAGE", "{answer}");
    let accept = json!({ "accepted_terms": { "price": "5 ETH", "deadline": deadline } });
    let (_, answer) = s.post(&say(&worker, MessageType::Accept, "c1", "00:03", accept)?).await?;
    assert_eq!(status(&answer), "CONTRACTED", "the proposal still stood: {answer}");
    // The seeker could not sign (say an oracle left): it walks away, and the conversation is over.
    let (_, answer) =
        s.post(&say(&seeker, MessageType::Reject, "c1", "00:04", json!({ "reason": "no oracle" }))?).await?;
    assert_eq!(status(&answer), "DECLINED", "{answer}");
    let (code_of, answer) = s
        .post(&say(&worker, MessageType::Clarification, "c1", "00:05", json!({ "questions": ["?"] }))?)
        .await?;
    assert_eq!((code_of, code(&answer)), (410, "CONVERSATION_CLOSED"), "{answer}");

    // Terms without a deadline: talk goes on, but no accept until one is named.
    let open = json!({ "task": "logo", "budget": "5 ETH" });
    s.post(&say(&seeker, MessageType::Proposal, "c2", "01:00", open)?).await?;
    let accept = json!({ "accepted_terms": { "price": "5 ETH" } });
    let (code_of, answer) = s.post(&say(&worker, MessageType::Accept, "c2", "01:01", accept)?).await?;
    assert_eq!((code_of, code(&answer)), (409, "ILLEGAL_TRANSITION"), "{answer}");
    assert!(
        answer["error"]["message"].as_str().is_some_and(|m| m.contains("needs terms that name a deadline")),
        "{answer}"
    );
    let counter = json!({ "price": "5 ETH", "estimated_delivery": deadline });
    s.post(&say(&worker, MessageType::Counter, "c2", "01:02", counter)?).await?;
    let accept = json!({ "accepted_terms": { "price": "5 ETH", "deadline": deadline } });
    let (_, answer) = s.post(&say(&seeker, MessageType::Accept, "c2", "01:03", accept)?).await?;
    assert_eq!(status(&answer), "CONTRACTED", "{answer}");
    // The worker, waiting for a pact that cannot come, walks away too.
    let (_, answer) = s.post(&say(&worker, MessageType::Reject, "c2", "01:04", json!({}))?).await?;
    assert_eq!(status(&answer), "DECLINED", "{answer}");

    // A worker's reject that races the seeker's pact loses: once the index has a pact carrying
    // the agreement (made, not linked yet), the conversation is that pact's.
    let proposal = json!({ "task": "logo", "budget": "5 ETH", "deadline": deadline });
    s.post(&say(&seeker, MessageType::Proposal, "c3", "02:00", proposal)?).await?;
    let accept = json!({ "accepted_terms": { "price": "5 ETH", "deadline": deadline } });
    let (_, answer) = s.post(&say(&worker, MessageType::Accept, "c3", "02:01", accept)?).await?;
    assert_eq!(status(&answer), "CONTRACTED", "{answer}");
    let chain_id = s.m.chain.anvil.chain_id();
    let record = Store::new(s.db.pool().clone())
        .conversation(chain_id, "c3")
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    let agreed = record
        .and_then(|r| Agreement::reached(chain_id, &r.conversation, Address::ZERO, 18).ok())
        .ok_or_else(|| HarnessError::Process("c3 has no agreement".into()))?;
    let mut terms = s.m.terms_in(Address::ZERO, Initiator::Buyer, agreed.payment).await?;
    (terms.specHash, terms.deadline, terms.counterparty) = (agreed.spec_hash, agreed.deadline, w);
    let (pact_id, _) = s.m.create(terms).await?;
    s.synced().await?;
    let (code_of, answer) = s.post(&say(&worker, MessageType::Reject, "c3", "02:02", json!({}))?).await?;
    assert_eq!((code_of, code(&answer)), (409, "ILLEGAL_TRANSITION"), "{answer}");
    assert!(
        answer["error"]["message"].as_str().is_some_and(|m| m.contains(&format!("already pact #{pact_id}"))),
        "{answer}"
    );
    let link = json!({ "conversationId": "c3", "pactId": pact_id.to_string() });
    let (code_of, answer) = s.post_to("hire/contracts", &link).await?;
    assert_eq!(code_of, 201, "the seeker's pact is linked after all: {answer}");
    Ok(())
}

/// The same dead ends as an agent meets them: each step a call of the `agentpact mcp` binary
/// through the official Python SDK's `Client` in its default mode. The worker's impossible counter
/// is refused and the talk goes on; the seeker's signature is refused (no oracle it names is
/// registered); the seeker walks away with `reject` instead of being stuck.
#[tokio::test]
async fn an_agent_through_the_python_sdk_is_never_stuck_in_a_conversation() -> Result {
    let s = Stage::open(TestChain::start().await?, Utc::now(), Timeouts::default()).await?;
    let call = |n, tool, args| s.sdk_call(n, tool, args);
    let text = |answer: &Value| answer["text"].as_str().unwrap_or_default().to_owned();
    let deadline = (Utc::now() + chrono::Duration::days(2)).to_rfc3339();
    let (seeker, worker) = (1, 2);

    let proposal = json!({ "worker_id": s.m.cast.seller.to_string(), "task": "a logo", "budget": "5 ETH",
                           "deadline": deadline });
    let sent = call(seeker, "send_proposal", proposal).await?;
    let id = sent["structured"]["conversationId"].as_str().unwrap_or_default().to_owned();
    assert!(!id.is_empty(), "{sent}");
    let huge = json!({ "conversation_id": id, "type": "counter",
                       "message": { "price": "9999999999999999999999999999 ETH" } });
    let refused = call(worker, "respond_negotiation", huge).await?;
    assert_eq!(refused["isError"], true, "an impossible counter was taken: {refused}");
    assert!(text(&refused).contains("cannot be a pact's payment"), "{refused}");
    let accept = json!({ "conversation_id": id, "type": "accept",
                         "message": { "accepted_terms": { "price": "5 ETH", "deadline": deadline } } });
    let accepted = call(worker, "respond_negotiation", accept).await?;
    assert_eq!(accepted["structured"]["status"], "CONTRACTED", "{accepted}");

    let stranger = s.m.cast.stranger.to_string();
    let sign = json!({ "conversation_id": id, "arbitrator": s.m.cast.arbitrator.to_string(),
                       "oracles": [stranger], "oracle_weights": [100] });
    let unsigned = call(seeker, "sign_contract", sign).await?;
    assert_eq!(unsigned["isError"], true, "{unsigned}");
    let reject = json!({ "conversation_id": id, "type": "reject", "message": { "reason": "no oracle" } });
    let left = call(seeker, "respond_negotiation", reject).await?;
    assert_eq!(left["isError"], false, "the seeker could not leave: {left}");
    assert_eq!(left["structured"]["status"], "DECLINED", "{left}");
    let listed = call(worker, "get_conversations", json!({ "status": "all" })).await?;
    assert!(text(&listed).contains(&format!("{id} (")) && text(&listed).contains("DECLINED"), "{listed}");
    Ok(())
}

#[tokio::test]
async fn a_conversation_whose_clock_runs_out_is_abandoned() -> Result {
    let s = Stage::seed_story().await?;
    let (seeker, worker) = (s.key(1)?, s.key(2)?);
    let (w, k) = (worker.address(), seeker.address());
    let proposal = json!({ "task": "logo", "budget": "5 ETH" });

    // Initial response: 60 s. An answer at +60 s is in time, one at +61 s is not.
    s.post(&s.signed(&seeker, MessageType::Proposal, w, "slow", "2025-01-30T10:00:00Z", proposal.clone())?)
        .await?;
    // A registered stranger writing into the expired conversation is refused as a stranger and
    // changes nothing: the conversation still shows NEGOTIATING until a party writes.
    let stranger = s.key(6)?;
    send(s.m.chain.agents.register(profile("Stranger", &[("spam", ether(1))])).from(stranger.address()))
        .await?;
    s.synced().await?;
    let late_stranger =
        s.signed(&stranger, MessageType::Reject, k, "slow", "2025-01-30T10:01:01Z", json!({}))?;
    let (status, answer) = s.post(&late_stranger).await?;
    assert_eq!((status, code(&answer)), (409, "WRONG_PARTIES"), "{answer}");
    let q = "{ conversation(id: \"slow\") { status } }";
    assert_eq!(s.api.data_as(api::OPERATOR, q, json!({})).await?["conversation"]["status"], "NEGOTIATING");
    let (status, answer) = s
        .post(&s.signed(
            &worker,
            MessageType::Clarification,
            k,
            "slow",
            "2025-01-30T10:01:01Z",
            json!({ "questions": ["?"] }),
        )?)
        .await?;
    assert_eq!((status, code(&answer)), (410, "CONVERSATION_EXPIRED"), "{answer}");
    let q = "{ conversation(id: \"slow\") { status expiresAt } }";
    assert_eq!(s.api.data_as(api::OPERATOR, q, json!({})).await?["conversation"]["status"], "ABANDONED");
    let (_, answer) = s
        .post(&s.signed(&worker, MessageType::Reject, k, "slow", "2025-01-30T10:01:02Z", json!({}))?)
        .await?;
    assert_eq!(code(&answer), "CONVERSATION_CLOSED");

    s.post(&s.signed(&seeker, MessageType::Proposal, w, "quick", "2025-01-30T10:02:00Z", proposal)?).await?;
    let (status, _) = s
        .post(&s.signed(
            &worker,
            MessageType::Clarification,
            k,
            "quick",
            "2025-01-30T10:03:00Z",
            json!({ "questions": ["?"] }),
        )?)
        .await?;
    assert_eq!(status, 201, "exactly 60 s is in time");
    // Clarification round: 30 s.
    let (_, answer) = s
        .post(&s.signed(
            &seeker,
            MessageType::Clarification,
            w,
            "quick",
            "2025-01-30T10:03:31Z",
            json!({ "answers": ["!"] }),
        )?)
        .await?;
    assert_eq!(code(&answer), "CONVERSATION_EXPIRED", "{answer}");
    Ok(())
}

#[tokio::test]
async fn the_timeouts_are_configurable() -> Result {
    let start = DateTime::from_timestamp(SEED_START, 0).unwrap_or_default();
    let short = Timeouts {
        initial_response: std::time::Duration::from_secs(5),
        clarification_round: std::time::Duration::from_secs(2),
        acceptance: std::time::Duration::from_secs(3),
    };
    let s = Stage::open(TestChain::start_at(SEED_START as u64).await?, start, short).await?;
    let (seeker, worker) = (s.key(1)?, s.key(2)?);
    let proposal = json!({ "task": "logo", "budget": "5 ETH" });
    s.post(&s.signed(
        &seeker,
        MessageType::Proposal,
        worker.address(),
        "c",
        "2025-01-30T10:00:00Z",
        proposal,
    )?)
    .await?;
    let counter = json!({ "price": "4 ETH" });
    let (status, _) = s
        .post(&s.signed(
            &worker,
            MessageType::Counter,
            seeker.address(),
            "c",
            "2025-01-30T10:00:05Z",
            counter,
        )?)
        .await?;
    assert_eq!(status, 201);
    let accept = json!({ "accepted_terms": { "price": "4 ETH" } });
    let (_, answer) = s
        .post(&s.signed(
            &seeker,
            MessageType::Accept,
            worker.address(),
            "c",
            "2025-01-30T10:00:09Z",
            accept,
        )?)
        .await?;
    assert_eq!(code(&answer), "CONVERSATION_EXPIRED", "3 s to accept: {answer}");
    Ok(())
}

#[tokio::test]
async fn forged_replayed_stale_and_misaddressed_messages_are_refused() -> Result {
    let s = Stage::seed_story().await?;
    let (seeker, worker, outsider) = (s.key(1)?, s.key(2)?, s.key(7)?);
    let (w, k) = (worker.address(), seeker.address());
    let proposal = || json!({ "task": "logo", "budget": "5 ETH" });
    let at = "2025-01-30T10:00:00Z";

    // Signed by another key than `from`'s: forged.
    let mut forged = s.signed(&outsider, MessageType::Proposal, w, "f", at, proposal())?;
    forged.from = k;
    let (status, answer) = s.post(&forged).await?;
    assert_eq!((status, code(&answer)), (401, "BAD_SIGNATURE"), "{answer}");
    // Changed after signing.
    let mut tampered = s.signed(&seeker, MessageType::Proposal, w, "f", at, proposal())?;
    tampered.payload["budget"] = json!("1 ETH");
    assert_eq!(code(&s.post(&tampered).await?.1), "BAD_SIGNATURE");
    // Opened with an address that is not a registered agent: the worker must be one. The refusal
    // says so and sends the seeker to search, naming no tool (a seeker cannot register).
    let (status, answer) =
        s.post(&s.signed(&seeker, MessageType::Proposal, outsider.address(), "f", at, proposal())?).await?;
    assert_eq!((status, code(&answer)), (403, "NOT_REGISTERED"), "{answer}");
    let said = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        said.contains(&outsider.address().to_string()) && said.contains("not a registered agent"),
        "{said}"
    );
    assert!(said.contains("search"), "it says where to find one: {said}");
    assert_eq!(tool_like_words(said), Vec::<&str>::new(), "it names no tool: {said}");
    // Nor with an agent that stepped out of the market.
    let retired = s.key(9)?;
    send(s.m.chain.agents.register(profile("Retired", &[("logo-design", ether(1))])).from(retired.address()))
        .await?;
    send(s.m.chain.agents.deactivate().from(retired.address())).await?;
    s.synced().await?;
    let (status, answer) = s
        .post(&s.signed(
            &seeker,
            MessageType::Inquiry,
            retired.address(),
            "r",
            at,
            json!({ "task": "logo" }),
        )?)
        .await?;
    assert_eq!((status, code(&answer)), (403, "NOT_REGISTERED"), "{answer}");
    // Ten minutes away from the relay's clock.
    let stale = s.signed(&seeker, MessageType::Proposal, w, "f", "2025-01-30T09:50:00Z", proposal())?;
    s.set_clock(at);
    let (status, answer) = s.post_raw(&serde_json::to_value(&stale).unwrap_or_default()).await?;
    assert_eq!((status, code(&answer)), (400, "STALE_MESSAGE"), "{answer}");
    // Garbage and a wrong protocol.
    let (status, answer) = s.post_raw(&json!({ "protocol": "HIRE/1.0" })).await?;
    assert_eq!((status, code(&answer)), (400, "BAD_MESSAGE"), "{answer}");
    let mut other = s.signed(&seeker, MessageType::Proposal, w, "f", at, proposal())?;
    other.protocol = "HIRE/2.0".into();
    assert_eq!(code(&s.post(&other).await?.1), "BAD_MESSAGE");

    // The real one, once (from a seeker that never registered: its signature is its identity);
    // then its replay.
    let real = s.signed(&seeker, MessageType::Proposal, w, "f", at, proposal())?;
    assert_eq!(s.post(&real).await?.0, 201);
    let (status, answer) = s.post(&real).await?;
    assert_eq!((status, code(&answer)), (409, "REPLAYED"), "{answer}");
    // Misaddressed: the worker answering someone else in this conversation.
    send(s.m.chain.agents.register(profile("Third", &[("x", ether(1))])).from(outsider.address())).await?;
    s.synced().await?;
    let (_, answer) = s
        .post(&s.signed(
            &worker,
            MessageType::Clarification,
            outsider.address(),
            "f",
            "2025-01-30T10:00:01Z",
            json!({ "questions": ["?"] }),
        )?)
        .await?;
    assert_eq!(code(&answer), "WRONG_PARTIES", "{answer}");
    // A wallet that never registered may open its own conversations, but not write into another's:
    // not to the worker, not to the seeker, not even claiming to answer as a party would.
    let stranger = s.key(8)?;
    for (n, to) in [w, k].into_iter().enumerate() {
        let (status, answer) = s
            .post(&s.signed(
                &stranger,
                MessageType::Clarification,
                to,
                "f",
                &format!("2025-01-30T10:00:0{}Z", n + 2),
                json!({ "questions": ["?"] }),
            )?)
            .await?;
        assert_eq!((status, code(&answer)), (409, "WRONG_PARTIES"), "{answer}");
    }
    let (_, answer) = s
        .post(&s.signed(&stranger, MessageType::Proposal, w, "f", "2025-01-30T10:00:04Z", proposal())?)
        .await?;
    assert_eq!(code(&answer), "WRONG_PARTIES", "a proposal into another's conversation: {answer}");
    assert_eq!(s.messages("f").await?, ["proposal"]);

    // The audit log cannot be rewritten, even by a database client.
    let rewrite = sqlx::query("UPDATE negotiation_messages SET payload = '{}'").execute(s.db.pool()).await;
    assert!(rewrite.is_err_and(|e| e.to_string().contains("append-only")));
    Ok(())
}

#[tokio::test]
async fn two_mcp_servers_negotiate_through_the_relay() -> Result {
    let now = Utc::now();
    let s = Stage::open(TestChain::start().await?, now, Timeouts::default()).await?;
    let _ticking = s.real_time();
    let seeker = TestAgent::start(&s.m.chain, &s.db, 1, Role::Seeker, test_limits()).await?;
    let worker = TestAgent::start(&s.m.chain, &s.db, 2, Role::Worker, test_limits()).await?;
    seeker.use_relay(&s.api.base)?;
    worker.use_relay(&s.api.base)?;
    let mut inbox = s
        .api
        .subscribe_as(
            &api::reading_as(&s.key(2)?, s.m.chain.anvil.chain_id())?,
            "subscription($a: Address!) { negotiationMessages(agent: $a) { type from seq } }",
            json!({ "a": worker.address.to_checksum(None) }),
        )
        .await?;

    let deadline =
        (Utc::now() + chrono::Duration::days(2)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let proposing = seeker.ok(
        "send_proposal",
        json!({ "worker_id": worker.address.to_string(), "task": "logo design", "requirements": ["SVG format"],
                "budget": "0.5 ETH", "deadline": deadline, "wait_seconds": 15 }),
    );
    // The worker finds the proposal among its conversations and counters while the seeker waits.
    let countering = async {
        let mut id = String::new();
        for _ in 0..200 {
            let listed = worker.ok("get_conversations", json!({})).await?;
            if let Some(found) = listed.data["conversations"][0]["conversationId"].as_str() {
                id = found.to_owned();
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        worker
            .ok("respond_negotiation", json!({ "conversation_id": id, "type": "counter",
                                               "message": { "price": "0.4 ETH", "estimated_delivery": deadline } }))
            .await?;
        Ok::<_, HarnessError>(id)
    };
    let (sent, id) = futures::future::try_join(proposing, countering).await?;
    assert_eq!(sent.data["conversationId"], json!(id));
    assert_eq!(sent.data["reply"]["type"], "counter", "the seeker's wait brought the counter: {}", sent.text);
    // The counterparty's words come back quoted and marked, never as if the server said them.
    assert_eq!(sent.data["reply"]["untrusted"], true);
    assert!(sent.text.contains("quoted from the other agent") && sent.text.contains("<<<{"), "{}", sent.text);
    let pushed = inbox.next_data().await?;
    assert_eq!(pushed["negotiationMessages"]["type"], "proposal", "{pushed}");
    assert_eq!(pushed["negotiationMessages"]["from"], json!(seeker.address.to_checksum(None)));
    let pushed = inbox.next_data().await?;
    assert_eq!(pushed["negotiationMessages"]["type"], "counter", "the worker's own message too: {pushed}");

    let accepted = seeker
        .ok("respond_negotiation", json!({ "conversation_id": id, "type": "accept",
                                           "message": { "accepted_terms": { "price": "0.4 ETH", "deadline": deadline } } }))
        .await?;
    assert_eq!(accepted.data["status"], "CONTRACTED", "{}", accepted.text);
    let (code, _) = worker
        .refused(
            "send_proposal",
            json!({ "worker_id": seeker.address.to_string(), "task": "x", "budget": "1" }),
        )
        .await?;
    assert_eq!(code, "FORBIDDEN", "seed 000 gives proposals to seekers");
    // The seeker (never registered) proposing to a wallet that is no agent is told so, and sent to
    // search, not to a tool its role lacks.
    let (code, said) = seeker
        .refused(
            "send_proposal",
            json!({ "worker_id": s.m.cast.stranger.to_string(), "task": "x", "budget": "0.1 ETH" }),
        )
        .await?;
    assert_eq!(code, "NOT_REGISTERED", "{said}");
    assert!(said.contains("not a registered agent") && said.contains("search"), "{said}");
    assert_eq!(tool_like_words(&said), Vec::<&str>::new(), "it names no tool: {said}");

    // Terms that break the escrow's rules on oracles, weights or the arbitrator are refused with
    // the sentence create-pact gives for them (rules::check_terms), as bad input before anything is
    // simulated or sent: no transaction, no pact, the conversation still without one.
    let (oracle, other) = (s.m.cast.oracles[0].to_string(), s.m.cast.oracles[1].to_string());
    let arbitrator = s.m.cast.arbitrator.to_string();
    let broken = [
        (json!([oracle, other]), json!([60, 30]), arbitrator.clone(), TermsError::WeightsSum(90)),
        (
            json!([oracle, oracle]),
            json!([50, 50]),
            arbitrator.clone(),
            TermsError::DuplicateOracle(s.m.cast.oracles[0]),
        ),
        (json!([oracle]), json!([100]), seeker.address.to_string(), TermsError::Arbitrator(seeker.address)),
    ];
    let untouched = || async {
        let sent = s.m.chain.provider.get_transaction_count(seeker.address).await?;
        let pacts = s.m.chain.pact.pactCount().call().await?;
        let record = Store::new(s.db.pool().clone())
            .conversation(s.m.chain.anvil.chain_id(), &id)
            .await
            .map_err(|e| HarnessError::Process(e.to_string()))?;
        Ok::<_, HarnessError>((sent, pacts, record.map(|r| r.pact_id)))
    };
    let before = untouched().await?;
    assert_eq!(before.2, Some(None), "the conversation has no pact yet");
    for (oracles, weights, arbitrator, rule) in broken {
        let (code, signing) = seeker
            .refused(
                "sign_contract",
                json!({ "conversation_id": id, "arbitrator": arbitrator, "oracles": oracles,
                        "oracle_weights": weights }),
            )
            .await?;
        let (_, creating) = seeker
            .refused(
                "create-pact",
                json!({ "role": "buyer", "specHash": "QmLogo", "deadline": s.m.chain.now().await? + 2 * 86_400,
                        "oracles": oracles, "oracleWeights": weights, "threshold": 70, "paymentEth": "0.4",
                        "arbitrator": arbitrator }),
            )
            .await?;
        assert_eq!(code, "INVALID_INPUT", "{signing}");
        assert_eq!(signing, format!("Invalid input: {rule}"), "sign_contract says the rule");
        assert_eq!(signing, creating, "sign_contract and create-pact refuse in one sentence");
    }
    assert_eq!(untouched().await?, before, "a refused signature sent nothing");

    let signed = seeker
        .ok(
            "sign_contract",
            json!({ "conversation_id": id, "arbitrator": s.m.cast.arbitrator.to_string(),
                                     "oracles": [s.m.cast.oracles[0].to_string()], "oracle_weights": [100] }),
        )
        .await?;
    let pact: U256 = signed.data["contractId"].as_str().and_then(|p| p.parse().ok()).unwrap_or(U256::MAX);
    let accepted = worker.ok("sign_contract", json!({ "conversation_id": id })).await?;
    assert_eq!(keys(&signed.data), SIGNED_FIELDS, "the seeker's answer: {}", signed.data);
    assert_eq!(keys(&accepted.data), keys(&signed.data), "the worker's answer: {}", accepted.data);
    assert_eq!(accepted.data["pactId"], json!(pact.to_string()));
    assert_eq!(s.m.status(pact).await?, PactStatus::Funded);
    assert_eq!(s.m.chain.pact.getPact(pact).call().await?.payment, ether(4) / U256::from(10));
    let contract = worker.resource("hire://conversations").await?;
    assert_eq!(contract["conversations"][0]["contractId"], json!(pact.to_string()));
    Ok(())
}

#[tokio::test]
async fn floods_oversized_messages_nul_bytes_and_overlong_timestamps_are_refused_and_store_nothing() -> Result
{
    let s = Stage::seed_story().await?;
    let (seeker, worker) = (s.key(1)?, s.key(2)?);
    let (w, k) = (worker.address(), seeker.address());
    let at = |second: u32| format!("2025-01-30T10:{:02}:{:02}Z", second / 60, second % 60);
    let proposal = |task: &str| json!({ "task": task, "budget": "5 ETH" });

    // A 200 KB message (under the 256 KiB body limit, over the relay's 16 KiB payload).
    let big = s.signed(&seeker, MessageType::Proposal, w, "big", &at(0), proposal(&"x".repeat(200_000)))?;
    let (status, answer) = s.post(&big).await?;
    assert_eq!((status, code(&answer)), (400, "BAD_MESSAGE"), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap_or_default().contains("16384"), "{answer}");
    // A NUL character in a text, a timestamp with a 100,000-digit fraction, an unreadable amount.
    let nul = s.signed(&seeker, MessageType::Proposal, w, "nul", &at(0), proposal("logo\u{0}design"))?;
    let (status, answer) = s.post(&nul).await?;
    assert_eq!((status, code(&answer)), (400, "BAD_MESSAGE"), "{answer}");
    let mut long = s.signed(&seeker, MessageType::Proposal, w, "long", &at(0), proposal("logo"))?;
    long.timestamp = format!("2025-01-30T10:00:00.{}Z", "1".repeat(100_000));
    let (status, answer) = s.post_raw(&serde_json::to_value(&long).unwrap_or_default()).await?;
    assert_eq!((status, code(&answer)), (400, "BAD_MESSAGE"), "{answer}");
    let bananas = json!({ "task": "logo", "budget": "5 bananas" });
    let (status, answer) =
        s.post(&s.signed(&seeker, MessageType::Proposal, w, "fruit", &at(0), bananas)?).await?;
    assert_eq!((status, code(&answer)), (400, "BAD_MESSAGE"), "a bad amount is bad input: {answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the escrow does not take \"BANANAS\""),
        "{answer}"
    );
    let (status, answer) =
        s.post_to("hire/contracts", &json!({ "conversationId": "a\u{0}b", "pactId": "0" })).await?;
    assert_eq!((status, code(&answer)), (400, "BAD_MESSAGE"), "{answer}");
    for id in ["big", "nul", "long", "fruit"] {
        assert!(s.messages(id).await?.is_empty(), "{id} stored nothing");
    }

    // A flood: the parties trade clarifications until the conversation holds 100 messages; the
    // 101st is refused and the log stays at 100.
    s.post(&s.signed(&seeker, MessageType::Proposal, w, "flood", &at(0), proposal("logo"))?).await?;
    for n in 1..100u32 {
        let (key, to, payload) = if n % 2 == 1 {
            (&worker, k, json!({ "questions": [format!("q{n}")] }))
        } else {
            (&seeker, w, json!({ "answers": [format!("a{n}")] }))
        };
        let (status, answer) =
            s.post(&s.signed(key, MessageType::Clarification, to, "flood", &at(n), payload)?).await?;
        assert_eq!(status, 201, "message {}: {answer}", n + 1);
    }
    let over = s.signed(
        &worker,
        MessageType::Clarification,
        k,
        "flood",
        &at(100),
        json!({ "questions": ["more"] }),
    )?;
    let (status, answer) = s.post(&over).await?;
    assert_eq!((status, code(&answer)), (409, "CONVERSATION_FULL"), "{answer}");
    assert_eq!(s.messages("flood").await?.len(), 100);
    Ok(())
}

/// Terms in stages (HIRE/1.0 `stages`, docs/negotiation.md): stages that do not add up to the
/// budget are refused as proposed; the seeker proposes 0.6 ETH in three stages, the worker counters
/// with two, and an accept naming the proposal's stages is refused; the table's are accepted. A
/// pact at the agreed price, deadline, hash and worker but in other stages is not the contract
/// (`PACT_MISMATCH`); `sign_contract` makes a pact of exactly the agreed stages (amounts,
/// deadlines, the terms document naming them), which the worker's `sign_contract` funds with a
/// tenth of each stage.
#[tokio::test]
async fn terms_in_stages_are_negotiated_signed_and_become_a_pact_of_those_stages() -> Result {
    let s = Stage::open(TestChain::start().await?, Utc::now(), Timeouts::default()).await?;
    let _ticking = s.real_time();
    let seeker = TestAgent::start(&s.m.chain, &s.db, 1, Role::Seeker, test_limits()).await?;
    let worker = TestAgent::start(&s.m.chain, &s.db, 2, Role::Worker, test_limits()).await?;
    seeker.use_relay(&s.api.base)?;
    worker.use_relay(&s.api.base)?;
    let due = |days: i64| {
        let at = (Utc::now() + chrono::Duration::days(days)).timestamp();
        let at = DateTime::from_timestamp(at, 0).unwrap_or_default();
        (at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), u64::try_from(at.timestamp()).unwrap_or(0))
    };
    let ((d1, _), (d2, s2), (d3, s3)) = (due(1), due(2), due(3));
    let to = worker.address.to_string();

    let (_, said) = seeker
        .refused(
            "send_proposal",
            json!({ "worker_id": to, "task": "a site", "budget": "0.6 ETH",
                    "stages": [{ "price": "0.2 ETH", "deadline": d1 }, { "price": "0.3 ETH", "deadline": d3 }] }),
        )
        .await?;
    assert!(said.contains("the stages' prices sum to 0.5 ETH but the price is 0.6 ETH"), "{said}");
    let sent = seeker
        .ok(
            "send_proposal",
            json!({ "worker_id": to, "task": "a site", "budget": "0.6 ETH", "stages": sent_stages(&d1, &d2, &d3) }),
        )
        .await?;
    let id = sent.data["conversationId"].as_str().unwrap_or_default().to_owned();
    let listed = worker.ok("get_conversations", json!({})).await?;
    let table = &listed.data["conversations"][0];
    assert_eq!(
        table["stages"][2],
        json!({ "title": "launch", "price": "0.3 ETH", "deadline": s3 }),
        "{table}"
    );
    assert_eq!(table["deadline"], json!(s3), "the deadline is the last stage's: {table}");

    let two = json!([{ "title": "design and build", "price": "0.25 ETH", "deadline": d2 },
                     { "title": "launch", "price": "0.35 ETH", "deadline": d3 }]);
    worker
        .ok(
            "respond_negotiation",
            json!({ "conversation_id": id, "type": "counter", "message": { "price": "0.6 ETH", "stages": two } }),
        )
        .await?;
    let (_, said) = seeker
        .refused(
            "respond_negotiation",
            json!({ "conversation_id": id, "type": "accept",
                    "message": { "accepted_terms": { "price": "0.6 ETH", "deadline": d3, "stages": sent_stages(&d1, &d2, &d3) } } }),
        )
        .await?;
    assert!(said.contains("are not the terms on the table") && said.contains("in 2 stages"), "{said}");
    let accepted = seeker
        .ok(
            "respond_negotiation",
            json!({ "conversation_id": id, "type": "accept",
                    "message": { "accepted_terms": { "price": "0.6 ETH", "deadline": d3, "stages": two } } }),
        )
        .await?;
    assert_eq!(accepted.data["status"], "CONTRACTED", "{}", accepted.text);

    // The agreed price, deadline, hash and worker in other stages: not this conversation's pact.
    let chain_id = s.m.chain.anvil.chain_id();
    let record = Store::new(s.db.pool().clone())
        .conversation(chain_id, &id)
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    let agreed = record
        .and_then(|r| Agreement::reached(chain_id, &r.conversation, Address::ZERO, 18).ok())
        .ok_or_else(|| HarnessError::Process(format!("{id} has no agreement")))?;
    let amounts = [ether(1) / U256::from(4u8), ether(1) * U256::from(35u8) / U256::from(100u8)];
    assert_eq!(agreed.stages, [(amounts[0], s2), (amounts[1], s3)]);
    let mut terms = s.m.terms_in(Address::ZERO, Initiator::Buyer, agreed.payment).await?;
    (terms.specHash, terms.deadline, terms.counterparty) = (agreed.spec_hash, s3, worker.address);
    let half = agreed.payment / U256::from(2u8);
    let other = vec![
        AgentPact::StageTerms { amount: half, deadline: s2 },
        AgentPact::StageTerms { amount: half, deadline: s3 },
    ];
    let (other_id, _) = s.m.create_staged(terms, other).await?;
    s.synced().await?;
    let link = json!({ "conversationId": id, "pactId": other_id.to_string() });
    let (status, answer) = s.post_to("hire/contracts", &link).await?;
    assert_eq!((status, code(&answer)), (409, "PACT_MISMATCH"), "{answer}");

    let signed = seeker
        .ok(
            "sign_contract",
            json!({ "conversation_id": id, "arbitrator": s.m.cast.arbitrator.to_string(),
                    "oracles": [s.m.cast.oracles[0].to_string(), s.m.cast.oracles[1].to_string()],
                    "oracle_weights": [60, 40] }),
        )
        .await?;
    assert!(signed.text.contains("for 0.6 ETH in 2 stages (0.25 + 0.35 ETH)"), "{}", signed.text);
    assert!(signed.text.contains("Deposited: 0.66 ETH (0.6 payment + 0.06 stake)"), "{}", signed.text);
    let document: Value =
        serde_json::from_str(signed.data["termsDocument"].as_str().unwrap_or_default()).unwrap_or_default();
    assert_eq!(document["stages"][0]["amount"], "250000000000000000", "{document}");
    assert_eq!(document["stages"][1]["title"], "launch", "{document}");
    let pact_id: U256 = signed.data["pactId"].as_str().unwrap_or_default().parse().unwrap_or_default();
    let stages = s.m.chain.pact.getStages(pact_id).call().await?;
    let on_chain: Vec<(U256, u64)> = stages.iter().map(|st| (U256::from(st.amount), st.deadline)).collect();
    assert_eq!(on_chain, agreed.stages, "the pact's stages are the agreed ones");
    assert_eq!(s.m.chain.pact.getPact(pact_id).call().await?.specHash, agreed.spec_hash);

    let funded = worker.ok("sign_contract", json!({ "conversation_id": id })).await?;
    assert_eq!(
        (funded.data["status"].as_str(), funded.data["deposited"].as_str()),
        (Some("FUNDED"), Some("0.06")),
        "{}",
        funded.text
    );
    assert_eq!(s.m.status(pact_id).await?, PactStatus::Funded);
    let contract = seeker.ok("get_contract", json!({ "contract_id": pact_id.to_string() })).await?;
    assert_eq!(contract.data["conversation"]["conversationId"], json!(id), "the relay linked it");
    Ok(())
}

/// The three stages of the proposal in `terms_in_stages_…`.
fn sent_stages(d1: &str, d2: &str, d3: &str) -> Value {
    json!([{ "title": "design", "price": "0.1 ETH", "deadline": d1 },
           { "title": "build", "price": "0.2 ETH", "deadline": d2 },
           { "title": "launch", "price": "0.3 ETH", "deadline": d3 }])
}
