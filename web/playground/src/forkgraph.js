// The page's @forkgraph/client: the explorer forks and follows the workspace through it. Fork
// records live in this browser's localStorage, so a reload in the middle of a fork resumes that
// fork instead of starting another; the token is the one "API token" stores (auth.js).
import { WebStorageForkRecordStore, createForkgraphClient } from '@forkgraph/client';
import { apiToken } from './auth.js';
import { httpEndpoint, wsEndpoint } from './config.js';

let client = null;

function recordStore() {
  try {
    return new WebStorageForkRecordStore(window.localStorage, 'forkgraph.explorer.fork:');
  } catch {
    return undefined; // storage disabled: records in memory, lost on reload
  }
}

/** forkgraphClient returns the page's client, created on first use. */
export function forkgraphClient() {
  if (!client) {
    client = createForkgraphClient({
      url: httpEndpoint,
      wsUrl: wsEndpoint,
      token: () => apiToken() || null,
      forkStore: recordStore(),
      onError: (err) => console.warn(`forkgraph client: ${err.message}`),
    });
  }
  return client;
}
