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
    Name, Positioned, Request, ServerError, ServerResult, ValidationResult,
    extensions::{Extension, ExtensionContext, ExtensionFactory, NextPrepareRequest, NextValidation},
    parser::types::{ExecutableDocument, FragmentDefinition, Selection, SelectionSet},
};

use super::errors::Code;

/// The most field selections a document may expand to once every fragment spread is replaced
/// by its fragment. Generous for real dashboards (a full page of 100 pacts with every field and
/// their oracles is ~5,000), and far below what hurts.
pub const MAX_EXPANDED_FIELDS: u64 = 20_000;

/// The deepest selection accepted: `pacts { edges { node { oracles { address } } } }` is 5.
pub const MAX_DEPTH: usize = 10;

/// The deepest selection through `__schema` or `__type`: the standard introspection query that
/// GraphiQL and code generators send nests type references 14 deep.
pub const MAX_INTROSPECTION_DEPTH: usize = 16;

/// The extension that refuses NUL characters, documents expanding past
/// [`MAX_EXPANDED_FIELDS`] and selections nested deeper than [`MAX_DEPTH`] (introspection:
/// [`MAX_INTROSPECTION_DEPTH`]), and says what a query refused as too complex spent.
pub struct Admission;

impl ExtensionFactory for Admission {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Check::default())
    }
}

/// One request's admission: what its document measured, for the complexity refusal.
#[derive(Default)]
struct Check {
    measured: std::sync::Mutex<Option<Measure>>,
}

#[async_graphql::async_trait::async_trait]
impl Extension for Check {
    /// async-graphql refuses a query over [`super::MAX_COMPLEXITY`] with "Query is too complex"
    /// and no code; this gives it `QUERY_TOO_COMPLEX` and says which weighted fields it asked for
    /// how many times and what they cost. async-graphql's text is all there is to know its refusal
    /// by: this is the one place it is matched.
    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let measured = *self.measured.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        next.run(ctx).await.map_err(|errors| {
            errors
                .into_iter()
                .map(|e| match measured {
                    _ if !e.message.starts_with("Query is too complex") => e,
                    Some(m) => too_complex(&m),
                    None => Code::QueryTooComplex.on(e),
                })
                .collect()
        })
    }

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
            return Err(Code::BadArgument.refusal(
                "a string in the query or its variables holds a NUL character (\\u0000), which no text can \
                 hold here; remove it",
            ));
        }
        if let Ok(document) = request.parsed_query() {
            let measured = measure(document);
            if let Ok(m) = &measured {
                *self.measured.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(*m);
            }
            match measured {
                Ok(m) if m.fields > MAX_EXPANDED_FIELDS => return Err(too_large(m.fields)),
                Ok(m)
                    if m.counts().saturating_mul(super::cost::TOTAL_COUNT as u64)
                        > super::MAX_COMPLEXITY as u64 =>
                {
                    return Err(too_complex(&m));
                }
                Ok(m) if m.depth > MAX_DEPTH => {
                    return Err(Code::QueryTooDeep.refusal(format!(
                        "the selection is nested {} deep; the most is {MAX_DEPTH}",
                        m.depth
                    )));
                }
                Ok(m) if m.introspection_depth > MAX_INTROSPECTION_DEPTH => {
                    return Err(Code::QueryTooDeep.refusal(format!(
                        "the introspection is nested {} deep; the most is {MAX_INTROSPECTION_DEPTH} (the \
                             standard introspection query is 14)",
                        m.introspection_depth
                    )));
                }
                Ok(_) => {}
                // Refused here too: async-graphql's first pass would follow the cycle, branching.
                Err(Cycle(name)) => {
                    return Err(Code::GraphqlValidationFailed.refusal(
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

/// The complexity refusal: the limit, and what each weighted field asked for cost.
fn too_complex(m: &Measure) -> ServerError {
    let spent: Vec<String> = super::cost::WEIGHTED
        .iter()
        .zip(m.weighted)
        .filter(|(_, n)| *n > 0)
        .map(|((name, cost), n)| format!("{n} × {name} at {cost} each = {}", n.saturating_mul(*cost as u64)))
        .collect();
    let spent = if spent.is_empty() { String::new() } else { format!(": {}", spent.join("; ")) };
    Code::QueryTooComplex.refusal(
        format!(
            "the query costs more than {}{spent} (a field inside a list is charged once per row of its page). \
             A field costs 1, a list its page size times its selection (docs/api.md §Costs); ask for less, or \
             in several requests",
            super::MAX_COMPLEXITY
        ),
    )
}

fn too_large(size: u64) -> ServerError {
    let size = if size == u64::MAX { "without bound".to_owned() } else { size.to_string() };
    Code::QueryTooLarge.refusal(format!(
        "the query expands to more than {MAX_EXPANDED_FIELDS} field selections once its fragments are \
             spread ({size}); ask for less, or in several requests"
    ))
}

/// Whether the query text (raw, or as a `\u0000` escape) or a string in the variables holds a
/// NUL character.
fn holds_nul(request: &Request) -> bool {
    request.query.contains('\0')
        || request.query.to_ascii_lowercase().contains("\\u0000")
        || serde_json::to_value(&request.variables).is_ok_and(|v| agentpact_schema::holds_nul(&v))
}

/// A fragment that spreads itself, directly or through others.
#[derive(Debug, PartialEq, Eq)]
pub struct Cycle(pub String);

/// What a document expands to once every fragment spread is replaced by its fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Measure {
    /// Field selections (saturating).
    pub fields: u64,
    /// The deepest path of fields that does not pass through `__schema` or `__type`.
    pub depth: usize,
    /// The deepest path that does (introspection, which tools send nested ~14 deep).
    pub introspection_depth: usize,
    /// How many times each of [`super::cost::WEIGHTED`] is selected (saturating).
    pub weighted: [u64; super::cost::WEIGHTED.len()],
}

impl Measure {
    /// How many `totalCount`s the document selects.
    fn counts(&self) -> u64 {
        super::cost::WEIGHTED
            .iter()
            .zip(self.weighted)
            .filter(|((name, _), _)| super::cost::COUNTS.contains(name))
            .map(|(_, n)| n)
            .sum()
    }

    /// Both measures of selections side by side: fields add up, depths take the deeper.
    fn beside(self, other: Self) -> Self {
        let mut weighted = self.weighted;
        for (sum, more) in weighted.iter_mut().zip(other.weighted) {
            *sum = sum.saturating_add(more);
        }
        Self {
            fields: self.fields.saturating_add(other.fields),
            depth: self.depth.max(other.depth),
            introspection_depth: self.introspection_depth.max(other.introspection_depth),
            weighted,
        }
    }

    /// The measure of a field named `name` over its selection's measure `below`.
    fn under(name: &str, below: Self) -> Self {
        let fields = below.fields.saturating_add(1);
        let mut weighted = below.weighted;
        if let Some(i) = super::cost::WEIGHTED.iter().position(|(weighted, _)| *weighted == name) {
            weighted[i] = weighted[i].saturating_add(1);
        }
        if matches!(name, "__schema" | "__type") {
            let deepest = below.depth.max(below.introspection_depth);
            Self { fields, depth: 0, introspection_depth: deepest + 1, weighted }
        } else {
            let intro = if below.introspection_depth > 0 { below.introspection_depth + 1 } else { 0 };
            Self { fields, depth: below.depth + 1, introspection_depth: intro, weighted }
        }
    }
}

/// What the operations of `document` expand to, or the first fragment found to spread itself.
pub fn measure(document: &ExecutableDocument) -> Result<Measure, Cycle> {
    let mut m = Measurer { fragments: &document.fragments, memo: HashMap::new(), cycle: None };
    let total = document
        .operations
        .iter()
        .map(|(_, op)| m.of_set(&op.node.selection_set.node))
        .fold(Measure::default(), Measure::beside);
    match m.cycle {
        Some(name) => Err(Cycle(name.to_owned())),
        None => Ok(total),
    }
}

struct Measurer<'a> {
    fragments: &'a HashMap<Name, Positioned<FragmentDefinition>>,
    /// Each fragment's measure once known; `None` while it is being computed.
    memo: HashMap<&'a str, Option<Measure>>,
    /// A fragment met again while it was being computed.
    cycle: Option<&'a str>,
}

impl<'a> Measurer<'a> {
    fn of_set(&mut self, set: &'a SelectionSet) -> Measure {
        set.items.iter().map(|s| self.of(&s.node)).fold(Measure::default(), Measure::beside)
    }

    fn of(&mut self, selection: &'a Selection) -> Measure {
        match selection {
            Selection::Field(f) => {
                let below = self.of_set(&f.node.selection_set.node);
                Measure::under(f.node.name.node.as_str(), below)
            }
            Selection::InlineFragment(i) => self.of_set(&i.node.selection_set.node),
            Selection::FragmentSpread(s) => self.of_fragment(s.node.fragment_name.node.as_str()),
        }
    }

    fn of_fragment(&mut self, name: &'a str) -> Measure {
        match self.memo.get(name) {
            Some(Some(known)) => return *known,
            Some(None) => {
                self.cycle.get_or_insert(name);
                return Measure::default();
            }
            None => {}
        }
        let Some((key, fragment)) = self.fragments.get_key_value(name) else { return Measure::default() };
        self.memo.insert(key.as_str(), None);
        let measured = self.of_set(&fragment.node.selection_set.node);
        self.memo.insert(key.as_str(), Some(measured));
        measured
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
        let size = |q: &str| parse_query(q).map(|d| measure(&d).map(|m| m.fields)).unwrap_or(Ok(0));
        assert_eq!(size(&chain(3)), Ok(8));
        assert_eq!(size(&chain(24)), Ok(1 << 24));
        assert_eq!(size(&chain(70)), Ok(u64::MAX), "saturates instead of overflowing");
        assert_eq!(size("{ a { b c } d }"), Ok(4));
        let cycle = parse_query("{ ...A } fragment A on Q { x ...B ...B } fragment B on Q { ...A ...A }")
            .map(|d| measure(&d).map(|m| m.fields));
        assert!(matches!(cycle, Ok(Err(Cycle(name))) if name == "A" || name == "B"), "a cycle");
    }

    #[test]
    fn introspection_is_measured_apart() {
        let of = |q: &str| parse_query(q).ok().and_then(|d| measure(&d).ok()).unwrap_or_default();
        let plain = of("{ pacts { edges { node { oracles { address } } } } }");
        assert_eq!((plain.depth, plain.introspection_depth), (5, 0));
        let mixed = of(
            "{ a { b } __schema { types { fields { type { ...R } } } } } fragment R on T { ofType { name } }",
        );
        assert_eq!((mixed.depth, mixed.introspection_depth), (2, 6));
        let nested = of("{ a { __type(name: \"X\") { name } } }");
        assert_eq!((nested.depth, nested.introspection_depth), (1, 3));
    }
}
