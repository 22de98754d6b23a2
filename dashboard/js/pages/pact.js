// One pact's whole story: terms, parties, stakes, oracles against the threshold, every event
// with its block and transaction, offers to settle and how a ruling or a settlement divided the
// money, payouts, the negotiation before it and the feedback after it.
// Its status follows the chain live.

import { onPactChanges, query } from '../api.js';
import { bars } from '../charts.js';
import { fill, h, message, section, table, terms } from '../dom.js';
import { address, amount, duration, hash, isPactId, label, share, status, time, units, uri } from '../format.js';

const PACT = `
  query Pact($id: BigInt!) {
    pact(id: $id) {
      id status statusDescription outcome ending initiator
      creator buyer seller arbitrator counterparty
      specHash specUri proofHash deadline acceptBy reviewPeriod threshold
      currency { symbol decimals address }
      paymentFormatted buyerStakeFormatted sellerStakeFormatted
      scoreCount finalScore
      oracles { address weight }
      verifications { oracle score proof submittedAt blockNumber }
      createdAt acceptedAt submittedAt verifiedAt disputedAt closedAt createdBlock updatedBlock
      division { by sellerShare sellerCreditFormatted buyerCreditFormatted stages }
      settlements { round proposedBy offeredIn sellerShare expiresAt proposedAt state }
      timeline { kind blockNumber logIndex txHash timestamp data }
      milestones { index amountFormatted deadline status ending submittedAt verifiedAt disputedAt endedAt sellerShare toSellerFormatted toBuyerFormatted }
      negotiationMessageCount
      feedback { rater ratee rating tags comment givenAt }
    }
    indexerStatus { indexedBlock }
  }`;

/** Renders pact `id` into `main` and redraws it on each change of the pact. */
export async function pactPage(main, { args: [id], live }) {
  if (!isPactId(id)) {
    fill(main, h('h1', {}, 'Pact'), message('error', `"${id}" is not a pact id: a pact id is a whole number such as 12. `, h('a', { href: '/#/pacts' }, 'Browse the pacts'), ' instead.'));
    return;
  }
  const draw = async () => {
    const { pact, indexerStatus } = await query(PACT, { id });
    if (!pact) {
      const at = indexerStatus ? ` (the index is at block ${indexerStatus.indexedBlock})` : '';
      fill(main, h('h1', {}, `Pact #${id}`), message('error', `There is no pact #${id} on this chain${at}. If it was just created, this page shows it once it is indexed; otherwise check the id, or `, h('a', { href: '/#/pacts' }, 'browse the pacts'), '.'));
      return;
    }
    render(main, pact);
  };
  await draw();
  live(onPactChanges({ pactId: id }, draw));
}

function render(main, p) {
  const money = (formatted) => amount(formatted, p.currency);
  fill(main,
    h('h1', {}, `Pact #${p.id} `, status(p.status)),
    h('p', { class: 'lead', id: 'status-description' }, `${p.statusDescription}.`, ending(p)),
    division(p, money),
    h('div', { class: 'columns' },
      section('Terms', terms([
        ['Payment', money(p.paymentFormatted)],
        ['Buyer stake', money(p.buyerStakeFormatted)],
        ['Seller stake', money(p.sellerStakeFormatted)],
        ['Currency', p.currency.symbol],
        ['Created by', label(p.initiator)],
        ['Deadline', time(p.deadline)],
        ['Accept by', time(p.acceptBy)],
        ['Review period', duration(p.reviewPeriod)],
        ['Pass mark', `${p.threshold} / 100`],
        ['Spec', uri(p.specUri)],
        ['Spec hash', hash(p.specHash)],
        ['Proof hash', hash(p.proofHash)],
      ])),
      section('Parties', terms([
        ['Creator', address(p.creator)],
        ['Buyer', address(p.buyer)],
        ['Seller', address(p.seller)],
        ['Arbitrator', address(p.arbitrator)],
        ['Only acceptable by', p.counterparty ? address(p.counterparty) : null],
      ]))),
    section('Stages', stages(p, money)),
    section('Oracles', oracles(p)),
    section('Timeline', timeline(p)),
    section('Settlement offers', offers(p)),
    section('Payouts', payouts(p)),
    section('Negotiation', negotiation(p)),
    section('Feedback', table('Feedback after the pact', ['From', 'To', 'Rating', 'Tags', 'Comment', 'When'],
      p.feedback.map((f) => h('tr', {}, h('td', {}, address(f.rater)), h('td', {}, address(f.ratee)),
        h('td', {}, `${f.rating} / 5`), h('td', {}, f.tags.join(', ')), h('td', {}, f.comment), h('td', {}, time(f.givenAt)))),
      'No feedback yet: buyer and seller may rate each other once the pact has ended.')));
}

/** The pact's stages, a row each: its part of the payment, when it is due, where it stands, its
 *  clocks, and what its end credited each side (one row for a pact paid at once). */
function stages(p, money) {
  const n = p.milestones.length;
  return [
    h('p', { class: 'note' }, n === 1
      ? 'Paid at once: one stage, the whole payment.'
      : `Paid in ${n} stages: each is delivered, verified, reviewed, disputed and paid on its own; the pact shows its lowest live stage.`),
    table('Stages', ['Stage', 'Amount', 'Due', 'Status', 'Delivered', 'Ended', 'To the seller', 'To the buyer'],
      p.milestones.map((s) => h('tr', { 'data-stage': s.index, 'data-status': s.status },
        h('td', {}, `${s.index + 1} of ${n}`), h('td', { class: 'num' }, money(s.amountFormatted)), h('td', {}, time(s.deadline)),
        h('td', {}, status(s.status), stageEnding(s)),
        h('td', {}, time(s.submittedAt)), h('td', {}, time(s.endedAt)),
        h('td', { class: 'num', 'data-to': 'seller' }, money(s.toSellerFormatted)), h('td', { class: 'num', 'data-to': 'buyer' }, money(s.toBuyerFormatted))))),
  ];
}

/** How a stage ended, where its status does not already say it (a ruling and its share, a split). */
function stageEnding(s) {
  if (s.ending === 'LIVE' || s.ending === s.status) return '';
  return h('div', { class: 'meta' }, label(s.ending), s.sellerShare == null ? '' : `: ${share(s.sellerShare)} to the seller`);
}

/** Each oracle's weight and score, drawn against the pass mark; the weighted result below. */
function oracles(p) {
  const given = new Map(p.verifications.map((v) => [v.oracle.toLowerCase(), v]));
  const rows = p.oracles.map((o) => {
    const v = given.get(o.address.toLowerCase());
    return { key: o.address, label: address(o.address), value: v ? v.score : 0, text: v ? `${v.score} · weight ${o.weight}%` : `not scored · weight ${o.weight}%`, tone: v && v.score >= p.threshold ? 's-COMPLETED' : 's-DISPUTED' };
  });
  return [bars('Scores (0-100) against the pass mark', rows, { max: 100, marker: p.threshold, markerLabel: `The line is the pass mark, ${p.threshold}.` }), h('p', { id: 'final-score' }, verdict(p))];
}

/** How an ended pact ended, in the contract's word (its ending) and the index's finer outcome. */
function ending(p) {
  if (p.ending === 'LIVE') return '';
  return ` Ended: ${label(p.ending)}${p.outcome ? ` (${label(p.outcome).toLowerCase()})` : ''}.`;
}

/** The statuses a pact ends in. */
const ENDED = ['COMPLETED', 'REFUNDED', 'SPLIT'];

/** What the oracles' scores came to: the weighted score, how far they are, or why there is none. */
function verdict(p) {
  const scored = `${p.scoreCount} of ${p.oracles.length} oracles`;
  if (p.finalScore != null) return `Weighted score ${p.finalScore} against a pass mark of ${p.threshold}: ${p.finalScore >= p.threshold ? 'passed' : 'failed'}.`;
  if (!ENDED.includes(p.status)) return `${scored} have scored; the weighted score is computed when verification finishes.`;
  const how = { RULING: "by the arbitrator's ruling", SETTLEMENT: 'by a settlement between buyer and seller' }[p.division?.by]
    ?? `as ${label(p.status).toLowerCase()}${p.outcome ? ` (${label(p.outcome).toLowerCase()})` : ''}`;
  return `Verification never finished: the pact ended ${how} with ${scored} having scored, so no weighted score was computed.`;
}

/** How a ruling or an accepted settlement divided the money, when one ended the pact. */
function division(p, money) {
  const d = p.division;
  if (!d) return null;
  // On a pact of stages it divided only the stages still held.
  const over = p.milestones.length > 1
    ? ` of stage${d.stages.length > 1 ? 's' : ''} ${d.stages.map((k) => k + 1).join(', ')} of ${p.milestones.length}`
    : '';
  const what = d.by === 'RULING'
    ? `The arbitrator ruled ${share(d.sellerShare)} of the pot${over} (payment and both stakes) to the seller`
    : `Buyer and seller settled at ${share(d.sellerShare)} of the payment${over} to the seller, each stake back to its owner`;
  return h('p', { class: 'division', id: 'division' }, `${what}: the seller was credited `, money(d.sellerCreditFormatted), ', the buyer ', money(d.buyerCreditFormatted), '.');
}

/** Every offer to settle, with where it stands. */
function offers(p) {
  return table('Offers to settle', ['Round', 'By', 'To the seller', 'Offered while', 'Expires', 'State'],
    p.settlements.map((o) => h('tr', { 'data-round': o.round }, h('td', {}, o.round), h('td', {}, address(o.proposedBy)),
      h('td', { class: 'num' }, share(o.sellerShare)), h('td', {}, label(o.offeredIn)), h('td', {}, time(o.expiresAt)), h('td', {}, label(o.state)))),
    'No offer to settle: while the pact is funded, started, submitted or disputed, either party may offer to end it with the payment divided.');
}

/** What a settlement or ruling event says, in a few words. */
function detail(e) {
  switch (e.kind) {
    case 'DisputeResolved': return `${share(e.data.sellerShare)} of the pot to the seller`;
    case 'SettlementProposed': return `offer ${e.data.round}: ${share(e.data.sellerShare)} of the payment to the seller`;
    case 'SettlementWithdrawn': return `offer ${e.data.round} withdrawn`;
    case 'SettlementAccepted': return `offer ${e.data.round} accepted: ${share(e.data.sellerShare)} of the payment to the seller`;
    default: return null;
  }
}

function timeline(p) {
  return h('ol', { class: 'timeline', id: 'timeline' }, p.timeline.map((e) =>
    h('li', { 'data-kind': e.kind, 'data-block': e.blockNumber, 'data-tx': e.txHash },
      h('strong', {}, e.kind), detail(e) ? ` (${detail(e)})` : '', ' ', time(e.timestamp),
      h('div', { class: 'meta' }, `block ${e.blockNumber} · log ${e.logIndex} · tx `, hash(e.txHash)))));
}

/** What the escrow credited to whom, and where the withdrawals are. */
function payouts(p) {
  const rows = p.timeline.filter((e) => e.kind === 'Payout').map((e) =>
    h('tr', {}, h('td', {}, address(e.data.to)), h('td', { class: 'num' }, amount(units(e.data.amount, p.currency.decimals), p.currency)), h('td', {}, `block ${e.blockNumber}`)));
  return [
    table('Payouts', ['To', 'Amount', 'When'], rows, 'Nothing paid out yet: payouts are credited when the pact ends.'),
    h('p', { class: 'note' }, 'Payouts are credits: each party withdraws them in one call per currency, and its address page shows what it has withdrawn and what is still owed.'),
  ];
}

/** How many messages the negotiation before the pact took: its terms and messages are its parties' to read. */
function negotiation(p) {
  const n = p.negotiationMessageCount;
  if (n == null) return message('note', 'This pact was not signed from a HIRE/1.0 negotiation.');
  return h('p', { id: 'negotiation' }, `Signed from a HIRE/1.0 negotiation of ${n} ${n === 1 ? 'message' : 'messages'}. `,
    'Its terms and messages are its parties\' to read: a request signed with the buyer\'s or the seller\'s key, or the operator\'s token (docs/api.md §Negotiations).');
}
