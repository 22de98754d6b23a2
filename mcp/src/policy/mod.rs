//! A wallet a human can hand to an agent (docs/mcp.md §Policy): the policy the human set for the
//! wallet ([`rules`]), enforced between the agent's decision and the signature, where no wording
//! in a context window reaches; a kill switch; and a ledger of every attempt ([`ledger`]).
//!
//! The policy, the kill switch and the counters live in the primary database ([`store`]), so
//! every `agentpact mcp` process behind a load balancer holds one wallet to one set of limits.
//! Each decision runs in one transaction holding the wallet's advisory lock, and a transaction's
//! broadcast happens while that lock is held: parallel calls on any number of processes never
//! together pass a budget, and `agentpact wallet freeze` returns only once nothing more can be
//! sent. Only the human's command writes the policy; no tool does.
//!
//! A spend goes: [`Guard::review`] (refused, or the holds a human must answer: the confirmation
//! page asks) → [`Guard::admit`] (decided again under the lock, reserved) → [`Guard::send`] for
//! each transaction (frozen? expired? calls per period? then the broadcast, recorded) →
//! [`Guard::mined`]; a call that ends without sending releases its reservation
//! ([`Guard::release_unsent`]).

pub mod ledger;
pub mod rules;
pub mod store;

use alloy::{
    primitives::{Address, B256},
    signers::local::PrivateKeySigner,
};
use sqlx::PgPool;

use self::{
    ledger::{Chainer, Entry, Event, SpendNote},
    rules::{Attempt, Refusal, Verdict},
    store::Locked,
};
use crate::outcome::ToolError;

/// The policy's enforcement for one wallet on one chain.
#[derive(Clone)]
pub struct Guard {
    pool: PgPool,
    chain_id: u64,
    signer: PrivateKeySigner,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard").field("chain_id", &self.chain_id).field("wallet", &self.wallet()).finish()
    }
}

/// A spend the policy admitted, carried by its call to each transaction it sends.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The reserved spend.
    pub reservation: i64,
    /// What the ledger says of it.
    pub note: SpendNote,
}

impl Guard {
    /// The guard of the wallet `signer` signs for on `chain_id`, keeping its tables in `pool` (the
    /// primary); the wallet's key also signs each ledger entry.
    pub const fn new(pool: PgPool, chain_id: u64, signer: PrivateKeySigner) -> Self {
        Self { pool, chain_id, signer }
    }

    /// The wallet.
    pub fn wallet(&self) -> Address {
        self.signer.address()
    }

    /// Takes the wallet's lock.
    async fn lock(&self) -> Result<Locked<'static>, ToolError> {
        store::lock(&self.pool, self.chain_id, self.wallet()).await.map_err(ToolError::PolicyStore)
    }

    /// Takes the wallet's lock for `tool`'s call (about `spend`) to sign under it, unless the
    /// wallet is frozen or the policy expired: then the refusal is recorded and answered.
    async fn lock_to_sign(
        &self,
        tool: &str,
        spend: Option<&SpendNote>,
    ) -> Result<Locked<'static>, ToolError> {
        let locked = self.lock().await?;
        let c = &locked.controls;
        match rules::may_sign(self.wallet(), c.policy.as_ref(), c.frozen.as_ref(), locked.now) {
            Ok(()) => Ok(locked),
            Err(refusal) => Err(self.refuse(locked, tool, spend, refusal).await?),
        }
    }

    /// The ledger's writer for a decision made under `locked`.
    fn chainer<'k>(&'k self, locked: &Locked<'_>) -> Chainer<'k> {
        Chainer {
            chain_id: self.chain_id,
            signer: &self.signer,
            policy: locked.controls.digest,
            now: locked.now,
        }
    }

    /// Records `refusal` of `tool`'s call (about `spend`) and answers it.
    async fn refuse(
        &self,
        mut locked: Locked<'_>,
        tool: &str,
        spend: Option<&SpendNote>,
        refusal: Refusal,
    ) -> Result<ToolError, ToolError> {
        let entry = Entry {
            event: Event::Refused,
            tool,
            spend,
            rule: Some(&refusal.rule),
            reason: &refusal.sentence,
            tx: None,
        };
        self.chainer(&locked).append(&mut locked.tx, &entry).await?;
        locked.tx.commit().await.map_err(ToolError::PolicyStore)?;
        tracing::info!(rule = %refusal.rule, tool, "the wallet policy refused a call");
        Ok(ToolError::Forbidden(refusal))
    }

    /// What the policy says of `attempt` before the human is asked: refused (recorded, and the
    /// error), or the reasons a human must answer (recorded as held; empty: none).
    pub async fn review(&self, attempt: &Attempt) -> Result<Vec<String>, ToolError> {
        let note = note_of(attempt);
        let mut locked = self.lock_to_sign(&attempt.tool, Some(&note)).await?;
        let controls = locked.controls.clone();
        let Some(policy) = &controls.policy else { return Ok(Vec::new()) };
        let usage = locked
            .usage(self.chain_id, self.wallet(), attempt.counterparty)
            .await
            .map_err(ToolError::PolicyStore)?;
        match rules::decide(policy, &usage, attempt, locked.now, &[]) {
            Verdict::Allow => Ok(Vec::new()),
            Verdict::Refuse(refusal) => Err(self.refuse(locked, &attempt.tool, Some(&note), refusal).await?),
            Verdict::Hold(reasons) => {
                let reason = format!("held for the human's yes: {}", reasons.join("; and "));
                let entry = Entry {
                    event: Event::Held,
                    tool: &attempt.tool,
                    spend: Some(&note),
                    rule: None,
                    reason: &reason,
                    tx: None,
                };
                self.chainer(&locked).append(&mut locked.tx, &entry).await?;
                locked.tx.commit().await.map_err(ToolError::PolicyStore)?;
                Ok(reasons)
            }
        }
    }

    /// Decides `attempt` again under the wallet's lock and, allowed, reserves it: from here it
    /// counts against every budget. `approved`: the hold reasons the human confirmed for this call
    /// on its page (only those pass).
    pub async fn admit(&self, attempt: &Attempt, approved: &[String]) -> Result<Admitted, ToolError> {
        let note = note_of(attempt);
        let mut locked = self.lock_to_sign(&attempt.tool, Some(&note)).await?;
        let controls = locked.controls.clone();
        if let Some(policy) = &controls.policy {
            let usage = locked
                .usage(self.chain_id, self.wallet(), attempt.counterparty)
                .await
                .map_err(ToolError::PolicyStore)?;
            match rules::decide(policy, &usage, attempt, locked.now, approved) {
                Verdict::Allow => {}
                Verdict::Refuse(refusal) => {
                    return Err(self.refuse(locked, &attempt.tool, Some(&note), refusal).await?);
                }
                Verdict::Hold(reasons) => {
                    return Err(ToolError::Unconfirmed(format!(
                        "the human was not asked about this: {} (the wallet's spending changed while they were \
                         asked); nothing was sent: call again to ask",
                        reasons.join("; and ")
                    )));
                }
            }
        }
        let reservation = locked
            .reserve(
                self.chain_id,
                self.wallet(),
                &attempt.tool,
                &attempt.currency,
                attempt.amount,
                attempt.counterparty,
            )
            .await
            .map_err(ToolError::PolicyStore)?;
        let confirmed;
        let reason = if approved.is_empty() {
            "allowed"
        } else {
            confirmed = format!("allowed: the human confirmed {}", approved.join("; and "));
            &confirmed
        };
        let entry = Entry {
            event: Event::Allowed,
            tool: &attempt.tool,
            spend: Some(&note),
            rule: None,
            reason,
            tx: None,
        };
        self.chainer(&locked).append(&mut locked.tx, &entry).await?;
        locked.tx.commit().await.map_err(ToolError::PolicyStore)?;
        Ok(Admitted { reservation, note })
    }

    /// Sends one transaction of `tool`'s call (about `admitted`, when it spends) through
    /// `broadcast`, holding the wallet's lock across it: refused when the wallet is frozen, the
    /// policy expired, or a calls rule is full; recorded as sent (or failed, when the node refused
    /// it) in the same transaction.
    pub async fn send<T>(
        &self,
        tool: &str,
        admitted: Option<&Admitted>,
        broadcast: impl Future<Output = Result<(T, B256), ToolError>>,
    ) -> Result<(T, B256), ToolError> {
        let spend = admitted.map(|a| &a.note);
        let mut locked = self.lock_to_sign(tool, spend).await?;
        let controls = locked.controls.clone();
        if let Some(policy) = &controls.policy {
            let usage =
                locked.usage(self.chain_id, self.wallet(), None).await.map_err(ToolError::PolicyStore)?;
            if let Err(refusal) = rules::may_send(policy, &usage, tool, locked.now) {
                return Err(self.refuse(locked, tool, spend, refusal).await?);
            }
        }
        match broadcast.await {
            Ok((sent, hash)) => {
                if let Some(admitted) = admitted {
                    locked.mark_sent(admitted.reservation, hash).await.map_err(ToolError::PolicyStore)?;
                }
                let entry =
                    Entry { event: Event::Sent, tool, spend, rule: None, reason: "sent", tx: Some(hash) };
                self.chainer(&locked).append(&mut locked.tx, &entry).await?;
                locked.tx.commit().await.map_err(ToolError::PolicyStore)?;
                Ok((sent, hash))
            }
            Err(e) => {
                let reason = format!("not sent: {e}");
                let entry =
                    Entry { event: Event::Failed, tool, spend, rule: None, reason: &reason, tx: None };
                self.chainer(&locked).append(&mut locked.tx, &entry).await?;
                locked.tx.commit().await.map_err(ToolError::PolicyStore)?;
                Err(e)
            }
        }
    }

    /// Records the fate of the transaction `tx` of `tool`'s call: mined and succeeded, or failed
    /// (`why`), which releases its spend.
    pub async fn mined(&self, tool: &str, admitted: Option<&Admitted>, tx: B256, failed: Option<&str>) {
        let recorded = async {
            let mut locked = self.lock().await?;
            let spend = admitted.map(|a| &a.note);
            let (event, reason) = match failed {
                None => (Event::Mined, "mined".to_owned()),
                Some(why) => (Event::Failed, format!("failed: {why}")),
            };
            if let (Some(admitted), Some(_)) = (admitted, failed) {
                locked.release(admitted.reservation).await.map_err(ToolError::PolicyStore)?;
            }
            let entry = Entry { event, tool, spend, rule: None, reason: &reason, tx: Some(tx) };
            self.chainer(&locked).append(&mut locked.tx, &entry).await?;
            locked.tx.commit().await.map_err(ToolError::PolicyStore)
        };
        if let Err(e) = recorded.await {
            tracing::error!(error = %e, %tx, "could not record a transaction's fate in the wallet ledger");
        }
    }

    /// Releases `admitted` when its call ended without sending it.
    pub async fn release_unsent(&self, admitted: &Admitted) {
        if let Err(e) = store::release_unsent(&self.pool, admitted.reservation).await {
            tracing::error!(error = %e, "could not release a spend its call never sent; it counts until its period ends");
        }
    }

    /// Makes a signature of `tool`'s (a negotiation message, a webhook request) with `sign`, under
    /// the wallet's lock, unless the wallet is frozen or the policy expired (the refusal is
    /// recorded): a freeze that returned has stopped it, as it stops a send.
    pub async fn sign_with<T>(
        &self,
        tool: &str,
        sign: impl FnOnce() -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let locked = self.lock_to_sign(tool, None).await?;
        let signed = sign();
        locked.tx.rollback().await.map_err(ToolError::PolicyStore)?;
        signed
    }

    /// The policy as it stands for the agent to plan by: the policy, the kill switch and what
    /// the wallet used within the policy's periods, at the database's time.
    pub async fn view(&self) -> Result<View, ToolError> {
        let mut locked = self.lock().await?;
        let usage = locked.usage(self.chain_id, self.wallet(), None).await.map_err(ToolError::PolicyStore)?;
        let (controls, now) = (locked.controls.clone(), locked.now);
        locked.tx.rollback().await.map_err(ToolError::PolicyStore)?;
        Ok(View { controls, usage, now })
    }
}

/// The policy as it stands ([`Guard::view`]).
#[derive(Debug, Clone)]
pub struct View {
    /// The policy and the kill switch.
    pub controls: store::Controls,
    /// What the wallet used within the policy's periods.
    pub usage: rules::Usage,
    /// The database's time it was read at.
    pub now: chrono::DateTime<chrono::Utc>,
}

/// What the ledger says of `attempt`'s spend.
fn note_of(attempt: &Attempt) -> SpendNote {
    SpendNote {
        amount: attempt.amount,
        symbol: attempt.currency.symbol.clone(),
        counterparty: attempt.counterparty,
    }
}

/// The names of every tool, as a policy's rules may name them.
pub fn tool_names() -> Vec<&'static str> {
    crate::tools::catalog().iter().map(|t| t.name).collect()
}
