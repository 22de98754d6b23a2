//! The market over time and across scores, for charts: completed payment per currency in hourly
//! or daily buckets, and how the weighted oracle scores of verified pacts spread.

use agentpact_contracts::{PactStatus, closed_set};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::U256;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use super::{Currency, ReadError, Reader};

closed_set! {
    /// How wide a bucket of [`Reader::volume_over_time`] is, named as Postgres' `date_trunc` unit.
    pub enum Interval {
        /// An hour.
        Hour => "hour",
        /// A day (UTC).
        Day => "day",
    }
}

impl Interval {
    fn length(self) -> TimeDelta {
        match self {
            Self::Hour => TimeDelta::hours(1),
            Self::Day => TimeDelta::days(1),
        }
    }
}

/// The most buckets one [`Reader::volume_over_time`] answers.
pub const MAX_BUCKETS: u32 = 366;

/// Completed payment in one currency during one bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeBucket {
    /// When the bucket starts (UTC).
    pub start: DateTime<Utc>,
    /// The currency.
    pub currency: Currency,
    /// Pacts completed in it.
    pub pacts: u64,
    /// Their payment, in the currency's base units.
    pub completed: U256,
}

/// Verified pacts whose weighted score fell in `from..=to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreBand {
    /// The band's lowest score.
    pub from: u8,
    /// Its highest score.
    pub to: u8,
    /// How many pacts scored in it.
    pub pacts: u64,
}

impl Reader {
    /// Completed payment per currency in each of the `last` buckets of `interval` that end with
    /// the indexed block's: every bucket and currency listed (zeros included), oldest bucket
    /// first, currencies as [`Reader::currencies`] orders them. Empty before the first batch;
    /// `last` is held to 1..=[`MAX_BUCKETS`].
    pub async fn volume_over_time(
        &self,
        chain_id: u64,
        interval: Interval,
        last: u32,
    ) -> Result<Vec<VolumeBucket>, ReadError> {
        let Some(end) = self.indexer_status(chain_id).await?.and_then(|s| s.indexed_block_time) else {
            return Ok(Vec::new());
        };
        let cells = Cells { table: "pacts", key: format!("chain {chain_id}, completed since the window") };
        let newest = cells.present("closed_at", end.duration_trunc(interval.length()).ok())?;
        let starts: Vec<_> =
            (0..last.clamp(1, MAX_BUCKETS)).rev().map(|k| newest - interval.length() * k as i32).collect();
        let rows = sqlx::query!(
            r#"SELECT date_trunc($3, closed_at, 'UTC') AS "start!", currency, count(*) AS "pacts!",
                      sum(payment)::text AS "completed!"
               FROM pacts WHERE chain_id = $1 AND status = $2 AND closed_at >= $4
               GROUP BY 1, 2"#,
            i64_of(chain_id),
            PactStatus::Completed as i16,
            interval.name(),
            starts[0],
        )
        .fetch_all(self.pool())
        .await?;
        let currencies = self.currencies(chain_id).await?;
        let mut buckets: Vec<VolumeBucket> = starts
            .iter()
            .flat_map(|&start| {
                currencies.iter().map(move |currency| VolumeBucket {
                    start,
                    currency: currency.clone(),
                    pacts: 0,
                    completed: U256::ZERO,
                })
            })
            .collect();
        for row in rows {
            let cells =
                Cells { table: "pacts", key: format!("chain {chain_id}, completed at {}", row.start) };
            let currency = cells.address("currency", &row.currency)?;
            // A currency the escrow never announced is a corrupt row, not a volume to drop.
            let bucket = cells.present(
                "currency",
                buckets.iter_mut().find(|b| b.start == row.start && b.currency.address == currency),
            )?;
            bucket.pacts = cells.int("count", row.pacts)?;
            bucket.completed = cells.u256("payment", &row.completed)?;
        }
        Ok(buckets)
    }

    /// How many verified pacts of `chain_id` scored in each band of ten (0-9, 10-19, …, 90-100),
    /// every band listed.
    pub async fn score_distribution(&self, chain_id: u64) -> Result<Vec<ScoreBand>, ReadError> {
        let rows = sqlx::query!(
            r#"SELECT least(final_score / 10, 9)::smallint AS "band!", count(*) AS "pacts!"
               FROM pacts WHERE chain_id = $1 AND final_score IS NOT NULL GROUP BY 1"#,
            i64_of(chain_id)
        )
        .fetch_all(self.pool())
        .await?;
        let mut bands: Vec<ScoreBand> = (0..10u8)
            .map(|b| ScoreBand { from: b * 10, to: if b == 9 { 100 } else { b * 10 + 9 }, pacts: 0 })
            .collect();
        for row in rows {
            let cells = Cells { table: "pacts", key: format!("chain {chain_id}, scores band {}", row.band) };
            let band: usize = cells.int("final_score", row.band)?;
            cells.present("final_score", bands.get_mut(band))?.pacts = cells.int("count", row.pacts)?;
        }
        Ok(bands)
    }
}
