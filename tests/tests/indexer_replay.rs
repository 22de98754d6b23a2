//! The lab's replay (lab/src/replay): a chain recorded from anvil and served back by our own
//! JSON-RPC server must be indistinguishable to the indexer — indexing the replay through the
//! production transport ends equal to a fresh index of anvil itself — and must refuse, not guess,
//! what it cannot answer. (The ground for #36's amplified histories: this checks copy 0.)

use agentpact_contracts::rpc::RpcLimits;
use agentpact_indexer::{Contracts, Indexer, Target};
use agentpact_lab::replay::{Amplified, Recording, Replay, Serving};
use agentpact_read::Reader;
use agentpact_tests::{
    HarnessError,
    erc8004::Registries,
    index::{
        dump, fresh_dump, kill_during_backfill, kinds_never_journaled, small_ranges, through, through_to,
    },
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{
    primitives::U256,
    providers::{Provider, ProviderBuilder},
};
use serde_json::{Value, json};

type Result = std::result::Result<(), HarnessError>;

fn fail(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// Posts `body` to the replay; its JSON answer.
async fn call(replay: &Replay, body: Value) -> std::result::Result<Value, HarnessError> {
    let answer = reqwest::Client::new().post(&replay.url).json(&body).send().await.map_err(fail)?;
    answer.json().await.map_err(fail)
}

#[tokio::test]
async fn a_recorded_chain_served_back_indexes_exactly_as_the_node_itself() -> Result {
    // Every status, oracles and agents coming and going, ratings, and ERC-8004.
    let m = Market::open().await?;
    m.every_status().await?;
    let registries = Registries::of(&m.chain);
    let agent =
        registries.register(m.cast.seller, "data:application/json,{\"name\":\"Seller\"}".into()).await?;
    registries.rate(agent, m.cast.buyer, 90, "", "").await?;

    let recording = Recording::read(&m.chain.provider).await.map_err(fail)?;
    let head = m.chain.provider.get_block_number().await?;
    assert_eq!(recording.head(), head);
    assert!(recording.log_count() > 50, "a history worth replaying: {} logs", recording.log_count());
    let replay = Replay::serve(Amplified::new(recording, &m.chain.deployment, 1).map_err(fail)?)
        .await
        .map_err(fail)?;

    // Small ranges: many range reads, header reads and continuity checks against the replay.
    let db = TestDatabase::create().await?;
    through(&replay.url, &m.chain, db.pool(), small_ranges(), &RpcLimits::default())
        .await?
        .catch_up()
        .await?;
    assert_eq!(
        dump(db.pool()).await?,
        fresh_dump(&m.chain).await?,
        "the replay's index differs from anvil's"
    );
    let missing = kinds_never_journaled(db.pool()).await?;
    assert!(missing.is_empty(), "the replay served no {missing:?}: Market::every_status must emit each kind");

    // What it cannot answer is refused, in JSON-RPC's words; a block past the head is null.
    let batch = call(
        &replay,
        json!([
            { "jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": [{}, "latest"] },
            { "jsonrpc": "2.0", "id": 2, "method": "eth_getBlockByNumber", "params": ["latest", true] },
            { "jsonrpc": "2.0", "id": 3, "method": "eth_getBlockByNumber", "params": [format!("0x{:x}", head + 1), false] },
            { "jsonrpc": "2.0", "id": 4, "method": "eth_getLogs", "params": [{ "fromBlock": "0x5", "toBlock": "0x4" }] },
            { "jsonrpc": "2.0", "id": 5, "method": "eth_chainId", "params": [] },
        ]),
    )
    .await?;
    assert_eq!(batch[0]["error"]["code"], -32601, "{batch}");
    assert_eq!(batch[1]["error"]["code"], -32602, "{batch}");
    assert!(batch[1]["error"]["message"].as_str().unwrap_or_default().contains("ask with false"), "{batch}");
    assert_eq!((&batch[2]["id"], &batch[2]["result"]), (&json!(3), &Value::Null), "{batch}");
    assert_eq!(batch[3]["error"]["code"], -32602, "{batch}");
    assert_eq!(batch[4]["result"], format!("0x{:x}", m.chain.anvil.chain_id()), "{batch}");
    Ok(())
}

/// Copies of a generated market served by the replay.
const COPIES: u64 = 4;

#[tokio::test]
async fn four_copies_of_a_market_index_as_four_times_its_plan_through_a_reorg_kills_and_a_log_cap() -> Result
{
    // The base: `agentpact bench gen` on anvil, indexed from anvil itself.
    let node = agentpact_tests::anvil::spawn(31_337)?;
    let (_, deployment) = agentpact_tests::cli::bench_gen(&node, 45, 3)?;
    let target = Target {
        chain_id: node.chain_id(),
        contracts: Contracts::from(&deployment),
        deployment_block: deployment.block,
    };
    let provider = ProviderBuilder::new().connect_http(node.endpoint_url()).erased();
    let base = TestDatabase::create().await?;
    Indexer::new(base.pool().clone(), provider.clone(), target, small_ranges()).catch_up().await?;
    let base_stats = Reader::new(base.pool().clone()).stats(node.chain_id()).await.map_err(fail)?;
    assert_eq!(base_stats.pacts, 45);

    // Four copies; the node reveals the first two, then a side branch over the third copy's first
    // three blocks that carries the fourth copy's (other pacts, other parties).
    let recording = Recording::read(&provider).await.map_err(fail)?;
    let amplified = Amplified::new(recording, &deployment, COPIES).map_err(fail)?;
    let (third, pacts) = (amplified.first_block_of(2), amplified.pacts_per_copy());
    assert_eq!(pacts, 45);
    let serving = Serving { head: Some(third - 1), max_logs: Some(20) };
    let replay = Replay::serve_with(amplified, serving).await.map_err(fail)?;
    let limits = &RpcLimits::default();
    let db = TestDatabase::create().await?;
    let reader = Reader::new(db.pool().clone());
    through_to(&replay.url, target, db.pool(), small_ranges(), limits).await?.catch_up().await?;
    assert_eq!(reader.stats(node.chain_id()).await.map_err(fail)?.pacts, 2 * pacts, "two copies revealed");
    replay.fork(third, third + 2).map_err(fail)?;
    through_to(&replay.url, target, db.pool(), small_ranges(), limits).await?.catch_up().await?;
    let orphan = U256::from(3 * pacts);
    assert!(
        reader.pact(node.chain_id(), orphan).await.map_err(fail)?.is_some(),
        "the side branch's pacts were indexed"
    );
    assert!(replay.refused() > 0, "no range passed the log cap: the refusals went untested");

    // The reorg lands with the rest of the chain, and the indexer is killed mid-backfill, again
    // and again, a few milliseconds after a commit.
    replay.settle();
    replay.reveal(u64::MAX);
    let head = replay.head();
    let url = &replay.url;
    let stopped_partway = kill_during_backfill(&db, head, 8, |pool| async move {
        through_to(url, target, &pool, small_ranges(), limits).await
    })
    .await?;
    assert!(stopped_partway > 2, "the kills did not land during the backfill ({stopped_partway} did)");
    through_to(&replay.url, target, db.pool(), small_ranges(), limits).await?.catch_up().await?;

    // The plan: four times the base, the side branch's pacts only where the fourth copy made them.
    let stats = reader.stats(node.chain_id()).await.map_err(fail)?;
    assert_eq!(stats.pacts, COPIES * base_stats.pacts);
    for (amplified, base) in stats.by_status.iter().zip(&base_stats.by_status) {
        assert_eq!(amplified.count, COPIES * base.count, "{:?}", base.status);
    }
    for (amplified, base) in stats.volumes.iter().zip(&base_stats.volumes) {
        let times = U256::from(COPIES);
        assert_eq!((amplified.completed, amplified.open), (base.completed * times, base.open * times));
    }
    let fourth = replay.with_chain(|c| c.timestamp(c.first_block_of(3)));
    let fourth = fourth.ok_or_else(|| fail("the fourth copy has no first block"))?;
    let created = reader.pact(node.chain_id(), orphan).await.map_err(fail)?.map(|p| p.created_at.timestamp());
    assert!(
        created >= Some(fourth as i64),
        "pact {orphan} is still the side branch's: created at {created:?}, the fourth copy starts at {fourth}"
    );

    // Pact by pact: each copy's pact is its base pact renumbered — parties renamed, times moved,
    // the same fate, payment, score and timeline; and every copy paid out.
    let base_reader = Reader::new(base.pool().clone());
    let chain_id = node.chain_id();
    for i in (0..pacts).step_by(4) {
        let original = base_reader.pact(chain_id, U256::from(i)).await.map_err(fail)?;
        let original = original.ok_or_else(|| fail(format!("base pact {i} missing")))?;
        let kinds = |t: Vec<agentpact_read::TimelineEvent>| t.into_iter().map(|e| e.kind).collect::<Vec<_>>();
        let original_timeline = kinds(base_reader.timeline(chain_id, U256::from(i)).await.map_err(fail)?);
        for k in 1..COPIES {
            let id = U256::from(i + k * pacts);
            let copy = reader.pact(chain_id, id).await.map_err(fail)?;
            let copy = copy.ok_or_else(|| fail(format!("pact {id} missing")))?;
            let (later, renamed) = replay.with_chain(|c| {
                let renamed = [original.creator, original.arbitrator].map(|a| c.party(a, k));
                (c.seconds_later(k) as i64, renamed)
            });
            let party =
                |a: Option<alloy::primitives::Address>| replay.with_chain(|c| a.map(|a| c.party(a, k)));
            assert_eq!(
                (copy.status, copy.payment, copy.final_score, copy.outcome),
                (original.status, original.payment, original.final_score, original.outcome),
                "pact {id}"
            );
            assert_eq!([copy.creator, copy.arbitrator], renamed, "pact {id}");
            assert_ne!(copy.creator, original.creator, "pact {id}'s creator was not renamed");
            assert_eq!(
                (copy.buyer, copy.seller),
                (party(original.buyer), party(original.seller)),
                "pact {id}"
            );
            assert_eq!(copy.deadline.timestamp(), original.deadline.timestamp() + later, "pact {id}");
            assert_eq!(copy.created_at.timestamp(), original.created_at.timestamp() + later, "pact {id}");
            assert_eq!(
                kinds(reader.timeline(chain_id, id).await.map_err(fail)?),
                original_timeline,
                "pact {id}"
            );
        }
    }
    let payouts = |pool: sqlx::PgPool| async move {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM payouts").fetch_one(&pool).await
    };
    assert_eq!(payouts(db.pool().clone()).await?, COPIES as i64 * payouts(base.pool().clone()).await?);

    // And equal, row for row, to one clean index of the amplified chain.
    let fresh = TestDatabase::create().await?;
    through_to(&replay.url, target, fresh.pool(), small_ranges(), limits).await?.catch_up().await?;
    assert_eq!(dump(db.pool()).await?, dump(fresh.pool()).await?);
    Ok(())
}
