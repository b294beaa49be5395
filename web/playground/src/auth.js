// The credential, for servers that require one: a static API token or a JWT from the server's
// identity provider, sent the same way. It is kept in this browser's localStorage and sent as
// "Authorization: Bearer <token>" on HTTP and as the authorization field of the websocket's
// connection_init payload. Without one the server must be in open mode.
const STORAGE_KEY = 'forkgraph.apiToken';

/** apiToken returns the stored token, or "". */
export function apiToken() {
  try {
    return window.localStorage.getItem(STORAGE_KEY) || '';
  } catch {
    return ''; // storage can be disabled; then the page runs without a token
  }
}

/** setApiToken stores the token (an empty one removes it). */
export function setApiToken(token) {
  const value = token.trim();
  if (value) window.localStorage.setItem(STORAGE_KEY, value);
  else window.localStorage.removeItem(STORAGE_KEY);
}

/** authHeaders are the HTTP headers that carry the token. */
export function authHeaders() {
  const token = apiToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** connectionParams is the connection_init payload that carries the token. */
export function connectionParams() {
  const token = apiToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/**
 * jwtClaims decodes the claims of a JWT (three base64url segments) without verifying it, to show
 * the user what they pasted; the server verifies. Null for anything else (a static token).
 */
export function jwtClaims(token) {
  const parts = String(token || '').trim().split('.');
  if (parts.length !== 3) return null;
  try {
    const json = atob(parts[1].replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(json);
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}
