// A client disconnected mid-stream resumes workspaceEvents(after: <last cursor>) and receives
// every event it missed, in order, exactly once, then live events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { wsURL, unique, REPORT_SESSION, REPORT_TURN, WORKSPACE_EVENTS } from './lib.mjs';

/** stream subscribes to workspaceEvents and lets the test await the n-th event. */
function stream(client, variables) {
  const events = [];
  let waiters = [];
  let failure = null;
  const notify = () => { waiters = waiters.filter((w) => !w()); };
  client.subscribe({ query: WORKSPACE_EVENTS, variables }, {
    next: (r) => { if (r.errors) failure = new Error(JSON.stringify(r.errors)); else events.push(r.data.workspaceEvents); notify(); },
    error: (e) => { failure = e instanceof Error ? e : new Error(JSON.stringify(e)); notify(); },
    complete: () => notify(),
  });
  const until = (predicate) => new Promise((resolve, reject) => {
    const check = () => {
      if (failure) { reject(failure); return true; }
      if (predicate(events)) { resolve(events); return true; }
      return false;
    };
    if (!check()) waiters.push(check);
  });
  return { events, until };
}

const newClient = () => createClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0 });

test('a client disconnected mid-stream resumes with after: <last cursor>, losing and repeating nothing', async () => {
  const ws = unique('ws-resume');
  const session = unique('session');
  const writer = newClient();
  const mutate = (query, variables) => new Promise((resolve, reject) => {
    let data;
    writer.subscribe({ query, variables }, {
      next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : (data = r.data)),
      error: reject,
      complete: () => resolve(data),
    });
  });
  let turns = 0;
  const reportTurn = () => { turns += 1; const id = `${session}-t${turns}`; return mutate(REPORT_TURN, { ws, session, id, providerTurn: `p-${id}` }); };
  const marker = (id) => mutate(REPORT_SESSION, { ws, id, providerSession: `p-${id}` });

  // A live subscriber; report sessions until it has seen one, so it is known to be subscribed.
  const first = newClient();
  const live = stream(first, { ws });
  await mutate(REPORT_SESSION, { ws, id: session, providerSession: `p-${session}` });
  for (let i = 0; live.events.length === 0 && i < 50; i++) {
    await marker(unique('probe'));
    await new Promise((r) => setTimeout(r, 100)); // external server: poll with a deadline
  }
  assert.ok(live.events.length > 0, 'the live subscription never received an event');
  const start = live.events[0].cursor;

  for (let i = 0; i < 4; i++) await reportTurn();
  await live.until((evs) => evs.filter((e) => e.kind === 'TURN_UPSERTED').length >= 4);
  const seenBefore = [...live.events];
  const lastCursor = seenBefore.at(-1).cursor;
  first.terminate(); // drop the socket mid-stream, as a network failure would

  for (let i = 0; i < 5; i++) await reportTurn(); // missed while disconnected
  const second = newClient();
  const resumed = stream(second, { ws, after: lastCursor });
  for (let i = 0; i < 3; i++) await reportTurn(); // live after the resume
  const end = unique('end');
  await marker(end);
  await resumed.until((evs) => evs.some((e) => e.sessionId === end));

  // The durable log from the first event on is the truth.
  const third = newClient();
  const truth = stream(third, { ws, after: start });
  await truth.until((evs) => evs.some((e) => e.sessionId === end));

  const received = [...seenBefore.slice(1), ...resumed.events].map((e) => e.cursor);
  assert.deepEqual(received, truth.events.map((e) => e.cursor), 'events before the drop + after the resume = the log');
  assert.equal(new Set(received).size, received.length, 'no event twice');
  assert.ok(resumed.events.filter((e) => e.kind === 'TURN_UPSERTED').length >= 8, 'the missed and the live turns arrived');

  const fourth = newClient();
  await assert.rejects(stream(fourth, { ws, after: 'not-a-cursor' }).until(() => false), /cursor/i,
    'an unknown cursor is a clear error');
  fourth.dispose();
  second.dispose();
  third.dispose();
  writer.dispose();
});
