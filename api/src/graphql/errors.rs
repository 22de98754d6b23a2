//! Every GraphQL error carries `extensions.code`, a stable string a client can branch on
//! (docs/api.md §Errors): read-layer errors get theirs where they are raised; the rest (bad
//! scalars, limits, malformed queries) get one from [`label`] on the way out.

use async_graphql::{ErrorExtensions, Response, ServerError};

use super::scalars::{ADDRESS_ERROR, BIG_INT_ERROR, BYTES32_ERROR};
use crate::read::ReadError;

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
    let code = error.code();
    async_graphql::Error::new(message).extend_with(|_, e| e.set("code", code))
}

/// The code of an error raised outside our resolvers, from what async-graphql says.
fn classify(error: &ServerError) -> &'static str {
    let m = error.message.as_str();
    if m.contains(ADDRESS_ERROR) {
        "BAD_ADDRESS"
    } else if m.contains(BIG_INT_ERROR) {
        "BAD_BIG_INT"
    } else if m.contains(BYTES32_ERROR) {
        "BAD_BYTES32"
    } else if m.starts_with("Query is nested too deep") {
        "QUERY_TOO_DEEP"
    } else if m.starts_with("Query is too complex") {
        "QUERY_TOO_COMPLEX"
    } else if m.starts_with("Failed to parse") {
        // An argument of the right type but out of its range (`first: -1`): the client's input.
        "BAD_ARGUMENT"
    } else if error.path.is_empty() {
        "GRAPHQL_VALIDATION_FAILED"
    } else {
        "INTERNAL"
    }
}

/// `response` with a code on every error that has none (see [`classify`]).
pub fn label(mut response: Response) -> Response {
    for error in &mut response.errors {
        let has_code = error.extensions.as_ref().is_some_and(|e| e.get("code").is_some());
        if !has_code {
            let code = classify(error);
            error.extensions.get_or_insert_with(Default::default).set("code", code);
        }
    }
    response
}
