// One address: its agent profile if it has one, its reputation as seller, buyer and oracle,
// its stake if it is an oracle, its pacts and the feedback it received.

import { onPactChanges, query } from '../api.js';
import { fill, h, message, section, table, terms } from '../dom.js';
import { address, amount, isAddress, pactLink, score, time, units } from '../format.js';
import { pactRows, PACT_ROW } from './pacts.js';

const ROLE = 'pacts completed refunded disputed timedOut meanScore agreement volumes { formatted currency { symbol } } score { value rated }';

const ADDRESS = `
  query Address($address: Address!) {
    agent(address: $address) { name description endpoint active registeredAt capabilities { name description priceFormatted currency { symbol } } }
    oracle(address: $address) { stake status capabilities registeredAt }
    reputation(address: $address) {
      score { value rated raters }
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

/** Renders the page of `addr` into `main`, redrawn when one of its pacts changes. */
export async function addressPage(main, { args: [addr], live }) {
  if (!isAddress(addr)) {
    fill(main, h('h1', {}, 'Address'), message('error', `"${addr}" is not an address. An address is 0x followed by 40 hexadecimal digits, such as 0x70997970C51812dc3A010C7d01b50e0d17dc79C8.`));
    return;
  }
  const draw = async () => render(main, addr, await query(ADDRESS, { address: addr }));
  await draw();
  live(onPactChanges({ party: addr }, draw));
}

function render(main, addr, { agent, oracle, reputation: r, pacts, account }) {
  fill(main,
    h('h1', {}, agent ? agent.name : 'Address', ' ', h('code', { class: 'hash' }, addr)),
    agent ? h('p', { class: 'lead' }, agent.description, agent.active ? '' : ' (stepped out of the market)') : null,
    h('div', { class: 'tiles' },
      h('div', { class: 'tile', 'data-tile': 'score' }, h('span', { class: 'tile-name' }, 'Reputation'), h('strong', {}, score(r.score.value))),
      h('div', { class: 'tile' }, h('span', { class: 'tile-name' }, 'Pacts'), h('strong', {}, String(pacts.totalCount))),
      h('div', { class: 'tile' }, h('span', { class: 'tile-name' }, 'Feedback'), h('strong', {}, r.feedback.meanRating == null ? '—' : `${r.feedback.meanRating.toFixed(1)} / 5 (${r.feedback.count})`))),
    agent ? section('Capabilities', table('Capabilities', ['Capability', 'What it covers', 'Price'],
      agent.capabilities.map((c) => h('tr', {}, h('td', {}, c.name), h('td', {}, c.description), h('td', { class: 'num' }, amount(c.priceFormatted, c.currency)))))) : null,
    section('Reputation by role', table('Reputation by role', ['Role', 'Score', 'Pacts', 'Completed', 'Refunded', 'Disputed', 'Timed out', 'Volume'],
      [['Seller', r.asSeller], ['Buyer', r.asBuyer], ['Oracle', r.asOracle]].map(([role, x]) => h('tr', { 'data-role': role },
        h('th', { scope: 'row' }, role), h('td', { class: 'num' }, score(x.score.value)), h('td', { class: 'num' }, x.pacts),
        h('td', { class: 'num' }, x.completed), h('td', { class: 'num' }, x.refunded), h('td', { class: 'num' }, x.disputed),
        h('td', { class: 'num' }, x.timedOut), h('td', {}, x.volumes.map((v) => amount(v.formatted, v.currency)).join(' · ') || '—'))))),
    oracle ? section('As oracle', terms([['Status', oracle.status], ['Stake', `${units(oracle.stake, 18)} ETH`], ['Verifies', oracle.capabilities.join(', ')], ['Registered', time(oracle.registeredAt)]])) : null,
    section(`Pacts (${pacts.totalCount})`, pactRows(pacts.nodes, 'Pacts of this address', 'This address takes part in no pact.'),
      pacts.totalCount > pacts.nodes.length ? h('p', {}, h('a', { href: `/#/pacts?party=${addr}` }, 'All its pacts →')) : null),
    section('Money in the escrow', money(account)),
    section('Feedback received', table('Feedback received', ['Pact', 'From', 'Rating', 'Tags', 'Comment', 'When'],
      r.recentFeedback.map((f) => h('tr', {}, h('td', {}, pactLink(f.pactId)), h('td', {}, address(f.rater)), h('td', {}, `${f.rating} / 5`),
        h('td', {}, f.tags.join(', ')), h('td', {}, f.comment), h('td', {}, time(f.givenAt)))), 'No feedback received yet.')));
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
