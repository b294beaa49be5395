// The explorer's GraphQL documents. Field names follow the contract of issue 3 / schema.graphqls.
//
// The explorer shows one workspace, and the fields that relate its objects (forkedFrom's
// sourceSessionId, an operation's targetSessionId and throughTurnId, an event's sessionId) hold
// local ids. So it keys everything by the local id: these documents alias `localId` to `id`, and
// keep the global id (what a normalized cache or node(id:) would use) as `globalId`, for display.

const SESSION_NODE = `
  id: localId
  globalId: id
  title
  kind
  provider
  createdAt
  deletedAt
  forkedFrom { operationId sourceSessionId sourceTurnId sourceTurn { id: localId sequence } }
`;

const OPERATION = `
  id: localId
  globalId: id
  requestId
  status
  phase
  error
  errorReason
  reconcileAttempts
  lastReconciledAt
  nextReconcileAt
  sourceSessionId
  throughTurnId
  targetSessionId
  acknowledgedAt
  updatedAt
`;

export const SESSIONS_PAGE = `query ExplorerSessions($workspaceId: ID!, $after: String) {
  sessions(workspaceId: $workspaceId, first: 100, after: $after) {
    edges { node { ${SESSION_NODE} } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const SESSION_NODE_QUERY = `query ExplorerSessionNode($workspaceId: ID!, $id: ID!) {
  session(workspaceId: $workspaceId, id: $id) { ${SESSION_NODE} }
}`;

export const SESSION_DETAIL = `query ExplorerSession($workspaceId: ID!, $id: ID!, $after: String) {
  session(workspaceId: $workspaceId, id: $id) {
    ${SESSION_NODE}
    provider
    model
    lifecycleCapabilities { forkThroughTurn }
    turns(first: 100, after: $after) {
      edges {
        node {
          id: localId
          sequence
          phase
          outcome
          providerForkBindingAvailable
          providerForkBindingState
          pendingForkOperation { ${OPERATION} }
          messages { id: localId role content }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export const FORK_SESSION = `mutation ExplorerFork($input: ForkSessionInput!) {
  forkSession(input: $input) { ${OPERATION} }
}`;

export const FORK_OPERATION_UPDATED = `subscription ExplorerFollowFork($workspaceId: ID!, $id: ID!) {
  forkOperationUpdated(workspaceId: $workspaceId, id: $id) { ${OPERATION} }
}`;

export const ACKNOWLEDGE = `mutation ExplorerAcknowledge($workspaceId: ID!, $id: ID!) {
  acknowledgeForkOperation(workspaceId: $workspaceId, id: $id) { ${OPERATION} }
}`;

export const RECONCILE = `mutation ExplorerReconcile($workspaceId: ID!, $id: ID!) {
  reconcileForkOperation(workspaceId: $workspaceId, id: $id) { ${OPERATION} }
}`;

export const ABANDON = `mutation ExplorerAbandon($workspaceId: ID!, $id: ID!, $reason: String!) {
  abandonForkOperation(workspaceId: $workspaceId, id: $id, reason: $reason) { ${OPERATION} }
}`;

export const WORKSPACE_EVENT_CURSOR = `query ExplorerEventCursor($workspaceId: ID!) {
  workspaceEventCursor(workspaceId: $workspaceId)
}`;

export const WORKSPACE_EVENTS = `subscription ExplorerEvents($workspaceId: ID!, $after: String) {
  workspaceEvents(workspaceId: $workspaceId, after: $after) {
    cursor
    kind
    sessionId
    session { ${SESSION_NODE} }
    turn { id: localId sessionId sequence phase }
    forkOperation { ${OPERATION} }
  }
}`;

/**
 * isPending tells whether a new fork request through the operation's turn would get this
 * operation back (the server's Turn.pendingForkOperation): it is running, its delivery is unknown,
 * or it committed and nobody acknowledged it yet.
 */
export function isPending(op) {
  if (!op) return false;
  return op.status === 'ACCEPTED' || op.status === 'UNKNOWN' || (op.status === 'COMMITTED' && !op.acknowledgedAt);
}

/** TERMINAL_PHASES end a fork operation; no further updates follow. */
export const TERMINAL_PHASES = new Set(['COMMITTED', 'FAILED', 'DELIVERY_UNKNOWN']);
