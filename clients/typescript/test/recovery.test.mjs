// Forks whose outcome is uncertain: the server killed mid-fork and started again, a provider
// answer lost (reconcile, abandon), and an operation pending on a turn read at load.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryForkRecordStore } from '../dist/index.js';
import { boundaryFacts, cleanup, gql, seedSession, startServer, tempDir, uniqueWorkspace } from './harness.mjs';
import { boundaryOf, closeClients, newClient } from './lib.mjs';
import { join } from 'node:path';

let server;

before(async () => {
  server = await startServer();
});
after(async () => {
  closeClients();
  await cleanup();
});

const settledOk = (s) => s.status === 'succeeded' && s.ack === 'acknowledged';

describe('uncertain forks', () => {
  test('a server restart mid-fork: the client waits it out, reconciles, and ends with one child', async () => {
    const db = join(tempDir(), 'restart.db');
    let node = await startServer({ db });
    const ws = uniqueWorkspace('restart');
    const s = await seedSession(node.url, { workspaceId: ws, simulated: { latencyMs: 5000 } });
    const client = newClient(node.url, { forkStore: new MemoryForkRecordStore() });
    const handle = await client.forkThroughTurn({ ...boundaryOf(s) });
    const dispatching = await handle.until((st) => st.phase === 'DISPATCHING');
    await node.stop('SIGKILL'); // the provider call is under way when the process dies
    node = await startServer({ db, port: node.port });
    // Start-up recovery marks the dispatch unknown (it never calls the provider again); the
    // client, replaying its request, learns that.
    const uncertain = await handle.until((st) => st.status === 'unknown' && st.error?.code === 'DELIVERY_UNKNOWN' || st.status === 'succeeded');
    assert.equal(uncertain.operationId, dispatching.operationId);
    if (uncertain.status === 'unknown') await handle.reconcile(); // the simulated provider finds the child
    const end = await handle.settled();
    assert.ok(settledOk(end), JSON.stringify(end));
    const facts = await boundaryFacts(node.url, boundaryOf(s));
    assert.equal(facts.operations.length, 1);
    assert.equal(facts.forks.length, 1);
    assert.equal(facts.forks[0].operationId, dispatching.operationId);
    assert.equal(facts.pending, null);
    await node.stop();
  });

  test('an unknown delivery: reconcile asks until found, then the child is acknowledged', async () => {
    const ws = uniqueWorkspace('reconcile');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { fork: 'unknown', reconcileAfter: 1 } });
    const client = newClient(server.url);
    const handle = await client.forkThroughTurn({ ...boundaryOf(s) });
    const unknown = await handle.until((st) => st.status === 'unknown' && st.error?.code === 'DELIVERY_UNKNOWN');
    assert.equal(unknown.phase, 'DELIVERY_UNKNOWN');
    // While unknown, the boundary keeps this identity.
    assert.equal(await client.forkThroughTurn({ ...boundaryOf(s) }), handle);
    const first = await handle.reconcile();
    assert.ok(first.status === 'unknown' || first.status === 'succeeded' || first.status === 'inFlight', first.status);
    if (first.status === 'unknown') await handle.reconcile();
    const end = await handle.settled();
    assert.ok(settledOk(end), JSON.stringify(end));
    assert.equal((await boundaryFacts(server.url, boundaryOf(s))).forks.length, 1);
  });

  test('abandon stops waiting: the attempt fails and the next one starts fresh', async () => {
    const ws = uniqueWorkspace('abandon');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { fork: 'unknown', reconcile: 'unknown' } });
    const client = newClient(server.url);
    const handle = await client.forkThroughTurn({ ...boundaryOf(s) });
    await handle.until((st) => st.status === 'unknown' && st.error?.code === 'DELIVERY_UNKNOWN');
    await assert.rejects(handle.abandon(''), (err) => err.code === 'BAD_USER_INPUT');
    const gone = await handle.abandon('gave up in a test');
    assert.equal(gone.status, 'failed');
    assert.equal(gone.error.reason, 'abandoned');
    const end = await handle.settled();
    assert.equal(end.status, 'failed');
    const next = await client.forkThroughTurn({ ...boundaryOf(s) });
    assert.notEqual(next.state.requestId, end.requestId);
    const again = await next.until((st) => st.status === 'unknown' && st.operationId !== null && st.error?.code === 'DELIVERY_UNKNOWN');
    assert.notEqual(again.operationId, end.operationId);
    await next.abandon('and again');
  });

  test("an operation pending on a turn at load is another client's: shown, not adopted", async () => {
    const ws = uniqueWorkspace('pending');
    const s = await seedSession(server.url, { workspaceId: ws });
    // Another client forks and never acknowledges.
    const theirs = await gql(server.url, `mutation($input: ForkSessionInput!) { forkSession(input: $input) { localId } }`, {
      input: { workspaceId: ws, sourceSessionId: s.sessionId, throughTurnId: s.turnIds[1], requestId: 'other-client' },
    });
    const client = newClient(server.url);
    const graph = client.sessionGraph(ws);
    await graph.loadTurns(s.sessionId);
    const turn = () => graph.getState().turns[s.sessionId].find((t) => t.localId === s.turnIds[1]);
    const pending = await new Promise((resolve) => {
      const check = () => {
        const p = turn()?.pendingForkOperation;
        if (p?.status === 'COMMITTED') {
          off();
          resolve(p);
        }
      };
      const off = graph.subscribe(check);
      check();
    });
    assert.equal(pending.localId, theirs.forkSession.localId);
    assert.equal(await client.resumeFork({ workspaceId: ws, sourceSessionId: s.sessionId, turnId: s.turnIds[1] }), null, 'nothing of ours to resume');
    // Acknowledging it (a person's choice) releases the turn; the graph hears it from the stream.
    await client.acknowledgeOperation(ws, pending.localId);
    await new Promise((resolve) => {
      const check = () => {
        if (turn()?.pendingForkOperation === null) {
          off();
          resolve();
        }
      };
      const off = graph.subscribe(check);
      check();
    });
    graph.close();
  });
});
