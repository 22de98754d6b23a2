//! The GraphQL API over pacts in USDC and ETH side by side: exact amounts with the currency's
//! symbol and decimals beside them, a filter by currency, and volumes per currency, never summed.

use agentpact_contracts::Initiator;
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::{ether, send},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::primitives::U256;
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

    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    let data = api
        .data(
            "query($usdc: Address!) {
               pacts(filter: { currency: $usdc }) { totalCount edges { node {
                 id payment paymentFormatted buyerStakeFormatted sellerStakeFormatted
                 currency { address symbol decimals } } } }
               stats { completedVolume openVolume
                 volumes { currency { address symbol decimals } completed completedFormatted open openFormatted } } }",
            json!({ "usdc": usdc.to_string() }),
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
    assert_eq!(first["paymentFormatted"], "5.000000");
    assert_eq!(first["buyerStakeFormatted"], "0.500000");
    assert_eq!(first["sellerStakeFormatted"], "0.500000");
    assert_eq!(first["currency"], json!({ "address": usdc_hex, "symbol": "USDC", "decimals": 6 }));

    let stats = &data["stats"];
    assert_eq!(stats["completedVolume"], "0", "completedVolume is ETH's, and no ETH pact completed");
    assert_eq!(stats["openVolume"], ether(1).to_string(), "openVolume is ETH's alone");
    assert_eq!(
        stats["volumes"],
        json!([
            { "currency": { "address": format!("0x{}", "0".repeat(40)), "symbol": "ETH", "decimals": 18 },
              "completed": "0", "completedFormatted": "0.000000000000000000",
              "open": ether(1).to_string(), "openFormatted": "1.000000000000000000" },
            { "currency": { "address": usdc_hex, "symbol": "USDC", "decimals": 6 },
              "completed": TWO_USDC.to_string(), "completedFormatted": "2.000000",
              "open": FIVE_USDC.to_string(), "openFormatted": "5.000000" },
        ])
    );
    Ok(())
}
