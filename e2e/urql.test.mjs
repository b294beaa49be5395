// urql: queries and mutations over HTTP (fetchExchange, GraphQL over HTTP), the subscription over
// graphql-transport-ws (subscriptionExchange forwarding to a graphql-ws client).
import { test, after } from 'node:test';
import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { pipe, onEnd, subscribe } from 'wonka';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { httpURL, wsURL, forkFlow } from './lib.mjs';

const ws = createClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0 });
after(() => ws.dispose());

const urql = new Client({
  url: httpURL,
  requestPolicy: 'network-only',
  exchanges: [
    fetchExchange,
    subscriptionExchange({
      forwardSubscription(request) {
        const input = { ...request, query: request.query || '' };
        return { subscribe: (sink) => ({ unsubscribe: ws.subscribe(input, sink) }) };
      },
    }),
  ],
});

const client = {
  async mutate(query, variables) {
    const { data, error } = await urql.mutation(query, variables).toPromise();
    if (error) throw error;
    return data;
  },
  follow(query, variables) {
    return new Promise((resolve, reject) => {
      const results = [];
      pipe(
        urql.subscription(query, variables),
        onEnd(() => resolve(results)),
        subscribe((r) => {
          if (r.error) return reject(r.error);
          // urql repeats the last result with hasNext: false when the stream completes.
          const repeat = r.hasNext === false && JSON.stringify(r.data) === JSON.stringify(results.at(-1));
          if (!repeat) results.push(r.data);
        }),
      );
    });
  },
};

test('urql (HTTP + graphql-ws): fork flow to COMMITTED and acknowledge', async () => {
  await forkFlow(client, 'urql');
});
