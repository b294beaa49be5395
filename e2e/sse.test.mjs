// graphql-sse in "distinct connections" mode: the fork flow over Server-Sent Events, for clients
// that cannot use websockets.
import { test, after } from 'node:test';
import { createClient } from 'graphql-sse';
import { httpURL, forkFlow } from './lib.mjs';

const sse = createClient({ url: httpURL, retryAttempts: 0 });
after(() => sse.dispose());

const run = (query, variables) => new Promise((resolve, reject) => {
  const results = [];
  sse.subscribe({ query, variables }, {
    next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : results.push(r.data)),
    error: reject,
    complete: () => resolve(results),
  });
});

test('graphql-sse (distinct connections): fork flow to COMMITTED and acknowledge', async () => {
  await forkFlow({ mutate: async (q, v) => (await run(q, v))[0], follow: run }, 'sse');
});
