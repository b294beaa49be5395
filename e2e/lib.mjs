// Shared helpers for the e2e suites: server URLs, unique ids, the fork flow every client runs.
import assert from 'node:assert/strict';

export const base = process.env.FORKGRAPH_URL ?? 'http://127.0.0.1:8080';
export const httpURL = `${base}/graphql`;
export const wsURL = httpURL.replace(/^http/, 'ws');

let counter = 0;
/** unique returns an id no other test of this run uses. */
export function unique(prefix) {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

export const REPORT_SESSION = `mutation ReportSession($ws: ID!, $id: ID!, $providerSession: String!, $title: String) {
  reportSession(input: {workspaceId: $ws, id: $id, provider: "simulated", providerSessionId: $providerSession, title: $title}) { id }
}`;
export const REPORT_TURN = `mutation ReportTurn($ws: ID!, $session: ID!, $id: ID!, $providerTurn: String!) {
  reportTurn(input: {workspaceId: $ws, sessionId: $session, id: $id, phase: SETTLED, outcome: COMPLETED,
    providerTurnId: $providerTurn, providerTurnBinding: {simulated: true}}) { id phase }
}`;
export const APPEND_MESSAGES = `mutation AppendMessages($ws: ID!, $session: ID!, $turn: ID!, $q: String!, $a: String!) {
  appendMessages(input: {workspaceId: $ws, sessionId: $session, turnId: $turn,
    messages: [{role: USER, content: $q}, {role: ASSISTANT, content: $a}]}) { id }
}`;
export const FORK_SESSION = `mutation ForkSession($ws: ID!, $source: ID!, $turn: ID!, $request: ID!) {
  forkSession(input: {workspaceId: $ws, sourceSessionId: $source, throughTurnId: $turn, requestId: $request}) {
    id status phase targetSessionId
  }
}`;
export const FOLLOW_OPERATION = `subscription Follow($ws: ID!, $id: ID!) {
  forkOperationUpdated(workspaceId: $ws, id: $id) { id status phase targetSessionId }
}`;
export const ACKNOWLEDGE = `mutation Acknowledge($ws: ID!, $id: ID!) {
  acknowledgeForkOperation(workspaceId: $ws, id: $id) { id status acknowledgedAt session { id turns { edges { node { id } } } } }
}`;
export const WORKSPACE_EVENTS = `subscription Events($ws: ID!, $after: String) {
  workspaceEvents(workspaceId: $ws, after: $after) { cursor kind sessionId }
}`;

const PHASE_ORDER = ['FROZEN', 'DISPATCHING', 'MATERIALIZING', 'COMMITTED'];

/**
 * forkFlow runs the whole fork story through one client:
 * report a session with three settled turns and their messages, fork through the second turn,
 * follow the operation to COMMITTED, acknowledge it. client is
 * { mutate(query, variables) -> Promise<data>, follow(query, variables) -> Promise<results[]> }.
 */
export async function forkFlow(client, name) {
  const ws = unique(`ws-${name}`);
  const session = unique('session');
  await client.mutate(REPORT_SESSION, { ws, id: session, providerSession: `p-${session}`, title: `${name} source` });
  for (const n of [1, 2, 3]) {
    const turn = `${session}-t${n}`;
    const reported = await client.mutate(REPORT_TURN, { ws, session, id: turn, providerTurn: `p-${turn}` });
    assert.equal(reported.reportTurn.phase, 'SETTLED');
    await client.mutate(APPEND_MESSAGES, { ws, session, turn, q: `question ${n}`, a: `answer ${n}` });
  }
  const forked = await client.mutate(FORK_SESSION, { ws, source: session, turn: `${session}-t2`, request: unique('req') });
  const op = forked.forkSession;
  assert.equal(op.status, 'ACCEPTED');

  const updates = await client.follow(FOLLOW_OPERATION, { ws, id: op.id });
  const phases = updates.map((u) => u.forkOperationUpdated.phase);
  assert.equal(phases.at(-1), 'COMMITTED', `phases seen: ${phases}`);
  const ranks = phases.map((p) => PHASE_ORDER.indexOf(p));
  assert.ok(ranks.every((r, i) => r >= 0 && (i === 0 || r > ranks[i - 1])), `phases out of order: ${phases}`);

  const acked = await client.mutate(ACKNOWLEDGE, { ws, id: op.id });
  assert.equal(acked.acknowledgeForkOperation.status, 'COMMITTED');
  assert.ok(acked.acknowledgeForkOperation.acknowledgedAt, 'acknowledgedAt is set');
  assert.equal(acked.acknowledgeForkOperation.session.turns.edges.length, 2, 'the fork holds the first two turns');
  return { phases };
}
