// The session graph and the React bindings against the real server: sessions with their
// forkability kept live, fork buttons that appear and disappear with turn events, and the fork
// flow driven by useForkThroughTurn, and useWorkspaceEvents through a revoked token and resume()
// (rendered with react-test-renderer, no DOM).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createElement } from 'react';
import TestRenderer from 'react-test-renderer';
import { ForkgraphProvider, useForkThroughTurn, useSessionGraph, useWorkspaceEvents } from '../dist/react/index.js';
import { CredentialError, MemoryForkRecordStore } from '../dist/index.js';
import { boundaryFacts, cleanup, eventCursor, gql, report, seedSession, startServer, tokensFile, uniqueWorkspace, until } from './harness.mjs';
import { closeClients, ids, newClient, noRepeat, truth } from './lib.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  closeClients();
  await cleanup();
});

const REPORT_TURN = `mutation($input: ReportTurnInput!) { reportTurn(input: $input) { localId } }`;

/** graphUntil awaits a session graph state that satisfies predicate. */
function graphUntil(graph, predicate, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}`));
    }, 15000);
    const check = () => {
      const s = graph.getState();
      if (!predicate(s)) return;
      clearTimeout(timer);
      off();
      resolve(s);
    };
    const off = graph.subscribe(check);
    check();
  });
}

describe('session graph', () => {
  test('sessions with forkability, and a fork button that appears when a turn settles', async () => {
    const ws = uniqueWorkspace('graph');
    const s = await seedSession(server.url, { workspaceId: ws, turns: 1 });
    const client = newClient(server.url);
    const graph = client.sessionGraph(ws);
    const loaded = await graphUntil(graph, (st) => st.loaded && st.sessions[s.sessionId], 'the snapshot');
    const session = loaded.sessions[s.sessionId];
    assert.equal(session.lifecycleCapabilities.forkThroughTurn, true);
    assert.equal(session.latestTurn.providerForkBindingAvailable, true);
    await graph.loadTurns(s.sessionId);

    // Another client reports a running turn: no button; it settles: a button.
    const input = { workspaceId: ws, sessionId: s.sessionId, id: `${s.sessionId}-t9`, phase: 'RUNNING' };
    await gql(server.url, REPORT_TURN, { input });
    const running = await graphUntil(graph, (st) => st.turns[s.sessionId]?.some((t) => t.localId === input.id), 'the running turn');
    const t9 = running.turns[s.sessionId].find((t) => t.localId === input.id);
    assert.equal(t9.providerForkBindingAvailable, false);
    assert.equal(running.sessions[s.sessionId].latestTurn.localId, input.id);
    await gql(server.url, REPORT_TURN, { input: { ...input, phase: 'SETTLED', outcome: 'COMPLETED', providerTurnId: 'p-t9', providerTurnBinding: { turn: 9 } } });
    await graphUntil(graph, (st) => st.turns[s.sessionId]?.find((t) => t.localId === input.id)?.providerForkBindingAvailable === true, 'the button');

    // A fork's child appears in the graph with its lineage.
    const end = await (await client.forkThroughTurn({ workspaceId: ws, sessionId: s.sessionId, turnId: input.id })).settled();
    const withChild = await graphUntil(graph, (st) => st.sessions[end.targetSessionId], 'the child');
    assert.equal(withChild.sessions[end.targetSessionId].forkedFrom.sourceTurnId, input.id);
    assert.ok(withChild.order.indexOf(end.targetSessionId) > withChild.order.indexOf(s.sessionId));
    graph.close();
  });
});

/** render mounts element and returns the latest value its probe reported. */
function mount(element) {
  let renderer;
  TestRenderer.act(() => {
    renderer = TestRenderer.create(element);
  });
  return renderer;
}

describe('React bindings', () => {
  test('useSessionGraph + useForkThroughTurn: the button forks, follows, acknowledges, and comes back', async () => {
    globalThis.IS_REACT_ACT_ENVIRONMENT = false; // the server drives updates, not act()
    const ws = uniqueWorkspace('react');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { latencyMs: 300 } });
    const store = new MemoryForkRecordStore();
    const client = newClient(server.url, { forkStore: store });
    const seen = { graph: null, fork: null, events: null };
    function TurnButton({ turn, session }) {
      seen.fork = useForkThroughTurn(turn, { session });
      return null;
    }
    function App() {
      const graph = useSessionGraph(undefined, { turnsOf: [s.sessionId] });
      seen.graph = graph;
      seen.events = useWorkspaceEvents();
      const turn = graph.turns[s.sessionId]?.find((t) => t.localId === s.turnIds[1]) ?? null;
      return turn ? createElement(TurnButton, { turn, session: graph.sessions[s.sessionId] }) : null;
    }
    const renderer = mount(createElement(ForkgraphProvider, { client, workspaceId: ws }, createElement(App)));
    await until(() => seen.fork?.canFork, { what: 'an enabled fork button' });
    await seen.fork.fork();
    await until(() => seen.fork.forking || seen.fork.state?.status === 'succeeded', { what: 'forking' });
    assert.equal(seen.fork.canFork, false, 'no second fork while one runs');
    await until(() => seen.fork.state?.ack === 'acknowledged', { what: 'acknowledged' });
    const child = seen.fork.state.targetSessionId;
    await until(() => seen.graph.sessions[child], { what: 'the child in the graph' });
    await until(() => seen.fork.canFork, { what: 'the button back' });
    assert.ok(seen.events.lastEvent, 'useWorkspaceEvents saw events');
    const facts = await boundaryFacts(server.url, { workspaceId: ws, sessionId: s.sessionId, turnId: s.turnIds[1] });
    assert.equal(facts.forks.length, 1);
    TestRenderer.act(() => renderer.unmount());
  });

  test("a reload mid-fork: the new page's hook shows the running attempt and finishes it", async () => {
    globalThis.IS_REACT_ACT_ENVIRONMENT = false;
    const ws = uniqueWorkspace('react-reload');
    const s = await seedSession(server.url, { workspaceId: ws, simulated: { latencyMs: 1000 } });
    const store = new MemoryForkRecordStore();
    const first = newClient(server.url, { forkStore: store });
    const handle = await first.forkThroughTurn({ workspaceId: ws, sessionId: s.sessionId, turnId: s.turnIds[1] });
    const mid = await handle.until((st) => st.phase === 'DISPATCHING');
    await first.flushed();
    first.close();

    const second = newClient(server.url, { forkStore: store });
    const seen = {};
    function App() {
      const graph = useSessionGraph(undefined, { turnsOf: [s.sessionId] });
      const turn = graph.turns[s.sessionId]?.find((t) => t.localId === s.turnIds[1]) ?? null;
      seen.fork = useForkThroughTurn(turn);
      return null;
    }
    const renderer = mount(createElement(ForkgraphProvider, { client: second, workspaceId: ws }, createElement(App)));
    await until(() => seen.fork?.state?.requestId === mid.requestId, { what: 'the resumed attempt' });
    assert.equal(seen.fork.pending, null, 'its own operation is not shown as someone else\'s');
    await until(() => seen.fork.state.ack === 'acknowledged', { what: 'acknowledged after the reload' });
    assert.equal(seen.fork.state.operationId, mid.operationId);
    TestRenderer.act(() => renderer.unmount());
  });

  test('loadTurns reads every message of a long turn, page by page through messagesConnection', async () => {
    const ws = uniqueWorkspace('long-turn');
    const s = await seedSession(server.url, { workspaceId: ws, turns: 2 });
    const messages = Array.from({ length: 300 }, (_, i) => ({ id: `long-${i}`, role: 'ASSISTANT', content: `line ${i}` }));
    await gql(server.url, `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`,
      { input: { workspaceId: ws, sessionId: s.sessionId, turnId: s.turnIds[0], messages } });
    const client = newClient(server.url);
    const graph = client.sessionGraph(ws);
    const turns = await graph.loadTurns(s.sessionId);
    assert.deepEqual(turns.map((t) => t.localId), s.turnIds);
    assert.equal(turns[0].messages.length, 302, 'the seeded two and the 300 appended, past the first page of 50');
    assert.deepEqual(turns[0].messages.slice(0, 3).map((m) => m.localId), [`${s.turnIds[0]}-u`, `${s.turnIds[0]}-a`, 'long-0']);
    assert.equal(turns[0].messages.at(-1).localId, 'long-299');
    assert.deepEqual(turns[1].messages.map((m) => m.content), ['question 2', 'answer 2']);
    graph.close();
  });

  test('useWorkspaceEvents: events and cursor live; a revoked token shows unauthenticated with its CredentialError, and resume() replays the gap', async () => {
    globalThis.IS_REACT_ACT_ENVIRONMENT = false;
    const ws = uniqueWorkspace('react-events');
    const writerToken = 'react-writer-0123456789abcdef';
    const tokens = tokensFile([`writer ${writerToken} ${ws} all`, `viewer react-viewer-old-0123456789 ${ws} read`]);
    const writeTokens = tokens.write;
    const secured = await startServer({ flags: ['-tokens-file', tokens.path, '-tokens-file-poll', '50ms'] });
    const writer = { authorization: `Bearer ${writerToken}` };
    const start = await eventCursor(secured.url, ws, writer);
    let issued = 'react-viewer-old-0123456789';
    const client = newClient(secured.url, { token: () => issued });
    const seen = { events: [], hook: null };
    function Events() {
      seen.hook = useWorkspaceEvents({ after: start, onEvent: (e) => seen.events.push(e) });
      return null;
    }
    const renderer = mount(createElement(ForkgraphProvider, { client, workspaceId: ws }, createElement(Events)));
    await report(secured.url, ws, 'one', {}, writer);
    await until(() => seen.hook?.lastEvent?.sessionId === 'one', { what: 'the first event in the hook' });
    assert.equal(seen.hook.status, 'live');
    assert.equal(seen.hook.cursor, seen.events.at(-1).cursor);

    writeTokens([`writer ${writerToken} ${ws} all`]);
    await until(() => seen.hook.status === 'unauthenticated', { what: 'the hook to say unauthenticated' });
    assert.ok(seen.hook.error instanceof CredentialError, `the hook's error is a CredentialError: ${seen.hook.error}`);
    assert.equal(seen.hook.error.code, 'TOKEN_REVOKED');
    await report(secured.url, ws, 'missed', {}, writer);

    writeTokens([`writer ${writerToken} ${ws} all`, `viewer react-viewer-new-0123456789 ${ws} read`]);
    await until(() => gql(secured.url, `{ viewer { subject } }`, {}, { authorization: 'Bearer react-viewer-new-0123456789' }).then(() => true, () => false), { what: 'the new token taken' });
    issued = 'react-viewer-new-0123456789';
    seen.hook.resume();
    await until(() => seen.hook.lastEvent?.sessionId === 'missed', { what: 'the gap replayed after resume()' });
    await report(secured.url, ws, 'end', {}, writer);
    await until(() => seen.hook.lastEvent?.sessionId === 'end' && seen.hook.status === 'live', { what: 'live again' });
    assert.equal(seen.hook.error, null, 'the error is cleared by the next event');
    noRepeat(ids(seen.events));
    assert.deepEqual(ids(seen.events), await truth(secured.url, ws, 'end', { start, token: writerToken }));
    TestRenderer.act(() => renderer.unmount());
    client.close();
    await secured.stop();
  });
});
