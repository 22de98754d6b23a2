//! Bearer tokens: whether a request's `Authorization` header carries the one expected, compared
//! without returning early so timing does not reveal how much of a guess was right.

use axum::http::{HeaderMap, header};

/// The `Authorization` header a server expects: `Bearer <token>`, built once. `Debug` hides it.
#[derive(Clone)]
pub struct Bearer(String);

impl Bearer {
    /// Expects `Authorization: Bearer <token>`.
    pub fn new(token: &str) -> Self {
        Self(format!("Bearer {token}"))
    }

    /// Whether `headers` carry it.
    pub fn presented_in(&self, headers: &HeaderMap) -> bool {
        let given = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
        given.is_some_and(|g| constant_time_eq(g, self.0.as_bytes()))
    }
}

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bearer(<hidden>)")
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn only_the_exact_bearer_token_passes() {
        let expected = Bearer::new("s3cret-token");
        let mut headers = HeaderMap::new();
        assert!(!expected.presented_in(&headers));
        for (sent, passes) in [
            ("Bearer s3cret-token", true),
            ("Bearer s3cret-toke", false),
            ("s3cret-token", false),
            ("Bearer ", false),
        ] {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(sent));
            assert_eq!(expected.presented_in(&headers), passes, "{sent}");
        }
        assert_eq!(format!("{expected:?}"), "Bearer(<hidden>)");
    }
}
