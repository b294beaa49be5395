// Incremental delivery (issue 12): a query with @defer gets its deferred field's real value from
// Apollo Client 4 over HTTP (multipart/mixed) and over graphql-transport-ws, and from
// graphql-sse over Server-Sent Events. Only non-id fields are compared, so the checks hold
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

globalThis.WebSocket ??= WebSocket;

const DEFERRED = `query Deferred {
  session(workspaceId: "demo", id: "lisbon-trip") {
    title
    ... @defer(label: "latest") { latestTurn { sequence phase messages { content } } }
  }
}`;

// The demo's lisbon-trip session: its third turn is the latest.
const wantLatest = {
  sequence: 3,
  phase: 'SETTLED',
  messages: [{ content: 'Add a dinner with fado on Saturday.' }, { content: 'Suggestion: dinner at Clube de Fado, 21:00.' }],
};

// strip drops __typename, which Apollo adds to every selection.
const strip = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === '__typename' ? undefined : x)));

// apolloResult watches the query until Apollo reports the complete result.
function apolloResult(apollo) {
  return new Promise((resolve, reject) => {
    const sub = apollo.watchQuery({ query: parse(DEFERRED), fetchPolicy: 'no-cache' }).subscribe({
      next: (r) => {
        if (r.error) return reject(r.error);
        if (r.dataState === 'complete') {
          sub.unsubscribe();
          resolve(r.data);
        }
      },
      error: reject,
    });
  });
}

test('Apollo Client 4 over HTTP (multipart/mixed): @defer delivers the deferred field', async () => {
  const apollo = new ApolloClient({
    link: new HttpLink({ uri: httpURL }),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  const data = await apolloResult(apollo);
  assert.equal(data.session.title, 'Plan a weekend in Lisbon');
  assert.deepEqual(strip(data.session.latestTurn), wantLatest);
});

test('Apollo Client 4 over graphql-transport-ws: @defer delivers the deferred field', async () => {
  const ws = createWsClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0 });
  after(() => ws.dispose());
  const apollo = new ApolloClient({
    link: new GraphQLWsLink(ws),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  const data = await apolloResult(apollo);
  assert.equal(data.session.title, 'Plan a weekend in Lisbon');
  assert.deepEqual(strip(data.session.latestTurn), wantLatest);
});

test('graphql-sse: @defer arrives as {data, hasNext} then {incremental, hasNext: false}', async () => {
  const sse = createSseClient({ url: httpURL, retryAttempts: 0 });
  after(() => sse.dispose());
  const payloads = await new Promise((resolve, reject) => {
    const results = [];
    sse.subscribe({ query: DEFERRED }, { next: (r) => results.push(r), error: reject, complete: () => resolve(results) });
  });
  assert.equal(payloads.length, 2, JSON.stringify(payloads));
  const [first, second] = payloads;
  assert.equal(first.hasNext, true);
  assert.equal(first.data.session.title, 'Plan a weekend in Lisbon');
  assert.equal(second.hasNext, false);
  assert.equal(second.incremental.length, 1);
  const [item] = second.incremental;
  assert.deepEqual(item.path, ['session']);
  assert.equal(item.label, 'latest');
  assert.equal(item.errors, undefined);
  assert.deepEqual(item.data.latestTurn, wantLatest);
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
