//! HTTPS endpoints (issue #19): anvil behind a TLS terminator whose test CA the commands trust
//! through `SSL_CERT_FILE`, as an operator's private CA would be. A good certificate works; an
//! expired one, one for another host, and one from an authority nobody trusts stop every command
//! that takes `RPC_URL` (deploy, index, mcp, bench gen) at once, each saying why.

use std::time::Duration;

use agentpact_tests::{
    HarnessError,
    cli::run_within,
    mcp::{binary_env, dev_key},
    pacts::Market,
    postgres::TestDatabase,
    tls_proxy::{ServerCert, TestCa, TlsProxy},
};
use alloy::hex;

type Result = std::result::Result<(), HarnessError>;

#[tokio::test]
async fn every_command_says_why_the_nodes_certificate_is_refused() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let dir = std::env::temp_dir().join(format!("agentpact-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::Process(e.to_string()))?;
    let ca = TestCa::new(&dir)?;
    let endpoint = m.chain.anvil.endpoint_url();
    let upstream = format!("127.0.0.1:{}", endpoint.port().unwrap_or(8545));
    let key = hex::encode(dev_key(&m.chain, 1)?.to_bytes());
    let deployments = dir.join("deployments").display().to_string();
    let commands: [(&str, Vec<&str>); 4] = [
        ("deploy", vec!["deploy", "--deployments-dir", &deployments, "--force"]),
        ("index", vec!["index", "--metrics-addr", "127.0.0.1:0"]),
        ("mcp", vec!["mcp"]),
        ("bench gen", vec!["bench", "gen", "--pacts", "1", "--deployments-dir", &deployments]),
    ];
    let env = |url: &str, trusted: bool| {
        let mut env = binary_env(&m.chain, url, db.url());
        env.extend([("PRIVATE_KEY", key.clone()), ("RPC_TIMEOUT_SECS", "5".to_owned())]);
        if trusted {
            env.push(("SSL_CERT_FILE", ca.file().display().to_string()));
        }
        env
    };

    // A good certificate from the trusted CA: HTTPS works.
    let good = TlsProxy::start(upstream.clone(), &ca, ServerCert::Good).await?;
    let deployed = run_within(&commands[0].1, env(good.url(), true), Duration::from_secs(60)).await?;
    assert!(deployed.success, "deploy over HTTPS with the CA trusted: {}", deployed.stderr);

    let cases = [
        (ServerCert::Expired, true, "certificate has expired"),
        (ServerCert::OtherHost, true, "hostname mismatch"),
        (ServerCert::Good, false, "unable to get local issuer certificate"),
    ];
    for (kind, trusted, reason) in cases {
        let proxy = TlsProxy::start(upstream.clone(), &ca, kind).await?;
        for (name, args) in &commands {
            let run = run_within(args, env(proxy.url(), trusted), Duration::from_secs(30)).await?;
            assert!(!run.success, "agentpact {name} accepted a {kind:?} certificate (CA trusted: {trusted})");
            assert!(
                run.stderr.contains(reason),
                "agentpact {name}, {kind:?}: no {reason:?} in: {}",
                run.stderr
            );
            assert!(!run.stderr.contains(&key), "agentpact {name} printed the key");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
