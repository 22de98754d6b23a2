//! AgentRegistry's profile events into `agents` and `agent_capabilities`. A registration or an
//! update writes the whole profile (the event carries it), so replaying an agent's events in order
//! from nothing rebuilds its rows.

use sqlx::PgConnection;

use super::Place;
use crate::event::{EventBody, JournalEvent, Profile};

/// Applies one agent registry event; other kinds are left alone.
pub(super) async fn apply(conn: &mut PgConnection, e: &JournalEvent) -> Result<(), sqlx::Error> {
    let at = Place::of(e);
    match &e.body {
        EventBody::AgentRegistered { agent, profile } | EventBody::ProfileUpdated { agent, profile } => {
            write_profile(conn, &at, agent.as_slice(), profile).await
        }
        EventBody::AgentDeactivated { agent } | EventBody::AgentReactivated { agent } => {
            let active = matches!(e.body, EventBody::AgentReactivated { .. });
            sqlx::query!(
                "UPDATE agents SET active = $3, updated_at = to_timestamp($4::bigint), updated_block = $5
                 WHERE chain_id = $1 AND address = $2",
                at.chain_id,
                agent.as_slice(),
                active,
                at.time,
                at.block,
            )
            .execute(conn)
            .await
            .map(drop)
        }
        _ => Ok(()),
    }
}

/// Inserts or replaces an agent's profile and capabilities. A registration makes the agent active;
/// an update keeps whatever the agent's activity was.
async fn write_profile(
    conn: &mut PgConnection,
    at: &Place,
    agent: &[u8],
    profile: &Profile,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO agents (chain_id, address, name, description, endpoint, metadata_uri, active, registered_at,
                             updated_at, updated_block)
         VALUES ($1, $2, $3, $4, $5, $6, true, to_timestamp($7::bigint), to_timestamp($7::bigint), $8)
         ON CONFLICT (chain_id, address) DO UPDATE SET
             name = EXCLUDED.name, description = EXCLUDED.description, endpoint = EXCLUDED.endpoint,
             metadata_uri = EXCLUDED.metadata_uri, updated_at = EXCLUDED.updated_at,
             updated_block = EXCLUDED.updated_block",
        at.chain_id,
        agent,
        profile.name,
        profile.description,
        profile.endpoint,
        profile.metadata_uri,
        at.time,
        at.block,
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!("DELETE FROM agent_capabilities WHERE chain_id = $1 AND address = $2", at.chain_id, agent)
        .execute(&mut *conn)
        .await?;
    let caps = &profile.capabilities;
    let names: Vec<&str> = caps.iter().map(|c| c.name.as_str()).collect();
    let descriptions: Vec<&str> = caps.iter().map(|c| c.description.as_str()).collect();
    let prices: Vec<String> = caps.iter().map(|c| c.price.to_string()).collect();
    let currencies: Vec<&[u8]> = caps.iter().map(|c| c.currency.as_slice()).collect();
    sqlx::query!(
        "INSERT INTO agent_capabilities (chain_id, address, position, name, description, price, currency)
         SELECT $1, $2, (u.n - 1)::smallint, u.name, u.description, u.price::numeric, u.currency
         FROM UNNEST($3::text[], $4::text[], $5::text[], $6::bytea[])
              WITH ORDINALITY AS u(name, description, price, currency, n)",
        at.chain_id,
        agent,
        &names as &[&str],
        &descriptions as &[&str],
        &prices,
        &currencies as &[&[u8]],
    )
    .execute(conn)
    .await
    .map(drop)
}
