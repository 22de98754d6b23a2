//! The GraphQL object types, each a thin view of a read-layer type.

use agentpact_contracts::ReputationRole;
use agentpact_negotiation::Store;
use alloy::primitives::U256;
use async_graphql::{ComplexObject, Context, Json, Object, Result, SimpleObject};
use chrono::{DateTime, Utc};

use super::{
    closed_sets::{
        Ending, EventKind, Initiator, OracleStatus, PactOutcome, PactStatus, RaterSource, ScoreView,
    },
    errors::{store_to_graphql, to_graphql},
    market::{Feedback, FeedbackSummary},
    negotiation_access,
    scalars::{Address, BigInt, Bytes32},
    settlement::{Division, SettlementOffer},
};
use crate::read::{self, Reader};

/// A pact: an escrowed piece of work between a buyer and a seller.
pub struct Pact(pub read::Pact);

/// A pact: an escrowed piece of work between a buyer and a seller.
#[Object]
impl Pact {
    /// The chain it lives on.
    async fn chain_id(&self) -> u64 {
        self.0.chain_id
    }
    /// Its id in the contract.
    async fn id(&self) -> BigInt {
        BigInt(self.0.id)
    }
    /// Which side created it.
    async fn initiator(&self) -> Initiator {
        self.0.initiator.into()
    }
    /// Where it stands.
    async fn status(&self) -> PactStatus {
        self.0.status.into()
    }
    /// What the status means, in a sentence.
    async fn status_description(&self) -> &'static str {
        self.0.status.description()
    }
    /// The account that created it.
    async fn creator(&self) -> Address {
        Address(self.0.creator)
    }
    /// The buyer, once known.
    async fn buyer(&self) -> Option<Address> {
        self.0.buyer.map(Address)
    }
    /// The seller, once known.
    async fn seller(&self) -> Option<Address> {
        self.0.seller.map(Address)
    }
    /// Who settles disputes.
    async fn arbitrator(&self) -> Address {
        Address(self.0.arbitrator)
    }
    /// The only address that may accept this pact (null: anyone but its creator, arbitrator and
    /// oracles may).
    async fn counterparty(&self) -> Option<Address> {
        self.0.counterparty.map(Address)
    }
    /// Hash of the work specification.
    async fn spec_hash(&self) -> Bytes32 {
        Bytes32(self.0.spec_hash)
    }
    /// Where the specification lives, as shown: the display form of the bytes the chain emitted,
    /// with invalid UTF-8, NUL, control, bidirectional and invisible characters replaced visibly
    /// ("␀", "�"). Equal to the exact text unless `specUriBytes` differs from it.
    async fn spec_uri(&self) -> String {
        self.0.spec_uri.display().into_owned()
    }
    /// The spec URI exactly as the chain emitted it, as 0x-hex bytes: what a client checks against
    /// the spec hash or fetches, never the display form.
    async fn spec_uri_bytes(&self) -> String {
        self.0.spec_uri.hex()
    }
    /// When the work is due.
    async fn deadline(&self) -> DateTime<Utc> {
        self.0.deadline
    }
    /// The last moment the pact can be accepted (at least an hour before the deadline); after
    /// it, an unaccepted pact can only be refunded to its creator.
    async fn accept_by(&self) -> DateTime<Utc> {
        self.0.accept_by
    }
    /// Seconds the buyer has to review verified work before anyone may auto-approve it.
    async fn review_period(&self) -> u64 {
        self.0.review_period
    }
    /// The weighted oracle score (0-100) that passes verification.
    async fn threshold(&self) -> u8 {
        self.0.threshold
    }
    /// What payment and stakes are in: ETH or an allowed token, with its decimals and symbol.
    async fn currency(&self) -> Currency {
        Currency(self.0.currency.clone())
    }
    /// The price, in base units of `currency` (wei for ETH).
    async fn payment(&self) -> BigInt {
        BigInt(self.0.payment)
    }
    /// The price as an exact decimal in `currency`, without trailing zeros ("5.5"; "5" for five USDC).
    async fn payment_formatted(&self) -> String {
        self.0.currency.format(self.0.payment)
    }
    /// The buyer's stake, in base units of `currency`.
    async fn buyer_stake(&self) -> BigInt {
        BigInt(self.0.buyer_stake)
    }
    /// The buyer's stake as an exact decimal in `currency`.
    async fn buyer_stake_formatted(&self) -> String {
        self.0.currency.format(self.0.buyer_stake)
    }
    /// The seller's stake, in base units of `currency`.
    async fn seller_stake(&self) -> BigInt {
        BigInt(self.0.seller_stake)
    }
    /// The seller's stake as an exact decimal in `currency`.
    async fn seller_stake_formatted(&self) -> String {
        self.0.currency.format(self.0.seller_stake)
    }
    /// Hash of the delivered work, once submitted.
    async fn proof_hash(&self) -> Option<Bytes32> {
        self.0.proof_hash.map(Bytes32)
    }
    /// How many oracles have scored.
    async fn score_count(&self) -> u16 {
        self.0.score_count
    }
    /// The weighted score (0-100), once verification finished.
    async fn final_score(&self) -> Option<u8> {
        self.0.final_score
    }
    /// Its oracles in order, with their weights (summing to 100).
    async fn oracles(&self) -> Vec<PactOracle> {
        self.0.oracles.iter().map(|o| PactOracle { address: Address(o.address), weight: o.weight }).collect()
    }
    /// When it was created.
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// When the counterparty accepted it.
    async fn accepted_at(&self) -> Option<DateTime<Utc>> {
        self.0.accepted_at
    }
    /// When work was submitted.
    async fn submitted_at(&self) -> Option<DateTime<Utc>> {
        self.0.submitted_at
    }
    /// When verification finished.
    async fn verified_at(&self) -> Option<DateTime<Utc>> {
        self.0.verified_at
    }
    /// When a dispute opened.
    async fn disputed_at(&self) -> Option<DateTime<Utc>> {
        self.0.disputed_at
    }
    /// When it reached COMPLETED, REFUNDED or SPLIT.
    async fn closed_at(&self) -> Option<DateTime<Utc>> {
        self.0.closed_at
    }
    /// How a finished pact ended.
    async fn outcome(&self) -> Option<PactOutcome> {
        self.0.outcome.map(Into::into)
    }
    /// How it ended, as the contract's `PactEnded` says: `LIVE` until then; a cancel by
    /// agreement, a failure, a lost dispute and a silent arbitrator each have their own value.
    async fn ending(&self) -> Ending {
        self.0.ending.into()
    }
    /// How a ruling or an accepted settlement divided the money, when one ended the pact (on a
    /// pact of stages, the money of the stages it divided).
    #[graphql(complexity = "super::cost::MILESTONES + child_complexity")]
    async fn division(&self, ctx: &Context<'_>) -> Result<Option<Division>> {
        if self.0.seller_share.is_none() {
            return Ok(None);
        }
        let stages = ctx.data::<Reader>()?.stages(&self.0).await.map_err(to_graphql)?;
        Ok(Division::of(&self.0, &stages))
    }
    /// Every offer to settle it, in the order they were made, with where each stands at the
    /// chain's latest time the indexer saw.
    #[graphql(complexity = "super::cost::SETTLEMENTS + child_complexity")]
    async fn settlements(&self, ctx: &Context<'_>) -> Result<Vec<SettlementOffer>> {
        let reader = ctx.data::<Reader>()?;
        let offers = reader.settlements(self.0.chain_id, self.0.id).await.map_err(to_graphql)?;
        if offers.is_empty() {
            return Ok(Vec::new());
        }
        // Expiry is a chain clock: the head's time as the indexer last saw it.
        let status = reader.indexer_status(self.0.chain_id).await.map_err(to_graphql)?;
        let now = status.and_then(|s| s.head_block_time.or(s.indexed_block_time)).unwrap_or_else(Utc::now);
        Ok(SettlementOffer::all(offers, self.0.status, now))
    }
    /// The block that created it.
    async fn created_block(&self) -> u64 {
        self.0.created_block
    }
    /// The block of its last change.
    async fn updated_block(&self) -> u64 {
        self.0.updated_block
    }
    /// The oracles' scores, in submission order.
    async fn verifications(&self, ctx: &Context<'_>) -> Result<Vec<Verification>> {
        let reader = ctx.data::<Reader>()?;
        let list = reader
            .verifications(self.0.chain_id, Some(self.0.id), None, read::MAX_PAGE_SIZE)
            .await
            .map_err(to_graphql)?;
        Ok(list.into_iter().map(Verification).collect())
    }
    /// Its stages (milestones), in order: one for a pact created with `createPact` (the pact
    /// itself), 2 to 8 for one created with `createStagedPact`, each with its own part of the
    /// payment, deadline, clocks, scores, ruling and end (docs/contracts.md §Stages). The pact's
    /// own `status` and clocks are its current stage's: its lowest live one, or its last.
    #[graphql(complexity = "super::cost::MILESTONES + child_complexity")]
    async fn milestones(&self, ctx: &Context<'_>) -> Result<Vec<Stage>> {
        let reader = ctx.data::<Reader>()?;
        let stages = reader.stages(&self.0).await.map_err(to_graphql)?;
        Ok(stages.into_iter().map(|s| Stage(s, self.0.currency.clone())).collect())
    }
    /// Every event of the pact, oldest first.
    #[graphql(complexity = "super::cost::TIMELINE + child_complexity")]
    async fn timeline(&self, ctx: &Context<'_>) -> Result<Vec<TimelineEvent>> {
        let reader = ctx.data::<Reader>()?;
        let events = reader.timeline(self.0.chain_id, self.0.id).await.map_err(to_graphql)?;
        Ok(events.into_iter().map(TimelineEvent).collect())
    }
    /// The negotiation that led to it, when it was signed from one (`sign_contract`): to its
    /// parties (a signed request) and the operator; FORBIDDEN to anyone else.
    async fn negotiation(&self, ctx: &Context<'_>) -> Result<Option<super::negotiation::Conversation>> {
        let access = negotiation_access::access(ctx, self.0.chain_id)?;
        let found = ctx
            .data::<Store>()?
            .conversation_of_pact(self.0.chain_id, self.0.id)
            .await
            .map_err(store_to_graphql)?;
        match found {
            Some(c) if !access.may_read(&c) => {
                Err(negotiation_access::forbidden("the signer is not a party of it"))
            }
            found => Ok(found.map(super::negotiation::Conversation)),
        }
    }
    /// How many signed messages the negotiation that led to it holds; null when it was not signed
    /// from one. Public: the messages themselves are its parties' (`negotiation`).
    async fn negotiation_message_count(&self, ctx: &Context<'_>) -> Result<Option<u64>> {
        let reader = ctx.data::<Reader>()?;
        reader.negotiation_message_count(self.0.chain_id, self.0.id).await.map_err(to_graphql)
    }
    /// The ratings its buyer and seller gave each other after it ended (none, one or two).
    async fn feedback(&self, ctx: &Context<'_>) -> Result<Vec<Feedback>> {
        let reader = ctx.data::<Reader>()?;
        let list = reader.pact_feedback(self.0.chain_id, self.0.id).await.map_err(to_graphql)?;
        Ok(list.into_iter().map(Into::into).collect())
    }
}

/// An oracle named by a pact.
#[derive(SimpleObject)]
pub struct PactOracle {
    /// The oracle.
    address: Address,
    /// Its weight, in percent.
    weight: u8,
}

/// One stage (milestone) of a pact, with the pact's currency.
pub struct Stage(pub read::Stage, pub read::Currency);

/// One stage (milestone) of a pact: its part of the payment, due by its own deadline, delivered,
/// verified, reviewed, disputed and ended on its own.
#[Object]
impl Stage {
    /// Its place in the pact, from 0 (the stage argument of the stage calls and tools).
    async fn index(&self) -> u8 {
        self.0.index
    }
    /// Its part of the payment, in base units of the pact's currency.
    async fn amount(&self) -> BigInt {
        BigInt(self.0.amount)
    }
    /// The same as an exact decimal in the pact's currency ("0.3").
    async fn amount_formatted(&self) -> String {
        self.1.format(self.0.amount)
    }
    /// Each side's stake in it, in base units (a tenth of the amount on a pact of several stages).
    async fn stake(&self) -> BigInt {
        BigInt(self.0.stake)
    }
    /// When its work is due.
    async fn deadline(&self) -> DateTime<Utc> {
        self.0.deadline
    }
    /// Where it stands.
    async fn status(&self) -> PactStatus {
        self.0.status.into()
    }
    /// Hash of its delivered work, once submitted.
    async fn proof_hash(&self) -> Option<Bytes32> {
        self.0.proof_hash.map(Bytes32)
    }
    /// When its work was submitted.
    async fn submitted_at(&self) -> Option<DateTime<Utc>> {
        self.0.submitted_at
    }
    /// When its verification passed (its review window opened).
    async fn verified_at(&self) -> Option<DateTime<Utc>> {
        self.0.verified_at
    }
    /// When it was disputed (its dispute window opened).
    async fn disputed_at(&self) -> Option<DateTime<Utc>> {
        self.0.disputed_at
    }
    /// How many oracles have scored it.
    async fn score_count(&self) -> u16 {
        self.0.score_count
    }
    /// Its weighted score (0-100), once its verification finished.
    async fn final_score(&self) -> Option<u8> {
        self.0.final_score
    }
    /// Basis points of its pot to the seller by the arbitrator's ruling, when ruled.
    async fn seller_share(&self) -> Option<u16> {
        self.0.seller_share
    }
    /// How it ended (LIVE until then).
    async fn ending(&self) -> Ending {
        self.0.ending.into()
    }
    /// When it ended.
    async fn ended_at(&self) -> Option<DateTime<Utc>> {
        self.0.ended_at
    }
    /// What its end credited the seller (payment and stake back), in base units; null while it
    /// lives.
    async fn to_seller(&self) -> Option<BigInt> {
        self.0.to_seller.map(BigInt)
    }
    /// The same as an exact decimal in the pact's currency.
    async fn to_seller_formatted(&self) -> Option<String> {
        self.0.to_seller.map(|a| self.1.format(a))
    }
    /// What its end credited the buyer (refund and stake back), in base units; null while it lives.
    async fn to_buyer(&self) -> Option<BigInt> {
        self.0.to_buyer.map(BigInt)
    }
    /// The same as an exact decimal in the pact's currency.
    async fn to_buyer_formatted(&self) -> Option<String> {
        self.0.to_buyer.map(|a| self.1.format(a))
    }
}

/// One oracle's score on one pact.
pub struct Verification(pub read::Verification);

/// One oracle's score on one pact.
#[Object]
impl Verification {
    /// The pact.
    async fn pact_id(&self) -> BigInt {
        BigInt(self.0.pact_id)
    }
    /// The stage it scored (0 for a one-stage pact).
    async fn stage(&self) -> u8 {
        self.0.stage
    }
    /// The oracle.
    async fn oracle(&self) -> Address {
        Address(self.0.oracle)
    }
    /// Its score, 0-100.
    async fn score(&self) -> u8 {
        self.0.score
    }
    /// Hash of its evidence.
    async fn proof(&self) -> Bytes32 {
        Bytes32(self.0.proof)
    }
    /// When it was submitted.
    async fn submitted_at(&self) -> DateTime<Utc> {
        self.0.submitted_at
    }
    /// The block that carried it.
    async fn block_number(&self) -> u64 {
        self.0.block_number
    }
}

/// An oracle of the registry.
pub struct Oracle(pub read::Oracle);

/// An oracle of the registry.
#[Object]
impl Oracle {
    /// Its address.
    async fn address(&self) -> Address {
        Address(self.0.address)
    }
    /// Its stake, in wei.
    async fn stake(&self) -> BigInt {
        BigInt(self.0.stake)
    }
    /// What it can verify.
    async fn capabilities(&self) -> &[String] {
        &self.0.capabilities
    }
    /// Active or deregistered.
    async fn status(&self) -> OracleStatus {
        self.0.status.into()
    }
    /// When it registered.
    async fn registered_at(&self) -> DateTime<Utc> {
        self.0.registered_at
    }
    /// When a deregistered oracle's stake can be withdrawn.
    async fn unlock_at(&self) -> Option<DateTime<Utc>> {
        self.0.unlock_at
    }
}

/// A 0-5 score and the evidence it rests on (formula: docs/api.md §Reputation).
#[derive(SimpleObject)]
pub struct Score {
    /// 0 to 5: `5·(Σ t·C + 3) / (Σ t·W + 5)` over the counterparties, each one's evidence W and
    /// endorsement C times its trust t as a rater; 3.00 without trusted evidence.
    value: f64,
    /// The rated pacts (or verifications) behind it.
    rated: u64,
    /// The counterparties with evidence of it, trusted or not.
    raters: u64,
    /// The trusted weight, as `trustedWeight` (before #53: the untrusted weight).
    #[graphql(deprecation = "the trusted weight now: read trustedWeight")]
    weight: f64,
    /// What the evidence weighs, each counterparty's (at most 5: 2 as seller, 2 as buyer, 1 as
    /// oracle; three paid jobs and their ratings make a full vote in a role) times its trust: a
    /// farm's untrusted wallets add nothing.
    trusted_weight: f64,
    /// The counterparties trusted as raters at all (trust > 0).
    trusted_raters: u64,
    /// Whose trust weighed it: GLOBAL (the seeds'), or VIEWER (the `viewer` asked for).
    view: ScoreView,
}

impl From<read::Score> for Score {
    fn from(s: read::Score) -> Self {
        Self {
            value: s.value,
            rated: s.rated,
            raters: s.raters,
            weight: s.weight,
            trusted_weight: s.weight,
            trusted_raters: s.trusted_raters,
            view: s.view.into(),
        }
    }
}

/// What a score rests on: its trusted counterparties and the untrusted rest.
#[derive(SimpleObject)]
pub struct ReputationBasis {
    /// The trusted counterparties, largest contribution first.
    raters: Vec<BasisRater>,
    /// The counterparties with trust 0 in this view, summed up.
    untrusted: UntrustedRaters,
}

/// One counterparty behind a score.
#[derive(SimpleObject)]
pub struct BasisRater {
    /// The counterparty.
    counterparty: Address,
    /// Its pacts with the address, every role.
    pacts: u64,
    /// Of those, paid.
    paid_pacts: u64,
    /// Its evidence W, 0-5: 2 as seller, 2 as buyer, 1 as oracle.
    evidence: f64,
    /// Its endorsement C, 0 to W.
    endorsement: f64,
    /// Its trust as a rater of the address in this view, 0-1.
    trust: f64,
    /// Why it is trusted.
    source: RaterSource,
    /// What it adds to the trusted weight: trust × evidence.
    contribution: f64,
}

/// The counterparties that weigh nothing in a view (trust 0), summed up.
#[derive(SimpleObject)]
pub struct UntrustedRaters {
    /// How many.
    raters: u64,
    /// The evidence they hold, which counts for nothing.
    evidence: f64,
}

impl From<read::Basis> for ReputationBasis {
    fn from(b: read::Basis) -> Self {
        Self {
            raters: b
                .raters
                .into_iter()
                .map(|r| BasisRater {
                    counterparty: Address(r.counterparty),
                    pacts: r.pacts,
                    paid_pacts: r.paid_pacts,
                    evidence: r.evidence,
                    endorsement: r.endorsement,
                    trust: r.trust,
                    source: r.source.into(),
                    contribution: r.contribution,
                })
                .collect(),
            untrusted: UntrustedRaters { raters: b.untrusted_raters, evidence: b.untrusted_evidence },
        }
    }
}

/// What one role's history says.
pub struct RoleReputation {
    role: read::RoleReputation,
    /// Whose, on which chain, in which role: what `volumes` reads.
    of: (Address, u64, ReputationRole),
}

/// What one role's history says.
#[Object]
impl RoleReputation {
    /// Pacts in this role (for an oracle: pacts it scored).
    async fn pacts(&self) -> u64 {
        self.role.pacts
    }
    /// Of those, completed.
    async fn completed(&self) -> u64 {
        self.role.completed
    }
    /// Refunded.
    async fn refunded(&self) -> u64 {
        self.role.refunded
    }
    /// Disputed at some point.
    async fn disputed(&self) -> u64 {
        self.role.disputed
    }
    /// Ended by a timeout.
    async fn timed_out(&self) -> u64 {
        self.role.timed_out
    }
    /// Payment of the completed ETH ones, in wei (every currency: `volumes`).
    async fn volume(&self) -> BigInt {
        BigInt(self.role.volume)
    }
    /// Payment of the completed ones in each currency they were paid in, never summed across
    /// currencies.
    async fn volumes(&self, ctx: &Context<'_>) -> Result<Vec<Amount>> {
        let (address, chain, role) = self.of;
        let volumes = ctx.data::<Reader>()?.volumes(chain, address.0, role).await.map_err(to_graphql)?;
        Ok(volumes.into_iter().map(|(currency, amount)| Amount(currency, amount)).collect())
    }
    /// Buyer or seller: the mean final oracle score of their pacts; oracle: the mean score given.
    async fn mean_score(&self) -> Option<f64> {
        self.role.mean_score
    }
    /// Oracle only: 100 minus the mean distance between its score and the final score.
    async fn agreement(&self) -> Option<f64> {
        self.role.agreement
    }
    /// Disputed pacts per pact, 0 to 1.
    async fn dispute_rate(&self) -> f64 {
        self.role.dispute_rate()
    }
    /// Timed-out pacts per pact, 0 to 1.
    async fn timeout_rate(&self) -> f64 {
        self.role.timeout_rate()
    }
    /// Feedback received in this role (buyer and seller only).
    async fn feedback(&self) -> FeedbackSummary {
        let r = &self.role;
        FeedbackSummary { count: r.feedback_count, raters: r.feedback_raters, mean_rating: r.feedback_mean }
    }
    /// This role's 0-5 score.
    async fn score(&self) -> Score {
        self.role.score.into()
    }
}

/// An address's reputation as seller, buyer and oracle, on a chain.
pub struct Reputation(pub read::Reputation, pub u64);

impl Reputation {
    /// Its part as `name`.
    fn role(&self, role: &read::RoleReputation, name: ReputationRole) -> RoleReputation {
        RoleReputation { role: role.clone(), of: (Address(self.0.address), self.1, name) }
    }
}

/// An address's reputation as seller, buyer and oracle.
#[Object]
impl Reputation {
    /// The address.
    async fn address(&self) -> Address {
        Address(self.0.address)
    }
    /// As seller.
    async fn as_seller(&self) -> RoleReputation {
        self.role(&self.0.as_seller, ReputationRole::Seller)
    }
    /// As buyer.
    async fn as_buyer(&self) -> RoleReputation {
        self.role(&self.0.as_buyer, ReputationRole::Buyer)
    }
    /// As oracle.
    async fn as_oracle(&self) -> RoleReputation {
        self.role(&self.0.as_oracle, ReputationRole::Oracle)
    }
    /// Feedback received as buyer and as seller together.
    async fn feedback(&self) -> FeedbackSummary {
        let (count, mean_rating) = self.0.feedback();
        let raters = self.0.as_seller.feedback_raters + self.0.as_buyer.feedback_raters;
        FeedbackSummary { count, raters, mean_rating }
    }
    /// The latest ratings received, newest first: at most `first` (≤ 100).
    #[graphql(complexity = "first.min(read::MAX_PAGE_SIZE) as usize * child_complexity + 1")]
    async fn recent_feedback(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 10)] first: u32,
    ) -> Result<Vec<Feedback>> {
        let reader = ctx.data::<Reader>()?;
        let list = reader.feedback_received(self.1, self.0.address, first).await.map_err(to_graphql)?;
        Ok(list.into_iter().map(Into::into).collect())
    }
    /// The 0-5 score over all roles together, feedback included, in the view asked for (role
    /// scores are always global).
    async fn score(&self) -> Score {
        self.0.overall.into()
    }
    /// The same score in the global view (`score` itself without a `viewer`): the market's,
    /// whoever asks.
    async fn global_score(&self) -> Score {
        self.0.global.into()
    }
    /// What `score` rests on, in the same view: the trusted counterparties by contribution (at
    /// most `first` ≤ 100) and the untrusted rest summed up.
    #[graphql(complexity = "super::cost::BASIS + first.min(read::MAX_PAGE_SIZE) as usize * child_complexity")]
    async fn basis(&self, ctx: &Context<'_>, #[graphql(default = 20)] first: u32) -> Result<ReputationBasis> {
        let reader = ctx.data::<Reader>()?;
        let basis = reader.basis(self.1, self.0.address, self.0.viewer, first).await.map_err(to_graphql)?;
        Ok(basis.into())
    }
}

/// One event of a pact's history.
pub struct TimelineEvent(pub read::TimelineEvent);

/// One event of a pact's history.
#[Object]
impl TimelineEvent {
    /// The event, named as in the contract (e.g. `WorkSubmitted`).
    async fn kind(&self) -> EventKind {
        self.0.kind.into()
    }
    /// The block that carried it.
    async fn block_number(&self) -> u64 {
        self.0.block_number
    }
    /// Its index among the block's logs.
    async fn log_index(&self) -> u32 {
        self.0.log_index
    }
    /// The block's hash.
    async fn block_hash(&self) -> Bytes32 {
        Bytes32(self.0.block_hash)
    }
    /// The transaction that emitted it.
    async fn tx_hash(&self) -> Bytes32 {
        Bytes32(self.0.tx_hash)
    }
    /// The block's timestamp.
    async fn timestamp(&self) -> DateTime<Utc> {
        self.0.time
    }
    /// The contract that emitted it.
    async fn contract(&self) -> Address {
        Address(self.0.contract)
    }
    /// All of the event's fields (camelCase; amounts as decimal strings).
    async fn data(&self) -> Json<&serde_json::Value> {
        Json(&self.0.data)
    }
}

/// Pacts of one status.
#[derive(SimpleObject)]
pub struct StatusCount {
    /// The status.
    status: PactStatus,
    /// How many pacts are in it.
    count: u64,
}

/// The market at a glance.
pub struct Stats(pub read::Stats);

/// The market at a glance.
#[Object]
impl Stats {
    /// All pacts.
    async fn pacts(&self) -> u64 {
        self.0.pacts
    }
    /// Pacts per status, every status listed.
    async fn by_status(&self) -> Vec<StatusCount> {
        self.0.by_status.iter().map(|s| StatusCount { status: s.status.into(), count: s.count }).collect()
    }
    /// Payment of completed ETH pacts, in wei (other currencies: `volumes`).
    async fn completed_volume(&self) -> BigInt {
        BigInt(self.eth().map_or_else(Default::default, |v| v.completed))
    }
    /// Payment held by ETH pacts not yet finished, in wei (other currencies: `volumes`).
    async fn open_volume(&self) -> BigInt {
        BigInt(self.eth().map_or_else(Default::default, |v| v.open))
    }
    /// Volumes per currency of the deployment, each listed (zero included), ETH first: amounts in
    /// different currencies are never added together.
    async fn volumes(&self) -> Vec<CurrencyVolume> {
        self.0.volumes.iter().cloned().map(CurrencyVolume).collect()
    }
    /// Oracles registered and active.
    async fn active_oracles(&self) -> u64 {
        self.0.active_oracles
    }
}

impl Stats {
    fn eth(&self) -> Option<&read::CurrencyVolume> {
        self.0.volumes.iter().find(|v| v.currency.address.is_zero())
    }
}

/// A currency pacts are paid in.
pub struct Currency(pub read::Currency);

/// A currency pacts are paid in: native ETH or a token the escrow allows.
#[Object]
impl Currency {
    /// The token's address; 0x000…000 for native ETH.
    async fn address(&self) -> Address {
        Address(self.0.address)
    }
    /// Its symbol ("ETH", "USDC").
    async fn symbol(&self) -> &str {
        &self.0.symbol
    }
    /// How many decimal places its base units have (18 for ETH, 6 for USDC).
    async fn decimals(&self) -> u8 {
        self.0.decimals
    }
}

/// An amount in one currency.
pub struct Amount(read::Currency, U256);

/// An amount in one currency.
#[Object]
impl Amount {
    /// The currency.
    async fn currency(&self) -> Currency {
        Currency(self.0.clone())
    }
    /// The amount, in its base units.
    async fn amount(&self) -> BigInt {
        BigInt(self.1)
    }
    /// The same as an exact decimal, without trailing zeros ("5.5").
    async fn formatted(&self) -> String {
        self.0.format(self.1)
    }
}

/// The payment volumes of the pacts paid in one currency.
pub struct CurrencyVolume(pub read::CurrencyVolume);

/// The payment volumes of the pacts paid in one currency.
#[Object]
impl CurrencyVolume {
    /// The currency.
    async fn currency(&self) -> Currency {
        Currency(self.0.currency.clone())
    }
    /// Payment of completed pacts, in its base units.
    async fn completed(&self) -> BigInt {
        BigInt(self.0.completed)
    }
    /// The same as an exact decimal.
    async fn completed_formatted(&self) -> String {
        self.0.currency.format(self.0.completed)
    }
    /// Payment held by pacts not yet finished, in its base units.
    async fn open(&self) -> BigInt {
        BigInt(self.0.open)
    }
    /// The same as an exact decimal.
    async fn open_formatted(&self) -> String {
        self.0.currency.format(self.0.open)
    }
}

/// Where the indexer stands on a chain.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct IndexerStatus {
    /// The chain.
    chain_id: u64,
    /// The last block fully indexed.
    indexed_block: u64,
    /// Its timestamp.
    indexed_block_time: Option<DateTime<Utc>>,
    /// The chain's head when the indexer last looked.
    head_block: Option<u64>,
    /// When the indexer last looked at the head; old means the indexer is not running.
    head_seen_at: Option<DateTime<Utc>>,
    #[graphql(skip)]
    status: read::IndexerStatus,
}

impl From<read::IndexerStatus> for IndexerStatus {
    fn from(s: read::IndexerStatus) -> Self {
        Self {
            chain_id: s.chain_id,
            indexed_block: s.indexed_block,
            indexed_block_time: s.indexed_block_time,
            head_block: s.head_block,
            head_seen_at: s.head_seen_at,
            status: s,
        }
    }
}

#[ComplexObject]
impl IndexerStatus {
    /// Blocks between the index and the head.
    async fn lag_blocks(&self) -> u64 {
        self.status.lag_blocks()
    }
    /// Chain seconds between the indexed block and the head.
    async fn lag_seconds(&self) -> u64 {
        self.status.lag_seconds()
    }
}
