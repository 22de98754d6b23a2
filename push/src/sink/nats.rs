//! The NATS JetStream sink: each delivery is published to `<prefix>.<chainId>.<type>.<kind or
//! window>.<pactId>` on the sink's stream (created at the first connection if missing, over
//! `<prefix>.>`), with the idempotency key as `Nats-Msg-Id`; the stream's acknowledgement answers
//! the delivery, and within its duplicate window a repeat of a key is acknowledged and dropped.

use std::time::Duration;

use async_nats::jetstream::{self, message::PublishMessage, stream};
use tokio::sync::Mutex;

use super::{Route, SinkConfig};

/// How long a stream this sink creates remembers the keys it stored, to drop a repeat (JetStream's
/// default is 2 minutes; a process killed and restarted, or a broker back after a while, repeats
/// later than that).
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(3600);

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A JetStream sink, connected at its first publish and again after a failure.
pub struct Nats {
    config: SinkConfig,
    context: Mutex<Option<jetstream::Context>>,
}

impl Nats {
    /// Not connected yet.
    pub fn new(config: SinkConfig) -> Self {
        Self { config, context: Mutex::new(None) }
    }

    /// Publishes `body` and waits for the stream's acknowledgement. On failure the connection is
    /// dropped, and the next attempt connects anew.
    pub async fn publish(&self, key: &str, body: &str, route: &Route) -> Result<(), String> {
        let mut context = self.context.lock().await;
        let result = self.publish_on(&mut context, key, body, route).await;
        if result.is_err() {
            *context = None;
        }
        result.map_err(|e| self.config.redact(&e))
    }

    async fn publish_on(
        &self,
        context: &mut Option<jetstream::Context>,
        key: &str,
        body: &str,
        route: &Route,
    ) -> Result<(), String> {
        let js = match context {
            Some(js) => js,
            None => context.insert(self.connect().await?),
        };
        let subject = format!("{}.{}", self.config.prefix, route.words);
        let message = PublishMessage::build().payload(body.to_owned().into()).message_id(key);
        let ack =
            js.send_publish(subject, message).await.map_err(|e| format!("publishing to NATS failed: {e}"))?;
        ack.await.map_err(|e| format!("JetStream did not acknowledge the message: {e}"))?;
        Ok(())
    }

    async fn connect(&self) -> Result<jetstream::Context, String> {
        let client = async_nats::ConnectOptions::new()
            .name("agentpact-push")
            .connection_timeout(CONNECT_TIMEOUT)
            .connect(self.config.url.as_str())
            .await
            .map_err(|e| format!("connecting to NATS failed: {e}"))?;
        let js = jetstream::new(client);
        let config = stream::Config {
            name: self.config.destination.clone(),
            subjects: vec![format!("{}.>", self.config.prefix)],
            duplicate_window: DUPLICATE_WINDOW,
            storage: stream::StorageType::File,
            ..stream::Config::default()
        };
        js.get_or_create_stream(config).await.map_err(|e| {
            format!(
                "JetStream stream {} is missing and could not be created: {e} (another stream may hold the subjects {}.>)",
                self.config.destination, self.config.prefix
            )
        })?;
        Ok(js)
    }
}
