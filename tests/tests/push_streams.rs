//! Broker sinks (docs/push.md §Streams) against the real parts: an anvil, the indexer following it
//! into a real Postgres, `agentpact push` as a process publishing to the broker this machine runs,
//! and a consumer written with that broker's own Python client (tests/python/stream_consumer.py).
//! Each broker (NATS JetStream, Redis Streams, RabbitMQ) is put through the same three stories: a pact's
//! life arrives in order with the webhook's bodies; a process killed mid-flow, every acknowledged
//! message then published again, and the connection to the broker cut lose nothing and store
//! nothing twice (the idempotency key dedupes); a reorg in instant mode publishes the
//! revocations, and a finalized sink never publishes the removed events.

use std::time::Duration;

use agentpact_contracts::{Initiator, WebhookMode};
use agentpact_push::{Filter, sink::Broker};
use agentpact_tests::{
    HarnessError,
    chain::ether,
    index::{caught_up, follow},
    pacts::Market,
    postgres::TestDatabase,
    streams::{Consumed, Consumer, server},
    tcp_relay::TcpRelay,
    webhooks::{Push, Receiver, journal_keys, subscribe},
};

type Result<T = ()> = std::result::Result<T, HarnessError>;

/// A market indexed into a fresh database, with `agentpact push` publishing to a sink.
struct Stack {
    m: Market,
    db: TestDatabase,
    _indexer: tokio::task::JoinHandle<()>,
    push: Option<Push>,
}

impl Stack {
    /// Starts push with `env` (the sink's) and waits for its cursors, so every event from here on
    /// is matched.
    async fn start(env: &[(&'static str, String)]) -> Result<Self> {
        let m = Market::open().await?;
        let db = TestDatabase::create().await?;
        let indexer = follow(&m.chain, db.pool());
        caught_up(&m.chain, db.pool()).await?;
        let push = Push::start(db.url(), m.chain.anvil.chain_id(), env).await?;
        let s = Self { m, db, _indexer: indexer, push: Some(push) };
        let pool = s.db.pool().clone();
        agentpact_tests::until(Duration::from_secs(60), "push's cursors", || async {
            let n: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_cursors").fetch_one(&pool).await?;
            Ok(n == 2)
        })
        .await?;
        Ok(s)
    }

    /// Another `agentpact push` on the same database, with `env`.
    async fn push(&self, env: &[(&'static str, String)]) -> Result<Push> {
        Push::start(self.db.url(), self.chain_id(), env).await
    }

    fn chain_id(&self) -> u64 {
        self.m.chain.anvil.chain_id()
    }

    /// The id of the subscription of sink `name`.
    async fn sink(&self, name: &str) -> Result<i64> {
        Ok(sqlx::query_scalar("SELECT id FROM webhook_subscriptions WHERE url = 'sink:' || $1")
            .bind(name)
            .fetch_one(self.db.pool())
            .await?)
    }

    /// The journal's pact event keys, in chain order, that are not in `before`.
    async fn journal_since(&self, before: &[String]) -> Result<Vec<String>> {
        let now = journal_keys(self.db.pool(), self.chain_id(), None).await?;
        Ok(now.into_iter().filter(|k| !before.contains(k)).collect())
    }

    /// What push's `/metrics` says now.
    async fn metrics(&self) -> Result<String> {
        let port = self.push.as_ref().map_or(0, |p| p.metrics);
        let url = format!("http://127.0.0.1:{port}/metrics");
        let answer = reqwest::get(url).await.map_err(|e| HarnessError::Process(e.to_string()))?;
        answer.text().await.map_err(|e| HarnessError::Process(e.to_string()))
    }
}

/// The idempotency keys of every message consumed, in order, repeats included.
fn keys(consumed: &[Consumed]) -> Vec<String> {
    consumed.iter().map(|c| c.body["idempotencyKey"].as_str().unwrap_or_default().to_owned()).collect()
}

/// The keys in the order each first arrived: what a consumer that drops a key it has seen keeps.
fn first_arrivals(consumed: &[Consumed]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    keys(consumed).into_iter().filter(|k| seen.insert(k.clone())).collect()
}

/// Every message carried its body's idempotency key as the broker's own message id, under the
/// subject its body names.
fn assert_keys_and_subjects(consumed: &[Consumed], prefix: &str) {
    for c in consumed {
        let b = &c.body;
        assert_eq!(c.key.as_deref(), b["idempotencyKey"].as_str(), "{c:?}");
        let kind = b["event"].as_str().or(b["window"].as_str()).unwrap_or_default();
        let subject = format!(
            "{prefix}.{}.{}.{kind}.{}",
            b["chainId"],
            b["type"].as_str().unwrap_or_default(),
            b["pactId"].as_str().unwrap_or_default()
        );
        assert_eq!(c.subject, subject, "{c:?}");
    }
}

/// `body` without its `subscriptionId` (the one field a sink's body and a webhook's differ in).
fn but_subscription(body: &serde_json::Value) -> serde_json::Value {
    let mut body = body.clone();
    if let Some(fields) = body.as_object_mut() {
        fields.remove("subscriptionId");
    }
    body
}

/// A pact's whole life, through a sink and a webhook subscribed alike: every event once, in
/// chain order, with the webhook's body (but its subscription), the key as the broker's message
/// id, under the subject its body names; `/metrics` counts them for the sink.
async fn a_pacts_whole_life_arrives_in_order_with_the_webhooks_bodies(broker: Broker) -> Result {
    let mut consumer = Consumer::new(broker)?;
    let s = Stack::start(&consumer.env(server(broker), "")).await?;
    consumer.start(s.chain_id()).await?;
    let sink = s.sink(&consumer.name).await?;
    let receiver = Receiver::start(None).await?;
    let (chain, buyer) = (s.chain_id(), s.m.cast.buyer);
    let everything = Filter { alarms: true, ..Filter::default() };
    let hook =
        subscribe(s.db.pool(), chain, buyer, receiver.url(), WebhookMode::Instant, everything, None).await?;

    let id = s.m.completed(Initiator::Buyer, ether(1)).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let journal = journal_keys(s.db.pool(), chain, Some(id)).await?;
    assert!(journal.len() >= 8, "a whole life: {journal:?}");
    let consumed = consumer.until("the pact's events", |c| c.len() >= journal.len()).await?;
    let hooks = receiver.until("the webhooks", |r| r.len() >= journal.len()).await?;

    assert_eq!(keys(&consumed), journal, "every event once, in chain order");
    assert_keys_and_subjects(&consumed, &consumer.name);
    for (c, h) in consumed.iter().zip(&hooks) {
        assert_eq!(c.body["subscriptionId"], sink, "{c:?}");
        assert_eq!(h.body["subscriptionId"], hook.id, "{h:?}");
        assert_eq!(but_subscription(&c.body), but_subscription(&h.body), "the webhook's body");
    }
    let metrics = s.metrics().await?;
    let published = format!(
        "agentpact_push_sink_published_total{{chain_id=\"{chain}\",sink=\"{}\"}} {}",
        consumer.name,
        journal.len()
    );
    assert!(metrics.contains(&published), "{metrics}");
    consumer.clean_up(chain).await
}

/// A process killed between two steps of a pact, then every message it had published marked
/// unanswered (what a kill between the broker's acknowledgement and its record leaves) and a new
/// process started: each is published again under its key, and the broker keeps none twice
/// (NATS, Redis) or delivers the repeat under the same key for the consumer to drop (RabbitMQ).
/// Then the connection to the broker is cut: what follows still arrives, in order.
async fn a_kill_a_republish_and_a_cut_connection_lose_nothing_and_repeat_only_under_the_key(
    broker: Broker,
) -> Result {
    let mut consumer = Consumer::new(broker)?;
    let relay = TcpRelay::start(server(broker).to_owned()).await?;
    let env = consumer.env(&relay.addr().to_string(), "");
    let mut s = Stack::start(&env).await?;
    consumer.start(s.chain_id()).await?;
    let sink = s.sink(&consumer.name).await?;

    let id = s.m.funded(Initiator::Seller, ether(1)).await?;
    let pool = s.db.pool().clone();
    let count = |state: &'static str| {
        let pool = pool.clone();
        async move {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1 AND state = $2",
            )
            .bind(sink)
            .bind(state)
            .fetch_one(&pool)
            .await?;
            Ok::<_, HarnessError>(n)
        }
    };
    // The condition, made: every event so far published *and recorded*, so the kill leaves no
    // message published but unrecorded (which a restart would publish again, one repeat more than
    // the marked ones below: RabbitMQ delivers every repeat).
    caught_up(&s.m.chain, s.db.pool()).await?;
    let so_far = journal_keys(s.db.pool(), s.chain_id(), None).await?.len() as i64;
    agentpact_tests::until(Duration::from_secs(60), "every delivery so far recorded", || async {
        Ok(count("delivered").await? == so_far)
    })
    .await?;
    s.push.take().map(Push::kill).expect("started").await?;
    s.m.submitted(id).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let answered = sqlx::query(
        "UPDATE webhook_deliveries SET state = 'pending', delivered_at = NULL
         WHERE subscription_id = $1 AND state = 'delivered'",
    )
    .bind(sink)
    .execute(s.db.pool())
    .await?;
    assert!(answered.rows_affected() >= 1, "the condition, made: published messages to publish again");

    s.push = Some(s.push(&env).await?);
    let journal = journal_keys(s.db.pool(), s.chain_id(), Some(id)).await?;
    agentpact_tests::until(Duration::from_secs(60), "every delivery published again", || async {
        Ok(count("pending").await? == 0)
    })
    .await?;
    let repeats = if consumer.broker_drops_repeats() { 0 } else { answered.rows_affected() as usize };
    let consumed = consumer.until("every event", |c| c.len() >= journal.len() + repeats).await?;
    assert_eq!(first_arrivals(&consumed), journal, "nothing lost, in order");
    assert_eq!(consumed.len(), journal.len() + repeats, "repeated only what the broker cannot drop by key");

    relay.cut();
    let before = journal_keys(s.db.pool(), s.chain_id(), None).await?;
    s.m.create(s.m.terms(Initiator::Buyer, ether(2)).await?).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let after = s.journal_since(&before).await?;
    let all = [journal, after].concat();
    let consumed = consumer.until("the event after the cut", |c| c.len() >= all.len() + repeats).await?;
    assert_eq!(first_arrivals(&consumed), all, "after the cut: in order");
    assert_eq!(consumed.len(), all.len() + repeats, "after the cut: once");
    assert_keys_and_subjects(&consumed, &consumer.name);
    consumer.clean_up(s.chain_id()).await
}

/// A reorg of depth 3 after the instant sink published three events: it publishes their
/// revocations, then the new branch's event; the finalized sink (another push process, on the
/// same database) publishes only the canonical events, in chain order.
async fn a_reorg_publishes_revocations_to_an_instant_sink_and_nothing_removed_to_a_finalized_one(
    broker: Broker,
) -> Result {
    let mut instant = Consumer::new(broker)?;
    let mut finalized = Consumer::new(broker)?;
    let depth = ("FINALITY_DEPTH", "5".to_owned());
    let s =
        Stack::start(&[instant.env(server(broker), "mode=instant"), vec![depth.clone()]].concat()).await?;
    let _finalizing =
        s.push(&[finalized.env(server(broker), "mode=finalized"), vec![depth]].concat()).await?;
    instant.start(s.chain_id()).await?;
    finalized.start(s.chain_id()).await?;
    let chain = &s.m.chain;

    let fork = chain.snapshot().await?;
    let at_fork = journal_keys(s.db.pool(), s.chain_id(), None).await?;
    for _ in 0..3 {
        s.m.create(s.m.terms(Initiator::Buyer, ether(1)).await?).await?; // one block each
    }
    caught_up(chain, s.db.pool()).await?;
    let abandoned = s.journal_since(&at_fork).await?;
    assert_eq!(abandoned.len(), 3);
    instant.until("the 3 events", |c| keys(c) == abandoned).await?;

    chain.restore(fork).await?;
    s.m.create(s.m.terms(Initiator::Seller, ether(2)).await?).await?;
    for _ in 0..3 {
        chain.mine().await?; // the new branch outgrows the old one
    }
    caught_up(chain, s.db.pool()).await?;
    let canonical = s.journal_since(&at_fork).await?;
    assert_eq!(canonical.len(), 1);
    let consumed = instant.until("the new branch", |c| keys(c).ends_with(&canonical)).await?;
    let revocations: Vec<String> = abandoned.iter().map(|k| format!("{k}:revoked")).collect();
    assert_eq!(keys(&consumed), [&abandoned[..], &revocations, &canonical].concat());
    for c in consumed.iter().filter(|c| c.body["type"] == "revocation") {
        let revokes = c.body["revokes"].as_str().unwrap_or_default();
        assert_eq!(c.body["idempotencyKey"], format!("{revokes}:revoked"));
    }
    assert_keys_and_subjects(&consumed, &instant.name);

    for _ in 0..6 {
        chain.mine().await?; // past the finality depth of 5
    }
    caught_up(chain, s.db.pool()).await?;
    let consumed = finalized.until("the final event", |c| !c.is_empty()).await?;
    assert_eq!(keys(&consumed), canonical, "only the canonical event");
    assert!(consumed.iter().all(|c| c.body["mode"] == "finalized"));
    instant.clean_up(s.chain_id()).await?;
    finalized.clean_up(s.chain_id()).await
}

/// One `#[tokio::test]` per broker and story.
macro_rules! per_broker {
    ($($broker:ident: $($story:ident),+;)+) => {
        $(mod $broker {
            use super::*;
            $(#[tokio::test]
            async fn $story() -> Result {
                super::$story(Broker::from_name(stringify!($broker)).expect("a broker")).await
            })+
        })+
    };
}

per_broker! {
    nats: a_pacts_whole_life_arrives_in_order_with_the_webhooks_bodies,
          a_kill_a_republish_and_a_cut_connection_lose_nothing_and_repeat_only_under_the_key,
          a_reorg_publishes_revocations_to_an_instant_sink_and_nothing_removed_to_a_finalized_one;
    redis: a_pacts_whole_life_arrives_in_order_with_the_webhooks_bodies,
           a_kill_a_republish_and_a_cut_connection_lose_nothing_and_repeat_only_under_the_key,
           a_reorg_publishes_revocations_to_an_instant_sink_and_nothing_removed_to_a_finalized_one;
    amqp: a_pacts_whole_life_arrives_in_order_with_the_webhooks_bodies,
          a_kill_a_republish_and_a_cut_connection_lose_nothing_and_repeat_only_under_the_key,
          a_reorg_publishes_revocations_to_an_instant_sink_and_nothing_removed_to_a_finalized_one;
}

/// The password in the stalled sink's URL, which nothing may repeat.
const PASSWORD: &str = "the-brokers-own-password";

/// A broker that accepts connections and never answers: a sink publishing to it waits out every
/// timeout. Returns its address and the task holding it.
async fn black_hole() -> Result<(std::net::SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    let addr = listener.local_addr().map_err(|e| HarnessError::Process(e.to_string()))?;
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    Ok((addr, task))
}

/// A NATS sink whose broker never answers beside a Redis sink and a webhook: the pact's events
/// reach the webhook and the Redis consumer within 3 s of being indexed each time (measured), while
/// the stalled sink's attempts each wait out a timeout; the error kept for its deliveries says what
/// failed and never holds the URL's password.
#[tokio::test]
async fn a_stalled_sink_does_not_slow_webhooks_or_another_sink() -> Result {
    let (hole, _holding) = black_hole().await?;
    let stalled = Consumer::new(Broker::Nats)?;
    let mut redis = Consumer::new(Broker::Redis)?;
    let mut env = [stalled.env(&hole.to_string(), ""), redis.env(server(Broker::Redis), "")].concat();
    env[0].1 = format!("nats://operator:{PASSWORD}@{hole}");
    let s = Stack::start(&env).await?;
    redis.start(s.chain_id()).await?;
    let receiver = Receiver::start(None).await?;
    let (chain, buyer) = (s.chain_id(), s.m.cast.buyer);
    let everything = Filter { alarms: true, ..Filter::default() };
    subscribe(s.db.pool(), chain, buyer, receiver.url(), WebhookMode::Instant, everything, None).await?;

    let mut slowest = Duration::ZERO;
    for step in 1..=3 {
        s.m.create(s.m.terms(Initiator::Buyer, ether(1)).await?).await?;
        caught_up(&s.m.chain, s.db.pool()).await?;
        let indexed = std::time::Instant::now();
        receiver.until("the webhook", |r| r.len() >= step).await?;
        redis.until("the Redis entry", |c| c.len() >= step).await?;
        slowest = slowest.max(indexed.elapsed());
    }
    eprintln!("slowest webhook and Redis delivery beside a stalled sink: {slowest:?}");
    assert!(slowest < Duration::from_secs(3), "held up by the stalled sink: {slowest:?}");
    let errors = || async {
        let errors: Vec<Option<String>> = sqlx::query_scalar(
            "SELECT d.last_error FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
             WHERE s.url = 'sink:' || $1",
        )
        .bind(&stalled.name)
        .fetch_all(s.db.pool())
        .await?;
        Ok::<_, HarnessError>(errors.into_iter().flatten().collect::<Vec<String>>())
    };
    agentpact_tests::until(Duration::from_secs(60), "a failed attempt of the stalled sink", || async {
        Ok(!errors().await?.is_empty())
    })
    .await?;
    let errors = errors().await?;
    let metrics = s.metrics().await?;
    let unretried =
        format!("agentpact_push_sink_retried_total{{chain_id=\"{chain}\",sink=\"{}\"}} 0", stalled.name);
    let retried = unretried.trim_end_matches(" 0");
    assert!(metrics.contains(retried) && !metrics.contains(&unretried), "failures counted: {metrics}");
    assert!(errors.iter().all(|e| e.contains("NATS") && !e.contains(PASSWORD)), "{errors:?}");
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM webhook_subscriptions WHERE url LIKE '%' || $1 || '%'")
            .bind(PASSWORD)
            .fetch_one(s.db.pool())
            .await?;
    assert_eq!(stored, 0, "the URL is never stored");
    redis.clean_up(chain).await
}
