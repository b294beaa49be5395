// Apollo Client 4 with PersistedQueryLink (automatic persisted queries) over HttpLink runs the
// fork flow, subscriptions over GraphQLWsLink: every operation is first sent as a bare sha256
// hash, misses with PERSISTED_QUERY_NOT_FOUND, is retried with its document, and from then on
// runs from its hash alone, over POST and (for queries) GET.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache, ApolloLink } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';
import { parse } from 'graphql';
import WebSocket from 'ws';
import { httpURL, wsURL, forkFlow } from './lib.mjs';

globalThis.WebSocket ??= WebSocket;

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

// Every HTTP exchange, to see what the link sent and what it got back.
const exchanges = [];
async function recordingFetch(url, init) {
  const sent = init.method === 'GET' ? Object.fromEntries(new URL(url).searchParams) : JSON.parse(init.body);
  const response = await fetch(url, init);
  const body = await response.clone().json();
  exchanges.push({ method: init.method, sentQuery: sent.query !== undefined && sent.query !== '', body });
  return response;
}

const ws = createClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0 });
after(() => ws.dispose());
const http = new HttpLink({ uri: httpURL, fetch: recordingFetch });
const isSubscription = ({ query }) => {
  const def = getMainDefinition(query);
  return def.kind === 'OperationDefinition' && def.operation === 'subscription';
};
const link = ApolloLink.split(isSubscription, new GraphQLWsLink(ws),
  new PersistedQueryLink({ sha256, useGETForHashedQueries: true }).concat(http));
const apollo = new ApolloClient({ link, cache: new InMemoryCache() });

const client = {
  async mutate(query, variables) {
    const { data, error } = await apollo.mutate({ mutation: parse(query), variables, fetchPolicy: 'no-cache' });
    if (error) throw error;
    return data;
  },
  follow(query, variables) {
    return new Promise((resolve, reject) => {
      const results = [];
      apollo.subscribe({ query: parse(query), variables, fetchPolicy: 'no-cache' }).subscribe({
        next: (r) => (r.error ? reject(r.error) : results.push(r.data)),
        error: reject,
        complete: () => resolve(results),
      });
    });
  },
};

const code = (body) => body.errors?.[0]?.extensions?.code;

test('Apollo PersistedQueryLink: fork flow to COMMITTED and acknowledge over APQ', async () => {
  await forkFlow(client, 'apq');
  const misses = exchanges.filter((e) => !e.sentQuery && code(e.body) === 'PERSISTED_QUERY_NOT_FOUND');
  const registrations = exchanges.filter((e) => e.sentQuery && !e.body.errors);
  const hits = exchanges.filter((e) => !e.sentQuery && e.body.data && !e.body.errors);
  assert.ok(misses.length > 0, 'the first sight of each document misses');
  assert.ok(registrations.length >= misses.length, 'each miss is retried with the document');
  assert.ok(hits.length > 0, 'a document seen before runs from its hash alone');
  assert.ok(exchanges.every((e) => !e.body.errors || code(e.body) === 'PERSISTED_QUERY_NOT_FOUND'),
    `unexpected errors: ${JSON.stringify(exchanges.filter((e) => e.body.errors).map((e) => e.body.errors))}`);
});

test('Apollo PersistedQueryLink: a query seen before runs from its hash over GET', async () => {
  const query = parse('query Demo { sessions(workspaceId: "demo") { totalCount } }');
  for (let i = 0; i < 2; i += 1) {
    const { data, error } = await apollo.query({ query, fetchPolicy: 'no-cache' });
    assert.equal(error, undefined);
    assert.equal(typeof data.sessions.totalCount, 'number');
  }
  const last = exchanges.at(-1);
  assert.equal(last.method, 'GET');
  assert.equal(last.sentQuery, false, 'the second run sent only the hash');
  assert.ok(last.body.data);
});
