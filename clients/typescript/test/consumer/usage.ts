// A consumer's use of the package's types under --strict (compiled, not run, by test.sh): the
// declarations must describe what the client does, precisely enough to catch misuse.
import {
  createForkgraphClient,
  documents,
  ForkgraphError,
  MemoryForkRecordStore,
  WebStorageForkRecordStore,
  isPendingOperation,
  type ForkHandle,
  type ForkState,
  type GraphTurn,
  type WorkspaceEvent,
} from '@forkgraph/client';
import { ForkgraphProvider, useForkThroughTurn, useSessionGraph, useWorkspaceEvents } from '@forkgraph/client/react';
import { createElement } from 'react';

const client = createForkgraphClient({
  url: 'http://127.0.0.1:8080/graphql',
  token: async ({ forceRefresh }) => (forceRefresh ? 'fresh' : 'cached'),
  forkStore: typeof localStorage === 'undefined' ? new MemoryForkRecordStore() : new WebStorageForkRecordStore(),
  forkTiming: { ackRetryDelaysMs: [1000, 5000] },
});

export async function fork(workspaceId: string, turn: GraphTurn): Promise<string | null> {
  const handle: ForkHandle = await client.forkThroughTurn({ workspaceId, sessionId: turn.sessionId, turnId: turn.localId, turn });
  const end: ForkState = await handle.settled();
  // Status and ack are closed unions.
  const label: 'done' | 'failed' | 'other' = end.status === 'succeeded' ? 'done' : end.status === 'failed' ? 'failed' : 'other';
  if (end.error) console.log(label, end.error.code, end.error.reason ?? '');
  return end.child?.title ?? null;
}

export async function typedRequest(workspaceId: string): Promise<number> {
  const data = await client.request(documents.SessionsPageDocument, { workspaceId, first: 10 });
  // @ts-expect-error the result is typed: no such field
  void data.sessions.nope;
  // @ts-expect-error the variables are typed too
  await client.request(documents.WorkspaceEventCursorDocument, { workspace: workspaceId });
  return data.sessions.edges.filter((e) => isPendingOperation(e.node.latestTurn?.pendingForkOperation)).length;
}

export function watch(workspaceId: string): () => void {
  const w = client.watchWorkspace({
    workspaceId,
    onSnapshot: async (cursor: string) => void cursor,
    onEvent: (e: WorkspaceEvent) => {
      if (e.kind === 'FORK_OPERATION_UPDATED') console.log(e.forkOperation?.phase);
    },
    onError: (err: ForkgraphError) => console.log(err.code, err.retryable),
  });
  return () => w.stop();
}

function Turn({ turn }: { turn: GraphTurn }) {
  const f = useForkThroughTurn(turn);
  const phase: string | null = f.state?.phase ?? f.pending?.phase ?? null;
  return createElement('button', { disabled: !f.canFork, onClick: () => void f.fork() }, phase ?? 'Fork through this turn');
}

function Workspace({ workspaceId }: { workspaceId: string }) {
  const graph = useSessionGraph(workspaceId, { turnsOf: [] });
  const events = useWorkspaceEvents({ workspaceId, enabled: graph.loaded });
  const turns = graph.order.flatMap((id) => graph.turns[id] ?? []);
  return createElement('div', null, createElement('p', null, events.status), ...turns.map((t) => createElement(Turn, { key: t.localId, turn: t })));
}

export function App({ workspaceId }: { workspaceId: string }) {
  return createElement(ForkgraphProvider, { client, workspaceId }, createElement(Workspace, { workspaceId }));
}
