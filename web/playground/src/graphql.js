import { createClient } from 'graphql-ws';
import { authHeaders, connectionParams } from './auth.js';
import { httpEndpoint, wsEndpoint } from './config.js';

/** GraphQLError carries the errors array of a response and the first error's extensions.code. */
export class GraphQLError extends Error {
  constructor(errors) {
    const first = errors[0] || {};
    const code = first.extensions && first.extensions.code;
    const reason = first.extensions && first.extensions.reason;
    super([first.message || 'GraphQL error', code, reason].filter(Boolean).join(' · '));
    this.name = 'GraphQLError';
    this.errors = errors;
    this.code = code;
  }
}

/** request runs a query or mutation over HTTP POST and returns data, or throws GraphQLError. */
export async function request(query, variables = {}) {
  const response = await fetch(httpEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...authHeaders() },
    body: JSON.stringify({ query, variables }),
  });
  let body;
  try {
    body = await response.json();
  } catch (err) {
    throw new Error(`GraphQL endpoint answered ${response.status} without JSON`, { cause: err });
  }
  if (body.errors && body.errors.length) throw new GraphQLError(body.errors);
  if (!response.ok) throw new Error(`GraphQL endpoint answered ${response.status}`);
  return body.data;
}

/**
 * newSocketClient opens a graphql-transport-ws client. retry=false leaves reconnecting to the
 * caller, which the explorer needs to resume workspaceEvents from its own last cursor instead of
 * replaying the original subscribe payload.
 */
export function newSocketClient({ retry = true, on } = {}) {
  return createClient({
    url: wsEndpoint,
    connectionParams,
    lazy: true,
    keepAlive: 10_000,
    retryAttempts: retry ? 5 : 0,
    shouldRetry: () => retry,
    on,
  });
}

let sharedClient;

/** sharedSocket is the page's long-lived client for short subscriptions (fork operations). */
export function sharedSocket() {
  if (!sharedClient) sharedClient = newSocketClient();
  return sharedClient;
}

/**
 * subscribe runs one subscription and calls onData for each payload's data. It resolves onDone
 * with null on completion or with an Error. The returned function unsubscribes.
 */
export function subscribe(client, query, variables, { onData, onDone }) {
  return client.subscribe(
    { query, variables },
    {
      next(result) {
        if (result.errors && result.errors.length) {
          onDone(new GraphQLError(result.errors));
          return;
        }
        onData(result.data);
      },
      error(err) {
        if (err instanceof Error) onDone(err);
        else if (Array.isArray(err)) onDone(new GraphQLError(err));
        else onDone(new Error(describeSocketError(err)));
      },
      complete() {
        onDone(null);
      },
    },
  );
}

function describeSocketError(err) {
  if (err && typeof err.code === 'number') return `websocket closed (${err.code}${err.reason ? ' ' + err.reason : ''})`;
  return 'websocket error';
}
