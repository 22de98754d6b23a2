// Builds the page from DOM nodes, never from HTML strings: what comes from the chain (spec URIs,
// agent names, feedback comments) is always text, never markup.

/** An element `tag` with `attrs` (`on…` are listeners, `class` the class list) and `children`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replaces everything inside `el` with `children`. */
export function fill(el, ...children) {
  el.replaceChildren();
  for (const child of children.flat(Infinity)) {
    if (child != null && child !== false) el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** A message box: `kind` is `error` or `note`. */
export function message(kind, ...text) {
  return h('p', { class: kind, role: kind === 'error' ? 'alert' : 'status' }, ...text);
}

/** A section with a heading. */
export function section(title, ...children) {
  return h('section', { class: 'card' }, h('h2', {}, title), ...children);
}

/** A two-column list of terms and their values (rows whose value is null are left out). */
export function terms(rows) {
  return h('dl', { class: 'terms' }, rows.filter(([, v]) => v != null).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** A table with a caption, column headings and rows of cells; `empty` is shown without rows. */
export function table(caption, headings, rows, empty = 'Nothing here yet.') {
  if (rows.length === 0) return message('note', empty);
  return h('div', { class: 'scroll' },
    h('table', {},
      h('caption', { class: 'sr' }, caption),
      h('thead', {}, h('tr', {}, headings.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows)));
}
