//! The policy a human sets for a wallet, and the decision it gives a call: pure, so the same
//! function decides in the server (over the usage read under the wallet's lock,
//! [`super::store`]) and in the randomized model test.

use agentpact_contracts::money::Currency;
use alloy::primitives::{Address, U256};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The policy file, as the human writes it (TOML, docs/mcp.md §Policy) and as it is stored (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The wallet it governs.
    pub wallet: Address,
    /// The chain it governs the wallet on.
    pub chain_id: u64,
    /// After this instant (RFC 3339) the server signs nothing for the wallet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Spend per rolling period and currency.
    #[serde(default)]
    pub budget: Vec<Budget>,
    /// Transactions signed per rolling period.
    #[serde(default)]
    pub calls: Vec<Calls>,
    /// The most one call may spend.
    #[serde(default)]
    pub per_call: Vec<PerCall>,
    /// Whom the wallet may pay.
    #[serde(default)]
    pub counterparties: Counterparties,
}

/// A budget: at most `max` of `currency` spent in any `per`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// "ETH", a token's symbol ("USDC") or its address.
    pub currency: String,
    /// The rolling period.
    pub per: Period,
    /// The most spent in any such period, in the currency's units ("0.5").
    pub max: String,
    /// What a call that would pass it gets.
    #[serde(default)]
    pub over: Over,
}

/// What a call that would pass a budget gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Over {
    /// Refused.
    #[default]
    Refuse,
    /// Held for the human's yes on the confirmation page.
    Ask,
}

/// At most `max` transactions signed in any `per` (of `tool` only, when named).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calls {
    /// The rolling period.
    pub per: Period,
    /// The most transactions in any such period.
    pub max: u32,
    /// Counts this tool's transactions only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// One call (of `tool`, when named) spends at most `max` of `currency`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerCall {
    /// Holds this tool's calls only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// "ETH", a token's symbol or its address.
    pub currency: String,
    /// The most one call spends, in the currency's units.
    pub max: String,
}

/// Whom the wallet may pay.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counterparties {
    /// When present, only these are paid (and none of them is ever "first-time").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<Address>>,
    /// Never paid.
    #[serde(default)]
    pub deny: Vec<Address>,
    /// What a payment to a counterparty this wallet never paid gets.
    #[serde(default)]
    pub first_time: FirstTime,
    /// Budgets per counterparty, each counterparty on its own.
    #[serde(default)]
    pub budget: Vec<CounterpartyBudget>,
}

/// What a first payment to a counterparty gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FirstTime {
    /// Held for the human's yes.
    #[default]
    Ask,
    /// Allowed.
    Allow,
    /// Refused.
    Refuse,
}

/// At most `max` of `currency` to any one counterparty in any `per`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterpartyBudget {
    /// "ETH", a token's symbol or its address.
    pub currency: String,
    /// The rolling period.
    pub per: Period,
    /// The most to one counterparty in any such period, in the currency's units.
    pub max: String,
}

/// A rolling period: a number and a unit, s, m, h or d ("1d", "90m").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Period {
    /// Its length in seconds.
    pub seconds: u64,
}

/// The longest period a policy may name: 366 days.
pub const MAX_PERIOD_SECONDS: u64 = 366 * 86_400;

impl Period {
    /// The period `text` names, or why it names none.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let unit_seconds = match unit.trim() {
            "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            _ => {
                return Err(format!(
                    "period {text:?}: write a number and s, m, h or d, e.g. \"1h\" or \"7d\""
                ));
            }
        };
        let seconds = number
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(unit_seconds))
            .filter(|s| (1..=MAX_PERIOD_SECONDS).contains(s))
            .ok_or_else(|| format!("period {text:?}: between 1s and 366d"))?;
        Ok(Self { seconds })
    }
}

impl std::fmt::Display for Period {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.seconds;
        if s.is_multiple_of(86_400) {
            write!(f, "{}d", s / 86_400)
        } else if s.is_multiple_of(3_600) {
            write!(f, "{}h", s / 3_600)
        } else if s.is_multiple_of(60) {
            write!(f, "{}m", s / 60)
        } else {
            write!(f, "{s}s")
        }
    }
}

impl Serialize for Period {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Period {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The one spelling of a tool's name the rules compare: `create_pact` and `create-pact` are one.
pub fn tool_key(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('_', "-")
}

/// Whether `named` (a policy's currency) names `currency`: its symbol in any case, or its address.
pub fn names(named: &str, currency: &Currency) -> bool {
    named.trim().eq_ignore_ascii_case(&currency.symbol)
        || named.trim().parse::<Address>().is_ok_and(|a| a == currency.address)
}

impl Policy {
    /// Checks everything that can be checked without the chain: the expiry's form, the tools
    /// named (among `tools`), the periods (by their type), the amounts' form, the lists.
    pub fn check(&self, tools: &[&str]) -> Result<(), String> {
        self.expiry()?;
        let known: Vec<String> = tools.iter().map(|t| tool_key(t)).collect();
        let tool_named = |tool: &Option<String>, at: &str| match tool {
            Some(t) if !known.contains(&tool_key(t)) => {
                Err(format!("{at}: no tool {t:?}; the tools are {}", tools.join(", ")))
            }
            _ => Ok(()),
        };
        let amount = |text: &str, at: &str| {
            let ok = !text.is_empty()
                && text.chars().all(|c| c.is_ascii_digit() || c == '.')
                && text.matches('.').count() <= 1
                && text.chars().any(|c| c.is_ascii_digit());
            if ok { Ok(()) } else { Err(format!("{at}: max {text:?} is not an amount such as \"0.5\"")) }
        };
        for (n, b) in self.budget.iter().enumerate() {
            amount(&b.max, &format!("budget[{n}]"))?;
        }
        for (n, c) in self.calls.iter().enumerate() {
            tool_named(&c.tool, &format!("calls[{n}]"))?;
        }
        for (n, p) in self.per_call.iter().enumerate() {
            tool_named(&p.tool, &format!("per_call[{n}]"))?;
            amount(&p.max, &format!("per_call[{n}]"))?;
        }
        for (n, b) in self.counterparties.budget.iter().enumerate() {
            amount(&b.max, &format!("counterparties.budget[{n}]"))?;
        }
        if let Some(allow) = &self.counterparties.allow
            && let Some(both) = allow.iter().find(|a| self.counterparties.deny.contains(a))
        {
            return Err(format!("counterparties: {both} is both allowed and denied"));
        }
        Ok(())
    }

    /// Checks that every currency the rules name is one of `known` (the escrow's, as the index has
    /// them) and every amount reads in it: a rule naming no currency would silently hold nothing,
    /// and an amount finer than the currency's decimals would refuse every call.
    pub fn check_currencies(&self, known: &[Currency]) -> Result<(), String> {
        let named =
            self.budget.iter().enumerate().map(|(n, b)| (format!("budget[{n}]"), &b.currency, &b.max));
        let per_call =
            self.per_call.iter().enumerate().map(|(n, p)| (format!("per_call[{n}]"), &p.currency, &p.max));
        let per_party = self
            .counterparties
            .budget
            .iter()
            .enumerate()
            .map(|(n, b)| (format!("counterparties.budget[{n}]"), &b.currency, &b.max));
        for (at, currency, max) in named.chain(per_call).chain(per_party) {
            let Some(c) = known.iter().find(|c| names(currency, c)) else {
                let symbols: Vec<&str> = known.iter().map(|c| c.symbol.as_str()).collect();
                return Err(format!(
                    "{at}: {currency:?} is not a currency the escrow takes here (it takes {}); name one of them or \
                     its address",
                    symbols.join(", ")
                ));
            };
            c.parse(max).map_err(|e| format!("{at}: max {max:?} in {}: {e}", c.symbol))?;
        }
        Ok(())
    }

    /// The expiry, when the policy has one.
    pub fn expiry(&self) -> Result<Option<DateTime<Utc>>, String> {
        self.expires_at
            .as_deref()
            .map(|text| {
                DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&Utc)).map_err(|e| {
                    format!(
                        "expires_at {text:?}: {e}; write an RFC 3339 time such as \"2026-12-31T00:00:00Z\""
                    )
                })
            })
            .transpose()
    }

    /// The longest period any spending rule looks back over, in seconds (0: none).
    pub fn spend_lookback(&self) -> u64 {
        let budgets = self.budget.iter().map(|b| b.per.seconds);
        let per_counterparty = self.counterparties.budget.iter().map(|b| b.per.seconds);
        budgets.chain(per_counterparty).max().unwrap_or(0)
    }

    /// The longest period any calls rule looks back over, in seconds (0: none).
    pub fn calls_lookback(&self) -> u64 {
        self.calls.iter().map(|c| c.per.seconds).max().unwrap_or(0)
    }
}

/// A spend a call asks to make.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// The tool.
    pub tool: String,
    /// In what.
    pub currency: Currency,
    /// How much, in base units.
    pub amount: U256,
    /// To whom; `None`: nobody named (an open pact anyone may accept).
    pub counterparty: Option<Address>,
}

/// One spend already counted (reserved or sent, not released).
#[derive(Debug, Clone)]
pub struct Spent {
    /// When it was admitted.
    pub at: DateTime<Utc>,
    /// Its currency's address.
    pub currency: Address,
    /// How much, in base units.
    pub amount: U256,
    /// To whom.
    pub counterparty: Option<Address>,
}

/// What the wallet has done lately, as the rules read it.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    /// The spends counted within the longest spending period.
    pub spends: Vec<Spent>,
    /// The transactions sent within the longest calls period: when, and by which tool.
    pub sends: Vec<(DateTime<Utc>, String)>,
    /// Whether the attempt's counterparty was paid before by this wallet.
    pub known_counterparty: bool,
}

impl Usage {
    /// What was spent of `currency` in the `period` before `now` (to `counterparty` only, when
    /// given).
    pub fn spent(&self, now: DateTime<Utc>, period: Period, currency: Address, to: Option<Address>) -> U256 {
        let since = since(now, period);
        self.spends
            .iter()
            .filter(|s| s.at > since && s.currency == currency && (to.is_none() || s.counterparty == to))
            .fold(U256::ZERO, |sum, s| sum.saturating_add(s.amount))
    }

    /// How many transactions were sent in the `period` before `now` (by `tool` only, when given).
    pub fn sent(&self, now: DateTime<Utc>, period: Period, tool: Option<&str>) -> u64 {
        let since = since(now, period);
        let tool = tool.map(tool_key);
        self.sends
            .iter()
            .filter(|(at, t)| *at > since && tool.as_ref().is_none_or(|k| *k == tool_key(t)))
            .count() as u64
    }
}

/// The start of the `period` ending at `now` (exclusive).
fn since(now: DateTime<Utc>, period: Period) -> DateTime<Utc> {
    now - chrono::TimeDelta::seconds(i64::try_from(period.seconds).unwrap_or(i64::MAX))
}

/// The kill switch as the human left it.
#[derive(Debug, Clone)]
pub struct Frozen {
    /// Since when.
    pub at: DateTime<Utc>,
    /// Why, if the human said.
    pub reason: Option<String>,
}

/// A rule that refuses, and the sentence saying why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The rule's name ("the ETH budget per 1d (0.5 ETH)").
    pub rule: String,
    /// The whole sentence the agent is answered.
    pub sentence: String,
}

/// What the policy says of a spend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It may be sent.
    Allow,
    /// Only a human's yes lets it through; the reasons the page gives ("first payment to 0x…").
    Hold(Vec<String>),
    /// Refused.
    Refuse(Refusal),
}

/// Whether the wallet may sign at all at `now`: not frozen, the policy not expired.
pub fn may_sign(
    wallet: Address,
    policy: Option<&Policy>,
    frozen: Option<&Frozen>,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    if let Some(frozen) = frozen {
        let why = frozen.reason.as_deref().map_or_else(String::new, |r| format!(" ({r})"));
        return Err(Refusal {
            rule: "the kill switch".into(),
            sentence: format!(
                "Signing is stopped for wallet {wallet}: the human froze it at {}{why}. Nothing was sent; only \
                 the human can lift it (agentpact wallet thaw).",
                frozen.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
        });
    }
    if let Some(expiry) = policy.and_then(|p| p.expiry().ok().flatten())
        && now >= expiry
    {
        let at = expiry.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        return Err(refusal(
            format!("the policy's expiry ({at})"),
            format!("the policy expired at {at}, and the server signs nothing for this wallet after it"),
        ));
    }
    Ok(())
}

/// Whether one more transaction by `tool` may be sent at `now` under `policy`'s calls rules.
pub fn may_send(policy: &Policy, usage: &Usage, tool: &str, now: DateTime<Utc>) -> Result<(), Refusal> {
    for rule in &policy.calls {
        if rule.tool.as_deref().is_some_and(|t| tool_key(t) != tool_key(tool)) {
            continue;
        }
        let sent = usage.sent(now, rule.per, rule.tool.as_deref());
        if sent >= u64::from(rule.max) {
            let of = rule.tool.as_deref().map_or_else(String::new, |t| format!("{} ", tool_key(t)));
            return Err(refusal(
                format!("{of}calls per {} ({})", rule.per, rule.max),
                format!("{sent} transactions were signed in that period, the most it allows"),
            ));
        }
    }
    Ok(())
}

/// What `policy` says of `attempt` at `now`, given `usage`; `approved`: the hold reasons the human
/// confirmed for this very call on its page. A hold passes only when the human saw and confirmed
/// that very reason (the same overrun, the same first payment); a refusal never passes.
pub fn decide(
    policy: &Policy,
    usage: &Usage,
    attempt: &Attempt,
    now: DateTime<Utc>,
    approved: &[String],
) -> Verdict {
    match check(policy, usage, attempt, now) {
        Err(refused) => Verdict::Refuse(refused),
        Ok(holds) if holds.iter().all(|h| approved.contains(h)) => Verdict::Allow,
        Ok(holds) => Verdict::Hold(holds),
    }
}

/// The refusal of `attempt`, or the holds it must pass.
fn check(
    policy: &Policy,
    usage: &Usage,
    attempt: &Attempt,
    now: DateTime<Utc>,
) -> Result<Vec<String>, Refusal> {
    let c = &attempt.currency;
    let parties = &policy.counterparties;
    let to = attempt.counterparty;
    if let Some(to) = to
        && parties.deny.contains(&to)
    {
        return Err(refusal("the denylist".into(), format!("{to} is on it")));
    }
    if let Some(allow) = &parties.allow
        && !to.is_some_and(|to| allow.contains(&to))
    {
        let who = to.map_or_else(
            || "a pact anyone may accept pays nobody named".into(),
            |to| format!("{to} is not on it"),
        );
        return Err(refusal(
            "the allowlist".into(),
            format!("{who}; only the listed counterparties are paid"),
        ));
    }
    for rule in &policy.per_call {
        if !names(&rule.currency, c)
            || rule.tool.as_deref().is_some_and(|t| tool_key(t) != tool_key(&attempt.tool))
        {
            continue;
        }
        let max = limit(&rule.max, c)?;
        if attempt.amount > max {
            let of = rule.tool.as_deref().map_or_else(String::new, |t| format!(" of {}", tool_key(t)));
            return Err(refusal(
                format!("the per-call cap{of} ({})", c.show(max)),
                format!("this call would spend {}", c.show(attempt.amount)),
            ));
        }
    }
    may_send(policy, usage, &attempt.tool, now)?;
    let mut holds = Vec::new();
    for rule in &policy.budget {
        if !names(&rule.currency, c) {
            continue;
        }
        let max = limit(&rule.max, c)?;
        let spent = usage.spent(now, rule.per, c.address, None);
        let after = spent.saturating_add(attempt.amount);
        if after <= max {
            continue;
        }
        let name = format!("the {} budget per {} ({})", c.symbol, rule.per, c.show(max));
        match rule.over {
            Over::Refuse => {
                return Err(refusal(
                    name,
                    format!(
                        "{} is spent in that period and this call would spend {}",
                        c.show(spent),
                        c.show(attempt.amount)
                    ),
                ));
            }
            Over::Ask => holds.push(format!(
                "this would pass the {} budget per {} by {}",
                c.symbol,
                rule.per,
                c.show(after - max)
            )),
        }
    }
    if let Some(to) = to {
        for rule in &parties.budget {
            if !names(&rule.currency, c) {
                continue;
            }
            let max = limit(&rule.max, c)?;
            let spent = usage.spent(now, rule.per, c.address, Some(to));
            if spent.saturating_add(attempt.amount) > max {
                return Err(refusal(
                    format!("the budget per counterparty ({} per {})", c.show(max), rule.per),
                    format!(
                        "{} went to {to} in that period and this call would send {}",
                        c.show(spent),
                        c.show(attempt.amount)
                    ),
                ));
            }
        }
    }
    let listed = parties.allow.as_ref().is_some_and(|allow| to.is_some_and(|to| allow.contains(&to)));
    if !listed && !usage.known_counterparty {
        let first = to.map_or_else(
            || "a pact anyone may accept (nobody named is paid yet)".to_owned(),
            |to| format!("first payment to {to}"),
        );
        match parties.first_time {
            FirstTime::Allow => {}
            FirstTime::Ask => holds.push(first),
            FirstTime::Refuse => {
                return Err(refusal(
                    "first-time counterparties are refused".into(),
                    format!("this would be the {first}"),
                ));
            }
        }
    }
    Ok(holds)
}

/// `max` (a policy's amount) in base units of `currency`; an amount that does not read is a
/// refusal naming it (a stored policy was checked when set, so this is a policy the server
/// cannot read, and nothing is sent under it).
fn limit(max: &str, currency: &Currency) -> Result<U256, Refusal> {
    currency.parse(max).map_err(|e| {
        refusal(
            "an unreadable policy".into(),
            format!("its amount {max:?} does not read in {} ({e}); set the policy again", currency.symbol),
        )
    })
}

/// A refusal by `rule`, saying `why` in the policy's sentence.
fn refusal(rule: String, why: String) -> Refusal {
    let sentence = format!("The wallet policy refuses this: {rule} — {why}. Nothing was sent.");
    Refusal { rule, sentence }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eth() -> Currency {
        Currency::eth()
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).expect("a time in range")
    }

    fn wei(n: u64) -> U256 {
        U256::from(n)
    }

    fn policy(toml_like: impl FnOnce(&mut Policy)) -> Policy {
        let mut p = Policy {
            wallet: Address::repeat_byte(1),
            chain_id: 84532,
            expires_at: None,
            budget: Vec::new(),
            calls: Vec::new(),
            per_call: Vec::new(),
            counterparties: Counterparties { first_time: FirstTime::Allow, ..Counterparties::default() },
        };
        toml_like(&mut p);
        p
    }

    fn attempt(amount: U256, to: Option<Address>) -> Attempt {
        Attempt { tool: "create-pact".into(), currency: eth(), amount, counterparty: to }
    }

    fn spent(at: DateTime<Utc>, amount: U256, to: Option<Address>) -> Spent {
        Spent { at, currency: Address::ZERO, amount, counterparty: to }
    }

    fn budget(max: &str, per: &str, over: Over) -> Budget {
        Budget { currency: "eth".into(), per: Period::parse(per).expect("a period"), max: max.into(), over }
    }

    #[test]
    fn periods_read_and_print_in_their_units_and_nonsense_is_refused() {
        assert_eq!(Period::parse("1d").map(|p| p.seconds), Ok(86_400));
        assert_eq!(Period::parse("90m").map(|p| p.to_string()), Ok("90m".into()));
        assert_eq!(Period::parse("120m").map(|p| p.to_string()), Ok("2h".into()));
        assert_eq!(Period::parse("366d").map(|p| p.seconds), Ok(MAX_PERIOD_SECONDS));
        for bad in ["", "0s", "367d", "1w", "d", "-1h", "1.5h", "99999999999999999999d"] {
            assert!(Period::parse(bad).is_err(), "{bad:?} read as a period");
        }
    }

    #[test]
    fn a_budget_allows_its_last_unit_and_refuses_the_first_past_it() {
        let p = policy(|p| p.budget.push(budget("0.000000000000001", "1d", Over::Refuse)));
        let usage = Usage { spends: vec![spent(at(0), wei(400), None)], ..Usage::default() };
        assert_eq!(decide(&p, &usage, &attempt(wei(600), None), at(10), &[]), Verdict::Allow);
        let Verdict::Refuse(r) = decide(&p, &usage, &attempt(wei(601), None), at(10), &[]) else {
            panic!("one unit past the budget passed")
        };
        assert_eq!(r.rule, "the ETH budget per 1d (0.000000000000001 ETH)");
        assert!(r.sentence.contains("Nothing was sent"), "{}", r.sentence);
        // The window is the period before now: a spend exactly one period old no longer counts.
        assert_eq!(decide(&p, &usage, &attempt(wei(1000), None), at(86_400), &[]), Verdict::Allow);
        assert!(matches!(decide(&p, &usage, &attempt(wei(1000), None), at(86_399), &[]), Verdict::Refuse(_)));
        // A human's yes never passes a refusing budget.
        assert!(matches!(
            decide(&p, &usage, &attempt(wei(601), None), at(10), &["anything".into()]),
            Verdict::Refuse(_)
        ));
    }

    #[test]
    fn a_budget_that_asks_holds_with_the_overrun_and_a_yes_lets_it_pass() {
        let p = policy(|p| p.budget.push(budget("1", "1h", Over::Ask)));
        let usage = Usage {
            spends: vec![spent(at(0), U256::from(10u64).pow(U256::from(18)), None)],
            ..Usage::default()
        };
        let big = attempt(U256::from(3u64) * U256::from(10u64).pow(U256::from(17)), None);
        let shown = vec!["this would pass the ETH budget per 1h by 0.3 ETH".to_owned()];
        assert_eq!(decide(&p, &usage, &big, at(1), &[]), Verdict::Hold(shown.clone()));
        assert_eq!(decide(&p, &usage, &big, at(1), &shown), Verdict::Allow);
        // A yes to a smaller overrun (or to another reason) is no yes to this one.
        let smaller = vec!["this would pass the ETH budget per 1h by 0.2 ETH".to_owned()];
        assert_eq!(decide(&p, &usage, &big, at(1), &smaller), Verdict::Hold(shown));
    }

    #[test]
    fn counterparties_are_refused_by_the_lists_held_the_first_time_and_capped_each_on_its_own() {
        let (a, b, c) = (Address::repeat_byte(0xa), Address::repeat_byte(0xb), Address::repeat_byte(0xc));
        let p = policy(|p| {
            p.counterparties.deny = vec![c];
            p.counterparties.first_time = FirstTime::Ask;
            p.counterparties.budget.push(CounterpartyBudget {
                currency: "ETH".into(),
                per: Period::parse("1d").expect("a period"),
                max: "0.000000000000001".into(),
            });
        });
        let fresh = Usage::default();
        assert!(
            matches!(decide(&p, &fresh, &attempt(wei(1), Some(c)), at(0), &[format!("first payment to {c}")]), Verdict::Refuse(r) if r.rule == "the denylist")
        );
        assert_eq!(
            decide(&p, &fresh, &attempt(wei(1), Some(a)), at(0), &[]),
            Verdict::Hold(vec![format!("first payment to {a}")])
        );
        let known = Usage {
            spends: vec![spent(at(0), wei(900), Some(a))],
            known_counterparty: true,
            ..Usage::default()
        };
        assert_eq!(decide(&p, &known, &attempt(wei(100), Some(a)), at(1), &[]), Verdict::Allow);
        assert!(matches!(
            decide(&p, &known, &attempt(wei(101), Some(a)), at(1), &[]),
            Verdict::Refuse(r) if r.rule == "the budget per counterparty (0.000000000000001 ETH per 1d)"
        ));
        // b is another counterparty: a's spends are not its.
        let other = Usage { known_counterparty: true, ..known };
        assert_eq!(decide(&p, &other, &attempt(wei(1000), Some(b)), at(1), &[]), Verdict::Allow);
        // An allowlist refuses whom it does not list, and a pact anyone may accept.
        let listed = policy(|p| p.counterparties.allow = Some(vec![a]));
        assert!(
            matches!(decide(&listed, &fresh, &attempt(wei(1), Some(b)), at(0), &[]), Verdict::Refuse(r) if r.rule == "the allowlist")
        );
        assert!(
            matches!(decide(&listed, &fresh, &attempt(wei(1), None), at(0), &[]), Verdict::Refuse(r) if r.rule == "the allowlist")
        );
        assert_eq!(decide(&listed, &fresh, &attempt(wei(1), Some(a)), at(0), &[]), Verdict::Allow);
    }

    #[test]
    fn calls_per_period_count_the_tool_named_and_the_expiry_and_kill_switch_stop_everything() {
        let p = policy(|p| {
            p.calls.push(Calls {
                per: Period::parse("1h").expect("a period"),
                max: 2,
                tool: Some("create_pact".into()),
            });
            p.expires_at = Some("2027-01-15T08:00:00Z".into());
        });
        let usage = Usage {
            sends: vec![
                (at(0), "create-pact".into()),
                (at(1), "withdraw".into()),
                (at(2), "create-pact".into()),
            ],
            ..Usage::default()
        };
        assert!(
            matches!(may_send(&p, &usage, "create-pact", at(3)), Err(r) if r.rule == "create-pact calls per 1h (2)")
        );
        assert_eq!(may_send(&p, &usage, "withdraw", at(3)), Ok(()));
        assert_eq!(may_send(&p, &usage, "create-pact", at(3_600)), Ok(()));
        let expiry = p.expiry().expect("it reads").expect("it is set");
        let wallet = p.wallet;
        assert_eq!(may_sign(wallet, Some(&p), None, expiry - chrono::TimeDelta::seconds(1)), Ok(()));
        assert!(
            matches!(may_sign(wallet, Some(&p), None, expiry), Err(r) if r.rule.starts_with("the policy's expiry"))
        );
        let frozen = Frozen { at: at(0), reason: Some("a loop".into()) };
        let Err(r) = may_sign(wallet, None, Some(&frozen), at(1)) else { panic!("a frozen wallet signed") };
        assert_eq!(r.rule, "the kill switch");
        assert!(
            r.sentence.contains("(a loop)") && r.sentence.contains("agentpact wallet thaw"),
            "{}",
            r.sentence
        );
    }

    #[test]
    fn a_policy_naming_what_does_not_exist_is_refused_when_set() {
        let tools = ["create-pact", "withdraw"];
        let mut p = policy(|p| {
            p.calls.push(Calls { per: Period { seconds: 60 }, max: 1, tool: Some("drain".into()) })
        });
        assert!(p.check(&tools).is_err_and(|e| e.contains("no tool \"drain\"")));
        p.calls.clear();
        p.expires_at = Some("tomorrow".into());
        assert!(p.check(&tools).is_err_and(|e| e.contains("RFC 3339")));
        p.expires_at = None;
        p.per_call.push(PerCall { tool: None, currency: "ETH".into(), max: "1e18".into() });
        assert!(p.check(&tools).is_err_and(|e| e.contains("per_call[0]")));
        p.per_call.clear();
        p.counterparties.allow = Some(vec![Address::repeat_byte(7)]);
        p.counterparties.deny = vec![Address::repeat_byte(7)];
        assert!(p.check(&tools).is_err_and(|e| e.contains("both allowed and denied")));
        p.counterparties.deny.clear();
        assert_eq!(p.check(&tools), Ok(()));
        // A currency the escrow does not take would hold nothing: refused when set, as is an
        // amount finer than its decimals.
        let usdc = Currency { address: Address::repeat_byte(0x55), symbol: "USDC".into(), decimals: 6 };
        let known = [eth(), usdc];
        p.budget.push(budget("0.5", "1d", Over::Refuse));
        assert_eq!(p.check_currencies(&known), Ok(()));
        p.per_call.push(PerCall { tool: None, currency: "USD".into(), max: "10".into() });
        assert!(
            p.check_currencies(&known).is_err_and(|e| e.contains("per_call[0]") && e.contains("ETH, USDC"))
        );
        p.per_call[0].currency = "usdc".into();
        p.per_call[0].max = "0.0000001".into();
        assert!(p.check_currencies(&known).is_err_and(|e| e.contains("per_call[0]")));
        p.per_call[0].max = "0.000001".into();
        assert_eq!(p.check_currencies(&known), Ok(()));
    }
}
