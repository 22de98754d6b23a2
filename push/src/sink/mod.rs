//! Broker sinks: the same deliveries as webhooks, published to a message system the operator runs
//! (docs/push.md §Streams). A sink is a subscription the operator owns whose target is
//! `sink:<name>`, so matching, the outbox, the order per subscription, revocations, backoff and
//! dead letters are the webhook machinery unchanged; only the last step differs: instead of a
//! signed POST answered by a 2xx, the exact body is published and the broker's acknowledgement
//! answers it ([`Sink::publish`]).
//!
//! The broker's URL (it may hold credentials) lives only in the process's configuration: the
//! database, the logs and the errors kept for the owner name the sink, never its URL.
//!
//! - [`nats`]: NATS JetStream, a publish acknowledged by the stream, the idempotency key as
//!   `Nats-Msg-Id` (the stream's duplicate window drops a repeat).
//! - [`redis`]: Redis Streams, an `XADD` per chain capped by `MAXLEN ~`, the key in the entry (and
//!   remembered for an hour, so a repeat is not added again).
//! - [`amqp`]: RabbitMQ, a topic exchange, persistent messages, publisher confirms, the key as
//!   `message_id` (consumers drop a repeat by it).
//!
//! Each is a [`Publisher`] behind a [`Lazy`] connection: made at the first publish (a broker down
//! at start holds only its own sink) and made anew after any failure.

pub mod amqp;
pub mod nats;
pub mod redis;

use std::collections::BTreeMap;

use agentpact_contracts::{DeliveryState, WebhookMode};
use agentpact_schema::i64_of;
use alloy::primitives::Address;

use crate::{PushConfig, PushError, subscription::LOCK_NAMESPACE};

/// How the target of a sink's subscription starts; what follows is the sink's name.
pub const SCHEME: &str = "sink:";

agentpact_contracts::closed_set! {
    /// The message systems a sink publishes to; a name is the default name of its sink.
    pub enum Broker {
        /// NATS with JetStream.
        Nats => "nats",
        /// Redis Streams.
        Redis => "redis",
        /// RabbitMQ (AMQP 0-9-1).
        Amqp => "amqp",
    }
}

impl Broker {
    /// The broker's own option (NATS's stream, Redis's cap on a stream's length, RabbitMQ's
    /// exchange), with its default.
    fn own_option(self) -> (&'static str, &'static str) {
        match self {
            Self::Nats => ("stream", "AGENTPACT"),
            Self::Redis => ("maxlen", "1000000"),
            Self::Amqp => ("exchange", "agentpact"),
        }
    }
}

/// A sink as the operator configures it. `Debug` never shows its URL.
#[derive(Clone)]
pub struct SinkConfig {
    /// The broker.
    pub broker: Broker,
    /// Its name: the subscription's target is `sink:<name>`.
    pub name: String,
    url: String,
    /// Instant (with revocations) or finalized.
    pub mode: WebhookMode,
    /// Only pacts this address is a party of (none: every pact).
    pub party: Option<Address>,
    /// Whether reminders and window-closed notices come too.
    pub alarms: bool,
    /// The broker's own option: NATS's stream, Redis's `MAXLEN ~` (a whole number), RabbitMQ's
    /// exchange.
    pub own: String,
    /// The first word of every subject: `<prefix>.<chainId>.<type>.<kind or window>.<pactId>`.
    pub prefix: String,
}

impl std::fmt::Debug for SinkConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinkConfig")
            .field("broker", &self.broker)
            .field("name", &self.name)
            .field("mode", &self.mode)
            .field("party", &self.party)
            .field("alarms", &self.alarms)
            .field("own", &self.own)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Longest sink name.
const MAX_NAME: usize = 64;

/// Whether `word` may name a sink, a stream or a subject prefix: letters, digits, `-` and `_`.
fn is_word(word: &str) -> bool {
    !word.is_empty()
        && word.len() <= MAX_NAME
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl SinkConfig {
    /// A sink of `broker` at `url`, with `options`: comma-separated `key=value` pairs among
    /// `name`, `mode` (`instant`, `finalized`), `party` (an address), `alarms` (`yes`, `no`),
    /// `prefix`, and the broker's own (`stream` for NATS, `maxlen` for Redis, `exchange` for
    /// RabbitMQ). An error names the
    /// option that is wrong and what it takes; it never repeats the URL.
    pub fn parse(broker: Broker, url: &str, options: &str) -> Result<Self, String> {
        let (own_key, own) = broker.own_option();
        let mut sink = Self {
            broker,
            name: broker.name().to_owned(),
            url: url.trim().to_owned(),
            mode: WebhookMode::Instant,
            party: None,
            alarms: true,
            own: own.to_owned(),
            prefix: "agentpact".to_owned(),
        };
        if sink.url.is_empty() {
            return Err(format!("the {} sink's URL is empty", broker.name()));
        }
        for option in options.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let Some((key, value)) = option.split_once('=') else {
                return Err(format!("the {} sink option {option:?} is not key=value", broker.name()));
            };
            let (key, value) = (key.trim(), value.trim());
            let word = |what: &str| {
                if is_word(value) {
                    Ok(value.to_owned())
                } else {
                    Err(format!(
                        "the {} sink's {what} {value:?} must be 1 to {MAX_NAME} letters, digits, - or _",
                        broker.name()
                    ))
                }
            };
            match key {
                "name" => sink.name = word("name")?,
                "prefix" => sink.prefix = word("prefix")?,
                "mode" => {
                    sink.mode = WebhookMode::from_name(value).ok_or_else(|| {
                        format!(
                            "the {} sink's mode {value:?} is neither instant nor finalized",
                            broker.name()
                        )
                    })?;
                }
                "party" => {
                    sink.party = Some(value.parse().map_err(|_| {
                        format!(
                            "the {} sink's party {value:?} is not an address (0x and 40 hex digits)",
                            broker.name()
                        )
                    })?);
                }
                "alarms" => {
                    sink.alarms = match value {
                        "yes" => true,
                        "no" => false,
                        _ => {
                            return Err(format!(
                                "the {} sink's alarms is yes or no, not {value:?}",
                                broker.name()
                            ));
                        }
                    };
                }
                _ if key == own_key => sink.own = word(own_key)?,
                _ => {
                    return Err(format!(
                        "the {} sink has no option {key:?}: it takes name, mode, party, alarms, prefix and {own_key}",
                        broker.name()
                    ));
                }
            }
        }
        if broker == Broker::Redis && sink.own.parse::<u64>().is_err() {
            return Err(format!("the redis sink's maxlen {:?} is not a whole number", sink.own));
        }
        Ok(sink)
    }

    /// The target its subscription stores.
    pub fn target(&self) -> String {
        format!("{SCHEME}{}", self.name)
    }

    /// `text` (an error of the broker's client) without the URL or its user name and password.
    fn redact(&self, text: &str) -> String {
        let mut text = text.replace(&self.url, "<the sink's URL>");
        if let Ok(url) = url::Url::parse(&self.url) {
            for secret in [url.password().unwrap_or_default(), url.username()] {
                if secret.len() > 2 {
                    text = text.replace(secret, "<hidden>");
                }
            }
        }
        text
    }
}

/// Where a delivery's body says it belongs, read from the body itself (the body is ours).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// `<chainId>.<type>.<kind or window>.<pactId>`: what subjects and routing keys end with.
    pub words: String,
    /// The chain.
    pub chain_id: u64,
}

impl Route {
    /// Reads the route of a delivery's `body`.
    pub fn of(body: &str) -> Result<Self, String> {
        let body: serde_json::Value =
            serde_json::from_str(body).map_err(|e| format!("the delivery's body is not JSON: {e}"))?;
        let text = |field: &str| body[field].as_str().filter(|s| is_word(s));
        let chain_id = body["chainId"].as_u64();
        let kind = text("event").or_else(|| text("window"));
        match (chain_id, text("type"), kind, text("pactId")) {
            (Some(chain_id), Some(notice), Some(kind), Some(pact)) => {
                Ok(Self { words: format!("{chain_id}.{notice}.{kind}.{pact}"), chain_id })
            }
            _ => Err("the delivery's body lacks chainId, type, event or window, or pactId".to_owned()),
        }
    }
}

/// A broker's client: how to connect, and how to publish one delivery on a connection.
pub trait Publisher: Send + Sync {
    /// A connection to the broker.
    type Connection: Send;

    /// Connects (and makes what the sink publishes to, when missing).
    fn connect(&self, sink: &SinkConfig) -> impl Future<Output = Result<Self::Connection, String>> + Send;

    /// Publishes `body` under `key` at `route`; `Ok` once the broker acknowledged it.
    fn send(
        &self,
        sink: &SinkConfig,
        connection: &mut Self::Connection,
        key: &str,
        body: &str,
        route: &Route,
    ) -> impl Future<Output = Result<(), String>> + Send;
}

/// A sink's connection, made at its first publish and again after a failure; one publish at a
/// time (a sink is one subscription, delivered in order).
pub struct Lazy<P: Publisher> {
    config: SinkConfig,
    publisher: P,
    connection: tokio::sync::Mutex<Option<P::Connection>>,
}

impl<P: Publisher> Lazy<P> {
    fn new(config: SinkConfig, publisher: P) -> Self {
        Self { config, publisher, connection: tokio::sync::Mutex::new(None) }
    }

    async fn publish(&self, key: &str, body: &str, route: &Route) -> Result<(), String> {
        let mut held = self.connection.lock().await;
        let connection = match &mut *held {
            Some(connection) => connection,
            None => match self.publisher.connect(&self.config).await {
                Ok(connection) => held.insert(connection),
                Err(e) => return Err(self.config.redact(&e)),
            },
        };
        let sent = self.publisher.send(&self.config, connection, key, body, route).await;
        if sent.is_err() {
            *held = None;
        }
        sent.map_err(|e| self.config.redact(&e))
    }
}

/// A configured sink.
pub enum Sink {
    /// NATS JetStream.
    Nats(Lazy<nats::Nats>),
    /// Redis Streams.
    Redis(Lazy<redis::Redis>),
    /// RabbitMQ.
    Amqp(Lazy<amqp::Amqp>),
}

impl Sink {
    /// Publishes `body` under idempotency key `key`; `Ok` once the broker acknowledged it (the
    /// "2xx" of a sink). An error names what failed, never the URL.
    pub async fn publish(&self, key: &str, body: &str) -> Result<(), String> {
        let route = Route::of(body)?;
        match self {
            Self::Nats(sink) => sink.publish(key, body, &route).await,
            Self::Redis(sink) => sink.publish(key, body, &route).await,
            Self::Amqp(sink) => sink.publish(key, body, &route).await,
        }
    }
}

/// The sinks of a process, by target.
#[derive(Default)]
pub struct Sinks(BTreeMap<String, Sink>);

impl Sinks {
    /// One client per configured sink; each connects at its first publish (a broker down at start
    /// holds only its own sink).
    pub fn new(configs: &[SinkConfig]) -> Self {
        Self(
            configs
                .iter()
                .map(|c| {
                    let sink = match c.broker {
                        Broker::Nats => Sink::Nats(Lazy::new(c.clone(), nats::Nats)),
                        Broker::Redis => Sink::Redis(Lazy::new(c.clone(), redis::Redis)),
                        Broker::Amqp => Sink::Amqp(Lazy::new(c.clone(), amqp::Amqp)),
                    };
                    (c.target(), sink)
                })
                .collect(),
        )
    }

    /// The sink a subscription's `target` names, when this process has it.
    pub fn get(&self, target: &str) -> Option<&Sink> {
        self.0.get(target)
    }
}

/// Whether `target` names a sink rather than a URL.
pub fn is_sink(target: &str) -> bool {
    target.starts_with(SCHEME)
}

/// Makes each configured sink an active subscription of the operator (the zero address) on the
/// chain: one that exists keeps its id and outbox and takes the configured mode and filter.
pub async fn register(pool: &sqlx::PgPool, config: &PushConfig) -> Result<(), PushError> {
    for sink in &config.sinks {
        let target = sink.target();
        let mut tx = pool.begin().await?;
        sqlx::query!("SELECT FROM pg_advisory_xact_lock($1, hashtext($2))", LOCK_NAMESPACE, target)
            .execute(&mut *tx)
            .await?;
        let party = sink.party.map(|p| p.to_vec());
        let updated = sqlx::query!(
            "UPDATE webhook_subscriptions SET mode = $3, party = $4, alarms = $5
             WHERE chain_id = $1 AND url = $2 AND cancelled_at IS NULL",
            i64_of(config.chain_id),
            target,
            sink.mode.name(),
            party,
            sink.alarms
        )
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            sqlx::query!(
                "INSERT INTO webhook_subscriptions (chain_id, owner, url, mode, party, alarms)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                i64_of(config.chain_id),
                Address::ZERO.as_slice(),
                target,
                sink.mode.name(),
                party,
                sink.alarms
            )
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
    }
    Ok(())
}

/// How far the sink with `target` is behind on `chain_id`, by name: the indexed block minus the
/// block of its oldest event waiting in the outbox (0 when none waits).
pub async fn lag(pool: &sqlx::PgPool, chain_id: u64, target: &str) -> Result<Vec<(String, u64)>, PushError> {
    let rows = sqlx::query!(
        r#"SELECT s.url AS "url!",
                  coalesce((SELECT c.block_number FROM checkpoints c WHERE c.chain_id = s.chain_id)
                           - min(d.block_number), 0) AS "lag!"
           FROM webhook_subscriptions s
           LEFT JOIN webhook_deliveries d ON d.subscription_id = s.id AND d.state = $3 AND d.block_number IS NOT NULL
           WHERE s.chain_id = $1 AND s.url = $2 AND s.cancelled_at IS NULL
           GROUP BY s.id"#,
        i64_of(chain_id),
        target,
        DeliveryState::Pending.name()
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.url.trim_start_matches(SCHEME).to_owned(), u64::try_from(r.lag).unwrap_or(0)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_refuse_by_name_without_the_url() {
        let url = "nats://user:hunter22@broker:4222";
        let sink = SinkConfig::parse(Broker::Nats, url, "name=market, mode=finalized,stream=PACTS,alarms=no")
            .expect("valid");
        assert_eq!((sink.name.as_str(), sink.mode, sink.alarms), ("market", WebhookMode::Finalized, false));
        assert_eq!((sink.own.as_str(), sink.prefix.as_str()), ("PACTS", "agentpact"));
        assert_eq!(sink.target(), "sink:market");
        assert!(!format!("{sink:?}").contains("hunter22"), "{sink:?}");
        for (options, says) in [
            ("exchange=x", "no option \"exchange\""),
            ("mode=sometimes", "neither instant nor finalized"),
            ("name=a.b", "letters, digits"),
            ("party=0x12", "not an address"),
            ("alarms", "not key=value"),
            ("maxlen=10", "no option \"maxlen\""),
        ] {
            let error = SinkConfig::parse(Broker::Nats, url, options).expect_err(options);
            assert!(error.contains(says) && !error.contains("hunter22"), "{options}: {error}");
        }
        let redis = SinkConfig::parse(Broker::Redis, url, "maxlen=5000").expect("valid");
        assert_eq!(redis.own, "5000");
        let error = SinkConfig::parse(Broker::Redis, url, "maxlen=lots").expect_err("not a number");
        assert!(error.contains("not a whole number"), "{error}");
        assert_eq!(
            sink.redact(&format!("connecting to {url} failed (hunter22)")),
            "connecting to <the sink's URL> failed (<hidden>)"
        );
    }

    #[test]
    fn a_route_is_read_from_each_kind_of_body() {
        let event = r#"{"type":"event","chainId":84532,"event":"PactCreated","pactId":"7"}"#;
        assert_eq!(Route::of(event).map(|r| r.words), Ok("84532.event.PactCreated.7".to_owned()));
        let closed = r#"{"type":"closed","chainId":1,"window":"review","pactId":"12"}"#;
        assert_eq!(Route::of(closed).map(|r| r.words), Ok("1.closed.review.12".to_owned()));
        let hostile = r#"{"type":"event","chainId":1,"event":"a.>","pactId":"1"}"#;
        assert!(Route::of(hostile).is_err(), "no wildcard reaches a subject");
    }
}
