//! Spending confirmations a human answers on a page (MCP URL-mode elicitation).
//!
//! A spend above `CONFIRM_ABOVE_ETH` / `CONFIRM_ABOVE_USDC` opens a confirmation: a row in
//! `mcp_confirmations` (migrations/0013) saying what will be signed, and a page at
//! `/confirm/<token>` ([`page`]) that shows it with a confirm and a decline button. The client is
//! given the page's address; nothing is sent unless the human confirms there. A confirmation is
//! bound to one call (the wallet, the tool and a digest of its arguments), answered once, spent
//! once, and expires ([`CONFIRM_TTL`] after the question: a yes not taken by then lapses with
//! it). It lives in the database, so the page and the call's
//! follow-up may land on any `agentpact mcp --http` process holding the same key.

pub mod page;

use std::{sync::Arc, time::Duration};

use agentpact_schema::i64_of;
use alloy::primitives::{Address, B256, keccak256};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::PgPool;

use crate::outcome::ToolError;

/// How long a confirmation lives from its question: the page can be answered, and a yes taken by
/// the call, only until then.
pub const CONFIRM_TTL: Duration = Duration::from_secs(300);

/// How often a call waiting for the human's answer looks at it.
const POLL: Duration = Duration::from_millis(250);

/// What the page shows: exactly what will be signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The tool called.
    pub tool: String,
    /// The amount with its currency, e.g. "0.55 ETH".
    pub amount: String,
    /// The wallet that signs and pays.
    pub wallet: String,
    /// Who is on the other side.
    pub counterparty: String,
    /// What the call does, as the end of "into the AgentPact escrow to …".
    pub does: String,
    /// Why the human is asked, each the end of "It asks because …": "it is above the
    /// confirmation threshold of 0.3 ETH (CONFIRM_ABOVE_ETH)", "first payment to 0x…" (the wallet
    /// policy, docs/mcp.md §Policy).
    pub reasons: Vec<String>,
    /// The chain the transaction goes to.
    pub chain_id: u64,
}

impl Summary {
    /// The question in one sentence, for clients that show the elicitation's message.
    pub fn question(&self) -> String {
        format!(
            "Confirm: {} wants to send {} from wallet {} into the AgentPact escrow to {}. Counterparty: {}. \
             It asks because {}.",
            self.tool,
            self.amount,
            self.wallet,
            self.does,
            self.counterparty,
            self.reasons.join("; and ")
        )
    }
}

/// The elicitation id a client is given for the confirmation of `token` (not the token itself).
pub fn elicitation_id(token: &str) -> String {
    format!("confirm-{}", &keccak256(token.as_bytes()).to_string()[2..18])
}

/// The call a confirmation is bound to: its tool and arguments, digested.
pub fn call_digest(tool: &str, args: &Value) -> B256 {
    let mut bytes = tool.as_bytes().to_vec();
    bytes.push(0);
    bytes.extend_from_slice(args.to_string().as_bytes());
    keccak256(bytes)
}

/// How an open confirmation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Waiting for the human.
    Open,
    /// The human confirmed; the call may send (once, before it expires).
    Confirmed,
    /// The human confirmed, but the call did not take the yes before it expired.
    Lapsed,
    /// The human declined.
    Declined,
    /// The call it confirmed has sent: a yes is spent once.
    Used,
    /// Nobody answered in time.
    Expired,
}

impl Standing {
    /// How a row stands: its `decision`, whether it was `used`, whether it has `expired`.
    fn of(decision: Option<&str>, used: bool, expired: bool) -> Self {
        match (decision, used, expired) {
            (_, true, _) => Self::Used,
            (Some("confirmed"), false, false) => Self::Confirmed,
            (Some("confirmed"), false, true) => Self::Lapsed,
            (Some(_), false, _) => Self::Declined,
            (None, false, true) => Self::Expired,
            (None, false, false) => Self::Open,
        }
    }

    /// How the page and the call say it.
    pub const fn says(self) -> &'static str {
        match self {
            Self::Open => "waiting for your answer",
            Self::Confirmed => "confirmed",
            Self::Lapsed => "confirmed, but the agent's call did not take it in time, and it expired",
            Self::Declined => "declined",
            Self::Used => "confirmed, and taken by the agent's call",
            Self::Expired => "expired unanswered",
        }
    }
}

/// One confirmation as its page reads it.
#[derive(Debug, Clone)]
pub struct Shown {
    /// What will be signed.
    pub summary: Summary,
    /// How it stands.
    pub standing: Standing,
}

/// The confirmations, in the database every process shares.
#[derive(Debug, Clone)]
pub struct Confirmations {
    pool: PgPool,
}

/// A confirmation just opened: the token its page's address carries (a secret: never logged).
#[derive(Clone)]
pub struct Opened {
    /// The random token, hex.
    pub token: String,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Opened { token: <redacted> }")
    }
}

/// The stored form of `token`: its keccak256, or `None` when it is not a token at all.
fn token_hash(token: &str) -> Option<B256> {
    let bytes = alloy::hex::decode(token).ok().filter(|b| b.len() == 32)?;
    Some(keccak256(bytes))
}

impl Confirmations {
    /// The confirmations kept in `pool` (the primary: they are written).
    pub const fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// The database the confirmations (and the wallet ledger shown beside them) are kept in.
    pub const fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Opens a confirmation of `summary` for the call `digest` of `wallet`.
    pub async fn open(&self, wallet: Address, digest: B256, summary: &Summary) -> Result<Opened, ToolError> {
        let secret: [u8; 32] = rand::random();
        let summary_json = serde_json::to_value(summary)
            .map_err(|source| ToolError::Unserializable { what: "the confirmation", source })?;
        let hash = keccak256(secret);
        sqlx::query!(
            "INSERT INTO mcp_confirmations (token_hash, chain_id, wallet, tool, call_digest, summary, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))",
            hash.as_slice(),
            i64_of(summary.chain_id),
            wallet.as_slice(),
            summary.tool,
            digest.as_slice(),
            summary_json,
            CONFIRM_TTL.as_secs_f64()
        )
        .execute(&self.pool)
        .await
        .map_err(ToolError::ConfirmationStore)?;
        Ok(Opened { token: alloy::hex::encode(secret) })
    }

    /// The confirmation behind `token`, as its page shows it; `None` when there is none.
    pub async fn show(&self, token: &str) -> Result<Option<Shown>, sqlx::Error> {
        let Some(hash) = token_hash(token) else { return Ok(None) };
        let row = sqlx::query!(
            r#"SELECT summary, decision, used_at IS NOT NULL AS "used!", expires_at <= now() AS "expired!"
               FROM mcp_confirmations WHERE token_hash = $1"#,
            hash.as_slice()
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let summary: Summary = serde_json::from_value(row.summary).map_err(|e| {
            sqlx::Error::ColumnDecode { index: "mcp_confirmations.summary".into(), source: Box::new(e) }
        })?;
        Ok(Some(Shown { summary, standing: Standing::of(row.decision.as_deref(), row.used, row.expired) }))
    }

    /// Records the human's answer to `token`, once, before it expires; `true` when this answer
    /// was the one recorded.
    pub async fn decide(&self, token: &str, confirmed: bool) -> Result<bool, sqlx::Error> {
        let Some(hash) = token_hash(token) else { return Ok(false) };
        let decision = if confirmed { "confirmed" } else { "declined" };
        let done = sqlx::query!(
            "UPDATE mcp_confirmations SET decision = $2, decided_at = now()
             WHERE token_hash = $1 AND decision IS NULL AND expires_at > now()",
            hash.as_slice(),
            decision
        )
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Waits (at most `wait`) for the human's answer to `token`, bound to the call `digest` of
    /// `wallet` on chain `chain_id`, and spends a yes: `Ok` only for a confirmation of this very
    /// call, confirmed and not spent before. Anything else is `Unconfirmed`, saying why.
    pub async fn claim(
        &self,
        token: &str,
        chain_id: u64,
        wallet: Address,
        digest: B256,
        wait: Duration,
    ) -> Result<(), ToolError> {
        let refused = |why: &str| ToolError::Unconfirmed(format!("{why}; nothing was sent."));
        let hash =
            token_hash(token).ok_or_else(|| refused("the confirmation this retry names does not exist"))?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let row = sqlx::query!(
                r#"SELECT chain_id = $2 AND wallet = $3 AND call_digest = $4 AS "this_call!", decision,
                          used_at IS NOT NULL AS "used!", expires_at <= now() AS "expired!"
                   FROM mcp_confirmations WHERE token_hash = $1"#,
                hash.as_slice(),
                i64_of(chain_id),
                wallet.as_slice(),
                digest.as_slice()
            )
            .fetch_optional(&self.pool)
            .await
            .map_err(ToolError::ConfirmationStore)?;
            let Some(row) = row else {
                return Err(refused("the confirmation this retry names does not exist"));
            };
            if !row.this_call {
                return Err(refused(
                    "the confirmation was for a different call (other arguments, wallet or chain)",
                ));
            }
            match Standing::of(row.decision.as_deref(), row.used, row.expired) {
                Standing::Confirmed => {
                    // Spent once: of two retries racing here, one updates the row.
                    let spent = sqlx::query!(
                        "UPDATE mcp_confirmations SET used_at = now()
                         WHERE token_hash = $1 AND decision = 'confirmed' AND used_at IS NULL
                           AND expires_at > now()",
                        hash.as_slice()
                    )
                    .execute(&self.pool)
                    .await
                    .map_err(ToolError::ConfirmationStore)?;
                    if spent.rows_affected() == 1 {
                        return Ok(());
                    }
                }
                Standing::Used => return Err(refused("that confirmation was already taken by a call")),
                Standing::Declined => return Err(refused("the human declined the spend")),
                Standing::Expired => {
                    return Err(refused("nobody answered the confirmation page before it expired"));
                }
                Standing::Lapsed => {
                    return Err(refused(&format!(
                        "the human confirmed, but this retry came after the confirmation expired ({} s from \
                         the question bound the yes too): call again to ask anew",
                        CONFIRM_TTL.as_secs()
                    )));
                }
                Standing::Open if tokio::time::Instant::now() < deadline => tokio::time::sleep(POLL).await,
                Standing::Open => {
                    return Err(refused("the human did not answer the confirmation page in time"));
                }
            }
        }
    }
}

/// Where this process serves its confirmation pages, and the store behind them.
#[derive(Debug, Clone)]
pub struct Pages {
    store: Confirmations,
    serving: Arc<Serving>,
    /// The `Host` the current request came in on (HTTP), for pages served beside `/mcp`.
    request_host: Option<String>,
}

#[derive(Debug)]
enum Serving {
    /// Beside `/mcp` on the HTTP server ([`page::router`] merged into it): at `public` when the
    /// operator set it (`MCP_PUBLIC_URL`), else at the host the client reached.
    WithMcp { public: Option<String> },
    /// A stdio server: on a loopback port of its own, opened at the first confirmation.
    Loopback(tokio::sync::OnceCell<String>),
}

impl Pages {
    /// Pages served on their own loopback port (a stdio server).
    pub fn loopback(store: Confirmations) -> Self {
        Self { store, serving: Arc::new(Serving::Loopback(tokio::sync::OnceCell::new())), request_host: None }
    }

    /// Pages served beside `/mcp`, reached at `public` when given.
    pub fn with_mcp(store: Confirmations, public: Option<String>) -> Self {
        let public = public.map(|p| p.trim_end_matches('/').to_owned());
        Self { store, serving: Arc::new(Serving::WithMcp { public }), request_host: None }
    }

    /// These pages as seen by a request that came in on `host`.
    pub fn for_request(&self, host: Option<String>) -> Self {
        Self { request_host: host, ..self.clone() }
    }

    /// The store.
    pub const fn store(&self) -> &Confirmations {
        &self.store
    }

    /// The address the pages are at, without a trailing `/`.
    pub async fn base(&self) -> Result<String, ToolError> {
        match self.serving.as_ref() {
            Serving::WithMcp { public: Some(public) } => Ok(public.clone()),
            Serving::WithMcp { public: None } => self
                .request_host
                .as_ref()
                .map(|h| format!("http://{h}"))
                .ok_or_else(|| ToolError::NotConfigured(crate::outcome::Missing::PublicUrl)),
            Serving::Loopback(base) => base.get_or_try_init(|| self.serve_on_loopback()).await.cloned(),
        }
    }

    async fn serve_on_loopback(&self) -> Result<String, ToolError> {
        let listener =
            tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(ToolError::NoLoopbackPort)?;
        let addr = listener.local_addr().map_err(ToolError::NoLoopbackPort)?;
        let router = page::router(self.store.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, router).await {
                tracing::warn!(error = %e, "the confirmation pages stopped");
            }
        });
        tracing::info!("confirmation pages on http://{addr}/confirm/");
        Ok(format!("http://{addr}"))
    }
}
