// The tabs GraphiQL opens with on a first visit (afterwards it restores the user's own tabs from
// localStorage). They walk through one fork in the seeded demo workspace: list, fork, follow,
// acknowledge, plus the workspace's live event stream.
import { DEMO_FORK } from './demo.js';

const listSessions = `# Sessions of the demo workspace, with forkability of every turn.
# A turn can be forked through when providerForkBindingAvailable is true.
# id is the global id (node(id:) takes it); localId is the id the agent runtime reported.
# Arguments take either.
# Press the run button (or Ctrl-Enter).
query ListSessions {
  sessions(workspaceId: "demo", first: 20) {
    totalCount
    edges {
      node {
        id
        localId
        title
        kind
        provider
        lifecycleCapabilities { forkThroughTurn }
        forkedFrom { sourceSessionId sourceTurnId sourceTurn { sequence } }
        turns(first: 20) {
          edges {
            node {
              id
              localId
              sequence
              phase
              outcome
              providerForkBindingAvailable
              providerForkBindingState
              messages { role content }
            }
          }
        }
      }
    }
  }
}
`;

const forkSession = `# Fork a session through one of its settled turns. Running it again with the same
# requestId replays the same operation; change requestId for a new fork.
mutation ForkThroughTurn($input: ForkSessionInput!) {
  forkSession(input: $input) {
    id
    localId
    requestId
    status
    phase
    sourceSessionId
    throughTurnId
    targetSessionId
    error
  }
}
`;

const followOperation = `# Follow a fork operation live: the current state first, then every transition
# (FROZEN -> DISPATCHING -> MATERIALIZING -> COMMITTED); completes after a terminal status.
# Paste the id (or localId) returned by ForkThroughTurn into the variables.
subscription FollowFork($workspaceId: ID!, $id: ID!) {
  forkOperationUpdated(workspaceId: $workspaceId, id: $id) {
    id
    status
    phase
    error
    targetSessionId
    session { id title }
    lineage { sourceTurn { sequence } targetTurn { sequence } }
  }
}
`;

const acknowledge = `# Tell the server the client has seen the new session; this releases the fork
# barrier on that turn. Only committed operations can be acknowledged.
mutation Acknowledge($workspaceId: ID!, $id: ID!) {
  acknowledgeForkOperation(workspaceId: $workspaceId, id: $id) {
    id
    status
    acknowledgedAt
  }
}
`;

const workspaceEvents = `# Every change of the workspace, each with a cursor. Pass a cursor as "after" to
# replay what you missed, then keep following live.
subscription WorkspaceEvents($workspaceId: ID!, $after: String) {
  workspaceEvents(workspaceId: $workspaceId, after: $after) {
    cursor
    kind
    occurredAt
    sessionId
    session { id title }
    turn { id sequence phase }
    forkOperation { id phase status }
  }
}
`;

const vars = (value) => JSON.stringify(value, null, 2);

/**
 * exampleTabs is passed to GraphiQL's defaultTabs. The first tab takes no variables: GraphiQL 4
 * opens with the first tab's query but not its variables (it fills them in only on a tab switch).
 */
export const exampleTabs = [
  { query: listSessions },
  {
    query: forkSession,
    variables: vars({
      input: {
        workspaceId: 'demo',
        sourceSessionId: DEMO_FORK.sessionId,
        throughTurnId: DEMO_FORK.turnId,
        requestId: 'playground-fork-1',
      },
    }),
  },
  { query: followOperation, variables: vars({ workspaceId: 'demo', id: 'PASTE-OPERATION-ID' }) },
  { query: acknowledge, variables: vars({ workspaceId: 'demo', id: 'PASTE-OPERATION-ID' }) },
  { query: workspaceEvents, variables: vars({ workspaceId: 'demo', after: null }) },
];
