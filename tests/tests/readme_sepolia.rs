//! README.md's "On Base Sepolia", followed as written: its `sh` blocks taken from the README (not
//! copied here) and run in order by bash, on an anvil started with `--chain-id 84532` standing in
//! for the network, then its agents' steps done through the official Python MCP SDK in its default
//! mode with the `mcpServers` entry `deploy` printed, from a working directory holding no
//! deployments file. It ends in a paid pact: the balances exact in test USDC, and the README's
//! GraphQL query answering the same amounts.
//!
//! What differs from a reader's machine, and nothing else: the first block (the reader's settings)
//! is written anew with the same names (anvil's keys, a database on the test's server, a temporary
//! deployments directory, a test USDC minted to the seeker and the worker in place of Circle's
//! faucet), and the environment names free ports (`API_ADDR`, `METRICS_ADDR`) and a private install
//! root (`CARGO_INSTALL_ROOT`, with the release profile unoptimized: the command is the README's, its
//! build is the test's).

use std::{collections::BTreeSet, process::Stdio, time::Duration};

use agentpact_contracts::TestToken;
use agentpact_lab::{local::with_database, usdc::deploy_test_usdc};
use agentpact_tests::{
    HarnessError, anvil, cli::free_port, docs, postgres::TestDatabase, python::Sdk, until,
};
use alloy::{
    hex,
    network::EthereumWallet,
    primitives::{Address, U256},
    providers::ProviderBuilder,
    signers::local::PrivateKeySigner,
};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

type Result = std::result::Result<(), HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// The names the README's settings block exports, in order.
fn exported(block: &str) -> Vec<String> {
    block
        .lines()
        .filter_map(|line| line.strip_prefix("export "))
        .flat_map(|rest| rest.split_whitespace().take_while(|word| !word.starts_with('#')))
        .filter_map(|assignment| assignment.split_once('=').map(|(name, _)| name.to_owned()))
        .collect()
}

/// Reads the bash run's output until `marker`; returns everything read. The run's end before the
/// marker is an error carrying what it printed.
async fn read_until(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    marker: &str,
) -> std::result::Result<String, HarnessError> {
    let mut seen = String::new();
    while let Some(line) = lines.next_line().await.map_err(process)? {
        if line == marker {
            return Ok(seen);
        }
        seen.push_str(&line);
        seen.push('\n');
    }
    Err(process(format!("the recipe stopped before {marker}:\n{seen}")))
}

/// The `mcpServers` entry `deploy` printed: the JSON object after its "MCP client configuration" line.
fn printed_entry(output: &str) -> std::result::Result<Value, HarnessError> {
    let after = output.split_once("MCP client configuration").map(|(_, rest)| rest).unwrap_or_default();
    let json = after.find('{').map(|at| &after[at..]).unwrap_or_default();
    serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .next()
        .ok_or_else(|| process(format!("deploy printed no client entry:\n{output}")))?
        .map_err(process)
}

fn env_names(entry: &Value) -> BTreeSet<String> {
    entry["mcpServers"]
        .as_object()
        .and_then(|servers| servers.values().next())
        .and_then(|server| server["env"].as_object())
        .map(|env| env.keys().cloned().collect())
        .unwrap_or_default()
}

/// What the recipe leaves running or written, undone when this is dropped (at the end, or when a
/// check panics): the bash run's process group (bash, and the `index` and `serve` it started in
/// the background), then the database `migrate` created.
struct Leftovers {
    group: Option<u32>,
    server_url: String,
    database: String,
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            let _ = std::process::Command::new("kill").args(["-TERM", "--", &format!("-{group}")]).status();
        }
        let drop = format!(r#"DROP DATABASE IF EXISTS "{}" WITH (FORCE)"#, self.database);
        let _ = std::process::Command::new("psql").args([&self.server_url, "-qc", &drop]).status();
    }
}

#[tokio::test]
async fn the_readme_base_sepolia_recipe_followed_as_written_ends_in_a_paid_pact() -> Result {
    let readme = docs::read("README.md")?;
    let recipe = docs::section(&readme, "## On Base Sepolia")?;
    let blocks = docs::code_blocks(&recipe, "sh");
    let (settings, steps) = blocks.split_first().ok_or_else(|| process("the recipe has no sh block"))?;

    // Base Sepolia's stand-in, its accounts as the four wallets and the arbitrator, and test USDC
    // in the seeker's and the worker's wallets (Circle's faucet on the real network).
    let node = anvil::spawn(84_532)?;
    let key = |n: usize| format!("0x{}", hex::encode(node.keys()[n].to_bytes()));
    let (seeker, worker, arbitrator) = (node.addresses()[1], node.addresses()[2], node.addresses()[4]);
    let faucet = EthereumWallet::from(PrivateKeySigner::from(node.keys()[5].clone()));
    let chain = ProviderBuilder::new().wallet(faucet).connect_http(node.endpoint_url());
    let usdc = deploy_test_usdc(&chain, &[seeker, worker]).await.map_err(process)?;

    // A server the reader may create databases on, and a database name nothing has created yet.
    let server = TestDatabase::create().await?;
    let database = format!("{}_recipe", server.name());
    let database_url = with_database(server.url(), &database);
    let scratch = tempfile::tempdir().map_err(process)?;
    let deployments = scratch.path().join("deployments");
    let elsewhere = scratch.path().join("an-agent's-own-directory");
    std::fs::create_dir_all(&elsewhere).map_err(process)?;

    let ours = [
        ("RPC_URL", node.endpoint()),
        ("CHAIN_ID", "84532".to_owned()),
        ("DATABASE_URL", database_url.clone()),
        ("DEPLOYMENTS_DIR", deployments.display().to_string()),
        ("USDC", usdc.to_string()),
        ("DEPLOYER_KEY", key(0)),
        ("SEEKER_KEY", key(1)),
        ("WORKER_KEY", key(2)),
        ("ORACLE_KEY", key(3)),
        ("ARBITRATOR", arbitrator.to_string()),
    ];
    let names: Vec<String> = ours.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(exported(settings), names, "the README's settings and the test's differ:\n{settings}");
    let ours_block: String = ours.iter().map(|(name, value)| format!("export {name}='{value}'\n")).collect();

    let api_port = free_port()?;
    let install_root = scratch.path().join("install");
    let path =
        format!("{}:{}", install_root.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let script = format!("set -euo pipefail\n{ours_block}{}\necho recipe: running\nwait\n", steps.join("\n"));
    let mut bash = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(docs::repository())
        .env("PATH", path)
        .env("CARGO_INSTALL_ROOT", &install_root)
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true")
        .env("API_ADDR", format!("127.0.0.1:{api_port}"))
        .env("METRICS_ADDR", format!("127.0.0.1:{}", free_port()?))
        .env_remove("PRIVATE_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(process)?;
    let leftovers = Leftovers { group: bash.id(), server_url: server.url().to_owned(), database };
    let stdout = bash.stdout.take().ok_or_else(|| process("no stdout"))?;
    let mut lines = BufReader::new(stdout).lines();
    let outcome = async {
        let printed = read_until(&mut lines, "recipe: running").await?;
        let entry = printed_entry(&printed)?;
        // What index and serve print from now on is read and let go, so no pipe fills under them.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

        // The README's entry names what deploy prints, plus the role and the key the reader adds.
        let documented: Value = docs::code_blocks(&recipe, "json")
            .first()
            .map(|block| serde_json::from_str(block))
            .ok_or_else(|| process("the recipe shows no client entry"))?
            .map_err(process)?;
        let mut expected = env_names(&entry);
        expected.extend(["MCP_ROLE".to_owned(), "PRIVATE_KEY".to_owned()]);
        assert_eq!(env_names(&documented), expected, "README's client entry and deploy's differ");

        // `serve` is ready once the index reaches the head.
        let base = format!("http://127.0.0.1:{api_port}/");
        let http = reqwest::Client::new();
        let ready = || async {
            Ok(http.get(format!("{base}readyz")).send().await.is_ok_and(|r| r.status().is_success()))
        };
        until(Duration::from_secs(120), "serve ready", ready).await?;

        let token = TestToken::new(usdc, &chain);
        let before = (token.balanceOf(seeker).call().await?, token.balanceOf(worker).call().await?);
        let env = [
            ("RECIPE_ENTRY", entry.to_string()),
            ("RECIPE_CWD", elsewhere.display().to_string()),
            ("DATABASE_URL", database_url.clone()),
            ("HIRE_RELAY_URL", base.clone()),
            ("SEEKER_KEY", key(1)),
            ("WORKER_KEY", key(2)),
            ("ORACLE_KEY", key(3)),
            ("ARBITRATOR", arbitrator.to_string()),
        ];
        let run = Sdk::Mcp.run("readme_sepolia.py", &[], env, Duration::from_secs(240), "recipe complete");
        let printed = run.await?;
        let paid = printed.lines().find_map(|l| l.strip_prefix("paid ")).unwrap_or_default();
        let paid: Value = serde_json::from_str(paid).map_err(process)?;
        assert_eq!(paid["pactId"], "0", "{printed}");

        // Exact in test USDC: the seeker 5 down, the worker 5 up, both stakes back.
        let five = U256::from(5_000_000u64);
        let after = (token.balanceOf(seeker).call().await?, token.balanceOf(worker).call().await?);
        assert_eq!(after, (before.0 - five, before.1 + five), "{printed}");
        let address_of = |who: &Value| who.as_str().and_then(|s| s.parse::<Address>().ok());
        assert_eq!((address_of(&paid["seeker"]), address_of(&paid["worker"])), (Some(seeker), Some(worker)));

        // The README's GraphQL query, as written, answers the same amounts.
        let query = docs::code_blocks(&recipe, "graphql");
        let query = query.first().ok_or_else(|| process("the recipe shows no GraphQL query"))?;
        let answer: Value = http
            .post(format!("{base}graphql"))
            .json(&serde_json::json!({ "query": query }))
            .send()
            .await
            .map_err(process)?
            .json()
            .await
            .map_err(process)?;
        let pact = &answer["data"]["pact"];
        assert_eq!(
            (&pact["status"], &pact["paymentFormatted"], &pact["currency"]["symbol"]),
            (&Value::from("COMPLETED"), &Value::from("5"), &Value::from("USDC")),
            "{answer}"
        );
        assert_eq!(
            (&pact["buyerStakeFormatted"], &pact["sellerStakeFormatted"]),
            (&"0.5".into(), &"0.5".into())
        );
        Ok::<_, HarnessError>(())
    }
    .await;

    drop(leftovers);
    let _ = bash.wait().await;
    assert!(!elsewhere.join("deployments").exists(), "the agents' directory was written to");
    outcome
}
