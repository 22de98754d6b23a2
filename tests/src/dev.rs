//! `agentpact dev` started as a newcomer starts it: nothing configured (it starts its own
//! Postgres), free ports, and what it prints read back as a person would read it.

use std::{path::PathBuf, process::Stdio, time::Duration};

use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, BufReader},
    process::Child,
    task::JoinHandle,
};

use crate::{
    HarnessError,
    cli::{binary, free_port},
};

/// A running dev stack and the URLs it printed.
pub struct DevStack {
    /// The `agentpact dev` process.
    pub process: Child,
    /// The first line's URL: the dashboard.
    pub dashboard: String,
    /// The GraphQL endpoint.
    pub graphql: String,
    /// The chain's JSON-RPC.
    pub rpc: String,
    /// The private Postgres.
    pub database: String,
    /// The API's port.
    pub api_port: u16,
    /// Where it wrote the deployments file (`31337.json`).
    pub deployments: PathBuf,
    /// Every line printed on stdout up to the URLs, in order.
    pub printed: Vec<String>,
    logs: JoinHandle<String>,
}

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

impl DevStack {
    /// Starts `agentpact dev` on free ports with a private Postgres, and waits (up to 120 s)
    /// until it has printed its URLs.
    pub async fn start() -> Result<Self, HarnessError> {
        let (anvil_port, api_port) = (free_port()?, free_port()?);
        let deployments =
            std::env::temp_dir().join(format!("agentpact-dev-test-{}-{api_port}", std::process::id()));
        let mut child = tokio::process::Command::new(binary())
            .args(["dev", "--anvil-port", &anvil_port.to_string(), "--api-port", &api_port.to_string()])
            .arg("--deployments-dir")
            .arg(&deployments)
            .env_remove("DATABASE_URL") // nothing configured: the stack starts its own Postgres
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(process)?;
        let mut stderr = child.stderr.take().ok_or_else(|| process("no stderr"))?;
        let logs = tokio::spawn(async move {
            let mut all = String::new();
            let _ = stderr.read_to_string(&mut all).await;
            all
        });
        let mut stdout = BufReader::new(child.stdout.take().ok_or_else(|| process("no stdout"))?).lines();
        let (mut dashboard, mut graphql, mut rpc, mut database) = (None, None, None, None);
        let mut printed = Vec::new();
        while graphql.is_none() || rpc.is_none() || database.is_none() || dashboard.is_none() {
            let line = tokio::time::timeout(Duration::from_secs(120), stdout.next_line())
                .await
                .map_err(|_| process("agentpact dev printed no URLs within 120 s"))?
                .map_err(process)?
                .ok_or_else(|| process("agentpact dev exited before printing its URLs"))?;
            let word = |prefix: &str| {
                line.strip_prefix(prefix).and_then(|rest| rest.split_whitespace().next()).map(str::to_owned)
            };
            dashboard = dashboard.or(word("Dashboard: "));
            graphql = graphql.or(word("GraphQL: "));
            rpc = rpc.or(word("Chain:   "));
            database = database.or(word("Postgres: "));
            printed.push(line);
        }
        // Keep reading what it prints after the URLs: a closed pipe would make its next line
        // fail (EPIPE) and stop the stack mid-test.
        tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
        Ok(Self {
            process: child,
            dashboard: dashboard.unwrap_or_default(),
            graphql: graphql.unwrap_or_default(),
            rpc: rpc.unwrap_or_default(),
            database: database.unwrap_or_default(),
            api_port,
            deployments,
            printed,
            logs,
        })
    }

    /// Ctrl-C, then waits (up to 30 s) for the stack to stop; its stderr is in the error when it
    /// did not exit cleanly.
    pub async fn stop(mut self) -> Result<(), HarnessError> {
        let killed = std::process::Command::new("kill")
            .args(["-INT", &self.process.id().unwrap_or_default().to_string()])
            .status()
            .map_err(process)?;
        if !killed.success() {
            return Err(process("kill -INT failed"));
        }
        let status = tokio::time::timeout(Duration::from_secs(30), self.process.wait())
            .await
            .map_err(|_| process("agentpact dev still runs 30 s after Ctrl-C"))?
            .map_err(process)?;
        let logs = self.logs.await.map_err(process)?;
        let _ = std::fs::remove_dir_all(&self.deployments);
        if !status.success() {
            return Err(process(format!("agentpact dev exited with {status:?} after Ctrl-C:\n{logs}")));
        }
        Ok(())
    }
}
