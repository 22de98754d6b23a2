//! `agentpact bench` as a user runs it, at a size that takes seconds: `gen` fills a running anvil
//! with every kind of lifecycle, the same seed makes the same history, `index` checks the
//! indexed statuses against the plan before it reports, and `reputation` ranks a written market.
//! Figures are printed, never asserted.

use std::process::{Command, Output};

use agentpact_contracts::{AgentPact, PactStatus};
use agentpact_tests::{
    HarnessError, anvil,
    cli::{bench_gen, binary},
};
use alloy::{
    primitives::Address,
    providers::{Provider, ProviderBuilder},
};

type Result = std::result::Result<(), HarnessError>;

/// A generated pact as it ends: its status, its seller and its currency.
type PactState = (u8, Address, Address);

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

fn said(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// `agentpact bench gen` on a fresh anvil; returns what it printed and the pacts' states on chain.
async fn generate(seed: &str) -> std::result::Result<(String, Vec<PactState>), HarnessError> {
    let node = anvil::spawn(31_337)?;
    let (printed, deployment) = bench_gen(&node, 60, seed.parse().map_err(process)?)?;
    let provider = ProviderBuilder::new().connect_http(node.endpoint_url()).erased();
    let pact = AgentPact::new(deployment.agent_pact, provider.clone());
    let count: u64 = pact.pactCount().call().await?.to();
    let mut states = Vec::new();
    for id in 0..count {
        let p = pact.getPact(alloy::primitives::U256::from(id)).call().await?;
        states.push((p.status, p.seller, p.currency));
    }
    Ok((printed, states))
}

/// Runs `agentpact` with `args` and returns what it printed, failing unless it succeeded.
fn bench(args: &[&str]) -> std::result::Result<String, HarnessError> {
    let output = Command::new(binary()).args(args).output().map_err(process)?;
    let printed = said(&output);
    assert!(output.status.success(), "{printed}");
    Ok(printed)
}

/// "… N steps in M transactions …" from `gen`'s report.
fn steps_and_transactions(printed: &str) -> Option<(usize, usize)> {
    let (before, after) = printed.split_once(" steps in ")?;
    let steps = before.split_whitespace().last()?.parse().ok()?;
    let transactions = after.split_whitespace().next()?.parse().ok()?;
    Some((steps, transactions))
}

#[tokio::test]
async fn gen_makes_every_status_and_the_same_history_for_the_same_seed() -> Result {
    let (printed, states) = generate("7").await?;
    assert_eq!(states.len(), 60, "{printed}");
    let statuses: std::collections::BTreeSet<u8> = states.iter().map(|(s, _, _)| *s).collect();
    assert_eq!(
        statuses.len(),
        PactStatus::ALL.len(),
        "every status among 60 generated pacts: {statuses:?}\n{printed}"
    );
    // Every tenth pact in three stages (escrow v4), each ending SPLIT: two stages paid, one divided.
    assert!(printed.contains("Staged: 6"), "{printed}");
    for id in [9usize, 19, 29, 39, 49, 59] {
        assert_eq!(states[id].0, PactStatus::Split.code(), "staged pact {id}: {printed}");
    }
    // Every third pact in the test USDC the generator deployed and allowed, the rest in ETH.
    let in_usdc = states.iter().filter(|(_, _, currency)| !currency.is_zero()).count();
    assert_eq!(in_usdc, 20, "{printed}");
    assert!(printed.contains("in USDC: 20") && printed.contains("in ETH: 40"), "{printed}");
    // Many lifecycle steps per node transaction, made by many distinct party contracts.
    let (steps, transactions) = steps_and_transactions(&printed).unwrap_or_default();
    assert!(
        steps >= 60 * 5 && transactions * 10 <= steps,
        "{steps} steps in {transactions} transactions: {printed}"
    );
    let sellers: std::collections::BTreeSet<Address> = states.iter().map(|(_, seller, _)| *seller).collect();
    assert!(sellers.len() > 20, "60 pacts spread over many sellers, not a few accounts: {sellers:?}");
    let (_, again) = generate("7").await?;
    assert_eq!(again, states, "the same seed must give the same history");
    let (_, other) = generate("8").await?;
    assert_ne!(other, states, "another seed gives another history");
    Ok(())
}

#[tokio::test]
async fn index_bench_checks_the_index_against_the_generated_history() -> Result {
    let printed = bench(&["bench", "index", "--pacts", "80", "--samples", "3"])?;
    for expected in [
        "backfill (agentpact index, its own process):",
        "checked: pacts by status and volumes per currency in the index equal the plan (1 x the generated history)",
        "live (",
    ] {
        assert!(printed.contains(expected), "{expected:?} missing from:\n{printed}");
    }
    // The indexer process's own peak memory was read, not left unknown.
    let peak = printed.split("peak RSS ").nth(1).and_then(|rest| rest.split(" MiB").next());
    assert!(peak.is_some_and(|mib| mib.parse::<u32>().is_ok_and(|m| m > 0)), "no peak RSS in:\n{printed}");
    Ok(())
}

#[tokio::test]
async fn relay_bench_measures_latency_and_throughput() -> Result {
    let printed = bench(&["bench", "relay", "--messages", "20", "--conversations", "2", "--seconds", "1"])?;
    for expected in ["send → counterparty's subscription, 20 messages", "messages/s"] {
        assert!(printed.contains(expected), "{expected:?} missing from:\n{printed}");
    }
    Ok(())
}

#[tokio::test]
async fn api_bench_loads_the_server_from_another_process_over_an_amplified_history() -> Result {
    let printed =
        bench(&["bench", "api", "--pacts", "60", "--copies", "3", "--seconds", "1", "--clients", "1,2"])?;
    assert!(printed.contains("load from another process"), "{printed}");
    // The server was `agentpact serve` in a process of its own, whose peak memory was read.
    let peak = printed.split("server peak RSS ").nth(1).and_then(|rest| rest.split(" MiB").next());
    assert!(
        peak.is_some_and(|mib| mib.parse::<u32>().is_ok_and(|m| m > 0)),
        "no server peak RSS in:\n{printed}"
    );
    // The indexer process read three copies from the replay, and the index is checked against
    // three times the plan.
    for expected in ["amplified: 3 copies, 180 pacts", "equal the plan (3 x the generated history)"] {
        assert!(printed.contains(expected), "{expected:?} missing from:\n{printed}");
    }
    let rows: Vec<&str> =
        printed.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| query")).collect();
    assert_eq!(rows.len(), 9 * 2, "nine queries (three hostile) at two client counts:\n{printed}");
    for row in rows {
        // | name | clients | requests/s | p50 | p99 | errors |
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells.get(6), Some(&"0"), "every answer without errors: {row}");
        let per_second: f64 = cells.get(3).and_then(|c| c.parse().ok()).unwrap_or_default();
        assert!(per_second > 0.0, "answers came back: {row}");
    }
    Ok(())
}

#[tokio::test]
async fn reputation_bench_times_a_ranking_run_over_a_written_market() -> Result {
    let printed = bench(&["bench", "reputation", "--pacts", "2000", "--runs", "2"])?;
    // | pacts | agents | seeds | pairs written | nodes | edges | written in | run | ranking | peak RSS |
    let row = printed.lines().find(|l| l.starts_with("| 2000 |")).unwrap_or_default();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let number = |i: usize| cells.get(i).and_then(|c| c.parse::<u64>().ok()).unwrap_or_default();
    // 2,000 pacts between 200 agents, 3 seeds (1 %, at least three), nearly every agent in the graph.
    assert_eq!((number(2), number(3)), (200, 3), "{printed}");
    assert!(number(4) > 2_000 && number(5) > 150 && number(6) > 1_000, "pairs, nodes, edges: {printed}");
    assert!(cells.get(10).is_some_and(|c| c.ends_with(')') && c.contains(" MiB")), "peak RSS: {printed}");
    Ok(())
}
