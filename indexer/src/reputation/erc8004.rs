//! Per-agent ERC-8004 aggregates (`erc8004_reputation`): the raw figures (unrevoked feedback,
//! clients, mean value) and the grounded ones (one vote per client that paid the agent's wallet
//! through a settled pact, weighing what its paid pacts weigh: the view `erc8004_client_votes`
//! over `erc8004_grounding`, which the generation's `erc8004_trusted` reads too).

use sqlx::PgConnection;

/// Recomputes the ERC-8004 aggregates of every agent (`all`), or of `agents` and of the agents
/// whose wallet is one of `wallets` (paid through a pact just settled: its grounding may change).
pub(super) async fn refresh(
    conn: &mut PgConnection,
    chain: i64,
    all: bool,
    wallets: &[Vec<u8>],
    agents: &[String],
) -> Result<(), sqlx::Error> {
    let ids = sqlx::query_scalar!(
        r#"SELECT agent_id::text AS "id!" FROM erc8004_agent_state
           WHERE chain_id = $1 AND ($2 OR wallet = ANY($3) OR agent_id = ANY($4::text[]::numeric[]))
           UNION SELECT DISTINCT agent_id::text FROM erc8004_feedback WHERE chain_id = $1 AND $2"#,
        chain,
        all,
        wallets,
        agents
    )
    .fetch_all(&mut *conn)
    .await?;
    let ids: Vec<String> = ids.into_iter().chain(agents.iter().cloned()).collect();
    sqlx::query!(
        "DELETE FROM erc8004_reputation WHERE chain_id = $1 AND ($2 OR agent_id = ANY($3::text[]::numeric[]))",
        chain,
        all,
        &ids
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!(
        r#"
        WITH raw AS (
            SELECT f.agent_id, count(*) AS feedback, count(DISTINCT f.client) AS clients,
                   avg(f.value / 10::numeric ^ f.value_decimals) AS mean_value
            FROM erc8004_feedback f
            JOIN erc8004_grounding g USING (chain_id, agent_id, client, feedback_index)
            WHERE f.chain_id = $1 AND f.agent_id = ANY($2::text[]::numeric[]) AND NOT g.revoked
            GROUP BY f.agent_id
        ),
        grounded AS (
            SELECT agent_id, sum(given) AS grounded, count(*) AS grounded_clients, sum(weight) AS weight,
                   sum(weight * vote) AS credit
            FROM erc8004_client_votes
            WHERE chain_id = $1 AND agent_id = ANY($2::text[]::numeric[])
            GROUP BY agent_id
        )
        INSERT INTO erc8004_reputation (chain_id, agent_id, feedback, clients, mean_value, grounded,
                                        grounded_clients, grounded_weight, grounded_credit, grounded_score)
        SELECT $1, a.id, coalesce(r.feedback, 0), coalesce(r.clients, 0), r.mean_value, coalesce(g.grounded, 0),
               coalesce(g.grounded_clients, 0), coalesce(g.weight, 0), coalesce(g.credit, 0),
               reputation_score(coalesce(g.credit, 0), coalesce(g.weight, 0))
        FROM (SELECT DISTINCT unnest($2::text[])::numeric AS id) a
        LEFT JOIN raw r ON r.agent_id = a.id LEFT JOIN grounded g ON g.agent_id = a.id
        ON CONFLICT (chain_id, agent_id) DO NOTHING
        "#,
        chain,
        &ids
    )
    .execute(conn)
    .await
    .map(drop)
}
