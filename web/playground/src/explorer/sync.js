// Keeps the explorer's state in step with the server: a snapshot of the workspace's sessions, then
// the workspaceEvents stream. The stream runs on its own websocket client without automatic retry,
// because graphql-ws would re-send the original subscribe payload; we reconnect ourselves and pass
// the last cursor we applied as `after`, so the server replays exactly what we missed.
import { newSocketClient, request, subscribe } from '../graphql.js';
import { SESSIONS_PAGE, WORKSPACE_EVENTS } from './queries.js';

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
 * followWorkspace starts following workspaceEvents and returns a controller with pause(),
 * resume() and stop(). onEvent gets each event; onStatus gets connecting | live | reconnecting |
 * paused. cursor() is the last cursor handed to onEvent. When the server rejects the cursor
 * (expired or invalid, BAD_USER_INPUT) no replay can close the gap, so onResync is called to reload
 * the snapshot and the stream restarts live.
 */
export function followWorkspace(workspaceId, { onEvent, onStatus, onResync }) {
  let cursor = null;
  let attempt = 0;
  let paused = false;
  let stopped = false;
  let retryTimer = null;
  let unsubscribe = null;
  const client = newSocketClient({
    retry: false,
    on: { connected: () => { attempt = 0; if (!paused && !stopped) onStatus('live'); } },
  });

  const start = () => {
    retryTimer = null;
    if (paused || stopped) return;
    onStatus(attempt === 0 && cursor === null ? 'connecting' : 'reconnecting');
    unsubscribe = subscribe(client, WORKSPACE_EVENTS, { workspaceId, after: cursor }, {
      onData: (data) => {
        const event = data.workspaceEvents;
        cursor = event.cursor;
        onEvent(event);
      },
      onDone: (err) => {
        unsubscribe = null;
        if (paused || stopped) return;
        if (err && err.code === 'BAD_USER_INPUT' && cursor !== null) {
          cursor = null;
          onResync();
        }
        // The server never completes workspaceEvents on its own, so completion or an error means
        // the connection went away: come back after a growing delay, resuming from the cursor.
        onStatus('reconnecting');
        retryTimer = setTimeout(start, RETRY_DELAYS_MS[Math.min(attempt++, RETRY_DELAYS_MS.length - 1)]);
      },
    });
  };

  const halt = () => {
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
