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
    assert_eq!(first["paymentFormatted"], "5.000000");
    assert_eq!(first["buyerStakeFormatted"], "0.500000");
    assert_eq!(first["sellerStakeFormatted"], "0.500000");
    assert_eq!(first["currency"], json!({ "address": usdc_hex, "symbol": "USDC", "decimals": 6 }));

    let stats = &data["stats"];
    assert_eq!(stats["completedVolume"], ether(3).to_string(), "completedVolume is ETH's alone");
    assert_eq!(stats["openVolume"], ether(1).to_string(), "openVolume is ETH's alone");
    assert_eq!(
        stats["volumes"],
        json!([
            { "currency": { "address": format!("0x{}", "0".repeat(40)), "symbol": "ETH", "decimals": 18 },
              "completed": ether(3).to_string(), "completedFormatted": "3.000000000000000000",
              "open": ether(1).to_string(), "openFormatted": "1.000000000000000000" },
            { "currency": { "address": usdc_hex, "symbol": "USDC", "decimals": 6 },
              "completed": TWO_USDC.to_string(), "completedFormatted": "2.000000",
              "open": FIVE_USDC.to_string(), "openFormatted": "5.000000" },
        ])
    );

    // Reputation volumes: each currency apart, only those paid in; `volume` is ETH's alone.
    let seller = &data["seller"];
    assert_eq!(seller["asSeller"]["volume"], ether(3).to_string());
    assert_eq!(
        seller["asSeller"]["volumes"],
        json!([
            { "currency": { "symbol": "ETH" }, "amount": ether(3).to_string(), "formatted": "3.000000000000000000" },
            { "currency": { "symbol": "USDC" }, "amount": TWO_USDC.to_string(), "formatted": "2.000000" },
        ])
    );
    assert_eq!(seller["asBuyer"]["volumes"], json!([]), "the seller bought nothing");
    assert_eq!(
        data["oracle"]["asOracle"]["volumes"],
        json!([
            { "currency": { "symbol": "ETH" }, "formatted": "3.000000000000000000" },
            { "currency": { "symbol": "USDC" }, "formatted": "2.000000" },
        ])
    );
    Ok(())
}
