//! Webhook subscriptions: a URL, a mode and a filter, owned by an address. An agent registers by
//! signing [`Registration::text`] with its key (EIP-191); the operator registers for anyone.
//! Every registration is held to the [`Policy`]: a permitted target, a cap per owner.

use std::time::{SystemTime, UNIX_EPOCH};

use agentpact_contracts::{DeliveryState, EventKind, WebhookMode};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{Address, Signature, U256};
use chrono::{DateTime, Utc};

use crate::{Policy, PushError, target::TargetError};

/// What a subscription hears of. Every condition given must hold; an empty list is any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Pacts this address is a party of (creator, buyer, seller, arbitrator or oracle).
    pub party: Option<Address>,
    /// Only these pacts.
    pub pacts: Vec<U256>,
    /// Only these event kinds (clock alarms are not events: `alarms` says whether they come).
    pub kinds: Vec<EventKind>,
    /// Only pacts paid in these currencies (the zero address is ETH).
    pub currencies: Vec<Address>,
    /// Whether the reminders and window-closed notices of the matched pacts come too (with a
    /// `party`, of the windows it acts in: [`crate::alarms::actor`]).
    pub alarms: bool,
}

/// Most pacts, kinds or currencies one filter may list.
pub const MAX_LISTED: usize = 100;
/// Shortest HMAC secret a subscription takes, in characters (shorter could be guessed).
pub const MIN_SECRET: usize = 16;
/// Longest HMAC secret a subscription takes, in characters.
pub const MAX_SECRET: usize = 256;
/// Most dead letters one listing shows of a subscription.
pub const MAX_DEAD_LETTERS: u32 = 50;
/// Seconds a signed registration or cancellation stays valid after (and before) it was issued.
pub const SIGNATURE_LIFETIME: u64 = 600;

/// A request to be told, as its owner signs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The chain.
    pub chain_id: u64,
    /// Who asks, and whose cap it counts against.
    pub owner: Address,
    /// Where to POST.
    pub url: String,
    /// Instant or finalized.
    pub mode: WebhookMode,
    /// What to deliver.
    pub filter: Filter,
    /// When it was signed (Unix seconds).
    pub issued_at: u64,
}

impl Registration {
    /// The text the owner signs (EIP-191): every field, one per line, so a signature covers
    /// exactly what is stored.
    pub fn text(&self) -> String {
        let list = |items: Vec<String>| if items.is_empty() { "any".to_owned() } else { items.join(",") };
        let f = &self.filter;
        format!(
            "AgentPact webhook subscription\nchain: {}\nowner: {}\nurl: {}\nmode: {}\nparty: {}\npacts: {}\nkinds: {}\ncurrencies: {}\nalarms: {}\nissued: {}",
            self.chain_id,
            self.owner.to_checksum(None),
            self.url,
            self.mode,
            f.party.map_or("any".to_owned(), |p| p.to_checksum(None)),
            list(f.pacts.iter().map(U256::to_string).collect()),
            list(f.kinds.iter().map(|k| k.name().to_owned()).collect()),
            list(f.currencies.iter().map(|c| c.to_checksum(None)).collect()),
            if f.alarms { "yes" } else { "no" },
            self.issued_at,
        )
    }
}

/// The text an owner signs to cancel subscription `id` on `chain_id` at `issued_at`.
pub fn cancellation_text(chain_id: u64, owner: Address, id: i64, issued_at: u64) -> String {
    format!(
        "AgentPact webhook cancellation\nchain: {chain_id}\nowner: {}\nsubscription: {id}\nissued: {issued_at}",
        owner.to_checksum(None)
    )
}

/// Who vouches for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// The owner's EIP-191 signature of the request's text.
    Signed(Signature),
    /// The operator (GraphQL with the operator's token).
    Operator,
}

/// A request refused; each sentence says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The target is not allowed.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The owner holds the most subscriptions it may.
    #[error(
        "{owner} already has {cap} active webhook subscriptions on this chain, the most one owner may hold: cancel one first"
    )]
    TooMany {
        /// The owner.
        owner: Address,
        /// The cap.
        cap: u32,
    },
    /// The signature is not the owner's.
    #[error("the signature does not recover to {0}: sign the request's text with the owner's key")]
    NotSigned(Address),
    /// Signed too long ago (or in the future).
    #[error(
        "the request was signed at {issued_at}, more than {SIGNATURE_LIFETIME} s from now ({now}): sign it again"
    )]
    Stale {
        /// When it says it was signed.
        issued_at: u64,
        /// Now.
        now: u64,
    },
    /// An HMAC secret too short to resist guessing, or too long to store.
    #[error("the HMAC secret must be {MIN_SECRET} to {MAX_SECRET} characters: choose a longer random one")]
    Secret,
    /// A filter list too long.
    #[error("a filter lists at most {MAX_LISTED} pacts, kinds or currencies: subscribe by party instead")]
    TooManyListed,
    /// No such subscription of this owner.
    #[error("no active webhook subscription {0} of this owner on this chain: list them to see their ids")]
    Unknown(i64),
}

/// What registering or cancelling can end in besides success.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// The request is refused: the caller's to fix.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The database failed.
    #[error(transparent)]
    Push(#[from] PushError),
}

impl From<sqlx::Error> for RegisterError {
    fn from(e: sqlx::Error) -> Self {
        Self::Push(e.into())
    }
}

/// A stored subscription, as its owner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// Its id.
    pub id: i64,
    /// The chain.
    pub chain_id: u64,
    /// Its owner.
    pub owner: Address,
    /// Where it POSTs, without query string or fragment (they may hold a token).
    pub url: String,
    /// Instant or finalized.
    pub mode: WebhookMode,
    /// Whether deliveries carry the HMAC header.
    pub hmac: bool,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
    /// When it was cancelled.
    pub cancelled_at: Option<DateTime<Utc>>,
    /// Deliveries waiting, answered and given up.
    pub pending: u64,
    /// Deliveries answered with a 2xx.
    pub delivered: u64,
    /// Deliveries given up after every attempt (see [`dead_letters`]).
    pub dead: u64,
}

/// Now, in Unix seconds: the `issued_at` a signer puts in a request it signs now, and what
/// [`SIGNATURE_LIFETIME`] is measured from.
pub fn now_unix() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn check_signature(text: &str, owner: Address, issued_at: u64, proof: Proof) -> Result<(), Refusal> {
    let Proof::Signed(signature) = proof else { return Ok(()) };
    let now = now_unix();
    if issued_at.abs_diff(now) > SIGNATURE_LIFETIME {
        return Err(Refusal::Stale { issued_at, now });
    }
    match signature.recover_address_from_msg(text) {
        Ok(signer) if signer == owner => Ok(()),
        _ => Err(Refusal::NotSigned(owner)),
    }
}

/// Stores `registration` when `proof` vouches for it and `policy` allows it, with `hmac_secret`
/// for the HMAC header; refuses it otherwise, storing nothing.
pub async fn register(
    pool: &sqlx::PgPool,
    policy: &Policy,
    registration: &Registration,
    proof: Proof,
    hmac_secret: Option<&str>,
) -> Result<Subscription, RegisterError> {
    check_signature(&registration.text(), registration.owner, registration.issued_at, proof)?;
    if hmac_secret.is_some_and(|s| !(MIN_SECRET..=MAX_SECRET).contains(&s.chars().count())) {
        return Err(Refusal::Secret.into());
    }
    let f = &registration.filter;
    if f.pacts.len().max(f.kinds.len()).max(f.currencies.len()) > MAX_LISTED {
        return Err(Refusal::TooManyListed.into());
    }
    policy.targets.check(&registration.url).await.map_err(Refusal::from)?;
    let owner = registration.owner;
    let mut tx = pool.begin().await?;
    // One registration of an owner at a time: the count below then stays true until commit.
    // (In FROM: the lock function returns `void`, a type no Rust value decodes.)
    sqlx::query!("SELECT FROM pg_advisory_xact_lock($1, hashtext($2))", LOCK_NAMESPACE, owner.to_string())
        .execute(&mut *tx)
        .await?;
    let active = sqlx::query_scalar!(
        r#"SELECT count(*) AS "active!" FROM webhook_subscriptions
           WHERE owner = $1 AND chain_id = $2 AND cancelled_at IS NULL"#,
        owner.as_slice(),
        i64_of(registration.chain_id)
    )
    .fetch_one(&mut *tx)
    .await?;
    if active >= i64::from(policy.max_per_owner) {
        return Err(Refusal::TooMany { owner, cap: policy.max_per_owner }.into());
    }
    let signature = match proof {
        Proof::Signed(s) => Some(s.as_bytes().to_vec()),
        Proof::Operator => None,
    };
    let pacts: Vec<String> = f.pacts.iter().map(U256::to_string).collect();
    let kinds: Vec<&str> = f.kinds.iter().map(|k| k.name()).collect();
    let currencies: Vec<Vec<u8>> = f.currencies.iter().map(|c| c.to_vec()).collect();
    let stored = sqlx::query!(
        "INSERT INTO webhook_subscriptions
             (chain_id, owner, url, mode, party, pact_ids, kinds, currencies, alarms, hmac_secret, signature)
         VALUES ($1, $2, $3, $4, $5,
                 NULLIF($6::text[], '{}')::numeric[], NULLIF($7::text[], '{}'), NULLIF($8::bytea[], '{}'),
                 $9, $10, $11)
         RETURNING id, created_at",
        i64_of(registration.chain_id),
        owner.as_slice(),
        registration.url,
        registration.mode.name(),
        f.party.map(|p| p.to_vec()),
        &pacts,
        &kinds as &[&str],
        &currencies,
        f.alarms,
        hmac_secret,
        signature
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Subscription {
        id: stored.id,
        chain_id: registration.chain_id,
        owner,
        url: without_secrets(&registration.url),
        mode: registration.mode,
        hmac: hmac_secret.is_some(),
        created_at: stored.created_at,
        cancelled_at: None,
        pending: 0,
        delivered: 0,
        dead: 0,
    })
}

/// Cancels subscription `id` of `owner`: nothing more is matched for it, and what is still
/// pending is not sent. `proof` signs [`cancellation_text`] (or is the operator's).
pub async fn cancel(
    pool: &sqlx::PgPool,
    chain_id: u64,
    owner: Address,
    id: i64,
    issued_at: u64,
    proof: Proof,
) -> Result<(), RegisterError> {
    check_signature(&cancellation_text(chain_id, owner, id, issued_at), owner, issued_at, proof)?;
    let mut tx = pool.begin().await?;
    let done = sqlx::query!(
        "UPDATE webhook_subscriptions SET cancelled_at = now()
         WHERE id = $1 AND owner = $2 AND chain_id = $3 AND cancelled_at IS NULL",
        id,
        owner.as_slice(),
        i64_of(chain_id)
    )
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Refusal::Unknown(id).into());
    }
    cancel_pending(&mut tx, id).await?;
    tx.commit().await?;
    Ok(())
}

/// Marks what subscription `id` still has pending as cancelled: never sent, no longer waiting
/// (its subscription was cancelled, by its owner or before a queued turn came).
pub(crate) async fn cancel_pending(conn: &mut sqlx::PgConnection, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE webhook_deliveries SET state = $2 WHERE subscription_id = $1 AND state = $3",
        id,
        DeliveryState::Cancelled.name(),
        DeliveryState::Pending.name()
    )
    .execute(conn)
    .await
    .map(drop)
}

/// The subscriptions `owner` holds on `chain_id` (cancelled ones included), newest first.
pub async fn list(
    pool: &sqlx::PgPool,
    chain_id: u64,
    owner: Address,
) -> Result<Vec<Subscription>, PushError> {
    let rows = sqlx::query!(
        r#"SELECT s.id, s.chain_id, s.owner, s.url, s.mode, s.hmac_secret IS NOT NULL AS "hmac!", s.created_at,
                  s.cancelled_at, count(*) FILTER (WHERE d.state = $3) AS "pending!",
                  count(*) FILTER (WHERE d.state = $4) AS "delivered!", count(*) FILTER (WHERE d.state = $5) AS "dead!"
           FROM webhook_subscriptions s LEFT JOIN webhook_deliveries d ON d.subscription_id = s.id
           WHERE s.owner = $1 AND s.chain_id = $2
           GROUP BY s.id ORDER BY s.id DESC"#,
        owner.as_slice(),
        i64_of(chain_id),
        DeliveryState::Pending.name(),
        DeliveryState::Delivered.name(),
        DeliveryState::Dead.name()
    )
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|r| {
            let cells = Cells { table: "webhook_subscriptions", key: format!("id {}", r.id) };
            Ok(Subscription {
                id: r.id,
                chain_id: cells.int("chain_id", r.chain_id)?,
                owner: cells.address("owner", &r.owner)?,
                url: without_secrets(&r.url),
                mode: cells.named("mode", &r.mode, WebhookMode::from_name)?,
                hmac: r.hmac,
                created_at: r.created_at,
                cancelled_at: r.cancelled_at,
                pending: cells.int("pending", r.pending)?,
                delivered: cells.int("delivered", r.delivered)?,
                dead: cells.int("dead", r.dead)?,
            })
        })
        .collect()
}

/// A delivery given up after every attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The delivery.
    pub id: i64,
    /// Its subscription.
    pub subscription_id: i64,
    /// Its idempotency key.
    pub idempotency_key: String,
    /// What it told.
    pub kind: agentpact_contracts::NoticeKind,
    /// Attempts made.
    pub attempts: u32,
    /// Why the last one failed.
    pub last_error: Option<String>,
    /// The body it would have sent.
    pub body: String,
}

/// The newest `per` dead letters of each of `owner`'s subscriptions `ids`, in one query: newest
/// subscription first, newest letter first within it.
pub async fn dead_letters(
    pool: &sqlx::PgPool,
    owner: Address,
    ids: &[i64],
    per: u32,
) -> Result<Vec<DeadLetter>, PushError> {
    let rows = sqlx::query!(
        r#"SELECT id AS "id!", subscription_id AS "subscription_id!", idempotency_key AS "idempotency_key!",
                  kind AS "kind!", attempts AS "attempts!", last_error, body AS "body!" FROM (
               SELECT d.id, d.subscription_id, d.idempotency_key, d.kind, d.attempts, d.last_error, d.body,
                      row_number() OVER (PARTITION BY d.subscription_id ORDER BY d.id DESC) AS n
               FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
               WHERE d.subscription_id = ANY($1) AND s.owner = $2 AND d.state = $3) newest
           WHERE n <= $4 ORDER BY subscription_id DESC, id DESC"#,
        ids,
        owner.as_slice(),
        DeliveryState::Dead.name(),
        i64::from(per)
    )
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|r| {
            let cells = Cells { table: "webhook_deliveries", key: format!("id {}", r.id) };
            Ok(DeadLetter {
                id: r.id,
                subscription_id: r.subscription_id,
                idempotency_key: r.idempotency_key,
                kind: cells.named("kind", &r.kind, agentpact_contracts::NoticeKind::from_name)?,
                attempts: cells.int("attempts", r.attempts)?,
                last_error: r.last_error,
                body: r.body,
            })
        })
        .collect()
}

/// `url` without its query string and fragment (where tokens hide), for showing.
pub fn without_secrets(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "(unreadable URL)".to_owned(),
    }
}

/// Advisory-lock namespace of push ("PUSH"), beside the indexer's writer lock.
pub const LOCK_NAMESPACE: i32 = 0x5055_5348;
