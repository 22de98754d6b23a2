//! The loop `agentpact push` runs on one chain: a matcher (woken by the indexer's pact
//! notifications, and every `poll` for the clock) that fills the outbox, and senders that empty
//! it (one for the webhooks, one per broker sink: [`Lane`]), side by side so a slow receiver
//! never delays matching, and a stalled broker never the webhooks or another sink.

use std::future::Future;

use agentpact_contracts::{WebhookMode, channels::PACT_CHANNEL};
use tokio::sync::watch;

use crate::{
    PushConfig, PushError, alarms,
    deliver::{Deliverer, Lane},
    dispatch,
    metrics::Metrics,
    sign::ServerKey,
    stop::{self, Stop},
};

/// Runs until `shutdown` completes or an error needs a person. On `shutdown` both loops finish
/// the statement they are in and return (see [`stop`]); when one stops on an error, so does the
/// other.
pub async fn run(
    pool: sqlx::PgPool,
    config: PushConfig,
    key: ServerKey,
    metrics: Metrics,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), PushError> {
    // Each configured broker sink is a subscription of the operator's before anything is matched.
    crate::sink::register(&pool, &config).await?;
    // Bumped by the matcher whenever it wrote deliveries; each send loop watches it.
    let (queued, _) = watch::channel(0u64);
    let deliverer = Deliverer::new(pool.clone(), key, config.clone(), metrics.clone())?;
    let (signal, stop) = stop::channel();
    let matcher = async {
        let result = match_forever(&pool, &config, &metrics, &queued, &stop).await;
        signal.request();
        result
    };
    // One send loop per lane: a stalled broker holds only its own sink.
    let senders = futures::future::join_all(Lane::all(&config).into_iter().map(|lane| {
        let (deliverer, config, stop, signal) = (&deliverer, &config, &stop, &signal);
        let queued = queued.subscribe();
        async move {
            let result = send_forever(deliverer, &lane, config, queued, stop).await;
            signal.request();
            result
        }
    }));
    let sender = async { senders.await.into_iter().collect::<Result<(), PushError>>() };
    let asked = async {
        tokio::select! {
            () = shutdown => signal.request(),
            () = stop.requested() => {}
        }
    };
    let (matched, sent, ()) = tokio::join!(matcher, sender, asked);
    matched.and(sent)
}

/// Matches events and alarms whenever the indexer announces a change or `poll` passes, until
/// `stop`.
async fn match_forever(
    pool: &sqlx::PgPool,
    config: &PushConfig,
    metrics: &Metrics,
    queued: &watch::Sender<u64>,
    stop: &Stop,
) -> Result<(), PushError> {
    let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
    listener.listen(PACT_CHANNEL).await?;
    while !stop.is_requested() {
        match match_all(pool, config, metrics).await {
            Ok(0) => {}
            Ok(_) => queued.send_modify(|n| *n = n.wrapping_add(1)),
            Err(e) if e.is_fatal() => return Err(e),
            Err(e) if e.is_conflict() => continue,
            Err(e) => tracing::warn!(error = %e, "matching webhooks failed; trying again"),
        }
        // Woken by a notification or the clock, whichever comes first; a batch announces each pact
        // it touched, and one pass matches them all.
        tokio::select! {
            () = stop.requested() => break,
            _ = tokio::time::timeout(config.poll, listener.try_recv()) => {}
        }
        while listener.next_buffered().is_some() {}
    }
    Ok(())
}

/// Every mode's passes until caught up, then the alarms; how many deliveries they wrote.
async fn match_all(pool: &sqlx::PgPool, config: &PushConfig, metrics: &Metrics) -> Result<u64, PushError> {
    let mut written = 0;
    for mode in WebhookMode::ALL {
        loop {
            let matched = dispatch::pass(pool, config, mode).await?;
            metrics.queued(matched.queued, matched.revoked);
            written += matched.queued + matched.revoked;
            if !matched.more {
                break;
            }
        }
    }
    let alarms = alarms::pass(pool, config).await?;
    metrics.queued(alarms, 0);
    Ok(written + alarms)
}

/// Sends what is due in `lane`, then waits for the matcher or `poll` (retries coming due), until
/// `stop`.
async fn send_forever(
    deliverer: &Deliverer,
    lane: &Lane,
    config: &PushConfig,
    mut queued: watch::Receiver<u64>,
    stop: &Stop,
) -> Result<(), PushError> {
    while !stop.is_requested() {
        match deliverer.round(lane, stop).await {
            Ok(n) if n > 0 => continue,
            Ok(_) => {}
            Err(e) if e.is_fatal() => return Err(e),
            Err(e) => tracing::warn!(error = %e, "delivering webhooks failed; trying again"),
        }
        tokio::select! {
            () = stop.requested() => break,
            _ = tokio::time::timeout(config.poll, queued.changed()) => {}
        }
    }
    Ok(())
}
