import { createContext, useContext, useEffect, useState } from 'react';
import { apiToken } from './auth.js';
import { request } from './graphql.js';

// Who the page is signed in as: the server's `viewer`, read once per page load (saving a token
// reloads the page). The explorer asks `can` before offering an action, so a credential without
// a scope sees that action disabled, with the reason on hover, instead of a refusal after a click.

const VIEWER = `query PlaygroundViewer { viewer { subject name workspaces scopes expiresAt credential } }`;

const ViewerContext = createContext({ status: 'loading', viewer: null, error: null });

/** ViewerProvider reads the viewer and keeps it for the page; it notices the token's expiry. */
export function ViewerProvider({ children }) {
  const [state, setState] = useState({ status: 'loading', viewer: null, error: null });
  useEffect(() => {
    let live = true;
    request(VIEWER).then(
      (data) => live && setState({ status: 'ready', viewer: data.viewer, error: null }),
      (err) => live && setState({ status: 'failed', viewer: null, error: err }),
    );
    return () => { live = false; };
  }, []);
  const expiresAt = state.viewer && state.viewer.expiresAt;
  useEffect(() => {
    if (!expiresAt) return undefined;
    const left = Date.parse(expiresAt) - Date.now();
    const expire = () => setState((s) => ({ ...s, status: 'expired' }));
    if (left <= 0) { expire(); return undefined; }
    const timer = setTimeout(expire, Math.min(left, 2 ** 31 - 1));
    return () => clearTimeout(timer);
  }, [expiresAt]);
  return <ViewerContext.Provider value={state}>{children}</ViewerContext.Provider>;
}

/** useViewer is the page's viewer state: {status: loading|ready|failed|expired, viewer, error}. */
export function useViewer() {
  return useContext(ViewerContext);
}

/**
 * can says whether the viewer may use a root field that needs scope (READ, FORK, INGEST, ADMIN):
 * {allowed, reason}, the reason being what to show on hover when it may not. While the viewer is
 * loading nothing is refused (the server decides anyway).
 */
export function can(state, scope) {
  switch (state.status) {
    case 'loading':
      return { allowed: true, reason: '' };
    case 'expired':
      return { allowed: false, reason: 'Your token has expired: set a fresh one with "API token" to continue.' };
    case 'failed':
      return {
        allowed: false,
        reason: apiToken()
          ? `The server refused your token (${state.error && state.error.message}).`
          : 'This server needs a credential: set an API token or a JWT with "API token".',
      };
  }
  if (state.viewer.scopes.includes(scope)) return { allowed: true, reason: '' };
  return { allowed: false, reason: `Your credential does not grant the ${scope} scope this action needs.` };
}

/** describeViewer is one line about who the page is signed in as. */
export function describeViewer(state) {
  if (state.status === 'loading') return 'Checking your credential…';
  if (state.status === 'failed') return `Not signed in: ${state.error ? state.error.message : 'no credential'}`;
  const v = state.viewer;
  if (v.credential === 'OPEN') return 'Open mode: no credential needed, every workspace and scope.';
  const kind = v.credential === 'JWT' ? 'JWT' : 'API token';
  const scopes = v.scopes.length ? v.scopes.join(', ') : 'no scope';
  const workspaces = (v.workspaces || []).join(', ');
  let line = `Signed in as ${v.name || v.subject} (${kind}) · scopes ${scopes} · workspaces ${workspaces}`;
  if (v.expiresAt) line += ` · ${state.status === 'expired' ? 'expired' : 'expires'} ${new Date(v.expiresAt).toLocaleTimeString()}`;
  return line;
}
