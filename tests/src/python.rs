//! Clients nobody here wrote, in Python: each SDK lives in its own venv outside the clone, where
//! scripts/install-tools installs it (scripts/lib/env.sh names the paths), and tests run the
//! scripts under tests/python with it.

use std::{ffi::OsStr, path::PathBuf, time::Duration};

use crate::HarnessError;

/// An outside Python SDK, each in its own venv.
#[derive(Debug, Clone, Copy)]
pub enum Sdk {
    /// The official MCP SDK (PyPI `mcp`): `MCP_PYTHON`.
    Mcp,
    /// ERC-8004's SDK (PyPI `agent0-sdk`): `AGENT0_PYTHON`.
    Agent0,
    /// The brokers' own clients (PyPI `nats-py`, `redis`, `pika`): `BROKERS_PYTHON`.
    Brokers,
}

impl Sdk {
    /// The venv's Python with this SDK; an error saying how to install it when it is missing.
    pub fn python(self) -> Result<PathBuf, HarnessError> {
        let (variable, default, name) = match self {
            Self::Mcp => ("MCP_PYTHON", "mcp-python-2.3.0", "the Python MCP SDK"),
            Self::Agent0 => ("AGENT0_PYTHON", "agent0-sdk-1.7.1", "agent0-sdk"),
            Self::Brokers => (
                "BROKERS_PYTHON",
                "brokers-nats-py-2.16.0-redis-8.1.0-pika-1.4.4",
                "the brokers' Python clients",
            ),
        };
        let path = std::env::var_os(variable).map(PathBuf::from).unwrap_or_else(|| {
            let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
            home.join(".cache/agentpact").join(default).join("bin/python")
        });
        if path.is_file() {
            Ok(path)
        } else {
            Err(HarnessError::Process(format!(
                "{name} is not at {}: run scripts/install-tools (it installs it into a venv)",
                path.display()
            )))
        }
    }

    /// Runs tests/python/`script` with `args` and `env` under this SDK's Python, for at most
    /// `limit` (a bound for a hung run). Returns what it printed on stdout when it exited 0 and
    /// printed `ending`; otherwise an error with everything it printed.
    pub async fn run<K, V>(
        self,
        script: &str,
        args: &[&str],
        env: impl IntoIterator<Item = (K, V)>,
        limit: Duration,
        ending: &str,
    ) -> Result<String, HarnessError>
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python").join(script);
        let run = tokio::process::Command::new(self.python()?)
            .arg(path)
            .args(args)
            .envs(env)
            .kill_on_drop(true)
            .output();
        let what = format!("{script} {}", args.join(" "));
        let out = tokio::time::timeout(limit, run)
            .await
            .map_err(|_| HarnessError::Process(format!("{what} did not finish in {limit:?}")))?
            .map_err(|e| HarnessError::Process(format!("{what} could not run: {e}")))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() && stdout.contains(ending) {
            Ok(stdout)
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            Err(HarnessError::Process(format!("{what} failed ({:?}):\n{stdout}\n{stderr}", out.status)))
        }
    }
}

/// Calls `tool` of the real `agentpact mcp` binary (built by `cargo build -p agentpact`) through
/// the official Python SDK's `Client` in its default mode (tests/python/mcp_call.py), the server
/// started with `env`; returns what the SDK received: `isError`, `text` and `structured`.
pub async fn mcp_call<K, V>(
    env: impl IntoIterator<Item = (K, V)>,
    tool: &str,
    args: &serde_json::Value,
) -> Result<serde_json::Value, HarnessError>
where
    K: AsRef<OsStr>,
    V: AsRef<OsStr>,
{
    let binary = crate::cli::binary().to_string_lossy().into_owned();
    let limit = Duration::from_secs(120);
    let printed =
        Sdk::Mcp.run("mcp_call.py", &[&binary, tool, &args.to_string()], env, limit, "answer ").await?;
    let line = printed.lines().find_map(|l| l.strip_prefix("answer ")).unwrap_or_default();
    serde_json::from_str(line).map_err(|e| HarnessError::Process(format!("{tool}: {e}: {printed}")))
}
