// The market at a glance: pacts by status, volume per currency, agents and oracles, and where
// the indexer stands; redrawn as pacts change.

import { onPactChanges, query, quietly } from '../api.js';
import { bars, columns } from '../charts.js';
import { fill, h, section } from '../dom.js';
import { amount, duration, label, STATUSES, time } from '../format.js';
import { pactRows, PACT_ROW } from './pacts.js';

const OVERVIEW = `
  query Overview {
    stats {
      pacts activeOracles
      byStatus { status count }
      volumes { currency { symbol address } completed completedFormatted open openFormatted }
    }
    indexerStatus { indexedBlock indexedBlockTime headBlock lagBlocks lagSeconds }
    _meta { hasIndexingErrors }
    volumeOverTime(interval: DAY, last: 14) { start currency { symbol } completed completedFormatted pacts }
    scoreDistribution { from to pacts }
    agents(first: 100) { edges { cursor } pageInfo { hasNextPage } }
    pacts(first: 8) { nodes { ${PACT_ROW} } }
  }`;

/** Renders the overview into `main` and keeps it current. */
export async function overview(main, { live }) {
  const draw = async () => render(main, await query(OVERVIEW));
  await draw();
  live(onPactChanges(null, draw));
  // The head moves without pacts changing: only the indexer's tiles are read again for it (the
  // whole overview, charts included, is read again when a pact changes). Each read asks for at
  // least the block the last one showed, so behind replicas that lag differently the tiles
  // never step back.
  let seen = 0;
  const refresh = async () => {
    const { indexerStatus, _meta: meta } = await query(INDEXER, { seen });
    seen = Math.max(seen, indexerStatus?.indexedBlock ?? 0);
    indexerTiles(main, indexerStatus, meta);
  };
  const timer = setInterval(() => quietly(refresh), 5000);
  live(() => clearInterval(timer));
}

const INDEXER = `query Indexer($seen: Int!) {
  indexerStatus(block: { number_gte: $seen }) { indexedBlock headBlock lagBlocks lagSeconds }
  _meta(block: { number_gte: $seen }) { hasIndexingErrors }
}`;

/** The indexed block, the head, the lag and whether indexing fails, as the four tiles show them. */
function indexerValues(ix, meta) {
  return {
    indexed: ix ? ix.indexedBlock : '—',
    head: ix?.headBlock ?? '—',
    lag: ix ? `${ix.lagBlocks} blocks · ${duration(ix.lagSeconds)}` : 'not indexed yet',
    indexing: !meta ? '—' : meta.hasIndexingErrors ? 'failing, retrying' : 'healthy',
  };
}

/** Writes the indexer's figures into the tiles already on the page. */
function indexerTiles(main, ix, meta) {
  for (const [key, value] of Object.entries(indexerValues(ix, meta))) {
    const strong = main.querySelector(`[data-tile="${key}"] strong`);
    if (strong) strong.textContent = String(value);
  }
}

function render(main, { stats, indexerStatus: ix, _meta: meta, agents, pacts, volumeOverTime, scoreDistribution }) {
  const agentCount = `${agents.edges.length}${agents.pageInfo.hasNextPage ? '+' : ''}`;
  const byStatus = new Map(stats.byStatus.map((s) => [s.status, s.count]));
  const indexer = indexerValues(ix, meta);
  fill(main,
    h('h1', {}, 'Market overview'),
    h('div', { class: 'tiles' },
      tile('Pacts', stats.pacts, 'pacts'),
      tile('Active agents', agentCount, 'agents'),
      tile('Active oracles', stats.activeOracles, 'oracles'),
      tile('Indexed block', indexer.indexed, 'indexed'),
      tile('Chain head', indexer.head, 'head'),
      tile('Lag', indexer.lag, 'lag'),
      tile('Indexing', indexer.indexing, 'indexing')),
    h('div', { class: 'columns' },
      section('Pacts by status', h('div', { id: 'by-status' }, bars('Pacts in each status', STATUSES.map((s) => ({
        key: s, label: label(s), value: byStatus.get(s) ?? 0, href: `/#/pacts?status=${s}`, tone: `s-${s}`,
      })))),
      ),
      section('Volume per currency', volumes(stats.volumes))),
    h('div', { class: 'columns' },
      section('Completed volume, last 14 days', overTime(volumeOverTime)),
      section('Weighted oracle scores', h('div', { id: 'scores' }, bars('Verified pacts by final score', scoreDistribution.map((b) => ({
        key: `${b.from}-${b.to}`, label: `${b.from}-${b.to}`, value: b.pacts,
      })))))),
    section('Latest pacts', pactRows(pacts.nodes, 'The latest pacts')),
    ix ? h('p', { class: 'note' }, 'Indexed up to block ', String(ix.indexedBlock), ' of ', time(ix.indexedBlockTime), '.') : null);
}

/** A column chart per currency: its completed payment each day (never added across currencies). */
function overTime(buckets) {
  const bySymbol = new Map();
  for (const b of buckets) bySymbol.set(b.currency.symbol, [...(bySymbol.get(b.currency.symbol) ?? []), b]);
  const day = (iso) => new Date(iso).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  return [...bySymbol].map(([symbol, list]) => columns(symbol, list.map((b) => ({
    key: `${symbol}-${b.start}`, label: day(b.start), value: Number(b.completed),
    text: `${amount(b.completedFormatted, b.currency)} in ${b.pacts} pact${b.pacts === 1 ? '' : 's'}`,
  }))));
}

function tile(name, value, key) {
  return h('div', { class: 'tile', 'data-tile': key }, h('span', { class: 'tile-name' }, name), h('strong', {}, String(value)));
}

/** Completed and open payment in each currency: bars per currency, never added across currencies. */
function volumes(list) {
  // Bar widths only (a float is exact enough for that); the text is the exact decimal.
  return list.map((v) => bars(v.currency.symbol, [
    { key: `${v.currency.symbol}-completed`, label: 'Completed', value: Number(v.completed), text: amount(v.completedFormatted, v.currency), tone: 's-COMPLETED' },
    { key: `${v.currency.symbol}-open`, label: 'Held in open pacts', value: Number(v.open), text: amount(v.openFormatted, v.currency), tone: 's-FUNDED' },
  ]));
}
