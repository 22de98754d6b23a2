//! Pacts: one by id, or filtered, ordered pages with keyset cursors (no OFFSET: a page costs the
//! same on page 1 and page 10,000, and rows added meanwhile neither repeat nor vanish).

use agentpact_contracts::{Ending, Initiator, Outcome, PactStatus, closed_set};
use agentpact_schema::{Cells, ChainText, i64_of};
use alloy::primitives::{Address, B256, U256};
use chrono::{DateTime, Utc};
use sqlx::{Postgres, QueryBuilder};

use super::{Currency, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, ReadError, Reader, cursor::Cursor};

/// A pact as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pact {
    /// The chain it lives on.
    pub chain_id: u64,
    /// Its id in the contract.
    pub id: U256,
    /// Who created it.
    pub initiator: Initiator,
    /// Where it stands.
    pub status: PactStatus,
    /// The account that created it.
    pub creator: Address,
    /// The buyer, once known.
    pub buyer: Option<Address>,
    /// The seller, once known.
    pub seller: Option<Address>,
    /// Who settles disputes.
    pub arbitrator: Address,
    /// The only address that may accept it, when the terms name one.
    pub counterparty: Option<Address>,
    /// Hash of the work specification.
    pub spec_hash: B256,
    /// Where the specification lives: the exact bytes the chain emitted, and the form they are
    /// shown in (docs/indexer.md §Text the chain emits).
    pub spec_uri: ChainText,
    /// When the work is due.
    pub deadline: DateTime<Utc>,
    /// The last moment it can be accepted.
    pub accept_by: DateTime<Utc>,
    /// Seconds the buyer has to review verified work.
    pub review_period: u64,
    /// The weighted oracle score (0-100) that passes verification.
    pub threshold: u8,
    /// The price, in base units of `currency`.
    pub payment: U256,
    /// What payment and stakes are in.
    pub currency: Currency,
    /// The buyer's stake, in base units of `currency`.
    pub buyer_stake: U256,
    /// The seller's stake, in base units of `currency`.
    pub seller_stake: U256,
    /// Hash of the delivered work, once submitted.
    pub proof_hash: Option<B256>,
    /// How many oracles have scored.
    pub score_count: u16,
    /// The weighted score, once verification finished.
    pub final_score: Option<u8>,
    /// When it was created, accepted, submitted, verified, disputed and closed.
    pub created_at: DateTime<Utc>,
    /// See `created_at`.
    pub accepted_at: Option<DateTime<Utc>>,
    /// See `created_at`.
    pub submitted_at: Option<DateTime<Utc>>,
    /// See `created_at`.
    pub verified_at: Option<DateTime<Utc>>,
    /// See `created_at`.
    pub disputed_at: Option<DateTime<Utc>>,
    /// See `created_at`.
    pub closed_at: Option<DateTime<Utc>>,
    /// How a finished pact ended (docs/api.md §Outcomes).
    pub outcome: Option<Outcome>,
    /// How it ended, as the contract's `PactEnded` said (LIVE until then; docs/contracts.md
    /// §Endings).
    pub ending: Ending,
    /// Basis points to the seller when a ruling or a settlement ended it.
    pub seller_share: Option<u16>,
    /// The block that created it.
    pub created_block: u64,
    /// The block of its last change.
    pub updated_block: u64,
    /// Its oracles in order, with weights.
    pub oracles: Vec<PactOracle>,
}

/// One oracle named by a pact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PactOracle {
    /// The oracle.
    pub address: Address,
    /// Its weight, in percent.
    pub weight: u8,
}

/// Which pacts to list. Every field narrows the list; an empty filter lists all of a chain.
#[derive(Debug, Clone, Default)]
pub struct PactFilter {
    /// Any of these statuses (none: any status).
    pub statuses: Vec<PactStatus>,
    /// This buyer.
    pub buyer: Option<Address>,
    /// This seller.
    pub seller: Option<Address>,
    /// This account in any role: creator, buyer, seller, arbitrator or oracle.
    pub party: Option<Address>,
    /// Naming this oracle.
    pub oracle: Option<Address>,
    /// Created by this side.
    pub initiator: Option<Initiator>,
    /// Paid in this currency (zero: ETH).
    pub currency: Option<Address>,
    /// Payment at least this (base units of the pact's currency).
    pub min_payment: Option<U256>,
    /// Payment at most this (base units of the pact's currency).
    pub max_payment: Option<U256>,
    /// Deadline at or after.
    pub deadline_from: Option<DateTime<Utc>>,
    /// Deadline at or before.
    pub deadline_to: Option<DateTime<Utc>>,
    /// Created at or after.
    pub created_from: Option<DateTime<Utc>>,
    /// Created at or before.
    pub created_to: Option<DateTime<Utc>>,
    /// Words that must all appear in the spec URI (full-text, case-insensitive).
    pub search: Option<String>,
}

closed_set! {
    /// The field a page is sorted by; the pact id breaks ties. Named as in cursors and GraphQL.
    #[derive(Default)]
    pub enum PactOrderField {
        /// Creation order (the pact id).
        #[default]
        Created => "CREATED",
        /// The payment.
        Payment => "PAYMENT",
        /// The deadline.
        Deadline => "DEADLINE",
        /// The block of the last change.
        Updated => "UPDATED",
    }
}

impl PactOrderField {
    /// The column sorted by (qualified: the select list shows some columns as text under the
    /// same names), and the SQL around a cursor's key (text) that makes it comparable.
    const fn sql(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::Created => ("pacts.pact_id", "", "::numeric"),
            Self::Payment => ("pacts.payment", "", "::numeric"),
            Self::Deadline => ("pacts.deadline", "to_timestamp(", "::bigint)"),
            Self::Updated => ("pacts.updated_block", "", "::bigint"),
        }
    }

    /// The cursor key of `pact` under this ordering.
    fn key_of(self, pact: &Pact) -> String {
        match self {
            Self::Created => String::new(),
            Self::Payment => pact.payment.to_string(),
            Self::Deadline => pact.deadline.timestamp().to_string(),
            Self::Updated => pact.updated_block.to_string(),
        }
    }
}

agentpact_contracts::closed_set! {
    /// Ascending or descending.
    #[derive(Default)]
    pub enum SortDirection {
        /// Smallest (oldest) first.
        Asc => "asc",
        /// Largest (newest) first.
        #[default]
        Desc => "desc",
    }
}

/// How a list is sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PactOrder {
    /// The field.
    pub field: PactOrderField,
    /// The direction.
    pub direction: SortDirection,
}

/// A Relay-style page request: `first` items after a cursor, or `last` items before one.
#[derive(Debug, Clone, Default)]
pub struct PageRequest {
    /// How many from the start (after `after`).
    pub first: Option<u32>,
    /// Start after this cursor.
    pub after: Option<String>,
    /// How many from the end (before `before`).
    pub last: Option<u32>,
    /// End before this cursor.
    pub before: Option<String>,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items with their cursors, in list order.
    pub items: Vec<(String, T)>,
    /// More items follow the last one.
    pub has_next_page: bool,
    /// More items precede the first one.
    pub has_previous_page: bool,
}

/// Columns of a pact row, with NUMERIC as text so any uint256 survives, and the pact's oracles as
/// two arrays (one round trip per page, not two).
const COLUMNS: &str = "chain_id, pact_id::text AS pact_id, initiator, status, creator, buyer, seller, arbitrator, \
    counterparty, spec_hash, spec_uri, spec_uri_bytes, deadline, accept_by, review_period, threshold, payment::text AS payment, \
    currency, (SELECT c.symbol FROM currencies c WHERE c.chain_id = pacts.chain_id AND c.address = pacts.currency) \
    AS currency_symbol, (SELECT c.decimals FROM currencies c WHERE c.chain_id = pacts.chain_id \
    AND c.address = pacts.currency) AS currency_decimals, \
    buyer_stake::text AS buyer_stake, seller_stake::text AS seller_stake, proof_hash, score_count, final_score, \
    created_at, accepted_at, submitted_at, verified_at, disputed_at, closed_at, outcome, ending, seller_share, created_block, updated_block, \
    ARRAY(SELECT o.oracle FROM pact_oracles o WHERE o.chain_id = pacts.chain_id AND o.pact_id = pacts.pact_id \
          ORDER BY o.position) AS oracle_addresses, \
    ARRAY(SELECT o.weight FROM pact_oracles o WHERE o.chain_id = pacts.chain_id AND o.pact_id = pacts.pact_id \
          ORDER BY o.position) AS oracle_weights";

#[derive(sqlx::FromRow)]
struct PactRow {
    chain_id: i64,
    pact_id: String,
    initiator: i16,
    status: i16,
    creator: Vec<u8>,
    buyer: Option<Vec<u8>>,
    seller: Option<Vec<u8>>,
    arbitrator: Vec<u8>,
    counterparty: Option<Vec<u8>>,
    spec_hash: Vec<u8>,
    spec_uri: String,
    spec_uri_bytes: Option<Vec<u8>>,
    deadline: DateTime<Utc>,
    accept_by: DateTime<Utc>,
    review_period: i64,
    threshold: i16,
    payment: String,
    currency: Vec<u8>,
    currency_symbol: Option<String>,
    currency_decimals: Option<i16>,
    buyer_stake: String,
    seller_stake: String,
    proof_hash: Option<Vec<u8>>,
    score_count: i16,
    final_score: Option<i16>,
    created_at: DateTime<Utc>,
    accepted_at: Option<DateTime<Utc>>,
    submitted_at: Option<DateTime<Utc>>,
    verified_at: Option<DateTime<Utc>>,
    disputed_at: Option<DateTime<Utc>>,
    closed_at: Option<DateTime<Utc>>,
    outcome: Option<String>,
    ending: i16,
    seller_share: Option<i32>,
    created_block: i64,
    updated_block: i64,
    oracle_addresses: Vec<Vec<u8>>,
    oracle_weights: Vec<i16>,
}

impl TryFrom<PactRow> for Pact {
    type Error = ReadError;

    /// Fails naming the pact and the column when a value does not convert: a corrupt row is an
    /// error, never a default.
    fn try_from(r: PactRow) -> Result<Self, ReadError> {
        let row = Cells { table: "pacts", key: format!("chain {} pact {}", r.chain_id, r.pact_id) };
        let optional_address =
            |column, bytes: &Option<Vec<u8>>| bytes.as_deref().map(|b| row.address(column, b)).transpose();
        Ok(Self {
            chain_id: row.int("chain_id", r.chain_id)?,
            id: row.u256("pact_id", &r.pact_id)?,
            initiator: row.code("initiator", r.initiator)?,
            status: row.code("status", r.status)?,
            creator: row.address("creator", &r.creator)?,
            buyer: optional_address("buyer", &r.buyer)?,
            seller: optional_address("seller", &r.seller)?,
            arbitrator: row.address("arbitrator", &r.arbitrator)?,
            counterparty: optional_address("counterparty", &r.counterparty)?,
            spec_hash: row.hash("spec_hash", &r.spec_hash)?,
            spec_uri: ChainText::stored(r.spec_uri, r.spec_uri_bytes),
            deadline: r.deadline,
            accept_by: r.accept_by,
            review_period: row.int("review_period", r.review_period)?,
            threshold: row.int("threshold", r.threshold)?,
            payment: row.u256("payment", &r.payment)?,
            currency: super::currencies::currency_of(
                &row,
                "currency",
                &r.currency,
                r.currency_symbol,
                r.currency_decimals,
            )?,
            buyer_stake: row.u256("buyer_stake", &r.buyer_stake)?,
            seller_stake: row.u256("seller_stake", &r.seller_stake)?,
            proof_hash: r.proof_hash.as_deref().map(|b| row.hash("proof_hash", b)).transpose()?,
            score_count: row.int("score_count", r.score_count)?,
            final_score: r.final_score.map(|n| row.int("final_score", n)).transpose()?,
            created_at: r.created_at,
            accepted_at: r.accepted_at,
            submitted_at: r.submitted_at,
            verified_at: r.verified_at,
            disputed_at: r.disputed_at,
            closed_at: r.closed_at,
            outcome: r.outcome.as_deref().map(|o| row.named("outcome", o, Outcome::from_name)).transpose()?,
            ending: row.code("ending", r.ending)?,
            seller_share: r.seller_share.map(|n| row.int("seller_share", n)).transpose()?,
            created_block: row.int("created_block", r.created_block)?,
            updated_block: row.int("updated_block", r.updated_block)?,
            oracles: r
                .oracle_addresses
                .iter()
                .zip(&r.oracle_weights)
                .map(|(a, &w)| {
                    Ok(PactOracle {
                        address: row.address("pact_oracles.oracle", a)?,
                        weight: row.int("pact_oracles.weight", w)?,
                    })
                })
                .collect::<Result<_, ReadError>>()?,
        })
    }
}

impl Reader {
    /// The pact `id` on `chain_id`, if the index has it.
    pub async fn pact(&self, chain_id: u64, id: U256) -> Result<Option<Pact>, ReadError> {
        let mut q = select(chain_id);
        q.push(" AND pact_id = ").push_bind(id.to_string()).push("::numeric");
        let row: Option<PactRow> = q.build_query_as().fetch_optional(self.pool()).await?;
        row.map(Pact::try_from).transpose()
    }

    /// One page of the pacts of `chain_id` that pass `filter`, sorted by `order`.
    pub async fn pacts(
        &self,
        chain_id: u64,
        filter: &PactFilter,
        order: PactOrder,
        page: &PageRequest,
    ) -> Result<Page<Pact>, ReadError> {
        let plan = Plan::new(order, page)?;
        let mut q = select(chain_id);
        push_filter(&mut q, filter)?;
        for (cursor, towards_end) in [(&plan.after, true), (&plan.before, false)] {
            if let Some(cursor) = cursor {
                push_bound(&mut q, order, cursor, towards_end);
            }
        }
        let (key, ..) = order.field.sql();
        let dir = if plan.scans_ascending() { "ASC" } else { "DESC" };
        q.push(format_args!(" ORDER BY {key} {dir}, pacts.pact_id {dir} LIMIT "))
            .push_bind(i64::from(plan.size) + 1);
        let rows: Vec<PactRow> = q.build_query_as().fetch_all(self.pool()).await?;
        let more = rows.len() > plan.size as usize;
        let mut pacts: Vec<Pact> =
            rows.into_iter().take(plan.size as usize).map(Pact::try_from).collect::<Result<_, _>>()?;
        if plan.backward {
            pacts.reverse();
        }
        let items = pacts
            .into_iter()
            .map(|p| {
                let cursor = Cursor { field: order.field, key: order.field.key_of(&p), id: p.id };
                (cursor.encode(), p)
            })
            .collect();
        let (has_next_page, has_previous_page) =
            if plan.backward { (plan.before.is_some(), more) } else { (more, plan.after.is_some()) };
        Ok(Page { items, has_next_page, has_previous_page })
    }
}

/// A checked page request: its size, its cursors and which way it scans.
struct Plan {
    size: u32,
    backward: bool,
    after: Option<Cursor>,
    before: Option<Cursor>,
    ascending: bool,
}

impl Plan {
    fn new(order: PactOrder, page: &PageRequest) -> Result<Self, ReadError> {
        let (size, backward) = match (page.first, page.last) {
            (Some(_), Some(_)) => {
                return Err(ReadError::BadArgument(
                    "pass `first` (to page forward) or `last` (to page backward), not both".into(),
                ));
            }
            (Some(n), None) => (n, false),
            (None, Some(n)) => (n, true),
            (None, None) => (DEFAULT_PAGE_SIZE, page.before.is_some() && page.after.is_none()),
        };
        if size > MAX_PAGE_SIZE {
            return Err(ReadError::PageTooLarge { max: MAX_PAGE_SIZE, asked: size });
        }
        let decode = |c: &Option<String>| c.as_deref().map(|c| Cursor::decode(c, order.field)).transpose();
        Ok(Self {
            size,
            backward,
            after: decode(&page.after)?,
            before: decode(&page.before)?,
            ascending: order.direction == SortDirection::Asc,
        })
    }

    /// Whether the SQL scan runs in ascending key order (a backward page scans against the order).
    const fn scans_ascending(&self) -> bool {
        self.ascending != self.backward
    }
}

fn select(chain_id: u64) -> QueryBuilder<Postgres> {
    let mut q = QueryBuilder::new(format!("SELECT {COLUMNS} FROM pacts WHERE chain_id = "));
    q.push_bind(i64_of(chain_id));
    q
}

/// Keeps the rows after `cursor` in list order (`towards_end`), or before it.
fn push_bound(q: &mut QueryBuilder<Postgres>, order: PactOrder, cursor: &Cursor, towards_end: bool) {
    let ascending = order.direction == SortDirection::Asc;
    let op = if ascending == towards_end { ">" } else { "<" };
    let (key, open, close) = order.field.sql();
    if order.field == PactOrderField::Created {
        q.push(format_args!(" AND pacts.pact_id {op} ")).push_bind(cursor.id.to_string()).push("::numeric");
    } else {
        q.push(format_args!(" AND ({key}, pacts.pact_id) {op} ({open}"));
        q.push_bind(cursor.key.clone()).push(format_args!("{close}, "));
        q.push_bind(cursor.id.to_string()).push("::numeric)");
    }
}

/// The longest `search` accepted, in characters: a few words of a spec URI, not a document.
pub const MAX_SEARCH_CHARS: usize = 200;

pub(super) fn push_filter(q: &mut QueryBuilder<Postgres>, f: &PactFilter) -> Result<(), ReadError> {
    if !f.statuses.is_empty() {
        let codes: Vec<i16> = f.statuses.iter().map(|s| i16::from(s.code())).collect();
        q.push(" AND status = ANY(").push_bind(codes).push(")");
    }
    for (column, value) in [("buyer", f.buyer), ("seller", f.seller), ("currency", f.currency)] {
        if let Some(a) = value {
            q.push(format_args!(" AND {column} = ")).push_bind(a.to_vec());
        }
    }
    if let Some(a) = f.party {
        let a = a.to_vec();
        q.push(" AND (creator = ").push_bind(a.clone());
        q.push(" OR buyer = ").push_bind(a.clone());
        q.push(" OR seller = ").push_bind(a.clone());
        q.push(" OR arbitrator = ").push_bind(a.clone());
        q.push(" OR pact_id IN (SELECT pact_id FROM pact_oracles o WHERE o.chain_id = pacts.chain_id AND o.oracle = ")
            .push_bind(a)
            .push("))");
    }
    if let Some(a) = f.oracle {
        q.push(" AND pact_id IN (SELECT pact_id FROM pact_oracles o WHERE o.chain_id = pacts.chain_id AND o.oracle = ")
            .push_bind(a.to_vec())
            .push(")");
    }
    if let Some(i) = f.initiator {
        q.push(" AND initiator = ").push_bind(i16::from(i.code()));
    }
    for (op, value) in [(">=", f.min_payment), ("<=", f.max_payment)] {
        if let Some(v) = value {
            q.push(format_args!(" AND payment {op} ")).push_bind(v.to_string()).push("::numeric");
        }
    }
    for (column, op, value) in [
        ("deadline", ">=", f.deadline_from),
        ("deadline", "<=", f.deadline_to),
        ("created_at", ">=", f.created_from),
        ("created_at", "<=", f.created_to),
    ] {
        if let Some(t) = value {
            q.push(format_args!(" AND {column} {op} ")).push_bind(t);
        }
    }
    if let Some(words) = f.search.as_deref().map(str::trim).filter(|w| !w.is_empty()) {
        if words.chars().count() > MAX_SEARCH_CHARS {
            return Err(ReadError::BadArgument(format!(
                "search is a few words of at most {MAX_SEARCH_CHARS} characters in all"
            )));
        }
        // The same word split as the indexed column (migrations/0002): "logo-design" finds both words.
        q.push(" AND spec_search @@ plainto_tsquery('simple', regexp_replace(")
            .push_bind(words.to_owned())
            .push(", '[^[:alnum:]]+', ' ', 'g'))");
    }
    Ok(())
}
