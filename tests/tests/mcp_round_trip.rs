//! Every id and amount one MCP tool answers is taken as input by every tool that takes one of its
//! kind, exactly as it was answered (issue #52, docs/mcp.md §Input). A flow through every tool with
//! such an input collects, from every structured answer, each value under an id- or amount-like
//! key; `tools/list` gives every input property of the same kind; each tool is then called with
//! each answered value in that property, the rest of its arguments as the flow sent them, and no
//! refusal may be about the value's type or form. One table ([`KINDS`]) says which answer keys and
//! which inputs are of a kind, and a name that looks like an id or an amount but is in no row fails
//! the test, so a new tool or field cannot escape it.

use std::{collections::BTreeMap, sync::Arc};

use agentpact_mcp::{Role, Webhooks};
use agentpact_read::Reader;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    mcp::{Reply, TestAgent, dev_key, test_limits},
    pacts::Market,
    postgres::TestDatabase,
    webhooks::loopback,
};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn fail(what: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(what.to_string())
}

/// A kind of id or amount: the answer keys that carry one and the tool inputs that take one.
struct Kind {
    /// What it is, for messages.
    name: &'static str,
    /// Keys of structured answers (at any depth) whose values are of this kind.
    answered_as: &'static [&'static str],
    /// Input properties (at any depth) that take a value of this kind.
    taken_as: &'static [&'static str],
}

/// The one table: which answer keys feed which inputs. A name in no row that looks like an id or
/// an amount ([`looks_like_id_or_amount`]) fails the test.
const KINDS: &[Kind] = &[
    Kind {
        name: "pact id",
        answered_as: &["pactId", "pactIds", "contractId", "contract_id"],
        taken_as: &["pactId", "pactIds", "contract_id"],
    },
    Kind {
        name: "conversation id",
        answered_as: &["conversationId", "conversation_id"],
        taken_as: &["conversation_id", "contract_id"],
    },
    Kind {
        name: "agent id (a wallet address)",
        answered_as: &["agentId", "agent_id", "agents.id", "get_agent.id"],
        taken_as: &["agent_id", "worker_id"],
    },
    Kind {
        name: "ERC-8004 agent id",
        answered_as: &["erc8004AgentId", "erc8004_agent_id", "erc8004.agentId"],
        taken_as: &["erc8004_agent_id"],
    },
    // A negotiation's price names its currency ("0.5 ETH", docs/negotiation.md), as a proposal's
    // budget takes it; the pact tools' amounts are bare decimals beside a `currency`.
    Kind {
        name: "price with its currency",
        answered_as: &["conversations.price", "conversation.price", "stages.price"],
        taken_as: &["budget"],
    },
    Kind { name: "webhook subscription id", answered_as: &["subscriptionId"], taken_as: &["subscriptionId"] },
    Kind { name: "settlement round", answered_as: &["round"], taken_as: &["round"] },
    Kind {
        name: "amount",
        answered_as: &[
            "payment",
            "paymentEth",
            "price",
            "stake",
            "stakeEth",
            "budget",
            "deposited",
            "depositedEth",
            "credited",
            "credit",
            "amount",
            "balance",
            "buyerStake",
            "sellerStake",
            "buyerCredited",
            "sellerCredited",
            "balanceEth",
            "creditEth",
        ],
        taken_as: &["payment", "paymentEth", "price", "stakeEth", "max_price", "budget", "amount"],
    },
    // Answered, taken by no tool: classified so that they are known, not overlooked (an amount in
    // base units is not an amount in its currency; a reputation's `refunded` and `paidPacts`
    // count pacts).
    Kind {
        name: "answered only",
        answered_as: &[
            "priceBaseUnits",
            "refunded",
            "paidPacts",
            "trustedPaidPacts",
            "chainId",
            "blockNumber",
            "requestId",
            "tokenId",
            "feedbackIndex",
            "nonce",
        ],
        taken_as: &[],
    },
];

/// Words of a camelCase or snake_case name, lower case.
fn words(name: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in name.chars() {
        if c == '_' || c == '-' {
            out.push(String::new());
        } else if c.is_ascii_uppercase() {
            out.push(c.to_ascii_lowercase().to_string());
        } else if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out.retain(|w| !w.is_empty());
    out
}

/// Whether a name reads as an id (its last word "id" or "ids") or an amount (a money word).
fn looks_like_id_or_amount(name: &str) -> bool {
    const MONEY: &[&str] = &[
        "price",
        "prices",
        "payment",
        "payments",
        "stake",
        "stakes",
        "budget",
        "amount",
        "amounts",
        "credit",
        "credits",
        "credited",
        "deposit",
        "deposited",
        "balance",
        "balances",
        "refund",
        "refunded",
        "fee",
        "fees",
        "cost",
        "payout",
        "payouts",
        "paid",
    ];
    let w = words(name);
    w.last().is_some_and(|l| l == "id" || l == "ids" || l == "round")
        || w.iter().any(|w| MONEY.contains(&w.as_str()))
}

/// The kind of the value under `key` in an object under `parent`: a row may name the key alone
/// or, where a key means another kind in one place, as `parent.key` (which wins).
fn kind_answered_as(parent: &str, key: &str) -> Option<&'static Kind> {
    let qualified = format!("{parent}.{key}");
    KINDS
        .iter()
        .find(|k| k.answered_as.contains(&qualified.as_str()))
        .or_else(|| KINDS.iter().find(|k| k.answered_as.contains(&key)))
}

fn kinds_taken_as(input: &str) -> Vec<&'static Kind> {
    KINDS.iter().filter(|k| k.taken_as.contains(&input)).collect()
}

/// Every scalar value under a classified key of `answer`, by kind; and every id- or amount-like
/// key no row classifies.
fn collect(
    tool: &str,
    parent: &str,
    answer: &Value,
    found: &mut BTreeMap<&'static str, Vec<(Value, String)>>,
    unknown: &mut Vec<String>,
) {
    match answer {
        Value::Object(fields) => {
            for (key, value) in fields {
                let scalars: Vec<&Value> = match value {
                    Value::String(_) | Value::Number(_) => vec![value],
                    Value::Array(items) => items.iter().filter(|v| v.is_string() || v.is_number()).collect(),
                    _ => Vec::new(),
                };
                match kind_answered_as(parent, key) {
                    Some(kind) => {
                        let values = found.entry(kind.name).or_default();
                        for v in scalars {
                            if !values.iter().any(|(known, _)| known == v) {
                                values.push((v.clone(), format!("{tool}'s {key}")));
                            }
                        }
                    }
                    None if !scalars.is_empty() && looks_like_id_or_amount(key) => {
                        let what = format!("{tool} answers {key}");
                        if !unknown.contains(&what) {
                            unknown.push(what);
                        }
                    }
                    None => {}
                }
                collect(tool, key, value, found, unknown);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(tool, parent, v, found, unknown)),
        _ => {}
    }
}

/// Refusals of a value's worth, not its form: a well-formed value another tool answered may still
/// be wrong here (another wallet's agent, more decimals than this currency has, above the cap).
/// (A payment that is not its stages' sum is refused for its worth too.)
const NOT_ABOUT_FORM: &[&str] = &["is too small", "the stages' amounts sum to"];

/// Whether a refusal is about the form of `field`'s value: bad input naming the field, for no
/// reason [`NOT_ABOUT_FORM`] lists.
fn about_its_form(code: &str, text: &str, field: &str) -> bool {
    code == "INVALID_INPUT" && text.contains(field) && !NOT_ABOUT_FORM.iter().any(|why| text.contains(why))
}

/// One step of a path into a tool's arguments.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    First,
}

/// An input property at some depth: its path, its name and its schema ($ref resolved).
struct Input {
    path: Vec<Step>,
    name: String,
    schema: Value,
}

fn resolved<'a>(schema: &'a Value, defs: &'a Value) -> &'a Value {
    match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => &defs[name],
        None => schema,
    }
}

/// Every named property of `schema`, at any depth (through objects and the items of arrays).
fn inputs(schema: &Value, defs: &Value, path: &[Step], name: &str, out: &mut Vec<Input>) {
    let schema = resolved(schema, defs);
    if !path.is_empty() {
        out.push(Input { path: path.to_vec(), name: name.to_owned(), schema: schema.clone() });
    }
    for (key, field) in schema["properties"].as_object().into_iter().flatten() {
        let mut deeper = path.to_vec();
        deeper.push(Step::Key(key.clone()));
        inputs(field, defs, &deeper, key, out);
    }
    if schema.get("items").is_some() {
        let mut deeper = path.to_vec();
        deeper.push(Step::First);
        let items = resolved(&schema["items"], defs);
        for (key, field) in items["properties"].as_object().into_iter().flatten() {
            let mut deepest = deeper.clone();
            deepest.push(Step::Key(key.clone()));
            inputs(field, defs, &deepest, key, out);
        }
    }
}

fn types_of(schema: &Value) -> Vec<String> {
    match &schema["type"] {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// Whether a schema's types take `value`'s JSON type.
fn takes_type(types: &[String], value: &Value) -> bool {
    types.iter().any(|t| match t.as_str() {
        "string" => value.is_string(),
        "integer" => value.is_u64() || value.is_i64(),
        "number" => value.is_number(),
        _ => false,
    })
}

/// Whether `args` hold a value at `path`.
fn sends(args: &Value, path: &[Step]) -> bool {
    let mut at = args;
    for step in path {
        at = match step {
            Step::Key(key) => &at[key.as_str()],
            Step::First => &at[0],
        };
    }
    !at.is_null()
}

/// `args` with the value at `path` set to `value` (an array property gets `[value]`); `None` when
/// `args` has no array at a `First` step.
fn with_value(args: &Value, path: &[Step], value: &Value, array: bool) -> Option<Value> {
    let mut out = args.clone();
    let mut at = &mut out;
    for (i, step) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        at = match step {
            Step::Key(key) => {
                let object = at.as_object_mut()?;
                if last {
                    object.insert(key.clone(), if array { json!([value]) } else { value.clone() });
                    return Some(out);
                }
                object.entry(key.clone()).or_insert_with(|| json!({}))
            }
            Step::First => at.as_array_mut()?.first_mut()?,
        };
    }
    Some(out)
}

/// A market with its index followed, a relay, and six `full` agents (dev accounts 1-6: buyer,
/// seller, arbitrator, two oracles, a newcomer) that store webhook subscriptions too.
struct Stage {
    m: Market,
    _db: TestDatabase,
    _relay: TestApi,
    agents: Vec<TestAgent>,
    _indexer: tokio::task::JoinHandle<()>,
    /// Every call the flow made: the agent's index, the tool, its arguments and its answer.
    calls: Vec<(usize, String, Value, Reply)>,
}

const BUYER: usize = 0;
const SELLER: usize = 1;
const ARBITRATOR: usize = 2;
const ORACLES: [usize; 2] = [3, 4];
const NEWCOMER: usize = 5;

impl Stage {
    async fn open() -> Result<Self> {
        let m = Market::open().await?;
        let (db, indexer) = agentpact_tests::index::followed(&m.chain).await?;
        let relay = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
        let target = agentpact_tests::index::target(&m.chain);
        let mut agents = Vec::new();
        for n in 1..=6 {
            let wallet = agentpact_mcp::connect(
                m.chain.anvil.endpoint_url(),
                &agentpact_contracts::rpc::RpcLimits::default(),
                target.chain_id,
                target.contracts,
                dev_key(&m.chain, n)?,
                Reader::new(db.pool().clone()),
                test_limits(),
            )
            .await
            .map_err(fail)?;
            let policy = agentpact_push::Policy { targets: loopback(), ..Default::default() };
            wallet.set_webhooks(Webhooks { pool: db.pool().clone(), policy });
            let agent = TestAgent::serving(Arc::clone(&wallet), Role::Full).await?;
            agent.use_relay(&relay.base)?;
            agents.push(agent);
        }
        Ok(Self { m, _db: db, _relay: relay, agents, _indexer: indexer, calls: Vec::new() })
    }

    fn address(&self, who: usize) -> String {
        self.agents[who].address.to_checksum(None)
    }

    /// Calls `tool` as agent `who` and keeps the call; it must succeed.
    async fn ok(&mut self, who: usize, tool: &str, args: Value) -> Result<Value> {
        let reply = self.agents[who].call(tool, args.clone()).await?;
        if reply.is_error {
            return Err(fail(format!("{tool} {args} failed: {}", reply.text)));
        }
        let data = reply.data.clone();
        self.calls.push((who, tool.to_owned(), args, reply));
        Ok(data)
    }

    /// Calls `tool` as agent `who` and keeps the call; it must be refused for the state the pact is
    /// in (not its input), which is all the flow needs of it.
    async fn refused_for_state(&mut self, who: usize, tool: &str, args: Value) -> Result {
        let reply = self.agents[who].call(tool, args.clone()).await?;
        let code = reply.data["error"]["code"].as_str().unwrap_or_default().to_owned();
        assert!(reply.is_error && code != "INVALID_INPUT", "{tool} {args}: {code} {}", reply.text);
        self.calls.push((who, tool.to_owned(), args, reply));
        Ok(())
    }

    /// create-pact terms paying `payment` (in `currency`).
    async fn terms(&self, currency: &str, payment: &str) -> Result<Value> {
        Ok(json!({
            "role": "buyer", "specHash": "QmRoundTrip", "deadline": self.m.chain.now().await? + 7 * 24 * 3600,
            "oracles": [self.address(ORACLES[0]), self.address(ORACLES[1])], "oracleWeights": [60, 40],
            "threshold": 70, "currency": currency, "payment": payment, "arbitrator": self.address(ARBITRATOR),
        }))
    }

    /// Creates a pact as the buyer and has the seller accept it; returns its id as answered.
    async fn funded(&mut self, currency: &str, payment: &str) -> Result<Value> {
        let terms = self.terms(currency, payment).await?;
        let id = self.ok(BUYER, "create-pact", terms).await?["pactId"].clone();
        self.ok(SELLER, "accept-pact", json!({ "pactId": id })).await?;
        Ok(id)
    }

    /// A flow through every tool that takes an id or an amount, each answered value passed on as
    /// answered.
    async fn flow(&mut self) -> Result {
        let (seller, arbitrator) = (self.address(SELLER), self.address(ARBITRATOR));
        let oracles = json!([self.address(ORACLES[0]), self.address(ORACLES[1])]);
        let capability = json!([{ "name": "logo-design", "price": "0.5", "currency": "ETH" }]);
        let registered = self
            .ok(
                SELLER,
                "register_agent",
                json!({ "name": "Round Trip", "description": "Logos", "capabilities": capability,
                        "endpoint": "https://round-trip.example/mcp", "wallet": seller, "erc8004": true }),
            )
            .await?;
        let erc8004_id = registered["erc8004AgentId"].clone();
        let found = self
            .ok(
                BUYER,
                "search_agents",
                json!({ "capability": "logo-design", "currency": "ETH", "max_price": "1" }),
            )
            .await?;
        let price = found["agents"][0]["pricing"]["price"].clone();
        let agent_id = found["agents"][0]["id"].clone();
        self.ok(
            SELLER,
            "update_profile",
            json!({ "agent_id": agent_id, "updates": { "capabilities": [{ "name": "logo-design", "price": price, "currency": "ETH" }] } }),
        )
        .await?;
        self.ok(BUYER, "get_agent", json!({ "agent_id": agent_id })).await?;
        self.ok(BUYER, "get_agent", json!({ "erc8004_agent_id": erc8004_id })).await?;
        let listed = self.ok(BUYER, "search_oracles", json!({})).await?;
        let stake = listed["oracles"][0]["stakeEth"].clone();
        self.ok(NEWCOMER, "register-oracle", json!({ "capabilities": ["logo-design"], "stakeEth": stake }))
            .await?;

        // A negotiated pact, delivered, verified, approved and rated.
        let deadline = (chrono::Utc::now() + chrono::Duration::days(2))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let sent = self
            .ok(
                BUYER,
                "send_proposal",
                json!({ "worker_id": agent_id, "task": "a logo", "budget": format!("{} ETH", price.as_str().unwrap_or_default()), "deadline": deadline }),
            )
            .await?;
        let conversation = sent["conversationId"].clone();
        // Terms in stages too, agreed and signed: their inputs are ids and amounts as well.
        let day = (chrono::Utc::now() + chrono::Duration::days(1))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let staged = self
            .ok(
                BUYER,
                "send_proposal",
                json!({ "worker_id": agent_id, "task": "a logo in two steps", "budget": "0.2 ETH",
                        "stages": [{ "title": "sketch", "price": "0.1 ETH", "deadline": day },
                                   { "title": "final", "price": "0.1 ETH", "deadline": deadline }] }),
            )
            .await?;
        let talk = staged["conversationId"].clone();
        let agreed = json!({ "price": "0.2 ETH", "deadline": deadline });
        self.ok(
            SELLER,
            "respond_negotiation",
            json!({ "conversation_id": talk, "type": "accept", "message": { "accepted_terms": agreed } }),
        )
        .await?;
        self.ok(
            BUYER,
            "sign_contract",
            json!({ "conversation_id": talk, "arbitrator": arbitrator, "oracles": oracles, "oracle_weights": [60, 40] }),
        )
        .await?;
        self.ok(SELLER, "sign_contract", json!({ "conversation_id": talk })).await?;
        let terms =
            json!({ "price": format!("{} ETH", price.as_str().unwrap_or_default()), "deadline": deadline });
        self.ok(
            SELLER,
            "respond_negotiation",
            json!({ "conversation_id": conversation, "type": "accept", "message": { "accepted_terms": terms } }),
        )
        .await?;
        let signed = self
            .ok(
                BUYER,
                "sign_contract",
                json!({ "conversation_id": conversation, "arbitrator": arbitrator, "oracles": oracles,
                        "oracle_weights": [60, 40] }),
            )
            .await?;
        let id = signed["pactId"].clone();
        self.ok(SELLER, "sign_contract", json!({ "conversation_id": conversation })).await?;
        self.ok(BUYER, "get_conversations", json!({ "status": "all" })).await?;
        self.ok(BUYER, "get_contract", json!({ "contract_id": signed["contractId"] })).await?;
        let subscribed = self
            .ok(BUYER, "subscribe_webhook", json!({ "url": "http://127.0.0.1:9/hook", "pactIds": [id] }))
            .await?;
        self.ok(BUYER, "list_webhooks", json!({})).await?;
        self.ok(SELLER, "start-work", json!({ "pactId": id })).await?;
        let proof = format!("0x{}", "ab".repeat(32));
        self.ok(SELLER, "submit-work", json!({ "pactId": id, "proofHash": proof })).await?;
        for oracle in ORACLES {
            self.ok(oracle, "submit-verification", json!({ "pactId": id, "score": 90, "proof": proof }))
                .await?;
        }
        self.ok(ORACLES[0], "finalize-verification", json!({ "pactId": id })).await?;
        let oracle = self.address(ORACLES[0]);
        self.ok(BUYER, "get-verification", json!({ "pactId": id, "oracle": oracle })).await?;
        self.ok(BUYER, "approve-work", json!({ "pactId": id })).await?;
        self.ok(BUYER, "submit_feedback", json!({ "contract_id": id, "rating": 5 })).await?;
        self.ok(BUYER, "cancel_webhook", json!({ "subscriptionId": subscribed["subscriptionId"] })).await?;

        // A pact settled by an offer, one offer withdrawn first; its round as answered.
        let id = self.funded("ETH", "0.5").await?;
        self.ok(SELLER, "propose-settlement", json!({ "pactId": id, "sellerShare": 7000 })).await?;
        self.ok(SELLER, "withdraw-settlement", json!({ "pactId": id })).await?;
        let offered =
            self.ok(SELLER, "propose-settlement", json!({ "pactId": id, "sellerShare": 7000 })).await?;
        self.ok(
            BUYER,
            "accept-settlement",
            json!({ "pactId": id, "sellerShare": 7000, "round": offered["round"] }),
        )
        .await?;

        // A USDC pact disputed and ruled on.
        let id = self.funded("USDC", "5").await?;
        self.ok(BUYER, "raise-dispute", json!({ "pactId": id, "arbitrator": arbitrator })).await?;
        self.ok(ARBITRATOR, "resolve-dispute", json!({ "pactId": id, "sellerWins": true })).await?;

        // A pact of two stages through every stage tool: stage 0 delivered, scored, finalized and
        // approved; stage 1 disputed and ruled; the steps that do not fit stage 0 any more refused
        // for its state.
        let mut terms = self.terms("ETH", "unused").await?;
        terms.as_object_mut().map(|t| t.remove("payment"));
        let deadline = terms["deadline"].clone();
        terms["stages"] =
            json!([{ "amount": "0.2", "deadline": deadline }, { "amount": "0.3", "deadline": deadline }]);
        let id = self.ok(BUYER, "create-staged-pact", terms).await?["pactId"].clone();
        self.ok(SELLER, "accept-pact", json!({ "pactId": id })).await?;
        self.ok(SELLER, "start-work", json!({ "pactId": id })).await?;
        self.ok(SELLER, "submit-stage", json!({ "pactId": id, "stage": 0, "proofHash": proof })).await?;
        for oracle in ORACLES {
            self.ok(
                oracle,
                "submit-stage-verification",
                json!({ "pactId": id, "stage": 0, "score": 90, "proof": proof }),
            )
            .await?;
        }
        self.ok(ORACLES[0], "finalize-stage", json!({ "pactId": id, "stage": 0 })).await?;
        self.ok(BUYER, "approve-stage", json!({ "pactId": id, "stage": 0 })).await?;
        self.ok(BUYER, "dispute-stage", json!({ "pactId": id, "stage": 1, "arbitrator": arbitrator }))
            .await?;
        self.ok(ARBITRATOR, "resolve-stage", json!({ "pactId": id, "stage": 1, "sellerShare": 7000 }))
            .await?;
        self.ok(BUYER, "get-stages", json!({ "pactId": id })).await?;
        for tool in ["reject-stage", "auto-approve-stage", "claim-stage-timeout"] {
            self.refused_for_state(BUYER, tool, json!({ "pactId": id, "stage": 0 })).await?;
        }

        // A funded pact the steps that do not fit it refuse for its state.
        let mut terms = self.terms("ETH", "unused").await?;
        terms.as_object_mut().map(|t| (t.remove("currency"), t.remove("payment")));
        terms["paymentEth"] = json!("0.25");
        let id = self.ok(BUYER, "create-pact", terms).await?["pactId"].clone();
        self.ok(SELLER, "accept-pact", json!({ "pactId": id })).await?;
        self.refused_for_state(BUYER, "claim-timeout", json!({ "pactId": id })).await?;
        self.refused_for_state(BUYER, "auto-approve", json!({ "pactId": id })).await?;
        self.refused_for_state(BUYER, "reject-work", json!({ "pactId": id })).await?;

        // The reads.
        let pact = self.ok(BUYER, "get-pact", json!({ "pactId": id })).await?;
        self.ok(BUYER, "list-pacts", json!({})).await?;
        self.ok(BUYER, "get-pact-count", json!({})).await?;
        self.ok(BUYER, "get-reputation", json!({ "address": seller })).await?;
        self.ok(SELLER, "get-my-address", json!({})).await?;
        let tx = self.calls.iter().rev().find_map(|c| c.3.data["txHash"].as_str().map(str::to_owned));
        self.ok(BUYER, "get-transaction", json!({ "txHash": tx })).await?;
        self.ok(SELLER, "withdraw", json!({})).await?;
        assert_eq!(pact["pactId"], id, "get-pact answers the id it was given");
        Ok(())
    }
}

#[tokio::test]
async fn every_id_and_amount_a_tool_answers_is_taken_by_every_tool_that_takes_its_kind() -> Result {
    let mut s = Stage::open().await?;
    s.flow().await?;

    // What the answers carry, by kind.
    let mut answered: BTreeMap<&'static str, Vec<(Value, String)>> = BTreeMap::new();
    let mut unknown = Vec::new();
    for (_, tool, _, reply) in &s.calls {
        if !reply.is_error {
            collect(tool, tool, &reply.data, &mut answered, &mut unknown);
        }
    }

    // What the tools take, by kind; every id- or amount-like input classified.
    let tools = s.agents[BUYER].client.list_all_tools().await.map_err(fail)?;
    let mut checks = Vec::new();
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        let mut all = Vec::new();
        inputs(&schema, &schema["$defs"], &[], "", &mut all);
        for input in all {
            let kinds = kinds_taken_as(&input.name);
            if kinds.is_empty() {
                if looks_like_id_or_amount(&input.name) {
                    unknown.push(format!("{} takes {}", tool.name, input.name));
                }
                continue;
            }
            checks.push((tool.name.to_string(), input, kinds));
        }
    }
    assert!(unknown.is_empty(), "ids or amounts no row of KINDS classifies: {unknown:#?}");

    let mut calls = 0;
    let mut wrong = Vec::new();
    for (tool, input, kinds) in &checks {
        // The flow's own call of the tool, one that sent this input if any (inputs that exclude
        // each other, such as payment and paymentEth, keep out of each other's way).
        let admitted: Vec<_> = s
            .calls
            .iter()
            .filter(|c| c.1 == *tool && !(c.3.is_error && c.3.data["error"]["code"] == "INVALID_INPUT"))
            .collect();
        let base = admitted
            .iter()
            .find(|c| sends(&c.2, &input.path))
            .or(admitted.first())
            .map(|c| (c.0, c.2.clone()))
            .ok_or_else(|| fail(format!("{tool} takes {}: the flow must call it", input.name)))?;
        let array = types_of(&input.schema).contains(&"array".to_owned());
        let types = if array { types_of(&input.schema["items"]) } else { types_of(&input.schema) };
        for kind in kinds {
            let values = answered.get(kind.name).cloned().unwrap_or_default();
            assert!(!values.is_empty(), "no answer of the flow carries a {}, which {tool} takes", kind.name);
            for (value, source) in values {
                // The value as answered; and its number, where the schema takes one too.
                let mut forms = vec![value.clone()];
                let whole = value.as_str().and_then(|t| t.parse::<u64>().ok());
                let decimal = value.as_str().and_then(|t| t.parse::<f64>().ok());
                let takes = |t: &str| types.iter().any(|own| own == t);
                match (whole, decimal) {
                    (Some(n), _) if takes("integer") || takes("number") => forms.push(json!(n)),
                    (None, Some(x)) if takes("number") => forms.push(json!(x)),
                    _ => {}
                }
                for form in forms {
                    let context = format!(
                        "{tool}'s {} given the {} {form} ({source} answered it)",
                        input.name, kind.name
                    );
                    if !takes_type(&types, &form) {
                        wrong.push(format!("{context}: its schema does not take a {form}"));
                        continue;
                    }
                    let Some(args) = with_value(&base.1, &input.path, &form, array) else {
                        return Err(fail(format!("{tool}: the flow's call has no {}", input.name)));
                    };
                    let reply = s.agents[base.0].call(tool, args).await?;
                    calls += 1;
                    let code = reply.data["error"]["code"].as_str().unwrap_or_default();
                    if reply.is_error && about_its_form(code, &reply.text, &input.name) {
                        wrong.push(format!("{context}: {}", reply.text));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "answered values refused as input: {wrong:#?}");
    assert!(checks.len() > 20 && calls > 100, "only {} inputs, {calls} calls", checks.len());
    Ok(())
}
