// The explorer's state and its reducer. Everything the server tells us (snapshot pages, workspace
// events, fork operation updates, mutation results) goes through here, so the same change arriving
// twice, e.g. once from a mutation and once from replayed events, lands once.

export const initialState = {
  sessions: {}, // local id -> session node (see queries.js SESSION_NODE)
  total: null, // the workspace's sessions (totalCount), of which `sessions` holds the graph's part
  sessionsChanged: 0, // counts session events, so the session list knows to count again
  loaded: false,
  loadError: null,
  selectedId: null,
  detail: null, // the selected session with its turns and messages
  detailError: null,
  operations: {}, // local id -> fork operation, with mine/followError/ackError flags added by the client
  operationOrder: [], // newest first
  live: 'connecting', // connecting | live | reconnecting | paused | unauthenticated
  cursor: null, // the snapshot's workspaceEventCursor, then the last workspaceEvents cursor applied
  eventsApplied: 0,
};

/** reducer applies one action; unknown actions leave the state as it is. */
export function reducer(state, action) {
  switch (action.type) {
    case 'sessionsLoaded':
      return {
        ...state, loaded: true, loadError: null, sessions: indexById(action.sessions), cursor: action.cursor,
        total: action.total ?? action.sessions.length, sessionsChanged: state.sessionsChanged + 1,
      };
    case 'loadFailed':
      return { ...state, loadError: action.message };
    case 'sessionUpserted':
      return { ...upsertSession(state, action.session), sessionsChanged: state.sessionsChanged + 1 };
    case 'sessionDeleted':
      return { ...deleteSession(state, action.id), sessionsChanged: state.sessionsChanged + 1 };
    case 'totalCounted':
      return { ...state, total: action.total };
    case 'select':
      return { ...state, selectedId: action.id, detail: state.detail && state.detail.id === action.id ? state.detail : null, detailError: null };
    case 'detailLoaded':
      return action.detail && action.detail.id === state.selectedId ? upsertSession({ ...state, detail: action.detail, detailError: null }, action.detail) : state;
    case 'detailFailed':
      return action.id === state.selectedId ? { ...state, detailError: action.message } : state;
    case 'operationUpdated':
      return upsertOperation(state, action.operation, action.patch);
    case 'live':
      return { ...state, live: action.status };
    case 'eventApplied':
      return { ...state, cursor: action.cursor, eventsApplied: state.eventsApplied + 1 };
    default:
      return state;
  }
}

function indexById(sessions) {
  const out = {};
  for (const s of sessions) if (!s.deletedAt) out[s.id] = s;
  return out;
}

function upsertSession(state, session) {
  if (!session) return state;
  if (session.deletedAt) return deleteSession(state, session.id);
  const prev = state.sessions[session.id] || {};
  return { ...state, sessions: { ...state.sessions, [session.id]: { ...prev, ...pickNode(session) } } };
}

const NODE_FIELDS = ['id', 'globalId', 'title', 'kind', 'provider', 'createdAt', 'deletedAt', 'forkedFrom'];

// The graph only needs the node fields; turns stay in `detail` to keep the map small. Fields the
// payload did not select are left as they were.
function pickNode(session) {
  const node = {};
  for (const key of NODE_FIELDS) if (session[key] !== undefined) node[key] = session[key];
  return node;
}

function deleteSession(state, id) {
  if (!state.sessions[id]) return state;
  const sessions = { ...state.sessions };
  delete sessions[id];
  const selected = state.selectedId === id;
  return { ...state, sessions, selectedId: selected ? null : state.selectedId, detail: selected ? null : state.detail };
}

function upsertOperation(state, operation, patch = {}) {
  const prev = state.operations[operation.id];
  // Updates may arrive out of order (mutation result vs. subscription); never move backwards.
  const merged = prev && isOlder(operation, prev) ? { ...prev, ...patch } : { ...prev, ...operation, ...patch };
  merged.seen = [...new Set([...((prev && prev.seen) || []), operation.phase].filter(Boolean))];
  const order = prev ? state.operationOrder : [operation.id, ...state.operationOrder];
  return { ...state, operations: { ...state.operations, [operation.id]: merged }, operationOrder: order };
}

const PHASE_RANK = { FROZEN: 1, DISPATCHING: 2, MATERIALIZING: 3, COMMITTED: 4, FAILED: 4, DELIVERY_UNKNOWN: 4 };

/**
 * timeKey turns an RFC 3339 UTC time with up to nine fractional digits into a number of
 * microseconds, so two updatedAt values compare exactly (the server trims trailing zeros, so the
 * strings do not compare as text, and Date.parse keeps milliseconds only).
 */
export function timeKey(value) {
  const m = /^(.+?)(?:\.(\d+))?Z$/.exec(String(value || ''));
  if (!m) return NaN;
  const ms = Date.parse(`${m[1]}Z`);
  return ms * 1000 + Number((m[2] || '').padEnd(6, '0').slice(0, 6));
}

// An update is older than what we hold when its updatedAt is earlier; without times, when its
// phase comes earlier (a DELIVERY_UNKNOWN operation can still move on to COMMITTED or FAILED
// through reconciliation, which only updatedAt tells apart).
export function isOlder(candidate, current) {
  const a = timeKey(candidate.updatedAt);
  const b = timeKey(current.updatedAt);
  if (Number.isFinite(a) && Number.isFinite(b) && a !== b) return a < b;
  if (!candidate.phase || !current.phase) return false;
  return (PHASE_RANK[candidate.phase] || 0) < (PHASE_RANK[current.phase] || 0);
}

/** newerOperation returns whichever of two versions of one operation is newer (either may be null). */
export function newerOperation(a, b) {
  if (!a) return b || null;
  if (!b) return a;
  return isOlder(a, b) ? { ...a, ...b } : { ...b, ...a };
}
