//! The conversation machine against adversarial random sequences: proposals, counters, accepts,
//! rejections, clarifications, strangers and expiries, with terms in and out of every bound.
//! Whatever happens, a CONTRACTED conversation holds terms `sign_contract` turns into a pact the
//! escrow's rules take (at the accept and until [`SIGNING_TIME`] later), and every state has an
//! exit: NEGOTIATING ends by either side's reject or the clock, CONTRACTED without a pact by
//! either side's reject.

use agentpact_contracts::{AgentPact, money::Currency, rules};
use alloy::primitives::{Address, U256};
use chrono::{DateTime, Duration, Utc};
use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};

use crate::{
    Agreement,
    machine::{Conversation, Refusal, Status, Timeouts, step},
    message::{Accept, AcceptedTerms, Clarification, Counter, Payload, Proposal, Reject, StageOffer},
    offer::SIGNING_TIME,
};

const SEEKER: Address = Address::repeat_byte(0x51);
const WORKER: Address = Address::repeat_byte(0x52);
const STRANGER: Address = Address::repeat_byte(0x53);
const ARBITRATOR: Address = Address::repeat_byte(0xa0);
const ORACLE: Address = Address::repeat_byte(0x0a);
const USDC: Address = Address::repeat_byte(0x5d);

fn currencies() -> Vec<Currency> {
    vec![Currency::eth(), Currency { address: USDC, symbol: "USDC".into(), decimals: 6 }]
}

/// Prices at and around every bound: the smallest payable (10 base units: a stake of 1), one
/// below it, the largest payment and one above it, finer than the currency, unknown currencies,
/// absurd sizes.
fn prices() -> Vec<String> {
    let max_eth = Currency::eth().format(rules::MAX_PAYMENT);
    let over_eth = Currency::eth().format(rules::MAX_PAYMENT + U256::from(1));
    let max_usdc = Currency { address: USDC, symbol: "USDC".into(), decimals: 6 }.format(rules::MAX_PAYMENT);
    [
        "5 USDC",
        "0.5 ETH",
        "0.00001 USDC",
        "0.00000000000000001 ETH",
        "0.000000000000000009 ETH",
        "0.000009 USDC",
        "5.0000001 USDC",
        "0 ETH",
        "5 DAI",
        "9999999999999999999999999999 ETH",
        "9999999999999999999999999999999999 USDC",
        "1",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([format!("{max_eth} ETH"), format!("{over_eth} ETH"), format!("{max_usdc} USDC")])
    .collect()
}

/// A deadline at and around every bound, from the message's time: none, past, the earliest an
/// offer may name (and a second before), a day, the latest (and a second after), beyond.
fn deadline(rng: &mut StdRng, now: DateTime<Utc>) -> Option<String> {
    let earliest = i64::try_from(rules::MIN_WORK_WINDOW + 1 + SIGNING_TIME).unwrap_or(0);
    let latest = i64::try_from(rules::MAX_DURATION).unwrap_or(0);
    let offsets =
        [-3600, 0, earliest - 1, earliest, earliest + 1, 86_400, latest - 1, latest, latest + 1, 2 * latest];
    if rng.random_bool(0.15) {
        return None;
    }
    let offset = if rng.random_bool(0.4) { 86_400 } else { *offsets.choose(rng).unwrap_or(&86_400) };
    let at = now + Duration::seconds(offset);
    Some(at.to_rfc3339())
}

/// Stages at random, spoiled at random: none most often; else 0 to 3 or 9 of them, their prices
/// mostly splitting "5 USDC" (else any price of [`prices`]), their deadlines mostly a day apart
/// (else any of [`deadline`], in any order).
fn stages(rng: &mut StdRng, now: DateTime<Utc>) -> Option<Vec<StageOffer>> {
    if rng.random_bool(0.6) {
        return None;
    }
    let n = *[0usize, 1, 2, 2, 3, 3, 9].choose(rng).unwrap_or(&2);
    // Mostly an exact split of 5 USDC, at times one base unit off it, else any prices.
    let (split, off, daily) = (rng.random_bool(0.8), rng.random_bool(0.2), rng.random_bool(0.7));
    let prices = prices();
    let usdc = Currency { address: USDC, symbol: "USDC".into(), decimals: 6 };
    let part = 5_000_000 / n.max(1) as u64;
    let offers = (0..n)
        .map(|k| StageOffer {
            title: rng.random_bool(0.5).then(|| format!("part {k}")),
            price: if split {
                let last = k + 1 == n;
                let units = if last { 5_000_000 - part * (n as u64 - 1) + u64::from(off) } else { part };
                format!("{} USDC", usdc.format(U256::from(units)))
            } else {
                prices.choose(rng).cloned().unwrap_or_default()
            },
            deadline: if daily {
                (now + Duration::days(k as i64 + 1)).to_rfc3339()
            } else {
                deadline(rng, now).unwrap_or_default()
            },
        })
        .collect();
    Some(offers)
}

/// A random message from a random sender at `now`, terms spoiled at random.
fn message(rng: &mut StdRng, c: Option<&Conversation>, now: DateTime<Utc>) -> (Address, Address, Payload) {
    let prices = prices();
    // Half the prices are fine, so that agreements happen often enough to be checked.
    let price = |rng: &mut StdRng| {
        if rng.random_bool(0.5) {
            "5 USDC".to_owned()
        } else {
            prices.choose(rng).cloned().unwrap_or_default()
        }
    };
    let (from, to) = match rng.random_range(0..10) {
        0 if c.is_some() => (STRANGER, WORKER),
        0 => (SEEKER, WORKER),
        1..=5 => (SEEKER, WORKER),
        _ => (WORKER, SEEKER),
    };
    let table = c.and_then(|c| c.terms.as_ref());
    let payload = match rng.random_range(0..7) {
        0 | 1 => {
            let stages = stages(rng, now);
            Payload::Proposal(Proposal {
                task: "a logo".into(),
                requirements: vec![],
                // Stages mostly split 5 USDC: priced so, they agree often enough to be checked.
                budget: if stages.is_some() && rng.random_bool(0.6) { "5 USDC".into() } else { price(rng) },
                // Terms in stages leave the deadline to their last one, at times.
                deadline: if stages.is_some() && rng.random_bool(0.5) { None } else { deadline(rng, now) },
                stages,
            })
        }
        2 => {
            let stages = stages(rng, now);
            Payload::Counter(Counter {
                accepted_requirements: None,
                price: if stages.is_some() && rng.random_bool(0.6) { "5 USDC".into() } else { price(rng) },
                estimated_delivery: if stages.is_some() && rng.random_bool(0.5) {
                    None
                } else {
                    deadline(rng, now)
                },
                stages,
            })
        }
        3 | 4 => Payload::Accept(Accept {
            accepted_terms: match table {
                Some(t) if rng.random_bool(0.8) => AcceptedTerms {
                    price: t.price.to_string(),
                    deadline: t.deadline.filter(|_| rng.random_bool(0.5)).map(|d| d.to_rfc3339()),
                    stages: rng
                        .random_bool(0.5)
                        .then(|| t.stages.iter().map(crate::StageTerm::offer).collect()),
                },
                _ => AcceptedTerms {
                    price: price(rng),
                    deadline: deadline(rng, now),
                    stages: stages(rng, now),
                },
            },
        }),
        5 => Payload::Clarification(Clarification { questions: vec!["?".into()], answers: vec![] }),
        _ => Payload::Reject(Reject { reason: None }),
    };
    (from, to, payload)
}

/// Whether `sign_contract` makes a pact of contracted `c` at chain time `now`: the agreement in
/// its currency, and the pact's terms as the seeker signs them (an arbitrator and one oracle of
/// its choosing) through every rule of the contract's `createPact`.
fn signs(c: &Conversation, now: DateTime<Utc>) -> Result<(), String> {
    let terms = c.terms.as_ref().ok_or("no terms")?;
    let currency = crate::price::Price::currency(&terms.price);
    let currency = agentpact_contracts::money::resolve(&currencies(), currency).map_err(|e| e.to_string())?;
    let agreement =
        Agreement::reached(1, c, currency.address, currency.decimals).map_err(|e| e.to_string())?;
    let pact = AgentPact::Terms {
        initiator: 0,
        specHash: agreement.spec_hash,
        specUri: format!("hire://conversations/{}", c.id),
        deadline: agreement.deadline,
        acceptBy: 0,
        reviewPeriod: 0,
        threshold: 70,
        arbitrator: ARBITRATOR,
        counterparty: c.worker,
        currency: agreement.currency,
        payment: agreement.payment,
        oracles: vec![ORACLE],
        weights: vec![100],
    };
    let now = u64::try_from(now.timestamp()).unwrap_or(0);
    rules::check_terms(&pact, c.seeker, now).map_err(|e| e.to_string())?;
    if agreement.stages.is_empty() {
        return Ok(());
    }
    let stages: Vec<AgentPact::StageTerms> = agreement
        .stages
        .iter()
        .map(|(amount, deadline)| AgentPact::StageTerms { amount: *amount, deadline: *deadline })
        .collect();
    rules::check_stages(&pact, &stages, now).map_err(|e| e.to_string())
}

/// The exits of `c` at `now`: which messages end it, and that they do.
fn assert_exits(c: &Conversation, now: DateTime<Utc>, timeouts: &Timeouts, currencies: &[Currency]) {
    let reject = Payload::Reject(Reject { reason: None });
    match c.status {
        Status::Negotiating if now > c.expires_at => {
            let late = step(Some(c), &c.id, SEEKER, WORKER, &reject, now, timeouts, currencies);
            assert!(matches!(late, Err(Refusal::Expired { .. })), "the clock ends {c:?}: {late:?}");
        }
        Status::Negotiating | Status::Contracted if !c.signed => {
            for (from, to) in [(SEEKER, WORKER), (WORKER, SEEKER)] {
                let ended = step(Some(c), &c.id, from, to, &reject, now, timeouts, currencies);
                assert_eq!(ended.map(|e| e.status), Ok(Status::Declined), "{from}'s reject ends {c:?}");
            }
        }
        Status::Negotiating => unreachable!("only a contracted conversation is signed"),
        Status::Contracted => {
            let after = step(Some(c), &c.id, WORKER, SEEKER, &reject, now, timeouts, currencies);
            assert!(
                matches!(after, Err(Refusal::Closed { .. })),
                "a signed agreement is the pact's: {after:?}"
            );
        }
        Status::Declined | Status::Abandoned => {}
    }
}

#[test]
fn random_conversations_never_agree_to_terms_no_pact_can_carry_and_every_state_has_an_exit() {
    let timeouts = Timeouts::default();
    let currencies = currencies();
    let mut contracted = 0;
    let mut staged = 0;
    let mut refused_at_accept = 0;
    for seed in 0..5_000u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut now = DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        let mut current: Option<Conversation> = None;
        for _ in 0..rng.random_range(1..20) {
            // Mostly quick answers; now and then one after the clock ran out.
            let wait = if rng.random_bool(0.9) { rng.random_range(0..30) } else { rng.random_range(0..200) };
            now += Duration::seconds(wait);
            let (from, to, payload) = message(&mut rng, current.as_ref(), now);
            let is_accept = matches!(payload, Payload::Accept(_));
            let before = current.clone();
            match step(current.as_ref(), "conv_model", from, to, &payload, now, &timeouts, &currencies) {
                Ok(next) => {
                    assert!(from != STRANGER, "a stranger wrote into {before:?}");
                    if next.status == Status::Contracted
                        && before.as_ref().map(|c| c.status) != Some(Status::Contracted)
                    {
                        contracted += 1;
                        staged += usize::from(next.terms.as_ref().is_some_and(|t| !t.stages.is_empty()));
                        for delay in [0, SIGNING_TIME] {
                            let at = now + Duration::seconds(i64::try_from(delay).unwrap_or(0));
                            assert_eq!(
                                signs(&next, at),
                                Ok(()),
                                "seed {seed}: agreed {next:?}, unsignable {delay} s later"
                            );
                        }
                    }
                    current = Some(next);
                }
                Err(Refusal::Expired { .. }) => {
                    current = current.map(|c| Conversation { status: Status::Abandoned, ..c });
                }
                Err(_) => {
                    refused_at_accept += usize::from(is_accept);
                    assert_eq!(current, before, "a refusal changed the conversation");
                }
            }
            if let Some(c) = &current {
                assert_exits(c, now, &timeouts, &currencies);
                if c.status == Status::Contracted && rng.random_bool(0.5) {
                    // The seeker signed: the relay linked a pact.
                    current = Some(Conversation { signed: true, ..c.clone() });
                }
            }
        }
    }
    assert!(contracted > 300, "the model reached CONTRACTED only {contracted} times: it tests little");
    assert!(staged > 50, "only {staged} of {contracted} agreements were in stages: stages are barely tried");
    assert!(
        refused_at_accept > 300,
        "only {refused_at_accept} accepts were refused: the bounds are barely tried"
    );
}
