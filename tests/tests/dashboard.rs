//! The dashboard in a real Chromium against `agentpact dev`'s demo chain, as a person uses it:
//! the overview's counts, the pact list filtered through its form, a pact's timeline, an
//! address's credits, what an agent's score rests on (globally and as a viewer sees it), an
//! agent's ERC-8004 reputation raw beside grounded and trusted, the agent search, a
//! change on chain arriving on an open page, clear
//! messages for a bad id or address, the query console, a phone's width, and not one request to
//! a host other than the server. Screenshots of each page land in
//! `<target dir>/dashboard-screenshots/`.

use std::time::Duration;

use agentpact_contracts::{
    AgentPact, Deployment, Initiator, PactStatus, erc8004::RegistrationFile, links, money,
};
use agentpact_lab::Cast;
use agentpact_tests::{
    HarnessError,
    browser::{Browser, ENTER, TAB, screenshots},
    chain::{hash, send},
    dev::DevStack,
    erc8004::Registries,
    pacts::{DEADLINE_IN, REVIEW_PERIOD, THRESHOLD, WEIGHTS, creator_deposit},
};
use alloy::{
    primitives::{Address, U256},
    providers::{Provider, ProviderBuilder},
};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// The API's answer to `query`, asked directly (what the page must agree with).
async fn api(dev: &DevStack, query: &str, variables: Value) -> Result<Value> {
    agentpact_tests::api::data_at(&reqwest::Client::new(), &dev.graphql, query, variables).await
}

/// The ids of the pact rows the page shows, in order.
const SHOWN_PACTS: &str =
    "return [...document.querySelectorAll('#results tr[data-pact-id]')].map((r) => r.dataset.pactId)";

/// Every piece of text on the page whose contrast with its background is under WCAG AA's 4.5:1,
/// as `{ text, ratio }` (colours as the browser computed them).
const LOW_CONTRAST: &str = "
    const channel = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    const luminance = (css) => {
      const [r, g, b] = css.match(/[0-9.]+/g).slice(0, 3).map(Number).map(channel);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const background = (el) => {
      for (; el; el = el.parentElement) {
        const c = getComputedStyle(el).backgroundColor;
        if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c;
      }
      return 'rgb(255, 255, 255)';
    };
    const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    return [...document.querySelectorAll('header *, main *')]
      .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) && e.getClientRects().length)
      .map((e) => ({ text: e.textContent.trim().slice(0, 40), ratio: ratio(getComputedStyle(e).color, background(e)) }))
      .filter((x) => x.ratio < 4.5);";

/// Reads every vector of the amount table (`arguments[0]`, contracts/vectors/amounts.json) with
/// the dashboard's own reader and writer, imported inside the page; answers how many were read and
/// those the page read otherwise than the table says.
const AMOUNTS_IN_PAGE: &str = "
    const table = JSON.parse(arguments[0]);
    return import('/assets/js/format.js').then(({ parseAmount, units }) => ({
      checked: table.vectors.length,
      wrong: table.vectors
        .map((v) => ({ ...v, read: parseAmount(v.input, v.decimals),
                       written: v.units === undefined ? undefined : units(v.units, v.decimals) }))
        .filter((v) => (v.units === undefined ? v.read.error !== v.error
                                              : v.read.units !== v.units || v.written !== v.shown)),
    }));";

/// Submits the page's form as a person would (its button) and waits until the page of the new
/// URL, which must carry `filter`, has been drawn.
async fn submit(browser: &Browser, filter: &str) -> Result {
    browser.leaving().await?;
    browser.click("form.filters button[type=submit]").await?;
    let in_url = format!("return location.hash.includes({filter:?})");
    browser.wait_for("the filter in the URL", &in_url, Duration::from_secs(5)).await?;
    browser.drawn().await
}

/// The dev stack's deployment, as `agentpact dev` wrote it.
fn deployment(dev: &DevStack) -> Result<Deployment> {
    let file = dev.deployments.join("31337.json");
    serde_json::from_str(&std::fs::read_to_string(&file).map_err(process)?).map_err(process)
}

/// An agent's page says what its score rests on as the API does: the score and its view, each
/// trusted counterparty in the API's order with its paid pacts, trust, source and contribution,
/// the untrusted rest, and the ranking run's block; with `?viewer=` (one of those counterparties)
/// the viewer's view of the same, the viewer itself trusted fully.
async fn rests_on_the_agent_page(dev: &DevStack, browser: &Browser) -> Result {
    let query = "query($a: Address!, $v: Address) {
        _meta { reputation { block } }
        reputation(address: $a, viewer: $v) { score { value view trustedRaters }
          basis(first: 20) { raters { counterparty paidPacts trust source contribution } untrusted { raters } } } }";
    // The demo's ranking runs beside the indexer: wait for its first generation.
    let ranked = "{ _meta { reputation { seeds } } }";
    agentpact_tests::until(Duration::from_secs(60), "the first ranking run", || async {
        Ok(!api(dev, ranked, json!({})).await?["_meta"]["reputation"].is_null())
    })
    .await?;
    // A seed of the demo's ranking (its market's anchors): the market it trusts has hired it.
    let run = api(dev, ranked, json!({})).await?;
    let seed = run["_meta"]["reputation"]["seeds"][0].as_str().map(str::to_owned);
    let agent = seed.ok_or_else(|| process(format!("agentpact dev ranks reputation from no seed: {run}")))?;
    let global = api(dev, query, json!({ "a": agent })).await?;
    let first = global["reputation"]["basis"]["raters"][0]["counterparty"].as_str().map(str::to_owned);
    let viewer =
        first.ok_or_else(|| process(format!("the seed rests on no trusted counterparty: {global}")))?;
    const SHOWN: &str = "const s = document.getElementById('rests-on');
        return {
          view: s.dataset.view,
          score: Number(document.querySelector('[data-tile=score]').dataset.value),
          rows: [...s.querySelectorAll('tr[data-counterparty]')].map((r) => ({
            counterparty: r.dataset.counterparty.toLowerCase(), trust: Number(r.dataset.trust),
            contribution: Number(r.dataset.contribution), source: r.dataset.source,
            paidPacts: Number(r.children[1].textContent) })),
          untrusted: Number(s.querySelector('#untrusted').dataset.raters),
          block: Number(s.querySelector('#freshness')?.dataset.block),
        };";
    for seen_by in [None, Some(viewer.clone())] {
        let answer = api(dev, query, json!({ "a": agent, "v": seen_by })).await?;
        let rep = &answer["reputation"];
        // In upper-case hex: another URL than the page already open, so the router draws it.
        let route = seen_by.as_ref().map_or_else(String::new, |v| format!("?viewer={v}"));
        let at = format!("0x{}", agent[2..].to_uppercase());
        browser.open(&format!("{}#/address/{at}{route}", dev.dashboard)).await?;
        let shown = browser.run(SHOWN, json!([])).await?;
        // Numbers compared as numbers: the page writes 1 where the API writes 1.0.
        let row = |r: &Value| {
            let counterparty = r["counterparty"].as_str().map(str::to_lowercase);
            let numbers = [&r["trust"], &r["contribution"], &r["paidPacts"]].map(Value::as_f64);
            (counterparty, numbers, r["source"].clone())
        };
        let rows = |list: &Value| list.as_array().map(|l| l.iter().map(row).collect::<Vec<_>>());
        let context = format!("{shown} {answer}");
        assert_eq!(shown["view"], rep["score"]["view"], "{context}");
        assert_eq!(shown["score"].as_f64(), rep["score"]["value"].as_f64(), "{context}");
        assert_eq!(shown["block"].as_f64(), answer["_meta"]["reputation"]["block"].as_f64(), "{context}");
        assert_eq!(shown["untrusted"].as_f64(), rep["basis"]["untrusted"]["raters"].as_f64(), "{context}");
        assert_eq!(
            rows(&shown["rows"]),
            rows(&rep["basis"]["raters"]),
            "the rows in the API's order: {context}"
        );
        if seen_by.is_some() {
            let me = rep["basis"]["raters"].as_array().and_then(|l| {
                l.iter().find(|r| {
                    r["counterparty"].as_str().map(str::to_lowercase) == Some(viewer.to_lowercase())
                })
            });
            assert_eq!(
                me.map(|r| (r["source"].clone(), r["trust"].as_f64())),
                Some((json!("YOU"), Some(1.0))),
                "the viewer trusts itself fully: {context}"
            );
            // A viewer's trust only ever raises the market's.
            let globally = |who: &Value| {
                global["reputation"]["basis"]["raters"].as_array().and_then(|l| {
                    l.iter().find(|g| &g["counterparty"] == who).and_then(|g| g["trust"].as_f64())
                })
            };
            for r in rep["basis"]["raters"].as_array().into_iter().flatten() {
                let (seen, before) = (r["trust"].as_f64(), globally(&r["counterparty"]));
                assert!(
                    before.is_none_or(|t| seen >= Some(t)),
                    "{r} below its global trust {before:?}: {context}"
                );
            }
        }
    }
    browser.run("document.getElementById('rests-on').scrollIntoView()", json!([])).await?;
    browser.screenshot(&screenshots().join("address-rests-on-1440.png")).await?;
    assert_eq!(
        browser.run(LOW_CONTRAST, json!([])).await?,
        json!([]),
        "text under 4.5:1 in what a score rests on"
    );
    Ok(())
}

/// An agent's page and its ERC-8004 section: a one-line note while the demo seller has no ERC-8004
/// identity; once it registers (a name with markup in it) and two clients rate it, the buyer of a
/// completed pact (tagged with that pact: grounded) and a stranger to it (ungrounded), the page
/// left open redraws when the ranking run that read them replaces the scores (no pact of it
/// changed), with the raw mean, the grounded and the AgentPact scores side by side as the API
/// gives them, 50% ungrounded, each feedback marked on its own row with the grounding pact linked;
/// as a viewer sees it, the AgentPact score beside them stays the global one; `#/erc8004/<id>`
/// opens the same page; chain text shown as text.
async fn erc8004_on_the_agent_page(dev: &DevStack, browser: &Browser) -> Result {
    let page = |route: &str| format!("{}#/{route}", dev.dashboard);
    let provider = ProviderBuilder::new().connect_http(dev.rpc.parse().map_err(process)?);
    let cast = Cast::of(&provider.get_accounts().await?).map_err(process)?;
    let registries =
        deployment(dev)?.erc8004.ok_or_else(|| process("agentpact dev deployed no ERC-8004 registries"))?;
    let seller = cast.seller.to_string();

    // (Written in lower case: another URL than the page already open, so the router draws it.)
    browser.open(&page(&format!("address/{}", seller.to_lowercase()))).await?;
    let note = browser.run("return document.querySelector('#erc8004 .note')?.textContent", json!([])).await?;
    assert!(note.as_str().is_some_and(|t| t.starts_with("This address has no ERC-8004 identity")), "{note}");

    // A pact the demo buyer completed with the seller: what grounds the buyer's feedback.
    let completed = api(
        dev,
        "query($b: Address!, $s: Address!) { pacts(filter: { status: [COMPLETED], buyer: $b, seller: $s }, first: 1) { nodes { id } } }",
        json!({ "b": cast.buyer.to_string(), "s": seller }),
    )
    .await?;
    let pact = completed["pacts"]["nodes"][0]["id"].as_str().map(str::to_owned);
    let pact = pact.ok_or_else(|| {
        process(format!("the demo has no completed pact of its buyer and seller: {completed}"))
    })?;
    let strangers = api(
        dev,
        "query($a: Address!) { pacts(filter: { party: $a }) { totalCount } }",
        json!({ "a": cast.stranger.to_string() }),
    )
    .await?;
    assert_eq!(strangers["pacts"]["totalCount"], 0, "the stranger is a party to no pact");

    // The seller registers (through the node's unlocked account); the buyer and the stranger rate it.
    let name = "<b>Logos & Co</b>";
    let file = RegistrationFile::ours(
        name,
        "logos",
        "https://logos.example/mcp",
        vec!["logo-design".into()],
        31337,
        cast.seller,
    );
    let on_chain = Registries::at(registries, provider.clone().erased());
    let agent_id = on_chain.register(cast.seller, file.to_data_uri()).await?;
    let tagged = format!("pact:{pact}");
    on_chain.rate(agent_id, cast.buyer, 90, &tagged, "<i>on time</i>").await?;
    on_chain.rate(agent_id, cast.stranger, 10, "", "").await?;
    let rated_in = provider.get_block_number().await?;
    let query = "query($a: Address!) {
        _meta { reputation { block } }
        erc8004Agent(address: $a) { agentId reputation { feedback rawMeanValue groundedScore trustedScore ungroundedShare } }
        reputation(address: $a) { score { value } } }";
    let variables = json!({ "a": seller });
    // The feedback marks the ranking stale: a run reads it, with no pact of the seller changing.
    agentpact_tests::until(Duration::from_secs(30), "a ranking run past both feedbacks", || async {
        let ran = api(dev, query, variables.clone()).await?["_meta"]["reputation"]["block"].as_u64();
        Ok(ran.is_some_and(|block| block >= rated_in))
    })
    .await?;
    let answer = api(dev, query, variables).await?;
    let expected = &answer["erc8004Agent"]["reputation"];
    assert_eq!(expected["feedback"], 2, "{answer}");
    assert_eq!(expected["rawMeanValue"], 50.0, "{answer}");
    assert_eq!(expected["ungroundedShare"], 0.5, "{answer}");

    // The page left open redraws for that run (none of its pacts changed): its freshness says
    // the run's block.
    let run = answer["_meta"]["reputation"]["block"].clone();
    agentpact_tests::until(
        Duration::from_secs(30),
        "the open page redrawn for the new ranking run",
        || async {
            let shown = browser
                .run("return Number(document.querySelector('#freshness')?.dataset.block)", json!([]))
                .await?;
            Ok(shown.as_f64() == run.as_f64())
        },
    )
    .await?;
    let shown = browser
        .run(
            "const s = document.getElementById('erc8004');
             const tiles = Object.fromEntries([...s.querySelectorAll('[data-score]')]
               .map((t) => [t.dataset.score, { value: Number(t.dataset.value), text: t.querySelector('strong').textContent }]));
             return {
               agentId: s.querySelector('[data-agent-id]')?.textContent,
               terms: s.querySelector('dl').textContent,
               markup: s.querySelectorAll('dl b, td i').length,
               tiles,
               ungrounded: s.querySelector('#ungrounded').textContent,
               rows: [...s.querySelectorAll('tr[data-client]')].map((r) => ({
                 client: r.dataset.client.toLowerCase(), grounded: r.dataset.grounded,
                 mark: r.querySelector('[data-mark]').textContent, tags: r.children[3].textContent,
                 pacts: [...r.querySelectorAll('a[data-pact]')].map((a) => a.dataset.pact) })),
             };",
            json!([]),
        )
        .await?;
    assert_eq!(shown["agentId"], agent_id.to_string(), "{shown}");
    assert!(shown["terms"].as_str().is_some_and(|t| t.contains(name)), "the name as text: {shown}");
    assert_eq!(shown["markup"], 0, "chain text became markup: {shown}");
    let tiles = &shown["tiles"];
    assert_eq!(tiles["raw"]["text"], "50", "{shown}");
    let number = |v: &Value| v.as_f64().ok_or_else(|| process(format!("not a number: {v} in {shown}")));
    assert_eq!(number(&tiles["grounded"]["value"])?, number(&expected["groundedScore"])?, "{answer}");
    assert!(tiles["grounded"]["text"].as_str().is_some_and(|t| t.ends_with(" / 5")), "{shown}");
    assert_eq!(number(&tiles["trusted"]["value"])?, number(&expected["trustedScore"])?, "{answer}");
    assert_eq!(
        number(&tiles["agentpact"]["value"])?,
        number(&answer["reputation"]["score"]["value"])?,
        "{answer}"
    );
    assert!(
        shown["ungrounded"]
            .as_str()
            .is_some_and(|t| t.starts_with("50% of its ERC-8004 feedback is ungrounded")
                && t.contains("feedback from clients with no settled pact with this agent")),
        "{shown}"
    );
    let row = |who: Address| {
        shown["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["client"] == who.to_string().to_lowercase()))
    };
    let (buyer, stranger) = (row(cast.buyer), row(cast.stranger));
    assert_eq!(shown["rows"].as_array().map(Vec::len), Some(2), "{shown}");
    assert_eq!(
        buyer.map(|r| (&r["grounded"], &r["mark"], &r["pacts"])),
        Some((&json!("true"), &json!("Grounded"), &json!([pact]))),
        "the buyer's feedback, grounded by its pact: {shown}"
    );
    assert!(buyer.is_some_and(|r| r["tags"] == format!("{tagged}, <i>on time</i>")), "{shown}");
    assert_eq!(
        stranger.map(|r| (&r["grounded"], &r["mark"], &r["pacts"])),
        Some((&json!("false"), &json!("Ungrounded"), &json!([]))),
        "the stranger's feedback: {shown}"
    );
    browser.run("document.getElementById('erc8004').scrollIntoView()", json!([])).await?;
    browser.screenshot(&screenshots().join("address-erc8004-1440.png")).await?;
    assert_eq!(browser.run(LOW_CONTRAST, json!([])).await?, json!([]), "text under 4.5:1 on an agent's page");

    // As the buyer sees it (its own pact with the seller counts fully, so its view differs): the
    // AgentPact score beside the ERC-8004 ones is still the global one, as labelled.
    let seen = api(
        dev,
        "query($a: Address!, $v: Address!) { reputation(address: $a, viewer: $v) { score { value } globalScore { value } } }",
        json!({ "a": seller, "v": cast.buyer.to_string() }),
    )
    .await?;
    let (viewers, global) =
        (&seen["reputation"]["score"]["value"], &seen["reputation"]["globalScore"]["value"]);
    assert_eq!(global.as_f64(), answer["reputation"]["score"]["value"].as_f64(), "{seen} {answer}");
    assert_ne!(viewers.as_f64(), global.as_f64(), "the buyer's view raises the seller: {seen}");
    browser.open(&page(&format!("address/{seller}?viewer={}", cast.buyer))).await?;
    let tile = browser
        .run(
            "return Number(document.querySelector('#erc8004 [data-score=agentpact]').dataset.value)",
            json!([]),
        )
        .await?;
    assert_eq!(tile.as_f64(), global.as_f64(), "the AgentPact tile as a viewer sees the page: {seen}");

    // By its ERC-8004 id: the same page; an id it does not know, a sentence.
    browser.open(&page(&format!("erc8004/{agent_id}"))).await?;
    let opened = browser
        .run("return document.querySelector('#erc8004 [data-agent-id]')?.textContent", json!([]))
        .await?;
    assert_eq!(opened, agent_id.to_string());
    browser.open(&page("erc8004/999999")).await?;
    let text = browser.run("return document.querySelector('main .error')?.textContent", json!([])).await?;
    assert!(text.as_str().is_some_and(|t| t.contains("has no agent 999999")), "{text}");
    Ok(())
}

#[tokio::test]
async fn the_dashboard_shows_the_demo_chain_live_offline_and_at_a_phones_width() -> Result {
    let dev = DevStack::start().await?;
    let browser = Browser::start(1440, 1000).await?;
    let page = |route: &str| format!("{}#/{route}", dev.dashboard);

    // The overview: every status with the API's count.
    browser.open(&dev.dashboard).await?;
    let shown = browser
        .run(
            "return Object.fromEntries([...document.querySelectorAll('#by-status .bar')]
               .map((b) => [b.dataset.key, b.querySelector('.count').textContent]))",
            json!([]),
        )
        .await?;
    let stats = api(&dev, "{ stats { byStatus { status count } } }", json!({})).await?;
    for s in PactStatus::ALL {
        let row =
            stats["stats"]["byStatus"].as_array().and_then(|l| l.iter().find(|r| r["status"] == s.name()));
        let count =
            row.and_then(|r| r["count"].as_u64()).ok_or_else(|| process(format!("no {s} in {stats}")))?;
        assert!(count >= 1, "the demo has a pact in every status: {stats}");
        assert_eq!(shown[s.name()], count.to_string(), "{s} on the overview: {shown}");
    }
    // The score chart: each band with the API's count (the demo's verified pacts in theirs).
    let shown = browser
        .run(
            "return Object.fromEntries([...document.querySelectorAll('#scores .bar')]
               .map((b) => [b.dataset.key, Number(b.querySelector('.count').textContent)]))",
            json!([]),
        )
        .await?;
    let bands = api(&dev, "{ scoreDistribution { from to pacts } }", json!({})).await?;
    let bands = bands["scoreDistribution"].as_array().cloned().unwrap_or_default();
    assert_eq!(bands.len(), 10, "{bands:?}");
    assert!(bands.iter().any(|b| b["pacts"].as_u64() > Some(0)), "the demo verified some pacts: {bands:?}");
    for band in bands {
        assert_eq!(shown[format!("{}-{}", band["from"], band["to"])], band["pacts"], "{shown}");
    }
    // The indexer's health, from `_meta`.
    let indexing = browser
        .run("return document.querySelector('[data-tile=\"indexing\"] strong').textContent", json!([]))
        .await?;
    assert_eq!(indexing, "healthy", "the demo's indexer runs");
    browser.screenshot(&screenshots().join("overview-1440.png")).await?;
    assert_eq!(browser.run(LOW_CONTRAST, json!([])).await?, json!([]), "text under 4.5:1 on the overview");

    // Amounts: the page reads and writes every vector of the one table as the Rust money module
    // does (contracts/src/money.rs), ".5", "5." and "5.0000001" in USDC among them.
    let amounts = browser.run(AMOUNTS_IN_PAGE, json!([money::AMOUNT_VECTORS])).await?;
    let table: Value = serde_json::from_str(money::AMOUNT_VECTORS).map_err(process)?;
    assert_eq!(amounts["checked"], json!(table["vectors"].as_array().map(Vec::len)), "{amounts}");
    assert_eq!(amounts["wrong"], json!([]), "the dashboard reads amounts otherwise than the table");

    // The pact list, filtered through its form by status, then by party.
    browser.open(&page("pacts")).await?;
    browser.click("input[name=status][value=DISPUTED]").await?;
    submit(&browser, "status=DISPUTED").await?;
    let expected = api(
        &dev,
        "{ pacts(filter: { status: [DISPUTED] }, first: 20) { nodes { id } totalCount } }",
        json!({}),
    )
    .await?;
    let ids = |answer: &Value| {
        answer["pacts"]["nodes"].as_array().map(|n| n.iter().map(|p| p["id"].clone()).collect::<Vec<_>>())
    };
    assert_eq!(
        Some(browser.run(SHOWN_PACTS, json!([])).await?.as_array().cloned().unwrap_or_default()),
        ids(&expected)
    );
    assert_eq!(
        browser.run("return document.getElementById('total').dataset.total", json!([])).await?,
        expected["pacts"]["totalCount"].to_string()
    );
    let seller = api(&dev, "{ pact(id: 1) { seller } }", json!({})).await?["pact"]["seller"].clone();
    let seller = seller.as_str().ok_or_else(|| process("pact 1 has no seller"))?.to_owned();
    browser.open(&page("pacts")).await?;
    browser.type_into("input[name=party]", &seller).await?;
    submit(&browser, "party=").await?;
    let expected = api(
        &dev,
        "query($p: Address!) { pacts(filter: { party: $p }, first: 20) { nodes { id } } }",
        json!({ "p": seller }),
    )
    .await?;
    let shown = browser.run(SHOWN_PACTS, json!([])).await?;
    assert!(shown.as_array().is_some_and(|s| s.len() > 2), "the seller's pacts: {shown}");
    assert_eq!(shown.as_array().cloned(), ids(&expected));
    browser.screenshot(&screenshots().join("pacts-1440.png")).await?;

    // A pact's page: its timeline in order, with the block and transaction of each event.
    browser.open(&page("pacts/4")).await?;
    let timeline = browser
        .run(
            "return [...document.querySelectorAll('#timeline li')]
               .map((e) => ({ kind: e.dataset.kind, blockNumber: Number(e.dataset.block), txHash: e.dataset.tx }))",
            json!([]),
        )
        .await?;
    let expected = api(&dev, "{ pact(id: 4) { timeline { kind blockNumber txHash } } }", json!({})).await?;
    assert!(timeline.as_array().is_some_and(|t| t.len() >= 8), "{timeline}");
    assert_eq!(timeline, expected["pact"]["timeline"]);
    browser.screenshot(&screenshots().join("pact-1440.png")).await?;

    // A pact of three stages (demo pact 20): a row per stage with its status, ending and what its
    // end credited each side, as the API's milestones say; the pact shows its lowest live stage.
    browser.open(&page("pacts/20")).await?;
    let lanes = browser.stage_rows().await?;
    let staged = api(
        &dev,
        "{ pact(id: 20) { status milestones { index status ending toSellerFormatted toBuyerFormatted } } }",
        json!({}),
    )
    .await?;
    let milestones = staged["pact"]["milestones"].as_array().cloned().unwrap_or_default();
    let shown = |formatted: &Value| formatted.as_str().map_or_else(|| "—".to_owned(), |a| format!("{a} ETH"));
    let expected: Vec<Value> = milestones
        .iter()
        .map(|m| {
            json!({ "index": m["index"], "status": m["status"], "toSeller": shown(&m["toSellerFormatted"]),
                    "toBuyer": shown(&m["toBuyerFormatted"]) })
        })
        .collect();
    assert_eq!(lanes, json!(expected), "the stage rows against the API's milestones");
    let endings: Vec<&str> = milestones.iter().filter_map(|m| m["ending"].as_str()).collect();
    assert_eq!(endings, ["COMPLETED", "RULED", "LIVE"], "{staged}");
    assert_eq!(staged["pact"]["status"], "IN_PROGRESS", "the pact shows its lowest live stage");
    browser.screenshot(&screenshots().join("pact-stages-1440.png")).await?;

    // A split: the ruling's division on the page and in the timeline (demo pact 8), and the
    // accepted offer of a settlement (demo pact 9).
    browser.open(&page("pacts/8")).await?;
    let split = browser
        .run(
            "return [document.getElementById('division').textContent,
                     [...document.querySelectorAll('#timeline li')].map((e) => e.textContent).find((t) => t.startsWith('DisputeResolved')),
                     document.getElementById('status-description').textContent]",
            json!([]),
        )
        .await?;
    let division = api(
        &dev,
        "{ pact(id: 8) { status ending division { sellerShare sellerCreditFormatted } } }",
        json!({}),
    )
    .await?;
    assert_eq!(
        (&division["pact"]["status"], &division["pact"]["ending"]),
        (&json!("SPLIT"), &json!("RULED")),
        "{division}"
    );
    assert!(split[2].as_str().is_some_and(|t| t.ends_with("Ended: Ruled (split).")), "{split}");
    assert!(
        split[0].as_str().is_some_and(|t| t.contains("ruled 70% of the pot") && t.contains("0.084")),
        "{split}"
    );
    assert!(split[1].as_str().is_some_and(|t| t.contains("(70% of the pot to the seller)")), "{split}");
    browser.open(&page("pacts/9")).await?;
    let offer = browser
        .run(
            "return [...document.querySelectorAll('#main tr[data-round]')].map((r) => r.textContent)",
            json!([]),
        )
        .await?;
    assert!(offer[0].as_str().is_some_and(|t| t.contains("60%") && t.ends_with("Accepted")), "{offer}");
    assert_eq!(
        browser.run(LOW_CONTRAST, json!([])).await?,
        json!([]),
        "text under 4.5:1 on a split pact's page"
    );
    assert_eq!(browser.run(LOW_CONTRAST, json!([])).await?, json!([]), "text under 4.5:1 on a pact's page");

    // An address's page: what the escrow owes it per currency, as the API says.
    browser.open(&page(&format!("address/{seller}"))).await?;
    let shown = browser
        .run(
            "return Object.fromEntries([...document.querySelectorAll('tr[data-currency]')]
               .map((r) => [r.dataset.currency, parseFloat(r.lastElementChild.textContent)]))",
            json!([]),
        )
        .await?;
    let account = api(
        &dev,
        "query($a: Address!) { account(address: $a) { balances { currency { symbol } owedFormatted } } }",
        json!({ "a": seller }),
    )
    .await?;
    let balances = account["account"]["balances"].as_array().cloned().unwrap_or_default();
    assert!(!balances.is_empty(), "the demo seller was paid: {account}");
    for b in balances {
        let owed: f64 = b["owedFormatted"].as_str().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
        assert_eq!(
            shown[b["currency"]["symbol"].as_str().unwrap_or("?")].as_f64(),
            Some(owed),
            "{shown} vs {b}"
        );
    }
    browser.screenshot(&screenshots().join("address-1440.png")).await?;

    // The seller's ERC-8004 reputation: none, then raw beside grounded once it is registered there.
    rests_on_the_agent_page(&dev, &browser).await?;
    erc8004_on_the_agent_page(&dev, &browser).await?;

    // By keyboard alone: Tab from the top meets the skip link, then the sections, then the
    // form; Space ticks a status, Enter on Apply filters.
    browser.open(&page("pacts")).await?;
    // A fresh load, so the focus starts at the top of the document.
    browser.leaving().await?;
    browser.run("location.reload()", json!([])).await?;
    browser.drawn().await?;
    let focused = "const e = document.activeElement; return e ? (e.value || e.textContent).trim() : null";
    let mut order = Vec::new();
    while order.last().and_then(Value::as_str) != Some("REFUNDED") {
        if order.len() > 40 {
            return Err(process(format!("Tab never reached the REFUNDED box: {order:?}")));
        }
        browser.press(&[TAB]).await?;
        order.push(browser.run(focused, json!([])).await?);
    }
    assert_eq!(
        order[..5],
        [json!("Skip to content"), json!("AgentPact"), json!("Overview"), json!("Pacts"), json!("Agents")]
    );
    browser.press(&[" "]).await?;
    while browser.run(focused, json!([])).await? != json!("Apply") {
        if order.len() > 80 {
            return Err(process(format!("Tab never reached Apply: {order:?}")));
        }
        browser.press(&[TAB]).await?;
        order.push(browser.run(focused, json!([])).await?);
    }
    browser.leaving().await?;
    browser.press(&[ENTER]).await?;
    browser.drawn().await?;
    let expected =
        api(&dev, "{ pacts(filter: { status: [REFUNDED] }, first: 20) { nodes { id } } }", json!({})).await?;
    assert_eq!(browser.run(SHOWN_PACTS, json!([])).await?.as_array().cloned(), ids(&expected));

    // The market, searched through its form as searchAgents searches.
    browser.open(&page("agents")).await?;
    browser.type_into("input[name=capability]", "logo-design").await?;
    submit(&browser, "capability=logo-design").await?;
    let shown = browser
        .run(
            "return [...document.querySelectorAll('#results tr[data-agent]')].map((r) => r.dataset.agent)",
            json!([]),
        )
        .await?;
    let found =
        api(&dev, r#"{ searchAgents(capability: "logo-design") { edges { node { address } } } }"#, json!({}))
            .await?;
    let expected: Vec<_> = found["searchAgents"]["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["node"]["address"].clone())
        .collect();
    assert!(!expected.is_empty(), "the demo designer offers logo-design: {found}");
    assert_eq!(shown, json!(expected));

    // A change on chain reaches an open page without a reload: the seller starts the FUNDED demo
    // pact 1 through the node's unlocked account (as `cast send --unlocked` would).
    browser.open(&page("pacts/1")).await?;
    browser.run("window.notReloaded = true", json!([])).await?;
    let status = "return document.querySelector('h1 [data-status-label]')?.dataset.statusLabel";
    assert_eq!(browser.run(status, json!([])).await?, "FUNDED");
    let deployment = deployment(&dev)?;
    let provider = ProviderBuilder::new().connect_http(dev.rpc.parse().map_err(process)?);
    let seller: Address = seller.parse().map_err(process)?;
    send(AgentPact::new(deployment.agent_pact, provider).startWork(U256::from(1)).from(seller)).await?;
    let mined = std::time::Instant::now();
    browser
        .wait_for(
            "pact 1 IN_PROGRESS on the open page",
            &format!("{status} === 'IN_PROGRESS' && window.notReloaded === true"),
            Duration::from_secs(2),
        )
        .await?;
    eprintln!("the open page showed the change {:?} after the transaction was mined", mined.elapsed());

    // Bad input: clear messages, not a blank page.
    browser.open(&page("pacts/999999")).await?;
    let text = browser.run("return document.querySelector('main .error')?.textContent", json!([])).await?;
    assert!(text.as_str().is_some_and(|t| t.contains("There is no pact #999999")), "{text}");
    browser.open(&page("address/0x123")).await?;
    let text = browser.run("return document.querySelector('main .error')?.textContent", json!([])).await?;
    assert!(text.as_str().is_some_and(|t| t.contains("\"0x123\" is not an address")), "{text}");
    browser.open(&page("pacts?party=0xnothex")).await?;
    let text =
        browser.run("return document.querySelector('#results .error')?.textContent", json!([])).await?;
    assert!(text.as_str().is_some_and(|t| t.contains("is not an address")), "{text}");

    // The query console at /graphql, served by the binary like the rest.
    browser.open(&dev.graphql).await?;
    browser.type_into("#query", "{ stats { pacts } }").await?;
    browser.click("#run").await?;
    let answer = browser
        .wait_for(
            "the console's answer",
            "const a = document.getElementById('answer').textContent; return a.includes('\"pacts\"') && a",
            Duration::from_secs(5),
        )
        .await?;
    let pacts = api(&dev, "{ stats { pacts } }", json!({})).await?["stats"]["pacts"].clone();
    assert!(answer.as_str().is_some_and(|a| a.contains(&format!("\"pacts\": {pacts}"))), "{answer}");
    browser
        .wait_for(
            "the schema listed",
            "return document.getElementById('docs').textContent.includes('searchAgents')",
            Duration::from_secs(5),
        )
        .await?;
    browser.screenshot(&screenshots().join("console-1440.png")).await?;

    // A phone's width: nothing scrolls sideways.
    browser.resize(390, 844).await?;
    for (name, route) in
        [("overview", ""), ("pact", "pacts/4"), ("pacts", "pacts"), ("address", &format!("address/{seller}"))]
    {
        browser.open(&page(route)).await?;
        let (width, scroll) = (
            browser.run("return window.innerWidth", json!([])).await?,
            browser.run("return document.documentElement.scrollWidth", json!([])).await?,
        );
        assert!(width.as_u64().is_some_and(|w| w <= 400), "the window is not a phone's: {width}");
        assert!(scroll.as_u64() <= width.as_u64(), "{name} scrolls sideways at {width} px: {scroll} px wide");
        browser.screenshot(&screenshots().join(format!("{name}-390.png"))).await?;
    }

    // Every request of the whole visit went to the server; nothing failed in the console.
    let urls = browser.requested_urls().await?;
    let origin = dev.dashboard.trim_end_matches('/').to_owned();
    let socket = origin.replacen("http://", "ws://", 1);
    assert!(urls.iter().any(|u| u.starts_with(&socket)), "no live connection was opened: {urls:?}");
    let elsewhere: Vec<_> = urls
        .iter()
        .filter(|u| !(u.starts_with(&origin) || u.starts_with(&socket) || u.starts_with("data:")))
        .collect();
    assert!(elsewhere.is_empty(), "requests to other hosts: {elsewhere:?}");
    assert_eq!(browser.console_errors().await?, Vec::<String>::new(), "errors in the browser's console");

    browser.close().await?;
    dev.stop().await
}

/// Creates a buyer's pact of 0.01 ETH with `spec_uri` on the dev chain, straight through the
/// contract (as a client other than our tools could), through the node's unlocked accounts; waits
/// until the API has indexed it; returns its id.
async fn pact_with_spec(dev: &DevStack, spec_uri: &str) -> Result<U256> {
    let provider = ProviderBuilder::new().connect_http(dev.rpc.parse().map_err(process)?);
    let cast = Cast::of(&provider.get_accounts().await?).map_err(process)?;
    let escrow = AgentPact::new(deployment(dev)?.agent_pact, provider.clone());
    let now = provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await?
        .ok_or_else(|| process("the dev chain has no latest block"))?
        .header
        .timestamp;
    let payment = U256::from(10u64.pow(16));
    let terms = AgentPact::Terms {
        initiator: Initiator::Buyer.code(),
        specHash: hash(7),
        specUri: spec_uri.into(),
        deadline: now + DEADLINE_IN,
        acceptBy: 0,
        reviewPeriod: REVIEW_PERIOD,
        threshold: THRESHOLD,
        arbitrator: cast.arbitrator,
        counterparty: Address::ZERO,
        currency: Address::ZERO,
        payment,
        oracles: cast.oracles.clone(),
        weights: WEIGHTS.to_vec(),
    };
    let id = escrow.pactCount().call().await?;
    let deposit = creator_deposit(Initiator::Buyer, payment);
    send(escrow.createPact(terms).from(cast.buyer).value(deposit)).await?;
    let indexed = "query($id: BigInt!) { pact(id: $id) { id } }";
    let started = std::time::Instant::now();
    while api(dev, indexed, json!({ "id": id.to_string() })).await?["pact"].is_null() {
        if started.elapsed() > Duration::from_secs(30) {
            return Err(process(format!("pact {id} was not indexed within 30 s")));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(id)
}

/// How the page shows the URI it was given: `{ tag, href, text }` of the `[data-uri]` element.
const SHOWN_URI: &str = "
    const e = document.querySelector('[data-uri]');
    return e && { tag: e.tagName, href: e.getAttribute('href'), text: e.textContent,
                  scriptLinks: [...document.querySelectorAll('a')].filter((a) => /^\\s*javascript:/i.test(a.getAttribute('href') ?? '')).length };";

/// Whatever the chain holds is text, and the dashboard links only the schemes our tools write
/// (`agentpact_contracts::links::SCHEMES`, the same list in the page's JavaScript): a pact whose
/// spec is `javascript:alert(1)`, made straight through the contract, shows it as text with no
/// link; an https spec is a link. The page judges links exactly as `links::is_link` does.
#[tokio::test]
async fn chain_text_is_a_link_only_when_its_scheme_is_on_the_list() -> Result {
    let dev = DevStack::start().await?;
    let browser = Browser::start(1440, 1000).await?;
    let page = |route: &str| format!("{}#/{route}", dev.dashboard);

    let script = pact_with_spec(&dev, "javascript:alert(1)").await?;
    let web = pact_with_spec(&dev, "https://specs.example/logo.md").await?;
    browser.open(&page(&format!("pacts/{script}"))).await?;
    let shown = browser.run(SHOWN_URI, json!([])).await?;
    assert_eq!(
        shown,
        json!({ "tag": "SPAN", "href": null, "text": "javascript:alert(1)", "scriptLinks": 0 }),
        "a javascript: spec is text"
    );
    browser.open(&page(&format!("pacts/{web}"))).await?;
    let shown = browser.run(SHOWN_URI, json!([])).await?;
    assert_eq!(
        shown,
        json!({ "tag": "A", "href": "https://specs.example/logo.md", "text": "https://specs.example/logo.md", "scriptLinks": 0 })
    );

    // The page's list and judgement are the Rust ones.
    let listed =
        browser.run("return import('/assets/js/format.js').then((f) => f.URI_SCHEMES)", json!([])).await?;
    assert_eq!(listed, json!(links::SCHEMES), "dashboard/js/format.js URI_SCHEMES vs contracts/src/links.rs");
    let uris = [
        "https://example.com/spec",
        "HTTP://example.com",
        "ipfs://QmXoyp",
        "ar://tx",
        "hire://conversations/conv_1",
        "javascript:alert(1)",
        "JavaScript://%0aalert(1)",
        "data:text/html,<b>x</b>",
        "https:",
        "https://",
        "https://a b",
        "https://a\tb",
        "https://a\u{85}b",
        "1https://a",
        "",
        "ipfs:/Qm",
        "vbscript://x",
    ];
    let judged = browser
        .run("return import('/assets/js/format.js').then((f) => arguments[0].map(f.isLink))", json!([uris]))
        .await?;
    let expected: Vec<bool> = uris.iter().map(|u| links::is_link(u)).collect();
    assert_eq!(judged, json!(expected), "isLink vs links::is_link over {uris:?}");

    browser.close().await?;
    dev.stop().await
}

/// What a person reads where the page used to show machine values or nothing: the live badge on
/// pages opened directly that subscribe to nothing (the agents and the console), why an ended
/// split pact has no weighted score, checksummed payout recipients, a review period in days.
#[tokio::test]
async fn the_dashboard_says_live_why_no_score_checksums_and_days() -> Result {
    let dev = DevStack::start().await?;
    let page = |route: &str| format!("{}#/{route}", dev.dashboard);
    let badge = "return document.getElementById('live').textContent === 'live'";
    for url in [page("agents"), dev.graphql.clone()] {
        // A fresh browser, so the page is opened directly, not reached from another.
        let browser = Browser::start(1440, 1000).await?;
        browser.goto(&url).await?;
        browser.drawn().await?;
        browser.wait_for(&format!("the live badge on {url}"), badge, Duration::from_secs(20)).await?;
        browser.close().await?;
    }

    let browser = Browser::start(1440, 1000).await?;
    // Demo pacts 8 and 9 ended SPLIT by a ruling and by a settlement before any weighted score.
    for (id, how) in [(8, "by the arbitrator's ruling"), (9, "by a settlement between buyer and seller")] {
        let truth = api(&dev, &format!("{{ pact(id: {id}) {{ status finalScore }} }}"), json!({})).await?;
        assert_eq!(truth["pact"], json!({ "status": "SPLIT", "finalScore": null }), "demo pact {id}");
        browser.open(&page(&format!("pacts/{id}"))).await?;
        let said =
            browser.run("return document.getElementById('final-score').textContent", json!([])).await?;
        let said = said.as_str().unwrap_or_default();
        assert!(
            said.starts_with("Verification never finished: the pact ended ") && said.contains(how),
            "pact {id}: {said}"
        );
        assert!(!said.contains("is computed when"), "pact {id}: {said}");
    }

    // A completed pact: payouts to checksummed addresses, the review period in words.
    browser.open(&page("pacts/4")).await?;
    let truth = api(&dev, "{ pact(id: 4) { reviewPeriod timeline { kind data } } }", json!({})).await?;
    let paid: Vec<String> = truth["pact"]["timeline"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == "Payout")
        .filter_map(|e| e["data"]["to"].as_str()?.parse::<Address>().ok())
        .map(|a| a.to_checksum(None))
        .collect();
    assert!(!paid.is_empty(), "demo pact 4 paid out: {truth}");
    let shown = browser
        .run(
            "const card = [...document.querySelectorAll('section.card')].find((s) => s.querySelector('h2')?.textContent === 'Payouts');
             return [...card.querySelectorAll('[data-address]')].map((a) => [a.dataset.address, a.title]);",
            json!([]),
        )
        .await?;
    assert_eq!(shown, json!(paid.iter().map(|a| [a, a]).collect::<Vec<_>>()), "payouts checksummed");
    assert_eq!(truth["pact"]["reviewPeriod"], 259_200, "the demo's review period");
    let review = browser
        .run(
            "const dt = [...document.querySelectorAll('dt')].find((d) => d.textContent === 'Review period');
             return dt.nextElementSibling.textContent;",
            json!([]),
        )
        .await?;
    assert_eq!(review, "3 days");
    let durations = browser
        .run(
            "return import('/assets/js/format.js').then((f) => [0, 1, 45, 60, 3600, 5400, 86400, 90061].map(f.duration))",
            json!([]),
        )
        .await?;
    assert_eq!(
        durations,
        json!([
            "0 seconds",
            "1 second",
            "45 seconds",
            "1 minute",
            "1 hour",
            "1 hour 30 minutes",
            "1 day",
            "1 day 1 hour 1 minute 1 second"
        ])
    );
    browser.close().await?;
    dev.stop().await
}
