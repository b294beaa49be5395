// The explorer's own GraphQL documents: the snapshot and the selected session. Forks and the
// workspace stream go through @forkgraph/client (forks.js, sync.js), with the client's documents.
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
    totalCount
    edges { node { ${SESSION_NODE} } }
    pageInfo { hasNextPage endCursor }
  }
}`;

// The session list (SessionList.jsx): a page of the workspace's sessions, or of a search's.
export const SESSION_LIST_PAGE = `query ExplorerSessionList($workspaceId: ID!, $first: Int!, $after: String, $search: String) {
  sessions(workspaceId: $workspaceId, first: $first, after: $after, search: $search) {
    totalCount
    totalCountIsLowerBound
    edges { node { ${SESSION_NODE} } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const SESSION_COUNT = `query ExplorerSessionCount($workspaceId: ID!, $search: String) {
  sessions(workspaceId: $workspaceId, first: 0, search: $search) { totalCount totalCountIsLowerBound }
}`;

export const SESSION_NODE_QUERY = `query ExplorerSessionNode($workspaceId: ID!, $id: ID!) {
  session(workspaceId: $workspaceId, id: $id) { ${SESSION_NODE} }
}`;

// A turn's interactions and the session's audit messages are plain lists (one statement each for
// the whole response, at a few points of complexity per row), read with every page of turns.
// A page of a turn's messages. SESSION_DETAIL reads each turn's first 20 (50 turns × 20 messages
// with their parts stay under the complexity limit, which counts a page's size times its
// selection; 50 × 50 with parts would not); the rest of a longer turn is read with TURN_MESSAGES
// (Turn.messages refuses more than 1,000).
// A message's typed parts (Message.parts), so the transcript can draw tool calls, results,
// attachments and reasoning; content stays the plain-text fallback.
const PARTS = `parts { __typename
  ... on TextPart { text }
  ... on ReasoningPart { text }
  ... on ToolCallPart { callId name input }
  ... on ToolResultPart { callId output isError }
  ... on AttachmentPart { attachmentId fileName mediaType } }`;
const MESSAGES_PAGE = `edges { node { id: localId role content ${PARTS} } } pageInfo { hasNextPage endCursor }`;

export const TURN_MESSAGES = `query ExplorerTurnMessages($id: ID!, $after: String) {
  node(id: $id) { ... on Turn { messagesConnection(first: 200, after: $after) { ${MESSAGES_PAGE} } } }
}`;

export const SESSION_DETAIL = `query ExplorerSession($workspaceId: ID!, $id: ID!, $after: String) {
  session(workspaceId: $workspaceId, id: $id) {
    ${SESSION_NODE}
    forkedFrom { targetTurnId sourceSession { id: localId title } }
    provider
    model
    lifecycleCapabilities { forkThroughTurn }
    auditMessages { id: localId afterSequence kind content createdAt }
    turns(first: 50, after: $after) {
      edges {
        node {
          id: localId
          globalId: id
          sequence
          phase
          outcome
          providerForkBindingAvailable
          providerForkBindingState
          origin
          error { code message }
          fileChanges { path kind previousPath }
          completedCommand { command exitCode }
          pendingForkOperation { ${OPERATION} }
          interactions { id: localId requestId kind prompt state answer answeredAt }
          messagesConnection(first: 20) { ${MESSAGES_PAGE} }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/**
 * isPending tells whether a new fork request through the operation's turn would get this
 * operation back (the server's Turn.pendingForkOperation): it is running, its delivery is unknown,
 * or it committed and nobody acknowledged it yet.
 */
export { isPendingOperation as isPending } from '@forkgraph/client';
