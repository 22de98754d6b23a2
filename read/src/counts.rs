//! How many pacts pass a filter: read from the flat counts the indexer keeps (`pact_counts`,
//! migrations/0010) when the filter is one they cover, otherwise counted up to [`MAX_COUNTED`].

use agentpact_schema::{Cells, i64_of};
use alloy::primitives::Address;
use sqlx::{Postgres, QueryBuilder};

use super::{ReadError, Reader, pacts::PactFilter};

/// The most pacts counted one by one for a filter the flat counts do not cover: past it the count
/// stops and says it is a lower bound.
pub const MAX_COUNTED: u64 = 10_000;

/// How many pacts passed a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// The count, or [`MAX_COUNTED`] when `exact` is false.
    pub value: u64,
    /// Whether `value` is the whole count, not a lower bound.
    pub exact: bool,
}

/// The row of `pact_counts` a filter reads: a dimension and its subject.
fn flat_key(f: &PactFilter) -> Option<(&'static str, Vec<u8>)> {
    let PactFilter {
        statuses: _,
        buyer,
        seller,
        party,
        oracle,
        currency,
        initiator: None,
        min_payment: None,
        max_payment: None,
        deadline_from: None,
        deadline_to: None,
        created_from: None,
        created_to: None,
        search: None,
    } = f
    else {
        return None;
    };
    let named: Vec<(&'static str, Address)> =
        [("buyer", buyer), ("seller", seller), ("party", party), ("oracle", oracle), ("currency", currency)]
            .into_iter()
            .filter_map(|(dimension, subject)| subject.map(|s| (dimension, s)))
            .collect();
    match named.as_slice() {
        [] => Some(("all", Vec::new())),
        [(dimension, subject)] => Some((dimension, subject.to_vec())),
        _ => None,
    }
}

impl Reader {
    /// How many pacts of `chain_id` pass `filter`: exact for no filter, or statuses with at most one
    /// of buyer, seller, party, oracle and currency; otherwise exact up to [`MAX_COUNTED`].
    pub async fn count_pacts(&self, chain_id: u64, filter: &PactFilter) -> Result<Count, ReadError> {
        let cells = Cells { table: "pact_counts", key: format!("chain {chain_id}, a count") };
        let codes: Vec<i16> = filter.statuses.iter().map(|s| i16::from(s.code())).collect();
        if let Some((dimension, subject)) = flat_key(filter) {
            let n = sqlx::query_scalar!(
                r#"SELECT coalesce(sum(pacts), 0)::bigint AS "n!" FROM pact_counts
                   WHERE chain_id = $1 AND dimension = $2 AND subject = $3
                     AND (cardinality($4::smallint[]) = 0 OR status = ANY($4))"#,
                i64_of(chain_id),
                dimension,
                subject,
                &codes
            )
            .fetch_one(self.pool())
            .await?;
            return Ok(Count { value: cells.int("pacts", n)?, exact: true });
        }
        let mut q =
            QueryBuilder::<Postgres>::new("SELECT count(*) FROM (SELECT 1 FROM pacts WHERE chain_id = ");
        q.push_bind(i64_of(chain_id));
        super::pacts::push_filter(&mut q, filter)?;
        q.push(" LIMIT ").push_bind(i64_of(MAX_COUNTED + 1)).push(") AS counted");
        let n: u64 = cells.int("count", q.build_query_scalar::<i64>().fetch_one(self.pool()).await?)?;
        Ok(if n > MAX_COUNTED {
            Count { value: MAX_COUNTED, exact: false }
        } else {
            Count { value: n, exact: true }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_reads_a_flat_count_only_when_one_row_per_status_answers_it() {
        let a = Address::repeat_byte(7);
        let flat = |f: PactFilter| flat_key(&f).map(|(dimension, _)| dimension);
        assert_eq!(flat(PactFilter::default()), Some("all"));
        assert_eq!(
            flat(PactFilter {
                statuses: vec![agentpact_contracts::PactStatus::Funded],
                ..Default::default()
            }),
            Some("all")
        );
        assert_eq!(flat(PactFilter { party: Some(a), ..Default::default() }), Some("party"));
        assert_eq!(flat(PactFilter { oracle: Some(a), ..Default::default() }), Some("oracle"));
        assert_eq!(
            flat(PactFilter { currency: Some(Address::ZERO), ..Default::default() }),
            Some("currency")
        );
        assert_eq!(flat(PactFilter { buyer: Some(a), seller: Some(a), ..Default::default() }), None);
        assert_eq!(
            flat(PactFilter { buyer: Some(a), search: Some("logo".into()), ..Default::default() }),
            None
        );
        assert_eq!(
            flat(PactFilter { initiator: Some(agentpact_contracts::Initiator::Buyer), ..Default::default() }),
            None
        );
    }
}
