//! What a request must be before anything else looks at it (validation, depth and complexity
//! limits, execution): free of NUL characters, which no text column can hold, and within a bound
//! on the work it can expand to.
//!
//! Fragments let a small document stand for a huge one: `F1 { ...F0 ...F0 }`, `F2 { ...F1 ...F1 }`
//! … doubles the selection per level, so 1.1 KB of text means 2²⁴ fields, and every later pass
//! that walks the expanded tree (validation included) pays for all of them. Here each fragment's
//! expanded size is computed once (memoized), so the check itself is linear in the text, and a
//! document whose operations expand to more than [`MAX_EXPANDED_FIELDS`] selections is refused
//! with `QUERY_TOO_LARGE`. It runs for every transport (HTTP and websocket subscriptions), since
//! both go through the schema's extensions.

use std::{collections::HashMap, sync::Arc};

use async_graphql::{
    ErrorExtensions, Name, Positioned, Request, ServerError, ServerResult,
    extensions::{Extension, ExtensionContext, ExtensionFactory, NextPrepareRequest},
    parser::types::{ExecutableDocument, FragmentDefinition, Selection, SelectionSet},
};

/// The most field selections a document may expand to once every fragment spread is replaced
/// by its fragment. Generous for real dashboards (a full page of 100 pacts with every field and
/// their oracles is ~5,000), and far below what hurts.
pub const MAX_EXPANDED_FIELDS: u64 = 20_000;

/// The extension that refuses NUL characters and documents expanding past
/// [`MAX_EXPANDED_FIELDS`].
pub struct Admission;

impl ExtensionFactory for Admission {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Admission)
    }
}

#[async_graphql::async_trait::async_trait]
impl Extension for Admission {
    /// Refuses NUL characters in the query or its variables; then parses the request
    /// (async-graphql keeps the parsed document for the rest of its work) and measures it before
    /// async-graphql's own passes, the first of which already walks the expanded tree. A document
    /// that does not parse goes on to get the usual error.
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        mut request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        if holds_nul(&request) {
            return Err(refused(
                "BAD_ARGUMENT",
                "a string in the query or its variables holds a NUL character (\\u0000), which no text can \
                 hold here; remove it"
                    .to_owned(),
            ));
        }
        if let Ok(document) = request.parsed_query() {
            match expanded_size(document) {
                Ok(size) if size > MAX_EXPANDED_FIELDS => return Err(too_large(size)),
                Ok(_) => {}
                // Refused here too: async-graphql's first pass would follow the cycle, branching.
                Err(Cycle(name)) => {
                    return Err(refused(
                        "GRAPHQL_VALIDATION_FAILED",
                        format!(
                            "fragment {name} spreads itself (directly or through others); a fragment cannot contain itself"
                        ),
                    ));
                }
            }
        }
        next.run(ctx, request).await
    }
}

fn too_large(size: u64) -> ServerError {
    let size = if size == u64::MAX { "without bound".to_owned() } else { size.to_string() };
    refused(
        "QUERY_TOO_LARGE",
        format!(
            "the query expands to more than {MAX_EXPANDED_FIELDS} field selections once its fragments are \
             spread ({size}); ask for less, or in several requests"
        ),
    )
}

fn refused(code: &'static str, message: String) -> ServerError {
    async_graphql::Error::new(message)
        .extend_with(|_, e| e.set("code", code))
        .into_server_error(Default::default())
}

/// Whether the query text (raw, or as a `\u0000` escape) or a string in the variables holds a
/// NUL character.
fn holds_nul(request: &Request) -> bool {
    request.query.contains('\0')
        || request.query.to_ascii_lowercase().contains("\\u0000")
        || serde_json::to_value(&request.variables).is_ok_and(|v| crate::text::holds_nul(&v))
}

/// A fragment that spreads itself, directly or through others.
#[derive(Debug, PartialEq, Eq)]
pub struct Cycle(pub String);

/// How many field selections the operations of `document` expand to (saturating), or the first
/// fragment found to spread itself.
pub fn expanded_size(document: &ExecutableDocument) -> Result<u64, Cycle> {
    let mut sizes = Sizes { fragments: &document.fragments, memo: HashMap::new(), cycle: None };
    let size = document
        .operations
        .iter()
        .map(|(_, op)| sizes.of_set(&op.node.selection_set.node))
        .fold(0u64, u64::saturating_add);
    match sizes.cycle {
        Some(name) => Err(Cycle(name.to_owned())),
        None => Ok(size),
    }
}

struct Sizes<'a> {
    fragments: &'a HashMap<Name, Positioned<FragmentDefinition>>,
    /// Each fragment's size once known; `None` while it is being computed.
    memo: HashMap<&'a str, Option<u64>>,
    /// A fragment met again while it was being computed.
    cycle: Option<&'a str>,
}

impl<'a> Sizes<'a> {
    fn of_set(&mut self, set: &'a SelectionSet) -> u64 {
        set.items.iter().map(|s| self.of(&s.node)).fold(0u64, u64::saturating_add)
    }

    fn of(&mut self, selection: &'a Selection) -> u64 {
        match selection {
            Selection::Field(f) => 1u64.saturating_add(self.of_set(&f.node.selection_set.node)),
            Selection::InlineFragment(i) => self.of_set(&i.node.selection_set.node),
            Selection::FragmentSpread(s) => self.of_fragment(s.node.fragment_name.node.as_str()),
        }
    }

    fn of_fragment(&mut self, name: &'a str) -> u64 {
        match self.memo.get(name) {
            Some(Some(size)) => return *size,
            Some(None) => {
                self.cycle.get_or_insert(name);
                return 0;
            }
            None => {}
        }
        let Some((key, fragment)) = self.fragments.get_key_value(name) else { return 0 };
        self.memo.insert(key.as_str(), None);
        let size = self.of_set(&fragment.node.selection_set.node);
        self.memo.insert(key.as_str(), Some(size));
        size
    }
}

#[cfg(test)]
mod tests {
    use async_graphql::parser::parse_query;

    use super::*;

    /// `levels` fragments, each spreading the previous one twice.
    fn chain(levels: usize) -> String {
        let mut q = String::from("query { ...F");
        q.push_str(&levels.to_string());
        q.push_str(" } fragment F0 on QueryRoot { __typename }");
        for n in 1..=levels {
            q.push_str(&format!(" fragment F{n} on QueryRoot {{ ...F{m} ...F{m} }}", m = n - 1));
        }
        q
    }

    #[test]
    fn a_fragment_chain_is_measured_without_expanding_it() {
        let size = |q: &str| parse_query(q).map(|d| expanded_size(&d)).unwrap_or(Ok(0));
        assert_eq!(size(&chain(3)), Ok(8));
        assert_eq!(size(&chain(24)), Ok(1 << 24));
        assert_eq!(size(&chain(70)), Ok(u64::MAX), "saturates instead of overflowing");
        assert_eq!(size("{ a { b c } d }"), Ok(4));
        let cycle = size("{ ...A } fragment A on Q { x ...B ...B } fragment B on Q { ...A ...A }");
        assert!(matches!(cycle, Err(Cycle(name)) if name == "A" || name == "B"), "a cycle");
    }
}
