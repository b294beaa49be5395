// Where the GraphQL API lives. playground.go writes it into the forkgraph-endpoint meta tag; when
// the page is served by vite's dev server the placeholder is still there, so fall back to /graphql.
const PLACEHOLDER = '__FORKGRAPH_' + 'ENDPOINT__';

function readEndpoint() {
  const meta = document.querySelector('meta[name="forkgraph-endpoint"]');
  const value = meta ? meta.getAttribute('content') : '';
  return !value || value === PLACEHOLDER ? '/graphql' : value;
}

/** Absolute HTTP URL of the GraphQL endpoint. */
export const httpEndpoint = new URL(readEndpoint(), window.location.href).toString();

/** The same endpoint as a websocket URL (ws: for http:, wss: for https:). */
export const wsEndpoint = httpEndpoint.replace(/^http/, 'ws');

/** The demo workspace the server seeds on first start. */
export const DEFAULT_WORKSPACE = 'demo';
