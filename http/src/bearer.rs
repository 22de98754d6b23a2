//! Bearer tokens: whether a request's `Authorization` header carries the one expected, compared
//! without returning early so timing does not reveal how much of a guess was right; and the floor
//! every configured token is held to ([`configured`]).

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

/// The fewest characters a configured token may have (`MCP_HTTP_TOKEN`, `OPERATOR_TOKEN`): a
/// shorter one could be guessed.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why a configured token is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WeakToken {
    /// Set, but empty (or only whitespace): no client could send it.
    Empty {
        /// The setting, e.g. `MCP_HTTP_TOKEN`.
        setting: &'static str,
    },
    /// Shorter than [`MIN_TOKEN_CHARS`].
    Short {
        /// The setting.
        setting: &'static str,
        /// How many characters it has.
        chars: usize,
    },
}

impl std::fmt::Display for WeakToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (setting, why) = match self {
            Self::Empty { setting } => (setting, "is set but empty, which no client could send".to_owned()),
            Self::Short { setting, chars } => (
                setting,
                format!(
                    "has {chars} characters, fewer than the {MIN_TOKEN_CHARS} a token needs so it cannot be guessed"
                ),
            ),
        };
        write!(f, "{setting} {why}: set a long random token (e.g. `openssl rand -hex 32`), or unset it")
    }
}

impl std::error::Error for WeakToken {}

/// The token configured as `setting`, trimmed (a token read from a file ends in a newline no
/// header carries), when it has at least [`MIN_TOKEN_CHARS`] characters.
pub fn configured(setting: &'static str, token: &str) -> Result<String, WeakToken> {
    let token = token.trim();
    match token.chars().count() {
        0 => Err(WeakToken::Empty { setting }),
        chars if chars < MIN_TOKEN_CHARS => Err(WeakToken::Short { setting, chars }),
        _ => Ok(token.to_owned()),
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

    #[test]
    fn configured_tokens_are_held_to_one_floor() {
        assert_eq!(configured("T", " \n"), Err(WeakToken::Empty { setting: "T" }));
        assert_eq!(configured("T", "a"), Err(WeakToken::Short { setting: "T", chars: 1 }));
        let floor = "x".repeat(MIN_TOKEN_CHARS);
        assert_eq!(configured("T", &format!("{floor}\n")).as_deref(), Ok(floor.as_str()));
        assert!(configured("T", &floor[1..]).expect_err("short").to_string().contains("openssl rand"));
    }
}
