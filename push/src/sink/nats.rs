//! The NATS JetStream sink: each delivery is published to `<prefix>.<chainId>.<type>.<kind or
//! window>.<pactId>` on the sink's stream (created at the first connection if missing, over
//! `<prefix>.>`), with the idempotency key as `Nats-Msg-Id`; the stream's acknowledgement answers
//! the delivery, and within its duplicate window a repeat of a key is acknowledged and dropped.

use std::time::Duration;

use async_nats::jetstream::{self, message::PublishMessage, stream};

use super::{Publisher, Route, SinkConfig};

/// How long a stream this sink creates remembers the keys it stored, to drop a repeat (JetStream's
/// default is 2 minutes; a process killed and restarted, or a broker back after a while, repeats
/// later than that).
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(3600);

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The JetStream client.
pub struct Nats;

impl Publisher for Nats {
    type Connection = jetstream::Context;

    async fn connect(&self, sink: &SinkConfig) -> Result<jetstream::Context, String> {
        let client = async_nats::ConnectOptions::new()
            .name("agentpact-push")
            .connection_timeout(CONNECT_TIMEOUT)
            .connect(sink.url.as_str())
            .await
            .map_err(|e| format!("connecting to NATS failed: {e}"))?;
        let js = jetstream::new(client);
        let config = stream::Config {
            name: sink.own.clone(),
            subjects: vec![format!("{}.>", sink.prefix)],
            duplicate_window: DUPLICATE_WINDOW,
            storage: stream::StorageType::File,
            ..stream::Config::default()
        };
        js.get_or_create_stream(config).await.map_err(|e| {
            format!(
                "JetStream stream {} is missing and could not be created: {e} (another stream may hold the subjects {}.>)",
                sink.own, sink.prefix
            )
        })?;
        Ok(js)
    }

    async fn send(
        &self,
        sink: &SinkConfig,
        js: &mut jetstream::Context,
        key: &str,
        body: &str,
        route: &Route,
    ) -> Result<(), String> {
        let subject = format!("{}.{}", sink.prefix, route.words);
        let message = PublishMessage::build().payload(body.to_owned().into()).message_id(key);
        let ack =
            js.send_publish(subject, message).await.map_err(|e| format!("publishing to NATS failed: {e}"))?;
        ack.await.map_err(|e| format!("JetStream did not acknowledge the message: {e}"))?;
        Ok(())
    }
}
