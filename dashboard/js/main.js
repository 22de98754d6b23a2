// The dashboard's entry: a router over the URL's hash (`#/pacts/12`), one page module per
// route, each page stopping its live subscriptions when the reader leaves it.

import { onLiveState } from './api.js';
import { fill, message } from './dom.js';
import { overview } from './pages/overview.js';
import { pactList } from './pages/pacts.js';
import { pactPage } from './pages/pact.js';
import { agents } from './pages/agents.js';
import { addressPage, erc8004Page } from './pages/address.js';
import { console as graphqlConsole } from './pages/console.js';

/** Each route: a pattern over the hash's path, its page, and the nav entry it lights up. */
const ROUTES = [
  [/^\/?$/, overview, 'overview'],
  [/^\/pacts\/?$/, pactList, 'pacts'],
  [/^\/pacts\/([^/]*)$/, pactPage, 'pacts'],
  [/^\/agents\/?$/, agents, 'agents'],
  [/^\/address\/([^/]*)$/, addressPage, 'agents'],
  [/^\/erc8004\/([^/]*)$/, erc8004Page, 'agents'],
];

const main = document.getElementById('main');
let leave = () => {};

async function route() {
  leave();
  leave = () => {};
  const [path, search = ''] = (location.hash.replace(/^#/, '') || '/').split('?');
  const params = new URLSearchParams(search);
  let page = null;
  let args = [];
  let nav = null;
  if (location.pathname === '/graphql') {
    [page, nav] = [graphqlConsole, 'console'];
  } else {
    for (const [pattern, render, entry] of ROUTES) {
      const match = pattern.exec(path);
      if (match) {
        [page, args, nav] = [render, match.slice(1).map(decodeURIComponent), entry];
        break;
      }
    }
  }
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (!page) {
    fill(main, message('error', `There is no page at ${path}. `, 'Start from the ', overviewLink(), '.'));
    return;
  }
  // Each visit draws into a view of its own: a redraw of the page just left that was already
  // under way lands in a detached view, never over the new page.
  const view = document.createElement('div');
  fill(main, view);
  const stops = [];
  leave = () => stops.forEach((stop) => stop());
  try {
    await page(view, { args, params, live: (stop) => stops.push(stop) });
  } catch (e) {
    fill(view, message('error', e.message));
  }
  main.dataset.ready = 'true';
}

function overviewLink() {
  const a = document.createElement('a');
  a.href = '/#/';
  a.textContent = 'overview';
  return a;
}

onLiveState((connected) => {
  const badge = document.getElementById('live');
  badge.textContent = connected ? 'live' : 'offline';
  badge.dataset.connected = connected;
});
window.addEventListener('hashchange', () => {
  main.dataset.ready = 'false';
  route();
});
route();
