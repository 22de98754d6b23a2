//! What a field costs in the complexity limit ([`super::MAX_COMPLEXITY`]). A column costs 1 and a
//! list its page size times its selection; the fields that read far more than a row cost what
//! they read, so a request cannot hold the database with a thousand aliases of one of them.

/// `stats`: counts and volumes per status and currency, read from the flat counts (a few dozen
/// rows), and the active oracles.
pub const STATS: usize = 50;
/// `totalCount` (or `totalCountExact`): a flat count's few rows, or up to `MAX_COUNTED` pacts
/// counted one by one. Charged once per selection by the admission check (it belongs to a
/// connection, not to each row of its page).
pub const TOTAL_COUNT: usize = 100;
/// `reputation`: an address's counts per role and trusted scores (with a `viewer`, its
/// counterparties' trust as the viewer sees them).
pub const REPUTATION: usize = 50;
/// `basis`: an address's counterparties with their trust (and, for a viewer, the viewer's own
/// endorsements of them), one range scan each.
pub const BASIS: usize = 50;
/// `timeline`: a pact's events, read from the journal.
pub const TIMELINE: usize = 20;
/// `settlements`: a pact's offers to settle and the chain time the indexer saw (two reads).
pub const SETTLEMENTS: usize = 20;
/// `milestones`: a pact's stages (at most 8 rows), or a one-stage pact's payouts.
pub const MILESTONES: usize = 10;
/// A text `search` in a pacts filter, on top of the page.
pub const SEARCH: usize = 100;
/// `volumeOverTime`: the completed pacts of the window, summed per bucket (a covering index),
/// plus each bucket's selection.
pub const HISTORY: usize = 100;
/// `scoreDistribution`: every verified pact's final score (an index-only scan).
pub const SCORES: usize = 100;

/// The weighted fields by name, for a refusal that says what a query spent: (name, cost).
pub const WEIGHTED: [(&str, usize); 10] = [
    ("stats", STATS),
    ("totalCount", TOTAL_COUNT),
    ("totalCountExact", TOTAL_COUNT),
    ("reputation", REPUTATION),
    ("basis", BASIS),
    ("timeline", TIMELINE),
    ("settlements", SETTLEMENTS),
    ("milestones", MILESTONES),
    ("volumeOverTime", HISTORY),
    ("scoreDistribution", SCORES),
];

/// The fields that count pacts, charged [`TOTAL_COUNT`] each by the admission check.
pub const COUNTS: [&str; 2] = ["totalCount", "totalCountExact"];
