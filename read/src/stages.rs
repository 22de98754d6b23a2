//! A pact's stages (milestones): each part of its payment with its own deadline, clocks, scores,
//! dispute and end (docs/contracts.md §Stages). A pact of several has a `pact_stages` row each; a
//! one-stage pact's stage is the pact itself, read from its row and its payouts.

use agentpact_contracts::{Ending, PactStatus};
use agentpact_schema::{Cells, i64_of};
use alloy::primitives::{B256, U256};
use chrono::{DateTime, Utc};

use super::{Pact, ReadError, Reader};

/// One stage of a pact as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// Its place in the pact, from 0.
    pub index: u8,
    /// Its part of the payment, in base units of the pact's currency.
    pub amount: U256,
    /// Each side's stake in it (a tenth of the amount on escrow v4's pacts of several).
    pub stake: U256,
    /// When its work is due.
    pub deadline: DateTime<Utc>,
    /// Where it stands.
    pub status: PactStatus,
    /// Hash of its delivered work, once submitted.
    pub proof_hash: Option<B256>,
    /// When its work was submitted, verified and disputed.
    pub submitted_at: Option<DateTime<Utc>>,
    /// See `submitted_at`.
    pub verified_at: Option<DateTime<Utc>>,
    /// See `submitted_at`.
    pub disputed_at: Option<DateTime<Utc>>,
    /// How many oracles have scored it.
    pub score_count: u16,
    /// Its weighted score, once its verification finished.
    pub final_score: Option<u8>,
    /// Basis points to the seller of the arbitrator's ruling on it, when ruled.
    pub seller_share: Option<u16>,
    /// How it ended (LIVE until then).
    pub ending: Ending,
    /// When it ended.
    pub ended_at: Option<DateTime<Utc>>,
    /// What its end credited the seller and the buyer, in base units; `None` while it lives.
    pub to_seller: Option<U256>,
    /// See `to_seller`.
    pub to_buyer: Option<U256>,
}

impl Reader {
    /// The stages of `pact`, in order: its `pact_stages` rows, or its one stage from the pact.
    pub async fn stages(&self, pact: &Pact) -> Result<Vec<Stage>, ReadError> {
        let rows = sqlx::query!(
            r#"SELECT stage, amount::text AS "amount!", deadline, status, proof_hash, submitted_at, verified_at,
                      disputed_at, score_count, final_score, seller_share, ending, closed_at,
                      to_seller::text, to_buyer::text
               FROM pact_stages WHERE chain_id = $1 AND pact_id = $2::text::numeric ORDER BY stage"#,
            i64_of(pact.chain_id),
            pact.id.to_string(),
        )
        .fetch_all(self.pool())
        .await?;
        if rows.is_empty() {
            return Ok(vec![self.only_stage(pact).await?]);
        }
        rows.into_iter()
            .map(|r| {
                let key = format!("chain {} pact {} stage {}", pact.chain_id, pact.id, r.stage);
                let row = Cells { table: "pact_stages", key };
                let amount = row.u256("amount", &r.amount)?;
                let amounts = |column, text: Option<String>| text.map(|t| row.u256(column, &t)).transpose();
                Ok(Stage {
                    index: row.int("stage", r.stage)?,
                    stake: amount / U256::from(10u8),
                    amount,
                    deadline: r.deadline,
                    status: row.code("status", r.status)?,
                    proof_hash: r.proof_hash.map(|h| row.hash("proof_hash", &h)).transpose()?,
                    submitted_at: r.submitted_at,
                    verified_at: r.verified_at,
                    disputed_at: r.disputed_at,
                    score_count: row.int("score_count", r.score_count)?,
                    final_score: r.final_score.map(|s| row.int("final_score", s)).transpose()?,
                    seller_share: r.seller_share.map(|s| row.int("seller_share", s)).transpose()?,
                    ending: row.code("ending", r.ending)?,
                    ended_at: r.closed_at,
                    to_seller: amounts("to_seller", r.to_seller)?,
                    to_buyer: amounts("to_buyer", r.to_buyer)?,
                })
            })
            .collect()
    }

    /// A one-stage pact's stage: the pact's own figures, and once it ended what its payouts
    /// credited each side.
    async fn only_stage(&self, pact: &Pact) -> Result<Stage, ReadError> {
        let (to_seller, to_buyer) = if pact.status.is_terminal() {
            let paid = sqlx::query!(
                r#"SELECT account, sum(amount)::text AS "amount!" FROM payouts
                   WHERE chain_id = $1 AND pact_id = $2::text::numeric GROUP BY account"#,
                i64_of(pact.chain_id),
                pact.id.to_string(),
            )
            .fetch_all(self.pool())
            .await?;
            let row = Cells { table: "payouts", key: format!("chain {} pact {}", pact.chain_id, pact.id) };
            let mut credited = (U256::ZERO, U256::ZERO);
            for p in paid {
                let amount = row.u256("amount", &p.amount)?;
                let to = Some(row.address("account", &p.account)?);
                if to == pact.seller {
                    credited.0 += amount;
                } else if to == pact.buyer {
                    credited.1 += amount;
                }
            }
            (Some(credited.0), Some(credited.1))
        } else {
            (None, None)
        };
        Ok(Stage {
            index: 0,
            amount: pact.payment,
            stake: pact.buyer_stake.max(pact.seller_stake),
            deadline: pact.deadline,
            status: pact.status,
            proof_hash: pact.proof_hash,
            submitted_at: pact.submitted_at,
            verified_at: pact.verified_at,
            disputed_at: pact.disputed_at,
            score_count: pact.score_count,
            final_score: pact.final_score,
            seller_share: pact.seller_share.filter(|_| pact.ending == Ending::Ruled),
            ending: pact.ending,
            ended_at: pact.closed_at,
            to_seller,
            to_buyer,
        })
    }
}
