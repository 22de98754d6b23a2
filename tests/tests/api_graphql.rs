//! The GraphQL API over a real index: every query and filter against pacts made on chain in every
//! status, compared with what the contracts' getters say.

use agentpact_contracts::{AgentPact, Ending, Initiator, PactStatus};
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::{ether, hash, send},
    pacts::{Market, accepter_deposit, creator_deposit},
    postgres::TestDatabase,
};
use alloy::{
    primitives::{Address, U256},
    providers::Provider,
};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// A pact as the contract's getter returns it.
struct Truth {
    id: U256,
    status: PactStatus,
    buyer: Address,
    seller: Address,
    arbitrator: Address,
    initiator: u8,
    payment: U256,
    deadline: u64,
    created_at: u64,
    spec_uri: String,
    oracles: Vec<Address>,
}

async fn truths(m: &Market) -> Result<Vec<Truth>> {
    let count: u64 = m.chain.pact.pactCount().call().await?.to();
    // A pact's creation time is its PactCreated block's timestamp.
    let mut created_at = std::collections::HashMap::new();
    for (event, log) in m.chain.pact.PactCreated_filter().from_block(0).query().await? {
        let block = log.block_number.ok_or_else(|| HarnessError::Process("a log without a block".into()))?;
        let header = m
            .chain
            .provider
            .get_block_by_number(block.into())
            .await?
            .ok_or_else(|| HarnessError::Process(format!("block {block} vanished")))?;
        created_at.insert(event.pactId, header.header.timestamp);
    }
    let mut out = Vec::new();
    for id in 0..count {
        let id = U256::from(id);
        let p = m.chain.pact.getPact(id).call().await?;
        out.push(Truth {
            id,
            status: PactStatus::try_from(p.status).map_err(|e| HarnessError::Process(e.to_string()))?,
            buyer: p.buyer,
            seller: p.seller,
            arbitrator: p.arbitrator,
            initiator: p.initiator,
            payment: p.payment,
            deadline: p.deadline,
            created_at: created_at.get(&id).copied().unwrap_or_default(),
            spec_uri: p.specUri,
            oracles: p.oracles,
        });
    }
    Ok(out)
}

/// Pacts in every status plus three with their own buyer, oracle, payment, deadline and spec.
async fn market() -> Result<(Market, TestDatabase, TestApi)> {
    let m = Market::open().await?;
    m.every_status().await?;
    let outsider = m.chain.accounts[7];
    let mut special = m.terms(Initiator::Buyer, ether(5)).await?;
    special.specUri = "https://specs.example/logo-design.json".into();
    special.deadline += 30 * 24 * 60 * 60;
    special.oracles = vec![m.cast.oracles[0]];
    special.weights = vec![100];
    create_as(&m, outsider, special).await?;
    let mut cheap = m.terms(Initiator::Seller, U256::from(1000u64)).await?;
    cheap.specUri = "ipfs://QmTranslation/french-german".into();
    m.create(cheap).await?;
    m.funded(Initiator::Seller, ether(3)).await?;

    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;
    Ok((m, db, api))
}

async fn create_as(m: &Market, who: Address, terms: AgentPact::Terms) -> Result {
    let deposit = creator_deposit(Initiator::Buyer, terms.payment);
    send(m.chain.pact.createPact(terms).from(who).value(deposit)).await?;
    Ok(())
}

/// The ids of the pacts passing `filter`, newest first, through GraphQL (one page of 100).
async fn ids(api: &TestApi, filter: Value) -> Result<Vec<U256>> {
    let data = api
        .data(
            "query($f: PactFilter) { pacts(filter: $f, first: 100) { totalCount totalCountExact edges { node { id } } } }",
            json!({ "f": filter }),
        )
        .await?;
    let ids: Vec<U256> = data["pacts"]["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["node"]["id"].as_str().and_then(|s| s.parse().ok()).unwrap_or(U256::MAX))
        .collect();
    // Flat counts (a status and one party) and counted ones (anything else) alike: exact.
    assert_eq!(data["pacts"]["totalCount"], json!(ids.len()), "totalCount of {filter}");
    assert_eq!(data["pacts"]["totalCountExact"], json!(true), "totalCountExact of {filter}");
    Ok(ids)
}

fn expected(truths: &[Truth], keep: impl Fn(&Truth) -> bool) -> Vec<U256> {
    truths.iter().rev().filter(|t| keep(t)).map(|t| t.id).collect()
}

fn iso(secs: u64) -> String {
    chrono::DateTime::from_timestamp(secs as i64, 0).map(|t| t.to_rfc3339()).unwrap_or_default()
}

#[tokio::test]
async fn every_filter_selects_what_the_chain_says() -> Result {
    let (m, _db, api) = market().await?;
    let all = truths(&m).await?;
    let c = &m.cast;
    let outsider = m.chain.accounts[7];
    let name = |s: PactStatus| s.name();
    let special_deadline = all.iter().map(|t| t.deadline).max().unwrap_or_default();
    // The last pacts were created after the scenario moved the clock on by days.
    let late = all.last().map(|t| t.created_at).unwrap_or_default();
    let lower = |a: Address| format!("{a:#x}");
    let cases: Vec<(Value, Vec<U256>)> = vec![
        (json!({}), expected(&all, |_| true)),
        (json!({ "status": [name(PactStatus::Funded)] }), expected(&all, |t| t.status == PactStatus::Funded)),
        (
            json!({ "status": [name(PactStatus::Completed), name(PactStatus::Refunded)] }),
            expected(&all, |t| matches!(t.status, PactStatus::Completed | PactStatus::Refunded)),
        ),
        (json!({ "buyer": lower(c.buyer) }), expected(&all, |t| t.buyer == c.buyer)),
        (json!({ "seller": c.seller.to_checksum(None) }), expected(&all, |t| t.seller == c.seller)),
        (json!({ "buyer": lower(outsider) }), expected(&all, |t| t.buyer == outsider)),
        (
            json!({ "party": lower(c.seller) }),
            expected(&all, |t| t.seller == c.seller || t.buyer == c.seller || t.arbitrator == c.seller),
        ),
        (json!({ "party": lower(outsider) }), expected(&all, |t| t.buyer == outsider)),
        (json!({ "oracle": lower(c.oracles[1]) }), expected(&all, |t| t.oracles.contains(&c.oracles[1]))),
        (
            json!({ "status": [name(PactStatus::Funded), name(PactStatus::Negotiating)], "party": lower(c.seller) }),
            expected(&all, |t| {
                matches!(t.status, PactStatus::Funded | PactStatus::Negotiating)
                    && (t.seller == c.seller || t.buyer == c.seller || t.arbitrator == c.seller)
            }),
        ),
        (
            json!({ "buyer": lower(outsider), "seller": lower(c.seller) }),
            expected(&all, |t| t.buyer == outsider && t.seller == c.seller),
        ),
        (json!({ "initiator": "SELLER" }), expected(&all, |t| t.initiator == Initiator::Seller.code())),
        (
            json!({ "minPayment": ether(2).to_string(), "maxPayment": ether(5).to_string() }),
            expected(&all, |t| t.payment >= ether(2) && t.payment <= ether(5)),
        ),
        (json!({ "maxPayment": "1000" }), expected(&all, |t| t.payment <= U256::from(1000u64))),
        (
            json!({ "deadlineFrom": iso(special_deadline) }),
            expected(&all, |t| t.deadline >= special_deadline),
        ),
        (
            json!({ "deadlineTo": iso(special_deadline - 1) }),
            expected(&all, |t| t.deadline < special_deadline),
        ),
        (json!({ "createdFrom": iso(late) }), expected(&all, |t| t.created_at >= late)),
        (json!({ "createdTo": iso(late - 1) }), expected(&all, |t| t.created_at < late)),
        (json!({ "search": "logo" }), expected(&all, |t| t.spec_uri.contains("logo"))),
        (json!({ "search": "Logo-Design" }), expected(&all, |t| t.spec_uri.contains("logo-design"))),
        (json!({ "search": "german french" }), expected(&all, |t| t.spec_uri.contains("french-german"))),
        (json!({ "search": "no-such-words" }), vec![]),
        (
            json!({ "status": ["NEGOTIATING"], "initiator": "SELLER", "maxPayment": "1000" }),
            expected(&all, |t| {
                t.status == PactStatus::Negotiating && t.initiator == 1 && t.payment <= U256::from(1000u64)
            }),
        ),
    ];
    for (filter, want) in cases {
        assert!(
            want.len() < all.len() || filter == json!({}),
            "filter {filter} narrows nothing: a weak case"
        );
        assert_eq!(ids(&api, filter.clone()).await?, want, "filter {filter}");
    }
    Ok(())
}

#[tokio::test]
async fn a_pact_reads_as_the_contract_holds_it_with_its_story() -> Result {
    let (m, _db, api) = market().await?;
    let all = truths(&m).await?;
    let completed = all.iter().find(|t| t.status == PactStatus::Completed).map(|t| t.id).unwrap_or_default();
    let q =
        "query($id: BigInt!) { pact(id: $id) { id status statusDescription initiator buyer seller arbitrator
               payment buyerStake sellerStake threshold finalScore outcome ending deadline createdAt closedAt
               oracles { address weight } verifications { oracle score }
               timeline { kind blockNumber txHash timestamp data } } }";
    let p = &api.data(q, json!({ "id": completed.to_string() })).await?["pact"];
    let chain = m.chain.pact.getPact(completed).call().await?;
    assert_eq!(p["status"], "COMPLETED");
    assert_eq!(p["statusDescription"], PactStatus::Completed.description());
    assert_eq!(p["buyer"], json!(chain.buyer.to_checksum(None)));
    assert_eq!(p["seller"], json!(chain.seller.to_checksum(None)));
    assert_eq!(p["payment"], json!(chain.payment.to_string()));
    assert_eq!(p["buyerStake"], json!(chain.buyerStake.to_string()));
    assert_eq!(p["finalScore"], json!(chain.finalScore));
    assert_eq!((&p["outcome"], &p["ending"]), (&json!("approved"), &json!("COMPLETED")));
    assert_eq!(p["deadline"], json!(iso(chain.deadline)));
    let oracles: Vec<(String, u64)> = p["oracles"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| (o["address"].as_str().unwrap_or_default().to_owned(), o["weight"].as_u64().unwrap_or(0)))
        .collect();
    let chain_oracles: Vec<(String, u64)> =
        chain.oracles.iter().zip(&chain.weights).map(|(a, w)| (a.to_checksum(None), u64::from(*w))).collect();
    assert_eq!(oracles, chain_oracles);
    assert_eq!(
        p["verifications"],
        json!([
            { "oracle": m.cast.oracles[0].to_checksum(None), "score": 90 },
            { "oracle": m.cast.oracles[1].to_checksum(None), "score": 80 },
        ])
    );
    let kinds: Vec<&str> =
        p["timeline"].as_array().into_iter().flatten().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "PactCreated",
            "PactAccepted",
            "WorkStarted",
            "WorkSubmitted",
            "VerificationSubmitted",
            "VerificationSubmitted",
            "VerificationFinalized",
            "WorkApproved",
            "Payout",
            "Payout",
            "PactEnded",
            "FeedbackGiven",
            "FeedbackGiven"
        ]
    );
    let approved =
        p["timeline"].as_array().and_then(|t| t.iter().find(|e| e["kind"] == "WorkApproved")).cloned();
    let approved = approved.unwrap_or_default();
    let tx: alloy::primitives::B256 =
        approved["txHash"].as_str().and_then(|s| s.parse().ok()).unwrap_or_default();
    let receipt = m.chain.provider.get_transaction_receipt(tx).await?;
    assert_eq!(
        receipt.and_then(|r| r.block_number),
        approved["blockNumber"].as_u64(),
        "the event's tx is real"
    );
    assert_eq!(approved["data"]["pactId"], json!(completed.to_string()));

    let missing = api.data(q, json!({ "id": "999999" })).await?;
    assert_eq!(missing["pact"], Value::Null);
    Ok(())
}

/// `Pact.milestones` of every pact, stage by stage, as `getStages` holds them; what each ended
/// stage credited each side; and the pact of several stages' scores by stage.
#[tokio::test]
async fn milestones_read_as_the_contract_holds_each_stage() -> Result {
    let (m, _db, api) = market().await?;
    let q = "query($id: BigInt!) { pact(id: $id) { milestones { index amount amountFormatted stake deadline
                 status proofHash submittedAt verifiedAt disputedAt scoreCount finalScore sellerShare ending
                 endedAt toSeller toBuyer } verifications { stage oracle score } } }";
    let code = |e: std::result::Result<&'static str, agentpact_contracts::UnknownCode>| {
        e.map_err(|e| HarnessError::Process(e.to_string()))
    };
    let at = |secs: u64| if secs == 0 { Value::Null } else { json!(iso(secs)) };
    let mut staged = Vec::new();
    for n in 0..m.chain.pact.pactCount().call().await?.to::<u64>() {
        let id = U256::from(n);
        let p = api.data(q, json!({ "id": id.to_string() })).await?["pact"].clone();
        let stages = m.chain.pact.getStages(id).call().await?;
        let got = p["milestones"].as_array().cloned().unwrap_or_default();
        assert_eq!(got.len(), stages.len(), "pact {n}: a milestone per stage");
        for (k, (g, s)) in got.iter().zip(&stages).enumerate() {
            let context = format!("pact {n} stage {k}");
            assert_eq!((&g["index"], &g["amount"]), (&json!(k), &json!(s.amount.to_string())), "{context}");
            assert_eq!(g["deadline"], json!(iso(s.deadline)), "{context} deadline");
            assert_eq!(
                g["status"],
                json!(code(PactStatus::try_from(s.status).map(PactStatus::name))?),
                "{context}"
            );
            assert_eq!(g["ending"], json!(code(Ending::try_from(s.ending).map(Ending::name))?), "{context}");
            assert_eq!(
                [&g["submittedAt"], &g["verifiedAt"], &g["disputedAt"]],
                [&at(s.submittedAt), &at(s.verifiedAt), &at(s.disputedAt)],
                "{context} clocks"
            );
            assert_eq!(g["scoreCount"], json!(s.scoreCount), "{context}");
            assert_eq!(g["finalScore"].as_u64().unwrap_or(0), u64::from(s.finalScore), "{context}");
            let proof = if s.proofHash.is_zero() { Value::Null } else { json!(s.proofHash.to_string()) };
            assert_eq!(g["proofHash"], proof, "{context} proof");
            // Money while it lives: none credited yet.
            if g["ending"] == "LIVE" {
                assert_eq!([&g["toSeller"], &g["toBuyer"], &g["endedAt"]], [&Value::Null; 3], "{context}");
            }
        }
        if stages.len() > 1 {
            staged.push((id, got, p["verifications"].clone()));
        } else if stages[0].status == PactStatus::Completed.code() {
            let chain = m.chain.pact.getPact(id).call().await?;
            assert_eq!(
                (&got[0]["toSeller"], &got[0]["toBuyer"]),
                (
                    &json!((chain.payment + chain.sellerStake).to_string()),
                    &json!(chain.buyerStake.to_string())
                ),
                "pact {n}: a completed stage pays the seller the payment and its stake back"
            );
        }
    }
    // every_status's pact of six stages of 1 ETH + 3 wei: each stake a tenth of it.
    let [(id, got, scores)] = staged.as_slice() else {
        return Err(HarnessError::Process(format!(
            "one pact of several stages expected, found {}",
            staged.len()
        )));
    };
    let amount = ether(1) + U256::from(3u8);
    let stake = amount / U256::from(10u8);
    assert_eq!(got[0]["stake"], json!(stake.to_string()));
    assert_eq!(got[0]["amountFormatted"], json!("1.000000000000000003"));
    assert_eq!(
        (&got[0]["ending"], &got[0]["toSeller"], &got[0]["toBuyer"]),
        (&json!("COMPLETED"), &json!((amount + stake).to_string()), &json!(stake.to_string())),
        "pact {id}: stage 0 approved"
    );
    let pot = amount + stake + stake;
    let to_seller = pot * U256::from(7_000u16) / U256::from(10_000u16);
    assert_eq!(
        (&got[1]["ending"], &got[1]["sellerShare"], &got[1]["toSeller"], &got[1]["toBuyer"]),
        (
            &json!("RULED"),
            &json!(7_000),
            &json!(to_seller.to_string()),
            &json!((pot - to_seller).to_string())
        ),
        "pact {id}: stage 1 ruled 70/30 of its pot"
    );
    assert_eq!(
        (&got[4]["ending"], &got[4]["toSeller"], &got[4]["toBuyer"]),
        (&json!("REFUNDED_AFTER_FAILURE"), &json!("0"), &json!(pot.to_string())),
        "pact {id}: stage 4 timed out"
    );
    assert_eq!(got[5]["status"], json!("IN_PROGRESS"), "pact {id}: stage 5 still in progress");
    // Stages 0, 1 and 2 were each scored by both oracles: six scores, each with its stage.
    let mut by_stage: Vec<u64> =
        scores.as_array().into_iter().flatten().filter_map(|v| v["stage"].as_u64()).collect();
    by_stage.sort_unstable();
    assert_eq!(by_stage, [0, 0, 1, 1, 2, 2], "pact {id}: scores by stage");
    Ok(())
}

#[tokio::test]
async fn oracles_verifications_stats_and_indexer_status() -> Result {
    let (m, _db, api) = market().await?;
    let all = truths(&m).await?;
    let c = &m.cast;
    let d = api
        .data(
            "query($o: Address!, $gone: Address!, $min: BigInt!) {
               audit: oracles(filter: { capability: \"audit\" }) { address capabilities }
               rich: oracles(filter: { minStake: $min }) { address stake }
               leaving: oracles(filter: { status: DEREGISTERED }) { address unlockAt }
               one: oracle(address: $o) { status stake }
               gone: oracle(address: $gone) { status }
               byOracle: verifications(oracle: $o, first: 2) { pactId score }
               stats { pacts byStatus { status count } activeOracles completedVolume }
               indexerStatus { indexedBlock headBlock lagBlocks lagSeconds headSeenAt } }",
            json!({
                "o": c.oracles[0].to_checksum(None),
                "gone": m.chain.accounts[9].to_checksum(None),
                "min": (m.chain.options.min_oracle_stake + U256::from(1)).to_string(),
            }),
        )
        .await?;
    assert_eq!(d["audit"], json!([{ "address": c.oracles[1].to_checksum(None), "capabilities": ["audit"] }]));
    assert_eq!(d["rich"].as_array().map(Vec::len), Some(1), "only oracle 0 staked more: {}", d["rich"]);
    assert_eq!(d["rich"][0]["address"], json!(c.oracles[0].to_checksum(None)));
    assert_eq!(d["leaving"][0]["address"], json!(m.chain.accounts[8].to_checksum(None)));
    assert!(d["leaving"][0]["unlockAt"].is_string());
    assert_eq!(d["one"]["status"], "ACTIVE");
    assert_eq!(d["gone"], Value::Null, "a withdrawn oracle is gone");
    assert_eq!(d["byOracle"].as_array().map(Vec::len), Some(2));

    let stats = &d["stats"];
    assert_eq!(stats["pacts"], json!(all.len()));
    for s in PactStatus::ALL {
        let want = all.iter().filter(|t| t.status == s).count();
        let row = stats["byStatus"].as_array().and_then(|l| l.iter().find(|r| r["status"] == s.name()));
        assert_eq!(row.map(|r| r["count"].clone()), Some(json!(want)), "{s}");
        assert!(want > 0, "the market misses {s}");
    }
    assert_eq!(stats["activeOracles"], json!(2), "the cast's two; one left, one withdrew");
    let volume: U256 = all.iter().filter(|t| t.status == PactStatus::Completed).map(|t| t.payment).sum();
    assert_eq!(stats["completedVolume"], json!(volume.to_string()));

    let head = m.chain.provider.get_block_number().await?;
    let status = &d["indexerStatus"];
    assert_eq!((status["indexedBlock"].as_u64(), status["headBlock"].as_u64()), (Some(head), Some(head)));
    assert_eq!((status["lagBlocks"].as_u64(), status["lagSeconds"].as_u64()), (Some(0), Some(0)));
    Ok(())
}

/// [`Market::reputation_history`] (between the cast's buyer and seller: a 2 ETH pact approved
/// after scores 90 and 80, final 86; a 1 ETH pact that failed verification with 10 and 20, final
/// 14, and went to the buyer by ruling; a 1 ETH pact the seller abandoned, refunded by a timeout
/// past its 7-day deadline), then a 1 ETH pact scored by oracle 0 alone, 75 (final 75), and
/// approved, between two others: dev account 8 buying from dev account 7. Every pact is above the
/// 0.0004 ETH floor: one whole job each, however quickly it ended.
async fn hand_computed_history(m: &Market) -> Result {
    let pact = &m.chain.pact;
    m.reputation_history().await?;
    let (buyer, seller) = (m.chain.accounts[8], m.chain.accounts[7]);
    let mut terms = m.terms(Initiator::Buyer, ether(1)).await?;
    terms.oracles = vec![m.cast.oracles[0]];
    terms.weights = vec![100];
    let sole = pact.pactCount().call().await?;
    create_as(m, buyer, terms).await?;
    send(pact.acceptPact(sole).from(seller).value(accepter_deposit(Initiator::Buyer, ether(1)))).await?;
    send(pact.startWork(sole).from(seller)).await?;
    send(pact.submitWork(sole, hash(2)).from(seller)).await?;
    send(pact.submitVerification(sole, 75, hash(3)).from(m.cast.oracles[0])).await?;
    send(pact.finalizeVerification(sole).from(m.cast.stranger)).await?;
    send(pact.approveWork(sole).from(buyer)).await?;
    Ok(())
}

#[tokio::test]
async fn reputation_scores_a_hand_computed_history() -> Result {
    let m = Market::open().await?;
    hand_computed_history(&m).await?;
    let db = TestDatabase::create().await?;
    // Ranked from one seed, the cast's buyer: the market's anchor.
    agentpact_tests::index::ranking(&m.chain, db.pool(), vec![m.cast.buyer]).catch_up().await?;
    let api = TestApi::start(db.pool(), api::config(m.chain.anvil.chain_id())).await?;

    let q = "query($a: Address!) { reputation(address: $a) { score { value rated weight }
        asSeller { pacts completed refunded disputed timedOut volume meanScore disputeRate timeoutRate score { value rated } }
        asBuyer { score { value rated } }
        asOracle { pacts meanScore agreement score { value rated } } } }";
    let rep = |who: Address| {
        let api = &api;
        async move { api.data(q, json!({ "a": who.to_checksum(None) })).await.map(|d| d["reputation"].clone()) }
    };
    // Each ordered pair (rater → ratee) of the cast's history, roles pooled:
    //   buyer → seller: 3 jobs (n = 3, e = min(1, log2(1 + 3) / 2) = 1) at credits 0.86 (approved
    //     at 86), 0 (dispute lost), 0 (timed out), no rating (f = 0): W = 1, C = 0.86 / 3 = 0.2867.
    //   seller → buyer: approved (1), dispute won (1), timeout claimed against a silent seller (1):
    //     W = 1, C = 1.
    //   seller → oracle 0: 1 - |score - final| / 100 on the 2 pacts two oracles scored, missed by 4
    //     twice (its sole pact is not rated: it agrees with itself): e = log2(1 + 2) / 2 = 0.7925,
    //     C = 0.7925 × 0.96 = 0.7608. Seller → oracle 1: missed by 6 twice, C = 0.7925 × 0.94 = 0.7449.
    //   (dev accounts 8 and 7 endorse each other; no walk from the seed reaches them.)
    // Trust from the seed B (α = 0.3): S's out-mass goes to B, O0, O1 in the ratio 1 : 0.7608 :
    // 0.7449 (P(S, B) = 1 / 2.5057 = 0.3991); B's all to S. π(B) = 0.3 + 0.7 × 0.7 × 0.3991 × π(B)
    // = 0.3729, π(S) = 0.7 × π(B) = 0.2610, π(O0) = 0.7 × 0.2610 × 0.3036 = 0.0555, π(O1) = 0.0543;
    // B and S first hold 80 % of Σπ = 0.7438, so τ = π(S) = 0.2610.
    // The seller's rater B counts the walks from the seed that never touch S: those ending at B,
    // π¬S(B) = α = 0.3 ≥ τ, t = 1. 5 × (0.2867 + 3) / (1 + 5) = 2.74, trusted weight 1.
    // (Before #53 also 2.74, as one counterparty's three pacts weighed min(1, 3) = 1.)
    let seller = rep(m.cast.seller).await?;
    assert_eq!(seller["score"], json!({ "value": 2.74, "rated": 3, "weight": 1.0 }));
    let s = &seller["asSeller"];
    assert_eq!(
        (&s["pacts"], &s["completed"], &s["refunded"], &s["disputed"], &s["timedOut"]),
        (&json!(3), &json!(1), &json!(2), &json!(1), &json!(1))
    );
    assert_eq!(s["volume"], json!(ether(2).to_string()));
    assert_eq!(s["meanScore"], json!(50.0));
    assert_eq!(s["disputeRate"].as_f64().map(|r| (r * 1000.0).round()), Some(333.0));
    assert_eq!(s["score"], json!({ "value": 2.74, "rated": 3 }));
    // The buyer: its one rater, the seller, is reached from the seed only through the buyer itself
    // (π¬B(S) = 0): the seed does not vouch for itself, and it scores the prior 3.00 globally
    // (before #53: 5 × (1 + 3) / (1 + 5) = 3.33).
    let buyer = rep(m.cast.buyer).await?;
    assert_eq!(buyer["asBuyer"]["score"], json!({ "value": 3.0, "rated": 3 }));
    assert_eq!(buyer["score"], json!({ "value": 3.0, "rated": 3, "weight": 0.0 }));
    // Oracles: their rater S counts the walks that never touch the oracle, π¬O(S) = π(S) (an
    // oracle has no out-edge, no walk passes through it), = τ: t = 1.
    // Oracle 0: 5 × (0.7608 + 3) / (0.7925 + 5) = 3.25 (before #53, weighing 1: 3.30). Its
    // agreement still counts the sole pact, a miss of 0: 100 - (4 + 4 + 0) / 3 = 97.33.
    let o0 = rep(m.cast.oracles[0]).await?;
    assert_eq!(o0["asOracle"]["pacts"], json!(3));
    assert_eq!(o0["asOracle"]["agreement"], json!(97.33));
    assert_eq!(o0["asOracle"]["score"], json!({ "value": 3.25, "rated": 2 }));
    // Oracle 1: 5 × (0.7449 + 3) / (0.7925 + 5) = 3.23.
    let o1 = rep(m.cast.oracles[1]).await?;
    assert_eq!(o1["asOracle"]["score"], json!({ "value": 3.23, "rated": 2 }));
    // No history: the prior, 3.0.
    let nobody = rep(m.cast.stranger).await?;
    assert_eq!(nobody["score"], json!({ "value": 3.0, "rated": 0, "weight": 0.0 }));
    assert_eq!(nobody["asSeller"]["pacts"], json!(0));
    Ok(())
}

#[tokio::test]
async fn a_corrupt_value_in_the_index_fails_the_read_naming_table_key_and_column() -> Result {
    let (m, db, api) = market().await?;
    let chain = m.chain.anvil.chain_id();
    // Written by hand: a status no contract has, and an arbitrator of one byte. The closed sets'
    // CHECK constraints (migrations/0015) refuse such writes; an index damaged past them (restored
    // from an older dump, edited with the constraints dropped) must still be read loudly.
    sqlx::query("ALTER TABLE pacts DROP CONSTRAINT pacts_status_known").execute(db.pool()).await?;
    sqlx::query("UPDATE pacts SET status = 42 WHERE pact_id = 0").execute(db.pool()).await?;
    sqlx::query("UPDATE pacts SET arbitrator = '\\x01' WHERE pact_id = 1").execute(db.pool()).await?;
    let answer = api.post("{ pact(id: 0) { id status } }", json!({})).await?;
    let error = &answer["errors"][0];
    assert_eq!(error["extensions"]["code"], "INDEX_CORRUPT", "{answer}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("pacts")
            && message.contains(&format!("chain {chain} pact 0"))
            && message.contains("status"),
        "{message}"
    );
    assert!(answer["data"]["pact"].is_null(), "never a default status: {answer}");
    let page = api.post("{ pacts(first: 100) { edges { node { id arbitrator } } } }", json!({})).await?;
    let message = page["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("pact 1") && message.contains("arbitrator") && message.contains("0x01"),
        "{page}"
    );
    assert!(!page.to_string().contains(&Address::ZERO.to_string()), "never a zero address: {page}");
    // The same in other tables: a verification's oracle, a reputation row's count. (The read asks
    // for each role of the closed set by name, so a row under an unknown role is not read at all.)
    sqlx::query("UPDATE verifications SET oracle = '\\x02' WHERE ctid = (SELECT ctid FROM verifications WHERE pact_id = 3 LIMIT 1)")
        .execute(db.pool())
        .await?;
    let scores = api.post("{ verifications(pactId: \"3\") { oracle score } }", json!({})).await?;
    let message = scores["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("verifications") && message.contains("pact 3") && message.contains("oracle"),
        "{scores}"
    );
    sqlx::query("UPDATE reputation SET pacts = -1 WHERE address = $1 AND role = 'seller'")
        .bind(m.cast.seller.to_vec())
        .execute(db.pool())
        .await?;
    let q = "query($a: Address!) { reputation(address: $a) { score { value } } }";
    let rep = api.post(q, json!({ "a": m.cast.seller.to_checksum(None) })).await?;
    let message = rep["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("reputation") && message.contains("pacts") && message.contains("-1"), "{rep}");
    Ok(())
}
