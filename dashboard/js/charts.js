// Charts drawn with plain elements: a bar per row, its width set through the CSSOM (the page's
// content security policy allows no inline style attributes), its value always written beside it.

import { h } from './dom.js';

/**
 * Horizontal bars: one per `{ key, label, value, text, href }` row, scaled to the largest value
 * (or `max`); `marker` draws a line at that value (a threshold) across every bar.
 */
export function bars(title, rows, { max, marker, markerLabel } = {}) {
  const top = Math.max(max ?? 0, ...rows.map((r) => r.value), 1);
  const chart = h('figure', { class: 'bars' }, h('figcaption', {}, title));
  for (const row of rows) {
    const fill = h('span', { class: `fill ${row.tone ?? ''}` });
    fill.style.width = `${(100 * row.value) / top}%`;
    const track = h('span', { class: 'track' }, fill);
    if (marker != null) {
      const line = h('span', { class: 'marker', title: markerLabel ?? '' });
      line.style.left = `${(100 * marker) / top}%`;
      track.append(line);
    }
    const name = row.href ? h('a', { href: row.href }, row.label) : row.label;
    chart.append(h('div', { class: 'bar', 'data-key': row.key },
      h('span', { class: 'name' }, name), track, h('span', { class: 'count' }, row.text ?? String(row.value))));
  }
  if (marker != null && markerLabel) chart.append(h('p', { class: 'legend' }, markerLabel));
  return chart;
}

/**
 * Vertical columns along time: one per `{ key, label, value, text }` row, oldest left, scaled to
 * the largest; each column names its bucket and value for screen readers and on hover.
 */
export function columns(title, rows) {
  const top = Math.max(...rows.map((r) => r.value), 1);
  const chart = h('figure', { class: 'columns-chart' }, h('figcaption', {}, title));
  const plot = h('div', { class: 'plot', role: 'list' });
  for (const row of rows) {
    const fill = h('span', { class: 'column-fill' });
    fill.style.height = `${(100 * row.value) / top}%`;
    plot.append(h('div', { class: 'column', role: 'listitem', 'data-key': row.key, title: `${row.label}: ${row.text}`, 'aria-label': `${row.label}: ${row.text}` }, fill));
  }
  const first = rows[0]?.label ?? '';
  const last = rows[rows.length - 1]?.label ?? '';
  chart.append(plot, h('div', { class: 'axis' }, h('span', {}, first), h('span', {}, last)));
  return chart;
}
