// The graphql-ws client (graphql-transport-ws) runs the fork flow entirely over one websocket:
// queries and mutations as well as the subscription.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { wsURL, forkFlow } from './lib.mjs';

/** wsClient returns a graphql-ws client; run() executes one operation and collects every result. */
export function wsClient(options = {}) {
  const client = createClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true, ...options });
  const run = (query, variables) => new Promise((resolve, reject) => {
    const results = [];
    client.subscribe({ query, variables }, {
      next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : results.push(r.data)),
      error: (e) => reject(e instanceof Error ? e : new Error(JSON.stringify(e))),
      complete: () => resolve(results),
    });
  });
  return {
    client,
    mutate: async (query, variables) => (await run(query, variables))[0],
    follow: run,
  };
}

const c = wsClient();
after(() => c.client.dispose());

test('graphql-ws client: fork flow to COMMITTED and acknowledge', async () => {
  const { phases } = await forkFlow(c, 'graphql-ws');
  assert.ok(phases.length >= 2, `expected the state and at least one transition, saw ${phases}`);
});

test('graphql-ws client: validation errors end the operation with error, not complete', async () => {
  await assert.rejects(c.follow('subscription { noSuchField }', {}), (err) => /noSuchField|Cannot query field/.test(String(err.message)));
});
