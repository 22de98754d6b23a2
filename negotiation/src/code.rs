//! The relay's refusal codes: one closed set that the server answers with, the HTTP status each
//! maps to, and the client reads back.

use agentpact_contracts::closed_set;

closed_set! {
    serde;
    /// Why the relay refused a message, as clients see it in `{"error": {"code", "message"}}`.
    pub enum Code {
        /// The message (or the request body) cannot be read, or holds a value that cannot be.
        BadMessage => "BAD_MESSAGE",
        /// The signature is not the sender's.
        BadSignature => "BAD_SIGNATURE",
        /// The timestamp is too far from the relay's clock.
        StaleMessage => "STALE_MESSAGE",
        /// The recipient of an opening message is not a registered agent.
        NotRegistered => "NOT_REGISTERED",
        /// The very same message was accepted before.
        Replayed => "REPLAYED",
        /// The conversation does not exist.
        NoConversation => "NO_CONVERSATION",
        /// The conversation is over.
        ConversationClosed => "CONVERSATION_CLOSED",
        /// The conversation's clock ran out.
        ConversationExpired => "CONVERSATION_EXPIRED",
        /// The sender or recipient is not a party.
        WrongParties => "WRONG_PARTIES",
        /// The state machine refuses this message here.
        IllegalTransition => "ILLEGAL_TRANSITION",
        /// The pact does not carry the agreed terms.
        PactMismatch => "PACT_MISMATCH",
        /// The conversation holds the most messages the relay keeps.
        ConversationFull => "CONVERSATION_FULL",
        /// The relay failed (its database); retry.
        Internal => "INTERNAL",
    }
}

impl Code {
    /// The code as sent (`BAD_SIGNATURE`): its [`name`](Self::name), under the word the error
    /// bodies use.
    pub const fn as_str(self) -> &'static str {
        self.name()
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
