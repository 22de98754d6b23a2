//! Which URIs are links. A pact's `specUri` and an agent's `metadataUri` are strings anyone can
//! write on chain; our tools write only URIs whose scheme is in [`SCHEMES`], and the dashboard
//! makes a link only of those (`dashboard/js/format.js` holds the same list; a test compares
//! them). Everything else the chain holds is shown as text.

/// The schemes a link may have: the web, content addresses (IPFS, Arweave) and the negotiation's
/// own `hire://conversations/<id>` (what `sign_contract` writes).
pub const SCHEMES: [&str; 5] = ["https", "http", "ipfs", "ar", "hire"];

/// The scheme of `uri` in lower case (the text before its first `:`), when it has one.
pub fn scheme(uri: &str) -> Option<String> {
    let (scheme, _) = uri.split_once(':')?;
    let well_formed = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    well_formed.then(|| scheme.to_ascii_lowercase())
}

/// Whether `uri` is a link: a scheme of [`SCHEMES`] followed by `//` and something, with no
/// blank or control character anywhere.
pub fn is_link(uri: &str) -> bool {
    let Some(scheme) = scheme(uri) else { return false };
    let rest = &uri[scheme.len() + 1..];
    SCHEMES.contains(&scheme.as_str())
        && rest.len() > 2
        && rest.starts_with("//")
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Refuses `uri` for `field` unless it is empty or a link; the message says what to write.
pub fn check(field: &str, uri: &str) -> Result<(), String> {
    if uri.is_empty() || is_link(uri) {
        return Ok(());
    }
    Err(format!(
        "{field} must be a link with one of the schemes {} (e.g. https://example.com/spec.md or ipfs://Qm…), \
         with no blanks, not {uri:?}",
        SCHEMES.map(|s| format!("{s}://")).join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listed_schemes_are_links() {
        for good in [
            "https://example.com/spec",
            "HTTP://example.com",
            "ipfs://QmXoyp",
            "ar://tx",
            "hire://conversations/conv_1",
        ] {
            assert!(is_link(good), "{good}");
            assert_eq!(check("specUri", good), Ok(()));
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript://%0aalert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox",
            "file:///etc/passwd",
            "https:evil",
            "https://",
            "https://a b",
            "https://a\u{0}b",
            " https://a",
            "no scheme",
            ":x",
        ] {
            assert!(!is_link(bad), "{bad:?}");
            let why = check("specUri", bad).expect_err(bad);
            assert!(why.contains("specUri must be a link") && why.contains("https://"), "{why}");
        }
        assert_eq!(check("specUri", ""), Ok(()), "no URI at all is allowed");
    }
}
