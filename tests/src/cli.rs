//! The `agentpact` binary as a user runs it: where cargo built it, and a free port to give it.

use std::path::PathBuf;

use crate::HarnessError;

/// The `agentpact` binary cargo built next to this test (`cargo nextest run --workspace` builds it).
pub fn binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().and_then(|deps| deps.parent()).map(PathBuf::from).unwrap_or_default();
    let binary = dir.join("agentpact");
    assert!(binary.is_file(), "{} is missing: build it with `cargo build -p agentpact`", binary.display());
    binary
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> Result<u16, HarnessError> {
    agentpact_lab::local::free_port().map_err(HarnessError::Process)
}

/// Waits (up to 60 s: a debug build starting on a loaded machine is slow) until a server listens on
/// loopback `port`; `what` names it in the error.
pub async fn until_listening(port: u16, what: &str) -> Result<(), HarnessError> {
    let listening = || async { Ok(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()) };
    crate::until(std::time::Duration::from_secs(60), &format!("{what} listening on port {port}"), listening)
        .await
}

/// What a finished run of `agentpact` printed on stderr, and whether it succeeded.
pub struct Finished {
    /// Exit status zero.
    pub success: bool,
    /// Everything it printed on stderr.
    pub stderr: String,
}

/// Runs `agentpact <args>` with `env` added and no stdin, and waits for it at most `limit`: a
/// command still running then is a failure naming it.
pub async fn run_within(
    args: &[&str],
    env: Vec<(&'static str, String)>,
    limit: std::time::Duration,
) -> Result<Finished, HarnessError> {
    let run = tokio::process::Command::new(binary())
        .args(args)
        .envs(env)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(limit, run)
        .await
        .map_err(|_| {
            HarnessError::Process(format!("agentpact {} still runs after {limit:?}", args.join(" ")))
        })?
        .map_err(|e| HarnessError::Process(format!("running agentpact: {e}")))?;
    Ok(Finished {
        success: output.status.success(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// `agentpact bench gen --pacts <pacts> --seed <seed>` into `node` (a fresh anvil with 20 accounts
/// or more): what it printed, and the deployment it made.
pub fn bench_gen(
    node: &alloy::node_bindings::AnvilInstance,
    pacts: usize,
    seed: u64,
) -> Result<(String, agentpact_contracts::Deployment), HarnessError> {
    let failed = |e: &dyn std::fmt::Display| HarnessError::Process(format!("bench gen: {e}"));
    let dir =
        std::env::temp_dir().join(format!("agentpact-bench-{}-{seed}-{}", std::process::id(), node.port()));
    let output = std::process::Command::new(binary())
        .args(["bench", "gen", "--pacts", &pacts.to_string(), "--seed", &seed.to_string(), "--rpc-url"])
        .arg(node.endpoint())
        .arg("--deployments-dir")
        .arg(&dir)
        .output()
        .map_err(|e| failed(&e))?;
    let printed =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        return Err(failed(&printed));
    }
    let file =
        std::fs::read_to_string(dir.join(format!("{}.json", node.chain_id()))).map_err(|e| failed(&e))?;
    let deployment = serde_json::from_str(&file).map_err(|e| failed(&e))?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok((printed, deployment))
}
