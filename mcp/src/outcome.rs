//! What a tool answers: a sentence for the agent and the same facts as structured JSON; or an
//! error (`isError: true`) whose kind tells the agent whether to fix its input, fund its wallet,
//! wait, or retry.

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::Value;

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
            .map_err(|e| ToolError::Failed(format!("the answer could not be written as JSON: {e}")))?;
        Ok(Answer { text: self.text, data })
    }
}

/// Why a tool did not do what was asked. None of these carries a secret.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolError {
    /// The input is wrong; nothing was sent.
    #[error("Invalid input: {}", elide_quoted(.0))]
    Invalid(String),
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
    RpcDown(String),
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
    /// A spend above the confirmation threshold that the human did not confirm; nothing was sent.
    #[error("Not confirmed: {0}")]
    Unconfirmed(String),
    /// The tool is not one of this server's role.
    #[error("The tool {tool} is not available to the {role} role.")]
    NotInRole {
        /// The tool.
        tool: String,
        /// The role.
        role: String,
    },
    /// The negotiation relay refused a message; `code` is the relay's.
    #[error("The relay refused ({code}): {message}")]
    Relay {
        /// The relay's code (BAD_SIGNATURE, ILLEGAL_TRANSITION, …).
        code: &'static str,
        /// What it said.
        message: String,
    },
    /// The index holds a value that cannot be read back: nothing the agent sent is wrong, and
    /// retrying does not help until the operator re-indexes.
    #[error("The index is damaged: {0}")]
    IndexCorrupt(#[source] agentpact_schema::Corrupt),
    /// The index's database could not be read; the cause is logged, not shown.
    #[error("The index is unavailable right now; try again shortly.")]
    IndexUnavailable(#[source] std::sync::Arc<sqlx::Error>),
    /// The server's policy refuses the request (a webhook target, a cap); nothing was stored.
    #[error("Refused: {0}")]
    Refused(String),
    /// The server lacks a setting the tool needs; the message names it and what to set it to.
    /// Nothing was sent; retrying does not help until the operator sets it and restarts the server.
    #[error("Not configured: {0}")]
    NotConfigured(String),
    /// Something else failed (an unexpected RPC answer).
    #[error("{0}")]
    Failed(String),
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
                Self::IndexUnavailable(std::sync::Arc::new(e))
            }
            ReadError::Corrupt(e) => Self::IndexCorrupt(e),
            e @ (ReadError::BadCursor(_) | ReadError::PageTooLarge { .. } | ReadError::BadArgument(_)) => {
                Self::Invalid(e.to_string())
            }
        }
    }
}

impl From<agentpact_negotiation::StoreError> for ToolError {
    fn from(e: agentpact_negotiation::StoreError) -> Self {
        agentpact_read::ReadError::from(e).into()
    }
}

impl From<agentpact_negotiation::ClientError> for ToolError {
    fn from(e: agentpact_negotiation::ClientError) -> Self {
        match e {
            agentpact_negotiation::ClientError::Refused { code, message } => {
                Self::Relay { code: code.as_str(), message }
            }
            other => Self::Failed(other.to_string()),
        }
    }
}

impl From<agentpact_push::PushError> for ToolError {
    fn from(e: agentpact_push::PushError) -> Self {
        use agentpact_push::PushError;
        match e {
            PushError::Database(e) => agentpact_read::ReadError::Db(e).into(),
            PushError::Corrupt(e) => Self::IndexCorrupt(e),
            PushError::Client(e) => Self::Failed(format!("the HTTP client could not be built: {e}")),
        }
    }
}

impl From<agentpact_push::subscription::RegisterError> for ToolError {
    fn from(e: agentpact_push::subscription::RegisterError) -> Self {
        use agentpact_push::{Refusal, subscription::RegisterError};
        match e {
            RegisterError::Refused(refusal @ (Refusal::Target(_) | Refusal::TooMany { .. })) => {
                Self::Refused(refusal.to_string())
            }
            // The server signed the request itself: a signature refused is its key's or clock's
            // fault, not the agent's input.
            RegisterError::Refused(refusal @ (Refusal::NotSigned(_) | Refusal::Stale { .. })) => {
                Self::Failed(refusal.to_string())
            }
            RegisterError::Refused(refusal) => Self::Invalid(refusal.to_string()),
            RegisterError::Push(e) => e.into(),
        }
    }
}

impl ToolError {
    /// A stable code for programs (the `error.code` of the structured result).
    pub const fn code(&self) -> &'static str {
        match self {
            Self::Invalid(_) => "INVALID_INPUT",
            Self::Reverted(_) => "CONTRACT_REVERT",
            Self::InsufficientFunds { .. } => "INSUFFICIENT_FUNDS",
            Self::OverCap { .. } => "SPENDING_CAP",
            Self::RpcDown(_) => "RPC_UNAVAILABLE",
            Self::Pending { .. } => "PENDING",
            Self::TimedOut { .. } => "TIMEOUT",
            Self::Cancelled => "CANCELLED",
            Self::Unconfirmed(_) => "NOT_CONFIRMED",
            Self::NotInRole { .. } => "FORBIDDEN",
            Self::Refused(_) => "REFUSED",
            Self::NotConfigured(_) => "NOT_CONFIGURED",
            Self::Relay { code, .. } => code,
            Self::IndexCorrupt(_) => "INDEX_CORRUPT",
            Self::IndexUnavailable(_) | Self::Failed(_) => "INTERNAL",
        }
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
    use super::ToolError;

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
