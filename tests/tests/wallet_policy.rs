//! The wallet policy a human sets for the wallet an agent's `agentpact mcp` signs with (#59,
//! docs/mcp.md §Policy), end to end: `agentpact wallet policy set` stores it, two `agentpact mcp
//! --http` processes behind a round-robin proxy share it and its counters, and agents drive them
//! with the official Python MCP SDK in its default mode (tests/python/mcp_policy.py). A daily
//! budget holds under 50 parallel calls (checked on chain); a first-time counterparty waits for a
//! human's Confirm in headless Chromium; the kill switch flipped mid-burst stops every send after
//! it on both processes (checked on chain) until thawed; an expired policy signs nothing; the
//! ledger of every attempt verifies offline with scripts/verify-ledger.py, a tampered entry is
//! caught by line, and the database refuses to rewrite it.

use std::{path::PathBuf, time::Duration};

use agentpact_tests::{
    HarnessError,
    browser::Browser,
    cli::binary,
    index,
    mcp::{binary_env, dev_key},
    mcp_http::{self, ModernClient, answer_page, asked, by_url, retry},
    pacts::Market,
    postgres::TestDatabase,
    python::Sdk,
    round_robin::RoundRobin,
    until,
};
use alloy::{
    hex,
    primitives::{Address, B256, U256},
    providers::Provider,
};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn failed(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// What each pact of these tests pays, in ETH; the buyer deposits it and a 10% stake.
const PAYMENT: &str = "0.01";

/// [`PAYMENT`] and its stake in wei: what one `create-pact` moves out of the wallet.
fn deposit() -> U256 {
    U256::from(11_000_000_000_000_000u64)
}

/// A market an indexer follows, and the environment of `agentpact mcp` signing as the buyer (dev
/// account 1) with a per-call cap of 0.05 ETH (MAX_VALUE_ETH: every call here is under it), no
/// confirmation threshold and no rate limit (the bursts come from one address).
struct Setting {
    m: Market,
    db: TestDatabase,
    _indexer: tokio::task::JoinHandle<()>,
    env: Vec<(&'static str, String)>,
    /// The wallet the policy governs: the one the servers sign with.
    wallet: Address,
    /// Where this test's files go (a policy, exported ledgers); removed when dropped.
    dir: tempfile::TempDir,
}

impl Setting {
    async fn open() -> Result<Self> {
        let m = Market::open().await?;
        let (db, indexer) = index::followed(&m.chain).await?;
        let key = dev_key(&m.chain, 1)?;
        let wallet = key.address();
        let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
        env.extend([
            ("PRIVATE_KEY", format!("0x{}", hex::encode(key.to_bytes()))),
            ("MAX_VALUE_ETH", "0.05".to_owned()),
            ("MCP_RATE_LIMIT_PER_SEC", "0".to_owned()),
            ("INDEX_WAIT_MS", "0".to_owned()),
        ]);
        let dir = tempfile::tempdir().map_err(failed)?;
        Ok(Self { m, db, _indexer: indexer, env, wallet, dir })
    }

    /// An `agentpact mcp --http` process: it and its address (`host:port`).
    async fn server(&self) -> Result<(tokio::process::Child, String)> {
        mcp_http::serve(&self.env).await
    }

    /// Buyer terms paying [`PAYMENT`], open to anyone or only to `counterparty`.
    async fn terms(&self, counterparty: Option<Address>) -> Result<Value> {
        let mut terms = json!({
            "role": "buyer", "specHash": "QmWalletPolicy", "deadline": self.m.chain.now().await? + 86_400,
            "oracles": [self.m.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
            "paymentEth": PAYMENT, "arbitrator": self.m.cast.arbitrator.to_string(),
        });
        if let Some(counterparty) = counterparty {
            terms["counterparty"] = json!(counterparty.to_string());
        }
        Ok(terms)
    }

    /// The environment of the human's `agentpact wallet` commands: the servers' database and chain.
    fn cli_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("DATABASE_URL", self.db.url().to_owned()),
            ("CHAIN_ID", self.m.chain.anvil.chain_id().to_string()),
        ]
    }

    /// Runs `agentpact <args>` as the human does; what it printed on stdout, or an error with
    /// everything it printed when it failed.
    async fn human(&self, args: &[&str]) -> Result<String> {
        let run = tokio::process::Command::new(binary())
            .args(args)
            .envs(self.cli_env())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .map_err(|_| failed(format!("agentpact {} did not finish", args.join(" "))))?
            .map_err(failed)?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(failed(format!(
                "agentpact {} failed ({}):\n{stdout}\n{stderr}",
                args.join(" "),
                out.status
            )));
        }
        Ok(stdout)
    }

    /// Sets the policy for this wallet and chain with `agentpact wallet policy set`: the header
    /// (wallet, chain) followed by `rules` (TOML).
    async fn set_policy(&self, rules: &str) -> Result {
        let text = format!(
            "wallet = \"{}\"\nchain_id = {}\n{rules}\n",
            self.wallet.to_checksum(None),
            self.m.chain.anvil.chain_id()
        );
        let file = self.dir.path().join("policy.toml");
        std::fs::write(&file, text).map_err(failed)?;
        self.human(&["wallet", "policy", "set", &file.to_string_lossy()]).await?;
        Ok(())
    }

    /// `agentpact wallet <command> --wallet <this wallet>`; what it printed.
    async fn wallet_command(&self, command: &str) -> Result<String> {
        self.human(&["wallet", command, "--wallet", &self.wallet.to_string()]).await
    }

    /// The wallet's next nonce counting transactions the node holds but has not mined: every
    /// transaction it was ever sent.
    async fn sent(&self) -> Result<u64> {
        Ok(self.m.chain.provider.get_transaction_count(self.wallet).pending().await?)
    }

    /// The wallet's transactions mined so far.
    async fn mined(&self) -> Result<u64> {
        Ok(self.m.chain.provider.get_transaction_count(self.wallet).latest().await?)
    }

    /// How many pacts the escrow holds (this wallet is the only one creating any).
    async fn pacts(&self) -> Result<U256> {
        Ok(self.m.chain.pact.pactCount().call().await?)
    }

    /// Runs tests/python/mcp_policy.py with `args`: the answers it printed, one per call.
    async fn python(&self, args: &[&str]) -> Result<Vec<Value>> {
        let printed = Sdk::Mcp
            .run("mcp_policy.py", args, self.env.clone(), Duration::from_secs(600), "policy complete")
            .await?;
        answers(&printed)
    }
}

/// The answers mcp_policy.py printed (`answer {…}` lines); an answer the SDK could not get fails.
fn answers(printed: &str) -> Result<Vec<Value>> {
    let answers = printed
        .lines()
        .filter_map(|l| l.strip_prefix("answer "))
        .map(|l| serde_json::from_str::<Value>(l).map_err(|e| failed(format!("{e}: {l}"))))
        .collect::<Result<Vec<_>>>()?;
    if let Some(broken) = answers.iter().find(|a| a.get("exception").is_some()) {
        return Err(failed(format!("a call failed in the SDK: {broken}")));
    }
    Ok(answers)
}

/// The transaction a successful `create-pact` answer names.
fn tx_of(answer: &Value) -> Result<B256> {
    let tx = answer["structured"]["txHash"].as_str().unwrap_or_default();
    tx.parse().map_err(|e| failed(format!("txHash of {answer}: {e}")))
}

/// The text of an answer, lowercased, for looking for a rule's name in it.
fn said(answer: &Value) -> String {
    answer["text"].as_str().unwrap_or_default().to_lowercase()
}

/// What the gas of the transactions `txs` cost their sender, in wei, from their receipts.
async fn gas_of(s: &Setting, txs: &[B256]) -> Result<U256> {
    let mut total = U256::ZERO;
    for tx in txs {
        let receipt = s.m.chain.provider.get_transaction_receipt(*tx).await?;
        let receipt = receipt.ok_or_else(|| failed(format!("no receipt for {tx}")))?;
        assert!(receipt.status(), "{tx} was mined and succeeded");
        total += U256::from(receipt.gas_used) * U256::from(receipt.effective_gas_price);
    }
    Ok(total)
}

/// 50 agents at once on two processes sharing one wallet, each call under the per-call cap
/// (MAX_VALUE_ETH, 0.05 ETH) but together over the daily budget: exactly floor(budget / deposit)
/// are sent, every other is refused FORBIDDEN naming the budget, and the chain agrees: that
/// many pacts, that many transactions, and the balance down by exactly their deposits and gas.
#[tokio::test]
async fn fifty_parallel_calls_on_two_processes_never_pass_the_daily_budget() -> Result {
    let s = Setting::open().await?;
    let budget = U256::from(100_000_000_000_000_000u64); // 0.1 ETH
    s.set_policy(
        "[[budget]]\ncurrency = \"ETH\"\nper = \"1d\"\nmax = \"0.1\"\n\n[counterparties]\nfirst_time = \"allow\"",
    )
    .await?;
    let (_a, a) = s.server().await?;
    let (_b, b) = s.server().await?;
    let proxy = RoundRobin::start(vec![a, b]).await?;
    let (balance, nonce, pacts) = (s.m.chain.balance(s.wallet).await?, s.sent().await?, s.pacts().await?);

    let terms = s.terms(None).await?.to_string();
    let answers = s.python(&["burst", &proxy.url("/mcp"), "50", &terms]).await?;
    assert_eq!(answers.len(), 50, "every call answered");
    let allowed = usize::try_from(budget / deposit()).map_err(failed)?;
    assert_eq!(allowed, 9, "0.1 ETH holds nine deposits of 0.011 ETH");
    let (sent, refused): (Vec<&Value>, Vec<&Value>) = answers.iter().partition(|a| a["isError"] == false);
    assert_eq!(sent.len(), allowed, "exactly the budget's worth was sent: {sent:?}");
    for answer in &refused {
        assert_eq!(answer["code"], "FORBIDDEN", "a call over the budget is forbidden: {answer}");
        assert!(said(answer).contains("budget"), "the refusal names the budget: {answer}");
        assert!(said(answer).contains("nothing was sent"), "and says nothing was sent: {answer}");
    }
    assert!(proxy.connections().iter().all(|&c| c > 0), "both processes served: {:?}", proxy.connections());

    let txs = sent.iter().map(|a| tx_of(a)).collect::<Result<Vec<_>>>()?;
    assert_eq!(s.sent().await? - nonce, allowed as u64, "the wallet sent one transaction per allowed call");
    assert_eq!(s.pacts().await? - pacts, U256::from(allowed), "one pact per allowed call");
    let spent = balance - s.m.chain.balance(s.wallet).await?;
    assert_eq!(
        spent - gas_of(&s, &txs).await?,
        deposit() * U256::from(allowed),
        "the balance fell by the allowed deposits and their gas, nothing more"
    );

    // The agent reads its limits to plan within them: what the budget used and what remains.
    let client = ModernClient::new(&proxy.url("/mcp"), json!({}))?;
    let read = client.request("resources/read", json!({ "uri": "hire://policy" })).await?;
    let text = read["result"]["contents"][0]["text"].as_str().ok_or_else(|| failed(format!("{read}")))?;
    let policy: Value = serde_json::from_str(text).map_err(failed)?;
    assert_eq!(policy["enforced"], true, "{policy}");
    assert_eq!(policy["frozen"], Value::Null, "{policy}");
    let usage = &policy["usage"][0];
    assert_eq!(usage["rule"], "the ETH budget per 1d (0.1 ETH)", "{policy}");
    assert_eq!(usage["used"], "0.099 ETH", "nine deposits of 0.011 ETH: {policy}");
    assert_eq!(usage["remaining"], "0.001 ETH", "{policy}");
    Ok(())
}

/// A payment to a counterparty the wallet never paid waits for its human (first_time = "ask"): the
/// call answers with the confirmation page, which says why it asks in headless Chromium; nothing
/// is sent until Confirm is clicked, then the retried call sends. The next payment to the same
/// seller is no longer a first and is not held.
#[tokio::test]
async fn a_first_time_counterparty_waits_for_the_humans_confirm_in_a_real_browser() -> Result {
    let s = Setting::open().await?;
    s.set_policy("[counterparties]\nfirst_time = \"ask\"").await?;
    let (_server, at) = s.server().await?;
    let client = ModernClient::new(&format!("http://{at}/mcp"), by_url())?;
    let seller = s.m.cast.seller;
    let terms = s.terms(Some(seller)).await?;
    let nonce = s.sent().await?;

    let (page, state) = asked(&client.call("create-pact", terms.clone()).await?)?;
    let browser = Browser::start(1000, 800).await?;
    browser.goto(&page).await?;
    let shown = browser.run("return document.body.textContent", json!([])).await?;
    let shown = shown.as_str().unwrap_or_default().to_lowercase();
    let why = format!("first payment to {}", seller.to_string().to_lowercase());
    assert!(shown.contains(&why), "the page says why it asks ({why}): {shown}");
    assert_eq!(s.sent().await?, nonce, "nothing is sent while the human reads the page");
    assert_eq!(s.pacts().await?, U256::ZERO);

    browser.click("#confirm").await?;
    let standing = "document.getElementById('standing').textContent";
    browser
        .wait_for(
            "the confirm",
            &format!("return {standing}.includes('Confirmed') ? {standing} : null"),
            Duration::from_secs(10),
        )
        .await?;
    browser.close().await?;
    let created = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(created["isError"], false, "sent once the human confirmed: {created}");
    assert_eq!(created["structuredContent"]["pactId"], "0", "{created}");
    assert_eq!(s.sent().await?, nonce + 1, "one transaction, after the confirm");

    let again = client.call("create-pact", s.terms(Some(seller)).await?).await?;
    assert_ne!(again["resultType"], "input_required", "a second payment to the seller is not held: {again}");
    assert_eq!(again["isError"], false, "{again}");
    assert_eq!(again["structuredContent"]["pactId"], "1", "{again}");
    Ok(())
}

/// The kill switch flipped mid-burst: agents on two processes keep calling until each is
/// refused; once the chain shows two of their pacts mined the human runs `agentpact wallet
/// freeze`, and from its return the wallet's nonce (pending transactions counted) never moves
/// again. Every call that sent nothing was refused FORBIDDEN naming the freeze; a call straight
/// to each process is refused the same way; `agentpact wallet thaw` lets a call through again.
#[tokio::test]
async fn the_kill_switch_flipped_mid_burst_stops_every_send_on_every_process_until_thawed() -> Result {
    let s = Setting::open().await?;
    s.set_policy("[[budget]]\ncurrency = \"ETH\"\nper = \"1d\"\nmax = \"100\"\n\n[counterparties]\nfirst_time = \"allow\"")
        .await?;
    let (_a, a) = s.server().await?;
    let (_b, b) = s.server().await?;
    let proxy = RoundRobin::start(vec![a.clone(), b.clone()]).await?;
    let start = s.sent().await?;
    let terms = s.terms(None).await?.to_string();
    let url = proxy.url("/mcp");
    let workers = 6;

    let workers_arg = workers.to_string();
    let burst_args = ["until-refused", url.as_str(), &workers_arg, "400", &terms];
    let burst = s.python(&burst_args);
    let freeze = async {
        let mined = || async { Ok(s.mined().await? >= start + 2) };
        until(Duration::from_secs(120), "two of the burst's pacts mined", mined).await?;
        s.human(&["wallet", "freeze", "--wallet", &s.wallet.to_string(), "--reason", "mid-burst test"])
            .await?;
        s.sent().await
    };
    let (answers, frozen_at) = tokio::join!(burst, freeze);
    let (answers, frozen_at) = (answers?, frozen_at?);

    assert_eq!(s.sent().await?, frozen_at, "no transaction was sent after the freeze returned");
    let (sent, refused): (Vec<&Value>, Vec<&Value>) = answers.iter().partition(|a| a["isError"] == false);
    assert!(sent.len() >= 2, "the freeze came mid-burst, after two pacts: {} sent", sent.len());
    assert!(proxy.connections().iter().all(|&c| c > 0), "both processes served: {:?}", proxy.connections());
    assert_eq!(frozen_at - start, sent.len() as u64, "every transaction sent is a call answered as sent");
    assert_eq!(refused.len(), workers, "each agent ran until refused, once: {refused:?}");
    for answer in &refused {
        assert_eq!(answer["code"], "FORBIDDEN", "{answer}");
        assert!(said(answer).contains("froze"), "the refusal says the human froze the wallet: {answer}");
        assert!(said(answer).contains("mid-burst test"), "with the human's reason: {answer}");
    }

    let terms = s.terms(None).await?.to_string();
    for direct in [&a, &b] {
        let answers = s.python(&["call", &format!("http://{direct}/mcp"), "create-pact", &terms]).await?;
        let answer = answers.first().ok_or_else(|| failed("no answer"))?;
        assert_eq!(answer["code"], "FORBIDDEN", "{direct} refuses while frozen: {answer}");
        assert!(said(answer).contains("froze"), "{answer}");
    }
    assert_eq!(s.sent().await?, frozen_at, "still nothing sent");

    s.wallet_command("thaw").await?;
    let answers = s.python(&["call", &url, "create-pact", &terms]).await?;
    let answer = answers.first().ok_or_else(|| failed("no answer"))?;
    assert_eq!(answer["isError"], false, "thawed, a call sends again: {answer}");
    assert_eq!(s.sent().await?, frozen_at + 1);
    Ok(())
}

/// A policy past its expiry signs nothing: create-pact is refused FORBIDDEN naming the expiry and
/// the wallet sends no transaction.
#[tokio::test]
async fn a_policy_past_its_expiry_signs_nothing() -> Result {
    let s = Setting::open().await?;
    s.set_policy("expires_at = \"2026-01-01T00:00:00Z\"\n\n[counterparties]\nfirst_time = \"allow\"").await?;
    let (_server, at) = s.server().await?;
    let nonce = s.sent().await?;
    let terms = s.terms(None).await?.to_string();
    let answers = s.python(&["call", &format!("http://{at}/mcp"), "create-pact", &terms]).await?;
    let answer = answers.first().ok_or_else(|| failed("no answer"))?;
    assert_eq!(answer["code"], "FORBIDDEN", "{answer}");
    assert!(said(answer).contains("expir"), "the refusal names the policy's expiry: {answer}");
    assert_eq!(s.sent().await?, nonce, "nothing was sent");
    assert_eq!(s.pacts().await?, U256::ZERO);
    Ok(())
}

/// scripts/verify-ledger.py, beside this crate.
fn verifier() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/verify-ledger.py")
}

/// Runs scripts/verify-ledger.py on `file`: whether it exited 0, and what it printed.
async fn verify(file: &std::path::Path) -> Result<(bool, String)> {
    let out = tokio::process::Command::new("python3")
        .arg(verifier())
        .arg(file)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| failed(format!("python3 scripts/verify-ledger.py: {e}")))?;
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), printed))
}

/// The ledger of every attempt: a first payment to a seller held, confirmed by the human and sent
/// (held, allowed, sent, mined), then a call over the budget refused; `agentpact wallet ledger` exports them, scripts/verify-ledger.py
/// verifies the export offline and counts its entries, catches one body's amount changed by its
/// line, and the database refuses UPDATE and DELETE on the table.
#[tokio::test]
async fn the_ledger_verifies_offline_names_a_tampered_line_and_cannot_be_rewritten() -> Result {
    let s = Setting::open().await?;
    s.set_policy(
        "[[budget]]\ncurrency = \"ETH\"\nper = \"1d\"\nmax = \"0.03\"\n\n[counterparties]\nfirst_time = \"ask\"",
    )
    .await?;
    let (_server, at) = s.server().await?;
    let url = format!("http://{at}/mcp");
    let client = ModernClient::new(&url, by_url())?;

    // A first payment to the seller: held, then confirmed on its page, allowed, sent, mined.
    let terms = s.terms(Some(s.m.cast.seller)).await?;
    let (page, state) = asked(&client.call("create-pact", terms.clone()).await?)?;
    assert_eq!(answer_page(&page, "confirm").await?, 200, "the human confirmed");
    let created = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(created["isError"], false, "{created}");
    // Refused: 0.022 ETH more to the same seller would pass the 0.03 ETH budget.
    let mut larger = s.terms(Some(s.m.cast.seller)).await?;
    larger["paymentEth"] = json!("0.02");
    let answers = s.python(&["call", &url, "create-pact", &larger.to_string()]).await?;
    let answer = answers.first().ok_or_else(|| failed("no answer"))?;
    assert_eq!(answer["code"], "FORBIDDEN", "{answer}");
    assert!(said(answer).contains("budget"), "{answer}");

    let exported = s.wallet_command("ledger").await?;
    let file = s.dir.path().join("ledger.jsonl");
    std::fs::write(&file, &exported).map_err(failed)?;
    let lines: Vec<&str> = exported.lines().filter(|l| !l.trim().is_empty()).collect();
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM wallet_ledger").fetch_one(s.db.pool()).await?;
    assert_eq!(lines.len() as i64, stored, "the export holds every entry");
    let (ok, printed) = verify(&file).await?;
    assert!(ok, "the export verifies: {printed}");
    assert!(printed.contains(&format!("ok: {} entries", lines.len())), "{printed}");

    let bodies = lines
        .iter()
        .map(|l| {
            let line: Value = serde_json::from_str(l).map_err(|e| failed(format!("{e}: {l}")))?;
            let body = line["body"].as_str().ok_or_else(|| failed(format!("no body: {l}")))?;
            serde_json::from_str::<Value>(body).map_err(|e| failed(format!("{e}: {body}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let events: Vec<&str> = bodies.iter().filter_map(|b| b["event"].as_str()).collect();
    for event in ["allowed", "held", "refused", "sent", "mined"] {
        assert!(events.contains(&event), "the ledger holds a {event} entry: {events:?}");
    }
    let refusal = bodies.iter().find(|b| b["event"] == "refused").ok_or_else(|| failed("no refusal"))?;
    assert!(
        refusal["rule"].as_str().unwrap_or_default().contains("budget"),
        "the refusal's entry names the rule: {refusal}"
    );
    let wallet = s.wallet.to_checksum(None);
    assert!(bodies.iter().all(|b| b["wallet"] == wallet.as_str()), "every entry is this wallet's");

    // One body's amount changed, nothing else: the verifier names that line.
    let (at_line, amount) = bodies
        .iter()
        .enumerate()
        .find_map(|(n, b)| {
            (b["event"] == "sent").then(|| b["amount"].as_str().map(|a| (n, a.to_owned()))).flatten()
        })
        .ok_or_else(|| failed(format!("no sent entry with an amount: {bodies:?}")))?;
    let mut line: Value = serde_json::from_str(lines[at_line]).map_err(failed)?;
    let body = line["body"].as_str().unwrap_or_default();
    let changed = body.replace(&format!("\"amount\":\"{amount}\""), &format!("\"amount\":\"{amount}1\""));
    assert_ne!(changed, body, "the amount was changed in the body's text");
    line["body"] = json!(changed);
    let mut tampered = lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    tampered[at_line] = line.to_string();
    let forged = s.dir.path().join("tampered.jsonl");
    std::fs::write(&forged, tampered.join("\n") + "\n").map_err(failed)?;
    let (ok, printed) = verify(&forged).await?;
    assert!(!ok, "a changed amount does not verify: {printed}");
    assert!(printed.contains(&format!("line {}", at_line + 1)), "it names line {}: {printed}", at_line + 1);

    // The database refuses to rewrite it.
    for rewrite in ["UPDATE wallet_ledger SET event = 'refused' WHERE seq = 1", "DELETE FROM wallet_ledger"] {
        let refused = sqlx::query(rewrite).execute(s.db.pool()).await;
        let error = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("append-only"), "{rewrite} is refused: {error:?}");
    }
    let after: i64 = sqlx::query_scalar("SELECT count(*) FROM wallet_ledger").fetch_one(s.db.pool()).await?;
    assert_eq!(after, stored, "nothing was removed");
    let (ok, printed) = verify(&file).await?;
    assert!(ok, "{printed}");
    Ok(())
}

/// The ledger as its readers see it: a human on the page beside a confirmation (the held call
/// before the yes, then what was sent and mined; an unknown page's ledger is not found), and the
/// operator over GraphQL (`walletLedger`, the entries exactly as exported, paged, refused without
/// the operator's token and past 100 at a time).
#[tokio::test]
async fn the_ledger_reads_beside_the_confirmation_page_and_over_graphql_for_the_operator_only() -> Result {
    use agentpact_tests::api::{OPERATOR, TestApi, config};
    let s = Setting::open().await?;
    s.set_policy("[counterparties]\nfirst_time = \"ask\"").await?;
    let (_server, at) = s.server().await?;
    let client = ModernClient::new(&format!("http://{at}/mcp"), by_url())?;
    let terms = s.terms(Some(s.m.cast.seller)).await?;
    let (page, state) = asked(&client.call("create-pact", terms.clone()).await?)?;
    let http = reqwest::Client::new();
    let read = |url: String| {
        let http = http.clone();
        async move {
            let answer = http.get(&url).send().await.map_err(failed)?;
            let status = answer.status().as_u16();
            Ok::<_, HarnessError>((status, answer.text().await.map_err(failed)?))
        }
    };
    let (status, shown) = read(format!("{page}/ledger")).await?;
    assert_eq!(status, 200, "{shown}");
    assert!(
        shown.contains("<td>held</td>") && shown.contains("first payment to"),
        "the held call is listed: {shown}"
    );
    assert!(!shown.contains("<td>sent</td>"), "nothing was sent yet: {shown}");
    let (status, confirm_page) = read(page.clone()).await?;
    assert_eq!(status, 200);
    assert!(confirm_page.contains("/ledger\""), "the confirmation page links its ledger: {confirm_page}");
    assert_eq!(answer_page(&page, "confirm").await?, 200);
    let created = client.call_with(retry(&terms, &state)).await?;
    assert_eq!(created["isError"], false, "{created}");
    let (_, shown) = read(format!("{page}/ledger")).await?;
    for event in ["held", "allowed", "sent", "mined"] {
        assert!(shown.contains(&format!("<td>{event}</td>")), "the page lists a {event} entry: {shown}");
    }
    let base = page.rsplit_once('/').map_or(page.as_str(), |(base, _)| base);
    let (status, _) = read(format!("{base}/{}/ledger", "ab".repeat(32))).await?;
    assert_eq!(status, 404, "no confirmation, no ledger");

    let exported: Vec<Value> = s
        .wallet_command("ledger")
        .await?
        .lines()
        .map(|l| serde_json::from_str(l).map_err(failed))
        .collect::<Result<_>>()?;
    let api = TestApi::start(s.db.pool(), config(s.m.chain.anvil.chain_id())).await?;
    let query = "query($w: Address!, $first: Int, $after: Int) {
        walletLedger(wallet: $w, first: $first, after: $after) { seq body hash signature } }";
    let wallet = s.wallet.to_string();
    let all = api.data_as(OPERATOR, query, json!({ "w": wallet })).await?;
    let listed = all["walletLedger"].as_array().ok_or_else(|| failed(format!("{all}")))?;
    assert_eq!(listed.len(), exported.len(), "GraphQL lists every entry: {all}");
    for (over_graphql, line) in listed.iter().zip(&exported) {
        for key in ["body", "hash", "signature"] {
            assert_eq!(over_graphql[key], line[key], "{key} as exported");
        }
    }
    let second = api.data_as(OPERATOR, query, json!({ "w": wallet, "first": 1, "after": 1 })).await?;
    assert_eq!(second["walletLedger"][0]["seq"], 2, "{second}");
    assert_eq!(second["walletLedger"].as_array().map(Vec::len), Some(1), "{second}");
    let stranger = api.post(query, json!({ "w": wallet })).await?;
    assert_eq!(stranger["errors"][0]["extensions"]["code"], "FORBIDDEN", "{stranger}");
    let greedy = api.post_as(OPERATOR, query, json!({ "w": wallet, "first": 101 })).await?;
    assert_eq!(greedy["errors"][0]["extensions"]["code"], "BAD_ARGUMENT", "{greedy}");
    Ok(())
}
