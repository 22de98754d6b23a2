//! What a tool's amounts are in: the currencies the escrow takes (as the index has them), which one
//! an input names, how an amount reads ("5.5 USDC"), and the token side of a deposit: the spending
//! cap, the balance, then an EIP-2612 permit when the token signs permits in the domain it
//! publishes, else an approval of exactly the deposit.

use agentpact_contracts::{TestToken, bindings::Currencies::Permit, money, permit};
use agentpact_read::Currency;
use alloy::{
    contract::{CallBuilder, CallDecoder},
    primitives::{Address, U256},
    providers::DynProvider,
};

use crate::{
    call::Call,
    chain::{Chain, Mined, Moves},
    confirm::Summary,
    input,
    outcome::ToolError,
};

/// Seconds a permit the server signs stays valid: it is used in the very next transaction.
const PERMIT_LIFETIME: u64 = 60 * 60;

/// `amount` base units of `currency` as a person reads them: `"5.5 USDC"`.
pub fn show(amount: U256, currency: &Currency) -> String {
    currency.show(amount)
}

/// A payment in stages of `amounts` as the sentences say it: `"in 3 stages (0.1 + 0.2 + 0.3 ETH)"`.
pub fn in_stages(amounts: &[U256], currency: &Currency) -> String {
    let parts: Vec<String> = amounts.iter().map(|a| currency.format(*a)).collect();
    format!("in {} stages ({} {})", amounts.len(), parts.join(" + "), currency.symbol)
}

/// A buyer's deposit of `payment` plus `stake` as the sentences say it: `"5.5 USDC (5 payment +
/// 0.5 stake)"`.
pub fn deposit_of(payment: U256, stake: U256, currency: &Currency) -> String {
    format!(
        "{} ({} payment + {} stake)",
        currency.show(payment + stake),
        currency.format(payment),
        currency.format(stake)
    )
}

impl Chain {
    /// The currencies the escrow takes, ETH first. ETH is always taken (the contract's rule), so
    /// it is known before the index has read the deployment's announcements.
    pub async fn currencies(&self) -> Result<Vec<Currency>, ToolError> {
        let mut known = self.reader.currencies(self.chain_id).await?;
        if !known.iter().any(|c| c.address.is_zero()) {
            known.insert(0, Currency::eth());
        }
        Ok(known)
    }

    /// The currency `text` names, found by the one resolver (`money::resolve`, as the relay finds
    /// a price's): "ETH" (also when absent), a symbol such as "USDC" (any ASCII case), or a token
    /// address the escrow allows.
    pub async fn currency(&self, field: &str, text: Option<&str>) -> Result<Currency, ToolError> {
        let known = self.reader.currencies(self.chain_id).await?;
        named(&known, field, text.unwrap_or("ETH"))
    }

    /// The currencies `texts` name (the list input `field`), as [`Chain::currency`] finds one,
    /// the known currencies read once.
    pub async fn currencies_named(&self, field: &str, texts: &[String]) -> Result<Vec<Currency>, ToolError> {
        let known = self.reader.currencies(self.chain_id).await?;
        texts.iter().enumerate().map(|(n, text)| named(&known, &format!("{field}[{n}]"), text)).collect()
    }

    /// What the escrow holds for this wallet in each currency it takes, ETH first.
    pub async fn credits(&self) -> Result<Vec<(Currency, U256)>, ToolError> {
        let mut credits = Vec::new();
        for currency in self.currencies().await? {
            let credit =
                self.pact.balances(currency.address, self.me).call().await.map_err(|e| {
                    crate::chain::read_failed(e, || format!("the {} credit", currency.symbol))
                })?;
            credits.push((currency, credit));
        }
        Ok(credits)
    }

    /// What this wallet holds of each token the escrow takes (ETH left out: `Chain::balance`).
    pub async fn token_balances(&self) -> Result<Vec<(Currency, U256)>, ToolError> {
        let mut held = Vec::new();
        for currency in self.currencies().await?.into_iter().filter(|c| !c.address.is_zero()) {
            let balance = self.token_balance(&currency).await?;
            held.push((currency, balance));
        }
        Ok(held)
    }

    /// What this wallet holds of the token `currency`, in its base units.
    async fn token_balance(&self, currency: &Currency) -> Result<U256, ToolError> {
        let token = TestToken::new(currency.address, self.provider.clone());
        token
            .balanceOf(self.me)
            .call()
            .await
            .map_err(|e| crate::chain::read_failed(e, || format!("the {} balance", currency.symbol)))
    }

    /// The currency of market prices `text` names; when absent, USDC where the escrow takes it
    /// (the market of seed 000 is priced in USDC), else ETH. Before the index has read the
    /// escrow's announcements the default is unknown, and that is said rather than guessed.
    pub async fn market_currency(&self, field: &str, text: Option<&str>) -> Result<Currency, ToolError> {
        if text.is_some() {
            return self.currency(field, text).await;
        }
        let indexed = self.reader.currencies(self.chain_id).await?;
        if indexed.is_empty() {
            return Err(ToolError::CurrenciesUnread { field: field.to_owned() });
        }
        let usdc = indexed.iter().find(|c| c.symbol.eq_ignore_ascii_case("USDC"));
        let eth = indexed.iter().find(|c| c.address.is_zero());
        usdc.or(eth).cloned().ok_or_else(|| ToolError::NoEth { field: field.to_owned() })
    }

    /// The currency at `address` (a pact's, as the chain reports it).
    pub async fn currency_at(&self, address: Address) -> Result<Currency, ToolError> {
        self.currency("currency", Some(&address.to_string())).await
    }

    /// Sends a write that deposits `amount` of `currency`: for ETH, `plain` with the amount as
    /// its value; for a token, within its spending cap and the wallet's balance, `with_permit` when
    /// the token takes permits (one transaction), else `plain` after approving exactly `amount`.
    pub async fn deposit<'a, D: CallDecoder, P: CallDecoder>(
        &self,
        spend: Spend,
        currency: &Currency,
        amount: U256,
        plain: CallBuilder<&'a DynProvider, D>,
        with_permit: impl FnOnce(Permit) -> CallBuilder<&'a DynProvider, P>,
    ) -> Result<Mined, ToolError> {
        self.deposit_with(spend, currency, amount, plain, Some(with_permit)).await
    }

    /// [`Chain::deposit`] for a write that has no permit variant (`createStagedPact`): a token is
    /// always approved first.
    pub async fn deposit_approving<'a, D: CallDecoder>(
        &self,
        spend: Spend,
        currency: &Currency,
        amount: U256,
        plain: CallBuilder<&'a DynProvider, D>,
    ) -> Result<Mined, ToolError> {
        let no_permit = None::<fn(Permit) -> CallBuilder<&'a DynProvider, D>>;
        self.deposit_with(spend, currency, amount, plain, no_permit).await
    }

    async fn deposit_with<'a, D: CallDecoder, P: CallDecoder>(
        &self,
        spend: Spend,
        currency: &Currency,
        amount: U256,
        plain: CallBuilder<&'a DynProvider, D>,
        with_permit: Option<impl FnOnce(Permit) -> CallBuilder<&'a DynProvider, P>>,
    ) -> Result<Mined, ToolError> {
        if currency.address.is_zero() {
            self.authorize(spend, currency, amount).await?;
            return self.write(plain, amount).await;
        }
        self.check_token_cap(currency, amount)?;
        let token = TestToken::new(currency.address, self.provider.clone());
        let held = self.token_balance(currency).await?;
        if held < amount {
            return Err(ToolError::InsufficientFunds {
                need: show(amount, currency),
                have: show(held, currency),
                address: self.me.to_checksum(None),
            });
        }
        self.authorize(spend, currency, amount).await?;
        if let Some(with_permit) = with_permit
            && let Some(permit) = self.sign_permit(&token, amount).await?
        {
            return self.write(with_permit(permit), U256::ZERO).await;
        }
        // The approval moves no money: the spend is sent (or released) with the deposit after it.
        let approve = token.approve(*self.pact.address(), amount);
        self.write_as(approve, U256::ZERO, Moves::Nothing).await?;
        self.write(plain, U256::ZERO).await
    }

    /// A permit for the escrow to take `amount`, when the token publishes a domain whose
    /// separator is the one its name, version, this chain and its address make; `None` otherwise.
    async fn sign_permit(
        &self,
        token: &TestToken::TestTokenInstance<DynProvider>,
        amount: U256,
    ) -> Result<Option<Permit>, ToolError> {
        let (Ok(name), Ok(version), Ok(separator), Ok(nonce)) = (
            token.name().call().await,
            token.version().call().await,
            token.DOMAIN_SEPARATOR().call().await,
            token.nonces(self.me).call().await,
        ) else {
            return Ok(None);
        };
        let domain = permit::domain(name, version, self.chain_id, *token.address());
        if domain.separator() != separator {
            return Ok(None);
        }
        let deadline = self.now().await? + PERMIT_LIFETIME;
        permit::sign(self.signer(), &domain, *self.pact.address(), amount, nonce, deadline)
            .map(Some)
            .map_err(|source| ToolError::Signing { what: "permit", source })
    }

    /// Refuses a token deposit above its spending cap: `MAX_VALUE_USDC` for USDC; a token with no
    /// cap setting is refused outright.
    fn check_token_cap(&self, currency: &Currency, amount: U256) -> Result<(), ToolError> {
        let cap = self.limits().max_value_usdc;
        if !currency.symbol.eq_ignore_ascii_case("USDC") {
            return Err(ToolError::OverCap {
                value: show(amount, currency),
                cap: format!("0 {} (no cap is configured for it)", currency.symbol),
                setting: "MAX_VALUE_USDC covers USDC only",
            });
        }
        if at_18_decimals(amount, currency) > cap {
            return Err(ToolError::OverCap {
                value: show(amount, currency),
                cap: format!("{} {}", input::eth(cap), currency.symbol),
                setting: "MAX_VALUE_USDC",
            });
        }
        Ok(())
    }

    /// Authorizes spending `amount` of `currency` on `spend`, before anything is signed: the
    /// spending cap first (no human is asked to confirm what the cap refuses), then the wallet
    /// policy (docs/mcp.md §Policy), then the human's yes on a confirmation page when the amount
    /// is above the confirmation threshold (`CONFIRM_ABOVE_ETH`, `CONFIRM_ABOVE_USDC`) or the
    /// policy holds the spend (one page saying every reason), then the policy's admission, which
    /// counts the spend from here on and is carried by the call to each transaction it sends.
    pub async fn authorize(&self, spend: Spend, currency: &Currency, amount: U256) -> Result<(), ToolError> {
        let mut reasons = Vec::new();
        if currency.address.is_zero() {
            self.check_eth_cap(amount)?;
        }
        let call = Call::current();
        let attempt = crate::policy::rules::Attempt {
            tool: call.as_ref().map_or_else(|| "(no call)".to_owned(), |c| c.tool().to_owned()),
            currency: currency.clone(),
            amount,
            counterparty: spend.to,
        };
        if let Some(guard) = self.guard() {
            reasons = guard.review(&attempt).await?;
        }
        // What the human will have confirmed of the policy's holds: exactly the reasons shown.
        let holds = reasons.clone();
        if let Some(threshold) = self.threshold_passed(currency, amount) {
            reasons.insert(0, threshold);
        }
        if !reasons.is_empty() {
            let call = call.as_ref().ok_or_else(|| {
                ToolError::Unconfirmed("there is no client to ask; nothing was sent.".into())
            })?;
            let summary = Summary {
                tool: call.tool().to_owned(),
                amount: show(amount, currency),
                wallet: self.me.to_checksum(None),
                counterparty: spend.counterparty,
                does: spend.does,
                reasons,
                chain_id: self.chain_id,
            };
            call.confirm(summary, self.me).await?;
        }
        if let Some(guard) = self.guard() {
            let admitted = guard.admit(&attempt, &holds).await?;
            match &call {
                Some(call) => call.admit(admitted),
                None => guard.release_unsent(&admitted).await,
            }
        }
        Ok(())
    }

    /// The confirmation threshold `amount` of `currency` passes, said as the reason to ask;
    /// `None` at or below it, or for a currency with no threshold.
    fn threshold_passed(&self, currency: &Currency, amount: U256) -> Option<String> {
        let (threshold, setting) = if currency.address.is_zero() {
            (self.limits().confirm_above, "CONFIRM_ABOVE_ETH")
        } else if currency.symbol.eq_ignore_ascii_case("USDC") {
            (self.limits().confirm_above_usdc, "CONFIRM_ABOVE_USDC")
        } else {
            return None;
        };
        (at_18_decimals(amount, currency) > threshold).then(|| {
            format!(
                "it is above the confirmation threshold of {} {} ({setting})",
                input::eth(threshold),
                currency.symbol
            )
        })
    }
}

/// A spend as the human is asked to confirm it and the wallet policy judges it: what the call
/// does and who is on the other side.
#[derive(Debug, Clone)]
pub struct Spend {
    /// What the call does, as the end of "send … into the AgentPact escrow to …".
    pub does: String,
    /// Who is on the other side, as the page says it ("anyone who accepts" when no one is named).
    pub counterparty: String,
    /// The address the wallet policy holds the spend to, when one is named.
    pub to: Option<Address>,
}

impl Spend {
    /// A spend that does `does`, paying `to` (`None`: anyone who accepts).
    pub fn paying(does: String, to: Option<Address>) -> Self {
        let counterparty = to.map_or_else(|| "anyone who accepts".to_owned(), |a| a.to_string());
        Self { does, counterparty, to }
    }
}

/// `amount` of `currency` at the 18-decimal scale the caps and thresholds are read with.
fn at_18_decimals(amount: U256, currency: &Currency) -> U256 {
    if currency.decimals <= 18 {
        amount.saturating_mul(U256::from(10u8).pow(U256::from(18 - currency.decimals)))
    } else {
        amount / U256::from(10u8).pow(U256::from(currency.decimals - 18))
    }
}

/// The currency of `known` that `text` (the input `field`) names, or why it names none.
fn named(known: &[Currency], field: &str, text: &str) -> Result<Currency, ToolError> {
    money::resolve(known, text).map_err(|why| ToolError::Invalid(format!("{field}: {why}")))
}
