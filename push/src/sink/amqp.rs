//! The RabbitMQ (AMQP 0-9-1) sink: each delivery is published to the sink's topic exchange
//! (durable, declared at the first connection if missing) with the routing key
//! `<prefix>.<chainId>.<type>.<kind or window>.<pactId>`, persistent (delivery mode 2), as
//! `application/json`, with the idempotency key as `message_id`. The channel is in confirm mode:
//! the broker's publisher confirm answers the delivery, a nack fails it. RabbitMQ keeps no record
//! of message ids: a repeat reaches the queues again, and consumers drop it by `message_id`.

use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties, ExchangeKind,
    options::{BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions},
    types::FieldTable,
};

use super::{Publisher, Route, SinkConfig};

/// A message the broker keeps on disk (AMQP's delivery mode 2).
const PERSISTENT: u8 = 2;

/// The AMQP client.
pub struct Amqp;

impl Publisher for Amqp {
    /// The connection (its channel closes with it) and the channel in confirm mode.
    type Connection = (Connection, Channel);

    async fn connect(&self, sink: &SinkConfig) -> Result<(Connection, Channel), String> {
        let failed = |what: &str, e: lapin::Error| format!("{what} on RabbitMQ failed: {e}");
        let connection = Connection::connect(&sink.url, ConnectionProperties::default())
            .await
            .map_err(|e| failed("connecting", e))?;
        let channel = connection.create_channel().await.map_err(|e| failed("opening a channel", e))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| failed("asking for publisher confirms", e))?;
        let durable = ExchangeDeclareOptions { durable: true, ..ExchangeDeclareOptions::default() };
        channel
            .exchange_declare(sink.own.as_str().into(), ExchangeKind::Topic, durable, FieldTable::default())
            .await
            .map_err(|e| {
                failed(&format!("declaring the durable topic exchange {} (an exchange of that name and another kind?)", sink.own), e)
            })?;
        Ok((connection, channel))
    }

    async fn send(
        &self,
        sink: &SinkConfig,
        (_, channel): &mut (Connection, Channel),
        key: &str,
        body: &str,
        route: &Route,
    ) -> Result<(), String> {
        let properties = BasicProperties::default()
            .with_delivery_mode(PERSISTENT)
            .with_content_type("application/json".into())
            .with_message_id(key.into());
        let routing_key = format!("{}.{}", sink.prefix, route.words);
        let confirmation = channel
            .basic_publish(
                sink.own.as_str().into(),
                routing_key.as_str().into(),
                BasicPublishOptions::default(),
                body.as_bytes(),
                properties,
            )
            .await
            .map_err(|e| format!("publishing to RabbitMQ failed: {e}"))?
            .await
            .map_err(|e| format!("RabbitMQ did not confirm the message: {e}"))?;
        if confirmation.is_ack() { Ok(()) } else { Err("RabbitMQ refused the message (a nack)".to_owned()) }
    }
}
