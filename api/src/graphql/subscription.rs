//! `pactUpdated`: the pacts that change, as the indexer commits them.

use async_graphql::{Context, InputObject, Result, Subscription};
use futures::{Stream, stream};
use tokio::sync::broadcast::error::RecvError;

use super::{
    ChainId,
    closed_sets::PactStatus,
    scalars::{Address, BigInt},
    types::Pact,
};
use crate::{
    live::{Live, PactChange},
    read::Reader,
};

/// Which changes to receive; every field narrows them.
#[derive(InputObject, Default)]
pub struct PactUpdateFilter {
    /// Only this pact.
    pact_id: Option<BigInt>,
    /// Only pacts where this account is creator, buyer, seller, arbitrator or oracle.
    party: Option<Address>,
    /// Only changes into one of these statuses.
    status: Option<Vec<PactStatus>>,
}

impl PactUpdateFilter {
    /// Decided from the notification alone, so a subscriber reads the database only for the
    /// changes it receives (1,000 party-filtered subscriptions once cost a read each per change).
    fn wants_change(&self, chain_id: u64, change: &PactChange) -> bool {
        change.chain_id == chain_id
            && self.pact_id.is_none_or(|id| id.0 == change.pact_id)
            && self.party.is_none_or(|Address(a)| change.parties.contains(&a))
            && self
                .status
                .as_ref()
                .is_none_or(|statuses| statuses.iter().any(|s| s.0.code() == change.status))
    }
}

/// Subscriptions over pacts.
#[derive(Default)]
pub struct PactSubscription;

/// Subscriptions over pacts.
#[Subscription]
impl PactSubscription {
    /// Each pact passing `filter` as it stands after every committed change (a reorg that undoes
    /// a change sends the pact again). Changes arrive within the indexer's poll interval.
    async fn pact_updated(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        filter: Option<PactUpdateFilter>,
    ) -> Result<impl Stream<Item = Pact> + use<>> {
        let chain = chain_id.unwrap_or(ctx.data::<ChainId>()?.0);
        let reader = ctx.data::<Reader>()?.clone();
        let receiver = ctx.data::<Live>()?.subscribe();
        let filter = filter.unwrap_or_default();
        Ok(stream::unfold((receiver, reader, filter), move |(mut receiver, reader, filter)| async move {
            loop {
                let change = match receiver.recv().await {
                    Ok(change) => change,
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "a pactUpdated subscriber fell behind; skipping ahead");
                        continue;
                    }
                    Err(RecvError::Closed) => return None,
                };
                if !filter.wants_change(chain, &change) {
                    continue;
                }
                // A replica may not have replayed the change yet when the primary announces it.
                if !reader.replayed(chain, change.block).await {
                    tracing::warn!(
                        block = change.block,
                        "the replica has not replayed a change in time; reading it as it is"
                    );
                }
                match reader.pact(chain, change.pact_id).await {
                    Ok(Some(pact)) => return Some((Pact(pact), (receiver, reader, filter))),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "reading a changed pact failed; skipping it"),
                }
            }
        }))
    }
}
