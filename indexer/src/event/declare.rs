//! The macro that turns the one declaration of each contract event ([`super::EventBody`]'s
//! invocation) into everything the indexer reads from it: the journal's variant, its
//! [`EventKind`](agentpact_contracts::EventKind), what it is about ([`Subject`]), its text
//! fields, whether a reorg's replay renumbers it, and its decoding from the `sol!` bindings.

use agentpact_schema::ChainText;
use alloy::primitives::{Address, B256, U256};

use super::{Capability, Profile, StageTerm};

/// What an event is about, as the journal files it (`events.pact_id`, `events.account`): a pact,
/// an account of ours (an oracle, an agent, a withdrawer), or nothing one reorg could rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// A pact: its id.
    Pact(U256),
    /// An account: its address.
    Account(Address),
    /// Neither (a currency the escrow allows; the ERC-8004 registries' events).
    None,
}

/// A value of a `sol!` binding's event field, as the journal holds it: the same value, or its
/// strings as [`ChainText`] (set to the exact bytes later by `decode`).
pub trait FromSol<T> {
    /// The journal's form of `value`.
    fn from_sol(value: T) -> Self;
}

macro_rules! unchanged {
    ($($t:ty),* $(,)?) => {
        $(impl FromSol<$t> for $t {
            fn from_sol(value: $t) -> Self {
                value
            }
        })*
    };
}

unchanged!(U256, Address, B256, u8, u16, u32, u64, bool, Vec<Address>, Vec<u8>);

impl FromSol<String> for ChainText {
    fn from_sol(value: String) -> Self {
        value.into()
    }
}

impl FromSol<Vec<String>> for Vec<ChainText> {
    fn from_sol(value: Vec<String>) -> Self {
        value.into_iter().map(ChainText::from).collect()
    }
}

impl FromSol<agentpact_contracts::AgentRegistry::Profile> for Profile {
    fn from_sol(p: agentpact_contracts::AgentRegistry::Profile) -> Self {
        Profile {
            name: p.name.into(),
            description: p.description.into(),
            endpoint: p.endpoint.into(),
            metadata_uri: p.metadataUri.into(),
            capabilities: p
                .capabilities
                .into_iter()
                .map(|c| Capability {
                    name: c.name.into(),
                    description: c.description.into(),
                    price: c.price,
                    currency: c.currency,
                })
                .collect(),
        }
    }
}

impl FromSol<Vec<agentpact_contracts::AgentPact::StageTerms>> for Vec<StageTerm> {
    fn from_sol(stages: Vec<agentpact_contracts::AgentPact::StageTerms>) -> Self {
        stages.into_iter().map(|s| StageTerm { amount: s.amount, deadline: s.deadline }).collect()
    }
}

/// The string fields a value holds, depth-first in declaration order (the ABI's order), so that
/// `decode` can set each to the exact bytes the chain emitted.
pub trait Texts {
    /// Appends every string field of `self` to `out`.
    fn texts<'a>(&'a mut self, out: &mut Vec<&'a mut ChainText>);
}

macro_rules! textless {
    ($($t:ty),* $(,)?) => {
        $(impl Texts for $t {
            fn texts<'a>(&'a mut self, _: &mut Vec<&'a mut ChainText>) {}
        })*
    };
}

textless!(U256, Address, B256, u8, u16, u32, u64, bool, StageTerm);

impl Texts for ChainText {
    fn texts<'a>(&'a mut self, out: &mut Vec<&'a mut ChainText>) {
        out.push(self);
    }
}

impl<T: Texts> Texts for Vec<T> {
    fn texts<'a>(&'a mut self, out: &mut Vec<&'a mut ChainText>) {
        for item in self {
            item.texts(out);
        }
    }
}

impl Texts for Profile {
    fn texts<'a>(&'a mut self, out: &mut Vec<&'a mut ChainText>) {
        let Profile { name, description, endpoint, metadata_uri, capabilities } = self;
        out.extend([name, description, endpoint, metadata_uri]);
        capabilities.texts(out);
    }
}

impl Texts for Capability {
    fn texts<'a>(&'a mut self, out: &mut Vec<&'a mut ChainText>) {
        out.extend([&mut self.name, &mut self.description]);
    }
}

/// `Subject` of a declaration's `(pact: field)`, `(account: field)` or `()`.
macro_rules! subject {
    () => {
        $crate::event::Subject::None
    };
    (pact $field:ident) => {
        $crate::event::Subject::Pact(*$field)
    };
    (account $field:ident) => {
        $crate::event::Subject::Account(*$field)
    };
}

/// The kind of a declaration marked `once`.
macro_rules! once {
    (once $name:ident) => {
        agentpact_contracts::EventKind::$name
    };
}

/// Declares the journal's events, grouped by the binding enum they decode from. Each event is
/// written once:
///
/// ```text
/// /// docs
/// Name(pact: pact_id) {              // or (account: field), or () — what it is about
///     #[serde(...)] field: Type = solField,
/// }
/// Name(pact: pact_id, once) { .. }   // its rows are written once per event and never replayed
/// ```
///
/// and the macro derives `EventBody` (serde-tagged by `kind`), `EventBody::kind`,
/// `EventBody::subject`, `EventBody::texts_mut`, `EventBody::ONCE` and `From<Binding>` for each
/// group. The variant's name is its `EventKind` and its binding's event name.
macro_rules! journal_events {
    (
        $(#[$meta:meta])*
        pub enum EventBody {
            $(
                $binding:ident {
                    $(
                        $(#[doc = $doc:literal])*
                        $name:ident ( $($scope:ident : $subject:ident)? $(, $once:ident)? ) {
                            $( $(#[$field_meta:meta])* $field:ident : $ty:ty = $sol:ident, )*
                        }
                    )*
                }
            )*
            $(#[$extra_meta:meta])+
            Erc8004(Erc8004Event),
        }
    ) => {
        $(#[$meta])*
        pub enum EventBody {
            $($(
                $(#[doc = $doc])*
                $name { $( $(#[$field_meta])* $field: $ty, )* },
            )*)*
            $(#[$extra_meta])+
            Erc8004(Erc8004Event),
        }

        impl EventBody {
            /// The kinds whose rows are written once per event (tables undone by block): a
            /// reorg's replay leaves them out, and they touch no pact or account to rebuild.
            pub const ONCE: &[agentpact_contracts::EventKind] = &[$($($( once!($once $name), )?)*)*];

            /// The event's kind (its name is `events.kind`).
            pub const fn kind(&self) -> agentpact_contracts::EventKind {
                match self {
                    $($( Self::$name { .. } => agentpact_contracts::EventKind::$name, )*)*
                    Self::Erc8004(e) => e.kind(),
                }
            }

            /// What the event is about (`events.pact_id` or `events.account`).
            pub const fn subject(&self) -> $crate::event::Subject {
                match self {
                    $($( Self::$name { $($subject,)? .. } => subject!($($scope $subject)?), )*)*
                    Self::Erc8004(_) => $crate::event::Subject::None,
                }
            }

            /// Every string field, in the order the event's ABI encodes them (depth-first over
            /// its data), so that [`crate::decode`] can set each to the exact bytes the chain
            /// emitted.
            pub fn texts_mut(&mut self) -> Vec<&mut ChainText> {
                #[allow(unused_imports)] // an event without fields uses none
                use $crate::event::declare::Texts as _;
                let mut texts = Vec::new();
                match self {
                    $($( Self::$name { $($field,)* } => { $( $field.texts(&mut texts); )* } )*)*
                    Self::Erc8004(e) => texts = e.texts_mut(),
                }
                texts
            }
        }

        $(
            impl From<$binding> for EventBody {
                fn from(event: $binding) -> Self {
                    #[allow(unused_imports)] // an event without fields uses none
                    use $crate::event::declare::FromSol;
                    match event {
                        $( $binding::$name(e) => Self::$name { $( $field: FromSol::from_sol(e.$sol), )* }, )*
                    }
                }
            }
        )*
    };
}

pub(crate) use {journal_events, once, subject};
