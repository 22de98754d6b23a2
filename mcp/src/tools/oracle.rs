//! The oracle's steps: register, score, finalize.

use agentpact_contracts::{AgentPact, PactStatus};
use alloy::primitives::U256;
use alloy::primitives::{Address, B256};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::{
    PactId, index_note, receipt,
    settlement::{Verdict, void_before_verdict, voided_note},
};
use agentpact_read::Currency;

use crate::{
    bounds::{AMOUNT_CHARS, HASH_CHARS, MAX_ORACLE_CAPABILITIES, MAX_ORACLE_CAPABILITY},
    chain::Chain,
    input::{self, eth},
    money::Spend,
    outcome::{Answer, ToolError},
    views::PactStep,
};

/// Input of `register-oracle`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegisterOracle {
    /// What this oracle verifies, e.g. ["code-review", "testing"] (1 to 16 names, each 1-64 bytes).
    #[schemars(
        length(min = 1, max = MAX_ORACLE_CAPABILITIES),
        inner(length(min = 1, max = MAX_ORACLE_CAPABILITY))
    )]
    capabilities: Vec<String>,
    /// Stake in ETH, at least the registry's minimum (e.g. "0.01").
    #[schemars(length(max = AMOUNT_CHARS))]
    stake_eth: String,
}

/// Input of `submit-verification`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitVerification {
    /// The pact ID.
    pact_id: crate::input::Id,
    /// Score 0-100.
    #[schemars(range(max = 100))]
    score: u8,
    /// Proof hash (bytes32 hex) of the evidence behind the score.
    #[schemars(length(max = HASH_CHARS))]
    proof: String,
}

/// What `register-oracle` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OracleRegistered {
    /// This wallet, now an oracle.
    #[schemars(with = "String")]
    oracle: Address,
    /// Its stake in ETH.
    stake_eth: String,
    /// What it verifies.
    capabilities: Vec<String>,
    /// The transaction.
    #[schemars(with = "String")]
    tx_hash: B256,
}

/// What `submit-verification` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scored {
    /// The pact.
    pact_id: String,
    /// This oracle's score, 0-100.
    score: u8,
    /// How many of the pact's oracles have scored.
    scored: u8,
    /// How many oracles the pact has.
    oracles: usize,
    /// The transaction.
    #[schemars(with = "String")]
    tx_hash: B256,
}

/// What `finalize-verification` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finalized {
    /// The pact (PENDING_APPROVAL when it passed, DISPUTED when not).
    #[serde(flatten)]
    step: PactStep,
    /// The weighted score, 0-100.
    score: u8,
    /// Whether it reached the pact's threshold.
    passed: bool,
}

pub async fn register(chain: &Chain, i: RegisterOracle) -> Result<Answer<OracleRegistered>, ToolError> {
    let stake = input::eth_amount("stakeEth", &i.stake_eth)?;
    let capabilities = i
        .capabilities
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let field = format!("capabilities[{n}]");
            let name = input::filled(&field, c)?;
            input::fits(&field, name, MAX_ORACLE_CAPABILITY)?;
            Ok(name.to_owned())
        })
        .collect::<Result<Vec<String>, input::InvalidInput>>()?;
    let spend = Spend {
        does: "stake as a verification oracle in the OracleRegistry".into(),
        counterparty: "none (the stake stays this oracle's)".into(),
        // The wallet policy sees the registry as the one paid: a list may name it.
        to: Some(*chain.registry.address()),
    };
    chain.authorize(spend, &Currency::eth(), stake).await?;
    let mined = chain.write(chain.registry.register(capabilities.clone()), stake).await?;
    Answer::new(
        format!(
            "Registered as an oracle with {} ETH staked for: {}.{}",
            eth(stake),
            capabilities.join(", "),
            index_note(mined.indexed)
        ),
        OracleRegistered {
            oracle: chain.me,
            stake_eth: eth(stake),
            capabilities,
            tx_hash: mined.receipt.transaction_hash,
        },
    )
}

pub async fn submit(chain: &Chain, i: SubmitVerification) -> Result<Answer<Scored>, ToolError> {
    let id = i.pact_id.0;
    let proof = input::hash("proof", &i.proof)?;
    let before = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    // Not one of the pact's oracles: no void; the score itself is refused with its own reason.
    let voided = match before.oracles.iter().position(|o| *o == chain.me) {
        Some(index) => void_before_verdict(chain, id, &before, 0, Verdict::Score(index)).await?,
        None => None,
    };
    let mined = chain.write(chain.pact.submitVerification(id, i.score, proof), U256::ZERO).await?;
    let pact = chain.pact.getPact(id).call().await.map_err(|e| super::pact::read_failed(e, id))?;
    Answer::new(
        format!(
            "Scored pact #{id}: {}/100. {} of {} oracles have scored; finalize-verification when all have.{}{}",
            i.score,
            pact.scoreCount,
            pact.oracles.len(),
            voided_note(voided),
            index_note(mined.indexed)
        ),
        Scored {
            pact_id: id.to_string(),
            score: i.score,
            scored: pact.scoreCount,
            oracles: pact.oracles.len(),
            tx_hash: mined.receipt.transaction_hash,
        },
    )
}

pub async fn finalize(chain: &Chain, i: PactId) -> Result<Answer<Finalized>, ToolError> {
    let id = i.pact_id.0;
    let mined = chain.write(chain.pact.finalizeVerification(id), U256::ZERO).await?;
    let done = receipt::events::<AgentPact::VerificationFinalized>(&mined.receipt);
    let (score, passed) = done.first().map_or((0, false), |e| (e.score, e.passed));
    let (status, next) = if passed {
        (
            PactStatus::PendingApproval,
            "the buyer may now approve or reject; auto-approve after the review period",
        )
    } else {
        (PactStatus::Disputed, "the arbitrator decides")
    };
    Answer::new(
        format!(
            "Verification of pact #{id} finalized: weighted score {score}/100, {}. Pact is {}: {next}.{}",
            if passed { "passed" } else { "below the threshold" },
            status.name(),
            index_note(mined.indexed)
        ),
        Finalized { step: PactStep::new(id, status, mined.receipt.transaction_hash), score, passed },
    )
}
