// Keeps the explorer's state in step with the server through @forkgraph/client's watchWorkspace:
// it reads workspaceEventCursor, lets us load the snapshot of the workspace's sessions, then
// subscribes to workspaceEvents with `after:` that cursor, so nothing can fall between the
// snapshot and the stream. Whenever the stream ends (a dropped connection, RESUME_REQUIRED, a
// refreshed token) it subscribes again after the last cursor it received, so the server replays
// exactly what we missed; a cursor the server refuses (expired) makes it load the snapshot again.
import { request } from '../graphql.js';
import { forkgraphClient } from '../forkgraph.js';
import { SESSIONS_PAGE } from './queries.js';

// The graph draws the oldest GRAPH_PAGES pages of sessions (1,000); the session list
// (SessionList.jsx) reaches every other one, a page at a time, and the toolbar says how many the
// graph leaves out.
export const GRAPH_PAGES = 10;

/** loadSessions reads the graph's pages of the workspace's sessions and their totalCount. */
export async function loadSessions(workspaceId) {
  const sessions = [];
  let after = null;
  let total = 0;
  for (let page = 0; page < GRAPH_PAGES; page++) {
    const data = await request(SESSIONS_PAGE, { workspaceId, after });
    const conn = data.sessions;
    total = conn.totalCount;
    for (const edge of conn.edges) sessions.push(edge.node);
    if (!conn.pageInfo.hasNextPage) break;
    after = conn.pageInfo.endCursor;
  }
  return { sessions, total };
}

// The explorer keys everything by local id (queries.js); the client's objects carry the global
// id as `id` and the local one as `localId`.
export function explorerSession(s) {
  if (!s) return s;
  const from = s.forkedFrom;
  return {
    ...s,
    id: s.localId,
    globalId: s.id,
    forkedFrom: from && {
      operationId: from.operationId,
      sourceSessionId: from.sourceSessionId,
      sourceTurnId: from.sourceTurnId,
      sourceTurn: from.sourceTurn && { id: from.sourceTurn.localId, sequence: from.sourceTurn.sequence },
    },
  };
}

/** explorerOperation is a fork operation of the client in the explorer's shape (queries.js OPERATION). */
export function explorerOperation(op) {
  if (!op) return op;
  const { session: _session, lineage: _lineage, localId, id, ...rest } = op;
  return { ...rest, id: localId, globalId: id };
}

function explorerEvent(e) {
  return {
    ...e,
    session: explorerSession(e.session),
    turn: e.turn && { ...e.turn, id: e.turn.localId },
    forkOperation: explorerOperation(e.forkOperation),
  };
}

/**
 * followWorkspace loads the snapshot, then follows workspaceEvents from the snapshot's cursor, and
 * returns a controller with pause(), resume(), stop() and cursor(). onSnapshot gets (sessions,
 * cursor); onEvent gets each event (in the explorer's shape); onStatus gets connecting | live |
 * reconnecting | paused | unauthenticated (the token ended and there is no other: resume() after a
 * new one is entered); onLoadError gets the error of a failed snapshot load, which is retried.
 * onSnapshot also gets the workspace's session count, of which the snapshot may hold a part.
 */
export function followWorkspace(workspaceId, { onSnapshot, onEvent, onStatus, onLoadError }) {
  let loaded = false;
  const watch = forkgraphClient().watchWorkspace({
    workspaceId,
    onSnapshot: async (cursor) => {
      loaded = false;
      const { sessions, total } = await loadSessions(workspaceId);
      onSnapshot(sessions, cursor, total);
      loaded = true;
    },
    // Until a snapshot is in, an error (the cursor read, a session page) is a failed load, which
    // the watch tries again after a pause; later ones end a stream that resumes by itself.
    onError: (err) => {
      if (!loaded) onLoadError(err);
    },
    onEvent: (event) => onEvent(explorerEvent(event)),
    onStatus: (status) => {
      if (status !== 'stopped') onStatus(status);
    },
  });
  return {
    cursor: () => watch.cursor,
    pause: () => watch.pause(),
    resume: () => watch.resume(),
    stop: () => watch.stop(),
  };
}
