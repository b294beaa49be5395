import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';
import { httpEndpoint } from '../config.js';
import { sharedSocket } from '../graphql.js';
import { exampleTabs } from './examples.js';

// Queries and mutations go over HTTP POST; subscriptions over the page's graphql-transport-ws
// client (passing the client avoids the toolkit's dynamic import of graphql-ws).
const fetcher = createGraphiQLFetcher({ url: httpEndpoint, wsClient: sharedSocket() });

export default function Playground() {
  return (
    <div className="playground">
      <GraphiQL fetcher={fetcher} defaultTabs={exampleTabs} defaultEditorToolsVisibility="variables" />
    </div>
  );
}
