// Incremental delivery (issues 12 and 27): a query with @defer gets its deferred fields' real
// values from Apollo Client 4 over HTTP (multipart/mixed) and over graphql-transport-ws, and from
// graphql-sse over Server-Sent Events; the first payload leaves the deferred fields out (it held
// `null` for each, non-null ones included, so Apollo reported it complete and reading
// `lifecycleCapabilities.fork` threw). Only non-id fields are compared, so the checks hold
// whatever shape ids take.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { createClient as createWsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import { parse } from 'graphql';
import WebSocket from 'ws';
import { httpURL, wsURL } from './lib.mjs';
import { readMultipart } from './relay/incremental.mjs';

globalThis.WebSocket ??= WebSocket;

const DEFERRED = `query Deferred {
  session(workspaceId: "demo", id: "lisbon-trip") {
    title
    ... @defer(label: "latest") {
      lifecycleCapabilities { fork forkThroughTurn }
      latestTurn { sequence phase messages { content } }
    }
  }
}`;

// The deferred fields, which the first payload must not hold.
const DEFERRED_FIELDS = ['lifecycleCapabilities', 'latestTurn'];

// The demo's lisbon-trip session: its third turn is the latest.
const wantLatest = {
  sequence: 3,
  phase: 'SETTLED',
  messages: [{ content: 'Add a dinner with fado on Saturday.' }, { content: 'Suggestion: dinner at Clube de Fado, 21:00.' }],
};
const wantCapabilities = { fork: false, forkThroughTurn: true };

// strip drops __typename, which Apollo adds to every selection.
const strip = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === '__typename' ? undefined : x)));

// apolloResults watches the query until Apollo reports the complete result and returns every
// result it reported on the way.
function apolloResults(apollo) {
  return new Promise((resolve, reject) => {
    const results = [];
    const sub = apollo.watchQuery({ query: parse(DEFERRED), fetchPolicy: 'no-cache' }).subscribe({
      next: (r) => {
        if (r.error) return reject(r.error);
        if (r.dataState === 'empty') return; // the loading state before any payload
        results.push({ dataState: r.dataState, data: strip(r.data) });
        if (r.dataState === 'complete') {
          sub.unsubscribe();
          resolve(results);
        }
      },
      error: reject,
    });
  });
}

// requireApolloStreamed checks Apollo's results: first the streaming one without the deferred
// fields, last the complete one with them.
function requireApolloStreamed(results) {
  assert.ok(results.length >= 2, `Apollo reported ${JSON.stringify(results)}`);
  const [first] = results;
  assert.notEqual(first.dataState, 'complete', 'the first payload is not the whole answer');
  assert.equal(first.dataState, 'streaming');
  assert.equal(first.data.session.title, 'Plan a weekend in Lisbon');
  for (const field of DEFERRED_FIELDS) assert.equal(first.data.session[field], undefined, `${field} before its payload`);
  const last = results.at(-1);
  assert.equal(last.dataState, 'complete');
  assert.deepEqual(last.data.session.latestTurn, wantLatest);
  assert.deepEqual(last.data.session.lifecycleCapabilities, wantCapabilities);
}

test('HTTP (multipart/mixed): the first @defer payload leaves the deferred fields out', async () => {
  const res = await fetch(httpURL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed;deferSpec=20220824, application/json' },
    body: JSON.stringify({ query: DEFERRED }),
  });
  const payloads = [];
  for await (const payload of readMultipart(res)) payloads.push(payload);
  assert.equal(payloads.length, 2, JSON.stringify(payloads));
  const [first, second] = payloads;
  assert.equal(first.hasNext, true);
  assert.deepEqual(Object.keys(first.data.session), ['title'], JSON.stringify(first));
  assert.equal(second.hasNext, false);
  assert.deepEqual(second.incremental[0].data.lifecycleCapabilities, wantCapabilities);
  assert.deepEqual(second.incremental[0].data.latestTurn, wantLatest);
});

test('Apollo Client 4 over HTTP (multipart/mixed): streaming first, then the deferred fields', async () => {
  const apollo = new ApolloClient({
    link: new HttpLink({ uri: httpURL }),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  requireApolloStreamed(await apolloResults(apollo));
});

test('Apollo Client 4 over graphql-transport-ws: streaming first, then the deferred fields', async () => {
  const ws = createWsClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0 });
  after(() => ws.dispose());
  const apollo = new ApolloClient({
    link: new GraphQLWsLink(ws),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  requireApolloStreamed(await apolloResults(apollo));
});

test('graphql-sse: @defer arrives as {data, hasNext} without the deferred fields, then {incremental, hasNext: false}', async () => {
  const sse = createSseClient({ url: httpURL, retryAttempts: 0 });
  after(() => sse.dispose());
  const payloads = await new Promise((resolve, reject) => {
    const results = [];
    sse.subscribe({ query: DEFERRED }, { next: (r) => results.push(r), error: reject, complete: () => resolve(results) });
  });
  assert.equal(payloads.length, 2, JSON.stringify(payloads));
  const [first, second] = payloads;
  assert.equal(first.hasNext, true);
  assert.deepEqual(Object.keys(first.data.session), ['title']);
  assert.equal(second.hasNext, false);
  assert.equal(second.incremental.length, 1);
  const [item] = second.incremental;
  assert.deepEqual(item.path, ['session']);
  assert.equal(item.label, 'latest');
  assert.equal(item.errors, undefined);
  assert.deepEqual(item.data.latestTurn, wantLatest);
  assert.deepEqual(item.data.lifecycleCapabilities, wantCapabilities);
});

test('HTTP: @defer without multipart/mixed in Accept is refused with 406 INCREMENTAL_DELIVERY_NOT_ACCEPTED', async () => {
  const res = await fetch(httpURL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: DEFERRED }),
  });
  assert.equal(res.status, 406);
  const body = await res.json();
  assert.equal(body.errors[0].extensions.code, 'INCREMENTAL_DELIVERY_NOT_ACCEPTED');
});
