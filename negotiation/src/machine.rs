//! The conversation state machine of seed 004: IDLE → NEGOTIATING → CONTRACTED | DECLINED, with
//! ABANDONED for a conversation whose clock ran out. Pure: it decides from the conversation as it
//! stands, the message and the relay's clock; [`crate::store`] persists what it decides.
//!
//! | type | from | needs |
//! |---|---|---|
//! | inquiry | seeker | opens a conversation (IDLE) |
//! | proposal | seeker | opens one, or puts new terms on the table |
//! | capability | worker | |
//! | clarification | either | |
//! | counter | worker | terms on the table; replaces them |
//! | accept | either | terms on the table, put there by the other party, named exactly, with a deadline → CONTRACTED |
//! | reject | either | → DECLINED; also from CONTRACTED while no pact carries the terms |
//! | contract | the relay only | CONTRACTED, after the pact is on chain |
//!
//! Every message restarts the clock of the conversation: the other side must answer within the
//! initial-response timeout after the opening message, the clarification timeout after a
//! clarification, and the acceptance timeout after terms (a proposal, capability or counter).
//!
//! Terms are held to [`crate::offer`] when they are put on the table and when they are accepted,
//! so an accept never agrees to terms no pact can carry. Every state has an exit: NEGOTIATING
//! ends by reject, accept or the clock; CONTRACTED becomes a pact by `sign_contract`, or, while
//! no pact carries it (the chain changed under the agreement: an oracle left, a token paused),
//! DECLINED by either party's reject.

use std::time::Duration;

use agentpact_contracts::{closed_set, money::Currency};
use alloy::primitives::Address;
use chrono::{DateTime, Utc};

use crate::{
    Code,
    message::{MessageType, Payload, StageOffer},
    offer::{self, Moment},
    price::Price,
};

closed_set! {
    serde;
    /// Where a conversation stands (migrations/0015's CHECK on `conversations.status` lists the
    /// same names; a test compares them).
    pub enum Status {
        /// Messages are being exchanged.
        Negotiating => "NEGOTIATING",
        /// Terms accepted (a pact follows with `sign_contract`).
        Contracted => "CONTRACTED",
        /// One side rejected.
        Declined => "DECLINED",
        /// Nobody answered in time.
        Abandoned => "ABANDONED",
    }
}

/// How long each side has to answer (seed 004's defaults: 60 s, 30 s, 120 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// After the opening message.
    pub initial_response: Duration,
    /// After a clarification.
    pub clarification_round: Duration,
    /// After terms are put on the table.
    pub acceptance: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            initial_response: Duration::from_secs(60),
            clarification_round: Duration::from_secs(30),
            acceptance: Duration::from_secs(120),
        }
    }
}

/// The terms on the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    /// The task.
    pub task: String,
    /// Its requirements.
    pub requirements: Vec<String>,
    /// The price, in the currency it names ("5 USDC").
    pub price: Price,
    /// The deadline, when one was named (with stages: the last stage's).
    pub deadline: Option<DateTime<Utc>>,
    /// The price in stages, each due by its own deadline; empty for one payment.
    pub stages: Vec<StageTerm>,
    /// Who put them there.
    pub by: Address,
}

/// One stage of the terms on the table: a part of the price, due by its own deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageTerm {
    /// What it delivers, if the offer said.
    pub title: Option<String>,
    /// Its part of the price, in the terms' currency.
    pub price: Price,
    /// When its work is due, to the whole second.
    pub deadline: DateTime<Utc>,
}

impl StageTerm {
    /// The stages `offers` name, read; a refusal naming the first that cannot be.
    pub fn read_all(offers: &[StageOffer]) -> Result<Vec<Self>, Refusal> {
        offers
            .iter()
            .enumerate()
            .map(|(k, o)| {
                let at = |why: Refusal| Refusal::BadValue(format!("stages[{k}]: {why}"));
                Ok(Self {
                    title: o.title.clone(),
                    price: price(&o.price).map_err(at)?,
                    deadline: date(&o.deadline).map_err(at)?,
                })
            })
            .collect()
    }

    /// The stage as messages carry it and the relay stores it.
    pub fn offer(&self) -> StageOffer {
        StageOffer {
            title: self.title.clone(),
            price: self.price.to_string(),
            deadline: self.deadline.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }
}

/// A conversation as the machine sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// Its id.
    pub id: String,
    /// Who opened it (the buyer-to-be).
    pub seeker: Address,
    /// Who it was opened with (the seller-to-be).
    pub worker: Address,
    /// Where it stands.
    pub status: Status,
    /// The terms on the table, if any.
    pub terms: Option<Terms>,
    /// When the party that owes an answer runs out of time.
    pub expires_at: DateTime<Utc>,
    /// Whether a pact carries its terms (the relay linked one): a signed conversation is the
    /// pact's from then on.
    pub signed: bool,
}

/// Why the relay refuses a message. Nothing is stored for a refused message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A conversation that does not exist yet can only be opened.
    #[error("conversation {id} does not exist: open it with an inquiry or a proposal")]
    NotOpened {
        /// The id.
        id: String,
    },
    /// The conversation is over.
    #[error("conversation {id} is {}: it takes no more messages", status.name())]
    Closed {
        /// The id.
        id: String,
        /// How it ended.
        status: Status,
    },
    /// The answer came too late: the conversation is now abandoned.
    #[error(
        "conversation {id} expired at {expired_at}: nobody answered in time, so it is ABANDONED; open a new one"
    )]
    Expired {
        /// The id.
        id: String,
        /// When its clock ran out.
        expired_at: DateTime<Utc>,
    },
    /// The sender is not one of the two parties, or writes to someone else.
    #[error("conversation {id} is between {seeker} and {worker}: messages go from one of them to the other")]
    NotParties {
        /// The id.
        id: String,
        /// Its seeker.
        seeker: Address,
        /// Its worker.
        worker: Address,
    },
    /// The type may not come from this side (or at this point).
    #[error("a {kind} message {rule}")]
    Illegal {
        /// The type.
        kind: &'static str,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// An accept that names other terms than those on the table.
    #[error("the accepted terms ({named}) are not the terms on the table ({table}); accept those or counter")]
    TermsDiffer {
        /// What the accept named.
        named: String,
        /// What is on the table.
        table: String,
    },
    /// An amount or a date that cannot be read.
    #[error("{0}")]
    BadValue(String),
}

impl Refusal {
    /// The stable code clients read.
    pub const fn code(&self) -> Code {
        match self {
            Self::NotOpened { .. } => Code::NoConversation,
            Self::Closed { .. } => Code::ConversationClosed,
            Self::Expired { .. } => Code::ConversationExpired,
            Self::NotParties { .. } => Code::WrongParties,
            Self::Illegal { .. } | Self::TermsDiffer { .. } => Code::IllegalTransition,
            Self::BadValue(_) => Code::BadMessage,
        }
    }
}

/// The conversation after `payload` went from `from` to `to` at `now`, or why it may not.
/// `current` is `None` for a conversation id the relay has not seen (IDLE); `currencies` are the
/// ones the escrow takes (as indexed), against which terms are held.
#[allow(clippy::too_many_arguments)] // the message's own fields, then the relay's clock and rules
pub fn step(
    current: Option<&Conversation>,
    id: &str,
    from: Address,
    to: Address,
    payload: &Payload,
    now: DateTime<Utc>,
    timeouts: &Timeouts,
    currencies: &[Currency],
) -> Result<Conversation, Refusal> {
    let kind = kind_of(payload);
    let Some(c) = current else {
        if !matches!(kind, MessageType::Inquiry | MessageType::Proposal) {
            return Err(Refusal::NotOpened { id: id.to_owned() });
        }
        if from == to {
            return Err(Refusal::Illegal {
                kind: kind.name(),
                rule: "goes to another agent, not to its sender",
            });
        }
        let opened = Conversation {
            id: id.to_owned(),
            seeker: from,
            worker: to,
            status: Status::Negotiating,
            terms: None,
            expires_at: now,
            signed: false,
        };
        return apply(opened, from, payload, now, timeouts.initial_response, currencies);
    };
    // Who may write comes first: a stranger learns nothing of the conversation's state and
    // changes none of it (an expired one is marked ABANDONED only by its parties' messages).
    let between = (from == c.seeker && to == c.worker) || (from == c.worker && to == c.seeker);
    if !between {
        return Err(Refusal::NotParties { id: c.id.clone(), seeker: c.seeker, worker: c.worker });
    }
    if c.status == Status::Contracted && !c.signed && kind == MessageType::Reject {
        // The exit from an agreement no pact carries: either side may end it.
        return Ok(Conversation { status: Status::Declined, ..c.clone() });
    }
    if c.status != Status::Negotiating {
        return Err(Refusal::Closed { id: c.id.clone(), status: c.status });
    }
    if now > c.expires_at {
        return Err(Refusal::Expired { id: c.id.clone(), expired_at: c.expires_at });
    }
    let by_seeker = from == c.seeker;
    let rule = match kind {
        MessageType::Inquiry => Some("only opens a conversation"),
        MessageType::Proposal | MessageType::Capability | MessageType::Counter
            if by_seeker != (kind == MessageType::Proposal) =>
        {
            Some(if kind == MessageType::Proposal {
                "comes from the seeker"
            } else {
                "comes from the worker"
            })
        }
        MessageType::Counter | MessageType::Accept if c.terms.is_none() => {
            Some("needs terms on the table: a proposal first")
        }
        MessageType::Accept if c.terms.as_ref().is_some_and(|t| t.by == from) => {
            Some("accepts the other party's terms, not the sender's own")
        }
        MessageType::Contract => Some("comes only from the relay, after sign_contract"),
        _ => None,
    };
    if let Some(rule) = rule {
        return Err(Refusal::Illegal { kind: kind.name(), rule });
    }
    let clock = match kind {
        MessageType::Clarification => timeouts.clarification_round,
        _ => timeouts.acceptance,
    };
    apply(c.clone(), from, payload, now, clock, currencies)
}

/// `c` with the message's effect on terms and status, its clock restarted with `clock`.
fn apply(
    mut c: Conversation,
    from: Address,
    payload: &Payload,
    now: DateTime<Utc>,
    clock: Duration,
    currencies: &[Currency],
) -> Result<Conversation, Refusal> {
    match payload {
        Payload::Proposal(p) => {
            let stages = StageTerm::read_all(p.stages.as_deref().unwrap_or_default())?;
            c.terms = Some(Terms {
                task: p.task.clone(),
                requirements: p.requirements.clone(),
                price: price(&p.budget)?,
                // Terms in stages are due when their last stage is, unless they say otherwise.
                deadline: p.deadline.as_deref().map(date).transpose()?.or(stages.last().map(|s| s.deadline)),
                stages,
                by: from,
            });
            offer_made(&c, currencies, now)?;
        }
        Payload::Counter(k) => {
            let table = c.terms.take();
            let stages = match &k.stages {
                Some(named) => StageTerm::read_all(named)?,
                None => table.as_ref().map(|t| t.stages.clone()).unwrap_or_default(),
            };
            c.terms = Some(Terms {
                price: price(&k.price)?,
                deadline: match (&k.estimated_delivery, &k.stages) {
                    (Some(d), _) => Some(date(d)?),
                    (None, Some(_)) if !stages.is_empty() => stages.last().map(|s| s.deadline),
                    (None, _) => table.as_ref().and_then(|t| t.deadline),
                },
                stages,
                requirements: match k.accepted_requirements.clone() {
                    Some(r) => r,
                    None => table.as_ref().map(|t| t.requirements.clone()).unwrap_or_default(),
                },
                task: table.map(|t| t.task).unwrap_or_default(),
                by: from,
            });
            offer_made(&c, currencies, now)?;
        }
        Payload::Accept(a) => {
            let table = c.terms.as_ref().ok_or(Refusal::Illegal {
                kind: "accept",
                rule: "needs terms on the table: a proposal first",
            })?;
            let price = price(&a.accepted_terms.price)?;
            let deadline = a.accepted_terms.deadline.as_deref().map(date).transpose()?;
            let stages = a.accepted_terms.stages.as_deref().map(StageTerm::read_all).transpose()?;
            if price != table.price
                || deadline.is_some_and(|d| Some(d) != table.deadline)
                || stages.as_ref().is_some_and(|s| *s != table.stages)
            {
                return Err(Refusal::TermsDiffer {
                    named: describe(&price, deadline, stages.as_deref().unwrap_or(&table.stages)),
                    table: describe(&table.price, table.deadline, &table.stages),
                });
            }
            offer::check(table, currencies, now, Moment::Accepted)?;
            c.status = Status::Contracted;
        }
        Payload::Reject(_) => c.status = Status::Declined,
        _ => {}
    }
    c.expires_at = now + chrono::Duration::from_std(clock).unwrap_or(chrono::Duration::MAX);
    Ok(c)
}

/// Holds the terms `c` now has on the table to [`offer::check`].
fn offer_made(c: &Conversation, currencies: &[Currency], now: DateTime<Utc>) -> Result<(), Refusal> {
    c.terms.as_ref().map_or(Ok(()), |t| offer::check(t, currencies, now, Moment::Offered))
}

fn kind_of(payload: &Payload) -> MessageType {
    match payload {
        Payload::Inquiry(_) => MessageType::Inquiry,
        Payload::Capability(_) => MessageType::Capability,
        Payload::Proposal(_) => MessageType::Proposal,
        Payload::Clarification(_) => MessageType::Clarification,
        Payload::Counter(_) => MessageType::Counter,
        Payload::Accept(_) => MessageType::Accept,
        Payload::Reject(_) => MessageType::Reject,
        Payload::Contract(_) => MessageType::Contract,
    }
}

fn price(text: &str) -> Result<Price, Refusal> {
    Price::parse(text).map_err(|why| Refusal::BadValue(why.to_string()))
}

/// The date `text` names, to the whole second: a pact's deadline is in seconds, and the relay's
/// table keeps no finer than microseconds, so an accept naming the very text of an offer with
/// nanoseconds would otherwise never match what was stored.
fn date(text: &str) -> Result<DateTime<Utc>, Refusal> {
    let whole_second = |d: DateTime<chrono::FixedOffset>| DateTime::from_timestamp(d.timestamp(), 0);
    DateTime::parse_from_rfc3339(text).ok().and_then(whole_second).ok_or_else(|| {
        Refusal::BadValue(format!("{text:?} is not an ISO 8601 date such as 2025-01-31T12:00:00Z"))
    })
}

fn describe(price: &Price, deadline: Option<DateTime<Utc>>, stages: &[StageTerm]) -> String {
    let whole = match deadline {
        Some(d) => format!("{price} by {}", d.to_rfc3339()),
        None => price.to_string(),
    };
    if stages.is_empty() {
        return whole;
    }
    let parts: Vec<String> =
        stages.iter().map(|s| format!("{} by {}", s.price, s.deadline.to_rfc3339())).collect();
    format!("{whole} in {} stages: {}", stages.len(), parts.join(", "))
}
