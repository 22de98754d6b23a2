// How values of the API read on a page: addresses and hashes as links, amounts with their
// currency, times in the reader's locale.

import { checksum } from './checksum.js';
import { h } from './dom.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Whether `text` is an address (0x and 40 hex digits). */
export const isAddress = (text) => ADDRESS.test(text);

/** Whether `text` is a pact id (a whole number). */
export const isPactId = (text) => /^[0-9]{1,78}$/.test(text);

/** `0x1234…abcd`. */
export const short = (hex) => (hex && hex.length > 14 ? `${hex.slice(0, 6)}…${hex.slice(-4)}` : hex ?? '');

/** A link to an address's page, checksummed (EIP-55) whatever case it came in, or a dash. */
export function address(addr) {
  if (!addr) return '—';
  const shown = isAddress(addr) ? checksum(addr) : addr;
  return h('a', { href: `/#/address/${shown}`, class: 'mono', title: shown, 'data-address': shown }, short(shown));
}

/**
 * The URI schemes that are links: `agentpact_contracts::links::SCHEMES` (contracts/src/links.rs),
 * which the MCP tools write; tests/tests/dashboard.rs holds the two lists equal.
 */
export const URI_SCHEMES = ['https', 'http', 'ipfs', 'ar', 'hire'];

/**
 * Whether `text` is a link, as `agentpact_contracts::links::is_link` judges: a scheme of
 * URI_SCHEMES followed by `//` and something, with no blank or control character anywhere.
 */
export function isLink(text) {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):([^]*)$/.exec(text ?? '');
  return Boolean(match) && URI_SCHEMES.includes(match[1].toLowerCase())
    && match[2].length > 2 && match[2].startsWith('//') && !/[\s\p{Cc}]/u.test(text);
}

/**
 * A URI the chain holds (a spec, an endpoint, a feedback document): a link only when its scheme
 * is on the list, otherwise the text as written; a dash when empty.
 */
export function uri(text) {
  if (!text) return '—';
  if (!isLink(text)) return h('span', { class: 'uri', 'data-uri': text }, text);
  return h('a', { href: text, class: 'uri', rel: 'noopener noreferrer nofollow', 'data-uri': text }, text);
}

/** Seconds as a person reads them: `259200` → `3 days`, `5400` → `1 hour 30 minutes`, `45` → `45 seconds`. */
export function duration(seconds) {
  let left = Number(seconds);
  if (!Number.isFinite(left) || left < 0) return '—';
  const parts = [];
  for (const [unit, size] of [['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]]) {
    const n = Math.floor(left / size);
    left -= n * size;
    if (n > 0) parts.push(`${n} ${unit}${n === 1 ? '' : 's'}`);
  }
  return parts.length ? parts.join(' ') : '0 seconds';
}

/** A link to a pact's page. */
export const pactLink = (id) => h('a', { href: `/#/pacts/${id}`, 'data-pact': id }, `#${id}`);

/** A hash shown in full, in a monospaced font that wraps. */
export const hash = (hex) => (hex ? h('code', { class: 'hash' }, hex) : '—');

/** An amount the API wrote (`paymentFormatted` and the like: `5.5`) with its currency: `5.5 USDC`. */
export function amount(formatted, currency) {
  if (formatted == null) return '—';
  return `${formatted} ${currency?.symbol ?? ''}`.trim();
}

/**
 * Base units of a currency with `decimals` places, written as the API and the MCP server write
 * amounts (contracts/src/money.rs): no trailing zeros, no point without a fraction. `5500000`, 6 →
 * `5.5`; `5000000`, 6 → `5`.
 */
export function units(base, decimals) {
  const digits = String(base).padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals).replace(/^0+(?=.)/, '');
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** The largest amount of base units: a uint256. */
const MAX_UNITS = (1n << 256n) - 1n;

/**
 * Reads `text` in a currency with `decimals` places by the one amount grammar the MCP server and
 * the relay read with (contracts/src/money.rs, held to contracts/vectors/amounts.json by
 * tests/tests/dashboard.rs): ASCII digits with at most one point and at least one digit, blanks
 * around ignored. `{ units }` (base units as decimal text), or `{ error, places }` with the kind of
 * error: `empty`, `not_an_amount`, `too_long`, `too_precise` or `too_large`.
 */
export function parseAmount(text, decimals) {
  const t = String(text ?? '').replace(/^[ \t\n\f\r]+|[ \t\n\f\r]+$/g, '');
  if (t === '') return { error: 'empty' };
  const match = /^([0-9]*)(?:\.([0-9]*))?$/.exec(t);
  if (!match || (match[1] === '' && !match[2])) return { error: 'not_an_amount' };
  const whole = match[1].replace(/^0+/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (whole.length > 78 || fraction.length > 255) return { error: 'too_long' };
  if (fraction.length > decimals) return { error: 'too_precise', places: fraction.length };
  const base = BigInt(`0${whole}${fraction.padEnd(decimals, '0')}`);
  if (base > MAX_UNITS) return { error: 'too_large' };
  return { units: base.toString() };
}

/** `text` read in `currency` as base units (`{ units }`), or a sentence saying what to write (`{ problem }`). */
export function readAmount(text, currency) {
  const read = parseAmount(text, currency.decimals);
  const problem = {
    empty: () => 'give an amount, such as 5 or 0.5',
    not_an_amount: () => `"${text}" is not an amount: write digits with at most one decimal point, such as 5 or 0.5`,
    too_long: () => `"${text}" has more digits than any amount`,
    too_precise: () => `${text} has ${read.places} decimal places; ${currency.symbol} has ${currency.decimals}: round the amount`,
    too_large: () => `${text} ${currency.symbol} is too large`,
  }[read.error];
  return problem ? { problem: problem() } : read;
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
