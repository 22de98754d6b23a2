//! `agentpact dev` started as a newcomer starts it: nothing configured (it starts its own
//! Postgres), in a fresh checkout (a git repository holding this repository's `.gitignore`), free
//! ports, and what it prints read back as a person would read it.

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
    /// The checkout it runs in.
    pub checkout: PathBuf,
    /// Where it wrote the deployments file (`31337.json`): its default, `deployments` in the
    /// checkout.
    pub deployments: PathBuf,
    /// Every line printed on stdout up to the MCP client configuration, in order.
    pub printed: Vec<String>,
    logs: JoinHandle<String>,
}

/// The line after which the banner prints the MCP client configuration (JSON).
const CONFIGURATION: &str = "MCP client configuration";

/// A fresh checkout as far as git can tell what is new in it: an empty repository holding this
/// repository's `.gitignore`, committed.
fn fresh_checkout(dir: &std::path::Path) -> Result<(), HarnessError> {
    std::fs::create_dir_all(dir).map_err(process)?;
    std::fs::copy(crate::docs::repository().join(".gitignore"), dir.join(".gitignore")).map_err(process)?;
    for args in [
        &["init", "-q"][..],
        &["add", ".gitignore"],
        &["-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-q", "-m", "clone"],
    ] {
        let done = std::process::Command::new("git").args(args).current_dir(dir).output().map_err(process)?;
        if !done.status.success() {
            return Err(process(format!("git {args:?}: {}", String::from_utf8_lossy(&done.stderr))));
        }
    }
    Ok(())
}

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

impl DevStack {
    /// Starts `agentpact dev` in a fresh checkout on free ports with a private Postgres, and waits
    /// (up to 120 s) until it has printed its banner.
    pub async fn start() -> Result<Self, HarnessError> {
        let (anvil_port, api_port) = (free_port()?, free_port()?);
        let checkout =
            std::env::temp_dir().join(format!("agentpact-dev-test-{}-{api_port}", std::process::id()));
        fresh_checkout(&checkout)?;
        let mut child = tokio::process::Command::new(binary())
            .args(["dev", "--anvil-port", &anvil_port.to_string(), "--api-port", &api_port.to_string()])
            .current_dir(&checkout)
            .env_remove("DATABASE_URL") // nothing configured: the stack starts its own Postgres
            .env_remove("DEPLOYMENTS_DIR")
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
        while !printed.last().is_some_and(|line: &String| line.starts_with(CONFIGURATION)) {
            let line = tokio::time::timeout(Duration::from_secs(120), stdout.next_line())
                .await
                .map_err(|_| process("agentpact dev printed no banner within 120 s"))?
                .map_err(process)?
                .ok_or_else(|| process(format!("agentpact dev exited before its banner: {printed:?}")))?;
            let word = |prefix: &str| {
                line.strip_prefix(prefix).and_then(|rest| rest.split_whitespace().next()).map(str::to_owned)
            };
            dashboard = dashboard.or(word("Dashboard: "));
            graphql = graphql.or(word("GraphQL: "));
            rpc = rpc.or(word("Chain:   "));
            database = database.or(word("Postgres: "));
            printed.push(line);
        }
        // Keep reading what it prints after: a closed pipe would make its next line fail (EPIPE)
        // and stop the stack mid-test.
        tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
        Ok(Self {
            process: child,
            dashboard: dashboard.unwrap_or_default(),
            graphql: graphql.unwrap_or_default(),
            rpc: rpc.unwrap_or_default(),
            database: database.unwrap_or_default(),
            api_port,
            deployments: checkout.join("deployments"),
            checkout,
            printed,
            logs,
        })
    }

    /// What git calls new or changed in the checkout (`git status --porcelain`, untracked files
    /// one by one): nothing, in a checkout whose `.gitignore` covers what the stack writes.
    pub fn new_in_checkout(&self) -> Result<String, HarnessError> {
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=all"])
            .current_dir(&self.checkout)
            .output()
            .map_err(process)?;
        Ok(String::from_utf8_lossy(&status.stdout).into_owned())
    }

    /// Ctrl-C, then waits (up to 30 s) for the stack to stop. An error, with its stderr, when it
    /// did not exit cleanly or logged a warning or an error after "stopping": an orderly stop is
    /// quiet.
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
        let _ = std::fs::remove_dir_all(&self.checkout);
        if !status.success() {
            return Err(process(format!("agentpact dev exited with {status:?} after Ctrl-C:\n{logs}")));
        }
        let (_, after) = logs
            .split_once("agentpact dev: stopping")
            .ok_or_else(|| process(format!("agentpact dev did not say it was stopping:\n{logs}")))?;
        let after = without_colours(after);
        let loud: Vec<&str> = after
            .lines()
            .filter(|line| {
                line.split_whitespace().nth(1).is_some_and(|level| ["WARN", "ERROR"].contains(&level))
            })
            .collect();
        if !loud.is_empty() {
            return Err(process(format!("agentpact dev's orderly stop logged:\n{}", loud.join("\n"))));
        }
        Ok(())
    }
}

/// `text` without its ANSI colour sequences (`ESC [ … m`): the level of a log line as a person
/// reads it.
fn without_colours(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
        } else {
            plain.push(c);
        }
    }
    plain
}
