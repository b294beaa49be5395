// Global object identification (issue 12) as a normalized client cache sees it: the same runtime
// session id in two workspaces is two objects in Apollo's InMemoryCache, node(id:) refetches
// each, and every id a query returned is accepted back as an argument.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { parse } from 'graphql';
import { httpURL, unique, REPORT_SESSION, REPORT_TURN, APPEND_MESSAGES } from './lib.mjs';

const newApollo = () => new ApolloClient({ link: new HttpLink({ uri: httpURL }), cache: new InMemoryCache() });

async function gql(query, variables) {
  const res = await fetch(httpURL, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  return body;
}

async function mustGQL(query, variables) {
  const body = await gql(query, variables);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

const SESSION = parse(`query Session($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { id localId workspaceId title } }`);

test('the same session id in two workspaces is two records in Apollo InMemoryCache', async () => {
  const shared = unique('shared');
  const [wsA, wsB] = [unique('ws-a'), unique('ws-b')];
  for (const ws of [wsA, wsB]) {
    // A provider session belongs to one workspace: each reports its own.
    await mustGQL(REPORT_SESSION, { ws, id: shared, providerSession: `p-${ws}-${shared}`, title: `title in ${ws}` });
  }
  const apollo = newApollo();
  const a = await apollo.query({ query: SESSION, variables: { ws: wsA, id: shared } });
  const b = await apollo.query({ query: SESSION, variables: { ws: wsB, id: shared } });
  assert.equal(a.data.session.localId, shared);
  assert.equal(b.data.session.localId, shared);
  assert.notEqual(a.data.session.id, b.data.session.id, 'two global ids');

  // Read back from the cache only: the second result did not overwrite the first.
  const cachedA = apollo.readQuery({ query: SESSION, variables: { ws: wsA, id: shared } });
  assert.equal(cachedA.session.title, `title in ${wsA}`);
  assert.equal(cachedA.session.workspaceId, wsA);
  const sessions = Object.keys(apollo.cache.extract()).filter((k) => k.startsWith('Session:'));
  assert.deepEqual(sessions.sort(), [`Session:${a.data.session.id}`, `Session:${b.data.session.id}`].sort());
});

test('node and nodes refetch what a query returned; arguments take the global ids back', async () => {
  const ws = unique('ws-node');
  const session = unique('session');
  await mustGQL(REPORT_SESSION, { ws, id: session, providerSession: `p-${session}`, title: 'node e2e' });
  for (const n of [1, 2]) {
    const turn = `${session}-t${n}`;
    await mustGQL(REPORT_TURN, { ws, session, id: turn, providerTurn: `p-${turn}` });
    await mustGQL(APPEND_MESSAGES, { ws, session, turn, q: `q${n}`, a: `a${n}` });
  }
  const listed = await mustGQL(`query($ws: ID!) { sessions(workspaceId: $ws) { edges { node {
    id localId turns { edges { node { id localId messages { id } } } } } } } }`, { ws });
  const s = listed.sessions.edges[0].node;
  const [t1, t2] = s.turns.edges.map((e) => e.node);
  assert.equal(s.localId, session);

  const one = await mustGQL(`query($id: ID!) { node(id: $id) { __typename id ... on Session { localId } } }`, { id: s.id });
  assert.deepEqual(one.node, { __typename: 'Session', id: s.id, localId: session });
  const ids = [t2.id, s.id, t1.messages[0].id, `Session:${ws}:missing`];
  const many = await mustGQL(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, { ids });
  assert.deepEqual(many.nodes, [{ __typename: 'Turn', id: t2.id }, { __typename: 'Session', id: s.id },
    { __typename: 'Message', id: t1.messages[0].id }, null]);

  // A fork named entirely by global ids, followed, acknowledged and refetched by its global ids.
  const forked = await mustGQL(`mutation($ws: ID!, $s: ID!, $t: ID!, $r: ID!) { forkSession(input: {workspaceId: $ws,
    sourceSessionId: $s, throughTurnId: $t, requestId: $r}) { id localId sourceSessionId throughTurnId } }`,
  { ws, s: s.id, t: t2.id, r: unique('req') });
  assert.equal(forked.forkSession.sourceSessionId, session, 'relation fields stay local');
  assert.equal(forked.forkSession.throughTurnId, t2.localId);
  const read = await mustGQL(`query($ws: ID!, $id: ID!) { forkOperation(workspaceId: $ws, id: $id) { localId } }`,
    { ws, id: forked.forkSession.id });
  assert.equal(read.forkOperation.localId, forked.forkSession.localId);

  const wrong = await gql(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { id } }`, { ws, id: t1.id });
  assert.equal(wrong.errors[0].extensions.code, 'BAD_USER_INPUT');
  assert.equal(wrong.errors[0].extensions.reason, 'invalid_id');
  assert.match(wrong.errors[0].message, /names a Turn, not a Session/);
});
