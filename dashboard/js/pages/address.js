// One address: its agent profile if it has one, its reputation as seller, buyer and oracle with
// what its score rests on (its counterparties and their trust as raters, in the global view or as
// `?viewer=0x…` sees it) and how fresh it is, its ERC-8004 identity with the raw ERC-8004 score
// beside the grounded and trusted ones, its stake if it is an oracle, its pacts and the feedback
// it received. Redrawn when one of its pacts changes or a ranking run replaces the scores.

import { onPactChanges, query, quietly } from '../api.js';
import { fill, h, message, section, table, terms } from '../dom.js';
import { address, amount, duration, hash, isAddress, isPactId, pactLink, score, share, time, units, uri } from '../format.js';
import { pactRows, PACT_ROW } from './pacts.js';

const ROLE = 'pacts completed refunded disputed timedOut meanScore agreement volumes { formatted currency { symbol } } score { value rated }';

const ADDRESS = `
  query Address($address: Address!, $viewer: Address) {
    agent(address: $address) { name description endpoint active registeredAt capabilities { name description priceFormatted currency { symbol } } }
    oracle(address: $address) { stake status capabilities registeredAt }
    meta: _meta { reputation { block computedAt ageSeconds seeds note } }
    reputation(address: $address, viewer: $viewer) {
      score { value rated raters trustedRaters trustedWeight view }
      globalScore { value }
      basis(first: 20) { raters { counterparty paidPacts evidence trust source contribution } untrusted { raters evidence } }
      asSeller { ${ROLE} } asBuyer { ${ROLE} } asOracle { ${ROLE} }
      feedback { count raters meanRating }
      recentFeedback(first: 10) { pactId rater rating tags comment givenAt }
    }
    pacts(filter: { party: $address }, first: 20) { nodes { ${PACT_ROW} } totalCount }
    account(address: $address) {
      balances { currency { symbol } creditedFormatted withdrawnFormatted owedFormatted }
      withdrawals(first: 10) { currency { symbol } amountFormatted blockNumber withdrawnAt }
    }
  }`;

const ERC8004_AGENT = `
  agentId owner wallet name registeredAt
  reputation { feedback clients rawMeanValue grounded groundedClients groundedWeight groundedScore trustedClients trustedWeight trustedScore ungroundedShare }
  feedback(first: 10) { client index value tags feedbackUri revoked grounded taggedPact groundingPacts givenAt txHash }`;

const ERC8004 = `query Erc8004($address: Address!) { erc8004Agent(address: $address) { ${ERC8004_AGENT} } }`;

/** How often the page asks whether a ranking run replaced the scores (no subscription says it). */
const RANKING_POLL_MS = 5000;

const RANKING = 'query { _meta { reputation { computedAt } } }';

/**
 * Renders the page of `addr` into `main`, redrawn when one of its pacts changes and when a ranking
 * run replaced the scores it shows (the run's `computedAt` changed).
 */
export async function addressPage(main, { args: [addr], params, live }) {
  if (!isAddress(addr)) {
    fill(main, h('h1', {}, 'Address'), message('error', `"${addr}" is not an address. An address is 0x followed by 40 hexadecimal digits, such as 0x70997970C51812dc3A010C7d01b50e0d17dc79C8.`));
    return;
  }
  const viewer = params?.get('viewer') || null;
  if (viewer != null && !isAddress(viewer)) {
    fill(main, h('h1', {}, 'Address'), message('error', `"${viewer}" is not an address to see the score as. Give ?viewer= an address (0x and 40 hexadecimal digits), or leave it out for the global view.`));
    return;
  }
  let ranked = null;
  const draw = async () => {
    // The ERC-8004 part is asked apart: when it cannot be answered, the rest of the page still is.
    const [data, erc8004] = await Promise.all([
      query(ADDRESS, { address: addr, viewer }),
      query(ERC8004, { address: addr }).then((d) => ({ agent: d.erc8004Agent }), (e) => ({ error: e.message })),
    ]);
    ranked = data.meta?.reputation?.computedAt ?? null;
    render(main, addr, data, erc8004, viewer);
  };
  await draw();
  live(onPactChanges({ party: addr }, draw));
  const reranked = async () => {
    const { _meta: meta } = await query(RANKING);
    if ((meta?.reputation?.computedAt ?? null) !== ranked) await draw();
  };
  const timer = setInterval(() => quietly(reranked), RANKING_POLL_MS);
  live(() => clearInterval(timer));
}

/** The page of ERC-8004 agent `id` (`#/erc8004/<id>`): the address page of its wallet, else its owner. */
export async function erc8004Page(main, { args: [id], live }) {
  if (!isPactId(id)) {
    fill(main, h('h1', {}, 'ERC-8004 agent'), message('error', `"${id}" is not an ERC-8004 agent id: an agent id is a whole number such as 12.`));
    return;
  }
  const { erc8004Agent: agent } = await query('query($id: BigInt!) { erc8004Agent(agentId: $id) { wallet owner } }', { id });
  const addr = agent && (agent.wallet ?? agent.owner);
  if (!addr) {
    fill(main, h('h1', {}, `ERC-8004 agent ${id}`), message('error', `The chain's ERC-8004 Identity Registry has no agent ${id} that this index knows of. Check the id, or `, h('a', { href: '/#/agents' }, 'browse the agents'), '.'));
    return;
  }
  await addressPage(main, { args: [addr], live });
}

function render(main, addr, { agent, oracle, meta, reputation: r, pacts, account }, erc8004, viewer) {
  fill(main,
    h('h1', {}, agent ? agent.name : 'Address', ' ', h('code', { class: 'hash' }, addr)),
    agent ? h('p', { class: 'lead' }, agent.description, agent.active ? '' : ' (stepped out of the market)') : null,
    agent?.endpoint ? h('p', { id: 'endpoint' }, 'Endpoint: ', uri(agent.endpoint)) : null,
    h('div', { class: 'tiles' },
      h('div', { class: 'tile', 'data-tile': 'score', 'data-value': r.score.value, 'data-view': r.score.view },
        h('span', { class: 'tile-name' }, 'Reputation'), h('strong', {}, score(r.score.value)),
        h('span', { class: 'meta' }, viewer ? ['as seen by ', address(viewer)] : 'global view: the market\'s trust')),
      h('div', { class: 'tile' }, h('span', { class: 'tile-name' }, 'Pacts'), h('strong', {}, String(pacts.totalCount))),
      h('div', { class: 'tile' }, h('span', { class: 'tile-name' }, 'Feedback'), h('strong', {}, r.feedback.meanRating == null ? '—' : `${r.feedback.meanRating.toFixed(1)} / 5 (${r.feedback.count})`))),
    agent ? section('Capabilities', table('Capabilities', ['Capability', 'What it covers', 'Price'],
      agent.capabilities.map((c) => h('tr', {}, h('td', {}, c.name), h('td', {}, c.description), h('td', { class: 'num' }, amount(c.priceFormatted, c.currency)))))) : null,
    section('Reputation by role', table('Reputation by role', ['Role', 'Score', 'Pacts', 'Completed', 'Refunded', 'Disputed', 'Timed out', 'Volume'],
      [['Seller', r.asSeller], ['Buyer', r.asBuyer], ['Oracle', r.asOracle]].map(([role, x]) => h('tr', { 'data-role': role },
        h('th', { scope: 'row' }, role), h('td', { class: 'num' }, score(x.score.value)), h('td', { class: 'num' }, x.pacts),
        h('td', { class: 'num' }, x.completed), h('td', { class: 'num' }, x.refunded), h('td', { class: 'num' }, x.disputed),
        h('td', { class: 'num' }, x.timedOut), h('td', {}, x.volumes.map((v) => amount(v.formatted, v.currency)).join(' · ') || '—'))))),
    restsOn(r, meta?.reputation, viewer),
    erc8004Section(erc8004, r.globalScore),
    oracle ? section('As oracle', terms([['Status', oracle.status], ['Stake', `${units(oracle.stake, 18)} ETH`], ['Verifies', oracle.capabilities.join(', ')], ['Registered', time(oracle.registeredAt)]])) : null,
    section(`Pacts (${pacts.totalCount})`, pactRows(pacts.nodes, 'Pacts of this address', 'This address takes part in no pact.'),
      pacts.totalCount > pacts.nodes.length ? h('p', {}, h('a', { href: `/#/pacts?party=${addr}` }, 'All its pacts →')) : null),
    section('Money in the escrow', money(account)),
    section('Feedback received', table('Feedback received', ['Pact', 'From', 'Rating', 'Tags', 'Comment', 'When'],
      r.recentFeedback.map((f) => h('tr', {}, h('td', {}, pactLink(f.pactId)), h('td', {}, address(f.rater)), h('td', {}, `${f.rating} / 5`),
        h('td', {}, f.tags.join(', ')), h('td', {}, f.comment), h('td', {}, time(f.givenAt)))), 'No feedback received yet.')));
}

/** Why each counterparty is trusted, as a person reads it. */
const SOURCES = {
  YOU: 'the viewer itself',
  SEED: 'a seed of the ranking',
  YOUR_COUNTERPARTY: 'the viewer\'s own counterparty',
  MARKET: 'trusted by the market',
};

/**
 * What the score rests on: the trusted counterparties by contribution (trust × evidence), each
 * with its paid pacts and a trust bar; the untrusted rest, which weighs nothing; and how fresh the
 * scores are (the ranking run's block and age).
 */
function restsOn({ score: s, basis }, run, viewer) {
  const more = s.trustedRaters - basis.raters.length;
  const fresh = run
    ? h('p', { id: 'freshness', 'data-block': run.block, 'data-age': run.ageSeconds },
      `Computed at block ${run.block}, ${duration(run.ageSeconds)} ago, from ${run.seeds.length} ${run.seeds.length === 1 ? 'seed' : 'seeds'}. `,
      run.note ? h('strong', {}, `${run.note}.`) : 'Scores are ranked periodically, not with every block.')
    : message('note', 'Not ranked yet: every score is 3.00 until the indexer\'s first ranking run.');
  return h('section', { class: 'card', id: 'rests-on', 'data-view': s.view },
    h('h2', {}, 'What the score rests on'),
    h('p', {}, viewer
      ? ['As seen by ', address(viewer), ': the market\'s trust in each counterparty, raised where this viewer itself endorsed it. ']
      : 'In the global view: each counterparty\'s evidence counts as far as the market trusts it as a rater (trust that flows from the seeds, never through this address). ',
    `Trusted weight ${s.trustedWeight.toFixed(2)} from ${s.trustedRaters} of ${s.raters} counterparties.`),
    table('Counterparties the score rests on', ['Counterparty', 'Paid pacts', 'Trust', 'Why', 'Contribution'],
      basis.raters.map((x) => h('tr', { 'data-counterparty': x.counterparty, 'data-trust': x.trust, 'data-contribution': x.contribution, 'data-source': x.source },
        h('td', {}, address(x.counterparty)),
        h('td', { class: 'num' }, x.paidPacts),
        h('td', {}, trustBar(x.trust)),
        h('td', {}, SOURCES[x.source] ?? x.source),
        h('td', { class: 'num', title: `trust ${x.trust.toFixed(2)} × evidence ${x.evidence.toFixed(2)}` }, x.contribution.toFixed(2)))),
      'No counterparty the market trusts has dealt with this address yet: its score is the starting 3.00.'),
    more > 0 ? h('p', { class: 'meta' }, `and ${more} more trusted ${more === 1 ? 'counterparty' : 'counterparties'} with smaller contributions.`) : null,
    h('p', { id: 'untrusted', 'data-raters': basis.untrusted.raters, 'data-evidence': basis.untrusted.evidence },
      basis.untrusted.raters
        ? [h('strong', {}, `${basis.untrusted.raters} ${basis.untrusted.raters === 1 ? 'counterparty' : 'counterparties'}`),
          ` with trust 0 hold ${basis.untrusted.evidence.toFixed(2)} evidence units: they weigh nothing in this score (wallets nobody the market trusts has dealt with).`]
        : 'Every counterparty with evidence of this address is trusted at least a little.'),
    fresh);
}

/** Trust 0-1 as a bar and a percentage. */
function trustBar(trust) {
  const fill = h('span', { class: 'fill' });
  fill.style.width = `${Math.round(trust * 100)}%`;
  return h('span', { class: 'trust' }, h('span', { class: 'track', 'aria-hidden': 'true' }, fill), `${Math.round(trust * 100)}%`);
}

/**
 * Its ERC-8004 identity; its raw ERC-8004 score (every feedback as given) beside the grounded one
 * (only feedback from clients that paid it through a settled pact) and its global AgentPact score
 * (the market's, whatever `?viewer=` the page shows the reputation as); how
 * much of the feedback is ungrounded; the latest feedback, each marked grounded or not.
 */
function erc8004Section({ agent: a, error }, agentpact) {
  const card = (...children) => h('section', { class: 'card', id: 'erc8004' }, h('h2', {}, 'ERC-8004'), ...children);
  if (error) return card(message('error', `Its ERC-8004 identity could not be read: ${error}`));
  if (!a) return card(message('note', 'This address has no ERC-8004 identity: no agent of the chain\'s ERC-8004 Identity Registry has it as its wallet or owner.'));
  const x = a.reputation;
  const from = (feedback, clients) => `${feedback} feedback from ${clients} ${clients === 1 ? 'client' : 'clients'}`;
  const tile = (key, name, value, shown, note) => h('div', { class: 'tile', 'data-score': key, 'data-value': value },
    h('span', { class: 'tile-name' }, name), h('strong', {}, shown), h('span', { class: 'meta' }, note));
  return card(
    terms([
      ['Agent id', h('span', { 'data-agent-id': a.agentId }, a.agentId)],
      ['Name', a.name],
      ['Owner', address(a.owner)],
      ['Wallet', a.wallet ? address(a.wallet) : 'none set (no address is paid for this agent)'],
      ['Registered', time(a.registeredAt)],
    ]),
    h('h3', {}, 'Raw against grounded and trusted'),
    h('div', { class: 'tiles scores' },
      tile('raw', 'Raw ERC-8004 score', x.rawMeanValue, x.rawMeanValue == null ? '—' : String(x.rawMeanValue),
        `mean value as given (usually 0-100) of ${from(x.feedback, x.clients)}`),
      tile('grounded', 'Grounded score', x.groundedScore, score(x.groundedScore),
        x.grounded ? `${from(x.grounded, x.groundedClients)} backed by paid pacts, every client counted fully` : 'no grounded feedback yet: 3.0 is the starting score'),
      tile('trusted', 'Trusted score', x.trustedScore, score(x.trustedScore),
        x.trustedClients ? `${x.trustedClients} grounded ${x.trustedClients === 1 ? 'client' : 'clients'} the market trusts, weighing ${x.trustedWeight.toFixed(2)}: each vote times its client's trust` : 'no grounded client the market trusts yet: 3.0'),
      tile('agentpact', 'AgentPact score', agentpact.value, score(agentpact.value), 'from the pacts it settled here, in the global view')),
    h('p', { id: 'ungrounded', 'data-share': x.ungroundedShare },
      h('strong', {}, x.feedback ? share(Math.round(x.ungroundedShare * 10000)) : '—'), ' of its ERC-8004 feedback is ungrounded: ',
      'feedback from clients with no settled pact with this agent. Anyone may give ERC-8004 feedback, so the grounded score counts only work that was paid for, and the trusted score only clients the market trusts.'),
    h('h3', {}, 'Latest ERC-8004 feedback'),
    table('Latest ERC-8004 feedback', ['Grounded?', 'From', 'Value', 'Tags', 'Grounding pact', 'When'],
      a.feedback.map((f) => h('tr', { 'data-client': f.client, 'data-index': f.index, 'data-grounded': String(f.grounded) },
        h('td', {}, mark(f)),
        h('td', {}, address(f.client)),
        h('td', { class: 'num' }, f.value),
        h('td', {}, f.tags.filter((t) => t).join(', ') || '—', f.feedbackUri ? h('div', { class: 'meta' }, uri(f.feedbackUri)) : null),
        h('td', {}, grounding(f)),
        h('td', {}, time(f.givenAt), h('div', { class: 'meta' }, 'tx ', hash(f.txHash))))),
      'No ERC-8004 feedback yet.'));
}

/** Grounded or not (and revoked), as a label. */
function mark(f) {
  const grounded = f.grounded ? 'Grounded' : 'Ungrounded';
  return h('span', { class: `mark ${f.grounded ? 'grounded' : 'ungrounded'}`, 'data-mark': grounded.toLowerCase() }, grounded, f.revoked ? ' · revoked' : '');
}

/** The settled pacts behind a feedback, or why there is none. */
function grounding(f) {
  if (f.groundingPacts.length) return f.groundingPacts.flatMap((id, i) => (i ? [', ', pactLink(id)] : [pactLink(id)]));
  if (f.taggedPact != null) return ['names ', pactLink(f.taggedPact), ', not a pact this client settled with the agent'];
  return '—';
}

/** Credits per currency (paid out by its pacts, withdrawn, still owed) and the latest withdrawals. */
function money({ balances, withdrawals }) {
  return [
    table('Credits per currency', ['Currency', 'Paid out to it', 'Withdrawn', 'Still to withdraw'], balances.map((b) => h('tr', { 'data-currency': b.currency.symbol },
      h('th', { scope: 'row' }, b.currency.symbol), h('td', { class: 'num' }, amount(b.creditedFormatted, b.currency)),
      h('td', { class: 'num' }, amount(b.withdrawnFormatted, b.currency)), h('td', { class: 'num' }, amount(b.owedFormatted, b.currency)))),
    'Nothing paid out to this address yet.'),
    withdrawals.length ? h('h3', {}, 'Latest withdrawals') : null,
    withdrawals.length ? table('Latest withdrawals', ['Amount', 'Block', 'When'], withdrawals.map((w) => h('tr', {},
      h('td', { class: 'num' }, amount(w.amountFormatted, w.currency)), h('td', {}, `block ${w.blockNumber}`), h('td', {}, time(w.withdrawnAt))))) : null,
  ];
}
