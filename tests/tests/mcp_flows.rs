//! The MCP tools end to end, as agents use them: seed 002's three example flows with the exact
//! amounts, disputes won by each side, a timeout — through rmcp's own client, against a real
//! anvil, indexer and Postgres.

use agentpact_mcp::Role;
use agentpact_tests::{
    HarnessError,
    chain::{ether, send},
    mcp::{Reply, TestAgent, test_limits},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::{
    primitives::{Address, B256, U256},
    providers::Provider,
};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// A market with its index followed in the background, and one agent per part.
struct Stage {
    m: Market,
    _db: TestDatabase,
    buyer: TestAgent,
    seller: TestAgent,
    oracles: [TestAgent; 2],
    arbitrator: TestAgent,
    stranger: TestAgent,
    _indexer: tokio::task::JoinHandle<()>,
}

impl Stage {
    async fn open() -> Result<Self> {
        let m = Market::open().await?;
        let (db, indexer) = agentpact_tests::index::followed(&m.chain).await?;
        let agent = |n, role| TestAgent::start(&m.chain, &db, n, role, test_limits());
        let (buyer, seller) = (agent(1, Role::Seeker).await?, agent(2, Role::Worker).await?);
        let oracles = [agent(4, Role::Oracle).await?, agent(5, Role::Oracle).await?];
        let (arbitrator, stranger) = (agent(3, Role::Arbitrator).await?, agent(6, Role::Full).await?);
        Ok(Self { m, _db: db, buyer, seller, oracles, arbitrator, stranger, _indexer: indexer })
    }

    /// The create-pact input of the seed's examples: oracles 60/40, threshold 70, arbitrator 3.
    async fn terms(&self, role: &str, payment: &str) -> Result<Value> {
        Ok(json!({
            "role": role,
            "specHash": "QmHeroSectionSpec",
            "deadline": self.m.chain.now().await? + 7 * 24 * 3600,
            "oracles": [self.m.cast.oracles[0].to_string(), self.m.cast.oracles[1].to_string()],
            "oracleWeights": [60, 40],
            "threshold": 70,
            "paymentEth": payment,
            "arbitrator": self.m.cast.arbitrator.to_string(),
        }))
    }

    /// The seller starts and submits; both oracles score; a stranger finalizes. `id` is passed
    /// as create-pact answered it: a decimal string.
    async fn deliver_and_verify(&self, id: &str, scores: [u8; 2]) -> Result<Reply> {
        let pact = json!({ "pactId": id });
        self.seller.ok("start-work", pact.clone()).await?;
        let submitted = self
            .seller
            .ok("submit-work", json!({ "pactId": pact["pactId"], "proofHash": hex(0x51) }))
            .await?;
        assert_eq!(submitted.text, "Work submitted. Awaiting oracle verification.");
        for (oracle, score) in self.oracles.iter().zip(scores) {
            oracle
                .ok(
                    "submit-verification",
                    json!({ "pactId": pact["pactId"], "score": score, "proof": hex(0x77) }),
                )
                .await?;
        }
        self.stranger.ok("finalize-verification", pact).await
    }

    async fn credit(&self, who: Address) -> Result<U256> {
        Ok(self.m.chain.pact.balances(Address::ZERO, who).call().await?)
    }

    /// `agent` withdraws through the tool; its balance rises by exactly its credit less gas.
    async fn withdraw_exactly(&self, agent: &TestAgent, expected: U256) -> Result {
        assert_eq!(self.credit(agent.address).await?, expected);
        let before = self.m.chain.balance(agent.address).await?;
        let reply = agent.ok("withdraw", json!({})).await?;
        let tx: B256 =
            reply.data["withdrawn"][0]["txHash"].as_str().and_then(|s| s.parse().ok()).unwrap_or_default();
        let receipt = self
            .m
            .chain
            .provider
            .get_transaction_receipt(tx)
            .await?
            .ok_or_else(|| HarnessError::Process("no receipt".into()))?;
        let gas = U256::from(receipt.gas_used) * U256::from(receipt.effective_gas_price);
        assert_eq!(self.m.chain.balance(agent.address).await?, before + expected - gas);
        assert_eq!(self.credit(agent.address).await?, U256::ZERO);
        Ok(())
    }
}

fn hex(byte: u8) -> String {
    format!("0x{}", format!("{byte:02x}").repeat(32))
}

fn id_of(reply: &Reply) -> String {
    reply.data["pactId"].as_str().unwrap_or_default().to_owned()
}

/// Every string of 0x and 40 hex digits in `value`, at any depth: the addresses an answer carries.
fn addresses_in(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::String(s)
            if s.len() == 42 && s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            found.push(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| addresses_in(v, found)),
        Value::Object(fields) => fields.values().for_each(|v| addresses_in(v, found)),
        _ => {}
    }
}

fn finney(n: u64) -> U256 {
    U256::from(n) * U256::from(1_000_000_000_000_000u64)
}

#[tokio::test]
async fn flow_1_a_buyers_request_is_accepted_delivered_verified_and_approved() -> Result {
    let s = Stage::open().await?;
    let created = s.buyer.ok("create-pact", s.terms("buyer", "0.5").await?).await?;
    assert_eq!(
        created.text,
        "Pact #0 created as BUYER. Deposited: 0.55 ETH (0.5 payment + 0.05 stake). Open for sellers."
    );
    let accepted = s.seller.ok("accept-pact", json!({ "pactId": 0 })).await?;
    assert_eq!(accepted.text, "Accepted pact #0 as SELLER. Staked 0.05 ETH.");
    let finalized = s.deliver_and_verify(&id_of(&created), [85, 90]).await?;
    assert_eq!(finalized.data["status"], "PENDING_APPROVAL", "{}", finalized.text);
    assert_eq!(finalized.data["score"], 87); // 85 × 60% + 90 × 40%
    let approved = s.buyer.ok("approve-work", json!({ "pactId": 0 })).await?;
    assert!(
        approved
            .text
            .starts_with("Pact #0 approved. 0.55 ETH released to seller, 0.05 ETH stake returned to you"),
        "{}",
        approved.text
    );
    let pact = s.buyer.ok("get-pact", json!({ "pactId": 0 })).await?;
    assert_eq!(
        (pact.data["status"].as_str(), pact.data["outcome"].as_str()),
        (Some("COMPLETED"), Some("approved"))
    );
    s.withdraw_exactly(&s.seller, finney(550)).await?;
    s.withdraw_exactly(&s.buyer, finney(50)).await?;
    Ok(())
}

#[tokio::test]
async fn flow_2_a_sellers_offer_is_bought_delivered_and_approved() -> Result {
    let s = Stage::open().await?;
    let listed = s.seller.ok("create-pact", s.terms("seller", "0.1").await?).await?;
    assert_eq!(listed.text, "Pact #0 created as SELLER. Staked 0.01 ETH. Listing open for buyers.");
    let bought = s.buyer.ok("accept-pact", json!({ "pactId": 0 })).await?;
    assert_eq!(bought.text, "Accepted pact #0 as BUYER. Deposited 0.11 ETH (0.1 payment + 0.01 stake).");
    s.deliver_and_verify("0", [80, 80]).await?;
    let approved = s.buyer.ok("approve-work", json!({ "pactId": 0 })).await?;
    assert!(
        approved
            .text
            .starts_with("Pact #0 approved. 0.11 ETH released to seller, 0.01 ETH stake returned to you")
    );
    s.withdraw_exactly(&s.seller, finney(110)).await?;
    s.withdraw_exactly(&s.buyer, finney(10)).await?;
    Ok(())
}

#[tokio::test]
async fn flow_3_a_silent_buyer_is_auto_approved_after_the_review_period() -> Result {
    let s = Stage::open().await?;
    s.buyer.ok("create-pact", s.terms("buyer", "0.5").await?).await?;
    s.seller.ok("accept-pact", json!({ "pactId": 0 })).await?;
    s.deliver_and_verify("0", [90, 90]).await?;
    let early = s.stranger.refused("auto-approve", json!({ "pactId": 0 })).await?;
    assert_eq!(early.0, "CONTRACT_REVERT");
    assert!(early.1.contains("ReviewPeriodActive"), "{}", early.1);
    s.m.chain.increase_time(3 * 24 * 3600 + 1).await?; // the default review period
    let auto = s.stranger.ok("auto-approve", json!({ "pactId": 0 })).await?;
    assert!(
        auto.text.starts_with("Review period expired. Pact #0 auto-approved. Payment released to seller"),
        "{}",
        auto.text
    );
    assert_eq!(s.credit(s.m.cast.seller).await?, finney(550));
    assert_eq!(s.credit(s.m.cast.buyer).await?, finney(50));
    Ok(())
}

#[tokio::test]
async fn disputes_are_won_by_either_side_and_a_timeout_refunds_the_buyer() -> Result {
    let s = Stage::open().await?;
    let arbitrator = s.m.cast.arbitrator.to_string();
    for (pact, seller_wins) in [(0u64, true), (1, false)] {
        s.buyer.ok("create-pact", s.terms("buyer", "1").await?).await?;
        s.seller.ok("accept-pact", json!({ "pactId": pact })).await?;
        let raised =
            s.seller.ok("raise-dispute", json!({ "pactId": pact, "arbitrator": arbitrator })).await?;
        assert!(raised.text.starts_with(&format!("Pact #{pact} is DISPUTED.")), "{}", raised.text);
        let ruled =
            s.arbitrator.ok("resolve-dispute", json!({ "pactId": pact, "sellerWins": seller_wins })).await?;
        let winner = if seller_wins { "seller" } else { "buyer" };
        assert!(
            ruled.text.starts_with(&format!("Dispute on pact #{pact} resolved for the {winner}")),
            "{}",
            ruled.text
        );
        assert_eq!(ruled.data["credited"], "1.2"); // payment + both stakes to the winner
    }
    assert_eq!(s.credit(s.m.cast.seller).await?, ether(1) + finney(200));
    assert_eq!(s.credit(s.m.cast.buyer).await?, ether(1) + finney(200));

    s.buyer.ok("create-pact", s.terms("buyer", "1").await?).await?;
    s.seller.ok("accept-pact", json!({ "pactId": 2 })).await?;
    let early = s.buyer.refused("claim-timeout", json!({ "pactId": 2 })).await?;
    assert!(early.1.contains("DeadlineNotReached"), "{}", early.1);
    s.m.chain.increase_time(7 * 24 * 3600 + 1).await?;
    let claimed = s.buyer.ok("claim-timeout", json!({ "pactId": 2 })).await?;
    assert_eq!(
        claimed.text,
        "Timeout claimed: pact #2 left FUNDED and is REFUNDED. Credited to you: 1.2 ETH (use withdraw to collect)."
    );
    Ok(())
}

/// Escrow v3 as agents use it, in ETH and in USDC: a dispute ended by a 70/30 ruling (the pot
/// divided, stakes following the share) and a pact ended by a settlement its buyer accepted (the
/// payment divided, each stake back), every credit checked to the base unit on chain.
#[tokio::test]
async fn a_70_30_ruling_and_an_accepted_settlement_credit_to_the_base_unit_in_eth_and_usdc() -> Result {
    let s = Stage::open().await?;
    let arbitrator = s.m.cast.arbitrator.to_string();
    let usdc = *s.m.chain.usdc.address();
    // Amounts that do not divide evenly, so that rounding shows: 1.000000000000000007 ETH and
    // 5.000007 USDC.
    let cases = [
        (Address::ZERO, "1.000000000000000007", U256::from(1_000_000_000_000_000_007u64)),
        (usdc, "5.000007", U256::from(5_000_007u64)),
    ];
    let mut id = 0u64;
    for (currency, amount, payment) in cases {
        let mut terms = s.terms("buyer", "unused").await?;
        terms.as_object_mut().map(|t| t.remove("paymentEth"));
        terms["currency"] = json!(if currency.is_zero() { "ETH" } else { "USDC" });
        terms["payment"] = json!(amount);
        let stake = payment / U256::from(10u8);
        let pot = payment + stake + stake;
        let chain = &s.m.chain;
        let credit =
            |who| async move { Ok::<_, HarnessError>(chain.pact.balances(currency, who).call().await?) };

        // A 70/30 ruling.
        let (seller0, buyer0) = (credit(s.m.cast.seller).await?, credit(s.m.cast.buyer).await?);
        s.buyer.ok("create-pact", terms.clone()).await?;
        s.seller.ok("accept-pact", json!({ "pactId": id })).await?;
        s.buyer.ok("raise-dispute", json!({ "pactId": id, "arbitrator": arbitrator })).await?;
        let (_, both) = s
            .arbitrator
            .refused("resolve-dispute", json!({ "pactId": id, "sellerWins": true, "sellerShare": 7000 }))
            .await?;
        assert!(both.contains("not both"), "{both}");
        let ruled = s.arbitrator.ok("resolve-dispute", json!({ "pactId": id, "sellerShare": 7000 })).await?;
        let to_seller = pot * U256::from(7u8) / U256::from(10u8);
        assert_eq!(credit(s.m.cast.seller).await? - seller0, to_seller, "{amount}: 70% of the pot");
        assert_eq!(credit(s.m.cast.buyer).await? - buyer0, pot - to_seller, "{amount}: 30% of the pot");
        assert_eq!(
            (ruled.data["status"].as_str(), ruled.data["winner"].as_str()),
            (Some("SPLIT"), Some("neither"))
        );
        assert_eq!(ruled.data["sellerShare"], 7000);
        assert!(
            ruled.text.starts_with(&format!(
                "Dispute on pact #{id} split at 70% of the pot to the seller: the pact is SPLIT."
            )),
            "{}",
            ruled.text
        );
        let pact = s.seller.ok("get-pact", json!({ "pactId": id })).await?;
        assert_eq!(
            (pact.data["status"].as_str(), pact.data["outcome"].as_str()),
            (Some("SPLIT"), Some("split"))
        );
        id += 1;

        // A settlement the seller offers and the buyer accepts, no arbitrator.
        let (seller0, buyer0) = (credit(s.m.cast.seller).await?, credit(s.m.cast.buyer).await?);
        s.buyer.ok("create-pact", terms.clone()).await?;
        s.seller.ok("accept-pact", json!({ "pactId": id })).await?;
        let offered = s.seller.ok("propose-settlement", json!({ "pactId": id, "sellerShare": 7000 })).await?;
        assert_eq!(
            (offered.data["round"].as_u64(), offered.data["status"].as_str()),
            (Some(1), Some("FUNDED"))
        );
        let seen = s.buyer.ok("get-pact", json!({ "pactId": id })).await?;
        assert_eq!(seen.data["settlement"]["state"], "OPEN", "{}", seen.data);
        assert_eq!(seen.data["settlement"]["sellerShare"], 7000);
        let (_, own) =
            s.seller.refused("accept-settlement", json!({ "pactId": id, "sellerShare": 7000 })).await?;
        assert!(own.contains("this wallet's own"), "{own}");
        let (_, other) =
            s.buyer.refused("accept-settlement", json!({ "pactId": id, "sellerShare": 6000 })).await?;
        assert!(other.contains("round 1 with 70% to the seller"), "{other}");
        let settled = s.buyer.ok("accept-settlement", json!({ "pactId": id, "sellerShare": 7000 })).await?;
        let to_seller = payment * U256::from(7u8) / U256::from(10u8) + stake;
        assert_eq!(
            credit(s.m.cast.seller).await? - seller0,
            to_seller,
            "{amount}: 70% of the payment + its stake"
        );
        assert_eq!(
            credit(s.m.cast.buyer).await? - buyer0,
            pot - to_seller,
            "{amount}: 30% of the payment + its stake"
        );
        assert_eq!(settled.data["status"], "SPLIT");
        assert!(
            settled.text.starts_with(&format!(
                "Pact #{id} settled at 70% of the payment to the seller: it is SPLIT."
            )),
            "{}",
            settled.text
        );
        let pact = s.buyer.ok("get-pact", json!({ "pactId": id })).await?;
        assert_eq!(pact.data["settlement"]["state"], "ACCEPTED", "{}", pact.data);
        assert_eq!(
            (pact.data["outcome"].as_str(), pact.data["sellerShare"].as_u64()),
            (Some("settled"), Some(7000))
        );
        id += 1;
    }
    Ok(())
}

/// Escrow v4's pacts in stages as agents use them (#55), in ETH and in USDC: a pact of three stages
/// made with create-staged-pact and accepted, stage 0 delivered, scored, finalized and approved,
/// stage 1 disputed and ruled 70/30 of its pot, stage 2 settled at 40 % by the settlement tools
/// (which divide what is still held), every credit checked to the base unit on chain and the
/// stages read back with get-stages.
#[tokio::test]
async fn a_pact_of_three_stages_is_approved_ruled_and_settled_through_the_tools_in_eth_and_usdc() -> Result {
    let s = Stage::open().await?;
    let arbitrator = s.m.cast.arbitrator.to_string();
    let usdc = *s.m.chain.usdc.address();
    let day = 24 * 60 * 60;
    let cases = [
        (Address::ZERO, "ETH", ["1", "2.000000000000000007", "3.000000000000000003"], 18),
        (usdc, "USDC", ["1", "2.500007", "3.000003"], 6),
    ];
    for (currency, symbol, parts, decimals) in cases {
        let units = |text: &str| -> U256 {
            let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
            let digits = format!("{whole}{frac:0<width$}", width = decimals);
            digits.parse().unwrap_or(U256::MAX)
        };
        let amounts: Vec<U256> = parts.iter().map(|p| units(p)).collect();
        let stake = |a: U256| a / U256::from(10u8);
        let chain = &s.m.chain;
        let credit =
            |who| async move { Ok::<_, HarnessError>(chain.pact.balances(currency, who).call().await?) };
        let (seller0, buyer0) = (credit(s.m.cast.seller).await?, credit(s.m.cast.buyer).await?);

        let now = chain.now().await?;
        let mut terms = s.terms("buyer", "unused").await?;
        terms.as_object_mut().map(|t| t.remove("paymentEth"));
        terms["currency"] = json!(symbol);
        let deadline = terms["deadline"].clone();
        terms["stages"] = json!([
            { "amount": parts[0], "deadline": now + day },
            { "amount": parts[1], "deadline": now + 2 * day },
            { "amount": parts[2], "deadline": deadline },
        ]);
        let mut wrong = terms.clone();
        wrong["payment"] = json!("1");
        let (_, sum) = s.buyer.refused("create-staged-pact", wrong).await?;
        assert!(sum.contains("the stages' amounts sum to"), "{sum}");
        let created = s.buyer.ok("create-staged-pact", terms).await?;
        let id = id_of(&created);
        assert_eq!(
            (created.data["status"].as_str(), created.data["role"].as_str()),
            (Some("NEGOTIATING"), Some("BUYER"))
        );
        let stakes: U256 = amounts.iter().map(|a| stake(*a)).sum();
        assert_eq!(
            credit(s.m.cast.buyer).await?,
            buyer0,
            "nothing credited at creation: the deposit is held"
        );
        s.seller.ok("accept-pact", json!({ "pactId": id })).await?;
        let held = chain.pact.getPact(id.parse::<U256>().unwrap_or_default()).call().await?;
        assert_eq!(
            (held.buyerStake, held.sellerStake),
            (stakes, stakes),
            "{symbol}: a tenth of each stage, both sides"
        );
        s.seller.ok("start-work", json!({ "pactId": id })).await?;

        // Stage 0: delivered, scored, finalized, approved.
        s.seller.ok("submit-stage", json!({ "pactId": id, "stage": 0, "proofHash": hex(0x51) })).await?;
        for (oracle, score) in s.oracles.iter().zip([90, 80]) {
            let scored = oracle
                .ok(
                    "submit-stage-verification",
                    json!({ "pactId": id, "stage": 0, "score": score, "proof": hex(0x77) }),
                )
                .await?;
            assert_eq!(scored.data["stageStatus"], "PENDING_VERIFY");
        }
        let finalized = s.stranger.ok("finalize-stage", json!({ "pactId": id, "stage": 0 })).await?;
        assert_eq!(finalized.data["stageStatus"], "PENDING_APPROVAL");
        let approved = s.buyer.ok("approve-stage", json!({ "pactId": id, "stage": 0 })).await?;
        assert_eq!(
            (approved.data["stageStatus"].as_str(), approved.data["status"].as_str()),
            (Some("COMPLETED"), Some("IN_PROGRESS")),
            "{}",
            approved.text
        );
        assert!(
            approved
                .text
                .starts_with(&format!("Stage 0 of pact #{id} approved: it is COMPLETED. Credited: ")),
            "{}",
            approved.text
        );

        // Stage 1: delivered, disputed by the buyer, ruled 70/30 of its pot.
        s.seller.ok("submit-stage", json!({ "pactId": id, "stage": 1, "proofHash": hex(0x52) })).await?;
        let disputed = s
            .buyer
            .ok("dispute-stage", json!({ "pactId": id, "stage": 1, "arbitrator": arbitrator }))
            .await?;
        assert_eq!(
            (disputed.data["stageStatus"].as_str(), disputed.data["status"].as_str()),
            (Some("DISPUTED"), Some("DISPUTED"))
        );
        let ruled = s
            .arbitrator
            .ok("resolve-stage", json!({ "pactId": id, "stage": 1, "sellerShare": 7000 }))
            .await?;
        assert_eq!(ruled.data["stageStatus"], "SPLIT");

        // Stage 2: settled at 40 % of what is held (stage 2 alone).
        let offered = s.seller.ok("propose-settlement", json!({ "pactId": id, "sellerShare": 4000 })).await?;
        assert!(
            offered.text.contains("40% of the payment held in stage 3 of 3 ("),
            "the offer names the stage it divides: {}",
            offered.text
        );
        let to_seller_2 = amounts[2] * U256::from(4u8) / U256::from(10u8) + stake(amounts[2]);
        let settled = s.buyer.ok("accept-settlement", json!({ "pactId": id, "sellerShare": 4000 })).await?;
        assert_eq!(settled.data["status"], "SPLIT", "{}", settled.text);
        assert_eq!(
            settled.data["sellerCredited"], offered.data["sellerWouldGet"],
            "the offer said what it pays"
        );

        // Every credit, to the base unit.
        let pot = |a: U256| a + stake(a) + stake(a);
        let to_seller_1 = pot(amounts[1]) * U256::from(7u8) / U256::from(10u8);
        let seller_total = amounts[0] + stake(amounts[0]) + to_seller_1 + to_seller_2;
        let deposits: U256 = amounts.iter().map(|a| pot(*a)).sum();
        assert_eq!(credit(s.m.cast.seller).await? - seller0, seller_total, "{symbol}: the seller's credits");
        assert_eq!(
            credit(s.m.cast.buyer).await? - buyer0,
            deposits - seller_total,
            "{symbol}: the buyer's credits, the rest of every deposit"
        );

        let read = s.stranger.ok("get-stages", json!({ "pactId": id })).await?;
        let stages = read.data["stages"].as_array().cloned().unwrap_or_default();
        let seen: Vec<(&str, &str)> = stages
            .iter()
            .map(|st| (st["status"].as_str().unwrap_or(""), st["ending"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(seen, [("COMPLETED", "COMPLETED"), ("SPLIT", "RULED"), ("SPLIT", "SPLIT")], "{symbol}");
        assert_eq!(read.data["status"], "SPLIT");
        assert_eq!(stages[0]["finalScore"], 86, "60% of 90 + 40% of 80");
    }
    Ok(())
}

/// docs/contracts.md §Verdicts void offers: an oracle's and an arbitrator's tools void the offer
/// standing on a pact in a transaction of their own before the verdict, so nobody accepts it behind
/// the score or the ruling, and the refused acceptance says why; a verdict with no offer standing,
/// or one the escrow refuses anyway, goes alone; an offer this wallet can no longer void holds the
/// ruling back, nothing sent.
#[tokio::test]
async fn an_oracle_and_an_arbitrator_void_the_standing_offer_before_their_verdict() -> Result {
    let s = Stage::open().await?;
    let chain = &s.m.chain;
    let arbitrator = s.m.cast.arbitrator.to_string();

    // Pact 0: the buyer offers 60% while the work is being verified; the first oracle scores.
    s.buyer.ok("create-pact", s.terms("buyer", "1").await?).await?;
    s.seller.ok("accept-pact", json!({ "pactId": 0 })).await?;
    s.seller.ok("start-work", json!({ "pactId": 0 })).await?;
    s.seller.ok("submit-work", json!({ "pactId": 0, "proofHash": hex(0x51) })).await?;
    s.buyer.ok("propose-settlement", json!({ "pactId": 0, "sellerShare": 6000 })).await?;
    let scored = s.oracles[0]
        .ok("submit-verification", json!({ "pactId": 0, "score": 0, "proof": hex(0x77) }))
        .await?;
    assert!(scored.text.contains("was voided first"), "{}", scored.text);
    let ledger = chain.pact.getLedger(U256::ZERO).call().await?;
    let voided = chain.pact.getStage(U256::ZERO, 0).call().await?.voided;
    assert_eq!(
        (ledger.epoch, ledger.offerEpoch, voided),
        (2, 0, 1),
        "the void (oracle 0's bit), then the score"
    );
    let (_, refused) =
        s.seller.refused("accept-settlement", json!({ "pactId": 0, "sellerShare": 6000 })).await?;
    assert!(refused.contains("verdict was given after the offer"), "{refused}");
    // A fresh offer: the oracle that scored is refused for what it did (no void sent for a
    // verdict the escrow refuses anyway), the second oracle voids it with its own bit.
    s.buyer.ok("propose-settlement", json!({ "pactId": 0, "sellerShare": 5500 })).await?;
    let (_, again) = s.oracles[0]
        .refused("submit-verification", json!({ "pactId": 0, "score": 9, "proof": hex(0x79) }))
        .await?;
    assert!(again.contains("has already scored"), "{again}");
    let second = s.oracles[1]
        .ok("submit-verification", json!({ "pactId": 0, "score": 0, "proof": hex(0x78) }))
        .await?;
    assert!(second.text.contains("was voided first"), "{}", second.text);
    let ledger = chain.pact.getLedger(U256::ZERO).call().await?;
    let voided = chain.pact.getStage(U256::ZERO, 0).call().await?.voided;
    assert_eq!((ledger.epoch, voided), (4, 0b11), "each oracle's void, each before its score");
    // With no offer standing, a verdict goes alone.
    s.buyer.ok("create-pact", s.terms("buyer", "1").await?).await?;

    s.seller.ok("accept-pact", json!({ "pactId": 1 })).await?;
    s.buyer.ok("raise-dispute", json!({ "pactId": 1, "arbitrator": &arbitrator })).await?;
    let alone = s.arbitrator.ok("resolve-dispute", json!({ "pactId": 1, "sellerWins": false })).await?;
    assert!(!alone.text.contains("voided"), "{}", alone.text);
    assert_eq!(chain.pact.getLedger(U256::from(1u8)).call().await?.epoch, 0, "no void sent");

    // Pact 2: the seller offers 50% in a dispute; the arbitrator rules all to the seller.
    let two = U256::from(2u8);
    s.buyer.ok("create-pact", s.terms("buyer", "1").await?).await?;
    s.seller.ok("accept-pact", json!({ "pactId": 2 })).await?;
    s.buyer.ok("raise-dispute", json!({ "pactId": 2, "arbitrator": &arbitrator })).await?;
    s.seller.ok("propose-settlement", json!({ "pactId": 2, "sellerShare": 5000 })).await?;
    let ruled = s.arbitrator.ok("resolve-dispute", json!({ "pactId": 2, "sellerWins": true })).await?;
    assert!(ruled.text.contains("was voided first"), "{}", ruled.text);
    let ledger = chain.pact.getLedger(two).call().await?;
    let voided = chain.pact.getStage(two, 0).call().await?.voided;
    assert_eq!((ledger.epoch, voided), (1, 1 << 15), "the arbitrator's void, before its ruling");
    assert_eq!(s.m.status(two).await?, agentpact_contracts::PactStatus::Completed);

    // Pact 3: the arbitrator's one void is spent and the seller offers again: the ruling is held
    // back, nothing sent, until the offer is gone.
    let three = U256::from(3u8);
    s.buyer.ok("create-pact", s.terms("buyer", "1").await?).await?;
    s.seller.ok("accept-pact", json!({ "pactId": 3 })).await?;
    s.buyer.ok("raise-dispute", json!({ "pactId": 3, "arbitrator": &arbitrator })).await?;
    s.seller.ok("propose-settlement", json!({ "pactId": 3, "sellerShare": 5000 })).await?;
    send(chain.pact.voidOffers(three).from(s.m.cast.arbitrator)).await?;
    s.seller.ok("propose-settlement", json!({ "pactId": 3, "sellerShare": 4000 })).await?;
    let (code, held) =
        s.arbitrator.refused("resolve-dispute", json!({ "pactId": 3, "sellerWins": true })).await?;
    assert_eq!(code, "REFUSED", "{held}");
    assert!(held.contains("stands until") && held.contains("nothing was sent"), "{held}");
    assert_eq!(s.m.status(three).await?, agentpact_contracts::PactStatus::Disputed);
    s.seller.ok("withdraw-settlement", json!({ "pactId": 3 })).await?;
    s.arbitrator.ok("resolve-dispute", json!({ "pactId": 3, "sellerWins": true })).await?;
    assert_eq!(s.m.status(three).await?, agentpact_contracts::PactStatus::Completed);
    Ok(())
}

#[tokio::test]
async fn a_usdc_pact_runs_through_the_tools_with_permits_and_pays_to_the_unit() -> Result {
    let s = Stage::open().await?;
    let usdc = *s.m.chain.usdc.address();
    let escrow = s.m.chain.deployment.agent_pact;
    let mut terms = s.terms("buyer", "unused").await?;
    terms["currency"] = json!("usdc");
    terms["payment"] = json!("5");
    terms.as_object_mut().map(|t| t.remove("paymentEth"));
    let (buyer_usdc, seller_usdc) =
        (s.m.chain.holding(usdc, s.m.cast.buyer).await?, s.m.chain.holding(usdc, s.m.cast.seller).await?);

    let config = s.buyer.resource("pact://config").await?;
    assert_eq!(
        config["currencies"][1],
        json!({ "symbol": "USDC", "address": usdc.to_checksum(None), "decimals": 6 }),
        "{config}"
    );
    let created = s.buyer.ok("create-pact", terms.clone()).await?;
    assert_eq!(
        created.text,
        "Pact #0 created as BUYER. Deposited: 5.5 USDC (5 payment + 0.5 stake). Open for sellers."
    );
    assert_eq!(
        (created.data["currency"].as_str(), created.data["deposited"].as_str()),
        (Some("USDC"), Some("5.5"))
    );
    assert!(created.data.get("depositedEth").is_none(), "no ETH field on a USDC pact: {}", created.data);
    assert_eq!(s.m.chain.holding(usdc, escrow).await?, U256::from(5_500_000u64));
    assert_eq!(
        s.m.chain.usdc.allowance(s.m.cast.buyer, escrow).call().await?,
        U256::ZERO,
        "a permit, used up"
    );

    let accepted = s.seller.ok("accept-pact", json!({ "pactId": 0 })).await?;
    assert_eq!(accepted.text, "Accepted pact #0 as SELLER. Staked 0.5 USDC.");
    let pact = s.buyer.ok("get-pact", json!({ "pactId": 0 })).await?;
    assert_eq!((pact.data["currency"].as_str(), pact.data["payment"].as_str()), (Some("USDC"), Some("5")));
    assert_eq!(
        s.buyer.resource("pact://pacts/0").await?,
        pact.data,
        "the pact resource is get-pact's answer"
    );
    assert!(pact.text.contains("5 USDC"), "{}", pact.text);

    s.deliver_and_verify("0", [90, 90]).await?;
    let approved = s.buyer.ok("approve-work", json!({ "pactId": 0 })).await?;
    assert!(
        approved
            .text
            .starts_with("Pact #0 approved. 5.5 USDC released to seller, 0.5 USDC stake returned to you"),
        "{}",
        approved.text
    );
    // The seller sees its pay waiting in the escrow, then, withdrawn, in its wallet: USDC in
    // whole units beside ETH, in the sentence and the structured answer.
    let usdc_held = |units: U256| {
        json!([{ "currency": "USDC", "currencyAddress": usdc.to_checksum(None), "decimals": 6,
                 "balance": agentpact_contracts::money::format(units, 6) }])
    };
    let me = s.seller.ok("get-my-address", json!({})).await?;
    assert!(me.text.contains("plus 5.5 USDC credit"), "{}", me.text);
    let held = agentpact_contracts::money::format(seller_usdc - U256::from(500_000u64), 6);
    assert!(me.text.contains(&format!(" ETH and {held} USDC, plus")), "{}", me.text);
    assert_eq!(me.data["tokens"], usdc_held(seller_usdc - U256::from(500_000u64)), "{}", me.data);
    assert_eq!(me.data["credits"][1]["credit"], "5.5", "{}", me.data);
    let withdrawn = s.seller.ok("withdraw", json!({})).await?;
    assert!(withdrawn.text.starts_with("Withdrew 5.5 USDC to "), "{}", withdrawn.text);
    let me = s.seller.ok("get-my-address", json!({})).await?;
    assert_eq!(me.data["tokens"], usdc_held(seller_usdc + U256::from(5_000_000u64)), "{}", me.data);
    assert!(me.text.ends_with("plus no credit in AgentPact (withdraw to collect)."), "{}", me.text);
    s.buyer.ok("withdraw", json!({})).await?;
    assert_eq!(s.m.chain.holding(usdc, s.m.cast.seller).await?, seller_usdc + U256::from(5_000_000u64));
    assert_eq!(s.m.chain.holding(usdc, s.m.cast.buyer).await?, buyer_usdc - U256::from(5_000_000u64));
    assert_eq!(s.m.chain.holding(usdc, escrow).await?, U256::ZERO);

    // Over the USDC cap (1,000 in tests), an unknown currency, and ETH words for a USDC pact: refused, nothing sent.
    terms["payment"] = json!("1000.000001");
    let (code, text) = s.buyer.refused("create-pact", terms.clone()).await?;
    assert_eq!(code, "SPENDING_CAP", "{text}");
    assert!(text.contains("above the spending cap of 1000 USDC (MAX_VALUE_USDC)"), "{text}");
    terms["payment"] = json!("5");
    terms["currency"] = json!("DAI");
    let (_, text) = s.buyer.refused("create-pact", terms.clone()).await?;
    assert!(text.contains("does not take \"DAI\"") && text.contains("USDC"), "{text}");
    terms["currency"] = json!("USDC");
    terms["payment"] = json!("0.0000001");
    let (_, text) = s.buyer.refused("create-pact", terms).await?;
    assert!(text.contains("0.0000001 has 7 decimal places; USDC has 6: round the amount"), "{text}");
    assert_eq!(s.m.chain.pact.pactCount().call().await?, U256::from(1u8));
    Ok(())
}

#[tokio::test]
async fn every_id_and_amount_a_tool_answers_is_taken_back_as_answered_and_every_address_is_checksummed()
-> Result {
    let s = Stage::open().await?;
    let mut answers: Vec<Value> = Vec::new();
    // A pact settled by an offer: its id and the offer's round passed back exactly as answered.
    let created = s.buyer.ok("create-pact", s.terms("buyer", "0.5").await?).await?;
    let id = created.data["pactId"].clone();
    assert_eq!(id, json!("0"), "ids are answered as decimal strings: {}", created.data);
    let payment = created.data["payment"].clone();
    assert_eq!(payment, json!("0.5"), "amounts are answered as decimal strings: {}", created.data);
    answers.push(created.data);
    answers.push(s.seller.ok("accept-pact", json!({ "pactId": id })).await?.data);
    let offered = s.seller.ok("propose-settlement", json!({ "pactId": id, "sellerShare": 7000 })).await?;
    let round = offered.data["round"].clone();
    answers.push(offered.data);
    answers.push(s.buyer.ok("get-pact", json!({ "pactId": id })).await?.data);
    let settled =
        s.buyer.ok("accept-settlement", json!({ "pactId": id, "sellerShare": 7000, "round": round })).await?;
    answers.push(settled.data);
    // A pact delivered, verified and approved: the id as create-pact answered it, every step.
    let created = s.buyer.ok("create-pact", s.terms("buyer", "0.5").await?).await?;
    let id = created.data["pactId"].clone();
    answers.push(created.data);
    answers.push(s.seller.ok("accept-pact", json!({ "pactId": id })).await?.data);
    answers.push(s.deliver_and_verify(id.as_str().unwrap_or_default(), [85, 90]).await?.data);
    let oracle = s.m.cast.oracles[0].to_string();
    answers.push(s.buyer.ok("get-verification", json!({ "pactId": id, "oracle": oracle })).await?.data);
    answers.push(s.buyer.ok("approve-work", json!({ "pactId": id })).await?.data);
    let pact = s.buyer.ok("get-pact", json!({ "pactId": id })).await?;
    assert_eq!(pact.data["pactId"], id, "{}", pact.data);
    answers.push(pact.data);
    answers.push(s.buyer.ok("list-pacts", json!({})).await?.data);
    // The same ids as whole numbers, as before, and an amount answered taken back as max_price.
    answers.push(s.buyer.ok("get-pact", json!({ "pactId": 1 })).await?.data);
    let found =
        s.buyer.ok("search_agents", json!({ "capability": "logo-design", "max_price": payment })).await?;
    answers.push(found.data);
    answers.push(
        s.buyer.ok("search_agents", json!({ "capability": "logo-design", "max_price": 0.5 })).await?.data,
    );
    answers.push(s.buyer.ok("get-reputation", json!({})).await?.data);
    answers.push(s.buyer.ok("get-my-address", json!({})).await?.data);
    answers.push(s.buyer.resource("pact://config").await?);
    answers.push(s.buyer.resource("pact://pacts/1").await?);
    for (bad, names) in
        [(json!("1e3"), "pactId must be a whole number"), (json!(-1), "pactId must be at least 0")]
    {
        let (code, text) = s.buyer.refused("get-pact", json!({ "pactId": bad })).await?;
        assert_eq!(code, "INVALID_INPUT", "{text}");
        assert!(text.contains(names), "{bad}: {text}");
    }
    // Every address of every answer in its EIP-55 form.
    let mut found = Vec::new();
    answers.iter().for_each(|a| addresses_in(a, &mut found));
    assert!(found.len() > 20, "the flow's answers carry addresses: {found:?}");
    for text in found {
        let checksummed = text.parse::<Address>().map(|a| a.to_checksum(None)).unwrap_or_default();
        assert_eq!(text, checksummed, "an address answered is checksummed (EIP-55)");
    }
    Ok(())
}
