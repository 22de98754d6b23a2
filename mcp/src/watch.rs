//! What a client hears about: the resources it subscribed to, told `resources/updated` when
//! they change, and `resources/list_changed` when this wallet gains a pact or a conversation.
//! A 2025-11-25 session subscribes with `resources/subscribe` and hears through its session; a
//! 2026-07-28 client opens a `subscriptions/listen` request and hears on its stream ([`Ear`]).
//! Fed by the same Postgres LISTEN/NOTIFY the GraphQL subscriptions use (the indexer's pact
//! changes, the relay's messages): one listener per process, one watcher task per session or
//! stream. Any process can serve a stream: the changes come from the database, not from the
//! process that sent the write.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
};

use agentpact_negotiation::MessageNote;
use agentpact_read::live::PactChange;
use alloy::primitives::{Address, U256};
use rmcp::{
    Peer, RoleServer,
    model::{ResourceListChangedNotification, ResourceUpdatedNotification, ResourceUpdatedNotificationParam},
    service::{SubscriptionSendError, SubscriptionSink},
};
use tokio::sync::broadcast::error::RecvError;

/// The process's listener: the indexer's pact changes and the relay's messages, on one LISTEN
/// connection (`agentpact-read` names the indexer's channel, the relay its own).
pub type Live = agentpact_read::live::Live<MessageNote>;

/// One session's or stream's subscriptions, and whether its watcher runs.
#[derive(Debug, Default)]
pub struct Subscriptions {
    /// Each subscribed resource: its canonical form ([`canonical`]) and the form the client
    /// named it in, which its notifications carry.
    uris: Mutex<std::collections::HashMap<String, String>>,
    /// Set once the session's watcher started: it starts at the session's first
    /// `resources/subscribe` or `resources/list`, so a session that asks for neither holds no
    /// listening connection; while the index cannot be read it keeps trying ([`follow`]).
    pub started: tokio::sync::OnceCell<()>,
}

impl Subscriptions {
    /// Adds `uri` (already in its canonical form, see [`canonical`]), told as `named`.
    pub fn add(&self, uri: String, named: String) {
        self.uris.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(uri, named);
    }

    /// The subscriptions of a `subscriptions/listen` stream: those of `uris` that can change.
    pub fn of<'a>(uris: impl IntoIterator<Item = &'a String>) -> Self {
        let this = Self::default();
        for uri in uris {
            if let Some(canonical) = canonical(uri) {
                this.add(canonical, uri.clone());
            }
        }
        this
    }

    /// Removes `uri`.
    pub fn remove(&self, uri: &str) {
        self.uris.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(uri);
    }

    /// Every subscription, as the client named it.
    fn named(&self) -> Vec<String> {
        self.uris.lock().unwrap_or_else(std::sync::PoisonError::into_inner).values().cloned().collect()
    }

    /// Those of `touched` subscribed to, as the client named them.
    fn wanted(&self, touched: Vec<String>) -> Vec<String> {
        let uris = self.uris.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        touched.into_iter().filter_map(|u| uris.get(&u).cloned()).collect()
    }
}

/// Where a watcher's notifications go.
#[derive(Debug, Clone)]
pub enum Ear {
    /// A 2025-11-25 session, through its peer.
    Session(Peer<RoleServer>),
    /// A 2026-07-28 `subscriptions/listen` stream (which tells only what it accepted).
    Stream(SubscriptionSink),
}

impl Ear {
    /// Tells that `uri` changed; `false` once nobody hears any more.
    async fn updated(&self, uri: String) -> bool {
        let param = ResourceUpdatedNotificationParam::new(uri);
        match self {
            Self::Session(peer) => peer.notify_resource_updated(param).await.is_ok(),
            Self::Stream(sink) => heard(sink.send(ResourceUpdatedNotification::new(param).into()).await),
        }
    }

    /// Tells that the list of resources changed; `false` once nobody hears any more.
    async fn list_changed(&self) -> bool {
        match self {
            Self::Session(peer) => peer.notify_resource_list_changed().await.is_ok(),
            Self::Stream(sink) => heard(sink.send(ResourceListChangedNotification::default().into()).await),
        }
    }
}

/// `uri` as subscriptions and changes name it: an agent's address checksummed, a pact id without
/// leading zeros; `None` when it names no resource that can change.
pub fn canonical(uri: &str) -> Option<String> {
    if let Some(id) = uri.strip_prefix("pact://pacts/") {
        return id.parse::<u64>().ok().map(|id| format!("pact://pacts/{id}"));
    }
    if let Some(address) = uri.strip_prefix("hire://agents/") {
        return address.parse::<Address>().ok().map(|a| format!("hire://agents/{a}"));
    }
    let fixed = ["hire://profile", "hire://contracts", "hire://conversations"];
    if fixed.contains(&uri) || uri.strip_prefix("hire://conversations/").is_some_and(|id| !id.is_empty()) {
        return Some(uri.to_owned());
    }
    None
}

/// The resources a change of a pact touches, seen by wallet `me`.
fn touched_by_pact(change: &PactChange, me: Address) -> Vec<String> {
    let mut touched = vec![format!("pact://pacts/{}", change.pact_id)];
    touched.extend(change.parties.iter().map(|p| format!("hire://agents/{p}")));
    if change.parties.contains(&me) {
        touched.extend(["hire://contracts".to_owned(), "hire://profile".to_owned()]);
    }
    touched
}

/// The resources a negotiation message touches, seen by wallet `me`.
fn touched_by_message(note: &MessageNote, me: Address) -> Vec<String> {
    let mut touched = vec![format!("hire://conversations/{}", note.conversation_id)];
    if note.from == me || note.to == me {
        touched.push("hire://conversations".to_owned());
    }
    touched
}

/// Whether a stream still listens after a send: one it did not ask for (rmcp holds the stream to
/// its accepted filter) is not sent, and the stream goes on.
fn heard(sent: Result<(), SubscriptionSendError>) -> bool {
    matches!(sent, Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)))
}

/// Watches the changes of chain `chain_id` for `ear` (wallet `me`) until nobody hears: sends
/// `resources/updated` for what it subscribed to, and `resources/list_changed` when `me` gains a
/// pact (one not in `known`) or a conversation opens with it.
pub async fn watch(
    live: Live,
    ear: Ear,
    subscriptions: Arc<Subscriptions>,
    chain_id: u64,
    me: Address,
    mut known: HashSet<U256>,
) {
    let (mut pacts, mut messages) = (live.subscribe(), live.subscribe_messages());
    loop {
        let (touched, new_to_me) = tokio::select! {
            change = pacts.recv() => match change {
                Ok(c) if c.chain_id == chain_id => {
                    let new = c.parties.contains(&me) && known.insert(c.pact_id);
                    (touched_by_pact(&c, me), new)
                }
                Ok(_) => continue,
                Err(RecvError::Lagged(skipped)) => {
                    tracing::warn!(skipped, "fell behind the pact changes; some updates were not sent");
                    continue;
                }
                Err(RecvError::Closed) => return,
            },
            note = messages.recv() => match note {
                Ok(n) if n.chain_id == chain_id => {
                    let new = n.seq == 1 && (n.from == me || n.to == me);
                    (touched_by_message(&n, me), new)
                }
                Ok(_) => continue,
                Err(RecvError::Lagged(skipped)) => {
                    tracing::warn!(skipped, "fell behind the negotiation messages; some updates were not sent");
                    continue;
                }
                Err(RecvError::Closed) => return,
            },
        };
        for uri in subscriptions.wanted(touched) {
            if !ear.updated(uri).await {
                return; // the session or stream ended
            }
        }
        if new_to_me && !ear.list_changed().await {
            return;
        }
    }
}

/// The first wait before trying again to follow the index's changes; it doubles up to
/// [`LAST_RETRY`].
const FIRST_RETRY: std::time::Duration = std::time::Duration::from_millis(250);

/// The longest wait between tries to follow the index's changes.
const LAST_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

/// Follows the index's changes for the session `peer` ([`watch`]), once `ready` yields the
/// listener and the wallet's pacts. While it cannot (the index's database being migrated or
/// restarted), tries again with a doubling wait, for as long as the session lives; once it can,
/// tells every subscription made meanwhile, and the list, that they may have changed.
pub async fn follow<F, Fut>(
    ready: F,
    peer: Peer<RoleServer>,
    subscriptions: Arc<Subscriptions>,
    chain_id: u64,
    me: Address,
) where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<(Live, HashSet<U256>), String>>,
{
    let (mut wait, mut missed) = (FIRST_RETRY, false);
    let (live, known) = loop {
        match ready().await {
            Ok(ready) => break ready,
            Err(_) if peer.is_transport_closed() => return,
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?wait, "cannot follow the index's changes yet; trying again");
                missed = true;
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LAST_RETRY);
            }
        }
    };
    let ear = Ear::Session(peer);
    if missed {
        tracing::info!("following the index's changes again; telling this session what it subscribed to");
        for uri in subscriptions.named() {
            if !ear.updated(uri).await {
                return;
            }
        }
        if !ear.list_changed().await {
            return;
        }
    }
    watch(live, ear, subscriptions, chain_id, me, known).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_compared_in_one_form() {
        let a = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
        assert_eq!(
            canonical(&format!("hire://agents/{a}")).as_deref(),
            Some("hire://agents/0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
        );
        assert_eq!(canonical("pact://pacts/007").as_deref(), Some("pact://pacts/7"));
        assert_eq!(canonical("hire://conversations/conv_1").as_deref(), Some("hire://conversations/conv_1"));
        assert_eq!(canonical("pact://config"), None, "the config never changes while serving");
        assert_eq!(canonical("pact://pacts/x"), None);
        assert_eq!(canonical("hire://agents/0x12"), None);
    }

    #[test]
    fn a_change_touches_the_pact_its_parties_and_the_wallets_lists() {
        let (me, other) = (Address::repeat_byte(1), Address::repeat_byte(2));
        let change =
            PactChange { chain_id: 1, pact_id: U256::from(3), status: 1, block: 9, parties: vec![me, other] };
        let touched = touched_by_pact(&change, me);
        for uri in ["pact://pacts/3", "hire://contracts", "hire://profile", &format!("hire://agents/{other}")]
        {
            assert!(touched.iter().any(|t| t == uri), "{uri} in {touched:?}");
        }
        assert!(!touched_by_pact(&change, Address::repeat_byte(9)).contains(&"hire://contracts".to_owned()));
    }
}
