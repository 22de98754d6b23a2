//! AgentRegistry's profile events into `agents` and `agent_capabilities`. A registration or an
//! update writes the whole profile (the event carries it), so replaying an agent's events in order
//! from nothing rebuilds its rows.

use sqlx::PgConnection;

use super::Place;
use alloy::primitives::Address;

use crate::event::Profile;

/// Marks an agent as stepped out of the market (`active` false) or back in.
pub(super) async fn set_active(
    conn: &mut PgConnection,
    at: &Place,
    agent: &Address,
    active: bool,
) -> Result<(), sqlx::Error> {
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

/// Inserts or replaces an agent's profile and capabilities. A registration makes the agent active;
/// an update keeps whatever the agent's activity was.
pub(super) async fn write_profile(
    conn: &mut PgConnection,
    at: &Place,
    agent: &Address,
    profile: &Profile,
) -> Result<(), sqlx::Error> {
    let agent = agent.as_slice();
    sqlx::query!(
        "INSERT INTO agents (chain_id, address, name, description, endpoint, metadata_uri, active, registered_at,
                             updated_at, updated_block, name_bytes, description_bytes, endpoint_bytes,
                             metadata_uri_bytes)
         VALUES ($1, $2, $3, $4, $5, $6, true, to_timestamp($7::bigint), to_timestamp($7::bigint), $8, $9, $10, $11, $12)
         ON CONFLICT (chain_id, address) DO UPDATE SET
             name = EXCLUDED.name, description = EXCLUDED.description, endpoint = EXCLUDED.endpoint,
             metadata_uri = EXCLUDED.metadata_uri, updated_at = EXCLUDED.updated_at,
             updated_block = EXCLUDED.updated_block, name_bytes = EXCLUDED.name_bytes,
             description_bytes = EXCLUDED.description_bytes, endpoint_bytes = EXCLUDED.endpoint_bytes,
             metadata_uri_bytes = EXCLUDED.metadata_uri_bytes",
        at.chain_id,
        agent,
        &*profile.name.display(),
        &*profile.description.display(),
        &*profile.endpoint.display(),
        &*profile.metadata_uri.display(),
        at.time,
        at.block,
        profile.name.exact_if_not_plain(),
        profile.description.exact_if_not_plain(),
        profile.endpoint.exact_if_not_plain(),
        profile.metadata_uri.exact_if_not_plain(),
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!("DELETE FROM agent_capabilities WHERE chain_id = $1 AND address = $2", at.chain_id, agent)
        .execute(&mut *conn)
        .await?;
    let caps = &profile.capabilities;
    let names: Vec<String> = caps.iter().map(|c| c.name.display().into_owned()).collect();
    let descriptions: Vec<String> = caps.iter().map(|c| c.description.display().into_owned()).collect();
    let name_bytes: Vec<Option<Vec<u8>>> = caps.iter().map(|c| c.name.exact_if_not_plain()).collect();
    let description_bytes: Vec<Option<Vec<u8>>> =
        caps.iter().map(|c| c.description.exact_if_not_plain()).collect();
    let prices: Vec<String> = caps.iter().map(|c| c.price.to_string()).collect();
    let currencies: Vec<&[u8]> = caps.iter().map(|c| c.currency.as_slice()).collect();
    sqlx::query!(
        "INSERT INTO agent_capabilities (chain_id, address, position, name, description, price, currency, name_bytes,
                                         description_bytes)
         SELECT $1, $2, (u.n - 1)::smallint, u.name, u.description, u.price::numeric, u.currency, u.nb, u.db
         FROM UNNEST($3::text[], $4::text[], $5::text[], $6::bytea[], $7::bytea[], $8::bytea[])
              WITH ORDINALITY AS u(name, description, price, currency, nb, db, n)",
        at.chain_id,
        agent,
        &names,
        &descriptions,
        &prices,
        &currencies as &[&[u8]],
        &name_bytes as &[Option<Vec<u8>>],
        &description_bytes as &[Option<Vec<u8>>],
    )
    .execute(conn)
    .await
    .map(drop)
}
