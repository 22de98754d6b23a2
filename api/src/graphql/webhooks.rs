//! The operator's webhooks (docs/push.md): any owner's subscriptions with their dead letters,
//! registering one for an owner, cancelling one. Only a request carrying the operator's token
//! (`OPERATOR_TOKEN`, sent as `Authorization: Bearer <token>` to POST /graphql) reaches them;
//! agents register their own through MCP, signed with their key. Every registration is held to
//! the same policy (`agentpact_push::subscription::register`): permitted targets, a cap per owner.

use agentpact_push::{
    Filter, Policy, Registration, Subscription,
    subscription::{self, DeadLetter, Proof, RegisterError},
};
use async_graphql::{ComplexObject, Context, InputObject, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    chain_of,
    closed_sets::{Closed, EventKind, NoticeKind, WebhookMode},
    errors::{Code, to_graphql},
    scalars::{Address, BigInt},
};

/// The operator's access: where subscriptions are stored and the policy they are held to. In a
/// request's data only when the request carries the operator's token.
#[derive(Debug, Clone)]
pub struct OperatorAccess {
    /// The primary database (`agentpact push` reads it).
    pub pool: sqlx::PgPool,
    /// Permitted targets and the cap per owner.
    pub policy: Policy,
}

/// The operator's access, or FORBIDDEN saying how to get it; `whose` says what is the operator's
/// and who else reaches it ("webhooks are the operator's (agents subscribe through MCP)").
pub(super) fn operator<'a>(ctx: &'a Context<'_>, whose: &str) -> Result<&'a OperatorAccess> {
    ctx.data_opt::<OperatorAccess>()
        .ok_or_else(|| Code::Forbidden.error(format!("{whose}: send Authorization: Bearer <OPERATOR_TOKEN>")))
}

/// What a request without the operator's token is told about webhooks.
const WEBHOOKS_WHOSE: &str = "webhooks are the operator's (agents subscribe through MCP)";

/// A refusal as BAD_ARGUMENT saying what to do; a database failure as INTERNAL.
fn refused(error: RegisterError) -> async_graphql::Error {
    match error {
        RegisterError::Refused(refusal) => Code::BadArgument.error(refusal.to_string()),
        RegisterError::Push(e) => pushed(e),
    }
}

fn pushed(error: agentpact_push::PushError) -> async_graphql::Error {
    match error {
        agentpact_push::PushError::Database(e) => to_graphql(e),
        agentpact_push::PushError::Corrupt(e) => to_graphql(e),
        other => {
            tracing::error!(error = %other, "webhooks");
            Code::Internal.error("webhooks are unavailable right now; try again shortly")
        }
    }
}

/// A subscription to register for `owner`.
#[derive(InputObject)]
pub struct WebhookInput {
    /// Whose subscription it is (its cap counts it).
    owner: Address,
    /// Where to POST (http(s); internal addresses only where WEBHOOK_ALLOW_TARGETS opens them).
    url: String,
    /// Instant (default) or finalized.
    #[graphql(default_with = "Closed(agentpact_contracts::WebhookMode::Instant)")]
    mode: WebhookMode,
    /// Only pacts this address is a party of.
    party: Option<Address>,
    /// Only these pacts.
    pact_ids: Option<Vec<BigInt>>,
    /// Only these events.
    kinds: Option<Vec<EventKind>>,
    /// Only pacts paid in these currencies (0x000…000 for ETH).
    currencies: Option<Vec<Address>>,
    /// Whether reminders before windows close, and notices when they closed, come too.
    #[graphql(default = true)]
    alarms: bool,
    /// A secret of 16 to 256 characters for the HMAC header; stored, never shown.
    hmac_secret: Option<String>,
}

/// A webhook subscription, as its owner and the operator see it: never its secret, nor its URL's
/// query or fragment.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct Webhook {
    /// Its id.
    id: i64,
    /// Its owner.
    owner: Address,
    /// Where it POSTs, without query string or fragment.
    url: String,
    /// Instant or finalized.
    mode: WebhookMode,
    /// Whether deliveries carry the HMAC header.
    hmac: bool,
    /// When it was registered.
    created_at: DateTime<Utc>,
    /// When it was cancelled; null while active.
    cancelled_at: Option<DateTime<Utc>>,
    /// Deliveries waiting for their (next) attempt.
    pending: u64,
    /// Deliveries a 2xx answered.
    delivered: u64,
    /// Deliveries given up after every attempt.
    dead: u64,
}

impl From<Subscription> for Webhook {
    fn from(s: Subscription) -> Self {
        Self {
            id: s.id,
            owner: Address(s.owner),
            url: s.url,
            mode: s.mode.into(),
            hmac: s.hmac,
            created_at: s.created_at,
            cancelled_at: s.cancelled_at,
            pending: s.pending,
            delivered: s.delivered,
            dead: s.dead,
        }
    }
}

// The validator below takes a literal: held to the push crate's bound at compile time.
const _: () = assert!(subscription::MAX_DEAD_LETTERS == 50);

#[ComplexObject]
impl Webhook {
    /// Its newest deliveries given up after every attempt, at most `first` (≤ 50).
    async fn dead_letters(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 5, validator(maximum = 50))] first: u32,
    ) -> Result<Vec<WebhookDeadLetter>> {
        if self.dead == 0 || first == 0 {
            return Ok(Vec::new());
        }
        let access = operator(ctx, WEBHOOKS_WHOSE)?;
        let letters = subscription::dead_letters(&access.pool, self.owner.0, &[self.id], first)
            .await
            .map_err(pushed)?;
        Ok(letters.into_iter().map(Into::into).collect())
    }
}

/// A delivery given up after every attempt.
#[derive(SimpleObject)]
pub struct WebhookDeadLetter {
    /// The idempotency key it was sent under.
    idempotency_key: String,
    /// What it told.
    kind: NoticeKind,
    /// Attempts made.
    attempts: u32,
    /// Why the last attempt failed (never the URL nor a secret).
    last_error: Option<String>,
    /// The JSON body it would have delivered.
    body: String,
}

impl From<DeadLetter> for WebhookDeadLetter {
    fn from(d: DeadLetter) -> Self {
        Self {
            idempotency_key: d.idempotency_key,
            kind: d.kind.into(),
            attempts: d.attempts,
            last_error: d.last_error,
            body: d.body,
        }
    }
}

/// The operator's reads of webhooks.
#[derive(Default)]
pub struct WebhookQuery;

#[Object]
impl WebhookQuery {
    /// `owner`'s webhook subscriptions (cancelled ones included), newest first. Operator only.
    async fn webhooks(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        owner: Address,
    ) -> Result<Vec<Webhook>> {
        let chain = chain_of(ctx, chain_id)?;
        let access = operator(ctx, WEBHOOKS_WHOSE)?;
        let listed = subscription::list(&access.pool, chain, owner.0).await.map_err(pushed)?;
        Ok(listed.into_iter().map(Into::into).collect())
    }
}

/// The operator's changes to webhooks.
#[derive(Default)]
pub struct WebhookMutation;

#[Object]
impl WebhookMutation {
    /// Registers a subscription for `input.owner`, held to the server's policy (permitted targets,
    /// the cap per owner); BAD_ARGUMENT says what to change. Operator only.
    async fn register_webhook(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        input: WebhookInput,
    ) -> Result<Webhook> {
        let chain = chain_of(ctx, chain_id)?;
        let access = operator(ctx, WEBHOOKS_WHOSE)?;
        let registration = Registration {
            chain_id: chain,
            owner: input.owner.0,
            url: input.url,
            mode: input.mode.0,
            filter: Filter {
                party: input.party.map(|a| a.0),
                pacts: input.pact_ids.unwrap_or_default().into_iter().map(|p| p.0).collect(),
                kinds: input.kinds.unwrap_or_default().into_iter().map(|k| k.0).collect(),
                currencies: input.currencies.unwrap_or_default().into_iter().map(|c| c.0).collect(),
                alarms: input.alarms,
            },
            issued_at: 0,
        };
        let secret = input.hmac_secret.as_deref();
        let stored =
            subscription::register(&access.pool, &access.policy, &registration, Proof::Operator, secret)
                .await
                .map_err(refused)?;
        tracing::info!(id = stored.id, owner = %stored.owner, "webhook registered by the operator");
        Ok(stored.into())
    }

    /// Cancels `owner`'s subscription `id`: nothing more is matched for it, and what is pending is
    /// not sent. Operator only.
    async fn cancel_webhook(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        owner: Address,
        id: i64,
    ) -> Result<bool> {
        let chain = chain_of(ctx, chain_id)?;
        let access = operator(ctx, WEBHOOKS_WHOSE)?;
        subscription::cancel(&access.pool, chain, owner.0, id, 0, Proof::Operator).await.map_err(refused)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use agentpact_push::Refusal;

    use super::*;

    #[test]
    fn a_refusal_is_bad_argument_with_its_sentence() {
        let error = refused(RegisterError::Refused(Refusal::Unknown(7)));
        assert!(error.message.contains("no active webhook subscription 7"), "{}", error.message);
        let code = error.extensions.as_ref().and_then(|e| e.get("code").cloned());
        assert_eq!(code, Some(async_graphql::Value::from("BAD_ARGUMENT")));
    }
}
