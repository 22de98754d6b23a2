//! The closed sets GraphQL shows and takes, as enums of the schema, derived from the Rust sets
//! that own them: [`Closed<S>`] shows any [`ClosedSet`] as an enum whose values are its members'
//! names (the index's column, the protocol's field, the webhook body's `type`: one spelling
//! everywhere), each described by the member's doc comment. A member added to a set is in the
//! schema with no edit here; only the checked-in SDL changes, which
//! `checked_in_sdl_matches_the_code` compares. This module names each set in the schema, once.

use std::borrow::Cow;

use agentpact_contracts::vocab::ClosedSet;
use async_graphql::{
    ContextSelectionSet, InputType, InputValueError, InputValueResult, Name, OutputType, Positioned,
    ServerResult, Value,
    indexmap::IndexMap,
    parser::types::Field,
    registry::{Deprecation, MetaEnumValue, MetaType, MetaTypeId, Registry},
};

/// How a set's values are spelled in the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// As its names.
    Names,
    /// Its names upper-cased: the sets whose names are lower-case in the index and whose values
    /// the schema has always shown upper-cased (`instant` is `INSTANT`).
    UpperCase,
}

/// A closed set as the schema shows it.
pub trait InSchema: ClosedSet {
    /// The enum's name in the schema.
    const NAME: &'static str;
    /// What the schema says of the enum: its doc comment's lines.
    const DESCRIPTION: &'static str;
    /// How its values are spelled.
    const SPELLING: Spelling;
}

/// A member of the closed set `S`, as a value of its enum in the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Closed<S>(pub S);

impl<S> From<S> for Closed<S> {
    fn from(member: S) -> Self {
        Self(member)
    }
}

impl<S: InSchema> Closed<S> {
    /// Its value in the schema.
    fn value(self) -> Cow<'static, str> {
        match S::SPELLING {
            Spelling::Names => Cow::Borrowed(self.0.name()),
            Spelling::UpperCase => Cow::Owned(self.0.name().to_ascii_uppercase()),
        }
    }

    fn register(registry: &mut Registry) -> String {
        registry.create_input_type::<Self, _>(MetaTypeId::Enum, |_| MetaType::Enum {
            name: S::NAME.to_owned(),
            description: described(S::DESCRIPTION),
            enum_values: S::MEMBERS
                .iter()
                .map(|&member| {
                    let name = Self(member).value().into_owned();
                    let value = MetaEnumValue {
                        name: name.clone(),
                        description: described(member.doc()),
                        deprecation: Deprecation::NoDeprecated,
                        visible: None,
                        inaccessible: false,
                        tags: Vec::new(),
                        directive_invocations: Vec::new(),
                    };
                    (name, value)
                })
                .collect::<IndexMap<_, _>>(),
            visible: None,
            inaccessible: false,
            tags: Vec::new(),
            rust_typename: Some(std::any::type_name::<Self>()),
            directive_invocations: Vec::new(),
            requires_scopes: Vec::new(),
        })
    }
}

/// A doc comment's lines as the schema describes with them (as async-graphql's derives do: each
/// line trimmed, the whole trimmed); none when empty.
fn described(doc: &str) -> Option<String> {
    let text = doc.lines().map(str::trim).collect::<Vec<_>>().join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

impl<S: InSchema> InputType for Closed<S> {
    type RawValueType = Self;

    fn type_name() -> Cow<'static, str> {
        Cow::Borrowed(S::NAME)
    }

    fn create_type_info(registry: &mut Registry) -> String {
        Self::register(registry)
    }

    fn parse(value: Option<Value>) -> InputValueResult<Self> {
        let value = value.unwrap_or_default();
        let given = match &value {
            Value::Enum(name) => name.as_str(),
            Value::String(text) => text.as_str(),
            _ => return Err(InputValueError::expected_type(value)),
        };
        S::MEMBERS.iter().map(|&m| Self(m)).find(|m| m.value() == given).ok_or_else(|| {
            InputValueError::custom(format_args!(r#"Enumeration type does not contain value "{given}"."#))
        })
    }

    fn to_value(&self) -> Value {
        Value::Enum(Name::new(self.value()))
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }
}

impl<S: InSchema> OutputType for Closed<S> {
    fn type_name() -> Cow<'static, str> {
        Cow::Borrowed(S::NAME)
    }

    fn create_type_info(registry: &mut Registry) -> String {
        Self::register(registry)
    }

    async fn resolve(&self, _: &ContextSelectionSet<'_>, _: &Positioned<Field>) -> ServerResult<Value> {
        Ok(self.to_value())
    }
}

/// Names closed sets in the schema: each line declares `Alias = Set as Spelling`, the alias
/// being the schema's name for the enum, documented with what the schema says of it; the tests
/// check every set named.
macro_rules! in_schema {
    ($( $(#[doc = $doc:literal])+ $alias:ident = $set:path as $spelling:ident; )+) => {
        /// Checks each set named in the schema.
        #[cfg(test)]
        fn check_each_set() {
            $( tests::shown_as_named::<$set>(); )+
        }

        $(
            $(#[doc = $doc])+
            pub type $alias = Closed<$set>;

            impl InSchema for $set {
                const NAME: &'static str = stringify!($alias);
                const DESCRIPTION: &'static str = concat!($($doc, "\n"),+);
                const SPELLING: Spelling = Spelling::$spelling;
            }
        )+
    };
}

in_schema! {
    /// An event of AgentPact, OracleRegistry, AgentRegistry or the ERC-8004 registries, named as
    /// in the contract.
    EventKind = agentpact_contracts::EventKind as Names;
    /// Where a pact stands (the contract's `Status`).
    PactStatus = agentpact_contracts::PactStatus as Names;
    /// Which side created a pact.
    Initiator = agentpact_contracts::Initiator as Names;
    /// How a finished pact ended. The values are the index's own lower-case names, as this field
    /// returned them when it was a String: clients comparing strings read the same JSON.
    PactOutcome = agentpact_contracts::Outcome as Names;
    /// How a pact ended, as the contract's `PactEnded` says (`LIVE` until it does): the status
    /// says where the money went, the ending who decided it.
    Ending = agentpact_contracts::Ending as Names;
    /// Whether an oracle takes work.
    OracleStatus = agentpact_contracts::OracleStatus as UpperCase;
    /// When a subscription is told of an event.
    WebhookMode = agentpact_contracts::WebhookMode as UpperCase;
    /// What a webhook delivery tells; the names its body's `type` carries.
    NoticeKind = agentpact_contracts::NoticeKind as Names;
    /// Where a conversation stands (the names the relay stores and the field returned as a String
    /// before it was an enum: the JSON is the same).
    ConversationStatus = agentpact_negotiation::Status as Names;
    /// Which of an agent's conversations to list.
    ConversationFilter = agentpact_negotiation::ConversationFilter as Names;
    /// The type of a negotiation message: HIRE/1.0's names, as its envelope's `type` carries them.
    MessageType = agentpact_negotiation::MessageType as Names;
    /// Whose trust a score weighs its counterparties by.
    ScoreView = crate::read::ScoreView as Names;
    /// Why a counterparty is trusted as a rater.
    RaterSource = crate::read::RaterSource as Names;
    /// The field pacts are sorted by; the pact id breaks ties.
    PactOrderField = crate::read::PactOrderField as Names;
    /// Where an offer to settle stands.
    SettlementState = crate::read::SettlementState as Names;
    /// How wide a bucket of time is.
    Interval = crate::read::Interval as UpperCase;
    /// Ascending or descending.
    SortDirection = crate::read::SortDirection as UpperCase;
    /// Who divided a pact's money.
    DivisionKind = agentpact_contracts::rules::Division as UpperCase;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member of `S` shows as a distinct valid GraphQL name, described by its doc comment,
    /// reads back as itself (as an enum value or a variable's string), and its value is its name
    /// in the index and on the wire (upper-cased where the set says so).
    pub(super) fn shown_as_named<S: InSchema + std::fmt::Debug>() {
        let mut registry = Registry::default();
        <Closed<S> as OutputType>::create_type_info(&mut registry);
        let Some(MetaType::Enum { enum_values, description, .. }) = registry.types.get(S::NAME) else {
            panic!("{} is not an enum of the schema", S::NAME)
        };
        assert!(description.is_some(), "{} has no description", S::NAME);
        assert_eq!(enum_values.len(), S::MEMBERS.len(), "{}: two members show as one value", S::NAME);
        for (&member, (value, meta)) in S::MEMBERS.iter().zip(enum_values) {
            let named = match S::SPELLING {
                Spelling::Names => member.name().to_owned(),
                Spelling::UpperCase => member.name().to_ascii_uppercase(),
            };
            assert_eq!(value, &named, "{}::{member:?}", S::NAME);
            assert!(
                value.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{}: {value:?} is not a GraphQL name",
                S::NAME
            );
            assert!(
                meta.description.as_deref().is_some_and(|d| !d.is_empty()),
                "{}::{member:?} has no doc",
                S::NAME
            );
            let shown = Closed(member).to_value();
            assert_eq!(shown, Value::Enum(Name::new(value)));
            assert_eq!(Closed::<S>::parse(Some(shown)).ok(), Some(Closed(member)));
            assert_eq!(Closed::<S>::parse(Some(Value::String(value.clone()))).ok(), Some(Closed(member)));
        }
        assert!(Closed::<S>::parse(Some(Value::Enum(Name::new("no_such_value")))).is_err());
    }

    #[test]
    fn each_value_is_its_members_name_in_the_index_and_on_the_wire() {
        super::check_each_set();
    }
}
