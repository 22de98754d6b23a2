//! The dashboard: the files under `dashboard/` (plain ES modules and one stylesheet, no build
//! step), compiled into the binary and served at `/` and `/assets/…`. `GET /graphql` serves the
//! same page, which opens its query console there. Every response forbids loading anything from
//! another origin, so the pages work offline and a script injected through chain data could not
//! call out.

use axum::{
    Router,
    extract::Path,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};

/// Each asset: its path under `dashboard/` (and `/assets/`), content type and text (`build.rs`
/// makes an edit of any of them rebuild the crate).
macro_rules! assets {
    ($($path:literal => $mime:expr),* $(,)?) => {
        &[$(($path, $mime, include_str!(concat!("../../dashboard/", $path)))),*]
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the dashboard but `index.html`.
const ASSETS: &[(&str, &str, &str)] = assets![
    "style.css" => "text/css; charset=utf-8",
    "js/main.js" => JS,
    "js/api.js" => JS,
    "js/dom.js" => JS,
    "js/forms.js" => JS,
    "js/format.js" => JS,
    "js/charts.js" => JS,
    "js/checksum.js" => JS,
    "js/pages/overview.js" => JS,
    "js/pages/pacts.js" => JS,
    "js/pages/pact.js" => JS,
    "js/pages/agents.js" => JS,
    "js/pages/address.js" => JS,
    "js/pages/console.js" => JS,
];

const INDEX: &str = include_str!("../../dashboard/index.html");

/// Scripts, styles and connections from this origin only; no frames, no forms posting elsewhere.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                      connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// `GET /` and `GET /assets/{path}`.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/", get(page)).route("/assets/{*path}", get(asset))
}

/// The dashboard's page (also what `GET /graphql` answers: the page opens its console there).
pub async fn page() -> Response {
    file("text/html; charset=utf-8", INDEX)
}

async fn asset(Path(path): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == path) {
        Some((_, mime, text)) => file(mime, text),
        None => (StatusCode::NOT_FOUND, "no such dashboard file").into_response(),
    }
}

fn file(mime: &'static str, text: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(mime)),
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY)),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            // The files change with the binary: revalidate rather than keep a stale copy.
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        text,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::ASSETS;

    /// A file added under `dashboard/` and not listed would be missing from the binary.
    #[test]
    fn every_dashboard_file_is_served() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dashboard");
        let mut found = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("dashboard/ is readable") {
                let path = entry.expect("a readable entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    let name =
                        path.strip_prefix(&root).expect("under dashboard/").to_string_lossy().into_owned();
                    found.push(name);
                }
            }
        }
        found.retain(|name| name != "index.html");
        found.sort();
        let mut listed: Vec<String> = ASSETS.iter().map(|(name, _, _)| name.to_string()).collect();
        listed.sort();
        assert_eq!(found, listed, "dashboard/ and dashboard::ASSETS list different files");
    }
}
