//! Our ERC-8004 registries (contracts/dev, the stand-ins `agentpact dev` and the harness deploy on
//! anvil) held to the ERC's text and to ERC-8004's own Python SDK, agent0-sdk 1.7.1 (installed by
//! scripts/install-tools): the SDK registers an agent with its registration file on chain, reads it
//! back, moves its wallet with the wallet's EIP-712 signature, rates it from two clients, revokes,
//! answers and transfers it (tests/python/erc8004_sdk.py); our bindings carry every function and
//! event signature of the SDK's ABI; every rule refuses by name and changes nothing; the events an
//! indexer follows carry the agent wallet as it changes; the indexer reads the registries from an
//! ERC-8004 start block before the escrow's deployment when told to.

use std::{path::PathBuf, time::Duration};

use agentpact_contracts::{
    IdentityRegistry::{self, IdentityRegistryCalls, IdentityRegistryErrors, IdentityRegistryEvents},
    ReputationRegistry::{self, ReputationRegistryCalls, ReputationRegistryErrors, ReputationRegistryEvents},
};
use agentpact_tests::{
    HarnessError,
    chain::{Mined, TestChain, hash, revert_of, send},
    python::Sdk,
};
use alloy::{
    hex,
    json_abi::JsonAbi,
    primitives::{Address, B256, Bytes, U256, keccak256},
    signers::{SignerSync, local::PrivateKeySigner},
    sol_types::{Eip712Domain, SolEvent, SolEventInterface, SolStruct},
};
use serde_json::Value;

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

alloy::sol! {
    /// What a new agent wallet signs (ERC-8004; the domain is the Identity Registry's).
    struct AgentWalletSet {
        uint256 agentId;
        address newWallet;
        address owner;
        uint256 deadline;
    }
}

/// secp256k1's order: `n - s` is the malleable twin of a signature's `s`.
const SECP256K1_N: U256 =
    alloy::primitives::uint!(0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141_U256);

/// Runs tests/python/erc8004_sdk.py with `mode` and `env`; what it printed on stdout when it
/// succeeded and its output contains `ending`.
async fn sdk(mode: &str, env: &[(&str, String)], ending: &str) -> Result<String> {
    let env = env.iter().map(|(k, v)| (*k, v.as_str()));
    Sdk::Agent0.run("erc8004_sdk.py", &[mode], env, Duration::from_secs(180), ending).await
}

/// Our committed artifact's ABI (what the bindings are generated from).
fn our_abi(name: &str) -> JsonAbi {
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../contracts/artifacts/dev/{name}.json"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let artifact: Value = serde_json::from_str(&text).expect("an artifact is JSON");
    serde_json::from_value(artifact["abi"].clone()).expect("an artifact's abi is an ABI")
}

fn indexed_of(abi: &JsonAbi, signature: &str) -> Vec<bool> {
    let event = abi.events().find(|e| e.signature() == signature);
    event
        .unwrap_or_else(|| panic!("no event {signature} in our ABI"))
        .inputs
        .iter()
        .map(|p| p.indexed)
        .collect()
}

/// The SDK's `ResponseAppended`: four indexed parameters, which no Solidity event can declare
/// (three at most beside the signature). Ours follows the ERC's text instead.
const SDK_RESPONSE_APPENDED: &str = "ResponseAppended(uint256,address,uint64,address,string)";

/// Every function and event the SDK's ABI lists for `registry` is one of our bindings'
/// (`SolCall::SIGNATURE`, `SolEvent::SIGNATURE`), with the same outputs, mutability and indexed
/// parameters; returns how many entries were compared.
fn compare(registry: &str, sdk: &Value, calls: &[&str], events: &[&str], ours: &JsonAbi) -> usize {
    let entries = sdk.as_array().unwrap_or_else(|| panic!("the SDK's {registry} ABI is not a list"));
    for entry in entries {
        let signature = entry["signature"].as_str().expect("a signature");
        let strings = |key: &str| -> Vec<String> {
            entry[key]
                .as_array()
                .expect(key)
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_owned())
                .collect()
        };
        if entry["kind"] == "function" {
            assert!(
                calls.contains(&signature),
                "{registry}: the SDK calls {signature}, our bindings have no such call"
            );
            let ours = ours.functions().find(|f| f.signature() == signature).expect("in the artifact");
            let outputs: Vec<String> = ours.outputs.iter().map(|p| p.selector_type().into_owned()).collect();
            assert_eq!(outputs, strings("outputs"), "{registry}: outputs of {signature}");
            let mutability = serde_json::to_value(ours.state_mutability).expect("a mutability");
            assert_eq!(mutability, entry["stateMutability"], "{registry}: mutability of {signature}");
        } else if signature == SDK_RESPONSE_APPENDED {
            let indexed =
                entry["indexed"].as_array().expect("indexed").iter().filter(|i| **i == true).count();
            assert_eq!(indexed, 4, "the SDK's ResponseAppended changed: follow it if Solidity can now");
            assert!(!events.contains(&signature));
            assert_eq!(ReputationRegistry::ResponseAppended::SIGNATURE, ERC_RESPONSE_APPENDED);
            assert_eq!(indexed_of(ours, ERC_RESPONSE_APPENDED), [true, true, false, true, false, false]);
        } else {
            assert!(
                events.contains(&signature),
                "{registry}: the SDK's ABI lists {signature}, our bindings do not"
            );
            let flags: Vec<bool> =
                entry["indexed"].as_array().expect("indexed").iter().map(|i| *i == true).collect();
            assert_eq!(indexed_of(ours, signature), flags, "{registry}: indexed parameters of {signature}");
        }
    }
    entries.len()
}

/// `ResponseAppended` as the ERC's text declares it.
const ERC_RESPONSE_APPENDED: &str = "ResponseAppended(uint256,address,uint64,address,string,bytes32)";

/// The SDK's ABI (read from the installed package, never copied here) against our bindings, and
/// the events an indexer follows, exactly.
#[tokio::test]
async fn our_bindings_carry_every_signature_of_the_sdks_abi() -> Result {
    let printed = sdk("abi", &[], "\"identity\"").await?;
    let sdk_abi: Value = serde_json::from_str(printed.trim()).map_err(process)?;
    let identity = compare(
        "identity",
        &sdk_abi["identity"],
        IdentityRegistryCalls::SIGNATURES,
        IdentityRegistryEvents::SIGNATURES,
        &our_abi("IdentityRegistry"),
    );
    let reputation = compare(
        "reputation",
        &sdk_abi["reputation"],
        ReputationRegistryCalls::SIGNATURES,
        ReputationRegistryEvents::SIGNATURES,
        &our_abi("ReputationRegistry"),
    );
    // So a renamed key in the script cannot make the comparison vacuous: 17 + 3 and 10 + 3 today.
    assert!(identity >= 20 && reputation >= 13, "compared only {identity} and {reputation} entries");

    // The events the indexer follows, and which of their parameters are topics.
    let (id_abi, rep_abi) = (our_abi("IdentityRegistry"), our_abi("ReputationRegistry"));
    for (signature, ours, abi, indexed) in [
        (
            "Transfer(address,address,uint256)",
            IdentityRegistry::Transfer::SIGNATURE,
            &id_abi,
            &[true, true, true][..],
        ),
        (
            "Registered(uint256,string,address)",
            IdentityRegistry::Registered::SIGNATURE,
            &id_abi,
            &[true, false, true],
        ),
        (
            "URIUpdated(uint256,string,address)",
            IdentityRegistry::URIUpdated::SIGNATURE,
            &id_abi,
            &[true, false, true],
        ),
        (
            "MetadataSet(uint256,string,string,bytes)",
            IdentityRegistry::MetadataSet::SIGNATURE,
            &id_abi,
            &[true, true, false, false],
        ),
        (
            "NewFeedback(uint256,address,uint64,int128,uint8,string,string,string,string,string,bytes32)",
            ReputationRegistry::NewFeedback::SIGNATURE,
            &rep_abi,
            &[true, true, false, false, false, true, false, false, false, false, false],
        ),
        (
            "FeedbackRevoked(uint256,address,uint64)",
            ReputationRegistry::FeedbackRevoked::SIGNATURE,
            &rep_abi,
            &[true, true, true],
        ),
    ] {
        assert_eq!(ours, signature);
        assert_eq!(indexed_of(abi, signature), indexed, "indexed parameters of {signature}");
    }
    Ok(())
}

/// The SDK drives our registries end to end through what it reads from the chain itself.
#[tokio::test]
async fn the_sdk_registers_reads_rates_revokes_and_transfers_on_our_registries() -> Result {
    let chain = TestChain::start().await?;
    let key = |n: usize| format!("0x{}", hex::encode(chain.anvil.keys()[n].to_bytes()));
    let (owner, client_a, client_b, wallet, new_owner) = (11, 12, 13, 14, 15);
    let env = [
        ("RPC_URL", chain.anvil.endpoint()),
        ("CHAIN_ID", chain.anvil.chain_id().to_string()),
        ("IDENTITY", chain.erc8004.identity.to_string()),
        ("REPUTATION", chain.erc8004.reputation.to_string()),
        ("OWNER_KEY", key(owner)),
        ("CLIENT_A_KEY", key(client_a)),
        ("CLIENT_B_KEY", key(client_b)),
        ("WALLET_KEY", key(wallet)),
        ("NEW_OWNER_KEY", key(new_owner)),
        ("MCP_URL", "https://designbot.example/mcp".to_owned()),
    ];
    let printed = sdk("flow", &env, "sdk flow complete").await?;
    eprintln!("{printed}");

    // What the SDK did, read back through our bindings.
    let id = IdentityRegistry::new(chain.erc8004.identity, &chain.provider);
    let rep = ReputationRegistry::new(chain.erc8004.reputation, &chain.provider);
    let agent = U256::ZERO;
    assert_eq!(id.ownerOf(agent).call().await?, chain.accounts[new_owner]);
    assert_eq!(id.getAgentWallet(agent).call().await?, Address::ZERO);
    assert_eq!(rep.getClients(agent).call().await?, [chain.accounts[client_a], chain.accounts[client_b]]);
    assert_eq!(rep.getLastIndex(agent, chain.accounts[client_a]).call().await?, 1);
    assert!(rep.readFeedback(agent, chain.accounts[client_b], 1).call().await?.isRevoked);
    Ok(())
}

/// The Identity Registry events of a mined call.
fn identity_events(mined: &Mined) -> Vec<IdentityRegistryEvents> {
    let logs = mined.receipt.inner.logs();
    logs.iter().filter_map(|l| IdentityRegistryEvents::decode_log(&l.inner).ok().map(|l| l.data)).collect()
}

/// The Reputation Registry events of a mined call.
fn reputation_events(mined: &Mined) -> Vec<ReputationRegistryEvents> {
    let logs = mined.receipt.inner.logs();
    logs.iter().filter_map(|l| ReputationRegistryEvents::decode_log(&l.inner).ok().map(|l| l.data)).collect()
}

/// `MetadataSet(agentId, "agentWallet", "agentWallet", value)`.
fn wallet_set(agent: u64, value: &[u8]) -> IdentityRegistryEvents {
    IdentityRegistryEvents::MetadataSet(IdentityRegistry::MetadataSet {
        agentId: U256::from(agent),
        indexedKey: keccak256("agentWallet"),
        key: "agentWallet".into(),
        value: Bytes::copy_from_slice(value),
    })
}

macro_rules! refuses {
    ($errors:ident, $contract:ident, $call:expr, $error:ident { $($field:ident : $value:expr),* $(,)? }) => {{
        let got = revert_of::<$errors, _, _>($call).await;
        assert_eq!(got, $errors::$error($contract::$error { $($field: $value),* }));
    }};
}

macro_rules! identity_refuses {
    ($call:expr, $error:ident { $($field:ident : $value:expr),* $(,)? }) => {
        refuses!(IdentityRegistryErrors, IdentityRegistry, $call, $error { $($field: $value),* })
    };
}

macro_rules! reputation_refuses {
    ($call:expr, $error:ident { $($field:ident : $value:expr),* $(,)? }) => {
        refuses!(ReputationRegistryErrors, ReputationRegistry, $call, $error { $($field: $value),* })
    };
}

/// The 65-byte signature (r, s, v) by `key` of `AgentWalletSet` under the registry's domain.
fn wallet_signature(
    key: &PrivateKeySigner,
    chain: &TestChain,
    agent: u64,
    wallet: Address,
    owner: Address,
    deadline: u64,
) -> Bytes {
    let domain = Eip712Domain::new(
        Some("ERC8004IdentityRegistry".into()),
        Some("1".into()),
        Some(U256::from(chain.anvil.chain_id())),
        Some(chain.erc8004.identity),
        None,
    );
    let message = AgentWalletSet {
        agentId: U256::from(agent),
        newWallet: wallet,
        owner,
        deadline: U256::from(deadline),
    };
    let signature = key.sign_hash_sync(&message.eip712_signing_hash(&domain)).expect("signs");
    Bytes::copy_from_slice(&signature.as_bytes())
}

/// The same signature with `s` replaced by `n - s` and `v` flipped: valid for ecrecover, refused by
/// the low-`s` rule.
fn malleable_twin(signature: &Bytes) -> Bytes {
    let s = U256::from_be_slice(&signature[32..64]);
    let mut twin = signature.to_vec();
    twin[32..64].copy_from_slice(&(SECP256K1_N - s).to_be_bytes::<32>());
    twin[64] = if signature[64] == 27 { 28 } else { 27 };
    Bytes::from(twin)
}

/// Registration (ids from 0, the wallet set to the owner), metadata, URIs, the wallet rule (the new
/// wallet's signature, its deadline, a contract wallet, a malleable signature) and ERC-721 (approval,
/// operators, transfers that clear the wallet), each refusal by name and changing nothing.
#[tokio::test]
async fn the_identity_registry_keeps_its_rules_and_its_events_carry_the_wallet() -> Result {
    let chain = TestChain::start().await?;
    let id = IdentityRegistry::new(chain.erc8004.identity, &chain.provider);
    let a = &chain.accounts;
    let (owner, stranger, wallet, approved, operator, buyer) = (a[11], a[12], a[13], a[14], a[15], a[16]);
    let key = |n: usize| PrivateKeySigner::from(chain.anvil.keys()[n].clone());
    let (zero, one) = (U256::ZERO, U256::from(1));
    let file = "data:application/json;base64,eyJuYW1lIjoiRGVzaWduQm90In0=";

    // Registration: Transfer, the wallet set to the owner, each entry, then Registered.
    let entry = |k: &str, v: &str| IdentityRegistry::MetadataEntry {
        key: k.into(),
        value: Bytes::copy_from_slice(v.as_bytes()),
    };
    identity_refuses!(
        id.register_1(file.into(), vec![entry("agentName", "x"), entry("agentWallet", "x")]).from(owner),
        ReservedMetadataKey { key: "agentWallet".into() }
    );
    let mined =
        send(id.register_1(file.into(), vec![entry("agentName", "designbot.eth")]).from(owner)).await?;
    assert_eq!(
        identity_events(&mined),
        [
            IdentityRegistryEvents::Transfer(IdentityRegistry::Transfer {
                from: Address::ZERO,
                to: owner,
                tokenId: zero
            }),
            wallet_set(0, owner.as_slice()),
            IdentityRegistryEvents::MetadataSet(IdentityRegistry::MetadataSet {
                agentId: zero,
                indexedKey: keccak256("agentName"),
                key: "agentName".into(),
                value: Bytes::from("designbot.eth"),
            }),
            IdentityRegistryEvents::Registered(IdentityRegistry::Registered {
                agentId: zero,
                agentURI: file.into(),
                owner
            }),
        ]
    );
    assert_eq!(
        id.ownerOf(zero).call().await?,
        owner,
        "the first agent is 0: the refused registration minted none"
    );
    assert_eq!(id.balanceOf(owner).call().await?, one);
    assert_eq!(id.tokenURI(zero).call().await?, file);
    assert_eq!(id.getAgentWallet(zero).call().await?, owner);
    assert_eq!(
        id.getMetadata(zero, "agentWallet".into()).call().await?,
        Bytes::copy_from_slice(owner.as_slice())
    );
    assert_eq!(id.getMetadata(zero, "agentName".into()).call().await?, Bytes::from("designbot.eth"));
    let mined = send(id.register_0().from(stranger)).await?;
    assert!(matches!(&identity_events(&mined)[..], [_, _, IdentityRegistryEvents::Registered(r)]
        if r.agentId == one && r.agentURI.is_empty() && r.owner == stranger));
    let mined = send(id.register_2(file.into()).from(stranger)).await?;
    assert!(
        matches!(&identity_events(&mined)[2], IdentityRegistryEvents::Registered(r) if r.agentId == U256::from(2))
    );

    // Metadata and the URI: only the owner's side; never the wallet key.
    identity_refuses!(
        id.setMetadata(zero, "agentWallet".into(), Bytes::copy_from_slice(stranger.as_slice())).from(owner),
        ReservedMetadataKey { key: "agentWallet".into() }
    );
    identity_refuses!(
        id.setMetadata(zero, "agentName".into(), Bytes::from("evil.eth")).from(stranger),
        NotAuthorized { agentId: zero, caller: stranger }
    );
    identity_refuses!(
        id.setAgentURI(zero, "https://evil".into()).from(stranger),
        NotAuthorized { agentId: zero, caller: stranger }
    );
    assert_eq!(
        (id.getAgentWallet(zero).call().await?, id.tokenURI(zero).call().await?),
        (owner, file.to_owned()),
        "the refusals changed nothing"
    );
    assert_eq!(id.getMetadata(zero, "agentName".into()).call().await?, Bytes::from("designbot.eth"));
    identity_refuses!(
        id.approve_0(approved, zero).from(stranger),
        NotOwnerNorOperator { agentId: zero, caller: stranger }
    );
    let mined = send(id.approve_0(approved, zero).from(owner)).await?;
    assert_eq!(
        identity_events(&mined),
        [IdentityRegistryEvents::Approval(IdentityRegistry::Approval { owner, approved, tokenId: zero })]
    );
    send(id.setApprovalForAll(operator, true).from(owner)).await?;
    assert!(id.isApprovedForAll(owner, operator).call().await?);
    for (by, uri) in [(approved, "https://a.example/1.json"), (operator, "https://a.example/2.json")] {
        let mined = send(id.setAgentURI(zero, uri.into()).from(by)).await?;
        assert_eq!(
            identity_events(&mined),
            [IdentityRegistryEvents::URIUpdated(IdentityRegistry::URIUpdated {
                agentId: zero,
                newURI: uri.into(),
                updatedBy: by
            })]
        );
    }
    send(id.setTokenURI(zero, file.into()).from(owner)).await?;
    assert_eq!(id.tokenURI(zero).call().await?, file, "setTokenURI is setAgentURI");

    // The wallet: the new wallet's signature over (agent, wallet, owner, deadline), fresh.
    let t = chain.now().await? + 100;
    let good = wallet_signature(&key(13), &chain, 0, wallet, owner, t + 300);
    let bad_wallet =
        |signature: Bytes| id.setAgentWallet(zero, wallet, U256::from(t + 300), signature).from(owner);
    let invalid = IdentityRegistry::InvalidWalletSignature { agentId: zero, newWallet: wallet };
    for (signature, what) in [
        (wallet_signature(&key(12), &chain, 0, wallet, owner, t + 300), "signed by another key"),
        (wallet_signature(&key(13), &chain, 0, wallet, stranger, t + 300), "signed for another owner"),
        (wallet_signature(&key(13), &chain, 1, wallet, owner, t + 300), "signed for another agent"),
        (wallet_signature(&key(13), &chain, 0, wallet, owner, t + 299), "signed for another deadline"),
        (malleable_twin(&good), "the malleable twin of the good signature"),
        (Bytes::from(good[..64].to_vec()), "64 bytes"),
    ] {
        chain.at(t).await?;
        let got = revert_of::<IdentityRegistryErrors, _, _>(bad_wallet(signature)).await;
        assert_eq!(got, IdentityRegistryErrors::InvalidWalletSignature(invalid.clone()), "{what}");
    }
    chain.at(t).await?;
    identity_refuses!(
        id.setAgentWallet(
            zero,
            wallet,
            U256::from(t - 1),
            wallet_signature(&key(13), &chain, 0, wallet, owner, t - 1)
        )
        .from(owner),
        WalletSignatureExpired { deadline: U256::from(t - 1), nowTime: U256::from(t) }
    );
    identity_refuses!(
        id.setAgentWallet(
            zero,
            wallet,
            U256::from(t + 301),
            wallet_signature(&key(13), &chain, 0, wallet, owner, t + 301)
        )
        .from(owner),
        WalletDeadlineTooFar { deadline: U256::from(t + 301), latest: U256::from(t + 300) }
    );
    identity_refuses!(
        id.setAgentWallet(zero, Address::ZERO, U256::from(t + 300), good.clone()).from(owner),
        ZeroWallet {}
    );
    identity_refuses!(
        bad_wallet(good.clone()).from(stranger),
        NotAuthorized { agentId: zero, caller: stranger }
    );
    // A contract wallet must accept by ERC-1271; the reputation registry answers nothing.
    let contract_wallet = chain.erc8004.reputation;
    identity_refuses!(
        id.setAgentWallet(zero, contract_wallet, U256::from(t + 300), good.clone()).from(owner),
        InvalidWalletSignature { agentId: zero, newWallet: contract_wallet }
    );
    assert_eq!(id.getAgentWallet(zero).call().await?, owner, "no refused signature moved the wallet");
    let mined = send(bad_wallet(good.clone())).await?; // at t, the deadline exactly 300 s ahead
    assert_eq!(identity_events(&mined), [wallet_set(0, wallet.as_slice())]);
    assert_eq!(id.getAgentWallet(zero).call().await?, wallet);
    assert_eq!(
        id.getMetadata(zero, "agentWallet".into()).call().await?,
        Bytes::copy_from_slice(wallet.as_slice())
    );
    identity_refuses!(
        id.unsetAgentWallet(zero).from(stranger),
        NotAuthorized { agentId: zero, caller: stranger }
    );
    let mined = send(id.unsetAgentWallet(zero).from(operator)).await?;
    assert_eq!(identity_events(&mined), [wallet_set(0, &[])]);
    assert_eq!(id.getAgentWallet(zero).call().await?, Address::ZERO);
    assert!(id.getMetadata(zero, "agentWallet".into()).call().await?.is_empty());
    send(bad_wallet(good.clone())).await?;

    // ERC-721: who may move an agent, where to; a transfer clears the approval and the wallet.
    identity_refuses!(
        id.transferFrom(owner, buyer, zero).from(stranger),
        NotAuthorized { agentId: zero, caller: stranger }
    );
    identity_refuses!(
        id.transferFrom(stranger, buyer, zero).from(owner),
        NotTheOwner { agentId: zero, from: stranger, owner: owner }
    );
    identity_refuses!(id.transferFrom(owner, Address::ZERO, zero).from(owner), TransferToZeroAddress {});
    identity_refuses!(
        id.safeTransferFrom_0(owner, contract_wallet, zero).from(owner),
        UnsafeRecipient { to: contract_wallet }
    );
    identity_refuses!(id.ownerOf(U256::from(99)).from(owner), AgentNotFound { agentId: U256::from(99) });
    identity_refuses!(id.balanceOf(Address::ZERO).from(owner), ZeroAddressQuery {});
    assert_eq!((id.ownerOf(zero).call().await?, id.getAgentWallet(zero).call().await?), (owner, wallet));
    let mined = send(id.safeTransferFrom_0(owner, buyer, zero).from(approved)).await?;
    assert_eq!(
        identity_events(&mined),
        [
            IdentityRegistryEvents::Transfer(IdentityRegistry::Transfer {
                from: owner,
                to: buyer,
                tokenId: zero
            }),
            wallet_set(0, &[]),
        ]
    );
    assert_eq!(id.ownerOf(zero).call().await?, buyer);
    assert_eq!((id.balanceOf(owner).call().await?, id.balanceOf(buyer).call().await?), (zero, one));
    assert_eq!(id.getApproved(zero).call().await?, Address::ZERO, "the transfer cleared the approval");
    assert_eq!(id.getAgentWallet(zero).call().await?, Address::ZERO, "the transfer cleared the wallet");
    identity_refuses!(
        id.setAgentURI(zero, "x".into()).from(operator),
        NotAuthorized { agentId: zero, caller: operator }
    );
    // The old owner's wallet signature names the old owner: the new one cannot replay it.
    identity_refuses!(
        bad_wallet(good).from(buyer),
        InvalidWalletSignature { agentId: zero, newWallet: wallet }
    );
    // The SDK's argument order approves too.
    let mined = send(id.approve_1(zero, approved).from(buyer)).await?;
    assert_eq!(
        identity_events(&mined),
        [IdentityRegistryEvents::Approval(IdentityRegistry::Approval {
            owner: buyer,
            approved,
            tokenId: zero
        })]
    );

    for (interface, supported) in
        [("01ffc9a7", true), ("80ac58cd", true), ("5b5e139f", true), ("ffffffff", false)]
    {
        let interface = alloy::primitives::FixedBytes::<4>::from_slice(&hex::decode(interface).expect("hex"));
        assert_eq!(id.supportsInterface(interface).call().await?, supported, "{interface}");
    }
    Ok(())
}

/// Feedback: refused to the agent's side, out-of-range values and unknown agents; indexes from 1
/// per client; revocation only of one's own, once; responses by anyone; summaries over named
/// clients, exact to 18 decimals across mixed decimals.
#[tokio::test]
async fn the_reputation_registry_keeps_its_rules_and_sums_exactly() -> Result {
    let chain = TestChain::start().await?;
    let id = IdentityRegistry::new(chain.erc8004.identity, &chain.provider);
    let rep = ReputationRegistry::new(chain.erc8004.reputation, &chain.provider);
    let a = &chain.accounts;
    let (owner, approved, operator, client_a, client_b, stranger) =
        (a[11], a[12], a[13], a[14], a[15], a[16]);
    let agent = U256::ZERO;
    assert_eq!(rep.getIdentityRegistry().call().await?, chain.erc8004.identity);
    send(id.register_2("https://designbot.example/agent.json".into()).from(owner)).await?;
    send(id.register_0().from(owner)).await?; // agent 1
    send(id.approve_0(approved, agent).from(owner)).await?;
    send(id.setApprovalForAll(operator, true).from(owner)).await?;

    let give = |agent: U256, value: i128, decimals: u8, tag1: &str, tag2: &str| {
        rep.giveFeedback(
            agent,
            value,
            decimals,
            tag1.into(),
            tag2.into(),
            String::new(),
            String::new(),
            B256::ZERO,
        )
    };
    for who in [owner, approved, operator] {
        reputation_refuses!(
            give(agent, 100, 0, "", "").from(who),
            SelfFeedback { agentId: agent, client: who }
        );
    }
    reputation_refuses!(
        give(agent, 1, 19, "", "").from(client_a),
        ValueDecimalsTooLarge { valueDecimals: 19 }
    );
    let too_big = 10i128.pow(38) + 1;
    reputation_refuses!(give(agent, too_big, 0, "", "").from(client_a), ValueOutOfRange { value: too_big });
    reputation_refuses!(
        give(agent, -too_big, 18, "", "").from(client_a),
        ValueOutOfRange { value: -too_big }
    );
    reputation_refuses!(
        give(U256::from(99), 1, 0, "", "").from(client_a),
        AgentNotFound { agentId: U256::from(99) }
    );
    assert!(rep.getClients(agent).call().await?.is_empty(), "no refused feedback was stored");
    assert_eq!(rep.getLastIndex(agent, owner).call().await?, 0);

    // Indexes count from 1 for each client; the event carries every field.
    let mined = send(
        rep.giveFeedback(
            agent,
            80,
            0,
            "pact:7".into(),
            "quality".into(),
            "https://designbot.example/mcp".into(),
            "ipfs://feedback".into(),
            hash(1),
        )
        .from(client_a),
    )
    .await?;
    assert_eq!(
        reputation_events(&mined),
        [ReputationRegistryEvents::NewFeedback(ReputationRegistry::NewFeedback {
            agentId: agent,
            clientAddress: client_a,
            feedbackIndex: 1,
            value: 80,
            valueDecimals: 0,
            indexedTag1: keccak256("pact:7"),
            tag1: "pact:7".into(),
            tag2: "quality".into(),
            endpoint: "https://designbot.example/mcp".into(),
            feedbackURI: "ipfs://feedback".into(),
            feedbackHash: hash(1),
        })]
    );
    let second = send(give(agent, -5, 0, "late", "").from(client_a)).await?;
    assert!(
        matches!(&reputation_events(&second)[..], [ReputationRegistryEvents::NewFeedback(f)] if f.feedbackIndex == 2)
    );
    let first_of_b = send(give(agent, 955, 1, "starred", "").from(client_b)).await?;
    assert!(
        matches!(&reputation_events(&first_of_b)[..], [ReputationRegistryEvents::NewFeedback(f)] if f.feedbackIndex == 1)
    );
    assert_eq!(rep.getClients(agent).call().await?, [client_a, client_b]);
    assert_eq!(
        (rep.getLastIndex(agent, client_a).call().await?, rep.getLastIndex(agent, client_b).call().await?),
        (2, 1)
    );
    let read = rep.readFeedback(agent, client_a, 1).call().await?;
    assert_eq!(
        (read.value, read.valueDecimals, read.tag1, read.tag2, read.isRevoked),
        (80, 0, "pact:7".into(), "quality".into(), false)
    );
    for index in [0, 3] {
        reputation_refuses!(
            rep.readFeedback(agent, client_a, index).from(stranger),
            FeedbackNotFound { agentId: agent, clientAddress: client_a, feedbackIndex: index }
        );
    }

    // Summaries: over named clients only; (80 - 5 + 95.5) / 3, truncated at 18 decimals.
    let summary = |clients: Vec<Address>, tag1: &str, tag2: &str| {
        rep.getSummary(agent, clients, tag1.into(), tag2.into())
    };
    let of = |s: ReputationRegistry::getSummaryReturn| (s.count, s.summaryValue, s.summaryValueDecimals);
    reputation_refuses!(summary(vec![], "", "").from(stranger), ClientAddressesRequired {});
    assert_eq!(
        of(summary(vec![client_a, client_b], "", "").call().await?),
        (3, 56_833_333_333_333_333_333, 18)
    );
    assert_eq!(of(summary(vec![client_a], "pact:7", "").call().await?), (1, 80, 0));
    assert_eq!(of(summary(vec![client_a], "pact:7", "quality").call().await?), (1, 80, 0));
    assert_eq!(of(summary(vec![client_a], "pact:7", "speed").call().await?), (0, 0, 0));
    assert_eq!(of(summary(vec![client_b], "", "").call().await?), (1, 955, 1));
    assert_eq!(of(summary(vec![stranger], "", "").call().await?), (0, 0, 0));

    // Revocation: one's own feedback only, once; it stays readable and leaves the summaries.
    reputation_refuses!(
        rep.revokeFeedback(agent, 1).from(stranger),
        FeedbackNotFound { agentId: agent, clientAddress: stranger, feedbackIndex: 1 }
    );
    assert!(!rep.readFeedback(agent, client_b, 1).call().await?.isRevoked, "a stranger revoked nothing");
    let mined = send(rep.revokeFeedback(agent, 1).from(client_b)).await?;
    assert_eq!(
        reputation_events(&mined),
        [ReputationRegistryEvents::FeedbackRevoked(ReputationRegistry::FeedbackRevoked {
            agentId: agent,
            clientAddress: client_b,
            feedbackIndex: 1
        })]
    );
    reputation_refuses!(
        rep.revokeFeedback(agent, 1).from(client_b),
        AlreadyRevoked { agentId: agent, clientAddress: client_b, feedbackIndex: 1 }
    );
    assert!(rep.readFeedback(agent, client_b, 1).call().await?.isRevoked);
    assert_eq!(of(summary(vec![client_a, client_b], "", "").call().await?), (2, 375, 1));
    let all =
        |include: bool, tag1: &str| rep.readAllFeedback(agent, vec![], tag1.into(), String::new(), include);
    let listed = all(false, "").call().await?;
    assert_eq!(
        (listed.clientList, listed.feedbackIndexes, listed.values),
        (vec![client_a, client_a], vec![1, 2], vec![80, -5])
    );
    let listed = all(true, "").call().await?;
    assert_eq!(
        (listed.clientList, listed.revokedStatuses, listed.valueDecimals),
        (vec![client_a, client_a, client_b], vec![false, false, true], vec![0, 0, 1])
    );
    assert_eq!(all(true, "pact:7").call().await?.tag2s, ["quality"]);

    // Responses: by anyone, to feedback that exists; counted with the optional filters.
    let respond = |index: u64| rep.appendResponse(agent, client_a, index, "ipfs://refund".into(), hash(2));
    let mined = send(respond(1).from(owner)).await?;
    assert_eq!(
        reputation_events(&mined),
        [ReputationRegistryEvents::ResponseAppended(ReputationRegistry::ResponseAppended {
            agentId: agent,
            clientAddress: client_a,
            feedbackIndex: 1,
            responder: owner,
            responseURI: "ipfs://refund".into(),
            responseHash: hash(2),
        })]
    );
    send(respond(1).from(stranger)).await?;
    reputation_refuses!(
        respond(3).from(owner),
        FeedbackNotFound { agentId: agent, clientAddress: client_a, feedbackIndex: 3 }
    );
    let count = |client: Address, index: u64, responders: Vec<Address>| {
        rep.getResponseCount(agent, client, index, responders)
    };
    assert_eq!(count(client_a, 1, vec![]).call().await?, 2);
    assert_eq!(count(client_a, 1, vec![owner]).call().await?, 1);
    assert_eq!(count(client_a, 2, vec![]).call().await?, 0);
    assert_eq!(count(Address::ZERO, 0, vec![]).call().await?, 2);
    assert_eq!(count(client_b, 0, vec![stranger]).call().await?, 0);

    // The bounds themselves are accepted; a negative average keeps its sign; an average beyond
    // int128 at 18 decimals is written with fewer.
    let other = U256::from(1);
    let on_other = |clients: Vec<Address>| rep.getSummary(other, clients, String::new(), String::new());
    send(give(other, 10i128.pow(38), 0, "", "").from(client_a)).await?;
    send(give(other, -(10i128.pow(38)), 18, "", "").from(client_a)).await?;
    assert_eq!(
        of(on_other(vec![client_a]).call().await?),
        (2, 49_999_999_999_999_999_950_000_000_000_000_000_000, 0)
    );
    send(give(other, 10i128.pow(38) - 1, 0, "", "").from(stranger)).await?;
    send(give(other, 1, 18, "", "").from(stranger)).await?;
    // (10^38 - 1 + 10^-18) / 2, truncated to what int128 holds.
    assert_eq!(
        of(on_other(vec![stranger]).call().await?),
        (2, 49_999_999_999_999_999_999_999_999_999_999_999_999, 0)
    );
    send(give(other, -32, 1, "tradingYield", "week").from(client_b)).await?;
    assert_eq!(of(on_other(vec![client_b]).call().await?), (1, -32, 1));

    // A reputation registry needs an identity registry that is a contract.
    let refused = ReputationRegistry::deploy_builder(&chain.provider, stranger).from(owner).send().await;
    let error = refused.err().and_then(|e| e.as_decoded_interface_error::<ReputationRegistryErrors>());
    assert_eq!(
        error,
        Some(ReputationRegistryErrors::NotAContract(ReputationRegistry::NotAContract {
            identityRegistry: stranger
        }))
    );
    Ok(())
}

/// The ERC-8004 agents in the index: agent id and registration file.
async fn indexed_agents(pool: &sqlx::PgPool) -> Result<Vec<(String, Option<String>)>> {
    Ok(sqlx::query_as(
        "SELECT a.agent_id::text, (SELECT c.uri FROM erc8004_agent_changes c
                                  WHERE c.chain_id = a.chain_id AND c.agent_id = a.agent_id AND c.field = 'uri'
                                  ORDER BY c.block_number DESC, c.log_index DESC LIMIT 1)
         FROM erc8004_agents a ORDER BY a.agent_id",
    )
    .fetch_all(pool)
    .await?)
}

/// On a real network the registries long predate our escrow: an agent registered before the
/// deployment block is in an index that reads the registries from an earlier block
/// (`ERC8004_START_BLOCK`), with the escrow's contracts still read from their deployment on, and
/// not in one that reads everything from the deployment (the default). A database built from one
/// start refuses another, naming both and what to do, and writes nothing.
#[tokio::test]
async fn an_erc8004_start_block_before_the_deployment_finds_the_agents_registered_before_it() -> Result {
    use agentpact_indexer::{Contracts, IndexError, Indexer, Target};
    use agentpact_tests::{
        erc8004::Registries,
        index::{dump, small_ranges},
        postgres::TestDatabase,
    };
    use alloy::providers::Provider;

    let chain = TestChain::start().await?;
    let registries = Registries::of(&chain);
    let start = chain.provider.get_block_number().await? + 1;
    let early = registries.register(chain.accounts[1], "https://early.example/agent.json".into()).await?;
    // Blocks of nothing but other traffic between the registration and the deployment: more than
    // one small range, so ranges before the deployment are read on their own.
    for _ in 0..6 {
        chain.mine().await?;
    }
    let deployment = agentpact_contracts::deploy(chain.provider.clone(), chain.options.clone()).await?;
    assert!(deployment.block > start + 6, "the escrow is deployed after the registration");
    let late = registries.register(chain.accounts[2], "https://late.example/agent.json".into()).await?;
    let target = Target {
        chain_id: chain.anvil.chain_id(),
        contracts: Contracts { erc8004: Some(chain.erc8004), ..Contracts::from(&deployment) },
        deployment_block: deployment.block,
    };
    let index =
        |db: &TestDatabase| Indexer::new(db.pool().clone(), chain.provider.clone(), target, small_ranges());
    let head = chain.provider.get_block_number().await?;

    let from_deployment = TestDatabase::create().await?;
    index(&from_deployment).catch_up().await?;
    let late_only = vec![(late.to_string(), Some("https://late.example/agent.json".to_owned()))];
    assert_eq!(
        indexed_agents(from_deployment.pool()).await?,
        late_only,
        "the default reads from the deployment"
    );

    let from_start = TestDatabase::create().await?;
    index(&from_start).with_erc8004_start(start).catch_up().await?;
    let both =
        vec![(early.to_string(), Some("https://early.example/agent.json".to_owned())), late_only[0].clone()];
    assert_eq!(indexed_agents(from_start.pool()).await?, both, "read from the earlier start");
    assert_eq!(agentpact_tests::index::checkpoint_block(from_start.pool()).await?, head as i64);
    let first: i64 =
        sqlx::query_scalar("SELECT min(block_number) FROM events").fetch_one(from_start.pool()).await?;
    assert_eq!(first as u64, start, "the registration is the first event journaled");

    // The operator sets the start on an index already built from the deployment, and back.
    for (db, ours, stored) in
        [(&from_deployment, start, deployment.block), (&from_start, deployment.block, start)]
    {
        let before = dump(db.pool()).await?;
        let refused = index(db).with_erc8004_start(ours).catch_up().await;
        match refused {
            Err(e @ IndexError::Erc8004StartMoved { .. }) => {
                let message = e.to_string();
                assert!(e.is_fatal(), "{message}");
                assert!(
                    message.contains(&format!("from block {stored}"))
                        && message.contains(&format!("ERC8004_START_BLOCK={stored} again"))
                        && message.contains(&format!("fresh database from block {ours}")),
                    "{message}"
                );
            }
            other => panic!("a moved start was not refused: {other:?}"),
        }
        assert_eq!(dump(db.pool()).await?, before, "a refused start wrote to the database");
    }
    Ok(())
}
