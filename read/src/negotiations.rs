//! What anyone may know of a pact's negotiation: how many messages it took. The conversation
//! itself (terms, prices, messages) is its parties' to read, through [`Reader::negotiations`].

use agentpact_schema::{Cells, i64_of};
use alloy::primitives::U256;

use super::{ReadError, Reader};

impl Reader {
    /// How many messages the negotiation that became pact `pact_id` on `chain_id` holds; `None`
    /// when the pact was not signed from one.
    pub async fn negotiation_message_count(
        &self,
        chain_id: u64,
        pact_id: U256,
    ) -> Result<Option<u64>, ReadError> {
        let count = sqlx::query_scalar!(
            r#"SELECT count(m.seq) AS "count!" FROM conversations c
                 LEFT JOIN negotiation_messages m ON m.chain_id = c.chain_id AND m.conversation_id = c.id
                WHERE c.chain_id = $1 AND c.pact_id = $2::text::numeric
                GROUP BY c.id"#,
            i64_of(chain_id),
            pact_id.to_string()
        )
        .fetch_optional(self.pool())
        .await?;
        let cells = Cells { table: "negotiation_messages", key: format!("chain {chain_id} pact {pact_id}") };
        count.map(|n| cells.int("count", n)).transpose().map_err(Into::into)
    }
}
