//! The confirmation page a human opens from the client's URL-mode elicitation:
//! `GET /confirm/<token>` shows exactly what will be signed with a confirm and a decline button
//! (a plain form: no script, works with the keyboard); `POST /confirm/<token>` records the answer
//! once. Like the dashboard, the page loads nothing from elsewhere and may not be framed (a
//! framed confirm button could be clicked by a page the human did not mean to answer). The
//! address's 256-bit token is what admits an answer: whoever can post to it could read it, so an
//! `Origin` check would add nothing, and behind a load balancer it would refuse real humans.

use axum::{
    Router,
    extract::{Path, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};

use super::{Confirmations, Shown, Standing};

/// Its own stylesheet only; no scripts; forms post back here; never framed.
const POLICY: &str =
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Dark text on white, focus rings that show, buttons as large as a finger.
const STYLE: &str = "\
body { font: 16px/1.5 system-ui, sans-serif; color: #111; background: #fff; margin: 0; }
main { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; font-size: .85rem; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #ccc; overflow-wrap: anywhere; }
.standing { padding: .6rem .8rem; border: 2px solid #1a4d8f; background: #eef4fb; }
form { display: flex; gap: 1rem; margin-top: 1.5rem; }
button { font: inherit; padding: .7rem 1.4rem; border-radius: .3rem; cursor: pointer; }
#confirm { color: #fff; background: #0b5d1e; border: 2px solid #0b5d1e; }
#decline { color: #111; background: #fff; border: 2px solid #444; }
button:focus-visible { outline: 3px solid #d35400; outline-offset: 2px; }
";

/// `/confirm/{token}` (the page and its answer) and `/confirm/style.css`, reading `confirmations`.
pub fn router(confirmations: Confirmations) -> Router {
    Router::new()
        .route("/confirm/style.css", get(style))
        .route("/confirm/{token}", get(show).post(answer))
        .route("/confirm/{token}/ledger", get(ledger))
        .with_state(confirmations)
}

async fn style() -> Response {
    respond(StatusCode::OK, "text/css; charset=utf-8", STYLE.to_owned())
}

async fn show(State(confirmations): State<Confirmations>, Path(token): Path<String>) -> Response {
    match confirmations.show(&token).await {
        Ok(Some(shown)) => respond(StatusCode::OK, HTML, render(&token, &shown, None)),
        Ok(None) => not_found(),
        Err(e) => unavailable(&e),
    }
}

/// How many of the wallet's newest ledger entries the page beside a confirmation shows.
const LEDGER_SHOWN: i64 = 100;

/// The newest entries of the ledger of the wallet a confirmation is for: the human who holds the
/// confirmation's address sees what the agent did before asking (docs/mcp.md §Policy).
async fn ledger(State(confirmations): State<Confirmations>, Path(token): Path<String>) -> Response {
    let shown = match confirmations.show(&token).await {
        Ok(Some(shown)) => shown,
        Ok(None) => return not_found(),
        Err(e) => return unavailable(&e),
    };
    let Ok(wallet) = shown.summary.wallet.parse::<alloy::primitives::Address>() else { return not_found() };
    let newest = agentpact_read::wallet_ledger::From::Newest;
    match agentpact_read::wallet_ledger::entries(
        confirmations.pool(),
        shown.summary.chain_id,
        wallet,
        newest,
        LEDGER_SHOWN,
    )
    .await
    {
        Ok(entries) => respond(StatusCode::OK, HTML, render_ledger(&shown.summary.wallet, &entries)),
        Err(e) => unavailable(&e),
    }
}

/// The ledger page: one row per entry, newest first, read from each entry's body.
fn render_ledger(wallet: &str, entries: &[agentpact_read::wallet_ledger::LedgerEntry]) -> String {
    let field = |body: &serde_json::Value, key: &str| match &body[key] {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let rows: String = entries
        .iter()
        .map(|entry| {
            let cells = match serde_json::from_str::<serde_json::Value>(&entry.body) {
                Ok(body) => {
                    let amount = match (field(&body, "amount"), field(&body, "currency")) {
                        (a, _) if a.is_empty() => String::new(),
                        (a, c) => format!("{a} ({c} base units)"),
                    };
                    [
                        field(&body, "seq"),
                        field(&body, "at"),
                        field(&body, "event"),
                        field(&body, "tool"),
                        amount,
                        field(&body, "counterparty"),
                        [field(&body, "rule"), field(&body, "reason")].join(" ").trim().to_owned(),
                        field(&body, "tx"),
                    ]
                }
                Err(e) => {
                    let unread = format!("entry {} does not read as JSON ({e})", entry.seq);
                    [
                        entry.seq.to_string(),
                        String::new(),
                        unread,
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]
                }
            };
            let cells: String = cells.iter().map(|c| format!("<td>{}</td>", escape(c))).collect();
            format!("<tr>{cells}</tr>")
        })
        .collect();
    let heads: String =
        ["#", "At", "Event", "Tool", "Amount", "Counterparty", "Rule and reason", "Transaction"]
            .iter()
            .map(|h| format!("<th scope=\"col\">{h}</th>"))
            .collect();
    let intro = if entries.is_empty() {
        format!("Wallet {} has no ledger entries yet.", escape(wallet))
    } else {
        format!(
            "The newest {} entries of the ledger of wallet {}, newest first. Each is hash-chained and signed: \
             export the whole ledger with <code>agentpact wallet ledger</code> and check it with \
             <code>scripts/verify-ledger.py</code>.",
            entries.len(),
            escape(wallet)
        )
    };
    page(
        "Wallet ledger",
        "../style.css",
        &format!(
            "<p id=\"intro\">{intro}</p><table id=\"ledger\"><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>"
        ),
    )
}

/// Records `decision=confirm` or `decision=decline`, once; a reused, expired or unknown page
/// changes nothing and says so.
async fn answer(
    State(confirmations): State<Confirmations>,
    Path(token): Path<String>,
    body: String,
) -> Response {
    let confirmed = match form_value(&body, "decision") {
        Some("confirm") => true,
        Some("decline") => false,
        _ => {
            return respond(
                StatusCode::BAD_REQUEST,
                HTML,
                plain_page("Not understood", "Answer with the Confirm or the Decline button."),
            );
        }
    };
    let recorded = match confirmations.decide(&token, confirmed).await {
        Ok(recorded) => recorded,
        Err(e) => return unavailable(&e),
    };
    match confirmations.show(&token).await {
        Ok(Some(shown)) => {
            let (status, note) = if recorded {
                (
                    StatusCode::OK,
                    if confirmed {
                        "Confirmed: the agent may send it now."
                    } else {
                        "Declined: nothing will be sent."
                    },
                )
            } else {
                (
                    StatusCode::CONFLICT,
                    "This page was already answered or has expired: your answer changed nothing.",
                )
            };
            respond(status, HTML, render(&token, &shown, Some(note)))
        }
        Ok(None) => not_found(),
        Err(e) => unavailable(&e),
    }
}

const HTML: &str = "text/html; charset=utf-8";

/// The page of `shown` (the confirmation of `token`), with `note` (the answer just given) above it.
fn render(token: &str, shown: &Shown, note: Option<&str>) -> String {
    let s = &shown.summary;
    let rows = [
        ("Tool", s.tool.clone()),
        ("Amount", s.amount.clone()),
        ("From wallet", s.wallet.clone()),
        ("Counterparty", s.counterparty.clone()),
        ("What it does", format!("Sends {} into the AgentPact escrow to {}.", s.amount, s.does)),
        ("Why you are asked", format!("It asks because {}.", s.reasons.join("; and "))),
        ("Chain", s.chain_id.to_string()),
    ];
    let list: String =
        rows.iter().map(|(term, value)| format!("<dt>{term}</dt><dd>{}</dd>", escape(value))).collect();
    let standing = note.map_or_else(|| format!("This spend is {}.", shown.standing.says()), str::to_owned);
    let buttons = if shown.standing == Standing::Open {
        "<form method=\"post\">\
         <button type=\"submit\" id=\"confirm\" name=\"decision\" value=\"confirm\">Confirm and send</button>\
         <button type=\"submit\" id=\"decline\" name=\"decision\" value=\"decline\">Decline</button>\
         </form>"
    } else {
        ""
    };
    page(
        "Confirm a spend",
        "style.css",
        &format!(
            "<p id=\"standing\" class=\"standing\" role=\"status\">{}</p><dl id=\"summary\">{list}</dl>{buttons}\
             <p><a id=\"ledger\" href=\"{}/ledger\">What this wallet's agent did before (its ledger)</a></p>",
            escape(&standing),
            escape(token)
        ),
    )
}

fn plain_page(title: &str, text: &str) -> String {
    page(
        title,
        "style.css",
        &format!("<p id=\"standing\" class=\"standing\" role=\"status\">{}</p>", escape(text)),
    )
}

/// A page titled `title` showing `body`, styled by the stylesheet at `css` (relative to the page).
fn page(title: &str, css: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · AgentPact</title><link rel=\"stylesheet\" href=\"{css}\"></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>"
    )
}

fn not_found() -> Response {
    let text = "There is no confirmation at this address. Ask the agent to try again.";
    respond(StatusCode::NOT_FOUND, HTML, plain_page("No such confirmation", text))
}

fn unavailable(e: &sqlx::Error) -> Response {
    tracing::warn!(error = %e, "a confirmation page could not be read");
    let text = "The confirmation could not be read just now; reload the page in a moment.";
    respond(StatusCode::SERVICE_UNAVAILABLE, HTML, plain_page("Try again", text))
}

fn respond(status: StatusCode, mime: &'static str, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(mime)),
            (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY)),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            // The address is a secret: no Referer carries it elsewhere, no cache keeps the page.
            (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response()
}

/// The value of `key` in an `application/x-www-form-urlencoded` body (plain values only).
fn form_value<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    body.split('&').filter_map(|pair| pair.split_once('=')).find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// `text` safe inside HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_answer_is_read_and_text_is_escaped() {
        assert_eq!(form_value("decision=confirm", "decision"), Some("confirm"));
        assert_eq!(form_value("x=1&decision=decline", "decision"), Some("decline"));
        assert_eq!(form_value("decision", "decision"), None);
        assert_eq!(escape("<b a=\"1\">&'"), "&lt;b a=&quot;1&quot;&gt;&amp;&#39;");
    }
}
