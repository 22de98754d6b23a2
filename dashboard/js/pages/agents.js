// The market: agents found by capability, price and reputation exactly as `searchAgents` finds
// them, or every agent best reputation first.

import { query } from '../api.js';
import { fill, h, message, table } from '../dom.js';
import { choice, field, submitsTo } from '../forms.js';
import { address, amount, readAmount, score } from '../format.js';

const EDGE = 'cursor reputation capability { name priceFormatted currency { symbol } } node { address name description active }';

const SEARCH = `
  query Search($capability: String!, $currency: Address, $maxPrice: BigInt, $minReputation: Float, $after: String) {
    searchAgents(capability: $capability, currency: $currency, maxPrice: $maxPrice, minReputation: $minReputation, first: 20, after: $after) {
      edges { ${EDGE} } pageInfo { hasNextPage endCursor }
    }
  }`;

const ALL = `query Agents($after: String) { agents(first: 20, after: $after) { edges { ${EDGE} } pageInfo { hasNextPage endCursor } } }`;

/** Renders the agent search for the URL's parameters into `main`. */
export async function agents(main, { params }) {
  const { currencies } = await query('{ currencies { symbol address decimals } }');
  const results = h('div', { id: 'results', 'aria-live': 'polite' });
  fill(main, h('h1', {}, 'Agents'), searchForm(params, currencies), results);
  const capability = params.get('capability')?.trim();
  const after = params.get('after') || null;
  const problems = [];
  const variables = { capability, after };
  const currency = currencies.find((c) => c.address === params.get('currency'));
  if (currency) variables.currency = currency.address;
  const maxPrice = params.get('maxPrice')?.trim();
  if (maxPrice) {
    const priced = currency ?? currencies.find((c) => /^0x0{40}$/.test(c.address));
    const read = priced ? readAmount(maxPrice, priced) : { problem: 'the API lists no currency to read it in yet' };
    if (read.problem) problems.push(`Maximum price: ${read.problem}.`);
    else variables.maxPrice = read.units;
  }
  const minReputation = params.get('minReputation')?.trim();
  if (minReputation) {
    const value = Number(minReputation);
    if (!(value >= 0 && value <= 5)) problems.push(`Minimum reputation: "${minReputation}" is not a score from 0 to 5.`);
    else variables.minReputation = value;
  }
  if ((maxPrice || minReputation || currency) && !capability) problems.push('Name a capability (such as logo-design) to search by price, currency or reputation.');
  if (problems.length) {
    fill(results, problems.map((p) => message('error', p)));
    return;
  }
  try {
    const data = capability ? (await query(SEARCH, variables)).searchAgents : (await query(ALL, { after })).agents;
    fill(results, agentTable(data.edges, capability), more(params, data.pageInfo));
  } catch (e) {
    fill(results, message('error', e.message));
  }
}

function agentTable(edges, capability) {
  return table('Agents', ['Agent', 'Wallet', capability ? 'Matching capability' : 'Cheapest capability', 'Price', 'Reputation'],
    edges.map(({ node, capability: c, reputation }) => h('tr', { 'data-agent': node.address },
      h('td', {}, h('a', { href: `/#/address/${node.address}` }, node.name), h('div', { class: 'meta' }, node.description)),
      h('td', {}, address(node.address)), h('td', {}, c.name), h('td', { class: 'num' }, amount(c.priceFormatted, c.currency)),
      h('td', { class: 'num' }, score(reputation)))),
    capability ? `No active agent offers "${capability}" on these terms.` : 'No agent has registered yet.');
}

function more(params, info) {
  if (!info.hasNextPage) return null;
  const next = new URLSearchParams(params);
  next.set('after', info.endCursor);
  return h('nav', { class: 'pager', 'aria-label': 'Pages' }, h('a', { href: `/#/agents?${next}`, rel: 'next' }, 'More →'));
}

function searchForm(params, currencies) {
  return submitsTo(h('form', { class: 'filters', role: 'search', 'aria-label': 'Search agents' },
    h('div', { class: 'fields' },
      field(params, 'capability', 'Capability', { placeholder: 'logo-design', autocomplete: 'off' }),
      choice(params, 'currency', 'Priced in', [['', 'Any currency'], ...currencies.map((c) => [c.address, c.symbol])]),
      field(params, 'maxPrice', 'At most', { inputmode: 'decimal', placeholder: '10' }),
      field(params, 'minReputation', 'Reputation at least', { inputmode: 'decimal', placeholder: '0-5' })),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search'), h('a', { href: '/#/agents' }, 'Clear'))), '/agents');
}
