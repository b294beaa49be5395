// Shared test setup: a client with short schedules (the flow is the same, the pauses shorter),
// a Web Storage stand-in for Node (a Map behind the Storage interface; browsers have the real
// one, which the playground's browser suite uses), and small helpers.
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { createClient as createSSEClient } from 'graphql-sse';
import { createForkgraphClient } from '../dist/index.js';

export const FAST = {
  pollDelaysMs: [0, 50, 100, 200],
  requestRetryDelaysMs: [50, 100, 200],
  ackRetryDelaysMs: [50, 100, 200],
  unknownPollDelaysMs: [200, 400],
  ackTimeoutMs: 5000,
};

/** newClient makes a client for url with the test schedules; options override. */
export function newClient(url, options = {}) {
  const client = createForkgraphClient({
    url,
    webSocketImpl: WebSocket,
    forkTiming: FAST,
    streamRetryDelaysMs: [50, 100, 200],
    requestTimeoutMs: 10000,
    onError: (err) => {
      throw err;
    },
    ...options,
  });
  clients.add(client);
  return client;
}

/** sseClient is graphql-sse's createClient, for subscriptions: 'sse'. */
export { createSSEClient };

const clients = new Set();

/** closeClients closes every client newClient made. */
export function closeClients() {
  for (const c of clients) c.close();
  clients.clear();
}

/** MapStorage is the Web Storage interface over a Map (localStorage's contract, for Node). */
export class MapStorage {
  #items = new Map();
  get length() {
    return this.#items.size;
  }
  key(i) {
    return [...this.#items.keys()][i] ?? null;
  }
  getItem(k) {
    return this.#items.has(k) ? this.#items.get(k) : null;
  }
  setItem(k, v) {
    this.#items.set(k, String(v));
  }
  removeItem(k) {
    this.#items.delete(k);
  }
}

/** boundaryOf names the boundary of a seeded session's turn (default: its last). */
export const boundaryOf = (s, i = s.turnIds.length - 1) => ({ workspaceId: s.workspaceId, sessionId: s.sessionId, turnId: s.turnIds[i] });

/** collect starts a watch and returns it with its events and a way to await them. */
export function collect(client, options) {
  const events = [];
  const errors = [];
  const statuses = [];
  let waiters = [];
  const poke = () => {
    waiters = waiters.filter((w) => !w());
  };
  const watch = client.watchWorkspace({
    ...options,
    onEvent: (e) => {
      events.push(e);
      poke();
    },
    onError: (e) => {
      errors.push(e);
      poke();
    },
    onStatus: (st) => {
      statuses.push(st);
      poke();
    },
  });
  const until = (predicate, what = 'events') =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${events.length} events, errors ${errors.map((e) => e.code)}`)), 20000);
      const check = () => {
        if (!predicate()) return false;
        clearTimeout(timer);
        resolve();
        return true;
      };
      if (!check()) waiters.push(check);
    });
  return { watch, events, errors, statuses, until };
}

/** truth replays the workspace's log from its start with a fresh client. */
export async function truth(url, workspaceId, lastSession, options = {}) {
  const c = newClient(url, options);
  const t = collect(c, { workspaceId, after: options.start });
  await t.until(() => t.events.some((e) => e.sessionId === lastSession), 'the whole log');
  t.watch.stop();
  return t.events.map((e) => e.cursor);
}

export const ids = (events) => events.map((e) => e.cursor);
export const noRepeat = (cursors) => assert.equal(new Set(cursors).size, cursors.length, 'no event twice');
