//! The broker side of `agentpact bench push --sink <broker>`: a sink of push's own configuration
//! ([`SinkConfig`]) publishing under a name of this run only (its subjects' prefix, and NATS's
//! stream or RabbitMQ's exchange), and a consumer of that broker's Rust client in the benchmark's
//! process recording when each message arrived, as the webhook receiver does. Consumers take
//! without acknowledging: NATS an ephemeral pull consumer over the stream, Redis `XREAD BLOCK` on
//! the chain's stream, RabbitMQ an exclusive queue bound to the exchange, in no-ack mode.
//! [`Consumer::close`] removes what the run made on the broker.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use agentpact_push::sink::{Broker, SinkConfig};
use anyhow::Context;
use futures::StreamExt;

use super::push::{Arrivals, record};

/// The broker's server here, unless `--broker-url` says otherwise.
pub fn local_url(broker: Broker) -> &'static str {
    match broker {
        Broker::Nats => "nats://127.0.0.1:4222",
        Broker::Redis => "redis://127.0.0.1:6379",
        Broker::Amqp => "amqp://127.0.0.1:5672/%2f",
    }
}

/// A sink of this run and its consumer, recording arrivals until [`Consumer::close`].
pub struct Consumer {
    /// The sink, as `agentpact push` is configured with it.
    pub sink: SinkConfig,
    task: tokio::task::JoinHandle<()>,
    made: Made,
}

/// What the run made on the broker, and the connection that removes it.
enum Made {
    /// The stream.
    Nats(async_nats::jetstream::Context),
    /// The stream and the keys its duplicates are remembered by.
    Redis(redis::aio::MultiplexedConnection),
    /// The exchange (the queue is exclusive: it goes with the connection).
    Amqp(lapin::Connection, lapin::Channel),
}

impl Consumer {
    /// Makes the sink's destination on `broker` at `url` (a name of this run) and starts
    /// consuming what it publishes of chain `chain_id` into `arrivals`.
    pub async fn start(broker: Broker, url: &str, chain_id: u64, arrivals: Arrivals) -> anyhow::Result<Self> {
        let millis = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let name = format!("bench_{}_{millis}", std::process::id());
        let mut sink = SinkConfig::parse(broker, url, "alarms=no").map_err(anyhow::Error::msg)?;
        sink.name.clone_from(&name);
        sink.prefix.clone_from(&name);
        if broker != Broker::Redis {
            sink.own.clone_from(&name);
        }
        let failed = || format!("preparing the {} consumer at {url}", broker.name());
        let (task, made) = match broker {
            Broker::Nats => nats(url, &name, arrivals).await,
            Broker::Redis => redis(url, &name, chain_id, arrivals).await,
            Broker::Amqp => amqp(url, &name, arrivals).await,
        }
        .with_context(failed)?;
        Ok(Self { sink, task, made })
    }

    /// Stops consuming and deletes the stream, the keys or the exchange of the run.
    pub async fn close(self) -> anyhow::Result<()> {
        self.task.abort();
        let name = self.sink.name;
        match self.made {
            Made::Nats(js) => {
                js.delete_stream(&name).await.context("deleting the NATS stream")?;
            }
            Made::Redis(mut connection) => {
                let mut cursor = 0u64;
                loop {
                    let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(format!("{name}:*"))
                        .arg("COUNT")
                        .arg(1000)
                        .query_async(&mut connection)
                        .await?;
                    if !keys.is_empty() {
                        redis::cmd("DEL").arg(&keys).query_async::<()>(&mut connection).await?;
                    }
                    if next == 0 {
                        break;
                    }
                    cursor = next;
                }
            }
            Made::Amqp(connection, channel) => {
                channel
                    .exchange_delete(name.as_str().into(), Default::default())
                    .await
                    .context("deleting the RabbitMQ exchange")?;
                connection.close(200, "benchmark done".into()).await?;
            }
        }
        Ok(())
    }
}

/// The stream `name` over `name.>` (the sink finds it made) and an ephemeral pull consumer on it.
async fn nats(
    url: &str,
    name: &str,
    arrivals: Arrivals,
) -> anyhow::Result<(tokio::task::JoinHandle<()>, Made)> {
    use async_nats::jetstream::{self, consumer};
    let js = jetstream::new(async_nats::connect(url).await?);
    let stream = js
        .create_stream(jetstream::stream::Config {
            name: name.to_owned(),
            subjects: vec![format!("{name}.>")],
            ..Default::default()
        })
        .await?;
    let pull = consumer::pull::Config { ack_policy: consumer::AckPolicy::None, ..Default::default() };
    let mut messages = stream.create_consumer(pull).await?.messages().await?;
    let task = tokio::spawn(async move {
        while let Some(Ok(message)) = messages.next().await {
            record(&arrivals, &message.payload, Instant::now());
        }
    });
    Ok((task, Made::Nats(js)))
}

/// `XREAD BLOCK` on the chain's stream of the prefix `name`, from its start (it appears with the
/// first entry).
async fn redis(
    url: &str,
    name: &str,
    chain_id: u64,
    arrivals: Arrivals,
) -> anyhow::Result<(tokio::task::JoinHandle<()>, Made)> {
    let client = redis::Client::open(url)?;
    let config =
        redis::AsyncConnectionConfig::new().set_response_timeout(Some(std::time::Duration::from_secs(5)));
    let mut reader = client.get_multiplexed_async_connection_with_config(&config).await?;
    let cleaner = client.get_multiplexed_async_connection_with_config(&config).await?;
    let stream = format!("{name}:{chain_id}");
    let task = tokio::spawn(async move {
        let mut last = "0-0".to_owned();
        loop {
            // [[stream, [[id, [field, value, …]], …]]], or nil when BLOCK ran out.
            type Reply = Option<Vec<(String, Vec<(String, Vec<String>)>)>>;
            let Ok(reply): Result<Reply, _> = redis::cmd("XREAD")
                .arg("BLOCK")
                .arg(1000)
                .arg("COUNT")
                .arg(1000)
                .arg("STREAMS")
                .arg(&stream)
                .arg(&last)
                .query_async(&mut reader)
                .await
            else {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            };
            let at = Instant::now();
            for (id, fields) in reply.into_iter().flatten().flat_map(|(_, entries)| entries) {
                let body = fields.chunks(2).find_map(|f| match f {
                    [field, body] if field == "body" => Some(body),
                    _ => None,
                });
                if let Some(body) = body {
                    record(&arrivals, body.as_bytes(), at);
                }
                last = id;
            }
        }
    });
    Ok((task, Made::Redis(cleaner)))
}

/// The durable topic exchange `name` (as the sink declares it) and an exclusive queue bound to
/// `name.#`, consumed without acknowledgements.
async fn amqp(
    url: &str,
    name: &str,
    arrivals: Arrivals,
) -> anyhow::Result<(tokio::task::JoinHandle<()>, Made)> {
    use lapin::{options::*, types::FieldTable};
    let connection = lapin::Connection::connect(url, lapin::ConnectionProperties::default()).await?;
    let channel = connection.create_channel().await?;
    let durable = ExchangeDeclareOptions { durable: true, ..Default::default() };
    channel.exchange_declare(name.into(), lapin::ExchangeKind::Topic, durable, FieldTable::default()).await?;
    let exclusive = QueueDeclareOptions { exclusive: true, auto_delete: true, ..Default::default() };
    let queue = channel.queue_declare("".into(), exclusive, FieldTable::default()).await?;
    channel
        .queue_bind(
            queue.name().clone(),
            name.into(),
            format!("{name}.#").into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
    let no_ack = BasicConsumeOptions { no_ack: true, ..Default::default() };
    let mut consumer =
        channel.basic_consume(queue.name().clone(), "bench".into(), no_ack, FieldTable::default()).await?;
    let task = tokio::spawn(async move {
        while let Some(Ok(delivery)) = consumer.next().await {
            record(&arrivals, &delivery.data, Instant::now());
        }
    });
    Ok((task, Made::Amqp(connection, channel)))
}
