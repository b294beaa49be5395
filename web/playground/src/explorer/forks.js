// Starting and following forks from the explorer, through @forkgraph/client: forkThroughTurn keeps
// one identity per turn (in localStorage, so a reload resumes a fork instead of starting another),
// sends a request whose answer was lost again with that identity, adopts the operation the
// server's barrier answers with, follows the phases, and acknowledges the operation once the new
// session is seen (which releases the server's fork barrier on that turn). This file only maps the
// client's fork states onto the explorer's operations list.
import { forkgraphClient } from '../forkgraph.js';
import { explorerOperation, explorerSession } from './sync.js';

/**
 * createForkRunner binds the fork flow to a workspace and the explorer's dispatch. Forks this
 * browser started and did not finish (before a reload, too) are resumed and shown as "yours".
 */
export function createForkRunner({ workspaceId, dispatch }) {
  const client = forkgraphClient();
  const watched = new Map(); // boundary key -> { handle, off }
  const update = (operation, patch) => dispatch({ type: 'operationUpdated', operation, patch });
  let stopped = false;

  // Each change of one of our handles becomes an operation update; the child it saw goes into the
  // graph before the acknowledgement, so the acknowledgement means "this page has the session".
  const watch = (handle) => {
    if (stopped || watched.get(handle.key)?.handle === handle) return;
    watched.get(handle.key)?.off();
    let child = null;
    const show = (state) => {
      if (state.child && state.child !== child) {
        child = state.child;
        dispatch({ type: 'sessionUpserted', session: explorerSession(state.child) });
      }
      if (!state.operation) return;
      update(explorerOperation(state.operation), {
        mine: true,
        acking: state.ack === 'inFlight',
        ackError: state.ack === 'acknowledged' ? null : state.ackError,
        followError: state.error && state.error.code === 'REQUEST_UNKNOWN' ? `lost contact: ${state.error.message}` : null,
      });
    };
    watched.set(handle.key, { handle, off: handle.subscribe(show) });
    show(handle.state);
  };

  const ours = (op) => {
    for (const { handle } of watched.values()) {
      if (handle.state.operationId === op.id && handle.active) return handle;
    }
    return null;
  };

  client.resumeForks({ workspaceId }).then((handles) => handles.forEach(watch), (err) => console.warn(`forkgraph: resuming forks: ${err.message}`));

  return {
    /**
     * start forks session sourceSessionId through turn throughTurnId (or rejoins the fork running
     * there), with target (ForkSessionInput.target, e.g. another model) when given.
     */
    async start(sourceSessionId, throughTurnId, target) {
      const handle = await client.forkThroughTurn({ workspaceId, sessionId: sourceSessionId, turnId: throughTurnId, target });
      watch(handle);
      // A refusal (FORK_CONFLICT, ...) is the handle's failed state: say it where the click was.
      const first = await handle.until((s) => s.operation !== null || s.status === 'failed');
      if (!first.operation && first.error) throw new Error([first.error.message, first.error.code, first.error.reason].filter(Boolean).join(' · '));
      return first.operation ? explorerOperation(first.operation) : null;
    },
    /** observe takes an operation from workspaceEvents; the client routes it to our handles itself. */
    observe(op) {
      update(op);
    },
    /** acknowledge acknowledges a committed operation: ours now instead of at the next retry, or another client's. */
    async acknowledge(op) {
      const handle = ours(op);
      if (handle) {
        await handle.acknowledge();
        return;
      }
      update(op, { acking: true, ackError: null });
      try {
        update(explorerOperation(await client.acknowledgeOperation(workspaceId, op.id)), { acking: false });
      } catch (err) {
        update(op, { acking: false, ackError: err.message });
      }
    },
    /** reconcile asks the server to ask the provider now what became of an unknown delivery. */
    async reconcile(op) {
      const handle = ours(op);
      if (handle) return explorerOperation((await handle.reconcile()).operation);
      const next = explorerOperation(await client.reconcileOperation(workspaceId, op.id));
      update(next);
      return next;
    },
    /** abandon stops waiting for an unknown delivery; the turn can be forked again. */
    async abandon(op, reason) {
      const handle = ours(op);
      if (handle) return explorerOperation((await handle.abandon(reason)).operation);
      const next = explorerOperation(await client.abandonOperation(workspaceId, op.id, reason));
      update(next);
      return next;
    },
    /** stop stops showing the handles here; the forks go on in the page's client. */
    stop() {
      stopped = true;
      for (const { off } of watched.values()) off();
      watched.clear();
    },
  };
}
