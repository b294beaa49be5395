// The fork saga against the real server: one call, one child, one acknowledgement, whatever the
// network, the page or the other tabs do in between.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryForkRecordStore, WebStorageForkRecordStore, ForkgraphError } from '../dist/index.js';
import { boundaryFacts, cleanup, gql, runs, seedSession, setScript, startProxy, startServer, uniqueWorkspace } from './harness.mjs';
import { MapStorage, boundaryOf, closeClients, newClient } from './lib.mjs';

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

const settledOk = (s) => s.status === 'succeeded' && s.ack === 'acknowledged';

/** oneChild asserts the boundary holds exactly one operation, which made the one fork, acknowledged. */
async function assertOneChild(b, state) {
  const facts = await boundaryFacts(server.url, b);
  assert.equal(facts.operations.length, 1, `one operation on the boundary: ${JSON.stringify(facts.operations)}`);
  const [op] = facts.operations;
  assert.equal(op.status, 'COMMITTED');
  assert.ok(op.acknowledgedAt, 'the operation was acknowledged');
  assert.deepEqual(facts.forks, [{ operationId: op.localId, targetSessionId: op.targetSessionId }], 'one child');
  assert.equal(facts.pending, null, 'the barrier is released');
  assert.equal(state.operationId, op.localId);
  assert.equal(state.requestId, op.requestId);
  assert.equal(state.targetSessionId, op.targetSessionId);
  return op;
}

describe('forkThroughTurn', () => {
  test('happy path: follows every phase over the stream, adopts the child, acknowledges once', async () => {
    const ws = uniqueWorkspace('happy');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { latencyMs: 400 } });
    const client = newClient(proxy.url);
    const seenBefore = proxy.seen.length;
    const handle = await client.forkThroughTurn({ ...boundaryOf(s) });
    const phases = new Set();
    handle.subscribe((st) => st.phase && phases.add(st.phase));
    const end = await handle.settled();
    assert.ok(settledOk(end), JSON.stringify(end));
    assert.ok(phases.has('DISPATCHING') && phases.has('COMMITTED'), `phases seen: ${[...phases]}`);
    assert.equal(end.child.localId, end.targetSessionId);
    assert.equal(end.child.forkedFrom.sourceTurnId, s.turnIds[1]);
    assert.equal(end.adopted, false);
    await assertOneChild(boundaryOf(s), end);
    const acks = proxy.seen.slice(seenBefore).filter((r) => runs('acknowledgeForkOperation')(r.body));
    assert.equal(acks.length, 1, 'one acknowledgement request');
    // The record is done: the next call on the boundary is a new, explicit branch with fresh ids.
    const again = await client.forkThroughTurn({ ...boundaryOf(s) });
    assert.notEqual(again, handle);
    assert.notEqual(again.state.requestId, end.requestId);
    const second = await again.settled();
    assert.ok(settledOk(second));
    assert.notEqual(second.operationId, end.operationId);
    assert.equal((await boundaryFacts(server.url, boundaryOf(s))).forks.length, 2);
  });

  test('the POST is cut after the server received it: same identity again, one child', async () => {
    const ws = uniqueWorkspace('cut');
    const s = await seedSession(server.url, { workspaceId: ws });
    const client = newClient(proxy.url);
    const start = proxy.seen.length;
    proxy.rule(runs('forkSession'), 'cut', 1);
    const handle = await client.forkThroughTurn({ ...boundaryOf(s) });
    const unknown = await handle.until((st) => st.error?.code === 'REQUEST_UNKNOWN' || settledOk(st));
    const end = await handle.settled();
    assert.ok(settledOk(end), JSON.stringify(end));
    const posts = proxy.seen.slice(start).filter((r) => runs('forkSession')(r.body));
    assert.ok(posts.length >= 2, 'the request was sent again');
    assert.equal(posts[0].action, 'cut');
    assert.ok(posts.every((p) => p.body.variables.input.requestId === posts[0].body.variables.input.requestId), 'every retry has the same requestId');
    assert.ok(posts.every((p) => p.body.variables.input.targetSessionId === posts[0].body.variables.input.targetSessionId), 'and the same target');
    assert.equal(unknown.requestId, posts[0].body.variables.input.requestId);
    await assertOneChild(boundaryOf(s), end);
  });

  test('the child seen on the workspace stream before the POST answer is acknowledged once', async () => {
    const ws = uniqueWorkspace('early-child');
    const s = await seedSession(server.url, { workspaceId: ws });
    const client = newClient(proxy.url, { forkTiming: { requestRetryDelaysMs: [1500] } });
    const events = [];
    await new Promise((resolve) => {
      client.watchWorkspace({ workspaceId: ws, onEvent: (e) => events.push(e), onStatus: (st) => st === 'live' && resolve() });
    });
    const start = proxy.seen.length;
    proxy.rule(runs('forkSession'), 'cut', 1);
    const handle = await client.forkThroughTurn({ ...boundaryOf(s) });
    // The answer was cut and the retry waits 1.5 s: the commit reaches us through the stream.
    const seen = await handle.until((st) => st.status === 'succeeded');
    const end = await handle.settled();
    const carries = (e) => e.session?.localId === seen.targetSessionId || e.forkOperation?.session?.localId === seen.targetSessionId;
    // The operation's update and the child's upsert are two events: the handle may settle on the
    // first while the second is still on its way (seen once in CI under load), so await it, bounded.
    for (const deadline = Date.now() + 5000; !events.some(carries) && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(events.some(carries), 'the child came from the stream');
    const posts = proxy.seen.slice(start).filter((r) => runs('forkSession')(r.body));
    assert.equal(posts.length, 1, 'the child proved the fork: the cut request was not needed again');
    assert.ok(settledOk(end));
    await assertOneChild(boundaryOf(s), end);
    const acks = proxy.seen.slice(start).filter((r) => runs('acknowledgeForkOperation')(r.body));
    assert.equal(acks.length, 1, 'a late POST answer or a repeated upsert sends no second acknowledgement');
  });

  test('a page reload mid-fork resumes the stored attempt instead of forking again', async () => {
    const ws = uniqueWorkspace('reload');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { latencyMs: 1500 } });
    const storage = new MapStorage(); // one origin's localStorage, kept across the reload
    const first = newClient(proxy.url, { forkStore: new WebStorageForkRecordStore(storage) });
    const handle = await first.forkThroughTurn({ ...boundaryOf(s) });
    const mid = await handle.until((st) => st.phase === 'DISPATCHING');
    await first.flushed();
    first.close(); // the page goes away mid-fork

    const second = newClient(proxy.url, { forkStore: new WebStorageForkRecordStore(storage) });
    const resumed = await second.resumeForks({ workspaceId: ws });
    assert.equal(resumed.length, 1);
    assert.equal(resumed[0].state.requestId, mid.requestId, 'the same identity');
    assert.equal(await second.forkThroughTurn({ ...boundaryOf(s) }), resumed[0], 'a click meanwhile joins the attempt');
    const end = await resumed[0].settled();
    assert.ok(settledOk(end), JSON.stringify(end));
    assert.equal(end.operationId, mid.operationId);
    await assertOneChild(boundaryOf(s), end);
    const stored = JSON.parse(storage.getItem(storage.key(0)));
    assert.equal(stored.ack, 'acknowledged');
  });

  test('a fork with another model: the child has it; a reload resends the stored target, never its environment', async () => {
    const ws = uniqueWorkspace('target');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { latencyMs: 1500, models: ['gpt-a', 'gpt-b'] } });
    const storage = new MapStorage();
    const first = newClient(proxy.url, { forkStore: new WebStorageForkRecordStore(storage) });
    const target = { settings: { model: 'gpt-b' }, cwd: '/prepared', environment: [{ name: 'API_TOKEN', value: 'env-secret-7c41' }] };
    const handle = await first.forkThroughTurn({ ...boundaryOf(s), target });
    const mid = await handle.until((st) => st.phase === 'DISPATCHING');
    await first.flushed();
    first.close();
    const kept = storage.getItem(storage.key(0));
    assert.ok(kept.includes('gpt-b'), kept);
    assert.ok(!kept.includes('env-secret-7c41'), 'the environment is not stored in the browser');

    const start = proxy.seen.length;
    const second = newClient(proxy.url, { forkStore: new WebStorageForkRecordStore(storage) });
    const [resumed] = await second.resumeForks({ workspaceId: ws });
    const end = await resumed.settled();
    assert.ok(settledOk(end), JSON.stringify(end));
    assert.equal(end.operationId, mid.operationId, 'the resent target is the same request');
    await assertOneChild(boundaryOf(s), end);
    const resent = proxy.seen.slice(start).find((r) => runs('forkSession')(r.body));
    assert.deepEqual(resent.body.variables.input.target, { settings: { model: 'gpt-b' }, cwd: '/prepared' });
    const data = await gql(server.url, 'query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { model cwd settings } }',
      { ws, id: end.targetSessionId });
    assert.equal(data.session.model, 'gpt-b');
    assert.equal(data.session.cwd, '/prepared');
    assert.equal(data.session.settings.model, 'gpt-b');
  });

  test('a reload while the POST answer was lost: the next page sends the stored identity', async () => {
    const ws = uniqueWorkspace('reload-cut');
    const s = await seedSession(server.url, { workspaceId: ws });
    const storage = new MapStorage();
    const first = newClient(proxy.url, { forkStore: new WebStorageForkRecordStore(storage), forkTiming: { requestRetryDelaysMs: [60000] } });
    const start = proxy.seen.length;
    proxy.rule(runs('forkSession'), 'cut', 1);
    const handle = await first.forkThroughTurn({ ...boundaryOf(s) });
    const lost = await handle.until((st) => st.error?.code === 'REQUEST_UNKNOWN');
    assert.equal(lost.operationId, null, 'the client never heard of the operation');
    await first.flushed();
    first.close();

    const second = newClient(server.url, { forkStore: new WebStorageForkRecordStore(storage) });
    const again = await second.forkThroughTurn({ ...boundaryOf(s) });
    assert.equal(again.state.requestId, lost.requestId);
    const end = await again.settled();
    assert.ok(settledOk(end));
    const cut = proxy.seen.slice(start).find((r) => runs('forkSession')(r.body));
    assert.equal(cut.body.variables.input.requestId, end.requestId);
    await assertOneChild(boundaryOf(s), end);
  });

  test('an acknowledgement that fails twice is retried with back-off until it succeeds', async () => {
    const ws = uniqueWorkspace('ack');
    const s = await seedSession(server.url, { workspaceId: ws });
    const client = newClient(proxy.url);
    const start = proxy.seen.length;
    proxy.rule(runs('acknowledgeForkOperation'), 'refuse', 2);
    const handle = await client.forkThroughTurn({ ...boundaryOf(s) });
    const acks = [];
    handle.subscribe((st) => acks.push(st.ack));
    const end = await handle.settled();
    assert.ok(settledOk(end), JSON.stringify(end));
    assert.equal(end.ackAttempts, 2, 'two failed attempts were counted');
    const sent = proxy.seen.slice(start).filter((r) => runs('acknowledgeForkOperation')(r.body));
    assert.deepEqual(sent.map((r) => r.action), ['refuse', 'refuse', 'forward'], 'two refused, the third reached the server');
    assert.ok(sent.every((r) => r.body.variables.id === end.operationId), 'every attempt names the same operation');
    assert.ok(acks.includes('pending') && acks.at(-1) === 'acknowledged');
    await assertOneChild(boundaryOf(s), end);
    // Released: a new fork on the boundary makes a second operation.
    const next = await (await client.forkThroughTurn({ ...boundaryOf(s) })).settled();
    assert.ok(settledOk(next));
    assert.notEqual(next.operationId, end.operationId);
  });

  test('a pending acknowledgement does not block forks of other turns', async () => {
    const ws = uniqueWorkspace('ack-other');
    const s = await seedSession(server.url, { workspaceId: ws, turns: 2 });
    const client = newClient(proxy.url, { forkTiming: { ackRetryDelaysMs: [60000] } });
    proxy.rule(runs('acknowledgeForkOperation'), 'refuse', 1);
    const first = await client.forkThroughTurn({ ...boundaryOf(s, 1) });
    const waiting = await first.until((st) => st.ack === 'pending' && st.ackAttempts === 1);
    assert.equal(await client.forkThroughTurn({ ...boundaryOf(s, 1) }), first, 'the same turn rejoins the attempt');
    const other = await (await client.forkThroughTurn({ ...boundaryOf(s, 0) })).settled();
    assert.ok(settledOk(other), 'another turn forks meanwhile');
    assert.equal(first.state.ack, 'pending');
    const done = await first.acknowledge(); // "retry now" instead of in a minute
    assert.equal(done.ack, 'acknowledged');
    assert.equal(done.operationId, waiting.operationId);
  });

  test('a confirmed failure lets the next attempt start fresh, with new ids and a new operation', async () => {
    const ws = uniqueWorkspace('failed');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { fork: 'rejected', error: 'no, scripted' } });
    const client = newClient(proxy.url);
    const failed = await (await client.forkThroughTurn({ ...boundaryOf(s) })).settled();
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error.code, 'FORK_FAILED');
    assert.match(failed.error.message, /no, scripted/);
    assert.ok(failed.operationId);

    await setScript(server.url, s, {});
    const retry = await client.forkThroughTurn({ ...boundaryOf(s) });
    assert.notEqual(retry.state.requestId, failed.requestId, 'a fresh request id');
    assert.notEqual(retry.state.targetSessionId, failed.targetSessionId, 'a fresh target id');
    const end = await retry.settled();
    assert.ok(settledOk(end));
    assert.notEqual(end.operationId, failed.operationId);
    const facts = await boundaryFacts(server.url, boundaryOf(s));
    assert.deepEqual(facts.operations.map((o) => o.status).sort(), ['COMMITTED', 'FAILED']);
    assert.equal(facts.forks.length, 1);
  });

  test('a boundary the server refuses is a failed attempt with its code; nothing is created', async () => {
    const ws = uniqueWorkspace('refused');
    const s = await seedSession(server.url, { workspaceId: ws });
    const client = newClient(proxy.url);
    const end = await (await client.forkThroughTurn({ workspaceId: ws, sessionId: s.sessionId, turnId: 'no-such-turn' })).settled();
    assert.equal(end.status, 'failed');
    assert.equal(end.error.code, 'FORK_CONFLICT');
    assert.equal(end.error.reason, 'turn_not_found');
    assert.equal(end.operationId, null);
    assert.equal((await boundaryFacts(server.url, { workspaceId: ws, sessionId: s.sessionId, turnId: 'no-such-turn' })).operations.length, 0);
  });

  test('what the caller read is checked first: no capability, or a turn in recovery, sends nothing', async () => {
    const client = newClient(proxy.url);
    const start = proxy.seen.length;
    const b = { workspaceId: uniqueWorkspace('precheck'), sessionId: 's', turnId: 't' };
    const session = { kind: 'ROOT', deletedAt: null, lifecycleCapabilities: { forkThroughTurn: false } };
    const turn = { phase: 'SETTLED', providerForkBindingAvailable: true, providerForkBindingState: 'BOUND' };
    await assert.rejects(client.forkThroughTurn({ ...b, session, turn }), (err) => err instanceof ForkgraphError && err.code === 'FORK_NOT_ALLOWED' && err.reason === 'fork_through_turn_unsupported');
    const recovering = { phase: 'SETTLED', providerForkBindingAvailable: false, providerForkBindingState: 'RECOVERY_REQUIRED' };
    await assert.rejects(client.forkThroughTurn({ ...b, session: { ...session, lifecycleCapabilities: { forkThroughTurn: true } }, turn: recovering }), (err) => err.reason === 'recovery_required');
    assert.equal(proxy.seen.length, start, 'no request was sent');
    assert.equal(await client.forkRecord({ workspaceId: b.workspaceId, sourceSessionId: 's', turnId: 't' }), null, 'no record was written');
  });

  test('two tabs forking one boundary at once make one operation (shared store, and separate ones)', async () => {
    for (const shared of [true, false]) {
      const ws = uniqueWorkspace(shared ? 'tabs-shared' : 'tabs-separate');
      const s = await seedSession(server.url, { workspaceId: ws, simulated: { latencyMs: 200 } });
      const store = new MemoryForkRecordStore();
      const a = newClient(proxy.url, { forkStore: shared ? store : new MemoryForkRecordStore() });
      const b = newClient(proxy.url, { forkStore: shared ? store : new MemoryForkRecordStore() });
      const [ha, hb] = await Promise.all([a.forkThroughTurn({ ...boundaryOf(s) }), b.forkThroughTurn({ ...boundaryOf(s) })]);
      const [ea, eb] = await Promise.all([ha.settled(), hb.settled()]);
      assert.ok(settledOk(ea) && settledOk(eb), `${JSON.stringify(ea)} ${JSON.stringify(eb)}`);
      assert.equal(ea.operationId, eb.operationId, 'both tabs follow one operation');
      assert.equal(ea.targetSessionId, eb.targetSessionId);
      const op = await assertOneChild(boundaryOf(s), ea);
      // The tab whose request lost the race adopted the winner's identity.
      assert.ok([ea, eb].some((e) => e.requestId === op.requestId));
      if (!shared) assert.ok(ea.adopted || eb.adopted, 'one tab adopted the other tab\'s operation');
    }
  });
});
