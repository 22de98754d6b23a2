// Forms whose state lives in the URL: fields start from its parameters, and submitting one moves
// the URL (the page then redraws from it, so a result can be bookmarked and shared).

import { h } from './dom.js';

/** A labelled input named `name`, filled from `params`. */
export const field = (params, name, text, attrs = {}) =>
  h('label', {}, text, h('input', { name, value: params.get(name) ?? '', ...attrs }));

/** A labelled select of `options` (`[value, text]`), the one in `params` selected. */
export const choice = (params, name, text, options) =>
  h('label', {}, text, h('select', { name }, options.map(([value, shown]) =>
    h('option', { value, selected: (params.get(name) ?? '') === value }, shown))));

/** Makes submitting `form` go to `#<path>?<its non-empty fields>`. */
export function submitsTo(form, path) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (String(value).trim()) next.append(key, String(value).trim());
    location.hash = `${path}?${next}`;
  });
  return form;
}
