//! Webhooks: this wallet's subscriptions to be told of its pacts by signed POSTs while it sleeps
//! (docs/push.md). A subscription is signed with the agent's key, as `agentpact push` and the
//! operator's GraphQL hold every registration to (`agentpact_push::subscription`), and counts
//! against the operator's cap per owner.

use std::collections::HashMap;

use agentpact_contracts::{EventKind, WebhookMode};
use agentpact_push::subscription::{
    self, DeadLetter, Filter, MAX_DEAD_LETTERS, MAX_LISTED, MAX_SECRET, Proof, Registration, Subscription,
};
use alloy::primitives::U256;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::{
    bounds::{ADDRESS_CHARS, CURRENCY_CHARS, URL_CHARS},
    chain::Chain,
    input,
    outcome::{Answer, ToolError},
};

/// Input of `subscribe_webhook`. `Debug` hides the secret and the URL's query.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubscribeWebhook {
    /// Where to POST: an absolute https:// (or http://) URL on the public internet; internal
    /// addresses only where the operator opened their range.
    #[schemars(length(min = 1, max = URL_CHARS))]
    url: String,
    /// "instant" (default: as soon as indexed, with a revocation if a reorganisation removes
    /// the event) or "finalized" (only past the finality depth, never revoked).
    mode: Option<WebhookMode>,
    /// Only pacts this address is a party of ("me" for this wallet). Default: this wallet, unless
    /// pactIds are given.
    #[schemars(length(max = ADDRESS_CHARS))]
    party: Option<String>,
    /// Only these pacts.
    #[schemars(length(max = MAX_LISTED))]
    pact_ids: Option<Vec<input::Id>>,
    /// Only these events (e.g. ["WorkSubmitted", "DisputeRaised"]). Default: every event.
    #[schemars(length(max = MAX_LISTED))]
    kinds: Option<Vec<EventKind>>,
    /// Only pacts paid in these currencies ("ETH", "USDC" or a token's address). Default: any.
    #[schemars(length(max = MAX_LISTED), inner(length(max = CURRENCY_CHARS)))]
    currencies: Option<Vec<String>>,
    // Described from the one table of who acts in which window (`agentpact_push::alarms`).
    #[schemars(description = alarms_description())]
    alarms: Option<bool>,
    /// A random secret of 16 to 256 characters: deliveries then also carry a Standard Webhooks
    /// HMAC-SHA256 header with it. Stored by the server, never shown again.
    #[schemars(length(max = MAX_SECRET))]
    hmac_secret: Option<String>,
}

/// What `alarms` does, window by window as push sends them.
fn alarms_description() -> String {
    format!(
        "Whether reminders before a window closes, and notices when one closed, come too (default \
         true). With a party, only of the windows that party acts in: {}.",
        agentpact_push::alarms::actors()
    )
}

impl std::fmt::Debug for SubscribeWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubscribeWebhook")
            .field("url", &subscription::without_secrets(&self.url))
            .field("mode", &self.mode)
            .field("party", &self.party)
            .field("pact_ids", &self.pact_ids)
            .field("kinds", &self.kinds)
            .field("currencies", &self.currencies)
            .field("alarms", &self.alarms)
            .field("hmac_secret", &self.hmac_secret.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// Input of `list_webhooks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListWebhooks {
    /// How many of each subscription's newest dead letters to show (0-50, default 5).
    #[schemars(range(max = MAX_DEAD_LETTERS))]
    dead_letters: Option<u32>,
}

/// Input of `cancel_webhook`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelWebhook {
    /// The subscription's id (list_webhooks shows them).
    subscription_id: input::Id,
}

/// A subscription, as its owner sees it: never its secret, nor its URL's query or fragment.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookView {
    /// Its id (decimal): cancel_webhook names it.
    subscription_id: String,
    /// Where it POSTs (without query string or fragment).
    url: String,
    /// "instant" or "finalized".
    mode: &'static str,
    /// Whether deliveries carry the HMAC header.
    hmac: bool,
    /// When it was registered (Unix seconds).
    created_at: i64,
    /// When it was cancelled (Unix seconds); null while active.
    cancelled_at: Option<i64>,
    /// Deliveries waiting for their (next) attempt.
    pending: u64,
    /// Deliveries a 2xx answered.
    delivered: u64,
    /// Deliveries given up after every attempt.
    dead: u64,
}

impl From<Subscription> for WebhookView {
    fn from(s: Subscription) -> Self {
        Self {
            subscription_id: s.id.to_string(),
            url: s.url,
            mode: s.mode.name(),
            hmac: s.hmac,
            created_at: s.created_at.timestamp(),
            cancelled_at: s.cancelled_at.map(|t| t.timestamp()),
            pending: s.pending,
            delivered: s.delivered,
            dead: s.dead,
        }
    }
}

/// What `subscribe_webhook` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subscribed {
    /// The subscription stored.
    #[serde(flatten)]
    subscription: WebhookView,
}

/// What `list_webhooks` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Webhooks {
    /// This wallet's subscriptions on this chain, newest first, cancelled ones included.
    webhooks: Vec<WebhookListing>,
}

/// One subscription and its newest dead letters.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookListing {
    /// The subscription.
    #[serde(flatten)]
    subscription: WebhookView,
    /// Its newest deliveries given up after every attempt.
    dead_letters: Vec<DeadLetterView>,
}

/// A delivery given up: what it would have told, and why the last attempt failed.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetterView {
    /// The idempotency key it was sent under.
    idempotency_key: String,
    /// "event", "revocation", "reminder" or "closed".
    kind: &'static str,
    /// Attempts made.
    attempts: u32,
    /// Why the last attempt failed (never the URL nor a secret); null when it is not known.
    last_error: Option<String>,
    /// The JSON body it would have delivered.
    body: String,
}

impl From<DeadLetter> for DeadLetterView {
    fn from(d: DeadLetter) -> Self {
        Self {
            idempotency_key: d.idempotency_key,
            kind: d.kind.name(),
            attempts: d.attempts,
            last_error: d.last_error,
            body: d.body,
        }
    }
}

/// What `cancel_webhook` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cancelled {
    /// The subscription cancelled (decimal).
    subscription_id: String,
}

pub async fn subscribe(chain: &Chain, input: SubscribeWebhook) -> Result<Answer<Subscribed>, ToolError> {
    let webhooks = chain.webhooks()?;
    let pacts: Vec<U256> = input.pact_ids.unwrap_or_default().into_iter().map(|id| id.0).collect();
    let party = match input.party.as_deref() {
        Some("me") => Some(chain.me),
        Some(text) => Some(input::address("party", text)?),
        None if pacts.is_empty() => Some(chain.me),
        None => None,
    };
    let currencies = chain.currencies_named("currencies", &input.currencies.unwrap_or_default()).await?;
    let registration = Registration {
        chain_id: chain.chain_id,
        owner: chain.me,
        url: input.url,
        mode: input.mode.unwrap_or(WebhookMode::Instant),
        filter: Filter {
            party,
            pacts,
            kinds: input.kinds.unwrap_or_default(),
            currencies: currencies.iter().map(|c| c.address).collect(),
            alarms: input.alarms.unwrap_or(true),
        },
        issued_at: subscription::now_unix(),
    };
    let signature = chain.sign_text(&registration.text()).await?;
    let stored = subscription::register(
        &webhooks.pool,
        &webhooks.policy,
        &registration,
        Proof::Signed(signature),
        input.hmac_secret.as_deref(),
    )
    .await?;
    let whose = party.map_or_else(|| "the pacts named".to_owned(), |p| format!("pacts of {p}"));
    Answer::new(
        format!(
            "Subscribed webhook #{} ({} mode): {} will be POSTed to {}, each signed by the push server's key{}.",
            stored.id,
            stored.mode,
            whose,
            stored.url,
            if stored.hmac { " and with the HMAC header" } else { "" }
        ),
        Subscribed { subscription: stored.into() },
    )
}

pub async fn list(chain: &Chain, input: ListWebhooks) -> Result<Answer<Webhooks>, ToolError> {
    let webhooks = chain.webhooks()?;
    let stored = subscription::list(&webhooks.pool, chain.chain_id, chain.me).await?;
    let with_dead: Vec<i64> = stored.iter().filter(|s| s.dead > 0).map(|s| s.id).collect();
    let per = input.dead_letters.unwrap_or(5);
    let letters = if with_dead.is_empty() || per == 0 {
        Vec::new()
    } else {
        subscription::dead_letters(&webhooks.pool, chain.me, &with_dead, per).await?
    };
    let mut by_subscription: HashMap<i64, Vec<DeadLetterView>> = HashMap::new();
    for letter in letters {
        by_subscription.entry(letter.subscription_id).or_default().push(letter.into());
    }
    let listed: Vec<WebhookListing> = stored
        .into_iter()
        .map(|s| WebhookListing {
            dead_letters: by_subscription.remove(&s.id).unwrap_or_default(),
            subscription: s.into(),
        })
        .collect();
    let active = listed.iter().filter(|l| l.subscription.cancelled_at.is_none()).count();
    let dead: u64 = listed.iter().map(|l| l.subscription.dead).sum();
    Answer::new(
        format!(
            "{} webhook subscription(s) of {}, {active} active; {dead} delivery(ies) given up.",
            listed.len(),
            chain.me
        ),
        Webhooks { webhooks: listed },
    )
}

pub async fn cancel(chain: &Chain, input: CancelWebhook) -> Result<Answer<Cancelled>, ToolError> {
    let webhooks = chain.webhooks()?;
    let id = i64::try_from(input.subscription_id.0).map_err(|_| {
        ToolError::Invalid(format!(
            "subscriptionId {} is no subscription of this wallet; list_webhooks shows them",
            input.subscription_id.0
        ))
    })?;
    let issued_at = subscription::now_unix();
    let signature =
        chain.sign_text(&subscription::cancellation_text(chain.chain_id, chain.me, id, issued_at)).await?;
    subscription::cancel(&webhooks.pool, chain.chain_id, chain.me, id, issued_at, Proof::Signed(signature))
        .await?;
    Answer::new(
        format!("Cancelled webhook #{id}: nothing more is matched for it, and what was pending is not sent."),
        Cancelled { subscription_id: id.to_string() },
    )
}
