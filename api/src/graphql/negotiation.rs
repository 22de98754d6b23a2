//! Negotiations in GraphQL: conversations with their messages and pact, and a subscription per
//! agent that delivers each message the relay accepts. Each is its parties' and the operator's
//! to read ([`negotiation_access`](super::negotiation_access)).

use std::time::Duration;

use agentpact_negotiation::{ConversationRecord, Store, StoredMessage};
use async_graphql::{Context, Json, Object, Result, Subscription};
use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt, stream};
use tokio::sync::broadcast::error::RecvError;

use super::{
    ChainId,
    closed_sets::{Closed, ConversationFilter, ConversationStatus, MessageType},
    errors::{store_to_graphql, to_graphql},
    meta::{BlockHeight, indexed},
    negotiation_access::{Access, Credential, access, forbidden},
    scalars::Address,
    types::Pact,
};
use crate::{
    databases::{REPLAY_POLL, REPLAY_WAIT},
    live::Live,
    read::Reader,
};

/// Queries over negotiations.
#[derive(Default)]
pub struct NegotiationQuery;

/// Queries over negotiations.
#[Object]
impl NegotiationQuery {
    /// One conversation by id, to one of its parties (a signed request) or the operator (null
    /// when there is none); FORBIDDEN to anyone else, whether or not it exists.
    async fn conversation(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        id: String,
    ) -> Result<Option<Conversation>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let reader = access(ctx, chain)?;
        let found = ctx.data::<Store>()?.conversation(chain, &id).await.map_err(store_to_graphql)?;
        match found {
            Some(c) if reader.may_read(&c) => Ok(Some(Conversation(c))),
            None if reader == Access::Operator => Ok(None),
            _ => Err(forbidden("no conversation with this id that the signer takes part in")),
        }
    }

    /// The conversations `agent` takes part in, latest change first: `active` (negotiating),
    /// `completed` or `all` (the default); at most `first` (≤ 100). To `agent` itself (a signed
    /// request) or the operator; FORBIDDEN to anyone else.
    async fn conversations(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        agent: Address,
        #[graphql(default_with = "Closed(agentpact_negotiation::ConversationFilter::All)")]
        status: ConversationFilter,
        #[graphql(default = 20)] first: u32,
    ) -> Result<Vec<Conversation>> {
        let chain = indexed(ctx, chain_id, block).await?;
        if !access(ctx, chain)?.may_read_agent(agent.0) {
            return Err(forbidden("the signer is not this agent"));
        }
        let list = ctx
            .data::<Store>()?
            .conversations(chain, agent.0, status.0, first)
            .await
            .map_err(store_to_graphql)?;
        Ok(list.into_iter().map(Conversation).collect())
    }
}

/// Subscriptions over negotiations.
#[derive(Default)]
pub struct NegotiationSubscription;

/// Subscriptions over negotiations.
#[Subscription]
impl NegotiationSubscription {
    /// Every message to or from `agent` as the relay accepts it (any api replica), within
    /// milliseconds. To `agent` itself (its signed authorization in `connection_init`) or the
    /// operator; FORBIDDEN to anyone else.
    async fn negotiation_messages(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        agent: Address,
    ) -> Result<impl Stream<Item = NegotiationMessage> + use<>> {
        let chain = chain_id.unwrap_or(ctx.data::<ChainId>()?.0);
        if !access(ctx, chain)?.may_read_agent(agent.0) {
            return Err(forbidden("the signer is not this agent"));
        }
        // A signed read is good for a while, not for the life of the socket: the stream ends
        // when its signature lapses (the client signs again and resubscribes).
        let lapses = Box::pin(tokio::time::sleep(
            ctx.data_opt::<Credential>().map_or(Duration::ZERO, Credential::remaining),
        ));
        let index = ctx.data::<Reader>()?;
        // How long to look for an announced message on a replica that may not have replayed it.
        let patience = if index.is_replica() { REPLAY_WAIT } else { Duration::ZERO };
        let reader = ctx.data::<Store>()?.clone();
        let receiver = ctx.data::<Live>()?.subscribe_messages();
        let me = agent.0;
        Ok(stream::unfold((receiver, reader), move |(mut receiver, reader)| async move {
            loop {
                let note = match receiver.recv().await {
                    Ok(note) => note,
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(
                            missed,
                            "a negotiationMessages subscriber fell behind; skipping ahead"
                        );
                        continue;
                    }
                    Err(RecvError::Closed) => return None,
                };
                if note.chain_id != chain || (note.to != me && note.from != me) {
                    continue;
                }
                let until = tokio::time::Instant::now() + patience;
                loop {
                    match reader.messages_after(chain, &note.conversation_id, note.seq - 1).await {
                        Ok(list) => {
                            if let Some(m) = list.into_iter().find(|m| m.seq == note.seq) {
                                return Some((NegotiationMessage(m), (receiver, reader)));
                            }
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "reading a negotiation message failed; skipping it");
                            break;
                        }
                    }
                    if tokio::time::Instant::now() >= until {
                        break;
                    }
                    tokio::time::sleep(REPLAY_POLL).await;
                }
            }
        })
        .take_until(lapses))
    }
}

/// A negotiation between a seeker and a worker.
pub struct Conversation(pub ConversationRecord);

/// A negotiation between a seeker and a worker.
#[Object]
impl Conversation {
    /// Its id.
    async fn id(&self) -> &str {
        &self.0.conversation.id
    }
    /// Who opened it (the buyer-to-be).
    async fn seeker(&self) -> Address {
        Address(self.0.conversation.seeker)
    }
    /// Who it was opened with (the seller-to-be).
    async fn worker(&self) -> Address {
        Address(self.0.conversation.worker)
    }
    /// Where it stands.
    async fn status(&self) -> ConversationStatus {
        self.0.conversation.status.into()
    }
    /// The task on the table.
    async fn task(&self) -> Option<&str> {
        self.0.conversation.terms.as_ref().map(|t| t.task.as_str())
    }
    /// Its requirements.
    async fn requirements(&self) -> Vec<String> {
        self.0.conversation.terms.as_ref().map(|t| t.requirements.clone()).unwrap_or_default()
    }
    /// The price on the table as the messages name it, canonical: "5 USDC", "0.5 ETH". The pact
    /// that carries it has the price in base units of the escrow's currency of that symbol.
    async fn price(&self) -> Option<String> {
        self.0.conversation.terms.as_ref().map(|t| t.price.to_string())
    }
    /// The deadline on the table.
    async fn deadline(&self) -> Option<DateTime<Utc>> {
        self.0.conversation.terms.as_ref().and_then(|t| t.deadline)
    }
    /// When the party that owes an answer runs out of time.
    async fn expires_at(&self) -> DateTime<Utc> {
        self.0.conversation.expires_at
    }
    /// The document the pact's spec hash covers, once signed.
    async fn terms_document(&self) -> Option<&str> {
        self.0.terms_document.as_deref()
    }
    /// Every message, in order: the audit log.
    async fn messages(&self, ctx: &Context<'_>) -> Result<Vec<NegotiationMessage>> {
        let list = ctx
            .data::<Store>()?
            .conversation_messages(self.0.chain_id, &self.0.conversation.id)
            .await
            .map_err(store_to_graphql)?;
        Ok(list.into_iter().map(NegotiationMessage).collect())
    }
    /// The pact that carries the agreed terms, once signed and indexed.
    async fn pact(&self, ctx: &Context<'_>) -> Result<Option<Pact>> {
        let Some(id) = self.0.pact_id else { return Ok(None) };
        Ok(ctx.data::<Reader>()?.pact(self.0.chain_id, id).await.map_err(to_graphql)?.map(Pact))
    }
}

/// One signed message of a negotiation.
pub struct NegotiationMessage(pub StoredMessage);

/// One signed message of a negotiation.
#[Object]
impl NegotiationMessage {
    /// Its conversation.
    async fn conversation_id(&self) -> &str {
        &self.0.conversation_id
    }
    /// Its place in the conversation, from 1.
    async fn seq(&self) -> i32 {
        self.0.seq
    }
    /// Its type.
    #[graphql(name = "type")]
    async fn kind(&self) -> MessageType {
        self.0.kind.into()
    }
    /// The sender (the zero address for the relay's `contract` message).
    async fn from(&self) -> Address {
        Address(self.0.from)
    }
    /// The recipient.
    async fn to(&self) -> Address {
        Address(self.0.to)
    }
    /// The timestamp, as signed.
    async fn timestamp(&self) -> &str {
        &self.0.timestamp
    }
    /// The payload.
    async fn payload(&self) -> Json<serde_json::Value> {
        Json(self.0.payload.clone())
    }
    /// The sender's EIP-712 signature.
    async fn signature(&self) -> &str {
        &self.0.signature
    }
    /// When the relay accepted it.
    async fn received_at(&self) -> DateTime<Utc> {
        self.0.received_at
    }
}
