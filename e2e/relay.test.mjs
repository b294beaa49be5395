// A Relay app (relay-compiler + relay-runtime) against the live schema: relay/compile.mjs compiles
// relay/src/ against the schema the running server introspects, and the tests drive the compiled
// artifacts with relay-runtime (relay/app.mjs): @connection pages merged forward and backward in
// the store, a @refetchable Session fragment refetched and paged through node(id:), and one local
// session id in two workspaces kept as two records.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { httpURL, unique, REPORT_SESSION, REPORT_TURN } from './lib.mjs';
import { compileRelay } from './relay/compile.mjs';

let app;
let artifacts;
before(async () => {
  await compileRelay(httpURL);
  app = await import('./relay/app.mjs');
  artifacts = {};
  for (const name of [
    'SessionListQuery',
    'SessionList_query',
    'SessionDetailQuery',
    'SessionDetailLatestQuery',
    'SessionDetail_session',
    'SessionCapabilitiesQuery',
    'SessionCapabilities_session',
  ]) {
    artifacts[name] = (await import(`./relay/__generated__/${name}.graphql.js`)).default;
  }
});

// Relay reports what it could not merge (a page whose cursor does not continue the connection, a
// record whose id changed type) as console.error warnings and goes on; here each one fails the test.
const relayWarnings = [];
const consoleError = console.error;
console.error = (...args) => {
  if (String(args[0]).includes('Relay')) relayWarnings.push(args.map(String).join(' '));
  else consoleError(...args);
};
after(() => {
  console.error = consoleError;
});
function assertNoRelayWarnings() {
  assert.deepEqual(relayWarnings.splice(0), [], 'relay-runtime warned');
}

async function graphql(query, variables) {
  const res = await fetch(httpURL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

function reportSession(ws, id, title) {
  return graphql(REPORT_SESSION, { ws, id, providerSession: `p-${ws}-${id}`, title });
}

// A workspace with n sessions reported oldest first, titled `session 1` .. `session n`.
async function workspaceWithSessions(n) {
  const ws = unique('ws-relay');
  for (let i = 1; i <= n; i += 1) await reportSession(ws, `s${i}`, `session ${i}`);
  return ws;
}

function titles(list) {
  return list.sessions.edges.map((e) => e.node.title);
}

function assertConnectionConsistent(connection) {
  const cursors = connection.edges.map((e) => e.cursor);
  assert.equal(new Set(cursors).size, cursors.length, `duplicate cursors: ${cursors}`);
  const ids = connection.edges.map((e) => e.node.id);
  assert.equal(new Set(ids).size, ids.length, `duplicate nodes: ${ids}`);
  assert.equal(connection.pageInfo.startCursor, cursors.at(0), 'startCursor is the first edge');
  assert.equal(connection.pageInfo.endCursor, cursors.at(-1), 'endCursor is the last edge');
}

test('relay: the sessions @connection pages forward and the store merges the pages in order', async () => {
  const ws = await workspaceWithSessions(5);
  const requests = [];
  const env = app.createEnvironment(httpURL, requests);
  const { SessionListQuery, SessionList_query: fragment } = artifacts;
  const root = await app.loadQuery(env, SessionListQuery, { workspaceId: ws, first: 2 });

  let list = app.readFragment(env, fragment, root);
  assert.deepEqual(titles(list), ['session 1', 'session 2']);
  assert.equal(list.sessions.totalCount, 5);
  assert.equal(list.sessions.pageInfo.hasNextPage, true);
  assert.equal(list.sessions.pageInfo.hasPreviousPage, false);

  list = await app.loadMore(env, fragment, root, 'forward', 2);
  assert.deepEqual(titles(list), ['session 1', 'session 2', 'session 3', 'session 4']);
  assert.equal(list.sessions.pageInfo.hasNextPage, true);
  assertConnectionConsistent(list.sessions);

  list = await app.loadMore(env, fragment, root, 'forward', 2);
  assert.deepEqual(titles(list), ['session 1', 'session 2', 'session 3', 'session 4', 'session 5']);
  assert.equal(list.sessions.pageInfo.hasNextPage, false, 'the last page says nothing follows');
  assert.equal(list.sessions.pageInfo.hasPreviousPage, false, 'merging forward keeps the first page\'s hasPreviousPage');
  assertConnectionConsistent(list.sessions);

  // Each page was asked for after the previous page's end, with the backward arguments nulled.
  const pages = requests.filter((r) => r.name === 'SessionListPaginationQuery').map((r) => r.variables);
  assert.equal(pages.length, 2);
  assert.ok(pages.every((v) => v.first === 2 && v.last == null && v.before == null && v.workspaceId === ws));
  assert.notEqual(pages[0].after, pages[1].after);
  assertNoRelayWarnings();
});

test('relay: the sessions @connection pages backward and the store prepends the pages in order', async () => {
  const ws = await workspaceWithSessions(5);
  const env = app.createEnvironment(httpURL);
  const { SessionListQuery, SessionList_query: fragment } = artifacts;
  const root = await app.loadQuery(env, SessionListQuery, { workspaceId: ws, last: 2 });

  let list = app.readFragment(env, fragment, root);
  assert.deepEqual(titles(list), ['session 4', 'session 5']);
  assert.equal(list.sessions.pageInfo.hasPreviousPage, true);
  assert.equal(list.sessions.pageInfo.hasNextPage, false);

  list = await app.loadMore(env, fragment, root, 'backward', 2);
  assert.deepEqual(titles(list), ['session 2', 'session 3', 'session 4', 'session 5']);
  assert.equal(list.sessions.pageInfo.hasPreviousPage, true);
  assertConnectionConsistent(list.sessions);

  list = await app.loadMore(env, fragment, root, 'backward', 2);
  assert.deepEqual(titles(list), ['session 1', 'session 2', 'session 3', 'session 4', 'session 5']);
  assert.equal(list.sessions.pageInfo.hasPreviousPage, false, 'the first page says nothing precedes');
  assert.equal(list.sessions.pageInfo.hasNextPage, false);
  assertConnectionConsistent(list.sessions);
  assertNoRelayWarnings();
});

// A session with n settled turns (local ids `<id>-t1` .. `<id>-tn`).
async function sessionWithTurns(ws, id, title, n) {
  await reportSession(ws, id, title);
  for (let i = 1; i <= n; i += 1) {
    await graphql(REPORT_TURN, { ws, session: id, id: `${id}-t${i}`, providerTurn: `p-${ws}-${id}-t${i}` });
  }
}

function turnSequences(detail) {
  return detail.turns.edges.map((e) => e.node.sequence);
}

test('relay: a @refetchable Session fragment refetches through node(id:) and sees the change made on the server', async () => {
  const ws = unique('ws-relay');
  await sessionWithTurns(ws, 'refetched', 'title before', 1);
  const requests = [];
  const env = app.createEnvironment(httpURL, requests);
  const { SessionDetailQuery, SessionDetail_session: fragment } = artifacts;
  const root = await app.loadQuery(env, SessionDetailQuery, { workspaceId: ws, id: 'refetched' });

  let detail = app.readFragment(env, fragment, root.session);
  assert.equal(detail.title, 'title before');
  assert.equal(detail.localId, 'refetched');
  assert.equal(detail.workspaceId, ws);
  assert.notEqual(detail.id, detail.localId, 'Session.id is the global id, not the workspace-local one');

  await reportSession(ws, 'refetched', 'title after');
  assert.equal(app.readFragment(env, fragment, root.session).title, 'title before', 'the store has not seen it yet');

  detail = await app.refetch(env, fragment, root.session);
  assert.equal(detail.title, 'title after');
  assert.equal(detail.localId, 'refetched');
  const refetches = requests.filter((r) => r.name === 'SessionDetailRefetchQuery');
  assert.equal(refetches.length, 1);
  assert.equal(refetches[0].variables.id, detail.id, 'the refetch asks node(id:) for the global id');
  assertNoRelayWarnings();
});

test('relay: the turns @connection of a Session fragment pages forward through node(id:)', async () => {
  const ws = unique('ws-relay');
  await sessionWithTurns(ws, 'paged', 'paged turns', 5);
  const requests = [];
  const env = app.createEnvironment(httpURL, requests);
  const { SessionDetailQuery, SessionDetail_session: fragment } = artifacts;
  const root = await app.loadQuery(env, SessionDetailQuery, { workspaceId: ws, id: 'paged' });

  let detail = app.readFragment(env, fragment, root.session);
  assert.deepEqual(turnSequences(detail), [1, 2], 'the query asks for the first two turns');
  assert.equal(detail.turns.totalCount, 5);
  assert.equal(detail.turns.pageInfo.hasNextPage, true);

  detail = await app.loadMore(env, fragment, root.session, 'forward', 2);
  assert.deepEqual(turnSequences(detail), [1, 2, 3, 4]);
  assertConnectionConsistent(detail.turns);
  detail = await app.loadMore(env, fragment, root.session, 'forward', 2);
  assert.deepEqual(turnSequences(detail), [1, 2, 3, 4, 5]);
  assert.equal(detail.turns.pageInfo.hasNextPage, false);
  assertConnectionConsistent(detail.turns);

  const pages = requests.filter((r) => r.name === 'SessionDetailRefetchQuery').map((r) => r.variables);
  assert.equal(pages.length, 2);
  assert.ok(pages.every((v) => v.id === detail.id && v.first === 2), JSON.stringify(pages));
  assertNoRelayWarnings();
});

test('relay: the turns @connection of a Session fragment pages backward through node(id:)', async () => {
  const ws = unique('ws-relay');
  await sessionWithTurns(ws, 'paged-back', 'paged turns backward', 5);
  const requests = [];
  const env = app.createEnvironment(httpURL, requests);
  const { SessionDetailLatestQuery, SessionDetail_session: fragment } = artifacts;
  const root = await app.loadQuery(env, SessionDetailLatestQuery, { workspaceId: ws, id: 'paged-back' });

  let detail = app.readFragment(env, fragment, root.session);
  assert.deepEqual(turnSequences(detail), [4, 5], 'the query asks for the last two turns');
  assert.equal(detail.turns.pageInfo.hasPreviousPage, true);
  assert.equal(detail.turns.pageInfo.hasNextPage, false);

  detail = await app.loadMore(env, fragment, root.session, 'backward', 2);
  assert.deepEqual(turnSequences(detail), [2, 3, 4, 5]);
  assertConnectionConsistent(detail.turns);
  detail = await app.loadMore(env, fragment, root.session, 'backward', 2);
  assert.deepEqual(turnSequences(detail), [1, 2, 3, 4, 5]);
  assert.equal(detail.turns.pageInfo.hasPreviousPage, false, 'the first turn says nothing precedes');
  assertConnectionConsistent(detail.turns);
  assert.deepEqual(
    detail.turns.edges.map((e) => e.node.localId),
    [1, 2, 3, 4, 5].map((n) => `paged-back-t${n}`),
  );

  const pages = requests.filter((r) => r.name === 'SessionDetailRefetchQuery').map((r) => r.variables);
  assert.equal(pages.length, 2);
  assert.ok(pages.every((v) => v.id === detail.id && v.last === 2 && v.first == null && v.after == null), JSON.stringify(pages));
  assertNoRelayWarnings();
});

test('relay: one local session id in two workspaces stays two records in the store', async () => {
  const [wsA, wsB] = [unique('ws-relay-a'), unique('ws-relay-b')];
  await sessionWithTurns(wsA, 'shared', 'title in A', 1);
  await sessionWithTurns(wsB, 'shared', 'title in B', 2);
  const env = app.createEnvironment(httpURL);
  const { SessionDetailQuery, SessionDetail_session: fragment } = artifacts;
  const rootA = await app.loadQuery(env, SessionDetailQuery, { workspaceId: wsA, id: 'shared' });
  const rootB = await app.loadQuery(env, SessionDetailQuery, { workspaceId: wsB, id: 'shared' });

  const a = app.readFragment(env, fragment, rootA.session);
  const b = app.readFragment(env, fragment, rootB.session);
  assert.deepEqual([a.title, a.workspaceId, a.localId], ['title in A', wsA, 'shared']);
  assert.deepEqual([b.title, b.workspaceId, b.localId], ['title in B', wsB, 'shared']);
  assert.notEqual(a.id, b.id);
  // Each session keeps its own turns, though their local ids are the same too.
  assert.deepEqual(turnSequences(a), [1]);
  assert.deepEqual(turnSequences(b), [1, 2]);
  assert.notEqual(a.turns.edges[0].node.id, b.turns.edges[0].node.id);

  const source = env.getStore().getSource();
  const sessions = source
    .getRecordIDs()
    .map((id) => source.get(id))
    .filter((r) => r.__typename === 'Session' && r.localId === 'shared');
  assert.equal(sessions.length, 2, 'the store holds one record per workspace');
  assertNoRelayWarnings();
});

// Issue 27: Relay reads a deferred fragment through the incremental network layer of
// relay/incremental.mjs, which hands it forkgraph's incremental delivery one fragment at a time in
// the shape Relay 21 reads ({data, label, path, extensions.is_final}).
test('relay: a deferred fragment arrives after the first payload through the incremental network layer', async () => {
  const ws = unique('ws-relay');
  await sessionWithTurns(ws, 'deferred', 'deferred capabilities', 3);
  const env = app.createIncrementalEnvironment(httpURL);
  const { SessionCapabilitiesQuery: query, SessionCapabilities_session: fragment } = artifacts;
  const seen = [];
  const data = await app.streamQuery(env, query, { workspaceId: ws, id: 'deferred' }, (d) => {
    seen.push({ title: d.session?.title, missing: app.isMissing(env, fragment, d.session) });
  });
  assert.deepEqual(seen[0], { title: 'deferred capabilities', missing: true }, 'the first payload leaves the fragment for later');
  assert.deepEqual(seen.at(-1), { title: 'deferred capabilities', missing: false });
  const caps = app.readFragment(env, fragment, data.session);
  assert.deepEqual(caps.lifecycleCapabilities, { fork: false, forkThroughTurn: true });
  assert.equal(caps.turns.totalCount, 3);
  assertNoRelayWarnings();
});
