//! The escrow is one address whose code is three contracts (docs/contracts.md §Room): the core
//! forwards what it does not implement to the lifecycle module, which forwards the rest to the views
//! module, each by DELEGATECALL on the core's storage. These tests hold the seams: the modules are
//! exactly the committed code the core created, a module called directly sees no pact, and the
//! forwarding takes no ETH and answers an unknown selector as any contract does.

use agentpact_contracts::{
    AgentPact::{self, AgentPactErrors},
    Initiator, PactStatus,
};
use agentpact_tests::{
    HarnessError,
    chain::{ether, revert_of},
    docs,
    pacts::Market,
};
use alloy::{
    network::TransactionBuilder,
    primitives::{Address, Bytes, U256},
    providers::Provider,
    rpc::types::TransactionRequest,
};

type Result = std::result::Result<(), HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// The committed deployed bytecode of `contract` (contracts/artifacts).
fn committed_code(contract: &str) -> std::result::Result<Vec<u8>, HarnessError> {
    let artifact: serde_json::Value =
        serde_json::from_str(&docs::read(&format!("contracts/artifacts/{contract}.json"))?)
            .map_err(process)?;
    let hex =
        artifact["deployedBytecode"].as_str().ok_or_else(|| process(format!("{contract}.json: no code")))?;
    alloy::hex::decode(hex).map_err(process)
}

/// `code` with every occurrence of `address` (an immutable the constructor wrote) zeroed, as the
/// compiler leaves immutables in the artifact.
fn without(code: &[u8], address: Address) -> Vec<u8> {
    let mut code = code.to_vec();
    let needle = address.as_slice();
    let mut i = 0;
    while i + needle.len() <= code.len() {
        if &code[i..i + needle.len()] == needle {
            code[i..i + needle.len()].fill(0);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    code
}

#[tokio::test]
async fn the_modules_are_the_committed_code_and_called_directly_see_no_pact() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    let lifecycle = m.chain.pact.lifecycle().call().await?;
    // Answered by the lifecycle module, reached through the core's fallback.
    let views = m.chain.pact.views().call().await?;
    assert_ne!(lifecycle, views);

    let views_code = m.chain.provider.get_code_at(views).await.map_err(process)?;
    assert_eq!(
        views_code.to_vec(),
        committed_code("AgentPactViews")?,
        "the views module is the committed code"
    );
    let lifecycle_code = m.chain.provider.get_code_at(lifecycle).await.map_err(process)?;
    assert_eq!(
        without(&lifecycle_code, views),
        committed_code("AgentPactLifecycle")?,
        "the lifecycle module is the committed code, its one immutable the views module"
    );

    // Through the escrow the pact is there; each module on its own storage has none.
    assert_eq!(m.status(id).await?, PactStatus::Funded);
    let direct_views = AgentPact::new(views, m.chain.provider.clone());
    let got = revert_of::<AgentPactErrors, _, _>(direct_views.getPact(id)).await;
    assert_eq!(got, AgentPactErrors::PactNotFound(AgentPact::PactNotFound { pactId: id }));
    let direct_lifecycle = AgentPact::new(lifecycle, m.chain.provider.clone());
    let got = revert_of::<AgentPactErrors, _, _>(direct_lifecycle.startWork(id).from(m.cast.seller)).await;
    assert_eq!(got, AgentPactErrors::PactNotFound(AgentPact::PactNotFound { pactId: id }));
    // And a module's own view of the pact count is its own: none.
    let got = revert_of::<AgentPactErrors, _, _>(direct_lifecycle.getPact(U256::ZERO)).await;
    assert_eq!(got, AgentPactErrors::PactNotFound(AgentPact::PactNotFound { pactId: U256::ZERO }));

    // The seller's start, forwarded, moved the escrow's pact and not a module's.
    agentpact_tests::chain::send(m.chain.pact.startWork(id).from(m.cast.seller)).await?;
    assert_eq!(m.status(id).await?, PactStatus::InProgress);
    Ok(())
}

/// What a transaction to the escrow reverted with: `Some(data)` for a revert (empty when the
/// contract gave no reason), `None` when it would have been mined.
async fn reverted_with(m: &Market, from: Address, input: Bytes, value: U256) -> Option<Bytes> {
    let tx = TransactionRequest::default()
        .with_from(from)
        .with_to(*m.chain.pact.address())
        .with_input(input)
        .with_value(value);
    match m.chain.provider.call(tx).await {
        Ok(_) => None,
        Err(e) => Some(e.as_error_resp().and_then(|payload| payload.as_revert_data()).unwrap_or_default()),
    }
}

#[tokio::test]
async fn the_forwarding_takes_no_eth_and_an_unknown_selector_reverts_with_nothing() -> Result {
    let m = Market::open().await?;
    let id = m.funded(Initiator::Buyer, ether(1)).await?;
    let escrow = *m.chain.pact.address();
    let held = m.chain.balance(escrow).await?;
    let seller = m.cast.seller;

    // A module's function with ETH attached: the core's fallback is not payable.
    let start = Bytes::from(alloy::sol_types::SolCall::abi_encode(&AgentPact::startWorkCall { pactId: id }));
    assert_eq!(reverted_with(&m, seller, start.clone(), U256::ZERO).await, None, "without ETH it would pass");
    assert_eq!(reverted_with(&m, seller, start, U256::from(1u8)).await, Some(Bytes::new()));
    // A selector no part of the escrow has, with and without ETH, and plain ETH with no data.
    let unknown = Bytes::from_static(&[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(reverted_with(&m, seller, unknown.clone(), U256::ZERO).await, Some(Bytes::new()));
    assert_eq!(reverted_with(&m, seller, unknown, U256::from(1u8)).await, Some(Bytes::new()));
    assert_eq!(reverted_with(&m, seller, Bytes::new(), ether(1)).await, Some(Bytes::new()));

    assert_eq!(m.chain.balance(escrow).await?, held, "the escrow holds what it held");
    assert_eq!(m.status(id).await?, PactStatus::Funded);
    Ok(())
}
