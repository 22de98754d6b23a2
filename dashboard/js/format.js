// How values of the API read on a page: addresses and hashes as links, amounts with their
// currency, times in the reader's locale.

import { h } from './dom.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Whether `text` is an address (0x and 40 hex digits). */
export const isAddress = (text) => ADDRESS.test(text);

/** Whether `text` is a pact id (a whole number). */
export const isPactId = (text) => /^[0-9]{1,78}$/.test(text);

/** `0x1234…abcd`. */
export const short = (hex) => (hex && hex.length > 14 ? `${hex.slice(0, 6)}…${hex.slice(-4)}` : hex ?? '');

/** A link to an address's page, or a dash. */
export function address(addr) {
  if (!addr) return '—';
  return h('a', { href: `/#/address/${addr}`, class: 'mono', title: addr, 'data-address': addr }, short(addr));
}

/** A link to a pact's page. */
export const pactLink = (id) => h('a', { href: `/#/pacts/${id}`, 'data-pact': id }, `#${id}`);

/** A hash shown in full, in a monospaced font that wraps. */
export const hash = (hex) => (hex ? h('code', { class: 'hash' }, hex) : '—');

/** An amount with its currency: `5.000000 USDC` (trailing zeros after the first decimal kept short). */
export function amount(formatted, currency) {
  return `${trim(formatted)} ${currency?.symbol ?? ''}`.trim();
}

/** `5.000000` → `5.0`, `0.100000000000000000` → `0.1`. */
export function trim(formatted) {
  if (formatted == null) return '—';
  if (!formatted.includes('.')) return formatted;
  const [whole, frac] = formatted.split('.');
  const kept = frac.replace(/0+$/, '');
  return `${whole}.${kept || '0'}`;
}

/** Base units as a decimal in a currency with `decimals` places, trimmed: `5000000`, 6 → `5.0`. */
export function units(base, decimals) {
  const digits = String(base).padStart(decimals + 1, '0');
  return trim(`${digits.slice(0, digits.length - decimals)}.${digits.slice(digits.length - decimals)}`);
}

/** Decimal text in units of a currency with `decimals` places, as base units; null if it is not a number. */
export function toBaseUnits(text, decimals) {
  const match = /^\s*([0-9]*)(?:\.([0-9]*))?\s*$/.exec(text);
  if (!match || (match[1] === '' && !match[2])) return null;
  const frac = match[2] ?? '';
  if (frac.length > decimals) return null;
  const digits = (match[1] + frac.padEnd(decimals, '0')).replace(/^0+(?=.)/, '');
  return digits === '' ? '0' : digits;
}

/** A time in the reader's locale, with the full ISO value on hover. */
export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return h('time', { datetime: iso, title: iso }, d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
}

/** A status as a coloured label. */
export const status = (s) => h('span', { class: `status s-${s}`, 'data-status-label': s }, label(s));

/** `PENDING_VERIFY` → `Pending verify`. */
export function label(s) {
  const words = s.toLowerCase().replaceAll('_', ' ');
  return words[0].toUpperCase() + words.slice(1);
}

/** Every status in the order of a pact's life (terminal ones last). */
export const STATUSES = ['NEGOTIATING', 'FUNDED', 'IN_PROGRESS', 'PENDING_VERIFY', 'PENDING_APPROVAL', 'COMPLETED', 'DISPUTED', 'REFUNDED', 'SPLIT'];

/** Basis points as a percentage: 7000 → `70%`, 3333 → `33.33%`. */
export const share = (bps) => `${Number(bps) / 100}%`;

/** A 0-5 score as `4.2 / 5`. */
export const score = (value) => (value == null ? '—' : `${Number(value).toFixed(1)} / 5`);
