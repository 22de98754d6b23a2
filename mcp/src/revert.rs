//! A contract's refusal, read back: the custom error's name and a sentence that says what to do.

use agentpact_contracts::{
    AgentPact::AgentPactErrors, AgentRegistry::AgentRegistryErrors, OracleRegistry::OracleRegistryErrors,
    PactStatus,
};
use alloy::sol_types::SolInterface;

/// A decoded revert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revert {
    /// The custom error's name, as in the contract (e.g. `WrongStatus`).
    pub name: &'static str,
    /// What it means for the caller and what to do about it.
    pub sentence: String,
}

/// Decodes `data` as an error of AgentPact, OracleRegistry or AgentRegistry (their selectors are
/// distinct); `None` when it is none of them.
pub fn decode(data: &[u8]) -> Option<Revert> {
    if let Ok(e) = AgentPactErrors::abi_decode(data) {
        return Some(agent_pact(e));
    }
    if let Ok(e) = OracleRegistryErrors::abi_decode(data) {
        return Some(registry(e));
    }
    AgentRegistryErrors::abi_decode(data).ok().map(agents)
}

fn status(code: u8) -> String {
    PactStatus::try_from(code).map_or_else(|_| format!("status {code}"), |s| s.name().to_owned())
}

fn revert(name: &'static str, sentence: impl Into<String>) -> Revert {
    Revert { name, sentence: sentence.into() }
}

fn agent_pact(e: AgentPactErrors) -> Revert {
    use AgentPactErrors as E;
    match e {
        E::PactNotFound(x) => revert(
            "PactNotFound",
            format!("Pact #{} does not exist; check the id with get-pact-count.", x.pactId),
        ),
        E::WrongStatus(x) => revert(
            "WrongStatus",
            format!(
                "The pact is {}, but this step needs it {}; read it with get-pact first.",
                status(x.have),
                status(x.want)
            ),
        ),
        E::NoTimeoutFrom(x) => {
            revert("NoTimeoutFrom", format!("A pact in {} has no timeout to claim.", status(x.have)))
        }
        E::NotDisputable(x) => revert(
            "NotDisputable",
            format!(
                "A pact in {} cannot be disputed (only FUNDED, IN_PROGRESS or PENDING_VERIFY; in PENDING_APPROVAL the buyer uses reject-work).",
                status(x.have)
            ),
        ),
        E::NotBuyer(_) => {
            revert("NotBuyer", "Only the pact's buyer may do this; this wallet is not its buyer.")
        }
        E::NotSeller(_) => {
            revert("NotSeller", "Only the pact's seller may do this; this wallet is not its seller.")
        }
        E::NotParty(_) => revert("NotParty", "Only the pact's buyer or seller may do this."),
        E::NotCreator(_) => revert("NotCreator", "Only the pact's creator may do this."),
        E::NotArbitrator(_) => {
            revert("NotArbitrator", "Only the arbitrator named in the pact may resolve its dispute.")
        }
        E::NotPactOracle(_) => revert("NotPactOracle", "This wallet is not one of the pact's oracles."),
        E::WrongValue(x) if x.required.is_zero() => revert(
            "WrongValue",
            format!("A token pact takes no ETH with the call, but {} wei were sent.", x.sent),
        ),
        E::WrongValue(x) => {
            revert("WrongValue", format!("The deposit must be exactly {} wei, not {}.", x.required, x.sent))
        }
        E::CurrencyNotAllowed(x) => revert(
            "CurrencyNotAllowed",
            format!(
                "This escrow does not take {} as a currency; use ETH or a token on its allowlist (pact://config lists them).",
                x.currency
            ),
        ),
        E::NotAToken(x) => revert("NotAToken", format!("{} is not a usable ERC-20 token.", x.token)),
        E::TooManyTokens(x) => {
            revert("TooManyTokens", format!("At most {} tokens can be allowed, not {}.", x.maximum, x.count))
        }
        E::DuplicateCurrency(x) => {
            revert("DuplicateCurrency", format!("Token {} is on the allowlist twice.", x.token))
        }
        E::DepositMismatch(x) => revert(
            "DepositMismatch",
            format!(
                "Token {} delivered {} base units where {} were owed (a fee or rebase on transfer); the escrow refuses such tokens.",
                x.token, x.arrived, x.expected
            ),
        ),
        E::BalanceShort(x) => revert(
            "BalanceShort",
            format!(
                "The escrow holds {} base units of token {} but owes {}: the token lost value by itself, so no new deposit is taken in it.",
                x.held, x.token, x.owed
            ),
        ),
        E::TokenTransferFailed(x) => revert(
            "TokenTransferFailed",
            format!(
                "Token {} refused the transfer: check the balance and the allowance given to the escrow, then try again.",
                x.token
            ),
        ),
        E::NoPermitForNative(_) => {
            revert("NoPermitForNative", "An ETH pact is paid with the call itself; it takes no permit.")
        }
        E::PaymentTooSmall(x) => revert(
            "PaymentTooSmall",
            format!(
                "A payment of {} wei is too small to stake on; pay at least {} wei.",
                x.payment, x.minimum
            ),
        ),
        E::DeadlineInPast(x) => revert(
            "DeadlineInPast",
            format!(
                "The deadline {} is not after the chain's time {}; pick a later one.",
                x.deadline, x.now_
            ),
        ),
        E::PaymentTooLarge(x) => revert(
            "PaymentTooLarge",
            format!("A payment of {} is above the most a pact holds, {}; pay less.", x.payment, x.maximum),
        ),
        E::DeadlineOutOfRange(x) => revert(
            "DeadlineOutOfRange",
            format!(
                "The deadline {} must be between {} and {}: more than an hour ahead (the seller's work window) and at most 365 days.",
                x.deadline, x.earliest, x.latest
            ),
        ),
        E::AcceptByOutOfRange(x) => revert(
            "AcceptByOutOfRange",
            format!(
                "acceptBy {} must be between {} and {}: in the future and at least an hour before the deadline.",
                x.acceptBy, x.earliest, x.latest
            ),
        ),
        E::ReviewPeriodTooLong(x) => revert(
            "ReviewPeriodTooLong",
            format!("A review period of {} s is above the most, {} s (30 days).", x.reviewPeriod, x.maximum),
        ),
        E::ReviewPeriodTooShort(x) => revert(
            "ReviewPeriodTooShort",
            format!(
                "A review period of {} s is below the least, {} s (an hour, so the buyer has time to look at verified work); give at least that, or 0 for 3 days.",
                x.reviewPeriod, x.minimum
            ),
        ),
        E::ThresholdTooLow(x) => revert(
            "ThresholdTooLow",
            format!(
                "A threshold of {} would pass work every oracle scored 0; give at least {}.",
                x.threshold, x.minimum
            ),
        ),
        E::ShareTooLarge(x) => revert(
            "ShareTooLarge",
            format!("A share is in basis points, at most {} (all of it), not {}.", x.maximum, x.share),
        ),
        E::NotSettleable(x) => revert(
            "NotSettleable",
            format!(
                "A pact in {} has no window to settle or dispute in (only FUNDED, IN_PROGRESS, PENDING_VERIFY and DISPUTED do).",
                status(x.have)
            ),
        ),
        E::SettlementExpiryOutOfRange(x) => revert(
            "SettlementExpiryOutOfRange",
            format!(
                "An offer's expiry must be between {} and {} (Unix), an hour before the pact's current window closes; {} is not (0 means the latest). When the first is after the second, the window's last hour has begun: no offer can be made in it.",
                x.earliest, x.latest, x.expiresAt
            ),
        ),
        E::NoSettlement(x) => revert(
            "NoSettlement",
            format!("No offer to settle pact #{} stands; propose-settlement makes one.", x.pactId),
        ),
        E::NotProposer(_) => revert("NotProposer", "Only the party that made the offer may withdraw it."),
        E::OwnSettlement(_) => revert(
            "OwnSettlement",
            "This wallet made the offer: the other party accepts it (withdraw-settlement takes it back).",
        ),
        E::SettlementReplaced(x) => revert(
            "SettlementReplaced",
            format!(
                "The offer standing is round {} with {} basis points to the seller, not the one named; read it with get-pact and accept what it says.",
                x.round, x.sellerShare
            ),
        ),
        E::SettlementStale(x) => revert(
            "SettlementStale",
            format!(
                "The offer was made while the pact was {} and it is {} now: it lapsed. Propose a new one.",
                status(x.offeredIn),
                status(x.have)
            ),
        ),
        E::SettlementExpired(x) => revert(
            "SettlementExpired",
            format!("The offer expired at {} (Unix); propose a new one.", x.expiresAt),
        ),
        E::OfferVoided(x) => revert(
            "OfferVoided",
            format!(
                "A verdict was given after the offer was made (an oracle scored or the arbitrator voided \
                 offers: {} verdict(s) then, {} now), so it can no longer be accepted; read the pact again \
                 and propose anew if you still want to settle.",
                x.offeredAt, x.epoch
            ),
        ),
        E::NotVerdictGiver(x) => revert(
            "NotVerdictGiver",
            format!(
                "{} cannot void offers on a pact that is {}: only its arbitrator while it is DISPUTED, or \
                 one of its oracles that has not scored while it is PENDING_VERIFY.",
                x.who,
                status(x.have)
            ),
        ),
        E::AlreadyVoided(x) => revert(
            "AlreadyVoided",
            format!("{} already voided this pact's offers once in this phase; give the verdict now.", x.who),
        ),
        E::StageCountOutOfRange(x) => revert(
            "StageCountOutOfRange",
            format!(
                "The pact names {} stages; give {} to {} stages (a longer job is several pacts).",
                x.count, x.minimum, x.maximum
            ),
        ),
        E::StageAmountsSum(x) => revert(
            "StageAmountsSum",
            format!(
                "The stages' amounts sum to {} base units but the payment is {}; make them add up to the payment.",
                x.sum, x.payment
            ),
        ),
        E::StageDeadlineOutOfOrder(x) => revert(
            "StageDeadlineOutOfOrder",
            format!(
                "Stage {} is due at {}, before the stage ahead of it ({}); give the stages non-decreasing deadlines.",
                x.stage, x.deadline, x.previous
            ),
        ),
        E::LastStageDeadline(x) => revert(
            "LastStageDeadline",
            format!(
                "The last stage is due at {}, but the pact's deadline is {}; make the last stage due at the deadline.",
                x.deadline, x.pactDeadline
            ),
        ),
        E::NoSuchStage(x) => revert(
            "NoSuchStage",
            format!(
                "Pact #{} has {} stage(s), numbered from 0; stage {} does not exist.",
                x.pactId, x.stages, x.stage
            ),
        ),
        E::UseStage(x) => revert(
            "UseStage",
            format!(
                "Pact #{} is paid in {} stages: act on one stage with the stage calls (submitStage, approveStage, …), naming it.",
                x.pactId, x.stages
            ),
        ),
        E::SpecUriTooLong(x) => revert(
            "SpecUriTooLong",
            format!("The spec URI is {} bytes; shorten it to at most {}.", x.length, x.maximum),
        ),
        E::AcceptWindowClosed(x) => revert(
            "AcceptWindowClosed",
            format!(
                "Acceptance closed at {}; the creator can claim-timeout to get its deposit back.",
                x.acceptBy
            ),
        ),
        E::AcceptWindowOpen(x) => revert(
            "AcceptWindowOpen",
            format!("The pact can still be accepted until {}; claim the timeout after that.", x.acceptBy),
        ),
        E::NotCounterparty(x) => revert(
            "NotCounterparty",
            format!("This pact is reserved for {}; only that address may accept it.", x.counterparty),
        ),
        E::ReviewPeriodOver(x) => revert(
            "ReviewPeriodOver",
            format!(
                "The review period ended at {}; the work can no longer be rejected, only auto-approved.",
                x.endedAt
            ),
        ),
        E::VerificationClosed(x) => revert(
            "VerificationClosed",
            format!(
                "The verification window closed at {}: no more scores, disputes or settlement offers; the pact moves on once its verification is finalized (the oracles' finalize-verification; on chain anyone may send it).",
                x.closedAt
            ),
        ),
        E::DeadlinePassed(x) => revert(
            "DeadlinePassed",
            format!("The pact's deadline ({}) has passed; claim-timeout instead.", x.deadline),
        ),
        E::DeadlineNotReached(x) => revert(
            "DeadlineNotReached",
            format!("The deadline ({}) has not passed yet; try again after it.", x.deadline),
        ),
        E::OracleCountOutOfRange(x) => revert(
            "OracleCountOutOfRange",
            format!("Name between {} and {} oracles (got {}).", x.minimum, x.maximum, x.count),
        ),
        E::LengthMismatch(x) => revert(
            "LengthMismatch",
            format!("Give one weight per oracle ({} oracles, {} weights).", x.oracles, x.weights),
        ),
        E::WeightsSum(x) => {
            revert("WeightsSum", format!("Oracle weights must sum to 100 (they sum to {}).", x.sum))
        }
        E::ZeroWeight(x) => {
            revert("ZeroWeight", format!("Oracle {} has weight 0; drop it or give it a weight.", x.oracle))
        }
        E::DuplicateOracle(x) => revert("DuplicateOracle", format!("Oracle {} is named twice.", x.oracle)),
        E::OracleNotActive(x) => revert(
            "OracleNotActive",
            format!("{} is not an active registered oracle; pick active ones.", x.oracle),
        ),
        E::ThresholdTooHigh(x) => {
            revert("ThresholdTooHigh", format!("The threshold {} is above 100.", x.threshold))
        }
        E::InvalidArbitrator(x) => revert(
            "InvalidArbitrator",
            format!("{} cannot arbitrate this pact: name a third party.", x.arbitrator),
        ),
        E::ConflictOfInterest(x) => revert(
            "ConflictOfInterest",
            format!(
                "{} is already part of this pact (creator, arbitrator or oracle): it cannot also accept it or be named its counterparty.",
                x.who
            ),
        ),
        E::ArbitratorMismatch(x) => revert(
            "ArbitratorMismatch",
            format!(
                "The pact's arbitrator is {}, not {}; raise the dispute with the agreed one.",
                x.agreed, x.given
            ),
        ),
        E::ZeroHash(_) => revert("ZeroHash", "The hash must not be zero."),
        E::ScoreTooHigh(x) => revert("ScoreTooHigh", format!("A score is 0-100, not {}.", x.score)),
        E::AlreadyScored(x) => {
            revert("AlreadyScored", format!("Oracle {} has already scored this pact.", x.oracle))
        }
        E::VerificationOpen(x) => revert(
            "VerificationOpen",
            format!(
                "{} of {} oracles have scored; finalize when all have, or after {}.",
                x.scored, x.total, x.closesAt
            ),
        ),
        E::ReviewPeriodActive(x) => revert(
            "ReviewPeriodActive",
            format!("The buyer's review period runs until {}; auto-approve after that.", x.endsAt),
        ),
        E::DisputePeriodOver(x) => revert(
            "DisputePeriodOver",
            format!(
                "The arbitrator's window closed at {}; anyone can claim-timeout (each side refunded).",
                x.endedAt
            ),
        ),
        E::DisputePeriodActive(x) => revert(
            "DisputePeriodActive",
            format!("The arbitrator has until {} to rule; claim the timeout after that.", x.endsAt),
        ),
        E::NothingToWithdraw(_) => revert(
            "NothingToWithdraw",
            "This wallet has no credit to withdraw (get-my-address lists it per currency).",
        ),
        E::TransferFailed(_) => revert(
            "TransferFailed",
            "The ETH transfer failed; the credit is kept, try again from a wallet that accepts ETH.",
        ),
        E::Reentrancy(_) => revert("Reentrancy", "The contract refused a re-entrant call."),
    }
}

fn registry(e: OracleRegistryErrors) -> Revert {
    use OracleRegistryErrors as E;
    match e {
        E::AlreadyRegistered(_) => revert("AlreadyRegistered", "This wallet is already a registered oracle."),
        E::CooldownActive(x) => {
            revert("CooldownActive", format!("The stake unlocks at {}; withdraw after that.", x.unlockAt))
        }
        E::NoCapabilities(_) => revert("NoCapabilities", "Name at least one capability."),
        E::CapabilityCount(x) => revert(
            "CapabilityCount",
            format!("An oracle lists at most {} capabilities (got {}).", x.maximum, x.count),
        ),
        E::CapabilityTooLong(x) => revert(
            "CapabilityTooLong",
            format!("Capability #{} is {} bytes; shorten it to at most {}.", x.index, x.length, x.maximum),
        ),
        E::NotActive(_) => revert("NotActive", "This wallet is not an active oracle."),
        E::NotRegistered(_) => revert("NotRegistered", "This wallet is not a registered oracle."),
        E::Reentrancy(_) => revert("Reentrancy", "The registry refused a re-entrant call."),
        E::StakeTooLow(x) => {
            revert("StakeTooLow", format!("Stake at least {} wei (sent {}).", x.minimum, x.sent))
        }
        E::StillActive(_) => revert("StillActive", "Deregister first, then withdraw after the cooldown."),
        E::TransferFailed(_) => {
            revert("TransferFailed", "The ETH transfer failed; try again from a wallet that accepts ETH.")
        }
        E::ZeroValue(_) => revert("ZeroValue", "Send a non-zero amount."),
    }
}

fn agents(e: AgentRegistryErrors) -> Revert {
    use AgentRegistryErrors as E;
    match e {
        E::AgentAlreadyRegistered(_) => {
            revert("AgentAlreadyRegistered", "This wallet is already a registered agent; use update_profile.")
        }
        E::AgentNotRegistered(_) => {
            revert("AgentNotRegistered", "This wallet is not a registered agent; register_agent first.")
        }
        E::AlreadyActive(_) => revert("AlreadyActive", "The agent is already active in the market."),
        E::AlreadyInactive(_) => {
            revert("AlreadyInactive", "The agent has already stepped out of the market.")
        }
        E::EmptyName(_) => revert("EmptyName", "Give the agent a name."),
        E::TooLong(x) => revert(
            "TooLong",
            format!("The {} is {} bytes long; shorten it to at most {}.", x.field, x.length, x.maximum),
        ),
        E::NoAgentCapabilities(_) => revert("NoAgentCapabilities", "List at least one capability."),
        E::TooManyCapabilities(x) => revert(
            "TooManyCapabilities",
            format!("A profile lists at most {} capabilities (got {}).", x.maximum, x.count),
        ),
        E::EmptyCapabilityName(x) => revert(
            "EmptyCapabilityName",
            format!("Capability #{} has no name; name every capability.", x.index),
        ),
        E::DuplicateCapability(x) => {
            revert("DuplicateCapability", format!("The capability {:?} is listed twice.", x.name))
        }
        E::RatingOutOfRange(x) => {
            revert("RatingOutOfRange", format!("A rating is 1 to 5, not {}.", x.rating))
        }
        E::TooManyTags(x) => {
            revert("TooManyTags", format!("Give at most {} tags (got {}).", x.maximum, x.count))
        }
        E::PactNotFinished(x) => revert(
            "PactNotFinished",
            format!(
                "Pact #{} is {}; feedback is possible once it has ended: COMPLETED, REFUNDED or SPLIT.",
                x.pactId,
                status(x.status)
            ),
        ),
        E::NotPactParty(x) => revert(
            "NotPactParty",
            format!(
                "Only the buyer and the seller of pact #{} may rate it; this wallet is neither.",
                x.pactId
            ),
        ),
        E::NoCounterparty(x) => revert(
            "NoCounterparty",
            format!("Pact #{} ended before anyone accepted it: there is no one to rate.", x.pactId),
        ),
        E::AlreadyRated(x) => revert(
            "AlreadyRated",
            format!("This wallet has already rated pact #{}; feedback is given once.", x.pactId),
        ),
        E::CurrencyNotAccepted(x) => revert(
            "CurrencyNotAccepted",
            format!(
                "The escrow does not take {} as a currency, so no price can be in it; use ETH or a token on its allowlist.",
                x.currency
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_registry_errors_share_no_selector_with_the_other_contracts() {
        // AgentPact and OracleRegistry share TransferFailed() and Reentrancy(), which mean the same
        // in both; an AgentRegistry error decoded as theirs would be misread.
        let others = [AgentPactErrors::SELECTORS, OracleRegistryErrors::SELECTORS].concat();
        let shared: Vec<_> = AgentRegistryErrors::SELECTORS.iter().filter(|s| others.contains(s)).collect();
        assert!(shared.is_empty(), "{shared:?}");
    }
}
