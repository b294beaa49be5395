// Keeps the explorer's state in step with the server: a snapshot of the workspace's sessions, then
// the workspaceEvents stream. The snapshot is taken between reading workspaceEventCursor and
// subscribing with `after:` that cursor, so the server replays every change made since the read:
// nothing can fall between the snapshot and the stream. The stream runs on its own websocket client
// without automatic retry, because graphql-ws would re-send the original subscribe payload; we
// reconnect ourselves and pass the last cursor we received as `after`, so the server replays
// exactly what we missed.
import { newSocketClient, request, subscribe } from '../graphql.js';
import { SESSIONS_PAGE, WORKSPACE_EVENTS, WORKSPACE_EVENT_CURSOR } from './queries.js';

const MAX_SESSION_PAGES = 50;
const RETRY_DELAYS_MS = [250, 500, 1000, 2000, 5000];

/** loadSessions reads every page of the workspace's sessions. */
export async function loadSessions(workspaceId) {
  const sessions = [];
  let after = null;
  for (let page = 0; page < MAX_SESSION_PAGES; page++) {
    const data = await request(SESSIONS_PAGE, { workspaceId, after });
    const conn = data.sessions;
    for (const edge of conn.edges) sessions.push(edge.node);
    if (!conn.pageInfo.hasNextPage) break;
    after = conn.pageInfo.endCursor;
  }
  return sessions;
}

/**
 * loadSnapshot reads the workspace's event cursor and then its sessions. The order matters: every
 * change after the cursor is replayed by workspaceEvents(after: cursor), including changes made
 * while the sessions were being read (those arrive twice, and events are idempotent upserts).
 */
export async function loadSnapshot(workspaceId) {
  const { workspaceEventCursor: cursor } = await request(WORKSPACE_EVENT_CURSOR, { workspaceId });
  const sessions = await loadSessions(workspaceId);
  return { cursor, sessions };
}

/**
 * followWorkspace loads the snapshot, then follows workspaceEvents from the snapshot's cursor, and
 * returns a controller with pause(), resume() and stop(). onSnapshot gets (sessions, cursor);
 * onEvent gets each event; onStatus gets connecting | live | reconnecting | paused; onLoadError
 * gets the error of a failed snapshot load, which is retried. cursor() is the cursor the stream
 * resumes from. When the server rejects the cursor (expired or invalid, BAD_USER_INPUT) no replay
 * can close the gap, so the snapshot is loaded again with a fresh cursor.
 */
export function followWorkspace(workspaceId, { onSnapshot, onEvent, onStatus, onLoadError }) {
  let cursor = null;
  let attempt = 0;
  let paused = false;
  let stopped = false;
  let retryTimer = null;
  let unsubscribe = null;
  // Bumped by halt(), so a snapshot that arrives after pause() or stop() is dropped.
  let generation = 0;
  const client = newSocketClient({
    retry: false,
    on: { connected: () => { attempt = 0; if (!paused && !stopped) onStatus('live'); } },
  });

  const retry = () => {
    onStatus('reconnecting');
    retryTimer = setTimeout(start, RETRY_DELAYS_MS[Math.min(attempt++, RETRY_DELAYS_MS.length - 1)]);
  };

  const follow = () => {
    unsubscribe = subscribe(client, WORKSPACE_EVENTS, { workspaceId, after: cursor }, {
      onData: (data) => {
        const event = data.workspaceEvents;
        cursor = event.cursor;
        onEvent(event);
      },
      onDone: (err) => {
        unsubscribe = null;
        if (paused || stopped) return;
        if (err && err.code === 'BAD_USER_INPUT') cursor = null;
        // The server never completes workspaceEvents on its own, so completion or an error means
        // the connection went away: come back after a growing delay, resuming from the cursor.
        retry();
      },
    });
  };

  const start = () => {
    retryTimer = null;
    if (paused || stopped) return;
    if (cursor !== null) {
      onStatus('reconnecting');
      follow();
      return;
    }
    onStatus(attempt === 0 ? 'connecting' : 'reconnecting');
    const current = generation;
    loadSnapshot(workspaceId).then(
      (snapshot) => {
        if (current !== generation) return;
        cursor = snapshot.cursor;
        onSnapshot(snapshot.sessions, snapshot.cursor);
        follow();
      },
      (err) => {
        if (current !== generation) return;
        onLoadError(err);
        retry();
      },
    );
  };

  const halt = () => {
    generation++;
    clearTimeout(retryTimer);
    retryTimer = null;
    if (unsubscribe) unsubscribe();
    unsubscribe = null;
    client.terminate();
  };

  start();
  return {
    cursor: () => cursor,
    pause() {
      if (paused || stopped) return;
      paused = true;
      halt();
      onStatus('paused');
    },
    resume() {
      if (!paused || stopped) return;
      paused = false;
      attempt = 0;
      start();
    },
    stop() {
      stopped = true;
      halt();
      client.dispose();
    },
  };
}
