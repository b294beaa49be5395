// The API token, for servers started with workspace-scoped tokens. It is kept in this browser's
// localStorage and sent as "Authorization: Bearer <token>" on HTTP and as the authorization field
// of the websocket's connection_init payload. Without a token the server must be in open mode.
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
