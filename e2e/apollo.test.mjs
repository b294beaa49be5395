// Apollo Client 4 with GraphQLWsLink (graphql-transport-ws) runs the fork flow.
import { test, after } from 'node:test';
import { ApolloClient, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { createClient } from 'graphql-ws';
import { parse } from 'graphql';
import WebSocket from 'ws';
import { wsURL, forkFlow } from './lib.mjs';

// GraphQLWsLink inspects errors with `instanceof WebSocket`; Node 20 has no global WebSocket.
globalThis.WebSocket ??= WebSocket;

const ws = createClient({ url: wsURL, webSocketImpl: WebSocket, retryAttempts: 0 });
const apollo = new ApolloClient({ link: new GraphQLWsLink(ws), cache: new InMemoryCache() });
after(() => ws.dispose());

const client = {
  async mutate(query, variables) {
    const { data, error } = await apollo.mutate({ mutation: parse(query), variables, fetchPolicy: 'no-cache' });
    if (error) throw error;
    return data;
  },
  follow(query, variables) {
    return new Promise((resolve, reject) => {
      const results = [];
      apollo.subscribe({ query: parse(query), variables, fetchPolicy: 'no-cache' }).subscribe({
        next: (r) => (r.error ? reject(r.error) : results.push(r.data)),
        error: reject,
        complete: () => resolve(results),
      });
    });
  },
};

test('Apollo Client 4 (GraphQLWsLink): fork flow to COMMITTED and acknowledge', async () => {
  await forkFlow(client, 'apollo');
});
