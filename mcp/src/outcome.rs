//! What a tool answers: a sentence for the agent and the same facts as structured JSON; or an
//! error (`isError: true`) whose kind tells the agent whether to fix its input, fund its wallet,
//! wait, or retry.

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::Value;

use agentpact_push::Refusal;
use alloy::{
    primitives::{B256, U256},
    providers::PendingTransactionError,
    transports::{RpcError, TransportErrorKind},
};

use crate::{input::InvalidInput, revert::Revert};

/// A tool's success: the sentence and the structured result, of the type its `outputSchema`
/// is made from (`Value` once written as JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<T = Value> {
    /// One or two sentences in the spirit of seed 002's examples.
    pub text: String,
    /// The same facts for programs.
    pub data: T,
}

impl<T: Serialize> Answer<T> {
    /// An answer of `text` and `data`.
    pub fn new(text: impl Into<String>, data: T) -> Result<Self, ToolError> {
        Ok(Self { text: text.into(), data })
    }

    /// The answer with its data written as JSON, its addresses checksummed.
    pub fn into_json(self) -> Result<Answer, ToolError> {
        let data = serde_json::to_value(&self.data)
            .map(crate::views::checksummed)
            .map_err(|source| ToolError::Unserializable { what: "the answer", source })?;
        Ok(Answer { text: self.text, data })
    }
}

/// Why a tool did not do what was asked: each variant is one cause, with its code
/// ([`ToolError::code`], docs/mcp.md §Errors), the sentence the agent reads, and the error it came
/// from as its `source` when it has one. None of these carries a secret.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The input is wrong; nothing was sent.
    #[error("Invalid input: {}", elide_quoted(.0))]
    Invalid(String),
    /// Terms the contract would refuse; nothing was sent. A sentence about a clock says the
    /// chain's time, `now`, which it is held to.
    #[error("Invalid input: {}{}", elide_quoted(&.source.to_string()), chain_time(.source, .now))]
    Terms {
        /// What the contract would refuse.
        #[source]
        source: agentpact_contracts::rules::TermsError,
        /// The chain's latest block time.
        now: u64,
    },
    /// A negotiation's terms that make no pact (no deadline, a price finer than its currency).
    #[error("Invalid input: {}", elide_quoted(&.0.to_string()))]
    Agreement(#[source] agentpact_negotiation::AgreementError),
    /// A page or filter the index refuses (a cursor of another list, a page too large).
    #[error("Invalid input: {}", elide_quoted(&.0.to_string()))]
    BadQuery(#[source] agentpact_read::ReadError),
    /// A webhook request the policy refuses as given (its secret, its filters, an unknown id).
    #[error("Invalid input: {}", elide_quoted(&.0.to_string()))]
    Webhook(#[source] Refusal),
    /// The contract would refuse (found by simulation; nothing was sent), or refused.
    #[error("The contract refused with {}: {}", .0.name, .0.sentence)]
    Reverted(Revert),
    /// The wallet cannot pay the value (plus gas).
    #[error(
        "Insufficient funds: this needs {need} plus gas, the wallet {address} holds {have}. Fund it and try again."
    )]
    InsufficientFunds {
        /// What is needed, with its currency.
        need: String,
        /// What is held, with its currency.
        have: String,
        /// The wallet.
        address: String,
    },
    /// The value is above the configured spending cap; nothing was sent.
    #[error(
        "Refused: {value} is above the spending cap of {cap} ({setting}). Ask the operator to raise it if this is intended."
    )]
    OverCap {
        /// The value asked, with its currency.
        value: String,
        /// The cap, with its currency.
        cap: String,
        /// The setting that holds the cap.
        setting: &'static str,
    },
    /// The RPC does not answer; nothing may have been sent.
    #[error("The chain's RPC is unreachable ({0}). Nothing was sent; retry when it is back.")]
    RpcDown(#[source] TransportErrorKind),
    /// The RPC answered a request with an error of its own.
    #[error("The RPC answered with an error: {0}")]
    RpcAnswer(#[source] Box<RpcError<TransportErrorKind>>),
    /// The RPC answered no latest block.
    #[error("The chain's RPC returned no latest block; retry in a moment.")]
    NoLatestBlock,
    /// A transaction could not be simulated or sent for a reason that is not the contract's.
    #[error("The transaction could not be prepared: {0}")]
    Unprepared(#[source] Box<alloy::contract::Error>),
    /// A contract read failed for a reason that is not the contract's refusal.
    #[error("reading {what} failed: {source}")]
    ReadFailed {
        /// What was read ("pact #3", "the USDC credit").
        what: String,
        /// Why.
        #[source]
        source: Box<alloy::contract::Error>,
    },
    /// The chain reported a code (a pact's status, its initiator) this server does not know.
    #[error("pact #{pact}: {source}")]
    UnknownCode {
        /// The pact.
        pact: U256,
        /// The code.
        #[source]
        source: agentpact_contracts::UnknownCode,
    },
    /// Sent, but not mined before the call's time ran out: it may still be mined.
    #[error(
        "Transaction {tx} was sent and is pending: not mined within {seconds} s. Do not send it again: get-transaction with this hash (or get-pact) says when it is mined."
    )]
    Pending {
        /// The transaction hash.
        tx: String,
        /// The wait.
        seconds: u64,
    },
    /// Sent, then its receipt could not be watched: it may still be mined.
    #[error(
        "Transaction {tx} was sent{}. It may still be mined: check get-pact before retrying.",
        unwatched(.source)
    )]
    ReceiptLost {
        /// The transaction hash.
        tx: B256,
        /// Why the watch failed.
        #[source]
        source: Box<PendingTransactionError>,
    },
    /// Mined, but reverted: the chain changed between the simulation and the block.
    #[error(
        "Transaction {tx} was mined but reverted (the chain changed after the simulation); read the pact and try again."
    )]
    MinedReverted {
        /// The transaction hash.
        tx: B256,
    },
    /// Mined, but its receipt lacks the event the write must emit (the pact it created, the
    /// offer it made), so its outcome cannot be told.
    #[error(
        "Transaction {tx} was mined but its receipt holds no {event} event; read the pact (get-pact, list-pacts) before trying again."
    )]
    Unannounced {
        /// The transaction hash.
        tx: B256,
        /// The event's name.
        event: &'static str,
    },
    /// The call ran out of time before it sent anything; nothing was sent.
    #[error(
        "The call ran past its {seconds} s limit before sending anything, so nothing was sent. Try again; if it keeps happening the chain's RPC or the index is slow."
    )]
    TimedOut {
        /// The limit.
        seconds: u64,
    },
    /// The client cancelled the call before it sent anything; nothing was sent.
    #[error("The call was cancelled before it sent anything; nothing was sent.")]
    Cancelled,
    /// The call's task ended without an outcome (it panicked or was aborted).
    #[error("the call stopped: {0}")]
    Stopped(#[source] tokio::task::JoinError),
    /// The wallet policy refused the call (a budget, a list, the kill switch, the expiry …);
    /// nothing was sent.
    #[error("{}", .0.sentence)]
    Forbidden(crate::policy::rules::Refusal),
    /// The wallet policy's tables could not be read or written; nothing was sent.
    #[error(
        "the wallet policy could not be read or written ({0}); nothing was sent: retry, or ask the operator"
    )]
    PolicyStore(#[source] sqlx::Error),
    /// A spend above the confirmation threshold that the human did not confirm; nothing was sent.
    #[error("Not confirmed: {0}")]
    Unconfirmed(String),
    /// The human was asked to confirm a spend within the call and the client brought no answer;
    /// nothing was sent.
    #[error("Not confirmed: The human was asked to confirm and did not answer ({0}); nothing was sent.")]
    Unanswered(#[source] rmcp::service::ElicitationError),
    /// The confirmations' table could not be read or written.
    #[error("the confirmation could not be read or written ({0}); nothing was sent")]
    ConfirmationStore(#[source] sqlx::Error),
    /// No loopback port could be opened for the confirmation page.
    #[error("no loopback port for the confirmation page: {0}")]
    NoLoopbackPort(#[source] std::io::Error),
    /// The confirmation page's address is not a URL.
    #[error("the confirmation page's address: {0}")]
    PageAddress(#[source] UrlError),
    /// A value could not be written as JSON.
    #[error("{what} could not be written as JSON: {source}")]
    Unserializable {
        /// What ("the answer", "the confirmation").
        what: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The agent's key could not sign.
    #[error("signing the {what} failed")]
    Signing {
        /// What was signed ("request", "message", "permit").
        what: &'static str,
        /// Why.
        #[source]
        source: alloy::signers::Error,
    },
    /// The tool is not one of this server's role.
    #[error("The tool {tool} is not available to the {role} role.")]
    NotInRole {
        /// The tool.
        tool: String,
        /// The role.
        role: String,
    },
    /// No tool has this name (a resource read through a tool that is gone).
    #[error("no tool {0}")]
    NoTool(String),
    /// The negotiation relay refused a message; its code is the error's.
    #[error("The relay refused ({}): {message}", .code.as_str())]
    Relay {
        /// The relay's code (BAD_SIGNATURE, ILLEGAL_TRANSITION, …).
        code: agentpact_negotiation::Code,
        /// What it said.
        message: String,
    },
    /// The relay could not be reached or answered something unreadable.
    #[error(transparent)]
    RelayFailed(agentpact_negotiation::ClientError),
    /// The relay answered a time that is not RFC 3339.
    #[error("the relay answered expiresAt {given:?}, not an RFC 3339 time")]
    RelayTime {
        /// What it answered.
        given: String,
        /// Why it does not read.
        #[source]
        source: chrono::ParseError,
    },
    /// The index holds a value that cannot be read back: nothing the agent sent is wrong, and
    /// retrying does not help until the operator re-indexes.
    #[error("The index is damaged: {0}")]
    IndexCorrupt(#[source] agentpact_schema::Corrupt),
    /// The index's database could not be read; the cause is logged, not shown.
    #[error("The index is unavailable right now; try again shortly.")]
    IndexUnavailable(#[source] sqlx::Error),
    /// The index has not read which currencies the escrow takes, and `field` names none.
    #[error(
        "{field}: the index has not read which currencies the escrow takes yet; retry in a moment, or name the currency"
    )]
    CurrenciesUnread {
        /// The input that would name one.
        field: String,
    },
    /// The index lists currencies, but not ETH.
    #[error("{field}: the index lists no ETH")]
    NoEth {
        /// The input that would name a currency.
        field: String,
    },
    /// An ERC-8004 agent the index holds with no address to reach it at.
    #[error("ERC-8004 agent #{id} has neither a wallet nor an owner in the index")]
    Ownerless {
        /// Its token id.
        id: U256,
    },
    /// The server's policy refuses the request (a webhook target, a cap); nothing was stored.
    #[error("Refused: {0}")]
    Refused(#[source] Refusal),
    /// An offer to settle stands on the pact and this wallet has used its one `voidOffers`: the
    /// verdict is not sent, since an acceptance mined ahead of it could take an offer priced
    /// before it (docs/contracts.md §Verdicts void offers).
    #[error(
        "Refused: an offer to settle pact #{pact_id} stands until {expires_at} (Unix), made after this wallet \
         voided the pact's offers, so a verdict sent now could be overtaken by its acceptance; nothing was \
         sent. Give the verdict once the offer is withdrawn, lapses or expires: none can stand from {offers_end} \
         (Unix), the last hour of the window."
    )]
    OfferStands {
        /// The pact.
        pact_id: U256,
        /// When the standing offer expires.
        expires_at: u64,
        /// The first second of the window's last hour, from which no offer stands.
        offers_end: u64,
    },
    /// The webhook policy refused the request this server signed itself (its key or its clock).
    #[error("{0}")]
    SelfRefused(#[source] Refusal),
    /// The webhook store failed otherwise (its HTTP client).
    #[error(transparent)]
    Push(agentpact_push::PushError),
    /// The server lacks a setting the tool needs; the message names it and what to set it to.
    /// Nothing was sent; retrying does not help until the operator sets it and restarts the server.
    #[error("Not configured: {0}")]
    NotConfigured(#[from] Missing),
}

/// A setting the server lacks for a tool, with what to set it to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    /// No negotiation relay: `HIRE_RELAY_URL`.
    #[error(
        "no negotiation relay is configured. Set HIRE_RELAY_URL (or --relay-url) to the base URL of \
         an `agentpact serve` on this chain (e.g. http://127.0.0.1:8080/: it serves the relay at \
         /hire) and restart `agentpact mcp`. Nothing was sent."
    )]
    Relay,
    /// No webhook store.
    #[error("webhooks are not configured on this server: ask its operator")]
    Webhooks,
    /// No ERC-8004 registries on this chain: `ERC8004_IDENTITY_ADDRESS`,
    /// `ERC8004_REPUTATION_ADDRESS`.
    #[error(
        "erc8004: chain {chain_id} has no ERC-8004 registries configured{}. Set ERC8004_IDENTITY_ADDRESS and \
         ERC8004_REPUTATION_ADDRESS (--erc8004-identity-address, --erc8004-reputation-address) to the \
         registries deployed on this chain and restart `agentpact mcp`, or retry register_agent with \
         erc8004: false. Nothing was sent.",
        .absent.as_ref().map_or_else(String::new, |a| format!(" ({a})"))
    )]
    Erc8004 {
        /// The chain.
        chain_id: u64,
        /// The configured registries that hold no contract here, named (Base Sepolia's
        /// singletons on a local chain with its id); `None` when none is configured.
        absent: Option<String>,
    },
    /// A confirmation page over HTTP for a request that named no `Host`: `MCP_PUBLIC_URL`.
    #[error(
        "the request named no Host, so no confirmation page can be offered: set MCP_PUBLIC_URL to the \
         address clients reach this server at and restart `agentpact mcp`. Nothing was sent."
    )]
    PublicUrl,
}

/// Why a URL does not read (the `url` crate's `ParseError`, as reqwest's `Url` reports it).
pub type UrlError = <alloy::transports::http::reqwest::Url as std::str::FromStr>::Err;

/// The clause a clock's refusal ends with: the chain's time it was held to.
fn chain_time(e: &agentpact_contracts::rules::TermsError, now: &u64) -> String {
    use agentpact_contracts::rules::TermsError;
    match e {
        TermsError::Deadline { .. } | TermsError::AcceptBy { .. } => format!(" (the chain's time is {now})"),
        _ => String::new(),
    }
}

/// How a receipt's watch failed, as a clause after "Transaction … was sent".
fn unwatched(e: &PendingTransactionError) -> String {
    match e {
        PendingTransactionError::TransportError(t) => {
            format!(", then the RPC failed while waiting for its receipt ({t})")
        }
        other => format!(" but its receipt could not be watched ({other})"),
    }
}

impl From<InvalidInput> for ToolError {
    fn from(e: InvalidInput) -> Self {
        Self::Invalid(e.0)
    }
}

impl From<agentpact_read::ReadError> for ToolError {
    fn from(e: agentpact_read::ReadError) -> Self {
        use agentpact_read::ReadError;
        match e {
            ReadError::Db(e) => {
                tracing::error!(error = %e, "the index could not be read");
                Self::IndexUnavailable(e)
            }
            ReadError::Corrupt(e) => Self::IndexCorrupt(e),
            e @ (ReadError::BadCursor(_) | ReadError::PageTooLarge { .. } | ReadError::BadArgument(_)) => {
                Self::BadQuery(e)
            }
        }
    }
}

/// The relay's tables fail as the index does: they share its database, and their reads serve
/// tools beside the index's.
impl From<agentpact_negotiation::StoreError> for ToolError {
    fn from(e: agentpact_negotiation::StoreError) -> Self {
        use agentpact_negotiation::StoreError;
        use agentpact_read::ReadError;
        match e {
            StoreError::Db(e) => ReadError::Db(e),
            StoreError::Corrupt(e) => ReadError::Corrupt(e),
            StoreError::PageTooLarge { max, asked } => ReadError::PageTooLarge { max, asked },
        }
        .into()
    }
}

impl From<agentpact_negotiation::ClientError> for ToolError {
    fn from(e: agentpact_negotiation::ClientError) -> Self {
        match e {
            agentpact_negotiation::ClientError::Refused { code, message } => Self::Relay { code, message },
            other => Self::RelayFailed(other),
        }
    }
}

impl From<agentpact_push::PushError> for ToolError {
    fn from(e: agentpact_push::PushError) -> Self {
        use agentpact_push::PushError;
        match e {
            PushError::Database(e) => agentpact_read::ReadError::Db(e).into(),
            PushError::Corrupt(e) => Self::IndexCorrupt(e),
            other => Self::Push(other),
        }
    }
}

impl From<agentpact_push::subscription::RegisterError> for ToolError {
    fn from(e: agentpact_push::subscription::RegisterError) -> Self {
        use agentpact_push::subscription::RegisterError;
        match e {
            RegisterError::Refused(refusal @ (Refusal::Target(_) | Refusal::TooMany { .. })) => {
                Self::Refused(refusal)
            }
            // The server signed the request itself: a signature refused is its key's or clock's
            // fault, not the agent's input.
            RegisterError::Refused(refusal @ (Refusal::NotSigned(_) | Refusal::Stale { .. })) => {
                Self::SelfRefused(refusal)
            }
            RegisterError::Refused(refusal) => Self::Webhook(refusal),
            RegisterError::Push(e) => e.into(),
        }
    }
}

impl ToolError {
    /// A stable code for programs (the `error.code` of the structured result).
    pub const fn code(&self) -> &'static str {
        match self {
            Self::Invalid(_)
            | Self::Terms { .. }
            | Self::Agreement(_)
            | Self::BadQuery(_)
            | Self::Webhook(_) => "INVALID_INPUT",
            Self::Reverted(_) => "CONTRACT_REVERT",
            Self::InsufficientFunds { .. } => "INSUFFICIENT_FUNDS",
            Self::OverCap { .. } => "SPENDING_CAP",
            Self::RpcDown(_) => "RPC_UNAVAILABLE",
            Self::Pending { .. } => "PENDING",
            Self::TimedOut { .. } => "TIMEOUT",
            Self::Cancelled => "CANCELLED",
            Self::Unconfirmed(_) | Self::Unanswered(_) => "NOT_CONFIRMED",
            Self::NotInRole { .. } | Self::Forbidden(_) => "FORBIDDEN",
            Self::Refused(_) | Self::OfferStands { .. } => "REFUSED",
            Self::NotConfigured(_) => "NOT_CONFIGURED",
            Self::Relay { code, .. } => code.as_str(),
            Self::IndexCorrupt(_) => "INDEX_CORRUPT",
            Self::RpcAnswer(_)
            | Self::NoLatestBlock
            | Self::Unprepared(_)
            | Self::ReadFailed { .. }
            | Self::UnknownCode { .. }
            | Self::ReceiptLost { .. }
            | Self::MinedReverted { .. }
            | Self::Unannounced { .. }
            | Self::Stopped(_)
            | Self::ConfirmationStore(_)
            | Self::PolicyStore(_)
            | Self::NoLoopbackPort(_)
            | Self::PageAddress(_)
            | Self::Unserializable { .. }
            | Self::Signing { .. }
            | Self::NoTool(_)
            | Self::RelayFailed(_)
            | Self::RelayTime { .. }
            | Self::IndexUnavailable(_)
            | Self::CurrenciesUnread { .. }
            | Self::NoEth { .. }
            | Self::Ownerless { .. }
            | Self::SelfRefused(_)
            | Self::Push(_) => "INTERNAL",
        }
    }

    /// Whether the request is at fault (INVALID_INPUT), not the server or the chain.
    pub fn blames_input(&self) -> bool {
        self.code() == "INVALID_INPUT"
    }

    /// The structured form: code, message, and the revert's name or the transaction's hash when
    /// there is one.
    pub fn data(&self) -> Failure {
        Failure {
            error: FailureBody {
                code: self.code(),
                message: self.to_string(),
                revert: match self {
                    Self::Reverted(r) => Some(r.name.to_owned()),
                    _ => None,
                },
                tx_hash: match self {
                    Self::Pending { tx, .. } => Some(tx.clone()),
                    _ => None,
                },
            },
        }
    }
}

/// The structured result of a failed call (`isError: true`): every tool's `outputSchema` allows
/// it beside the tool's own answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Failure {
    /// What went wrong.
    pub error: FailureBody,
}

/// What went wrong, for programs.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureBody {
    /// INVALID_INPUT, CONTRACT_REVERT, INSUFFICIENT_FUNDS, SPENDING_CAP, NOT_CONFIRMED,
    /// RPC_UNAVAILABLE, PENDING, TIMEOUT, CANCELLED, FORBIDDEN, REFUSED, NOT_CONFIGURED, INDEX_CORRUPT,
    /// INTERNAL, or a relay's code (BAD_SIGNATURE, ILLEGAL_TRANSITION, …).
    pub code: &'static str,
    /// The sentence the text content says.
    pub message: String,
    /// The contract's error name, for CONTRACT_REVERT; null otherwise.
    pub revert: Option<String>,
    /// The transaction sent and not yet mined, for PENDING; null otherwise.
    pub tx_hash: Option<String>,
}

/// A message about bad input, without repeating the input at length: a value quoted in it (`"…"`
/// or `` `…` ``, as serde quotes) longer than 40 characters, a megabyte string sent as an address
/// say, is cut to its start and an ellipsis.
pub(crate) fn elide_quoted(message: &str) -> String {
    const KEEP: usize = 40;
    let mut said = String::new();
    let (mut open, mut run) = (None, 0);
    for c in message.chars() {
        match open {
            Some(quote) if c != quote => {
                run += 1;
                if run <= KEEP {
                    said.push(c);
                } else if run == KEEP + 1 {
                    said.push('…');
                }
                continue;
            }
            Some(_) => open = None,
            None if c == '"' || c == '`' => (open, run) = (Some(c), 0),
            None => {}
        }
        said.push(c);
    }
    said
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use agentpact_negotiation::{ClientError, Code};

    use super::ToolError;

    /// The relay's code comes through as its `Code`, not as text: the structured error's code is
    /// the relay's, and the sentence says it.
    #[test]
    fn a_relay_refusal_keeps_its_code() {
        let refused: ToolError =
            ClientError::Refused { code: Code::IllegalTransition, message: "not your turn".into() }.into();
        assert!(matches!(refused, ToolError::Relay { code: Code::IllegalTransition, .. }), "{refused:?}");
        let data = refused.data();
        assert_eq!(
            (data.error.code, data.error.message.as_str()),
            ("ILLEGAL_TRANSITION", "The relay refused (ILLEGAL_TRANSITION): not your turn")
        );
    }

    /// An error made from a cause keeps it as its source, so a log or a program can walk the
    /// chain down to what failed; the sentence the agent reads is unchanged.
    #[test]
    fn an_error_made_from_a_cause_keeps_it_as_its_source() {
        let cause = agentpact_contracts::UnknownCode { kind: "status", code: 9 };
        let error = ToolError::UnknownCode { pact: alloy::primitives::U256::from(3), source: cause };
        assert_eq!(error.to_string(), "pact #3: unknown status code 9");
        let source = error.source().and_then(|s| s.downcast_ref::<agentpact_contracts::UnknownCode>());
        assert_eq!(source, Some(&cause));
        let down = crate::chain::rpc(alloy::transports::RpcError::Transport(
            alloy::transports::TransportErrorKind::BackendGone,
        ));
        assert_eq!(down.code(), "RPC_UNAVAILABLE");
        assert!(down.source().is_some_and(|s| s.is::<alloy::transports::TransportErrorKind>()), "{down:?}");
    }

    #[test]
    fn long_quoted_input_is_cut_and_the_rest_of_the_message_kept() {
        let long = "9".repeat(1 << 20);
        let error = ToolError::Invalid(format!("accept-pact: invalid type: string \"{long}\", expected u64"));
        let said = error.to_string();
        assert!(said.len() < 200, "{said}");
        assert!(
            said.ends_with(", expected u64") && said.contains(&format!("\"{}…\"", "9".repeat(40))),
            "{said}"
        );
        let short = ToolError::Invalid("oracles[0]: \"0x1234\" is not an address".into()).to_string();
        assert_eq!(short, "Invalid input: oracles[0]: \"0x1234\" is not an address");
    }
}
