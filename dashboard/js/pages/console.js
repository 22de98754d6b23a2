// The query console at /graphql: write a query, run it (Ctrl+Enter), read the answer, look up
// every field of the schema. Served by the binary like the rest of the dashboard, so it works
// without the internet (the CDN-loaded GraphiQL it replaces did not).

import { ApiError, query } from '../api.js';
import { fill, h, message } from '../dom.js';

const EXAMPLE = `# Ctrl+Enter runs the query.
{
  stats { pacts byStatus { status count } }
  pacts(first: 5) { nodes { id status paymentFormatted currency { symbol } } }
}
`;

const SCHEMA = `{ __schema { queryType { fields { name description args { name type { ...T } } type { ...T } } }
  subscriptionType { fields { name description type { ...T } } } } }
  fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`;

/** Renders the console into `main`. */
export async function console(main) {
  const editor = h('textarea', { id: 'query', 'aria-label': 'Query', spellcheck: 'false', rows: 14 });
  editor.value = sessionStorage.getItem('console.query') ?? EXAMPLE;
  const variables = h('textarea', { id: 'variables', 'aria-label': 'Variables (JSON)', spellcheck: 'false', rows: 3 });
  variables.value = sessionStorage.getItem('console.variables') ?? '{}';
  const output = h('pre', { id: 'answer', class: 'answer', tabindex: '0', 'aria-live': 'polite', 'aria-label': 'Answer' });
  const run = async () => {
    sessionStorage.setItem('console.query', editor.value);
    sessionStorage.setItem('console.variables', variables.value);
    let vars;
    try {
      vars = JSON.parse(variables.value || '{}');
    } catch (e) {
      fill(output, `The variables are not JSON: ${e.message}`);
      return;
    }
    fill(output, 'Running…');
    try {
      fill(output, JSON.stringify(await query(editor.value, vars), null, 2));
    } catch (e) {
      fill(output, e instanceof ApiError ? e.message : String(e));
    }
  };
  const keys = (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    }
  };
  editor.addEventListener('keydown', keys);
  variables.addEventListener('keydown', keys);
  const docs = h('div', { class: 'docs', id: 'docs' }, 'Reading the schema…');
  fill(main,
    h('h1', {}, 'GraphQL console'),
    h('p', { class: 'note' }, 'POST queries to ', h('code', {}, '/graphql'), '; subscriptions use ', h('code', {}, '/graphql/ws'), ' (graphql-transport-ws). Any GraphQL client works too.'),
    h('div', { class: 'console' },
      h('div', { class: 'editor' },
        h('label', { for: 'query' }, 'Query'), editor,
        h('label', { for: 'variables' }, 'Variables'), variables,
        h('button', { type: 'button', id: 'run', onclick: run }, 'Run (Ctrl+Enter)'),
        h('h2', {}, 'Answer'), output),
      h('aside', { 'aria-label': 'Schema' }, h('h2', {}, 'Schema'), docs)));
  try {
    const { __schema: schema } = await query(SCHEMA);
    fill(docs, fields('Queries', schema.queryType.fields, true), fields('Subscriptions', schema.subscriptionType?.fields ?? [], false));
  } catch (e) {
    fill(docs, message('error', e.message));
  }
}

function fields(title, list, withArgs) {
  return h('details', { open: withArgs }, h('summary', {}, title),
    h('dl', {}, list.map((f) => [
      h('dt', {}, h('code', {}, f.name, withArgs && f.args.length ? `(${f.args.map((a) => `${a.name}: ${typeName(a.type)}`).join(', ')})` : '', `: ${typeName(f.type)}`)),
      h('dd', {}, f.description ?? ''),
    ])));
}

/** `[Pact!]!` from an introspected type. */
function typeName(t) {
  if (t.kind === 'NON_NULL') return `${typeName(t.ofType)}!`;
  if (t.kind === 'LIST') return `[${typeName(t.ofType)}]`;
  return t.name;
}
