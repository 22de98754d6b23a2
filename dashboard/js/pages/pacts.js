// Every pact, filtered the way the API filters them and paged by its cursors. The filter lives
// in the URL (`#/pacts?status=FUNDED&party=0x…`), so a filtered list can be bookmarked and shared.

import { onPactChanges, query } from '../api.js';
import { fill, h, message, table } from '../dom.js';
import { choice, field, submitsTo } from '../forms.js';
import { address, amount, isAddress, label, pactLink, readAmount, STATUSES, status, time } from '../format.js';

/** The fields a row of a pact table shows. */
export const PACT_ROW = 'id status initiator paymentFormatted currency { symbol } buyer seller deadline createdAt';

/** A table of pacts (rows carry `data-pact-id`). */
export function pactRows(nodes, caption, empty = 'No pacts yet.') {
  return table(caption, ['Pact', 'Status', 'Payment', 'Buyer', 'Seller', 'Deadline'], nodes.map((p) =>
    h('tr', { 'data-pact-id': p.id },
      h('td', {}, pactLink(p.id)), h('td', {}, status(p.status)),
      h('td', { class: 'num' }, amount(p.paymentFormatted, p.currency)),
      h('td', {}, address(p.buyer)), h('td', {}, address(p.seller)), h('td', {}, time(p.deadline)))), empty);
}

const PAGE = 20;
const ADDRESS_FILTERS = [['party', 'Party (any role)'], ['buyer', 'Buyer'], ['seller', 'Seller'], ['oracle', 'Oracle']];

const LIST = `
  query Pacts($filter: PactFilter, $first: Int, $after: String, $last: Int, $before: String) {
    pacts(filter: $filter, first: $first, after: $after, last: $last, before: $before) {
      nodes { ${PACT_ROW} }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      totalCount totalCountExact
    }
  }`;

/** Renders the pact list for the URL's filter into `main`, and keeps it current. */
export async function pactList(main, { params, live }) {
  const { currencies } = await query('{ currencies { symbol address decimals } }');
  const form = filterForm(params, currencies);
  const results = h('div', { id: 'results', 'aria-live': 'polite' });
  fill(main, h('h1', {}, 'Pacts'), form, results);
  const { filter, problems } = readFilter(params, currencies);
  if (problems.length) {
    fill(results, problems.map((p) => message('error', p)));
    return;
  }
  const page = params.get('before')
    ? { last: PAGE, before: params.get('before') }
    : { first: PAGE, after: params.get('after') };
  const draw = async () => {
    try {
      const { pacts } = await query(LIST, { filter, ...page });
      fill(results, summary(pacts), pactRows(pacts.nodes, 'Pacts passing the filter', 'No pact passes this filter.'), pager(params, pacts.pageInfo));
    } catch (e) {
      fill(results, message('error', e.message));
    }
  };
  await draw();
  live(onPactChanges(null, draw));
}

function summary({ totalCount, totalCountExact }) {
  const n = `${totalCountExact ? '' : 'at least '}${totalCount}`;
  return h('p', { class: 'note', id: 'total', 'data-total': totalCount }, `${n} pact${totalCount === 1 ? '' : 's'} pass the filter.`);
}

function pager(params, info) {
  const to = (key, cursor) => {
    const next = new URLSearchParams(params);
    next.delete('after');
    next.delete('before');
    next.set(key, cursor);
    return `/#/pacts?${next}`;
  };
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    info.hasPreviousPage ? h('a', { href: to('before', info.startCursor), rel: 'prev' }, '← Newer') : null,
    info.hasNextPage ? h('a', { href: to('after', info.endCursor), rel: 'next' }, 'Older →') : null);
}

/** The API's filter from the URL, and what in it cannot be read (each a sentence saying what to do). */
function readFilter(params, currencies) {
  const filter = {};
  const problems = [];
  const statuses = params.getAll('status').filter((s) => s);
  const unknown = statuses.filter((s) => !STATUSES.includes(s));
  if (unknown.length) problems.push(`Unknown status ${unknown.join(', ')}: choose from ${STATUSES.join(', ')}.`);
  if (statuses.length) filter.status = statuses;
  for (const [key, name] of ADDRESS_FILTERS) {
    const value = params.get(key)?.trim();
    if (!value) continue;
    if (isAddress(value)) filter[key] = value;
    else problems.push(`${name}: "${value}" is not an address. An address is 0x followed by 40 hexadecimal digits.`);
  }
  for (const key of ['initiator']) if (params.get(key)) filter[key] = params.get(key);
  const currency = currencies.find((c) => c.address === params.get('currency'));
  if (params.get('currency') && !currency) problems.push(`Unknown currency ${params.get('currency')}: pick one from the list.`);
  if (currency) filter.currency = currency.address;
  for (const [key, name] of [['minPayment', 'Minimum payment'], ['maxPayment', 'Maximum payment']]) {
    const value = params.get(key)?.trim();
    if (!value) continue;
    if (!currency) {
      problems.push(`${name} needs a currency: amounts in different currencies cannot be compared.`);
      continue;
    }
    const read = readAmount(value, currency);
    if (read.problem) problems.push(`${name}: ${read.problem}.`);
    else filter[key] = read.units;
  }
  for (const [key, end] of [['deadlineFrom', false], ['deadlineTo', true]]) {
    const value = params.get(key);
    if (!value) continue;
    const date = new Date(`${value}T${end ? '23:59:59' : '00:00:00'}Z`);
    if (Number.isNaN(date.getTime())) problems.push(`Deadline: "${value}" is not a date (YYYY-MM-DD).`);
    else filter[key] = date.toISOString();
  }
  if (params.get('search')?.trim()) filter.search = params.get('search').trim();
  return { filter, problems };
}

/** The filter form, filled from the URL; submitting it moves the URL (and so the list). */
function filterForm(params, currencies) {
  return submitsTo(h('form', { class: 'filters', 'aria-label': 'Filter pacts' },
    h('fieldset', { class: 'statuses' }, h('legend', {}, 'Status'),
      STATUSES.map((s) => h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: 'status', value: s, checked: params.getAll('status').includes(s) }), label(s)))),
    h('div', { class: 'fields' },
      ADDRESS_FILTERS.map(([key, name]) => field(params, key, name, { placeholder: '0x…', spellcheck: 'false', autocomplete: 'off' })),
      choice(params, 'initiator', 'Initiator', [['', 'Either'], ['BUYER', 'Buyer'], ['SELLER', 'Seller']]),
      choice(params, 'currency', 'Currency', [['', 'Any'], ...currencies.map((c) => [c.address, c.symbol])]),
      field(params, 'minPayment', 'Payment from', { inputmode: 'decimal' }),
      field(params, 'maxPayment', 'Payment to', { inputmode: 'decimal' }),
      field(params, 'deadlineFrom', 'Deadline from', { type: 'date' }),
      field(params, 'deadlineTo', 'Deadline to', { type: 'date' }),
      field(params, 'search', 'Spec words', { type: 'search' })),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply'), h('a', { href: '/#/pacts' }, 'Clear'))), '/pacts');
}
