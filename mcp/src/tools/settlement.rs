//! Settlements: either party of a funded, started, submitted or disputed pact offers to end it
//! with the payment divided; the other accepts that very offer (docs/contracts.md §Escrow v3).

use agentpact_contracts::{
    AgentPact, PactStatus,
    rules::{self, Division, FULL_SHARE},
};
use alloy::primitives::{Address, U256};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{PactId, index_note, receipt};
use crate::{
    chain::{Chain, Mined, Moves},
    money::{Spend, show},
    outcome::{Answer, ToolError},
    views::{InCurrency, PactStep, decimal},
};
use agentpact_read::Currency;

/// Input of `propose-settlement`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposeSettlement {
    /// The pact ID (FUNDED, IN_PROGRESS, PENDING_VERIFY or DISPUTED).
    pact_id: crate::input::Id,
    /// The seller's share of the payment in basis points, 0-10000 (7000 = 70%); the buyer gets the
    /// rest and each side its stake back.
    #[schemars(range(max = FULL_SHARE))]
    seller_share: u16,
    /// Last Unix second the other party may accept (default and latest: an hour before the pact's
    /// current window closes: the deadline, the end of verification or of the dispute). An oracle's
    /// score or a voidOffers given before the acceptance voids the offer.
    expires_at: Option<u64>,
}

/// Input of `accept-settlement`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcceptSettlement {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// The seller's share you agree to, in basis points (as the offer says: get-pact or the
    /// offer's notification); an offer that says anything else is refused, nothing sent.
    #[schemars(range(max = FULL_SHARE))]
    seller_share: u16,
    /// The offer's round, to accept only that offer (default: the one standing now).
    round: Option<crate::input::Id>,
}

/// What `propose-settlement` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Proposed {
    /// The pact (its status unchanged).
    #[serde(flatten)]
    step: PactStep,
    /// The offer's number: the other party's acceptance names it.
    round: u32,
    /// Basis points of the payment to the seller.
    seller_share: u16,
    /// Last Unix second it may be accepted.
    expires_at: u64,
    /// The currency of the amounts.
    #[serde(flatten)]
    money: InCurrency,
    /// What the seller would be credited: its share of the payment and its stake.
    seller_would_get: String,
    /// What the buyer would be credited: the rest of the payment and its stake.
    buyer_would_get: String,
}

/// What `withdraw-settlement` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Withdrawn {
    /// The pact (its status unchanged).
    #[serde(flatten)]
    step: PactStep,
    /// The offer taken back.
    round: u32,
}

/// What `accept-settlement` and `resolve-dispute` answer: how the money was divided.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Divided {
    /// The pact: COMPLETED (all to the seller), REFUNDED (all to the buyer) or SPLIT.
    #[serde(flatten)]
    pub step: PactStep,
    /// Basis points to the seller: of the pot (payment and both stakes) for a ruling, of the
    /// payment for a settlement.
    pub seller_share: u16,
    /// The currency of the credits.
    #[serde(flatten)]
    pub money: InCurrency,
    /// Credited to the seller.
    pub seller_credited: String,
    /// Credited to the buyer.
    pub buyer_credited: String,
}

/// What a mined ruling or settlement credited each side, read from its payouts, and the status it
/// left the pact in.
pub struct Credits {
    /// To the seller.
    pub to_seller: U256,
    /// To the buyer.
    pub to_buyer: U256,
    /// The status the division ended the pact in (by the amounts: a share that rounds to nothing
    /// is REFUNDED, not SPLIT).
    pub status: PactStatus,
}

impl Credits {
    /// The payouts of `mined` to `pact`'s seller and buyer, which divided it at `share` by `by`;
    /// the status is the one its `PactEnded` gives (a settlement of a pact of several stages ends
    /// it by all its stages), else the division's.
    pub fn of(mined: &Mined, pact: &AgentPact::Pact, share: u16, by: Division) -> Self {
        let ended = receipt::events::<AgentPact::PactEnded>(&mined.receipt)
            .first()
            .and_then(|e| PactStatus::try_from(e.status).ok());
        Self {
            to_seller: receipt::credited(&mined.receipt, pact.seller),
            to_buyer: receipt::credited(&mined.receipt, pact.buyer),
            status: ended.unwrap_or(rules::end_of_division(pact.payment, share, by).0),
        }
    }
}

/// What a settlement at `share` would credit the seller and the buyer of a pact whose `held`
/// amounts (its live stages', or a one-stage pact's payment) it divides, stage by stage as the
/// contract does (each stake back to its owner).
fn settlement_of(held: &[U256], share: u16) -> (U256, U256) {
    held.iter().fold((U256::ZERO, U256::ZERO), |(seller, buyer), amount| {
        let (s, b) = rules::division(*amount, share, Division::Settlement);
        (seller + s, buyer + b)
    })
}

/// The amounts a settlement of pact `id` would divide: each live stage's on a pact of several
/// stages (released ones are not touched), the payment of a one-stage pact; and, on a pact of
/// several, the words that name them (" held in stages 2, 3 of 3 (0.6 ETH)"; empty for one).
async fn held(
    chain: &Chain,
    id: U256,
    pact: &AgentPact::Pact,
    currency: &Currency,
) -> Result<(Vec<U256>, String), ToolError> {
    let stages = chain.pact.getStages(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    if stages.len() < 2 {
        return Ok((vec![pact.payment], String::new()));
    }
    let live: Vec<(usize, U256)> = stages
        .iter()
        .enumerate()
        .filter(|(_, s)| PactStatus::try_from(s.status).is_ok_and(|st| !st.is_terminal()))
        .map(|(k, s)| (k + 1, U256::from(s.amount)))
        .collect();
    let named: Vec<String> = live.iter().map(|(k, _)| k.to_string()).collect();
    let sum = live.iter().map(|(_, a)| *a).sum();
    let over = format!(
        " held in stage{} {} of {} ({})",
        if live.len() == 1 { "" } else { "s" },
        named.join(", "),
        stages.len(),
        show(sum, currency)
    );
    Ok((live.into_iter().map(|(_, a)| a).collect(), over))
}

impl Divided {
    /// The answer for pact `id`, ended by `mined` at `share` with `credits` in `currency`.
    pub fn new(id: U256, share: u16, mined: &Mined, credits: &Credits, currency: &Currency) -> Self {
        Self {
            step: PactStep::new(id, credits.status, mined.receipt.transaction_hash),
            seller_share: share,
            money: InCurrency::of(currency),
            seller_credited: decimal(credits.to_seller, currency),
            buyer_credited: decimal(credits.to_buyer, currency),
        }
    }
}

/// `share` basis points as a percentage ("70%", "33.5%", "33.33%").
pub fn percent(share: u16) -> String {
    let (whole, rest) = (share / 100, share % 100);
    match rest {
        0 => format!("{whole}%"),
        r if r % 10 == 0 => format!("{whole}.{}%", r / 10),
        r => format!("{whole}.{r:02}%"),
    }
}

/// The pact as this wallet sees it: the chain's record, which side the wallet is, the currency,
/// and the amounts a settlement would divide with the words naming their stages ([`held`]).
struct Party {
    pact: AgentPact::Pact,
    currency: Currency,
    is_buyer: bool,
    held: Vec<U256>,
    over: String,
}

impl Party {
    async fn of(chain: &Chain, id: U256) -> Result<Self, ToolError> {
        let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
        if chain.me != pact.buyer && chain.me != pact.seller {
            return Err(ToolError::Invalid(format!(
                "this wallet ({}) is neither the buyer nor the seller of pact #{id}: only they can settle it",
                chain.me
            )));
        }
        let currency = chain.currency_at(pact.currency).await?;
        let (held, over) = held(chain, id, &pact, &currency).await?;
        Ok(Self { is_buyer: chain.me == pact.buyer, pact, currency, held, over })
    }

    /// The other party.
    fn other(&self) -> Address {
        if self.is_buyer { self.pact.seller } else { self.pact.buyer }
    }

    /// A buyer that agrees to `share` lets that much of its payment go to the seller: a spend,
    /// authorized as any (the wallet policy, and the human's yes above the threshold).
    async fn authorize(&self, chain: &Chain, share: u16, what: &str) -> Result<(), ToolError> {
        if !self.is_buyer {
            return Ok(());
        }
        let (to_seller, _) = settlement_of(&self.held, share);
        let stakes: U256 = self.held.iter().map(|a| rules::stake(*a)).sum();
        let released = to_seller - stakes;
        let spend = Spend::paying(
            format!(
                "{what}: release {} of your payment{} to the seller",
                show(released, &self.currency),
                self.over
            ),
            Some(self.other()),
        );
        chain.authorize(spend, &self.currency, released).await
    }
}

pub async fn propose(chain: &Chain, i: ProposeSettlement) -> Result<Answer<Proposed>, ToolError> {
    let id = i.pact_id.0;
    let party = Party::of(chain, id).await?;
    party.authorize(chain, i.seller_share, &format!("offer to settle pact #{id}")).await?;
    let mined = chain
        .write(chain.pact.proposeSettlement(id, i.seller_share, i.expires_at.unwrap_or(0)), U256::ZERO)
        .await?;
    let offer = receipt::announced::<AgentPact::SettlementProposed>(&mined.receipt)?;
    let (to_seller, to_buyer) = settlement_of(&party.held, i.seller_share);
    let status = agentpact_contracts::PactStatus::try_from(offer.status)
        .map_err(|source| ToolError::UnknownCode { pact: id, source })?;
    let c = &party.currency;
    Answer::new(
        format!(
            "Offer {} to settle pact #{id} made: {} of the payment{} to the seller ({} in all), {} to the buyer. {} can accept it with accept-settlement until {} (Unix), while the pact is {}.{}",
            offer.round,
            percent(i.seller_share),
            party.over,
            show(to_seller, c),
            show(to_buyer, c),
            party.other(),
            offer.expiresAt,
            status.name(),
            index_note(mined.indexed)
        ),
        Proposed {
            step: PactStep::new(id, status, mined.receipt.transaction_hash),
            round: offer.round,
            seller_share: i.seller_share,
            expires_at: offer.expiresAt,
            money: InCurrency::of(c),
            seller_would_get: decimal(to_seller, c),
            buyer_would_get: decimal(to_buyer, c),
        },
    )
}

pub async fn withdraw(chain: &Chain, i: PactId) -> Result<Answer<Withdrawn>, ToolError> {
    let id = i.pact_id.0;
    let mined = chain.write(chain.pact.withdrawSettlement(id), U256::ZERO).await?;
    let round =
        receipt::events::<AgentPact::SettlementWithdrawn>(&mined.receipt).first().map_or(0, |e| e.round);
    let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    let status = agentpact_contracts::PactStatus::try_from(pact.status)
        .map_err(|source| ToolError::UnknownCode { pact: id, source })?;
    Answer::new(
        format!("Offer {round} to settle pact #{id} withdrawn.{}", index_note(mined.indexed)),
        Withdrawn { step: PactStep::new(id, status, mined.receipt.transaction_hash), round },
    )
}

pub async fn accept(chain: &Chain, i: AcceptSettlement) -> Result<Answer<Divided>, ToolError> {
    let id = i.pact_id.0;
    let party = Party::of(chain, id).await?;
    let offer = chain.pact.getSettlement(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    if offer.by.is_zero() {
        return Err(ToolError::Invalid(format!(
            "no offer to settle pact #{id} stands; propose-settlement makes one"
        )));
    }
    if offer.by == chain.me {
        return Err(ToolError::Invalid(format!(
            "offer {} on pact #{id} is this wallet's own: the other party accepts it (withdraw-settlement takes it back)",
            offer.round
        )));
    }
    let round = i.round.map_or(U256::from(offer.round), |r| r.0);
    if round != U256::from(offer.round) || i.seller_share != offer.sellerShare {
        return Err(ToolError::Invalid(format!(
            "the offer standing on pact #{id} is round {} with {} to the seller, not round {round} with {}: read it (get-pact) and accept what it says, or propose your own",
            offer.round,
            percent(offer.sellerShare),
            percent(i.seller_share)
        )));
    }
    party.authorize(chain, i.seller_share, &format!("accept the offer to settle pact #{id}")).await?;
    let mined = chain.write(chain.pact.acceptSettlement(id, offer.round, i.seller_share), U256::ZERO).await?;
    let credits = Credits::of(&mined, &party.pact, i.seller_share, Division::Settlement);
    let divided = Divided::new(id, i.seller_share, &mined, &credits, &party.currency);
    Answer::new(
        format!(
            "Pact #{id} settled at {} of the payment to the seller: it is {}. Credited: {} to the seller, {} to the buyer (withdraw to collect).{}",
            percent(i.seller_share),
            divided.step.status,
            show(credits.to_seller, &party.currency),
            show(credits.to_buyer, &party.currency),
            index_note(mined.indexed)
        ),
        divided,
    )
}

/// The verdict a tool is about to send on a pact.
#[derive(Debug, Clone, Copy)]
pub(super) enum Verdict {
    /// The arbitrator's ruling on a disputed pact.
    Ruling,
    /// The score of the pact's oracle at this index of its oracles.
    Score(usize),
}

impl Verdict {
    /// The status the verdict is given in, and this wallet's bit in `Ledger.voided` (bit i: oracle
    /// i, bit 15: the arbitrator; AgentPactLifecycle.voidOffers).
    const fn status_and_bit(self) -> (PactStatus, u16) {
        match self {
            Self::Ruling => (PactStatus::Disputed, 1 << 15),
            Self::Score(index) => (PactStatus::PendingVerify, 1 << index),
        }
    }
}

/// Before this wallet gives `verdict` on pact `id` (read as `pact`), voids the offer standing on it
/// in a transaction of its own, mined first: the void reveals nothing of the verdict, so no
/// acceptance mined behind the verdict can take an offer priced before it (docs/contracts.md
/// §Verdicts void offers). Sends nothing when the verdict would be refused anyway (its own refusal
/// then says why) or no offer can be accepted now (none made, taken back, lapsed, expired, or voided
/// by an earlier verdict). Refuses ([`ToolError::OfferStands`]) when an offer stands that this
/// wallet can no longer void: its one void is spent, or an offer was made right after it. Returns
/// the void's transaction when it sent one.
pub(super) async fn void_before_verdict(
    chain: &Chain,
    id: U256,
    pact: &AgentPact::Pact,
    stage: u8,
    verdict: Verdict,
) -> Result<Option<alloy::primitives::TxHash>, ToolError> {
    let read = |e| super::pact::read_failed(e, id);
    let (status, mine) = verdict.status_and_bit();
    let on = chain.pact.getStage(id, stage).call().await.map_err(read)?;
    let eligible = on.status == status.code()
        && match verdict {
            Verdict::Ruling => pact.arbitrator == chain.me,
            Verdict::Score(_) => {
                !chain.pact.getStageVerification(id, stage, chain.me).call().await.map_err(read)?.submitted
            }
        };
    if !eligible {
        return Ok(None);
    }
    let mut sent = None;
    // Twice at most: before the void, and after it (an offer made in the blocks between).
    loop {
        let standing = standing_offer(chain, id, pact, stage).await?;
        let Some((expires_at, voided)) = standing else { return Ok(sent) };
        if voided & mine != 0 {
            return Err(ToolError::OfferStands {
                pact_id: id,
                expires_at,
                offers_end: offers_end(&on, status),
            });
        }
        let mined = chain.write_as(chain.pact.voidOffers(id), U256::ZERO, Moves::Nothing).await?;
        sent = Some(mined.receipt.transaction_hash);
    }
}

/// The offer on pact `id` that its other party could accept now, as `(expiresAt, Stage.voided)` of
/// stage `stage` (the one the verdict is given on): made and not taken back, in the pact's status,
/// not expired, no verdict since.
async fn standing_offer(
    chain: &Chain,
    id: U256,
    pact: &AgentPact::Pact,
    stage: u8,
) -> Result<Option<(u64, u16)>, ToolError> {
    let read = |e| super::pact::read_failed(e, id);
    let offer = chain.pact.getSettlement(id).call().await.map_err(read)?;
    let ledger = chain.pact.getLedger(id).call().await.map_err(read)?;
    let voided = chain.pact.getStage(id, stage).call().await.map_err(read)?.voided;
    let now = chain.now().await?;
    let stands = !offer.by.is_zero()
        && offer.status == pact.status
        && offer.expiresAt >= now
        && ledger.offerEpoch == ledger.epoch;
    Ok(stands.then_some((offer.expiresAt, voided)))
}

/// The first second of the last hour of the window `stage` is in while `status`, from which no
/// offer to settle can stand.
fn offers_end(stage: &AgentPact::Stage, status: PactStatus) -> u64 {
    let closes = match status {
        PactStatus::PendingVerify => stage.submittedAt.saturating_add(rules::VERIFICATION_PERIOD),
        _ => stage.disputedAt.saturating_add(rules::DISPUTE_PERIOD),
    };
    closes.saturating_sub(rules::VERDICT_MARGIN)
}

/// The sentence an answer adds when [`void_before_verdict`] sent a transaction.
pub(super) fn voided_note(voided: Option<alloy::primitives::TxHash>) -> String {
    voided.map_or_else(String::new, |tx| {
        format!(" The offer to settle that stood was voided first (transaction {tx}), so nobody could accept it behind this verdict.")
    })
}
