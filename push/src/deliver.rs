//! Sending the outbox. A subscription's deliveries go one at a time in the order they were written
//! (a pact's story arrives in order; a revocation after what it revokes), so a failing receiver
//! holds up only its own subscription: its first pending delivery waits for its backoff, and
//! after the last attempt becomes a dead letter and the next one goes.
//!
//! A turn on a subscription holds a transaction-scoped advisory lock on a connection of its own
//! (another process skips the subscription meanwhile; a killed process's lock goes with its
//! connection), while each attempt is recorded on another connection as it happens: the attempt
//! is counted before the POST (so a reorganisation revokes rather than silently cancels anything
//! that may have reached the receiver) and its answer after. A process killed between the two
//! sends the delivery again later with the same idempotency key. On a [`Stop`] a turn sends
//! nothing more, abandons the POST in flight (already counted) and commits what it recorded.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentpact_contracts::DeliveryState;
use agentpact_http::rate_limit::RateLimiter;
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::Address;
use chrono::{DateTime, Utc};
use futures::StreamExt;

use crate::{
    PushConfig, PushError,
    config::MAX_BODY,
    metrics::Metrics,
    sign::ServerKey,
    sink::{self, Sink, Sinks},
    stop::Stop,
    subscription::LOCK_NAMESPACE,
};

/// Deliveries one turn sends to one subscription before it lets others go.
const PER_TURN: i64 = 64;

/// The subscriptions one send loop serves: every webhook, or one broker sink. Each lane has a loop
/// of its own, so a broker that stalls (each attempt waiting out its timeout) holds only its own
/// sink, never the webhooks or another sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// Every webhook subscription (a URL target).
    Webhooks,
    /// The subscription of the sink with this target (`sink:<name>`).
    Sink(String),
}

impl Lane {
    /// The lanes of a process: the webhooks', and one per configured sink.
    pub fn all(config: &PushConfig) -> Vec<Self> {
        std::iter::once(Self::Webhooks).chain(config.sinks.iter().map(|s| Self::Sink(s.target()))).collect()
    }
}

/// The sender.
pub struct Deliverer {
    pool: sqlx::PgPool,
    client: reqwest::Client,
    key: ServerKey,
    config: PushConfig,
    metrics: Metrics,
    owners: RateLimiter<Address>,
    /// The broker sinks this process publishes to, by target.
    sinks: Sinks,
    /// Turns at once: `config.concurrency`, at most what the pool can hold (two connections each,
    /// two left for matching).
    concurrency: usize,
}

/// Where a subscription's deliveries go, and how they are signed.
#[derive(Debug)]
struct Target {
    url: String,
    hmac_secret: Option<String>,
    owner: Vec<u8>,
}

/// A pending delivery of a subscription.
#[derive(Debug)]
struct Next {
    id: i64,
    idempotency_key: String,
    body: String,
    attempts: i32,
    due: bool,
    block_time: Option<DateTime<Utc>>,
}

/// How one attempt ended.
enum Attempt {
    Answered,
    /// Worth trying again (the receiver down, a 5xx, a timeout).
    Failed(String),
    /// Never deliverable (a body over the bound, a target the policy refuses): a dead letter now.
    Refused(String),
    /// Abandoned in flight by a stop: counted, and sent again after a restart.
    Interrupted,
}

impl Deliverer {
    /// A sender with `key`, holding every target to `config.targets` at connection time (no
    /// proxy, no redirects followed: a 3xx is a failure).
    pub fn new(
        pool: sqlx::PgPool,
        key: ServerKey,
        config: PushConfig,
        metrics: Metrics,
    ) -> Result<Self, PushError> {
        let client = reqwest::Client::builder()
            .dns_resolver(config.targets.resolver())
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(config.timeout)
            .user_agent(concat!("agentpact-push/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(PushError::Client)?;
        let owners = RateLimiter::new(config.owner_rate);
        let room = usize::try_from(pool.options().get_max_connections().saturating_sub(2) / 2).unwrap_or(1);
        let concurrency = config.concurrency.min(room).max(1);
        let sinks = Sinks::new(&config.sinks);
        Ok(Self { pool, client, key, config, metrics, owners, sinks, concurrency })
    }

    /// One round of `lane`: every subscription of it with a delivery due gets a turn
    /// (`concurrency` at once, each holding two connections), until `stop`; returns how many
    /// deliveries were answered.
    pub async fn round(&self, lane: &Lane, stop: &Stop) -> Result<u64, PushError> {
        let sink = match lane {
            Lane::Webhooks => None,
            Lane::Sink(target) => Some(target.as_str()),
        };
        let heads = sqlx::query!(
            r#"SELECT DISTINCT ON (d.subscription_id) d.subscription_id, d.next_attempt_at <= now() AS "due!"
               FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
               WHERE d.state = $1 AND d.chain_id = $2
                 AND CASE WHEN $3::text IS NULL THEN NOT starts_with(s.url, $4) ELSE s.url = $3 END
               ORDER BY d.subscription_id, d.id"#,
            DeliveryState::Pending.name(),
            i64_of(self.config.chain_id),
            sink,
            sink::SCHEME
        )
        .fetch_all(&self.pool)
        .await?;
        match sink {
            None => self.metrics.set_pending(heads.len() as u64),
            Some(target) => {
                for (name, lag) in sink::lag(&self.pool, self.config.chain_id, target).await? {
                    self.metrics.set_sink_lag(&name, lag);
                }
            }
        }
        let due: Vec<i64> = heads.into_iter().filter(|h| h.due).map(|h| h.subscription_id).collect();
        let turns =
            futures::stream::iter(due).map(|id| self.turn(id, stop)).buffer_unordered(self.concurrency);
        let results: Vec<Result<u64, PushError>> = turns.collect().await;
        let mut answered = 0;
        for result in results {
            answered += result?;
        }
        Ok(answered)
    }

    /// Delivers subscription `id`'s due deliveries in order, unless another process is (or a
    /// stop was asked for).
    async fn turn(&self, id: i64, stop: &Stop) -> Result<u64, PushError> {
        if stop.is_requested() {
            return Ok(0);
        }
        let mut lock = self.pool.begin().await?;
        let mine = sqlx::query_scalar!(
            r#"SELECT pg_try_advisory_xact_lock($1, hashtext($2::text)) AS "mine!""#,
            LOCK_NAMESPACE,
            id.to_string()
        )
        .fetch_one(&mut *lock)
        .await?;
        if !mine {
            return Ok(0);
        }
        let target = sqlx::query_as!(
            Target,
            "SELECT url, hmac_secret, owner FROM webhook_subscriptions WHERE id = $1 AND cancelled_at IS NULL",
            id
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some(target) = target else {
            // Cancelled after these were queued: never sent, and no longer waiting.
            crate::subscription::cancel_pending(&mut lock, id).await?;
            lock.commit().await?;
            return Ok(0);
        };
        // A sink's lane is its own: every sink it meets is one this process publishes to.
        let sink = if sink::is_sink(&target.url) {
            let Some(sink) = self.sinks.get(&target.url) else { return Ok(0) };
            Some(sink)
        } else {
            None
        };
        let sink_name = sink.map(|_| target.url.trim_start_matches(sink::SCHEME));
        let owner = Cells { table: "webhook_subscriptions", key: format!("id {id}") }
            .address("owner", &target.owner)?;
        let batch = sqlx::query_as!(
            Next,
            r#"SELECT id, idempotency_key, body, attempts, next_attempt_at <= now() AS "due!", block_time
               FROM webhook_deliveries WHERE subscription_id = $1 AND state = $2 ORDER BY id LIMIT $3"#,
            id,
            DeliveryState::Pending.name(),
            PER_TURN
        )
        .fetch_all(&self.pool)
        .await?;
        let mut answered = 0;
        for next in batch {
            if !next.due || stop.is_requested() {
                break;
            }
            // The operator's own brokers are not held to the rate of an owner's receivers.
            if let Err(wait) = sink.map_or_else(|| self.owners.take(owner), |_| Ok(())) {
                self.postpone(next.id, wait, None).await?;
                break;
            }
            // Counted before it is sent: see the module's note.
            let started = sqlx::query!(
                "UPDATE webhook_deliveries SET attempts = attempts + 1 WHERE id = $1 AND state = $2",
                next.id,
                DeliveryState::Pending.name()
            )
            .execute(&self.pool)
            .await?;
            if started.rows_affected() == 0 {
                continue; // cancelled since it was read: a reorganisation removed its event
            }
            let attempts = u32::try_from(next.attempts).unwrap_or(0) + 1;
            let attempt = tokio::select! {
                attempt = self.send(&target, sink, &next) => attempt,
                () = stop.requested() => Attempt::Interrupted,
            };
            let refused = matches!(attempt, Attempt::Refused(_));
            match attempt {
                Attempt::Interrupted => break,
                Attempt::Answered => {
                    sqlx::query!(
                        "UPDATE webhook_deliveries SET state = $2, delivered_at = now(), last_error = NULL WHERE id = $1",
                        next.id,
                        DeliveryState::Delivered.name()
                    )
                    .execute(&self.pool)
                    .await?;
                    let latency = next.block_time.and_then(|t| (Utc::now() - t).to_std().ok());
                    self.metrics.delivered(latency);
                    if let Some(name) = sink_name {
                        self.metrics.sink_published(name);
                    }
                    answered += 1;
                }
                Attempt::Refused(error) | Attempt::Failed(error)
                    if attempts >= self.config.retry.max_attempts || refused =>
                {
                    sqlx::query!(
                        "UPDATE webhook_deliveries SET state = $2, last_error = $3 WHERE id = $1",
                        next.id,
                        DeliveryState::Dead.name(),
                        error
                    )
                    .execute(&self.pool)
                    .await?;
                    self.metrics.failed(true);
                    if let Some(name) = sink_name {
                        self.metrics.sink_failed(name, true);
                    }
                    tracing::warn!(subscription = id, delivery = next.id, attempts, %error, "webhook delivery given up");
                }
                Attempt::Refused(error) | Attempt::Failed(error) => {
                    self.postpone(next.id, self.config.retry.backoff(attempts), Some(&error)).await?;
                    self.metrics.failed(false);
                    if let Some(name) = sink_name {
                        self.metrics.sink_failed(name, false);
                    }
                    tracing::debug!(subscription = id, delivery = next.id, attempts, %error, "webhook delivery failed");
                    break;
                }
            }
        }
        lock.commit().await?;
        Ok(answered)
    }

    async fn postpone(&self, delivery: i64, wait: Duration, error: Option<&str>) -> Result<(), PushError> {
        sqlx::query!(
            "UPDATE webhook_deliveries
             SET next_attempt_at = now() + make_interval(secs => $2), last_error = coalesce($3, last_error)
             WHERE id = $1",
            delivery,
            wait.as_secs_f64(),
            error
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// One POST, or one publish to `sink`. The error kept for the owner names what failed, never
    /// the URL (it may hold a token or a broker's password) or a secret.
    async fn send(&self, target: &Target, sink: Option<&Sink>, next: &Next) -> Attempt {
        if next.body.len() > MAX_BODY {
            return Attempt::Refused(format!(
                "the body is {} bytes, over the {MAX_BODY}-byte bound",
                next.body.len()
            ));
        }
        if let Some(sink) = sink {
            let published =
                tokio::time::timeout(self.config.timeout, sink.publish(&next.idempotency_key, &next.body));
            return match published.await {
                Ok(Ok(())) => Attempt::Answered,
                Ok(Err(error)) => Attempt::Failed(error),
                Err(_) => Attempt::Failed(format!(
                    "the broker did not acknowledge within {:?}",
                    self.config.timeout
                )),
            };
        }
        let url = match self.config.targets.check_form(&target.url) {
            Ok(url) => url,
            Err(e) => return Attempt::Refused(e.to_string()),
        };
        let timestamp = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let headers = self.key.headers(
            &next.idempotency_key,
            i64::try_from(timestamp).unwrap_or(0),
            &next.body,
            target.hmac_secret.as_deref(),
        );
        let mut request =
            self.client.post(url).header("content-type", "application/json").body(next.body.clone());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(response) if response.status().is_success() => Attempt::Answered,
            Ok(response) => {
                Attempt::Failed(format!("the receiver answered HTTP {}", response.status().as_u16()))
            }
            Err(e) => Attempt::Failed(describe(&e)),
        }
    }
}

/// What went wrong with a request, without its URL.
fn describe(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    let mut cause = std::error::Error::source(e);
    let mut root = None;
    while let Some(c) = cause {
        root = Some(c.to_string());
        cause = c.source();
    }
    match root {
        Some(root) => format!("the request {what}: {root}"),
        None => format!("the request {what}"),
    }
}
