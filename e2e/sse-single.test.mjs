// graphql-sse in "single connection" mode: one reserved event stream (PUT, then GET) carries
// every operation of the fork flow, each POSTed with the reservation's token.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'graphql-sse';
import { httpURL, forkFlow, unique, REPORT_SESSION, WORKSPACE_EVENTS } from './lib.mjs';

// Every request the client makes, to show the flow really used single-connection mode.
const seen = [];
let deleted; // resolves with the status of the first DELETE
const firstDelete = new Promise((resolve) => { deleted = resolve; });
const fetchFn = async (input, init = {}) => {
  const res = await fetch(input, init);
  const headers = new Headers(init.headers);
  seen.push({
    method: init.method ?? 'GET', status: res.status,
    token: headers.get('x-graphql-event-stream-token') ?? new URL(String(input)).searchParams.get('token'),
  });
  if (init.method === 'DELETE') deleted(res.status);
  return res;
};
// lazy: false keeps the one stream open between operations (the lazy default reconnects for
// each burst of operations), so the test can show they all share it.
const sse = createClient({ url: httpURL, singleConnection: true, lazy: false, retryAttempts: 0, fetchFn });
after(() => sse.dispose());

const run = (query, variables) => new Promise((resolve, reject) => {
  const results = [];
  sse.subscribe({ query, variables }, {
    next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : results.push(r.data)),
    error: reject,
    complete: () => resolve(results),
  });
});

test('graphql-sse (single connection): fork flow to COMMITTED and acknowledge on one stream', { timeout: 30_000 }, async () => {
  await forkFlow({ mutate: async (q, v) => (await run(q, v))[0], follow: run }, 'sse-single');
  const puts = seen.filter((r) => r.method === 'PUT');
  const streams = seen.filter((r) => r.method === 'GET');
  const posts = seen.filter((r) => r.method === 'POST');
  assert.equal(puts.length, 1, `one reservation: ${JSON.stringify(seen)}`);
  assert.equal(puts[0].status, 201);
  assert.equal(streams.length, 1, `one stream for the whole flow: ${JSON.stringify(seen)}`);
  assert.equal(streams[0].status, 200);
  assert.ok(streams[0].token, 'the stream was opened with its token');
  assert.ok(posts.length >= 10, `operations: ${JSON.stringify(seen)}`);
  for (const p of posts) {
    assert.equal(p.status, 202, 'each operation is accepted for the stream');
    assert.equal(p.token, streams[0].token, 'each operation names the stream');
  }
});

test('graphql-sse (single connection): a subscription and a mutation share the stream; unsubscribing DELETEs only it', { timeout: 30_000 }, async () => {
  const ws = unique('ws-sse-single-events');
  let unsubscribe;
  let event;
  const first = new Promise((resolve, reject) => {
    unsubscribe = sse.subscribe({ query: WORKSPACE_EVENTS, variables: { ws } }, {
      next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : resolve((event = r.data))),
      error: reject,
      complete: () => reject(new Error('workspaceEvents completed by itself')),
    });
  });
  first.catch(() => {}); // awaited below; a failure before then must not be unhandled
  // The subscription's POST and the mutations' race to the server, so report sessions (each a
  // round trip on the same stream) until the subscription has seen one.
  const reported = [];
  for (let i = 0; !event && i < 50; i++) {
    const id = unique('session');
    const result = await run(REPORT_SESSION, { ws, id, providerSession: `p-${id}`, title: 'events' });
    assert.equal(result.length, 1);
    reported.push(id);
  }
  assert.ok(event, `the subscription saw none of ${reported.length} reported sessions`);
  await first;
  assert.ok(reported.includes(event.workspaceEvents.sessionId), `event ${JSON.stringify(event)}`);
  unsubscribe();
  // The DELETE is sent in the background; the next operation on the same stream still works.
  const again = await run(REPORT_SESSION, { ws, id: unique('session'), providerSession: unique('p'), title: 'after' });
  assert.equal(again.length, 1);
  assert.equal(await firstDelete, 200);
  const deletes = seen.filter((r) => r.method === 'DELETE');
  assert.equal(deletes.length, 1, `requests: ${JSON.stringify(seen)}`);
  assert.equal(deletes[0].token, seen.find((r) => r.method === 'GET').token, 'the DELETE names the stream');
  assert.equal(seen.filter((r) => r.method === 'GET').length, 1, 'still the one stream');
});
