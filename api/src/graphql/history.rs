//! The queries behind charts: completed payment over time per currency, and how oracle scores
//! spread.

use async_graphql::{Context, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    closed_sets::{Closed, Interval},
    errors::{Code, to_graphql},
    meta::{BlockHeight, indexed},
    scalars::BigInt,
    types::Currency,
};
use crate::read::{self, MAX_BUCKETS, Reader};

/// Queries for charts.
#[derive(Default)]
pub struct HistoryQuery;

#[Object]
impl HistoryQuery {
    /// Completed payment per currency in each of the `last` (1-366) hours or days that end with
    /// the indexed block's: every bucket and currency listed (zeros included), oldest first.
    /// Amounts in different currencies are never added together.
    #[graphql(
        complexity = "super::cost::HISTORY + child_complexity * last.clamp(1, MAX_BUCKETS.into()) as usize"
    )]
    async fn volume_over_time(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
        #[graphql(default_with = "Closed(read::Interval::Day)")] interval: Interval,
        #[graphql(default = 14)] last: i64,
    ) -> Result<Vec<VolumeBucket>> {
        let last = u32::try_from(last).ok().filter(|n| (1..=MAX_BUCKETS).contains(n)).ok_or_else(|| {
            Code::BadArgument.error(format!("last must be 1 to {MAX_BUCKETS} buckets, not {last}"))
        })?;
        let chain = indexed(ctx, chain_id, block).await?;
        let buckets =
            ctx.data::<Reader>()?.volume_over_time(chain, interval.0, last).await.map_err(to_graphql)?;
        Ok(buckets.into_iter().map(Into::into).collect())
    }

    /// How many verified pacts got a weighted oracle score in each band of ten: 0-9, 10-19, …,
    /// 90-100, every band listed.
    #[graphql(complexity = "super::cost::SCORES + child_complexity")]
    async fn score_distribution(
        &self,
        ctx: &Context<'_>,
        chain_id: Option<u64>,
        block: Option<BlockHeight>,
    ) -> Result<Vec<ScoreBand>> {
        let chain = indexed(ctx, chain_id, block).await?;
        let bands = ctx.data::<Reader>()?.score_distribution(chain).await.map_err(to_graphql)?;
        Ok(bands.into_iter().map(Into::into).collect())
    }
}

/// Completed payment in one currency during one bucket of time.
#[derive(SimpleObject)]
pub struct VolumeBucket {
    /// When the bucket starts (UTC).
    start: DateTime<Utc>,
    /// The currency.
    currency: Currency,
    /// Pacts completed in the bucket.
    pacts: u64,
    /// Their payment, in the currency's base units.
    completed: BigInt,
    /// The same as an exact decimal.
    completed_formatted: String,
}

impl From<read::VolumeBucket> for VolumeBucket {
    fn from(b: read::VolumeBucket) -> Self {
        Self {
            completed_formatted: b.currency.format(b.completed),
            start: b.start,
            pacts: b.pacts,
            completed: BigInt(b.completed),
            currency: Currency(b.currency),
        }
    }
}

/// Verified pacts whose weighted score fell in one band.
#[derive(SimpleObject)]
pub struct ScoreBand {
    /// The band's lowest score.
    from: u8,
    /// Its highest score.
    to: u8,
    /// How many pacts scored in it.
    pacts: u64,
}

impl From<read::ScoreBand> for ScoreBand {
    fn from(b: read::ScoreBand) -> Self {
        Self { from: b.from, to: b.to, pacts: b.pacts }
    }
}
