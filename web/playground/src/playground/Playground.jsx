import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { getIntrospectionQuery } from 'graphql';
import 'graphiql/style.css';
import { httpEndpoint } from '../config.js';
import { sharedSocket } from '../graphql.js';
import { exampleTabs } from './examples.js';

// Queries and mutations go over HTTP POST; subscriptions over the page's graphql-transport-ws
// client (passing the client avoids the toolkit's dynamic import of graphql-ws).
const transportFetcher = createGraphiQLFetcher({ url: httpEndpoint, wsClient: sharedSocket() });

// The server rejects operations nested deeper than 12 fields, and graphql-js's standard
// introspection query is 15 deep (nine levels of ofType). forkgraph's deepest type reference,
// [Lineage!]!, needs three, so a six-level query (12 deep) describes the schema completely.
const INTROSPECTION_TYPE_DEPTH = 6;
const introspectionQuery = getIntrospectionQuery({ typeDepth: INTROSPECTION_TYPE_DEPTH });

function fetcher(params, options) {
  if (params.operationName === 'IntrospectionQuery') {
    return transportFetcher({ ...params, query: introspectionQuery }, options);
  }
  return transportFetcher(params, options);
}

export default function Playground() {
  return (
    <div className="playground">
      <GraphiQL fetcher={fetcher} defaultTabs={exampleTabs} defaultEditorToolsVisibility="variables" />
    </div>
  );
}
