import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { getIntrospectionQuery } from 'graphql';
import 'graphiql/style.css';
import { authHeaders } from '../auth.js';
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

// The saved API token goes on every HTTP request unless the Headers tab sets its own.
function fetcher(params, options = {}) {
  const own = Object.keys(options.headers || {}).some((name) => name.toLowerCase() === 'authorization');
  const withAuth = own ? options : { ...options, headers: { ...authHeaders(), ...options.headers } };
  if (params.operationName === 'IntrospectionQuery') {
    return transportFetcher({ ...params, query: introspectionQuery }, withAuth);
  }
  return transportFetcher(params, withAuth);
}

// What the results pane says before anything ran (it was empty): how to get the example's result.
export const PRESS_RUN = `// Press Run (the ▶ button, or Ctrl-Enter) to send the
// operation on the left; its result appears here.`;

export default function Playground() {
  return (
    <div className="playground">
      <GraphiQL fetcher={fetcher} defaultTabs={exampleTabs} defaultEditorToolsVisibility="variables" response={PRESS_RUN} />
    </div>
  );
}
