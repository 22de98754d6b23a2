//! Clock alarms, computed from the index on the chain's clock (the indexed block's time: the clock
//! the contract checks). For each pact waiting in a window ([`rules::window`]) the subscriptions
//! with alarms that match it get a `reminder` once the window closes within
//! `remind_before`, and a `closed` notice once it closed with the pact still in it. A subscription
//! filtered by party hears only of the windows that party acts in ([`actor`]). Keys name the
//! pact, the window and its closing second, so each is written once per subscription however many
//! passes see it. Closed notices cover the chain time since the last pass
//! (`webhook_alarm_cursors`): none is lost while the process is down, and a new deployment does
//! not announce windows that closed before it started.

use agentpact_contracts::{DeliveryState, NoticeKind, PactStatus, WindowKind, closed_set, rules};
use agentpact_schema::i64_of;
use chrono::{DateTime, Utc};
use sqlx::{Postgres, Transaction};

use crate::{PushConfig, PushError, dispatch};

closed_set! {
    /// The party of a pact whose act a window waits for, named as in the alarm query.
    pub enum Actor {
        /// The counterparty the terms name: the only one who may accept (the buyer of a seller's
        /// offer, the seller of a buyer's request).
        Counterparty => "counterparty",
        /// The seller: it starts and submits the work.
        Seller => "seller",
        /// The pact's oracles: they score the work.
        Oracles => "oracles",
        /// The buyer: it approves or rejects verified work.
        Buyer => "buyer",
        /// The arbitrator: it rules on the dispute.
        Arbitrator => "arbitrator",
    }
}

impl Actor {
    /// How documents and descriptions name it.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::Counterparty => "the named counterparty",
            Self::Seller => "the seller",
            Self::Oracles => "the oracles",
            Self::Buyer => "the buyer",
            Self::Arbitrator => "the arbitrator",
        }
    }
}

/// Who acts in `window`: a subscription filtered by party gets the window's reminder and closing
/// notice only when its party is this actor of the pact (an unfiltered one gets every window's).
/// Exits anyone may take once a window closed (`claimTimeout`, `autoApprove`) are not acts a
/// reminder is for.
pub const fn actor(window: WindowKind) -> Actor {
    match window {
        WindowKind::Acceptance => Actor::Counterparty,
        WindowKind::Deadline => Actor::Seller,
        WindowKind::Verification => Actor::Oracles,
        WindowKind::Review => Actor::Buyer,
        WindowKind::Dispute => Actor::Arbitrator,
    }
}

/// [`actor`] as one sentence, window by window: what `subscribe_webhook` and docs/push.md say.
pub fn actors() -> String {
    let each: Vec<String> =
        WindowKind::ALL.iter().map(|w| format!("{} — {}", w.name(), actor(*w).describe())).collect();
    each.join("; ")
}

/// One pass: reminders and closed notices as of the indexed block's time; returns how many
/// deliveries it wrote.
pub async fn pass(pool: &sqlx::PgPool, config: &PushConfig) -> Result<u64, PushError> {
    let mut tx = pool.begin().await?;
    let Some(now) = dispatch::indexed(&mut tx, config.chain_id).await?.and_then(|i| i.time) else {
        return Ok(0);
    };
    let since = sqlx::query_scalar!(
        "SELECT until FROM webhook_alarm_cursors WHERE chain_id = $1 FOR UPDATE",
        i64_of(config.chain_id)
    )
    .fetch_optional(&mut *tx)
    .await?;
    let since = since.unwrap_or(now);
    let remind_until =
        now + chrono::Duration::from_std(config.remind_before).unwrap_or(chrono::Duration::zero());
    // Reminders: windows closing in (now, now + remind_before]. Closed: in [since, now).
    let mut written = queue(&mut tx, config, NoticeKind::Reminder, (now, remind_until), now).await?;
    if now > since {
        written += queue(&mut tx, config, NoticeKind::Closed, (since, now), now).await?;
    }
    sqlx::query!(
        "INSERT INTO webhook_alarm_cursors (chain_id, until) VALUES ($1, $2)
         ON CONFLICT (chain_id) DO UPDATE SET until = GREATEST(webhook_alarm_cursors.until, $2)",
        i64_of(config.chain_id),
        now
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(written)
}

/// Every status that waits in a window, with what the alarm query (`alarms.sql`) binds for it.
struct Windows {
    statuses: Vec<i16>,
    windows: Vec<&'static str>,
    status_names: Vec<&'static str>,
    actors: Vec<&'static str>,
    since: Vec<&'static str>,
    secs: Vec<f64>,
    by_review: Vec<bool>,
}

impl Windows {
    fn new() -> Self {
        let mut w = Self {
            statuses: Vec::new(),
            windows: Vec::new(),
            status_names: Vec::new(),
            actors: Vec::new(),
            since: Vec::new(),
            secs: Vec::new(),
            by_review: Vec::new(),
        };
        for (status, window) in PactStatus::ALL.iter().filter_map(|s| rules::window(*s).map(|w| (*s, w))) {
            let closing = rules::closing(window);
            let (secs, by_review) = match closing.after {
                rules::After::Seconds(secs) => (i64_of(secs) as f64, false),
                rules::After::ReviewPeriod => (0.0, true),
            };
            w.statuses.push(i16::from(status.code()));
            w.windows.push(window.name());
            w.status_names.push(status.name());
            w.actors.push(actor(window).name());
            w.since.push(closing.since.name());
            w.secs.push(secs);
            w.by_review.push(by_review);
        }
        w
    }
}

/// Writes `kind` notices for the windows closing in `range` (reminders: after its start up to its
/// end; closed: from its start to before its end), as of chain time `now`, with the alarm query
/// (`alarms.sql`, checked against the schema at compile time). Each window's closing rule comes
/// bound as values, one row per status ([`rules::closing`]): the pact field it counts from
/// (`since`, mapped there to its column) and how long after (`secs`, or the pact's review period
/// where `by_review`).
async fn queue(
    tx: &mut Transaction<'_, Postgres>,
    config: &PushConfig,
    kind: NoticeKind,
    (start, end): (DateTime<Utc>, DateTime<Utc>),
    now: DateTime<Utc>,
) -> Result<u64, PushError> {
    let w = Windows::new();
    let done = sqlx::query_file!(
        "src/alarms.sql",
        i64_of(config.chain_id),
        &w.statuses,
        &w.windows as &[&str],
        &w.status_names as &[&str],
        &w.actors as &[&str],
        &w.since as &[&str],
        &w.secs,
        &w.by_review,
        kind.name(),
        start,
        end,
        NoticeKind::Reminder.name(),
        now,
        DeliveryState::Pending.name()
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/push.md states who acts in each window in the words of [`actors`], so the document
    /// cannot drift from what is sent.
    #[test]
    fn the_document_says_who_acts_in_each_window_as_the_code_does() {
        let doc = include_str!("../../docs/push.md").split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(doc.contains(&actors()), "docs/push.md §Clock alarms must say: {}", actors());
    }

    /// The query maps every name it is bound to a column: a window counting from a pact field, or
    /// waiting for an actor, the query does not know would close at NULL and never ring.
    #[test]
    fn the_query_maps_every_field_and_actor_the_windows_are_bound_with() {
        let query = include_str!("alarms.sql");
        let w = Windows::new();
        for name in w.since.iter().chain(&w.actors) {
            assert!(query.contains(&format!("WHEN '{name}' THEN")), "the alarm query does not map {name:?}");
        }
        assert_eq!(w.statuses.len(), PactStatus::ALL.iter().filter(|s| !s.is_terminal()).count());
    }
}
