//! One tool call's link to the client that made it: progress reports while a write runs, the
//! human's confirmation of a large spend (elicitation), and the transactions the call sent.
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

use alloy::primitives::B256;
use rmcp::{
    Peer, RoleServer,
    model::{
        ElicitRequestParams, ElicitationAction, ElicitationSchemaBuilder, ProgressNotificationParam,
        ProgressToken,
    },
};
use tokio::sync::Mutex;

use crate::outcome::ToolError;

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
    /// A call of `tool` from the client `peer`, reporting progress to `progress` when given.
    pub fn new(tool: &'static str, peer: Peer<RoleServer>, progress: Option<ProgressToken>) -> Self {
        let inner = Inner {
            tool,
            peer,
            progress,
            reported: AtomicU32::new(0),
            sending: Mutex::new(Sending::default()),
        };
        Self { inner: Arc::new(inner) }
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

    /// Asks the human to confirm `question`; `Ok` only on an explicit yes. A client that cannot
    /// ask (no elicitation), a decline, a cancel, no answer in time: refused, with the reason.
    pub async fn confirm(&self, question: String) -> Result<(), ToolError> {
        let can_ask = self.inner.peer.peer_info().is_some_and(|info| info.capabilities.elicitation.is_some());
        if !can_ask {
            return Err(ToolError::Unconfirmed(format!(
                "{question} This client cannot ask its human (it does not offer elicitation), so nothing was sent: \
                 use a client that can, or ask the operator to raise the confirmation threshold."
            )));
        }
        let schema = ElicitationSchemaBuilder::new()
            .required_bool_with("confirm", |b| b.title("Send it").description("Yes sends the transaction."))
            .build()
            .map_err(|e| ToolError::Failed(format!("the confirmation form could not be built: {e}")))?;
        let request = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question,
            requested_schema: schema,
        };
        let asked = self.inner.peer.create_elicitation_with_timeout(request, Some(CONFIRM_WAIT)).await;
        let answer = asked.map_err(|e| {
            ToolError::Unconfirmed(format!(
                "The human was asked to confirm and did not answer ({e}); nothing was sent."
            ))
        })?;
        let yes = answer.content.as_ref().and_then(|c| c.get("confirm")).and_then(serde_json::Value::as_bool);
        match (answer.action, yes) {
            (ElicitationAction::Accept, Some(true)) => Ok(()),
            (ElicitationAction::Accept, _) => {
                Err(ToolError::Unconfirmed("The human did not confirm the spend; nothing was sent.".into()))
            }
            (ElicitationAction::Decline, _) => {
                Err(ToolError::Unconfirmed("The human declined the spend; nothing was sent.".into()))
            }
            (_, _) => {
                Err(ToolError::Unconfirmed("The human cancelled the confirmation; nothing was sent.".into()))
            }
        }
    }
}
