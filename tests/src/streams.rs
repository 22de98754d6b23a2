//! Broker sinks end to end (docs/push.md §Streams): beside `agentpact push`, a consumer written
//! with the broker's own Python client (tests/python/stream_consumer.py) logs every message it
//! consumed to a file. Each consumer has names of its own (stream, subjects), so tests run in
//! parallel against the one broker of the machine, and removes them when done.

use std::{
    path::PathBuf,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use agentpact_push::sink::Broker;
use serde::Deserialize;
use tokio::process::{Child, Command};

use crate::{HarnessError, python::Sdk, webhooks::read_log};

/// The NATS server (with JetStream) this machine runs.
pub const NATS_URL: &str = "nats://127.0.0.1:4222";

/// One message the consumer got.
#[derive(Debug, Clone, Deserialize)]
pub struct Consumed {
    /// The idempotency key the broker carried (`Nats-Msg-Id`).
    pub key: Option<String>,
    /// Its subject.
    pub subject: String,
    /// The JSON body.
    pub body: serde_json::Value,
    /// The broker's sequence number of it.
    pub seq: u64,
}

/// A consumer of one sink's messages, running until dropped or cleaned up.
pub struct Consumer {
    broker: Broker,
    /// The sink's name, also its subjects' prefix.
    pub name: String,
    log: PathBuf,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl Consumer {
    /// Starts one for a new sink of `broker` with names nobody else uses.
    pub async fn start(broker: Broker) -> Result<Self, HarnessError> {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let name = format!("t{}x{nanos}", std::process::id());
        let dir = tempfile::tempdir().map_err(|e| HarnessError::Process(format!("a temp dir: {e}")))?;
        let log = dir.path().join("consumed.jsonl");
        let mut consumer = Self { broker, name, log, child: None, _dir: dir };
        let args = match broker {
            Broker::Nats => vec![
                "nats".to_owned(),
                NATS_URL.to_owned(),
                consumer.stream(),
                format!("{}.>", consumer.name),
                consumer.log.display().to_string(),
            ],
        };
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/stream_consumer.py");
        let child = Command::new(Sdk::Brokers.python()?)
            .arg(script)
            .args(args)
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HarnessError::Process(format!("starting the stream consumer: {e}")))?;
        consumer.child = Some(child);
        Ok(consumer)
    }

    /// The JetStream stream.
    fn stream(&self) -> String {
        self.name.to_uppercase()
    }

    /// What `agentpact push` needs to publish to this sink, with `options` added (`mode=…`).
    pub fn env(&self, options: &str) -> Vec<(&'static str, String)> {
        match self.broker {
            Broker::Nats => vec![
                ("PUSH_NATS_URL", NATS_URL.to_owned()),
                (
                    "PUSH_NATS_OPTIONS",
                    format!("name={0},prefix={0},stream={1},{options}", self.name, self.stream()),
                ),
            ],
        }
    }

    /// Everything consumed so far, in order.
    pub fn consumed(&self) -> Result<Vec<Consumed>, HarnessError> {
        read_log(&self.log)
    }

    /// Waits (up to 60 s) until `holds` is true of what was consumed; returns it.
    pub async fn until(
        &self,
        what: &str,
        holds: impl Fn(&[Consumed]) -> bool,
    ) -> Result<Vec<Consumed>, HarnessError> {
        crate::until(Duration::from_secs(60), what, || async { Ok(holds(&self.consumed()?)) }).await?;
        self.consumed()
    }

    /// Stops consuming and removes what the sink made on the broker.
    pub async fn clean_up(mut self) -> Result<(), HarnessError> {
        if let Some(mut child) = self.child.take() {
            child.kill().await.map_err(|e| HarnessError::Process(format!("stopping the consumer: {e}")))?;
        }
        let args = match self.broker {
            Broker::Nats => ["nats-delete".to_owned(), NATS_URL.to_owned(), self.stream()],
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let none: [(&str, &str); 0] = [];
        Sdk::Brokers.run("stream_consumer.py", &args, none, Duration::from_secs(30), "deleted").await?;
        Ok(())
    }
}
