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
  const load = async (name) => (await import(`./relay/__generated__/${name}.graphql.js`)).default;
  artifacts = {};
  for (const name of ['SessionListQuery', 'SessionList_query']) {
    artifacts[name] = await load(name);
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
