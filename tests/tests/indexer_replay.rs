//! The lab's replay (lab/src/replay): a chain recorded from anvil and served back by our own
//! JSON-RPC server must be indistinguishable to the indexer — indexing the replay through the
//! production transport ends equal to a fresh index of anvil itself — and must refuse, not guess,
//! what it cannot answer. (The ground for #36's amplified histories: this checks copy 0.)

use agentpact_contracts::rpc::RpcLimits;
use agentpact_lab::replay::{Recording, Replay};
use agentpact_tests::{
    HarnessError,
    erc8004::Registries,
    index::{dump, fresh_dump, small_ranges, through},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::providers::Provider;
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
    let replay = Replay::serve(recording).await.map_err(fail)?;

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
