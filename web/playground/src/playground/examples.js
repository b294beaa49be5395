// The tabs GraphiQL opens with on a first visit (afterwards it restores the user's own tabs from
// localStorage). They walk through one fork in the seeded demo workspace: list, fork, follow,
// acknowledge, plus the workspace's live event stream.
import { DEMO_FORK } from './demo.js';

// Each example fits GraphiQL's editor at a desktop width (1440 x 900): short lines and, for
// the first tab, few enough lines (test/first-hour.test.mjs checks it in Chromium).

const listSessions = `# The demo sessions; a turn can be forked when
# providerForkBindingAvailable is true. id is global,
# localId the runtime's own. Run: ▶ or Ctrl-Enter.
query ListSessions {
  sessions(workspaceId: "demo", first: 20) {
    totalCount
    edges { node {
      id
      localId
      title
      forkedFrom { sourceSessionId sourceTurnId }
      turns(first: 20) { edges { node {
        localId
        phase
        providerForkBindingAvailable
        messagesConnection(first: 10) {
          edges { node { role content } }
        }
      } } }
    } }
  }
}
`;

const forkSession = `# Fork a session through one of its settled
# turns. The same requestId replays the same
# operation; change it for a new fork.
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

const followOperation = `# Follow a fork live: its state now, then each
# change (FROZEN, DISPATCHING, MATERIALIZING,
# COMMITTED); it completes after a terminal one.
# Put the id ForkThroughTurn returned (or its
# localId) into the variables.
subscription FollowFork($workspaceId: ID!, $id: ID!) {
  forkOperationUpdated(workspaceId: $workspaceId, id: $id) {
    id
    status
    phase
    error
    targetSessionId
    session { id title }
    lineage {
      sourceTurn { sequence }
      targetTurn { sequence }
    }
  }
}
`;

const acknowledge = `# Say the client has seen the new session: this
# releases the fork barrier on that turn. Only
# committed operations can be acknowledged.
mutation Acknowledge($workspaceId: ID!, $id: ID!) {
  acknowledgeForkOperation(workspaceId: $workspaceId, id: $id) {
    id
    status
    acknowledgedAt
  }
}
`;

const workspaceEvents = `# Every change of the workspace, with a cursor.
# Pass a cursor as "after" to replay what you
# missed, then keep following live.
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
