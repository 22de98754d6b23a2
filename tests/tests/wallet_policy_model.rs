//! The wallet policy (#59, docs/mcp.md §Policy) against a model of it written from the docs, not
//! from `mcp/src/policy/rules.rs`:
//! - pure: random policies (0-3 budgets in ETH or USDC over 10s to 1d, refusing or asking; 0-2
//!   calls rules with or without a tool; 0-2 per-call caps; allow and deny lists; each first-time
//!   mode; budgets per counterparty; an expiry) and random calls (a tool, a currency, amounts of 0,
//!   1 base unit, exactly what a rule leaves and one unit more; counterparties from a small set or
//!   nobody; the clock moved by random steps, often to exactly where an earlier spend leaves a
//!   window; bare sends; a human's yes to some holds) fed to `rules::decide` with the usage the
//!   test keeps. After each step: the same allow / hold / refuse as the model, a refusal naming the
//!   model's rule in the documented sentence, the hold's reasons, and inside the window ending now
//!   no budget, budget per counterparty or calls rule past its max (a budget with over = "ask"
//!   excuses only the spends a human said yes to while they passed it).
//! - against Postgres and the real `Guard`, two guards on two pools as two processes: parallel
//!   bursts admit exactly what the budget holds (equal amounts) and never pass a budget, a budget
//!   per counterparty or a list (random amounts; every decision in the ledger replayed through the
//!   model), the ledger is one signed hash chain, the kill switch flipped mid-burst stops every send
//!   after it returns, and a released spend stops counting.
//!
//! A window is the `per` ending now, open at its start: a spend made exactly `per` ago no longer
//! counts (the docs say "rolling period" and leave the edge to the code; the model takes the
//! code's edge and then checks every window of that shape).
//!
//! The seed is printed; rerun one with `AGENTPACT_SEED=<seed>`.

use std::{
    collections::{BTreeMap, HashSet},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::Duration,
};

use agentpact_contracts::money::Currency;
use agentpact_mcp::{
    outcome::ToolError,
    policy::{
        Guard, rules,
        rules::{Attempt, Frozen, Policy, Spent, Usage, Verdict},
        store, tool_names,
    },
};
use agentpact_tests::{HarnessError, postgres::TestDatabase};
use alloy::{
    hex,
    primitives::{Address, B256, Signature, U256, address, keccak256},
    signers::local::PrivateKeySigner,
};
use chrono::{DateTime, TimeDelta, Utc};
use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};
use serde_json::{Value, json};
use sqlx::{PgPool, postgres::PgPoolOptions};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn failed(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// Random policies the pure test tries, each with [`STEPS`] steps.
const CASES: usize = 400;
const STEPS: usize = 60;
const CHAIN: u64 = 84532;
const DAY: u64 = 86_400;
/// The tools the calls use (the rules compare `create_pact` and `create-pact` as one).
const TOOLS: [&str; 3] = ["create-pact", "accept-pact", "propose-settlement"];
/// The counterparties: `A`..`D` and `E`.
const PARTIES: [Address; 5] = [
    address!("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"),
    address!("0x90F79bf6EB2c4f870365E785982E1f101E93b906"),
    address!("0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65"),
    address!("0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"),
    address!("0x976EA74026E726554dB657fA54763abd0C3a0aa9"),
];
/// Base Sepolia's USDC.
const USDC: Address = address!("0x036CbD53842c5426634e7929541eC2318f3dCF7e");

/// The master seed: `AGENTPACT_SEED`, or a fresh one.
fn seed() -> Result<u64> {
    match std::env::var("AGENTPACT_SEED") {
        Ok(seed) => seed.parse().map_err(|_| failed(format!("AGENTPACT_SEED={seed} is not a u64"))),
        Err(_) => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(59)),
    }
}

// ---------------------------------------------------------------------------------------------
// The model, from docs/mcp.md §Policy.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cur {
    Eth,
    Usdc,
}

impl Cur {
    const fn symbol(self) -> &'static str {
        match self {
            Self::Eth => "ETH",
            Self::Usdc => "USDC",
        }
    }

    const fn decimals(self) -> u32 {
        match self {
            Self::Eth => 18,
            Self::Usdc => 6,
        }
    }

    const fn address(self) -> Address {
        match self {
            Self::Eth => Address::ZERO,
            Self::Usdc => USDC,
        }
    }

    fn currency(self) -> Currency {
        Currency { address: self.address(), symbol: self.symbol().into(), decimals: self.decimals() as u8 }
    }

    /// The granularity of the random amounts: 0.001 ETH, 0.01 USDC.
    const fn step(self) -> u128 {
        match self {
            Self::Eth => 1_000_000_000_000_000,
            Self::Usdc => 10_000,
        }
    }

    fn of_symbol(symbol: &str) -> Option<Self> {
        match symbol {
            "ETH" => Some(Self::Eth),
            "USDC" => Some(Self::Usdc),
            _ => None,
        }
    }

    /// As a policy file may name it: the symbol in any case, or the token's address.
    fn spelled(self, r: &mut StdRng) -> String {
        match (self, r.random_range(0..4)) {
            (_, 0) => self.symbol().to_ascii_lowercase(),
            (Self::Usdc, 1) => USDC.to_string(),
            _ => self.symbol().to_owned(),
        }
    }

    fn random(r: &mut StdRng) -> Self {
        if r.random_bool(0.5) { Self::Eth } else { Self::Usdc }
    }
}

/// `units` written as the docs write amounts: "0.5 ETH", "10 USDC", "0 ETH".
fn show(units: u128, cur: Cur) -> String {
    let scale = 10u128.pow(cur.decimals());
    let (whole, fraction) = (units / scale, units % scale);
    if fraction == 0 {
        format!("{whole} {}", cur.symbol())
    } else {
        let digits = format!("{fraction:0width$}", width = cur.decimals() as usize);
        format!("{whole}.{} {}", digits.trim_end_matches('0'), cur.symbol())
    }
}

/// `units` as a policy file may write the amount: "0.5", "0.50", "10.0".
fn amount_text(units: u128, cur: Cur, r: &mut StdRng) -> String {
    let shown = show(units, cur);
    let number = shown.split(' ').next().unwrap_or("0").to_owned();
    match r.random_range(0..4) {
        0 if number.contains('.') => format!("{number}0"),
        1 if !number.contains('.') => format!("{number}.0"),
        _ => number,
    }
}

/// A period as the rules name it: a number and the largest of d, h, m, s that divides it.
fn period_name(seconds: u64) -> String {
    if seconds.is_multiple_of(DAY) {
        format!("{}d", seconds / DAY)
    } else if seconds.is_multiple_of(3_600) {
        format!("{}h", seconds / 3_600)
    } else if seconds.is_multiple_of(60) {
        format!("{}m", seconds / 60)
    } else {
        format!("{seconds}s")
    }
}

/// A period as a policy file may write it: its name, or in a smaller unit ("60m" for "1h").
fn period_text(seconds: u64, r: &mut StdRng) -> String {
    match r.random_range(0..4) {
        0 => format!("{seconds}s"),
        1 if seconds.is_multiple_of(60) => format!("{}m", seconds / 60),
        _ => period_name(seconds),
    }
}

fn random_period(r: &mut StdRng) -> u64 {
    match r.random_range(0..6) {
        0 => r.random_range(10..60),
        1 => 60 * r.random_range(1..60),
        2 => 3_600 * r.random_range(1..24),
        3 => DAY,
        _ => *[10, 30, 60, 90, 600, 3_600].choose(r).unwrap_or(&60),
    }
}

/// A tool as a policy or a call may spell it.
fn spelled_tool(tool: &str, r: &mut StdRng) -> String {
    if r.random_bool(0.5) { tool.replace('-', "_") } else { tool.to_owned() }
}

/// The docs' one spelling of a tool: `create_pact` and `create-pact` are one.
fn tool_of(spelled: &str) -> String {
    spelled.trim().to_ascii_lowercase().replace('_', "-")
}

#[derive(Debug, Clone)]
struct MBudget {
    cur: Cur,
    per: u64,
    max: u128,
    ask: bool,
}

#[derive(Debug, Clone)]
struct MCalls {
    per: u64,
    max: u32,
    tool: Option<&'static str>,
}

#[derive(Debug, Clone)]
struct MPerCall {
    tool: Option<&'static str>,
    cur: Cur,
    max: u128,
}

#[derive(Debug, Clone)]
struct MPartyBudget {
    cur: Cur,
    per: u64,
    max: u128,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MFirst {
    Ask,
    Allow,
    Refuse,
}

/// A policy as the model reads it.
#[derive(Debug, Clone)]
struct MPolicy {
    wallet: Address,
    budgets: Vec<MBudget>,
    calls: Vec<MCalls>,
    per_call: Vec<MPerCall>,
    allow: Option<Vec<Address>>,
    deny: Vec<Address>,
    first: MFirst,
    party_budgets: Vec<MPartyBudget>,
    expires: Option<DateTime<Utc>>,
}

impl MPolicy {
    fn empty(wallet: Address) -> Self {
        Self {
            wallet,
            budgets: Vec::new(),
            calls: Vec::new(),
            per_call: Vec::new(),
            allow: None,
            deny: Vec::new(),
            first: MFirst::Ask,
            party_budgets: Vec::new(),
            expires: None,
        }
    }

    fn random(r: &mut StdRng, wallet: Address, start: DateTime<Utc>) -> Self {
        let mut p = Self::empty(wallet);
        for _ in 0..r.random_range(0..=3) {
            let cur = Cur::random(r);
            let max = cur.step() * r.random_range(0..=30);
            p.budgets.push(MBudget { cur, per: random_period(r), max, ask: r.random_bool(0.3) });
        }
        for _ in 0..r.random_range(0..=2) {
            let tool = r.random_bool(0.5).then(|| *TOOLS.choose(r).unwrap_or(&TOOLS[0]));
            p.calls.push(MCalls { per: random_period(r), max: r.random_range(0..=8), tool });
        }
        for _ in 0..r.random_range(0..=2) {
            let cur = Cur::random(r);
            let tool = r.random_bool(0.5).then(|| *TOOLS.choose(r).unwrap_or(&TOOLS[0]));
            p.per_call.push(MPerCall { tool, cur, max: cur.step() * r.random_range(1..=20) });
        }
        if r.random_bool(0.3) {
            let allow: Vec<Address> = PARTIES.iter().filter(|_| r.random_bool(0.5)).copied().collect();
            p.allow = Some(if allow.is_empty() { vec![PARTIES[0]] } else { allow });
        }
        let allowed = p.allow.clone().unwrap_or_default();
        p.deny = PARTIES.iter().filter(|a| !allowed.contains(a) && r.random_bool(0.2)).copied().collect();
        p.first = *[MFirst::Ask, MFirst::Allow, MFirst::Refuse].choose(r).unwrap_or(&MFirst::Ask);
        for _ in 0..r.random_range(0..=2) {
            let cur = Cur::random(r);
            p.party_budgets.push(MPartyBudget {
                cur,
                per: random_period(r),
                max: cur.step() * r.random_range(1..=15),
            });
        }
        if r.random_bool(0.25) {
            p.expires = Some(start + TimeDelta::seconds(r.random_range(30..3 * DAY as i64)));
        }
        p
    }

    /// The policy file (as JSON, the form it is stored in), spelled at random the ways the docs
    /// allow.
    fn file(&self, r: &mut StdRng) -> Value {
        let mut file = json!({ "wallet": self.wallet.to_string(), "chain_id": CHAIN });
        if let Some(at) = self.expires {
            file["expires_at"] = json!(at.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        }
        file["budget"] = self
            .budgets
            .iter()
            .map(|b| {
                let mut rule = json!({
                    "currency": b.cur.spelled(r),
                    "per": period_text(b.per, r),
                    "max": amount_text(b.max, b.cur, r),
                });
                if b.ask {
                    rule["over"] = json!("ask");
                } else if r.random_bool(0.5) {
                    rule["over"] = json!("refuse");
                }
                rule
            })
            .collect();
        file["calls"] = self
            .calls
            .iter()
            .map(|c| {
                let mut rule = json!({ "per": period_text(c.per, r), "max": c.max });
                if let Some(tool) = c.tool {
                    rule["tool"] = json!(spelled_tool(tool, r));
                }
                rule
            })
            .collect();
        file["per_call"] = self
            .per_call
            .iter()
            .map(|c| {
                let mut rule = json!({ "currency": c.cur.spelled(r), "max": amount_text(c.max, c.cur, r) });
                if let Some(tool) = c.tool {
                    rule["tool"] = json!(spelled_tool(tool, r));
                }
                rule
            })
            .collect();
        let mut parties = json!({
            "deny": self.deny.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            "budget": self.party_budgets.iter().map(|b| json!({
                "currency": b.cur.spelled(r),
                "per": period_text(b.per, r),
                "max": amount_text(b.max, b.cur, r),
            })).collect::<Vec<_>>(),
        });
        if let Some(allow) = &self.allow {
            parties["allow"] = json!(allow.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        }
        match self.first {
            MFirst::Ask if r.random_bool(0.5) => {}
            MFirst::Ask => parties["first_time"] = json!("ask"),
            MFirst::Allow => parties["first_time"] = json!("allow"),
            MFirst::Refuse => parties["first_time"] = json!("refuse"),
        }
        file["counterparties"] = parties;
        file
    }

    /// The policy as the server reads it: the file parsed and checked as `agentpact wallet policy
    /// set` checks it.
    fn policy(&self, r: &mut StdRng) -> std::result::Result<Policy, String> {
        let file = self.file(r);
        let policy: Policy = serde_json::from_value(file.clone())
            .map_err(|e| format!("the policy {file} does not read: {e}"))?;
        policy.check(&tool_names()).map_err(|e| format!("the policy {file} is refused: {e}"))?;
        Ok(policy)
    }

    fn longest_period(&self) -> u64 {
        let budgets = self.budgets.iter().map(|b| b.per);
        let calls = self.calls.iter().map(|c| c.per);
        let parties = self.party_budgets.iter().map(|b| b.per);
        budgets.chain(calls).chain(parties).max().unwrap_or(60)
    }

    fn periods(&self) -> Vec<u64> {
        let budgets = self.budgets.iter().map(|b| b.per);
        let calls = self.calls.iter().map(|c| c.per);
        let parties = self.party_budgets.iter().map(|b| b.per);
        budgets.chain(calls).chain(parties).collect()
    }

    fn budget_name(b: &MBudget) -> String {
        format!("the {} budget per {} ({})", b.cur.symbol(), period_name(b.per), show(b.max, b.cur))
    }

    fn calls_name(c: &MCalls) -> String {
        let of = c.tool.map_or_else(String::new, |t| format!("{t} "));
        format!("{of}calls per {} ({})", period_name(c.per), c.max)
    }

    fn per_call_name(c: &MPerCall) -> String {
        let of = c.tool.map_or_else(String::new, |t| format!(" of {t}"));
        format!("the per-call cap{of} ({})", show(c.max, c.cur))
    }

    fn party_budget_name(b: &MPartyBudget) -> String {
        format!("the budget per counterparty ({} per {})", show(b.max, b.cur), period_name(b.per))
    }
}

/// One counted spend.
#[derive(Debug, Clone)]
struct MSpend {
    at: DateTime<Utc>,
    cur: Cur,
    amount: u128,
    to: Option<Address>,
    /// The budgets (by index) a human's yes let this spend pass.
    excused: Vec<usize>,
}

/// What the wallet did, as the model keeps it.
#[derive(Debug, Default)]
struct MState {
    spends: Vec<MSpend>,
    sends: Vec<(DateTime<Utc>, String)>,
    paid: HashSet<Address>,
}

/// Whether `at` is in the `per` seconds ending at `now` (open at its start).
fn within(at: DateTime<Utc>, now: DateTime<Utc>, per: u64) -> bool {
    at > now - TimeDelta::seconds(per as i64) && at <= now
}

impl MState {
    /// Spent of `cur` in the window (to `to` only, when given).
    fn spent(&self, now: DateTime<Utc>, per: u64, cur: Cur, to: Option<Address>) -> u128 {
        self.spends
            .iter()
            .filter(|s| s.cur == cur && within(s.at, now, per) && (to.is_none() || s.to == to))
            .map(|s| s.amount)
            .sum()
    }

    fn sent(&self, now: DateTime<Utc>, per: u64, tool: Option<&str>) -> u32 {
        self.sends.iter().filter(|(at, t)| within(*at, now, per) && tool.is_none_or(|tool| tool == t)).count()
            as u32
    }

    /// The usage the server would read for a call to `to`.
    fn usage(&self, to: Option<Address>) -> Usage {
        Usage {
            spends: self
                .spends
                .iter()
                .map(|s| Spent {
                    at: s.at,
                    currency: s.cur.address(),
                    amount: U256::from(s.amount),
                    counterparty: s.to,
                })
                .collect(),
            sends: self.sends.clone(),
            known_counterparty: to.is_some_and(|to| self.paid.contains(&to)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum MVerdict {
    Allow,
    /// The reasons the page gives (a first payment to nobody named is `anyone`), and the budgets
    /// a yes lets this call pass.
    Hold {
        reasons: Vec<String>,
        anyone: bool,
        over: Vec<usize>,
    },
    /// The rule, and what the sentence must say beside it.
    Refuse {
        rule: String,
        says: String,
    },
}

/// The calls rule a transaction of `tool` at `now` would pass, if any.
fn model_calls(p: &MPolicy, s: &MState, tool: &str, now: DateTime<Utc>) -> Option<String> {
    p.calls
        .iter()
        .find(|c| c.tool.is_none_or(|t| t == tool) && s.sent(now, c.per, c.tool) >= c.max)
        .map(MPolicy::calls_name)
}

/// What the policy says of a spend, by the docs' table in its order: lists, per-call caps, calls,
/// budgets, budgets per counterparty, first-time counterparties.
fn model_decide(
    p: &MPolicy,
    s: &MState,
    tool: &str,
    cur: Cur,
    amount: u128,
    to: Option<Address>,
    now: DateTime<Utc>,
) -> MVerdict {
    let refuse = |rule: String, says: String| MVerdict::Refuse { rule, says };
    if let Some(to) = to
        && p.deny.contains(&to)
    {
        return refuse("the denylist".into(), to.to_string());
    }
    if let Some(allow) = &p.allow
        && !to.is_some_and(|to| allow.contains(&to))
    {
        return refuse("the allowlist".into(), String::new());
    }
    for c in &p.per_call {
        if c.cur == cur && c.tool.is_none_or(|t| t == tool) && amount > c.max {
            return refuse(MPolicy::per_call_name(c), format!("this call would spend {}", show(amount, cur)));
        }
    }
    if let Some(rule) = model_calls(p, s, tool, now) {
        return refuse(rule, String::new());
    }
    let (mut reasons, mut over) = (Vec::new(), Vec::new());
    for (n, b) in p.budgets.iter().enumerate() {
        if b.cur != cur {
            continue;
        }
        let spent = s.spent(now, b.per, cur, None);
        if spent + amount <= b.max {
            continue;
        }
        if !b.ask {
            return refuse(
                MPolicy::budget_name(b),
                format!(
                    "{} is spent in that period and this call would spend {}",
                    show(spent, cur),
                    show(amount, cur)
                ),
            );
        }
        reasons.push(format!(
            "this would pass the {} budget per {} by {}",
            cur.symbol(),
            period_name(b.per),
            show(spent + amount - b.max, cur)
        ));
        over.push(n);
    }
    if let Some(to) = to {
        for b in &p.party_budgets {
            if b.cur == cur && s.spent(now, b.per, cur, Some(to)) + amount > b.max {
                return refuse(MPolicy::party_budget_name(b), to.to_string());
            }
        }
    }
    let listed = p.allow.as_ref().is_some_and(|allow| to.is_some_and(|to| allow.contains(&to)));
    let first = !listed && !to.is_some_and(|to| s.paid.contains(&to));
    let mut anyone = false;
    if first {
        match p.first {
            MFirst::Allow => {}
            MFirst::Refuse => return refuse("first-time counterparties are refused".into(), String::new()),
            MFirst::Ask => match to {
                Some(to) => reasons.push(format!("first payment to {to}")),
                None => anyone = true,
            },
        }
    }
    if reasons.is_empty() && !anyone { MVerdict::Allow } else { MVerdict::Hold { reasons, anyone, over } }
}

/// The documented sentence of a refusal by `rule`.
fn check_sentence(sentence: &str, rule: &str, says: &str) -> std::result::Result<(), String> {
    let start = format!("The wallet policy refuses this: {rule} — ");
    if !sentence.starts_with(&start) || !sentence.ends_with(". Nothing was sent.") || !sentence.contains(says)
    {
        return Err(format!("the sentence {sentence:?} should be \"{start}…{says}…. Nothing was sent.\""));
    }
    Ok(())
}

/// The server's verdict against the model's; the kind it was, for the coverage count.
fn compare(code: &Verdict, model: &MVerdict) -> std::result::Result<String, String> {
    match (code, model) {
        (Verdict::Allow, MVerdict::Allow) => Ok("allow".into()),
        (Verdict::Refuse(refusal), MVerdict::Refuse { rule, says }) => {
            if refusal.rule != *rule {
                return Err(format!("refused by {:?}, the model says by {rule:?}", refusal.rule));
            }
            check_sentence(&refusal.sentence, rule, says)?;
            Ok(format!("refuse: {}", rule.split(" (").next().unwrap_or(rule).replace(char::is_numeric, "")))
        }
        (Verdict::Hold(got), MVerdict::Hold { reasons, anyone, .. }) => {
            let expected = reasons.len() + usize::from(*anyone);
            let all_said = reasons.iter().all(|want| got.contains(want));
            let anyone_said = !anyone || got.iter().any(|g| g.contains("anyone may accept"));
            if got.len() != expected || !all_said || !anyone_said {
                return Err(format!(
                    "held for {got:?}, the model holds for {reasons:?} (nobody named: {anyone})"
                ));
            }
            Ok(if reasons.iter().any(|r| r.contains("budget")) { "hold: budget" } else { "hold: first" }
                .into())
        }
        (code, model) => Err(format!("the server says {code:?}, the model {model:?}")),
    }
}

/// Every budget, budget per counterparty and calls rule inside its window ending `now`.
fn check_limits(p: &MPolicy, s: &MState, now: DateTime<Utc>) -> std::result::Result<(), String> {
    for (n, b) in p.budgets.iter().enumerate() {
        let spent: u128 = s
            .spends
            .iter()
            .filter(|x| x.cur == b.cur && within(x.at, now, b.per) && !x.excused.contains(&n))
            .map(|x| x.amount)
            .sum();
        if spent > b.max {
            return Err(format!(
                "{} passed: {} spent in the window",
                MPolicy::budget_name(b),
                show(spent, b.cur)
            ));
        }
    }
    for b in &p.party_budgets {
        for to in PARTIES {
            let spent = s.spent(now, b.per, b.cur, Some(to));
            if spent > b.max {
                return Err(format!(
                    "{} passed for {to}: {} in the window",
                    MPolicy::party_budget_name(b),
                    show(spent, b.cur)
                ));
            }
        }
    }
    for c in &p.calls {
        let sent = s.sent(now, c.per, c.tool);
        if sent > c.max {
            return Err(format!("{} passed: {sent} sent in the window", MPolicy::calls_name(c)));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The pure test.

/// The next instant: often the same, a few seconds on, or exactly where an earlier spend or send
/// leaves (or is about to leave) a rule's window, or the expiry.
fn advance(r: &mut StdRng, p: &MPolicy, s: &MState, now: DateTime<Utc>) -> DateTime<Utc> {
    let later = match r.random_range(0..20) {
        0..=5 => now,
        6..=10 => now + TimeDelta::seconds(r.random_range(1..=5)),
        11 | 12 => now + TimeDelta::seconds(r.random_range(1..=p.longest_period() as i64)),
        13..=16 => {
            let times: Vec<DateTime<Utc>> =
                s.spends.iter().map(|x| x.at).chain(s.sends.iter().map(|(at, _)| *at)).collect();
            let (Some(at), Some(per)) = (times.choose(r), p.periods().choose(r).copied()) else {
                return now + TimeDelta::seconds(1);
            };
            let edge = *at + TimeDelta::seconds(per as i64);
            let edge = match r.random_range(0..4) {
                0 => edge - TimeDelta::seconds(1),
                1 => edge + TimeDelta::microseconds(1),
                _ => edge,
            };
            edge.max(now)
        }
        17 => match p.expires {
            Some(expiry) if r.random_bool(0.5) => {
                (expiry - TimeDelta::microseconds(r.random_range(0..=1))).max(now)
            }
            _ => now + TimeDelta::microseconds(1),
        },
        18 => now + TimeDelta::seconds(r.random_range(60..600)),
        _ => now + TimeDelta::seconds(r.random_range(1..=2 * DAY as i64)),
    };
    later.max(now)
}

/// An amount worth trying: 0, 1 base unit, a random one, or exactly what a rule leaves and one
/// unit more.
fn pick_amount(
    r: &mut StdRng,
    p: &MPolicy,
    s: &MState,
    cur: Cur,
    to: Option<Address>,
    now: DateTime<Utc>,
) -> u128 {
    let edge = |left: u128, r: &mut StdRng| if r.random_bool(0.5) { left } else { left + 1 };
    match r.random_range(0..10) {
        0 => 0,
        1 => 1,
        2 | 3 => cur.step() * r.random_range(0..=12),
        4 | 5 => {
            let budgets: Vec<&MBudget> = p.budgets.iter().filter(|b| b.cur == cur).collect();
            match budgets.choose(r) {
                Some(b) => edge(b.max.saturating_sub(s.spent(now, b.per, cur, None)), r),
                None => cur.step() * r.random_range(0..=5),
            }
        }
        6 | 7 => {
            let budgets: Vec<&MPartyBudget> = p.party_budgets.iter().filter(|b| b.cur == cur).collect();
            match (budgets.choose(r), to) {
                (Some(b), Some(to)) => edge(b.max.saturating_sub(s.spent(now, b.per, cur, Some(to))), r),
                _ => cur.step() * r.random_range(0..=5),
            }
        }
        8 => {
            let caps: Vec<&MPerCall> = p.per_call.iter().filter(|c| c.cur == cur).collect();
            caps.choose(r).map_or(cur.step(), |c| edge(c.max, r))
        }
        _ => cur.step() * r.random_range(0..=8) + r.random_range(0..cur.step()),
    }
}

/// One random policy through [`STEPS`] random steps; the kinds of verdicts seen are counted in
/// `hits`.
fn run_case(seed: u64, hits: &mut BTreeMap<String, usize>) -> std::result::Result<(), String> {
    let r = &mut StdRng::seed_from_u64(seed);
    let start = DateTime::parse_from_rfc3339("2026-11-28T12:00:00Z").map_err(|e| e.to_string())?.to_utc();
    let wallet = Address::from(r.random::<[u8; 20]>());
    let p = MPolicy::random(r, wallet, start);
    let policy = p.policy(r)?;
    let (mut s, mut now) = (MState::default(), start);
    let mut hit = |kind: String| *hits.entry(kind).or_default() += 1;
    for step in 0..STEPS {
        now = advance(r, &p, &s, now);
        let at =
            |e: String| format!("step {step}, {}s in: {e}\npolicy: {policy:?}", (now - start).num_seconds());
        let frozen = r.random_bool(0.03).then(|| Frozen { at: now, reason: Some("a loop".into()) });
        let signs = rules::may_sign(wallet, Some(&policy), frozen.as_ref(), now);
        if frozen.is_some() {
            match signs {
                Err(refusal)
                    if refusal.rule == "the kill switch"
                        && refusal
                            .sentence
                            .starts_with(&format!("Signing is stopped for wallet {wallet}")) =>
                {
                    hit("refuse: the kill switch".into());
                    continue;
                }
                other => return Err(at(format!("a frozen wallet gave {other:?}"))),
            }
        }
        if let Some(expiry) = p.expires
            && now >= expiry
        {
            let rule = format!("the policy's expiry ({})", expiry.format("%Y-%m-%dT%H:%M:%SZ"));
            return match signs {
                Err(refusal) if refusal.rule == rule => {
                    check_sentence(&refusal.sentence, &rule, "").map_err(at)?;
                    hit("refuse: expiry".into());
                    Ok(())
                }
                other => Err(at(format!("past the expiry may_sign gave {other:?}"))),
            };
        }
        signs.map_err(|e| at(format!("before the expiry, not frozen, may_sign refused: {e:?}")))?;
        let tool = *TOOLS.choose(r).unwrap_or(&TOOLS[0]);
        let spelled = spelled_tool(tool, r);
        if r.random_bool(0.15) {
            // A transaction that spends nothing (the second of a USDC deposit without a permit).
            let code = rules::may_send(&policy, &s.usage(None), &spelled, now);
            match (code, model_calls(&p, &s, tool, now)) {
                (Ok(()), None) => {
                    s.sends.push((now, tool.to_owned()));
                    hit("send".into());
                }
                (Err(refusal), Some(rule)) if refusal.rule == rule => hit("refuse: send over calls".into()),
                (code, model) => {
                    return Err(at(format!(
                        "a bare {tool} send: the server says {code:?}, the model {model:?}"
                    )));
                }
            }
        } else {
            let cur = Cur::random(r);
            let to = if r.random_bool(0.2) { None } else { PARTIES.choose(r).copied() };
            let amount = pick_amount(r, &p, &s, cur, to, now);
            let attempt = Attempt {
                tool: spelled.clone(),
                currency: cur.currency(),
                amount: U256::from(amount),
                counterparty: to,
            };
            let what = format!("{spelled} of {} to {to:?}", show(amount, cur));
            let usage = s.usage(to);
            let model = model_decide(&p, &s, tool, cur, amount, to, now);
            let code = rules::decide(&policy, &usage, &attempt, now, &[]);
            hit(compare(&code, &model).map_err(|e| at(format!("{what}: {e}")))?);
            let excused = match model {
                MVerdict::Allow => Some(Vec::new()),
                MVerdict::Hold { over, .. } if r.random_bool(0.5) => {
                    let shown = match &code {
                        Verdict::Hold(reasons) => reasons.clone(),
                        other => return Err(at(format!("{what}: the model holds, the code gave {other:?}"))),
                    };
                    match rules::decide(&policy, &usage, &attempt, now, &shown) {
                        Verdict::Allow => hit("hold: the human said yes".into()),
                        other => return Err(at(format!("{what}: held, then a human's yes gave {other:?}"))),
                    }
                    Some(over)
                }
                _ => None,
            };
            // An admitted call sends (or, now and then, ends without sending: released).
            if let Some(excused) = excused
                && r.random_bool(0.85)
            {
                s.spends.push(MSpend { at: now, cur, amount, to, excused });
                s.sends.push((now, tool.to_owned()));
                s.paid.extend(to);
            }
        }
        check_limits(&p, &s, now).map_err(at)?;
    }
    Ok(())
}

#[test]
fn random_policies_and_calls_never_pass_a_limit() -> Result {
    let seed = seed()?;
    eprintln!("wallet_policy_model seed: {seed} (rerun with AGENTPACT_SEED={seed})");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut hits = BTreeMap::new();
    for case in 0..CASES {
        let case_seed: u64 = rng.random();
        run_case(case_seed, &mut hits)
            .map_err(|e| failed(format!("seed {seed} (AGENTPACT_SEED={seed}), case {case}: {e}")))?;
    }
    eprintln!("verdicts seen: {hits:#?}");
    let kinds = [
        "allow",
        "hold: budget",
        "hold: first",
        "hold: the human said yes",
        "send",
        "refuse: the denylist",
        "refuse: the allowlist",
        "refuse: the per-call cap",
        "refuse: the per-call cap of create-pact",
        "refuse: calls per",
        "refuse: create-pact calls per",
        "refuse: send over calls",
        "refuse: the ETH budget per",
        "refuse: the USDC budget per",
        "refuse: the budget per counterparty",
        "refuse: first-time counterparties are refused",
        "refuse: the kill switch",
        "refuse: expiry",
    ];
    for kind in kinds {
        let seen = hits.keys().any(|k| k.starts_with(kind));
        if !seen {
            return Err(failed(format!(
                "seed {seed}: no step was {kind:?}; the random calls test too little"
            )));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Against Postgres and the real Guard.

/// Two guards of one wallet on two pools: two `agentpact mcp` processes.
async fn two_processes(db: &TestDatabase, signer: &PrivateKeySigner) -> Result<[Guard; 2]> {
    let other: PgPool = PgPoolOptions::new().max_connections(4).connect(db.url()).await?;
    Ok([Guard::new(db.pool().clone(), CHAIN, signer.clone()), Guard::new(other, CHAIN, signer.clone())])
}

/// Sets `p` as the human does; the digest its ledger entries name.
async fn set_policy(pool: &PgPool, p: &MPolicy, r: &mut StdRng) -> Result<String> {
    let policy = p.policy(r).map_err(failed)?;
    Ok(store::set_policy(pool, &policy).await?.to_string())
}

/// One call's spend through `guard` as the server makes it: admitted, sent, mined (or released
/// when the send is refused).
async fn spend(guard: &Guard, attempt: &Attempt) -> std::result::Result<B256, ToolError> {
    let admitted = guard.admit(attempt, &[]).await?;
    let tx = B256::from(rand::random::<[u8; 32]>());
    match guard.send(&attempt.tool, Some(&admitted), async move { Ok(((), tx)) }).await {
        Ok(((), tx)) => {
            guard.mined(&attempt.tool, Some(&admitted), tx, None).await;
            Ok(tx)
        }
        Err(e) => {
            guard.release_unsent(&admitted).await;
            Err(e)
        }
    }
}

type Outcome = (Attempt, std::result::Result<B256, ToolError>);

/// `attempts` all at once, alternately on each guard.
async fn burst(guards: &[Guard; 2], attempts: Vec<Attempt>) -> Result<Vec<Outcome>> {
    let tasks: Vec<_> = attempts
        .into_iter()
        .enumerate()
        .map(|(n, attempt)| {
            let guard = guards[n % 2].clone();
            tokio::spawn(async move {
                let sent = spend(&guard, &attempt).await;
                (attempt, sent)
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.map_err(failed)?);
    }
    Ok(outcomes)
}

/// What `wallet` has counted of `cur` (to `to` only, when given): not released.
async fn counted(pool: &PgPool, wallet: Address, cur: Cur, to: Option<Address>) -> Result<u128> {
    let sum: String = sqlx::query_scalar(
        "SELECT COALESCE(SUM(amount), 0)::text FROM wallet_spends
         WHERE chain_id = $1 AND wallet = $2 AND currency = $3 AND state <> 'released'
           AND ($4::bytea IS NULL OR counterparty = $4)",
    )
    .bind(CHAIN as i64)
    .bind(wallet.to_vec())
    .bind(cur.address().to_vec())
    .bind(to.map(|t| t.to_vec()))
    .fetch_one(pool)
    .await?;
    sum.parse().map_err(failed)
}

/// The ledger of `wallet`, checked as docs/mcp.md §Policy says a ledger verifies: seq 1, 2, …;
/// each body's prev the previous hash (zero first); keccak256(body) = hash; the EIP-191 signature
/// of "AgentPact wallet ledger entry 0x<hash>" recovers to the wallet; one wallet and chain. Its
/// bodies.
async fn verified_ledger(pool: &PgPool, wallet: Address) -> Result<Vec<Value>> {
    let entries: Vec<(i64, String, Vec<u8>, Vec<u8>)> = sqlx::query_as(
        "SELECT seq, body, hash, signature FROM wallet_ledger WHERE chain_id = $1 AND wallet = $2 ORDER BY seq",
    )
    .bind(CHAIN as i64)
    .bind(wallet.to_vec())
    .fetch_all(pool)
    .await?;
    let mut prev = B256::ZERO;
    let mut bodies = Vec::new();
    for (n, (stored_seq, text, hash, signature)) in entries.iter().enumerate() {
        let seq = n as i64 + 1;
        let body: Value = serde_json::from_str(text).map_err(failed)?;
        let wrong = |what: &str| failed(format!("ledger entry {seq}: {what}: {text}"));
        if *stored_seq != seq || body["seq"] != json!(seq) {
            return Err(wrong(&format!("seq {stored_seq} where {seq} follows")));
        }
        if body["prev"] != json!(format!("0x{}", hex::encode(prev))) {
            return Err(wrong("prev is not the previous entry's hash"));
        }
        let hash = B256::try_from(hash.as_slice()).map_err(|_| wrong("a hash of another length"))?;
        if keccak256(text.as_bytes()) != hash {
            return Err(wrong("its hash is not keccak256 of its body"));
        }
        if body["wallet"] != json!(wallet.to_checksum(None))
            || body["chain_id"] != json!(CHAIN)
            || body["v"] != 1
        {
            return Err(wrong("another wallet, chain or version"));
        }
        let message = format!("AgentPact wallet ledger entry 0x{}", hex::encode(hash));
        let v = signature.get(64).copied();
        let signer = Signature::from_raw(signature)
            .map_err(failed)?
            .recover_address_from_msg(message.as_bytes())
            .map_err(failed)?;
        if signer != wallet || !matches!(v, Some(27 | 28)) {
            return Err(wrong(&format!("signed by {signer} (v = {v:?}), not the wallet")));
        }
        prev = hash;
        bodies.push(body);
    }
    Ok(bodies)
}

fn text<'v>(body: &'v Value, key: &str) -> Result<&'v str> {
    body[key].as_str().ok_or_else(|| failed(format!("ledger body without {key}: {body}")))
}

/// Every decision in the ledger replayed through the model, in the ledger's order, under the
/// policy each entry names: the server admitted and refused (by the same rule) exactly what the
/// model does. The count of admissions.
fn replay(bodies: &[Value], policies: &BTreeMap<String, MPolicy>) -> Result<usize> {
    let mut s = MState::default();
    let mut allowed = 0;
    for body in bodies {
        let at = DateTime::parse_from_rfc3339(text(body, "at")?).map_err(failed)?.to_utc();
        let tool = tool_of(text(body, "tool")?);
        let to = match body["counterparty"].as_str() {
            Some(to) => Some(to.parse::<Address>().map_err(failed)?),
            None => None,
        };
        match text(body, "event")? {
            event @ ("allowed" | "refused") => {
                let p = policies
                    .get(text(body, "policy")?)
                    .ok_or_else(|| failed(format!("an entry under a policy never set: {body}")))?;
                let cur = Cur::of_symbol(text(body, "currency")?)
                    .ok_or_else(|| failed(format!("an entry in another currency: {body}")))?;
                let amount: u128 = text(body, "amount")?.parse().map_err(failed)?;
                let model = model_decide(p, &s, &tool, cur, amount, to, at);
                match (event, &model) {
                    ("allowed", MVerdict::Allow) => {
                        s.spends.push(MSpend { at, cur, amount, to, excused: Vec::new() });
                        allowed += 1;
                    }
                    ("refused", MVerdict::Refuse { rule, .. }) if body["rule"] == json!(rule) => {}
                    _ => return Err(failed(format!("the ledger says {body}, the model {model:?}"))),
                }
            }
            "sent" => {
                s.sends.push((at, tool));
                s.paid.extend(to);
            }
            "mined" => {}
            _ => return Err(failed(format!("an entry these calls never make: {body}"))),
        }
    }
    Ok(allowed)
}

fn refused_by(outcome: &Outcome) -> Option<&str> {
    match &outcome.1 {
        Err(ToolError::Forbidden(refusal)) => Some(&refusal.rule),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn equal_parallel_spends_on_two_processes_admit_exactly_what_the_budget_holds() -> Result {
    let seed = seed()?;
    eprintln!("wallet_policy_model seed: {seed} (rerun with AGENTPACT_SEED={seed})");
    let r = &mut StdRng::seed_from_u64(seed);
    let db = TestDatabase::create().await?;
    let signer = PrivateKeySigner::random();
    let wallet = signer.address();
    let guards = two_processes(&db, &signer).await?;
    let deposit = Cur::Eth.step() * r.random_range(1..=20);
    let (mut policies, mut admitted) = (BTreeMap::new(), 0u128);
    for round in 0..3 {
        // Room for exactly `fits` more deposits, and half of one.
        let fits = r.random_range(3..=25);
        let max = (admitted + fits) * deposit + deposit / 2;
        let mut p = MPolicy::empty(wallet);
        p.budgets.push(MBudget { cur: Cur::Eth, per: DAY, max, ask: false });
        p.first = MFirst::Allow;
        policies.insert(set_policy(db.pool(), &p, r).await?, p.clone());
        let attempts = (0..40)
            .map(|n| Attempt {
                tool: spelled_tool(TOOLS[n % 3], r),
                currency: Currency::eth(),
                amount: U256::from(deposit),
                counterparty: None,
            })
            .collect();
        let outcomes = burst(&guards, attempts).await?;
        let sent = outcomes.iter().filter(|o| o.1.is_ok()).count() as u128;
        let rule = MPolicy::budget_name(&p.budgets[0]);
        for outcome in outcomes.iter().filter(|o| o.1.is_err()) {
            let sentence = outcome.1.as_ref().err().map(ToString::to_string).unwrap_or_default();
            if refused_by(outcome) != Some(rule.as_str()) || !sentence.contains(&rule) {
                return Err(failed(format!("round {round}: refused with {:?}, not by {rule}", outcome.1)));
            }
        }
        if sent != fits {
            return Err(failed(format!(
                "round {round}: {sent} of 40 sent; the budget {rule} holds {fits} more"
            )));
        }
        admitted += sent;
        let total = counted(db.pool(), wallet, Cur::Eth, None).await?;
        if total != admitted * deposit || total > max {
            return Err(failed(format!(
                "round {round}: {total} wei counted, {admitted} deposits admitted, max {max}"
            )));
        }
        let bodies = verified_ledger(db.pool(), wallet).await?;
        let replayed = replay(&bodies, &policies)?;
        if replayed as u128 != admitted {
            return Err(failed(format!("round {round}: the ledger admits {replayed}, the calls {admitted}")));
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_parallel_spends_keep_every_budget_and_list() -> Result {
    let seed = seed()?;
    eprintln!("wallet_policy_model seed: {seed} (rerun with AGENTPACT_SEED={seed})");
    let r = &mut StdRng::seed_from_u64(seed);
    let db = TestDatabase::create().await?;
    let signer = PrivateKeySigner::random();
    let wallet = signer.address();
    let guards = two_processes(&db, &signer).await?;
    let [a, b, c, d, e] = PARTIES;
    let mut policies = BTreeMap::new();
    let (mut sent_total, mut p) = (0usize, MPolicy::empty(wallet));
    for round in 0..3u128 {
        // Each round raises the limits: every rule has room again, and is reached again.
        p.budgets = vec![
            MBudget { cur: Cur::Eth, per: DAY, max: Cur::Eth.step() * (40 + 40 * round), ask: false },
            MBudget { cur: Cur::Usdc, per: DAY, max: Cur::Usdc.step() * (50 + 40 * round), ask: false },
        ];
        p.party_budgets = vec![
            MPartyBudget { cur: Cur::Eth, per: DAY, max: Cur::Eth.step() * (12 + 12 * round) },
            MPartyBudget { cur: Cur::Usdc, per: DAY, max: Cur::Usdc.step() * (20 + 15 * round) },
        ];
        p.allow = Some(vec![a, b, c]);
        p.deny = vec![e];
        p.first = MFirst::Refuse;
        p.per_call = vec![MPerCall { tool: Some("create-pact"), cur: Cur::Usdc, max: Cur::Usdc.step() * 12 }];
        policies.insert(set_policy(db.pool(), &p, r).await?, p.clone());
        let attempts = (0..40)
            .map(|_| {
                let cur = Cur::random(r);
                Attempt {
                    tool: spelled_tool(TOOLS.choose(r).unwrap_or(&TOOLS[0]), r),
                    currency: cur.currency(),
                    amount: U256::from(cur.step() * r.random_range(0..=10) + u128::from(r.random_bool(0.2))),
                    counterparty: [Some(a), Some(b), Some(c), Some(a), Some(d), Some(e), None]
                        .choose(r)
                        .copied()
                        .flatten(),
                }
            })
            .collect();
        let outcomes = burst(&guards, attempts).await?;
        for outcome in outcomes.iter().filter(|o| o.1.is_err()) {
            if refused_by(outcome).is_none() {
                return Err(failed(format!("round {round}: {:?} failed otherwise than refused", outcome.0)));
            }
        }
        sent_total += outcomes.iter().filter(|o| o.1.is_ok()).count();
        for rule in &p.budgets {
            let total = counted(db.pool(), wallet, rule.cur, None).await?;
            if total > rule.max {
                return Err(failed(format!("round {round}: {} passed: {total}", MPolicy::budget_name(rule))));
            }
        }
        for rule in &p.party_budgets {
            for to in PARTIES {
                let total = counted(db.pool(), wallet, rule.cur, Some(to)).await?;
                let listed = [a, b, c].contains(&to);
                if total > rule.max || (!listed && total > 0) {
                    return Err(failed(format!("round {round}: {to} got {total} of {:?}", rule.cur)));
                }
            }
        }
        let bodies = verified_ledger(db.pool(), wallet).await?;
        let replayed = replay(&bodies, &policies)?;
        if replayed != sent_total {
            return Err(failed(format!(
                "round {round}: the ledger admits {replayed}, the calls sent {sent_total}"
            )));
        }
    }
    if sent_total == 0 || sent_total == 120 {
        return Err(failed(format!(
            "{sent_total} of 120 sent: the limits were never reached or never left room"
        )));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_kill_switch_stops_a_burst_on_both_processes() -> Result {
    let db = TestDatabase::create().await?;
    let signer = PrivateKeySigner::random();
    let wallet = signer.address();
    let guards = two_processes(&db, &signer).await?;
    let r = &mut StdRng::seed_from_u64(seed()?);
    let mut p = MPolicy::empty(wallet);
    p.budgets.push(MBudget { cur: Cur::Eth, per: DAY, max: Cur::Eth.step() * 1_000_000, ask: false });
    p.first = MFirst::Allow;
    set_policy(db.pool(), &p, r).await?;
    let frozen = Arc::new(AtomicBool::new(false));
    let sends = Arc::new(AtomicUsize::new(0));
    let attempt = Attempt {
        tool: "create-pact".into(),
        currency: Currency::eth(),
        amount: U256::from(Cur::Eth.step()),
        counterparty: None,
    };
    let tasks: Vec<_> = (0..40)
        .map(|n| {
            let (guard, frozen, sends, attempt) =
                (guards[n % 2].clone(), frozen.clone(), sends.clone(), attempt.clone());
            tokio::spawn(async move {
                // (whether the freeze had returned when the step began, what it gave)
                let mut seen = Vec::new();
                for _ in 0..8 {
                    let after = frozen.load(Ordering::SeqCst);
                    let admitted = match guard.admit(&attempt, &[]).await {
                        Ok(admitted) => admitted,
                        Err(e) => {
                            seen.push((after, Err(e)));
                            continue;
                        }
                    };
                    let after = frozen.load(Ordering::SeqCst);
                    let tx = B256::from(rand::random::<[u8; 32]>());
                    match guard.send("create-pact", Some(&admitted), async move { Ok(((), tx)) }).await {
                        Ok(((), tx)) => {
                            sends.fetch_add(1, Ordering::SeqCst);
                            guard.mined("create-pact", Some(&admitted), tx, None).await;
                            seen.push((after, Ok(tx)));
                        }
                        Err(e) => {
                            guard.release_unsent(&admitted).await;
                            seen.push((after, Err(e)));
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                seen
            })
        })
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    // (A burst whose calls all ended first is judged by their outcomes below.)
    while sends.load(Ordering::SeqCst) < 30 && !tasks.iter().all(|t| t.is_finished()) {
        if tokio::time::Instant::now() > deadline {
            return Err(failed("30 sends did not happen within a minute"));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let frozen_at = store::set_frozen(db.pool(), CHAIN, wallet, Some("the model test pulls it")).await?;
    frozen.store(true, Ordering::SeqCst);
    let mut stopped = 0;
    for task in tasks {
        for (after, outcome) in task.await.map_err(failed)? {
            match outcome {
                Err(ToolError::Forbidden(refusal)) if refusal.rule == "the kill switch" => stopped += 1,
                Ok(tx) if after => return Err(failed(format!("{tx} was sent after the freeze returned"))),
                Ok(_) => {}
                Err(e) => {
                    return Err(failed(format!("a call failed otherwise than by the kill switch: {e}")));
                }
            }
        }
    }
    if stopped == 0 {
        return Err(failed("the burst ended before the freeze: nothing was stopped"));
    }
    let bodies = verified_ledger(db.pool(), wallet).await?;
    for body in &bodies {
        let at = DateTime::parse_from_rfc3339(text(body, "at")?).map_err(failed)?.to_utc();
        if body["event"] == "sent" && at >= frozen_at {
            return Err(failed(format!("sent at {at}, after the freeze at {frozen_at}: {body}")));
        }
    }
    let reserved: i64 = sqlx::query_scalar("SELECT count(*) FROM wallet_spends WHERE state = 'reserved'")
        .fetch_one(db.pool())
        .await?;
    if reserved != 0 {
        return Err(failed(format!("{reserved} spends still reserved after every call ended")));
    }
    for guard in &guards {
        let said = match guard.admit(&attempt, &["anything".to_owned()]).await {
            Err(ToolError::Forbidden(refusal)) if refusal.rule == "the kill switch" => refusal.sentence,
            other => return Err(failed(format!("a frozen wallet admitted: {other:?}"))),
        };
        if !said.starts_with(&format!("Signing is stopped for wallet {wallet}"))
            || !said.contains("wallet thaw")
        {
            return Err(failed(format!("the kill switch says {said:?}")));
        }
        match guard.sign_with("sign-contract", || Ok(())).await {
            Err(ToolError::Forbidden(refusal)) if refusal.rule == "the kill switch" => {}
            other => return Err(failed(format!("a frozen wallet may sign: {other:?}"))),
        }
    }
    store::set_frozen(db.pool(), CHAIN, wallet, None).await?;
    for guard in &guards {
        spend(guard, &attempt).await.map_err(|e| failed(format!("thawed, a call is still refused: {e}")))?;
    }
    verified_ledger(db.pool(), wallet).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_spend_stops_counting() -> Result {
    let db = TestDatabase::create().await?;
    let signer = PrivateKeySigner::random();
    let wallet = signer.address();
    let [one, two] = two_processes(&db, &signer).await?;
    let r = &mut StdRng::seed_from_u64(seed()?);
    let deposit = Cur::Eth.step() * 3;
    let mut p = MPolicy::empty(wallet);
    p.budgets.push(MBudget { cur: Cur::Eth, per: DAY, max: 2 * deposit, ask: false });
    p.first = MFirst::Allow;
    set_policy(db.pool(), &p, r).await?;
    let rule = MPolicy::budget_name(&p.budgets[0]);
    let attempt = Attempt {
        tool: "create-pact".into(),
        currency: Currency::eth(),
        amount: U256::from(deposit),
        counterparty: None,
    };
    let refused = |outcome: std::result::Result<_, ToolError>, when: &str| match outcome {
        Err(ToolError::Forbidden(refusal)) if refusal.rule == rule => Ok(()),
        other => Err(failed(format!("{when}: a third deposit was not refused by {rule}: {other:?}"))),
    };
    let first = one.admit(&attempt, &[]).await.map_err(failed)?;
    let second = two.admit(&attempt, &[]).await.map_err(failed)?;
    refused(one.admit(&attempt, &[]).await.map(|_| ()), "two reserved")?;
    // A call that ends without sending gives its room back.
    one.release_unsent(&first).await;
    let third = two.admit(&attempt, &[]).await.map_err(|e| failed(format!("after a release: {e}")))?;
    // A sent spend is not released by the call's end.
    let tx = B256::from(rand::random::<[u8; 32]>());
    one.send("create-pact", Some(&second), async move { Ok(((), tx)) }).await.map_err(failed)?;
    one.release_unsent(&second).await;
    refused(two.admit(&attempt, &[]).await.map(|_| ()), "one sent, one reserved")?;
    // A transaction that fails gives it back.
    let tx = B256::from(rand::random::<[u8; 32]>());
    two.send("create-pact", Some(&third), async move { Ok(((), tx)) }).await.map_err(failed)?;
    two.mined("create-pact", Some(&third), tx, Some("mined reverted")).await;
    one.admit(&attempt, &[]).await.map_err(|e| failed(format!("after a failed transaction: {e}")))?;
    let total = counted(db.pool(), wallet, Cur::Eth, None).await?;
    if total != 2 * deposit {
        return Err(failed(format!("{total} wei counted; two deposits of {deposit} are")));
    }
    verified_ledger(db.pool(), wallet).await?;
    Ok(())
}
