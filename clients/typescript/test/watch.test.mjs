// watchWorkspace against the real server: snapshot-then-follow, and every resume (a dropped
// connection, RESUME_REQUIRED, a refused token, a cursor the server no longer takes) picks up
// after the last cursor received, so the events seen equal the durable log: nothing lost, nothing
// twice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, gql, report, seedSession, startProxy, startServer, uniqueWorkspace, until } from './harness.mjs';
import { closeClients, collect, createSSEClient, ids, newClient, noRepeat, truth } from './lib.mjs';
import { documents } from '../dist/index.js';

let server;
let proxy;

before(async () => {
  server = await startServer();
  proxy = await startProxy(server.port);
});
after(async () => {
  closeClients();
  await cleanup();
});

describe('watchWorkspace', () => {
  test('snapshot-then-follow: a change made while the snapshot loads is replayed', async () => {
    const ws = uniqueWorkspace('snapshot');
    await report(server.url, ws, 'before');
    const client = newClient(server.url);
    let snapshotCursor = null;
    const w = collect(client, {
      workspaceId: ws,
      onSnapshot: async (cursor) => {
        snapshotCursor = cursor;
        // Another client reports a session after the cursor was read, before the stream starts.
        await report(server.url, ws, 'during');
      },
    });
    await w.until(() => w.events.some((e) => e.sessionId === 'during'), 'the session reported during the snapshot');
    assert.ok(snapshotCursor);
    assert.ok(!w.events.some((e) => e.sessionId === 'before'), 'what the snapshot had is not replayed');
    await report(server.url, ws, 'live');
    await w.until(() => w.events.some((e) => e.sessionId === 'live'));
    assert.equal(w.watch.status, 'live');
  });

  test('a dropped connection resumes after the last cursor: nothing lost, nothing twice', async () => {
    const ws = uniqueWorkspace('drop');
    await report(server.url, ws, 'first');
    const start = (await gql(server.url, `query($ws: ID!) { workspaceEventCursor(workspaceId: $ws) }`, { ws })).workspaceEventCursor;
    const client = newClient(proxy.url);
    const w = collect(client, { workspaceId: ws, after: start });
    await report(server.url, ws, 'a');
    await w.until(() => w.events.some((e) => e.sessionId === 'a'));
    for (let round = 0; round < 3; round++) {
      assert.ok(proxy.dropWebsockets() > 0, 'a websocket to drop');
      for (let i = 0; i < 4; i++) await report(server.url, ws, `missed-${round}-${i}`);
      await w.until(() => w.events.some((e) => e.sessionId === `missed-${round}-3`), `round ${round}`);
    }
    await report(server.url, ws, 'end');
    await w.until(() => w.events.some((e) => e.sessionId === 'end'));
    assert.ok(w.watch.resumes >= 3, `resumed ${w.watch.resumes} times`);
    noRepeat(ids(w.events));
    assert.deepEqual(ids(w.events), await truth(server.url, ws, 'end', { start }), 'the events seen are the log');
  });

  test('RESUME_REQUIRED: subscribers that fell behind resubscribe after their last cursor', async () => {
    const slow = await startServer({ flags: ['-subscriber-queue', '1'] });
    const slowProxy = await startProxy(slow.port);
    const ws = uniqueWorkspace('lag');
    await report(slow.url, ws, 'first');
    const start = (await gql(slow.url, `query($ws: ID!) { workspaceEventCursor(workspaceId: $ws) }`, { ws })).workspaceEventCursor;
    // Forty watches share one websocket, so every event is forty messages in its send queue.
    const client = newClient(slowProxy.url);
    const watches = Array.from({ length: 40 }, () => collect(client, { workspaceId: ws, after: start }));
    await report(slow.url, ws, 'warm');
    await Promise.all(watches.map((w) => w.until(() => w.events.some((e) => e.sessionId === 'warm'))));
    // The network stalls: the server's send queue fills, its writers wait, and each
    // subscription's one-event queue overflows.
    slowProxy.holdWebsockets();
    for (let i = 0; i < 80; i++) await report(slow.url, ws, `burst-${i}`);
    slowProxy.releaseWebsockets();
    await report(slow.url, ws, 'end');
    await Promise.all(watches.map((w) => w.until(() => w.events.some((e) => e.sessionId === 'end'), 'the end after the lag')));
    const lagged = watches.filter((w) => w.errors.some((e) => e.code === 'RESUME_REQUIRED'));
    assert.ok(lagged.length > 0, `some stream ended with RESUME_REQUIRED (errors: ${watches.flatMap((w) => w.errors.map((e) => e.code))})`);
    const log = await truth(slow.url, ws, 'end', { start });
    for (const w of watches) {
      noRepeat(ids(w.events));
      assert.deepEqual(ids(w.events), log, 'nothing lost across the resume');
    }
    client.close();
    await slowProxy.close();
    await slow.stop();
  });

  test('a refused token (close 4403) is refreshed and the stream resumes; so is an HTTP UNAUTHENTICATED', async () => {
    const ws = uniqueWorkspace('tokens');
    const secured = await startServer({ flags: ['-tokens', `good-token-0123456789=${ws}`] });
    const auth = { authorization: 'Bearer good-token-0123456789' };
    const start = (await gql(secured.url, `query($ws: ID!) { workspaceEventCursor(workspaceId: $ws) }`, { ws }, auth)).workspaceEventCursor;
    // The provider's cached token is stale (expired) until it is asked for a fresh one.
    let fresh = false;
    const calls = [];
    const token = ({ forceRefresh }) => {
      calls.push(forceRefresh);
      if (forceRefresh) fresh = true;
      return fresh ? 'good-token-0123456789' : 'stale-token';
    };
    const client = newClient(secured.url, { token });
    const w = collect(client, { workspaceId: ws, after: start });
    await report(secured.url, ws, 'after-refresh', {}, auth);
    await w.until(() => w.events.some((e) => e.sessionId === 'after-refresh'), 'an event after the refresh');
    assert.equal(w.errors[0]?.code, 'CONNECTION_FORBIDDEN', `the stale token was refused: ${w.errors.map((e) => e.code)}`);
    assert.deepEqual(calls.slice(0, 2), [false, true], 'the provider was asked to refresh');
    assert.deepEqual(ids(w.events), await truth(secured.url, ws, 'after-refresh', { start, token: 'good-token-0123456789' }));

    fresh = false; // the token went stale again: an HTTP request refreshes it and is sent again
    calls.length = 0;
    const data = await client.request(documents.WorkspaceEventCursorDocument, { workspaceId: ws });
    assert.ok(data.workspaceEventCursor);
    assert.deepEqual(calls, [false, true]);
    await secured.stop();
  });

  test('a cursor the server refuses runs the snapshot step again with a fresh cursor', async () => {
    const ws = uniqueWorkspace('bad-cursor');
    const client = newClient(server.url);
    const snapshots = [];
    const w = collect(client, { workspaceId: ws, after: 'not-a-cursor', onSnapshot: (c) => void snapshots.push(c) });
    await until(() => snapshots.length === 1, { what: 'a new snapshot' });
    assert.equal(w.errors[0].code, 'BAD_USER_INPUT');
    assert.equal(w.errors[0].reason, 'invalid_cursor');
    await report(server.url, ws, 'after');
    await w.until(() => w.events.some((e) => e.sessionId === 'after'));
  });

  test('over server-sent events (graphql-sse), with the same resume after a cut', async () => {
    const ws = uniqueWorkspace('sse');
    const client = newClient(proxy.url, { subscriptions: 'sse', sseClient: createSSEClient });
    const start = (await gql(server.url, `query($ws: ID!) { workspaceEventCursor(workspaceId: $ws) }`, { ws })).workspaceEventCursor;
    const w = collect(client, { workspaceId: ws, after: start });
    await report(server.url, ws, 'one');
    await w.until(() => w.events.some((e) => e.sessionId === 'one'));
    for (let round = 0; round < 2; round++) {
      assert.ok(proxy.dropStreams() > 0, 'an event stream to cut');
      await report(server.url, ws, `missed-${round}`);
      await w.until(() => w.events.some((e) => e.sessionId === `missed-${round}`), `round ${round}`);
    }
    await report(server.url, ws, 'end');
    await w.until(() => w.events.some((e) => e.sessionId === 'end'));
    assert.ok(w.watch.resumes >= 2);
    noRepeat(ids(w.events));
    assert.deepEqual(ids(w.events), await truth(server.url, ws, 'end', { start }));
    // A fork followed over SSE (forkOperationUpdated is a stream of its own).
    const s = await seedSession(server.url, { workspaceId: ws });
    const end = await (await client.forkThroughTurn({ workspaceId: ws, sessionId: s.sessionId, turnId: s.turnIds[1] })).settled();
    assert.equal(end.ack, 'acknowledged');
  });
});
