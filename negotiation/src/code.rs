//! The relay's refusal codes: one closed set that the server answers with, the HTTP status each
//! maps to, and the client reads back.

use serde::{Deserialize, Serialize};

/// Why the relay refused a message, as clients see it in `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// The message (or the request body) cannot be read, or holds a value that cannot be.
    BadMessage,
    /// The signature is not the sender's.
    BadSignature,
    /// The timestamp is too far from the relay's clock.
    StaleMessage,
    /// The recipient of an opening message is not a registered agent.
    NotRegistered,
    /// The very same message was accepted before.
    Replayed,
    /// The conversation does not exist.
    NoConversation,
    /// The conversation is over.
    ConversationClosed,
    /// The conversation's clock ran out.
    ConversationExpired,
    /// The sender or recipient is not a party.
    WrongParties,
    /// The state machine refuses this message here.
    IllegalTransition,
    /// The pact does not carry the agreed terms.
    PactMismatch,
    /// The conversation holds the most messages the relay keeps.
    ConversationFull,
    /// The relay failed (its database); retry.
    Internal,
}

impl Code {
    /// Every code.
    pub const ALL: [Self; 13] = [
        Self::BadMessage,
        Self::BadSignature,
        Self::StaleMessage,
        Self::NotRegistered,
        Self::Replayed,
        Self::NoConversation,
        Self::ConversationClosed,
        Self::ConversationExpired,
        Self::WrongParties,
        Self::IllegalTransition,
        Self::PactMismatch,
        Self::ConversationFull,
        Self::Internal,
    ];

    /// The code as sent (`BAD_SIGNATURE`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BadMessage => "BAD_MESSAGE",
            Self::BadSignature => "BAD_SIGNATURE",
            Self::StaleMessage => "STALE_MESSAGE",
            Self::NotRegistered => "NOT_REGISTERED",
            Self::Replayed => "REPLAYED",
            Self::NoConversation => "NO_CONVERSATION",
            Self::ConversationClosed => "CONVERSATION_CLOSED",
            Self::ConversationExpired => "CONVERSATION_EXPIRED",
            Self::WrongParties => "WRONG_PARTIES",
            Self::IllegalTransition => "ILLEGAL_TRANSITION",
            Self::PactMismatch => "PACT_MISMATCH",
            Self::ConversationFull => "CONVERSATION_FULL",
            Self::Internal => "INTERNAL",
        }
    }

    /// The HTTP status the relay answers it with: 400 unreadable or stale, 401 bad signature, 403
    /// an opening message to someone who is not a registered agent, 404 no such conversation, 409
    /// replayed or refused by the state machine, 410 closed or expired, 500 the relay's own
    /// failure.
    pub const fn http_status(self) -> u16 {
        match self {
            Self::BadMessage | Self::StaleMessage => 400,
            Self::BadSignature => 401,
            Self::NotRegistered => 403,
            Self::NoConversation => 404,
            Self::Replayed
            | Self::WrongParties
            | Self::IllegalTransition
            | Self::PactMismatch
            | Self::ConversationFull => 409,
            Self::ConversationClosed | Self::ConversationExpired => 410,
            Self::Internal => 500,
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_sent_as_its_name_and_read_back() {
        for code in Code::ALL {
            let sent = serde_json::to_value(code).expect("a code serializes");
            assert_eq!(sent, code.as_str());
            assert_eq!(serde_json::from_value::<Code>(sent).expect("and reads back"), code);
        }
    }
}
