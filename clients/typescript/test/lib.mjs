// Shared test setup: a client with short schedules (the flow is the same, the pauses shorter),
// a Web Storage stand-in for Node (a Map behind the Storage interface; browsers have the real
// one, which the playground's browser suite uses), and small helpers.
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
