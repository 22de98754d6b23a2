//! `agentpact mcp` driven by clients nobody here wrote, installed by scripts/install-tools: the
//! official Python MCP SDK runs tests/python/mcp_flow.py over stdio and over streamable HTTP
//! (subscription, progress, elicitation accepted and declined, a template, a prompt, completion);
//! the MCP Inspector's CLI lists what the server offers and checks its tool schemas.

use std::{path::PathBuf, process::Output, time::Duration};

use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    cli::binary,
    index,
    mcp::{binary_env, dev_key},
    pacts::Market,
    postgres::TestDatabase,
};
use alloy::hex;
use serde_json::Value;

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// The venv's Python with the SDK, as scripts/install-tools installs it.
fn python() -> Result<PathBuf> {
    let path = std::env::var_os("MCP_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".cache/agentpact/mcp-python-2.3.0/bin/python")
    });
    if path.is_file() {
        Ok(path)
    } else {
        Err(process(format!(
            "the Python MCP SDK is not at {}: run scripts/install-tools (it installs it into a venv)",
            path.display()
        )))
    }
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

impl Setting {
    async fn open() -> Result<Self> {
        let m = Market::open().await?;
        let db = TestDatabase::create().await?;
        let indexer = index::follow(&m.chain, db.pool());
        let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
        env.extend([
            ("PRIVATE_KEY", format!("0x{}", hex::encode(dev_key(&m.chain, 1)?.to_bytes()))),
            ("CONFIRM_ABOVE_ETH", "0.3".to_owned()),
            ("INDEX_WAIT_MS", "5000".to_owned()),
            ("FLOW_ORACLE", m.cast.oracles[0].to_string()),
            ("FLOW_ARBITRATOR", m.cast.arbitrator.to_string()),
            ("FLOW_DEADLINE", (m.chain.now().await? + 86_400).to_string()),
        ]);
        Ok(Self { m, db, _indexer: indexer, env })
    }

    /// Runs tests/python/mcp_flow.py with `args`; its output must end with "flow complete".
    async fn python_flow(&self, args: &[&str]) -> Result<String> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/mcp_flow.py");
        let run = tokio::process::Command::new(python()?)
            .arg(script)
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .map_err(|_| process("the Python flow did not finish in 120 s"))?
            .map_err(process)?;
        said(&out, "the Python flow", "flow complete")
    }

    /// `agentpact mcp --http` on a free loopback port, answering once it listens.
    async fn http_server(&self) -> Result<(tokio::process::Child, String)> {
        let (child, at) = agentpact_tests::mcp_http::serve(&self.env).await?;
        Ok((child, format!("http://{at}/mcp")))
    }
}

impl Setting {
    /// Runs tests/python/mcp_connect.py: the SDK's `Client` in `mode` over `transport` to
    /// `target`; returns what it printed (`connected …` or `refused …`).
    async fn python_connect(&self, mode: &str, transport: &str, target: &str) -> Result<String> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/mcp_connect.py");
        let run = tokio::process::Command::new(python()?)
            .arg(script)
            .args([mode, transport, target])
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .map_err(|_| process("the Python client did not finish in 120 s"))?
            .map_err(process)?;
        said(&out, &format!("the Python SDK's Client in mode {mode} over {transport}"), "connected")
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
            let expected = format!("connected {version}: 34 tools; 0 pacts have been created");
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
/// arbitrator, a third by the parties; each agent sees only its role's tools
/// (tests/python/mcp_roles.py).
#[tokio::test]
async fn every_role_of_the_seeds_drives_its_part_with_the_sdk_in_both_modes_over_stdio_and_http() -> Result {
    for mode in ["auto", "2026-07-28"] {
        for transport in ["stdio", "http"] {
            let s = Setting::open().await?;
            // The api server whose relay carries the seeker's and the worker's negotiation.
            let relay = TestApi::start(s.db.pool(), api::config(s.m.chain.anvil.chain_id())).await?;
            let mut env: Vec<(&'static str, String)> = s
                .env
                .iter()
                .filter(|(k, _)| !matches!(*k, "PRIVATE_KEY" | "CONFIRM_ABOVE_ETH"))
                .cloned()
                .collect();
            env.push(("HIRE_RELAY_URL", relay.base.clone()));
            let key =
                |n| Ok::<_, HarnessError>(format!("0x{}", hex::encode(dev_key(&s.m.chain, n)?.to_bytes())));
            let roles = [("seeker", 1), ("worker", 2), ("oracle", 4), ("oracle", 5), ("arbitrator", 3)];
            let (mut servers, mut targets, mut keys) = (Vec::new(), Vec::new(), Vec::new());
            if transport == "stdio" {
                for ((_, n), var) in
                    roles.iter().zip(["SEEKER", "WORKER", "ORACLE_A", "ORACLE_B", "ARBITRATOR"])
                {
                    keys.push((format!("ROLE_KEY_{var}"), key(*n)?));
                }
                targets.push(binary().to_string_lossy().into_owned());
            } else {
                for (role, n) in roles {
                    let mut own = env.clone();
                    own.extend([("PRIVATE_KEY", key(n)?), ("MCP_ROLE", role.to_owned())]);
                    let (server, at) = agentpact_tests::mcp_http::serve(&own).await?;
                    servers.push(server);
                    targets.push(format!("http://{at}/mcp"));
                }
            }
            let oracles = format!("{},{}", s.m.cast.oracles[0], s.m.cast.oracles[1]);
            env.push(("FLOW_ORACLES", oracles));
            let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/mcp_roles.py");
            let run = tokio::process::Command::new(python()?)
                .arg(script)
                .args([mode, transport])
                .args(&targets)
                .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                .envs(keys)
                .kill_on_drop(true)
                .output();
            let out = tokio::time::timeout(Duration::from_secs(240), run)
                .await
                .map_err(|_| process("the roles script did not finish in 240 s"))?
                .map_err(process)?;
            let printed =
                said(&out, &format!("the roles in mode {mode} over {transport}"), "roles complete")?;
            assert!(
                printed.contains("ok: the worker's sign_contract answers the same fields"),
                "the unregistered seeker negotiated and both signed ({mode} over {transport}): {printed}"
            );
        }
    }
    Ok(())
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
        [("tools/list", 34), ("resources/list", 7), ("resources/templates/list", 3), ("prompts/list", 4)],
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
