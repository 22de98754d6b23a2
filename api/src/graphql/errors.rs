//! The API's error vocabulary: every error it sends, over HTTP or a websocket, carries
//! `extensions.code`, a stable string a client can branch on (docs/api.md §Errors). Every code is
//! a [`Code`], spelled once, in its declaration; every error is built by [`Code::error`] (a
//! resolver's), [`Code::refusal`] (a request refused whole) or [`Code::input_error`] (a scalar's).
//! Read-layer errors get theirs from [`to_graphql`]; what async-graphql itself raises (malformed
//! queries, out-of-range arguments) gets one from [`label`] on the way out.

use std::{collections::HashMap, sync::LazyLock};

use agentpact_contracts::closed_set;
use agentpact_negotiation::StoreError;
use async_graphql::{
    ErrorExtensions, InputType, InputValueError, Response, ServerError,
    parser::types::{TypeKind, TypeSystemDefinition},
};

use super::scalars::{ADDRESS_ERROR, BIG_INT_ERROR, BYTES32_ERROR};
use crate::read::ReadError;

/// Where in an error's `extensions` its code goes.
const KEY: &str = "code";

closed_set! {
    /// Why the API refused or failed, as clients read it in `extensions.code`, named as sent
    /// (`QUERY_TOO_DEEP`). Clients branch on these names: never change one.
    pub enum Code {
        /// An `Address` that is not one.
        BadAddress => "BAD_ADDRESS",
        /// A `BigInt` that is not one.
        BadBigInt => "BAD_BIG_INT",
        /// A `Bytes32` that is not one.
        BadBytes32 => "BAD_BYTES32",
        /// A cursor this API did not hand out, or one made for another ordering.
        BadCursor => "BAD_CURSOR",
        /// A page larger than the read layer serves.
        PageTooLarge => "PAGE_TOO_LARGE",
        /// Arguments that contradict each other or are out of range, or a NUL character.
        BadArgument => "BAD_ARGUMENT",
        /// A selection nested deeper than [`super::MAX_DEPTH`] (introspection: deeper than
        /// [`super::MAX_INTROSPECTION_DEPTH`]).
        QueryTooDeep => "QUERY_TOO_DEEP",
        /// A document that expands past [`super::MAX_EXPANDED_FIELDS`].
        QueryTooLarge => "QUERY_TOO_LARGE",
        /// A query that costs more than [`super::MAX_COMPLEXITY`].
        QueryTooComplex => "QUERY_TOO_COMPLEX",
        /// An answer over [`super::MAX_ANSWER_BYTES`], not sent.
        AnswerTooLarge => "ANSWER_TOO_LARGE",
        /// A query that does not parse or does not fit the schema.
        GraphqlValidationFailed => "GRAPHQL_VALIDATION_FAILED",
        /// An HTTP body that is not one GraphQL request.
        BadRequest => "BAD_REQUEST",
        /// An HTTP body over [`crate::server::MAX_BODY_BYTES`].
        PayloadTooLarge => "PAYLOAD_TOO_LARGE",
        /// An HTTP body that did not arrive in time.
        BodyTimeout => "BODY_TIMEOUT",
        /// A websocket already running the most operations one socket may.
        TooManyOperations => "TOO_MANY_OPERATIONS",
        /// An address over its rate.
        RateLimited => "RATE_LIMITED",
        /// An operator-only field asked without the operator's token.
        Forbidden => "FORBIDDEN",
        /// `block: { number_gte }` named a block the index did not reach in time.
        BlockNotIndexed => "BLOCK_NOT_INDEXED",
        /// A value in the index that cannot be read back.
        IndexCorrupt => "INDEX_CORRUPT",
        /// The database (or something else of ours) failed; details are logged, not sent.
        Internal => "INTERNAL",
    }
}

impl Code {
    /// An error with this code saying `message`, for a resolver or an extension to return
    /// (async-graphql adds where in the query it arose).
    pub fn error(self, message: impl Into<String>) -> async_graphql::Error {
        async_graphql::Error::new(message).extend_with(|_, e| e.set(KEY, self.name()))
    }

    /// A refusal of the whole request with this code saying `message`: no place in the query, as
    /// the error of a GraphQL response (`{"message", "extensions": {"code"}}`), and what the
    /// HTTP server and the websocket send when they refuse before the schema runs.
    pub fn refusal(self, message: impl Into<String>) -> ServerError {
        self.on(ServerError::new(message, None))
    }

    /// `error` (async-graphql's, which has none) with this code.
    pub fn on(self, mut error: ServerError) -> ServerError {
        error.extensions.get_or_insert_with(Default::default).set(KEY, self.name());
        error
    }

    /// A scalar's parse failure with this code saying `message` (async-graphql puts
    /// `Failed to parse "<scalar>": ` before it and where in the query it arose).
    pub fn input_error<T: InputType>(self, message: impl std::fmt::Display) -> InputValueError<T> {
        InputValueError::custom(message).with_extension(KEY, self.name())
    }
}

/// A read-layer error's code (the read crate cannot name the API's codes: it serves MCP too).
impl From<&ReadError> for Code {
    fn from(error: &ReadError) -> Self {
        match error {
            ReadError::Db(_) => Self::Internal,
            ReadError::BadCursor(_) => Self::BadCursor,
            ReadError::PageTooLarge { .. } => Self::PageTooLarge,
            ReadError::BadArgument(_) => Self::BadArgument,
            ReadError::Corrupt(_) => Self::IndexCorrupt,
        }
    }
}

/// A read-layer error as a GraphQL error with its code. Database failures are logged and told
/// to the client without their details.
pub fn to_graphql(error: impl Into<ReadError>) -> async_graphql::Error {
    let error: ReadError = error.into();
    let message = match &error {
        ReadError::Db(e) => {
            tracing::error!(error = %e, "database read failed");
            "the index is unavailable right now; try again shortly".to_owned()
        }
        other => other.to_string(),
    };
    Code::from(&error).error(message)
}

/// A failed read of the relay's tables as a GraphQL error: it fails as the index does (its
/// conversations serve fields beside the index's), with the same codes and the same silence about
/// the database's details.
pub fn store_to_graphql(error: StoreError) -> async_graphql::Error {
    to_graphql(match error {
        StoreError::Db(e) => ReadError::Db(e),
        StoreError::Corrupt(e) => ReadError::Corrupt(e),
        StoreError::PageTooLarge { max, asked } => ReadError::PageTooLarge { max, asked },
    })
}

/// The code of an error async-graphql raised without one. Everything our code raises carries its
/// code from where it is raised (the scalars, the resolvers, `admission.rs` for size, depth,
/// complexity and NUL, the answer cap); what is left is async-graphql's own, which has no code to
/// read, only its text: an argument of a built-in type out of range, the parser's and the
/// validator's complaints, and a scalar's parse failure met while async-graphql computes a
/// field's cost (its complexity pass parses the arguments of fields whose cost depends on them and
/// reports a failure as text, dropping the scalar's code; hence the scalars' message markers).
/// Matching that text is unavoidable, and done here only (and in `admission.rs` for
/// async-graphql's complexity refusal, which it rewrites).
fn classify(error: &ServerError) -> Code {
    let m = error.message.as_str();
    if m.contains(ADDRESS_ERROR) {
        Code::BadAddress
    } else if m.contains(BIG_INT_ERROR) {
        Code::BadBigInt
    } else if m.contains(BYTES32_ERROR) {
        Code::BadBytes32
    } else if m.starts_with("Failed to parse") {
        // An argument of the right type but out of its range (`first: -1`): the client's input.
        Code::BadArgument
    } else if error.path.is_empty() {
        Code::GraphqlValidationFailed
    } else {
        Code::Internal
    }
}

/// `response` with a code on every error that has none (see [`classify`]), and the values a
/// value outside an enum could have been (see [`name_the_values`]).
pub fn label(mut response: Response) -> Response {
    response.errors = std::mem::take(&mut response.errors)
        .into_iter()
        .map(|error| {
            if error.extensions.as_ref().is_some_and(|e| e.get(KEY).is_some()) {
                error
            } else {
                classify(&error).on(name_the_values(error))
            }
        })
        .collect();
    response
}

/// What async-graphql's validator says of a value outside an enum (`Invalid value for argument
/// "status", enumeration type "ConversationFilter" does not contain the value "done"`), up to the
/// enum's name.
const NOT_IN_ENUM: &str = "enumeration type \"";

/// The values of every enum of the schema, by the enum's name, read once from the schema's SDL.
static ENUM_VALUES: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
    let Ok(document) = async_graphql::parser::parse_schema(super::sdl()) else { return HashMap::new() };
    document
        .definitions
        .into_iter()
        .filter_map(|definition| match definition {
            TypeSystemDefinition::Type(t) => match t.node.kind {
                TypeKind::Enum(e) => Some((
                    t.node.name.node.to_string(),
                    e.values.into_iter().map(|v| v.node.value.node.to_string()).collect(),
                )),
                _ => None,
            },
            _ => None,
        })
        .collect()
});

/// `error` saying which values to use when it refused one outside an enum: the validator names
/// the enum, the argument and the value, not the enum's values.
fn name_the_values(mut error: ServerError) -> ServerError {
    let values = error
        .message
        .split_once(NOT_IN_ENUM)
        .and_then(|(_, rest)| rest.split_once('"'))
        .and_then(|(name, _)| ENUM_VALUES.get(name));
    if let Some(values) = values {
        error.message = format!("{}; use one of {}", error.message, values.join(", "));
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_screaming_snake_case() {
        let names: std::collections::HashSet<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Code::ALL.len(), "two codes share a string");
        for name in names {
            assert!(
                name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
                "{name}"
            );
        }
    }

    /// The read layer names its errors' codes too (for its own tests and logs); they are the same.
    #[test]
    fn read_errors_keep_the_read_layers_codes() {
        let errors = [
            ReadError::Db(sqlx::Error::RowNotFound),
            ReadError::BadCursor(String::new()),
            ReadError::PageTooLarge { max: 1, asked: 2 },
            ReadError::BadArgument(String::new()),
            ReadError::Corrupt(agentpact_schema::Corrupt {
                table: "pacts",
                key: "1".into(),
                column: "payment",
                value: "x".into(),
            }),
        ];
        for error in &errors {
            assert_eq!(Code::from(error).name(), error.code(), "{error:?}");
        }
    }

    #[test]
    fn a_refusal_is_the_graphql_error_shape_and_nothing_more() {
        let sent = serde_json::to_value(Code::QueryTooDeep.refusal("too deep")).expect("serializes");
        assert_eq!(
            sent,
            serde_json::json!({ "message": "too deep", "extensions": { "code": "QUERY_TOO_DEEP" } })
        );
    }

    /// A value outside an enum is refused naming the values to use, from the schema itself.
    #[tokio::test]
    async fn a_value_outside_an_enum_is_refused_naming_the_enums_values() {
        let schema = super::super::builder().finish();
        let query =
            "{ conversations(agent: \"0x0000000000000000000000000000000000000001\", status: done) { id } }";
        let answer = schema.execute(query).await;
        let error = answer.errors.first().map(|e| e.message.as_str()).unwrap_or_default();
        assert!(
            error.contains(
                "\"status\", enumeration type \"ConversationFilter\" does not contain the value \"done\""
            ) && error.ends_with("; use one of active, completed, all"),
            "{error}"
        );
    }

    /// docs/api.md §Errors lists every code.
    #[test]
    fn every_code_is_documented() {
        let docs = include_str!("../../../docs/api.md");
        let errors = docs.split("## Errors").nth(1).unwrap_or_default();
        for code in Code::ALL {
            assert!(errors.contains(&format!("`{code}`")), "docs/api.md §Errors does not list {code}");
        }
    }
}
