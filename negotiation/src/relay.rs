//! The relay: accepts a signed message, checks it (shape, signature, sender, clock, replay, state
//! machine, and that an opening message goes to a registered agent: the worker is a listed agent,
//! the seeker needs no listing), stores it in the audit log with the conversation's new state in
//! one transaction, and announces it on [`crate::NEGOTIATION_CHANNEL`] for subscribers. It also
//! records the system `contract` message once the agreed pact is on chain.

use std::{sync::Arc, time::Duration};

use agentpact_contracts::{
    Initiator,
    money::{self, AmountError},
};
use agentpact_read::{PactTerms, ReadError, agents, currencies::currencies_on, pact_terms};
use alloy::primitives::{Address, B256, U256, keccak256};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::{
    Code,
    machine::{self, Conversation, Refusal, Status, Timeouts},
    message::{ContractNote, Envelope, Malformed, MessageType, PROTOCOL, canonical_json, conversation_id_ok},
    price::Price,
    store::{self, Store, StoreError},
};

/// The most messages agents may write into one conversation (the relay's `contract` message may
/// still follow): a negotiation that has not converged by then is better started anew.
pub const MAX_MESSAGES: i64 = 100;

/// How far a message's timestamp may be from the relay's clock.
pub const MAX_SKEW: Duration = Duration::from_secs(300);

/// The relay's time: the system clock, or one a test moves by hand.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>);

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self(Arc::new(Utc::now))
    }

    /// A clock reading `now()`.
    pub fn from_fn(now: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    /// The time.
    pub fn now(&self) -> DateTime<Utc> {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({})", self.now().to_rfc3339())
    }
}

/// Why the relay refused a message; nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The message cannot be read.
    #[error("{0}")]
    Malformed(#[from] Malformed),
    /// The signature is not `from`'s.
    #[error(
        "the signature is not {from}'s: sign the EIP-712 HireMessage with the sender's key (domain HIRE 1.0, chain {chain_id})"
    )]
    BadSignature {
        /// The claimed sender.
        from: Address,
        /// The chain of the domain.
        chain_id: u64,
    },
    /// The timestamp is too far from the relay's clock.
    #[error("timestamp {timestamp} is more than {} s from the relay's clock ({now}): send fresh messages", MAX_SKEW.as_secs())]
    Stale {
        /// The message's timestamp.
        timestamp: String,
        /// The relay's time.
        now: DateTime<Utc>,
    },
    /// The recipient of an opening message (the worker-to-be) is not a registered agent in the
    /// market (AgentRegistry, active). The opener (the seeker) needs no registration: its
    /// signature is its identity.
    #[error(
        "the recipient {0} is not a registered agent on this chain (or has stepped out of the market): pick an agent from search and open the conversation with it"
    )]
    NotRegistered(Address),
    /// The very same message was accepted before.
    #[error("this message was already accepted (same signed content): replays are refused")]
    Replayed,
    /// The request body is not the JSON its endpoint takes (shortened to 300 characters).
    #[error("{0}")]
    Body(String),
    /// The state machine refuses.
    #[error("{0}")]
    Refused(#[from] Refusal),
    /// A conversation's agreement cannot be a pact, or the pact named is not it.
    #[error(transparent)]
    Agreement(#[from] AgreementError),
    /// The conversation holds [`MAX_MESSAGES`] messages already.
    #[error(
        "conversation {0} already holds {MAX_MESSAGES} messages, the most the relay keeps for one; open a new conversation"
    )]
    Full(String),
    /// The relay's tables could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The index (agents, pacts, currencies) could not be read.
    #[error("the index: {0}")]
    Index(#[from] ReadError),
}

impl From<sqlx::Error> for RelayError {
    fn from(e: sqlx::Error) -> Self {
        Self::Store(e.into())
    }
}

impl RelayError {
    /// The stable code clients read.
    pub const fn code(&self) -> Code {
        match self {
            Self::Malformed(_) | Self::Body(_) => Code::BadMessage,
            Self::BadSignature { .. } => Code::BadSignature,
            Self::Stale { .. } => Code::StaleMessage,
            Self::NotRegistered(_) => Code::NotRegistered,
            Self::Replayed => Code::Replayed,
            Self::Refused(r) => r.code(),
            Self::Agreement(a) => a.code(),
            Self::Full(_) => Code::ConversationFull,
            Self::Store(_) | Self::Index(_) => Code::Internal,
        }
    }
}

/// A message the relay accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    /// Its conversation.
    pub conversation_id: String,
    /// Its place in the conversation, from 1.
    pub seq: i32,
    /// The conversation's status after it.
    pub status: Status,
    /// When the other side's time to answer runs out (RFC 3339).
    pub expires_at: String,
}

/// The relay over the index database of one chain.
#[derive(Debug, Clone)]
pub struct Relay {
    store: Store,
    chain_id: u64,
    timeouts: Timeouts,
    clock: Clock,
}

impl Relay {
    /// A relay for `chain_id` storing in `pool`.
    pub const fn new(pool: PgPool, chain_id: u64, timeouts: Timeouts, clock: Clock) -> Self {
        Self { store: Store::new(pool), chain_id, timeouts, clock }
    }

    /// Checks `envelope` and, if every check passes, stores it and announces it.
    pub async fn submit(&self, envelope: &Envelope) -> Result<Accepted, RelayError> {
        let payload = envelope.check()?;
        if envelope.kind == MessageType::Contract {
            return Err(Refusal::Illegal {
                kind: "contract",
                rule: "comes only from the relay, after sign_contract",
            }
            .into());
        }
        if envelope.signer(self.chain_id)? != envelope.from {
            return Err(RelayError::BadSignature { from: envelope.from, chain_id: self.chain_id });
        }
        let now = self.clock.now();
        let skew = (envelope.sent_at()? - now).abs();
        if skew > chrono::Duration::from_std(MAX_SKEW).unwrap_or(chrono::Duration::MAX) {
            return Err(RelayError::Stale { timestamp: envelope.timestamp.clone(), now });
        }
        let digest = envelope.signing_hash(self.chain_id);
        let mut tx = self.store.pool().begin().await?;
        let current =
            store::lock(&mut tx, self.chain_id, &envelope.conversation_id).await?.map(|r| r.conversation);
        if store::seen(&mut tx, digest).await? {
            return Err(RelayError::Replayed);
        }
        if current.is_some()
            && store::written(&mut tx, self.chain_id, &envelope.conversation_id).await? >= MAX_MESSAGES
        {
            return Err(RelayError::Full(envelope.conversation_id.clone()));
        }
        let currencies = currencies_on(&mut *tx, self.chain_id).await?;
        let step = machine::step(
            current.as_ref(),
            &envelope.conversation_id,
            envelope.from,
            envelope.to,
            &payload,
            now,
            &self.timeouts,
            &currencies,
        );
        let next = match step {
            Ok(next) => next,
            Err(Refusal::Expired { id, expired_at }) => {
                // The clock ran out before this message: the conversation is over.
                store::abandon(&mut tx, self.chain_id, &id, now).await?;
                tx.commit().await?;
                return Err(Refusal::Expired { id, expired_at }.into());
            }
            Err(other) => return Err(other.into()),
        };
        // A reject leaves an agreement only while no pact carries it: a pact the seeker made (and
        // the index has) but did not link yet wins over a worker's reject that raced it.
        if let Some(c) =
            current.as_ref().filter(|c| c.status == Status::Contracted && next.status == Status::Declined)
            && let Some(pact_id) = self.pact_carrying(&mut tx, c).await?
        {
            return Err(AgreementError::AlreadyLinked { id: c.id.clone(), pact_id }.into());
        }
        // Who may be hired: an opening message goes to an agent listed in the market. The opener
        // needs no listing (a buyer hires without selling anything); after the opening, the
        // machine lets only the two parties write, each to the other.
        if current.is_none() && !agents::listed(&mut *tx, self.chain_id, next.worker).await? {
            return Err(RelayError::NotRegistered(next.worker));
        }
        if !store::save(&mut tx, self.chain_id, &next, current.is_none(), now).await? {
            // Two openings of one id raced and the other won.
            return Err(Refusal::Illegal {
                kind: "opening",
                rule: "names a conversation id another opening just took: pick a new id",
            }
            .into());
        }
        let seq = store::append(&mut tx, self.chain_id, envelope, digest, now).await?;
        tx.commit().await?;
        Ok(Accepted {
            conversation_id: next.id.clone(),
            seq,
            status: next.status,
            expires_at: next.expires_at.to_rfc3339(),
        })
    }

    /// The address and decimals of the one currency the escrow takes under `price`'s symbol, as
    /// indexed, found by the one resolver (`money::resolve`: ETH always); a price in a currency it
    /// does not take (or two share the name of) is a bad value.
    async fn currency_of(
        &self,
        conn: &mut sqlx::PgConnection,
        price: &Price,
    ) -> Result<(Address, u8), RelayError> {
        let known = currencies_on(&mut *conn, self.chain_id).await?;
        let currency = money::resolve(&known, price.currency())
            .map_err(|why| Refusal::BadValue(format!("{price}: {why}")))?;
        Ok((currency.address, currency.decimals))
    }

    /// What the pact of contracted conversation `c` must carry: its price in the currency the
    /// escrow takes under the price's symbol.
    async fn agreement_in(
        &self,
        conn: &mut sqlx::PgConnection,
        c: &Conversation,
    ) -> Result<Agreement, RelayError> {
        let terms = c.terms.as_ref().ok_or_else(|| AgreementError::NoTerms { id: c.id.clone() })?;
        let (currency, decimals) = self.currency_of(conn, &terms.price).await?;
        Ok(Agreement::reached(self.chain_id, c, currency, decimals)?)
    }

    /// The oldest indexed pact that carries contracted conversation `c`'s agreement, linked or
    /// not. An agreement no pact can carry (its currency is gone) has none.
    async fn pact_carrying(
        &self,
        conn: &mut sqlx::PgConnection,
        c: &Conversation,
    ) -> Result<Option<U256>, RelayError> {
        let agreement = match self.agreement_in(conn, c).await {
            Ok(agreement) => agreement,
            Err(failed @ (RelayError::Store(_) | RelayError::Index(_))) => return Err(failed),
            Err(_) => return Ok(None),
        };
        for pact_id in
            pact_terms::pacts_with_spec(&mut *conn, self.chain_id, c.seeker, agreement.spec_hash).await?
        {
            let pact = pact_terms::pact_terms(&mut *conn, self.chain_id, pact_id).await?;
            if pact.is_some_and(|p| carries_agreement(&p, c, &agreement)) {
                return Ok(Some(pact_id));
            }
        }
        Ok(None)
    }

    /// Records that pact `pact_id` carries the agreed terms of conversation `id`: the pact (as
    /// indexed) must be the seeker's request reserved for the worker (its counterparty) at the
    /// agreed price and deadline, its spec hash the hash of [`terms_document`]. Then links the
    /// two and appends the relay's `contract` message.
    pub async fn link_pact(&self, id: &str, pact_id: U256) -> Result<Accepted, RelayError> {
        if !conversation_id_ok(id) {
            return Err(Malformed::ConversationId.into());
        }
        let mut tx = self.store.pool().begin().await?;
        let record = store::lock(&mut tx, self.chain_id, id)
            .await?
            .ok_or_else(|| Refusal::NotOpened { id: id.to_owned() })?;
        let conversation = record.conversation;
        if conversation.status != Status::Contracted {
            return Err(
                AgreementError::NotContracted { id: id.to_owned(), status: conversation.status }.into()
            );
        }
        if let Some(existing) = record.pact_id {
            return Err(AgreementError::AlreadyLinked { id: id.to_owned(), pact_id: existing }.into());
        }
        let agreement = self.agreement_in(&mut tx, &conversation).await?;
        let pact = pact_terms::pact_terms(&mut *tx, self.chain_id, pact_id)
            .await?
            .ok_or(AgreementError::PactNotIndexed { pact_id })?;
        if !carries_agreement(&pact, &conversation, &agreement) {
            let agreed = Box::new(agreement);
            return Err(AgreementError::NotCarried { pact_id, worker: conversation.worker, agreed }.into());
        }
        let now = self.clock.now();
        store::link(&mut tx, self.chain_id, id, pact_id, &agreement.document, now).await?;
        let spec_hash = agreement.spec_hash;
        let note = ContractNote { pact_id: pact_id.to_string(), spec_hash };
        let envelope = Envelope::new(
            MessageType::Contract,
            Address::ZERO,
            conversation.seeker,
            id,
            now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            serde_json::to_value(&note).unwrap_or_default(),
        );
        // The relay's own message: its digest is the terms' hash under the pact id, unique per pact.
        let digest = keccak256([spec_hash.as_slice(), &pact_id.to_be_bytes::<32>()].concat());
        let seq = store::append(&mut tx, self.chain_id, &envelope, digest, now).await?;
        tx.commit().await?;
        Ok(Accepted {
            conversation_id: id.to_owned(),
            seq,
            status: Status::Contracted,
            expires_at: conversation.expires_at.to_rfc3339(),
        })
    }
}

/// What a contracted conversation's pact carries: the terms document its spec hash commits to,
/// and the agreed price in base units of the escrow's currency of that name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreement {
    /// The protocol, chain, conversation, parties, the accepted terms and the currency they settle
    /// in, as canonical JSON.
    pub document: String,
    /// keccak256 of `document`: the pact's spec hash.
    pub spec_hash: B256,
    /// The price as the conversation agreed it ("5 USDC").
    pub price: Price,
    /// The pact's currency (the zero address for ETH).
    pub currency: Address,
    /// The pact's payment, in base units of `currency`.
    pub payment: U256,
    /// The pact's deadline, in seconds since the epoch.
    pub deadline: u64,
    /// Its stages, each its amount in base units of `currency` and its deadline in seconds since
    /// the epoch; empty for one payment.
    pub stages: Vec<(U256, u64)>,
}

impl Agreement {
    /// `c`'s agreement on chain `chain_id`, its price in `currency`, which has `decimals`
    /// decimals: an error when `c` has no terms, no deadline, or a price finer than `currency`.
    pub fn reached(
        chain_id: u64,
        c: &Conversation,
        currency: Address,
        decimals: u8,
    ) -> Result<Self, AgreementError> {
        let id = || c.id.clone();
        let terms = c.terms.as_ref().ok_or_else(|| AgreementError::NoTerms { id: id() })?;
        let deadline = terms.deadline.ok_or_else(|| AgreementError::NoDeadline { id: id() })?;
        let deadline = u64::try_from(deadline.timestamp())
            .map_err(|_| AgreementError::DeadlineBeforeEpoch { id: id() })?;
        let payment = terms.price.base_units(decimals)?;
        let mut stages = Vec::with_capacity(terms.stages.len());
        let mut staged = Vec::with_capacity(terms.stages.len());
        for s in &terms.stages {
            let amount = s.price.base_units(decimals)?;
            let due = u64::try_from(s.deadline.timestamp())
                .map_err(|_| AgreementError::DeadlineBeforeEpoch { id: id() })?;
            stages.push((amount, due));
            staged.push(json!({ "title": s.title, "price": s.price.to_string(), "amount": amount.to_string(), "deadline": due }));
        }
        let mut document = json!({
            "protocol": PROTOCOL,
            "chainId": chain_id,
            "conversationId": c.id,
            "seeker": c.seeker,
            "worker": c.worker,
            "task": terms.task,
            "requirements": terms.requirements,
            "price": terms.price.to_string(),
            "currency": currency,
            "payment": payment.to_string(),
            "deadline": deadline,
        });
        // One payment's document is the one it always was; stages are in it only when named.
        if !staged.is_empty() {
            document["stages"] = Value::Array(staged);
        }
        let document = canonical_json(&document);
        Ok(Self {
            spec_hash: keccak256(document.as_bytes()),
            document,
            price: terms.price.clone(),
            currency,
            payment,
            deadline,
            stages,
        })
    }
}

/// Why a conversation's agreement cannot be a pact, or why a pact is not it. Each says which of
/// the relay's codes it is: only a pact that does not carry the terms is `PACT_MISMATCH`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgreementError {
    /// The conversation has not agreed (yet), or is over: only CONTRACTED ones become pacts.
    #[error("conversation {id} is {}: only an accepted (CONTRACTED) conversation becomes a pact", status.name())]
    NotContracted {
        /// The conversation.
        id: String,
        /// Where it stands.
        status: Status,
    },
    /// The conversation holds no terms.
    #[error("conversation {id} has no terms")]
    NoTerms {
        /// The conversation.
        id: String,
    },
    /// The agreed terms name no deadline, which a pact needs.
    #[error("conversation {id} agreed no deadline; a pact needs one: propose or counter with one")]
    NoDeadline {
        /// The conversation.
        id: String,
    },
    /// The agreed deadline is before 1970, which no pact can carry.
    #[error("conversation {id} agreed a deadline before 1970")]
    DeadlineBeforeEpoch {
        /// The conversation.
        id: String,
    },
    /// The agreed price cannot be paid in the currency: finer than its decimals, or too large
    /// (the one amount grammar's reason).
    #[error(transparent)]
    Unpayable(#[from] AmountError),
    /// The conversation is a pact already.
    #[error("conversation {id} is already pact #{pact_id}")]
    AlreadyLinked {
        /// The conversation.
        id: String,
        /// Its pact.
        pact_id: U256,
    },
    /// The pact named is not in the index, or not yet.
    #[error("pact #{pact_id} is not in the index (yet): wait for its block")]
    PactNotIndexed {
        /// The pact.
        pact_id: U256,
    },
    /// The pact named does not carry the agreed terms.
    #[error(
        "pact #{pact_id} is not the seeker's request reserved for the worker {worker} with the agreed price ({} = {} base units of {}), deadline and terms hash {}",
        .agreed.price,
        .agreed.payment,
        .agreed.currency,
        .agreed.spec_hash
    )]
    NotCarried {
        /// The pact.
        pact_id: U256,
        /// The worker it must be reserved for.
        worker: Address,
        /// What it must carry.
        agreed: Box<Agreement>,
    },
}

impl AgreementError {
    /// The stable code clients read. A conversation that is over is closed; one not at the point
    /// of a pact (not yet agreed, without terms or deadline, a pact already) refuses the step;
    /// terms holding a value no pact can carry are a bad value, as the relay calls a bad price
    /// in a message; only a pact that is not (or not yet visibly) the agreed one is a mismatch.
    pub const fn code(&self) -> Code {
        match self {
            Self::NotContracted { status: Status::Declined | Status::Abandoned, .. } => {
                Code::ConversationClosed
            }
            Self::NotContracted { .. }
            | Self::NoTerms { .. }
            | Self::NoDeadline { .. }
            | Self::AlreadyLinked { .. } => Code::IllegalTransition,
            Self::DeadlineBeforeEpoch { .. } | Self::Unpayable(_) => Code::BadMessage,
            Self::PactNotIndexed { .. } | Self::NotCarried { .. } => Code::PactMismatch,
        }
    }
}

/// Whether `pact` is the seeker's request reserved for the worker carrying `agreement`.
fn carries_agreement(pact: &PactTerms, c: &Conversation, agreement: &Agreement) -> bool {
    pact.creator == c.seeker
        && pact.initiator == Initiator::Buyer
        && pact.counterparty == Some(c.worker)
        && pact.spec_hash == agreement.spec_hash
        && pact.currency == agreement.currency
        && pact.payment == agreement.payment
        && u64::try_from(pact.deadline).is_ok_and(|d| d == agreement.deadline)
        && pact.stages.len() == agreement.stages.len()
        && pact.stages.iter().zip(&agreement.stages).all(|((amount, due), (agreed, by))| {
            amount == agreed && u64::try_from(*due).is_ok_and(|d| d == *by)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_answered_by_some_refusal() {
        let refusals = [
            RelayError::Malformed(Malformed::Signature),
            RelayError::BadSignature { from: Address::ZERO, chain_id: 1 },
            RelayError::Stale { timestamp: String::new(), now: Utc::now() },
            RelayError::NotRegistered(Address::ZERO),
            RelayError::Replayed,
            RelayError::Refused(Refusal::NotOpened { id: String::new() }),
            RelayError::Refused(Refusal::Closed { id: String::new(), status: Status::Declined }),
            RelayError::Refused(Refusal::Expired { id: String::new(), expired_at: Utc::now() }),
            RelayError::Refused(Refusal::NotParties {
                id: String::new(),
                seeker: Address::ZERO,
                worker: Address::ZERO,
            }),
            RelayError::Refused(Refusal::Illegal { kind: "x", rule: "y" }),
            RelayError::Refused(Refusal::BadValue(String::new())),
            RelayError::Agreement(AgreementError::PactNotIndexed { pact_id: U256::ZERO }),
            RelayError::Full(String::new()),
            RelayError::Store(StoreError::Db(sqlx::Error::RowNotFound)),
        ];
        let codes: std::collections::HashSet<Code> = refusals.iter().map(RelayError::code).collect();
        assert_eq!(codes.len(), Code::ALL.len(), "every code is some refusal's");
    }

    #[test]
    fn only_a_pact_that_is_not_the_agreed_one_is_a_mismatch() {
        let id = || "c1".to_owned();
        let price = Price::parse("5 USDC").expect("a price");
        let cases = [
            (
                AgreementError::NotContracted { id: id(), status: Status::Negotiating },
                Code::IllegalTransition,
            ),
            (AgreementError::NotContracted { id: id(), status: Status::Declined }, Code::ConversationClosed),
            (AgreementError::NotContracted { id: id(), status: Status::Abandoned }, Code::ConversationClosed),
            (AgreementError::NoTerms { id: id() }, Code::IllegalTransition),
            (AgreementError::NoDeadline { id: id() }, Code::IllegalTransition),
            (AgreementError::AlreadyLinked { id: id(), pact_id: U256::from(2) }, Code::IllegalTransition),
            (AgreementError::DeadlineBeforeEpoch { id: id() }, Code::BadMessage),
            (
                AgreementError::Unpayable(money::parse("5.0000001", 6, "USDC").expect_err("7 places")),
                Code::BadMessage,
            ),
            (AgreementError::PactNotIndexed { pact_id: U256::from(3) }, Code::PactMismatch),
            (
                AgreementError::NotCarried {
                    pact_id: U256::from(3),
                    worker: Address::ZERO,
                    agreed: Box::new(Agreement {
                        document: String::new(),
                        spec_hash: B256::ZERO,
                        price,
                        currency: Address::ZERO,
                        payment: U256::from(5_000_000u64),
                        deadline: 0,
                        stages: vec![],
                    }),
                },
                Code::PactMismatch,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(RelayError::from(error.clone()).code(), code, "{error}");
        }
    }

    #[test]
    fn an_agreement_needs_terms_a_deadline_and_a_payable_price() {
        let terms = |deadline: Option<&str>, price: &str| crate::Terms {
            task: "logo".into(),
            requirements: vec![],
            price: Price::parse(price).expect("a price"),
            deadline: deadline.map(|d| d.parse().expect("a date")),
            stages: vec![],
            by: Address::ZERO,
        };
        let mut c = Conversation {
            id: "c1".into(),
            seeker: Address::ZERO,
            worker: Address::ZERO,
            status: Status::Contracted,
            terms: None,
            expires_at: Utc::now(),
            signed: false,
        };
        let reached = |c: &Conversation| Agreement::reached(1, c, Address::ZERO, 6);
        assert!(matches!(reached(&c), Err(AgreementError::NoTerms { .. })));
        c.terms = Some(terms(None, "5 USDC"));
        assert!(matches!(reached(&c), Err(AgreementError::NoDeadline { .. })));
        c.terms = Some(terms(Some("1969-12-31T23:59:59Z"), "5 USDC"));
        assert!(matches!(reached(&c), Err(AgreementError::DeadlineBeforeEpoch { .. })));
        c.terms = Some(terms(Some("2025-01-30T18:00:00Z"), "5.0000001 USDC"));
        assert!(matches!(
            reached(&c),
            Err(AgreementError::Unpayable(AmountError::TooPrecise { places: 7, .. }))
        ));
        c.terms = Some(terms(Some("2025-01-30T18:00:00Z"), "5 USDC"));
        let agreed = reached(&c).expect("agreed");
        assert_eq!((agreed.payment, agreed.deadline), (U256::from(5_000_000u64), 1_738_260_000));
    }
}
