//! Pacts in stages (docs/contracts.md §Stages): creating one, reading its stages, and each act on
//! one stage. The pact-wide steps are the one-stage tools' (`accept-pact`, `start-work`, the
//! settlement tools, `claim-timeout` of an unaccepted pact, `withdraw`).

use agentpact_contracts::{
    AgentPact, Ending, PactStatus,
    rules::{self, FULL_SHARE, MAX_STAGES},
};
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::{Address, B256, U256},
    providers::DynProvider,
};
use rmcp::schemars::{self, JsonSchema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{
    PactId, index_note,
    pact::{CreatePact, Created, check_staged, creator_deposit, read_failed},
    receipt,
    settlement::{Verdict, void_before_verdict, voided_note},
};
use crate::{
    bounds::{ADDRESS_CHARS, AMOUNT_CHARS, HASH_CHARS},
    chain::{Chain, Mined},
    input,
    money::{Spend, in_stages, show},
    outcome::{Answer, ToolError},
    views::{InCurrency, PactStep, decimal},
};
use agentpact_read::Currency;

/// The highest stage index a pact can have.
const LAST_STAGE: u8 = MAX_STAGES as u8 - 1;

/// One stage of `create-staged-pact`: its part of the payment and its deadline.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StageInput {
    /// Its part of the payment in the pact's currency, e.g. "1.5" (at least 10 base units).
    #[schemars(length(max = AMOUNT_CHARS))]
    amount: String,
    /// Unix second by which its work must be submitted: not before the previous stage's; the
    /// last stage's is the pact's `deadline`.
    deadline: u64,
}

/// Input of `create-staged-pact`: `create-pact`'s inputs (with `payment` optional: the sum of the
/// stages) and `stages` (1 to 8).
#[derive(Debug)]
pub struct CreateStagedPact {
    pact: CreatePact,
    stages: Vec<StageInput>,
}

impl JsonSchema for CreateStagedPact {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CreateStagedPact".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> schemars::Schema {
        let mut schema = CreatePact::json_schema(generator);
        let stages = serde_json::json!({
            "description": format!(
                "The stages, in order: 1 to {MAX_STAGES} (one is create-pact's pact), each {{amount, deadline}}; their amounts sum to the payment, their deadlines never decrease and the last is `deadline`. Each stage is submitted, verified, reviewed, disputed and paid on its own; each side stakes a tenth of each."
            ),
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_STAGES,
            "items": generator.subschema_for::<StageInput>(),
        });
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert("stages".into(), stages);
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            required.push("stages".into());
        }
        schema
    }
}

impl<'de> Deserialize<'de> for CreateStagedPact {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut fields = Map::deserialize(deserializer)?;
        let stages = fields.remove("stages").ok_or_else(|| D::Error::missing_field("stages"))?;
        Ok(Self {
            pact: CreatePact::deserialize(Value::Object(fields)).map_err(D::Error::custom)?,
            stages: Vec::deserialize(stages).map_err(D::Error::custom)?,
        })
    }
}

/// Input of the stage tools that name a stage and nothing more.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StageRef {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// The stage, from 0 (get-stages lists them).
    #[schemars(range(max = LAST_STAGE))]
    stage: u8,
}

/// Input of `submit-stage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitStage {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// The stage, from 0.
    #[schemars(range(max = LAST_STAGE))]
    stage: u8,
    /// Hash of the stage's deliverable: 0x and 64 hex digits (bytes32), not zero.
    #[schemars(length(max = HASH_CHARS))]
    proof_hash: String,
}

/// Input of `submit-stage-verification`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScoreStage {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// The stage, from 0.
    #[schemars(range(max = LAST_STAGE))]
    stage: u8,
    /// This oracle's score of the stage's work, 0-100.
    #[schemars(range(max = 100))]
    score: u8,
    /// Hash of the evidence behind the score: bytes32, not zero.
    #[schemars(length(max = HASH_CHARS))]
    proof: String,
}

/// Input of `dispute-stage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisputeStage {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// The stage, from 0 (funded, in progress or submitted).
    #[schemars(range(max = LAST_STAGE))]
    stage: u8,
    /// The pact's arbitrator, as agreed at creation.
    #[schemars(length(max = ADDRESS_CHARS))]
    arbitrator: String,
}

/// Input of `resolve-stage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveStage {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// The disputed stage, from 0.
    #[schemars(range(max = LAST_STAGE))]
    stage: u8,
    /// Basis points of the stage's pot (its amount and both its stakes) to the seller, 0-10000
    /// (7000 = 70/30); the buyer gets the rest.
    #[schemars(range(max = FULL_SHARE))]
    seller_share: u16,
}

/// What every tool acting on one stage answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageMoved {
    /// The pact, and its status now (its lowest live stage's, or how it ended).
    #[serde(flatten)]
    step: PactStep,
    /// The stage acted on.
    stage: u8,
    /// The stage's status now.
    stage_status: &'static str,
    /// The currency of the credits.
    #[serde(flatten)]
    money: InCurrency,
    /// What the stage's end credited the seller; null while it lives.
    seller_credited: Option<String>,
    /// What the stage's end credited the buyer; null while it lives.
    buyer_credited: Option<String>,
}

/// One stage as `get-stages` answers it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageView {
    /// Its place in the pact, from 0.
    index: u8,
    /// Its part of the payment.
    amount: String,
    /// Each side's stake in it.
    stake: String,
    /// Unix second its work is due.
    deadline: u64,
    /// Where it stands.
    status: &'static str,
    /// How it ended (LIVE until then).
    ending: &'static str,
    /// Unix second its work was submitted; null before.
    submitted_at: Option<u64>,
    /// Unix second its verification passed; null before.
    verified_at: Option<u64>,
    /// Unix second it was disputed; null before.
    disputed_at: Option<u64>,
    /// How many oracles scored it.
    score_count: u8,
    /// Its weighted score, once its verification finished (null before, and for a failed
    /// verification that scored 0: its status says DISPUTED).
    final_score: Option<u8>,
    /// Hash of its deliverable; null before.
    #[schemars(with = "Option<String>")]
    proof_hash: Option<B256>,
}

/// What `get-stages` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stages {
    /// The pact's id.
    pact_id: String,
    /// The pact's status: its lowest live stage's, or how it ended.
    status: &'static str,
    /// The currency of the amounts.
    #[serde(flatten)]
    money: InCurrency,
    /// Its stages in order (one for a pact made with create-pact).
    stages: Vec<StageView>,
}

pub async fn create(chain: &Chain, i: CreateStagedPact) -> Result<Answer<Created>, ToolError> {
    let currency = chain.currency("currency", i.pact.currency()).await?;
    let amounts = i
        .stages
        .iter()
        .enumerate()
        .map(|(k, s)| {
            input::units(&format!("stages[{k}].amount"), &s.amount, currency.decimals, &currency.symbol)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let sum = amounts
        .iter()
        .try_fold(U256::ZERO, |sum, a| sum.checked_add(*a))
        .ok_or_else(|| ToolError::Invalid("the stages' amounts sum past any payment".into()))?;
    let payment = match i.pact.payment(&currency)? {
        Some((field, given)) if given != sum => {
            return Err(ToolError::Invalid(format!(
                "{field} is {} but the stages' amounts sum to {}: give the same, or leave {field} out",
                show(given, &currency),
                show(sum, &currency)
            )));
        }
        _ => sum,
    };
    let terms = i.pact.terms(&currency, payment)?;
    let stages: Vec<AgentPact::StageTerms> = amounts
        .iter()
        .zip(&i.stages)
        .map(|(amount, s)| AgentPact::StageTerms { amount: *amount, deadline: s.deadline })
        .collect();
    check_staged(chain, &terms, &stages).await?;
    let stake = rules::staged_stake(&stages);
    let initiator = i.pact.initiator();
    let deposit = creator_deposit(initiator, payment, stake);
    let staged = in_stages(&amounts, &currency);
    let does = format!(
        "{} {} {staged}, staking a tenth of each",
        if initiator == agentpact_contracts::Initiator::Buyer {
            "request work paying"
        } else {
            "offer work for"
        },
        show(payment, &currency),
    );
    let counterparty = (!terms.counterparty.is_zero()).then_some(terms.counterparty);
    let plain = chain.pact.createStagedPact(terms, stages);
    let mined = chain.deposit_approving(Spend::paying(does, counterparty), &currency, deposit, plain).await?;
    let id = receipt::announced::<AgentPact::PactCreated>(&mined.receipt)?.pactId;
    let text = format!(
        "Pact #{id} created as {} {staged}. Deposited {}. Open to accept.",
        initiator.name(),
        show(deposit, &currency)
    );
    let data = Created::new(id, initiator, &mined, &currency, deposit, payment, stake);
    Answer::new(text + index_note(mined.indexed), data)
}

pub async fn get(chain: &Chain, i: PactId) -> Result<Answer<Stages>, ToolError> {
    let id = i.pact_id.0;
    let read = |e| read_failed(e, id);
    let pact = chain.pact.getPact(id).call().await.map_err(read)?;
    let stages = chain.pact.getStages(id).call().await.map_err(read)?;
    let currency = chain.currency_at(pact.currency).await?;
    let status = code(id, pact.status)?;
    let views = stages
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let ending =
                Ending::try_from(s.ending).map_err(|source| ToolError::UnknownCode { pact: id, source })?;
            let amount = U256::from(s.amount);
            let stake =
                if stages.len() == 1 { pact.buyerStake.max(pact.sellerStake) } else { rules::stake(amount) };
            Ok(StageView {
                index: u8::try_from(k).unwrap_or(u8::MAX),
                amount: decimal(amount, &currency),
                stake: decimal(stake, &currency),
                deadline: s.deadline,
                status: code(id, s.status)?.name(),
                ending: ending.name(),
                submitted_at: (s.submittedAt != 0).then_some(s.submittedAt),
                verified_at: (s.verifiedAt != 0).then_some(s.verifiedAt),
                disputed_at: (s.disputedAt != 0).then_some(s.disputedAt),
                score_count: s.scoreCount,
                final_score: (s.verifiedAt != 0 || s.finalScore != 0).then_some(s.finalScore),
                proof_hash: (!s.proofHash.is_zero()).then_some(s.proofHash),
            })
        })
        .collect::<Result<Vec<_>, ToolError>>()?;
    let lines: Vec<String> = views
        .iter()
        .map(|v| {
            format!("stage {}: {} {} due {}, {}", v.index, v.amount, currency.symbol, v.deadline, v.status)
        })
        .collect();
    Answer::new(
        format!("Pact #{id} is {} with {} stage(s): {}.", status.name(), views.len(), lines.join("; ")),
        Stages {
            pact_id: id.to_string(),
            status: status.name(),
            money: InCurrency::of(&currency),
            stages: views,
        },
    )
}

pub async fn submit(chain: &Chain, i: SubmitStage) -> Result<Answer<StageMoved>, ToolError> {
    let (id, k) = (i.pact_id.0, i.stage);
    let proof = input::hash("proofHash", &i.proof_hash)?;
    let mined = chain.write(chain.pact.submitStage(id, k, proof), U256::ZERO).await?;
    moved(chain, id, k, &mined, "submitted; its oracles score it now", None).await
}

pub async fn score(chain: &Chain, i: ScoreStage) -> Result<Answer<StageMoved>, ToolError> {
    let (id, k) = (i.pact_id.0, i.stage);
    let proof = input::hash("proof", &i.proof)?;
    let pact = chain.pact.getPact(id).call().await.map_err(|e| read_failed(e, id))?;
    // Not one of the pact's oracles: no void; the score itself is refused with its own reason.
    let voided = match pact.oracles.iter().position(|o| *o == chain.me) {
        Some(index) => void_before_verdict(chain, id, &pact, k, Verdict::Score(index)).await?,
        None => None,
    };
    let mined = chain.write(chain.pact.scoreStage(id, k, i.score, proof), U256::ZERO).await?;
    let done = format!("scored {}/100; finalize-stage once every oracle has", i.score);
    moved(chain, id, k, &mined, &done, voided).await
}

pub async fn finalize(chain: &Chain, i: StageRef) -> Result<Answer<StageMoved>, ToolError> {
    act(chain, i, |c, id, k| c.pact.finalizeStage(id, k), "finalized").await
}

pub async fn approve(chain: &Chain, i: StageRef) -> Result<Answer<StageMoved>, ToolError> {
    act(chain, i, |c, id, k| c.pact.approveStage(id, k), "approved").await
}

pub async fn reject(chain: &Chain, i: StageRef) -> Result<Answer<StageMoved>, ToolError> {
    act(chain, i, |c, id, k| c.pact.rejectStage(id, k), "rejected; its arbitrator decides within 7 days")
        .await
}

pub async fn auto_approve(chain: &Chain, i: StageRef) -> Result<Answer<StageMoved>, ToolError> {
    act(chain, i, |c, id, k| c.pact.autoApproveStage(id, k), "approved after its review period lapsed").await
}

pub async fn claim_timeout(chain: &Chain, i: StageRef) -> Result<Answer<StageMoved>, ToolError> {
    act(chain, i, |c, id, k| c.pact.claimStageTimeout(id, k), "timed out").await
}

pub async fn dispute(chain: &Chain, i: DisputeStage) -> Result<Answer<StageMoved>, ToolError> {
    let (id, k) = (i.pact_id.0, i.stage);
    let arbitrator: Address = input::address("arbitrator", &i.arbitrator)?;
    let mined = chain.write(chain.pact.disputeStage(id, k, arbitrator), U256::ZERO).await?;
    moved(chain, id, k, &mined, "disputed; its arbitrator decides within 7 days", None).await
}

pub async fn resolve(chain: &Chain, i: ResolveStage) -> Result<Answer<StageMoved>, ToolError> {
    let (id, k) = (i.pact_id.0, i.stage);
    let pact = chain.pact.getPact(id).call().await.map_err(|e| read_failed(e, id))?;
    let voided = void_before_verdict(chain, id, &pact, k, Verdict::Ruling).await?;
    let mined = chain.write(chain.pact.resolveStage(id, k, i.seller_share), U256::ZERO).await?;
    let done = format!("ruled: {} basis points of its pot to the seller", i.seller_share);
    moved(chain, id, k, &mined, &done, voided).await
}

/// Sends the call `make` builds for stage `k` of the pact, and answers what it did.
async fn act<'a, D: CallDecoder>(
    chain: &'a Chain,
    i: StageRef,
    make: impl FnOnce(&'a Chain, U256, u8) -> CallBuilder<&'a DynProvider, D>,
    done: &str,
) -> Result<Answer<StageMoved>, ToolError> {
    let (id, k) = (i.pact_id.0, i.stage);
    let mined = chain.write(make(chain, id, k), U256::ZERO).await?;
    moved(chain, id, k, &mined, done, None).await
}

/// The answer for stage `k` of pact `id` after `mined`: where the stage and the pact stand, and
/// when the stage ended, what it credited each side (from the transaction's payouts).
async fn moved(
    chain: &Chain,
    id: U256,
    k: u8,
    mined: &Mined,
    done: &str,
    voided: Option<alloy::primitives::TxHash>,
) -> Result<Answer<StageMoved>, ToolError> {
    let read = |e| read_failed(e, id);
    let pact = chain.pact.getPact(id).call().await.map_err(read)?;
    let stage = chain.pact.getStage(id, k).call().await.map_err(read)?;
    let currency: Currency = chain.currency_at(pact.currency).await?;
    let (status, stage_status) = (code(id, pact.status)?, code(id, stage.status)?);
    let credits = stage_status.is_terminal().then(|| {
        (receipt::credited(&mined.receipt, pact.seller), receipt::credited(&mined.receipt, pact.buyer))
    });
    let credited = credits.map_or_else(String::new, |(seller, buyer)| {
        format!(
            " Credited: {} to the seller, {} to the buyer (withdraw to collect).",
            show(seller, &currency),
            show(buyer, &currency)
        )
    });
    Answer::new(
        format!(
            "Stage {k} of pact #{id} {done}: it is {}.{credited} The pact is {}.{}{}",
            stage_status.name(),
            status.name(),
            voided_note(voided),
            index_note(mined.indexed)
        ),
        StageMoved {
            step: PactStep::new(id, status, mined.receipt.transaction_hash),
            stage: k,
            stage_status: stage_status.name(),
            money: InCurrency::of(&currency),
            seller_credited: credits.map(|(seller, _)| decimal(seller, &currency)),
            buyer_credited: credits.map(|(_, buyer)| decimal(buyer, &currency)),
        },
    )
}

/// The status `code` of pact `id` names.
fn code(id: U256, code: u8) -> Result<PactStatus, ToolError> {
    PactStatus::try_from(code).map_err(|source| ToolError::UnknownCode { pact: id, source })
}
