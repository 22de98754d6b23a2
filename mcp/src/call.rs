//! One tool call's link to the client that made it: progress reports while a write runs, the
//! human's confirmation of a large spend (URL-mode elicitation: a page, see [`crate::confirm`]),
//! and the transactions the call sent.
//!
//! The server runs each tool call inside [`Call::run`]; the write path reaches the call through
//! [`Call::current`] (a task-local, as a tracing span is reached), so the thirty handlers keep
//! their one signature. Outside a tool call (a resource read) there is no call: nothing is
//! reported, and no write runs there.
//!
//! A call ends in one of three ways: its answer; its time running out (`CALL_TIMEOUT_SECS`, at
//! most 30 s); or the client cancelling it. In the last two the call is *closed*: if it had sent
//! nothing, nothing more will be sent and it stops; if it had sent a transaction, it keeps running
//! in the background until that transaction is mined and recorded (so nothing is left half done),
//! and the answer names the transaction as pending.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use alloy::primitives::{Address, B256};
use rmcp::{
    Peer, RoleServer,
    model::{ElicitationAction, ProgressNotificationParam, ProgressToken},
};
use tokio::sync::Mutex;

use crate::{
    confirm::{Pages, Summary},
    outcome::ToolError,
    policy::Admitted,
};

tokio::task_local! {
    static CURRENT: Call;
}

/// How long the human has to answer a confirmation before the spend is refused.
const CONFIRM_WAIT: Duration = Duration::from_secs(25);

/// Reports `message` to the tool call this task runs, if it runs one.
pub async fn report(message: impl Into<String>) {
    if let Some(call) = Call::current() {
        call.report(message).await;
    }
}

/// Runs `send` as the tool call this task runs would ([`Call::send`]); outside a call, just runs it.
pub async fn send<T>(send: impl Future<Output = Result<(T, B256), ToolError>>) -> Result<T, ToolError> {
    match Call::current() {
        Some(call) => call.send(send).await,
        None => send.await.map(|(sent, _)| sent),
    }
}

/// A tool call in progress.
#[derive(Clone)]
pub struct Call {
    inner: Arc<Inner>,
}

struct Inner {
    /// The tool.
    tool: &'static str,
    /// The client, to report to and ask.
    peer: Peer<RoleServer>,
    /// The token the client gave for progress reports, if any.
    progress: Option<ProgressToken>,
    /// How many reports were sent (each report's `progress`).
    reported: AtomicU32,
    /// What the call sent, and whether it may still send.
    sending: Mutex<Sending>,
    /// How the human can be asked to confirm a spend.
    asking: Asking,
    /// The call's tool and arguments, digested: what a confirmation is bound to.
    digest: B256,
    /// The confirmation pages and their store.
    pages: Pages,
    /// A page the client must send its human to before retrying (MCP 2026-07-28).
    asked: std::sync::Mutex<Option<Asked>>,
    /// The spend the wallet policy admitted for this call, carried to each transaction it sends.
    admitted: std::sync::Mutex<Option<Admitted>>,
}

/// How a call can ask its human to confirm a spend.
#[derive(Debug, Clone)]
pub enum Asking {
    /// It cannot: the client offers no URL-mode elicitation, so a spend above the threshold is
    /// refused (a form is never used to authorize a transaction).
    Cannot,
    /// A 2025-11-25 session: an `elicitation/create` request in URL mode, answered within the call.
    Session,
    /// A 2026-07-28 request: the answer is an `input_required` result naming the page, and the
    /// client retries with the confirmation's token (`Some` on that retry: the token and whether
    /// the client's elicitation was accepted).
    Retry(Option<(String, bool)>),
}

/// A page the human must answer before the call is retried.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The page's address.
    pub url: String,
    /// The question.
    pub message: String,
    /// The confirmation's token, echoed back by the retry as its `requestState`.
    pub token: String,
}

#[derive(Default)]
struct Sending {
    closed: bool,
    sent: Vec<B256>,
}

/// How a closed call stood: what it had sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// Nothing: it stopped there.
    NothingSent,
    /// These transactions, the last one still being followed.
    Sent(Vec<B256>),
}

impl Call {
    /// A call of `tool` from the client `peer`, reporting progress to `progress` when given,
    /// asking its human as `asking` allows on `pages`; `digest` is [`crate::confirm::call_digest`]
    /// of its arguments.
    pub fn new(
        tool: &'static str,
        peer: Peer<RoleServer>,
        progress: Option<ProgressToken>,
        asking: Asking,
        digest: B256,
        pages: Pages,
    ) -> Self {
        let inner = Inner {
            tool,
            peer,
            progress,
            reported: AtomicU32::new(0),
            sending: Mutex::new(Sending::default()),
            asking,
            digest,
            pages,
            asked: std::sync::Mutex::new(None),
            admitted: std::sync::Mutex::new(None),
        };
        Self { inner: Arc::new(inner) }
    }

    /// The page the client must send its human to before retrying, if the call stopped there.
    pub fn asked(&self) -> Option<Asked> {
        self.inner.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Carries `admitted` (the spend the wallet policy admitted) to this call's transactions.
    pub fn admit(&self, admitted: Admitted) {
        *self.inner.admitted.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(admitted);
    }

    /// The spend the wallet policy admitted for this call, if it makes one.
    pub fn admitted(&self) -> Option<Admitted> {
        self.inner.admitted.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Runs `work` as this call: the write path finds it with [`Call::current`].
    pub async fn run<F: Future>(self, work: F) -> F::Output {
        CURRENT.scope(self, work).await
    }

    /// The call this task runs, if it runs one.
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// The tool called.
    pub fn tool(&self) -> &'static str {
        self.inner.tool
    }

    /// Tells the client how the call is doing, when it asked to be told (a progress token).
    pub async fn report(&self, message: impl Into<String>) {
        let Some(token) = &self.inner.progress else { return };
        let step = self.inner.reported.fetch_add(1, Ordering::Relaxed) + 1;
        let param = ProgressNotificationParam::new(token.clone(), f64::from(step)).with_message(message);
        if let Err(e) = self.inner.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "the client did not take a progress report");
        }
    }

    /// Runs `send` unless the call was closed, and records the transaction it sent. The record
    /// and the check are one step with [`Call::close`]: a call closed while sending sees the hash.
    pub async fn send<T>(
        &self,
        send: impl Future<Output = Result<(T, B256), ToolError>>,
    ) -> Result<T, ToolError> {
        let mut sending = self.inner.sending.lock().await;
        if sending.closed {
            return Err(ToolError::Cancelled);
        }
        let (sent, hash) = send.await?;
        sending.sent.push(hash);
        Ok(sent)
    }

    /// Closes the call: no transaction is sent after this; says what had been sent.
    pub async fn close(&self) -> Closed {
        let mut sending = self.inner.sending.lock().await;
        sending.closed = true;
        if sending.sent.is_empty() { Closed::NothingSent } else { Closed::Sent(sending.sent.clone()) }
    }

    /// Asks the human to confirm the spend `summary` from `wallet` on a confirmation page; `Ok`
    /// only when the human confirmed this very call there. A client that cannot send its human to
    /// a page, a decline, no answer in time: refused, with the reason. On a 2026-07-28 request
    /// the first ask ends the call ([`Call::asked`] names the page) and its retry comes back here.
    pub async fn confirm(&self, summary: Summary, wallet: Address) -> Result<(), ToolError> {
        let question = summary.question();
        let store = self.inner.pages.store();
        match &self.inner.asking {
            Asking::Cannot => Err(ToolError::Unconfirmed(format!(
                "{question} This client cannot ask its human (it does not offer URL-mode elicitation, the only \
                 way a spend is confirmed: on a page), so nothing was sent: use a client that can, or ask the \
                 operator to raise the confirmation threshold."
            ))),
            Asking::Retry(Some((token, true))) => {
                store.claim(token, summary.chain_id, wallet, self.inner.digest, CONFIRM_WAIT).await
            }
            Asking::Retry(Some((token, false))) => {
                self.decline(token).await;
                Err(ToolError::Unconfirmed("The human declined the spend; nothing was sent.".into()))
            }
            Asking::Retry(None) => {
                let (token, url) = self.open(&summary, wallet).await?;
                let asked = Asked { url, message: question, token };
                *self.inner.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(asked);
                Err(ToolError::Unconfirmed(
                    "the human is asked on a confirmation page; retry the call once they answered.".into(),
                ))
            }
            Asking::Session => {
                let (token, url) = self.open(&summary, wallet).await?;
                let url: alloy::transports::http::reqwest::Url =
                    url.parse().map_err(ToolError::PageAddress)?;
                let id = crate::confirm::elicitation_id(&token);
                let asked =
                    self.inner.peer.elicit_url_with_timeout(question, url, id, Some(CONFIRM_WAIT)).await;
                match asked {
                    Ok(ElicitationAction::Accept) => {
                        store.claim(&token, summary.chain_id, wallet, self.inner.digest, CONFIRM_WAIT).await
                    }
                    Ok(_) => {
                        self.decline(&token).await;
                        Err(ToolError::Unconfirmed("The human declined the spend; nothing was sent.".into()))
                    }
                    Err(e) => {
                        self.decline(&token).await;
                        Err(ToolError::Unanswered(e))
                    }
                }
            }
        }
    }

    /// Opens a confirmation of `summary`: its token and its page's address.
    async fn open(&self, summary: &Summary, wallet: Address) -> Result<(String, String), ToolError> {
        // The address first: without one, no confirmation is opened that nobody could answer.
        let base = self.inner.pages.base().await?;
        let opened = self.inner.pages.store().open(wallet, self.inner.digest, summary).await?;
        let url = format!("{base}/confirm/{}", opened.token);
        Ok((opened.token, url))
    }

    /// Closes the page of `token` unanswered, as declined (a later click changes nothing).
    async fn decline(&self, token: &str) {
        if let Err(e) = self.inner.pages.store().decide(token, false).await {
            tracing::warn!(error = %e, "could not close a declined confirmation page");
        }
    }
}
