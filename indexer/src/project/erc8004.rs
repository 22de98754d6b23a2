//! The chain's ERC-8004 registries into `erc8004_agents`, `erc8004_agent_changes`,
//! `erc8004_feedback` and `erc8004_revocations`: one row per event, never updated, so a rollback
//! deletes the rows above the fork and nothing is replayed. Each event also marks its agent for
//! the end-of-pass refresh of `erc8004_reputation` (`reputation::refresh_pending`).

use agentpact_contracts::erc8004::{AGENT_WALLET_KEY, RegistrationFile};
use agentpact_schema::{ChainText, i64_of};
use alloy::primitives::{Address, U256};
use sqlx::PgConnection;

use super::Place;
use crate::{
    event::{Erc8004Event, JournalEvent},
    journal::to_i32,
};

/// Applies one ERC-8004 event.
pub(super) async fn apply(
    conn: &mut PgConnection,
    e: &JournalEvent,
    event: &Erc8004Event,
) -> Result<(), sqlx::Error> {
    let at = Place::of(e);
    let log = to_i32(e.log_index);
    let agent = event.agent_id().to_string();
    match event {
        Erc8004Event::Transfer { to, .. } => change(conn, &at, log, &agent, Change::Owner(*to)).await?,
        Erc8004Event::Registered { agent_uri, .. } => {
            sqlx::query!(
                "INSERT INTO erc8004_agents (chain_id, agent_id, registered_at, block_number, log_index)
                 VALUES ($1, $2::text::numeric, to_timestamp($3::bigint), $4, $5)",
                at.chain_id,
                agent,
                at.time,
                at.block,
                log,
            )
            .execute(&mut *conn)
            .await?;
            change(conn, &at, log, &agent, Change::Uri(agent_uri)).await?;
        }
        Erc8004Event::UriUpdated { new_uri, .. } => {
            change(conn, &at, log, &agent, Change::Uri(new_uri)).await?
        }
        Erc8004Event::MetadataSet { key, value, .. } => {
            if key.as_bytes() == AGENT_WALLET_KEY.as_bytes() {
                // 20 bytes: the new wallet; anything else (empty: unset, or a transfer) clears it.
                let wallet = (value.len() == 20).then(|| Address::from_slice(value));
                change(conn, &at, log, &agent, Change::Wallet(wallet)).await?;
            }
        }
        Erc8004Event::NewFeedback {
            client,
            feedback_index,
            value,
            value_decimals,
            tag1,
            tag2,
            endpoint,
            feedback_uri,
            feedback_hash,
            ..
        } => {
            let texts = [tag1, tag2, endpoint, feedback_uri];
            let exact = texts
                .iter()
                .any(|t| !t.is_plain())
                .then(|| texts.iter().map(|t| t.as_bytes().to_vec()).collect::<Vec<_>>());
            sqlx::query!(
                "INSERT INTO erc8004_feedback (chain_id, agent_id, client, feedback_index, value, value_decimals, tag1,
                                               tag2, endpoint, feedback_uri, feedback_hash, text_bytes, given_at,
                                               block_number, log_index, tx_hash)
                 VALUES ($1, $2::text::numeric, $3, $4, $5::text::numeric, $6, $7, $8, $9, $10, $11, $12,
                         to_timestamp($13::bigint), $14, $15, $16)
                 ON CONFLICT DO NOTHING",
                at.chain_id,
                agent,
                client.as_slice(),
                i64_of(*feedback_index),
                value.to_string(),
                i16::from(*value_decimals),
                &*tag1.display(),
                &*tag2.display(),
                &*endpoint.display(),
                &*feedback_uri.display(),
                feedback_hash.as_slice(),
                exact as Option<Vec<Vec<u8>>>,
                at.time,
                at.block,
                log,
                e.tx_hash.as_slice(),
            )
            .execute(&mut *conn)
            .await?;
        }
        Erc8004Event::FeedbackRevoked { client, feedback_index, .. } => {
            sqlx::query!(
                "INSERT INTO erc8004_revocations (chain_id, agent_id, client, feedback_index, block_number)
                 VALUES ($1, $2::text::numeric, $3, $4, $5) ON CONFLICT DO NOTHING",
                at.chain_id,
                agent,
                client.as_slice(),
                i64_of(*feedback_index),
                at.block,
            )
            .execute(&mut *conn)
            .await?;
        }
    }
    mark(conn, at.chain_id, event.agent_id()).await
}

/// A change of one of an agent's fields.
enum Change<'a> {
    Owner(Address),
    Uri(&'a ChainText),
    Wallet(Option<Address>),
}

async fn change(
    conn: &mut PgConnection,
    at: &Place,
    log: i32,
    agent: &str,
    change: Change<'_>,
) -> Result<(), sqlx::Error> {
    let (field, address, uri) = match change {
        Change::Owner(owner) => ("owner", Some(owner), None),
        Change::Uri(uri) => ("uri", None, Some(uri)),
        Change::Wallet(wallet) => ("wallet", wallet, None),
    };
    // A data: URI is read here, once; any other (https, ipfs) is kept as it is, unread.
    let file = uri.and_then(|u| RegistrationFile::from_uri(u.as_bytes()).ok());
    let skills = file.as_ref().map(|f| f.skills().iter().map(|s| strip_nul(s)).collect::<Vec<_>>());
    sqlx::query!(
        "INSERT INTO erc8004_agent_changes (chain_id, agent_id, field, address, uri, uri_bytes, name, description,
                                            mcp_endpoint, skills, block_number, log_index)
         VALUES ($1, $2::text::numeric, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        at.chain_id,
        agent,
        field,
        address.as_ref().map(|a| a.as_slice()),
        uri.map(|u| u.display().into_owned()),
        uri.and_then(ChainText::exact_if_not_plain),
        file.as_ref().map(|f| strip_nul(&f.name)),
        file.as_ref().map(|f| strip_nul(&f.description)),
        file.as_ref().and_then(|f| f.mcp_endpoint().map(strip_nul)),
        skills.as_deref(),
        at.block,
        log,
    )
    .execute(conn)
    .await
    .map(drop)
}

/// `text` without NUL characters, which Postgres text cannot hold (a registration file is JSON
/// anyone writes; its exact bytes stay in `uri` / `uri_bytes`).
fn strip_nul(text: &str) -> String {
    text.replace('\0', "")
}

/// Notes that `agent`'s aggregates need recomputing at the end of the pass.
async fn mark(conn: &mut PgConnection, chain_id: i64, agent: U256) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO erc8004_pending (chain_id, agent_id) VALUES ($1, $2::text::numeric) ON CONFLICT DO NOTHING",
        chain_id,
        agent.to_string()
    )
    .execute(conn)
    .await
    .map(drop)
}
