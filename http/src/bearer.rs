//! Bearer tokens: whether a request's `Authorization` header carries the one expected, compared
//! without returning early so timing does not reveal how much of a guess was right.

use axum::http::{HeaderMap, header};

/// Whether `headers` say `Authorization: Bearer <token>`.
pub fn presents(headers: &HeaderMap, token: &str) -> bool {
    let given = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    given.is_some_and(|g| constant_time_eq(g, format!("Bearer {token}").as_bytes()))
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
        let mut headers = HeaderMap::new();
        assert!(!presents(&headers, "s3cret-token"));
        for (sent, passes) in [
            ("Bearer s3cret-token", true),
            ("Bearer s3cret-toke", false),
            ("s3cret-token", false),
            ("Bearer ", false),
        ] {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_static(sent));
            assert_eq!(presents(&headers, "s3cret-token"), passes, "{sent}");
        }
    }
}
