//! A GraphQL fuzzer nobody here wrote, Schemathesis (installed by `scripts/install-tools`),
//! against the real API over HTTP, with a market in every status behind it: a bounded number of
//! generated queries per root field; none may get a 5xx, and none, being client input, may be
//! answered INTERNAL or without an error code (`tests/fuzz/hooks.py`).

use std::{path::PathBuf, time::Duration};

use agentpact_api::ServeConfig;

use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    index,
    pacts::Market,
    postgres::TestDatabase,
};

/// Generated cases per operation (root field); the seed makes a run repeatable.
const CASES_PER_OPERATION: &str = "100";
const SEED: &str = "16";

fn schemathesis() -> Result<PathBuf, HarnessError> {
    let path = std::env::var_os("SCHEMATHESIS_BIN").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".cache/agentpact/schemathesis-4.32.5/bin/st")
    });
    if path.is_file() {
        Ok(path)
    } else {
        Err(HarnessError::Process(format!(
            "Schemathesis is not at {}: run scripts/install-tools (it installs it into a venv)",
            path.display()
        )))
    }
}

#[tokio::test]
async fn a_graphql_fuzzer_gets_no_server_error_and_no_internal_error() -> Result<(), HarnessError> {
    let st = schemathesis()?;
    let m = Market::open().await?;
    m.every_status().await?;
    let db = TestDatabase::create().await?;
    index::indexer(&m.chain, db.pool(), index::small_ranges()).catch_up().await?;
    // The fuzzer asks `block: { number_gte }` for blocks the stopped indexer will never reach:
    // each is refused after this wait, which the fuzz is not about.
    let config =
        ServeConfig { block_wait: Duration::from_millis(20), ..api::config(m.chain.anvil.chain_id()) };
    let api = TestApi::start(db.pool(), config).await?;
    let hooks = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let out = tokio::process::Command::new(st)
        .args([
            "run",
            &format!("{}/graphql", api.base),
            "--max-examples",
            CASES_PER_OPERATION,
            "--seed",
            SEED,
        ])
        .args(["--workers", "2", "--request-timeout", "10", "--generation-allow-x00", "true"])
        .args([
            "--exclude-checks",
            "not_a_server_error,positive_data_acceptance,negative_data_rejection",
            "--no-color",
        ])
        .env("SCHEMATHESIS_HOOKS", "hooks")
        .env("PYTHONPATH", hooks)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{report}");
    assert!(out.status.success(), "Schemathesis found failures (report above)");
    // "1300 generated, 1300 passed": every generated case ran and passed, and there were some.
    let counts: Vec<u64> = report
        .lines()
        .find(|l| l.contains(" generated, "))
        .map(|l| l.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    assert!(
        counts.len() >= 2 && counts[0] >= 100 && counts[0] == counts[1],
        "Schemathesis ran too few cases or not all passed: {counts:?} (report above)"
    );
    Ok(())
}
