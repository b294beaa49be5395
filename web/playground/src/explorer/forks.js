// Starting and following forks from the explorer. A fork is a durable operation on the server;
// the client starts it with a fresh requestId, follows forkOperationUpdated until a terminal
// phase, makes sure the new session is in the graph, and then acknowledges the operation (which
// releases the server's fork barrier on that turn).
import { request, sharedSocket, subscribe } from '../graphql.js';
import { ABANDON, ACKNOWLEDGE, FORK_OPERATION_UPDATED, FORK_SESSION, RECONCILE, SESSION_NODE_QUERY, TERMINAL_PHASES } from './queries.js';

/** newRequestId returns a random UUID; crypto.randomUUID exists only in secure contexts. */
export function newRequestId() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * createForkRunner binds the fork flow to a workspace and the explorer's dispatch. hasSession tells
 * whether a session is already in the graph (read from the latest state).
 */
export function createForkRunner({ workspaceId, dispatch, hasSession }) {
  const following = new Map(); // operation id -> unsubscribe
  const acknowledged = new Set();
  const update = (operation, patch) => dispatch({ type: 'operationUpdated', operation, patch });

  const settle = async (op) => {
    if (op.phase !== 'COMMITTED' || !op.targetSessionId || acknowledged.has(op.id)) return;
    acknowledged.add(op.id);
    update(op, { acking: true, ackError: null });
    try {
      // workspaceEvents usually delivers the new session first; if not, read it ourselves, so
      // the acknowledgement always means "this client has the session in its graph".
      if (!hasSession(op.targetSessionId)) {
        const data = await request(SESSION_NODE_QUERY, { workspaceId, id: op.targetSessionId });
        if (!data.session) throw new Error(`new session ${op.targetSessionId} is not readable`);
        dispatch({ type: 'sessionUpserted', session: data.session });
      }
      const data = await request(ACKNOWLEDGE, { workspaceId, id: op.id });
      update(data.acknowledgeForkOperation, { ackError: null, acking: false });
    } catch (err) {
      acknowledged.delete(op.id);
      update(op, { ackError: err.message, acking: false });
    }
  };

  const follow = (op) => {
    if (TERMINAL_PHASES.has(op.phase)) {
      settle(op);
      return;
    }
    if (following.has(op.id)) return;
    let last = op;
    const stop = subscribe(sharedSocket(), FORK_OPERATION_UPDATED, { workspaceId, id: op.id }, {
      onData: (data) => {
        last = data.forkOperationUpdated;
        update(last, { followError: null });
        if (TERMINAL_PHASES.has(last.phase)) settle(last);
      },
      onDone: (err) => {
        following.delete(op.id);
        if (err) update(last, { followError: `lost live updates: ${err.message}` });
      },
    });
    following.set(op.id, stop);
  };

  return {
    /** start forks session sourceSessionId through turn throughTurnId. */
    async start(sourceSessionId, throughTurnId) {
      const requestId = newRequestId();
      const input = { workspaceId, sourceSessionId, throughTurnId, requestId };
      const data = await request(FORK_SESSION, { input });
      const op = data.forkSession;
      // With the barrier, a turn that has a pending operation answers with that one: it is not
      // ours, so it is shown on its turn rather than followed and acknowledged as ours.
      if (op.requestId !== requestId) {
        update(op);
        return op;
      }
      update(op, { mine: true });
      follow(op);
      return op;
    },
    /**
     * observe takes an operation from workspaceEvents. One this tab started that went
     * DELIVERY_UNKNOWN and was then reconciled to COMMITTED is acknowledged like any other of
     * ours, once its session is in the graph.
     */
    observe(op, mine) {
      update(op);
      if (mine && op.phase === 'COMMITTED') settle(op);
    },
    acknowledge: settle,
    /** reconcile asks the server to ask the provider now what became of an unknown delivery. */
    async reconcile(op) {
      const data = await request(RECONCILE, { workspaceId, id: op.id });
      const next = data.reconcileForkOperation;
      update(next);
      if (op.mine && next.phase === 'COMMITTED') settle({ ...op, ...next });
      return next;
    },
    /** abandon stops waiting for an unknown delivery; the turn can be forked again. */
    async abandon(op, reason) {
      const data = await request(ABANDON, { workspaceId, id: op.id, reason });
      update(data.abandonForkOperation);
      return data.abandonForkOperation;
    },
    stop() {
      for (const unsubscribe of following.values()) unsubscribe();
      following.clear();
    },
  };
}
