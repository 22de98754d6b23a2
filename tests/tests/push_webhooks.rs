//! Webhooks (docs/push.md) against the real parts: an anvil, the indexer following it into a real
//! Postgres, `agentpact push` as a process, and a receiving HTTP server whose checks nobody here
//! wrote (tests/python/webhook_receiver.py verifies each EIP-191 signature with eth_account and
//! each HMAC with Python's hmac). A pact's life arrives in order; a receiver down for a while gets
//! everything once back; a reorg of depth 3 after instant delivery revokes exactly the removed
//! events, in order per subscription (one made inside the finality window included), and
//! finalized subscriptions never hear of them; a push process killed mid-batch loses nothing, and
//! one stopped by SIGTERM stops quietly; a review window closing in an hour brings its reminder
//! and its closing notice to the buyer, not the seller; an agent subscribes through its own MCP
//! server, with the official Python SDK as its client, and no IPv6 spelling of loopback gets
//! through; the operator registers, lists and cancels through GraphQL with its token.

use std::collections::BTreeSet;

use agentpact_contracts::{Initiator, WebhookMode};
use agentpact_push::{Filter, Policy};
use agentpact_tests::{
    HarnessError,
    api::{self, TestApi},
    chain::ether,
    index::{caught_up, follow},
    mcp::{binary_env, dev_key},
    pacts::Market,
    postgres::TestDatabase,
    webhooks::{Push, Received, Receiver, journal_keys, loopback, subscribe},
};
use alloy::primitives::Address;
use serde_json::json;

type Result<T = ()> = std::result::Result<T, HarnessError>;

const SECRET: &str = "a-receivers-own-hmac-secret";

/// A market indexed into a fresh database, with `agentpact push` started on it (extra `env`)
/// and its cursors in place, so every event from here on is matched.
struct Stack {
    m: Market,
    db: TestDatabase,
    _indexer: tokio::task::JoinHandle<()>,
    push: Option<Push>,
}

impl Stack {
    async fn start(env: &[(&str, String)]) -> Result<Self> {
        let m = Market::open().await?;
        let db = TestDatabase::create().await?;
        let indexer = follow(&m.chain, db.pool());
        caught_up(&m.chain, db.pool()).await?;
        let push = Push::start(db.url(), m.chain.anvil.chain_id(), env).await?;
        let pool = db.pool().clone();
        agentpact_tests::until(std::time::Duration::from_secs(60), "push's cursors", || async {
            let n: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_cursors").fetch_one(&pool).await?;
            Ok(n == 2)
        })
        .await?;
        Ok(Self { m, db, _indexer: indexer, push: Some(push) })
    }

    fn chain_id(&self) -> u64 {
        self.m.chain.anvil.chain_id()
    }

    async fn subscribe(
        &self,
        receiver: &Receiver,
        mode: WebhookMode,
        filter: Filter,
        secret: Option<&str>,
    ) -> Result<i64> {
        let owner = self.m.cast.buyer;
        Ok(subscribe(self.db.pool(), self.chain_id(), owner, receiver.url(), mode, filter, secret).await?.id)
    }

    /// The journal's pact event keys, in chain order, that are not in `before`.
    async fn journal_since(&self, before: &[String]) -> Result<Vec<String>> {
        let now = journal_keys(self.db.pool(), self.chain_id(), None).await?;
        Ok(now.into_iter().filter(|k| !before.contains(k)).collect())
    }

    /// Waits until `agentpact push` has given up a delivery of `subscription`.
    async fn until_dead_letter(&self, subscription: i64) -> Result {
        let pool = self.db.pool().clone();
        agentpact_tests::until(std::time::Duration::from_secs(60), "a dead letter", || async {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1 AND state = 'dead'",
            )
            .bind(subscription)
            .fetch_one(&pool)
            .await?;
            Ok(n > 0)
        })
        .await
    }

    /// A subscription of `owner` to its own pacts, by the library's call.
    async fn subscribe_as(&self, owner: Address, receiver: &Receiver) -> Result<i64> {
        let (mode, filter) = (WebhookMode::Instant, party(owner));
        Ok(subscribe(self.db.pool(), self.chain_id(), owner, receiver.url(), mode, filter, None).await?.id)
    }
}

fn party(who: Address) -> Filter {
    Filter { party: Some(who), ..Filter::default() }
}

fn everything() -> Filter {
    Filter::default()
}

/// The keys of `subscription`'s deliveries of `kind`, in the order they first arrived.
fn first_arrivals(received: &[Received], subscription: i64, kind: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    received
        .iter()
        .filter(|r| r.subscription() == subscription && r.kind() == kind)
        .filter(|r| seen.insert(r.id.clone()))
        .map(|r| r.id.clone())
        .collect()
}

/// The keys of everything `subscription` was sent (events, revocations, alarms), in the order
/// each first arrived.
fn arrivals(received: &[Received], subscription: i64) -> Vec<String> {
    let mut seen = BTreeSet::new();
    received
        .iter()
        .filter(|r| r.subscription() == subscription && seen.insert(r.id.clone()))
        .map(|r| r.id.clone())
        .collect()
}

/// Every request verified by the receiver, and a body that names the key it was sent under.
fn assert_all_verified(received: &[Received], hmac: bool) {
    for r in received {
        assert!(r.signature_ok, "EIP-191 signature refused by eth_account: {r:?}");
        assert_eq!(r.hmac_ok, hmac.then_some(true), "HMAC by Python's hmac: {r:?}");
        assert_eq!(r.body["idempotencyKey"].as_str(), Some(r.id.as_str()), "{r:?}");
    }
}

#[tokio::test]
async fn a_pacts_whole_life_arrives_in_order_each_signature_verified_independently() -> Result {
    let s = Stack::start(&[]).await?;
    let receiver = Receiver::start(Some(SECRET)).await?;
    let sub = s.subscribe(&receiver, WebhookMode::Instant, party(s.m.cast.buyer), Some(SECRET)).await?;

    let id = s.m.completed(Initiator::Buyer, ether(1)).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let journal = journal_keys(s.db.pool(), s.chain_id(), Some(id)).await?;
    assert!(journal.len() >= 8, "a whole life: {journal:?}");
    let received = receiver
        .until("the pact's events", |r| first_arrivals(r, sub, "event").len() >= journal.len())
        .await?;

    assert_eq!(first_arrivals(&received, sub, "event"), journal, "every event, in chain order");
    assert_all_verified(&received, true);
    let kinds: Vec<&str> = received.iter().filter_map(|r| r.body["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"PactCreated"));
    assert!(kinds.contains(&"WorkApproved"), "{kinds:?}");
    for r in &received {
        assert_eq!(r.body["pactId"].as_str(), Some(id.to_string().as_str()));
        assert_eq!(r.body["mode"].as_str(), Some("instant"));
    }
    Ok(())
}

#[tokio::test]
async fn a_receiver_down_for_a_while_gets_every_event_once_it_is_back() -> Result {
    let s = Stack::start(&[]).await?;
    let mut receiver = Receiver::start(None).await?;
    let sub = s.subscribe(&receiver, WebhookMode::Instant, party(s.m.cast.seller), None).await?;

    receiver.stop().await?;
    let id = s.m.funded(Initiator::Seller, ether(1)).await?;
    s.m.submitted(id).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    // The condition, made: the server has tried and failed more than once.
    let pool = s.db.pool().clone();
    agentpact_tests::until(std::time::Duration::from_secs(60), "failed attempts", || async {
        let n: Option<i32> =
            sqlx::query_scalar("SELECT max(attempts) FROM webhook_deliveries WHERE subscription_id = $1")
                .bind(sub)
                .fetch_one(&pool)
                .await?;
        Ok(n.unwrap_or(0) >= 2)
    })
    .await?;
    assert!(receiver.received()?.is_empty());

    receiver.restart().await?;
    let journal = journal_keys(s.db.pool(), s.chain_id(), Some(id)).await?;
    let received =
        receiver.until("every event", |r| first_arrivals(r, sub, "event").len() >= journal.len()).await?;
    assert_eq!(first_arrivals(&received, sub, "event"), journal);
    assert_all_verified(&received, false);
    let dead: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'dead'")
        .fetch_one(s.db.pool())
        .await?;
    assert_eq!(dead, 0);
    Ok(())
}

/// A reorg of depth 3 after instant delivery, with two subscriptions of each mode: one older than
/// everything, one made inside the finality window (after an event the reorg leaves alone was
/// matched). Each instant subscription hears, in this order, of what it was told before, the
/// revocations of exactly the removed events, then only the new branch's events; finalized ones
/// hear only of the canonical events, in chain order, and never of the removed ones.
#[tokio::test]
async fn a_reorg_of_depth_3_revokes_exactly_the_removed_events_and_finalized_never_sees_them() -> Result {
    let s = Stack::start(&[("FINALITY_DEPTH", "5".into())]).await?;
    let receiver = Receiver::start(None).await?;
    let instant = s.subscribe(&receiver, WebhookMode::Instant, everything(), None).await?;
    let finalized = s.subscribe(&receiver, WebhookMode::Finalized, everything(), None).await?;
    let chain = &s.m.chain;

    // An event the reorg will not touch, matched before the late subscriptions exist.
    let before = journal_keys(s.db.pool(), s.chain_id(), None).await?;
    s.m.create(s.m.terms(Initiator::Buyer, ether(1)).await?).await?;
    caught_up(chain, s.db.pool()).await?;
    let untouched = s.journal_since(&before).await?;
    assert_eq!(untouched.len(), 1);
    receiver.until("instant delivery of the untouched event", |r| arrivals(r, instant) == untouched).await?;
    let late_instant = s.subscribe(&receiver, WebhookMode::Instant, everything(), None).await?;
    let late_finalized = s.subscribe(&receiver, WebhookMode::Finalized, everything(), None).await?;

    let fork = chain.snapshot().await?;
    let at_fork = journal_keys(s.db.pool(), s.chain_id(), None).await?;
    for _ in 0..3 {
        s.m.create(s.m.terms(Initiator::Buyer, ether(1)).await?).await?; // one block each
    }
    caught_up(chain, s.db.pool()).await?;
    let abandoned = s.journal_since(&at_fork).await?;
    assert_eq!(abandoned.len(), 3);
    receiver
        .until("instant delivery of the 3 events", |r| {
            first_arrivals(r, instant, "event").ends_with(&abandoned)
                && arrivals(r, late_instant) == abandoned
        })
        .await?;

    chain.restore(fork).await?;
    s.m.create(s.m.terms(Initiator::Seller, ether(2)).await?).await?;
    for _ in 0..3 {
        chain.mine().await?; // the new branch outgrows the old one
    }
    caught_up(chain, s.db.pool()).await?;
    let canonical = s.journal_since(&at_fork).await?;
    assert_eq!(canonical.len(), 1);
    // The condition, made: each instant subscription was sent the new branch's event, the last
    // thing the reorg queued for it; whatever else the pass queued arrived before it.
    let received = receiver
        .until("the new branch", |r| {
            [instant, late_instant].iter().all(|sub| arrivals(r, *sub).ends_with(&canonical))
        })
        .await?;
    let revocations: Vec<String> = abandoned.iter().map(|k| format!("{k}:revoked")).collect();
    let told = |earlier: &[String]| [earlier, &abandoned, &revocations, &canonical].concat();
    assert_eq!(arrivals(&received, instant), told(&untouched), "told, revoked, then the new branch");
    assert_eq!(
        arrivals(&received, late_instant),
        told(&[]),
        "made inside the finality window: nothing from before it existed, nothing twice"
    );
    for r in received.iter().filter(|r| r.kind() == "revocation") {
        assert_eq!(r.id, format!("{}:revoked", r.body["revokes"].as_str().unwrap_or_default()));
        assert_eq!(r.body["type"], "revocation");
    }

    for _ in 0..6 {
        chain.mine().await?; // past the finality depth of 5
    }
    caught_up(chain, s.db.pool()).await?;
    let received = receiver
        .until("finalized delivery", |r| {
            [finalized, late_finalized].iter().all(|sub| arrivals(r, *sub).ends_with(&canonical))
        })
        .await?;
    let chain_order = [&untouched[..], &canonical].concat();
    assert_eq!(arrivals(&received, finalized), chain_order, "only the canonical events, in chain order");
    assert_eq!(
        arrivals(&received, late_finalized),
        chain_order,
        "made inside the finality window: matched as each event became final"
    );
    assert_all_verified(&received, false);
    Ok(())
}

#[tokio::test]
async fn a_push_process_killed_mid_batch_loses_nothing() -> Result {
    let mut s = Stack::start(&[]).await?;
    let receiver = Receiver::start(None).await?;
    let sub = s.subscribe(&receiver, WebhookMode::Instant, everything(), None).await?;

    receiver.stall()?;
    let id = s.m.completed(Initiator::Seller, ether(1)).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let journal = journal_keys(s.db.pool(), s.chain_id(), Some(id)).await?;
    // The condition, made: a delivery is in flight, the rest of the batch queued behind it.
    receiver.until("a delivery held in flight", |r| r.iter().any(|r| r.stalled)).await?;
    s.push.take().map(Push::kill).expect("started").await?;
    receiver.release()?;

    s.push = Some(Push::start(s.db.url(), s.chain_id(), &[]).await?);
    let received =
        receiver.until("every event", |r| first_arrivals(r, sub, "event").len() >= journal.len()).await?;
    assert_eq!(first_arrivals(&received, sub, "event"), journal, "nothing lost, in order");
    assert_all_verified(&received, false);
    // The receiver logs a request before it answers it: the last one is recorded as delivered
    // once its answer is back.
    let pool = s.db.pool().clone();
    agentpact_tests::until(std::time::Duration::from_secs(60), "every delivery answered", || async {
        let delivered: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1 AND state = 'delivered'",
        )
        .bind(sub)
        .fetch_one(&pool)
        .await?;
        Ok(delivered == i64::try_from(journal.len()).unwrap_or(0))
    })
    .await?;
    Ok(())
}

/// An orderly stop is quiet: SIGTERM ends the process with success, "stopped", and no WARN or
/// ERROR line, with a POST held in flight and matching committing a pass every 10 ms (a commit cut
/// off by the stop made Postgres warn "there is no transaction in progress"), eight times over.
#[tokio::test]
async fn sigterm_stops_push_quietly_with_a_delivery_in_flight() -> Result {
    let fast = [("WEBHOOK_POLL_MS", "10".to_owned())];
    let mut s = Stack::start(&fast).await?;
    let receiver = Receiver::start(None).await?;
    s.subscribe(&receiver, WebhookMode::Instant, everything(), None).await?;

    receiver.stall()?;
    s.m.funded(Initiator::Seller, ether(1)).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    // The condition, made: a POST in flight, its turn's transaction open, matching running.
    receiver.until("a delivery held in flight", |r| r.iter().any(|r| r.stalled)).await?;
    for round in 0..8 {
        let push = match s.push.take() {
            Some(push) => push,
            None => Push::start(s.db.url(), s.chain_id(), &fast).await?,
        };
        let (clean, printed) = push.terminate().await?;
        assert!(clean, "round {round}: exit status after SIGTERM: {printed}");
        assert!(printed.contains("stopped"), "round {round}: {printed}");
        let loud: Vec<&str> = printed.lines().filter(|l| l.contains("WARN") || l.contains("ERROR")).collect();
        assert!(loud.is_empty(), "round {round}: an orderly stop printed {loud:?}\n{printed}");
    }
    receiver.release()?;
    Ok(())
}

#[tokio::test]
async fn a_review_window_closing_in_an_hour_brings_its_reminder_then_its_closing_notice() -> Result {
    // The default reminder time: an hour before.
    let s = Stack::start(&[]).await?;
    let receiver = Receiver::start(None).await?;
    let with_alarms = |who| Filter { alarms: true, ..party(who) };
    let sub = s.subscribe(&receiver, WebhookMode::Instant, with_alarms(s.m.cast.buyer), None).await?;
    // The seller does not act in the review window: its subscription hears of the pact's events,
    // not of the buyer's review.
    let seller = subscribe(
        s.db.pool(),
        s.chain_id(),
        s.m.cast.seller,
        receiver.url(),
        WebhookMode::Instant,
        with_alarms(s.m.cast.seller),
        None,
    )
    .await?
    .id;

    let mut terms = s.m.terms(Initiator::Buyer, ether(1)).await?;
    terms.reviewPeriod = 3600;
    let (id, _) = s.m.create(terms).await?;
    s.m.accept(id, Initiator::Buyer, ether(1)).await?;
    s.m.submitted(id).await?;
    s.m.verified(id, &[90, 80]).await?;
    let closes = s.m.chain.pact.getPact(id).call().await?.verifiedAt + 3600;
    caught_up(&s.m.chain, s.db.pool()).await?;

    let is = |r: &Received, kind: &str| r.subscription() == sub && r.kind() == kind;
    let received = receiver.until("the reminder", |r| r.iter().any(|r| is(r, "reminder"))).await?;
    let reminder = received.iter().find(|r| is(r, "reminder")).expect("found");
    assert_eq!(reminder.body["window"], "review");
    assert_eq!(reminder.body["status"], "PENDING_APPROVAL");
    assert_eq!(reminder.body["pactId"], id.to_string());
    assert_eq!(reminder_closes(reminder), closes);
    assert!(!received.iter().any(|r| is(r, "closed")), "not closed yet");

    s.m.chain.increase_time(3601).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let received = receiver.until("the closing notice", |r| r.iter().any(|r| is(r, "closed"))).await?;
    let closed = received.iter().find(|r| is(r, "closed")).expect("found");
    assert_eq!(closed.body["window"], "review");
    assert_eq!(reminder_closes(closed), closes);
    assert_eq!(received.iter().filter(|r| is(r, "reminder")).count(), 1, "one reminder");

    // The condition, made: an event after both alarms reaches the seller's subscription, in
    // order behind anything queued for it before.
    agentpact_tests::chain::send(s.m.chain.pact.autoApprove(id)).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let approved = |r: &Received| r.subscription() == seller && r.body["event"] == "WorkApproved";
    let received = receiver.until("the seller's approval event", |r| r.iter().any(approved)).await?;
    let sellers: Vec<&str> =
        received.iter().filter(|r| r.subscription() == seller).map(Received::kind).collect();
    assert!(sellers.iter().all(|k| *k == "event"), "no review alarm for the seller: {sellers:?}");
    assert_all_verified(&received, false);
    Ok(())
}

/// Each stage of a pact of several waits in its own window: stage 1's review, while stage 0 (the
/// pact's status) is still being worked on, brings the buyer its reminder and its closing notice,
/// naming the stage in the body and the key; nothing is announced of stage 0's deadline a day
/// away, and a one-stage pact's key keeps its shape (the test above).
#[tokio::test]
async fn each_stage_of_a_pact_brings_the_alarms_of_its_own_window() -> Result {
    use agentpact_tests::chain::{hash, send};
    let s = Stack::start(&[]).await?;
    let receiver = Receiver::start(None).await?;
    let sub = s
        .subscribe(&receiver, WebhookMode::Instant, Filter { alarms: true, ..party(s.m.cast.buyer) }, None)
        .await?;
    let (pact, cast) = (&s.m.chain.pact, &s.m.cast);
    let (mut terms, stages) =
        s.m.staged_terms(Address::ZERO, Initiator::Buyer, &[ether(1), ether(1)]).await?;
    terms.reviewPeriod = 3600;
    let stake = agentpact_tests::pacts::staged_stake(&stages);
    let (id, _) = s.m.create_staged(terms, stages).await?;
    send(pact.acceptPact(id).from(cast.seller).value(stake)).await?;
    send(pact.startWork(id).from(cast.seller)).await?;
    send(pact.submitStage(id, 1, hash(5)).from(cast.seller)).await?;
    for oracle in &cast.oracles {
        send(pact.scoreStage(id, 1, 90, hash(6)).from(*oracle)).await?;
    }
    send(pact.finalizeStage(id, 1).from(cast.stranger)).await?;
    let closes = pact.getStage(id, 1).call().await?.verifiedAt + 3600;
    caught_up(&s.m.chain, s.db.pool()).await?;

    let is = |r: &Received, kind: &str| r.subscription() == sub && r.kind() == kind;
    let received = receiver.until("stage 1's reminder", |r| r.iter().any(|r| is(r, "reminder"))).await?;
    let reminder = received.iter().find(|r| is(r, "reminder")).expect("found");
    assert_eq!((&reminder.body["window"], &reminder.body["stage"]), (&json!("review"), &json!(1)));
    assert_eq!(reminder.body["status"], "PENDING_APPROVAL", "the stage's status, not the pact's IN_PROGRESS");
    assert_eq!(reminder_closes(reminder), closes);
    let key = format!("{}:{id}:1:review:{closes}:reminder", s.chain_id());
    assert_eq!(reminder.body["idempotencyKey"], json!(key));

    s.m.chain.increase_time(3601).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let received = receiver.until("stage 1's closing notice", |r| r.iter().any(|r| is(r, "closed"))).await?;
    let closed = received.iter().find(|r| is(r, "closed")).expect("found");
    assert_eq!((&closed.body["window"], &closed.body["stage"]), (&json!("review"), &json!(1)));
    let alarms: Vec<_> = received
        .iter()
        .filter(|r| r.subscription() == sub && r.kind() != "event")
        .map(|r| r.body["stage"].clone())
        .collect();
    assert_eq!(alarms, [json!(1), json!(1)], "stage 1's two alarms and no other");
    Ok(())
}

/// The `closesAt` of an alarm (Unix seconds, as every time a body carries).
fn reminder_closes(r: &Received) -> u64 {
    r.body["closesAt"].as_u64().unwrap_or_default()
}

/// A subscription id as the tools answer it (a decimal string, docs/mcp.md §Input); 0 for anything
/// else, which no subscription has.
fn id_of(answered: &serde_json::Value) -> i64 {
    answered.as_str().and_then(|id| id.parse().ok()).unwrap_or_default()
}

/// Calls `tool` of the real `agentpact mcp` binary with `env` through the official Python SDK's
/// default client (the harness's `mcp_call`).
async fn sdk_call(env: &[(&str, String)], tool: &str, args: serde_json::Value) -> Result<serde_json::Value> {
    agentpact_tests::python::mcp_call(env.to_vec(), tool, &args).await
}

/// An agent asleep between jobs subscribes through its own MCP server (the official Python
/// SDK's client in its default mode, the `agentpact mcp` binary), signed with its key: its pact's
/// events arrive verified, the HMAC secret and the URL's token never come back, the operator's
/// target ranges and cap per owner hold, dead letters are listed with why, and cancelling stops it.
#[tokio::test]
async fn an_agent_subscribes_through_its_mcp_server_and_the_operators_policy_holds() -> Result {
    // One attempt per delivery: a target nobody answers becomes a dead letter at once.
    let s = Stack::start(&[("WEBHOOK_MAX_ATTEMPTS", "1".into())]).await?;
    let receiver = Receiver::start(Some(SECRET)).await?;
    let nobody = format!("http://127.0.0.1:{}/hook", agentpact_tests::cli::free_port()?);
    let mut env = binary_env(&s.m.chain, &s.m.chain.anvil.endpoint(), s.db.url());
    env.extend([
        ("PRIVATE_KEY", format!("0x{}", alloy::hex::encode(dev_key(&s.m.chain, 1)?.to_bytes()))),
        ("WEBHOOK_ALLOW_TARGETS", "127.0.0.1/32".to_owned()),
        ("WEBHOOK_MAX_PER_OWNER", "2".to_owned()),
    ]);
    let buyer = s.m.cast.buyer;

    let with_token = format!("{}?token=receivers-query-token", receiver.url());
    let args = json!({ "url": with_token, "hmacSecret": SECRET, "kinds": ["PactCreated", "PactAccepted"] });
    let made = sdk_call(&env, "subscribe_webhook", args).await?;
    assert_eq!(made["isError"], false, "{made}");
    let sub = id_of(&made["structured"]["subscriptionId"]);
    assert_eq!(made["structured"]["url"], receiver.url().as_str(), "shown without its query: {made}");
    assert_eq!(made["structured"]["hmac"], true);
    let said = made.to_string();
    assert!(!said.contains(SECRET) && !said.contains("receivers-query-token"), "{said}");
    let stored: (Vec<u8>, Option<Vec<u8>>) =
        sqlx::query_as("SELECT owner, party FROM webhook_subscriptions WHERE id = $1")
            .bind(sub)
            .fetch_one(s.db.pool())
            .await?;
    assert_eq!(stored, (buyer.to_vec(), Some(buyer.to_vec())), "owned by the key, its own pacts");

    let dead = sdk_call(&env, "subscribe_webhook", json!({ "url": nobody, "alarms": false })).await?;
    assert_eq!(dead["isError"], false, "{dead}");
    let dead_sub = id_of(&dead["structured"]["subscriptionId"]);
    let metadata =
        sdk_call(&env, "subscribe_webhook", json!({ "url": "http://169.254.169.254/latest" })).await?;
    assert_eq!(metadata["structured"]["error"]["code"], "REFUSED", "{metadata}");
    assert!(metadata["text"].as_str().unwrap_or_default().contains("WEBHOOK_ALLOW_TARGETS"), "{metadata}");
    let third = sdk_call(&env, "subscribe_webhook", json!({ "url": receiver.url() })).await?;
    assert_eq!(third["structured"]["error"]["code"], "REFUSED", "{third}");
    assert!(third["text"].as_str().unwrap_or_default().contains("already has 2 active"), "{third}");

    let id = s.m.funded(Initiator::Buyer, ether(1)).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let received =
        receiver.until("created and accepted", |r| first_arrivals(r, sub, "event").len() >= 2).await?;
    assert_all_verified(&received, true);
    let kinds: Vec<&str> = received.iter().filter_map(|r| r.body["event"].as_str()).collect();
    assert_eq!(kinds, ["PactCreated", "PactAccepted"], "only the kinds asked for, of pact {id}");

    s.until_dead_letter(dead_sub).await?;
    let listed = sdk_call(&env, "list_webhooks", json!({})).await?;
    assert_eq!(listed["isError"], false, "{listed}");
    let webhooks = listed["structured"]["webhooks"].as_array().cloned().unwrap_or_default();
    let ids: Vec<i64> = webhooks.iter().map(|w| id_of(&w["subscriptionId"])).collect();
    assert_eq!(ids, [dead_sub, sub], "newest first, only this wallet's");
    assert!(webhooks[1]["delivered"].as_u64() >= Some(2), "{listed}");
    let letter = &webhooks[0]["deadLetters"][0];
    assert_eq!(letter["kind"], "event", "{listed}");
    assert_eq!(letter["attempts"], 1, "{listed}");
    assert!(letter["lastError"].as_str().is_some_and(|e| !e.contains(&nobody)), "why, not where: {listed}");
    assert!(
        letter["idempotencyKey"].as_str().is_some_and(|k| k.starts_with(&format!("{}:0x", s.chain_id())))
    );
    assert!(!listed.to_string().contains(SECRET), "{listed}");

    let cancelled = sdk_call(&env, "cancel_webhook", json!({ "subscriptionId": dead_sub })).await?;
    assert_eq!(id_of(&cancelled["structured"]["subscriptionId"]), dead_sub, "{cancelled}");
    let again = sdk_call(&env, "cancel_webhook", json!({ "subscriptionId": dead_sub })).await?;
    assert_eq!(again["structured"]["error"]["code"], "INVALID_INPUT", "{again}");
    let sellers = s.subscribe_as(s.m.cast.seller, &receiver).await?;
    let not_mine = sdk_call(&env, "cancel_webhook", json!({ "subscriptionId": sellers })).await?;
    assert_eq!(not_mine["structured"]["error"]["code"], "INVALID_INPUT", "{not_mine}");
    let listed = sdk_call(&env, "list_webhooks", json!({ "deadLetters": 0 })).await?;
    let webhooks = listed["structured"]["webhooks"].as_array().cloned().unwrap_or_default();
    // Times are Unix seconds and an empty field is null, never left out (docs/mcp.md §Outputs).
    assert!(webhooks[0]["cancelledAt"].is_i64() && webhooks[0]["createdAt"].is_i64(), "{listed}");
    assert!(webhooks[1].get("cancelledAt").is_some_and(serde_json::Value::is_null), "{listed}");
    assert_eq!(webhooks[0]["deadLetters"], json!([]), "none asked for");
    // A slot freed: the cap counts active subscriptions.
    let replaced =
        sdk_call(&env, "subscribe_webhook", json!({ "url": receiver.url(), "mode": "finalized" })).await?;
    assert_eq!(replaced["structured"]["mode"], "finalized", "{replaced}");
    Ok(())
}

/// The IPv4-compatible, IPv4-translated and 6to4 spellings of loopback, registered through the
/// agent's own MCP server (the official Python SDK, the `agentpact` binary): each refused as
/// loopback is, nothing stored.
#[tokio::test]
async fn ipv6_spellings_of_loopback_are_refused_as_webhook_targets() -> Result {
    let m = Market::open().await?;
    let db = TestDatabase::create().await?;
    let mut env = binary_env(&m.chain, &m.chain.anvil.endpoint(), db.url());
    env.push(("PRIVATE_KEY", format!("0x{}", alloy::hex::encode(dev_key(&m.chain, 1)?.to_bytes()))));
    for host in ["[::127.0.0.1]", "[::ffff:0:7f00:1]", "[2002:7f00:1::]"] {
        let url = format!("http://{host}:9/hook");
        let refused = sdk_call(&env, "subscribe_webhook", json!({ "url": url })).await?;
        assert_eq!(refused["structured"]["error"]["code"], "REFUSED", "{host}: {refused}");
        assert!(refused["text"].as_str().unwrap_or_default().contains("internal address"), "{refused}");
    }
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM webhook_subscriptions").fetch_one(db.pool()).await?;
    assert_eq!(stored, 0, "nothing stored by a refused registration");
    Ok(())
}

/// Posts `query` to `api` with `token` as the bearer (none: no header).
async fn as_operator(
    api: &TestApi,
    token: Option<&str>,
    query: &str,
    variables: serde_json::Value,
) -> Result<serde_json::Value> {
    let mut request = api
        .client()
        .post(format!("{}/graphql", api.base))
        .json(&json!({ "query": query, "variables": variables }));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.map_err(|e| HarnessError::Process(e.to_string()))?;
    answer.json().await.map_err(|e| HarnessError::Process(e.to_string()))
}

/// The operator, with its token, registers a subscription for an agent through GraphQL (held to
/// the same policy), sees its dead letters and cancels it; without the token, or with another,
/// every operator field is FORBIDDEN.
#[tokio::test]
async fn the_operator_registers_lists_and_cancels_webhooks_through_graphql() -> Result {
    const TOKEN: &str = "the-operators-own-long-token";
    let s = Stack::start(&[("WEBHOOK_MAX_ATTEMPTS", "1".into())]).await?;
    let nobody = format!("http://127.0.0.1:{}/hook", agentpact_tests::cli::free_port()?);
    let policy = Policy { targets: loopback(), max_per_owner: 1 };
    let operator = agentpact_api::OperatorConfig { token: TOKEN.into(), policy };
    let config = agentpact_api::ServeConfig { operator: Some(operator), ..api::config(s.chain_id()) };
    let api = TestApi::start(s.db.pool(), config).await?;
    let seller = s.m.cast.seller;
    let register = "mutation($input: WebhookInput!) {
        registerWebhook(input: $input) { id owner url mode hmac dead } }";
    let input = |url: &str| {
        json!({ "input": { "owner": seller.to_string(), "url": url, "kinds": ["PactCreated"],
                                               "hmacSecret": SECRET, "party": seller.to_string() } })
    };
    let list = "query($owner: Address!) { webhooks(owner: $owner) {
        id url cancelledAt dead deadLetters { idempotencyKey kind attempts lastError } } }";
    let owner = json!({ "owner": seller.to_string() });

    for token in [None, Some("the-operators-own-long-tokem")] {
        let refused = as_operator(&api, token, register, input(&nobody)).await?;
        assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
        let refused = as_operator(&api, token, list, owner.clone()).await?;
        assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    }
    let count: i64 =
        sqlx::query_scalar("SELECT count(*) FROM webhook_subscriptions").fetch_one(s.db.pool()).await?;
    assert_eq!(count, 0, "nothing stored by a refused request");

    let private = as_operator(&api, Some(TOKEN), register, input("http://10.1.2.3/hook")).await?;
    assert_eq!(private["errors"][0]["extensions"]["code"], "BAD_ARGUMENT", "{private}");
    let made = as_operator(&api, Some(TOKEN), register, input(&format!("{nobody}?key=q"))).await?;
    let made = &made["data"]["registerWebhook"];
    assert_eq!((made["url"].as_str(), made["hmac"].as_bool()), (Some(nobody.as_str()), Some(true)), "{made}");
    assert!(!made.to_string().contains(SECRET));
    let capped = as_operator(&api, Some(TOKEN), register, input(&nobody)).await?;
    assert_eq!(
        capped["errors"][0]["extensions"]["code"], "BAD_ARGUMENT",
        "the cap holds for the operator: {capped}"
    );

    s.m.funded(Initiator::Seller, ether(1)).await?;
    caught_up(&s.m.chain, s.db.pool()).await?;
    let id = made["id"].as_i64().unwrap_or_default();
    s.until_dead_letter(id).await?;
    let listed = as_operator(&api, Some(TOKEN), list, owner.clone()).await?;
    let letter = &listed["data"]["webhooks"][0]["deadLetters"][0];
    assert_eq!((letter["kind"].as_str(), letter["attempts"].as_u64()), (Some("event"), Some(1)), "{listed}");
    assert!(letter["lastError"].as_str().is_some_and(|e| !e.contains("127.0.0.1")), "{listed}");

    let cancel = "mutation($owner: Address!, $id: Int!) { cancelWebhook(owner: $owner, id: $id) }";
    let vars = json!({ "owner": seller.to_string(), "id": id });
    let cancelled = as_operator(&api, Some(TOKEN), cancel, vars.clone()).await?;
    assert_eq!(cancelled["data"]["cancelWebhook"], true, "{cancelled}");
    let again = as_operator(&api, Some(TOKEN), cancel, vars).await?;
    assert_eq!(again["errors"][0]["extensions"]["code"], "BAD_ARGUMENT", "{again}");
    let listed = as_operator(&api, Some(TOKEN), list, owner).await?;
    assert!(listed["data"]["webhooks"][0]["cancelledAt"].is_string(), "{listed}");
    Ok(())
}
