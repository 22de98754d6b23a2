//! Broker sinks end to end (docs/push.md §Streams): beside `agentpact push`, a consumer written
//! with the broker's own Python client (tests/python/stream_consumer.py) logs every message it
//! consumed to a file. Each consumer has names of its own (stream, subjects, keys), so tests run in
//! parallel against the one broker of the machine, and removes them when done.

use std::{
    path::PathBuf,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use agentpact_push::sink::Broker;
use serde::Deserialize;
use tokio::process::{Child, Command};

use crate::{HarnessError, python::Sdk, webhooks::read_log};

/// One message the consumer got.
#[derive(Debug, Clone, Deserialize)]
pub struct Consumed {
    /// The idempotency key the broker carried (`Nats-Msg-Id`, the entry's `key`).
    pub key: Option<String>,
    /// Its subject (routing key).
    pub subject: String,
    /// The JSON body.
    pub body: serde_json::Value,
}

/// A consumer of one sink's messages, running from [`Consumer::start`] until dropped or cleaned
/// up.
pub struct Consumer {
    broker: Broker,
    /// The sink's name, also its subjects' prefix.
    pub name: String,
    log: PathBuf,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

/// The broker `broker` of this machine (`host:port`).
pub fn server(broker: Broker) -> &'static str {
    match broker {
        Broker::Nats => "127.0.0.1:4222",
        Broker::Redis => "127.0.0.1:6379",
        Broker::Amqp => "127.0.0.1:5672",
    }
}

/// The URL of `broker` at `server` (`host:port`).
fn url(broker: Broker, server: &str) -> String {
    match broker {
        Broker::Nats => format!("nats://{server}"),
        Broker::Redis => format!("redis://{server}/0"),
        Broker::Amqp => format!("amqp://guest:guest@{server}/%2f"),
    }
}

impl Consumer {
    /// One for a new sink of `broker` with names nobody else uses; not consuming yet.
    pub fn new(broker: Broker) -> Result<Self, HarnessError> {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let name = format!("t{}x{nanos}", std::process::id());
        let dir = tempfile::tempdir().map_err(|e| HarnessError::Process(format!("a temp dir: {e}")))?;
        let log = dir.path().join("consumed.jsonl");
        Ok(Self { broker, name, log, child: None, _dir: dir })
    }

    /// Where the sink publishes on the broker: the JetStream stream, the Redis stream of
    /// `chain_id`, the exchange.
    fn place(&self, chain_id: u64) -> String {
        match self.broker {
            Broker::Nats => self.name.to_uppercase(),
            Broker::Redis => format!("{}:{chain_id}", self.name),
            Broker::Amqp => self.name.clone(),
        }
    }

    /// Whether the broker itself drops a message published again under a key it has (RabbitMQ
    /// does not: its consumers drop it by `message_id`).
    pub fn broker_drops_repeats(&self) -> bool {
        !matches!(self.broker, Broker::Amqp)
    }

    /// What `agentpact push` needs to publish to this sink through `server` (`host:port`, the
    /// broker's own by [`server`]), with `options` added (`mode=…`).
    pub fn env(&self, server: &str, options: &str) -> Vec<(&'static str, String)> {
        let own = match self.broker {
            Broker::Nats => format!("stream={}", self.place(0)),
            Broker::Redis => "maxlen=10000".to_owned(),
            Broker::Amqp => format!("exchange={}", self.place(0)),
        };
        let (url_var, options_var) = match self.broker {
            Broker::Nats => ("PUSH_NATS_URL", "PUSH_NATS_OPTIONS"),
            Broker::Redis => ("PUSH_REDIS_URL", "PUSH_REDIS_OPTIONS"),
            Broker::Amqp => ("PUSH_AMQP_URL", "PUSH_AMQP_OPTIONS"),
        };
        vec![
            (url_var, url(self.broker, server)),
            (options_var, format!("name={0},prefix={0},{own},{options}", self.name)),
        ]
    }

    /// Starts consuming what the sink publishes for `chain_id`; returns once subscribed.
    pub async fn start(&mut self, chain_id: u64) -> Result<(), HarnessError> {
        let broker_url = url(self.broker, server(self.broker));
        let log = self.log.display().to_string();
        let args = match self.broker {
            Broker::Nats => {
                vec!["nats".to_owned(), broker_url, self.place(chain_id), format!("{}.>", self.name), log]
            }
            Broker::Redis => vec!["redis".to_owned(), broker_url, self.place(chain_id), log],
            Broker::Amqp => {
                vec!["amqp".to_owned(), broker_url, self.place(chain_id), format!("{}.#", self.name), log]
            }
        };
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/stream_consumer.py");
        let child = Command::new(Sdk::Brokers.python()?)
            .arg(script)
            .args(args)
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HarnessError::Process(format!("starting the stream consumer: {e}")))?;
        self.child = Some(child);
        let mut ready = self.log.clone().into_os_string();
        ready.push(".ready");
        let ready = PathBuf::from(ready);
        crate::until(Duration::from_secs(60), "the consumer subscribed", || async { Ok(ready.exists()) })
            .await
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

    /// Stops consuming and removes what the sink made on the broker for `chain_id`.
    pub async fn clean_up(mut self, chain_id: u64) -> Result<(), HarnessError> {
        if let Some(mut child) = self.child.take() {
            child.kill().await.map_err(|e| HarnessError::Process(format!("stopping the consumer: {e}")))?;
        }
        let command = format!("{}-delete", self.broker.name());
        let args = [command, url(self.broker, server(self.broker)), self.place(chain_id)];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let none: [(&str, &str); 0] = [];
        Sdk::Brokers.run("stream_consumer.py", &args, none, Duration::from_secs(30), "deleted").await?;
        Ok(())
    }
}
