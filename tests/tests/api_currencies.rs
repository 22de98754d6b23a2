//! The GraphQL API over pacts in USDC and ETH side by side: exact amounts with the currency's
//! symbol and decimals beside them, a filter by currency, and volumes per currency, never summed
//! (in all, and day by day).

use agentpact_contracts::Initiator;
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::{ether, send},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{
    eips::BlockNumberOrTag,
    primitives::{Address, U256},
    providers::Provider,
};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde_json::json;

type Result = std::result::Result<(), HarnessError>;

const FIVE_USDC: u64 = 5_000_000;
const TWO_USDC: u64 = 2_000_000;

#[tokio::test]
async fn a_usdc_pact_reads_in_exact_usdc_and_stats_keep_each_currency_apart() -> Result {
    let m = Market::open().await?;
    let usdc = *m.chain.usdc.address();
    let open = m.create(m.terms_in(usdc, Initiator::Buyer, U256::from(FIVE_USDC)).await?).await?.0;
    m.accept(open, Initiator::Buyer, U256::from(FIVE_USDC)).await?;
    let done = m.create(m.terms_in(usdc, Initiator::Seller, U256::from(TWO_USDC)).await?).await?.0;
    m.accept(done, Initiator::Seller, U256::from(TWO_USDC)).await?;
    m.submitted(done).await?;
    m.verified(done, &[90, 90]).await?;
    send(m.chain.pact.approveWork(done).from(m.cast.buyer)).await?;
    m.funded(Initiator::Buyer, ether(1)).await?;
    m.completed(Initiator::Buyer, ether(3)).await?;

    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    let data = api
        .data(
            "query($usdc: Address!, $seller: Address!, $oracle: Address!) {
               pacts(filter: { currency: $usdc }) { totalCount edges { node {
                 id payment paymentFormatted buyerStakeFormatted sellerStakeFormatted
                 currency { address symbol decimals } } } }
               stats { completedVolume openVolume
                 volumes { currency { address symbol decimals } completed completedFormatted open openFormatted } }
               seller: reputation(address: $seller) { asSeller { volume volumes { currency { symbol } amount formatted } }
                                                      asBuyer { volumes { amount } } }
               oracle: reputation(address: $oracle) { asOracle { volumes { currency { symbol } formatted } } } }",
            json!({ "usdc": usdc.to_string(), "seller": m.cast.seller.to_string(),
                    "oracle": m.cast.oracles[0].to_string() }),
        )
        .await?;
    let usdc_hex = usdc.to_string();
    assert_eq!(data["pacts"]["totalCount"], 2, "the ETH pact is filtered out: {data}");
    let edges = data["pacts"]["edges"].as_array().cloned().unwrap_or_default();
    let first = &edges
        .iter()
        .find(|e| e["node"]["id"] == open.to_string())
        .ok_or_else(|| HarnessError::Process(format!("pact {open} is not listed: {data}")))?["node"];
    assert_eq!(first["payment"], FIVE_USDC.to_string());
    assert_eq!(first["paymentFormatted"], "5");
    assert_eq!(first["buyerStakeFormatted"], "0.5");
    assert_eq!(first["sellerStakeFormatted"], "0.5");
    assert_eq!(first["currency"], json!({ "address": usdc_hex, "symbol": "USDC", "decimals": 6 }));

    let stats = &data["stats"];
    assert_eq!(stats["completedVolume"], ether(3).to_string(), "completedVolume is ETH's alone");
    assert_eq!(stats["openVolume"], ether(1).to_string(), "openVolume is ETH's alone");
    assert_eq!(
        stats["volumes"],
        json!([
            { "currency": { "address": format!("0x{}", "0".repeat(40)), "symbol": "ETH", "decimals": 18 },
              "completed": ether(3).to_string(), "completedFormatted": "3",
              "open": ether(1).to_string(), "openFormatted": "1" },
            { "currency": { "address": usdc_hex, "symbol": "USDC", "decimals": 6 },
              "completed": TWO_USDC.to_string(), "completedFormatted": "2",
              "open": FIVE_USDC.to_string(), "openFormatted": "5" },
        ])
    );

    // Reputation volumes: each currency apart, only those paid in; `volume` is ETH's alone.
    let seller = &data["seller"];
    assert_eq!(seller["asSeller"]["volume"], ether(3).to_string());
    assert_eq!(
        seller["asSeller"]["volumes"],
        json!([
            { "currency": { "symbol": "ETH" }, "amount": ether(3).to_string(), "formatted": "3" },
            { "currency": { "symbol": "USDC" }, "amount": TWO_USDC.to_string(), "formatted": "2" },
        ])
    );
    assert_eq!(seller["asBuyer"]["volumes"], json!([]), "the seller bought nothing");
    assert_eq!(
        data["oracle"]["asOracle"]["volumes"],
        json!([
            { "currency": { "symbol": "ETH" }, "formatted": "3" },
            { "currency": { "symbol": "USDC" }, "formatted": "2" },
        ])
    );
    Ok(())
}

/// The latest block's time: when the transaction just mined happened on chain.
async fn now_on_chain(m: &Market) -> std::result::Result<DateTime<Utc>, HarnessError> {
    let block = m
        .chain
        .provider
        .get_block_by_number(BlockNumberOrTag::Latest)
        .await?
        .ok_or_else(|| HarnessError::Process("no latest block".into()))?;
    DateTime::from_timestamp(block.header.timestamp as i64, 0)
        .ok_or_else(|| HarnessError::Process("a block time out of range".into()))
}

#[tokio::test]
async fn volume_over_time_puts_each_completed_pact_in_its_day_and_currency_and_scores_in_their_band() -> Result
{
    let m = Market::open().await?;
    let usdc = *m.chain.usdc.address();
    m.completed(Initiator::Buyer, ether(3)).await?; // scored 90 and 80: a weighted 80-89
    let eth_day = now_on_chain(&m).await?.duration_trunc(TimeDelta::days(1)).map_err(process)?;
    m.chain.increase_time(2 * 86_400).await?;
    m.completed_in(usdc, Initiator::Seller, U256::from(TWO_USDC)).await?;
    let usdc_day = now_on_chain(&m).await?.duration_trunc(TimeDelta::days(1)).map_err(process)?;
    let failed = m.funded(Initiator::Buyer, ether(1)).await?;
    m.submitted(failed).await?;
    m.verified(failed, &[40, 40]).await?; // a weighted 40, not completed
    let newest = now_on_chain(&m).await?.duration_trunc(TimeDelta::days(1)).map_err(process)?;

    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    let data = api
        .data(
            "{ volumeOverTime(interval: DAY, last: 4) { start currency { symbol } pacts completed completedFormatted }
               scoreDistribution { from to pacts } }",
            json!({}),
        )
        .await?;
    // Four days ending with the indexed block's, each listing ETH then USDC.
    let mut expected = Vec::new();
    for k in (0..4).rev() {
        let start = newest - TimeDelta::days(k);
        for (symbol, day, amount, formatted) in
            [("ETH", eth_day, ether(3), "3"), ("USDC", usdc_day, U256::from(TWO_USDC), "2")]
        {
            let hit = start == day;
            expected.push(json!({
                "start": start.to_rfc3339(), "currency": { "symbol": symbol },
                "pacts": u64::from(hit),
                "completed": if hit { amount.to_string() } else { "0".into() },
                "completedFormatted": if hit { formatted } else { "0" },
            }));
        }
    }
    assert_eq!(data["volumeOverTime"], json!(expected));
    // The failed pact's 40, and the two completed pacts' 80-89.
    let counts: [u64; 10] = [0, 0, 0, 0, 1, 0, 0, 0, 2, 0];
    let bands: Vec<_> = (0..10u64)
        .map(|b| json!({ "from": b * 10, "to": if b == 9 { 100 } else { b * 10 + 9 }, "pacts": counts[b as usize] }))
        .collect();
    assert_eq!(data["scoreDistribution"], json!(bands));

    // Out of range: a clear refusal naming the argument.
    for last in [0, 367] {
        let refused = api.post(&format!("{{ volumeOverTime(last: {last}) {{ pacts }} }}"), json!({})).await?;
        assert_eq!(refused["errors"][0]["extensions"]["code"], "BAD_ARGUMENT", "{refused}");
        assert!(refused["errors"][0]["message"].as_str().is_some_and(|m| m.contains("last")), "{refused}");
    }
    Ok(())
}

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

#[tokio::test]
async fn an_accounts_balances_match_the_escrows_getter_and_list_its_withdrawals() -> Result {
    let m = Market::open().await?;
    let usdc = *m.chain.usdc.address();
    m.completed_in(usdc, Initiator::Seller, U256::from(TWO_USDC)).await?;
    m.completed(Initiator::Buyer, ether(3)).await?;
    m.withdraw_in(Address::ZERO, m.cast.seller).await?;

    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    let query = "query($a: Address!) { account(address: $a) {
        balances { currency { address symbol } credited withdrawn owed owedFormatted }
        withdrawals { currency { symbol } amount amountFormatted blockNumber } } }";
    let mut people = vec![m.cast.buyer, m.cast.seller, m.cast.arbitrator, m.cast.stranger];
    people.extend(m.cast.oracles.iter().copied());
    for who in people {
        let account = api.data(query, json!({ "a": who.to_string() })).await?["account"].clone();
        for currency in [Address::ZERO, usdc] {
            let getter = m.chain.pact.balances(currency, who).call().await?;
            let listed = account["balances"].as_array().and_then(|b| {
                b.iter()
                    .find(|b| b["currency"]["address"].as_str() == Some(currency.to_string().as_str()))
                    .cloned()
            });
            let owed = listed
                .as_ref()
                .map_or_else(|| "0".to_owned(), |b| b["owed"].as_str().unwrap_or("?").to_owned());
            assert_eq!(owed, getter.to_string(), "{who} in {currency}: {account}");
            if let Some(b) = listed {
                let parse = |v: &serde_json::Value| v.as_str().and_then(|s| s.parse::<U256>().ok());
                assert_eq!(
                    parse(&b["credited"]).zip(parse(&b["withdrawn"])).map(|(c, w)| c - w),
                    Some(getter)
                );
            }
        }
    }
    // The seller took out all its ETH in one withdrawal and still holds its USDC.
    let seller = api.data(query, json!({ "a": m.cast.seller.to_string() })).await?["account"].clone();
    let eth = &seller["balances"][0];
    assert_eq!(eth["currency"]["symbol"], "ETH");
    assert_eq!(eth["owed"], "0");
    assert_ne!(eth["withdrawn"], "0");
    assert_eq!(seller["withdrawals"].as_array().map(Vec::len), Some(1), "{seller}");
    assert_eq!(seller["withdrawals"][0]["amount"], eth["withdrawn"]);
    assert_eq!(seller["withdrawals"][0]["currency"]["symbol"], "ETH");
    assert_eq!(seller["balances"][1]["currency"]["symbol"], "USDC");
    assert_ne!(seller["balances"][1]["owed"], "0", "{seller}");

    let refused = api.post("{ account(address: \"0x0000000000000000000000000000000000000001\") { withdrawals(first: 101) { amount } } }", json!({})).await?;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "PAGE_TOO_LARGE", "{refused}");
    Ok(())
}
