//! Webhooks end to end: `agentpact push` as a process, and a receiving HTTP server nobody here
//! wrote the checks of (tests/python/webhook_receiver.py: eth_account and the standard library's
//! hmac verify each delivery) logging what it got to a file that outlives it.

use std::{path::PathBuf, time::Duration};

use agentpact_contracts::WebhookMode;
use agentpact_push::{Filter, Policy, Registration, Subscription, Targets, subscription::Proof};
use alloy::primitives::Address;
use serde::Deserialize;
use tokio::process::{Child, Command};

use crate::{
    HarnessError,
    cli::{binary, free_port, until_listening},
    python::Sdk,
};

/// The key `agentpact push` signs with in the tests (anvil's account 9), and its address.
pub const SIGNING_KEY: &str = "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6";

/// The address of [`SIGNING_KEY`].
pub fn signer() -> Address {
    SIGNING_KEY.parse::<alloy::signers::local::PrivateKeySigner>().map(|s| s.address()).unwrap_or_default()
}

/// A receiving server on a loopback port, restartable on the same port with the same log.
pub struct Receiver {
    /// Its port.
    pub port: u16,
    log: PathBuf,
    secret: Option<String>,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

/// One request the receiver got.
#[derive(Debug, Clone, Deserialize)]
pub struct Received {
    /// The `webhook-id` header (the idempotency key).
    pub id: String,
    /// The JSON body.
    pub body: serde_json::Value,
    /// Whether the EIP-191 signature recovered to [`signer`].
    pub signature_ok: bool,
    /// Whether the HMAC matched (`None` without a secret).
    pub hmac_ok: Option<bool>,
    /// Whether it was held unanswered (see [`Receiver::stall`]).
    pub stalled: bool,
}

impl Received {
    /// The body's `type`.
    pub fn kind(&self) -> &str {
        self.body["type"].as_str().unwrap_or_default()
    }

    /// The body's `subscriptionId`.
    pub fn subscription(&self) -> i64 {
        self.body["subscriptionId"].as_i64().unwrap_or_default()
    }
}

impl Receiver {
    /// Starts one checking HMACs under `secret` when given.
    pub async fn start(secret: Option<&str>) -> Result<Self, HarnessError> {
        let dir = tempfile::tempdir().map_err(|e| HarnessError::Process(format!("a temp dir: {e}")))?;
        let mut receiver = Self {
            port: free_port()?,
            log: dir.path().join("received.jsonl"),
            secret: secret.map(str::to_owned),
            child: None,
            _dir: dir,
        };
        receiver.restart().await?;
        Ok(receiver)
    }

    /// The URL to subscribe.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Starts it again after [`Receiver::stop`], on the same port, appending to the same log.
    pub async fn restart(&mut self) -> Result<(), HarnessError> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/webhook_receiver.py");
        let mut command = Command::new(Sdk::Agent0.python()?);
        command.arg(script).arg(self.port.to_string()).arg(&self.log).arg(signer().to_string());
        if let Some(secret) = &self.secret {
            command.arg(secret);
        }
        let child = command
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HarnessError::Process(format!("starting the webhook receiver: {e}")))?;
        self.child = Some(child);
        until_listening(self.port, "the webhook receiver").await
    }

    /// Kills it: the port refuses connections until [`Receiver::restart`].
    pub async fn stop(&mut self) -> Result<(), HarnessError> {
        if let Some(mut child) = self.child.take() {
            child.kill().await.map_err(|e| HarnessError::Process(format!("stopping the receiver: {e}")))?;
        }
        Ok(())
    }

    /// From now on, requests are recorded and then held unanswered until [`Receiver::release`].
    pub fn stall(&self) -> Result<(), HarnessError> {
        std::fs::write(self.stall_flag(), b"").map_err(|e| HarnessError::Process(format!("stall flag: {e}")))
    }

    /// Answers held requests again.
    pub fn release(&self) -> Result<(), HarnessError> {
        std::fs::remove_file(self.stall_flag()).map_err(|e| HarnessError::Process(format!("stall flag: {e}")))
    }

    fn stall_flag(&self) -> PathBuf {
        let mut flag = self.log.clone().into_os_string();
        flag.push(".stall");
        flag.into()
    }

    /// Everything received so far, in arrival order.
    pub fn received(&self) -> Result<Vec<Received>, HarnessError> {
        read_log(&self.log)
    }

    /// Waits (up to 60 s) until `holds` is true of what was received; returns it.
    pub async fn until(
        &self,
        what: &str,
        holds: impl Fn(&[Received]) -> bool,
    ) -> Result<Vec<Received>, HarnessError> {
        crate::until(Duration::from_secs(60), what, || async { Ok(holds(&self.received()?)) }).await?;
        self.received()
    }
}

/// The JSON lines a process (a receiver, a consumer) appended to `log` so far, in order; none while
/// it has written nothing. The process may be writing its last line as this reads: only lines it
/// has finished (ended by a newline) count.
pub fn read_log<T: serde::de::DeserializeOwned>(log: &std::path::Path) -> Result<Vec<T>, HarnessError> {
    let text = match std::fs::read_to_string(log) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(HarnessError::Process(format!("reading {}: {e}", log.display()))),
    };
    let finished = text.rfind('\n').map_or("", |end| &text[..end]);
    finished
        .lines()
        .map(|line| {
            serde_json::from_str(line).map_err(|e| HarnessError::Process(format!("log line {line:?}: {e}")))
        })
        .collect()
}

/// `agentpact push` running as a process until killed, stopped or dropped, what it prints kept
/// in a file.
pub struct Push {
    /// The port of its `/metrics`.
    pub metrics: u16,
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Push {
    /// Starts it on `chain_id` over the database at `database_url`, loopback targets allowed,
    /// fast retries (100 ms doubling up to 1 s), with `env` added (`FINALITY_DEPTH`, ...).
    pub async fn start(
        database_url: &str,
        chain_id: u64,
        env: &[(&str, String)],
    ) -> Result<Self, HarnessError> {
        let metrics = free_port()?;
        let dir = tempfile::tempdir().map_err(|e| HarnessError::Process(format!("a temp dir: {e}")))?;
        let log = dir.path().join("push.log");
        let printed =
            std::fs::File::create(&log).map_err(|e| HarnessError::Process(format!("the push log: {e}")))?;
        let also = printed.try_clone().map_err(|e| HarnessError::Process(format!("the push log: {e}")))?;
        let child = Command::new(binary())
            .arg("push")
            .env("DATABASE_URL", database_url)
            .env("CHAIN_ID", chain_id.to_string())
            .env("WEBHOOK_SIGNING_KEY", SIGNING_KEY)
            .env("WEBHOOK_ALLOW_TARGETS", "127.0.0.1/32")
            .env("WEBHOOK_FIRST_BACKOFF_MS", "100")
            .env("WEBHOOK_MAX_BACKOFF_SECS", "1")
            .env("WEBHOOK_POLL_MS", "50")
            .env("PUSH_METRICS_ADDR", format!("127.0.0.1:{metrics}"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .stdout(printed)
            .stderr(also)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HarnessError::Process(format!("starting agentpact push: {e}")))?;
        until_listening(metrics, "agentpact push's metrics").await?;
        Ok(Self { metrics, child, log, _dir: dir })
    }

    /// Stops it as an operator does (SIGTERM) and waits (up to 60 s) for it to exit; returns
    /// whether it exited with success, and everything it printed.
    pub async fn terminate(mut self) -> Result<(bool, String), HarnessError> {
        let pid =
            self.child.id().ok_or_else(|| HarnessError::Process("agentpact push already exited".into()))?;
        let sent = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .await
            .map_err(|e| HarnessError::Process(format!("kill -TERM: {e}")))?;
        if !sent.success() {
            return Err(HarnessError::Process(format!("kill -TERM {pid} failed")));
        }
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .map_err(|_| HarnessError::Process("agentpact push still runs 60 s after SIGTERM".into()))?
            .map_err(|e| HarnessError::Process(format!("waiting for agentpact push: {e}")))?;
        let printed = std::fs::read_to_string(&self.log)
            .map_err(|e| HarnessError::Process(format!("reading the push log: {e}")))?;
        Ok((status.success(), printed))
    }

    /// Kills it (SIGKILL): no chance to finish anything.
    pub async fn kill(mut self) -> Result<(), HarnessError> {
        self.child.kill().await.map_err(|e| HarnessError::Process(format!("killing agentpact push: {e}")))
    }
}

/// Registers, as the operator, a subscription of `owner` on `chain_id` to `url` with `filter`,
/// loopback allowed.
pub async fn subscribe(
    pool: &sqlx::PgPool,
    chain_id: u64,
    owner: Address,
    url: String,
    mode: WebhookMode,
    filter: Filter,
    hmac_secret: Option<&str>,
) -> Result<Subscription, HarnessError> {
    let policy = Policy { targets: loopback(), ..Policy::default() };
    let registration = Registration { chain_id, owner, url, mode, filter, issued_at: 0 };
    agentpact_push::subscription::register(pool, &policy, &registration, Proof::Operator, hmac_secret)
        .await
        .map_err(|e| HarnessError::Process(format!("registering a webhook: {e}")))
}

/// Targets with loopback (IPv4) opened.
pub fn loopback() -> Targets {
    Targets::parse("127.0.0.1/32").unwrap_or_default()
}

/// The idempotency keys of the pact events of `chain_id` in the journal, in chain order
/// (`pact`: only that pact's).
pub async fn journal_keys(
    pool: &sqlx::PgPool,
    chain_id: u64,
    pact: Option<alloy::primitives::U256>,
) -> Result<Vec<String>, HarnessError> {
    Ok(sqlx::query_scalar(
        "SELECT chain_id || ':0x' || encode(block_hash, 'hex') || ':' || log_index FROM events
         WHERE chain_id = $1 AND pact_id IS NOT NULL AND ($2::text IS NULL OR pact_id = $2::numeric)
         ORDER BY block_number, log_index",
    )
    .bind(i64::try_from(chain_id).unwrap_or(i64::MAX))
    .bind(pact.map(|p| p.to_string()))
    .fetch_all(pool)
    .await?)
}
