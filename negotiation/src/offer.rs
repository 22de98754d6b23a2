//! What terms on the table must be for an accept to make a pact of them. The relay holds every
//! offer (a proposal, a counter) to the escrow's rules that the terms alone decide, when it is
//! made and again when it is accepted, so a CONTRACTED conversation always converts with
//! `sign_contract`: the price is in a currency the escrow takes, payable in its decimals, with a
//! stake above 0 and within the largest payment; the deadline is one a pact created within
//! [`SIGNING_TIME`] of the accept could still have. An offer may leave the deadline open while
//! the parties talk; an accept of terms without one is refused.
//!
//! What the terms do not decide (the arbitrator and oracles the seeker names when signing, a
//! token paused, the chain's clock running ahead of the relay's) can still stop a signature; a
//! CONTRACTED conversation without a pact then ends by either party's `reject`
//! ([`crate::machine`]).

use agentpact_contracts::{
    money::{self, Currency},
    rules,
};
use alloy::primitives::U256;
use chrono::{DateTime, Utc};

use crate::{
    machine::{Refusal, Terms},
    message::MAX_STAGE_TITLE,
    price::Price,
};

/// Seconds an accept leaves the seeker to sign the pact: a deadline on the table must be at least
/// this much later than the earliest a pact takes (`rules::MIN_WORK_WINDOW` after its creation).
pub const SIGNING_TIME: u64 = 15 * 60;

/// Whether an accept makes a pact of the terms now, or the terms are only put on the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// A proposal or a counter puts them on the table: the deadline may still be open.
    Offered,
    /// An accept agrees to them: they need a deadline.
    Accepted,
}

/// The earliest and the latest deadline (Unix seconds) terms may name at relay time `now`: a pact
/// created up to [`SIGNING_TIME`] later must still take it.
pub fn deadline_bounds(now: DateTime<Utc>) -> (u64, u64) {
    let now = u64::try_from(now.timestamp()).unwrap_or(0);
    let (earliest, _) = rules::deadline_bounds(now.saturating_add(SIGNING_TIME));
    let (_, latest) = rules::deadline_bounds(now);
    (earliest, latest)
}

/// Refuses `terms` at relay time `now`, `at` the moment given, unless a pact could carry them: in
/// a currency of `currencies` (as indexed; ETH always), payable, with a deadline within
/// [`deadline_bounds`] when one is named (and one named when accepted); in stages, as
/// [`check_stages`] wants them.
pub fn check(terms: &Terms, currencies: &[Currency], now: DateTime<Utc>, at: Moment) -> Result<(), Refusal> {
    let price = &terms.price;
    let currency = money::resolve(currencies, price.currency())
        .map_err(|why| Refusal::BadValue(format!("{price}: {why}")))?;
    let payment = payable(price, &currency)?;
    check_stages(terms, &currency, payment, now)?;
    let Some(deadline) = terms.deadline else {
        return match at {
            Moment::Offered => Ok(()),
            Moment::Accepted => Err(Refusal::Illegal {
                kind: "accept",
                rule: "needs terms that name a deadline (a pact has one): counter or propose with a deadline first",
            }),
        };
    };
    within_bounds("deadline", deadline, now)
}

/// `price` in base units of `currency`, if a pact (or a stage) can be paid that much.
fn payable(price: &Price, currency: &Currency) -> Result<U256, Refusal> {
    let payment = price.base_units(currency.decimals).map_err(|why| Refusal::BadValue(format!("{why}")))?;
    rules::check_payment(payment).map_err(|_| {
        Refusal::BadValue(format!(
            "{price} cannot be a pact's payment: it takes more than 0 (at least {}, so the 10% stake is not 0) and at most {}; offer a price in that range",
            currency.show(U256::from(rules::STAKE_DIVISOR)),
            currency.show(rules::MAX_PAYMENT),
        ))
    })?;
    Ok(payment)
}

/// Refuses `what`'s `deadline` unless a pact signed within [`SIGNING_TIME`] of `now` could have it.
fn within_bounds(what: &str, deadline: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), Refusal> {
    let (earliest, latest) = deadline_bounds(now);
    let seconds = u64::try_from(deadline.timestamp()).unwrap_or(0);
    if seconds < earliest || seconds > latest {
        let shown = |t: u64| {
            DateTime::from_timestamp(i64::try_from(t).unwrap_or(i64::MAX), 0)
                .map_or_else(|| t.to_string(), |d| d.to_rfc3339())
        };
        return Err(Refusal::BadValue(format!(
            "{what} {} is not one a pact signed now could have: name one from {} to {} (at least {} minutes to sign, then an hour of work; at most 365 days ahead)",
            deadline.to_rfc3339(),
            shown(earliest),
            shown(latest),
            SIGNING_TIME / 60,
        )));
    }
    Ok(())
}

/// Terms in stages as escrow v4's `createStagedPact` takes them: 2 to [`rules::MAX_STAGES`]
/// stages (one payment names none), each priced in the terms' currency and payable on its own,
/// their prices summing to the terms' `payment`, their deadlines in order and each one a pact
/// signed now could have, the last one the terms' deadline; titles of at most
/// [`MAX_STAGE_TITLE`] bytes.
fn check_stages(
    terms: &Terms,
    currency: &Currency,
    payment: U256,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    let stages = &terms.stages;
    if stages.is_empty() {
        return Ok(());
    }
    let bad = |why: String| Err(Refusal::BadValue(why));
    if !(2..=rules::MAX_STAGES).contains(&stages.len()) {
        return bad(format!(
            "terms in stages name 2 to {} of them, not {} (one payment needs no stages: leave them out, or send [] in a counter)",
            rules::MAX_STAGES,
            stages.len()
        ));
    }
    let mut sum = U256::ZERO;
    for (k, s) in stages.iter().enumerate() {
        if s.title.as_ref().is_some_and(|t| t.len() > MAX_STAGE_TITLE) {
            return bad(format!("stages[{k}].title is longer than {MAX_STAGE_TITLE} bytes: shorten it"));
        }
        let named = money::resolve(std::slice::from_ref(currency), s.price.currency());
        if named.ok().map(|c| c.address) != Some(currency.address) {
            return bad(format!(
                "stages[{k}] is priced {} but the terms are in {}: price every stage in {}",
                s.price, currency.symbol, currency.symbol
            ));
        }
        sum = sum.saturating_add(
            payable(&s.price, currency).map_err(|why| Refusal::BadValue(format!("stages[{k}]: {why}")))?,
        );
        if k > 0 && s.deadline < stages[k - 1].deadline {
            return bad(format!("stages[{k}] is due before stages[{}]: order the stages by deadline", k - 1));
        }
        within_bounds(&format!("stages[{k}].deadline"), s.deadline, now)?;
    }
    if sum != payment {
        return bad(format!(
            "the stages' prices sum to {} but the price is {}: make them add up to the price",
            currency.show(sum),
            currency.show(payment)
        ));
    }
    let last = stages[stages.len() - 1].deadline;
    if terms.deadline.is_some_and(|d| d != last) {
        return bad(format!(
            "the last stage is due {} but the terms' deadline is {}: the last stage's deadline is the pact's",
            last.to_rfc3339(),
            terms.deadline.map(|d| d.to_rfc3339()).unwrap_or_default()
        ));
    }
    Ok(())
}
