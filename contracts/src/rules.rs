//! The escrow's rules on terms, as the contract enforces them (docs/contracts.md §Bounds), for
//! clients that refuse out-of-bound terms with a sentence before anything is simulated or sent;
//! and its clocks: the window each status waits in ([`window`]) and when it closes ([`closing`]),
//! which push's alarms bind into their query rather than restate.
//! `tests/tests/pact_bounds.rs` reads every constant back from a deployed contract, so the two
//! cannot drift apart.

use alloy::primitives::{Address, U256};

use crate::{AgentPact, Ending, PactStatus, WindowKind, closed_set};

/// Each side's stake is the payment divided by this (`STAKE_DIVISOR`).
pub const STAKE_DIVISOR: u64 = 10;
/// Largest payment in base units (`MAX_PAYMENT`).
pub const MAX_PAYMENT: U256 = U256::from_limbs([u64::MAX, u64::MAX, 0, 0]);
/// Seconds an accepted seller is sure to have between the close of acceptance and the deadline
/// (`MIN_WORK_WINDOW`).
pub const MIN_WORK_WINDOW: u64 = 60 * 60;
/// Latest deadline, in seconds after creation (`MAX_DURATION`).
pub const MAX_DURATION: u64 = 365 * 24 * 60 * 60;
/// Longest review period in seconds (`MAX_REVIEW_PERIOD`).
pub const MAX_REVIEW_PERIOD: u64 = 30 * 24 * 60 * 60;
/// Shortest review period in seconds other than 0 (`MIN_REVIEW_PERIOD`): the time a buyer is sure
/// to have to look at verified work before anyone may approve it for them.
pub const MIN_REVIEW_PERIOD: u64 = 60 * 60;
/// Lowest pass mark (`MIN_THRESHOLD`): a threshold of 0 would pass work every oracle scored 0.
pub const MIN_THRESHOLD: u8 = 1;
/// Highest pass mark: scores run from 0 to 100.
pub const MAX_THRESHOLD: u8 = 100;
/// A share of the payment, in basis points, that gives one side all of it (`FULL_SHARE`).
pub const FULL_SHARE: u16 = 10_000;
/// Review period used when the terms give zero (`DEFAULT_REVIEW_PERIOD`).
pub const DEFAULT_REVIEW_PERIOD: u64 = 3 * 24 * 60 * 60;
/// Seconds oracles have to score submitted work, from its submission (`VERIFICATION_PERIOD`).
pub const VERIFICATION_PERIOD: u64 = 3 * 24 * 60 * 60;
/// Seconds the arbitrator has to rule, from the dispute (`DISPUTE_PERIOD`).
pub const DISPUTE_PERIOD: u64 = 7 * 24 * 60 * 60;
/// Seconds before a window closes from which no offer to settle stands: an offer's latest expiry
/// (`VERDICT_MARGIN`).
pub const VERDICT_MARGIN: u64 = 60 * 60;
/// Longest spec URI in bytes (`MAX_SPEC_URI`).
pub const MAX_SPEC_URI: usize = 256;
/// Most stages a pact may have (`MAX_STAGES`).
pub const MAX_STAGES: usize = 8;
/// Most oracles a pact may name (`MAX_ORACLES`).
pub const MAX_ORACLES: usize = 10;
// `voidOffers` keeps one bit of a 16-bit mask per oracle and bit 15 for the arbitrator
// (AgentPactLifecycle.sol): more than 15 oracles would share the arbitrator's bit.
const _: () = assert!(MAX_ORACLES < 15, "voidOffers' bitmask holds at most 15 oracles");

/// Each side's stake on a pact paying `payment`.
pub fn stake(payment: U256) -> U256 {
    payment / U256::from(STAKE_DIVISOR)
}

/// The window a pact in `status` waits in (each closes at one second for everyone), or `None`
/// for a status no clock ends (COMPLETED, REFUNDED, SPLIT).
pub const fn window(status: PactStatus) -> Option<WindowKind> {
    match status {
        PactStatus::Negotiating => Some(WindowKind::Acceptance),
        PactStatus::Funded | PactStatus::InProgress => Some(WindowKind::Deadline),
        PactStatus::PendingVerify => Some(WindowKind::Verification),
        PactStatus::PendingApproval => Some(WindowKind::Review),
        PactStatus::Disputed => Some(WindowKind::Dispute),
        PactStatus::Completed | PactStatus::Refunded | PactStatus::Split => None,
    }
}

closed_set! {
    /// The time on a pact a window's clock counts from: a field of the contract's `Pact`, named as
    /// there.
    pub enum Since {
        /// `acceptBy`: the last second the counterparty may accept.
        AcceptBy => "acceptBy",
        /// `deadline`: the last second the seller may submit.
        Deadline => "deadline",
        /// `submittedAt`: when the seller submitted the work.
        Submitted => "submittedAt",
        /// `verifiedAt`: when the oracles' score passed.
        Verified => "verifiedAt",
        /// `disputedAt`: when the dispute opened.
        Disputed => "disputedAt",
    }
}

/// How long after its [`Since`] time a window runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// A fixed number of seconds (0: the time itself is the window's last second).
    Seconds(u64),
    /// The pact's own review period (`reviewPeriod`, which the contract already set to
    /// [`DEFAULT_REVIEW_PERIOD`] when the terms gave 0).
    ReviewPeriod,
}

/// When a window closes: its last second is the pact's `since` time plus `after`; from the next
/// one the exit anyone may take (`claimTimeout`, `autoApprove`, finalizing the scores) is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closing {
    /// The time it counts from.
    pub since: Since,
    /// How long after it.
    pub after: After,
}

/// When `window` closes, as the contract's clocks compute it.
pub const fn closing(window: WindowKind) -> Closing {
    let (since, after) = match window {
        WindowKind::Acceptance => (Since::AcceptBy, After::Seconds(0)),
        WindowKind::Deadline => (Since::Deadline, After::Seconds(0)),
        WindowKind::Verification => (Since::Submitted, After::Seconds(VERIFICATION_PERIOD)),
        WindowKind::Review => (Since::Verified, After::ReviewPeriod),
        WindowKind::Dispute => (Since::Disputed, After::Seconds(DISPUTE_PERIOD)),
    };
    Closing { since, after }
}

crate::closed_set! {
    /// Who divided a pact's money when it ended at a share.
    pub enum Division {
        /// The arbitrator's ruling: the share divides the pot (payment and both stakes), so each side
        /// forfeits its stake in proportion to how far the ruling went against it.
        Ruling => "ruling",
        /// A settlement both parties accepted: the share divides the payment, each stake goes back to
        /// its owner.
        Settlement => "settlement",
    }
}

/// What the seller and the buyer are credited, in base units, when a pact paying `payment` ends
/// at `seller_share` basis points (of at most [`FULL_SHARE`]) to the seller, as the contract
/// computes it (rounding toward the buyer).
pub fn division(payment: U256, seller_share: u16, by: Division) -> (U256, U256) {
    let stake = stake(payment);
    let pot = payment + stake + stake;
    let share = U256::from(seller_share.min(FULL_SHARE));
    let full = U256::from(FULL_SHARE);
    let seller = match by {
        Division::Ruling => pot * share / full,
        Division::Settlement => payment * share / full + stake,
    };
    (seller, pot - seller)
}

/// A pact's status and ending from its stages' (`(status, ending)` of each, in order), as the
/// contract restates them after every change of a stage: while a stage lives, the lowest live
/// stage's status and LIVE; once none does, COMPLETED when every stage completed, REFUNDED when
/// every stage was refunded, SPLIT otherwise, and the stages' common ending, or MIXED when they
/// ended in different ways. A one-stage pact's are its stage's.
///
/// # Panics
/// When `stages` is empty: a pact has at least one stage.
pub fn pact_of_stages(stages: &[(PactStatus, Ending)]) -> (PactStatus, Ending) {
    if let Some((status, _)) = stages.iter().find(|(status, _)| !status.is_terminal()) {
        return (*status, Ending::Live);
    }
    let all = |want: PactStatus| stages.iter().all(|(status, _)| *status == want);
    let status = if all(PactStatus::Completed) {
        PactStatus::Completed
    } else if all(PactStatus::Refunded) {
        PactStatus::Refunded
    } else {
        PactStatus::Split
    };
    let first = stages.first().expect("a pact has at least one stage").1;
    let ending = if stages.iter().all(|(_, e)| *e == first) { first } else { Ending::Mixed };
    (status, ending)
}

/// The status escrow v3 ended a pact in at `seller_share` (its events carry no status): COMPLETED
/// with everything to the seller, REFUNDED with everything to the buyer, SPLIT between. Escrow v4
/// says its own in `PactEnded` ([`end_of_division`]: by the amounts, which differ for dust).
pub const fn status_at_share(seller_share: u16) -> PactStatus {
    match seller_share {
        0 => PactStatus::Refunded,
        s if s >= FULL_SHARE => PactStatus::Completed,
        _ => PactStatus::Split,
    }
}

/// The status and the ending of a pact paying `payment` divided at `seller_share` basis points, as
/// the contract decides them. The status follows the amounts, not the share: COMPLETED when the
/// seller's part of what is divided (the pot for a ruling, the payment for a settlement) is all of
/// it, REFUNDED when it rounds to nothing, SPLIT between. A ruling ends RULED at any share; a
/// settlement whose seller part is nothing is a cancel by agreement, any other a split.
pub fn end_of_division(payment: U256, seller_share: u16, by: Division) -> (PactStatus, Ending) {
    let stake = stake(payment);
    let divided = match by {
        Division::Ruling => payment + stake + stake,
        Division::Settlement => payment,
    };
    let part = divided * U256::from(seller_share.min(FULL_SHARE)) / U256::from(FULL_SHARE);
    let status = if part == divided {
        PactStatus::Completed
    } else if part.is_zero() {
        PactStatus::Refunded
    } else {
        PactStatus::Split
    };
    let ending = match by {
        Division::Ruling => Ending::Ruled,
        Division::Settlement if part.is_zero() => Ending::CancelledByAgreement,
        Division::Settlement => Ending::Split,
    };
    (status, ending)
}

/// Terms the contract would refuse; the message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TermsError {
    /// The payment's stake would be zero, or it exceeds [`MAX_PAYMENT`].
    #[error(
        "the payment of {payment} base units is out of range: at least {STAKE_DIVISOR} (so each stake is above 0) and at most {MAX_PAYMENT}"
    )]
    Payment {
        /// The payment given.
        payment: U256,
    },
    /// The deadline is not between `earliest` and `latest`.
    #[error(
        "the deadline {deadline} must be between {earliest} and {latest} (Unix seconds): at least an hour for the work after acceptance closes, at most 365 days ahead"
    )]
    Deadline {
        /// The deadline given.
        deadline: u64,
        /// The earliest the contract takes now.
        earliest: u64,
        /// The latest the contract takes now.
        latest: u64,
    },
    /// `acceptBy` is not between `earliest` and `latest`.
    #[error(
        "acceptBy {accept_by} must be between {earliest} and {latest} (Unix seconds): in the future and at least an hour before the deadline (0 means the latest)"
    )]
    AcceptBy {
        /// The `acceptBy` given.
        accept_by: u64,
        /// The earliest the contract takes now.
        earliest: u64,
        /// The latest the contract takes for this deadline.
        latest: u64,
    },
    /// The review period is neither 0 (the default) nor between [`MIN_REVIEW_PERIOD`] and
    /// [`MAX_REVIEW_PERIOD`].
    #[error(
        "the review period of {0} seconds is out of range: between {MIN_REVIEW_PERIOD} (an hour, so the buyer has time to look at verified work) and {MAX_REVIEW_PERIOD} (30 days), or 0 for the 3-day default"
    )]
    ReviewPeriod(u64),
    /// The threshold is not between [`MIN_THRESHOLD`] and [`MAX_THRESHOLD`].
    #[error(
        "the threshold {0} is out of range: between {MIN_THRESHOLD} and {MAX_THRESHOLD} (a threshold of 0 would pass work every oracle scored 0)"
    )]
    Threshold(u8),
    /// The spec URI is longer than [`MAX_SPEC_URI`] bytes.
    #[error("the spec URI is {0} bytes long; the contract takes at most {MAX_SPEC_URI}")]
    SpecUri(usize),
    /// The arbitrator is the zero address or the creator.
    #[error(
        "the arbitrator must be a third party who settles disputes, not {0} (the zero address or the pact's creator); name another address"
    )]
    Arbitrator(Address),
    /// The counterparty is also the creator, the arbitrator or one of the oracles.
    #[error(
        "counterparty {0} is already part of the pact (creator, arbitrator or oracle); name another address"
    )]
    Counterparty(Address),
    /// No oracle, or more than [`MAX_ORACLES`].
    #[error("the pact names {0} oracles; name 1 to {MAX_ORACLES} registered oracles to score the work")]
    OracleCount(usize),
    /// Not one weight per oracle.
    #[error("the oracles' weights need one weight per oracle ({oracles} oracles, {weights} weights)")]
    WeightCount {
        /// How many oracles.
        oracles: usize,
        /// How many weights.
        weights: usize,
    },
    /// An oracle weighs 0.
    #[error("oracle {0} has weight 0; give each oracle a weight above 0 so that the weights sum to 100")]
    ZeroWeight(Address),
    /// The weights do not sum to 100.
    #[error("the oracles' weights sum to {0}; make them sum to 100, each above 0")]
    WeightsSum(u32),
    /// An oracle is named twice.
    #[error("oracle {0} is named twice; name each oracle once")]
    DuplicateOracle(Address),
    /// An oracle is the creator, who would score its own pact.
    #[error("oracle {0} is the pact's creator, who cannot score its own pact; name another oracle")]
    OracleIsCreator(Address),
    /// No stage, or more than [`MAX_STAGES`].
    #[error("the pact names {0} stages; name 1 to {MAX_STAGES}")]
    StageCount(usize),
    /// A stage is due before the one before it.
    #[error("stage {0} is due before stage {prev}; order the stages by deadline", prev = .0 - 1)]
    StageOrder(usize),
    /// The stages' amounts do not sum to the payment.
    #[error("the stages' amounts sum to {sum} base units but the payment is {payment}; make them add up")]
    StageSum {
        /// Their sum.
        sum: U256,
        /// The payment.
        payment: U256,
    },
    /// The last stage is not due at the pact's deadline.
    #[error("the last stage is due at {last} but the pact's deadline is {deadline}; they are one time")]
    LastStageDeadline {
        /// The last stage's deadline.
        last: u64,
        /// The pact's.
        deadline: u64,
    },
}

/// Checks `terms`, created by `creator` at chain time `now`, against every rule of the contract's
/// `createPact` that needs no chain state: money, clocks, the pass mark, the spec URI, the
/// arbitrator, the counterparty, the oracles and their weights (whether each oracle is registered
/// and active is the chain's to say). Every path that makes terms goes through it: `create-pact`,
/// `sign_contract`, `bench gen` and the dev demo.
pub fn check_terms(terms: &AgentPact::Terms, creator: Address, now: u64) -> Result<(), TermsError> {
    check_payment(terms.payment)?;
    check_deadline(terms.deadline, now)?;
    let last_accept = terms.deadline - MIN_WORK_WINDOW;
    let accept_by = if terms.acceptBy == 0 { last_accept } else { terms.acceptBy };
    if accept_by <= now || accept_by > last_accept {
        return Err(TermsError::AcceptBy {
            accept_by: terms.acceptBy,
            earliest: now + 1,
            latest: last_accept,
        });
    }
    if terms.reviewPeriod > MAX_REVIEW_PERIOD
        || (terms.reviewPeriod != 0 && terms.reviewPeriod < MIN_REVIEW_PERIOD)
    {
        return Err(TermsError::ReviewPeriod(terms.reviewPeriod));
    }
    if !(MIN_THRESHOLD..=MAX_THRESHOLD).contains(&terms.threshold) {
        return Err(TermsError::Threshold(terms.threshold));
    }
    if terms.specUri.len() > MAX_SPEC_URI {
        return Err(TermsError::SpecUri(terms.specUri.len()));
    }
    if terms.arbitrator.is_zero() || terms.arbitrator == creator {
        return Err(TermsError::Arbitrator(terms.arbitrator));
    }
    let c = terms.counterparty;
    if !c.is_zero() && (c == creator || c == terms.arbitrator || terms.oracles.contains(&c)) {
        return Err(TermsError::Counterparty(c));
    }
    check_oracles(&terms.oracles, &terms.weights, creator)
}

/// Each side's stake in a pact of `stages`: a tenth of each stage, each rounded down as the
/// contract computes it (so it can be less than a tenth of their sum).
pub fn staged_stake(stages: &[AgentPact::StageTerms]) -> U256 {
    stages.iter().map(|s| stake(s.amount)).sum()
}

/// Each side's stake in a pact paying `payment` in `stages`: [`stake`] of the payment for a pact
/// of one stage (no `stages`), [`staged_stake`] otherwise.
pub fn stake_of(payment: U256, stages: &[AgentPact::StageTerms]) -> U256 {
    if stages.is_empty() { stake(payment) } else { staged_stake(stages) }
}

/// Checks pact `terms` in `stages`, created at chain time `now`, against the contract's
/// `createStagedPact` rules of stages (beside [`check_terms`]' of the pact): 1 to [`MAX_STAGES`]
/// stages, each amount a payment of its own, deadlines in order, their amounts summing to the
/// payment, the last due at the pact's deadline and the first within [`deadline_bounds`].
pub fn check_stages(
    terms: &AgentPact::Terms,
    stages: &[AgentPact::StageTerms],
    now: u64,
) -> Result<(), TermsError> {
    let (Some(first), Some(last)) = (stages.first(), stages.last()) else {
        return Err(TermsError::StageCount(0));
    };
    if stages.len() > MAX_STAGES {
        return Err(TermsError::StageCount(stages.len()));
    }
    let mut sum = U256::ZERO;
    for (k, s) in stages.iter().enumerate() {
        check_payment(s.amount)?;
        if k > 0 && s.deadline < stages[k - 1].deadline {
            return Err(TermsError::StageOrder(k));
        }
        sum = sum.saturating_add(s.amount);
    }
    if sum != terms.payment {
        return Err(TermsError::StageSum { sum, payment: terms.payment });
    }
    if last.deadline != terms.deadline {
        return Err(TermsError::LastStageDeadline { last: last.deadline, deadline: terms.deadline });
    }
    check_deadline(first.deadline, now)
}

/// Refuses a payment (in base units) whose stake would be zero, or above [`MAX_PAYMENT`].
pub fn check_payment(payment: U256) -> Result<(), TermsError> {
    if stake(payment).is_zero() || payment > MAX_PAYMENT {
        return Err(TermsError::Payment { payment });
    }
    Ok(())
}

/// The earliest and the latest deadline a pact created at chain time `now` may have.
pub const fn deadline_bounds(now: u64) -> (u64, u64) {
    (now.saturating_add(MIN_WORK_WINDOW + 1), now.saturating_add(MAX_DURATION))
}

/// Refuses a deadline outside [`deadline_bounds`] at chain time `now`.
pub fn check_deadline(deadline: u64, now: u64) -> Result<(), TermsError> {
    let (earliest, latest) = deadline_bounds(now);
    if deadline < earliest || deadline > latest {
        return Err(TermsError::Deadline { deadline, earliest, latest });
    }
    Ok(())
}

/// The contract's `checkOracles`, in its order, but for whether each oracle is active.
fn check_oracles(oracles: &[Address], weights: &[u8], creator: Address) -> Result<(), TermsError> {
    if oracles.is_empty() || oracles.len() > MAX_ORACLES {
        return Err(TermsError::OracleCount(oracles.len()));
    }
    if oracles.len() != weights.len() {
        return Err(TermsError::WeightCount { oracles: oracles.len(), weights: weights.len() });
    }
    for (i, (&oracle, &weight)) in oracles.iter().zip(weights).enumerate() {
        if weight == 0 {
            return Err(TermsError::ZeroWeight(oracle));
        }
        if oracle == creator {
            return Err(TermsError::OracleIsCreator(oracle));
        }
        if oracles[..i].contains(&oracle) {
            return Err(TermsError::DuplicateOracle(oracle));
        }
    }
    let sum: u32 = weights.iter().map(|&w| u32::from(w)).sum();
    if sum != 100 {
        return Err(TermsError::WeightsSum(sum));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_700_000_000;

    fn terms() -> AgentPact::Terms {
        AgentPact::Terms {
            initiator: 0,
            specHash: Default::default(),
            specUri: "ipfs://spec".into(),
            deadline: NOW + 2 * MIN_WORK_WINDOW,
            acceptBy: 0,
            reviewPeriod: 0,
            threshold: 70,
            arbitrator: Address::repeat_byte(3),
            counterparty: Address::ZERO,
            currency: Address::ZERO,
            payment: U256::from(10u8),
            oracles: vec![Address::repeat_byte(4)],
            weights: vec![100],
        }
    }

    fn with(change: impl FnOnce(&mut AgentPact::Terms)) -> Result<(), TermsError> {
        let mut t = terms();
        change(&mut t);
        check_terms(&t, Address::repeat_byte(1), NOW)
    }

    #[test]
    fn a_division_keeps_every_base_unit_and_rounds_toward_the_buyer() {
        let milli = U256::from(10u128.pow(15));
        let eth = milli * U256::from(1000u16);
        let m = |n: u16| milli * U256::from(n);
        assert_eq!(division(eth, 7_000, Division::Ruling), (m(840), m(360)), "70% of the 1.2 ETH pot");
        assert_eq!(division(eth, 7_000, Division::Settlement), (m(800), m(400)), "70% of 1 ETH, stakes back");
        assert_eq!(division(eth, FULL_SHARE, Division::Ruling), (m(1200), U256::ZERO));
        assert_eq!(
            division(eth, 0, Division::Settlement),
            (m(100), m(1100)),
            "each gets back what it put in"
        );
        let (seller, buyer) = division(U256::from(13u8), 3_333, Division::Ruling);
        assert_eq!((seller, buyer), (U256::from(4u8), U256::from(11u8)), "15 * 0.3333 = 4.9995 rounds down");
    }

    #[test]
    fn a_division_ends_by_its_amounts_not_its_share() {
        use Division::{Ruling, Settlement};
        let eth = U256::from(10u128.pow(18));
        let end = end_of_division;
        assert_eq!(end(eth, 0, Settlement), (PactStatus::Refunded, Ending::CancelledByAgreement));
        assert_eq!(end(eth, 1, Settlement), (PactStatus::Split, Ending::Split));
        assert_eq!(end(eth, FULL_SHARE, Settlement), (PactStatus::Completed, Ending::Split));
        assert_eq!(end(eth, 0, Ruling), (PactStatus::Refunded, Ending::Ruled));
        assert_eq!(end(eth, FULL_SHARE - 1, Ruling), (PactStatus::Split, Ending::Ruled));
        assert_eq!(end(eth, FULL_SHARE, Ruling), (PactStatus::Completed, Ending::Ruled));
        // Ten base units: 1 bp of the payment or of the 12-unit pot is nothing: a cancel, not a split.
        let ten = U256::from(10u8);
        assert_eq!(end(ten, 1, Settlement), (PactStatus::Refunded, Ending::CancelledByAgreement));
        assert_eq!(end(ten, 999, Settlement), (PactStatus::Refunded, Ending::CancelledByAgreement));
        assert_eq!(end(ten, 1_000, Settlement), (PactStatus::Split, Ending::Split), "a tenth of 10 is 1");
        assert_eq!(end(ten, 833, Ruling), (PactStatus::Refunded, Ending::Ruled), "12 * 0.0833 rounds to 0");
        assert_eq!(end(ten, 834, Ruling), (PactStatus::Split, Ending::Ruled));
        // Escrow v3 went by the share: 1 bp of 10 wei was SPLIT.
        assert_eq!(status_at_share(0), PactStatus::Refunded);
        assert_eq!(status_at_share(1), PactStatus::Split);
        assert_eq!(status_at_share(FULL_SHARE), PactStatus::Completed);
    }

    #[test]
    fn each_bound_admits_its_last_value_and_refuses_the_next() {
        assert_eq!(with(|_| {}), Ok(()));
        assert!(matches!(with(|t| t.payment = U256::from(9u8)), Err(TermsError::Payment { .. })));
        assert_eq!(with(|t| t.payment = MAX_PAYMENT), Ok(()));
        assert!(matches!(
            with(|t| t.payment = MAX_PAYMENT + U256::from(1u8)),
            Err(TermsError::Payment { .. })
        ));
        assert_eq!(with(|t| t.deadline = NOW + MIN_WORK_WINDOW + 1), Ok(()));
        assert!(matches!(with(|t| t.deadline = NOW + MIN_WORK_WINDOW), Err(TermsError::Deadline { .. })));
        assert_eq!(with(|t| t.deadline = NOW + MAX_DURATION), Ok(()));
        assert!(matches!(with(|t| t.deadline = NOW + MAX_DURATION + 1), Err(TermsError::Deadline { .. })));
        assert_eq!(with(|t| t.acceptBy = NOW + 1), Ok(()));
        assert!(matches!(with(|t| t.acceptBy = NOW), Err(TermsError::AcceptBy { .. })));
        assert_eq!(with(|t| t.acceptBy = t.deadline - MIN_WORK_WINDOW), Ok(()));
        assert!(matches!(
            with(|t| t.acceptBy = t.deadline - MIN_WORK_WINDOW + 1),
            Err(TermsError::AcceptBy { .. })
        ));
        assert_eq!(with(|t| t.reviewPeriod = MAX_REVIEW_PERIOD), Ok(()));
        assert_eq!(with(|t| t.reviewPeriod = MIN_REVIEW_PERIOD), Ok(()));
        assert_eq!(
            with(|t| t.reviewPeriod = MIN_REVIEW_PERIOD - 1),
            Err(TermsError::ReviewPeriod(MIN_REVIEW_PERIOD - 1))
        );
        assert_eq!(with(|t| t.reviewPeriod = 0), Ok(()), "0 is the default");
        assert_eq!(with(|t| t.threshold = MIN_THRESHOLD), Ok(()));
        assert_eq!(with(|t| t.threshold = 0), Err(TermsError::Threshold(0)));
        assert_eq!(with(|t| t.threshold = MAX_THRESHOLD), Ok(()));
        assert_eq!(with(|t| t.threshold = MAX_THRESHOLD + 1), Err(TermsError::Threshold(MAX_THRESHOLD + 1)));
        assert_eq!(
            with(|t| t.reviewPeriod = MAX_REVIEW_PERIOD + 1),
            Err(TermsError::ReviewPeriod(MAX_REVIEW_PERIOD + 1))
        );
        assert_eq!(with(|t| t.specUri = "x".repeat(MAX_SPEC_URI)), Ok(()));
        assert_eq!(
            with(|t| t.specUri = "x".repeat(MAX_SPEC_URI + 1)),
            Err(TermsError::SpecUri(MAX_SPEC_URI + 1))
        );
        for conflicted in [Address::repeat_byte(1), Address::repeat_byte(3), Address::repeat_byte(4)] {
            assert_eq!(with(|t| t.counterparty = conflicted), Err(TermsError::Counterparty(conflicted)));
        }
        assert_eq!(with(|t| t.counterparty = Address::repeat_byte(9)), Ok(()));
    }

    #[test]
    fn the_arbitrator_oracles_and_weights_follow_the_contracts_rules() {
        let (creator, oracle) = (Address::repeat_byte(1), Address::repeat_byte(4));
        let (other, third) = (Address::repeat_byte(5), Address::repeat_byte(6));
        for bad in [Address::ZERO, creator] {
            assert_eq!(with(|t| t.arbitrator = bad), Err(TermsError::Arbitrator(bad)));
        }
        assert_eq!(with(|t| (t.oracles, t.weights) = (vec![], vec![])), Err(TermsError::OracleCount(0)));
        let eleven = vec![oracle; MAX_ORACLES + 1];
        assert_eq!(
            with(|t| (t.oracles, t.weights) = (eleven, vec![1; MAX_ORACLES + 1])),
            Err(TermsError::OracleCount(MAX_ORACLES + 1))
        );
        let ten: Vec<Address> = (10..20).map(Address::repeat_byte).collect();
        assert_eq!(with(|t| (t.oracles, t.weights) = (ten, vec![10; MAX_ORACLES])), Ok(()));
        assert_eq!(
            with(|t| t.weights = vec![60, 40]),
            Err(TermsError::WeightCount { oracles: 1, weights: 2 })
        );
        assert_eq!(
            with(|t| (t.oracles, t.weights) = (vec![oracle, other], vec![100, 0])),
            Err(TermsError::ZeroWeight(other))
        );
        assert_eq!(with(|t| t.weights = vec![90]), Err(TermsError::WeightsSum(90)));
        assert_eq!(
            with(|t| (t.oracles, t.weights) = (vec![oracle, other, third], vec![100, 100, 100])),
            Err(TermsError::WeightsSum(300)),
            "summed wider than a u8"
        );
        assert_eq!(
            with(|t| (t.oracles, t.weights) = (vec![oracle, oracle], vec![50, 50])),
            Err(TermsError::DuplicateOracle(oracle))
        );
        assert_eq!(
            with(|t| (t.oracles, t.weights) = (vec![creator], vec![100])),
            Err(TermsError::OracleIsCreator(creator))
        );
        assert_eq!(
            TermsError::WeightsSum(90).to_string(),
            "the oracles' weights sum to 90; make them sum to 100, each above 0"
        );
    }

    #[test]
    fn a_pact_of_stages_shows_its_lowest_live_one_and_ends_with_all() {
        use PactStatus::*;
        let live = Ending::Live;
        assert_eq!(
            pact_of_stages(&[(Completed, Ending::Completed), (Disputed, live), (Funded, live)]),
            (Disputed, live)
        );
        assert_eq!(pact_of_stages(&[(InProgress, live), (Completed, Ending::Completed)]), (InProgress, live));
        let done = |s, e| (s, e);
        assert_eq!(
            pact_of_stages(&[done(Completed, Ending::Completed), done(Completed, Ending::Ruled)]),
            (Completed, Ending::Mixed),
            "every stage paid in full: COMPLETED, however each was decided"
        );
        assert_eq!(
            pact_of_stages(&[
                done(Refunded, Ending::RefundedAfterFailure),
                done(Refunded, Ending::RefundedAfterFailure)
            ]),
            (Refunded, Ending::RefundedAfterFailure)
        );
        assert_eq!(
            pact_of_stages(&[
                done(Completed, Ending::Completed),
                done(Refunded, Ending::CancelledByAgreement)
            ]),
            (Split, Ending::Mixed)
        );
        assert_eq!(
            pact_of_stages(&[done(Split, Ending::Split)]),
            (Split, Ending::Split),
            "one stage: its own"
        );
    }
}
