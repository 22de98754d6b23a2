//! The index is total over what the contracts can emit: a Solidity `string` is any bytes, so a
//! wallet can put NUL (which Postgres `text` and `jsonb` refuse), control, bidirectional and
//! invisible characters and invalid UTF-8 into every string field of every event. Sent straight
//! to the contracts, not through our tools: the indexer reaches the head, the journal and every
//! projection keep the exact bytes beside a display form, an ordinary pact after them is indexed,
//! and a reorg across those blocks and kills mid-batch end equal to a fresh index. A randomized
//! test does the same with random bytes in every string and bytes32 field.

use std::time::Duration;

use agentpact_contracts::{AgentPact, AgentRegistry, Initiator, TestToken};
use agentpact_indexer::event::EventBody;
use agentpact_schema::ChainText;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::{TestChain, ether, send},
    index::{assert_index_matches_chain, checkpoint_block, dump, fresh_dump, indexer, small_ranges},
    pacts::{Market, creator_deposit},
    postgres::TestDatabase,
    raw_text::{RawStrings, filled, send_raw},
};
use alloy::{
    contract::CallBuilder,
    primitives::{Address, B256, U256},
    providers::Provider,
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::json;
use sqlx::{PgPool, Row, postgres::PgPoolOptions};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// The contracts' bounds on string fields, in bytes, as the project already holds them (checked
/// against the deployed contracts in `mcp_input`); a token's symbol (`Currencies.sol`) has no
/// other home.
use agentpact_contracts::rules::MAX_SPEC_URI;
use agentpact_mcp::bounds::{
    MAX_DESCRIPTION, MAX_NAME, MAX_ORACLE_CAPABILITY as MAX_CAPABILITY, MAX_TAG, MAX_URI,
};
const MAX_SYMBOL: usize = 32;

/// Texts every string field is sent with, each at most `max` bytes: NUL; control, bidirectional
/// and invisible characters (ESC, BEL, tab, newline, DEL, U+202E, U+200B, C1); invalid UTF-8
/// (stray bytes, a bad continuation, an encoded surrogate, a cut sequence); and the longest value
/// the field allows, made of all of them. `turn` rotates them, so two branches differ.
fn hostile(max: usize, turn: usize) -> Vec<Vec<u8>> {
    let mut texts = vec![
        b"ipfs://nul\0inside".to_vec(),
        "esc\u{1b}[31m bel\u{7} tab\t nl\n del\u{7f} rlo\u{202e} zw\u{200b} c1\u{85}".as_bytes().to_vec(),
        b"\xff\xfe bad \xc3\x28 surrogate \xed\xa0\x80 cut \xe2\x82".to_vec(),
        filled(b"\0\xff\x1b\xe2\x80\xaeZ", max),
    ];
    for t in &mut texts {
        t.truncate(max);
    }
    let n = texts.len();
    texts.rotate_left(turn % n);
    texts
}

/// A capability's name and description.
type Pair = (Vec<u8>, Vec<u8>);

/// The texts a branch sent, as the chain holds them at its end.
#[derive(Debug, Default)]
struct Sent {
    /// Each pact's spec URI.
    spec_uris: Vec<(U256, Vec<u8>)>,
    /// The oracle's capabilities, last update.
    oracle: Option<(Address, Vec<Vec<u8>>)>,
    /// The agent's name, description, endpoint and metadata URI, and its capabilities' names
    /// and descriptions, last update.
    agent: Option<(Address, Vec<Vec<u8>>, Vec<Pair>)>,
    /// Each rater's tags and comment.
    feedback: Vec<(Address, Vec<Vec<u8>>, Vec<u8>)>,
    /// Every text sent, with the kind of the event that carried it.
    all: Vec<(&'static str, Vec<u8>)>,
}

/// A market whose escrow allows a token with `symbol` (its `CurrencyAllowed` carries it), and the
/// token.
async fn market_allowing_symbol(symbol: &[u8]) -> Result<(Market, Address)> {
    let mut chain = TestChain::start().await?;
    let mut raw = RawStrings::default();
    let placeholder = raw.hold(symbol);
    let deploy = TestToken::deploy_builder(chain.provider.clone(), "Odd".into(), placeholder, 6);
    let token = CallBuilder::new_raw_deploy(chain.provider.clone(), raw.patch(deploy.calldata())?)
        .deploy()
        .await
        .map_err(|e| HarnessError::Process(format!("deploying the odd token: {e}")))?;
    chain.redeploy_allowing(vec![token]).await?;
    Ok((Market::open_on(chain).await?, token))
}

/// A pact created by the buyer with `spec_uri` as its spec URI and `spec_hash` as its hash.
async fn create_with_uri(m: &Market, spec_uri: &[u8], spec_hash: B256) -> Result<U256> {
    let mut raw = RawStrings::default();
    let terms = AgentPact::Terms {
        specUri: raw.hold(spec_uri),
        specHash: spec_hash,
        ..m.terms(Initiator::Buyer, ether(1)).await?
    };
    let id = m.chain.pact.pactCount().call().await?;
    let value = creator_deposit(Initiator::Buyer, terms.payment);
    let call = m.chain.pact.createPact(terms).from(m.cast.buyer).value(value);
    send_raw(&m.chain.provider, &raw, call).await?;
    Ok(id)
}

/// Registers `oracle` with `capabilities` (or updates them when it is registered).
async fn oracle_capabilities(
    m: &Market,
    oracle: Address,
    capabilities: &[Vec<u8>],
    register: bool,
) -> Result {
    let mut raw = RawStrings::default();
    let held: Vec<String> = capabilities.iter().map(|c| raw.hold(c)).collect();
    if register {
        let call = m.chain.registry.register(held).from(oracle).value(m.chain.options.min_oracle_stake);
        send_raw(&m.chain.provider, &raw, call).await?;
    } else {
        send_raw(&m.chain.provider, &raw, m.chain.registry.updateCapabilities(held).from(oracle)).await?;
    }
    Ok(())
}

/// Registers `agent` with the profile `fields` (name, description, endpoint, metadata URI) and
/// `capabilities` (name, description) at one ether each, or updates it when it is registered.
async fn agent_profile(
    m: &Market,
    agent: Address,
    fields: &[Vec<u8>],
    capabilities: &[(Vec<u8>, Vec<u8>)],
    register: bool,
) -> Result {
    let mut raw = RawStrings::default();
    let [name, description, endpoint, metadata] = fields else {
        return Err(HarnessError::Process("a profile has four text fields".into()));
    };
    let profile = AgentRegistry::Profile {
        name: raw.hold(name),
        description: raw.hold(description),
        endpoint: raw.hold(endpoint),
        metadataUri: raw.hold(metadata),
        capabilities: capabilities
            .iter()
            .map(|(n, d)| AgentRegistry::Capability {
                name: raw.hold(n),
                description: raw.hold(d),
                price: ether(1),
                currency: Address::ZERO,
            })
            .collect(),
    };
    if register {
        send_raw(&m.chain.provider, &raw, m.chain.agents.register(profile).from(agent)).await?;
    } else {
        send_raw(&m.chain.provider, &raw, m.chain.agents.updateProfile(profile).from(agent)).await?;
    }
    Ok(())
}

/// `rater` rates the other party of the finished pact `pact` with `tags` and `comment`.
async fn feedback(m: &Market, pact: U256, rater: Address, tags: &[Vec<u8>], comment: &[u8]) -> Result {
    let mut raw = RawStrings::default();
    let held: Vec<String> = tags.iter().map(|t| raw.hold(t)).collect();
    let call = m.chain.agents.submitFeedback(pact, 4, held, raw.hold(comment)).from(rater);
    send_raw(&m.chain.provider, &raw, call).await?;
    Ok(())
}

/// One event of every kind that carries a string (but `CurrencyAllowed`, sent at deployment),
/// each string hostile, a block each: four pacts, an oracle registering and updating its
/// capabilities, the seller registering as an agent and updating its profile, both parties of
/// `done` rating each other.
async fn send_hostile(m: &Market, done: U256, turn: usize) -> Result<Sent> {
    let mut sent = Sent::default();
    for uri in hostile(MAX_SPEC_URI, turn) {
        let id = create_with_uri(m, &uri, agentpact_tests::chain::hash(7)).await?;
        sent.all.push(("PactCreated", uri.clone()));
        sent.spec_uris.push((id, uri));
    }
    let oracle = m.chain.accounts[10];
    let first = hostile(MAX_CAPABILITY, turn);
    oracle_capabilities(m, oracle, &first, true).await?;
    sent.all.extend(first.into_iter().map(|c| ("OracleRegistered", c)));
    let mut updated = hostile(MAX_CAPABILITY, turn + 1);
    updated.push(b"plain".to_vec());
    oracle_capabilities(m, oracle, &updated, false).await?;
    sent.all.extend(updated.iter().map(|c| ("CapabilitiesUpdated", c.clone())));
    sent.oracle = Some((oracle, updated));

    let seller = m.cast.seller;
    for (step, register) in [(turn, true), (turn + 1, false)] {
        let names = hostile(MAX_NAME, step);
        let fields = vec![
            names[0].clone(),
            hostile(MAX_DESCRIPTION, step)[3].clone(),
            hostile(MAX_URI, step)[1].clone(),
            hostile(MAX_URI, step)[2].clone(),
        ];
        let caps: Vec<(Vec<u8>, Vec<u8>)> =
            names.iter().zip(hostile(MAX_DESCRIPTION, step + 2)).map(|(n, d)| (n.clone(), d)).collect();
        agent_profile(m, seller, &fields, &caps, register).await?;
        let kind = if register { "AgentRegistered" } else { "ProfileUpdated" };
        sent.all.extend(fields.iter().map(|f| (kind, f.clone())));
        sent.all.extend(caps.iter().flat_map(|(n, d)| [(kind, n.clone()), (kind, d.clone())]));
        sent.agent = Some((seller, fields, caps));
    }

    for (rater, step) in [(m.cast.buyer, turn), (seller, turn + 3)] {
        let tags = hostile(MAX_TAG, step);
        let comment = hostile(MAX_URI, step)[0].clone();
        feedback(m, done, rater, &tags, &comment).await?;
        sent.all.extend(tags.iter().map(|t| ("FeedbackGiven", t.clone())));
        sent.all.push(("FeedbackGiven", comment.clone()));
        sent.feedback.push((rater, tags, comment));
    }
    Ok(sent)
}

/// The exact text of a projection's text column and the bytes beside it.
fn exact(shown: String, bytes: Option<Vec<u8>>) -> Vec<u8> {
    bytes.unwrap_or_else(|| shown.into_bytes())
}

/// The exact texts of a `text[]` column and the `bytea[]` beside it.
fn exact_all(shown: Vec<String>, bytes: Option<Vec<Vec<u8>>>) -> Vec<Vec<u8>> {
    bytes.unwrap_or_else(|| shown.into_iter().map(String::into_bytes).collect())
}

/// Every projection holds exactly the bytes `sent`; the journal holds every text sent.
async fn assert_exact(pool: &PgPool, sent: &Sent) -> Result {
    for (id, uri) in &sent.spec_uris {
        let row = sqlx::query("SELECT spec_uri, spec_uri_bytes FROM pacts WHERE pact_id = $1::text::numeric")
            .bind(id.to_string())
            .fetch_one(pool)
            .await?;
        assert_eq!(exact(row.get("spec_uri"), row.get("spec_uri_bytes")), *uri, "pact {id} spec_uri");
        let shown: String = row.get("spec_uri");
        assert!(!shown.contains('\0'), "pact {id}: the display form holds a NUL");
    }
    if let Some((oracle, capabilities)) = &sent.oracle {
        let row = sqlx::query("SELECT capabilities, capabilities_bytes FROM oracles WHERE address = $1")
            .bind(oracle.to_vec())
            .fetch_one(pool)
            .await?;
        assert_eq!(
            exact_all(row.get("capabilities"), row.get("capabilities_bytes")),
            *capabilities,
            "oracle"
        );
    }
    if let Some((agent, fields, caps)) = &sent.agent {
        assert_agent(pool, *agent, fields, caps).await?;
    }
    assert_feedback_and_journal(pool, sent).await
}

/// The agent's profile and capabilities hold exactly `fields` and `caps`.
async fn assert_agent(
    pool: &PgPool,
    agent: Address,
    fields: &[Vec<u8>],
    caps: &[(Vec<u8>, Vec<u8>)],
) -> Result {
    let row = sqlx::query(
        "SELECT name, name_bytes, description, description_bytes, endpoint, endpoint_bytes, metadata_uri,
                metadata_uri_bytes FROM agents WHERE address = $1",
    )
    .bind(agent.to_vec())
    .fetch_one(pool)
    .await?;
    let stored: Vec<Vec<u8>> = ["name", "description", "endpoint", "metadata_uri"]
        .iter()
        .map(|c| exact(row.get(*c), row.get(format!("{c}_bytes").as_str())))
        .collect();
    assert_eq!(stored, fields, "agent profile");
    let rows = sqlx::query(
        "SELECT name, name_bytes, description, description_bytes FROM agent_capabilities
         WHERE address = $1 ORDER BY position",
    )
    .bind(agent.to_vec())
    .fetch_all(pool)
    .await?;
    let stored: Vec<(Vec<u8>, Vec<u8>)> = rows
        .into_iter()
        .map(|r| {
            (
                exact(r.get("name"), r.get("name_bytes")),
                exact(r.get("description"), r.get("description_bytes")),
            )
        })
        .collect();
    assert_eq!(stored, caps, "agent capabilities");
    Ok(())
}

/// Each rating holds exactly its tags and comment; the journal holds every text sent.
async fn assert_feedback_and_journal(pool: &PgPool, sent: &Sent) -> Result {
    for (rater, tags, comment) in &sent.feedback {
        let row =
            sqlx::query("SELECT tags, tags_bytes, comment, comment_bytes FROM feedback WHERE rater = $1")
                .bind(rater.to_vec())
                .fetch_one(pool)
                .await?;
        assert_eq!(exact_all(row.get("tags"), row.get("tags_bytes")), *tags, "tags of {rater}");
        assert_eq!(exact(row.get("comment"), row.get("comment_bytes")), *comment, "comment of {rater}");
    }

    let mut journal: Vec<(String, Vec<u8>)> = Vec::new();
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT kind, data::text FROM events").fetch_all(pool).await?;
    for (kind, data) in rows {
        let mut body: EventBody = serde_json::from_str(&data)
            .map_err(|e| HarnessError::Process(format!("a journal row does not read back: {e}: {data}")))?;
        journal.extend(body.texts_mut().into_iter().map(|t| (kind.clone(), t.as_bytes().to_vec())));
    }
    for (kind, text) in &sent.all {
        let at = journal.iter().position(|(k, t)| k == kind && t == text);
        let Some(at) = at else {
            panic!("the journal lacks a {kind} text {:?}", String::from_utf8_lossy(text))
        };
        journal.swap_remove(at);
    }
    Ok(())
}

/// Runs an indexer on `pool`'s database and kills it shortly after each of its first commits,
/// `kills` times; returns how many kills landed before the head.
async fn kill_partway(m: &Market, url: &str, pool: &PgPool, kills: u64) -> Result<u32> {
    let head = m.chain.provider.get_block_number().await?;
    let mut partway = 0;
    for attempt in 0..kills {
        let own = PgPoolOptions::new().max_connections(2).connect(url).await?;
        let before = checkpoint_block(pool).await?;
        let mut ix = indexer(&m.chain, &own, small_ranges());
        let run = tokio::spawn(async move { ix.catch_up().await });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while checkpoint_block(pool).await? == before && !run.is_finished() {
            if tokio::time::Instant::now() > deadline {
                return Err(HarnessError::Process(format!("no commit past block {before} in 15 s")));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(attempt % 4)).await;
        run.abort();
        let _ = run.await;
        own.close().await;
        let at = checkpoint_block(pool).await?;
        if at >= 0 && (at as u64) < head {
            partway += 1;
        }
    }
    Ok(partway)
}

#[tokio::test]
async fn hostile_text_in_every_string_field_is_indexed_exactly_through_a_reorg_and_kills() -> Result {
    let symbol = filled(b"U\0\xff\x1b\xe2\x80\xae", MAX_SYMBOL);
    let (m, token) = market_allowing_symbol(&symbol).await?;
    let done = m.completed(Initiator::Buyer, ether(1)).await?;
    let db = TestDatabase::create().await?;
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;

    // A branch the chain abandons: every kind of event with hostile text, indexed.
    let fork = m.chain.snapshot().await?;
    send_hostile(&m, done, 0).await?;
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    let abandoned = dump(db.pool()).await?;
    m.chain.restore(fork).await?;

    // The branch that wins: the same kinds with other hostile text at the same heights, then an
    // ordinary pact. Indexers killed partway (the reorg's rollback among their batches), then one
    // that runs to the head.
    let sent = send_hostile(&m, done, 1).await?;
    let (ordinary, _) = m.create(m.terms(Initiator::Seller, ether(2)).await?).await?;
    let partway = kill_partway(&m, db.url(), db.pool(), 8).await?;
    assert!(partway > 0, "no kill landed before the head");
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;

    let head = m.chain.provider.get_block_number().await?;
    assert_eq!(checkpoint_block(db.pool()).await?, head as i64, "the indexer did not reach the head");
    let index = dump(db.pool()).await?;
    assert_ne!(index, abandoned, "the reorg changed nothing");
    assert_eq!(index, fresh_dump(&m.chain).await?, "the index differs from a fresh index of the chain");
    assert_exact(db.pool(), &sent).await?;
    let (shown, bytes): (String, Option<Vec<u8>>) =
        sqlx::query_as("SELECT symbol, symbol_bytes FROM currencies WHERE address = $1")
            .bind(token.to_vec())
            .fetch_one(db.pool())
            .await?;
    assert_eq!(exact(shown, bytes), symbol, "the odd token's symbol");
    let ordinary_status: i16 =
        sqlx::query_scalar("SELECT status FROM pacts WHERE pact_id = $1::text::numeric")
            .bind(ordinary.to_string())
            .fetch_one(db.pool())
            .await?;
    assert_eq!(ordinary_status, 0, "the ordinary pact after the hostile ones is indexed");
    assert_index_matches_chain(&m.chain, db.pool()).await?;

    // GraphQL shows the display form and gives the exact bytes beside it.
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    for (id, uri) in &sent.spec_uris {
        let data = api
            .data(
                "query($id: BigInt!) { pact(id: $id) { specUri specUriBytes } }",
                json!({ "id": id.to_string() }),
            )
            .await?;
        let shown = ChainText::from_bytes(uri.clone());
        assert_eq!(data["pact"]["specUri"], json!(shown.display()), "pact {id} specUri");
        assert_eq!(data["pact"]["specUriBytes"], json!(shown.hex()), "pact {id} specUriBytes");
    }
    Ok(())
}

/// Random bytes of a random length up to `max` (at least `min`).
fn random_bytes(rng: &mut StdRng, min: usize, max: usize) -> Vec<u8> {
    let len = rng.random_range(min..=max);
    (0..len).map(|_| rng.random()).collect()
}

/// A random non-zero bytes32.
fn random_hash(rng: &mut StdRng) -> B256 {
    let mut hash = B256::from(rng.random::<[u8; 32]>());
    hash.0[0] |= 1;
    hash
}

#[tokio::test]
async fn random_bytes_in_every_string_and_hash_field_leave_the_index_equal_to_the_chain() -> Result {
    let seed =
        std::env::var("TEXT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random::<u64>);
    println!("seed {seed} (rerun with TEXT_SEED={seed})");
    let mut rng = StdRng::seed_from_u64(seed);
    let m = Market::open().await?;
    let done = m.completed(Initiator::Buyer, ether(1)).await?;
    let mut sent = Sent::default();
    let oracle = m.chain.accounts[10];
    let (mut oracle_registered, mut agent_registered) = (false, false);
    let mut raters = vec![m.cast.buyer, m.cast.seller];
    for _ in 0..14 {
        match rng.random_range(0..5) {
            0 | 1 => {
                let uri = random_bytes(&mut rng, 0, MAX_SPEC_URI);
                let id = create_with_uri(&m, &uri, random_hash(&mut rng)).await?;
                if rng.random_bool(0.5) {
                    // Accepted, started and submitted with a random proof hash; one oracle scores
                    // it with a random proof.
                    m.accept(id, Initiator::Buyer, ether(1)).await?;
                    send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
                    send(m.chain.pact.submitWork(id, random_hash(&mut rng)).from(m.cast.seller)).await?;
                    let score = rng.random_range(0..=100);
                    let call = m.chain.pact.submitVerification(id, score, random_hash(&mut rng));
                    send(call.from(m.cast.oracles[0])).await?;
                }
                sent.all.push(("PactCreated", uri.clone()));
                sent.spec_uris.push((id, uri));
            }
            2 => {
                let count = rng.random_range(1..=16);
                let caps: Vec<Vec<u8>> =
                    (0..count).map(|_| random_bytes(&mut rng, 0, MAX_CAPABILITY)).collect();
                oracle_capabilities(&m, oracle, &caps, !oracle_registered).await?;
                let kind = if oracle_registered { "CapabilitiesUpdated" } else { "OracleRegistered" };
                sent.all.extend(caps.iter().map(|c| (kind, c.clone())));
                oracle_registered = true;
                sent.oracle = Some((oracle, caps));
            }
            3 => {
                let fields = vec![
                    random_bytes(&mut rng, 1, MAX_NAME),
                    random_bytes(&mut rng, 0, MAX_DESCRIPTION),
                    random_bytes(&mut rng, 0, MAX_URI),
                    random_bytes(&mut rng, 0, MAX_URI),
                ];
                let count = rng.random_range(1..=16);
                let mut caps: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
                while caps.len() < count {
                    let name = random_bytes(&mut rng, 1, MAX_NAME);
                    if caps.iter().all(|(n, _)| *n != name) {
                        caps.push((name, random_bytes(&mut rng, 0, MAX_DESCRIPTION)));
                    }
                }
                agent_profile(&m, m.cast.seller, &fields, &caps, !agent_registered).await?;
                let kind = if agent_registered { "ProfileUpdated" } else { "AgentRegistered" };
                sent.all.extend(fields.iter().map(|f| (kind, f.clone())));
                sent.all.extend(caps.iter().flat_map(|(n, d)| [(kind, n.clone()), (kind, d.clone())]));
                agent_registered = true;
                sent.agent = Some((m.cast.seller, fields, caps));
            }
            _ => {
                let Some(rater) = raters.pop() else { continue };
                let count = rng.random_range(0..=8);
                let tags: Vec<Vec<u8>> = (0..count).map(|_| random_bytes(&mut rng, 0, MAX_TAG)).collect();
                let comment = random_bytes(&mut rng, 0, MAX_URI);
                feedback(&m, done, rater, &tags, &comment).await?;
                sent.all.extend(tags.iter().map(|t| ("FeedbackGiven", t.clone())));
                sent.all.push(("FeedbackGiven", comment.clone()));
                sent.feedback.push((rater, tags, comment));
            }
        }
    }
    let db = TestDatabase::create().await?;
    indexer(&m.chain, db.pool(), small_ranges()).catch_up().await?;
    let head = m.chain.provider.get_block_number().await?;
    assert_eq!(
        checkpoint_block(db.pool()).await?,
        head as i64,
        "seed {seed}: the indexer did not reach the head"
    );
    assert_exact(db.pool(), &sent).await?;
    assert_index_matches_chain(&m.chain, db.pool()).await?;
    Ok(())
}
