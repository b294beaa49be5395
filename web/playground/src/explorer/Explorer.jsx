import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { request } from '../graphql.js';
import { routeHref } from '../route.js';
import { ForestGraph } from './ForestGraph.jsx';
import { ForkActivity } from './ForkActivity.jsx';
import { SessionList } from './SessionList.jsx';
import { SessionPanel } from './SessionPanel.jsx';
import { formatCount } from './sessionList.js';
import { createForkRunner } from './forks.js';
import { SESSION_DETAIL, SESSION_NODE_QUERY, TURN_MESSAGES } from './queries.js';
import { initialState, reducer } from './state.js';
import { followWorkspace } from './sync.js';

const MAX_TURN_PAGES = 40;
const MAX_MESSAGE_PAGES = 50;

// withMessages turns a turn's first page of messages into its messages, reading the rest of a
// longer turn page by page.
async function withMessages({ messagesConnection, ...turn }) {
  const messages = messagesConnection.edges.map((e) => e.node);
  let page = messagesConnection;
  for (let n = 0; page.pageInfo.hasNextPage && n < MAX_MESSAGE_PAGES; n++) {
    const data = await request(TURN_MESSAGES, { id: turn.globalId, after: page.pageInfo.endCursor });
    if (!data.node?.messagesConnection) break;
    page = data.node.messagesConnection;
    messages.push(...page.edges.map((e) => e.node));
  }
  return { ...turn, messages };
}

async function loadDetail(workspaceId, id) {
  let detail = null;
  let after = null;
  for (let page = 0; page < MAX_TURN_PAGES; page++) {
    const data = await request(SESSION_DETAIL, { workspaceId, id, after });
    if (!data.session) return null;
    const turns = await Promise.all(data.session.turns.edges.map((e) => withMessages(e.node)));
    detail = detail ? { ...detail, turns: [...detail.turns, ...turns] } : { ...data.session, turns };
    if (!data.session.turns.pageInfo.hasNextPage) break;
    after = data.session.turns.pageInfo.endCursor;
  }
  return detail;
}

/** Explorer is the session-graph view of one workspace; remount it (key) to switch workspaces. */
export function Explorer({ workspaceId }) {
  const [state, dispatch] = useReducer(reducer, initialState);
  const stateRef = useRef(state);
  stateRef.current = state;
  const [startError, setStartError] = useState(null);
  const syncRef = useRef(null);

  const forks = useMemo(() => createForkRunner({ workspaceId, dispatch }), [workspaceId]);

  // Reload the selected session's turns; calls made while one is in flight coalesce into one more.
  const detailLoad = useRef({ running: false, again: false });
  const refreshDetail = useCallback(async () => {
    const gate = detailLoad.current;
    if (gate.running) { gate.again = true; return; }
    gate.running = true;
    try {
      do {
        gate.again = false;
        const id = stateRef.current.selectedId;
        if (!id) break;
        try {
          const detail = await loadDetail(workspaceId, id);
          if (detail) dispatch({ type: 'detailLoaded', detail });
          else dispatch({ type: 'detailFailed', id, message: 'This session no longer exists.' });
        } catch (err) {
          dispatch({ type: 'detailFailed', id, message: err.message });
        }
      } while (gate.again);
    } finally {
      gate.running = false;
    }
  }, [workspaceId]);

  // An event without its session (it changed again since) is read back; a failed read only costs
  // this node's freshness, the next event or the snapshot brings it back.
  const readSessionNode = useCallback(async (id) => {
    try {
      const data = await request(SESSION_NODE_QUERY, { workspaceId, id });
      if (data.session) dispatch({ type: 'sessionUpserted', session: data.session });
    } catch (err) {
      console.warn(`forkgraph: could not read session ${id}: ${err.message}`);
    }
  }, [workspaceId]);

  const applyEvent = useCallback(async (event) => {
    dispatch({ type: 'eventApplied', cursor: event.cursor });
    const selected = stateRef.current.selectedId;
    switch (event.kind) {
      case 'SESSION_UPSERTED':
        if (event.session) dispatch({ type: 'sessionUpserted', session: event.session });
        else await readSessionNode(event.sessionId);
        if (event.sessionId === selected) refreshDetail();
        break;
      case 'SESSION_DELETED':
        dispatch({ type: 'sessionDeleted', id: event.sessionId });
        break;
      case 'TURN_UPSERTED':
        if (event.sessionId === selected || (event.turn && event.turn.sessionId === selected)) refreshDetail();
        break;
      case 'FORK_OPERATION_UPDATED': {
        const op = event.forkOperation;
        if (op) forks.observe(op);
        // The selected session's turns show their pending operations: read them again.
        if (selected && (event.sessionId === selected || (op && op.sourceSessionId === selected))) refreshDetail();
        break;
      }
      default:
        break;
    }
  }, [forks, refreshDetail, readSessionNode]);

  // followWorkspace reads the event cursor, loads the snapshot, then subscribes after the cursor;
  // a workspace switch remounts the explorer (key) and so goes through the same first load.
  useEffect(() => {
    const sync = followWorkspace(workspaceId, {
      onSnapshot: (sessions, cursor, total) => dispatch({ type: 'sessionsLoaded', sessions, cursor, total }),
      onEvent: applyEvent,
      onStatus: (status) => dispatch({ type: 'live', status }),
      onLoadError: (err) => dispatch({ type: 'loadFailed', message: err.message }),
    });
    syncRef.current = sync;
    return () => {
      sync.stop();
      forks.stop();
    };
  }, [workspaceId, applyEvent, forks]);

  useEffect(() => {
    if (state.selectedId) refreshDetail();
  }, [state.selectedId, refreshDetail]);

  const select = useCallback((id) => dispatch({ type: 'select', id }), []);
  const counted = useCallback((total) => dispatch({ type: 'totalCounted', total }), []);
  const fork = useCallback(async (turn, target) => {
    setStartError(null);
    try {
      await forks.start(stateRef.current.selectedId, turn.id, target);
    } catch (err) {
      setStartError({ turnId: turn.id, message: err.message });
    }
    refreshDetail();
  }, [forks, refreshDetail]);

  // The pending-operation actions of a turn; each reads the turns again afterwards, so the turn
  // shows what the server now says (its fork button back once the operation stopped blocking it).
  const actions = useMemo(() => ({
    onFork: fork,
    onSelect: select,
    onAcknowledge: async (op) => {
      await forks.acknowledge(op);
      refreshDetail();
    },
    onReconcile: async (op) => {
      try {
        return await forks.reconcile(op);
      } finally {
        refreshDetail();
      }
    },
    onAbandon: async (op, reason) => {
      try {
        return await forks.abandon(op, reason);
      } finally {
        refreshDetail();
      }
    },
  }), [fork, select, forks, refreshDetail]);

  const myTargets = useMemo(() => {
    const ids = new Set();
    for (const op of Object.values(state.operations)) if (op.mine && op.targetSessionId) ids.add(op.targetSessionId);
    return ids;
  }, [state.operations]);

  return (
    <div className="explorer">
      <Toolbar workspaceId={workspaceId} state={state} sync={syncRef} />
      {state.loadError && <p className="banner banner-error" role="alert">Could not load sessions: {state.loadError}</p>}
      <div className="explorer-body">
        <section className="graph-pane" aria-label="Fork forest">
          <ForestGraph sessions={state.sessions} loaded={state.loaded} selectedId={state.selectedId} highlightIds={myTargets} onSelect={select} workspaceId={workspaceId} />
        </section>
        <aside className="side-pane">
          <SessionList workspaceId={workspaceId} selectedId={state.selectedId} onSelect={select} sessions={state.sessions} version={state.sessionsChanged} onTotal={counted} />
          <ForkActivity operations={state.operations} order={state.operationOrder} sessions={state.sessions} onSelect={select} onRetryAck={forks.acknowledge} />
          <SessionPanel detail={state.detail} selectedId={state.selectedId} error={state.detailError} sessions={state.sessions} operations={state.operations} actions={actions} startError={startError} />
        </aside>
      </div>
    </div>
  );
}

// graphCountText says how many sessions the graph draws, and of how many when it leaves some out
// (it draws the oldest pages; the session list reaches the rest).
function graphCountText(state) {
  const drawn = Object.keys(state.sessions).length;
  if (state.total == null || state.total <= drawn) return `${formatCount(drawn)} sessions`;
  return `${formatCount(drawn)} of ${formatCount(state.total)} sessions in the graph; find the others in the list`;
}

// unauthenticated: the server ended the stream's token (expired, revoked) and the token field has
// no other; after a new token is entered, "Resume live updates" picks up after the last cursor.
const LIVE_LABELS = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', paused: 'Paused', unauthenticated: 'Token ended: enter a new one' };

function Toolbar({ workspaceId, state, sync }) {
  const [draft, setDraft] = useState(workspaceId);
  const submit = (e) => {
    e.preventDefault();
    const next = draft.trim();
    if (next) window.location.hash = routeHref({ view: 'explorer', workspace: next });
  };
  const paused = state.live === 'paused' || state.live === 'unauthenticated';
  return (
    <div className="explorer-toolbar">
      <form onSubmit={submit} className="workspace-form">
        <label htmlFor="workspace-input">Workspace</label>
        <input id="workspace-input" value={draft} onChange={(e) => setDraft(e.target.value)} spellCheck={false} autoComplete="off" />
        <button type="submit">Open</button>
      </form>
      <span className="session-count" data-graph={Object.keys(state.sessions).length} data-total={state.total ?? ''}>{graphCountText(state)}</span>
      <span className={`live-status live-${state.live}`} role="status" data-live={state.live} data-cursor={state.cursor || ''}>
        {LIVE_LABELS[state.live] || state.live}
      </span>
      <button type="button" onClick={() => (paused ? sync.current.resume() : sync.current.pause())} aria-pressed={paused}>
        {paused ? 'Resume live updates' : 'Pause live updates'}
      </button>
    </div>
  );
}
