// The dashboard's only way to the data: the public GraphQL API, over HTTP for queries and over
// one websocket (the graphql-transport-ws protocol) for subscriptions.

/** What went wrong talking to the API, in words for the page. */
export class ApiError extends Error {}

/** Runs `text` with `variables` and returns its data; throws an ApiError naming what failed. */
export async function query(text, variables = {}) {
  let response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: text, variables }),
    });
  } catch (e) {
    throw new ApiError(`The API did not answer (${e.message}): is the server still running?`);
  }
  let body;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`The API answered ${response.status} ${response.statusText} without a GraphQL reply.`);
  }
  if (body.errors?.length) throw new ApiError(body.errors.map((e) => e.message).join(' '));
  if (!response.ok) throw new ApiError(`The API answered ${response.status} ${response.statusText}.`);
  return body.data;
}

/** The shared subscription socket; reconnects after a drop and subscribes again. */
class Socket {
  constructor() {
    this.next = 1;
    this.active = new Map(); // id → { payload, onData }
    this.ready = false;
    this.ws = null;
    this.listeners = new Set();
  }

  /** Starts `payload` and calls `onData(data)` for each result; returns the function that stops it. */
  subscribe(payload, onData) {
    const id = String(this.next++);
    this.active.set(id, { payload, onData });
    if (this.ready) this.send({ id, type: 'subscribe', payload });
    else this.connect();
    return () => {
      this.active.delete(id);
      if (this.ready) this.send({ id, type: 'complete' });
    };
  }

  /** Calls `listener(connected)` now and whenever the socket connects or drops; connects, so
   * every page (with subscriptions or without) says whether it is live. */
  onState(listener) {
    this.listeners.add(listener);
    listener(this.ready);
    this.connect();
  }

  connect() {
    if (this.ws) return;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql/ws`;
    const ws = new WebSocket(url, 'graphql-transport-ws');
    this.ws = ws;
    ws.onopen = () => this.send({ type: 'connection_init', payload: {} });
    ws.onmessage = (event) => this.receive(JSON.parse(event.data));
    ws.onclose = () => {
      this.ws = null;
      this.setReady(false);
      if (this.active.size || this.listeners.size) setTimeout(() => this.connect(), 1000);
    };
  }

  receive(message) {
    switch (message.type) {
      case 'connection_ack':
        this.setReady(true);
        for (const [id, { payload }] of this.active) this.send({ id, type: 'subscribe', payload });
        break;
      case 'ping':
        this.send({ type: 'pong' });
        break;
      case 'next': {
        const sub = this.active.get(message.id);
        if (sub && message.payload?.data) sub.onData(message.payload.data);
        break;
      }
      case 'error':
        console.warn('subscription refused', message.payload);
        break;
      default:
    }
  }

  send(message) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  setReady(ready) {
    this.ready = ready;
    for (const listener of this.listeners) listener(ready);
  }
}

const socket = new Socket();

/** Subscribes to `text`; `onData` gets each result's data. Returns the function that stops it. */
export const subscribe = (text, variables, onData) => socket.subscribe({ query: text, variables }, onData);

/** Calls `listener(connected)` as the live connection comes and goes. */
export const onLiveState = (listener) => socket.onState(listener);

/**
 * Calls `refresh` once soon after each burst of changes to pacts passing `filter` (a burst of
 * events in one block is one refresh). Returns the function that stops it.
 */
export function onPactChanges(filter, refresh) {
  let timer = null;
  const stop = subscribe(
    'subscription($filter: PactUpdateFilter) { pactUpdated(filter: $filter) { id status } }',
    { filter },
    () => {
      clearTimeout(timer);
      timer = setTimeout(() => quietly(refresh), 100);
    },
  );
  return () => {
    clearTimeout(timer);
    stop();
  };
}

/** Runs a background redraw; when the API cannot answer, the page keeps what it shows and the
 * header's live badge says why nothing moves. */
export async function quietly(redraw) {
  try {
    await redraw();
  } catch (e) {
    console.warn('redraw failed:', e.message);
  }
}
