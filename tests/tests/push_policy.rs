//! Who may register a webhook, and where it may point (docs/push.md §Safety): a target on a
//! private, loopback or link-local range is refused unless the operator opened it; a registration
//! must carry its owner's fresh signature; one owner's subscriptions are capped, even when 1,000
//! registrations race.

use agentpact_contracts::WebhookMode;
use agentpact_push::{
    Filter, Policy, Refusal, Registration,
    subscription::{self, Proof, RegisterError},
    target::TargetError,
};
use agentpact_tests::{HarnessError, postgres::TestDatabase, webhooks::loopback};
use alloy::signers::{SignerSync, local::PrivateKeySigner};
use futures::StreamExt;

type Result = std::result::Result<(), HarnessError>;

const CHAIN: u64 = 84532;

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn registration(owner: &PrivateKeySigner, url: &str, issued_at: u64) -> Registration {
    Registration {
        chain_id: CHAIN,
        owner: owner.address(),
        url: url.into(),
        mode: WebhookMode::Instant,
        filter: Filter { party: Some(owner.address()), alarms: true, ..Filter::default() },
        issued_at,
    }
}

fn signed(by: &PrivateKeySigner, r: &Registration) -> Proof {
    Proof::Signed(by.sign_message_sync(r.text().as_bytes()).expect("a local key signs"))
}

fn refusal(result: std::result::Result<subscription::Subscription, RegisterError>) -> Option<Refusal> {
    match result {
        Err(RegisterError::Refused(r)) => Some(r),
        _ => None,
    }
}

async fn active(db: &TestDatabase) -> std::result::Result<i64, HarnessError> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM webhook_subscriptions WHERE cancelled_at IS NULL")
        .fetch_one(db.pool())
        .await?)
}

#[tokio::test]
async fn a_private_target_is_refused_unless_the_operator_opened_its_range() -> Result {
    let db = TestDatabase::create().await?;
    let agent = PrivateKeySigner::random();
    let closed = Policy::default();
    for url in [
        "http://127.0.0.1:9/hook",
        "http://10.0.0.7/hook",
        "http://169.254.169.254/latest",
        "http://localhost:9/",
    ] {
        let r = registration(&agent, url, now());
        let result = subscription::register(db.pool(), &closed, &r, signed(&agent, &r), None).await;
        assert!(matches!(refusal(result), Some(Refusal::Target(TargetError::Internal(_)))), "{url}");
    }
    assert_eq!(active(&db).await?, 0, "a refusal stores nothing");

    let open = Policy { targets: loopback(), ..Policy::default() };
    let r = registration(&agent, "http://127.0.0.1:9/hook?token=s3cret", now());
    let stored =
        subscription::register(db.pool(), &open, &r, signed(&agent, &r), Some("sixteen-chars-ok")).await;
    let stored = stored.map_err(|e| HarnessError::Process(e.to_string()))?;
    assert_eq!(stored.url, "http://127.0.0.1:9/hook", "the query string (a token) is never shown back");
    assert!(stored.hmac);
    Ok(())
}

#[tokio::test]
async fn a_registration_needs_its_owners_fresh_signature() -> Result {
    let db = TestDatabase::create().await?;
    let policy = Policy { targets: loopback(), ..Policy::default() };
    let (agent, stranger) = (PrivateKeySigner::random(), PrivateKeySigner::random());
    let r = registration(&agent, "http://127.0.0.1:9/hook", now());
    let result = subscription::register(db.pool(), &policy, &r, signed(&stranger, &r), None).await;
    assert_eq!(refusal(result), Some(Refusal::NotSigned(agent.address())));
    let old = registration(&agent, "http://127.0.0.1:9/hook", now() - subscription::SIGNATURE_LIFETIME - 1);
    let result = subscription::register(db.pool(), &policy, &old, signed(&agent, &old), None).await;
    assert!(matches!(refusal(result), Some(Refusal::Stale { .. })));
    let result = subscription::register(db.pool(), &policy, &r, signed(&agent, &r), Some("short")).await;
    assert_eq!(refusal(result), Some(Refusal::Secret));
    assert_eq!(active(&db).await?, 0);

    let stored = subscription::register(db.pool(), &policy, &r, signed(&agent, &r), None)
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    // Cancelling: only with the owner's signature of the cancellation.
    let issued = now();
    let text = subscription::cancellation_text(CHAIN, agent.address(), stored.id, issued);
    let by_stranger = Proof::Signed(stranger.sign_message_sync(text.as_bytes()).expect("signs"));
    let refused =
        subscription::cancel(db.pool(), CHAIN, agent.address(), stored.id, issued, by_stranger).await;
    assert!(matches!(refused, Err(RegisterError::Refused(Refusal::NotSigned(_)))));
    let by_owner = Proof::Signed(agent.sign_message_sync(text.as_bytes()).expect("signs"));
    subscription::cancel(db.pool(), CHAIN, agent.address(), stored.id, issued, by_owner)
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
    assert_eq!(active(&db).await?, 0);
    Ok(())
}

#[tokio::test]
async fn a_thousand_racing_registrations_of_one_owner_stop_at_the_cap() -> Result {
    let db = TestDatabase::create().await?;
    let policy = Policy { targets: loopback(), ..Policy::default() };
    let agent = PrivateKeySigner::random();
    let results: Vec<_> = futures::stream::iter(0..1_000)
        .map(|i| {
            let (pool, policy, agent) = (db.pool().clone(), policy.clone(), agent.clone());
            async move {
                let r = registration(&agent, &format!("http://127.0.0.1:9/hook/{i}"), now());
                subscription::register(&pool, &policy, &r, signed(&agent, &r), None).await
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let stored = results.iter().filter(|r| r.is_ok()).count();
    let capped = results
        .iter()
        .filter(|r| matches!(r, Err(RegisterError::Refused(Refusal::TooMany { cap: 100, .. }))))
        .count();
    assert_eq!((stored, capped), (100, 900));
    assert_eq!(active(&db).await?, 100);
    // Another owner is not held to the first one's cap.
    let other = PrivateKeySigner::random();
    let r = registration(&other, "http://127.0.0.1:9/hook", now());
    assert!(subscription::register(db.pool(), &policy, &r, signed(&other, &r), None).await.is_ok());
    Ok(())
}
