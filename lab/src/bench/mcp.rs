//! `agentpact bench mcp`: what the MCP server itself costs. Each read tool is called through the
//! real stdio binary (`agentpact mcp`, as an agent runs it) and the same read is made directly
//! (the index through the read layer, the chain through the node); the difference is the server's
//! overhead: JSON-RPC over pipes, validation, formatting. Then one whole lifecycle (create →
//! accept → start → submit → score → finalize → approve → withdraw) through three agents' binaries,
//! with the indexer following the chain.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use agentpact_contracts::AgentPact;
use agentpact_indexer::Config;
use agentpact_read::{PactFilter, Reader};
use alloy::{
    hex,
    primitives::{Address, U256},
    providers::Provider,
};
use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{Percentiles, Workload, lab::Lab, ms};

/// Flags of `agentpact bench mcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct McpBenchArgs {
    #[command(flatten)]
    workload: Workload,
    /// Calls of each read tool.
    #[arg(long, default_value_t = 300)]
    calls: u32,
}

/// Runs the benchmark and prints a table and the lifecycle's wall time.
pub async fn run(args: McpBenchArgs) -> anyhow::Result<()> {
    let lab = Lab::open(&args.workload, "mcp", 1).await?;
    let indexer = lab.indexer(Config { poll_interval: Duration::from_millis(100), ..Config::default() });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let following = tokio::spawn(agentpact_indexer::run(indexer, async move {
        let _ = stopped.await;
    }));
    let reader = Reader::new(lab.pool.clone());
    let head = lab.provider.get_block_number().await?;
    crate::wait_until_indexed(&reader, lab.anvil.chain_id(), head, Duration::from_secs(120)).await?;

    let mut buyer = Agent::start(&lab, 1).await?;
    let reads: [(&str, Value); 5] = [
        ("get-my-address", json!({})),
        ("get-pact-count", json!({})),
        ("get-pact", json!({ "pactId": 0 })),
        ("list-pacts", json!({ "status": ["COMPLETED"], "first": 20 })),
        ("get-reputation", json!({ "address": lab.parties.sellers[0].to_string() })),
    ];
    println!(
        "| tool | through the binary p50 / p99 | the same read made directly p50 | server overhead (p50) |"
    );
    println!("|---|---|---|---|");
    for (tool, arguments) in reads {
        let mut through = Vec::new();
        let mut direct = Vec::new();
        for _ in 0..args.calls {
            let sent = Instant::now();
            buyer.call(tool, arguments.clone()).await?;
            through.push(sent.elapsed());
            let started = Instant::now();
            read_directly(&lab, &reader, tool).await?;
            direct.push(started.elapsed());
        }
        let through = Percentiles::of(&mut through).context("no calls")?;
        let direct = Percentiles::of(&mut direct).context("no calls")?;
        println!(
            "| {tool} | {} / {} | {} | {} |",
            ms(through.p50),
            ms(through.p99),
            ms(direct.p50),
            ms(through.p50.saturating_sub(direct.p50))
        );
    }

    let started = Instant::now();
    lifecycle(&lab, &mut buyer).await?;
    println!(
        "lifecycle create → accept → start → submit → score → finalize → approve → withdraw through three \
         stdio agents: {:.2?} (each write waits for its receipt and for the index to reach its block; 100 ms poll)",
        started.elapsed()
    );
    let _ = stop.send(());
    let _ = following.await;
    Ok(())
}

/// The read a tool makes, made directly.
async fn read_directly(lab: &Lab, reader: &Reader, tool: &str) -> anyhow::Result<()> {
    let chain_id = lab.anvil.chain_id();
    let pact = AgentPact::new(lab.deployment.agent_pact, lab.provider.clone());
    let me = lab.cast.buyers[0];
    match tool {
        "get-my-address" => {
            lab.provider.get_balance(me).await?;
            pact.balances(Address::ZERO, me).call().await?;
        }
        "get-pact-count" => {
            pact.pactCount().call().await?;
        }
        "get-pact" => {
            reader.pact(chain_id, U256::ZERO).await?;
            reader.indexer_status(chain_id).await?;
        }
        "list-pacts" => {
            let filter = PactFilter {
                statuses: vec![agentpact_contracts::PactStatus::Completed],
                ..PactFilter::default()
            };
            let page = agentpact_read::PageRequest { first: Some(20), ..Default::default() };
            reader.pacts(chain_id, &filter, Default::default(), &page).await?;
        }
        "get-reputation" => {
            reader.reputation(chain_id, lab.parties.sellers[0]).await?;
        }
        other => bail!("no direct read for {other}"),
    }
    Ok(())
}

/// A pact from creation to the seller's withdrawal, each step through its party's binary.
async fn lifecycle(lab: &Lab, buyer: &mut Agent) -> anyhow::Result<()> {
    let oracle_account = 13; // the cast's first oracle, registered by the generator
    let mut seller = Agent::start(lab, 5).await?;
    let mut oracle = Agent::start(lab, oracle_account).await?;
    let now = lab.provider.get_block_by_number(Default::default()).await?.map_or(0, |b| b.header.timestamp);
    let created = buyer
        .ok(
            "create-pact",
            json!({
                "role": "buyer", "specHash": "QmBench", "deadline": now + 86_400,
                "oracles": [lab.cast.oracles[0].to_string()], "oracleWeights": [100], "threshold": 50,
                "paymentEth": "0.01", "arbitrator": lab.cast.arbitrator.to_string(),
            }),
        )
        .await?;
    let id: u64 =
        created["pactId"].as_str().and_then(|s| s.parse().ok()).context("create-pact gave no pactId")?;
    let proof = format!("0x{}", "ab".repeat(32));
    seller.ok("accept-pact", json!({ "pactId": id })).await?;
    seller.ok("start-work", json!({ "pactId": id })).await?;
    seller.ok("submit-work", json!({ "pactId": id, "proofHash": proof })).await?;
    oracle.ok("submit-verification", json!({ "pactId": id, "score": 90, "proof": proof })).await?;
    oracle.ok("finalize-verification", json!({ "pactId": id })).await?;
    buyer.ok("approve-work", json!({ "pactId": id })).await?;
    seller.ok("withdraw", json!({})).await?;
    Ok(())
}

/// `agentpact mcp` for one of anvil's dev accounts, spoken to in JSON-RPC over its stdio.
struct Agent {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    next_id: u64,
}

impl Agent {
    /// Starts the binary as dev account `account` and completes the MCP handshake.
    async fn start(lab: &Lab, account: usize) -> anyhow::Result<Self> {
        let key = lab.anvil.keys().get(account).context("no such dev account")?;
        let mut child = lab
            .command("mcp")?
            .env("PRIVATE_KEY", format!("0x{}", hex::encode(key.to_bytes())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting agentpact mcp")?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?).lines();
        let mut agent = Self { _child: child, stdin, stdout, next_id: 1 };
        let hello = json!({ "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "bench", "version": "0" } });
        agent.request("initialize", hello).await?;
        agent.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await?;
        Ok(agent)
    }

    /// Calls `tool`, which must succeed; returns its structured result.
    async fn ok(&mut self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        let result = self.call(tool, arguments).await?;
        if result["isError"] == true {
            bail!("{tool} failed: {}", result["content"][0]["text"]);
        }
        Ok(result["structuredContent"].clone())
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        self.request("tools/call", json!({ "name": tool, "arguments": arguments })).await
    }

    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await?;
        let line = tokio::time::timeout(Duration::from_secs(60), self.stdout.next_line())
            .await
            .with_context(|| format!("no answer to {method} within 60 s"))??
            .context("agentpact mcp closed its stdout")?;
        let answer: Value = serde_json::from_str(&line).with_context(|| format!("not JSON-RPC: {line}"))?;
        if answer["id"] != id {
            bail!("answer out of order: {line}");
        }
        Ok(answer["result"].clone())
    }

    async fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        self.stdin.write_all(format!("{message}\n").as_bytes()).await?;
        Ok(())
    }
}
