//! `agentpact mcp` driven by clients nobody here wrote, installed by scripts/install-tools: the
//! official Python MCP SDK runs tests/python/mcp_flow.py over stdio and over streamable HTTP
//! (subscription, progress, elicitation accepted and declined, a template, a prompt, completion);
//! the MCP Inspector's CLI lists what the server offers and checks its tool schemas.

use std::{path::PathBuf, process::Output, time::Duration};

use agentpact_read::Reader;
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    browser::{Browser, screenshots},
    cli::binary,
    index,
    mcp::{binary_env, dev_key},
    pacts::Market,
    postgres::TestDatabase,
    python::Sdk,
};
use alloy::{hex, primitives::U256};
use serde_json::Value;

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// The pinned MCP Inspector from package.json.
fn inspector() -> Result<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/mcp-inspector");
    if path.is_file() {
        Ok(path)
    } else {
        Err(process(format!("the MCP Inspector is not at {}: run scripts/install-tools", path.display())))
    }
}

/// A market whose chain an indexer follows (the subscriptions hear its notifications), and the
/// environment `agentpact mcp` needs as the buyer, asking the human above 0.3 ETH.
struct Setting {
    m: Market,
    db: TestDatabase,
    _indexer: tokio::task::JoinHandle<()>,
    env: Vec<(&'static str, String)>,
}

/// How many tools a full agent lists: the catalog's, not a number written here.
fn every_tool() -> usize {
    agentpact_mcp::Role::Full.tools().len()
}

impl Setting {
    async fn open() -> Result<Self> {
        let m = Market::open().await?;
        let (db, indexer) = index::followed(&m.chain).await?;
        let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
        env.extend([
            ("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))),
            ("CONFIRM_ABOVE_ETH", "0.3".to_owned()),
            ("INDEX_WAIT_MS", "5000".to_owned()),
            ("FLOW_ORACLE", m.cast.oracles[0].to_string()),
            ("FLOW_ARBITRATOR", m.cast.arbitrator.to_string()),
            ("FLOW_DEADLINE", (m.chain.now().await? + 86_400).to_string()),
            ("FLOW_TOOLS", every_tool().to_string()),
        ]);
        Ok(Self { m, db, _indexer: indexer, env })
    }

    /// Runs tests/python/mcp_flow.py with `args`; its output must end with "flow complete".
    async fn python_flow(&self, args: &[&str]) -> Result<String> {
        Sdk::Mcp.run("mcp_flow.py", args, self.env.clone(), Duration::from_secs(120), "flow complete").await
    }

    /// `agentpact mcp --http` on a free loopback port, answering once it listens.
    async fn http_server(&self) -> Result<(tokio::process::Child, String)> {
        let (child, at) = agentpact_tests::mcp_http::serve(&self.env).await?;
        Ok((child, format!("http://{at}/mcp")))
    }

    /// The servers' settings but the key and the confirmation threshold, which each agent has its own.
    fn shared_env(&self) -> Vec<(&'static str, String)> {
        self.env.iter().filter(|(k, _)| !matches!(*k, "PRIVATE_KEY" | "CONFIRM_ABOVE_ETH")).cloned().collect()
    }

    /// Dev account `n`'s key, 0x-hex.
    fn key(&self, n: usize) -> Result<String> {
        Ok(format!("0x{}", hex::encode(dev_key(&self.m.chain, n)?.to_bytes())))
    }

    /// One `agentpact mcp --http` with `env` per `(role, dev account)`, each with its account's key
    /// and its role: the processes and their URLs, in the order given.
    async fn role_servers(
        &self,
        env: &[(&'static str, String)],
        roles: &[(&str, usize)],
    ) -> Result<(Vec<tokio::process::Child>, Vec<String>)> {
        let (mut servers, mut urls) = (Vec::new(), Vec::new());
        for (role, n) in roles {
            let mut own = env.to_vec();
            own.extend([("PRIVATE_KEY", self.key(*n)?), ("MCP_ROLE", (*role).to_owned())]);
            let (server, at) = agentpact_tests::mcp_http::serve(&own).await?;
            servers.push(server);
            urls.push(format!("http://{at}/mcp"));
        }
        Ok((servers, urls))
    }
}

impl Setting {
    /// Runs tests/python/mcp_connect.py: the SDK's `Client` in `mode` over `transport` to
    /// `target`; returns what it printed (`connected …` or `refused …`).
    async fn python_connect(&self, mode: &str, transport: &str, target: &str) -> Result<String> {
        let args = [mode, transport, target];
        Sdk::Mcp.run("mcp_connect.py", &args, self.env.clone(), Duration::from_secs(120), "connected").await
    }
}

/// What `out` printed, which must be a success whose output contains `ending`.
fn said(out: &Output, what: &str, ending: &str) -> Result<String> {
    let printed =
        format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() && printed.contains(ending) {
        Ok(printed)
    } else {
        Err(process(format!("{what} failed ({:?}):\n{printed}", out.status)))
    }
}

/// The SDK's `Client()` in each of its modes connects over stdio and streamable HTTP: `auto` (its
/// default, as its docs show it first: `server/discover`, then calls with no handshake) and
/// `2026-07-28` speak the new protocol; `legacy` still gets 2025-11-25 through `initialize`.
#[tokio::test]
async fn the_python_sdks_client_connects_in_every_mode_over_stdio_and_http() -> Result {
    let s = Setting::open().await?;
    let stdio = binary().to_string_lossy().into_owned();
    let (_server, url) = s.http_server().await?;
    for (transport, target) in [("stdio", stdio.as_str()), ("http", url.as_str())] {
        for (mode, version) in
            [("auto", "2026-07-28"), ("2026-07-28", "2026-07-28"), ("legacy", "2025-11-25")]
        {
            let printed = s.python_connect(mode, transport, target).await?;
            let expected = format!("connected {version}: {} tools; 0 pacts have been created", every_tool());
            assert!(printed.contains(&expected), "{mode} over {transport}: {printed}");
        }
    }
    Ok(())
}

/// The SDK in its 2026-07-28 mode (no handshake; `subscriptions/listen`; the confirmation as an
/// `input_required` result it retries) and in its legacy mode (`initialize`;
/// `resources/subscribe`; the confirmation asked within the call) runs the whole flow over stdio.
#[tokio::test]
async fn the_python_sdk_drives_a_flow_over_stdio_in_both_protocols() -> Result {
    let s = Setting::open().await?;
    for mode in ["2026-07-28", "legacy"] {
        let printed = s.python_flow(&[mode, "stdio", &binary().to_string_lossy()]).await?;
        assert!(printed.contains("ok: declined"), "{mode}: {printed}");
    }
    Ok(())
}

/// The same flow over streamable HTTP, in both protocols.
#[tokio::test]
async fn the_python_sdk_drives_a_flow_over_streamable_http_in_both_protocols() -> Result {
    let s = Setting::open().await?;
    let (_server, url) = s.http_server().await?;
    for (mode, pact) in [("2026-07-28", 0), ("legacy", 1)] {
        let printed = s.python_flow(&[mode, "http", &url]).await?;
        assert!(
            printed.contains(&format!("ok: resources/updated for pact://pacts/{pact}")),
            "{mode}: {printed}"
        );
    }
    Ok(())
}

/// Each role of the seeds as its own agent with its own server (a seeker that never registered
/// anything, a worker, two oracles, an arbitrator), driven by the SDK's `Client` in its default
/// mode and pinned to 2026-07-28, over stdio and HTTP: the seeker finds the worker, negotiates
/// through the relay and signs without any registration, the worker signs the same contract (one
/// answer shape on both sides), the pact is approved and rated; another is settled by the
/// arbitrator, a third by the parties; each agent sees only its role's tools, and subscribes, lists
/// and cancels a webhook of its own
/// (tests/python/mcp_roles.py).
#[tokio::test]
async fn every_role_of_the_seeds_drives_its_part_with_the_sdk_in_both_modes_over_stdio_and_http() -> Result {
    for mode in ["auto", "2026-07-28"] {
        for transport in ["stdio", "http"] {
            let s = Setting::open().await?;
            // The api server whose relay carries the seeker's and the worker's negotiation.
            let relay = TestApi::start(s.db.pool(), api::config(s.m.chain.anvil.chain_id())).await?;
            let mut env = s.shared_env();
            env.push(("HIRE_RELAY_URL", relay.base.clone()));
            env.push(("WEBHOOK_ALLOW_TARGETS", "127.0.0.1/32".to_owned()));
            let roles = [("seeker", 1), ("worker", 2), ("oracle", 4), ("oracle", 5), ("arbitrator", 3)];
            // Over stdio the SDK spawns each server with its key; over HTTP they run already
            // (kept alive by `_servers` until the run ends).
            let (_servers, targets, keys) = if transport == "stdio" {
                let mut keys = Vec::new();
                for ((_, n), var) in
                    roles.iter().zip(["SEEKER", "WORKER", "ORACLE_A", "ORACLE_B", "ARBITRATOR"])
                {
                    keys.push((format!("ROLE_KEY_{var}"), s.key(*n)?));
                }
                (Vec::new(), vec![binary().to_string_lossy().into_owned()], keys)
            } else {
                let (servers, urls) = s.role_servers(&env, &roles).await?;
                (servers, urls, Vec::new())
            };
            let oracles = format!("{},{}", s.m.cast.oracles[0], s.m.cast.oracles[1]);
            env.push(("FLOW_ORACLES", oracles));
            let args: Vec<&str> =
                [mode, transport].into_iter().chain(targets.iter().map(String::as_str)).collect();
            let env = env.into_iter().map(|(k, v)| (k.to_owned(), v)).chain(keys);
            let printed =
                Sdk::Mcp.run("mcp_roles.py", &args, env, Duration::from_secs(240), "roles complete").await?;
            assert!(
                printed.contains("ok: the worker's sign_contract answers the same fields"),
                "the unregistered seeker negotiated and both signed ({mode} over {transport}): {printed}"
            );
            assert!(
                printed.contains("ok: arbitrator lists its own subscription only"),
                "every role subscribed, listed and cancelled its webhook ({mode} over {transport}): {printed}"
            );
        }
    }
    Ok(())
}

/// Seed 000's example usage end to end through the SDK's `Client` in its default mode over stdio:
/// a seeker that never registered anything finds a logo designer under 10 USDC, negotiates seed
/// 004's five messages in USDC, signs, approves and rates it (tests/python/mcp_hire.py); the rating
/// is in AgentPact's index and is ERC-8004 feedback that ERC-8004's own SDK reads, whose payment
/// proof names the transaction that released the pact to the designer (tests/python/erc8004_sdk.py
/// grounded), and which our index grounds in that pact.
#[tokio::test]
async fn a_seeker_that_never_registered_hires_a_designer_in_usdc_and_its_rating_is_grounded_erc8004_feedback()
-> Result {
    let s = Setting::open().await?;
    let relay = TestApi::start(s.db.pool(), api::config(s.m.chain.anvil.chain_id())).await?;
    let key = |n| s.key(n);
    let mut env: Vec<(String, String)> = s.shared_env().into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    env.extend([
        ("HIRE_RELAY_URL".to_owned(), relay.base.clone()),
        ("FLOW_ORACLES".to_owned(), format!("{},{}", s.m.cast.oracles[0], s.m.cast.oracles[1])),
        ("ROLE_KEY_SEEKER".to_owned(), key(1)?),
        ("ROLE_KEY_DESIGNER".to_owned(), key(2)?),
        ("ROLE_KEY_ORACLE_A".to_owned(), key(4)?),
        ("ROLE_KEY_ORACLE_B".to_owned(), key(5)?),
    ]);
    let stdio = binary().to_string_lossy().into_owned();
    let printed =
        Sdk::Mcp.run("mcp_hire.py", &[&stdio], env, Duration::from_secs(240), "hire complete").await?;
    let hired = printed
        .lines()
        .find_map(|l| l.strip_prefix("hired "))
        .ok_or_else(|| process(format!("mcp_hire.py named no pact:\n{printed}")))?;
    let facts: Value = serde_json::from_str(hired).map_err(process)?;
    let pact: U256 = facts["pactId"].to_string().parse().map_err(process)?;
    let agent: U256 = facts["agentId"].as_str().unwrap_or_default().parse().map_err(process)?;
    let (seeker, designer) = (s.m.cast.buyer, s.m.cast.seller);

    // ERC-8004's SDK reads the feedback and checks its payment proof against the chain.
    let chain = &s.m.chain;
    let sdk_env = [
        ("RPC_URL", chain.anvil.endpoint()),
        ("CHAIN_ID", chain.anvil.chain_id().to_string()),
        ("IDENTITY", chain.erc8004.identity.to_string()),
        ("REPUTATION", chain.erc8004.reputation.to_string()),
        ("AGENT_PACT_ADDRESS", chain.deployment.agent_pact.to_string()),
        ("HIRED", hired.to_owned()),
    ];
    let read = Sdk::Agent0
        .run("erc8004_sdk.py", &["grounded"], sdk_env, Duration::from_secs(120), "sdk grounded complete")
        .await?;
    assert!(read.contains("released pact"), "{read}");

    // The pact was in USDC, and both the market's rating and the ERC-8004 feedback are in the index,
    // the latter grounded in that pact.
    index::caught_up(chain, s.db.pool()).await?;
    let reader = Reader::new(s.db.pool().clone());
    let chain_id = chain.anvil.chain_id();
    let held = reader.pact(chain_id, pact).await.map_err(process)?.ok_or_else(|| process("no pact"))?;
    assert_eq!((held.buyer, held.seller), (Some(seeker), Some(designer)));
    assert_eq!((held.currency.symbol.as_str(), held.payment), ("USDC", U256::from(5_000_000u64)));
    let rated = reader.reputation(chain_id, designer).await.map_err(process)?;
    assert_eq!((rated.as_seller.feedback_count, rated.as_seller.feedback_mean), (1, Some(5.0)));
    let feedback = reader.erc8004_feedback(chain_id, agent, 10).await.map_err(process)?;
    assert_eq!(feedback.len(), 1);
    assert_eq!((feedback[0].client, feedback[0].tagged_pact), (seeker, Some(pact)));
    assert_eq!(feedback[0].grounding_pacts, [pact], "grounded in the pact that paid the designer");
    Ok(())
}

/// Escrow v4's acceptance (#55): a pact of three stages in ETH and one in USDC driven to the end
/// through the SDK's `Client` in its default mode, again pinned to 2026-07-28 (both over stdio), and
/// again over streamable HTTP (five servers, one per agent) by a seeker, a worker, two oracles and an
/// arbitrator (tests/python/mcp_stages.py): stage 0 approved, stage 1
/// ruled 70/30, stage 2 settled at 40 %. Every credit is checked on chain to the base unit, and the
/// same figures are read back through GraphQL (each stage's `toSeller` and `toBuyer`) and, on the
/// default mode's pacts, on the dashboard's pact page in Chromium (screenshot).
#[tokio::test]
async fn three_stages_approved_ruled_and_settled_through_the_sdk_credit_to_the_base_unit_in_eth_and_usdc()
-> Result {
    let s = Setting::open().await?;
    let chain = &s.m.chain;
    let key = |n| s.key(n);
    let mut env: Vec<(String, String)> = s
        .shared_env()
        .into_iter()
        .filter(|(k, _)| *k != "FLOW_DEADLINE")
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    env.extend([
        ("FLOW_ORACLES".to_owned(), format!("{},{}", s.m.cast.oracles[0], s.m.cast.oracles[1])),
        ("FLOW_DEADLINE".to_owned(), (chain.now().await? + 7 * 86_400).to_string()),
        ("ROLE_KEY_SEEKER".to_owned(), key(1)?),
        ("ROLE_KEY_WORKER".to_owned(), key(2)?),
        ("ROLE_KEY_ARBITRATOR".to_owned(), key(3)?),
        ("ROLE_KEY_ORACLE_A".to_owned(), key(4)?),
        ("ROLE_KEY_ORACLE_B".to_owned(), key(5)?),
    ]);
    let (buyer, seller) = (s.m.cast.buyer, s.m.cast.seller);
    let usdc = *chain.usdc.address();
    let stdio = binary().to_string_lossy().into_owned();
    let graphql = TestApi::start(s.db.pool(), api::config(chain.anvil.chain_id())).await?;
    let browser = Browser::start(1440, 1000).await?;
    // Five `agentpact mcp --http` servers, one per agent's key and role, for the HTTP run.
    let roles = [("seeker", 1), ("worker", 2), ("oracle", 4), ("oracle", 5), ("arbitrator", 3)];
    let (_servers, urls) = s.role_servers(&s.shared_env(), &roles).await?;
    // Over stdio in the SDK's default mode (auto), then pinned to the newest protocol; then over
    // streamable HTTP in the default mode.
    let runs: [Vec<&str>; 3] = [
        vec![stdio.as_str()],
        vec![stdio.as_str(), "2026-07-28"],
        std::iter::once("http").chain(urls.iter().map(String::as_str)).collect(),
    ];
    for (run, args) in runs.iter().enumerate() {
        let mut before = Vec::new();
        for currency in [alloy::primitives::Address::ZERO, usdc] {
            before.push((
                chain.pact.balances(currency, buyer).call().await?,
                chain.pact.balances(currency, seller).call().await?,
            ));
        }
        let printed = Sdk::Mcp
            .run("mcp_stages.py", args, env.clone(), Duration::from_secs(300), "stages complete")
            .await?;
        let pacts: Vec<Value> = printed
            .lines()
            .filter_map(|l| l.strip_prefix("staged "))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert_eq!(pacts.len(), 2, "{printed}");

        index::caught_up(chain, s.db.pool()).await?;
        let amounts = [
            ["100000000000000000", "200000000000000007", "300000000000000003"],
            ["1000000", "2500007", "3000003"],
        ];
        for ((pact, amounts), (buyer0, seller0)) in pacts.iter().zip(amounts).zip(before) {
            let currency = if pact["currency"] == "ETH" { alloy::primitives::Address::ZERO } else { usdc };
            let a: Vec<U256> = amounts.iter().map(|x| x.parse().unwrap_or(U256::MAX)).collect();
            let stake = |x: U256| x / U256::from(10u8);
            let pot = |x: U256| x + stake(x) + stake(x);
            let to_seller = [
                a[0] + stake(a[0]),
                pot(a[1]) * U256::from(7_000u16) / U256::from(10_000u16),
                a[2] * U256::from(4_000u16) / U256::from(10_000u16) + stake(a[2]),
            ];
            let to_buyer: Vec<U256> = a.iter().zip(&to_seller).map(|(x, s)| pot(*x) - *s).collect();
            let context = format!("pact {pact}");
            let seller_got = chain.pact.balances(currency, seller).call().await? - seller0;
            let buyer_got = chain.pact.balances(currency, buyer).call().await? - buyer0;
            assert_eq!(
                seller_got,
                to_seller.iter().copied().sum::<U256>(),
                "{context}: the worker's credits"
            );
            assert_eq!(buyer_got, to_buyer.iter().copied().sum::<U256>(), "{context}: the seeker's credits");

            let read = graphql
            .data(
                "query($id: BigInt!) { pact(id: $id) { status ending milestones { ending toSeller toBuyer } } }",
                serde_json::json!({ "id": pact["pactId"] }),
            )
            .await?;
            let milestones = read["pact"]["milestones"].as_array().cloned().unwrap_or_default();
            let shown: Vec<(String, String, String)> = milestones
                .iter()
                .map(|m| {
                    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                    (text(&m["ending"]), text(&m["toSeller"]), text(&m["toBuyer"]))
                })
                .collect();
            let expected: Vec<(String, String, String)> = ["COMPLETED", "RULED", "SPLIT"]
                .iter()
                .zip(to_seller.iter().zip(&to_buyer))
                .map(|(e, (s, b))| ((*e).to_owned(), s.to_string(), b.to_string()))
                .collect();
            assert_eq!(shown, expected, "{context}: GraphQL's stages");
            assert_eq!(
                (&read["pact"]["status"], &read["pact"]["ending"]),
                (&Value::from("SPLIT"), &Value::from("MIXED"))
            );
            if run == 0 {
                dashboard_shows(&browser, &graphql, pact).await?;
            }
        }
    }
    Ok(())
}

/// The dashboard's page of `pact` (as `mcp_stages.py` printed it) in Chromium: a row per stage
/// with its status and what its end credited each side, the API's figures in the pact's
/// currency; a screenshot of it in `<target dir>/dashboard-screenshots/`.
async fn dashboard_shows(browser: &Browser, graphql: &TestApi, pact: &Value) -> Result {
    let id = pact["pactId"].as_str().map(str::to_owned).unwrap_or_else(|| pact["pactId"].to_string());
    let symbol = pact["currency"].as_str().unwrap_or_default();
    browser.open(&format!("{}/#/pacts/{id}", graphql.base)).await?;
    let rows = browser.stage_rows().await?;
    let read = graphql
        .data(
            "query($id: BigInt!) { pact(id: $id) { milestones { index status toSellerFormatted toBuyerFormatted }
                                                  division { stages sellerCreditFormatted buyerCreditFormatted } } }",
            serde_json::json!({ "id": pact["pactId"] }),
        )
        .await?;
    let shown = |formatted: &Value| format!("{} {symbol}", formatted.as_str().unwrap_or_default());
    let expected: Vec<Value> = read["pact"]["milestones"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            serde_json::json!({ "index": m["index"], "status": m["status"],
                                "toSeller": shown(&m["toSellerFormatted"]), "toBuyer": shown(&m["toBuyerFormatted"]) })
        })
        .collect();
    assert_eq!(expected.len(), 3, "{read}");
    assert_eq!(rows, Value::from(expected), "pact {id}: the dashboard's stage rows against the API's");
    // The settlement divided stage 3 alone (stages 1 and 2 were released before it): its credits
    // are stage 3's, on the page as in the API.
    let division = &read["pact"]["division"];
    let stage3 = &read["pact"]["milestones"][2];
    assert_eq!(division["stages"], serde_json::json!([2]), "{read}");
    assert_eq!(
        (&division["sellerCreditFormatted"], &division["buyerCreditFormatted"]),
        (&stage3["toSellerFormatted"], &stage3["toBuyerFormatted"])
    );
    let said =
        browser.run("return document.getElementById('division').textContent", serde_json::json!([])).await?;
    let credited = format!("the seller was credited {}", shown(&division["sellerCreditFormatted"]));
    assert!(
        said.as_str()
            .is_some_and(|t| t.contains("40% of the payment of stage 3 of 3") && t.contains(&credited)),
        "pact {id}: {said}"
    );
    browser
        .run(
            "document.querySelector('tr[data-stage]').scrollIntoView({ block: 'center' })",
            serde_json::json!([]),
        )
        .await?;
    browser.screenshot(&screenshots().join(format!("pact-stages-sdk-{symbol}-1440.png"))).await
}

#[tokio::test]
async fn the_inspector_cli_lists_tools_resources_templates_and_prompts() -> Result {
    let s = Setting::open().await?;
    let (_server, url) = s.http_server().await?;
    let inspect = |method: &'static str, strict: bool| {
        let mut command = tokio::process::Command::new(inspector()?);
        command.args(["--cli", &url, "--transport", "http", "--method", method]);
        if strict {
            command.arg("--strict");
        }
        Ok::<_, HarnessError>(command.kill_on_drop(true).output())
    };
    let mut listed = Vec::new();
    for (method, key) in [
        ("tools/list", "tools"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ] {
        let run = tokio::time::timeout(Duration::from_secs(60), inspect(method, method == "tools/list")?)
            .await
            .map_err(|_| process(format!("the inspector's {method} did not finish in 60 s")))?
            .map_err(process)?;
        let printed = said(&run, method, key)?;
        let json: Value = serde_json::from_slice(&run.stdout)
            .map_err(|e| process(format!("{method}: not JSON ({e}):\n{printed}")))?;
        let items = json[key].as_array().map(Vec::len).unwrap_or_default();
        listed.push((method, items));
    }
    assert_eq!(
        listed,
        [
            ("tools/list", every_tool()),
            ("resources/list", 8),
            ("resources/templates/list", 3),
            ("prompts/list", 4)
        ],
        "what the inspector saw"
    );

    // The same over stdio, the inspector spawning the binary.
    let mut command = tokio::process::Command::new(inspector()?);
    command.arg("--cli");
    for (k, v) in &s.env {
        command.args(["-e", &format!("{k}={v}")]);
    }
    command.arg(binary()).args(["mcp", "--method", "tools/list"]);
    let run = tokio::time::timeout(Duration::from_secs(60), command.kill_on_drop(true).output())
        .await
        .map_err(|_| process("the inspector over stdio did not finish in 60 s"))?
        .map_err(process)?;
    said(&run, "tools/list over stdio", "get-pact")?;
    Ok(())
}
